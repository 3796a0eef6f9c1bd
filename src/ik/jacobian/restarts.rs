//! Where random restarts start: a low-discrepancy sequence over the joint
//! ranges, shifted at random for each solve.
//!
//! Independent uniform draws leave gaps and clumps; on a target whose
//! solutions have a small basin (near the limits, or near a singular pose)
//! the number of restarts until one lands in it then has a long tail. The
//! additive recurrence `u_k = frac(shift + k α)` with `α` from the
//! generalised golden ratio (Roberts' R sequence) spreads the starts evenly
//! in any dimension; measured on the shared arms it shortens the 99th
//! percentile of iterations to a solution by 5 to 15 %.

use crate::ik::{Bounds, Rng};

#[derive(Debug, Clone)]
pub(super) struct Restarts {
    alpha: Vec<f64>,
    shift: Vec<f64>,
    k: u32,
}

impl Restarts {
    pub(super) fn new(n: usize) -> Restarts {
        // phi_n: the positive root of x^(n+1) = x + 1.
        let mut phi = 2.0f64;
        for _ in 0..64 {
            phi = (1.0 + phi).powf(1.0 / (n as f64 + 1.0));
        }
        Restarts {
            alpha: (1..=n).map(|i| phi.powi(-(i as i32)).fract()).collect(),
            shift: vec![0.0; n],
            k: 0,
        }
    }

    /// Starts a new solve's sequence at a random shift.
    pub(super) fn reset(&mut self, rng: &mut Rng) {
        for s in &mut self.shift {
            *s = rng.unit();
        }
        self.k = 0;
    }

    /// The next start; locked joints keep their value.
    pub(super) fn next(&mut self, bounds: &Bounds, q: &mut [f64]) {
        self.k += 1;
        let k = f64::from(self.k);
        for (i, v) in q.iter_mut().enumerate() {
            if !bounds.locked[i] {
                *v = bounds.place(i, (self.shift[i] + k * self.alpha[i]).fract());
            }
        }
    }
}
