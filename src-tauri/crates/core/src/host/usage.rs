//! Tokens and estimated cost per conversation.
//!
//! Tokens come from the store (every answer that reported usage, superseded ones included:
//! they were paid for). Cost is the list price of each model ([`crate::llm::limits`]) times its
//! tokens; a model without a known price leaves the total marked incomplete rather than
//! guessed.

use serde::Serialize;

use super::{Host, HostError};
use crate::ids::ConversationId;
use crate::llm::limits;
use crate::llm::Usage;

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
    /// Per provider and model.
    pub by_model: Vec<ModelCost>,
}

impl Host {
    /// Tokens and estimated cost of a conversation.
    pub async fn conversation_usage(&self, id: &ConversationId) -> Result<CostReport, HostError> {
        let totals = self.inner.store.usage_totals(id).await?;
        let providers = self.inner.store.list_providers().await?;
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
        })
    }
}
