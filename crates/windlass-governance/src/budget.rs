//! Per-response category budgets (seed 004 EF-01..EF-04, EF-07/08): files
//! read, files written, lines changed, commands run, network requests.
//! Defaults come from the config; a request may lower them (never raise)
//! through `metadata` keys `budget.<category>`.

use std::time::Duration;

use serde_json::{Map, Value};
use windlass_engine::{CounterTake, CounterWindow};

use crate::config::Budgets;

/// A response's counters untouched this long are dropped (the response is
/// long over).
const FORGET_AFTER: Duration = Duration::from_secs(3600);

/// The categories, with the metadata key that lowers each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    FilesRead,
    FilesWritten,
    LinesChanged,
    CommandsRun,
    NetworkRequests,
}

impl Category {
    pub const ALL: [Category; 5] = [
        Category::FilesRead,
        Category::FilesWritten,
        Category::LinesChanged,
        Category::CommandsRun,
        Category::NetworkRequests,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::FilesRead => "files_read",
            Category::FilesWritten => "files_written",
            Category::LinesChanged => "lines_changed",
            Category::CommandsRun => "commands_run",
            Category::NetworkRequests => "network_requests",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    fn limit(self, b: &Budgets) -> Option<u64> {
        match self {
            Category::FilesRead => b.files_read,
            Category::FilesWritten => b.files_written,
            Category::LinesChanged => b.lines_changed,
            Category::CommandsRun => b.commands_run,
            Category::NetworkRequests => b.network_requests,
        }
    }
}

/// The budgets for one response: the configured ones, lowered by the
/// request's metadata. Err: a metadata value that is not a whole number.
pub fn effective(
    config: &Budgets,
    metadata: &Map<String, Value>,
) -> Result<[Option<u64>; 5], String> {
    let mut out = [None; 5];
    for cat in Category::ALL {
        let key = format!("budget.{}", cat.name());
        let asked = match metadata.get(&key) {
            None => None,
            Some(Value::Number(n)) => Some(n.as_u64().ok_or_else(|| bad(&key))?),
            Some(Value::String(s)) => Some(s.trim().parse::<u64>().map_err(|_| bad(&key))?),
            Some(_) => return Err(bad(&key)),
        };
        out[cat.index()] = match (cat.limit(config), asked) {
            (Some(c), Some(a)) => Some(c.min(a)),
            (c, a) => c.or(a),
        };
    }
    Ok(out)
}

fn bad(key: &str) -> String {
    format!("request metadata '{key}' must be a whole number")
}

/// One category's take of a call, with what to say when it is refused.
pub struct BudgetTake {
    pub take: CounterTake,
    category: Category,
    limit: u64,
}

impl BudgetTake {
    /// The refusal, given what the counter has left.
    pub fn message(&self, remaining: u64) -> String {
        let used = self.limit.saturating_sub(remaining);
        format!(
            "budget '{}' of this response is spent ({used} of {} used, this call needs {})",
            self.category.name(),
            self.limit,
            self.take.amount
        )
    }
}

/// The counter takes of one call's `amounts` against `response_id`'s
/// budgets `limits` (categories without a limit are not counted).
pub fn takes(
    response_id: &str,
    limits: &[Option<u64>; 5],
    amounts: &[(Category, u64)],
) -> Vec<BudgetTake> {
    let mut out = Vec::new();
    for &(category, amount) in amounts {
        let Some(limit) = limits[category.index()] else {
            continue;
        };
        out.push(BudgetTake {
            take: CounterTake {
                key: format!("budget:{response_id}:{}", category.name()),
                amount,
                window: CounterWindow::Total {
                    limit,
                    idle: FORGET_AFTER,
                },
            },
            category,
            limit,
        });
    }
    out
}
