//! arm_ik: inverse kinematics for hobby robot arms, from URDF to servo.
//!
//! Data flows one way: a target ([`ik::Target`]) is solved on a
//! [`model::Chain`] by one of the [`ik`] solvers, the result is limited, then
//! published or streamed.
//!
//! Layers, lowest first; a module imports only from layers below it:
//! [`model`] → [`ik`] → [`servo`], [`bag`], [`bench`](mod@bench) → [`node`] →
//! [`replay`] → [`run`] (assembles a node on the output its parameters
//! choose, and runs it without ROS from any command source, bags read as
//! replay reads them) → `ros`, the CLI and the binaries.
//!
//! `tests/layers.rs` reads the paragraph above and fails when a module
//! imports from a layer above its own, or when the submodules of one
//! module import each other in a cycle.

pub mod bag;
pub mod bench;
pub mod ik;
pub mod model;
pub mod node;
pub mod replay;
#[cfg(feature = "ros2")]
pub mod ros;
pub mod run;
pub mod servo;
