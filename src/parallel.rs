//! Splitting a stage's pass over Bevy's compute task pool.

use bevy::tasks::{ComputeTaskPool, TaskPool};

/// The compute task pool, when it has several threads and `items` reach `threshold`: one thread gains
/// nothing from the pool's tasks and pays for them, and few items pay for them too.
pub(crate) fn pool_for(items: usize, threshold: usize) -> Option<&'static TaskPool> {
    ComputeTaskPool::try_get()
        .filter(|pool| pool.thread_num() > 1 && items >= threshold)
        .map(|pool| &**pool)
}
