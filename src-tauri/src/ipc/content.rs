//! Tool, resource and prompt output as the web view renders it. Every string in here comes
//! from a server and is untrusted: the UI shows it as text, and only a short list of image
//! types ever becomes an image.

use serde::Serialize;
use specta::Type;
use switchboard_core::mcp::catalog::{
    Content, Progress, PromptResult, ResourceContents, ToolResult,
};

/// One piece of output.
#[derive(Clone, Debug, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentDto {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// Base64 data.
        data: String,
        /// Its MIME type.
        mime_type: String,
    },
    /// Audio, base64.
    Audio {
        /// Base64 data.
        data: String,
        /// Its MIME type.
        mime_type: String,
    },
    /// A link to a resource; never followed automatically (RN-03).
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type.
        mime_type: Option<String>,
    },
    /// A resource's contents.
    Resource {
        /// Its URI.
        uri: String,
        /// Its MIME type.
        mime_type: Option<String>,
        /// Text contents.
        text: Option<String>,
        /// Binary contents, base64.
        blob: Option<String>,
    },
}

impl From<ResourceContents> for ContentDto {
    fn from(r: ResourceContents) -> Self {
        Self::Resource {
            uri: r.uri,
            mime_type: r.mime_type,
            text: r.text,
            blob: r.blob,
        }
    }
}

impl From<Content> for ContentDto {
    fn from(c: Content) -> Self {
        match c {
            Content::Text { text } => Self::Text { text },
            Content::Image { data, mime_type } => Self::Image { data, mime_type },
            Content::Audio { data, mime_type } => Self::Audio { data, mime_type },
            Content::ResourceLink {
                uri,
                name,
                mime_type,
            } => Self::ResourceLink {
                uri,
                name,
                mime_type,
            },
            Content::Resource { resource } => resource.into(),
        }
    }
}

/// The result of a tool call.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ToolResultDto {
    /// Unstructured content, in order.
    pub content: Vec<ContentDto>,
    /// Structured content, pretty-printed JSON.
    pub structured_content: Option<String>,
    /// Whether the tool reports failure.
    pub is_error: bool,
}

impl From<ToolResult> for ToolResultDto {
    fn from(r: ToolResult) -> Self {
        Self {
            content: r.content.into_iter().map(Into::into).collect(),
            structured_content: r
                .structured_content
                .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default()),
            is_error: r.is_error,
        }
    }
}

/// Progress of a running call.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ProgressDto {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// The server's message (untrusted text).
    pub message: Option<String>,
}

impl From<Progress> for ProgressDto {
    fn from(p: Progress) -> Self {
        Self {
            progress: p.progress,
            total: p.total,
            message: p.message,
        }
    }
}

/// One message of an expanded prompt.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PromptMessageDto {
    /// `user` or `assistant`.
    pub role: String,
    /// Its content.
    pub content: ContentDto,
}

/// An expanded prompt.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PromptResultDto {
    /// Its description.
    pub description: Option<String>,
    /// The messages it produces.
    pub messages: Vec<PromptMessageDto>,
}

impl From<PromptResult> for PromptResultDto {
    fn from(p: PromptResult) -> Self {
        Self {
            description: p.description,
            messages: p
                .messages
                .into_iter()
                .map(|m| PromptMessageDto {
                    role: m.role,
                    content: m.content.into(),
                })
                .collect(),
        }
    }
}
