//! Answering the host's questions on the terminal: a server's form or URL (elicitation, AP-07),
//! its request for a model completion and the completion before it goes back (sampling, AP-08),
//! and a tool result held before the model reads it (AP-05).
//!
//! Each question names the server first, shows everything the answer depends on (server text
//! made inert), and takes one line; the default (an empty line, anything unrecognised, the end of
//! input) is always the answer that gives nothing away: cancel, deny, withhold. An answer the
//! core refuses (a form value that does not fit, an emptied prompt) is explained and asked
//! again; the question stays open meanwhile.

use std::io::IsTerminal;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use switchboard_core::approval::elicit::{FormQuestion, UrlQuestion};
use switchboard_core::approval::questions::{
    ElicitReply, Question, QuestionError, QuestionRequest, Reply, ResultReview, SamplingResponse,
};
use switchboard_core::approval::sampling::{SamplingMessage, SamplingPrompt, SamplingRole};
use switchboard_core::mcp::catalog::Content;

use crate::form::{fields, Field};
use crate::inbox::{prompt, refusal, Heard, Inbox, SamplingChoice};
use crate::output::inert;

/// Characters of a tool result shown for review; the model gets all of it when sent.
const RESULT_SHOWN: usize = 4_000;

/// Answers one question (or notes that it was withdrawn).
pub(crate) async fn answer(inbox: &mut Inbox, q: &QuestionRequest) {
    match &q.question {
        Question::Form(f) => form(inbox, q, f).await,
        Question::Url(u) => url(inbox, q, u).await,
        Question::Sampling(p) => sampling(inbox, q, p).await,
        Question::SamplingResponse(r) => response(inbox, q, r).await,
        Question::ToolResult(r) => result(inbox, q, r).await,
    }
}

/// What came of submitting an answer.
enum Sent {
    Done,
    /// Refused; the question still waits.
    Refused(String),
    Gone,
}

fn submit(inbox: &Inbox, q: &QuestionRequest, reply: Reply) -> Sent {
    match inbox.host.answer_question(q.nonce.as_str(), reply) {
        Ok(()) => Sent::Done,
        Err(QuestionError::UnknownNonce) => Sent::Gone,
        Err(e) => Sent::Refused(e.to_string()),
    }
}

fn gone(q: &QuestionRequest) {
    errln!("\n(withdrawn: {} no longer asks)", q.server);
}

/// Submits `reply`; `true` when the question is settled (answered or withdrawn).
fn settle(inbox: &Inbox, q: &QuestionRequest, reply: Reply, said: &str) -> bool {
    match submit(inbox, q, reply) {
        Sent::Done => {
            errln!("{said}");
            true
        }
        Sent::Gone => {
            gone(q);
            true
        }
        Sent::Refused(why) => {
            errln!("not sent: {}", inert(&why));
            false
        }
    }
}

/// Prints a server's message, indented.
fn message(text: &str) {
    for line in inert(text).lines() {
        errln!("  | {line}");
    }
}

/// The three elicitation actions, read from a line: `accept_word` (`a`, or `o` for a URL)
/// accepts, `d` declines, anything else cancels.
fn elicit_action(heard: &Heard, accept: &[&str]) -> ElicitReply {
    let said = heard.text().map(|t| t.trim().to_ascii_lowercase());
    match said.as_deref() {
        Some(s) if accept.contains(&s) => ElicitReply::Accept {
            content: Map::new(),
        },
        Some("d" | "decline") => ElicitReply::Decline,
        _ => ElicitReply::Cancel,
    }
}

async fn form(inbox: &mut Inbox, q: &QuestionRequest, f: &FormQuestion) {
    let fields = fields(f);
    loop {
        errln!("\n{} asks you to fill in a form:", q.server);
        message(&f.message);
        errln!("fields (leave one empty to leave it out):");
        for field in &fields {
            errln!("  - {}", field.line());
            if field.sensitive {
                errln!(
                    "    WARNING: {} looks like a password, key or other credential. Servers must \
                     not ask for those in a form; type it only if you trust {} with it.",
                    inert(&field.name),
                    q.server
                );
            }
        }
        prompt(&format!(
            "Answer {}? [a(ccept)/d(ecline)/C(ancel)] ",
            q.server
        ));
        let heard = inbox.read(q.nonce.as_str()).await;
        if let Heard::Gone = heard {
            return gone(q);
        }
        let reply = match elicit_action(&heard, &["a", "accept"]) {
            ElicitReply::Accept { .. } => match fill(inbox, q, &fields).await {
                Filled::Content(content) => ElicitReply::Accept { content },
                Filled::Cancel => ElicitReply::Cancel,
                Filled::Gone => return gone(q),
            },
            other => other,
        };
        let said = match &reply {
            ElicitReply::Accept { .. } => format!("sent to {}", q.server),
            ElicitReply::Decline => "declined".into(),
            ElicitReply::Cancel => "cancelled".into(),
        };
        if settle(inbox, q, Reply::Elicit(reply), &said) {
            return;
        }
    }
}

enum Filled {
    Content(Map<String, Value>),
    Cancel,
    Gone,
}

/// Asks each field in turn. The end of input cancels the whole form: half a form is never sent.
async fn fill(inbox: &mut Inbox, q: &QuestionRequest, fields: &[Field]) -> Filled {
    let mut content = Map::new();
    for field in fields {
        loop {
            let required = if field.required { ", required" } else { "" };
            let label = format!(
                "  {} ({}{required}): ",
                inert(&field.name),
                field.kind_words()
            );
            let typed = if field.sensitive && std::io::stdin().is_terminal() && !inbox.reading() {
                // Hidden, so a credential is not left on the screen.
                let label = label.clone();
                match tokio::task::spawn_blocking(move || rpassword::prompt_password(label)).await {
                    Ok(Ok(t)) => t,
                    _ => return Filled::Cancel,
                }
            } else {
                prompt(&label);
                match inbox.read(q.nonce.as_str()).await {
                    Heard::Said(t) => t,
                    Heard::End => {
                        errln!("\n(end of input)");
                        return Filled::Cancel;
                    }
                    Heard::Gone => return Filled::Gone,
                }
            };
            match field.parse(&typed) {
                Ok(Some(v)) => {
                    content.insert(field.name.clone(), v);
                    break;
                }
                Ok(None) => break,
                Err(why) => errln!("    {why}; try again"),
            }
        }
    }
    Filled::Content(content)
}

async fn url(inbox: &mut Inbox, q: &QuestionRequest, u: &UrlQuestion) {
    loop {
        errln!(
            "\n{} asks you to open a web page in your browser:",
            q.server
        );
        message(&u.message);
        // Checked by the core: no control, space or invisible characters; shown whole.
        errln!("URL:    {}", u.url.url);
        errln!("domain: {}", u.url.domain);
        if u.url.host_unicode != u.url.host {
            errln!(
                "  (the host {} reads as {})",
                u.url.host,
                inert(&u.url.host_unicode)
            );
        }
        for w in &u.url.warnings {
            errln!("WARNING: {}", inert(w));
        }
        prompt("Open it? [o(pen)/d(ecline)/C(ancel)] ");
        let heard = inbox.read(q.nonce.as_str()).await;
        if let Heard::Gone = heard {
            return gone(q);
        }
        let reply = elicit_action(&heard, &["o", "open"]);
        let said = match &reply {
            ElicitReply::Accept { .. } => "opening it in your browser",
            ElicitReply::Decline => "declined",
            ElicitReply::Cancel => "cancelled",
        };
        if settle(inbox, q, Reply::Elicit(reply), said) {
            return;
        }
    }
}

/// The part of a sampling prompt a person may edit.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EditablePrompt {
    system_prompt: Option<String>,
    messages: Vec<SamplingMessage>,
    max_tokens: u32,
    #[serde(default)]
    temperature: Option<f32>,
}

fn show_prompt(server: &str, p: &SamplingPrompt, edited: bool) {
    if edited {
        errln!("\n{server}'s request for a model completion, with your edit:");
    } else {
        errln!("\n{server} asks for a model completion (sampling):");
    }
    match &p.system_prompt {
        Some(s) => {
            errln!("system prompt:");
            message(s);
        }
        None => errln!("system prompt: (none)"),
    }
    for m in &p.messages {
        errln!(
            "{}:",
            match m.role {
                SamplingRole::User => "user",
                SamplingRole::Assistant => "assistant",
            }
        );
        message(&m.text);
    }
    let temperature = p
        .temperature
        .map(|t| format!(", temperature {t}"))
        .unwrap_or_default();
    errln!(
        "at most {}{temperature}",
        crate::output::count(p.max_tokens, "token", "tokens")
    );
    if !p.model_hints.is_empty() {
        errln!(
            "the server would like: {} (you choose the model)",
            inert(&p.model_hints.join(", "))
        );
    }
    if let Some(c) = &p.context_requested {
        errln!(
            "the server asked to include context ({}): it is NOT included",
            inert(c)
        );
    }
    errln!("Nothing else is sent: no conversation, no other server's data, no tools.");
}

/// The provider (and model) that will answer, asking the person when it is not settled.
async fn pick_provider(
    inbox: &mut Inbox,
    q: &QuestionRequest,
) -> Result<(String, Option<String>), Heard> {
    if let Some(p) = &inbox.sampling.provider {
        return Ok((p.clone(), inbox.sampling.model.clone()));
    }
    let names: Vec<String> = match inbox.host.models().list_providers().await {
        Ok(list) => list.into_iter().map(|p| p.name.to_string()).collect(),
        Err(e) => {
            errln!("could not list the providers: {}", inert(&e.to_string()));
            Vec::new()
        }
    };
    if let [only] = names.as_slice() {
        return Ok((only.clone(), None));
    }
    if names.is_empty() {
        errln!("no provider is configured; add one with `switchboard provider add`");
        return Err(Heard::End);
    }
    loop {
        prompt(&format!(
            "Which provider should answer? [{}, or PROVIDER:MODEL; empty refuses] ",
            names.join(", ")
        ));
        match inbox.read(q.nonce.as_str()).await {
            Heard::Said(t) if t.trim().is_empty() => return Err(Heard::End),
            Heard::Said(t) => {
                let choice = SamplingChoice::parse(Some(&t));
                match choice.provider {
                    Some(p) if names.contains(&p) => return Ok((p, choice.model)),
                    _ => errln!("{:?} is not a configured provider", t.trim()),
                }
            }
            other => return Err(other),
        }
    }
}

async fn sampling(inbox: &mut Inbox, q: &QuestionRequest, asked: &SamplingPrompt) {
    let mut prompt_now = asked.clone();
    loop {
        show_prompt(q.server.as_str(), &prompt_now, prompt_now != *asked);
        let with = match &inbox.sampling.provider {
            Some(p) => format!(
                " with {p}{}",
                inbox
                    .sampling
                    .model
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ),
            None => String::new(),
        };
        prompt(&format!(
            "Run it{with}? [y/N/e(dit)] (or \"n REASON\" to tell {} why) ",
            q.server
        ));
        let heard = inbox.read(q.nonce.as_str()).await;
        let said = match &heard {
            Heard::Gone => return gone(q),
            Heard::End => None,
            Heard::Said(s) => Some(s.trim().to_ascii_lowercase()),
        };
        let reply = match said.as_deref() {
            Some("y" | "yes") => match pick_provider(inbox, q).await {
                Ok((provider, model)) => Reply::RunSampling {
                    prompt: prompt_now.clone(),
                    provider,
                    model,
                },
                Err(Heard::Gone) => return gone(q),
                Err(_) => Reply::Deny {
                    reason: Some("no model was chosen".into()),
                },
            },
            Some("e" | "edit") => {
                let editable = EditablePrompt {
                    system_prompt: prompt_now.system_prompt.clone(),
                    messages: prompt_now.messages.clone(),
                    max_tokens: prompt_now.max_tokens,
                    temperature: prompt_now.temperature,
                };
                let edited = tokio::task::spawn_blocking(move || {
                    crate::editor::edit_json(&editable, "sampling prompt")
                })
                .await;
                match edited {
                    Ok(Ok(e)) => {
                        prompt_now.system_prompt = e.system_prompt;
                        prompt_now.messages = e.messages;
                        prompt_now.max_tokens = e.max_tokens;
                        prompt_now.temperature = e.temperature;
                    }
                    Ok(Err(why)) => errln!("{why}; the prompt is unchanged"),
                    Err(e) => errln!("the editor failed: {e}"),
                }
                continue;
            }
            _ => Reply::Deny {
                reason: heard.text().and_then(refusal).flatten(),
            },
        };
        let said = match &reply {
            Reply::RunSampling { provider, .. } => format!("asking {provider}..."),
            _ => "denied".into(),
        };
        if settle(inbox, q, reply, &said) {
            return;
        }
    }
}

async fn response(inbox: &mut Inbox, q: &QuestionRequest, r: &SamplingResponse) {
    let mut text = r.text.clone();
    loop {
        if text == r.text {
            errln!(
                "\n{}: the model ({} {}) answered its request:",
                q.server,
                inert(&r.provider),
                inert(&r.model)
            );
        } else {
            errln!("\n{}: the model's answer, with your edit:", q.server);
        }
        message(&text);
        prompt(&format!(
            "Send this to {}? [y/N/e(dit)] (or \"n REASON\" to tell it why not) ",
            q.server
        ));
        let heard = inbox.read(q.nonce.as_str()).await;
        let said = match &heard {
            Heard::Gone => return gone(q),
            Heard::End => None,
            Heard::Said(s) => Some(s.trim().to_ascii_lowercase()),
        };
        let reply = match said.as_deref() {
            Some("y" | "yes") => Reply::SendResponse { text: text.clone() },
            Some("e" | "edit") => {
                let current = text.clone();
                match tokio::task::spawn_blocking(move || {
                    crate::editor::edit_text(&current, "response.txt")
                })
                .await
                {
                    Ok(Ok(edited)) => text = edited,
                    Ok(Err(why)) => errln!("{why}; the answer is unchanged"),
                    Err(e) => errln!("the editor failed: {e}"),
                }
                continue;
            }
            _ => Reply::Deny {
                reason: heard.text().and_then(refusal).flatten(),
            },
        };
        let said = match &reply {
            Reply::SendResponse { .. } => format!("sent to {}", q.server),
            _ => "withheld".into(),
        };
        if settle(inbox, q, reply, &said) {
            return;
        }
    }
}

/// A tool result as text for review: the text parts, the others summarised.
fn result_text(r: &ResultReview) -> String {
    let mut parts = Vec::new();
    for c in &r.result.content {
        parts.push(match c {
            Content::Text { text } => text.clone(),
            Content::Image { mime_type, data } => {
                format!("[image {mime_type}, {} bytes base64]", data.len())
            }
            Content::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} bytes base64]", data.len())
            }
            Content::ResourceLink { uri, name, .. } => format!("[resource link] {name} {uri}"),
            Content::Resource { resource } => match &resource.text {
                Some(t) => format!("[resource {}]\n{t}", resource.uri),
                None => format!("[resource {}, binary]", resource.uri),
            },
        });
    }
    if let Some(s) = &r.result.structured_content {
        parts.push(format!(
            "structured: {}",
            serde_json::to_string_pretty(s).unwrap_or_default()
        ));
    }
    parts.join("\n")
}

async fn result(inbox: &mut Inbox, q: &QuestionRequest, r: &ResultReview) {
    let text = result_text(r);
    let total = text.chars().count();
    let shown: String = text.chars().take(RESULT_SHOWN).collect();
    errln!(
        "\n{}: the tool {} returned this{}; the model has not seen it yet:",
        q.server,
        crate::output::name(&r.tool),
        if r.result.is_error {
            " (as an error)"
        } else {
            ""
        }
    );
    message(&shown);
    if total > RESULT_SHOWN {
        errln!(
            "  ({} more characters; the model would get them all)",
            total - RESULT_SHOWN
        );
    }
    errln!("(held because {})", inert(&r.reason));
    loop {
        prompt("Send it to the model? [y/N] (or \"n REASON\" to withhold it and say why) ");
        let heard = inbox.read(q.nonce.as_str()).await;
        let reply = match &heard {
            Heard::Gone => return gone(q),
            Heard::Said(s) if matches!(s.trim().to_ascii_lowercase().as_str(), "y" | "yes") => {
                Reply::SendResult
            }
            _ => Reply::Deny {
                reason: heard.text().and_then(refusal).flatten(),
            },
        };
        let said = match &reply {
            Reply::SendResult => "sent to the model",
            _ => "withheld from the model",
        };
        if settle(inbox, q, reply, said) {
            return;
        }
    }
}
