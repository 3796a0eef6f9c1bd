//! The chain's structure as the closed form sees it: which joints are
//! parallel or perpendicular, the link lengths in the limb plane, and the
//! approach direction the wrist pitch refers to.

use super::AXIS_TOLERANCE;
use crate::ik::IkError;
use crate::model::{Chain, Frames, Transform};
use nalgebra::{Vector2, Vector3};

/// Which joints follow the hip-knee (shoulder-elbow) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Three joints: yaw/roll, hip, knee (a leg or an arm's base).
    HipKnee,
    /// Plus a wrist pitch parallel to the knee.
    WristPitch,
    /// Plus a wrist pitch and a wrist roll.
    WristPitchRoll,
}

/// The closed-form geometry of a chain the analytic solver fits, measured
/// at the zero configuration in the base frame. Build it with
/// [`HipKnee::measure`].
#[derive(Debug, Clone)]
pub struct HipKnee {
    pub layout: Layout,
    /// Names of the moving joints, in chain order.
    pub joints: Vec<String>,
    /// Constant distance (m) of the limb plane from joint 1's origin along
    /// the parallel axes, at zero roll.
    pub lateral_offset: f64,
    /// Lengths (m) of the two links in the plane: hip to knee, knee to foot
    /// (or to the wrist pitch axis).
    pub links: (f64, f64),
    /// Largest deviation (rad) from the ideal parallel/perpendicular axes.
    pub deviation: f64,
    /// The joint whose axis deviates the most.
    pub deviation_joint: String,
    pub(super) dof: usize,
    /// Joint 1: a point on the axis and the unit axis ("up" for the pitch).
    pub(super) p1: Vector3<f64>,
    pub(super) u: Vector3<f64>,
    /// Unit axis of joint 2; joints 3 and 4 turn about `s3 * a`, `s4 * a`.
    pub(super) a: Vector3<f64>,
    pub(super) s3: f64,
    pub(super) s4: f64,
    /// Orthonormal basis of the plane normal to `a`, with `e2 = a × e1`, so
    /// that a positive turn about `a` is a positive planar angle.
    pub(super) e1: Vector3<f64>,
    pub(super) e2: Vector3<f64>,
    /// A point on joint 2's axis, and the end of the two-link problem:
    /// joint 4's axis, or the tip for three joints.
    pub(super) p2: Vector3<f64>,
    pub(super) end: Vector3<f64>,
    /// Tip position at zero.
    pub(super) tip: Vector3<f64>,
    /// Wrist roll: a point on its axis and the unit axis.
    pub(super) roll: Option<(Vector3<f64>, Vector3<f64>)>,
    /// +1 when the approach direction is the roll axis, -1 when opposite.
    pub(super) s5: f64,
    /// The two links as planar vectors at zero, and the angle from the
    /// first to the second.
    pub(super) u1: Vector2<f64>,
    pub(super) u2: Vector2<f64>,
    pub(super) beta: f64,
    /// Approach direction and a direction normal to it, in the tip frame.
    pub(super) approach_tool: Vector3<f64>,
    pub(super) side_tool: Vector3<f64>,
    /// Approach pitch at zero.
    pub(super) pitch0: f64,
}

/// Rotates `v` by `angle` about the unit `axis` (Rodrigues).
#[inline]
pub(super) fn rotate(axis: &Vector3<f64>, angle: f64, v: &Vector3<f64>) -> Vector3<f64> {
    let (s, c) = angle.sin_cos();
    v * c + axis.cross(v) * s + axis * (axis.dot(v) * (1.0 - c))
}

#[inline]
pub(super) fn cross2(a: &Vector2<f64>, b: &Vector2<f64>) -> f64 {
    a.x * b.y - a.y * b.x
}

#[inline]
pub(super) fn rotate2(angle: f64, v: &Vector2<f64>) -> Vector2<f64> {
    let (s, c) = angle.sin_cos();
    Vector2::new(c * v.x - s * v.y, s * v.x + c * v.y)
}

fn unsupported(why: String) -> IkError {
    IkError::Unsupported {
        solver: "analytic",
        why,
    }
}

/// Angle (rad) between two lines with unit directions `x` and `y`
/// (0 when parallel or antiparallel).
fn line_angle(x: &Vector3<f64>, y: &Vector3<f64>) -> f64 {
    x.cross(y).norm().atan2(x.dot(y).abs())
}

/// Deviation (rad) of two unit directions from perpendicular.
fn perpendicular_deviation(x: &Vector3<f64>, y: &Vector3<f64>) -> f64 {
    x.dot(y).clamp(-1.0, 1.0).asin().abs()
}

impl HipKnee {
    /// Checks whether the analytic solver fits `chain` and measures its
    /// geometry. The error says exactly why not (which joint, which angle, by
    /// how much), for `arm_ik check`.
    pub fn measure(chain: &Chain) -> Result<HipKnee, IkError> {
        check_joints(chain)?;
        let z = ZeroPose::new(chain);
        let n = chain.dof();
        let (p, axis) = (|i| z.origin(i), |i| z.axis(i));
        let (u, a) = (axis(0), axis(1));
        let deviation = check_axes(&z)?;
        let e1 = (u - a * a.dot(&u)).normalize();
        let e2 = a.cross(&e1);
        let PlanarLinks { u1, u2, end } = planar_links(&z, &e1, &e2)?;
        let approach = approach_direction(&z, &e1, &e2)?;
        let tip = z.tip.translation.vector;
        let forward = a.cross(&u);
        let inv = z.tip.rotation.inverse();
        let sign_along = |i: usize, v: &Vector3<f64>| {
            if n > i { axis(i).dot(v).signum() } else { 1.0 }
        };
        Ok(HipKnee {
            layout: match n {
                3 => Layout::HipKnee,
                4 => Layout::WristPitch,
                _ => Layout::WristPitchRoll,
            },
            joints: chain.joints.iter().map(|j| j.name.clone()).collect(),
            lateral_offset: (tip - p(0)).dot(&a),
            links: (u1.norm(), u2.norm()),
            deviation: deviation.0,
            deviation_joint: deviation.1,
            dof: n,
            p1: p(0),
            u,
            a,
            s3: sign_along(2, &a),
            s4: sign_along(3, &a),
            e1,
            e2,
            p2: p(1),
            end,
            tip,
            roll: (n == 5).then(|| (p(4), axis(4))),
            s5: sign_along(4, &approach),
            u1,
            u2,
            beta: cross2(&u1, &u2).atan2(u1.dot(&u2)),
            approach_tool: inv * approach,
            side_tool: inv * a,
            pitch0: approach.dot(&u).atan2(approach.dot(&forward)),
        })
    }
}

/// The chain at its zero configuration, where the structure is read.
struct ZeroPose<'a> {
    chain: &'a Chain,
    frames: Frames,
    tip: Transform,
}

impl<'a> ZeroPose<'a> {
    fn new(chain: &'a Chain) -> ZeroPose<'a> {
        let mut frames = Frames::new(chain);
        let tip = chain.joint_frames(&vec![0.0; chain.dof()], &mut frames);
        ZeroPose { chain, frames, tip }
    }

    fn origin(&self, i: usize) -> Vector3<f64> {
        self.frames.origins[i].coords
    }

    fn axis(&self, i: usize) -> Vector3<f64> {
        self.frames.axes[i].normalize()
    }

    fn name(&self, i: usize) -> &str {
        &self.chain.joints[i].name
    }

    fn dof(&self) -> usize {
        self.chain.dof()
    }
}

/// Three to five joints, all rotating.
fn check_joints(chain: &Chain) -> Result<(), IkError> {
    let n = chain.dof();
    if !(3..=5).contains(&n) {
        return Err(unsupported(format!(
            "the chain has {n} moving joints ({}); the analytic solver needs 3 (yaw/roll, hip, knee), \
             4 (+ wrist pitch) or 5 (+ wrist pitch and roll)",
            chain.joint_names().join(", ")
        )));
    }
    if let Some(j) = chain.joints.iter().find(|j| !j.kind.rotates()) {
        return Err(unsupported(format!(
            "joint '{}' is {}; every joint must rotate",
            j.name,
            j.kind.name()
        )));
    }
    Ok(())
}

/// Checks every axis against the ideal structure (within
/// [`AXIS_TOLERANCE`]); returns the largest deviation and its joint.
fn check_axes(z: &ZeroPose) -> Result<(f64, String), IkError> {
    let a = z.axis(1);
    // (joint, its deviation, what it should be)
    let mut checks = vec![
        (
            1,
            perpendicular_deviation(&z.axis(0), &a),
            format!("is not perpendicular to '{}'", z.name(0)),
        ),
        (
            2,
            line_angle(&a, &z.axis(2)),
            format!("is not parallel to '{}'", z.name(1)),
        ),
    ];
    if z.dof() >= 4 {
        let what = format!("(wrist pitch) is not parallel to '{}'", z.name(1));
        checks.push((3, line_angle(&a, &z.axis(3)), what));
    }
    if z.dof() == 5 {
        let what = format!("(wrist roll) is not perpendicular to '{}'", z.name(1));
        checks.push((4, perpendicular_deviation(&a, &z.axis(4)), what));
    }
    let mut deviation = (0.0, String::new());
    for (i, dev, what) in checks {
        if dev > AXIS_TOLERANCE {
            return Err(unsupported(format!(
                "the axis of '{}' {what}: off by {dev:.3e} rad (tolerance {AXIS_TOLERANCE:.0e})",
                z.name(i)
            )));
        }
        if dev >= deviation.0 {
            deviation = (dev, z.name(i).to_owned());
        }
    }
    Ok(deviation)
}

/// The two links of the planar problem as vectors in the limb plane
/// (`e1`, `e2`), and the end of the second (the wrist pitch axis, or the
/// tip for three joints). Either being (near) zero long is an error.
fn planar_links(
    z: &ZeroPose,
    e1: &Vector3<f64>,
    e2: &Vector3<f64>,
) -> Result<PlanarLinks, IkError> {
    let planar = |v: Vector3<f64>| Vector2::new(v.dot(e1), v.dot(e2));
    let wrist = z.dof() >= 4;
    let end = if wrist {
        z.origin(3)
    } else {
        z.tip.translation.vector
    };
    let (u1, u2) = (planar(z.origin(2) - z.origin(1)), planar(end - z.origin(2)));
    let end_name = if wrist { z.name(3) } else { "tip" };
    for (len, from, to) in [
        (u1.norm(), z.name(1), z.name(2)),
        (u2.norm(), z.name(2), end_name),
    ] {
        if len < 1e-9 {
            return Err(unsupported(format!(
                "the link from '{from}' to '{to}' has length {len:.3e} m in the plane of '{}': \
                 no triangle to solve",
                z.name(1)
            )));
        }
    }
    Ok(PlanarLinks { u1, u2, end })
}

/// The two links of the planar problem (see [`planar_links`]).
struct PlanarLinks {
    u1: Vector2<f64>,
    u2: Vector2<f64>,
    end: Vector3<f64>,
}

/// The approach direction at zero: the roll axis pointing away from the
/// wrist, or the direction from the last planar joint to the tip.
fn approach_direction(
    z: &ZeroPose,
    e1: &Vector3<f64>,
    e2: &Vector3<f64>,
) -> Result<Vector3<f64>, IkError> {
    let n = z.dof();
    let tip = z.tip.translation.vector;
    if n == 5 {
        let r = z.axis(4);
        return Ok(if r.dot(&(tip - z.origin(4))) < 0.0 {
            -r
        } else {
            r
        });
    }
    let d = tip - z.origin(n - 1);
    let v = Vector2::new(d.dot(e1), d.dot(e2));
    if v.norm() < 1e-9 {
        return Err(unsupported(format!(
            "the tip lies on the axis of '{}': the approach pitch is undefined",
            z.name(n - 1)
        )));
    }
    Ok((e1 * v.x + e2 * v.y).normalize())
}

impl std::fmt::Display for HipKnee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.layout {
            Layout::HipKnee => "hip-knee",
            Layout::WristPitch => "hip-knee + wrist pitch",
            Layout::WristPitchRoll => "hip-knee + wrist pitch + wrist roll",
        };
        write!(
            f,
            "analytic solver applies: {what} ({}); links {:.4} m and {:.4} m, lateral offset {:.4} m, \
             largest axis deviation {:.1e} rad ('{}')",
            self.joints.join(", "),
            self.links.0,
            self.links.1,
            self.lateral_offset,
            self.deviation,
            self.deviation_joint
        )
    }
}

/// The approach pitch of configuration `q` (rad, in `(-pi, pi]`), the angle
/// the solver's pitch refers to.
///
/// The approach axis is the wrist roll axis pointing away from the wrist
/// (5 joints), or the direction from the last planar joint to the tip in the
/// limb plane (3 or 4 joints). Its pitch is its angle above the plane normal
/// to joint 1's axis, measured in the limb plane from the "forward"
/// direction `a × u` (`a`: joint 2's axis at `q`, `u`: joint 1's axis as the
/// URDF orients it, i.e. "up") towards `u`. On the project arm (yaw about z,
/// shoulder about y) pitch 0 points the tool forward horizontally, pi/2
/// straight up, -pi/2 straight down. Ideally it equals
/// `pitch(0) - (q2 + q3 + q4)` with each joint signed along joint 2's axis.
pub fn approach_pitch(chain: &Chain, q: &[f64]) -> Result<f64, IkError> {
    Ok(HipKnee::measure(chain)?.approach_pitch(chain, q))
}

impl HipKnee {
    pub fn dof(&self) -> usize {
        self.dof
    }

    /// [`approach_pitch`] with the geometry already measured.
    pub fn approach_pitch(&self, chain: &Chain, q: &[f64]) -> f64 {
        self.pitch_of(&chain.fk(q), q[0])
    }

    /// The approach pitch of tip pose `tip` when joint 1 is at `q1`.
    pub(super) fn pitch_of(&self, tip: &Transform, q1: f64) -> f64 {
        let app = tip.rotation * self.approach_tool;
        self.pitch_of_direction(&app, q1)
    }

    pub(super) fn pitch_of_direction(&self, app: &Vector3<f64>, q1: f64) -> f64 {
        let forward = rotate(&self.u, q1, &self.a).cross(&self.u);
        app.dot(&self.u).atan2(app.dot(&forward))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rodrigues_quarter_turn() {
        let v = rotate(&Vector3::z(), std::f64::consts::FRAC_PI_2, &Vector3::x());
        assert!((v - Vector3::y()).norm() < 1e-15);
    }
}
