//! Measuring one request: its bytes in and out as compact JSON (counted, never buffered) and
//! the estimated tokens of its result (see the parent module's "Tokens").

use std::time::Instant;

use serde::Serialize;

use crate::catalog::{Content, ToolResult};
use crate::ids::ServerId;
use crate::store::{now_ms, MetricKind, MetricSample, Outcome};

/// A request being measured, from just before it is sent.
pub struct Meter {
    server: ServerId,
    kind: MetricKind,
    name: String,
    began: Instant,
    bytes_in: u64,
}

/// Counts bytes written, keeps none.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes of `v` as compact JSON.
pub(crate) fn json_bytes(v: &impl Serialize) -> u64 {
    let mut c = Counter(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Estimated tokens of a tool result as a model gets it (see the module docs).
pub fn estimate_tokens(r: &ToolResult) -> u64 {
    let mut chars = 0usize;
    for c in &r.content {
        chars += match c {
            Content::Text { text } => text.chars().count(),
            Content::Image { .. } => 0,
            Content::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} bytes base64]", data.len()).len()
            }
            Content::ResourceLink { uri, name, .. } => {
                "[resource link : ]".len() + name.chars().count() + uri.chars().count()
            }
            Content::Resource { resource } => match &resource.text {
                Some(t) => t.chars().count(),
                None => "[binary resource ]".len() + resource.uri.chars().count(),
            },
        };
    }
    if r.content.is_empty() {
        if let Some(s) = &r.structured_content {
            chars += s.to_string().chars().count();
        }
    }
    (chars as u64).div_ceil(4)
}

impl Meter {
    pub(super) fn start(server: &ServerId, kind: MetricKind, name: &str, bytes_in: u64) -> Self {
        Self {
            server: server.clone(),
            kind,
            name: name.to_owned(),
            began: Instant::now(),
            bytes_in,
        }
    }

    pub(super) fn sample(self, outcome: Outcome, bytes_out: u64, tokens: u64) -> MetricSample {
        MetricSample {
            at_ms: now_ms(),
            duration_us: u64::try_from(self.began.elapsed().as_micros()).unwrap_or(u64::MAX),
            server: self.server,
            kind: self.kind,
            name: self.name,
            outcome,
            bytes_in: self.bytes_in,
            bytes_out,
            tokens,
        }
    }
}
