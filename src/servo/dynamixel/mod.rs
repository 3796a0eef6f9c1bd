//! ROBOTIS Dynamixel bus servos (Protocol 2.0: the X series of the Koch
//! v1.1 arm, OpenManipulator-X, WidowX).
//!
//! As for [`super::feetech`], the encoders and the status reader are pure
//! functions over byte buffers, tested byte for byte against the vendor
//! SDK (`tests/dynamixel_sdk.rs`) and against arbitrary input; the
//! [`session`] on top only moves their bytes; [`PROTOCOL`] tells the
//! generic code what it needs to know.
//!
//! - [`crc`]: the CRC-16 of every packet;
//! - [`packet`]: instruction packets and byte stuffing;
//! - [`status`]: status packets, the error byte, the resyncing reader,
//!   the FAST SYNC READ reply;
//! - [`table`]: control-table registers, operating modes, hardware
//!   error bits, baud-rate codes;
//! - [`model`]: the models, their numbers and features;
//! - [`session`]: the conversation the link thread runs on the bus.

pub mod crc;
pub mod model;
pub mod packet;
pub mod scan;
pub mod session;
pub mod status;
pub mod table;

#[cfg(test)]
mod status_tests;

pub use model::DynamixelModel;
pub use packet::{BROADCAST_ID, EncodeError, MAX_ID};
pub use session::DynamixelSession;
pub use status::{ErrorByte, StatusError, StatusPacket, StatusReader};
pub use table::{HardwareError, OperatingMode, Register, reg};

use super::joint::{Device, FieldError, Fields, JointMap};
use super::link::{LinkDefaults, LinkSettings, Session};
use super::protocol::{BusError, Protocol, Scanner};

/// Dynamixel Protocol 2.0 servos, for the [`registry`](super::registry).
pub static PROTOCOL: Protocol = Protocol {
    name: "dynamixel",
    aliases: &[],
    summary: "ROBOTIS Dynamixel X-series bus servos, Protocol 2.0 (Koch v1.1, OpenManipulator-X)",
    output_name: "servo id",
    max_output: MAX_ID as u16,
    // The servo model (required: the Koch arm mixes two on one bus), and
    // the current a joint in current-based position mode holds itself to
    // (a gripper that grips without crushing or cooking its servo).
    fields: &["model", "goal_current_ma"],
    link: LinkDefaults {
        // The factory setting of every X-series servo.
        baud: 57_600,
        reply_timeout_ms: 100,
    },
    measures_positions: true,
    device,
    check_bus,
    session,
    scan: Some(Scanner {
        find: scan::scan,
        bauds: &[57_600, 1_000_000, 115_200, 2_000_000, 3_000_000, 4_000_000],
    }),
};

/// The model of a joint's servo: its `model:` (the file's unless the
/// joint gives its own). Required: no model is common enough to assume.
pub fn joint_model(fields: &Fields) -> Result<DynamixelModel, FieldError> {
    fields.parse("model")?.ok_or_else(|| FieldError {
        field: "model",
        why: format!(
            "required for Dynamixel servos: one of {}",
            DynamixelModel::ALL.map(DynamixelModel::name).join(", ")
        ),
    })
}

/// Every model counts 4096 positions per turn; position mode takes
/// 0..=4095 (extended position mode more, but an arm's joint stays within
/// a turn, and the range keeps it there). A `goal_current_ma` needs a
/// model that senses current.
fn device(fields: &Fields) -> Result<Device, FieldError> {
    let model = joint_model(fields)?;
    session::goal_current(fields, model)?;
    Ok(Device {
        name: model.name().to_string(),
        range: [0, model.max_position() as i32],
        default_scale: Some(model.ticks_per_radian()),
    })
}

/// The link's baud rate must be one every servo can be set to (the X330
/// series stops at 4 Mbaud, the X430 series at 4.5).
fn check_bus(joints: &[JointMap], link: &LinkSettings) -> Result<(), BusError> {
    for j in joints {
        let model = joint_model(&j.fields).map_err(|e| BusError {
            joint: j.joint.clone(),
            why: e.to_string(),
        })?;
        let max = model.max_baud_code();
        if table::baud_code(link.baud, max).is_none() {
            let rates: Vec<String> = (0..=max)
                .filter_map(|c| table::baud_rate(c, max))
                .map(|r| r.to_string())
                .collect();
            return Err(BusError {
                joint: j.joint.clone(),
                why: format!(
                    "{} servos cannot talk at link.baud {}; they take {}",
                    model.name(),
                    link.baud,
                    rates.join(", ")
                ),
            });
        }
    }
    Ok(())
}

fn session(joints: &[JointMap], settings: &LinkSettings) -> Result<Box<dyn Session>, FieldError> {
    Ok(Box::new(DynamixelSession::new(joints, settings)?))
}
