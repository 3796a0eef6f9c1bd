//! The collision world as a picture: the arm's solids, the floor and the
//! workspace's obstacles seen from the side (an orthographic view along a
//! base-frame axis), the closest checked pair outlined in red with its
//! distance written. The docs' picture of the arm by the box is drawn
//! here (`arm_ik collisions URDF --svg FILE`).
//!
//! Each solid is drawn as its outline in the view: the support points of
//! the solid (the checker's own support functions, so what is drawn is
//! what is measured) in directions around the view plane, which trace the
//! projection of any convex solid.

use super::{PlotError, label, legend};
use crate::collision::{Nearest, Owner, World};
use parry3d_f64::math::Vector;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const WHAT: &str = "the collision picture";
const WIDTH: u32 = 800;
const HEIGHT: u32 = 640;
/// Directions the outline of a solid is traced in.
const DIRECTIONS: usize = 72;
/// Room (m) around what is drawn.
const PAD: f64 = 0.04;
const MARGIN_PX: u32 = 12;
const X_LABELS_PX: u32 = 36;
const Y_LABELS_PX: u32 = 56;
const TITLE_PX: u32 = 40;

/// Which side the world is seen from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The x–z plane of the base frame (x to the right), looking along +y.
    Xz,
    /// The y–z plane of the base frame (y to the right), looking along -x.
    Yz,
}

impl View {
    /// The base-frame direction drawn to the right.
    fn right(self) -> Vector<f64> {
        match self {
            View::Xz => Vector::x(),
            View::Yz => Vector::y(),
        }
    }

    /// The base-frame direction into the picture (far things are drawn
    /// first, so near ones cover them).
    fn into_picture(self) -> Vector<f64> {
        match self {
            View::Xz => Vector::y(),
            View::Yz => -Vector::x(),
        }
    }

    fn axis_name(self) -> &'static str {
        match self {
            View::Xz => "x (m, base frame)",
            View::Yz => "y (m, base frame)",
        }
    }
}

/// One solid's outline in the picture.
struct Outline {
    owner: Owner,
    points: Vec<(f64, f64)>,
    /// How far into the picture its centre is (m).
    depth: f64,
}

/// The picture of `world` at `axes` (the chain's joints, then any
/// actuated joints off it; missing trailing ones at rest), seen from
/// `view`, titled `title`.
pub fn scene_svg(
    world: &mut World,
    axes: &[f64],
    view: View,
    title: &str,
) -> Result<String, PlotError> {
    let nearest = world.nearest(axes);
    let mut outlines = outlines(world, view);
    outlines.sort_by(|a, b| b.depth.total_cmp(&a.depth));
    let (xs, zs) = ranges(&outlines, world.floor());
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        let err = PlotError::of(WHAT);
        root.fill(&WHITE).map_err(&err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(&err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(MARGIN_PX)
            .x_label_area_size(X_LABELS_PX)
            .y_label_area_size(Y_LABELS_PX)
            .build_cartesian_2d(xs.0..xs.1, zs.0..zs.1)
            .map_err(&err)?;
        chart
            .configure_mesh()
            .x_desc(view.axis_name())
            .y_desc("z (m, base frame)")
            .x_label_formatter(&label)
            .y_label_formatter(&label)
            .draw()
            .map_err(&err)?;
        if let Some(z) = world.floor() {
            let table = Polygon::new(
                vec![(xs.0, zs.0), (xs.1, zs.0), (xs.1, z), (xs.0, z)],
                RGBColor(150, 120, 90).mix(0.25).filled(),
            );
            chart.draw_series([table]).map_err(&err)?;
            let edge = PathElement::new(vec![(xs.0, z), (xs.1, z)], BLACK.stroke_width(2));
            chart
                .draw_series([edge])
                .map_err(&err)?
                .label(format!("floor, z = {}", label(&z)))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2))
                });
        }
        draw_solids(&mut chart, world, &outlines, &nearest)?;
        let closest = if nearest.distance.is_finite() {
            format!(
                "closest: {}, {:.1} mm apart (margin {:.0} mm)",
                world.describe(&nearest),
                nearest.distance * 1e3,
                world.margin() * 1e3
            )
        } else {
            "no pair checked".to_string()
        };
        let at = (xs.0 + 0.02 * (xs.1 - xs.0), zs.1 - 0.03 * (zs.1 - zs.0));
        chart
            .draw_series([Text::new(
                closest,
                at,
                ("sans-serif", 16).into_font().color(&RED),
            )])
            .map_err(&err)?;
        legend(&mut chart, WHAT)?;
        root.present().map_err(&err)?;
    }
    Ok(out)
}

/// Each solid's outline, traced by its support points.
fn outlines(world: &World, view: View) -> Vec<Outline> {
    let (right, up) = (view.right(), Vector::z());
    world
        .solids()
        .map(|(owner, pose, solid)| {
            let support = solid.support();
            let mut points: Vec<(f64, f64)> = (0..DIRECTIONS)
                .map(|k| {
                    let a = std::f64::consts::TAU * k as f64 / DIRECTIONS as f64;
                    let dir = right * a.cos() + up * a.sin();
                    let p = support.support_point(pose, &dir) + dir * solid.round();
                    (p.coords.dot(&right), p.z)
                })
                .collect();
            points.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9);
            Outline {
                owner,
                points,
                depth: pose.translation.vector.dot(&view.into_picture()),
            }
        })
        .collect()
}

/// The picture's ranges (m): everything drawn with room around it, the
/// two scaled alike (a metre as long across as up).
fn ranges(outlines: &[Outline], floor: Option<f64>) -> ((f64, f64), (f64, f64)) {
    let mut x = (f64::INFINITY, f64::NEG_INFINITY);
    let mut z = (f64::INFINITY, f64::NEG_INFINITY);
    for &(px, pz) in outlines.iter().flat_map(|o| &o.points) {
        x = (x.0.min(px), x.1.max(px));
        z = (z.0.min(pz), z.1.max(pz));
    }
    if let Some(f) = floor {
        z = (z.0.min(f), z.1.max(f));
    }
    if x.0 > x.1 {
        (x, z) = ((-0.5, 0.5), (0.0, 0.5));
    }
    let (mut x, mut z) = ((x.0 - PAD, x.1 + PAD), (z.0 - PAD, z.1 + 2.0 * PAD));
    let w = f64::from(WIDTH - 2 * MARGIN_PX - Y_LABELS_PX);
    let h = f64::from(HEIGHT - TITLE_PX - 2 * MARGIN_PX - X_LABELS_PX);
    let per_px = ((x.1 - x.0) / w).max((z.1 - z.0) / h);
    let grow = |r: (f64, f64), px: f64| {
        let extra = (per_px * px - (r.1 - r.0)) / 2.0;
        (r.0 - extra, r.1 + extra)
    };
    x = grow(x, w);
    z = grow(z, h);
    (x, z)
}

/// The solids, far ones first: links in their own colours (named in the
/// legend), obstacles blue with their names on them, the closest pair
/// outlined in red.
fn draw_solids<'a>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    world: &World,
    outlines: &[Outline],
    nearest: &Nearest,
) -> Result<(), PlotError> {
    let err = PlotError::of(WHAT);
    let closest = |o: Owner| nearest.distance.is_finite() && (o == nearest.a || o == nearest.b);
    let mut named: Vec<Owner> = Vec::new();
    for o in outlines {
        let colour = match o.owner {
            Owner::Link(l) => Palette99::pick(l).to_rgba(),
            _ => RGBColor(70, 110, 200).to_rgba(),
        };
        let stroke = if closest(o.owner) {
            RED.stroke_width(3)
        } else {
            colour.stroke_width(1)
        };
        let fill = Polygon::new(o.points.clone(), colour.mix(0.35).filled());
        let mut edge = o.points.clone();
        edge.extend(o.points.first());
        chart.draw_series([fill]).map_err(&err)?;
        let drawn = chart
            .draw_series([PathElement::new(edge, stroke)])
            .map_err(&err)?;
        if named.contains(&o.owner) {
            continue;
        }
        named.push(o.owner);
        match o.owner {
            Owner::Link(_) => {
                drawn
                    .label(world.name(o.owner).to_owned())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 16, y + 5)], colour.mix(0.6).filled())
                    });
            }
            _ => {
                let top = o
                    .points
                    .iter()
                    .map(|p| p.1)
                    .fold(f64::NEG_INFINITY, f64::max);
                let mid = o.points.iter().map(|p| p.0).sum::<f64>() / o.points.len() as f64;
                let name = Text::new(
                    world.name(o.owner).to_owned(),
                    (mid, top),
                    TextStyle::from(("sans-serif", 15).into_font())
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                );
                chart.draw_series([name]).map_err(&err)?;
            }
        }
    }
    Ok(())
}
