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

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

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

/// The value of the SDK call `name` in dynamixel_sdk_bus.py's output,
/// which must have reached the servo; `error` is the status error byte
/// it must have returned.
fn sdk_value(run: &serde_json::Value, name: &str, error: u64) -> serde_json::Value {
    let c = &run[name];
    assert_eq!(c["ok"], true, "{name}: no answer: {c}");
    assert_eq!(c["error"], error, "{name}: status error byte: {c}");
    c["value"].clone()
}

/// The simulated bus of the Dynamixel tests (`tests/python/dynamixel_bus.py`)
/// driven by the vendor SDK (`tests/python/dynamixel_sdk_bus.py`): pings
/// (one by one and broadcast) return each model's number, reads and
/// writes land, the servo refuses what real servos refuse (EEPROM while
/// the torque is on, a mode the model lacks, half a register) with the
/// error numbers the SDK decodes, a profile move reports `moving`, sync
/// write, sync read and fast sync read agree, a latched hardware error
/// sets the alert bit until REBOOT, and a silent servo or the wrong baud
/// rate time out in the SDK too. So the simulated servos answer as the SDK
/// expects real ones to, and the tests of our driver rest on an
/// independently checked peer.
#[test]
fn simulated_bus_answers_the_vendor_sdk() {
    let Some(r) = run_script::<serde_json::Value>("dynamixel_sdk_bus.py") else {
        return;
    };
    let v = |name: &str| sdk_value(&r, name, 0);
    for (id, model) in [(1, 1060), (2, 1200), (3, 1190)] {
        assert_eq!(v(&format!("ping_{id}")), model, "ping of id {id}");
    }
    assert_eq!(sdk_value(&r, "ping_4", 0x80), 1020, "alert bit on id 4");
    assert_eq!(r["ping_9"]["ok"], false, "the silent servo answered: {r}");
    let found = v("broadcast_ping");
    let models: Vec<(String, u64)> = found
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, m)| (id.clone(), m[0].as_u64().unwrap()))
        .collect();
    let want = [("1", 1060), ("2", 1200), ("3", 1190), ("4", 1020)];
    assert_eq!(models, want.map(|(i, m)| (i.to_string(), m)));
    for (id, at) in [(1, 1000), (2, 2000), (3, 3000)] {
        assert_eq!(v(&format!("present_{id}")), at, "present position of {id}");
    }
    assert_eq!(v("firmware_2"), 52);

    // Refusals, with the e-manual's error numbers.
    sdk_value(&r, "mode_2_torque_on", 7); // access: EEPROM, torque on
    v("mode_2_torque_off");
    assert_eq!(v("mode_2"), 4);
    sdk_value(&r, "mode_1_current_based", 4); // range: no current sensing
    sdk_value(&r, "half_goal_2", 5); // length: 2 of 4 bytes

    assert_eq!(v("moving_2_early"), 1, "under way at profile velocity");
    assert_eq!(v("moving_2_late"), 0, "arrived");
    let positions = serde_json::json!([1200, 3000, 2800]);
    assert_eq!(v("sync_read"), positions);
    assert_eq!(v("fast_sync_read"), positions);

    assert_eq!(sdk_value(&r, "hw_error_4", 0x80), 32, "overload latched");
    sdk_value(&r, "torque_4", 0x80 | 1); // result fail while latched
    v("reboot_4");
    assert_eq!(v("hw_error_4_after_reboot"), 0);

    assert_eq!(r["ping_1_at_57600"]["ok"], false, "heard at the wrong baud");
    assert_eq!(v("ping_1_back_at_1M"), 1060);

    // The simulator logged exactly the goal writes that landed.
    let goals: Vec<(u64, i64)> = r["log"]
        .as_array()
        .expect("the simulator's log")
        .iter()
        .filter(|e| e.get("goal").is_some())
        .map(|e| (e["id"].as_u64().unwrap(), e["goal"].as_i64().unwrap()))
        .collect();
    assert_eq!(goals, [(2, 3000), (1, 1200), (3, 2800)]);
}
