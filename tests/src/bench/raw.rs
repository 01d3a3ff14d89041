//! The floor: raw JSON lines over the server's pipes, no MCP library, no async runtime.
//!
//! One thread does everything with blocking I/O: it performs `initialize` and
//! `notifications/initialized` by hand, then keeps exactly `c` `tools/call` requests in flight.
//! Each response read (and parsed, and checked) releases the next request; requests are buffered
//! and written with one `write` whenever no more responses are already buffered, so at `c = 1`
//! this is precisely "write a line, read a line" and at higher `c` it batches like the best
//! possible pipelined client. A request's clock starts just before the write that carries it.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

use super::{Figure, Plan, TEXT};

#[derive(Deserialize)]
struct Response {
    id: Option<u64>,
    result: Option<CallResult>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(default)]
    content: Vec<Item>,
    #[serde(default, rename = "isError")]
    is_error: bool,
}

#[derive(Deserialize)]
struct Item {
    text: Option<String>,
}

/// Runs the plan against a fresh server process.
pub fn run(server: &Path, plan: &Plan) -> Result<Vec<Figure>> {
    let mut child = Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("could not start {}", server.display()))?;
    let stdin = child.stdin.take().ok_or_else(|| anyhow!("no stdin pipe"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow!("no stdout pipe"))?;
    let mut session = Session {
        w: BufWriter::with_capacity(64 * 1024, stdin),
        r: BufReader::with_capacity(64 * 1024, stdout),
        line: String::with_capacity(512),
        next_id: 1,
    };
    let result = session.measure(plan);
    drop(session); // closes stdin: the server exits at EOF
    let _ = child.kill();
    let _ = child.wait();
    result
}

struct Session {
    w: BufWriter<std::process::ChildStdin>,
    r: BufReader<std::process::ChildStdout>,
    line: String,
    next_id: u64,
}

impl Session {
    fn measure(&mut self, plan: &Plan) -> Result<Vec<Figure>> {
        self.handshake()?;
        if plan.warmup > 0 {
            self.level(1, plan.warmup)?;
        }
        plan.conc
            .iter()
            .map(|&c| self.level(c, plan.calls))
            .collect()
    }

    fn read_line(&mut self) -> Result<&str> {
        self.line.clear();
        if self.r.read_line(&mut self.line)? == 0 {
            bail!("the server closed its output");
        }
        Ok(&self.line)
    }

    fn handshake(&mut self) -> Result<()> {
        writeln!(
            self.w,
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"sb-bench-raw","version":"0.1.0"}}}}}}"#
        )?;
        self.w.flush()?;
        let answer: serde_json::Value = serde_json::from_str(self.read_line()?)?;
        if answer.get("result").is_none() {
            bail!("initialize failed: {answer}");
        }
        writeln!(
            self.w,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )?;
        self.w.flush()?;
        Ok(())
    }

    fn request(&mut self, id: u64) -> Result<()> {
        writeln!(
            self.w,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{TEXT}"}}}}}}"#
        )?;
        Ok(())
    }

    /// `n` calls with `c` in flight.
    fn level(&mut self, c: usize, n: usize) -> Result<Figure> {
        let base = self.next_id;
        self.next_id += n as u64;
        let mut sent_at: Vec<Option<Instant>> = vec![None; n];
        let mut nanos = Vec::with_capacity(n);
        let (mut sent, mut flushed) = (0usize, 0usize);
        let t0 = Instant::now();
        while sent < c.min(n) {
            self.request(base + sent as u64)?;
            sent += 1;
        }
        while nanos.len() < n {
            // Write what is queued only when no more responses are waiting in our buffer.
            if flushed < sent && self.r.buffer().is_empty() {
                let now = Instant::now();
                sent_at[flushed..sent].fill(Some(now));
                flushed = sent;
                self.w.flush()?;
            }
            let resp: Response = serde_json::from_str(self.read_line()?)
                .with_context(|| format!("bad response line: {}", self.line.trim_end()))?;
            let Some(id) = resp.id else {
                continue; // a notification
            };
            let start = usize::try_from(id.wrapping_sub(base))
                .ok()
                .and_then(|i| sent_at.get_mut(i))
                .and_then(Option::take)
                .ok_or_else(|| anyhow!("response to an unknown request id {id}"))?;
            nanos.push(start.elapsed().as_nanos() as u64);
            check(resp)?;
            if sent < n {
                self.request(base + sent as u64)?;
                sent += 1;
            }
        }
        Ok(Figure::from_latencies(c, nanos, t0.elapsed()))
    }
}

fn check(resp: Response) -> Result<()> {
    if let Some(e) = resp.error {
        bail!("echo failed: {e}");
    }
    let r = resp
        .result
        .ok_or_else(|| anyhow!("a response without result"))?;
    match r.content.first().and_then(|i| i.text.as_deref()) {
        Some(t) if t == TEXT && !r.is_error => Ok(()),
        _ => bail!("unexpected echo result"),
    }
}

/// The same wire traffic from a minimal async client on the tokio runtime: callers write their
/// line under an async mutex and wait on a oneshot; one reader task parses each response and
/// completes its caller. No MCP library, no host: what is left over the blocking floor is the
/// price of async I/O and cross-task wake-ups alone.
pub mod tokio_client {
    use std::collections::HashMap;
    use std::path::Path;
    use std::process::Stdio;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};

    use anyhow::{anyhow, Context, Result};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::process::{ChildStdin, Command};
    use tokio::sync::oneshot;

    use super::{check, Response};
    use crate::bench::{Figure, Plan, TEXT};

    type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<()>>>>>;

    struct Client {
        stdin: tokio::sync::Mutex<ChildStdin>,
        pending: Pending,
        next_id: AtomicU64,
    }

    impl Client {
        async fn send(&self, line: String) -> Result<()> {
            let mut w = self.stdin.lock().await;
            w.write_all(line.as_bytes()).await?;
            w.flush().await?;
            Ok(())
        }

        async fn call(&self) -> Result<()> {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, tx);
            self.send(format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{TEXT}\"}}}}}}\n"
            ))
            .await?;
            rx.await
                .map_err(|_| anyhow!("the server closed its output"))?
        }
    }

    /// Runs the plan against a fresh server process.
    pub async fn run(server: &Path, plan: &Plan) -> Result<Vec<Figure>> {
        let mut child = Command::new(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("could not start {}", server.display()))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("no stdin pipe"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("no stdout pipe"))?;
        let pending: Pending = Arc::default();
        let (init_tx, init_rx) = oneshot::channel();
        let reader_pending = pending.clone();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            let mut init_tx = Some(init_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(resp) = serde_json::from_str::<Response>(&line) else {
                    continue;
                };
                let Some(id) = resp.id else { continue };
                if id == 0 {
                    if let Some(tx) = init_tx.take() {
                        let _ = tx.send(());
                    }
                    continue;
                }
                let waiter = reader_pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                if let Some(tx) = waiter {
                    let _ = tx.send(check(resp));
                }
            }
            // Dropping the senders fails every waiting caller.
            reader_pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        });
        let client = Arc::new(Client {
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            next_id: AtomicU64::new(1),
        });
        let result = async {
            client
                .send(
                    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sb-bench-raw-tokio","version":"0.1.0"}}}
"#
                    .to_owned(),
                )
                .await?;
            init_rx
                .await
                .map_err(|_| anyhow!("no answer to initialize"))?;
            client
                .send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n".to_owned())
                .await?;
            if plan.warmup > 0 {
                closed_loop(&client, 1, plan.warmup).await?;
            }
            let mut out = Vec::with_capacity(plan.conc.len());
            for &c in &plan.conc {
                out.push(closed_loop(&client, c, plan.calls).await?);
            }
            anyhow::Ok(out)
        }
        .await;
        drop(client);
        let _ = child.kill().await;
        reader.abort();
        result
    }

    async fn closed_loop(client: &Arc<Client>, c: usize, n: usize) -> Result<Figure> {
        let client = client.clone();
        super::super::closed_loop(c, n, move || {
            let client = client.clone();
            async move { client.call().await }
        })
        .await
    }
}
