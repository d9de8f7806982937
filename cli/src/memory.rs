//! A process's resident memory and its peak, from Linux's `/proc/self/status`, to report
//! what a build needs beyond what it keeps. No allocator hooks: the kernel's own figures,
//! with the peak reset through `/proc/self/clear_refs`.

/// Resident bytes now and at the peak since the last [`reset_peak`]; `None` off Linux or
/// when `/proc` cannot be read.
pub fn resident() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Sets the peak to the resident memory now (Linux 4.0 and later); `false` when that is
/// not possible, and then the peak may predate the measurement.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The most memory `work` held resident beyond what was resident before it, in bytes, with
/// its result; `None` for the figure where it cannot be measured.
pub fn peak_of<T>(work: impl FnOnce() -> T) -> (T, Option<u64>) {
    let before = resident().filter(|_| reset_peak());
    let result = work();
    let peak = before
        .zip(resident())
        .map(|((rss, _), (_, hwm))| hwm.saturating_sub(rss));
    (result, peak)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On Linux the peak sees a 64 MiB buffer touched and dropped inside the work.
    #[test]
    #[cfg_attr(not(target_os = "linux"), ignore = "reads /proc (Linux only)")]
    fn a_dropped_buffer_shows_in_the_peak() {
        let ((), peak) = peak_of(|| {
            let buffer = vec![1u8; 64 << 20];
            std::hint::black_box(&buffer);
        });
        let peak = peak.expect("/proc/self/status and clear_refs on Linux");
        assert!(peak >= 60 << 20, "peak {peak}");
    }
}
