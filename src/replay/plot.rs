//! The replay as a picture: joint angles and tracking error over time, as
//! a small self-contained SVG (two stacked panels, one polyline per
//! joint). Written by hand because a plotting crate would be the largest
//! dependency of the project for two line charts.
//!
//! Memory is bounded whatever the bag length: [`PlotRecorder`] keeps at
//! most `cap` samples and, when full, drops every other one and halves its
//! sampling rate.

use crate::node::JointState;
use std::fmt::Write;

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
        self.q.extend_from_slice(&js.position);
        self.err.push(tracking_error);
    }

    /// Samples kept.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The SVG document.
    pub fn svg(&self, title: &str) -> String {
        const W: f64 = 900.0;
        const PANEL: f64 = 260.0;
        const LEFT: f64 = 70.0;
        const RIGHT: f64 = 160.0;
        const TOP: f64 = 40.0;
        const GAP: f64 = 50.0;
        let colours = [
            "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        ];
        let n = self.names.len();
        let (t0, t1) = match (self.t.first(), self.t.last()) {
            (Some(&a), Some(&b)) if b > a => (a, b),
            (Some(&a), _) => (a, a + 1.0),
            _ => (0.0, 1.0),
        };
        let finite = |v: &[f64]| {
            let (lo, hi) = v
                .iter()
                .filter(|x| x.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                    (l.min(x), h.max(x))
                });
            if lo > hi {
                (0.0, 1.0)
            } else if hi - lo < 1e-9 {
                (lo - 0.5, hi + 0.5)
            } else {
                (lo, hi)
            }
        };
        let (qlo, qhi) = finite(&self.q);
        let (_, ehi) = finite(&self.err);
        let pw = W - LEFT - RIGHT;
        let h = TOP + 2.0 * PANEL + GAP + 50.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="22" font-size="15">{}</text>"#,
            escape(title)
        );
        let panel = |s: &mut String, y0: f64, lo: f64, hi: f64, label: &str| {
            let _ = writeln!(
                s,
                r##"<rect x="{LEFT}" y="{y0}" width="{pw}" height="{PANEL}" fill="none" stroke="#999"/>"##
            );
            for k in 0..=4 {
                let v = lo + (hi - lo) * k as f64 / 4.0;
                let y = y0 + PANEL - PANEL * k as f64 / 4.0;
                let _ = writeln!(
                    s,
                    r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{v:.3}</text>"##,
                    LEFT + pw,
                    LEFT - 6.0,
                    y + 4.0
                );
            }
            let _ = writeln!(
                s,
                r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{label}</text>"#,
                y0 + PANEL / 2.0
            );
        };
        let x = |t: f64| LEFT + (t - t0) / (t1 - t0) * pw;
        let line = |s: &mut String,
                    pts: &mut dyn Iterator<Item = (f64, f64)>,
                    y0: f64,
                    lo: f64,
                    hi: f64,
                    colour: &str| {
            let mut d = String::new();
            for (t, v) in pts {
                if v.is_finite() {
                    let y = y0 + PANEL - (v - lo) / (hi - lo) * PANEL;
                    let _ = write!(d, "{:.1},{:.1} ", x(t), y);
                }
            }
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="1.2" points="{}"/>"#,
                d.trim_end()
            );
        };
        let y1 = TOP;
        panel(&mut s, y1, qlo, qhi, "joint position (rad, m)");
        for j in 0..n {
            let c = colours[j % colours.len()];
            line(
                &mut s,
                &mut self
                    .t
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (t, self.q[i * n + j])),
                y1,
                qlo,
                qhi,
                c,
            );
            let _ = writeln!(
                s,
                r#"<line x1="{}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="{c}" stroke-width="3"/><text x="{}" y="{:.1}">{}</text>"#,
                LEFT + pw + 12.0,
                LEFT + pw + 32.0,
                y1 + 14.0 + 18.0 * j as f64,
                y1 + 14.0 + 18.0 * j as f64,
                LEFT + pw + 38.0,
                y1 + 18.0 + 18.0 * j as f64,
                escape(&self.names[j])
            );
        }
        let y2 = TOP + PANEL + GAP;
        panel(&mut s, y2, 0.0, ehi.max(1e-6), "tracking error (m)");
        line(
            &mut s,
            &mut self.t.iter().zip(&self.err).map(|(&t, &e)| (t, e)),
            y2,
            0.0,
            ehi.max(1e-6),
            "#d62728",
        );
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="{:.1}">{t0:.2} s</text><text x="{}" y="{:.1}" text-anchor="end">{t1:.2} s</text><text x="{}" y="{:.1}" text-anchor="middle">simulated time</text>"#,
            y2 + PANEL + 18.0,
            LEFT + pw,
            y2 + PANEL + 18.0,
            LEFT + pw / 2.0,
            y2 + PANEL + 18.0
        );
        s.push_str("</svg>\n");
        s
    }
}

/// XML text escaping (names and messages may hold `<` or `&`).
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn memory_is_capped_and_the_svg_is_well_formed() {
        let names = vec!["a".to_string(), "b<".to_string()];
        let mut p = PlotRecorder::new(&names, 100);
        for k in 0..10_000 {
            let js = JointState {
                stamp: k as f64,
                name: Arc::from(names.clone()),
                position: vec![(k as f64 * 0.01).sin(), 0.5],
                velocity: vec![0.0, 0.0],
            };
            p.record(k as f64 * 0.02, &js, 0.001);
        }
        assert!(p.len() <= 100 && p.len() >= 50, "{}", p.len());
        let svg = p.svg("test & more");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("b&lt;") && svg.contains("test &amp; more"));
        assert_eq!(svg.matches("<polyline").count(), 3);
    }
}
