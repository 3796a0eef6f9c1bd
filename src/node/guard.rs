//! The collision guard: every tick's motion is checked before the servos
//! get it, whatever asked for it (a target, a joint command, a named pose,
//! the jog, a drag, the start-up move).
//!
//! The rule is the motion limiter's at a position limit, carried over to
//! distances: a tick is taken only if, after it, braking at the joints'
//! accelerations still stops the arm with every checked pair at least the
//! margin apart (or, when the arm is already closer, no closer than it
//! is). Otherwise the arm brakes now, on the path the tick before checked,
//! and stops short of contact. Checking a path, not only its ends, uses
//! the distance itself: no point of a link moves farther than its joints'
//! travel times their lever arms, so a pair farther apart than that cannot
//! meet on the way, however thin the obstacle (conservative advancement);
//! closer, the path is cut in halves until it is settled.

use super::motion::MotionLimiter;
use super::status::CollisionStatus;
use crate::collision::{CollisionError, Nearest, Workspace, WorkspaceWatch, World};
use std::path::Path;

/// Distances within this (m) of the threshold count as on it: rounding.
const EPS: f64 = 1e-9;
/// Halvings of a path segment before it counts as blocked.
const DEPTH: u32 = 12;
/// Ticks a braking path is followed at most.
const BRAKE_TICKS: usize = 2000;
/// How far beyond the margin (m) the jog and a drag start to slow down
/// toward an obstacle.
pub const SLOW_ZONE: f64 = 0.03;
/// The least share of its step a steered motion keeps inside the zone, so
/// it still arrives at the margin rather than crawling toward it forever.
const SLOWEST: f64 = 0.1;

/// The check of every tick's motion.
#[derive(Debug, Clone)]
pub struct Guard {
    world: World,
    watch: Option<WorkspaceWatch>,
    /// The motion with this tick's step taken, before it is accepted.
    trial: Option<MotionLimiter>,
    probe: Option<MotionLimiter>,
    travel: Vec<f64>,
    sweep: Vec<f64>,
    mid: Vec<f64>,
    /// Where the braking checked with the last accepted tick comes to
    /// rest: a refused tick brakes toward it, on the path that was checked.
    stop: Vec<f64>,
    /// `stop` holds that braking (false until a tick was checked).
    braking: bool,
    /// The closest pair where the arm is now.
    now: Nearest,
    /// A line for the front-end to log once.
    notice: Option<String>,
}

impl Guard {
    /// A guard on `world`, re-reading `workspace` when it changes.
    pub fn new(world: World, workspace: Option<&Path>) -> Guard {
        let links = world.body().links.len();
        Guard {
            watch: workspace.map(|p| WorkspaceWatch::new(p.to_path_buf())),
            world,
            trial: None,
            probe: None,
            travel: Vec::new(),
            sweep: vec![0.0; links],
            mid: Vec::new(),
            stop: Vec::new(),
            braking: false,
            now: Nearest {
                distance: f64::INFINITY,
                a: crate::collision::Owner::Floor,
                b: crate::collision::Owner::Floor,
            },
            notice: None,
        }
    }

    /// This guard with a new margin and workspace file (live parameters):
    /// the robot's body and the pairs left out stay; the file is read now,
    /// so one that does not load is refused before anything changes.
    pub fn retuned(&self, margin: f64, workspace: Option<&Path>) -> Result<Guard, CollisionError> {
        let mut world = self.world.clone();
        let ws = match workspace {
            Some(p) => Workspace::load(p)?,
            None => Workspace::default(),
        };
        world.set_workspace(&ws)?;
        world.set_margin(margin);
        let mut g = Guard::new(world, workspace);
        g.now = self.now;
        Ok(g)
    }

    pub fn world(&self) -> &World {
        &self.world
    }

    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The closest pair where the arm was last measured.
    pub fn nearest(&self) -> &Nearest {
        &self.now
    }

    /// What to log once, if anything.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// Takes a changed workspace file (from the next check on); a file
    /// that does not parse leaves the old workspace and says why.
    pub fn poll_workspace(&mut self, status: &mut CollisionStatus) {
        let Some(watch) = &mut self.watch else {
            return;
        };
        let Some(read) = watch.poll() else {
            return;
        };
        let taken = read.and_then(|ws| self.world.set_workspace(&ws));
        let note = match taken {
            Ok(()) => {
                status.workspace_error = None;
                status.workspace_loads += 1;
                format!(
                    "workspace {} reloaded: {} obstacles",
                    watch.path().display(),
                    self.world.obstacle_count()
                )
            }
            Err(e) => {
                let e: CollisionError = e;
                status.workspace_error = Some(e.to_string());
                format!("{e}; the previous workspace stays")
            }
        };
        self.notice = Some(note);
    }

    /// Measures where the arm is (`axes`) and records it in `status`.
    pub fn measure(&mut self, axes: &[f64], status: &mut CollisionStatus) {
        self.now = self.world.nearest(axes);
        status.clearance = self.now.distance;
        status.closest = self.world.describe(&self.now);
        if self.now.distance < status.min_clearance {
            status.min_clearance = self.now.distance;
            status.min_closest = status.closest.clone();
        }
        if self.now.distance < 0.0 {
            status.ticks_in_collision += 1;
        }
    }

    /// Says, once, that the arm starts closer than the margin.
    pub fn check_start(&mut self, status: &mut CollisionStatus) {
        if self.now.distance < self.world.margin() {
            let why = format!(
                "the start pose is in collision: {} {:.1} mm apart (margin {:.0} mm); only moves that increase the distance are allowed",
                self.world.describe(&self.now),
                self.now.distance * 1e3,
                self.world.margin() * 1e3
            );
            status.start_in_collision = Some(why.clone());
            self.notice = Some(why);
        }
    }

    /// How fast a steered motion that tracks `goal` from `motion` may
    /// go near something: `Some(share)` of full speed (in `SLOWEST..=1`,
    /// in proportion to how far inside [`SLOW_ZONE`] of the margin the
    /// arm is) when the motion brings the closest pair closer, `None`
    /// when it is outside the zone or does not come closer (backing out
    /// is free). The jog applies it to its own Cartesian speed, so the
    /// tip keeps to its line; a drag has no speed of its own and is
    /// slowed in joint space ([`Guard::slow`]).
    pub fn approach_share(&mut self, motion: &MotionLimiter, goal: &[f64]) -> Option<f64> {
        let inside = self.now.distance - self.world.margin();
        if inside >= SLOW_ZONE || !inside.is_finite() {
            return None;
        }
        let mut trial = self.trial.take().unwrap_or_else(|| motion.clone());
        trial.clone_from(motion);
        trial.track(goal);
        // Only whether something comes closer than now matters.
        let next = self
            .world
            .nearest_within(trial.position(), self.now.distance);
        self.trial = Some(trial);
        (next.distance < self.now.distance).then(|| (inside / SLOW_ZONE).clamp(SLOWEST, 1.0))
    }

    /// Slows a steered motion without a speed of its own (a drag) that
    /// approaches something (see [`Guard::approach_share`]): the arm's
    /// first `axes` of `goal` are pulled back toward where the arm is by
    /// that share, so it arrives at the margin slowly instead of braking
    /// there from full speed. True when it slowed the motion.
    pub fn slow(&mut self, motion: &MotionLimiter, goal: &mut [f64], axes: usize) -> bool {
        let Some(share) = self.approach_share(motion, goal) else {
            return false;
        };
        let at = motion.position();
        for (g, q) in goal.iter_mut().zip(at).take(axes) {
            *g = q + share * (*g - q);
        }
        true
    }

    /// One tick of `motion`, as `advance` would take it, if braking after
    /// it stays clear; otherwise `motion` brakes now. Returns the pair
    /// that stopped it, if one did.
    pub fn step(
        &mut self,
        motion: &mut MotionLimiter,
        advance: impl FnOnce(&mut MotionLimiter),
    ) -> Option<Nearest> {
        let threshold = self.world.margin().min(self.now.distance) - EPS;
        let mut trial = self.trial.take().unwrap_or_else(|| motion.clone());
        trial.clone_from(motion);
        advance(&mut trial);
        let verdict = self.brakes_clear(motion.position(), &trial, threshold);
        match verdict {
            Ok(()) => {
                // The braking just checked is the one taken if a later
                // tick is refused: the same goal, stepped the same way.
                stop_point_into(&trial, &mut self.stop);
                self.braking = true;
                std::mem::swap(motion, &mut trial);
                self.trial = Some(trial);
                None
            }
            Err(n) => {
                self.trial = Some(trial);
                if !self.braking {
                    // No braking checked yet (the first tick, a new
                    // world): from where the arm is.
                    stop_point_into(motion, &mut self.stop);
                    self.braking = true;
                }
                motion.set_goal(&self.stop);
                motion.step();
                Some(n)
            }
        }
    }

    /// True (`Ok`) when the path from `from` to `trial`'s position, and on
    /// while `trial` brakes to rest, keeps `threshold`.
    fn brakes_clear(
        &mut self,
        from: &[f64],
        trial: &MotionLimiter,
        threshold: f64,
    ) -> Result<(), Nearest> {
        // The whole of it at once: each joint travels at most its step
        // and its braking distance.
        self.travel.clear();
        let dt = trial.period();
        for (i, l) in trial.limits().iter().enumerate() {
            let v = trial.velocity()[i].abs();
            let braking = v * v / (2.0 * l.acceleration) + 1.5 * v * dt;
            self.travel
                .push((trial.position()[i] - from[i]).abs() + braking);
        }
        self.sweep_for_travel();
        if self
            .world
            .clear_of(from, threshold, Some(&self.sweep))
            .is_ok()
        {
            return Ok(());
        }
        // Near something: follow the step and the braking tick by tick.
        let to = trial.position().to_vec();
        self.segment(from, &to, threshold, 0)?;
        let mut probe = self.probe.take().unwrap_or_else(|| trial.clone());
        probe.clone_from(trial);
        let stop = stop_point(&probe);
        probe.set_goal(&stop);
        let mut result = Ok(());
        let mut prev = to;
        for _ in 0..BRAKE_TICKS {
            if probe.is_settled() {
                break;
            }
            probe.step();
            let next = probe.position().to_vec();
            if let Err(n) = self.segment(&prev, &next, threshold, 0) {
                result = Err(n);
                break;
            }
            prev = next;
        }
        self.probe = Some(probe);
        result
    }

    /// `Ok` when the straight joint-space path `a`-`b` keeps `threshold`.
    fn segment(&mut self, a: &[f64], b: &[f64], threshold: f64, depth: u32) -> Result<(), Nearest> {
        self.travel.clear();
        self.travel
            .extend(a.iter().zip(b).map(|(x, y)| (y - x).abs()));
        self.sweep_for_travel();
        let swept = self.sweep.iter().fold(0.0, |m: f64, s| m.max(*s));
        match self.world.clear_of(a, threshold, Some(&self.sweep)) {
            Ok(()) => return Ok(()),
            Err(n) if n.distance < threshold => return Err(n),
            // A piece this short (1/4096 of the step, or under a
            // micrometre) is settled by its end: an arm leaving a pair it
            // starts against cannot be certified from the start alone.
            Err(_) if depth >= DEPTH || swept < 1e-6 => {
                return self.world.clear_of(b, threshold, None);
            }
            Err(_) => {}
        }
        self.mid.clear();
        self.mid.extend(a.iter().zip(b).map(|(x, y)| 0.5 * (x + y)));
        let mid = std::mem::take(&mut self.mid);
        let r = self
            .segment(a, &mid, threshold, depth + 1)
            .and_then(|()| self.segment(&mid, b, threshold, depth + 1));
        self.mid = mid;
        r
    }

    fn sweep_for_travel(&mut self) {
        let body = self.world.body();
        self.sweep.resize(body.links.len(), 0.0);
        for (l, s) in self.sweep.iter_mut().enumerate() {
            *s = body.sweep(l, &self.travel);
        }
    }
}

/// Where each joint of `m` comes to rest braking at its acceleration from
/// its speed now (within its limits).
pub fn stop_point(m: &MotionLimiter) -> Vec<f64> {
    let mut out = Vec::new();
    stop_point_into(m, &mut out);
    out
}

/// [`stop_point`] into `out`.
fn stop_point_into(m: &MotionLimiter, out: &mut Vec<f64>) {
    out.clear();
    out.extend(
        m.limits()
            .iter()
            .zip(m.position().iter().zip(m.velocity()))
            .map(|(l, (&q, &v))| {
                (q + v * v.abs() / (2.0 * l.acceleration)).clamp(l.lower, l.upper)
            }),
    );
}
