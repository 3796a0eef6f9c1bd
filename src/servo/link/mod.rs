//! The serial link to servo hardware: one thread per port that owns all
//! the I/O, so the solver, the node's timer and the ROS executor never wait
//! on a serial port.
//!
//! The caller only swaps the latest commands into a slot ([`Link::send`])
//! and reads a snapshot of the state ([`Link::status`]); both take a mutex
//! the thread holds only for copies, never across I/O. The thread, at the
//! configured rate:
//! - opens the port and lets the protocol's [`Session`] set the hardware up
//!   (on failure: back-off doubling from 100 ms to 2 s, state
//!   [`LinkState::Disconnected`], and again);
//! - moves its output toward the latest commands no faster than each
//!   joint's speed limit, and, right after connecting to servos that report
//!   where they are (or, the first time, from the park pose the calibration
//!   gives for servos that cannot), no faster than the start-up speed
//!   (never a jump);
//! - sends one frame per period and reads the replies; no reply for the
//!   reply timeout is [`LinkState::Silent`], an I/O error (adapter
//!   unplugged) closes the port and reconnects, resuming from the pose the
//!   output had reached;
//! - lets the servos go limp when asked ([`Link::relax`]) and writes no
//!   command until [`Link::enable`], which resumes from where the servos
//!   are at the start-up speed; meanwhile it keeps reading what the
//!   hardware reports (a relaxed arm moved by hand shows where it is);
//! - on [`Link::close`] does what `link.on_exit` says (hold or relax)
//!   while the port is still open.
//!
//! Paced by its caller instead ([`Pacing::Caller`], what teleoperation
//! uses), the thread sends a frame only when asked ([`Link::exchange`]):
//! at once, returning when its replies are in, so one loop can read one
//! bus and write another within the same period instead of each waiting
//! for the next tick of a clock of its own. Connecting, the ramp, relax,
//! the command timeout and closing stay the thread's as above.
//!
//! Commands are in servo units (µs or ticks), already clamped by the
//! calibration's [`JointMap`]s; the ramp only interpolates between in-range values and
//! clamps again, so the thread cannot produce anything the calibration
//! would not.
//!
//! Nothing here knows a protocol: each brings its [`Session`] and its
//! [`LinkDefaults`].

mod ramp;
mod session;
mod settings;
mod status;
mod worker;

pub use session::{
    Session, SessionError, StartPose, TickOutcome, await_reply, read_available, read_within,
};
pub use settings::{LinkDefaults, LinkFile, LinkSettingError, LinkSettings, OnExit, WatchdogMode};
pub use status::{Detail, DetailValue, LinkState, LinkStatus};

use super::joint::{Effort, JointMap};
use ramp::Ramp;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;
use worker::Worker;

/// Who decides when the link sends a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// The link's own clock (`link.rate_hz`): the caller and the port
    /// never wait on each other.
    #[default]
    Own,
    /// The caller: [`Link::exchange`] sends one frame at once and waits for
    /// its replies, so a loop reads and writes within its own period.
    Caller,
}

struct Slot {
    target: Option<Vec<i32>>,
    /// Paced by the caller: frames asked for, and the last one done (with
    /// whether it read present positions).
    requested: u64,
    done: u64,
    fresh: bool,
    /// When the caller last sent commands.
    sent_at: Option<Instant>,
    status: LinkStatus,
    /// The caller wants the servos limp.
    relaxed: bool,
    stop: bool,
    /// What the session's set-up changed on the hardware, not yet taken.
    notes: Vec<String>,
}

struct Shared {
    slot: Mutex<Slot>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        // A panic in the other thread while copying cannot leave the slot
        // half-written in a way that matters; keep going.
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Handle to a running link thread. Dropping it closes the link.
pub struct Link {
    shared: Arc<Shared>,
    pacing: Pacing,
    thread: Option<JoinHandle<()>>,
}

impl Link {
    /// Starts the link thread on `port` for `session`, driving `joints`
    /// (chain order, as checked by the calibration). Returns at once; the
    /// connection is made (and remade) in the background.
    pub fn start(
        port: &str,
        joints: &[JointMap],
        settings: LinkSettings,
        session: Box<dyn Session>,
        pacing: Pacing,
    ) -> std::io::Result<Link> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot {
                target: None,
                requested: 0,
                done: 0,
                fresh: false,
                sent_at: None,
                status: LinkStatus {
                    port: port.to_string(),
                    ..LinkStatus::default()
                },
                relaxed: false,
                stop: false,
                notes: Vec::new(),
            }),
            wake: Condvar::new(),
        });
        let ramp = Ramp::new(joints, settings.startup_speed);
        let worker = Worker {
            shared: shared.clone(),
            path: port.to_string(),
            settings,
            session,
            ramp,
            limp: false,
            pacing,
        };
        let thread = std::thread::Builder::new()
            .name(format!("servo-link {port}"))
            .spawn(move || worker.run())?;
        Ok(Link {
            shared,
            pacing,
            thread: Some(thread),
        })
    }

    /// Replaces the commands to stream (servo units, chain order). Never
    /// waits on I/O.
    pub fn send(&self, commands: &[i32]) {
        let mut s = self.shared.lock();
        s.sent_at = Some(Instant::now());
        match &mut s.target {
            Some(t) if t.len() == commands.len() => t.copy_from_slice(commands),
            t => *t = Some(commands.to_vec()),
        }
    }

    /// Paced by the caller: sends one frame now (the latest commands, or
    /// only the read when there are none or the servos are relaxed) and
    /// waits at most `timeout` for it to be done. True when it was and it
    /// read present positions; false at once while the port is not
    /// connected. With [`Pacing::Own`] it waits for nothing and is false.
    pub fn exchange(&self, timeout: std::time::Duration) -> bool {
        if self.pacing == Pacing::Own {
            return false;
        }
        let deadline = Instant::now() + timeout;
        let mut s = self.shared.lock();
        s.requested += 1;
        let want = s.requested;
        self.shared.wake.notify_all();
        while s.done < want {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            s = self
                .shared
                .wake
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        s.fresh
    }

    /// A copy of the link's state.
    pub fn status(&self) -> LinkStatus {
        self.shared.lock().status.clone()
    }

    /// What setting the hardware up changed on it since last asked (one
    /// line each: which servos, what was written, from what), for the
    /// caller to say once.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut self.shared.lock().notes)
    }

    /// Present positions, when the servos report them.
    pub fn present(&self) -> Option<Vec<i32>> {
        self.shared.lock().status.present.clone()
    }

    /// How hard each servo pushes, when the servos report it (signed
    /// toward increasing servo command).
    pub fn effort(&self) -> Option<Vec<Effort>> {
        self.shared.lock().status.effort.clone()
    }

    /// Lets the servos go limp at the next period: the protocol's relax
    /// (torque off, pulses stopped). The commands sent so far are
    /// forgotten: nothing is written until [`enable`](Link::enable) and a
    /// new [`send`](Link::send), while the link keeps reading the servos.
    pub fn relax(&self) {
        let mut s = self.shared.lock();
        s.relaxed = true;
        s.target = None;
        drop(s);
        self.shared.wake.notify_all();
    }

    /// Makes limp servos hold again from where they are (bus servos: their
    /// measured positions; hobby servos: the park pose, else the last
    /// command), moving to the next command at the start-up speed.
    pub fn enable(&self) {
        self.shared.lock().relaxed = false;
        self.shared.wake.notify_all();
    }

    /// True between [`relax`](Link::relax) and [`enable`](Link::enable).
    pub fn relaxed(&self) -> bool {
        self.shared.lock().relaxed
    }

    /// Stops the thread (letting the session close the hardware politely)
    /// and returns the final state.
    pub fn close(mut self) -> LinkStatus {
        self.stop();
        self.status()
    }

    fn stop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop();
    }
}
