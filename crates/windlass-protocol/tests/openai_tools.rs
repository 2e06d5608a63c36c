//! OpenAI's other tools on the wire: `web_search` (and its preview and dated
//! types), `code_interpreter`, `shell`, `local_shell`, `apply_patch`,
//! `computer_use_preview`, `image_generation`, their items, their stream
//! events, `include`, and the Containers API objects.
//!
//! Every JSON value here was written from the type definitions of the
//! official OpenAI Python SDK (`openai/types/responses/*.py`,
//! `openai/types/container*.py`): each must parse into its typed variant (not
//! `Unknown`) and serialize back to exactly the same JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use serde_json::{json, Value};
use windlass_protocol::include::{present, HOSTED_INCLUDES};
use windlass_protocol::*;

fn round_trip<T>(v: Value) -> T
where
    T: serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let parsed: T =
        serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v} does not parse: {e}"));
    let back = serde_json::to_value(&parsed).unwrap();
    assert_eq!(back, v, "{parsed:?} serialized differently");
    parsed
}

fn err_of<T: serde::de::DeserializeOwned + std::fmt::Debug>(v: Value) -> String {
    match serde_json::from_value::<T>(v.clone()) {
        Ok(x) => panic!("expected an error for {v}, got {x:?}"),
        Err(e) => e.to_string(),
    }
}

// ----------------------------------------------------------------- tools ----

#[test]
fn web_search_types_and_dated_aliases_are_typed() {
    let full = json!({
        "type": "web_search",
        "filters": {"allowed_domains": ["pubmed.ncbi.nlm.nih.gov", "example.org"]},
        "search_context_size": "high",
        "user_location": {
            "type": "approximate", "city": "San Francisco", "country": "US",
            "region": "California", "timezone": "America/Los_Angeles"
        },
        "external_web_access": false
    });
    let tool: Tool = round_trip(full);
    let Tool::WebSearch(ws) = &tool else {
        panic!("{tool:?}")
    };
    assert_eq!(ws.allowed_domains().len(), 2);
    assert_eq!(ws.context_size(), SearchContextSize::High);
    assert_eq!(
        ws.user_location.as_ref().unwrap().country.as_deref(),
        Some("US")
    );
    assert!(tool.is_hosted());

    // Each alias keeps its own spelling on the way back out.
    for t in [
        "web_search",
        "web_search_2025_08_26",
        "web_search_preview",
        "web_search_preview_2025_03_11",
    ] {
        let tool: Tool = round_trip(json!({"type": t}));
        assert!(!matches!(tool, Tool::Unknown(_)), "{t}");
        assert_eq!(tool.type_name(), t);
        let ws = tool.web_search().unwrap_or_else(|| panic!("{t}"));
        assert!(ws.allowed_domains().is_empty());
        assert_eq!(ws.context_size(), SearchContextSize::Medium);
    }

    let preview: Tool = round_trip(json!({
        "type": "web_search_preview_2025_03_11",
        "search_content_types": ["text", "image"],
        "search_context_size": "low",
        "user_location": {"type": "approximate", "country": "DE"}
    }));
    assert!(matches!(preview, Tool::WebSearchPreview20250311(_)));
    assert!(Tool::Function(FunctionTool {
        name: "f".into(),
        description: None,
        parameters: None,
        strict: None
    })
    .web_search()
    .is_none());
}

#[test]
fn web_search_bad_fields_are_named() {
    let e = err_of::<Tool>(json!({"type": "web_search", "search_context_size": "huge"}));
    assert!(e.contains("web_search") && e.contains("huge"), "{e}");
    let e = err_of::<Tool>(json!({"type": "web_search", "filters": {"allowed_domains": "x"}}));
    assert!(e.contains("web_search"), "{e}");
}

#[test]
fn code_interpreter_container_forms() {
    let by_id: Tool = round_trip(json!({"type": "code_interpreter", "container": "cntr_abc"}));
    let Tool::CodeInterpreter(ci) = by_id else {
        panic!()
    };
    assert_eq!(
        ci.container,
        CodeInterpreterContainer::Id("cntr_abc".into())
    );

    let auto: Tool = round_trip(json!({
        "type": "code_interpreter",
        "container": {"type": "auto", "file_ids": ["file-1", "file-2"], "memory_limit": "4g",
                      "network_policy": {"type": "disabled"}},
        "allowed_callers": ["direct"]
    }));
    let Tool::CodeInterpreter(ci) = auto else {
        panic!()
    };
    let CodeInterpreterContainer::Auto(settings) = &ci.container else {
        panic!("{ci:?}")
    };
    assert_eq!(settings.file_ids.as_ref().unwrap().len(), 2);
    assert_eq!(settings.memory_limit.unwrap().megabytes(), 4096);
    assert_eq!(settings.network_policy, Some(NetworkPolicy::Disabled));

    // The Agents SDK's CodeInterpreterTool default: auto with no files.
    let bare: Tool = round_trip(json!({"type": "code_interpreter", "container": {"type": "auto"}}));
    assert!(
        matches!(bare, Tool::CodeInterpreter(CodeInterpreterTool { container: CodeInterpreterContainer::Auto(s), .. }) if s == ContainerSettings::default())
    );

    for bad in [
        json!({"type": "code_interpreter"}),
        json!({"type": "code_interpreter", "container": 7}),
        json!({"type": "code_interpreter", "container": {"type": "manual"}}),
        json!({"type": "code_interpreter", "container": {"type": "auto", "memory_limit": "2g"}}),
    ] {
        let e = err_of::<Tool>(bad.clone());
        assert!(e.contains("code_interpreter"), "{bad}: {e}");
    }
}

#[test]
fn domain_secrets_are_redacted_in_debug() {
    let tool: Tool = round_trip(json!({
        "type": "code_interpreter",
        "container": {"type": "auto", "network_policy": {
            "type": "allowlist", "allowed_domains": ["pypi.org"],
            "domain_secrets": [{"domain": "pypi.org", "name": "TOKEN", "value": "s3cr3t-value"}]
        }}
    }));
    let debug = format!("{tool:?}");
    assert!(!debug.contains("s3cr3t-value"), "{debug}");
    assert!(
        debug.contains("TOKEN") && debug.contains("[redacted]"),
        "{debug}"
    );
}

#[test]
fn client_run_tool_definitions() {
    let shell: Tool = round_trip(json!({"type": "shell"}));
    assert!(matches!(
        shell,
        Tool::Shell(ShellTool {
            environment: None,
            ..
        })
    ));
    for env in [
        json!({"type": "local", "skills": [{"name": "s", "description": "d", "path": "/x"}]}),
        json!({"type": "container_auto", "file_ids": ["file-1"], "memory_limit": "1g"}),
        json!({"type": "container_reference", "container_id": "cntr_1"}),
    ] {
        let tool: Tool = round_trip(json!({"type": "shell", "environment": env.clone()}));
        let Tool::Shell(ShellTool {
            environment: Some(e),
            ..
        }) = tool
        else {
            panic!("{env}")
        };
        assert!(!matches!(e, ShellEnvironment::Unknown(_)), "{env}");
    }

    assert!(matches!(
        round_trip::<Tool>(json!({"type": "local_shell"})),
        Tool::LocalShell(_)
    ));
    assert!(matches!(
        round_trip::<Tool>(json!({"type": "apply_patch", "allowed_callers": ["direct", "programmatic"]})),
        Tool::ApplyPatch(ApplyPatchTool { allowed_callers: Some(c) }) if c == vec![AllowedCaller::Direct, AllowedCaller::Programmatic]
    ));
    let computer: Tool = round_trip(json!({
        "type": "computer_use_preview", "display_width": 1024, "display_height": 768,
        "environment": "browser"
    }));
    assert!(matches!(
        computer,
        Tool::ComputerUsePreview(ComputerUsePreviewTool {
            display_width: 1024,
            display_height: 768,
            environment: ComputerEnvironment::Browser
        })
    ));
    let e = err_of::<Tool>(json!({"type": "computer_use_preview", "display_width": 1}));
    assert!(e.contains("display_height"), "{e}");
}

#[test]
fn image_generation_tool() {
    let tool: Tool = round_trip(json!({
        "type": "image_generation", "model": "gpt-image-1", "size": "1536x864",
        "quality": "high", "output_format": "webp", "output_compression": 80,
        "background": "transparent", "partial_images": 2, "moderation": "low",
        "action": "generate", "input_fidelity": "high",
        "input_image_mask": {"file_id": "file-m"}
    }));
    assert!(matches!(tool, Tool::ImageGeneration(t) if t.size.as_deref() == Some("1536x864")));
}

#[test]
fn every_openai_tool_type_is_hosted_typed_or_not() {
    for t in HOSTED_TOOL_TYPES {
        let v = match t {
            "code_interpreter" => json!({"type": t, "container": "cntr_x"}),
            "computer_use_preview" => json!({"type": t, "display_width": 1,
                                             "display_height": 1, "environment": "linux"}),
            "file_search" => json!({"type": t, "vector_store_ids": []}),
            _ => json!({"type": t}),
        };
        let tool: Tool = serde_json::from_value(v).unwrap();
        assert!(tool.is_hosted(), "{t}");
    }
    let f: Tool = serde_json::from_value(json!({"type": "function", "name": "f"})).unwrap();
    assert!(!f.is_hosted());
}

// ----------------------------------------------------------------- items ----

#[test]
fn web_search_call_actions() {
    let search: Item = round_trip(json!({
        "type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "rust async", "queries": ["rust async"],
                   "sources": [{"type": "url", "url": "https://tokio.rs/"}]}
    }));
    assert_eq!(search.id(), Some("ws_1"));
    assert!(search.is_openai_tool_item());
    let Item::WebSearchCall(c) = &search else {
        panic!()
    };
    let WebSearchAction::Search(s) = &c.action else {
        panic!()
    };
    assert_eq!(s.sources.as_ref().unwrap()[0].url, "https://tokio.rs/");

    let open: Item = round_trip(json!({
        "type": "web_search_call", "id": "ws_2", "status": "completed",
        "action": {"type": "open_page", "url": "https://tokio.rs/tutorial"}
    }));
    assert!(matches!(
        &open,
        Item::WebSearchCall(WebSearchCall {
            action: WebSearchAction::OpenPage(_),
            ..
        })
    ));
    let find: Item = round_trip(json!({
        "type": "web_search_call", "id": "ws_3", "status": "failed",
        "action": {"type": "find_in_page", "url": "https://tokio.rs/", "pattern": "spawn"}
    }));
    assert!(matches!(
        &find,
        Item::WebSearchCall(WebSearchCall {
            action: WebSearchAction::FindInPage(_),
            status: WebSearchCallStatus::Failed,
            ..
        })
    ));
    // An action type from the future is kept, not refused.
    let future: Item = round_trip(json!({
        "type": "web_search_call", "id": "ws_4", "status": "completed",
        "action": {"type": "summarize", "x": 1}
    }));
    assert!(matches!(
        &future,
        Item::WebSearchCall(WebSearchCall {
            action: WebSearchAction::Unknown(_),
            ..
        })
    ));

    let e = err_of::<Item>(
        json!({"type": "web_search_call", "id": "ws", "status": "done",
                                  "action": {"type": "search"}}),
    );
    assert!(e.contains("web_search_call"), "{e}");
}

#[test]
fn web_search_present_cuts_sources_and_page_text() {
    let stored = json!({
        "type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "q",
                   "sources": [{"type": "url", "url": "https://a.example/", "title": "A",
                                "snippet": "about a"}]}
    });
    let mut item: Item = round_trip(stored.clone());
    present(&mut item, &[]);
    let v = serde_json::to_value(&item).unwrap();
    assert!(v["action"].get("sources").is_none(), "{v}");
    assert_eq!(v["action"]["query"], "q");

    let mut item: Item = serde_json::from_value(stored.clone()).unwrap();
    present(&mut item, &[INCLUDE_WEB_SEARCH_SOURCES.to_owned()]);
    assert_eq!(serde_json::to_value(&item).unwrap(), stored);

    let mut page: Item = round_trip(json!({
        "type": "web_search_call", "id": "ws_2", "status": "completed",
        "action": {"type": "open_page", "url": "https://a.example/", "content": "page text"}
    }));
    present(&mut page, &HOSTED_INCLUDES.map(String::from));
    let v = serde_json::to_value(&page).unwrap();
    assert_eq!(
        v["action"],
        json!({"type": "open_page", "url": "https://a.example/"})
    );
}

#[test]
fn code_interpreter_call_and_its_outputs() {
    let stored = json!({
        "type": "code_interpreter_call", "id": "ci_1", "status": "completed",
        "code": "print(6*7)", "container_id": "cntr_1",
        "outputs": [{"type": "logs", "logs": "42\n"},
                    {"type": "image", "url": "https://example.org/plot.png"}],
        "files": [{"file_id": "cfile_1", "path": "/mnt/data/plot.png", "bytes": 120,
                   "mime_type": "image/png"}]
    });
    let item: Item = round_trip(stored.clone());
    let Item::CodeInterpreterCall(c) = &item else {
        panic!()
    };
    assert_eq!(c.logs(), "42\n");

    let mut cut = item.clone();
    present(&mut cut, &[]);
    let v = serde_json::to_value(&cut).unwrap();
    // OpenAI answers `outputs: null` when not included.
    assert_eq!(v["outputs"], Value::Null);
    assert!(v.get("files").is_none());
    assert_eq!(v["code"], "print(6*7)");

    let mut kept = item;
    present(&mut kept, &[INCLUDE_CODE_INTERPRETER_OUTPUTS.to_owned()]);
    assert_eq!(serde_json::to_value(&kept).unwrap(), stored);

    // In progress, as streamed: code and outputs null.
    let _: Item = round_trip(json!({
        "type": "code_interpreter_call", "id": "ci_2", "status": "interpreting",
        "code": null, "container_id": "cntr_1", "outputs": null
    }));
}

#[test]
fn shell_items() {
    let call: Item = round_trip(json!({
        "type": "shell_call", "id": "sh_1", "call_id": "call_1", "status": "completed",
        "action": {"commands": ["ls -la", "cat README.md"], "timeout_ms": 5000,
                   "max_output_length": 4096},
        "environment": {"type": "local"},
        "caller": {"type": "direct"},
        "created_by": "resp_1"
    }));
    assert!(call.is_openai_tool_item());
    let out: Item = round_trip(json!({
        "type": "shell_call_output", "call_id": "call_1",
        "output": [
            {"stdout": "a\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
            {"stdout": "", "stderr": "slow", "outcome": {"type": "timeout"}}
        ],
        "max_output_length": 4096,
        "caller": {"type": "program", "caller_id": "prog_1"}
    }));
    let Item::ShellCallOutput(o) = &out else {
        panic!()
    };
    assert_eq!(o.output[0].outcome, ShellOutcome::Exit { exit_code: 0 });
    assert_eq!(o.output[1].outcome, ShellOutcome::Timeout);
    assert_eq!(out.id(), None);

    let local: Item = round_trip(json!({
        "type": "local_shell_call", "id": "lsh_1", "call_id": "call_2", "status": "in_progress",
        "action": {"type": "exec", "command": ["bash", "-lc", "ls"], "env": {"A": "1"},
                   "timeout_ms": 1000, "working_directory": "/repo", "user": "me"}
    }));
    let Item::LocalShellCall(l) = &local else {
        panic!()
    };
    assert_eq!(l.action.command.len(), 3);
    let e = err_of::<Item>(json!({
        "type": "local_shell_call", "id": "x", "call_id": "c", "status": "completed",
        "action": {"type": "spawn", "command": ["ls"], "env": {}}
    }));
    assert!(e.contains("local_shell_call"), "{e}");

    // OpenAI's SDK names the answered call by `id`; `call_id` is read too.
    let by_id: Item = round_trip(json!({
        "type": "local_shell_call_output", "id": "call_2", "output": "{\"output\":\"x\"}"
    }));
    let Item::LocalShellCallOutput(o) = &by_id else {
        panic!()
    };
    assert_eq!(o.answered_call(), Some("call_2"));
    let by_call: Item = round_trip(json!({
        "type": "local_shell_call_output", "call_id": "call_3", "output": "{}",
        "status": "completed"
    }));
    let Item::LocalShellCallOutput(o) = &by_call else {
        panic!()
    };
    assert_eq!(o.answered_call(), Some("call_3"));
}

#[test]
fn apply_patch_items() {
    for op in [
        json!({"type": "create_file", "path": "hello.txt", "diff": "+Hello\n"}),
        json!({"type": "update_file", "path": "src/app.py",
               "diff": "@@ def greet():\n-print(\"Hi\")\n+print(\"Hello\")\n"}),
        json!({"type": "delete_file", "path": "old.txt"}),
    ] {
        let item: Item = round_trip(json!({
            "type": "apply_patch_call", "id": "apc_1", "call_id": "call_1",
            "status": "completed", "operation": op.clone()
        }));
        let Item::ApplyPatchCall(c) = item else {
            panic!()
        };
        assert_eq!(c.operation.path(), op["path"].as_str().unwrap());
    }
    let out: Item = round_trip(json!({
        "type": "apply_patch_call_output", "call_id": "call_1", "status": "failed",
        "output": "context not found"
    }));
    assert!(matches!(
        out,
        Item::ApplyPatchCallOutput(ApplyPatchCallOutput {
            status: ApplyPatchOutputStatus::Failed,
            ..
        })
    ));
    let e = err_of::<Item>(json!({
        "type": "apply_patch_call", "call_id": "c", "status": "completed",
        "operation": {"type": "rename_file", "path": "a"}
    }));
    assert!(e.contains("apply_patch_call"), "{e}");
}

#[test]
fn computer_items() {
    let actions = [
        json!({"type": "click", "button": "left", "x": 10, "y": 20}),
        json!({"type": "double_click", "x": 1, "y": 2, "keys": ["shift"]}),
        json!({"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}),
        json!({"type": "keypress", "keys": ["ctrl", "c"]}),
        json!({"type": "move", "x": 5, "y": 6}),
        json!({"type": "screenshot"}),
        json!({"type": "scroll", "x": 0, "y": 0, "scroll_x": 0, "scroll_y": 300}),
        json!({"type": "type", "text": "hello"}),
        json!({"type": "wait"}),
    ];
    for a in &actions {
        let item: Item = round_trip(json!({
            "type": "computer_call", "id": "cu_1", "call_id": "call_1",
            "status": "completed", "pending_safety_checks": [], "action": a.clone()
        }));
        let Item::ComputerCall(c) = item else {
            panic!()
        };
        assert!(
            !matches!(c.action, Some(ComputerAction::Unknown(_)) | None),
            "{a}"
        );
    }
    let batch: Item = round_trip(json!({
        "type": "computer_call", "id": "cu_2", "call_id": "call_2", "status": "completed",
        "pending_safety_checks": [{"id": "sc_1", "code": "malicious_instructions",
                                    "message": "careful"}],
        "actions": actions
    }));
    assert!(matches!(&batch, Item::ComputerCall(c) if c.actions.as_ref().unwrap().len() == 9));

    let out: Item = round_trip(json!({
        "type": "computer_call_output", "call_id": "call_1",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"},
        "acknowledged_safety_checks": [{"id": "sc_1"}], "status": "completed"
    }));
    assert!(matches!(out, Item::ComputerCallOutput(_)));
    let e = err_of::<Item>(json!({
        "type": "computer_call_output", "call_id": "c",
        "output": {"type": "screenshot", "image_url": "x"}
    }));
    assert!(e.contains("computer_call_output"), "{e}");
}

#[test]
fn image_generation_call() {
    let item: Item = round_trip(json!({
        "type": "image_generation_call", "id": "ig_1", "status": "completed",
        "result": "iVBORw0KGgo="
    }));
    assert_eq!(item.id(), Some("ig_1"));
    let _: Item = round_trip(json!({
        "type": "image_generation_call", "id": "ig_2", "status": "generating", "result": null
    }));
}

#[test]
fn function_items_are_not_openai_tool_items() {
    let f: Item = serde_json::from_value(json!({
        "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"
    }))
    .unwrap();
    assert!(!f.is_openai_tool_item());
    assert!(!Item::user_text("hi").is_openai_tool_item());
}

// ---------------------------------------------------------------- events ----

#[test]
fn hosted_tool_stream_events() {
    for (v, ty) in [
        (
            json!({"type": "response.web_search_call.in_progress", "item_id": "ws_1",
                "output_index": 0, "sequence_number": 3}),
            "response.web_search_call.in_progress",
        ),
        (
            json!({"type": "response.web_search_call.searching", "item_id": "ws_1",
                "output_index": 0, "sequence_number": 4}),
            "response.web_search_call.searching",
        ),
        (
            json!({"type": "response.web_search_call.completed", "item_id": "ws_1",
                "output_index": 0, "sequence_number": 5}),
            "response.web_search_call.completed",
        ),
        (
            json!({"type": "response.code_interpreter_call.in_progress", "item_id": "ci_1",
                "output_index": 1, "sequence_number": 6}),
            "response.code_interpreter_call.in_progress",
        ),
        (
            json!({"type": "response.code_interpreter_call.interpreting", "item_id": "ci_1",
                "output_index": 1, "sequence_number": 7}),
            "response.code_interpreter_call.interpreting",
        ),
        (
            json!({"type": "response.code_interpreter_call.completed", "item_id": "ci_1",
                "output_index": 1, "sequence_number": 8}),
            "response.code_interpreter_call.completed",
        ),
        (
            json!({"type": "response.code_interpreter_call_code.delta", "item_id": "ci_1",
                "output_index": 1, "delta": "print(", "sequence_number": 9}),
            "response.code_interpreter_call_code.delta",
        ),
        (
            json!({"type": "response.code_interpreter_call_code.done", "item_id": "ci_1",
                "output_index": 1, "code": "print(6*7)", "sequence_number": 10}),
            "response.code_interpreter_call_code.done",
        ),
    ] {
        let ev: StreamEvent = round_trip(v);
        assert_eq!(ev.event_type(), ty);
        assert!(!matches!(ev.data, EventData::Unknown(_)), "{ty}");
    }
}

#[test]
fn url_citation_annotation() {
    let a: Annotation = round_trip(json!({
        "type": "url_citation", "url": "https://tokio.rs/", "title": "Tokio",
        "start_index": 10, "end_index": 42
    }));
    assert!(matches!(a, Annotation::UrlCitation(c) if c.end_index == 42));
}

// ------------------------------------------------------------ containers ----

#[test]
fn container_objects() {
    let c: Container = round_trip(json!({
        "id": "cntr_1", "object": "container", "created_at": 1_700_000_000u64, "name": "scratch",
        "status": "running", "expires_after": {"anchor": "last_active_at", "minutes": 20},
        "last_active_at": 1_700_000_600u64, "memory_limit": "1g"
    }));
    assert_eq!(c.expires_at(), Some(1_700_000_600 + 20 * 60));
    let never: Container = round_trip(json!({
        "id": "cntr_2", "object": "container", "created_at": 5, "name": "n", "status": "expired"
    }));
    assert_eq!(never.expires_at(), None);

    let f: ContainerFile = round_trip(json!({
        "id": "cfile_1", "object": "container.file", "bytes": 42, "container_id": "cntr_1",
        "created_at": 9, "path": "/mnt/data/out.png", "source": "assistant"
    }));
    assert_eq!(f.source, ContainerFileSource::Assistant);

    let req: CreateContainerRequest = round_trip(json!({
        "name": "scratch", "file_ids": ["file-1"],
        "expires_after": {"anchor": "last_active_at", "minutes": 5}, "memory_limit": "4g"
    }));
    assert_eq!(req.expires_after.unwrap().minutes, 5);
    let e = err_of::<CreateContainerRequest>(json!({"name": "x", "color": "red"}));
    assert!(e.contains("color"), "{e}");
    let e = err_of::<CreateContainerRequest>(json!({"file_ids": []}));
    assert!(e.contains("name"), "{e}");
}

#[test]
fn request_with_every_openai_tool_round_trips() {
    let req: CreateResponseRequest = round_trip(json!({
        "model": "m",
        "input": "hi",
        "include": ["web_search_call.action.sources", "code_interpreter_call.outputs"],
        "tools": [
            {"type": "web_search"},
            {"type": "code_interpreter", "container": {"type": "auto"}},
            {"type": "shell", "environment": {"type": "local"}},
            {"type": "local_shell"},
            {"type": "apply_patch"},
            {"type": "computer_use_preview", "display_width": 800, "display_height": 600,
             "environment": "ubuntu"},
            {"type": "image_generation"}
        ]
    }));
    assert!(req.extra.is_empty());
    let tools = req.tools.unwrap();
    assert!(tools
        .iter()
        .all(|t| t.is_hosted() && !matches!(t, Tool::Unknown(_))));
}
