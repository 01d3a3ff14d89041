//! What a server says stays inert and what the person keeps secret stays out of the logs,
//! through a real host: a server flooding the person with questions gets only a few in front
//! of them (RL-12); a secret with quotes and backslashes, escaped once or twice inside JSON-RPC,
//! percent-encoded or inside a Basic credential, never reaches the protocol trace or the saved
//! logs, and neither does what the person typed into a form field marked as a credential
//! (SE-06), even in a TRACE-level process log where rmcp prints whole messages. The CLI side of
//! escape codes in server text is `hostile_text.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::questions::{ElicitReply, Question, Reply};
use switchboard_core::config::ValueSource;
use switchboard_core::host::{CallOptions, Host, ELICITATIONS_PER_HOUR, ELICITATIONS_WAITING};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::ToolResult;
use switchboard_core::redact::Secret;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::scenario::tool_text;
use switchboard_tests::*;

fn tool(server: &str, name: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: name.into(),
    }
}

fn map(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Runs a tool in the background under the allow-everything rule.
fn spawn_call(host: &Host, t: ToolRef, args: Value) -> tokio::task::JoinHandle<ToolResult> {
    let host = host.clone();
    tokio::spawn(async move {
        host.call_allowed(&t, map(args), CallOptions::default())
            .await
            .unwrap()
    })
}

/// Answers every question with a decline until `call` ends; returns its result and how many
/// questions were seen, and the most that waited at once.
async fn decline_until_done(
    host: &Host,
    mut call: tokio::task::JoinHandle<ToolResult>,
) -> (ToolResult, usize, usize) {
    let (mut seen, mut most) = (0, 0);
    loop {
        tokio::select! {
            r = &mut call => return (r.unwrap(), seen, most),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let pending = host.pending_questions();
        most = most.max(pending.len());
        for q in pending {
            seen += 1;
            host.answer_question(q.nonce.as_str(), Reply::Elicit(ElicitReply::Decline))
                .unwrap();
        }
    }
}

#[tokio::test]
async fn a_flood_of_questions_reaches_the_person_only_up_to_the_limits() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("flood", &["--mode", "question-flood"])).await;
    let flood = tool("flood", "flood_questions");

    // 12 at once: only ELICITATIONS_WAITING wait for the person; the rest are declined unseen.
    let call = spawn_call(&host, flood.clone(), json!({"count": 12}));
    assert!(
        eventually(Duration::from_secs(10), || host.pending_questions().len()
            == ELICITATIONS_WAITING)
        .await,
        "{} questions wait",
        host.pending_questions().len()
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pending = host.pending_questions();
    assert_eq!(pending.len(), ELICITATIONS_WAITING, "no more arrive later");
    for (i, q) in pending.iter().enumerate() {
        assert!(matches!(q.question, Question::Form(_)), "{q:?}");
        let reply = if i == 0 {
            ElicitReply::Accept {
                content: map(json!({"ok": true})),
            }
        } else {
            ElicitReply::Cancel
        };
        host.answer_question(q.nonce.as_str(), Reply::Elicit(reply))
            .unwrap();
    }
    let r = call.await.unwrap();
    let refused = 12 - ELICITATIONS_WAITING;
    assert_eq!(
        tool_text(&r),
        format!(
            "accept=1 decline={refused} cancel={} error=0 timeout=0",
            ELICITATIONS_WAITING - 1
        )
    );
    let notes: Vec<String> = h.logs().trace().into_iter().map(|e| e.body).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("declined an elicitation request unseen")),
        "the refusals are noted in the server's log: {notes:?}"
    );

    // Then the hourly allowance: rounds of three, declined as they come, until it is used up;
    // after that nothing reaches the person at all.
    let mut asked = ELICITATIONS_WAITING;
    for _ in 0..(ELICITATIONS_PER_HOUR / ELICITATIONS_WAITING + 1) {
        let call = spawn_call(&host, flood.clone(), json!({"count": ELICITATIONS_WAITING}));
        let (r, seen, most) = decline_until_done(&host, call).await;
        assert!(most <= ELICITATIONS_WAITING, "{most} waited at once");
        assert_eq!(
            tool_text(&r),
            format!("accept=0 decline={ELICITATIONS_WAITING} cancel=0 error=0 timeout=0")
        );
        asked += seen;
    }
    assert_eq!(
        asked, ELICITATIONS_PER_HOUR,
        "questions asked within the hour"
    );
    host.shutdown().await;
}

/// A secret with quotes and backslashes: it looks different in every encoding.
const SECRET: &str = r#"tok"en\with"quotes\\and-backslash-0123"#;

/// The forms `s` takes in a JSON-RPC message (once and twice escaped), in a URL, and in a
/// Basic credential.
fn forms(s: &str) -> Vec<String> {
    let once = serde_json::to_string(s).unwrap();
    let once = once[1..once.len() - 1].to_owned();
    let twice = serde_json::to_string(&once).unwrap();
    let twice = twice[1..twice.len() - 1].to_owned();
    let percent: String = s
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    vec![s.to_owned(), once, twice, percent, basic("someone", s)]
}

/// `base64(user:password)`, padded, as a Basic credential carries it.
fn basic(user: &str, password: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = format!("{user}:{password}").into_bytes();
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= c.len() {
                char::from(T[((n >> (18 - 6 * i)) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
}

fn assert_absent(haystack: &str, secret: &str, what: &str) {
    for f in forms(secret) {
        assert!(
            !haystack.contains(&f),
            "{what} holds the secret as {f:?}:\n{haystack}"
        );
    }
}

#[tokio::test]
async fn a_secret_with_quotes_and_backslashes_never_reaches_the_trace_in_any_form() {
    let (host, dir) = test_host().await;
    let spec = with_env(
        fake_spec("envy", &[]),
        "ODD_TOKEN",
        ValueSource::Secret("odd.token".parse().unwrap()),
    );
    let id = add_trusted(&host, spec).await;
    host.set_server_secret(
        &id,
        &"odd.token".parse().unwrap(),
        Secret::new(SECRET),
        false,
    )
    .await
    .unwrap();
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(matches!(status, ServerStatus::Running { .. }), "{status}");
    let call = |name: &str, args: Value| {
        let (host, t) = (host.clone(), tool("envy", name));
        async move {
            host.call_allowed(&t, map(args), CallOptions::default())
                .await
                .unwrap()
        }
    };
    // `env` answers the environment as JSON text: the secret is escaped once inside the text
    // and twice in the JSON-RPC message that carries it.
    let env: Value = serde_json::from_str(&tool_text(&call("env", json!({})).await)).unwrap();
    assert_eq!(env["ODD_TOKEN"], SECRET, "the server really saw it");
    let f = forms(SECRET);
    for said in [
        format!("plain: {SECRET}"),
        format!("in a URL: https://example.test/cb?token={}", f[3]),
        format!("a header: Authorization: Basic {}", f[4]),
        format!("a credential alone: {}", f[4]),
        format!(
            "someone else's: Authorization: Basic {}",
            basic("ann", "x-pass-77")
        ),
    ] {
        call("echo", json!({ "text": said })).await;
    }
    let trace: Vec<String> = h.logs().trace().into_iter().map(|e| e.body).collect();
    assert!(trace.len() >= 12, "{trace:?}");
    let all = trace.join("\n");
    assert_absent(&all, SECRET, "the protocol trace");
    assert!(
        !all.contains(&basic("ann", "x-pass-77")),
        "an Authorization credential is masked whole, known or not:\n{all}"
    );
    host.shutdown().await;
    let logs = dir.path().join("logs").join("envy");
    let saved = std::fs::read_to_string(logs.join("trace.jsonl")).unwrap()
        + &std::fs::read_to_string(logs.join("stderr.log")).unwrap_or_default();
    assert!(saved.contains("[redacted]"), "{saved}");
    assert_absent(&saved, SECRET, "the saved logs");
}

#[tokio::test]
async fn what_the_person_types_into_a_credential_field_is_redacted_like_a_secret() {
    let typed = r#"my"pass\word-4242"#;
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("asker", &["--mode", "client-requests"])).await;
    let schema = json!({"type": "object", "properties": {
        "user": {"type": "string"},
        "password": {"type": "string", "title": "Password"}
    }});
    let call = spawn_call(
        &host,
        tool("asker", "ask_user"),
        json!({"message": "Sign in", "schema": schema}),
    );
    assert!(
        eventually(Duration::from_secs(10), || !host
            .pending_questions()
            .is_empty())
        .await
    );
    let q = host.pending_questions().remove(0);
    let Question::Form(form) = &q.question else {
        panic!("{q:?}")
    };
    assert_eq!(form.sensitive, ["password"]);
    host.answer_question(
        q.nonce.as_str(),
        Reply::Elicit(ElicitReply::Accept {
            content: map(json!({"user": "ada", "password": typed})),
        }),
    )
    .unwrap();
    // The server got it (its tool result echoes the answer, escaped twice on the wire).
    let r = call.await.unwrap();
    assert!(
        tool_text(&r).contains(r#""password":"my\"pass\\word-4242""#),
        "{}",
        tool_text(&r)
    );
    let all = h
        .logs()
        .trace()
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(all.contains("ada"), "other answers stay readable: {all}");
    assert_absent(&all, typed, "the protocol trace");
    // And in the process log (what `tracing` writes goes through the same set).
    assert_absent(
        &switchboard_core::redact::redact_for_logs(&forms(typed).join(" ")),
        typed,
        "the process log",
    );
    host.shutdown().await;
}

#[test]
fn a_typed_credential_stays_out_of_a_trace_level_process_log() {
    let typed = r#"cli"pass\word-5151"#;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    // rmcp's own trace (whole messages) is the point: a bare level would keep it at warn.
    let log = ("SWITCHBOARD_LOG", "switchboard=trace,rmcp=trace");
    let cli = |args: &[&str], stdin: &str| run_cli(data, args, stdin, &[log]);
    let o = cli(
        &[
            "server",
            "add",
            "asker",
            "--",
            fake,
            "--mode",
            "client-requests",
        ],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(cli(&["server", "trust", "asker", "--yes"], "")
        .status
        .success());
    let args = json!({"message": "Sign in", "schema": {"type": "object", "properties": {
        "password": {"type": "string", "title": "Password"},
        "user": {"type": "string"}
    }}})
    .to_string();
    // Fields are asked in the schema's (sorted) order: password, then user.
    let o = cli(
        &["call", "asker", "ask_user", "--args", &args, "--yes"],
        &format!("a\n{typed}\nada\n"),
    );
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("action=accept"),
        "the server got the answer: {out}"
    );
    assert!(err.contains("TRACE"), "expected trace output");
    assert_absent(&err, typed, "the TRACE-level process log");
    let logs = data.join("logs").join("asker");
    let saved = std::fs::read_to_string(logs.join("trace.jsonl")).unwrap();
    assert_absent(&saved, typed, "the saved protocol trace");
}
