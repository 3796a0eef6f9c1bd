//! Steering by hand near an obstacle: the jog and a marker drag slow down
//! as the arm comes within a few centimetres of the margin (MoveIt
//! Servo's collision velocity scaling), stop at the margin, and move away
//! at full speed. Each run is compared with the same input on the same
//! arm without the table, so "full speed" is what the jog does anyway.

#![cfg(feature = "app")]

mod common;

use arm_ik::collision::CollisionOptions;
use arm_ik::model::Chain;
use arm_ik::node::guard::SLOW_ZONE;
use arm_ik::node::{Command, FeedbackEvent, MarkerFeedback, NodeCore, NodeSettings, TwistMsg};

const DT: f64 = 0.02;
/// Where both runs start: the hand above the table, pointing down.
const START: [f64; 5] = [0.0, 0.6, 0.9, 0.6, 0.0];

/// The arm at `start`, with a table at `floor` (YAML `floor_z`).
fn node(name: &str, floor: &str, start: &[f64]) -> NodeCore {
    let dir = std::env::temp_dir().join(format!("arm_ik-steer-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("workspace.yaml");
    std::fs::write(&file, format!("floor_z: {floor}\n")).unwrap();
    let chain = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    let mut settings = NodeSettings {
        collision: CollisionOptions {
            workspace: Some(file),
            ..CollisionOptions::default()
        },
        ..NodeSettings::default()
    };
    settings.motion.rate_hz = 1.0 / DT;
    let (solver, common) = settings.solver_config(&chain).unwrap();
    let mut config = settings.node_config(&chain).unwrap();
    config.initial = Some(start.to_vec());
    let mut core = NodeCore::with_virtual_servos(&chain, solver, common, config).unwrap();
    for k in 0..2 {
        core.tick(k as f64 * DT);
    }
    core
}

fn clearance(core: &NodeCore) -> f64 {
    core.status().collision.as_ref().unwrap().clearance
}

/// Ticks `k0..k1` with `input` before each; returns each tick's tip height
/// and clearance.
fn drive(
    core: &mut NodeCore,
    k0: usize,
    k1: usize,
    mut input: impl FnMut(usize) -> Option<Command>,
) -> Vec<(f64, f64)> {
    (k0..k1)
        .map(|k| {
            if let Some(c) = input(k) {
                core.command(&c, k as f64 * DT).unwrap();
            }
            core.tick(k as f64 * DT);
            (core.tip_pose().translation.vector.z, clearance(core))
        })
        .collect()
}

fn twist(vz: f64) -> Option<Command> {
    Some(Command::Twist(TwistMsg::new(
        "base_link",
        [0.0, 0.0, vz],
        [0.0; 3],
    )))
}

/// Tip speed (m/s) between consecutive ticks.
fn speeds(run: &[(f64, f64)]) -> Vec<f64> {
    run.windows(2)
        .map(|w| (w[1].0 - w[0].0).abs() / DT)
        .collect()
}

#[test]
fn a_jog_toward_the_table_slows_down_stops_at_the_margin_and_backs_away_at_full_speed() {
    let margin = CollisionOptions::default().margin;
    let mut table = node("jog-table", "0.0", &START);
    let mut free = node("jog-free", "off", &START);
    let down = drive(&mut table, 2, 400, |_| twist(-0.05));
    let open = drive(&mut free, 2, 400, |_| twist(-0.05));
    let (v, v_free) = (speeds(&down), speeds(&open));
    for (i, (&(_, d), (&s, &s_free))) in down[1..].iter().zip(v.iter().zip(&v_free)).enumerate() {
        assert!(d >= margin - 1e-9, "tick {i}: {d} m from the table");
        if d > margin + SLOW_ZONE + 0.005 {
            // Far from the table, the jog is the jog.
            assert!(
                (s - s_free).abs() < 1e-9,
                "tick {i}: {s} m/s, free {s_free}"
            );
        } else if d < margin + SLOW_ZONE / 3.0 && s_free > 0.04 {
            // Within a centimetre of the margin: at most half speed.
            assert!(
                s < 0.5 * s_free,
                "tick {i}: {s} m/s at {d} m, free {s_free}"
            );
        }
    }
    let slowed = down
        .iter()
        .zip(&v)
        .any(|(&(_, d), &s)| d < margin + SLOW_ZONE / 3.0 && s > 1e-4);
    assert!(slowed, "it never moved slowly near the table");
    let last = down.last().unwrap().1;
    assert!(last < margin + 0.002, "stopped {last} m from the table");
    // Back up from where it stopped: exactly as fast as without the table.
    drive(&mut table, 400, 450, |_| None);
    assert!(table.motion().is_settled());
    let mut free = node("jog-back", "off", &table.motion().position()[..5]);
    let up = drive(&mut table, 450, 510, |_| twist(0.05));
    let up_free = drive(&mut free, 2, 62, |_| twist(0.05));
    for (i, (a, b)) in speeds(&up).iter().zip(speeds(&up_free)).enumerate() {
        assert!((a - b).abs() < 1e-6, "tick {i}: {a} m/s up, free {b}");
    }
    assert!(up.last().unwrap().0 > up[0].0 + 0.02);
}

#[test]
fn a_drag_below_the_table_slows_down_and_stops_at_the_margin() {
    let margin = CollisionOptions::default().margin;
    let mut core = node("drag", "0.0", &START);
    let tip = core.tip_pose();
    let q = nalgebra::UnitQuaternion::from_rotation_matrix(&tip.rotation);
    let orientation = [q.i, q.j, q.k, q.w];
    let p = tip.translation.vector;
    let feedback = |event, z: f64| {
        Some(Command::MarkerFeedback(MarkerFeedback::new(
            event,
            [p.x, p.y, z],
            orientation,
        )))
    };
    // Grabbed, pulled 3 mm a tick straight down to 5 cm below the table.
    let steps = ((p.z + 0.05) / 0.003) as usize;
    let run = drive(&mut core, 2, 400, |k| match k {
        2 => feedback(FeedbackEvent::MouseDown, p.z),
        k if k < 3 + steps => feedback(FeedbackEvent::PoseUpdate, p.z - 0.003 * (k - 2) as f64),
        _ => None,
    });
    let v = speeds(&run);
    assert!(run.iter().all(|&(_, d)| d >= margin - 1e-9), "{run:?}");
    let fastest = v.iter().copied().fold(0.0, f64::max);
    for (&(_, d), &s) in run[1..].iter().zip(&v) {
        if d < margin + SLOW_ZONE / 3.0 {
            assert!(s < 0.5 * fastest, "{s} m/s at {d} m (fastest {fastest})");
        }
    }
    let last = run.last().unwrap().1;
    assert!(last < margin + 0.002, "stopped {last} m from the table");
}
