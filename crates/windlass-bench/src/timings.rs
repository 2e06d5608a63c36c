//! Where a stored request's save spends its time: the SQLite store's
//! debug-level timing events (`windlass_store::SAVE_TIMING_TARGET`), one per
//! commit group of the save thread and one per WAL checkpoint, collected by
//! a tracing layer during a scenario. The store computes them whether or
//! not anyone listens (three clock reads per group); only this harness
//! enables the events.
//!
//! A group's `queued` is the time from its oldest save's hand-over to the
//! thread starting the group (the thread's wake-up, or the previous commit
//! it waited behind), `commit` the database work and its syscalls, and
//! `rewound` marks the first commit after a checkpoint copied the whole WAL:
//! that commit starts the log over, writing and syncing a new WAL header.

use std::sync::{Mutex, PoisonError};

use serde_json::{json, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use crate::report::Row;
use crate::stats::Dist;

/// One commit group of the save thread.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Group {
    pub rows: u64,
    pub queued_us: u64,
    /// Of `queued`: the thread runnable, waiting for a CPU, after its wake-up.
    pub wake_runq_us: u64,
    pub lock_us: u64,
    pub commit_us: u64,
    /// Of `commit`: on a CPU, and runnable but waiting for one; the rest
    /// is blocked (disk, locks).
    pub commit_cpu_us: u64,
    pub commit_runq_us: u64,
    pub rewound: bool,
}

impl Group {
    fn blocked_us(&self) -> u64 {
        self.commit_us
            .saturating_sub(self.commit_cpu_us + self.commit_runq_us)
    }
}

/// One checkpoint pass.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Checkpoint {
    pub us: u64,
    pub wal_frames: i64,
    pub wal_bytes: u64,
}

#[derive(Default)]
struct Seen {
    groups: Vec<Group>,
    checkpoints: Vec<Checkpoint>,
}

static SEEN: Mutex<Seen> = Mutex::new(Seen {
    groups: Vec::new(),
    checkpoints: Vec::new(),
});

fn seen() -> std::sync::MutexGuard<'static, Seen> {
    SEEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The layer that records the store's timing events.
pub(crate) struct Collector;

#[derive(Default)]
struct Fields {
    group: Group,
    checkpoint: Checkpoint,
    is_checkpoint: bool,
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, v: u64) {
        match field.name() {
            "rows" => self.group.rows = v,
            "queued_us" => self.group.queued_us = v,
            "wake_runq_us" => self.group.wake_runq_us = v,
            "commit_cpu_us" => self.group.commit_cpu_us = v,
            "commit_runq_us" => self.group.commit_runq_us = v,
            "lock_us" => self.group.lock_us = v,
            "commit_us" => self.group.commit_us = v,
            "checkpoint_us" => {
                self.checkpoint.us = v;
                self.is_checkpoint = true;
            }
            "wal_bytes" => self.checkpoint.wal_bytes = v,
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, v: i64) {
        if field.name() == "wal_frames" {
            self.checkpoint.wal_frames = v;
        }
    }

    fn record_bool(&mut self, field: &Field, v: bool) {
        if field.name() == "wal_rewound" {
            self.group.rewound = v;
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber> Layer<S> for Collector {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != windlass_store::SAVE_TIMING_TARGET {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        let mut seen = seen();
        if f.is_checkpoint {
            seen.checkpoints.push(f.checkpoint);
        } else {
            seen.groups.push(f.group);
        }
    }
}

/// Forgets what was recorded so far.
pub(crate) fn reset() {
    let mut s = seen();
    s.groups.clear();
    s.checkpoints.clear();
}

/// What was recorded since the last [`reset`].
pub(crate) struct Recorded {
    pub groups: Vec<Group>,
    pub checkpoints: Vec<Checkpoint>,
}

pub(crate) fn take() -> Recorded {
    let mut s = seen();
    Recorded {
        groups: std::mem::take(&mut s.groups),
        checkpoints: std::mem::take(&mut s.checkpoints),
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Recorded {
    /// Commit time of the groups `pick` selects, in ms.
    fn commits(&self, pick: impl Fn(&Group) -> bool) -> Dist {
        Dist::of(
            self.groups
                .iter()
                .filter(|g| pick(g))
                .map(|g| ms(g.commit_us)),
        )
    }

    /// Table rows (empty when nothing was recorded, e.g. on Postgres).
    pub(crate) fn rows(&self, scenario: &'static str) -> Vec<Row> {
        if self.groups.is_empty() {
            return Vec::new();
        }
        let queued = Dist::of(self.groups.iter().map(|g| ms(g.queued_us)));
        let all = self.commits(|_| true);
        let rewound = self.commits(|g| g.rewound);
        let other = self.commits(|g| !g.rewound);
        let saves: u64 = self.groups.iter().map(|g| g.rows).sum();
        let slow = self.groups.iter().filter(|g| g.commit_us >= 2000);
        let (slow_n, slow_rewound) =
            slow.fold((0, 0), |(n, r), g| (n + 1, r + u64::from(g.rewound)));
        let cp = Dist::of(self.checkpoints.iter().map(|c| ms(c.us)));
        // Where the slow commits' time went, summed.
        let slow: Vec<&Group> = self.groups.iter().filter(|g| g.commit_us >= 2000).collect();
        let sum = |f: fn(&Group) -> u64| ms(slow.iter().map(|g| f(g)).sum());
        let slow_total = sum(|g| g.commit_us);
        let share = |v: f64| {
            if slow_total > 0.0 {
                100.0 * v / slow_total
            } else {
                0.0
            }
        };
        let nan0 = |v: f64| if v.is_finite() { v } else { 0.0 };
        vec![
            Row::value(
                scenario,
                "save: saves per commit group (mean)",
                "count",
                saves as f64 / self.groups.len() as f64,
            ),
            Row::value(
                scenario,
                "save: queued before its group p50",
                "ms",
                queued.p50,
            ),
            Row::value(
                scenario,
                "save: queued before its group p99",
                "ms",
                queued.p99,
            ),
            Row::value(scenario, "save: group commit p50", "ms", all.p50),
            Row::value(scenario, "save: group commit p99", "ms", all.p99),
            Row::value(scenario, "save: group commit max", "ms", all.max),
            Row::value(
                scenario,
                "save: commits rewinding the WAL",
                "count",
                rewound.n as f64,
            ),
            Row::value(
                scenario,
                "save:   their commit p50",
                "ms",
                nan0(rewound.p50),
            ),
            Row::value(scenario, "save:   other commits p50", "ms", other.p50),
            Row::value(scenario, "save: commits >= 2 ms", "count", slow_n as f64),
            Row::value(
                scenario,
                "save:   of them rewinding the WAL",
                "count",
                slow_rewound as f64,
            ),
            Row::value(
                scenario,
                "save:   their time on a CPU",
                "%",
                share(sum(|g| g.commit_cpu_us)),
            ),
            Row::value(
                scenario,
                "save:   their time waiting for a CPU",
                "%",
                share(sum(|g| g.commit_runq_us)),
            ),
            Row::value(
                scenario,
                "save:   their time blocked (disk, locks)",
                "%",
                share(sum(Group::blocked_us)),
            ),
            Row::value(
                scenario,
                "save: wake-up wait for a CPU p99",
                "ms",
                Dist::of(self.groups.iter().map(|g| ms(g.wake_runq_us))).p99,
            ),
            Row::value(
                scenario,
                "save: WAL rewinds per 1000 saves",
                "count",
                1000.0 * rewound.n as f64 / (saves.max(1) as f64),
            ),
            Row::value(
                scenario,
                "save: saves behind a rewinding commit",
                "%",
                100.0 * self.behind_rewinds() as f64 / (saves.max(1) as f64),
            ),
            Row::value(
                scenario,
                "save: checkpoints",
                "count",
                self.checkpoints.len() as f64,
            ),
            Row::value(scenario, "save: checkpoint p50", "ms", nan0(cp.p50)),
        ]
    }

    /// Saves that waited for a commit rewinding the WAL: its own rows and
    /// the next group's (they queued while it wrote and synced the header).
    fn behind_rewinds(&self) -> u64 {
        let mut n = 0;
        for (i, g) in self.groups.iter().enumerate() {
            if g.rewound {
                n += g.rows + self.groups.get(i + 1).map_or(0, |next| next.rows);
            }
        }
        n
    }

    /// The slowest groups (queued + commit), each split into its phases:
    /// the per-request view of the slow saves.
    fn slowest(&self, n: usize) -> Value {
        let mut by_time: Vec<&Group> = self.groups.iter().collect();
        by_time.sort_by_key(|g| std::cmp::Reverse(g.queued_us + g.commit_us));
        Value::Array(
            by_time
                .into_iter()
                .take(n)
                .map(|g| {
                    json!({
                        "rows": g.rows,
                        "queued_ms": ms(g.queued_us),
                        "wake_runq_ms": ms(g.wake_runq_us),
                        "lock_ms": ms(g.lock_us),
                        "commit_ms": ms(g.commit_us),
                        "commit_cpu_ms": ms(g.commit_cpu_us),
                        "commit_runq_ms": ms(g.commit_runq_us),
                        "commit_blocked_ms": ms(g.blocked_us()),
                        "rewound": g.rewound,
                    })
                })
                .collect(),
        )
    }

    pub(crate) fn details(&self) -> Value {
        json!({
            "saves": self.groups.iter().map(|g| g.rows).sum::<u64>(),
            "behind_rewinds": self.behind_rewinds(),
            "slowest_groups": self.slowest(12),
            "groups": self.groups.len(),
            "queued_ms": Dist::of(self.groups.iter().map(|g| ms(g.queued_us))),
            "lock_ms": Dist::of(self.groups.iter().map(|g| ms(g.lock_us))),
            "wake_runq_ms": Dist::of(self.groups.iter().map(|g| ms(g.wake_runq_us))),
            "commit_cpu_ms": Dist::of(self.groups.iter().map(|g| ms(g.commit_cpu_us))),
            "commit_runq_ms": Dist::of(self.groups.iter().map(|g| ms(g.commit_runq_us))),
            "commit_blocked_ms": Dist::of(self.groups.iter().map(|g| ms(g.blocked_us()))),
            "commit_ms": self.commits(|_| true),
            "commit_rewound_ms": self.commits(|g| g.rewound),
            "commit_other_ms": self.commits(|g| !g.rewound),
            "checkpoint_ms": Dist::of(self.checkpoints.iter().map(|c| ms(c.us))),
            "checkpoint_wal_frames": Dist::of(self.checkpoints.iter().map(|c| c.wal_frames as f64)),
            "checkpoint_wal_mib": Dist::of(self.checkpoints.iter().map(|c| c.wal_bytes as f64 / 1048576.0)),
        })
    }
}
