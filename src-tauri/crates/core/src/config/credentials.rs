//! Credentials typed as plain text, moved to the server's own keyring namespace (SE-01, SE-04).
//!
//! A person who types `--env GITHUB_TOKEN=ghp_...` or pastes a key into the add form without
//! ticking "secret" means a secret all the same. [`seal`] finds such values (by the variable or
//! header name, or by a known token shape) and turns them into references to secrets of the
//! server's own namespace, handing the values back for the host to store. The same test decides
//! what an import moves, so the CLI, the form and import agree on what a credential looks like.
//!
//! Pure: no keyring, no store. Nothing here puts a value in a message.

use super::import::names::{sanitize, Taken};
use super::{Binding, ServerSpec, ValueSource};
use crate::escape::{quote_arg, short_for_display};
use crate::ids::SecretName;
use crate::redact::{name_looks_secret, value_looks_secret, Secret};

/// Whether a value looks like a credential by itself: a known token shape, or a URL with a
/// password in it (`postgresql://app:pw@db/app`), which `value_looks_secret` skips as a URL.
pub fn looks_secret(value: &str) -> bool {
    value_looks_secret(value) || url::Url::parse(value).is_ok_and(|u| u.password().is_some())
}

/// Whether `text` looks like a credential or has one inside (`:sk-…`, `key=ghp_…`,
/// `npxghp_…`), for what may be quoted in a message, where a token next to other text leaks as
/// well as a bare one. Text over [`QUOTE_MAX`] bytes counts as containing one: it is too long to
/// quote, and checking every position of it would take quadratic time.
pub fn contains_secret(text: &str) -> bool {
    text.len() > QUOTE_MAX
        || looks_secret(text)
        || text
            .char_indices()
            .any(|(i, _)| value_looks_secret(&text[i..]))
}

/// The longest text [`contains_secret`] examines.
pub const QUOTE_MAX: usize = 1024;

/// Whether the plain value of variable or header `name` should live in the keyring: a
/// credential-looking name with a real value (not empty, not a yes/no flag), or a value that
/// looks like a credential whatever its name.
pub fn looks_like_credential(name: &str, value: &str) -> bool {
    let v = value.trim();
    let flag_word = matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off"
    );
    !v.is_empty() && !flag_word && (name_looks_secret(name) || looks_secret(v))
}

/// A value as the consent view, `server show` and `doctor` print it: plain values escaped (a
/// plain value that looks like a credential, which only a database from before this check can
/// hold, is hidden), secrets by their binding, never their value.
pub fn shown_value(name: &str, value: &ValueSource) -> String {
    match value {
        ValueSource::Plain(p) if looks_like_credential(name, p) => format!(
            "(hidden: {} characters of plain text that look like a credential; edit the server to move it to the keyring)",
            p.chars().count()
        ),
        ValueSource::Plain(p) => quote_arg(p),
        ValueSource::Secret(n) => format!("this server's secret {n} (value not shown)"),
        ValueSource::Bound(b) => format!("{} (value not shown)", binding_words(b)),
    }
}

/// A binding as a sentence part: "the API key of provider openai, bound by you".
pub fn binding_words(b: &Binding) -> String {
    match b {
        Binding::Provider(p) => format!("the API key of provider {p}, bound by you"),
        Binding::Server { server, name } => {
            format!("secret {name} of server {server}, bound by you")
        }
    }
}

/// A credential found in an argument or a URL: what to name its secret after, and where its
/// value is (a byte range of the argument or the URL as written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The flag or query parameter it belongs to (`token` for `--token X`), or `argN`.
    pub name: String,
    /// The value's bytes in the argument or URL.
    pub value: std::ops::Range<usize>,
}

/// Whether argument `i` of `args` holds a credential, and where: the value after a flag that
/// names one (`--token X`, `--api-key=X`), or a value that looks like one by its shape. This is
/// the one test import, `server add` and `server link` share (LK-01). An argument that already
/// refers to a keyring secret (`${secret:NAME}`) holds none.
pub fn credential_arg(args: &[String], i: usize) -> Option<Found> {
    let a = args.get(i)?;
    if !super::placeholders::refs_in(a).is_empty() {
        return None;
    }
    let flag_name = |a: &str| a.trim_start_matches('-').to_owned();
    let flag_names_secret =
        |a: &str| a.starts_with('-') && !a.contains('=') && name_looks_secret(&flag_name(a));
    if let Some(prev) = i.checked_sub(1).and_then(|p| args.get(p)) {
        if flag_names_secret(prev) && !a.is_empty() {
            return Some(Found {
                name: flag_name(prev),
                value: 0..a.len(),
            });
        }
    }
    if a.starts_with('-') {
        if let Some((k, v)) = a.split_once('=') {
            if !v.is_empty() && name_looks_secret(&flag_name(k)) {
                return Some(Found {
                    name: flag_name(k),
                    value: k.len() + 1..a.len(),
                });
            }
        }
    }
    looks_secret(a).then(|| Found {
        name: format!("arg{}", i + 1),
        value: 0..a.len(),
    })
}

/// The query parameters of `url` (as written) whose value is a credential, by their name or
/// their value's shape; a value that refers to a keyring secret is none.
pub fn credential_query(url: &str) -> Vec<Found> {
    let Some(q_at) = url.find('?') else {
        return Vec::new();
    };
    let end = url[q_at..].find('#').map_or(url.len(), |f| f + q_at);
    let mut out = Vec::new();
    let mut at = q_at + 1;
    for pair in url[q_at + 1..end].split('&') {
        let (k, v, v_at) = match pair.split_once('=') {
            Some((k, v)) => (k, v, at + k.len() + 1),
            None => (pair, "", at + pair.len()),
        };
        at += pair.len() + 1;
        let decode = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .map(|(_, v)| v.into_owned())
                .next()
                .unwrap_or_default()
        };
        let (name, value) = (decode(k), decode(v));
        if value.is_empty() || !super::placeholders::refs_in(v).is_empty() {
            continue;
        }
        if name_looks_secret(&name) || value_looks_secret(&value) {
            out.push(Found {
                name,
                value: v_at..v_at + v.len(),
            });
        }
    }
    out
}

/// Every place of `spec` that holds a plain value looking like a credential, in words
/// ("argument 2", "the URL's query parameter `api_key`", "env GITHUB_TOKEN", "header
/// Authorization"): what a link must not carry (LK-01).
pub fn plain_credentials(spec: &ServerSpec) -> Vec<String> {
    let mut out = text_credentials(spec);
    let kind = match &spec.transport {
        super::TransportSpec::Stdio(_) => "env",
        super::TransportSpec::Http(_) => "header",
    };
    for v in spec.values() {
        if matches!(&v.value, ValueSource::Plain(p) if looks_like_credential(&v.name, p)) {
            out.push(format!("{kind} {}", short_for_display(&v.name, 64)));
        }
    }
    out
}

/// The arguments and URL query values of `spec` that look like credentials, in words
/// ("argument 2", "the URL's query parameter `api_key`"): what [`seal`] cannot move by itself,
/// so `server add` warns about them and offers to move them (`placeholders`).
pub fn text_credentials(spec: &ServerSpec) -> Vec<String> {
    match &spec.transport {
        super::TransportSpec::Stdio(s) => (0..s.args.len())
            .filter(|&i| credential_arg(&s.args, i).is_some())
            .map(|i| format!("argument {}", i + 1))
            .collect(),
        super::TransportSpec::Http(h) => credential_query(&h.url)
            .into_iter()
            .map(|f| {
                format!(
                    "the URL's query parameter `{}`",
                    short_for_display(&f.name, 64)
                )
            })
            .collect(),
    }
}

/// A secret name for `field` that no other value of the spec uses: the field name itself when
/// it is a valid secret name (`GITHUB_TOKEN`, `Authorization`), else a sanitized form.
pub(crate) fn own_name(field: &str, taken: &mut Taken) -> Option<SecretName> {
    let base = sanitize(field, SecretName::MAX_LEN, "secret");
    SecretName::new(taken.claim(&base, SecretName::MAX_LEN)).ok()
}

/// A spec whose credentials all live in the keyring, and the values to store there.
#[derive(Debug)]
pub struct Sealed {
    /// The spec; it holds references only.
    pub spec: ServerSpec,
    /// Values to store in the server's own namespace before the spec is saved.
    pub secrets: Vec<(SecretName, Secret)>,
    /// Plain values that were moved because they look like credentials: (field, secret name).
    pub moved: Vec<(String, SecretName)>,
}

/// Moves credentials out of `spec`: the values in `typed` (entered into secret fields, by
/// field name, or by secret name for a secret an argument or the URL refers to) and every
/// plain value that [`looks_like_credential`]. A typed value replaces
/// whatever the spec held for its field; a field that already referred to an own secret keeps
/// that secret's name.
pub fn seal(mut spec: ServerSpec, typed: Vec<(String, Secret)>) -> Sealed {
    let in_text = super::placeholders::spec_refs(&spec);
    let mut taken = Taken::new(
        spec.secret_refs()
            .into_iter()
            .chain(in_text.iter())
            .map(|n| n.as_str().to_owned()),
    );
    let mut secrets = Vec::new();
    let mut moved = Vec::new();
    // A value typed for a secret an argument or the URL refers to (`${secret:NAME}`, LK-01).
    for (field, value) in &typed {
        if let Some(name) = in_text.iter().find(|n| n.as_str() == field) {
            if !spec.values().iter().any(|v| v.name == *field) {
                secrets.push((name.clone(), value.clone()));
            }
        }
    }
    for v in spec.values_mut() {
        let typed_value = typed
            .iter()
            .find(|(field, _)| *field == v.name)
            .map(|(_, s)| s.clone());
        let (value, auto) = match (&v.value, typed_value) {
            (ValueSource::Secret(n), Some(s)) => {
                secrets.push((n.clone(), s));
                continue;
            }
            (_, Some(s)) => (s, false),
            (ValueSource::Plain(p), None) if looks_like_credential(&v.name, p) => {
                (Secret::new(p.clone()), true)
            }
            _ => continue,
        };
        let Some(name) = own_name(&v.name, &mut taken) else {
            continue;
        };
        if auto {
            moved.push((v.name.clone(), name.clone()));
        }
        secrets.push((name.clone(), value));
        v.value = ValueSource::Secret(name);
    }
    Sealed {
        spec,
        secrets,
        moved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(env: &[(&str, ValueSource)]) -> ServerSpec {
        ServerSpec::test_stdio("gh", "srv", env)
    }

    fn plain(s: &str) -> ValueSource {
        ValueSource::Plain(s.into())
    }

    #[test]
    fn credentials_move_and_the_rest_stays() {
        let sealed = seal(
            spec(&[
                (
                    "GITHUB_PERSONAL_ACCESS_TOKEN",
                    plain("ghp_CANARY0123456789abcdef"),
                ),
                ("LOG_LEVEL", plain("debug")),
                ("DEBUG_TOKEN", plain("true")),
                ("OTHER", plain("sk-CANARYabcdefghijkl")),
                ("TYPED", plain("")),
                (
                    "KEPT",
                    ValueSource::Secret(SecretName::new("KEPT").unwrap()),
                ),
            ]),
            vec![("TYPED".into(), Secret::new("typed-CANARY"))],
        );
        let text = serde_json::to_string(&sealed.spec).unwrap();
        assert!(!text.contains("CANARY"), "{text}");
        assert!(text.contains("debug") && text.contains("true"));
        let names: Vec<&str> = sealed.secrets.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["GITHUB_PERSONAL_ACCESS_TOKEN", "OTHER", "TYPED"]);
        assert_eq!(sealed.moved.len(), 2, "typed values are not 'moved'");
        assert_eq!(sealed.spec.secret_refs().len(), 4);
    }

    #[test]
    fn own_names_are_unique_and_valid() {
        let sealed = seal(
            spec(&[
                (
                    "x",
                    ValueSource::Secret(SecretName::new("API_KEY").unwrap()),
                ),
                ("_API_KEY", plain("v-1234567")),
                ("API_KEY", plain("sk-CANARYabcdefghijkl")),
            ]),
            vec![],
        );
        let refs: Vec<String> = sealed
            .spec
            .secret_refs()
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(refs, ["API_KEY", "API_KEY-2", "API_KEY-3"]);
    }

    #[test]
    fn shown_values_never_include_secrets() {
        assert_eq!(shown_value("MODE", &plain("fast mode")), "'fast mode'");
        let hidden = shown_value("GITHUB_TOKEN", &plain("ghp_CANARY0123456789"));
        assert!(!hidden.contains("CANARY") && hidden.contains("hidden"));
        let b = Binding::parse("provider:openai").unwrap();
        assert!(shown_value("Authorization", &ValueSource::Bound(b)).contains("provider openai"));
    }
}
