//! Called by the server (cancel route, runs), never the loop; a port so replicas reach each other.
//!
//! The cancel bus: a cancel reaching the process that runs a response.
//!
//! A response runs in one process. With several replicas behind one store,
//! `POST /v1/responses/{id}/cancel` may arrive at another one; that replica
//! publishes the cancel on the bus and the replica running the response
//! stops it (and acknowledges). With a single process there is nothing to
//! reach: [`LocalCancelBus`] acknowledges nothing.

use std::sync::Arc;

use crate::ports::agent::store::StoreError;

/// What a cancel published on the bus found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelAck {
    /// No process runs that tenant's response.
    Unclaimed,
    /// The process running it is stopping it and will store its final state.
    Stored,
    /// The process running it is stopping it, but it was created with
    /// `store: false`: its final state is never stored anywhere.
    Unstored,
}

/// Called with the owner tenant and id of each cancel published on the bus
/// (by any replica); stops that tenant's response if it runs in this
/// process and answers what it did ([`CancelAck::Unclaimed`] otherwise).
pub type CancelHandler = Arc<dyn Fn(&str, &str) -> CancelAck + Send + Sync>;

/// Carries a cancel to the process that runs the response (see the module doc).
#[async_trait::async_trait]
pub trait CancelBus: Send + Sync {
    /// Asks whichever process runs `tenant`'s `response_id` to cancel it,
    /// and answers what that process acknowledged; `Unclaimed` when none
    /// did (another tenant's response is never claimed).
    async fn publish(&self, tenant: &str, response_id: &str) -> Result<CancelAck, StoreError>;

    /// Delivers the cancels published on the bus to `handler` from now on
    /// (replacing an earlier handler).
    fn subscribe(&self, handler: CancelHandler);
}

/// One process: every running response is in its own registry, so no other
/// process can be running one.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalCancelBus;

#[async_trait::async_trait]
impl CancelBus for LocalCancelBus {
    async fn publish(&self, _tenant: &str, _response_id: &str) -> Result<CancelAck, StoreError> {
        Ok(CancelAck::Unclaimed)
    }

    fn subscribe(&self, _handler: CancelHandler) {}
}
