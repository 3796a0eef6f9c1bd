//! Pictures the project draws, as self-contained SVG made with `plotters`
//! (its SVG backend only: text is left to the viewer, so no font library
//! is needed): what every picture shares (the error, the tick labels, the
//! legend) and [`scene`], the collision world seen from the side. The
//! replay's charts (`crate::replay::plot`) draw with these helpers too.

pub mod arm;
pub mod scene;

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

/// Drawing an SVG failed (plotters' own error, as text), naming the
/// picture.
#[derive(Debug, thiserror::Error)]
#[error("drawing {what}: {why}")]
pub struct PlotError {
    what: &'static str,
    why: String,
}

impl PlotError {
    /// A function turning plotters' error into one naming `what` (`the
    /// replay plot`), for `map_err`.
    pub fn of<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> PlotError {
        move |e| PlotError {
            what,
            why: e.to_string(),
        }
    }
}

/// A tick label: the tick's value as short as it is exact (`0.2`, `20`,
/// never `-0.0` or `0.30000000000000004`).
pub fn label(v: &f64) -> String {
    let r = (v * 1e6).round() / 1e6;
    format!("{}", if r == 0.0 { 0.0 } else { r })
}

/// The names of a chart's series, in its upper right corner.
pub fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    what: &'static str,
) -> Result<(), PlotError> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(PlotError::of(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short_and_never_negative_zero() {
        assert_eq!(label(&0.30000000000000004), "0.3");
        assert_eq!(label(&-1e-9), "0");
        assert_eq!(label(&20.0), "20");
    }
}
