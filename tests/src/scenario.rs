//! Scenario builders: the set-ups the integration and window tests used to spell out again in
//! every file, written once so that a test reads as the scenario it is about.
//!
//! - [`keyring_available`]: the gate of the tests that need the real OS keyring.
//! - [`host_with_recorder`]: a host with a fake server running that records what it receives.
//! - [`keyless_provider`], [`next_question`] and [`tool_text`]: a scripted model's provider on
//!   a host, the question a server asks the person, and what a tool answered; [`call_on`], a
//!   call on a bare connection.
//! - [`turn`] and [`send_collect`]: a chat turn on a host, as most tests send it (a new
//!   conversation, the provider's model, no run, agent or attachments), and its events.
//! - [`AppData`]: a data directory driven through the `switchboard` CLI: servers added,
//!   approved and kept on, providers and their keys, then the CLI run on it again
//!   ([`AppData::run`], [`AppData::cli`]) or the app window opened on it ([`AppData::open`],
//!   [`app_window`]); on the window, [`open_chat`] and [`open_tool`].
//!
//! Why here and not in each test file: the same set-up was written out file after file
//! (`duplicates --most 200` found 130 of its 200 most similar pairs between test files), so a
//! change to how a server is added or a turn is sent meant editing every copy. A builder does
//! only what its name says and fails the test, with the CLI's or the host's words, when a step
//! fails; anything particular to one test stays in that test, after the builder, so that what
//! a test asserts never hides behind a helper.

use std::path::{Path, PathBuf};
use std::time::Duration;

use switchboard_core::approval::questions::QuestionRequest;
use switchboard_core::chat::ChatEvent;
use switchboard_core::host::{Host, SendOutcome, SendRequest, TurnInput};
use switchboard_core::ids::ProviderName;
use switchboard_core::mcp::catalog::ToolResult;
use switchboard_core::mcp::connection::{Connection, RequestOptions};
use switchboard_core::mcp::McpError;

use crate::webdriver::{Driver, Session};

/// Whether the real keyring is there (`make test` sets `SWITCHBOARD_TEST_KEYRING` and runs the
/// tests in a private D-Bus session); otherwise the test says so and is skipped. Under
/// `SWITCHBOARD_REQUIRE_PEERS=1` a missing keyring is a failure instead.
pub fn keyring_available() -> bool {
    let set = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    if !set {
        assert!(
            std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
            "make test must run these tests with the real keyring (SWITCHBOARD_TEST_KEYRING=1)"
        );
        eprintln!("skipped: SWITCHBOARD_TEST_KEYRING is not set (run through `make test`)");
    }
    set
}

/// A test host ([`crate::test_host`]) with the fake server `server` approved and running,
/// recording every message it receives to `<server>-received.jsonl` in the host's data
/// directory: the host, its directory (keep it alive) and the record ([`crate::recorded_calls`]
/// reads it).
pub async fn host_with_recorder(server: &str) -> (Host, tempfile::TempDir, PathBuf) {
    let (host, dir) = crate::test_host().await;
    let record = dir.path().join(format!("{server}-received.jsonl"));
    let spec = crate::fake_spec(server, &["--record", &record.to_string_lossy()]);
    crate::start_trusted(&host, spec).await;
    (host, dir, record)
}

/// A keyless provider `name` (the Ollama profile, OpenAI wire) at `base`, answering with model
/// `m1` unless told otherwise: what the host tests put their scripted model behind.
pub async fn keyless_provider(host: &Host, name: &str, base: String) -> ProviderName {
    let provider = Host::provider_name(name).unwrap_or_else(|e| panic!("provider {name}: {e}"));
    host.models()
        .add_provider(&provider, "ollama", Some(base), Some("m1".into()), None)
        .await
        .unwrap_or_else(|e| panic!("add provider {name}: {e}"));
    provider
}

/// The first question a server asked the person (elicitation, sampling, a multi-round-trip
/// request), once one is pending; fails the test when none is within `within`.
pub async fn next_question(host: &Host, within: Duration) -> QuestionRequest {
    assert!(
        crate::eventually(within, || !host.pending_questions().is_empty()).await,
        "no question was asked"
    );
    host.pending_questions().remove(0)
}

/// The text of a tool result, its text blocks joined.
pub fn tool_text(r: &ToolResult) -> String {
    r.content
        .iter()
        .filter_map(switchboard_core::mcp::connection::content_text)
        .collect()
}

/// Calls `tool` with `args` (a JSON object) on a bare connection, with the default request
/// options: the transport tests' one way to call.
pub async fn call_on(
    conn: &Connection,
    tool: &str,
    args: serde_json::Value,
) -> Result<ToolResult, McpError> {
    let args = args
        .as_object()
        .cloned()
        .unwrap_or_else(|| panic!("{args} is not an object"));
    conn.call_tool(tool, args, RequestOptions::default()).await
}

/// A chat turn answering `input` with `provider`: a new conversation, the provider's default
/// model, no step limit, attachments, run, agent or discovery switch. Change what a test is
/// about with struct update syntax: `SendRequest { conversation: Some(c), ..turn(p, input) }`.
pub fn turn(provider: ProviderName, input: TurnInput) -> SendRequest {
    SendRequest {
        conversation: None,
        provider,
        model: None,
        input,
        max_steps: None,
        attached: Vec::new(),
        run: None,
        agent: None,
        discovery: None,
    }
}

/// Sends `req` on `host` and waits for the turn to end; fails the test if the host refuses it.
/// Returns how it ended and every event it sent, in order.
pub async fn send_collect(host: &Host, req: SendRequest) -> (SendOutcome, Vec<ChatEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(req, tx)
        .await
        .unwrap_or_else(|e| panic!("send: {e}"));
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (out, events)
}

/// A data directory set up through the `switchboard` CLI the way a person would, for a test
/// that then opens the app window on it (or runs the CLI again). Each step fails the test,
/// with the CLI's stderr, unless the CLI succeeds.
pub struct AppData {
    dir: PathBuf,
    _owned: Option<tempfile::TempDir>,
}

impl Default for AppData {
    fn default() -> Self {
        Self::new()
    }
}

impl AppData {
    /// A fresh, empty data directory (removed when this is dropped).
    pub fn new() -> Self {
        let temp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        Self {
            dir: temp.path().to_path_buf(),
            _owned: Some(temp),
        }
    }

    /// The data directory `dir`, which the test owns (it is left in place).
    pub fn on(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            _owned: None,
        }
    }

    /// The data directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Runs the CLI on the data directory, whatever comes of it (for tests of its failures).
    pub fn run(&self, args: &[&str]) -> std::process::Output {
        self.run_in(args, "")
    }

    /// Like [`AppData::run`], with `stdin`.
    pub fn run_in(&self, args: &[&str], stdin: &str) -> std::process::Output {
        crate::run_cli(self.path(), args, stdin, &[])
    }

    /// Runs the CLI on the data directory with `stdin`; returns its stdout.
    pub fn cli_in(&self, args: &[&str], stdin: &str) -> String {
        let o = self.run_in(args, stdin);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Runs the CLI on the data directory; returns its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        self.cli_in(args, "")
    }

    /// Server `name` running `command` with `args`, added and approved as shown; it starts
    /// when needed.
    pub fn approved(self, name: &str, command: &str, args: &[&str]) -> Self {
        let mut add = vec!["server", "add", name, "--", command];
        add.extend_from_slice(args);
        self.cli(&add);
        self.cli(&["server", "trust", name, "--yes"]);
        self
    }

    /// Server `name` running `command` with `args`, approved and always on: the window finds
    /// it running.
    pub fn server(self, name: &str, command: &str, args: &[&str]) -> Self {
        let this = self.approved(name, command, args);
        this.cli(&["server", "always-on", name, "on"]);
        this
    }

    /// The fake MCP server as `name` (with `args`), approved; it starts when needed.
    pub fn approved_fake(self, name: &str, args: &[&str]) -> Self {
        let fake = crate::fake_server();
        self.approved(name, &fake.to_string_lossy(), args)
    }

    /// The fake MCP server as `name` (with `args`), approved and always on.
    pub fn fake_server(self, name: &str, args: &[&str]) -> Self {
        let fake = crate::fake_server();
        self.server(name, &fake.to_string_lossy(), args)
    }

    /// A provider `name` of `kind` at `base` answering with `model` by default.
    pub fn provider(self, name: &str, kind: &str, base: &str, model: &str) -> Self {
        self.cli(&[
            "provider",
            "add",
            name,
            "--kind",
            kind,
            "--base-url",
            base,
            "--model",
            model,
        ]);
        self
    }

    /// The key of provider `name` (typed on stdin, stored in the keyring).
    pub fn provider_key(self, name: &str, key: &str) -> Self {
        self.cli_in(&["provider", "set-key", name], &format!("{key}\n"));
        self
    }

    /// The app window on this data directory: its driver (the window lives as long as it
    /// does) and the WebDriver session on it.
    pub async fn open(&self) -> (Driver, Session) {
        crate::e2e::open_window(self.path())
            .await
            .unwrap_or_else(|e| panic!("open the window: {e}"))
    }
}

/// The app's window from `driver` (started on the data directory).
pub async fn app_window(driver: &Driver) -> Session {
    driver
        .session(&crate::workspace_bin("switchboard-desktop"))
        .await
        .unwrap_or_else(|e| panic!("open the window: {e}"))
}

/// The chat page of the window `s`, once server `server` runs and provider `provider` can be
/// picked.
pub async fn open_chat(s: &Session, server: &str, provider: &str) {
    let wait = std::time::Duration::from_secs(30);
    let badge = format!(r#"article[data-name="{server}"] .badge"#);
    s.wait_text(&badge, "running", wait)
        .await
        .unwrap_or_else(|e| panic!("{server} running: {e}"));
    s.click_on(r#".tab[data-page="chat"]"#, wait)
        .await
        .unwrap_or_else(|e| panic!("the chat tab: {e}"));
    let option = format!(r#".chat-provider option[value="{provider}"]"#);
    s.wait_for(&option, wait)
        .await
        .unwrap_or_else(|e| panic!("provider {provider}: {e}"));
}

/// The catalog entry of `server`'s `tool` on the Tools page of the window `s`: the page opened,
/// the tool searched for and its row clicked (its run form shows next).
pub async fn open_tool(s: &Session, server: &str, tool: &str) {
    let wait = std::time::Duration::from_secs(30);
    s.click_on(r#".tab[data-page="tools"]"#, wait)
        .await
        .unwrap_or_else(|e| panic!("the tools tab: {e}"));
    s.wait_for(".tool-search", wait)
        .await
        .unwrap_or_else(|e| panic!("the tool search: {e}"));
    s.set_value(".tool-search", tool)
        .await
        .unwrap_or_else(|e| panic!("search {tool}: {e}"));
    let row = format!(r#".tool-row[data-tool="{server}/{tool}"]"#);
    s.click_on(&row, wait)
        .await
        .unwrap_or_else(|e| panic!("{server}/{tool}: {e}"));
}
