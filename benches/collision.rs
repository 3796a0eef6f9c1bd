//! Criterion benchmarks of the collision check (issue 21's goals, README
//! "Benchmarks"): the full check the solvers and the node's guard ask
//! (`clear_of`: every checked pair, the arm itself, the floor and a box,
//! keeps the margin), the distance query the jog slows down by
//! (`nearest_within`: does anything come closer than it is now, asked
//! within the slow-down zone) and the full distance query the node's
//! status reports every tick (`nearest`: the closest pair and its signed
//! distance, however far).
//!
//! ```text
//! cargo bench --bench collision                     # full run
//! cargo bench --bench collision -- --test           # each bench once
//! ```
//!
//! The check and the full distance cycle through 100 random configurations
//! within the limits that keep the margin (a check that passes, the
//! common case and the one MoveIt's figures are for: every pair is looked
//! at); the jog's query along 100 short paths through the slow-down zone
//! (closer than the margin plus [`SLOW_ZONE`], where the jog asks it),
//! tick after tick as the jog asks it (see [`zone_paths`]). Robots: the
//! project arm (boxes, a cylinder, capsules for its two links without
//! geometry) and SO-101 (six moving links of convex mesh hulls) when
//! `../shared/robots/so101.urdf` and its meshes (example-robot-data in
//! `.venv`, installed by `scripts/python-env`) are there.

use arm_ik::collision::{self, CollisionOptions, World};
use arm_ik::ik::Rng;
use arm_ik::model::Chain;
use arm_ik::node::guard::SLOW_ZONE;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Configurations each bench cycles through.
const ROTATION: usize = 100;

/// A table at the base's bottom and a box beside the arm.
const WORKSPACE: &str = "floor_z: 0.0\nobstacles:\n  - name: box\n    shape: box\n    size: [0.08, 0.08, 0.1]\n    position: [0.0, -0.22, 0.05]\n";

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The meshes' share folder of example-robot-data in `.venv`, if installed.
fn mesh_share() -> Option<PathBuf> {
    let lib = project().join(".venv/lib");
    std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/cmeel.prefix/share"))
        .find(|p| p.join("example-robot-data").is_dir())
}

fn shared() -> PathBuf {
    match std::env::var_os("ARM_IK_SHARED") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => project().join("../shared"),
    }
}

/// The robots to measure: name, chain and world.
fn robots() -> Vec<(&'static str, Chain, World)> {
    let workspace =
        std::env::temp_dir().join(format!("arm_ik-bench-ws-{}.yaml", std::process::id()));
    std::fs::write(&workspace, WORKSPACE).expect("a temporary file");
    let options = CollisionOptions {
        workspace: Some(workspace.clone()),
        ..CollisionOptions::default()
    };
    let mut out = Vec::new();
    let arm = Chain::from_urdf_file(project().join("urdf/arm.urdf"), None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let world = collision::build(&arm, &options).unwrap_or_else(|e| panic!("{e}"));
    out.push(("arm", arm, world));
    let so101 = shared().join("robots/so101.urdf");
    match (so101.is_file(), mesh_share()) {
        (true, Some(share)) => {
            let chain =
                Chain::from_urdf_file(&so101, Some("base_link"), Some("gripper_frame_link"))
                    .unwrap_or_else(|e| panic!("{e}"));
            let options = CollisionOptions {
                mesh_path: vec![share],
                ..options
            };
            let world = collision::build(&chain, &options).unwrap_or_else(|e| panic!("{e}"));
            out.push(("so101", chain, world));
        }
        _ => eprintln!(
            "note: {} or its meshes (scripts/python-env) not there, skipping so101",
            so101.display()
        ),
    }
    let _ = std::fs::remove_file(workspace);
    out
}

/// [`ROTATION`] random configurations within the limits whose closest
/// pair is between `near` and `far` apart (m).
fn configurations(chain: &Chain, world: &mut World, near: f64, far: f64) -> Vec<Vec<f64>> {
    let mut rng = Rng::new(21);
    let mut out = Vec::new();
    while out.len() < ROTATION {
        let q = rng.configuration(chain);
        let d = world.nearest(&q).distance;
        if d >= near && d < far {
            out.push(q);
        }
    }
    out
}

/// Ticks of each path through the slow-down zone.
const TICKS: usize = 20;

/// The jog's queries: 100 short paths, each from a random configuration
/// inside the slow-down zone, [`TICKS`] ticks in a random direction at
/// most 2 mrad per joint a tick (0.1 rad/s at 50 Hz); at each tick the
/// configuration and the distance at the tick before, which the query
/// asks whether anything comes closer than.
fn zone_paths(chain: &Chain, world: &mut World) -> (Vec<Vec<f64>>, Vec<f64>) {
    let margin = world.margin();
    let starts = configurations(chain, world, margin, margin + SLOW_ZONE);
    let mut rng = Rng::new(22);
    let (mut path, mut now) = (Vec::new(), Vec::new());
    for start in starts {
        let step: Vec<f64> = start.iter().map(|_| rng.range(-0.002, 0.002)).collect();
        let mut q = start;
        let mut before = world.nearest(&q).distance;
        for _ in 0..TICKS {
            q = q.iter().zip(&step).map(|(a, s)| a + s).collect();
            path.push(q.clone());
            now.push(before);
            before = world.nearest(&q).distance;
        }
    }
    (path, now)
}

fn check(c: &mut Criterion) {
    for (name, chain, mut world) in robots() {
        let margin = world.margin();
        let qs = configurations(&chain, &mut world, margin, f64::INFINITY);
        let mut i = 0;
        c.bench_function(&format!("collision/check/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % qs.len();
                black_box(world.clear_of(black_box(&qs[i]), margin, None).is_ok())
            })
        });
        let (path, now) = zone_paths(&chain, &mut world);
        let mut i = 0;
        c.bench_function(&format!("collision/jog_distance/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % path.len();
                black_box(world.nearest_within(black_box(&path[i]), now[i]).distance)
            })
        });
        let mut i = 0;
        c.bench_function(&format!("collision/distance/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % qs.len();
                black_box(world.nearest(black_box(&qs[i])).distance)
            })
        });
    }
}

criterion_group!(benches, check);
criterion_main!(benches);
