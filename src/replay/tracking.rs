//! The tracking error in two parts: the start-up move, while the arm
//! travels from wherever it started to its first target, and the steady
//! state after it has caught up. The start-up move's error is as large as
//! the distance the arm starts from, which says nothing about how well it
//! follows; the steady state is what a user wants to know.

use crate::node::NodeStatus;
use crate::node::status::RunningStats;

/// Splits a stream of per-tick tracking errors where the arm catches up
/// (replay's report and `arm_ik run`'s summary both split it so).
///
/// The arm has caught up when its tip first comes within the arrival
/// distance of its target, or stops closing in on it (after falling, the
/// error falls by less than a tenth of the arrival distance in a tick): a
/// moving target is followed with a lag the arm never makes up, and that
/// lag belongs to the steady state.
#[derive(Debug, Clone)]
pub struct CatchUp {
    arrival_m: f64,
    previous: Option<f64>,
    closing_in: bool,
    /// Simulated time (s) the arm caught up.
    pub caught_up_s: Option<f64>,
    pub start_up: RunningStats,
    pub steady: RunningStats,
    /// Errors the node core had measured at the last observation.
    seen: u64,
}

impl CatchUp {
    pub fn new(arrival_m: f64) -> CatchUp {
        CatchUp {
            arrival_m,
            previous: None,
            closing_in: false,
            caught_up_s: None,
            start_up: RunningStats::default(),
            steady: RunningStats::default(),
            seen: 0,
        }
    }

    /// Records the node's tracking error after its tick at simulated time
    /// `t`, if the core measured one in that tick (it only does while it
    /// has a target).
    pub fn observe(&mut self, t: f64, status: &NodeStatus) {
        if status.tracking.count > self.seen {
            self.seen = status.tracking.count;
            self.record(t, status.tracking_error);
        }
    }

    /// One tick's error at simulated time `t` (s), while the arm has a
    /// target.
    pub fn record(&mut self, t: f64, error: f64) {
        if self.caught_up_s.is_none() {
            let stopped = self.closing_in
                && self
                    .previous
                    .is_some_and(|p| p - error < self.arrival_m / 10.0);
            if error <= self.arrival_m || stopped {
                self.caught_up_s = Some(t);
            } else {
                self.closing_in |= self.previous.is_some_and(|p| error < p);
                self.previous = Some(error);
                self.start_up.record(error);
                return;
            }
        }
        self.steady.record(error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approach_is_start_up_and_the_lag_after_it_steady_state() {
        let mut c = CatchUp::new(1e-3);
        // Drifting away at first (the arm accelerating from rest), then
        // closing in, then a constant lag behind a moving target.
        let errors = [0.30, 0.31, 0.2, 0.1, 0.01, 0.002, 0.00199, 0.0021, 0.0019];
        for (k, e) in errors.iter().enumerate() {
            c.record(k as f64, *e);
        }
        assert_eq!(c.caught_up_s, Some(6.0));
        assert_eq!(c.start_up.max, 0.31);
        assert_eq!(c.steady.max, 0.0021);
        assert_eq!(c.steady.count, 3);
    }

    #[test]
    fn arriving_ends_the_start_up_and_never_arriving_has_no_steady_state() {
        let mut c = CatchUp::new(1e-3);
        for (k, e) in [0.3, 0.1, 0.0005, 0.0].iter().enumerate() {
            c.record(k as f64, *e);
        }
        assert_eq!(c.caught_up_s, Some(2.0));
        let mut never = CatchUp::new(1e-3);
        for (k, e) in [0.3, 0.2, 0.1].iter().enumerate() {
            never.record(k as f64, *e);
        }
        assert_eq!(never.caught_up_s, None);
        assert_eq!(never.steady.count, 0);
    }
}
