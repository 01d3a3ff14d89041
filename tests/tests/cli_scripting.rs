//! The CLI as scripts and people rely on it: a JSON error object and a documented exit code
//! for every failure under `--json`, a quiet end when the reader closes stdout, logs without
//! colour codes in a pipe and without libraries' chatter, counted nouns that agree, and error
//! messages without Rust type names that quote a server's text only in part.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use switchboard_tests::scenario::AppData;
use switchboard_tests::*;

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        run_cli(self.dir.path(), args, "", &[])
    }

    /// Runs it with only `env` deciding the logs (none of the caller's log settings).
    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(workspace_bin("switchboard"))
            .args(args)
            .env("SWITCHBOARD_DATA_DIR", self.dir.path())
            .env_remove("RUST_LOG")
            .env_remove("SWITCHBOARD_LOG")
            .env_remove("NO_COLOR")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Adds the fake server as `name` with extra arguments and approves it.
    fn trusted_fake(&self, name: &str, args: &[&str]) {
        AppData::on(self.dir.path()).approved_fake(name, args);
    }

    /// Adds a remote server at `url` as `name` and approves it.
    fn trusted_remote(&self, name: &str, url: &str) {
        let o = self.run(&["server", "add", name, "--url", url]);
        assert!(o.status.success(), "{}", err(&o));
        let o = self.run(&["server", "trust", name, "--yes"]);
        assert!(o.status.success(), "{}", err(&o));
    }
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The error object on stdout: its code and message; fails unless stdout is exactly one.
fn error_object(o: &Output) -> (String, String) {
    let v: Value = serde_json::from_str(&out(o)).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}):\n{}\nstderr: {}",
            out(o),
            err(o)
        )
    });
    let code = v["error"]["code"].as_str().unwrap_or_else(|| panic!("{v}"));
    let message = v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"));
    (code.to_owned(), message.to_owned())
}

#[test]
fn json_failures_print_an_error_object_with_a_documented_exit_code() {
    let cli = Cli::new();

    let o = cli.run(&["--json", "server", "show", "ghost"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let (code, message) = error_object(&o);
    assert_eq!(code, "unknown_server");
    assert!(message.contains("no server named ghost"), "{message}");
    // People still get the sentence on stderr.
    assert!(err(&o).starts_with("error: there is no server named ghost"));

    // A wrong command line, from the parser or from a flag's value.
    let o = cli.run(&["--json", "server", "list", "--bogus"]);
    assert_eq!(o.status.code(), Some(64), "{}", err(&o));
    assert_eq!(error_object(&o).0, "usage");
    let o = cli.run(&["server", "list", "--bogus"]);
    assert_eq!(o.status.code(), Some(64), "{}", err(&o));
    assert!(out(&o).is_empty(), "no --json, no object: {}", out(&o));

    cli.trusted_fake("fake", &[]);
    let o = cli.run(&["--json", "call", "fake", "echo", "--args", "not json"]);
    assert_eq!(o.status.code(), Some(64), "{}", err(&o));
    let (code, message) = error_object(&o);
    assert_eq!(code, "usage");
    assert!(
        message.contains("--args must be a JSON object"),
        "{message}"
    );

    // Arguments that do not match the tool's schema: the host's typed error names it.
    let o = cli.run(&[
        "--json",
        "call",
        "fake",
        "add",
        "--yes",
        "--args",
        r#"{"a": "one"}"#,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(error_object(&o).0, "invalid_arguments");

    // Denied by a policy rule.
    let o = cli.run(&[
        "policy", "add", "no-echo", "--effect", "deny", "--server", "fake", "--tool", "echo",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let o = cli.run(&[
        "--json",
        "call",
        "fake",
        "echo",
        "--yes",
        "--args",
        r#"{"text": "x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    assert_eq!(error_object(&o).0, "denied");

    // Not approved yet, and a person's no.
    let fake = fake_server();
    let o = cli.run(&["server", "add", "new", "--", fake.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let o = cli.run(&["--json", "call", "new", "echo", "--yes"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(error_object(&o).0, "needs_approval");
    let o = cli.run(&["--json", "server", "trust", "new"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(error_object(&o).0, "needs_confirmation");

    // The tool's own error is a result, not an error object: exit 2 and the result as JSON.
    let o = cli.run(&["--json", "call", "fake", "fail", "--yes"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["isError"], true, "{v}");

    // The codes are documented where people look.
    let o = cli.run(&["--help"]);
    assert!(o.status.success());
    for line in ["Exit codes:", "64", "130", "--json"] {
        assert!(out(&o).contains(line), "{line}: {}", out(&o));
    }
}

/// Runs the CLI with its stdout already closed by the reader.
fn run_with_closed_stdout(cli: &Cli, args: &[&str]) -> Output {
    let mut child = Command::new(workspace_bin("switchboard"))
        .args(args)
        .env("SWITCHBOARD_DATA_DIR", cli.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the first byte: every write the CLI makes hits a closed pipe.
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let cli = Cli::new();
    for i in 0..20 {
        let o = cli.run(&["server", "add", &format!("s{i}"), "--", "/bin/true"]);
        assert!(o.status.success(), "{}", err(&o));
    }
    for args in [
        &["server", "list"][..],
        &["--json", "server", "list"],
        &["--help"],
    ] {
        let o = run_with_closed_stdout(&cli, args);
        assert!(!err(&o).contains("panicked"), "{args:?}: {}", err(&o));
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
    }
    // The same through a shell pipeline, as people write it.
    let line = format!(
        "{} server list | head -0",
        workspace_bin("switchboard").display()
    );
    let o = Command::new("sh")
        .args(["-c", &line])
        .env("SWITCHBOARD_DATA_DIR", cli.dir.path())
        .output()
        .unwrap();
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
}

#[test]
fn logs_in_a_pipe_have_no_colour_codes_and_libraries_stay_at_warn() {
    let cli = Cli::new();
    cli.trusted_fake("banner", &["--stderr-banner", "hello from the server"]);
    for env in [&[][..], &[("RUST_LOG", "debug")][..]] {
        let args: &[&str] = if env.is_empty() {
            &["--log", "debug", "tools"]
        } else {
            &["tools"]
        };
        let o = cli.run_env(args, env);
        assert!(o.status.success(), "{}", err(&o));
        let e = err(&o);
        assert!(e.contains("DEBUG"), "debug logs were asked for: {e}");
        assert!(!e.contains('\x1b'), "escape codes in a pipe: {e:?}");
        if env.is_empty() {
            // `--log debug` is about Switchboard: libraries stay at warn (at info rmcp logs
            // whole payloads, at debug sqlx every query).
            let chatter: Vec<&str> = e
                .lines()
                .filter(|l| l.contains(" DEBUG ") || l.contains(" INFO "))
                .filter(|l| l.contains("rmcp::") || l.contains("sqlx::"))
                .collect();
            assert!(chatter.is_empty(), "{chatter:#?}");
        }
    }
    // Nothing asked: no debug or info lines at all.
    let o = cli.run_env(&["tools"], &[]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        !err(&o).contains("DEBUG") && !err(&o).contains(" INFO "),
        "{}",
        err(&o)
    );
}

/// A minimal Streamable HTTP MCP server on a loopback port: one tool per misbehaviour, one
/// prompt and one resource. Returns its URL.
fn remote_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = serve(conn);
            });
        }
    });
    url
}

const BIG: usize = 64 * 1024;

fn serve(conn: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut conn = conn;
    let mut reply = |status: &str, extra: &str, body: &[u8]| -> std::io::Result<()> {
        write!(
            conn,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        )?;
        conn.write_all(body)?;
        conn.flush()
    };
    if !request_line.starts_with("POST") {
        return reply("405 Method Not Allowed", "", b"");
    }
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else {
        return reply("202 Accepted", "", b"");
    };
    let result = |r: Value| json!({"jsonrpc": "2.0", "id": id, "result": r}).to_string();
    match msg["method"].as_str().unwrap_or_default() {
        "initialize" => reply(
            "200 OK",
            "",
            result(json!({
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "serverInfo": {"name": "remote", "version": "1"}
            }))
            .as_bytes(),
        ),
        "tools/list" => {
            let tools: Vec<Value> = ["big_error", "status500", "garbage"]
                .iter()
                .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
                .collect();
            reply("200 OK", "", result(json!({"tools": tools})).as_bytes())
        }
        "prompts/list" => reply(
            "200 OK",
            "",
            result(json!({"prompts": [{"name": "only"}]})).as_bytes(),
        ),
        "resources/list" => reply(
            "200 OK",
            "",
            result(json!({"resources": [{"uri": "r://one", "name": "one"}]})).as_bytes(),
        ),
        "resources/templates/list" => reply(
            "200 OK",
            "",
            result(json!({"resourceTemplates": []})).as_bytes(),
        ),
        "tools/call" => match msg["params"]["name"].as_str().unwrap_or_default() {
            "big_error" => {
                let e = json!({"jsonrpc": "2.0", "id": id,
                               "error": {"code": -32000, "message": "E".repeat(BIG)}});
                reply("200 OK", "", e.to_string().as_bytes())
            }
            "status500" => {
                let header = format!("X-Big: {}\r\n", "H".repeat(BIG));
                reply("500 Internal Server Error", &header, b"oops")
            }
            _ => {
                let mut garbage = b"{".to_vec();
                garbage.extend(std::iter::repeat_n(b'G', BIG));
                reply("200 OK", "", &garbage)
            }
        },
        _ => reply("200 OK", "", result(json!({})).as_bytes()),
    }
}

#[test]
fn counted_nouns_agree_with_their_number() {
    let cli = Cli::new();
    cli.trusted_remote("remote", &remote_server());
    let o = cli.run(&["tools"]);
    assert!(
        out(&o).contains("remote (3 tools)"),
        "{}{}",
        out(&o),
        err(&o)
    );
    let o = cli.run(&["prompts"]);
    assert!(
        out(&o).contains("remote (1 prompt)"),
        "{}{}",
        out(&o),
        err(&o)
    );
    let o = cli.run(&["resources"]);
    assert!(
        out(&o).contains("remote (1 resource, 0 templates)"),
        "{}{}",
        out(&o),
        err(&o)
    );
}

#[test]
fn http_errors_read_without_rust_type_names_and_quote_the_server_in_part() {
    let cli = Cli::new();
    cli.trusted_remote("remote", &remote_server());
    for tool in ["status500", "garbage", "big_error"] {
        let o = cli.run(&["--json", "call", "remote", tool, "--yes"]);
        assert_eq!(o.status.code(), Some(1), "{tool}: {}", err(&o));
        let (code, message) = error_object(&o);
        let e = err(&o);
        let sentence: Vec<&str> = e
            .lines()
            .filter(|l| l.starts_with("error:") || l.starts_with("  caused by:"))
            .collect();
        assert!(!sentence.is_empty(), "{tool}: {e}");
        for text in sentence.iter().copied().chain([message.as_str()]) {
            assert!(!text.contains("::"), "{tool}: a Rust path in {text:?}");
            assert!(!text.contains("Traced<"), "{tool}: {text:?}");
        }
        // Nothing on stderr names a library's types (rmcp's own log lines are off).
        assert!(
            !e.contains("rmcp::") && !e.contains("reqwest::"),
            "{tool}: {e}"
        );
        // 64 KB of server text becomes at most a few KB of output, and says it was cut.
        assert!(e.len() < 8 * 1024, "{tool}: {} bytes on stderr", e.len());
        assert!(
            out(&o).len() < 4 * 1024,
            "{tool}: {} bytes on stdout",
            out(&o).len()
        );
        if tool == "big_error" {
            assert_eq!(code, "server_error");
            assert!(message.contains("bytes more)"), "{message}");
        }
    }
}
