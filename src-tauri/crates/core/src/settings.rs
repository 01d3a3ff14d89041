//! The person's app settings: theme, default provider and model, the MCP Registry URL, the log
//! level and how long an idle server keeps running. A leaf: plain data, its validation and its
//! file; it depends on nothing else in the crate.
//!
//! # Why a JSON file and not SQLite
//! The settings live in `<data dir>/settings.json`, not in the database, because two of them
//! are needed before the database is open or when it cannot be opened at all: the log level
//! (logging starts before the host) and the theme (the window that explains a damaged database
//! should still look like the person chose). A small file is also what a person can read, back
//! up or fix by hand. It is written atomically (a temporary file in the same folder, flushed to
//! disk, then renamed over the old one), so a crash leaves the old settings or the new ones,
//! never half of each.
//!
//! # Nothing lost silently
//! Loading never fails: a missing file means the defaults. A file that is not JSON, or a field
//! whose value is not valid, gives the default for what could not be read, and a
//! [`LoadedSettings::problems`] sentence for each, and the file as it was is copied beside it
//! (`settings.json.bad-<unix seconds>`) before anything can overwrite it. Fields this version
//! does not know are ignored (a newer version's file still loads).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file name in the data directory.
pub const FILE_NAME: &str = "settings.json";
/// The registry the app browses unless the person names another (issue 14, point 3).
pub const DEFAULT_REGISTRY_URL: &str = "https://registry.modelcontextprotocol.io";
/// How long a server may sit idle before it is stopped, unless the person says otherwise.
pub const DEFAULT_IDLE_STOP_SECS: u64 = 600;
/// The longest idle-stop time accepted: one week.
pub const MAX_IDLE_STOP_SECS: u64 = 7 * 24 * 3600;
/// The shortest non-zero idle-stop time accepted: a server that stops every few seconds would
/// spend its life starting.
pub const MIN_IDLE_STOP_SECS: u64 = 30;
/// The longest provider name, model id or URL accepted.
const FIELD_MAX: usize = 2048;

/// How the window looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Follow the desktop's light or dark preference.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

/// How much the app logs about itself (libraries stay at warn).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// What happened, in outline (the default).
    #[default]
    Info,
    /// Enough to debug a server.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// The level as `tracing` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

/// The settings. Every field has a default; see the module docs for how a bad value is read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Light, dark or the system's choice.
    pub theme: Theme,
    /// The provider a new chat starts with (a configured provider's name), if any.
    pub default_provider: Option<String>,
    /// The model a new chat starts with, if any (else the provider's own default).
    pub default_model: Option<String>,
    /// The MCP Registry (v0.1 API) the app browses.
    pub registry_url: String,
    /// The app's own log level.
    pub log_level: LogLevel,
    /// Seconds a started server may sit unused before it is stopped; 0 means never.
    pub idle_stop_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            theme: Theme::System,
            default_provider: None,
            default_model: None,
            registry_url: DEFAULT_REGISTRY_URL.to_owned(),
            log_level: LogLevel::Info,
            idle_stop_secs: DEFAULT_IDLE_STOP_SECS,
        }
    }
}

/// Why settings cannot be saved as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A value is out of range or malformed; nothing was saved.
    #[error("{field}: {reason}")]
    Invalid {
        /// The setting.
        field: &'static str,
        /// What is wrong with it, for a person.
        reason: String,
    },
    /// The file could not be written; the old settings are still in place.
    #[error("the settings could not be saved to {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Settings as loaded, with what could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedSettings {
    /// The settings in effect.
    pub settings: Settings,
    /// One sentence per thing that could not be read and was replaced by its default.
    pub problems: Vec<String>,
    /// Where the unreadable file was copied, when it was.
    pub backup: Option<PathBuf>,
}

impl LoadedSettings {
    /// All problems as one warning for a person, or `None` when the file was fine.
    pub fn warning(&self) -> Option<String> {
        if self.problems.is_empty() {
            return None;
        }
        let kept = match &self.backup {
            Some(b) => format!(" The file as it was is kept at {}.", b.display()),
            None => String::new(),
        };
        Some(format!(
            "Some settings could not be read and are back to their defaults: {}.{kept}",
            self.problems.join("; ")
        ))
    }
}

impl Settings {
    /// Checks every field; the first bad one is named. A provider or model given as blank
    /// text is read as "none".
    pub fn validated(mut self) -> Result<Self, SettingsError> {
        self.default_provider = blank_is_none(self.default_provider);
        self.default_model = blank_is_none(self.default_model);
        for (field, v) in [
            ("default_provider", &self.default_provider),
            ("default_model", &self.default_model),
        ] {
            if let Some(v) = v {
                check_text(field, v)?;
            }
        }
        self.registry_url = check_registry_url(self.registry_url.trim())?;
        check_idle(self.idle_stop_secs)?;
        Ok(self)
    }
}

fn blank_is_none(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

fn check_text(field: &'static str, v: &str) -> Result<(), SettingsError> {
    if v.len() > FIELD_MAX {
        return Err(invalid(field, format!("longer than {FIELD_MAX} bytes")));
    }
    if v.chars().any(char::is_control) {
        return Err(invalid(field, "contains control characters".into()));
    }
    Ok(())
}

fn check_registry_url(v: &str) -> Result<String, SettingsError> {
    const FIELD: &str = "registry_url";
    check_text(FIELD, v)?;
    let url = url::Url::parse(v).map_err(|e| invalid(FIELD, format!("not a URL ({e})")))?;
    // A registry decides which commands get proposed: plain http only to this machine (the
    // registry client refuses it elsewhere too).
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if !(url.scheme() == "https" || (url.scheme() == "http" && loopback)) {
        return Err(invalid(
            FIELD,
            "must start with https:// (http:// only for a registry on this machine)".into(),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            FIELD,
            "must not carry a user name or password".into(),
        ));
    }
    // Kept as typed (minus a trailing slash), so the page shows what the person wrote.
    Ok(v.trim_end_matches('/').to_owned())
}

fn check_idle(secs: u64) -> Result<(), SettingsError> {
    if secs != 0 && !(MIN_IDLE_STOP_SECS..=MAX_IDLE_STOP_SECS).contains(&secs) {
        return Err(invalid(
            "idle_stop_secs",
            format!(
                "must be 0 (never stop) or between {MIN_IDLE_STOP_SECS} seconds and {} days",
                MAX_IDLE_STOP_SECS / 86_400
            ),
        ));
    }
    Ok(())
}

fn invalid(field: &'static str, reason: String) -> SettingsError {
    SettingsError::Invalid { field, reason }
}

/// The settings file of a data directory.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// Reads the settings of `data_dir`; never fails (see the module docs).
pub fn load(data_dir: &Path) -> LoadedSettings {
    let file = path(data_dir);
    let text = match std::fs::read(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return LoadedSettings {
                settings: Settings::default(),
                problems: Vec::new(),
                backup: None,
            }
        }
        Err(e) => {
            return LoadedSettings {
                settings: Settings::default(),
                problems: vec![format!("{} could not be read ({e})", file.display())],
                backup: None,
            }
        }
    };
    let (settings, problems) = parse(&text);
    let backup = if problems.is_empty() {
        None
    } else {
        keep_copy(&file, &text)
    };
    LoadedSettings {
        settings,
        problems,
        backup,
    }
}

/// Reads each field on its own, so one bad value costs only that value.
fn parse(text: &[u8]) -> (Settings, Vec<String>) {
    let mut s = Settings::default();
    let mut problems = Vec::new();
    let map = match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => m,
        Ok(_) => return (s, vec!["the file is not a JSON object".into()]),
        Err(e) => return (s, vec![format!("the file is not valid JSON ({e})")]),
    };
    let mut field =
        |name: &'static str, apply: &mut dyn FnMut(serde_json::Value) -> Result<(), String>| {
            if let Some(v) = map.get(name) {
                if let Err(why) = apply(v.clone()) {
                    problems.push(format!("{name} ({why})"));
                }
            }
        };
    field("theme", &mut |v| {
        s.theme = serde_json::from_value(v).map_err(|_| "not system, light or dark".to_owned())?;
        Ok(())
    });
    field("default_provider", &mut |v| {
        let p: Option<String> = serde_json::from_value(v).map_err(|_| "not text".to_owned())?;
        let p = blank_is_none(p);
        if let Some(p) = &p {
            check_text("default_provider", p).map_err(|e| e.to_string())?;
        }
        s.default_provider = p;
        Ok(())
    });
    field("default_model", &mut |v| {
        let m: Option<String> = serde_json::from_value(v).map_err(|_| "not text".to_owned())?;
        let m = blank_is_none(m);
        if let Some(m) = &m {
            check_text("default_model", m).map_err(|e| e.to_string())?;
        }
        s.default_model = m;
        Ok(())
    });
    field("registry_url", &mut |v| {
        let u: String = serde_json::from_value(v).map_err(|_| "not text".to_owned())?;
        s.registry_url = check_registry_url(u.trim()).map_err(|e| e.to_string())?;
        Ok(())
    });
    field("log_level", &mut |v| {
        s.log_level = serde_json::from_value(v)
            .map_err(|_| "not error, warn, info, debug or trace".to_owned())?;
        Ok(())
    });
    field("idle_stop_secs", &mut |v| {
        let n: u64 = serde_json::from_value(v).map_err(|_| "not a whole number".to_owned())?;
        check_idle(n).map_err(|e| e.to_string())?;
        s.idle_stop_secs = n;
        Ok(())
    });
    (s, problems)
}

/// Copies an unreadable file beside itself; `None` when even that fails (the warning then
/// says nothing about a copy, and the file is still there until the next save).
fn keep_copy(file: &Path, text: &[u8]) -> Option<PathBuf> {
    // The same damaged file is read on every start and every visit of the page: one copy.
    if let Some(same) = existing_copy(file, text) {
        return Some(same);
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut name = file.as_os_str().to_owned();
    name.push(format!(".bad-{secs}"));
    let backup = PathBuf::from(name);
    match std::fs::write(&backup, text) {
        Ok(()) => Some(backup),
        Err(e) => {
            tracing::warn!(path = %backup.display(), error = %e, "could not keep a copy of the unreadable settings");
            None
        }
    }
}

/// A copy of `text` already kept beside `file`, if there is one.
fn existing_copy(file: &Path, text: &[u8]) -> Option<PathBuf> {
    let dir = file.parent()?;
    let prefix = format!("{}.bad-", file.file_name()?.to_string_lossy());
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .find(|p| std::fs::read(p).is_ok_and(|t| t == text))
}

/// Validates and saves `settings` atomically; returns them as saved.
pub fn save(data_dir: &Path, settings: Settings) -> Result<Settings, SettingsError> {
    let settings = settings.validated()?;
    let file = path(data_dir);
    let io = |source| SettingsError::Io {
        path: file.clone(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(io)?;
    let mut text =
        serde_json::to_vec_pretty(&settings).map_err(|e| io(std::io::Error::other(e)))?;
    text.push(b'\n');
    // A name of this process's own in the same folder (a rename is atomic only within one
    // file system); `create_new` refuses to follow anything already there.
    let mut tmp_name = file.as_os_str().to_owned();
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &file)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    // The rename is durable only once the folder's entry is on disk too.
    if let Ok(dir) = std::fs::File::open(data_dir) {
        let _ = dir.sync_all();
    }
    Ok(settings)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
