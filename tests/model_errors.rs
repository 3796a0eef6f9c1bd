//! Every malformed-URDF case gives its own `ModelError` variant, and the
//! message names where the URDF came from and the link or joint at fault.

mod common;

use arm_ik::model::{Chain, ChainSelection, ModelError, RobotTree};

const SRC: &str = "robot_description";

fn link(name: &str) -> String {
    format!(r#"<link name="{name}"/>"#)
}

fn joint(name: &str, kind: &str, parent: &str, child: &str, extra: &str) -> String {
    format!(
        r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>"#
    )
}

fn revolute(name: &str, parent: &str, child: &str) -> String {
    joint(
        name,
        "revolute",
        parent,
        child,
        r#"<origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>"#,
    )
}

fn robot(parts: &[String]) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<robot name=\"t\">\n{}\n</robot>\n",
        parts.join("\n")
    )
}

/// base -> j1 -> l1 -> j2 -> l2, a valid two-joint robot.
fn two_links() -> String {
    robot(&[
        link("base"),
        link("l1"),
        link("l2"),
        revolute("j1", "base", "l1"),
        revolute("j2", "l1", "l2"),
    ])
}

fn tree_err(xml: &str) -> ModelError {
    RobotTree::from_str(xml, SRC).expect_err("the URDF should be rejected")
}

fn chain_err(xml: &str, base: Option<&str>, tip: Option<&str>) -> ModelError {
    Chain::from_urdf_str(xml, base, tip).expect_err("the chain should be rejected")
}

/// The message starts with the source and contains every `needle`.
fn assert_names(err: &ModelError, source: &str, needles: &[&str]) {
    let msg = err.to_string();
    assert!(
        msg.starts_with(source),
        "message should start with the source {source:?}: {msg}"
    );
    for n in needles {
        assert!(msg.contains(n), "message should mention {n:?}: {msg}");
    }
}

/// A unique temp file holding `text`, removed on drop.
struct TempUrdf(std::path::PathBuf);

impl TempUrdf {
    fn new(tag: &str, text: &str) -> TempUrdf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "arm_ik_model_errors_{}_{}_{tag}.urdf",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, text).unwrap();
        TempUrdf(path)
    }
}

impl Drop for TempUrdf {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn valid_fixture_loads() {
    // The fixtures below break this one robot in one place each; make sure
    // the unbroken robot is fine, so each error really comes from the break.
    let c = Chain::from_urdf_str(&two_links(), None, None).unwrap();
    assert_eq!(c.joint_names(), ["j1", "j2"]);
    assert_eq!((c.base.as_str(), c.tip.as_str()), ("base", "l2"));
}

#[test]
fn file_not_found_names_the_path() {
    let path = std::env::temp_dir().join("arm_ik_no_such_dir_xyz/missing_robot.urdf");
    let err = Chain::from_urdf_file(&path, None, None).unwrap_err();
    assert!(matches!(err, ModelError::Unreadable { .. }), "{err:?}");
    assert_names(&err, &path.display().to_string(), &["cannot read"]);
}

#[test]
fn plain_text_is_not_urdf() {
    let err = tree_err("this is a robot, honest\nlink base\n");
    assert!(matches!(err, ModelError::NotUrdf { .. }), "{err:?}");
    assert_names(&err, SRC, &["not a URDF", "this is a robot"]);
}

#[test]
fn empty_text_is_not_urdf() {
    let err = tree_err("  \n ");
    assert!(matches!(err, ModelError::NotUrdf { .. }), "{err:?}");
    assert_names(&err, SRC, &["empty"]);
}

#[test]
fn truncated_xml_is_not_urdf() {
    let full = two_links();
    let cut = &full[..full.find("<joint name=\"j2\"").unwrap() + 20];
    let err = tree_err(cut);
    assert!(matches!(err, ModelError::NotUrdf { .. }), "{err:?}");
    assert_names(&err, SRC, &["not a URDF"]);
}

#[test]
fn truncated_file_names_the_file() {
    let full = two_links();
    let f = TempUrdf::new("truncated", &full[..full.len() / 2]);
    let err = RobotTree::from_file(&f.0).unwrap_err();
    assert!(matches!(err, ModelError::NotUrdf { .. }), "{err:?}");
    assert_names(&err, &f.0.display().to_string(), &["not a URDF"]);
}

#[test]
fn xml_without_robot_element() {
    let err = tree_err(
        r#"<?xml version="1.0"?><sdf version="1.6"><model name="m"><link name="a"/></model></sdf>"#,
    );
    assert!(matches!(err, ModelError::NotUrdf { .. }), "{err:?}");
    assert_names(&err, SRC, &["<robot>"]);
}

#[test]
fn robot_without_links_is_empty() {
    let err = tree_err(r#"<robot name="nothing"></robot>"#);
    assert!(matches!(err, ModelError::Empty { .. }), "{err:?}");
    assert_names(&err, SRC, &["no links"]);
}

#[test]
fn no_such_tip_suggests_close_names() {
    let arm = common::project_urdf("arm.urdf");
    let err = Chain::from_urdf_file(&arm, None, Some("tool0")).unwrap_err();
    match &err {
        ModelError::NoSuchLink {
            name,
            role,
            suggestions,
            ..
        } => {
            assert_eq!((name.as_str(), *role), ("tool0", "tip"));
            assert_eq!(suggestions.first().map(String::as_str), Some("tool"));
        }
        other => panic!("expected NoSuchLink, got {other:?}"),
    }
    assert_names(
        &err,
        &arm.display().to_string(),
        &["'tool0'", "tip", "did you mean 'tool'"],
    );
}

#[test]
fn no_such_base_suggests_close_names() {
    let arm = common::project_urdf("arm.urdf");
    let err = Chain::from_urdf_file(&arm, Some("uper_arm"), None).unwrap_err();
    match &err {
        ModelError::NoSuchLink {
            role, suggestions, ..
        } => {
            assert_eq!(*role, "base");
            assert_eq!(suggestions.first().map(String::as_str), Some("upper_arm"));
        }
        other => panic!("expected NoSuchLink, got {other:?}"),
    }
    assert_names(
        &err,
        &arm.display().to_string(),
        &["'uper_arm'", "'upper_arm'"],
    );
}

#[test]
fn no_such_link_without_anything_close() {
    let err = chain_err(&two_links(), None, Some("gripper_frame_link"));
    match &err {
        ModelError::NoSuchLink { suggestions, .. } => assert!(suggestions.is_empty()),
        other => panic!("expected NoSuchLink, got {other:?}"),
    }
    assert_names(&err, SRC, &["'gripper_frame_link'"]);
    assert!(!err.to_string().contains("did you mean"), "{err}");
}

#[test]
fn tip_above_base_says_swap() {
    let err = chain_err(&two_links(), Some("l2"), Some("l1"));
    assert!(matches!(err, ModelError::NoPath { .. }), "{err:?}");
    assert_names(&err, SRC, &["'l2'", "'l1'", "swap"]);
}

#[test]
fn tip_on_another_branch_has_no_path() {
    let xml = robot(&[
        link("base"),
        link("a"),
        link("b"),
        revolute("ja", "base", "a"),
        revolute("jb", "base", "b"),
    ]);
    let err = chain_err(&xml, Some("a"), Some("b"));
    assert!(matches!(err, ModelError::NoPath { .. }), "{err:?}");
    assert_names(&err, SRC, &["'a'", "'b'", "not below"]);
    assert!(!err.to_string().contains("swap"), "{err}");
}

#[test]
fn ambiguous_tip_lists_the_leaves() {
    let xml = robot(&[
        link("base"),
        link("left_finger"),
        link("right_finger"),
        revolute("jl", "base", "left_finger"),
        revolute("jr", "base", "right_finger"),
    ]);
    let err = chain_err(&xml, None, None);
    match &err {
        ModelError::AmbiguousTip { base, leaves, .. } => {
            assert_eq!(base, "base");
            let mut l = leaves.clone();
            l.sort();
            assert_eq!(l, ["left_finger", "right_finger"]);
        }
        other => panic!("expected AmbiguousTip, got {other:?}"),
    }
    assert_names(&err, SRC, &["'base'", "left_finger", "right_finger"]);
}

#[test]
fn zero_axis() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        joint(
            "spin",
            "revolute",
            "base",
            "l1",
            r#"<axis xyz="0 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>"#,
        ),
    ]);
    let err = tree_err(&xml);
    assert!(matches!(err, ModelError::ZeroAxis { .. }), "{err:?}");
    assert_names(&err, SRC, &["'spin'", "zero-length axis"]);
}

fn non_finite_origin(attr: &str) -> ModelError {
    let xml = robot(&[
        link("base"),
        link("l1"),
        joint(
            "bad_joint",
            "revolute",
            "base",
            "l1",
            &format!(
                r#"<origin {attr}/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>"#
            ),
        ),
    ]);
    tree_err(&xml)
}

#[test]
fn nan_in_origin_xyz() {
    let err = non_finite_origin(r#"xyz="0 NaN 0.1""#);
    assert!(
        matches!(
            &err,
            ModelError::NonFinite { kind: "joint", field, .. } if field == "origin xyz"
        ),
        "{err:?}"
    );
    assert_names(&err, SRC, &["'bad_joint'", "origin xyz", "NaN"]);
}

#[test]
fn inf_in_origin_xyz() {
    let err = non_finite_origin(r#"xyz="0 0 inf""#);
    assert!(
        matches!(
            &err,
            ModelError::NonFinite { kind: "joint", field, .. } if field == "origin xyz"
        ),
        "{err:?}"
    );
    assert_names(&err, SRC, &["'bad_joint'", "origin xyz", "inf"]);
}

#[test]
fn nan_in_origin_rpy() {
    let err = non_finite_origin(r#"xyz="0 0 0.1" rpy="nan 0 0""#);
    assert!(
        matches!(
            &err,
            ModelError::NonFinite { kind: "joint", field, .. } if field == "origin rpy"
        ),
        "{err:?}"
    );
    assert_names(&err, SRC, &["'bad_joint'", "origin rpy", "nan 0 0"]);
}

#[test]
fn inf_in_origin_rpy() {
    let err = non_finite_origin(r#"rpy="0 -inf 0""#);
    assert!(
        matches!(
            &err,
            ModelError::NonFinite { kind: "joint", field, .. } if field == "origin rpy"
        ),
        "{err:?}"
    );
    assert_names(&err, SRC, &["'bad_joint'", "origin rpy", "inf"]);
}

#[test]
fn nan_on_a_joint_off_the_chain_is_still_reported() {
    // A broken number anywhere means a broken file; don't wait until someone
    // picks the branch that holds it.
    let xml = robot(&[
        link("base"),
        link("a"),
        link("b"),
        revolute("ja", "base", "a"),
        joint(
            "camera_mount",
            "fixed",
            "base",
            "b",
            r#"<origin xyz="nan 0 0"/>"#,
        ),
    ]);
    let err = chain_err(&xml, None, Some("a"));
    assert!(matches!(err, ModelError::NonFinite { .. }), "{err:?}");
    assert_names(&err, SRC, &["'camera_mount'"]);
}

#[test]
fn nan_in_axis() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        joint(
            "wobbly",
            "revolute",
            "base",
            "l1",
            r#"<axis xyz="0 nan 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>"#,
        ),
    ]);
    let err = tree_err(&xml);
    assert!(
        matches!(&err, ModelError::NonFinite { field, .. } if field == "axis xyz"),
        "{err:?}"
    );
    assert_names(&err, SRC, &["'wobbly'", "axis xyz", "0 nan 1"]);
}

#[test]
fn nan_limit() {
    let err = tree_err(&limited(
        "",
        r#"lower="-1" upper="NaN" effort="1" velocity="1""#,
    ));
    assert!(
        matches!(&err, ModelError::NonFinite { field, .. } if field == "limit upper"),
        "{err:?}"
    );
    assert_names(&err, SRC, &["'elbow'", "limit upper", "NaN"]);
}

#[test]
fn inverted_limits() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        joint(
            "elbow",
            "prismatic",
            "base",
            "l1",
            r#"<axis xyz="0 1 0"/><limit lower="0.5" upper="-0.5" effort="1" velocity="1"/>"#,
        ),
    ]);
    let err = tree_err(&xml);
    match &err {
        ModelError::InvertedLimits { lower, upper, .. } => {
            assert_eq!((*lower, *upper), (0.5, -0.5))
        }
        other => panic!("expected InvertedLimits, got {other:?}"),
    }
    assert_names(&err, SRC, &["'elbow'", "0.5", "-0.5"]);
}

#[test]
fn pure_cycle_is_a_loop() {
    // a -> b -> a and nothing else: no root at all.
    let xml = robot(&[
        link("a"),
        link("b"),
        revolute("ab", "a", "b"),
        revolute("ba", "b", "a"),
    ]);
    let err = tree_err(&xml);
    match &err {
        ModelError::Loop { cycle, .. } => {
            assert_eq!(cycle.len(), 3, "{cycle:?}");
            assert_eq!(cycle.first(), cycle.last());
            let mut inner = cycle[..2].to_vec();
            inner.sort();
            assert_eq!(inner, ["a", "b"]);
        }
        other => panic!("expected Loop, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.ends_with("a -> b -> a") || msg.ends_with("b -> a -> b"),
        "message should spell out the cycle: {msg}"
    );
    assert_names(&err, SRC, &["loop"]);
}

#[test]
fn longer_cycle_is_a_loop_naming_every_link() {
    let xml = robot(&[
        link("a"),
        link("b"),
        link("c"),
        revolute("ab", "a", "b"),
        revolute("bc", "b", "c"),
        revolute("ca", "c", "a"),
    ]);
    let err = tree_err(&xml);
    match &err {
        ModelError::Loop { cycle, .. } => {
            // Parent to child order, closed: one of the rotations of a b c a.
            let rotations = [
                ["a", "b", "c", "a"],
                ["b", "c", "a", "b"],
                ["c", "a", "b", "c"],
            ];
            assert!(rotations.iter().any(|r| cycle == r), "{cycle:?}");
            assert_names(&err, SRC, &["loop", &cycle.join(" -> ")]);
        }
        other => panic!("expected Loop, got {other:?}"),
    }
}

#[test]
fn cycle_under_a_root_is_two_parents() {
    // root -> a, a -> b, b -> a: link a has two parent joints, which is how
    // a loop that hangs off a real tree shows up.
    let xml = robot(&[
        link("root"),
        link("a"),
        link("b"),
        revolute("root_a", "root", "a"),
        revolute("ab", "a", "b"),
        revolute("ba", "b", "a"),
    ]);
    let err = tree_err(&xml);
    match &err {
        ModelError::TwoParents {
            link,
            first,
            second,
            ..
        } => {
            assert_eq!(link, "a");
            assert_eq!((first.as_str(), second.as_str()), ("root_a", "ba"));
        }
        other => panic!("expected TwoParents, got {other:?}"),
    }
    assert_names(&err, SRC, &["'a'", "'root_a'", "'ba'"]);
}

#[test]
fn two_parents() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        link("l2"),
        revolute("j1", "base", "l1"),
        revolute("j2", "l1", "l2"),
        revolute("j2_again", "base", "l2"),
    ]);
    let err = tree_err(&xml);
    assert!(matches!(err, ModelError::TwoParents { .. }), "{err:?}");
    assert_names(&err, SRC, &["'l2'", "'j2'", "'j2_again'", "two joints"]);
}

#[test]
fn several_roots() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        link("stray_camera"),
        revolute("j1", "base", "l1"),
    ]);
    let err = tree_err(&xml);
    match &err {
        ModelError::SeveralRoots { roots, .. } => {
            let mut r = roots.clone();
            r.sort();
            assert_eq!(r, ["base", "stray_camera"]);
        }
        other => panic!("expected SeveralRoots, got {other:?}"),
    }
    assert_names(&err, SRC, &["base", "stray_camera", "not connected"]);
}

#[test]
fn dangling_joint() {
    let xml = robot(&[link("base"), revolute("j1", "base", "ghost")]);
    let err = tree_err(&xml);
    assert!(matches!(err, ModelError::DanglingJoint { .. }), "{err:?}");
    assert_names(&err, SRC, &["'j1'", "'ghost'"]);
}

fn unsupported(kind: &str) {
    let xml = robot(&[
        link("world"),
        link("base"),
        link("l1"),
        joint("free_base", kind, "world", "base", ""),
        revolute("j1", "base", "l1"),
    ]);
    // The tree itself is fine; floating and planar joints are legal URDF.
    RobotTree::from_str(&xml, SRC).unwrap();
    let err = chain_err(&xml, None, None);
    match &err {
        ModelError::UnsupportedJoint { joint, kind: k, .. } => {
            assert_eq!((joint.as_str(), k.as_str()), ("free_base", kind));
        }
        other => panic!("expected UnsupportedJoint, got {other:?}"),
    }
    assert_names(&err, SRC, &["'free_base'", kind]);
    // ... and a chain that starts below it is fine.
    let c = Chain::from_urdf_str(&xml, Some("base"), None).unwrap();
    assert_eq!(c.joint_names(), ["j1"]);
}

#[test]
fn floating_joint_on_chain() {
    unsupported("floating");
}

#[test]
fn planar_joint_on_chain() {
    unsupported("planar");
}

#[test]
fn mimic_joint_on_chain() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        link("l2"),
        revolute("j1", "base", "l1"),
        joint(
            "j2",
            "revolute",
            "l1",
            "l2",
            r#"<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="-1"/>"#,
        ),
    ]);
    let err = chain_err(&xml, None, None);
    match &err {
        ModelError::MimicInChain { joint, master, .. } => {
            assert_eq!((joint.as_str(), master.as_str()), ("j2", "j1"))
        }
        other => panic!("expected MimicInChain, got {other:?}"),
    }
    assert_names(&err, SRC, &["'j2'", "'j1'", "mimic"]);
    // Stopping before the mimic joint is fine.
    let c = Chain::from_urdf_str(&xml, None, Some("l1")).unwrap();
    assert_eq!(c.joint_names(), ["j1"]);
}

#[test]
fn only_fixed_joints() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        link("l2"),
        link("l3"),
        joint("f1", "fixed", "base", "l1", r#"<origin xyz="0 0 1"/>"#),
        joint("f2", "fixed", "l1", "l2", ""),
        revolute("j3", "base", "l3"),
    ]);
    let err = chain_err(&xml, None, Some("l2"));
    assert!(matches!(err, ModelError::NoMovingJoint { .. }), "{err:?}");
    assert_names(&err, SRC, &["'base'", "'l2'", "no moving joint"]);
}

#[test]
fn base_equal_to_tip_has_no_moving_joint() {
    let err = chain_err(&two_links(), Some("l1"), Some("l1"));
    assert!(matches!(err, ModelError::NoMovingJoint { .. }), "{err:?}");
    assert_names(&err, SRC, &["'l1'"]);
}

#[test]
fn selection_struct_matches_the_shortcut() {
    let tree = RobotTree::from_str(&two_links(), SRC).unwrap();
    let err = tree
        .chain(&ChainSelection::new(Some("l2"), Some("base")))
        .unwrap_err();
    assert!(matches!(err, ModelError::NoPath { .. }), "{err:?}");
}

/// A xacro top file as ROS arm descriptions ship them: an include, and a
/// macro call hanging the arm below `world`.
const XACRO_TOP: &str = r#"<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="$(find arm_description)/urdf/arm_macro.xacro"/>
  <link name="world"/>
  <xacro:arm_macro parent="world" prefix=""/>
</robot>
"#;

/// Only macro definitions: read as URDF, it has no links at all.
const XACRO_MACROS: &str = r#"<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="arm_macro" params="parent prefix">
    <link name="${prefix}base_link"/>
  </xacro:macro>
</robot>
"#;

fn assert_xacro(err: &ModelError, source: &str, sign: &str, command: &str) {
    assert!(matches!(err, ModelError::UnexpandedXacro { .. }), "{err:?}");
    assert_names(
        err,
        source,
        &["unexpanded xacro", sign, command, "ros2 run xacro xacro"],
    );
}

#[test]
fn unexpanded_xacro_text_says_how_to_expand_it() {
    // Before: "the chain from 'world' to 'world' has no moving joint" and
    // "the robot has no links".
    let err = chain_err(XACRO_TOP, None, None);
    assert_xacro(
        &err,
        SRC,
        "line 3: <xacro:include>",
        "Command(['xacro ', path])",
    );
    let err = tree_err(XACRO_MACROS);
    assert_xacro(
        &err,
        SRC,
        "line 2: <xacro:macro>",
        "xacro robot.urdf.xacro > robot.urdf",
    );
    // A substitution left in a number.
    let xml = robot(&[
        link("a"),
        link("b"),
        joint(
            "j",
            "revolute",
            "a",
            "b",
            r#"<origin xyz="0 0 ${upper_len}"/><limit lower="-1" upper="1" effort="1" velocity="1"/>"#,
        ),
    ]);
    assert_xacro(&tree_err(&xml), SRC, "${upper_len}", "xacro ");
    // Expanded URDFs keep the xmlns:xacro declaration (and a comment may
    // quote xacro); that alone is fine.
    let expanded = two_links().replace(
        "<robot name=\"t\">",
        "<robot name=\"t\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n<!-- from ${name}.urdf.xacro -->",
    );
    assert!(expanded.contains("xmlns:xacro"));
    Chain::from_urdf_str(&expanded, None, None).unwrap();
}

#[test]
fn a_xacro_file_names_itself_in_the_command() {
    for (tag, text) in [("top", XACRO_TOP), ("plain", two_links().as_str())] {
        let f = TempUrdf::new(tag, text);
        let xacro = f.0.with_extension("urdf.xacro");
        std::fs::copy(&f.0, &xacro).unwrap();
        let err = Chain::from_urdf_file(&xacro, None, None).unwrap_err();
        let _ = std::fs::remove_file(&xacro);
        let path = xacro.display().to_string();
        let sign = "the file name ends in .xacro";
        assert_xacro(&err, &path, sign, &format!("xacro {path} > robot.urdf"));
    }
    // The same text in a .urdf file: its xacro element gives it away.
    let f = TempUrdf::new("top_as_urdf", XACRO_TOP);
    let err = Chain::from_urdf_file(&f.0, None, None).unwrap_err();
    let path = f.0.display().to_string();
    assert_xacro(
        &err,
        &path,
        "<xacro:include>",
        &format!("xacro {path} > robot.urdf"),
    );
}

/// A revolute joint with the given `<limit>` attributes.
fn limited(version: &str, limit: &str) -> String {
    robot(&[
        link("base"),
        link("l1"),
        joint(
            "elbow",
            "revolute",
            "base",
            "l1",
            &format!(r#"<axis xyz="0 1 0"/><limit {limit}/>"#),
        ),
    ])
    .replace(
        "<robot name=\"t\">",
        &format!("<robot name=\"t\" {version}>"),
    )
}

#[test]
fn non_finite_numbers_are_errors_naming_joint_or_link_and_attribute() {
    let cases = [
        (
            r#"lower="-inf" upper="1" effort="1" velocity="1""#,
            "limit lower",
            "-inf",
        ),
        (
            r#"lower="-1" upper="inf" effort="1" velocity="1""#,
            "limit upper",
            "inf",
        ),
        (
            r#"lower="-1" upper="1" effort="1" velocity="nan""#,
            "limit velocity",
            "nan",
        ),
        (
            r#"lower="-1" upper="1" effort="Infinity" velocity="1""#,
            "limit effort",
            "Infinity",
        ),
        (
            r#"lower="-1e999" upper="1" effort="1" velocity="1""#,
            "limit lower",
            "-1e999",
        ),
    ];
    for version in ["", r#"version="1.2""#] {
        for (limit, field, value) in cases {
            let err = tree_err(&limited(version, limit));
            assert!(
                matches!(&err, ModelError::NonFinite { kind: "joint", name, field: f, .. }
                    if name == "elbow" && f == field),
                "{version} {limit}: {err:?}"
            );
            assert_names(&err, SRC, &["joint 'elbow'", field, value]);
        }
    }
    let err = tree_err(&limited(
        "",
        r#"lower="-inf" upper="1" effort="1" velocity="1""#,
    ));
    assert_names(&err, SRC, &["type=\"continuous\""]);
    // Links too: inertial and visual origins, masses, shapes.
    let xml = two_links().replace(
        r#"<link name="l1"/>"#,
        r#"<link name="l1"><inertial><origin xyz="0 0 0.05"/><mass value="0.1"/>
<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
<visual><origin xyz="0 -inf 0"/><geometry><box size="0.1 0.1 0.1"/></geometry></visual></link>"#,
    );
    let err = tree_err(&xml);
    assert!(
        matches!(&err, ModelError::NonFinite { kind: "link", name, field, .. }
            if name == "l1" && field == "visual origin xyz"),
        "{err:?}"
    );
    assert_names(&err, SRC, &["link 'l1'", "visual origin xyz", "0 -inf 0"]);
    let err = tree_err(&xml.replace(r#"value="0.1""#, r#"value="NaN""#));
    assert_names(&err, SRC, &["link 'l1'", "inertial mass value", "NaN"]);
}

/// A bound left out is not an infinite one: URDF 1.0 reads it as 0, as
/// urdfdom does, and URDF 1.2 as "no bound"; only a written `inf` is an
/// error.
#[test]
fn a_missing_bound_is_not_an_infinite_one() {
    let c = Chain::from_urdf_str(
        &limited("", r#"upper="1" effort="1" velocity="1""#),
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        (c.joints[0].limits.lower, c.joints[0].limits.upper),
        (0.0, 1.0)
    );
    let v12 = r#"version="1.2""#;
    let c = Chain::from_urdf_str(
        &limited(v12, r#"upper="1" effort="1" velocity="1""#),
        None,
        None,
    )
    .unwrap();
    assert_eq!(c.joints[0].limits.lower, f64::NEG_INFINITY);
    let err = tree_err(&limited(
        v12,
        r#"lower="-inf" upper="1" effort="1" velocity="1""#,
    ));
    assert!(matches!(err, ModelError::NonFinite { .. }), "{err:?}");
}

#[test]
fn duplicate_link_names_are_rejected_by_name() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        link("l1"),
        revolute("j1", "base", "l1"),
    ]);
    let e = tree_err(&xml);
    assert!(
        matches!(&e, ModelError::DuplicateName { kind: "link", name, .. } if name == "l1"),
        "{e:?}"
    );
    assert_names(&e, SRC, &["link", "'l1'"]);
}

#[test]
fn duplicate_joint_names_are_rejected_by_name() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        link("l2"),
        revolute("j1", "base", "l1"),
        revolute("j1", "l1", "l2"),
    ]);
    let e = tree_err(&xml);
    assert!(
        matches!(&e, ModelError::DuplicateName { kind: "joint", name, .. } if name == "j1"),
        "{e:?}"
    );
    assert_names(&e, SRC, &["joint", "'j1'"]);
}

#[test]
fn revolute_joint_without_limit_is_rejected_by_name() {
    let xml = robot(&[
        link("base"),
        link("l1"),
        joint("j1", "revolute", "base", "l1", r#"<axis xyz="0 0 1"/>"#),
    ]);
    let e = tree_err(&xml);
    assert!(
        matches!(&e, ModelError::MissingLimit { joint, kind: "revolute", .. } if joint == "j1"),
        "{e:?}"
    );
    assert_names(&e, SRC, &["'j1'", "<limit>"]);
}
