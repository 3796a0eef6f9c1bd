//! `arm_ik`: the command-line edge. Parses arguments, calls the library,
//! prints results; every decision lives in the library.

#[macro_use]
mod cli;

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
