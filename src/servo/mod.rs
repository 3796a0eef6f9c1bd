//! Real servo output: the servo-output interface and its virtual and
//! serial implementations, the per-joint calibration that turns joint
//! angles into servo commands, the serial link thread that streams them,
//! and the wire protocols.
//!
//! Data flows one way: angles → [`calibration`] (clamp, map, clamp) →
//! [`SerialServo`] → [`link`] thread (ramp, frame rate, reconnect) → the
//! protocol's session → the port. Calibration, link and output are
//! generic; what differs by protocol lives in that protocol's module
//! ([`pwm_bridge`], [`feetech`], [`dynamixel`]), described to the rest by a
//! [`Protocol`] in the one list [`registry::PROTOCOLS`]. The codecs are
//! pure and tested exhaustively; the sessions only move their bytes.
//!
//! Inside the layer, lowest first: [`joint`] → [`link`] → [`protocol`] →
//! [`bus`] (what the bus-servo protocols share) → the protocol modules →
//! [`registry`] → [`calibration`] → [`output`].
//! The layer depends on `model` only; the node above drives an
//! [`Output`] through [`ServoOutput`], and the runner layer picks it.

pub mod bus;
pub mod calibration;
pub mod joint;
pub mod lerobot;
pub mod link;
pub mod output;
pub mod ports;
pub mod protocol;
pub mod registry;

pub mod dynamixel;
pub mod feetech;
pub mod pwm_bridge;

pub use output::{Effort, OpenError, Output, SerialServo, ServoOutput, VirtualServo};
pub use protocol::Protocol;
