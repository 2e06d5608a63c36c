//! Paging a list of items the way `GET .../items` lists do: order, then
//! everything after the `after` item, then `limit`.

use windlass_engine::{ItemPage, PageRequest, SortOrder, StoreError};
use windlass_protocol::Item;

/// `items` oldest first.
pub(crate) fn page_items(mut items: Vec<Item>, page: &PageRequest) -> Result<ItemPage, StoreError> {
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
