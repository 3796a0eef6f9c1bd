//! The clock a replay runs the node on.
//!
//! The live node compares each target's header stamp with its own clock
//! and refuses one older than `max_target_age`. A bag recorded live has
//! both on one clock, so replay takes the receive (log) times. A bag
//! recorded while another bag played (`ros2 bag play --clock` into the
//! node, `ros2 bag record` beside it) does not: the receive times are the
//! wall clock of the second recording, the stamps keep the first one's,
//! and every target looked years stale. So:
//!
//! - a recorded `/clock` ([`CLOCK`]; in the first 10 s of the bag) is the
//!   clock, as it was the node's (`use_sim_time`): each message's time is
//!   its receive time moved by the latest `/clock` before it (by the
//!   first, before there was one);
//! - otherwise the receive times ([`ClockSource::Receive`], the default),
//!   and when the stamps sit a constant offset from them [`BagClock::note`]
//!   says so and names `--clock stamps`;
//! - [`ClockSource::Stamps`] runs on the stamps themselves (a target
//!   stamped 0, "now", at the offset of the target before it).

use crate::bag::{BagError, BagMessage, BagReader, CLOCK, decode_clock};
use serde::Serialize;

/// Where `/clock` is recorded.
pub const CLOCK_TOPIC: &str = "/clock";

/// Which clock the node ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// The bag's receive (log) times.
    Receive,
    /// The targets' header stamps.
    Stamps,
    /// The recorded `/clock` topic.
    ClockTopic,
}

impl ClockSource {
    /// As `--clock` spells it.
    pub fn name(self) -> &'static str {
        match self {
            ClockSource::Receive => "receive",
            ClockSource::Stamps => "stamps",
            ClockSource::ClockTopic => "clock",
        }
    }
}

/// Whether a message is a recorded `/clock`.
fn is_clock(msg: &BagMessage) -> bool {
    &*msg.topic == CLOCK_TOPIC && &*msg.type_name == CLOCK
}

/// How long into a bag a recorded `/clock` is looked for (ns of receive
/// time): `ros2 bag play --clock` publishes it from the start, and a bag
/// that lists no topics (a bare MCAP file) is not read twice through.
const CLOCK_LOOKAHEAD_NS: u64 = 10_000_000_000;

/// How far the first recorded `/clock` is from its receive time (ns), read
/// ahead from a bag of its own: the offset of the targets that came
/// before it. `None` when the bag has no `/clock` in its first 10 s, or
/// none before a part that cannot be read (the replay itself reads up to
/// there and says so).
pub fn first_clock_offset(bag: &std::path::Path) -> Result<Option<i64>, BagError> {
    let mut reader = BagReader::open(bag)?;
    if let Some(declared) = reader.declared_topics()
        && !declared
            .iter()
            .any(|t| t.name == CLOCK_TOPIC && t.type_name == CLOCK)
    {
        return Ok(None);
    }
    let mut start = None;
    for msg in &mut reader {
        let Ok(msg) = msg else {
            return Ok(None);
        };
        let start = *start.get_or_insert(msg.log_time_ns);
        if msg.log_time_ns > start.saturating_add(CLOCK_LOOKAHEAD_NS) {
            return Ok(None);
        }
        if is_clock(&msg)
            && let Ok(clock) = decode_clock(&msg.data)
        {
            return Ok(Some(clock - msg.log_time_ns as i64));
        }
    }
    Ok(None)
}

/// The node's time for each message of a bag, on the chosen clock.
#[derive(Debug, Clone)]
pub struct BagClock {
    source: ClockSource,
    /// Clock minus receive time (ns): from the latest `/clock`, or the
    /// latest stamped target.
    offset: i64,
    /// Receive time minus stamp of the stamped targets (ns): smallest and
    /// largest, to tell a constant offset.
    gap: Option<(i64, i64)>,
}

impl BagClock {
    /// On `source`; `offset` is the first `/clock`'s (see
    /// [`first_clock_offset`]), 0 otherwise.
    pub fn new(source: ClockSource, offset: i64) -> BagClock {
        BagClock {
            source,
            offset,
            gap: None,
        }
    }

    pub fn source(&self) -> ClockSource {
        self.source
    }

    /// Takes a recorded `/clock`; true when `msg` was one (it is no target).
    pub fn observe(&mut self, msg: &BagMessage) -> bool {
        if !is_clock(msg) {
            return false;
        }
        if self.source == ClockSource::ClockTopic
            && let Ok(clock) = decode_clock(&msg.data)
        {
            self.offset = clock - msg.log_time_ns as i64;
        }
        true
    }

    /// The node time (ns) of a target received at `log` with header stamp
    /// `stamp_ns` (0: none, or not decoded).
    pub fn node_ns(&mut self, log: u64, stamp_ns: i64) -> i64 {
        let log = log as i64;
        if stamp_ns != 0 {
            let gap = log - stamp_ns;
            self.gap = Some(
                self.gap
                    .map_or((gap, gap), |(lo, hi)| (lo.min(gap), hi.max(gap))),
            );
            if self.source == ClockSource::Stamps {
                self.offset = -gap;
            }
        }
        log + self.offset
    }

    /// On the receive clock, when every stamp sits the same distance
    /// (within `max_age` s) behind or ahead of its receive time and that
    /// distance is more than `max_age`: what it means and the option that
    /// replays on the stamps' clock.
    pub fn note(&self, max_age: f64) -> Option<String> {
        let (lo, hi) = self.gap?;
        let (lo_s, hi_s) = (lo as f64 / 1e9, hi as f64 / 1e9);
        let mid = (lo_s + hi_s) / 2.0;
        if self.source != ClockSource::Receive || hi_s - lo_s > max_age || mid.abs() <= max_age {
            return None;
        }
        let side = if mid > 0.0 { "behind" } else { "ahead of" };
        Some(format!(
            "the header stamps sit a constant {:.0} s {side} the receive times (within {:.3} s): \
             a bag recorded while another played back keeps the first recording's stamps; \
             --clock stamps replays on the stamps' own clock",
            mid.abs(),
            hi_s - lo_s
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_offset_is_noticed_and_followed_on_the_stamps_clock() {
        let year = 31_536_000_000_000_000_i64;
        let mut receive = BagClock::new(ClockSource::Receive, 0);
        let mut stamps = BagClock::new(ClockSource::Stamps, 0);
        for k in 0..10_i64 {
            let stamp = 1_600_000_000_000_000_000 + k * 20_000_000;
            let log = (stamp + 3 * year + k % 3 * 1_000_000) as u64;
            assert_eq!(receive.node_ns(log, stamp), log as i64);
            assert_eq!(stamps.node_ns(log, stamp), stamp);
        }
        let note = receive.note(0.5).unwrap();
        assert!(
            note.contains("94608000 s behind") && note.contains("--clock stamps"),
            "{note}"
        );
        assert_eq!(stamps.note(0.5), None);
        // Stamps that follow their receive times, or wander: nothing to say.
        let mut live = BagClock::new(ClockSource::Receive, 0);
        live.node_ns(1_000_000_000, 999_000_000);
        assert_eq!(live.note(0.5), None);
        let mut wander = BagClock::new(ClockSource::Receive, 0);
        wander.node_ns(10 * year as u64, year);
        wander.node_ns(10 * year as u64, 2 * year);
        assert_eq!(wander.note(0.5), None);
        // A zero stamp on the stamps clock keeps the last target's offset
        // (the last one above, k = 9, was received 3 years after its stamp).
        let log = (3 * year + 1_600_000_000_000_000_500) as u64;
        assert_eq!(stamps.node_ns(log, 0), 1_600_000_000_000_000_500);
    }
}
