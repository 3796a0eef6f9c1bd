//! A servo file written back (`arm_ik calibrate`): the joints' lines
//! replaced in place, everything else of an existing file kept as it was
//! (its comments, `kind:`, `model:`, the link settings), so a calibration
//! redone changes only what it measured.

use super::JointEntry;
use std::fmt::Write;

/// The text of the servo file for `entries`. With `old` (the existing
/// file's text) each one-line joint entry (`- { joint: NAME, ... }`) is
/// replaced by the new entry of that joint, comments between them stay,
/// entries for joints that had none are added at the end, and the link's
/// `baud:` is set to `baud` (the speed the servos answered at) keeping its
/// comment. A file whose joints are not one-line entries gets its whole
/// `joints:` list rewritten. Without `old`, a new file: `header` (comment
/// lines), `kind`, `model` when given, the link's baud and the joints.
pub fn servo_file(
    old: Option<&str>,
    header: &[String],
    kind: &str,
    model: Option<&str>,
    baud: u32,
    entries: &[JointEntry],
) -> String {
    match old.and_then(|old| rewrite(old, baud, entries)) {
        Some(text) => text,
        None => {
            let mut y = String::new();
            for line in header {
                let _ = writeln!(y, "# {line}");
            }
            let _ = writeln!(y, "kind: {kind}");
            if let Some(model) = model {
                let _ = writeln!(y, "model: {model}");
            }
            let _ = writeln!(y, "link:\n  baud: {baud}\njoints:");
            for e in entries {
                let _ = writeln!(y, "{}", entry_line("  ", e));
            }
            y
        }
    }
}

/// `old` with its joints replaced; `None` when it has no `joints:` line.
fn rewrite(old: &str, baud: u32, entries: &[JointEntry]) -> Option<String> {
    let lines: Vec<&str> = old.lines().collect();
    let start = lines.iter().position(|l| l.trim_end() == "joints:")?;
    let mut out = String::new();
    for line in &lines[..=start] {
        let _ = writeln!(out, "{}", with_baud(line, baud));
    }
    let body = &lines[start + 1..];
    let one_line = body
        .iter()
        .filter(|l| l.trim_start().starts_with('-'))
        .all(|l| entry_name(l).is_some());
    let mut written = vec![false; entries.len()];
    if one_line {
        for line in body {
            let Some((indent, name)) = entry_name(line) else {
                let _ = writeln!(out, "{line}");
                continue;
            };
            if let Some(k) = entries.iter().position(|e| e.joint == name) {
                written[k] = true;
                let new = entry_line(indent, &entries[k]);
                // An entry that says the same keeps its own layout.
                let same =
                    serde_norway::from_str::<JointEntry>(line.trim_start().trim_start_matches('-'))
                        .is_ok_and(|e| entry_line(indent, &e) == new);
                let _ = writeln!(out, "{}", if same { line } else { new.as_str() });
            }
        }
    }
    for (e, _) in entries.iter().zip(&written).filter(|(_, w)| !**w) {
        let _ = writeln!(out, "{}", entry_line("  ", e));
    }
    Some(out)
}

/// A link `baud:` line with the new value, its comment kept.
fn with_baud(line: &str, baud: u32) -> String {
    let t = line.trim_start();
    let Some(rest) = t.strip_prefix("baud:") else {
        return line.to_string();
    };
    let indent = &line[..line.len() - t.len()];
    if indent.is_empty() {
        return line.to_string();
    }
    let value = rest.trim_start();
    let digits = value.len() - value.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut after = &value[digits..];
    let was = &value[..digits];
    // Keep the column of the comment where the spaces before it allow.
    let new = baud.to_string();
    let pad = " ".repeat(was.len().saturating_sub(new.len()));
    let spaces = after.len() - after.trim_start_matches(' ').len();
    let longer = new.len().saturating_sub(was.len());
    after = &after[longer.min(spaces.saturating_sub(1))..];
    format!("{indent}baud: {new}{pad}{after}")
}

/// The indent and joint of a one-line entry (`  - { joint: NAME, ...}`).
fn entry_name(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let indent = &line[..line.len() - t.len()];
    let rest = t.strip_prefix("- {")?.trim_start().strip_prefix("joint:")?;
    let name = rest.trim_start().split([',', '}']).next()?.trim();
    (!name.is_empty() && t.trim_end().ends_with('}')).then_some((indent, name))
}

/// One joint as a flow mapping, in the order of the files in `config/`.
pub fn entry_line(indent: &str, e: &JointEntry) -> String {
    let mut parts = vec![format!("joint: {}", e.joint)];
    for name in e.fields.names() {
        let value = e
            .fields
            .get(name)
            .and_then(|v| serde_norway::to_string(v).ok())
            .unwrap_or_default();
        parts.push(format!("{name}: {}", value.trim()));
    }
    parts.push(format!("output: {}", e.output));
    parts.push(format!("direction: {}", e.direction));
    parts.push(format!("zero: {}", number(e.zero)));
    if let Some(scale) = e.scale {
        parts.push(format!("scale: {}", number(scale)));
    }
    parts.push(format!("range: [{}, {}]", e.range[0], e.range[1]));
    parts.push(format!("speed_limit: {:?}", e.speed_limit));
    if let Some(park) = e.park {
        parts.push(format!("park: {park:?}"));
    }
    format!("{indent}- {{ {} }}", parts.join(", "))
}

/// Whole numbers without a fraction, others as Rust prints them (exact).
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        format!("{v:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servo::calibration::CalibrationFile;

    fn project(name: &str) -> String {
        std::fs::read_to_string(format!("{}/config/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn an_existing_file_keeps_everything_but_the_joints_numbers() {
        let old = project("servos_koch.yaml");
        let file: CalibrationFile = serde_norway::from_str(&old).unwrap();
        let mut entries = file.joints.clone();
        entries[1].zero = 2100.0;
        entries[1].direction = -1.0;
        entries[1].range = [1100, 3000];
        let text = servo_file(Some(&old), &[], "x", None, 57600, &entries);
        let changed: Vec<(&str, &str)> = old
            .lines()
            .zip(text.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(changed.len(), 2, "{changed:#?}");
        let comment = |l: &str| l.find("# LeRobot");
        assert!(changed[0].1.starts_with("  baud: 57600 "), "{changed:?}");
        assert_eq!(
            comment(changed[0].0),
            comment(changed[0].1),
            "the comment stays put"
        );
        assert_eq!(
            changed[1].1,
            "  - { joint: joint_2, model: xl430-w250, output: 2, direction: -1, zero: 2100, range: [1100, 3000], speed_limit: 3.0 }"
        );
        assert_eq!(old.lines().count(), text.lines().count());
        // What it writes reads back as the entries given.
        let back: CalibrationFile = serde_norway::from_str(&text).unwrap();
        assert_eq!(back.joints[1].zero, 2100.0);
        assert_eq!(
            back.joints[5].fields, entries[5].fields,
            "goal_current_ma kept"
        );
        assert_eq!(back.link.baud, Some(57600));
    }

    #[test]
    fn a_new_file_has_the_header_kind_link_and_joints() {
        let old = project("servos_pwm.yaml");
        let file: CalibrationFile = serde_norway::from_str(&old).unwrap();
        let text = servo_file(
            None,
            &["made here".into()],
            "pwm_bridge",
            None,
            115200,
            &file.joints,
        );
        assert!(
            text.starts_with("# made here\nkind: pwm_bridge\nlink:\n  baud: 115200\njoints:\n")
        );
        let back: CalibrationFile = serde_norway::from_str(&text).unwrap();
        assert_eq!(back.joints.len(), file.joints.len());
        assert_eq!(back.joints[0].scale, Some(636.62));
    }
}
