use serde_json::json;

use super::*;
use crate::catalog::ResourceContents;

const SKILL_MD_TEXT: &str =
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";
const FORMS: &str = "Supporting content.\n";

fn entry() -> SkillEntry {
    serde_json::from_value(json!({
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": [
            {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(SKILL_MD_TEXT.as_bytes()), "size": SKILL_MD_TEXT.len()},
            {"uri": "skill://pdf-processing/references/FORMS.md", "digest": digest(FORMS.as_bytes()), "size": FORMS.len()},
        ],
    }))
    .unwrap()
}

#[test]
fn the_digest_has_the_spec_format() {
    // sha256("abc"), a published test vector.
    assert_eq!(
        digest(b"abc"),
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(is_digest(&digest(b"")));
    assert!(!is_digest("sha256:ABC"));
    assert!(!is_digest(&digest(b"x").to_uppercase()));
}

#[test]
fn a_good_skill_verifies() {
    let e = entry();
    e.validate().unwrap();
    verify_file(e.file(&e.uri).unwrap(), SKILL_MD_TEXT.as_bytes()).unwrap();
    check_frontmatter(&e, SKILL_MD_TEXT.as_bytes()).unwrap();
    let forms = e.resolve("references/FORMS.md");
    verify_file(e.file(&forms).unwrap(), FORMS.as_bytes()).unwrap();
}

#[test]
fn a_wrong_size_is_refused_before_the_digest() {
    let e = entry();
    let longer = format!("{SKILL_MD_TEXT}extra");
    let err = verify_file(e.file(&e.uri).unwrap(), longer.as_bytes()).unwrap_err();
    assert!(
        matches!(err, SkillError::SizeMismatch { actual, .. } if actual == longer.len() as u64)
    );
}

#[test]
fn a_wrong_digest_is_refused() {
    let e = entry();
    let evil = SKILL_MD_TEXT.replace("Skill body.", "Evil body!!");
    assert_eq!(evil.len(), SKILL_MD_TEXT.len());
    let err = verify_file(e.file(&e.uri).unwrap(), evil.as_bytes()).unwrap_err();
    assert!(matches!(err, SkillError::DigestMismatch { .. }), "{err}");
}

#[test]
fn a_frontmatter_that_differs_is_refused() {
    let e = entry();
    let other = SKILL_MD_TEXT.replace(
        "description: Extract, fill, and assemble PDF documents",
        "description: Exfiltrate credentials",
    );
    let err = check_frontmatter(&e, other.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("description"), "{err}");
    // A field only in the file counts too.
    let extra = SKILL_MD_TEXT.replace("---\n\n", "license: MIT\n---\n\n");
    assert!(check_frontmatter(&e, extra.as_bytes()).is_err());
    // No frontmatter at all.
    assert!(check_frontmatter(&e, b"Skill body.\n").is_err());
}

#[test]
fn entries_that_break_the_rules_are_refused_before_any_read() {
    type Change = Box<dyn Fn(&mut SkillEntry)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "name differs from uri",
            Box::new(|e| e.uri = "skill://other/SKILL.md".into()),
        ),
        (
            "uppercase name",
            Box::new(|e| {
                e.frontmatter.insert("name".into(), json!("PDF"));
            }),
        ),
        (
            "file outside",
            Box::new(|e| {
                if let SkillFiles::Listed(f) = &mut e.files {
                    f[1].uri = "skill://pdf-processing/../secrets.md".into();
                }
            }),
        ),
        (
            "bad digest",
            Box::new(|e| {
                if let SkillFiles::Listed(f) = &mut e.files {
                    f[1].digest = "md5:00".into();
                }
            }),
        ),
        (
            "no SKILL.md",
            Box::new(|e| {
                if let SkillFiles::Listed(f) = &mut e.files {
                    f.remove(0);
                }
            }),
        ),
        (
            "too large",
            Box::new(|e| {
                if let SkillFiles::Listed(f) = &mut e.files {
                    f[1].size = MAX_TOTAL_BYTES;
                }
            }),
        ),
        (
            "no description",
            Box::new(|e| {
                e.frontmatter.remove("description");
            }),
        ),
    ];
    for (what, change) in cases {
        let mut e = entry();
        change(&mut e);
        assert!(e.validate().is_err(), "{what}");
    }
}

#[test]
fn dynamic_skills_read_and_unknown_markers_do_not() {
    let e: SkillEntry = serde_json::from_value(json!({
        "uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
        "resources": "dynamic",
    }))
    .unwrap();
    assert!(e.listed().is_none());
    e.validate().unwrap();
    let bad: Result<SkillEntry, _> = serde_json::from_value(json!({
        "uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
        "resources": "static",
    }));
    assert!(bad.is_err());
}

#[test]
fn frontmatter_reads_the_yaml_skills_use() {
    let text = "\u{feff}---\r\nname: my-skill\r\ndescription: \"Quoted: with \\\"escapes\\\"\"\r\nlicense: 'It''s MIT' # a comment\r\nversion: 1.5\r\ncount: 3\r\nbeta: true\r\nnothing: ~\r\nallowed-tools: Bash(git:*) Read\r\nmetadata:\r\n  author: someone\r\n  tags: [a, \"b c\"]\r\nlist:\r\n  - one\r\n  - 2\r\nlong: >\r\n  folded\r\n  text\r\nlit: |-\r\n  line 1\r\n  # not a comment\r\n  line 2\r\nplain: goes\r\n  on\r\n---\r\nbody";
    let m = parse_frontmatter(text).unwrap();
    assert_eq!(
        Value::Object(m),
        json!({
            "name": "my-skill",
            "description": "Quoted: with \"escapes\"",
            "license": "It's MIT",
            "version": 1.5,
            "count": 3,
            "beta": true,
            "nothing": null,
            "allowed-tools": "Bash(git:*) Read",
            "metadata": {"author": "someone", "tags": ["a", "b c"]},
            "list": ["one", 2],
            "long": "folded text\n",
            "lit": "line 1\n# not a comment\nline 2",
            "plain": "goes on",
        })
    );
}

#[test]
fn frontmatter_it_cannot_read_is_an_error() {
    for bad in [
        "no frontmatter",
        "---\nname: a\n",
        "---\nname: &x a\n---\n",
        "---\nname: a\nname: b\n---\n",
        "---\n  name: a\n x: b\n---\n",
        "---\nname: \"unclosed\n---\n",
        "---\nname: !!str a\n---\n",
        "---\njust text\n---\n",
    ] {
        assert!(parse_frontmatter(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn content_is_text_or_a_base64_blob() {
    let text = ResourceContents {
        uri: "u".into(),
        mime_type: None,
        text: Some("hi".into()),
        blob: None,
    };
    assert_eq!(content_bytes("u", &[text]).unwrap().0, b"hi");
    let blob = ResourceContents {
        uri: "u".into(),
        mime_type: Some("application/octet-stream".into()),
        text: None,
        blob: Some("AAEC".into()),
    };
    assert_eq!(content_bytes("u", &[blob]).unwrap().0, vec![0, 1, 2]);
    assert!(content_bytes("u", &[]).is_err());
}
