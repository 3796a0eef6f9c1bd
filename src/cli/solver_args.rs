//! Solver choice and options shared by `solve` and `bench`.

use arm_ik::ik::{
    AnalyticOptions, Bend, CcdOptions, Closest, Common, FabrikOptions, JacobianOptions, JointMode,
    SolverConfig, SolverKind, Start, Tolerance,
};
use arm_ik::model::Chain;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct SolverArgs {
    /// jacobian, analytic, ccd or fabrik.
    #[arg(long, default_value = "jacobian")]
    pub solver: SolverKind,
    /// Position tolerance (m).
    #[arg(long, default_value_t = 1e-5)]
    pub pos_tol: f64,
    /// Orientation tolerance (rad).
    #[arg(long, default_value_t = 1e-5)]
    pub rot_tol: f64,
    /// Wall-clock budget of one solve (ms), jacobian solver.
    #[arg(long, default_value_t = 5.0)]
    pub budget_ms: f64,
    /// Iteration cap (jacobian: per attempt; ccd, fabrik: per solve).
    #[arg(long)]
    pub max_iterations: Option<u32>,
    /// CCD greediness in (0, 1].
    #[arg(long)]
    pub greediness: Option<f64>,
    /// CCD: raise greediness to 1 by the last iteration.
    #[arg(long)]
    pub incremental: bool,
    /// CCD, FABRIK: start from the rest pose instead of the seed.
    #[arg(long)]
    pub reset: bool,
    /// Analytic: knee/elbow bend: closest, positive, negative, or a pole
    /// point x,y,z.
    #[arg(long, default_value = "closest", allow_hyphen_values = true)]
    pub bend: String,
    /// Analytic: approach pitch (rad) for position-only targets on arms with
    /// a wrist.
    #[arg(long, allow_hyphen_values = true)]
    pub pitch: Option<f64>,
    /// Lock a joint at its seed value (repeatable).
    #[arg(long = "lock", value_name = "JOINT")]
    pub locks: Vec<String>,
    /// Jacobian: return the solution closest to the seed found within the
    /// budget, not the first one.
    #[arg(long)]
    pub closest: bool,
    /// With --closest: the weight of a joint in the distance to the seed,
    /// JOINT=W (repeatable; joints not named weigh 1).
    #[arg(long = "closest-weight", value_name = "JOINT=W", requires = "closest")]
    pub closest_weights: Vec<String>,
    /// Narrow a joint's range: JOINT=MIN:MAX (repeatable).
    #[arg(
        long = "clamp",
        value_name = "JOINT=MIN:MAX",
        allow_hyphen_values = true
    )]
    pub clamps: Vec<String>,
}

impl SolverArgs {
    /// The solver configuration and common options these arguments ask for.
    pub fn config(&self, chain: &Chain) -> anyhow::Result<(SolverConfig, Common)> {
        let start = if self.reset {
            Start::Reset(None)
        } else {
            Start::Warm
        };
        if !(self.budget_ms.is_finite() && self.budget_ms > 0.0) {
            anyhow::bail!(
                "--budget-ms {} must be a positive number of milliseconds",
                self.budget_ms
            );
        }
        if self.closest && self.solver != SolverKind::Jacobian {
            anyhow::bail!(
                "--closest is an option of the jacobian solver (the analytic solver's \
                 --bend closest already picks the solution nearest the seed)"
            );
        }
        let config = match self.solver {
            SolverKind::Jacobian => {
                let mut o = JacobianOptions {
                    budget: Duration::from_secs_f64(self.budget_ms / 1e3),
                    ..Default::default()
                };
                if let Some(m) = self.max_iterations {
                    o.max_iterations = m;
                }
                if self.closest {
                    o.closest = Some(Closest {
                        weights: self.closest_weights(chain)?,
                        ..Default::default()
                    });
                }
                SolverConfig::Jacobian(o)
            }
            SolverKind::Analytic => SolverConfig::Analytic(AnalyticOptions {
                bend: parse_bend(&self.bend)?,
                pitch: self.pitch,
            }),
            SolverKind::Ccd => {
                let mut o = CcdOptions {
                    incremental: self.incremental,
                    start,
                    ..Default::default()
                };
                if let Some(m) = self.max_iterations {
                    o.max_iterations = m;
                }
                if let Some(g) = self.greediness {
                    o.greediness = g;
                }
                SolverConfig::Ccd(o)
            }
            SolverKind::Fabrik => {
                let mut o = FabrikOptions {
                    start,
                    ..Default::default()
                };
                if let Some(m) = self.max_iterations {
                    o.max_iterations = m;
                }
                SolverConfig::Fabrik(o)
            }
        };
        let common = Common {
            tolerance: Tolerance {
                position: self.pos_tol,
                orientation: self.rot_tol,
            },
            modes: self.modes(chain)?,
        };
        Ok((config, common))
    }

    /// `--closest-weight` as one weight per joint (empty when none given).
    fn closest_weights(&self, chain: &Chain) -> anyhow::Result<Vec<f64>> {
        if self.closest_weights.is_empty() {
            return Ok(Vec::new());
        }
        let mut weights = vec![1.0; chain.dof()];
        for spec in &self.closest_weights {
            let (name, w) = spec
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--closest-weight '{spec}': expected JOINT=W"))?;
            let w: f64 = w
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("--closest-weight '{spec}': '{w}' is not a number"))?;
            weights[joint_index(chain, name)?] = w;
        }
        Ok(weights)
    }

    fn modes(&self, chain: &Chain) -> anyhow::Result<Vec<JointMode>> {
        if self.locks.is_empty() && self.clamps.is_empty() {
            return Ok(Vec::new());
        }
        let mut modes = vec![JointMode::Free; chain.dof()];
        let index = |name: &str| joint_index(chain, name);
        for name in &self.locks {
            modes[index(name)?] = JointMode::Lock;
        }
        for spec in &self.clamps {
            let (name, range) = spec
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--clamp '{spec}': expected JOINT=MIN:MAX"))?;
            let (lo, hi) = range
                .split_once(':')
                .ok_or_else(|| anyhow::anyhow!("--clamp '{spec}': expected JOINT=MIN:MAX"))?;
            let num = |s: &str| {
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| anyhow::anyhow!("--clamp '{spec}': '{s}' is not a number"))
            };
            modes[index(name)?] = JointMode::Clamp {
                min: num(lo)?,
                max: num(hi)?,
            };
        }
        Ok(modes)
    }
}

/// The index of joint `name` in the chain, or an error listing the joints.
fn joint_index(chain: &Chain, name: &str) -> anyhow::Result<usize> {
    chain
        .joints
        .iter()
        .position(|j| j.name == name)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no joint '{name}' in the chain (joints: {})",
                chain.joint_names().join(", ")
            )
        })
}

fn parse_bend(s: &str) -> anyhow::Result<Bend> {
    s.parse().map_err(|e| anyhow::anyhow!("--bend {e}"))
}
