//! Outbound redaction beyond a conversation's own requests (issue 16, point 5): a server's
//! sampling request goes to a cloud model redacted like a conversation (a fake server in
//! `--mode client-requests` asks with canaries; the scripted vendor server records every
//! request) and the model's placeholders are put back before the person and the server see
//! its answer; a local model gets the real text. And each turn keeps what it had redacted
//! (kinds and counts, never values), so a conversation opened again, by a new host on the same
//! data, still says it at that turn; a turn switched off records nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::questions::{Question, Reply};
use switchboard_core::approval::{Effect, Origin};
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::{CallOptions, Host, HostBuilder, SendRequest, TurnInput};
use switchboard_core::ids::{ConversationId, ProviderName, ToolRef};
use switchboard_core::llm::{Part, Role};
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::store::AuditQuery;
use switchboard_tests::fake_llm::scenario::{Reply as LlmReply, Scenario};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{next_question, tool_text, turn};
use switchboard_tests::*;

const EMAIL: &str = "sampling.canary@example.org";
const API_KEY: &str = "sk-samplingCanary0123456789abcdef";
const SECOND_EMAIL: &str = "second.turn@example.net";
const SERVER: &str = "asker";

/// A host with the asking server running and its tools allowed unasked.
async fn asking_host() -> (Host, tempfile::TempDir) {
    let (host, dir) = test_host().await;
    start_trusted(&host, fake_spec(SERVER, &["--mode", "client-requests"])).await;
    host.put_policy_rule(user_rule("let-it-run", Effect::Allow, SERVER, "*"))
        .await
        .unwrap();
    (host, dir)
}

/// The server asks `provider`'s model with canaries in its prompt; the person runs it and
/// sends back the answer as shown. Returns what the person was shown and what the server got.
async fn sample(host: &Host, provider: &str) -> (String, String) {
    let tool = ToolRef {
        server: sid(SERVER),
        tool: "ask_model".into(),
    };
    let args: Map<String, Value> =
        json!({ "prompt": format!("Write to {EMAIL} with key {API_KEY}") })
            .as_object()
            .unwrap()
            .clone();
    let runner = host.clone();
    let call = tokio::spawn(async move {
        runner
            .run_tool(&tool, args, Origin::Manual, CallOptions::default())
            .await
            .unwrap()
    });
    let q = next_question(host, Duration::from_secs(15)).await;
    let Question::Sampling(prompt) = q.question.clone() else {
        panic!("{q:?}")
    };
    // The person sees the server's real prompt: it is theirs, on their machine.
    assert!(prompt.messages[0].text.contains(EMAIL));
    host.answer_question(
        q.nonce.as_str(),
        Reply::RunSampling {
            prompt,
            provider: provider.into(),
            model: None,
        },
    )
    .unwrap();
    let q = next_question(host, Duration::from_secs(15)).await;
    let Question::SamplingResponse(resp) = q.question.clone() else {
        panic!("{q:?}")
    };
    host.answer_question(
        q.nonce.as_str(),
        Reply::SendResponse {
            text: resp.text.clone(),
        },
    )
    .unwrap();
    let r = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .unwrap()
        .unwrap();
    (resp.text, tool_text(&r))
}

/// The `redacted` audit entries' details.
async fn redacted_entries(host: &Host) -> Vec<(Option<String>, Value)> {
    let log = host
        .audit_page(&AuditQuery {
            search: None,
            before: None,
            limit: 200,
        })
        .await
        .unwrap();
    log.entries
        .iter()
        .filter_map(|e| {
            let d = serde_json::from_str::<Value>(&e.detail_json).ok()?;
            (d["change"] == "redacted").then(|| (e.server.clone(), d))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_sampling_request_is_redacted_for_a_cloud_model_and_its_answer_restored() {
    let cloud_llm = FakeLlm::spawn(Scenario::new([LlmReply::text(&[
        "Drafted a note to [REDACTED_EMAIL_1].",
    ])]))
    .await
    .unwrap();
    let local_llm = FakeLlm::spawn(Scenario::new([LlmReply::text(&["ok"])]))
        .await
        .unwrap();
    let (host, _dir) = asking_host().await;
    provider_with_key(&host, "cloud", "openai", cloud_llm.openai_base()).await;

    let (shown, got) = sample(&host, "cloud").await;
    let reqs = cloud_llm.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].body.to_string();
    assert!(
        !body.contains(EMAIL),
        "the e-mail reached the model: {body}"
    );
    assert!(!body.contains(API_KEY), "the key reached the model: {body}");
    assert!(
        body.contains("[REDACTED_EMAIL_1]") && body.contains("[REDACTED_API_KEY_1]"),
        "{body}"
    );
    // The placeholder the model wrote is put back on this machine, for the person and server.
    assert_eq!(shown, format!("Drafted a note to {EMAIL}."));
    assert!(
        got.contains(&format!("text=Drafted a note to {EMAIL}.")),
        "{got}"
    );

    // The audit log says it happened, for this server, and holds no value.
    let entries = redacted_entries(&host).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].0.as_deref(), Some(SERVER));
    assert_eq!(entries[0].1["detail"]["counts"]["email"], 1);
    assert_eq!(entries[0].1["detail"]["counts"]["api_key"], 1);
    assert!(!entries[0].1.to_string().contains(EMAIL));

    // A model on this machine gets the server's real prompt, and nothing is recorded.
    provider_with_key(&host, "lo", "ollama", local_llm.openai_base()).await;
    let (shown, _) = sample(&host, "lo").await;
    assert_eq!(shown, "ok");
    let body = local_llm.requests()[0].body.to_string();
    assert!(body.contains(EMAIL) && body.contains(API_KEY), "{body}");
    assert_eq!(redacted_entries(&host).await.len(), 1);
    host.shutdown().await;
}

async fn send(host: &Host, provider: &ProviderName, conversation: ConversationId, text: &str) {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(
            SendRequest {
                conversation: Some(conversation),
                ..turn(
                    provider.clone(),
                    TurnInput::Message(vec![Part::Text { text: text.into() }]),
                )
            },
            tx,
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{:?}", out.end);
}

/// The ids of the person's messages of `conversation`, in order.
async fn user_messages(host: &Host, conversation: &ConversationId) -> Vec<i64> {
    host.messages(conversation)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.message.role == Role::User)
        .map(|m| m.id.get())
        .collect()
}

fn counts(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
    pairs.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_keeps_what_it_redacted_after_the_conversation_is_opened_again() {
    let llm = FakeLlm::spawn(Scenario::new([
        LlmReply::text(&["one"]),
        LlmReply::text(&["two"]),
        LlmReply::text(&["three"]),
    ]))
    .await
    .unwrap();
    let (host, dir) = test_host().await;
    let cloud = provider_with_key(&host, "cloud", "anthropic", llm.anthropic_base()).await;
    let conversation = host.create_conversation("turns").await.unwrap().id;

    send(
        &host,
        &cloud,
        conversation.clone(),
        &format!("mail {EMAIL}"),
    )
    .await;
    send(
        &host,
        &cloud,
        conversation.clone(),
        &format!("and {SECOND_EMAIL} with {API_KEY}"),
    )
    .await;
    host.redaction()
        .set_for_conversation(&conversation, false)
        .await
        .unwrap();
    send(
        &host,
        &cloud,
        conversation.clone(),
        &format!("plain {EMAIL}"),
    )
    .await;
    // The switched-off turn really went out as written.
    assert!(llm.requests()[2].body.to_string().contains(EMAIL));
    let users = user_messages(&host, &conversation).await;
    assert_eq!(users.len(), 3, "{users:?}");
    host.shutdown().await;

    // A new host on the same data: the record is in the database, not in memory.
    let host = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .build()
        .await
        .unwrap();
    let turns = host
        .redaction()
        .turn_redactions(&conversation)
        .await
        .unwrap();
    let got: Vec<(i64, String, BTreeMap<String, u32>)> = turns
        .into_iter()
        .map(|t| (t.message_id, t.provider, t.counts))
        .collect();
    // Each turn's request carries the whole transcript: the second counts both e-mails.
    assert_eq!(
        got,
        vec![
            (users[0], "anthropic".to_owned(), counts(&[("email", 1)])),
            (
                users[1],
                "anthropic".to_owned(),
                counts(&[("api_key", 1), ("email", 2)])
            ),
        ]
    );
    host.shutdown().await;
}
