//! Pin review commands (TD-02) and hygiene findings (TD-04): what changed on a server since
//! its tools were approved, approving it, and the flags on a tool's texts.
//!
//! Every server-provided text leaves here with hidden characters made visible
//! (`hygiene::reveal`), so the web view shows `⟨U+202E⟩` where a bidi override hides.

use serde::Serialize;
use specta::Type;
use switchboard_core::approval::pins::{Change, HoldReason, ItemKind};
use switchboard_core::host::{Host, PinReview};
use switchboard_core::hygiene::{reveal, Finding, FindingKind};
use switchboard_core::ids::ToolRef;
use tauri::State;

use super::{logged, IpcError};

/// What kind of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum FindingKindDto {
    /// Hidden characters (ANSI, controls, bidi, zero-width, tags).
    Hidden,
    /// An instruction-like phrase.
    Injection,
    /// A path to secrets.
    SensitivePath,
    /// Another server's tool named.
    Shadowing,
    /// Over a size cap.
    Oversize,
    /// A tool name outside the specification's recommended characters.
    UnusualName,
}

/// One flag on a tool's (or the instructions') text.
#[derive(Clone, Debug, Serialize, Type)]
pub struct FindingDto {
    /// Where (`description`, `inputSchema/properties/x/description`, ...).
    pub field: String,
    /// What kind.
    pub kind: FindingKindDto,
    /// One sentence for a person.
    pub message: String,
    /// The text around it, hidden characters made visible.
    pub excerpt: String,
}

impl From<&Finding> for FindingDto {
    fn from(f: &Finding) -> Self {
        Self {
            field: reveal(&f.field),
            kind: match f.kind {
                FindingKind::Hidden(_) => FindingKindDto::Hidden,
                FindingKind::Injection(_) => FindingKindDto::Injection,
                FindingKind::SensitivePath(_) => FindingKindDto::SensitivePath,
                FindingKind::Shadowing(_) => FindingKindDto::Shadowing,
                FindingKind::Oversize { .. } => FindingKindDto::Oversize,
                FindingKind::UnusualName(_) => FindingKindDto::UnusualName,
            },
            message: reveal(&f.describe()),
            excerpt: f.excerpt.clone(),
        }
    }
}

/// How an item differs from what was approved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    /// Not approved before.
    Added,
    /// Its definition differs.
    Changed,
    /// Gone from the server.
    Removed,
}

/// What kind of item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ItemKindDto {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
    /// A resource template.
    ResourceTemplate,
    /// The server's instructions.
    Instructions,
}

impl From<ItemKind> for ItemKindDto {
    fn from(k: ItemKind) -> Self {
        match k {
            ItemKind::Tool => Self::Tool,
            ItemKind::Prompt => Self::Prompt,
            ItemKind::ResourceTemplate => Self::ResourceTemplate,
            ItemKind::Instructions => Self::Instructions,
        }
    }
}

/// One field, before and after, hidden characters made visible.
#[derive(Clone, Debug, Serialize, Type)]
pub struct FieldChangeDto {
    /// Which field, for a person ("description of parameter path").
    pub label: String,
    /// As approved.
    pub before: Option<String>,
    /// As now.
    pub after: Option<String>,
}

/// One item to review.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ChangeDto {
    /// Its kind.
    pub kind: ItemKindDto,
    /// Its name (empty for instructions), hidden characters made visible.
    pub name: String,
    /// The name to approve it by (exactly as the server sent it).
    pub key: String,
    /// Added, changed or removed.
    pub status: ChangeStatus,
    /// What differs.
    pub fields: Vec<FieldChangeDto>,
    /// Flags on its new text.
    pub findings: Vec<FindingDto>,
}

/// What a person reviews for one server.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PinReviewDto {
    /// The server.
    pub server: String,
    /// Send this back when approving: an approval of a surface that changed since is refused.
    pub surface: String,
    /// Whether this is the running server's catalog (else the record of the last one seen).
    pub live: bool,
    /// Whether the server's instructions changed (they are not sent to models until approved).
    pub instructions_changed: bool,
    /// How many tools a server's first pin takes without review.
    pub first_pin_cap: u32,
    /// Everything that differs.
    pub changes: Vec<ChangeDto>,
}

fn change(c: &Change, status: ChangeStatus, review: &PinReview) -> ChangeDto {
    ChangeDto {
        kind: c.kind.into(),
        name: reveal(&c.name),
        key: c.name.clone(),
        status,
        fields: c
            .fields
            .iter()
            .map(|f| FieldChangeDto {
                label: reveal(&f.field.to_string()),
                before: f.before.as_deref().map(reveal),
                after: f.after.as_deref().map(reveal),
            })
            .collect(),
        findings: match status {
            ChangeStatus::Removed => Vec::new(),
            _ => review
                .findings
                .get(&c.name)
                .map(|fs| fs.iter().map(Into::into).collect())
                .unwrap_or_default(),
        },
    }
}

impl From<&PinReview> for PinReviewDto {
    fn from(r: &PinReview) -> Self {
        let d = &r.diff;
        let changes = d
            .changed
            .iter()
            .map(|c| change(c, ChangeStatus::Changed, r))
            .chain(d.added.iter().map(|c| change(c, ChangeStatus::Added, r)))
            .chain(
                d.removed
                    .iter()
                    .map(|c| change(c, ChangeStatus::Removed, r)),
            )
            .collect();
        Self {
            server: r.server.to_string(),
            surface: r.surface.clone(),
            live: r.live,
            instructions_changed: d.instructions_changed,
            first_pin_cap: u32::try_from(r.first_pin_cap).unwrap_or(u32::MAX),
            changes,
        }
    }
}

/// A tool name from the web view: MCP names are 1 to 128 characters, so anything far longer
/// is not one the catalog showed.
pub(super) fn tool_name(tool: &str) -> Result<(), IpcError> {
    if tool.is_empty() || tool.len() > 512 {
        return Err(IpcError::invalid(format!(
            "not a tool name ({} bytes)",
            tool.len()
        )));
    }
    Ok(())
}

/// What changed on a server since its tools were approved.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn pin_review(host: State<'_, Host>, server: String) -> Result<PinReviewDto, IpcError> {
    let review = host.pin_review(&Host::server_id(&server)?).await?;
    Ok((&review).into())
}

/// Approves the reviewed changes: all of them (`names` absent) or those tools, prompts and
/// templates. Returns how many items were approved.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn approve_pin_changes(
    host: State<'_, Host>,
    server: String,
    names: Option<Vec<String>>,
    surface: String,
) -> Result<u32, IpcError> {
    for n in names.iter().flatten() {
        tool_name(n)?;
    }
    let n = host
        .approve_reviewed(&Host::server_id(&server)?, names, Some(&surface))
        .await?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The hygiene findings of one tool (for the approval prompt).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), tool = %logged(&tool)))]
pub async fn tool_findings(
    host: State<'_, Host>,
    server: String,
    tool: String,
) -> Result<Vec<FindingDto>, IpcError> {
    tool_name(&tool)?;
    let tool = ToolRef {
        server: Host::server_id(&server)?,
        tool: tool.into(),
    };
    Ok(host
        .findings_for(&tool)
        .await?
        .iter()
        .map(Into::into)
        .collect())
}

/// How a held tool shows in the catalog.
pub fn held_label(r: HoldReason) -> String {
    match r {
        HoldReason::New => "new since you approved this server; review it".into(),
        HoldReason::Changed => "changed since you approved it; review it".into(),
    }
}
