//! Every command cut short as a user cuts it: its stdout closed by the
//! reader (`| head`), or Ctrl-C (SIGINT) and SIGTERM while it works. It
//! stops quietly, with no panic, says what it did, leaves no temporary
//! file and keeps the old output.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use common::{TempDir, signal};
use std::path::Path;
use std::process::{Command, Stdio};

/// The subcommands `arm_ik --help` lists.
fn subcommands() -> Vec<String> {
    let out = common::arm_ik(&["--help"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

/// Files in `dir` whose names say they are temporaries of an output.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

/// A target bag written by `make-bag`, for the commands that read one.
fn scenario_bag(dir: &Path) -> String {
    let bag = dir.join("bag");
    let out = common::arm_ik(&[
        "make-bag",
        "tests/data/scenario.yaml",
        "--output",
        bag.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    bag.to_string_lossy().into_owned()
}

/// One invocation of every subcommand that prints on stdout; `dir` for
/// the files they write.
fn every_command(dir: &Path) -> Vec<Vec<String>> {
    let bag = scenario_bag(dir);
    let d = |name: &str| dir.join(name).to_string_lossy().into_owned();
    // A bag with /tf, for draw.
    let arm = d("arm.mcap");
    let out = common::arm_ik(&["sim", "--duration", "1", "--record", &arm]);
    assert!(out.status.success(), "{out:?}");
    let lines: &[&[&str]] = &[
        &["check", "urdf/arm.urdf", "--json"],
        &[
            "solve",
            "--urdf",
            "urdf/arm.urdf",
            "--position",
            "0.15,0.1,0.2",
            "--json",
        ],
        &[
            "fk",
            "--urdf",
            "urdf/arm.urdf",
            "--joints",
            "0,0.3,-0.5,0.2,0",
            "--all",
        ],
        &["bench", "--targets", "benches/targets/leg.json", "--json"],
        &["sim", "--duration", "2", "--json"],
        &["run", "--duration", "2", "--json"],
        &["latency", "--targets", "300"],
        &["replay", &bag, "--report", &d("report.json")],
        &["draw", &arm, "--svg", &d("arm.svg")],
        &[
            "make-bag",
            "tests/data/scenario.yaml",
            "--output",
            &d("new_bag"),
        ],
        &[
            "drive",
            "--config",
            "config/servos_pwm.yaml",
            "--joints",
            "0,0.3,-0.5,0.2,0",
            "--hold",
            "0.2",
        ],
        &["collisions", "urdf/arm.urdf"],
        &["ports"],
        &["params"],
        &[
            "import-lerobot",
            "tests/data/lerobot_so101.json",
            "--robot",
            "so101",
        ],
    ];
    lines
        .iter()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .collect()
}

/// `arm_ik | head` with the reader gone before the first line: every
/// command ends quietly (no panic, nothing on stderr) with 141, as a
/// program SIGPIPE ends, and leaves no temporary behind.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = TempDir::new("closed-pipe");
    let commands = every_command(dir.path());
    let covered: Vec<&str> = commands.iter().map(|c| c[0].as_str()).collect();
    // Commands that need bus servos which report their position (a
    // simulated bus runs them in tests/teach_bus.rs and teleop_bus.rs;
    // calibrate's closed pipe is in tests/calibrate.rs);
    // they print through cli::out as every command does, which the test in
    // src/cli/out.rs holds them to.
    let need_servos = ["teach", "teleop", "calibrate"];
    for sub in subcommands() {
        if need_servos.contains(&sub.as_str()) {
            continue;
        }
        assert!(
            covered.contains(&sub.as_str()),
            "no closed-pipe case for '{sub}'"
        );
    }
    for args in &commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arm_ik"))
            .args(args)
            .current_dir(common::project_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("Broken pipe") && !stderr.contains("error"),
            "{args:?}: {stderr}"
        );
        // A command whose output fits the pipe may finish before it sees
        // the pipe closed; one that noticed says so by its code alone.
        let code = out.status.code();
        assert!(matches!(code, Some(0 | 141)), "{args:?}: {code:?} {stderr}");
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "{args:?}");
    }
}

/// Sends `sig` to `child` once it is writing its output to `dir` (and a
/// moment more), waits for it to end with `code` and says on stderr it
/// was stopped by `sig`; its stdout.
fn stop_while_writing(mut child: std::process::Child, dir: &Path, sig: &str, code: i32) -> String {
    wait_for_temporary(dir, &mut child);
    std::thread::sleep(std::time::Duration::from_millis(300));
    signal(&child, sig);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stdout}{stderr}");
    assert!(stderr.contains(&format!("stopped by SIG{sig}")), "{stderr}");
    assert_eq!(temporaries(dir), Vec::<String>::new());
    stdout
}

/// Waits (at most a minute) until `dir` holds a temporary output: the
/// command is writing.
fn wait_for_temporary(dir: &Path, child: &mut std::process::Child) {
    let writing = || !temporaries(dir).is_empty();
    wait_while_running(child, "no temporary output appeared", writing);
}

/// Waits (at most a minute) until `child` catches signal number `signo`
/// (its bit in `SigCgt` of /proc/PID/status): its handler is installed.
/// `sim` prints nothing before its summary, and a fixed pause could end
/// before a loaded machine had started it, when the signal still kills.
fn wait_for_handler(child: &mut std::process::Child, signo: u32) {
    let status = format!("/proc/{}/status", child.id());
    let caught = || {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (signo - 1)) != 0)
    };
    wait_while_running(child, &format!("signal {signo} never caught"), caught);
}

/// Polls `ready` until it holds, failing if `child` ends first or a minute
/// passes (`what` says what never happened).
fn wait_while_running(
    child: &mut std::process::Child,
    what: &str,
    mut ready: impl FnMut() -> bool,
) {
    let start = std::time::Instant::now();
    while !ready() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it was interrupted"
        );
        assert!(start.elapsed().as_secs() < 60, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A scenario of 4 000 100 messages: several seconds of make-bag and of
/// replay, time enough to interrupt either.
fn big_scenario(dir: &Path) -> String {
    let path = dir.join("big.yaml");
    std::fs::write(
        &path,
        "rate_hz: 1000\nrepeat: 100\nwaypoints:\n  - {time: 0, position: [0.2, 0, 0.15]}\n  - {time: 40, position: [0.2, 0.05, 0.15]}\n",
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

fn spawn(args: &[&str]) -> std::process::Child {
    common::spawn_arm_ik(args, &common::project_dir())
}

/// Ctrl-C on make-bag: a summary of what was generated, the temporary bag
/// gone, the bag that was there before untouched, exit 130.
#[test]
fn ctrl_c_on_make_bag_keeps_the_old_bag_and_leaves_no_temporary() {
    let dir = TempDir::new("make-bag-sigint");
    let old = scenario_bag(dir.path());
    let before = std::fs::read(Path::new(&old).join("bag_0.mcap")).unwrap();
    let big = big_scenario(dir.path());
    let child = spawn(&["make-bag", &big, "--output", &old, "--overwrite"]);
    let stdout = stop_while_writing(child, dir.path(), "INT", 130);
    assert!(stdout.contains("of 4000100 messages generated"), "{stdout}");
    let after = std::fs::read(Path::new(&old).join("bag_0.mcap")).unwrap();
    assert!(before == after, "the old bag changed");
}

/// SIGTERM on replay: the table of what was replayed, saying it stopped
/// (and failing), no output bag or report written over the old ones, no
/// temporary left, exit 143.
#[test]
fn sigterm_on_replay_prints_what_it_did_and_keeps_the_old_outputs() {
    let dir = TempDir::new("replay-sigterm");
    let bag = dir.path().join("big_bag");
    let big = big_scenario(dir.path());
    let out = common::arm_ik(&["make-bag", &big, "--output", bag.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let (output, report) = (dir.path().join("out.mcap"), dir.path().join("r.json"));
    std::fs::write(&output, "old bag").unwrap();
    std::fs::write(&report, "old report").unwrap();
    let child = spawn(&[
        "replay",
        bag.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--overwrite",
        "--report",
        report.to_str().unwrap(),
    ]);
    let stdout = stop_while_writing(child, dir.path(), "TERM", 143);
    assert!(stdout.contains("stopped before the end"), "{stdout}");
    assert!(stdout.contains("result: FAIL"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "old bag");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "old report");
}

/// Ctrl-C on `sim`: its text summary says it was stopped, and the exit
/// code is not a success.
#[test]
fn ctrl_c_on_sim_says_so_in_the_summary() {
    let mut child = spawn(&["sim", "--realtime", "--duration", "60"]);
    wait_for_handler(&mut child, 2);
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("stopped by SIGINT after"), "{stdout}");
}
