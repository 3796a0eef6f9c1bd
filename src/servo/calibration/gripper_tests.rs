//! The robot's joints off the chain in a servo file: a gripper gets a
//! servo of its own (or none), a mimic joint never does, and an entry for
//! a joint the robot lacks is reported, not driven.

use super::*;

fn standin(name: &str, tip: &str) -> Chain {
    let urdf = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    Chain::from_urdf_file(urdf, None, Some(tip)).unwrap()
}

fn koch() -> Chain {
    standin("koch_follower_standin.urdf", "link_5")
}

fn omx() -> Chain {
    standin("open_manipulator_x_standin.urdf", "end_effector_link")
}

fn project_config(name: &str) -> String {
    std::fs::read_to_string(format!("{}/config/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn the_gripper_is_the_last_position_and_drives_its_servo() {
    let c = Calibration::from_yaml(&project_config("servos_koch.yaml"), "koch", &koch()).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let slots: Vec<(&str, Option<usize>, bool)> = c
        .slots
        .iter()
        .map(|s| (s.joint.as_str(), s.servo, s.extra))
        .collect();
    assert_eq!(
        slots,
        [
            ("joint_1", Some(0), false),
            ("joint_2", Some(1), false),
            ("joint_3", Some(2), false),
            ("joint_4", Some(3), false),
            ("joint_5", Some(4), false),
            ("joint_6", Some(5), true),
        ]
    );
    assert_eq!(c.undriven().count(), 0);
    // The gripper's limits (-2.45 .. 0.032 rad) clamp before its range.
    let g = &c.joints[5];
    assert_eq!((g.lower, g.upper), (-2.45, 0.032));
    let mut commands = vec![0; 6];
    c.commands(&[0.0, 0.0, 0.0, 0.0, 0.0, -1.0], &mut commands)
        .unwrap();
    assert_eq!(commands[5], g.command(-1.0).unwrap());
    assert_eq!(c.angles(&commands)[5], g.angle(commands[5]));
    // Positions of the chain alone: the gripper keeps its command, and
    // the missing position is reported.
    commands[5] = 1234;
    assert_eq!(
        c.commands(&[0.1; 5], &mut commands),
        Err(MapError::Missing { index: 5 })
    );
    assert_eq!(commands[5], 1234);
    assert_eq!(commands[0], c.joints[0].command(0.1).unwrap());
    assert_eq!(c.park_pose(), None);
}

#[test]
fn an_extra_joint_without_a_servo_is_not_driven_and_said() {
    let text = project_config("servos_koch.yaml");
    let arm_only: String = text
        .lines()
        .filter(|l| !l.contains("joint_6"))
        .map(|l| format!("{l}\n"))
        .collect();
    let c = Calibration::from_yaml(&arm_only, "koch", &koch()).unwrap();
    assert_eq!(c.joints.len(), 5);
    assert_eq!(c.undriven().collect::<Vec<_>>(), ["joint_6"]);
    assert_eq!(c.slots.len(), 6, "its position is still taken");
    let mut commands = vec![0; 5];
    c.commands(&[0.0, 0.0, 0.0, 0.0, 0.0, -1.0], &mut commands)
        .unwrap();
    // Not driven: at rest (0, inside its limits) in the angles.
    assert_eq!(c.angles(&commands)[5], 0.0);
}

#[test]
fn a_mimic_joint_cannot_have_a_servo() {
    let text = project_config("servos_open_manipulator_x.yaml");
    let c = Calibration::from_yaml(&text, "omx", &omx()).unwrap();
    assert_eq!(
        c.slots.len(),
        5,
        "four joints and the gripper, not its mimic"
    );
    assert_eq!(c.joints[4].joint, "gripper_left_joint");
    // The jaw's 0.019 m (ROBOTIS' open end) is servo angle -1.52 rad.
    let open = c.joints[4].command(0.019).unwrap();
    assert!((open - 1057).abs() <= 1, "{open}");
    let mimic = text.replace("joint: gripper_left_joint,", "joint: gripper_right_joint,");
    assert_eq!(
        Calibration::from_yaml(&mimic, "omx", &omx()).unwrap_err(),
        CalibrationError::MimicJoint {
            joint: "gripper_right_joint".into(),
            leader: "gripper_left_joint".into()
        }
    );
}

#[test]
fn an_entry_for_a_joint_the_robot_lacks_is_a_warning_unless_a_joint_is_missing() {
    let text = project_config("servos_koch.yaml");
    // The arm chain without the gripper joint: its entry is not driven.
    let chain = standin("koch_follower_standin.urdf", "link_5");
    let mut no_gripper = chain.clone();
    no_gripper.extras.clear();
    let c = Calibration::from_yaml(&text, "koch.yaml", &no_gripper).unwrap();
    assert_eq!(c.joints.len(), 5);
    assert_eq!(
        c.warnings[0].to_string(),
        "koch.yaml: joint 'joint_6' is not a joint of this robot: its servo id 6 is not driven"
    );
    // A chain joint without an entry: the stranger is the misspelt joint.
    let typo = text.replace("joint: joint_3,", "joint: joint3,");
    assert_eq!(
        Calibration::from_yaml(&typo, "koch.yaml", &chain).unwrap_err(),
        CalibrationError::UnknownJoint {
            joint: "joint3".into()
        }
    );
}

#[test]
fn torque_off_on_close_still_works_and_says_to_write_on_exit() {
    let text =
        project_config("servos_koch.yaml").replace("on_exit: hold", "torque_off_on_close: true");
    let c = Calibration::from_yaml(&text, "old.yaml", &koch()).unwrap();
    assert_eq!(c.link.on_exit, crate::servo::link::OnExit::Relax);
    assert_eq!(
        c.warnings[0].to_string(),
        "old.yaml: `link.torque_off_on_close` is deprecated; write `link.on_exit: relax`, which means the same"
    );
}

#[test]
fn dynamixel_files_name_their_models_and_a_baud_rate_every_servo_takes() {
    let text = project_config("servos_koch.yaml");
    let field = |e: CalibrationError| e.to_string();
    let no_model = text.replacen(" model: xl430-w250,", "", 1);
    let e = field(Calibration::from_yaml(&no_model, "k", &koch()).unwrap_err());
    assert!(e.contains("joint 'joint_1': model: required"), "{e}");
    // 4.5 Mbaud: the XL430s take it, the XL330s do not.
    let fast = text.replace("baud: 1000000", "baud: 4500000");
    let e = field(Calibration::from_yaml(&fast, "k", &koch()).unwrap_err());
    assert!(
        e.starts_with("joint 'joint_3': xl330-m288 servos cannot talk at link.baud 4500000"),
        "{e}"
    );
    for baud in [57_600, 115_200, 1_000_000, 2_000_000, 3_000_000, 4_000_000] {
        let t = text.replace("baud: 1000000", &format!("baud: {baud}"));
        assert!(Calibration::from_yaml(&t, "k", &koch()).is_ok(), "{baud}");
    }
    // A goal current needs a model that senses current.
    let xl430 = text.replacen(
        " model: xl430-w250,",
        " model: xl430-w250, goal_current_ma: 100,",
        1,
    );
    let e = field(Calibration::from_yaml(&xl430, "k", &koch()).unwrap_err());
    assert!(e.contains("xl430-w250 servos do not sense current"), "{e}");
}
