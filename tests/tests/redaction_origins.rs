//! A redacted value goes back only where it came from (issue 25, point 5; RD-01), end to end
//! through the host: a scripted cloud model reads a server's result holding an e-mail address
//! (it sees a placeholder), then writes that placeholder into a call to another server, which
//! a rule allows. The person is asked anyway, told the value's kind, where it came from and
//! where it would go; they refuse, and the other server receives nothing. The same placeholder
//! in a call back to the server it came from goes through silently with the real value. The
//! audit log records the put-back by kind, digest and origin, and holds the value nowhere.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::approval::{Answer, ApprovalRequest, Effect};
use switchboard_core::chat::TurnEnd;
use switchboard_core::config::{NamedValue, ValueSource};
use switchboard_core::host::{Host, TurnInput};
use switchboard_core::llm::Part;
use switchboard_core::store::AuditQuery;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::turn;
use switchboard_tests::*;

/// Only in the `notes` server's environment, which its `env` tool returns.
const CONTACT: &str = "owner.secret@example.org";

/// The `tools/call` requests a recording fake server received: (tool, arguments).
fn received(record: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| {
            (
                m["params"]["name"].as_str().unwrap_or_default().to_owned(),
                m["params"]["arguments"].clone(),
            )
        })
        .collect()
}

/// Refuses every approval the turn asks for, keeping what was asked.
fn refuse_all(
    host: &Host,
) -> (
    Arc<Mutex<Vec<ApprovalRequest>>>,
    tokio::task::JoinHandle<()>,
) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let (host, seen) = (host.clone(), asked.clone());
    let task = tokio::spawn(async move {
        loop {
            for req in host.pending_approvals() {
                seen.lock().unwrap().push(req.clone());
                let _ = host
                    .answer_approval(&req.nonce.to_string(), Answer::DENY)
                    .await;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    (asked, task)
}

/// RD-01: asked (whatever the rules say), audited by kind and digest, nothing sent when
/// refused; back to the server it came from, silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_value_from_one_server_goes_to_another_only_when_the_person_says_so() {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new("call_1", "notes__env", &["{}"])]),
        Reply::calls(vec![ScriptedCall::new(
            "call_2",
            "mail__echo",
            &[&json!({ "text": "[REDACTED_EMAIL_1]" }).to_string()],
        )]),
        Reply::calls(vec![ScriptedCall::new(
            "call_3",
            "notes__echo",
            &[&json!({ "text": "again [REDACTED_EMAIL_1]" }).to_string()],
        )]),
        Reply::text(&["done"]),
    ]))
    .await
    .unwrap();
    let (host, tmp) = test_host().await;
    let notes_record = tmp.path().join("notes.jsonl");
    let mail_record = tmp.path().join("mail.jsonl");
    let mut notes = fake_spec("notes", &["--record", notes_record.to_str().unwrap()]);
    notes.values_mut().push(NamedValue {
        name: "CONTACT".into(),
        value: ValueSource::Plain(CONTACT.into()),
    });
    start_trusted(&host, notes).await;
    start_trusted(
        &host,
        fake_spec("mail", &["--record", mail_record.to_str().unwrap()]),
    )
    .await;
    // Rules allow every call of the turn: only the put-back may make anything ask.
    for (id, server, tool) in [
        ("allow-env", "notes", "env"),
        ("allow-notes-echo", "notes", "echo"),
        ("allow-mail-echo", "mail", "echo"),
    ] {
        host.put_policy_rule(user_rule(id, Effect::Allow, server, tool))
            .await
            .unwrap();
    }
    let cloud = provider_with_key(&host, "cloud", "openai", llm.openai_base()).await;
    let (asked, answerer) = refuse_all(&host);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(
            turn(
                cloud,
                TurnInput::Message(vec![Part::Text {
                    text: "Find the contact in the notes and mail them.".into(),
                }]),
            ),
            tx,
        )
        .await
        .unwrap();
    answerer.abort();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{:?}", out.end);

    // The model only ever saw the placeholder.
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4);
    for r in &reqs {
        assert!(!r.body.to_string().contains(CONTACT), "{}", r.body);
    }
    assert!(reqs[1].body.to_string().contains("[REDACTED_EMAIL_1]"));

    // Asked once, about the call to mail, despite the rule; told kind, origin, destination.
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].server.as_str(), "mail");
    let reason = &asked[0].reason;
    assert!(
        reason.contains("[REDACTED_EMAIL_1] (an e-mail address, from a result of server notes)"),
        "{reason}"
    );
    assert!(reason.contains("call to server mail"), "{reason}");
    assert!(reason.contains("No rule or grant allows this"), "{reason}");
    assert!(!reason.contains(CONTACT), "{reason}");

    // Refused: mail received nothing. Back to notes: sent, with the real value, unasked.
    assert!(
        received(&mail_record).is_empty(),
        "{:?}",
        received(&mail_record)
    );
    let got = received(&notes_record);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "env");
    assert_eq!(
        got[1],
        (
            "echo".to_owned(),
            json!({ "text": format!("again {CONTACT}") })
        )
    );

    // Audited by kind, digest and origin; the value is nowhere in the log.
    let log = host
        .audit_page(&AuditQuery {
            search: None,
            before: None,
            limit: 500,
        })
        .await
        .unwrap();
    let put_back: Vec<Value> = log
        .entries
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.detail_json).ok())
        .filter(|d| d["change"] == "put_back")
        .collect();
    assert_eq!(
        put_back.len(),
        1,
        "only the crossing is a put-back entry: {put_back:?}"
    );
    let detail = &put_back[0]["detail"];
    assert_eq!(detail["to"], "mail");
    let digest = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(CONTACT.as_bytes()))
    };
    assert_eq!(
        detail["values"],
        json!([{ "kind": "email", "sha256": digest, "from": ["a result of server notes"] }])
    );
    // (The server's configuration, which the person wrote with the value in it, is audited
    // as configured; no entry about the turn holds it.)
    let holding: Vec<Value> = log
        .entries
        .iter()
        .filter(|e| e.detail_json.contains(CONTACT))
        .filter_map(|e| serde_json::from_str::<Value>(&e.detail_json).ok())
        .filter(|d| !matches!(d["change"].as_str(), Some("server_added" | "trusted")))
        .collect();
    assert!(
        holding.is_empty(),
        "the value is in the audit log: {holding:?}"
    );
    host.shutdown().await;
}
