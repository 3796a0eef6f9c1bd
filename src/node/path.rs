//! Built-in target paths: what `arm_ik sim` follows without another input,
//! and what the latency benchmark feeds the node, so both exercise the same
//! motion.
//!
//! The figure-eight is placed for the robot at hand: a path at a fixed
//! place in the base frame suits one arm and lies out of reach of a smaller
//! one (a Koch-sized arm reaches 0.15 m), where a simulation would only
//! show targets it cannot reach.

use crate::ik::{Common, JacobianOptions, Rng, SolveStatus, Solver, SolverConfig, Target};
use crate::model::Chain;
use nalgebra::Vector3;
use serde::Serialize;
use std::time::Duration;

/// A figure-eight in a plane of the base frame: `center + width ·
/// sin(ωt) · u + height · sin(2ωt) · v`, one loop per period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FigureEight {
    /// Metres, base frame.
    pub center: [f64; 3],
    /// Half the extent along `u` and along `v` (m).
    pub width: f64,
    pub height: f64,
    /// Unit directions of the plane in the base frame.
    pub u: [f64; 3],
    pub v: [f64; 3],
}

/// Configurations sampled to find where the tip can go.
const SAMPLES: usize = 400;
/// Points along a candidate path that must all be solved.
const CHECKS: usize = 16;
/// Candidate centres tried per plane and size.
const CENTRES: usize = 12;
/// Path width as a fraction of the reach, largest first.
const SCALES: [f64; 4] = [0.23, 0.12, 0.06, 0.03];

impl FigureEight {
    /// The project's desktop arm's: 16 x 8 cm, 20 cm in front of it, well
    /// inside its workspace, so every target is reachable and a benchmark
    /// times tracking, not failure.
    pub const DESK_ARM: FigureEight = FigureEight {
        center: [0.2, 0.0, 0.17],
        width: 0.08,
        height: 0.04,
        u: [0.0, 1.0, 0.0],
        v: [0.0, 0.0, 1.0],
    };

    /// The target at time `t` (s).
    pub fn at(&self, t: f64, period: f64) -> [f64; 3] {
        let w = std::f64::consts::TAU / period;
        let (a, b) = (
            self.width * (w * t).sin(),
            self.height * (2.0 * w * t).sin(),
        );
        std::array::from_fn(|i| self.center[i] + a * self.u[i] + b * self.v[i])
    }

    /// A figure-eight that `chain` can follow: [`DESK_ARM`](Self::DESK_ARM)
    /// when every point of it solves (arms of that size, on a table), else
    /// one scaled to the chain's reach (the farthest tip of a few hundred
    /// configurations sampled within the limits) and placed at a sampled
    /// tip position where every point of the path solves, trying the
    /// vertical plane across the base first, then the others, then smaller
    /// paths. When nothing solves (a chain that cannot reach a plane at
    /// all) it is the smallest path at the likeliest place, and the run
    /// reports its targets unreachable.
    pub fn for_chain(chain: &Chain) -> FigureEight {
        let Some(mut solver) = check_solver(chain) else {
            return Self::DESK_ARM;
        };
        if Self::DESK_ARM.solves(chain, &mut solver) {
            return Self::DESK_ARM;
        }
        let tips = sample_tips(chain);
        let reach = tips.iter().map(|p| p.norm()).fold(0.0, f64::max);
        let centres = candidate_centres(&tips, reach);
        let planes = [
            ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
            ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
            ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ];
        for scale in SCALES {
            for plane in planes {
                for &c in centres.iter().take(CENTRES) {
                    let path = Self::at_centre(c, reach * scale, plane);
                    if path.solves(chain, &mut solver) {
                        return path;
                    }
                }
            }
        }
        Self::at_centre(centres[0], reach * SCALES[3], planes[0])
    }

    fn at_centre(c: Vector3<f64>, width: f64, (u, v): ([f64; 3], [f64; 3])) -> FigureEight {
        FigureEight {
            center: c.into(),
            width,
            height: width / 2.0,
            u,
            v,
        }
    }

    /// Every checked point of the path solves, each seeded with the answer
    /// to the one before, as the node follows it.
    fn solves(&self, chain: &Chain, solver: &mut Solver) -> bool {
        let mut seed = chain.mid_configuration();
        (0..CHECKS).all(|k| {
            let p = self.at(k as f64 / CHECKS as f64, 1.0);
            match solver.solve(&Target::position(Vector3::from(p)), &seed) {
                Ok(s) if s.status == SolveStatus::Converged => {
                    seed = s.q;
                    true
                }
                _ => false,
            }
        })
    }
}

/// Tip positions of configurations spread over the joint ranges
/// (reproducible: a fixed seed).
fn sample_tips(chain: &Chain) -> Vec<Vector3<f64>> {
    let mut rng = Rng::new(0x5EED);
    let mut q = vec![0.0; chain.dof()];
    (0..SAMPLES)
        .map(|_| {
            rng.fill_configuration(chain, &mut q);
            chain.fk(&q).translation.vector
        })
        .collect()
}

/// Sampled tips, best first: at 60 % of the reach from the base (away
/// from the base, where the arm folds on itself, and from the edge of the
/// workspace, where it is stretched out), in front of the base (`+x`, REP
/// 103's forward, about as far out as up or down) and near the plane
/// through its `x` and `z` axes, where a person watching expects the arm to
/// work.
fn candidate_centres(tips: &[Vector3<f64>], reach: f64) -> Vec<Vector3<f64>> {
    let mut c = tips.to_vec();
    let score =
        |p: &Vector3<f64>| (p.norm() - 0.6 * reach).abs() + p.y.abs() + (p.x - 0.45 * reach).abs();
    c.sort_by(|a, b| score(a).total_cmp(&score(b)));
    c
}

/// A quick position-only solver for the checks: a path point that one
/// descent of 200 iterations from the previous point does not reach is
/// not one to put in a demonstration. Counted in iterations, not wall
/// time, so the same robot always gets the same path: with a 1 ms budget
/// a busy machine once moved the project arm's path elsewhere.
fn check_solver(chain: &Chain) -> Option<Solver> {
    let options = JacobianOptions {
        budget: Duration::from_secs(10),
        max_iterations: 200,
        restarts: false,
        ..JacobianOptions::default()
    };
    Solver::new(chain, SolverConfig::Jacobian(options), Common::default()).ok()
}

/// The project's arm's figure-eight at time `t` (s), one loop per
/// `period` (s).
pub fn figure_eight(t: f64, period: f64) -> [f64; 3] {
    FigureEight::DESK_ARM.at(t, period)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(urdf: &str) -> Chain {
        Chain::from_urdf_str(urdf, None, None).unwrap()
    }

    /// A Koch-sized arm: 0.15 m from the shoulder to the tip.
    const SMALL: &str = include_str!("../../tests/data/small_arm.urdf");

    #[test]
    fn the_path_fits_a_small_arm_and_every_point_solves() {
        let small = chain(SMALL);
        // The desk arm's path is out of this arm's reach.
        let mut solver = check_solver(&small).unwrap();
        assert!(!FigureEight::DESK_ARM.solves(&small, &mut solver));
        let path = FigureEight::for_chain(&small);
        assert!(path.width > 0.01, "{path:?}");
        assert!(path.solves(&small, &mut solver), "{path:?}");
        let far = (0..100)
            .map(|k| Vector3::from(path.at(k as f64 * 0.1, 10.0)).norm())
            .fold(0.0, f64::max);
        assert!(far < 0.18, "{path:?}");
    }

    #[test]
    fn the_desk_arm_keeps_its_path() {
        let arm = chain(include_str!("../../urdf/arm.urdf"));
        assert_eq!(FigureEight::for_chain(&arm), FigureEight::DESK_ARM);
        // The latency benchmark's path, as it always was.
        let w = std::f64::consts::TAU / 10.0;
        let t = 1.3;
        let old = [0.2, 0.08 * (w * t).sin(), 0.17 + 0.04 * (2.0 * w * t).sin()];
        assert_eq!(figure_eight(t, 10.0), old);
    }
}
