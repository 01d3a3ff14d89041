//! Table tests for [`decide`] on an MCP App's requests (AP-10): grants given to the person or
//! to a model do not cover an app, an app's grant covers only that app, rules limited to another
//! origin allow no app but still tighten, and the trifecta guard counts an app's calls.

use serde_json::{Map, Value};

use super::*;
use crate::approval::rules::{On, Rule, Source};
use crate::approval::AppRef;
use crate::ids::ServerId;

fn conv() -> ConversationId {
    ConversationId::parse("00000000-0000-4000-8000-000000000001").unwrap()
}

fn app_ref(uri: &str) -> AppRef {
    AppRef {
        server: ServerId::new("weather").unwrap(),
        uri: uri.into(),
    }
}

fn app(uri: &str) -> Origin {
    Origin::App {
        app: app_ref(uri),
        conversation: Some(conv()),
        agent: None,
    }
}

fn rule(id: &str, effect: Effect, origin: Option<&str>, source: Source) -> Rule {
    Rule {
        id: id.into(),
        effect,
        server: "weather".into(),
        tool: "refresh".into(),
        on: On::Tool,
        origin: origin.map(Into::into),
        when: Vec::new(),
        limit: None,
        note: None,
        source,
    }
}

fn grant(agent: Option<&str>, app: Option<&str>) -> Source {
    Source::Grant {
        conversation: None,
        tool_digest: "d1".into(),
        agent: agent.map(Into::into),
        app: app.map(Into::into),
    }
}

fn verdict(rules: &[Rule], origin: &Origin, ctx: &Context<'_>) -> &'static str {
    let server = ServerId::new("weather").unwrap();
    let a: Map<String, Value> = Map::new();
    match decide(
        &Policy {
            rules: rules.to_vec(),
        },
        &Call {
            server: &server,
            kind: RequestKind::Tool,
            name: "refresh",
            origin,
            arguments: &a,
            claims: Claims::default(),
        },
        ctx,
    ) {
        Decision::Allow { .. } => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { .. } => "deny",
    }
}

fn digest() -> Context<'static> {
    Context {
        tool_digest: Some("d1"),
        ..Context::default()
    }
}

/// AP-10: a grant answered to the person's run or to the chat model (or an agent) covers no
/// app; one answered to an app covers that app and nothing else.
#[test]
fn grants_cover_an_app_only_when_given_to_that_app() {
    let view = "ui://weather/view.html";
    let person_or_model = rule("g1", Effect::Allow, None, grant(None, None));
    let to_agent = rule("g2", Effect::Allow, None, grant(Some("researcher"), None));
    let to_app = rule("g3", Effect::Allow, None, grant(None, Some(view)));
    let ctx = digest();
    for (r, origin, want) in [
        (&person_or_model, app(view), "ask"),
        (&person_or_model, Origin::model(conv()), "allow"),
        (&person_or_model, Origin::Manual, "allow"),
        (&to_agent, app(view), "ask"),
        (&to_app, app(view), "allow"),
        (&to_app, app("ui://weather/other.html"), "ask"),
        (&to_app, Origin::model(conv()), "ask"),
        (&to_app, Origin::Manual, "ask"),
    ] {
        assert_eq!(
            verdict(std::slice::from_ref(r), &origin, &ctx),
            want,
            "{r:?} for {origin:?}"
        );
    }
}

/// AP-10: a rule limited to the person's runs or to models allows no app; limited to `app` it
/// does; a deny or ask rule limited to another origin still applies to an app.
#[test]
fn rules_for_other_origins_allow_no_app_but_still_tighten() {
    let view = app("ui://weather/view.html");
    let ctx = Context::default();
    for (effect, origin, want) in [
        (Effect::Allow, None, "allow"),
        (Effect::Allow, Some("manual"), "ask"),
        (Effect::Allow, Some("model"), "ask"),
        (Effect::Allow, Some("app"), "allow"),
        (Effect::Deny, Some("model"), "deny"),
        (Effect::Deny, Some("manual"), "deny"),
        (Effect::Deny, Some("app"), "deny"),
    ] {
        let r = rule("r", effect, origin, Source::User);
        assert_eq!(verdict(&[r], &view, &ctx), want, "{effect:?} {origin:?}");
    }
    // And an `app` rule is about apps only.
    let r = rule("r", Effect::Deny, Some("app"), Source::User);
    assert_eq!(verdict(&[r], &Origin::model(conv()), &ctx), "ask");
}

/// AP-10 with AP-04: an app in a conversation that read private data and took in untrusted
/// content is asked about a call that can send data out, even under an allow rule.
#[test]
fn the_trifecta_guard_counts_an_apps_calls() {
    let ctx = Context {
        flow: Flow {
            private_read: true,
            untrusted_ingested: true,
        },
        can_exfiltrate: true,
        ..Context::default()
    };
    let allow = rule("r", Effect::Allow, Some("app"), Source::User);
    assert_eq!(
        verdict(&[allow], &app("ui://weather/view.html"), &ctx),
        "ask"
    );
}

#[test]
fn an_app_is_not_a_person_and_its_reads_are_asked_about() {
    let view = app("ui://weather/view.html");
    assert!(!view.is_person());
    assert_eq!(view.word(), "app");
    assert_eq!(view.conversation(), Some(&conv()));
    let server = ServerId::new("weather").unwrap();
    let a: Map<String, Value> = Map::new();
    let d = decide(
        &Policy::default(),
        &Call {
            server: &server,
            kind: RequestKind::Resource,
            name: "ui://weather/data",
            origin: &view,
            arguments: &a,
            claims: Claims::default(),
        },
        &Context::default(),
    );
    assert!(matches!(d, Decision::Ask { .. }), "{d:?}");
}
