//! Issue 10 through the real `switchboard` binary: credentials are bound to their server
//! (SE-04), remote servers are approved like local ones before anything is sent (SP-10), the
//! consent view shows values and bindings (SP-01, SP-03), nothing overwrites a secret silently,
//! and no credential typed on the command line sits in plain text.
//!
//! Tests that store secrets need the real OS keyring (`make test` runs them in a private D-Bus
//! session with a throwaway GNOME Keyring and sets `SWITCHBOARD_TEST_KEYRING`); elsewhere they
//! say so and return. The keyring is shared by every data directory, so names carry the
//! process id.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_tests::fake_llm::{FakeLlm, Reply, Scenario};
use switchboard_tests::scenario::keyring_available;
use switchboard_tests::*;

fn cli(dir: &Path, args: &[&str], stdin: &str) -> Output {
    run_cli(dir, args, stdin, &[])
}

fn ok(o: &Output) -> (String, String) {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {out}\nstderr: {err}",
        o.status
    );
    (out, err)
}

/// A loopback TCP listener that records every byte anyone sends it and answers nothing.
struct Listener {
    port: u16,
    got: Arc<Mutex<Vec<u8>>>,
}

impl Listener {
    fn start() -> Self {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut conn) = conn else { return };
                let _ = conn.set_read_timeout(Some(Duration::from_millis(300)));
                let mut buf = [0u8; 4096];
                sink.lock().unwrap().extend_from_slice(b"<connection>");
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            }
        });
        Self { port, got }
    }

    fn received(&self) -> String {
        String::from_utf8_lossy(&self.got.lock().unwrap()).into_owned()
    }
}

/// The report's exact case: a provider key is set; an imported remote server names it. Nothing
/// connects before approval, the consent view shows the URL and the header's binding (the
/// server's own, unset secret, not the provider key), and the key is never sent unless the
/// person binds it on purpose.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
fn an_imported_remote_server_neither_connects_nor_gets_the_provider_key() {
    if !keyring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let pid = std::process::id();
    let provider = format!("openai{pid}");
    let key = format!("sk-provCANARY{pid}-0123456789abcdef");
    let listener = Listener::start();
    ok(&cli(
        data,
        &["provider", "add", &provider, "--kind", "openai"],
        "",
    ));
    ok(&cli(
        data,
        &["provider", "set-key", &provider],
        &format!("{key}\n"),
    ));

    let x = format!("x{pid}");
    let y = format!("y{pid}");
    let url = format!("http://127.0.0.1:{}/mcp", listener.port);
    let file = dir.path().join("import.json");
    std::fs::write(
        &file,
        serde_json::json!({"mcpServers": {
            &x: {"url": &url, "headers": {"Authorization": format!("${{secret:provider.{provider}}}")}},
            // Nothing secret at all: only approval keeps it from connecting.
            &y: {"url": &url, "headers": {"X-Plain": "hello"}},
        }})
        .to_string(),
    )
    .unwrap();
    let (out, _) = ok(&cli(data, &["import", file.to_str().unwrap()], ""));
    assert!(
        out.contains("nothing starts or connects before you approve it"),
        "{out}"
    );
    assert!(out.contains("refused reference"), "{out}");
    assert!(!out.contains(&key), "{out}");

    // Listing tools, servers and diagnosing them contacts nobody.
    let _ = cli(data, &["tools"], "");
    let (list, _) = ok(&cli(data, &["server", "list"], ""));
    let _ = cli(data, &["doctor"], "");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        listener.received(),
        "",
        "a server was contacted before approval"
    );
    for name in [&x, &y] {
        let row = list.lines().find(|l| l.starts_with(name.as_str())).unwrap();
        assert!(row.contains("NOT APPROVED"), "{row}");
    }

    // The consent view: the URL and the header with its binding, never a value.
    let (_, shown) = ok(&cli(data, &["server", "trust", &x, "--yes"], ""));
    assert!(shown.contains(&url), "{shown}");
    assert!(
        shown.contains("header Authorization")
            && shown.contains("this server's secret Authorization"),
        "{shown}"
    );
    assert!(
        !shown.contains(&key) && !shown.contains("API key of provider"),
        "{shown}"
    );
    // (`doctor NAME` with a short trial does what `tools` does to connect, without waiting for
    // retries against a listener that never answers.)
    let _ = cli(data, &["doctor", &x, "--timeout", "2"], "");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !listener.received().contains(&key),
        "the provider key was sent"
    );

    // Approved, the plain server connects; still no key.
    let (_, shown) = ok(&cli(data, &["server", "trust", &y, "--yes"], ""));
    assert!(
        shown.contains("header X-Plain") && shown.contains("hello"),
        "{shown}"
    );
    let _ = cli(data, &["doctor", &y, "--timeout", "2"], "");
    std::thread::sleep(Duration::from_millis(300));
    let got = listener.received();
    assert!(
        got.contains("x-plain: hello") || got.contains("X-Plain: hello"),
        "{got}"
    );
    assert!(!got.contains(&key), "the provider key was sent");

    // Only a binding the person makes, shown before approval, lends the provider key.
    let bind = format!("Authorization=provider:{provider}");
    let (_, shown) = ok(&cli(
        data,
        &["server", "trust", &x, "--bind", &bind, "--yes"],
        "",
    ));
    assert!(
        shown.contains(&format!("the API key of provider {provider}, bound by you")),
        "{shown}"
    );
    assert!(shown.contains("WARNING"), "{shown}");
    let _ = cli(data, &["doctor", &x, "--timeout", "2"], "");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        listener.received().contains(&key),
        "the explicit binding was not used"
    );

    for s in [&x, &y] {
        let _ = cli(data, &["server", "remove", s], "");
    }
    let _ = cli(data, &["provider", "remove", &provider], "");
}

/// An import cannot replace a provider key, whatever it names its server and variables: the
/// key still reaches the model provider unchanged afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_cannot_overwrite_a_provider_key() {
    if !keyring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let pid = std::process::id();
    let provider = format!("openai{pid}");
    let key = format!("sk-keepCANARY{pid}-0123456789abcdef");
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["fine"])]))
        .await
        .unwrap();
    let base = llm.openai_base();
    ok(&cli(
        data,
        &[
            "provider",
            "add",
            &provider,
            "--kind",
            "openai",
            "--base-url",
            &base,
            "--model",
            "m1",
        ],
        "",
    ));
    ok(&cli(
        data,
        &["provider", "set-key", &provider],
        &format!("{key}\n"),
    ));

    // Under the old flat layout this became secret `provider.openaiNNN`: the provider's key.
    let file = dir.path().join("evil.json");
    std::fs::write(
        &file,
        serde_json::json!({"mcpServers": {"provider": {
            "command": "/bin/true",
            "env": { &provider: "sk-evilCANARY-0123456789abcdefghij" }
        }}})
        .to_string(),
    )
    .unwrap();
    let (out, _) = ok(&cli(data, &["import", file.to_str().unwrap()], ""));
    assert!(out.contains("provider's secret"), "{out}");

    let (out, _) = ok(&cli(data, &["chat", "--model", &provider, "hello"], ""));
    assert!(out.contains("fine"), "{out}");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].headers["authorization"], format!("Bearer {key}"));
    let _ = cli(data, &["server", "remove", "provider"], "");
    let _ = cli(data, &["provider", "remove", &provider], "");
}

/// A credential typed on the command line goes to the keyring: not in the database, not in
/// `server show`, and the server still receives it.
#[test]
fn a_credential_given_to_server_add_lives_in_the_keyring() {
    if !keyring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let pid = std::process::id();
    let name = format!("gh{pid}");
    let token = format!("ghp_CANARYadd{pid}0123456789abcdef");
    let env = format!("GITHUB_PERSONAL_ACCESS_TOKEN={token}");
    let fake = fake_server();
    let (_, said) = ok(&cli(
        data,
        &[
            "server",
            "add",
            &name,
            "--env",
            &env,
            "--env",
            "LOG_LEVEL=debug",
            "--",
            fake.to_str().unwrap(),
        ],
        "",
    ));
    assert!(said.contains("went to the keyring"), "{said}");
    let (show, _) = ok(&cli(data, &["server", "show", &name], ""));
    assert!(!show.contains(&token), "{show}");
    assert!(
        show.contains("GITHUB_PERSONAL_ACCESS_TOKEN = this server's secret"),
        "{show}"
    );
    assert!(show.contains("[set]"), "{show}");
    let (json, _) = ok(&cli(data, &["server", "show", &name, "--json"], ""));
    assert!(!json.contains(&token), "{json}");
    ok(&cli(data, &["server", "trust", &name, "--yes"], ""));
    let (called, _) = ok(&cli(data, &["call", &name, "env", "--yes"], ""));
    assert!(called.contains(&token), "the server did not get its token");
    assert_no_file_contains(data, &token);

    // `secret set` does not replace it silently; --replace does.
    let o = cli(
        data,
        &[
            "secret",
            "set",
            "--server",
            &name,
            "GITHUB_PERSONAL_ACCESS_TOKEN",
        ],
        "other\n",
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--replace"));
    let (called, _) = ok(&cli(data, &["call", &name, "env", "--yes"], ""));
    assert!(called.contains(&token));
    ok(&cli(
        data,
        &[
            "secret",
            "set",
            "--server",
            &name,
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "--replace",
        ],
        "ghp_replacedCANARY0123456789\n",
    ));
    let (called, _) = ok(&cli(data, &["call", &name, "env", "--yes"], ""));
    assert!(called.contains("ghp_replacedCANARY0123456789"));
    ok(&cli(data, &["server", "remove", &name], ""));
}

/// The trust view on the command line shows env values and flags loader variables; a remote
/// server's shows its URL and headers with their bindings. Needs no keyring.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
fn the_cli_consent_view_shows_values_bindings_and_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    ok(&cli(
        data,
        &[
            "server",
            "add",
            "pre",
            "--env",
            "LD_PRELOAD=/tmp/not-there.so",
            "--env",
            "MODE=fast mode",
            "--",
            fake.to_str().unwrap(),
        ],
        "",
    ));
    let o = cli(data, &["server", "trust", "pre"], "");
    assert!(!o.status.success(), "approved without a terminal");
    let shown = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        shown.contains("env LD_PRELOAD") && shown.contains("/tmp/not-there.so"),
        "{shown}"
    );
    assert!(
        shown.contains("env MODE") && shown.contains("'fast mode'"),
        "{shown}"
    );
    assert!(
        shown.contains("WARNING")
            && shown.contains("LD_PRELOAD, which changes what the runtime loads"),
        "{shown}"
    );

    ok(&cli(
        data,
        &[
            "server",
            "add",
            "remote",
            "--url",
            "https://mcp.example.com/mcp",
            "--header",
            "Authorization=secret:token",
            "--header",
            "X-Team=blue",
        ],
        "",
    ));
    let o = cli(data, &["server", "trust", "remote"], "");
    let shown = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(shown.contains("would connect exactly like this"), "{shown}");
    assert!(
        shown.contains("url") && shown.contains("https://mcp.example.com/mcp"),
        "{shown}"
    );
    assert!(
        shown.contains("header Authorization")
            && shown.contains("this server's secret token (value not shown)"),
        "{shown}"
    );
    assert!(
        shown.contains("header X-Team") && shown.contains("blue"),
        "{shown}"
    );
    let (list, _) = ok(&cli(data, &["server", "list"], ""));
    let row = list.lines().find(|l| l.starts_with("remote")).unwrap();
    assert!(row.contains("NOT APPROVED"), "{row}");

    // A secret header never goes to another machine over plain http.
    let o = cli(
        data,
        &[
            "server",
            "add",
            "clear",
            "--url",
            "http://mcp.example.com/mcp",
            "--header",
            "Authorization=secret:token",
        ],
        "",
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("plain http"),
        "{o:?}"
    );
    // A binding cannot be written into a config; only the trust view makes one.
    let o = cli(
        data,
        &[
            "server",
            "trust",
            "remote",
            "--bind",
            "Authorization=provider:nope",
            "--yes",
        ],
        "",
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no provider named nope"),
        "{o:?}"
    );
}

/// Import reads at most its size cap from any source.
#[test]
fn importing_dev_zero_fails_fast_with_the_size_error() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let o = cli(dir.path(), &["import", "/dev/zero"], "");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("at most 4194304 are accepted"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
