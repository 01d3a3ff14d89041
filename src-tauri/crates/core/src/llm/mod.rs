//! Language-model providers, streaming first.
//!
//! - [`types`]: the provider-neutral transcript, requests and stream events.

pub mod types;
