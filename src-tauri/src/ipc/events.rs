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
    /// A node of a run tree of agents started or ended (`conversation` says for which).
    AgentRuns,
}

/// Something in the host changed; the page re-reads what it shows.
#[derive(Clone, Debug, Serialize, Deserialize, Type, Event)]
pub struct HostChanged {
    /// What changed.
    pub kind: ChangeKind,
    /// The server concerned, if one.
    pub server: Option<String>,
    /// The conversation concerned, if one (a run of agents working for it).
    pub conversation: Option<String>,
}

impl HostChanged {
    /// A change of `kind` that names no server or conversation.
    pub fn of(kind: ChangeKind) -> Self {
        Self {
            kind,
            server: None,
            conversation: None,
        }
    }

    fn about_server(kind: ChangeKind, server: String) -> Self {
        Self {
            server: Some(server),
            ..Self::of(kind)
        }
    }

    /// The UI-relevant projection of a host event; progress and log lines are not page changes.
    pub fn from_host(e: &HostEvent) -> Option<Self> {
        match e {
            HostEvent::ServerStatus { server, .. } => {
                Some(Self::about_server(ChangeKind::Status, server.to_string()))
            }
            HostEvent::CatalogChanged { server } | HostEvent::PinReview { server, .. } => {
                Some(Self::about_server(ChangeKind::Catalog, server.to_string()))
            }
            HostEvent::ServersChanged => Some(Self::of(ChangeKind::Servers)),
            HostEvent::ApprovalsChanged => Some(Self::of(ChangeKind::Approvals)),
            HostEvent::QuestionsChanged => Some(Self::of(ChangeKind::Questions)),
            HostEvent::AgentRunChanged { conversation, .. } => Some(Self {
                conversation: Some(conversation.to_string()),
                ..Self::of(ChangeKind::AgentRuns)
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ids::ConversationId;

    #[test]
    fn a_node_of_a_run_tree_becomes_an_agent_runs_change_naming_the_conversation() {
        let conversation = ConversationId::random();
        let ev = HostChanged::from_host(&HostEvent::AgentRunChanged {
            run: "run-1".into(),
            conversation: conversation.clone(),
        })
        .unwrap();
        assert!(matches!(ev.kind, ChangeKind::AgentRuns));
        assert_eq!(ev.conversation, Some(conversation.to_string()));
        assert_eq!(ev.server, None);
        assert_eq!(
            serde_json::to_value(&ev).unwrap()["kind"],
            serde_json::json!("agent_runs")
        );
    }
}
