//! The closed-form answers of one target: up to eight joint vectors.

use super::Turn;

/// One closed-form answer on the ideal model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Branch {
    /// Joint angles as the subproblems give them (not yet wound into the
    /// limits).
    pub q: [f64; 6],
    /// `(sin, cos)` of each angle, as the subproblems found them: whole
    /// turns added to `q` leave them, so the check on the real chain uses
    /// them ([`Chain::fk_trig`](crate::model::Chain::fk_trig)).
    pub trig: [(f64, f64); 6],
    /// Every subproblem met exactly; false when one of them fell back to
    /// its least-squares answer (the target is out of reach).
    pub exact: bool,
}

/// Up to eight branches, without allocating.
#[derive(Debug, Clone, Copy, Default)]
pub struct Branches {
    items: [Branch; 8],
    len: usize,
}

impl Branches {
    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn push(&mut self, turns: [Turn; 6], exact: bool) {
        if self.len < self.items.len() {
            self.items[self.len] = Branch {
                q: turns.map(|t| t.angle),
                trig: turns.map(|t| (t.sin, t.cos)),
                exact,
            };
            self.len += 1;
        }
    }

    pub fn as_slice(&self) -> &[Branch] {
        &self.items[..self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [Branch] {
        &mut self.items[..self.len]
    }
}
