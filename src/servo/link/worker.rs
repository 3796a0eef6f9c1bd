//! The link thread's loop: connect (with back-off), then one frame per
//! period through the protocol's session, the state kept in the shared
//! slot for the caller.

use super::ramp::Ramp;
use super::{LinkSettings, LinkState, Session, SessionError, Shared, StartPose, TickOutcome};
use serialport::SerialPort;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) struct Worker {
    pub(super) shared: Arc<Shared>,
    pub(super) path: String,
    pub(super) settings: LinkSettings,
    pub(super) session: Box<dyn Session>,
    pub(super) ramp: Ramp,
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
        while !self.wait(timing.next) {
            let now = Instant::now();
            match port.as_mut() {
                None => port = self.try_connect(now, &mut timing),
                Some(io) => {
                    if !self.frame(io.as_mut(), now, &mut timing) {
                        port = None;
                    }
                }
            }
        }
        if let Some(io) = port.as_mut() {
            self.session.close(io.as_mut());
        }
        let mut s = self.shared.lock();
        self.session.report(&mut s.status);
        s.status.state = LinkState::Closed;
    }

    /// Sleeps until `until` or a stop request; true when asked to stop.
    fn wait(&self, until: Instant) -> bool {
        let mut s = self.shared.lock();
        loop {
            if s.stop {
                return true;
            }
            let now = Instant::now();
            if now >= until {
                return false;
            }
            s = self
                .shared
                .wake
                .wait_timeout(s, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn connect(&mut self) -> Result<Box<dyn SerialPort>, SessionError> {
        let mut port = open_port(&self.path, self.settings.baud)?;
        let start = self.session.open(port.as_mut())?;
        self.ramp.connected(&start);
        let mut s = self.shared.lock();
        s.status.present = match start {
            StartPose::Measured(p) => Some(p),
            _ => None,
        };
        Ok(port)
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
    /// keeps the pose reached, to resume from).
    fn frame(&mut self, io: &mut dyn SerialPort, now: Instant, t: &mut Timing) -> bool {
        let (target, sent_at) = {
            let s = self.shared.lock();
            (s.target.clone(), s.sent_at)
        };
        if sent_at.is_some_and(|sent| now.duration_since(sent) > self.settings.command_timeout) {
            // Write nothing, not even a heartbeat: the firmware's
            // watchdog must see the silence.
            self.shared.lock().status.paused = true;
            t.advance(now);
            return true;
        }
        let output = self.ramp.step(target.as_deref(), t.period.as_secs_f64());
        let result = self.session.tick(io, output.as_deref(), now);
        let mut s = self.shared.lock();
        s.status.paused = false;
        let ok = match result {
            Ok(tick) => {
                self.record(&mut s.status, tick, output, now);
                t.advance(now);
                true
            }
            Err(e) => {
                s.status.last_error = Some(e.to_string());
                s.status.state = LinkState::Disconnected {
                    error: e.to_string(),
                    retry_in_ms: t.backoff.as_millis() as u64,
                };
                t.next = now + t.backoff;
                false
            }
        };
        self.session.report(&mut s.status);
        ok
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
