//! Outbound redaction (issue 16, point 5), end to end through the host: canary secrets and
//! personal data in the person's message, in an attached resource's text and in a tool result
//! never reach the scripted model servers of either vendor (they record every request), while
//! a tool call that uses a placeholder reaches the fake MCP server (which records what it
//! receives) with the real value, and the approval prompt names the placeholder put back. A
//! local (ollama-kind) provider and a conversation with redaction switched off get the real
//! text. The audit log says that redaction happened and never holds the values.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::approval::{Answer, Origin};
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::host::{CallOptions, Host, SendRequest, TurnInput};
use switchboard_core::ids::{ConversationId, ProviderName};
use switchboard_core::llm::Part;
use switchboard_core::outbound::RedactionSettings;
use switchboard_core::store::AuditQuery;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{host_with_recorder, send_collect, turn};
use switchboard_tests::*;

const API_KEY: &str = "sk-canaryKey0123456789abcdefXYZ";
const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLWNhbmFyeQ";
const PEM_BODY: &str = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCanaryPemBody";
const URL_PASSWORD: &str = "hunter2canary";
const EMAIL: &str = "canary.person@example.org";
const CARD: &str = "4111 1111 1111 1111";
const PHONE: &str = "+44 20 7946 0958";
const CUSTOM: &str = "PROJECT-FALCON-7731";
/// In the attached resource only.
const ATTACHED_EMAIL: &str = "attached.canary@example.net";
/// In a tool result only (the model writes it into a call; the server echoes it back).
const RESULT_TOKEN: &str = "ghp_resultCanary0123456789abcdef";

fn message() -> String {
    format!(
        "Write to {EMAIL} about key {API_KEY} and token {JWT}. The database is \
         https://deploy:{URL_PASSWORD}@db.example.com/prod, card {CARD}, call me on {PHONE}, \
         codename {CUSTOM}.\n-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----"
    )
}

/// Every canary, as it would appear in a request body's JSON text.
fn canaries() -> Vec<&'static str> {
    vec![
        API_KEY,
        JWT,
        PEM_BODY,
        URL_PASSWORD,
        EMAIL,
        CARD,
        PHONE,
        CUSTOM,
        ATTACHED_EMAIL,
        RESULT_TOKEN,
    ]
}

/// The `tools/call` arguments the fake server received.
fn received(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"]["arguments"].clone())
        .collect()
}

/// A host with the recording fake server `fs` and the custom pattern set.
async fn setup() -> (Host, tempfile::TempDir, std::path::PathBuf) {
    let (host, tmp, record) = host_with_recorder("fs").await;
    host.redaction()
        .save_settings(RedactionSettings {
            patterns: vec![r"PROJECT-FALCON-\d+".into()],
            ..RedactionSettings::default()
        })
        .unwrap();
    (host, tmp, record)
}

/// The person's message with an attached resource's text inlined, as the window sends it.
async fn parts_with_attachment(host: &Host) -> Vec<Part> {
    let read = host
        .read_resource(
            &sid("fs"),
            &format!("fake://item/{ATTACHED_EMAIL}"),
            Origin::Attach { conversation: None },
            CallOptions::default(),
        )
        .await
        .unwrap();
    let attached = read[0].text.clone().unwrap();
    assert!(attached.contains(ATTACHED_EMAIL), "{attached}");
    vec![
        Part::Text { text: message() },
        Part::Text {
            text: format!("<attachment uri=\"fake://item\">\n{attached}\n</attachment>"),
        },
    ]
}

async fn send(
    host: &Host,
    provider: &ProviderName,
    conversation: Option<ConversationId>,
    parts: Vec<Part>,
) -> (TurnEnd, Vec<ChatEvent>) {
    let (end, events, _) = send_in(host, provider, conversation, parts).await;
    (end, events)
}

/// [`send`], also returning the conversation.
async fn send_in(
    host: &Host,
    provider: &ProviderName,
    conversation: Option<ConversationId>,
    parts: Vec<Part>,
) -> (TurnEnd, Vec<ChatEvent>, ConversationId) {
    let (out, events) = send_collect(
        host,
        SendRequest {
            conversation,
            attached: vec![sid("fs")],
            ..turn(provider.clone(), TurnInput::Message(parts))
        },
    )
    .await;
    (out.end, events, out.conversation)
}

/// Answers the one approval a turn asks for, returning its reason and arguments.
fn answer_one(host: &Host) -> tokio::task::JoinHandle<(String, Value)> {
    let answerer = host.clone();
    tokio::spawn(async move {
        loop {
            if let Some(req) = answerer.pending_approvals().into_iter().next() {
                answerer
                    .answer_approval(&req.nonce.to_string(), Answer::ALLOW)
                    .await
                    .unwrap();
                return (req.reason, req.arguments);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn nothing_leaves_for(kind: &str) {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "fs__echo",
            &[
                &json!({ "text": format!("to [REDACTED_EMAIL_1] with {RESULT_TOKEN}") })
                    .to_string(),
            ],
        )]),
        // The answer names a placeholder, split over two deltas.
        Reply::text(&["Sent to [REDACT", "ED_EMAIL_1]."]),
    ]))
    .await
    .unwrap();
    let (host, _tmp, record) = setup().await;
    let base = match kind {
        "anthropic" => llm.anthropic_base(),
        _ => llm.openai_base(),
    };
    let cloud = provider_with_key(&host, "cloud", kind, base).await;
    let parts = parts_with_attachment(&host).await;
    let asked = answer_one(&host);
    let (end, events, conversation) = send_in(&host, &cloud, None, parts).await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
    let (reason, shown) = tokio::time::timeout(Duration::from_secs(30), asked)
        .await
        .unwrap()
        .unwrap();

    // The model saw placeholders, and none of the values, in any request.
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2, "{kind}");
    for r in &reqs {
        let body = r.body.to_string();
        for c in canaries() {
            assert!(!body.contains(c), "{kind}: {c} reached the model: {body}");
        }
    }
    let first = reqs[0].body.to_string();
    for p in [
        "[REDACTED_EMAIL_1]",
        "[REDACTED_EMAIL_2]",
        "[REDACTED_API_KEY_1]",
        "[REDACTED_JWT_1]",
        "[REDACTED_PRIVATE_KEY_1]",
        "[REDACTED_URL_PASSWORD_1]",
        "[REDACTED_CARD_1]",
        "[REDACTED_PHONE_1]",
        "[REDACTED_CUSTOM_1]",
    ] {
        assert!(first.contains(p), "{kind}: {p} missing: {first}");
    }
    assert!(first.contains("https://deploy:[REDACTED_URL_PASSWORD_1]@db.example.com"));
    // The echoed result came back with the same placeholder, and the new token redacted.
    let second = reqs[1].body.to_string();
    assert!(
        second.contains("to [REDACTED_EMAIL_1] with [REDACTED_API_KEY_2]"),
        "{kind}: {second}"
    );

    // The server got the real value; the prompt showed it and named the placeholder.
    let got = received(&record);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["text"], format!("to {EMAIL} with {RESULT_TOKEN}"));
    assert_eq!(shown["text"], format!("to {EMAIL} with {RESULT_TOKEN}"));
    assert!(
        reason.contains(
            "\nThe model wrote [REDACTED_EMAIL_1] (in `text`); Switchboard put back the real \
             value before running."
        ),
        "{reason}"
    );
    assert!(!reason.contains(EMAIL), "{reason}");

    // The answer the person reads, and the conversation keeps, has the value put back (on
    // this machine); no streamed piece of it showed the placeholder.
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        streamed.ends_with(&format!("Sent to {EMAIL}.")),
        "{kind}: {streamed}"
    );
    assert!(!streamed.contains("REDACTED"), "{kind}: {streamed}");
    let kept = host.messages(&conversation).await.unwrap();
    assert_eq!(
        kept.last().unwrap().message.text(),
        format!("Sent to {EMAIL}."),
        "{kind}"
    );

    // The person was told what was redacted.
    let told: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Redacted { counts } => Some(counts.clone()),
            _ => None,
        })
        .collect();
    let last = told.last().expect("a Redacted event");
    let email = last.iter().find(|c| c.kind == "email").unwrap();
    assert_eq!(email.count, 2);
    assert_eq!(email.label, "2 e-mail addresses");
    assert!(last.iter().any(|c| c.kind == "api_key" && c.count == 2));

    // The audit log says it happened, and holds none of the values.
    let log = host
        .audit_page(&AuditQuery {
            search: None,
            before: None,
            limit: 200,
        })
        .await
        .unwrap();
    let redacted: Vec<Value> = log
        .entries
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.detail_json).ok())
        .filter(|d| d["change"] == "redacted")
        .collect();
    assert_eq!(redacted.len(), 1, "{log:?}");
    assert_eq!(redacted[0]["detail"]["counts"]["email"], 2);
    assert_eq!(redacted[0]["detail"]["counts"]["private_key"], 1);
    let text = serde_json::to_string(&log).unwrap();
    for c in [API_KEY, JWT, PEM_BODY, URL_PASSWORD, CARD, PHONE, CUSTOM] {
        assert!(!text.contains(c), "{c} in the audit log");
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_leaves_for_an_openai_model() {
    nothing_leaves_for("openai").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_leaves_for_an_anthropic_model() {
    nothing_leaves_for("anthropic").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_model_and_a_conversation_switched_off_get_the_real_text() {
    let local = FakeLlm::spawn(Scenario::new([Reply::text(&["ok"])]))
        .await
        .unwrap();
    let cloud_llm = FakeLlm::spawn(Scenario::new([Reply::text(&["ok"])]))
        .await
        .unwrap();
    let (host, _tmp, _record) = setup().await;
    let ollama = provider_with_key(&host, "lo", "ollama", local.openai_base()).await;
    let (end, events) = send(&host, &ollama, None, vec![Part::Text { text: message() }]).await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
    let body = local.requests()[0].body.to_string();
    assert!(body.contains(EMAIL) && body.contains(API_KEY), "{body}");
    assert!(!events
        .iter()
        .any(|e| matches!(e, ChatEvent::Redacted { .. })));

    let cloud = provider_with_key(&host, "cloud", "openai", cloud_llm.openai_base()).await;
    let conversation = host.create_conversation("off").await.unwrap().id;
    host.redaction()
        .set_for_conversation(&conversation, false)
        .await
        .unwrap();
    assert!(!host.redaction().conversation_redacted(&conversation));
    let (end, _) = send(
        &host,
        &cloud,
        Some(conversation),
        vec![Part::Text { text: message() }],
    )
    .await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
    let body = cloud_llm.requests()[0].body.to_string();
    assert!(body.contains(EMAIL) && body.contains(CUSTOM), "{body}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_says_what_it_redacted_and_no_redact_switches_it_off() {
    use switchboard_tests::chat_cli::{ok, setup_chat};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["ok"]), Reply::text(&["ok"])]))
        .await
        .unwrap();
    // With the keyring (make test) the provider is a cloud (OpenAI) one; without, a keyless
    // local Ollama profile, which is exempt.
    let cloud = setup_chat(data, &llm, &[]);
    let said = format!("write to {EMAIL} and {ATTACHED_EMAIL}");
    if !cloud {
        let o = run_cli(data, &["chat", "--model", "fake", &said], "", &[]);
        ok(&o);
        assert!(llm.requests()[0].body.to_string().contains(EMAIL));
        assert!(!String::from_utf8_lossy(&o.stderr).contains("[redacted"));
        return;
    }
    let o = run_cli(data, &["chat", "--model", "fake", &said], "", &[]);
    ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        stderr.contains("[redacted before sending: 2 e-mail addresses]"),
        "{stderr}"
    );
    assert!(!llm.requests()[0].body.to_string().contains(EMAIL));

    let o = run_cli(
        data,
        &["chat", "--model", "fake", "--no-redact", &said],
        "",
        &[],
    );
    ok(&o);
    let body = llm.requests()[1].body.to_string();
    assert!(body.contains(EMAIL), "{body}");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("[redacted"));
}
