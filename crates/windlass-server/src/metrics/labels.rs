//! Label values that come from requests (model names, tool names) are
//! bounded: the first `max` distinct values are kept, later ones are
//! reported as `other`, so a client cannot grow the metric set without end.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) const OTHER: &str = "other";

/// The front door a response came through: the `surface` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Surface {
    /// `POST /v1/responses` (JSON, SSE, background).
    #[default]
    Responses,
    /// The Responses API over a WebSocket (`GET /v1/responses` upgrade).
    WebSocket,
    /// Anthropic's Messages API (`POST /v1/messages`).
    Messages,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Responses => "responses",
            Surface::WebSocket => "websocket",
            Surface::Messages => "messages",
        }
    }
}

#[derive(Debug)]
pub(crate) struct LabelCap {
    max: usize,
    seen: Mutex<HashSet<Arc<str>>>,
}

impl LabelCap {
    pub(super) fn new(max: usize) -> Self {
        LabelCap {
            max,
            seen: Mutex::new(HashSet::new()),
        }
    }

    /// `value` if it is known or there is room for it; `other` otherwise.
    pub(super) fn get(&self, value: &str) -> Arc<str> {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = seen.get(value) {
            return v.clone();
        }
        if seen.len() >= self.max {
            return Arc::from(OTHER);
        }
        let v: Arc<str> = Arc::from(value);
        seen.insert(v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_past_the_cap_become_other() {
        let cap = LabelCap::new(2);
        assert_eq!(&*cap.get("a"), "a");
        assert_eq!(&*cap.get("b"), "b");
        assert_eq!(&*cap.get("c"), OTHER);
        assert_eq!(&*cap.get("a"), "a");
    }
}
