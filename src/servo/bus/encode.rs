//! The argument checks every bus-servo codec makes before it builds an
//! instruction packet, and the one error type they report.
//!
//! Feetech and Dynamixel agree on ids (0..=252 for servos, 254 to
//! broadcast) and on what a sync read or write may hold; they differ in
//! address space (256 or 65536 bytes) and longest packet, which the
//! codecs pass in.

use thiserror::Error;

/// Broadcast ID: every servo executes the instruction; only PING (and the
/// reads that name their servos) get replies.
pub const BROADCAST_ID: u8 = 0xFE;
/// Highest ID a servo can have.
pub const MAX_ID: u8 = 0xFC;

/// Why a value cannot go into (or come out of) a register.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ValueError {
    #[error("value {value} does not fit the {size}-byte register at address {addr}")]
    OutOfRange { addr: u16, size: u8, value: i64 },
    #[error("{got} bytes read for the {size}-byte register at address {addr}")]
    WrongLength { addr: u16, size: u8, got: usize },
}

/// Why an instruction packet could not be built. Nothing is sent then.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EncodeError {
    #[error("servo id {id} is out of range (0..={MAX_ID}, or {BROADCAST_ID} to broadcast)")]
    BadId { id: u8 },
    #[error("{instruction} cannot be broadcast: it needs a reply from one servo")]
    Broadcast { instruction: &'static str },
    #[error("packet of {len} bytes is longer than {max}")]
    TooLong { len: usize, max: usize },
    #[error("{instruction} needs at least one data byte")]
    NoData { instruction: &'static str },
    #[error("{instruction} needs at least one servo")]
    NoServos { instruction: &'static str },
    #[error("servo id {id} appears twice in one {instruction}")]
    DuplicateId { instruction: &'static str, id: u8 },
    #[error("servo id {id} has {got} data bytes in a sync write of {expected}-byte blocks")]
    BlockLength { id: u8, expected: usize, got: usize },
    #[error("register block from address {addr} with {len} bytes runs past address {last}")]
    AddressRange { addr: u16, len: usize, last: u32 },
    #[error(transparent)]
    Value(#[from] ValueError),
}

/// `id` may be addressed by `instruction` (the broadcast ID only where
/// `broadcast_ok`).
pub fn check_id(id: u8, broadcast_ok: bool, instruction: &'static str) -> Result<(), EncodeError> {
    match id {
        BROADCAST_ID if broadcast_ok => Ok(()),
        BROADCAST_ID => Err(EncodeError::Broadcast { instruction }),
        id if id > MAX_ID => Err(EncodeError::BadId { id }),
        _ => Ok(()),
    }
}

/// `len` bytes from `addr` fit an address space of `space` bytes.
pub fn check_block(addr: u16, len: usize, space: u32) -> Result<(), EncodeError> {
    if u32::from(addr) + len as u32 > space || len > space as usize {
        Err(EncodeError::AddressRange {
            addr,
            len,
            last: space - 1,
        })
    } else {
        Ok(())
    }
}

/// The servos of a sync read or write: at least one, each a servo id
/// (not the broadcast ID), none twice.
pub fn check_ids(ids: &[u8], instruction: &'static str) -> Result<(), EncodeError> {
    if ids.is_empty() {
        return Err(EncodeError::NoServos { instruction });
    }
    for (k, &id) in ids.iter().enumerate() {
        check_id(id, false, instruction)?;
        if ids[..k].contains(&id) {
            return Err(EncodeError::DuplicateId { instruction, id });
        }
    }
    Ok(())
}

/// A sync read of `len` bytes from `addr` on `ids`: checked as
/// [`check_ids`], a non-empty block inside the address space.
pub fn check_sync_read(
    instruction: &'static str,
    addr: u16,
    len: usize,
    ids: &[u8],
    space: u32,
) -> Result<(), EncodeError> {
    check_ids(ids, instruction)?;
    if len == 0 {
        return Err(EncodeError::NoData { instruction });
    }
    check_block(addr, len, space)
}

/// The parameters of a sync write after its address and length: each
/// servo's id followed by its `len` bytes, in the order given; checked as
/// [`check_sync_read`], and every block exactly `len` bytes.
pub fn sync_write_blocks(
    instruction: &'static str,
    addr: u16,
    len: usize,
    blocks: &[(u8, &[u8])],
    space: u32,
) -> Result<Vec<u8>, EncodeError> {
    let ids: Vec<u8> = blocks.iter().map(|&(id, _)| id).collect();
    check_sync_read(instruction, addr, len, &ids, space)?;
    let mut params = Vec::with_capacity(blocks.len() * (len + 1));
    for &(id, data) in blocks {
        if data.len() != len {
            return Err(EncodeError::BlockLength {
                id,
                expected: len,
                got: data.len(),
            });
        }
        params.push(id);
        params.extend_from_slice(data);
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_blocks_and_sync_writes_are_checked() {
        assert_eq!(check_id(BROADCAST_ID, true, "PING"), Ok(()));
        assert_eq!(
            check_id(BROADCAST_ID, false, "READ"),
            Err(EncodeError::Broadcast {
                instruction: "READ"
            })
        );
        assert_eq!(
            check_id(0xFD, true, "PING"),
            Err(EncodeError::BadId { id: 0xFD })
        );
        assert_eq!(check_block(254, 2, 256), Ok(()));
        assert_eq!(
            check_block(255, 2, 256).unwrap_err().to_string(),
            "register block from address 255 with 2 bytes runs past address 255"
        );
        assert_eq!(
            check_ids(&[1, 2, 1], "SYNC READ"),
            Err(EncodeError::DuplicateId {
                instruction: "SYNC READ",
                id: 1
            })
        );
        assert_eq!(
            sync_write_blocks("SYNC WRITE", 42, 2, &[(1, &[1, 2]), (3, &[3, 4])], 256),
            Ok(vec![1, 1, 2, 3, 3, 4])
        );
        assert_eq!(
            sync_write_blocks("SYNC WRITE", 42, 2, &[(1, &[1, 2, 3])], 256),
            Err(EncodeError::BlockLength {
                id: 1,
                expected: 2,
                got: 3
            })
        );
        assert!(matches!(
            sync_write_blocks("SYNC WRITE", 42, 0, &[(1, &[])], 256),
            Err(EncodeError::NoData { .. })
        ));
    }
}
