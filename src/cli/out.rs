//! Where every command prints: stdout through [`Stdout`] (or the
//! [`outln!`] and [`out!`] macros on it), stderr through [`errln!`].
//!
//! A closed stdout (the reader of a pipe went away: `arm_ik solve ... |
//! head -2`) is the Unix signal to stop, not an error: `println!` would
//! panic on it ("failed printing to stdout: Broken pipe", exit 101) and a
//! plain `write!` would print an error. Here the write fails with
//! [`OutputClosed`], the command unwinds through its `?`s (dropping its
//! staged outputs, so no temporary is left), and `main` exits quietly with
//! [`EXIT_OUTPUT_CLOSED`]. A closed stderr is ignored: there is nobody
//! left to tell. The test at the bottom keeps the rest of the command line
//! off `println!` and `eprintln!`.

use std::io::{BufWriter, StdoutLock, Write};

/// Exit code when stdout was closed by its reader: 128 + SIGPIPE, what a
/// shell reports for a program the signal ended (`yes | head` under
/// `set -o pipefail`), so a cut-off run never reads as a success.
pub const EXIT_OUTPUT_CLOSED: u8 = 141;

/// stdout was closed by its reader.
#[derive(Debug)]
pub struct OutputClosed;

impl std::fmt::Display for OutputClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed by its reader")
    }
}

impl std::error::Error for OutputClosed {}

/// A broken pipe as [`OutputClosed`]; other errors as they are.
fn closed(e: std::io::Error) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, OutputClosed)
    } else {
        e
    }
}

/// True when `e` is (or was caused by) a closed stdout.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<OutputClosed>()
            || c.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<OutputClosed>())
    })
}

/// Buffered stdout whose write errors are [`OutputClosed`] when the pipe
/// is gone: for commands that print many lines (joint states, tables).
pub struct Stdout(BufWriter<StdoutLock<'static>>);

/// The process's stdout, buffered.
pub fn stdout() -> Stdout {
    Stdout(BufWriter::new(std::io::stdout().lock()))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(closed)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(closed)
    }
}

/// Writes `args` to stdout at once (what [`outln!`] calls).
pub fn print(args: std::fmt::Arguments) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(closed)
}

/// Writes `args` to stderr, ignoring a closed stderr (what [`errln!`]
/// calls).
pub fn eprint(args: std::fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `println!` that returns a [`std::io::Result`] instead of panicking.
macro_rules! outln {
    () => { $crate::cli::out::print(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::out::print(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that returns a [`std::io::Result`] instead of panicking.
#[allow(unused_macros)]
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::out::print(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::out::eprint(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::cli::out::eprint(format_args!($($arg)*)) };
}

#[allow(unused_imports)]
pub(crate) use {err, errln, out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_told_apart_from_other_errors() {
        let e = anyhow::Error::new(closed(std::io::ErrorKind::BrokenPipe.into()))
            .context("writing joint states");
        assert!(is_closed(&e));
        let e = anyhow::Error::new(closed(std::io::ErrorKind::PermissionDenied.into()));
        assert!(!is_closed(&e));
    }

    /// Every print of the command line goes through this module, so none
    /// can panic on a closed pipe: no `println!`, `print!`, `eprintln!` or
    /// `eprint!` elsewhere in `src/cli` or `src/main.rs`.
    #[test]
    fn the_command_line_prints_only_through_this_module() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![root.join("main.rs")];
        let mut dirs = vec![root.join("cli")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        let banned = ["println!", "print!(", "eprintln!", "eprint!("];
        for f in files {
            if f.ends_with("out.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for b in banned {
                    assert!(
                        !code.contains(b),
                        "{}:{}: {b} (use outln!/errln! of cli::out)",
                        f.display(),
                        i + 1
                    );
                }
            }
        }
    }
}
