//! `sb-bench --only redaction,metrics` (issue 16's benchmark) with small counts: the figures run
//! and their own checks hold. No timing is asserted (benchmarks are programs, not timed tests);
//! what is asserted is what makes the figures mean anything:
//! - no value planted in a request reaches the provider behind the redacting wrapper, a
//!   request with nothing to find reaches it unchanged, and a call's placeholders are put back;
//! - the metrics in SQLite match, exactly, the governed calls made with recording on (so the
//!   bench's switch really turned recording off for the others), and every sample recorded by
//!   the recorder alone was written (none dropped).

use std::process::Command;

use serde_json::Value;

#[test]
fn host_cost_figures_run_and_check_themselves() {
    let out = Command::new(env!("CARGO_BIN_EXE_sb-bench"))
        .args([
            "--only",
            "redaction,metrics",
            "--redactions",
            "40",
            "--cost-calls",
            "80",
            "--cost-samples",
            "10000",
            "--json",
            "--fake-server",
            env!("CARGO_BIN_EXE_fake-mcp-server"),
        ])
        .env_remove("SWITCHBOARD_BENCH_OUT")
        .output()
        .expect("sb-bench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "sb-bench failed: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let cost = &report["host_cost"];
    assert_eq!(cost["failures"], Value::Array(Vec::new()), "{stderr}");
    let labels: Vec<&str> = cost["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .filter_map(|f| f["label"].as_str())
        .collect();
    for want in [
        "yardstick: one echo call",
        "redact 1 KB, nothing found",
        "redact 10 KB, ~2 findings/KB",
        "redact 100 KB, ~2 findings/KB",
        "no redaction 100 KB",
        "restore: a call with 3 placeholders",
        "metrics: run_tool, recording on",
        "metrics: run_tool, recording off",
        "metrics: recorder alone",
        "metrics: writer into SQLite",
    ] {
        assert!(
            labels.iter().any(|l| l.starts_with(want)),
            "no figure {want:?} in {labels:?}"
        );
    }
    // Every figure measured something.
    for f in cost["figures"].as_array().expect("figures") {
        assert!(f["n"].as_u64().unwrap_or(0) > 0, "{f}");
        assert!(f["median"].as_f64().unwrap_or(0.0) > 0.0, "{f}");
    }
}
