//! The code_interpreter runner in a real bubblewrap sandbox with the host's
//! Python: output, files written back, no network, nothing written outside
//! the container, and the limits.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio_util::sync::CancellationToken;
use windlass_tools::hosted::code_interpreter::{
    CodeInterpreterConfig, ContainerFile, RunEnding, RunOutput, Runner,
};

fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "windlass-ci-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn runner(tune: impl FnOnce(&mut CodeInterpreterConfig)) -> Runner {
    let mut config = CodeInterpreterConfig {
        enabled: true,
        work_root: Some(temp_dir("root")),
        ..Default::default()
    };
    tune(&mut config);
    let r = Runner::start(config).await;
    assert_eq!(r.unavailable(), None, "bubblewrap must work here");
    r
}

async fn run(r: &Runner, container: &str, files: &[ContainerFile], code: &str) -> RunOutput {
    let dir = r.work_dir("tenant-a", container);
    r.run(&dir, files, code, &CancellationToken::new())
        .await
        .unwrap()
}

#[tokio::test]
async fn print_comes_back_in_the_logs() {
    let r = runner(|_| {}).await;
    let out = run(&r, "cntr_1", &[], "print(6*7)").await;
    assert_eq!(out.ending, RunEnding::Exited(0));
    assert_eq!(out.logs.trim(), "42");
    assert!(out.files.is_empty());
}

#[tokio::test]
async fn an_error_shows_its_traceback_and_exit_status() {
    let r = runner(|_| {}).await;
    let out = run(&r, "cntr_1", &[], "1/0").await;
    assert_eq!(out.ending, RunEnding::Exited(1));
    assert!(out.logs.contains("ZeroDivisionError"), "{}", out.logs);
}

#[tokio::test]
async fn container_files_go_in_and_written_files_come_back() {
    let r = runner(|_| {}).await;
    let input = [ContainerFile {
        path: "/mnt/data/data.csv".into(),
        bytes: b"a,b\n1,2\n3,4\n".to_vec(),
    }];
    // A tiny PNG written with the standard library only.
    let code = r#"
import csv, zlib, struct, os
rows = list(csv.DictReader(open("data.csv")))
print(sum(int(r["b"]) for r in rows), os.getcwd())
def chunk(t, d):
    c = struct.pack(">I", len(d)) + t + d
    return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
raw = b"".join(b"\x00" + b"\xff\x00\x00" * 4 for _ in range(4))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
os.makedirs("plots", exist_ok=True)
open("plots/red.png", "wb").write(png)
"#;
    let out = run(&r, "cntr_files", &input, code).await;
    assert_eq!(out.ending, RunEnding::Exited(0), "{}", out.logs);
    assert_eq!(out.logs.trim(), "6 /mnt/data");
    assert_eq!(out.files.len(), 1, "only the new file: {:?}", out.files);
    let png = &out.files[0];
    assert_eq!(png.path, "plots/red.png");
    assert_eq!(png.image, Some("image/png"));
    assert!(png.bytes.starts_with(b"\x89PNG"));

    // The next run in the same container sees the file; an unchanged file
    // does not come back again.
    let again = run(
        &r,
        "cntr_files",
        &[],
        "import os; print(os.path.getsize('plots/red.png') > 0)",
    )
    .await;
    assert_eq!(again.logs.trim(), "True");
    assert!(again.files.is_empty());
}

#[tokio::test]
async fn the_code_has_no_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let r = runner(|_| {}).await;
    let code = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('connected')\nexcept OSError as e:\n    print('refused', type(e).__name__)\n"
    );
    let out = run(&r, "cntr_net", &[], &code).await;
    assert!(out.logs.starts_with("refused"), "{}", out.logs);
    listener.set_nonblocking(true).unwrap();
    assert!(
        listener.accept().is_err(),
        "nothing reached the host's listener"
    );
}

#[tokio::test]
async fn the_code_cannot_write_outside_its_container() {
    let outside = temp_dir("outside");
    let r = runner(|_| {}).await;
    let target = outside.join("escaped.txt");
    let code = format!(
        "import os\nfor p in [{t:?}, '/etc/escaped.txt', '../escaped.txt']:\n    try:\n        open(p, 'w').write('x')\n        print('wrote', p)\n    except OSError as e:\n        print('denied', type(e).__name__)\nos.symlink('/etc/hostname', 'link')\n",
        t = target.to_string_lossy()
    );
    let out = run(&r, "cntr_escape", &[], &code).await;
    assert!(!target.exists(), "{}", out.logs);
    assert!(!std::path::Path::new("/etc/escaped.txt").exists());
    let dir = r.work_dir("tenant-a", "cntr_escape");
    assert!(!dir.parent().unwrap().join("escaped.txt").exists());
    // A symlink the code made is never read back through.
    assert!(
        out.files.iter().all(|f| f.path != "link"),
        "{:?}",
        out.files
    );
}

#[tokio::test]
async fn a_loop_is_stopped_at_the_limit() {
    let r = runner(|c| {
        c.timeout_ms = 2_000;
        c.cpu_seconds = 30;
    })
    .await;
    let out = run(&r, "cntr_loop", &[], "while True:\n    pass\n").await;
    assert_eq!(out.ending, RunEnding::TimedOut);
    assert!(out.logs.contains("stopped after 2000 ms"), "{}", out.logs);
}

#[tokio::test]
async fn a_cpu_hog_is_killed_at_the_cpu_limit() {
    let r = runner(|c| {
        c.timeout_ms = 60_000;
        c.cpu_seconds = 1;
    })
    .await;
    let out = run(&r, "cntr_cpu", &[], "while True:\n    pass\n").await;
    assert!(
        matches!(out.ending, RunEnding::Killed(_)),
        "{:?}",
        out.ending
    );
    assert!(out.logs.contains("execution killed"), "{}", out.logs);
}

#[tokio::test]
async fn a_huge_allocation_fails_within_the_memory_limit() {
    let r = runner(|c| c.memory_mb = 256).await;
    let out = run(
        &r,
        "cntr_mem",
        &[],
        "x = bytearray(2 * 1024 * 1024 * 1024)\nprint('allocated')",
    )
    .await;
    assert!(!out.succeeded());
    assert!(out.logs.contains("MemoryError"), "{}", out.logs);
    assert!(!out.logs.contains("allocated"));
}

#[tokio::test]
async fn megabytes_of_output_are_cut() {
    let r = runner(|c| c.max_output_bytes = 10_000).await;
    let out = run(
        &r,
        "cntr_out",
        &[],
        "import sys\nsys.stdout.write('x' * 5_000_000)\nprint('end')",
    )
    .await;
    assert_eq!(out.ending, RunEnding::Exited(0));
    assert!(out.logs.len() < 11_000, "{}", out.logs.len());
    assert!(
        out.logs.contains("[output truncated: "),
        "{}",
        &out.logs[9_990..]
    );
}

#[tokio::test]
async fn tenants_and_containers_get_separate_directories() {
    let r = runner(|_| {}).await;
    let a = r.work_dir("tenant-a", "cntr_x");
    let b = r.work_dir("tenant-b", "cntr_x");
    let evil = r.work_dir("tenant-a", "../tenant-b/cntr_x");
    assert_ne!(a, b);
    assert!(evil.starts_with(r.config().work_root()));
    assert_ne!(evil.parent(), b.parent());
}
