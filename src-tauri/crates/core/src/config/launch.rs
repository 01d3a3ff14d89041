//! Resolving a server into the exact thing that would run or be contacted, and fingerprinting
//! it (SP-01, SP-03, SP-05, SP-09, SP-10).
//!
//! The user approves a [`LaunchPlan`]: for a local server the absolute executable, every
//! argument, the working directory and every environment variable the child receives with its
//! value (a secret by its binding, never its value); for a remote server the URL and every
//! header the same way. Approval is bound to [`LaunchPlan::fingerprint`]; any later change of
//! the plan (an edited file, an import, a changed env value or secret binding, a PATH change
//! that resolves `npx` elsewhere) yields a different fingerprint and voids trust. Remote servers
//! are approved like local ones: a header can carry a credential to wherever the URL points.
//!
//! Executables are resolved without a shell. A bare name is looked up on the host's PATH, then
//! on a PATH probed from the user's login shell, because desktop apps started from a launcher do
//! not inherit the PATH set in `.bashrc`/`.zprofile` (the most common "spawn npx ENOENT" report).
//! A relative path with a slash is resolved against the server's cwd, never the app's cwd.
//!
//! [`LaunchPlan::warnings`] (SP-02) lives in `warnings`, with its path rules in `paths` and its
//! package-runner rules in `pinning`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::credentials::shown_value;
use super::{Binding, HttpSpec, NamedValue, ServerSpec, StdioSpec, TransportSpec, ValueSource};
use crate::escape::{escape_for_display, quote_arg};
use crate::sandbox::SandboxSpec;

mod paths;
mod pinning;
mod warnings;

/// Environment variables a stdio child inherits from the host, as in the official TypeScript
/// SDK's default safelist. Everything else (LLM API keys, cloud credentials) stays behind.
pub const INHERITED_ENV: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// What a trust decision is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LaunchPlan {
    /// A child process.
    Stdio {
        /// The absolute path of the executable.
        program: PathBuf,
        /// Every argument.
        args: Vec<String>,
        /// The working directory.
        cwd: PathBuf,
        /// The variables set on top of the inherited allowlist, with their values or secret
        /// bindings, sorted by name.
        env: Vec<NamedValue>,
        /// Where the program was found.
        resolved_via: Resolution,
        /// The sandbox it runs in; unset when off (SP-07). Part of the fingerprint when on.
        #[serde(default, skip_serializing_if = "SandboxSpec::is_unset")]
        sandbox: SandboxSpec,
    },
    /// A remote endpoint.
    Http {
        /// The URL.
        url: String,
        /// The configured headers with their values or secret bindings, sorted by name
        /// (case-insensitively).
        headers: Vec<NamedValue>,
        /// "Allow insecure (development)": tokens may go over plain http to another machine.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allow_insecure: bool,
    },
}

/// Variables that change what a runtime loads or runs before the server's own code (SP-02):
/// a value there can run anything, whatever the approved command is.
const LOADER_VARS: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "GCONV_PATH",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "_JAVA_OPTIONS",
    "CLASSPATH",
    "BASH_ENV",
    "ENV",
    "PATH",
];

/// Whether setting `name` changes what a runtime loads (`DYLD_*` on macOS included).
pub fn is_loader_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("DYLD_") || LOADER_VARS.contains(&upper.as_str())
}

/// How an executable was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The command was already an absolute path.
    Absolute,
    /// A path relative to the server's working directory.
    RelativeToCwd,
    /// Found on the host process's PATH.
    HostPath,
    /// Found only on the PATH reported by the user's login shell.
    LoginShellPath,
}

/// Why a stdio command cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Nothing with that name is on either PATH.
    #[error("{command:?} was not found on the app's PATH or on your login shell's PATH ({searched} directories searched)")]
    NotFound {
        /// The command as configured.
        command: String,
        /// How many directories were searched.
        searched: usize,
    },
    /// Nothing exists at the configured path.
    #[error("{path} does not exist")]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// The path exists but cannot be executed.
    #[error("{path} exists but is not an executable file")]
    NotExecutable {
        /// The offending path.
        path: PathBuf,
    },
    /// The working directory is missing.
    #[error("the working directory {0} does not exist")]
    NoCwd(PathBuf),
    /// UNC paths are refused (SP-04).
    #[error("network (UNC) executables are not allowed: {0}")]
    Unc(String),
}

/// The PATH directories to search, gathered once by the host.
#[derive(Clone, Debug, Default)]
pub struct SearchPath {
    /// The host process's own PATH.
    pub host: Vec<PathBuf>,
    /// The login shell's PATH, if it could be probed.
    pub login_shell: Vec<PathBuf>,
}

impl SearchPath {
    /// The host's PATH from the environment, plus a login-shell probe (which may take up to
    /// two seconds; call it off the UI thread and cache the result).
    pub fn probe() -> Self {
        Self {
            login_shell: probe_login_shell_path(),
            ..Self::from_env()
        }
    }

    /// [`SearchPath::probe`] with `shell` as the login shell.
    pub fn probe_with(shell: &Path) -> Self {
        Self {
            login_shell: probe_shell_path(shell),
            ..Self::from_env()
        }
    }

    /// The host's PATH from the environment alone, without the login-shell probe.
    pub fn from_env() -> Self {
        Self {
            host: std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            login_shell: Vec::new(),
        }
    }
}

/// Asks the user's login shell for its PATH: `$SHELL -l -c 'printf %s "$PATH"'`, with a
/// timeout. Returns an empty list on any failure; resolution then reports "not found" with
/// both PATHs named, which `doctor` explains.
pub fn probe_login_shell_path() -> Vec<PathBuf> {
    let shell = std::env::var_os("SHELL").unwrap_or_else(|| OsString::from("/bin/sh"));
    probe_shell_path(Path::new(&shell))
}

/// Asks `shell` (run as a login shell) for its PATH; see [`probe_login_shell_path`].
pub fn probe_shell_path(shell: &Path) -> Vec<PathBuf> {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(shell);
    // Its own process group, so a start-up file that hangs is killed with everything it ran.
    cmd.process_group(0);
    cmd.args(["-l", "-c", "printf '__SBPATH__%s__SBPATH__' \"$PATH\""])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped());
    let Ok(mut child) = cmd.spawn() else {
        return Vec::new();
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                stop_probe(&mut child);
                return Vec::new();
            }
        }
    }
    let Ok(out) = child.wait_with_output() else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // Shell start-up files may print noise; take what is between the markers.
    let Some(inner) = text.split("__SBPATH__").nth(1) else {
        return Vec::new();
    };
    std::env::split_paths(inner)
        .filter(|p| p.is_absolute())
        .collect()
}

/// Ends a login shell that took too long: SIGTERM first, so its start-up files' exit traps
/// run (pyenv's rehash holds a lock file that a SIGKILL leaves behind, and every later login
/// shell then waits 60 s for it), then SIGKILL whatever is left of the group.
fn stop_probe(child: &mut std::process::Child) {
    use nix::sys::signal::{killpg, Signal};
    let Ok(pid) = i32::try_from(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    let group = nix::unistd::Pid::from_raw(pid);
    let _ = killpg(group, Signal::SIGTERM);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(300);
    while std::time::Instant::now() < deadline && killpg(group, None).is_ok() {
        if matches!(child.try_wait(), Ok(Some(_))) && killpg(group, None).is_err() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = killpg(group, Signal::SIGKILL);
    let _ = child.wait();
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Resolves a command to an absolute executable path without a shell (SP-09).
pub fn resolve_program(
    command: &str,
    cwd: &Path,
    search: &SearchPath,
) -> Result<(PathBuf, Resolution), ResolveError> {
    if command.starts_with("\\\\") || command.starts_with("//") {
        return Err(ResolveError::Unc(command.to_owned()));
    }
    let as_path = Path::new(command);
    let check = |p: PathBuf, how: Resolution| {
        if is_executable_file(&p) {
            Ok((p, how))
        } else if !p.exists() {
            Err(ResolveError::Missing { path: p })
        } else {
            Err(ResolveError::NotExecutable { path: p })
        }
    };
    if as_path.is_absolute() {
        return check(as_path.to_path_buf(), Resolution::Absolute);
    }
    if command.contains('/') {
        return check(cwd.join(as_path), Resolution::RelativeToCwd);
    }
    // Only absolute PATH entries: an empty or relative entry would search the app's cwd.
    for (dirs, how) in [
        (&search.host, Resolution::HostPath),
        (&search.login_shell, Resolution::LoginShellPath),
    ] {
        for dir in dirs.iter().filter(|d| d.is_absolute()) {
            let candidate = dir.join(command);
            if is_executable_file(&candidate) {
                return Ok((candidate, how));
            }
        }
    }
    Err(ResolveError::NotFound {
        command: command.to_owned(),
        searched: search.host.len() + search.login_shell.len(),
    })
}

impl LaunchPlan {
    /// Resolves a spec into the plan a user approves. `default_cwd` is used when the spec has
    /// none (the host passes its data directory, never its own process cwd).
    pub fn resolve(
        spec: &ServerSpec,
        default_cwd: &Path,
        search: &SearchPath,
    ) -> Result<Self, ResolveError> {
        match &spec.transport {
            TransportSpec::Stdio(s) => Self::resolve_stdio(s, default_cwd, search),
            TransportSpec::Http(h) => Ok(Self::for_http(h)),
        }
    }

    fn resolve_stdio(
        s: &StdioSpec,
        default_cwd: &Path,
        search: &SearchPath,
    ) -> Result<Self, ResolveError> {
        let cwd = s.cwd.clone().unwrap_or_else(|| default_cwd.to_path_buf());
        if !cwd.is_dir() {
            return Err(ResolveError::NoCwd(cwd));
        }
        let (program, resolved_via) = resolve_program(&s.command, &cwd, search)?;
        let mut env = s.env.clone();
        env.sort_by(|a, b| a.name.cmp(&b.name));
        // Grants of a switched-off sandbox mean nothing, so they are not part of the plan.
        let sandbox = if s.sandbox.enabled {
            s.sandbox.normalized()
        } else {
            SandboxSpec::default()
        };
        Ok(Self::Stdio {
            program,
            args: s.args.clone(),
            cwd,
            env,
            resolved_via,
            sandbox,
        })
    }

    fn for_http(h: &HttpSpec) -> Self {
        let mut headers = h.headers.clone();
        headers.sort_by_key(|v| v.name.to_ascii_lowercase());
        Self::Http {
            url: h.url.clone(),
            headers,
            allow_insecure: h.allow_insecure,
        }
    }

    /// SHA-256 over a canonical encoding of what runs or is contacted, values and secret
    /// bindings included (never secret values: a rotated token is not a new launch spec).
    /// `resolved_via` is left out: finding the same binary another way is not a change the
    /// user needs to re-approve. Every part is tagged and length-prefixed, so no two plans
    /// encode alike.
    pub fn fingerprint(&self) -> Fingerprint {
        let mut h = Sha256::new();
        let mut field = |tag: &str, value: &[u8]| {
            h.update((tag.len() as u64).to_le_bytes());
            h.update(tag.as_bytes());
            h.update((value.len() as u64).to_le_bytes());
            h.update(value);
        };
        fn values(field: &mut dyn FnMut(&str, &[u8]), tag: &str, vs: &[NamedValue]) {
            for v in vs {
                field(tag, v.name.as_bytes());
                match &v.value {
                    ValueSource::Plain(p) => field("plain", p.as_bytes()),
                    ValueSource::Secret(n) => field("own-secret", n.as_str().as_bytes()),
                    ValueSource::Bound(Binding::Provider(p)) => {
                        field("bound-provider", p.as_str().as_bytes())
                    }
                    ValueSource::Bound(Binding::Server { server, name }) => {
                        field("bound-server", server.as_str().as_bytes());
                        field("bound-name", name.as_str().as_bytes());
                    }
                }
            }
        }
        match self {
            Self::Stdio {
                program,
                args,
                cwd,
                env,
                sandbox,
                ..
            } => {
                field("kind", b"stdio/2");
                field("program", program.as_os_str().as_encoded_bytes());
                for a in args {
                    field("arg", a.as_bytes());
                }
                field("cwd", cwd.as_os_str().as_encoded_bytes());
                values(&mut field, "env", env);
                // Nothing when off: approvals made before sandboxes existed stay valid.
                for (tag, value) in sandbox.fingerprint_parts() {
                    field(tag, &value);
                }
            }
            Self::Http {
                url,
                headers,
                allow_insecure,
            } => {
                field("kind", b"http/2");
                field("url", url.as_bytes());
                values(&mut field, "header", headers);
                // Only when on, so fingerprints approved before the setting existed still hold.
                if *allow_insecure {
                    field("allow-insecure", b"1");
                }
            }
        }
        Fingerprint(hex::encode(h.finalize()))
    }

    /// The consent text: every part on its own line, untruncated, each escaped so control,
    /// ANSI and bidi characters are visible (SP-01). Env vars and headers show their values;
    /// secrets show their binding, never their value.
    pub fn consent_lines(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        match self {
            Self::Stdio {
                program,
                args,
                cwd,
                env,
                resolved_via,
                sandbox,
            } => {
                out.push((
                    "executable".into(),
                    escape_for_display(&program.to_string_lossy()),
                ));
                let how = match resolved_via {
                    Resolution::Absolute => "configured as an absolute path",
                    Resolution::RelativeToCwd => "relative to the working directory",
                    Resolution::HostPath => "found on the app's PATH",
                    Resolution::LoginShellPath => "found on your login shell's PATH",
                };
                out.push(("resolved".into(), how.into()));
                for (i, a) in args.iter().enumerate() {
                    out.push((format!("arg[{i}]"), quote_arg(a)));
                }
                out.push(("cwd".into(), escape_for_display(&cwd.to_string_lossy())));
                if env.is_empty() {
                    out.push(("env".into(), "(none beyond the safe defaults)".into()));
                }
                for v in env {
                    out.push((
                        format!("env {}", escape_for_display(&v.name)),
                        shown_value(&v.name, &v.value),
                    ));
                }
                out.extend(sandbox.consent_lines());
            }
            Self::Http {
                url,
                headers,
                allow_insecure,
            } => {
                out.push(("url".into(), escape_for_display(url)));
                if *allow_insecure {
                    out.push((
                        "insecure".into(),
                        "ALLOWED (development): sign-in tokens may cross the network over plain http"
                            .into(),
                    ));
                }
                if headers.is_empty() {
                    out.push(("headers".into(), "(none)".into()));
                }
                for v in headers {
                    out.push((
                        format!("header {}", escape_for_display(&v.name)),
                        shown_value(&v.name, &v.value),
                    ));
                }
            }
        }
        out
    }

    /// The env vars or headers of the plan.
    pub fn values(&self) -> &[NamedValue] {
        match self {
            Self::Stdio { env, .. } => env,
            Self::Http { headers, .. } => headers,
        }
    }
}

/// A launch-spec fingerprint, hex SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(pub String);

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests;
