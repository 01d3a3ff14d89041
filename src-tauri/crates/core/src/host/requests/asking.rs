//! The two requests a server makes of the person: an elicitation (a form to fill, or a page
//! to open) and a sampling request (a prompt for one of the person's models, approved before
//! it runs and again before its answer goes back). Each is limited per server (RL-12),
//! audited with its reply, and kept apart from `requests.rs`, which routes them.

use serde_json::{Map, Value};

use super::{server_ctx, Refused, AUDIT_RESPONSE_MAX, ELICITATIONS_PER_HOUR, ELICITATIONS_WAITING};
use super::{GateSlot, SAMPLING_PER_HOUR};
use crate::approval::audit::{
    arguments_digest, AuditContext, AuditEvent, ElicitationMode, Reply as AuditReply,
};
use crate::approval::elicit::{self, Elicitation};
use crate::approval::questions::{ElicitReply, Question, Reply, SamplingResponse};
use crate::approval::sampling::{self, SamplingPrompt};
use crate::host::Host;
use crate::ids::ServerId;
use crate::mcp::requests::ElicitationAnswer;

/// An elicitation's message as audited: redacted before it is cut (half a secret would no
/// longer be recognised).
fn elicit_message(params: &Value) -> String {
    crate::redact::redact_for_logs(
        params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )
    .chars()
    .take(elicit::MESSAGE_MAX)
    .collect::<String>()
}

/// What a sampling request's audit entries share: its server and the request's digest.
struct SamplingAudit<'a> {
    server: &'a ServerId,
    ctx: AuditContext,
    request_digest: String,
}

impl SamplingAudit<'_> {
    fn entry(
        &self,
        reply: AuditReply,
        model: Option<String>,
        edited: bool,
        response: Option<&str>,
    ) -> AuditEvent {
        AuditEvent::Sampling {
            reply,
            model,
            request_digest: self.request_digest.clone(),
            edited,
            response: response.map(|r| {
                crate::redact::redact_for_logs(r)
                    .chars()
                    .take(AUDIT_RESPONSE_MAX)
                    .collect()
            }),
        }
    }
}

impl Host {
    pub(super) async fn elicit(&self, server: ServerId, params: Value) -> ElicitationAnswer {
        // Held until the person answered: it counts this question as waiting (RL-12).
        let _slot = match self.inner.seam.elicitations.take(&server) {
            Ok(slot) => slot,
            Err(why) => {
                // Declined unseen, and only noted in the server's (bounded) log: an audit row
                // or a warning per refusal would let a flood grow the database or fill the
                // person's terminal, the very thing the limit prevents.
                self.note(&server, &match why {
                    Refused::Busy => format!(
                        "declined an elicitation request unseen: {ELICITATIONS_WAITING} of this server's questions already wait for the user"
                    ),
                    Refused::Hourly => format!(
                        "declined an elicitation request unseen: rate limited to {ELICITATIONS_PER_HOUR} questions an hour"
                    ),
                });
                return ElicitationAnswer::Decline;
            }
        };
        let (answer, entry) = match elicit::read(&params) {
            Err(e) => {
                self.note(&server, &format!("declined an elicitation request: {e}"));
                (ElicitationAnswer::Decline, unreadable_elicitation(&params))
            }
            Ok(Elicitation::Form(form)) => self.ask_form(&server, form).await,
            Ok(Elicitation::Url(asked)) => self.ask_to_open(&server, asked).await,
        };
        self.audit(entry, server_ctx(&server)).await;
        answer
    }

    /// A form for the person to fill; what they mark secret is treated as a secret.
    async fn ask_form(
        &self,
        server: &ServerId,
        form: elicit::FormQuestion,
    ) -> (ElicitationAnswer, AuditEvent) {
        let reply = self
            .inner
            .seam
            .questions
            .ask(server.clone(), Question::Form(form.clone()))
            .reply()
            .await;
        let (answer, reply, content) = match reply {
            Some(Reply::Elicit(ElicitReply::Accept { content })) => {
                self.treat_as_secrets(server, &form, &content);
                let logged = elicit::redacted(&form, &content);
                (
                    ElicitationAnswer::Accept(content),
                    AuditReply::Accept,
                    Some(logged),
                )
            }
            Some(Reply::Elicit(ElicitReply::Decline)) => {
                (ElicitationAnswer::Decline, AuditReply::Decline, None)
            }
            _ => (ElicitationAnswer::Cancel, AuditReply::Cancel, None),
        };
        let entry = AuditEvent::Elicitation {
            mode: ElicitationMode::Form,
            message: form.message,
            url: None,
            reply,
            content,
        };
        (answer, entry)
    }

    /// A page the server wants the person to open; opened when they accept.
    async fn ask_to_open(
        &self,
        server: &ServerId,
        asked: elicit::UrlQuestion,
    ) -> (ElicitationAnswer, AuditEvent) {
        let reply = self
            .inner
            .seam
            .questions
            .ask(server.clone(), Question::Url(asked.clone()))
            .reply()
            .await;
        let (answer, reply) = match reply {
            Some(Reply::Elicit(ElicitReply::Accept { .. })) => {
                match crate::opener::open(&asked.url, self.inner.env.browser.as_deref()) {
                    Ok(()) => (ElicitationAnswer::Accept(Map::new()), AuditReply::Accept),
                    Err(e) => {
                        self.note(server, &format!("could not open the browser: {e}"));
                        (ElicitationAnswer::Cancel, AuditReply::Cancel)
                    }
                }
            }
            Some(Reply::Elicit(ElicitReply::Decline)) => {
                (ElicitationAnswer::Decline, AuditReply::Decline)
            }
            _ => (ElicitationAnswer::Cancel, AuditReply::Cancel),
        };
        let entry = AuditEvent::Elicitation {
            mode: ElicitationMode::Url,
            message: asked.message,
            url: Some(asked.url.url),
            reply,
            content: None,
        };
        (answer, entry)
    }

    pub(super) async fn sample(&self, server: ServerId, params: Value) -> Result<Value, String> {
        let trail = SamplingAudit {
            server: &server,
            ctx: server_ctx(&server),
            request_digest: arguments_digest(&params),
        };
        let (prompt, _slot) = match self.admit_sampling(&server, &params) {
            Ok(admitted) => admitted,
            Err(why) => {
                self.note(&server, &format!("refused a sampling request: {why}"));
                let entry = trail.entry(AuditReply::Decline, None, false, None);
                self.audit(entry, trail.ctx.clone()).await;
                return Err(why);
            }
        };
        let (edited_prompt, provider, model) = self.ask_to_sample(&trail, &prompt).await?;
        let edited = edited_prompt != prompt;
        let (model, text) = match self
            .complete(&server, &edited_prompt, &provider, model)
            .await
        {
            Ok(done) => done,
            Err(e) => {
                let entry = trail.entry(AuditReply::Cancel, None, edited, None);
                self.audit(entry, trail.ctx.clone()).await;
                return Err(format!("the model could not answer: {e}"));
            }
        };
        self.ask_to_send(&trail, provider, model, text, edited)
            .await
    }

    /// A sampling request that may wait for the person: readable, and none of this server's
    /// waiting already, within its hourly limit. The slot counts it as waiting while held.
    fn admit_sampling(
        &self,
        server: &ServerId,
        params: &Value,
    ) -> Result<(SamplingPrompt, GateSlot), String> {
        let prompt = sampling::read(params)?;
        let busy = self.inner.seam.questions.list().iter().any(|q| {
            q.server == *server
                && matches!(
                    q.question,
                    Question::Sampling(_) | Question::SamplingResponse(_)
                )
        });
        if busy {
            return Err("a sampling request of this server is already waiting for the user".into());
        }
        match self.inner.seam.sampling.take(server) {
            Ok(slot) => Ok((prompt, slot)),
            Err(Refused::Busy) => {
                Err("a sampling request of this server is already waiting for the user".into())
            }
            Err(Refused::Hourly) => Err(format!(
                "rate limited: Switchboard lets a server sample a model at most {SAMPLING_PER_HOUR} times an hour"
            )),
        }
    }

    /// Asks the person to run `prompt`: the prompt as they left it, with the provider and
    /// model they chose; a refusal or a dismissal is audited and told the server.
    async fn ask_to_sample(
        &self,
        trail: &SamplingAudit<'_>,
        prompt: &SamplingPrompt,
    ) -> Result<(SamplingPrompt, String, Option<String>), String> {
        let reply = self
            .inner
            .seam
            .questions
            .ask(trail.server.clone(), Question::Sampling(prompt.clone()))
            .reply()
            .await;
        match reply {
            Some(Reply::RunSampling {
                prompt,
                provider,
                model,
            }) => Ok((prompt, provider, model)),
            Some(Reply::Deny { reason }) => {
                let entry = trail.entry(AuditReply::Decline, None, false, None);
                self.audit(entry, trail.ctx.clone()).await;
                Err(match reason {
                    Some(r) => format!("the user declined the sampling request: {r}"),
                    None => "the user declined the sampling request".into(),
                })
            }
            _ => {
                let entry = trail.entry(AuditReply::Cancel, None, false, None);
                self.audit(entry, trail.ctx.clone()).await;
                Err("the sampling request was dismissed".into())
            }
        }
    }

    /// Asks the person to send the model's answer back to the server, as they left it.
    async fn ask_to_send(
        &self,
        trail: &SamplingAudit<'_>,
        provider: String,
        model: String,
        text: String,
        edited: bool,
    ) -> Result<Value, String> {
        let reply = self
            .inner
            .seam
            .questions
            .ask(
                trail.server.clone(),
                Question::SamplingResponse(SamplingResponse {
                    provider,
                    model: model.clone(),
                    text,
                }),
            )
            .reply()
            .await;
        let ctx = trail.ctx.clone();
        match reply {
            Some(Reply::SendResponse { text }) => {
                let entry =
                    trail.entry(AuditReply::Accept, Some(model.clone()), edited, Some(&text));
                self.audit(entry, ctx).await;
                Ok(sampling::result(&model, &text))
            }
            Some(Reply::Deny { reason }) => {
                let entry = trail.entry(AuditReply::Decline, Some(model), edited, None);
                self.audit(entry, ctx).await;
                Err(match reason {
                    Some(r) => format!("the user withheld the model's response: {r}"),
                    None => "the user withheld the model's response".into(),
                })
            }
            _ => {
                let entry = trail.entry(AuditReply::Cancel, Some(model), edited, None);
                self.audit(entry, ctx).await;
                Err("the sampling request was dismissed".into())
            }
        }
    }
}

/// The audit entry of an elicitation request that could not be read: declined, with what
/// can be told of it.
fn unreadable_elicitation(params: &Value) -> AuditEvent {
    let url_mode = params.get("mode").and_then(Value::as_str) == Some("url");
    let url = params.get("url").and_then(Value::as_str).map(|u| {
        crate::redact::redact_for_logs(u)
            .chars()
            .take(300)
            .collect()
    });
    let mode = if url_mode {
        ElicitationMode::Url
    } else {
        ElicitationMode::Form
    };
    AuditEvent::Elicitation {
        mode,
        message: elicit_message(params),
        url,
        reply: AuditReply::Decline,
        content: None,
    }
}
