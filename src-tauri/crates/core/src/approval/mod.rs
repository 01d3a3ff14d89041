//! Approval of tool calls: the one seam every call from a model or a person passes through
//! before it reaches a server (AP-01, AP-03).
//!
//! Two halves, kept apart on purpose:
//! - [`policy`]: a pure function deciding allow / ask / deny for a call. Pure so it can be
//!   table-tested and reasoned about; no I/O, no clock.
//! - [`pending`]: the plumbing for "ask": a request gets a random nonce, shells show it, and only
//!   an answer naming that nonce releases the call. A shell (the web view included) cannot run a
//!   tool by any other route.

pub mod pending;
pub mod policy;

pub use pending::{
    Answer, ApprovalError, ApprovalRequest, Ask, Nonce, PendingApprovals, Ticket, REASON_MAX,
};
pub use policy::{decide, Call, Decision, Origin, Policy};
