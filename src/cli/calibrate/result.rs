//! After the questions: the new servo file checked, shown against the old
//! one, written in one piece, and optionally tried (each joint to ±0.2 rad
//! and back at the start-up speed).

use super::wizard::{Answer, Wizard};
use anyhow::Context;
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::model::Chain;
use arm_ik::servo::calibration::{Calibration, CalibrationFile, JointEntry, write};
use arm_ik::servo::protocol::Protocol;
use std::path::Path;
use std::time::Duration;

/// The angle each joint is moved to, either way, by the check move (rad).
pub const CHECK_ANGLE: f64 = 0.2;

pub enum Ending {
    /// Written: the summary to print.
    Written(Vec<String>),
    /// Stopped by the person (Ctrl-C), after the file was written or not.
    Stopped { written: bool },
}

#[allow(clippy::too_many_arguments)]
pub fn session(
    w: &mut Wizard,
    path: &Path,
    protocol: &Protocol,
    entries: &[JointEntry],
    old: Option<(&String, &CalibrationFile)>,
    baud: Option<u32>,
    chain: &Chain,
) -> anyhow::Result<Ending> {
    let derived = match w.measure()? {
        Answer::Given(d) => d,
        Answer::Interrupted => return Ok(Ending::Stopped { written: false }),
    };
    let new: Vec<JointEntry> = entries
        .iter()
        .zip(&derived)
        .map(|(e, d)| JointEntry {
            zero: f64::from(d.zero),
            direction: f64::from(d.direction),
            range: d.range,
            ..e.clone()
        })
        .collect();
    let header = [
        format!(
            "Servo calibration of {} ({}), measured on the arm by `arm_ik calibrate`:",
            chain.robot, chain.source
        ),
        "zero at the URDF's zero pose, direction from a move in the joint's positive".into(),
        format!(
            "direction, range the joint's stops less {} rad each side.",
            arm_ik::servo::calibration::measure::STOP_MARGIN_RAD
        ),
    ];
    let text = write::servo_file(
        old.map(|(t, _)| t.as_str()),
        &header,
        protocol.name,
        None,
        baud.unwrap_or(protocol.link.baud),
        &new,
    );
    let source = path.display().to_string();
    Calibration::from_yaml(&text, &source, chain).with_context(|| {
        format!("the calibration measured is not usable; {source} is unchanged")
    })?;
    let mut summary = changes(old.map(|(_, f)| f), &new);
    let ask = format!("Write {source}? (y: write, n: leave it as it is)");
    match w.confirm(&summary, &ask)? {
        Answer::Interrupted => return Ok(Ending::Stopped { written: false }),
        Answer::Given(false) => anyhow::bail!("not written; {source} is unchanged"),
        Answer::Given(true) => {}
    }
    let inputs = Inputs::default();
    output::write_file(path, text.as_bytes(), Existing::Replace, &inputs)
        .with_context(|| format!("cannot write {source}"))?;
    summary.push(format!("wrote {source}"));
    let ask = format!(
        "Check: move each joint to +-{CHECK_ANGLE} rad and back at the start-up speed? (support the arm)"
    );
    match w.confirm(&summary, &ask)? {
        Answer::Interrupted => return Ok(Ending::Stopped { written: true }),
        Answer::Given(true) => {
            if check_move(w, &new) {
                return Ok(Ending::Stopped { written: true });
            }
            summary.push("check move done".into());
        }
        Answer::Given(false) => {}
    }
    Ok(Ending::Written(summary))
}

/// Each joint to +CHECK_ANGLE, -CHECK_ANGLE and back to the zero pose, one
/// after another, with the new numbers; true when stopped.
fn check_move(w: &mut Wizard, new: &[JointEntry]) -> bool {
    let scales: Vec<f64> = new.iter().map(|e| scale_of(w, e)).collect();
    let at = |k: usize, q: f64| {
        let e = &new[k];
        let c = e.zero + e.direction * scales[k] * q;
        (c.round() as i32).clamp(e.range[0], e.range[1])
    };
    let zero: Vec<i32> = (0..new.len()).map(|k| at(k, 0.0)).collect();
    let speed = w.arm.cal.link.startup_speed;
    let timeout = Duration::from_secs_f64(2.0 * CHECK_ANGLE / speed + 2.0);
    let stop = w.stop;
    let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
    w.arm
        .move_to(&zero, Duration::from_secs_f64(10.0), &stopped);
    for k in 0..new.len() {
        for q in [CHECK_ANGLE, -CHECK_ANGLE, 0.0] {
            let mut goal = zero.clone();
            goal[k] = at(k, q);
            w.arm.move_to(&goal, timeout, &stopped);
            if stopped() {
                return true;
            }
        }
    }
    false
}

/// A joint's units per radian: its own scale, else its servo's.
fn scale_of(w: &Wizard, e: &JointEntry) -> f64 {
    e.scale.unwrap_or_else(|| {
        w.joints
            .iter()
            .find(|j| j.name == e.joint)
            .map_or(1.0, |j| j.scale)
    })
}

/// What changed against the old file, a line a joint.
fn changes(old: Option<&CalibrationFile>, new: &[JointEntry]) -> Vec<String> {
    let mut lines = vec!["Calibration (changes against the old file):".to_string()];
    for e in new {
        let before = old.and_then(|o| o.joints.iter().find(|b| b.joint == e.joint));
        let now = format!(
            "zero {}, direction {}, range [{}, {}]",
            e.zero, e.direction, e.range[0], e.range[1]
        );
        let line = match before {
            None => format!("  {}: {now} (new)", e.joint),
            Some(b) if b.zero == e.zero && b.direction == e.direction && b.range == e.range => {
                format!("  {}: {now} (unchanged)", e.joint)
            }
            Some(b) => format!(
                "  {}: {now} (was zero {}, direction {}, range [{}, {}])",
                e.joint, b.zero, b.direction, b.range[0], b.range[1]
            ),
        };
        lines.push(line);
    }
    lines
}
