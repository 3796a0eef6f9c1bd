//! Messy but valid real-world URDFs must load, and load correctly; the shared
//! real robots load with the expected chains (conformance).

mod common;

use arm_ik::model::{Chain, JointKind, ModelError, RobotTree, wrap_angle};
use nalgebra::{Point3, Vector3};
use std::f64::consts::{FRAC_PI_2, PI};

/// One URDF with everything vendors' exporters and ros2_control setups put in
/// a file that a pure kinematics loader must step over or get right
/// (`tests/fk_vs_k.rs` also checks its FK against the `k` crate).
const MESSY: &str = include_str!("data/messy.urdf");

fn messy_chain() -> Chain {
    Chain::from_urdf_str(MESSY, None, Some("tool_tip")).expect("messy URDF should load")
}

fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: {a} vs {b}");
}

fn assert_point(p: Point3<f64>, want: [f64; 3], what: &str) {
    for (i, (&got, want)) in p.coords.iter().zip(want).enumerate() {
        assert_close(got, want, 1e-12, &format!("{what}[{i}] of {p:?}"));
    }
}

#[test]
fn messy_chain_has_the_right_joints() {
    let c = messy_chain();
    assert_eq!(c.robot, "messy_bot");
    assert_eq!(c.source, "robot_description");
    assert_eq!((c.base.as_str(), c.tip.as_str()), ("base_link", "tool_tip"));
    assert_eq!(c.joint_names(), ["waist", "lift", "spin"]);
    let kinds: Vec<JointKind> = c.joints.iter().map(|j| j.kind).collect();
    assert_eq!(
        kinds,
        [
            JointKind::Revolute,
            JointKind::Prismatic,
            JointKind::Continuous
        ]
    );
    assert_eq!(
        (c.joints[0].limits.lower, c.joints[0].limits.upper),
        (-2.5, 2.5)
    );
    assert_eq!(
        (c.joints[1].limits.lower, c.joints[1].limits.upper),
        (0.0, 0.3)
    );
    assert_eq!(c.joints[0].max_velocity, 4.0);
    assert_eq!(c.joints[1].max_velocity, 0.1);
    assert_eq!(c.joints[2].max_velocity, 6.0);
}

#[test]
fn axes_are_normalised_and_keep_their_sign() {
    let c = messy_chain();
    let want = [
        Vector3::new(0.0, 0.0, -1.0),
        Vector3::new(0.0, 0.0, 1.0),
        Vector3::new(0.0, 1.0, 0.0),
    ];
    for (j, w) in c.joints.iter().zip(want) {
        assert!(
            (j.axis.into_inner() - w).norm() < 1e-15,
            "{}: axis {:?}, want {w:?}",
            j.name,
            j.axis
        );
    }
}

#[test]
fn continuous_joint_with_a_limit_tag_is_unbounded_and_wraps() {
    let c = messy_chain();
    let spin = &c.joints[2];
    assert!(spin.limits.lower == f64::NEG_INFINITY && spin.limits.upper == f64::INFINITY);
    assert!(spin.limits.contains(10.0) && spin.limits.contains(-10.0));
    assert_eq!(spin.sample_range(), (-PI, PI));
    for (q, want) in [
        (0.5, 0.5),
        (3.0, 3.0),
        (3.5, 3.5 - 2.0 * PI),
        (-3.5, 2.0 * PI - 3.5),
        (7.0 * PI + 0.25, -PI + 0.25),
        (100.0, wrap_angle(100.0)),
    ] {
        let n = spin.normalize(q);
        assert!((-PI..=PI).contains(&n), "normalize({q}) = {n}");
        assert_close(n, want, 1e-9, &format!("normalize({q})"));
        // Wrapping must not move the joint: same rotation.
        assert_close(n.sin(), q.sin(), 1e-9, "sin");
        assert_close(n.cos(), q.cos(), 1e-9, "cos");
    }
    // A bounded joint clamps instead.
    assert_eq!(c.joints[0].normalize(3.5), 2.5);
    assert_eq!(c.joints[1].normalize(-1.0), 0.0);
    assert_eq!(c.joints[0].normalize(f64::NAN), 0.0);
    // A point beyond a continuous joint's URDF <limit> is still within limits.
    assert!(c.within_limits(&[0.0, 0.1, 5.0]));
    assert!(!c.within_limits(&[2.6, 0.1, 0.0]));
}

#[test]
fn messy_chain_fk_by_hand() {
    // Zero pose: waist at z 0.1, lift 0.2 out along x, spin 0.05 up, flange
    // 0.1 along x, tool 0.05 up. The rpy noise must not show.
    let c = messy_chain();
    let t = c.fk(&[0.0, 0.0, 0.0]);
    assert_point(t * Point3::origin(), [0.3, 0.0, 0.2], "zero pose");
    assert!((t.rotation.matrix() - nalgebra::Matrix3::identity()).norm() < 1e-14);

    // Waist +90 deg about -z swings x to -y; lift 0.1 raises by 0.1.
    let t = c.fk(&[FRAC_PI_2, 0.1, 0.0]);
    assert_point(t * Point3::origin(), [0.0, -0.3, 0.3], "waist 90, lift 0.1");

    // Spin +90 deg about +y (axis 0 2 0) swings the flange's x offset to -z
    // and the tool's z offset to +x.
    let t = c.fk(&[0.0, 0.0, FRAC_PI_2]);
    assert_point(t * Point3::origin(), [0.25, 0.0, 0.05], "spin 90");
}

/// Beside the fingers, the tool frame is the default tip: the fingers hang
/// below the whole arm through joints of their own. Without that shape
/// (the fingers' branch alone) the leaves are listed.
#[test]
fn default_tip_skips_the_finger_leaves_and_lists_leaves_otherwise() {
    let c = Chain::from_urdf_str(MESSY, None, None).unwrap();
    assert_eq!(c.tip, "tool_tip");
    assert_eq!(c.joint_names(), ["waist", "lift", "spin"]);
    let t = RobotTree::from_str(MESSY, "messy").unwrap();
    let err = t.default_tip("wrist").unwrap_err();
    match err {
        ModelError::AmbiguousTip {
            base, mut leaves, ..
        } => {
            assert_eq!(base, "wrist");
            leaves.sort();
            assert_eq!(leaves, ["finger_left", "finger_right", "tool_tip"]);
        }
        other => panic!("expected AmbiguousTip, got {other:?}"),
    }
}

#[test]
fn mimic_finger_off_the_chain_is_fine_and_its_master_is_a_chain() {
    let c = Chain::from_urdf_str(MESSY, Some("wrist"), Some("finger_left")).unwrap();
    assert_eq!(c.joint_names(), ["finger_left_joint"]);
    let err = Chain::from_urdf_str(MESSY, Some("wrist"), Some("finger_right")).unwrap_err();
    assert!(matches!(err, ModelError::MimicInChain { .. }), "{err:?}");
}

/// The joints off the chain are kept: published by the node so the whole
/// robot shows, the mimic one computed from its leader.
#[test]
fn moving_joints_off_the_chain_are_kept_with_their_mimic_relation() {
    let c = messy_chain();
    let names: Vec<&str> = c.extras.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["finger_left_joint", "finger_right_joint"]);
    let (left, right) = (&c.extras[0], &c.extras[1]);
    assert!(left.actuated() && !right.actuated());
    let m = right.mimic.as_ref().unwrap();
    assert_eq!(m.leader, "finger_left_joint");
    assert_eq!(left.kind, JointKind::Prismatic);
    assert!(left.limits.lower < left.limits.upper);
    // On the chain through the left finger, the waist and the rest are
    // the extras and the right finger still mimics the left, a chain joint.
    let c = Chain::from_urdf_str(MESSY, Some("wrist"), Some("finger_left")).unwrap();
    assert!(c.extras.iter().any(|e| e.name == "waist"));
    assert!(!c.extras.iter().any(|e| e.name == "finger_left_joint"));
    // The project arm's gripper: its tool frame is the default tip, the
    // jaw is actuated and its mirror follows it the other way.
    let arm = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    assert_eq!(arm.tip, "tool");
    let extras: Vec<(&str, bool)> = arm
        .extras
        .iter()
        .map(|e| (e.name.as_str(), e.actuated()))
        .collect();
    assert_eq!(extras, [("gripper", true), ("gripper_mirror", false)]);
    let mirror = arm.extras[1].mimic.as_ref().unwrap();
    assert_eq!(
        (mirror.leader.as_str(), mirror.multiplier),
        ("gripper", -1.0)
    );
    assert_eq!(
        (arm.extras[0].limits.lower, arm.extras[0].limits.upper),
        (0.0, 1.2)
    );
}

#[test]
fn a_mimic_of_a_joint_that_is_not_there_is_named() {
    let bad = MESSY.replace(
        r#"<mimic joint="finger_left_joint""#,
        r#"<mimic joint="finger_lfet_joint""#,
    );
    assert_ne!(bad, MESSY, "the fixture has a mimic joint");
    let err = Chain::from_urdf_str(&bad, None, Some("tool_tip")).unwrap_err();
    assert!(matches!(err, ModelError::BadMimic { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("finger_right_joint") && text.contains("finger_lfet_joint"),
        "{text}"
    );
}

#[test]
fn tree_sees_every_link() {
    let t = RobotTree::from_str(MESSY, "robot_description").unwrap();
    assert_eq!(t.root, "base_link");
    assert_eq!(t.links.len(), 8);
    let mut leaves = t.leaves_below("flange");
    leaves.sort();
    assert_eq!(leaves, ["finger_left", "finger_right", "tool_tip"]);
}

#[test]
fn windows_line_endings_and_byte_order_mark() {
    // Files saved by Windows editors: CRLF and a UTF-8 BOM.
    let crlf = MESSY.replace('\n', "\r\n");
    let c = Chain::from_urdf_str(&crlf, None, Some("tool_tip")).expect("CRLF");
    assert_eq!(c.dof(), 3);
    let bom = format!("\u{feff}{crlf}");
    let c = Chain::from_urdf_str(&bom, None, Some("tool_tip")).expect("BOM");
    assert_eq!(c.dof(), 3);
}

#[test]
fn urdf_1_2_revolute_without_lower_upper_samples_a_finite_range() {
    // URDF 1.2: omitted lower/upper mean "no limit" (urdf-rs gives +-inf).
    let xml = r#"<robot name="v12" version="1.2">
      <link name="a"/><link name="b"/><link name="c"/><link name="d"/>
      <joint name="free_spin" type="revolute">
        <parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit effort="1" velocity="1"/>
      </joint>
      <joint name="half_open" type="revolute">
        <parent link="b"/><child link="c"/><axis xyz="0 1 0"/>
        <limit upper="-3.5" effort="1" velocity="1"/>
      </joint>
      <joint name="slide" type="prismatic">
        <parent link="c"/><child link="d"/><axis xyz="1 0 0"/>
        <limit lower="0.2" effort="1" velocity="1"/>
      </joint>
    </robot>"#;
    let c = Chain::from_urdf_str(xml, None, None).unwrap();
    assert_eq!(c.joints[0].limits.upper, f64::INFINITY);
    let ranges: Vec<(f64, f64)> = c.joints.iter().map(|j| j.sample_range()).collect();
    assert_eq!(ranges[0], (-PI, PI));
    assert_eq!(ranges[1], (-3.5 - 2.0 * PI, -3.5));
    assert_eq!(ranges[2], (0.2, 2.2));
    let mut rng = common::TestRng::new(7);
    for _ in 0..100 {
        let q = common::random_q(&c, &mut rng);
        assert!(c.within_limits(&q), "{q:?}");
        assert!(c.fk(&q).translation.vector.iter().all(|v| v.is_finite()));
    }
    assert!(c.joints[0].normalize(0.3).is_finite());
}

#[test]
fn project_robots_load_with_default_tip() {
    let arm = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    assert_eq!(
        arm.joint_names(),
        ["base_yaw", "shoulder", "elbow", "wrist_pitch", "wrist_roll"]
    );
    assert_eq!((arm.base.as_str(), arm.tip.as_str()), ("base_link", "tool"));
    assert!(arm.source.ends_with("arm.urdf"));
    // Arm points straight up at zero: 0.045+0.04+0.12+0.11+0.045+0.055.
    let p = arm.fk(&[0.0; 5]) * Point3::origin();
    assert_point(p, [0.0, 0.0, 0.415], "arm zero pose");

    let leg = Chain::from_urdf_file(common::project_urdf("leg.urdf"), None, None).unwrap();
    assert_eq!(leg.joint_names(), ["hip_abduction", "hip_flexion", "knee"]);
    assert_eq!((leg.base.as_str(), leg.tip.as_str()), ("body", "foot"));
    let p = leg.fk(&[0.0; 3]) * Point3::origin();
    assert_point(p, [0.05, 0.075, -0.245], "leg zero pose");
}

// ---- conformance: the shared real robots ----

#[test]
fn every_shared_robot_loads_as_a_tree() {
    let Some(dir) = common::shared_dir() else {
        return;
    };
    let mut n = 0;
    for entry in std::fs::read_dir(dir.join("robots")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "urdf") {
            let tree = RobotTree::from_file(&path)
                .unwrap_or_else(|e| panic!("{} should load: {e}", path.display()));
            assert!(!tree.links.is_empty());
            n += 1;
        }
    }
    assert!(n >= 4, "expected the four shared robots, found {n}");
}

/// (file, base, tip, joint names)
const SHARED_CHAINS: &[(&str, &str, &str, &[&str])] = &[
    (
        "ur5_robot.urdf",
        "base_link",
        "tool0",
        &[
            "shoulder_pan_joint",
            "shoulder_lift_joint",
            "elbow_joint",
            "wrist_1_joint",
            "wrist_2_joint",
            "wrist_3_joint",
        ],
    ),
    (
        "panda.urdf",
        "panda_link0",
        "panda_hand",
        &[
            "panda_joint1",
            "panda_joint2",
            "panda_joint3",
            "panda_joint4",
            "panda_joint5",
            "panda_joint6",
            "panda_joint7",
        ],
    ),
    (
        "so101.urdf",
        "base_link",
        "gripper_frame_link",
        &[
            "shoulder_pan",
            "shoulder_lift",
            "elbow_flex",
            "wrist_flex",
            "wrist_roll",
        ],
    ),
    (
        "solo12.urdf",
        "base_link",
        "FL_FOOT",
        &["FL_HAA", "FL_HFE", "FL_KFE"],
    ),
    (
        "solo12.urdf",
        "base_link",
        "FR_FOOT",
        &["FR_HAA", "FR_HFE", "FR_KFE"],
    ),
    (
        "solo12.urdf",
        "base_link",
        "HL_FOOT",
        &["HL_HAA", "HL_HFE", "HL_KFE"],
    ),
    (
        "solo12.urdf",
        "base_link",
        "HR_FOOT",
        &["HR_HAA", "HR_HFE", "HR_KFE"],
    ),
];

#[test]
fn shared_chains_have_the_expected_joints() {
    let Some(dir) = common::shared_dir() else {
        return;
    };
    for (file, base, tip, names) in SHARED_CHAINS {
        let path = dir.join("robots").join(file);
        let c = Chain::from_urdf_file(&path, Some(base), Some(tip))
            .unwrap_or_else(|e| panic!("{file} {base}->{tip}: {e}"));
        assert_eq!(&c.joint_names(), names, "{file} {base}->{tip}");
        assert!(c.joints.iter().all(|j| j.kind == JointKind::Revolute));
        assert!(
            c.joints
                .iter()
                .all(|j| j.limits.lower.is_finite() && j.limits.lower < j.limits.upper),
            "{file}: every joint has a real range"
        );
    }
}

#[test]
fn shared_robot_dof() {
    let Some(dir) = common::shared_dir() else {
        return;
    };
    let dof = |file: &str, base: &str, tip: &str| {
        Chain::from_urdf_file(dir.join("robots").join(file), Some(base), Some(tip))
            .unwrap()
            .dof()
    };
    assert_eq!(dof("ur5_robot.urdf", "base_link", "tool0"), 6);
    assert_eq!(dof("panda.urdf", "panda_link0", "panda_hand"), 7);
    assert_eq!(dof("so101.urdf", "base_link", "gripper_frame_link"), 5);
    assert_eq!(dof("solo12.urdf", "base_link", "FL_FOOT"), 3);
}

#[test]
fn shared_robot_quirks() {
    let Some(dir) = common::shared_dir() else {
        return;
    };
    let robots = dir.join("robots");
    // UR5's root is `world` (a fixed joint above base_link).
    let ur5 = RobotTree::from_file(robots.join("ur5_robot.urdf")).unwrap();
    assert_eq!(ur5.root, "world");
    let c = Chain::from_urdf_file(robots.join("ur5_robot.urdf"), None, Some("tool0")).unwrap();
    assert_eq!((c.base.as_str(), c.dof()), ("world", 6));
    // A near miss on the tip names the real one.
    let err = Chain::from_urdf_file(
        robots.join("ur5_robot.urdf"),
        Some("base_link"),
        Some("tool"),
    )
    .unwrap_err();
    match &err {
        ModelError::NoSuchLink { suggestions, .. } => {
            assert!(suggestions.iter().any(|s| s == "tool0"), "{suggestions:?}")
        }
        other => panic!("expected NoSuchLink, got {other:?}"),
    }
    assert!(err.to_string().contains("ur5_robot.urdf"), "{err}");
    // panda's fingers: the second mimics the first, off the arm chain, so
    // the arm loads (above) but a chain through the mimic finger does not.
    let err = Chain::from_urdf_file(
        robots.join("panda.urdf"),
        Some("panda_hand"),
        Some("panda_rightfinger"),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::MimicInChain { .. }), "{err:?}");
    // The arm chain keeps both fingers, the second computed from the first;
    // the SO-101's gripper is the one joint off its arm chain; a solo12 leg
    // has the other nine joints beside it.
    let extras = |file: &str, base: &str, tip: &str| -> Vec<(String, bool)> {
        Chain::from_urdf_file(robots.join(file), Some(base), Some(tip))
            .unwrap()
            .extras
            .iter()
            .map(|e| (e.name.clone(), e.actuated()))
            .collect()
    };
    assert_eq!(
        extras("panda.urdf", "panda_link0", "panda_hand"),
        [
            ("panda_finger_joint1".to_string(), true),
            ("panda_finger_joint2".to_string(), false)
        ]
    );
    assert_eq!(
        extras("so101.urdf", "base_link", "gripper_frame_link"),
        [("gripper".to_string(), true)]
    );
    assert_eq!(extras("solo12.urdf", "base_link", "FL_FOOT").len(), 9);
    // The tool frame beside the gripper is the default tip on both arms.
    let tip = |file: &str| {
        Chain::from_urdf_file(robots.join(file), None, None)
            .unwrap()
            .tip
    };
    assert_eq!(tip("so101.urdf"), "gripper_frame_link");
    assert_eq!(tip("panda.urdf"), "panda_hand_tcp");
    // solo12 has four legs: no default tip.
    let err = Chain::from_urdf_file(robots.join("solo12.urdf"), None, None).unwrap_err();
    match err {
        ModelError::AmbiguousTip { leaves, .. } => {
            for foot in ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"] {
                assert!(leaves.iter().any(|l| l == foot), "{leaves:?}");
            }
        }
        other => panic!("expected AmbiguousTip, got {other:?}"),
    }
}
