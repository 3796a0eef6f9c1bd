//! The replay as a picture: joint angles and tracking error over time, as
//! a self-contained SVG of two stacked charts (drawn with the helpers of
//! [`crate::plot`]). The tracking error is on a log scale, so the start-up move
//! (tens of centimetres) and the steady state (a millimetre) both show.
//!
//! Memory is bounded whatever the bag length: [`PlotRecorder`] keeps at
//! most `cap` samples and, when full, drops every other one and halves its
//! sampling rate.

use crate::node::JointState;
pub use crate::plot::PlotError;
use crate::plot::{label, legend};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;

/// What a failure to draw names.
const WHAT: &str = "the replay plot";

fn plot_error(e: impl std::fmt::Display) -> PlotError {
    PlotError::of(WHAT)(e)
}

const WIDTH: u32 = 960;
const HEIGHT: u32 = 720;
/// Tracking errors below this (mm) are drawn at it: the log scale's floor.
const FLOOR_MM: f64 = 1e-3;

/// Decimating recorder of (time, joints, tracking error).
pub struct PlotRecorder {
    names: Vec<String>,
    cap: usize,
    stride: u64,
    seen: u64,
    t: Vec<f64>,
    q: Vec<f64>,
    err: Vec<f64>,
}

impl PlotRecorder {
    pub fn new(names: &[String], cap: usize) -> PlotRecorder {
        PlotRecorder {
            names: names.to_vec(),
            cap: cap.max(4),
            stride: 1,
            seen: 0,
            t: Vec::new(),
            q: Vec::new(),
            err: Vec::new(),
        }
    }

    pub fn record(&mut self, time_s: f64, js: &JointState, tracking_error: f64) {
        self.seen += 1;
        if !(self.seen - 1).is_multiple_of(self.stride) {
            return;
        }
        if self.t.len() >= self.cap {
            let n = self.names.len();
            let keep: Vec<usize> = (0..self.t.len()).step_by(2).collect();
            self.t = keep.iter().map(|&i| self.t[i]).collect();
            self.err = keep.iter().map(|&i| self.err[i]).collect();
            self.q = keep
                .iter()
                .flat_map(|&i| self.q[i * n..(i + 1) * n].to_vec())
                .collect();
            self.stride *= 2;
            if !(self.seen - 1).is_multiple_of(self.stride) {
                return;
            }
        }
        self.t.push(time_s);
        // The named joints only: a joint state may list mimic joints after
        // them, and every sample must keep the same width.
        let n = self.names.len();
        self.q
            .extend((0..n).map(|i| js.position.get(i).copied().unwrap_or(f64::NAN)));
        self.err.push(tracking_error);
    }

    /// Samples kept.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The SVG document; `caught_up_s` (when the arm caught up with its
    /// target) is marked on the tracking-error chart.
    pub fn svg(&self, title: &str, caught_up_s: Option<f64>) -> Result<String, PlotError> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_error)?;
            let root = root.titled(title, ("sans-serif", 18)).map_err(plot_error)?;
            let (upper, lower) = root.split_vertically(HEIGHT / 2 - 10);
            self.joints_chart(&upper)?;
            self.error_chart(&lower, caught_up_s)?;
            root.present().map_err(plot_error)?;
        }
        Ok(out)
    }

    /// The time axis: first to last sample (one second when there is one).
    fn time_range(&self) -> Range<f64> {
        match (self.t.first(), self.t.last()) {
            (Some(&a), Some(&b)) if b > a => a..b,
            (Some(&a), _) => a..a + 1.0,
            _ => 0.0..1.0,
        }
    }

    fn joints_chart(&self, area: &DrawingArea<SVGBackend, Shift>) -> Result<(), PlotError> {
        let n = self.names.len();
        let (lo, hi) = finite_bounds(&self.q);
        let pad = ((hi - lo) * 0.05).max(1e-3);
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(self.time_range(), lo - pad..hi + pad)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("simulated time (s)")
            .y_desc("joint position (rad, m)")
            .x_label_formatter(&label)
            .y_label_formatter(&label)
            .draw()
            .map_err(plot_error)?;
        for j in 0..n {
            let colour = Palette99::pick(j).to_rgba();
            let points = (self.t.iter().enumerate())
                .map(|(i, &t)| (t, self.q[i * n + j]))
                .filter(|(_, q)| q.is_finite());
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))
                .map_err(plot_error)?
                .label(self.names[j].as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                });
        }
        legend(&mut chart, WHAT)
    }

    fn error_chart(
        &self,
        area: &DrawingArea<SVGBackend, Shift>,
        caught_up_s: Option<f64>,
    ) -> Result<(), PlotError> {
        let mm: Vec<f64> = (self.err.iter())
            .map(|e| {
                if e.is_finite() {
                    (e * 1e3).max(FLOOR_MM)
                } else {
                    f64::NAN
                }
            })
            .collect();
        let (lo, hi) = finite_bounds(&mm);
        let top = (hi * 2.0).max(lo * 10.0).max(FLOOR_MM * 10.0);
        let time = self.time_range();
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(time, (lo.max(FLOOR_MM)..top).log_scale())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("simulated time (s)")
            .y_desc("tracking error (mm, log)")
            .x_label_formatter(&label)
            .y_label_formatter(&label)
            .draw()
            .map_err(plot_error)?;
        let points = (self.t.iter().zip(&mm))
            .map(|(&t, &e)| (t, e))
            .filter(|(_, e)| e.is_finite());
        chart
            .draw_series(LineSeries::new(points, RED.stroke_width(2)))
            .map_err(plot_error)?;
        if let Some(t) = caught_up_s {
            let marker = LineSeries::new([(t, lo.max(FLOOR_MM)), (t, top)], BLUE.stroke_width(2));
            chart
                .draw_series(marker)
                .map_err(plot_error)?
                .label(format!("caught up at {t:.2} s"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
            legend(&mut chart, WHAT)?;
        }
        Ok(())
    }
}

/// The smallest and largest finite values, or 0 and 1 when there are
/// none (a chart needs a non-empty range).
fn finite_bounds(v: &[f64]) -> (f64, f64) {
    let (lo, hi) = (v.iter().filter(|x| x.is_finite()))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    if lo > hi { (0.0, 1.0) } else { (lo, hi) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn memory_is_capped_and_the_svg_has_round_ticks_and_a_time_axis() {
        let names = vec!["a".to_string(), "b<".to_string()];
        let mut p = PlotRecorder::new(&names, 100);
        for k in 0..10_000 {
            let js = JointState {
                stamp: k as f64,
                name: Arc::from(names.clone()),
                position: vec![(k as f64 * 0.01).sin(), 0.5],
                velocity: vec![0.0, 0.0],
            };
            p.record(k as f64 * 0.02, &js, 0.3 / (1.0 + k as f64));
        }
        assert!(p.len() <= 100 && p.len() >= 50, "{}", p.len());
        let svg = p.svg("test & more", Some(12.0)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("b&lt;") && svg.contains("test &amp; more"));
        assert!(svg.contains("simulated time (s)") && svg.contains("caught up at 12.00 s"));
        let texts: Vec<&str> = (svg.split("<text").skip(1))
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
            .collect();
        // Round ticks along the time axis (0 to 200 s), not the two ends.
        for tick in ["0", "20", "40", "100", "180"] {
            assert!(texts.contains(&tick), "no tick {tick} in {texts:?}");
        }
        assert!(!texts.contains(&"-0"), "{texts:?}");
        // The log axis of the tracking error has decades.
        assert!(texts.contains(&"0.1") && texts.contains(&"10"), "{texts:?}");
        // One line per joint and one of the error, each through the samples.
        let lines = (svg.split("<polyline").skip(1))
            .filter(|l| {
                l.split(" points=")
                    .nth(1)
                    .is_some_and(|p| p.matches(',').count() > 40)
            })
            .count();
        assert_eq!(lines, 3);
    }

    #[test]
    fn an_empty_or_nan_recording_still_draws() {
        let p = PlotRecorder::new(&["a".to_string()], 10);
        assert!(p.svg("empty", None).unwrap().contains("</svg>"));
    }
}
