//! The skills server fixture (`tests/fixtures/skills_server.mjs`, the TypeScript SDK v2's
//! skills extension) for `tests/skills.rs` and `tests/e2e_skills.rs`: where node and the npm
//! modules are, its command line, and the log of what it was asked to read.

use std::path::{Path, PathBuf};

/// The node binary and the npm modules with `@modelcontextprotocol/server` 2.x, or `None`
/// (skip) when they are not installed and `SWITCHBOARD_REQUIRE_PEERS` is not `1`.
pub fn peers() -> Option<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let modules = std::env::var_os("SWITCHBOARD_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("tests/npm/node_modules"));
    let node = std::env::var("SWITCHBOARD_NODE").ok().unwrap_or_else(|| {
        let local = root.join(".tools/node22/bin/node");
        if local.is_file() {
            local.to_string_lossy().into_owned()
        } else {
            "node".into()
        }
    });
    let sdk = modules.join("@modelcontextprotocol/server/dist/ext/skills/index.mjs");
    if sdk.is_file() {
        return Some((node, modules));
    }
    assert!(
        std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
        "SWITCHBOARD_REQUIRE_PEERS=1 but {} is missing",
        sdk.display()
    );
    eprintln!("skipped: the TypeScript SDK v2 server is not installed (run `make deps`)");
    None
}

/// The fixture's arguments after node: serving in `mode`, logging reads to `reads`, with
/// GUIDE.md's extra text from `variant`.
pub fn args(modules: &Path, reads: &Path, mode: &str, variant: &Path) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/skills_server.mjs");
    [
        script.to_string_lossy().as_ref(),
        "--modules",
        modules.to_string_lossy().as_ref(),
        "--reads",
        reads.to_string_lossy().as_ref(),
        "--mode",
        mode,
        "--variant-file",
        variant.to_string_lossy().as_ref(),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// What the server was asked to read, in order.
pub fn reads(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}
