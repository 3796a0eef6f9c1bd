//! The gripper's stall rule and what the status says about the gripper.
//!
//! A gripper that closes on an object cannot reach its command: a position
//! servo then pushes at full force until it overheats. When the servo says
//! so (its overload flag, or a load above `gripper_stall_load` while the
//! gripper is still short of its command), the node holds the gripper where
//! it measured it, which is where the object stopped it, and says so in the
//! status until a new gripper command.

use crate::node::settings::Gripper;
use crate::servo::Effort;
use serde::Serialize;

/// How close to its command the gripper counts as there (rad or m): a
/// servo that pushes hard within this holds what it reached, it is not
/// blocked.
pub const REACHED: f64 = 0.02;

/// The gripper as the status reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GripperStatus {
    pub joint: String,
    /// Where it is (measured when the servos measure, else commanded).
    pub position: f64,
    /// Where it was told to go.
    pub command: f64,
    /// Load as the servo reports it (fraction of its maximum), if it does.
    pub load: Option<f64>,
    /// Held where an object stopped it, until a new gripper command.
    pub stalled: bool,
}

/// True when the gripper, at `measured` and commanded to `command`, is
/// blocked by what it holds and must stop pushing.
pub fn stalled(g: &Gripper, command: f64, measured: f64, effort: &Effort) -> bool {
    let short = (command - measured).abs() > REACHED;
    let heavy = effort.load.is_some_and(|l| l.abs() > g.stall_load);
    short && (effort.overload || heavy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_loaded_gripper_short_of_its_command_is_stalled() {
        let g = Gripper {
            axis: 5,
            open: 1.2,
            closed: 0.0,
            stall_load: 0.6,
        };
        let load = |l: f64| Effort {
            load: Some(l),
            overload: false,
        };
        assert!(stalled(&g, 0.0, 0.4, &load(-0.8)));
        assert!(!stalled(&g, 0.0, 0.4, &load(0.3)), "moving, lightly loaded");
        assert!(!stalled(&g, 0.0, 0.01, &load(0.9)), "there: holding");
        let overload = Effort {
            load: None,
            overload: true,
        };
        assert!(stalled(&g, 0.0, 0.4, &overload));
        assert!(!stalled(&g, 0.0, 0.4, &Effort::default()));
    }
}
