//! The MCP App a request comes from (AP-10): a `ui://` document of one server, shown in a
//! frame. An app acts as itself, not as the person who opened it nor as the model whose call
//! showed it, so its requests carry an origin of their own ([`super::Origin::App`]) naming it.
//!
//! What that origin means for the policy (`policy::decide`):
//! - a grant covers an app's calls only when it was answered to that app (the grant names the
//!   app's document, `Source::Grant::app`); a grant given to the person's own runs or to a
//!   model covers no app, and an app's grant covers nothing else;
//! - a rule limited to another origin (`manual`, `model`) does not allow an app's call, but
//!   still asks about or denies it: a tightening is never escaped by calling from a frame;
//! - the trifecta guard counts an app's calls in the conversation the app is shown in.
//!
//! What an app may call at all (its own server's tools that the server shows to apps, the
//! `_meta.ui.visibility` of the Apps extension) is checked before the policy, in
//! `host::app_calls`.

use serde::{Deserialize, Serialize};

use crate::ids::ServerId;

/// One server's app: the server and the `ui://` document it serves.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AppRef {
    /// The server whose document it is (and the only server whose tools it may call).
    pub server: ServerId,
    /// The document's `ui://` URI.
    pub uri: String,
}

impl AppRef {
    /// Who asks, in words: "the app ui://x/view.html of server weather".
    pub fn describe(&self) -> String {
        format!(
            "the app {} of server {}",
            crate::escape::short_for_display(&self.uri, 120),
            self.server
        )
    }

    /// How the audit log names it as the actor (`app:<server> <uri>`).
    pub fn actor_name(&self) -> String {
        format!("{} {}", self.server, self.uri)
    }
}

/// Whether a rule's `origin` lets it apply to a request from `origin`. A rule without one
/// applies to all. A rule limited to one origin applies to that origin; to an app's request it
/// applies too when it only tightens (ask, deny): limited to a person's runs or to a model, it
/// allows no app, but an app does not slip past what it forbids.
pub(super) fn origin_applies(rule: &super::Rule, origin: &super::Origin) -> bool {
    match rule.origin.as_deref() {
        None => true,
        Some(o) if o == origin.word() => true,
        Some(_) => origin.app().is_some() && rule.effect != super::Effect::Allow,
    }
}
