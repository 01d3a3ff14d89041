//! The scripted model of the agent figures, timed where it answers.
//!
//! The fake LLM server ([`crate::fake_llm`]) answers requests in arrival order from
//! one list, which ten sub-agents asking at once would take in any order, and it does not say
//! when it was busy. This one is stateless: what it answers is a function of the request alone
//! (the model name and how many tool results the transcript already holds; see [`script`]), so
//! any number of agents can share it, and it notes for every request the instant the request
//! was fully read and the instant the last byte of the answer was written. Between those two
//! instants the "model" is working; everything else a run takes is the host's (plus the MCP
//! server's, which answers at once). The answer is rendered by [`render`] (the same SSE bytes
//! as the fake LLM server) and written in one write: a model that answers at once.
//!
//! HTTP/1.1 with keep-alive (a real vendor's connection is reused by the host's client too):
//! one task per connection reads a request (head plus `content-length` body), answers it with
//! a chunked SSE body and waits for the next.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::fake_llm::render::render;
use crate::fake_llm::{Reply, ScriptedCall, Vendor};
use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::bench::TEXT;

/// The MCP tool the scripts call, as offered to a model (`server__tool`).
pub const ECHO: &str = "bench__echo";
/// The built-in delegate tool.
const DELEGATE: &str = switchboard_core::host::DELEGATE_TOOL;

/// One answered request.
#[derive(Clone, Debug)]
pub struct Served {
    /// The model the request named (which agent asked, in these scripts).
    pub model: String,
    /// When the whole request had been read.
    pub recv: Instant,
    /// When the last byte of the answer had been written.
    pub done: Instant,
    /// Tool results in the request's transcript.
    pub results: usize,
    /// Of those, results of [`ECHO`] that hold the echoed text and are not errors, plus
    /// delegate results that are not errors.
    pub ok_results: usize,
}

/// The running server; it stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Served>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ModelServer {
    /// Serves on a fresh 127.0.0.1 port.
    pub async fn spawn() -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = log.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let _ = sock.set_nodelay(true);
                tokio::spawn(connection(sock, shared.clone()));
            }
        });
        Ok(Self { addr, log, task })
    }

    /// The base URL for an OpenAI-wire provider.
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The base URL for an Anthropic-wire provider.
    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Everything served since the last take, in the order answered.
    pub fn take(&self) -> Vec<Served> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// What the model named `model` answers after `results` tool results.
///
/// - `answer`: text at once;
/// - `seq-delegate-N`: one delegation to `helper` per step until N results, then text;
/// - `seq-tool-N`: one [`ECHO`] call per step until N results, then text;
/// - `fanout-K`: K delegations to `worker-0` .. `worker-{K-1}` in one step, then text;
/// - `calls-M`: M [`ECHO`] calls in one step, then text.
///
/// Anything after an `@` is a label that tells agents apart (`calls-10@w3`).
pub fn script(model: &str, results: usize) -> Result<Reply> {
    let base = model.split('@').next().unwrap_or_default();
    let (kind, n) = match base.rsplit_once('-') {
        Some((k, n)) if n.chars().all(|c| c.is_ascii_digit()) => (k, n.parse::<usize>()?),
        _ => (base, 0),
    };
    let echo = |id: String| {
        let args = json!({ "text": TEXT }).to_string();
        ScriptedCall::new(&id, ECHO, &[&args])
    };
    let delegate = |id: String, agent: String| {
        let args = json!({ "agent": agent, "task": format!("Sub-task for {agent}.") });
        ScriptedCall::new(&id, DELEGATE, &[&args.to_string()])
    };
    let done = Reply::text(&["Done: ", model]).with_usage(100, 5, 0);
    let step = |calls: Vec<ScriptedCall>| Reply::calls(calls).with_usage(100, 20, 0);
    Ok(match kind {
        "answer" => done,
        "seq-delegate" if results < n => {
            step(vec![delegate(format!("toolu_{results}"), "helper".into())])
        }
        "seq-tool" if results < n => step(vec![echo(format!("toolu_{results}"))]),
        "fanout" if results == 0 => step(
            (0..n)
                .map(|i| delegate(format!("toolu_d{i}"), format!("worker-{i}")))
                .collect(),
        ),
        "calls" if results == 0 => step((0..n).map(|i| echo(format!("toolu_e{i}"))).collect()),
        "seq-delegate" | "seq-tool" | "fanout" | "calls" => done,
        _ => bail!("no script for the model {model:?}"),
    })
}

/// The tool results of a request's transcript (either vendor's form): how many, and how many
/// look right (an echo holding the text, or a delegation's answer, not flagged as an error).
fn results(body: &Value) -> (usize, usize) {
    let (mut all, mut ok) = (0, 0);
    let good = |v: &Value, error: bool| {
        let s = v.to_string();
        !error && (s.contains(TEXT) || s.contains("Done: "))
    };
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            all += 1;
            ok += usize::from(good(&m["content"], false));
        }
        for part in m["content"].as_array().into_iter().flatten() {
            if part["type"] == "tool_result" {
                all += 1;
                ok += usize::from(good(&part["content"], part["is_error"] == json!(true)));
            }
        }
    }
    (all, ok)
}

async fn connection(mut sock: TcpStream, log: Arc<Mutex<Vec<Served>>>) {
    let mut buf = Vec::new();
    while let Ok(Some((path, body))) = read_request(&mut sock, &mut buf).await {
        let recv = Instant::now();
        let answered = answer(&path, &body);
        let bytes = match &answered {
            Ok((bytes, _, _)) => bytes.clone(),
            Err(e) => error_response(&format!("{e:#}")),
        };
        if sock.write_all(&bytes).await.is_err() || sock.flush().await.is_err() {
            return;
        }
        let done = Instant::now();
        if let Ok((_, model, (results, ok_results))) = answered {
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Served {
                    model,
                    recv,
                    done,
                    results,
                    ok_results,
                });
        }
    }
}

/// The whole HTTP answer to one request, the model it named and its tool results.
fn answer(path: &str, body: &[u8]) -> Result<(Vec<u8>, String, (usize, usize))> {
    let vendor = match path {
        "/v1/chat/completions" => Vendor::OpenAi,
        "/v1/messages" => Vendor::Anthropic,
        other => bail!("no route for {other}"),
    };
    let body: Value = serde_json::from_slice(body)?;
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let counted = results(&body);
    let reply = script(&model, counted.0)?;
    let usage = body["stream_options"]["include_usage"] == json!(true);
    let frames = render(vendor, &reply, &model, usage);
    let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
        cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
        .to_vec();
    for f in frames.content.iter().chain(&frames.terminal) {
        out.extend_from_slice(format!("{:x}\r\n", f.len()).as_bytes());
        out.extend_from_slice(f.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    Ok((out, model, counted))
}

fn error_response(why: &str) -> Vec<u8> {
    let body =
        json!({"error": {"message": format!("sb-bench model: {why}"), "type": "server_error"}})
            .to_string();
    format!(
        "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one request from `sock` (bytes past it stay in `buf` for the next): its path and body;
/// `None` when the peer closed between requests.
async fn read_request(
    sock: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<(String, Vec<u8>)>> {
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > 64 * 1024 {
            bail!("request head too large");
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(anyhow!("closed inside a request head"))
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let path = head
        .split(' ')
        .nth(1)
        .ok_or_else(|| anyhow!("no request line"))?
        .to_owned();
    let len = head
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.trim().parse::<usize>())
        .transpose()?
        .unwrap_or(0);
    let start = head_end + 4;
    while buf.len() < start + len {
        let mut chunk = vec![0u8; (start + len - buf.len()).min(256 * 1024)];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            bail!("closed inside a request body");
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[start..start + len].to_vec();
    buf.drain(..start + len);
    Ok(Some((path, body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_follow_the_tool_results() {
        assert_eq!(script("seq-delegate-2", 0).unwrap().tool_calls.len(), 1);
        assert_eq!(script("seq-delegate-2", 1).unwrap().tool_calls.len(), 1);
        assert!(script("seq-delegate-2", 2).unwrap().tool_calls.is_empty());
        assert_eq!(script("fanout-10", 0).unwrap().tool_calls.len(), 10);
        assert_eq!(script("calls-10@w3", 0).unwrap().tool_calls[9].name, ECHO);
        assert!(script("calls-10@w3", 10).unwrap().tool_calls.is_empty());
        assert!(script("nonsense", 0).is_err());
    }

    #[test]
    fn results_are_counted_in_both_forms() {
        let body = json!({"messages": [
            {"role": "user", "content": [
                {"type": "tool_result", "content": [{"type": "text", "text": TEXT}]},
                {"type": "tool_result", "content": "boom", "is_error": true}]},
            {"role": "tool", "content": "Done: answer"}]});
        assert_eq!(results(&body), (3, 2));
    }
}
