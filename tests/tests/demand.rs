//! Servers start when needed (issue 14, point 5), against the real fake server over stdio:
//! a call starts its server; a chat turn of the app starts the servers it offers, and the CLI's
//! does not; the catalog keeps a stopped server's last-known tools, marked, never offered to a
//! model; an idle server stops unless it is kept always on, and never while a call is in flight.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::Origin;
use switchboard_core::host::{CallOptions, Host, TurnInput};
use switchboard_core::ids::ToolRef;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::turn;
use switchboard_tests::*;

fn tool(server: &str, name: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: name.into(),
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

async fn call(host: &Host, server: &str, name: &str, a: Value) -> bool {
    let r = host
        .run_tool(
            &tool(server, name),
            args(a),
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{server}/{name}: {e}"));
    !r.is_error
}

fn tool_names(c: &switchboard_core::host::ServerCatalog) -> Vec<String> {
    c.catalog.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_call_starts_its_server_and_the_catalog_keeps_its_last_tools() {
    let (host, dir) = test_host().await;
    let id = add_trusted(&host, fake_spec("lazy", &[])).await;
    allow_all(&host, "lazy").await;
    assert!(host.handle(&id).is_none(), "nothing starts on its own");
    assert!(
        host.catalogs().await.unwrap().is_empty(),
        "a server that never ran has no tools to show"
    );

    assert!(call(&host, "lazy", "echo", json!({"text": "hi"})).await);
    let h = host.handle(&id).expect("the call started the server");
    assert!(matches!(h.status(), ServerStatus::Running { .. }));
    let live = host.catalogs().await.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(
        live[0].last_known_ms, None,
        "a running server's catalog is live"
    );
    let names = tool_names(&live[0]);
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    assert!(!host.tool_names().await.unwrap().is_empty());

    host.stop_server(&id).await.unwrap();
    let kept = host.catalogs().await.unwrap();
    assert_eq!(kept.len(), 1);
    assert!(kept[0].last_known_ms.is_some(), "marked as last known");
    assert_eq!(tool_names(&kept[0]), names);
    assert!(
        host.tool_names().await.unwrap().is_empty(),
        "last-known tools are never offered to a model"
    );

    // The app restarted on the same data dir: it still shows them, without starting anything.
    drop(host);
    let again = switchboard_core::host::HostBuilder::new(dir.path())
        .secrets(switchboard_core::secrets::Secrets::new(
            switchboard_core::secrets::MemoryStore::default(),
        ))
        .supervisor_config(fast_supervisor())
        .build()
        .await
        .unwrap();
    let shown = again.catalogs().await.unwrap();
    assert_eq!(shown.len(), 1);
    assert!(shown[0].last_known_ms.is_some());
    assert!(again.handle(&id).is_none());

    // A disabled server's tools are not shown at all.
    again.set_enabled(&id, false).await.unwrap();
    assert!(again.catalogs().await.unwrap().is_empty());
}

#[tokio::test]
async fn idle_servers_stop_unless_always_on_and_never_mid_call() {
    let (host, _dir) = test_host().await;
    let keep = add_trusted(&host, fake_spec("keep", &[])).await;
    let idle = add_trusted(&host, fake_spec("idle", &[])).await;
    allow_all(&host, "idle").await;
    host.set_always_on(&keep, true).await.unwrap();
    host.serve_on_demand();
    host.set_idle_stop(Duration::from_millis(1000));
    host.start_always_on().await.unwrap();
    assert!(
        host.handle(&keep).is_some(),
        "always on starts with the app"
    );
    assert!(host.handle(&idle).is_none(), "the other waits until needed");
    let views = host.list_servers().await.unwrap();
    assert!(views.iter().any(|v| v.spec.id == keep && v.always_on));
    assert!(views.iter().any(|v| v.spec.id == idle && !v.always_on));

    // A call longer than the idle time: the server is not stopped under it.
    assert!(call(&host, "idle", "sleep", json!({"ms": 2500})).await);
    assert!(host.handle(&idle).is_some(), "in flight is use");

    // Then it goes quiet, and stops; the always-on one stays.
    assert!(
        eventually(Duration::from_secs(20), || host.handle(&idle).is_none()).await,
        "the idle server did not stop"
    );
    assert!(host.handle(&keep).is_some());

    // The next call starts it again.
    assert!(call(&host, "idle", "echo", json!({"text": "back"})).await);
    assert!(host.handle(&idle).is_some());
}

#[tokio::test]
async fn a_chat_turn_of_the_app_starts_the_servers_it_offers() {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "c1",
            "lazy__echo",
            &[r#"{"text":"from the model"}"#],
        )]),
        Reply::text(&["done"]),
        Reply::text(&["no tools here"]),
    ]))
    .await
    .unwrap();
    let base = llm.openai_base();
    let send = |host: Host| {
        let base = base.clone();
        async move {
            let provider = Host::provider_name("fake").unwrap();
            if host.models().list_providers().await.unwrap().is_empty() {
                host.models()
                    .add_provider(&provider, "ollama", Some(base), Some("m1".into()), None)
                    .await
                    .unwrap();
            }
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            host.send_message(turn(provider, TurnInput::text("use the tool")), tx)
                .await
                .unwrap();
        }
    };
    let offered = |i: usize| -> Vec<String> {
        llm.requests()[i].body["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };

    let (app, _dir) = test_host().await;
    let id = add_trusted(&app, fake_spec("lazy", &[])).await;
    allow_all(&app, "lazy").await;
    app.serve_on_demand();
    send(app.clone()).await;
    assert!(
        offered(0).contains(&"lazy__echo".to_owned()),
        "{:?}",
        offered(0)
    );
    assert!(app.handle(&id).is_some(), "the turn started it");

    // The CLI's host starts what each command asks for: a turn alone starts nothing.
    let (cli, _dir2) = test_host().await;
    let other = add_trusted(&cli, fake_spec("lazy", &[])).await;
    send(cli.clone()).await;
    assert!(
        !offered(2).iter().any(|n| n.starts_with("lazy__")),
        "{:?}",
        offered(2)
    );
    assert!(cli.handle(&other).is_none());
}
