//! The person's policy asked about every step of a pipeline before anything runs (issue 15,
//! point 6): a step the policy would refuse is found before the whole-pipeline question, not
//! mid-run after earlier steps (perhaps writes) have run.
//!
//! Each step is decided as the seam decides a call ([`Host::decide_call`]: the same rules,
//! grants, server tags, limits' counts and data flow), as the run's origin, on the arguments
//! known before the run: literals and inputs. Nothing is sent and no rule hit is counted.
//!
//! An argument mapped from an earlier step's result (`$from`) is unknown until that step ran.
//! It is decided as a value no condition can read (JSON `null`): a condition on it cannot be
//! evaluated, and the policy fails closed on such a condition (a deny rule denies). So a deny
//! rule that *could* refuse the step, depending on what an earlier step returns, refuses the
//! whole run up front, naming the argument; a deny rule whose conditions on the known
//! arguments already rule it out does not. (A condition over "every path-like argument"
//! sees only the known values; unknown ones could only make it hold less, so it errs the
//! same way.) The way out is to give that argument as an input or a fixed value, or to
//! narrow the rule.
//!
//! The same decisions say which steps will still ask a person when they run, though the
//! pipeline is approved as a whole: a step a rule asks about, one under a warning, one its
//! caller tightened to ask, and one that may write (the approval covers only the policy's
//! default question about a call that does not write; `Host::approved_with`). The question
//! lists them, so nobody approves a run believing it will go through alone and then meets, or
//! declines, a question halfway. An ask rule that reads an argument known only during the run
//! counts as asking (the same fail-closed reading as a deny rule).
//!
//! An allow rule with a limit is decided on its count plus the earlier steps it allows in this
//! run, so a run whose steps together would exceed it is refused up front, not at the step
//! that crosses it. What this cannot see is a policy (or another caller's use of a limit) that
//! changes while the run is under way, the data flow a model's run builds step by step (an
//! earlier step's server can set off the trifecta guard, so a later step asks with its
//! warning), and an allow rule whose conditions read an argument known only mid-run (decided
//! on the known ones, and not counted against its limit). The seam decides every step again
//! when it runs, so those ask or stop the run there; the question's list says "expected".

use serde_json::{Map, Value};

use super::{Host, HostError};
use crate::approval::{Call, Claims, Condition, Decision, Origin, RequestKind, Rule};
use crate::ids::ToolRef;
use crate::mcp::catalog::ToolInfo;
use crate::pipeline_data::{ArgSource, Pipeline, Plan};
use crate::pipelines::{Preview, StepAsks, StepRefusal};

/// What the policy sees of a step before the run: the arguments known now, every one mapped
/// from an earlier step as `null`, and the names of those.
fn known_arguments(step: &crate::pipeline_data::Step, inputs: &Map<String, Value>) -> Known {
    let mut arguments = Map::new();
    let mut unknown = Vec::new();
    // `check` already refused a step whose sources do not read; nothing to decide then.
    for (name, source) in step.sources().unwrap_or_default() {
        let value = match source {
            ArgSource::Literal(v) => v,
            ArgSource::Input(n) => inputs.get(&n).cloned().unwrap_or(Value::Null),
            ArgSource::From { .. } => {
                unknown.push(name.to_owned());
                Value::Null
            }
        };
        arguments.insert(name.to_owned(), value);
    }
    Known { arguments, unknown }
}

struct Known {
    arguments: Map<String, Value>,
    unknown: Vec<String>,
}

/// What a server claims about a tool, as the seam reads it (`host::run`).
fn claims(info: Option<&ToolInfo>) -> Claims {
    let a = info.and_then(|t| t.annotations.as_ref());
    Claims {
        read_only: a.and_then(|a| a.read_only_hint) == Some(true),
        open_world: a.and_then(|a| a.open_world_hint) == Some(true),
    }
}

/// The arguments among `unknown` that `rule`'s conditions read.
fn depends_on(rule: &Rule, unknown: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &rule.when {
        let read: Vec<&String> = match c {
            // Over every path- or URL-like argument: any unknown one may be such.
            Condition::PathUnder { arg: None, .. } | Condition::DomainIn { arg: None, .. } => {
                unknown.iter().collect()
            }
            Condition::PathUnder { arg: Some(a), .. }
            | Condition::DomainIn { arg: Some(a), .. }
            | Condition::SqlOnly { arg: a, .. }
            | Condition::Matches { arg: a, .. } => unknown.iter().filter(|u| *u == a).collect(),
            Condition::ReadOnlyHint | Condition::Writes => Vec::new(),
        };
        for a in read {
            if !out.contains(a) {
                out.push(a.clone());
            }
        }
    }
    out
}

impl Host {
    /// What the person's policy says of `p`'s steps (checked into `plan`) when run as
    /// `origin` with `inputs`, its caller asking about the steps in `tightened`: the first
    /// step it would refuse (or could, depending on an earlier step's result), and the steps
    /// that will still ask. Sends nothing.
    pub(in crate::host) async fn policy_preview(
        &self,
        p: &Pipeline,
        plan: &Plan,
        inputs: &Map<String, Value>,
        origin: &Origin,
        tightened: &std::collections::HashMap<String, String>,
    ) -> Result<Preview, HostError> {
        let mut preview = Preview::default();
        let rules = self.policy_rules().await?;
        // The effect of rule `id`, and the arguments known only mid-run its conditions read.
        let reads = |id: &str, unknown: &[String]| {
            rules
                .iter()
                .find(|r| r.id == id)
                .map(|r| (r.effect, depends_on(r, unknown)))
        };
        // The limited allow rules' hits the earlier steps will add.
        let mut pending: std::collections::HashMap<String, u32> = Default::default();
        for (step, planned) in p.steps.iter().zip(&plan.steps) {
            let tool = ToolRef {
                server: planned.server.clone(),
                tool: planned.tool.as_str().into(),
            };
            let catalog = self.handle(&tool.server).map(|h| h.catalog());
            let info = catalog
                .as_ref()
                .and_then(|c| c.tools.iter().find(|t| t.name == *tool.tool));
            let known = known_arguments(step, inputs);
            let call = Call {
                server: &tool.server,
                kind: RequestKind::Tool,
                name: &tool.tool,
                origin,
                arguments: &known.arguments,
                claims: claims(info),
            };
            let index = u32::try_from(planned.index).unwrap_or(u32::MAX);
            let (decision, limited) = self.decide_call_counting(&call, info, &pending).await?;
            if let (Decision::Allow { by }, true) = (&decision, limited) {
                // Counted only when the rule's conditions do not read an argument known only
                // mid-run: such a step may well not be allowed by it then, and counting it
                // could refuse a later step for nothing.
                let certain = by
                    .id()
                    .and_then(|id| reads(id, &known.unknown))
                    .is_some_and(|(_, read)| read.is_empty());
                if let (Some(id), true) = (by.id(), certain) {
                    *pending.entry(id.to_owned()).or_default() += 1;
                }
            }
            let (reason, rule) = match decision {
                Decision::Deny { reason, rule } => {
                    let earlier = rule.as_ref().and_then(|r| pending.get(r)).copied();
                    let reason = match earlier {
                        Some(n) => format!(
                            "{reason} (counting the {n} earlier {} of this run it allows)",
                            if n == 1 { "step" } else { "steps" }
                        ),
                        None => reason,
                    };
                    (reason, rule)
                }
                decision => {
                    let why = match (tightened.get(&step.id), decision) {
                        (Some(why), _) => Some(format!("its caller asks about it: {why}")),
                        // First: a warning's ask names the allow rule it overrides.
                        (
                            None,
                            Decision::Ask {
                                warning: Some(w), ..
                            },
                        ) => Some(w),
                        (None, Decision::Ask { rule: Some(r), .. }) => {
                            Some(format!("the policy rule {r:?} asks about it"))
                        }
                        (None, Decision::Ask { .. }) => self
                            .may_write(&tool, info)
                            .await?
                            .then(|| "it may write".to_owned()),
                        (None, _) => None,
                    };
                    if let Some(why) = why {
                        preview.asks.push(StepAsks {
                            step: index,
                            id: step.id.clone(),
                            tool: step.tool.clone(),
                            why,
                        });
                    }
                    continue;
                }
            };
            // A deny rule that reads an unknown argument *may* deny; an allow rule's spent limit
            // does not depend on the arguments.
            let depends = match rule.as_deref().and_then(|id| reads(id, &known.unknown)) {
                Some((crate::approval::Effect::Deny, read)) => read,
                _ => Vec::new(),
            };
            preview.refusal = Some(StepRefusal {
                step: index,
                id: step.id.clone(),
                tool: step.tool.clone(),
                reason: match (&rule, depends.is_empty()) {
                    // The policy's own words say it could not check the conditions; say why.
                    (Some(id), false) => format!("the policy rule {id:?} may deny it"),
                    _ => reason,
                },
                rule,
                depends_on: depends,
            });
            break;
        }
        Ok(preview)
    }

    /// Whether a call of `tool` counts as writing, as the seam reads it for a pipeline's
    /// approval: unless its server is tagged trusted and claims it read-only.
    pub(in crate::host) async fn may_write(
        &self,
        tool: &ToolRef,
        info: Option<&ToolInfo>,
    ) -> Result<bool, HostError> {
        let tags = self.inner.store.server_tags(&tool.server).await?;
        let trusted = tags.contains(&crate::store::ServerTag::Trusted);
        Ok(crate::approval::policy::writes(claims(info), trusted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::{Effect, On, Source};

    fn rule(when: Vec<Condition>) -> Rule {
        Rule {
            id: "r".into(),
            effect: Effect::Deny,
            server: "*".into(),
            on: On::Tool,
            tool: "*".into(),
            origin: None,
            when,
            limit: None,
            note: None,
            source: Source::User,
        }
    }

    #[test]
    fn a_rule_depends_on_the_unknown_arguments_its_conditions_read() {
        let unknown = vec!["path".to_owned(), "sql".to_owned()];
        let named = rule(vec![
            Condition::PathUnder {
                arg: Some("path".into()),
                prefixes: vec!["/etc".into()],
            },
            Condition::Matches {
                arg: "name".into(),
                pattern: "x".into(),
            },
        ]);
        assert_eq!(depends_on(&named, &unknown), ["path"]);
        let any_path = rule(vec![Condition::PathUnder {
            arg: None,
            prefixes: vec!["/etc".into()],
        }]);
        assert_eq!(depends_on(&any_path, &unknown), ["path", "sql"]);
        assert!(depends_on(&rule(vec![Condition::Writes]), &unknown).is_empty());
        assert!(depends_on(&named, &[]).is_empty());
    }
}
