//! The registry's wire shapes: `server.json` (schema 2025-09-29 .. 2025-12-11, camelCase) and
//! the v0.1 list and version responses around it.
//!
//! Every field the schema marks optional is optional here, and unknown fields are ignored, so
//! one publisher's odd entry does not fail a page. What a person reads (descriptions) is cut to
//! [`DESCRIPTION_MAX`] characters as soon as it is parsed: a registry entry is outside text, and
//! a 1 MB description must not travel into caches, lists and windows. Values that end up on a
//! command line or in the environment are kept exactly; the trust view shows them in full.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most characters of a description kept from the registry.
pub const DESCRIPTION_MAX: usize = 2000;

/// The `_meta` key under which the official registry puts its own data.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// One `server.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    /// Reverse-DNS name with one slash (`io.github.user/weather`).
    pub name: String,
    /// What it does, for people (cut to [`DESCRIPTION_MAX`]).
    #[serde(default)]
    pub description: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The server's version.
    #[serde(default)]
    pub version: String,
    /// Where its source lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    /// Its home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Ways to run it locally.
    #[serde(default)]
    pub packages: Vec<Package>,
    /// Ways to reach it remotely.
    #[serde(default)]
    pub remotes: Vec<Transport>,
}

/// A source repository.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    /// Its URL.
    #[serde(default)]
    pub url: String,
    /// The forge (`github`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The folder of the server inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subfolder: Option<String>,
}

/// A package that runs the server locally.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb`, ...
    pub registry_type: String,
    /// The package registry, when not the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_base_url: Option<String>,
    /// The package name (OCI: the image reference, maybe with its tag).
    pub identifier: String,
    /// The exact version (absent for OCI images that carry their tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The runtime the publisher meant (`npx`, `uvx`, `docker`, `dnx`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_hint: Option<String>,
    /// How the running package speaks MCP.
    #[serde(default)]
    pub transport: Transport,
    /// Arguments for the runtime (`docker run ... IMAGE`, `npx ... PKG`).
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    /// Arguments for the package itself.
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    /// Environment variables to set.
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

/// A transport: `stdio` for packages, `streamable-http` or `sse` with a URL (and headers and
/// URL variables, for remotes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transport {
    /// `stdio`, `streamable-http` or `sse`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The URL template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers to send.
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// Variables of the URL template (`{tenant}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, Input>,
}

/// A value the publisher fixed or the person supplies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// What it is for (cut to [`DESCRIPTION_MAX`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default)]
    pub is_required: bool,
    /// `string`, `number`, `boolean` or `filepath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A fixed value (with `{variables}`); not the person's to change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Whether it is a secret (token, password).
    #[serde(default)]
    pub is_secret: bool,
    /// The value when the person gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// An example to show in an empty field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// The only values allowed, when given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The variables of `value`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, Input>,
}

/// A command-line argument: `positional` (one value) or `named` (`--flag` and maybe a value).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// `positional` or `named`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The flag, dashes included (named only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A label for a positional value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_hint: Option<String>,
    /// The value and how it is asked for.
    #[serde(flatten)]
    pub input: Input,
}

/// An environment variable or header and its value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValueInput {
    /// The variable or header name.
    pub name: String,
    /// The value and how it is asked for.
    #[serde(flatten)]
    pub input: Input,
}

/// A registry entry's lifecycle status; only active entries are shown and installed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Listed and installable.
    Active,
    /// Its publisher asks people to move on.
    Deprecated,
    /// Withdrawn.
    Deleted,
    /// A status this client does not know (treated as not active).
    Other(String),
}

impl Status {
    fn parse(s: Option<&str>) -> Self {
        match s {
            // A registry that says nothing about status (a private mirror) lists what it serves.
            None | Some("active") => Self::Active,
            Some("deprecated") => Self::Deprecated,
            Some("deleted") => Self::Deleted,
            Some(other) => Self::Other(cut(other, 64)),
        }
    }

    /// The word for it.
    pub fn word(&self) -> &str {
        match self {
            Self::Active => "active",
            Self::Deprecated => "deprecated",
            Self::Deleted => "deleted",
            Self::Other(s) => s,
        }
    }
}

/// One registry entry: a `server.json` and what the registry says about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The server.
    pub server: ServerJson,
    /// Its status.
    pub status: Status,
    /// When it was published (RFC 3339, as the registry sent it).
    pub published_at: Option<String>,
    /// Whether this is the newest version.
    pub is_latest: Option<bool>,
}

/// Why one entry of a page was skipped.
#[derive(Debug)]
pub(crate) enum BadEntry {
    /// It does not parse as a `server.json` in a `{server, _meta}` wrapper.
    Malformed,
}

/// Parses one `{server, _meta}` item, cutting descriptions.
pub(crate) fn parse_entry(item: serde_json::Value) -> Result<Entry, BadEntry> {
    let serde_json::Value::Object(mut item) = item else {
        return Err(BadEntry::Malformed);
    };
    let official = item
        .get("_meta")
        .and_then(|m| m.get(OFFICIAL_META))
        .cloned()
        .unwrap_or_default();
    let server = item.remove("server").ok_or(BadEntry::Malformed)?;
    let mut server: ServerJson = serde_json::from_value(server).map_err(|_| BadEntry::Malformed)?;
    if !valid_name(&server.name) {
        return Err(BadEntry::Malformed);
    }
    trim(&mut server);
    Ok(Entry {
        server,
        status: Status::parse(official.get("status").and_then(|s| s.as_str())),
        published_at: official
            .get("publishedAt")
            .and_then(|s| s.as_str())
            .map(|s| cut(s, 64)),
        is_latest: official.get("isLatest").and_then(|b| b.as_bool()),
    })
}

/// The schema's name rule: `namespace/name`, at most 200 characters, from a small alphabet.
pub fn valid_name(name: &str) -> bool {
    let Some((ns, rest)) = name.split_once('/') else {
        return false;
    };
    let ok = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || extra.contains(c))
    };
    name.len() <= 200 && ok(ns, "") && ok(rest, "_")
}

/// `s` cut to `max` characters, with an ellipsis when cut.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

fn trim(s: &mut ServerJson) {
    s.description = cut(&s.description, DESCRIPTION_MAX);
    if let Some(t) = &mut s.title {
        *t = cut(t, 200);
    }
    let trim_input = |i: &mut Input| {
        if let Some(d) = &mut i.description {
            *d = cut(d, DESCRIPTION_MAX);
        }
        for v in i.variables.values_mut() {
            if let Some(d) = &mut v.description {
                *d = cut(d, DESCRIPTION_MAX);
            }
        }
    };
    for p in &mut s.packages {
        for a in p
            .runtime_arguments
            .iter_mut()
            .chain(p.package_arguments.iter_mut())
        {
            trim_input(&mut a.input);
        }
        for e in &mut p.environment_variables {
            trim_input(&mut e.input);
        }
    }
    for r in &mut s.remotes {
        for h in &mut r.headers {
            trim_input(&mut h.input);
        }
        for v in r.variables.values_mut() {
            trim_input(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_published_shape_and_cuts_descriptions() {
        let e = parse_entry(json!({
            "server": {
                "name": "io.github.x/weather",
                "description": "d".repeat(1_000_000),
                "version": "1.0.0",
                "packages": [{
                    "registryType": "npm", "identifier": "@x/weather", "version": "1.0.0",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [{"name": "API_KEY", "isSecret": true, "isRequired": true}],
                    "packageArguments": [{"type": "named", "name": "--port", "default": "80"}]
                }],
                "remotes": [{"type": "streamable-http", "url": "https://x/mcp",
                             "headers": [{"name": "Authorization", "value": "Bearer {t}",
                                          "variables": {"t": {"isSecret": true}}}]}]
            },
            "_meta": {OFFICIAL_META: {"status": "deprecated", "isLatest": true}}
        }))
        .unwrap();
        assert_eq!(e.status, Status::Deprecated);
        assert!(e.server.description.chars().count() <= DESCRIPTION_MAX + 1);
        let p = &e.server.packages[0];
        assert!(p.environment_variables[0].input.is_secret);
        assert_eq!(p.package_arguments[0].name.as_deref(), Some("--port"));
        assert_eq!(p.package_arguments[0].input.default.as_deref(), Some("80"));
        assert!(
            e.server.remotes[0].headers[0].input.variables["t"].is_secret,
            "{e:?}"
        );
    }

    #[test]
    fn bad_entries_are_refused() {
        assert!(parse_entry(json!("x")).is_err());
        assert!(parse_entry(json!({"server": {"name": "no-slash"}})).is_err());
        assert!(parse_entry(json!({"server": {"name": "a/b", "packages": 3}})).is_err());
        assert!(parse_entry(json!({"server": {"name": "a/b"}})).is_ok());
    }
}
