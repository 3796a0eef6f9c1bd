//! `arm_ik::servo::dynamixel` against ROBOTIS' own Dynamixel SDK
//! (`dynamixel-sdk` on PyPI, installed in `.venv` by `scripts/python-env`):
//!
//! - every packet the project can send is byte-identical to what the SDK
//!   writes for the same call (`tests/python/dynamixel_capture.py`
//!   records it over a pty);
//! - the simulated bus of the Dynamixel tests
//!   (`tests/python/dynamixel_bus.py`) answers the SDK the way the SDK
//!   expects servos to (`tests/python/dynamixel_sdk_bus.py`), so the
//!   simulator is checked against the vendor.
//!
//! Without `.venv/bin/python` the tests print SKIP, unless the `CI`
//! environment variable is set: then they fail, so CI cannot silently lose
//! the comparison.

use arm_ik::servo::dynamixel::packet::{self, BROADCAST_ID};
use arm_ik::servo::dynamixel::{crc, reg};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(serde::Deserialize)]
struct Capture {
    sdk_version: String,
    cases: BTreeMap<String, Vec<u8>>,
}

/// The venv's python, or None (SKIP) outside CI.
fn venv_python() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none_or(|v| v.is_empty()),
        "CI is set but {} is missing: run scripts/python-env",
        python.display()
    );
    println!("SKIP: .venv missing (run scripts/python-env for the vendor SDK comparison)");
    None
}

/// Runs `tests/python/<script>` with the venv's python; its stdout as JSON.
fn run_script<T: serde::de::DeserializeOwned>(script: &str) -> Option<T> {
    let python = venv_python()?;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let out = Command::new(&python)
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("running {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{script} JSON: {e}")))
}

const GOALS_6: [(u8, i64); 6] = [
    (1, 0),
    (2, 1000),
    (3, 2048),
    (4, 3000),
    (5, 4095),
    (6, -1000),
];
const IDS_6: [u8; 6] = [1, 2, 3, 4, 5, 6];
/// 0x00FDFFFF: its little-endian bytes are `FF FF FD 00`, a header.
const NEEDS_STUFFING: i64 = 0x00FD_FFFF;

/// The same cases, with the same parameters, as dynamixel_capture.py.
fn ours() -> Vec<(&'static str, Vec<u8>)> {
    let ok = |r: Result<Vec<u8>, packet::EncodeError>| r.expect("encodes");
    let stuffed_write = ok(packet::write_register(
        1,
        reg::GOAL_POSITION,
        NEEDS_STUFFING,
    ));
    let stuffed_sync = ok(packet::sync_write_register(
        reg::GOAL_POSITION,
        &[(1, NEEDS_STUFFING), (2, 2048)],
    ));
    vec![
        ("ping_0", ok(packet::ping(0))),
        ("ping_1", ok(packet::ping(1))),
        ("ping_252", ok(packet::ping(252))),
        ("ping_broadcast", ok(packet::ping(BROADCAST_ID))),
        ("reboot_1", ok(packet::reboot(1))),
        ("read_1_132_4", ok(packet::read(1, 132, 4))),
        (
            "read1_7_11",
            ok(packet::read_register(7, reg::OPERATING_MODE)),
        ),
        ("read2_3_0", ok(packet::read_register(3, reg::MODEL_NUMBER))),
        (
            "read4_2_132",
            ok(packet::read_register(2, reg::PRESENT_POSITION)),
        ),
        (
            "write1_1_64_1",
            ok(packet::write_register(1, reg::TORQUE_ENABLE, 1)),
        ),
        (
            "write1_broadcast_64_0",
            ok(packet::write_register(BROADCAST_ID, reg::TORQUE_ENABLE, 0)),
        ),
        (
            "write2_3_102_200",
            ok(packet::write_register(3, reg::GOAL_CURRENT, 200)),
        ),
        (
            "write4_2_116_2048",
            ok(packet::write_register(2, reg::GOAL_POSITION, 2048)),
        ),
        (
            "write4_1_20_-1470",
            ok(packet::write_register(1, reg::HOMING_OFFSET, -1470)),
        ),
        ("write4_1_116_stuffed_sdk_stuffer", stuffed_write),
        (
            "sync_write_116_4_6",
            ok(packet::sync_write_register(reg::GOAL_POSITION, &GOALS_6)),
        ),
        (
            "sync_write_112_4_2",
            ok(packet::sync_write_register(
                reg::PROFILE_VELOCITY,
                &[(1, 300), (2, 0)],
            )),
        ),
        ("sync_write_116_4_stuffed_sdk_stuffer", stuffed_sync),
        (
            "sync_read_132_4_6",
            ok(packet::sync_read_register(reg::PRESENT_POSITION, &IDS_6)),
        ),
        (
            "sync_read_126_10_2",
            ok(packet::sync_read(126, 10, &[1, 2])),
        ),
        (
            "fast_sync_read_132_4_6",
            ok(packet::fast_sync_read(132, 4, &IDS_6)),
        ),
        (
            "fast_sync_read_132_4_3",
            ok(packet::fast_sync_read(132, 4, &[3, 7, 4])),
        ),
    ]
}

/// Cases where the SDK puts `FF FF FD` on the wire unstuffed (its
/// txPacket drops the stuffed copy its stuffer returns): the wire bytes
/// are our packet without the stuffing byte, with length and CRC to match.
const SDK_SENDS_UNSTUFFED: [(&str, &str); 2] = [
    ("write4_1_116_stuffed", "write4_1_116_stuffed_sdk_stuffer"),
    (
        "sync_write_116_4_stuffed",
        "sync_write_116_4_stuffed_sdk_stuffer",
    ),
];

/// `p` with its byte stuffing removed and length and CRC recomputed.
fn without_stuffing(p: &[u8]) -> Vec<u8> {
    let body = packet::unstuff(&p[7..p.len() - 2]).expect("a stuffed packet");
    let mut out = p[..5].to_vec();
    out.extend_from_slice(&((body.len() + 2) as u16).to_le_bytes());
    out.extend_from_slice(&body);
    let c = crc::crc16(&out);
    out.extend_from_slice(&c.to_le_bytes());
    out
}

fn compare(name: &str, sdk: Option<&Vec<u8>>, ours: &[u8], failures: &mut Vec<String>) {
    match sdk {
        None => failures.push(format!("{name}: not captured from the SDK")),
        Some(sdk) if sdk != ours => failures.push(format!(
            "{name}: SDK {sdk:02X?}\n{:>w$} ours {ours:02X?}",
            "",
            w = name.len()
        )),
        Some(_) => {}
    }
}

#[test]
fn encoder_matches_vendor_sdk_byte_for_byte() {
    let Some(capture) = run_script::<Capture>("dynamixel_capture.py") else {
        return;
    };
    let ours = ours();
    let mut failures = Vec::new();
    for (name, bytes) in &ours {
        compare(name, capture.cases.get(*name), bytes, &mut failures);
    }
    for (wire, stuffer) in SDK_SENDS_UNSTUFFED {
        let ours = &ours.iter().find(|(n, _)| *n == stuffer).unwrap().1;
        let sdk = capture.cases.get(wire);
        if sdk == Some(ours) {
            println!("{wire}: this SDK stuffs on the wire too");
        } else {
            compare(wire, sdk, &without_stuffing(ours), &mut failures);
        }
    }
    for name in capture.cases.keys() {
        let known = ours.iter().any(|(n, _)| n == name)
            || SDK_SENDS_UNSTUFFED.iter().any(|(w, _)| w == name);
        if !known {
            failures.push(format!("{name}: captured but not compared"));
        }
    }
    assert!(
        failures.is_empty(),
        "dynamixel-sdk {} differs:\n{}",
        capture.sdk_version,
        failures.join("\n")
    );
    println!(
        "{} packets identical to dynamixel-sdk {}",
        ours.len(),
        capture.sdk_version
    );
}

/// Guards the comparison itself: a broken capture (empty, truncated, a
/// case missing) must not pass as "identical".
#[test]
fn captured_packets_are_well_formed() {
    let Some(capture) = run_script::<Capture>("dynamixel_capture.py") else {
        return;
    };
    assert!(capture.cases.len() >= 24, "too few cases captured");
    for (name, p) in &capture.cases {
        assert!(
            p.len() >= 10 && p[..4] == packet::HEADER,
            "{name}: {p:02X?}"
        );
        let len = usize::from(u16::from_le_bytes([p[5], p[6]]));
        assert_eq!(len + 7, p.len(), "{name}: length field");
        assert_eq!(
            crc::crc16(&p[..p.len() - 2]).to_le_bytes(),
            p[p.len() - 2..],
            "{name}: CRC"
        );
    }
}
