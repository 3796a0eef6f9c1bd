//! Who is on a bus: the answers to a broadcast, collected for a while
//! (both protocols' servos answer a broadcast PING one after another, in
//! id order), as `arm_ik calibrate` finds an arm's servos.

use super::servos::{Reply, StatusStream};
use crate::servo::link::{SessionError, read_available};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// Writes `request` and returns every valid status packet that arrives
/// within `window` (the last answer restarts a short quiet wait, so a long
/// bus is heard out), corrupt ones skipped.
pub fn broadcast<R: StatusStream>(
    io: &mut dyn SerialPort,
    request: &[u8],
    window: Duration,
    reader: R,
) -> Result<Vec<R::Status>, SessionError> {
    collect(io, request, window, reader, |_| false)
}

/// Writes `request` to one servo and returns its first answer that
/// `wanted` accepts, waiting at most `timeout`.
pub fn ask<R: StatusStream>(
    io: &mut dyn SerialPort,
    request: &[u8],
    timeout: Duration,
    reader: R,
    wanted: impl Fn(&R::Status) -> bool,
) -> Result<Option<R::Status>, SessionError> {
    let found = collect(io, request, timeout, reader, |s| {
        s.last().is_some_and(&wanted)
    })?;
    Ok(found.into_iter().rev().find(|s| wanted(s)))
}

fn collect<R: StatusStream>(
    io: &mut dyn SerialPort,
    request: &[u8],
    window: Duration,
    mut reader: R,
    done: impl Fn(&[R::Status]) -> bool,
) -> Result<Vec<R::Status>, SessionError> {
    io.clear(serialport::ClearBuffer::Input)
        .map_err(SessionError::from)?;
    io.write_all(request).map_err(SessionError::Io)?;
    let mut found = Vec::new();
    let mut deadline = Instant::now() + window;
    while Instant::now() < deadline {
        read_available(io, |b| reader.push(b))?;
        while let Some(reply) = reader.next_reply() {
            if let Reply::Packet { status, .. } = reply {
                found.push(status);
                if done(&found) {
                    return Ok(found);
                }
                deadline = deadline.max(Instant::now() + window / 4);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(found)
}
