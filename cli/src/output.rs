//! The commands' standard output. `println!` panics when stdout is closed early (`meshray
//! bench … | head` once printed "failed printing to stdout: Broken pipe" with a backtrace);
//! these end the process quietly instead, as a reader that has seen enough expects.

use std::fmt;
use std::io::{ErrorKind, Write};

/// Writes `args` to stdout; on a closed pipe exits with status 0, on any other failure says
/// why on stderr and exits with status 1.
pub fn write(args: fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("meshray: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// `println!` through [`output::write`](fn@crate::output::write).
#[macro_export]
macro_rules! say {
    () => { $crate::output::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` through [`output::write`](fn@crate::output::write).
#[macro_export]
macro_rules! say_raw {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}
