//! Questions for the person that do not come from a tool call: a server's elicitation (a form
//! or a URL, AP-07), its sampling request and the model's response to it (AP-08), and a tool
//! result held back for review before the model reads it (AP-05).
//!
//! They wait in one [`PendingQuestions`] (the same [`Waitlist`] as approvals: a random nonce per
//! question, dropped means withdrawn), so a shell shows one inbox. An answer must fit its
//! question: a form answer is checked against the form's schema, a URL answer carries no
//! content, an edited sampling prompt is checked again. A mismatched or invalid answer is refused
//! and the question stays open, so a buggy or hostile shell cannot push nonsense to a server.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::elicit::{self, FormQuestion, UrlQuestion};
use super::pending::clean_reason;
use super::sampling::{self, SamplingPrompt};
use super::waitlist::{now_ms, Nonce, Waiting, Waitlist};
use crate::catalog::ToolResult;
use crate::events::HostEvent;
use crate::ids::ServerId;

/// The model response to a sampling request, for review before it goes back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingResponse {
    /// The provider that answered.
    pub provider: String,
    /// The model that answered.
    pub model: String,
    /// What it wrote.
    pub text: String,
}

/// A tool result held before the model reads it (AP-05).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultReview {
    /// The tool.
    pub tool: String,
    /// The conversation whose model would read it.
    pub conversation: Option<crate::ids::ConversationId>,
    /// Why it is held.
    pub reason: String,
    /// The result, as the server returned it.
    pub result: ToolResult,
}

/// What is asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Question {
    /// Fill in a form.
    Form(FormQuestion),
    /// Open a URL.
    Url(UrlQuestion),
    /// Let a server have a model completion (edit, pick the model, or deny).
    Sampling(SamplingPrompt),
    /// Send the model's completion back to the server (edit or deny).
    SamplingResponse(SamplingResponse),
    /// Let the model read a tool result.
    ToolResult(ResultReview),
}

impl Question {
    fn kind(&self) -> &'static str {
        match self {
            Self::Form(_) => "form",
            Self::Url(_) => "url",
            Self::Sampling(_) => "sampling",
            Self::SamplingResponse(_) => "sampling_response",
            Self::ToolResult(_) => "tool_result",
        }
    }
}

/// One waiting question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionRequest {
    /// Answer with this.
    pub nonce: Nonce,
    /// The server it concerns.
    pub server: ServerId,
    /// When it was asked, milliseconds since the Unix epoch.
    pub asked_at_ms: u64,
    /// What is asked.
    pub question: Question,
}

/// The answer to a form or URL question (the protocol's three actions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitReply {
    /// Send the form (for a URL: open it).
    Accept {
        /// The form's values; empty for a URL.
        #[serde(default)]
        content: Map<String, Value>,
    },
    /// Say no.
    Decline,
    /// Dismiss.
    Cancel,
}

/// A person's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// To a form or URL question.
    Elicit(ElicitReply),
    /// Run the sampling prompt (as edited) with this provider and model.
    RunSampling {
        /// The prompt to send.
        prompt: SamplingPrompt,
        /// The provider.
        provider: String,
        /// The model; the provider's default when absent.
        model: Option<String>,
    },
    /// Send this text back to the server as the model's response.
    SendResponse {
        /// The (possibly edited) text.
        text: String,
    },
    /// Let the model read the result.
    SendResult,
    /// No: deny the sampling request or its response, or withhold the result.
    Deny {
        /// Why, passed on.
        reason: Option<String>,
    },
}

/// Why an answer was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuestionError {
    /// Nothing waits under that nonce.
    #[error("no question with that id is waiting; it was answered or withdrawn")]
    UnknownNonce,
    /// The answer does not fit the question.
    #[error("that answer does not fit a {0} question")]
    Mismatch(&'static str),
    /// The answer is invalid.
    #[error("the answer is not valid: {0}")]
    Invalid(String),
}

/// A caller's claim on one question. Dropping it withdraws the question.
#[derive(Debug)]
pub struct QuestionTicket(Waiting<QuestionRequest, Reply>);

impl QuestionTicket {
    /// The question's nonce.
    pub fn nonce(&self) -> &Nonce {
        self.0.nonce()
    }

    /// Waits for the answer; `None` when the question was withdrawn.
    pub async fn reply(self) -> Option<Reply> {
        self.0.answer().await
    }
}

/// The questions waiting in one host. Cheap to clone.
#[derive(Clone, Debug)]
pub struct PendingQuestions {
    list: Waitlist<QuestionRequest, Reply>,
}

impl PendingQuestions {
    /// An empty set that announces changes on `events`.
    pub fn new(events: broadcast::Sender<HostEvent>) -> Self {
        Self {
            list: Waitlist::new(events, HostEvent::QuestionsChanged),
        }
    }

    /// Asks, and announces it.
    pub fn ask(&self, server: ServerId, question: Question) -> QuestionTicket {
        let asked_at_ms = now_ms();
        QuestionTicket(self.list.insert(|nonce| QuestionRequest {
            nonce,
            server,
            asked_at_ms,
            question,
        }))
    }

    /// The waiting question named by `nonce`.
    pub fn get(&self, nonce: &str) -> Option<QuestionRequest> {
        self.list.get(nonce)
    }

    /// Answers the question named by `nonce`, if the answer fits it.
    pub fn answer(&self, nonce: &str, reply: Reply) -> Result<(), QuestionError> {
        let asked = self.list.get(nonce).ok_or(QuestionError::UnknownNonce)?;
        let reply = fit(&asked.question, reply)?;
        if self.list.answer(nonce, reply) {
            Ok(())
        } else {
            Err(QuestionError::UnknownNonce)
        }
    }

    /// Every waiting question, oldest first.
    pub fn list(&self) -> Vec<QuestionRequest> {
        let mut out = self.list.list();
        out.sort_by(|a, b| {
            a.asked_at_ms
                .cmp(&b.asked_at_ms)
                .then_with(|| a.nonce.as_str().cmp(b.nonce.as_str()))
        });
        out
    }
}

/// Checks that `reply` answers `question`, and cleans it.
fn fit(question: &Question, reply: Reply) -> Result<Reply, QuestionError> {
    let mismatch = || QuestionError::Mismatch(question.kind());
    match (question, reply) {
        (Question::Form(form), Reply::Elicit(ElicitReply::Accept { content })) => {
            elicit::check_content(form, &content)
                .map_err(|e| QuestionError::Invalid(e.join("; ")))?;
            Ok(Reply::Elicit(ElicitReply::Accept { content }))
        }
        (Question::Url(_), Reply::Elicit(ElicitReply::Accept { content })) => {
            if content.is_empty() {
                Ok(Reply::Elicit(ElicitReply::Accept { content }))
            } else {
                Err(QuestionError::Invalid(
                    "opening a URL sends no content".into(),
                ))
            }
        }
        (Question::Form(_) | Question::Url(_), r @ Reply::Elicit(_)) => Ok(r),
        (
            Question::Sampling(_),
            Reply::RunSampling {
                prompt,
                provider,
                model,
            },
        ) => {
            sampling::check(&prompt).map_err(QuestionError::Invalid)?;
            if provider.trim().is_empty() {
                return Err(QuestionError::Invalid("choose a provider".into()));
            }
            Ok(Reply::RunSampling {
                prompt,
                provider,
                model: model.filter(|m| !m.trim().is_empty()),
            })
        }
        (Question::SamplingResponse(_), r @ Reply::SendResponse { .. }) => Ok(r),
        (Question::ToolResult(_), Reply::SendResult) => Ok(Reply::SendResult),
        (
            Question::Sampling(_) | Question::SamplingResponse(_) | Question::ToolResult(_),
            Reply::Deny { reason },
        ) => Ok(Reply::Deny {
            reason: clean_reason(reason),
        }),
        _ => Err(mismatch()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn questions() -> PendingQuestions {
        PendingQuestions::new(broadcast::channel(16).0)
    }

    fn server() -> ServerId {
        ServerId::new("s").unwrap()
    }

    fn form() -> Question {
        match elicit::read(
            &json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}}),
        ) {
            Ok(elicit::Elicitation::Form(f)) => Question::Form(f),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_form_answer_must_fit_the_form() {
        let q = questions();
        let t = q.ask(server(), form());
        let n = t.nonce().to_string();
        let bad = Reply::Elicit(ElicitReply::Accept {
            content: json!({"name": 5}).as_object().unwrap().clone(),
        });
        assert!(matches!(q.answer(&n, bad), Err(QuestionError::Invalid(_))));
        assert!(matches!(
            q.answer(&n, Reply::SendResult),
            Err(QuestionError::Mismatch("form"))
        ));
        assert_eq!(q.list().len(), 1, "still waiting after refused answers");
        let good = Reply::Elicit(ElicitReply::Accept {
            content: json!({"name": "Ada"}).as_object().unwrap().clone(),
        });
        q.answer(&n, good.clone()).unwrap();
        assert_eq!(t.reply().await, Some(good));
        assert_eq!(
            q.answer(&n, Reply::SendResult),
            Err(QuestionError::UnknownNonce)
        );
    }

    #[tokio::test]
    async fn sampling_answers_are_checked_and_withdrawal_is_none() {
        let q = questions();
        let prompt = sampling::read(&json!({"messages": [{"role": "user",
            "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}))
        .unwrap();
        let t = q.ask(server(), Question::Sampling(prompt.clone()));
        let n = t.nonce().to_string();
        let mut empty = prompt.clone();
        empty.messages[0].text = String::new();
        let run = |prompt, provider: &str| Reply::RunSampling {
            prompt,
            provider: provider.into(),
            model: Some(" ".into()),
        };
        assert!(q.answer(&n, run(empty, "p")).is_err());
        assert!(q.answer(&n, run(prompt.clone(), "")).is_err());
        q.answer(&n, run(prompt.clone(), "p")).unwrap();
        assert_eq!(
            t.reply().await,
            Some(Reply::RunSampling {
                prompt,
                provider: "p".into(),
                model: None
            })
        );
        let t = q.ask(server(), form());
        drop(t);
        assert!(q.list().is_empty());
    }
}
