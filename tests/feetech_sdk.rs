//! Byte-for-byte equality of `arm_ik::servo::feetech` with the vendor SDK.
//!
//! `tests/python/feetech_capture.py` runs the Feetech Python SDK
//! (`feetech-servo-sdk`, installed in `.venv` by `scripts/python-env`)
//! against a pty and records the bytes it sends; every case below must come
//! out of our encoder identically. The vendor SDK is what the servos have
//! been driven with for years, so matching it is the best evidence short of
//! hardware that our packets are right.
//!
//! Without `.venv/bin/python` the test prints SKIP, unless the `CI`
//! environment variable is set: then it fails, so CI cannot silently lose
//! the comparison.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

use arm_ik::servo::feetech::{self, Endian};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

#[derive(serde::Deserialize)]
struct Capture {
    sdk_version: String,
    cases: BTreeMap<String, Vec<u8>>,
}

fn capture() -> Option<Capture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but {} is missing: run scripts/python-env",
            python.display()
        );
        println!("SKIP: .venv missing (run scripts/python-env for the vendor SDK comparison)");
        return None;
    }
    let out = Command::new(&python)
        .arg(root.join("tests/python/feetech_capture.py"))
        .output()
        .expect("running tests/python/feetech_capture.py");
    assert!(
        out.status.success(),
        "feetech_capture.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("feetech_capture.py prints JSON"))
}

/// The same cases, with the same parameters, as feetech_capture.py.
fn ours() -> Vec<(&'static str, Vec<u8>)> {
    let le = Endian::Little;
    let be = Endian::Big;
    let ok = |r: Result<Vec<u8>, feetech::EncodeError>| r.expect("encodes");
    vec![
        ("ping_0", ok(feetech::ping(0))),
        ("ping_1", ok(feetech::ping(1))),
        ("ping_252", ok(feetech::ping(252))),
        ("read_1_56_2", ok(feetech::read(1, 56, 2))),
        (
            "read_7_3_2",
            ok(feetech::read(7, feetech::reg::MODEL_NUMBER, 2)),
        ),
        (
            "write1_1_40_1",
            ok(feetech::write(1, feetech::reg::TORQUE_ENABLE, &[1])),
        ),
        (
            "write2_sts_3_42_3000",
            ok(feetech::write_word(
                3,
                feetech::reg::GOAL_POSITION,
                3000,
                le,
            )),
        ),
        (
            "write2_sts_broadcast_42_2048",
            ok(feetech::write_word(
                feetech::BROADCAST_ID,
                feetech::reg::GOAL_POSITION,
                2048,
                le,
            )),
        ),
        (
            "write_pos_speed_sts_2",
            ok(feetech::write_position_speed(2, 1234, 2400, 50, le)),
        ),
        (
            "sync_write_sts_1",
            ok(feetech::sync_write_goal_positions(&[(1, 2048)], le)),
        ),
        (
            "sync_write_sts_6",
            ok(feetech::sync_write_goal_positions(
                &[(1, 0), (2, 1000), (3, 2048), (4, 3000), (5, 4095), (6, 511)],
                le,
            )),
        ),
        (
            "sync_write_pos_speed_sts_2",
            ok(feetech::sync_write_position_speed(
                &[(1, 100, 500, 10), (9, 4000, 3000, 254)],
                le,
            )),
        ),
        (
            "sync_read_56_2_123",
            ok(feetech::sync_read(56, 2, &[1, 2, 3])),
        ),
        (
            "sync_read_56_8_6",
            ok(feetech::sync_read(56, 8, &[1, 2, 3, 4, 5, 6])),
        ),
        (
            "write2_scs_3_42_3000",
            ok(feetech::write_word(
                3,
                feetech::reg::GOAL_POSITION,
                3000,
                be,
            )),
        ),
        (
            "sync_write_scs_3",
            ok(feetech::sync_write_goal_positions(
                &[(1, 300), (2, 512), (3, 1023)],
                be,
            )),
        ),
        (
            "write_pos_speed_scs_2",
            ok(feetech::write_position_speed(2, 1234, 2400, 50, be)),
        ),
    ]
}

#[test]
fn encoder_matches_vendor_sdk_byte_for_byte() {
    let Some(capture) = capture() else { return };
    let ours = ours();
    let mut failures = Vec::new();
    for (name, bytes) in &ours {
        match capture.cases.get(*name) {
            None => failures.push(format!("{name}: not captured from the SDK")),
            Some(sdk) if sdk != bytes => failures.push(format!(
                "{name}: SDK {sdk:02X?}\n{:>w$} ours {bytes:02X?}",
                "",
                w = name.len()
            )),
            Some(_) => {}
        }
    }
    for name in capture.cases.keys() {
        if !ours.iter().any(|(n, _)| n == name) {
            failures.push(format!("{name}: captured but not compared"));
        }
    }
    assert!(
        failures.is_empty(),
        "feetech-servo-sdk {} differs:\n{}",
        capture.sdk_version,
        failures.join("\n")
    );
    println!(
        "{} packets identical to feetech-servo-sdk {}",
        ours.len(),
        capture.sdk_version
    );
}

/// Guards the comparison itself: a broken capture (empty, truncated, a
/// case missing) must not pass as "identical".
#[test]
fn captured_packets_are_well_formed() {
    let Some(capture) = capture() else { return };
    assert!(capture.cases.len() >= 17, "too few cases captured");
    for (name, p) in &capture.cases {
        assert!(p.len() >= 6 && p[..2] == feetech::HEADER, "{name}: {p:?}");
        assert_eq!(usize::from(p[3]) + 4, p.len(), "{name}: length byte");
        assert_eq!(
            feetech::checksum(&p[2..p.len() - 1]),
            p[p.len() - 1],
            "{name}"
        );
    }
}

/// The simulated bus of `tests/feetech_bus.rs` (`tests/python/feetech_bus.py`)
/// driven by the vendor SDK (`tests/python/feetech_sdk_bus.py`): pings,
/// reads, writes, a sync write and a sync read all succeed and read back
/// what the simulator holds, and a silent servo times out in the SDK too;
/// likewise for its SCS0009 servos in the SDK's SCS byte order.
/// So the simulated servos answer like the SDK expects real ones to, and
/// the bus tests of our driver rest on an independently checked peer.
#[test]
fn simulated_bus_answers_the_vendor_sdk() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but {} is missing: run scripts/python-env",
            python.display()
        );
        println!("SKIP: .venv missing (run scripts/python-env for the vendor SDK comparison)");
        return;
    }
    let out = Command::new(&python)
        .arg(root.join("tests/python/feetech_sdk_bus.py"))
        .output()
        .expect("running tests/python/feetech_sdk_bus.py");
    assert!(
        out.status.success(),
        "feetech_sdk_bus.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("feetech_sdk_bus.py prints JSON");
    let call = |name: &str| sdk_value(&r, name);
    // The SDK's ping reads the model number: 777 is the STS3215.
    for id in 1..=3 {
        assert_eq!(call(&format!("ping_{id}")), 777, "ping of id {id}");
    }
    assert_eq!(r["ping_9"]["ok"], false, "the silent servo answered: {r}");
    for (id, at) in [(1, 1000), (2, 2000), (3, 3000)] {
        assert_eq!(
            call(&format!("present_{id}")),
            at,
            "present position of {id}"
        );
    }
    for name in [
        "write_goal_2",
        "torque_1",
        "torque_2",
        "torque_3",
        "sync_write",
    ] {
        call(name);
    }
    // The goals written (one WRITE, one SYNC WRITE) read back and, with the
    // torque on, the servos reached them: the sync read sees them there.
    for (id, goal) in [(1, 1200), (2, 2500), (3, 2800)] {
        assert_eq!(call(&format!("goal_{id}")), goal, "goal of {id}");
    }
    assert_eq!(call("sync_read"), serde_json::json!([1200, 2500, 2800]));
    // And the simulator logged exactly those goal writes.
    assert_eq!(goal_writes(&r), [(2, 2500), (1, 1200), (3, 2800)]);

    // SCS0009 servos (simulator --scs) through the SDK's big-endian
    // PacketHandler(1): model 1284, positions and goals as the big-endian
    // words the SDK packs and reads.
    let scs = &r["scs"];
    let call = |name: &str| sdk_value(scs, name);
    for (id, at) in [(1, 300), (2, 700)] {
        assert_eq!(call(&format!("ping_{id}")), 1284, "ping of SCS id {id}");
        assert_eq!(call(&format!("present_{id}")), at, "SCS id {id}");
    }
    for name in ["write_goal_1", "sync_write", "torque_1", "torque_2"] {
        call(name);
    }
    assert_eq!(call("moved_1"), 900);
    assert_eq!(call("moved_2"), 100);
    assert_eq!(goal_writes(scs), [(1, 900), (2, 100)]);
}

/// The value of the SDK call `name` in feetech_sdk_bus.py's output,
/// which must have succeeded.
fn sdk_value(run: &serde_json::Value, name: &str) -> serde_json::Value {
    let c = &run[name];
    assert_eq!(c["ok"], true, "{name}: the SDK call failed: {c}");
    c["value"].clone()
}

/// The goal writes (id, goal) the simulator logged in that run.
fn goal_writes(run: &serde_json::Value) -> Vec<(u64, u64)> {
    run["log"]
        .as_array()
        .expect("the simulator's log")
        .iter()
        .filter(|e| e.get("goal").is_some())
        .map(|e| (e["id"].as_u64().unwrap(), e["goal"].as_u64().unwrap()))
        .collect()
}
