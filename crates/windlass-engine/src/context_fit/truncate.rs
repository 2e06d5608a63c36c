//! Oldest-first truncation of an upstream transcript (pure).
//!
//! Items go from the front, except system and developer messages (they are
//! instructions, not conversation) and the newest item (the turn being
//! answered). A function call's output never stays without its call.

use std::collections::HashSet;

use windlass_protocol::{Item, Role};

/// Whether truncation may drop `item`.
fn droppable(item: &Item) -> bool {
    !matches!(item, Item::Message(m) if matches!(m.role, Role::System | Role::Developer))
}

/// Drops items from the front of `items` until the kept ones hold at most
/// `target` bytes (by `size`), keeping the last item. A dropped call takes
/// its outputs along. Returns how many items were dropped.
pub(crate) fn drop_oldest(
    items: &mut Vec<Item>,
    target: usize,
    size: impl Fn(&Item) -> usize,
) -> usize {
    let before = items.len();
    let mut total: usize = items.iter().map(&size).sum();
    let last = items.len().saturating_sub(1);
    let mut drop = vec![false; items.len()];
    for i in 0..last {
        if total <= target {
            break;
        }
        if drop[i] || !droppable(&items[i]) || answers_last(items, i) {
            continue;
        }
        drop[i] = true;
        total = total.saturating_sub(size(&items[i]));
        if let Item::FunctionCall(call) = &items[i] {
            for (j, other) in items.iter().enumerate().skip(i + 1) {
                if matches!(other, Item::FunctionCallOutput(o) if o.call_id == call.call_id)
                    && !drop[j]
                {
                    drop[j] = true;
                    total = total.saturating_sub(size(other));
                }
            }
        }
    }
    let mut flags = drop.into_iter();
    items.retain(|_| !flags.next().unwrap_or(false));
    remove_orphans(items);
    before - items.len()
}

/// Whether item `i` is the call the last item answers (dropping it would
/// drop the newest item too).
fn answers_last(items: &[Item], i: usize) -> bool {
    match (&items[i], items.last()) {
        (Item::FunctionCall(c), Some(Item::FunctionCallOutput(o))) => c.call_id == o.call_id,
        _ => false,
    }
}

/// Removes outputs whose call is gone, and reasoning left at the front
/// (it belonged to the turn that was dropped).
fn remove_orphans(items: &mut Vec<Item>) {
    let calls: HashSet<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::FunctionCall(c) => Some(c.call_id.clone()),
            _ => None,
        })
        .collect();
    items.retain(|i| match i {
        Item::FunctionCallOutput(o) => calls.contains(&o.call_id),
        _ => true,
    });
    while items.len() > 1 && matches!(items[0], Item::Reasoning(_)) {
        items.remove(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn items(v: serde_json::Value) -> Vec<Item> {
        serde_json::from_value(v).expect("items")
    }

    fn len(item: &Item) -> usize {
        serde_json::to_string(item).map_or(0, |s| s.len())
    }

    #[test]
    fn the_oldest_go_first_and_the_newest_stays() {
        let mut t = items(json!([
            {"type": "message", "role": "developer", "content": "be brief"},
            {"type": "message", "role": "user", "content": "one ".repeat(50)},
            {"type": "message", "role": "assistant", "content": "two ".repeat(50)},
            {"type": "message", "role": "user", "content": "three"},
        ]));
        let keep = len(&t[0]) + len(&t[2]) + len(&t[3]);
        let dropped = drop_oldest(&mut t, keep, len);
        assert_eq!(dropped, 1);
        assert_eq!(t.len(), 3);
        assert!(matches!(&t[0], Item::Message(m) if m.role == Role::Developer));
        assert!(matches!(&t[1], Item::Message(m) if m.role == Role::Assistant));
        // Nothing fits: all but the developer message and the newest go.
        let dropped = drop_oldest(&mut t, 0, len);
        assert_eq!(dropped, 1);
        assert_eq!(t.len(), 2);
        assert_eq!(t[1], Item::user_text("three"));
    }

    #[test]
    fn a_dropped_call_takes_its_output_along() {
        let mut t = items(json!([
            {"type": "message", "role": "user", "content": "add"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "add", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "3"},
            {"type": "function_call_output", "call_id": "c2", "output": "4"},
            {"type": "message", "role": "user", "content": "and now?"},
        ]));
        let target = len(&t[3]) + len(&t[5]) + len(&t[6]);
        drop_oldest(&mut t, target, len);
        let kinds: Vec<String> = t
            .iter()
            .map(|i| {
                serde_json::to_value(i).expect("json")["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            ["function_call", "function_call_output", "message"],
            "{t:?}"
        );
        assert!(matches!(&t[1], Item::FunctionCallOutput(o) if o.call_id == "c2"));
    }
}
