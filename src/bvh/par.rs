//! The builder's data-parallel steps: on rayon's threads with the `parallel` feature, in
//! order on the calling thread without it. Each gives the same result either way.

/// `f(i)` for every `i` in `0..n`, in order.
pub(crate) fn map_indexed<T, F>(n: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync + Send,
{
    #[cfg(feature = "parallel")]
    if threads() > 1 {
        use rayon::prelude::*;
        return (0..n).into_par_iter().map(f).collect();
    }
    (0..n).map(f).collect()
}

/// `items[i] = items[order[i]]` (the values before the call) for every `i`: `order` is a
/// permutation of `0..items.len()`. On several threads a gather into a new array, which
/// overlaps its cache misses; on one (a browser tab's build, whose memory never shrinks) in
/// place, cycle by cycle, with one bit of bookkeeping per item instead of a second array.
pub(crate) fn gather_in_place<T: Copy + Send + Sync>(items: &mut Vec<T>, order: &[u32]) {
    debug_assert_eq!(items.len(), order.len());
    if threads() > 1 {
        *items = map_indexed(order.len(), |i| items[order[i] as usize]);
    } else {
        gather_by_cycles(items, order);
    }
}

/// [`gather_in_place`] on one thread.
fn gather_by_cycles<T: Copy>(items: &mut [T], order: &[u32]) {
    let mut done = vec![0u64; items.len().div_ceil(64)];
    for start in 0..items.len() {
        if done[start / 64] & (1 << (start % 64)) != 0 {
            continue;
        }
        // The cycle through `start`: each slot takes the value of the slot it names, the
        // last one `start`'s, kept aside.
        let first = items[start];
        let mut i = start;
        loop {
            done[i / 64] |= 1 << (i % 64);
            let from = order[i] as usize;
            if from == start {
                items[i] = first;
                break;
            }
            items[i] = items[from];
            i = from;
        }
    }
}

/// `f` over `items` in chunks of `chunk` (the last one shorter), the results in order.
pub(crate) fn map_chunks_mut<T, R, F>(items: &mut [T], chunk: usize, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(&mut [T]) -> R + Sync + Send,
{
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_chunks_mut(chunk).map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.chunks_mut(chunk).map(f).collect()
    }
}

/// `a()` and `b()`, side by side when `big`.
pub(crate) fn join<A, B, RA, RB>(big: bool, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    #[cfg(feature = "parallel")]
    if big && threads() > 1 {
        return rayon::join(a, b);
    }
    let _ = big;
    (a(), b())
}

/// The threads the steps above share (1 without the `parallel` feature).
pub(crate) fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathering_in_place_equals_a_gather() {
        let mut state = 7u64;
        for n in [0, 1, 2, 3, 64, 65, 1000] {
            // A random permutation (Fisher–Yates).
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                order.swap(i, (state >> 33) as usize % (i + 1));
            }
            let values: Vec<u64> = (0..n as u64).map(|v| v * v + 3).collect();
            let want: Vec<u64> = order.iter().map(|&i| values[i as usize]).collect();
            let mut got = values.clone();
            gather_by_cycles(&mut got, &order);
            assert_eq!(got, want, "{n} items");
            let mut got = values.clone();
            gather_in_place(&mut got, &order);
            assert_eq!(got, want, "{n} items");
        }
    }
}
