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
