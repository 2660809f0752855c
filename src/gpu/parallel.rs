//! The GPU predictor's host work (problem preparation, parsing the read-back, answers) split
//! over threads: single-threaded, it takes longer than the GPU's decode of a large batch.

use crate::error::{Error, Result};

/// Items below which one thread does all the work (threads cost more than they save).
const MIN_PER_THREAD: usize = 256;

/// `work(start, part)` over consecutive parts of `items` (`start`: the part's first index) on up
/// to `threads` threads; one result per part, in order.
pub(crate) fn map_parts<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(usize, &[T]) -> R + Sync,
) -> Result<Vec<R>> {
    let n = threads.min(items.len() / MIN_PER_THREAD).max(1);
    if n == 1 {
        return Ok(vec![work(0, items)]);
    }
    let size = items.len().div_ceil(n);
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(size)
            .enumerate()
            .map(|(i, part)| scope.spawn(move || work(i * size, part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| Error::Internal("a worker thread panicked".into())))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_item_in_order() {
        let items: Vec<usize> = (0..10_000).collect();
        for threads in [1, 2, 3, 16] {
            let parts = map_parts(&items, threads, |start, part| {
                assert_eq!(part[0], start);
                part.iter().map(|x| x * 2).collect::<Vec<_>>()
            })
            .expect("no panic");
            let flat: Vec<usize> = parts.into_iter().flatten().collect();
            assert_eq!(flat, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
        assert_eq!(map_parts(&[] as &[u8], 4, |_, p| p.len()).expect("empty"), vec![0]);
    }
}
