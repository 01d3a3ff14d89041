use super::*;
use crate::llm::types::{Message, Role};

/// Feeds `deltas` as text then `Done`, returns the output with call ids blanked.
fn run(deltas: &[&str]) -> Vec<StreamEvent> {
    let mut p = PromptToolParser::new();
    let mut out = Vec::new();
    for d in deltas {
        out.extend(p.push(StreamEvent::TextDelta {
            text: (*d).to_owned(),
        }));
    }
    out.extend(p.push(StreamEvent::Done {
        stop: StopReason::EndTurn,
    }));
    out.into_iter()
        .map(|e| match e {
            StreamEvent::ToolCallStart { index, id, name } => {
                assert!(id.starts_with("call_") && id.len() == 17, "{id}");
                StreamEvent::ToolCallStart {
                    index,
                    id: String::new(),
                    name,
                }
            }
            other => other,
        })
        .collect()
}

/// The text of all TextDeltas, concatenated.
fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn calls_of(events: &[StreamEvent]) -> Vec<(usize, String, String)> {
    let mut calls: Vec<(usize, String, String)> = Vec::new();
    for e in events {
        match e {
            StreamEvent::ToolCallStart { index, name, .. } => {
                calls.push((*index, name.clone(), String::new()))
            }
            StreamEvent::ToolCallDelta { index, fragment } => {
                calls
                    .iter_mut()
                    .find(|c| c.0 == *index)
                    .unwrap()
                    .2
                    .push_str(fragment);
            }
            _ => {}
        }
    }
    calls
}

const ANSWER: &str = "Let me check.\n<tool_call>\n{\"name\": \"weather__get\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\nand <tool_call>{\"name\":\"clock__now\"}</tool_call> done";

#[test]
fn calls_are_parsed_at_every_split_point() {
    for i in 0..ANSWER.len() {
        if !ANSWER.is_char_boundary(i) {
            continue;
        }
        let events = run(&[&ANSWER[..i], &ANSWER[i..]]);
        assert_eq!(text_of(&events), "Let me check.\n\nand  done", "split {i}");
        assert_eq!(
            calls_of(&events),
            vec![
                (0, "weather__get".into(), "{\"city\":\"Paris\"}".into()),
                (1, "clock__now".into(), "{}".into()),
            ],
            "split {i}"
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Done {
                stop: StopReason::ToolUse
            })
        );
    }
    // One character at a time.
    let chars: Vec<String> = ANSWER.chars().map(String::from).collect();
    let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(calls_of(&run(&refs)).len(), 2);
}

#[test]
fn malformed_calls_come_through_as_text() {
    let bad = "<tool_call>{\"name\": oops}</tool_call>";
    let events = run(&["before ", bad, " after"]);
    assert_eq!(text_of(&events), format!("before {bad} after"));
    assert!(calls_of(&events).is_empty());
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop: StopReason::EndTurn
        })
    );
    let no_name = "<tool_call>{\"arguments\": {}}</tool_call>";
    assert_eq!(text_of(&run(&[no_name])), no_name);
}

#[test]
fn unclosed_block_at_the_end_is_a_call_if_it_parses_else_text() {
    let events = run(&["<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_"]);
    assert_eq!(calls_of(&events), vec![(0, "a".into(), "{\"x\":1}".into())]);
    let events = run(&["hi <tool_call>{\"name\": \"a\", \"argu"]);
    assert_eq!(text_of(&events), "hi <tool_call>{\"name\": \"a\", \"argu");
    // A held partial tag is released as text.
    assert_eq!(text_of(&run(&["a <tool_ca"])), "a <tool_ca");
}

#[test]
fn fenced_content_and_string_arguments_are_tolerated() {
    let events = run(&[
        "<tool_call>\n```json\n{\"name\": \"a\", \"arguments\": \"{\\\"k\\\": 2}\"}\n```\n</tool_call>",
    ]);
    assert_eq!(calls_of(&events), vec![(0, "a".into(), "{\"k\":2}".into())]);
}

#[test]
fn other_events_pass_through() {
    let mut p = PromptToolParser::new();
    let u = StreamEvent::Usage {
        usage: Default::default(),
    };
    assert_eq!(p.push(u.clone()), vec![u]);
}

#[test]
fn request_encoding_moves_tools_into_the_prompt() {
    let req = ChatRequest {
        model: "llama3.1".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::user_text("weather?"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall {
                    id: "call_1".into(),
                    name: "weather__get".into(),
                    arguments: json!({"city": "Paris"}),
                }],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "call_1".into(),
                    content: vec![
                        ResultPart::Text {
                            text: "sunny".into(),
                        },
                        ResultPart::Image {
                            mime_type: "image/png".into(),
                            data: "iVBO".into(),
                        },
                    ],
                    is_error: true,
                }],
            },
        ],
        tools: vec![ToolSpec {
            name: "weather__get".into(),
            description: "Current weather".into(),
            input_schema: json!({"type": "object"}),
        }],
        max_tokens: None,
        temperature: None,
    };
    let enc = encode_request(req);
    assert!(enc.tools.is_empty());
    let system = enc.system.unwrap();
    assert!(system.starts_with("Be brief.\n\n# Tools"), "{system}");
    assert!(system
        .contains("## weather__get\nCurrent weather\nArguments schema: {\"type\":\"object\"}"));
    assert_eq!(
        enc.messages[1].parts,
        vec![Part::Text {
            text: "<tool_call>\n{\"name\": \"weather__get\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>".into()
        }]
    );
    assert_eq!(
        enc.messages[2].parts,
        vec![
            Part::Text {
                text: "<tool_result name=\"weather__get\" error=\"true\">\nsunny\n[image image/png, attached]\n</tool_result>".into()
            },
            Part::Image {
                mime_type: "image/png".into(),
                data: "iVBO".into()
            }
        ]
    );
    // What the model is told to write parses back.
    let events = run(&[&text_of(&[StreamEvent::TextDelta {
        text: match &enc.messages[1].parts[0] {
            Part::Text { text } => text.clone(),
            _ => unreachable!(),
        },
    }])]);
    assert_eq!(
        calls_of(&events),
        vec![(0, "weather__get".into(), "{\"city\":\"Paris\"}".into())]
    );
}
