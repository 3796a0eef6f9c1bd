//! Twists for the jog: `~/target_twist` (`geometry_msgs/TwistStamped`,
//! its `frame_id` the base or the tip link) and `~/cmd_vel`
//! (`geometry_msgs/Twist`, what teleop_twist_keyboard and teleop_twist_joy
//! publish, in the frame the `cmd_vel_frame` parameter names).

use super::secs;
use crate::node::TwistMsg;
use r2r::geometry_msgs::msg::{Twist, TwistStamped, Vector3};

fn xyz(v: &Vector3) -> [f64; 3] {
    [v.x, v.y, v.z]
}

/// A stamped twist: its frame and stamp are the core's to check (an empty
/// `frame_id` means `cmd_vel_frame`).
pub fn twist_from_stamped(m: &TwistStamped) -> TwistMsg {
    TwistMsg {
        stamp: secs(&m.header.stamp),
        frame_id: m.header.frame_id.clone(),
        linear: xyz(&m.twist.linear),
        angular: xyz(&m.twist.angular),
    }
}

/// A `cmd_vel` twist: no header, so stamped "now" and in `cmd_vel_frame`.
pub fn twist_from_cmd_vel(m: &Twist) -> TwistMsg {
    TwistMsg {
        stamp: 0.0,
        frame_id: String::new(),
        linear: xyz(&m.linear),
        angular: xyz(&m.angular),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::builtin_interfaces::msg::Time;
    use r2r::std_msgs::msg::Header;

    fn v(x: f64, y: f64, z: f64) -> Vector3 {
        Vector3 { x, y, z }
    }

    #[test]
    fn a_stamped_twist_keeps_its_frame_stamp_and_axes() {
        let m = TwistStamped {
            header: Header {
                stamp: Time {
                    sec: 12,
                    nanosec: 500_000_000,
                },
                frame_id: "tool".into(),
            },
            twist: Twist {
                linear: v(0.05, -0.01, 0.02),
                angular: v(0.0, 0.3, -0.4),
            },
        };
        let t = twist_from_stamped(&m);
        assert_eq!(t.stamp, 12.5);
        assert_eq!(t.frame_id, "tool");
        assert_eq!(t.linear, [0.05, -0.01, 0.02]);
        assert_eq!(t.angular, [0.0, 0.3, -0.4]);
    }

    #[test]
    fn cmd_vel_is_now_in_the_configured_frame() {
        // teleop_twist_keyboard's 'i': forward at its default 0.5 m/s.
        let m = Twist {
            linear: v(0.5, 0.0, 0.0),
            angular: v(0.0, 0.0, 1.0),
        };
        let t = twist_from_cmd_vel(&m);
        assert_eq!((t.stamp, t.frame_id.as_str()), (0.0, ""));
        assert_eq!(t.linear, [0.5, 0.0, 0.0]);
        assert_eq!(t.angular, [0.0, 0.0, 1.0]);
    }
}
