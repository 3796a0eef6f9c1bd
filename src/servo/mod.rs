//! Real servo output: the wire protocols of the servo buses and the
//! per-joint calibration that turns joint angles into servo commands.
//!
//! Both are pure (no serial I/O), so they are tested exhaustively here and
//! the drivers behind [`crate::node::ServoOutput`] only move bytes.

pub mod calibration;
pub mod feetech;
