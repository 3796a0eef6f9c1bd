//! `arm_ik calibrate`: a new arm's servo file made by showing the arm its
//! poses. Bus servos (Feetech, Dynamixel) are found on the bus, relaxed
//! and read while the person puts the arm at the URDF's zero pose and
//! moves each joint in its positive direction and to its stops; hobby
//! servos on the firmware bridge are stepped pulse by pulse to the same
//! poses. The servo file is written whole or not at all, keeping what an
//! existing one says besides the joints' numbers; an optional check move
//! and a summary of what changed end it.

mod hardware;
mod pose;
mod result;
mod screen;
mod wizard;

use super::robot::RobotArgs;
use super::stop::Stop;
use anyhow::{Context, bail};
use arm_ik::model::Chain;
use arm_ik::servo::calibration::{CalibrationFile, JointEntry};
use arm_ik::servo::joint::Fields;
use arm_ik::servo::link::{LinkFile, OnExit};
use arm_ik::servo::protocol::Protocol;
use arm_ik::servo::registry;
use hardware::{Arm, PWM_SCALE};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use wizard::{Joint, Wizard};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    robot: RobotArgs,
    /// The servo file to write. If it exists, its protocol, servo ids,
    /// models, scales, speed limits and link settings are kept (and its
    /// comments), and the summary says what changed.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Serial port of the bus adapter or the firmware bridge.
    #[arg(long)]
    port: String,
    /// The servos: feetech, dynamixel or pwm_bridge (default: the
    /// existing file's `kind:`).
    #[arg(long, value_parser = parse_kind)]
    kind: Option<&'static Protocol>,
    /// Servo ids (bus) or channels (bridge) of the joints, chain order then
    /// the gripper (default: the existing file's; else the ids found, in
    /// order, or channels 0, 1, ...).
    #[arg(long, value_delimiter = ',')]
    outputs: Option<Vec<u16>>,
    /// What Ctrl-C leaves the servos doing: hold where they are, or relax
    /// (limp: support the arm).
    #[arg(long, value_name = "hold|relax", default_value = "hold", value_parser = parse_on_exit)]
    on_stop: OnExit,
    /// Plain line prompts even on a terminal (they are used anyway when
    /// stdout is not one).
    #[arg(long)]
    plain: bool,
}

fn parse_kind(name: &str) -> Result<&'static Protocol, String> {
    registry::find(name).ok_or_else(|| {
        format!(
            "unknown servo kind '{name}' (one of {})",
            registry::names().join(", ")
        )
    })
}

fn parse_on_exit(s: &str) -> Result<OnExit, String> {
    match s {
        "hold" => Ok(OnExit::Hold),
        "relax" => Ok(OnExit::Relax),
        _ => Err(format!("'{s}': hold or relax")),
    }
}

/// What an existing servo file said.
struct Old {
    text: String,
    file: CalibrationFile,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let old = read_old(&a.config)?;
    let protocol = protocol_of(&a, old.as_ref())?;
    let mut link = old
        .as_ref()
        .map(|o| o.file.link.clone())
        .unwrap_or_default();
    let baud = link.baud.unwrap_or(protocol.link.baud);
    let stop = Stop::on_signals()?;
    let found = match protocol.scan {
        Some(_) => Some(hardware::scan(protocol, &a.port, baud)?),
        None => None,
    };
    link.baud = Some(found.as_ref().map_or(baud, |f| f.baud));
    let entries = entries(&a, &chain, protocol, old.as_ref(), found.as_ref())?;
    let (mut arm, joints) = start_arm(&a, &chain, protocol, &link, &entries, old.as_ref())?;
    let tui = std::io::stdout().is_terminal() && std::io::stdin().is_terminal() && !a.plain;
    let mut ui: Box<dyn screen::Ui> = if tui {
        Box::new(screen::Tui::new()?)
    } else {
        Box::new(screen::Plain::new())
    };
    let title = format!(
        " arm_ik calibrate: {} on {} ({}, {} baud) ",
        chain.robot,
        a.port,
        protocol.name,
        link.baud.unwrap_or(baud)
    );
    let outcome = {
        let ready = arm.wait_ready(std::time::Duration::from_secs(5), &|| stop.requested());
        let mut w = Wizard::new(&mut arm, ui.as_mut(), stop.flag(), joints, title);
        ready.and_then(|()| {
            result::session(
                &mut w,
                &a.config,
                protocol,
                &entries,
                old.as_ref().map(|o| (&o.text, &o.file)),
                link.baud,
                &chain,
            )
        })
    };
    drop(ui);
    arm.close();
    finish(outcome?, &stop)
}

/// The servos' protocol: `--kind`, else the existing file's.
fn protocol_of(a: &Args, old: Option<&Old>) -> anyhow::Result<&'static Protocol> {
    Ok(match (a.kind, old) {
        (Some(p), _) => p,
        (None, Some(o)) => registry::find(&o.file.kind).with_context(|| {
            format!(
                "{}: kind '{}' is not a servo protocol",
                a.config.display(),
                o.file.kind
            )
        })?,
        (None, None) => bail!(
            "{} does not exist yet: say which servos with --kind ({})",
            a.config.display(),
            registry::names().join(", ")
        ),
    })
}

/// The servos driven with the provisional calibration (relaxed, or
/// pulsing the old zeros), and the wizard's view of each joint.
fn start_arm(
    a: &Args,
    chain: &Chain,
    protocol: &Protocol,
    link: &LinkFile,
    entries: &[JointEntry],
    old: Option<&Old>,
) -> anyhow::Result<(Arm, Vec<Joint>)> {
    let mut provisional_link = LinkFile {
        on_exit: Some(a.on_stop),
        torque_off_on_close: None,
        ..link.clone()
    };
    provisional_link.startup_speed.get_or_insert(0.3);
    let file_fields = old.map(|o| o.file.fields.clone()).unwrap_or_default();
    let cal = hardware::provisional(
        chain,
        protocol.name,
        &provisional_link,
        &file_fields,
        entries,
    )?;
    let joints = joints(chain, &cal, entries, old);
    let held = entries
        .iter()
        .map(|e| match old_entry(old, &e.joint) {
            Some(o) => o.zero.round() as i32,
            None => (e.range[0] + e.range[1]) / 2,
        })
        .collect();
    Ok((Arm::start(&a.port, cal, held)?, joints))
}

/// The summary printed, or the stop reported.
fn finish(ending: result::Ending, stop: &Stop) -> anyhow::Result<ExitCode> {
    match ending {
        result::Ending::Written(summary) => {
            for line in summary {
                outln!("{line}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        result::Ending::Stopped { written } => {
            // Ctrl-C as a key (raw mode sends no signal), or the end of
            // the plain input: reported as the SIGINT the person meant.
            if !stop.requested() {
                stop.interrupt();
            }
            let what = if written {
                "the servo file was written"
            } else {
                "the servo file was not changed"
            };
            Ok(stop.report("calibrate", what))
        }
    }
}

fn read_old(path: &std::path::Path) -> anyhow::Result<Option<Old>> {
    if !path.exists() {
        return Ok(None);
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: CalibrationFile = serde_norway::from_str(&text)
        .with_context(|| format!("{}: not a servo file", path.display()))?;
    Ok(Some(Old { text, file }))
}

fn old_entry<'a>(old: Option<&'a Old>, joint: &str) -> Option<&'a JointEntry> {
    old?.file.joints.iter().find(|e| e.joint == joint)
}

/// The joints to calibrate: the chain's, then its actuated extra joints
/// (a gripper) while there are servos for them.
fn names(chain: &Chain) -> Vec<(String, (f64, f64))> {
    let chain_joints = chain
        .joints
        .iter()
        .map(|j| (j.name.clone(), (j.limits.lower, j.limits.upper)));
    let extras = chain
        .extras
        .iter()
        .filter(|x| x.actuated())
        .map(|x| (x.name.clone(), (x.limits.lower, x.limits.upper)));
    chain_joints.chain(extras).collect()
}

/// Each joint's entry before measuring: its output, fields and scale (the
/// old file's, the servos found), its full device range.
fn entries(
    a: &Args,
    chain: &Chain,
    protocol: &Protocol,
    old: Option<&Old>,
    found: Option<&hardware::Found>,
) -> anyhow::Result<Vec<JointEntry>> {
    let names = names(chain);
    let file_fields = old.map(|o| o.file.fields.clone()).unwrap_or_default();
    let mut out = Vec::new();
    for (k, (joint, _)) in names.iter().enumerate() {
        let before = old_entry(old, joint);
        let output = match (&a.outputs, before, found) {
            (Some(o), _, _) => o.get(k).copied(),
            (None, Some(e), _) => Some(e.output),
            (None, None, Some(f)) => f.servos.get(k).map(|s| u16::from(s.id)),
            (None, None, None) => Some(k as u16),
        };
        let Some(output) = output else {
            if k < chain.dof() {
                bail!(
                    "joint '{joint}' has no servo: {} found for {} joints{}",
                    found.map_or(0, |f| f.servos.len()),
                    chain.dof(),
                    found
                        .map(|f| format!(" (ids {})", ids(f)))
                        .unwrap_or_default()
                );
            }
            break; // a gripper without a servo: not driven
        };
        let mut fields = before.map(|e| e.fields.clone()).unwrap_or_default();
        if let Some(found) = found {
            set_model(found, output, &file_fields, &mut fields)?;
        }
        let device = (protocol.device)(&file_fields.merged(&fields))
            .map_err(|e| anyhow::anyhow!("joint '{joint}': {e}"))?;
        let scale = before.and_then(|e| e.scale).or(match device.default_scale {
            Some(_) => None,
            None => Some(PWM_SCALE),
        });
        out.push(JointEntry {
            joint: joint.clone(),
            output,
            direction: 1.0,
            zero: 0.0,
            scale,
            range: device.range,
            speed_limit: before.map_or(3.0, |e| e.speed_limit),
            park: before.and_then(|e| e.park),
            fields,
        });
    }
    Ok(out)
}

/// The model the servo on `output` reports, as the joint's `model:`
/// unless the file's already says it.
fn set_model(
    found: &hardware::Found,
    output: u16,
    file_fields: &Fields,
    fields: &mut Fields,
) -> anyhow::Result<()> {
    let Some(s) = found.servos.iter().find(|s| u16::from(s.id) == output) else {
        bail!("no servo with id {output} answered (found {})", ids(found));
    };
    let model = s.model.with_context(|| {
        format!(
            "servo id {} reports model number {}, which arm_ik does not know",
            s.id, s.number
        )
    })?;
    if file_fields.get("model").and_then(|v| v.as_str()) != Some(model) {
        fields.set("model", model);
    }
    Ok(())
}

fn ids(f: &hardware::Found) -> String {
    f.servos
        .iter()
        .map(|s| s.id.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The wizard's view of each joint.
fn joints(
    chain: &Chain,
    cal: &arm_ik::servo::calibration::Calibration,
    entries: &[JointEntry],
    old: Option<&Old>,
) -> Vec<Joint> {
    let hints = pose::hints(chain);
    let names = names(chain);
    entries
        .iter()
        .zip(&cal.joints)
        .enumerate()
        .map(|(k, (e, m))| Joint {
            name: e.joint.clone(),
            output: e.output,
            limits: names[k].1,
            hint: hints
                .get(k)
                .cloned()
                .unwrap_or_else(|| "beside the chain (a gripper): 0 is its URDF zero".into()),
            scale: m.scale,
            device: e.range,
            old: old_entry(old, &e.joint).map(|o| (o.zero, o.direction)),
        })
        .collect()
}
