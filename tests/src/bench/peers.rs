//! The peers: the official TypeScript and Python MCP SDK clients, run as child processes.
//!
//! The scripts (`tests/bench/ts_client.mjs`, `tests/bench/py_client.py`) are compiled into
//! `sb-bench` and written to a temp dir at start, so the binary runs from anywhere. Each run
//! starts its own fake server through the SDK's own stdio transport and prints one JSON line per
//! concurrency level. Where the interpreters and the SDKs are found:
//!
//! - node: `$SWITCHBOARD_NODE`, else `<repo>/.tools/node22/bin/node` if present, else `node`.
//! - TypeScript SDK (the `@modelcontextprotocol/sdk` package folder): `$SWITCHBOARD_TS_SDK_DIR`,
//!   else `$SWITCHBOARD_NODE_MODULES/@modelcontextprotocol/sdk`, else
//!   `$SWITCHBOARD_NPM_DIR/node_modules/@modelcontextprotocol/sdk`, else
//!   `<repo>/tests/npm/node_modules/@modelcontextprotocol/sdk`.
//! - python (with the `mcp` package): `$SWITCHBOARD_PYTHON`, else `<repo>/.tools/venv/bin/python`
//!   if present, else `python3`.
//!
//! `make deps` installs all three; `make bench` sets the variables.
//!
//! The 2026-07-28 rows (the TypeScript SDK v2 client and Switchboard against a TypeScript SDK v2
//! server, over stdio and loopback HTTP) are in [`v2`].

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::{Figure, Outcome, Plan};

pub mod v2;

const TS_SCRIPT: &str = include_str!("../../bench/ts_client.mjs");
const PY_SCRIPT: &str = include_str!("../../bench/py_client.py");

/// The repository root as it was at build time (`tests/..`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Which SDK client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// `@modelcontextprotocol/sdk` under node.
    TypeScript,
    /// The `mcp` package under python.
    Python,
}

/// Where the peers' interpreters, SDKs and scripts are.
#[derive(Debug)]
pub struct Peers {
    /// The node binary.
    pub node: PathBuf,
    /// The TypeScript SDK package folder, if found.
    pub ts_sdk: Option<PathBuf>,
    /// The python binary.
    pub python: PathBuf,
    /// The `node_modules` folder holding the TypeScript SDK v2 packages, if found.
    pub ts2_modules: Option<PathBuf>,
    scripts: tempfile::TempDir,
}

impl Peers {
    /// Finds the interpreters and SDKs and writes the scripts out.
    pub fn locate() -> Result<Self> {
        let root = repo_root();
        let node = env_path("SWITCHBOARD_NODE").unwrap_or_else(|| {
            let local = root.join(".tools/node22/bin/node");
            if local.exists() {
                local
            } else {
                PathBuf::from("node")
            }
        });
        const SDK: &str = "@modelcontextprotocol/sdk";
        let ts_sdk = [
            env_path("SWITCHBOARD_TS_SDK_DIR"),
            env_path("SWITCHBOARD_NODE_MODULES").map(|d| d.join(SDK)),
            env_path("SWITCHBOARD_NPM_DIR").map(|d| d.join("node_modules").join(SDK)),
            Some(root.join("tests/npm/node_modules").join(SDK)),
        ]
        .into_iter()
        .flatten()
        .find(|d| d.join("dist/esm/client/index.js").is_file());
        let python = env_path("SWITCHBOARD_PYTHON").unwrap_or_else(|| {
            let local = root.join(".tools/venv/bin/python");
            if local.exists() {
                local
            } else {
                PathBuf::from("python3")
            }
        });
        let scripts = tempfile::tempdir().context("could not create a temp dir for the scripts")?;
        std::fs::write(scripts.path().join("ts_client.mjs"), TS_SCRIPT)?;
        std::fs::write(scripts.path().join("py_client.py"), PY_SCRIPT)?;
        v2::write_scripts(scripts.path())?;
        Ok(Self {
            node,
            ts_sdk,
            python,
            ts2_modules: v2::modules(&root),
            scripts,
        })
    }

    /// `<program> --version`, trimmed, if it runs.
    pub fn version_of(program: &Path) -> Option<String> {
        let out = std::process::Command::new(program)
            .arg("--version")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(if out.stdout.is_empty() {
            &out.stderr
        } else {
            &out.stdout
        })
        .trim()
        .to_owned();
        (out.status.success() && !text.is_empty()).then_some(text)
    }

    /// Runs one peer against a fresh server process. The SDK version it reports comes back
    /// alongside the figures.
    pub async fn run(&self, peer: Peer, server: &Path, plan: &Plan) -> (Outcome, Option<String>) {
        let (program, mut args) = match peer {
            Peer::TypeScript => {
                let Some(sdk) = &self.ts_sdk else {
                    return (
                        Outcome::Unavailable(
                            "@modelcontextprotocol/sdk not found: run `make deps`, or set \
                             SWITCHBOARD_TS_SDK_DIR to its package folder"
                                .into(),
                        ),
                        None,
                    );
                };
                (
                    &self.node,
                    vec![
                        self.scripts.path().join("ts_client.mjs").into_os_string(),
                        "--sdk".into(),
                        sdk.clone().into_os_string(),
                    ],
                )
            }
            Peer::Python => (
                &self.python,
                vec![self.scripts.path().join("py_client.py").into_os_string()],
            ),
        };
        let var = match peer {
            Peer::TypeScript => "SWITCHBOARD_NODE",
            Peer::Python => "SWITCHBOARD_PYTHON",
        };
        args.extend(["--server".into(), server.as_os_str().to_owned()]);
        run_script(program, args, plan, var).await
    }
}

/// Runs one peer script with the plan's `--calls`, `--warmup` and `--conc` after `args`, and
/// reads its JSON lines. `var` names the variable that points at the interpreter.
async fn run_script(
    program: &Path,
    mut args: Vec<std::ffi::OsString>,
    plan: &Plan,
    var: &str,
) -> (Outcome, Option<String>) {
    let conc: Vec<String> = plan.conc.iter().map(ToString::to_string).collect();
    args.extend([
        "--calls".into(),
        plan.calls.to_string().into(),
        "--warmup".into(),
        plan.warmup.to_string().into(),
        "--conc".into(),
        conc.join(",").into(),
    ]);
    let child = tokio::process::Command::new(program)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            return (
                Outcome::Unavailable(format!(
                    "{} cannot be started ({e}): run `make deps`, or set {var}",
                    program.display()
                )),
                None,
            );
        }
    };
    // Generous: 2 ms a call is ten times the slowest peer's measured pace.
    let limit = Duration::from_secs(120)
        + Duration::from_millis(2 * (plan.calls * plan.conc.len() + plan.warmup) as u64);
    let out = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Err(_) => {
            return (
                Outcome::Failed(format!("no result within {} s", limit.as_secs())),
                None,
            )
        }
        Ok(Err(e)) => return (Outcome::Failed(format!("waiting for it failed: {e}")), None),
        Ok(Ok(out)) => out,
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: String = stderr
        .lines()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join(" | ");
    if out.status.code() == Some(3) {
        return (Outcome::Unavailable(tail), None);
    }
    if !out.status.success() {
        return (
            Outcome::Failed(format!("exited with {}: {tail}", out.status)),
            None,
        );
    }
    parse(&String::from_utf8_lossy(&out.stdout), plan)
}

#[derive(Deserialize)]
struct Line {
    sdk_version: Option<String>,
    /// The revision the connection negotiated, from peers that say (the 2026-07-28 ones).
    protocol: Option<String>,
    #[serde(flatten)]
    figure: Figure,
}

fn parse(stdout: &str, plan: &Plan) -> (Outcome, Option<String>) {
    let mut figures = Vec::new();
    let mut version = None;
    for line in stdout.lines().filter(|l| l.trim_start().starts_with('{')) {
        match serde_json::from_str::<Line>(line) {
            Ok(l) => {
                let said = match (l.sdk_version, l.protocol) {
                    (Some(v), Some(p)) => Some(format!("{v}, {p}")),
                    (v, _) => v,
                };
                version = version.or(said);
                figures.push(l.figure);
            }
            Err(e) => {
                return (
                    Outcome::Failed(format!("unreadable result line ({e}): {line}")),
                    version,
                )
            }
        }
    }
    let levels: Vec<usize> = figures.iter().map(|f| f.c).collect();
    if levels != plan.conc {
        return (
            Outcome::Failed(format!(
                "expected results for c = {:?}, got {levels:?}",
                plan.conc
            )),
            version,
        );
    }
    (Outcome::Measured(figures), version)
}
