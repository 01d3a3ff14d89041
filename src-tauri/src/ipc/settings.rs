//! The Settings page: the person's settings as the core keeps them
//! (`switchboard_core::settings`), the data directory they live in, and a save that applies the
//! log level at once (`logging::set_level`). Validation is the core's; a refused value comes
//! back as an `invalid` error naming the setting, and nothing is saved.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::host::Host;
use switchboard_core::settings::{LogLevel, Settings, Theme};
use tauri::State;

use super::IpcError;

/// The environment variable (and the CLI's `--data-dir` flag) that moves the data directory.
pub const DATA_DIR_ENV: &str = "SWITCHBOARD_DATA_DIR";

/// How the window looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ThemeDto {
    /// Follow the desktop.
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

/// The app's own log level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum LogLevelDto {
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// The default.
    Info,
    /// More detail.
    Debug,
    /// Everything.
    Trace,
}

/// The settings a person can change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SettingsDto {
    /// Light, dark or the system's choice.
    pub theme: ThemeDto,
    /// The provider a new chat starts with.
    pub default_provider: Option<String>,
    /// The model a new chat starts with.
    pub default_model: Option<String>,
    /// The MCP Registry URL.
    pub registry_url: String,
    /// The app's log level.
    pub log_level: LogLevelDto,
    /// Seconds an unused server keeps running; 0 means never stop.
    pub idle_stop_secs: u32,
    /// The share of the context window (percent) past which the chat warns about the tool
    /// definitions; 0 never warns. Absent from an older page: the default.
    #[serde(default = "default_tools_warn_percent")]
    pub tools_warn_percent: u32,
}

fn default_tools_warn_percent() -> u32 {
    switchboard_core::settings::DEFAULT_TOOLS_WARN_PERCENT
}

/// The page: the settings and what cannot be changed here.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SettingsView {
    /// The settings in effect.
    pub settings: SettingsDto,
    /// The data directory (database, logs, settings file).
    pub data_dir: String,
    /// The variable that moves it (also the CLI's `--data-dir`).
    pub data_dir_env: String,
    /// What could not be read from the settings file, if anything.
    pub warning: Option<String>,
    /// Whether `SWITCHBOARD_LOG` or `RUST_LOG` chose the log filter at start-up.
    pub log_env_override: bool,
    /// The app's version.
    pub version: String,
    /// The commit it was built from (short id, or "unknown").
    pub commit: String,
}

impl From<Settings> for SettingsDto {
    fn from(s: Settings) -> Self {
        Self {
            theme: match s.theme {
                Theme::System => ThemeDto::System,
                Theme::Light => ThemeDto::Light,
                Theme::Dark => ThemeDto::Dark,
            },
            default_provider: s.default_provider,
            default_model: s.default_model,
            registry_url: s.registry_url,
            log_level: match s.log_level {
                LogLevel::Error => LogLevelDto::Error,
                LogLevel::Warn => LogLevelDto::Warn,
                LogLevel::Info => LogLevelDto::Info,
                LogLevel::Debug => LogLevelDto::Debug,
                LogLevel::Trace => LogLevelDto::Trace,
            },
            // The core caps it at a week, far below u32::MAX.
            idle_stop_secs: u32::try_from(s.idle_stop_secs).unwrap_or(u32::MAX),
            tools_warn_percent: s.tools_warn_percent,
        }
    }
}

impl From<SettingsDto> for Settings {
    fn from(d: SettingsDto) -> Self {
        Self {
            theme: match d.theme {
                ThemeDto::System => Theme::System,
                ThemeDto::Light => Theme::Light,
                ThemeDto::Dark => Theme::Dark,
            },
            default_provider: d.default_provider,
            default_model: d.default_model,
            registry_url: d.registry_url,
            log_level: match d.log_level {
                LogLevelDto::Error => LogLevel::Error,
                LogLevelDto::Warn => LogLevel::Warn,
                LogLevelDto::Info => LogLevel::Info,
                LogLevelDto::Debug => LogLevel::Debug,
                LogLevelDto::Trace => LogLevel::Trace,
            },
            idle_stop_secs: u64::from(d.idle_stop_secs),
            tools_warn_percent: d.tools_warn_percent,
        }
    }
}

fn view(host: &Host, settings: Settings, warning: Option<String>) -> SettingsView {
    SettingsView {
        settings: settings.into(),
        data_dir: host.data_dir().display().to_string(),
        data_dir_env: DATA_DIR_ENV.into(),
        warning,
        log_env_override: crate::logging::env_override(),
        version: switchboard_buildinfo::VERSION.into(),
        commit: switchboard_buildinfo::COMMIT.into(),
    }
}

/// The settings, the data directory, and any problem reading the settings file.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn get_settings(host: State<'_, Host>) -> Result<SettingsView, IpcError> {
    let loaded = host.settings();
    let warning = loaded.warning();
    Ok(view(&host, loaded.settings, warning))
}

/// Validates and saves the settings, applies the log level now, and returns them as saved.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn save_settings(
    host: State<'_, Host>,
    settings: SettingsDto,
) -> Result<SettingsView, IpcError> {
    let saved = host.save_settings(settings.into())?;
    crate::logging::set_level(saved.log_level.as_str());
    Ok(view(&host, saved, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dto_round_trips_every_value() {
        let s = Settings {
            theme: Theme::Dark,
            default_provider: Some("p".into()),
            default_model: Some("m".into()),
            registry_url: "https://r.example".into(),
            log_level: LogLevel::Trace,
            idle_stop_secs: 90,
            tools_warn_percent: 40,
        };
        assert_eq!(Settings::from(SettingsDto::from(s.clone())), s);
        let json = serde_json::to_value(SettingsDto::from(s)).unwrap();
        assert_eq!(json["theme"], "dark");
        assert_eq!(json["log_level"], "trace");
        assert_eq!(json["idle_stop_secs"], 90);
    }
}
