//! URLs as import notes show them: never the credentials, query, fragment or a path segment
//! that could hold a secret, since notes are printed and stored freely (see `values`).

use super::super::credentials::contains_secret;
use super::super::{ServerSpec, SpecError, TransportSpec};
use crate::escape::escape_for_display as esc;

/// A skip reason for a bad URL, shown as [`shown_url`] shows it.
pub(super) fn bad_url(url: &str, e: &SpecError) -> String {
    let reason = match e {
        SpecError::BadUrl { reason, .. } => reason.clone(),
        other => other.to_string(),
    };
    match shown_url(url) {
        Some(s) => format!("its URL {} is not usable: {reason}", esc(&s)),
        None => format!("its URL is not usable: {reason}"),
    }
}

/// `url` for a note: without credentials, query or fragment, and without a path that could
/// hold one: an opaque path (`u:TOKEN@host` parses as scheme `u` with the path `TOKEN@host`)
/// is left out, and a path segment with a credential in it is shown as `…`. `None` when
/// it does not parse.
pub(super) fn shown_url(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str().unwrap_or_default();
    let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
    let path = match u.path_segments() {
        Some(segments) => segments
            .map(|s| if contains_secret(s) { "…" } else { s })
            .fold(String::new(), |path, s| path + "/" + s),
        None => String::new(),
    };
    Some(format!("{}://{host}{port}{path}", u.scheme()))
}

/// The URL of a remote spec (empty for a local one).
pub(super) fn url_of(spec: &ServerSpec) -> &str {
    match &spec.transport {
        TransportSpec::Http(h) => &h.url,
        TransportSpec::Stdio(_) => "",
    }
}
