//! Switchboard desktop shell.
//!
//! A thin Tauri layer: it builds the window and will map typed IPC commands onto
//! `switchboard-core`. It holds no business logic; everything that matters lives in the core
//! crate so the CLI and the desktop app behave the same.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// mimalloc: MCP traffic is allocation-heavy and glibc malloc cost ~15% of CPU under load.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SWITCHBOARD_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(switchboard_core::redact::RedactingStderr::default)
        .init();
    tracing::info!(core = switchboard_core::VERSION, "starting desktop shell");
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .map_err(|e| anyhow::anyhow!("the desktop window could not start: {e}"))
}
