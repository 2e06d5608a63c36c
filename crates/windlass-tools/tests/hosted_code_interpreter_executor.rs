//! The code_interpreter executor against a real SQLite store (containers
//! and the Files API) and the real bubblewrap sandbox: a call gives a
//! complete `code_interpreter_call`; `auto` containers get their `file_ids`;
//! a PNG the code writes is saved in the container and downloadable; an
//! unknown container or another tenant's is a failed item.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    ContainerListRequest, ContainerStore, FileStore, HostedCall, HostedTool, Progress, SortOrder,
    ToolCall, ToolContext, ToolExecutor,
};
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::{
    CodeInterpreterCall, CodeInterpreterCallStatus, CodeInterpreterOutput, FileObject, FilePurpose,
    Item, Tool,
};
use windlass_store::SqliteStore;
use windlass_tools::hosted::code_interpreter::{
    CodeInterpreterConfig, CodeInterpreterExecutor, Runner,
};

struct Fixture {
    store: Arc<SqliteStore>,
    exec: CodeInterpreterExecutor,
    _dir: PathGuard,
}

struct PathGuard(std::path::PathBuf);
impl Drop for PathGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn fixture(name: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!("windlass-cix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = Arc::new(
        SqliteStore::open(dir.join("db.sqlite").to_str().unwrap())
            .await
            .unwrap(),
    );
    let runner = Runner::start(CodeInterpreterConfig {
        enabled: true,
        work_root: Some(dir.join("work")),
        ..Default::default()
    })
    .await;
    assert_eq!(runner.unavailable(), None);
    let exec = CodeInterpreterExecutor::new(
        runner,
        store.clone() as Arc<dyn ContainerStore>,
        Some(store.clone() as Arc<dyn FileStore>),
    );
    Fixture {
        store,
        exec,
        _dir: PathGuard(dir),
    }
}

async fn call(
    f: &Fixture,
    tenant: &str,
    tool: serde_json::Value,
    code: &str,
) -> CodeInterpreterCall {
    let tool: Tool = serde_json::from_value(tool).unwrap();
    let ctx = ToolContext {
        response_id: "resp_1".into(),
        cancel: CancellationToken::new(),
        turn: 0,
        tenant: tenant.into(),
        hosted: Some(HostedCall {
            tool: HostedTool {
                kind: HostedKind::CodeInterpreter,
                index: 0,
                tool,
            },
            item_id: "ci_1".into(),
            progress: Progress::none(),
        }),
    };
    let call = ToolCall {
        call_id: "ci_1".into(),
        name: "code_interpreter".into(),
        arguments: json!({ "code": code }).to_string(),
    };
    let result = f.exec.execute(&ctx, &call).await.unwrap();
    match result.item.map(|b| *b) {
        Some(Item::CodeInterpreterCall(c)) => c,
        other => panic!("{other:?}"),
    }
}

fn logs(c: &CodeInterpreterCall) -> String {
    c.logs()
}

#[tokio::test]
async fn an_auto_container_runs_the_code_with_its_files_and_keeps_what_it_wrote() {
    let f = fixture("auto").await;
    let upload = FileObject::new(
        "file-abc".into(),
        "numbers.txt".into(),
        6,
        FilePurpose::Assistants,
        1,
    );
    f.store
        .create_file("t1", &upload, b"1\n2\n3\n")
        .await
        .unwrap();
    let tool = json!({"type": "code_interpreter",
                      "container": {"type": "auto", "file_ids": ["file-abc"]}});
    let code = r#"
import zlib, struct
print(sum(int(l) for l in open("numbers.txt")), 6*7)
def chunk(t, d):
    c = struct.pack(">I", len(d)) + t + d
    return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
raw = b"\x00\xff\x00\x00"
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open("dot.png", "wb").write(png)
"#;
    let item = call(&f, "t1", tool.clone(), code).await;
    assert_eq!(
        item.status,
        CodeInterpreterCallStatus::Completed,
        "{}",
        logs(&item)
    );
    assert_eq!(item.id, "ci_1");
    assert_eq!(item.code.as_deref(), Some(code));
    assert_eq!(logs(&item).trim(), "6 42");
    assert!(item.container_id.starts_with("cntr_"));
    let outputs = item.outputs.clone().unwrap();
    let Some(CodeInterpreterOutput::Image(img)) = outputs.get(1) else {
        panic!("{outputs:?}")
    };
    let files = item.files.clone().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, "/mnt/data/dot.png");
    assert_eq!(files[0].mime_type.as_deref(), Some("image/png"));
    assert!(img.url.contains(&files[0].file_id));

    // The container lists the upload and the image; the image downloads.
    let listed = f
        .store
        .list_container_files(
            "t1",
            &item.container_id,
            &ContainerListRequest::first(10, SortOrder::Asc),
        )
        .await
        .unwrap()
        .unwrap();
    let mut paths: Vec<_> = listed.data.iter().map(|f| f.path.clone()).collect();
    paths.sort();
    assert_eq!(paths, ["/mnt/data/dot.png", "/mnt/data/numbers.txt"]);
    let png = f
        .store
        .container_file_content("t1", &item.container_id, &files[0].file_id)
        .await
        .unwrap()
        .unwrap();
    assert!(png.starts_with(b"\x89PNG"));

    // A second call of the same response and tool uses the same container.
    let again = call(&f, "t1", tool, "import os; print(sorted(os.listdir('.')))").await;
    assert_eq!(again.container_id, item.container_id);
    assert_eq!(logs(&again).trim(), "['dot.png', 'numbers.txt']");
}

#[tokio::test]
async fn unknown_or_foreign_containers_and_files_fail_the_call() {
    let f = fixture("unknown").await;
    let made = call(
        &f,
        "t1",
        json!({"type": "code_interpreter", "container": {"type": "auto"}}),
        "print(1)",
    )
    .await;
    assert_eq!(made.status, CodeInterpreterCallStatus::Completed);

    // t1's container by id works for t1, and is unknown to t2.
    let by_id = json!({"type": "code_interpreter", "container": made.container_id});
    let ok = call(&f, "t1", by_id.clone(), "print('mine')").await;
    assert_eq!(logs(&ok).trim(), "mine");
    let foreign = call(&f, "t2", by_id, "print('stolen')").await;
    assert_eq!(foreign.status, CodeInterpreterCallStatus::Failed);
    assert!(
        logs(&foreign).contains("No container found"),
        "{}",
        logs(&foreign)
    );

    let missing_file = call(
        &f,
        "t2",
        json!({"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["file-nope"]}}),
        "print(1)",
    )
    .await;
    assert_eq!(missing_file.status, CodeInterpreterCallStatus::Failed);
    assert!(logs(&missing_file).contains("file-nope"));
}
