//! Connection threads: each accepted connection lives its whole life on one
//! thread, a tokio runtime of one worker.
//!
//! On one work-stealing runtime a request hops threads: scheduling a task
//! wakes an idle sibling worker, which may steal it and run it on the other
//! CPU, and the upstream's answer is read by whichever worker holds the I/O
//! driver. Here a connection, the tasks its requests spawn and (with the
//! per-thread upstream client of `windlass-providers`' transport) the
//! upstream connections they use stay on one thread. Measured against one
//! shared runtime (BENCHMARKS.md, "Connection threads"): 5-12 % less CPU per
//! JSON request, lower medians at 64 clients, the same at 16.
//!
//! The price: a connection cannot move. The streams of one HTTP/2
//! connection share its thread, and a request that computes for long holds
//! up the other connections of its thread; `[server] connection_threads =
//! 0` serves everything on the shared runtime instead.
//!
//! A new connection goes to the thread with the fewest open ones: the
//! accept loop hands the socket over once, then never again.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio::runtime::Runtime;

/// Name of each connection thread and of its runtime's blocking pool, with
/// the thread's number after a dash (`windlass-conn-0`).
pub const CONNECTION_THREAD_NAME: &str = "windlass-conn";

/// How often runtimes with no new connections are looked at for whether
/// their last tasks have ended.
const LINGER_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// The threads, each a runtime of one worker.
pub(crate) struct ConnectionThreads {
    threads: Vec<Thread>,
}

struct Thread {
    /// One worker: tokio's scheduler as on the shared runtime (a task woken
    /// by the running one runs next, in its LIFO slot), with no sibling to
    /// wake or to steal from. A current-thread runtime has no LIFO slot,
    /// and at 16 connections its queue put ~0.4 ms on the median.
    runtime: Option<Runtime>,
    /// Connections on this thread now (counted down when their task ends).
    open: Arc<AtomicUsize>,
}

/// One open connection in a count (the listener's, a thread's): counted
/// up when taken, down when the connection's task ends and drops it.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Slot {
    pub(crate) fn take(count: &Arc<AtomicUsize>) -> Slot {
        count.fetch_add(1, Ordering::Relaxed);
        Slot(count.clone())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ConnectionThreads {
    /// Starts `n` threads (at least one). They end when this is dropped and
    /// the work they hold has ended.
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
        let Some((thread, runtime)) = self
            .threads
            .iter()
            .filter_map(|t| Some((t, t.runtime.as_ref()?)))
            .min_by_key(|(t, _)| t.open.load(Ordering::Relaxed))
        else {
            // Only once the threads are being dropped, which needs them
            // unborrowed: not while the accept loop holds them.
            tracing::warn!("no connection thread left; closing a connection");
            return;
        };
        let tcp = match tcp.into_std() {
            Ok(tcp) => tcp,
            Err(e) => {
                tracing::warn!(error = %e, "cannot hand a connection to its thread; closing it");
                return;
            }
        };
        let open = Slot::take(&thread.open);
        runtime.spawn(async move {
            let _open = open;
            // Registered with this runtime's I/O driver, so its readiness
            // wakes this thread.
            match TcpStream::from_std(tcp) {
                Ok(tcp) => serve(tcp).await,
                Err(e) => tracing::warn!(error = %e, "cannot register a connection; closing it"),
            }
        });
    }
}

impl Drop for ConnectionThreads {
    /// Work that requests started (a background run, pooled database or
    /// upstream connections) may outlive the server: each runtime is kept
    /// until its last task has ended, on a thread of its own.
    fn drop(&mut self) {
        let runtimes: Vec<Runtime> = self
            .threads
            .iter_mut()
            .filter_map(|t| t.runtime.take())
            .collect();
        let (hand, held) = std::sync::mpsc::channel::<Vec<Runtime>>();
        let linger = std::thread::Builder::new()
            .name(format!("{CONNECTION_THREAD_NAME}-end"))
            .spawn(move || {
                let runtimes = held.recv().unwrap_or_default();
                while runtimes
                    .iter()
                    .any(|r| r.handle().metrics().num_alive_tasks() > 0)
                {
                    std::thread::sleep(LINGER_POLL);
                }
            });
        if let Err(e) = linger {
            // Dropping a runtime here could be inside another one, which
            // tokio forbids; stopping it in the background is allowed.
            tracing::warn!(error = %e, "cannot keep the connection threads until their work ends");
            runtimes.into_iter().for_each(Runtime::shutdown_background);
        } else if let Err(std::sync::mpsc::SendError(runtimes)) = hand.send(runtimes) {
            runtimes.into_iter().for_each(Runtime::shutdown_background);
        }
    }
}

impl Thread {
    fn start(index: usize) -> std::io::Result<Thread> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("{CONNECTION_THREAD_NAME}-{index}"))
            .enable_all()
            .build()?;
        Ok(Thread {
            runtime: Some(runtime),
            open: Arc::new(AtomicUsize::new(0)),
        })
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
        ends.remove(0).send(()).unwrap();
        let open_now = || -> Vec<usize> {
            let busy = threads.threads.iter();
            busy.map(|t| t.open.load(Ordering::Relaxed)).collect()
        };
        // The ended connection's task drops its slot on its own thread.
        for _ in 0..200 {
            if open_now().iter().sum::<usize>() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let freed = open_now();
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
