//! Commands as JSON lines: the no-ROS front door of the node.
//!
//! One line is one [`Command`] as JSON, tagged with `"type"`
//! (`{"type":"target","position":[0.2,0,0.15]}`); a bare target object
//! without `"type"` (`{"position":[0.2,0,0.15]}`) is a target too. Any
//! variant the node core takes works here without this file knowing it.
//! A line that is not a command is an [`InputError`] naming the line, the
//! field and the shape expected, with long values cut.

use crate::node::msg::clip;
use crate::node::{Command, TargetMsg};
use serde::Deserialize;
use std::io::BufRead;
use std::sync::mpsc;

/// Longest piece of a line quoted in an error (bytes).
const MAX_QUOTE: usize = 160;

/// What a line looks like, for error messages.
pub const LINE_FORMAT: &str = r#"one JSON object per line: a command {"type":"target","position":[x,y,z],"orientation":[x,y,z,w]} or a bare target {"position":[x,y,z]}"#;

/// An input that is not a command, and where it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {why}")]
pub struct InputError {
    /// `stdin line 3`, `message 12 on /target_pose`.
    pub place: String,
    pub why: String,
}

/// Reads one line as a command.
pub fn parse_line(line: &str) -> Result<Command, String> {
    let value: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| format!("not JSON ({e}); expected {LINE_FORMAT}"))?;
    let kind = match &value {
        serde_json::Value::Object(map) => map.get("type").cloned(),
        other => {
            return Err(format!(
                "a JSON {}, not an object; expected {LINE_FORMAT}",
                json_kind(other)
            ));
        }
    };
    match kind {
        // A target is read field by field, so an error names its field.
        None => target(value).map(Command::Target),
        Some(serde_json::Value::String(t)) if t == "target" => {
            let mut value = value;
            if let Some(map) = value.as_object_mut() {
                map.remove("type");
            }
            target(value).map(Command::Target)
        }
        Some(serde_json::Value::String(t)) if !Command::TYPES.contains(&t.as_str()) => {
            Err(format!(
                "unknown command type `{}`; the types are {}",
                clip(&t, MAX_QUOTE),
                Command::TYPES.join(", ")
            ))
        }
        Some(serde_json::Value::String(_)) => {
            Command::deserialize(value).map_err(|e| clip(&e.to_string(), MAX_QUOTE).into())
        }
        Some(other) => Err(format!(
            "\"type\" is a JSON {}, not a string; the types are {}",
            json_kind(&other),
            Command::TYPES.join(", ")
        )),
    }
}

/// A target object, with the path of a field that is wrong.
fn target(value: serde_json::Value) -> Result<TargetMsg, String> {
    serde_path_to_error::deserialize::<_, TargetMsg>(value).map_err(|e| {
        let path = e.path().to_string();
        let why = clip(&e.inner().to_string(), MAX_QUOTE).into_owned();
        let field = path.split(['[', '.']).next().unwrap_or_default();
        match field_shape(field) {
            Some(shape) => format!("field `{path}`: {why}; expected {shape}"),
            None => format!("{why}; expected {LINE_FORMAT}"),
        }
    })
}

/// What each field of a target holds.
fn field_shape(field: &str) -> Option<&'static str> {
    Some(match field {
        "position" => "\"position\": [x, y, z], three numbers (m)",
        "orientation" => "\"orientation\": [x, y, z, w], four numbers (a quaternion), or null",
        "frame_id" => "\"frame_id\": a string, the base link or empty",
        "stamp" => "\"stamp\": a number (s on the node clock; 0 means now)",
        _ => return None,
    })
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// One line read: its number and the command (`None` for a blank line:
/// a tick with no input), or what is wrong with it.
pub type Line = (usize, Result<Option<Command>, String>);

/// Lines read ahead of the loop. Bounded, so a writer faster than the loop
/// blocks on the pipe instead of growing memory; also the most the loop
/// takes in one tick on the wall clock.
pub const READ_AHEAD: usize = 1024;

/// Reads and parses `input` on its own thread, so a slow or bursty writer
/// never holds up a tick and parsing costs the loop nothing. A blank line
/// is `None`: with one line per tick, a tick with no input (a script's
/// way to wait). The channel closes at the end of the input.
pub fn spawn_reader(input: impl BufRead + Send + 'static) -> mpsc::Receiver<Line> {
    let (tx, rx) = mpsc::sync_channel::<Line>(READ_AHEAD);
    std::thread::spawn(move || {
        for (i, line) in input.lines().enumerate() {
            let item = match line {
                Ok(l) if l.trim().is_empty() => Ok(None),
                Ok(l) => parse_line(&l).map(Some),
                Err(e) => Err(e.to_string()),
            };
            if tx.send((i + 1, item)).is_err() {
                return;
            }
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_bare_targets_are_read() {
        let t = TargetMsg::position([0.2, 0.0, 0.15]);
        let c = parse_line(r#"{"position":[0.2,0.0,0.15]}"#).unwrap();
        assert_eq!(c, Command::Target(t.clone()));
        let c = parse_line(r#"{"type":"target","position":[0.2,0.0,0.15]}"#).unwrap();
        assert_eq!(c, Command::Target(t));
    }

    #[test]
    fn a_bad_line_says_which_field_and_what_shape_is_expected() {
        let e = parse_line("[1,2,3]").unwrap_err();
        assert!(e.contains("array, not an object"), "{e}");
        assert!(e.contains(r#"{"position":[x,y,z]}"#), "{e}");
        let e = parse_line(r#"{"position":[1,2]}"#).unwrap_err();
        assert!(
            e.contains("field `position`") && e.contains("three numbers"),
            "{e}"
        );
        let e = parse_line(r#"{"position":[1,"a",3]}"#).unwrap_err();
        assert!(e.contains("field `position[1]`"), "{e}");
        let e = parse_line(r#"{"type":"target","position":[0,0,0],"orientation":[0,0,1]}"#)
            .unwrap_err();
        assert!(
            e.contains("orientation") && e.contains("four numbers"),
            "{e}"
        );
        let e = parse_line(r#"{"positon":[0,0,0]}"#).unwrap_err();
        assert!(e.contains("positon"), "{e}");
        let e = parse_line(r#"{"type":"targte"}"#).unwrap_err();
        assert!(e.contains("targte"), "{e}");
        let e = parse_line("not json").unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
    }

    #[test]
    fn long_values_are_cut_in_errors() {
        let long = "x".repeat(1_000_000);
        let e = parse_line(&format!(r#"{{"position":[0,0,0],"{long}":1}}"#)).unwrap_err();
        assert!(e.len() < 1000 && e.contains("bytes cut"), "{}", e.len());
        let e = parse_line(&format!(r#"{{"type":"{long}"}}"#)).unwrap_err();
        assert!(e.len() < 1000, "{}", e.len());
    }

    /// An unknown type is named (cut when long) and the list of types is
    /// given whole: it was once cut mid-word ("`gripper`, [... 5 bytes
    /// cut ...]_gripper`").
    #[test]
    fn an_unknown_type_lists_every_type_whole() {
        for line in [r#"{"type":"open"}"#, r#"{"type":7}"#] {
            let e = parse_line(line).unwrap_err();
            let list = e
                .split("the types are ")
                .nth(1)
                .unwrap_or_else(|| panic!("{e}"));
            assert_eq!(list, Command::TYPES.join(", "), "{e}");
        }
        let long = "x".repeat(10_000);
        let e = parse_line(&format!(r#"{{"type":"{long}"}}"#)).unwrap_err();
        assert!(
            e.ends_with(&Command::TYPES.join(", ")) && e.contains("bytes cut"),
            "{e}"
        );
    }
}
