//! The thread that spins the ROS node, the node clock, and shutdown.

use anyhow::Context as _;
use r2r::Clock;
use std::future::Future;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};

/// How long one `spin_once` may block: also the longest the spin thread
/// takes to notice shutdown.
const SPIN_TIMEOUT: Duration = Duration::from_millis(20);

/// Owns the ROS node on its own thread, spinning until dropped. r2r has no
/// callbacks: someone must call `Node::spin_once` for messages, timers and
/// services to move, and it blocks. Dropping stops and joins the thread,
/// so every exit path (including errors after start) leaves no thread
/// behind and destroys the node cleanly.
///
/// Work that needs the node once it spins (a service created for a pose
/// recorded while the node runs) is sent to the thread as a job, run
/// between two `spin_once` calls ([`Spinner::with_node`]).
pub struct Spinner {
    running: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    jobs: mpsc::Sender<Job>,
}

type Job = Box<dyn FnOnce(&mut r2r::Node) + Send>;

impl Spinner {
    pub fn start(mut node: r2r::Node) -> anyhow::Result<Spinner> {
        let running = Arc::new(AtomicBool::new(true));
        let flag = running.clone();
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("ros_spin".into())
            .spawn(move || {
                while flag.load(Ordering::Relaxed) {
                    node.spin_once(SPIN_TIMEOUT);
                    while let Ok(job) = queue.try_recv() {
                        job(&mut node);
                    }
                }
            })
            .context("cannot start the spin thread")?;
        Ok(Spinner {
            running,
            thread: Some(thread),
            jobs,
        })
    }

    /// Runs `f` on the node on the spin thread (within one spin timeout)
    /// and gives back its result.
    pub async fn with_node<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut r2r::Node) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let (tx, rx) = futures::channel::oneshot::channel();
        let job: Job = Box::new(move |node| {
            let _ = tx.send(f(node));
        });
        let gone = || anyhow::anyhow!("the spin thread has stopped");
        self.jobs.send(job).map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
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
pub fn ros_now(clock: &Mutex<Clock>) -> Duration {
    let now = clock.lock().ok().and_then(|mut c| c.get_now().ok());
    // The ROS clock only fails when rcl is broken; system time keeps the
    // stamps meaningful rather than zero (which would stop TF).
    now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
    })
}

pub fn stamp(d: Duration) -> r2r::builtin_interfaces::msg::Time {
    Clock::to_builtin_time(&d)
}

/// A future that resolves when SIGINT or SIGTERM arrives, with the
/// signal's name. The handlers are installed here, before the future is
/// first polled: until then a signal would kill the process with the
/// default action, skipping the summary and the servo link's `on_exit`
/// (it did, for a SIGINT right after start). rcl installs no signal
/// handlers, so tokio's are the only ones.
pub fn shutdown_signal()
-> anyhow::Result<impl std::future::Future<Output = anyhow::Result<&'static str>>> {
    let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    Ok(async move {
        Ok(tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        })
    })
}

/// Runs a node's body to its end on one thread, and turns the end into
/// the exit code: an error is logged on the ROS log and on stderr (a
/// launch file shows one, a terminal the other). One thread is enough:
/// the node's own work is small and the spinning has its own thread.
pub fn main_on_one_thread(name: &str, body: impl Future<Output = anyhow::Result<()>>) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(body) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            r2r::log_error!(name, "{e:#}");
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
