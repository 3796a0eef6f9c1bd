//! `arm_ik collisions URDF --svg FILE`: the picture of the arm, the floor
//! and the workspace's obstacles names what it draws, follows the pose it
//! is given, and refuses a pose it cannot draw as a usage error naming
//! `--joints`.

#![cfg(feature = "app")]

mod common;

use common::{TempDir, arm_ik};

const WORKSPACE: &str = "examples/workspace_table.yaml";

/// The picture drawn at `joints` (y–z view), and what the command printed.
fn picture(dir: &TempDir, name: &str, joints: &str) -> (String, String) {
    let svg = dir.path().join(name);
    let o = arm_ik(&[
        "collisions",
        "urdf/arm.urdf",
        "--workspace",
        WORKSPACE,
        "--view",
        "yz",
        &format!("--joints={joints}"),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let printed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (std::fs::read_to_string(&svg).unwrap(), printed)
}

/// The texts of an SVG, trimmed.
fn texts(svg: &str) -> Vec<String> {
    (svg.split("<text").skip(1))
        .filter_map(|t| {
            Some(
                t.split_once('>')?
                    .1
                    .split_once("</text>")?
                    .0
                    .trim()
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_picture_names_the_links_the_box_the_floor_and_the_closest_pair() {
    let dir = TempDir::new("picture-names");
    let (svg, printed) = picture(&dir, "near.svg", "-1.5708,0.3,1.3,1.3,0");
    let texts = texts(&svg);
    for name in ["base_link", "upper_arm", "forearm", "hand", "box"] {
        assert!(texts.iter().any(|t| t == name), "no '{name}' in {texts:?}");
    }
    assert!(
        texts.iter().any(|t| t.starts_with("floor, z = 0")),
        "{texts:?}"
    );
    // The closest pair is written with its distance, as the command prints it.
    let line = printed
        .lines()
        .find_map(|l| l.strip_prefix("--joints pose: closest "))
        .expect("the pose's closest pair is printed");
    let (pair, mm) = line.split_once(", ").unwrap();
    assert_eq!(pair, "hand vs box");
    let mm = mm.split_whitespace().next().unwrap();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with(&format!("closest: hand vs box, {mm} mm apart"))),
        "{texts:?}"
    );
    // Its two solids are outlined in red.
    assert!(
        svg.matches("stroke=\"#FF0000\"").count() >= 2,
        "no red outline"
    );
}

#[test]
fn the_picture_follows_the_pose() {
    let dir = TempDir::new("picture-pose");
    let (near, _) = picture(&dir, "near.svg", "-1.5708,0.3,1.3,1.3,0");
    let (up, printed) = picture(&dir, "up.svg", "-1.5708,0,0,0,0");
    assert_ne!(near, up);
    assert!(!printed.contains("closest hand vs box"), "{printed}");
    // The same pose draws the same picture.
    assert_eq!(near, picture(&dir, "again.svg", "-1.5708,0.3,1.3,1.3,0").0);
}

#[test]
fn a_pose_that_cannot_be_drawn_is_a_usage_error_naming_joints() {
    let dir = TempDir::new("picture-bad");
    let svg = dir.path().join("bad.svg");
    for joints in ["0,0.3,1.3", "0,nan,0,0,0", "0,0,inf,0,0"] {
        let o = arm_ik(&[
            "collisions",
            "urdf/arm.urdf",
            "--workspace",
            WORKSPACE,
            &format!("--joints={joints}"),
            "--svg",
            svg.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(64), "{joints}: {err}");
        assert!(err.contains("--joints"), "{joints}: {err}");
        assert!(!svg.exists(), "{joints}: a picture was written");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a temporary is left"
    );
}
