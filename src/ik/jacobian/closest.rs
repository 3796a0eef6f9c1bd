//! The closest mode's two pieces: keeping the solution nearest the seed
//! across restarts, and sliding a redundant arm's solution along its
//! self-motion toward the seed.

use super::Workspace;
use super::descent::{Descent, Patience};
use super::linalg::{mul, normal_equations};
use crate::ik::metric::{joint_distance, pose_error};
use crate::model::Chain;

/// The nearest solution so far, and when it last improved.
#[derive(Debug, Clone, Copy)]
pub(super) struct Nearest {
    pub distance: f64,
    /// The solve's iteration count when `distance` last improved.
    improved_at: u32,
}

impl Nearest {
    pub(super) fn new() -> Nearest {
        Nearest {
            distance: f64::INFINITY,
            improved_at: 0,
        }
    }

    /// Records a solution at `distance`, found by iteration `at` of the
    /// solve; true when it is the nearest yet.
    pub(super) fn offer(&mut self, distance: f64, at: u32) -> bool {
        // Rounding-level gains are the same solution found again.
        if distance < self.distance - 1e-9 {
            self.distance = distance;
            self.improved_at = at;
            true
        } else {
            false
        }
    }

    /// True once `patience` iterations brought no nearer solution.
    pub(super) fn settled(&self, at: u32, patience: u32) -> bool {
        self.distance.is_finite() && at.saturating_sub(self.improved_at) >= patience
    }
}

/// What the closest mode measures a solution against.
pub(super) struct Aim<'a> {
    pub seed: &'a [f64],
    /// Joint weights, the largest 1 (empty: all 1).
    pub weights: &'a [f64],
    /// The arm has self-motion for this target: slide along it.
    pub slide: bool,
}

impl Aim<'_> {
    /// On a converged `ws.q`: turns revolute joints toward the seed,
    /// slides along the self-motion toward it, and keeps the result in
    /// `ws.best` when it is the nearest solution yet (`at`: the solve's
    /// iteration count). Returns the iterations used.
    pub(super) fn consider(
        &self,
        descent: &Descent,
        ws: &mut Workspace,
        at: u32,
        nearest: &mut Nearest,
    ) -> u32 {
        let mut iterations = 0;
        ws.bounds.wind_toward(&mut ws.q, self.seed);
        if self.slide {
            iterations = slide(descent, ws, self.seed, self.weights);
            ws.bounds.wind_toward(&mut ws.q, self.seed);
        }
        let d = joint_distance(descent.chain, &ws.q, self.seed, self.weights);
        if nearest.offer(d, at + iterations) {
            ws.best.copy_from_slice(&ws.q);
        }
        iterations
    }
}

/// Largest number of slide steps per solution.
const SLIDE_STEPS: u32 = 12;
/// Iterations to bring a slide step back onto the solutions.
const SLIDE_CORRECTION: u32 = 6;
/// The step is halved after a failed one, down to this fraction.
const SLIDE_MIN_GAIN: f64 = 1.0 / 16.0;
/// Damping of the null-space projector: small, the arm is at a solution.
const SLIDE_DAMPING: f64 = 1e-9;

/// Moves the solution in `ws.q` toward `seed` along the task's null space
/// (the self-motion of a redundant arm), each step brought back onto the
/// solutions by a short descent and kept only when it converged nearer.
/// `ws.frames` must hold the Jacobian at `ws.q`; it does again on return.
/// Returns the iterations used.
pub(super) fn slide(descent: &Descent, ws: &mut Workspace, seed: &[f64], weights: &[f64]) -> u32 {
    let chain: &Chain = descent.chain;
    let correct = Descent {
        max_iterations: SLIDE_CORRECTION,
        patience: Patience::PATIENT,
        steer: None,
        toward: None,
        deadline: descent.deadline.clone(),
        ..*descent
    };
    let mut nearest = joint_distance(chain, &ws.q, seed, weights);
    let mut gain = 1.0;
    let mut iterations = 0;
    for _ in 0..SLIDE_STEPS {
        null_step(descent, ws, seed, weights, gain);
        ws.anchor.copy_from_slice(&ws.q);
        std::mem::swap(&mut ws.q, &mut ws.trial);
        let attempt = correct.run(ws, None);
        iterations += attempt.iterations + 1;
        let d = joint_distance(chain, &ws.q, seed, weights);
        if attempt.converged && d < nearest - 1e-9 {
            nearest = d;
            gain = (2.0 * gain).min(1.0);
        } else {
            ws.q.copy_from_slice(&ws.anchor);
            chain.jacobian(&ws.q, &mut ws.frames);
            gain *= 0.5;
            if gain < SLIDE_MIN_GAIN {
                break;
            }
        }
    }
    iterations
}

/// `ws.trial = ws.q + (I - (A+λI)⁻¹ A) k W (seed - q)`, clamped: the pull
/// toward the seed that the task does not see. Joints on a bound that the
/// pull pushes outward, and locked joints, stay.
fn null_step(descent: &Descent, ws: &mut Workspace, seed: &[f64], weights: &[f64], gain: f64) {
    let n = ws.q.len();
    let tip = ws.frames.tip;
    let r = descent.residual(pose_error(&tip, descent.target));
    let (wp, wo) = descent.weights();
    normal_equations(
        &ws.frames,
        (wp, wo),
        &r.e,
        descent.free_roll(&ws.frames).as_ref(),
        &mut ws.normal,
        &mut ws.rhs,
    );
    for (i, s) in seed.iter().enumerate() {
        let w = weights.get(i).copied().unwrap_or(1.0);
        ws.pull[i] = gain * w * (s - ws.q[i]);
        ws.active[i] = !ws.bounds.locked[i] && !ws.bounds.blocks(i, ws.q[i], ws.pull[i]);
        if !ws.active[i] {
            ws.pull[i] = 0.0;
        }
    }
    if !ws.factor.factor(&ws.normal, &ws.active, SLIDE_DAMPING) {
        ws.trial.copy_from_slice(&ws.q);
        return;
    }
    mul(&ws.normal, &ws.pull, &mut ws.scratch);
    ws.factor
        .substitute(&ws.scratch, &ws.active, &mut ws.projected);
    for i in 0..n {
        ws.trial[i] = ws
            .bounds
            .clamp_one(i, ws.q[i] + ws.pull[i] - ws.projected[i]);
    }
}
