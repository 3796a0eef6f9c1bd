//! `ik_node`: the ROS 2 node around the node core (feature `ros2`).
//!
//! Wiring only: parameters in, `target_pose` / `target_point` in,
//! `joint_states`, `/diagnostics` and `~/markers` out. Every decision
//! (target checks, solving, motion limits, health) is made by
//! `arm_ik::node`; the conversions are `arm_ik::ros::convert`.
//!
//! Threads: r2r has no callbacks, someone must call `Node::spin_once` for
//! messages, timers and services to move, and it blocks; so a dedicated
//! thread owns the node and spins it, while one tokio task (this one) owns
//! the node core and selects over the target streams, the tick interval,
//! the report intervals and SIGINT/SIGTERM. The core is never shared, so
//! it needs no lock.

use anyhow::Context as _;
use arm_ik::model::Chain;
use arm_ik::node::{HealthMonitor, NodeParams, UrdfSource, report};
use arm_ik::ros::convert;
use arm_ik::run;
use futures::StreamExt;
use r2r::geometry_msgs::msg::{PointStamped, PoseStamped};
use r2r::visualization_msgs::msg::Marker;
use r2r::{Clock, QosProfile};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::{MissedTickBehavior, interval};

const NODE_NAME: &str = "ik_node";
/// How long one `spin_once` may block: also the longest the spin thread
/// takes to notice shutdown.
const SPIN_TIMEOUT: Duration = Duration::from_millis(20);
const DIAGNOSTICS_PERIOD: Duration = Duration::from_secs(1);
/// Markers are for eyes: 10 Hz is smooth in RViz and cheap on the wire.
const MARKER_PERIOD: Duration = Duration::from_millis(100);
/// While waiting for `robot_description`, say so again this often.
const WAIT_LOG_PERIOD: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    // One thread is enough: the node core is the only real work and the
    // spinning has its own thread.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{NODE_NAME}: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            r2r::log_error!(NODE_NAME, "{e:#}");
            eprintln!("{NODE_NAME}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Owns the ROS node on its own thread, spinning until dropped. Dropping
/// stops and joins the thread, so every exit path (including errors after
/// start) leaves no thread behind and destroys the node cleanly.
struct Spinner {
    running: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start(mut node: r2r::Node) -> anyhow::Result<Spinner> {
        let running = Arc::new(AtomicBool::new(true));
        let flag = running.clone();
        let thread = std::thread::Builder::new()
            .name("ros_spin".into())
            .spawn(move || {
                while flag.load(Ordering::Relaxed) {
                    node.spin_once(SPIN_TIMEOUT);
                }
            })
            .context("cannot start the spin thread")?;
        Ok(Spinner {
            running,
            thread: Some(thread),
        })
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.running.store(false, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The node clock (ROS time: wall time, or `/clock` with use_sim_time).
fn ros_now(clock: &Mutex<Clock>) -> Duration {
    let now = clock.lock().ok().and_then(|mut c| c.get_now().ok());
    // The ROS clock only fails when rcl is broken; system time keeps the
    // stamps meaningful rather than zero (which would stop TF).
    now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
    })
}

fn stamp(d: Duration) -> r2r::builtin_interfaces::msg::Time {
    Clock::to_builtin_time(&d)
}

/// Resolves when SIGINT or SIGTERM arrives, with the signal's name.
/// rcl installs no signal handlers, so tokio's are the only ones.
async fn shutdown_signal() -> anyhow::Result<&'static str> {
    let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    Ok(tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    })
}

async fn run() -> anyhow::Result<()> {
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);

    let ctx = r2r::Context::create().context("cannot initialise ROS (rcl)")?;
    let mut node = r2r::Node::create(ctx, NODE_NAME, "").context("cannot create the node")?;
    let log = node.logger().to_string();

    // Declares every parameter (defaults, descriptions), applies
    // --ros-args -p and YAML values to the struct, and serves ros2 param.
    let params = Arc::new(Mutex::new(NodeParams::default()));
    let (param_server, param_events) = node
        .make_derived_parameter_handler(params.clone())
        .context("cannot declare the parameters")?;
    let p = params
        .lock()
        .map_err(|_| anyhow::anyhow!("parameter lock poisoned"))?
        .clone();
    // Refused values stop the node now, before it waits for a URDF, and
    // so do wrong output parameters.
    let settings = p.settings().context("invalid parameter")?;
    let early = run::check_output(&p)?;
    for warning in &early {
        r2r::log_warn!(&log, "{warning}");
    }

    let mut pose_sub = node.subscribe::<PoseStamped>("target_pose", QosProfile::default())?;
    let mut point_sub = node.subscribe::<PointStamped>("target_point", QosProfile::default())?;
    let source = p.urdf_source();
    // robot_state_publisher latches the description: only a transient
    // local subscription receives it after the fact.
    let mut description_sub = match source {
        UrdfSource::Topic => Some(node.subscribe::<r2r::std_msgs::msg::String>(
            "robot_description",
            QosProfile::default().keep_last(1).transient_local(),
        )?),
        _ => None,
    };
    let joint_pub = node.create_publisher::<r2r::sensor_msgs::msg::JointState>(
        "joint_states",
        QosProfile::default(),
    )?;
    let diag_pub = node.create_publisher::<r2r::diagnostic_msgs::msg::DiagnosticArray>(
        "/diagnostics",
        QosProfile::default(),
    )?;
    let marker_pub = node.create_publisher::<r2r::visualization_msgs::msg::MarkerArray>(
        "~/markers",
        QosProfile::default(),
    )?;
    let clock = node.get_ros_clock();

    let _spinner = Spinner::start(node)?;
    tokio::spawn(param_server);
    let event_log = log.clone();
    tokio::spawn(param_events.for_each(move |(name, value)| {
        r2r::log_warn!(
            &event_log,
            "parameter {name} set to {value:?}; ik_node reads its parameters at start: restart it to apply"
        );
        futures::future::ready(())
    }));

    let chain = match source {
        UrdfSource::File(path) => Chain::from_urdf_file(&path, p.base(), p.tip())?,
        UrdfSource::Xml(xml) => Chain::from_urdf_str(&xml, p.base(), p.tip())?,
        UrdfSource::Topic => {
            let sub = description_sub
                .as_mut()
                .expect("subscribed above for this source");
            r2r::log_info!(
                &log,
                "no urdf_path or robot_description parameter: waiting for the robot_description topic"
            );
            let mut reminder = interval(WAIT_LOG_PERIOD);
            reminder.tick().await;
            let xml = loop {
                tokio::select! {
                    m = sub.next() => match m {
                        Some(m) => break m.data,
                        None => anyhow::bail!("the robot_description subscription closed"),
                    },
                    _ = reminder.tick() => r2r::log_info!(&log, "still waiting for robot_description"),
                    s = &mut shutdown => {
                        r2r::log_info!(&log, "{} while waiting for robot_description: exiting", s?);
                        return Ok(());
                    }
                }
            };
            Chain::from_urdf_str(&xml, p.base(), p.tip()).context("the robot_description topic")?
        }
    };
    drop(description_sub);

    let rate_hz = settings.motion.rate_hz;
    let built = run::build_node(&p, &chain)?;
    for warning in built.warnings.iter().filter(|w| !early.contains(w)) {
        r2r::log_warn!(&log, "{warning}");
    }
    let mut core = built.core;
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

    // Real ROS builds make the template here; see convert::markers.
    let marker_template = Marker::default();
    let mut health = HealthMonitor::new();
    let mut ticks = interval(Duration::from_secs_f64(1.0 / rate_hz));
    // A late tick delays the arm (each tick is one motion period) rather
    // than bursting to catch up.
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut diagnostics = interval(DIAGNOSTICS_PERIOD);
    diagnostics.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut markers = interval(MARKER_PERIOD);
    markers.set_missed_tick_behavior(MissedTickBehavior::Skip);

    let stop = loop {
        tokio::select! {
            // Shutdown first, then targets before the tick that uses them.
            biased;
            s = &mut shutdown => break s?,
            Some(m) = pose_sub.next() => {
                let now = ros_now(&clock).as_secs_f64();
                if let Some(r) = core.on_target(&convert::target_from_pose(&m), now) {
                    r2r::log_debug!(&log, "target_pose rejected: {}", r.name());
                }
            }
            Some(m) = point_sub.next() => {
                let now = ros_now(&clock).as_secs_f64();
                if let Some(r) = core.on_target(&convert::target_from_point(&m), now) {
                    r2r::log_debug!(&log, "target_point rejected: {}", r.name());
                }
            }
            _ = ticks.tick() => {
                let now = ros_now(&clock);
                let js = core.tick(now.as_secs_f64()).joint_state;
                if let Err(e) = joint_pub.publish(&convert::joint_state(&js, stamp(now))) {
                    r2r::log_warn!(&log, "joint_states not published: {e}");
                }
            }
            _ = diagnostics.tick() => {
                let h = health.check(core.status(), rate_hz);
                let msg = convert::diagnostics(
                    &h,
                    report::key_values(core.status()),
                    &core.status().link,
                    stamp(ros_now(&clock)),
                );
                if let Err(e) = diag_pub.publish(&msg) {
                    r2r::log_warn!(&log, "diagnostics not published: {e}");
                }
            }
            _ = markers.tick() => {
                let msg = convert::markers(
                    &marker_template,
                    &core.chain().base,
                    stamp(ros_now(&clock)),
                    core.last_target(),
                    core.status().holding,
                    &core.tip_pose(),
                );
                if let Err(e) = marker_pub.publish(&msg) {
                    r2r::log_warn!(&log, "markers not published: {e}");
                }
            }
        }
    };
    let t = core.status().targets;
    r2r::log_info!(
        &log,
        "{stop}: shutting down after {} ticks; targets {} received, {} reached, {} rejected, {} unreachable",
        core.status().ticks,
        t.received,
        t.reached,
        t.rejected.total(),
        t.unreachable
    );
    Ok(())
}
