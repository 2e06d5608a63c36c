//! `include`: what a client sees of the hosted-tool items. A stored item
//! keeps its complete data (the loop replays it to the model from the item
//! alone); every surface cuts what it shows with [`present`].

use crate::code_interpreter::INCLUDE_CODE_INTERPRETER_OUTPUTS;
use crate::items::Item;
use crate::web_search::INCLUDE_WEB_SEARCH_SOURCES;

/// The `include` values of the hosted tools in this module's care.
pub const HOSTED_INCLUDES: [&str; 2] =
    [INCLUDE_WEB_SEARCH_SOURCES, INCLUDE_CODE_INTERPRETER_OUTPUTS];

/// Cuts `item` to what a client that sent `include` sees; items with
/// nothing to cut are left alone.
pub fn present(item: &mut Item, include: &[String]) {
    match item {
        Item::WebSearchCall(c) => c.present(include),
        Item::CodeInterpreterCall(c) => c.present(include),
        _ => {}
    }
}
