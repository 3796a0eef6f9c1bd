//! The arm drawn from its frames: a few poses of a recording, each link
//! a line from its parent's origin to its own, seen from above (x–y) and
//! from the side (x–z) at the same scale, the latest pose in full colour
//! and the targets as dots. `arm_ik draw` feeds it the `/tf` a bag holds.

use super::{PlotError, label};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

const WHAT: &str = "the arm picture";
const WIDTH: u32 = 960;
const HEIGHT: u32 = 500;
/// Room (m) around what is drawn.
const PAD: f64 = 0.03;

/// A link: from its parent's origin to its own (m, base frame).
pub type Segment = ([f64; 3], [f64; 3]);

/// One side of the picture: which base-frame axes go right and up.
struct Side {
    name: &'static str,
    right: usize,
    up: usize,
}

const SIDES: [Side; 2] = [
    Side {
        name: "from above: y over x (m, base frame)",
        right: 0,
        up: 1,
    },
    Side {
        name: "from the side: z over x (m, base frame)",
        right: 0,
        up: 2,
    },
];

/// The picture of `poses` (oldest first; each the arm's segments) and
/// `targets`, titled `title`.
pub fn arm_svg(
    poses: &[Vec<Segment>],
    targets: &[[f64; 3]],
    title: &str,
) -> Result<String, PlotError> {
    let err = PlotError::of(WHAT);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(&err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(&err)?;
        let (left, right) = root.split_horizontally(WIDTH / 2);
        let half = half_span(poses, targets);
        for (area, side) in [left, right].iter().zip(&SIDES) {
            draw_side(area, side, poses, targets, half)?;
        }
        root.present().map_err(&err)?;
    }
    Ok(out)
}

/// Half the side of the square every view shows, so both have one scale.
fn half_span(poses: &[Vec<Segment>], targets: &[[f64; 3]]) -> f64 {
    let points = poses
        .iter()
        .flatten()
        .flat_map(|(a, b)| [a, b])
        .chain(targets);
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for i in 0..3 {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    let span = (0..3).map(|i| hi[i] - lo[i]).fold(0.1, f64::max);
    span / 2.0 + PAD
}

/// Where a view is centred: the middle of what it shows.
fn centre(poses: &[Vec<Segment>], targets: &[[f64; 3]], axis: usize) -> f64 {
    let vals = poses
        .iter()
        .flatten()
        .flat_map(|(a, b)| [a[axis], b[axis]])
        .chain(targets.iter().map(|t| t[axis]));
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if lo.is_finite() { (lo + hi) / 2.0 } else { 0.0 }
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn draw_side(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    side: &Side,
    poses: &[Vec<Segment>],
    targets: &[[f64; 3]],
    half: f64,
) -> Result<(), PlotError> {
    let err = PlotError::of(WHAT);
    let (cx, cy) = (
        centre(poses, targets, side.right),
        centre(poses, targets, side.up),
    );
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .caption(side.name, ("sans-serif", 14))
        .build_cartesian_2d(cx - half..cx + half, cy - half..cy + half)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_label_formatter(&label)
        .y_label_formatter(&label)
        .draw()
        .map_err(&err)?;
    let at = |p: &[f64; 3]| (p[side.right], p[side.up]);
    let path: Vec<(f64, f64)> = targets.iter().map(at).collect();
    chart
        .draw_series(
            path.iter()
                .map(|&p| Circle::new(p, 2, RGBColor(240, 120, 0).filled())),
        )
        .map_err(&err)?;
    let n = poses.len();
    for (k, pose) in poses.iter().enumerate() {
        let last = k + 1 == n;
        let style = if last {
            RGBColor(30, 90, 200).stroke_width(4)
        } else {
            RGBColor(120, 140, 180)
                .mix(0.2 + 0.5 * k as f64 / n as f64)
                .stroke_width(2)
        };
        draw_pose(&mut chart, pose, at, style, last)?;
    }
    Ok(())
}

fn draw_pose(
    chart: &mut Chart<'_, '_>,
    pose: &[Segment],
    at: impl Fn(&[f64; 3]) -> (f64, f64),
    style: ShapeStyle,
    joints: bool,
) -> Result<(), PlotError> {
    let err = PlotError::of(WHAT);
    chart
        .draw_series(
            pose.iter()
                .map(|(a, b)| PathElement::new(vec![at(a), at(b)], style)),
        )
        .map_err(&err)?;
    if joints {
        chart
            .draw_series(
                pose.iter()
                    .map(|(a, _)| Circle::new(at(a), 4, BLACK.filled())),
            )
            .map_err(&err)?;
    }
    Ok(())
}
