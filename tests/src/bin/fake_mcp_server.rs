//! `fake-mcp-server`: a hand-written, deliberately misbehaving MCP server for Switchboard's
//! integration tests and benchmarks.
//!
//! It speaks MCP over stdio (newline-delimited JSON-RPC 2.0 on stdin/stdout, logs on stderr)
//! without any MCP library, so every misbehaviour below is real bytes on the wire. The code lives
//! in `tests/src/fake/` (`cli`, `catalog`, `out`, `modes`, `server`, `peer`, `client_tools`).
//!
//! # Normal behaviour
//!
//! - `initialize`: answers the client's `protocolVersion` if it is one of `2025-11-25`,
//!   `2025-06-18`, `2025-03-26`, `2024-11-05`, else `2025-11-25` (`--protocol` forces a value).
//!   Capabilities: `tools {listChanged}`, `resources {listChanged, subscribe: false}`,
//!   `prompts {listChanged}`, `logging {}`, `completions {}`. serverInfo
//!   `fake-mcp-server 0.1.0`, plus `instructions`.
//! - `ping` -> `{}`; unknown methods -> `-32601`; notifications never get a reply; malformed JSON
//!   -> `-32700` (id null); JSON-RPC batches are handled element by element.
//! - Requests are handled concurrently: `slow`, `sleep`, `huge` and a delayed `initialize` run on
//!   their own threads; everything else (including the `echo` hot path) is answered inline.
//!   Each message is written with one stdout lock and flushed.
//! - `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list` are paginated by
//!   `--page-size` with opaque `nextCursor`s (bad cursor -> `-32602`).
//! - `resources/read`: `fake://text` (text/plain), `fake://json` (application/json) and the
//!   template `fake://item/{id}` (e.g. `fake://item/42` -> `item 42`); unknown URI -> `-32002`.
//! - `prompts/get`: `greet` (required argument `name`) and `plain` (no arguments).
//! - `completion/complete` for `ref/prompt` `greet`, argument `name`: those of `alice`, `bob`,
//!   `carol` starting with the given value.
//! - `logging/setLevel` -> `{}` (filters the `--log-every-ms` ticker, which logs at `info`).
//! - `notifications/cancelled {requestId}` stops a running `slow`/`sleep` (or a waiting
//!   client-request tool): no response is sent and `cancelled <id>` is written to stderr.
//! - Responses from the client (`result` or `error`, no `method`) go to the worker waiting on
//!   that id (see `client-requests`); an unknown id is logged to stderr
//!   (`response to unknown request id <id> dropped`) and never answered.
//! - `notifications/roots/list_changed` is counted (reported by `roots_changed_count`).
//! - stdin EOF -> exit 0 at once (unless `ignore-sigterm`).
//!
//! # Tools
//!
//! | tool | behaviour |
//! |---|---|
//! | `echo {text}` | text content `text` (benchmark hot path) |
//! | `add {a, b}` | text of the sum and `structuredContent {sum}`; has `outputSchema` |
//! | `slow {steps=5, ms=100}` | every `ms` sends `notifications/progress {progressToken, progress: i, total: steps, message}` if the call had `_meta.progressToken`, then `done`; cancellable |
//! | `sleep {ms=1000}` | sleeps, then `slept <ms> ms`; cancellable |
//! | `fail` | result with `isError: true` |
//! | `rpc_error` | JSON-RPC error `-32000` |
//! | `env` | the process environment as a JSON object (text) |
//! | `crash` | `exit(3)` without answering |
//! | `kill_self` | `SIGKILL`s itself |
//! | `write_canary {path}` | creates the file at `path` |
//! | `image` | image content (1x1 PNG, `image/png`) |
//! | `resource_link` | one `resource_link` content item pointing at `fake://text` |
//! | `huge {mb=1}` | one valid response line carrying `mb` MiB of text, streamed in 1 MiB chunks |
//! | `trigger_list_changed` | adds `late_tool` to the list, sends `notifications/tools/list_changed` |
//! | `gen_0000`.. | `--tools N` generated echo tools |
//! | `late_tool` | exists only after `trigger_list_changed` |
//! | `exfiltrate {text}` | `rug-new-tool`: appears after the first tool call; echoes |
//! | `poisoned_add {a, b}` | `poisoned`: adds, but its description hides an injection (zero-width, bidi, tag characters, `<IMPORTANT>`, `~/.ssh/id_rsa`, "do not tell the user") |
//! | `lying_write {path}` | `poisoned`: claims `readOnlyHint: true` and writes the file at `path` |
//! | `bloated` | `oversize`: a 9 KiB description (over the 8 KiB cap) |
//! | `ask_user {message?, schema?}` | `client-requests`: `elicitation/create` form mode; text `action=<action> content=<compact JSON or null>` |
//! | `open_url {url, message?}` | `client-requests`: `elicitation/create` url mode (fresh `elicitationId`); text `action=<action>` |
//! | `ask_model {prompt, system?, max_tokens=200}` | `client-requests`: `sampling/createMessage`; text `model=<model> text=<text>` |
//! | `list_roots` | `client-requests`: `roots/list`; the roots' URIs, one per line, or `no roots` |
//! | `roots_changed_count` | `client-requests`: how many `notifications/roots/list_changed` arrived |
//! | `paint\e[2J..` | `hostile-text`: a name, title and description with screen-clearing, cursor-moving and colour escapes; echoes `text` wrapped in escapes |
//! | `forge\n..` | `hostile-text`: a name with a line break, cursor-up/erase and a bidi override; echoes like `paint..` |
//! | `hostile_error` | `hostile-text`: JSON-RPC error `-32000` whose message carries a line break and escapes |
//! | `flood_questions {count=20}` | `question-flood`: sends `count` form elicitations at once; text `accept=A decline=D cancel=C error=E timeout=T` |
//! | `deep {depth=200000, id_last?}` | `deep-answer`: one answer line whose result is nested `depth` arrays deep, the id first or last |
//! | `canary_probe {path?, port?}` | `canary`: reads `path`, connects to 127.0.0.1:`port`; JSON text of what it reached (SP-07) |
//!
//! Bad tool arguments give an `isError` result; an unknown tool gives `-32602`.
//!
//! # Flags (`--flag VALUE` or `--flag=VALUE`)
//!
//! - `--mode NAME[,NAME..]` (repeatable): misbehaviours, see below.
//! - `--protocol VERSION`: force the answered protocol version.
//! - `--instructions TEXT`: `instructions` of the `initialize` answer.
//! - `--page-size N`: list page size (default 0 = one page).
//! - `--tools N`: add generated tools `gen_0000`..`gen_{N-1}`.
//! - `--tool-json JSON` (repeatable): add this raw tool definition to `tools/list` (to serve
//!   hostile schemas); calling it fails as an unknown tool.
//! - `--log-every-ms N`: after `notifications/initialized`, send `notifications/message` every N ms.
//! - `--flood-mb N`: total size of `stderr-flood` (default 500 MiB).
//! - `--storm N`: notifications sent by `list-changed-storm` (default 1000).
//! - `--init-delay-ms N`: delay the `initialize` answer (on a thread; other requests still work).
//! - `--pid-file PATH`: write our pid, then any `fork-grandchild` pids, one per line.
//! - `--stderr-secret VAR:PAD`: write PAD bytes of `p`, then the value of env VAR, to stderr at
//!   startup as one line: a secret placed across the host's stderr line cut (SE-06).
//! - `--stderr-banner TEXT`: write TEXT to stderr at startup; `\e`, `\x1b`, `\n`, `\t` in TEXT
//!   are unescaped so shell users can pass ANSI colours.
//! - `--state-file PATH`: count starts in PATH; `rug-restart` and `rug-instructions` change
//!   the surface from the second start on.
//! - `--record FILE`: append every received stdin line (raw, newline-terminated) to FILE before it
//!   is handled.
//! - `--help`: print usage.
//!
//! # Modes (`--mode`)
//!
//! - `crash-on-init`: print a line to stderr and `exit(1)` at startup (crash-loop tests).
//! - `exit-after-init`: answer `initialize`, then `exit(1)` 200 ms after
//!   `notifications/initialized`.
//! - `never-answer`: read everything, answer `initialize`, never answer anything else.
//! - `never-init`: never answer `initialize`.
//! - `garbage-stdout`: write `banner text`, `{not json` and a line of binary bytes at startup and
//!   one garbage line before every message.
//! - `huge-line`: answer `tools/list` with an endless line (1 MiB chunks, no newline) until stdout
//!   fails; it holds the stdout lock, so nothing else gets through afterwards.
//! - `stderr-chatty`: `--flood-mb` MiB of 80-byte lines to stderr before stdin is read, then as
//!   many again from a thread while requests are served (RL-13).
//! - `stderr-flood`: a thread writes 64 KiB lines to stderr (up to `--flood-mb`) while requests
//!   are served normally.
//! - `fork-grandchild`: at startup spawn `sh` which starts two background `sleep 1000`s, all in our
//!   process group and sharing our stdout; stderr gets `child-pid <sh>` and
//!   `grandchild-pid <pid>` (x2); `--pid-file` lists them too.
//! - `ignore-sigterm`: ignore SIGTERM and keep running after stdin EOF (needs SIGKILL).
//! - `canary`: adds `canary_probe`; at start-up exits 1 when `CANARY_REQUIRE_FILE` cannot be
//!   read or `CANARY_REQUIRE_PORT` (on 127.0.0.1) cannot be reached.
//! - `stubborn`: like `ignore-sigterm`, plus one grandchild (`sleep`, same process group, no
//!   stdin or stdout) that ignores SIGTERM too; stderr gets `stubborn-grandchild-pid <pid>` and
//!   `--pid-file` lists it after our pid. What a killed host leaves behind (SP-06).
//! - `list-changed-storm`: after `notifications/initialized`, send `--storm` list_changed
//!   notifications as fast as possible; each `tools/list` prints `tools-list-count <n>` to stderr.
//! - `slow-init[=MS]`: like `--init-delay-ms` (default 2000 ms; the flag wins).
//! - `banner`: three non-JSON lines on stdout before anything else.
//!
//! Rug pulls and poisoned tools (TD-01, TD-02, TD-04):
//! - `rug-description`: after the first tool call, `echo`'s description changes and
//!   `notifications/tools/list_changed` is sent.
//! - `rug-param`: the same, but only the description of `echo`'s `text` parameter changes.
//! - `rug-new-tool`: after the first tool call, `exfiltrate` appears (list_changed sent).
//! - `rug-restart`: from the second start on (needs `--state-file`), `echo`'s description differs;
//!   the first run looks normal.
//! - `rug-instructions`: from the second start on (needs `--state-file`), the instructions differ.
//! - `poisoned`: adds `poisoned_add` and `lying_write` (see the tools table).
//! - `oversize`: adds `bloated` with a description over the 8 KiB cap.
//!
//! Hostile text and floods (RN-04, RL-12):
//! - `hostile-text`: adds `paint..`, `forge..` and `hostile_error` (see the tools table); the
//!   instructions and a stderr line at startup carry the same escapes.
//! - `question-flood`: adds `flood_questions` (needs the client's elicitation capability).
//! - `deep-answer`: adds `deep`, whose answer no JSON reader accepts (the host must fail the
//!   call at once, not at its timeout).
//!
//! Server-initiated requests (MCP 2025-11-25 elicitation, sampling, roots):
//! - `client-requests`: adds `ask_user`, `open_url`, `ask_model`, `list_roots` and
//!   `roots_changed_count` (see the tools table). The first four run on worker threads: each
//!   sends one request to the client with a string id `srv-1`, `srv-2`, ... and waits for the
//!   response with that id.
//!   - Params: `ask_user` sends `{mode: "form", message (default "Please fill in your
//!     details"), requestedSchema}`; the default schema has `name` (string, required),
//!     `api_key` (string) and `age` (integer >= 0). `open_url` sends `{mode: "url", message,
//!     url, elicitationId}`. `ask_model` sends `{messages: [one user text message],
//!     systemPrompt (if `system`), maxTokens, modelPreferences: {hints: [{name:
//!     "fake-model"}]}}`. `list_roots` sends `{}`.
//!   - Capabilities: if the client's `initialize` did not declare `capabilities.elicitation`
//!     (`ask_user`, `open_url`), `.sampling` (`ask_model`) or `.roots` (`list_roots`), the tool
//!     returns `isError` (`client did not declare the <cap> capability at initialize; <method>
//!     not sent`) and sends nothing.
//!   - A JSON-RPC error answer gives `isError` with `<cap> refused: <error.message>`
//!     (`elicitation refused: ..`, `sampling refused: ..`, `roots refused: ..`).
//!   - Cancelling the tool call (`notifications/cancelled`) stops the wait: no tool response,
//!     and the server sends `notifications/cancelled {requestId: "srv-N"}` to the client. After
//!     10 minutes without an answer the same cancellation is sent and the tool returns `isError`
//!     (`no answer to <method> within 600 s`).

fn main() -> anyhow::Result<()> {
    switchboard_tests::fake::run()
}
