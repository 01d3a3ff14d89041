//! The loop asks the runner for its tools before every model call, so a tool a runner starts
//! offering during a turn (progressive discovery's load) is in the next request.

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

/// Offers `grow`; once it ran, also `fs__later`.
#[derive(Default)]
struct Growing {
    grown: AtomicBool,
}

impl ToolRunner for Growing {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut names = vec!["grow"];
        if self.grown.load(Ordering::SeqCst) {
            names.push("fs__later");
        }
        names
            .into_iter()
            .map(|n| ToolSpec {
                name: n.into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
            })
            .collect()
    }

    fn resolve(&self, _llm_name: &str) -> Option<ToolRef> {
        None
    }

    fn run(&self, _call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async { Err(ToolError::Failed("no server here".into())) })
    }

    fn is_local(&self, llm_name: &str) -> bool {
        llm_name == "grow"
    }

    fn run_local(
        &self,
        _llm_name: &str,
        _arguments: Map<String, Value>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        self.grown.store(true, Ordering::SeqCst);
        Box::pin(async {
            Ok(ToolResult {
                content: vec![Content::Text {
                    text: "grown".into(),
                }],
                structured_content: None,
                is_error: false,
            })
        })
    }
}

#[tokio::test]
async fn a_tool_offered_mid_turn_is_in_the_next_request() {
    let mut first = call(0, "c1", "grow", "{}");
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first, vec![text("ok"), done(StopReason::EndTurn)]]);
    let tools = Growing::default();
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut transcript = vec![Message::user_text("hi")];
    let end = run_turn(
        &p,
        &tools,
        &mut Outputs::default(),
        &TurnConfig::new("m"),
        &mut transcript,
        CancellationToken::new(),
        tx,
    )
    .await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    let seen = p.seen.lock().unwrap();
    let names =
        |i: usize| -> Vec<String> { seen[i].tools.iter().map(|t| t.name.clone()).collect() };
    assert_eq!(names(0), ["grow", READ_OUTPUT_TOOL]);
    assert_eq!(names(1), ["grow", "fs__later", READ_OUTPUT_TOOL]);
}
