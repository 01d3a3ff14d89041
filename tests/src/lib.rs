//! Test harness shared by Switchboard's integration tests: building a host on a temp dir,
//! locating the fake server and the reference servers, and small waiting helpers.
//!
//! The fake server binary is `src/bin/fake_mcp_server.rs` over [`fake`]; the benchmark binary
//! `sb-bench` is `src/bin/sb_bench.rs` over [`bench`]. The scripted LLM server is [`fake_llm`],
//! in-process or as the `fake-llm-server` binary. They are modules of this library, not files
//! the binaries mount with `#[path]`, so the file tree is the module tree (issue 26).

pub mod bench;
pub mod chat_cli;
pub mod conformance_skills;
pub mod e2e;
pub mod fake;
pub mod fake_http;
pub mod fake_llm;
pub mod fake_models;
pub mod fake_oauth;
pub mod fake_registry;
pub mod fake_sse;
pub mod scenario;
pub mod seed;
pub mod skills_fixture;
pub mod webdriver;

use std::path::{Path, PathBuf};
use std::time::Duration;

use switchboard_core::config::{
    NamedValue, ServerSpec, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use switchboard_core::host::{Host, HostBuilder};
use switchboard_core::ids::ServerId;
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::supervisor::{ServerStatus, SupervisorConfig};

/// The id of the rule [`CallAllowed`] adds.
pub const ALLOW_ALL: &str = "tests-allow-every-call";

/// Tool calls the way a person makes them from a shell, for tests about what servers and the
/// host do rather than about the policy: through the governed seam (`Host::run_tool`, origin
/// manual), under a rule that allows every tool call, added to the host the first time.
pub trait CallAllowed {
    /// Runs `tool` with `arguments`.
    fn call_allowed(
        &self,
        tool: &switchboard_core::ids::ToolRef,
        arguments: serde_json::Map<String, serde_json::Value>,
        opts: switchboard_core::host::CallOptions,
    ) -> impl std::future::Future<
        Output = Result<
            switchboard_core::mcp::catalog::ToolResult,
            switchboard_core::host::HostError,
        >,
    > + Send;
}

impl CallAllowed for Host {
    async fn call_allowed(
        &self,
        tool: &switchboard_core::ids::ToolRef,
        arguments: serde_json::Map<String, serde_json::Value>,
        opts: switchboard_core::host::CallOptions,
    ) -> Result<switchboard_core::mcp::catalog::ToolResult, switchboard_core::host::HostError> {
        allow_every_call(self).await;
        self.run_tool(
            tool,
            arguments,
            switchboard_core::approval::Origin::Manual,
            opts,
        )
        .await
    }
}

/// Adds the [`ALLOW_ALL`] rule unless the host has it.
pub async fn allow_every_call(host: &Host) {
    use switchboard_core::approval::{Effect, On, Rule, Source};
    let rules = host
        .policy_rules()
        .await
        .unwrap_or_else(|e| panic!("policy: {e}"));
    if rules.iter().any(|r| r.id == ALLOW_ALL) {
        return;
    }
    host.put_policy_rule(Rule {
        id: ALLOW_ALL.into(),
        effect: Effect::Allow,
        server: "*".into(),
        on: On::Tool,
        tool: "*".into(),
        origin: None,
        when: Vec::new(),
        limit: None,
        note: Some("tests: every tool call runs without asking".into()),
        source: Source::User,
    })
    .await
    .unwrap_or_else(|e| panic!("policy: {e}"));
}

/// A remote (Streamable HTTP) server `name` at `url`, no headers or sign-in settings, with
/// 20 s limits.
pub fn http_spec(name: &str, url: &str) -> ServerSpec {
    ServerSpec {
        id: sid(name),
        transport: switchboard_core::config::TransportSpec::Http(
            switchboard_core::config::HttpSpec {
                url: url.to_owned(),
                headers: vec![],
                auth: None,
                allow_insecure: false,
            },
        ),
        enabled: true,
        timeouts: switchboard_core::config::Timeouts {
            request_secs: 20,
            init_secs: 20,
            max_message_mib: switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB,
        },
    }
}

/// A host on a fresh temporary data dir, with an in-memory secret store and fast supervisor
/// timings. Keep the returned `TempDir` alive for the host's lifetime.
pub async fn test_host() -> (Host, tempfile::TempDir) {
    test_host_with(|b| b).await
}

/// Like [`test_host`], with a chance to adjust the builder.
pub async fn test_host_with(
    f: impl FnOnce(HostBuilder) -> HostBuilder,
) -> (Host, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let builder = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .supervisor_config(fast_supervisor());
    let host = f(builder)
        .build()
        .await
        .unwrap_or_else(|e| panic!("host: {e}"));
    (host, dir)
}

/// Supervisor timings short enough for tests.
pub fn fast_supervisor() -> SupervisorConfig {
    SupervisorConfig {
        backoff_initial: Duration::from_millis(50),
        backoff_max: Duration::from_millis(400),
        crash_limit: 5,
        crash_window: Duration::from_secs(60),
        debounce: Duration::from_millis(100),
        init_timeout: Duration::from_secs(20),
        request_timeout: Duration::from_secs(20),
        one_try: false,
        stop_grace: Duration::from_secs(2),
        min_list_ttl: Duration::from_millis(500),
    }
}

/// The fake server binary: `SWITCHBOARD_FAKE_SERVER`, else next to the running test binary
/// (cargo puts test executables in `target/<profile>/deps/` and binaries one level up).
pub fn fake_server() -> PathBuf {
    if let Some(p) = std::env::var_os("SWITCHBOARD_FAKE_SERVER") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let p = dir.join("fake-mcp-server");
    assert!(
        p.exists(),
        "{} is missing; build it with cargo build -p switchboard-tests",
        p.display()
    );
    p
}

/// A stdio spec running the fake server with `args`.
pub fn fake_spec(name: &str, args: &[&str]) -> ServerSpec {
    stdio_spec(name, &fake_server().to_string_lossy(), args)
}

/// A stdio spec.
pub fn stdio_spec(name: &str, command: &str, args: &[&str]) -> ServerSpec {
    ServerSpec {
        id: sid(name),
        transport: TransportSpec::Stdio(StdioSpec {
            command: command.to_owned(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            env: Vec::new(),
            cwd: None,
            sandbox: Default::default(),
        }),
        enabled: true,
        timeouts: Timeouts {
            request_secs: 20,
            init_secs: 20,
            max_message_mib: switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB,
        },
    }
}

/// Adds an env var to a stdio spec.
pub fn with_env(mut spec: ServerSpec, name: &str, value: ValueSource) -> ServerSpec {
    if let TransportSpec::Stdio(s) = &mut spec.transport {
        s.env.push(NamedValue {
            name: name.to_owned(),
            value,
        });
    }
    spec
}

/// A server id.
pub fn sid(name: &str) -> ServerId {
    ServerId::new(name).unwrap_or_else(|e| panic!("server id {name}: {e}"))
}

/// Adds a server and approves its launch plan as shown; returns its id.
pub async fn add_trusted(host: &Host, spec: ServerSpec) -> ServerId {
    let id = spec.id.clone();
    host.add_server(spec)
        .await
        .unwrap_or_else(|e| panic!("add: {e}"));
    let view = host
        .trust_view(&id)
        .await
        .unwrap_or_else(|e| panic!("view: {e}"));
    host.trust_server(&id, &view.fingerprint)
        .await
        .unwrap_or_else(|e| panic!("trust: {e}"));
    id
}

/// Adds, approves and starts a server, and waits until it runs.
pub async fn start_trusted(
    host: &Host,
    spec: ServerSpec,
) -> switchboard_core::supervisor::ServerHandle {
    let id = add_trusted(host, spec).await;
    let h = host
        .start_server(&id)
        .await
        .unwrap_or_else(|e| panic!("start: {e}"));
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(
        matches!(status, ServerStatus::Running { .. }),
        "{id} did not start: {status}"
    );
    h
}

/// The `tools/call`s a fake server started with `--record FILE` received, in order: (tool,
/// arguments).
pub fn recorded_calls(record: &Path) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| {
            (
                m["params"]["name"].as_str().unwrap_or_default().to_owned(),
                m["params"]["arguments"].clone(),
            )
        })
        .collect()
}

/// A provider `name` of `kind` at `base` (default model `model-1`) with a test key: what the
/// agent tests run their scripted models behind.
pub async fn provider_with_key(
    host: &Host,
    name: &str,
    kind: &str,
    base: String,
) -> switchboard_core::ids::ProviderName {
    let p = switchboard_core::ids::ProviderName::new(name)
        .unwrap_or_else(|e| panic!("provider name {name}: {e}"));
    host.models()
        .add_provider(&p, kind, Some(base), Some("model-1".into()), None)
        .await
        .unwrap_or_else(|e| panic!("add provider {name}: {e}"));
    host.models()
        .set_provider_key(&p, switchboard_core::redact::Secret::new("sk-test-agents"))
        .await
        .unwrap_or_else(|e| panic!("key of {name}: {e}"));
    p
}

/// A rule of the person's own (`Source::User`) for tool calls of `server`/`tool`, with no
/// origin, conditions, limit or note: what most tests put in the policy.
pub fn user_rule(
    id: &str,
    effect: switchboard_core::approval::Effect,
    server: &str,
    tool: &str,
) -> switchboard_core::approval::Rule {
    switchboard_core::approval::Rule {
        id: id.into(),
        effect,
        server: server.into(),
        on: switchboard_core::approval::On::Tool,
        tool: tool.into(),
        origin: None,
        when: Vec::new(),
        limit: None,
        note: None,
        source: switchboard_core::approval::Source::User,
    }
}

/// One audit entry of a tool, as tests read it: its kind, its actor and its details (JSON).
pub type Audited = (String, String, String);

/// The audit entries for `server`/`tool` (among the newest 500), oldest first.
pub async fn audit_trail(host: &Host, server: &str, tool: &str) -> Vec<Audited> {
    let page = host
        .audit_page(&switchboard_core::store::AuditQuery {
            limit: 500,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("audit page: {e}"));
    let mut out: Vec<Audited> = page
        .entries
        .into_iter()
        .filter(|e| e.server.as_deref() == Some(server) && e.tool.as_deref() == Some(tool))
        .map(|e| (e.kind.as_str().to_owned(), e.actor, e.detail_json))
        .collect();
    out.reverse();
    out
}

/// Polls `f` every 20 ms until it returns true or `timeout` passes; returns the last result.
pub async fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether a process exists (zombies count as gone).
pub fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Reads pids from a file written by the fake server's `--pid-file`.
pub fn read_pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// The installed `@modelcontextprotocol/server-everything` package (`make deps` installs it and
/// `make test` sets `SWITCHBOARD_EVERYTHING_DIR`). When `SWITCHBOARD_REQUIRE_PEERS=1` (as in
/// `make test`), a missing install fails the test instead of skipping it.
pub fn everything_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SWITCHBOARD_EVERYTHING_DIR").map(PathBuf::from);
    match dir {
        Some(d) if d.join("dist/index.js").is_file() => Some(d),
        _ => {
            assert!(
                std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
                "SWITCHBOARD_REQUIRE_PEERS=1 but SWITCHBOARD_EVERYTHING_DIR does not point at server-everything"
            );
            eprintln!("skipped: server-everything is not installed (run `make deps`)");
            None
        }
    }
}

/// The entry script of the reference server `@modelcontextprotocol/<package>` installed by
/// `make deps` in tests/npm (`SWITCHBOARD_NODE_MODULES`), or `None` (skip) when it is missing
/// and `SWITCHBOARD_REQUIRE_PEERS` is not `1`.
pub fn reference_server(package: &str) -> Option<PathBuf> {
    let modules = std::env::var_os("SWITCHBOARD_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("npm/node_modules"));
    let index = modules
        .join("@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    if index.is_file() {
        return Some(index);
    }
    assert!(
        std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
        "SWITCHBOARD_REQUIRE_PEERS=1 but {} is missing",
        index.display()
    );
    eprintln!("skipped: {package} is not installed (run `make deps`)");
    None
}

/// The node binary to run npm servers with (`SWITCHBOARD_NODE`, else `node` on PATH).
pub fn node() -> String {
    std::env::var("SWITCHBOARD_NODE").unwrap_or_else(|_| "node".into())
}

/// A binary of the workspace next to the test executable (`switchboard`, `fake-mcp-server`).
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let p = dir.join(name);
    assert!(
        p.exists(),
        "{} is missing; build the workspace first (cargo build --workspace)",
        p.display()
    );
    p
}

/// A free loopback TCP port (bound and released; good enough for a test server we start next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// A child process killed when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A child started in a process group of its own ([`group_command`]), killed with everything
/// it started when dropped. tauri-driver starts WebKitWebDriver, which starts the app: killing
/// tauri-driver alone (a panicking e2e test) left the app running, holding the desktop binary
/// (the `.deb` test then failed with "Text file busy") and taking the next test's window.
pub struct KillGroupOnDrop(pub std::process::Child);

/// `cmd` set to start its child in a new process group, for [`KillGroupOnDrop`].
pub fn group_command(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
}

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the `switchboard` CLI on `data_dir` with `stdin` and extra environment variables.
pub fn run_cli(
    data_dir: &Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(workspace_bin("switchboard"))
        .args(args)
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn switchboard: {e}"));
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait for switchboard: {e}"))
}

/// Runs the CLI and fails the test, with its stderr, unless it succeeds; returns stdout.
pub fn cli_ok(data_dir: &Path, args: &[&str]) -> String {
    let o = run_cli(data_dir, args, "", &[]);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A data dir whose database holds a server and 40 rules (a few dozen pages), then cut to a
/// third of its length, as a full disk or a bad copy leaves it. Returns the database path.
pub fn cut_database(data_dir: &Path) -> PathBuf {
    let fake = fake_server();
    cli_ok(
        data_dir,
        &["server", "add", "demo", "--", &fake.to_string_lossy()],
    );
    for i in 0..40 {
        let id = format!("rule-{i}");
        let tool = format!("tool_{i}_{}", "x".repeat(150));
        cli_ok(
            data_dir,
            &["policy", "add", &id, "--effect", "deny", "--tool", &tool],
        );
    }
    let db = data_dir.join("switchboard.sqlite");
    let len = std::fs::metadata(&db)
        .unwrap_or_else(|e| panic!("{}: {e}", db.display()))
        .len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .and_then(|f| f.set_len(len / 3))
        .unwrap_or_else(|e| panic!("cut {}: {e}", db.display()));
    db
}

/// Fails if any file under `dir` contains `needle` (secrets must live only in the keyring).
pub fn assert_no_file_contains(dir: &Path, needle: &str) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display()));
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                assert!(
                    !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                    "{} holds the secret",
                    p.display()
                );
            }
        }
    }
}

/// The Python whose official `mcp` SDK can import `module` (`$SWITCHBOARD_PYTHON`, else
/// `.tools/venv/bin/python`, both set up by `make deps`). `None` when it cannot, after saying so:
/// the test skips; under `SWITCHBOARD_REQUIRE_PEERS=1` (as in `make test`) it fails instead, so
/// a missing peer never passes there.
pub fn python_with(module: &str) -> Option<PathBuf> {
    let py = std::env::var_os("SWITCHBOARD_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".tools/venv/bin/python"));
    let imports = std::process::Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if imports {
        Some(py)
    } else {
        peer_missing(&format!("{} cannot import {module}", py.display()))
    }
}

/// A test peer is missing: `None` (skip, said on stderr), or a failure under
/// `SWITCHBOARD_REQUIRE_PEERS=1`.
pub fn peer_missing<T>(what: &str) -> Option<T> {
    assert!(
        std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
        "SWITCHBOARD_REQUIRE_PEERS=1 but {what} (run `make deps`)"
    );
    eprintln!("skipped: {what} (run `make deps`)");
    None
}

/// A file under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(name)
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A user rule that lets every tool of `server` run without asking, so a test sees only what
/// it is about (approvals have their own tests).
pub async fn allow_all(host: &Host, server: &str) {
    use switchboard_core::approval::{Condition, Effect, On, Rule, Source};
    host.put_policy_rule(Rule {
        id: format!("let-{server}-run"),
        effect: Effect::Allow,
        server: server.into(),
        on: On::Tool,
        tool: "*".into(),
        origin: None,
        when: Vec::<Condition>::new(),
        limit: None,
        note: None,
        source: Source::User,
    })
    .await
    .unwrap_or_else(|e| panic!("allow {server}: {e}"));
}
