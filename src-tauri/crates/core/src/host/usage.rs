//! Tokens and estimated cost per conversation.
//!
//! Tokens come from the store: every answer that reported usage (superseded ones included:
//! they were paid for), plus what agents spent on tasks for the conversation (issue 15, point
//! 5): a delegated sub-agent's model calls are stored only in its run-tree node
//! ([`crate::agents::NODE_TASK`]). Nodes of agents answering in the conversation
//! ([`crate::agents::NODE_TURN`]) are not added: their calls are the answers already counted.
//! Cost is the list price of each model ([`crate::llm::limits`]) times its tokens; a model
//! without a known price leaves the total marked incomplete rather than guessed.

use serde::Serialize;

use super::{Host, HostError};
use crate::agents::AgentRunNode;
use crate::ids::ConversationId;
use crate::llm::limits;
use crate::llm::Usage;
use crate::store::ModelUsage;

/// One model's share.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelCost {
    /// The provider's name, when the answers recorded one.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// Its tokens.
    pub usage: Usage,
    /// Estimated dollars; `None` when the model's price is unknown.
    pub cost_usd: Option<f64>,
}

/// A conversation's tokens and estimated cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    /// All models together.
    pub total: Usage,
    /// The sum of the known costs.
    pub cost_usd: f64,
    /// Whether every model's price was known (else `cost_usd` is a lower bound).
    pub cost_complete: bool,
    /// Per provider and model (answers and tasks together).
    pub by_model: Vec<ModelCost>,
    /// Of `total`, what agents spent on tasks for the conversation (delegated sub-agents),
    /// counted from the run tree.
    pub tasks: Usage,
}

/// `tasks`' tokens added to `by_model` (per provider and model, kept in that order); returns
/// their sum.
fn add_tasks(by_model: &mut Vec<ModelUsage>, tasks: &[AgentRunNode]) -> Usage {
    let mut sum = Usage::default();
    for n in tasks {
        let usage = Usage {
            input_tokens: n.usage_input,
            output_tokens: n.usage_output,
            cached_input_tokens: 0,
        };
        sum.add(usage);
        let same = |m: &&mut ModelUsage| {
            m.provider.as_deref() == Some(n.provider.as_str())
                && m.model.as_deref() == Some(n.model.as_str())
        };
        match by_model.iter_mut().find(same) {
            Some(m) => m.usage.add(usage),
            None => by_model.push(ModelUsage {
                provider: Some(n.provider.clone()),
                model: Some(n.model.clone()),
                usage,
                answers: 0,
            }),
        }
    }
    by_model.sort_by(|a, b| (&a.provider, &a.model).cmp(&(&b.provider, &b.model)));
    sum
}

impl Host {
    /// Tokens and estimated cost of a conversation.
    pub async fn conversation_usage(&self, id: &ConversationId) -> Result<CostReport, HostError> {
        let mut totals = self.inner.store.usage_totals(id).await?;
        let nodes = self.inner.features.agents.task_runs(id).await?;
        let tasks = add_tasks(&mut totals.by_model, &nodes);
        totals.total.add(tasks);
        let providers = self.inner.features.models.records().await?;
        let mut cost_usd = 0.0;
        let mut cost_complete = true;
        let by_model = totals
            .by_model
            .into_iter()
            .map(|m| {
                let profile = m
                    .provider
                    .as_deref()
                    .and_then(|p| providers.iter().find(|r| r.name.as_str() == p))
                    .map_or("", |r| r.profile.as_str());
                let cost = m.model.as_deref().and_then(|model| {
                    limits::price(profile, model)
                        .map(|p| p.cost(m.usage.input_tokens, m.usage.output_tokens))
                });
                match cost {
                    Some(c) => cost_usd += c,
                    None => cost_complete = false,
                }
                ModelCost {
                    provider: m.provider,
                    model: m.model,
                    usage: m.usage,
                    cost_usd: cost,
                }
            })
            .collect();
        Ok(CostReport {
            total: totals.total,
            cost_usd,
            cost_complete,
            by_model,
            tasks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(provider: &str, model: &str, input: u64, output: u64) -> AgentRunNode {
        AgentRunNode {
            node: "n".into(),
            run: "r".into(),
            parent: Some("p".into()),
            conversation: "c".into(),
            agent: "a".into(),
            task: "t".into(),
            provider: provider.into(),
            model: model.into(),
            status: "done".into(),
            reason: None,
            usage_input: input,
            usage_output: output,
            cost_usd: None,
            tool_calls: 0,
            started_ms: 0,
            ended_ms: Some(1),
        }
    }

    #[test]
    fn tasks_join_their_model_or_add_one_and_are_summed() {
        let answered = |input| ModelUsage {
            provider: Some("oa".into()),
            model: Some("gpt-4o".into()),
            usage: Usage {
                input_tokens: input,
                output_tokens: 1,
                cached_input_tokens: 0,
            },
            answers: 1,
        };
        let mut by_model = vec![answered(100)];
        let sum = add_tasks(
            &mut by_model,
            &[task("oa", "gpt-4o", 10, 2), task("an", "haiku", 5, 3)],
        );
        assert_eq!((sum.input_tokens, sum.output_tokens), (15, 5));
        assert_eq!(by_model.len(), 2);
        assert_eq!(by_model[0].provider.as_deref(), Some("an"));
        assert_eq!(
            (by_model[0].usage.input_tokens, by_model[0].answers),
            (5, 0)
        );
        assert_eq!(
            (
                by_model[1].usage.input_tokens,
                by_model[1].usage.output_tokens
            ),
            (110, 3)
        );
    }
}
