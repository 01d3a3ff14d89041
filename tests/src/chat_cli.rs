//! Setting up `switchboard chat` runs for tests: a data dir with the fake MCP server approved
//! and a provider pointing at a scripted model on loopback.

use std::path::Path;

use crate::fake_llm::FakeLlm;
use crate::run_cli;

/// The API key stored for the provider when the real keyring is available.
pub const KEY: &str = "sk-chatCANARY-0123456789abcdefghij";

/// Asserts the CLI succeeded and returns its stdout.
pub fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A data dir with the fake MCP server `demo` approved and a provider `fake` pointing at `llm`
/// (default model `m1`, plus `extra` arguments to `provider add`). With the real keyring
/// (make test) the provider is an OpenAI one with a key; without, a keyless Ollama profile
/// over the same wire format. Returns whether the keyring was used.
pub fn setup_chat(data: &Path, llm: &FakeLlm, extra: &[&str]) -> bool {
    crate::scenario::AppData::on(data).approved_fake("demo", &[]);
    let keyring = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    let base = llm.openai_base();
    let kind = if keyring { "openai" } else { "ollama" };
    let mut args = vec![
        "provider",
        "add",
        "fake",
        "--kind",
        kind,
        "--base-url",
        &base,
        "--model",
        "m1",
    ];
    args.extend_from_slice(extra);
    ok(&run_cli(data, &args, "", &[]));
    if keyring {
        ok(&run_cli(
            data,
            &["provider", "set-key", "fake"],
            &format!("{KEY}\n"),
            &[],
        ));
    }
    keyring
}

/// The id of the newest conversation, from `history list`.
pub fn newest_conversation(data: &Path) -> String {
    let list = ok(&run_cli(data, &["history", "list"], "", &[]));
    list.split('\t')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// `history show`'s lines as (message id, the rest of the line).
pub fn shown_messages(data: &Path, conversation: &str) -> Vec<(String, String)> {
    ok(&run_cli(data, &["history", "show", conversation], "", &[]))
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(id, rest)| (id.to_owned(), rest.to_owned()))
        .collect()
}
