//! The CRC-16 of Dynamixel Protocol 2.0.
//!
//! ROBOTIS documents it as CRC-16 with the polynomial x¹⁶ + x¹⁵ + x² + 1
//! (0x8005), initial value 0, bits not reflected and no final XOR (the
//! variant catalogues call CRC-16/BUYPASS). It covers the whole packet
//! from the first header byte to the last parameter, after byte stuffing,
//! and is sent low byte first. The table is built here from the
//! polynomial rather than written out, so there is nothing to mistype.

/// The generator polynomial (the x¹⁶ term implied).
pub const POLYNOMIAL: u16 = 0x8005;

/// The 256 partial remainders of one byte, most significant bit first.
const TABLE: [u16; 256] = table();

const fn table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ POLYNOMIAL
            } else {
                crc << 1
            };
            bit += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
}

/// `crc` extended by `bytes`: lets a reader check a packet that arrives
/// in pieces, and the FAST SYNC READ reply carry running CRCs.
pub fn update(crc: u16, bytes: &[u8]) -> u16 {
    bytes.iter().fold(crc, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from(((crc >> 8) as u8) ^ b)]
    })
}

/// The CRC of `bytes` from the initial value 0.
pub fn crc16(bytes: &[u8]) -> u16 {
    update(0, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_check_value() {
        // The catalogue check value of CRC-16/BUYPASS (poly 0x8005, init 0).
        assert_eq!(crc16(b"123456789"), 0xFEE8);
    }

    #[test]
    fn table_starts_like_the_documented_one() {
        // The first entries of the table in ROBOTIS' CRC page.
        assert_eq!(&TABLE[..4], &[0x0000, 0x8005, 0x800F, 0x000A]);
        assert_eq!(TABLE[255], 0x0202);
    }

    #[test]
    fn manual_examples() {
        // Packets of the Protocol 2.0 page, CRC bytes low first.
        let cases: [(&[u8], [u8; 2]); 4] = [
            // PING id 1.
            (
                &[0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01],
                [0x19, 0x4E],
            ),
            // Its status: XM430-W210 (1030), firmware 38.
            (
                &[
                    0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x55, 0x00, 0x06, 0x04, 0x26,
                ],
                [0x65, 0x5D],
            ),
            // READ of present position (132, 4 bytes) from id 1.
            (
                &[
                    0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x02, 0x84, 0x00, 0x04, 0x00,
                ],
                [0x1D, 0x15],
            ),
            // WRITE of 512 to goal position (116) of id 1.
            (
                &[
                    0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x09, 0x00, 0x03, 0x74, 0x00, 0x00, 0x02, 0x00,
                    0x00,
                ],
                [0xCA, 0x89],
            ),
        ];
        for (packet, crc) in cases {
            assert_eq!(crc16(packet).to_le_bytes(), crc, "{packet:02X?}");
        }
    }

    #[test]
    fn update_continues_a_running_crc() {
        let data = b"Dynamixel Protocol 2.0";
        for split in 0..data.len() {
            assert_eq!(update(crc16(&data[..split]), &data[split..]), crc16(data));
        }
    }
}
