//! `fake-llm-server`: a scripted LLM server speaking the OpenAI (`POST /v1/chat/completions`)
//! and Anthropic (`POST /v1/messages`) streaming wire formats, for tests and demos without a
//! model. The code lives in `tests/src/fake_llm/`; the scenario format is documented in
//! `tests/src/fake_llm/scenario.rs`.
//!
//! It binds 127.0.0.1 (port 0 unless `--port`) and prints `listening http://127.0.0.1:PORT`
//! as its first stdout line, then serves until killed. Point an OpenAI-wire provider at
//! `http://127.0.0.1:PORT/v1` and an Anthropic one at `http://127.0.0.1:PORT`.
//!
//! # Flags
//! - `--scenario FILE`: the scenario as a JSON file.
//! - `--scenario-json TEXT`: the scenario inline.
//! - `--record FILE`: append every received request (method, path, headers, body) to FILE as
//!   one JSON line. `GET /requests` returns the same records as a JSON array.
//! - `--port N`: the port to bind (default 0: any free port).
//! - `--help`: print usage.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use switchboard_tests::fake_llm::{serve_forever, Scenario};

const USAGE: &str = "\
usage: fake-llm-server [--scenario FILE | --scenario-json TEXT] [--record FILE] [--port N]
  prints `listening http://127.0.0.1:PORT`, then serves POST /v1/chat/completions (OpenAI SSE),
  POST /v1/messages (Anthropic SSE) and GET /requests until killed";

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut scenario = Scenario::default();
    let mut record: Option<PathBuf> = None;
    let mut port: u16 = 0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = || -> anyhow::Result<String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args.next().with_context(|| format!("{flag} needs a value")),
            }
        };
        match flag.as_str() {
            "--scenario" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading the scenario {path}"))?;
                scenario = serde_json::from_str(&text)
                    .with_context(|| format!("parsing the scenario {path}"))?;
            }
            "--scenario-json" => {
                scenario = serde_json::from_str(&value()?).context("parsing --scenario-json")?;
            }
            "--record" => record = Some(PathBuf::from(value()?)),
            "--port" => port = value()?.parse().context("--port needs a number")?,
            "--help" | "-h" => {
                writeln!(std::io::stdout(), "{USAGE}")?;
                return Ok(());
            }
            other => bail!("unknown flag {other}\n{USAGE}"),
        }
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .context("binding 127.0.0.1")?;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout();
    writeln!(out, "listening http://{addr}")?;
    out.flush()?;
    serve_forever(listener, scenario, record).await;
    Ok(())
}
