//! A server's pinned surface as data (TD-02): which item ([`ItemKey`]: its [`ItemKind`] and
//! name), its digest and canonical JSON as pinned ([`PinnedItem`]), a whole surface ([`Pin`]),
//! and why an item waits for review ([`HoldReason`]), with the words each kind and reason is
//! stored as.
//!
//! A leaf of plain data because two modules need it and must not need each other: `store`
//! keeps pins and held items in its tables, and `approval` computes and compares them
//! (`approval::pins`, which re-exports everything here, holds the digests over catalog items,
//! [`Pin`]'s constructors and the review rules). It used to live in `approval::pins`, which
//! made `store` and `approval` import each other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What kind of item of a server's surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
    /// A resource template.
    ResourceTemplate,
    /// The server's `instructions` (one per server; its name is empty).
    Instructions,
}

impl ItemKind {
    /// The kind as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Prompt => "prompt",
            Self::ResourceTemplate => "resource_template",
            Self::Instructions => "instructions",
        }
    }

    /// Reads a stored kind.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Tool,
            Self::Prompt,
            Self::ResourceTemplate,
            Self::Instructions,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// Which item: its kind and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ItemKey {
    /// Its kind.
    pub kind: ItemKind,
    /// Its name (empty for instructions).
    pub name: String,
}

impl ItemKey {
    /// A tool's key.
    pub fn tool(name: &str) -> Self {
        Self {
            kind: ItemKind::Tool,
            name: name.to_owned(),
        }
    }

    /// The instructions' key.
    pub fn instructions() -> Self {
        Self {
            kind: ItemKind::Instructions,
            name: String::new(),
        }
    }
}

/// One item as pinned: its digest and the canonical JSON it was computed over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedItem {
    /// Hex SHA-256 of `canonical`.
    pub digest: String,
    /// The item's canonical JSON.
    pub canonical: String,
}

/// A server's surface, item by item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pin {
    /// Every item.
    pub items: BTreeMap<ItemKey, PinnedItem>,
}

/// Why an item waits for review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldReason {
    /// It was not part of what was approved (including tools past the first-use cap).
    New,
    /// Its definition differs from what was approved.
    Changed,
}

impl HoldReason {
    /// The reason as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Changed => "changed",
        }
    }

    /// Reads a stored reason.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "new" => Some(Self::New),
            "changed" => Some(Self::Changed),
            _ => None,
        }
    }
}
