//! Wire types of files, vector stores and `file_search`: OpenAI's shapes
//! parse into typed values and serialize back unchanged; filters evaluate
//! as documented; bad values are refused by name.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use serde_json::{json, Value};
use windlass_protocol::ids::{new_file_id, new_id, prefix};
use windlass_protocol::*;

fn round_trip<T>(v: Value) -> T
where
    T: serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let typed: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
    assert_eq!(serde_json::to_value(&typed).unwrap(), v, "{typed:?}");
    typed
}

fn attrs(v: Value) -> Attributes {
    serde_json::from_value(v).unwrap()
}

fn filter(v: Value) -> Filter {
    serde_json::from_value(v).unwrap()
}

#[test]
fn file_object_and_list() {
    let file: FileObject = round_trip(json!({
        "id": "file-abc", "object": "file", "bytes": 120, "created_at": 1700000000,
        "filename": "notes.md", "purpose": "assistants", "status": "processed",
        "expires_at": null
    }));
    assert_eq!(file.purpose, FilePurpose::Assistants);
    let page: ListPage<FileObject> = round_trip(json!({
        "object": "list", "data": [serde_json::to_value(&file).unwrap()],
        "first_id": "file-abc", "last_id": "file-abc", "has_more": false
    }));
    assert_eq!(page.data.len(), 1);
    let built = ListPage::new(vec![file.clone()], false, |f| &f.id);
    assert_eq!(built, page);
    assert_eq!(FilePurpose::parse("fine-tune"), Some(FilePurpose::FineTune));
    assert_eq!(
        FilePurpose::parse("assistants_output").map(FilePurpose::as_str),
        Some("assistants_output")
    );
    assert_eq!(FilePurpose::parse("nope"), None);
    assert!(!FilePurpose::UPLOADABLE.contains(&FilePurpose::BatchOutput));
    round_trip::<Deleted>(json!({"id": "file-abc", "object": "file", "deleted": true}));
}

#[test]
fn vector_store_object() {
    let vs: VectorStore = round_trip(json!({
        "id": "vs_1", "object": "vector_store", "created_at": 1, "name": "docs",
        "usage_bytes": 2048,
        "file_counts": {"in_progress": 1, "completed": 2, "failed": 0, "cancelled": 0, "total": 3},
        "status": "in_progress",
        "expires_after": {"anchor": "last_active_at", "days": 7},
        "expires_at": 604801, "last_active_at": 1, "metadata": {"team": "a"},
        "search_mode": "hybrid", "embedding_model": "all-minilm-l6-v2"
    }));
    assert_eq!(vs.file_counts.total, 3);
    assert_eq!(vs.search_mode, SearchMode::Hybrid);
    // What OpenAI sends (no extensions) parses too, as keyword-only.
    let plain: VectorStore = serde_json::from_value(json!({
        "id": "vs_1", "object": "vector_store", "created_at": 1, "name": "docs",
        "usage_bytes": 0, "status": "completed", "metadata": null,
        "file_counts": {"in_progress": 0, "completed": 0, "failed": 0, "cancelled": 0, "total": 0}
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plain.search_mode, SearchMode::Keyword);
    let described: VectorStore = round_trip(json!({
        "id": "vs_2", "object": "vector_store", "created_at": 1, "name": "docs",
        "description": "the team's notes", "usage_bytes": 0,
        "file_counts": {"in_progress": 0, "completed": 0, "failed": 0, "cancelled": 0, "total": 0},
        "status": "expired", "expires_after": null, "expires_at": 9, "last_active_at": 1,
        "metadata": {}, "search_mode": "keyword"
    }));
    assert_eq!(described.description.as_deref(), Some("the team's notes"));
}

#[test]
fn missing_fields_are_refused() {
    let err = serde_json::from_value::<VectorStore>(json!({"id": "vs_1"})).unwrap_err();
    assert!(err.to_string().contains("missing field"), "{err}");
}

#[test]
fn vector_store_file_and_batch() {
    let f: VectorStoreFile = round_trip(json!({
        "id": "file-1", "object": "vector_store.file", "created_at": 5,
        "vector_store_id": "vs_1", "status": "failed", "usage_bytes": 0,
        "last_error": {"code": "unsupported_file", "message": "type .exe is not supported"},
        "attributes": {"author": "Ada", "year": 1843, "draft": false},
        "chunking_strategy": {"type": "static", "static": {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}}
    }));
    assert_eq!(f.last_error.unwrap().code, LastErrorCode::UnsupportedFile);
    assert_eq!(
        f.attributes.unwrap()["year"],
        AttributeValue::Number(1843.into())
    );
    assert_eq!(
        VectorStoreFileStatus::parse("cancelled"),
        Some(VectorStoreFileStatus::Cancelled)
    );
    let b: VectorStoreFileBatch = round_trip(json!({
        "id": "vsfb_1", "object": "vector_store.files_batch", "created_at": 5,
        "vector_store_id": "vs_1", "status": "in_progress",
        "file_counts": {"in_progress": 2, "completed": 0, "failed": 0, "cancelled": 0, "total": 2}
    }));
    assert_eq!(b.file_counts.in_progress, 2);
}

#[test]
fn chunking_strategies() {
    let auto: ChunkingStrategy = round_trip(json!({"type": "auto"}));
    assert_eq!(auto.resolve(), StaticChunking::AUTO);
    assert_eq!(
        serde_json::to_value(auto.resolved()).unwrap(),
        json!({"type": "static", "static": {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}})
    );
    let ok = |max, overlap| {
        StaticChunking {
            max_chunk_size_tokens: max,
            chunk_overlap_tokens: overlap,
        }
        .check()
    };
    assert!(ok(100, 50).is_ok() && ok(4096, 2048).is_ok() && ok(800, 0).is_ok());
    assert!(ok(99, 0).unwrap_err().contains("between 100 and 4096"));
    assert!(ok(4097, 0).is_err());
    assert!(ok(800, 401).unwrap_err().contains("half"));
    assert!(ChunkingStrategy::Other.check().is_err());
    let err = serde_json::from_value::<ChunkingStrategy>(json!({"type": "static"})).unwrap_err();
    assert!(err.to_string().contains("static"), "{err}");
}

#[test]
fn batch_requests_expand_per_file() {
    let req: CreateFileBatchRequest = serde_json::from_value(json!({
        "file_ids": ["file-1", "file-2"], "attributes": {"k": "v"},
        "chunking_strategy": {"type": "auto"}
    }))
    .unwrap();
    let files = req.into_files().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[1].file_id, "file-2");
    assert_eq!(files[1].attributes, Some(attrs(json!({"k": "v"}))));
    let both: CreateFileBatchRequest = serde_json::from_value(json!({
        "file_ids": ["file-1"], "files": [{"file_id": "file-2"}]
    }))
    .unwrap();
    assert!(both
        .into_files()
        .unwrap_err()
        .contains("mutually exclusive"));
    assert!(CreateFileBatchRequest::default().into_files().is_err());
}

#[test]
fn update_request_tells_null_from_absent() {
    let absent: UpdateVectorStoreRequest = serde_json::from_value(json!({"name": "x"})).unwrap();
    assert_eq!(absent.expires_after, None);
    let null: UpdateVectorStoreRequest =
        serde_json::from_value(json!({"expires_after": null})).unwrap();
    assert_eq!(null.expires_after, Some(None));
    let set: UpdateVectorStoreRequest =
        serde_json::from_value(json!({"expires_after": {"anchor": "last_active_at", "days": 2}}))
            .unwrap();
    assert_eq!(set.expires_after.unwrap().unwrap().days, 2);
}

#[test]
fn search_request_and_page() {
    let one: SearchRequest = round_trip(json!({
        "query": "what is the refund policy?", "max_num_results": 5,
        "ranking_options": {"ranker": "auto", "score_threshold": 0.2},
        "filters": {"type": "and", "filters": [
            {"type": "eq", "key": "lang", "value": "en"},
            {"type": "in", "key": "year", "value": [2023, 2024]}
        ]},
        "rewrite_query": false
    }));
    assert_eq!(one.query.queries(), vec!["what is the refund policy?"]);
    let many: SearchRequest = round_trip(json!({"query": ["a", "b"], "filters": null,
        "max_num_results": null, "ranking_options": null, "rewrite_query": null}));
    assert_eq!(many.query.queries().len(), 2);
    let page: SearchResultsPage = round_trip(json!({
        "object": "vector_store.search_results.page", "search_query": ["refunds"],
        "data": [{"file_id": "file-1", "filename": "policy.md", "score": 0.9,
                  "attributes": {"lang": "en"},
                  "content": [{"type": "text", "text": "Refunds within 30 days."}]}],
        "has_more": false, "next_page": null
    }));
    assert_eq!(
        page.data[0].content[0],
        TextContent::new("Refunds within 30 days.")
    );
    round_trip::<FileContentPage>(json!({
        "object": "vector_store.file_content.page",
        "data": [{"type": "text", "text": "chunk one"}], "has_more": false, "next_page": null
    }));
    for ranker in ["none", "auto", "default-2024-11-15"] {
        round_trip::<RankingOptions>(json!({"ranker": ranker}));
    }
    let err = serde_json::from_value::<RankingOptions>(json!({"ranker": "best"})).unwrap_err();
    assert!(err.to_string().contains("best"), "{err}");
}

#[test]
fn file_search_tool_is_typed() {
    let tool: Tool = round_trip(json!({
        "type": "file_search", "vector_store_ids": ["vs_1"], "max_num_results": 3,
        "filters": {"type": "gte", "key": "year", "value": 2020},
        "ranking_options": {"ranker": "auto", "score_threshold": 0.5,
                            "hybrid_search": {"embedding_weight": 0.7, "text_weight": 0.3}}
    }));
    let Tool::FileSearch(fs) = &tool else {
        panic!("{tool:?}")
    };
    assert_eq!(fs.vector_store_ids, vec!["vs_1"]);
    assert_eq!(
        fs.ranking_options
            .as_ref()
            .unwrap()
            .hybrid_search
            .unwrap()
            .text_weight,
        0.3
    );
    // One of OpenAI's own tool types: the gateway decides whether it runs it.
    assert!(tool.is_hosted());
    assert_eq!(tool.type_name(), "file_search");
    // A known type with a bad field is an error naming it, not Unknown.
    let err = serde_json::from_value::<Tool>(json!({"type": "file_search"})).unwrap_err();
    assert!(err.to_string().contains("vector_store_ids"), "{err}");
}

#[test]
fn file_search_call_item_and_include() {
    let raw = json!({
        "type": "file_search_call", "id": "fs_1", "queries": ["refunds"], "status": "completed",
        "results": [{"file_id": "file-1", "filename": "policy.md", "score": 0.8,
                     "text": "Refunds within 30 days.", "attributes": {"lang": "en"}}]
    });
    let item: Item = round_trip(raw);
    assert_eq!(item.id(), Some("fs_1"));
    assert_eq!(item.type_name(), "file_search_call");
    let Item::FileSearchCall(mut call) = item else {
        panic!()
    };
    let mut kept = call.clone();
    kept.present(&[INCLUDE_FILE_SEARCH_RESULTS.to_owned()]);
    assert_eq!(kept, call);
    call.present(&["message.output_text.logprobs".to_owned()]);
    assert_eq!(call.results, None);
    assert_eq!(serde_json::to_value(&call).unwrap()["results"], Value::Null);
    // What a client replays without results parses.
    let replay: Item = serde_json::from_value(json!({
        "type": "file_search_call", "id": "fs_2", "queries": [], "status": "searching"
    }))
    .unwrap();
    assert!(
        matches!(replay, Item::FileSearchCall(c) if c.status == FileSearchCallStatus::Searching)
    );
}

#[test]
fn file_citation_annotation_and_events() {
    let part: ContentPart = round_trip(json!({
        "type": "output_text", "text": "Refunds take 30 days.",
        "annotations": [{"type": "file_citation", "file_id": "file-1", "filename": "policy.md", "index": 21}]
    }));
    let ContentPart::OutputText(t) = part else {
        panic!()
    };
    assert!(matches!(&t.annotations[0], Annotation::FileCitation(c) if c.index == 21));
    for name in ["in_progress", "searching", "completed"] {
        let ty = format!("response.file_search_call.{name}");
        let ev: StreamEvent = round_trip(json!({
            "type": ty, "item_id": "fs_1", "output_index": 0, "sequence_number": 4
        }));
        assert_eq!(ev.event_type(), ty);
        assert!(!matches!(ev.data, EventData::Unknown(_)));
    }
}

#[test]
fn embeddings_wire() {
    let req: EmbeddingRequest =
        round_trip(json!({"model": "m", "input": ["a", "b"], "encoding_format": "base64"}));
    assert_eq!(
        req.input,
        EmbeddingInput::Texts(vec!["a".into(), "b".into()])
    );
    round_trip::<EmbeddingRequest>(json!({"model": "m", "input": "a"}));
    round_trip::<EmbeddingRequest>(json!({"model": "m", "input": [1, 2, 3]}));
    let resp: EmbeddingResponse = round_trip(json!({
        "object": "list", "model": "m", "usage": {"prompt_tokens": 2, "total_tokens": 2},
        "data": [{"object": "embedding", "index": 0, "embedding": [0.5, -0.25]},
                 {"object": "embedding", "index": 1, "embedding": "AAAAPw=="}]
    }));
    assert_eq!(
        resp.data[0].embedding,
        EmbeddingVector::Float(vec![0.5, -0.25])
    );
    assert!(matches!(
        &resp.data[1].embedding,
        EmbeddingVector::Base64(_)
    ));
}

#[test]
fn ids_have_openai_prefixes() {
    let f = new_file_id();
    assert!(f.starts_with("file-") && f.len() == 5 + 48, "{f}");
    assert!(new_id(prefix::VECTOR_STORE).starts_with("vs_"));
    assert!(new_id(prefix::FILE_BATCH).starts_with("vsfb_"));
    assert!(new_id(prefix::FILE_SEARCH_CALL).starts_with("fs_"));
}

// -------------------------------------------------------------- filters ----

#[test]
fn comparisons_by_kind() {
    let a = attrs(
        json!({"author": "Ada", "year": 1843, "score": 2.5, "draft": false, "date": "2024-05-01"}),
    );
    let t = |f: Value| filter(f).matches(&a);
    assert!(t(json!({"type": "eq", "key": "author", "value": "Ada"})));
    assert!(!t(json!({"type": "eq", "key": "author", "value": "ada"})));
    assert!(
        t(json!({"type": "eq", "key": "year", "value": 1843.0})),
        "numbers compare numerically"
    );
    assert!(t(json!({"type": "ne", "key": "author", "value": "Bob"})));
    assert!(t(json!({"type": "gt", "key": "year", "value": 1800})));
    assert!(!t(json!({"type": "gt", "key": "year", "value": 1843})));
    assert!(t(json!({"type": "gte", "key": "year", "value": 1843})));
    assert!(t(json!({"type": "lt", "key": "score", "value": 3})));
    assert!(t(json!({"type": "lte", "key": "score", "value": 2.5})));
    assert!(
        t(json!({"type": "gte", "key": "date", "value": "2024-01-01"})),
        "ISO dates order as strings"
    );
    assert!(!t(
        json!({"type": "lt", "key": "date", "value": "2024-01-01"})
    ));
    assert!(t(json!({"type": "eq", "key": "draft", "value": false})));
    assert!(
        !t(json!({"type": "gt", "key": "draft", "value": false})),
        "booleans only compare equal"
    );
    assert!(t(json!({"type": "in", "key": "year", "value": [1, 1843]})));
    assert!(!t(
        json!({"type": "in", "key": "author", "value": ["Bob", "Eve"]})
    ));
    assert!(t(
        json!({"type": "nin", "key": "author", "value": ["Bob", "Eve"]})
    ));
    assert!(!t(json!({"type": "nin", "key": "year", "value": [1843]})));
}

#[test]
fn missing_or_mismatched_attributes() {
    let a = attrs(json!({"year": "1843"}));
    let t = |f: Value| filter(f).matches(&a);
    // Another kind never compares: "1843" is not 1843.
    assert!(!t(json!({"type": "eq", "key": "year", "value": 1843})));
    assert!(!t(json!({"type": "gt", "key": "year", "value": 1})));
    assert!(t(json!({"type": "ne", "key": "year", "value": 1843})));
    // Missing: only the negative comparisons pass.
    assert!(!t(json!({"type": "eq", "key": "lang", "value": "en"})));
    assert!(!t(json!({"type": "lt", "key": "lang", "value": "zz"})));
    assert!(t(json!({"type": "ne", "key": "lang", "value": "en"})));
    assert!(t(json!({"type": "nin", "key": "lang", "value": ["en"]})));
    assert!(!t(json!({"type": "in", "key": "lang", "value": ["en"]})));
    // A list where a scalar belongs matches nothing.
    assert!(!t(json!({"type": "eq", "key": "year", "value": ["1843"]})));
}

#[test]
fn compound_filters_nest() {
    let f = filter(json!({"type": "or", "filters": [
        {"type": "and", "filters": [
            {"type": "eq", "key": "lang", "value": "en"},
            {"type": "gte", "key": "year", "value": 2020}
        ]},
        {"type": "eq", "key": "pinned", "value": true}
    ]}));
    assert!(f.matches(&attrs(json!({"lang": "en", "year": 2021}))));
    assert!(!f.matches(&attrs(json!({"lang": "en", "year": 2019}))));
    assert!(f.matches(&attrs(json!({"pinned": true}))));
    assert!(!f.matches(&attrs(json!({}))));
    let empty_and = filter(json!({"type": "and", "filters": []}));
    assert!(empty_and.matches(&attrs(json!({}))));
    assert_eq!(
        serde_json::to_value(&f).unwrap()["filters"][0]["type"],
        "and"
    );
}

#[test]
fn bad_filters_are_named() {
    let err = |v: Value| serde_json::from_value::<Filter>(v).unwrap_err().to_string();
    assert!(err(json!({"type": "like", "key": "a", "value": "b"})).contains("like"));
    assert!(err(json!({"key": "a", "value": "b"})).contains("missing `type`"));
    assert!(err(json!({"type": "and"})).contains("filters"));
    assert!(err(json!({"type": "eq", "key": "a", "value": {"x": 1}})).contains("comparison"));
}

#[test]
fn attribute_limits() {
    let mut many = Attributes::new();
    for i in 0..16 {
        many.insert(format!("k{i}"), AttributeValue::Bool(true));
    }
    assert!(check_attributes(&many).is_ok());
    many.insert("k16".into(), AttributeValue::Bool(true));
    assert!(check_attributes(&many).unwrap_err().contains("16"));
    let long_key = attrs(json!({"x".repeat(65): 1}));
    assert!(check_attributes(&long_key).is_err());
    let long_value = attrs(json!({"k": "v".repeat(513)}));
    assert!(check_attributes(&long_value).is_err());
    assert!(check_attributes(&attrs(json!({"k": "v".repeat(512)}))).is_ok());
}
