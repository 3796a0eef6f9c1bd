//! Cartesian paths: the tip's poses (or positions) at given times, known
//! whole before the arm moves.
//!
//! Targets streamed one at a time are solved from where the arm is, and
//! where a path forks (a singular pose, a piece of a redundant arm's
//! self-motion that a joint limit cuts off ahead) nothing tells the solve
//! which side the rest of the path needs; the arm may then have to swing
//! across later (benches/README.md, "Why no rule that solves target by
//! target meets the goal on every path"). A path given whole is solved
//! whole instead ([`crate::ik::PathSearch`], a few hundred solves a tick
//! so no tick is missed), and the joint path found, every step of it
//! within [`PATH_STEP`], runs as a joint trajectory: on time, within
//! every joint limit, through the collision check like any motion.

use super::motion::AxisLimits;
use super::trajectory::{TrajectoryMsg, TrajectoryPoint};
use crate::ik::{PathError, PathOptions, PathSearch, Progress, Redundancy, Solver, Target};
use crate::model::Chain;
use serde::{Deserialize, Serialize};

/// The largest change of one joint between two points of a planned path
/// (rad, or m for a prismatic joint): more is a swing to another branch,
/// not following the path.
pub const PATH_STEP: f64 = 0.1;

/// The shares of each joint's speed limit a planned path may use between
/// two points, tried in turn. Half first: the rest is left for rounding
/// the corners within the acceleration limits and for catching up, so
/// the arm keeps to the path's times instead of trailing them. All of it
/// when no continuous path keeps to half: the arm may then trail the
/// path's times where it is fast, but never swings across.
pub const SPEED_SHARES: [f64; 2] = [0.5, 1.0];

/// Solves a tick spends planning a path: about 1.5 ms of a 20 ms period
/// on the shared arms (`arm_ik bench --whole-path` reports the planning
/// time). Counted, not timed, so a run plans the same way on any machine.
pub const PATH_SOLVES_PER_TICK: usize = 800;

/// A Cartesian path: `{"type":"cartesian_path","points":[{"position":[0.2,0,0.1],"time_from_start":1.0}, ...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CartesianPathMsg {
    /// When the path starts, on the node clock (s); 0 means as soon as it
    /// is planned.
    #[serde(default)]
    pub stamp: f64,
    /// The frame of every point: the chain's base link (empty means it).
    #[serde(default)]
    pub frame_id: String,
    pub points: Vec<CartesianPoint>,
}

/// One point of a [`CartesianPathMsg`]: where the tip is due, and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CartesianPoint {
    pub position: [f64; 3],
    /// `x, y, z, w`; none: the position only (what of a given one counts
    /// is the node's `target_orientation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<[f64; 4]>,
    /// Seconds from the path's start.
    pub time_from_start: f64,
}

/// What became of the latest Cartesian path.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CartesianStatus {
    /// Paths taken since the start.
    pub accepted: u64,
    /// Still being planned; the arm holds meanwhile.
    pub planning: bool,
    /// Points planned so far, of all.
    pub solved: usize,
    pub points: usize,
    /// Solves the planning ran.
    pub solves: usize,
    /// Node time the planning took (s).
    pub planned_s: f64,
    /// The share of the speed limits the planned path uses at most
    /// ([`SPEED_SHARES`]).
    pub speed_share: f64,
    /// The largest change of one joint between two planned points.
    pub largest_step: f64,
    /// Why the path was not planned or not run.
    pub failed: Option<String>,
}

/// The times of `points` (s from the start): finite, from 0 on, each
/// later than the one before.
pub fn check_times(points: &[CartesianPoint]) -> Result<Vec<f64>, String> {
    if points.is_empty() {
        return Err("the path has no points".into());
    }
    let mut before = None;
    let mut times = Vec::with_capacity(points.len());
    for (k, p) in points.iter().enumerate() {
        let t = p.time_from_start;
        if !t.is_finite() || t < 0.0 {
            return Err(format!("point {}: time_from_start {t}", k + 1));
        }
        if before.is_some_and(|b| t <= b) {
            return Err(format!(
                "point {}: time_from_start {t} s is not after the point before it",
                k + 1
            ));
        }
        before = Some(t);
        times.push(t);
    }
    Ok(times)
}

/// The largest change of each of the chain's `dof` joints between two
/// points `times` apart: within [`PATH_STEP`], and within `share` of the
/// joint's speed limit for the closest two.
pub fn step_bounds(limits: &[AxisLimits], dof: usize, times: &[f64], share: f64) -> Vec<f64> {
    let gap = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    limits[..dof]
        .iter()
        .map(|l| PATH_STEP.min(share * l.velocity * gap))
        .collect()
}

/// A path being planned.
#[derive(Debug, Clone)]
pub struct Planning {
    targets: Vec<Target>,
    times: Vec<f64>,
    /// The step bounds at each of [`SPEED_SHARES`], and the one being
    /// tried.
    max_step: Vec<Vec<f64>>,
    attempt: usize,
    /// Where the arm was when the planning began.
    start: Option<Vec<f64>>,
    stamp: f64,
    names: Vec<String>,
    /// Made at the first step, from where the arm is then, with the
    /// solver it searches with.
    search: Option<(PathSearch, Solver)>,
    began: Option<f64>,
}

impl Planning {
    /// A path of `targets` due at `times` (checked), for `chain`, whose
    /// joints have `limits`, to start at `stamp` (0: when planned).
    pub fn new(
        chain: &Chain,
        limits: &[AxisLimits],
        targets: Vec<Target>,
        times: Vec<f64>,
        stamp: f64,
    ) -> Planning {
        let max_step = SPEED_SHARES
            .iter()
            .map(|&share| step_bounds(limits, chain.dof(), &times, share))
            .collect();
        Planning {
            targets,
            times,
            max_step,
            attempt: 0,
            start: None,
            stamp,
            names: chain.joints.iter().map(|j| j.name.clone()).collect(),
            search: None,
            began: None,
        }
    }

    /// One tick's share of the planning at node time `now`, from `start`
    /// (where the arm is) when it begins: `None` while it goes on, then
    /// the joint trajectory to run, or why there is none.
    pub fn step(
        &mut self,
        solver: &Solver,
        start: &[f64],
        now: f64,
        status: &mut CartesianStatus,
    ) -> Option<Result<TrajectoryMsg, String>> {
        let began = *self.began.get_or_insert(now);
        let start = self.start.get_or_insert_with(|| start.to_vec());
        let (search, solver) = match &mut self.search {
            Some(s) => s,
            None => {
                let chain = solver.chain();
                let opts = PathOptions {
                    max_step: self.max_step[self.attempt].clone(),
                    ..PathOptions::with_step(chain, PATH_STEP)
                };
                let targets = self.targets.clone();
                // The node's solver, but with no pull along the
                // self-motion: the search itself tries the self-motion
                // (and the minimum-norm steps move the joints no faster
                // than the path asks); a pull in every solve would move
                // them more than the path does.
                let mut own = solver.clone();
                own.set_redundancy(Redundancy::Off);
                match PathSearch::new(chain, targets, start, opts) {
                    Ok(s) => self.search.insert((s, own)),
                    Err(e) => return Some(Err(e.to_string())),
                }
            }
        };
        let progress = search.step(solver, PATH_SOLVES_PER_TICK);
        (status.solved, status.points) = search.solved();
        status.planned_s = now - began;
        status.speed_share = SPEED_SHARES[self.attempt];
        match progress {
            Ok(Progress::Searching) => None,
            Err(PathError::Broken { .. }) if self.attempt + 1 < SPEED_SHARES.len() => {
                self.attempt += 1;
                self.search = None;
                None
            }
            Err(e) => Some(Err(describe(e))),
            Ok(Progress::Done) => {
                let found = self.search.take().expect("searching").0.finish();
                status.solves = found.solves;
                status.largest_step = found.largest_step;
                Some(Ok(self.trajectory(found.q, now)))
            }
        }
    }

    /// The joint path as a trajectory through every point at its time.
    fn trajectory(&self, q: Vec<Vec<f64>>, now: f64) -> TrajectoryMsg {
        TrajectoryMsg {
            // A start that passed while planning: start now, never partway.
            stamp: if self.stamp > now { self.stamp } else { 0.0 },
            joint_names: self.names.clone(),
            points: q
                .into_iter()
                .zip(&self.times)
                .map(|(positions, &t)| TrajectoryPoint {
                    positions,
                    velocities: Vec::new(),
                    accelerations: Vec::new(),
                    time_from_start: t,
                })
                .collect(),
        }
    }
}

/// A planning failure as the status says it, counting points from 1.
fn describe(e: PathError) -> String {
    match e {
        PathError::Broken { index, count } => format!(
            "point {} of {count}: no answer within the joint limits reaches it from the path before it with each joint moving at most {PATH_STEP} rad (less where its speed limit allows less between the two points): give the points closer together",
            index + 1
        ),
        PathError::Target { index, source } => format!("point {}: {source}", index + 1),
        other => other.to_string(),
    }
}
