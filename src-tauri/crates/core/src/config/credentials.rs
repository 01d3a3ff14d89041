//! Credentials typed as plain text, moved to the server's own keyring namespace (SE-01, SE-04).
//!
//! A person who types `--env GITHUB_TOKEN=ghp_...` or pastes a key into the add form without
//! ticking "secret" means a secret all the same. [`seal`] finds such values (by the variable or
//! header name, or by a known token shape) and turns them into references to secrets of the
//! server's own namespace, handing the values back for the host to store. The same test decides
//! what an import moves, so the CLI, the form and import agree on what a credential looks like.
//!
//! Pure: no keyring, no store. Nothing here puts a value in a message.

use super::escape::quote_arg;
use super::import::names::{sanitize, Taken};
use super::{Binding, ServerSpec, ValueSource};
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
/// field name) and every plain value that [`looks_like_credential`]. A typed value replaces
/// whatever the spec held for its field; a field that already referred to an own secret keeps
/// that secret's name.
pub fn seal(mut spec: ServerSpec, typed: Vec<(String, Secret)>) -> Sealed {
    let mut taken = Taken::new(spec.secret_refs().iter().map(|n| n.as_str().to_owned()));
    let mut secrets = Vec::new();
    let mut moved = Vec::new();
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
