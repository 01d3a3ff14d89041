//! Fixtures shaped exactly like Anthropic's stream (event lines, pings, cumulative usage).

use super::*;
use crate::llm::http::decode_fixture;

fn ev(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

const MESSAGE_START: &str = r#"{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":2}}}"#;

fn decode(s: &str) -> (Vec<StreamEvent>, Option<LlmError>) {
    decode_fixture(AnthropicDecoder::default(), s.as_bytes(), usize::MAX)
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: t.into() }
}

fn usage(input: u64, output: u64, cached: u64) -> StreamEvent {
    StreamEvent::Usage {
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
        },
    }
}

fn frag(index: usize, f: &str) -> StreamEvent {
    StreamEvent::ToolCallDelta {
        index,
        fragment: f.into(),
    }
}

fn tool_fixture() -> String {
    [
        ev("message_start", MESSAGE_START),
        ev("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
        ev("ping", r#"{"type": "ping"}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let's check"}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the weather."}}"#),
        ev("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        ev("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\":"}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"San Francisco, CA\"}"}}"#),
        ev("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
        ev("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}"#),
        ev("message_stop", r#"{"type":"message_stop"}"#),
    ]
    .concat()
}

#[test]
fn text_then_tool_use_at_every_chunk_size() {
    let want = vec![
        usage(582, 2, 100),
        text("Okay, let's check"),
        text(" the weather."),
        StreamEvent::ToolCallStart {
            index: 0,
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
            name: "get_weather".into(),
        },
        frag(0, "{\"location\":"),
        frag(0, " \"San Francisco, CA\"}"),
        usage(582, 89, 100),
        StreamEvent::Done {
            stop: StopReason::ToolUse,
        },
    ];
    let fixture = tool_fixture().replace('\n', "\r\n");
    for size in [1, 5, 13, usize::MAX] {
        let (events, err) = decode_fixture(AnthropicDecoder::default(), fixture.as_bytes(), size);
        assert_eq!(err, None, "size {size}");
        assert_eq!(events, want, "size {size}");
    }
}

#[test]
fn parallel_tool_uses_get_their_own_indexes_and_thinking_is_skipped() {
    let s = [
        ev("message_start", MESSAGE_START),
        ev("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#),
        ev("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        ev("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"a","input":{}}}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#),
        ev("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
        ev("content_block_start", r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"b","input":{"pre":"filled"}}}"#),
        ev("content_block_stop", r#"{"type":"content_block_stop","index":2}"#),
        ev("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}"#),
        ev("some_future_event", r#"{"type":"some_future_event"}"#),
        ev("message_stop", r#"{"type":"message_stop"}"#),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(err, None);
    assert_eq!(
        events[1..],
        [
            StreamEvent::ToolCallStart {
                index: 0,
                id: "toolu_a".into(),
                name: "a".into()
            },
            frag(0, "{}"),
            StreamEvent::ToolCallStart {
                index: 1,
                id: "toolu_b".into(),
                name: "b".into()
            },
            frag(1, "{\"pre\":\"filled\"}"),
            usage(582, 20, 100),
            StreamEvent::Done {
                stop: StopReason::ToolUse
            },
        ]
    );
}

#[test]
fn stop_reasons() {
    for (wire, stop) in [
        ("end_turn", StopReason::EndTurn),
        ("stop_sequence", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("refusal", StopReason::ContentFilter),
        ("pause_turn", StopReason::Other("pause_turn".into())),
    ] {
        let s = [
            ev("message_start", MESSAGE_START),
            ev("message_delta", &format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{wire}"}},"usage":{{"output_tokens":1}}}}"#)),
            ev("message_stop", r#"{"type":"message_stop"}"#),
        ]
        .concat();
        let (events, _) = decode(&s);
        assert_eq!(events.last(), Some(&StreamEvent::Done { stop }), "{wire}");
    }
}

#[test]
fn error_event_mid_stream_is_classified() {
    let s = [
        ev("message_start", MESSAGE_START),
        ev(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        ev(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        ),
        ev(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
    ]
    .concat();
    let (events, err) = decode(&s);
    assert_eq!(events, vec![usage(582, 2, 100), text("Hi")]);
    assert_eq!(
        err,
        Some(LlmError::Server {
            status: 529,
            message: "Overloaded".into()
        })
    );
}

#[test]
fn malformed_event_and_cut_stream_are_errors() {
    let s = [ev("message_start", MESSAGE_START), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\n\n".to_owned()].concat();
    let (_, err) = decode(&s);
    assert!(matches!(err, Some(LlmError::Malformed { .. })), "{err:?}");

    let cut = tool_fixture();
    let cut = &cut[..cut.find("event: message_delta").unwrap()];
    let (events, err) = decode(cut);
    assert_eq!(events.len(), 6, "{events:?}");
    assert_eq!(
        err,
        Some(LlmError::malformed(
            "the stream ended before the model finished its answer"
        ))
    );

    // Only message_stop missing: the answer is whole.
    let whole = tool_fixture();
    let whole = &whole[..whole.find("event: message_stop").unwrap()];
    let (events, err) = decode(whole);
    assert_eq!(err, None);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop: StopReason::ToolUse
        })
    );
}
