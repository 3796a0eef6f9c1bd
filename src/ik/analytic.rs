//! Analytic hip-knee solver: a yaw or roll joint, then two parallel joints, in closed form.
//!
//! The structure is read from the chain at its zero configuration (see
//! [`describe`]): joint 1 turns the whole limb about its axis `u`; joints 2
//! and 3 (hip and knee, or shoulder and elbow) have parallel axes `a`
//! perpendicular to `u`, so they move the limb inside one plane. Everything
//! the limb carries keeps a constant component along `a` (the lateral offset
//! `D`), which fixes joint 1 (two branches, `phi ± acos(D / r)`); the planar
//! two-link problem is then the law of cosines (two bends). Optionally a
//! wrist pitch joint (parallel to `a`) and a wrist roll joint (in the plane)
//! follow; the wrist is placed from an approach pitch ([`approach_pitch`]).
//!
//! Real URDFs are only approximately ideal (rounded `rpy` values, a tool off
//! the roll axis): the closed form lands within the model error and a few
//! Newton steps on the real chain finish the job.

use super::bounds::Bounds;
use super::geometry::angle_about_axis;
use super::metric::rotation_error;
use super::{Common, IkError, Outcome, Reason, Solution, Target, finish};
use crate::model::{Chain, Frames, Transform, wrap_angle};
use nalgebra::{Matrix3, SMatrix, UnitQuaternion, Vector2, Vector3};
use std::f64::consts::{FRAC_PI_2, PI, TAU};

/// Which of the two knee (elbow) solutions to take.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Bend {
    /// The solution closest to the seed (smooth tracking); both branches of
    /// joint 1 are considered too.
    #[default]
    Closest,
    /// Knee bent positively about its own axis, measured from the straight
    /// limb (this is the sign of the joint angle when the links are in line
    /// at zero, as on most legs and arms).
    Positive,
    /// Knee bent negatively about its axis (see [`Bend::Positive`]).
    Negative,
    /// The knee points towards this point (base frame), like the pole
    /// target of a two-bone IK: it ends on the same side of the line from
    /// the hip to the foot (wrist) as the pole.
    Pole(Vector3<f64>),
}

impl std::str::FromStr for Bend {
    type Err = String;

    /// `closest`, `positive`, `negative`, or a pole point `x,y,z` (base
    /// frame, metres), as the command line and the ROS parameter spell it.
    fn from_str(s: &str) -> Result<Bend, String> {
        Ok(match s.trim() {
            "closest" => Bend::Closest,
            "positive" => Bend::Positive,
            "negative" => Bend::Negative,
            other => {
                let v: Vec<f64> = other
                    .split(',')
                    .map(|x| x.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| {
                        format!(
                            "'{other}': {e}; expected closest, positive, negative or a point x,y,z"
                        )
                    })?;
                match v[..] {
                    [x, y, z] if v.iter().all(|c| c.is_finite()) => {
                        Bend::Pole(nalgebra::Vector3::new(x, y, z))
                    }
                    _ => {
                        return Err(format!(
                            "'{other}': expected closest, positive, negative or a point x,y,z"
                        ));
                    }
                }
            }
        })
    }
}

/// Options of the analytic solver.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnalyticOptions {
    pub bend: Bend,
    /// Approach pitch (rad, as defined by [`approach_pitch`]) for arms with
    /// a wrist pitch joint when the target has no orientation.
    ///
    /// `None`: the solver picks the pitch, so that every reachable point is
    /// reached: the seed's pitch when the wrist centre is reachable with it
    /// (smooth tracking from a warm seed), otherwise the pitch nearest the
    /// seed's that puts the wrist centre inside the two-link annulus with
    /// the knee in its limits (closed form), and if that breaks another
    /// joint's limits, the nearest one that keeps all joints in their limits
    /// (a short scan of the reachable pitches and a bisection).
    ///
    /// `Some(p)`: the pitch is a constraint. When the position cannot be
    /// reached with pitch `p`, the solver returns the nearest point it can
    /// reach with that pitch (the wrist centre clamped onto the annulus),
    /// flagged `BestEffort(OutOfReach)`; it does not trade the pitch for the
    /// position.
    pub pitch: Option<f64>,
}

/// Tolerance (rad) on "parallel" and "perpendicular" axes. Real URDFs write
/// angles like 1.5708, a few micro-radians off; the Newton polish absorbs
/// such deviations, larger ones mean a different mechanism.
pub const AXIS_TOLERANCE: f64 = 1e-4;

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
/// at the zero configuration in the base frame. Build it with [`describe`].
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
    dof: usize,
    /// Joint 1: a point on the axis and the unit axis ("up" for the pitch).
    p1: Vector3<f64>,
    u: Vector3<f64>,
    /// Unit axis of joint 2; joints 3 and 4 turn about `s3 * a`, `s4 * a`.
    a: Vector3<f64>,
    s3: f64,
    s4: f64,
    /// Orthonormal basis of the plane normal to `a`, with `e2 = a × e1`, so
    /// that a positive turn about `a` is a positive planar angle.
    e1: Vector3<f64>,
    e2: Vector3<f64>,
    /// A point on joint 2's axis, and the end of the two-link problem:
    /// joint 4's axis, or the tip for three joints.
    p2: Vector3<f64>,
    end: Vector3<f64>,
    /// Tip position at zero.
    tip: Vector3<f64>,
    /// Wrist roll: a point on its axis and the unit axis.
    roll: Option<(Vector3<f64>, Vector3<f64>)>,
    /// +1 when the approach direction is the roll axis, -1 when opposite.
    s5: f64,
    /// The two links as planar vectors at zero, and the angle from the
    /// first to the second.
    u1: Vector2<f64>,
    u2: Vector2<f64>,
    beta: f64,
    /// Approach direction and a direction normal to it, in the tip frame.
    approach_tool: Vector3<f64>,
    side_tool: Vector3<f64>,
    /// Approach pitch at zero.
    pitch0: f64,
}

/// Rotates `v` by `angle` about the unit `axis` (Rodrigues).
#[inline]
fn rotate(axis: &Vector3<f64>, angle: f64, v: &Vector3<f64>) -> Vector3<f64> {
    let (s, c) = angle.sin_cos();
    v * c + axis.cross(v) * s + axis * (axis.dot(v) * (1.0 - c))
}

#[inline]
fn cross2(a: &Vector2<f64>, b: &Vector2<f64>) -> f64 {
    a.x * b.y - a.y * b.x
}

#[inline]
fn rotate2(angle: f64, v: &Vector2<f64>) -> Vector2<f64> {
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

/// Checks whether the analytic solver fits `chain` and measures its
/// geometry. The error says exactly why not (which joint, which angle, by
/// how much), for `arm_ik check`.
pub fn describe(chain: &Chain) -> Result<HipKnee, IkError> {
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
    let mut frames = Frames::new(chain);
    let zero = vec![0.0; n];
    let tip_pose = chain.joint_frames(&zero, &mut frames);
    let p = |i: usize| frames.origins[i].coords;
    let axis = |i: usize| frames.axes[i].normalize();
    let name = |i: usize| chain.joints[i].name.as_str();
    let (u, a) = (axis(0), axis(1));

    let mut deviation = (0.0, String::new());
    let mut check = |dev: f64, what: String, joint: &str| -> Result<(), IkError> {
        if dev > AXIS_TOLERANCE {
            return Err(unsupported(format!(
                "{what}: off by {dev:.3e} rad (tolerance {AXIS_TOLERANCE:.0e})"
            )));
        }
        if dev >= deviation.0 {
            deviation = (dev, joint.to_string());
        }
        Ok(())
    };
    check(
        perpendicular_deviation(&u, &a),
        format!(
            "the axis of '{}' is not perpendicular to '{}'",
            name(1),
            name(0)
        ),
        name(1),
    )?;
    check(
        line_angle(&a, &axis(2)),
        format!("the axis of '{}' is not parallel to '{}'", name(2), name(1)),
        name(2),
    )?;
    if n >= 4 {
        check(
            line_angle(&a, &axis(3)),
            format!(
                "the axis of '{}' (wrist pitch) is not parallel to '{}'",
                name(3),
                name(1)
            ),
            name(3),
        )?;
    }
    if n == 5 {
        check(
            perpendicular_deviation(&a, &axis(4)),
            format!(
                "the axis of '{}' (wrist roll) is not perpendicular to '{}'",
                name(4),
                name(1)
            ),
            name(4),
        )?;
    }

    let e1 = (u - a * a.dot(&u)).normalize();
    let e2 = a.cross(&e1);
    let planar = |v: Vector3<f64>| Vector2::new(v.dot(&e1), v.dot(&e2));
    let tip = tip_pose.translation.vector;
    let end = if n >= 4 { p(3) } else { tip };
    let (u1, u2) = (planar(p(2) - p(1)), planar(end - p(2)));
    let short = |len: f64, from: &str, to: &str| {
        unsupported(format!(
            "the link from '{from}' to '{to}' has length {len:.3e} m in the plane of '{}': \
             no triangle to solve",
            name(1)
        ))
    };
    if u1.norm() < 1e-9 {
        return Err(short(u1.norm(), name(1), name(2)));
    }
    let end_name = if n >= 4 { name(3) } else { "tip" };
    if u2.norm() < 1e-9 {
        return Err(short(u2.norm(), name(2), end_name));
    }

    // The approach direction: the roll axis pointing away from the wrist,
    // or the direction from the last planar joint to the tip.
    let approach = match n {
        5 => {
            let r = axis(4);
            if r.dot(&(tip - p(4))) < 0.0 { -r } else { r }
        }
        _ => {
            let v = planar(tip - if n == 4 { p(3) } else { p(2) });
            if v.norm() < 1e-9 {
                return Err(unsupported(format!(
                    "the tip lies on the axis of '{}': the approach pitch is undefined",
                    name(n - 1)
                )));
            }
            (e1 * v.x + e2 * v.y).normalize()
        }
    };
    let forward = a.cross(&u);
    let inv = tip_pose.rotation.inverse();
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
        s3: axis(2).dot(&a).signum(),
        s4: if n >= 4 {
            axis(3).dot(&a).signum()
        } else {
            1.0
        },
        e1,
        e2,
        p2: p(1),
        end,
        tip,
        roll: (n == 5).then(|| (p(4), axis(4))),
        s5: if n == 5 {
            approach.dot(&axis(4)).signum()
        } else {
            1.0
        },
        u1,
        u2,
        beta: cross2(&u1, &u2).atan2(u1.dot(&u2)),
        approach_tool: inv * approach,
        side_tool: inv * a,
        pitch0: approach.dot(&u).atan2(approach.dot(&forward)),
    })
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
    Ok(describe(chain)?.approach_pitch(chain, q))
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
    fn pitch_of(&self, tip: &Transform, q1: f64) -> f64 {
        let app = tip.rotation * self.approach_tool;
        self.pitch_of_direction(&app, q1)
    }

    fn pitch_of_direction(&self, app: &Vector3<f64>, q1: f64) -> f64 {
        let forward = rotate(&self.u, q1, &self.a).cross(&self.u);
        app.dot(&self.u).atan2(app.dot(&forward))
    }

    fn planar(&self, v: &Vector3<f64>) -> Vector2<f64> {
        Vector2::new(v.dot(&self.e1), v.dot(&self.e2))
    }

    /// Tip position at zero for the other joints when the roll is `q5`.
    fn tip_at_roll(&self, q5: f64) -> Vector3<f64> {
        match &self.roll {
            Some((p5, a5)) => p5 + rotate(a5, q5, &(self.tip - p5)),
            None => self.tip,
        }
    }

    /// The joint-1 branches of `plan`, with what the planar problem sees
    /// once joint 1 is undone. Returns how many are distinct (1 or 2).
    fn branches(&self, plan: &Plan) -> ([Branch; 2], usize) {
        let tip = self.tip_at_roll(plan.q5);
        let lateral = (tip - self.p1).dot(&self.a);
        let o = if self.dof >= 4 {
            self.planar(&(tip - self.end))
        } else {
            Vector2::zeros()
        };
        let v = plan.target - self.p1;
        let (x, y) = (v.dot(&self.a), v.dot(&self.u.cross(&self.a)));
        let r = x.hypot(y);
        let mut clamped = false;
        let angles = if r < 1e-12 {
            // On joint 1's axis: any yaw reaches it, keep the seed's.
            clamped |= lateral.abs() > 1e-12;
            [plan.seed[0]; 2]
        } else {
            let c = lateral / r;
            clamped |= c.abs() > 1.0;
            let alpha = c.clamp(-1.0, 1.0).acos();
            let phi = y.atan2(x);
            [phi + alpha, phi - alpha]
        };
        let angles = match plan.near {
            Some(h) if wrap_angle(angles[1] - h).abs() < wrap_angle(angles[0] - h).abs() => {
                [angles[1]; 2]
            }
            Some(_) => [angles[0]; 2],
            None => angles,
        };
        let branch = |q1: f64| {
            let local = self.p1 + rotate(&self.u, -q1, &v);
            Branch {
                q1,
                w: self.planar(&(local - self.p2)),
                o,
                misaligned: plan
                    .approach
                    .map_or(0.0, |app| app.dot(&rotate(&self.u, q1, &self.a)).abs()),
                pole: plan.pole.map(|p| {
                    let pl = self.p1 + rotate(&self.u, -q1, &(p - self.p1));
                    self.planar(&(pl - self.p2))
                }),
                clamped,
            }
        };
        let first = branch(angles[0]);
        if angles[1] == angles[0] {
            ([first; 2], 1)
        } else {
            ([first, branch(angles[1])], 2)
        }
    }

    /// The planar (law of cosines) solution of branch `br` for wrist angle
    /// `sigma` (ignored for three joints) and bend `s` (+1 or -1).
    fn solve_planar(&self, br: &Branch, sigma: f64, s: f64, plan: &Plan) -> Candidate {
        let (l1, l2) = self.links;
        let t = br.w - rotate2(sigma, &br.o);
        let d = t.norm();
        let c = (d * d - l1 * l1 - l2 * l2) / (2.0 * l1 * l2);
        let gamma = c.clamp(-1.0, 1.0).acos();
        let th3 = -self.beta + s * gamma;
        let th2 = if d < 1e-12 {
            plan.seed[1]
        } else {
            let reach = self.u1 + rotate2(th3, &self.u2);
            t.y.atan2(t.x) - reach.y.atan2(reach.x)
        };
        let mut q = [0.0; 5];
        q[0] = br.q1;
        q[1] = th2;
        q[2] = self.s3 * th3;
        if self.dof >= 4 {
            q[3] = self.s4 * (sigma - th2 - th3);
        }
        if self.dof == 5 {
            q[4] = plan.q5;
        }
        let knee = rotate2(th2, &self.u1);
        Candidate {
            q,
            bend: self.s3 * s * gamma,
            pole_side: br
                .pole
                .is_none_or(|pp| cross2(&t, &knee) * cross2(&t, &pp) >= 0.0),
            misaligned: br.misaligned,
            clamped: br.clamped || c.abs() > 1.0 + 1e-12,
            violation: 0.0,
            distance: 0.0,
            sigma,
        }
    }

    /// The ideal-model candidates: two branches of joint 1 times two bends.
    /// `sigma` is the planar angle of the wrist (sum of the planar joints),
    /// ignored for three joints.
    fn candidates(&self, plan: &Plan, sigma_of: impl Fn(f64) -> f64) -> [Candidate; 4] {
        let (branches, count) = self.branches(plan);
        let mut out = [Candidate::default(); 4];
        for (b, br) in branches.iter().enumerate().take(count) {
            let sigma = sigma_of(br.q1);
            for (k, s) in [1.0, -1.0].into_iter().enumerate() {
                out[2 * b + k] = self.solve_planar(br, sigma, s, plan);
            }
        }
        if count == 1 {
            out.copy_within(0..2, 2); // one branch only: no need to redo it
        }
        out
    }

    /// The wrist angles (planar angle of the wrist, `pitch0 - pitch`) for
    /// which branch `br` puts the wrist centre at a distance from joint 2
    /// that a knee angle in `knee` (rad, `0` straight, `pi` folded) gives.
    ///
    /// With `w` the target and `o` the tool offset in the plane, the wrist
    /// centre is `w - R(sigma) o` and its squared distance is
    /// `|w|² + |o|² - 2 |w| |o| cos(sigma - psi)`: a band of distances is a
    /// band `[lo, hi]` of `cos(sigma - psi)`, i.e. `|sigma - psi|` in
    /// `[alpha, beta]` (two arcs, symmetric about `psi`). The knee range is first narrowed
    /// by [`KNEE_MARGIN`] (no straight knee, no knee on its limit), then
    /// widened when that leaves nothing; when even the whole annulus is out
    /// of reach, the arc is the single angle that comes closest.
    fn arcs(&self, br: &Branch, knee: (f64, f64)) -> Arcs {
        let (l1, l2) = self.links;
        let (wn, on) = (br.w.norm(), br.o.norm());
        if wn * on < 1e-18 {
            // The wrist angle does not move the wrist centre: any is fine.
            return Arcs {
                psi: 0.0,
                lo: -1.0,
                hi: 1.0,
                reachable: true,
            };
        }
        let psi = br.w.y.atan2(br.w.x) - br.o.y.atan2(br.o.x);
        let base = wn * wn + on * on;
        let den = 2.0 * wn * on;
        let squared = |gamma: f64| l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * gamma.cos();
        let band = |(g_lo, g_hi): (f64, f64)| {
            let lo = (base - squared(g_lo)) / den;
            let hi = (base - squared(g_hi)) / den;
            (lo <= 1.0 && hi >= -1.0).then_some((lo, hi))
        };
        let (g_lo, g_hi) = knee;
        let narrowed = if g_hi - g_lo > 2.0 * KNEE_MARGIN {
            (g_lo + KNEE_MARGIN, g_hi - KNEE_MARGIN)
        } else {
            let mid = 0.5 * (g_lo + g_hi);
            (mid, mid)
        };
        for range in [narrowed, knee, (0.0, PI)] {
            if let Some((lo, hi)) = band(range) {
                return Arcs {
                    psi,
                    lo,
                    hi,
                    reachable: true,
                };
            }
        }
        // Out of reach at every pitch: the tool pointing at the target
        // (shortest wrist distance) when too far, away when too close.
        let best = if base - den > squared(0.0) { 1.0 } else { -1.0 };
        Arcs {
            psi,
            lo: best,
            hi: best,
            reachable: false,
        }
    }
}

/// One joint-1 branch as the planar problem sees it.
#[derive(Debug, Clone, Copy)]
struct Branch {
    q1: f64,
    /// The target relative to joint 2's axis, in the limb plane at zero
    /// (joint 1 undone).
    w: Vector2<f64>,
    /// The tool offset (wrist pitch axis to tip) in the plane at zero.
    o: Vector2<f64>,
    misaligned: f64,
    pole: Option<Vector2<f64>>,
    clamped: bool,
}

/// The wrist angles `sigma` with `cos(sigma - psi)` in `[lo, hi]`, i.e.
/// `|wrap(sigma - psi)|` in `[alpha, beta]` (see [`HipKnee::arcs`]).
#[derive(Debug, Clone, Copy, Default)]
struct Arcs {
    psi: f64,
    lo: f64,
    hi: f64,
    reachable: bool,
}

impl Arcs {
    fn alpha(&self) -> f64 {
        self.hi.min(1.0).acos()
    }

    fn beta(&self) -> f64 {
        self.lo.max(-1.0).acos()
    }

    /// The angle of the arcs nearest `sigma` (`sigma` itself when it lies
    /// on them: no inverse cosine then).
    fn nearest(&self, sigma: f64) -> f64 {
        let ds = wrap_angle(sigma - self.psi);
        let c = ds.cos();
        if (self.lo..=self.hi).contains(&c) {
            return sigma;
        }
        let side = if ds < 0.0 { -1.0 } else { 1.0 };
        let edge = if c > self.hi {
            self.alpha()
        } else {
            self.beta()
        };
        self.psi + side * edge
    }
}

/// What one closed-form pass aims at.
struct Plan<'a> {
    target: Vector3<f64>,
    seed: &'a [f64; 5],
    q5: f64,
    pole: Option<Vector3<f64>>,
    /// The approach direction asked by an orientation target.
    approach: Option<Vector3<f64>>,
    /// Only the joint-1 branch nearest this angle (the one an orientation
    /// hypothesis aligns; the other belongs to the other hypothesis).
    near: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Candidate {
    q: [f64; 5],
    /// Knee bend from the straight limb, signed about the knee's axis.
    bend: f64,
    pole_side: bool,
    /// Sine of the angle between the asked approach direction and the limb
    /// plane of this joint-1 branch: orientation the branch cannot reach.
    misaligned: f64,
    /// The target was out of reach and was moved to the nearest reachable point.
    clamped: bool,
    /// How far outside the bounds (rad, summed); 0 when inside.
    violation: f64,
    /// Squared distance to the seed.
    distance: f64,
    /// Planar angle of the wrist (`pitch0 - pitch`) the candidate was built for.
    sigma: f64,
}

/// The 2π-equivalent of `angle` inside `[lo, hi]` closest to `near`, or
/// failing that the one closest to the bounds (returned with its violation).
fn fit_winding(angle: f64, near: f64, lo: f64, hi: f64) -> (f64, f64) {
    let base = angle + ((near - angle) / TAU).round() * TAU;
    if (lo..=hi).contains(&base) {
        return (base, 0.0); // the usual case: the nearest turn is allowed
    }
    let mut best = (base, f64::INFINITY, f64::INFINITY);
    for k in [-1.0, 0.0, 1.0] {
        let v = base + k * TAU;
        let violation = (v - v.clamp(lo, hi)).abs();
        let dist = (v - near).abs();
        if (violation, dist) < (best.1, best.2) {
            best = (v, violation, dist);
        }
    }
    (best.0, best.1)
}

/// `mᵀ (m mᵀ + damping I)⁻¹`, the damped least-norm inverse of a 3x5 map.
fn damped_pinv(m: &SMatrix<f64, 3, 5>, damping: f64) -> Option<SMatrix<f64, 5, 3>> {
    let gram = m * m.transpose() + Matrix3::identity() * damping;
    gram.try_inverse().map(|inv| m.transpose() * inv)
}

/// What the Newton polish matches besides the position.
#[derive(Clone, Copy)]
enum Secondary {
    None,
    Pitch(f64),
    Orientation(UnitQuaternion<f64>),
}

#[derive(Debug, Clone)]
pub struct AnalyticSolver {
    chain: Chain,
    options: AnalyticOptions,
    common: Common,
    geometry: HipKnee,
    /// Bounds after the modes, before a seed locks any joint.
    base_bounds: Bounds,
    bounds: Bounds,
    frames: Frames,
}

/// Newton polish iterations at most (each costs one Jacobian).
const POLISH_ITERATIONS: u32 = 8;

/// When the solver picks the pitch (position-only target, no pitch asked),
/// the knee angle it aims at stays this far (rad) from the straight (and
/// fully folded) limb and from the knee's limits, when the target allows:
/// no singular knee for the polish, no joint on its limit.
const KNEE_MARGIN: f64 = 1e-4;

/// Margin (rad) kept from the other planar joints' limits when the limits
/// decide the pitch.
const LIMIT_MARGIN: f64 = 1e-6;

/// First and largest steps (rad) of the walk along the reachable pitches
/// when the limits decide the pitch: small first steps find the nearby limit
/// a warm seed stopped at; the largest bounds what a narrow window of
/// in-limit pitches can hide.
const WALK_FIRST_STEP: f64 = 1e-3;
const WALK_MAX_STEP: f64 = 0.05;

impl AnalyticSolver {
    pub fn new(chain: &Chain, options: AnalyticOptions, common: Common) -> Result<Self, IkError> {
        let geometry = describe(chain)?;
        if let Some(p) = options.pitch
            && !p.is_finite()
        {
            return Err(IkError::BadOption {
                solver: "analytic",
                option: "pitch",
                why: format!("{p} is not finite"),
            });
        }
        if let Bend::Pole(p) = options.bend
            && !p.iter().all(|v| v.is_finite())
        {
            return Err(IkError::BadOption {
                solver: "analytic",
                option: "bend",
                why: format!("pole {p:?} is not finite"),
            });
        }
        let base_bounds = Bounds::new(chain, &common.modes);
        Ok(AnalyticSolver {
            chain: chain.clone(),
            bounds: base_bounds.clone(),
            base_bounds,
            frames: Frames::new(chain),
            geometry,
            options,
            common,
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// The measured geometry (what [`describe`] returns).
    pub fn geometry(&self) -> &HipKnee {
        &self.geometry
    }

    /// [`approach_pitch`] of configuration `q` on this solver's chain.
    pub fn approach_pitch(&self, q: &[f64]) -> f64 {
        self.geometry.approach_pitch(&self.chain, q)
    }

    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        let n = self.geometry.dof;
        self.bounds.lower.copy_from_slice(&self.base_bounds.lower);
        self.bounds.upper.copy_from_slice(&self.base_bounds.upper);
        let mut start = [0.0; 5];
        self.bounds.lock_at(&self.chain, seed, &mut start[..n]);

        let g = &self.geometry;
        let orientation = target.orientation.filter(|_| target.wants_orientation());
        let pitch = match (orientation, self.options.pitch) {
            _ if n == 3 => None,
            (Some(_), _) => None,
            (None, Some(p)) => Some(p),
            (None, None) => Some(g.pitch_of(&self.chain.fk(&start[..n]), start[0])),
        };
        let pole = match self.options.bend {
            Bend::Pole(p) => Some(p),
            _ => None,
        };
        let mut plan = Plan {
            target: target.position,
            seed: &start,
            q5: start[4],
            pole,
            approach: None,
            near: None,
        };
        let approach = orientation.map(|o| o * g.approach_tool);
        plan.approach = approach;
        let sigma_of = |q1: f64| match (pitch, approach) {
            (Some(p), _) => g.pitch0 - p,
            (None, Some(app)) => g.pitch0 - g.pitch_of_direction(&app, q1),
            (None, None) => 0.0,
        };
        // Position only, no pitch asked: the solver picks the pitch.
        let free = n >= 4 && orientation.is_none() && self.options.pitch.is_none();
        let best = match orientation.filter(|_| n == 5) {
            None if free => {
                let seed_pitch = pitch.expect("the seed's pitch");
                self.free_pitch(&plan, g.pitch0 - seed_pitch, &start)
            }
            None => self.choose(&mut g.candidates(&plan, sigma_of), &start),
            Some(o) => {
                // The asked approach direction must lie in the limb plane,
                // which fixes joint 1 up to a half turn; with it the roll
                // follows from the orientation. Joint 1 is then solved again
                // from the position (exact when the pose is reachable,
                // "position first" when it is not).
                let app = approach.expect("orientation gives an approach");
                let (x, y) = (app.dot(&g.a), app.dot(&g.u.cross(&g.a)));
                let hypotheses = if x.hypot(y) > 1e-9 {
                    let phi = y.atan2(x);
                    [phi + FRAC_PI_2, phi - FRAC_PI_2]
                } else {
                    // Approach along joint 1's axis: any yaw is aligned,
                    // take the position's.
                    let first = self.choose(&mut g.candidates(&plan, sigma_of), &start);
                    [first.q[0]; 2]
                };
                let mut all = [Candidate::default(); 8];
                for (h, q1) in hypotheses.into_iter().enumerate() {
                    let side = rotate(&g.u, q1, &g.a);
                    let turn = angle_about_axis(&app, &side, &(o * g.side_tool)).unwrap_or(0.0);
                    let (lo, hi) = (self.bounds.lower[4], self.bounds.upper[4]);
                    plan.q5 = fit_winding(g.s5 * turn, start[4], lo, hi).0;
                    plan.near = Some(q1);
                    all[4 * h..4 * h + 4].copy_from_slice(&g.candidates(&plan, sigma_of));
                }
                self.choose(&mut all, &start)
            }
        };
        let mut best = best;
        let pitch = if free {
            Some(g.pitch0 - best.sigma)
        } else {
            pitch
        };

        // On an ideal chain a clean closed-form answer is exact already.
        // Anything else is polished, even a clamped or out-of-limits
        // answer: the best iterate is kept, so it never gets worse.
        let exact = g.deviation < 1e-12
            && !best.clamped
            && best.violation == 0.0
            && best.misaligned < 1e-12;
        let mut iterations = 1;
        if !exact {
            let secondary = match (orientation, pitch) {
                (Some(o), _) if n == 5 => Secondary::Orientation(o),
                (_, Some(p)) => Secondary::Pitch(p),
                (Some(_), None) if n == 4 => {
                    Secondary::Pitch(g.pitch_of_direction(&approach.unwrap(), best.q[0]))
                }
                _ => Secondary::None,
            };
            iterations += self.polish(target, secondary, &mut best.q);
        }
        finish(
            &self.chain,
            &self.bounds,
            target,
            &self.common.tolerance,
            &start[..n],
            Outcome {
                q: best.q[..n].to_vec(),
                iterations,
                why_not: Reason::OutOfReach,
            },
        )
    }

    /// Position-only target on an arm with a wrist pitch and no pitch asked:
    /// per joint-1 branch and bend, the wrist angle nearest the seed's for
    /// which the wrist centre is reachable with the knee inside its limits
    /// (closed form, [`HipKnee::arcs`]). When joint limits rule out all of
    /// those (or the ones left are farther from the seed in joint space),
    /// the reachable angles are walked for the one nearest the seed's that
    /// keeps every joint in its limits ([`Self::walk`]).
    fn free_pitch(&self, plan: &Plan, seed_sigma: f64, seed: &[f64; 5]) -> Candidate {
        let g = &self.geometry;
        let (branches, count) = g.branches(plan);
        let mut all = [Candidate::default(); 4];
        let mut arcs = [Arcs::default(); 4];
        let knees = [self.knee_range(1.0), self.knee_range(-1.0)];
        for (b, br) in branches.iter().enumerate().take(count) {
            for (k, s) in [1.0, -1.0].into_iter().enumerate() {
                let i = 2 * b + k;
                // Usually the knee's limits are symmetric: same arcs.
                arcs[i] = if k == 1 && knees[1] == knees[0] {
                    arcs[i - 1]
                } else {
                    g.arcs(br, knees[k])
                };
                all[i] = g.solve_planar(br, arcs[i].nearest(seed_sigma), s, plan);
            }
        }
        let m = 2 * count;
        // The joint-space distance to the seed of each candidate once
        // clamped into the bounds, and whether it fits as it is.
        let mut fitted = all;
        let _ = self.choose(&mut fitted[..m], seed);
        let fits = |c: &Candidate| c.violation == 0.0 && self.bend_ok(c);
        let nearest_fit = fitted[..m]
            .iter()
            .filter(|c| fits(c))
            .map(|c| c.distance)
            .fold(f64::INFINITY, f64::min);
        // Walk the others that could beat it: e.g. a warm seed whose own
        // bend just hit a limit stays in that bend, the pitch giving way,
        // rather than flipping the elbow.
        for i in 0..m {
            if !fits(&fitted[i]) && fitted[i].distance < nearest_fit {
                let s = if i % 2 == 0 { 1.0 } else { -1.0 };
                if let Some(c) = self.walk(&branches[i / 2], s, &arcs[i], seed_sigma, plan, seed) {
                    all[i] = c;
                }
            }
        }
        self.choose(&mut all[..m], seed)
    }

    /// The knee angles (from the straight limb, in `[0, pi]`) that keep
    /// joint 3 inside its bounds for bend `s`; all of them when no knee
    /// angle does (the candidate is then out of limits anyway).
    fn knee_range(&self, s: f64) -> (f64, f64) {
        let g = &self.geometry;
        let (lo, hi) = (self.bounds.lower[2], self.bounds.upper[2]);
        if hi - lo >= TAU || !(hi - lo).is_finite() {
            return (0.0, PI);
        }
        // q3 = s3 (-beta + s gamma), up to whole turns.
        let k = g.s3 * s;
        let mut best = (f64::NEG_INFINITY, 0.0, PI);
        for turn in [-TAU, 0.0, TAU] {
            let (x, y) = (
                k * (lo + turn + g.s3 * g.beta),
                k * (hi + turn + g.s3 * g.beta),
            );
            let (a, b) = (x.min(y).max(0.0), x.max(y).min(PI));
            if b - a > best.0 {
                best = (b - a, a, b);
            }
        }
        if best.0 < 0.0 {
            (0.0, PI)
        } else {
            (best.1, best.2)
        }
    }

    /// Summed violation (rad) of joints `range` of `q`, allowing any whole
    /// turn, against the bounds narrowed by `margin` (when they are wider).
    fn violation(
        &self,
        q: &[f64; 5],
        seed: &[f64; 5],
        margin: f64,
        range: std::ops::Range<usize>,
    ) -> f64 {
        range
            .map(|i| {
                let (mut lo, mut hi) = (self.bounds.lower[i], self.bounds.upper[i]);
                if hi - lo > 2.0 * margin {
                    lo += margin;
                    hi -= margin;
                }
                fit_winding(q[i], seed[i], lo, hi).1
            })
            .sum()
    }

    fn bend_ok(&self, c: &Candidate) -> bool {
        match self.options.bend {
            Bend::Closest => true,
            Bend::Positive => c.bend >= 0.0,
            Bend::Negative => c.bend <= 0.0,
            Bend::Pole(_) => c.pole_side,
        }
    }

    /// Walks the reachable wrist angles of one branch and bend outward from
    /// the seed's angle (or from the arc ends nearest it), in steps that
    /// grow from [`WALK_FIRST_STEP`] to [`WALK_MAX_STEP`], for the angle
    /// nearest `seed_sigma` whose planar joints lie inside their bounds (by
    /// [`LIMIT_MARGIN`]); the first such angle of each ray is bisected back
    /// towards the last one out of bounds. A warm seed finds the limit that
    /// stopped it within a few steps; a far seed within a few dozen.
    /// `None` when joint 1 or the roll is out of bounds (no wrist angle
    /// helps), the arcs are a single angle, or no angle fits.
    fn walk(
        &self,
        br: &Branch,
        s: f64,
        arcs: &Arcs,
        seed_sigma: f64,
        plan: &Plan,
        seed: &[f64; 5],
    ) -> Option<Candidate> {
        let g = &self.geometry;
        let n = g.dof;
        let (a, b) = (arcs.alpha(), arcs.beta());
        if !arcs.reachable || b - a < 1e-9 {
            return None;
        }
        let fits = |sigma: f64| {
            let c = g.solve_planar(br, sigma, s, plan);
            self.violation(&c.q, seed, LIMIT_MARGIN, 1..4.min(n)) == 0.0
        };
        let probe = g.solve_planar(br, arcs.psi + a, s, plan);
        let mut fixed = self.violation(&probe.q, seed, 0.0, 0..1);
        if n == 5 {
            fixed += self.violation(&probe.q, seed, 0.0, 4..5);
        }
        if fixed > 0.0 {
            return None;
        }
        // Rays (start offset from psi, direction, length), in offsets from
        // psi: from the seed's angle outward when it lies on an arc, else
        // from both ends of each arc inward.
        let ds = wrap_angle(seed_sigma - arcs.psi);
        let mut rays = [(0.0, 0.0, 0.0); 4];
        let mut count = 0;
        for side in [1.0, -1.0] {
            let x = side * ds; // the seed's offset mirrored onto this arc
            if (a..=b).contains(&x) {
                rays[count] = (side * x, side, b - x);
                rays[count + 1] = (side * x, -side, x - a);
            } else {
                rays[count] = (side * a, side, b - a);
                rays[count + 1] = (side * b, -side, b - a);
            }
            count += 2;
        }
        let dist = |offset: f64| wrap_angle(offset - ds).abs();
        let mut best: Option<(f64, f64)> = None; // (distance, offset)
        for &(start, dir, length) in &rays[..count] {
            let (mut last, mut travelled, mut step) = (start, 0.0, 0.0_f64);
            let mut previous = dist(start);
            loop {
                let offset = start + dir * travelled;
                let d = dist(offset);
                if best.is_some_and(|(bd, _)| d >= bd) || (travelled > 0.0 && d < previous) {
                    break; // no nearer than the best, or coming back (another ray's half)
                }
                previous = d;
                if fits(arcs.psi + offset) {
                    let mut inside = offset;
                    if travelled > 0.0 {
                        let mut outside = last;
                        while (inside - outside).abs() > 1e-10 {
                            let mid = 0.5 * (inside + outside);
                            if fits(arcs.psi + mid) {
                                inside = mid;
                            } else {
                                outside = mid;
                            }
                        }
                    }
                    best = Some((dist(inside), inside));
                    break;
                }
                if travelled >= length {
                    break;
                }
                last = offset;
                step = (2.0 * step).clamp(WALK_FIRST_STEP, WALK_MAX_STEP);
                travelled = (travelled + step).min(length);
            }
        }
        best.map(|(_, offset)| g.solve_planar(br, arcs.psi + offset, s, plan))
    }

    /// Fits each candidate into the bounds and picks one: inside the bounds
    /// first (limits are constraints), then reaching the target in the ideal
    /// model (position, then the approach direction), then the requested
    /// bend (a preference), then closest to the seed.
    fn choose(&self, candidates: &mut [Candidate], seed: &[f64; 5]) -> Candidate {
        let n = self.geometry.dof;
        for c in candidates.iter_mut() {
            for (i, &s) in seed.iter().enumerate().take(n) {
                let (lo, hi) = (self.bounds.lower[i], self.bounds.upper[i]);
                let (v, viol) = fit_winding(c.q[i], s, lo, hi);
                c.q[i] = v.clamp(lo, hi);
                c.violation += viol;
                c.distance += (c.q[i] - s).powi(2);
            }
        }
        let key = |c: &Candidate| {
            let feasible = c.violation <= 1e-12;
            (
                !feasible,
                c.clamped,
                // Model error (a few micro-radians) is not a preference.
                if c.misaligned < 1e-7 {
                    0.0
                } else {
                    c.misaligned
                },
                !self.bend_ok(c),
                if feasible { c.distance } else { c.violation },
            )
        };
        *candidates
            .iter()
            .min_by(|x, y| {
                key(x)
                    .partial_cmp(&key(y))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .expect("at least one candidate")
    }

    /// Newton steps on the real chain: the position exactly (least-norm
    /// step), the secondary task in what is left (null space). Absorbs the
    /// difference between the real URDF and the ideal model. Joints stay
    /// in bounds; the best iterate is kept. Returns the iterations used.
    fn polish(&mut self, target: &Target, secondary: Secondary, q: &mut [f64; 5]) -> u32 {
        let n = self.geometry.dof;
        let g = &self.geometry;
        let mut free = [false; 5];
        for (i, f) in free.iter_mut().enumerate().take(n) {
            *f = !self.bounds.locked[i];
        }
        if n == 5 && !matches!(secondary, Secondary::Orientation(_)) {
            free[4] = false; // the roll stays where the seed had it
        }
        let mut best = (f64::INFINITY, *q);
        let mut used = 0;
        for it in 0..=POLISH_ITERATIONS {
            // The residual from plain FK first: on an ideal chain the closed
            // form is already exact and no Jacobian is needed.
            let tip = self.chain.fk(&q[..n]);
            let ep = target.position - tip.translation.vector;
            let mut es = Vector3::zeros();
            let app = tip.rotation * g.approach_tool;
            let forward = rotate(&g.u, q[0], &g.a).cross(&g.u);
            let (y, x) = (app.dot(&g.u), app.dot(&forward));
            match secondary {
                Secondary::None => {}
                Secondary::Pitch(p) => es.x = wrap_angle(p - y.atan2(x)),
                Secondary::Orientation(o) => es = rotation_error(&tip, &o),
            }
            let cost = ep.norm() + 0.1 * es.norm();
            if cost < best.0 {
                best = (cost, *q);
            }
            if ep.norm() < 1e-13 && es.norm() < 1e-12 || it == POLISH_ITERATIONS {
                break;
            }
            used += 1;
            self.chain.jacobian(&q[..n], &mut self.frames);
            let mut js = SMatrix::<f64, 3, 5>::zeros();
            let mut jp = SMatrix::<f64, 3, 5>::zeros();
            for (i, &is_free) in free.iter().enumerate().take(n) {
                if !is_free {
                    continue;
                }
                let axis = self.frames.axes[i];
                jp.set_column(i, &self.frames.columns[i].linear);
                match secondary {
                    Secondary::None => {}
                    Secondary::Pitch(_) => {
                        // d atan2(y, x): the approach turns about each axis,
                        // and "forward" turns with joint 1.
                        let dapp = axis.cross(&app);
                        let mut dx = dapp.dot(&forward);
                        if i == 0 {
                            dx += app.dot(&g.u.cross(&forward));
                        }
                        js[(0, i)] = (x * dapp.dot(&g.u) - y * dx) / (x * x + y * y).max(1e-300);
                    }
                    Secondary::Orientation(_) => js.set_column(i, &axis),
                }
            }
            // Damped right pseudo-inverses: 3x3 inverses only (an SVD would
            // cost more than the whole closed form). The damping only
            // matters near singular poses, where the step cap and keeping
            // the best iterate take over.
            let Some(jp_pinv) = damped_pinv(&jp, 1e-10) else {
                break;
            };
            let step1 = jp_pinv * ep;
            let null = SMatrix::<f64, 5, 5>::identity() - jp_pinv * jp;
            let m = js * null;
            let step2 = match damped_pinv(&m, 1e-9) {
                Some(m_pinv) => m_pinv * (es - js * step1),
                None => SMatrix::<f64, 5, 1>::zeros(),
            };
            let mut step = step1 + null * step2;
            let size = step.norm();
            if !size.is_finite() || size < 1e-15 {
                break; // nothing left to gain (e.g. an unreachable pitch)
            }
            if size > 0.2 {
                step *= 0.2 / size;
            }
            for i in 0..n {
                q[i] = self.bounds.clamp_one(i, q[i] + step[i]);
            }
        }
        *q = best.1;
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winding_prefers_in_bounds_near_seed() {
        let (v, viol) = fit_winding(3.0 - TAU, 2.5, -10.0, 10.0);
        assert!((v - 3.0).abs() < 1e-12 && viol == 0.0);
        let (v, viol) = fit_winding(2.0, 0.0, -1.0, 1.0);
        assert!((v - 2.0).abs() < 1e-12 && (viol - 1.0).abs() < 1e-12);
        let (v, _) = fit_winding(0.5, 0.0, f64::NEG_INFINITY, f64::INFINITY);
        assert!((v - 0.5).abs() < 1e-12);
    }

    #[test]
    fn rodrigues_quarter_turn() {
        let v = rotate(&Vector3::z(), std::f64::consts::FRAC_PI_2, &Vector3::x());
        assert!((v - Vector3::y()).norm() < 1e-15);
    }
}
