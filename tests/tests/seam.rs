//! The one governed seam (AP-09), through the real host and a real fake server: every request
//! kind obeys deny rules and leaves an audit trail, arguments a person edits are decided
//! again, what a person attaches to a message counts for the trifecta guard, and the shells'
//! sources cannot reach around the seam.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::{Answer, Effect, On, Origin, Rule, Source};
use switchboard_core::host::{CallOptions, Host, HostError, SendRequest, TurnInput};
use switchboard_core::ids::{ConversationId, RunId, ServerId, ToolRef};
use switchboard_core::store::{AuditQuery, ServerTag};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{keyless_provider, turn};
use switchboard_tests::*;

fn rule(id: &str, effect: Effect, server: &str, on: On, name: &str) -> Rule {
    Rule {
        id: id.into(),
        effect,
        server: server.into(),
        on,
        tool: name.into(),
        origin: None,
        when: Vec::new(),
        limit: None,
        note: None,
        source: Source::User,
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn tref(server: &str, tool: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: tool.into(),
    }
}

/// What the fake server received (its `--record` file), one JSON-RPC line each.
fn received(record: &Path) -> String {
    std::fs::read_to_string(record).unwrap_or_default()
}

/// Every audit entry about `name` (a tool, prompt or URI), oldest first, as (kind, actor,
/// detail).
async fn trail(host: &Host, name: &str) -> Vec<(String, String, Value)> {
    let page = host
        .audit_page(&AuditQuery {
            limit: 500,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let mut out: Vec<_> = page
        .entries
        .into_iter()
        .filter(|e| e.tool.as_deref() == Some(name))
        .map(|e| {
            (
                e.kind.as_str().to_owned(),
                e.actor.to_string(),
                serde_json::from_str(&e.detail_json).unwrap(),
            )
        })
        .collect();
    out.reverse();
    out
}

fn kinds(t: &[(String, String, Value)]) -> Vec<&str> {
    t.iter().map(|(k, _, _)| k.as_str()).collect()
}

async fn recording_host() -> (Host, tempfile::TempDir, std::path::PathBuf) {
    let (host, dir) = test_host().await;
    let record = dir.path().join("received.jsonl");
    start_trusted(
        &host,
        fake_spec("fake", &["--record", record.to_str().unwrap()]),
    )
    .await;
    (host, dir, record)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_reads_prompts_and_completions_go_through_the_policy_and_the_audit_log() {
    let (host, _dir, record) = recording_host().await;
    let fake = sid("fake");
    let who: HashMap<String, String> = [("name".to_owned(), "zoe".to_owned())].into();

    // No rule: a person's own read and prompt are allowed by default, and audited whole.
    let text = host
        .read_resource(&fake, "fake://text", Origin::Manual, CallOptions::default())
        .await
        .unwrap();
    assert!(text[0].text.as_deref().unwrap().contains("hello"));
    host.get_prompt(&fake, "greet", &who, Origin::Manual, CallOptions::default())
        .await
        .unwrap();
    let done = host
        .complete_prompt_argument(&fake, "greet", "name", "b")
        .await
        .unwrap();
    assert!(!done.is_empty());
    let read = trail(&host, "fake://text").await;
    assert_eq!(
        kinds(&read),
        ["proposed", "decided", "started", "finished"],
        "{read:?}"
    );
    assert_eq!(read[0].2["request"], "resource");
    assert_eq!(read[0].1, "user");
    assert_eq!(read[1].2["decision"], "allow");
    // Completions are per keystroke: an allowed one leaves no entry, the prompt get does.
    let prompt = trail(&host, "greet").await;
    assert_eq!(
        kinds(&prompt),
        ["proposed", "decided", "started", "finished"]
    );
    assert_eq!(prompt[0].2["request"], "prompt");

    // Deny rules stop each kind before anything reaches the server.
    host.put_policy_rule(rule(
        "no-reads",
        Effect::Deny,
        "fake",
        On::Resource,
        "fake://*",
    ))
    .await
    .unwrap();
    host.put_policy_rule(rule("no-greet", Effect::Deny, "fake", On::Prompt, "greet"))
        .await
        .unwrap();
    let before = received(&record);
    let reads_before = before.matches("resources/read").count();
    let err = host
        .read_resource(&fake, "fake://text", Origin::Manual, CallOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, HostError::Denied { reason, .. } if reason.contains("no-reads")),
        "{err}"
    );
    let err = host
        .get_prompt(&fake, "greet", &who, Origin::Manual, CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Denied { .. }), "{err}");
    let err = host
        .complete_prompt_argument(&fake, "greet", "name", "b")
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Denied { .. }), "{err}");
    let after = received(&record);
    assert_eq!(after.matches("resources/read").count(), reads_before);
    assert_eq!(
        after.matches("prompts/get").count(),
        before.matches("prompts/get").count()
    );
    assert_eq!(
        after.matches("completion/complete").count(),
        before.matches("completion/complete").count()
    );
    // Each refusal is on record, completions included.
    let read = trail(&host, "fake://text").await;
    let last = &read[read.len() - 1];
    assert_eq!(last.0, "decided");
    assert_eq!(last.1, "policy:no-reads");
    assert_eq!(last.2["decision"], "deny");
    let prompt = trail(&host, "greet").await;
    let denials: Vec<_> = prompt
        .iter()
        .filter(|(k, a, d)| k == "decided" && a == "policy:no-greet" && d["decision"] == "deny")
        .collect();
    assert_eq!(denials.len(), 2, "the get and the completion: {prompt:?}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_stops_a_persons_own_tool_call_and_an_ask_rule_asks_for_a_read() {
    let (host, _dir, record) = recording_host().await;
    host.put_policy_rule(rule("noecho", Effect::Deny, "fake", On::Tool, "echo"))
        .await
        .unwrap();
    let err = host
        .run_tool(
            &tref("fake", "echo"),
            args(json!({"text": "x"})),
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Denied { .. }), "{err}");
    assert!(!received(&record).contains("\"tools/call\""));
    let t = trail(&host, "echo").await;
    assert_eq!(kinds(&t), ["proposed", "decided"], "{t:?}");
    assert_eq!(t[1].1, "policy:noecho");

    // An ask rule on reads parks the read for a person, by nonce, like a tool call.
    host.put_policy_rule(rule("ask-reads", Effect::Ask, "fake", On::Any, "fake://*"))
        .await
        .unwrap();
    let reader = host.clone();
    let read = tokio::spawn(async move {
        reader
            .read_resource(
                &sid("fake"),
                "fake://text",
                Origin::Manual,
                CallOptions::default(),
            )
            .await
    });
    assert!(
        eventually(Duration::from_secs(5), || !host
            .pending_approvals()
            .is_empty())
        .await
    );
    let asked = host.pending_approvals().remove(0);
    assert_eq!(asked.kind.as_str(), "resource");
    assert_eq!(asked.tool, "fake://text");
    // A read's "arguments" cannot be edited.
    let edit = Answer::Allow {
        arguments: Some(args(json!({"uri": "fake://item/1"}))),
        scope: Default::default(),
        constraints: Vec::new(),
    };
    assert!(host
        .answer_approval(asked.nonce.as_str(), edit)
        .await
        .is_err());
    host.answer_approval(asked.nonce.as_str(), Answer::ALLOW)
        .await
        .unwrap();
    assert!(read.await.unwrap().is_ok());
    let t = trail(&host, "fake://text").await;
    let actors: Vec<&str> = t.iter().map(|(_, a, _)| a.as_str()).collect();
    assert!(
        actors.contains(&"policy:ask-reads") && actors.contains(&"user"),
        "{t:?}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_a_person_edits_are_decided_again() {
    let (host, _dir, record) = recording_host().await;
    let mut no_etc = rule("no-etc", Effect::Deny, "fake", On::Tool, "*");
    no_etc.when = vec![switchboard_core::approval::Condition::PathUnder {
        arg: Some("text".into()),
        prefixes: vec!["/etc".into()],
    }];
    host.put_policy_rule(no_etc).await.unwrap();
    let conversation = ConversationId::random();
    let runner = host.clone();
    let call = tokio::spawn(async move {
        runner
            .run_tool(
                &tref("fake", "echo"),
                args(json!({"text": "/tmp/harmless"})),
                Origin::model(conversation),
                CallOptions::default(),
            )
            .await
    });
    assert!(
        eventually(Duration::from_secs(5), || !host
            .pending_approvals()
            .is_empty())
        .await
    );
    let asked = host.pending_approvals().remove(0);
    // The person "approves" with arguments pointing into /etc: the deny rule still applies,
    // and the request stays pending so they can fix the edit.
    let into_etc = Answer::Allow {
        arguments: Some(args(json!({"text": "/etc/shadow"}))),
        scope: Default::default(),
        constraints: Vec::new(),
    };
    let err = host
        .answer_approval(asked.nonce.as_str(), into_etc)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, HostError::Denied { reason, .. } if reason.contains("edited") && reason.contains("no-etc")),
        "{err}"
    );
    assert_eq!(host.pending_approvals().len(), 1, "still pending");
    // A harmless edit runs, with the person's arguments.
    host.answer_approval(
        asked.nonce.as_str(),
        Answer::Allow {
            arguments: Some(args(json!({"text": "/tmp/edited"}))),
            scope: Default::default(),
            constraints: Vec::new(),
        },
    )
    .await
    .unwrap();
    let r = call.await.unwrap().unwrap();
    assert_eq!(r.content.len(), 1);
    let got = received(&record);
    assert!(!got.contains("/etc/shadow"));
    assert!(got.contains("/tmp/edited"));
    let t = trail(&host, "echo").await;
    assert_eq!(
        kinds(&t),
        ["proposed", "decided", "decided", "edited", "started", "finished"],
        "{t:?}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_person_attaches_counts_for_the_trifecta_guard() {
    let (host, _dir) = test_host().await;
    // notes: private data and untrusted content in one; out: can send data away.
    for (name, tags) in [
        (
            "notes",
            vec![ServerTag::PrivateData, ServerTag::UntrustedContent],
        ),
        ("out", vec![ServerTag::External]),
    ] {
        start_trusted(&host, fake_spec(name, &[])).await;
        host.set_server_tags(&sid(name), &tags).await.unwrap();
    }
    host.put_policy_rule(rule("post-ok", Effect::Allow, "out", On::Tool, "echo"))
        .await
        .unwrap();
    let post = || {
        Reply::calls(vec![ScriptedCall::new(
            "c1",
            "out__echo",
            &[r#"{"text":"the notes"}"#],
        )])
    };
    let llm = FakeLlm::spawn(Scenario::new([
        post(),
        Reply::text(&["sent"]),
        post(),
        Reply::text(&["asked"]),
    ]))
    .await
    .unwrap();
    let provider = keyless_provider(&host, "fake", llm.openai_base()).await;
    let send = |attached: Vec<ServerId>| {
        let host = host.clone();
        let provider = provider.clone();
        tokio::spawn(async move {
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            host.send_message(
                SendRequest {
                    attached,
                    ..turn(provider, TurnInput::text("post my notes"))
                },
                tx,
            )
            .await
        })
    };
    // Nothing attached: the rule lets the post through without asking.
    send(Vec::new()).await.unwrap().unwrap();
    assert!(host.pending_approvals().is_empty());

    // The notes resource attached by hand: the same post now asks, with the warning.
    let contents = host
        .read_resource(
            &sid("notes"),
            "fake://text",
            Origin::Attach { conversation: None },
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(!contents.is_empty());
    let turn = send(vec![sid("notes")]);
    assert!(
        eventually(Duration::from_secs(10), || !host
            .pending_approvals()
            .is_empty())
        .await
    );
    let asked = host.pending_approvals().remove(0);
    assert_eq!(asked.tool, "echo");
    assert!(
        asked.warning.as_deref().is_some_and(|w| w.contains("leak")),
        "{asked:?}"
    );
    host.answer_approval(asked.nonce.as_str(), Answer::Deny { reason: None })
        .await
        .unwrap();
    turn.await.unwrap().unwrap();
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_run_by_its_host_minted_id_withdraws_the_question() {
    let (host, _dir, _record) = recording_host().await;
    let run = host.open_run();
    let runner = host.clone();
    let id = run.clone();
    let call = tokio::spawn(async move {
        runner
            .run_tool(
                &tref("fake", "echo"),
                args(json!({"text": "x"})),
                Origin::Manual,
                CallOptions::default().run(id),
            )
            .await
    });
    assert!(
        eventually(Duration::from_secs(5), || !host
            .pending_approvals()
            .is_empty())
        .await
    );
    // A run id the host did not mint cancels nothing; the real one does.
    assert!(!host.cancel_run(&RunId::random()));
    assert!(host.cancel_run(&run));
    let err = call.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("cancel"), "{err}");
    assert!(host.pending_approvals().is_empty());
    // Once over, the run is closed: cancelling again finds nothing.
    assert!(!host.cancel_run(&run));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_governance_change_of_a_server_is_audited() {
    let (host, dir, _record) = recording_host().await;
    let fake = sid("fake");
    host.set_server_tags(&fake, &[ServerTag::External, ServerTag::PrivateData])
        .await
        .unwrap();
    host.set_result_review(&fake, switchboard_core::store::ResultReview::Always)
        .await
        .unwrap();
    host.set_tool_enabled(&tref("fake", "echo"), false)
        .await
        .unwrap();
    host.set_server_roots(&fake, &[dir.path().to_path_buf()])
        .await
        .unwrap();
    let page = host
        .audit_page(&AuditQuery {
            limit: 500,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let config: Vec<(String, Value)> = page
        .entries
        .iter()
        .rev()
        .filter(|e| e.kind.as_str() == "config" && e.server.as_deref() == Some("fake"))
        .map(|e| {
            assert_eq!(e.actor, "user");
            let d: Value = serde_json::from_str(&e.detail_json).unwrap();
            (
                d["change"].as_str().unwrap().to_owned(),
                d["detail"].clone(),
            )
        })
        .collect();
    let changes: Vec<&str> = config.iter().map(|(c, _)| c.as_str()).collect();
    for want in ["tags", "result_review", "tool_switch", "roots"] {
        assert!(changes.contains(&want), "{want} missing: {config:?}");
    }
    let detail = |c: &str| &config.iter().find(|(x, _)| x == c).unwrap().1;
    assert_eq!(detail("tags")["tags"], json!(["external", "private-data"]));
    assert_eq!(detail("result_review")["results"], "always");
    assert_eq!(
        detail("tool_switch"),
        &json!({"tool": "echo", "enabled": false})
    );
    assert!(detail("roots")["roots"][0]
        .as_str()
        .unwrap()
        .starts_with("file://"));
    assert!(host.verify_audit().await.unwrap().ok);
    host.shutdown().await;
}

/// The shells reach the core only through `Host`: no store, no secret store, no connection,
/// no harness doors, no ungoverned call.
#[test]
fn the_shells_do_not_reach_around_the_seam() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["src-tauri/src", "src-tauri/crates/cli/src"] {
        collect_rs(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} shell files", files.len());
    let forbidden = [
        "harness",
        "mcp::connection",
        ".store()",
        ".secrets()",
        ".connection()",
        ".call_tool(",
    ];
    let mut hits = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in forbidden {
                if code.contains(word) {
                    hits.push(format!("{}:{}: {word}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "the shells reach around the seam:\n{}",
        hits.join("\n")
    );
    // And the desktop and CLI crates do not turn the harness feature on.
    for manifest in ["Cargo.toml", "src-tauri/crates/cli/Cargo.toml"] {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        assert!(
            !text.contains("\"harness\""),
            "{manifest} enables the harness"
        );
    }
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
