//! `arm_ik`: the command-line edge. Parses arguments, calls the library,
//! prints results; every decision lives in the library.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("arm_ik: error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
