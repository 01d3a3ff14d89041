//! Language-model providers, streaming first.
//!
//! A chat turn hands a provider-neutral [`ChatRequest`] to a [`Provider`] and reads back a
//! stream of [`StreamEvent`]s, which [`assemble`] folds into the assistant [`Message`] for the
//! transcript. Two wire formats exist (OpenAI Chat Completions and Anthropic Messages); every
//! other vendor is a row of data in [`profiles`] over one of them.
//!
//! - [`types`]: stream events, and the transcript and requests (re-exported from the
//!   [`crate::transcript`] leaf).
//! - [`provider`]: the `Provider` trait, its stream contract and the retry policy.
//! - [`profiles`]: vendors as data (a leaf of this module: the wire formats read it).
//! - [`construct`]: [`build_provider`] and [`ProviderConfig`], a provider for a profile.
//! - [`error`]: [`LlmError`], classified so callers can branch on the cause.
//! - [`sse`]: the incremental Server-Sent Events decoder both wire formats share.
//! - [`prompt_tools`]: tool calling through the system prompt for models without native tools.
//! - [`models`]: model lists from vendors and local runtimes (Ollama, LM Studio), with
//!   native tool support per model.
//! - [`limits`]: context windows and list prices known from model ids.
//! - [`locality`]: whether a base URL is on this machine or an address marked local.
//! - [`assemble`]: stream events into the final message, usage and stop reason.
//!
//! Private: `openai` and `anthropic` (the two wire formats: request building and stream
//! decoding), `http` (sending with retries before the first byte, driving a stream, cancel),
//! `classify` (HTTP statuses, rate-limit headers and vendor error bodies into [`LlmError`]).
//!
//! This module depends on nothing else in the core but the leaves `transcript` (the data
//! [`types`] re-exports) and `redact` (API keys travel as [`Secret`](crate::redact::Secret) and
//! are scrubbed from vendor error text).

mod anthropic;
pub mod assemble;
mod classify;
pub mod construct;
pub mod error;
mod http;
pub mod limits;
pub mod locality;
pub mod models;
mod openai;
pub mod profiles;
pub mod prompt_tools;
pub mod provider;
pub mod sse;
pub mod tokens;
pub mod types;

pub use assemble::{collect, Answer, Assembler};
pub use construct::{build_provider, ProfileError, ProviderConfig};
pub use error::LlmError;
pub use http::http_client;
pub use profiles::{profile, Profile, PROFILES};
pub use provider::{EventStream, Provider, RetryPolicy};
pub use types::{
    ChatRequest, Message, Part, ResultPart, Role, StopReason, StreamEvent, ToolSpec, Usage,
};
