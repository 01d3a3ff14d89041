//! Pairing, filters, search and the export of the protocol inspector, on hand-made traces and
//! on one recorded through `ServerLogs` with a secret to redact.
#![allow(clippy::unwrap_used)] // test code: a panic is a failed test

use super::*;

fn entry(at_ms: i64, direction: Direction, body: &str) -> TraceEntry {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    TraceEntry {
        at_ms,
        direction,
        method: v["method"].as_str().map(str::to_owned),
        id: match &v["id"] {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        },
        duration_ms: None,
        is_error: v.get("error").is_some(),
        body: body.to_owned(),
    }
}

fn sample() -> Vec<TraceEntry> {
    use Direction::{In, Note, Out};
    vec![
        entry(
            1000,
            Out,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep"}}"#,
        ),
        entry(
            1001,
            Out,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"Needle"}}}"#,
        ),
        entry(
            1002,
            Out,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#,
        ),
        // Out of order: 2 answers before 1.
        entry(
            1010,
            In,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Needle"}]}}"#,
        ),
        // The server asks the host (id 1 too, the other way: not the answer to request 1).
        entry(
            1020,
            In,
            r#"{"jsonrpc":"2.0","id":1,"method":"roots/list"}"#,
        ),
        entry(
            1025,
            Out,
            r#"{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}"#,
        ),
        entry(
            1600,
            In,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#,
        ),
        entry(
            1700,
            Out,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read"}"#,
        ),
        entry(
            1705,
            In,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"nope"}}"#,
        ),
        entry(1800, Note, "skipped a non-JSON line"),
        // An answer whose request is not kept.
        entry(1900, In, r#"{"jsonrpc":"2.0","id":77,"result":{}}"#),
    ]
}

#[test]
fn pairs_out_of_order_and_both_ways() {
    let t = inspect(&sample());
    let kinds: Vec<Kind> = t.iter().map(|e| e.kind).collect();
    use Kind::*;
    assert_eq!(
        kinds,
        [
            Request,
            Request,
            Notification,
            Response,
            Request,
            Response,
            Response,
            Request,
            Response,
            Other,
            Response
        ]
    );
    // Request 2 and its early answer.
    assert_eq!((t[1].pair, t[3].pair), (Some(3), Some(1)));
    assert_eq!(t[1].duration_ms, Some(9.0));
    assert_eq!(t[3].duration_ms, Some(9.0));
    assert_eq!(t[3].method.as_deref(), Some("tools/call"));
    // The server's roots/list request and the host's answer, not confused with id 1 out.
    assert_eq!((t[4].pair, t[5].pair), (Some(5), Some(4)));
    assert_eq!(t[5].method.as_deref(), Some("roots/list"));
    assert_eq!(t[5].duration_ms, Some(5.0));
    // Request 1 answered last.
    assert_eq!((t[0].pair, t[6].pair), (Some(6), Some(0)));
    assert_eq!(t[0].duration_ms, Some(600.0));
    // Notifications and notes pair with nothing and take no time.
    assert_eq!((t[2].pair, t[2].duration_ms), (None, None));
    assert_eq!((t[9].pair, t[9].duration_ms), (None, None));
    // An orphan answer.
    assert_eq!((t[10].pair, t[10].method.as_deref()), (None, None));
    // Errors of both kinds.
    assert!(t[8].is_error && !t[8].tool_error);
    assert!(t[6].tool_error && !t[6].is_error);
    assert!(!t[3].tool_error && !t[3].is_error);
}

#[test]
fn measured_duration_wins_and_ids_are_reused() {
    use Direction::{In, Out};
    let mut tr = vec![
        entry(0, Out, r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
        entry(5, In, r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
        entry(10, Out, r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
        entry(30, In, r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
    ];
    tr[1].duration_ms = Some(4.25);
    let t = inspect(&tr);
    assert_eq!(t[0].duration_ms, Some(4.25));
    assert_eq!((t[2].pair, t[3].pair), (Some(3), Some(2)));
    assert_eq!(t[3].duration_ms, Some(20.0));
}

fn picked(f: &TraceFilter) -> Vec<usize> {
    f.apply(inspect(&sample()))
        .iter()
        .map(|e| e.index)
        .collect()
}

#[test]
fn filters_select_exactly() {
    let all = TraceFilter::default();
    assert_eq!(picked(&all).len(), sample().len());
    let calls = TraceFilter {
        method: Some("TOOLS/CALL".into()),
        ..all.clone()
    };
    assert_eq!(picked(&calls), [0, 1, 3, 6]);
    let notes = TraceFilter {
        method: Some("notifications/".into()),
        ..all.clone()
    };
    assert_eq!(picked(&notes), [2]);
    let inbound = TraceFilter {
        direction: Some(Direction::In),
        ..all.clone()
    };
    assert_eq!(picked(&inbound), [3, 4, 6, 8, 10]);
    let errors = TraceFilter {
        errors_only: true,
        ..all.clone()
    };
    assert_eq!(picked(&errors), [6, 8]);
    let slow = TraceFilter {
        slow_ms: Some(100.0),
        ..all.clone()
    };
    assert_eq!(picked(&slow), [0, 6]);
    let slow_errors_in = TraceFilter {
        slow_ms: Some(100.0),
        errors_only: true,
        direction: Some(Direction::In),
        ..all.clone()
    };
    assert_eq!(picked(&slow_errors_in), [6]);
}

#[test]
fn search_is_case_insensitive_over_body_and_method() {
    let f = |q: &str| TraceFilter {
        search: Some(q.into()),
        ..Default::default()
    };
    assert_eq!(picked(&f("needle")), [1, 3]);
    assert_eq!(picked(&f("roots/LIST")), [4, 5]);
    assert_eq!(picked(&f("non-json")), [9]);
    assert_eq!(picked(&f("")).len(), sample().len());
    assert!(picked(&f("absent-text")).is_empty());
}

#[test]
fn export_is_one_json_object_per_line_with_timings() {
    let t = inspect(&sample());
    let text = to_jsonl(&t);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), t.len());
    assert!(text.ends_with('\n'));
    assert_eq!(lines[0]["direction"], "out");
    assert_eq!(lines[0]["kind"], "request");
    assert_eq!(lines[0]["duration_ms"], 600.0);
    assert_eq!(lines[0]["message"]["params"]["name"], "sleep");
    assert_eq!(lines[3]["method"], "tools/call");
    assert_eq!(lines[3]["id"], "2");
    assert_eq!(lines[8]["is_error"], true);
    // A note, or a cut body, is kept as text.
    assert_eq!(lines[9]["message"], "skipped a non-JSON line");
    assert_eq!(lines[9]["direction"], "note");
    assert!(to_jsonl(&[]).is_empty());
}

#[test]
fn the_export_holds_only_what_the_trace_kept() {
    use crate::redact::{Redactor, Secret};
    use crate::server_logs::ServerLogs;
    let logs = ServerLogs::new(None);
    logs.set_redactor(Redactor::new(&[Secret::new("sk-inspector-canary-9")]));
    logs.record(
        Direction::Out,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"key":"sk-inspector-canary-9"}}}"#,
    );
    logs.record(
        Direction::In,
        r#"{"jsonrpc":"2.0","id":1,"result":{"echo":"sk-inspector-canary-9"}}"#,
    );
    let t = inspect(&logs.trace());
    let text = to_jsonl(&t);
    assert!(!text.contains("sk-inspector-canary-9"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(t[0].duration_ms.is_some() && t[0].duration_ms == t[1].duration_ms);
}
