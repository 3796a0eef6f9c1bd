//! Finding Feetech servos: a broadcast PING (every servo answers, in id
//! order), then each one's model number READ, since a Feetech PING reply
//! carries no data.

use super::model::ServoModel;
use super::packet::{self as feetech, reg};
use super::status::StatusReader;
use crate::servo::bus::{BROADCAST_ID, ping};
use crate::servo::link::SessionError;
use crate::servo::protocol::FoundServo;
use serialport::SerialPort;
use std::time::Duration;

/// See [`Scan`](crate::servo::protocol::Scan). The model register is read
/// little-endian (STS); an SCS servo's big-endian number is recognised
/// byte-swapped.
pub fn scan(io: &mut dyn SerialPort, window: Duration) -> Result<Vec<FoundServo>, SessionError> {
    let encode = |p: Result<Vec<u8>, _>| {
        p.map_err(|e: crate::servo::bus::EncodeError| SessionError::Device(e.to_string()))
    };
    let ping = encode(feetech::ping(BROADCAST_ID))?;
    let mut ids: Vec<u8> = ping::broadcast(io, &ping, window, StatusReader::new())?
        .into_iter()
        .map(|s| s.id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut found = Vec::with_capacity(ids.len());
    for id in ids {
        let read = encode(feetech::read(id, reg::MODEL_NUMBER, 2))?;
        // A servo that answered PING answers READ: waited for longer than
        // the broadcast, so a slow adapter (or a loaded machine) is heard.
        let reply = ping::ask(io, &read, window * 8, StatusReader::new(), |s| {
            s.id == id && s.data(2).is_ok()
        })?;
        let number = reply
            .and_then(|s| s.data(2).ok().map(|d| u16::from_le_bytes([d[0], d[1]])))
            .ok_or_else(|| {
                SessionError::NoReply(format!("servo id {id} answered PING but not READ"))
            })?;
        let model = ServoModel::from_number(number)
            .or_else(|| ServoModel::from_number(number.swap_bytes()))
            .map(ServoModel::name);
        found.push(FoundServo { id, number, model });
    }
    Ok(found)
}
