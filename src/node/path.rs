//! Built-in target paths: what `arm_ik sim` follows without `--stdin`, and
//! what the latency benchmark feeds the node, so both exercise the same
//! motion.

/// The figure-eight 20 cm in front of the project's arm at time `t` (s),
/// one loop per `period` (s): 16 x 8 cm, well inside the workspace, so
/// every target is reachable and a benchmark times tracking, not failure.
pub fn figure_eight(t: f64, period: f64) -> [f64; 3] {
    let w = std::f64::consts::TAU / period;
    [0.2, 0.08 * (w * t).sin(), 0.17 + 0.04 * (2.0 * w * t).sin()]
}
