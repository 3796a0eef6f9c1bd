//! Messages a user reads when something is wrong: each says what and
//! where once, names the flag (CLI) that fixes it, and does not claim
//! what did not happen.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use std::process::Output;

fn arm_ik(args: &[&str], input: &str) -> Output {
    common::arm_ik_with_stdin(args, input, &common::project_dir())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_missing_file_is_said_once() {
    for args in [
        &["replay", "/nonexistent/rec.mcap"][..],
        &["run", "--bag", "/nonexistent/rec"],
    ] {
        let out = arm_ik(args, "");
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{e}");
        assert_eq!(e.matches("No such file or directory").count(), 1, "{e}");
    }
}

/// A URDF whose base has two leaves below it.
const TWO_TIPS: &str = r#"<robot name="two_tips">
  <link name="base"/><link name="a"/><link name="b"/>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="jb" type="revolute"><parent link="base"/><child link="b"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"#;

#[test]
fn an_ambiguous_tip_names_the_tip_flag() {
    let dir = std::env::temp_dir().join(format!("arm_ik_messages_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let urdf = dir.join("two_tips.urdf");
    std::fs::write(&urdf, TWO_TIPS).unwrap();
    let u = urdf.to_str().unwrap();
    for args in [
        &["check", u][..],
        &["solve", "--urdf", u, "--position", "0,0,0"],
        &["sim", "--urdf", u],
    ] {
        let out = arm_ik(args, "");
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{e}");
        assert!(
            e.contains("(a, b)") && e.contains("with --tip (e.g. --tip a)"),
            "{e}"
        );
        assert!(!e.contains("parameter"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn base_and_tip_have_help_in_every_command() {
    for c in ["check", "solve", "sim", "run", "replay", "drive", "latency"] {
        let help = stdout(&arm_ik(&[c, "--help"], ""));
        assert!(
            help.contains("--base <LINK>") && help.contains("First link of the chain"),
            "{c}: {help}"
        );
        assert!(
            help.contains("--tip <LINK>") && help.contains("Last link of the chain"),
            "{c}: {help}"
        );
    }
}

/// `drive` with a servo file for another robot and no `--urdf` says the
/// built-in arm was used; a port that never opened sends no table of
/// "sent" values and its last word is not "retrying".
#[test]
fn drive_says_which_robot_and_what_was_not_sent() {
    let out = arm_ik(
        &[
            "drive",
            "--config",
            "config/servos_so101.yaml",
            "--joints",
            "0,0,0,0,0",
        ],
        "",
    );
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains("shoulder_pan") && e.contains("built-in desktop arm") && e.contains("--urdf"),
        "{e}"
    );
    let out = arm_ik(
        &[
            "drive",
            "--config",
            "config/servos_pwm.yaml",
            "--port",
            "/nonexistent/tty",
            "--joints",
            "0,0,0,0,0",
            "--hold",
            "0.3",
        ],
        "",
    );
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    let last = e.lines().last().unwrap();
    assert!(
        last.contains("disconnected") && !last.contains("retrying"),
        "{last}"
    );
    let text = stdout(&out);
    assert!(
        text.contains("no frame sent") && !text.contains("sent    command"),
        "{text}"
    );
    assert!(!text.contains("base_yaw"), "{text}");
}

/// A stale stamp says older or newer, by how much, never a negative age.
#[test]
fn a_stale_target_says_newer_or_older() {
    let out = arm_ik(
        &["sim", "--stdin"],
        "{\"position\":[0.2,0,0.15],\"stamp\":3}\n",
    );
    let text = stdout(&out);
    assert!(text.contains("3.000 s newer than the node clock"), "{text}");
    assert!(!text.contains("-3.000"), "{text}");
}

/// One quaternion rule: normalised within 1e-3 of unit length, refused
/// outside with the length, whatever the scale.
#[test]
fn quaternions_follow_one_rule() {
    // A pose the arm reaches (the tool pitched down, as `solve` finds for
    // this point), its quaternion scaled by `s`.
    let (y, w) = (0.9120093, 0.4101685);
    let line = |s: f64| {
        format!(
            "{{\"position\":[0.2,0,0.15],\"orientation\":[0,{},0,{}]}}\n",
            y * s,
            w * s
        )
    };
    let out = arm_ik(&["sim", "--stdin"], &line(1.0005));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    for s in [1e-9, 2.0, 1e10] {
        let out = arm_ik(&["sim", "--stdin"], &line(s));
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(2), "{s}: {text}");
        assert!(
            text.contains("invalid") && text.contains("has length"),
            "{s}: {text}"
        );
    }
}
