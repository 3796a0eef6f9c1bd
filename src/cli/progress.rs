//! A progress line on stderr for long runs (`replay`, `make-bag`): drawn
//! only when stderr is a terminal, from one second into the run, at most
//! four times a second, and cleared at the end.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Items between two looks at the clock, so the check costs nothing per
/// message.
const EVERY: u64 = 4096;

pub struct Progress {
    enabled: bool,
    start: Instant,
    last: Instant,
    shown: bool,
}

impl Progress {
    pub fn new() -> Progress {
        let now = Instant::now();
        Progress {
            enabled: std::io::stderr().is_terminal(),
            start: now,
            last: now,
            shown: false,
        }
    }

    /// `count` items done, `fraction` of the whole (0 to 1).
    pub fn update(&mut self, count: u64, fraction: impl FnOnce() -> f64) {
        if !self.enabled || !count.is_multiple_of(EVERY) {
            return;
        }
        let elapsed = self.start.elapsed();
        if elapsed < Duration::from_secs(1) || self.last.elapsed() < Duration::from_millis(250) {
            return;
        }
        self.last = Instant::now();
        self.shown = true;
        err!("\r\x1b[K{}", line(fraction(), count, elapsed.as_secs_f64()));
    }

    /// Clears the line, if one was drawn.
    pub fn finish(&mut self) {
        if self.shown {
            err!("\r\x1b[K");
            self.shown = false;
        }
    }
}

/// `[#####     ]  50.0%  1000 messages  500/s`
fn line(fraction: f64, count: u64, seconds: f64) -> String {
    let width = 30;
    let f = fraction.clamp(0.0, 1.0);
    let done = (f * width as f64) as usize;
    format!(
        "[{}{}] {:5.1}%  {} messages  {:.0}/s",
        "#".repeat(done),
        " ".repeat(width - done),
        f * 100.0,
        count,
        count as f64 / seconds.max(1e-9)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_shows_the_fraction_count_and_rate() {
        let l = super::line(0.5, 1000, 2.0);
        assert!(
            l.starts_with(&format!("[{}{}]", "#".repeat(15), " ".repeat(15))),
            "{l}"
        );
        assert!(l.contains(" 50.0%  1000 messages  500/s"), "{l}");
        assert!(super::line(7.0, 1, 0.0).contains("100.0%"));
    }
}
