//! The shapes the sign-in commands and the Credentials page exchange with the web view
//! (`ipc/signin.rs`): the core's sign-in types as specta DTOs. None carries a secret value;
//! times are milliseconds since the epoch, as the UI's `Date` wants.

use super::signin::CANCELLED;
use serde::Serialize;
use specta::Type;
use switchboard_core::host::credentials::{
    Credentials, ProviderKey, Registration, SecretStatus, ServerCredentials, SignInStatus,
    SignInStep, SignInWant, SignedIn, SignedOut, StepEvent, StepState,
};

/// A step of the timeline.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SignInStepDto {
    /// Finding the server's protected resource metadata.
    Discovery,
    /// Reading and checking the authorization server's metadata.
    Metadata,
    /// Getting a client id.
    Registration,
    /// The person signs in in the browser.
    Browser,
    /// Exchanging the code for tokens.
    Token,
    /// The first call with the new token.
    FirstCall,
}

impl From<SignInStep> for SignInStepDto {
    fn from(s: SignInStep) -> Self {
        match s {
            SignInStep::Discovery => Self::Discovery,
            SignInStep::Metadata => Self::Metadata,
            SignInStep::Registration => Self::Registration,
            SignInStep::Browser => Self::Browser,
            SignInStep::Token => Self::Token,
            SignInStep::FirstCall => Self::FirstCall,
        }
    }
}

/// Where a step is.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum StepStateDto {
    /// Running.
    Started,
    /// Finished.
    Done,
    /// Failed.
    Failed,
}

/// What the sign-in timeline hears, in order.
#[derive(Clone, Debug, Serialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SignInEventDto {
    /// The sign-in began; answer its question and cancel it with this ticket.
    Started {
        /// For `sign_in_continue`.
        ticket: String,
    },
    /// A step started, finished or failed, in the core's words.
    Step {
        /// Which step.
        step: SignInStepDto,
        /// How it stands.
        state: StepStateDto,
        /// What it found, or what failed and what to do.
        detail: Option<String>,
        /// A stable code for a failure (`wrong_issuer`, `no_pkce`, `consent_denied`,
        /// `cancelled`, ...).
        code: Option<String>,
    },
    /// The browser is about to open: who the person will sign in with. Nothing opens until
    /// `sign_in_continue(ticket, true)`.
    Confirm {
        /// For `sign_in_continue`.
        ticket: String,
        /// The authorization server's registrable domain ("example.com").
        domain: String,
        /// Its host as a person reads it.
        host: String,
        /// What to know before going on (punycode, a bare IP address, ...).
        warnings: Vec<String>,
    },
}

impl SignInEventDto {
    /// A step event; a failure after the person cancelled says so, with code `cancelled`.
    pub(super) fn step(e: StepEvent, cancelled: bool) -> Self {
        let step = e.step.into();
        let (state, detail, code) = match e.state {
            StepState::Started => (StepStateDto::Started, None, None),
            StepState::Done { detail } => (StepStateDto::Done, Some(detail), None),
            StepState::Failed { .. } if cancelled => (
                StepStateDto::Failed,
                Some(CANCELLED.to_owned()),
                Some("cancelled".to_owned()),
            ),
            StepState::Failed { detail, code } => (StepStateDto::Failed, Some(detail), Some(code)),
        };
        Self::Step {
            step,
            state,
            detail,
            code,
        }
    }
}

/// A finished sign-in (no token).
#[derive(Clone, Debug, Serialize, Type)]
pub struct SignedInDto {
    /// The authorization server.
    pub issuer: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires, ms since the Unix epoch.
    pub expires_at_ms: Option<f64>,
    /// Whether it refreshes without the person.
    pub refreshable: bool,
}

impl From<SignedIn> for SignedInDto {
    fn from(s: SignedIn) -> Self {
        Self {
            issuer: s.issuer,
            scopes: s.scopes,
            expires_at_ms: s.expires_at.map(secs_to_ms),
            refreshable: s.refreshable,
        }
    }
}

fn secs_to_ms(s: u64) -> f64 {
    s as f64 * 1000.0
}

/// What signing out did at the server.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RevocationDto {
    /// There was no sign-in.
    NotSignedIn,
    /// The server revoked the tokens.
    Revoked,
    /// The server offers no revocation; they stay valid there until they expire.
    NotOffered,
    /// Revocation failed; the tokens were deleted here anyway.
    Failed,
}

/// The outcome of a sign-out, in words as the CLI says it.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SignedOutDto {
    /// What the server did.
    pub revocation: RevocationDto,
    /// One sentence for the person.
    pub message: String,
}

impl From<SignedOut> for SignedOutDto {
    fn from(s: SignedOut) -> Self {
        let (revocation, message) = match s {
            SignedOut::NotSignedIn => (RevocationDto::NotSignedIn, "was not signed in".to_owned()),
            SignedOut::Revoked => (
                RevocationDto::Revoked,
                "signed out; the server revoked the tokens and they were deleted".to_owned(),
            ),
            SignedOut::NotOffered => (
                RevocationDto::NotOffered,
                "signed out; the tokens were deleted here (the server offers no revocation, so \
                 they stay valid there until they expire)"
                    .to_owned(),
            ),
            SignedOut::Failed { detail } => (
                RevocationDto::Failed,
                format!(
                    "signed out; the tokens were deleted here, but revoking them failed: {detail}"
                ),
            ),
        };
        Self {
            revocation,
            message,
        }
    }
}

/// How a sign-in's client was registered.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RegistrationDto {
    /// A client id the person entered.
    PreRegistered,
    /// Switchboard's client metadata document.
    MetadataDocument,
    /// Registered automatically (RFC 7591).
    Dynamic,
    /// Machine-to-machine client credentials.
    ClientCredentials,
}

impl From<Registration> for RegistrationDto {
    fn from(r: Registration) -> Self {
        match r {
            Registration::PreRegistered => Self::PreRegistered,
            Registration::MetadataDocument => Self::MetadataDocument,
            Registration::Dynamic => Self::Dynamic,
            Registration::ClientCredentials => Self::ClientCredentials,
        }
    }
}

/// A server's sign-in: everything but the tokens.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SignInDto {
    /// The MCP URL the tokens are for.
    pub resource: String,
    /// Whether that is still the server's URL (if not, the sign-in is not used).
    pub current: bool,
    /// The authorization server.
    pub issuer: Option<String>,
    /// How the client was registered.
    pub registration: RegistrationDto,
    /// The client id (public by nature).
    pub client_id: String,
    /// Whether an access token is held.
    pub has_token: bool,
    /// Whether a refresh token is held.
    pub refreshable: bool,
    /// Scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires, ms since the Unix epoch.
    pub expires_at_ms: Option<f64>,
    /// When the person signed in, ms since the Unix epoch.
    pub signed_in_at_ms: f64,
}

impl From<SignInStatus> for SignInDto {
    fn from(s: SignInStatus) -> Self {
        Self {
            resource: s.resource,
            current: s.current,
            issuer: s.issuer,
            registration: s.registration.into(),
            client_id: s.client_id,
            has_token: s.has_token,
            refreshable: s.refreshable,
            scopes: s.scopes,
            expires_at_ms: s.expires_at.map(secs_to_ms),
            signed_in_at_ms: secs_to_ms(s.signed_in_at),
        }
    }
}

/// What a remote server is asking for now.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SignInWantDto {
    /// A sign-in (HTTP 401).
    SignIn,
    /// More permissions than the sign-in has (HTTP 403).
    MorePermissions,
}

impl From<SignInWant> for SignInWantDto {
    fn from(w: SignInWant) -> Self {
        match w {
            SignInWant::SignIn => Self::SignIn,
            SignInWant::MorePermissions => Self::MorePermissions,
        }
    }
}

/// A provider's API key: set or not.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ProviderKeyDto {
    /// The provider.
    pub provider: String,
    /// Its vendor.
    pub profile: String,
    /// Whether the keyring holds its key.
    pub set: bool,
    /// Whether it needs one.
    pub required: bool,
}

impl From<ProviderKey> for ProviderKeyDto {
    fn from(p: ProviderKey) -> Self {
        Self {
            provider: p.provider.to_string(),
            profile: p.profile.to_owned(),
            set: p.set,
            required: p.required,
        }
    }
}

/// A value of a server's configuration kept in the keyring: set or not.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SecretStatusDto {
    /// The env var or header.
    pub field: String,
    /// Where its value comes from, in words.
    pub source: String,
    /// Whether the keyring holds it.
    pub set: bool,
}

impl From<SecretStatus> for SecretStatusDto {
    fn from(s: SecretStatus) -> Self {
        Self {
            field: s.field,
            source: s.source,
            set: s.set,
        }
    }
}

/// One server's credentials.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerCredentialsDto {
    /// The server.
    pub server: String,
    /// Whether it is remote (only remote servers sign in).
    pub remote: bool,
    /// Its values kept in the keyring.
    pub secrets: Vec<SecretStatusDto>,
    /// Its sign-in, if it has one.
    pub sign_in: Option<SignInDto>,
    /// Whether a pre-registered client's secret is stored.
    pub client_secret_set: bool,
    /// What it asks for now, if it is down for want of a sign-in.
    pub wants: Option<SignInWantDto>,
    /// Whether "allow insecure (development)" is on (AU-10): its sign-in and tokens may use
    /// plain http to another machine. Always false for a local server.
    pub allow_insecure: bool,
}

impl From<ServerCredentials> for ServerCredentialsDto {
    fn from(s: ServerCredentials) -> Self {
        Self {
            server: s.server.to_string(),
            remote: s.remote,
            secrets: s.secrets.into_iter().map(Into::into).collect(),
            sign_in: s.sign_in.map(Into::into),
            client_secret_set: s.client_secret_set,
            wants: s.wants.map(Into::into),
            allow_insecure: s.allow_insecure,
        }
    }
}

/// Every secret and token the app holds, never a value.
#[derive(Clone, Debug, Serialize, Type)]
pub struct CredentialsDto {
    /// Where they are kept, in words.
    pub store: String,
    /// Model providers' API keys.
    pub providers: Vec<ProviderKeyDto>,
    /// Per server, in name order.
    pub servers: Vec<ServerCredentialsDto>,
}

impl From<Credentials> for CredentialsDto {
    fn from(c: Credentials) -> Self {
        Self {
            store: c.store,
            providers: c.providers.into_iter().map(Into::into).collect(),
            servers: c.servers.into_iter().map(Into::into).collect(),
        }
    }
}
