//! What the node tells operators, decided without ROS: the health level and
//! message of the diagnostics topic and its key/value pairs. The ROS
//! adapter only copies these into `diagnostic_msgs`, so the rules are
//! tested in the normal test run and `arm_ik sim` could print the same.

use super::program::ProgramState;
use super::status::{NodeStatus, TargetCounters, TeachStatus};
use serde_json::Value;

/// Diagnostic level, as `diagnostic_msgs/DiagnosticStatus` has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Ok,
    Warn,
    Error,
}

/// One health verdict: the worst level found and every reason, joined.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    pub level: Level,
    pub message: String,
}

/// Judges the node's health from its [`NodeStatus`], once per report.
///
/// It keeps the target counters of the previous report so that rejections
/// are reported as "since the last report" (a warning that clears once
/// good targets come again) rather than forever from the cumulative
/// counters.
#[derive(Debug, Clone, Default)]
pub struct HealthMonitor {
    last: TargetCounters,
    /// The last trajectory whose late point was reported (by its count),
    /// so a short one is reported once even after it has ended.
    late_reported: u64,
}

impl HealthMonitor {
    /// A loop below this fraction of `rate_hz` is an error: the arm moves
    /// at less than half its planned speed and messages pile up.
    pub const ERROR_RATE: f64 = 0.5;
    /// Below this fraction it is a warning: the machine is too busy.
    pub const WARN_RATE: f64 = 0.9;

    pub fn new() -> HealthMonitor {
        HealthMonitor::default()
    }

    /// The health now. `rate_hz` is the configured control rate; the loop
    /// rate is only judged after a second of ticks, when it means something.
    pub fn check(&mut self, status: &NodeStatus, rate_hz: f64) -> Health {
        let mut level = Level::Ok;
        let mut why: Vec<String> = Vec::new();
        let mut raise = |l: Level, m: String, why: &mut Vec<String>| {
            level = level.max(l);
            why.push(m);
        };

        if let Some((l, m)) = Self::loop_rate(status, rate_hz) {
            raise(l, m, &mut why);
        }
        if !status.link_ok {
            raise(
                Level::Error,
                format!("servo link: {}", status.link),
                &mut why,
            );
        }
        if status.holding {
            raise(
                Level::Warn,
                format!(
                    "latest target unreachable ({:.1} mm off): holding",
                    status.last_position_error * 1e3
                ),
                &mut why,
            );
        }
        if let Some(g) = status.gripper.as_ref().filter(|g| g.stalled) {
            raise(
                Level::Warn,
                format!(
                    "gripper '{}' stalled at {:.3}: holding where it stopped until a new gripper command",
                    g.joint, g.position
                ),
                &mut why,
            );
        }
        for (l, m) in self.teach(&status.teach) {
            raise(l, m, &mut why);
        }
        if status.relaxed {
            raise(
                Level::Ok,
                "relaxed: the servos are limp until enable".to_string(),
                &mut why,
            );
        }
        if let Some(m) = self.new_rejections(status) {
            raise(Level::Warn, m, &mut why);
        }

        let message = if why.is_empty() {
            if status.targets.reached == 0 {
                "waiting for a target".to_string()
            } else {
                format!("tracking, {:.2} mm off", status.tracking_error * 1e3)
            }
        } else {
            why.join("; ")
        };
        Health { level, message }
    }

    /// What teaching the arm has to say: a silent leader, a trajectory
    /// point the limits could not meet in time, a program under way or
    /// failed.
    fn teach(&mut self, t: &TeachStatus) -> Vec<(Level, String)> {
        let mut out = Vec::new();
        if let Some(note) = t.teleop.as_ref().and_then(|tp| tp.note.clone()) {
            out.push((Level::Warn, note));
        }
        let tr = &t.trajectory;
        if let Some(late) = &tr.late
            && (tr.active || tr.accepted != self.late_reported)
        {
            self.late_reported = tr.accepted;
            out.push((Level::Warn, late.describe(tr.points)));
        }
        if let Some(p) = &t.program {
            match p.state {
                ProgramState::Running => out.push((
                    Level::Ok,
                    format!("program '{}': step {} of {}", p.name, p.step, p.steps),
                )),
                ProgramState::Failed => out.push((
                    Level::Warn,
                    format!(
                        "program '{}' failed: {}",
                        p.name,
                        p.message.as_deref().unwrap_or("")
                    ),
                )),
                ProgramState::Done | ProgramState::Stopped => {}
            }
        }
        out
    }

    /// The control loop's rate, when it has run a second and falls short.
    fn loop_rate(status: &NodeStatus, rate_hz: f64) -> Option<(Level, String)> {
        if (status.ticks as f64) < rate_hz || status.loop_rate_hz <= 0.0 {
            return None;
        }
        let ratio = status.loop_rate_hz / rate_hz;
        let m = format!(
            "control loop at {:.1} Hz of {rate_hz} Hz",
            status.loop_rate_hz
        );
        if ratio < Self::ERROR_RATE {
            Some((Level::Error, m))
        } else if ratio < Self::WARN_RATE {
            Some((Level::Warn, m))
        } else {
            None
        }
    }

    /// The targets rejected since the last report, if any, with the last
    /// reason; remembers the counters for the next report.
    fn new_rejections(&mut self, status: &NodeStatus) -> Option<String> {
        let rejected = status
            .targets
            .rejected
            .total()
            .saturating_sub(self.last.rejected.total());
        self.last = status.targets;
        if rejected == 0 {
            return None;
        }
        let last = status
            .last_rejection
            .as_ref()
            .map(|(r, w)| format!(" (last: {}: {w})", r.name()))
            .unwrap_or_default();
        Some(format!(
            "{rejected} targets rejected since the last report{last}"
        ))
    }
}

/// The status as flat `key = value` pairs: nested fields as dotted keys
/// (`targets.rejected.stale`), times in seconds, the last rejection as
/// `reason: why`. Generated from [`NodeStatus::to_json`], so a new status field
/// shows up in diagnostics without touching the adapter.
pub fn key_values(status: &NodeStatus) -> Vec<(String, String)> {
    let mut v = status.to_json();
    if let Some(o) = v.as_object_mut() {
        let rejection = status
            .last_rejection
            .as_ref()
            .map_or("none".to_string(), |(r, w)| format!("{}: {w}", r.name()));
        o.insert("last_rejection".into(), Value::String(rejection));
    }
    let mut out = Vec::new();
    flatten("", &v, &mut out);
    out
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Null => out.push((prefix.to_string(), "none".to_string())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::RejectReason;

    fn status() -> NodeStatus {
        NodeStatus::new(crate::ik::SolverKind::Jacobian)
    }

    #[test]
    fn a_new_node_is_ok_and_waiting() {
        let h = HealthMonitor::new().check(&status(), 50.0);
        assert_eq!(h.level, Level::Ok);
        assert_eq!(h.message, "waiting for a target");
    }

    #[test]
    fn rejections_warn_until_the_next_report() {
        let mut m = HealthMonitor::new();
        let mut s = status();
        s.targets.received = 2;
        s.targets.rejected.count(RejectReason::Stale);
        s.targets.rejected.count(RejectReason::Stale);
        s.last_rejection = Some((RejectReason::Stale, "too old".into()));
        let h = m.check(&s, 50.0);
        assert_eq!(h.level, Level::Warn);
        assert!(h.message.contains("2 targets rejected"), "{}", h.message);
        assert!(h.message.contains("stale: too old"), "{}", h.message);
        assert_eq!(m.check(&s, 50.0).level, Level::Ok);
    }

    #[test]
    fn holding_warns_and_a_slow_loop_is_an_error() {
        let mut m = HealthMonitor::new();
        let mut s = status();
        s.holding = true;
        s.last_position_error = 0.05;
        s.ticks = 100;
        s.loop_rate_hz = 40.0;
        let h = m.check(&s, 50.0);
        assert_eq!(h.level, Level::Warn);
        assert!(h.message.contains("50.0 mm off"), "{}", h.message);
        assert!(h.message.contains("40.0 Hz of 50 Hz"), "{}", h.message);
        s.loop_rate_hz = 20.0;
        assert_eq!(m.check(&s, 50.0).level, Level::Error);
        // Too early to judge the rate.
        s.ticks = 10;
        s.holding = false;
        assert_eq!(m.check(&s, 50.0).level, Level::Ok);
    }

    #[test]
    fn a_lost_servo_link_is_an_error_naming_it() {
        let mut s = status();
        s.link_ok = false;
        s.link = "/dev/ttyUSB0: disconnected (No such file or directory)".into();
        let h = HealthMonitor::new().check(&s, 50.0);
        assert_eq!(h.level, Level::Error);
        assert!(
            h.message.contains("servo link: /dev/ttyUSB0"),
            "{}",
            h.message
        );
    }

    #[test]
    fn a_stalled_gripper_warns_and_relaxed_servos_are_said() {
        let mut s = status();
        s.gripper = Some(crate::node::GripperStatus {
            joint: "gripper".into(),
            position: 0.5,
            command: 0.5,
            load: Some(-0.9),
            stalled: true,
        });
        let h = HealthMonitor::new().check(&s, 50.0);
        assert_eq!(h.level, Level::Warn);
        assert!(
            h.message.contains("gripper 'gripper' stalled at 0.500"),
            "{}",
            h.message
        );
        let kv = key_values(&s);
        assert!(
            kv.contains(&("gripper.stalled".into(), "true".into())),
            "{kv:?}"
        );
        let mut s = status();
        s.relaxed = true;
        let h = HealthMonitor::new().check(&s, 50.0);
        assert_eq!(h.level, Level::Ok);
        assert_eq!(h.message, "relaxed: the servos are limp until enable");
    }

    #[test]
    fn key_values_are_flat_and_complete() {
        let mut s = status();
        s.targets.rejected.count(RejectReason::WrongFrame);
        s.last_rejection = Some((RejectReason::WrongFrame, "frame 'map'".into()));
        let kv = key_values(&s);
        let get = |k: &str| {
            kv.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no {k} in {kv:?}"))
        };
        assert_eq!(get("solver"), "jacobian");
        assert_eq!(get("targets.rejected.wrong_frame"), "1");
        assert_eq!(get("last_rejection"), "wrong_frame: frame 'map'");
        assert_eq!(get("last_solve"), "none");
        assert_eq!(get("holding"), "false");
        get("solve_time.p99");
        get("tick_time.max");
        assert!(kv.iter().all(|(k, _)| !k.is_empty()));
    }
}
