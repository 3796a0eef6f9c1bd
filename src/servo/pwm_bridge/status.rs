//! The firmware's status reply (0x82), and what of it the link status
//! shows.

use super::frame::CHANNELS;
use crate::servo::link::{Detail, DetailValue};

/// The firmware's status reply (0x82), as PROTOCOL.md lays it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FirmwareStatus {
    pub estop: bool,
    pub watchdog_tripped: bool,
    pub watchdog_relax: bool,
    pub output_active: bool,
    /// SEQ of the last SET_TARGETS the firmware accepted.
    pub last_target_seq: u8,
    pub bad_crc: u16,
    pub bad_length: u16,
    pub garbage: u16,
    pub frame_timeouts: u16,
    pub watchdog_trips: u16,
    /// Valid frames received (wraps at 65535).
    pub frames_ok: u16,
    pub uptime_ms: u32,
    /// Pulse width output now per channel (µs, 0 = none).
    pub width_us: [u16; CHANNELS],
}

impl FirmwareStatus {
    pub const LEN: usize = 30;

    pub fn parse(p: &[u8]) -> Option<FirmwareStatus> {
        if p.len() != Self::LEN {
            return None;
        }
        let u16_at = |o: usize| u16::from_le_bytes([p[o], p[o + 1]]);
        let mut width_us = [0; CHANNELS];
        for (c, w) in width_us.iter_mut().enumerate() {
            *w = u16_at(18 + 2 * c);
        }
        Some(FirmwareStatus {
            estop: p[0] & 1 != 0,
            watchdog_tripped: p[0] & 2 != 0,
            watchdog_relax: p[0] & 4 != 0,
            output_active: p[0] & 8 != 0,
            last_target_seq: p[1],
            bad_crc: u16_at(2),
            bad_length: u16_at(4),
            garbage: u16_at(6),
            frame_timeouts: u16_at(8),
            watchdog_trips: u16_at(10),
            frames_ok: u16_at(12),
            uptime_ms: u32::from_le_bytes([p[14], p[15], p[16], p[17]]),
            width_us,
        })
    }

    /// The status as named values for the link status (`arm_ik drive
    /// --json` shows them under `details`).
    pub fn details(&self) -> Vec<Detail> {
        vec![
            Detail::flag("estop", self.estop),
            Detail::flag("watchdog_tripped", self.watchdog_tripped),
            Detail::flag("watchdog_relax", self.watchdog_relax),
            Detail::flag("output_active", self.output_active),
            Detail::count("last_target_seq", self.last_target_seq),
            Detail::count("bad_crc", self.bad_crc),
            Detail::count("bad_length", self.bad_length),
            Detail::count("garbage", self.garbage),
            Detail::count("frame_timeouts", self.frame_timeouts),
            Detail::count("watchdog_trips", self.watchdog_trips),
            Detail::count("frames_ok", self.frames_ok),
            Detail::count("uptime_ms", self.uptime_ms),
            Detail {
                key: "width_us",
                value: DetailValue::Counts(self.width_us.iter().map(|&w| u64::from(w)).collect()),
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_layout() {
        let mut p = [0u8; 30];
        p[0] = 0b1010;
        p[1] = 9;
        p[12..14].copy_from_slice(&500u16.to_le_bytes());
        p[14..18].copy_from_slice(&123_456u32.to_le_bytes());
        p[28..30].copy_from_slice(&1500u16.to_le_bytes());
        let s = FirmwareStatus::parse(&p).unwrap();
        assert!(s.watchdog_tripped && s.output_active && !s.estop);
        assert_eq!(
            (s.last_target_seq, s.frames_ok, s.uptime_ms),
            (9, 500, 123_456)
        );
        assert_eq!(s.width_us[5], 1500);
        assert_eq!(FirmwareStatus::parse(&p[..29]), None);
        let details = s.details();
        let value = |key| &details.iter().find(|d| d.key == key).unwrap().value;
        assert_eq!(value("frames_ok"), &DetailValue::Count(500));
        assert_eq!(value("watchdog_tripped"), &DetailValue::Flag(true));
        assert_eq!(
            value("width_us"),
            &DetailValue::Counts(vec![0, 0, 0, 0, 0, 1500])
        );
    }
}
