//! The accept loop: bounded connections with read deadlines, so clients
//! that connect and stall cannot use up file descriptors and starve
//! `/health`.
//!
//! - A connection must send its first byte, and then its headers, within
//!   `header_read_timeout`. hyper times the wait for headers with one timer,
//!   so the same deadline also closes a keep-alive connection idle between
//!   requests. (Bodies have their own deadline, in `guard/body.rs`.)
//! - Past `max_connections` open connections, a new one is served `/health`
//!   and `/ready` only. At `hard_max_connections` a new connection takes
//!   the place of the oldest one that has not sent a byte yet (idle
//!   connections cannot lock the probes out); with none such it is closed
//!   at once. (The count may pass the cap by the few connections whose
//!   tasks are still ending.)
//! - Accept errors (e.g. out of file descriptors) pause the loop briefly
//!   instead of spinning.
//! - With connection threads, each connection is served on one of them
//!   (`conn_threads.rs`); the caps above count them all.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::config::ConnectionLimits;
use crate::conn_threads::{ConnectionThreads, Slot};

/// Marks requests of a connection accepted past `max_connections`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Overloaded;

/// How long open connections get to close once every response has ended
/// (only final bytes and idle keep-alives remain by then).
const DRAIN: Duration = Duration::from_secs(5);
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

/// Connections still waiting for their first byte, oldest first.
#[derive(Default)]
struct Silent {
    next: AtomicU64,
    waiting: Mutex<BTreeMap<u64, CancellationToken>>,
}

impl Silent {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, CancellationToken>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a connection until the guard drops (first byte or end).
    fn register(self: &Arc<Self>) -> SilentGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        self.map().insert(id, token.clone());
        SilentGuard {
            silent: self.clone(),
            id,
            token,
        }
    }

    /// Ends the oldest silent connection; false when there is none.
    fn evict_oldest(&self) -> bool {
        match self.map().pop_first() {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

struct SilentGuard {
    silent: Arc<Silent>,
    id: u64,
    token: CancellationToken,
}

impl Drop for SilentGuard {
    fn drop(&mut self) {
        self.silent.map().remove(&self.id);
    }
}

/// Serves `app` on `listener` until `shutdown` resolves (the drain is part
/// of it, so new connections are still answered, with 503, meanwhile), then
/// gives open connections [`DRAIN`] to finish.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    threads: Option<ConnectionThreads>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_read_timeout)
        .keep_alive_timeout(limits.header_read_timeout);
    let open = Arc::new(AtomicUsize::new(0));
    let silent = Arc::new(Silent::default());
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed; pausing");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let n = open.load(Ordering::Relaxed);
        if n >= limits.hard_max_connections && !silent.evict_oldest() {
            tracing::debug!(open = n, "connection refused: hard connection cap");
            drop(tcp);
            continue;
        }
        let slot = Slot::take(&open);
        let overloaded = n >= limits.max_connections;
        let conn = Connection {
            app: app.clone(),
            builder: builder.clone(),
            first_byte: limits.header_read_timeout,
            overloaded,
            silent: silent.register(),
        };
        let watcher = graceful.watcher();
        let serve = move |tcp| async move {
            let _slot = slot;
            conn.run(tcp, watcher).await;
        };
        match &threads {
            Some(threads) => threads.spawn(tcp, serve),
            None => {
                tokio::spawn(serve(tcp));
            }
        }
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain period; closing");
    }
}

struct Connection {
    app: Router,
    builder: auto::Builder<TokioExecutor>,
    first_byte: Duration,
    overloaded: bool,
    /// Held until the first byte: meanwhile a newer connection at the hard
    /// cap may end this one.
    silent: SilentGuard,
}

impl Connection {
    async fn run(self, tcp: TcpStream, watcher: hyper_util::server::graceful::Watcher) {
        // Small SSE frames must leave at once: without TCP_NODELAY, Nagle
        // holds the first event until the client's delayed ACK (~40 ms).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        // hyper's header timer starts only once it knows the protocol, which
        // takes a first byte; a silent connection is closed here.
        let mut first = [0u8; 1];
        let evicted = self.silent.token.clone();
        tokio::select! {
            peeked = tokio::time::timeout(self.first_byte, tcp.peek(&mut first)) => match peeked {
                Ok(Ok(n)) if n > 0 => {}
                _ => return,
            },
            _ = evicted.cancelled() => {
                tracing::debug!("silent connection closed for a newer one at the hard cap");
                return;
            }
        }
        drop(self.silent);
        let app = self.app;
        let overloaded = self.overloaded;
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            if overloaded {
                req.extensions_mut().insert(Overloaded);
            }
            let app = app.clone();
            async move {
                Ok::<_, Infallible>(
                    app.oneshot(req.map(Body::new))
                        .await
                        .unwrap_or_else(|e| match e {}),
                )
            }
        });
        let conn = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), service)
            .into_owned();
        if let Err(e) = watcher.watch(conn).await {
            tracing::debug!(error = %e, "connection ended with an error");
        }
    }
}
