//! The `redaction` figures (method in [`super`]): the redacting provider wrapper over requests
//! of 1, 10 and 100 KB, with and without findings, next to the bare provider; then the restore
//! of a tool call's arguments.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::{anyhow, bail, ensure, Result};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use switchboard_core::chat::ChatEvent;
use switchboard_core::llm::{ChatRequest, EventStream, LlmError, Provider};
use switchboard_core::outbound::{Redacting, Rules, Session};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::corpus::{self, Request};
use super::{figure, us, CostPlan, CostReport};

const KEY: &str = "redaction";

/// A provider that keeps the last request it was given and answers with an empty stream: what
/// is timed around it is the wrapper's work alone.
#[derive(Debug, Default)]
struct Keep {
    last: Arc<Mutex<Option<ChatRequest>>>,
}

impl Provider for Keep {
    fn stream(
        &self,
        req: ChatRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(req);
        Box::pin(async { Ok(Box::pin(futures::stream::empty()) as EventStream) })
    }

    fn profile_id(&self) -> &str {
        "openai"
    }
}

/// Hands `req` to `provider` `reps` times (a fresh copy each time, copied outside the timing);
/// microseconds per call, and the last request the inner provider kept.
async fn time_stream(
    provider: &dyn Provider,
    kept: &Arc<Mutex<Option<ChatRequest>>>,
    req: &ChatRequest,
    reps: usize,
) -> Result<(Vec<f64>, ChatRequest)> {
    let cancel = CancellationToken::new();
    let mut out = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        let copy = req.clone();
        let t = Instant::now();
        let stream = provider.stream(copy, cancel.clone()).await;
        out.push(us(t.elapsed()));
        drop(stream.map_err(|e| anyhow!("the provider failed: {e}"))?);
        // Dropped outside the timing: the turn keeps its request until the answer is in.
        last = kept.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
    Ok((
        out,
        last.ok_or_else(|| anyhow!("nothing reached the provider"))?,
    ))
}

/// Requests of a size redacted per figure: `base` of 1 KB, fewer of the larger ones (at least 20).
fn reps_for(base: usize, kb: usize) -> usize {
    (base / kb).max(20)
}

/// Measures and appends the redaction rows.
pub async fn run(plan: &CostPlan, r: &mut CostReport) -> Result<()> {
    let mut restore_vault: Option<(Arc<Session>, Vec<String>)> = None;
    for kb in [1usize, 10, 100] {
        for secrets in [false, true] {
            let Request {
                req,
                bytes,
                planted,
            } = corpus::request(kb, secrets);
            let size = bytes as f64 / 1024.0;
            let reps = reps_for(plan.redactions, kb);
            let (tx, mut rx) = mpsc::unbounded_channel::<ChatEvent>();
            let session = Session::new(Rules::default(), Some(tx));
            let keep = Keep::default();
            let kept = keep.last.clone();
            let wrapper = Redacting::new(Box::new(keep), session.clone());
            let (times, out) = time_stream(&wrapper, &kept, &req, reps).await?;
            while rx.try_recv().is_ok() {}
            check(&req, &out, &planted, &session)?;
            let label = if secrets {
                format!("redact {kb} KB, ~2 findings/KB")
            } else {
                format!("redact {kb} KB, nothing found")
            };
            let per_kb: Vec<f64> = times.iter().map(|t| t / size).collect();
            let whole = super::super::median(&times);
            let found: u32 = session.counts().values().sum();
            r.figures.push(figure(
                KEY,
                label,
                "us/KB",
                &per_kb,
                format!(
                    "{size:.1} KB per request, {whole:.0} us each (median); {found} values \
                     found"
                ),
            ));
            if kb == 10 && secrets {
                restore_vault = Some((session, planted));
            }
            if !secrets {
                // The same request to the bare provider: what a turn pays without redaction.
                let bare = Keep::default();
                let kept = bare.last.clone();
                let (times, _) = time_stream(&bare, &kept, &req, reps).await?;
                let per_kb: Vec<f64> = times.iter().map(|t| t / size).collect();
                r.figures.push(figure(
                    KEY,
                    format!("no redaction {kb} KB (the bare provider)"),
                    "us/KB",
                    &per_kb,
                    format!("{size:.1} KB per request"),
                ));
            }
        }
    }
    let (session, planted) =
        restore_vault.ok_or_else(|| anyhow!("the 10 KB request was not redacted"))?;
    restore(plan, r, &session, &planted)
}

/// Nothing planted reaches the provider; a clean request reaches it unchanged.
fn check(sent: &ChatRequest, got: &ChatRequest, planted: &[String], s: &Session) -> Result<()> {
    let wire = serde_json::to_string(got)?;
    if let Some(leak) = planted.iter().find(|v| wire.contains(v.as_str())) {
        bail!("a planted value reached the provider: {leak:?}");
    }
    if planted.is_empty() {
        ensure!(
            got == sent,
            "a request with nothing to find was changed: {:?}",
            s.counts()
        );
    } else {
        let found: u32 = s.counts().values().sum();
        ensure!(
            found as usize >= planted.len(),
            "{found} values found, {} planted",
            planted.len()
        );
    }
    Ok(())
}

/// Arguments as a model writes them in a redacted turn.
fn arguments(v: Value) -> Result<Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        _ => bail!("arguments must be an object"),
    }
}

/// The restore of a call's arguments, with three placeholders and with none.
fn restore(
    plan: &CostPlan,
    r: &mut CostReport,
    session: &Session,
    planted: &[String],
) -> Result<()> {
    // corpus: value 0 is an e-mail address, 2 an API key, 3 a URL's password.
    let with = arguments(json!({
        "to": "[REDACTED_EMAIL_1]",
        "subject": "Deploy of web-0 fixed",
        "body": "The cache key now includes the runner image; the build restores in 0.4 s \
                 again. Rotate the key [REDACTED_API_KEY_1] after the release, and move the \
                 database password [REDACTED_URL_PASSWORD_1] to the secret store.",
        "labels": ["deploy", "ci"],
    }))?;
    let without = arguments(json!({ "text": super::super::TEXT }))?;
    let (out, restored) = session.restore(&with);
    let body = out["body"].as_str().unwrap_or_default();
    ensure!(
        restored.len() == 3
            && out["to"] == planted[0].as_str()
            && body.contains(planted[2].as_str())
            && body.contains(planted[3].as_str()),
        "the placeholders were not restored: {restored:?}"
    );
    let n = plan.redactions.max(100) * 10;
    for (args, label) in [
        (&with, "restore: a call with 3 placeholders"),
        (&without, "restore: a call with none (echo)"),
    ] {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let out = session.restore(args);
            times.push(us(t.elapsed()));
            drop(out);
        }
        r.figures.push(figure(
            KEY,
            label,
            "us",
            &times,
            format!(
                "{} bytes of arguments, vault of the 10 KB request",
                serde_json::to_string(args)?.len()
            ),
        ));
    }
    Ok(())
}
