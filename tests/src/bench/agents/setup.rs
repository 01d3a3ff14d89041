//! The host the agent figures run on: a real [`Host`] (temp data dir, in-memory secrets) with
//! the fake MCP server added, trusted and started as `bench`, one user rule allowing its `echo`
//! (so every call goes through the approval seam and the audit log, and is allowed without a
//! person), two providers on the scripted model (OpenAI wire and Anthropic wire) and the
//! agents the scripts name. A watchdog denies anything that waits for a person, which fails the
//! figure instead of hanging it.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use switchboard_core::agent_data::{AgentName, AgentProfile, ToolScope};
use switchboard_core::approval::{Answer, Effect, On, Rule, Source};
use switchboard_core::config::{ServerSpec, StdioSpec, Timeouts, TransportSpec};
use switchboard_core::host::{Host, HostBuilder};
use switchboard_core::ids::{ProviderName, ServerId};
use switchboard_core::redact::Secret;
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::supervisor::ServerStatus;

use super::model::ModelServer;

/// The policy rule that lets the agents' `echo` calls through.
pub const RULE: &str = "sb-bench-agents-allow-echo";
/// The provider on the OpenAI wire (the supervisors).
pub const OPENAI: &str = "bench-oa";
/// The provider on the Anthropic wire (the sub-agents and the plain turn).
pub const ANTHROPIC: &str = "bench-an";

/// A host ready for the scripts, its data dir and the scripted model.
pub struct Bench {
    pub host: Host,
    pub model: ModelServer,
    _dir: tempfile::TempDir,
}

/// Agent `name` on `provider` with `model`, seeing `bench`'s tools, delegating to `delegates`.
fn profile(name: &str, provider: &str, model: &str, delegates: &[String]) -> Result<AgentProfile> {
    let agent = |n: &str| AgentName::new(n).map_err(|e| anyhow!("agent name {n:?}: {e}"));
    let mut p = AgentProfile::new(agent(name)?, ProviderName::new(provider)?);
    p.model = Some(model.to_owned());
    p.description = format!("sb-bench agent on the scripted model {model}");
    p.scope = ToolScope {
        servers: vec!["bench".into()],
        tools: Vec::new(),
    };
    p.delegates = Some(delegates.iter().map(|d| agent(d)).collect::<Result<_>>()?);
    Ok(p)
}

impl Bench {
    /// Builds it all: `delegations` is the supervisor's sequential count, `fanout` x `calls`
    /// the fan-out's shape.
    pub async fn new(
        server: &Path,
        delegations: usize,
        fanout: usize,
        calls: usize,
    ) -> Result<Self> {
        let dir = tempfile::tempdir().context("could not create a temp dir for the host")?;
        let host = HostBuilder::new(dir.path())
            .secrets(Secrets::new(MemoryStore::default()))
            .build()
            .await
            .context("could not build the host")?;
        let model = ModelServer::spawn().await?;
        let bench = Self {
            host,
            model,
            _dir: dir,
        };
        if let Err(e) = bench.populate(server, delegations, fanout, calls).await {
            bench.host.shutdown().await;
            return Err(e);
        }
        Ok(bench)
    }

    async fn populate(&self, server: &Path, n: usize, fanout: usize, calls: usize) -> Result<()> {
        let host = &self.host;
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
            bail!("the fake MCP server did not start: {status}");
        }
        host.put_policy_rule(Rule {
            id: RULE.into(),
            effect: Effect::Allow,
            server: "bench".into(),
            on: On::Tool,
            tool: "echo".into(),
            origin: None,
            when: Vec::new(),
            limit: None,
            note: Some("sb-bench: the agents' echo runs without asking".into()),
            source: Source::User,
        })
        .await
        .map_err(|e| anyhow!("could not add the policy rule {RULE:?}: {e}"))?;
        for (name, kind, base) in [
            (OPENAI, "openai", self.model.openai_base()),
            (ANTHROPIC, "anthropic", self.model.anthropic_base()),
        ] {
            let p = ProviderName::new(name)?;
            host.models()
                .add_provider(&p, kind, Some(base), Some("answer".into()), None)
                .await?;
            host.models()
                .set_provider_key(&p, Secret::new("sk-bench-not-a-key"))
                .await?;
        }
        let workers: Vec<String> = (0..fanout).map(|i| format!("worker-{i}")).collect();
        // Sub-agents first: a profile may only name agents that exist.
        let mut agents = vec![profile("helper", ANTHROPIC, "answer", &[])?];
        for (i, w) in workers.iter().enumerate() {
            agents.push(profile(w, ANTHROPIC, &format!("calls-{calls}@w{i}@"), &[])?);
        }
        agents.extend([
            profile(
                "lead-delegate",
                OPENAI,
                &format!("seq-delegate-{n}"),
                &["helper".into()],
            )?,
            // Offered the same delegate tool, so its requests are the same size; it calls
            // echo instead.
            profile(
                "lead-tool",
                OPENAI,
                &format!("seq-tool-{n}"),
                &["helper".into()],
            )?,
            profile("lead-fanout", OPENAI, &format!("fanout-{fanout}"), &workers)?,
        ]);
        for a in agents {
            host.add_agent(a).await?;
        }
        Ok(())
    }
}

/// Denies, every 50 ms, whatever waits for a person, and remembers what it was.
pub struct Watchdog {
    task: tokio::task::JoinHandle<()>,
    asked: Arc<Mutex<Option<String>>>,
}

impl Watchdog {
    pub fn start(host: &Host) -> Self {
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

    /// Stops it; an error naming what it had to deny, if anything.
    pub fn stop(self) -> Result<()> {
        self.task.abort();
        match self.asked.lock().ok().and_then(|mut s| s.take()) {
            Some(what) => {
                bail!("a call waited for a person instead of being allowed by {RULE:?}: {what}")
            }
            None => Ok(()),
        }
    }
}
