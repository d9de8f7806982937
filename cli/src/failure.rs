//! Why a command stopped, as a sentence for the user, and the exit code that goes with it.

use std::fmt;

/// Why a command stopped. Either holds one sentence (or a few), never Rust debug text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The command line asks for something the command cannot do: an unknown option, a
    /// missing or malformed value, a pixel outside the image. Exit code 2, the usual one for
    /// usage errors.
    Usage(String),
    /// The work failed: a mesh that does not load, a file that cannot be written. Exit
    /// code 1.
    Failed(String),
}

impl Failure {
    /// A usage error.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::Usage(message.into())
    }

    /// A failure of the work itself.
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure::Failed(message.into())
    }

    /// The process's exit code: 2 for usage errors, 1 for failures.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Failed(_) => 1,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) => write!(f, "{message} (see --help)"),
            Failure::Failed(message) => f.write_str(message),
        }
    }
}

/// The library's errors are sentences already (its `Display` names the file and line).
impl From<meshray::Error> for Failure {
    fn from(error: meshray::Error) -> Failure {
        Failure::Failed(error.to_string())
    }
}
