//! Feetech SCS/STS bus-servo protocol (the STS3215 of the SO-100/SO-101
//! arms) as plain functions over byte buffers.
//!
//! No I/O here on purpose: the encoders and the status decoder are pure, so
//! they are tested byte for byte against the vendor SDK
//! (`tests/feetech_sdk.rs`) and against arbitrary input (the decoder must
//! never panic on whatever a noisy half-duplex bus delivers), and the serial
//! driver on top only moves bytes.
//!
//! Instruction packet: `FF FF ID LEN INST P1..Pn CHK` with `LEN = n + 2` and
//! `CHK = !(ID + LEN + INST + ΣP) & 0xFF`; status packet: `FF FF ID LEN ERR
//! P.. CHK`. Two-byte register values are little-endian on STS servos and
//! big-endian on SCS servos ([`Endian`]).
//!
//! This file builds instruction packets; [`super::status`] reads status
//! packets, [`super::model`] tells the servo models apart.

use super::model::Endian;
use crate::servo::bus::encode::{check_block, check_id, check_sync_read, sync_write_blocks};
/// Broadcast ID: every servo executes the instruction and none replies
/// (except to PING, which each servo answers in ID order).
pub use crate::servo::bus::{BROADCAST_ID, EncodeError, MAX_ID};

/// The two header bytes every packet starts with.
pub const HEADER: [u8; 2] = [0xFF, 0xFF];
/// The registers of one servo: addresses 0..=255.
const SPACE: u32 = 256;
/// Largest instruction packet, header to checksum. The vendor SDK refuses
/// to send anything longer (its `TXPACKET_MAX_LEN`), so a longer packet has
/// never been exercised against real servo firmware: we refuse it too.
pub const MAX_PACKET_LEN: usize = 250;
/// Largest `LEN` byte accepted in a status packet by default (the vendor
/// SDK's `RXPACKET_MAX_LEN`); see
/// [`StatusReader::with_max_len`](super::status::StatusReader::with_max_len).
pub const MAX_STATUS_LEN: u8 = 250;

/// Instruction codes.
pub mod inst {
    pub const PING: u8 = 0x01;
    pub const READ: u8 = 0x02;
    pub const WRITE: u8 = 0x03;
    /// Write that takes effect at the next [`ACTION`].
    pub const REG_WRITE: u8 = 0x04;
    pub const ACTION: u8 = 0x05;
    pub const SYNC_READ: u8 = 0x82;
    pub const SYNC_WRITE: u8 = 0x83;
}

/// Register addresses of the STS memory table (SCS servos share the ones
/// used here). Two-byte registers are in the servo's [`Endian`] order.
pub mod reg {
    /// Model number, 2 bytes (777 = STS3215).
    pub const MODEL_NUMBER: u8 = 3;
    pub const ID: u8 = 5;
    /// Baud rate code (0 = 1 Mbaud).
    pub const BAUD_RATE: u8 = 6;
    /// Return delay time, 1 byte, 2 µs units (factory 250: 500 µs),
    /// EEPROM.
    pub const RETURN_DELAY_TIME: u8 = 7;
    pub const MIN_POSITION_LIMIT: u8 = 9;
    pub const MAX_POSITION_LIMIT: u8 = 11;
    /// Homing offset, 2 bytes, sign bit 11.
    pub const HOMING_OFFSET: u8 = 31;
    pub const OPERATING_MODE: u8 = 33;
    /// 1 = torque on, 0 = off; 128 makes the current position read 2048.
    pub const TORQUE_ENABLE: u8 = 40;
    pub const ACCELERATION: u8 = 41;
    pub const GOAL_POSITION: u8 = 42;
    pub const GOAL_TIME: u8 = 44;
    /// Goal speed, 2 bytes, sign bit 15.
    pub const GOAL_SPEED: u8 = 46;
    pub const TORQUE_LIMIT: u8 = 48;
    /// EEPROM write lock: 0 = writes to EEPROM are kept at power-off.
    pub const LOCK: u8 = 55;
    pub const PRESENT_POSITION: u8 = 56;
    pub const PRESENT_SPEED: u8 = 58;
    pub const PRESENT_LOAD: u8 = 60;
    /// Supply voltage, 1 byte, 0.1 V units.
    pub const PRESENT_VOLTAGE: u8 = 62;
    pub const PRESENT_TEMPERATURE: u8 = 63;
    pub const MOVING: u8 = 66;
    pub const PRESENT_CURRENT: u8 = 69;
}

/// Sign-magnitude registers (goal speed: bit 15, homing offset: bit 11)
/// as a signed value: the servos do not use two's complement.
pub fn from_sign_magnitude(raw: u16, sign_bit: u8) -> i32 {
    let bit = 1u32 << sign_bit.min(15);
    let raw = u32::from(raw);
    if raw & bit != 0 {
        -((raw & !bit) as i32)
    } else {
        raw as i32
    }
}

/// A signed value in sign-magnitude form, the magnitude saturated to the
/// bits below `sign_bit` so that a large value cannot flip the sign.
pub fn to_sign_magnitude(v: i32, sign_bit: u8) -> u16 {
    let sign_bit = sign_bit.min(15);
    let max = (1u32 << sign_bit) - 1;
    let mag = v.unsigned_abs().min(max);
    let raw = if v < 0 { mag | (1 << sign_bit) } else { mag };
    raw as u16
}

/// The checksum of the bytes between the header and the checksum.
pub fn checksum(body: &[u8]) -> u8 {
    !body.iter().fold(0u8, |s, &b| s.wrapping_add(b))
}

/// Appends the instruction packet `inst` for `id` with parameters made of
/// the concatenated `parts` to `out`. On error `out` is left unchanged.
fn packet_into(out: &mut Vec<u8>, id: u8, inst: u8, parts: &[&[u8]]) -> Result<(), EncodeError> {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let total = n + 6;
    if total > MAX_PACKET_LEN {
        return Err(EncodeError::TooLong {
            len: total,
            max: MAX_PACKET_LEN,
        });
    }
    let start = out.len();
    out.reserve(total);
    out.extend_from_slice(&HEADER);
    out.extend_from_slice(&[id, (n + 2) as u8, inst]);
    for p in parts {
        out.extend_from_slice(p);
    }
    let chk = checksum(&out[start + 2..]);
    out.push(chk);
    Ok(())
}

fn packet(id: u8, inst: u8, parts: &[&[u8]]) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    packet_into(&mut out, id, inst, parts)?;
    Ok(out)
}

/// PING `id`; broadcast is allowed (every servo answers, in ID order).
pub fn ping(id: u8) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "PING")?;
    packet(id, inst::PING, &[])
}

/// READ `len` bytes from register `addr` of servo `id`.
pub fn read(id: u8, addr: u8, len: u8) -> Result<Vec<u8>, EncodeError> {
    check_id(id, false, "READ")?;
    if len == 0 {
        return Err(EncodeError::NoData {
            instruction: "READ",
        });
    }
    check_block(addr.into(), len.into(), SPACE)?;
    packet(id, inst::READ, &[&[addr, len]])
}

/// WRITE `data` to the registers from `addr` of servo `id` (broadcast
/// allowed: then no servo replies).
pub fn write(id: u8, addr: u8, data: &[u8]) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "WRITE")?;
    if data.is_empty() {
        return Err(EncodeError::NoData {
            instruction: "WRITE",
        });
    }
    check_block(addr.into(), data.len(), SPACE)?;
    packet(id, inst::WRITE, &[&[addr], data])
}

/// REG_WRITE: like [`write()`], but the servo holds the values until
/// [`action`], so several servos can start together.
pub fn reg_write(id: u8, addr: u8, data: &[u8]) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "REG_WRITE")?;
    if data.is_empty() {
        return Err(EncodeError::NoData {
            instruction: "REG_WRITE",
        });
    }
    check_block(addr.into(), data.len(), SPACE)?;
    packet(id, inst::REG_WRITE, &[&[addr], data])
}

/// ACTION: applies pending [`reg_write`]s (usually broadcast).
pub fn action(id: u8) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "ACTION")?;
    packet(id, inst::ACTION, &[])
}

/// A WRITE of a two-byte value in `endian` order.
pub fn write_word(id: u8, addr: u8, value: u16, endian: Endian) -> Result<Vec<u8>, EncodeError> {
    write(id, addr, &endian.word(value))
}

/// The 7-byte block the vendor's "write position with speed" helper writes
/// from [`reg::ACCELERATION`] (41): acceleration, goal position (2), goal
/// time (2, zero so that the speed governs), goal speed (2). One packet sets
/// all three, so the servo never moves to a new goal with an old speed.
pub fn position_speed_block(
    position: u16,
    speed: u16,
    acceleration: u8,
    endian: Endian,
) -> [u8; 7] {
    let p = endian.word(position);
    let s = endian.word(speed);
    [acceleration, p[0], p[1], 0, 0, s[0], s[1]]
}

/// WRITE of [`position_speed_block`] to servo `id` at address 41.
pub fn write_position_speed(
    id: u8,
    position: u16,
    speed: u16,
    acceleration: u8,
    endian: Endian,
) -> Result<Vec<u8>, EncodeError> {
    write(
        id,
        reg::ACCELERATION,
        &position_speed_block(position, speed, acceleration, endian),
    )
}

/// SYNC WRITE: one broadcast packet that writes `len` bytes from `addr` on
/// every servo listed, each with its own block (`blocks`: id and exactly
/// `len` bytes, sent in the order given). No servo replies.
pub fn sync_write(addr: u8, len: u8, blocks: &[(u8, &[u8])]) -> Result<Vec<u8>, EncodeError> {
    let blocks = sync_write_blocks("SYNC WRITE", addr.into(), len.into(), blocks, SPACE)?;
    packet(BROADCAST_ID, inst::SYNC_WRITE, &[&[addr, len], &blocks])
}

/// SYNC WRITE of goal positions ([`reg::GOAL_POSITION`], 2 bytes each in
/// `endian` order): the per-tick command of the whole arm in one packet.
pub fn sync_write_goal_positions(
    goals: &[(u8, u16)],
    endian: Endian,
) -> Result<Vec<u8>, EncodeError> {
    let words: Vec<(u8, [u8; 2])> = goals.iter().map(|&(id, p)| (id, endian.word(p))).collect();
    let blocks: Vec<(u8, &[u8])> = words.iter().map(|(id, w)| (*id, &w[..])).collect();
    sync_write(reg::GOAL_POSITION, 2, &blocks)
}

/// SYNC WRITE of [`position_speed_block`]s: position, speed and
/// acceleration of every servo in one packet.
pub fn sync_write_position_speed(
    goals: &[(u8, u16, u16, u8)],
    endian: Endian,
) -> Result<Vec<u8>, EncodeError> {
    let data: Vec<(u8, [u8; 7])> = goals
        .iter()
        .map(|&(id, p, s, a)| (id, position_speed_block(p, s, a, endian)))
        .collect();
    let blocks: Vec<(u8, &[u8])> = data.iter().map(|(id, b)| (*id, &b[..])).collect();
    sync_write(reg::ACCELERATION, 7, &blocks)
}

/// SYNC READ `len` bytes from `addr` of the servos `ids`: each replies with
/// its own status packet, in list order.
pub fn sync_read(addr: u8, len: u8, ids: &[u8]) -> Result<Vec<u8>, EncodeError> {
    check_sync_read("SYNC READ", addr.into(), len.into(), ids, SPACE)?;
    packet(BROADCAST_ID, inst::SYNC_READ, &[&[addr, len], ids])
}

/// A status packet with a valid checksum. Used by tests and simulated
/// servos; real servos produce these.
pub fn encode_status(id: u8, error: u8, params: &[u8]) -> Result<Vec<u8>, EncodeError> {
    check_id(id, false, "status")?;
    packet(id, error, &[params])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_matches_the_documented_example() {
        // ID 1: FF FF 01 02 01 CHK, CHK = !(1 + 2 + 1) = 0xFB.
        assert_eq!(ping(1).unwrap(), [0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFB]);
    }

    #[test]
    fn read_and_write_layout() {
        let r = read(3, reg::PRESENT_POSITION, 2).unwrap();
        assert_eq!(&r[..7], &[0xFF, 0xFF, 3, 4, inst::READ, 56, 2]);
        assert_eq!(r[7], checksum(&r[2..7]));
        let w = write_word(3, reg::GOAL_POSITION, 0x0123, Endian::Little).unwrap();
        assert_eq!(&w[..8], &[0xFF, 0xFF, 3, 5, inst::WRITE, 42, 0x23, 0x01]);
        let w = write_word(3, reg::GOAL_POSITION, 0x0123, Endian::Big).unwrap();
        assert_eq!(&w[6..8], &[0x01, 0x23]);
    }

    #[test]
    fn sync_write_layout_and_length() {
        let p = sync_write_goal_positions(&[(1, 2048), (2, 1000)], Endian::Little).unwrap();
        // LEN = N(L+1) + 4 = 2*3 + 4.
        assert_eq!(
            &p[..p.len() - 1],
            &[
                0xFF, 0xFF, 0xFE, 10, 0x83, 42, 2, 1, 0x00, 0x08, 2, 0xE8, 0x03
            ]
        );
        assert_eq!(p[3] as usize, p.len() - 4);
    }

    #[test]
    fn sync_read_layout() {
        let p = sync_read(reg::PRESENT_POSITION, 2, &[1, 2, 3]).unwrap();
        // LEN = N + 4.
        assert_eq!(&p[..10], &[0xFF, 0xFF, 0xFE, 7, 0x82, 56, 2, 1, 2, 3]);
    }

    #[test]
    fn position_speed_block_order() {
        let b = position_speed_block(0x0102, 0x0304, 50, Endian::Little);
        assert_eq!(b, [50, 0x02, 0x01, 0, 0, 0x04, 0x03]);
        let w = write_position_speed(1, 0x0102, 0x0304, 50, Endian::Big).unwrap();
        assert_eq!(
            &w[4..13],
            &[inst::WRITE, 41, 50, 0x01, 0x02, 0, 0, 0x03, 0x04]
        );
    }

    #[test]
    fn encoder_errors_name_the_problem() {
        assert_eq!(
            read(BROADCAST_ID, 56, 2),
            Err(EncodeError::Broadcast {
                instruction: "READ"
            })
        );
        assert_eq!(ping(0xFD), Err(EncodeError::BadId { id: 0xFD }));
        assert_eq!(
            read(1, 56, 0),
            Err(EncodeError::NoData {
                instruction: "READ"
            })
        );
        assert_eq!(
            read(1, 255, 2),
            Err(EncodeError::AddressRange {
                addr: 255,
                len: 2,
                last: 255
            })
        );
        assert_eq!(
            sync_write_goal_positions(&[(1, 0), (1, 5)], Endian::Little),
            Err(EncodeError::DuplicateId {
                instruction: "SYNC WRITE",
                id: 1
            })
        );
        assert_eq!(
            sync_write(42, 2, &[(1, &[1, 2, 3])]),
            Err(EncodeError::BlockLength {
                id: 1,
                expected: 2,
                got: 3
            })
        );
        assert!(matches!(
            sync_write(0, 3, &[]),
            Err(EncodeError::NoServos { .. })
        ));
        assert!(matches!(
            write(1, 0, &[0; 245]),
            Err(EncodeError::TooLong { len: 252, max: 250 })
        ));
        assert!(write(1, 0, &[0; 243]).is_ok());
    }

    #[test]
    fn sign_magnitude() {
        assert_eq!(from_sign_magnitude(0x8000 | 100, 15), -100);
        assert_eq!(from_sign_magnitude(100, 15), 100);
        assert_eq!(to_sign_magnitude(-100, 15), 0x8000 | 100);
        assert_eq!(to_sign_magnitude(-5000, 11), 0x800 | 2047);
        assert_eq!(to_sign_magnitude(i32::MIN, 15), 0xFFFF);
    }
}
