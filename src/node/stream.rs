//! A stream of targets (a program publishing a path at 10–50 Hz): the
//! answers are a sampled joint path, and the motion follows the path
//! between them instead of stopping at each.
//!
//! The motion limiter's `step` plans a stop at its goal every tick. Fed
//! one answer per sample, a joint moving at speed `u` must stay
//! `u²/2a` behind its goal to be able to stop there, and brakes and
//! accelerates again at every sample (a saw-tooth at the acceleration
//! limit): the tip falls behind by more than the sampling explains, and
//! the more the faster the joints move (a redundant arm's answers move
//! some joints faster than the path that made the targets; issue 22).
//! Here, while the answers come at a steady pace, the goal moves from the
//! previous answer to the latest one over the stream's period, and the
//! limiter tracks that moving goal (`MotionLimiter::track`, within the
//! same speed, acceleration and position limits), so the arm moves on
//! at the path's pace and arrives at the latest answer when the next is
//! due. A pause in the stream ends it: the goal rests at the last answer.
//!
//! An answer that leaves the stream's joint path while its target keeps to
//! the target path is a reconfiguration: the arm would swing to another
//! branch, its tip sweeping off the path (benches/README.md, "Why no rule
//! that solves target by target meets the goal on every path"). The
//! stream names it ([`TargetStream::swing`]) so the node can hold the arm
//! instead, as MoveIt Servo halts at a singularity or a joint limit.

/// Answers further apart than this (s) are not a stream: the motion goes
/// to each as to a single target.
pub const MAX_GAP: f64 = 0.25;
/// Weight of the latest gap in the period's running estimate: answers
/// come on the control ticks, so a 20 Hz stream on a 50 Hz loop arrives
/// 40 and 60 ms apart by turns.
const PERIOD_WEIGHT: f64 = 0.3;
/// An answer that moves a joint more than this many times what its speed
/// limit allows since the sample before is a swing, not a step of the
/// path: a stream's answers keep within once that (else the stream ends),
/// and a swing to another branch moves a joint by a radian or more.
const SWING_FACTOR: f64 = 2.0;

/// A streamed answer the arm could reach only by swinging to another
/// configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Swing {
    /// The joint (chain index) that moves the most for its speed limit,
    /// how far (rad or m) and in how long (s: the time since the sample
    /// before, at least the stream's period).
    pub joint: usize,
    pub change: f64,
    pub within: f64,
}

/// Where a stream of answers is, if one is coming.
#[derive(Debug, Clone, Default)]
pub struct TargetStream {
    /// The goal moves from `from` to `to` over `period` from `since`.
    from: Vec<f64>,
    to: Vec<f64>,
    /// The answer before `to`.
    previous: Vec<f64>,
    since: f64,
    /// `None` while the answers do not come as a stream.
    period: Option<f64>,
    /// When the latest answer came.
    last: Option<f64>,
    /// When the latest streamed sample came, followed or held
    /// ([`TargetStream::held`]).
    sampled: Option<f64>,
}

impl TargetStream {
    /// A new answer `to` at `now`, the arm at `arm`; `speeds` the joints'
    /// speed limits. It continues the stream when it came within
    /// [`MAX_GAP`] of the one before and no joint would need more than its
    /// speed limit to get there in that time, from the stream's goal or
    /// from the arm (a reconfiguration, or an arm still on its way to
    /// the path, is a move, not a path).
    pub fn answered(&mut self, now: f64, to: &[f64], arm: &[f64], speeds: &[f64]) {
        let gap = self.last.map(|t| now - t);
        self.last = Some(now);
        self.sampled = Some(now);
        let from = match self.period {
            Some(_) => self.goal(now).unwrap_or_else(|| self.to.clone()),
            None => self.to.clone(),
        };
        let within = |a: &[f64], g: f64| {
            a.len() == to.len()
                && a.iter()
                    .zip(to)
                    .zip(speeds)
                    .all(|((a, b), v)| (b - a).abs() <= v * g)
        };
        let paced = gap
            .filter(|&g| g > 0.0 && g <= MAX_GAP)
            .filter(|&g| within(&from, g) && within(arm, g));
        self.period = paced.map(|g| match self.period {
            Some(p) => p + PERIOD_WEIGHT * (g - p),
            None => g,
        });
        self.from = from;
        self.previous = std::mem::replace(&mut self.to, to.to_vec());
        self.since = now;
    }

    /// Ends the stream (the goal was set some other way).
    pub fn end(&mut self) {
        self.period = None;
        self.last = None;
        self.sampled = None;
    }

    /// When `to` (an answer at `now`) comes within [`MAX_GAP`] of the
    /// sample before, the joint that `to` would move more than
    /// `SWING_FACTOR` (2) times what its speed (`speeds`) allows in that
    /// time (at least the stream's period) from the latest answer, if any
    /// (the one moving most for its speed). Also while the arm trails the
    /// answers and they are no stream to follow between (a swing is then
    /// no less one). Whether the target itself jumped is the caller's to
    /// tell: then it is a move, not a swing.
    pub fn swing(&self, now: f64, to: &[f64], speeds: &[f64]) -> Option<Swing> {
        let gap = now - self.sampled?;
        if !(gap > 0.0 && gap <= MAX_GAP) || to.len() != self.to.len() {
            return None;
        }
        let within = self.period.map_or(gap, |p| gap.max(p));
        let (joint, change, ratio) = to
            .iter()
            .zip(&self.to)
            .zip(speeds)
            .map(|((b, a), v)| ((b - a).abs(), (b - a).abs() / (v * within)))
            .enumerate()
            .map(|(j, (change, ratio))| (j, change, ratio))
            .max_by(|a, b| a.2.total_cmp(&b.2))?;
        (ratio > SWING_FACTOR).then_some(Swing {
            joint,
            change,
            within,
        })
    }

    /// A sample at `now` whose answer was not followed ([`TargetStream::swing`]):
    /// the stream goes on toward its latest answer, and the next sample is
    /// measured from this one, so a steady stream stays one while the arm
    /// holds and only a pause ends it.
    pub fn held(&mut self, now: f64) {
        self.sampled = Some(now);
    }

    /// Where the answers are heading, while a stream is on: the latest one
    /// and one more step as the last (the motion in progress, at constant
    /// velocity, one sample on). At a singular pose two answer branches
    /// meet, and the poses do not say which one the path goes on along;
    /// this does (see `NodeCore::solve_continuing`).
    pub fn continuation(&self) -> Option<Vec<f64>> {
        self.period?;
        Some(
            self.to
                .iter()
                .zip(&self.previous)
                .map(|(b, a)| b + (b - a))
                .collect(),
        )
    }

    /// The latest answer, whether a stream is on or not (empty before
    /// the first).
    pub fn latest(&self) -> &[f64] {
        &self.to
    }

    /// The latest answer, while a stream is on.
    pub fn answer(&self) -> Option<&[f64]> {
        self.period.map(|_| self.to.as_slice())
    }

    /// The moving goal at time `t`, while a stream is on: on the way from
    /// the previous answer to the latest, at it from one period on.
    pub fn goal(&self, t: f64) -> Option<Vec<f64>> {
        let p = self.period?;
        let s = ((t - self.since) / p).clamp(0.0, 1.0);
        Some(
            self.from
                .iter()
                .zip(&self.to)
                .map(|(a, b)| a + s * (b - a))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_answers_are_followed_between_samples_and_a_pause_ends_the_stream() {
        let mut s = TargetStream::default();
        let speeds = [1.0];
        s.answered(0.0, &[0.0], &[0.0], &speeds);
        assert!(s.goal(0.02).is_none(), "one answer is not a stream");
        s.answered(0.05, &[0.01], &[0.0], &speeds);
        let g = s.goal(0.075).unwrap();
        assert!((g[0] - 0.005).abs() < 1e-12, "{g:?}");
        assert_eq!(s.goal(0.2).unwrap(), vec![0.01]);
        s.answered(0.5, &[0.02], &[0.01], &speeds);
        assert!(s.goal(0.52).is_none(), "a pause ends the stream");
        assert!(s.continuation().is_none(), "nothing continues a pause");
    }

    #[test]
    fn a_stream_continues_along_its_last_step() {
        let mut s = TargetStream::default();
        let speeds = [1.0, 1.0];
        s.answered(0.0, &[0.0, 1.0], &[0.0, 1.0], &speeds);
        assert!(s.continuation().is_none(), "one answer is no motion");
        s.answered(0.04, &[0.01, 1.0], &[0.0, 1.0], &speeds);
        s.answered(0.1, &[0.03, 0.99], &[0.01, 1.0], &speeds);
        let c = s.continuation().unwrap();
        assert!(
            (c[0] - 0.05).abs() < 1e-12 && (c[1] - 0.98).abs() < 1e-12,
            "{c:?}"
        );
    }

    #[test]
    fn an_answer_far_off_the_streams_joint_path_is_a_swing_until_a_pause() {
        let mut s = TargetStream::default();
        let speeds = [1.0, 2.0];
        assert_eq!(s.swing(0.0, &[3.0, 0.0], &speeds), None, "no stream yet");
        s.answered(0.0, &[0.0, 0.0], &[0.0, 0.0], &speeds);
        s.answered(0.05, &[0.04, 0.05], &[0.0, 0.0], &speeds);
        assert_eq!(
            s.swing(0.1, &[0.08, 0.1], &speeds),
            None,
            "a step of the path"
        );
        assert_eq!(
            s.swing(0.1, &[0.1, 0.1], &speeds),
            None,
            "within twice the speed"
        );
        let w = s.swing(0.1, &[0.04, 1.5], &speeds).expect("a swing");
        assert_eq!(w.joint, 1, "the joint that moves most for its speed");
        assert!((w.change - 1.45).abs() < 1e-12 && (w.within - 0.05).abs() < 1e-12);
        s.held(0.1);
        assert!(
            s.swing(0.15, &[0.04, 1.5], &speeds).is_some(),
            "held, the stream goes on: still a swing, not a slower step"
        );
        s.held(0.15);
        assert_eq!(
            s.goal(0.3),
            Some(vec![0.04, 0.05]),
            "the arm rests at the last answer"
        );
        assert_eq!(
            s.swing(0.15 + MAX_GAP + 0.01, &[0.04, 1.5], &speeds),
            None,
            "after a pause it is a move"
        );
    }

    #[test]
    fn a_jump_faster_than_the_joints_is_no_stream() {
        let mut s = TargetStream::default();
        s.answered(0.0, &[0.0], &[0.0], &[1.0]);
        s.answered(0.05, &[0.2], &[0.0], &[1.0]);
        assert!(s.goal(0.06).is_none());
        s.answered(0.1, &[0.21], &[0.0], &[1.0]);
        assert!(s.goal(0.11).is_none(), "the arm is still on its way");
        s.answered(0.15, &[0.22], &[0.2], &[1.0]);
        assert!(s.goal(0.16).is_some(), "the arm is on the path again");
    }
}
