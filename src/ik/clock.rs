//! The clock a solve's time budget is counted on.
//!
//! Wall time is what a control loop's deadline is about, so it is the
//! default and what the node uses. A benchmark, though, wants its verdict
//! not to depend on other processes: on a loaded machine the solving
//! thread is preempted and a solve that needs 1 ms of computing can take
//! 6 ms of wall time. Counted on the thread's own CPU time the same solve
//! gets the same budget whatever else runs.
//!
//! The library reads no operating-system clock besides [`Instant`] (it
//! builds on nalgebra, urdf-rs and thiserror alone), so the thread's CPU
//! time is read by a function the application supplies ([`Clock::Own`]).

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Which clock a time budget is counted on: the setting, as the command
/// line names it (`--budget-clock wall|cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BudgetClock {
    /// Wall time (a control loop's deadline).
    #[default]
    Wall,
    /// The solving thread's own CPU time (a verdict independent of the
    /// machine's load).
    Cpu,
}

impl BudgetClock {
    pub const ALL: [BudgetClock; 2] = [BudgetClock::Wall, BudgetClock::Cpu];

    pub fn name(self) -> &'static str {
        match self {
            BudgetClock::Wall => "wall",
            BudgetClock::Cpu => "cpu",
        }
    }
}

impl std::str::FromStr for BudgetClock {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        BudgetClock::ALL
            .into_iter()
            .find(|c| c.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown budget clock '{s}' (choose wall: elapsed time, or cpu: the solving thread's CPU time)"
                )
            })
    }
}

impl std::fmt::Display for BudgetClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads a clock that advances only while the calling thread runs, from
/// any fixed origin (the thread's CPU time): it must never advance faster
/// than wall time, which [`Deadline`] relies on to read it rarely, and it
/// must advance while the thread computes, or a budget on it never ends.
pub type OwnTime = fn() -> Duration;

/// A budget's clock as a solver reads it.
#[derive(Clone, Copy, Default)]
pub enum Clock {
    /// Wall time ([`Instant`]).
    #[default]
    Wall,
    /// The time the solving thread ran, read by the application's
    /// function (the library cannot read a thread's CPU time itself).
    Own(OwnTime),
}

impl Clock {
    /// Which [`BudgetClock`] this is.
    pub fn kind(&self) -> BudgetClock {
        match self {
            Clock::Wall => BudgetClock::Wall,
            Clock::Own(_) => BudgetClock::Cpu,
        }
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Clock::Wall => f.write_str("Wall"),
            Clock::Own(_) => f.write_str("Own(..)"),
        }
    }
}

impl PartialEq for Clock {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Clock::Wall, Clock::Wall) => true,
            (Clock::Own(a), Clock::Own(b)) => std::ptr::fn_addr_eq(*a, *b),
            _ => false,
        }
    }
}

/// The end of a time budget started now, on a [`Clock`].
///
/// Checking it costs one [`Instant::now`] (a vDSO call, tens of ns) while
/// the wall time is within the budget. The thread's own time never runs
/// ahead of the wall time, so an own-clock budget cannot be spent before
/// the wall-clock one: the own clock (a system call on Linux, measured in
/// `benches/README.md`) is read only once the wall budget has passed, and
/// then the wall deadline moves on by what is left of the own budget. On
/// a quiet machine a solve never reads it; on a loaded one a few times.
#[derive(Debug, Clone)]
pub struct Deadline {
    clock: Clock,
    budget: Duration,
    /// The own clock's reading at the start (zero on the wall clock).
    own_start: Duration,
    /// When the budget started (wall time).
    wall_start: Instant,
    /// Before this wall time the budget cannot have been spent.
    wall_end: Cell<Instant>,
}

impl Deadline {
    /// A budget of `budget` from now, counted on `clock`.
    pub fn start(clock: Clock, budget: Duration) -> Deadline {
        let own_start = match clock {
            Clock::Wall => Duration::ZERO,
            Clock::Own(read) => read(),
        };
        let now = Instant::now();
        Deadline {
            clock,
            budget,
            own_start,
            wall_start: now,
            wall_end: Cell::new(later(now, budget)),
        }
    }

    /// The same start and clock with `share` of the budget (`share` in
    /// [0, 1]): a deadline before this one.
    pub fn share(&self, share: f64) -> Deadline {
        let budget = self.budget.mul_f64(share);
        Deadline {
            budget,
            wall_end: Cell::new(later(self.wall_start, budget)),
            ..self.clone()
        }
    }

    /// The budget.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// True once the budget is spent on its clock.
    pub fn passed(&self) -> bool {
        let now = Instant::now();
        if now < self.wall_end.get() {
            return false;
        }
        let Clock::Own(read) = self.clock else {
            return true;
        };
        let used = read().saturating_sub(self.own_start);
        match self.budget.checked_sub(used) {
            Some(left) if !left.is_zero() => {
                self.wall_end.set(later(now, left));
                false
            }
            _ => true,
        }
    }
}

/// `t + d`, or a year on when `d` is too large for an [`Instant`]
/// (practically never).
fn later(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(86_400 * 365))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn frozen() -> Duration {
        Duration::ZERO
    }

    static TICKS: AtomicU64 = AtomicU64::new(0);
    /// A second more at every reading.
    fn jumping() -> Duration {
        Duration::from_secs(TICKS.fetch_add(1, Ordering::Relaxed))
    }

    #[test]
    fn the_setting_reads_its_names_and_refuses_others() {
        assert_eq!("cpu".parse::<BudgetClock>(), Ok(BudgetClock::Cpu));
        assert_eq!("wall".parse::<BudgetClock>(), Ok(BudgetClock::Wall));
        let e = "thread".parse::<BudgetClock>().unwrap_err();
        assert!(
            e.contains("'thread'") && e.contains("wall") && e.contains("cpu"),
            "{e}"
        );
        assert_eq!(Clock::Own(frozen).kind(), BudgetClock::Cpu);
        assert_eq!(Clock::default().kind(), BudgetClock::Wall);
    }

    #[test]
    fn a_wall_budget_passes_with_time_an_own_one_with_the_own_clock() {
        let budget = Duration::from_micros(50);
        let wall = Deadline::start(Clock::Wall, budget);
        let frozen = Deadline::start(Clock::Own(frozen), budget);
        let jumping = Deadline::start(Clock::Own(jumping), budget);
        std::thread::sleep(Duration::from_millis(2));
        assert!(wall.passed());
        assert!(jumping.passed());
        // The thread did not run: the budget is all there, again and again.
        for _ in 0..3 {
            assert!(!frozen.passed());
            std::thread::sleep(Duration::from_micros(100));
        }
        assert!(!Deadline::start(Clock::Wall, Duration::from_secs(60)).passed());
        assert!(!Deadline::start(Clock::Wall, Duration::MAX).passed());
    }
}
