//! A provider that sends the models a person chose through the prompt-based tool mode.
//!
//! One configured provider (an Ollama, say) serves many models, some with native tools and
//! some without; the tool mode is therefore a property of the model, not of the provider. This
//! wrapper holds the provider twice, as built natively and as wrapped in
//! [`PromptToolProvider`](crate::llm::prompt_tools::PromptToolProvider), and picks per request
//! by the request's model id. A model not named takes the native path, as before.

use std::collections::BTreeSet;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::llm::error::LlmError;
use crate::llm::provider::{EventStream, Provider};
use crate::llm::types::ChatRequest;

/// Native for most models, prompt-based tools for the named ones.
#[derive(Debug)]
pub struct ModelRouted {
    native: Box<dyn Provider>,
    prompt: Box<dyn Provider>,
    prompt_models: BTreeSet<String>,
}

impl ModelRouted {
    /// `native` and `prompt` are the same provider built in each tool mode.
    pub fn new(
        native: Box<dyn Provider>,
        prompt: Box<dyn Provider>,
        prompt_models: BTreeSet<String>,
    ) -> Self {
        Self {
            native,
            prompt,
            prompt_models,
        }
    }

    /// Whether `model` goes through the prompt-based mode.
    pub fn uses_prompt(&self, model: &str) -> bool {
        self.prompt_models.contains(model)
    }
}

impl Provider for ModelRouted {
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        if self.uses_prompt(&req.model) {
            self.prompt.stream(req, cancel)
        } else {
            self.native.stream(req, cancel)
        }
    }

    fn profile_id(&self) -> &str {
        self.native.profile_id()
    }
}
