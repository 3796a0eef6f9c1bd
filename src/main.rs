//! `arm_ik`: the command-line edge. Parses arguments, calls the library,
//! prints results; every decision lives in the library.
//!
//! The binary has no `required-features`: colcon's cargo-ament-build
//! installs only the binaries whose required features are named on its
//! command line, and the colcon command of docs/ros.md names `ros2` alone (which
//! brings `app`). Built without `app` (the kinematics library alone) it
//! says so instead of doing nothing.

#[cfg(feature = "app")]
#[macro_use]
mod cli;

#[cfg(feature = "app")]
fn main() -> std::process::ExitCode {
    let args = match cli::Cli::try_parse_args() {
        Ok(args) => args,
        Err(e) => return cli::usage_error(&e),
    };
    match cli::run(args) {
        Ok(code) => code,
        Err(e) if cli::out::is_closed(&e) => {
            std::process::ExitCode::from(cli::out::EXIT_OUTPUT_CLOSED)
        }
        Err(e) => {
            errln!("arm_ik: error: {}", cli::error_text(&e));
            cli::error_code(&e)
        }
    }
}

#[cfg(not(feature = "app"))]
fn main() -> std::process::ExitCode {
    // Not `eprintln!`, which panics when stderr is closed (cli::out does
    // the same for the full command line, which this build lacks).
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "arm_ik: built without the `app` feature (the kinematics library alone); \
         build with the default features for the command line"
    );
    std::process::ExitCode::from(2)
}
