//! Feetech STS/SCS bus session (placeholder until the bus driver lands).

use super::calibration::Calibration;
use super::link::{LinkSettings, LinkStatus, Session, SessionError, TickOutcome};
use serialport::SerialPort;
use std::time::Instant;

pub struct FeetechSession;

impl FeetechSession {
    pub fn new(_cal: &Calibration, _settings: &LinkSettings) -> FeetechSession {
        FeetechSession
    }
}

impl Session for FeetechSession {
    fn open(&mut self, _io: &mut dyn SerialPort) -> Result<Option<Vec<i32>>, SessionError> {
        Err(SessionError::Device("feetech bus not built yet".into()))
    }
    fn tick(
        &mut self,
        _io: &mut dyn SerialPort,
        _commands: Option<&[i32]>,
        _now: Instant,
    ) -> Result<TickOutcome, SessionError> {
        Err(SessionError::Device("feetech bus not built yet".into()))
    }
    fn last_reply(&self) -> Option<Instant> {
        None
    }
    fn report(&self, _status: &mut LinkStatus) {}
}
