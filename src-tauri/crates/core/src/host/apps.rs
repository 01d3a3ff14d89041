//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): finding a tool's interactive view and
//! loading its HTML for a shell to render.
//!
//! A tool declares its view as `_meta.ui.resourceUri` (older servers: `_meta["ui/resourceUri"]`);
//! a result may also carry it as a `resource_link` or an embedded resource. Either way it is a
//! `ui://` resource served as `text/html;profile=mcp-app`. The host never renders it: it reads
//! it through the governed seam ([`Host::read_resource`], so policy, holds and the audit log
//! apply as to any read), checks the scheme, the MIME type and the size, and hands the text to
//! a shell, which renders it in a jail (its own origin, a strict CSP, no IPC).
//!
//! The checks are pure functions so the desktop shell and tests share them.

use serde_json::Value;

use super::{CallOptions, Host, HostError};
use crate::approval::Origin;
use crate::ids::ServerId;
use crate::mcp::catalog::{Content, ResourceContents, ToolResult};

/// The extension's identifier, as servers and clients advertise it.
pub const EXTENSION_ID: &str = crate::mcp::requests::APPS_EXTENSION_ID;
/// The MIME type of an app's HTML.
pub const APP_MIME: &str = crate::mcp::requests::APP_MIME_TYPE;
/// The largest app document accepted, in bytes. Real apps bundle their scripts inline and stay
/// well under this; a larger one is refused rather than handed to the web view.
pub const APP_HTML_MAX: usize = 4 * 1024 * 1024;
/// The longest `ui://` URI accepted.
pub const APP_URI_MAX: usize = 2048;

/// Why an app cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The read failed or was refused (policy, a hold, the server).
    #[error(transparent)]
    Host(#[from] HostError),
    /// Not a `ui://` URI.
    #[error("an app's view must be a ui:// resource, not {0}")]
    NotUi(String),
    /// The server answered with something other than an app document.
    #[error("the resource is {0}, not an app ({APP_MIME})")]
    WrongMime(String),
    /// The document is larger than [`APP_HTML_MAX`].
    #[error("the app is {0} bytes, more than the {APP_HTML_MAX} allowed")]
    TooLarge(usize),
    /// The read returned no text for the URI.
    #[error("the server returned no app document for {0}")]
    Missing(String),
    /// A link the app asked to open is not one Switchboard opens.
    #[error(transparent)]
    Link(#[from] crate::opener::UrlRefusal),
    /// The browser could not be started.
    #[error("the browser could not be started: {0}")]
    Open(String),
    /// The frame is not open (never opened by a shell, or closed after it navigated away).
    #[error(
        "this app's frame is not open: an app can load and call only from the frame opened for it"
    )]
    NoFrame,
    /// The tool is not one its server shows to apps (AP-10).
    #[error("the app may not call {tool}: server {server} does not make it visible to apps (its _meta.ui.visibility leaves out \"app\")")]
    Hidden {
        /// The app's server.
        server: ServerId,
        /// The tool asked for.
        tool: String,
    },
    /// The agent whose conversation shows the app may not call the tool (its scope or a deny
    /// tightening), so its app may not either.
    #[error("the app may not call {tool}: agent {agent}'s profile does not allow it")]
    Agent {
        /// The agent.
        agent: crate::agent_data::AgentName,
        /// The tool asked for.
        tool: String,
    },
}

/// An app's document, ready for a shell's jail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppDocument {
    /// The server it came from.
    pub server: ServerId,
    /// Its `ui://` URI.
    pub uri: String,
    /// The HTML.
    pub html: String,
}

/// A valid app URI: `ui://`, bounded, no control characters.
pub fn is_app_uri(uri: &str) -> bool {
    uri.len() <= APP_URI_MAX
        && uri
            .get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("ui://"))
        && uri.len() > 5
        && !uri.chars().any(char::is_control)
}

/// The `ui://` view a tool declares in its `_meta`: `ui.resourceUri`, or the older flat
/// `ui/resourceUri` key.
pub fn declared_view(meta: Option<&Value>) -> Option<&str> {
    let meta = meta?;
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
        .filter(|u| is_app_uri(u))
}

/// The `ui://` view a result points to: the first `resource_link` or embedded resource whose
/// URI is `ui://`.
pub fn result_view(result: &ToolResult) -> Option<&str> {
    result.content.iter().find_map(|c| match c {
        Content::ResourceLink { uri, .. }
        | Content::Resource {
            resource: ResourceContents { uri, .. },
        } if is_app_uri(uri) => Some(uri.as_str()),
        _ => None,
    })
}

/// The `ui://` view of a result kept as JSON (a chat turn's `ChatEvent::ToolResult::full`).
pub fn result_view_json(full: &Value) -> Option<String> {
    let result: ToolResult = serde_json::from_value(full.clone()).ok()?;
    result_view(&result).map(str::to_owned)
}

/// Whether `mime` is the app MIME type (case and spaces around `;` do not matter).
pub fn is_app_mime(mime: &str) -> bool {
    let norm: String = mime
        .split(';')
        .map(|p| p.trim().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(";");
    norm == APP_MIME
}

/// Picks the app document for `uri` out of a read's contents and checks it.
pub fn app_html(uri: &str, contents: Vec<ResourceContents>) -> Result<String, AppError> {
    let item = contents
        .into_iter()
        .find(|c| c.uri == uri)
        .ok_or_else(|| AppError::Missing(uri.to_owned()))?;
    let mime = item.mime_type.unwrap_or_default();
    if !is_app_mime(&mime) {
        return Err(AppError::WrongMime(if mime.is_empty() {
            "untyped".into()
        } else {
            crate::escape::short_for_display(&mime, 80)
        }));
    }
    let html = item.text.ok_or_else(|| AppError::Missing(uri.to_owned()))?;
    if html.len() > APP_HTML_MAX {
        return Err(AppError::TooLarge(html.len()));
    }
    Ok(html)
}

impl Host {
    /// Opens a link an app asked to open (`ui/open-link`), once the person agreed to it in the
    /// window: only what [`crate::opener::check`] accepts, and only through the host's one
    /// opener (RN-02), like an elicitation URL. The app itself never opens anything.
    pub fn open_app_link(&self, url: &str) -> Result<crate::opener::CheckedUrl, AppError> {
        let checked = crate::opener::check(url)?;
        self.open_in_browser(&checked)
            .map_err(|e| AppError::Open(e.to_string()))?;
        Ok(checked)
    }

    /// Reads the app at `uri` of `server` through the seam and checks it (scheme, MIME type,
    /// size). `origin` is who caused the render (the person's run, or a model's call in a
    /// conversation); the read is decided and audited like any other.
    pub async fn load_app(
        &self,
        server: &ServerId,
        uri: &str,
        origin: Origin,
    ) -> Result<AppDocument, AppError> {
        if !is_app_uri(uri) {
            return Err(AppError::NotUi(crate::escape::short_for_display(uri, 80)));
        }
        let contents = self
            .read_resource(server, uri, origin, CallOptions::default())
            .await?;
        Ok(AppDocument {
            server: server.clone(),
            uri: uri.to_owned(),
            html: app_html(uri, contents)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contents(uri: &str, mime: Option<&str>, text: &str) -> Vec<ResourceContents> {
        vec![ResourceContents {
            uri: uri.into(),
            mime_type: mime.map(Into::into),
            text: Some(text.into()),
            blob: None,
        }]
    }

    #[test]
    fn the_view_is_found_in_meta_and_in_results() {
        let m = json!({"ui": {"resourceUri": "ui://a/app.html"}});
        assert_eq!(declared_view(Some(&m)), Some("ui://a/app.html"));
        let old = json!({"ui/resourceUri": "ui://b"});
        assert_eq!(declared_view(Some(&old)), Some("ui://b"));
        for bad in [
            json!({"ui": {"resourceUri": "https://evil/app.html"}}),
            json!({"ui": {"resourceUri": 3}}),
            json!({"ui": {"resourceUri": "ui://"}}),
            json!({"ui": {"resourceUri": "ui://a\nb"}}),
            json!({}),
        ] {
            assert_eq!(declared_view(Some(&bad)), None, "{bad}");
        }
        let r: ToolResult = serde_json::from_value(json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "resource_link", "uri": "file:///x", "name": "x"},
            {"type": "resource_link", "uri": "ui://c/app", "name": "app"}
        ]}))
        .unwrap();
        assert_eq!(result_view(&r), Some("ui://c/app"));
        let full = serde_json::to_value(&r).unwrap();
        assert_eq!(result_view_json(&full).as_deref(), Some("ui://c/app"));
        assert_eq!(result_view_json(&json!({"content": "nope"})), None);
    }

    #[test]
    fn only_an_app_document_of_bounded_size_passes() {
        let uri = "ui://a/app.html";
        assert_eq!(
            app_html(uri, contents(uri, Some("text/html;profile=mcp-app"), "<p>")).unwrap(),
            "<p>"
        );
        assert!(app_html(
            uri,
            contents(uri, Some("Text/HTML; profile=mcp-app"), "<p>")
        )
        .is_ok());
        for mime in [None, Some("text/html"), Some("text/plain;profile=mcp-app")] {
            assert!(matches!(
                app_html(uri, contents(uri, mime, "<p>")),
                Err(AppError::WrongMime(_))
            ));
        }
        let big = "x".repeat(APP_HTML_MAX + 1);
        assert!(matches!(
            app_html(uri, contents(uri, Some(APP_MIME), &big)),
            Err(AppError::TooLarge(_))
        ));
        assert!(matches!(
            app_html(uri, contents("ui://other", Some(APP_MIME), "<p>")),
            Err(AppError::Missing(_))
        ));
    }
}
