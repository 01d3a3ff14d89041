//! Approval of requests to servers: the one seam every tool call, resource read, prompt get
//! and completion from a model or a person passes through before it reaches a server (AP-01,
//! AP-03, AP-09). The host's side of the seam (gathering context, asking, auditing) is
//! `host::run`.
//!
//! Two halves, kept apart on purpose:
//! - [`policy`]: a pure function deciding allow / ask / deny for a call. Pure so it can be
//!   table-tested and reasoned about; no I/O, no clock.
//! - [`rules`]: the rules it evaluates, as data (TOML files, the GUI, the CLI), grants included.
//! - [`pending`]: the plumbing for "ask": a request gets a random nonce, shells show it, and only
//!   an answer naming that nonce releases the call. A shell (the web view included) cannot run a
//!   tool by any other route.
//! - [`pins`]: each server's surface pinned on first use and diffed on every change (TD-02);
//!   changed or new tools wait for review.
//! - [`questions`]: what servers ask a person ([`elicit`] forms and URLs, [`sampling`]) and
//!   tool results held for review, answered the same way as approvals.
//! - [`app`]: the origin of an MCP App's requests (AP-10) and what it means for the policy.
//! - [`audit`]: what happened to calls, as typed events for the hash-chained audit log (OB-01).

pub mod app;
pub mod audit;
pub mod elicit;
pub mod pending;
pub mod pins;
pub mod policy;
pub mod questions;
pub mod rules;
pub mod sampling;
pub mod suggest;
pub mod waitlist;

pub use app::AppRef;
pub use pending::{
    Answer, ApprovalError, ApprovalRequest, Ask, Nonce, PendingApprovals, Scope, Ticket, REASON_MAX,
};
pub use policy::{
    decide, Acting, AllowedBy, Call, Claims, Context, Decision, Flow, Origin, Policy, RequestKind,
};
pub use rules::{
    Condition, Effect, Limit, On, Per, PolicyFile, Rule, RuleError, Source, GRANT_PREFIX,
};
