//! Status packets: the manual's examples, and a reader that survives
//! garbage, bad CRCs, bad stuffing and split reads.

use super::packet::{self, BROADCAST_ID, MAX_ID};
use super::status::*;
use super::table::reg;
use crate::servo::bus::StatusStream;
use proptest::prelude::*;

fn ok(id: u8, error: u8, params: &[u8]) -> Result<StatusPacket, StatusError> {
    Ok(StatusPacket {
        id,
        error: ErrorByte(error),
        params: params.to_vec(),
    })
}

#[test]
fn manual_examples_decode() {
    // PING reply of an XM430-W210 (model 1030, firmware 38).
    let ping = [
        0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x55, 0x00, 0x06, 0x04, 0x26, 0x65, 0x5D,
    ];
    let s = decode_all(&ping).remove(0).unwrap();
    assert_eq!(s.ping_reply(), Ok((1030, 38)));
    assert_eq!(encode_status(1, 0, &[0x06, 0x04, 0x26]).unwrap(), ping);
    // Present position 166 of id 1.
    let read = [
        0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x08, 0x00, 0x55, 0x00, 0xA6, 0x00, 0x00, 0x00, 0x8C, 0xC0,
    ];
    let s = decode_all(&read).remove(0).unwrap();
    assert_eq!(reg::PRESENT_POSITION.decode(s.data(4).unwrap()), Ok(166));
    assert!(s.data(2).is_err());
    // A bare acknowledgement.
    let ack = [
        0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x04, 0x00, 0x55, 0x00, 0xA1, 0x0C,
    ];
    assert_eq!(decode_all(&ack), vec![ok(1, 0, &[])]);
}

#[test]
fn error_byte() {
    let e = ErrorByte(0x80 | 7);
    assert!(e.alert());
    assert_eq!(e.error(), Some(ErrorNumber::Access));
    assert_eq!(e.to_string(), "access error, hardware alert");
    assert_eq!(ErrorByte(0x80).to_string(), "hardware alert");
    assert_eq!(ErrorByte(0).error(), None);
    assert_eq!(ErrorByte(0x13).to_string(), "error 19");
    for code in 1..=7 {
        assert_eq!(ErrorNumber::from_code(code).code(), code);
    }
}

/// The e-manual's FAST SYNC READ example: ids 3, 7, 4 at 166, 2079, 1023.
#[test]
fn fast_sync_read_reply_of_the_manual() {
    let reply = [
        0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x19, 0x00, 0x55, // header, length 25
        0x00, 0x03, 0xA6, 0x00, 0x00, 0x00, 0x84, 0x08, // id 3, running CRC
        0x00, 0x07, 0x1F, 0x08, 0x00, 0x00, 0x16, 0xCA, // id 7, running CRC
        0x00, 0x04, 0xFF, 0x03, 0x00, 0x00, 0xD1, 0x9E, // id 4, packet CRC
    ];
    let s = decode_all(&reply).remove(0).unwrap();
    assert_eq!(s.id, BROADCAST_ID);
    let parts = split_fast_sync(&s, 4, &[3, 7, 4]).unwrap();
    let got: Vec<(u8, i64)> = parts
        .iter()
        .map(|p| (p.id, reg::PRESENT_POSITION.decode(&p.data).unwrap()))
        .collect();
    assert_eq!(got, [(3, 166), (7, 2079), (4, 1023)]);
    assert_eq!(encode_fast_sync(&parts).unwrap(), reply);
    assert_eq!(
        split_fast_sync(&s, 4, &[3, 4, 7]),
        Err(StatusError::FastSyncOrder {
            index: 1,
            expected: 4,
            got: 7
        })
    );
    assert!(split_fast_sync(&s, 2, &[3, 7, 4]).is_err());
}

#[test]
fn stuffed_parameters_come_back_unstuffed() {
    let params = [0xFF, 0xFF, 0xFD, 0x00];
    let p = encode_status(5, 0, &params).unwrap();
    assert_eq!(p.len(), 11 + 4 + 1, "one stuffing byte");
    assert_eq!(decode_all(&p), vec![ok(5, 0, &params)]);
}

#[test]
fn decodes_after_garbage_echo_and_split_reads() {
    let pkt = encode_status(1, 0, &[0x00, 0x08, 0x00, 0x00]).unwrap();
    let echo = packet::read_register(1, reg::PRESENT_POSITION).unwrap();
    let mut r = StatusReader::new();
    r.push(&[0x12, 0xFF, 0x00, 0xFF, 0xFF]);
    assert_eq!(r.next_status(), None);
    r.push(&echo); // our own instruction, heard back: not a status
    r.push(&[0xFF]); // FF FF FF: the first FF is not a header
    r.push(&pkt[..6]);
    assert_eq!(r.next_status(), None);
    r.push(&pkt[6..]);
    assert_eq!(r.next_status(), Some(ok(1, 0, &[0x00, 0x08, 0x00, 0x00])));
    assert_eq!(r.next_status(), None);
    assert_eq!(r.pending(), 0);
    assert!(r.skipped() >= 5 + echo.len() as u64);
}

#[test]
fn rejects_bad_crc_then_recovers() {
    let mut bad = encode_status(2, 0, &[7]).unwrap();
    *bad.last_mut().unwrap() ^= 0x55;
    let good = encode_status(3, 0x80, &[]).unwrap();
    let out = decode_all(&[bad, good].concat());
    assert!(matches!(out[0], Err(StatusError::BadCrc { id: 2, .. })));
    assert_eq!(out.last().unwrap(), &ok(3, 0x80, &[]));
}

#[test]
fn a_false_header_with_a_huge_length_does_not_swallow_the_next_packet() {
    let good = encode_status(4, 0, &[1, 2]).unwrap();
    let mut r = StatusReader::new().with_max_len(20);
    r.push(&[0xFF, 0xFF, 0xFD, 0x00, 0x01, 0xFF, 0x03, 0x55]);
    r.push(&good);
    assert!(matches!(
        r.next_status(),
        Some(Err(StatusError::BadLength { len: 0x3FF, .. }))
    ));
    assert_eq!(r.next_status(), Some(ok(4, 0, &[1, 2])));
    assert_eq!(
        decode_all(&[0xFF, 0xFF, 0xFD, 0x00, 1, 3, 0, 0x55, 0, 0, 0]),
        vec![Err(StatusError::BadLength {
            id: 1,
            len: 3,
            max: MAX_STATUS_LEN
        })]
    );
}

#[test]
fn reports_bad_stuffing() {
    // A valid CRC around an unstuffed FF FF FD in the parameters.
    let p = packet::frame_stuffed(6, &[0x55, 0x00, 0xFF, 0xFF, 0xFD, 0x01]).unwrap();
    assert_eq!(
        decode_all(&p),
        vec![Err(StatusError::BadStuffing { id: 6 })]
    );
}

proptest! {
    #[test]
    fn decode_of_encode_is_the_identity(
        id in 0..=MAX_ID,
        err in any::<u8>(),
        params in proptest::collection::vec(
            prop_oneof![Just(0xFFu8), Just(0xFD), any::<u8>()], 0..40),
        garbage in proptest::collection::vec(0u8..0xFF, 0..20),
        split in 0usize..80,
    ) {
        let pkt = encode_status(id, err, &params).unwrap();
        let stream = [garbage, pkt].concat();
        let split = split.min(stream.len());
        let mut r = StatusReader::new();
        r.push(&stream[..split]);
        let mut got: Vec<_> = std::iter::from_fn(|| r.next_status()).collect();
        r.push(&stream[split..]);
        got.extend(std::iter::from_fn(|| r.next_status()));
        prop_assert_eq!(got, vec![ok(id, err, &params)]);
    }

    #[test]
    fn random_bytes_never_panic_and_stay_bounded(
        chunks in proptest::collection::vec(
            proptest::collection::vec(
                prop_oneof![Just(0xFFu8), Just(0xFD), Just(0x00), Just(0x55), any::<u8>()],
                0..64),
            0..32),
        max in any::<u16>(),
    ) {
        let mut r = StatusReader::new().with_max_len(max);
        let max = max.clamp(4, MAX_STATUS_LEN);
        for c in &chunks {
            r.push(c);
            while let Some(res) = r.next_status() {
                if let Ok(s) = res {
                    prop_assert!(s.id <= MAX_ID || s.id == BROADCAST_ID);
                    prop_assert!(s.params.len() + 4 <= usize::from(max));
                    let _ = split_fast_sync(&s, 4, &[1, 2]);
                }
            }
            prop_assert!(r.pending() <= usize::from(max) + 7);
        }
    }

    #[test]
    fn fast_sync_round_trips(
        data in proptest::collection::vec((0..=MAX_ID, any::<u8>(), any::<[u8; 4]>()), 1..8),
    ) {
        let mut ids: Vec<u8> = data.iter().map(|d| d.0).collect();
        ids.dedup();
        prop_assume!(ids.len() == data.len());
        let parts: Vec<FastSyncPart> = data
            .iter()
            .map(|&(id, e, d)| FastSyncPart { id, error: ErrorByte(e), data: d.to_vec() })
            .collect();
        let bytes = encode_fast_sync(&parts).unwrap();
        let s = decode_all(&bytes).remove(0).unwrap();
        prop_assert_eq!(split_fast_sync(&s, 4, &ids).unwrap(), parts);
    }
}
