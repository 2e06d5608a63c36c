//! A reconnecting holder of one server's session.
//!
//! Calls share the session (rmcp multiplexes requests), so the lock is held
//! only to look at it or to connect: concurrent callers that find no live
//! session wait for a single connect instead of each starting one.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{Mutex, Notify};
use windlass_engine::McpError;

use crate::client::McpSession;

pub(crate) struct Slot {
    session: Mutex<Option<Arc<McpSession>>>,
    /// Fired by the server's `notifications/tools/list_changed`.
    pub(crate) tools_changed: Arc<Notify>,
}

/// A session handed to a caller; `fresh` says it was just connected (so the
/// caller may want to list tools again).
pub(crate) struct Lease {
    pub(crate) session: Arc<McpSession>,
    pub(crate) fresh: bool,
}

impl Slot {
    pub(crate) fn new() -> Slot {
        Slot {
            session: Mutex::new(None),
            tools_changed: Arc::new(Notify::new()),
        }
    }

    /// The live session, or a new one from `connect` if there is none or it
    /// died (a crashed stdio server is respawned here).
    pub(crate) async fn get<F, Fut>(&self, connect: F) -> Result<Lease, McpError>
    where
        F: FnOnce(Arc<Notify>) -> Fut,
        Fut: Future<Output = Result<McpSession, McpError>>,
    {
        let mut guard = self.session.lock().await;
        if let Some(session) = guard.as_ref() {
            if session.is_alive() {
                return Ok(Lease {
                    session: session.clone(),
                    fresh: false,
                });
            }
        }
        if let Some(dead) = guard.take() {
            close_in_background(dead);
        }
        let session = Arc::new(connect(self.tools_changed.clone()).await?);
        *guard = Some(session.clone());
        Ok(Lease {
            session,
            fresh: true,
        })
    }

    /// Forgets `session` after it failed at the transport level, so the
    /// next use reconnects. A newer session someone else made is kept.
    pub(crate) async fn discard(&self, session: &Arc<McpSession>) {
        let mut guard = self.session.lock().await;
        if guard.as_ref().is_some_and(|s| Arc::ptr_eq(s, session)) {
            if let Some(old) = guard.take() {
                close_in_background(old);
            }
        }
    }

    /// Closes the session now (shutdown, idle expiry).
    pub(crate) async fn close(&self) {
        let old = self.session.lock().await.take();
        if let Some(old) = old {
            close_session(old).await;
        }
    }
}

async fn close_session(session: Arc<McpSession>) {
    // Calls still running hold their own Arc; they finish (or fail) on the
    // old session, which closes when the last one lets go.
    if let Ok(session) = Arc::try_unwrap(session) {
        session.close().await;
    }
}

fn close_in_background(session: Arc<McpSession>) {
    tokio::spawn(close_session(session));
}
