//! The arms LeRobot calibrates that arm_ik can import: their motors as
//! LeRobot names and numbers them, the servo models, and the URDF whose
//! joints they drive.
//!
//! Motor tables from LeRobot's robot classes (`so_follower`/`so101_follower`,
//! `koch_follower`, `koch_leader`): SO-100 and SO-101 are six Feetech
//! STS3215 on ids 1-6; the Koch v1.1 follower has XL430-W250 on the
//! shoulder (ids 1, 2) and XL330-M288 elsewhere, the leader XL330-M077
//! throughout. LeRobot's Dynamixel and Feetech buses both run at 1 Mbaud
//! (its motor setup programs every servo to that).

/// Which servo protocol the arm's bus speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bus {
    Feetech,
    Dynamixel,
}

impl Bus {
    /// The `kind:` of the servo YAML.
    pub fn kind(self) -> &'static str {
        match self {
            Bus::Feetech => "feetech",
            Bus::Dynamixel => "dynamixel",
        }
    }
}

/// One motor as LeRobot names it, and the URDF joint it turns (`None`:
/// the gripper, which the arm chains end before).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motor {
    pub name: &'static str,
    pub id: u8,
    pub model: &'static str,
    pub joint: Option<&'static str>,
    /// The speed_limit written for the joint (rad/s).
    pub speed_limit: f64,
}

const fn motor(
    name: &'static str,
    id: u8,
    model: &'static str,
    joint: Option<&'static str>,
    speed_limit: f64,
) -> Motor {
    Motor {
        name,
        id,
        model,
        joint,
        speed_limit,
    }
}

/// The robots `arm_ik import-lerobot --robot` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Robot {
    So100,
    So101,
    /// Koch v1.1 follower arm.
    Koch,
    /// Koch v1.1 leader arm.
    KochLeader,
}

impl Robot {
    pub const ALL: [Robot; 4] = [Robot::So100, Robot::So101, Robot::Koch, Robot::KochLeader];

    pub fn name(self) -> &'static str {
        match self {
            Robot::So100 => "so100",
            Robot::So101 => "so101",
            Robot::Koch => "koch",
            Robot::KochLeader => "koch-leader",
        }
    }

    pub fn from_name(name: &str) -> Option<Robot> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The names of every robot, for error messages.
    pub fn names() -> String {
        Self::ALL.map(Robot::name).join(", ")
    }

    pub fn bus(self) -> Bus {
        match self {
            Robot::So100 | Robot::So101 => Bus::Feetech,
            Robot::Koch | Robot::KochLeader => Bus::Dynamixel,
        }
    }

    /// A human name for comments.
    pub fn title(self) -> &'static str {
        match self {
            Robot::So100 => "SO-100",
            Robot::So101 => "SO-101",
            Robot::Koch => "Koch v1.1 follower",
            Robot::KochLeader => "Koch v1.1 leader",
        }
    }

    /// The URDF the joint names are those of, and its arm chain.
    pub fn urdf(self) -> &'static str {
        match self {
            Robot::So101 => {
                "so101_new_calib.urdf (SO-ARM100 repository, Simulation/SO101; \
                 chain base_link -> gripper_frame_link)"
            }
            Robot::So100 => {
                "so100.urdf (SO-ARM100 repository, Simulation/SO100; chain base -> gripper)"
            }
            Robot::Koch | Robot::KochLeader => {
                "follower.urdf of the public Koch v1.1 description (simulation/follower.urdf; \
                 chain base_link -> link_5, joint_6 is the gripper)"
            }
        }
    }

    /// The six motors, in LeRobot's order.
    pub fn motors(self) -> [Motor; 6] {
        match self {
            Robot::So100 | Robot::So101 => {
                let m = "sts3215";
                [
                    motor("shoulder_pan", 1, m, Some("shoulder_pan"), 3.0),
                    motor("shoulder_lift", 2, m, Some("shoulder_lift"), 3.0),
                    motor("elbow_flex", 3, m, Some("elbow_flex"), 3.0),
                    motor("wrist_flex", 4, m, Some("wrist_flex"), 4.0),
                    motor("wrist_roll", 5, m, Some("wrist_roll"), 4.0),
                    motor("gripper", 6, m, None, 4.0),
                ]
            }
            Robot::Koch | Robot::KochLeader => {
                let (shoulder, rest) = if self == Robot::Koch {
                    ("xl430-w250", "xl330-m288")
                } else {
                    ("xl330-m077", "xl330-m077")
                };
                [
                    motor("shoulder_pan", 1, shoulder, Some("joint_1"), 3.0),
                    motor("shoulder_lift", 2, shoulder, Some("joint_2"), 3.0),
                    motor("elbow_flex", 3, rest, Some("joint_3"), 3.0),
                    motor("wrist_flex", 4, rest, Some("joint_4"), 4.0),
                    motor("wrist_roll", 5, rest, Some("joint_5"), 4.0),
                    motor("gripper", 6, rest, None, 4.0),
                ]
            }
        }
    }

    /// What the user must check on this robot before trusting the zero
    /// ticks, when its URDF does not document LeRobot's convention.
    pub fn zero_caveat(self) -> Option<&'static str> {
        match self {
            Robot::So101 => None,
            Robot::So100 => Some(
                "the SO-100 URDF's zero pose is not the middle of each joint's range \
                 (its limits are one-sided): the zero ticks follow LeRobot's convention \
                 and will not match that URDF until measured",
            ),
            Robot::Koch | Robot::KochLeader => Some(
                "no public source ties the Koch URDF's zero pose to LeRobot's calibration \
                 pose: check each joint's zero and direction on the arm",
            ),
        }
    }
}
