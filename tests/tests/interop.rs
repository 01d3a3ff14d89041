//! The interop matrix (issue 13, point 8): servers built on other people's MCP implementations,
//! reached THROUGH THE CLI (`switchboard` on a throwaway data dir), over every transport and both
//! protocol generations. Each row adds the server, approves it, lists its tools, calls `echo`
//! and checks the revision `switchboard server show` says was negotiated.
//!
//! | row | server | transport | revision |
//! |---|---|---|---|
//! | `ts_sdk_v2_stdio` | TypeScript SDK v2 (`tests/fixtures/ts2_server.mjs`) | stdio | 2026-07-28 |
//! | `ts_sdk_v2_http` | the same | Streamable HTTP | 2026-07-28 |
//! | `python_sdk_stdio` | Python `mcp` 2.3.0 (`tests/fixtures/py_server.py`) | stdio | 2026-07-28 |
//! | `python_sdk_http` | the same | Streamable HTTP | 2026-07-28 |
//! | `everything_2025_stdio` | `@modelcontextprotocol/server-everything` (TS SDK v1) | stdio | 2025-11-25 |
//! | `everything_2025_http` | the same | Streamable HTTP | 2025-11-25 |
//! | `python_sdk_legacy_stdio` | Python `mcp`, handshake-only (`--legacy`) | stdio | 2025-11-25 |
//! | `python_sdk_legacy_http` | the same, answering 2026-07-28 requests 400 | Streamable HTTP | 2025-11-25 |
//! | `python_sdk_sse` | Python `mcp`, handshake-only, HTTP+SSE (2024-11-05 transport) | SSE | 2025-11-25 |
//!
//! The rows at 2025-11-25 are servers that do not know `server/discover`: they prove the
//! fallback to `initialize`. The SSE row is added by its `/sse` URL, as a person would paste it:
//! the client's Streamable HTTP POST gets a 4xx there and must fall back to the SSE transport.
//!
//! Peers come from `make deps` (the Makefile's test target sets the variables):
//! `SWITCHBOARD_NODE` (else `.tools/node22/bin/node`), `SWITCHBOARD_NODE_MODULES` (else
//! `tests/npm/node_modules`), `SWITCHBOARD_PYTHON` (else `.tools/venv/bin/python`) and
//! `SWITCHBOARD_EVERYTHING_DIR`. A missing peer skips its row, or fails it with the reason when
//! `SWITCHBOARD_REQUIRE_PEERS=1` (as in `make test`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use switchboard_tests::*;

const TEXT: &str = "hello from the interop matrix";
const MODERN: &str = "2026-07-28";
const HANDSHAKE: &str = "2025-11-25";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Skips the row (returns `None`) or, under `SWITCHBOARD_REQUIRE_PEERS=1`, fails it.
fn missing<T>(what: &str) -> Option<T> {
    peer_missing(what)
}

/// Node 22: `SWITCHBOARD_NODE`, else `.tools/node22/bin/node`, else `node` on PATH.
fn node22() -> String {
    env_path("SWITCHBOARD_NODE")
        .or_else(|| Some(repo().join(".tools/node22/bin/node")).filter(|p| p.exists()))
        .map_or_else(|| "node".to_owned(), |p| p.to_string_lossy().into_owned())
}

/// Node 22 and the folder holding the TypeScript SDK v2 packages.
fn ts2() -> Option<(String, PathBuf)> {
    let modules = env_path("SWITCHBOARD_NODE_MODULES")
        .unwrap_or_else(|| repo().join("tests/npm/node_modules"));
    let ok = ["server", "node"].iter().all(|p| {
        modules
            .join("@modelcontextprotocol")
            .join(p)
            .join("package.json")
            .is_file()
    });
    if !ok {
        return missing(&format!(
            "@modelcontextprotocol/server and @modelcontextprotocol/node are not installed in {}",
            modules.display()
        ));
    }
    Some((node22(), modules))
}

/// The python that imports the `mcp` package.
fn python() -> Option<String> {
    python_with("mcp.server.mcpserver").map(|p| p.to_string_lossy().into_owned())
}

fn fixture(name: &str) -> String {
    repo()
        .join("tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// An HTTP peer we started: killed (and waited for) when dropped; its stderr is shown when the
/// row failed.
struct Served {
    url: String,
    child: Option<KillOnDrop>,
    stderr: tempfile::NamedTempFile,
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.child.take());
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.stderr.path()).unwrap_or_default();
            eprintln!("--- stderr of the peer at {} ---\n{log}", self.url);
        }
    }
}

/// Starts `program args` and waits for its `listening URL` line on stdout.
fn serve(program: &str, args: &[String]) -> Served {
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr.reopen().unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let guard = KillOnDrop(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next());
        // Keep draining so the peer never blocks on a full pipe.
        for _ in lines {}
    });
    let line = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Some(Ok(line))) => line,
        other => panic!(
            "{program} {args:?} did not say where it listens ({other:?}); its stderr:\n{}",
            std::fs::read_to_string(stderr.path()).unwrap_or_default()
        ),
    };
    let url = line
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("unexpected first line from {program}: {line:?}"))
        .trim()
        .to_owned();
    Served {
        url,
        child: Some(guard),
        stderr,
    }
}

/// Where the server is: a command line (stdio) or a URL.
enum Target {
    Stdio(Vec<String>),
    Url(String),
}

struct Row<'a> {
    name: &'a str,
    target: Target,
    /// Another tool the listing must show besides `echo`.
    other_tool: &'a str,
    /// `echo`'s arguments: `{"text": ..}`, or server-everything's `{"message": ..}`.
    echo_key: &'a str,
    revision: &'a str,
}

fn cli(data: &Path, args: &[&str]) -> String {
    let o = run_cli(data, args, "", &[]);
    assert!(
        o.status.success(),
        "switchboard {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The revision `server show` reports: the first line that names the protocol and holds a
/// revision date (`protocol: 2026-07-28`, `protocol revision 2025-11-25 (negotiated)`, ...).
fn shown_revision(show: &str) -> Option<String> {
    show.lines()
        .filter(|l| l.to_ascii_lowercase().contains("protocol"))
        .find_map(|l| {
            l.split(|c: char| !(c.is_ascii_digit() || c == '-'))
                .find(|w| w.len() == 10 && w.as_bytes()[4] == b'-' && w.as_bytes()[7] == b'-')
                .map(str::to_owned)
        })
}

/// One row: add, approve, list, call `echo`, and check the negotiated revision.
fn check(row: Row<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let name = row.name;
    let mut add: Vec<&str> = vec![
        "server",
        "add",
        name,
        "--init-timeout",
        "60",
        "--timeout",
        "60",
    ];
    match &row.target {
        Target::Url(url) => add.extend(["--url", url.as_str()]),
        Target::Stdio(cmd) => {
            add.push("--");
            add.extend(cmd.iter().map(String::as_str));
        }
    }
    cli(data, &add);
    cli(data, &["server", "trust", name, "--yes"]);

    let listed = cli(data, &["tools", "--server", name, "--json"]);
    let tools: serde_json::Value = serde_json::from_str(&listed)
        .unwrap_or_else(|e| panic!("{name}: `tools --json` is not JSON ({e}): {listed}"));
    let names: Vec<&str> = tools
        .as_array()
        .unwrap_or_else(|| panic!("{name}: `tools --json` is not a list: {listed}"))
        .iter()
        .filter_map(|t| t["tool"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&row.other_tool),
        "{name}: expected echo and {} among {names:?}",
        row.other_tool
    );

    let args = serde_json::json!({ row.echo_key: TEXT }).to_string();
    let answer = cli(data, &["call", name, "echo", "--yes", "--args", &args]);
    assert!(answer.contains(TEXT), "{name}: echo answered {answer:?}");

    let show = cli(data, &["server", "show", name]);
    let revision = shown_revision(&show).unwrap_or_else(|| {
        panic!(
            "{name}: `server show` names no negotiated protocol revision (expected a line with \
             \"protocol\" and {}):\n{show}",
            row.revision
        )
    });
    assert_eq!(
        revision, row.revision,
        "{name}: negotiated revision; `server show`:\n{show}"
    );
}

/// A row of our fixtures (`tests/fixtures`): tools `echo {text}` and `add`.
fn fixture_row<'a>(name: &'a str, target: Target, revision: &'a str) -> Row<'a> {
    Row {
        name,
        target,
        other_tool: "add",
        echo_key: "text",
        revision,
    }
}

/// `ts2_server.mjs` and its arguments for `transport` (`stdio`, or `http` on a free port).
fn ts2_args(modules: &Path, transport: &str) -> Vec<String> {
    let mut v = vec![
        fixture("ts2_server.mjs"),
        "--transport".into(),
        transport.into(),
    ];
    if transport == "http" {
        v.extend(["--port".into(), "0".into()]);
    }
    v.extend(["--modules".into(), modules.to_string_lossy().into_owned()]);
    v
}

/// `py_server.py` and its arguments (`--port` defaults to a free one).
fn py_args(transport: &str, legacy: bool) -> Vec<String> {
    let mut v = vec![
        fixture("py_server.py"),
        "--transport".into(),
        transport.into(),
    ];
    if legacy {
        v.push("--legacy".into());
    }
    v
}

/// `program args` as a stdio command line.
fn command(program: String, args: Vec<String>) -> Target {
    Target::Stdio(std::iter::once(program).chain(args).collect())
}

#[test]
fn ts_sdk_v2_stdio() {
    let Some((node, modules)) = ts2() else { return };
    let target = command(node, ts2_args(&modules, "stdio"));
    check(fixture_row("ts2-stdio", target, MODERN));
}

#[test]
fn ts_sdk_v2_http() {
    let Some((node, modules)) = ts2() else { return };
    let served = serve(&node, &ts2_args(&modules, "http"));
    let target = Target::Url(served.url.clone());
    check(fixture_row("ts2-http", target, MODERN));
}

#[test]
fn python_sdk_stdio() {
    let Some(py) = python() else { return };
    let target = command(py, py_args("stdio", false));
    check(fixture_row("py-stdio", target, MODERN));
}

#[test]
fn python_sdk_http() {
    let Some(py) = python() else { return };
    let served = serve(&py, &py_args("http", false));
    let target = Target::Url(served.url.clone());
    check(fixture_row("py-http", target, MODERN));
}

#[test]
fn python_sdk_legacy_stdio() {
    let Some(py) = python() else { return };
    let target = command(py, py_args("stdio", true));
    check(fixture_row("py-legacy", target, HANDSHAKE));
}

#[test]
fn python_sdk_legacy_http() {
    let Some(py) = python() else { return };
    let served = serve(&py, &py_args("http", true));
    let target = Target::Url(served.url.clone());
    check(fixture_row("py-legacy-http", target, HANDSHAKE));
}

#[test]
fn python_sdk_sse() {
    let Some(py) = python() else { return };
    let served = serve(&py, &py_args("sse", true));
    assert!(served.url.ends_with("/sse"), "{}", served.url);
    let target = Target::Url(served.url.clone());
    check(fixture_row("py-sse", target, HANDSHAKE));
}

#[test]
fn everything_2025_stdio() {
    let Some(dir) = everything_dir() else { return };
    let node = node22();
    let index = dir.join("dist/index.js").to_string_lossy().into_owned();
    check(Row {
        name: "everything",
        target: Target::Stdio(vec![node, index, "stdio".into()]),
        other_tool: "get-sum",
        echo_key: "message",
        revision: HANDSHAKE,
    });
}

#[test]
fn everything_2025_http() {
    let Some(dir) = everything_dir() else { return };
    let node = node22();
    let port = free_port();
    let child = Command::new(&node)
        .arg(dir.join("dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _guard = KillOnDrop(child);
    let up = (0..600).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "server-everything did not listen on {port}");
    check(Row {
        name: "everything-http",
        target: Target::Url(format!("http://127.0.0.1:{port}/mcp")),
        other_tool: "get-sum",
        echo_key: "message",
        revision: HANDSHAKE,
    });
}

#[test]
fn revision_is_read_from_the_protocol_line() {
    assert_eq!(
        shown_revision("name: x\nprotocol: 2026-07-28 (negotiated)\n").as_deref(),
        Some(MODERN)
    );
    assert_eq!(
        shown_revision("timeouts: 60s\nprotocol revision 2025-11-25\n").as_deref(),
        Some(HANDSHAKE)
    );
    assert_eq!(shown_revision("name: x\nurl: http://h/2026-07-28\n"), None);
}
