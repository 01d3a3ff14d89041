//! Which package a package runner (`npx`, `npm exec`, `pnpm dlx`, `bunx`, `yarn dlx`, `uvx`,
//! `uv tool run`, `pipx run`) downloads, and whether its version is pinned (SP-02).
//!
//! A runner given `pkg` or `pkg@latest` resolves the version at every start, so the code the
//! user approved today is not the code that runs after the next publish; a pinned spec
//! (`pkg@1.2.3`, `pkg==1.2.3`) names one published artifact. The fingerprint (SP-03) cannot
//! see that difference, so the consent view has to say it. `npx` is checked with or without
//! `-y`: npm assumes `--yes` when stdin is not a terminal, which it never is for a server.
//!
//! The package argument is found the way the runner finds it: options are skipped (with the
//! value of those that take one, so `uvx --python 3.12 pkg` is about `pkg`, not `3.12`), `--`
//! ends them, and the first positional argument is the package. Everything after it belongs
//! to the package and is not looked at (`npx -y pkg@1.0.0 stdio` has no second package). When
//! the package comes from an option (`npx -p`, `uvx --from`, `pipx run --spec`), the positional
//! argument is a command name and carries no version. Options this module does not know are
//! taken as switches without a value; a value-taking option it does not know therefore reads as
//! the package and yields at worst a spurious "not pinned", never a silent pass of the real one.

use crate::escape::escape_for_display;

/// How a runner spells versions.
#[derive(Clone, Copy)]
enum Registry {
    /// npm specs: `pkg@1.2.3`, `@scope/pkg@1.2.3`.
    Npm,
    /// Python requirement specs: `pkg==1.2.3`; uv also reads `pkg@1.2.3`.
    Python,
}

/// One package runner's command line.
struct Runner {
    /// How the warning names it.
    label: &'static str,
    registry: Registry,
    /// Options whose value is a package spec (the positional argument is then a command).
    package_options: &'static [&'static str],
    /// Other options that take a value.
    value_options: &'static [&'static str],
}

const NPM_VALUES: &[&str] = &[
    "-c",
    "--call",
    "-w",
    "--workspace",
    "--registry",
    "--cache",
    "--prefix",
    "--userconfig",
    "--loglevel",
    "--node-options",
    "--script-shell",
];

const UV_VALUES: &[&str] = &[
    "-w",
    "--with",
    "--with-editable",
    "--with-requirements",
    "-p",
    "--python",
    "--index",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--default-index",
    "-f",
    "--find-links",
    "-c",
    "--constraints",
    "--overrides",
    "-b",
    "--build-constraints",
    "-P",
    "--upgrade-package",
    "--reinstall-package",
    "--refresh-package",
    "--env-file",
    "--directory",
    "--project",
    "--config-file",
    "--cache-dir",
    "--python-preference",
    "--color",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--exclude-newer-package",
    "--link-mode",
    "-C",
    "--config-setting",
    "--no-build-package",
    "--no-binary-package",
    "--allow-insecure-host",
    "--torch-backend",
];

const NPX: Runner = Runner {
    label: "npx",
    registry: Registry::Npm,
    package_options: &["-p", "--package"],
    value_options: NPM_VALUES,
};

/// The runner `program` (a file name without directory) is, given its arguments, and the
/// arguments after its subcommand (`exec` in `npm exec`).
fn runner<'a>(program: &str, args: &'a [String]) -> Option<(Runner, &'a [String])> {
    let sub = |words: &[&str]| {
        let n = words.len();
        (args.len() >= n && args.iter().zip(words).all(|(a, w)| a == w)).then(|| &args[n..])
    };
    let npm_like = |label, package_options| Runner {
        label,
        registry: Registry::Npm,
        package_options,
        value_options: NPM_VALUES,
    };
    // pnpm's `-c` is a switch (shell mode), not npm's `--call <script>`.
    let pnpm = |label| Runner {
        label,
        registry: Registry::Npm,
        package_options: &["--package"],
        value_options: &["--allow-build", "--dir", "-C", "--reporter"],
    };
    let uv = |label| Runner {
        label,
        registry: Registry::Python,
        package_options: &["--from"],
        value_options: UV_VALUES,
    };
    Some(match program {
        "npx" => (NPX, args),
        "npm" => (
            npm_like("npm exec", NPX.package_options),
            sub(&["exec"]).or_else(|| sub(&["x"]))?,
        ),
        "pnpm" => (pnpm("pnpm dlx"), sub(&["dlx"])?),
        "pnpx" => (pnpm("pnpx"), args),
        "bunx" => (npm_like("bunx", NPX.package_options), args),
        "bun" => (npm_like("bun x", NPX.package_options), sub(&["x"])?),
        "yarn" => (npm_like("yarn dlx", NPX.package_options), sub(&["dlx"])?),
        "uvx" => (uv("uvx"), args),
        "uv" => (uv("uv tool run"), sub(&["tool", "run"])?),
        "pipx" => (
            Runner {
                label: "pipx run",
                registry: Registry::Python,
                package_options: &["--spec"],
                value_options: &["--python", "--pip-args", "--index-url", "-i", "--backend"],
            },
            sub(&["run"])?,
        ),
        _ => return None,
    })
}

/// The package specs a runner command line installs: those given by a package option, or else
/// the first positional argument.
fn package_specs<'a>(r: &Runner, args: &'a [String]) -> Vec<&'a str> {
    let mut from_options = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if a.starts_with("--") => (n, Some(v)),
            _ => (a.as_str(), None),
        };
        let takes_value = r.package_options.contains(&name) || r.value_options.contains(&name);
        let value = match inline {
            Some(v) => Some(v),
            None if takes_value => {
                i += 1;
                args.get(i).map(String::as_str)
            }
            None => None,
        };
        if let Some(v) = value.filter(|_| r.package_options.contains(&name)) {
            from_options.push(v);
        }
        i += 1;
    }
    if from_options.is_empty() {
        from_options.extend(args.get(i).map(String::as_str));
    }
    from_options
}

/// Why a package spec does not name one published version.
#[derive(Debug, PartialEq, Eq)]
enum Loose {
    NoVersion,
    Tag(String),
    Range(String),
    Git,
    Url,
    LocalPath,
}

impl Loose {
    fn words(&self) -> String {
        match self {
            Self::NoVersion => "no version given".into(),
            Self::Tag(t) => format!(
                "\"{}\" is a tag, which can be moved to another version",
                escape_for_display(t)
            ),
            Self::Range(r) => format!("\"{}\" is a range, not one version", escape_for_display(r)),
            Self::Git => "a git source, not a published version".into(),
            Self::Url => "a download URL, whose content can change".into(),
            Self::LocalPath => "a local path, not a published version".into(),
        }
    }
}

/// Sources that are not a registry name, common to npm and Python specs.
fn non_registry(spec: &str) -> Option<Loose> {
    let lower = spec.to_ascii_lowercase();
    let git = ["git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:"];
    if git.iter().any(|p| lower.starts_with(p)) {
        Some(Loose::Git)
    } else if lower.contains("://") {
        Some(Loose::Url)
    } else if lower.starts_with("file:")
        || lower.starts_with(['.', '/', '~', '\\'])
        || [".tgz", ".tar.gz", ".whl", ".zip"]
            .iter()
            .any(|e| lower.ends_with(e))
    {
        Some(Loose::LocalPath)
    } else {
        None
    }
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build` (a leading `v` or `=` allowed, as npm reads it).
fn exact_semver(v: &str) -> bool {
    let v = v.strip_prefix('=').unwrap_or(v);
    let v = v.strip_prefix('v').unwrap_or(v);
    let (core, rest) = match v.find(['-', '+']) {
        Some(at) => v.split_at(at),
        None => (v, ""),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && rest
            .chars()
            .skip(1)
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
        && (rest.is_empty() || rest.len() > 1)
}

/// Whether an npm version (after `@`) that is not exact reads as a range or a tag.
fn npm_loose(v: &str) -> Loose {
    let range_like = v.starts_with(|c: char| c.is_ascii_digit() || "^~<>=*".contains(c))
        || (v.starts_with('v') && v[1..].starts_with(|c: char| c.is_ascii_digit()))
        || v.contains(' ')
        || v.contains("||")
        || matches!(v, "x" | "X");
    if range_like {
        Loose::Range(v.to_owned())
    } else {
        Loose::Tag(v.to_owned())
    }
}

fn check_npm(spec: &str) -> Result<(), Loose> {
    if let Some(loose) = non_registry(spec) {
        return Err(loose);
    }
    // The scope's `@` is not a version separator: `@scope/pkg` has no version.
    let (scope_len, unscoped) = match spec.strip_prefix('@') {
        Some(rest) => match rest.split_once('/') {
            Some((scope, _)) => (scope.len() + 2, &spec[scope.len() + 2..]),
            None => return Err(Loose::NoVersion),
        },
        None => (0, spec),
    };
    let (name, version) = match unscoped.split_once('@') {
        Some((n, v)) => (n, Some(v)),
        None => (unscoped, None),
    };
    if scope_len == 0 && name.contains('/') {
        // `owner/repo` is GitHub shorthand.
        return Err(Loose::Git);
    }
    match version {
        None | Some("") => Err(Loose::NoVersion),
        Some(v) if v.starts_with("npm:") => check_npm(&v[4..]),
        Some(v) if exact_semver(v) => Ok(()),
        Some(v) => Err(npm_loose(v)),
    }
}

fn check_python(spec: &str) -> Result<(), Loose> {
    if let Some(loose) = non_registry(spec) {
        return Err(loose);
    }
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .unwrap_or(spec.len());
    let mut rest = spec[name_end..].trim_start();
    if rest.starts_with('[') {
        rest = rest.find(']').map_or("", |at| rest[at + 1..].trim_start());
    }
    let rest = rest.split(';').next().unwrap_or("").trim();
    if let Some(at) = rest.strip_prefix('@') {
        // `pkg@1.2.3` and `pkg@latest` are uv's; `pkg @ https://…` is a PEP 508 direct URL.
        let at = at.trim();
        return match non_registry(at) {
            Some(loose) => Err(loose),
            None if pep440_exact(at) => Ok(()),
            None if at.starts_with(|c: char| c.is_ascii_digit()) => {
                Err(Loose::Range(at.to_owned()))
            }
            None => Err(Loose::Tag(at.to_owned())),
        };
    }
    if rest.is_empty() {
        return Err(Loose::NoVersion);
    }
    if let Some(v) = rest.strip_prefix("===") {
        return if v.trim().is_empty() {
            Err(Loose::Range(rest.to_owned()))
        } else {
            Ok(())
        };
    }
    match rest.strip_prefix("==") {
        Some(v) if pep440_exact(v.trim()) => Ok(()),
        _ => Err(Loose::Range(rest.to_owned())),
    }
}

/// One PEP 440 version: starts with a digit, no wildcard, no second clause.
fn pep440_exact(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+!_".contains(c))
}

/// One warning per package a runner in `program args` installs without a pinned version;
/// `program` is the executable's file name (`npx`, `uvx.exe`).
pub(super) fn unpinned_warnings(program: &str, args: &[String]) -> Vec<String> {
    let Some((r, rest)) = runner(program, args) else {
        return Vec::new();
    };
    package_specs(&r, rest)
        .into_iter()
        .filter_map(|spec| {
            let checked = match r.registry {
                Registry::Npm => check_npm(spec),
                Registry::Python => check_python(spec),
            };
            checked.err().map(|why| {
                format!(
                    "{} installs and runs a package version that is not pinned: {} ({})",
                    r.label,
                    escape_for_display(spec),
                    why.words()
                )
            })
        })
        .collect()
}
