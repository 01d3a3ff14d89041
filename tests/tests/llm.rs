//! Both LLM wire formats against the scripted server: streaming, tool calls, usage, error
//! classification, retries, cuts, cancellation, cross-vendor replay and prompt-mode tools.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::BufRead;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use switchboard_core::llm::profiles::{ToolMode, Wire};
use switchboard_core::llm::{
    collect, LlmError, Message, Part, ResultPart, Role, StopReason, StreamEvent, Usage,
};
use switchboard_tests::fake_llm::client::{
    drain, fast_retry, profile_of, provider_for, run, text_of,
};
use switchboard_tests::fake_llm::fixtures::{call, conversation, request};
use switchboard_tests::fake_llm::{
    End, FakeLlm, HttpError, Outcome, Reply, Scenario, ScriptedCall, StreamError,
};
use switchboard_tests::KillOnDrop;
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-canary-7f3a9b2c1d";
const VENDORS: [&str; 2] = ["openai", "anthropic"];

async fn fake(replies: impl IntoIterator<Item = Reply>) -> FakeLlm {
    FakeLlm::spawn(Scenario::new(replies)).await.unwrap()
}

#[tokio::test]
async fn text_streams_as_deltas_with_usage_and_the_request_is_well_formed() {
    for vendor in VENDORS {
        let server = fake([Reply::text(&["Hel", "lo, ", "wörld"]).with_usage(12, 3, 4)]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(3));
        let (events, err) = run(&*p, request("hi")).await;
        assert_eq!(err, None, "{vendor}");
        let texts: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta { .. }))
            .cloned()
            .collect();
        assert_eq!(texts.len(), 3, "{vendor}: {events:?}");
        assert_eq!(text_of(&events), "Hello, wörld");
        let usage = events.iter().rev().find_map(|e| match e {
            StreamEvent::Usage { usage } => Some(*usage),
            _ => None,
        });
        let want = Usage {
            input_tokens: 12,
            output_tokens: 3,
            cached_input_tokens: 4,
        };
        assert_eq!(usage, Some(want), "{vendor}");
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Done {
                stop: StopReason::EndTurn
            })
        );

        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        let (r, body) = (&reqs[0], &reqs[0].body);
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["stream"], true);
        if vendor == "openai" {
            assert_eq!(r.path, "/v1/chat/completions");
            assert_eq!(r.headers["authorization"], format!("Bearer {KEY}"));
            assert_eq!(body["stream_options"], json!({"include_usage": true}));
            assert_eq!(
                body["messages"][0],
                json!({"role": "system", "content": "You are terse."})
            );
            assert_eq!(body["tools"][0]["function"]["name"], "weather__get");
        } else {
            assert_eq!(r.path, "/v1/messages");
            assert_eq!(r.headers["x-api-key"], KEY);
            assert_eq!(r.headers["anthropic-version"], "2023-06-01");
            assert!(!r.headers.contains_key("authorization"));
            assert_eq!(body["max_tokens"], 4096);
            assert_eq!(body["system"], "You are terse.");
            assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        }
    }
}

#[tokio::test]
async fn profile_quirks_reach_the_wire() {
    // LM Studio: no stream_options, no key needed, and no usage comes back.
    let server = fake([Reply::text(&["ok"]).with_usage(5, 1, 0)]).await;
    let p = provider_for(&server, profile_of("lmstudio"), None, fast_retry(1));
    let (events, err) = run(&*p, request("hi")).await;
    assert_eq!(err, None);
    assert!(!events
        .iter()
        .any(|e| matches!(e, StreamEvent::Usage { .. })));
    let r = &server.requests()[0];
    assert!(r.body.get("stream_options").is_none());
    assert!(!r.headers.contains_key("authorization"));
}

#[tokio::test]
async fn a_tool_call_with_arguments_split_across_chunks() {
    for vendor in VENDORS {
        let mut reply = Reply::calls(vec![ScriptedCall::new(
            "call_w1",
            "weather__get",
            &["{\"ci", "ty\": \"Pa", "ris\"}"],
        )]);
        reply.split_bytes = 5; // events straddle HTTP chunks too
        let server = fake([reply]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(1));
        let answer = collect(
            p.stream(request("weather?"), CancellationToken::new())
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(answer.stop, StopReason::ToolUse, "{vendor}");
        assert_eq!(
            answer.message.parts,
            vec![call("call_w1", "weather__get", json!({"city": "Paris"}))],
            "{vendor}"
        );
    }
}

#[tokio::test]
async fn three_parallel_tool_calls_after_text() {
    for vendor in VENDORS {
        let mut reply = Reply::calls(vec![
            ScriptedCall::new("c_a", "weather__get", &["{\"city\":", "\"Oslo\"}"]),
            ScriptedCall::new("c_b", "weather__get", &["{\"city\":\"Rome\"", "}"]),
            ScriptedCall::new("c_c", "clock__now", &[]),
        ])
        .with_usage(40, 30, 0);
        reply.text = vec!["Checking ".into(), "three things.".into()];
        let server = fake([reply]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(1));
        let (events, err) = run(&*p, request("go")).await;
        assert_eq!(err, None);
        let starts: Vec<(usize, &str)> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStart { index, id, .. } => Some((*index, id.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(starts, vec![(0, "c_a"), (1, "c_b"), (2, "c_c")], "{vendor}");
        let answer =
            collect(futures::stream::iter(events.into_iter().map(Ok::<_, LlmError>)).boxed())
                .await
                .unwrap();
        assert_eq!(answer.usage.output_tokens, 30);
        assert_eq!(
            answer.message.parts,
            vec![
                Part::Text {
                    text: "Checking three things.".into()
                },
                call("c_a", "weather__get", json!({"city": "Oslo"})),
                call("c_b", "weather__get", json!({"city": "Rome"})),
                call("c_c", "clock__now", json!({})),
            ],
            "{vendor}"
        );
    }
}

#[tokio::test]
async fn unauthorized_is_auth_is_not_retried_and_never_shows_the_key() {
    for vendor in VENDORS {
        // OpenAI's real 401 quotes the key it was given.
        let reply = Reply::http_error(
            401,
            "authentication_error",
            &format!("Incorrect API key provided: {KEY}. You can find your API key at ..."),
        )
        .times(5);
        let server = fake([reply]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(3));
        let (_, err) = run(&*p, request("hi")).await;
        let err = err.unwrap();
        assert!(
            matches!(&err, LlmError::Auth { status: 401, message } if message.contains("[redacted]")),
            "{vendor}: {err:?}"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{vendor}: auth errors are not retried"
        );
        for text in [err.to_string(), format!("{err:?}"), format!("{p:?}")] {
            assert!(!text.contains(KEY), "{vendor} leaked the key: {text}");
            assert!(
                !text.contains("canary"),
                "{vendor} leaked part of the key: {text}"
            );
        }
    }
}

#[tokio::test]
async fn the_key_is_scrubbed_from_mid_stream_errors_too() {
    let bad_chunk = format!("data: {{\"oops\": \"{KEY}\"\n\n");
    let server = fake([
        Reply::text(&["a"]).ending(End::Error(StreamError {
            kind: "server_error".into(),
            message: format!("upstream rejected {KEY}"),
            code: None,
        })),
        Reply {
            raw: Some(vec![bad_chunk]),
            ..Reply::default()
        },
    ])
    .await;
    let p = provider_for(&server, profile_of("openai"), Some(KEY), fast_retry(1));
    for _ in 0..2 {
        let (_, err) = run(&*p, request("hi")).await;
        let err = err.unwrap();
        assert!(!format!("{err} {err:?}").contains("canary"), "{err:?}");
    }
}

#[tokio::test]
async fn rate_limited_then_success_is_retried_honouring_retry_after() {
    // OpenAI sends both headers; the precise one is used (so this test waits 30 ms, not 1 s).
    let server = fake([
        Reply::http_error(429, "requests", "Rate limit reached")
            .header("retry-after", "1")
            .header("retry-after-ms", "30"),
        Reply::text(&["fine"]),
    ])
    .await;
    let p = provider_for(&server, profile_of("openai"), Some(KEY), fast_retry(3));
    let started = Instant::now();
    let (events, err) = run(&*p, request("hi")).await;
    assert_eq!(err, None);
    assert_eq!(text_of(&events), "fine");
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // Anthropic: `retry-after` in seconds is waited out.
    let server = fake([
        Reply::http_error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        )
        .header("retry-after", "1"),
        Reply::text(&["fine"]),
    ])
    .await;
    let p = provider_for(&server, profile_of("anthropic"), Some(KEY), fast_retry(3));
    let started = Instant::now();
    let (events, err) = run(&*p, request("hi")).await;
    assert_eq!(err, None);
    assert_eq!(text_of(&events), "fine");
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_returned_at_once() {
    let server = fake([Reply::http_error(429, "rate_limit_error", "wait a minute")
        .header("retry-after", "60")
        .times(3)])
    .await;
    let p = provider_for(&server, profile_of("anthropic"), Some(KEY), fast_retry(3));
    let started = Instant::now();
    let (_, err) = run(&*p, request("hi")).await;
    assert!(
        matches!(err, Some(LlmError::RateLimited { retry_after: Some(d), .. }) if d == Duration::from_secs(60)),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn server_errors_are_retried_up_to_max_attempts() {
    for (vendor, status, kind) in [
        ("openai", 500, "server_error"),
        ("anthropic", 529, "overloaded_error"),
    ] {
        let server = fake([Reply::http_error(status, kind, "try later").times(10)]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(3));
        let (_, err) = run(&*p, request("hi")).await;
        assert_eq!(
            err,
            Some(LlmError::Server {
                status,
                message: "try later".into()
            }),
            "{vendor}"
        );
        assert_eq!(
            server.requests().len(),
            3,
            "{vendor}: exactly max_attempts requests"
        );
    }
}

#[tokio::test]
async fn context_length_errors_are_classified_and_not_retried() {
    let openai = Reply {
        http_error: Some(HttpError {
            status: 400,
            kind: Some("invalid_request_error".into()),
            code: Some("context_length_exceeded".into()),
            message: Some("This model's maximum context length is 128000 tokens.".into()),
            ..HttpError::default()
        }),
        ..Reply::default()
    };
    let anthropic = Reply::http_error(
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
    );
    for (vendor, reply) in [("openai", openai), ("anthropic", anthropic)] {
        let server = fake([reply.times(3)]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(3));
        let (_, err) = run(&*p, request("hi")).await;
        assert!(
            matches!(err, Some(LlmError::ContextLengthExceeded { .. })),
            "{vendor}: {err:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn broken_streams_are_errors_never_silent_successes() {
    for vendor in VENDORS {
        let server = fake([
            Reply::text(&["par", "tial"]).ending(End::Malformed),
            Reply::text(&["par", "tial"]).ending(End::Cut),
            Reply::text(&["par", "tial"]).ending(End::Reset),
            Reply::text(&["par"]).ending(End::Error(StreamError {
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
                code: None,
            })),
        ])
        .await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(3));
        let (events, err) = run(&*p, request("hi")).await;
        assert_eq!(text_of(&events), "partial", "{vendor}");
        assert!(
            matches!(err, Some(LlmError::Malformed { .. })),
            "{vendor} malformed: {err:?}"
        );

        let (events, err) = run(&*p, request("hi")).await;
        assert_eq!(text_of(&events), "partial");
        assert!(
            matches!(&err, Some(LlmError::Malformed { reason }) if reason.contains("ended before")),
            "{vendor} cut: {err:?}"
        );

        let (_, err) = run(&*p, request("hi")).await;
        assert!(
            matches!(err, Some(LlmError::Network { .. })),
            "{vendor} reset: {err:?}"
        );

        let (events, err) = run(&*p, request("hi")).await;
        assert_eq!(text_of(&events), "par");
        assert_eq!(
            err,
            Some(LlmError::Server {
                status: 529,
                message: "Overloaded".into()
            }),
            "{vendor} error event"
        );
        // Retryable or not, nothing after the first byte was replayed.
        assert_eq!(server.requests().len(), 4, "{vendor}");
    }
}

#[tokio::test]
async fn cancelling_mid_stream_stops_promptly_and_closes_the_connection() {
    for vendor in VENDORS {
        let deltas: Vec<String> = (0..100).map(|i| format!("w{i} ")).collect();
        let mut reply = Reply::text(&[]);
        reply.text = deltas;
        reply.chunk_delay_ms = 100;
        let server = fake([reply]).await;
        let p = provider_for(&server, profile_of(vendor), Some(KEY), fast_retry(1));
        let cancel = CancellationToken::new();
        let mut stream = p.stream(request("hi"), cancel.clone()).await.unwrap();
        // Read up to the first text.
        loop {
            match stream.next().await.unwrap().unwrap() {
                StreamEvent::TextDelta { .. } => break,
                _ => continue,
            }
        }
        cancel.cancel();
        let started = Instant::now();
        let next = tokio::time::timeout(Duration::from_secs(2), stream.next())
            .await
            .unwrap();
        assert!(
            matches!(next, Some(Err(LlmError::Cancelled))),
            "{vendor}: {next:?}"
        );
        assert!(started.elapsed() < Duration::from_millis(500));
        assert!(stream.next().await.is_none());
        drop(stream);
        assert_eq!(
            server.outcome(0, Duration::from_secs(5)).await,
            Some(Outcome::ClientGone),
            "{vendor}: the server should see the client leave"
        );
    }
}

#[tokio::test]
async fn cancelling_during_retry_backoff_returns_at_once() {
    let server = fake([Reply::http_error(429, "rate_limit_error", "later")
        .header("retry-after", "4")
        .times(3)])
    .await;
    let p = provider_for(&server, profile_of("anthropic"), Some(KEY), fast_retry(3));
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c.cancel();
    });
    let started = Instant::now();
    let err = p.stream(request("hi"), cancel).await.err();
    assert_eq!(err, Some(LlmError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_conversation_from_one_vendor_replays_to_the_other() {
    // Anthropic answers with calls; the transcript then goes to OpenAI.
    let server = fake([
        Reply::calls(vec![
            ScriptedCall::new("toolu_01A", "weather__get", &["{\"city\": \"Oslo\"}"]),
            ScriptedCall::new("toolu_01B", "weather__get", &["{\"city\": \"Rome\"}"]),
        ]),
        Reply::text(&["Snow in Oslo."]),
        Reply::calls(vec![
            ScriptedCall::new("call_X", "weather__get", &["{\"city\":\"Oslo\"}"]),
            ScriptedCall::new("call_Y", "weather__get", &["{\"city\":\"Rome\"}"]),
        ]),
        Reply::text(&["Snow in Oslo."]),
    ])
    .await;
    let anthropic = provider_for(&server, profile_of("anthropic"), Some(KEY), fast_retry(1));
    let openai = provider_for(&server, profile_of("openai"), Some(KEY), fast_retry(1));
    for (first, second, ids) in [
        (&anthropic, &openai, ["toolu_01A", "toolu_01B"]),
        (&openai, &anthropic, ["call_X", "call_Y"]),
    ] {
        let want = conversation(ids);
        let mut req = request("");
        req.messages = vec![want[0].clone()];
        let answer = collect(
            first
                .stream(req.clone(), CancellationToken::new())
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        let mut assistant = want[1].clone();
        assistant.parts.remove(0); // the scripted answer has no text
        assert_eq!(answer.message, assistant);
        req.messages = want.clone();
        let (events, err) = run(&**second, req).await;
        assert_eq!((text_of(&events).as_str(), err), ("Snow in Oslo.", None));
    }
    let reqs = server.requests();
    assert_eq!(
        reqs[1].body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": [
                {"type": "text", "text": "Weather in Oslo and Rome? See map."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
            {"role": "assistant", "content": "Checking both.", "tool_calls": [
                {"id": "toolu_01A", "type": "function", "function": {"name": "weather__get", "arguments": "{\"city\":\"Oslo\"}"}},
                {"id": "toolu_01B", "type": "function", "function": {"name": "weather__get", "arguments": "{\"city\":\"Rome\"}"}}]},
            {"role": "tool", "tool_call_id": "toolu_01A", "content": "-3 C, snow"},
            {"role": "tool", "tool_call_id": "toolu_01B", "content": "Error: service unavailable"}
        ])
    );
    assert_eq!(
        reqs[3].body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "Weather in Oslo and Rome? See map."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "call_X", "name": "weather__get", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "call_Y", "name": "weather__get", "input": {"city": "Rome"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_X", "content": [{"type": "text", "text": "-3 C, snow"}]},
                {"type": "tool_result", "tool_use_id": "call_Y", "content": [{"type": "text", "text": "service unavailable"}], "is_error": true}]}
        ])
    );
}

#[tokio::test]
async fn prompt_tool_mode_parses_calls_from_text_and_sends_results_as_text() {
    let mut profile = profile_of("ollama");
    profile.quirks.tool_mode = ToolMode::Prompt;
    assert_eq!(profile.wire, Wire::OpenAi);
    let server = fake([
        Reply::text(&[
            "Sure.\n<tool_",
            "call>\n{\"name\": \"weather__get\", ",
            "\"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
        ]),
        Reply::text(&["It snows."]),
    ])
    .await;
    let p = provider_for(&server, profile, None, fast_retry(1));
    let mut req = request("weather in Oslo?");
    let answer = collect(
        p.stream(req.clone(), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(answer.stop, StopReason::ToolUse);
    assert_eq!(answer.message.parts.len(), 2, "{:?}", answer.message);
    assert_eq!(
        answer.message.parts[0],
        Part::Text {
            text: "Sure.\n".into()
        }
    );
    let (id, name, args) = answer.message.tool_calls().next().unwrap();
    assert_eq!((name, args), ("weather__get", &json!({"city": "Oslo"})));

    req.messages.push(answer.message.clone());
    req.messages.push(Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: id.into(),
            content: vec![ResultPart::Text {
                text: "-3 C".into(),
            }],
            is_error: false,
        }],
    });
    let (events, err) = run(&*p, req).await;
    assert_eq!((text_of(&events).as_str(), err), ("It snows.", None));

    let reqs = server.requests();
    for r in &reqs {
        assert!(
            r.body.get("tools").is_none(),
            "no native tools in prompt mode"
        );
        let system = r.body["messages"][0]["content"].as_str().unwrap();
        assert!(system.starts_with("You are terse.\n\n# Tools"), "{system}");
        assert!(system.contains("## weather__get"));
    }
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(
        msgs[2]["content"],
        "Sure.\n\n<tool_call>\n{\"name\": \"weather__get\", \"arguments\": {\"city\":\"Oslo\"}}\n</tool_call>"
    );
    assert_eq!(
        msgs[3],
        json!({"role": "user", "content": "<tool_result name=\"weather__get\">\n-3 C\n</tool_result>"})
    );
}

#[test]
fn the_binary_serves_a_scenario_file_and_records_requests() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.json");
    let record = dir.path().join("requests.jsonl");
    std::fs::write(
        &scenario,
        r#"{"replies": [{"text": ["from ", "the binary"]}]}"#,
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fake-llm-server"))
        .arg("--scenario")
        .arg(&scenario)
        .arg(format!("--record={}", record.display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _guard = KillOnDrop(child);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let (events, err) = rt.block_on(async {
        let p = switchboard_core::llm::build_provider(
            &profile_of("custom"),
            Some(&format!("{base}/v1")),
            None,
            reqwest::Client::new(),
        )
        .unwrap();
        run(&*p, request("hi")).await
    });
    assert_eq!((text_of(&events).as_str(), err), ("from the binary", None));
    let lines = std::fs::read_to_string(&record).unwrap();
    let recorded: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0]["path"], "/v1/chat/completions");
    assert_eq!(
        recorded[0]["body"]["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
}

#[tokio::test]
async fn drain_helper_sees_exactly_one_terminal_item() {
    let server = fake([Reply::text(&["x"])]).await;
    let p = provider_for(&server, profile_of("deepseek"), Some(KEY), fast_retry(1));
    let (events, err) = drain(
        p.stream(request("hi"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(err, None);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Done { .. }))
            .count(),
        1
    );
}

/// RD-03: a provider answering 307 to another port is not followed. With reqwest's default
/// client the second server received the body, and the `x-api-key` with it; now the request
/// ends at the first server with an error naming both URLs, and the second receives nothing.
#[tokio::test]
async fn a_redirect_is_not_followed_and_the_error_names_both_urls() {
    for vendor in VENDORS {
        let elsewhere = fake([Reply::text(&["followed"])]).await;
        let path = match vendor {
            "anthropic" => "/v1/messages",
            _ => "/v1/chat/completions",
        };
        let to = format!("http://{}{path}", elsewhere.addr());
        let first =
            fake([Reply::http_error(307, "redirect", "moved").header("location", &to)]).await;
        let p = provider_for(&first, profile_of(vendor), Some(KEY), fast_retry(3));
        let (events, err) = run(&*p, request("the prompt")).await;
        assert!(events.is_empty(), "{vendor}: {events:?}");
        let err = err.unwrap_or_else(|| panic!("{vendor}: no error"));
        let from = format!("http://{}{path}", first.addr());
        assert!(!err.retryable(), "{vendor}: {err:?}");
        let text = err.to_string();
        assert!(text.contains("HTTP 307"), "{vendor}: {text}");
        assert!(
            text.contains(&from) && text.contains(&to),
            "{vendor}: {text}"
        );
        assert!(!text.contains(KEY), "{vendor}: {text}");
        assert_eq!(
            first.requests().len(),
            1,
            "{vendor}: asked once, not retried"
        );
        assert!(
            elsewhere.requests().is_empty(),
            "{vendor}: the redirect target received {:?}",
            elsewhere.requests()
        );
    }
}
