//! Server-run `apply_patch` against real files: OpenAI's operations and
//! Codex's whole-patch form applied in a work directory, the
//! `apply_patch_call_output` each produces, and every way out of the
//! directory refused.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use windlass_protocol::{
    ApplyPatchCall, ApplyPatchCallStatus, ApplyPatchOperation, ApplyPatchOutputStatus,
};
use windlass_tools::hosted::apply_patch::{call_output, PatchError, PatchRoot};

fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "windlass-patch-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(dir: &std::path::Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

fn call(op: ApplyPatchOperation) -> ApplyPatchCall {
    ApplyPatchCall {
        id: Some("apc_1".into()),
        call_id: "call_1".into(),
        operation: op,
        status: ApplyPatchCallStatus::Completed,
        caller: None,
        created_by: None,
    }
}

#[tokio::test]
async fn create_update_and_delete_files() {
    let dir = temp_dir("ops");
    let root = PatchRoot::new(&dir).unwrap();

    let create = ApplyPatchOperation::CreateFile {
        path: "src/app.py".into(),
        diff: "+def greet():\n+    print(\"Hi\")\n+\n+greet()\n".into(),
    };
    let log = root.apply_operation(&create).await.unwrap();
    assert_eq!(log, "Created src/app.py");
    assert_eq!(
        read(&dir, "src/app.py"),
        "def greet():\n    print(\"Hi\")\n\ngreet()\n"
    );

    let update = ApplyPatchOperation::UpdateFile {
        path: "src/app.py".into(),
        diff: "@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello, world!\")\n".into(),
    };
    let result = root.apply_operation(&update).await;
    let out = call_output(&call(update.clone()), "apco_1".into(), &result);
    assert_eq!(out.status, ApplyPatchOutputStatus::Completed);
    assert_eq!(out.call_id, "call_1");
    assert_eq!(out.output.as_deref(), Some("Updated src/app.py"));
    assert_eq!(
        read(&dir, "src/app.py"),
        "def greet():\n    print(\"Hello, world!\")\n\ngreet()\n"
    );

    let delete = ApplyPatchOperation::DeleteFile {
        path: "src/app.py".into(),
    };
    root.apply_operation(&delete).await.unwrap();
    assert!(!dir.join("src/app.py").exists());
    // Deleting or updating what is not there fails, saying so.
    let err = root.apply_operation(&delete).await.unwrap_err();
    assert_eq!(err, PatchError::Missing("src/app.py".into()));
    let err = root.apply_operation(&update).await.unwrap_err();
    assert_eq!(err, PatchError::Missing("src/app.py".into()));
}

#[tokio::test]
async fn a_context_mismatch_is_a_failed_output_and_changes_nothing() {
    let dir = temp_dir("mismatch");
    std::fs::write(dir.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let root = PatchRoot::new(&dir).unwrap();
    let update = ApplyPatchOperation::UpdateFile {
        path: "notes.txt".into(),
        diff: "@@\n alpha\n-gamma\n+delta\n".into(),
    };
    let result = root.apply_operation(&update).await;
    assert!(
        matches!(&result, Err(PatchError::Diff { .. })),
        "{result:?}"
    );
    let out = call_output(&call(update), "apco_2".into(), &result);
    assert_eq!(out.status, ApplyPatchOutputStatus::Failed);
    let text = out.output.unwrap();
    assert!(
        text.contains("notes.txt") && text.contains("gamma"),
        "{text}"
    );
    assert_eq!(read(&dir, "notes.txt"), "alpha\nbeta\n");

    // A new file's diff must be all additions.
    let bad = ApplyPatchOperation::CreateFile {
        path: "x.txt".into(),
        diff: "+ok\nnot added\n".into(),
    };
    assert!(matches!(
        root.apply_operation(&bad).await,
        Err(PatchError::Diff { .. })
    ));
    assert!(!dir.join("x.txt").exists());
}

#[tokio::test]
async fn paths_cannot_leave_the_work_dir() {
    let dir = temp_dir("escape");
    let outside = temp_dir("outside");
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
    let root = PatchRoot::new(&dir).unwrap();

    let target = outside.join("secret.txt").display().to_string();
    for path in [
        "../outside/secret.txt".to_owned(),
        target.clone(),
        "link/secret.txt".to_owned(),
        "link/new.txt".to_owned(),
    ] {
        for op in [
            ApplyPatchOperation::CreateFile {
                path: path.clone(),
                diff: "+pwned\n".into(),
            },
            ApplyPatchOperation::UpdateFile {
                path: path.clone(),
                diff: "@@\n-secret\n+pwned\n".into(),
            },
            ApplyPatchOperation::DeleteFile { path: path.clone() },
        ] {
            let r = root.apply_operation(&op).await;
            assert!(matches!(r, Err(PatchError::Path(_))), "{path}: {r:?}");
        }
    }
    assert_eq!(read(&outside, "secret.txt"), "secret\n");
    assert!(!outside.join("new.txt").exists());
}

#[tokio::test]
async fn a_whole_patch_with_a_move() {
    let dir = temp_dir("envelope");
    std::fs::write(dir.join("app.py"), "print(\"Hi\")\n").unwrap();
    std::fs::write(dir.join("obsolete.txt"), "old\n").unwrap();
    let root = PatchRoot::new(&dir).unwrap();
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n\
                 *** Update File: app.py\n*** Move to: src/main.py\n@@\n\
                 -print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete File: obsolete.txt\n\
                 *** End Patch\n";
    let log = root.apply_patch(patch).await.unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert_eq!(read(&dir, "hello.txt"), "Hello world\n");
    assert_eq!(read(&dir, "src/main.py"), "print(\"Hello, world!\")\n");
    assert!(!dir.join("app.py").exists());
    assert!(!dir.join("obsolete.txt").exists());

    // A failure after a success says what was already applied.
    let partial = "*** Begin Patch\n*** Add File: created.txt\n+x\n\
                   *** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch";
    let err = root.apply_patch(partial).await.unwrap_err().to_string();
    assert!(
        err.contains("missing.txt") && err.contains("Created created.txt"),
        "{err}"
    );
    let err = root.apply_patch("*** Add File: a\n+x").await.unwrap_err();
    assert!(matches!(err, PatchError::Envelope(_)));
}
