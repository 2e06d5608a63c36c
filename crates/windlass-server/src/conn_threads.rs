//! Connection threads: each accepted connection lives its whole life on one
//! OS thread with a runtime of its own.
//!
//! On the work-stealing runtime a request hops threads: scheduling a task
//! wakes an idle sibling worker (a futex), which may steal the task and run
//! it on the other CPU with cold caches, and the upstream's answer is read
//! by whichever worker holds the I/O driver. On a small machine those
//! wake-ups and migrations are most of the median a gateway adds
//! (BENCHMARKS.md, "Thread per core"). Here a connection, the tasks its
//! requests spawn and (with a per-thread upstream client, see
//! `windlass-providers`' transport) its upstream connections share one
//! thread, so a request wakes nothing but that thread.
//!
//! A new connection goes to the thread with the fewest open ones: the
//! accept loop hands the socket over once, then never again.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// How often a thread with no new connections looks whether its last
/// tasks have ended.
const LINGER_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Work for a connection thread: the socket, moved off the accepting
/// runtime, and what to run with it there.
type Job = Box<dyn FnOnce(TcpStream) -> futures::future::BoxFuture<'static, ()> + Send>;

/// The threads, each with its queue of new connections.
pub(crate) struct ConnectionThreads {
    threads: Vec<Thread>,
}

struct Thread {
    jobs: mpsc::UnboundedSender<(std::net::TcpStream, Job)>,
    /// Connections on this thread now (counted down when their task ends).
    open: Arc<AtomicUsize>,
}

/// Counts a connection down on its thread when its task ends.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ConnectionThreads {
    /// Starts `n` threads (at least one). They end when this is dropped and
    /// the connections they hold have ended.
    pub(crate) fn start(n: usize) -> std::io::Result<ConnectionThreads> {
        let threads = (0..n.max(1))
            .map(Thread::start)
            .collect::<std::io::Result<_>>()?;
        Ok(ConnectionThreads { threads })
    }

    /// Runs `serve` with `tcp` on the least busy thread. A socket that
    /// cannot leave this runtime is closed (logged).
    pub(crate) fn spawn<F, Fut>(&self, tcp: TcpStream, serve: F)
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Some(thread) = self
            .threads
            .iter()
            .min_by_key(|t| t.open.load(Ordering::Relaxed))
        else {
            return;
        };
        let tcp = match tcp.into_std() {
            Ok(tcp) => tcp,
            Err(e) => {
                tracing::warn!(error = %e, "cannot hand a connection to its thread; closing it");
                return;
            }
        };
        thread.open.fetch_add(1, Ordering::Relaxed);
        let open = Open(thread.open.clone());
        let job: Job = Box::new(move |tcp| {
            Box::pin(async move {
                let _open = open;
                serve(tcp).await;
            })
        });
        if thread.jobs.send((tcp, job)).is_err() {
            tracing::warn!("a connection thread has stopped; connection closed");
        }
    }
}

impl Thread {
    fn start(index: usize) -> std::io::Result<Thread> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (jobs, mut queue) = mpsc::unbounded_channel::<(std::net::TcpStream, Job)>();
        let open = Arc::new(AtomicUsize::new(0));
        std::thread::Builder::new()
            .name(format!("windlass-conn-{index}"))
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some((tcp, job)) = queue.recv().await {
                        match TcpStream::from_std(tcp) {
                            Ok(tcp) => {
                                tokio::spawn(job(tcp));
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "cannot register a connection; closing it");
                            }
                        }
                    }
                    // No new connections: the thread stays while work that
                    // its requests started (a background run, a pooled
                    // database or upstream connection) is still alive.
                    let metrics = tokio::runtime::Handle::current().metrics();
                    while metrics.num_alive_tasks() > 0 {
                        tokio::time::sleep(LINGER_POLL).await;
                    }
                });
            })?;
        Ok(Thread { jobs, open })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::net::TcpListener;
    use tokio::sync::{mpsc, oneshot};

    use super::*;

    /// A connected pair on loopback: the server side, and the client side
    /// (kept open by the caller).
    async fn connection(listener: &TcpListener) -> (TcpStream, TcpStream) {
        let addr = listener.local_addr().unwrap();
        let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        (accepted.unwrap().0, client.unwrap())
    }

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn connections_spread_over_the_threads_and_their_tasks_stay_on_theirs() {
        let threads = ConnectionThreads::start(2).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (seen, mut names) = mpsc::unbounded_channel();
        let mut clients = Vec::new();
        let mut ends = Vec::new();
        for _ in 0..2 {
            let (server, client) = connection(&listener).await;
            clients.push(client);
            let (end, ended) = oneshot::channel::<()>();
            ends.push(end);
            let seen = seen.clone();
            threads.spawn(server, move |_tcp| async move {
                let own = thread_name();
                // Work a request spawns runs on the connection's thread.
                let spawned = tokio::spawn(async { thread_name() }).await.unwrap();
                seen.send((own, spawned)).unwrap();
                let _ = ended.await;
            });
        }
        let mut first = Vec::new();
        for _ in 0..2 {
            let (own, spawned) = names.recv().await.unwrap();
            assert!(own.starts_with("windlass-conn-"), "{own}");
            assert_eq!(own, spawned);
            first.push(own);
        }
        first.sort();
        assert_eq!(first, ["windlass-conn-0", "windlass-conn-1"]);

        // Once one thread's connection has ended, the next connection goes
        // to that thread, the one with fewer open.
        let freed = {
            ends.remove(0).send(()).unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            let busy = threads
                .threads
                .iter()
                .map(|t| t.open.load(Ordering::Relaxed));
            busy.collect::<Vec<_>>()
        };
        assert_eq!(freed.iter().sum::<usize>(), 1, "{freed:?}");
        let idle = format!(
            "windlass-conn-{}",
            freed.iter().position(|n| *n == 0).unwrap()
        );
        let (server, _client) = connection(&listener).await;
        threads.spawn(server, move |_tcp| async move {
            seen.send((thread_name(), String::new())).unwrap();
        });
        assert_eq!(names.recv().await.unwrap().0, idle);
    }

    #[tokio::test]
    async fn the_socket_arrives_usable_on_its_thread() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let threads = ConnectionThreads::start(1).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (server, mut client) = connection(&listener).await;
        threads.spawn(server, |mut tcp| async move {
            let mut buf = [0u8; 4];
            tcp.read_exact(&mut buf).await.unwrap();
            tcp.write_all(&buf).await.unwrap();
        });
        client.write_all(b"ping").await.unwrap();
        let mut echo = [0u8; 4];
        client.read_exact(&mut echo).await.unwrap();
        assert_eq!(&echo, b"ping");
    }
}
