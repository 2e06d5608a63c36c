//! Per-response category budgets (seed 004 EF-01..EF-04, EF-07/08): files
//! read, files written, lines changed, commands run, network requests.
//! Defaults come from the config; a request may lower them (never raise)
//! through `metadata` keys `budget.<category>`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::config::Budgets;

/// Entries untouched this long are dropped (the response is long over).
const FORGET_AFTER: Duration = Duration::from_secs(3600);
/// Sweep only when the table is this large.
const SWEEP_AT: usize = 1024;

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

struct Spent {
    used: [u64; 5],
    touched: Instant,
}

/// What each running response has spent.
#[derive(Default)]
pub struct Ledger {
    spent: Mutex<HashMap<String, Spent>>,
}

impl Ledger {
    /// Spends `amounts` for `response_id` if every category stays within
    /// `limits`; otherwise spends nothing and names the category.
    pub fn spend(
        &self,
        response_id: &str,
        limits: &[Option<u64>; 5],
        amounts: &[(Category, u64)],
    ) -> Result<(), String> {
        let mut table = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        if table.len() >= SWEEP_AT {
            table.retain(|_, s| s.touched.elapsed() < FORGET_AFTER);
        }
        let entry = table
            .entry(response_id.to_owned())
            .or_insert_with(|| Spent {
                used: [0; 5],
                touched: Instant::now(),
            });
        entry.touched = Instant::now();
        for &(cat, n) in amounts {
            if let Some(limit) = limits[cat.index()] {
                let used = entry.used[cat.index()];
                if used.saturating_add(n) > limit {
                    return Err(format!(
                        "budget '{}' of this response is spent ({used} of {limit} used, this call needs {n})",
                        cat.name()
                    ));
                }
            }
        }
        for &(cat, n) in amounts {
            entry.used[cat.index()] = entry.used[cat.index()].saturating_add(n);
        }
        Ok(())
    }
}
