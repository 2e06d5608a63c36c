//! `include`: what a client sees of the hosted-tool items. A stored item
//! keeps its complete data (the loop replays it to the model from the item
//! alone); every surface cuts what it shows with [`present`].

use crate::code_interpreter::INCLUDE_CODE_INTERPRETER_OUTPUTS;
use crate::events::EventData;
use crate::file_search::INCLUDE_FILE_SEARCH_RESULTS;
use crate::items::Item;
use crate::response::ResponseResource;
use crate::web_search::INCLUDE_WEB_SEARCH_SOURCES;

/// The `include` values of the hosted tools in this module's care.
pub const HOSTED_INCLUDES: [&str; 3] = [
    INCLUDE_FILE_SEARCH_RESULTS,
    INCLUDE_WEB_SEARCH_SOURCES,
    INCLUDE_CODE_INTERPRETER_OUTPUTS,
];

/// Cuts `item` to what a client that sent `include` sees; items with
/// nothing to cut are left alone.
pub fn present(item: &mut Item, include: &[String]) {
    match item {
        Item::FileSearchCall(c) => c.present(include),
        Item::WebSearchCall(c) => c.present(include),
        Item::CodeInterpreterCall(c) => c.present(include),
        _ => {}
    }
}

/// [`present`] on every item of a response.
pub fn present_response(response: &mut ResponseResource, include: &[String]) {
    for item in &mut response.output {
        present(item, include);
    }
}

/// [`present`] on the items a stream event carries (an item added or done,
/// a response snapshot).
pub fn present_event(event: &mut EventData, include: &[String]) {
    match event {
        EventData::OutputItemAdded { item, .. } | EventData::OutputItemDone { item, .. } => {
            present(item, include)
        }
        EventData::Created { response }
        | EventData::Queued { response }
        | EventData::InProgress { response }
        | EventData::Completed { response }
        | EventData::Failed { response }
        | EventData::Incomplete { response }
        | EventData::Cancelled { response }
        | EventData::RequiresAction { response } => present_response(response, include),
        _ => {}
    }
}
