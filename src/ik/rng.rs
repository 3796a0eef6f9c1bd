//! A small deterministic generator for random restarts.
//!
//! Restarts need a few uniform numbers per attempt, reproducible from a
//! seed so that benchmark runs can be compared; SplitMix64 is enough and
//! keeps the solver free of a dependency.

use crate::model::Chain;

#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// A configuration of `chain` drawn uniformly within each joint's
    /// [`sample_range`](crate::model::Joint::sample_range), written into `q`
    /// (one value per joint): random restarts, sampled collision matrices
    /// and the benches all draw them this way.
    pub fn fill_configuration(&mut self, chain: &Chain, q: &mut [f64]) {
        for (x, j) in q.iter_mut().zip(&chain.joints) {
            let (lo, hi) = j.sample_range();
            *x = self.range(lo, hi);
        }
    }

    /// [`Rng::fill_configuration`] into a new vector.
    pub fn configuration(&mut self, chain: &Chain) -> Vec<f64> {
        let mut q = vec![0.0; chain.dof()];
        self.fill_configuration(chain, &mut q);
        q
    }
}
