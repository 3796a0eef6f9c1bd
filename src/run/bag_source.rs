//! Targets from a rosbag2 bag at their recorded timing: the bag's first
//! target is node time 0, and each message is due at its receive time
//! after it, read exactly as `ik_node` subscribes ([`TargetTopics`]) and
//! converted as `arm_ik replay` converts it.

use super::input::{Input, Poll};
use super::lines::InputError;
use crate::bag::{BagMessage, BagReader};
use crate::node::Command;
use crate::replay::topics::TargetTopics;

/// A bag being read, one message ahead of the loop.
pub struct BagSource {
    reader: BagReader,
    topics: TargetTopics,
    /// The next target message, read but not yet due.
    next: Option<BagMessage>,
    /// Receive time (ns) of the first target: node time 0.
    t0: Option<u64>,
    /// Target messages read (for error places).
    index: u64,
    ended: bool,
}

impl BagSource {
    /// Reads `reader`'s targets on `topics`; what of a pose's orientation
    /// counts is the node's `target_orientation` (`--position-only`:
    /// none).
    pub fn new(reader: BagReader, topics: TargetTopics) -> BagSource {
        BagSource {
            reader,
            topics,
            next: None,
            t0: None,
            index: 0,
            ended: false,
        }
    }

    /// The next message on a target topic; a read error ends the bag
    /// (what came before it was delivered) and is reported as bad input.
    fn peek(&mut self, take: &mut impl FnMut(Input)) -> Option<&BagMessage> {
        while self.next.is_none() && !self.ended {
            match self.reader.next() {
                Some(Ok(m)) if self.topics.target_type(&m.topic).is_some() => self.next = Some(m),
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    self.ended = true;
                    take(Input::Bad(InputError {
                        place: self.reader.path().display().to_string(),
                        why: format!("{e} (stopped reading; what came before was used)"),
                    }));
                }
                None => self.ended = true,
            }
        }
        self.next.as_ref()
    }

    /// Hands `take` every target due by node time `now` (s).
    pub fn poll(&mut self, now: f64, take: &mut impl FnMut(Input)) -> Poll {
        while let Some(log) = self.peek(take).map(|m| m.log_time_ns) {
            let t0 = *self.t0.get_or_insert(log);
            if log.saturating_sub(t0) as f64 / 1e9 > now {
                return Poll::More;
            }
            let Some(msg) = self.next.take() else { break };
            self.index += 1;
            take(self.input(&msg, t0));
        }
        Poll::Ended
    }

    fn input(&self, msg: &BagMessage, t0: u64) -> Input {
        let expected = self
            .topics
            .target_type(&msg.topic)
            .expect("only target topics are kept");
        match self.topics.decode(msg, expected, t0) {
            Ok(t) => Input::Command(Command::Target(t)),
            Err((kind, why)) => Input::Bad(InputError {
                place: format!("message {} on {}", self.index, msg.topic),
                why: format!("{kind}: {why}"),
            }),
        }
    }
}
