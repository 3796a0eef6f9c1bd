//! Criterion benchmarks: forward kinematics, the Jacobian, and every solver
//! on the project's own target sets (`benches/targets/*.json`).
//!
//! ```text
//! cargo bench --bench kinematics                       # full run
//! cargo bench --bench kinematics -- --warm-up-time 0.2 --measurement-time 0.5
//! cargo bench --bench kinematics -- --test             # each bench once
//! cargo bench --bench kinematics -- solve/jacobian     # a filter
//! ```
//!
//! UR5 and Panda FK/Jacobian run too when `../shared` (or `$ARM_IK_SHARED`)
//! holds the shared robots; otherwise they are skipped with a note.
//!
//! Solver benches cycle through the first [`ROTATION`] samples of a set,
//! one per iteration, always from the set's `mid` seed (the protocol's
//! start), so a figure is the mean time per query over that fixed set,
//! failed queries (which run to the solver's budget) included.

use arm_ik::bench::{TargetSet, sample_target};
use arm_ik::ik::{
    AnalyticOptions, Common, GeoOptions, Pick, Solver, SolverConfig, SolverKind, Target,
    approach_pitch,
};
use arm_ik::model::{Chain, Frames};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Samples each solver bench cycles through.
const ROTATION: usize = 100;

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str) -> (TargetSet, Chain) {
    let path = project().join("benches/targets").join(name);
    let set = TargetSet::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let chain = Chain::from_urdf_file(set.urdf_path(), Some(&set.base_link), Some(&set.tip_link))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (set, chain)
}

/// The shared target sets (for their chains) when present.
fn shared(name: &str) -> Option<(TargetSet, Chain)> {
    let dir = match std::env::var_os("ARM_IK_SHARED") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => project().join("../shared"),
    };
    let path = dir.join("targets").join(format!("{name}.json"));
    let loaded = TargetSet::load(&path).ok().and_then(|set| {
        let chain =
            Chain::from_urdf_file(set.urdf_path(), Some(&set.base_link), Some(&set.tip_link))
                .ok()?;
        Some((set, chain))
    });
    if loaded.is_none() {
        eprintln!("note: {} not usable, skipping {name}", path.display());
    }
    loaded
}

/// Configurations to evaluate FK and the Jacobian at: the set's samples.
fn configurations(set: &TargetSet) -> Vec<Vec<f64>> {
    set.samples
        .iter()
        .take(ROTATION)
        .map(|s| s.q.clone())
        .collect()
}

fn model(c: &mut Criterion) {
    let mut arms = vec![("arm".to_owned(), load("arm.json"))];
    for name in ["ur5", "panda"] {
        if let Some(loaded) = shared(name) {
            arms.push((name.to_owned(), loaded));
        }
    }
    let mut fk = c.benchmark_group("fk");
    for (name, (set, chain)) in &arms {
        let qs = configurations(set);
        let mut i = 0;
        fk.bench_function(name.as_str(), |b| {
            b.iter(|| {
                i = (i + 1) % qs.len();
                chain.fk(black_box(&qs[i]))
            })
        });
    }
    fk.finish();
    let mut jac = c.benchmark_group("jacobian");
    for (name, (set, chain)) in &arms {
        let qs = configurations(set);
        let mut frames = Frames::new(chain);
        let mut i = 0;
        jac.bench_function(name.as_str(), |b| {
            b.iter(|| {
                i = (i + 1) % qs.len();
                chain.jacobian(black_box(&qs[i]), &mut frames);
                black_box(&frames.columns);
            })
        });
    }
    jac.finish();
}

/// One solver bench: `solvers[i % len]` solves `targets[i]`; `solvers` has
/// one entry unless the options depend on the sample.
fn bench_solve(c: &mut Criterion, id: &str, mut solvers: Vec<Solver>, set: &TargetSet) {
    let targets: Vec<Target> = set
        .samples
        .iter()
        .take(ROTATION)
        .map(|s| sample_target(s, set.orientation_mode()))
        .collect();
    let seed = set.seed("mid").expect("every set has a mid seed").to_vec();
    let mut i = 0;
    c.bench_function(id, |b| {
        b.iter(|| {
            i = (i + 1) % targets.len();
            let k = i % solvers.len();
            solvers[k].solve(black_box(&targets[i]), black_box(&seed))
        })
    });
}

fn solver(chain: &Chain, config: SolverConfig) -> Solver {
    Solver::new(chain, config, Common::default()).expect("the solver fits the chain")
}

fn solvers(c: &mut Criterion) {
    let (arm, arm_chain) = load("arm.json");
    let (arm_pos, arm_pos_chain) = load("arm_position.json");
    let (leg, leg_chain) = load("leg.json");
    let default = |kind| SolverConfig::default_for(kind);

    let jac = |ch: &Chain| vec![solver(ch, default(SolverKind::Jacobian))];
    bench_solve(c, "solve/jacobian/arm_6d", jac(&arm_chain), &arm);
    bench_solve(
        c,
        "solve/jacobian/arm_position",
        jac(&arm_pos_chain),
        &arm_pos,
    );

    let analytic_default = vec![solver(&arm_chain, default(SolverKind::Analytic))];
    bench_solve(c, "solve/analytic/arm_6d", analytic_default, &arm);
    // Position-only with an approach pitch: each target with the pitch of
    // the configuration that produced it, so every query is reachable.
    let pitched = arm_pos
        .samples
        .iter()
        .take(ROTATION)
        .map(|s| {
            let pitch = approach_pitch(&arm_pos_chain, &s.q).expect("arm fits");
            let options = AnalyticOptions {
                pitch: Some(pitch),
                ..Default::default()
            };
            solver(&arm_pos_chain, SolverConfig::Analytic(options))
        })
        .collect();
    bench_solve(c, "solve/analytic/arm_pitch", pitched, &arm_pos);
    let leg_solver = vec![solver(&leg_chain, default(SolverKind::Analytic))];
    bench_solve(c, "solve/analytic/leg", leg_solver, &leg);

    for kind in [SolverKind::Ccd, SolverKind::Fabrik] {
        let id = format!("solve/{kind}/arm_position");
        bench_solve(
            c,
            &id,
            vec![solver(&arm_pos_chain, default(kind))],
            &arm_pos,
        );
    }
}

/// The geo solver (closed form, every branch) on the PUMA 560 and, when
/// the shared data is there, the UR5: one pick (first in limits, closest)
/// and the whole list.
fn geo(c: &mut Criterion) {
    let mut sets = vec![("puma560", load("puma560.json"))];
    if let Some(ur5) = shared("ur5") {
        sets.push(("ur5", ur5));
    }
    for (name, (set, chain)) in &sets {
        for (mode, pick) in [("first", Pick::First), ("closest", Pick::Closest)] {
            let config = SolverConfig::Geo(GeoOptions { pick });
            bench_solve(
                c,
                &format!("solve/geo/{name}_{mode}"),
                vec![solver(chain, config)],
                set,
            );
        }
        let mut all = solver(chain, SolverConfig::default_for(SolverKind::Geo));
        let targets: Vec<Target> = set
            .samples
            .iter()
            .take(ROTATION)
            .map(|s| sample_target(s, arm_ik::ik::OrientationMode::Full))
            .collect();
        let seed = set.seed("mid").expect("every set has a mid seed").to_vec();
        let mut i = 0;
        c.bench_function(&format!("solve_all/geo/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % targets.len();
                all.solve_all(black_box(&targets[i]), black_box(&seed))
            })
        });
    }
}

/// What a budget check costs on each clock: `Instant::now` (the wall
/// clock, a vDSO call) and the thread's CPU time (`clock_gettime` of
/// `CLOCK_THREAD_CPUTIME_ID`, a system call on most kernels), which is
/// why `ik::Deadline` reads the latter only once the wall budget is spent.
fn clocks(c: &mut Criterion) {
    c.bench_function("clock/wall", |b| {
        b.iter(|| black_box(std::time::Instant::now()))
    });
    c.bench_function("clock/thread_cpu", |b| {
        b.iter(|| black_box(arm_ik::bench::thread_cpu_time()))
    });
}

criterion_group!(benches, model, solvers, geo, clocks);
criterion_main!(benches);
