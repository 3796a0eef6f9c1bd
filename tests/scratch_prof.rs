use arm_ik::ik::{AnalyticOptions, Common, Rng, Solver, SolverConfig, Target};
use arm_ik::model::Chain;
use nalgebra::UnitQuaternion;
#[test]
fn prof() {
    for (file, tip) in [("leg.urdf", "foot"), ("arm.urdf", "tool")] {
        let chain = Chain::from_urdf_file(
            format!("{}/urdf/{file}", env!("CARGO_MANIFEST_DIR")),
            None,
            Some(tip),
        )
        .unwrap();
        let mut s = Solver::new(
            &chain,
            SolverConfig::Analytic(AnalyticOptions::default()),
            Common::default(),
        )
        .unwrap();
        let mut rng = Rng::new(1);
        let mid = chain.mid_configuration();
        let mut hist = [0usize; 12];
        let qs: Vec<Vec<f64>> = (0..2000)
            .map(|_| {
                chain
                    .joints
                    .iter()
                    .map(|j| rng.range(j.limits.lower, j.limits.upper))
                    .collect()
            })
            .collect();
        for orient in [false, true] {
            let ts: Vec<Target> = qs
                .iter()
                .map(|q| {
                    let p = chain.fk(q);
                    if orient {
                        Target::pose(
                            p.translation.vector,
                            UnitQuaternion::from_rotation_matrix(&p.rotation),
                        )
                    } else {
                        Target::position(p.translation.vector)
                    }
                })
                .collect();
            let t0 = std::time::Instant::now();
            for t in &ts {
                let sol = s.solve(t, &mid).unwrap();
                hist[sol.iterations as usize] += 1;
            }
            println!(
                "{file} orient {orient}: mean {:.2} us, iterations {:?}",
                t0.elapsed().as_secs_f64() * 1e6 / 2000.0,
                hist
            );
            let t0 = std::time::Instant::now();
            for q in &qs {
                std::hint::black_box(chain.fk(q));
            }
            println!(
                "  fk mean {:.3} us",
                t0.elapsed().as_secs_f64() * 1e6 / 2000.0
            );
        }
    }
}
