//! Tests of [`super`]: validation, normalizing, grants, fingerprints and consent words.
#![allow(clippy::unwrap_used)]

use super::*;

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

#[test]
fn validation_refuses_what_would_undo_or_blur_the_sandbox() {
    let with = |read: &[&str]| SandboxSpec {
        enabled: true,
        read: read.iter().map(|s| p(s)).collect(),
        ..SandboxSpec::default()
    };
    assert_eq!(with(&["/home/a/proj"]).validate(), Ok(()));
    for (paths, want) in [
        (&["rel/dir"][..], "NotAbsolute"),
        (&["/home/a/../b"], "DotDot"),
        (&["/"], "TooBroad"),
        (&["/proc"], "TooBroad"),
        (&["/./"], "TooBroad"),
        (&["/a\nb"], "BadChar"),
    ] {
        let got = format!("{:?}", with(paths).validate());
        assert!(got.contains(want), "{paths:?}: {got}");
    }
    // Denying the root is pointless but harmless; granting it is refused.
    let deny_root = SandboxSpec {
        deny: vec![p("/")],
        ..SandboxSpec::on()
    };
    assert_eq!(deny_root.validate(), Ok(()));
}

#[test]
fn normalizing_sorts_dedups_and_prefers_write() {
    let s = SandboxSpec {
        enabled: true,
        read: vec![p("/b/"), p("/a/./x"), p("/b"), p("/w")],
        write: vec![p("/w")],
        deny: vec![],
        network: false,
        allow_domains: vec![],
        deny_domains: vec![],
        unmask: vec![p("/w"), p("/not-granted")],
    }
    .normalized();
    assert_eq!(s.unmask, vec![p("/w")], "an unmask needs a grant");
    assert_eq!(s.read, vec![p("/a/x"), p("/b")]);
    assert_eq!(s.write, vec![p("/w")]);
}

#[test]
fn grants_and_revocations() {
    let s = SandboxSpec::on().granted(Path::new("/d"), Access::Read);
    assert_eq!(s.read, vec![p("/d")]);
    let s = s.granted(Path::new("/d"), Access::Write);
    assert!(s.read.is_empty() && s.write == vec![p("/d")]);
    // A read grant does not narrow a write grant.
    assert_eq!(s.granted(Path::new("/d"), Access::Read), s);
    let denied = SandboxSpec {
        deny: vec![p("/d/secret")],
        ..s.clone()
    };
    assert!(denied
        .granted(Path::new("/d/secret"), Access::Read)
        .deny
        .is_empty());
    assert_eq!(s.revoked(Path::new("/d/")), SandboxSpec::on());
}

#[test]
fn fingerprint_parts_are_empty_when_off_and_see_every_change_when_on() {
    let off = SandboxSpec {
        read: vec![p("/x")],
        ..SandboxSpec::default()
    };
    assert!(
        off.fingerprint_parts().is_empty(),
        "grants of an off sandbox mean nothing"
    );
    let base = SandboxSpec::on();
    let variants = [
        base.clone(),
        base.granted(Path::new("/x"), Access::Read),
        base.granted(Path::new("/x"), Access::Write),
        SandboxSpec {
            deny: vec![p("/x")],
            ..base.clone()
        },
        SandboxSpec {
            network: true,
            ..base.clone()
        },
    ];
    for (i, a) in variants.iter().enumerate() {
        for b in &variants[i + 1..] {
            assert_ne!(
                a.fingerprint_parts(),
                b.fingerprint_parts(),
                "{a:?} vs {b:?}"
            );
        }
    }
    // The same meaning, written differently, fingerprints alike.
    let messy = SandboxSpec {
        read: vec![p("/b/"), p("/a")],
        ..base.clone()
    };
    let tidy = SandboxSpec {
        read: vec![p("/a"), p("/b")],
        ..base
    };
    assert_eq!(messy.fingerprint_parts(), tidy.fingerprint_parts());
}

#[test]
fn consent_and_summary_say_what_it_may_do() {
    let s = SandboxSpec {
        network: true,
        ..SandboxSpec::on()
            .granted(Path::new("/data"), Access::Read)
            .granted(Path::new("/out\u{202E}"), Access::Write)
    };
    let text: String = s
        .consent_lines()
        .iter()
        .map(|(k, v)| format!("{k}: {v}\n"))
        .collect();
    assert!(text.contains("may read: /data"), "{text}");
    assert!(text.contains("may write: /out\\u{202E}"), "{text}");
    assert!(text.contains("network: on"), "{text}");
    assert_eq!(s.summary(), "on (1 read, 1 write, network)");
    assert_eq!(SandboxSpec::default().summary(), "off");
    assert!(SandboxSpec::default().consent_lines()[0]
        .1
        .starts_with("off"));
}

#[test]
fn old_specs_read_as_unset() {
    let s: SandboxSpec = serde_json::from_str("{}").unwrap();
    assert!(s.is_unset());
    let json = serde_json::to_string(&SandboxSpec::on()).unwrap();
    assert_eq!(json, r#"{"enabled":true,"network":false}"#);
}

/// SP-13: revoking the last allowed domain never leaves "every domain": the network goes
/// off; with another allowed or a denied domain left, it stays on.
#[test]
fn revoking_the_last_allowed_domain_switches_the_network_off() {
    let one = SandboxSpec {
        enabled: true,
        ..SandboxSpec::default()
    }
    .domain_allowed("a.test")
    .unwrap();
    assert!(one.network);
    let gone = one.domain_revoked("A.test.");
    assert!(gone.allow_domains.is_empty() && !gone.network, "{gone:?}");
    let two = one.domain_allowed("b.test").unwrap();
    assert!(two.domain_revoked("a.test").network);
    let denied = one
        .domain_denied("x.test")
        .unwrap()
        .domain_allowed("a.test")
        .unwrap();
    assert!(denied.domain_revoked("a.test").network, "{denied:?}");
    let open = SandboxSpec {
        enabled: true,
        network: true,
        ..SandboxSpec::default()
    };
    assert!(
        open.domain_revoked("a.test").network,
        "nothing listed: nothing changes"
    );
}
