//! Against the official reference server `@modelcontextprotocol/server-everything`, over stdio
//! and Streamable HTTP: tools, resources, templates, prompts, progress.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::json;
use switchboard_core::approval::Origin;
use switchboard_core::config::{HttpSpec, ServerSpec, Timeouts, TransportSpec};
use switchboard_core::host::{CallOptions, Host};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::Content;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::*;

fn tref(server: &str, tool: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: tool.into(),
    }
}

async fn exercise(host: &Host, name: &str) {
    let h = host.handle(&sid(name)).unwrap();
    let c = h.catalog();
    let tools: Vec<&str> = c.tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(tools.contains(&expected), "{name}: {tools:?}");
    }
    // This version of server-everything does not paginate (the fake server's pagination tests
    // cover that); it lists a handful of static resources.
    assert!(
        c.resources.len() >= 5,
        "{name}: only {} resources",
        c.resources.len()
    );
    assert!(!c.resource_templates.is_empty(), "{name}: no templates");
    let prompts: Vec<&str> = c.prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(
        prompts.contains(&"simple-prompt") && prompts.contains(&"args-prompt"),
        "{prompts:?}"
    );

    let r = host
        .call_allowed(
            &tref(name, "echo"),
            json!({"message": "hello everything"})
                .as_object()
                .cloned()
                .unwrap(),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(
        matches!(&r.content[0], Content::Text { text } if text.contains("hello everything")),
        "{r:?}"
    );
    let r = host
        .call_allowed(
            &tref(name, "get-sum"),
            json!({"a": 2, "b": 40}).as_object().cloned().unwrap(),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(
        matches!(&r.content[0], Content::Text { text } if text.contains("42")),
        "{r:?}"
    );

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    host.call_allowed(
        &tref(name, "trigger-long-running-operation"),
        json!({"duration": 1, "steps": 4})
            .as_object()
            .cloned()
            .unwrap(),
        CallOptions::default().progress(tx),
    )
    .await
    .unwrap();
    let mut steps = 0;
    while rx.try_recv().is_ok() {
        steps += 1;
    }
    assert!(steps >= 3, "{name}: only {steps} progress notifications");

    let first = &c.resources[0];
    let read = host
        .read_resource(
            &sid(name),
            &first.uri,
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(!read.is_empty());
    let templ = host
        .read_resource(
            &sid(name),
            "demo://resource/dynamic/text/7",
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(templ[0].text.is_some(), "{templ:?}");

    let args = [("city".to_owned(), "Lisbon".to_owned())]
        .into_iter()
        .collect();
    let p = host
        .get_prompt(
            &sid(name),
            "args-prompt",
            &args,
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(!p.messages.is_empty());
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(dir) = everything_dir() else { return };
    let (host, _tmp) = test_host().await;
    let index = dir.join("dist/index.js");
    start_trusted(
        &host,
        stdio_spec("everything", &node(), &[index.to_str().unwrap(), "stdio"]),
    )
    .await;
    exercise(&host, "everything").await;
    // The doctor declares what a session declares (sampling, elicitation, roots), so it counts
    // the tools a session gets: server-everything offers some only to a client that can sample
    // or ask (a doctor without capabilities saw 13 where a session got 17).
    let listed = host
        .handle(&sid("everything"))
        .unwrap()
        .catalog()
        .tools
        .len();
    let report = host
        .doctor(&sid("everything"), Duration::from_secs(20))
        .await
        .unwrap();
    let tools = report.checks.iter().find(|c| c.name == "tools");
    assert_eq!(
        tools.map(|c| c.detail.as_str()),
        Some(format!("{listed} tools").as_str()),
        "{report:?}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(dir) = everything_dir() else { return };
    let port = free_port();
    let child = std::process::Command::new(node())
        .arg(dir.join("dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _guard = KillOnDrop(child);
    let up = eventually(Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    assert!(up, "server-everything did not listen on {port}");
    let (host, _tmp) = test_host().await;
    let spec = ServerSpec {
        id: sid("remote"),
        transport: TransportSpec::Http(HttpSpec {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![],
            auth: None,
            allow_insecure: false,
        }),
        enabled: true,
        timeouts: Timeouts {
            request_secs: 20,
            init_secs: 20,
            max_message_mib: switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB,
        },
    };
    // A remote server is approved like a local one (SP-10) before it is connected to.
    add_trusted(&host, spec).await;
    let h = host.start_server(&sid("remote")).await.unwrap();
    let s = h.wait_settled(Duration::from_secs(20)).await;
    assert!(matches!(s, ServerStatus::Running { .. }), "{s}");
    exercise(&host, "remote").await;
    host.shutdown().await;
}
