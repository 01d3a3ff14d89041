//! Checking what was read of a skill against its entry: before a read (the entry is valid and
//! lists the file), and after it (size, then digest, then for the `SKILL.md` the frontmatter,
//! field by field). Only content that passed comes back.

use serde_json::Value;

use super::{
    digest, inside, parse_frontmatter, SkillContent, SkillEntry, SkillError, SkillFile,
    MAX_TOTAL_BYTES,
};
use crate::catalog::ResourceContents;
use crate::escape::ServerText;

/// What must hold before `uri` of the skill `entry` is read: the entry is valid and, unless
/// the skill is dynamic, `uri` is in its manifest (whose entry is returned, to verify against).
pub fn before_read<'e>(
    entry: &'e SkillEntry,
    uri: &str,
) -> Result<Option<&'e SkillFile>, SkillError> {
    entry.validate()?;
    match entry.listed() {
        Some(_) => entry
            .file(uri)
            .map(Some)
            .ok_or_else(|| SkillError::NotListed {
                skill: entry.uri.clone(),
                uri: uri.to_owned(),
            }),
        None if uri == entry.uri || inside(entry.root(), uri) => Ok(None),
        None => Err(SkillError::NotListed {
            skill: entry.uri.clone(),
            uri: uri.to_owned(),
        }),
    }
}

/// The contents read for `uri` (after [`before_read`] gave `file`), verified: size and digest
/// against the manifest, and for the `SKILL.md` its frontmatter against the entry's. Only
/// verified content comes back.
pub fn accept(
    entry: &SkillEntry,
    uri: &str,
    file: Option<&SkillFile>,
    contents: &[ResourceContents],
) -> Result<SkillContent, SkillError> {
    let (bytes, mime_type) = content_bytes(uri, contents)?;
    match file {
        Some(f) => verify_file(f, &bytes)?,
        None if bytes.len() as u64 > MAX_TOTAL_BYTES => {
            return Err(SkillError::TooLarge {
                uri: uri.to_owned(),
                files: 1,
                bytes: bytes.len() as u64,
            })
        }
        None => {}
    }
    if uri == entry.uri {
        check_frontmatter(entry, &bytes)?;
    }
    Ok(SkillContent {
        uri: uri.to_owned(),
        mime_type,
        bytes,
        verified: file.is_some(),
    })
}

/// Checks `bytes` against a manifest entry: the size first, then the digest.
pub fn verify_file(file: &SkillFile, bytes: &[u8]) -> Result<(), SkillError> {
    let actual = bytes.len() as u64;
    if actual != file.size {
        return Err(SkillError::SizeMismatch {
            uri: file.uri.clone(),
            expected: file.size,
            actual,
        });
    }
    let actual = digest(bytes);
    if actual != file.digest {
        return Err(SkillError::DigestMismatch {
            uri: file.uri.clone(),
            expected: file.digest.clone(),
            actual,
        });
    }
    Ok(())
}

/// Parses the frontmatter of a `SKILL.md` and compares it with the entry's, field by field
/// (a field missing on one side counts as `null`, numbers compare by value).
pub fn check_frontmatter(entry: &SkillEntry, skill_md: &[u8]) -> Result<(), SkillError> {
    let refuse = |detail: String| SkillError::Frontmatter {
        uri: entry.uri.clone(),
        detail,
    };
    let text = std::str::from_utf8(skill_md).map_err(|_| refuse("it is not UTF-8".into()))?;
    let parsed = parse_frontmatter(text).map_err(refuse)?;
    let mut keys: Vec<&String> = parsed.keys().chain(entry.frontmatter.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let file = parsed.get(k).unwrap_or(&Value::Null);
        let stated = entry.frontmatter.get(k).unwrap_or(&Value::Null);
        if !same(file, stated) {
            return Err(refuse(format!(
                "{} is {} in the file but {} in the entry",
                ServerText(k),
                ServerText(&short(file)),
                ServerText(&short(stated))
            )));
        }
    }
    Ok(())
}

/// The bytes of the one content item of a `resources/read` of `uri`: text as UTF-8, a blob
/// base64-decoded.
pub fn content_bytes(
    uri: &str,
    contents: &[ResourceContents],
) -> Result<(Vec<u8>, Option<String>), SkillError> {
    use base64::Engine as _;
    let none = |reason: &str| SkillError::NoContent {
        uri: uri.to_owned(),
        reason: reason.to_owned(),
    };
    let item = match contents {
        [one] => one,
        [] => return Err(none("the server sent no contents")),
        many => many
            .iter()
            .find(|c| c.uri == uri)
            .ok_or_else(|| none("the server sent several contents, none for this URI"))?,
    };
    let bytes = match (&item.text, &item.blob) {
        (Some(t), None) => t.as_bytes().to_vec(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|_| none("its blob is not base64"))?,
        _ => return Err(none("it has neither text nor a blob, or both")),
    };
    Ok((bytes, item.mime_type.clone()))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}
