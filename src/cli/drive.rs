//! `arm_ik drive`: one joint-space pose through the configured servo
//! protocol, held for a while: the first thing to run on a new arm, and
//! the host side of the firmware-in-simulation tests.

use super::parse::number_list;
use super::robot::RobotArgs;
use anyhow::{Context, bail};
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::{Detail, LinkSettings, LinkState, LinkStatus};
use arm_ik::servo::{SerialServo, ServoOutput, VirtualServo};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Servo configuration (calibration and link settings), e.g. config/servos_pwm.yaml.
    #[arg(long)]
    config: PathBuf,
    /// Serial port of the bridge or bus; without it, virtual servos.
    #[arg(long)]
    port: Option<String>,
    /// Joint positions (rad, or m for prismatic joints), chain order, comma-separated.
    #[arg(long, allow_hyphen_values = true)]
    joints: String,
    /// Seconds to keep streaming the pose.
    #[arg(long, default_value_t = 2.0)]
    hold: f64,
    /// Frames per second, instead of the configuration's link.rate_hz.
    #[arg(long)]
    rate: Option<f64>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    robot: RobotArgs,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let mut cal = Calibration::load(&a.config, &chain).map_err(|e| match &a.robot.urdf {
        Some(_) => anyhow::Error::new(e),
        None => anyhow::anyhow!(
            "{e} (checked against the built-in desktop arm, urdf/arm.urdf; \
             --urdf picks the robot the servo file is for)"
        ),
    })?;
    for w in &cal.warnings {
        eprintln!("drive: warning: {w}");
    }
    if let Some(r) = a.rate {
        cal.link.rate_hz = LinkSettings::check_rate(r).map_err(|_| {
            anyhow::anyhow!(
                "--rate {r}: not a frame rate in (0, {}] Hz",
                LinkSettings::MAX_RATE_HZ
            )
        })?;
    }
    let joints = number_list(&a.joints).map_err(|e| anyhow::anyhow!("--joints: {e}"))?;
    if joints.len() != chain.dof() {
        bail!(
            "--joints: {} values for {} joints ({})",
            joints.len(),
            chain.dof(),
            chain
                .joints
                .iter()
                .map(|j| j.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !(a.hold.is_finite() && a.hold >= 0.0) {
        bail!("--hold {}: not a duration in seconds", a.hold);
    }
    let mut commands = vec![0; joints.len()];
    cal.commands(&joints, &mut commands)
        .expect("--joints are finite");
    let names: Vec<&str> = chain.joints.iter().map(|j| j.name.as_str()).collect();
    for ((m, &q), &c) in cal.joints.iter().zip(&joints).zip(&commands) {
        let reached = m.angle(c);
        if (reached - q).abs() * m.scale > 0.5 {
            eprintln!(
                "drive: {}: {q} is beyond what the limits allow; sending {c} ({reached:.4})",
                m.joint
            );
        }
    }
    match &a.port {
        None => simulate(&a, &cal, &names, &joints, &commands),
        Some(port) => stream(&a, port, cal, &names, &joints, &commands),
    }
}

/// No port: virtual servos with the configuration's speed limits, in
/// simulated time.
fn simulate(
    a: &Args,
    cal: &Calibration,
    names: &[&str],
    joints: &[f64],
    commands: &[i32],
) -> anyhow::Result<ExitCode> {
    let clamped = cal.angles(commands);
    let mut servo = VirtualServo::new(vec![0.0; joints.len()]);
    servo.max_speed = cal.joints.iter().map(|j| j.speed_limit).collect();
    let dt = 1.0 / cal.link.rate_hz;
    let ticks = (a.hold / dt).ceil() as usize;
    for k in 0..=ticks {
        servo.command(&clamped, k as f64 * dt);
    }
    let reached = servo.feedback().unwrap_or_default();
    if a.json {
        println!(
            "{}",
            json!({"port": null, "link": "virtual", "joints": names, "requested": joints,
                   "commands": commands, "angles": clamped, "reached": reached})
        );
    } else {
        println!(
            "drive: no --port: virtual servos, {:.1} s simulated",
            a.hold
        );
        print_table(names, joints, commands, &clamped);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(names: &[&str], joints: &[f64], commands: &[i32], angles: &[f64]) {
    println!(
        "{:<16} {:>10} {:>10} {:>8}",
        "joint", "asked", "sent", "command"
    );
    for (((n, q), a), c) in names.iter().zip(joints).zip(angles).zip(commands) {
        println!("{n:<16} {q:>10.4} {a:>10.4} {c:>8}");
    }
}

/// Streams the pose on the port for `--hold` seconds, reporting link state
/// changes as they happen. At the end it just stops sending (after one
/// last status request, for the firmware's counters): nothing relaxes or
/// stops the servos, the firmware's watchdog then holds or relaxes them as
/// configured (tests/firmware_sim.rs checks both).
fn stream(
    a: &Args,
    port: &str,
    cal: Calibration,
    names: &[&str],
    joints: &[f64],
    commands: &[i32],
) -> anyhow::Result<ExitCode> {
    let protocol = cal.protocol.name;
    let clamped = cal.angles(commands);
    let mut servo =
        SerialServo::open(port, cal).with_context(|| format!("starting the link on {port}"))?;
    let start = Instant::now();
    let hold = Duration::from_secs_f64(a.hold);
    let mut shown = String::new();
    let mut last: LinkStatus;
    loop {
        servo.command(joints, start.elapsed().as_secs_f64());
        last = servo.status();
        let line = last.describe();
        if line != shown {
            eprintln!("drive: {line}");
            shown = line;
        }
        if start.elapsed() >= hold {
            break;
        }
        std::thread::sleep(Duration::from_millis(20).min(hold.saturating_sub(start.elapsed())));
    }
    let fin = servo.close();
    let ok = matches!(last.state, LinkState::Connected);
    if ok && last.ramping {
        eprintln!(
            "drive: --hold ended during the start-up move (at startup_speed): the servos stopped short of the pose; hold longer"
        );
    }
    let details = details_json(&fin.details);
    if a.json {
        println!(
            "{}",
            json!({"port": port, "kind": protocol, "joints": names,
                   "requested": joints, "commands": commands, "angles": clamped,
                   "state": last.describe(), "connected": ok, "ramping": last.ramping,
                   "connects": fin.connects,
                   "frames_sent": fin.frames_sent, "frames_lost": fin.frames_lost,
                   "seconds": start.elapsed().as_secs_f64(),
                   "present": fin.present, "output": fin.output, "details": details,
                   "last_error": fin.last_error})
        );
    } else if fin.frames_sent == 0 {
        println!("drive: no frame sent to {port} in {:.1} s", a.hold);
    } else {
        println!(
            "drive: {} frames to {port} in {:.1} s",
            fin.frames_sent, a.hold
        );
        print_table(names, joints, commands, &clamped);
    }
    if !ok {
        bail!(
            "the servos were not reachable at the end: {}",
            at_exit(&last)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The link's last state as said when the program exits: a disconnected
/// link is not "retrying" any more.
fn at_exit(last: &LinkStatus) -> String {
    match &last.state {
        LinkState::Disconnected { error, .. } => format!("{}: disconnected ({error})", last.port),
        _ => last.describe(),
    }
}

/// The protocol's details of the link status as one JSON object, key by
/// key as the session reports them (the firmware bridge's counters, for
/// example).
fn details_json(details: &[Detail]) -> serde_json::Value {
    serde_json::Value::Object(
        details
            .iter()
            .map(|d| (d.key.to_string(), json!(d.value)))
            .collect(),
    )
}
