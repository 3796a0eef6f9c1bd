//! The loop that runs a node core without ROS: commands from a [`Source`]
//! at each tick, one [`NodeCore::tick`] per period on a simulated or wall
//! clock, until a duration, the end of the input or a stop request. `arm_ik
//! sim` and `arm_ik run` are this loop with different sources and
//! servos; the ROS node runs the same core on its own timer.

use super::delivery::Delivery;
use super::input::{Input, Poll};
use super::lines::InputError;
use super::source::Source;
use super::summary::{Ending, Parts, PathSummary, RunSummary, Tally};
use crate::bench::cpu_time;
use crate::ik::{BudgetClock, Target};
use crate::node::{NodeCore, NodeStatus, Tick};
use crate::replay::CatchUp;
use crate::servo::ServoOutput;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The arm has caught up with its targets once its tip comes within this
/// distance of one (m), or stops closing in: the tracking error before
/// that is the start-up move, from wherever the arm started.
const ARRIVAL_M: f64 = 1e-3;

/// How the loop's clock advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// One period per tick, as fast as the machine computes.
    Simulated,
    /// Each tick waits for its time on the wall clock: what real servos
    /// need, and what shows whether the loop keeps up.
    Wall,
}

/// How long and how fast a run goes.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    pub clock: Clock,
    /// Node time to run (s); `None`: until the input ends and the arm has
    /// settled, at most `settle_s` after the input ended.
    pub duration: Option<f64>,
    pub settle_s: f64,
}

/// What the front-end does with each tick and each bad input: print joint
/// states, show progress, report malformed lines.
pub trait Observer {
    /// After every tick; `Break` ends the run (its output is gone).
    fn tick(&mut self, tick: &Tick, status: &NodeStatus) -> ControlFlow<()>;
    /// An input that is not a command; it was skipped.
    fn bad_input(&mut self, error: &InputError);
    /// The arm's target changed at node time `now` (s): what a recording
    /// or a viewer shows as the target. Called before that tick's
    /// [`Observer::tick`].
    fn target(&mut self, _now: f64, _target: &Target) {}
    /// A line to say once: what connecting changed on the servos (the
    /// follower's, or a leader arm's).
    fn notice(&mut self, _line: &str) {}
}

/// Watches nothing.
impl Observer for () {
    fn tick(&mut self, _: &Tick, _: &NodeStatus) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
    fn bad_input(&mut self, _: &InputError) {}
}

/// Runs `core` on the commands of `source` until the options or `stop`
/// end it, and sums up. `stop` is checked every tick (a signal handler
/// sets it); on return the servos have their last command and the caller
/// closes them by dropping the core.
pub fn run<S: ServoOutput>(
    core: &mut NodeCore<S>,
    source: &mut Source,
    opts: &RunOptions,
    stop: &AtomicBool,
    observer: &mut impl Observer,
) -> RunSummary {
    // On simulated time a solve has no wall-clock deadline to keep: its
    // budget is counted on the thread's CPU time, so a run's verdict does
    // not depend on what else the machine runs.
    core.set_budget_clock(cpu_time::clock(match opts.clock {
        Clock::Simulated => BudgetClock::Cpu,
        Clock::Wall => BudgetClock::Wall,
    }));
    let dt = core.motion().period();
    let last_tick = opts.duration.map(|d| (d / dt).round() as u64);
    let start = Instant::now();
    let mut tally = Tally::default();
    let mut input_ended: Option<f64> = None;
    let mut k = 0u64;
    let mut catch_up = CatchUp::new(ARRIVAL_M);
    let mut delivery = Delivery::default();
    let mut shown: Option<Target> = None;
    let ended = loop {
        if last_tick.is_some_and(|last| k > last) {
            break Ending::Duration;
        }
        if stop.load(Ordering::Relaxed) {
            break Ending::Stopped;
        }
        let now = k as f64 * dt;
        if opts.clock == Clock::Wall {
            let due = start + Duration::from_secs_f64(now);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        if input_ended.is_none() && take_inputs(core, source, now, stop, &mut tally, observer) {
            input_ended = Some(now);
        }
        let tick = core.tick(now);
        while let Some(n) = core
            .take_link_notice()
            .or_else(|| source.take_link_notice())
        {
            observer.notice(&n);
        }
        let st = core.status();
        catch_up.observe(now, st);
        delivery.observe(st.targets.reached, st.link_ok);
        if let Some(t) = core.active_target()
            && shown.as_ref() != Some(t)
        {
            observer.target(now, t);
            shown = Some(t.clone());
        }
        if observer.tick(&tick, core.status()).is_break() {
            break Ending::OutputClosed;
        }
        k += 1;
        // A program or a trajectory may rest between its steps: the run
        // waits for it (a program's step times out on its own).
        if let (None, Some(end)) = (opts.duration, input_ended)
            && !core.busy()
            && (core.motion().is_settled() || now - end >= opts.settle_s)
        {
            break Ending::InputEnded;
        }
    };
    delivery.finish();
    let path = match source {
        Source::Path { path, period, .. } => Some(PathSummary::new(path, *period)),
        _ => None,
    };
    RunSummary::new(Parts {
        status: core.status(),
        tally,
        simulated_s: k.saturating_sub(1) as f64 * dt,
        wall_s: start.elapsed().as_secs_f64(),
        streams: source.streams(),
        path,
        ended,
        catch_up: &catch_up,
        delivery,
    })
}

/// Hands the core what `source` has for time `now`; true when the source
/// has ended.
fn take_inputs<S: ServoOutput>(
    core: &mut NodeCore<S>,
    source: &mut Source,
    now: f64,
    stop: &AtomicBool,
    tally: &mut Tally,
    observer: &mut impl Observer,
) -> bool {
    let mut taken = 0usize;
    let poll = source.poll(now, stop, &mut |input| {
        taken += 1;
        match input {
            // A refusal is counted in the core's status.
            Input::Command(cmd) => {
                let _ = core.command(&cmd, now);
            }
            Input::Bad(e) => {
                tally.malformed += 1;
                observer.bad_input(&e);
            }
        }
    });
    tally.inputs += taken as u64;
    tally.max_per_tick = tally.max_per_tick.max(taken);
    poll == Poll::Ended
}
