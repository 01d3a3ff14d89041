//! The catalog: pagination, list_changed with debounce, protocol versions, naming across
//! servers, and the last-known catalog kept across restarts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::json;
use switchboard_core::approval::Origin;
use switchboard_core::host::CallOptions;
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::naming;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::*;

fn tref(server: &str, tool: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: tool.into(),
    }
}

#[tokio::test]
async fn every_list_is_fetched_across_all_pages() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(
        &host,
        fake_spec("paged", &["--page-size", "3", "--tools", "50"]),
    )
    .await;
    let c = h.catalog();
    assert_eq!(
        c.tools.len(),
        14 + 50,
        "{:?}",
        c.tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    assert!(c.tools.iter().any(|t| t.name == "gen_0049"));
    assert_eq!(c.resources.len(), 2);
    assert_eq!(c.resource_templates.len(), 1);
    assert_eq!(c.prompts.len(), 2);
    assert!(c.instructions.is_some());
    host.shutdown().await;
}

#[tokio::test]
async fn list_changed_refreshes_the_catalog() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("live", &[])).await;
    assert!(!h.catalog().tools.iter().any(|t| t.name == "late_tool"));
    host.call_allowed(
        &tref("live", "trigger_list_changed"),
        Default::default(),
        CallOptions::default(),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || h
            .catalog()
            .tools
            .iter()
            .any(|t| t.name == "late_tool"))
        .await,
        "late_tool never appeared"
    );
    // A tool that appears later is held until the person approves it (TD-02).
    let r = host
        .call_allowed(
            &tref("live", "late_tool"),
            Default::default(),
            CallOptions::default(),
        )
        .await;
    assert!(
        matches!(r, Err(switchboard_core::host::HostError::Held { .. })),
        "{r:?}"
    );
    host.approve_pin_changes(&sid("live"), Some(vec!["late_tool".into()]))
        .await
        .unwrap();
    let r = host
        .call_allowed(
            &tref("live", "late_tool"),
            Default::default(),
            CallOptions::default(),
        )
        .await;
    assert!(r.is_ok(), "{r:?}");
    host.shutdown().await;
}

#[tokio::test]
async fn a_list_changed_storm_is_debounced() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(
        &host,
        fake_spec(
            "storm",
            &["--mode", "list-changed-storm", "--storm", "1000"],
        ),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The fake writes `tools-list-count N` to stderr on every tools/list it receives.
    let counts: Vec<u64> = h
        .logs()
        .stderr_tail(5000)
        .iter()
        .filter_map(|l| {
            l.strip_prefix("tools-list-count ")
                .and_then(|n| n.trim().parse().ok())
        })
        .collect();
    let max = counts.iter().copied().max().unwrap_or(0);
    assert!(max >= 1, "no tools/list seen at all");
    assert!(
        max <= 10,
        "1000 list_changed caused {max} tools/list requests"
    );
    assert!(matches!(h.status(), ServerStatus::Running { .. }));
    host.shutdown().await;
}

#[tokio::test]
async fn older_protocol_versions_are_negotiated_and_unknown_ones_refused() {
    let (host, _dir) = test_host().await;
    for v in ["2025-06-18", "2025-03-26"] {
        let name = format!("v{}", v.replace('-', ""));
        let h = start_trusted(&host, fake_spec(&name, &["--protocol", v])).await;
        match h.status() {
            ServerStatus::Running { peer, .. } => assert_eq!(peer.protocol_version, v),
            other => panic!("{other}"),
        }
        let r = host
            .call_allowed(
                &tref(&name, "echo"),
                json!({"text": "hi"}).as_object().cloned().unwrap(),
                CallOptions::default(),
            )
            .await;
        assert!(r.is_ok(), "{r:?}");
    }
    let id = add_trusted(&host, fake_spec("future", &["--protocol", "2099-01-01"])).await;
    let h = host.start_server(&id).await.unwrap();
    let mut last = String::new();
    assert!(
        eventually(Duration::from_secs(10), || {
            last = h.status().to_string();
            last.contains("does not speak")
        })
        .await,
        "{last}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn tools_of_two_servers_get_distinct_llm_names_that_map_back_exactly() {
    let (host, _dir) = test_host().await;
    start_trusted(&host, fake_spec("one", &[])).await;
    start_trusted(&host, fake_spec("two", &[])).await;
    let names = host.tool_names().await.unwrap();
    let a = names.llm_name(&tref("one", "echo")).unwrap().to_owned();
    let b = names.llm_name(&tref("two", "echo")).unwrap().to_owned();
    assert_ne!(a, b);
    assert!(naming::is_valid(&a) && naming::is_valid(&b));
    assert_eq!(names.resolve(&a), Some(&tref("one", "echo")));
    assert_eq!(names.resolve("echo"), None);
    // A disabled tool disappears from the model's view and cannot be called.
    host.set_tool_enabled(&tref("two", "echo"), false)
        .await
        .unwrap();
    let names = host.tool_names().await.unwrap();
    assert!(names.llm_name(&tref("two", "echo")).is_none());
    let err = host
        .call_allowed(
            &tref("two", "echo"),
            Default::default(),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("disabled"), "{err}");
    let err = host
        .call_allowed(
            &tref("one", "no_such_tool"),
            Default::default(),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no tool named"), "{err}");
    host.shutdown().await;
}

#[tokio::test]
async fn last_known_tools_survive_a_restart() {
    let (host, _dir) = test_host().await;
    let spec = fake_spec("flappy", &[]);
    let h = start_trusted(&host, spec).await;
    let before = h.catalog().tools.len();
    let mut watch = h.watch_status();
    let _ = host
        .call_allowed(
            &tref("flappy", "crash"),
            Default::default(),
            CallOptions::default(),
        )
        .await;
    // While it is down (backoff or starting), the tools are still there.
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if !matches!(*watch.borrow_and_update(), ServerStatus::Running { .. }) {
                break;
            }
            watch.changed().await.unwrap();
        }
    })
    .await
    .unwrap();
    assert_eq!(h.catalog().tools.len(), before);
    let s = h.wait_settled(Duration::from_secs(10)).await;
    assert!(matches!(s, ServerStatus::Running { .. }), "{s}");
    host.shutdown().await;
}

#[tokio::test]
async fn resources_prompts_and_completion() {
    let (host, _dir) = test_host().await;
    start_trusted(&host, fake_spec("rp", &[])).await;
    let id = sid("rp");
    let text = host
        .read_resource(&id, "fake://text", Origin::Manual, CallOptions::default())
        .await
        .unwrap();
    assert!(text[0].text.as_deref().unwrap().contains("hello"));
    let item = host
        .read_resource(
            &id,
            "fake://item/42",
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(item[0].text.as_deref().unwrap().contains("42"));
    let err = host
        .read_resource(&id, "fake://nope", Origin::Manual, CallOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("-32002"), "{err}");
    let args = [("name".to_owned(), "bob".to_owned())]
        .into_iter()
        .collect();
    let p = host
        .get_prompt(&id, "greet", &args, Origin::Manual, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(p.messages.len(), 1);
    let values = host
        .complete_prompt_argument(&id, "greet", "name", "b")
        .await
        .unwrap();
    assert_eq!(values, ["bob"]);
    host.shutdown().await;
}

#[tokio::test]
async fn schemas_never_fetch_and_invalid_arguments_never_reach_the_server() {
    // A canary HTTP listener that counts connections.
    let canary = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let port = canary.local_addr().unwrap().port();
    let remote_ref = json!({
        "name": "remote_ref",
        "inputSchema": {"type": "object", "properties": {"x": {"$ref": format!("http://127.0.0.1:{port}/s.json")}}}
    })
    .to_string();
    let file_ref = json!({
        "name": "file_ref",
        "inputSchema": {"type": "object", "properties": {"x": {"$ref": "file:///etc/passwd"}}}
    })
    .to_string();
    let (host, dir) = test_host().await;
    let record = dir.path().join("rec.jsonl");
    let h = start_trusted(
        &host,
        fake_spec(
            "schemas",
            &[
                "--tool-json",
                &remote_ref,
                "--tool-json",
                &file_ref,
                "--record",
                record.to_str().unwrap(),
            ],
        ),
    )
    .await;
    let c = h.catalog();
    let excluded: Vec<&str> = c.excluded_tools.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(excluded, ["remote_ref", "file_ref"]);
    assert!(!c.tools.iter().any(|t| t.name == "remote_ref"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(canary.accept().is_err(), "the schema's $ref was fetched");

    let err = host
        .call_allowed(
            &tref("schemas", "add"),
            json!({"a": "one"}).as_object().cloned().unwrap(),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("do not match the input schema"),
        "{err}"
    );
    host.shutdown().await;
    let sent = std::fs::read_to_string(&record).unwrap();
    assert!(
        !sent.contains("tools/call"),
        "invalid arguments reached the server"
    );
}

#[tokio::test]
async fn server_log_messages_become_host_events() {
    let (host, _dir) = test_host().await;
    let mut events = host.subscribe();
    start_trusted(&host, fake_spec("chatty", &["--log-every-ms", "50"])).await;
    let got = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Ok(switchboard_core::events::HostEvent::ServerLog { server, level, .. }) =
                events.recv().await
            {
                return (server, level);
            }
        }
    })
    .await
    .expect("no ServerLog event");
    assert_eq!(got.0, sid("chatty"));
    assert_eq!(got.1, "info");
    host.shutdown().await;
}
