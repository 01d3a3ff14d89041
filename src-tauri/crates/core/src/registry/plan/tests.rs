use super::*;
use crate::registry::wire::parse_entry;
use serde_json::json;

fn server(v: serde_json::Value) -> ServerJson {
    parse_entry(json!({"server": v})).unwrap().server
}

fn id() -> ServerId {
    ServerId::new("s").unwrap()
}

fn argv(p: &Proposal) -> (String, Vec<String>) {
    match &p.spec.transport {
        TransportSpec::Stdio(s) => (s.command.clone(), s.args.clone()),
        TransportSpec::Http(_) => panic!("not stdio"),
    }
}

#[test]
fn npm_pins_the_version_and_keeps_metacharacters_in_one_element() {
    let s = server(json!({
        "name": "io.x/a", "version": "1.2.3",
        "packages": [{"registryType": "npm", "identifier": "@x/srv", "version": "1.2.3",
            "runtimeHint": "npx", "transport": {"type": "stdio"},
            "runtimeArguments": [{"type": "named", "name": "-y"}],
            "packageArguments": [
                {"type": "positional", "value": "; rm -rf ~ && $(id) `x` | y > z"},
                {"type": "named", "name": "--root", "valueHint": "root", "isRequired": true},
                {"type": "named", "name": "--verbose"}
            ],
            "environmentVariables": [
                {"name": "API_KEY", "isSecret": true, "isRequired": true},
                {"name": "MODE", "default": "fast"}
            ]}]
    }));
    let mut a = Answers::new();
    a.set(InputKind::Arg, "--root", Secret::new("/tmp/a b"));
    a.set(InputKind::Env, "API_KEY", Secret::new("k-CANARY"));
    let p = propose(&s, 0, id(), &a).unwrap();
    let (cmd, args) = argv(&p);
    assert_eq!(cmd, "npx");
    assert_eq!(
        args,
        [
            "-y",
            "@x/srv@1.2.3",
            "; rm -rf ~ && $(id) `x` | y > z",
            "--root",
            "/tmp/a b",
            "--verbose"
        ]
    );
    assert_eq!(p.secrets.len(), 1);
    assert_eq!(p.secrets[0].0, "API_KEY");
    let text = serde_json::to_string(&p.spec).unwrap();
    assert!(!text.contains("CANARY"), "{text}");
    assert!(text.contains("fast"));
}

#[test]
fn pypi_and_oci() {
    let s = server(json!({"name": "io.x/a", "packages": [
        {"registryType": "pypi", "identifier": "mcp-x", "version": "0.4.1", "transport": {"type": "stdio"}},
        {"registryType": "oci", "identifier": "ghcr.io/x/y:1.0", "transport": {"type": "stdio"},
         "environmentVariables": [{"name": "TOKEN", "isSecret": true}]},
        {"registryType": "oci", "identifier": "docker.io/x/y", "version": "2.0.0", "transport": {"type": "stdio"}}
    ]}));
    let (c, a) = argv(&propose(&s, 0, id(), &Answers::new()).unwrap());
    assert_eq!((c.as_str(), a), ("uvx", vec!["mcp-x==0.4.1".to_owned()]));
    let mut ans = Answers::new();
    ans.set(InputKind::Env, "TOKEN", Secret::new("t"));
    let (c, a) = argv(&propose(&s, 1, id(), &ans).unwrap());
    assert_eq!(c, "docker");
    assert_eq!(a, ["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/x/y:1.0"]);
    let (_, a) = argv(&propose(&s, 2, id(), &Answers::new()).unwrap());
    assert_eq!(a.last().unwrap(), "docker.io/x/y:2.0.0");
}

#[test]
fn refusals_name_their_reason() {
    let s = server(json!({"name": "io.x/a", "packages": [
        {"registryType": "cargo", "identifier": "x", "version": "1.0.0"},
        {"registryType": "npm", "identifier": "x", "version": "^1.0.0"},
        {"registryType": "npm", "identifier": "--eval=evil", "version": "1.0.0"},
        {"registryType": "npm", "identifier": "x", "version": "1.0.0", "runtimeHint": "bash"},
        {"registryType": "oci", "identifier": "x/y:latest"},
        {"registryType": "npm", "identifier": "x", "version": "1.0.0",
         "packageArguments": [{"type": "named", "name": "--token", "isSecret": true}]},
        {"registryType": "npm", "identifier": "x", "version": "1.0.0", "transport": {"type": "streamable-http", "url": "http://localhost:1"}},
        {"registryType": "npm", "identifier": "x", "version": "1.0.0", "registryBaseUrl": "https://evil.example"}
    ]}));
    let opts = options(&s);
    assert_eq!(opts.len(), 8);
    for o in &opts {
        assert!(o.refused.is_some(), "{o:?}");
    }
    assert!(opts[0].refused.as_ref().unwrap().contains("not supported"));
    assert!(opts[1].refused.as_ref().unwrap().contains("pinned"));
    assert!(opts[5].refused.as_ref().unwrap().contains("secret"));
    assert_eq!(default_option(&s), None);
    assert!(matches!(
        propose(&s, 0, id(), &Answers::new()),
        Err(RegistryError::Refused { .. })
    ));
}

#[test]
fn remotes_keep_headers_and_substitute_variables() {
    let s = server(json!({"name": "io.x/a", "remotes": [{
    "type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
    "variables": {"tenant": {"isRequired": true}},
    "headers": [
        {"name": "Authorization", "value": "Bearer {token}", "variables": {"token": {"isSecret": true, "isRequired": true}}},
        {"name": "X-Plan", "value": "pro"}
    ]}]}));
    let opts = options(&s);
    let names: Vec<&str> = opts[0].inputs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["tenant", "token"]);
    let mut a = Answers::new();
    a.set(InputKind::Var, "tenant", Secret::new("acme"));
    assert!(matches!(
        propose(&s, 0, id(), &a),
        Err(RegistryError::Missing { .. })
    ));
    a.set(InputKind::Var, "token", Secret::new("tok-CANARY"));
    let p = propose(&s, 0, id(), &a).unwrap();
    let TransportSpec::Http(h) = &p.spec.transport else {
        panic!()
    };
    assert_eq!(h.url, "https://acme.example.com/mcp");
    assert_eq!(h.headers.len(), 2);
    assert_eq!(p.secrets[0].0, "Authorization");
    assert_eq!(p.secrets[0].1.expose(), "Bearer tok-CANARY");
    assert!(!serde_json::to_string(&p.spec).unwrap().contains("CANARY"));
}

#[test]
fn unknown_answers_and_bad_choices_are_refused() {
    let s = server(
        json!({"name": "io.x/a", "packages": [{"registryType": "npm", "identifier": "x", "version": "1.0.0",
        "environmentVariables": [{"name": "LEVEL", "choices": ["a", "b"]}]}]}),
    );
    let mut a = Answers::new();
    a.set(InputKind::Env, "NOPE", Secret::new("x"));
    assert!(matches!(
        propose(&s, 0, id(), &a),
        Err(RegistryError::UnknownInput { .. })
    ));
    let mut a = Answers::new();
    a.set(InputKind::Env, "LEVEL", Secret::new("c"));
    assert!(matches!(
        propose(&s, 0, id(), &a),
        Err(RegistryError::NotAChoice { .. })
    ));
}

#[test]
fn suggested_ids() {
    assert_eq!(
        suggested_id("io.github.x/weather").unwrap().as_str(),
        "weather"
    );
    assert_eq!(suggested_id("a/_x y").unwrap().as_str(), "x-y");
    assert!(suggested_id("a/___").is_none());
}
