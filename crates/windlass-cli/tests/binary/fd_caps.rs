//! Connection caps from the open-file limit: `windlass serve` under
//! `ulimit -n 1024` (`prlimit`) with more than 1,024 idle connections held
//! open still answers `/health`, and says at start which caps it derived.

use std::io::Read;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use windlass_testkit::FakeUpstream;

const IDLE: usize = 1_100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_answered_with_more_idle_connections_than_descriptors() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("prlimit is not installed: skipping");
        return;
    }
    let upstream = FakeUpstream::start().await;
    let port = crate::ports::free_port();
    let log = std::env::temp_dir().join(format!("windlass-fdcaps-{}.log", std::process::id()));
    let out = std::fs::File::create(&log).expect("log file");
    let db = std::env::temp_dir().join(format!("windlass-fdcaps-{}.db", std::process::id()));
    let mut child = Command::new("prlimit")
        .arg("--nofile=1024:1024")
        .arg(env!("CARGO_BIN_EXE_windlass"))
        .args([
            "serve",
            "--upstream",
            &upstream.base_url(),
            "--db",
            db.to_str().unwrap(),
        ])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .env_remove("WINDLASS_API_KEYS")
        .env_remove("WINDLASS_CONFIG")
        .env("RUST_LOG", "info")
        .stdout(out.try_clone().expect("log file"))
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .expect("start windlass under prlimit");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let health = format!("http://127.0.0.1:{port}/health");
    let mut up = false;
    for _ in 0..300 {
        if client.get(&health).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "windlass did not start");

    // Idle connections: connected, never a byte sent. The test process has
    // its own (higher) limit.
    let held: Vec<TcpStream> = (0..IDLE)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connect"))
        .collect();
    assert_eq!(held.len(), IDLE);

    let answer = client.get(&health).send().await;
    let status = answer.as_ref().map(|r| r.status().as_u16());
    let mut text = String::new();
    let _ = std::fs::File::open(&log).and_then(|mut f| f.read_to_string(&mut text));
    assert_eq!(status.ok(), Some(200), "{answer:?}\n{text}");
    assert!(
        child.try_wait().expect("wait").is_none(),
        "windlass exited\n{text}"
    );
    drop(held);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::File::open(&log).and_then(|mut f| f.read_to_string(&mut text));
    let _ = std::fs::remove_file(&log);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    assert!(
        text.contains("connection caps follow the open-file limit"),
        "{text}"
    );
    assert!(
        text.contains("open_file_limit=1024") || text.contains("\"open_file_limit\":1024"),
        "{text}"
    );
}
