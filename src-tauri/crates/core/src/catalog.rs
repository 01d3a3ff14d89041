//! What servers offer, in our own types.
//!
//! These mirror the MCP shapes we use, decoupled from `rmcp`'s model types (which churn between
//! major versions). [`mcp::connection`](crate::mcp::connection) converts at the boundary through
//! `serde_json`, so a field rmcp adds or renames cannot ripple past that file. Schemas stay as
//! JSON values: they are data for validators and form generators, never configuration.
//!
//! A leaf of plain data (re-exported as `mcp::catalog`, where it used to live): `approval` pins
//! these types and answers with a [`ToolResult`], and must not depend on `mcp`, which runs the
//! servers.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// Status types live in the leaf `status` (events and the supervisor share them).
pub use crate::status::{Capabilities, PeerInfo, Progress};

/// One tool as the server describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// The tool's name, exactly as the server reports it.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (untrusted text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (untrusted; they may only add friction, TD-01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons the server offers for the tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Extension metadata, kept as sent; MCP Apps' `ui.resourceUri` lives here.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ToolInfo {
    /// The hints the server claims for this tool, as short labels ("read-only",
    /// "destructive", "idempotent", "open world"). Claims only: they never relax approval.
    pub fn claimed_hints(&self) -> Vec<String> {
        let Some(a) = &self.annotations else {
            return Vec::new();
        };
        [
            (a.read_only_hint, "read-only"),
            (a.destructive_hint, "destructive"),
            (a.idempotent_hint, "idempotent"),
            (a.open_world_hint, "open world"),
        ]
        .into_iter()
        .filter(|(v, _)| *v == Some(true))
        .map(|(_, label)| label.to_owned())
        .collect()
    }
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// Tool annotations (all optional hints).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Claims not to modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// Claims it may destroy data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Claims repeating a call has no extra effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Claims it talks to the outside world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// An icon reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// The icon's URI (often a `data:` URI).
    pub src: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A concrete resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A parameterised resource (RFC 6570 URI template).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    /// The URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of what it yields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A prompt template.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    /// Its name.
    pub name: String,
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

/// One prompt argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default)]
    pub required: bool,
}

/// Everything a server offers, as last listed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Tools.
    pub tools: Vec<ToolInfo>,
    /// Resources.
    pub resources: Vec<ResourceInfo>,
    /// Resource templates.
    pub resource_templates: Vec<ResourceTemplateInfo>,
    /// Prompts.
    pub prompts: Vec<PromptInfo>,
    /// The server's `instructions` (untrusted text).
    pub instructions: Option<String>,
    /// Tools left out because their input schema does not compile, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_tools: Vec<(String, String)>,
    /// Compiled input schemas of [`Catalog::tools`], by tool name.
    #[serde(skip)]
    pub validators: crate::schema::Validators,
}

/// One piece of tool or prompt output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource (never fetched automatically, RN-03).
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        #[serde(default)]
        name: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// An embedded resource.
    Resource {
        /// The resource contents.
        resource: ResourceContents,
    },
}

/// The contents of one resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The URI read.
    pub uri: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// The result of a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Unstructured content.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured content, if the tool returns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reports failure (a tool-level error, not a protocol error).
    #[serde(default)]
    pub is_error: bool,
}

/// One message of an expanded prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// Its content.
    pub content: Content,
}

/// An expanded prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptResult {
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// Tool-call arguments: a JSON object.
pub type Arguments = Map<String, Value>;

/// A shared, immutable catalog snapshot.
pub type CatalogSnapshot = Arc<Catalog>;
