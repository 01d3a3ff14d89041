//! Fixtures shaped exactly like OpenAI's chunks (ids, `logprobs`, `usage: null`...).

use super::*;
use crate::llm::http::decode_fixture;

const HEAD: &str = r#""id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_fc9f1d7035""#;

fn chunk(delta: &str, finish: Option<&str>) -> String {
    let finish = finish.map_or("null".to_owned(), |f| format!("\"{f}\""));
    format!(
        "data: {{{HEAD},\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null}}\n\n"
    )
}

fn usage_chunk(prompt: u64, completion: u64, cached: u64) -> String {
    format!(
        "data: {{{HEAD},\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{completion},\"total_tokens\":{},\"prompt_tokens_details\":{{\"cached_tokens\":{cached},\"audio_tokens\":0}},\"completion_tokens_details\":{{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}}}}\n\n",
        prompt + completion
    )
}

const DONE: &str = "data: [DONE]\n\n";

fn decode(s: &str) -> (Vec<StreamEvent>, Option<LlmError>) {
    decode_fixture(OpenAiDecoder::default(), s.as_bytes(), usize::MAX)
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: t.into() }
}

fn start(index: usize, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
    }
}

fn frag(index: usize, f: &str) -> StreamEvent {
    StreamEvent::ToolCallDelta {
        index,
        fragment: f.into(),
    }
}

fn done(stop: StopReason) -> StreamEvent {
    StreamEvent::Done { stop }
}

fn text_fixture() -> String {
    [
        chunk(r#"{"role":"assistant","content":"","refusal":null}"#, None),
        chunk(r#"{"content":"Hello"}"#, None),
        chunk(r#"{"content":" there, ✓"}"#, None),
        chunk("{}", Some("stop")),
        usage_chunk(19, 3, 7),
        DONE.to_owned(),
    ]
    .concat()
}

#[test]
fn text_usage_and_done_at_every_chunk_size() {
    let fixture = text_fixture();
    let want = vec![
        text("Hello"),
        text(" there, ✓"),
        StreamEvent::Usage {
            usage: Usage {
                input_tokens: 19,
                output_tokens: 3,
                cached_input_tokens: 7,
            },
        },
        done(StopReason::EndTurn),
    ];
    for size in [1, 2, 3, 7, 64, usize::MAX] {
        let (events, err) = decode_fixture(OpenAiDecoder::default(), fixture.as_bytes(), size);
        assert_eq!(err, None, "chunk size {size}");
        assert_eq!(events, want, "chunk size {size}");
    }
}

#[test]
fn tool_call_arguments_split_across_chunks() {
    let s = [
        chunk(r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9","type":"function","function":{"name":"weather__get","arguments":""}}],"refusal":null}"#, None),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}"#, None),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"city\":\"Par"}}]}"#, None),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]}"#, None),
        chunk("{}", Some("tool_calls")),
        DONE.to_owned(),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            start(0, "call_DdmO9", "weather__get"),
            frag(0, "{\""),
            frag(0, "city\":\"Par"),
            frag(0, "is\"}"),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn parallel_calls_with_interleaved_fragments() {
    let s = [
        chunk(r#"{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"a","arguments":""}},{"index":1,"id":"call_b","type":"function","function":{"name":"b","arguments":"{"}}]}"#, None),
        chunk(r#"{"tool_calls":[{"index":1,"function":{"arguments":"}"}}]}"#, None),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}"#, None),
        chunk(r#"{"tool_calls":[{"index":2,"id":"call_c","type":"function","function":{"name":"c","arguments":"{\"x\":1}"}}]}"#, None),
        chunk("{}", Some("tool_calls")),
        DONE.to_owned(),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            start(0, "call_a", "a"),
            start(1, "call_b", "b"),
            frag(1, "{"),
            frag(1, "}"),
            frag(0, "{}"),
            start(2, "call_c", "c"),
            frag(2, "{\"x\":1}"),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn compatible_server_leniencies() {
    // No index (matched by id), no id (generated), arguments as an object, name arriving
    // after the first fragment, and "stop" although tools were called.
    let s = [
        chunk(
            r#"{"tool_calls":[{"id":"x1","function":{"name":"a","arguments":{"k":1}}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":5,"function":{"arguments":"{\"q\""}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":5,"function":{"name":"late","arguments":":2}"}}]}"#,
            None,
        ),
        chunk("{}", Some("stop")),
        DONE.to_owned(),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            start(0, "x1", "a"),
            frag(0, "{\"k\":1}"),
            start(1, "call_1", "late"),
            frag(1, "{\"q\":2}"),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    for (finish, stop) in [
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::ContentFilter),
        ("weird", StopReason::Other("weird".into())),
    ] {
        let s = [
            chunk(r#"{"content":"x"}"#, None),
            chunk("{}", Some(finish)),
            DONE.to_owned(),
        ]
        .concat();
        let (events, _) = decode(&s);
        assert_eq!(events.last(), Some(&done(stop)));
    }
}

#[test]
fn error_chunk_mid_stream_is_classified() {
    let s = [
        chunk(r#"{"content":"Hel"}"#, None),
        r#"data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#.to_owned(),
        "\n\n".to_owned(),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(events, vec![text("Hel")]);
    assert_eq!(
        err,
        Some(LlmError::Server {
            status: 500,
            message: "The server had an error while processing your request. Sorry about that!"
                .into()
        })
    );
}

#[test]
fn malformed_chunk_is_an_error_not_skipped() {
    let s = [
        chunk(r#"{"content":"a"}"#, None),
        "data: {\"choices\":[{\"delta\":\n\n".to_owned(),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(events, vec![text("a")]);
    assert!(
        matches!(&err, Some(LlmError::Malformed { reason }) if reason.contains("not valid JSON")),
        "{err:?}"
    );
    let (_, err) = decode("data: {\"choices\": 5}\n\n");
    assert!(matches!(err, Some(LlmError::Malformed { .. })), "{err:?}");
}

#[test]
fn stream_cut_before_finish_is_malformed() {
    let s = [
        chunk(r#"{"content":"Hel"}"#, None),
        chunk(r#"{"content":"lo"}"#, None),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(events, vec![text("Hel"), text("lo")]);
    assert_eq!(
        err,
        Some(LlmError::malformed(
            "the stream ended before the model finished its answer"
        ))
    );
    // After a finish_reason, a missing [DONE] is tolerated.
    let s = [chunk(r#"{"content":"x"}"#, None), chunk("{}", Some("stop"))].concat();
    let (events, err) = decode(&s);
    assert_eq!(err, None);
    assert_eq!(events, vec![text("x"), done(StopReason::EndTurn)]);
}

#[test]
fn other_choices_and_keepalive_comments_are_ignored() {
    let s = format!(
        ": keep-alive\n\ndata: {{\"choices\":[{{\"index\":1,\"delta\":{{\"content\":\"other\"}}}}]}}\n\n{}{DONE}",
        chunk(r#"{"content":"mine"}"#, Some("stop"))
    );
    let (events, err) = decode(&s);
    assert_eq!(err, None);
    assert_eq!(events, vec![text("mine"), done(StopReason::EndTurn)]);
}
