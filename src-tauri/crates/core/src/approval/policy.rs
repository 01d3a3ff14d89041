//! The approval policy as a pure function.
//!
//! Precedence (ARCHITECTURE "security decisions are pure functions"): hard deny > user deny >
//! ask > allow > default. Until per-tool grants exist (the approval issue), the policy has one
//! rule: ask for every call. Hints a server claims (`readOnlyHint` and friends) never relax it:
//! they are the server's word, not the user's.

use serde::{Deserialize, Serialize};

use crate::ids::ToolRef;

/// Who wants the call made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// A person ran the tool by hand (the catalog's run form, the CLI).
    Manual,
    /// A model asked for it during a conversation.
    Model {
        /// The conversation.
        conversation: String,
    },
}

/// A call to decide on.
#[derive(Clone, Debug)]
pub struct Call<'a> {
    /// The tool.
    pub tool: &'a ToolRef,
    /// Who wants it.
    pub origin: &'a Origin,
    /// Whether the server claims the tool only reads. Recorded, never trusted.
    pub claims_read_only: bool,
}

/// What the user configured. Only the default exists today.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Policy {
    /// Every call is shown to the user first (AP-01's default).
    #[default]
    AskEveryCall,
}

/// The verdict for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse, with the reason.
    Deny(String),
}

/// Decides what happens to `call` under `policy`.
pub fn decide(policy: &Policy, call: &Call<'_>) -> Decision {
    match policy {
        Policy::AskEveryCall => {
            let _ = (call.tool, call.origin, call.claims_read_only);
            Decision::Ask
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ServerId;

    #[test]
    fn the_default_asks_for_every_call_whatever_the_server_claims() {
        let tool = ToolRef {
            server: ServerId::new("s").unwrap(),
            tool: "t".into(),
        };
        let model = Origin::Model {
            conversation: "c".into(),
        };
        for (origin, read_only) in [
            (&Origin::Manual, false),
            (&Origin::Manual, true),
            (&model, false),
            (&model, true),
        ] {
            let call = Call {
                tool: &tool,
                origin,
                claims_read_only: read_only,
            };
            assert_eq!(
                decide(&Policy::default(), &call),
                Decision::Ask,
                "{origin:?} {read_only}"
            );
        }
    }
}
