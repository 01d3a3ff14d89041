//! From a `server.json` to a server the person can approve: which ways to run it are usable,
//! what must be asked, and the exact [`ServerSpec`] with its secrets.
//!
//! What the registry says is outside text: a command is built, never a shell string. The
//! runtime comes from the package's registry type (npm → `npx`, PyPI → `uvx`, OCI → `docker`),
//! the version is the one published and pinned on the command line (`pkg@1.2.3`,
//! `pkg==1.2.3`, `image:tag`), and each argument is one argv element, metacharacters and all.
//! A package whose name could be read as a flag, an unpinned version, a runtime hint that does
//! not match the registry type, an unknown registry type: each is refused with the reason, and
//! nothing is guessed.
//!
//! Secrets (`isSecret`) go only where the keyring can hold them: environment variables and
//! headers, handed to the host as typed secrets so the config file holds a reference. A secret
//! argument or URL variable would have to sit in the config and on a command line any process
//! can read, so such a way to run the server is refused, with that reason.
//!
//! The result is only a proposal: the host adds it like `server add` does, unapproved, and
//! nothing runs or connects before the person approves the exact command (SP-01, SP-10).

use serde::Serialize;

use super::wire::{cut, Input, ServerJson};

mod runtimes;
use super::RegistryError;
use crate::config::{
    HttpSpec, NamedValue, ServerSpec, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use crate::ids::ServerId;
use crate::redact::Secret;
use runtimes::{remote_plan, stdio_plan};

/// Where an input goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// An environment variable of the server process.
    Env,
    /// A command-line argument (named by its flag or its value hint).
    Arg,
    /// A request header of a remote server.
    Header,
    /// A `{variable}` inside a fixed value or a URL.
    Var,
}

/// One value the person is asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InputSpec {
    /// Where it goes.
    pub kind: InputKind,
    /// Its name: the variable, flag, header, value hint or template variable.
    pub name: String,
    /// What the publisher says it is (cut).
    pub description: String,
    /// Whether the server cannot run without it.
    pub required: bool,
    /// Whether it is a secret (asked without echo, kept in the keyring).
    pub secret: bool,
    /// The value used when none is given.
    pub default: Option<String>,
    /// The only values allowed, if any.
    pub choices: Vec<String>,
    /// An example for an empty field.
    pub placeholder: Option<String>,
}

/// One way to run a registry entry: a package or a remote.
#[derive(Clone, Debug, Serialize)]
pub struct InstallOption {
    /// Its index, as `install --option N` takes it.
    pub index: usize,
    /// `npm @scope/pkg 1.2.3`, `remote streamable-http https://...`.
    pub label: String,
    /// Why it cannot be used, or `None` when it can.
    pub refused: Option<String>,
    /// What must or may be asked.
    pub inputs: Vec<InputSpec>,
}

/// The values the person gave, by input; every value is wrapped as a secret so none is
/// printed by accident, and only the ones marked secret go to the keyring.
#[derive(Clone, Debug, Default)]
pub struct Answers(Vec<(InputKind, String, Secret)>);

impl Answers {
    /// No answers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the value of input `name` of `kind`.
    pub fn set(&mut self, kind: InputKind, name: impl Into<String>, value: Secret) {
        let name = name.into();
        self.0.retain(|(k, n, _)| !(*k == kind && *n == name));
        self.0.push((kind, name, value));
    }

    fn get(&self, kind: InputKind, name: &str) -> Option<&Secret> {
        self.0
            .iter()
            .find(|(k, n, _)| *k == kind && n == name)
            .map(|(_, _, v)| v)
    }

    fn names(&self) -> impl Iterator<Item = (InputKind, &str)> {
        self.0.iter().map(|(k, n, _)| (*k, n.as_str()))
    }
}

/// A server ready to be added: the spec (references only) and the typed secrets, by env var
/// or header, that the host stores in the server's own keyring namespace.
#[derive(Debug)]
pub struct Proposal {
    /// The spec.
    pub spec: ServerSpec,
    /// Secret values by field.
    pub secrets: Vec<(String, Secret)>,
}

/// Every way to run `server`, with what each needs or why it is refused.
pub fn options(server: &ServerJson) -> Vec<InstallOption> {
    let mut out = Vec::new();
    for p in &server.packages {
        let label = format!(
            "{} {} {}",
            cut(&p.registry_type, 32),
            cut(&p.identifier, 200),
            p.version.as_deref().map(|v| cut(v, 64)).unwrap_or_default()
        )
        .trim_end()
        .to_owned();
        let (refused, inputs) = match stdio_plan(p) {
            Ok(plan) => (None, plan.inputs()),
            Err(reason) => (Some(reason), Vec::new()),
        };
        out.push(InstallOption {
            index: out.len(),
            label,
            refused,
            inputs,
        });
    }
    for r in &server.remotes {
        let label = format!(
            "remote {} {}",
            cut(&r.kind, 32),
            cut(r.url.as_deref().unwrap_or(""), 300)
        );
        let (refused, inputs) = match remote_plan(r) {
            Ok(plan) => (None, plan.inputs()),
            Err(reason) => (Some(reason), Vec::new()),
        };
        out.push(InstallOption {
            index: out.len(),
            label,
            refused,
            inputs,
        });
    }
    out
}

/// The first usable way to run `server`.
pub fn default_option(server: &ServerJson) -> Option<usize> {
    options(server)
        .iter()
        .find(|o| o.refused.is_none())
        .map(|o| o.index)
}

/// A server name made from a registry name: the part after the slash, cut to what a
/// [`ServerId`] allows.
pub fn suggested_id(registry_name: &str) -> Option<ServerId> {
    let tail = registry_name.rsplit('/').next().unwrap_or(registry_name);
    let clean: String = tail
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(ServerId::MAX_LEN)
        .collect();
    ServerId::new(clean).ok()
}

/// The server `option` of `server` makes with `answers`, named `id`.
pub fn propose(
    server: &ServerJson,
    option: usize,
    id: ServerId,
    answers: &Answers,
) -> Result<Proposal, RegistryError> {
    let refused = |reason: String| RegistryError::Refused {
        name: cut(&server.name, 200),
        reason,
    };
    let npkg = server.packages.len();
    let plan = if option < npkg {
        stdio_plan(&server.packages[option]).map_err(refused)?
    } else if let Some(r) = server.remotes.get(option - npkg) {
        remote_plan(r).map_err(refused)?
    } else {
        return Err(RegistryError::NoSuchOption {
            option,
            count: npkg + server.remotes.len(),
        });
    };
    let known = plan.inputs();
    if let Some((kind, name)) = answers
        .names()
        .find(|(k, n)| !known.iter().any(|i| i.kind == *k && i.name == *n))
    {
        return Err(RegistryError::UnknownInput {
            kind,
            name: cut(name, 100),
        });
    }
    plan.build(id, answers)
}

// ---------------------------------------------------------------------------------------------
// Templates: what the command, env and headers are made of before the answers come in.

/// A value made of fixed text and inputs.
#[derive(Clone, Debug)]
struct Value {
    /// The input the whole value comes from (the person's answer), when not fixed.
    asked: Option<InputSpec>,
    /// The fixed value with its `{variables}`, when the publisher set it.
    fixed: Option<(String, Vec<InputSpec>)>,
}

impl Value {
    fn of(kind: InputKind, name: &str, input: &Input) -> Self {
        match &input.value {
            Some(v) => Self {
                asked: None,
                fixed: Some((
                    v.clone(),
                    input
                        .variables
                        .iter()
                        .map(|(n, i)| spec_of(InputKind::Var, n, i))
                        .collect(),
                )),
            },
            None => Self {
                asked: Some(spec_of(kind, name, input)),
                fixed: None,
            },
        }
    }

    fn inputs(&self) -> Vec<InputSpec> {
        match (&self.asked, &self.fixed) {
            (Some(a), _) => vec![a.clone()],
            (None, Some((_, vars))) => vars.clone(),
            (None, None) => vec![],
        }
    }

    fn secret(&self) -> bool {
        self.inputs().iter().any(|i| i.secret)
    }

    /// The value, or `None` when it is optional and not given.
    fn resolve(&self, answers: &Answers) -> Result<Option<Secret>, RegistryError> {
        if let Some(a) = &self.asked {
            return answer(a, answers);
        }
        let Some((text, vars)) = &self.fixed else {
            return Ok(None);
        };
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}').and_then(|close| {
                let name = &after[..close];
                vars.iter().find(|v| v.name == name).map(|v| (close, v))
            }) {
                Some((close, var)) => {
                    let v = answer(var, answers)?;
                    out.push_str(v.as_ref().map(Secret::expose).unwrap_or(""));
                    rest = &after[close + 1..];
                }
                None => {
                    // An unknown `{name}` stays as written (the schema says so).
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Ok(Some(Secret::new(out)))
    }
}

fn spec_of(kind: InputKind, name: &str, i: &Input) -> InputSpec {
    InputSpec {
        kind,
        name: name.to_owned(),
        description: cut(i.description.as_deref().unwrap_or(""), 500),
        required: i.is_required,
        secret: i.is_secret,
        default: i.default.clone(),
        choices: i.choices.clone(),
        placeholder: i.placeholder.as_deref().map(|p| cut(p, 200)),
    }
}

fn answer(i: &InputSpec, answers: &Answers) -> Result<Option<Secret>, RegistryError> {
    let given = answers
        .get(i.kind, &i.name)
        .filter(|v| !v.expose().is_empty())
        .cloned()
        .or_else(|| i.default.clone().map(Secret::new));
    match given {
        Some(v) if !i.choices.is_empty() && !i.choices.iter().any(|c| c == v.expose()) => {
            Err(RegistryError::NotAChoice {
                name: cut(&i.name, 100),
                choices: i.choices.iter().map(|c| cut(c, 100)).collect(),
            })
        }
        Some(v) => Ok(Some(v)),
        None if i.required => Err(RegistryError::Missing {
            kind: i.kind,
            name: cut(&i.name, 100),
        }),
        None => Ok(None),
    }
}

/// One argv element or a named flag with its value.
#[derive(Clone, Debug)]
enum Arg {
    /// Text the runtime needs (`-y`, `run`, `pkg@1.0.0`).
    Fixed(String),
    /// A positional value.
    Positional(Value),
    /// `--flag` and, when there is one, its value as the next element.
    Named { flag: String, value: Option<Value> },
}

/// Everything needed to build the spec once answers are in.
#[derive(Clone, Debug)]
struct Plan {
    transport: PlanTransport,
    values: Vec<(String, Value)>,
}

#[derive(Clone, Debug)]
enum PlanTransport {
    Stdio { command: String, args: Vec<Arg> },
    Http { url: Value },
}

impl Plan {
    fn inputs(&self) -> Vec<InputSpec> {
        let mut out: Vec<InputSpec> = Vec::new();
        let mut add = |v: &Value| {
            for i in v.inputs() {
                if !out.iter().any(|o| o.kind == i.kind && o.name == i.name) {
                    out.push(i);
                }
            }
        };
        match &self.transport {
            PlanTransport::Stdio { args, .. } => {
                for a in args {
                    match a {
                        Arg::Fixed(_) | Arg::Named { value: None, .. } => {}
                        Arg::Positional(v) | Arg::Named { value: Some(v), .. } => add(v),
                    }
                }
            }
            PlanTransport::Http { url } => add(url),
        }
        for (_, v) in &self.values {
            add(v);
        }
        out
    }

    fn build(&self, id: ServerId, answers: &Answers) -> Result<Proposal, RegistryError> {
        let mut values = Vec::new();
        let mut secrets = Vec::new();
        for (name, v) in &self.values {
            let Some(value) = v.resolve(answers)? else {
                continue;
            };
            if v.secret() {
                secrets.push((name.clone(), value));
                values.push(NamedValue {
                    name: name.clone(),
                    value: ValueSource::Plain(String::new()),
                });
            } else {
                values.push(NamedValue {
                    name: name.clone(),
                    value: ValueSource::Plain(value.expose().to_owned()),
                });
            }
        }
        let transport = match &self.transport {
            PlanTransport::Stdio { command, args } => {
                let mut argv = Vec::new();
                for a in args {
                    match a {
                        Arg::Fixed(s) => argv.push(s.clone()),
                        Arg::Positional(v) => {
                            if let Some(x) = v.resolve(answers)? {
                                argv.push(x.expose().to_owned());
                            }
                        }
                        Arg::Named { flag, value: None } => argv.push(flag.clone()),
                        Arg::Named {
                            flag,
                            value: Some(v),
                        } => {
                            if let Some(x) = v.resolve(answers)? {
                                argv.push(flag.clone());
                                argv.push(x.expose().to_owned());
                            }
                        }
                    }
                }
                TransportSpec::Stdio(StdioSpec {
                    command: command.clone(),
                    args: argv,
                    env: values,
                    cwd: None,
                    sandbox: Default::default(),
                })
            }
            PlanTransport::Http { url } => {
                let url = url
                    .resolve(answers)?
                    .map(|u| u.expose().to_owned())
                    .unwrap_or_default();
                TransportSpec::Http(HttpSpec {
                    url,
                    headers: values,
                    auth: None,
                    allow_insecure: false,
                })
            }
        };
        let spec = ServerSpec {
            id,
            transport,
            enabled: true,
            timeouts: Timeouts::default(),
        };
        // Checked here as well as by the host, so a bad entry is named as the registry's.
        if let TransportSpec::Http(h) = &spec.transport {
            crate::config::validate_url(&h.url).map_err(RegistryError::Spec)?;
        }
        Ok(Proposal { spec, secrets })
    }
}

#[cfg(test)]
mod tests;
