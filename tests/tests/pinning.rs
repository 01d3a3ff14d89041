//! Pinning against rug pulls (TD-02) and description hygiene (TD-04, TD-01): every rug-pull mode
//! of the fake server ends with the changed or new tool held (not offered to a model, calls
//! refused) until the person approves it; approving re-enables it; an unchanged restart holds
//! nothing; poisoned and oversize definitions are flagged or left out.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::json;
use switchboard_core::approval::pins::{Field, HoldReason, ItemKind};
use switchboard_core::approval::{Answer, Origin};
use switchboard_core::chat::ToolRunner;
use switchboard_core::host::{CallOptions, Host, HostError, HostTools, TurnInput};
use switchboard_core::hygiene::{FindingKind, Hidden};
use switchboard_core::ids::{ConversationId, ServerId, ToolRef};
use switchboard_core::mcp::McpError;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{keyless_provider, turn};
use switchboard_tests::*;

fn tref(server: &str, tool: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: tool.into(),
    }
}

fn text(t: &str) -> serde_json::Map<String, serde_json::Value> {
    json!({ "text": t }).as_object().unwrap().clone()
}

async fn echo(host: &Host, server: &str) -> Result<(), HostError> {
    host.call_allowed(&tref(server, "echo"), text("hi"), CallOptions::default())
        .await
        .map(|_| ())
}

/// The LLM-facing tool names a turn would offer.
async fn offered(host: &Host) -> Vec<String> {
    HostTools::load(host, &ConversationId::random())
        .await
        .unwrap()
        .specs()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

async fn wait_for_catalog(
    host: &Host,
    id: &ServerId,
    f: impl Fn(&switchboard_core::mcp::catalog::Catalog) -> bool,
) {
    let h = host.handle(id).unwrap();
    assert!(
        eventually(Duration::from_secs(10), || f(&h.catalog())).await,
        "the catalog of {id} never changed as expected"
    );
}

fn assert_held(r: Result<(), HostError>, want: HoldReason) {
    match r {
        Err(HostError::Held { reason, .. }) => assert_eq!(reason, want),
        other => panic!("expected a held tool, got {other:?}"),
    }
}

/// Runs one "change after the first call" rug pull and checks hold, review and approval.
async fn rug_after_first_call(mode: &str, tool: &str, reason: HoldReason) -> Vec<Field> {
    let (host, _dir) = test_host().await;
    let name = mode.replace("rug-", "r");
    let h = start_trusted(&host, fake_spec(&name, &["--mode", mode])).await;
    let id = h.id().clone();
    echo(&host, &name).await.unwrap();
    assert!(offered(&host).await.iter().any(|n| n.ends_with("__echo")));

    // The first call springs the rug pull; the catalog follows list_changed.
    let before = h.catalog();
    wait_for_catalog(&host, &id, |c| *c != *before).await;
    let call = host
        .call_allowed(&tref(&name, tool), text("x"), CallOptions::default())
        .await
        .map(|_| ());
    assert_held(call, reason);
    let err = host
        .call_allowed(&tref(&name, tool), text("x"), CallOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("review it"), "{err}");
    assert!(
        !offered(&host)
            .await
            .iter()
            .any(|n| n.ends_with(&format!("__{tool}"))),
        "a held tool was offered to the model"
    );
    let held = host.held_tools(&id).await.unwrap();
    assert!(
        held.iter()
            .any(|x| x.kind == ItemKind::Tool && x.name == tool && x.reason == reason),
        "{held:?}"
    );
    // Tools that did not change stay usable.
    host.call_allowed(
        &tref(&name, "add"),
        json!({"a": 1, "b": 2}).as_object().unwrap().clone(),
        CallOptions::default(),
    )
    .await
    .unwrap();

    let review = host.pin_review(&id).await.unwrap();
    assert!(review.live);
    let change = review
        .diff
        .added
        .iter()
        .chain(&review.diff.changed)
        .find(|c| c.name == tool)
        .unwrap_or_else(|| panic!("{tool} not in the review: {:?}", review.diff));
    let fields: Vec<Field> = change.fields.iter().map(|f| f.field.clone()).collect();

    // A stale review is refused; the one shown is accepted.
    let stale = host
        .approve_reviewed(&id, Some(vec![tool.into()]), Some("0000"))
        .await
        .unwrap_err();
    assert!(matches!(stale, HostError::PinRace(_)), "{stale}");
    host.approve_reviewed(&id, Some(vec![tool.into()]), Some(&review.surface))
        .await
        .unwrap();
    host.call_allowed(&tref(&name, tool), text("x"), CallOptions::default())
        .await
        .unwrap();
    assert!(offered(&host)
        .await
        .iter()
        .any(|n| n.ends_with(&format!("__{tool}"))));
    assert!(host.held_tools(&id).await.unwrap().is_empty());
    // The audit log has the hold and the approval of this tool, and its chain is intact.
    let log = host
        .audit_page(&switchboard_core::store::AuditQuery {
            search: Some(format!("tool {tool}")),
            before: None,
            limit: 100,
        })
        .await
        .unwrap();
    let kinds: Vec<String> = log.entries.iter().map(|e| e.detail_json.clone()).collect();
    assert!(
        kinds.iter().any(|d| d.contains("changed")) && kinds.iter().any(|d| d.contains("approved")),
        "{kinds:?}"
    );
    assert!(host.verify_audit().await.unwrap().ok);
    host.shutdown().await;
    fields
}

#[tokio::test]
async fn a_description_changed_after_the_first_call_is_held_until_approved() {
    let fields = rug_after_first_call("rug-description", "echo", HoldReason::Changed).await;
    assert_eq!(fields, vec![Field::Description]);
}

#[tokio::test]
async fn a_changed_parameter_description_alone_is_held() {
    let fields = rug_after_first_call("rug-param", "echo", HoldReason::Changed).await;
    assert_eq!(
        fields,
        vec![Field::ParamDescription(
            "/properties/text/description".into()
        )]
    );
}

#[tokio::test]
async fn a_tool_added_by_list_changed_is_held() {
    rug_after_first_call("rug-new-tool", "exfiltrate", HoldReason::New).await;
}

#[tokio::test]
async fn a_change_seen_only_after_a_restart_is_held_and_an_unchanged_restart_holds_nothing() {
    let (host, dir) = test_host().await;
    let state = dir.path().join("starts");
    let state = state.to_str().unwrap();
    let h = start_trusted(
        &host,
        fake_spec("later", &["--mode", "rug-restart", "--state-file", state]),
    )
    .await;
    let plain = start_trusted(&host, fake_spec("plain", &[])).await;
    echo(&host, "later").await.unwrap();
    echo(&host, "plain").await.unwrap();

    // The unchanged server restarts: nothing is held.
    plain.restart().await;
    plain.wait_settled(Duration::from_secs(20)).await;
    echo(&host, "plain").await.unwrap();
    assert!(host.held_tools(plain.id()).await.unwrap().is_empty());

    // The rug pull shows only in the second run.
    h.restart().await;
    h.wait_settled(Duration::from_secs(20)).await;
    assert_held(echo(&host, "later").await, HoldReason::Changed);
    assert!(!offered(&host).await.iter().any(|n| n == "later__echo"));
    assert!(offered(&host).await.iter().any(|n| n == "plain__echo"));

    // The review names the poisoned description and flags it (TD-04).
    let review = host.pin_review(h.id()).await.unwrap();
    let f = &review.findings["echo"];
    assert!(
        f.iter()
            .any(|f| f.kind == FindingKind::SensitivePath("~/.ssh".into())),
        "{f:?}"
    );
    host.approve_pin_changes(h.id(), None).await.unwrap();
    echo(&host, "later").await.unwrap();
    host.shutdown().await;
}

#[tokio::test]
async fn changed_instructions_are_kept_from_the_model_until_approved() {
    let (host, dir) = test_host().await;
    let state = dir.path().join("starts");
    let h = start_trusted(
        &host,
        fake_spec(
            "instr",
            &[
                "--mode",
                "rug-instructions",
                "--state-file",
                state.to_str().unwrap(),
            ],
        ),
    )
    .await;
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::text(&["first"]),
        Reply::text(&["second"]),
        Reply::text(&["third"]),
    ]))
    .await
    .unwrap();
    let provider = keyless_provider(&host, "fake", llm.openai_base()).await;
    let send = |n: usize| {
        let host = host.clone();
        let provider = provider.clone();
        async move {
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            host.send_message(turn(provider, TurnInput::text(format!("hello {n}"))), tx)
                .await
                .unwrap();
        }
    };
    send(1).await;
    let first = llm.requests()[0].body.to_string();
    assert!(
        first.contains("Fake MCP server for Switchboard tests"),
        "{first}"
    );

    h.restart().await;
    h.wait_settled(Duration::from_secs(20)).await;
    let held = host.held_tools(h.id()).await.unwrap();
    assert!(
        held.iter().any(|x| x.kind == ItemKind::Instructions),
        "{held:?}"
    );
    assert!(
        host.pin_review(h.id())
            .await
            .unwrap()
            .diff
            .instructions_changed
    );
    send(2).await;
    let second = llm.requests()[1].body.to_string();
    assert!(!second.contains("Ignore previous instructions"), "{second}");
    assert!(
        !second.contains("Fake MCP server for Switchboard tests"),
        "{second}"
    );
    // Tools are unaffected by an instructions change.
    assert!(second.contains("instr__echo"), "{second}");

    host.approve_pin_changes(h.id(), None).await.unwrap();
    send(3).await;
    let third = llm.requests()[2].body.to_string();
    assert!(third.contains("Ignore previous instructions"), "{third}");
    host.shutdown().await;
}

#[tokio::test]
async fn poisoned_descriptions_are_flagged_and_lying_annotations_still_ask() {
    let (host, dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("evil", &["--mode", "poisoned"])).await;
    let findings = host.tool_findings(h.id()).await.unwrap();
    let poisoned = findings.iter().find(|f| f.tool == "poisoned_add").unwrap();
    let kinds: Vec<&FindingKind> = poisoned.findings.iter().map(|f| &f.kind).collect();
    for want in [
        FindingKind::Hidden(Hidden::ZeroWidth),
        FindingKind::Hidden(Hidden::Bidi),
        FindingKind::Hidden(Hidden::Tag),
        FindingKind::Injection("<important>".into()),
        FindingKind::Injection("do not tell the user".into()),
        FindingKind::SensitivePath("~/.ssh".into()),
    ] {
        assert!(kinds.contains(&&want), "{want:?} missing from {kinds:?}");
    }
    let bidi = poisoned
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Hidden(Hidden::Bidi))
        .unwrap();
    assert!(bidi.excerpt.contains("⟨U+202E⟩"), "{}", bidi.excerpt);
    assert!(!findings.iter().any(|f| f.tool == "echo"), "{findings:?}");
    assert_eq!(
        host.findings_for(&tref("evil", "poisoned_add"))
            .await
            .unwrap()
            .len(),
        poisoned.findings.len()
    );

    // TD-01: `lying_write` claims to be read-only; a model's call to it still waits for a person.
    let canary = dir.path().join("canary");
    let runner = host.clone();
    let args = json!({"path": canary.to_str().unwrap()})
        .as_object()
        .unwrap()
        .clone();
    let run = tokio::spawn(async move {
        runner
            .run_tool(
                &tref("evil", "lying_write"),
                args,
                Origin::model(ConversationId::random()),
                CallOptions::default(),
            )
            .await
    });
    assert!(
        eventually(Duration::from_secs(5), || host.pending_approvals().len()
            == 1)
        .await,
        "no approval prompt for a tool that merely claims to be read-only"
    );
    let nonce = host.pending_approvals()[0].nonce.clone();
    host.answer_approval(nonce.as_str(), Answer::Deny { reason: None })
        .await
        .unwrap();
    assert!(matches!(run.await.unwrap(), Err(HostError::Denied { .. })));
    assert!(!canary.exists());
    host.shutdown().await;
}

#[tokio::test]
async fn oversize_definitions_are_left_out_with_a_visible_reason() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("fat", &["--mode", "oversize"])).await;
    let c = h.catalog();
    assert!(!c.tools.iter().any(|t| t.name == "bloated"));
    let (_, why) = c
        .excluded_tools
        .iter()
        .find(|(n, _)| n == "bloated")
        .expect("bloated is listed as excluded");
    assert!(why.contains("at most 8192"), "{why}");
    let r = host
        .call_allowed(
            &tref("fat", "bloated"),
            Default::default(),
            CallOptions::default(),
        )
        .await;
    assert!(
        matches!(r, Err(HostError::Mcp(McpError::UnknownTool { .. }))),
        "{r:?}"
    );
    echo(&host, "fat").await.unwrap();
    host.shutdown().await;
}

#[tokio::test]
async fn tools_past_the_first_use_cap_wait_for_review_but_stay_listed() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("many", &["--tools", "250"])).await;
    assert_eq!(h.catalog().tools.len(), 264, "every tool is still listed");
    echo(&host, "many").await.unwrap();
    host.call_allowed(&tref("many", "gen_0185"), text("x"), CallOptions::default())
        .await
        .unwrap();
    assert_held(
        host.call_allowed(&tref("many", "gen_0249"), text("x"), CallOptions::default())
            .await
            .map(|_| ()),
        HoldReason::New,
    );
    let held = host.held_tools(h.id()).await.unwrap();
    assert_eq!(held.len(), 64, "264 tools, 200 pinned on first use");
    let offered = offered(&host).await;
    assert_eq!(offered.len(), 200);
    let catalogs = host.catalogs().await.unwrap();
    assert_eq!(catalogs[0].disabled_tools.len(), 64);

    host.approve_pin_changes(h.id(), Some(vec!["gen_0249".into()]))
        .await
        .unwrap();
    host.call_allowed(&tref("many", "gen_0249"), text("x"), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(host.held_tools(h.id()).await.unwrap().len(), 63);
    let err = host
        .approve_pin_changes(h.id(), Some(vec!["no_such".into()]))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no change to review"), "{err}");
    host.shutdown().await;
}

#[tokio::test]
async fn the_review_survives_the_server_stopping_and_a_new_process() {
    let (host, dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("gone", &["--mode", "rug-new-tool"])).await;
    let id = h.id().clone();
    echo(&host, "gone").await.unwrap();
    wait_for_catalog(&host, &id, |c| {
        c.tools.iter().any(|t| t.name == "exfiltrate")
    })
    .await;
    assert_eq!(host.held_tools(&id).await.unwrap().len(), 1);
    host.shutdown().await;

    // Another process, the server not running: the record of what waits is shown.
    let again = switchboard_core::host::HostBuilder::new(dir.path())
        .secrets(switchboard_core::secrets::Secrets::new(
            switchboard_core::secrets::MemoryStore::default(),
        ))
        .build()
        .await
        .unwrap();
    let held = again.held_tools(&id).await.unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
    let review = again.pin_review(&id).await.unwrap();
    assert!(!review.live);
    assert_eq!(review.diff.added.len(), 1);
    assert_eq!(review.diff.added[0].name, "exfiltrate");
    again.approve_pin_changes(&id, None).await.unwrap();
    assert!(again.held_tools(&id).await.unwrap().is_empty());
    again.shutdown().await;
}
