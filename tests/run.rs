//! `arm_ik sim` and `arm_ik run`, the node without ROS, as a user runs
//! them: inputs (the figure-eight, JSON lines, a bag), exit codes, the
//! messages about bad input, and a clean stop on Ctrl-C.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use serde_json::Value;
use std::io::{BufRead, Read, Write};
use std::process::{Command, Output};

fn spawn(args: &[&str]) -> std::process::Child {
    common::spawn_arm_ik(args, &common::project_dir())
}

fn with_stdin(args: &[&str], input: &str) -> Output {
    common::arm_ik_with_stdin(args, input, &common::project_dir())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The summary: the last line of `--json` output.
fn summary(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {text}\n{}", stderr(out)))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The built-in path is placed for the robot: on an arm with a Koch-sized
/// reach (0.15 m), where the project arm's path is out of reach, every
/// target is reached.
#[test]
fn sim_on_a_small_arm_follows_a_path_it_can_reach() {
    let out = with_stdin(
        &[
            "sim",
            "--urdf",
            "tests/data/small_arm.urdf",
            "--duration",
            "4",
            "--json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!(n(&s["targets"]["received"]), 201, "{s}");
    assert_eq!(n(&s["targets"]["reached"]), 201, "{s}");
    assert!(s["path"]["width"].as_f64().unwrap() < 0.16, "{s}");
    assert_eq!(s["verdict"], "ok");
}

/// Targets that all go unreached are not a success: exit 2, said on
/// stderr and in the summary, and no tracking error of "0.00 mm".
#[test]
fn a_run_that_reached_nothing_says_so_and_exits_2() {
    let out = with_stdin(&["sim", "--stdin"], "{\"position\":[3,0,0]}\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("none of the 1 targets was reached"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tracking error: none (no target reached)"),
        "{text}"
    );
    let out = with_stdin(&["sim", "--stdin", "--json"], "{\"position\":[3,0,0]}\n");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(summary(&out)["verdict"], "nothing_reached");
}

/// Every line malformed: nothing ran, exit 1; `[1,2,3]` says what a line
/// must be; a field of the wrong shape is named with the shape.
#[test]
fn malformed_lines_name_the_field_and_the_shape_and_all_malformed_fails() {
    let out = with_stdin(
        &["sim", "--stdin", "--json"],
        "[1,2,3]\n{\"position\":[1,2]}\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("stdin line 1: a JSON array, not an object"),
        "{e}"
    );
    assert!(e.contains(r#"{"position":[x,y,z]}"#), "{e}");
    assert!(e.contains("stdin line 2: field `position`"), "{e}");
    assert!(e.contains("three numbers"), "{e}");
    assert!(e.contains("every one of the 2 inputs was malformed"), "{e}");
    assert_eq!(summary(&out)["verdict"], "all_input_malformed");
}

/// A 20 MB frame name is cut in the messages, not echoed.
#[test]
fn long_values_are_cut_in_messages() {
    let frame = "f".repeat(20_000_000);
    let line = format!("{{\"position\":[0.2,0,0.15],\"frame_id\":\"{frame}\"}}\n");
    let out = with_stdin(&["sim", "--stdin"], &line);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out).len());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.len() < 2000, "{} bytes of output", text.len());
    assert!(
        text.contains("wrong_frame") && text.contains("bytes cut"),
        "{text}"
    );
}

/// `run` reads the node's commands as one line format: typed commands and
/// bare targets alike.
#[test]
fn run_takes_typed_commands_and_bare_targets_from_stdin() {
    let input = "{\"type\":\"target\",\"position\":[0.2,0.05,0.15]}\n\
                 {\"position\":[0.2,-0.05,0.15],\"frame_id\":\"base_link\"}\n";
    let out = with_stdin(&["run", "--stdin", "--json"], input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!(n(&s["targets"]["reached"]), 2, "{s}");
    assert_eq!(s["ended"], "input_ended");
    assert_eq!(s["link"], "virtual");
}

/// A bag's targets at their recorded timing: the scenario's 8 s of
/// targets take 8 s of node time, and every one is reached.
#[test]
fn run_follows_a_bag_at_its_recorded_timing() {
    let dir = std::env::temp_dir().join(format!("arm_ik_run_bag_{}", std::process::id()));
    let bag = dir.join("scenario");
    std::fs::create_dir_all(&dir).unwrap();
    let b = bag.to_str().unwrap();
    let made = with_stdin(&["make-bag", "tests/data/scenario.yaml", "--output", b], "");
    assert!(made.status.success(), "{}", stderr(&made));
    let out = with_stdin(&["run", "--bag", b, "--json", "--settle", "1"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!(n(&s["targets"]["received"]), 401, "{s}");
    assert_eq!(n(&s["targets"]["reached"]), 401, "{s}");
    let t = s["simulated_s"].as_f64().unwrap();
    assert!((8.0..=9.1).contains(&t), "{s}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Real servos move on the wall clock: `--port` without `--realtime` is a
/// usage error, before anything opens the port.
#[test]
fn run_on_a_port_needs_realtime_and_a_servo_file() {
    let out = with_stdin(&["run", "--port", "/dev/null", "--stdin"], "");
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("--realtime") || stderr(&out).contains("--config"));
}

/// Ctrl-C stops the run at the next tick: the summary is printed, says
/// so, and the exit code is a stopped program's (130, 128 + SIGINT).
#[test]
fn ctrl_c_stops_cleanly_with_a_summary() {
    let mut child = spawn(&["run", "--stdin", "--realtime", "--json"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"position\":[0.2,0.05,0.15]}\n")
        .unwrap();
    stdin.flush().unwrap();
    // The first joint states out mean the loop runs (and the handler is
    // in place): they are buffered, so this is a second or so in.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("joint_state"), "{first}");
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopped by SIGINT"),
        "{}",
        stderr(&out)
    );
    let last = rest.lines().last().unwrap_or_default();
    let s: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert_eq!(s["ended"], "stopped", "{s}");
    assert_eq!(n(&s["targets"]["reached"]), 1, "{s}");
}

/// The summary counts every kind of input, not only targets, and keeps the
/// start-up move (from the rest pose to the first target) apart from how
/// well the arm follows after it.
#[test]
fn the_summary_counts_commands_and_twists_and_splits_off_the_start_up_move() {
    let lines = concat!(
        "{\"type\":\"target\",\"position\":[0.2,0.05,0.15]}\n",
        "{\"type\":\"gripper\",\"position\":0.5}\n",
        "{\"type\":\"pose\",\"name\":\"nope\"}\n",
        "{\"type\":\"twist\",\"linear\":[0.02,0,0]}\n",
    );
    let out = with_stdin(&["run", "--stdin", "--json"], lines);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!(n(&s["commands"]["received"]), 2, "{s}");
    assert_eq!(n(&s["commands"]["accepted"]), 1, "{s}");
    assert_eq!(n(&s["steered"]["twists"]), 1, "{s}");
    let start_up = s["start_up_tracking_error_m"]["max"].as_f64().unwrap();
    let steady = s["steady_tracking_error_m"]["max"].as_f64().unwrap();
    assert!(start_up > 0.1, "the arm starts far from the target: {s}");
    assert!(steady < 0.002, "and follows closely after: {s}");
    assert!(s["caught_up_s"].as_f64().unwrap() > 0.0, "{s}");
    let out = with_stdin(&["run", "--stdin"], lines);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("commands: 2 received, 1 accepted, 1 refused"),
        "{text}"
    );
    assert!(text.contains("after the start-up move"), "{text}");
}

/// A port that cannot be opened is no success: targets the servos never
/// took are not reached, the summary and stderr say the servos were never
/// reached, and the exit is 1, as for `drive` on that port.
#[test]
fn a_run_on_a_port_that_never_opens_reaches_nothing_and_says_so() {
    let args = [
        "run",
        "--stdin",
        "--realtime",
        "--config",
        "config/servos_pwm.yaml",
        "--port",
        "/dev/arm_ik_no_such_port",
        "--duration",
        "1",
    ];
    let line = "{\"position\":[0.2,0.05,0.15]}\n";
    let out = with_stdin(&args, line);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains("the servos were never reached") && e.contains("/dev/arm_ik_no_such_port"),
        "{e}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 received, 0 reached"), "{text}");
    assert!(text.contains("servos: never connected"), "{text}");
    let out = with_stdin(&[&args[..], &["--json"]].concat(), line);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!(s["verdict"], "servos_unreachable", "{s}");
    assert_eq!(n(&s["targets"]["reached"]), 0, "{s}");
    assert_eq!(s["servos"]["connected"], false, "{s}");
    assert_eq!(n(&s["servos"]["not_sent"]), 1, "{s}");
}

/// The messages of item 6 of issue 20, as a user of `run` meets them: an
/// unknown command lists every type whole, a pose without a poses file
/// names the flag, and a run of one tick shows no rate of 0.0 Hz.
#[test]
fn messages_name_what_a_cli_user_can_change() {
    let out = with_stdin(&["run", "--stdin"], "{\"type\":\"open\"}\n");
    let e = stderr(&out);
    let types = arm_ik::node::Command::TYPES.join(", ");
    assert!(e.contains(&format!("the types are {types}")), "{e}");
    let out = with_stdin(
        &["run", "--stdin"],
        "{\"type\":\"pose\",\"name\":\"home\"}\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--poses"), "{text}");
    let out = with_stdin(&["sim", "--duration", "0"], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(1 tick;"), "{text}");
    assert!(!text.contains("0.0 Hz"), "{text}");
}

/// The JSON summary gives the figure-eight's full width and height, as the
/// text does (160 x 80 mm on the project arm); they were half sizes,
/// unlabelled.
#[test]
fn the_path_sizes_are_the_same_in_json_and_text() {
    let out = with_stdin(&["sim", "--duration", "0.1", "--json"], "");
    let p = &summary(&out)["path"];
    assert_eq!(
        (p["width"].as_f64(), p["height"].as_f64()),
        (Some(0.16), Some(0.08)),
        "{p}"
    );
    let out = with_stdin(&["sim", "--duration", "0.1"], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("figure-eight 160 x 80 mm"), "{text}");
}

/// A blank line is one tick without input, so a script can wait: each
/// one adds a tick to the run (they were skipped).
#[test]
fn a_blank_stdin_line_is_one_tick() {
    let ticks = |input: &str| {
        let out = with_stdin(&["sim", "--stdin", "--settle", "0", "--json"], input);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        n(&summary(&out)["ticks"])
    };
    let target = "{\"position\":[0.2,0.05,0.15]}\n";
    let waited = format!("{target}{}", "\n".repeat(50));
    assert_eq!(ticks(&waited), ticks(target) + 50);
}

/// The table of stdin lines (docs/cli.md, "The arm without ROS")
/// documents exactly the commands the parser accepts: every example line
/// parses as a command of its type, and every type the parser knows
/// ([`arm_ik::node::Command::TYPES`], which a unit test keeps equal to the
/// variants serde reads) has a row.
#[test]
fn the_stdin_table_lists_every_command_the_parser_accepts() {
    let readme = std::fs::read_to_string(common::project_dir().join("docs/cli.md")).unwrap();
    let rows: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| line | what the node does |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(rows.len() > 5, "no stdin table in docs/cli.md");
    let mut documented = Vec::new();
    for row in rows {
        let first = row.split(" | ").next().unwrap();
        for example in first.split('`').filter(|p| p.starts_with('{')) {
            let command = arm_ik::run::parse_line(example)
                .unwrap_or_else(|e| panic!("docs/cli.md line {example} does not parse: {e}"));
            let v: Value = serde_json::to_value(&command).unwrap();
            let kind = v["type"].as_str().unwrap().to_string();
            let given: Value = serde_json::from_str(example).unwrap();
            assert_eq!(
                given["type"].as_str().unwrap_or("target"),
                kind,
                "{example}"
            );
            documented.push(kind);
        }
    }
    documented.sort();
    documented.dedup();
    let mut types: Vec<String> = arm_ik::node::Command::TYPES
        .iter()
        .map(|t| t.to_string())
        .collect();
    types.sort();
    assert_eq!(documented, types);
}
