//! Called by prepare (history) and at a run's end (save); a port so SQLite/Postgres/memory plug in.
//!
//! The persistence port: finished responses and the items they reference.
//!
//! Every stored row has an owner tenant. Reads and deletes name the tenant
//! first, and a row of another tenant behaves exactly like an unknown id, so
//! ids tell nothing across tenants.

use windlass_protocol::{Item, ResponseResource};

use super::trace::Trace;

/// The tenant of keys that name none, of flag/env setups and of the SDK.
pub const DEFAULT_TENANT: &str = "default";

/// A finished response to persist.
#[derive(Debug, Clone, Copy)]
pub struct NewResponse<'a> {
    /// The owner tenant; the response continues only from its own tenant's
    /// responses.
    pub tenant: &'a str,
    /// The resource as returned to the client, `output` included.
    pub response: &'a ResponseResource,
    /// The items of this request's own `input` (ids assigned), in order.
    pub input: &'a [Item],
    /// The run's execution trace, stored with it (a store may drop it
    /// rather than fail the save).
    pub trace: Option<&'a Trace>,
}

/// Which page of input items to list (`GET /v1/responses/{id}/input_items`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// Return items after this item id (in the chosen order).
    pub after: Option<String>,
    /// 1..=100.
    pub limit: usize,
    /// Oldest first or newest first.
    pub order: SortOrder,
}

/// The order of a listed page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// Oldest first.
    Asc,
    /// Newest first (the default, as OpenAI lists).
    #[default]
    Desc,
}

/// One page of items, and whether more follow.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemPage {
    /// The items of this page, in the requested order.
    pub items: Vec<Item>,
    /// Whether items follow this page.
    pub has_more: bool,
}

impl ItemPage {
    /// Pages `items` (oldest first) the way `GET .../items` lists do: order,
    /// then everything after the `after` item, then `limit`. Every store
    /// that holds a list whole pages it here.
    pub fn of(mut items: Vec<Item>, page: &PageRequest) -> Result<ItemPage, StoreError> {
        if page.order == SortOrder::Desc {
            items.reverse();
        }
        let start = match &page.after {
            None => 0,
            Some(after) => {
                items
                    .iter()
                    .position(|i| i.id() == Some(after.as_str()))
                    .ok_or_else(|| StoreError::UnknownCursor(after.clone()))?
                    + 1
            }
        };
        let rest = items.split_off(start);
        let has_more = rest.len() > page.limit;
        Ok(ItemPage {
            items: rest.into_iter().take(page.limit).collect(),
            has_more,
        })
    }
}

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database failed (connection, disk, a query).
    #[error("storage failure: {0}")]
    Backend(String),
    /// A stored value could not be decoded.
    #[error("stored data is unreadable: {0}")]
    Corrupt(String),
    /// The id is already taken.
    #[error("response {0} already exists")]
    Duplicate(String),
    /// The page cursor names no item of that list.
    #[error("no item with id {0} in that response's input")]
    UnknownCursor(String),
}

/// Where responses live. Items are stored once; a response keeps the ordered
/// ids of the items it references (its history, its input, its output).
#[async_trait::async_trait]
pub trait ResponseStore: Send + Sync {
    /// Persists a finished response, removing its live row (see
    /// [`RunStore`](crate::ports::host::runs::RunStore)) in the same transaction. Its history is the context of
    /// `response.previous_response_id` (that response's history, input and
    /// output), referenced rather than copied. Atomic: all or nothing.
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError>;

    /// The stored resource, or `None` (also for another tenant's id).
    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ResponseResource>, StoreError>;

    /// The transcript to continue from `id`: its history, input and output in
    /// order. `None` when `id` is unknown.
    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError>;

    /// A page of the request's own input items. `None` when `id` is unknown.
    async fn input_items(
        &self,
        tenant: &str,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError>;

    /// Deletes a response with its stored stream events and any live row.
    /// Responses that continue from it keep working.
    /// Returns false when `id` is unknown.
    async fn delete(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;

    /// The most recently stored item with this public id among the tenant's
    /// responses (for `item_reference`).
    async fn find_item(&self, tenant: &str, item_id: &str) -> Result<Option<Item>, StoreError>;

    /// The execution trace of a response; `None` when there is none.
    async fn trace(&self, _tenant: &str, _response_id: &str) -> Result<Option<Trace>, StoreError> {
        Ok(None)
    }

    /// Retention, across every tenant: deletes the responses created before
    /// `created_before` (Unix seconds) with their traces and the items no
    /// remaining response references; newer responses that continue from a
    /// pruned one keep their whole history. Returns how many were deleted.
    async fn prune(&self, _created_before: u64) -> Result<u64, StoreError> {
        Err(StoreError::Backend(
            "this store does not support pruning".into(),
        ))
    }

    /// Cheap liveness probe for `/ready`.
    async fn ping(&self) -> Result<(), StoreError>;
}
