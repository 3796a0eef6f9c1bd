//! Servos that measure where they are (as bus servos do) but say nothing
//! until the test "connects" them: the node core waits for their pose.

use arm_ik::ik::{Common, SolverConfig, SolverKind};
use arm_ik::model::Chain;
use arm_ik::node::{MemoryNode, NodeConfig, NodeCore};
use arm_ik::servo::ServoOutput;
use std::sync::{Arc, Mutex};

/// Servos that measure their position (bus servos), reached through a
/// shared cell the test sets: `None` until "connected".
pub struct MeasuringServos {
    pub present: Arc<Mutex<Option<Vec<f64>>>>,
    pub commands: Arc<Mutex<Vec<Vec<f64>>>>,
}

impl ServoOutput for MeasuringServos {
    fn command(&mut self, positions: &[f64], _t: f64) {
        self.commands.lock().unwrap().push(positions.to_vec());
    }
    fn feedback(&self) -> Option<Vec<f64>> {
        self.present.lock().unwrap().clone()
    }
    fn measured(&self) -> bool {
        true
    }
}

/// State the servos share with the test.
pub type Shared<T> = Arc<Mutex<T>>;

/// The node, the servos' present position and the commands they got.
pub type Measuring = (
    MemoryNode<MeasuringServos>,
    Shared<Option<Vec<f64>>>,
    Shared<Vec<Vec<f64>>>,
);

/// A node core on [`MeasuringServos`] that report `present` (`None`: not
/// yet), with the Jacobian solver and the default settings; the present
/// position and the commands sent stay shared with the test.
pub fn node(chain: &Chain, present: Option<Vec<f64>>) -> Measuring {
    let present = Arc::new(Mutex::new(present));
    let commands = Arc::new(Mutex::new(Vec::new()));
    let servos = MeasuringServos {
        present: present.clone(),
        commands: commands.clone(),
    };
    let core = NodeCore::new(
        chain,
        SolverConfig::default_for(SolverKind::Jacobian),
        Common::default(),
        NodeConfig::default(),
        servos,
    )
    .unwrap();
    (MemoryNode::new(core), present, commands)
}
