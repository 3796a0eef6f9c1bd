//! What the firmware's pins output, judged against a calibration: the
//! widths a pose must give, the widths measured over a window, and the
//! slow start-up move (tests/firmware_sim.rs, tests/firmware_relax.rs).

use super::firmware::{CHANNELS, Harness, Pulse, RECEIVED_LATE_S};
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::LinkStatus;
use arm_ik::servo::pwm_bridge::cmd;
use arm_ik::servo::{SerialServo, ServoOutput};
use std::time::{Duration, Instant};

/// Pulse widths must match the calibration this closely (µs).
pub const TOL_US: f64 = 5.0;
/// No single pulse may be further off than this (µs): a glitch.
pub const GLITCH_US: f64 = 10.0;

/// The width each channel must output for `angles` (the chain's joints,
/// then optionally the gripper's; left out, at rest): the calibration's
/// command per joint on its channel, `None` (no pulses) on unconfigured
/// channels.
pub fn expected(cal: &Calibration, angles: &[f64]) -> [Option<f64>; CHANNELS] {
    let mut commands = vec![0; cal.joints.len()];
    cal.commands(&cal.complete(angles), &mut commands).unwrap();
    let mut out = [None; CHANNELS];
    for (j, c) in cal.joints.iter().zip(commands) {
        out[usize::from(j.output)] = Some(f64::from(c));
    }
    out
}

/// The measured widths over `[from, to]` of simulated time equal `want`
/// (median within TOL_US, no pulse beyond GLITCH_US; no pulses where
/// `want` is None).
pub fn assert_widths(fw: &mut Harness, from: f64, to: f64, want: &[Option<f64>; CHANNELS]) {
    let got = fw.medians(from, to);
    for ch in 0..CHANNELS {
        match (got[ch], want[ch]) {
            (None, None) => {}
            (Some(g), Some(w)) => {
                assert!(
                    (g - w).abs() <= TOL_US,
                    "channel {ch}: measured {g} µs, calibration says {w} µs (all: {got:?} vs {want:?})"
                );
                let pulses = fw.pulses(ch, from, to);
                let worst = pulses
                    .iter()
                    .map(|p| p.width_us - w)
                    .fold(0.0, |a: f64, e| if e.abs() > a.abs() { e } else { a });
                // The figures behind the ±5 µs, shown with --nocapture.
                eprintln!(
                    "channel {ch}: {w} µs wanted, {} pulses, median {:+.2} µs, worst {worst:+.2} µs",
                    pulses.len(),
                    g - w
                );
                assert!(
                    worst.abs() <= GLITCH_US,
                    "channel {ch}: a pulse {worst:+} µs off {w} µs in [{from}, {to}] s"
                );
            }
            _ => panic!(
                "channel {ch}: measured {:?}, want {:?} (all: {got:?} vs {want:?})",
                got[ch], want[ch]
            ),
        }
    }
}

/// Checks that the pulses of every joint in `window` (simulated s) move
/// from `from` (commands, chain order) to the commands of `to` at the
/// start-up speed: the first pulse within a few ramp steps of `from`, no
/// pulse changing by more than a ramp step per frame the firmware got
/// since the pulse before (a jump would be the whole move), and the move
/// spread over at least 0.7 times the frames that speed needs.
///
/// The link moves one ramp step per frame it sends. Frames, not simulated
/// seconds, are counted: a stalled simulation gets the frames the host
/// wrote meanwhile at once, and a loaded machine runs it slower than the
/// wall clock the link ramps on. `sim_per_wall` (simulated seconds per
/// wall second while the move ran; 1 when the simulation keeps up) widens
/// only how near `from` the first pulse must be.
pub fn assert_start_up_move(
    fw: &mut Harness,
    cal: &Calibration,
    window: (f64, f64),
    from: &[i32],
    to: &[f64],
    sim_per_wall: f64,
) {
    let want = expected(cal, to);
    let pace = sim_per_wall.min(1.0);
    let speed = cal.link.startup_speed;
    for (j, &start) in cal.joints.iter().zip(from) {
        let ch = usize::from(j.output);
        let (start, target) = (f64::from(start), want[ch].unwrap());
        let name = &j.joint;
        assert!(
            (target - start).abs() >= 100.0,
            "{name}: too short a move to tell"
        );
        let pulses = fw.pulses(ch, window.0, window.1);
        let received = fw.received(cmd::SET_TARGETS);
        let frames = frames_between(&received, &pulses);
        let first = pulses.first().unwrap_or_else(|| panic!("no pulse on {ch}"));
        // A few 50 Hz ramp steps: the host's frames are not synchronous
        // with the firmware's 20 ms periods (a period may take two, and a
        // Timer1 output switched on shows from the period after), and the
        // simulation may catch up with queued frames. A jump would be the
        // whole move (>= 100 µs).
        let step = speed * j.scale * 0.02;
        let slack = 4.0 * step / pace + TOL_US;
        let near = |p: &&Pulse, w: f64| (p.width_us - w).abs() <= slack;
        assert!(
            near(&first, start),
            "{name}: first pulse {} µs, the move should start at {start} µs",
            first.width_us
        );
        for (w, n) in pulses.windows(2).zip(&frames) {
            let jump = (w[1].width_us - w[0].width_us).abs();
            assert!(
                jump <= step * *n as f64 + TOL_US,
                "{name}: a pulse changed by {jump} µs at {} s, with {n} frames received \
                 since the one before (ramp step {step} µs)",
                w[1].t_sim
            );
        }
        let arrived = pulses
            .iter()
            .position(|p| (p.width_us - target).abs() <= TOL_US)
            .unwrap_or_else(|| panic!("{name}: never reached {target} µs"));
        let left = pulses[..arrived]
            .iter()
            .rfind(|p| near(p, start))
            .expect("the first pulse is near the start");
        let (from_t, to_t) = (left.t_sim, pulses[arrived].t_sim);
        let took = received
            .iter()
            .filter(|&&t| t > from_t && t <= to_t)
            .count();
        let nominal = ((target - start).abs() - 2.0 * slack) / step;
        assert!(
            took as f64 >= 0.7 * nominal,
            "{name}: from {start} to {target} µs in {took} frames, the start-up speed needs {nominal:.0}"
        );
    }
}

/// For each pulse after the first, the SET_TARGETS frames the firmware may
/// have taken since the width of the pulse before it was read: a period
/// before that pulse started (Timer2's first slot reads its width when the
/// idle rest of the previous frame begins) to the end of this one, the
/// frames' times being up to a chunk late. Counted generously, so each
/// change is at most a ramp step per frame counted.
fn frames_between(received: &[f64], pulses: &[Pulse]) -> Vec<usize> {
    pulses
        .windows(2)
        .map(|w| {
            let read = w[0].t_sim - w[0].width_us * 1e-6 - 0.02;
            let end = w[1].t_sim + RECEIVED_LATE_S;
            received.iter().filter(|&&t| t > read && t <= end).count()
        })
        .collect()
}

/// Simulated seconds per wall second while `run` ran.
pub fn sim_per_wall(fw: &mut Harness, run: impl FnOnce(&mut Harness)) -> f64 {
    let (wall, sim) = (std::time::Instant::now(), fw.sim_time());
    run(fw);
    (fw.sim_time() - sim) / wall.elapsed().as_secs_f64()
}

/// Calls `command(angles)` every 20 ms until `done` holds for the link
/// status (panics after `limit`); returns the slowest call.
pub fn command_until(
    servo: &mut SerialServo,
    angles: &[f64],
    limit: Duration,
    what: &str,
    done: impl Fn(&LinkStatus) -> bool,
) -> Duration {
    let start = Instant::now();
    let mut slowest = Duration::ZERO;
    loop {
        let t = Instant::now();
        servo.command(angles, start.elapsed().as_secs_f64());
        slowest = slowest.max(t.elapsed());
        let st = servo.status();
        if done(&st) {
            return slowest;
        }
        assert!(
            start.elapsed() < limit,
            "{what}: not after {limit:?}; link: {st:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
