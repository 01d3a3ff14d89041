//! Running a tool by hand from the catalog, and answering approval requests.
//!
//! There is no command that calls a tool directly (AP-03): `run_tool` goes through
//! [`Host::run_tool`], which checks the arguments, then parks the call as a pending approval
//! with a random nonce and waits. The call proceeds only when `answer_approval` names that
//! nonce. The same dialog answers calls a model asks for, so a person always sees the exact
//! arguments before anything runs.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::approval::suggest::{describe, suggest_constraints};
use switchboard_core::approval::{Answer, ApprovalRequest, Condition, Origin, Scope};
use switchboard_core::host::{CallOptions, Host};
use switchboard_core::ids::{RunId, ToolRef};
use switchboard_core::mcp::catalog::Progress;
use tauri::ipc::Channel;
use tauri::State;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::content::{ProgressDto, ToolResultDto};
use super::{logged, IpcError};

/// Opens a run for a tool call or a chat turn and returns its id, minted by the host: pass it
/// to `run_tool` or `send_chat`, and to `cancel_run` to stop it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn open_run(host: State<'_, Host>) -> String {
    host.open_run().to_string()
}

/// Reads a run id the host minted.
pub(super) fn parse_run(id: &str) -> Result<RunId, IpcError> {
    RunId::parse(id).map_err(|_| IpcError::invalid("not a run id; open one with open_run"))
}

/// Arguments typed as JSON text: they must be an object. `not_json` opens the message when
/// the text does not parse.
pub(super) fn json_object(
    text: &str,
    not_json: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, IpcError> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(IpcError::invalid("the arguments must be a JSON object")),
        Err(e) => Err(IpcError::invalid(format!("{not_json}: {e}"))),
    }
}

/// Forwards a call's progress to the window until the window goes away or the call ends.
pub(super) fn forward(
    on_progress: Channel<ProgressDto>,
) -> (UnboundedSender<Progress>, JoinHandle<()>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            if on_progress.send(ProgressDto::from(p)).is_err() {
                break;
            }
        }
    });
    (tx, task)
}

/// Asks to run a tool with `args_json` (a JSON object as text). The call waits for the user's
/// approval, then runs; progress arrives on `on_progress`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(
    run = %logged(&run_id),
    server = %logged(&server),
    tool = %logged(&tool),
))]
pub async fn run_tool(
    host: State<'_, Host>,
    run_id: String,
    server: String,
    tool: String,
    args_json: String,
    on_progress: Channel<ProgressDto>,
) -> Result<ToolResultDto, IpcError> {
    let arguments = json_object(&args_json, "the arguments are not valid JSON")?;
    let tool = ToolRef {
        server: Host::server_id(&server)?,
        tool: tool.into(),
    };
    let run = parse_run(&run_id)?;
    let (tx, forwarding) = forward(on_progress);
    let options = CallOptions::default().run(run).progress(tx);
    let result = host
        .run_tool(&tool, arguments, Origin::Manual, options)
        .await;
    let _ = forwarding.await;
    Ok(result?.into())
}

/// Stops a run (a tool call or a chat turn): a pending approval is withdrawn, a running call
/// is cancelled at the server, a turn keeps what arrived. Returns whether such a run was open.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(run = %logged(&run_id)))]
pub fn cancel_run(host: State<'_, Host>, run_id: String) -> bool {
    RunId::parse(&run_id).is_ok_and(|id| host.cancel_run(&id))
}

/// A call waiting for the user's answer, with everything the dialog shows (AP-01).
#[derive(Clone, Debug, Serialize, Type)]
pub struct ApprovalDto {
    /// Answer with this.
    pub nonce: String,
    /// The server.
    pub server: String,
    /// `tool` (a call), `resource` (a read) or `prompt` (a prompt get).
    pub kind: String,
    /// The tool or prompt, or the resource's URI.
    pub tool: String,
    /// The exact arguments, pretty-printed JSON, untruncated.
    pub arguments: String,
    /// `manual` (run by hand), `model` (asked for in a conversation) or `app` (an MCP App
    /// asks from its frame, AP-10).
    pub origin: String,
    /// The `ui://` document of the app that asks, with origin `app` (its server is `server`).
    pub app: Option<String>,
    /// The conversation, for model calls.
    pub conversation: Option<String>,
    /// The agent whose model asks, when an agent profile runs it (issue 15).
    pub agent: Option<String>,
    /// The agent it works for; `None` with an agent: it works for the person.
    pub for_agent: Option<String>,
    /// Hints the server claims (never trusted).
    pub hints: Vec<String>,
    /// Why it is asked (the policy's reason).
    pub reason: String,
    /// A warning to show prominently (the lethal-trifecta guard).
    pub warning: Option<String>,
    /// When it was asked, ms since the Unix epoch.
    pub requested_at_ms: f64,
    /// Conditions an "always" grant could keep later calls to, made from these arguments
    /// ("always, with these arguments"); the person picks which to keep.
    pub suggested_constraints: Vec<ConstraintDto>,
}

/// One condition a grant can carry, in words and as it is sent back.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ConstraintDto {
    /// The condition in words.
    pub description: String,
    /// The condition as JSON, to send back in `ApprovalAnswerDto::Allow::constraints`.
    pub condition_json: String,
}

impl From<&Condition> for ConstraintDto {
    fn from(c: &Condition) -> Self {
        Self {
            description: describe(c),
            condition_json: serde_json::to_string(c).unwrap_or_default(),
        }
    }
}

impl From<ApprovalRequest> for ApprovalDto {
    fn from(r: ApprovalRequest) -> Self {
        let acting = r.origin.acting().cloned();
        let app = r.origin.app().map(|a| a.uri.clone());
        let (origin, conversation) = match r.origin {
            Origin::Manual => ("manual", None),
            Origin::Attach { conversation } => ("manual", conversation.map(|c| c.to_string())),
            Origin::Model { conversation, .. } => ("model", Some(conversation.to_string())),
            // An MCP App's own call (AP-10).
            Origin::App { conversation, .. } => ("app", conversation.map(|c| c.to_string())),
        };
        let suggested_constraints = match &r.arguments {
            serde_json::Value::Object(args) => {
                suggest_constraints(args, std::env::home_dir().as_deref())
                    .iter()
                    .map(Into::into)
                    .collect()
            }
            _ => Vec::new(),
        };
        Self {
            suggested_constraints,
            nonce: r.nonce.to_string(),
            server: r.server.to_string(),
            kind: r.kind.as_str().into(),
            tool: r.tool,
            arguments: serde_json::to_string_pretty(&r.arguments).unwrap_or_default(),
            origin: origin.into(),
            app,
            conversation,
            agent: acting.as_ref().map(|a| a.agent.to_string()),
            for_agent: acting.and_then(|a| a.for_agent).map(|a| a.to_string()),
            hints: r.hints,
            reason: r.reason,
            warning: r.warning,
            requested_at_ms: r.requested_at_ms as f64,
        }
    }
}

/// Every call waiting for approval, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn pending_approvals(host: State<'_, Host>) -> Vec<ApprovalDto> {
    host.pending_approvals()
        .into_iter()
        .map(Into::into)
        .collect()
}

/// How far an "allow" reaches (AP-02).
#[derive(Clone, Copy, Debug, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ScopeDto {
    /// This call only.
    Once,
    /// Calls of this tool in this conversation.
    Conversation,
    /// Calls of this tool anywhere, until revoked or the tool changes.
    Always,
}

impl From<ScopeDto> for Scope {
    fn from(s: ScopeDto) -> Self {
        match s {
            ScopeDto::Once => Self::Once,
            ScopeDto::Conversation => Self::Conversation,
            ScopeDto::Always => Self::Always,
        }
    }
}

/// How the person answered a pending call.
#[derive(Clone, Debug, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalAnswerDto {
    /// Run it; `arguments` is the edited arguments as JSON text, when the person changed them.
    Allow {
        /// The edited arguments (a JSON object as text).
        arguments: Option<String>,
        /// Whether later calls of the tool are allowed too.
        scope: ScopeDto,
        /// For a grant: conditions later calls must meet (each a `condition_json` from
        /// `ApprovalDto::suggested_constraints`); empty = any arguments.
        constraints: Vec<String>,
    },
    /// Don't run it; `reason` goes to the model.
    Deny {
        /// Why, in the person's words.
        reason: Option<String>,
    },
}

/// Edited arguments larger than this are refused.
const EDITED_MAX: usize = 1024 * 1024;
/// Conditions one grant may carry.
const CONSTRAINTS_MAX: usize = 32;
/// The largest condition accepted, as JSON text.
const CONSTRAINT_MAX: usize = 8 * 1024;

/// Parses the conditions of a grant; any invalid one refuses the whole answer.
fn constraints(list: Vec<String>) -> Result<Vec<Condition>, IpcError> {
    if list.len() > CONSTRAINTS_MAX {
        return Err(IpcError::invalid(format!(
            "a grant carries at most {CONSTRAINTS_MAX} conditions"
        )));
    }
    list.iter()
        .map(|text| {
            if text.len() > CONSTRAINT_MAX {
                return Err(IpcError::invalid("a condition is larger than 8 KB"));
            }
            serde_json::from_str::<Condition>(text)
                .map_err(|e| IpcError::invalid(format!("a condition is not valid: {e}")))
        })
        .collect()
}

impl TryFrom<ApprovalAnswerDto> for Answer {
    type Error = IpcError;

    fn try_from(a: ApprovalAnswerDto) -> Result<Self, IpcError> {
        Ok(match a {
            ApprovalAnswerDto::Allow {
                arguments,
                scope,
                constraints: list,
            } => {
                let constraints = constraints(list)?;
                if !constraints.is_empty() && matches!(scope, ScopeDto::Once) {
                    return Err(IpcError::invalid(
                        "conditions belong to a grant; \"once\" makes none",
                    ));
                }
                let arguments = match arguments {
                    None => None,
                    Some(text) if text.len() > EDITED_MAX => {
                        return Err(IpcError::invalid(
                            "the edited arguments are larger than 1 MB",
                        ));
                    }
                    Some(text) => Some(json_object(&text, "the edited arguments are not JSON")?),
                };
                Answer::Allow {
                    arguments,
                    scope: scope.into(),
                    constraints,
                }
            }
            ApprovalAnswerDto::Deny { reason } => Answer::Deny { reason },
        })
    }
}

/// Answers one pending call by its nonce. Anything that is not a pending nonce is refused;
/// edited arguments that do not match the tool's input schema are refused and the call stays
/// pending.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn answer_approval(
    host: State<'_, Host>,
    nonce: String,
    answer: ApprovalAnswerDto,
) -> Result<(), IpcError> {
    host.answer_approval(&nonce, answer.try_into()?).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::ErrorCode;
    use serde_json::json;

    fn answer(v: serde_json::Value) -> Result<Answer, IpcError> {
        serde_json::from_value::<ApprovalAnswerDto>(v)
            .unwrap()
            .try_into()
    }

    #[test]
    fn suggested_constraints_come_back_as_conditions() {
        let req = ApprovalRequest {
            nonce: serde_json::from_value(json!("00ff")).unwrap(),
            server: switchboard_core::ids::ServerId::new("web").unwrap(),
            kind: switchboard_core::approval::RequestKind::Tool,
            tool: "fetch".into(),
            arguments: json!({"url": "https://docs.example.com/a", "count": 3}),
            origin: Origin::Manual,
            hints: vec![],
            reason: String::new(),
            warning: None,
            requested_at_ms: 0,
        };
        let dto = ApprovalDto::from(req);
        assert_eq!(dto.suggested_constraints.len(), 1, "{dto:?}");
        let c = &dto.suggested_constraints[0];
        assert!(c.description.contains("example.com"), "{}", c.description);
        let a = answer(
            json!({"kind": "allow", "arguments": null, "scope": "always",
                              "constraints": [c.condition_json]}),
        )
        .unwrap();
        let Answer::Allow { constraints, .. } = a else {
            panic!("{a:?}")
        };
        assert_eq!(
            constraints,
            vec![Condition::DomainIn {
                arg: Some("url".into()),
                domains: vec!["example.com".into()]
            }]
        );
    }

    #[test]
    fn invalid_constraints_are_refused() {
        for bad in [
            json!(["{not json"]),
            json!(["{\"kind\": \"teleport\"}"]),
            json!([format!(
                "{{\"kind\":\"matches\",\"arg\":\"a\",\"pattern\":\"{}\"}}",
                "x".repeat(9000)
            )]),
            json!(vec!["{\"kind\":\"writes\"}"; 33]),
        ] {
            let e = answer(
                json!({"kind": "allow", "arguments": null, "scope": "always",
                                  "constraints": bad}),
            )
            .unwrap_err();
            assert_eq!(e.code, ErrorCode::Invalid);
            assert!(e.message.len() < 400, "{}", e.message);
        }
        let once = answer(json!({"kind": "allow", "arguments": null, "scope": "once",
                                 "constraints": ["{\"kind\":\"writes\"}"]}));
        assert!(once.is_err());
        assert!(
            answer(json!({"kind": "allow", "arguments": null, "scope": "once",
                              "constraints": []}))
            .is_ok()
        );
    }
}
