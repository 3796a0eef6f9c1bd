//! The small dense linear algebra of one damped least-squares step, on
//! row-major slices sized once per chain (no allocation per step).

use crate::model::Frames;
use nalgebra::Vector3;

/// `A = Jᵀ W J` (row-major `n × n`) and `g = Jᵀ W e` with `W` the squared
/// weights; `e` is already weighted once. `roll`: a pointing target's tool
/// axis (base frame), the turn about which the task leaves free: the
/// angular rows are projected across it (`(I - r rᵀ) ω`), so a joint
/// that only rolls the tool about it is self-motion: `A` less the
/// rank-one `wo² p pᵀ`, `pᵢ = ωᵢ · r`, a pass of its own so that the
/// 6D and position steps run the loop they always did. `g` needs no
/// projection: the pointing error is already across the axis.
pub(super) fn normal_equations(
    frames: &Frames,
    (wp, wo): (f64, f64),
    e: &[f64; 6],
    roll: Option<&Vector3<f64>>,
    a: &mut [f64],
    g: &mut [f64],
) {
    let cols = &frames.columns;
    let n = cols.len();
    for i in 0..n {
        let ci = &cols[i];
        g[i] = wp * (ci.linear.x * e[0] + ci.linear.y * e[1] + ci.linear.z * e[2])
            + wo * (ci.angular.x * e[3] + ci.angular.y * e[4] + ci.angular.z * e[5]);
        for j in i..n {
            let cj = &cols[j];
            let v = wp * wp * ci.linear.dot(&cj.linear) + wo * wo * ci.angular.dot(&cj.angular);
            a[i * n + j] = v;
            a[j * n + i] = v;
        }
    }
    if let Some(r) = roll {
        for i in 0..n {
            let pi = wo * cols[i].angular.dot(r);
            for j in i..n {
                let v = pi * wo * cols[j].angular.dot(r);
                a[i * n + j] -= v;
                if j != i {
                    a[j * n + i] -= v;
                }
            }
        }
    }
}

/// A Cholesky factor of `A + λI` over the active joints, and the solves
/// that reuse it.
#[derive(Debug, Clone)]
pub(super) struct Factor {
    n: usize,
    /// Lower triangle, row-major.
    l: Vec<f64>,
    /// `1 / l[j][j]`: substitution multiplies instead of dividing.
    inv_diag: Vec<f64>,
}

impl Factor {
    pub(super) fn new(n: usize) -> Factor {
        Factor {
            n,
            l: vec![0.0; n * n],
            inv_diag: vec![0.0; n],
        }
    }

    /// Factors `A + λI` over the active joints; inactive joints get an
    /// identity row so their step is 0. Returns false when the matrix is
    /// not positive definite (the caller raises the damping).
    pub(super) fn factor(&mut self, a: &[f64], active: &[bool], lambda: f64) -> bool {
        let n = self.n;
        // Row by row (Cholesky-Banachiewicz): row i needs the rows above it,
        // finished, and its own first entries.
        for i in 0..n {
            let (above, rest) = self.l.split_at_mut(i * n);
            let row = &mut rest[..n];
            for j in 0..i {
                let aij = if active[i] && active[j] {
                    a[i * n + j]
                } else {
                    0.0
                };
                row[j] = (aij - dot(&row[..j], &above[j * n..j * n + j])) * self.inv_diag[j];
            }
            let aii = if active[i] {
                a[i * n + i] + lambda
            } else {
                1.0
            };
            let d = aii - dot(&row[..i], &row[..i]);
            if d <= 0.0 || !d.is_finite() {
                return false;
            }
            let d = d.sqrt();
            row[i] = d;
            self.inv_diag[i] = 1.0 / d;
        }
        true
    }

    /// Solves `L Lᵀ x = b` (inactive entries of `b` read as 0).
    pub(super) fn substitute(&self, b: &[f64], active: &[bool], x: &mut [f64]) {
        let (n, l) = (self.n, &self.l);
        for i in 0..n {
            let row = &l[i * n..i * n + i];
            let mut s = if active[i] { b[i] } else { 0.0 };
            for (lik, xk) in row.iter().zip(&x[..i]) {
                s -= lik * xk;
            }
            x[i] = s * self.inv_diag[i];
        }
        for i in (0..n).rev() {
            let mut s = x[i];
            for k in i + 1..n {
                s -= l[k * n + i] * x[k];
            }
            x[i] = s * self.inv_diag[i];
        }
    }
}

fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// `y = A x` for the row-major `n × n` matrix `a`.
pub(super) fn mul(a: &[f64], x: &[f64], y: &mut [f64]) {
    let n = x.len();
    for (i, yi) in y.iter_mut().enumerate() {
        *yi = a[i * n..(i + 1) * n]
            .iter()
            .zip(x)
            .map(|(aij, xj)| aij * xj)
            .sum();
    }
}
