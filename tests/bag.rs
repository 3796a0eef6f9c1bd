//! Bags in and out: interoperability with the independent Python `rosbags`
//! library (both storages, both CDR byte orders), and every kind of bad
//! input `arm_ik replay` must survive.
//!
//! The `rosbags` tests need `.venv` (made by `scripts/python-env`, which
//! `scripts/test` runs) or `ARM_IK_PYTHON`; without it they print SKIP,
//! except under CI, where they fail.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::bag::{
    BagReader, BagWriter, Endian, Header, JOINT_STATE, JointStateMsg, POINT_STAMPED, POSE_STAMPED,
    StampedTarget, Storage, TargetType,
};
use common::arm_ik;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn temp(name: &str) -> common::TempDir {
    common::TempDir::new(&format!("bag-{name}"))
}

/// The venv's python with `rosbags`, or None (SKIP) outside CI.
fn python() -> Option<PathBuf> {
    common::venv_python("rosbags")
}

fn py(python: &Path, script: &str, args: &[&str]) -> String {
    let o = Command::new(python)
        .arg(common::project_dir().join("tests/python").join(script))
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{script} {args:?}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn read_back(python: &Path, bag: &Path) -> Vec<Value> {
    py(python, "read_bag.py", &[bag.to_str().unwrap()])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Writes a bag with `tests/python/write_bag.py` (see there for `args`
/// after the path), checks that every target reads back with the values
/// written, in the byte order written, and that replay reaches them all.
fn rosbags_bag_reads_and_replays(python: &Path, bag: &Path, args: &[&str]) {
    let (endian, kind, n) = (args[1], args[2], args[3].parse::<usize>().unwrap());
    let mut all = vec![bag.to_str().unwrap()];
    all.extend(args);
    let written: Vec<Value> = serde_json::from_str(&py(python, "write_bag.py", &all)).unwrap();
    let ty = if kind == "pose" {
        TargetType::Pose
    } else {
        TargetType::Point
    };
    let mut got = Vec::new();
    for m in BagReader::open(bag).unwrap() {
        let m = m.unwrap();
        if &*m.topic != ty.topic() {
            continue;
        }
        assert_eq!(&*m.type_name, ty.name());
        let order = m.data[1];
        assert_eq!(order, (endian == "le") as u8, "encapsulation byte order");
        got.push((m.log_time_ns, StampedTarget::decode(ty, &m.data).unwrap()));
    }
    assert_eq!(got.len(), n, "{}", bag.display());
    for ((t, target), w) in got.iter().zip(&written) {
        assert_eq!(*t, w["t"].as_u64().unwrap());
        assert_eq!(target.header.stamp_ns as u64, *t);
        assert_eq!(target.header.frame_id, "base_link");
        let p: Vec<f64> = serde_json::from_value(w["position"].clone()).unwrap();
        assert_eq!(target.position.to_vec(), p, "bit-exact values");
        if kind == "pose" {
            assert_eq!(target.orientation, Some([0.0, 0.0, 0.0, 1.0]));
        }
    }
    let rep = bag.with_extension("json");
    let o = arm_ik(&[
        "replay",
        bag.to_str().unwrap(),
        "--budget-ms",
        "500",
        "--position-only",
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}: {}", bag.display(), text(&o));
    let r = report(&rep);
    assert_eq!(r["messages"], n as u64);
    assert_eq!(r["reached"], n as u64);
    let noise = (n as u64).div_ceil(10);
    assert!(r["other_topic_messages"].as_u64().unwrap() >= noise, "{r}");
}

#[test]
fn bags_written_by_rosbags_read_and_replay_with_exact_counts_and_values() {
    let Some(python) = python() else { return };
    let dir = temp("rosbags_in");
    for storage in ["mcap", "sqlite3"] {
        for endian in ["le", "be"] {
            for kind in ["pose", "point"] {
                let bag = dir.join(format!("{storage}_{endian}_{kind}"));
                rosbags_bag_reads_and_replays(&python, &bag, &[storage, endian, kind, "120"]);
            }
        }
    }
}

/// Compressed bags as `ros2 bag record --compression-mode file|message
/// --compression-format zstd` writes them (file mode: each storage file
/// compressed whole to `.mcap.zstd` / `.db3.zstd`; message mode: each
/// message's data), in both storages, with metadata versions 8 and 9 and
/// split into two storage files; the decompressed sqlite3 copies are
/// deleted once read.
#[test]
fn compressed_and_split_bags_from_rosbags_read_and_replay() {
    let Some(python) = python() else { return };
    let dir = temp("rosbags_compressed");
    for storage in ["mcap", "sqlite3"] {
        for mode in ["file", "message", "none"] {
            for (version, split) in [("8", "1"), ("9", "2")] {
                let bag = dir.join(format!("{storage}_{mode}_v{version}_{split}"));
                let args = [storage, "le", "point", "60", mode, version, split];
                rosbags_bag_reads_and_replays(&python, &bag, &args);
                let yaml = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
                let files: Vec<String> = std::fs::read_dir(&bag)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|f| f != "metadata.yaml")
                    .collect();
                assert_eq!(files.len(), split.parse::<usize>().unwrap(), "{files:?}");
                assert_eq!(
                    files.iter().all(|f| f.ends_with(".zstd")),
                    mode == "file",
                    "{files:?}"
                );
                if mode != "none" {
                    assert!(
                        yaml.contains(&format!("compression_mode: {mode}")),
                        "{yaml}"
                    );
                }
            }
        }
    }
    let leftover = format!("arm_ik_{}_", std::process::id());
    let copies = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with(&leftover)
        })
        .count();
    assert_eq!(
        copies, 0,
        "decompressed copies left in the temporary folder"
    );
}

/// A compression rosbag2 could write but arm_ik does not read names the
/// command that writes an uncompressed copy.
#[test]
fn an_unknown_compression_names_ros2_bag_convert() {
    let dir = temp("lz4");
    let bag = dir.join("bag");
    make_bag(&bag, Storage::Mcap, POINT_STAMPED, |_, _| {});
    let yaml = bag.join("metadata.yaml");
    let meta = std::fs::read_to_string(&yaml).unwrap();
    let meta = meta
        .replace("compression_format: ''", "compression_format: lz4")
        .replace("compression_mode: ''", "compression_mode: FILE");
    assert!(meta.contains("lz4"), "{meta}");
    std::fs::write(&yaml, meta).unwrap();
    let (o, _) = replay_report(&bag, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("'lz4'") && e.contains("ros2 bag convert -i"),
        "{e}"
    );
}

#[test]
fn bags_we_write_read_back_in_rosbags_with_the_same_values() {
    let Some(python) = python() else { return };
    let dir = temp("rosbags_out");
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    for (storage, name, extra) in [
        ("mcap", "mcap_bag", None),
        ("sqlite3", "sqlite_bag", None),
        ("mcap", "big_endian", Some("--big-endian")),
    ] {
        let bag = dir.join(name);
        let mut args = vec!["--storage", storage];
        args.extend(extra);
        let o = make_bag_cli(&scenario, &bag, &args);
        assert!(o.status.success(), "{}", text(&o));
        let ours: Vec<(u64, StampedTarget)> = BagReader::open(&bag)
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (
                    m.log_time_ns,
                    StampedTarget::decode(TargetType::Point, &m.data).unwrap(),
                )
            })
            .collect();
        let theirs = read_back(&python, &bag);
        assert_eq!(ours.len(), 401);
        assert_eq!(theirs.len(), ours.len(), "{name}");
        for ((t, target), v) in ours.iter().zip(&theirs) {
            assert_eq!(v["type"], POINT_STAMPED);
            assert_eq!(v["t"].as_u64().unwrap(), *t);
            assert_eq!(v["stamp"].as_i64().unwrap(), target.header.stamp_ns);
            assert_eq!(v["big_endian"], extra.is_some());
            let p: Vec<f64> = serde_json::from_value(v["position"].clone()).unwrap();
            assert_eq!(p, target.position.to_vec());
        }
    }

    // replay --output: joint states and the targets, folder and bare file.
    for out in ["replayed", "replayed.mcap"] {
        let out = dir.join(out);
        let rep = dir.join("replayed.json");
        let o = arm_ik(&[
            "replay",
            dir.join("mcap_bag").to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
            "--report",
            rep.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let ticks = report(&rep)["ticks"].as_u64().unwrap();
        let ours: Vec<(u64, JointStateMsg)> = BagReader::open(&out)
            .unwrap()
            .filter_map(|m| {
                let m = m.unwrap();
                (&*m.type_name == JOINT_STATE)
                    .then(|| (m.log_time_ns, JointStateMsg::decode(&m.data).unwrap()))
            })
            .collect();
        assert_eq!(ours.len() as u64, ticks);
        let theirs = read_back(&python, &out);
        let js: Vec<&Value> = theirs.iter().filter(|v| v["type"] == JOINT_STATE).collect();
        assert_eq!(js.len(), ours.len());
        let targets = theirs.iter().filter(|v| {
            let ty = v["type"].as_str().unwrap();
            ty == POSE_STAMPED || ty == POINT_STAMPED
        });
        assert_eq!(targets.count(), 401, "the targets are in the output too");
        for ((t, m), v) in ours.iter().zip(js) {
            assert_eq!(v["t"].as_u64().unwrap(), *t);
            let name: Vec<String> = serde_json::from_value(v["name"].clone()).unwrap();
            let pos: Vec<f64> = serde_json::from_value(v["position"].clone()).unwrap();
            let vel: Vec<f64> = serde_json::from_value(v["velocity"].clone()).unwrap();
            assert_eq!(
                (name, pos, vel),
                (m.name.clone(), m.position.clone(), m.velocity.clone())
            );
            // The arm's five joints, the gripper and its mirror jaw.
            assert_eq!(m.name.len(), 7);
        }
    }
}

fn target(k: u64, position: [f64; 3]) -> (u64, Vec<u8>) {
    let t = 1_000_000_000 + k * 20_000_000;
    let msg = StampedTarget {
        header: Header {
            stamp_ns: t as i64,
            frame_id: "base_link".into(),
        },
        position,
        orientation: None,
    };
    (t, msg.encode(Endian::Little))
}

/// A bag of 50 good targets with `edit` applied, on the topic ik_node
/// takes `type_name` on (/target_pose for any type but PointStamped).
fn make_bag(path: &Path, storage: Storage, type_name: &str, edit: impl Fn(u64, &mut Vec<u8>)) {
    let topic = match TargetType::from_name(type_name) {
        Some(t) => t.topic(),
        None => "/target_pose",
    };
    make_bag_on(path, storage, topic, type_name, edit)
}

fn make_bag_on(
    path: &Path,
    storage: Storage,
    topic: &str,
    type_name: &str,
    edit: impl Fn(u64, &mut Vec<u8>),
) {
    let mut w = BagWriter::create(path, storage).unwrap();
    let id = w.add_topic(topic, type_name).unwrap();
    let other = w
        .add_topic("/camera/info", "sensor_msgs/msg/CameraInfo")
        .unwrap();
    for k in 0..50 {
        let (t, mut data) = target(k, [0.2, -0.02 + 0.001 * k as f64, 0.15]);
        edit(k, &mut data);
        w.write(id, t, &data).unwrap();
        w.write(other, t, &[0, 1, 0, 0]).unwrap();
    }
    w.finish().unwrap();
}

/// `arm_ik replay BAG --report ... EXTRA` and its report. The solve budget
/// is generous: the default 5 ms of wall clock can run out on a loaded
/// machine and count a reachable target unreachable, and these tests are
/// about what replay makes of the bag.
fn replay_report(bag: &Path, extra: &[&str]) -> (Output, Option<Value>) {
    let rep = bag.with_extension("report.json");
    let _ = std::fs::remove_file(&rep);
    let mut args = vec![
        "replay",
        bag.to_str().unwrap(),
        "--budget-ms",
        "500",
        "--report",
        rep.to_str().unwrap(),
    ];
    args.extend(extra);
    let o = arm_ik(&args);
    assert_ne!(o.status.code(), Some(101), "panicked: {}", text(&o));
    let r = rep.is_file().then(|| report(&rep));
    (o, r)
}

#[test]
fn a_good_bag_passes_in_both_storages() {
    let dir = temp("good");
    for storage in [Storage::Mcap, Storage::Sqlite3] {
        let bag = dir.join(storage.identifier());
        make_bag(&bag, storage, POINT_STAMPED, |_, _| {});
        let (o, r) = replay_report(&bag, &[]);
        assert!(o.status.success(), "{}", text(&o));
        let r = r.unwrap();
        assert_eq!(
            (r["messages"].as_u64(), r["reached"].as_u64()),
            (Some(50), Some(50))
        );
        assert_eq!(r["passed"], true);
        assert!(r["failures"].as_array().unwrap().is_empty());
        assert!(String::from_utf8_lossy(&o.stdout).contains("messages/s"));
    }
}

#[test]
fn nan_and_malformed_targets_are_flagged_and_the_rest_replayed() {
    let dir = temp("nan");
    let bag = dir.join("bag.mcap");
    make_bag(&bag, Storage::Mcap, POINT_STAMPED, |k, d| match k {
        // position.y = NaN (x is at byte 4 + 24 aligned to 8: 32; y at 40)
        10 => {
            let n = d.len();
            d[n - 16..n - 8].copy_from_slice(&f64::NAN.to_le_bytes());
        }
        20 => d.truncate(d.len() - 5),
        _ => {}
    });
    let (o, r) = replay_report(&bag, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let r = r.unwrap();
    assert_eq!(r["messages"], 50);
    assert_eq!(r["reached"], 48);
    assert_eq!(r["rejected"], 1);
    assert_eq!(r["rejected_by_reason"]["not_finite"], 1);
    assert_eq!(r["malformed"], 1);
    let f = r["failures"].as_array().unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0]["index"].as_u64(), f[0]["kind"].as_str()),
        (Some(10), Some("rejected"))
    );
    assert_eq!(
        (f[1]["index"].as_u64(), f[1]["kind"].as_str()),
        (Some(20), Some("malformed"))
    );
    assert!(
        f[1]["detail"].as_str().unwrap().contains("ends at byte"),
        "{f:?}"
    );
    // Allowed by threshold: a pass.
    let (o, _) = replay_report(&bag, &["--max-rejected", "2"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn an_unknown_topic_lists_the_topics_there_are() {
    let dir = temp("topic");
    for (name, storage) in [
        ("folder", Storage::Mcap),
        ("bare.mcap", Storage::Mcap),
        ("sq", Storage::Sqlite3),
    ] {
        let bag = dir.join(name);
        make_bag(&bag, storage, POINT_STAMPED, |_, _| {});
        let (o, _) = replay_report(&bag, &["--point-topic", "/goal"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("/goal")
                && e.contains("/target_point (geometry_msgs/msg/PointStamped)")
                && e.contains("/camera/info"),
            "{e}"
        );
    }
}

/// Replay reads targets as ik_node subscribes: PoseStamped on
/// /target_pose, PointStamped on /target_point. Any other type on either
/// is a wrong_type failure (DDS would deliver none of it to the node),
/// whether the bag declares its topics up front or not.
#[test]
fn a_wrong_type_on_either_target_topic_is_flagged_per_message() {
    let dir = temp("type");
    let cases = [
        (
            "imu.mcap",
            "/target_pose",
            "sensor_msgs/msg/Imu",
            "where ik_node takes",
        ),
        (
            "imu",
            "/target_point",
            "sensor_msgs/msg/Imu",
            "where ik_node takes",
        ),
        // make-bag's old layout: points on the pose topic.
        (
            "points_on_pose",
            "/target_pose",
            POINT_STAMPED,
            "PointStamped targets go on /target_point",
        ),
        (
            "poses_on_point.mcap",
            "/target_point",
            POSE_STAMPED,
            "PoseStamped targets go on /target_pose",
        ),
    ];
    for (name, topic, type_name, hint) in cases {
        let bag = dir.join(name);
        make_bag_on(&bag, Storage::Mcap, topic, type_name, |_, _| {});
        let (o, r) = replay_report(&bag, &[]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o));
        let r = r.unwrap();
        assert_eq!(
            (r["messages"].as_u64(), r["wrong_type"].as_u64()),
            (Some(50), Some(50)),
            "{name}"
        );
        assert_eq!(r["failures"][0]["kind"], "wrong_type");
        let detail = r["failures"][0]["detail"].as_str().unwrap();
        assert!(
            detail.contains(topic) && detail.contains(hint),
            "{name}: {detail}"
        );
    }
    // Remapped, the points-on-pose bag replays.
    let (o, r) = replay_report(
        &dir.join("points_on_pose"),
        &["--point-topic", "/target_pose", "--pose-topic", "/unused"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(r.unwrap()["reached"], 50);
    let (o, _) = replay_report(&dir.join("imu"), &["--point-topic", "/target_pose"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("a topic carries one type"),
        "{}",
        text(&o)
    );
}

/// make-bag writes each target type on the topic ik_node takes it on, and
/// replay reads both topics of one bag.
#[test]
fn make_bag_puts_points_and_poses_where_ik_node_takes_them() {
    let dir = temp("make_bag_topics");
    let poses = dir.join("poses.yaml");
    std::fs::write(
        &poses,
        "waypoints:\n  - {time: 0, position: [0.2, 0, 0.15], orientation: [0, 0, 0, 1]}\n  - {time: 1, position: [0.2, 0.05, 0.15], orientation: [0, 0, 0, 1]}\n",
    )
    .unwrap();
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    for (yaml, topic, ty) in [
        (&scenario, "/target_point", POINT_STAMPED),
        (&poses, "/target_pose", POSE_STAMPED),
    ] {
        let bag = dir.join(topic.trim_start_matches('/'));
        let o = make_bag_cli(yaml, &bag, &[]);
        assert!(o.status.success(), "{}", text(&o));
        let topics = BagReader::open(&bag).unwrap().declared_topics().unwrap();
        assert_eq!(topics.len(), 1);
        assert_eq!(
            (topics[0].name.as_str(), topics[0].type_name.as_str()),
            (topic, ty)
        );
    }
    // Both in one bag: each topic read with its own type.
    let both = dir.join("both.mcap");
    let mut w = BagWriter::create(&both, Storage::Mcap).unwrap();
    let pose = w.add_topic("/target_pose", POSE_STAMPED).unwrap();
    let point = w.add_topic("/target_point", POINT_STAMPED).unwrap();
    for k in 0..20u64 {
        let (t, data) = target(k, [0.2, 0.0, 0.15]);
        if k % 2 == 0 {
            w.write(point, t, &data).unwrap();
        } else {
            let mut m = StampedTarget::decode(TargetType::Point, &data).unwrap();
            m.orientation = Some([0.0, 0.0, 0.0, 1.0]);
            w.write(pose, t, &m.encode(Endian::Little)).unwrap();
        }
    }
    w.finish().unwrap();
    let (o, r) = replay_report(&both, &["--position-only"]);
    assert!(o.status.success(), "{}", text(&o));
    let r = r.unwrap();
    assert_eq!(
        (r["pose_messages"].as_u64(), r["point_messages"].as_u64()),
        (Some(10), Some(10))
    );
    assert_eq!(r["wrong_type"], 0);
}

#[test]
fn a_truncated_or_corrupt_bag_is_an_error_after_replaying_what_is_readable() {
    let dir = temp("corrupt");
    let bag = dir.join("big.mcap");
    let mut w = BagWriter::create(&bag, Storage::Mcap).unwrap();
    let id = w.add_topic("/target_point", POINT_STAMPED).unwrap();
    for k in 0..20_000 {
        let (t, data) = target(k, [0.2, 0.0, 0.15]);
        w.write(id, t, &data).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&bag).unwrap();
    let cut = dir.join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let (o, r) = replay_report(&cut, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = r.expect("the report is written even when the bag is cut");
    let n = r["messages"].as_u64().unwrap();
    assert!(n > 0 && n < 20_000, "{n}");
    assert!(r["bag_error"].as_str().unwrap().contains("cut.mcap"), "{r}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("cut.mcap"));

    // Garbage with the right extension, and a sqlite3 file cut short.
    let junk = dir.join("junk.db3");
    std::fs::write(&junk, b"SQLite format 3\0this is not a database at all").unwrap();
    let sq = dir.join("sq");
    make_bag(&sq, Storage::Sqlite3, POINT_STAMPED, |_, _| {});
    let db = sq.join("sq_0.db3");
    let b = std::fs::read(&db).unwrap();
    std::fs::write(&db, &b[..b.len() / 2]).unwrap();
    let mcap_junk = dir.join("junk.mcap");
    std::fs::write(&mcap_junk, b"\x89MCAP0\r\n garbage").unwrap();
    for p in [&junk, &sq, &mcap_junk, &dir.join("missing.mcap")] {
        let (o, _) = replay_report(p, &[]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(p.file_name().unwrap().to_str().unwrap()), "{e}");
    }
}

#[test]
fn an_unreachable_target_fails_the_replay() {
    let dir = temp("unreachable");
    let bag = dir.join("bag");
    let mut w = BagWriter::create(&bag, Storage::Mcap).unwrap();
    let id = w.add_topic("/target_pose", POSE_STAMPED).unwrap();
    for k in 0..10u64 {
        let far = if k == 5 { 3.0 } else { 0.2 };
        let (t, _) = target(k, [0.0; 3]);
        let m = StampedTarget {
            header: Header {
                stamp_ns: t as i64,
                frame_id: String::new(),
            },
            position: [far, 0.0, 0.15],
            orientation: Some([0.0, 0.0, 0.0, 1.0]),
        };
        w.write(id, t, &m.encode(Endian::Big)).unwrap();
    }
    w.finish().unwrap();
    let junit = dir.join("j.xml");
    let plot = dir.join("p.svg");
    let (o, r) = replay_report(
        &bag,
        &[
            "--position-only",
            "--junit",
            junit.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let r = r.unwrap();
    assert_eq!(r["unreachable"], 1);
    assert_eq!(r["failures"][0]["index"], 5);
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(
        x.contains(r#"<testcase name="reachable" classname="arm_ik.replay">"#),
        "{x}"
    );
    assert!(x.contains("message 5 at"), "{x}");
    assert!(
        std::fs::read_to_string(&plot)
            .unwrap()
            .contains("<polyline")
    );
    let (o, _) = replay_report(&bag, &["--position-only", "--max-unreachable", "1"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// `arm_ik make-bag SCENARIO --output OUT EXTRA...`.
fn make_bag_cli(scenario: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "make-bag",
        scenario.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    arm_ik(&args)
}

/// Every file under `path` with its bytes, to see that nothing changed.
fn snapshot(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            v.extend(snapshot(&e.unwrap().path()));
        }
        v.sort();
    } else {
        v.push((path.to_path_buf(), std::fs::read(path).unwrap()));
    }
    v
}

/// `replay rec.mcap --output rec.mcap` truncated the recording while
/// reading it. No output (bag, report, JUnit, plot) may be a file of the
/// bag being read, by any path, nor go inside its folder, even with
/// --overwrite; the bag stays byte for byte as it was.
#[test]
fn no_output_may_touch_the_bag_being_read() {
    let dir = temp("outputs_vs_input");
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    let bag = dir.join("rec.mcap");
    let folder = dir.join("rec");
    for out in [&bag, &folder] {
        let o = make_bag_cli(&scenario, out, &["--repeat", "100"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    std::os::unix::fs::symlink(&bag, dir.join("link.mcap")).unwrap();
    std::fs::hard_link(&bag, dir.join("hard.mcap")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    let before = (snapshot(&bag), snapshot(&folder));
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let cases: Vec<(PathBuf, Vec<String>)> = vec![
        (bag.clone(), vec!["--output".into(), p("rec.mcap")]),
        (
            bag.clone(),
            vec!["--output".into(), p("link.mcap"), "--overwrite".into()],
        ),
        (
            bag.clone(),
            vec!["--output".into(), p("hard.mcap"), "--overwrite".into()],
        ),
        (bag.clone(), vec!["--report".into(), p("hard.mcap")]),
        (bag.clone(), vec!["--junit".into(), p("sub/../rec.mcap")]),
        (bag.clone(), vec!["--plot".into(), p("link.mcap")]),
        (
            folder.clone(),
            vec!["--output".into(), p("rec"), "--overwrite".into()],
        ),
        (folder.clone(), vec!["--output".into(), p("rec/out.mcap")]),
        (
            folder.clone(),
            vec!["--report".into(), p("rec/metadata.yaml")],
        ),
        (folder.clone(), vec!["--plot".into(), p("rec/rec_0.mcap")]),
    ];
    for (input, args) in &cases {
        let mut all = vec!["replay", input.to_str().unwrap()];
        all.extend(args.iter().map(String::as_str));
        let o = arm_ik(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("the bag being read"), "{args:?}: {e}");
    }
    assert!(
        before == (snapshot(&bag), snapshot(&folder)),
        "the input changed"
    );
    let names = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(names, 5, "no temporary files left beside the bags");
}

/// make-bag's output over its own scenario is refused, calling the file
/// what it is (it was "the bag being read").
#[test]
fn make_bag_over_its_scenario_names_the_scenario() {
    let dir = common::TempDir::new("bag-over-scenario");
    let sc = dir.path().join("sc.yaml");
    std::fs::copy(common::project_dir().join("tests/data/scenario.yaml"), &sc).unwrap();
    let before = std::fs::read(&sc).unwrap();
    let s = sc.to_str().unwrap();
    let o = arm_ik(&["make-bag", s, "--output", s, "--overwrite"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("is the scenario being read"), "{e}");
    assert!(!e.contains("bag being read"), "{e}");
    assert_eq!(std::fs::read(&sc).unwrap(), before);
}

/// Like `ros2 bag record`, an existing output (bag folder or .mcap file) is
/// refused unless --overwrite, in make-bag and replay alike; a replaced
/// folder keeps none of the old bag's files, and a folder that is not a
/// bag is never replaced. Reports are replaced without asking.
#[test]
fn an_existing_output_is_replaced_only_with_overwrite() {
    let dir = temp("overwrite");
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    let make = |out: &Path, extra: &[&str]| make_bag_cli(&scenario, out, extra);
    let out = dir.join("out");
    assert!(make(&out, &[]).status.success());
    let first = snapshot(&out);
    let o = make(&out, &["--storage", "sqlite3"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("already exists; give --overwrite"),
        "{}",
        text(&o)
    );
    assert!(
        first == snapshot(&out),
        "a refused output changed the old one"
    );
    let o = make(&out, &["--storage", "sqlite3", "--overwrite"]);
    assert!(o.status.success(), "{}", text(&o));
    let files: Vec<PathBuf> = snapshot(&out).into_iter().map(|(p, _)| p).collect();
    assert_eq!(files, [out.join("metadata.yaml"), out.join("out_0.db3")]);

    let mine = dir.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep me").unwrap();
    let o = make(&mine, &["--overwrite"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not a bag"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
        "keep me"
    );

    let replayed = dir.join("replayed.mcap");
    let report = dir.join("report.json");
    let replay = |extra: &[&str]| {
        let mut args = vec![
            "replay",
            out.to_str().unwrap(),
            "--output",
            replayed.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ];
        args.extend(extra);
        arm_ik(&args)
    };
    assert!(replay(&[]).status.success());
    let o = replay(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("replayed.mcap: already exists"),
        "{}",
        text(&o)
    );
    assert!(replay(&["--overwrite"]).status.success());
    assert!(BagReader::open(&replayed).unwrap().count() > 401);
}

/// A make-bag killed while writing leaves the old bag as it was (and no
/// half-written new one in its place): the new bag is written under a
/// temporary name and renamed in only when complete.
#[test]
fn an_interrupted_make_bag_leaves_the_old_output() {
    let dir = temp("interrupted");
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    let out = dir.join("out.mcap");
    let o = make_bag_cli(&scenario, &out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let old = std::fs::read(&out).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_arm_ik"))
        .args(["make-bag", scenario.to_str().unwrap(), "--output"])
        .arg(&out)
        .args(["--overwrite", "--repeat", "12000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the new bag is being written.
    let started = std::time::Instant::now();
    let writing = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| {
                e.file_name().to_string_lossy().contains(".tmp-")
                    && e.metadata().unwrap().len() > 100_000
            })
    };
    while !writing() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the new bag never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "make-bag ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(std::fs::read(&out).unwrap() == old, "the old bag changed");
    assert_eq!(BagReader::open(&out).unwrap().count(), 401);
}

/// A scenario at `rate_hz: 1e9` once wrote 856 MB in 20 s. Rates above
/// 1000 Hz and more than 5 000 000 messages are refused, before anything
/// is written, unless --force.
#[test]
fn make_bag_refuses_huge_rates_and_counts_without_force() {
    let dir = temp("huge");
    let scenario = |rate: &str| {
        let p = dir.join(format!("rate_{rate}.yaml"));
        std::fs::write(
            &p,
            format!("rate_hz: {rate}\nwaypoints:\n  - {{time: 0, position: [0.2, 0, 0.15]}}\n  - {{time: 1, position: [0.2, 0.05, 0.15]}}\n"),
        )
        .unwrap();
        p
    };
    let out = dir.join("out");
    let make = |yaml: &Path, extra: &[&str]| make_bag_cli(yaml, &out, extra);
    for (yaml, extra, needle) in [
        (
            scenario("1e9"),
            &[][..],
            "rate_hz 1000000000 is above 1000 Hz",
        ),
        (scenario("2000"), &[], "rate_hz 2000 is above 1000 Hz"),
        (scenario("50"), &["--repeat", "100000"], "5100000 messages"),
    ] {
        let o = make(&yaml, extra);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(needle) && e.contains("--force"), "{e}");
        assert!(!out.exists(), "nothing is written");
    }
    let o = make(&scenario("2000"), &["--force"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(BagReader::open(&out).unwrap().count(), 2001);
}

/// A make-bag that takes more than a second shows its progress on a
/// terminal (here a pty from `script`); a short one, or one whose stderr
/// is not a terminal, prints nothing there.
#[test]
fn a_long_make_bag_shows_progress_on_a_terminal() {
    use std::io::Read;
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIP: no `script` to run make-bag on a pty");
        return;
    }
    let dir = temp("progress");
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    let out = dir.join("long.mcap");
    let cmd = format!(
        "{} make-bag {} --output {} --repeat 12000",
        env!("CARGO_BIN_EXE_arm_ik"),
        scenario.display(),
        out.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read the terminal until a progress line shows (or the run ends).
    let mut shown = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&shown).contains(" messages ") {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => shown.extend_from_slice(&buf[..n]),
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let shown = String::from_utf8_lossy(&shown);
    assert!(
        shown.contains("% ") && shown.contains(" messages "),
        "{shown}"
    );
    let short = dir.join("short.mcap");
    let o = make_bag_cli(&scenario, &short, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(o.stderr.is_empty(), "{}", text(&o));
}

/// The arm starts at its zero pose, 0.33 m from the scenario's first
/// target: that start-up move is reported apart from the steady state,
/// which is what --max-tracking-error checks (it failed every replay that
/// started away from its target, whatever the limit).
#[test]
fn steady_state_tracking_is_reported_apart_from_the_start_up_move() {
    let dir = temp("steady");
    let bag = dir.join("square.mcap");
    let scenario = common::project_dir().join("tests/data/scenario.yaml");
    let o = make_bag_cli(&scenario, &bag, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let (o, r) = replay_report(&bag, &["--max-tracking-error", "0.005"]);
    assert!(o.status.success(), "{}", text(&o));
    let r = r.unwrap();
    assert!(r["max_tracking_error_m"].as_f64().unwrap() > 0.3, "{r}");
    assert!(r["start_up_tracking_error_m"]["max"].as_f64().unwrap() > 0.3);
    let steady = &r["steady_tracking_error_m"];
    assert!(steady["max"].as_f64().unwrap() < 0.005, "{steady}");
    assert!(steady["count"].as_u64().unwrap() > 300, "{steady}");
    let caught_up = r["caught_up_s"].as_f64().unwrap();
    assert!((0.5..2.0).contains(&caught_up), "{caught_up}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("steady state max 0.00"), "{table}");
    assert!(table.contains("start-up move"), "{table}");
    // A limit the steady state breaks still fails.
    let (o, _) = replay_report(&bag, &["--max-tracking-error", "0.0005"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// A bag recorded while another played back (`ros2 bag play --clock` into
/// the node, `ros2 bag record` beside it), written by `rosbags`: receive
/// times 95 795 202 s after the header stamps, which keep the first
/// recording's clock. On the receive clock every target is stale; replay
/// says the stamps sit a constant offset away and names `--clock stamps`,
/// which replays them. With the recorded `/clock`, replay takes it as the
/// node's clock by itself. (Such a bag's targets were all refused as
/// stale, with advice for the live node only.) 101 targets, all within
/// the arm's reach.
#[test]
fn a_bag_recorded_from_a_played_back_bag_replays_on_its_own_clock() {
    let Some(python) = python() else { return };
    let dir = temp("rerecorded");
    let replay = |bag: &Path, extra: &[&str]| {
        let rep = dir.join("report.json");
        let mut args = vec!["replay", bag.to_str().unwrap(), "--budget-ms", "500"];
        args.extend(["--position-only", "--report", rep.to_str().unwrap()]);
        args.extend(extra);
        let o = arm_ik(&args);
        (o, report(&rep))
    };
    let offset = "stamp_offset=95795202";
    let plain = dir.join("plain");
    py(
        &python,
        "write_bag.py",
        &[
            plain.to_str().unwrap(),
            "mcap",
            "le",
            "point",
            "101",
            offset,
        ],
    );
    let (o, r) = replay(&plain, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(r["rejected_by_reason"]["stale"], 101, "{r}");
    assert_eq!(r["clock"], "receive");
    let note = r["clock_note"]
        .as_str()
        .unwrap_or_else(|| panic!("no note: {r}"));
    assert!(
        note.contains("95795202 s behind") && note.contains("--clock stamps"),
        "{note}"
    );
    assert!(text(&o).contains("--clock stamps"), "{}", text(&o));
    let (o, r) = replay(&plain, &["--clock", "stamps"]);
    assert_eq!(r["rejected"], 0, "{r}");
    assert_eq!(r["reached"], 101, "{}", text(&o));
    assert!(o.status.success(), "{}", text(&o));
    let clocked = dir.join("clocked");
    let args = [
        clocked.to_str().unwrap(),
        "sqlite3",
        "le",
        "point",
        "101",
        offset,
        "clock=1",
    ];
    py(&python, "write_bag.py", &args);
    let (o, r) = replay(&clocked, &[]);
    assert_eq!(r["clock"], "clock_topic", "{r}");
    assert_eq!(r["reached"], 101, "{}", text(&o));
    assert!(o.status.success(), "{}", text(&o));
    // Forcing the receive clock brings the staleness back.
    let (_, r) = replay(&clocked, &["--clock", "receive"]);
    assert_eq!(r["rejected_by_reason"]["stale"], 101, "{r}");
}
