//! The stdio transport of our own (rmcp's line codec does not cap what it buffers): lines
//! capped while reading (RL-01), non-JSON lines skipped and counted, a refused answer turned
//! into an error for the request it was for (see [`crate::mcp::recover`]), stderr always
//! drained into the ring buffer (RL-02, RL-13), every message recorded in the protocol trace.
//!
//! Why the stream ended is set once, by the reader task, as a typed [`Reason`]
//! ([`CloseReason`]): the connection reports it rather than rmcp's generic "closed".

use std::borrow::Cow;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::wire::refused_answer;
use super::CloseReason;
use crate::mcp::framing::{FrameError, LineReader};
use crate::server_logs::{Direction, ServerLogs, MAX_LINE};
use crate::server_process::Pipes;
use crate::status::Reason;

/// A stdio transport over a child's pipes with a capped line reader.
pub(super) struct StdioTransport {
    /// The child's stdin behind a buffer. Writers coalesce: the last of the senders queued on
    /// the lock flushes, so under load one `write` carries many messages, while a lone message
    /// is flushed at once (no extra task hop on the latency path).
    stdin: Arc<tokio::sync::Mutex<Option<tokio::io::BufWriter<tokio::process::ChildStdin>>>>,
    /// Senders that have a line to write and have not written it yet.
    pending: Arc<std::sync::atomic::AtomicUsize>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    logs: ServerLogs,
}

impl StdioTransport {
    pub(super) fn new(
        pipes: Pipes,
        logs: ServerLogs,
        max_message: usize,
        reason: CloseReason,
    ) -> Self {
        let (tx, incoming) = mpsc::channel(256);
        let reader_logs = logs.clone();
        tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::new(pipes.stdout), max_message);
            let end = loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        let Ok(text) = std::str::from_utf8(&line) else {
                            reader_logs.note("skipped a stdout line that is not UTF-8");
                            continue;
                        };
                        if text.trim().is_empty() {
                            continue;
                        }
                        match serde_json::from_str::<ServerJsonRpcMessage>(text) {
                            Ok(msg) => {
                                reader_logs.record(Direction::In, text);
                                if tx.send(msg).await.is_err() {
                                    break None;
                                }
                            }
                            Err(e) => {
                                let shown = reader_logs.excerpt(text, 200);
                                reader_logs.note(&format!(
                                    "skipped a stdout line that is not a JSON-RPC message ({e}): {shown}"
                                ));
                                // The request it answered fails now, not at its timeout.
                                if let Some(refusal) = refused_answer(&line, &e) {
                                    if tx.send(refusal).await.is_err() {
                                        break None;
                                    }
                                }
                            }
                        }
                    }
                    Ok(None) => break Some(Reason::OutputClosed),
                    Err(e @ FrameError::TooLong { cap }) => {
                        // The reader's own words carry the exact byte count.
                        reader_logs.note(&e.to_string());
                        break Some(Reason::MessageTooLarge { cap: cap as u64 });
                    }
                    Err(e) => {
                        break Some(Reason::Unreachable {
                            detail: e.to_string(),
                        })
                    }
                }
            };
            if let Some(end) = end {
                reader_logs.note(&end.to_string());
                let mut r = reason.lock().unwrap_or_else(PoisonError::into_inner);
                r.get_or_insert(end);
            }
        });
        let stderr_logs = logs.clone();
        tokio::spawn(drain_stderr(pipes.stderr, stderr_logs));
        Self {
            stdin: Arc::new(tokio::sync::Mutex::new(Some(
                tokio::io::BufWriter::with_capacity(64 * 1024, pipes.stdin),
            ))),
            pending: Arc::default(),
            incoming,
            logs,
        }
    }
}

/// Reads stderr until it closes, whatever its volume, keeping the tail (RL-02, RL-13). The hot
/// path is one read of up to [`STDERR_CHUNK`] bytes and one [`ServerLogs::push_stderr_bytes`]
/// per chunk: no per-line decoding or redaction (see [`crate::server_logs::stderr`]), so a server
/// that writes hundreds of megabytes before it answers `initialize` costs the host little CPU
/// and never holds up the protocol. Lines also go to `tracing` at debug level, at most
/// [`STDERR_LOG_RATE`] per second and only when that level is on, redacted one by one.
async fn drain_stderr(mut stderr: tokio::process::ChildStderr, logs: ServerLogs) {
    let mut chunk = vec![0u8; STDERR_CHUNK];
    let mut window = std::time::Instant::now();
    let mut in_window = 0usize;
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let read = &chunk[..n];
        logs.push_stderr_bytes(read);
        if !tracing::enabled!(target: "switchboard::server_stderr", tracing::Level::DEBUG) {
            continue;
        }
        if window.elapsed() >= Duration::from_secs(1) {
            window = std::time::Instant::now();
            in_window = 0;
        }
        for line in read
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .take(STDERR_LOG_RATE.saturating_sub(in_window))
        {
            in_window += 1;
            let text = logs.excerpt(&String::from_utf8_lossy(line), MAX_LINE);
            // The server's words, escaped: a line break in them cannot forge a log line.
            tracing::debug!(
                target: "switchboard::server_stderr",
                "{}",
                crate::escape::ServerText(text.trim_end_matches('\r'))
            );
        }
    }
    logs.finish_stderr();
}

/// Bytes read from stderr at a time.
const STDERR_CHUNK: usize = 64 * 1024;
/// Stderr lines logged to `tracing` per second at most.
const STDERR_LOG_RATE: usize = 20;

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "switchboard-stdio".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        use std::sync::atomic::Ordering;
        let stdin = self.stdin.clone();
        let pending = self.pending.clone();
        let logs = self.logs.clone();
        async move {
            let mut line = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            logs.record(Direction::Out, &line);
            line.push('\n');
            pending.fetch_add(1, Ordering::AcqRel);
            let mut guard = stdin.lock().await;
            let written = match guard.as_mut() {
                Some(pipe) => pipe.write_all(line.as_bytes()).await,
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "stdin closed",
                )),
            };
            // Whoever leaves the count at zero flushes for everyone written before it; a sender
            // still waiting for the lock will flush after writing its own line.
            let last = pending.fetch_sub(1, Ordering::AcqRel) == 1;
            written?;
            match guard.as_mut() {
                Some(pipe) if last => pipe.flush().await,
                _ => Ok(()),
            }
        }
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<ServerJsonRpcMessage>> {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin is the first step of a graceful stop.
        if let Some(mut pipe) = self.stdin.lock().await.take() {
            let _ = pipe.shutdown().await;
        }
        self.incoming.close();
        Ok(())
    }
}
