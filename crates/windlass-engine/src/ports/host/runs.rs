//! Called by the server (background runs, resume, recovery), never the loop; stores keep the rows.
//!
//! The live-run port: responses that have not ended yet, as the store sees
//! them, so that a response outlives the process (or replica) running it.
//!
//! A background response is recorded here when it is accepted (`queued`),
//! with the replica running it and a lease that replica keeps renewing. The
//! final [`ResponseStore::save`](crate::ports::agent::store::ResponseStore::save) of the
//! response removes its live row in the same transaction, so a response is
//! always exactly one of: live, stored, or unknown. A replica that dies stops
//! renewing; once its leases expire another replica (or the same one after a
//! restart) claims the rows and resumes or fails them, so no response stays
//! `in_progress` forever.
//!
//! The same port keeps the stream events of resumable responses (sequence
//! number and event JSON) for `GET /v1/responses/{id}?stream=true`; they are
//! deleted with the response.
//!
//! Every method takes the owner tenant first: another tenant's row behaves
//! exactly like an unknown id.

use windlass_protocol::ResponseResource;

use crate::ports::agent::store::StoreError;

/// Milliseconds since the Unix epoch (lease times).
pub type UnixMillis = u64;

/// A response that has not ended, to record or update.
#[derive(Debug, Clone, Copy)]
pub struct LiveRun<'a> {
    /// The tenant that owns the response.
    pub tenant: &'a str,
    /// The resource as it stands: `queued` or `in_progress`.
    pub response: &'a ResponseResource,
    /// The replica running it (unique per process).
    pub replica: &'a str,
    /// Until when the replica is presumed alive without renewing.
    pub lease_until: UnixMillis,
    /// What the surface needs to start the run again (opaque to the store;
    /// JSON). `None`: it cannot be resumed, only ended `failed`. Never holds
    /// secrets.
    pub resume: Option<&'a str>,
}

/// A live row as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRecord {
    /// The tenant that owns the response.
    pub tenant: String,
    /// The resource as it stands: `queued` or `in_progress`.
    pub response: ResponseResource,
    /// The replica running it.
    pub replica: String,
    /// Until when the replica is presumed alive without renewing.
    pub lease_until: UnixMillis,
    /// What the surface needs to start the run again (opaque JSON); `None`: it can only be ended `failed`.
    pub resume: Option<String>,
}

/// One stored stream event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's `sequence_number`.
    pub sequence_number: u64,
    /// The event as sent on the wire (`{"type": ..., "sequence_number": ...}`).
    pub json: String,
}

/// Responses that have not ended and the stream events of resumable ones (see the module doc).
#[async_trait::async_trait]
pub trait RunStore: Send + Sync {
    /// Records a live response (insert, or replace a row of the same id and
    /// tenant: status changes, a claim). Fails with `Duplicate` when the id
    /// is already stored as a finished response.
    async fn put_live(&self, run: LiveRun<'_>) -> Result<(), StoreError>;

    /// The live row of `id`, if the response has not ended.
    async fn get_live(&self, tenant: &str, id: &str) -> Result<Option<LiveRecord>, StoreError>;

    /// Extends the lease of every live row `replica` holds; returns how many.
    async fn renew_leases(&self, replica: &str, lease_until: UnixMillis)
        -> Result<u64, StoreError>;

    /// Takes over (atomically, so only one claimer gets each) up to `limit`
    /// rows whose lease ended before `now`: they now belong to `replica`
    /// until `lease_until`. Returns the claimed rows, oldest first.
    async fn claim_expired(
        &self,
        replica: &str,
        now: UnixMillis,
        lease_until: UnixMillis,
        limit: usize,
    ) -> Result<Vec<LiveRecord>, StoreError>;

    /// Removes a live row without a final save (a response that will never
    /// be stored). Returns false when there was none.
    async fn drop_live(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;

    /// Appends stream events of `id` (increasing sequence numbers; an event
    /// whose number is already stored is ignored, so a retried append is
    /// harmless).
    async fn append_events(
        &self,
        tenant: &str,
        id: &str,
        events: &[StoredEvent],
    ) -> Result<(), StoreError>;

    /// The stored events of `id` with a sequence number above `after`
    /// (`None`: all), in order.
    async fn events_after(
        &self,
        tenant: &str,
        id: &str,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, StoreError>;
}
