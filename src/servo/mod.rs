//! Real servo output: the wire protocols, the per-joint calibration that
//! turns joint angles into servo commands, and the serial link thread that
//! streams them.
//!
//! Data flows one way: angles → [`calibration`] (clamp, map, clamp) →
//! [`output::SerialServo`] → [`link`] thread (ramp, frame rate, reconnect)
//! → a protocol session ([`bridge`], [`feetech_bus`]) → the port. The
//! codecs ([`bridge`] frames, [`feetech`] packets) are pure and tested
//! exhaustively; the sessions only move their bytes.

pub mod bridge;
pub mod calibration;
pub mod dynamixel;
pub mod feetech;
pub mod feetech_bus;
pub mod lerobot;
pub mod link;
pub mod output;
pub mod ports;

pub use output::SerialServo;
