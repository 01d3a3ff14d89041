//! The run tree live while it runs (issue 15, point 4): a supervisor delegates to a worker whose
//! model makes a tool call and then stalls (its next request is held by a gate on loopback until
//! the test releases it). While it is held, the stored tree already shows the worker running
//! with its call, the tokens its first answer reported and their cost, and the supervisor
//! running with its delegate call; once released, both end with the whole count. Before nodes
//! were written while they ran, both showed 0 calls and no tokens until they ended. The same
//! for a conversation answered by a supervisor agent (its root node is the conversation's
//! turn, counted by `host/chat.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use switchboard_core::agent_data::{AgentName, AgentProfile};
use switchboard_core::agents::AgentRunNode;
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::{Host, Lineage, SendRequest, TurnInput, DELEGATE_TOOL};
use switchboard_core::ids::{ConversationId, ProviderName};
use switchboard_core::llm::limits::price;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::turn;
use switchboard_tests::*;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

/// A TCP relay on 127.0.0.1 in front of `upstream` that holds connection number `held`
/// (0-based) until released. The fake model answers one request per connection (`connection:
/// close`), so connection `n` is request `n`.
struct Gate {
    addr: std::net::SocketAddr,
    accepted: Arc<AtomicUsize>,
    open: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Gate {
    async fn spawn(upstream: std::net::SocketAddr, held: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(Notify::new());
        let (count, gate) = (accepted.clone(), open.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                let n = count.fetch_add(1, Ordering::SeqCst);
                let gate = gate.clone();
                tokio::spawn(async move {
                    if n == held {
                        gate.notified().await;
                    }
                    let mut server = TcpStream::connect(upstream).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
        Self {
            addr,
            accepted,
            open,
            task,
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn agent(host: &Host, pname: &str, kind: &str, base: String, name: &str, model: &str) {
    let provider = provider_with_key(host, pname, kind, base).await;
    let mut p = AgentProfile::new(AgentName::new(name).unwrap(), provider);
    p.description = format!("the {name}");
    p.model = Some(model.into());
    p.delegates = (name == "worker").then(Vec::new);
    host.add_agent(p).await.unwrap();
}

/// Polls the tree of `lineage`'s run (bounded) until `ready` holds, then returns it.
async fn tree_when(
    host: &Host,
    lineage: &Lineage,
    ready: impl Fn(&[AgentRunNode]) -> bool,
) -> Vec<AgentRunNode> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let tree = host.agent_run_tree(&lineage.run).await.unwrap();
        if ready(&tree) || tokio::time::Instant::now() >= deadline {
            return tree;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_stalled_sub_agent_shows_its_call_and_spend_while_it_runs() {
    let (sup_first, sup_last) = ((1_000, 100), (1_500, 50));
    let (work_first, work_last) = ((4_000, 300), (5_000, 200));
    let args = serde_json::json!({"agent": "worker", "task": "Note the finding."}).to_string();
    let sup = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new("call_d", DELEGATE_TOOL, &[&args])]).with_usage(
            sup_first.0,
            sup_first.1,
            0,
        ),
        Reply::text(&["The worker noted it."]).with_usage(sup_last.0, sup_last.1, 0),
    ]))
    .await
    .unwrap();
    let note = serde_json::json!({"text": "finding one"}).to_string();
    let work = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "toolu_1",
            "switchboard_note_add",
            &[&note],
        )])
        .with_usage(work_first.0, work_first.1, 0),
        Reply::text(&["Noted."]).with_usage(work_last.0, work_last.1, 0),
    ]))
    .await
    .unwrap();
    // The worker's second request (after its tool call) waits at the gate.
    let gate = Gate::spawn(work.addr(), 1).await;
    let (host, _tmp) = test_host().await;
    agent(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "planner",
        "gpt-4o",
    )
    .await;
    agent(
        &host,
        "an",
        "anthropic",
        gate.base(),
        "worker",
        "claude-haiku-4-5",
    )
    .await;
    let sup_price = price("openai", "gpt-4o").unwrap();
    let work_price = price("anthropic", "claude-haiku-4-5").unwrap();

    let lineage = Lineage::root(ConversationId::random());
    let task = {
        let (host, lineage) = (host.clone(), lineage.clone());
        tokio::spawn(async move {
            host.run_agent_task(
                lineage,
                AgentName::new("planner").unwrap(),
                "Have the finding noted.".into(),
                CancellationToken::new(),
            )
            .await
            .unwrap()
        })
    };

    // Held: the worker's model has its second request and no answer to it.
    let deadline = tokio::time::Instant::now() + WAIT;
    while gate.accepted.load(Ordering::SeqCst) < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        gate.accepted.load(Ordering::SeqCst),
        2,
        "the worker never asked its model again; tree {:?}; approvals {:?}; its model saw {:?}",
        host.agent_run_tree(&lineage.run).await.unwrap(),
        host.pending_approvals().len(),
        work.requests()
            .iter()
            .map(|r| (&r.path, r.outcome))
            .collect::<Vec<_>>()
    );
    let tree = tree_when(&host, &lineage, |t| {
        t.len() == 2 && t[1].tool_calls >= 1 && t[0].tool_calls >= 1
    })
    .await;
    assert_eq!(tree.len(), 2, "{tree:?}");
    let (planner, worker) = (&tree[0], &tree[1]);
    assert_eq!(
        (worker.agent.as_str(), worker.status.as_str()),
        ("worker", "running"),
        "{tree:?}"
    );
    assert_eq!(
        worker.tool_calls, 1,
        "the worker's call shows while it runs: {tree:?}"
    );
    assert_eq!(
        (worker.usage_input, worker.usage_output),
        work_first,
        "{tree:?}"
    );
    let so_far = work_price.cost(work_first.0, work_first.1);
    assert!(
        (worker.cost_usd.unwrap() - so_far).abs() < 1e-12,
        "{tree:?}"
    );
    assert_eq!(worker.ended_ms, None);
    assert_eq!(
        (planner.agent.as_str(), planner.status.as_str()),
        ("planner", "running"),
        "{tree:?}"
    );
    assert_eq!(planner.tool_calls, 1, "the delegate call shows: {tree:?}");
    assert_eq!((planner.usage_input, planner.usage_output), sup_first);
    assert_eq!(
        sup.requests().len(),
        1,
        "the supervisor waits for its worker"
    );

    // Released: both end with everything they spent.
    gate.open.notify_one();
    let out = tokio::time::timeout(WAIT, task)
        .await
        .expect("the run ended")
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    let (planner, worker) = (&tree[0], &tree[1]);
    assert_eq!(
        (worker.status.as_str(), worker.tool_calls),
        ("done", 1),
        "{tree:?}"
    );
    let w = (work_first.0 + work_last.0, work_first.1 + work_last.1);
    assert_eq!((worker.usage_input, worker.usage_output), w, "{tree:?}");
    assert!((worker.cost_usd.unwrap() - work_price.cost(w.0, w.1)).abs() < 1e-12);
    assert!(worker.ended_ms.is_some());
    let s = (sup_first.0 + sup_last.0, sup_first.1 + sup_last.1);
    assert_eq!(
        (planner.status.as_str(), planner.tool_calls),
        ("done", 1),
        "{tree:?}"
    );
    assert_eq!((planner.usage_input, planner.usage_output), s, "{tree:?}");
    assert!((planner.cost_usd.unwrap() - sup_price.cost(s.0, s.1)).abs() < 1e-12);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversations_supervisor_shows_its_delegate_call_while_its_worker_runs() {
    let args = serde_json::json!({"agent": "worker", "task": "Note the finding."}).to_string();
    let sup = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new("call_d", DELEGATE_TOOL, &[&args])])
            .with_usage(1_000, 100, 0),
        Reply::text(&["The worker noted it."]).with_usage(1_500, 50, 0),
    ]))
    .await
    .unwrap();
    let work = FakeLlm::spawn(Scenario::new([
        Reply::text(&["Noted."]).with_usage(4_000, 300, 0)
    ]))
    .await
    .unwrap();
    // The worker's first request waits at the gate: the supervisor's turn is mid-call.
    let gate = Gate::spawn(work.addr(), 0).await;
    let (host, _tmp) = test_host().await;
    agent(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "planner",
        "gpt-4o",
    )
    .await;
    agent(
        &host,
        "an",
        "anthropic",
        gate.base(),
        "worker",
        "claude-haiku-4-5",
    )
    .await;
    let conversation = host.create_conversation("Live").await.unwrap().id;
    let send = {
        let (host, conversation) = (host.clone(), conversation.clone());
        tokio::spawn(async move {
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            host.send_message(
                SendRequest {
                    conversation: Some(conversation),
                    agent: Some(AgentName::new("planner").unwrap()),
                    ..turn(
                        ProviderName::new("oa").unwrap(),
                        TurnInput::text("Have the finding noted."),
                    )
                },
                tx,
            )
            .await
            .unwrap()
        })
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut nodes = Vec::new();
    while tokio::time::Instant::now() < deadline {
        nodes = host.conversation_agent_runs(&conversation).await.unwrap();
        let held = gate.accepted.load(Ordering::SeqCst) == 1;
        if held && nodes.len() == 2 && nodes[0].tool_calls >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let root = &nodes[0];
    assert_eq!(
        (root.agent.as_str(), root.status.as_str(), root.tool_calls),
        ("planner", "running", 1),
        "the supervisor's delegate call shows while its worker runs: {nodes:?}"
    );
    assert_eq!((root.usage_input, root.usage_output), (1_000, 100));
    assert_eq!(nodes[1].status, "running", "{nodes:?}");

    gate.open.notify_one();
    let out = tokio::time::timeout(WAIT, send)
        .await
        .expect("the turn ended")
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    let nodes = host.conversation_agent_runs(&conversation).await.unwrap();
    assert_eq!(
        (
            nodes[0].status.as_str(),
            nodes[0].tool_calls,
            nodes[0].usage_input
        ),
        ("done", 1, 2_500),
        "{nodes:?}"
    );
    host.shutdown().await;
}
