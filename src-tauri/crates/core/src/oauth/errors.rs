//! Why a sign-in failed, in words a person can act on: each error names what went wrong and
//! what to do, and [`SignInError::step`] says where on the timeline it happened.

use rmcp::transport::auth::{AuthError, ProtectedResourceMetadataInvalidReason};

use super::net::Refused;
use super::SignInStep;
use crate::secrets::SecretError;

/// A failed sign-in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignInError {
    /// Discovery failed (no metadata, unreachable, unreadable).
    #[error("could not find how to sign in to this server: {0}")]
    Discovery(String),
    /// A request was refused by the network guard (AU-09).
    #[error("{0}")]
    Refused(String),
    /// The metadata's issuer is not the server it came from (RFC 8414 §3.3).
    #[error("the authorization server's metadata names issuer {received}, but it was fetched for {expected}: refusing to sign in (a misconfigured or impersonated server)")]
    WrongIssuer {
        /// The issuer we fetched metadata for.
        expected: String,
        /// What the document claimed.
        received: String,
    },
    /// The protected resource metadata is for another resource (RFC 9728 §3.3).
    #[error("the server's protected resource metadata is for {permitted}, not {reference}: refusing to sign in (tokens would be issued for another server)")]
    ResourceMismatch {
        /// The MCP server URL.
        reference: String,
        /// What the metadata named.
        permitted: String,
    },
    /// No PKCE S256 (AU-02).
    #[error("the authorization server does not advertise PKCE with S256 (it lists {}); Switchboard signs in only with PKCE, which protects the code from interception. Ask the server's operator to enable S256", if advertised.is_empty() { "nothing".to_owned() } else { advertised.join(", ") })]
    NoPkce {
        /// The methods it did advertise.
        advertised: Vec<String>,
    },
    /// Registration failed.
    #[error("could not register Switchboard with the authorization server: {0}")]
    Registration(String),
    /// No way to get a client id: ask the person for one.
    #[error("the authorization server offers no way to register Switchboard automatically; register a client with it yourself and enter its client id (and secret) in the server's sign-in settings")]
    NeedsClientId,
    /// The browser could not be opened, or did not come back.
    #[error("{0}")]
    Browser(String),
    /// The person said no.
    #[error("sign-in was declined at the authorization server; nothing was saved")]
    ConsentDenied,
    /// The authorization server answered the browser with an error.
    #[error("the authorization server at {domain} refused the sign-in ({error}{})", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Authorization {
        /// The OAuth error code.
        error: String,
        /// Its description (untrusted).
        description: Option<String>,
        /// Where.
        domain: String,
    },
    /// The redirect's `iss` is not the authorization server's (RFC 9207). Deliberately without
    /// detail (AU-05): the answer may come from an attacker.
    #[error("the sign-in answer did not come from the expected authorization server; it was discarded. Try again")]
    WrongCallbackIssuer,
    /// The token endpoint refused or failed.
    #[error("the authorization server did not issue a token: {0}")]
    Token(String),
    /// The token endpoint issued a token that is not a bearer token (`mac`, or a type of its
    /// own): Switchboard would send it as one, so it is refused and nothing is stored.
    #[error("the authorization server issued a token of type {token_type:?}; Switchboard uses only Bearer tokens, so the token was refused and nothing was saved")]
    TokenType {
        /// The `token_type` it answered (untrusted; shown escaped by the shells).
        token_type: String,
    },
    /// The client secret or key stored for this server belongs to another client id or
    /// authorization server (SE-08): it was not sent.
    #[error("the client secret or key stored for this server belongs to another client or authorization server than {client_id} at {}, so it was not sent; enter this client's secret again (`switchboard auth client-credentials`)", issuer.as_deref().unwrap_or("an unnamed authorization server"))]
    CredentialElsewhere {
        /// The client id asked for.
        client_id: String,
        /// The issuer the token request would go to.
        issuer: Option<String>,
    },
    /// The keyring failed.
    #[error(transparent)]
    Store(#[from] SecretError),
}

impl SignInError {
    /// The step of the timeline this happened at.
    pub fn step(&self) -> SignInStep {
        match self {
            Self::Discovery(_) | Self::Refused(_) | Self::ResourceMismatch { .. } => {
                SignInStep::Discovery
            }
            Self::WrongIssuer { .. } | Self::NoPkce { .. } => SignInStep::Metadata,
            Self::Registration(_) | Self::NeedsClientId | Self::CredentialElsewhere { .. } => {
                SignInStep::Registration
            }
            Self::Browser(_) | Self::ConsentDenied | Self::Authorization { .. } => {
                SignInStep::Browser
            }
            Self::WrongCallbackIssuer
            | Self::Token(_)
            | Self::TokenType { .. }
            | Self::Store(_) => SignInStep::Token,
        }
    }

    /// A stable code for shells and scripts.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Discovery(_) => "discovery_failed",
            Self::Refused(_) => "address_refused",
            Self::WrongIssuer { .. } => "wrong_issuer",
            Self::ResourceMismatch { .. } => "resource_mismatch",
            Self::NoPkce { .. } => "no_pkce",
            Self::Registration(_) => "registration_failed",
            Self::NeedsClientId => "needs_client_id",
            Self::Browser(_) => "browser",
            Self::ConsentDenied => "consent_denied",
            Self::Authorization { .. } => "authorization_refused",
            Self::WrongCallbackIssuer => "wrong_callback_issuer",
            Self::Token(_) => "token_failed",
            Self::TokenType { .. } => "unsupported_token_type",
            Self::CredentialElsewhere { .. } => "credential_for_another_server",
            Self::Store(_) => "keyring",
        }
    }
}

/// The guard's refusal, if one is somewhere in an error's sources.
fn refusal(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refused>() {
            return Some(r.to_string());
        }
        cur = err.source();
    }
    None
}

/// rmcp's error from the code exchange as ours: an issuer error there is about the redirect's
/// `iss` (RFC 9207), not the metadata.
pub(super) fn from_exchange(e: AuthError) -> SignInError {
    match e {
        AuthError::AuthorizationServerMismatch { .. }
        | AuthError::AuthorizationServerMissingIssuer { .. } => SignInError::WrongCallbackIssuer,
        other => from_auth(other),
    }
}

/// rmcp's error as ours.
pub(super) fn from_auth(e: AuthError) -> SignInError {
    if let Some(r) = refusal(&e) {
        return SignInError::Refused(r);
    }
    match e {
        AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => SignInError::WrongIssuer {
            expected: expected_issuer,
            received: received_issuer,
        },
        AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
            SignInError::WrongIssuer {
                expected: expected_issuer,
                received: "none".into(),
            }
        }
        AuthError::ProtectedResourceMetadataInvalid { reason, .. } => match *reason {
            ProtectedResourceMetadataInvalidReason::ResourceMismatch {
                reference,
                permitted,
            } => SignInError::ResourceMismatch {
                reference: reference.to_string(),
                permitted: permitted.to_string(),
            },
            other => SignInError::Discovery(other.to_string()),
        },
        AuthError::PkceUnsupported => SignInError::NoPkce { advertised: vec![] },
        AuthError::RegistrationFailed(m) => SignInError::Registration(m),
        AuthError::TokenExchangeFailed(m)
        | AuthError::TokenRefreshFailed(m)
        | AuthError::TokenRefreshRejected(m) => SignInError::Token(m),
        AuthError::DiscoveryRequestFailed { url, source } => {
            SignInError::Discovery(format!("{url}: {source}"))
        }
        other => SignInError::Discovery(other.to_string()),
    }
}
