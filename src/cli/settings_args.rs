//! The solver, motion and gripper flags shared by `solve`, `bench`, `sim`,
//! `latency` and `replay`: thin clap structs over the library's
//! [`SolverSettings`] and [`MotionSettings`], whose defaults they show and
//! whose checks they use, so the CLI and the ROS node accept and refuse
//! the same values. Each field is named as the setting (the ROS parameter)
//! is, so an error about a setting can be shown with its flag.

use super::values;
use arm_ik::ik::{Bend, Common, OrientationMode, Redundancy, SolverConfig, SolverKind};
use arm_ik::model::Chain;
use arm_ik::node::settings::{
    AUTO_GRIPPER, BEND_KEYWORDS, GripperJoint, parse_bend, parse_clamps, parse_locks, parse_weights,
};
use arm_ik::node::{
    GripperSettings, JogSettings, MotionSettings, NodeCore, NodeError, NodeSettings, SettingError,
    SolverSettings, TwistFrame,
};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use nalgebra::{Unit, Vector3};

fn solver_kind() -> impl TypedValueParser<Value = SolverKind> {
    PossibleValuesParser::new(SolverKind::ALL.map(SolverKind::name))
        .map(|s| s.parse::<SolverKind>().expect("a listed solver name"))
}

fn target_orientation() -> impl TypedValueParser<Value = OrientationMode> {
    PossibleValuesParser::new(OrientationMode::NAMES)
        .map(|s| s.parse::<OrientationMode>().expect("a listed mode"))
}

fn redundancy() -> impl TypedValueParser<Value = Redundancy> {
    PossibleValuesParser::new(Redundancy::ALL.map(Redundancy::name))
        .map(|s| s.parse::<Redundancy>().expect("a listed objective"))
}

fn bend(s: &str) -> Result<Bend, String> {
    parse_bend(s).map_err(|e| e.why)
}

/// The keyword of the default bend, for `--help`.
fn default_bend() -> &'static str {
    let default = SolverSettings::default().bend;
    BEND_KEYWORDS
        .iter()
        .find(|(_, b)| *b == default)
        .map(|(name, _)| *name)
        .expect("the default bend is a keyword")
}

#[derive(Debug, clap::Args)]
pub struct SolverArgs {
    /// IK solver.
    #[arg(long, default_value_t = SolverSettings::default().solver, value_parser = solver_kind())]
    pub solver: SolverKind,
    /// Position tolerance (m), above 0 and at most 1e6.
    #[arg(long = "pos-tol", value_name = "POS_TOL", value_parser = values::positive,
          default_value_t = SolverSettings::default().position_tolerance)]
    pub position_tolerance: f64,
    /// Orientation tolerance (rad), above 0 and at most 1e6.
    #[arg(long = "rot-tol", value_name = "ROT_TOL", value_parser = values::positive,
          default_value_t = SolverSettings::default().orientation_tolerance)]
    pub orientation_tolerance: f64,
    /// Time budget of one solve (ms), jacobian solver; above 0 and at most
    /// 1e6 (1000 s). Wall time on real time; the thread's CPU time on
    /// simulated time (`sim`, `replay`) and with `--budget-clock cpu`.
    #[arg(long, value_parser = values::positive, default_value_t = SolverSettings::default().budget_ms)]
    pub budget_ms: f64,
    /// Iteration cap (jacobian: per attempt; ccd, fabrik: per solve);
    /// default: the solver's own.
    #[arg(long)]
    pub max_iterations: Option<u32>,
    /// CCD greediness in (0, 1].
    #[arg(long, value_parser = values::fraction, default_value_t = SolverSettings::default().greediness)]
    pub greediness: f64,
    /// CCD: raise greediness to 1 by the last iteration.
    #[arg(long)]
    pub incremental: bool,
    /// CCD, FABRIK: start from the rest pose instead of the seed.
    #[arg(long)]
    pub reset: bool,
    /// Analytic: knee/elbow bend: closest, positive, negative, or a pole
    /// point x,y,z.
    #[arg(long, default_value = default_bend(), value_parser = bend, allow_hyphen_values = true)]
    pub bend: Bend,
    /// Analytic: approach pitch (rad) for position-only targets on arms with
    /// a wrist, at most 1e6 in size; default: the solver chooses.
    #[arg(long, allow_hyphen_values = true, value_parser = values::finite)]
    pub pitch: Option<f64>,
    /// Lock joints at their seed value: JOINT[,JOINT...] (repeatable).
    #[arg(long, value_name = "JOINT")]
    pub lock: Vec<String>,
    /// Narrow joint ranges: JOINT=MIN:MAX[,...] (repeatable).
    #[arg(long, value_name = "JOINT=MIN:MAX", allow_hyphen_values = true)]
    pub clamp: Vec<String>,
    /// Jacobian: return the in-limit solution closest to the seed found
    /// within the budget, not the first one.
    #[arg(long)]
    pub closest: bool,
    /// With --closest: a joint's weight in the distance to the seed,
    /// JOINT=W[,...] (repeatable; joints not named weigh 1, 0 leaves one
    /// out).
    #[arg(long = "closest-weight", value_name = "JOINT=W")]
    pub closest_weight: Vec<String>,
    /// Jacobian: what a redundant arm's self-motion is steered toward on
    /// every solve: limits (away from the joint limits), posture (toward
    /// the middle of the limits), manipulability (away from singular
    /// poses), off.
    #[arg(long, default_value_t = SolverSettings::default().redundancy, value_parser = redundancy())]
    pub redundancy: Redundancy,
    /// Jacobian: gain of that steering in [0, 1] (0: none).
    #[arg(long, value_parser = values::unit_interval, default_value_t = SolverSettings::default().null_space_gain)]
    pub null_space_gain: f64,
    /// Jacobian, with the collision check on: also steer a redundant
    /// arm's self-motion away from the closest pair once it comes within
    /// this much of the margin, and plan Cartesian paths to keep out of
    /// it where they can (m; 0: never).
    #[arg(long, value_parser = values::non_negative, default_value_t = SolverSettings::default().clearance_band)]
    pub clearance_band: f64,
    /// What a pose target's orientation asks: full (the whole rotation),
    /// axis (only where the tool axis, --tool-axis, points, a 5D target:
    /// the roll about it is free) or ignore (the position only).
    #[arg(long, default_value = "full", value_parser = target_orientation())]
    pub target_orientation: OrientationMode,
    /// The tool axis of 5D targets: which axis x,y,z of the tip frame
    /// must point where a pose's same axis points (--target-orientation
    /// axis), or along solve's --axis; any non-zero length (it is
    /// normalised). 0,0,1 is the tip's +z, 1,0,0 a gripper along +x.
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true,
          value_parser = values::direction, default_value = "0,0,1")]
    pub tool_axis: [f64; 3],
    /// Ignore the orientation of pose targets: the same as
    /// --target-orientation ignore.
    #[arg(long, conflicts_with = "target_orientation")]
    pub position_only: bool,
}

impl SolverArgs {
    /// What pose targets' orientation asks, from `--target-orientation`
    /// or its shorthand `--position-only`, with `--tool-axis` as the tool
    /// axis of `axis` ([`OrientationMode::with_tool`], as the ROS
    /// parameters do).
    pub fn orientation_mode(&self) -> OrientationMode {
        if self.position_only {
            OrientationMode::Ignore
        } else {
            self.target_orientation.with_tool(self.tool())
        }
    }

    /// The tool axis `--tool-axis` names (checked and normalised by its
    /// parser, [`values::direction`]).
    pub fn tool(&self) -> Unit<Vector3<f64>> {
        Unit::new_normalize(Vector3::from(self.tool_axis))
    }

    /// The settings these flags give, checked.
    pub fn settings(&self) -> Result<SolverSettings, SettingError> {
        let mut lock = Vec::new();
        for s in &self.lock {
            lock.extend(parse_locks(s)?);
        }
        let mut clamp = Vec::new();
        for s in &self.clamp {
            clamp.extend(parse_clamps(s)?);
        }
        let mut closest_weight = Vec::new();
        for s in &self.closest_weight {
            closest_weight.extend(parse_weights(s)?);
        }
        let settings = SolverSettings {
            solver: self.solver,
            position_tolerance: self.position_tolerance,
            orientation_tolerance: self.orientation_tolerance,
            budget_ms: self.budget_ms,
            max_iterations: self.max_iterations,
            greediness: self.greediness,
            incremental: self.incremental,
            reset: self.reset,
            bend: self.bend,
            pitch: self.pitch,
            lock,
            clamp,
            closest: self.closest,
            closest_weight,
            redundancy: self.redundancy,
            null_space_gain: self.null_space_gain,
            clearance_band: self.clearance_band,
            target_orientation: self.orientation_mode(),
        };
        settings.validate()?;
        Ok(settings)
    }

    /// The solver configuration and common options these flags ask for.
    pub fn config(&self, chain: &Chain) -> anyhow::Result<(SolverConfig, Common)> {
        let settings = self.settings().map_err(flag_usage)?;
        settings.solver_config(chain).map_err(flag_error)
    }
}

#[derive(Debug, clap::Args)]
pub struct NodeArgs {
    /// Control rate (Hz), above 0 and at most 10000.
    #[arg(long = "rate", value_name = "RATE", value_parser = values::positive,
          default_value_t = MotionSettings::default().rate_hz)]
    pub rate_hz: f64,
    /// Speed limit of every joint (rad/s), above 0 and at most 1e6;
    /// default: the URDF's, capped at 2.
    #[arg(long, value_parser = values::positive)]
    pub max_velocity: Option<f64>,
    /// Acceleration limit of every joint (rad/s^2), above 0 and at most 1e6.
    #[arg(long, value_parser = values::positive, default_value_t = MotionSettings::default().max_acceleration)]
    pub max_acceleration: f64,
    /// Follow a best-effort answer only when its position error is below
    /// this (m), 0 to 1e6.
    #[arg(long, value_parser = values::non_negative,
          default_value_t = MotionSettings::default().max_best_effort_error)]
    pub max_best_effort_error: f64,
    /// Targets stamped further than this from the node clock are rejected
    /// as stale (s), above 0 and at most 1e6.
    #[arg(long, value_parser = values::positive, default_value_t = MotionSettings::default().max_target_age)]
    pub max_target_age: f64,
    /// The gripper joint: auto (the only actuated joint off the chain, if
    /// exactly one), a joint name, or "" for none.
    #[arg(long, default_value = AUTO_GRIPPER)]
    pub gripper_joint: String,
    /// Gripper position of open_gripper, within its joint limits; default:
    /// the end of its range farther from zero.
    #[arg(long, allow_hyphen_values = true, value_parser = values::finite)]
    pub gripper_open: Option<f64>,
    /// Gripper position of close_gripper, within its joint limits;
    /// default: the end of its range nearer zero.
    #[arg(long, allow_hyphen_values = true, value_parser = values::finite)]
    pub gripper_closed: Option<f64>,
    /// Servo load (fraction of its maximum, in (0, 1]) above which a
    /// gripper short of its command stalls and holds where it is.
    #[arg(long, value_parser = values::fraction, default_value_t = GripperSettings::default().stall_load)]
    pub gripper_stall_load: f64,
    #[command(flatten)]
    pub jog: JogArgs,
    #[command(flatten)]
    pub collision: super::collision_args::CollisionArgs,
}

/// How `{"type":"twist"}` input lines move the tip (the jog's ROS
/// parameters).
#[derive(Debug, clap::Args)]
pub struct JogArgs {
    /// Jog: top speed of the tip (m/s), above 0 and at most 1e6.
    #[arg(long, value_parser = values::positive, default_value_t = JogSettings::default().linear_speed)]
    pub jog_linear_speed: f64,
    /// Jog: top turning speed of the tip (rad/s), above 0 and at most 1e6.
    #[arg(long, value_parser = values::positive, default_value_t = JogSettings::default().angular_speed)]
    pub jog_angular_speed: f64,
    /// Jog: how fast the tip's speed may change (m/s^2), above 0 and at
    /// most 1e6.
    #[arg(long, value_parser = values::positive,
          default_value_t = JogSettings::default().linear_acceleration)]
    pub jog_linear_acceleration: f64,
    /// Jog: how fast the tip's turning speed may change (rad/s^2), above 0
    /// and at most 1e6.
    #[arg(long, value_parser = values::positive,
          default_value_t = JogSettings::default().angular_acceleration)]
    pub jog_angular_acceleration: f64,
    /// Jog: a twist holds this long (s), above 0 and at most 1e6; then the
    /// tip slows to a stop.
    #[arg(long, value_parser = values::positive, default_value_t = JogSettings::default().timeout)]
    pub jog_timeout: f64,
    /// Frame of twists that name none: tip or base.
    #[arg(long, default_value = JogSettings::default().cmd_vel_frame.name(),
          value_parser = PossibleValuesParser::new(TwistFrame::NAMES))]
    pub cmd_vel_frame: String,
}

impl JogArgs {
    /// The jog settings these flags give, checked.
    pub fn settings(&self) -> Result<JogSettings, SettingError> {
        let settings = JogSettings {
            linear_speed: self.jog_linear_speed,
            angular_speed: self.jog_angular_speed,
            linear_acceleration: self.jog_linear_acceleration,
            angular_acceleration: self.jog_angular_acceleration,
            timeout: self.jog_timeout,
            cmd_vel_frame: TwistFrame::parse("cmd_vel_frame", &self.cmd_vel_frame)?,
        };
        settings.validate()?;
        Ok(settings)
    }
}

impl NodeArgs {
    /// The settings these flags give, checked.
    pub fn settings(&self) -> Result<MotionSettings, SettingError> {
        let settings = MotionSettings {
            rate_hz: self.rate_hz,
            max_velocity: self.max_velocity,
            max_acceleration: self.max_acceleration,
            max_best_effort_error: self.max_best_effort_error,
            max_target_age: self.max_target_age,
        };
        settings.validate()?;
        Ok(settings)
    }

    /// The gripper settings these flags give, checked.
    pub fn gripper(&self) -> Result<GripperSettings, SettingError> {
        let settings = GripperSettings {
            joint: GripperJoint::parse(&self.gripper_joint),
            open: self.gripper_open,
            closed: self.gripper_closed,
            stall_load: self.gripper_stall_load,
        };
        settings.validate()?;
        Ok(settings)
    }

    /// The node settings of these flags and `solver`'s; errors name the flag.
    pub fn node_settings(&self, solver: &SolverArgs) -> anyhow::Result<NodeSettings> {
        Ok(NodeSettings {
            solver: solver.settings().map_err(flag_usage)?,
            motion: self.settings().map_err(flag_usage)?,
            jog: self.jog.settings().map_err(flag_usage)?,
            gripper: self.gripper().map_err(flag_usage)?,
            collision: self.collision.options().map_err(flag_usage)?,
        })
    }

    /// The node core on virtual servos, as the live node builds it.
    pub fn core(&self, chain: &Chain, solver: &SolverArgs) -> anyhow::Result<NodeCore> {
        node_core(&self.node_settings(solver)?, chain)
    }
}

/// The node core on virtual servos; a refused setting is named by its flag.
pub fn node_core(settings: &NodeSettings, chain: &Chain) -> anyhow::Result<NodeCore> {
    NodeCore::from_settings(chain, settings).map_err(|e| match e {
        NodeError::Setting(e) => flag_error(e),
        other => other.into(),
    })
}

/// The solver and motion flags, as clap declares them.
fn setting_flags() -> clap::Command {
    use clap::Args as _;
    NodeArgs::augment_args(SolverArgs::augment_args(clap::Command::new("arm_ik")))
}

/// The ids of every solver and motion flag, for a flag that replaces them
/// all (`replay --config`).
pub fn setting_ids() -> Vec<clap::Id> {
    setting_flags()
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect()
}

/// The flag of a setting, e.g. `--pos-tol` for `position_tolerance`: the
/// long name of the argument whose id (field name) is the setting's.
pub fn flag(setting: &str) -> String {
    setting_flags()
        .get_arguments()
        .find(|a| a.get_id() == setting)
        .and_then(|a| a.get_long())
        .map_or_else(|| setting.to_owned(), |long| format!("--{long}"))
}

/// A setting refused on the robot at hand (a joint it does not have, a
/// solver that does not fit it), named by its flag.
pub fn flag_error(e: SettingError) -> anyhow::Error {
    anyhow::anyhow!(e.spelled(&flag(e.name)))
}

/// A flag value refused whatever the robot (not finite, out of range), named
/// by its flag: a usage error.
pub fn flag_usage(e: SettingError) -> anyhow::Error {
    anyhow::Error::new(super::UsageError(e.spelled(&flag(e.name))))
}
