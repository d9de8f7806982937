//! Load progress: how many bytes of a file the parser has consumed, for progress bars on
//! files of hundreds of megabytes. The library prints nothing; it calls the user's function.

use std::cell::Cell;
#[cfg(any(feature = "stl", feature = "ply"))]
use std::io::{BufRead, Read, Seek, SeekFrom};

/// Reports `(done, total)` bytes to a user's function, at most once per [`Progress::STEP`]
/// bytes, and once at the end.
pub(crate) struct Progress<'a> {
    report: Option<&'a dyn Fn(u64, u64)>,
    total: u64,
    /// The next `done` worth reporting.
    next: Cell<u64>,
    /// The last `done` reported.
    last: Cell<Option<u64>>,
}

impl<'a> Progress<'a> {
    /// Bytes between reports: often enough for a bar, rarely enough to cost nothing.
    const STEP: u64 = 1 << 20;

    /// Reports nothing.
    pub(crate) fn none() -> Progress<'static> {
        Progress {
            report: None,
            total: 0,
            next: Cell::new(u64::MAX),
            last: Cell::new(None),
        }
    }

    pub(crate) fn new(report: &'a dyn Fn(u64, u64), total: u64) -> Progress<'a> {
        Progress {
            report: Some(report),
            total,
            next: Cell::new(Self::STEP),
            last: Cell::new(None),
        }
    }

    /// `done` bytes are consumed.
    pub(crate) fn at(&self, done: u64) {
        if done >= self.next.get() {
            self.next.set(done.saturating_add(Self::STEP));
            self.report(done.min(self.total));
        }
    }

    /// The whole file is parsed.
    pub(crate) fn finish(&self) {
        if self.last.get() != Some(self.total) {
            self.report(self.total);
        }
    }

    fn report(&self, done: u64) {
        if let Some(report) = self.report {
            report(done, self.total);
            self.last.set(Some(done));
        }
    }
}

/// A reader that tells a [`Progress`] its position as it is consumed (the STL and PLY
/// parsers read through it; OBJ's checking reader reports by itself).
#[cfg(any(feature = "stl", feature = "ply"))]
pub(crate) struct Reporting<'a, R> {
    inner: R,
    position: u64,
    progress: &'a Progress<'a>,
}

#[cfg(any(feature = "stl", feature = "ply"))]
impl<'a, R> Reporting<'a, R> {
    pub(crate) fn new(inner: R, progress: &'a Progress<'a>) -> Self {
        Reporting {
            inner,
            position: 0,
            progress,
        }
    }

    fn advance(&mut self, n: usize) {
        self.position += n as u64;
        self.progress.at(self.position);
    }
}

#[cfg(any(feature = "stl", feature = "ply"))]
impl<R: Read> Read for Reporting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.advance(n);
        Ok(n)
    }
}

#[cfg(any(feature = "stl", feature = "ply"))]
impl<R: BufRead> BufRead for Reporting<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        self.advance(amount);
    }
}

#[cfg(any(feature = "stl", feature = "ply"))]
impl<R: Seek> Seek for Reporting<'_, R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.position = self.inner.seek(to)?;
        self.progress.at(self.position);
        Ok(self.position)
    }
}

#[cfg(all(test, any(feature = "stl", feature = "ply")))]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::io::Cursor;

    #[test]
    fn reports_each_step_and_the_end() {
        let calls = RefCell::new(Vec::new());
        let record = |done, total| calls.borrow_mut().push((done, total));
        let data = vec![b'x'; 3 * (1 << 20) + 10];
        let progress = Progress::new(&record, data.len() as u64);
        let mut reader = Reporting::new(Cursor::new(&data), &progress);
        while !reader.fill_buf().unwrap().is_empty() {
            let n = reader.fill_buf().unwrap().len().min(1 << 16);
            reader.consume(n);
        }
        progress.finish();
        let calls = calls.into_inner();
        assert_eq!(calls.len(), 4, "{calls:?}");
        assert!(calls.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(
            *calls.last().unwrap(),
            (data.len() as u64, data.len() as u64)
        );
        Progress::none().at(u64::MAX - 1); // no report, no overflow
    }
}
