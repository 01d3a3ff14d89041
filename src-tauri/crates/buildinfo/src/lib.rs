//! What a build of Switchboard is: the version and the commit, for `switchboard --version` and
//! the app's Settings page, so a bug report or an installed package names the exact source.
//!
//! A crate of its own because its build script reruns on every commit (build.rs): only this
//! tiny crate rebuilds then, not the core every binary depends on.

/// The workspace version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The short commit id (`git rev-parse --short=7 HEAD`), the packager's `SWITCHBOARD_COMMIT`
/// in a build without git, or "unknown".
pub const COMMIT: &str = env!("SWITCHBOARD_BUILD_COMMIT");

/// "0.1.0 (abc1234)": what `--version` prints after the program's name.
pub const DESCRIBE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("SWITCHBOARD_BUILD_COMMIT"),
    ")"
);

#[cfg(test)]
mod tests {
    #[test]
    fn the_commit_is_one_word_and_the_version_is_the_workspace_one() {
        assert!(!super::COMMIT.is_empty());
        assert!(!super::COMMIT.chars().any(char::is_whitespace));
        assert_eq!(super::VERSION.split('.').count(), 3);
        assert_eq!(
            super::DESCRIBE,
            format!("{} ({})", super::VERSION, super::COMMIT)
        );
    }
}
