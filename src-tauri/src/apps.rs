//! The jail MCP Apps render in: a URI scheme of their own (`switchboard-app://localhost/` on
//! Linux and macOS, `http://switchboard-app.localhost/` on Windows) that serves an app's HTML,
//! read through the core's governed seam ([`Host::load_app`]), under a strict CSP.
//!
//! Why a scheme and not `srcdoc`: a `srcdoc` (or `data:`/`blob:`) frame inherits the window's
//! CSP, so the app's inline scripts would not run, and loosening the window's CSP for them
//! would loosen it for the app too. A scheme gives the frame its own response and its own CSP:
//! - no network at all (`default-src 'none'`, no `connect-src`), so an app can neither call
//!   home nor reach Tauri's IPC endpoints (`ipc://localhost`, `http://ipc.localhost`);
//! - scripts and styles inline only, images and fonts from `data:`/`blob:` only;
//! - `sandbox allow-scripts`: an opaque origin even if the document is opened outside the
//!   window's `<iframe sandbox="allow-scripts">`, no top navigation, no popups, no forms.
//!
//! Tauri injects its IPC (`__TAURI_INTERNALS__`, the invoke key) into the top frame only, and
//! no capability names this scheme, so a frame has no way to call a command; the e2e test
//! `e2e_apps` checks it in the real window. Everything an app may do goes through the window's
//! postMessage bridge (`ui/src/features/apps/`), which sends tool calls through the approval
//! dialog and links through the one URL opener.
//!
//! The URL names a frame the window opened, and nothing else: `?frame=<id>`
//! ([`Host::open_app_frame`], 128 random bits, never sent to the frame by the window). The core
//! serves that frame's own document only ([`Host::load_app_frame`]), so an app that navigates
//! its frame elsewhere (another server's document under the old `?server=…&uri=…` form, a
//! guessed id) gets a refusal, and the refusal is audited (AP-10). The window also sees the
//! frame load a second time and reports it (`app_navigated`), which closes the frame.

use switchboard_core::host::apps::AppError;
use switchboard_core::host::Host;
use tauri::http::{header, Request, Response, StatusCode};
use tauri::{Manager, UriSchemeContext, UriSchemeResponder, Wry};

/// The scheme's name.
pub const SCHEME: &str = "switchboard-app";

/// The CSP every app document is served with.
pub const APP_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
    style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; \
    connect-src 'none'; frame-src 'none'; child-src 'none'; worker-src 'none'; \
    manifest-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; \
    sandbox allow-scripts";

/// What a request of the jail names.
#[derive(Debug, PartialEq, Eq)]
pub enum AppRequest {
    /// An open frame, by its id (`?frame=<id>`).
    Frame(String),
    /// A server's document by name (`?server=…&uri=…`): what no frame may load (AP-10).
    Named {
        /// The server's name.
        server: String,
        /// The `ui://` URI.
        uri: String,
    },
}

/// Reads `?frame=..` (or the refused `?server=..&uri=..`) from a request URI; anything else
/// is `None`.
pub fn parse(uri: &str) -> Option<AppRequest> {
    let url = tauri::Url::parse(uri).ok()?;
    let (mut frame, mut server, mut app) = (None, None, None);
    for (k, v) in url.query_pairs() {
        match &*k {
            "frame" if frame.is_none() => frame = Some(v.into_owned()),
            "server" if server.is_none() => server = Some(v.into_owned()),
            "uri" if app.is_none() => app = Some(v.into_owned()),
            _ => return None,
        }
    }
    match (frame, server, app) {
        (Some(f), None, None) if f.len() <= 64 => Some(AppRequest::Frame(f)),
        (None, Some(server), Some(uri))
            if server.len() <= 128 && uri.len() <= switchboard_core::host::apps::APP_URI_MAX =>
        {
            Some(AppRequest::Named { server, uri })
        }
        _ => None,
    }
}

/// A response with the jail's headers around `body`.
fn respond(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header("Content-Security-Policy", APP_CSP)
        .header("X-Content-Type-Options", "nosniff")
        .header("Referrer-Policy", "no-referrer")
        .header(header::CACHE_CONTROL, "no-store")
        .body(body)
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

/// A refusal the frame shows as plain text.
fn refuse(status: StatusCode, why: &str) -> Response<Vec<u8>> {
    respond(
        status,
        "text/plain; charset=utf-8",
        format!("This app cannot be shown: {why}").into_bytes(),
    )
}

/// Serves one request of the scheme: reads the app through the seam, off the web view's thread.
pub fn serve(
    ctx: UriSchemeContext<'_, Wry>,
    request: Request<Vec<u8>>,
    responder: UriSchemeResponder,
) {
    if request.method() != tauri::http::Method::GET {
        return responder.respond(refuse(StatusCode::METHOD_NOT_ALLOWED, "only GET"));
    }
    let asked = parse(&request.uri().to_string());
    let Some(host) = ctx
        .app_handle()
        .try_state::<Host>()
        .map(|h| h.inner().clone())
    else {
        return responder.respond(refuse(StatusCode::SERVICE_UNAVAILABLE, "no host"));
    };
    tauri::async_runtime::spawn(async move {
        responder.respond(load(&host, asked).await);
    });
}

async fn load(host: &Host, asked: Option<AppRequest>) -> Response<Vec<u8>> {
    let frame = match asked {
        Some(AppRequest::Frame(f)) => f,
        Some(AppRequest::Named { server, uri }) => {
            // A frame that navigated to a document by name: refused, and audited with what
            // it named (when the name is a server's name at all).
            let named = Host::server_id(&server).ok();
            host.refuse_app_address(named.as_ref().map(|s| (s, uri.as_str())))
                .await;
            let why = "an app may load only the document its frame was opened for";
            return refuse(StatusCode::FORBIDDEN, why);
        }
        None => {
            host.refuse_app_address(None).await;
            return refuse(StatusCode::BAD_REQUEST, "not an app address");
        }
    };
    match host.load_app_frame(&frame).await {
        Ok(doc) => respond(
            StatusCode::OK,
            "text/html; charset=utf-8",
            doc.html.into_bytes(),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "an app could not be shown");
            let status = match e {
                AppError::Host(_) => StatusCode::BAD_GATEWAY,
                AppError::NoFrame => StatusCode::FORBIDDEN,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            refuse(status, &e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_names_a_frame_and_a_named_document_is_told_apart() {
        assert_eq!(
            parse("switchboard-app://localhost/?frame=0123abcd"),
            Some(AppRequest::Frame("0123abcd".into()))
        );
        assert!(parse("http://switchboard-app.localhost/?frame=ab").is_some());
        assert_eq!(
            parse("switchboard-app://localhost/?server=demo&uri=ui%3A%2F%2Fa%2Fapp.html"),
            Some(AppRequest::Named {
                server: "demo".into(),
                uri: "ui://a/app.html".into()
            })
        );
        for bad in [
            "switchboard-app://localhost/?server=demo",
            "switchboard-app://localhost/?uri=ui%3A%2F%2Fa",
            "switchboard-app://localhost/?frame=a&server=b&uri=ui%3A%2F%2Fa",
            "switchboard-app://localhost/?frame=a&frame=b",
            "switchboard-app://localhost/?server=a&server=b&uri=ui%3A%2F%2Fa",
            "switchboard-app://localhost/?server=a&uri=ui%3A%2F%2Fa&x=1",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_jail_has_no_network_and_no_same_origin() {
        let d: Vec<&str> = APP_CSP.split(';').map(str::trim).collect();
        for want in [
            "default-src 'none'",
            "connect-src 'none'",
            "frame-src 'none'",
            "form-action 'none'",
            "sandbox allow-scripts",
        ] {
            assert!(d.contains(&want), "{want} missing from {APP_CSP}");
        }
        for source in APP_CSP.split_whitespace() {
            assert!(
                !source.contains("://") && !source.contains("localhost") && source != "*",
                "the app CSP allows {source}"
            );
        }
        assert!(!APP_CSP.contains("allow-same-origin"));
        assert!(!APP_CSP.contains("unsafe-eval"));
    }
}
