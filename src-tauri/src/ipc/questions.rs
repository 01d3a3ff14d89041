//! What servers ask the person (AP-07 elicitation, AP-08 sampling) and tool results held for
//! review before a model reads them (AP-05): one inbox, answered by nonce like approvals.
//!
//! The web view lists the waiting questions and answers one by its nonce; Rust checks that the
//! answer fits the question (a form answer against the form's schema, a URL answer without
//! content, an edited sampling prompt against the limits) and refuses anything else, leaving the
//! question open. Nothing here opens a URL or calls a model by itself: the core does, and only
//! after an answer said so. Inputs are capped before they are parsed.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::approval::questions::{
    ElicitReply, Question, QuestionError, QuestionRequest, Reply,
};
use switchboard_core::approval::sampling::{
    self, SamplingMessage, SamplingPrompt, SamplingRole, MESSAGES_MAX,
};
use switchboard_core::host::Host;
use tauri::State;

use super::content::ToolResultDto;
use super::{ErrorCode, IpcError};

/// The longest nonce accepted (real ones are 32 hex characters).
const NONCE_MAX: usize = 64;
/// The largest form answer accepted, as JSON text.
const CONTENT_MAX: usize = 256 * 1024;
/// The largest (edited) model response sent back to a server.
const RESPONSE_MAX: usize = 1024 * 1024;
/// The longest reason accepted (the core keeps the first `REASON_MAX` characters).
const REASON_IN_MAX: usize = 16 * 1024;
/// The longest provider name or model id accepted.
const NAME_MAX: usize = 256;

impl From<QuestionError> for IpcError {
    fn from(e: QuestionError) -> Self {
        let code = match e {
            QuestionError::UnknownNonce => ErrorCode::NotFound,
            _ => ErrorCode::Invalid,
        };
        Self::new(code, e.to_string())
    }
}

/// Who wrote a message of a sampling prompt.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SamplingRoleDto {
    /// The user side.
    User,
    /// The model side.
    Assistant,
}

/// One message of a sampling prompt.
#[derive(Clone, Debug, Serialize, Deserialize, Type)]
pub struct SamplingMessageDto {
    /// Who.
    pub role: SamplingRoleDto,
    /// The text (untrusted, editable).
    pub text: String,
}

/// A server's sampling request as the person reviews and edits it.
#[derive(Clone, Debug, Serialize, Deserialize, Type)]
pub struct SamplingPromptDto {
    /// The server's system prompt.
    pub system_prompt: Option<String>,
    /// The messages, in order.
    pub messages: Vec<SamplingMessageDto>,
    /// Output limit, in tokens.
    pub max_tokens: u32,
    /// Temperature, when the server asked for one.
    pub temperature: Option<f32>,
    /// Models the server would like (shown only; the person picks).
    pub model_hints: Vec<String>,
    /// Context the server asked to include; never included.
    pub context_requested: Option<String>,
}

impl From<SamplingPrompt> for SamplingPromptDto {
    fn from(p: SamplingPrompt) -> Self {
        Self {
            system_prompt: p.system_prompt,
            messages: p
                .messages
                .into_iter()
                .map(|m| SamplingMessageDto {
                    role: match m.role {
                        SamplingRole::User => SamplingRoleDto::User,
                        SamplingRole::Assistant => SamplingRoleDto::Assistant,
                    },
                    text: m.text,
                })
                .collect(),
            max_tokens: p.max_tokens,
            temperature: p.temperature,
            model_hints: p.model_hints,
            context_requested: p.context_requested,
        }
    }
}

impl TryFrom<SamplingPromptDto> for SamplingPrompt {
    type Error = IpcError;

    fn try_from(p: SamplingPromptDto) -> Result<Self, IpcError> {
        if p.messages.len() > MESSAGES_MAX {
            return Err(IpcError::invalid(format!(
                "a sampling prompt has at most {MESSAGES_MAX} messages"
            )));
        }
        let chars = p.messages.iter().map(|m| m.text.len()).sum::<usize>()
            + p.system_prompt.as_ref().map_or(0, String::len);
        // Bytes bound characters from above: the cheap check first, the exact one after.
        if chars > sampling::TEXT_MAX {
            let exact = p
                .messages
                .iter()
                .map(|m| m.text.chars().count())
                .sum::<usize>()
                + p.system_prompt.as_ref().map_or(0, |s| s.chars().count());
            if exact > sampling::TEXT_MAX {
                return Err(IpcError::invalid(format!(
                    "the prompt holds {exact} characters; at most {} are sent",
                    sampling::TEXT_MAX
                )));
            }
        }
        if p.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return Err(IpcError::invalid("the temperature must be between 0 and 2"));
        }
        let short = |s: &String| s.len() <= NAME_MAX;
        if p.model_hints.len() > 10
            || !p.model_hints.iter().all(short)
            || !p.context_requested.as_ref().is_none_or(short)
        {
            return Err(IpcError::invalid("the model hints are too long"));
        }
        Ok(Self {
            system_prompt: p.system_prompt,
            messages: p
                .messages
                .into_iter()
                .map(|m| SamplingMessage {
                    role: match m.role {
                        SamplingRoleDto::User => SamplingRole::User,
                        SamplingRoleDto::Assistant => SamplingRole::Assistant,
                    },
                    text: m.text,
                })
                .collect(),
            max_tokens: p.max_tokens,
            temperature: p.temperature,
            model_hints: p.model_hints,
            context_requested: p.context_requested,
        })
    }
}

/// What is asked. Every string in here comes from a server and is untrusted text.
#[derive(Clone, Debug, Serialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QuestionKindDto {
    /// Fill in a form (elicitation, form mode).
    Form {
        /// The server's message.
        message: String,
        /// The requested schema (a flat JSON-schema object), as JSON text.
        schema: String,
        /// Fields that look like passwords, keys or other credentials.
        sensitive: Vec<String>,
    },
    /// Open a URL in the system browser (elicitation, URL mode). Already checked: only https
    /// (or http to this machine) ever gets here.
    Url {
        /// The server's message.
        message: String,
        /// The full URL, as it would be opened.
        url: String,
        /// The host as the URL names it (ASCII, punycode stays punycode).
        host: String,
        /// The host as a person reads it.
        host_unicode: String,
        /// The registrable domain, to highlight.
        domain: String,
        /// What to know before opening it (punycode, bare IP, this computer).
        warnings: Vec<String>,
    },
    /// Let the server have a model completion of this prompt.
    Sampling {
        /// The prompt, editable.
        prompt: SamplingPromptDto,
    },
    /// Send the model's completion back to the server.
    SamplingResponse {
        /// The provider that answered.
        provider: String,
        /// The model that answered.
        model: String,
        /// What it wrote, editable.
        text: String,
    },
    /// Let the model read a tool result.
    ToolResult {
        /// The tool.
        tool: String,
        /// The conversation whose model would read it.
        conversation: Option<String>,
        /// Why it is held.
        reason: String,
        /// The result.
        result: ToolResultDto,
    },
}

/// One waiting question.
#[derive(Clone, Debug, Serialize, Type)]
pub struct QuestionDto {
    /// Answer with this.
    pub nonce: String,
    /// The server that asks (or whose result is held).
    pub server: String,
    /// When it was asked, ms since the Unix epoch.
    pub asked_at_ms: f64,
    /// What is asked.
    pub question: QuestionKindDto,
}

impl From<QuestionRequest> for QuestionDto {
    fn from(q: QuestionRequest) -> Self {
        let question = match q.question {
            Question::Form(f) => QuestionKindDto::Form {
                message: f.message,
                schema: serde_json::to_string(&f.schema).unwrap_or_default(),
                sensitive: f.sensitive,
            },
            Question::Url(u) => QuestionKindDto::Url {
                message: u.message,
                url: u.url.url,
                host: u.url.host,
                host_unicode: u.url.host_unicode,
                domain: u.url.domain,
                warnings: u.url.warnings,
            },
            Question::Sampling(p) => QuestionKindDto::Sampling { prompt: p.into() },
            Question::SamplingResponse(r) => QuestionKindDto::SamplingResponse {
                provider: r.provider,
                model: r.model,
                text: r.text,
            },
            Question::ToolResult(r) => QuestionKindDto::ToolResult {
                tool: r.tool,
                conversation: r.conversation.map(|c| c.to_string()),
                reason: r.reason,
                result: r.result.into(),
            },
        };
        Self {
            nonce: q.nonce.to_string(),
            server: q.server.to_string(),
            asked_at_ms: q.asked_at_ms as f64,
            question,
        }
    }
}

/// The person's answer to one question.
#[derive(Clone, Debug, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplyDto {
    /// Send the form (`content`: a JSON object as text), or open the URL (`content` null).
    Accept {
        /// The form's values as a JSON object; null for a URL.
        content: Option<String>,
    },
    /// Say no to a form or URL.
    Decline,
    /// Dismiss a form or URL.
    Cancel,
    /// Run the (edited) sampling prompt with this provider and model.
    RunSampling {
        /// The prompt to send.
        prompt: SamplingPromptDto,
        /// The provider's name.
        provider: String,
        /// The model; the provider's default when null.
        model: Option<String>,
    },
    /// Send this (edited) text back to the server as the model's response.
    SendResponse {
        /// The text.
        text: String,
    },
    /// Let the model read the held result.
    SendResult,
    /// Deny the sampling request or its response, or withhold the result.
    Deny {
        /// Why, passed on to the server or the model.
        reason: Option<String>,
    },
}

impl TryFrom<ReplyDto> for Reply {
    type Error = IpcError;

    fn try_from(r: ReplyDto) -> Result<Self, IpcError> {
        Ok(match r {
            ReplyDto::Accept { content: None } => Reply::Elicit(ElicitReply::Accept {
                content: serde_json::Map::new(),
            }),
            ReplyDto::Accept {
                content: Some(text),
            } => {
                if text.len() > CONTENT_MAX {
                    return Err(IpcError::invalid(
                        "the form's values are larger than 256 KB",
                    ));
                }
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(serde_json::Value::Object(content)) => {
                        Reply::Elicit(ElicitReply::Accept { content })
                    }
                    Ok(_) => {
                        return Err(IpcError::invalid("the form's values must be a JSON object"));
                    }
                    Err(e) => {
                        return Err(IpcError::invalid(format!(
                            "the form's values are not JSON: {e}"
                        )));
                    }
                }
            }
            ReplyDto::Decline => Reply::Elicit(ElicitReply::Decline),
            ReplyDto::Cancel => Reply::Elicit(ElicitReply::Cancel),
            ReplyDto::RunSampling {
                prompt,
                provider,
                model,
            } => {
                if provider.len() > NAME_MAX || model.as_ref().is_some_and(|m| m.len() > NAME_MAX) {
                    return Err(IpcError::invalid("the provider or model name is too long"));
                }
                Reply::RunSampling {
                    prompt: prompt.try_into()?,
                    provider,
                    model,
                }
            }
            ReplyDto::SendResponse { text } => {
                if text.len() > RESPONSE_MAX {
                    return Err(IpcError::invalid("the response is larger than 1 MB"));
                }
                Reply::SendResponse { text }
            }
            ReplyDto::SendResult => Reply::SendResult,
            ReplyDto::Deny { reason } => {
                if reason.as_ref().is_some_and(|r| r.len() > REASON_IN_MAX) {
                    return Err(IpcError::invalid("the reason is longer than 16 KB"));
                }
                Reply::Deny { reason }
            }
        })
    }
}

/// Every waiting question, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn pending_questions(host: State<'_, Host>) -> Vec<QuestionDto> {
    host.pending_questions()
        .into_iter()
        .map(Into::into)
        .collect()
}

/// Answers one waiting question by its nonce. An answer that does not fit the question is
/// refused and the question stays open.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn answer_question(
    host: State<'_, Host>,
    nonce: String,
    reply: ReplyDto,
) -> Result<(), IpcError> {
    if nonce.is_empty() || nonce.len() > NONCE_MAX {
        return Err(QuestionError::UnknownNonce.into());
    }
    Ok(host.answer_question(&nonce, reply.try_into()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(v: serde_json::Value) -> Result<Reply, IpcError> {
        serde_json::from_value::<ReplyDto>(v).unwrap().try_into()
    }

    #[test]
    fn replies_map_to_the_core_and_oversized_ones_are_refused() {
        assert_eq!(
            reply(json!({"kind": "accept", "content": "{\"name\":\"Ada\"}"})).unwrap(),
            Reply::Elicit(ElicitReply::Accept {
                content: json!({"name": "Ada"}).as_object().unwrap().clone()
            })
        );
        assert_eq!(
            reply(json!({"kind": "accept", "content": null})).unwrap(),
            Reply::Elicit(ElicitReply::Accept {
                content: serde_json::Map::new()
            })
        );
        assert_eq!(
            reply(json!({"kind": "decline"})).unwrap(),
            Reply::Elicit(ElicitReply::Decline)
        );
        for bad in [
            json!({"kind": "accept", "content": "[1]"}),
            json!({"kind": "accept", "content": "{nope"}),
            json!({"kind": "accept", "content": "x".repeat(CONTENT_MAX + 1)}),
            json!({"kind": "send_response", "text": "x".repeat(RESPONSE_MAX + 1)}),
            json!({"kind": "deny", "reason": "x".repeat(REASON_IN_MAX + 1)}),
            json!({"kind": "run_sampling", "provider": "p".repeat(300), "model": null,
                   "prompt": {"system_prompt": null, "messages": [], "max_tokens": 5,
                              "temperature": null, "model_hints": [], "context_requested": null}}),
            json!({"kind": "run_sampling", "provider": "p", "model": null,
                   "prompt": {"system_prompt": null,
                              "messages": [{"role": "user", "text": "x".repeat(sampling::TEXT_MAX + 1)}],
                              "max_tokens": 5, "temperature": null, "model_hints": [],
                              "context_requested": null}}),
            json!({"kind": "run_sampling", "provider": "p", "model": null,
                   "prompt": {"system_prompt": null, "messages": [{"role": "user", "text": "x"}],
                              "max_tokens": 5, "temperature": 9.0, "model_hints": [],
                              "context_requested": null}}),
        ] {
            let e = reply(bad.clone()).unwrap_err();
            assert_eq!(e.code, ErrorCode::Invalid, "{bad}");
            assert!(e.message.len() < 400, "{}", e.message);
        }
    }

    #[test]
    fn a_sampling_prompt_round_trips() {
        let p = sampling::read(&json!({"messages": [{"role": "user",
            "content": {"type": "text", "text": "hi"}}], "maxTokens": 10, "temperature": 0.7,
            "systemPrompt": "be brief", "includeContext": "allServers"}))
        .unwrap();
        let dto = SamplingPromptDto::from(p.clone());
        let text = serde_json::to_string(&dto).unwrap();
        let back: SamplingPromptDto = serde_json::from_str(&text).unwrap();
        assert_eq!(SamplingPrompt::try_from(back).unwrap(), p);
    }

    #[test]
    fn question_errors_have_codes() {
        assert_eq!(
            IpcError::from(QuestionError::UnknownNonce).code,
            ErrorCode::NotFound
        );
        assert_eq!(
            IpcError::from(QuestionError::Mismatch("form")).code,
            ErrorCode::Invalid
        );
    }
}
