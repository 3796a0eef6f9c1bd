//! The link thread's loop: connect (with back-off), then one frame per
//! period through the protocol's session, the state kept in the shared
//! slot for the caller.

use super::ramp::Ramp;
use super::{
    LinkSettings, LinkState, OnExit, Pacing, Session, SessionError, Shared, StartPose, TickOutcome,
};
use serialport::SerialPort;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) struct Worker {
    pub(super) shared: Arc<Shared>,
    pub(super) path: String,
    pub(super) settings: LinkSettings,
    pub(super) session: Box<dyn Session>,
    pub(super) ramp: Ramp,
    /// The servos are limp on the port now (the caller's wish may have
    /// changed since).
    pub(super) limp: bool,
    pub(super) pacing: Pacing,
}

/// Why the thread woke.
enum Wake {
    Stop,
    /// The next frame or connection attempt is due (own clock, or the
    /// back-off while disconnected).
    Due,
    /// Paced by the caller: it asked for frame number `n`.
    Asked(u64),
}

/// When the next frame or attempt is due.
struct Timing {
    period: Duration,
    next: Instant,
    /// The wait before the next connection attempt.
    backoff: Duration,
}

impl Timing {
    /// The next frame one period on; when late (the machine was busy),
    /// one period from now: skip, do not burst.
    fn advance(&mut self, now: Instant) {
        self.next += self.period;
        if self.next < now {
            self.next = now + self.period;
        }
    }
}

/// Opens a serial port at `baud` with a short I/O timeout, so a stalled
/// port costs the thread at most that long per call.
fn open_port(path: &str, baud: u32) -> Result<Box<dyn SerialPort>, SessionError> {
    serialport::new(path, baud)
        .timeout(Duration::from_millis(50))
        .open()
        .map_err(|e| {
            let io: std::io::Error = e.into();
            SessionError::Io(std::io::Error::new(
                io.kind(),
                format!("cannot open {path}: {io}"),
            ))
        })
}

impl Worker {
    pub(super) fn run(mut self) {
        let mut timing = Timing {
            period: Duration::from_secs_f64(1.0 / self.settings.rate_hz),
            next: Instant::now(),
            backoff: self.settings.backoff_min,
        };
        let mut port: Option<Box<dyn SerialPort>> = None;
        loop {
            let wake = self.wait(timing.next, port.is_some());
            let now = Instant::now();
            match (wake, port.as_mut()) {
                (Wake::Stop, _) => break,
                (_, None) => port = self.try_connect(now, &mut timing),
                (Wake::Due, Some(io)) => {
                    if !self.frame(io.as_mut(), now, &mut timing).0 {
                        port = None;
                    }
                }
                (Wake::Asked(n), Some(io)) => {
                    let (ok, fresh) = self.frame(io.as_mut(), now, &mut timing);
                    if !ok {
                        port = None;
                    }
                    self.answer(n, fresh);
                }
            }
        }
        if let Some(io) = port.as_mut() {
            self.exit(io.as_mut());
        }
        let mut s = self.shared.lock();
        self.session.report(&mut s.status);
        s.status.relaxed = self.limp;
        s.status.state = LinkState::Closed;
    }

    /// What `link.on_exit` asks, then the session's own goodbye, while the
    /// port is still open.
    fn exit(&mut self, io: &mut dyn SerialPort) {
        if self.settings.on_exit == OnExit::Relax && !self.limp {
            match self.session.relax_on_exit(io) {
                Ok(()) => self.limp = true,
                Err(e) => {
                    self.shared.lock().status.last_error = Some(format!("relaxing on exit: {e}"));
                }
            }
        }
        self.session.close(io);
    }

    /// Tells a caller waiting in [`exchange`](super::Link::exchange) that
    /// frame `n` is done, and whether it read present positions.
    fn answer(&self, n: u64, fresh: bool) {
        let mut s = self.shared.lock();
        s.done = s.done.max(n);
        s.fresh = fresh;
        drop(s);
        self.shared.wake.notify_all();
    }

    /// Sleeps until the next frame or attempt is due (`until`; paced by
    /// the caller and `connected`, until it asks for a frame) or a stop
    /// request. A frame asked for while disconnected is answered at once,
    /// with nothing read.
    fn wait(&self, until: Instant, connected: bool) -> Wake {
        let paced = self.pacing == Pacing::Caller;
        let mut s = self.shared.lock();
        loop {
            if s.stop {
                return Wake::Stop;
            }
            if paced && s.requested > s.done {
                if connected {
                    return Wake::Asked(s.requested);
                }
                s.done = s.requested;
                s.fresh = false;
                self.shared.wake.notify_all();
            }
            let now = Instant::now();
            if now >= until && !(paced && connected) {
                return Wake::Due;
            }
            let until = if paced && connected {
                now + Duration::from_secs(1)
            } else {
                until
            };
            s = self
                .shared
                .wake
                .wait_timeout(s, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Opens the port and sets the hardware up: checked, then holding from
    /// where it is, or limp when the caller asked for that (a replugged
    /// arm that was relaxed stays relaxed).
    fn connect(&mut self) -> Result<Box<dyn SerialPort>, SessionError> {
        let mut port = open_port(&self.path, self.settings.baud)?;
        let opened = self.session.open(port.as_mut());
        let notes = self.session.take_notes();
        self.shared.lock().notes.extend(notes);
        opened?;
        let relaxed = self.shared.lock().relaxed;
        if relaxed {
            self.session.relax(port.as_mut())?;
            self.limp = true;
            self.shared.lock().status.present = None;
        } else {
            let start = self.session.enable(port.as_mut())?;
            self.ramp.connected(&start);
            self.limp = false;
            self.set_start(start);
        }
        Ok(port)
    }

    /// Reports a measured start pose as the present positions (or none).
    fn set_start(&self, start: StartPose) {
        self.shared.lock().status.present = match start {
            StartPose::Measured(p) => Some(p),
            _ => None,
        };
    }

    /// Relaxes or enables the servos when the caller's wish changed since
    /// the last period.
    fn follow_relax(&mut self, io: &mut dyn SerialPort, relaxed: bool) -> Result<(), SessionError> {
        if relaxed == self.limp {
            return Ok(());
        }
        if relaxed {
            self.session.relax(io)?;
        } else {
            let start = self.session.enable(io)?;
            self.ramp.resumed(&start);
            self.set_start(start);
        }
        self.limp = relaxed;
        Ok(())
    }

    /// One connection attempt: on success the first frame is due at once,
    /// on failure the back-off doubles up to its cap.
    fn try_connect(&mut self, now: Instant, t: &mut Timing) -> Option<Box<dyn SerialPort>> {
        let result = self.connect();
        let mut s = self.shared.lock();
        match result {
            Ok(port) => {
                t.backoff = self.settings.backoff_min;
                s.status.connects += 1;
                s.status.attempts = 0;
                s.status.state = LinkState::Connected;
                s.status.ramping = self.ramp.starting();
                s.status.relaxed = self.limp;
                t.next = now;
                Some(port)
            }
            Err(e) => {
                s.status.attempts += 1;
                s.status.last_error = Some(e.to_string());
                s.status.state = LinkState::Disconnected {
                    error: e.to_string(),
                    retry_in_ms: t.backoff.as_millis() as u64,
                };
                self.session.report(&mut s.status);
                t.next = now + t.backoff;
                t.backoff = (t.backoff * 2).min(self.settings.backoff_max);
                None
            }
        }
    }

    /// One period on an open port; false when the port failed and must be
    /// closed (the link reconnects after the shortest back-off; the ramp
    /// keeps the pose reached, to resume from), and whether it read
    /// present positions.
    fn frame(&mut self, io: &mut dyn SerialPort, now: Instant, t: &mut Timing) -> (bool, bool) {
        let (target, sent_at, relaxed) = {
            let s = self.shared.lock();
            (s.target.clone(), s.sent_at, s.relaxed)
        };
        let stale =
            sent_at.is_some_and(|sent| now.duration_since(sent) > self.settings.command_timeout);
        if stale && !relaxed {
            // Write nothing, not even a heartbeat: the firmware's
            // watchdog must see the silence. (Relaxed servos have no
            // commands to go stale: the link keeps reading them.)
            self.shared.lock().status.paused = true;
            t.advance(now);
            return (true, false);
        }
        let result = self.follow_relax(io, relaxed).and_then(|()| {
            let output = if relaxed {
                None
            } else {
                self.ramp.step(target.as_deref(), t.period.as_secs_f64())
            };
            let tick = self.session.tick(io, output.as_deref(), now)?;
            Ok((tick, output))
        });
        let mut s = self.shared.lock();
        s.status.paused = false;
        s.status.relaxed = self.limp;
        let (ok, fresh) = match result {
            Ok((tick, output)) => {
                let fresh = tick.present.is_some();
                self.record(&mut s.status, tick, output, now);
                t.advance(now);
                (true, fresh)
            }
            Err(e) => {
                s.status.last_error = Some(e.to_string());
                s.status.state = LinkState::Disconnected {
                    error: e.to_string(),
                    retry_in_ms: t.backoff.as_millis() as u64,
                };
                t.next = now + t.backoff;
                (false, false)
            }
        };
        self.session.report(&mut s.status);
        (ok, fresh)
    }

    /// What a good tick sent and read, and whether the hardware is still
    /// answering.
    fn record(
        &self,
        status: &mut super::LinkStatus,
        tick: TickOutcome,
        output: Option<Vec<i32>>,
        now: Instant,
    ) {
        status.frames_sent += tick.frames_sent;
        if let Some(p) = tick.present {
            status.present = Some(p);
            status.readings += 1;
        }
        if let Some(e) = tick.effort {
            status.effort = Some(e);
        }
        if output.is_some() {
            status.output = output;
        }
        status.ramping = self.ramp.starting();
        let quiet = self
            .session
            .last_reply()
            .map_or(self.settings.reply_timeout, |r| now.duration_since(r));
        status.state = if quiet >= self.settings.reply_timeout {
            LinkState::Silent {
                for_ms: quiet.as_millis() as u64,
            }
        } else {
            LinkState::Connected
        };
    }
}
