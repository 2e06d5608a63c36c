//! Process measurements: CPU time (whole process and per thread), resident
//! memory, live heap bytes. Linux only (`/proc`, `getrusage`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::Duration;

/// Name prefix of the threads of the runtime Windlass runs on: its workers
/// and its blocking pool (tokio names both alike), where the store runs
/// SQLite (reads inline on the workers, WAL checkpoints and writes other
/// than saves on the blocking pool).
pub(crate) const WINDLASS_THREAD: &str = "windlass-rt";

/// Whether a thread (by its `comm`, 15 characters at most) does Windlass's
/// work: the runtime's threads, the connection threads (and their blocking
/// pools) and the SQLite store's save thread.
pub(crate) fn is_windlass_thread(comm: &str) -> bool {
    comm.starts_with(WINDLASS_THREAD)
        || comm.starts_with(windlass_server::CONNECTION_THREAD_NAME)
        || comm == windlass_store::SAVE_THREAD_NAME
}

// ---------------------------------------------------------------------------
// Live heap bytes: the system allocator with a counter that is only updated
// while counting is switched on (the idle-stream scenario), so the CPU
// scenarios pay one relaxed load per allocation and nothing else.

pub(crate) struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);

#[inline]
fn count(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        LIVE.fetch_add(delta, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Starts counting heap bytes from zero.
pub(crate) fn heap_counting_start() {
    LIVE.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
}

/// Bytes allocated and not freed since [`heap_counting_start`] (frees of
/// older blocks count negative).
pub(crate) fn heap_live() -> isize {
    LIVE.load(Ordering::SeqCst)
}

pub(crate) fn heap_counting_stop() {
    COUNTING.store(false, Ordering::SeqCst);
}

// ---------------------------------------------------------------------------

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod sys {
    #[repr(C)]
    pub(super) struct Timeval {
        pub tv_sec: i64,
        pub tv_usec: i64,
    }

    #[repr(C)]
    pub(super) struct Rusage {
        pub ru_utime: Timeval,
        pub ru_stime: Timeval,
        pub rest: [i64; 14],
    }

    pub(super) const RUSAGE_SELF: i32 = 0;

    extern "C" {
        pub(super) fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }

    #[cfg(target_env = "gnu")]
    extern "C" {
        pub(super) fn malloc_trim(pad: usize) -> i32;
    }
}

/// User + system CPU time of the whole process (every thread, also exited ones).
pub(crate) fn process_cpu() -> Duration {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        let mut u = sys::Rusage {
            ru_utime: sys::Timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            ru_stime: sys::Timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            rest: [0; 14],
        };
        // SAFETY: `u` is a valid, writable `struct rusage` of the 64-bit Linux layout.
        let rc = unsafe { sys::getrusage(sys::RUSAGE_SELF, &mut u) };
        if rc == 0 {
            let us = (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1_000_000
                + u.ru_utime.tv_usec
                + u.ru_stime.tv_usec;
            return Duration::from_micros(us.max(0) as u64);
        }
    }
    Duration::ZERO
}

/// Hands freed heap pages back to the kernel so VmRSS reflects live memory.
pub(crate) fn trim_heap() {
    #[cfg(all(target_os = "linux", target_pointer_width = "64", target_env = "gnu"))]
    // SAFETY: glibc's malloc_trim has no preconditions.
    unsafe {
        sys::malloc_trim(0);
    }
}

/// Resident set size in bytes (`VmRSS` of `/proc/self/status`).
pub(crate) fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Per-thread counters: on-CPU nanoseconds (`/proc/self/task/*/schedstat`,
/// first field: exact scheduler accounting, user and kernel time) and
/// context switches (voluntary + involuntary, from `status`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ThreadCpu(HashMap<u32, ThreadCounters>);

#[derive(Debug, Clone, Copy, Default)]
struct ThreadCounters {
    ns: u64,
    switches: u64,
}

/// What the Windlass threads did between two snapshots.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ThreadDelta {
    pub cpu: Duration,
    pub context_switches: u64,
}

fn switches(status: &str) -> u64 {
    status
        .lines()
        .filter(|l| {
            l.starts_with("voluntary_ctxt_switches:")
                || l.starts_with("nonvoluntary_ctxt_switches:")
        })
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

impl ThreadCpu {
    /// The threads for which `keep(comm)` holds.
    pub(crate) fn snapshot(keep: impl Fn(&str) -> bool) -> ThreadCpu {
        let mut map = HashMap::new();
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return ThreadCpu(map);
        };
        for entry in dir.flatten() {
            let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let path = entry.path();
            let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            let comm = comm.trim_end();
            if !keep(comm) {
                continue;
            }
            let ns = std::fs::read_to_string(path.join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok());
            let sw = std::fs::read_to_string(path.join("status"))
                .map(|s| switches(&s))
                .unwrap_or(0);
            if let Some(ns) = ns {
                map.insert(tid, ThreadCounters { ns, switches: sw });
            }
        }
        ThreadCpu(map)
    }

    pub(crate) fn windlass() -> ThreadCpu {
        ThreadCpu::snapshot(is_windlass_thread)
    }

    /// What the threads alive now did since `earlier` (a thread born in
    /// between counts from zero; one that died in between is lost).
    pub(crate) fn since(&self, earlier: &ThreadCpu) -> ThreadDelta {
        let mut d = ThreadDelta::default();
        for (tid, now) in &self.0 {
            let before = earlier.0.get(tid).copied().unwrap_or_default();
            d.cpu += Duration::from_nanos(now.ns.saturating_sub(before.ns));
            d.context_switches += now.switches.saturating_sub(before.switches);
        }
        d
    }
}

/// CPU counters at one instant.
#[derive(Debug, Clone)]
pub(crate) struct CpuMark {
    process: Duration,
    windlass: ThreadCpu,
}

impl CpuMark {
    pub(crate) fn now() -> CpuMark {
        CpuMark {
            process: process_cpu(),
            windlass: ThreadCpu::windlass(),
        }
    }

    /// (process CPU, Windlass threads) since `self`.
    pub(crate) fn elapsed(&self) -> (Duration, ThreadDelta) {
        let now = CpuMark::now();
        (
            now.process.saturating_sub(self.process),
            now.windlass.since(&self.windlass),
        )
    }
}
