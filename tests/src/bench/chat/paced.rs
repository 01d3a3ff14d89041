//! Deltas as a real model sends them: one at a time, with the host idle in between, and the
//! latency of each from the moment its chunk is written to the moment it comes out.
//!
//! The fake LLM server renders frames before it writes them and paces them with the tokio
//! timer, so it cannot say when each chunk left. This server does: it runs on its own OS
//! thread with blocking I/O, writes the frames [`render`] produces for the vendor (the same
//! bytes as the fake server's), sleeps `gap` before each text delta and records the instant
//! just before each delta's `write`. Delta `i` carries the text `d{i:05} `, so every reader
//! (the bare HTTP read, the provider's stream, `run_turn`'s consumer) knows which delta it
//! holds and notes when it got it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::fake_llm::client::profile_of;
use crate::fake_llm::render::render;
use crate::fake_llm::{Reply, Vendor};
use anyhow::{anyhow, bail, Context, Result};
use futures::StreamExt;
use switchboard_core::llm::ProviderConfig;
use switchboard_core::llm::{Provider, RetryPolicy, StreamEvent};
use switchboard_core::redact::Secret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::stream::{request, timed, turn, Sample};

/// The text of delta `i`.
fn token(i: usize) -> String {
    format!("d{i:05} ")
}

/// The delta index in a text that starts with a token.
fn parse(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (b.len() >= 6 && b[0] == b'd' && b[1..6].iter().all(u8::is_ascii_digit))
        .then(|| text[1..6].parse().ok())
        .flatten()
}

/// Every token in some bytes (a read may hold one frame, a few, or a part).
fn scan(bytes: &[u8], mut found: impl FnMut(usize)) {
    for w in bytes.windows(7) {
        if w[0] == b'd' && w[6] == b' ' && w[1..6].iter().all(u8::is_ascii_digit) {
            if let Some(i) = std::str::from_utf8(&w[1..6])
                .ok()
                .and_then(|s| s.parse().ok())
            {
                found(i);
            }
        }
    }
}

/// One paced run: wall and CPU time, and each delta's latency.
pub struct Run {
    /// Times of the whole run.
    pub sample: Sample,
    /// Per-delta latency from the write of its chunk, microseconds, sorted.
    pub latency_us: Vec<f64>,
}

/// The paced server and a provider aimed at it.
pub struct Paced {
    addr: SocketAddr,
    written: Arc<Mutex<Vec<Option<Instant>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    provider: Box<dyn Provider>,
    model: &'static str,
    raw_request: Vec<u8>,
    n: usize,
}

impl Drop for Paced {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Paced {
    /// Serves `n` deltas `gap` apart in `vendor`'s format, to one request at a time.
    pub fn new(vendor: Vendor, n: usize, gap: Duration) -> Result<Self> {
        let (profile, model, base) = match vendor {
            Vendor::OpenAi => ("openai", "gpt-4o-mini", "/v1"),
            Vendor::Anthropic => ("anthropic", "claude-3-5-haiku-latest", ""),
        };
        let mut reply = Reply::text(&[]).with_usage(1_200, n as u64, 0);
        reply.text = (0..n).map(token).collect();
        let rendered = render(vendor, &reply, model, true);
        let mut next = 0;
        let frames: Vec<(Vec<u8>, Option<usize>)> = rendered
            .content
            .into_iter()
            .chain(rendered.terminal)
            .map(|f| {
                let delta = (next < n && f.contains(&token(next))).then(|| {
                    next += 1;
                    next - 1
                });
                let mut chunk = format!("{:x}\r\n", f.len()).into_bytes();
                chunk.extend_from_slice(f.as_bytes());
                chunk.extend_from_slice(b"\r\n");
                (chunk, delta)
            })
            .collect();
        if next != n {
            bail!("found {next} of {n} delta frames in the rendered answer");
        }
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let written = Arc::new(Mutex::new(vec![None; n]));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (written, stop) = (written.clone(), stop.clone());
            std::thread::Builder::new()
                .name("paced-llm".into())
                .spawn(move || {
                    for sock in listener.incoming() {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        if let Ok(sock) = sock {
                            let _ = serve(sock, &frames, gap, &written);
                        }
                    }
                })?
        };
        let provider = ProviderConfig {
            base_url: Some(format!("http://{addr}{base}")),
            api_key: Some(Secret::new("sk-bench-not-a-key")),
            retry: RetryPolicy::none(),
            ..ProviderConfig::new(&profile_of(profile))
        }
        .build(reqwest::Client::new())
        .map_err(|e| anyhow!("provider: {e}"))?;
        let raw_request =
            format!("POST {base}/x HTTP/1.1\r\nhost: {addr}\r\ncontent-length: 2\r\n\r\n{{}}")
                .into_bytes();
        Ok(Self {
            addr,
            written,
            stop,
            thread: Some(thread),
            provider,
            model,
            raw_request,
            n,
        })
    }

    fn finish(&self, sample: Sample, got: Vec<Option<Instant>>) -> Result<Run> {
        let written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        let mut latency_us: Vec<f64> = written
            .iter()
            .zip(&got)
            .filter_map(|(w, g)| Some(g.as_ref()?.duration_since(*w.as_ref()?)))
            .map(|d| d.as_secs_f64() * 1e6)
            .collect();
        if latency_us.len() != self.n {
            bail!("timed {} of {} deltas", latency_us.len(), self.n);
        }
        latency_us.sort_by(f64::total_cmp);
        Ok(Run { sample, latency_us })
    }

    fn reset(&self) {
        let mut w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        w.iter_mut().for_each(|x| *x = None);
    }

    /// The bare HTTP read, noting when each delta's bytes arrive.
    pub async fn raw(&self) -> Result<Run> {
        self.reset();
        let mut got = vec![None; self.n];
        let sample = timed(async {
            let mut sock = tokio::net::TcpStream::connect(self.addr).await?;
            sock.set_nodelay(true)?;
            sock.write_all(&self.raw_request).await?;
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = sock.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                let now = Instant::now();
                scan(&buf[..n], |i| {
                    if let Some(slot) = got.get_mut(i) {
                        *slot = Some(now);
                    }
                });
            }
            Ok(())
        })
        .await?;
        self.finish(sample, got)
    }

    /// The provider's stream, noting when each `TextDelta` comes out.
    pub async fn provider(&self) -> Result<Run> {
        self.reset();
        let mut got = vec![None; self.n];
        let sample = timed(async {
            let mut stream = self
                .provider
                .stream(request(self.model), CancellationToken::new())
                .await
                .map_err(|e| anyhow!("the provider failed: {e}"))?;
            while let Some(item) = stream.next().await {
                if let StreamEvent::TextDelta { text } =
                    item.map_err(|e| anyhow!("the stream failed: {e}"))?
                {
                    if let Some(slot) = parse(&text).and_then(|i| got.get_mut(i)) {
                        *slot = Some(Instant::now());
                    }
                }
            }
            Ok(())
        })
        .await?;
        self.finish(sample, got)
    }

    /// `run_turn`, noting when each `ChatEvent::TextDelta` reaches the consumer.
    pub async fn turn(&self) -> Result<Run> {
        self.reset();
        let mut got = Vec::new();
        let sample = timed(async {
            got = turn(
                self.provider.as_ref(),
                self.model,
                self.n,
                vec![None; self.n],
                |seen: &mut Vec<Option<Instant>>, text| {
                    if let Some(slot) = parse(text).and_then(|i| seen.get_mut(i)) {
                        *slot = Some(Instant::now());
                    }
                },
            )
            .await?;
            Ok(())
        })
        .await?;
        self.finish(sample, got)
    }
}

/// Writes one answer: head, frames (sleeping `gap` before each delta), end.
fn serve(
    mut sock: TcpStream,
    frames: &[(Vec<u8>, Option<usize>)],
    gap: Duration,
    written: &Mutex<Vec<Option<Instant>>>,
) -> Result<()> {
    sock.set_nodelay(true)?;
    let mut head = Vec::new();
    let mut buf = [0u8; 8192];
    let body_start = loop {
        let n = sock.read(&mut buf)?;
        if n == 0 {
            bail!("the client left before its request");
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(p) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let text = String::from_utf8_lossy(&head[..body_start]).to_ascii_lowercase();
    let len: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .context("no content-length")?;
    let mut have = head.len() - body_start;
    while have < len {
        let n = sock.read(&mut buf)?;
        if n == 0 {
            bail!("the client left inside its request");
        }
        have += n;
    }
    sock.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
          cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
    )?;
    for (chunk, delta) in frames {
        if let Some(i) = delta {
            std::thread::sleep(gap);
            let now = Instant::now();
            if let Some(slot) = written
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_mut(*i)
            {
                *slot = Some(now);
            }
        }
        sock.write_all(chunk)?;
    }
    sock.write_all(b"0\r\n\r\n")?;
    sock.shutdown(std::net::Shutdown::Write)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_in_text_and_bytes() {
        assert_eq!(parse(&token(42)), Some(42));
        assert_eq!(parse("hello"), None);
        let mut seen = Vec::new();
        scan(
            b"data: {\"content\":\"d00007 \"}\n\ndata: {\"content\":\"d00008 \"}",
            |i| seen.push(i),
        );
        assert_eq!(seen, vec![7, 8]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_variant_times_every_delta() {
        for vendor in [Vendor::OpenAi, Vendor::Anthropic] {
            let p = Paced::new(vendor, 5, Duration::from_millis(1)).unwrap();
            for run in [p.raw().await, p.provider().await, p.turn().await] {
                assert_eq!(run.unwrap().latency_us.len(), 5);
            }
        }
    }
}
