//! Typed app events: the host's changes pushed to the web view, so pages refresh on change
//! instead of polling.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::events::HostEvent;
use tauri_specta::Event;

/// What changed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A server's status.
    Status,
    /// A server's catalog (tools, resources, prompts).
    Catalog,
    /// The list of servers or their configuration.
    Servers,
    /// Tool calls waiting for approval.
    Approvals,
    /// Questions for the person (a server's form, URL or sampling request, a held result).
    Questions,
}

/// Something in the host changed; the page re-reads what it shows.
#[derive(Clone, Debug, Serialize, Deserialize, Type, Event)]
pub struct HostChanged {
    /// What changed.
    pub kind: ChangeKind,
    /// The server concerned, if one.
    pub server: Option<String>,
}

impl HostChanged {
    /// The UI-relevant projection of a host event; progress and log lines are not page changes.
    pub fn from_host(e: &HostEvent) -> Option<Self> {
        match e {
            HostEvent::ServerStatus { server, .. } => Some(Self {
                kind: ChangeKind::Status,
                server: Some(server.to_string()),
            }),
            HostEvent::CatalogChanged { server } | HostEvent::PinReview { server, .. } => {
                Some(Self {
                    kind: ChangeKind::Catalog,
                    server: Some(server.to_string()),
                })
            }
            HostEvent::ServersChanged => Some(Self {
                kind: ChangeKind::Servers,
                server: None,
            }),
            HostEvent::ApprovalsChanged => Some(Self {
                kind: ChangeKind::Approvals,
                server: None,
            }),
            HostEvent::QuestionsChanged => Some(Self {
                kind: ChangeKind::Questions,
                server: None,
            }),
            _ => None,
        }
    }
}
