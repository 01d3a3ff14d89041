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
