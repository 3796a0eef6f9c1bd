//! Which closed form fits a 6R chain, read from the URDF at the zero
//! configuration: the axes and a point on each, in the base frame, and the
//! tests (within stated tolerances) that decide the family.

use super::{INTERSECTION_TOLERANCE, Sp3, Sp4, rot};
use crate::ik::IkError;
use crate::ik::analytic::AXIS_TOLERANCE;
use crate::ik::geometry::perpendicular;
use crate::model::{Chain, Frames};
use nalgebra::{Matrix3, Vector3};
use std::fmt::Write as _;

/// The arm families solved in closed form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Joints 2, 3 and 4 parallel, axes 5 and 6 intersecting (UR-like):
    /// joint 1 and joint 5 by subproblem 4, joint 6 by subproblem 1, the
    /// planar three-link by subproblems 3 and 1. Up to 8 solutions.
    ThreeParallel,
    /// Axes 4, 5 and 6 meet in one point (a spherical wrist) and axes 1
    /// and 2 intersect: the wrist centre by subproblems 3 and 2, the wrist
    /// by 4 and 1. Up to 8 solutions.
    SphericalIntersecting,
    /// A spherical wrist and axes 2 and 3 parallel: the wrist centre by
    /// subproblems 4, 3 and 1, the wrist by 4 and 1. Up to 8 solutions.
    SphericalParallel,
}

impl Family {
    pub fn describe(self) -> &'static str {
        match self {
            Family::ThreeParallel => "three parallel axes (2, 3, 4), axes 5 and 6 intersecting",
            Family::SphericalIntersecting => "spherical wrist (4, 5, 6), axes 1 and 2 intersecting",
            Family::SphericalParallel => "spherical wrist (4, 5, 6), axes 2 and 3 parallel",
        }
    }
}

/// The product-of-exponentials model the subproblems solve: the tip pose
/// is `p[0] + R1 p[1] + R1 R2 p[2] + ... + R1..R6 p[6]` and `R1..R6 rm`,
/// `Ri = rot(h[i], qi)`, with the points chosen on the axes so that the
/// family's offsets vanish (a wrist centre, an intersection).
#[derive(Debug, Clone)]
pub struct GeoStructure {
    pub family: Family,
    /// Names of the six joints, in chain order.
    pub joints: Vec<String>,
    /// Largest deviation of the measured axes from the ideal family:
    /// angle (rad) and distance (m).
    pub angle_deviation: f64,
    pub offset_deviation: f64,
    pub(super) h: [Vector3<f64>; 6],
    pub(super) p: [Vector3<f64>; 7],
    pub(super) rm: Matrix3<f64>,
    /// The subproblems whose geometry is fixed, prepared once: the elbow
    /// (joint 3 from the wrist's distance, subproblem 3) and the wrist's
    /// middle joint (joint 5, subproblem 4).
    pub(super) elbow: Sp3,
    pub(super) wrist: Sp4,
    /// A unit vector across the axis whose angle is read last (joint 2's
    /// for three parallel axes, joint 6's for a spherical wrist).
    pub(super) across: Vector3<f64>,
}

/// A target as the families see it ([`GeoStructure::goal`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Goal {
    /// `R1..R6`: the tip's rotation without the fixed `rm`.
    pub r06: Matrix3<f64>,
    /// The wrist point (where the last axes meet) relative to `p[0]`.
    pub w: Vector3<f64>,
}

/// A line: a point on it and its unit direction.
#[derive(Clone, Copy)]
struct Line {
    at: Vector3<f64>,
    dir: Vector3<f64>,
}

/// Angle (rad) between two lines (0 when parallel or antiparallel).
fn line_angle(a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    a.cross(b).norm().atan2(a.dot(b).abs())
}

/// The point nearest all the lines (least squares) and its largest
/// distance from one of them; `None` when they are (near) parallel.
fn common_point(lines: &[Line]) -> Option<(Vector3<f64>, f64)> {
    let mut m = Matrix3::zeros();
    let mut b = Vector3::zeros();
    for l in lines {
        let proj = Matrix3::identity() - l.dir * l.dir.transpose();
        m += proj;
        b += proj * l.at;
    }
    let x = m.try_inverse()? * b;
    let worst = lines
        .iter()
        .map(|l| {
            let d = x - l.at;
            (d - l.dir * l.dir.dot(&d)).norm()
        })
        .fold(0.0, f64::max);
    Some((x, worst))
}

/// The axis at chain index `i`, and where a point on it lands.
struct Axes {
    lines: Vec<Line>,
    names: Vec<String>,
    tip: Vector3<f64>,
    rm: Matrix3<f64>,
}

impl Axes {
    fn read(chain: &Chain) -> Axes {
        let mut frames = Frames::new(chain);
        let tip = chain.joint_frames(&[0.0; 6], &mut frames);
        Axes {
            lines: (0..6)
                .map(|i| Line {
                    at: frames.origins[i].coords,
                    dir: frames.axes[i].normalize(),
                })
                .collect(),
            names: chain.joints.iter().map(|j| j.name.clone()).collect(),
            tip: tip.translation.vector,
            rm: *tip.rotation.matrix(),
        }
    }

    fn dir(&self, i: usize) -> Vector3<f64> {
        self.lines[i].dir
    }

    fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// Checks `i` and `j` parallel (within [`AXIS_TOLERANCE`]); the
    /// failure names both and the angle.
    fn parallel(&self, i: usize, j: usize, dev: &mut Deviation) -> Result<(), String> {
        let a = line_angle(&self.dir(i), &self.dir(j));
        if a > AXIS_TOLERANCE {
            return Err(format!(
                "the axes of '{}' and '{}' are {a:.3e} rad off parallel (tolerance {AXIS_TOLERANCE:.0e} rad)",
                self.name(i),
                self.name(j)
            ));
        }
        dev.angle = dev.angle.max(a);
        Ok(())
    }

    /// Checks `i` and `j` far from parallel (the subproblem that pairs them
    /// would have no unique answer).
    fn skew(&self, i: usize, j: usize) -> Result<(), String> {
        let a = line_angle(&self.dir(i), &self.dir(j));
        if a < NON_PARALLEL {
            return Err(format!(
                "the axes of '{}' and '{}' are parallel ({a:.3e} rad apart); they must not be",
                self.name(i),
                self.name(j)
            ));
        }
        Ok(())
    }

    /// The common point of the axes `ids` (within
    /// [`INTERSECTION_TOLERANCE`]).
    fn meet(&self, ids: &[usize], dev: &mut Deviation) -> Result<Vector3<f64>, String> {
        let lines: Vec<Line> = ids.iter().map(|&i| self.lines[i]).collect();
        let names: Vec<String> = ids.iter().map(|&i| format!("'{}'", self.name(i))).collect();
        let what = names.join(", ");
        match common_point(&lines) {
            Some((x, miss)) if miss <= INTERSECTION_TOLERANCE => {
                dev.offset = dev.offset.max(miss);
                Ok(x)
            }
            Some((_, miss)) => Err(format!(
                "the axes of {what} miss a common point by {miss:.3e} m (tolerance {INTERSECTION_TOLERANCE:.0e} m)"
            )),
            None => Err(format!("the axes of {what} are parallel: no common point")),
        }
    }
}

/// Smallest angle (rad) between axes a subproblem needs apart.
const NON_PARALLEL: f64 = 1e-3;

#[derive(Default)]
struct Deviation {
    angle: f64,
    offset: f64,
}

fn unsupported(why: String) -> IkError {
    IkError::Unsupported { solver: "geo", why }
}

impl GeoStructure {
    /// What every family solves from: the rotation the six joints must
    /// give and the point where the last axes meet, for the tip at `pt`
    /// with rotation `rt`.
    pub(super) fn goal(&self, pt: &Vector3<f64>, rt: &Matrix3<f64>) -> Goal {
        let r06 = rt * self.rm.transpose();
        Goal {
            r06,
            w: pt - self.p[0] - r06 * self.p[6],
        }
    }

    /// Checks whether one of the closed-form families fits `chain` (six
    /// rotating joints) and builds its model. The error names, per
    /// family, the first axis test that fails and by how much, for
    /// `arm_ik check`.
    pub fn measure(chain: &Chain) -> Result<GeoStructure, IkError> {
        if chain.dof() != 6 {
            return Err(unsupported(format!(
                "the chain has {} moving joints; the geo solver needs 6",
                chain.dof()
            )));
        }
        if let Some(j) = chain.joints.iter().find(|j| !j.kind.rotates()) {
            return Err(unsupported(format!(
                "joint '{}' is {}; every joint must rotate",
                j.name,
                j.kind.name()
            )));
        }
        let axes = Axes::read(chain);
        let mut why = String::new();
        for family in [
            Family::ThreeParallel,
            Family::SphericalIntersecting,
            Family::SphericalParallel,
        ] {
            match Self::fit(&axes, family) {
                Ok(s) => return Ok(s),
                Err(e) => {
                    let _ = write!(
                        why,
                        "{}{}: {e}",
                        if why.is_empty() { "" } else { "; " },
                        family.describe()
                    );
                }
            }
        }
        Err(unsupported(format!("no closed form fits: {why}")))
    }

    /// The model of `family` on these axes, or the first test that fails.
    fn fit(axes: &Axes, family: Family) -> Result<GeoStructure, String> {
        let mut dev = Deviation::default();
        let mut o: [Vector3<f64>; 6] = std::array::from_fn(|i| axes.lines[i].at);
        let mut h: [Vector3<f64>; 6] = std::array::from_fn(|i| axes.dir(i));
        match family {
            Family::ThreeParallel => {
                axes.parallel(1, 2, &mut dev)?;
                axes.parallel(1, 3, &mut dev)?;
                axes.skew(0, 1)?;
                axes.skew(1, 4)?;
                axes.skew(4, 5)?;
                let w = axes.meet(&[4, 5], &mut dev)?;
                (o[4], o[5]) = (w, w);
                // The parallel joints turn about one direction (signs kept).
                for i in 2..4 {
                    h[i] = h[1] * h[1].dot(&h[i]).signum();
                }
            }
            Family::SphericalIntersecting | Family::SphericalParallel => {
                axes.skew(3, 4)?;
                axes.skew(4, 5)?;
                let w = axes.meet(&[3, 4, 5], &mut dev)?;
                (o[3], o[4], o[5]) = (w, w, w);
                axes.skew(0, 1)?;
                if family == Family::SphericalIntersecting {
                    let c = axes.meet(&[0, 1], &mut dev)?;
                    (o[0], o[1]) = (c, c);
                } else {
                    axes.parallel(1, 2, &mut dev)?;
                    h[2] = h[1] * h[1].dot(&h[2]).signum();
                }
            }
        }
        let mut p = [Vector3::zeros(); 7];
        p[0] = o[0];
        for i in 1..6 {
            p[i] = o[i] - o[i - 1];
        }
        p[6] = axes.tip - o[5];
        // Joint 5 keeps the tool axis at the right height along the axis
        // that is parallel (UR-like) or that the wrist turns about first.
        let (normal, last) = match family {
            Family::ThreeParallel => (h[1], h[1]),
            _ => (h[3], h[5]),
        };
        Ok(GeoStructure {
            elbow: Sp3::new(&p[3], &(-p[2]), &h[2]),
            wrist: Sp4::new(&normal, &h[5], &h[4]),
            across: perpendicular(&last),
            family,
            joints: axes.names.clone(),
            angle_deviation: dev.angle,
            offset_deviation: dev.offset,
            h,
            p,
            rm: axes.rm,
        })
    }

    /// Forward kinematics of the ideal model (for tests and the polish
    /// decision): tip position and rotation.
    pub fn fk(&self, q: &[f64; 6]) -> (Vector3<f64>, Matrix3<f64>) {
        let mut r = Matrix3::identity();
        let mut x = self.p[0];
        for ((h, &qi), p) in self.h.iter().zip(q).zip(&self.p[1..]) {
            r *= rot(h, qi);
            x += r * p;
        }
        (x, r * self.rm)
    }
}

impl std::fmt::Display for GeoStructure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "geo solver applies: {} ({}); largest deviation {:.1e} rad, {:.1e} m \
             (tolerances {AXIS_TOLERANCE:.0e} rad, {INTERSECTION_TOLERANCE:.0e} m)",
            self.family.describe(),
            self.joints.join(", "),
            self.angle_deviation,
            self.offset_deviation,
        )
    }
}
