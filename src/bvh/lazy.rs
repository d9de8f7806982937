//! What a tree makes on first use (the table of unit normals, `contains`' lattice): made by
//! the first query that needs it, on all cores, with no lock held while it is made.
//!
//! `OnceLock::get_or_init` holds the cell while its closure runs. When that closure runs
//! parallel loops (rayon), it deadlocks in two ways: a worker thread waiting for its loop's
//! jobs may take up a job of an outer parallel loop (a batch of queries) that asks for the
//! same cell, and a cell entered again from the thread making it never opens; or every
//! worker of the pool waits on the cell while the jobs of the loop making it wait for a
//! worker. [`Lazy`] never waits: one caller makes the value; a caller that finds it being
//! made is told so ([`Lazy::get_or_make`] answers `None`) and answers without it, by the
//! slower path every use of it keeps (the same answer, bit for bit).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// A value made on first use, without waiting (see the module's notes).
#[derive(Debug)]
pub(crate) struct Lazy<T> {
    value: OnceLock<T>,
    /// Whether a caller has begun making the value (set until it is made, or for good if
    /// making it panicked: the slow path then serves).
    making: AtomicBool,
}

impl<T> Lazy<T> {
    /// The value, made now by `make` if no one has begun to; `None` while another caller
    /// (or this thread, from inside `make`) is making it.
    pub(crate) fn get_or_make(&self, make: impl FnOnce() -> T) -> Option<&T> {
        if let Some(value) = self.value.get() {
            return Some(value);
        }
        if self.making.swap(true, Ordering::AcqRel) {
            return self.value.get();
        }
        let _ = self.value.set(make());
        self.value.get()
    }
}

impl<T> Default for Lazy<T> {
    /// Not made yet.
    fn default() -> Self {
        Lazy {
            value: OnceLock::new(),
            making: AtomicBool::new(false),
        }
    }
}

impl<T: Clone> Clone for Lazy<T> {
    /// The value if made; a clone whose value is being made makes its own.
    fn clone(&self) -> Self {
        let value = OnceLock::new();
        if let Some(v) = self.value.get() {
            let _ = value.set(v.clone());
        }
        Lazy {
            value,
            making: AtomicBool::new(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_and_kept() {
        let lazy = Lazy::default();
        let mut calls = 0;
        assert_eq!(
            lazy.get_or_make(|| {
                calls += 1;
                7
            }),
            Some(&7)
        );
        assert_eq!(
            lazy.get_or_make(|| {
                calls += 1;
                8
            }),
            Some(&7)
        );
        assert_eq!(calls, 1);
        assert_eq!(lazy.clone().get_or_make(|| 9), Some(&7));
    }

    /// Asked again from inside its own making (as a rayon worker does when it takes up an
    /// outer job while it waits): `None` at once, where a `OnceLock` deadlocks.
    #[test]
    fn asked_while_made_answers_none_without_waiting() {
        let lazy = Lazy::default();
        let made = lazy.get_or_make(|| lazy.get_or_make(|| false).is_none());
        assert_eq!(made, Some(&true));
    }

    /// A maker that panics leaves the value unmade for good: every later call answers
    /// `None` (the slow path), never a second panic or a wait.
    #[test]
    #[cfg_attr(
        not(panic = "unwind"),
        ignore = "needs unwinding: a panic aborts on this target (wasm32-wasip1)"
    )]
    fn a_panicking_maker_leaves_the_slow_path() {
        let lazy: Lazy<u32> = Lazy::default();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lazy.get_or_make(|| panic!("making failed"))
        }));
        assert!(caught.is_err());
        assert_eq!(lazy.get_or_make(|| 3), None);
    }
}
