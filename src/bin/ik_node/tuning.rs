//! Live tuning: `ros2 param set` on a running node. r2r's parameter
//! handler asks [`LiveParams`] (through `RosParams::set_parameter`), which
//! refuses fixed parameters and bad values with the reason; each accepted
//! change arrives here as an event and is handed to the node core, which
//! takes it at its next tick.

use anyhow::Context as _;
use arm_ik::model::Chain;
use arm_ik::node::{LiveParams, NodeCore, NodeParams};
use arm_ik::servo::ServoOutput;
use futures::stream::{BoxStream, StreamExt};
use std::sync::{Arc, Mutex};

/// The parameters behind the parameter server, and its accepted changes.
pub struct Tuning {
    params: Arc<Mutex<LiveParams>>,
    changes: BoxStream<'static, String>,
}

impl Tuning {
    /// Declares every parameter (defaults, descriptions), applies
    /// `--ros-args -p` and YAML values, and serves `ros2 param`.
    pub fn serve(node: &mut r2r::Node) -> anyhow::Result<Tuning> {
        let params = Arc::new(Mutex::new(LiveParams::new(NodeParams::default())));
        let (server, events) = node
            .make_derived_parameter_handler(params.clone())
            .context("cannot declare the parameters")?;
        tokio::spawn(server);
        Ok(Tuning {
            params,
            changes: events.map(|(name, _)| name).boxed(),
        })
    }

    fn lock(&self) -> anyhow::Result<std::sync::MutexGuard<'_, LiveParams>> {
        self.params
            .lock()
            .map_err(|_| anyhow::anyhow!("parameter lock poisoned"))
    }

    /// The values given at start; from now on only live parameters change.
    pub fn read(&self) -> anyhow::Result<NodeParams> {
        let mut p = self.lock()?;
        p.read();
        Ok(p.params().clone())
    }

    /// The node runs on `chain`: changes are checked against it too.
    pub fn run_on(&self, chain: &Chain) -> anyhow::Result<()> {
        self.lock()?.run_on(chain.clone());
        Ok(())
    }

    /// The name of the next parameter changed.
    pub async fn next(&mut self) -> Option<String> {
        self.changes.next().await
    }

    /// Hands the parameters' settings to the core after `name` changed.
    pub fn apply<S: ServoOutput>(&self, name: &str, core: &mut NodeCore<S>, log: &str) {
        let settings = self.lock().map(|p| p.settings());
        match settings {
            Ok(Ok(s)) => match core.retune(&s) {
                Ok(()) => r2r::log_info!(log, "parameter {name} changed: applied at the next tick"),
                Err(e) => r2r::log_warn!(log, "parameter {name} changed but not applied: {e}"),
            },
            Ok(Err(e)) => r2r::log_warn!(log, "parameter {name} changed but not applied: {e}"),
            Err(e) => r2r::log_warn!(log, "parameter {name}: {e}"),
        }
    }
}
