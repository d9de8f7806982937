//! A one-line progress report on stderr for loads and builds of big meshes, redrawn in place
//! and only on a terminal (a pipe or a log file gets nothing).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the line is redrawn at most.
const EVERY: Duration = Duration::from_millis(100);

/// A progress line: `label 42% (done/total unit) 1.3 s`.
pub struct Progress {
    label: String,
    unit: &'static str,
    started: Instant,
    /// When the line was last drawn; `None` when it is not drawn at all (no terminal).
    drawn: Option<Mutex<Option<Instant>>>,
}

impl Progress {
    /// A progress line for `label`, counting in `unit` (`"bytes"`, `"triangles"`).
    pub fn new(label: impl Into<String>, unit: &'static str) -> Progress {
        Progress {
            label: label.into(),
            unit,
            started: Instant::now(),
            drawn: std::io::stderr().is_terminal().then(|| Mutex::new(None)),
        }
    }

    /// Reports `done` of `total`; draws at most every 100 ms.
    pub fn update(&self, done: u64, total: u64) {
        let Some(drawn) = &self.drawn else { return };
        let Ok(mut last) = drawn.lock() else { return };
        let now = Instant::now();
        if last.is_some_and(|at| now - at < EVERY) {
            return;
        }
        *last = Some(now);
        let percent = (100 * done.min(total)).checked_div(total).unwrap_or(100);
        let mut stderr = std::io::stderr().lock();
        // A progress line is a courtesy: a closed stderr is no reason to stop.
        let _ = write!(
            stderr,
            "\r{} {percent:>3}% ({done}/{total} {}) {:.1} s\x1b[K",
            self.label,
            self.unit,
            self.started.elapsed().as_secs_f64()
        );
        let _ = stderr.flush();
    }

    /// Erases the line.
    pub fn finish(&self) {
        if self.drawn.is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}
