//! Identity newtypes.
//!
//! Names typed by users (server names, secret names) are validated once, here, so every other
//! module can rely on them being safe to show, store and use as keys. No bare `String` key
//! crosses a module boundary.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidName {
    /// The name was empty.
    #[error("the name is empty")]
    Empty,
    /// The name is longer than the limit.
    #[error("the name is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name has a character outside the allowed set.
    #[error("the name contains {0:?}; use letters, digits, '-', '_' or '.'")]
    BadChar(char),
    /// The name does not start with a letter or digit.
    #[error("the name must start with a letter or a digit")]
    BadStart,
}

fn validate_name(s: &str, max: usize) -> Result<(), InvalidName> {
    let len = s.chars().count();
    if len == 0 {
        return Err(InvalidName::Empty);
    }
    if len > max {
        return Err(InvalidName::TooLong { len, max });
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(InvalidName::BadChar(c));
    }
    if !s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) {
        return Err(InvalidName::BadStart);
    }
    Ok(())
}

macro_rules! name_newtype {
    ($(#[$doc:meta])* $name:ident, $max:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl $name {
            /// The longest name accepted.
            pub const MAX_LEN: usize = $max;

            /// Validates and wraps a name.
            pub fn new(s: impl AsRef<str>) -> Result<Self, InvalidName> {
                let s = s.as_ref();
                validate_name(s, $max)?;
                Ok(Self(Arc::from(s)))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::new(&s).map_err(serde::de::Error::custom)
            }
        }

        impl std::str::FromStr for $name {
            type Err = InvalidName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }
    };
}

name_newtype!(
    /// The user-chosen name of a configured MCP server, unique within a host.
    ServerId,
    64
);

name_newtype!(
    /// The name of a secret in the OS keyring. Config refers to secrets only by this name.
    SecretName,
    128
);

name_newtype!(
    /// The user-chosen name of a configured model provider (`work-openai`, `local`).
    ProviderName,
    64
);

/// One tool of one server: the only way to address a tool inside the host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolRef {
    /// The server that serves the tool.
    pub server: ServerId,
    /// The tool's name exactly as the server reports it.
    pub tool: Arc<str>,
}

impl fmt::Display for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.server, self.tool)
    }
}

/// One run a shell can stop: a tool call started by hand, or a chat turn. Minted by the host
/// ([`crate::host::Host::open_run`]) so a shell never invents identities the core keys
/// cancellation by; 128 random bits in hex, so a guessed id cancels nothing.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RunId(Arc<str>);

impl RunId {
    /// A fresh random id (`run-` and 32 hex digits).
    pub fn random() -> Self {
        Self(Arc::from(format!(
            "run-{}",
            hex::encode(rand::random::<[u8; 16]>())
        )))
    }

    /// Validates an id in its text form.
    pub fn parse(s: &str) -> Result<Self, InvalidId> {
        match s.strip_prefix("run-") {
            Some(h)
                if h.len() == 32 && h.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) =>
            {
                Ok(Self(Arc::from(s)))
            }
            _ => Err(InvalidId { kind: "run" }),
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// Why a stored identity was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid {kind} id")]
pub struct InvalidId {
    /// Which kind of id was expected (`"conversation"`).
    pub kind: &'static str,
}

/// One conversation: a random UUID (version 4) in canonical lowercase text.
///
/// Random rather than a row number so a conversation keeps its identity through export, import
/// and agents sharing state, and so ids never collide across data directories. The text is
/// validated on every way in (parse, deserialize), so it is safe to show and to use as a key.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ConversationId(Arc<str>);

impl ConversationId {
    /// A fresh random id.
    pub fn random() -> Self {
        use rand::Rng;
        let mut b: [u8; 16] = rand::rng().random();
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
        let h = hex::encode(b);
        Self(Arc::from(format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )))
    }

    /// Validates an id in canonical text form (`8-4-4-4-12` lowercase hex digits).
    pub fn parse(s: &str) -> Result<Self, InvalidId> {
        let ok = s.len() == 36
            && s.bytes().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == b'-',
                _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
            });
        if ok {
            Ok(Self(Arc::from(s)))
        } else {
            Err(InvalidId {
                kind: "conversation",
            })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConversationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ConversationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl<'de> Deserialize<'de> for ConversationId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for ConversationId {
    type Err = InvalidId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

macro_rules! row_id_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            /// Wraps a row id read back from the store or from a shell's request.
            pub const fn new(id: i64) -> Self {
                Self(id)
            }

            /// The row id.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

row_id_newtype!(
    /// One stored message: its SQLite row id (also its full-text index rowid), unique across
    /// conversations. Order within a conversation is the message's `seq`, not this id.
    MessageId
);

row_id_newtype!(
    /// One stored tool call: our row id. Not the vendor's call id (`call_id`, echoed between
    /// the model's request and its result), which is unique only within one message.
    ToolCallRecordId
);

row_id_newtype!(
    /// One recorded approval decision.
    ApprovalId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for ok in ["fs", "server-everything", "a.b_c-1", "9lives"] {
            assert!(ServerId::new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        assert_eq!(ServerId::new(""), Err(InvalidName::Empty));
        assert_eq!(ServerId::new("-x"), Err(InvalidName::BadStart));
        assert_eq!(ServerId::new("a b"), Err(InvalidName::BadChar(' ')));
        assert_eq!(ServerId::new("a/b"), Err(InvalidName::BadChar('/')));
        assert_eq!(ServerId::new("é"), Err(InvalidName::BadChar('é')));
        assert!(matches!(
            ServerId::new("x".repeat(65)),
            Err(InvalidName::TooLong { len: 65, max: 64 })
        ));
    }

    #[test]
    fn deserialize_validates() {
        assert!(serde_json::from_str::<ServerId>("\"ok\"").is_ok());
        assert!(serde_json::from_str::<ServerId>("\"no way\"").is_err());
    }
}

#[cfg(test)]
mod conversation_id_tests {
    use super::*;

    #[test]
    fn random_ids_are_canonical_v4_and_distinct() {
        let a = ConversationId::random();
        let b = ConversationId::random();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 36);
        assert_eq!(&a.as_str()[14..15], "4");
        assert!(matches!(&a.as_str()[19..20], "8" | "9" | "a" | "b"));
        assert_eq!(ConversationId::parse(a.as_str()), Ok(a));
    }

    #[test]
    fn parse_refuses_everything_else() {
        for bad in [
            "",
            "x",
            "0123456789abcdef0123456789abcdef",
            "0123456789-abcd-ef01-2345-6789abcdef01",
            "01234567-89AB-4def-8123-456789abcdef",
            "01234567-89ab-4def-8123-456789abcdeg",
            "01234567-89ab-4def-8123-456789abcdef0",
        ] {
            assert_eq!(
                ConversationId::parse(bad),
                Err(InvalidId {
                    kind: "conversation"
                }),
                "{bad}"
            );
        }
        assert!(serde_json::from_str::<ConversationId>("\"../../etc\"").is_err());
        let ok = "01234567-89ab-4def-8123-456789abcdef";
        assert_eq!(
            serde_json::from_str::<ConversationId>(&format!("\"{ok}\""))
                .unwrap()
                .as_str(),
            ok
        );
        assert_eq!(serde_json::to_string(&MessageId::new(7)).unwrap(), "7");
    }
}
