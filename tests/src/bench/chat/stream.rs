//! The pieces of the per-delta figure: one answer of many small text deltas, drained three
//! ways from the in-process fake LLM server, plus the chat loop fed from memory.
//!
//! | variant | what runs |
//! |---|---|
//! | raw | a bare HTTP/1.1 client: writes the request, reads the chunked SSE body to its end, parses nothing (the floor: server, loopback TCP, one reader) |
//! | provider | the real provider (`ProviderConfig::build`, reqwest, SSE decoder, vendor JSON decoder) drained as `StreamEvent`s |
//! | turn | `chat::run_turn` on that provider, its `ChatEvent`s received by a consumer task through the unbounded channel, until `Done` |
//! | memory | `run_turn` on a provider that yields prepared `StreamEvent`s from memory: the chat loop alone, no I/O |
//!
//! Each run records wall time and the process's CPU time (every thread:
//! `CLOCK_PROCESS_CPUTIME_ID`). The fake server runs in this process and does the same work
//! for every variant of a vendor, so the difference of two variants' CPU time is what the
//! extra layer costs, even when its work overlaps the server's on the other CPU (where a wall
//! clock difference would hide it).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::fake_llm::client::{profile_of, provider_for};
use crate::fake_llm::{FakeLlm, Reply, Scenario, Vendor};
use crate::seed::Rng;
use anyhow::{anyhow, bail, Context, Result};
use futures::future::BoxFuture;
use futures::StreamExt;
use serde_json::json;
use switchboard_core::chat::cap::{read_output_spec, Outputs};
use switchboard_core::chat::{
    run_turn, ChatEvent, ToolCall, ToolError, ToolRunner, TurnConfig, TurnEnd,
};
use switchboard_core::ids::ToolRef;
use switchboard_core::llm::{
    ChatRequest, EventStream, LlmError, Message, Provider, RetryPolicy, StopReason, StreamEvent,
    ToolSpec, Usage,
};
use switchboard_core::mcp::catalog::ToolResult;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(super) const PROMPT: &str = "Tell me a long story about a quokka.";

/// Wall and CPU time of one run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// Wall-clock time.
    pub wall: Duration,
    /// CPU time of the whole process (all threads).
    pub cpu: Duration,
}

/// CPU time used by this process so far, every thread included.
#[allow(unsafe_code)]
pub(super) fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

pub(super) async fn timed(f: impl Future<Output = Result<()>>) -> Result<Sample> {
    let (w, c) = (Instant::now(), cpu_now());
    f.await?;
    Ok(Sample {
        cpu: cpu_now().saturating_sub(c),
        wall: w.elapsed(),
    })
}

/// `n` small deltas, one vocabulary word and a space each (about one token, as models send).
pub fn deltas(n: usize) -> Vec<String> {
    let mut rng = Rng::new(4);
    (0..n).map(|_| format!("{} ", rng.sentence(1))).collect()
}

/// No tools: the turn only streams an answer.
pub(super) struct NoTools;

impl ToolRunner for NoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn resolve(&self, _llm_name: &str) -> Option<ToolRef> {
        None
    }

    fn run(&self, _call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async { Err(ToolError::Failed("no tools in this benchmark".into())) })
    }
}

/// Runs one turn of `provider`; a consumer task receives its events, calls `on_delta` with
/// `state` and the text of each `TextDelta`, and counts them. Returns the state.
pub(super) async fn turn<S: Send + 'static>(
    provider: &dyn Provider,
    model: &str,
    expected: usize,
    mut state: S,
    on_delta: fn(&mut S, &str),
) -> Result<S> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let consumer = tokio::spawn(async move {
        let (mut n, mut done) = (0usize, false);
        while let Some(ev) = rx.recv().await {
            match ev {
                ChatEvent::TextDelta { text } => {
                    on_delta(&mut state, &text);
                    n += 1;
                }
                ChatEvent::Done { .. } => done = true,
                _ => {}
            }
        }
        (n, done, state)
    });
    let mut transcript = vec![Message::user_text(PROMPT)];
    let end = run_turn(
        provider,
        &NoTools,
        &mut Outputs::default(),
        &TurnConfig::new(model),
        &mut transcript,
        CancellationToken::new(),
        tx,
    )
    .await;
    let (n, done, state) = consumer.await.context("the event consumer panicked")?;
    if !matches!(end, TurnEnd::Done(StopReason::EndTurn)) || !done || n != expected {
        bail!("run_turn ended {end:?} after {n} of {expected} text deltas (Done seen: {done})");
    }
    Ok(state)
}

/// The request of a provider variant: what `run_turn` sends for the same prompt.
pub(super) fn request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_owned(),
        system: None,
        messages: vec![Message::user_text(PROMPT)],
        // What run_turn offers when no server has tools: its built-in output reader.
        tools: vec![read_output_spec()],
        max_tokens: None,
        temperature: None,
    }
}

/// One vendor's fake server, provider and raw request.
pub struct Wire {
    server: FakeLlm,
    provider: Box<dyn Provider>,
    model: &'static str,
    raw_request: Vec<u8>,
    deltas: usize,
}

impl Wire {
    /// Serves an answer of `deltas` text deltas, `delay_ms` apart, to every request.
    pub async fn new(vendor: Vendor, deltas: usize, delay_ms: u64) -> Result<Self> {
        let mut reply = Reply::text(&[]).with_usage(1_200, deltas as u64, 0);
        reply.text = self::deltas(deltas);
        reply.chunk_delay_ms = delay_ms;
        let server = FakeLlm::spawn(Scenario {
            replies: vec![reply],
            repeat_last: true,
        })
        .await
        .context("could not start the fake LLM server")?;
        let (profile, model, path, body) = match vendor {
            Vendor::OpenAi => (
                "openai",
                "gpt-4o-mini",
                "/v1/chat/completions",
                json!({"model": "gpt-4o-mini", "stream": true,
                    "stream_options": {"include_usage": true},
                    "messages": [{"role": "user", "content": PROMPT}]}),
            ),
            Vendor::Anthropic => (
                "anthropic",
                "claude-3-5-haiku-latest",
                "/v1/messages",
                json!({"model": "claude-3-5-haiku-latest", "max_tokens": 4096, "stream": true,
                    "messages": [{"role": "user", "content": PROMPT}]}),
            ),
        };
        let provider = provider_for(
            &server,
            profile_of(profile),
            Some("sk-bench-not-a-key"),
            RetryPolicy::none(),
        );
        let body = body.to_string();
        let raw_request = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
            server.addr(),
            body.len()
        )
        .into_bytes();
        Ok(Self {
            server,
            provider,
            model,
            raw_request,
            deltas,
        })
    }

    /// The floor: the body read to its end by a bare client.
    pub async fn raw(&self) -> Result<Sample> {
        let addr: SocketAddr = self.server.addr();
        timed(async {
            let mut sock = tokio::net::TcpStream::connect(addr).await?;
            sock.set_nodelay(true)?;
            sock.write_all(&self.raw_request).await?;
            let mut buf = vec![0u8; 64 * 1024];
            let (mut total, mut tail) = (0usize, Vec::with_capacity(16));
            loop {
                let n = sock.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                total += n;
                tail.extend_from_slice(&buf[n.saturating_sub(5)..n]);
                let cut = tail.len().saturating_sub(5);
                tail.drain(..cut);
            }
            if !tail.ends_with(b"0\r\n\r\n") || total < self.deltas * 20 {
                bail!("the raw read ended after {total} bytes without the final chunk");
            }
            Ok(())
        })
        .await
    }

    /// The provider's stream, drained.
    pub async fn provider(&self) -> Result<Sample> {
        timed(async {
            let mut stream = self
                .provider
                .stream(request(self.model), CancellationToken::new())
                .await
                .map_err(|e| anyhow!("the provider failed: {e}"))?;
            let (mut n, mut done) = (0usize, false);
            while let Some(item) = stream.next().await {
                match item.map_err(|e| anyhow!("the stream failed: {e}"))? {
                    StreamEvent::TextDelta { .. } => n += 1,
                    StreamEvent::Done { .. } => done = true,
                    _ => {}
                }
            }
            if n != self.deltas || !done {
                bail!("the stream ended after {n} of {} deltas", self.deltas);
            }
            Ok(())
        })
        .await
    }

    /// `run_turn` on the provider, events into a channel.
    pub async fn turn(&self) -> Result<Sample> {
        timed(async {
            turn(
                self.provider.as_ref(),
                self.model,
                self.deltas,
                (),
                |_, _| {},
            )
            .await?;
            Ok(())
        })
        .await
    }
}

/// A provider answering from memory: the events of one answer, prepared before the clock
/// starts.
#[derive(Debug, Default)]
struct Memory {
    events: Mutex<Vec<StreamEvent>>,
}

impl Provider for Memory {
    fn stream(
        &self,
        _req: ChatRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        let events =
            std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner));
        Box::pin(async move { Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed()) })
    }

    fn profile_id(&self) -> &str {
        "memory"
    }
}

/// `run_turn` fed `deltas` text deltas from memory: the chat loop alone.
pub async fn memory(deltas: usize) -> Result<Sample> {
    let mut events: Vec<StreamEvent> = self::deltas(deltas)
        .into_iter()
        .map(|text| StreamEvent::TextDelta { text })
        .collect();
    events.push(StreamEvent::Usage {
        usage: Usage {
            input_tokens: 1_200,
            output_tokens: deltas as u64,
            cached_input_tokens: 0,
        },
    });
    events.push(StreamEvent::Done {
        stop: StopReason::EndTurn,
    });
    let provider = Memory {
        events: Mutex::new(events),
    };
    timed(async {
        turn(&provider, "memory", deltas, (), |_, _| {}).await?;
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_variant_drains_the_whole_answer() {
        for vendor in [Vendor::OpenAi, Vendor::Anthropic] {
            let w = Wire::new(vendor, 50, 0).await.unwrap();
            w.raw().await.unwrap();
            w.provider().await.unwrap();
            w.turn().await.unwrap();
        }
        memory(50).await.unwrap();
    }
}
