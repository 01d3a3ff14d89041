//! The server configuration model and its foreign formats.
//!
//! Foreign files (Claude Desktop, VS Code, Cursor) are parsed into raw structs that mirror the
//! file, then validated into our [`ServerSpec`] (ripgrep's LowArgs -> HiArgs idea): importers
//! stay small, and nothing half-validated reaches the store or the supervisor.
//!
//! This module is pure: it never touches the keyring, the database or a process. An import
//! returns the secrets it found so the host can move them into the keyring.

pub mod credentials;
pub mod export;
pub mod import;
pub mod launch;
pub mod link;
pub mod placeholders;
mod spec;

pub use spec::*;
