//! arm_ik: inverse kinematics for hobby robot arms, from URDF to servo.
//!
//! Data flows one way: a target ([`ik::Target`]) is solved on a
//! [`model::Chain`] by one of the [`ik`] solvers, the result is limited, then
//! published or streamed.

pub mod bag;
pub mod bench;
pub mod ik;
pub mod model;
pub mod node;
pub mod replay;
#[cfg(feature = "ros2")]
pub mod ros;
pub mod servo;
