//! The YAML frontmatter of a `SKILL.md`, read into JSON for comparison with a skill's entry.
//!
//! Our own reader of the YAML a frontmatter uses rather than a YAML crate: block mappings
//! (nested by indentation), block sequences of scalars, flow sequences and mappings, plain,
//! single- and double-quoted scalars, literal (`|`) and folded (`>`) block scalars, comments.
//! Plain scalars resolve as YAML's core schema does (`true`, `null`, `~`, integers, floats,
//! else a string). What it does not read (anchors, aliases, tags, multi-line quoted scalars,
//! documents in documents) is an error, and an error refuses the skill: a frontmatter we cannot
//! read is one we cannot compare, and the spec allows no skill to load unchecked.

use serde_json::{Map, Value};

use self::scalar::{quoted, scalar_or_flow};

mod scalar;

/// The frontmatter of `text` (a whole `SKILL.md`): the block between a first line `---` and
/// the next line `---`, read as a mapping.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next() != Some("---") {
        return Err("it does not begin with a --- frontmatter block".into());
    }
    let mut block = Vec::new();
    let mut closed = false;
    for l in lines {
        if l.trim_end_matches([' ', '\t']) == "---" {
            closed = true;
            break;
        }
        block.push(l);
    }
    if !closed {
        return Err("its frontmatter block is not closed with ---".into());
    }
    let lines: Vec<Line> = block
        .iter()
        .map(|l| Line::of(l))
        .collect::<Result<_, _>>()?;
    let mut pos = 0;
    let map = mapping(&lines, &mut pos, 0)?;
    if pos < lines.len() {
        return Err(format!("unexpected indentation at {:?}", lines[pos].text));
    }
    Ok(map)
}

/// One line: its indentation and the rest. Blank lines have an indentation of `usize::MAX`;
/// blank and comment lines are skipped between entries but kept inside block scalars.
#[derive(Debug)]
struct Line<'a> {
    indent: usize,
    text: &'a str,
    /// The line as written, for block scalars (which keep comments and spacing).
    raw: &'a str,
    comment: bool,
}

impl<'a> Line<'a> {
    fn of(raw: &'a str) -> Result<Self, String> {
        let text = raw.trim_start_matches(' ');
        if text.trim().is_empty() {
            return Ok(Self {
                indent: usize::MAX,
                text: "",
                raw,
                comment: false,
            });
        }
        if text.starts_with('\t') {
            return Err("tabs are not allowed for indentation".into());
        }
        Ok(Self {
            indent: raw.len() - text.len(),
            text: text.trim_end(),
            raw,
            comment: text.starts_with('#'),
        })
    }

    fn blank(&self) -> bool {
        self.indent == usize::MAX
    }

    fn skipped(&self) -> bool {
        self.blank() || self.comment
    }
}

fn skip_blank(lines: &[Line], pos: &mut usize) {
    while lines.get(*pos).is_some_and(Line::skipped) {
        *pos += 1;
    }
}

/// A block mapping whose keys sit at `indent`.
fn mapping(lines: &[Line], pos: &mut usize, indent: usize) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    loop {
        skip_blank(lines, pos);
        let Some(line) = lines.get(*pos) else { break };
        if line.indent < indent {
            break;
        }
        if line.indent > indent {
            return Err(format!("unexpected indentation at {:?}", line.text));
        }
        let (key, rest) = split_key(line.text)?;
        *pos += 1;
        let value = value_after(lines, pos, indent, rest)?;
        if map.insert(key.clone(), value).is_some() {
            return Err(format!("the key {key:?} appears twice"));
        }
    }
    Ok(map)
}

/// `key: rest`, the key plain or quoted.
fn split_key(text: &str) -> Result<(String, &str), String> {
    if text.starts_with(['"', '\'']) {
        let (key, used) = quoted(text)?;
        let rest = text[used..].trim_start();
        let rest = rest
            .strip_prefix(':')
            .ok_or_else(|| format!("expected ':' after the key in {text:?}"))?;
        return Ok((key, rest.trim()));
    }
    let at = text
        .match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| text[i + 1..].is_empty() || text[i + 1..].starts_with([' ', '\t']))
        .ok_or_else(|| format!("expected 'key: value', found {text:?}"))?;
    let key = text[..at].trim();
    if key.is_empty() || key.starts_with(['-', '?', '&', '*', '!', '[', '{', '|', '>']) {
        return Err(format!("unsupported key {key:?}"));
    }
    Ok((key.to_owned(), text[at + 1..].trim()))
}

/// The value of a key on a line at `indent`, given what followed the colon.
fn value_after(
    lines: &[Line],
    pos: &mut usize,
    indent: usize,
    rest: &str,
) -> Result<Value, String> {
    let rest = strip_comment(rest);
    if let Some(style) = rest.strip_prefix(['|', '>']) {
        return block_scalar(lines, pos, indent, rest.starts_with('>'), style);
    }
    if !rest.is_empty() {
        let mut text = rest.to_owned();
        // A plain scalar may go on over more-indented lines, folded with spaces.
        if !rest.starts_with(['"', '\'', '[', '{']) {
            while let Some(l) = lines
                .get(*pos)
                .filter(|l| !l.skipped() && l.indent > indent)
            {
                text.push(' ');
                text.push_str(strip_comment(l.text));
                *pos += 1;
            }
        }
        return scalar_or_flow(&text);
    }
    skip_blank(lines, pos);
    match lines.get(*pos) {
        Some(l) if l.indent > indent && (l.text == "-" || l.text.starts_with("- ")) => {
            sequence(lines, pos, l.indent)
        }
        Some(l) if l.indent > indent => Ok(Value::Object(mapping(lines, pos, l.indent)?)),
        // A sequence may sit at its key's own indentation.
        Some(l) if l.indent == indent && (l.text == "-" || l.text.starts_with("- ")) => {
            sequence(lines, pos, indent)
        }
        _ => Ok(Value::Null),
    }
}

/// A block sequence of scalars whose dashes sit at `indent`.
fn sequence(lines: &[Line], pos: &mut usize, indent: usize) -> Result<Value, String> {
    let mut out = Vec::new();
    loop {
        skip_blank(lines, pos);
        let Some(l) = lines.get(*pos) else { break };
        if l.indent != indent || !(l.text == "-" || l.text.starts_with("- ")) {
            break;
        }
        let item = strip_comment(l.text[1..].trim());
        if item.is_empty()
            || item.starts_with("- ")
            || split_key(item).is_ok() && !item.starts_with(['"', '\'', '[', '{'])
        {
            return Err(format!("unsupported sequence item {:?}", l.text));
        }
        out.push(scalar_or_flow(item)?);
        *pos += 1;
    }
    Ok(Value::Array(out))
}

/// A `|` or `>` block scalar, with its chomping indicator.
fn block_scalar(
    lines: &[Line],
    pos: &mut usize,
    indent: usize,
    folded: bool,
    style: &str,
) -> Result<Value, String> {
    let chomp = match style.trim() {
        "" => ' ',
        "-" => '-',
        "+" => '+',
        other => return Err(format!("unsupported block scalar indicator {other:?}")),
    };
    let mut body: Vec<&str> = Vec::new();
    let mut at = None;
    while let Some(l) = lines.get(*pos) {
        if !l.blank() && l.indent <= indent {
            break;
        }
        if !l.blank() && at.is_none() {
            at = Some(l.indent);
        }
        if let Some(a) = at.filter(|_| !l.blank()) {
            if l.indent < a {
                return Err("a block scalar line is less indented than its first".into());
            }
        }
        body.push(l.raw);
        *pos += 1;
    }
    let at = at.unwrap_or(0);
    let lines: Vec<&str> = body
        .iter()
        .map(|r| {
            if r.trim().is_empty() {
                ""
            } else {
                &r[at.min(r.len())..]
            }
        })
        .collect();
    let mut text = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            let prev = lines[i - 1];
            let fold = folded
                && !prev.is_empty()
                && !l.is_empty()
                && !prev.starts_with(' ')
                && !l.starts_with(' ');
            text.push(if fold { ' ' } else { '\n' });
        }
        text.push_str(l);
    }
    let content = text.trim_end_matches('\n');
    let trailing = text.len() - content.len();
    let mut out = content.to_owned();
    match chomp {
        '-' => {}
        '+' => out.push_str(&"\n".repeat(trailing + 1)),
        _ if !content.is_empty() => out.push('\n'),
        _ => {}
    }
    Ok(Value::String(out))
}

/// Drops a ` #` comment from a plain value (not inside quotes or flow collections, where a
/// `#` is read by their own parser and a comment after them is cut here too).
fn strip_comment(s: &str) -> &str {
    let mut quote = None;
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match (quote, c) {
            (None, b'"' | b'\'')
                if i == 0 || b[i - 1] == b' ' || b[i - 1] == b'[' || b[i - 1] == b',' =>
            {
                quote = Some(c)
            }
            (Some(q), c) if c == q => quote = None,
            (None, b'#') if i == 0 || b[i - 1] == b' ' || b[i - 1] == b'\t' => {
                return s[..i].trim_end()
            }
            _ => {}
        }
    }
    s
}
