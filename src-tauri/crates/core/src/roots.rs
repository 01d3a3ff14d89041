//! A server's roots: the folders (or other URIs) a person lets it see (`roots/list`, AP-05).
//!
//! A leaf of plain data because two modules that may not depend on each other share it: `mcp`
//! answers `roots/list` with these, and `store` keeps each server's list. It used to live in
//! `mcp::requests`, which put a protocol-module edge under the store (ARCHITECTURE's table:
//! `store` may depend on leaves only); `mcp::requests` re-exports it.

/// A folder (or other URI) a server may see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A name to show.
    pub name: Option<String>,
}
