//! The conformance client's steps for the Skills scenarios of the official suite
//! (`sep-2640-client-*`, 0.2.0-alpha.12): what a host does with a server's skills, through the
//! core's own checks ([`switchboard_core::skill_data`]), nothing scenario-specific.
//!
//! - every scenario lists the skills (`skills/list`): manifests only, no file is read;
//! - `sep-2640-client-no-prefetch` stops there (nothing is used, so nothing is fetched);
//! - the `sep-2640-client-verify-*` scenarios then load the first skill as a person attaching it
//!   would: the entry is validated, its `SKILL.md` read and checked (size, digest, frontmatter);
//!   only a skill that passes has its other files read, each verified in turn. The suite's
//!   server tampers with the `SKILL.md`, so the expected outcome is a refusal before any other
//!   file is read; the refusal is printed and the run succeeds, since refusing is what a host
//!   must do. A skill that loads is reported the same way (the suite then sees the reads of its
//!   other files and fails the check, as it should).

use anyhow::{Context, Result};
use switchboard_core::mcp::connection::Connection;
use switchboard_core::skill_data::{accept, before_read, SkillContent, SkillEntry, SkillError};

/// The steps for `scenario` on a connected `conn`.
pub async fn run(conn: &Connection, scenario: &str) -> Result<()> {
    let skills = conn.list_skills().await.context("skills/list failed")?;
    let names: Vec<&str> = skills.iter().map(SkillEntry::name).collect();
    eprintln!("conformance-client: skills: {names:?}");
    if !scenario.starts_with("sep-2640-client-verify") {
        return Ok(());
    }
    let Some(skill) = skills.first() else {
        anyhow::bail!("the server lists no skill to load");
    };
    match load(conn, skill).await? {
        Ok(files) => {
            let read: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
            eprintln!("conformance-client: loaded {}: {read:?}", skill.uri);
        }
        Err(refused) => eprintln!("conformance-client: refused {}: {refused}", skill.uri),
    }
    Ok(())
}

/// Loads `skill`: its `SKILL.md` first, verified; then, only if it passed, every other file of
/// its manifest, each verified. The outer error is a failed request, the inner one a refusal.
pub async fn load(
    conn: &Connection,
    skill: &SkillEntry,
) -> Result<std::result::Result<Vec<SkillContent>, SkillError>> {
    let mut uris = vec![skill.uri.clone()];
    uris.extend(
        skill
            .listed()
            .unwrap_or_default()
            .iter()
            .map(|f| f.uri.clone())
            .filter(|u| *u != skill.uri),
    );
    let mut out = Vec::new();
    for uri in uris {
        let file = match before_read(skill, &uri) {
            Ok(f) => f,
            Err(e) => return Ok(Err(e)),
        };
        let contents = conn
            .read_resource(&uri)
            .await
            .with_context(|| format!("resources/read {uri} failed"))?;
        match accept(skill, &uri, file, &contents) {
            Ok(c) => out.push(c),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(out))
}
