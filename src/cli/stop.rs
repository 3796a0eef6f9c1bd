//! Ctrl-C (SIGINT) and SIGTERM for the commands that run long or write
//! files (`sim`, `run`, `replay`, `make-bag`, `bench`, `latency`, `drive`,
//! `import-lerobot`, `collisions --svg`): the first signal asks the command
//! to stop at its next check, so it closes the servo link, prints a summary
//! of what it did, says it was stopped, drops its staged outputs (the
//! temporaries go, an existing output stays as it was) and exits with 128 +
//! the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
//! reports a program the signal ended. A second signal ends the program at
//! once, for a command stuck in its stop. The other commands keep the
//! default: they write nothing and end at once.

use signal_hook::consts::{SIGINT, SIGTERM};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Whether, and by which signal, the command was asked to stop.
pub struct Stop {
    flag: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Stop {
    /// Catches SIGINT and SIGTERM from now on.
    pub fn on_signals() -> anyhow::Result<Stop> {
        let flag = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        for sig in [SIGINT, SIGTERM] {
            // The exit first: it acts only once the flag is set, by the
            // first signal (signal-hook runs actions in order).
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, flag.clone())?;
            signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)?;
            signal_hook::flag::register(sig, flag.clone())?;
        }
        Ok(Stop { flag, signal })
    }

    /// The flag a loop polls (`arm_ik::run::run` takes it).
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// The flag, for a thread of the command's own that must stop too
    /// (teleop's leader reader).
    pub fn shared(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// Stops the command as SIGINT would: for Ctrl-C read as a key by a
    /// terminal in raw mode (`calibrate`'s full-screen view), where the
    /// terminal sends no signal.
    pub fn interrupt(&self) {
        self.signal.store(SIGINT as usize, Ordering::Relaxed);
        self.flag.store(true, Ordering::Relaxed);
    }

    /// True once a signal asked the command to stop.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The signal that stopped the command, by name (`SIGINT`).
    pub fn signal_name(&self) -> &'static str {
        match self.signal.load(Ordering::Relaxed) as i32 {
            SIGINT => "SIGINT",
            SIGTERM => "SIGTERM",
            _ => "a signal",
        }
    }

    /// The exit code of a stopped command: 128 + the signal's number.
    pub fn exit_code(&self) -> ExitCode {
        let sig = match self.signal.load(Ordering::Relaxed) as i32 {
            0 => SIGINT,
            s => s,
        };
        ExitCode::from(128 + sig as u8)
    }

    /// Says on stderr that the command stopped, and what became of its
    /// outputs; the exit code to return.
    pub fn report(&self, command: &str, outputs: &str) -> ExitCode {
        errln!(
            "arm_ik {command}: stopped by {}{}",
            self.signal_name(),
            if outputs.is_empty() {
                String::new()
            } else {
                format!("; {outputs}")
            }
        );
        self.exit_code()
    }
}
