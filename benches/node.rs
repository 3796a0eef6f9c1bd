//! Criterion benchmark of the node's latency: a new target in, the tick that
//! solves it, the servo command and joint state out, on the project's arm
//! and virtual servos, along the figure-eight of `arm_ik sim`
//! ([`LatencyProbe`]).
//!
//! ```text
//! cargo bench --bench node                  # full run
//! cargo bench --bench node -- --test        # each bench once
//! ```
//!
//! Criterion reports the mean; `arm_ik latency` reports p50/p99/max of the
//! same path, which is what the p99 <= 1 ms goal (docs/benchmarks.md) is
//! about.

use arm_ik::ik::{Common, SolverConfig, SolverKind};
use arm_ik::model::Chain;
use arm_ik::node::{LatencyProbe, NodeConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

fn arm() -> Chain {
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("urdf/arm.urdf");
    Chain::from_urdf_file(&urdf, None, None).unwrap_or_else(|e| panic!("{e}"))
}

fn latency(c: &mut Criterion) {
    let chain = arm();
    let mut group = c.benchmark_group("node/latency");
    // The analytic solver is the arm's fast path; the Jacobian one is the
    // general one the node's latency goal is measured with.
    for kind in [SolverKind::Jacobian, SolverKind::Analytic] {
        let mut probe = LatencyProbe::new(
            &chain,
            SolverConfig::default_for(kind),
            Common::default(),
            NodeConfig::default(),
            LatencyProbe::DEFAULT_PERIOD,
        )
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
        group.bench_function(kind.name(), |b| {
            // Only the probe's own span counts: target arrival to joint
            // state, not building the next target message.
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| Duration::from_secs_f64(probe.step().joint_state))
                    .sum()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, latency);
criterion_main!(benches);
