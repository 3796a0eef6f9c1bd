//! Finding Dynamixel servos: one broadcast PING, whose every reply carries
//! the servo's model number.

use super::model::DynamixelModel;
use super::packet;
use super::status::StatusReader;
use crate::servo::bus::{BROADCAST_ID, ping};
use crate::servo::link::SessionError;
use crate::servo::protocol::FoundServo;
use serialport::SerialPort;
use std::time::Duration;

/// See [`Scan`](crate::servo::protocol::Scan).
pub fn scan(io: &mut dyn SerialPort, window: Duration) -> Result<Vec<FoundServo>, SessionError> {
    let ping = packet::ping(BROADCAST_ID).map_err(|e| SessionError::Device(e.to_string()))?;
    let mut found: Vec<FoundServo> = ping::broadcast(io, &ping, window, StatusReader::new())?
        .into_iter()
        .filter_map(|s| {
            let (number, _firmware) = s.ping_reply().ok()?;
            Some(FoundServo {
                id: s.id,
                number,
                model: DynamixelModel::from_number(number).map(DynamixelModel::name),
            })
        })
        .collect();
    found.sort_by_key(|f| f.id);
    found.dedup_by_key(|f| f.id);
    Ok(found)
}
