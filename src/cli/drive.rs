//! `arm_ik drive`: one joint-space pose through the configured servo
//! protocol, held for a while: the first thing to run on a new arm, and
//! the host side of the firmware-in-simulation tests.

use super::robot::RobotArgs;
use super::stop::Stop;
use super::values;
use anyhow::{Context, bail};
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::{Detail, LinkState, LinkStatus};
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
    /// Joint positions (rad, or m for prismatic joints, each at most 1e6 in
    /// size), chain order, comma-separated; then, optionally, the robot's
    /// joints off the chain (a gripper), else left at rest.
    #[arg(long, required = true, allow_hyphen_values = true, value_delimiter = ',',
          value_parser = values::finite)]
    joints: Vec<f64>,
    /// Seconds to keep streaming the pose, 0 to 1e6, counted from when the
    /// link connects (the servos or the firmware answered), not from
    /// opening the port; on virtual servos the simulation ends early once
    /// they have arrived.
    #[arg(long, default_value_t = 2.0, value_parser = values::non_negative)]
    hold: f64,
    /// Seconds to wait for the link to connect before giving up, 0 to 1e6:
    /// an Arduino's boot loader, a slow USB adapter or a bus powering up
    /// takes a moment before the first reply.
    #[arg(long, default_value_t = 5.0, value_parser = values::non_negative)]
    connect_wait: f64,
    /// Frames per second, instead of the configuration's link.rate_hz.
    #[arg(long, value_parser = values::frame_rate)]
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
        errln!("drive: warning: {w}");
    }
    if let Some(r) = a.rate {
        cal.link.rate_hz = r;
    }
    let given = &a.joints;
    let names: Vec<String> = cal.slots.iter().map(|s| s.joint.clone()).collect();
    if !(chain.dof()..=names.len()).contains(&given.len()) {
        bail!(
            "--joints: {} values for {} joints ({}{})",
            given.len(),
            chain.dof(),
            names[..chain.dof()].join(", "),
            if names.len() > chain.dof() {
                format!(", then optionally {}", names[chain.dof()..].join(", "))
            } else {
                String::new()
            }
        );
    }
    let joints = cal.complete(given);
    let mut commands = vec![0; cal.joints.len()];
    cal.commands(&joints, &mut commands)
        .expect("--joints are finite");
    for (slot, &q) in cal.slots.iter().zip(&joints) {
        let Some(k) = slot.servo else { continue };
        let (m, c) = (&cal.joints[k], commands[k]);
        let reached = m.angle(c);
        if (reached - q).abs() * m.scale > 0.5 {
            errln!(
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
    names: &[String],
    joints: &[f64],
    commands: &[i32],
) -> anyhow::Result<ExitCode> {
    let clamped = cal.angles(commands);
    let mut servo = VirtualServo::new(vec![0.0; joints.len()]);
    for (v, slot) in servo.max_speed.iter_mut().zip(&cal.slots) {
        if let Some(k) = slot.servo {
            *v = cal.joints[k].speed_limit;
        }
    }
    let dt = 1.0 / cal.link.rate_hz;
    let ticks = (a.hold / dt).ceil() as u64;
    // A servo within half a unit of its command is there; once all are,
    // the rest of --hold changes nothing and is not simulated.
    let arrived = |at: &[f64]| {
        cal.slots
            .iter()
            .zip(at)
            .zip(&clamped)
            .all(|((slot, p), c)| {
                slot.servo
                    .is_none_or(|k| (p - c).abs() * cal.joints[k].scale.abs() < 0.5)
            })
    };
    let mut reached = servo.feedback().unwrap_or_default();
    for k in 0..=ticks {
        servo.command(&clamped, k as f64 * dt);
        reached = servo.feedback().unwrap_or_default();
        if arrived(&reached) {
            break;
        }
    }
    let ramping = !arrived(&reached);
    if ramping {
        errln!(
            "drive: --hold ended before the virtual servos arrived (each moves at its speed_limit): the 'reached' column is where they stopped; hold longer"
        );
    }
    if a.json {
        outln!(
            "{}",
            json!({"port": null, "link": "virtual", "joints": names, "requested": joints,
                   "commands": commands, "angles": clamped, "reached": reached,
                   "ramping": ramping, "seconds": a.hold})
        )?;
    } else {
        outln!(
            "drive: no --port: virtual servos, {:.1} s simulated{}",
            a.hold,
            if ramping { ", still moving" } else { "" }
        )?;
        print_table(cal, joints, commands, &clamped, Some(&reached))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One row per position: asked, the angle sent, the servo command (none
/// for a joint without a servo) and, for virtual servos, where they got
/// to by the end of --hold.
fn print_table(
    cal: &Calibration,
    joints: &[f64],
    commands: &[i32],
    angles: &[f64],
    reached: Option<&[f64]>,
) -> std::io::Result<()> {
    let head = if reached.is_some() { "   reached" } else { "" };
    outln!(
        "{:<16} {:>10} {:>10} {:>8}{head}",
        "joint",
        "asked",
        "sent",
        "command"
    )?;
    for (i, ((slot, q), a)) in cal.slots.iter().zip(joints).zip(angles).enumerate() {
        let n = &slot.joint;
        let at = reached.map_or(String::new(), |r| format!(" {:>10.4}", r[i]));
        match slot.servo {
            Some(k) => outln!("{n:<16} {q:>10.4} {a:>10.4} {:>8}{at}", commands[k]),
            None => outln!("{n:<16} {q:>10.4} {:>10} {:>8}", "-", "none"),
        }?
    }
    Ok(())
}

/// After `--hold`, how long the pose keeps streaming for the link to
/// answer again when it is silent at that moment. A reply a little later
/// than `link.reply_timeout` (a busy host, a USB adapter buffering) says
/// nothing about whether the servos are reachable; the verdict waits, at
/// most this long, for a fresh good frame instead of failing on one late
/// reply. A link that stays silent or disconnected fails after it.
const VERDICT_WAIT: Duration = Duration::from_secs(2);

/// The clock of a `drive` run on a port: the hold starts when the link
/// first connects (a slow connection must not eat it: the start-up move
/// would be cut short), and the verdict waits for a good frame.
struct HoldClock {
    opened: Instant,
    connect_wait: Duration,
    hold: Duration,
    /// When the link first connected.
    connected: Option<Instant>,
    /// When the hold ended with the link not answering (the verdict wait).
    unanswered: Option<Instant>,
}

impl HoldClock {
    fn new(a: &Args) -> HoldClock {
        HoldClock {
            opened: Instant::now(),
            connect_wait: Duration::from_secs_f64(a.connect_wait),
            hold: Duration::from_secs_f64(a.hold),
            connected: None,
            unanswered: None,
        }
    }

    /// Given the link's status now: `None` when the run is over, else how
    /// long to sleep before the next look (at most one 20 ms poll).
    fn next(&mut self, status: &LinkStatus, now: Instant) -> Option<Duration> {
        let poll = Duration::from_millis(20);
        if self.connected.is_none() && status.connects > 0 {
            self.connected = Some(now);
        }
        let Some(at) = self.connected else {
            let waited = now - self.opened;
            return (waited < self.connect_wait).then(|| poll.min(self.connect_wait - waited));
        };
        let held = now - at;
        if held < self.hold {
            return Some(poll.min(self.hold - held));
        }
        if status.state == LinkState::Connected {
            return None;
        }
        let since = *self.unanswered.get_or_insert(now);
        (now - since < VERDICT_WAIT).then_some(poll)
    }

    /// Seconds from opening the port to the connection, if it came.
    fn connect_seconds(&self) -> Option<f64> {
        self.connected.map(|c| (c - self.opened).as_secs_f64())
    }

    /// Seconds streamed since the connection (the hold, and the verdict's
    /// wait), 0 without one.
    fn held_seconds(&self) -> f64 {
        self.connected.map_or(0.0, |c| c.elapsed().as_secs_f64())
    }
}

/// Streams the pose on the port, reporting link state changes as they
/// happen, for `--hold` seconds from the connection ([`HoldClock`]). At
/// the end it just stops sending (after one last status request, for the
/// firmware's counters): nothing relaxes or stops the servos, the
/// firmware's watchdog then holds or relaxes them as configured
/// (tests/firmware_sim.rs checks both). The link counts as connected when
/// its last frame got an answer in time, waiting up to [`VERDICT_WAIT`]
/// for one.
fn stream(
    a: &Args,
    port: &str,
    cal: Calibration,
    names: &[String],
    joints: &[f64],
    commands: &[i32],
) -> anyhow::Result<ExitCode> {
    let protocol = cal.protocol.name;
    let clamped = cal.angles(commands);
    let table = cal.clone();
    let stop = Stop::on_signals()?;
    let mut servo =
        SerialServo::open(port, cal).with_context(|| format!("starting the link on {port}"))?;
    let mut clock = HoldClock::new(a);
    let mut shown = String::new();
    let mut last: LinkStatus;
    loop {
        servo.command(joints, clock.opened.elapsed().as_secs_f64());
        last = servo.status();
        let line = last.describe();
        if line != shown {
            errln!("drive: {line}");
            shown = line;
        }
        match clock.next(&last, Instant::now()) {
            Some(pause) if !stop.requested() => std::thread::sleep(pause),
            _ => break,
        }
    }
    let seconds = clock.held_seconds();
    let fin = servo.close();
    let ok = matches!(last.state, LinkState::Connected);
    if ok && last.ramping {
        errln!(
            "drive: --hold ended during the start-up move (at startup_speed): the servos stopped short of the pose; hold longer"
        );
    }
    let details = details_json(&fin.details);
    if a.json {
        outln!(
            "{}",
            json!({"port": port, "kind": protocol, "joints": names,
                   "requested": joints, "commands": commands, "angles": clamped,
                   "state": last.describe(), "connected": ok, "ramping": last.ramping,
                   "connects": fin.connects, "connect_seconds": clock.connect_seconds(),
                   "frames_sent": fin.frames_sent, "frames_lost": fin.frames_lost,
                   "seconds": seconds,
                   "present": fin.present, "output": fin.output, "details": details,
                   "reply_garbage": fin.reply_garbage, "servo_errors": fin.servo_errors,
                   "last_error": fin.last_error})
        )?;
    } else if fin.frames_sent == 0 {
        outln!(
            "drive: no frame sent to {port} in {:.1} s",
            clock.opened.elapsed().as_secs_f64()
        )?;
    } else {
        outln!(
            "drive: {} frames to {port} in {seconds:.1} s from the connection",
            fin.frames_sent
        )?;
        print_table(&table, joints, commands, &clamped, None)?;
    }
    if stop.requested() {
        return Ok(stop.report("drive", ""));
    }
    if !ok {
        let never = if clock.connected.is_none() {
            format!(
                " (not connected within --connect-wait {} s)",
                a.connect_wait
            )
        } else {
            String::new()
        };
        bail!(
            "the servos were not reachable at the end{never}: {}",
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
