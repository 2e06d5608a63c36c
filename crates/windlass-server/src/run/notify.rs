//! Telling someone a background response ended: the port the server calls
//! once a background run is over (completed, failed, cancelled or
//! incomplete). The binary plugs in signed Standard Webhooks (`[webhooks]`
//! in its config); the server itself sends nothing.

use std::sync::Arc;

use windlass_protocol::ResponseResource;

/// Receives every background response that ended, in its tenant.
#[async_trait::async_trait]
pub trait ResponseNotifier: Send + Sync {
    /// Called once per ended background response, in a task of its own
    /// (a slow receiver holds no worker slot).
    async fn response_ended(&self, tenant: &str, response: &ResponseResource);
}

/// Hands the ended `response` to `notifier` without waiting for it.
pub(crate) fn ended(
    notifier: Option<&Arc<dyn ResponseNotifier>>,
    tenant: &str,
    response: ResponseResource,
) {
    let Some(notifier) = notifier.cloned() else {
        return;
    };
    let tenant = tenant.to_owned();
    tokio::spawn(async move { notifier.response_ended(&tenant, &response).await });
}
