use super::*;
use crate::servo::feetech::{ServoModel, joint_model};
use crate::servo::joint::Fields;
use proptest::prelude::*;

fn chain() -> Chain {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");
    Chain::from_urdf_file(urdf, None, None).unwrap()
}

fn project_file(name: &str) -> String {
    std::fs::read_to_string(format!("{}/config/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// config/servos_feetech.yaml's arm: its gripper entry left out, so the
/// checks here see exactly the chain's joints.
fn example() -> String {
    without_gripper(&project_file("servos_feetech.yaml"))
}

fn without_gripper(text: &str) -> String {
    text.lines()
        .filter(|l| !l.contains("joint: gripper,"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A project servo file against the project arm: every joint of the
/// chain driven, and the gripper entry driven when the URDF has the
/// gripper joint, else reported as not driven (and nothing else said).
fn check_project_file(name: &str) -> Calibration {
    let chain = chain();
    let c = Calibration::load(
        format!("{}/config/{name}", env!("CARGO_MANIFEST_DIR")),
        &chain,
    )
    .unwrap();
    let has_gripper = chain.extras.iter().any(|x| x.name == "gripper");
    let driven: Vec<&str> = c.joints.iter().map(|j| j.joint.as_str()).collect();
    let mut want: Vec<&str> = chain.joints.iter().map(|j| j.name.as_str()).collect();
    if has_gripper {
        want.push("gripper");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    } else {
        assert!(
            matches!(&c.warnings[..], [CalibrationWarning::NotInRobot { joint, .. }] if joint == "gripper"),
            "{:?}",
            c.warnings
        );
    }
    assert_eq!(driven, want);
    c
}

fn file() -> CalibrationFile {
    serde_norway::from_str(&example()).unwrap()
}

fn checked() -> Calibration {
    Calibration::check(&file(), &chain()).unwrap()
}

#[test]
fn example_file_matches_the_project_arm() {
    let c = check_project_file("servos_feetech.yaml");
    assert_eq!(c.protocol.name, "feetech");
    // STS3215 default scale: 4096 ticks per turn.
    assert!((c.joints[0].scale - 4096.0 / std::f64::consts::TAU).abs() < 1e-9);
    assert_eq!(c.joints[0].command(0.0), Some(2048));
}

#[test]
fn pwm_example_maps_the_arm_inside_the_firmware_range() {
    let c = check_project_file("servos_pwm.yaml");
    assert_eq!(c.protocol.name, "pwm_bridge");
    let outputs: Vec<u16> = c.joints.iter().map(|j| j.output).collect();
    assert_eq!(outputs, [0, 1, 2, 3, 4, 5][..c.joints.len()]);
    for j in &c.joints {
        // The firmware's own absolute range is 500..2500 µs: a file
        // beyond it would be clamped there, silently off the mapping.
        assert!(
            j.min >= 500 && j.max <= 2500,
            "{}: {}..{}",
            j.joint,
            j.min,
            j.max
        );
        assert_eq!(j.command(0.0), Some(j.zero.round() as i32));
    }
    assert_eq!(c.link.watchdog_ms, 500);
}

/// The example turned into PWM servos on channels `first..`.
fn to_pwm(f: &mut CalibrationFile, first: u16) {
    f.kind = "pwm_bridge".into();
    f.fields = Fields::default();
    for (k, j) in f.joints.iter_mut().enumerate() {
        (j.output, j.zero, j.scale, j.range) = (k as u16 + first, 1500.0, Some(600.0), [500, 2500]);
    }
}

fn check_err(edit: impl FnOnce(&mut CalibrationFile)) -> CalibrationError {
    let mut f = file();
    edit(&mut f);
    Calibration::check(&f, &chain()).unwrap_err()
}

#[test]
fn start_up_checks_name_the_problem() {
    assert_eq!(
        check_err(|f| {
            f.joints.pop();
        }),
        CalibrationError::MissingJoint {
            joint: "wrist_roll".into()
        }
    );
    assert!(matches!(
        check_err(|f| f.joints[1].output = f.joints[0].output),
        CalibrationError::SharedOutput { ref first, ref second, .. }
            if first == "base_yaw" && second == "shoulder"
    ));
    assert!(matches!(
        check_err(|f| f.joints[2].range = [0, 4096]),
        CalibrationError::Range { max: 4096, .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints[2].range = [3000, 3000]),
        CalibrationError::Range { .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints[3].zero = f64::NAN),
        CalibrationError::NotFinite { field: "zero", .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints[3].scale = Some(f64::INFINITY)),
        CalibrationError::NotFinite { field: "scale", .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints[0].direction = 0.5),
        CalibrationError::Direction { .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints[0].speed_limit = 0.0),
        CalibrationError::NotPositive {
            field: "speed_limit",
            ..
        }
    ));
    assert!(matches!(
        check_err(|f| f.joints[0].joint = "elbw".into()),
        CalibrationError::UnknownJoint { .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints.push(f.joints[0].clone())),
        CalibrationError::DuplicateJoint { .. }
    ));
    assert!(matches!(
        check_err(|f| f.joints[0].output = 253),
        CalibrationError::OutputRange { .. }
    ));
}

#[test]
fn protocol_and_link_checks_name_the_problem() {
    // PWM: µs outside 400..=2600, and no default scale.
    assert!(matches!(
        check_err(|f| {
            to_pwm(f, 0);
            f.joints[4].range = [300, 2500];
        }),
        CalibrationError::Range {
            min: 300,
            device_min: 400,
            ..
        }
    ));
    assert!(matches!(
        check_err(|f| {
            f.kind = "pwm_bridge".into();
            f.fields = Fields::default();
        }),
        CalibrationError::MissingScale { .. }
    ));
    // Unknown fields are typos, not ignored.
    let typo = example().replacen("speed_limit:", "speed_limt:", 1);
    assert!(matches!(
        Calibration::from_yaml(&typo, "typo.yaml", &chain()),
        Err(CalibrationError::Parse { .. })
    ));
    // The bridge has six channels.
    assert!(matches!(
        check_err(|f| to_pwm(f, 2)),
        CalibrationError::OutputRange {
            output: 6,
            max: 5,
            ..
        }
    ));
    assert!(matches!(
        check_err(|f| f.link.rate_hz = Some(0.0)),
        CalibrationError::Link(e) if e.field() == "rate_hz"
    ));
}

#[test]
fn the_bus_servo_model_sets_the_range_and_the_default_scale() {
    let default = example().replacen("model: sts3215", "", 1);
    let c = Calibration::from_yaml(&default, "no model", &chain()).unwrap();
    let model = |c: &Calibration| joint_model(&c.joints[0].fields).unwrap();
    assert_eq!(model(&c), ServoModel::Sts3215, "the default");
    assert!(example().contains("model: sts3215"));
    let sts3250 = example().replacen("model: sts3215", "model: sts3250", 1);
    let c = Calibration::from_yaml(&sts3250, "sts3250.yaml", &chain()).unwrap();
    assert_eq!(model(&c), ServoModel::Sts3250);
    assert_eq!(c.joints[0].command(0.0), Some(2048));
    // SCS0009: 0..=1023 and no default scale (its 1024 units cover
    // less than a turn): the file must measure it.
    let scs = |f: &mut CalibrationFile| {
        f.fields.set("model", "scs0009");
        for j in &mut f.joints {
            j.zero = 512.0;
            j.scale = Some(195.6);
            j.range = [100, 900];
        }
    };
    assert_eq!(
        check_err(|f| {
            scs(f);
            f.joints[1].scale = None;
        }),
        CalibrationError::MissingScale {
            joint: "shoulder".into(),
            hardware: "scs0009".into()
        }
    );
    let mut f = file();
    scs(&mut f);
    let c = Calibration::check(&f, &chain()).unwrap();
    assert_eq!(model(&c), ServoModel::Scs0009);
    assert_eq!(c.joints[0].command(1.0), Some(708));
    assert!(matches!(
        check_err(|f| {
            scs(f);
            f.joints[1].range = [100, 4000];
        }),
        CalibrationError::Range {
            device_max: 1023,
            ..
        }
    ));
    // A model on hobby servos is a mistake; an unknown one a typo.
    assert!(matches!(
        check_err(|f| {
            to_pwm(f, 0);
            f.fields.set("model", "sts3215");
        }),
        CalibrationError::FieldNotTaken {
            joint: None,
            protocol: "pwm_bridge",
            owner: Some("feetech"),
            ..
        }
    ));
    let typo = example().replacen("model: sts3215", "model: sts3251", 1);
    let e = Calibration::from_yaml(&typo, "typo.yaml", &chain()).unwrap_err();
    assert!(
        matches!(&e, CalibrationError::Field { error, .. } if error.why.contains("sts3251")),
        "{e}"
    );
}

#[test]
fn a_park_pose_is_checked_and_mapped() {
    let park = |f: &mut CalibrationFile| {
        to_pwm(f, 0);
        for (k, j) in f.joints.iter_mut().enumerate() {
            j.park = Some(0.1 * k as f64);
        }
    };
    let mut f = file();
    park(&mut f);
    let c = Calibration::check(&f, &chain()).unwrap();
    let want: Vec<i32> = c
        .joints
        .iter()
        .map(|j| j.command(j.park.unwrap()).unwrap())
        .collect();
    assert_eq!(c.park_commands(), Some(want));
    assert_eq!(checked().park_commands(), None, "no park pose given");
    assert_eq!(
        check_err(|f| {
            park(f);
            f.joints[2].park = None;
        }),
        CalibrationError::MissingPark {
            joint: "elbow".into()
        }
    );
    assert!(matches!(
        check_err(|f| {
            park(f);
            f.joints[0].park = Some(2.0);
        }),
        CalibrationError::ParkOutsideLimits { ref joint, value: 2.0, .. } if joint == "base_yaw"
    ));
    assert!(matches!(
        check_err(|f| {
            park(f);
            f.joints[1].park = Some(f64::NAN);
        }),
        CalibrationError::NotFinite { field: "park", .. }
    ));
    // Bus servos are read at start-up; a park pose there is a mistake.
    assert!(matches!(
        check_err(|f| f.joints[0].park = Some(0.0)),
        CalibrationError::ParkNotNeeded {
            protocol: "feetech",
            ..
        }
    ));
}

#[test]
fn mapping_clamps_and_follows_direction() {
    let c = checked();
    let m = &c.joints[0];
    let step = m.direction * m.scale;
    // Beyond the joint limit (±π/2): same command as at the limit.
    assert_eq!(m.command(3.0), m.command(m.upper));
    assert_eq!(m.command(f64::NEG_INFINITY), m.command(m.lower));
    assert_eq!(m.command(0.1), Some((m.zero + step * 0.1).round() as i32));
    assert_eq!(m.command(f64::NAN), None);
    let mut last = vec![7; 5];
    let err = c.commands(&[0.0, f64::NAN, 0.0, 0.0, 0.0], &mut last);
    assert_eq!(err, Err(MapError::NotANumber { index: 1 }));
    assert_eq!(last[1], 7, "NaN keeps the last command");
    assert_eq!(last[0], m.command(0.0).unwrap());
}

#[test]
fn range_clamps_inside_joint_limits() {
    let mut c = checked();
    let m = &mut c.joints[2];
    m.min = 2000;
    m.max = 2100;
    assert_eq!(
        m.command(1.0),
        Some(if m.direction > 0.0 { 2100 } else { 2000 })
    );
}

proptest! {
    #[test]
    fn any_angle_gives_a_command_in_range_or_none_for_nan(
        a in prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), -10.0..10.0f64],
        joint in 0usize..5,
        unbounded in any::<bool>(),
    ) {
        let mut c = checked();
        let m = &mut c.joints[joint];
        if unbounded {
            // A continuous joint: no limits before the range clamp.
            (m.lower, m.upper) = (f64::NEG_INFINITY, f64::INFINITY);
        }
        match m.command(a) {
            Some(v) => prop_assert!((m.min..=m.max).contains(&v), "{v}"),
            None => prop_assert!(a.is_nan()),
        }
    }

    #[test]
    fn round_trip_within_one_tick(t in 0.0..1.0f64, joint in 0usize..5) {
        let c = checked();
        let m = &c.joints[joint];
        let a = m.lower + t * (m.upper - m.lower);
        let ticks = m.command(a).unwrap();
        let raw = m.zero + m.direction * m.scale * a;
        prop_assume!(raw >= f64::from(m.min) && raw <= f64::from(m.max));
        let back = m.angle(ticks);
        prop_assert!((back - a).abs() * m.scale <= 1.0, "{a} -> {ticks} -> {back}");
    }
}

#[test]
fn the_old_kind_name_works_with_a_warning_naming_the_file() {
    let pwm = without_gripper(&project_file("servos_pwm.yaml"));
    assert!(pwm.contains("\nkind: pwm_bridge\n"));
    let new = Calibration::from_yaml(&pwm, "servos_pwm.yaml", &chain()).unwrap();
    assert!(new.warnings.is_empty());
    let old = pwm.replacen("kind: pwm_bridge", "kind: pwm", 1);
    let c = Calibration::from_yaml(&old, "old.yaml", &chain()).unwrap();
    assert_eq!(c.protocol.name, "pwm_bridge");
    assert_eq!(c.joints, new.joints, "the same calibration");
    assert_eq!(
        c.warnings,
        [CalibrationWarning::DeprecatedKind {
            file: "old.yaml".into(),
            written: "pwm".into(),
            name: "pwm_bridge"
        }]
    );
    let text = c.warnings[0].to_string();
    assert!(
        text.starts_with("old.yaml: ") && text.contains("`kind: pwm_bridge`"),
        "{text}"
    );
    let unknown = pwm.replacen("kind: pwm_bridge", "kind: feetch", 1);
    let e = Calibration::from_yaml(&unknown, "x.yaml", &chain()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "kind: 'feetch' is not a servo protocol; one of {}",
            crate::servo::registry::names().join(", ")
        )
    );
}

#[test]
fn a_joint_may_name_its_own_model() {
    // An STS3250 in the shoulder of an STS3215 arm: the joint's model
    // wins over the file's, each joint gets its own model.
    let mixed = example().replacen(
        "{ joint: shoulder,",
        "{ joint: shoulder, model: sts3250,",
        1,
    );
    assert_ne!(mixed, example(), "the example has a shoulder entry");
    let c = Calibration::from_yaml(&mixed, "mixed.yaml", &chain()).unwrap();
    let models: Vec<ServoModel> = c
        .joints
        .iter()
        .map(|j| joint_model(&j.fields).unwrap())
        .collect();
    assert_eq!(models[0], ServoModel::Sts3215);
    assert_eq!(models[1], ServoModel::Sts3250);
    // The device range is taken per joint: an SCS0009 (0..=1023) joint
    // with an STS range is refused for that joint.
    let scs = |f: &mut CalibrationFile| {
        f.joints[1].fields.set("model", "scs0009");
        f.joints[1].scale = Some(195.6);
    };
    assert!(matches!(
        check_err(scs),
        CalibrationError::Range { ref joint, device_max: 1023, .. } if joint == "shoulder"
    ));
    // Within its range, it is refused for its byte order: STS and SCS
    // servos cannot share a bus.
    let e = check_err(|f| {
        scs(f);
        f.joints[1].range = [100, 900];
    });
    assert!(
        matches!(&e, CalibrationError::Bus(b) if b.joint == "shoulder" && b.why.contains("sts3215")),
        "{e}"
    );
    // A joint's field a protocol does not take is named with its joint.
    let e = check_err(|f| {
        to_pwm(f, 0);
        f.joints[2].fields.set("model", "sts3215");
    });
    assert_eq!(
        e.to_string(),
        "joint 'elbow': `model` is not a setting of pwm_bridge servos (it is one of feetech)"
    );
}

#[test]
fn a_key_no_one_takes_is_a_typo_with_its_place() {
    let typo = example().replacen("link:", "lnk:", 1);
    let e = Calibration::from_yaml(&typo, "typo.yaml", &chain()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("typo.yaml: ") && text.contains("`lnk`") && text.contains("line"),
        "{text}"
    );
}
