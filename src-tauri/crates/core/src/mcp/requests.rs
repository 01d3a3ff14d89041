//! Requests a server sends to us: elicitation (a form or a URL for the person), sampling (a model
//! completion) and roots (which folders it may see).
//!
//! The connection (the only file that speaks rmcp) turns each such request into a call on a
//! [`ServerRequests`] the host gave it for that server, and turns the answer back into the wire
//! shape. Which capabilities we declare follows from [`ClientFeatures`]: a host that cannot show a
//! form does not claim elicitation, so a server never waits on a request nobody can answer.
//!
//! Every parameter arrives as the JSON the server sent (untrusted); the host validates it.

use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// The MCP Apps extension's identifier, as clients and servers advertise it.
pub const APPS_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML document.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// What we tell servers we can do at `initialize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientFeatures {
    /// `elicitation.form`: show a form built from a schema.
    pub elicitation_form: bool,
    /// `elicitation.url`: show a URL and open it in the browser after consent.
    pub elicitation_url: bool,
    /// `sampling`: run a model completion (with a person in the loop).
    pub sampling: bool,
    /// `roots` with `listChanged`.
    pub roots: bool,
    /// The MCP Apps extension (`io.modelcontextprotocol/ui`): this host renders a tool's
    /// `text/html;profile=mcp-app` view. Only a shell with the app jail sets it.
    pub apps: bool,
}

impl ClientFeatures {
    /// Everything a desktop host with a person at the keyboard offers.
    pub const ALL: Self = Self {
        elicitation_form: true,
        elicitation_url: true,
        sampling: true,
        roots: true,
        apps: false,
    };

    /// The `capabilities` object of our `initialize` request.
    pub fn capabilities(self) -> Value {
        let mut caps = Map::new();
        if self.elicitation_form || self.elicitation_url {
            let mut modes = Map::new();
            if self.elicitation_form {
                modes.insert("form".into(), Value::Object(Map::new()));
            }
            if self.elicitation_url {
                modes.insert("url".into(), Value::Object(Map::new()));
            }
            caps.insert("elicitation".into(), Value::Object(modes));
        }
        if self.sampling {
            caps.insert("sampling".into(), Value::Object(Map::new()));
        }
        if self.roots {
            caps.insert("roots".into(), serde_json::json!({"listChanged": true}));
        }
        if self.apps {
            // The shape servers check (ext-apps; Python `mcp`'s `client_supports_apps`): the
            // extension's settings list the app MIME type.
            caps.insert(
                "extensions".into(),
                serde_json::json!({APPS_EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}),
            );
        }
        Value::Object(caps)
    }
}

/// What the person answered to `elicitation/create` (the protocol's three actions).
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// Accepted, with the form's content (empty for URL mode).
    Accept(Map<String, Value>),
    /// Declined.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

/// A folder (or other URI) a server may see; lives in the [`crate::roots`] leaf so `store` can
/// keep it too.
pub use crate::roots::Root;

/// Answers the requests of one server. Implemented by the host (with a person in the loop) and
/// by test harnesses.
pub trait ServerRequests: Send + Sync {
    /// The capabilities to declare.
    fn features(&self) -> ClientFeatures;

    /// `elicitation/create`, given its params as sent.
    fn elicit(&self, params: Value) -> BoxFuture<'static, ElicitationAnswer>;

    /// `sampling/createMessage`, given its params as sent: the result object
    /// (`{role, content, model, stopReason}`), or a refusal with a message for the server.
    fn sample(&self, params: Value) -> BoxFuture<'static, Result<Value, String>>;

    /// `roots/list`.
    fn roots(&self) -> BoxFuture<'static, Vec<Root>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capabilities_follow_the_features() {
        assert_eq!(ClientFeatures::default().capabilities(), json!({}));
        assert_eq!(
            ClientFeatures::ALL.capabilities(),
            json!({"elicitation": {"form": {}, "url": {}}, "sampling": {},
                   "roots": {"listChanged": true}})
        );
        let form_only = ClientFeatures {
            elicitation_form: true,
            ..Default::default()
        };
        assert_eq!(
            form_only.capabilities(),
            json!({"elicitation": {"form": {}}})
        );
    }

    #[test]
    fn apps_are_advertised_only_when_the_shell_renders_them() {
        let desktop = ClientFeatures {
            apps: true,
            ..ClientFeatures::ALL
        };
        let caps = desktop.capabilities();
        assert_eq!(
            caps["extensions"],
            json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
        );
        assert_eq!(caps["roots"], json!({"listChanged": true}));
        assert!(ClientFeatures::ALL
            .capabilities()
            .get("extensions")
            .is_none());
    }
}
