//! Splitting the pipeline's passes over Bevy's compute task pool.

use bevy::tasks::{ComputeTaskPool, TaskPool};

/// The compute task pool, when it has several threads and `items` reach `threshold`: one thread gains
/// nothing from the pool's tasks and pays for them (allocations included), and few items pay for them
/// too.
pub(crate) fn pool_for(items: usize, threshold: usize) -> Option<&'static TaskPool> {
    ComputeTaskPool::try_get()
        .filter(|pool| pool.thread_num() > 1 && items >= threshold)
        .map(|pool| &**pool)
}

/// Writes `source[order[k]]` to `target[k]` for every k (`target` ends with `order`'s length), split
/// into a run of `target` per task when `pool` is given.
pub(crate) fn gather_in_order<T: Copy + Send + Sync>(
    pool: Option<&TaskPool>,
    source: &[T],
    order: &[u32],
    target: &mut Vec<T>,
) {
    let Some(pool) = pool.filter(|_| !order.is_empty()) else {
        target.clear();
        target.extend(order.iter().map(|&index| source[index as usize]));
        return;
    };
    // Every slot is written below: only slots beyond the buffer's last length need a value first.
    target.resize(order.len(), source[order[0] as usize]);
    let run_len = order.len().div_ceil(pool.thread_num());
    pool.scope(|scope| {
        for (run, order) in target.chunks_mut(run_len).zip(order.chunks(run_len)) {
            scope.spawn(async move {
                for (slot, &index) in run.iter_mut().zip(order) {
                    *slot = source[index as usize];
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::tasks::TaskPoolBuilder;

    #[test]
    fn gathers_in_order_on_one_thread_and_on_several() {
        let source: Vec<u64> = (0..10_000).map(|i| i * 3 + 1).collect();
        let order: Vec<u32> = (0..10_000u32).map(|i| (i * 7919) % 10_000).collect();
        let expected: Vec<u64> = order.iter().map(|&i| source[i as usize]).collect();
        let pool = TaskPoolBuilder::new().num_threads(3).build();
        for pool in [None, Some(&pool)] {
            // A longer buffer than needed, as a kept buffer can be.
            let mut target = vec![0; 12_000];
            gather_in_order(pool, &source, &order, &mut target);
            assert_eq!(target, expected, "with a pool: {}", pool.is_some());
        }
    }
}
