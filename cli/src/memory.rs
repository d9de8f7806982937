//! The heap memory a piece of work needs at its peak, for the build's peak memory in
//! `meshray scaling` and the peer comparison: every allocation of the process goes through
//! `peak_alloc`'s counting wrapper of the system allocator (two relaxed atomic additions per
//! allocation; the queries allocate nothing, so their timings are untouched). It sees Rust's
//! allocations only, not those a C or C++ library makes with its own allocator.

use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// The most heap memory `work` held beyond what was allocated when it started, in bytes,
/// with its result. Not meaningful while other threads allocate for other work.
pub fn peak_of<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let result = work();
    (result, HEAP.peak_usage().saturating_sub(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64 MiB buffer allocated and dropped inside the work shows in its peak, and the
    /// peak is not the whole process's.
    #[test]
    fn a_dropped_buffer_shows_in_the_peak() {
        let big = vec![1u8; 32 << 20];
        let ((), peak) = peak_of(|| {
            let buffer = vec![1u8; 64 << 20];
            std::hint::black_box(&buffer);
        });
        assert!(
            (64 << 20..(64 << 20) + (1 << 20)).contains(&peak),
            "peak {peak}"
        );
        let ((), none) = peak_of(|| ());
        assert!(none < 1 << 20, "{none}");
        drop(big);
    }
}
