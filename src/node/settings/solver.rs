//! Solver settings: which solver, its options, and per-joint locks and
//! clamps, with their defaults taken from the solvers' own.

use super::text::{JointClamp, JointWeight, bend_name};
use super::{SettingError, positive};
use crate::ik::{
    AnalyticOptions, Bend, CcdOptions, Closest, Common, FabrikOptions, GeoOptions, JacobianOptions,
    JointMode, OrientationMode, Pick, Redundancy, SolverConfig, SolverKind, Start, Tolerance,
};
use crate::model::Chain;
use std::time::Duration;

/// The solver and its options.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverSettings {
    pub solver: SolverKind,
    /// A target counts as reached within this distance (m).
    pub position_tolerance: f64,
    /// A target counts as reached within this angle (rad).
    pub orientation_tolerance: f64,
    /// Budget of one jacobian solve (ms), on the loop's clock
    /// ([`NodeConfig::budget_clock`](super::NodeConfig::budget_clock)).
    pub budget_ms: f64,
    /// Iteration cap (jacobian per attempt, ccd and fabrik per solve);
    /// `None`: the solver's own.
    pub max_iterations: Option<u32>,
    /// CCD: fraction of each joint's ideal turn per step, in (0, 1].
    pub greediness: f64,
    /// CCD: raise the greediness to 1 by the last iteration.
    pub incremental: bool,
    /// CCD, FABRIK: start every solve from the rest pose instead of the
    /// seed (answers independent of history, at the cost of smoothness).
    pub reset: bool,
    /// Analytic: which elbow (knee) solution.
    pub bend: Bend,
    /// Analytic: approach pitch (rad) of position-only targets; `None`: the
    /// solver chooses.
    pub pitch: Option<f64>,
    /// Joints held at their seed value.
    pub lock: Vec<String>,
    /// Joints kept within a narrower range than the URDF's.
    pub clamp: Vec<JointClamp>,
    /// Jacobian: return the in-limit solution nearest the seed found within
    /// the budget, not the first one.
    pub closest: bool,
    /// With `closest`: per-joint weights of the distance (joints not named
    /// weigh 1; 0 leaves a joint out).
    pub closest_weight: Vec<JointWeight>,
    /// Jacobian: what a redundant arm's self-motion is steered toward on
    /// every solve (limits: away from the joint limits, so that following
    /// a path never drifts into one).
    pub redundancy: Redundancy,
    /// Jacobian: gain of that steering in [0, 1] (0: none).
    pub null_space_gain: f64,
    /// Jacobian, with the collision check on: the band above the margin
    /// (m) within which a redundant arm's self-motion is also steered away
    /// from the closest pair (0: never).
    pub clearance_band: f64,
    /// What a pose target's orientation asks: all of it, where the tool
    /// axis points (a 5D target, the roll free; the setting `tool_axis`,
    /// the tip's +z by default, is the mode's
    /// [`tool`](OrientationMode::with_tool)), or nothing.
    pub target_orientation: OrientationMode,
}

impl Default for SolverSettings {
    /// The solvers' own defaults: a warm-started Jacobian solver with the
    /// benchmark tolerances.
    fn default() -> Self {
        let tolerance = Tolerance::default();
        let ccd = CcdOptions::default();
        let analytic = AnalyticOptions::default();
        SolverSettings {
            solver: SolverKind::Jacobian,
            position_tolerance: tolerance.position,
            orientation_tolerance: tolerance.orientation,
            budget_ms: JacobianOptions::default().budget.as_secs_f64() * 1e3,
            max_iterations: None,
            greediness: ccd.greediness,
            incremental: ccd.incremental,
            reset: ccd.start != Start::Warm,
            bend: analytic.bend,
            pitch: analytic.pitch,
            lock: Vec::new(),
            clamp: Vec::new(),
            closest: JacobianOptions::default().closest.is_some(),
            closest_weight: Vec::new(),
            redundancy: JacobianOptions::default().redundancy,
            null_space_gain: JacobianOptions::default().null_space_gain,
            clearance_band: JacobianOptions::default().clearance_band,
            target_orientation: OrientationMode::Full,
        }
    }
}
impl SolverSettings {
    /// Checks every value (the joint names are checked against the chain in
    /// [`SolverSettings::solver_config`]).
    pub fn validate(&self) -> Result<(), SettingError> {
        positive("position_tolerance", self.position_tolerance)?;
        positive("orientation_tolerance", self.orientation_tolerance)?;
        self.budget()?;
        if self.max_iterations == Some(0) {
            return Err(SettingError::new(
                "max_iterations",
                0,
                "must be at least 1 (unset, or 0 as a ROS parameter: the solver's own)",
            ));
        }
        let g = self.greediness;
        if !(g > 0.0 && g <= 1.0) {
            return Err(SettingError::new("greediness", g, "must be in (0, 1]"));
        }
        if let Bend::Pole(p) = self.bend
            && !p.iter().all(|v| v.is_finite())
        {
            return Err(SettingError::new(
                "bend",
                bend_name(&self.bend),
                "is not finite",
            ));
        }
        if let Some(p) = self.pitch
            && !p.is_finite()
        {
            return Err(SettingError::new(
                "pitch",
                p,
                "must be a finite angle (rad)",
            ));
        }
        if let Some(name) = self.lock.iter().find(|n| n.trim().is_empty()) {
            return Err(SettingError::new(
                "lock",
                format!("'{name}'"),
                "is not a joint name",
            ));
        }
        self.check_closest()?;
        if let Err(e) = self.target_orientation.check_solver(self.solver) {
            return Err(SettingError::new(
                "target_orientation",
                self.target_orientation,
                e.to_string(),
            ));
        }
        let k = self.null_space_gain;
        if !(k.is_finite() && (0.0..=1.0).contains(&k)) {
            return Err(SettingError::new("null_space_gain", k, "must be in [0, 1]"));
        }
        let b = self.clearance_band;
        if !(b.is_finite() && b >= 0.0) {
            return Err(SettingError::new(
                "clearance_band",
                b,
                "must be a distance of 0 or more (m)",
            ));
        }
        for c in &self.clamp {
            if !(c.min.is_finite() && c.max.is_finite() && c.min <= c.max) {
                return Err(SettingError::new(
                    "clamp",
                    format!("'{c}'"),
                    "needs finite MIN <= MAX",
                ));
            }
        }
        Ok(())
    }

    /// The closest mode is the Jacobian and geo solvers' (the analytic
    /// solver's `bend: closest` already picks the answer nearest the seed);
    /// weights only mean something with it (and only to the Jacobian
    /// solver: the geo solver's nearest answer is unweighted).
    fn check_closest(&self) -> Result<(), SettingError> {
        if self.closest && !matches!(self.solver, SolverKind::Jacobian | SolverKind::Geo) {
            return Err(SettingError::new(
                "closest",
                true,
                format!(
                    "is an option of the jacobian and geo solvers, not {} (the analytic solver's bend closest picks the answer nearest the seed)",
                    self.solver
                ),
            ));
        }
        if self.solver == SolverKind::Geo && !self.closest_weight.is_empty() {
            let list: Vec<String> = self.closest_weight.iter().map(|w| w.to_string()).collect();
            return Err(SettingError::new(
                "closest_weight",
                format!("'{}'", list.join(",")),
                "is an option of the jacobian solver (the geo solver's nearest answer is unweighted)",
            ));
        }
        if !self.closest && !self.closest_weight.is_empty() {
            let list: Vec<String> = self.closest_weight.iter().map(|w| w.to_string()).collect();
            return Err(SettingError::new(
                "closest_weight",
                format!("'{}'", list.join(",")),
                "needs closest",
            ));
        }
        for w in &self.closest_weight {
            if !(w.weight.is_finite() && w.weight >= 0.0) {
                return Err(SettingError::new(
                    "closest_weight",
                    format!("'{w}'"),
                    "needs a finite weight >= 0",
                ));
            }
        }
        Ok(())
    }

    /// The closest mode's options on `chain`, when it is on.
    fn closest(&self, chain: &Chain) -> Result<Option<Closest>, SettingError> {
        if !self.closest {
            return Ok(None);
        }
        let mut weights = Vec::new();
        if !self.closest_weight.is_empty() {
            weights = vec![1.0; chain.dof()];
            for w in &self.closest_weight {
                let i = joint_index(chain, &w.joint)
                    .map_err(|why| SettingError::new("closest_weight", format!("'{w}'"), why))?;
                weights[i] = w.weight;
            }
        }
        Ok(Some(Closest {
            weights,
            ..Closest::default()
        }))
    }

    fn budget(&self) -> Result<Duration, SettingError> {
        positive("budget_ms", self.budget_ms)?;
        Duration::try_from_secs_f64(self.budget_ms / 1e3)
            .map_err(|e| SettingError::new("budget_ms", self.budget_ms, e.to_string()))
    }

    /// The solver configuration and the common options (tolerances, joint
    /// modes) on `chain`. Options of other solvers are ignored.
    pub fn solver_config(&self, chain: &Chain) -> Result<(SolverConfig, Common), SettingError> {
        self.validate()?;
        let start = if self.reset {
            Start::Reset(None)
        } else {
            Start::Warm
        };
        let config = match self.solver {
            SolverKind::Jacobian => {
                let defaults = JacobianOptions::default();
                SolverConfig::Jacobian(JacobianOptions {
                    budget: self.budget()?,
                    max_iterations: self.max_iterations.unwrap_or(defaults.max_iterations),
                    closest: self.closest(chain)?,
                    redundancy: self.redundancy,
                    null_space_gain: self.null_space_gain,
                    clearance_band: self.clearance_band,
                    ..defaults
                })
            }
            SolverKind::Analytic => SolverConfig::Analytic(AnalyticOptions {
                bend: self.bend,
                pitch: self.pitch,
            }),
            SolverKind::Ccd => {
                let defaults = CcdOptions::default();
                SolverConfig::Ccd(CcdOptions {
                    max_iterations: self.max_iterations.unwrap_or(defaults.max_iterations),
                    greediness: self.greediness,
                    incremental: self.incremental,
                    start,
                    ..defaults
                })
            }
            SolverKind::Geo => SolverConfig::Geo(GeoOptions {
                pick: if self.closest {
                    Pick::Closest
                } else {
                    Pick::First
                },
            }),
            SolverKind::Fabrik => {
                let defaults = FabrikOptions::default();
                SolverConfig::Fabrik(FabrikOptions {
                    max_iterations: self.max_iterations.unwrap_or(defaults.max_iterations),
                    start,
                    ..defaults
                })
            }
        };
        let common = Common {
            tolerance: Tolerance {
                position: self.position_tolerance,
                orientation: self.orientation_tolerance,
            },
            modes: self.modes(chain)?,
        };
        Ok((config, common))
    }

    /// Per-joint modes; empty when every joint is free. A joint named
    /// twice, or not in the chain, is refused with the chain's joints listed.
    fn modes(&self, chain: &Chain) -> Result<Vec<JointMode>, SettingError> {
        if self.lock.is_empty() && self.clamp.is_empty() {
            return Ok(Vec::new());
        }
        let mut modes = vec![None; chain.dof()];
        let locks = self
            .lock
            .iter()
            .map(|n| ("lock", n.as_str(), format!("'{n}'"), JointMode::Lock));
        let clamps = self.clamp.iter().map(|c| {
            let mode = JointMode::Clamp {
                min: c.min,
                max: c.max,
            };
            ("clamp", c.joint.as_str(), format!("'{c}'"), mode)
        });
        for (setting, joint, value, mode) in locks.chain(clamps) {
            let bad = |why: String| SettingError::new(setting, &value, why);
            let i = joint_index(chain, joint).map_err(bad)?;
            mode.validate(&chain.joints[i])
                .map_err(|e| bad(e.to_string()))?;
            if modes[i].replace(mode).is_some() {
                return Err(bad(format!("joint '{joint}' is locked or clamped twice")));
            }
        }
        Ok(modes.into_iter().map(Option::unwrap_or_default).collect())
    }
}

/// Where joint `name` is in the chain, or why not (listing the joints).
fn joint_index(chain: &Chain, name: &str) -> Result<usize, String> {
    chain
        .joints
        .iter()
        .position(|j| j.name == name)
        .ok_or_else(|| {
            format!(
                "no joint '{name}' in the chain (joints: {})",
                chain.joint_names().join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::settings::{parse_clamps, parse_locks, parse_weights};
    use nalgebra::Vector3;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
    }

    #[test]
    fn defaults_are_the_solvers_own() {
        let (solver, common) = SolverSettings::default().solver_config(&arm()).unwrap();
        assert_eq!(solver, SolverConfig::default_for(SolverKind::Jacobian));
        assert_eq!(common, Common::default());
        for kind in SolverKind::ALL {
            let s = SolverSettings {
                solver: kind,
                ..SolverSettings::default()
            };
            assert_eq!(
                s.solver_config(&arm()).unwrap().0,
                SolverConfig::default_for(kind),
                "{kind}"
            );
        }
    }

    #[test]
    fn options_map_onto_each_solver() {
        let chain = arm();
        let s = SolverSettings {
            budget_ms: 2.0,
            max_iterations: Some(7),
            ..SolverSettings::default()
        };
        let SolverConfig::Jacobian(o) = s.solver_config(&chain).unwrap().0 else {
            panic!("not jacobian");
        };
        assert_eq!((o.budget, o.max_iterations), (Duration::from_millis(2), 7));
        let s = SolverSettings {
            solver: SolverKind::Ccd,
            greediness: 0.5,
            incremental: true,
            reset: true,
            ..SolverSettings::default()
        };
        let SolverConfig::Ccd(o) = s.solver_config(&chain).unwrap().0 else {
            panic!("not ccd");
        };
        assert_eq!(
            (o.greediness, o.incremental, o.start),
            (0.5, true, Start::Reset(None))
        );
        let s = SolverSettings {
            solver: SolverKind::Analytic,
            bend: Bend::Pole(Vector3::new(0.1, 0.0, 0.3)),
            pitch: Some(-0.5),
            ..SolverSettings::default()
        };
        assert_eq!(
            s.solver_config(&chain).unwrap().0,
            SolverConfig::Analytic(AnalyticOptions {
                bend: Bend::Pole(Vector3::new(0.1, 0.0, 0.3)),
                pitch: Some(-0.5)
            })
        );
    }

    #[test]
    fn locks_and_clamps_resolve_against_the_chain() {
        let chain = arm();
        let s = SolverSettings {
            lock: parse_locks(" wrist_roll ").unwrap(),
            clamp: parse_clamps("shoulder=-0.5:1.0, elbow=0:1").unwrap(),
            ..SolverSettings::default()
        };
        let modes = s.solver_config(&chain).unwrap().1.modes;
        assert_eq!(
            modes,
            [
                JointMode::Free,
                JointMode::Clamp {
                    min: -0.5,
                    max: 1.0
                },
                JointMode::Clamp { min: 0.0, max: 1.0 },
                JointMode::Free,
                JointMode::Lock
            ]
        );
        let e = SolverSettings {
            clamp: parse_clamps("nope=0:1").unwrap(),
            ..SolverSettings::default()
        }
        .solver_config(&chain)
        .unwrap_err();
        assert_eq!(e.name, "clamp");
        assert!(
            e.why.contains("'nope'") && e.why.contains("base_yaw, shoulder"),
            "{e}"
        );
        let e = SolverSettings {
            lock: vec!["elbow".into()],
            clamp: parse_clamps("elbow=0:1").unwrap(),
            ..SolverSettings::default()
        }
        .solver_config(&chain)
        .unwrap_err();
        assert!(e.why.contains("twice"), "{e}");
        let e = SolverSettings {
            clamp: parse_clamps("elbow=5:6").unwrap(),
            ..SolverSettings::default()
        }
        .solver_config(&chain)
        .unwrap_err();
        assert!(e.name == "clamp" && e.why.contains("outside"), "{e}");
    }

    #[test]
    fn bad_values_are_refused_naming_the_setting() {
        /// Makes one value bad.
        type Spoil = fn(&mut SolverSettings);
        let cases: [(&str, Spoil); 13] = [
            ("position_tolerance", |s| s.position_tolerance = -1.0),
            ("orientation_tolerance", |s| {
                s.orientation_tolerance = f64::NAN
            }),
            ("budget_ms", |s| s.budget_ms = 0.0),
            ("budget_ms", |s| s.budget_ms = 1e300),
            ("max_iterations", |s| s.max_iterations = Some(0)),
            ("greediness", |s| s.greediness = 0.0),
            ("greediness", |s| s.greediness = 1.5),
            ("pitch", |s| s.pitch = Some(f64::INFINITY)),
            ("bend", |s| {
                s.bend = Bend::Pole(Vector3::new(f64::NAN, 0.0, 0.0))
            }),
            ("lock", |s| s.lock = vec![" ".into()]),
            // The closed forms have no 5D targets.
            ("target_orientation", |s| {
                (s.solver, s.target_orientation) = (SolverKind::Geo, OrientationMode::axis())
            }),
            ("target_orientation", |s| {
                (s.solver, s.target_orientation) = (SolverKind::Analytic, OrientationMode::axis())
            }),
            ("clamp", |s| {
                s.clamp = vec![JointClamp {
                    joint: "elbow".into(),
                    min: 1.0,
                    max: 0.0,
                }]
            }),
        ];
        for (name, spoil) in cases {
            let mut s = SolverSettings::default();
            spoil(&mut s);
            assert_eq!(s.validate().unwrap_err().name, name);
        }
    }

    #[test]
    fn the_closest_mode_is_the_jacobian_solvers_and_its_weights_name_joints() {
        let chain = arm();
        let s = SolverSettings {
            closest: true,
            closest_weight: parse_weights("elbow=2,wrist_roll=0").unwrap(),
            ..SolverSettings::default()
        };
        let SolverConfig::Jacobian(o) = s.solver_config(&chain).unwrap().0 else {
            panic!("not jacobian");
        };
        let c = o.closest.unwrap();
        assert_eq!(c.weights, [1.0, 1.0, 2.0, 1.0, 0.0]);
        let refused = |s: SolverSettings| s.solver_config(&chain).unwrap_err();
        let e = refused(SolverSettings {
            solver: SolverKind::Ccd,
            ..s.clone()
        });
        assert_eq!(e.name, "closest", "{e}");
        let e = refused(SolverSettings {
            closest: false,
            ..s.clone()
        });
        assert_eq!(e.name, "closest_weight", "{e}");
        let e = refused(SolverSettings {
            closest_weight: parse_weights("elbw=2").unwrap(),
            ..s
        });
        assert!(
            e.name == "closest_weight" && e.to_string().contains("elbw"),
            "{e}"
        );
    }
}
