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
//! so no tick is missed), through answers the collision check admits,
//! and the joint path found, every step of it within [`PATH_STEP`], runs
//! as a joint trajectory: on time, within every joint limit, through the
//! collision guard like any motion.

use super::motion::AxisLimits;
use super::trajectory::{TrajectoryMsg, TrajectoryPoint};
use crate::ik::{
    Admissible, Clock, Deadline, PathError, PathOptions, PathSearch, PathTiming, Progress,
    Redundancy, Solver, Target,
};
use crate::model::Chain;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The largest change of one joint between two points of a planned path
/// (rad, or m for a prismatic joint): more is a swing to another branch,
/// not following the path.
pub const PATH_STEP: f64 = 0.1;

/// The shares of each joint's speed limit a planned path may use between
/// two points, tried in turn. Half first: the rest is left for rounding
/// the corners within the acceleration limits and for catching up, so
/// the arm keeps to the path's times instead of trailing them. When no
/// continuous path keeps to half, the least share that finds one, a
/// tenth at a time: the more of the limit a path uses, the more the arm
/// trails its times where it is fast (it never swings across). Measured:
/// going straight to all of it, the Panda trailed a position track of
/// seed 7 by 101 mm; with tenths, 44 mm (benches/README.md, "Ten seeds
/// given whole").
pub const SPEED_SHARES: [f64; 6] = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// Solves a tick spends planning a path: about 1.5 ms of a 20 ms period
/// on the shared arms (`arm_ik bench --whole-path` reports the planning
/// time). Counted, so a run plans at the same pace on any machine; the
/// time cap, [`PATH_TIME_PER_TICK`], binds only where solves do not
/// converge.
pub const PATH_SOLVES_PER_TICK: usize = 800;

/// The most of a tick the planning may take, on the node's budget clock.
/// 800 solves that converge take about 2 ms; one that does not runs to
/// its own time budget, and 800 such would hold the control loop for
/// seconds, long enough for a servo board's watchdog to let the arm go.
/// The path found is the same however the search is split over ticks.
pub const PATH_TIME_PER_TICK: Duration = Duration::from_millis(8);

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
    /// Points planned so far, of all given.
    pub solved: usize,
    pub points: usize,
    /// Points put in between the given ones, on the lines joining them
    /// ([`LINE_STEP`]).
    pub between: usize,
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

/// Two given points farther apart than this (m), or turning the tip
/// more than [`LINE_SPAN_TURN`], are joined by a straight line: points
/// are put in between, [`LINE_STEP`] apart, so the tip follows the line,
/// not whatever curve the joints make between two distant points. Closer
/// points are joined as the joints move: a recorded or sampled path (a
/// few centimetres a point at 20 Hz) is followed as given, not bent into
/// chords between its samples; a chord between two poses sampled near a
/// wrist's singular pose can need the wrist to turn over, where the path
/// itself does not (measured: with every sample pair joined by lines, 6
/// of the UR5's ten 6D track sets and 3 of its five 5D ones could not be
/// planned; without, all were: benches/README.md, "Ten seeds given
/// whole").
pub const LINE_SPAN: f64 = 0.05;

/// The turn (rad) beyond which two given points are joined by a line, as
/// [`LINE_SPAN`] for the position.
pub const LINE_SPAN_TURN: f64 = 0.25;

/// The farthest the tip moves between two points put on a line (m):
/// MoveIt's Cartesian paths step 1 cm by default too.
pub const LINE_STEP: f64 = 0.01;

/// The most the tip turns between two points put on a line (rad), as
/// [`LINE_STEP`] for the position.
pub const LINE_TURN: f64 = 0.05;

/// The most points a path may have with those put in between: ten minutes
/// at 20 Hz (planning it takes about half a minute of ticks).
pub const MAX_PATH_POINTS: usize = 12_000;

/// A path with points put in between its given ones ([`LINE_STEP`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    pub targets: Vec<Target>,
    pub times: Vec<f64>,
    /// For each of the given points, where it is in `targets`.
    pub given: Vec<usize>,
}

impl Dense {
    /// How a point of `targets` is named to the user: the given point it
    /// is, or the two it lies between (counted from 1).
    pub fn name(&self, index: usize) -> String {
        let k = self.given.partition_point(|&g| g < index);
        let count = self.given.len();
        if self.given.get(k) == Some(&index) {
            format!("point {} of {count}", k + 1)
        } else {
            format!("the line from point {k} to point {} of {count}", k + 1)
        }
    }
}

/// `targets` due at `times`, with points put between each two more than
/// [`LINE_SPAN`] or [`LINE_SPAN_TURN`] apart that keep every step within
/// [`LINE_STEP`] and [`LINE_TURN`], due at times in proportion; refused
/// when that comes to more than [`MAX_PATH_POINTS`].
///
/// Not between two targets that ask more than an arm of `dof` joints can
/// give (a full pose for a 5-joint arm): such an arm reaches only some
/// orientations at each position, and a pose on the line between two it
/// reaches is mostly not one of them, so the points are taken as given.
pub fn densify(targets: &[Target], times: &[f64], dof: usize) -> Result<Dense, String> {
    let parts: Vec<usize> = targets
        .windows(2)
        .map(|w| {
            if w.iter().any(|t| t.constraints() > dof) {
                return 1;
            }
            let moved = (w[1].position - w[0].position).norm();
            let turned = w[0].orientation.turn_to(&w[1].orientation);
            if moved <= LINE_SPAN && turned <= LINE_SPAN_TURN {
                return 1;
            }
            let (moved, turned) = (moved / LINE_STEP, turned / LINE_TURN);
            // Saturates: a point a light-year away is refused below, not
            // wrapped.
            (moved.max(turned).ceil() as usize).max(1)
        })
        .collect();
    let count = parts.iter().fold(1usize, |n, &p| n.saturating_add(p));
    if count > MAX_PATH_POINTS {
        return Err(format!(
            "the path comes to {count} points {LINE_STEP} m apart along the lines between its points, more than {MAX_PATH_POINTS}: split it"
        ));
    }
    let mut dense = Dense {
        targets: Vec::with_capacity(count),
        times: Vec::with_capacity(count),
        given: Vec::with_capacity(targets.len()),
    };
    for (k, (target, &time)) in targets.iter().zip(times).enumerate() {
        if k > 0 {
            let (from, since) = (&targets[k - 1], times[k - 1]);
            for i in 1..parts[k - 1] {
                let s = i as f64 / parts[k - 1] as f64;
                dense.targets.push(from.toward(target, s));
                dense.times.push(since + s * (time - since));
            }
        }
        dense.given.push(dense.targets.len());
        dense.targets.push(target.clone());
        dense.times.push(time);
    }
    Ok(dense)
}

/// A path being planned.
#[derive(Debug, Clone)]
pub struct Planning {
    path: Dense,
    /// Each joint's speed limit.
    speed: Vec<f64>,
    /// Which of [`SPEED_SHARES`] is being tried.
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
    /// joints have `limits`, to start at `stamp` (0: when planned); refused
    /// when the lines between its points come to too many points
    /// ([`densify`]).
    pub fn new(
        chain: &Chain,
        limits: &[AxisLimits],
        targets: &[Target],
        times: &[f64],
        stamp: f64,
    ) -> Result<Planning, String> {
        Ok(Planning {
            path: densify(targets, times, chain.dof())?,
            speed: limits[..chain.dof()].iter().map(|l| l.velocity).collect(),
            attempt: 0,
            start: None,
            stamp,
            names: chain.joints.iter().map(|j| j.name.clone()).collect(),
            search: None,
            began: None,
        })
    }

    /// The points put in between the given ones.
    pub fn between(&self) -> usize {
        self.path.targets.len() - self.path.given.len()
    }

    /// The search's options at the speed share being tried: no joint
    /// steps more than [`PATH_STEP`] between two points, nor faster than
    /// that share of its speed limit.
    fn options(&self, solver: &Solver) -> PathOptions {
        let share = SPEED_SHARES[self.attempt];
        let chain = solver.chain();
        PathOptions {
            // The tracking solves' band: the path keeps as clear as they do.
            clearance_band: solver.clearance_band(),
            timing: Some(PathTiming {
                times: self.path.times.clone(),
                speed: self.speed.iter().map(|v| share * v).collect(),
            }),
            ..PathOptions::with_step(chain, PATH_STEP)
        }
    }

    /// One tick's share of the planning at node time `now` (at most
    /// [`PATH_SOLVES_PER_TICK`] solves, and [`PATH_TIME_PER_TICK`] on
    /// `clock`), from `start` (where the arm is) when it begins: `None`
    /// while it goes on, then the joint trajectory to run, or why there is
    /// none. Only answers `check` admits (clear of collisions) are on the
    /// path.
    pub fn step(
        &mut self,
        solver: &Solver,
        clock: Clock,
        start: &[f64],
        now: f64,
        check: &mut dyn Admissible,
        status: &mut CartesianStatus,
    ) -> Option<Result<TrajectoryMsg, String>> {
        let began = *self.began.get_or_insert(now);
        if self.search.is_none() {
            let chain = solver.chain();
            let opts = self.options(solver);
            let start = self.start.get_or_insert_with(|| start.to_vec());
            // The node's solver, but with no pull along the self-motion:
            // the search itself tries the self-motion (and the
            // minimum-norm steps move the joints no faster than the path
            // asks); a pull in every solve would move them more than the
            // path does.
            let mut own = solver.clone();
            own.set_redundancy(Redundancy::Off);
            match PathSearch::new(chain, self.path.targets.clone(), start, opts) {
                Ok(s) => self.search = Some((s, own)),
                Err(e) => return Some(Err(e.to_string())),
            }
        }
        let (search, solver) = self.search.as_mut().expect("made above");
        let deadline = Deadline::start(clock, PATH_TIME_PER_TICK);
        let mut progress = Ok(Progress::Searching);
        for _ in 0..PATH_SOLVES_PER_TICK {
            progress = search.step(solver, 1, check);
            if !matches!(progress, Ok(Progress::Searching)) || deadline.passed() {
                break;
            }
        }
        let (solved, _) = search.solved();
        status.solved = self.path.given.partition_point(|&g| g < solved);
        status.planned_s = now - began;
        status.speed_share = SPEED_SHARES[self.attempt];
        match progress {
            Ok(Progress::Searching) => None,
            Err(PathError::Broken { .. } | PathError::Inadmissible { .. })
                if self.attempt + 1 < SPEED_SHARES.len() =>
            {
                self.attempt += 1;
                self.search = None;
                None
            }
            Err(e) => Some(Err(describe(&self.path, e, check.refusal()))),
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
                .zip(&self.path.times)
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

/// A planning failure as the status says it, naming the point as the
/// user gave it ([`Dense::name`]) and, when the collision check refused
/// the answers there, the pair (`refusal`).
fn describe(path: &Dense, e: PathError, refusal: Option<String>) -> String {
    match e {
        PathError::Inadmissible { index, .. } => format!(
            "{}: every answer that reaches it from the path before it is in collision ({}); move the point, or the obstacle",
            path.name(index),
            refusal.as_deref().unwrap_or("a checked pair")
        ),
        PathError::Broken { index, .. } => format!(
            "{}: no answer was found within the joint limits that reaches it from the path before it with each joint moving at most {PATH_STEP} rad (less where its speed limit allows less between the two points): the path there may pass out of reach, through a joint limit, or faster than the joints may move; give it more time, or other points",
            path.name(index)
        ),
        PathError::Target { index, source } => format!("{}: {source}", path.name(index)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{UnitQuaternion, Vector3};

    #[test]
    fn points_are_put_on_the_line_between_two_far_apart_and_due_in_proportion() {
        let a = Target::pose(Vector3::new(0.1, 0.0, 0.2), UnitQuaternion::identity());
        let turned = UnitQuaternion::from_euler_angles(0.3, 0.0, 0.0);
        let b = Target::pose(Vector3::new(0.1, 0.045, 0.2), turned);
        let c = Target::pose(Vector3::new(0.1, 0.05, 0.2), turned);
        let dense = densify(&[a.clone(), b.clone(), c.clone()], &[1.0, 3.0, 3.5], 6).unwrap();
        // 45 mm in 1 cm steps is 5 parts, 0.3 rad in 0.05 rad steps 6:
        // the turn sets the count. The last two are 5 mm apart: none.
        assert_eq!(dense.given, vec![0, 6, 7]);
        assert_eq!(dense.targets[6], b);
        assert_eq!(dense.targets[7], c);
        for (k, w) in dense.targets.windows(2).enumerate() {
            let moved = (w[1].position - w[0].position).norm();
            let turned = w[0].orientation.turn_to(&w[1].orientation);
            assert!(
                moved <= LINE_STEP + 1e-12 && turned <= LINE_TURN + 1e-12,
                "{k}"
            );
            let on_line = (w[1].position - a.position).cross(&(c.position - a.position));
            assert!(on_line.norm() < 1e-12);
        }
        assert!((dense.times[3] - 2.0).abs() < 1e-12, "{:?}", dense.times);
        assert_eq!(dense.name(6), "point 2 of 3");
        assert_eq!(dense.name(3), "the line from point 1 to point 2 of 3");
    }

    #[test]
    fn a_path_that_comes_to_too_many_points_is_refused_saying_so() {
        let a = Target::position(Vector3::new(0.1, 0.0, 0.2));
        let far = Target::position(Vector3::new(1e9, 0.0, 0.2));
        let e = densify(&[a.clone(), far], &[0.0, 1.0], 6).unwrap_err();
        assert!(e.contains("more than 12000"), "{e}");
    }

    #[test]
    fn poses_an_arm_cannot_turn_freely_between_are_taken_as_given() {
        let a = Target::pose(Vector3::new(0.1, 0.0, 0.2), UnitQuaternion::identity());
        let b = Target::pose(Vector3::new(0.2, 0.0, 0.2), UnitQuaternion::identity());
        let five = densify(&[a.clone(), b.clone()], &[0.0, 1.0], 5).unwrap();
        assert_eq!(five.targets, vec![a.clone(), b.clone()]);
        // Their positions alone a 5-joint arm can follow on the line.
        let (a, b) = (Target::position(a.position), Target::position(b.position));
        let line = densify(&[a.clone(), b], &[0.0, 1.0], 5).unwrap();
        assert_eq!(line.given, vec![0, 10]);
        // Points as close as a path sampled at 20 Hz are joined as given.
        let near = Target::position(a.position + Vector3::new(0.0, 0.03, 0.0));
        let sampled = densify(&[a.clone(), near.clone()], &[0.0, 0.05], 5).unwrap();
        assert_eq!(sampled.targets, vec![a, near]);
    }
}
