//! Switchboard desktop shell.
//!
//! A thin Tauri layer over `switchboard-core`: it builds the `Host`, starts the enabled servers
//! without waiting for them (RL-07), and exposes typed commands from [`ipc`]. It holds no
//! business logic; the CLI and the desktop app behave the same because they run the same core.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod ipc;

use switchboard_core::host::{default_data_dir, HostBuilder};

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
    let data_dir = std::env::var_os("SWITCHBOARD_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(default_data_dir);
    let host = tauri::async_runtime::block_on(HostBuilder::new(data_dir).build())
        .map_err(|e| anyhow::anyhow!("could not open Switchboard's data: {e}"))?;
    let starter = host.clone();
    // Servers come up in the background; the window is interactive at once.
    tauri::async_runtime::spawn(async move {
        if let Err(e) = starter.start_enabled().await {
            tracing::warn!(error = %e, "could not start the enabled servers");
        }
    });
    let builder = ipc::specta_builder();
    let shutdown = host.clone();
    let mut host_events = host.subscribe();
    let app = tauri::Builder::default()
        .manage(host)
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            // Host changes become typed events for the web view.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                use tauri_specta::Event;
                loop {
                    match host_events.recv().await {
                        Ok(e) => {
                            if let Some(ev) = ipc::events::HostChanged::from_host(&e) {
                                let _ = ev.emit(&handle);
                            }
                        }
                        // Missed some: one "servers" change makes the page re-read everything.
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                            let _ = ipc::events::HostChanged {
                                kind: ipc::events::ChangeKind::Servers,
                                server: None,
                            }
                            .emit(&handle);
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
            });
            Ok(())
        })
        .build(tauri::generate_context!())
        .map_err(|e| anyhow::anyhow!("the desktop window could not start: {e}"))?;
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // No server process outlives the app (SP-06).
            tauri::async_runtime::block_on(shutdown.shutdown());
        }
    });
    Ok(())
}
