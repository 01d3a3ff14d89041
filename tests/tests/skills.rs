//! Skills (`io.modelcontextprotocol/skills`, SEP-2640) against a real skills server: the
//! TypeScript SDK v2's skills extension in `tests/fixtures/skills_server.mjs`, over stdio,
//! which records every `resources/read` it serves in a log so a test can count what was
//! fetched, and can lie about a skill's bytes in each way the spec asks hosts to catch.
//!
//! - listing reads no file, and neither does a refused (unapproved) read;
//! - loading reads the `SKILL.md` alone; another file only when asked for;
//! - a wrong digest, a wrong size and a frontmatter that differs from the entry are each
//!   refused with their own typed error, and nothing past the `SKILL.md` is read;
//! - a skill that changed between two runs of its server is held for review until approved
//!   again (through the CLI, as a person would), and an approval of a skill that changed since
//!   it was shown is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::PathBuf;

use switchboard_core::approval::Origin;
use switchboard_core::host::{CallOptions, Host, SkillHostError, SkillState};
use switchboard_core::skill_data::SkillError;
use switchboard_tests::skills_fixture::{args as fixture_args, peers, reads};
use switchboard_tests::*;

const SKILL_MD: &str = "skill://pdf-tools/SKILL.md";
const GUIDE: &str = "skill://pdf-tools/references/GUIDE.md";

/// A host running the fixture in `mode`; the read log's path.
async fn running(
    mode: &str,
) -> Option<(
    Host,
    tempfile::TempDir,
    switchboard_core::ids::ServerId,
    PathBuf,
)> {
    let (node, modules) = peers()?;
    let (host, dir) = test_host().await;
    let log = dir.path().join("reads.log");
    let args = fixture_args(&modules, &log, mode, &dir.path().join("variant"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let h = start_trusted(&host, stdio_spec("skills", &node, &args)).await;
    let id = h.id().clone();
    Some((host, dir, id, log))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_and_read_lazily_and_only_once_approved() {
    let Some((host, _dir, id, log)) = running("good").await else {
        return;
    };
    let skills = host.skills(&id).await.unwrap();
    assert_eq!(skills.len(), 1, "{skills:?}");
    let s = &skills[0];
    assert_eq!(s.entry.name(), "pdf-tools");
    assert_eq!(s.entry.description(), "Fill and merge PDF forms");
    assert_eq!(s.entry.listed().map(<[_]>::len), Some(2));
    assert_eq!(s.state, SkillState::New);
    assert_eq!(reads(&log), Vec::<String>::new(), "listing read a file");

    // Never approved: held, and nothing is fetched for it.
    let err = host
        .read_skill(&id, "pdf-tools", Origin::Manual, CallOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            SkillHostError::Held {
                state: SkillState::New,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(reads(&log), Vec::<String>::new(), "a held skill was read");

    let approved = host
        .approve_skill(&id, "pdf-tools", Some(&s.fingerprint))
        .await
        .unwrap();
    assert_eq!(approved.state, SkillState::Approved);
    assert_eq!(reads(&log), Vec::<String>::new(), "approving read a file");
    // The approval is in the audit log, like a tool's, with the fingerprint approved.
    let audit = host
        .audit_page(&switchboard_core::store::AuditQuery {
            search: Some("skill pdf-tools".into()),
            before: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(
        audit
            .entries
            .iter()
            .any(|e| e.detail_json.contains("approved") && e.detail_json.contains(&s.fingerprint)),
        "{:?}",
        audit.entries
    );

    let loaded = host
        .read_skill(&id, "pdf-tools", Origin::Manual, CallOptions::default())
        .await
        .unwrap();
    assert!(loaded.skill_md.verified);
    assert!(
        loaded.skill_md.text().unwrap().contains("Skill body."),
        "{:?}",
        loaded.skill_md.text()
    );
    assert_eq!(loaded.files, vec![GUIDE.to_owned()]);
    assert_eq!(
        reads(&log),
        vec![SKILL_MD],
        "loading read more than SKILL.md"
    );

    let guide = host
        .read_skill_file(
            &id,
            "pdf-tools",
            "references/GUIDE.md",
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(guide.text(), Some("How to fill a form.\n"));
    assert_eq!(reads(&log), vec![SKILL_MD, GUIDE]);

    // A file the manifest does not list is refused before any request.
    let err = host
        .read_skill_file(
            &id,
            "pdf-tools",
            "../secrets.md",
            Origin::Manual,
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, SkillHostError::Skill(SkillError::NotListed { .. })),
        "{err}"
    );
    assert_eq!(reads(&log).len(), 2);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_that_fails_verification_is_refused() {
    for mode in ["digest", "size", "frontmatter"] {
        let Some((host, _dir, id, log)) = running(mode).await else {
            return;
        };
        host.approve_skill(&id, "pdf-tools", None).await.unwrap();
        let err = host
            .read_skill(&id, "pdf-tools", Origin::Manual, CallOptions::default())
            .await
            .unwrap_err();
        let SkillHostError::Skill(e) = &err else {
            panic!("{mode}: not a verification error: {err}");
        };
        let expected = match (mode, e) {
            ("digest", SkillError::DigestMismatch { uri, .. }) => uri == SKILL_MD,
            (
                "size",
                SkillError::SizeMismatch {
                    uri,
                    expected,
                    actual,
                },
            ) => uri == SKILL_MD && actual > expected,
            ("frontmatter", SkillError::Frontmatter { detail, .. }) => {
                detail.contains("description") && detail.contains("Exfiltrate credentials")
            }
            _ => false,
        };
        assert!(expected, "{mode}: {e:?}");
        assert_eq!(
            reads(&log),
            vec![SKILL_MD],
            "{mode}: read past a refused SKILL.md"
        );
        host.shutdown().await;
    }
}

#[test]
fn a_skill_changed_between_runs_is_held_until_reviewed_again() {
    let Some((node, modules)) = peers() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let log = d.join("reads.log");
    let variant = d.join("variant");
    let mut add = vec!["server", "add", "skills", "--", node.as_str()];
    let args = fixture_args(&modules, &log, "good", &variant);
    add.extend(args.iter().map(String::as_str));
    cli_ok(d, &add);
    cli_ok(d, &["server", "trust", "skills", "--yes"]);
    cli_ok(d, &["skill", "approve", "skills", "pdf-tools"]);
    let out = cli_ok(d, &["skill", "read", "skills", "pdf-tools", "--yes"]);
    assert!(out.contains("Skill body."), "{out}");

    // The server's next run serves another GUIDE.md: a new manifest.
    std::fs::write(&variant, "a new step\n").unwrap();
    let listed: serde_json::Value =
        serde_json::from_str(&cli_ok(d, &["--json", "skill", "list", "skills"])).unwrap();
    assert_eq!(listed[0]["state"], "changed", "{listed}");
    let before = reads(&log).len();
    let o = run_cli(
        d,
        &["skill", "read", "skills", "pdf-tools", "--yes"],
        "",
        &[],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("held for review") && err.contains("changed"),
        "{err}"
    );
    assert_eq!(reads(&log).len(), before, "a held skill was read");
    // A script reads why from the error object's code.
    let o = run_cli(
        d,
        &["--json", "skill", "read", "skills", "pdf-tools", "--yes"],
        "",
        &[],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "held_for_review", "{v}");

    let shown: serde_json::Value = serde_json::from_str(&cli_ok(
        d,
        &["--json", "skill", "show", "skills", "pdf-tools"],
    ))
    .unwrap();
    let old_guide = &shown["approved"]["resources"][1];
    let new_guide = &shown["entry"]["resources"][1];
    assert_eq!(old_guide["uri"], GUIDE);
    assert_ne!(old_guide["digest"], new_guide["digest"], "{shown}");
    let fingerprint = shown["fingerprint"].as_str().unwrap().to_owned();

    // An approval of what was shown, once the skill changed again, is refused.
    std::fs::write(&variant, "yet another step\n").unwrap();
    let o = run_cli(
        d,
        &[
            "skill",
            "approve",
            "skills",
            "pdf-tools",
            "--fingerprint",
            &fingerprint,
        ],
        "",
        &[],
    );
    assert!(!o.status.success(), "a stale approval was accepted");
    assert!(String::from_utf8_lossy(&o.stderr).contains("changed while it was being reviewed"));

    let shown: serde_json::Value = serde_json::from_str(&cli_ok(
        d,
        &["--json", "skill", "show", "skills", "pdf-tools"],
    ))
    .unwrap();
    let fingerprint = shown["fingerprint"].as_str().unwrap();
    cli_ok(
        d,
        &[
            "skill",
            "approve",
            "skills",
            "pdf-tools",
            "--fingerprint",
            fingerprint,
        ],
    );
    let out = cli_ok(
        d,
        &[
            "skill",
            "read",
            "skills",
            "pdf-tools",
            "references/GUIDE.md",
            "--yes",
        ],
    );
    assert!(out.contains("yet another step"), "{out}");
}
