//! Property: every wire type survives `from_str(to_string(x)) == x`, for
//! random values of every variant, including the MCP extensions and
//! `Unknown` values with random unknown types.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use proptest::collection::{btree_map, vec};
use proptest::option::of;
use proptest::prelude::*;
use serde_json::{Map, Value};
use windlass_protocol::*;

// ------------------------------------------------------------ primitives ----

fn text() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        3 => "[a-zA-Z0-9 _.-]{0,12}",
        1 => any::<String>(),
        1 => Just(String::new()),
    ]
}

/// Finite floats: decimals of up to 7 significant digits plus a few fixed
/// edge values. Not `any::<f64>()`: without its `float_roundtrip` feature
/// serde_json's parser is not exact for every 17-digit float (e.g.
/// 7.886011150972866e99 comes back one ulp off), which is serde_json's
/// documented trade-off, not a property of these types.
fn float() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        8 => (-9_999_999i64..=9_999_999, 0i32..8).prop_map(|(m, e)| m as f64 / 10f64.powi(e)),
        1 => prop::sample::select(vec![0.0, -0.0, 1.0, 2.0, 1e-300, 1e300, -2.5e-8, 0.1, 0.7]),
    ]
}

fn key() -> impl Strategy<Value = String> + Clone {
    "[a-z_]{1,10}"
}

fn json_leaf() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        float().prop_map(Value::from),
        text().prop_map(Value::from),
    ]
}

fn json() -> BoxedStrategy<Value> {
    json_leaf()
        .prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..4).prop_map(Value::Array),
                btree_map(key(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
        .boxed()
}

/// Any JSON but `null` (`Some(null)` and `None` are the same on the wire).
fn json_non_null() -> BoxedStrategy<Value> {
    json().prop_filter("not null", |v| !v.is_null()).boxed()
}

fn json_map() -> impl Strategy<Value = Map<String, Value>> {
    btree_map(key(), json(), 0..4).prop_map(|m| m.into_iter().collect())
}

/// An object whose `type` is a random string none of `known`, plus random fields.
fn unknown_object(known: &'static [&'static str]) -> BoxedStrategy<Value> {
    unknown_object_without(known, &[])
}

fn unknown_object_without(
    known: &'static [&'static str],
    reserved: &'static [&'static str],
) -> BoxedStrategy<Value> {
    (
        "[a-z][a-z0-9_.]{0,15}".prop_filter("unknown type", move |t| !known.contains(&t.as_str())),
        btree_map(
            key().prop_filter("reserved", move |k| {
                k != "type" && !reserved.contains(&k.as_str())
            }),
            json(),
            0..4,
        ),
    )
        .prop_map(|(t, fields)| {
            let mut m: Map<String, Value> = fields.into_iter().collect();
            m.insert("type".into(), Value::String(t));
            Value::Object(m)
        })
        .boxed()
}

const ITEM_TYPES: &[&str] = &[
    "message",
    "function_call",
    "function_call_output",
    "reasoning",
    "compaction",
    "item_reference",
    "mcp_list_tools",
    "mcp_call",
    "mcp_approval_request",
    "mcp_approval_response",
    "custom_tool_call",
    "custom_tool_call_output",
    "web_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "shell_call",
    "shell_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "computer_call",
    "computer_call_output",
];
const CONTENT_TYPES: &[&str] = &[
    "input_text",
    "output_text",
    "text",
    "summary_text",
    "reasoning_text",
    "refusal",
    "input_image",
    "input_file",
    "input_video",
];
const ANNOTATION_TYPES: &[&str] = &["url_citation"];
const TOOL_TYPES: &[&str] = &[
    "function",
    "mcp",
    "namespace",
    "custom",
    "web_search",
    "web_search_2025_08_26",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "code_interpreter",
    "shell",
    "local_shell",
    "apply_patch",
    "computer_use_preview",
    "image_generation",
];
const TOOL_CHOICE_TYPES: &[&str] = &["function", "allowed_tools", "mcp"];
const TEXT_FORMAT_TYPES: &[&str] = &["text", "json_object", "json_schema"];
const EVENT_TYPES: &[&str] = &[
    "response.created",
    "response.queued",
    "response.in_progress",
    "response.completed",
    "response.failed",
    "response.incomplete",
    "response.cancelled",
    "response.requires_action",
    "response.output_item.added",
    "response.output_item.done",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.delta",
    "response.refusal.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.reasoning.delta",
    "response.reasoning.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "error",
    "response.mcp_list_tools.in_progress",
    "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
    "response.mcp_call.in_progress",
    "response.mcp_call.completed",
    "response.mcp_call.failed",
    "response.mcp_call_arguments.delta",
    "response.mcp_call_arguments.done",
];
const REQUEST_FIELDS: &[&str] = &[
    "model",
    "stop",
    "top_k",
    "client_metadata",
    "input",
    "previous_response_id",
    "include",
    "tools",
    "tool_choice",
    "metadata",
    "text",
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "parallel_tool_calls",
    "stream",
    "stream_options",
    "background",
    "max_output_tokens",
    "max_tool_calls",
    "reasoning",
    "safety_identifier",
    "prompt_cache_key",
    "truncation",
    "instructions",
    "store",
    "service_tier",
    "top_logprobs",
    "user",
    "allowed_tools",
];

// --------------------------------------------------------------- content ----

fn item_status() -> impl Strategy<Value = ItemStatus> + Clone {
    prop_oneof![
        Just(ItemStatus::InProgress),
        Just(ItemStatus::Completed),
        Just(ItemStatus::Incomplete),
    ]
}

fn text_part() -> impl Strategy<Value = TextPart> + Clone {
    text().prop_map(|text| TextPart { text })
}

fn annotation() -> BoxedStrategy<Annotation> {
    prop_oneof![
        3 => (text(), any::<u64>(), any::<u64>(), text()).prop_map(|(url, start_index, end_index, title)| {
            Annotation::UrlCitation(UrlCitation { url, start_index, end_index, title })
        }),
        1 => unknown_object(ANNOTATION_TYPES).prop_map(Annotation::Unknown),
    ]
    .boxed()
}

fn logprob() -> impl Strategy<Value = LogProb> {
    (
        text(),
        float(),
        vec(any::<u8>(), 0..4),
        vec(
            (text(), float(), vec(any::<u8>(), 0..4)).prop_map(|(token, logprob, bytes)| {
                TopLogProb {
                    token,
                    logprob,
                    bytes,
                }
            }),
            0..3,
        ),
    )
        .prop_map(|(token, logprob, bytes, top_logprobs)| LogProb {
            token,
            logprob,
            bytes,
            top_logprobs,
        })
}

fn image_detail() -> impl Strategy<Value = ImageDetail> {
    prop_oneof![
        Just(ImageDetail::Low),
        Just(ImageDetail::High),
        Just(ImageDetail::Auto)
    ]
}

fn content_part() -> BoxedStrategy<ContentPart> {
    prop_oneof![
        text_part().prop_map(ContentPart::InputText),
        (text(), vec(annotation(), 0..3), of(vec(logprob(), 0..3))).prop_map(
            |(text, annotations, logprobs)| ContentPart::OutputText(OutputTextPart {
                text,
                annotations,
                logprobs
            })
        ),
        text_part().prop_map(ContentPart::Text),
        text_part().prop_map(ContentPart::SummaryText),
        text_part().prop_map(ContentPart::ReasoningText),
        text().prop_map(|refusal| ContentPart::Refusal(RefusalPart { refusal })),
        (of(text()), of(text()), of(image_detail())).prop_map(|(image_url, file_id, detail)| {
            ContentPart::InputImage(ImagePart {
                image_url,
                file_id,
                detail,
            })
        }),
        (of(text()), of(text()), of(text()), of(text())).prop_map(
            |(filename, file_data, file_url, file_id)| ContentPart::InputFile(FilePart {
                filename,
                file_data,
                file_url,
                file_id
            })
        ),
        text().prop_map(|video_url| ContentPart::InputVideo(VideoPart { video_url })),
        unknown_object(CONTENT_TYPES).prop_map(ContentPart::Unknown),
    ]
    .boxed()
}

// ----------------------------------------------------------------- items ----

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        Just(Role::User),
        Just(Role::Assistant),
        Just(Role::System),
        Just(Role::Developer),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    (
        of(text()),
        role(),
        prop_oneof![
            text().prop_map(MessageContent::Text),
            vec(content_part(), 0..4).prop_map(MessageContent::Parts),
        ],
        of(item_status()),
        of(prop_oneof![
            Just(MessagePhase::Commentary),
            Just(MessagePhase::FinalAnswer)
        ]),
    )
        .prop_map(|(id, role, content, status, phase)| Message {
            id,
            role,
            content,
            status,
            phase,
        })
}

fn mcp_tool_info() -> impl Strategy<Value = McpToolInfo> {
    (text(), of(text()), json(), of(json_non_null())).prop_map(
        |(name, description, input_schema, annotations)| McpToolInfo {
            name,
            description,
            input_schema,
            annotations,
        },
    )
}

fn item() -> BoxedStrategy<Item> {
    prop_oneof![
        message().prop_map(Item::Message),
        (of(text()), text(), text(), text(), of(item_status())).prop_map(
            |(id, call_id, name, arguments, status)| Item::FunctionCall(FunctionCall {
                id,
                call_id,
                name,
                arguments,
                namespace: None,
                status
            })
        ),
        (
            of(text()),
            text(),
            prop_oneof![
                text().prop_map(ToolOutput::Text),
                vec(content_part(), 0..3).prop_map(ToolOutput::Parts),
            ],
            of(item_status()),
            of(any::<bool>()),
        )
            .prop_map(|(id, call_id, output, status, is_error)| {
                Item::FunctionCallOutput(FunctionCallOutput {
                    id,
                    call_id,
                    output,
                    status,
                    is_error,
                })
            }),
        (
            of(text()),
            vec(content_part(), 0..3),
            of(vec(content_part(), 0..3)),
            of(text()),
            of(item_status()),
        )
            .prop_map(|(id, summary, content, encrypted_content, status)| {
                Item::Reasoning(Reasoning {
                    id,
                    summary,
                    content,
                    encrypted_content,
                    status,
                })
            }),
        (of(text()), text(), of(text())).prop_map(|(id, encrypted_content, created_by)| {
            Item::Compaction(Compaction {
                id,
                encrypted_content,
                created_by,
            })
        }),
        text().prop_map(|id| Item::ItemReference(ItemReference { id })),
        (text(), text(), vec(mcp_tool_info(), 0..3), of(text())).prop_map(
            |(id, server_label, tools, error)| Item::McpListTools(McpListTools {
                id,
                server_label,
                tools,
                error
            })
        ),
        (
            (text(), text(), text(), text()),
            (
                of(text()),
                of(mcp_call_error()),
                of(mcp_call_status()),
                of(text()),
            ),
        )
            .prop_map(
                |((id, server_label, name, arguments), (output, error, status, approval))| {
                    Item::McpCall(McpCall {
                        id,
                        server_label,
                        name,
                        arguments,
                        output,
                        error,
                        status,
                        approval_request_id: approval,
                    })
                }
            ),
        (text(), text(), text(), text()).prop_map(|(id, server_label, name, arguments)| {
            Item::McpApprovalRequest(McpApprovalRequest {
                id,
                server_label,
                name,
                arguments,
            })
        }),
        (of(text()), text(), any::<bool>(), of(text())).prop_map(
            |(id, approval_request_id, approve, reason)| {
                Item::McpApprovalResponse(McpApprovalResponse {
                    id,
                    approval_request_id,
                    approve,
                    reason,
                })
            }
        ),
        unknown_object(ITEM_TYPES).prop_map(Item::Unknown),
    ]
    .boxed()
}

// ----------------------------------------------------------------- tools ----

fn mcp_tool_filter() -> impl Strategy<Value = McpToolFilter> + Clone {
    (of(vec(text(), 0..3)), of(any::<bool>())).prop_map(|(tool_names, read_only)| McpToolFilter {
        tool_names,
        read_only,
    })
}

fn mcp_tool() -> impl Strategy<Value = McpTool> {
    (
        (text(), of(text()), of(text()), of(text())),
        (
            of(json_map()),
            of(text()),
            of(prop_oneof![
                vec(text(), 0..3).prop_map(McpAllowedTools::Names),
                mcp_tool_filter().prop_map(McpAllowedTools::Filter),
            ]),
            of(prop_oneof![
                Just(McpRequireApproval::Mode(McpApprovalMode::Always)),
                Just(McpRequireApproval::Mode(McpApprovalMode::Never)),
                (of(mcp_tool_filter()), of(mcp_tool_filter())).prop_map(|(always, never)| {
                    McpRequireApproval::Filter(McpApprovalFilter { always, never })
                }),
            ]),
        ),
    )
        .prop_map(
            |(
                (server_label, server_url, connector_id, server_description),
                (headers, authorization, allowed_tools, require_approval),
            )| McpTool {
                server_label,
                server_url,
                connector_id,
                server_description,
                headers,
                authorization,
                allowed_tools,
                require_approval,
            },
        )
}

fn tool() -> BoxedStrategy<Tool> {
    prop_oneof![
        (text(), of(text()), of(json_non_null()), of(any::<bool>())).prop_map(
            |(name, description, parameters, strict)| Tool::Function(FunctionTool {
                name,
                description,
                parameters,
                strict
            })
        ),
        mcp_tool().prop_map(Tool::Mcp),
        unknown_object(TOOL_TYPES).prop_map(Tool::Unknown),
    ]
    .boxed()
}

fn tool_choice_mode() -> impl Strategy<Value = ToolChoiceMode> + Clone {
    prop_oneof![
        Just(ToolChoiceMode::None),
        Just(ToolChoiceMode::Auto),
        Just(ToolChoiceMode::Required),
    ]
}

fn tool_choice_leaf() -> BoxedStrategy<ToolChoiceObject> {
    prop_oneof![
        text().prop_map(|name| ToolChoiceObject::Function(SpecificFunction { name })),
        (text(), of(text())).prop_map(|(server_label, name)| {
            ToolChoiceObject::Mcp(SpecificMcp { server_label, name })
        }),
        unknown_object(TOOL_CHOICE_TYPES).prop_map(ToolChoiceObject::Unknown),
    ]
    .boxed()
}

fn tool_choice() -> BoxedStrategy<ToolChoice> {
    prop_oneof![
        tool_choice_mode().prop_map(ToolChoice::Mode),
        tool_choice_leaf().prop_map(ToolChoice::Object),
        (vec(tool_choice_leaf(), 0..4), tool_choice_mode()).prop_map(|(tools, mode)| {
            ToolChoice::Object(ToolChoiceObject::AllowedTools(AllowedTools { tools, mode }))
        }),
    ]
    .boxed()
}

// --------------------------------------------------------------- request ----

fn text_format() -> BoxedStrategy<TextFormat> {
    prop_oneof![
        Just(TextFormat::Text(EmptyObject {})),
        Just(TextFormat::JsonObject(EmptyObject {})),
        (text(), of(text()), json(), of(any::<bool>())).prop_map(
            |(name, description, schema, strict)| TextFormat::JsonSchema(JsonSchemaFormat {
                name,
                description,
                schema,
                strict
            })
        ),
        unknown_object(TEXT_FORMAT_TYPES).prop_map(TextFormat::Unknown),
    ]
    .boxed()
}

fn verbosity() -> impl Strategy<Value = Verbosity> + Clone {
    prop_oneof![
        Just(Verbosity::Low),
        Just(Verbosity::Medium),
        Just(Verbosity::High)
    ]
}

fn reasoning_param() -> impl Strategy<Value = ReasoningParam> + Clone {
    (
        of(prop_oneof![
            Just(ReasoningEffort::None),
            Just(ReasoningEffort::Minimal),
            Just(ReasoningEffort::Low),
            Just(ReasoningEffort::Medium),
            Just(ReasoningEffort::High),
            Just(ReasoningEffort::Xhigh),
        ]),
        of(prop_oneof![
            Just(ReasoningSummary::Concise),
            Just(ReasoningSummary::Detailed),
            Just(ReasoningSummary::Auto),
        ]),
    )
        .prop_map(|(effort, summary)| ReasoningParam { effort, summary })
}

fn truncation() -> impl Strategy<Value = Truncation> + Clone {
    prop_oneof![Just(Truncation::Auto), Just(Truncation::Disabled)]
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        text().prop_map(Input::Text),
        vec(item(), 0..4).prop_map(Input::Items),
    ]
}

fn create_request() -> impl Strategy<Value = CreateResponseRequest> {
    let a = (
        of(text()),
        of(input()),
        of(text()),
        of(vec(text(), 0..3)),
        of(vec(tool(), 0..3)),
        of(tool_choice()),
        of(json_map()),
        of((of(text_format()), of(verbosity()))
            .prop_map(|(format, verbosity)| TextParam { format, verbosity })),
    );
    let b = (
        of(float()),
        of(float()),
        of(float()),
        of(float()),
        of(any::<bool>()),
        of(any::<bool>()),
        of(
            of(any::<bool>()).prop_map(|include_obfuscation| StreamOptions {
                include_obfuscation,
            }),
        ),
        of(any::<bool>()),
        of(any::<u64>()),
        of(any::<u64>()),
    );
    let c = (
        of(reasoning_param()),
        of(text()),
        of(text()),
        of(truncation()),
        of(text()),
        of(any::<bool>()),
        of(text()),
        of(any::<u32>()),
        of(text()),
        of(vec(text(), 0..3)),
    );
    let extra = prop_oneof![
        Just(Map::new()),
        btree_map(
            key().prop_filter("known field", |k| !REQUEST_FIELDS.contains(&k.as_str())),
            json(),
            1..4,
        )
        .prop_map(|m| m.into_iter().collect()),
    ];
    (a, b, c, extra).prop_map(
        |(
            (model, input, previous_response_id, include, tools, tool_choice, metadata, text),
            (
                temperature,
                top_p,
                presence_penalty,
                frequency_penalty,
                parallel_tool_calls,
                stream,
                stream_options,
                background,
                max_output_tokens,
                max_tool_calls,
            ),
            (
                reasoning,
                safety_identifier,
                prompt_cache_key,
                truncation,
                instructions,
                store,
                service_tier,
                top_logprobs,
                user,
                allowed_tools,
            ),
            extra,
        )| CreateResponseRequest {
            model,
            input,
            previous_response_id,
            include,
            tools,
            tool_choice,
            metadata,
            text,
            temperature,
            top_p,
            presence_penalty,
            frequency_penalty,
            parallel_tool_calls,
            stream,
            stream_options,
            background,
            max_output_tokens,
            max_tool_calls,
            reasoning,
            safety_identifier,
            prompt_cache_key,
            truncation,
            instructions,
            store,
            service_tier,
            top_logprobs,
            user,
            allowed_tools,
            client_metadata: None,
            conversation: None,
            context_management: None,
            prompt: None,
            stop: None,
            top_k: None,
            extra,
        },
    )
}

// -------------------------------------------------------------- response ----

fn response_status() -> impl Strategy<Value = ResponseStatus> {
    prop_oneof![
        Just(ResponseStatus::Queued),
        Just(ResponseStatus::InProgress),
        Just(ResponseStatus::Completed),
        Just(ResponseStatus::Incomplete),
        Just(ResponseStatus::Failed),
        Just(ResponseStatus::Cancelled),
        Just(ResponseStatus::RequiresAction),
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(|(i, o, t, c, r)| Usage {
            input_tokens: i,
            output_tokens: o,
            total_tokens: t,
            input_tokens_details: InputTokensDetails { cached_tokens: c },
            output_tokens_details: OutputTokensDetails {
                reasoning_tokens: r,
            },
        })
}

fn response() -> BoxedStrategy<ResponseResource> {
    let a = (
        text(),
        text(),
        any::<u64>(),
        of(any::<u64>()),
        response_status(),
        of(text().prop_map(|reason| IncompleteDetails { reason })),
        text(),
        of(text()),
        of(text()),
        vec(item(), 0..3),
        of((text(), text()).prop_map(|(code, message)| ResponseError { code, message })),
    );
    let b = (
        vec(tool(), 0..3),
        tool_choice(),
        truncation(),
        any::<bool>(),
        (text_format(), of(verbosity()))
            .prop_map(|(format, verbosity)| TextField { format, verbosity }),
        float(),
        float(),
        float(),
        any::<u32>(),
        float(),
        of(reasoning_param()),
    );
    let c = (
        of(usage()),
        of(any::<u64>()),
        of(any::<u64>()),
        any::<bool>(),
        any::<bool>(),
        text(),
        json_map(),
        of(text()),
        of(text()),
        of(vec(text(), 0..3)),
        of(text()),
        of(text().prop_map(|id| ConversationRef { id })),
    );
    (a, b, c)
        .prop_map(
            |(
                (
                    id,
                    object,
                    created_at,
                    completed_at,
                    status,
                    incomplete_details,
                    model,
                    previous_response_id,
                    instructions,
                    output,
                    error,
                ),
                (
                    tools,
                    tool_choice,
                    truncation,
                    parallel_tool_calls,
                    text,
                    top_p,
                    presence_penalty,
                    frequency_penalty,
                    top_logprobs,
                    temperature,
                    reasoning,
                ),
                (
                    usage,
                    max_output_tokens,
                    max_tool_calls,
                    store,
                    background,
                    service_tier,
                    metadata,
                    safety_identifier,
                    prompt_cache_key,
                    allowed_tools,
                    user,
                    conversation,
                ),
            )| ResponseResource {
                id,
                object,
                created_at,
                completed_at,
                status,
                incomplete_details,
                model,
                previous_response_id,
                instructions,
                output,
                error,
                tools,
                tool_choice,
                truncation,
                parallel_tool_calls,
                text,
                top_p,
                presence_penalty,
                frequency_penalty,
                top_logprobs,
                temperature,
                reasoning,
                usage,
                max_output_tokens,
                max_tool_calls,
                store,
                background,
                service_tier,
                metadata,
                safety_identifier,
                prompt_cache_key,
                allowed_tools,
                user,
                conversation,
                prompt: None,
                stop_sequence: None,
            },
        )
        .boxed()
}

// ---------------------------------------------------------------- events ----

fn event_data() -> BoxedStrategy<EventData> {
    use EventData as E;
    let idx = || any::<usize>();
    let lifecycle = (0usize..8, response()).prop_map(|(which, r)| {
        let response = Box::new(r);
        match which {
            0 => E::Created { response },
            1 => E::Queued { response },
            2 => E::InProgress { response },
            3 => E::Completed { response },
            4 => E::Failed { response },
            5 => E::Incomplete { response },
            6 => E::Cancelled { response },
            _ => E::RequiresAction { response },
        }
    });
    let output_item = (any::<bool>(), idx(), item()).prop_map(|(done, output_index, item)| {
        if done {
            E::OutputItemDone { output_index, item }
        } else {
            E::OutputItemAdded { output_index, item }
        }
    });
    let content_part_ev = (any::<bool>(), text(), idx(), idx(), content_part()).prop_map(
        |(done, item_id, output_index, content_index, part)| {
            if done {
                E::ContentPartDone {
                    item_id,
                    output_index,
                    content_index,
                    part,
                }
            } else {
                E::ContentPartAdded {
                    item_id,
                    output_index,
                    content_index,
                    part,
                }
            }
        },
    );
    let output_text = (
        any::<bool>(),
        text(),
        idx(),
        idx(),
        text(),
        vec(logprob(), 0..3),
    )
        .prop_map(
            |(done, item_id, output_index, content_index, s, logprobs)| {
                if done {
                    E::OutputTextDone {
                        item_id,
                        output_index,
                        content_index,
                        text: s,
                        logprobs,
                    }
                } else {
                    E::OutputTextDelta {
                        item_id,
                        output_index,
                        content_index,
                        delta: s,
                        logprobs,
                    }
                }
            },
        );
    let annotation_added = (text(), idx(), idx(), idx(), annotation()).prop_map(
        |(item_id, output_index, content_index, annotation_index, annotation)| {
            E::OutputTextAnnotationAdded {
                item_id,
                output_index,
                content_index,
                annotation_index,
                annotation,
            }
        },
    );
    // Events of (item_id, output_index, content_index, string).
    let indexed_text = (0usize..4, text(), idx(), idx(), text()).prop_map(
        |(which, item_id, output_index, content_index, s)| match which {
            0 => E::RefusalDelta {
                item_id,
                output_index,
                content_index,
                delta: s,
            },
            1 => E::RefusalDone {
                item_id,
                output_index,
                content_index,
                refusal: s,
            },
            2 => E::ReasoningDelta {
                item_id,
                output_index,
                content_index,
                delta: s,
            },
            _ => E::ReasoningDone {
                item_id,
                output_index,
                content_index,
                text: s,
            },
        },
    );
    let summary = (0usize..4, text(), idx(), idx(), text(), content_part()).prop_map(
        |(which, item_id, output_index, summary_index, s, part)| match which {
            0 => E::ReasoningSummaryPartAdded {
                item_id,
                output_index,
                summary_index,
                part,
            },
            1 => E::ReasoningSummaryPartDone {
                item_id,
                output_index,
                summary_index,
                part,
            },
            2 => E::ReasoningSummaryTextDelta {
                item_id,
                output_index,
                summary_index,
                delta: s,
            },
            _ => E::ReasoningSummaryTextDone {
                item_id,
                output_index,
                summary_index,
                text: s,
            },
        },
    );
    // Events of (item_id, output_index[, string]).
    let by_item = (0usize..10, text(), idx(), text()).prop_map(
        |(which, item_id, output_index, s)| match which {
            0 => E::FunctionCallArgumentsDelta {
                item_id,
                output_index,
                delta: s,
            },
            1 => E::FunctionCallArgumentsDone {
                item_id,
                output_index,
                arguments: s,
            },
            2 => E::McpListToolsInProgress {
                item_id,
                output_index,
            },
            3 => E::McpListToolsCompleted {
                item_id,
                output_index,
            },
            4 => E::McpListToolsFailed {
                item_id,
                output_index,
            },
            5 => E::McpCallInProgress {
                item_id,
                output_index,
            },
            6 => E::McpCallCompleted {
                item_id,
                output_index,
            },
            7 => E::McpCallFailed {
                item_id,
                output_index,
            },
            8 => E::McpCallArgumentsDelta {
                item_id,
                output_index,
                delta: s,
            },
            _ => E::McpCallArgumentsDone {
                item_id,
                output_index,
                arguments: s,
            },
        },
    );
    let error =
        (text(), of(text()), text(), of(text())).prop_map(|(kind, code, message, param)| {
            E::Error {
                error: ErrorPayload {
                    kind,
                    code,
                    message,
                    param,
                },
            }
        });
    let unknown =
        unknown_object_without(EVENT_TYPES, &["sequence_number"]).prop_map(EventData::Unknown);
    prop_oneof![
        lifecycle,
        output_item,
        content_part_ev,
        output_text,
        annotation_added,
        indexed_text,
        summary,
        by_item,
        error,
        unknown,
    ]
    .boxed()
}

fn stream_event() -> impl Strategy<Value = StreamEvent> {
    (event_data(), any::<u64>()).prop_map(|(data, sequence_number)| StreamEvent {
        data,
        sequence_number,
    })
}

// ------------------------------------------------------------ properties ----

fn round_trips<T>(x: &T) -> Result<(), TestCaseError>
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let s = serde_json::to_string(x).map_err(|e| TestCaseError::fail(format!("serialize: {e}")))?;
    let back: T = serde_json::from_str(&s)
        .map_err(|e| TestCaseError::fail(format!("{s} does not parse: {e}")))?;
    prop_assert_eq!(&back, x, "via {}", s);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn item_round_trips(x in item()) {
        round_trips(&x)?;
        // The wire `type` is the variant's.
        let v = serde_json::to_value(&x).unwrap();
        prop_assert_eq!(v["type"].as_str(), Some(x.type_name()));
    }

    #[test]
    fn content_part_round_trips(x in content_part()) {
        round_trips(&x)?;
        let v = serde_json::to_value(&x).unwrap();
        prop_assert_eq!(v["type"].as_str(), Some(x.type_name()));
    }

    #[test]
    fn tool_round_trips(x in tool()) {
        round_trips(&x)?;
    }

    #[test]
    fn tool_choice_round_trips(x in tool_choice()) {
        round_trips(&x)?;
    }

    #[test]
    fn annotation_and_text_format_round_trip(a in annotation(), f in text_format()) {
        round_trips(&a)?;
        round_trips(&f)?;
    }

    #[test]
    fn input_round_trips(x in input()) {
        round_trips(&x)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn create_request_round_trips(x in create_request()) {
        round_trips(&x)?;
        // Extra keys sit at the top level, next to the known ones.
        let v = serde_json::to_value(&x).unwrap();
        for (k, val) in &x.extra {
            prop_assert_eq!(&v[k], val);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn response_round_trips(x in response()) {
        round_trips(&x)?;
    }

    #[test]
    fn stream_event_round_trips(x in stream_event()) {
        round_trips(&x)?;
        let v = serde_json::to_value(&x).unwrap();
        prop_assert_eq!(v["type"].as_str(), Some(x.event_type()));
        prop_assert_eq!(v["sequence_number"].as_u64(), Some(x.sequence_number));
    }
}

fn mcp_call_status() -> impl Strategy<Value = McpCallStatus> {
    prop_oneof![
        Just(McpCallStatus::InProgress),
        Just(McpCallStatus::Calling),
        Just(McpCallStatus::Completed),
        Just(McpCallStatus::Incomplete),
        Just(McpCallStatus::Failed),
    ]
}

fn mcp_call_error() -> impl Strategy<Value = McpCallError> {
    prop_oneof![
        text().prop_map(McpCallError::Text),
        (any::<i32>(), text()).prop_map(|(code, message)| McpCallError::Typed(
            McpToolCallError::McpProtocolError {
                code: code.into(),
                message
            }
        )),
        text().prop_map(
            |t| McpCallError::Typed(McpToolCallError::McpToolExecutionError {
                content: serde_json::json!([{"type": "text", "text": t}])
            })
        ),
    ]
}
