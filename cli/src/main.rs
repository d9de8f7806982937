//! The `meshray` command; see the `meshray_cli` library for the commands.

use std::process::ExitCode;

fn main() -> ExitCode {
    match meshray_cli::args::command_line() {
        Ok(words) => meshray_cli::commands::run(words),
        Err(failure) => {
            eprintln!("meshray: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
