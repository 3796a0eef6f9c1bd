//! The simulated Feetech bus (`tests/python/feetech_bus.py`) and the
//! project's Feetech calibration as the bus tests use them
//! (tests/feetech_bus.rs, tests/feetech_relax.rs).

use super::bus_sim::Sim;
use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use std::path::Path;

/// Starts `feetech_bus.py` with `args`, logging to `log`, plugged in at
/// `link`.
pub fn start(link: &Path, log: &Path, args: &[&str]) -> Sim {
    let sim = Sim::start("feetech_bus.py", log, args);
    sim.plug(link);
    sim
}

pub fn chain() -> Chain {
    Chain::from_urdf_file(super::project_urdf("arm.urdf"), None, None).unwrap()
}

pub const STARTUP_SPEED: f64 = 2.0;

/// The project's Feetech calibration (config/servos_feetech.yaml, the
/// arm's joints) with a faster start-up move (so the tests take seconds)
/// and a reply timeout that a busy machine's scheduling cannot trip;
/// `relax` sets `link.on_exit: relax`.
pub fn config_text(relax: bool) -> String {
    let text = super::arm_only(&super::project_config("servos_feetech.yaml"));
    let on_exit = if relax { "relax" } else { "hold" };
    let edited = text
        .replace(
            "startup_speed: 0.3",
            &format!("startup_speed: {STARTUP_SPEED}"),
        )
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300")
        .replace("on_exit: hold", &format!("on_exit: {on_exit}"));
    assert!(edited.contains("startup_speed: 2") && edited.contains("reply_timeout_ms: 300"));
    assert!(edited.contains(&format!("on_exit: {on_exit}")));
    edited
}

pub fn calibration(relax: bool) -> Calibration {
    Calibration::from_yaml(&config_text(relax), "test config", &chain()).unwrap()
}
