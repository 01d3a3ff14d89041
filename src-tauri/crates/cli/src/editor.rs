//! Editing something in the person's editor from a prompt: tool arguments, a sampling prompt,
//! a model's response.
//!
//! The value is written to a file in a fresh temporary directory, `$VISUAL` (else `$EDITOR`,
//! else `vi`) runs on it with the terminal to itself (stdin is read only when an answer is
//! wanted, so nothing competes for it), and the file is read back. Structured values travel as
//! pretty JSON; a file that no longer parses is reported and the value stays as it was.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Opens `value` as pretty JSON in the editor and reads the edited file back as a `T`.
pub fn edit_json<T: Serialize + DeserializeOwned>(value: &T, what: &str) -> Result<T, String> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| format!("could not show the {what} as JSON: {e}"))?;
    let edited = edit_file(&format!("{}.json", what.replace(' ', "-")), &(text + "\n"))?;
    serde_json::from_str(&edited).map_err(|e| format!("the edited {what} are not valid: {e}"))
}

/// Opens `text` in the editor as a plain text file and returns it as edited.
pub fn edit_text(text: &str, file_name: &str) -> Result<String, String> {
    edit_file(file_name, text)
}

fn edit_file(file_name: &str, text: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("could not make a temporary file: {e}"))?;
    let path = dir.path().join(file_name);
    std::fs::write(&path, text).map_err(|e| format!("could not write {path:?}: {e}"))?;
    run_editor(&path)?;
    std::fs::read_to_string(&path).map_err(|e| format!("could not read {path:?}: {e}"))
}

/// Runs `$VISUAL`, else `$EDITOR`, else `vi`, through `sh` so a command with flags works.
fn run_editor(path: &Path) -> Result<(), String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("switchboard-edit")
        .arg(path)
        .status()
        .map_err(|e| format!("could not start the editor {editor:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor {editor:?} exited with {status}"))
    }
}
