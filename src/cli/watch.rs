//! What `sim` and `run` do with each tick besides printing: `--record`
//! (an MCAP bag that shows the arm on its own) and `--view` (the same
//! topics live in Foxglove). Both stamp the node's clock from the wall
//! time the run started, so a recording has its date and a viewer's
//! transforms are current.

use super::run::Printer;
use super::view::{View, now_ns};
use arm_ik::bag::{Header, StampedTarget};
use arm_ik::ik::Target;
use arm_ik::node::{NodeStatus, Tick};
use arm_ik::replay::OutputBag;
use arm_ik::run::{InputError, Observer};
use std::ops::ControlFlow;

/// The printer, plus a recording and a live view when asked for.
pub(super) struct Watch {
    pub(super) printer: Printer,
    pub(super) bag: Option<OutputBag>,
    pub(super) view: Option<View>,
    /// The chain's base link: the targets' frame.
    pub(super) base: String,
    /// Wall time (ns since the epoch) of node time 0.
    pub(super) epoch_ns: u64,
}

impl Watch {
    pub(super) fn new(printer: Printer, base: &str) -> Watch {
        Watch {
            printer,
            bag: None,
            view: None,
            base: base.to_string(),
            epoch_ns: now_ns(),
        }
    }

    fn stamp(&self, t: f64) -> u64 {
        self.epoch_ns + (t.max(0.0) * 1e9).round() as u64
    }
}

impl Observer for Watch {
    fn tick(&mut self, tick: &Tick, status: &NodeStatus) -> ControlFlow<()> {
        let js = &tick.joint_state;
        let stamp = self.stamp(js.stamp);
        if let Some(b) = &mut self.bag {
            b.joint_state(stamp, js);
        }
        if let Some(v) = &mut self.view {
            v.joint_state(stamp, js);
        }
        self.printer.tick(tick, status)
    }

    fn bad_input(&mut self, error: &InputError) {
        self.printer.bad_input(error);
    }

    fn notice(&mut self, line: &str) {
        self.printer.notice(line);
    }

    fn target(&mut self, now: f64, target: &Target) {
        let stamp = self.stamp(now);
        let p = target.position;
        let t = StampedTarget {
            header: Header {
                stamp_ns: stamp as i64,
                frame_id: self.base.clone(),
            },
            position: [p.x, p.y, p.z],
            orientation: target.orientation.full().map(|q| [q.i, q.j, q.k, q.w]),
        };
        if let Some(b) = &mut self.bag {
            let data = t.encode(arm_ik::bag::Endian::Little);
            b.target(stamp, t.kind().topic(), &t, &data);
        }
        if let Some(v) = &mut self.view {
            v.target(stamp, &t);
        }
    }
}
