//! VS Code's sandbox settings, carried into [`SandboxSpec`] (SP-07, SP-08).
//!
//! VS Code marks a local server with `"sandboxEnabled": true` and configures every sandboxed
//! server of the file with one top-level `"sandbox"` object:
//! `{"filesystem": {"allowWrite", "denyRead", "denyWrite"}, "network": {"allowedDomains",
//! "deniedDomains"}}`. The mapping never loosens what the file asked for:
//! - `sandboxEnabled: true` switches our sandbox on. Ours is stricter on reads (VS Code's lets
//!   a server read everything but `denyRead`; ours shows nothing outside the grants), which a
//!   note says, with the doctor as the way to find what the server needs.
//! - `allowWrite` paths become write grants; `denyRead` and `denyWrite` paths become hidden
//!   paths (hiding is stricter than read-only, so a `denyWrite` never leaves a path writable).
//! - `allowedDomains` and `deniedDomains` become our domain lists (SP-13), enforced by the
//!   sandbox's filtering proxy; a non-empty `allowedDomains` switches the network on (as in
//!   VS Code, where no allowed domain means no network). A pattern we cannot read is left out
//!   with a note: a left-out allow only narrows; a left-out deny could widen, so then the
//!   network stays off.
//! - Paths we cannot place here (`~`, `${workspaceFolder}`, relative ones) are left out with a
//!   note. Leaving out a grant only narrows the sandbox. Leaving out a deny could expose what it
//!   hid inside a granted folder, so when any deny is left out, the write grants are left out
//!   too (a denied path outside the grants is hidden anyway).
//!
//! Claude Desktop and Cursor files have no sandbox settings; their servers import unsandboxed.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::values::{vars, ServerCx};
use super::{esc, NoteKind};
use crate::ids::ServerId;
use crate::sandbox::SandboxSpec;

/// The sandbox of one VS Code server entry, given the file's `sandbox` object.
pub(super) fn lower(
    cx: &mut ServerCx<'_>,
    entry: &Map<String, Value>,
    file_sandbox: Option<&Value>,
) -> SandboxSpec {
    match entry.get("sandboxEnabled") {
        None | Some(Value::Bool(false)) | Some(Value::Null) => return SandboxSpec::default(),
        Some(Value::Bool(true)) => {}
        Some(_) => {
            // Not a clear "off": the safe reading of a garbled switch is "on".
            cx.note(
                NoteKind::Mapped,
                "\"sandboxEnabled\" is not true or false; the server is imported sandboxed"
                    .to_owned(),
            );
        }
    }
    let mut spec = SandboxSpec::on();
    let id = cx.id.clone();
    cx.note(
        NoteKind::Mapped,
        format!(
            "\"sandboxEnabled\": true was kept: the server runs sandboxed. Unlike VS Code's, this \
             sandbox hides everything outside the granted folders; `switchboard doctor {id}` says \
             what it was kept from"
        ),
    );
    let section = file_sandbox.and_then(Value::as_object);
    lower_filesystem(cx, &mut spec, section, &id);
    lower_network(cx, &mut spec, section, &id);
    let spec = spec.normalized();
    match spec.validate() {
        Ok(()) => spec,
        Err(e) => {
            cx.note(
                NoteKind::DroppedField,
                format!("the sandbox paths were left out ({e}); the sandbox is on without grants"),
            );
            SandboxSpec::on()
        }
    }
}

/// VS Code's `sandbox.filesystem`: the write grants and deny rules given as absolute paths.
/// When a deny rule cannot be carried over, the write grants are left out too.
fn lower_filesystem(
    cx: &mut ServerCx<'_>,
    spec: &mut SandboxSpec,
    section: Option<&Map<String, Value>>,
    id: &ServerId,
) {
    let fs = section
        .and_then(|s| s.get("filesystem"))
        .and_then(Value::as_object);
    let mut lost_deny = false;
    for (key, deny) in [
        ("allowWrite", false),
        ("denyRead", true),
        ("denyWrite", true),
    ] {
        for raw in strings(fs.and_then(|f| f.get(key))) {
            match usable_path(raw) {
                Some(p) if deny => spec.deny.push(p),
                Some(p) => spec.write.push(p),
                None => {
                    lost_deny |= deny;
                    cx.note(
                        NoteKind::DroppedField,
                        format!(
                        "sandbox.filesystem.{key} \"{}\" was left out: only absolute paths are \
                         understood here; add it with `switchboard server sandbox {id} {}`",
                        esc(raw),
                        if deny { "--deny PATH" } else { "--allow-write PATH" }
                    ),
                    )
                }
            }
        }
    }
    if lost_deny && !spec.write.is_empty() {
        spec.write.clear();
        cx.note(
            NoteKind::DroppedField,
            format!(
                "sandbox.filesystem.allowWrite was left out too: a deny rule that could not be                  carried over might have hidden part of it; grant folders with                  `switchboard server sandbox {id} --allow-write PATH`"
            ),
        );
    }
}

/// VS Code's `sandbox.network`: the allowed and denied domains. The network is on only with
/// allowed domains and every denied one carried over.
fn lower_network(
    cx: &mut ServerCx<'_>,
    spec: &mut SandboxSpec,
    section: Option<&Map<String, Value>>,
    id: &ServerId,
) {
    let net = section
        .and_then(|s| s.get("network"))
        .and_then(Value::as_object);
    let mut lost_domain_deny = false;
    for (key, deny) in [("allowedDomains", false), ("deniedDomains", true)] {
        for raw in strings(net.and_then(|n| n.get(key))) {
            match crate::sandbox::domains::pattern(raw) {
                Ok(d) if deny => spec.deny_domains.push(d),
                Ok(d) => spec.allow_domains.push(d),
                Err(_) => {
                    lost_domain_deny |= deny;
                    cx.note(
                        NoteKind::DroppedField,
                        format!(
                            "sandbox.network.{key} \"{}\" was left out: it is not a domain \
                             (example.com or *.example.com)",
                            esc(raw)
                        ),
                    );
                }
            }
        }
    }
    spec.network = !spec.allow_domains.is_empty() && !lost_domain_deny;
    if spec.network {
        cx.note(
            NoteKind::Mapped,
            format!(
                "sandbox.network was kept: {id} reaches only {} through Switchboard's filtering \
                 proxy (and nothing on this computer)",
                spec.allow_domains
                    .iter()
                    .map(|d| esc(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    } else if lost_domain_deny && !spec.allow_domains.is_empty() {
        cx.note(
            NoteKind::DroppedField,
            format!(
                "the network stays off: a denied domain could not be carried over; allow it with \
                 `switchboard server sandbox {id} --network on` once the lists are right"
            ),
        );
    }
}

fn strings(v: Option<&Value>) -> impl Iterator<Item = &str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// An absolute path without variables, `~` or `..`.
fn usable_path(raw: &str) -> Option<PathBuf> {
    let p = PathBuf::from(raw);
    let plain = p.is_absolute() && vars(raw).is_empty() && !raw.contains('\0');
    let dotdot = p.components().any(|c| c == std::path::Component::ParentDir);
    (plain && !dotdot).then_some(p)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::{import, ForeignFormat, ImportReport};
    use crate::config::TransportSpec;
    use crate::sandbox::SandboxSpec;
    use std::path::PathBuf;

    fn sandbox_of(r: &ImportReport, id: &str) -> SandboxSpec {
        let s = r.servers.iter().find(|s| s.spec.id.as_str() == id).unwrap();
        match &s.spec.transport {
            TransportSpec::Stdio(s) => s.sandbox.clone(),
            TransportSpec::Http(_) => panic!("{id} is remote"),
        }
    }

    fn notes(r: &ImportReport) -> String {
        r.notes.iter().map(|n| format!("{}\n", n.message)).collect()
    }

    #[test]
    fn vscode_sandbox_settings_are_carried_over_without_loosening() {
        let text = r#"{
          "sandbox": {
            "filesystem": {"allowWrite": ["/srv/out", "${workspaceFolder}/tmp"],
                           "denyRead": ["/srv/out/private"], "denyWrite": ["/srv/out/keep"]},
            "network": {"allowedDomains": ["api.example.com", "not a domain!"],
                        "deniedDomains": ["*.ads.example.com"]}
          },
          "servers": {
            "boxed": {"type": "stdio", "command": "/usr/bin/node", "sandboxEnabled": true},
            "free": {"type": "stdio", "command": "/usr/bin/node"},
            "remote": {"type": "http", "url": "https://example.com/mcp"}
          }
        }"#;
        let r = import(text, None).unwrap();
        assert_eq!(r.format, ForeignFormat::Vscode);
        let boxed = sandbox_of(&r, "boxed");
        assert!(boxed.enabled);
        assert_eq!(boxed.write, vec![PathBuf::from("/srv/out")]);
        assert_eq!(
            boxed.deny,
            vec![
                PathBuf::from("/srv/out/keep"),
                PathBuf::from("/srv/out/private")
            ]
        );
        // SP-13: VS Code's domain lists are kept, and enforced by the proxy.
        assert!(boxed.network, "{boxed:?}");
        assert_eq!(boxed.allow_domains, vec!["api.example.com".to_owned()]);
        assert_eq!(boxed.deny_domains, vec!["*.ads.example.com".to_owned()]);
        assert!(boxed.filtered().is_some());
        let text = notes(&r);
        assert!(
            text.contains("reaches only api.example.com through Switchboard's filtering proxy"),
            "{text}"
        );
        assert!(text.contains("\"not a domain!\" was left out"), "{text}");
        assert!(
            text.contains("${workspaceFolder}/tmp\" was left out"),
            "{text}"
        );
        assert!(text.contains("runs sandboxed"), "{text}");
        assert!(!text.contains("\"sandboxEnabled\" was dropped"), "{text}");
        assert!(sandbox_of(&r, "free").is_unset());
    }

    #[test]
    fn a_deny_rule_that_cannot_be_placed_takes_the_write_grants_with_it() {
        let text = r#"{
          "sandbox": {"filesystem": {"allowWrite": ["/srv/out"], "denyRead": ["~/.env"]}},
          "servers": {"boxed": {"command": "/usr/bin/node", "sandboxEnabled": true}}
        }"#;
        let r = import(text, Some(ForeignFormat::Vscode)).unwrap();
        let boxed = sandbox_of(&r, "boxed");
        assert!(boxed.enabled && boxed.write.is_empty(), "{boxed:?}");
        assert!(
            notes(&r).contains("allowWrite was left out too"),
            "{}",
            notes(&r)
        );
    }

    #[test]
    fn other_formats_import_unsandboxed_unless_asked() {
        let r = import(
            r#"{"mcpServers": {"a": {"command": "/usr/bin/node"},
                              "b": {"command": "/usr/bin/node", "sandboxEnabled": "yes"}}}"#,
            None,
        )
        .unwrap();
        assert!(sandbox_of(&r, "a").is_unset());
        assert!(sandbox_of(&r, "b").enabled, "a garbled switch reads as on");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod domain_tests {
    use super::super::{import, ForeignFormat};
    use crate::config::TransportSpec;

    /// SP-13: a denied domain that cannot be carried over keeps the network off (leaving it
    /// out would widen the list); no allowed domain means no network, as in VS Code.
    #[test]
    fn a_lost_deny_or_no_allow_keeps_the_network_off() {
        for net in [
            r#"{"allowedDomains": ["a.test"], "deniedDomains": ["bad domain"]}"#,
            r#"{"deniedDomains": ["b.test"]}"#,
        ] {
            let text = format!(
                r#"{{"sandbox": {{"network": {net}}},
                   "servers": {{"boxed": {{"command": "/usr/bin/node", "sandboxEnabled": true}}}}}}"#
            );
            let r = import(&text, Some(ForeignFormat::Vscode)).unwrap();
            let TransportSpec::Stdio(s) = &r.servers[0].spec.transport else {
                panic!("remote");
            };
            assert!(
                s.sandbox.enabled && !s.sandbox.network,
                "{net}: {:?}",
                s.sandbox
            );
        }
    }
}
