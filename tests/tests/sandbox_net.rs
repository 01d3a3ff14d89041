//! The network of a sandboxed server is its own (SP-13): a namespace of its own through pasta,
//! never the host's, and with domain lists only the host's filtering proxy.
//!
//! Test traffic stays on loopback: the test's HTTP server listens on the host's 127.0.0.1, a
//! canary port and an abstract Unix socket greet whoever connects. Every test first shows that
//! the canaries are in reach unsandboxed (so a refusal is the sandbox's doing), and "allowed
//! domain reached" means the person listed `localhost` by name, which is what lets the proxy
//! connect to a loopback address on purpose. They need bubblewrap and pasta (`make deps`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::host::{CallOptions, Host};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::Content;
use switchboard_core::sandbox::explain::Blocked;
use switchboard_core::sandbox::SandboxSpec;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::*;

/// The test's loopback services: a greeting port, a greeting abstract socket and an HTTP
/// server that counts the requests it answers.
struct Canaries {
    token: String,
    port: u16,
    abstract_name: String,
    http: u16,
    served: Arc<AtomicUsize>,
}

impl Canaries {
    fn new() -> Self {
        for tool in ["/usr/bin/bwrap", "/usr/bin/pasta"] {
            assert!(
                Path::new(tool).exists(),
                "{tool} is missing: run `make deps`"
            );
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let token = format!("net-canary-{}-{n}", std::process::id());
        let greet = |listener: TcpListener, line: String| {
            std::thread::spawn(move || {
                for mut c in listener.incoming().flatten() {
                    let _ = c.write_all(line.as_bytes());
                }
            });
        };
        let port_listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = port_listener.local_addr().unwrap().port();
        greet(port_listener, format!("{token}-port\n"));

        use std::os::linux::net::SocketAddrExt;
        let abstract_name = format!("switchboard-test-{token}");
        let addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let unix = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        let line = format!("{token}-abstract\n");
        std::thread::spawn(move || {
            for mut c in unix.incoming().flatten() {
                let _ = c.write_all(line.as_bytes());
            }
        });

        let http_listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let http = http_listener.local_addr().unwrap().port();
        let served = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&served);
        let body = format!("{token}-http");
        std::thread::spawn(move || {
            for c in http_listener.incoming().flatten() {
                let mut reader = BufReader::new(c);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                count.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    reader.get_mut(),
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self {
            token,
            port,
            abstract_name,
            http,
            served,
        }
    }

    fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    /// The probe arguments: the port, the abstract socket, and `http://HOST:PORT/x`.
    fn args(&self, host: &str) -> Map<String, Value> {
        let mut a = Map::new();
        a.insert("port".into(), json!(self.port));
        a.insert("abstract".into(), json!(self.abstract_name));
        a.insert(
            "url".into(),
            json!(format!("http://{host}:{}/x", self.http)),
        );
        a
    }
}

async fn probe(host: &Host, server: &str, args: Map<String, Value>) -> Value {
    let tool = ToolRef {
        server: sid(server),
        tool: "canary_probe".into(),
    };
    let r = host
        .call_allowed(&tool, args, CallOptions::default())
        .await
        .unwrap();
    let Some(Content::Text { text }) = r.content.first() else {
        panic!("no text in {r:?}");
    };
    serde_json::from_str(text).unwrap()
}

async fn restart_into(host: &Host, server: &str, sandbox: SandboxSpec) {
    host.set_server_sandbox(&sid(server), sandbox)
        .await
        .unwrap();
    host.stop_server(&sid(server)).await.unwrap();
    let h = host.start_server(&sid(server)).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(
        matches!(status, ServerStatus::Running { .. }),
        "{server}: {status} {:?}",
        h.logs().stderr_tail(20)
    );
}

async fn host() -> (Host, tempfile::TempDir) {
    let env = vec![("PATH".to_owned(), "/usr/bin:/bin".to_owned())];
    test_host_with(|b| b.host_env(env)).await
}

fn network_on() -> SandboxSpec {
    SandboxSpec {
        network: true,
        ..SandboxSpec::on()
    }
}

/// SP-13: with network on, the server has a network of its own: the host's loopback port and
/// an abstract Unix socket of the host are refused (before SP-13 it shared the host's
/// namespace and reached both).
#[tokio::test]
async fn with_network_on_host_loopback_and_abstract_sockets_are_refused() {
    let c = Canaries::new();
    let (host, _data) = host().await;
    start_trusted(&host, fake_spec("net", &["--mode", "canary"])).await;
    let free = probe(&host, "net", c.args("127.0.0.1")).await;
    assert_eq!(
        free["port"]["greeting"],
        json!(format!("{}-port", c.token)),
        "{free}"
    );
    assert_eq!(
        free["abstract"]["greeting"],
        json!(format!("{}-abstract", c.token))
    );
    assert_eq!(free["url"]["status"], json!(200), "{free}");
    let before = c.served();

    restart_into(&host, "net", network_on()).await;
    let boxed = probe(&host, "net", c.args("127.0.0.1")).await;
    assert!(boxed["port"]["error"].is_string(), "{boxed}");
    assert!(boxed["abstract"]["error"].is_string(), "{boxed}");
    assert!(boxed["url"]["error"].is_string(), "{boxed}");
    for reached in ["port", "abstract", "http"] {
        let greeting = format!("{}-{reached}", c.token);
        assert!(!boxed.to_string().contains(&greeting), "{boxed}");
    }
    assert_eq!(c.served(), before, "the test's HTTP server saw nothing");
    let trace = host.handle(&sid("net")).unwrap().logs().trace();
    assert!(
        trace.iter().any(|t| t
            .body
            .contains("sandbox network: own namespace, user-mode stack")),
        "{trace:?}"
    );
    host.shutdown().await;
}

/// SP-13: with domain lists, the proxy is the only way out: the allowed domain (`localhost`,
/// listed by name) is reached through it; a name not listed, and a denied one, get the
/// proxy's refusal and the test's server sees no connection; direct connections to the
/// loopback port and to the abstract socket are refused.
#[tokio::test]
async fn with_domain_lists_only_the_allowed_domain_is_reached() {
    let c = Canaries::new();
    let (host, data) = host().await;
    start_trusted(&host, fake_spec("lists", &["--mode", "canary"])).await;
    let listed = network_on().domain_allowed("localhost").unwrap();
    restart_into(&host, "lists", listed.clone()).await;

    let ok = probe(&host, "lists", c.args("localhost")).await;
    assert_eq!(ok["url"]["status"], json!(200), "{ok}");
    assert_eq!(
        ok["url"]["body"],
        json!(format!("{}-http", c.token)),
        "{ok}"
    );
    assert!(
        ok["port"]["error"].is_string(),
        "direct TCP is refused: {ok}"
    );
    assert!(ok["abstract"]["error"].is_string(), "{ok}");
    let served = c.served();
    assert_eq!(served, 1, "the allowed request reached the test's server");

    // 127.0.0.1 is the same server, but not a listed name; other.test is not listed at all.
    for other in ["127.0.0.1", "other.test"] {
        let no = probe(&host, "lists", c.args(other)).await;
        assert_eq!(no["url"]["status"], json!(403), "{other}: {no}");
        assert_eq!(c.served(), served, "{other}: the test's server saw nothing");
    }
    // A deny wins over an allow.
    let denied = listed.domain_denied("localhost").unwrap();
    let denied = SandboxSpec {
        allow_domains: vec!["*.localhost".into()],
        ..denied
    };
    restart_into(&host, "lists", denied).await;
    let no = probe(&host, "lists", c.args("localhost")).await;
    assert_eq!(no["url"]["status"], json!(403), "{no}");
    // A wildcard never opens an address on this computer.
    let no = probe(&host, "lists", c.args("a.localhost")).await;
    assert_eq!(no["url"]["status"], json!(403), "{no}");
    assert_eq!(c.served(), served, "the test's server saw nothing");

    // The refusals are the host's record (not the server's output), for the doctor.
    let findings = host.sandbox_findings(&sid("lists")).await.unwrap();
    let names: Vec<&Blocked> = findings.iter().map(|f| &f.blocked).collect();
    for name in ["localhost", "127.0.0.1", "other.test"] {
        assert!(
            names.contains(&&Blocked::Domain { name: name.into() }),
            "{name}: {findings:?}"
        );
    }
    assert!(data.path().join("logs/lists/refused-domains").exists());
    host.shutdown().await;
}

fn cli(data: &Path, args: &[&str]) -> std::process::Output {
    run_cli(data, args, "", &[("PATH", "/usr/bin:/bin")])
}

fn ok_text(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn call_probe(data: &Path, c: &Canaries, host: &str) -> String {
    let args = Value::Object(c.args(host)).to_string();
    ok_text(&cli(
        data,
        &["call", "web", "canary_probe", "--yes", "--args", &args],
    ))
}

/// SP-13: the doctor names a refused domain with the exact command that allows it, and
/// running that command lets the domain through.
#[test]
fn the_doctor_names_a_refused_domain_and_its_command_allows_it() {
    let c = Canaries::new();
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let fake = fake_server();
    ok_text(&cli(
        d,
        &[
            "server",
            "add",
            "web",
            "--sandbox",
            "--",
            fake.to_str().unwrap(),
            "--mode",
            "canary",
        ],
    ));
    ok_text(&cli(d, &["server", "trust", "web", "--yes"]));
    let shown = ok_text(&cli(
        d,
        &["server", "sandbox", "web", "--allow-domain", "example.com"],
    ));
    assert!(shown.contains("may reach  example.com"), "{shown}");
    assert!(shown.contains("filtering proxy"), "{shown}");

    let refused = call_probe(d, &c, "localhost");
    assert!(refused.contains("403"), "{refused}");
    assert_eq!(c.served(), 0, "nothing reached the test's server");
    let doc = cli(d, &["doctor", "web", "--timeout", "20"]);
    let text = String::from_utf8_lossy(&doc.stdout).into_owned();
    let command = "switchboard server sandbox web --allow-domain localhost";
    assert!(
        text.contains("refused localhost") && text.contains(command),
        "{text}"
    );

    let words: Vec<&str> = command.split(' ').skip(1).collect();
    ok_text(&cli(d, &words));
    let reached = call_probe(d, &c, "localhost");
    assert!(reached.contains(&format!("{}-http", c.token)), "{reached}");
    assert_eq!(c.served(), 1);
    let doc = ok_text(&cli(d, &["doctor", "web", "--timeout", "20"]));
    assert!(!doc.contains("refused localhost"), "allowed now: {doc}");
}
