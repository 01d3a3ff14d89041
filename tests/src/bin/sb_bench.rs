//! `sb-bench`: tool-call round trip and throughput of `switchboard-core` against the official
//! TypeScript and Python MCP SDK clients and a raw JSON-line pipe, in one run (`make bench`).
//!
//! # What is measured
//!
//! Every client talks to its own process of the same server, `fake-mcp-server` (built next to
//! this binary; hand-written Rust, newline JSON-RPC over stdio, answers `echo` inline), and calls
//! `echo {text: "hello from sb-bench"}`, checking every answer. The clients, one row each:
//!
//! | key | client |
//! |---|---|
//! | `raw-pipe` | the floor: blocking JSON lines written and read by hand, one thread (`bench/raw.rs`) |
//! | `raw-tokio` | the same lines from a minimal async client on tokio (oneshot per call, one reader task): the cost of async I/O alone |
//! | `switchboard` | a real `Host` calling `Host::call_tool`: checks and the call, no approval |
//! | `switchboard-run` | the same host calling `Host::run_tool`, the path the chat loop uses: a policy rule allows `echo`, and every call is decided and written to the audit log |
//! | `switchboard-conn` | the same host's supervised `Connection::call_tool`, to show what the host layer adds |
//! | `sqlite-commit` | not a client: one durable commit of one row through a `Store` like the host's, the yardstick of `run_tool`'s c=1 target |
//! | `ts-sdk` | `@modelcontextprotocol/sdk` `Client` + `StdioClientTransport`, `callTool` (`tests/bench/ts_client.mjs`) |
//! | `py-sdk` | `mcp` `ClientSession` + `stdio_client`, `call_tool`, `asyncio.gather` (`tests/bench/py_client.py`) |
//!
//! Then the 2026-07-28 rows (issue 13), against a TypeScript SDK v2 server instead of the fake
//! server (which speaks only the 2025 handshake), over stdio and loopback HTTP:
//! `ts-sdk-v2-stdio`, `switchboard-v2-stdio`, `ts-sdk-v2-http`, `switchboard-v2-http` (the
//! `@modelcontextprotocol/client` 2.4.0 client pinned to 2026-07-28, `tests/bench/ts2_client.mjs`,
//! and `Host::call_tool`; see `bench/peers/v2.rs`).
//!
//! # Method (the same for every client)
//!
//! 1. Start the server and complete the MCP handshake.
//! 2. Warm up: `--warmup` sequential calls (default 500).
//! 3. For each level c in `--conc` (default 1, 16, 64): `--calls` calls (default 20000) by c
//!    concurrent workers that share one counter and each loop "take a number, call, record".
//!    Every call's latency is timed alone (monotonic clock around the awaited call); p50 and p99
//!    are nearest-rank percentiles of those; throughput is calls divided by the wall time of
//!    the level. (The raw pipe keeps c requests in flight from its one thread instead.)
//! 4. Repeat the whole thing `--rounds` times (default 3), the clients interleaved within each
//!    round so that the machine's noise spreads over all of them; every figure shown is the
//!    median over the rounds of that figure.
//!
//! Then the ratios against the issue's targets: switchboard's p50 at c=1 below the TypeScript
//! SDK's (aim 0.7x) and within 3x the raw pipe's; throughput at c=64 at least 2x the TypeScript
//! SDK's. A MISS is reported, never asserted: benchmarks are programs, not timed tests.
//!
//! After the MCP rounds come the chat figures of issue 4 (`--only chat`, or `chat-open`,
//! `chat-search`, `chat-delta`): opening a 10,000-message conversation, full-text search over
//! 1,000,000 messages (a corpus cached under the output dir) and the host's cost per streamed
//! delta. Their method is in `bench/chat.rs`.
//!
//! Last, the agent figures of issue 15 (`--only agents`, or `agents-delegate`, `agents-fanout`):
//! the host's overhead per delegation and for a fan-out to 10 sub-agents making 10 tool calls
//! each, model time taken out, next to the same 100 calls made by one plain chat turn. Their
//! method is in `bench/agents.rs`.
//!
//! Then the host-cost figures of issue 16 (`--only redaction`, `metrics`): outbound redaction
//! per KB of a request and its restore of a call's arguments, metrics recording per call (the
//! governed loop with recording on and off, the recorder alone, the writer's throughput), each
//! next to one `echo` call through the host in the same run. Their method is in
//! `bench/host_cost.rs`.
//!
//! # Usage
//!
//! ```text
//! sb-bench [--calls N] [--rounds N] [--warmup N] [--conc 1,16,64] [--only KEY,..]
//!          [--fake-server PATH] [--workers N] [--out DIR] [--json] [--require-peers]
//!          [--chat-runs N] [--deltas N] [--corpus N] [--agent-runs N] [--delegations N]
//!          [--redactions N] [--cost-calls N] [--cost-samples N]
//! ```
//!
//! `--json` prints the machine-readable report instead of the table. `--out DIR` (or
//! `$SWITCHBOARD_BENCH_OUT`) also writes `results.json` and `table.txt` there. A peer that is not
//! installed is reported as UNAVAILABLE in the table; with `--require-peers` that makes the exit
//! status 1. A failed switchboard or raw-pipe measurement always does. Where the peers'
//! interpreters and SDKs are found is described in `bench/peers.rs` (`make bench` sets it up).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use switchboard_tests::bench::agents::{AgentPlan, AgentReport};
use switchboard_tests::bench::chat::{ChatPlan, ChatReport};
use switchboard_tests::bench::host_cost::{CostPlan, CostReport};
use switchboard_tests::bench::peers::{Peer, Peers};
use switchboard_tests::bench::report::{self, ClientSummary, Machine, Ratio};
use switchboard_tests::bench::switchboard::Entry;
use switchboard_tests::bench::{self, Figure, Outcome, Plan};

/// Every client, in the order they run within a round and appear in the table.
const CLIENTS: [&str; 12] = [
    "raw-pipe",
    "raw-tokio",
    "switchboard",
    "switchboard-run",
    "switchboard-conn",
    "sqlite-commit",
    "ts-sdk",
    "py-sdk",
    "ts-sdk-v2-stdio",
    "switchboard-v2-stdio",
    "ts-sdk-v2-http",
    "switchboard-v2-http",
];

const USAGE: &str = "\
usage: sb-bench [options]

  --calls N            calls per concurrency level (default 20000)
  --rounds N           repeat every measurement N times, report medians (default 3)
  --warmup N           sequential warm-up calls per measurement (default 500)
  --conc LIST          calls in flight, comma-separated (default 1,16,64)
  --only KEYS          only these clients (comma-separated): raw-pipe, raw-tokio,
                       switchboard, switchboard-run, switchboard-conn, sqlite-commit,
                       ts-sdk, py-sdk, ts-sdk-v2-stdio, switchboard-v2-stdio,
                       ts-sdk-v2-http, switchboard-v2-http; and
                       the chat figures: chat-open, chat-search, chat-delta, or chat for all
                       three; the agent figures: agents-delegate, agents-fanout, or agents;
                       the host-cost figures (issue 16): redaction, metrics; the stderr
                       drain (RL-13): stderr
  --fake-server PATH   the echo server (default: fake-mcp-server next to sb-bench)
  --out DIR            also write results.json and table.txt to DIR ($SWITCHBOARD_BENCH_OUT)
  --workers N          tokio worker threads for the Rust clients (0: current-thread runtime;
                       default: the multi-thread runtime's default, one per CPU)
  --json               print the JSON report instead of the table
  --require-peers      exit 1 if an SDK client (TypeScript v1 or v2, Python) cannot be measured
  --chat-runs N        warm runs per chat figure, after the cold one (default 10)
  --deltas N           text deltas in the streamed answer of chat-delta (default 10000)
  --corpus N           messages in the chat-search corpus (default 1000000; cached in the
                       --out dir, else tests/results/bench)
  --agent-runs N       warm runs per agent figure (agents-delegate, agents-fanout, or agents
                       for both), after the cold one (default 20)
  --delegations N      sequential delegations per supervisor run in agents-delegate (default 10)
  --redactions N       1 KB requests redacted per redaction figure (N/10 of 10 KB, N/100 of
                       100 KB, at least 20; default 2000)
  --cost-calls N       governed echo calls per mode (recording on, off) in metrics, and calls
                       of the echo yardstick of both (default 4000)
  --cost-samples N     samples through the metrics recorder alone and its writer (default 50000)
";

#[derive(Debug)]
struct Args {
    calls: usize,
    rounds: usize,
    warmup: usize,
    conc: Vec<usize>,
    only: Vec<String>,
    fake_server: Option<PathBuf>,
    out: Option<PathBuf>,
    json: bool,
    require_peers: bool,
    workers: Option<usize>,
    chat: Vec<&'static str>,
    chat_runs: usize,
    deltas: usize,
    corpus: usize,
    agents: Vec<&'static str>,
    agent_runs: usize,
    delegations: usize,
    cost: Vec<&'static str>,
    redactions: usize,
    cost_calls: usize,
    cost_samples: usize,
}

#[allow(clippy::too_many_lines)] // one arm per command-line flag
fn parse_args() -> Result<Option<Args>> {
    let mut a = Args {
        calls: 20_000,
        rounds: 3,
        warmup: 500,
        conc: vec![1, 16, 64],
        only: CLIENTS.iter().map(|s| (*s).to_owned()).collect(),
        fake_server: None,
        out: std::env::var_os("SWITCHBOARD_BENCH_OUT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        json: false,
        require_peers: false,
        workers: None,
        chat: bench::chat::KEYS.to_vec(),
        chat_runs: 10,
        deltas: 10_000,
        corpus: 1_000_000,
        agents: bench::agents::KEYS.to_vec(),
        agent_runs: 20,
        delegations: 10,
        cost: bench::host_cost::KEYS.to_vec(),
        redactions: 2000,
        cost_calls: 4000,
        cost_samples: 50_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| anyhow!("{flag} needs a value"))
        };
        let number = |v: String| -> Result<usize> {
            match v.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => bail!("{flag} needs a positive number, not {v:?}"),
            }
        };
        match flag.as_str() {
            "--calls" => a.calls = number(value()?)?,
            "--rounds" => a.rounds = number(value()?)?,
            "--warmup" => {
                let v = value()?;
                a.warmup = v
                    .parse()
                    .map_err(|_| anyhow!("--warmup needs a number, not {v:?}"))?;
            }
            "--conc" => {
                a.conc = value()?
                    .split(',')
                    .map(|s| number(s.trim().to_owned()))
                    .collect::<Result<_>>()?;
            }
            "--only" => {
                let keys: Vec<String> = value()?.split(',').map(|s| s.trim().to_owned()).collect();
                let chat = |k: &str| k == "chat" || bench::chat::KEYS.contains(&k);
                let agents = |k: &str| k == "agents" || bench::agents::KEYS.contains(&k);
                let cost = |k: &str| bench::host_cost::KEYS.contains(&k);
                if let Some(bad) = keys
                    .iter()
                    .find(|k| !CLIENTS.contains(&k.as_str()) && !chat(k) && !agents(k) && !cost(k))
                {
                    bail!(
                        "--only: unknown client {bad:?} (known: {}, chat, {}, agents, {}, {})",
                        CLIENTS.join(", "),
                        bench::chat::KEYS.join(", "),
                        bench::agents::KEYS.join(", "),
                        bench::host_cost::KEYS.join(", ")
                    );
                }
                a.cost = bench::host_cost::KEYS
                    .into_iter()
                    .filter(|c| keys.iter().any(|k| k == c))
                    .collect();
                a.agents = bench::agents::KEYS
                    .into_iter()
                    .filter(|c| keys.iter().any(|k| k == c || k == "agents"))
                    .collect();
                a.chat = bench::chat::KEYS
                    .into_iter()
                    .filter(|c| keys.iter().any(|k| k == c || k == "chat"))
                    .collect();
                a.only = keys;
            }
            "--fake-server" => a.fake_server = Some(PathBuf::from(value()?)),
            "--out" => a.out = Some(PathBuf::from(value()?)),
            "--workers" => {
                let v = value()?;
                a.workers = Some(
                    v.parse()
                        .map_err(|_| anyhow!("--workers needs a number, not {v:?}"))?,
                );
            }
            "--chat-runs" => a.chat_runs = number(value()?)?,
            "--deltas" => a.deltas = number(value()?)?,
            "--corpus" => a.corpus = number(value()?)?,
            "--agent-runs" => a.agent_runs = number(value()?)?,
            "--delegations" => a.delegations = number(value()?)?,
            "--redactions" => a.redactions = number(value()?)?,
            "--cost-calls" => a.cost_calls = number(value()?)?,
            "--cost-samples" => a.cost_samples = number(value()?)?,
            "--json" => a.json = true,
            "--require-peers" => a.require_peers = true,
            "-h" | "--help" => return Ok(None),
            other => bail!("unknown argument {other:?}\n\n{USAGE}"),
        }
    }
    Ok(Some(a))
}

/// The JSON report (`--json`, `results.json`).
#[derive(Serialize)]
struct Report<'a> {
    machine: &'a Machine,
    calls: usize,
    warmup: usize,
    rounds: usize,
    conc: &'a [usize],
    runtime: &'a str,
    clients: &'a [ClientSummary],
    ratios: &'a [Ratio],
    #[serde(skip_serializing_if = "Option::is_none")]
    chat: Option<&'a ChatReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agents: Option<&'a AgentReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host_cost: Option<&'a CostReport>,
}

/// The same allocator as the `switchboard` and desktop binaries, so the Rust rows measure what
/// ships.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sb-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[allow(clippy::too_many_lines)] // the benchmark's run, one measured phase after another
fn run() -> Result<ExitCode> {
    let Some(args) = parse_args()? else {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    let server = match &args.fake_server {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .context("cannot find where sb-bench runs from")?
            .with_file_name("fake-mcp-server"),
    };
    let selected: Vec<&'static str> = CLIENTS
        .into_iter()
        .filter(|k| args.only.iter().any(|o| o == k))
        .collect();
    let needs_server = !selected.is_empty() || !args.agents.is_empty() || !args.cost.is_empty();
    if needs_server && !server.is_file() {
        bail!(
            "the echo server {} does not exist: build it with `cargo build --release -p \
             switchboard-tests --bins`, or pass --fake-server",
            server.display()
        );
    }
    let plan = Plan {
        calls: args.calls,
        warmup: args.warmup,
        conc: args.conc.clone(),
    };
    let peers = Peers::locate()?;
    let mut builder = match args.workers {
        Some(0) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let rt = builder
        .enable_all()
        .build()
        .context("could not start the tokio runtime")?;
    let runtime = match args.workers {
        Some(0) => "tokio current-thread runtime".to_owned(),
        Some(n) => format!("tokio multi-thread runtime, {n} workers"),
        None => "tokio multi-thread runtime, default workers (one per CPU)".to_owned(),
    };

    let mut machine = Machine::probe();
    let unknown = || "unknown".to_owned();
    machine.rustc = Peers::version_of("rustc".as_ref()).unwrap_or_else(unknown);
    machine.node = Peers::version_of(&peers.node).unwrap_or_else(unknown);
    machine.python = Peers::version_of(&peers.python).unwrap_or_else(unknown);

    let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); selected.len()];
    let mut versions: Vec<Option<String>> = vec![None; selected.len()];
    if !selected.is_empty() {
        eprintln!(
            "sb-bench: {} calls per level, c = {:?}, warm-up {}, {} round(s); server {}",
            plan.calls,
            plan.conc,
            plan.warmup,
            args.rounds,
            server.display()
        );
    }
    for round in (1..=args.rounds).filter(|_| !selected.is_empty()) {
        for (i, key) in selected.iter().enumerate() {
            if let Some(Outcome::Unavailable(why)) = outcomes[i].first() {
                let why = why.clone();
                outcomes[i].push(Outcome::Unavailable(why));
                continue;
            }
            eprint!("  round {round}/{}: {key:<17} ", args.rounds);
            let t = Instant::now();
            let (outcome, version) = match *key {
                "raw-pipe" => (measured(bench::raw::run(&server, &plan)), None),
                "raw-tokio" => (
                    measured(rt.block_on(bench::raw::tokio_client::run(&server, &plan))),
                    None,
                ),
                "switchboard" => (
                    measured(rt.block_on(bench::switchboard::run(&server, &plan, Entry::Host))),
                    None,
                ),
                "switchboard-run" => (
                    measured(rt.block_on(bench::switchboard::run(&server, &plan, Entry::Run))),
                    None,
                ),
                "switchboard-conn" => (
                    measured(rt.block_on(bench::switchboard::run(
                        &server,
                        &plan,
                        Entry::Connection,
                    ))),
                    None,
                ),
                "sqlite-commit" => (
                    measured(rt.block_on(bench::switchboard::commit(&plan))),
                    None,
                ),
                "ts-sdk" => rt.block_on(peers.run(Peer::TypeScript, &server, &plan)),
                "py-sdk" => rt.block_on(peers.run(Peer::Python, &server, &plan)),
                v2 => rt.block_on(peers.run_v2(v2, &plan)),
            };
            eprintln!("{} ({:.1} s)", short(&outcome), t.elapsed().as_secs_f64());
            versions[i] = versions[i].take().or(version);
            outcomes[i].push(outcome);
        }
    }
    let chat = (!args.chat.is_empty()).then(|| {
        eprintln!("sb-bench: chat figures {:?}", args.chat);
        let dir = args.out.clone().unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/bench")
        });
        rt.block_on(bench::chat::run(&ChatPlan {
            runs: args.chat_runs,
            deltas: args.deltas,
            corpus: args.corpus,
            dir,
            keys: args.chat.clone(),
        }))
    });
    let agents = (!args.agents.is_empty()).then(|| {
        eprintln!("sb-bench: agent figures {:?}", args.agents);
        rt.block_on(bench::agents::run(&AgentPlan {
            runs: args.agent_runs,
            delegations: args.delegations,
            fanout: 10,
            calls: 10,
            server: server.clone(),
            keys: args.agents.clone(),
        }))
    });
    let host_cost = (!args.cost.is_empty()).then(|| {
        eprintln!("sb-bench: host-cost figures {:?}", args.cost);
        rt.block_on(bench::host_cost::run(&CostPlan {
            redactions: args.redactions,
            calls: args.cost_calls,
            samples: args.cost_samples,
            server: server.clone(),
            keys: args.cost.clone(),
        }))
    });
    drop(rt);

    let clients: Vec<ClientSummary> = selected
        .iter()
        .zip(&outcomes)
        .zip(&versions)
        .map(|((key, o), v)| ClientSummary::new(key, label(key, v.as_deref()), o))
        .collect();
    let ratios = report::ratios(&clients);
    let header = format!(
        "sb-bench: echo round trips over stdio, one fake-mcp-server per client (the -v2 rows: one \
         TypeScript SDK v2 server per client, over stdio or loopback HTTP); {} calls per level, \
         warm-up {}, median of {} round(s); Rust clients on a {runtime}\nmachine: {} x {}, {}, \
         {}, kernel {}; {}; node {}; {}\n",
        plan.calls,
        plan.warmup,
        args.rounds,
        machine.cpus,
        machine.cpu_model,
        machine.memory,
        machine.os,
        machine.kernel,
        machine.rustc,
        machine.node,
        machine.python
    );
    let mut table = if selected.is_empty() {
        header
            .lines()
            .nth(1)
            .map(|m| format!("{m}\n"))
            .unwrap_or_default()
    } else {
        format!("{header}\n{}", report::table(&clients, &ratios, &plan.conc))
    };
    if let Some(chat) = &chat {
        table.push('\n');
        table.push_str(&bench::chat::table(chat));
    }
    if let Some(agents) = &agents {
        table.push('\n');
        table.push_str(&bench::agents::table(agents));
    }
    if let Some(cost) = &host_cost {
        table.push('\n');
        table.push_str(&bench::host_cost::table(cost));
    }
    let json = serde_json::to_string_pretty(&Report {
        machine: &machine,
        calls: plan.calls,
        warmup: plan.warmup,
        rounds: args.rounds,
        conc: &plan.conc,
        runtime: &runtime,
        clients: &clients,
        ratios: &ratios,
        chat: chat.as_ref(),
        agents: agents.as_ref(),
        host_cost: host_cost.as_ref(),
    })?;
    if args.json {
        println!("{json}");
    } else {
        print!("{table}");
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
        std::fs::write(dir.join("results.json"), format!("{json}\n"))?;
        std::fs::write(dir.join("table.txt"), &table)?;
        eprintln!(
            "sb-bench: wrote results.json and table.txt to {}",
            dir.display()
        );
    }

    let own_failed = clients.iter().any(|c| {
        matches!(
            c.key,
            "raw-pipe"
                | "raw-tokio"
                | "switchboard"
                | "switchboard-run"
                | "switchboard-conn"
                | "sqlite-commit"
        ) && c.status != "measured"
            // Switchboard against the TS v2 server: unavailable without the peer, but a failure
            // is ours.
            || (c.key.starts_with("switchboard-v2") && c.status == "failed")
    });
    let peer_missing = clients.iter().any(|c| {
        (matches!(c.key, "ts-sdk" | "py-sdk") || bench::peers::v2::PEER_KEYS.contains(&c.key))
            && c.status != "measured"
    });
    if chat.as_ref().is_some_and(|c| !c.failures.is_empty()) {
        eprintln!("sb-bench: a chat figure failed (see the table)");
        return Ok(ExitCode::FAILURE);
    }
    if agents.as_ref().is_some_and(|a| !a.failures.is_empty()) {
        eprintln!("sb-bench: an agent figure failed (see the table)");
        return Ok(ExitCode::FAILURE);
    }
    if host_cost.as_ref().is_some_and(|c| !c.failures.is_empty()) {
        eprintln!("sb-bench: a host-cost figure failed (see the table)");
        return Ok(ExitCode::FAILURE);
    }
    if own_failed {
        eprintln!("sb-bench: a switchboard or raw-pipe measurement failed (see the table)");
        return Ok(ExitCode::FAILURE);
    }
    if peer_missing && args.require_peers {
        eprintln!("sb-bench: --require-peers: a peer SDK client was not measured (see the table)");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn measured(r: Result<Vec<Figure>>) -> Outcome {
    match r {
        Ok(f) => Outcome::Measured(f),
        Err(e) => Outcome::Failed(format!("{e:#}")),
    }
}

fn short(o: &Outcome) -> String {
    match o {
        Outcome::Measured(f) => f
            .iter()
            .map(|f| format!("c={}: p50 {:.0} us, {:.0}/s", f.c, f.p50_us, f.throughput))
            .collect::<Vec<_>>()
            .join("; "),
        Outcome::Unavailable(why) => format!("unavailable: {why}"),
        Outcome::Failed(why) => format!("FAILED: {why}"),
    }
}

fn label(key: &str, version: Option<&str>) -> String {
    let v = version.map(|v| format!(" {v}")).unwrap_or_default();
    match key {
        "raw-pipe" => "raw JSON-line pipe (floor)".into(),
        "raw-tokio" => "raw JSON lines, minimal tokio client".into(),
        "switchboard" => "switchboard-core Host::call_tool".into(),
        "switchboard-run" => "switchboard-core Host::run_tool (allow rule + audit)".into(),
        "switchboard-conn" => "switchboard-core Connection::call_tool".into(),
        "sqlite-commit" => "one SQLite commit (a Store's, not a call)".into(),
        "ts-sdk" => format!("TypeScript SDK{v} (node)"),
        "py-sdk" => format!("Python SDK (mcp{v})"),
        other => bench::peers::v2::label(other, version),
    }
}
