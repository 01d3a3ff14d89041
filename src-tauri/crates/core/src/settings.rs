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
/// The share of a model's context window the tool definitions may take before the chat warns
/// (issue 16), in percent, unless the person says otherwise; 0 never warns.
pub const DEFAULT_TOOLS_WARN_PERCENT: u32 = 25;
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
    /// The share of the model's context window, in percent, past which the chat warns that the
    /// tool definitions take too much (issue 16); 0 never warns.
    pub tools_warn_percent: u32,
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
            tools_warn_percent: DEFAULT_TOOLS_WARN_PERCENT,
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
        check_warn_percent(self.tools_warn_percent)?;
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

fn check_warn_percent(p: u32) -> Result<(), SettingsError> {
    if p > 100 {
        return Err(invalid(
            "tools_warn_percent",
            "must be between 0 (never warn) and 100".into(),
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
    field("tools_warn_percent", &mut |v| {
        let n: u32 = serde_json::from_value(v).map_err(|_| "not a whole number".to_owned())?;
        check_warn_percent(n).map_err(|e| e.to_string())?;
        s.tools_warn_percent = n;
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
    save_with(data_dir, settings, None)
}

/// [`save`], and with `export` set, the metrics export replaced by it.
fn save_with(
    data_dir: &Path,
    settings: Settings,
    export: Option<Option<&MetricsExport>>,
) -> Result<Settings, SettingsError> {
    let settings = settings.validated()?;
    let file = path(data_dir);
    let io = |source| SettingsError::Io {
        path: file.clone(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(io)?;
    let mut text = serde_json::to_vec_pretty(&merged(&file, &settings, export))
        .map_err(|e| io(std::io::Error::other(e)))?;
    text.push(b'\n');
    write_atomically(&file, &text).map_err(io)?;
    Ok(settings)
}

/// The file's object with `settings` written over it: what this struct does not hold (the
/// metrics export, a newer version's fields) is kept, so saving the settings from a shell that
/// does not know a field never erases it.
fn merged(
    file: &Path,
    settings: &Settings,
    export: Option<Option<&MetricsExport>>,
) -> serde_json::Value {
    use serde_json::Value;
    let mut obj = std::fs::read(file)
        .ok()
        .and_then(|t| serde_json::from_slice::<Value>(&t).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    if let Ok(Value::Object(fields)) = serde_json::to_value(settings) {
        obj.extend(fields);
    }
    if let Some(e) = export {
        obj.insert(
            METRICS_EXPORT_KEY.into(),
            serde_json::to_value(e).unwrap_or(Value::Null),
        );
    }
    Value::Object(obj)
}

/// The settings file's key for [`MetricsExport`].
pub const METRICS_EXPORT_KEY: &str = "metrics_export";
/// Seconds between two metrics exports unless the person says otherwise.
pub const DEFAULT_EXPORT_INTERVAL_SECS: u64 = 60;
/// The longest export interval accepted: an hour.
pub const MAX_EXPORT_INTERVAL_SECS: u64 = 3600;

/// Metrics sent to an OpenTelemetry collector over OTLP/HTTP (issue 16, point 3): off unless
/// set. Kept in the settings file under its own key ([`METRICS_EXPORT_KEY`]) rather than as a
/// [`Settings`] field, so shells that edit the other settings need not know it: saving them
/// keeps it.
/// Only metric names and labels (server and tool names, outcomes) are ever sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricsExport {
    /// The collector: a base URL (`http://localhost:4318`, to which `/v1/metrics` is added,
    /// as `OTEL_EXPORTER_OTLP_ENDPOINT` is read) or the full metrics URL (any other path).
    pub otlp_endpoint: String,
    /// Seconds between exports (1 to [`MAX_EXPORT_INTERVAL_SECS`]).
    #[serde(default = "default_export_interval")]
    pub interval_secs: u64,
}

fn default_export_interval() -> u64 {
    DEFAULT_EXPORT_INTERVAL_SECS
}

impl MetricsExport {
    /// Checks the endpoint (http or https, a host, no user name or password: a collector's
    /// credentials do not belong in a settings file) and the interval.
    pub fn validated(mut self) -> Result<Self, SettingsError> {
        const FIELD: &str = "metrics_export.otlp_endpoint";
        let v = self.otlp_endpoint.trim();
        check_text(FIELD, v)?;
        let url = url::Url::parse(v).map_err(|e| invalid(FIELD, format!("not a URL ({e})")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(invalid(
                FIELD,
                "must be an http:// or https:// URL with a host".into(),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid(
                FIELD,
                "must not carry a user name or password".into(),
            ));
        }
        if !(1..=MAX_EXPORT_INTERVAL_SECS).contains(&self.interval_secs) {
            return Err(invalid(
                "metrics_export.interval_secs",
                format!("must be between 1 and {MAX_EXPORT_INTERVAL_SECS} seconds"),
            ));
        }
        self.otlp_endpoint = v.to_owned();
        Ok(self)
    }

    /// Where metrics are posted: the endpoint plus `/v1/metrics` when it has no path.
    pub fn metrics_url(&self) -> String {
        let base = self.otlp_endpoint.trim_end_matches('/');
        match url::Url::parse(base) {
            Ok(u) if u.path().trim_matches('/').is_empty() => format!("{base}/v1/metrics"),
            _ => self.otlp_endpoint.clone(),
        }
    }
}

/// The metrics export of `data_dir`, when it is on and valid (an invalid entry is logged and
/// treated as off: nothing is sent to a URL that does not check).
pub fn load_metrics_export(data_dir: &Path) -> Option<MetricsExport> {
    let text = std::fs::read(path(data_dir)).ok()?;
    let v = serde_json::from_slice::<serde_json::Value>(&text)
        .ok()?
        .get(METRICS_EXPORT_KEY)
        .filter(|v| !v.is_null())?
        .clone();
    match serde_json::from_value::<MetricsExport>(v)
        .map_err(|e| e.to_string())
        .and_then(|e| e.validated().map_err(|e| e.to_string()))
    {
        Ok(e) => Some(e),
        Err(why) => {
            tracing::warn!(%why, "the metrics export setting is not valid; nothing is exported");
            None
        }
    }
}

/// Turns the metrics export on (validated) or off (`None`); the other settings stay as they
/// are. Returns it as saved.
pub fn save_metrics_export(
    data_dir: &Path,
    export: Option<MetricsExport>,
) -> Result<Option<MetricsExport>, SettingsError> {
    let export = export.map(MetricsExport::validated).transpose()?;
    save_with(data_dir, load(data_dir).settings, Some(export.as_ref()))?;
    Ok(export)
}

/// Writes `text` to `file` as a whole or not at all: a file of this process's own in the same
/// folder (a rename is atomic only within one file system; `create_new` refuses to follow
/// anything already there), synced, renamed over `file`, and the folder synced so the rename
/// itself is durable. For the small JSON files next to the database (settings, redaction).
pub(crate) fn write_atomically(file: &Path, text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp_name = file.as_os_str().to_owned();
    tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Some(dir) = file.parent() {
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod export_tests {
    use super::*;

    #[test]
    fn the_metrics_export_is_validated_and_survives_a_settings_save() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(load_metrics_export(d.path()), None);
        for bad in ["ftp://h/x", "http://u:p@h", "http://", "nope"] {
            let e = MetricsExport {
                otlp_endpoint: bad.into(),
                interval_secs: 60,
            };
            assert!(save_metrics_export(d.path(), Some(e)).is_err(), "{bad}");
        }
        let e = MetricsExport {
            otlp_endpoint: " http://127.0.0.1:4318 ".into(),
            interval_secs: 5,
        };
        let saved = save_metrics_export(d.path(), Some(e)).unwrap().unwrap();
        assert_eq!(saved.metrics_url(), "http://127.0.0.1:4318/v1/metrics");
        // Saving the other settings keeps it, and it is no problem for them.
        let dark = Settings {
            theme: Theme::Dark,
            ..Settings::default()
        };
        save(d.path(), dark).unwrap();
        assert_eq!(load_metrics_export(d.path()), Some(saved));
        let loaded = load(d.path());
        assert_eq!(loaded.settings.theme, Theme::Dark);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        save_metrics_export(d.path(), None).unwrap();
        assert_eq!(load_metrics_export(d.path()), None);
        assert_eq!(load(d.path()).settings.theme, Theme::Dark);
        let full = MetricsExport {
            otlp_endpoint: "https://c.example/otlp/v1/metrics".into(),
            interval_secs: 60,
        };
        assert_eq!(full.metrics_url(), "https://c.example/otlp/v1/metrics");
    }
}
