//! The MCP Registry: browse and search a registry's v0.1 API, and turn an entry's
//! `server.json` into a server proposal that goes through the trust gate like any other.
//!
//! - [`wire`]: `server.json` and the list/version responses, parsed leniently and with
//!   descriptions cut, one entry at a time (a malformed entry is skipped and counted, not
//!   fatal to its page).
//! - [`client`]: [`RegistryClient`], over a configurable base URL (default
//!   [`DEFAULT_URL`]): bounded bodies, a timeout, https unless the registry is on this machine,
//!   a cache in the data directory with a time to live, the cached answer when the registry is
//!   unreachable (and a word that it is), entries whose status is not `active` hidden.
//! - [`plan`]: which ways to run an entry are usable, what the person must supply, and the
//!   exact [`ServerSpec`](crate::config::ServerSpec) plus typed secrets ([`Proposal`]).
//!
//! Nothing here adds, starts or contacts a server. A shell hands the proposal to
//! `Host::add_server_with`, which stores its secrets in the keyring and the spec unapproved;
//! the person then approves the exact command or URL (SP-01, SP-10). This module depends on
//! the leaves only (`config`, `ids`, `redact`, `clock`): the host composes it.

pub mod client;
pub mod plan;
pub mod wire;

pub use client::{ClientOptions, Freshness, Page, RegistryClient, SearchQuery, DEFAULT_URL};
pub use plan::{
    default_option, options, propose, suggested_id, Answers, InputKind, InputSpec, InstallOption,
    Proposal,
};
pub use wire::{Entry, ServerJson, Status};

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry URL is unusable.
    #[error("{url:?} is not a usable registry URL: {reason}")]
    BadUrl {
        /// The URL as given (escaped, cut).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The registry could not be reached, and nothing was cached.
    #[error(
        "the registry at {url} could not be reached ({reason}), and nothing from it is cached"
    )]
    Unreachable {
        /// The request URL.
        url: String,
        /// The cause.
        reason: String,
    },
    /// The registry answered with an error status.
    #[error("the registry at {url} answered HTTP {status}")]
    Status {
        /// The request URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// An answer was larger than the client reads.
    #[error("the registry's answer from {url} is larger than {max} bytes; it was not read")]
    TooLarge {
        /// The request URL.
        url: String,
        /// The cap in bytes.
        max: usize,
    },
    /// An answer is not the registry API's shape.
    #[error("the registry's answer from {url} is not a registry response: {reason}")]
    Malformed {
        /// The request URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// No such server (or version) in the registry.
    #[error("the registry has no server {name}{}", version.as_deref().map(|v| format!(" version {v}")).unwrap_or_default())]
    NotFound {
        /// The name asked for (escaped, cut).
        name: String,
        /// The version asked for.
        version: Option<String>,
    },
    /// The entry is deprecated or deleted.
    #[error("{name} is {status} in the registry; only active entries are installed")]
    NotActive {
        /// The server.
        name: String,
        /// Its status.
        status: String,
    },
    /// The chosen way to run the server cannot be used.
    #[error("{name} cannot be installed this way: {reason}")]
    Refused {
        /// The server.
        name: String,
        /// Why.
        reason: String,
    },
    /// The entry has no usable way to run it.
    #[error("{name} has no package or remote Switchboard can use: {reasons}")]
    NothingUsable {
        /// The server.
        name: String,
        /// Each option's refusal, joined.
        reasons: String,
    },
    /// The option index is out of range.
    #[error("option {option} does not exist; the entry has {count}")]
    NoSuchOption {
        /// The index asked for.
        option: usize,
        /// How many there are.
        count: usize,
    },
    /// A value was given for an input the entry does not have.
    #[error("the entry has no {kind:?} input named {name:?}")]
    UnknownInput {
        /// Where it would go.
        kind: InputKind,
        /// Its name.
        name: String,
    },
    /// A required input was not given.
    #[error("{name:?} ({kind:?}) is required")]
    Missing {
        /// Where it goes.
        kind: InputKind,
        /// Its name.
        name: String,
    },
    /// A value is not one of the allowed choices.
    #[error("{name:?} must be one of {choices:?}")]
    NotAChoice {
        /// The input.
        name: String,
        /// The allowed values.
        choices: Vec<String>,
    },
    /// The resulting spec is invalid (a URL that does not parse after substitution, ...).
    #[error("the server it describes is invalid: {0}")]
    Spec(#[from] crate::config::SpecError),
}

/// A client for the registry at `base_url` with its cache in `data_dir` (`registry-cache/`)
/// and the default limits: what both shells use.
pub fn client_in(
    data_dir: &std::path::Path,
    base_url: &str,
) -> Result<RegistryClient, RegistryError> {
    RegistryClient::new(
        base_url,
        ClientOptions {
            cache_dir: Some(data_dir.join("registry-cache")),
            ..ClientOptions::default()
        },
    )
}

/// Fetches entry `name` (at `version`, or the latest) and proposes way `option` of running it
/// (the first usable one when `None`) as server `id` with `answers`.
pub async fn fetch_proposal(
    client: &RegistryClient,
    name: &str,
    version: Option<&str>,
    option: Option<usize>,
    id: crate::ids::ServerId,
    answers: &Answers,
) -> Result<(Entry, Proposal), RegistryError> {
    let (entry, _) = client.server(name, version).await?;
    let index = match option {
        Some(i) => i,
        None => default_option(&entry.server).ok_or_else(|| nothing_usable(&entry.server))?,
    };
    let proposal = propose(&entry.server, index, id, answers)?;
    Ok((entry, proposal))
}

/// The error for an entry none of whose packages or remotes can be used, with each reason.
pub fn nothing_usable(server: &ServerJson) -> RegistryError {
    let reasons: Vec<String> = options(server)
        .into_iter()
        .filter_map(|o| o.refused)
        .collect();
    RegistryError::NothingUsable {
        name: crate::escape::short_for_display(&server.name, 200),
        reasons: if reasons.is_empty() {
            "it lists no package or remote".into()
        } else {
            reasons.join("; ")
        },
    }
}
