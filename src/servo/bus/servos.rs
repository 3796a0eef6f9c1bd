//! The servos of one bus as a session sees them: their ids, when each last
//! answered, which are awaited, and the request/reply exchange of opening,
//! relaxing and enabling, when the link waits for each answer.

use super::RxBuffer;
use super::encode::{BROADCAST_ID, EncodeError};
use crate::servo::link::{
    Detail, LinkStatus, SessionError, await_reply, read_available, read_within,
};
use serialport::SerialPort;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// One item a status reader found on the bus.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<S> {
    /// A status packet with a valid check, from servo `id`.
    Packet { id: u8, status: S },
    /// Bytes that looked like a status packet but were not a valid one.
    Corrupt,
}

/// What the shared session code reads of a protocol's status packet.
pub trait BusStatus {
    /// The servo that answered.
    fn id(&self) -> u8;
    /// The packet's parameter bytes.
    fn params(&self) -> &[u8];
}

/// A protocol's status reader: bytes from the bus go into its
/// [`RxBuffer`] and come out as status packets. The protocol decodes
/// (`next_status`: its header, length, check and stuffing rules); the
/// buffer handling and the replies the session code drives are the same
/// for every bus, so they are provided here.
pub trait StatusStream: Send {
    type Status: BusStatus;
    /// Why bytes that looked like a packet were not a valid one.
    type Error;
    /// The bytes received and not decoded yet.
    fn rx(&self) -> &RxBuffer;
    fn rx_mut(&mut self) -> &mut RxBuffer;
    /// The next complete packet or error; `None` when more bytes are
    /// needed.
    fn next_status(&mut self) -> Option<Result<Self::Status, Self::Error>>;

    /// Appends bytes received from the bus.
    fn push(&mut self, bytes: &[u8]) {
        self.rx_mut().push(bytes);
    }
    /// Bytes dropped so far while looking for a header.
    fn skipped(&self) -> u64 {
        self.rx().skipped()
    }
    /// Bytes received but not decoded yet (an incomplete packet).
    fn pending(&self) -> usize {
        self.rx().pending()
    }
    /// Drops everything pending (after a timeout, before a new request).
    fn clear(&mut self) {
        self.rx_mut().clear();
    }
    /// The next complete packet (or corrupt one); `None` when more bytes
    /// are needed.
    fn next_reply(&mut self) -> Option<Reply<Self::Status>> {
        Some(match self.next_status()? {
            Ok(status) => Reply::Packet {
                id: status.id(),
                status,
            },
            Err(_) => Reply::Corrupt,
        })
    }
}

/// Decodes every complete status packet in `bytes` with a fresh reader of
/// type `R`. An incomplete tail is ignored.
pub fn decode_all<R: StatusStream + Default>(bytes: &[u8]) -> Vec<Result<R::Status, R::Error>> {
    let mut r = R::default();
    r.push(bytes);
    std::iter::from_fn(|| r.next_status()).collect()
}

/// The servos a session drives on one bus, in chain order.
pub struct Servos<R> {
    /// Servo ids, chain order (checked by the calibration).
    pub ids: Vec<u8>,
    pub reply_timeout: Duration,
    reader: R,
    fresh: fn() -> R,
    /// Corrupt status packets.
    bad: u64,
    /// When each servo last answered: the bus is only as alive as its
    /// quietest servo.
    seen: Vec<Option<Instant>>,
    /// Asked by the last read and not answered yet.
    pub awaiting: Vec<bool>,
    /// Set up and streaming: only then is a quiet servo news (after a
    /// failed open, the error already says which servo failed).
    running: bool,
    /// When each servo was asked for the feedback replies not in yet,
    /// oldest first (replies come in order, some a tick or more late).
    pending: Vec<VecDeque<Instant>>,
    /// Feedback replies written off: not in within the reply timeout, or
    /// asked on a connection that was lost (one that turns up after all
    /// is taken back).
    missing: u64,
    /// A collect waits for the answers to the latest read only.
    latest: bool,
}

/// Runs `f` for servos `0..n`, every one of them even after a failure (a
/// servo that does not answer must not keep the others from being told);
/// the first failure.
pub fn for_each_servo(
    n: usize,
    mut f: impl FnMut(usize) -> Result<(), SessionError>,
) -> Result<(), SessionError> {
    let mut first = Ok(());
    for k in 0..n {
        let r = f(k);
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// The link status detail counting feedback replies that never came.
pub const REPLIES_MISSING: &str = "replies_missing";

impl<R: StatusStream> Servos<R> {
    /// The servos `ids`, read with readers made by `fresh`.
    pub fn new(ids: Vec<u8>, reply_timeout: Duration, fresh: fn() -> R) -> Servos<R> {
        let n = ids.len();
        Servos {
            ids,
            reply_timeout,
            reader: fresh(),
            fresh,
            bad: 0,
            seen: vec![None; n],
            awaiting: vec![false; n],
            running: false,
            pending: vec![VecDeque::new(); n],
            missing: 0,
            latest: false,
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Forgets what came before (a new connection): empty reader, nobody
    /// heard or awaited, not streaming.
    pub fn restart(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        io.clear(serialport::ClearBuffer::Input)
            .map_err(SessionError::from)?;
        self.reader = (self.fresh)();
        self.seen.fill(None);
        self.awaiting.fill(false);
        self.missing += self.pending.iter().map(|p| p.len() as u64).sum::<u64>();
        self.pending.iter_mut().for_each(VecDeque::clear);
        self.running = false;
        Ok(())
    }

    /// Set up: from now on a quiet servo is reported.
    pub fn set_running(&mut self) {
        self.running = true;
    }

    /// Writes an encoded packet. The ids were checked by the calibration,
    /// so encoding cannot fail; if it ever did, it is reported rather than
    /// a panic in the link thread.
    pub fn write(
        io: &mut dyn SerialPort,
        packet: Result<Vec<u8>, EncodeError>,
    ) -> Result<(), SessionError> {
        let bytes = packet.map_err(|e| SessionError::Device(format!("cannot encode: {e}")))?;
        io.write_all(&bytes).map_err(SessionError::Io)
    }

    /// Moves what the port has now into the reader, without waiting.
    pub fn poll(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        read_available(io, |b| self.reader.push(b))
    }

    /// The next status packet of one of our servos with its index, or one
    /// from the broadcast ID (index `None`: a reply for all of them);
    /// corrupt packets are counted and skipped, packets of other ids
    /// (another device on the bus) ignored.
    pub fn next(&mut self, now: Instant) -> Option<(Option<usize>, R::Status)> {
        while let Some(reply) = self.reader.next_reply() {
            let Reply::Packet { id, status } = reply else {
                self.bad += 1;
                continue;
            };
            if id == BROADCAST_ID {
                return Some((None, status));
            }
            if let Some(k) = self.ids.iter().position(|&i| i == id) {
                self.seen[k] = Some(now);
                return Some((Some(k), status));
            }
        }
        None
    }

    /// Servo `k` is asked for its feedback.
    pub fn ask(&mut self, k: usize) {
        let now = Instant::now();
        self.awaiting[k] = true;
        let pending = &mut self.pending[k];
        while pending
            .front()
            .is_some_and(|&t| now.duration_since(t) >= self.reply_timeout)
        {
            pending.pop_front();
            self.missing += 1;
        }
        pending.push_back(now);
    }

    /// Every servo is asked for its feedback (one read of them all).
    pub fn ask_all(&mut self) {
        for k in 0..self.ids.len() {
            self.ask(k);
        }
    }

    /// Servo `k`'s feedback came in (perhaps late, for an earlier read).
    /// Waiting for the latest read only ([`latest_only`](Self::latest_only)),
    /// a late answer to an earlier read leaves the servo awaited.
    pub fn answered(&mut self, k: usize) {
        if self.pending[k].pop_front().is_none() {
            self.missing = self.missing.saturating_sub(1);
        }
        self.awaiting[k] = self.latest && !self.pending[k].is_empty();
    }

    /// How long a tick's [`collect`](Self::collect) waits for its replies,
    /// `window` as a rule. Waiting for the latest read only, and while
    /// every servo has been answering, it waits up to the reply timeout
    /// instead: replies are then surely coming, and one that is late
    /// (a busy machine, a slow adapter) delays the tick rather than
    /// turning into a frame lost; a servo gone quiet gets `window`.
    pub fn window(&self, window: Duration) -> Duration {
        if self.latest && self.all_heard_within(self.reply_timeout, Instant::now()) {
            self.reply_timeout.max(window)
        } else {
            window
        }
    }

    /// A [`collect`](Self::collect) waits for the answers to the latest
    /// read, a late one to an earlier read not ending the wait: what a
    /// link paced by its caller wants (the caller waits for this tick's
    /// positions). Otherwise any answer ends it.
    pub fn latest_only(mut self, on: bool) -> Self {
        self.latest = on;
        self
    }

    /// Feedback replies asked for that did not come within the reply
    /// timeout.
    pub fn replies_missing(&self) -> u64 {
        let now = Instant::now();
        let overdue = self.pending.iter().flatten();
        let overdue = overdue.filter(|&&t| now.duration_since(t) >= self.reply_timeout);
        self.missing + overdue.count() as u64
    }

    /// Servo `k` answered at `now` (inside a reply for several).
    pub fn heard(&mut self, k: usize, now: Instant) {
        self.seen[k] = Some(now);
    }

    /// A packet that was valid but not usable (a reply for all servos
    /// that does not add up).
    pub fn count_bad(&mut self) {
        self.bad += 1;
    }

    /// Sends one instruction to servo `ids[k]` and waits, at most the reply
    /// timeout, for its status packet of `len` parameter bytes (or none:
    /// a refusal): used while opening, relaxing and enabling, when the link
    /// has nothing else to do. Its other packets meanwhile (late answers
    /// to the last tick's read) are dropped.
    pub fn request(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        packet: Result<Vec<u8>, EncodeError>,
        len: usize,
        what: &str,
    ) -> Result<R::Status, SessionError> {
        Self::write(io, packet)?;
        let reply = await_reply(io, self.reply_timeout, |io| {
            self.poll(io)?;
            while let Some((j, s)) = self.next(Instant::now()) {
                let n = s.params().len();
                match j {
                    Some(j) if j == k && (n == len || n == 0) => return Ok(Some(s)),
                    // A late answer to a feedback read (of one servo, or
                    // of all at once): in, though unused.
                    Some(j) => self.answered(j),
                    None => (0..self.ids.len()).for_each(|j| self.answered(j)),
                }
            }
            Ok(None)
        })?;
        reply.ok_or_else(|| {
            SessionError::NoReply(format!(
                "no reply from servo id {} on the bus ({what}, waited {} ms)",
                self.ids[k],
                self.reply_timeout.as_millis()
            ))
        })
    }

    /// Reads for at most `window` until no servo is awaited (waking as
    /// bytes arrive), handing every reply to `take` (which clears `awaiting` for what it answered).
    /// `next_request` may send another request whenever nothing is
    /// awaited (servos read one at a time); true when it did.
    pub fn collect(
        &mut self,
        io: &mut dyn SerialPort,
        window: Duration,
        mut take: impl FnMut(&mut Self, Option<usize>, R::Status, Instant),
        mut next_request: impl FnMut(&mut Self, &mut dyn SerialPort) -> Result<bool, SessionError>,
    ) -> Result<(), SessionError> {
        let deadline = Instant::now() + window;
        loop {
            self.poll(io)?;
            let now = Instant::now();
            while let Some((k, s)) = self.next(now) {
                take(self, k, s, now);
            }
            let waiting = self.awaiting.contains(&true);
            if !waiting && next_request(self, io)? {
                continue;
            }
            let t = Instant::now();
            if !waiting || t >= deadline {
                return Ok(());
            }
            // Woken by the next bytes, not by a timer: a reply is taken
            // as it lands.
            read_within(io, deadline - t, |b| self.reader.push(b))?;
        }
    }

    /// Every servo answered within `d` before `now`.
    pub fn all_heard_within(&self, d: Duration, now: Instant) -> bool {
        self.seen
            .iter()
            .all(|t| t.is_some_and(|t| now.saturating_duration_since(t) < d))
    }

    /// The oldest of the servos' last replies: one servo gone quiet makes
    /// the link silent.
    pub fn last_reply(&self) -> Option<Instant> {
        self.seen.iter().copied().min().flatten()
    }

    /// "servo id N: no reply for T ms" when servo `k` has been quiet for
    /// the reply timeout while streaming.
    pub fn quiet(&self, k: usize, now: Instant) -> Option<String> {
        let t = self.seen[k].filter(|_| self.running)?;
        let quiet = now.duration_since(t);
        (quiet >= self.reply_timeout).then(|| {
            format!(
                "servo id {}: no reply for {} ms",
                self.ids[k],
                quiet.as_millis()
            )
        })
    }

    /// Fills the link status with each servo's problems (`flags`: what
    /// the protocol knows of servo `k` beyond silence), the garbage count
    /// and the replies missing.
    pub fn report(&self, status: &mut LinkStatus, flags: impl Fn(usize) -> Option<String>) {
        let now = Instant::now();
        status.servo_errors.clear();
        for k in 0..self.ids.len() {
            status.servo_errors.extend(self.quiet(k, now));
            if let Some(f) = flags(k) {
                status
                    .servo_errors
                    .push(format!("servo id {}: {f}", self.ids[k]));
            }
        }
        status.reply_garbage = self.reader.skipped() + self.bad;
        status.details.retain(|d| d.key != REPLIES_MISSING);
        status
            .details
            .push(Detail::count(REPLIES_MISSING, self.replies_missing()));
    }
}
