//! The track protocol of `arm_ik bench`: a long path sampled in time
//! ([`TargetSet::generate_track`]) streamed into the node core as a program
//! publishing targets would, the core ticking at its own rate in between.
//! It measures what a user of the node sees: how far the tip trails the
//! latest target once the arm is on the path, and whether the answers ever
//! jump (a reconfiguration: the arm swinging to another branch).

use super::cartesian::{CartesianPathMsg, CartesianPoint};
use super::command::Command;
use super::core::NodeCore;
use super::msg::TargetMsg;
use super::status::SolveOutcome;
use crate::bench::{STEP_LIMIT, Sample, TargetSet, largest_step, percentile};
use crate::servo::ServoOutput;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The arm counts as on the path from the first tick its tip is this close
/// to the latest target (m).
pub const ON_PATH: f64 = 0.01;

/// What one track run measured.
#[derive(Debug, Clone, Serialize)]
pub struct TrackFigures {
    /// Targets published, and ticks run.
    pub targets: usize,
    pub ticks: usize,
    /// Targets solved and followed (converged or a usable best effort).
    pub reached: usize,
    /// When the tip first came within [`ON_PATH`] of the latest target (s);
    /// `None`: never.
    pub on_path_at: Option<f64>,
    /// From then on: the largest distance from the tip to the latest
    /// target (m), and when (s).
    pub worst_lag: f64,
    pub worst_lag_at: f64,
    /// The largest change of one joint between two successive answers
    /// (rad or m), and how many changed a joint by more than
    /// [`STEP_LIMIT`]: each a reconfiguration.
    pub largest_step: f64,
    pub jumps: usize,
    /// The largest change of one joint commanded in one tick.
    pub largest_tick_step: f64,
    /// Streamed targets refused because their answer would swing the arm
    /// to another configuration (the arm held instead: `node::stream`).
    pub halts: u64,
    /// With the collision check on, the core's counts since it started
    /// (the caller's fresh core for the path): targets refused because
    /// every answer found collides, motions stopped short of contact, and
    /// the smallest distance of any checked pair (m; infinite, `null` in
    /// JSON, without the check).
    pub refused: u64,
    pub stops: u64,
    pub min_clearance: f64,
    /// The pair that came that close (`panda_link5 vs box`; empty without
    /// the check).
    pub closest_pair: String,
    /// Fed whole ([`Feed::Whole`]): the node time the path took to plan
    /// (s), or why it was not run.
    pub planned_s: Option<f64>,
    pub failed: Option<String>,
    /// Wall time of the ticks that solved a target, or that planned the
    /// path fed whole (µs).
    pub solve_p50_us: f64,
    pub solve_p99_us: f64,
    /// The solving ticks' wall times (s), for [`TrackFigures::merge`].
    #[serde(skip)]
    solve_times: Vec<f64>,
}

impl TrackFigures {
    /// The figures of several tracks as one: counts added, the worst of
    /// each worst, the percentiles over every solve.
    pub fn merge(all: &[TrackFigures]) -> TrackFigures {
        let mut times: Vec<f64> = all.iter().flat_map(|f| f.solve_times.clone()).collect();
        let worst = all
            .iter()
            .max_by(|a, b| a.worst_lag.total_cmp(&b.worst_lag));
        let closest = all
            .iter()
            .min_by(|a, b| a.min_clearance.total_cmp(&b.min_clearance));
        TrackFigures {
            targets: all.iter().map(|f| f.targets).sum(),
            ticks: all.iter().map(|f| f.ticks).sum(),
            reached: all.iter().map(|f| f.reached).sum(),
            on_path_at: all
                .iter()
                .map(|f| f.on_path_at)
                .try_fold(0.0f64, |m, t| t.map(|t| m.max(t))),
            worst_lag: worst.map_or(0.0, |f| f.worst_lag),
            worst_lag_at: worst.map_or(0.0, |f| f.worst_lag_at),
            largest_step: all.iter().map(|f| f.largest_step).fold(0.0, f64::max),
            jumps: all.iter().map(|f| f.jumps).sum(),
            largest_tick_step: all.iter().map(|f| f.largest_tick_step).fold(0.0, f64::max),
            halts: all.iter().map(|f| f.halts).sum(),
            refused: all.iter().map(|f| f.refused).sum(),
            stops: all.iter().map(|f| f.stops).sum(),
            min_clearance: closest.map_or(f64::INFINITY, |f| f.min_clearance),
            closest_pair: closest.map_or(String::new(), |f| f.closest_pair.clone()),
            planned_s: all
                .iter()
                .map(|f| f.planned_s)
                .try_fold(0.0f64, |m, t| t.map(|t| m.max(t))),
            failed: all.iter().find_map(|f| f.failed.clone()),
            solve_p50_us: percentile(&mut times, 0.5) * 1e6,
            solve_p99_us: percentile(&mut times, 0.99) * 1e6,
            solve_times: times,
        }
    }
}

/// The samples of `set`'s path number `path`, in time order.
pub fn path_samples(set: &TargetSet, path: usize) -> &[Sample] {
    let first: usize = set.paths[..path].iter().map(|p| p.len).sum();
    &set.samples[first..first + set.paths[path].len]
}

/// The target a program publishing sample `s` of `set` sends: in the
/// chain's base frame, stamped "now", the pose's orientation unless the
/// set is position-only (what of it counts is the node's
/// `target_orientation` and `tool_axis`).
pub fn sample_message(set: &TargetSet, s: &Sample) -> TargetMsg {
    TargetMsg {
        stamp: 0.0,
        frame_id: String::new(),
        position: s.position,
        orientation: (!set.position_only).then_some(s.quaternion),
    }
}

/// How the path reaches the node core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// One target at a time at the set's rate, as a program publishing
    /// poses sends them.
    Stream,
    /// The whole path at once, as a Cartesian path
    /// ([`crate::node::cartesian`]): planned, then run; its times count
    /// from when it starts to move.
    Whole,
}

/// The path `samples` of `set` as one Cartesian path, a sample every
/// period of the set's rate.
pub fn path_message(set: &TargetSet, samples: &[Sample]) -> CartesianPathMsg {
    let rate = set.rate_hz.unwrap_or(20.0);
    CartesianPathMsg {
        stamp: 0.0,
        frame_id: String::new(),
        points: samples
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let m = sample_message(set, s);
                CartesianPoint {
                    position: m.position,
                    orientation: m.orientation,
                    time_from_start: k as f64 / rate,
                }
            })
            .collect(),
    }
}

/// One answer the core followed during [`replay_track_with`], as its
/// observer sees it at the tick that solved it; fed whole, every tick of
/// the planned path's run, its goal as the answer.
#[derive(Debug)]
pub struct TrackAnswer<'a> {
    /// Node time (s) and the latest sample published by then.
    pub t: f64,
    pub sample: usize,
    /// The answer (the core's goal for the chain's joints), and the
    /// largest change of one joint since the previous answer (0 for the
    /// first).
    pub answer: &'a [f64],
    pub step: f64,
    /// The joints commanded at that tick, and how far the tip was from
    /// the latest target (m).
    pub arm: &'a [f64],
    pub lag: f64,
}

/// Streams the samples of `set`'s path number `path` into `core` at the
/// set's rate (the first at 0 s) and ticks the core at its own rate until
/// the last target has been followed for one second more. The core should
/// start where the path starts (its `start`, the arm's known pose) or
/// wherever the caller wants to show the start from. Setting `stop` ends
/// the run early.
pub fn replay_track<S: ServoOutput>(
    core: &mut NodeCore<S>,
    set: &TargetSet,
    path: usize,
    stop: &AtomicBool,
) -> TrackFigures {
    replay_track_with(core, set, path, stop, Feed::Stream, |_| {})
}

/// [`replay_track`] fed as `feed` says, showing `observe` every answer
/// the core followed when streamed (a trace of a jump or a lag sees
/// exactly what the figures count). Fed whole, the lag is to the sample
/// due since the path started to move, and the answers are the planned
/// points (each within [`PATH_STEP`](super::cartesian::PATH_STEP) of
/// the one before).
pub fn replay_track_with<S: ServoOutput>(
    core: &mut NodeCore<S>,
    set: &TargetSet,
    path: usize,
    stop: &AtomicBool,
    feed: Feed,
    mut observe: impl FnMut(TrackAnswer),
) -> TrackFigures {
    let samples = path_samples(set, path);
    let rate = set.rate_hz.unwrap_or(20.0);
    let dt = 1.0 / core.config().rate_hz;
    let dof = core.layout().dof();
    let mut end = samples.len() as f64 / rate + 1.0;
    let mut f = TrackFigures {
        targets: 0,
        ticks: 0,
        reached: 0,
        on_path_at: None,
        worst_lag: 0.0,
        worst_lag_at: 0.0,
        largest_step: 0.0,
        jumps: 0,
        largest_tick_step: 0.0,
        halts: 0,
        refused: 0,
        stops: 0,
        min_clearance: f64::INFINITY,
        closest_pair: String::new(),
        planned_s: None,
        failed: None,
        solve_p50_us: f64::NAN,
        solve_p99_us: f64::NAN,
        solve_times: Vec::new(),
    };
    let mut previous_goal: Option<Vec<f64>> = None;
    let mut last = core.motion().position()[..dof].to_vec();
    let mut solve_times = Vec::with_capacity(samples.len());
    let mut latest: Option<usize> = None;
    let mut next = 0;
    while !stop.load(Ordering::Relaxed) {
        let now = f.ticks as f64 * dt;
        if now > end {
            break;
        }
        match feed {
            Feed::Stream => {
                while next < samples.len() && next as f64 / rate <= now + 1e-9 {
                    core.on_target(&sample_message(set, &samples[next]), now);
                    latest = Some(next);
                    next += 1;
                    f.targets += 1;
                }
            }
            Feed::Whole if f.ticks == 0 => {
                let msg = Command::CartesianPath(path_message(set, samples));
                if let Err(e) = core.command(&msg, now) {
                    f.failed = Some(e.to_string());
                    break;
                }
                f.targets = samples.len();
            }
            Feed::Whole => {}
        }
        let t0 = Instant::now();
        let tick = core.tick(now);
        let took = t0.elapsed().as_secs_f64();
        f.ticks += 1;
        if feed == Feed::Whole {
            let st = &core.status().teach.cartesian;
            if st.planning {
                solve_times.push(took);
                continue;
            }
            if let Some(why) = &st.failed {
                f.failed = Some(why.clone());
                break;
            }
            let began = *f.planned_s.get_or_insert_with(|| {
                f.reached = samples.len();
                f.largest_step = st.largest_step;
                end += now;
                now
            });
            let due = ((now - began) * rate + 1e-9).floor() as usize;
            latest = Some(due.min(samples.len() - 1));
        }
        let q = &core.motion().position()[..dof];
        f.largest_tick_step = f
            .largest_tick_step
            .max(largest_step(core.chain(), &last, q));
        last.copy_from_slice(q);
        let lag = latest.map(|k| {
            let target = nalgebra::Vector3::from(samples[k].position);
            (core.tip_pose().translation.vector - target).norm()
        });
        if let Some(lag) = lag {
            if f.on_path_at.is_none() && lag <= ON_PATH {
                f.on_path_at = Some(now);
            }
            if f.on_path_at.is_some() && lag > f.worst_lag {
                f.worst_lag = lag;
                f.worst_lag_at = now;
            }
        }
        // Streamed, each answer reached; whole, each tick's goal (no solves
        // while a planned path runs: the path's joints at that time).
        let answered = match (feed, &tick.solve) {
            (Feed::Whole, _) => true,
            (Feed::Stream, Some(out)) => {
                solve_times.push(took);
                matches!(out, SolveOutcome::Reached { .. })
            }
            (Feed::Stream, None) => false,
        };
        if answered {
            let goal = core.goal()[..dof].to_vec();
            let step = previous_goal
                .as_ref()
                .map_or(0.0, |p| largest_step(core.chain(), p, &goal));
            if feed == Feed::Stream {
                f.reached += 1;
                f.largest_step = f.largest_step.max(step);
                f.jumps += usize::from(step > STEP_LIMIT);
            }
            observe(TrackAnswer {
                t: now,
                sample: latest.unwrap_or(0),
                answer: &goal,
                step,
                arm: &last,
                lag: lag.unwrap_or(0.0),
            });
            previous_goal = Some(goal);
        }
    }
    let st = core.status();
    f.refused = st.targets.rejected.collision;
    f.halts = st.targets.rejected.reconfiguration;
    if let Some(c) = &st.collision {
        f.stops = c.stops;
        f.min_clearance = c.min_clearance;
        f.closest_pair = c.min_closest.clone();
    }
    f.solve_p50_us = percentile(&mut solve_times, 0.5) * 1e6;
    f.solve_p99_us = percentile(&mut solve_times, 0.99) * 1e6;
    f.solve_times = solve_times;
    f
}
