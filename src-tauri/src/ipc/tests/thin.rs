//! Keeps the shell thin (STYLE 11, issue 11): a test reads every `ipc/*.rs` file as it is on
//! disk and fails, naming each offender, when a `#[tauri::command]` function grows past
//! [`COMMAND_LINES_MAX`] lines, opens no `#[tracing::instrument(skip_all ...)]` span, names an
//! argument that carries content or secrets in that span ([`CONTENT_ARGS`]), or when an
//! `IpcError` is built as a struct literal outside `mod.rs` (errors come from the
//! `IpcError::invalid` family there).
//!
//! It reads the directory at test time rather than a fixed list of files, so a new command
//! file is covered the day it appears; and it checks that it found every command `build.rs`
//! declares, so a change of layout that blinds the scan fails instead of passing quietly.
//! The scan leans on rustfmt's layout (a command's closing brace alone at column 0), which
//! `cargo fmt --check` already enforces, instead of parsing Rust.

use std::path::Path;

/// The most lines a command may span, from its `fn` line to its closing brace. The target is
/// about 20 (ARCHITECTURE "each command ~20 lines"); the slack is for rustfmt's line breaks.
const COMMAND_LINES_MAX: usize = 25;

/// Argument names that carry what a person typed, what a model or server sent, or secrets.
/// A span field reading one would copy it into every log line of the command (the log file
/// keeps span fields), so the span's attribute may not mention them at all.
const CONTENT_ARGS: &[&str] = &[
    "answer",
    "args",
    "args_json",
    "arguments",
    "bindings",
    "input",
    "key",
    "nonce",
    "query",
    "reply",
    "search",
    "text",
    "title",
    "uri",
    "value",
];

/// One `#[tauri::command]` function as found in a file.
#[derive(Debug)]
struct Command {
    name: String,
    /// Lines from the `fn` line to the closing brace, both counted.
    lines: usize,
    /// The attributes between `#[tauri::command]` and the `fn` line, joined.
    attributes: String,
}

/// The name of the function a line declares, if it declares one.
fn declared_fn(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "async "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    rest = rest.strip_prefix("async ").unwrap_or(rest);
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(['(', '<']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The commands of one file; `Err` names a command whose end could not be found.
fn commands(text: &str) -> Result<Vec<Command>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[tauri::command]" {
            i += 1;
            continue;
        }
        let mut attributes = String::new();
        let mut j = i + 1;
        let name = loop {
            let Some(line) = lines.get(j) else {
                return Err(format!(
                    "no fn after the #[tauri::command] on line {}",
                    i + 1
                ));
            };
            if let Some(name) = declared_fn(line) {
                break name.to_owned();
            }
            attributes.push_str(line.trim());
            j += 1;
        };
        let Some(end) = (j..lines.len()).find(|&k| lines[k] == "}") else {
            return Err(format!("{name}: no closing brace at column 0"));
        };
        out.push(Command {
            name,
            lines: end - j + 1,
            attributes,
        });
        i = end + 1;
    }
    Ok(out)
}

/// Struct-literal `IpcError`s in `text`, as `line: text`. Impl headers (`for IpcError {`,
/// `impl IpcError {`) and return types (`-> IpcError {`) are not literals; comments are
/// skipped.
fn error_literals(text: &str) -> Vec<String> {
    let literal = concat!("IpcError", " {");
    let field = concat!("code: ", "ErrorCode::");
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| {
            line.contains(field)
                || line.match_indices(literal).any(|(at, _)| {
                    let before = line[..at].trim_end();
                    !(before.ends_with(" for")
                        || before.ends_with("impl")
                        || before.ends_with("->"))
                })
        })
        .map(|(n, line)| format!("{}: {}", n + 1, line.trim()))
        .collect()
}

/// What is wrong with one file's commands and errors, one sentence each.
fn problems(file: &str, text: &str, found: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    match commands(text) {
        Err(e) => out.push(format!("{file}: {e}")),
        Ok(list) => {
            for c in list {
                if c.lines > COMMAND_LINES_MAX {
                    out.push(format!(
                        "{file}: command `{}` is {} lines (at most {COMMAND_LINES_MAX}); move \
                         parsing and DTO mapping into functions or From impls beside the DTOs",
                        c.name, c.lines
                    ));
                }
                match c.attributes.split_once("#[tracing::instrument(skip_all") {
                    None => out.push(format!(
                        "{file}: command `{}` has no #[tracing::instrument(skip_all, ...)] span",
                        c.name
                    )),
                    Some((_, span)) => {
                        let span = span.split_once(")]#[").map_or(span, |(s, _)| s);
                        let named = span
                            .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                            .filter(|word| CONTENT_ARGS.contains(word));
                        for word in named {
                            out.push(format!(
                                "{file}: the span of `{}` reads `{word}`, which may carry \
                                 content or secrets; log identifiers only",
                                c.name
                            ));
                        }
                    }
                }
                found.push(c.name);
            }
        }
    }
    if file != "mod.rs" {
        for l in error_literals(text) {
            out.push(format!(
                "{file}:{l}: build errors with IpcError::invalid/not_found/new"
            ));
        }
    }
    out
}

/// The commands `build.rs` declares.
fn declared() -> Vec<&'static str> {
    include_str!("../../../build.rs")
        .split_once("const COMMANDS: &[&str] = &[")
        .and_then(|(_, rest)| rest.split_once("];"))
        .map(|(list, _)| list)
        .unwrap_or_default()
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn commands_stay_thin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/src/ipc");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let mut found = Vec::new();
    let mut problems_all = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "thin.rs" {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        problems_all.extend(problems(&name, &text, &mut found));
    }
    let declared = declared();
    assert!(declared.len() >= 5, "build.rs lists {declared:?}");
    for cmd in &declared {
        if !found.iter().any(|f| f == cmd) {
            problems_all.push(format!(
                "build.rs declares `{cmd}`, but no #[tauri::command] fn {cmd} was found in ipc/"
            ));
        }
    }
    // A command the window calls must be declared and granted, or every call of it fails
    // with Tauri's "not allowed" (which the window cannot even word).
    let granted = include_str!("../../../capabilities/default.json");
    for cmd in &found {
        if !declared.iter().any(|d| d == cmd) {
            problems_all.push(format!(
                "`{cmd}` is a command but build.rs does not declare it"
            ));
        }
        let allow = format!("\"allow-{}\"", cmd.replace('_', "-"));
        if !granted.contains(&allow) {
            problems_all.push(format!(
                "`{cmd}` is not granted in capabilities/default.json ({allow})"
            ));
        }
    }
    assert!(
        problems_all.is_empty(),
        "the IPC shell is no longer thin:\n{}",
        problems_all.join("\n")
    );
}

/// A file with one command too long and without a span, one whose span reads a message's
/// text, and one struct-literal error between an impl header and a return type that are not.
const SAMPLE: &str = r#"#[tauri::command]
#[specta::specta]
pub async fn long(
    a: u8,
) -> u8 {
BODY}

#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(
    a = a,
    n = text.len(),
))]
pub fn short(a: u8, text: String) -> u8 {
    a
}

impl From<X> for IpcError {
}
fn f() -> IpcError {
    IpcError { code: c, message: m }
}
"#;

#[test]
fn the_scan_sees_long_commands_spans_that_read_content_and_literals() {
    let text = SAMPLE.replace("BODY", &"    let x = 1;\n".repeat(COMMAND_LINES_MAX));
    let mut found = Vec::new();
    let p = problems("x.rs", &text, &mut found);
    assert_eq!(found, ["long", "short"]);
    assert_eq!(p.len(), 4, "{p:#?}");
    assert!(p[0].contains("`long` is 29 lines"), "{}", p[0]);
    assert!(
        p[1].contains("`long` has no #[tracing::instrument"),
        "{}",
        p[1]
    );
    assert!(p[2].contains("span of `short` reads `text`"), "{}", p[2]);
    assert!(p[3].starts_with("x.rs:46: "), "{}", p[3]);
    // mod.rs is where the constructors build the struct; commands there are still checked.
    assert_eq!(problems("mod.rs", &text, &mut Vec::new()).len(), 3);
}
