//! The allowlist of the isolation hook (TA-03), generated from the TypeScript bindings so it
//! can never drift from the real commands: each command's argument names and JSON kinds.
//! `make bindings` rewrites `ui/isolation/allowlist.js`; a test fails when it is stale.

/// Where the generated allowlist lives, relative to the repository root.
pub const ALLOWLIST_PATH: &str = "ui/isolation/allowlist.js";

/// The JSON kind the hook checks for a TypeScript parameter type.
fn kind(ty: &str, bindings: &str) -> String {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_suffix(" | null") {
        return format!("{}?", kind(inner, bindings));
    }
    match ty {
        "string" => return "string".into(),
        "boolean" => return "boolean".into(),
        "number" => return "number".into(),
        "{ [key in string]: string }" => return "string_map".into(),
        _ => {}
    }
    if ty.starts_with("Channel<") {
        return "channel".into();
    }
    // Lists travel as JSON arrays; the hook must not take them for objects (it did, and dropped
    // every `string[]` argument).
    if let Some(item) = ty.strip_suffix("[]") {
        return if item.trim() == "string" {
            "string_array"
        } else {
            "array"
        }
        .into();
    }
    // A named type: a union of string literals travels as a string, anything else as an object.
    let def = bindings
        .split_once(&format!("export type {ty} = "))
        .map(|(_, rest)| without_comments(rest))
        .and_then(|rest| rest.split_once(';').map(|(def, _)| def.trim().to_owned()))
        .unwrap_or_default();
    let literals = !def.is_empty()
        && def
            .split('|')
            .all(|alt| alt.trim().starts_with('"') && alt.trim().ends_with('"'));
    if literals { "string" } else { "object" }.into()
}

/// `text` without its `/* ... */` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once("/*") {
        out.push_str(before);
        rest = after.split_once("*/").map_or("", |(_, tail)| tail);
    }
    out.push_str(rest);
    out
}

/// Splits `a: T, b: U` at top-level commas.
fn params(list: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let bytes = list.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied().unwrap_or(b',');
        match c {
            b'<' | b'{' | b'(' | b'[' => depth += 1,
            b'>' | b'}' | b')' | b']' => depth -= 1,
            b',' if depth == 0 => {
                let p = list[start..i.min(list.len())].trim();
                if let Some((name, ty)) = p.split_once(':') {
                    out.push((name.trim().to_owned(), ty.trim().to_owned()));
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// Renders the allowlist script from the bindings' text.
pub fn render(bindings: &str) -> String {
    let mut commands = serde_json::Map::new();
    for line in bindings.lines() {
        let Some(at) = line.find("__TAURI_INVOKE") else {
            continue;
        };
        let Some(cmd) = line[at..]
            .split_once("(\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(c, _)| c)
        else {
            continue;
        };
        let sig = line
            .split_once(": (")
            .and_then(|(_, rest)| rest.split_once(") =>"))
            .map(|(s, _)| s)
            .unwrap_or("");
        let mut shape = serde_json::Map::new();
        for (name, ty) in params(sig) {
            shape.insert(name, kind(&ty, bindings).into());
        }
        commands.insert(cmd.to_owned(), shape.into());
    }
    let json = serde_json::to_string_pretty(&commands).unwrap_or_default();
    format!(
        "// Generated from ui/src/ipc/bindings.ts by `make bindings`. Do not edit.\n\
         // Every app command with its argument names and JSON kinds, for the isolation hook.\n\
         self.SWITCHBOARD_IPC_COMMANDS = {json};\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_typescript_types() {
        let b = "export type FormatDto = \n/** Claude (`x`). */\n\"claude\" | \n/** b; c */\"vscode\";\nexport type Req = { kind: \"a\"; x: string } | { kind: \"b\" };\n";
        assert_eq!(kind("string", b), "string");
        assert_eq!(kind("FormatDto | null", b), "string?");
        assert_eq!(kind("Req", b), "object");
        assert_eq!(kind("Channel<ProgressDto_Deserialize>", b), "channel");
        assert_eq!(kind("{ [key in string]: string }", b), "string_map");
        assert_eq!(kind("string[]", b), "string_array");
        assert_eq!(kind("string[] | null", b), "string_array?");
        assert_eq!(kind("Req[]", b), "array");
        assert_eq!(
            params("a: string, m: { [key in string]: string }, c: Channel<X, Y>"),
            vec![
                ("a".to_owned(), "string".to_owned()),
                ("m".to_owned(), "{ [key in string]: string }".to_owned()),
                ("c".to_owned(), "Channel<X, Y>".to_owned()),
            ]
        );
    }

    /// CI fails when the allowlist differs from what the bindings say.
    #[test]
    fn isolation_allowlist_is_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let bindings = std::fs::read_to_string(root.join(crate::ipc::BINDINGS_PATH)).unwrap();
        let want = render(&bindings);
        let path = root.join(ALLOWLIST_PATH);
        if std::env::var_os("SWITCHBOARD_WRITE_BINDINGS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            want == have,
            "{ALLOWLIST_PATH} is stale: run `make bindings` and commit it"
        );
        assert!(want.contains("\"run_tool\""), "{want}");
        assert!(want.contains("\"onProgress\": \"channel\""), "{want}");
    }
}
