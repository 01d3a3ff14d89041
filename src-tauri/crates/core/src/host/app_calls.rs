//! What an MCP App may do as itself (AP-10): which frames exist and what each holds, the tool
//! calls an app makes from its frame, and the audit of what it was refused.
//!
//! **Frames.** A shell opens a frame for one app ([`Host::open_app_frame`]) and gets a random
//! id; the frame's address names only that id, and [`Host::load_app_frame`] serves the
//! frame's own document and nothing else. A frame that navigates to any other address (another
//! server's document under the old `?server=…&uri=…` form, a guessed id) is refused and
//! audited ([`Host::refuse_app_address`]); a shell that sees its frame load a second time
//! reports it ([`Host::app_navigated`]), which closes the frame and audits the app by name.
//! Ids are 128 random bits and never sent to a frame, so one frame cannot name another's.
//!
//! **Calls.** [`Host::run_app_tool`] takes a tool name only, so an app reaches its own server
//! and no other. Before the seam, the tool must be one the server shows to apps: the Apps
//! extension's `_meta.ui.visibility` includes `"app"`, or is absent (the extension's default is
//! `["model", "app"]`); others are refused with the reason, and the refusal is audited. When
//! the app is shown in an agent's conversation, that agent's scope and tightenings apply as to
//! the agent's own calls. Then the call goes through [`Host::run_tool`] with
//! [`Origin::App`]: its own grants, named in the dialog and the audit log (`approval::app`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use serde_json::{json, Value};

use super::apps::{is_app_uri, AppDocument, AppError};
use super::{CallOptions, Host, HostError};
use crate::agent_data::{AgentName, Tighten};
use crate::approval::audit::{Actor, AuditContext, AuditEvent, CallRef, Verdict};
use crate::approval::{Acting, AppRef, Origin, RequestKind};
use crate::ids::{ConversationId, ServerId, ToolRef};
use crate::mcp::catalog::{Arguments, ToolResult};
use crate::store::StoreError;

/// The frames kept open at once; opening more forgets the oldest (its document no longer
/// loads, its calls are refused), so a window that never closes frames holds bounded memory.
pub const FRAMES_MAX: usize = 256;

/// The extension's word for "callable by the app".
const APP_AUDIENCE: &str = "app";

/// Whether a tool with this `_meta` may be called by an app of its server: its
/// `ui.visibility` lists `"app"`, or it has none (the default is `["model", "app"]`). A
/// visibility that is present but not a list of strings shows the tool to no app (fail closed).
pub fn visible_to_apps(meta: Option<&Value>) -> bool {
    let Some(visibility) = meta
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
    else {
        return true;
    };
    visibility
        .as_array()
        .is_some_and(|v| v.iter().any(|a| a.as_str() == Some(APP_AUDIENCE)))
}

/// An open frame's id, as its address carries it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AppFrameId(String);

impl AppFrameId {
    fn random() -> Self {
        Self(hex::encode(rand::random::<[u8; 16]>()))
    }

    /// Reads an id a shell got from [`Host::open_app_frame`]; `None` when it cannot be one.
    pub fn parse(s: &str) -> Option<Self> {
        (s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| Self(s.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for AppFrameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An open frame: the app it holds and where it is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Frame {
    app: AppRef,
    shown: ShownIn,
}

/// The open frames and the app each holds. A `std` mutex: every section is a map lookup.
#[derive(Debug, Default)]
pub(super) struct AppFrames {
    open: Mutex<(HashMap<AppFrameId, Frame>, VecDeque<AppFrameId>)>,
}

impl AppFrames {
    fn open(&self, app: Frame) -> AppFrameId {
        let id = AppFrameId::random();
        let mut g = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (map, order) = &mut *g;
        while order.len() >= FRAMES_MAX {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
        map.insert(id.clone(), app);
        order.push_back(id.clone());
        id
    }

    fn get(&self, id: &AppFrameId) -> Option<Frame> {
        let g = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        g.0.get(id).cloned()
    }

    fn close(&self, id: &AppFrameId) -> Option<Frame> {
        let mut g = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (map, order) = &mut *g;
        order.retain(|o| o != id);
        map.remove(id)
    }
}

/// Where a frame is shown, fixed when it is opened: the conversation (and the agent answering
/// in it) whose call showed the app, or neither under a person's own run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShownIn {
    /// The conversation the app is shown in; `None` under a person's own run.
    pub conversation: Option<ConversationId>,
    /// The agent answering in that conversation, if one does.
    pub agent: Option<AgentName>,
}

impl Host {
    /// Opens a frame for the app `uri` of `server`, shown where `shown` says, and returns its
    /// id: the one address that loads that document, and the one handle its calls go by. The
    /// conversation must exist, and the agent too (its scope applies to every call).
    pub async fn open_app_frame(
        &self,
        server: &ServerId,
        uri: &str,
        shown: ShownIn,
    ) -> Result<AppFrameId, AppError> {
        if !is_app_uri(uri) {
            return Err(AppError::NotUi(crate::escape::short_for_display(uri, 80)));
        }
        if let Some(c) = &shown.conversation {
            self.inner
                .store
                .get_conversation(c)
                .await
                .map_err(HostError::from)?
                .ok_or_else(|| {
                    HostError::Store(StoreError::NotFound(format!("conversation {c}")))
                })?;
        }
        if let Some(a) = &shown.agent {
            self.agent(a).await?;
        }
        let app = AppRef {
            server: server.clone(),
            uri: uri.to_owned(),
        };
        Ok(self.inner.seam.app_frames.open(Frame { app, shown }))
    }

    /// The document of frame `id`, read through the seam like [`Host::load_app`]. An id no
    /// shell opened (or one closed since) is refused and audited.
    pub async fn load_app_frame(&self, id: &str) -> Result<AppDocument, AppError> {
        let Some(Frame { app, .. }) =
            AppFrameId::parse(id).and_then(|f| self.inner.seam.app_frames.get(&f))
        else {
            self.refuse_app_address(None).await;
            return Err(AppError::NoFrame);
        };
        self.load_app(&app.server, &app.uri, Origin::Manual).await
    }

    /// Audits a frame's request for an address that is not an open frame's: `asked` is the
    /// server and document it named, when it named one (the old `?server=…&uri=…` form).
    pub async fn refuse_app_address(&self, asked: Option<(&ServerId, &str)>) {
        let reason = "an app frame asked for a document that is not its own; an app may load \
                      only the document its frame was opened for";
        let (ctx, uri) = match asked {
            Some((server, uri)) => (
                AuditContext::for_request(server, uri, &Origin::Manual, CallRef::random()),
                uri,
            ),
            None => (AuditContext::default(), "(unknown frame)"),
        };
        self.audit_app_refusal(
            RequestKind::Resource,
            json!({ "uri": uri }),
            Actor::System,
            reason,
            ctx,
        )
        .await;
    }

    /// A shell saw frame `id` navigate away from its document: the frame is closed (its
    /// address loads nothing more, its calls are refused) and the app is named in the audit
    /// log. `false` when no such frame was open.
    pub async fn app_navigated(&self, id: &AppFrameId) -> bool {
        let Some(Frame { app, shown }) = self.inner.seam.app_frames.close(id) else {
            return false;
        };
        let origin = Origin::App {
            app: app.clone(),
            conversation: shown.conversation,
            agent: shown.agent.map(|agent| Acting {
                agent,
                for_agent: None,
            }),
        };
        let ctx = AuditContext::for_request(&app.server, &app.uri, &origin, CallRef::random());
        let reason = "the app navigated its frame away from its own document; it was stopped";
        self.audit_app_refusal(
            RequestKind::Resource,
            json!({ "uri": app.uri, "navigated": true }),
            Actor::from_origin(&origin),
            reason,
            ctx,
        )
        .await;
        true
    }

    /// Runs `tool` of the app's own server for the app in `frame` (see the module docs):
    /// visible to apps, within the showing agent's scope and tightenings, then through the seam
    /// as [`Origin::App`].
    pub async fn run_app_tool(
        &self,
        frame: &AppFrameId,
        tool: &str,
        arguments: Arguments,
        mut opts: CallOptions,
    ) -> Result<ToolResult, AppError> {
        let Frame { app, shown } = self
            .inner
            .seam
            .app_frames
            .get(frame)
            .ok_or(AppError::NoFrame)?;
        let agent = match &shown.agent {
            Some(name) => Some(self.agent(name).await?),
            None => None,
        };
        let origin = Origin::App {
            app: app.clone(),
            conversation: shown.conversation.clone(),
            agent: agent.as_ref().map(|p| Acting {
                agent: p.name.clone(),
                for_agent: None,
            }),
        };
        let target = ToolRef {
            server: app.server.clone(),
            tool: tool.into(),
        };
        let refusal = self.app_refusal(&target, agent.as_ref(), &mut opts);
        if let Some(refused) = refusal {
            let ctx = AuditContext::for_request(&app.server, tool, &origin, CallRef::random());
            let reason = refused.to_string();
            self.audit_app_refusal(
                RequestKind::Tool,
                Value::Object(arguments),
                Actor::from_origin(&origin),
                &reason,
                ctx,
            )
            .await;
            return Err(refused);
        }
        Ok(self.run_tool(&target, arguments, origin, opts).await?)
    }

    /// Why the app may not call `tool` at all, if it may not; sets the agent's `ask` on `opts`.
    fn app_refusal(
        &self,
        tool: &ToolRef,
        agent: Option<&crate::agent_data::AgentProfile>,
        opts: &mut CallOptions,
    ) -> Option<AppError> {
        let hidden = || AppError::Hidden {
            server: tool.server.clone(),
            tool: crate::escape::short_for_display(&tool.tool, 128),
        };
        // An unknown tool is left to the seam's own check, which names it.
        if let Some(handle) = self.handle(&tool.server) {
            let catalog = handle.catalog();
            if let Some(info) = catalog.tools.iter().find(|t| t.name == *tool.tool) {
                if !visible_to_apps(info.meta.as_ref()) {
                    return Some(hidden());
                }
            }
        }
        let profile = agent?;
        let outside = || AppError::Agent {
            agent: profile.name.clone(),
            tool: crate::escape::short_for_display(&tool.tool, 128),
        };
        if !profile.scope.allows(tool.server.as_str(), &tool.tool) {
            return Some(outside());
        }
        match profile.tightening_for(tool.server.as_str(), &tool.tool) {
            Some(Tighten::Deny) => Some(outside()),
            Some(Tighten::Ask) => {
                opts.ask = Some(format!(
                    "Agent {}'s profile asks a person before every call of {tool}.",
                    profile.name
                ));
                None
            }
            None => None,
        }
    }

    /// Records a request refused before the seam: proposed by `by`, denied by Switchboard.
    async fn audit_app_refusal(
        &self,
        request: RequestKind,
        arguments: Value,
        by: Actor,
        reason: &str,
        ctx: AuditContext,
    ) {
        let events = vec![
            (
                AuditEvent::Proposed {
                    request,
                    arguments,
                    by,
                },
                ctx.clone(),
            ),
            (
                AuditEvent::Decided {
                    decision: Verdict::Deny,
                    by: Actor::System,
                    reason: Some(reason.to_owned()),
                },
                ctx,
            ),
        ];
        self.audit_all(events).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AP-10: the extension's visibility, its default when absent, and a malformed one
    /// failing closed.
    #[test]
    fn only_tools_the_server_shows_to_apps_are_callable_by_apps() {
        for (meta, visible) in [
            (None, true),
            (Some(json!({})), true),
            (Some(json!({"ui": {"resourceUri": "ui://a"}})), true),
            (Some(json!({"ui": {"visibility": ["model", "app"]}})), true),
            (Some(json!({"ui": {"visibility": ["app"]}})), true),
            (Some(json!({"ui": {"visibility": ["model"]}})), false),
            (Some(json!({"ui": {"visibility": []}})), false),
            (Some(json!({"ui": {"visibility": "app"}})), false),
            (Some(json!({"ui": {"visibility": null}})), false),
            (Some(json!({"ui": {"visibility": ["App"]}})), false),
        ] {
            assert_eq!(visible_to_apps(meta.as_ref()), visible, "{meta:?}");
        }
    }

    #[test]
    fn frame_ids_are_random_and_parse_back_only_as_ids() {
        let a = AppFrameId::random();
        assert_ne!(a, AppFrameId::random());
        assert_eq!(AppFrameId::parse(a.as_str()), Some(a));
        for bad in ["", "xyz", &"g".repeat(32), &"a".repeat(33)] {
            assert_eq!(AppFrameId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_oldest_frames_are_forgotten_past_the_cap() {
        let frames = AppFrames::default();
        let app = |n: usize| Frame {
            app: AppRef {
                server: ServerId::new("s").unwrap(),
                uri: format!("ui://s/{n}"),
            },
            shown: ShownIn::default(),
        };
        let first = frames.open(app(0));
        let ids: Vec<_> = (1..=FRAMES_MAX).map(|n| frames.open(app(n))).collect();
        assert_eq!(frames.get(&first), None);
        assert_eq!(frames.get(&ids[0]), Some(app(1)));
        assert_eq!(frames.close(&ids[0]), Some(app(1)));
        assert_eq!(frames.get(&ids[0]), None);
    }
}
