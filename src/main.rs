//! `arm_ik`: the command-line edge. Parses arguments, calls the library,
//! prints results; every decision lives in the library.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return cli::usage_error(&e),
    };
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("arm_ik: error: {}", cli::error_text(&e));
            std::process::ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
