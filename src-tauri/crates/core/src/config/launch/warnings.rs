//! The SP-02 classifier: patterns in a launch plan a person should look at twice before
//! approving it, shown in the trust dialog and by `doctor`.
//!
//! Each warning says what the plan does and names the part that does it, so a person can
//! judge it; none blocks anything (the fingerprint and approval do that). False alarms are not
//! free: a dialog that warns about every `awslabs.aws-*` server teaches people to click past
//! warnings, so each check reads the plan the way the program will (a package runner's
//! package argument, whole path components) rather than searching the joined text.

use super::super::credentials::binding_words;
use super::super::ValueSource;
use super::{is_loader_var, paths, pinning, LaunchPlan};
use crate::escape::{escape_for_display, is_suspicious};

/// Adds `w` unless it is already there.
fn push(out: &mut Vec<String>, w: String) {
    if !out.contains(&w) {
        out.push(w);
    }
}

/// The executable's name as it is invoked: lowercase, without a Windows launcher suffix, so
/// `NPX.CMD` and `powershell.exe` read as `npx` and `powershell`.
fn command_name(program: &std::path::Path) -> String {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    [".exe", ".cmd", ".bat", ".ps1"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .map_or(name.clone(), str::to_owned)
}

/// Whether `args` make shell `name` run a script given inline rather than a file.
fn inline_script(name: &str, args: &[String]) -> bool {
    match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" => args.iter().any(|a| {
            // `-c`, and clusters such as `-lc` and `-ec`.
            a.strip_prefix('-').is_some_and(|f| {
                !f.starts_with('-') && f.contains('c') && f.chars().all(|c| c.is_ascii_alphabetic())
            })
        }),
        "cmd" => args
            .iter()
            .any(|a| matches!(a.to_ascii_lowercase().as_str(), "/c" | "/k")),
        "powershell" | "pwsh" => args.iter().any(|a| {
            matches!(
                a.to_ascii_lowercase().as_str(),
                "-c" | "-command" | "-e" | "-ec" | "-enc" | "-encodedcommand"
            )
        }),
        _ => false,
    }
}

/// The notes on one text of the plan; `shown` is how the warning names it.
fn path_warnings(out: &mut Vec<String>, text: &str, shown: &str, home: Option<&str>) {
    let notes = paths::notes(text, home);
    if !notes.stores.is_empty() {
        push(
            out,
            format!(
                "touches a sensitive path ({}): {shown}",
                notes.stores.join(", ")
            ),
        );
    }
    if notes.system_dir {
        push(out, format!("touches a system directory: {shown}"));
    }
    if notes.whole_home {
        push(
            out,
            format!(
                "names a whole home directory, with every secret store in it (~/.ssh, ~/.aws, browser profiles): {shown}"
            ),
        );
    }
}

impl LaunchPlan {
    /// Patterns in the plan a person should look at twice before approving (SP-02). Reads
    /// `HOME` to recognise the user's home directory.
    pub fn warnings(&self) -> Vec<String> {
        let home = std::env::var("HOME").ok();
        self.warnings_with_home(home.as_deref())
    }

    /// [`Self::warnings`] with the home directory given.
    pub(super) fn warnings_with_home(&self, home: Option<&str>) -> Vec<String> {
        let mut w = Vec::new();
        for v in self.values() {
            if let ValueSource::Bound(b) = &v.value {
                push(
                    &mut w,
                    format!(
                        "{} is {}, a secret that is not this server's own",
                        escape_for_display(&v.name),
                        binding_words(b)
                    ),
                );
            }
        }
        let (program, args, env) = match self {
            Self::Stdio {
                program, args, env, ..
            } => (program, args, env),
            Self::Http { url, .. } => {
                if url::Url::parse(url).is_ok_and(|u| u.scheme() == "http") {
                    push(
                        &mut w,
                        "connects over plain http: what it sends and receives is not encrypted"
                            .into(),
                    );
                }
                return w;
            }
        };
        for v in env.iter().filter(|v| is_loader_var(&v.name)) {
            push(
                &mut w,
                format!(
                    "sets {}, which changes what the runtime loads or runs before the server itself",
                    escape_for_display(&v.name)
                ),
            );
        }
        let name = command_name(program);
        if inline_script(&name, args) {
            push(&mut w, format!("runs an inline {name} script"));
        }
        if matches!(name.as_str(), "sudo" | "doas" | "pkexec" | "run0" | "su") {
            push(&mut w, "runs with elevated privileges".into());
        }
        let joined = args.join(" ");
        if joined.contains("rm -rf") || name == "rm" {
            push(&mut w, "deletes files".into());
        }
        if ["curl", "wget", "nc", "ncat"].contains(&name.as_str())
            || joined.contains("curl ")
            || joined.contains("wget ")
        {
            push(&mut w, "uses a network download tool".into());
        }
        for u in pinning::unpinned_warnings(&name, args) {
            push(&mut w, u);
        }
        let program = program.to_string_lossy().into_owned();
        let texts = || args.iter().chain([&program]);
        for a in texts() {
            path_warnings(&mut w, a, &escape_for_display(a), home);
        }
        // Plain env values only: a secret's value is never read here, and its name says nothing.
        for v in env {
            if let ValueSource::Plain(value) = &v.value {
                let shown = escape_for_display(&format!("{}={value}", v.name));
                path_warnings(&mut w, value, &shown, home);
            }
        }
        if texts().any(|a| a.chars().any(is_suspicious)) {
            push(
                &mut w,
                "contains hidden or control characters (shown escaped)".into(),
            );
        }
        w
    }
}
