//! Switchboard desktop shell.
//!
//! A thin Tauri layer over `switchboard-core`: it builds the `Host`, starts the enabled servers
//! without waiting for them (RL-07), and exposes typed commands from [`ipc`]. It holds no
//! business logic; the CLI and the desktop app behave the same because they run the same core.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod apps;
mod ipc;
mod logging;
mod notify;
mod single;
mod tray;

use switchboard_core::host::{default_data_dir, HostBuilder};
use tauri::Manager;

/// mimalloc: MCP traffic is allocation-heavy and glibc malloc cost ~15% of CPU under load.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The web view may only ever show the app itself (TA-04): any navigation away from the app
/// origin (a link in a tool result, an injected `location.href`) is refused.
fn navigation_lock() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri::plugin::Builder::new("navigation-lock")
        .on_navigation(|_webview, url| {
            let allowed = is_app_origin(url);
            if !allowed {
                tracing::warn!(url = %url, "blocked navigation away from the app");
            }
            allowed
        })
        .build()
}

/// The app's own origin: `tauri://localhost` on Linux and macOS, `http(s)://tauri.localhost` on
/// Windows; and the MCP Apps jail (`apps`), which the window's app frames load (the lock sees
/// frame navigations too). The jail's CSP and sandbox keep a document there powerless, so a
/// navigation to it gains nothing.
fn is_app_origin(url: &tauri::Url) -> bool {
    match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" => matches!(
            url.host_str(),
            Some("tauri.localhost") | Some("switchboard-app.localhost")
        ),
        s if s == apps::SCHEME => url.host_str() == Some("localhost"),
        _ => false,
    }
}

/// The longest the servers kept always on wait for the window's first page.
const ALWAYS_ON_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Sends the host's changes to the web view as typed events until the host closes.
async fn forward_host_events(
    handle: tauri::AppHandle,
    mut host_events: tokio::sync::broadcast::Receiver<switchboard_core::events::HostEvent>,
) {
    use tauri_specta::Event;
    loop {
        match host_events.recv().await {
            Ok(e) => {
                if let Some(ev) = ipc::events::HostChanged::from_host(&e) {
                    let _ = ev.emit(&handle);
                }
            }
            // Missed some: the pages and both dialogs re-read everything, so no
            // approval or question is left unseen.
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                use ipc::events::ChangeKind;
                for kind in [
                    ChangeKind::Servers,
                    ChangeKind::Approvals,
                    ChangeKind::Questions,
                    ChangeKind::AgentRuns,
                ] {
                    let _ = ipc::events::HostChanged::of(kind).emit(&handle);
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        }
    }
}

fn main() -> anyhow::Result<()> {
    let data_dir = std::env::var_os("SWITCHBOARD_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(default_data_dir);
    // One app per data directory, decided before the log file or the host is touched.
    let claim = single::start(&data_dir);
    if let Ok(single::Start::HandedOver) = claim {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "Switchboard is already running on {}; its window was brought to the front.",
            data_dir.display()
        );
        return Ok(());
    }
    logging::init(&data_dir);
    // The level saved on the Settings page, unless the environment chose the filter.
    if !logging::env_override() {
        let saved = switchboard_core::settings::load(&data_dir)
            .settings
            .log_level;
        logging::set_level(saved.as_str());
    }
    tracing::info!(core = switchboard_core::VERSION, "starting desktop shell");
    let instance = match claim {
        Ok(single::Start::Run(primary)) => {
            if let Some(problem) = primary.problem() {
                tracing::warn!("a second launch cannot bring this window up: {problem}");
            }
            Some(primary)
        }
        Ok(single::Start::HandedOver) => None,
        Err(e @ single::SingleError::NoAnswer { .. }) => return Err(e.into()),
        Err(e) => {
            tracing::warn!(error = %e, "running without the single-instance check");
            None
        }
    };
    // URLs a person agreed to open go to the system browser, or to this program (tests point it
    // at a script that records what it was given).
    let browser = std::env::var_os("SWITCHBOARD_BROWSER")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from);
    let context = tauri::generate_context!();
    // The window renders MCP Apps in its jail (`apps.rs`), so servers are told it can.
    let builder = HostBuilder::new(data_dir).browser(browser).apps(true);
    let host = match tauri::async_runtime::block_on(builder.build()) {
        Ok(host) => host,
        // The window still opens and says why, naming the file and the ways out (ST-04).
        Err(e) => {
            let problem = format!("Switchboard could not open its data: {e}");
            tracing::error!("{problem}");
            return run_without_host(problem, context, instance);
        }
    };
    let starter = host.clone();
    // Servers start when needed (issue 14): only those kept always on come up, in the
    // background, once the window has drawn its first page (`window_ready`, at most
    // ALWAYS_ON_WAIT after launch): twenty processes spawned while WebKit starts and the first
    // page asks for its data slowed the first render by a third on 2 cores.
    let (first_render, drawn) = tokio::sync::oneshot::channel::<()>();
    tauri::async_runtime::spawn(async move {
        starter.serve_on_demand();
        let _ = tokio::time::timeout(ALWAYS_ON_WAIT, drawn).await;
        if let Err(e) = starter.start_always_on().await {
            tracing::warn!(error = %e, "could not start the servers kept always on");
        }
    });
    let builder = ipc::specta_builder::<tauri::Wry>();
    let shutdown = host.clone();
    let host_events = host.subscribe();
    let app = tauri::Builder::default()
        .plugin(navigation_lock())
        .register_asynchronous_uri_scheme_protocol(apps::SCHEME, apps::serve)
        .manage(host)
        .manage(ipc::startup::StartupProblem(None))
        .manage(ipc::startup::FirstRender(std::sync::Mutex::new(Some(
            first_render,
        ))))
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            // Waiting approvals and questions: window title, tray, desktop notifications.
            notify::watch(
                app.handle(),
                app.state::<switchboard_core::host::Host>().inner().clone(),
            );
            // Answers a previous run left streaming are flagged, off the window's path (ST-02).
            let recover = app.state::<switchboard_core::host::Host>().inner().clone();
            tauri::async_runtime::spawn(async move {
                match recover.recover_interrupted().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(messages = n, "flagged interrupted answers"),
                    Err(e) => tracing::warn!(error = %e, "could not recover interrupted answers"),
                }
            });
            // Host changes become typed events for the web view.
            tauri::async_runtime::spawn(forward_host_events(app.handle().clone(), host_events));
            Ok(())
        })
        .build(context)
        .map_err(|e| anyhow::anyhow!("the desktop window could not start: {e}"))?;
    if let Some(instance) = &instance {
        instance.attach(app.handle());
    }
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // A launch from now on waits for this app to end, then starts.
            if let Some(instance) = &instance {
                instance.closing();
            }
            // No server process outlives the app (SP-06).
            tauri::async_runtime::block_on(shutdown.shutdown());
        }
    });
    Ok(())
}

/// The window with no host behind it: it shows why (`startup_problem`) and nothing else works.
fn run_without_host(
    problem: String,
    context: tauri::Context<tauri::Wry>,
    instance: Option<single::Primary>,
) -> anyhow::Result<()> {
    let builder = ipc::specta_builder::<tauri::Wry>();
    let app = tauri::Builder::default()
        .plugin(navigation_lock())
        .manage(ipc::startup::StartupProblem(Some(problem)))
        .manage(ipc::startup::FirstRender::default())
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            Ok(())
        })
        .build(context)
        .map_err(|e| anyhow::anyhow!("the desktop window could not start: {e}"))?;
    if let Some(instance) = &instance {
        instance.attach(app.handle());
    }
    app.run(move |_, event| {
        if let (tauri::RunEvent::Exit, Some(instance)) = (event, &instance) {
            instance.closing();
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_app_origin;

    #[test]
    fn only_the_app_origin_is_navigable() {
        for ok in [
            "tauri://localhost/",
            "tauri://localhost/index.html",
            "https://tauri.localhost/",
            "switchboard-app://localhost/?server=a&uri=ui%3A%2F%2Fb",
        ] {
            assert!(is_app_origin(&ok.parse().unwrap()), "{ok}");
        }
        for bad in [
            "https://evil.example/",
            "http://localhost:1420/",
            "tauri://evil/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,x",
            "https://tauri.localhost.evil.example/",
            "switchboard-app://evil/",
        ] {
            assert!(!is_app_origin(&bad.parse().unwrap()), "{bad}");
        }
    }

    /// The web view's lock-down lives in tauri.conf.json (TA-02, TA-03); a careless edit there
    /// fails here rather than in review.
    #[test]
    fn the_window_config_stays_locked_down() {
        let conf: serde_json::Value =
            serde_json::from_str(include_str!("../../tauri.conf.json")).unwrap();
        let app = &conf["app"];
        assert_eq!(app["withGlobalTauri"], serde_json::json!(false));
        let sec = &app["security"];
        assert_eq!(sec["freezePrototype"], serde_json::json!(true));
        assert_eq!(sec["pattern"]["use"], serde_json::json!("isolation"));
        assert!(sec.get("dangerousDisableAssetCspModification").is_none());
        let csp = sec["csp"].as_str().unwrap();
        let directive = |name: &str| {
            csp.split(';')
                .map(str::trim)
                .find(|d| d.starts_with(&format!("{name} ")))
                .unwrap_or("")
                .to_owned()
        };
        // The MCP Apps jail (apps.rs) is allowed as a frame through default-src, not frame-src:
        // Tauri appends its isolation frame's per-build origin to default-src only, so an
        // explicit frame-src would block that frame and with it every command.
        assert_eq!(
            directive("default-src"),
            "default-src 'self' switchboard-app: http://switchboard-app.localhost"
        );
        assert_eq!(directive("frame-src"), "");
        for d in [
            "script-src",
            "style-src",
            "img-src",
            "connect-src",
            "object-src",
        ] {
            assert!(
                !directive(d).is_empty(),
                "{d} must not fall back to default-src"
            );
        }
        assert_eq!(directive("script-src"), "script-src 'self'");
        assert_eq!(directive("object-src"), "object-src 'none'");
        assert!(!csp.contains("unsafe-eval"), "{csp}");
        // No remote source anywhere: only the app, inline data, and Tauri's IPC endpoint.
        let local = [
            "'self'",
            "'none'",
            "'unsafe-inline'",
            "data:",
            "blob:",
            "ipc:",
            "http://ipc.localhost",
            // The MCP Apps jail (apps.rs), which serves nothing but app documents.
            "switchboard-app:",
            "http://switchboard-app.localhost",
        ];
        for d in csp.split(';').map(str::trim).filter(|d| !d.is_empty()) {
            for source in d.split_whitespace().skip(1) {
                assert!(local.contains(&source), "{d} allows {source}");
            }
        }
    }
}
