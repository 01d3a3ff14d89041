//! `switchboard-core` as the client: a real [`Host`] (temp data dir, in-memory secrets, default
//! supervisor settings) that adds, trusts and starts the fake server like the app does, then
//! calls `echo` one of three ways:
//! - [`Host::call_tool`]: catalog, pin and disabled-tool checks, progress forwarding, tracing
//!   span; no approval;
//! - [`Host::run_tool`], the path the chat loop and the shells take: the same, plus the policy
//!   decision (rules and server tags read from SQLite under the host's policy lock) and the
//!   hash-chained audit log (`synchronous=FULL`): the proposal, decision and start are on disk
//!   before the call goes out, its end is queued. The host gets one user rule, [`RULE`] (no
//!   limit, so no rule hit is counted), allowing `echo` on the bench server, and calls run with
//!   [`Origin::Manual`] (no conversation, so no data-flow lookup and no result review);
//! - straight through the supervised [`Connection::call_tool`], to see what the host layer
//!   costs.
//!
//! Next to them, [`commit`] times one durable SQLite commit on the same kind of store: the
//! yardstick of `run_tool`'s c=1 target ("within `call_tool` plus one commit", issue 11).
//!
//! A `run_tool` call that is asked about instead of allowed would wait for a person forever;
//! the bench refuses to measure that: one call before the warm-up must report that [`RULE`]
//! allowed it, and a watchdog denies anything that shows up as pending, which fails the run
//! with the reason. After the run the audit chain is verified and must have grown by the same
//! number of rows for every call, so an append that failed (the host only logs those) cannot
//! make the row look cheaper than it is.
//!
//! Concurrency: `c` tokio tasks on the multi-threaded runtime share one call counter and loop
//! until `calls` calls have been made; each call is timed alone.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{Map, Value};
use switchboard_core::approval::{AllowedBy, Answer, Effect, On, Origin, Rule, Source};
use switchboard_core::config::{ServerSpec, StdioSpec, Timeouts, TransportSpec};
use switchboard_core::harness;
use switchboard_core::host::{CallOptions, Host, HostBuilder};
use switchboard_core::ids::{ServerId, ToolRef};
use switchboard_core::mcp::catalog::{Content, ToolResult};
use switchboard_core::mcp::connection::{Connection, RequestOptions};
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::store::Store;
use switchboard_core::supervisor::ServerStatus;

use super::{Figure, Plan, TEXT};

/// The id of the policy rule that lets the `run_tool` row's calls through.
pub const RULE: &str = "sb-bench-allow-echo";

/// Which entry point of the core is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The host's checks without the seam (`harness::call_tool_ungoverned`).
    Host,
    /// `Host::run_tool` under an allow rule, with the audit log.
    Run,
    /// The supervised connection's `call_tool` (`harness::connection`).
    Connection,
}

enum Caller {
    Host(Host, ToolRef),
    Run(Host, ToolRef),
    Connection(Arc<Connection>),
}

impl Caller {
    async fn call(&self, arguments: Map<String, Value>) -> Result<()> {
        let r = match self {
            Caller::Host(host, tool) => harness::call_tool_ungoverned(host, tool, arguments)
                .await
                .map_err(|e| anyhow!("echo failed: {e}"))?,
            Caller::Run(host, tool) => host
                .run_tool(tool, arguments, Origin::Manual, CallOptions::default())
                .await
                .map_err(|e| anyhow!("echo through run_tool failed: {e}"))?,
            Caller::Connection(conn) => conn
                .call_tool("echo", arguments, RequestOptions::default())
                .await
                .map_err(|e| anyhow!("echo failed: {e}"))?,
        };
        check(&r)
    }
}

fn check(r: &ToolResult) -> Result<()> {
    match r.content.first() {
        Some(Content::Text { text }) if text == TEXT && !r.is_error => Ok(()),
        _ => bail!("unexpected echo result: {r:?}"),
    }
}

fn arguments() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), Value::String(TEXT.into()));
    m
}

/// Runs the plan through a fresh host and a fresh server process.
pub async fn run(server: &Path, plan: &Plan, entry: Entry) -> Result<Vec<Figure>> {
    let dir = tempfile::tempdir().context("could not create a temp dir for the host")?;
    let host = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .build()
        .await
        .context("could not build the host")?;
    let result = measure(&host, server, plan, entry).await;
    host.shutdown().await;
    result
}

async fn measure(host: &Host, server: &Path, plan: &Plan, entry: Entry) -> Result<Vec<Figure>> {
    let id = ServerId::new("bench").map_err(|e| anyhow!("server id: {e}"))?;
    host.add_server(ServerSpec {
        id: id.clone(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: server.to_string_lossy().into_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            sandbox: Default::default(),
        }),
        enabled: true,
        timeouts: Timeouts {
            request_secs: 60,
            init_secs: 30,
            max_message_mib: switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB,
        },
    })
    .await?;
    let view = host.trust_view(&id).await?;
    host.trust_server(&id, &view.fingerprint).await?;
    let handle = host.start_server(&id).await?;
    let status = handle.wait_settled(Duration::from_secs(30)).await;
    if !matches!(status, ServerStatus::Running { .. }) {
        bail!("the fake server did not start: {status}");
    }
    let echo = ToolRef {
        server: id,
        tool: "echo".into(),
    };
    let caller = Arc::new(match entry {
        Entry::Host => Caller::Host(host.clone(), echo),
        Entry::Run => {
            allow_echo(host, &echo).await?;
            Caller::Run(host.clone(), echo)
        }
        Entry::Connection => Caller::Connection(harness::connection(&handle)?),
    });
    let audit = match entry {
        Entry::Run => Some(AuditCheck::start(&caller, host).await?),
        _ => None,
    };
    let watchdog = (entry == Entry::Run).then(|| Watchdog::start(host));
    let result = levels(&caller, plan).await;
    let asked = watchdog.and_then(Watchdog::stop);
    if let Some(what) = asked {
        bail!("a run_tool call was asked about instead of allowed by {RULE:?}: {what}");
    }
    let out = result?;
    if let Some(audit) = audit {
        let calls = plan.warmup + plan.calls * plan.conc.len();
        audit.finish(host, calls).await?;
    }
    Ok(out)
}

async fn levels(caller: &Arc<Caller>, plan: &Plan) -> Result<Vec<Figure>> {
    if plan.warmup > 0 {
        closed_loop(caller, 1, plan.warmup).await?;
    }
    let mut out = Vec::with_capacity(plan.conc.len());
    for &c in &plan.conc {
        out.push(closed_loop(caller, c, plan.calls).await?);
    }
    Ok(out)
}

/// Adds [`RULE`] and checks, with one call, that `run_tool` is allowed by it without asking.
async fn allow_echo(host: &Host, echo: &ToolRef) -> Result<()> {
    host.put_policy_rule(Rule {
        id: RULE.into(),
        effect: Effect::Allow,
        server: echo.server.to_string(),
        on: On::Tool,
        tool: echo.tool.to_string(),
        origin: None,
        when: Vec::new(),
        limit: None,
        note: Some("sb-bench: echo runs without asking".into()),
        source: Source::User,
    })
    .await
    .map_err(|e| anyhow!("could not add the policy rule {RULE:?}: {e}"))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let opts = CallOptions::default().started(tx);
    let run = host.run_tool(echo, arguments(), Origin::Manual, opts);
    // Pinned, not moved into the timeout: the request is still pending (and listed) when the
    // error below is built.
    tokio::pin!(run);
    let r = match tokio::time::timeout(Duration::from_secs(10), &mut run).await {
        Ok(r) => r.map_err(|e| anyhow!("the first run_tool call failed: {e}"))?,
        Err(_) => bail!(
            "the first run_tool call did not finish in 10 s: it waits for a person, so {RULE:?} \
             does not allow it; pending: {:?}",
            host.pending_approvals()
                .iter()
                .map(|p| format!("{} {}: {}", p.server, p.tool, p.reason))
                .collect::<Vec<_>>()
        ),
    };
    check(&r)?;
    let started = rx
        .await
        .map_err(|_| anyhow!("run_tool never reported the call as started"))?;
    if started.allowed_by != Some(AllowedBy::Rule(RULE.into())) {
        bail!("run_tool was not allowed by {RULE:?} but by {started:?}");
    }
    Ok(())
}

/// Denies, every 50 ms, whatever `run_tool` call is waiting for a person, and remembers what it
/// was: the row measures calls the policy allows, and an ask would hang the level.
struct Watchdog {
    task: tokio::task::JoinHandle<()>,
    asked: Arc<Mutex<Option<String>>>,
}

impl Watchdog {
    fn start(host: &Host) -> Self {
        let host = host.clone();
        let asked = Arc::new(Mutex::new(None));
        let seen = asked.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                for p in host.pending_approvals() {
                    if let Ok(mut s) = seen.lock() {
                        s.get_or_insert_with(|| format!("{} {}: {}", p.server, p.tool, p.reason));
                    }
                    let no = Answer::Deny {
                        reason: Some(format!("sb-bench: {RULE:?} should have allowed this")),
                    };
                    let _ = host.answer_approval(p.nonce.as_str(), no).await;
                }
            }
        });
        Self { task, asked }
    }

    /// Stops the watchdog; what it had to deny, if anything.
    fn stop(self) -> Option<String> {
        self.task.abort();
        self.asked.lock().ok().and_then(|mut s| s.take())
    }
}

/// The audit log's size before the measured calls, to check afterwards that each call
/// appended as many rows as the first one did and that the chain is intact.
struct AuditCheck {
    rows: u64,
    per_call: u64,
}

impl AuditCheck {
    /// One call through `caller` (after [`allow_echo`]) gives the rows per call.
    async fn start(caller: &Caller, host: &Host) -> Result<Self> {
        let before = Self::rows(host).await?;
        caller.call(arguments()).await?;
        let rows = Self::rows(host).await?;
        let per_call = rows.saturating_sub(before);
        if per_call == 0 {
            bail!("a run_tool call appended nothing to the audit log");
        }
        Ok(Self { rows, per_call })
    }

    async fn finish(self, host: &Host, calls: usize) -> Result<()> {
        let rows = Self::rows(host).await?;
        let want = self.rows + self.per_call * calls as u64;
        if rows != want {
            bail!(
                "the audit log has {rows} rows after {calls} calls of {} rows each from {}: \
                 some appends failed",
                self.per_call,
                self.rows
            );
        }
        Ok(())
    }

    async fn rows(host: &Host) -> Result<u64> {
        let v = host.verify_audit().await?;
        if !v.ok {
            bail!("the audit chain is broken: {:?}", v.first_bad);
        }
        Ok(v.rows)
    }
}

/// Commits measured at each level above c=1 by [`commit`].
const COMMITS_SAMPLE: usize = 2_000;

/// The reference for `run_tool`'s target at c=1 ("`call_tool` plus one SQLite commit"): one
/// durable commit of one small row through a fresh [`Store`] (same file settings as the host's:
/// WAL, `synchronous=FULL`, one writer connection), timed like a call, at the plan's levels
/// (above c=1, at most [`COMMITS_SAMPLE`] commits). At c > 1 the commits queue on the one writer
/// and nothing is group-committed: that row shows what a sync costs when every caller waits for
/// its own.
pub async fn commit(plan: &Plan) -> Result<Vec<Figure>> {
    let dir = tempfile::tempdir().context("could not create a temp dir for the store")?;
    let store = Store::open(&dir.path().join("probe.sqlite"))
        .await
        .context("could not open the probe store")?;
    let store = Arc::new(store);
    let once = {
        let store = store.clone();
        move || {
            let store = store.clone();
            async move {
                store
                    .commit_probe()
                    .await
                    .map_err(|e| anyhow!("the probe commit failed: {e}"))
            }
        }
    };
    let result = async {
        if plan.warmup > 0 {
            super::closed_loop(1, plan.warmup, once.clone()).await?;
        }
        let mut out = Vec::with_capacity(plan.conc.len());
        for &c in &plan.conc {
            // Unshared syncs make c > 1 slow (a few thousand per second at best); a sample
            // keeps `make bench`'s 20,000-call levels from taking minutes here.
            let n = if c == 1 {
                plan.calls
            } else {
                plan.calls.min(COMMITS_SAMPLE)
            };
            out.push(super::closed_loop(c, n, once.clone()).await?);
        }
        anyhow::Ok(out)
    }
    .await;
    store.close().await;
    result
}

/// `n` calls by `c` tasks sharing a counter.
async fn closed_loop(caller: &Arc<Caller>, c: usize, n: usize) -> Result<Figure> {
    let caller = caller.clone();
    super::closed_loop(c, n, move || {
        let caller = caller.clone();
        async move { caller.call(arguments()).await }
    })
    .await
}
