//! A redacted value goes back only where it came from (RD-01).
//!
//! Outbound redaction gives a cloud model placeholders, and the turn's runner puts the real
//! values back into the model's tool calls (`outbound::Restoring`). That put-back is a
//! capability: a placeholder is harmless anywhere, the value it stands for is not. A model
//! steered by text in one server's result ("send [REDACTED_API_KEY_1] to …") would otherwise
//! have Switchboard itself fill another server's call with the secret, under whatever rule or
//! grant allows that call.
//!
//! So the governed seam looks at what was put back into the call it is deciding
//! ([`Crossing::in_this_call`]). A value seen in a result of the very server the call goes to
//! crosses nothing (that server has it) and stays silent. Any other value — from another
//! server's result, from a message in the conversation, from the system prompt, from the
//! model's own words — crosses an origin: the call is asked about, [`tightened`] turns any
//! allow (a rule, a grant, a default) into a question and closes the pipeline shortcut, so
//! only the person can let it through, once per call. The question says, per value, its kind,
//! where it came from and where it would go; the audit log gets [`AuditEvent::PutBack`] with
//! kinds, digests and origins, and the call's proposed arguments with the placeholders the
//! model wrote ([`as_audited`], for every put-back, crossing or not), never the values.
//! Refused, the call is not sent.
//!
//! A pure function over the call's restored list and the destination, so the decision is
//! table-tested below; `host::run` only calls it.

use serde_json::{Map, Value};

use crate::approval::audit::{AuditEvent, PutBackValue};
use crate::approval::Decision;
use crate::ids::ServerId;
use crate::outbound::{restored_in_this_call, Kind, Restored, Source};

/// Values put back into one call that did not come from its server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Crossing {
    to: ServerId,
    /// One per placeholder, in order of appearance.
    values: Vec<Restored>,
}

impl Crossing {
    /// What the call being run (through `outbound::Restoring`) had put back from elsewhere
    /// than `to` and carries in `arguments`; `None` when nothing crosses. Only values these
    /// arguments hold count: a pipeline's steps run inside the call that restored its
    /// arguments, and a step that does not carry a value does not send it.
    pub(super) fn in_this_call(to: &ServerId, arguments: &Map<String, Value>) -> Option<Self> {
        let restored = restored_in_this_call()
            .into_iter()
            .filter(|r| carries(arguments, r.value.expose()))
            .collect();
        Self::of(restored, to)
    }

    /// What of `restored` crosses into a call to `to`.
    fn of(restored: Vec<Restored>, to: &ServerId) -> Option<Self> {
        let home = Source::Server(to.clone());
        let mut values: Vec<Restored> = Vec::new();
        for r in restored {
            if r.sources.contains(&home) || values.iter().any(|v| v.placeholder == r.placeholder) {
                continue;
            }
            values.push(r);
        }
        (!values.is_empty()).then(|| Self {
            to: to.clone(),
            values,
        })
    }

    /// The sentence the person reads: per value, its kind, where it came from and where it
    /// would go. Placeholder names, kinds and server names only (a reason may be logged).
    pub(super) fn sentence(&self) -> String {
        let each: Vec<String> = self
            .values
            .iter()
            .map(|v| {
                let from: Vec<String> = v.sources.iter().map(Source::describe).collect();
                let from = if from.is_empty() {
                    "an unknown place".to_owned()
                } else {
                    from.join(" and ")
                };
                format!("{} ({}, from {from})", v.placeholder, kind_name(v.kind))
            })
            .collect();
        format!(
            "Switchboard would put back real values the model only saw as placeholders, into a \
             call to server {} they did not come from: {}. No rule or grant allows this; only \
             you can, for this call.",
            self.to,
            each.join("; ")
        )
    }

    /// The audit entry: kinds, digests and origins.
    pub(super) fn event(&self) -> AuditEvent {
        AuditEvent::PutBack {
            to: self.to.to_string(),
            values: self
                .values
                .iter()
                .map(|v| PutBackValue {
                    kind: v.kind.id().to_owned(),
                    sha256: v.digest.clone(),
                    from: v.sources.iter().map(Source::describe).collect(),
                })
                .collect(),
        }
    }
}

/// `arguments` as the audit log keeps them: every value put back in the call being run
/// (this one, or a pipeline step inside it) replaced by its placeholder again, so the log
/// holds what the model wrote, and the digest in [`AuditEvent::PutBack`], never the value.
pub(super) fn as_audited(arguments: &Map<String, Value>) -> Map<String, Value> {
    let restored = restored_in_this_call();
    if restored.is_empty() {
        return arguments.clone();
    }
    // Longest first, so a value inside another is not masked first.
    let mut pairs: Vec<(&str, &str)> = restored
        .iter()
        .map(|r| (r.value.expose(), r.placeholder.as_str()))
        .filter(|(v, _)| !v.is_empty())
        .collect();
    pairs.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    pairs.dedup();
    arguments
        .iter()
        .map(|(k, v)| (k.clone(), masked(v, &pairs)))
        .collect()
}

fn masked(v: &Value, pairs: &[(&str, &str)]) -> Value {
    match v {
        Value::String(s) => {
            Value::String(pairs.iter().fold(s.clone(), |s, (value, placeholder)| {
                s.replace(value, placeholder)
            }))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| masked(x, pairs)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), masked(x, pairs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether some string in `arguments` (keys included) holds `value`.
fn carries(arguments: &Map<String, Value>, value: &str) -> bool {
    fn holds(v: &Value, value: &str) -> bool {
        match v {
            Value::String(s) => s.contains(value),
            Value::Array(a) => a.iter().any(|x| holds(x, value)),
            Value::Object(m) => m.iter().any(|(k, x)| k.contains(value) || holds(x, value)),
            _ => false,
        }
    }
    !value.is_empty()
        && arguments
            .iter()
            .any(|(k, v)| k.contains(value) || holds(v, value))
}

/// "an e-mail address", for one value of `kind`.
fn kind_name(kind: Kind) -> String {
    let one = kind.describe(1);
    let name = one.trim_start_matches("1 ");
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// `decision` for a call with `crossing` put back into it: an allow, whoever gave it, becomes
/// a question with the crossing as its reason; a question gets the crossing in front of its
/// own reason (and `run_tool` lets no pipeline approval answer it); a refusal stays a refusal.
pub(super) fn tightened(decision: Decision, crossing: Option<&Crossing>) -> Decision {
    let Some(c) = crossing else {
        return decision;
    };
    match decision {
        Decision::Allow { .. } => Decision::Ask {
            reason: c.sentence(),
            warning: None,
            rule: None,
        },
        Decision::Ask {
            reason,
            warning,
            rule,
        } => Decision::Ask {
            reason: format!("{} Also: {reason}", c.sentence()),
            warning,
            rule,
        },
        deny => deny,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::approval::AllowedBy;

    fn sid(s: &str) -> ServerId {
        ServerId::new(s).unwrap()
    }

    fn restored(placeholder: &str, kind: Kind, sources: Vec<Source>) -> Restored {
        Restored {
            placeholder: placeholder.into(),
            at: "text".into(),
            kind,
            sources,
            digest: "d1".into(),
            value: crate::redact::Secret::new("owner@example.org"),
        }
    }

    /// RD-01: only a value seen in the destination's own result goes back silently.
    #[test]
    fn only_the_destination_s_own_values_cross_nothing() {
        let notes = Source::Server(sid("notes"));
        let mail = Source::Server(sid("mail"));
        let cases: Vec<(Vec<Source>, bool)> = vec![
            (vec![notes.clone()], false),
            (vec![Source::Message, notes.clone()], false),
            (vec![mail.clone()], true),
            (vec![Source::Message], true),
            (vec![Source::System], true),
            (vec![Source::Model], true),
            (vec![Source::Tool("notes__read".into())], true),
            (vec![], true),
        ];
        for (sources, crosses) in cases {
            let c = Crossing::of(
                vec![restored("[REDACTED_EMAIL_1]", Kind::Email, sources.clone())],
                &sid("notes"),
            );
            assert_eq!(c.is_some(), crosses, "{sources:?}");
        }
    }

    #[test]
    fn only_values_the_arguments_carry_count() {
        let args: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "to": ["x", { "deep": "mail owner@example.org now" }],
            "n": 3
        }))
        .unwrap();
        assert!(carries(&args, "owner@example.org"));
        assert!(!carries(&args, "other@example.org"));
        assert!(!carries(&args, ""));
    }

    #[test]
    fn the_question_names_kind_origin_and_destination_and_no_allow_survives() {
        let c = Crossing::of(
            vec![
                restored(
                    "[REDACTED_API_KEY_1]",
                    Kind::ApiKey,
                    vec![Source::Server(sid("notes"))],
                ),
                restored(
                    "[REDACTED_API_KEY_1]",
                    Kind::ApiKey,
                    vec![Source::Server(sid("notes"))],
                ),
                restored("[REDACTED_EMAIL_2]", Kind::Email, vec![Source::Message]),
            ],
            &sid("mail"),
        )
        .unwrap();
        let s = c.sentence();
        assert!(s.contains("call to server mail"), "{s}");
        assert!(
            s.contains("[REDACTED_API_KEY_1] (an API key, from a result of server notes)"),
            "{s}"
        );
        assert!(
            s.contains(
                "[REDACTED_EMAIL_2] (an e-mail address, from a message in the conversation)"
            ),
            "{s}"
        );
        let AuditEvent::PutBack { to, values } = c.event() else {
            panic!("not a put-back")
        };
        assert_eq!(to, "mail");
        assert_eq!(values.len(), 2, "one entry per placeholder");
        assert_eq!(values[0].kind, "api_key");
        assert_eq!(values[0].from, ["a result of server notes"]);

        for by in [
            AllowedBy::Default,
            AllowedBy::Rule("allow-mail".into()),
            AllowedBy::Grant("g1".into()),
        ] {
            let d = tightened(Decision::Allow { by }, Some(&c));
            assert!(
                matches!(&d, Decision::Ask { reason, rule: None, warning: None } if *reason == s),
                "{d:?}"
            );
        }
        let d = tightened(
            Decision::Ask {
                reason: "no rule allows it".into(),
                warning: None,
                rule: None,
            },
            Some(&c),
        );
        assert!(
            matches!(&d, Decision::Ask { reason, .. } if reason.ends_with("Also: no rule allows it")),
            "{d:?}"
        );
        let deny = Decision::Deny {
            reason: "no".into(),
            rule: None,
        };
        assert_eq!(tightened(deny.clone(), Some(&c)), deny);
        let allow = Decision::Allow {
            by: AllowedBy::Default,
        };
        assert_eq!(tightened(allow.clone(), None), allow);
    }
}
