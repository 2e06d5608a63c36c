use super::*;
use serde_json::json;

fn tool(v: Value) -> Tool {
    serde_json::from_value(v).unwrap()
}

#[test]
fn each_type_is_a_function_named_after_it() {
    let tools = [
        json!({"type": "shell"}),
        json!({"type": "local_shell"}),
        json!({"type": "apply_patch"}),
        json!({"type": "computer_use_preview", "display_width": 1024,
               "display_height": 768, "environment": "browser"}),
    ];
    let names: Vec<String> = tools
        .iter()
        .map(|t| {
            typed_definition(&tool(t.clone()), 0)
                .unwrap()
                .unwrap()
                .0
                .name
        })
        .collect();
    assert_eq!(
        names,
        [
            "shell",
            "local_shell",
            "apply_patch",
            "computer_use_preview"
        ]
    );
    let (def, _) = typed_definition(&tool(tools[3].clone()), 0)
        .unwrap()
        .unwrap();
    assert!(def.description.unwrap().contains("1024x768"));
    assert!(
        typed_definition(&tool(json!({"type": "function", "name": "f"})), 0)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_container_shell_cannot_go_to_the_client() {
    let t = tool(json!({"type": "shell", "environment": {"type": "container_auto"}}));
    let err = typed_definition(&t, 2).unwrap_err();
    assert!(
        matches!(err, EngineError::InvalidRequest { param: Some(p), .. } if p == "tools[2].environment")
    );
    let local = tool(json!({"type": "shell", "environment": {"type": "local"}}));
    assert!(typed_definition(&local, 0).unwrap().is_some());
}

#[test]
fn local_shell_arguments_make_an_exec_action() {
    let item = typed_item(
        TypedKind::LocalShell,
        "c1".into(),
        r#"{"command":["ls","-l"],"env":{"A":"1"},"workdir":"/w","timeout_ms":500}"#,
        ItemStatus::Completed,
    )
    .unwrap();
    let Item::LocalShellCall(c) = &item else {
        panic!("{item:?}")
    };
    assert_eq!(c.call_id, "c1");
    assert!(c.id.starts_with("lsh_"));
    assert_eq!(c.action.command, ["ls", "-l"]);
    assert_eq!(c.action.env.get("A").map(String::as_str), Some("1"));
    assert_eq!(c.action.working_directory.as_deref(), Some("/w"));
    assert_eq!(c.action.timeout_ms, Some(500));
    let back = upstream_call(&item).unwrap();
    assert_eq!(back.name, "local_shell");
    assert_eq!(
        serde_json::from_str::<Value>(&back.arguments).unwrap(),
        json!({"command": ["ls", "-l"], "env": {"A": "1"}, "workdir": "/w", "timeout_ms": 500})
    );
}

#[test]
fn shell_and_patch_arguments_round_trip() {
    let shell = typed_item(
        TypedKind::Shell,
        "c2".into(),
        r#"{"commands":["pwd","ls"],"timeout_ms":1000}"#,
        ItemStatus::Completed,
    )
    .unwrap();
    let Item::ShellCall(c) = &shell else { panic!() };
    assert_eq!(c.action.commands, ["pwd", "ls"]);
    let back = upstream_call(&shell).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&back.arguments).unwrap(),
        json!({"commands": ["pwd", "ls"], "timeout_ms": 1000})
    );

    let flat = r#"{"type":"update_file","path":"a.txt","diff":"@@\n-x\n+y"}"#;
    let nested = r#"{"operation":{"type":"update_file","path":"a.txt","diff":"@@\n-x\n+y"}}"#;
    for args in [flat, nested] {
        let patch = typed_item(
            TypedKind::ApplyPatch,
            "c3".into(),
            args,
            ItemStatus::Completed,
        )
        .unwrap();
        let Item::ApplyPatchCall(c) = &patch else {
            panic!()
        };
        assert_eq!(
            c.operation,
            ApplyPatchOperation::UpdateFile {
                path: "a.txt".into(),
                diff: "@@\n-x\n+y".into()
            }
        );
        let back = upstream_call(&patch).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&back.arguments).unwrap(),
            serde_json::from_str::<Value>(flat).unwrap()
        );
    }
}

#[test]
fn computer_actions_are_typed() {
    let call = typed_item(
        TypedKind::Computer,
        "c4".into(),
        r#"{"action":{"type":"click","x":10,"y":20,"button":"left"}}"#,
        ItemStatus::Completed,
    )
    .unwrap();
    let Item::ComputerCall(c) = &call else {
        panic!()
    };
    assert!(matches!(c.action, Some(ComputerAction::Click(ref a)) if a.x == 10 && a.y == 20));
    let back = upstream_call(&call).unwrap();
    assert_eq!(back.name, "computer_use_preview");
    assert_eq!(
        serde_json::from_str::<Value>(&back.arguments).unwrap()["action"]["type"],
        "click"
    );
}

#[test]
fn arguments_that_do_not_fit_are_refused() {
    let bad = [
        (TypedKind::LocalShell, "not json"),
        (TypedKind::LocalShell, r#"{"command":[]}"#),
        (TypedKind::LocalShell, r#"{"command":[1,2]}"#),
        (TypedKind::Shell, r#"{"cmd":"ls"}"#),
        (
            TypedKind::ApplyPatch,
            r#"{"type":"update_file","path":"a"}"#,
        ),
        (
            TypedKind::ApplyPatch,
            r#"{"type":"rename_file","path":"a"}"#,
        ),
        (TypedKind::Computer, r#"{"action":{"type":"teleport"}}"#),
    ];
    for (kind, args) in bad {
        assert!(
            typed_item(kind, "c".into(), args, ItemStatus::Completed).is_err(),
            "{kind:?} {args}"
        );
    }
}
