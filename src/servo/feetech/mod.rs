//! Feetech SCS/STS bus servos (the STS3215 of the SO-100/SO-101 arms).
//!
//! [`packet`] builds instruction packets and [`status`] reads status
//! packets, both pure and checked byte for byte against the vendor SDK
//! (`tests/feetech_sdk.rs`); [`model`] tells the servo models apart;
//! [`session`] is the conversation the link thread runs on the bus;
//! [`PROTOCOL`] tells the generic code what it needs to know.

pub mod model;
pub mod packet;
pub mod scan;
pub mod session;
pub mod status;

pub use model::{Endian, ServoModel, TICKS_PER_REV};
pub use packet::{
    BROADCAST_ID, EncodeError, HEADER, MAX_ID, MAX_PACKET_LEN, MAX_STATUS_LEN, action, checksum,
    encode_status, from_sign_magnitude, inst, ping, position_speed_block, read, reg, reg_write,
    sync_read, sync_write, sync_write_goal_positions, sync_write_position_speed, to_sign_magnitude,
    write, write_position_speed, write_word,
};
pub use session::FeetechSession;
pub use status::{ServoFlags, StatusError, StatusPacket, StatusReader, decode_all};

use super::joint::{Device, FieldError, Fields, JointMap};
use super::link::{LinkDefaults, LinkSettings, Session};
use super::protocol::{BusError, Protocol, Scanner};

/// Feetech bus servos, for the [`registry`](super::registry).
pub static PROTOCOL: Protocol = Protocol {
    name: "feetech",
    aliases: &[],
    summary: "Feetech STS/SCS bus servos (SO-100/SO-101)",
    output_name: "servo id",
    max_output: MAX_ID as u16,
    // The servo model, for the file and per joint (default sts3215).
    fields: &["model"],
    link: LinkDefaults {
        baud: 1_000_000,
        reply_timeout_ms: 100,
    },
    measures_positions: true,
    device,
    check_bus,
    session,
    scan: Some(Scanner {
        find: scan::scan,
        bauds: &[1_000_000, 500_000, 115_200, 57_600],
    }),
};

/// The model of a joint's servo: its `model:` (the file's unless the
/// joint gives its own), `sts3215` when neither does.
pub fn joint_model(fields: &Fields) -> Result<ServoModel, FieldError> {
    Ok(fields.parse("model")?.unwrap_or_default())
}

/// The model's position range (0..=4095 on STS servos, 0..=1023 on SCS)
/// and default scale (4096 ticks per turn on STS; none on SCS, whose 1024
/// units cover less than a turn by an amount that varies).
fn device(fields: &Fields) -> Result<Device, FieldError> {
    let model = joint_model(fields)?;
    Ok(Device {
        name: model.name().to_string(),
        range: [0, i32::from(model.max_position())],
        default_scale: model.ticks_per_radian(),
    })
}

/// One byte order on a bus: STS and SCS servos cannot share it (each
/// would read the other's values byte-swapped).
fn check_bus(joints: &[JointMap], _: &LinkSettings) -> Result<(), BusError> {
    let mut first: Option<(&JointMap, ServoModel)> = None;
    for j in joints {
        let model = joint_model(&j.fields).map_err(|e| BusError {
            joint: j.joint.clone(),
            why: e.to_string(),
        })?;
        match first {
            None => first = Some((j, model)),
            Some((f, m)) if m.endian() != model.endian() => {
                return Err(BusError {
                    joint: j.joint.clone(),
                    why: format!(
                        "{} cannot share a bus with the {} of joint '{}' (another byte order)",
                        model.name(),
                        m.name(),
                        f.joint
                    ),
                });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn session(joints: &[JointMap], settings: &LinkSettings) -> Result<Box<dyn Session>, FieldError> {
    Ok(Box::new(FeetechSession::new(joints, settings)?))
}
