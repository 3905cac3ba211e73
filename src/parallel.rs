//! Splitting the pipeline's passes over Bevy's compute task pool.

use core::cell::Cell;

use bevy::tasks::{ComputeTaskPool, TaskPool};

use crate::prefetch::{AHEAD, prefetch_ahead, worth_prefetching};

/// The compute task pool, when it has several threads and `items` reach `threshold`: one thread gains
/// nothing from the pool's tasks and pays for them (allocations included), and few items pay for them
/// too. Never within [`on_this_thread`].
pub(crate) fn pool_for(items: usize, threshold: usize) -> Option<&'static TaskPool> {
    if ON_THIS_THREAD.get() {
        return None;
    }
    ComputeTaskPool::try_get()
        .filter(|pool| pool.thread_num() > 1 && items >= threshold)
        .map(|pool| &**pool)
}

thread_local! {
    /// Whether the thread runs work that must not split over the compute task pool ([`on_this_thread`]).
    static ON_THIS_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with every pass it makes on the calling thread: [`pool_for`] gives no pool meanwhile.
///
/// For work on another pool's thread that the systems of Bevy's executor may wait for (the grid built
/// in the background): a thread that waits in a scope of the compute pool runs that pool's other tasks
/// meanwhile, the executor's systems among them, and the system that waits for this work would wait
/// there for itself. Split over two compute threads, W1 at 10,000 and 100,000 colliders hung within
/// its first frames that way.
pub(crate) fn on_this_thread<R>(work: impl FnOnce() -> R) -> R {
    let before = ON_THIS_THREAD.replace(true);
    let result = work();
    ON_THIS_THREAD.set(before);
    result
}

/// Writes `take(&source[order[k]])` to `target[k]` for every k (`target` ends with `order`'s length),
/// split into a run of `target` per task when `pool` is given.
pub(crate) fn gather_in_order<S: Sync, T: Copy + Send>(
    pool: Option<&TaskPool>,
    source: &[S],
    order: &[u32],
    target: &mut Vec<T>,
    take: impl Fn(&S) -> T + Copy + Send,
) {
    let prefetch = worth_prefetching(source);
    let Some(pool) = pool.filter(|_| !order.is_empty()) else {
        target.clear();
        target.extend(order.iter().enumerate().map(|(k, &index)| {
            prefetch_order_ahead(prefetch, source, order, k);
            take(&source[index as usize])
        }));
        return;
    };
    // Every slot is written below: only slots beyond the buffer's last length need a value first.
    target.resize(order.len(), take(&source[order[0] as usize]));
    let run_len = order.len().div_ceil(pool.thread_num());
    pool.scope(|scope| {
        for (run, order) in target.chunks_mut(run_len).zip(order.chunks(run_len)) {
            scope.spawn(async move {
                for (k, (slot, &index)) in run.iter_mut().zip(order).enumerate() {
                    prefetch_order_ahead(prefetch, source, order, k);
                    *slot = take(&source[index as usize]);
                }
            });
        }
    });
}

/// When `prefetch`, asks for the element of `source` that [`gather_in_order`] reads [`AHEAD`] steps
/// after step `k` (`prefetch.rs`): in the build of W1 at 100,000 colliders the reorder took 0.91 to
/// 1.06 ms with this and 1.13 to 1.67 ms without (two alternating runs of each).
#[inline(always)]
fn prefetch_order_ahead<T>(prefetch: bool, source: &[T], order: &[u32], k: usize) {
    if let Some(&ahead) = order.get(k + AHEAD).filter(|_| prefetch) {
        prefetch_ahead(source, ahead as usize);
    }
}

/// Sorts `sample` (not empty) and pushes to `starts`, which holds the first range's start, the starts
/// of `tasks - 1` more ranges, each holding about as many of the sampled keys, each start at least the
/// one before.
pub(crate) fn push_range_starts<K: Ord + Copy>(
    sample: &mut [K],
    tasks: usize,
    starts: &mut Vec<K>,
) {
    sample.sort_unstable();
    for range in 1..tasks {
        let quantile = sample[range * sample.len() / tasks];
        let previous = *starts.last().expect("the first range's start");
        starts.push(quantile.max(previous));
    }
}

/// Which range `key` is in, of those that begin at the first range's start and then at each of
/// `later_starts` (ascending): counted without a branch, as keys come in no order of their ranges.
#[inline]
pub(crate) fn range_of<K: Ord + Copy>(key: K, later_starts: &[K]) -> usize {
    later_starts
        .iter()
        .map(|&start| usize::from(key >= start))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::tasks::TaskPoolBuilder;

    #[test]
    fn no_pool_is_handed_out_within_on_this_thread_nested_or_not() {
        // Whatever the process's compute pool (other tests may have set it up), none within.
        let outside = ON_THIS_THREAD.get();
        let within = on_this_thread(|| {
            let nested = on_this_thread(|| (ON_THIS_THREAD.get(), pool_for(10, 0).is_none()));
            (nested, ON_THIS_THREAD.get(), pool_for(10, 0).is_none())
        });
        assert!(!outside, "a thread starts free to split");
        assert_eq!(within, ((true, true), true, true), "no pool within");
        assert!(!ON_THIS_THREAD.get(), "free again after");
        // Another thread is free meanwhile.
        let other = on_this_thread(|| std::thread::spawn(|| ON_THIS_THREAD.get()).join().unwrap());
        assert!(!other, "the flag is the thread's own");
    }

    #[test]
    fn gathers_in_order_on_one_thread_and_on_several() {
        let pool = TaskPoolBuilder::new().num_threads(3).build();
        // Small enough for the cache, and too large for it (`prefetch.rs`).
        for len in [10_000, 200_000] {
            let source: Vec<u64> = (0..len).map(|i| i * 3 + 1).collect();
            assert_eq!(worth_prefetching(&source), len > 10_000);
            let order: Vec<u32> = (0..len as u32).map(|i| (i * 7919) % len as u32).collect();
            let expected: Vec<u64> = order.iter().map(|&i| source[i as usize]).collect();
            for pool in [None, Some(&pool)] {
                // A longer buffer than needed, as a kept buffer can be.
                let mut target = vec![0; len as usize + 2_000];
                gather_in_order(pool, &source, &order, &mut target, |&value| value);
                assert_eq!(target, expected, "{len}, with a pool: {}", pool.is_some());
            }
        }
    }

    #[test]
    fn splits_a_sample_into_ranges_and_finds_a_key_s_range() {
        let mut sample: Vec<u32> = (0..100).rev().collect();
        let mut starts = vec![0];
        push_range_starts(&mut sample, 4, &mut starts);
        assert_eq!(starts, [0, 25, 50, 75], "quartiles of 0 to 99");
        let ranges: Vec<usize> = [0, 24, 25, 74, 75, 1000]
            .iter()
            .map(|&key| range_of(key, &starts[1..]))
            .collect();
        assert_eq!(
            ranges,
            [0, 0, 1, 2, 3, 3],
            "each key in the range it reaches"
        );
        // A crowded value: ranges of the same start, the earlier ones empty.
        let mut crowded = vec![7u32; 50];
        let mut starts = vec![0];
        push_range_starts(&mut crowded, 3, &mut starts);
        assert_eq!(starts, [0, 7, 7], "equal starts");
        assert_eq!(
            range_of(7, &starts[1..]),
            2,
            "the crowd goes to the last range"
        );
    }
}
