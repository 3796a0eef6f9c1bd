//! What a protocol provides the link thread: a [`Session`] that talks to
//! its hardware on the port the link owns.

use super::LinkStatus;
use crate::servo::joint::Effort;
use serialport::SerialPort;
use std::io::ErrorKind;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a session step failed; decides what the link does next.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The port failed (unplugged, closed): close it and reconnect.
    #[error("{0}")]
    Io(std::io::Error),
    /// The hardware did not answer in time.
    #[error("{0}")]
    NoReply(String),
    /// The hardware answered, but not as it should (refused a setting,
    /// restarted, reported an error): set it up again.
    #[error("{0}")]
    Device(String),
}

impl From<serialport::Error> for SessionError {
    fn from(e: serialport::Error) -> SessionError {
        SessionError::Io(e.into())
    }
}

/// Reads whatever the port holds now, without waiting for more, and hands
/// it to `sink`: the one read every protocol session makes each tick, so a
/// quiet port never stalls the link thread.
pub fn read_available(
    io: &mut dyn SerialPort,
    sink: impl FnOnce(&[u8]),
) -> Result<(), SessionError> {
    let n = io.bytes_to_read().map_err(SessionError::from)? as usize;
    if n > 0 {
        let mut buf = vec![0u8; n];
        let got = io.read(&mut buf).map_err(SessionError::Io)?;
        sink(&buf[..got]);
    }
    Ok(())
}

/// Waits at most `timeout` for bytes from the port and hands what came to
/// `sink`: the wait ends the moment the first byte arrives (the port's
/// read blocks on the descriptor), so a reply is taken as it lands rather
/// than at the next poll of a sleeping loop. The port's own timeout is put
/// back afterwards.
pub fn read_within(
    io: &mut dyn SerialPort,
    timeout: Duration,
    sink: impl FnOnce(&[u8]),
) -> Result<(), SessionError> {
    let before = io.timeout();
    io.set_timeout(timeout).map_err(SessionError::from)?;
    let mut buf = [0u8; 512];
    let got = io.read(&mut buf);
    io.set_timeout(before).map_err(SessionError::from)?;
    match got {
        Ok(0) => {
            // A port that reports its end at once: do not spin on it.
            std::thread::sleep(timeout.min(IDLE_POLL));
            Ok(())
        }
        Ok(n) => {
            sink(&buf[..n]);
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::TimedOut => Ok(()),
        Err(_) => {
            // Not this wait's to judge (a hang-up, a signal): the next
            // read_available reports a port that failed, as before.
            std::thread::sleep(timeout.min(IDLE_POLL));
            Ok(())
        }
    }
}

/// The pause of a wait on a port that gives no bytes and no wait.
const IDLE_POLL: Duration = Duration::from_micros(300);

/// Where the servos are when a session has set the hardware up: the start
/// of the link's slow start-up move.
#[derive(Debug, Clone, PartialEq)]
pub enum StartPose {
    /// Read from the servos themselves (bus servos): also reported as
    /// their present positions.
    Measured(Vec<i32>),
    /// What the hardware has been sending them (a firmware bridge left
    /// pulsing by an earlier run, its watchdog holding): the servos have
    /// gone there, but nothing measured it.
    Commanded(Vec<i32>),
    /// Nobody can tell (hobby servos without pulses: just powered, or
    /// relaxed).
    Unknown,
}

/// What one tick produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TickOutcome {
    /// Command frames written.
    pub frames_sent: u64,
    /// Present positions read back (servo units, chain order), when the
    /// protocol reads them this tick.
    pub present: Option<Vec<i32>>,
    /// How hard each servo pushes (chain order), when the protocol reads it
    /// this tick: signed toward increasing servo command.
    pub effort: Option<Vec<Effort>>,
}

/// One protocol's conversation with its hardware, run by the link thread
/// on the port it owns. Each protocol module implements it and its
/// [`Protocol::session`](crate::servo::protocol::Protocol::session) makes
/// one; the link supplies the timing, ramp, back-off and state.
///
/// After the port opens the link calls [`open`](Session::open), then
/// [`enable`](Session::enable) (or [`relax`](Session::relax) when the
/// caller asked for limp servos), then [`tick`](Session::tick) once per
/// period; relax and enable again whenever the caller asks.
pub trait Session: Send {
    /// Finds and checks the hardware after the port opened (every servo
    /// there, of the expected kind, set up), changing nothing that moves
    /// it: a refusal here leaves the arm as it was.
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError>;
    /// Makes the servos hold from where they are and returns where that
    /// is (servo units, chain order), as far as the hardware can tell: the
    /// start of the link's slow move to the next command. Bus servos read
    /// their positions and set goal = present before switching torque on.
    fn enable(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError>;
    /// Lets the servos go limp (torque off, or no pulses). Until
    /// [`enable`](Session::enable), ticks carry no commands.
    fn relax(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError>;
    /// [`relax`](Session::relax) as the link closes (`link.on_exit:
    /// relax`): nothing waits on the link then, so a session may give the
    /// acknowledgement longer than a reply timeout, rather than report
    /// servos it did relax as holding because one reply was slow.
    fn relax_on_exit(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        self.relax(io)
    }
    /// One period: sends `commands` (none: only keep the link alive and
    /// read what the hardware reports) and reads replies without waiting
    /// for them.
    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        now: Instant,
    ) -> Result<TickOutcome, SessionError>;
    /// When the hardware last answered.
    fn last_reply(&self) -> Option<Instant>;
    /// Copies what the protocol knows into the status: problems of
    /// single servos ([`LinkStatus::servo_errors`]), garbage and lost
    /// frames, and its own counters as named [`details`](LinkStatus::details).
    fn report(&self, status: &mut LinkStatus);
    /// What setting the hardware up changed on it (a register written,
    /// naming the servos and the old values), one line each, taken once
    /// after [`open`](Session::open) for the caller to say once.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Called on [`Link::close`](super::Link::close) while the port is
    /// still open, after the link did what `link.on_exit` says.
    fn close(&mut self, _io: &mut dyn SerialPort) {}
}

/// Waits at most `timeout` for the reply a request is after: `step` polls
/// the port and returns the reply once it has come. The one wait of every
/// session's request/reply exchange (set-up, relax, enable), when the
/// link has nothing else to do; `None` when the time ran out.
pub fn await_reply<T>(
    io: &mut dyn SerialPort,
    timeout: Duration,
    mut step: impl FnMut(&mut dyn SerialPort) -> Result<Option<T>, SessionError>,
) -> Result<Option<T>, SessionError> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(reply) = step(io)? {
            return Ok(Some(reply));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_micros(500).min(deadline - now));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn read_within_takes_the_bytes_that_come_and_keeps_the_ports_timeout() {
        let (mut host, mut bus) = serialport::TTYPort::pair().unwrap();
        host.set_timeout(Duration::from_millis(50)).unwrap();
        let mut got = Vec::new();
        // A quiet port: nothing, and no error.
        read_within(&mut host, Duration::from_millis(5), |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert!(got.is_empty());
        bus.write_all(&[0xFF, 0xFF, 0x01]).unwrap();
        read_within(&mut host, Duration::from_secs(5), |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert_eq!(got, [0xFF, 0xFF, 0x01]);
        assert_eq!(host.timeout(), Duration::from_millis(50));
    }
}
