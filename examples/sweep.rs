use arm_ik::ik::*;
use arm_ik::model::Chain;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args[1].clone();
    let cap: u32 = args[2].parse().unwrap();
    let g: f64 = args[3].parse().unwrap();
    let inc: bool = args[4] == "1";
    let restarts = args[5] == "1";
    let urdf = args.get(6).cloned().unwrap_or("arm".into());
    let arm = Chain::from_urdf_file(
        format!("{}/urdf/{urdf}.urdf", env!("CARGO_MANIFEST_DIR")),
        None,
        None,
    )
    .unwrap();
    let mut rng = Rng::new(1);
    let common = Common {
        tolerance: Tolerance {
            position: 1e-4,
            orientation: 1e-3,
        },
        modes: vec![],
    };
    let cfg = if which == "ccd" {
        SolverConfig::Ccd(CcdOptions {
            max_iterations: cap,
            greediness: g,
            incremental: inc,
            restarts,
            ..Default::default()
        })
    } else {
        SolverConfig::Fabrik(FabrikOptions {
            max_iterations: cap,
            restarts,
            ..Default::default()
        })
    };
    let mut s = Solver::new(&arm, cfg, common.clone()).unwrap();
    let (mut ok, mut its, mut reasons) = (0, 0u64, std::collections::BTreeMap::new());
    let n = 400;
    for _ in 0..n {
        let q: Vec<f64> = arm
            .joints
            .iter()
            .map(|j| {
                let (lo, hi) = j.sample_range();
                rng.range(lo, hi)
            })
            .collect();
        let t = Target::position(arm.fk(&q).translation.vector);
        let sol = s.solve(&t, &arm.mid_configuration()).unwrap();
        if sol.status.is_converged() {
            ok += 1
        } else {
            *reasons.entry(format!("{:?}", sol.status)).or_insert(0) += 1;
        }
        its += sol.iterations as u64;
    }
    println!(
        "{which} cap {cap} g {g} inc {inc} restarts {restarts}: {:.2}% mean it {:.1} {:?}",
        ok as f64 * 100.0 / n as f64,
        its as f64 / n as f64,
        reasons
    );
}
