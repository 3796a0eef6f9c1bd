//! One settings path: the same parameters give the same node settings, and
//! the same refusal, through the ROS parameters (set by name, as r2r
//! applies `--ros-args -p` and parameter-file values), `replay --config`
//! (the parameter file reader) and the CLI flags.

use super::settings_args::{NodeArgs, SolverArgs, flag, flag_error};
use arm_ik::ik::SolverKind;
use arm_ik::model::Chain;
use arm_ik::node::{NodeParams, NodeSettings, ParamValue, SettingError};
use clap::Parser;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/params_all.yaml");

/// The flags of `sim` and `replay` that carry settings.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    node: NodeArgs,
}

fn arm() -> Chain {
    Chain::from_urdf_str(include_str!("../../urdf/arm.urdf"), None, None).unwrap()
}

/// The node settings of the flags in `argv`, checked against the arm.
fn from_flags(argv: &[&str]) -> Result<NodeSettings, SettingError> {
    let flags = Flags::try_parse_from(std::iter::once("arm_ik").chain(argv.iter().copied()))
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    checked(NodeSettings {
        solver: flags.solver.settings()?,
        motion: flags.node.settings()?,
        jog: flags.node.jog.settings()?,
        gripper: flags.node.gripper()?,
        collision: flags.node.collision.options()?,
    })
}

/// Parameters set one by one on the defaults, as r2r applies them.
fn from_ros(values: &[(&str, ParamValue)]) -> Result<NodeSettings, SettingError> {
    let mut p = NodeParams::default();
    for (name, v) in values {
        p.set(name, v.clone()).unwrap();
    }
    checked(p.settings()?)
}

fn from_file(text: &str) -> Result<NodeSettings, SettingError> {
    checked(
        NodeParams::from_ros_yaml(text, "p.yaml")
            .unwrap()
            .settings()?,
    )
}

/// The settings once they have been turned into the node's configuration
/// on the arm (where joint names are checked).
fn checked(s: NodeSettings) -> Result<NodeSettings, SettingError> {
    s.solver_config(&arm())?;
    s.node_config(&arm())?;
    Ok(s)
}

#[test]
fn one_parameter_file_gives_the_same_settings_through_every_front_end() {
    use ParamValue::{Bool, Double, Integer, String as Text};
    let ros = from_ros(&[
        ("solver", Text("ccd".into())),
        ("position_tolerance", Double(0.0002)),
        ("orientation_tolerance", Double(0.002)),
        ("budget_ms", Double(3.0)),
        ("max_iterations", Integer(150)),
        ("greediness", Double(0.6)),
        ("incremental", Bool(true)),
        ("reset", Bool(true)),
        ("bend", Text("negative".into())),
        ("pitch", Text("-0.4".into())),
        ("lock", Text("wrist_roll".into())),
        ("clamp", Text("shoulder=-0.5:1.0,elbow=-1.0:0.5".into())),
        ("rate_hz", Double(100.0)),
        ("max_velocity", Double(1.2)),
        ("max_acceleration", Double(5.0)),
        ("max_best_effort_error", Double(0.02)),
        ("max_target_age", Double(0.25)),
        ("jog_linear_speed", Double(0.05)),
        ("jog_angular_speed", Double(0.3)),
        ("jog_linear_acceleration", Double(0.4)),
        ("jog_angular_acceleration", Double(2.0)),
        ("jog_timeout", Double(0.3)),
        ("cmd_vel_frame", Text("base".into())),
    ])
    .unwrap();
    let file = from_file(&std::fs::read_to_string(FILE).unwrap()).unwrap();
    let cli = from_flags(&[
        "--solver=ccd",
        "--pos-tol=0.0002",
        "--rot-tol=0.002",
        "--budget-ms=3",
        "--max-iterations=150",
        "--greediness=0.6",
        "--incremental",
        "--reset",
        "--bend=negative",
        "--pitch=-0.4",
        "--lock=wrist_roll",
        "--clamp=shoulder=-0.5:1.0",
        "--clamp=elbow=-1.0:0.5",
        "--rate=100",
        "--max-velocity=1.2",
        "--max-acceleration=5",
        "--max-best-effort-error=0.02",
        "--max-target-age=0.25",
        "--jog-linear-speed=0.05",
        "--jog-angular-speed=0.3",
        "--jog-linear-acceleration=0.4",
        "--jog-angular-acceleration=2",
        "--jog-timeout=0.3",
        "--cmd-vel-frame=base",
    ])
    .unwrap();
    assert_eq!(ros, file);
    assert_eq!(cli, file);
    // Every value arrived: none is the default.
    let d = NodeSettings::default();
    assert_eq!(file.solver.solver, SolverKind::Ccd);
    assert_eq!(file.solver.lock, ["wrist_roll"]);
    assert_eq!(file.solver.clamp.len(), 2);
    assert_eq!(file.motion.max_velocity, Some(1.2));
    assert_ne!(file.solver.pitch, d.solver.pitch);
    assert_ne!(file.motion.max_target_age, d.motion.max_target_age);
    assert_ne!(file.jog.cmd_vel_frame, d.jog.cmd_vel_frame);
    assert_ne!(file.jog.timeout, d.jog.timeout);
    assert_eq!(
        file.solver_config(&arm()).unwrap(),
        cli.solver_config(&arm()).unwrap()
    );
}

/// The Jacobian solver's closest mode, which the file above (a ccd
/// solver) cannot carry, through every front-end too.
#[test]
fn the_closest_mode_arrives_the_same_way_through_every_front_end() {
    use ParamValue::{Bool, String as Text};
    let ros = from_ros(&[
        ("closest", Bool(true)),
        ("closest_weight", Text("elbow=2,wrist_roll=0".into())),
    ])
    .unwrap();
    let file = from_file(
        "ik_node:\n  ros__parameters:\n    closest: true\n    closest_weight: \"elbow=2,wrist_roll=0\"\n",
    )
    .unwrap();
    let cli = from_flags(&[
        "--closest",
        "--closest-weight=elbow=2",
        "--closest-weight=wrist_roll=0",
    ])
    .unwrap();
    assert_eq!(ros, file);
    assert_eq!(cli, file);
    assert!(file.solver.closest && file.solver.closest_weight.len() == 2);
    // Not for other solvers, said by each front-end in its own words.
    let ros = from_ros(&[("closest", Bool(true)), ("solver", Text("ccd".into()))]).unwrap_err();
    let cli = from_flags(&["--closest", "--solver=ccd"]).unwrap_err();
    assert_eq!((ros.name, cli.name), ("closest", "closest"));
    assert!(flag_error(cli).to_string().starts_with("--closest"));
}

/// `tool_axis` (a double array to ROS, a YAML list in a file, three
/// numbers on the command line) gives the same 5D mode through each, and
/// a zero axis is refused by each, naming it.
#[test]
fn the_tool_axis_arrives_the_same_way_through_every_front_end() {
    use ParamValue::{DoubleArray, String as Text};
    let ros = from_ros(&[
        ("target_orientation", Text("axis".into())),
        ("tool_axis", DoubleArray(vec![-1.0, 0.0, 0.0])),
    ])
    .unwrap();
    let file = from_file(
        "ik_node:\n  ros__parameters:\n    target_orientation: axis\n    tool_axis: [-1.0, 0.0, 0.0]\n",
    )
    .unwrap();
    let cli = from_flags(&["--target-orientation=axis", "--tool-axis=-1,0,0"]).unwrap();
    assert_eq!(ros, file);
    assert_eq!(cli, file);
    let tool = file.solver.target_orientation.tool().unwrap();
    assert_eq!(tool.into_inner(), -nalgebra::Vector3::x());
    let ros = from_ros(&[("tool_axis", DoubleArray(vec![0.0; 3]))]).unwrap_err();
    let file = from_file("ik_node:\n  ros__parameters:\n    tool_axis: [0.0, 0.0, 0.0]\n");
    assert_eq!(file.unwrap_err(), ros);
    assert!(
        ros.name == "tool_axis" && ros.why.contains("non-zero length"),
        "{ros}"
    );
    let cli = Flags::try_parse_from(["arm_ik", "--tool-axis=0,0,0"]).unwrap_err();
    let cli = cli.to_string();
    assert!(
        cli.contains("'--tool-axis") && cli.contains("non-zero length"),
        "{cli}"
    );
}

#[test]
fn a_bad_value_is_refused_the_same_way_by_every_front_end() {
    let cases: [(&str, ParamValue, &str, &str); 5] = [
        ("budget_ms", ParamValue::Double(0.0), "0.0", "--budget-ms=0"),
        (
            "jog_timeout",
            ParamValue::Double(0.0),
            "0.0",
            "--jog-timeout=0",
        ),
        ("rate_hz", ParamValue::Double(-1.0), "-1.0", "--rate=-1"),
        (
            "position_tolerance",
            ParamValue::Double(f64::NAN),
            ".nan",
            "--pos-tol=nan",
        ),
        (
            "clamp",
            ParamValue::String("nope=0:1".into()),
            "nope=0:1",
            "--clamp=nope=0:1",
        ),
    ];
    for (name, value, yaml, argv) in cases {
        let ros = from_ros(&[(name, value)]).unwrap_err();
        let text = format!("ik_node:\n  ros__parameters:\n    {name}: {yaml}\n");
        let file = from_file(&text).unwrap_err();
        assert_eq!(ros.name, name);
        assert_eq!(file, ros, "{name}");
        // A number is refused while the command line is read (clap names
        // the flag), a text setting by the settings' check: either way
        // with the parameter's reason.
        let shown = match Flags::try_parse_from(["arm_ik", argv]) {
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains(&format!("'{}", flag(name))), "{e}");
                e
            }
            Ok(_) => {
                let cli = from_flags(&[argv]).unwrap_err();
                // NaN is not equal to itself: compare what the user reads.
                assert_eq!(cli.to_string(), ros.to_string(), "{name}");
                let shown = flag_error(cli).to_string();
                assert!(shown.starts_with(&flag(name)), "{shown}");
                shown
            }
        };
        assert!(shown.contains(&ros.why), "{name}: {shown} / {}", ros.why);
    }
}

#[test]
fn every_setting_has_a_flag() {
    let settings = NodeParams::SPECS
        .iter()
        .filter(|s| s.live || s.name == "rate_hz");
    for spec in settings {
        assert!(
            flag(spec.name).starts_with("--"),
            "{} has no flag",
            spec.name
        );
    }
    assert_eq!(flag("position_tolerance"), "--pos-tol");
    assert_eq!(flag("rate_hz"), "--rate");
    assert_eq!(flag("max_target_age"), "--max-target-age");
}
