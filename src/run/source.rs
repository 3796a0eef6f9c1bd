//! Where the commands of a run come from: a built-in path, JSON lines
//! (stdin), or a target bag at its recorded timing. One enum, so the loop
//! ([`super::driver`]) is written once for all of them.

use super::bag_source::BagSource;
use super::input::{Input, Poll};
use super::leader_source::LeaderSource;
use super::lines::{InputError, Line, READ_AHEAD};
use crate::node::{Command, FigureEight, TargetMsg};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A source of commands.
pub enum Source {
    /// A target on `path` at every tick, stamped with the tick's time, in
    /// the base frame `frame`; never ends.
    Path {
        path: FigureEight,
        period: f64,
        frame: String,
    },
    /// JSON lines (see [`super::lines`]).
    Lines(LineSource),
    /// Targets from a bag at their recorded timing.
    Bag(Box<BagSource>),
    /// A leader arm read at every tick, and command lines (stdin: relax,
    /// enable, ...) beside it, whose end ends nothing.
    Leader {
        leader: Box<LeaderSource>,
        lines: Option<LineSource>,
    },
}

/// JSON lines read on their own thread.
pub struct LineSource {
    rx: mpsc::Receiver<Line>,
    /// One command per tick, waiting for it (simulated time: a line is
    /// the input of one tick), rather than everything that arrived since
    /// the last tick (wall clock: input faster than the loop is fine).
    lockstep: bool,
}

impl LineSource {
    pub fn new(rx: mpsc::Receiver<Line>, lockstep: bool) -> LineSource {
        LineSource { rx, lockstep }
    }

    pub(super) fn poll(&mut self, stop: &AtomicBool, take: &mut impl FnMut(Input)) -> Poll {
        let mut taken = 0usize;
        loop {
            let item = if self.lockstep {
                match self.rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(x) => x,
                    Err(mpsc::RecvTimeoutError::Timeout) if !stop.load(Ordering::Relaxed) => {
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => return Poll::More,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Poll::Ended,
                }
            } else {
                // At most one read-ahead's worth, so a writer that never
                // pauses (a file, `yes`) cannot keep the tick from running.
                if taken >= READ_AHEAD {
                    return Poll::More;
                }
                match self.rx.try_recv() {
                    Ok(x) => x,
                    Err(mpsc::TryRecvError::Empty) => return Poll::More,
                    Err(mpsc::TryRecvError::Disconnected) => return Poll::Ended,
                }
            };
            taken += 1;
            match item {
                // A blank line: one tick without input in lockstep, nothing
                // on the wall clock (time passes there anyway).
                (_, Ok(None)) if self.lockstep => return Poll::More,
                (_, Ok(None)) => {}
                (_, Ok(Some(cmd))) => {
                    take(Input::Command(cmd));
                    if self.lockstep {
                        return Poll::More;
                    }
                }
                (n, Err(why)) => take(Input::Bad(InputError {
                    place: format!("stdin line {n}"),
                    why,
                })),
            }
        }
    }
}

impl Source {
    /// What connecting set up on a leader arm's servos, once.
    pub fn take_link_notice(&mut self) -> Option<String> {
        match self {
            Source::Leader { leader, .. } => leader.take_link_notice(),
            _ => None,
        }
    }

    /// Hands `take` the commands due at node time `now` (s). `stop` ends a
    /// wait for input early.
    pub fn poll(&mut self, now: f64, stop: &AtomicBool, take: &mut impl FnMut(Input)) -> Poll {
        match self {
            Source::Path {
                path,
                period,
                frame,
            } => {
                take(Input::Command(Command::Target(TargetMsg {
                    stamp: now,
                    frame_id: frame.clone(),
                    position: path.at(now, *period),
                    orientation: None,
                })));
                Poll::More
            }
            Source::Lines(lines) => lines.poll(stop, take),
            Source::Bag(bag) => bag.poll(now, take),
            Source::Leader { leader, lines } => {
                leader.poll(now, take);
                if let Some(l) = lines
                    && l.poll(stop, take) == Poll::Ended
                {
                    *lines = None;
                }
                Poll::More
            }
        }
    }

    /// True for sources whose input can pile up between ticks (for the
    /// summary's most-inputs-in-one-tick figure).
    pub fn streams(&self) -> bool {
        !matches!(self, Source::Path { .. })
    }
}
