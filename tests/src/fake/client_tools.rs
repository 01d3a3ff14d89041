//! The tools of `--mode client-requests`. Each one makes the server send a request *to* the
//! client (elicitation, sampling and roots of MCP 2025-11-25) and reports the answer as plain
//! text, so host tests can drive those features with an ordinary `tools/call` and assert on one
//! string instead of decoding a second protocol exchange.
//!
//! The pure parts (tool definitions, request params, rendering answers) are free functions with
//! table tests below. [`call`] is the only part that talks to the client, through
//! [`Peer::request`]; it blocks until the stdin loop delivers the answer, so the server runs it
//! on a worker thread. A tool whose capability the client did not declare at `initialize`
//! refuses without sending anything, as a well-behaved server must; hosts are tested against
//! that server, not against one that ignores capabilities.

use serde_json::{json, Value};

use super::catalog::{empty_schema, object_schema, tool};
use super::peer::{Peer, Waited, CLIENT_REQUEST_TIMEOUT};
use super::server::{text_result, tool_error, CancelToken};

/// Name of the inline tool that reports how many `notifications/roots/list_changed` arrived.
pub const ROOTS_CHANGED_COUNT: &str = "roots_changed_count";

/// `maxTokens` of `ask_model` when `max_tokens` is not given.
pub const DEFAULT_MAX_TOKENS: u64 = 200;

/// `message` of `ask_user` when none is given.
pub const DEFAULT_FORM_MESSAGE: &str = "Please fill in your details";

/// `message` of `open_url` when none is given.
pub const DEFAULT_URL_MESSAGE: &str = "Please open this link to continue";

/// A tool that sends a request to the client and waits for the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientTool {
    /// `elicitation/create`, form mode.
    AskUser,
    /// `elicitation/create`, URL mode.
    OpenUrl,
    /// `sampling/createMessage`.
    AskModel,
    /// `roots/list`.
    ListRoots,
}

/// The form `ask_user` requests when no `schema` is given. `api_key` is there on purpose: the
/// spec forbids asking for secrets in form mode, and hosts may want to test how they react.
pub fn default_form_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "api_key": {"type": "string", "title": "API key", "description": "Your secret API key"},
            "age": {"type": "integer", "minimum": 0},
        },
        "required": ["name"],
    })
}

/// Definitions added to `tools/list` in `client-requests` mode.
pub fn tools() -> Vec<Value> {
    let string = json!({"type": "string"});
    vec![
        tool(
            "ask_user",
            "Ask the user for details (elicitation/create, form mode). \
             Returns `action=<action> content=<JSON or null>`.",
            object_schema(
                json!({"message": string, "schema": {"type": "object"}}),
                &[],
            ),
        ),
        tool(
            "open_url",
            "Ask the user to open a URL (elicitation/create, url mode). Returns `action=<action>`.",
            object_schema(json!({"url": string, "message": string}), &["url"]),
        ),
        tool(
            "ask_model",
            "Ask the client's model (sampling/createMessage). Returns `model=<model> text=<text>`.",
            object_schema(
                json!({"prompt": string, "system": string,
                       "max_tokens": {"type": "integer", "minimum": 1}}),
                &["prompt"],
            ),
        ),
        tool(
            "list_roots",
            "List the client's roots (roots/list). Returns their URIs, one per line.",
            empty_schema(),
        ),
        tool(
            ROOTS_CHANGED_COUNT,
            "How many notifications/roots/list_changed the client has sent.",
            empty_schema(),
        ),
    ]
}

/// `args[key]` as an optional string; present but not a string is an error.
fn opt_str<'a>(tool: &str, args: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{tool}: `{key}` must be a string")),
    }
}

fn req_str<'a>(tool: &str, args: &'a Value, key: &str) -> Result<&'a str, String> {
    opt_str(tool, args, key)?.ok_or_else(|| format!("{tool}: missing string argument `{key}`"))
}

/// The text of a sampling result's `content`: one block, or the text blocks of an array.
fn content_text(content: Option<&Value>) -> String {
    let text = |block: &Value| {
        block
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match content {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(text)
            .collect::<Vec<_>>()
            .join("\n"),
        Some(block) => text(block).unwrap_or_default(),
        None => String::new(),
    }
}

impl ClientTool {
    /// The client tool called `name`, if any (`roots_changed_count` is answered inline).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ask_user" => Some(Self::AskUser),
            "open_url" => Some(Self::OpenUrl),
            "ask_model" => Some(Self::AskModel),
            "list_roots" => Some(Self::ListRoots),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::AskUser => "ask_user",
            Self::OpenUrl => "open_url",
            Self::AskModel => "ask_model",
            Self::ListRoots => "list_roots",
        }
    }

    /// The client capability the request needs (`capabilities.<this>` at `initialize`).
    pub fn capability(self) -> &'static str {
        match self {
            Self::AskUser | Self::OpenUrl => "elicitation",
            Self::AskModel => "sampling",
            Self::ListRoots => "roots",
        }
    }

    /// The JSON-RPC method sent to the client.
    pub fn method(self) -> &'static str {
        match self {
            Self::AskUser | Self::OpenUrl => "elicitation/create",
            Self::AskModel => "sampling/createMessage",
            Self::ListRoots => "roots/list",
        }
    }

    /// The request params for the tool arguments `args`; `elicitation_id` is only called by
    /// `open_url`. An error is the text of an `isError` tool result.
    pub fn params(
        self,
        args: &Value,
        elicitation_id: impl FnOnce() -> String,
    ) -> Result<Value, String> {
        let tool = self.name();
        Ok(match self {
            Self::AskUser => {
                let message = opt_str(tool, args, "message")?.unwrap_or(DEFAULT_FORM_MESSAGE);
                let schema = match args.get("schema") {
                    None | Some(Value::Null) => default_form_schema(),
                    Some(s @ Value::Object(_)) => s.clone(),
                    Some(_) => return Err(format!("{tool}: `schema` must be an object")),
                };
                json!({"mode": "form", "message": message, "requestedSchema": schema})
            }
            Self::OpenUrl => {
                let url = req_str(tool, args, "url")?;
                let message = opt_str(tool, args, "message")?.unwrap_or(DEFAULT_URL_MESSAGE);
                json!({"mode": "url", "message": message, "url": url,
                       "elicitationId": elicitation_id()})
            }
            Self::AskModel => {
                let prompt = req_str(tool, args, "prompt")?;
                let max_tokens = match args.get("max_tokens") {
                    None | Some(Value::Null) => DEFAULT_MAX_TOKENS,
                    Some(v) => v.as_u64().ok_or_else(|| {
                        format!("{tool}: `max_tokens` must be a non-negative integer")
                    })?,
                };
                let mut params = json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                    "maxTokens": max_tokens,
                    "modelPreferences": {"hints": [{"name": "fake-model"}]},
                });
                if let Some(system) = opt_str(tool, args, "system")? {
                    params["systemPrompt"] = json!(system);
                }
                params
            }
            Self::ListRoots => json!({}),
        })
    }

    /// The text reported for the client's successful answer `result`.
    pub fn describe(self, result: &Value) -> String {
        let action = || match result.get("action") {
            Some(Value::String(a)) => a.clone(),
            other => other.unwrap_or(&Value::Null).to_string(),
        };
        match self {
            Self::AskUser => {
                let content = result.get("content").unwrap_or(&Value::Null);
                format!("action={} content={content}", action())
            }
            Self::OpenUrl => format!("action={}", action()),
            Self::AskModel => {
                let model = result.get("model").and_then(Value::as_str).unwrap_or("");
                format!("model={model} text={}", content_text(result.get("content")))
            }
            Self::ListRoots => {
                let roots = result.get("roots").and_then(Value::as_array);
                let uris: Vec<&str> = roots
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.get("uri").and_then(Value::as_str))
                    .collect();
                if uris.is_empty() {
                    "no roots".to_string()
                } else {
                    uris.join("\n")
                }
            }
        }
    }
}

/// Runs `tool` for the tool call `caller`: checks the capability, sends the request with `send`
/// and waits. Returns the tool result, or `None` if the call was cancelled (no response then).
pub fn call(
    tool: ClientTool,
    peer: &Peer,
    send: &dyn Fn(&Value),
    token: &CancelToken,
    caller: &str,
    args: &Value,
) -> Option<Value> {
    let (capability, method) = (tool.capability(), tool.method());
    if !peer.declared(capability) {
        return Some(tool_error(format!(
            "client did not declare the {capability} capability at initialize; {method} not sent"
        )));
    }
    let params = match tool.params(args, || peer.fresh_elicitation_id()) {
        Ok(params) => params,
        Err(msg) => return Some(tool_error(msg)),
    };
    let timeout = CLIENT_REQUEST_TIMEOUT;
    Some(
        match peer.request(send, token, caller, method, params, timeout) {
            Waited::Answered(Ok(result)) => text_result(tool.describe(&result)),
            Waited::Answered(Err(e)) => tool_error(format!("{capability} refused: {}", e.message)),
            Waited::TimedOut => tool_error(format!(
                "no answer to {method} within {} s",
                timeout.as_secs()
            )),
            Waited::Cancelled => return None,
        },
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn params(tool: ClientTool, args: Value) -> Result<Value, String> {
        tool.params(&args, || "e-1".to_string())
    }

    #[test]
    fn names_round_trip_and_definitions_match() {
        let listed: Vec<String> = tools()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        for tool in [
            ClientTool::AskUser,
            ClientTool::OpenUrl,
            ClientTool::AskModel,
            ClientTool::ListRoots,
        ] {
            assert_eq!(ClientTool::from_name(tool.name()), Some(tool));
            assert!(listed.iter().any(|n| n == tool.name()));
        }
        assert!(listed.iter().any(|n| n == ROOTS_CHANGED_COUNT));
        assert_eq!(ClientTool::from_name(ROOTS_CHANGED_COUNT), None);
        assert_eq!(ClientTool::from_name("echo"), None);
    }

    #[test]
    fn elicitation_params() {
        let form = params(ClientTool::AskUser, Value::Null).unwrap();
        assert_eq!(
            form,
            json!({"mode": "form", "message": DEFAULT_FORM_MESSAGE,
                   "requestedSchema": default_form_schema()})
        );
        assert_eq!(form["requestedSchema"]["required"], json!(["name"]));
        let schema = json!({"type": "object", "properties": {"x": {"type": "boolean"}}});
        let custom = params(
            ClientTool::AskUser,
            json!({"message": "hi", "schema": schema}),
        )
        .unwrap();
        assert_eq!(
            (&custom["message"], &custom["requestedSchema"]),
            (&json!("hi"), &schema)
        );
        assert!(params(ClientTool::AskUser, json!({"schema": "no"})).is_err());
        assert!(params(ClientTool::AskUser, json!({"message": 3})).is_err());

        let url = params(
            ClientTool::OpenUrl,
            json!({"url": "https://example.test/a"}),
        )
        .unwrap();
        assert_eq!(
            url,
            json!({"mode": "url", "message": DEFAULT_URL_MESSAGE,
                   "url": "https://example.test/a", "elicitationId": "e-1"})
        );
        assert!(params(ClientTool::OpenUrl, json!({})).is_err());
    }

    #[test]
    fn sampling_and_roots_params() {
        let plain = params(ClientTool::AskModel, json!({"prompt": "hi"})).unwrap();
        assert_eq!(
            plain,
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "maxTokens": 200, "modelPreferences": {"hints": [{"name": "fake-model"}]}})
        );
        let full = params(
            ClientTool::AskModel,
            json!({"prompt": "hi", "system": "be brief", "max_tokens": 5}),
        )
        .unwrap();
        assert_eq!(
            (&full["systemPrompt"], &full["maxTokens"]),
            (&json!("be brief"), &json!(5))
        );
        assert!(params(ClientTool::AskModel, json!({})).is_err());
        assert!(params(
            ClientTool::AskModel,
            json!({"prompt": "p", "max_tokens": -1})
        )
        .is_err());
        assert_eq!(
            params(ClientTool::ListRoots, Value::Null).unwrap(),
            json!({})
        );
    }

    #[test]
    fn describing_answers() {
        let cases = [
            (
                ClientTool::AskUser,
                json!({"action": "accept", "content": {"name": "Ada", "age": 36}}),
                r#"action=accept content={"age":36,"name":"Ada"}"#,
            ),
            (
                ClientTool::AskUser,
                json!({"action": "decline"}),
                "action=decline content=null",
            ),
            (
                ClientTool::OpenUrl,
                json!({"action": "cancel"}),
                "action=cancel",
            ),
            (ClientTool::OpenUrl, json!({}), "action=null"),
            (
                ClientTool::AskModel,
                json!({"role": "assistant", "model": "m1", "stopReason": "endTurn",
                       "content": {"type": "text", "text": "hello"}}),
                "model=m1 text=hello",
            ),
            (
                ClientTool::AskModel,
                json!({"model": "m2", "content": [{"type": "text", "text": "a"},
                                                   {"type": "image", "data": ""},
                                                   {"type": "text", "text": "b"}]}),
                "model=m2 text=a\nb",
            ),
            (
                ClientTool::ListRoots,
                json!({"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}),
                "file:///a\nfile:///b",
            ),
            (ClientTool::ListRoots, json!({"roots": []}), "no roots"),
        ];
        for (tool, result, want) in cases {
            assert_eq!(tool.describe(&result), want, "{tool:?} {result}");
        }
    }

    #[test]
    fn missing_capability_refuses_without_sending() {
        let peer = Peer::default();
        peer.set_capabilities(Some(&json!({"roots": {}})));
        let send = |_: &Value| panic!("nothing must be sent");
        let token = CancelToken::default();
        let got = call(ClientTool::AskUser, &peer, &send, &token, "1", &Value::Null).unwrap();
        assert_eq!(got["isError"], true);
        assert!(got["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("elicitation capability"));
    }
}
