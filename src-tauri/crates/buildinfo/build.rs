//! Build script of the build info: the commit it is built from, for `switchboard --version`
//! (`switchboard 0.1.0 (abc1234)`), so a bug report or an installed package names the exact
//! source. From `git rev-parse` in a checkout; a source tarball has no `.git`, so there the
//! packager's `SWITCHBOARD_COMMIT` is used, and "unknown" when neither exists.
//!
//! The script reruns when HEAD moves (the files git keeps it in), so a new commit is never
//! printed with the old hash, and only then: a build of unchanged sources stays cached.

use std::path::PathBuf;
use std::process::Command;

/// The rustc environment variable `main.rs` reads with `env!`.
const OUT_VAR: &str = "SWITCHBOARD_BUILD_COMMIT";
/// The packager's fallback for builds without git.
const FALLBACK_VAR: &str = "SWITCHBOARD_COMMIT";

fn main() {
    println!("cargo:rerun-if-env-changed={FALLBACK_VAR}");
    println!("cargo:rerun-if-changed=build.rs");
    let from_git = git(&["rev-parse", "--short=7", "HEAD"]);
    if from_git.is_some() {
        watch_head();
    }
    let commit = from_git
        .or_else(|| std::env::var(FALLBACK_VAR).ok().and_then(one_word))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env={OUT_VAR}={commit}");
}

/// Runs git in the crate's directory; the trimmed stdout when it succeeds with one word.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env_dir())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    one_word(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A commit id or ref is one word: anything else (empty, spaces, a newline from a bad value)
/// is not printed after the version.
fn one_word(s: String) -> Option<String> {
    let s = s.trim();
    let ok = !s.is_empty() && s.len() <= 64 && !s.chars().any(char::is_whitespace);
    ok.then(|| s.to_owned())
}

/// Asks cargo to rerun when HEAD or the branch it points to changes. `--git-path` resolves the
/// files of worktrees and packed refs; only existing files are named, because cargo reruns a
/// script on every build when a watched file is missing.
fn watch_head() {
    let mut paths = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for p in paths {
        let Some(file) = git(&["rev-parse", "--git-path", &p]) else {
            continue;
        };
        let file = absolute(PathBuf::from(file));
        if file.is_file() {
            println!("cargo:rerun-if-changed={}", file.display());
        }
    }
}

/// `--git-path` answers relative to the working directory git ran in.
fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        env_dir().join(p)
    }
}

fn env_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default()
}
