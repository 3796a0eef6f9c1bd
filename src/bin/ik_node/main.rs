//! `ik_node`: the ROS 2 node around the node core (feature `ros2`).
//!
//! Wiring only: parameters in (and changed live, [`tuning`]),
//! `target_pose` / `target_point`, `~/gripper`, `~/joint_command`, the
//! jog's `~/target_twist` / `~/cmd_vel`, the target marker's feedback and
//! the Trigger services (`services`, where std_srvs is built) in,
//! `joint_states`, `/diagnostics`, `~/markers`, `~/collision_markers` and the target marker's
//! updates out, and the marker's `get_interactive_markers` service. Every decision
//! (target checks, solving, motion limits, health) is made by
//! `arm_ik::node`; the conversions are `arm_ik::ros::convert`.
//!
//! Threads: a dedicated thread owns the ROS node and spins it ([`spin`]),
//! while one tokio task (this one) owns the node core and selects over the
//! merged inputs ([`inputs`]), the tick interval, the report intervals and
//! SIGINT/SIGTERM. The core is never shared, so it needs no lock.

mod inputs;
mod outputs;
mod robot;
#[cfg(std_srvs)]
mod services;
mod spin;
mod tuning;

use anyhow::Context as _;
use arm_ik::node::{Command, NodeCore, NodeParams, PoseFile};
use arm_ik::ros::convert;
use arm_ik::run;
use arm_ik::servo::Output;
use futures::StreamExt;
use inputs::Inputs;
use outputs::Outputs;
use r2r::Clock;
use robot::Description;
use spin::{Spinner, ros_now, shutdown_signal};
use std::collections::BTreeSet;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::{Interval, MissedTickBehavior, interval};
use tuning::Tuning;

const NODE_NAME: &str = "ik_node";
const DIAGNOSTICS_PERIOD: Duration = Duration::from_secs(1);
/// Markers are for eyes: 10 Hz is smooth in RViz and cheap on the wire.
const MARKER_PERIOD: Duration = Duration::from_millis(100);
/// The target marker's interactive-marker namespace (RViz's
/// InteractiveMarkers display takes `/ik_node/target_marker`).
const TARGET_MARKER_NS: &str = "~/target_marker";

/// Requests to the target marker's `get_interactive_markers` service.
type MarkerRequests = futures::stream::BoxStream<
    'static,
    r2r::ServiceRequest<r2r::visualization_msgs::srv::GetInteractiveMarkers::Service>,
>;

fn main() -> ExitCode {
    spin::main_on_one_thread(NODE_NAME, run())
}

/// Declares every parameter (defaults, descriptions), applies
/// `--ros-args -p` and YAML values, serves `ros2 param` (live changes
/// through [`Tuning`]), and checks the values: refused values and wrong
/// output parameters stop the node now, before it waits for a URDF.
fn parameters(
    node: &mut r2r::Node,
    log: &str,
) -> anyhow::Result<(NodeParams, Vec<run::Warning>, Tuning)> {
    let tuning = Tuning::serve(node)?;
    let p = tuning.read()?;
    p.settings().context("invalid parameter")?;
    if let Some(t) = p.teleop().context("invalid parameter")? {
        r2r::log_info!(
            log,
            "follow_leader: ~/joint_command carries a leader arm's frames; the arm first comes to its pose at {} rad/s and holds when they stop for {} s",
            t.startup_speed,
            t.timeout
        );
    }
    let warnings = run::check_output(&p)?;
    for warning in &warnings {
        r2r::log_warn!(log, "{warning}");
    }
    Ok((p, warnings, tuning))
}

/// The pose names of `poses_file`, for one `~/go_to/<name>` service each
/// (checked against the robot once it is known, by `run::build_node`).
fn pose_names(p: &NodeParams) -> anyhow::Result<Vec<String>> {
    Ok(match p.poses() {
        Some(path) => PoseFile::load(Path::new(path))?
            .names()
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    })
}

async fn run() -> anyhow::Result<()> {
    let shutdown = shutdown_signal()?;
    tokio::pin!(shutdown);

    let ctx = r2r::Context::create().context("cannot initialise ROS (rcl)")?;
    let mut node = r2r::Node::create(ctx, NODE_NAME, "").context("cannot create the node")?;
    let log = node.logger().to_string();
    let (p, early, tuning) = parameters(&mut node, &log)?;
    let mut inputs = Inputs::subscribe(&mut node, p.follow_leader)?;
    let go_to: BTreeSet<String> = pose_names(&p)?.into_iter().collect();
    let served = inputs.serve(
        &mut node,
        &Vec::from_iter(go_to.iter().cloned()),
        &p.program_names(),
    )?;
    if !served {
        r2r::log_warn!(
            &log,
            "built without std_srvs: no relax, enable, home, go_to or gripper services (the ~/gripper and ~/joint_command topics work)"
        );
    }
    let description = Description::subscribe(&mut node, &p)?;
    let outputs = Outputs::create(&mut node, &log, TARGET_MARKER_NS)?;
    let marker_requests: MarkerRequests = node
        .create_service(
            &format!("{TARGET_MARKER_NS}/get_interactive_markers"),
            r2r::QosProfile::default(),
        )?
        .boxed();
    let clock = node.get_ros_clock();
    let spinner = Spinner::start(node)?;

    let Some(chain) = description.chain(&p, &log, shutdown.as_mut()).await? else {
        return Ok(());
    };
    let built = run::build_node(&p, &chain)?;
    tuning.run_on(&chain)?;
    for warning in built.warnings.iter().filter(|w| !early.contains(w)) {
        r2r::log_warn!(&log, "{warning}");
    }
    let core = built.core;
    let rate_hz = core.config().rate_hz;
    r2r::log_info!(
        &log,
        "{} joints {} -> {} ({}), {} solver at {rate_hz} Hz on {} servos",
        chain.dof(),
        chain.base,
        chain.tip,
        chain.joint_names().join(", "),
        core.status().solver,
        core.status().link
    );
    let mut node = Running {
        core,
        inputs,
        tuning,
        outputs,
        marker_requests,
        clock,
        log,
        spinner,
        go_to: served.then_some(go_to),
    };
    let stop = node.control_loop(shutdown.as_mut()).await?;
    node.log_summary(stop);
    node.close();
    Ok(())
}

/// An interval that skips missed ticks: a late tick delays the arm (each
/// tick is one motion period) rather than bursting to catch up.
fn every(period: Duration) -> Interval {
    let mut i = interval(period);
    i.set_missed_tick_behavior(MissedTickBehavior::Skip);
    i
}

/// The node once its robot is loaded.
struct Running {
    core: NodeCore<Output>,
    inputs: Inputs,
    tuning: Tuning,
    outputs: Outputs,
    marker_requests: MarkerRequests,
    clock: Arc<Mutex<Clock>>,
    log: String,
    /// Spins the ROS node; creates services while it runs.
    spinner: Spinner,
    /// The poses served as `~/go_to/<name>`; none in a build without
    /// std_srvs.
    go_to: Option<BTreeSet<String>>,
}

impl Running {
    /// Runs until SIGINT/SIGTERM; returns the signal's name.
    async fn control_loop(
        &mut self,
        mut shutdown: Pin<&mut impl Future<Output = anyhow::Result<&'static str>>>,
    ) -> anyhow::Result<&'static str> {
        let rate_hz = self.core.config().rate_hz;
        let mut ticks = every(Duration::from_secs_f64(1.0 / rate_hz));
        let mut diagnostics = every(DIAGNOSTICS_PERIOD);
        let mut markers = every(MARKER_PERIOD);
        loop {
            tokio::select! {
                // Shutdown first, then parameter changes (answered before
                // a command that may follow them), then inputs before the
                // tick that uses them.
                biased;
                s = shutdown.as_mut() => return s,
                Some(name) = self.tuning.next() => {
                    self.tuning.apply(&name, &mut self.core, &self.log);
                }
                Some(input) = self.inputs.next() => {
                    let now = ros_now(&self.clock).as_secs_f64();
                    let taken = self.core.command(&input.command, now);
                    if let Err(r) = &taken {
                        r2r::log_debug!(&self.log, "{} refused: {r}", input.source);
                    }
                    if let Some(Err(e)) = input.reply.map(|reply| reply(&taken)) {
                        r2r::log_warn!(&self.log, "{} reply not sent: {e}", input.source);
                    }
                    if let (Ok(()), Command::RecordPose { name }) = (&taken, &input.command) {
                        self.serve_pose(name).await;
                    }
                    self.publish_marker();
                }
                _ = ticks.tick() => {
                    let now = ros_now(&self.clock);
                    let tick = self.core.tick(now.as_secs_f64());
                    self.outputs.joint_state(&tick.joint_state, now);
                    self.publish_marker();
                    if let Some(notice) = self.core.take_notice() {
                        r2r::log_info!(&self.log, "{notice}");
                    }
                }
                Some(request) = self.marker_requests.next() => {
                    let answer = convert::marker_snapshot(&self.core.marker_snapshot());
                    if let Err(e) = request.respond(answer) {
                        r2r::log_warn!(&self.log, "get_interactive_markers not answered: {e}");
                    }
                }
                _ = diagnostics.tick() => {
                    let now = ros_now(&self.clock);
                    self.outputs.diagnostics(&self.core, rate_hz, now);
                }
                _ = markers.tick() => {
                    let now = ros_now(&self.clock);
                    self.outputs.markers(&self.core, now);
                    let shapes = self.core.collision_markers();
                    self.outputs.collision_markers(&self.core.chain().base, &shapes, now);
                }
            }
        }
    }

    /// A pose recorded under a new name gets its `~/go_to/<name>` at once
    /// (the poses file's own were served at start).
    async fn serve_pose(&mut self, name: &str) {
        let Some(served) = &mut self.go_to else {
            return;
        };
        if !served.insert(name.to_owned()) {
            return;
        }
        let service = name.to_owned();
        let created = self
            .spinner
            .with_node(move |node| Inputs::go_to(node, &service))
            .await;
        match created.and_then(|r| r) {
            Ok(None) => {}
            Ok(Some(stream)) => {
                self.inputs.add(stream);
                r2r::log_info!(&self.log, "pose '{name}' recorded: serving ~/go_to/{name}");
            }
            Err(e) => r2r::log_warn!(&self.log, "~/go_to/{name} not created: {e:#}"),
        }
    }

    /// The target marker's update, when the core has one: after each
    /// tick (the tip moved) and each input (a dragged pose to echo).
    fn publish_marker(&mut self) {
        if let Some(u) = self.core.marker_update() {
            self.outputs.target_marker(&u);
        }
    }

    /// Closes the servo output, so the link does what `link.on_exit` says
    /// (hold or relax) before the process ends.
    fn close(self) {
        if let Output::Serial(servo) = self.core.into_servo() {
            let status = servo.close();
            r2r::log_info!(&self.log, "servo link closed: {}", status.describe());
        }
    }

    fn log_summary(&self, stop: &str) {
        let st = self.core.status();
        let t = st.targets;
        r2r::log_info!(
            &self.log,
            "{stop}: shutting down after {} ticks; targets {} received, {} reached, {} rejected, {} unreachable",
            st.ticks,
            t.received,
            t.reached,
            t.rejected.total(),
            t.unreachable
        );
    }
}
