//! The Arduino firmware bridge (`firmware-bridge/`): hobby PWM servos on
//! up to six channels, commanded in µs over a framed serial protocol.
//!
//! [`frame`](mod@frame) is the pure codec, [`status`] the firmware's status reply,
//! [`session`] the conversation the link thread runs; [`PROTOCOL`] tells
//! the generic code what it needs to know.

pub mod frame;
pub mod session;
pub mod status;

pub use frame::{
    CHANNELS, Frame, FrameReader, MAX_PAYLOAD, START, cmd, crc16, frame, set_limits, set_targets,
    set_watchdog,
};
pub use session::{BOOT_WAIT, BridgeSession};
pub use status::FirmwareStatus;

use super::joint::{Device, FieldError, Fields, JointMap};
use super::link::{LinkDefaults, LinkSettings, Session};
use super::protocol::Protocol;

/// The firmware bridge, for the [`registry`](super::registry).
pub static PROTOCOL: Protocol = Protocol {
    name: "pwm_bridge",
    // The servo file's `kind:` before the protocol had one name.
    aliases: &["pwm"],
    summary: "hobby PWM servos through the Arduino firmware bridge",
    output_name: "channel",
    max_output: CHANNELS as u16 - 1,
    fields: &[],
    link: LinkDefaults {
        baud: 115_200,
        reply_timeout_ms: 300,
    },
    measures_positions: false,
    device,
    check_bus: Protocol::no_bus_check,
    session,
    scan: None,
};

/// Every channel the same: pulses of 400..=2600 µs, beyond the 500-2500 µs
/// many servos accept, so no real servo is excluded but a typo in ms or ns
/// is. No default scale: µs per radian differ from servo to servo.
fn device(_: &Fields) -> Result<Device, FieldError> {
    Ok(Device {
        name: PROTOCOL.name.to_string(),
        range: [400, 2600],
        default_scale: None,
    })
}

fn session(joints: &[JointMap], settings: &LinkSettings) -> Result<Box<dyn Session>, FieldError> {
    Ok(Box::new(BridgeSession::new(joints, settings)))
}
