//! Runtimes: how each package registry type becomes a local command, and how a remote
//! becomes an HTTP server, with the checks that refuse what cannot be run exactly as
//! published (an unknown registry type, an unpinned version, an identifier that would read as
//! a flag, a secret that would land on a command line or in a URL).

use super::{spec_of, Arg, InputKind, Plan, PlanTransport, Value};
use crate::registry::wire::{cut, Argument, KeyValueInput, Package, Transport};

const NPM: &str = "https://registry.npmjs.org";
const PYPI: &str = "https://pypi.org";

/// A package as a local command, or why it cannot be one.
pub(super) fn stdio_plan(p: &Package) -> Result<Plan, String> {
    if !p.transport.kind.is_empty() && p.transport.kind != "stdio" {
        return Err(format!(
            "this package serves MCP over {} on its own port; only packages that speak stdio can be installed",
            cut(&p.transport.kind, 32)
        ));
    }
    let hint = p.runtime_hint.as_deref();
    let base = p
        .registry_base_url
        .as_deref()
        .map(|b| b.trim_end_matches('/'));
    let id = p.identifier.as_str();
    if id.is_empty()
        || id.starts_with('-')
        || id.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "the package identifier {:?} is not a package name (it is empty, starts with '-' or has spaces)",
            cut(id, 100)
        ));
    }
    let mut env_flags = Vec::new();
    let (command, head, target) = match p.registry_type.as_str() {
        "npm" => {
            want_hint(hint, "npx", "npm")?;
            want_base(base, NPM, "npm")?;
            if !npm_name(id) {
                return Err(format!("{:?} is not an npm package name", cut(id, 100)));
            }
            let v = pinned(p.version.as_deref())?;
            ("npx", vec!["-y".to_owned()], format!("{id}@{v}"))
        }
        "pypi" => {
            want_hint(hint, "uvx", "PyPI")?;
            want_base(base, PYPI, "PyPI")?;
            if !pypi_name(id) {
                return Err(format!("{:?} is not a PyPI package name", cut(id, 100)));
            }
            let v = pinned(p.version.as_deref())?;
            ("uvx", vec![], format!("{id}=={v}"))
        }
        "oci" => {
            want_hint(hint, "docker", "OCI")?;
            let image = oci_image(id, p.version.as_deref())?;
            for e in &p.environment_variables {
                // `docker run -e NAME` passes the variable from docker's own environment,
                // which is the server's configured environment: the value stays out of argv.
                env_flags.push(Arg::Fixed("-e".into()));
                env_flags.push(Arg::Fixed(e.name.clone()));
            }
            (
                "docker",
                vec!["run".into(), "-i".into(), "--rm".into()],
                image,
            )
        }
        other => {
            return Err(format!(
                "packages of registry type {:?} are not supported (npm, pypi and oci are)",
                cut(other, 32)
            ))
        }
    };
    let mut args: Vec<Arg> = head.into_iter().map(Arg::Fixed).collect();
    // npx's own `-y` is already there; a publisher's copy would only repeat it.
    let runtime = p
        .runtime_arguments
        .iter()
        .filter(|a| !(command == "npx" && is_yes_flag(a)));
    for a in runtime {
        args.push(argument(a)?);
    }
    args.extend(env_flags);
    args.push(Arg::Fixed(target));
    for a in &p.package_arguments {
        args.push(argument(a)?);
    }
    let values = key_values(&p.environment_variables, InputKind::Env)?;
    let plan = Plan {
        transport: PlanTransport::Stdio {
            command: command.into(),
            args,
        },
        values,
    };
    Ok(plan)
}

fn is_yes_flag(a: &Argument) -> bool {
    let fixed = |s: &str| {
        (a.kind == "named" && a.name.as_deref() == Some(s) && a.input.value.is_none())
            || (a.kind == "positional" && a.input.value.as_deref() == Some(s))
    };
    fixed("-y") || fixed("--yes")
}

/// A remote as an HTTP server, or why it cannot be one.
pub(super) fn remote_plan(r: &Transport) -> Result<Plan, String> {
    if !matches!(r.kind.as_str(), "streamable-http" | "sse") {
        return Err(format!(
            "remote transport {:?} is not supported (streamable-http and sse are)",
            cut(&r.kind, 32)
        ));
    }
    let Some(url) = &r.url else {
        return Err("the remote has no URL".into());
    };
    let url = Value {
        asked: None,
        fixed: Some((
            url.clone(),
            r.variables
                .iter()
                .map(|(n, i)| spec_of(InputKind::Var, n, i))
                .collect(),
        )),
    };
    if url.secret() {
        return Err("a variable of the URL is marked secret, and a URL is stored and shown in plain text; Switchboard keeps secrets only in headers and environment variables".into());
    }
    Ok(Plan {
        transport: PlanTransport::Http { url },
        values: key_values(&r.headers, InputKind::Header)?,
    })
}

fn key_values(items: &[KeyValueInput], kind: InputKind) -> Result<Vec<(String, Value)>, String> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for kv in items {
        let ok = match kind {
            InputKind::Env => crate::config::is_env_name(&kv.name),
            _ => crate::config::is_header_name(&kv.name),
        };
        if !ok {
            return Err(format!(
                "{:?} is not a valid name for it",
                cut(&kv.name, 100)
            ));
        }
        if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(&kv.name)) {
            return Err(format!("{:?} is listed twice", cut(&kv.name, 100)));
        }
        out.push((kv.name.clone(), Value::of(kind, &kv.name, &kv.input)));
    }
    Ok(out)
}

fn argument(a: &Argument) -> Result<Arg, String> {
    let what = a.name.as_deref().or(a.value_hint.as_deref()).unwrap_or("");
    let secret = a.input.is_secret || a.input.variables.values().any(|v| v.is_secret);
    if secret {
        return Err(format!(
            "argument {:?} is marked secret, and a command line is stored in plain text and visible to every process on this machine; Switchboard keeps secrets only in environment variables and headers",
            cut(what, 100)
        ));
    }
    match a.kind.as_str() {
        "positional" => {
            let name = a.value_hint.as_deref().unwrap_or("value");
            Ok(Arg::Positional(Value::of(InputKind::Arg, name, &a.input)))
        }
        "named" => {
            let Some(flag) = a.name.clone().filter(|f| !f.is_empty()) else {
                return Err("a named argument has no name".into());
            };
            // A flag the publisher left without any value is a switch.
            let takes_value = a.input.value.is_some()
                || a.input.default.is_some()
                || a.value_hint.is_some()
                || a.input.is_required
                || !a.input.choices.is_empty()
                || a.input.format.as_deref().is_some_and(|f| f != "boolean");
            Ok(Arg::Named {
                value: takes_value.then(|| Value::of(InputKind::Arg, &flag, &a.input)),
                flag,
            })
        }
        other => Err(format!("argument type {:?} is unknown", cut(other, 32))),
    }
}

fn want_hint(hint: Option<&str>, want: &str, kind: &str) -> Result<(), String> {
    match hint {
        None => Ok(()),
        Some(h) if h == want => Ok(()),
        Some(h) => Err(format!(
            "the runtime hint {:?} does not match a {kind} package (Switchboard runs those with {want})",
            cut(h, 32)
        )),
    }
}

fn want_base(base: Option<&str>, want: &str, kind: &str) -> Result<(), String> {
    match base {
        None => Ok(()),
        Some(b) if b == want => Ok(()),
        Some(b) => Err(format!(
            "the package comes from {:?}, not the public {kind} registry; other package registries are not supported",
            cut(b, 200)
        )),
    }
}

/// An exact version: no range, tag or wildcard.
fn pinned(v: Option<&str>) -> Result<&str, String> {
    let Some(v) = v.filter(|v| !v.is_empty()) else {
        return Err(
            "the package has no version, and Switchboard only installs pinned versions".into(),
        );
    };
    let exact = v.len() <= 128
        && v.chars().next().is_some_and(|c| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
        && !v
            .split(['.', '-', '+'])
            .any(|part| part.eq_ignore_ascii_case("x"));
    if exact {
        Ok(v)
    } else {
        Err(format!(
            "the version {:?} is not one exact version, and Switchboard only installs pinned versions",
            cut(v, 64)
        ))
    }
}

fn npm_name(id: &str) -> bool {
    let part = |s: &str| {
        !s.is_empty()
            && !s.starts_with('.')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
    };
    let ok = match id.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, name)| part(scope) && part(name)),
        None => part(id),
    };
    ok && id.len() <= 214
}

fn pypi_name(id: &str) -> bool {
    id.len() <= 200
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.chars().last().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// The image reference to run: with its tag or digest, never `latest` or none.
fn oci_image(id: &str, version: Option<&str>) -> Result<String, String> {
    let ok_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '@');
    if id.len() > 512 || !id.chars().all(ok_char) {
        return Err(format!("{:?} is not an image reference", cut(id, 100)));
    }
    let last = id.rsplit('/').next().unwrap_or(id);
    let image = if id.contains('@') || last.contains(':') {
        id.to_owned()
    } else {
        let v = pinned(version)?;
        format!("{id}:{v}")
    };
    let tag = image
        .rsplit('/')
        .next()
        .and_then(|l| l.split_once(':'))
        .map(|(_, t)| t);
    if !image.contains('@') && tag.is_none_or(|t| t.is_empty() || t == "latest") {
        return Err(format!(
            "the image {:?} has no fixed tag, and Switchboard only installs pinned versions",
            cut(&image, 100)
        ));
    }
    Ok(image)
}
