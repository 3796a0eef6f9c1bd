//! The solving thread's own CPU time: what `--budget-clock cpu` counts a
//! budget on, and the time the bench reports beside the wall time. A solve
//! preempted by other processes takes longer on the wall clock, not on
//! this one.

use crate::ik::{BudgetClock, Clock};
use std::time::{Duration, Instant};

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`,
/// nanosecond resolution on Linux). A system call on most kernels (no
/// vDSO for CPU clocks): about 0.1-0.5 µs, see `benches/README.md`.
#[cfg(unix)]
pub fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec the call writes; the clock id is a
    // constant every POSIX system with thread CPU clocks defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if rc != 0 {
        return wall_since_start();
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Without a thread CPU clock: wall time (a CPU budget is then a wall one).
#[cfg(not(unix))]
pub fn thread_cpu_time() -> Duration {
    wall_since_start()
}

/// Wall time since the first call: advances no slower than CPU time, so
/// a budget on it is at worst a wall-clock budget.
fn wall_since_start() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// The solver's clock for a budget counted on `kind`.
pub fn clock(kind: BudgetClock) -> Clock {
    match kind {
        BudgetClock::Wall => Clock::Wall,
        BudgetClock::Cpu => Clock::Own(thread_cpu_time),
    }
}

/// Wall and thread CPU time of one solve.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Times {
    pub wall: Duration,
    pub cpu: Duration,
}

impl Times {
    /// The time a budget on `kind` counts.
    pub fn on(&self, kind: BudgetClock) -> Duration {
        match kind {
            BudgetClock::Wall => self.wall,
            BudgetClock::Cpu => self.cpu,
        }
    }
}

/// Times one solve on both clocks.
pub struct Stopwatch {
    wall: Instant,
    cpu: Duration,
}

impl Stopwatch {
    /// The wall span encloses the CPU span (wall read first at the start,
    /// last at the stop), so the CPU time of a span is never above its
    /// wall time: the CPU clock's own system calls count as wall time.
    pub fn start() -> Stopwatch {
        let wall = Instant::now();
        Stopwatch {
            wall,
            cpu: thread_cpu_time(),
        }
    }

    pub fn stop(&self) -> Times {
        let cpu = thread_cpu_time().saturating_sub(self.cpu);
        Times {
            wall: self.wall.elapsed(),
            cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_thread_uses_wall_time_but_no_cpu_time() {
        let w = Stopwatch::start();
        std::thread::sleep(Duration::from_millis(30));
        let t = w.stop();
        assert!(t.wall >= Duration::from_millis(30), "{t:?}");
        assert!(t.cpu < Duration::from_millis(10), "{t:?}");
        // And a busy one uses CPU time (however loaded the machine: the
        // loop ends on CPU time, or fails after 10 s of wall time).
        let w = Stopwatch::start();
        let mut x = 0u64;
        while w.stop().cpu < Duration::from_millis(5) && w.stop().wall < Duration::from_secs(10) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let t = w.stop();
        assert!(
            t.cpu >= Duration::from_millis(5) && t.cpu <= t.wall,
            "{t:?}"
        );
    }
}
