//! `${secret:NAME}` in a server's arguments and URL: a credential the server takes on its
//! command line or in a query string, kept in the keyring like an env var or header (LK-01).
//!
//! Env vars and headers refer to secrets through their [`ValueSource`](super::ValueSource);
//! arguments and URLs are plain text, and some servers only take a key as `--token KEY` or
//! `?api_key=KEY`. Rather than a second, structured shape for arguments (which every reader of
//! a spec would have to learn), such a value is written as a placeholder naming a secret of the
//! server's own namespace, the form our exports already write. The spec, its fingerprint, the
//! consent view and an install link then hold the placeholder only; the value is put in at
//! start (an argument as it is, a query value percent-encoded) and registered with the
//! redactor like any other secret of the server.
//!
//! [`move_credentials`] is the "move it to the keyring" that `server add` offers: it finds
//! credential-looking arguments and query values with the same test import uses
//! ([`credential_arg`], [`credential_query`]) and turns them into placeholders.
//!
//! Pure: no keyring. Nothing here puts a value in a message.

use std::ops::Range;

use super::credentials::{credential_arg, credential_query, own_name};
use super::import::names::Taken;
use super::{ServerSpec, TransportSpec};
use crate::ids::SecretName;
use crate::redact::Secret;

const OPEN: &str = "${secret:";

/// The `${secret:NAME}` references in `text` with a valid secret name, in order.
pub fn refs_in(text: &str) -> Vec<(Range<usize>, SecretName)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find(OPEN).map(|i| i + from) {
        let name_at = start + OPEN.len();
        let Some(end) = text[name_at..].find('}').map(|i| i + name_at) else {
            break;
        };
        if let Ok(name) = SecretName::new(&text[name_at..end]) {
            out.push((start..end + 1, name));
        }
        from = end + 1;
    }
    out
}

/// The placeholder text for secret `name`.
pub fn placeholder(name: &SecretName) -> String {
    format!("{OPEN}{name}}}")
}

/// The secrets the arguments or URL of `spec` refer to, without repeats, in order.
pub fn spec_refs(spec: &ServerSpec) -> Vec<SecretName> {
    let texts: Vec<&str> = match &spec.transport {
        TransportSpec::Stdio(s) => s.args.iter().map(String::as_str).collect(),
        TransportSpec::Http(h) => vec![h.url.as_str()],
    };
    let mut out: Vec<SecretName> = Vec::new();
    for (_, name) in texts.iter().flat_map(|t| refs_in(t)) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `text` with every reference replaced by `value(name)` (an unknown name stays as written).
pub fn fill(text: &str, value: impl Fn(&SecretName) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (r, name) in refs_in(text) {
        out.push_str(&text[last..r.start]);
        match value(&name) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&text[r.clone()]),
        }
        last = r.end;
    }
    out.push_str(&text[last..]);
    out
}

/// A URL with its references filled in, each value percent-encoded so that it stays one query
/// value (or path part) whatever it holds.
pub fn fill_url(url: &str, value: impl Fn(&SecretName) -> Option<String>) -> String {
    fill(url, |n| {
        value(n).map(|v| {
            url::form_urlencoded::byte_serialize(v.as_bytes())
                .collect::<String>()
                .replace('+', "%20")
        })
    })
}

/// What [`move_credentials`] did.
#[derive(Debug, Default)]
pub struct Moved {
    /// The values to store in the server's own namespace, by secret name.
    pub secrets: Vec<(SecretName, Secret)>,
    /// What moved, in words ("argument 3", "the URL's query parameter `api_key`"), with the
    /// secret it became.
    pub moved: Vec<(String, SecretName)>,
}

/// Replaces every credential-looking argument or query value of `spec` with a placeholder
/// naming a new secret of the server's own namespace, and hands the values back.
pub fn move_credentials(spec: &mut ServerSpec) -> Moved {
    let mut taken = Taken::new(
        spec.secret_refs()
            .iter()
            .map(|n| n.as_str().to_owned())
            .chain(spec_refs(spec).iter().map(|n| n.as_str().to_owned())),
    );
    let mut out = Moved::default();
    match &mut spec.transport {
        TransportSpec::Stdio(s) => {
            for i in 0..s.args.len() {
                let Some(found) = credential_arg(&s.args, i) else {
                    continue;
                };
                let Some(name) = own_name(&found.name, &mut taken) else {
                    continue;
                };
                let arg = &mut s.args[i];
                out.secrets.push((
                    name.clone(),
                    Secret::new(arg[found.value.clone()].to_owned()),
                ));
                arg.replace_range(found.value, &placeholder(&name));
                out.moved.push((format!("argument {}", i + 1), name));
            }
        }
        TransportSpec::Http(h) => {
            for found in credential_query(&h.url) {
                let Some(name) = own_name(&found.name, &mut taken) else {
                    continue;
                };
                let Some(raw) = h.url.get(found.value.clone()) else {
                    continue;
                };
                let decoded: String = url::form_urlencoded::parse(format!("x={raw}").as_bytes())
                    .map(|(_, v)| v.into_owned())
                    .next()
                    .unwrap_or_default();
                out.secrets.push((name.clone(), Secret::new(decoded)));
                out.moved.push((
                    format!("the URL's query parameter `{}`", found.name),
                    name.clone(),
                ));
                h.url.replace_range(found.value, &placeholder(&name));
                // Later matches were found in the old text: find them again in the new one.
                return merge(out, move_credentials(spec));
            }
        }
    }
    out
}

fn merge(mut a: Moved, b: Moved) -> Moved {
    a.secrets.extend(b.secrets);
    a.moved.extend(b.moved);
    a
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::config::{HttpSpec, Timeouts};
    use crate::ids::ServerId;

    fn name(n: &str) -> SecretName {
        SecretName::new(n).unwrap()
    }

    #[test]
    fn references_are_found_and_filled() {
        let text = "--a=${secret:one}:${secret:two}${secret:}${secret:bad name}";
        let names: Vec<String> = refs_in(text).iter().map(|(_, n)| n.to_string()).collect();
        assert_eq!(names, ["one", "two"]);
        let filled = fill(text, |n| (n.as_str() == "one").then(|| "X".to_owned()));
        assert_eq!(filled, "--a=X:${secret:two}${secret:}${secret:bad name}");
        assert_eq!(
            fill_url("https://h/p?k=${secret:k}", |_| Some("a b&c=d".into())),
            "https://h/p?k=a%20b%26c%3Dd"
        );
    }

    #[test]
    fn credential_arguments_and_query_values_move() {
        let mut spec = ServerSpec::test_stdio("s", "srv", &[]);
        if let TransportSpec::Stdio(s) = &mut spec.transport {
            s.args = vec![
                "--token".into(),
                "sk-CANARYabcdefghijkl".into(),
                "--api-key=CANARY-1234567".into(),
                "--verbose".into(),
            ];
        }
        let moved = move_credentials(&mut spec);
        let text = serde_json::to_string(&spec).unwrap();
        assert!(!text.contains("CANARY"), "{text}");
        assert!(text.contains("--api-key=${secret:api-key}"), "{text}");
        assert_eq!(spec_refs(&spec), [name("token"), name("api-key")], "{text}");
        assert_eq!(moved.secrets[1].1.expose(), "CANARY-1234567");

        let mut remote = ServerSpec {
            id: ServerId::new("r").unwrap(),
            transport: TransportSpec::Http(HttpSpec {
                url: "https://h/mcp?team=a&api_key=CANARY%2Fx&token=sk-CANARYabcdefghij".into(),
                headers: vec![],
                auth: None,
                allow_insecure: false,
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        };
        let moved = move_credentials(&mut remote);
        let TransportSpec::Http(h) = &remote.transport else {
            panic!()
        };
        assert_eq!(
            h.url,
            "https://h/mcp?team=a&api_key=${secret:api_key}&token=${secret:token}"
        );
        assert_eq!(moved.secrets[0].1.expose(), "CANARY/x");
        remote.validate().unwrap();
    }
}
