//! Whether the servos took what the node reached. The node core counts a
//! target as reached when its solve is followed; on real servos that
//! means something only if the link carried it: a run on a port that
//! never opened once said "1 received, 1 reached" and exited 0, while the
//! arm never moved. A reached target is sent when the link is up at its
//! tick or at a later one while it is still the latest (a link that comes
//! up late still takes it); one replaced by a newer reached target before
//! the link came up, or still waiting when the run ended, was never sent.

use serde::Serialize;

/// What the servo link carried, over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// The link was up (connected, or virtual servos) at some tick.
    pub connected: bool,
    /// Ticks with the link down: connecting, disconnected or silent.
    pub down_ticks: u64,
    /// Reached targets the servos took.
    pub sent: u64,
    /// Reached targets the servos never took.
    pub not_sent: u64,
    /// The node's reached count so far.
    #[serde(skip)]
    seen: u64,
    /// Reached since the link was last up.
    #[serde(skip)]
    waiting: u64,
}

impl Delivery {
    /// After a tick: the node's reached count and whether the link is up.
    pub fn observe(&mut self, reached: u64, link_ok: bool) {
        self.waiting += reached.saturating_sub(self.seen);
        self.seen = reached;
        if link_ok {
            self.connected = true;
            // Only the latest of the targets that waited is what the
            // servos are now sent.
            self.sent += self.waiting.min(1);
            self.not_sent += self.waiting.saturating_sub(1);
            self.waiting = 0;
        } else {
            self.down_ticks += 1;
        }
    }

    /// At the end of the run: what still waited was never sent.
    pub fn finish(&mut self) {
        self.not_sent += self.waiting;
        self.waiting = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ticks: &[(u64, bool)]) -> Delivery {
        let mut d = Delivery::default();
        for &(reached, ok) in ticks {
            d.observe(reached, ok);
        }
        d.finish();
        d
    }

    #[test]
    fn a_target_counts_once_the_link_carried_it() {
        // Up all along (virtual servos): every reached target was sent.
        let d = run(&[(1, true), (1, true), (2, true)]);
        assert_eq!(
            (d.connected, d.sent, d.not_sent, d.down_ticks),
            (true, 2, 0, 0)
        );
        // A port that never opened: nothing was sent.
        let d = run(&[(1, false), (1, false), (1, false)]);
        assert_eq!(
            (d.connected, d.sent, d.not_sent, d.down_ticks),
            (false, 0, 1, 3)
        );
        // Connecting at the first target, up a tick later: it was sent.
        let d = run(&[(1, false), (1, true)]);
        assert_eq!((d.sent, d.not_sent), (1, 0));
        // Two targets while the link was down: the servos got the second.
        let d = run(&[(1, true), (2, false), (3, false), (3, true)]);
        assert_eq!((d.sent, d.not_sent, d.down_ticks), (2, 1, 2));
        // Down at the end with a target waiting: not sent.
        let d = run(&[(1, true), (2, false)]);
        assert_eq!((d.sent, d.not_sent), (1, 1));
    }
}
