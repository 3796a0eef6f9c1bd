//! ROBOTIS Dynamixel bus servos (Protocol 2.0: the X series of the Koch
//! v1.1 arm, OpenManipulator-X, WidowX) as plain functions over byte
//! buffers.
//!
//! No I/O here on purpose, as for [`super::feetech`]: the encoders and the
//! status reader are pure, so they are tested byte for byte against the
//! vendor SDK (`tests/dynamixel_sdk.rs`) and against arbitrary input, and
//! a serial session on top only moves their bytes.
//!
//! - [`crc`]: the CRC-16 of every packet;
//! - [`packet`]: instruction packets and byte stuffing;
//! - [`status`]: status packets, the error byte, the resyncing reader,
//!   the FAST SYNC READ reply;
//! - [`table`]: control-table registers, operating modes, hardware
//!   error bits, baud-rate codes;
//! - [`model`]: the models, their numbers and features.

pub mod crc;
pub mod model;
pub mod packet;
pub mod status;
pub mod table;

#[cfg(test)]
mod status_tests;

pub use model::DynamixelModel;
pub use packet::{BROADCAST_ID, EncodeError, MAX_ID};
pub use status::{ErrorByte, StatusError, StatusPacket, StatusReader};
pub use table::{HardwareError, OperatingMode, Register, reg};
