//! A node core from the node's parameters: the solver and motion settings
//! the parameters give, on the servo output they choose.

use crate::model::Chain;
use crate::node::program::{ProgramError, Programs, RobotView};
use crate::node::{
    JointLayout, NodeCore, NodeError, NodeParams, NodeSettings, PoseError, PoseFile, PoseStore,
    Poses,
};
use crate::servo::calibration::{Calibration, CalibrationWarning};
use crate::servo::{Output, Protocol, SerialServo, VirtualServo, registry};
use std::fmt;
use std::path::Path;
use thiserror::Error;

/// Why the parameters do not make a node.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunError {
    /// An output parameter (`sim`, `servo_config`, `port`, `protocol`) is
    /// wrong or does not fit the others.
    #[error("invalid node setting {name}: {why}")]
    Output { name: &'static str, why: String },
    #[error(transparent)]
    Node(#[from] NodeError),
    /// `poses_file` is unreadable or does not fit the robot.
    #[error(transparent)]
    Poses(#[from] PoseError),
    /// A file of `programs` is unreadable or does not fit the robot.
    #[error(transparent)]
    Program(#[from] ProgramError),
}

fn bad(name: &'static str, why: impl Into<String>) -> RunError {
    RunError::Output {
        name,
        why: why.into(),
    }
}

/// Something that works but that the user should hear about; the
/// front-end shows it (the CLI on stderr, `ik_node` in its log).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// `sim` is true, so `servo_config` is not used.
    ServoConfigIgnored { path: String },
    /// `protocol` gives an old name of the protocol.
    ProtocolAlias { written: String, name: &'static str },
    /// From the servo file.
    Calibration(CalibrationWarning),
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::ServoConfigIgnored { path } => write!(
                f,
                "servo_config '{path}' is ignored because sim is true (virtual servos)"
            ),
            Warning::ProtocolAlias { written, name } => write!(
                f,
                "protocol '{written}' is deprecated; use '{name}', the same protocol under its one name"
            ),
            Warning::Calibration(w) => w.fmt(f),
        }
    }
}

/// The servo output with the warnings met on the way.
pub struct BuiltOutput {
    pub output: Output,
    pub warnings: Vec<Warning>,
}

/// The node core with the warnings met on the way.
pub struct BuiltNode {
    pub core: NodeCore<Output>,
    pub warnings: Vec<Warning>,
}

/// `""` as "not given".
fn non_empty(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

/// Checks the output parameters before anything is loaded, so a node
/// asked for hardware fails at once with the reason rather than silently
/// driving virtual servos.
pub fn check_output(p: &NodeParams) -> Result<Vec<Warning>, RunError> {
    if p.sim {
        return Ok(non_empty(&p.servo_config)
            .map(|path| Warning::ServoConfigIgnored {
                path: path.to_string(),
            })
            .into_iter()
            .collect());
    }
    if non_empty(&p.servo_config).is_none() {
        return Err(bad(
            "sim",
            "false needs servo_config, the servo calibration file \
             (e.g. share/arm_ik/config/servos_pwm.yaml); run with sim:=true for virtual servos",
        ));
    }
    if non_empty(&p.port).is_none() {
        return Err(bad(
            "port",
            "is empty; sim:=false needs the serial port of the servos",
        ));
    }
    let (_, alias) = protocol(p)?;
    Ok(alias.into_iter().collect())
}

/// The protocol the `protocol` parameter names, and a warning when it
/// does so by an old name.
fn protocol(p: &NodeParams) -> Result<(&'static Protocol, Option<Warning>), RunError> {
    let written = p.protocol.trim();
    let protocol = registry::find(written).ok_or_else(|| {
        bad(
            "protocol",
            format!("'{written}' is not one of {}", registry::names().join(", ")),
        )
    })?;
    let alias = (protocol.name != written).then(|| Warning::ProtocolAlias {
        written: written.to_string(),
        name: protocol.name,
    });
    Ok((protocol, alias))
}

/// The servo output: virtual servos resting at `start` when `sim`, else
/// the hardware that `servo_config` describes on `port`. The calibration
/// is checked against `chain` here, before anything moves; the port
/// itself is opened in the background (an adapter plugged in later is
/// picked up, and the link state says so meanwhile).
pub fn output(p: &NodeParams, chain: &Chain, start: Vec<f64>) -> Result<BuiltOutput, RunError> {
    let mut warnings = check_output(p)?;
    if p.sim {
        return Ok(BuiltOutput {
            output: Output::Virtual(VirtualServo::new(start)),
            warnings,
        });
    }
    let path = p.servo_config.trim();
    let (protocol, _) = protocol(p)?;
    let (output, more) = serial(
        Path::new(path),
        p.port.trim(),
        chain,
        Some(protocol),
        Pacing::Own,
    )?;
    warnings.extend(more);
    Ok(BuiltOutput { output, warnings })
}

/// Servos on `port` as the calibration file `path` describes them, checked
/// against `chain` (and against `expected`, the protocol asked for, when
/// one was), with the file's warnings; its link runs on its own clock, or
/// paced by the node's ticks at `rate_hz` (see [`Pacing`]).
fn serial(
    path: &Path,
    port: &str,
    chain: &Chain,
    expected: Option<&'static Protocol>,
    pacing: Pacing,
) -> Result<(Output, Vec<Warning>), RunError> {
    let cal = Calibration::load(path, chain).map_err(|e| bad("servo_config", e.to_string()))?;
    if let Some(protocol) = expected
        && cal.protocol != protocol
    {
        return Err(bad(
            "protocol",
            format!(
                "'{}' does not match servo_config '{}', which describes {} servos",
                protocol.name,
                path.display(),
                cal.protocol.name
            ),
        ));
    }
    let warnings = cal
        .warnings
        .iter()
        .cloned()
        .map(Warning::Calibration)
        .collect();
    let servo = match pacing {
        Pacing::Own => SerialServo::open(port, cal),
        Pacing::Ticks { rate_hz } => SerialServo::open_paced(port, cal, rate_hz, false),
    }
    .map_err(|e| bad("port", format!("cannot start the link on {port}: {e}")))?;
    Ok((Output::Serial(Box::new(servo)), warnings))
}

/// The node core `settings` describe on the servos of the calibration file
/// `servo_config` (its `kind` names the protocol) on `port`: what `arm_ik
/// run --config FILE --port PORT` drives.
pub fn build_on_port(
    settings: &NodeSettings,
    chain: &Chain,
    servo_config: &Path,
    port: &str,
    poses_file: Option<&Path>,
) -> Result<BuiltNode, RunError> {
    let poses = load_poses(poses_file, chain)?;
    assemble(settings, chain, poses, |_| {
        serial(servo_config, port, chain, None, Pacing::Own)
    })
}

/// [`build_on_port`] with the servo link paced by the node's ticks: each
/// tick's command is written (and the servos read) before the tick
/// returns. Teleoperation's follower: its leader is read in the same tick
/// ([`LeaderSource`](super::LeaderSource)).
pub fn build_paced_on_port(
    settings: &NodeSettings,
    chain: &Chain,
    servo_config: &Path,
    port: &str,
) -> Result<BuiltNode, RunError> {
    let pacing = Pacing::Ticks {
        rate_hz: settings.motion.rate_hz,
    };
    assemble(settings, chain, Poses::default(), |_| {
        serial(servo_config, port, chain, None, pacing)
    })
}

/// Who paces a serial output's link.
#[derive(Debug, Clone, Copy)]
enum Pacing {
    /// Its own clock (`link.rate_hz`).
    Own,
    /// The node's ticks, at the node's rate.
    Ticks { rate_hz: f64 },
}

/// The node core `settings` describe on virtual servos, as the servo
/// output type every front-end drives (`arm_ik sim`, `run` without a
/// port).
pub fn build_virtual(
    settings: &NodeSettings,
    chain: &Chain,
    poses_file: Option<&Path>,
) -> Result<BuiltNode, RunError> {
    let poses = load_poses(poses_file, chain)?;
    assemble(settings, chain, poses, |start| {
        Ok((Output::Virtual(VirtualServo::new(start)), Vec::new()))
    })
}

/// The named poses of `file` (none without one), checked against `chain`
/// before anything moves.
fn load_poses(file: Option<&Path>, chain: &Chain) -> Result<Poses, RunError> {
    Ok(match file {
        Some(path) => PoseFile::load(path)?.check(chain)?,
        None => Poses::default(),
    })
}

/// The node core `settings` describe, on the output `make` builds from the
/// start pose, with the named poses `poses`.
fn assemble(
    settings: &NodeSettings,
    chain: &Chain,
    poses: Poses,
    make: impl FnOnce(Vec<f64>) -> Result<(Output, Vec<Warning>), RunError>,
) -> Result<BuiltNode, RunError> {
    let (solver, common) = settings.solver_config(chain).map_err(NodeError::from)?;
    let mut config = settings.node_config(chain).map_err(NodeError::from)?;
    // Every joint the node moves, the gripper included.
    let start = JointLayout::new(chain).start(
        config
            .initial
            .as_deref()
            .unwrap_or(&chain.mid_configuration()),
    );
    let (output, warnings) = make(start)?;
    // Hobby servos with a park pose: the node starts where the arm is, so
    // its joint states and its first moves begin there too.
    if config.initial.is_none() {
        config.initial = output.park_pose();
    }
    let core = NodeCore::new(chain, solver, common, config, output)?.with_poses(poses);
    Ok(BuiltNode { core, warnings })
}

/// The node core the parameters describe, on its output.
pub fn build_node(p: &NodeParams, chain: &Chain) -> Result<BuiltNode, RunError> {
    let settings = p.settings().map_err(NodeError::from)?;
    let poses = load_poses(p.poses().map(Path::new), chain)?;
    let mut built = assemble(&settings, chain, poses, |start| {
        output(p, chain, start).map(|b| (b.output, b.warnings))
    })?;
    if let Some(teleop) = p.teleop().map_err(NodeError::from)? {
        built.core = built.core.with_leader(teleop);
    }
    // `~/record_pose` writes into the same file `~/go_to` reads.
    if let Some(file) = p.poses() {
        built.core = built.core.with_pose_store(PoseStore::new(file));
    }
    let robot = RobotView {
        chain,
        poses: built.core.poses(),
        has_gripper: built.core.gripper().is_some(),
    };
    let programs = Programs::load(&p.program_files(), &robot)?;
    built.core = built.core.with_programs(programs);
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static str {
        env!("CARGO_MANIFEST_DIR")
    }

    fn arm() -> Chain {
        Chain::from_urdf_file(format!("{}/urdf/arm.urdf", root()), None, None).unwrap()
    }

    /// The warnings but the one about the project servo files' gripper
    /// entry, given when the URDF has no gripper joint.
    fn said(warnings: &[Warning]) -> Vec<&Warning> {
        use crate::servo::calibration::CalibrationWarning::NotInRobot;
        warnings
            .iter()
            .filter(|w| !matches!(w, Warning::Calibration(NotInRobot { joint, .. }) if joint == "gripper"))
            .collect()
    }

    fn hardware(servo_config: &str) -> NodeParams {
        NodeParams {
            sim: false,
            servo_config: format!("{}/{servo_config}", root()),
            port: "/nonexistent/arm_ik-test-port".into(),
            ..NodeParams::default()
        }
    }

    #[test]
    fn defaults_are_virtual_servos_without_warnings() {
        let p = NodeParams::default();
        assert_eq!(check_output(&p).unwrap(), []);
        let built = build_node(&p, &arm()).unwrap();
        assert!(built.warnings.is_empty());
        assert!(matches!(built.core.servo(), Output::Virtual(_)));
    }

    #[test]
    fn hardware_output_settings_are_checked_before_anything_moves() {
        let chain = arm();
        let err = |p: NodeParams| match output(&p, &chain, chain.mid_configuration()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted {p:?}"),
        };
        let hw = hardware("config/servos_pwm.yaml");
        let e = err(NodeParams {
            servo_config: String::new(),
            ..hw.clone()
        });
        assert!(e.contains("sim") && e.contains("servo_config"), "{e}");
        let e = err(NodeParams {
            protocol: "feetech".into(),
            ..hw.clone()
        });
        assert!(
            e.contains("does not match") && e.contains("pwm_bridge"),
            "{e}"
        );
        let e = err(NodeParams {
            protocol: "feetch".into(),
            ..hw.clone()
        });
        assert!(
            e.contains("'feetch'") && e.contains(&registry::names().join(", ")),
            "{e}"
        );
        let e = err(hardware("config/arm.yaml"));
        assert!(e.contains("servo_config") && e.contains("arm.yaml"), "{e}");
        let e = err(NodeParams {
            port: " ".into(),
            ..hw.clone()
        });
        assert!(e.contains("port"), "{e}");
        // A port that is not there (yet) is not an error at start: the link
        // keeps trying and says so.
        let built = output(&hw, &chain, vec![0.0; 5]).unwrap();
        assert!(said(&built.warnings).is_empty(), "{:?}", built.warnings);
        let Output::Serial(s) = built.output else {
            panic!("sim false gave virtual servos");
        };
        assert_eq!(s.close().connects, 0);
        let p = NodeParams {
            servo_config: "servos.yaml".into(),
            ..NodeParams::default()
        };
        let ignored = Warning::ServoConfigIgnored {
            path: "servos.yaml".into(),
        };
        assert_eq!(check_output(&p).unwrap(), std::slice::from_ref(&ignored));
        assert!(ignored.to_string().contains("ignored"));
        let built = output(&p, &chain, vec![0.0; 5]).unwrap();
        assert!(matches!(built.output, Output::Virtual(_)));
        assert_eq!(built.warnings, [ignored]);
    }

    #[test]
    fn old_names_work_with_a_warning_naming_the_new_one() {
        let chain = arm();
        // The ROS parameter by the servo file's old spelling.
        let p = NodeParams {
            protocol: "pwm".into(),
            ..hardware("config/servos_pwm.yaml")
        };
        let alias = Warning::ProtocolAlias {
            written: "pwm".into(),
            name: "pwm_bridge",
        };
        assert_eq!(check_output(&p).unwrap(), std::slice::from_ref(&alias));
        assert!(alias.to_string().contains("'pwm_bridge'"), "{alias}");
        // A servo file with `kind: pwm`: its warning reaches the caller.
        let dir = std::env::temp_dir().join(format!("arm_ik-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join("servos_old.yaml");
        let text = std::fs::read_to_string(format!("{}/config/servos_pwm.yaml", root())).unwrap();
        std::fs::write(&old, text.replace("kind: pwm_bridge", "kind: pwm")).unwrap();
        let p = NodeParams {
            servo_config: old.display().to_string(),
            ..hardware("")
        };
        let built = build_node(&p, &chain).unwrap();
        let text = said(&built.warnings)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>();
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(
            text[0].contains("servos_old.yaml") && text[0].contains("kind: pwm_bridge"),
            "{text:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn with_parked_hobby_servos_the_node_starts_at_the_park_pose() {
        let chain = arm();
        let params = hardware("tests/data/servos_pwm_parked.yaml");
        let mut node = build_node(&params, &chain).unwrap().core;
        assert_eq!(
            node.tick(0.0).joint_state.position[..5],
            [0.0, 0.1, -0.1, 0.0, 0.2]
        );
        // Without a park pose: mid-range, as before.
        let mut node = build_node(&hardware("config/servos_pwm.yaml"), &chain)
            .unwrap()
            .core;
        assert_eq!(
            node.tick(0.0).joint_state.position[..5],
            chain.mid_configuration()
        );
    }

    #[test]
    fn a_poses_file_is_checked_against_the_robot_at_start() {
        let chain = arm();
        let p = NodeParams {
            poses_file: format!("{}/config/poses_arm.yaml", root()),
            ..NodeParams::default()
        };
        let core = build_node(&p, &chain).unwrap().core;
        assert!(core.poses().get("home").is_some());
        let dir = std::env::temp_dir().join(format!("arm_ik-poses-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("poses.yaml");
        let text = std::fs::read_to_string(&p.poses_file).unwrap();
        std::fs::write(&bad, text.replacen("elbow:", "elbw:", 1)).unwrap();
        let p = NodeParams {
            poses_file: bad.display().to_string(),
            ..NodeParams::default()
        };
        let e = build_node(&p, &chain).err().unwrap();
        assert!(
            matches!(e, RunError::Poses(PoseError::UnknownJoint { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("'elbw'"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `programs` (ik_node's parameter): each file read and checked at
    /// start, named by its stem for its `~/program/<name>` service; one
    /// naming a pose the poses file lacks stops the node from starting.
    #[test]
    fn programs_are_checked_against_the_robot_and_the_poses_at_start() {
        let chain = arm();
        let pick = format!("{}/config/programs/pick_place.yaml", root());
        let p = NodeParams {
            poses_file: format!("{}/config/poses_arm.yaml", root()),
            programs: format!(" {pick} ,"),
            ..NodeParams::default()
        };
        assert_eq!(p.program_names(), ["pick_place"]);
        let core = build_node(&p, &chain).unwrap().core;
        assert_eq!(core.programs().names().collect::<Vec<_>>(), ["pick_place"]);
        let dir = std::env::temp_dir().join(format!("arm_ik-programs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("wave.yaml");
        std::fs::write(&bad, "- pose: home\n- pose: wave_start\n").unwrap();
        let p = NodeParams {
            programs: bad.display().to_string(),
            ..p
        };
        let e = build_node(&p, &chain).err().unwrap();
        assert!(matches!(e, RunError::Program(_)), "{e}");
        assert!(
            e.to_string().contains("step 2") && e.to_string().contains("wave_start"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn settings_are_checked_against_the_chain_before_the_output_starts() {
        let p = NodeParams {
            clamp: "nope=0:1".into(),
            ..hardware("config/servos_pwm.yaml")
        };
        let e = build_node(&p, &arm()).err().unwrap().to_string();
        assert!(e.contains("clamp") && e.contains("nope"), "{e}");
    }
}
