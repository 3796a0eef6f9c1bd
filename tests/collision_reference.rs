//! The collision check beside an independent one: for 10,000 random
//! configurations of the project arm (with a table, a box and a can) and of
//! SO-101 (its STL meshes from the PyPI package example-robot-data), the
//! smallest distance between the checked pairs as arm_ik measures it and
//! as FCL (MoveIt's checker, python-fcl) measures it on the convex hulls
//! trimesh makes of the same meshes (tests/python/collision_reference.py,
//! which certifies each FCL distance between hulls and falls back to the
//! exact distance between their triangles). They agree: arm_ik is never
//! farther than FCL and nearer by no more than its simplified hulls'
//! rounding (at most a millimetre each, two in a pair); where one says "in
//! collision" and the other not, FCL's distance is within that rounding,
//! so well within the margin.
//!
//! SO-101 needs `../shared/robots/so101.urdf` (a conformance test: skipped
//! outside CI when absent, required in CI) and `.venv` from
//! `scripts/python-env` (python-fcl, trimesh, example-robot-data).

#![cfg(feature = "app")]

mod common;

use arm_ik::collision::simplify::TOLERANCE;
use arm_ik::collision::solid::Solid;
use arm_ik::collision::{self, CollisionOptions, Owner, World, mesh};
use arm_ik::ik::Rng;
use arm_ik::model::{Chain, Geometry};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIGURATIONS: usize = 10_000;
/// The distances' agreement where both are exact (m): GJK's accuracy in
/// FCL and parry.
const GJK: f64 = 2e-5;
/// How much nearer than the reference arm_ik may measure a pair (m): each
/// simplified hull is at most [`TOLERANCE`] larger than the true one.
const ROUNDING: f64 = 2.0 * TOLERANCE + GJK;

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// `.venv`'s python with fcl and trimesh, and example-robot-data's share
/// folder (the meshes' `package://` root).
fn reference() -> Option<(PathBuf, PathBuf)> {
    let venv = common::project_dir().join(".venv");
    let python = venv.join("bin/python");
    let share = std::fs::read_dir(venv.join("lib"))
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("site-packages/cmeel.prefix/share"))
        .find(|p| p.join("example-robot-data").is_dir());
    let imports = python.is_file()
        && Command::new(&python)
            .args(["-c", "import fcl, trimesh"])
            .output()
            .is_ok_and(|o| o.status.success());
    match (imports, share) {
        (true, Some(share)) => Some((python, share)),
        _ if in_ci() => panic!(
            "{} with python-fcl, trimesh and example-robot-data not found (CI is set, so the reference checker is required; run scripts/python-env)",
            python.display()
        ),
        _ => {
            eprintln!(
                "SKIP: no .venv with python-fcl, trimesh and example-robot-data (run scripts/python-env)"
            );
            None
        }
    }
}

/// A 4x4 matrix given column by column (nalgebra's order), row by row.
fn matrix(columns: &[f64]) -> Vec<f64> {
    (0..16).map(|k| columns[(k % 4) * 4 + k / 4]).collect()
}

/// One collision shape as the reference script reads it.
fn shape(g: &Geometry, place: Vec<f64>, chain: &Chain, mesh_path: &[PathBuf]) -> Value {
    match g {
        Geometry::Box { size } => json!({"shape": "box", "size": size, "place": place}),
        Geometry::Sphere { radius } => json!({"shape": "sphere", "radius": radius, "place": place}),
        Geometry::Cylinder { radius, length } => {
            json!({"shape": "cylinder", "radius": radius, "length": length, "place": place})
        }
        Geometry::Capsule { radius, length } => json!({"shape": "capsule", "radius": radius,
            "a": [0.0, 0.0, -length / 2.0], "b": [0.0, 0.0, length / 2.0], "place": place}),
        Geometry::Mesh { filename, scale } => {
            let file = mesh::resolve(filename, chain.body.folder.as_deref(), mesh_path).unwrap();
            json!({"shape": "mesh", "file": file, "scale": scale, "place": place})
        }
    }
}

/// The scene of `world` for the reference: each link's shapes (the URDF's,
/// or the capsules standing in for it), the obstacles, the floor, the
/// checked pairs.
fn scene(world: &World, chain: &Chain, mesh_path: &[PathBuf]) -> Value {
    let body = world.body();
    let links: Vec<Value> = body
        .links
        .iter()
        .enumerate()
        .map(|(l, link)| {
            if link.approximated.is_none() {
                let shapes = chain.body.links[l].collisions.iter().map(|c| {
                    shape(
                        &c.geometry,
                        matrix(c.origin.to_homogeneous().as_slice()),
                        chain,
                        mesh_path,
                    )
                });
                return Value::Array(shapes.collect());
            }
            let parts = link.parts.iter().map(|p| {
                let place = matrix(p.place.to_homogeneous().as_slice());
                match &p.solid {
                    Solid::Capsule(c) => json!({"shape": "capsule", "radius": c.radius,
                        "a": c.segment.a.coords.as_slice(), "b": c.segment.b.coords.as_slice(),
                        "place": place}),
                    Solid::Ball(b) => {
                        json!({"shape": "sphere", "radius": b.radius, "place": place})
                    }
                    other => panic!("link {} approximated by {other:?}", link.name),
                }
            });
            Value::Array(parts.collect())
        })
        .collect();
    let ws = world.workspace();
    let obstacles: Vec<Value> = ws
        .obstacles
        .iter()
        .map(|o| {
            let place = collision::solid::placement(o.position, o.rpy);
            shape(
                &o.geometry,
                matrix(place.to_homogeneous().as_slice()),
                chain,
                mesh_path,
            )
        })
        .collect();
    let frames: Vec<Option<usize>> = ws
        .obstacles
        .iter()
        .map(|o| {
            o.frame
                .as_deref()
                .and_then(|f| body.link(f))
                .filter(|&l| l != body.base())
        })
        .collect();
    let owner = |o: Owner| match o {
        Owner::Link(l) => json!({"link": l, "name": world.name(o)}),
        Owner::Obstacle(k) => json!({"obstacle": k, "name": world.name(o)}),
        Owner::Floor => json!({"floor": true, "name": "floor"}),
    };
    let pairs: Vec<Value> = world
        .checked_pairs()
        .into_iter()
        .map(|(a, b)| json!([owner(a), owner(b)]))
        .collect();
    json!({"links": links, "obstacles": obstacles, "obstacle_frames": frames,
           "floor": world.floor(), "pairs": pairs, "margin": world.margin()})
}

/// Compares arm_ik's smallest distance with the reference's over
/// [`CONFIGURATIONS`] random configurations of `chain`.
fn compare(name: &str, chain: &Chain, options: &CollisionOptions, python: &Path) {
    let mut world = collision::build(chain, options).unwrap();
    let dir = std::env::temp_dir().join(format!("arm_ik-reference-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene_file = dir.join("scene.json");
    std::fs::write(
        &scene_file,
        scene(&world, chain, &options.mesh_path).to_string(),
    )
    .unwrap();
    let mut rng = Rng::new(2021);
    let mut ours = Vec::with_capacity(CONFIGURATIONS);
    let mut poses = Vec::new();
    for _ in 0..CONFIGURATIONS {
        let q = rng.configuration(chain);
        let n = world.nearest(&q);
        ours.push((n.distance, world.describe(&n)));
        for p in world.body().poses() {
            let r = p.rotation.to_rotation_matrix();
            let t = p.translation.vector;
            let rows = r.matrix().transpose();
            for v in rows.iter().chain(t.iter()).copied() {
                poses.write_all(&v.to_le_bytes()).unwrap();
            }
        }
        // The body's placement agrees with the chain's forward kinematics.
        let tip = world.body().link(&chain.tip).unwrap();
        let fk = chain.fk(&q).translation.vector;
        let placed = world.body().poses()[tip].translation.vector;
        let off = (0..3)
            .map(|i| (placed[i] - fk[i]).abs())
            .fold(0.0, f64::max);
        assert!(off < 1e-9, "{name}: {placed} vs {fk}");
    }
    let poses_file = dir.join("poses.bin");
    std::fs::write(&poses_file, poses).unwrap();
    let out_file = dir.join("reference.json");
    let script = common::project_dir().join("tests/python/collision_reference.py");
    let o = Command::new(python)
        .args([&script, &scene_file, &poses_file, &out_file])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let theirs: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(theirs.len(), CONFIGURATIONS);
    let margin = options.margin;
    let (mut both, mut differ, mut nearer) = (0, 0, 0.0_f64);
    for (k, ((d, pair), r)) in ours.iter().zip(&theirs).enumerate() {
        let reference = r["distance"].as_f64().unwrap();
        let what = || {
            format!(
                "{name} configuration {k}: arm_ik {d} ({pair}), FCL {reference} ({})",
                r["pair"]
            )
        };
        if reference >= 0.0 {
            // Never farther than FCL (GJK's accuracy aside), and nearer by
            // no more than the two hulls' rounding.
            assert!(*d <= reference + GJK, "{}", what());
            assert!(*d >= reference - ROUNDING, "{}", what());
            nearer = nearer.max(reference - d);
        }
        match (*d < 0.0, reference < 0.0) {
            (true, true) => both += 1,
            (false, false) => {}
            _ => {
                assert!((0.0..ROUNDING).contains(&reference), "{}", what());
                assert!(ROUNDING < margin);
                differ += 1;
            }
        }
    }
    println!(
        "{name}: {CONFIGURATIONS} configurations, {both} in collision for both, {differ} differ \
         (FCL within {:.0} mm); arm_ik at most {:.2} mm nearer (its hulls' rounding: {:.0} mm each)",
        ROUNDING * 1e3,
        nearer * 1e3,
        TOLERANCE * 1e3
    );
    if std::env::var_os("KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_project_arm_agrees_with_fcl() {
    let Some((python, _)) = reference() else {
        return;
    };
    let chain = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    let dir = common::TempDir::new("reference-ws");
    let ws = dir.join("workspace.yaml");
    std::fs::write(
        &ws,
        "floor_z: 0.0\nobstacles:\n  - {name: box, shape: box, size: [0.08, 0.08, 0.1], position: [0.0, -0.22, 0.05]}\n  - {name: can, shape: cylinder, radius: 0.03, length: 0.12, position: [0.18, 0.12, 0.06], rpy: [0.3, 0, 0]}\n",
    )
    .unwrap();
    let options = CollisionOptions {
        workspace: Some(ws),
        ..CollisionOptions::default()
    };
    compare("arm", &chain, &options, &python);
}

#[test]
fn so101_agrees_with_fcl() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let Some((python, share)) = reference() else {
        return;
    };
    let chain = Chain::from_urdf_file(
        shared.join("robots/so101.urdf"),
        Some("base_link"),
        Some("gripper_frame_link"),
    )
    .unwrap();
    let options = CollisionOptions {
        mesh_path: vec![share],
        ..CollisionOptions::default()
    };
    compare("so101", &chain, &options, &python);
}
