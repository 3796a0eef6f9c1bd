//! A simulated servo bus on a pty (`tests/python/feetech_bus.py` or
//! `dynamixel_bus.py`) for the integration tests: the process, its
//! JSON-lines log of what the servos were told, and its control channel.
//!
//! The port a test hands the driver is a symlink to the pty
//! ([`Sim::plug`]), so a test can "unplug" the bus (kill the simulator)
//! and "plug in" another one.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// One simulator process; killed when dropped.
pub struct Sim {
    pub child: Child,
    /// The simulator's JSON-lines log.
    pub log: PathBuf,
    /// The pty the servos listen on.
    pub pty: String,
    control: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Sim {
    /// Starts `script` (a file of `tests/python/`) with `args`, logging to
    /// `log`.
    pub fn start(script: &str, log: &Path, args: &[&str]) -> Sim {
        let path = super::project_dir().join("tests/python").join(script);
        let mut child = Command::new("python3")
            .arg(path)
            .arg("--log")
            .arg(log)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {script}: {e}"));
        let control = child.stdin.take().unwrap();
        let mut answers = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        answers.read_line(&mut line).unwrap();
        let pty = line
            .strip_prefix("PTY ")
            .unwrap_or_else(|| panic!("{script} printed {line:?}, not PTY <path>"))
            .trim()
            .to_string();
        Sim {
            child,
            log: log.to_path_buf(),
            pty,
            control,
            answers,
        }
    }

    /// Points the symlink `link` at this bus (replacing what it pointed
    /// to): the port the driver opens.
    pub fn plug(&self, link: &Path) {
        let tmp = link.with_extension("new");
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&self.pty, &tmp).unwrap();
        std::fs::rename(&tmp, link).unwrap();
    }

    /// Every line the simulator logged so far.
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The goal positions servo `id` received, in order.
    pub fn goals(&self, id: u64) -> Vec<i32> {
        self.events()
            .iter()
            .filter(|e| e["id"] == id && e.get("goal").is_some())
            .map(|e| e["goal"].as_i64().unwrap() as i32)
            .collect()
    }

    /// The torque enable values servo `id` was written, in order.
    pub fn torques(&self, id: u64) -> Vec<i64> {
        self.events()
            .iter()
            .filter(|e| e["id"] == id && e.get("goal").is_none())
            .filter_map(|e| e.get("torque")?.as_i64())
            .collect()
    }

    /// Sends a control-channel command; the simulator's answer.
    pub fn control(&mut self, cmd: Value) -> Value {
        writeln!(self.control, "{cmd}").unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.kill();
    }
}
