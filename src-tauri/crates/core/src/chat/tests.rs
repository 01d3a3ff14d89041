//! The turn loop against a scripted provider and a scripted tool runner.

mod budget;
mod span;
mod specs;

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::cap::{Outputs, READ_OUTPUT_TOOL};
use super::*;
use crate::ids::{ServerId, ToolRef};
use crate::llm::{
    ChatRequest, EventStream, LlmError, Message, Part, Provider, ResultPart, Role, StopReason,
    StreamEvent, ToolSpec, Usage,
};
use crate::mcp::catalog::{Content, Progress, ToolResult};

/// One scripted stream item; `None` means "hang here".
type Item = Option<Result<StreamEvent, LlmError>>;

/// Answers each request with the next script.
#[derive(Debug, Default)]
struct Scripted {
    scripts: Mutex<VecDeque<Vec<Item>>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    fn new(scripts: Vec<Vec<Item>>) -> Self {
        Self {
            scripts: Mutex::new(scripts.into()),
            seen: Mutex::default(),
        }
    }
}

impl Provider for Scripted {
    fn stream(
        &self,
        req: ChatRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        self.seen.lock().unwrap().push(req);
        let script = self.scripts.lock().unwrap().pop_front().unwrap_or_default();
        Box::pin(async move {
            let s = futures::stream::iter(script).then(|item| async move {
                match item {
                    Some(ev) => ev,
                    None => futures::future::pending().await,
                }
            });
            Ok(Box::pin(s) as EventStream)
        })
    }

    fn profile_id(&self) -> &str {
        "scripted"
    }
}

use futures::StreamExt;

fn text(t: &str) -> Item {
    Some(Ok(StreamEvent::TextDelta { text: t.into() }))
}

fn call(index: usize, id: &str, name: &str, args: &str) -> Vec<Item> {
    vec![
        Some(Ok(StreamEvent::ToolCallStart {
            index,
            id: id.into(),
            name: name.into(),
        })),
        Some(Ok(StreamEvent::ToolCallDelta {
            index,
            fragment: args.into(),
        })),
    ]
}

fn done(stop: StopReason) -> Item {
    Some(Ok(StreamEvent::Done { stop }))
}

fn usage(i: u64, o: u64) -> Item {
    Some(Ok(StreamEvent::Usage {
        usage: Usage {
            input_tokens: i,
            output_tokens: o,
            cached_input_tokens: 0,
        },
    }))
}

/// A tool the runner answers itself (an agent's built-in tool).
const LOCAL_TOOL: &str = "agent__note";

/// Tools `fs__read` and `fs__slow`; `read` echoes, `slow` reports progress then waits for
/// cancel; anything named `deny` is refused as if the user said no.
struct Runner {
    ran: Mutex<Vec<(String, Value)>>,
}

impl ToolRunner for Runner {
    fn specs(&self) -> Vec<ToolSpec> {
        [
            "fs__read", "fs__slow", "fs__deny", "fs__big", "fs__edit", LOCAL_TOOL,
        ]
        .iter()
        .map(|n| ToolSpec {
            name: (*n).into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        })
        .collect()
    }

    fn is_local(&self, llm_name: &str) -> bool {
        llm_name == LOCAL_TOOL
    }

    fn run_local(
        &self,
        _llm_name: &str,
        arguments: Map<String, Value>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        Box::pin(async move {
            Ok(ToolResult {
                content: vec![Content::Text {
                    text: format!("noted {}", Value::Object(arguments)),
                }],
                structured_content: None,
                is_error: false,
            })
        })
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        if llm_name == LOCAL_TOOL {
            return None;
        }
        if !self.specs().iter().any(|s| s.name == llm_name) {
            return None;
        }
        let tool = llm_name.strip_prefix("fs__")?;
        Some(ToolRef {
            server: ServerId::new("fs").unwrap(),
            tool: tool.into(),
        })
    }

    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        let ToolCall {
            tool,
            arguments,
            cancel,
            progress,
            started,
        } = call;
        // `edit` behaves as if the person changed the path before approving.
        let arguments = if tool.tool.as_ref() == "edit" {
            let mut edited = Map::new();
            edited.insert("path".into(), json!("/edited"));
            edited
        } else {
            arguments
        };
        match tool.tool.as_ref() {
            "deny" => {}
            "edit" => {
                let _ = started.send(super::Started {
                    edited: Some(arguments.clone()),
                    ..Default::default()
                });
            }
            _ => {
                let _ = started.send(super::Started::default());
            }
        }
        self.ran
            .lock()
            .unwrap()
            .push((tool.tool.to_string(), Value::Object(arguments.clone())));
        Box::pin(async move {
            let ok = |text: String| ToolResult {
                content: vec![Content::Text { text }],
                structured_content: None,
                is_error: false,
            };
            match &*tool.tool {
                "read" | "edit" => Ok(ok(format!("read {}", Value::Object(arguments)))),
                "big" => Ok(ok("x".repeat(50_000))),
                "deny" => Err(ToolError::DeniedByPerson {
                    reason: "no".into(),
                }),
                "slow" => {
                    let _ = progress.send(Progress {
                        progress: 1.0,
                        total: Some(3.0),
                        message: None,
                    });
                    cancel.cancelled().await;
                    Err(ToolError::Cancelled)
                }
                _ => Err(ToolError::Failed("unknown".into())),
            }
        })
    }
}

fn runner() -> Runner {
    Runner {
        ran: Mutex::default(),
    }
}

async fn turn(
    provider: &Scripted,
    tools: &Runner,
    cancel: CancellationToken,
) -> (TurnEnd, Vec<Message>, Vec<ChatEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut transcript = vec![Message::user_text("hi")];
    let mut outputs = Outputs::default();
    let mut cfg = TurnConfig::new("m");
    cfg.max_steps = 4;
    cfg.output_cap = 1000;
    let end = run_turn(
        provider,
        tools,
        &mut outputs,
        &cfg,
        &mut transcript,
        cancel,
        tx,
    )
    .await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (end, transcript, events)
}

#[tokio::test]
async fn text_only_answer_streams_and_ends() {
    let p = Scripted::new(vec![vec![
        text("Hel"),
        text("lo"),
        usage(10, 2),
        done(StopReason::EndTurn),
    ]]);
    let (end, transcript, events) = turn(&p, &runner(), CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    assert_eq!(transcript.len(), 2);
    assert_eq!(transcript[1].text(), "Hello");
    let deltas: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Hel", "lo"]);
    assert!(
        matches!(events.last(), Some(ChatEvent::Done { usage, .. }) if usage.input_tokens == 10)
    );
}

#[tokio::test]
async fn parallel_calls_run_and_results_go_back_in_order() {
    let mut first = call(0, "c1", "fs__read", r#"{"path":"/a"}"#);
    first.extend(call(1, "c2", "fs__nope", "{}"));
    first.extend(call(2, "c3", "fs__read", "{not json"));
    first.extend(call(3, "c4", "fs__deny", "{}"));
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first, vec![text("done"), done(StopReason::EndTurn)]]);
    let tools = runner();
    let (end, transcript, events) = turn(&p, &tools, CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    // Only the valid, known calls reached the runner.
    let ran = tools.ran.lock().unwrap().clone();
    assert_eq!(
        ran,
        vec![
            ("read".to_owned(), json!({"path": "/a"})),
            ("deny".to_owned(), json!({}))
        ]
    );
    // The results message answers every call, in order, errors marked.
    let Part::ToolResult { .. } = &transcript[2].parts[0] else {
        panic!("{:?}", transcript[2])
    };
    let results: Vec<(String, bool, String)> = transcript[2]
        .parts
        .iter()
        .map(|p| match p {
            Part::ToolResult {
                call_id,
                is_error,
                content,
            } => {
                let ResultPart::Text { text } = &content[0] else {
                    panic!()
                };
                (call_id.clone(), *is_error, text.clone())
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["c1", "c2", "c3", "c4"]
    );
    assert_eq!(
        results.iter().map(|r| r.1).collect::<Vec<_>>(),
        [false, true, true, true]
    );
    assert!(results[1].2.contains("no tool named"), "{}", results[1].2);
    assert!(results[2].2.contains("not valid JSON"), "{}", results[2].2);
    assert!(results[3].2.contains("did not allow"), "{}", results[3].2);
    assert_eq!(transcript[2].role, Role::User);
    // The second request carried the whole exchange.
    let seen = p.seen.lock().unwrap();
    assert_eq!(seen[1].messages.len(), 3);
    assert!(seen[0].tools.iter().any(|t| t.name == READ_OUTPUT_TOOL));
    let proposed = events
        .iter()
        .filter(|e| matches!(e, ChatEvent::ToolCallProposed { .. }))
        .count();
    assert_eq!(proposed, 4);
    // "Running" only for the call that was allowed and sent.
    let running: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolRunning { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(running, ["c1"]);
}

#[tokio::test]
async fn big_outputs_are_capped_and_paged_with_the_builtin_tool() {
    let mut first = call(0, "b1", "fs__big", "{}");
    first.push(done(StopReason::ToolUse));
    let mut second = call(
        0,
        "r1",
        READ_OUTPUT_TOOL,
        r#"{"call_id":"b1","offset":49990,"length":100}"#,
    );
    second.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![
        first,
        second,
        vec![text("ok"), done(StopReason::EndTurn)],
    ]);
    let (end, transcript, _) = turn(&p, &runner(), CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    let Part::ToolResult { content, .. } = &transcript[2].parts[0] else {
        panic!()
    };
    let shown: usize = content
        .iter()
        .map(|c| match c {
            ResultPart::Text { text } if !text.starts_with('[') => text.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(shown, 1000, "the model saw more than the cap");
    let Part::ToolResult {
        content, is_error, ..
    } = &transcript[4].parts[0]
    else {
        panic!()
    };
    assert!(!is_error);
    let ResultPart::Text { text } = &content[0] else {
        panic!()
    };
    assert!(
        text.starts_with("[characters 49990..50000 of 50000]"),
        "{text}"
    );
}

#[tokio::test]
async fn cancel_mid_stream_keeps_the_partial_answer() {
    let p = Scripted::new(vec![vec![text("partial ans"), None]]);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
    });
    let (end, transcript, events) =
        tokio::time::timeout(Duration::from_secs(5), turn(&p, &runner(), cancel))
            .await
            .expect("cancel did not stop the turn");
    assert_eq!(end, TurnEnd::Cancelled);
    assert_eq!(
        transcript.len(),
        1,
        "a partial answer is not part of the transcript"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, ChatEvent::Partial { message } if message.text() == "partial ans")));
    assert!(matches!(events.last(), Some(ChatEvent::Cancelled)));
}

#[tokio::test]
async fn cancel_while_a_tool_runs_cancels_the_call() {
    let mut first = call(0, "s1", "fs__slow", "{}");
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first]);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        stop.cancel();
    });
    let (end, transcript, events) =
        tokio::time::timeout(Duration::from_secs(5), turn(&p, &runner(), cancel))
            .await
            .expect("the running call was not cancelled");
    assert_eq!(end, TurnEnd::Cancelled);
    assert!(events
        .iter()
        .any(|e| matches!(e, ChatEvent::ToolProgress { call_id, .. } if call_id == "s1")));
    let Part::ToolResult { is_error, .. } = &transcript[2].parts[0] else {
        panic!()
    };
    assert!(is_error, "the cancelled call is answered, as an error");
}

#[tokio::test]
async fn a_failed_stream_and_the_step_limit_end_the_turn_with_a_reason() {
    let p = Scripted::new(vec![vec![
        text("so far"),
        Some(Err(LlmError::malformed(
            "the stream ended before the model finished its answer",
        ))),
    ]]);
    let (end, _, events) = turn(&p, &runner(), CancellationToken::new()).await;
    assert!(
        matches!(end, TurnEnd::Failed(ref e) if e.contains("ended before")),
        "{end:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, ChatEvent::Partial { message } if message.text() == "so far")));

    let looping: Vec<_> = (0..10)
        .map(|i| {
            let mut s = call(0, &format!("l{i}"), "fs__read", "{}");
            s.push(done(StopReason::ToolUse));
            s
        })
        .collect();
    let p = Scripted::new(looping);
    let (end, _, _) = turn(&p, &runner(), CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::StepLimit);
    assert_eq!(p.seen.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn edited_arguments_are_announced_and_the_model_is_told() {
    let mut first = call(0, "c1", "fs__edit", r#"{"path":"/secret"}"#);
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first, vec![text("ok"), done(StopReason::EndTurn)]]);
    let tools = runner();
    let (end, transcript, events) = turn(&p, &tools, CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    assert!(
        events.iter().any(|e| matches!(e,
            ChatEvent::ToolRunning { call_id, edited_arguments: Some(a), .. }
                if call_id == "c1" && *a == json!({"path": "/edited"}))),
        "{events:?}"
    );
    // The model's own call stays as it sent it; the result says what really ran.
    assert_eq!(
        transcript[1].tool_calls().next().map(|(_, _, a)| a.clone()),
        Some(json!({"path": "/secret"}))
    );
    let Part::ToolResult { content, .. } = &transcript[2].parts[0] else {
        panic!("{:?}", transcript[2])
    };
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            ResultPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(texts[0].contains("edited the arguments") && texts[0].contains("/edited"));
    assert_eq!(texts[1], r#"read {"path":"/edited"}"#);
}

#[tokio::test(start_paused = true)]
async fn a_silent_model_fails_the_turn_after_the_idle_timeout_keeping_the_partial() {
    // "Hel" arrives, then nothing: the stream hangs.
    let p = Scripted::new(vec![vec![text("Hel"), None]]);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut transcript = vec![Message::user_text("hi")];
    let mut cfg = TurnConfig::new("m");
    cfg.idle_timeout = Duration::from_secs(30);
    let end = run_turn(
        &p,
        &runner(),
        &mut Outputs::default(),
        &cfg,
        &mut transcript,
        CancellationToken::new(),
        tx,
    )
    .await;
    match end {
        TurnEnd::Failed(e) => assert!(e.contains("sent nothing for 30 s"), "{e}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ChatEvent::Partial { message } if message.text() == "Hel")),
        "{events:?}"
    );
}

#[tokio::test]
async fn local_tools_are_answered_by_the_runner_without_a_server() {
    let mut first = call(0, "c1", LOCAL_TOOL, r#"{"text":"found it"}"#);
    first.extend(call(1, "c2", LOCAL_TOOL, "[1]"));
    first.extend(call(2, "c3", "fs__read", r#"{"path":"/a"}"#));
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first, vec![text("ok"), done(StopReason::EndTurn)]]);
    let tools = runner();
    let (end, transcript, events) = turn(&p, &tools, CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    // Only the server tool reached `run`.
    let ran = tools.ran.lock().unwrap().clone();
    assert_eq!(ran, vec![("read".to_owned(), json!({"path": "/a"}))]);
    let results: Vec<(String, bool)> = transcript[2]
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult {
                content, is_error, ..
            } => Some((
                content
                    .iter()
                    .map(|c| match c {
                        ResultPart::Text { text } => text.clone(),
                        _ => String::new(),
                    })
                    .collect(),
                *is_error,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        results[0],
        (r#"noted {"text":"found it"}"#.to_owned(), false)
    );
    assert_eq!(
        results[1],
        ("The arguments must be a JSON object.".to_owned(), true)
    );
    assert!(!results[2].1, "{results:?}");
    // Proposed with no server behind it.
    assert!(events.iter().any(|e| matches!(
        e,
        ChatEvent::ToolCallProposed { name, server: None, .. } if name == LOCAL_TOOL
    )));
}
