//! Budgets (issue 15): the loop stops a turn that spent its tokens, cost, tool calls or time,
//! and says which.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{call, done, runner, text, usage, Scripted};
use crate::chat::cap::Outputs;
use crate::chat::{run_turn, TurnBudget, TurnConfig, TurnEnd};
use crate::llm::{Message, StopReason};
/// A turn with `budget` against `provider`; what it ended with and what the runner ran.
async fn budgeted(provider: &Scripted, budget: TurnBudget) -> (TurnEnd, Vec<(String, Value)>) {
    let tools = runner();
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut transcript = vec![Message::user_text("hi")];
    let mut cfg = TurnConfig::new("m");
    cfg.budget = budget;
    let end = run_turn(
        provider,
        &tools,
        &mut Outputs::default(),
        &cfg,
        &mut transcript,
        CancellationToken::new(),
        tx,
    )
    .await;
    let ran = tools.ran.lock().unwrap().clone();
    (end, ran)
}

fn reason(end: &TurnEnd) -> &str {
    match end {
        TurnEnd::BudgetExceeded(why) => why,
        other => panic!("expected a budget stop, got {other:?}"),
    }
}

#[tokio::test]
async fn a_token_budget_stops_the_turn_before_the_next_model_call() {
    let mut first = call(0, "c1", "fs__read", r#"{"path":"/a"}"#);
    first.push(usage(100, 10));
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first, vec![text("more"), done(StopReason::EndTurn)]]);
    let budget = TurnBudget {
        tokens: Some(50),
        ..TurnBudget::default()
    };
    let (end, ran) = budgeted(&p, budget).await;
    assert!(reason(&end).contains("50 tokens"), "{end:?}");
    assert_eq!(ran.len(), 1, "the call of the first answer ran");
    assert_eq!(p.seen.lock().unwrap().len(), 1, "no second model call");
}

#[tokio::test]
async fn a_tool_call_budget_runs_what_it_allows_and_refuses_the_rest() {
    let mut first = call(0, "c1", "fs__read", r#"{"path":"/1"}"#);
    first.extend(call(1, "c2", "fs__read", r#"{"path":"/2"}"#));
    first.extend(call(2, "c3", "fs__read", r#"{"path":"/3"}"#));
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first, vec![text("more"), done(StopReason::EndTurn)]]);
    let budget = TurnBudget {
        tool_calls: Some(2),
        ..TurnBudget::default()
    };
    let (end, ran) = budgeted(&p, budget).await;
    assert!(reason(&end).contains("2 tool calls"), "{end:?}");
    let paths: Vec<&Value> = ran.iter().map(|(_, a)| &a["path"]).collect();
    assert_eq!(paths, [&json!("/1"), &json!("/2")]);
    assert_eq!(p.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_time_budget_stops_a_call_that_hangs() {
    let mut first = call(0, "c1", "fs__slow", "{}");
    first.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![first]);
    let budget = TurnBudget {
        deadline: Some(tokio::time::Instant::now() + Duration::from_millis(300)),
        ..TurnBudget::default()
    };
    let (end, ran) = budgeted(&p, budget).await;
    assert!(reason(&end).contains("time"), "{end:?}");
    assert_eq!(ran.len(), 1, "the slow call started and was cancelled");
}

#[tokio::test]
async fn a_cost_budget_without_a_known_price_stops_before_spending() {
    let p = Scripted::new(vec![vec![text("hi"), done(StopReason::EndTurn)]]);
    let budget = TurnBudget {
        cost_usd: Some(1.0),
        ..TurnBudget::default()
    };
    let (end, _) = budgeted(&p, budget.clone()).await;
    assert!(reason(&end).contains("price is unknown"), "{end:?}");
    assert!(p.seen.lock().unwrap().is_empty());
    // With a price, the first call goes out; 2M tokens at $1/M in is over the $1 budget.
    let mut answer = call(0, "c1", "fs__read", r#"{"path":"/a"}"#);
    answer.push(usage(2_000_000, 0));
    answer.push(done(StopReason::ToolUse));
    let p = Scripted::new(vec![answer, vec![text("more"), done(StopReason::EndTurn)]]);
    let priced = TurnBudget {
        price: Some(crate::llm::limits::Price {
            input: 1.0,
            output: 1.0,
        }),
        ..budget
    };
    let (end, _) = budgeted(&p, priced).await;
    assert!(reason(&end).contains("$1.0000"), "{end:?}");
    assert_eq!(p.seen.lock().unwrap().len(), 1);
}
