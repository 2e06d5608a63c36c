//! The query and the answer of the paged item lists
//! (`GET /v1/responses/{id}/input_items`, `GET /v1/conversations/{id}/items`).

use serde::Deserialize;
use windlass_engine::{PageRequest, SortOrder};
use windlass_protocol::include::{present, HOSTED_INCLUDES};
use windlass_protocol::{Item, ItemList};

use crate::error::ApiError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    after: Option<String>,
    limit: Option<usize>,
    order: Option<String>,
    #[serde(rename = "include[]", default)]
    include_list: Option<String>,
    #[serde(default)]
    include: Option<String>,
}

impl ListQuery {
    /// The page asked for (`listed` names the items in errors: "input
    /// items"), and the `include` values (hosted-tool items' data:
    /// `file_search_call.results`, ...) the listed items are shown with
    /// ([`list_presented`]). Other extra data (image URLs, logprobs) is not
    /// kept for items, so those values are refused rather than ignored.
    pub(crate) fn page_and_include(
        mut self,
        listed: &str,
    ) -> Result<(PageRequest, Vec<String>), ApiError> {
        let mut include = Vec::new();
        if let Some(value) = self.include.take().or(self.include_list.take()) {
            if !HOSTED_INCLUDES.contains(&value.as_str()) {
                return Err(ApiError::invalid(format!(
                    "include value '{value}' is not supported for {listed}"
                ))
                .param("include"));
            }
            include.push(value);
        }
        Ok((self.page_only()?, include))
    }

    fn page_only(self) -> Result<PageRequest, ApiError> {
        let limit = self.limit.unwrap_or(20);
        if !(1..=100).contains(&limit) {
            return Err(ApiError::invalid("limit must be between 1 and 100").param("limit"));
        }
        let order = match self.order.as_deref() {
            None | Some("desc") => SortOrder::Desc,
            Some("asc") => SortOrder::Asc,
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "order must be 'asc' or 'desc', got '{other}'"
                ))
                .param("order"))
            }
        };
        Ok(PageRequest {
            after: self.after,
            limit,
            order,
        })
    }
}

/// A page of items in the list shape, hosted items cut to `include`.
pub(crate) fn list_presented(mut items: Vec<Item>, has_more: bool, include: &[String]) -> ItemList {
    for item in &mut items {
        present(item, include);
    }
    list(items, has_more)
}

/// A page of items in the list shape.
pub(crate) fn list(items: Vec<Item>, has_more: bool) -> ItemList {
    ItemList {
        object: "list".to_owned(),
        first_id: items.first().and_then(Item::id).map(str::to_owned),
        last_id: items.last().and_then(Item::id).map(str::to_owned),
        data: items,
        has_more,
    }
}
