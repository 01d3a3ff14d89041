//! The host's door to the person's settings ([`crate::settings`]): read from the data
//! directory's file on each call, so the file is the one owner (no copy in memory to drift
//! from it), and saved atomically. A settings file is a few hundred bytes; reading it when a
//! page opens or a server goes idle costs nothing worth caching.

use crate::settings::{self, LoadedSettings, Settings, SettingsError};

use super::{Host, HostError};

impl Host {
    /// The settings in effect, with anything that could not be read (see
    /// [`LoadedSettings::warning`]).
    pub fn settings(&self) -> LoadedSettings {
        let loaded = settings::load(self.data_dir());
        if let Some(w) = loaded.warning() {
            tracing::warn!("{w}");
        }
        loaded
    }

    /// Validates and saves `new`; returns the settings as saved. An invalid value is refused
    /// and nothing is written.
    pub fn save_settings(&self, new: Settings) -> Result<Settings, HostError> {
        let saved = settings::save(self.data_dir(), new).map_err(|e| match e {
            SettingsError::Invalid { .. } => HostError::Invalid(e.to_string()),
            SettingsError::Io { path, source } => HostError::Io {
                context: format!("saving the settings to {}", path.display()),
                source,
            },
        })?;
        tracing::info!(
            theme = ?saved.theme,
            log_level = saved.log_level.as_str(),
            idle_stop_secs = saved.idle_stop_secs,
            "settings saved"
        );
        self.set_idle_stop(std::time::Duration::from_secs(saved.idle_stop_secs));
        Ok(saved)
    }
}
