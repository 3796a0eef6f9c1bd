//! LeRobot calibration import: sample files (tests/data/lerobot_*.json, in
//! the layout LeRobot writes) become servo YAML with every field as the
//! convention says (docs/servos.md), the SO-101 result loads
//! against the shared SO-101 URDF, and every kind of bad input gets an
//! error that names it. Then the `arm_ik import-lerobot` command.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::lerobot::{ImportError, Robot, import};
use serde_json::{Value, json};

fn sample(name: &str) -> String {
    std::fs::read_to_string(common::project_dir().join("tests/data").join(name)).unwrap()
}

/// The YAML as data (the comments dropped).
fn parsed(yaml: &str) -> Value {
    serde_norway::from_str(yaml).expect("the import is valid YAML")
}

/// (joint, output, direction, zero, range, speed_limit) of every joint.
fn joints(v: &Value) -> Vec<(String, u64, i64, f64, [i64; 2], f64)> {
    v["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["joint"].as_str().unwrap().to_string(),
                j["output"].as_u64().unwrap(),
                j["direction"].as_i64().unwrap(),
                j["zero"].as_f64().unwrap(),
                [
                    j["range"][0].as_i64().unwrap(),
                    j["range"][1].as_i64().unwrap(),
                ],
                j["speed_limit"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn row(
    joint: &str,
    id: u64,
    dir: i64,
    zero: f64,
    range: [i64; 2],
    speed: f64,
) -> (String, u64, i64, f64, [i64; 2], f64) {
    (joint.to_string(), id, dir, zero, range, speed)
}

#[test]
fn so101_calibration_becomes_the_servo_yaml_of_the_so101_urdf() {
    let out = import(&sample("lerobot_so101.json"), "so101.json", Robot::So101).unwrap();
    assert_eq!(out.warnings, Vec::<String>::new());
    let v = parsed(&out.yaml);
    assert_eq!(v["kind"], "feetech");
    assert_eq!(v["model"], "sts3215");
    assert_eq!(v["link"], json!({"baud": 1_000_000}));
    // Zero is the middle of LeRobot's range; the gripper is not a chain joint.
    assert_eq!(
        joints(&v),
        [
            row("shoulder_pan", 1, 1, 2025.0, [758, 3292], 3.0),
            row("shoulder_lift", 2, 1, 2006.5, [816, 3197], 3.0),
            row("elbow_flex", 3, 1, 2010.5, [933, 3088], 3.0),
            row("wrist_flex", 4, 1, 2019.0, [876, 3162], 4.0),
            row("wrist_roll", 5, 1, 2047.5, [0, 4095], 4.0),
        ]
    );
    for key in [
        "joint",
        "output",
        "direction",
        "zero",
        "range",
        "speed_limit",
    ] {
        assert!(v["joints"][0].get(key).is_some(), "{key}");
    }
    assert_eq!(
        v["joints"][0].as_object().unwrap().len(),
        6,
        "no other field"
    );
    // What the YAML cannot hold is said in its comments.
    assert!(
        out.yaml.contains(
            "# gripper (not a joint of the arm chain): id 6, sts3215, range [2031, 3476]"
        )
    );
    assert!(
        out.yaml
            .contains("Homing offsets: shoulder_pan -1470, shoulder_lift 157")
    );
    assert!(
        out.yaml
            .contains("from the LeRobot calibration\n# so101.json by")
    );

    let Some(urdf) = common::shared_urdf("so101.urdf") else {
        return;
    };
    let chain =
        Chain::from_urdf_file(&urdf, Some("base_link"), Some("gripper_frame_link")).unwrap();
    let dir = std::env::temp_dir().join(format!("arm_ik_lerobot_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("so101.yaml");
    std::fs::write(&path, &out.yaml).unwrap();
    let cal = Calibration::load(&path, &chain).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let pan = &cal.joints[0];
    assert_eq!(
        (pan.joint.as_str(), pan.output, pan.min, pan.max),
        ("shoulder_pan", 1, 758, 3292)
    );
    // Joint angle 0 commands the middle of the range; +0.1 rad, 65 ticks up.
    assert_eq!(pan.command(0.0), Some(2025));
    assert_eq!(pan.command(0.1), Some(2090));
    assert_eq!(cal.link.baud, 1_000_000);
}

#[test]
fn a_feetech_motor_in_drive_mode_1_turns_the_other_way() {
    let mut file: Value = serde_json::from_str(&sample("lerobot_so101.json")).unwrap();
    file["elbow_flex"]["drive_mode"] = json!(1);
    let out = import(&file.to_string(), "f", Robot::So101).unwrap();
    let j = joints(&parsed(&out.yaml));
    assert_eq!(j[2], row("elbow_flex", 3, -1, 2010.5, [933, 3088], 3.0));
    assert!(j.iter().enumerate().all(|(k, r)| k == 2 || r.2 == 1));
}

#[test]
fn so100_uses_the_same_motors_and_warns_about_its_urdf_zero() {
    let out = import(&sample("lerobot_so101.json"), "f", Robot::So100).unwrap();
    assert_eq!(out.warnings.len(), 1);
    assert!(
        out.warnings[0].contains("SO-100 URDF's zero pose"),
        "{:?}",
        out.warnings
    );
    assert!(out.yaml.contains("# Check: the SO-100 URDF's zero pose"));
    assert_eq!(joints(&parsed(&out.yaml))[0].0, "shoulder_pan");
}

#[test]
fn koch_calibration_becomes_dynamixel_yaml_with_a_model_per_joint() {
    let out = import(&sample("lerobot_koch.json"), "koch.json", Robot::Koch).unwrap();
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0].contains("Koch URDF's zero pose"));
    let v = parsed(&out.yaml);
    assert_eq!(v["kind"], "dynamixel");
    assert!(v.get("model").is_none(), "mixed models: one per joint");
    assert_eq!(v["link"]["baud"], 1_000_000);
    assert_eq!(
        joints(&v),
        [
            row("joint_1", 1, 1, 2047.5, [0, 4095], 3.0),
            row("joint_2", 2, 1, 2057.0, [1012, 3102], 3.0),
            row("joint_3", 3, 1, 2052.0, [1100, 3004], 3.0),
            row("joint_4", 4, 1, 2085.0, [1180, 2990], 4.0),
            row("joint_5", 5, 1, 2047.5, [0, 4095], 4.0),
        ]
    );
    let models: Vec<&str> = v["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        [
            "xl430-w250",
            "xl430-w250",
            "xl330-m288",
            "xl330-m288",
            "xl330-m288"
        ]
    );
    assert!(
        out.yaml
            .contains("# gripper (not a joint of the arm chain): id 6, xl330-m288")
    );

    // The file loads as the Dynamixel servo file of the Koch arm (on the
    // stand-in of its URDF: the same joints and limits).
    let urdf = common::project_dir().join("tests/data/koch_follower_standin.urdf");
    let chain = Chain::from_urdf_file(&urdf, Some("base_link"), Some("link_5")).unwrap();
    let dir = std::env::temp_dir().join(format!("arm_ik_lerobot_koch_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("koch.yaml");
    std::fs::write(&path, &out.yaml).unwrap();
    let cal = Calibration::load(&path, &chain).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(cal.protocol.name, "dynamixel");
    assert_eq!(cal.joints.len(), 5, "the gripper is a comment");
    let shoulder = &cal.joints[1];
    assert_eq!(
        (
            shoulder.joint.as_str(),
            shoulder.output,
            shoulder.min,
            shoulder.max
        ),
        ("joint_2", 2, 1012, 3102)
    );
    assert_eq!(shoulder.command(0.0), Some(2057));
    let model = shoulder.fields.get("model").and_then(|m| m.as_str());
    assert_eq!(model, Some("xl430-w250"));
}

#[test]
fn koch_leader_keeps_direction_1_where_the_servo_reverses_itself() {
    let mut file: Value = serde_json::from_str(&sample("lerobot_koch.json")).unwrap();
    file["elbow_flex"]["drive_mode"] = json!(1);
    let out = import(&file.to_string(), "f", Robot::KochLeader).unwrap();
    let v = parsed(&out.yaml);
    assert_eq!(joints(&v)[2].2, 1);
    assert_eq!(v["joints"][2]["model"], "xl330-m077");
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("'elbow_flex'") && w.contains("register 10")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn a_moved_id_is_used_and_said() {
    let mut file: Value = serde_json::from_str(&sample("lerobot_so101.json")).unwrap();
    file["wrist_roll"]["id"] = json!(15);
    let out = import(&file.to_string(), "f", Robot::So101).unwrap();
    assert_eq!(joints(&parsed(&out.yaml))[4].1, 15);
    assert_eq!(
        out.warnings,
        ["motor 'wrist_roll' has id 15 (LeRobot's SO-101 default is 5): using 15"]
    );
}

/// Imports the SO-101 sample with `edit` applied; the error.
fn error_of(edit: impl FnOnce(&mut Value)) -> ImportError {
    let mut file: Value = serde_json::from_str(&sample("lerobot_so101.json")).unwrap();
    edit(&mut file);
    import(&file.to_string(), "cal.json", Robot::So101).unwrap_err()
}

#[test]
fn bad_input_gets_an_error_naming_the_file_and_the_problem() {
    let msg = |e: ImportError| e.to_string();
    let e = import("{ not json", "cal.json", Robot::So101).unwrap_err();
    assert!(matches!(e, ImportError::NotJson { .. }));
    assert!(msg(e).starts_with("cal.json: not JSON"));
    let e = import("[1, 2]", "cal.json", Robot::Koch).unwrap_err();
    assert!(msg(e).contains("not a LeRobot calibration: expected an object of motors"));

    let e = error_of(|f| {
        f["elbow_flex"].as_object_mut().unwrap().remove("range_max");
    });
    assert!(matches!(&e, ImportError::NotAMotorCalibration { motor, .. } if motor == "elbow_flex"));
    assert!(msg(e).contains("missing field `range_max`"));
    let e = error_of(|f| f["gripper"]["id"] = json!("six"));
    assert!(matches!(&e, ImportError::NotAMotorCalibration { motor, .. } if motor == "gripper"));
    let e = error_of(|f| f["gripper"]["speed"] = json!(3));
    assert!(msg(e).contains("unknown field `speed`"));

    let e = error_of(|f| f["wrist_yaw"] = f["wrist_roll"].clone());
    assert_eq!(
        msg(e),
        "cal.json: motor 'wrist_yaw' is not a motor of the SO-101 (its motors: shoulder_pan, \
         shoulder_lift, elbow_flex, wrist_flex, wrist_roll, gripper)"
    );
    let e = error_of(|f| {
        f.as_object_mut().unwrap().remove("wrist_flex");
    });
    assert_eq!(msg(e), "cal.json: the SO-101 motor 'wrist_flex' is missing");
    let e = error_of(|f| f["gripper"]["id"] = json!(2));
    assert_eq!(
        msg(e),
        "cal.json: motors 'shoulder_lift' and 'gripper' both have id 2"
    );
    let e = error_of(|f| f["gripper"]["id"] = json!(300));
    assert!(matches!(e, ImportError::BadId { id: 300, .. }));
    let e = error_of(|f| f["wrist_flex"]["drive_mode"] = json!(2));
    assert_eq!(
        msg(e),
        "cal.json: motor 'wrist_flex': drive_mode 2 is neither 0 nor 1"
    );
    let e = error_of(|f| f["wrist_flex"]["range_min"] = json!(3162));
    assert!(msg(e).contains("range [3162, 3162] is empty"));
    let e = error_of(|f| f["wrist_flex"]["range_max"] = json!(5000));
    assert!(msg(e).contains("outside the STS3215's positions 0..=4095"));
}

#[test]
fn robots_are_named_as_the_command_takes_them() {
    for r in Robot::ALL {
        assert_eq!(Robot::from_name(r.name()), Some(r));
    }
    assert_eq!(Robot::from_name("so-101"), None);
    assert_eq!(Robot::names(), "so100, so101, koch, koch-leader");
}

#[test]
fn the_command_prints_writes_and_refuses_to_overwrite() {
    let input = common::project_dir().join("tests/data/lerobot_so101.json");
    let input = input.to_str().unwrap();
    let out = common::arm_ik(&["import-lerobot", input, "--robot", "so101"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(printed.contains("kind: feetech"));

    let dir = std::env::temp_dir().join(format!("arm_ik_import_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("servos.yaml");
    let target = yaml.to_str().unwrap();
    let args = [
        "import-lerobot",
        input,
        "--robot",
        "so101",
        "--output",
        target,
    ];
    assert!(common::arm_ik(&args).status.success());
    assert_eq!(std::fs::read_to_string(&yaml).unwrap(), printed);

    std::fs::write(&yaml, "mine").unwrap();
    let out = common::arm_ik(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exists; pass --force to overwrite it"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&yaml).unwrap(), "mine", "untouched");
    let forced = [&args[..], &["--force"]].concat();
    assert!(common::arm_ik(&forced).status.success());
    assert_eq!(std::fs::read_to_string(&yaml).unwrap(), printed);

    let out = common::arm_ik(&["import-lerobot", input, "--robot", "widowx"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown robot 'widowx' (known: so100, so101, koch, koch-leader)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
