//! The `chat_turn` span: one per turn, naming the conversation, the provider and the model,
//! around everything the turn does, and never carrying what was said.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use super::*;
use crate::ids::{ConversationId, ProviderName};

/// One span as opened and recorded: its name and each field's value as text.
#[derive(Clone, Debug, Default, PartialEq)]
struct Seen {
    name: String,
    fields: BTreeMap<String, String>,
}

/// Everything captured: spans by id, and for each event the name of the span it happened in.
#[derive(Clone, Default)]
struct Capture {
    spans: Arc<Mutex<Vec<(u64, Seen)>>>,
    events_in: Arc<Mutex<Vec<Option<String>>>>,
}

impl Capture {
    fn turn_spans(&self) -> Vec<Seen> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, s)| s.name == "chat_turn")
            .map(|(_, s)| s.clone())
            .collect()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        let mut seen = Seen {
            name: attrs.metadata().name().to_owned(),
            fields: BTreeMap::new(),
        };
        attrs.record(&mut Fields(&mut seen.fields));
        self.spans.lock().unwrap().push((id.into_u64(), seen));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some((_, seen)) = spans.iter_mut().find(|(i, _)| *i == id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let span = ctx.event_span(event).map(|s| s.name().to_owned());
        self.events_in.lock().unwrap().push(span);
    }
}

/// A provider that logs while it is asked, so the test sees which span its work runs in.
#[derive(Debug)]
struct Logging(Scripted);

impl Provider for Logging {
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        tracing::info!(messages = req.messages.len(), "asked");
        self.0.stream(req, cancel)
    }

    fn profile_id(&self) -> &str {
        self.0.profile_id()
    }
}

/// Runs one turn with `cfg` on "the launch code is 0000" under a capturing subscriber.
async fn traced_turn(cfg: &TurnConfig) -> Capture {
    let capture = Capture::default();
    let _guard = tracing_subscriber::registry()
        .with(capture.clone())
        .set_default();
    let provider = Logging(Scripted::new(vec![vec![
        text("the answer is 4242"),
        done(StopReason::EndTurn),
    ]]));
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut transcript = vec![Message::user_text("the launch code is 0000")];
    let end = run_turn(
        &provider,
        &runner(),
        &mut Outputs::default(),
        cfg,
        &mut transcript,
        CancellationToken::new(),
        tx,
    )
    .await;
    assert_eq!(end, TurnEnd::Done(StopReason::EndTurn));
    capture
}

#[tokio::test]
async fn a_turn_runs_in_one_span_naming_conversation_provider_and_model_only() {
    let conversation = ConversationId::random();
    let mut cfg = TurnConfig::new("model-7");
    cfg.conversation = Some(conversation.clone());
    cfg.provider = Some(ProviderName::new("work").unwrap());
    let capture = traced_turn(&cfg).await;

    let spans = capture.turn_spans();
    assert_eq!(spans.len(), 1, "{spans:?}");
    let expected: BTreeMap<String, String> = [
        ("conversation", conversation.as_str()),
        ("provider", "work"),
        ("model", "model-7"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    // Exactly these fields: nothing the person or the model said rides along.
    assert_eq!(spans[0].fields, expected);
    // The provider was asked inside the turn's span.
    assert_eq!(
        *capture.events_in.lock().unwrap(),
        vec![Some("chat_turn".to_owned())]
    );
}

#[tokio::test]
async fn without_a_configured_name_the_span_names_the_providers_profile() {
    let capture = traced_turn(&TurnConfig::new("m")).await;
    let spans = capture.turn_spans();
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(
        spans[0].fields.get("provider").map(String::as_str),
        Some("scripted")
    );
    assert_eq!(spans[0].fields.get("model").map(String::as_str), Some("m"));
    assert!(!spans[0].fields.contains_key("conversation"), "{spans:?}");
}
