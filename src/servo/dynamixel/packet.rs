//! Protocol 2.0 instruction packets, and the byte stuffing both directions
//! share.
//!
//! Instruction packet: `FF FF FD 00 ID LEN_L LEN_H INST P1..Pn CRC_L
//! CRC_H`. LEN counts the instruction, the parameters and the CRC, after
//! stuffing. Addresses and data lengths are two little-endian bytes.
//! Stuffing (e-manual, "Packet Process"): wherever `FF FF FD` appears from
//! the instruction to the last parameter, an extra `FD` follows it, so a
//! header can never appear inside a packet; the length and the CRC are
//! those of the stuffed packet.

use super::crc::crc16;
use super::table::{Register, ValueError};
use crate::servo::bus::encode::{check_block, check_id, check_sync_read, sync_write_blocks};
/// Broadcast ID: every servo executes the instruction; only PING (and the
/// sync/bulk reads, which name their servos) get replies.
pub use crate::servo::bus::{BROADCAST_ID, EncodeError, MAX_ID};

/// The four bytes every packet starts with (three header bytes and the
/// reserved 0).
pub const HEADER: [u8; 4] = [0xFF, 0xFF, 0xFD, 0x00];
/// Longest packet, header to CRC. The vendor SDK refuses to send anything
/// longer (its `TXPACKET_MAX_LEN`), so we refuse it too.
pub const MAX_PACKET_LEN: usize = 1024;
/// The control table of one servo: addresses 0..=65535.
const SPACE: u32 = 0x1_0000;

/// Instruction codes.
pub mod inst {
    pub const PING: u8 = 0x01;
    pub const READ: u8 = 0x02;
    pub const WRITE: u8 = 0x03;
    pub const REG_WRITE: u8 = 0x04;
    pub const ACTION: u8 = 0x05;
    pub const FACTORY_RESET: u8 = 0x06;
    /// Restarts the servo: the only way to clear a latched hardware error.
    pub const REBOOT: u8 = 0x08;
    pub const CLEAR: u8 = 0x10;
    /// The instruction byte of every status packet.
    pub const STATUS: u8 = 0x55;
    pub const SYNC_READ: u8 = 0x82;
    pub const SYNC_WRITE: u8 = 0x83;
    /// SYNC READ answered by one packet for all servos (see
    /// [`split_fast_sync`](crate::servo::dynamixel::status::split_fast_sync)).
    pub const FAST_SYNC_READ: u8 = 0x8A;
    pub const BULK_READ: u8 = 0x92;
    pub const BULK_WRITE: u8 = 0x93;
    pub const FAST_BULK_READ: u8 = 0x9A;
}

/// `body` (instruction and parameters, or error and parameters) with an
/// `FD` inserted after every `FF FF FD`.
pub fn stuff(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 3);
    for (i, &b) in body.iter().enumerate() {
        out.push(b);
        if b == 0xFD && i >= 2 && body[i - 2..i] == [0xFF, 0xFF] {
            out.push(0xFD);
        }
    }
    out
}

/// `body` with the `FD` after every `FF FF FD` removed; `None` when an
/// `FF FF FD` is followed by anything else (or nothing), which no stuffed
/// packet contains.
pub fn unstuff(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        out.push(body[i]);
        if body[i] == 0xFD && i >= 2 && body[i - 2..i] == [0xFF, 0xFF] {
            if body.get(i + 1) != Some(&0xFD) {
                return None;
            }
            i += 1;
        }
        i += 1;
    }
    Some(out)
}

/// The packet for `id` with first byte `code` (instruction, or the
/// status's 0x55 and error byte) and the concatenated `parts`, stuffed,
/// with length and CRC.
pub(super) fn frame(id: u8, code: &[u8], parts: &[&[u8]]) -> Result<Vec<u8>, EncodeError> {
    let body: Vec<u8> = code
        .iter()
        .copied()
        .chain(parts.iter().flat_map(|p| p.iter().copied()))
        .collect();
    let body = stuff(&body);
    frame_stuffed(id, &body)
}

/// The packet around an already stuffed (or never stuffed) `body`.
pub(super) fn frame_stuffed(id: u8, body: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let total = HEADER.len() + 3 + body.len() + 2;
    if total > MAX_PACKET_LEN {
        return Err(EncodeError::TooLong {
            len: total,
            max: MAX_PACKET_LEN,
        });
    }
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&HEADER);
    out.push(id);
    out.extend_from_slice(&((body.len() + 2) as u16).to_le_bytes());
    out.extend_from_slice(body);
    let crc = crc16(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// PING `id`; broadcast is allowed (every servo answers). The reply
/// carries the model number and the firmware version.
pub fn ping(id: u8) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "PING")?;
    frame(id, &[inst::PING], &[])
}

/// REBOOT `id` (broadcast allowed): clears a latched hardware error.
pub fn reboot(id: u8) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "REBOOT")?;
    frame(id, &[inst::REBOOT], &[])
}

/// READ `len` bytes from address `addr` of servo `id`.
pub fn read(id: u8, addr: u16, len: u16) -> Result<Vec<u8>, EncodeError> {
    check_id(id, false, "READ")?;
    if len == 0 {
        return Err(EncodeError::NoData {
            instruction: "READ",
        });
    }
    check_block(addr, len.into(), SPACE)?;
    frame(
        id,
        &[inst::READ],
        &[&addr.to_le_bytes(), &len.to_le_bytes()],
    )
}

/// READ of one register.
pub fn read_register(id: u8, reg: Register) -> Result<Vec<u8>, EncodeError> {
    read(id, reg.addr, reg.size.into())
}

/// WRITE `data` from address `addr` of servo `id` (broadcast allowed:
/// then no servo replies).
pub fn write(id: u8, addr: u16, data: &[u8]) -> Result<Vec<u8>, EncodeError> {
    check_id(id, true, "WRITE")?;
    if data.is_empty() {
        return Err(EncodeError::NoData {
            instruction: "WRITE",
        });
    }
    check_block(addr, data.len(), SPACE)?;
    frame(id, &[inst::WRITE], &[&addr.to_le_bytes(), data])
}

/// WRITE of `value` to one register, in its size and signedness.
pub fn write_register(id: u8, reg: Register, value: i64) -> Result<Vec<u8>, EncodeError> {
    write(id, reg.addr, &reg.encode(value)?)
}

fn sync_read_packet(
    code: u8,
    instruction: &'static str,
    addr: u16,
    len: u16,
    ids: &[u8],
) -> Result<Vec<u8>, EncodeError> {
    check_sync_read(instruction, addr, len.into(), ids, SPACE)?;
    frame(
        BROADCAST_ID,
        &[code],
        &[&addr.to_le_bytes(), &len.to_le_bytes(), ids],
    )
}

/// SYNC READ `len` bytes from `addr` of the servos `ids`: each replies
/// with its own status packet, in list order.
pub fn sync_read(addr: u16, len: u16, ids: &[u8]) -> Result<Vec<u8>, EncodeError> {
    sync_read_packet(inst::SYNC_READ, "SYNC READ", addr, len, ids)
}

/// FAST SYNC READ: laid out like [`sync_read`], answered by one status
/// packet for all servos (models and firmware that have it only, see
/// [`super::model::DynamixelModel::has_fast_sync_read`]).
pub fn fast_sync_read(addr: u16, len: u16, ids: &[u8]) -> Result<Vec<u8>, EncodeError> {
    sync_read_packet(inst::FAST_SYNC_READ, "FAST SYNC READ", addr, len, ids)
}

/// SYNC WRITE: one broadcast packet that writes `len` bytes from `addr`
/// on every servo listed, each with its own block (sent in the order
/// given). No servo replies.
pub fn sync_write(addr: u16, len: u16, blocks: &[(u8, &[u8])]) -> Result<Vec<u8>, EncodeError> {
    let params = sync_write_blocks("SYNC WRITE", addr, len.into(), blocks, SPACE)?;
    frame(
        BROADCAST_ID,
        &[inst::SYNC_WRITE],
        &[&addr.to_le_bytes(), &len.to_le_bytes(), &params],
    )
}

/// SYNC WRITE of one register on several servos, each with its own value.
pub fn sync_write_register(reg: Register, values: &[(u8, i64)]) -> Result<Vec<u8>, EncodeError> {
    let data = values
        .iter()
        .map(|&(id, v)| Ok((id, reg.encode(v)?)))
        .collect::<Result<Vec<_>, ValueError>>()?;
    let blocks: Vec<(u8, &[u8])> = data.iter().map(|(id, d)| (*id, &d[..])).collect();
    sync_write(reg.addr, reg.size.into(), &blocks)
}

/// SYNC READ of one register on several servos.
pub fn sync_read_register(reg: Register, ids: &[u8]) -> Result<Vec<u8>, EncodeError> {
    sync_read(reg.addr, reg.size.into(), ids)
}

#[cfg(test)]
mod tests {
    use super::super::table::reg;
    use super::*;
    use proptest::prelude::*;

    /// The examples of the e-manual's Protocol 2.0 page, byte for byte.
    #[test]
    fn manual_examples() {
        assert_eq!(
            ping(1).unwrap(),
            [0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01, 0x19, 0x4E]
        );
        assert_eq!(
            ping(BROADCAST_ID).unwrap(),
            [0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x03, 0x00, 0x01, 0x31, 0x42]
        );
        assert_eq!(
            read_register(1, reg::PRESENT_POSITION).unwrap(),
            [
                0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x02, 0x84, 0x00, 0x04, 0x00, 0x1D, 0x15
            ]
        );
        assert_eq!(
            write_register(1, reg::GOAL_POSITION, 512).unwrap(),
            [
                0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x09, 0x00, 0x03, 0x74, 0x00, 0x00, 0x02, 0x00, 0x00,
                0xCA, 0x89
            ]
        );
        assert_eq!(
            sync_read_register(reg::PRESENT_POSITION, &[1, 2]).unwrap(),
            [
                0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x09, 0x00, 0x82, 0x84, 0x00, 0x04, 0x00, 0x01, 0x02,
                0xCE, 0xFA
            ]
        );
        assert_eq!(
            sync_write_register(reg::GOAL_POSITION, &[(1, 150), (2, 170)]).unwrap(),
            [
                0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x11, 0x00, 0x83, 0x74, 0x00, 0x04, 0x00, 0x01, 0x96,
                0x00, 0x00, 0x00, 0x02, 0xAA, 0x00, 0x00, 0x00, 0x82, 0x87
            ]
        );
        assert_eq!(
            fast_sync_read(132, 4, &[3, 7, 4]).unwrap(),
            [
                0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x0A, 0x00, 0x8A, 0x84, 0x00, 0x04, 0x00, 0x03, 0x07,
                0x04, 0x20, 0xF2
            ]
        );
        assert_eq!(
            reboot(1).unwrap(),
            [0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x08, 0x2F, 0x4E]
        );
    }

    #[test]
    fn stuffing_inserts_fd_and_counts_it_in_the_length() {
        assert_eq!(stuff(&[0xFF, 0xFF, 0xFD]), [0xFF, 0xFF, 0xFD, 0xFD]);
        assert_eq!(
            stuff(&[0xFF, 0xFF, 0xFD, 0xFD]),
            [0xFF, 0xFF, 0xFD, 0xFD, 0xFD]
        );
        assert_eq!(stuff(&[0xFF, 0xFD, 0xFF, 0xFD]), [0xFF, 0xFD, 0xFF, 0xFD]);
        // Goal position 0x00FDFFFF would put FF FF FD in the body.
        let p = write(1, 116, &[0xFF, 0xFF, 0xFD, 0x00]).unwrap();
        assert_eq!(
            &p[..15],
            &[
                0xFF, 0xFF, 0xFD, 0x00, 1, 10, 0, 0x03, 116, 0, 0xFF, 0xFF, 0xFD, 0xFD, 0x00
            ]
        );
        assert_eq!(
            u16::from_le_bytes([p[5], p[6]]) as usize,
            p.len() - 7,
            "LEN counts the stuffed body"
        );
        assert_eq!(crc16(&p[..p.len() - 2]).to_le_bytes(), p[p.len() - 2..]);
    }

    #[test]
    fn unstuff_rejects_a_header_inside_a_body() {
        assert_eq!(unstuff(&[0xFF, 0xFF, 0xFD, 0x00]), None);
        assert_eq!(unstuff(&[0x01, 0xFF, 0xFF, 0xFD]), None);
        assert_eq!(
            unstuff(&[0xFF, 0xFF, 0xFD, 0xFD, 0xFD]),
            Some(vec![0xFF, 0xFF, 0xFD, 0xFD])
        );
    }

    #[test]
    fn encoder_errors_name_the_problem() {
        assert_eq!(
            read(BROADCAST_ID, 132, 4),
            Err(EncodeError::Broadcast {
                instruction: "READ"
            })
        );
        assert_eq!(ping(0xFD), Err(EncodeError::BadId { id: 0xFD }));
        assert_eq!(
            read(1, 132, 0),
            Err(EncodeError::NoData {
                instruction: "READ"
            })
        );
        assert_eq!(
            read(1, 0xFFFF, 2),
            Err(EncodeError::AddressRange {
                addr: 0xFFFF,
                len: 2,
                last: 0xFFFF
            })
        );
        assert_eq!(
            sync_write_register(reg::GOAL_POSITION, &[(1, 0), (1, 5)]),
            Err(EncodeError::DuplicateId {
                instruction: "SYNC WRITE",
                id: 1
            })
        );
        assert_eq!(
            sync_write(116, 4, &[(1, &[1, 2, 3])]),
            Err(EncodeError::BlockLength {
                id: 1,
                expected: 4,
                got: 3
            })
        );
        assert!(matches!(
            fast_sync_read(132, 4, &[]),
            Err(EncodeError::NoServos { .. })
        ));
        assert!(matches!(
            write_register(1, reg::TORQUE_ENABLE, 300),
            Err(EncodeError::Value(_))
        ));
        assert!(matches!(
            write(1, 0, &[0; 1013]),
            Err(EncodeError::TooLong {
                len: 1025,
                max: 1024
            })
        ));
        assert!(write(1, 0, &[0; 1012]).is_ok());
    }

    proptest! {
        #[test]
        fn unstuff_undoes_stuff(body in proptest::collection::vec(
            prop_oneof![Just(0xFFu8), Just(0xFD), any::<u8>()], 0..64)) {
            prop_assert_eq!(unstuff(&stuff(&body)), Some(body.clone()));
            let s = stuff(&body);
            // No header survives stuffing unless followed by the stuffing FD.
            for i in 2..s.len() {
                if s[i - 2..=i] == [0xFF, 0xFF, 0xFD] {
                    prop_assert_eq!(s.get(i + 1), Some(&0xFD));
                }
            }
        }
    }
}
