//! A request's record in the audit log ([`Trail`]) and how a decision is written into it: the
//! phases of `run.rs` note events here and write them in as few transactions as the phases
//! allow (a decision made from the in-memory policy is written with the generation that must
//! still be current, see `host::policy`). Kept apart from the phases so each reads on its own.

use super::super::{Host, HostError};
use crate::approval::audit::{Actor, AuditContext, AuditEvent, CallRef, Verdict};
use crate::approval::{AllowedBy, Decision, Origin};
use crate::ids::ServerId;

/// One request's record in the audit log: the context its entries share, and the entries
/// waiting to be written with the next step that must be on disk.
pub(super) struct Trail<'h> {
    host: &'h Host,
    pub(super) ctx: AuditContext,
    pub(super) pending: Vec<AuditEvent>,
}

impl<'h> Trail<'h> {
    pub(super) fn new(host: &'h Host, server: &ServerId, name: &str, origin: &Origin) -> Self {
        Self {
            host,
            ctx: AuditContext::for_request(server, name, origin, CallRef::random()),
            pending: Vec::new(),
        }
    }

    pub(super) fn note(&mut self, event: AuditEvent) {
        self.pending.push(event);
    }

    pub(super) fn decided(&mut self, decision: Verdict, by: Actor, reason: Option<String>) {
        self.note(AuditEvent::Decided {
            decision,
            by,
            reason,
        });
    }

    /// Writes what is pending and waits until it is on disk.
    pub(super) async fn commit(&mut self) {
        let events = std::mem::take(&mut self.pending);
        if events.is_empty() {
            return;
        }
        let ctx = &self.ctx;
        self.host
            .audit_all(events.into_iter().map(|e| (e, ctx.clone())).collect())
            .await;
    }

    /// Writes what is pending (the proposal and a decision made from the in-memory policy of
    /// `generation`, with what goes with it) and waits until it is on disk. `false` when that
    /// policy is no longer the stored one or could not be checked: then nothing but the
    /// proposal is kept pending, and the caller decides again from the store. Without a
    /// generation this is [`Trail::commit`].
    pub(super) async fn commit_decided(&mut self, generation: Option<u64>) -> bool {
        let Some(generation) = generation else {
            self.commit().await;
            return true;
        };
        let proposal = self.pending.first().cloned();
        let events = std::mem::take(&mut self.pending);
        let ctx = &self.ctx;
        let stored = self
            .host
            .audit_decided(
                events.into_iter().map(|e| (e, ctx.clone())).collect(),
                generation,
            )
            .await;
        if !stored {
            self.pending.extend(proposal);
        }
        stored
    }

    /// Queues an event after the fact, without waiting (a request's end).
    pub(super) fn later(&self, event: AuditEvent) {
        self.host.audit_later(event, self.ctx.clone());
    }

    /// Writes what is pending and returns the refusal.
    pub(super) async fn refuse(mut self, err: HostError) -> HostError {
        self.commit().await;
        err
    }
}

/// The audit log's record of a policy decision: the verdict, who made it, and why.
pub(super) fn decided(decision: &Decision) -> (Verdict, Actor, Option<String>) {
    match decision {
        Decision::Allow { by } => (Verdict::Allow, actor_of(by), None),
        Decision::Deny { reason, rule } => (
            Verdict::Deny,
            Actor::Policy { rule: rule.clone() },
            Some(reason.clone()),
        ),
        Decision::Ask {
            reason,
            warning,
            rule,
        } => (
            Verdict::Ask,
            Actor::Policy { rule: rule.clone() },
            Some(match warning {
                Some(w) => format!("{reason}; {w}"),
                None => reason.clone(),
            }),
        ),
    }
}

/// Who allowed a request without asking, for the audit log.
pub(super) fn actor_of(by: &AllowedBy) -> Actor {
    match by {
        AllowedBy::Rule(id) => Actor::Policy {
            rule: Some(id.clone()),
        },
        AllowedBy::Grant(id) => Actor::Grant {
            grant_id: id.clone(),
        },
        AllowedBy::Default => Actor::Policy { rule: None },
    }
}
