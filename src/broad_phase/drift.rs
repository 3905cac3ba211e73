//! Taking this update's colliders, as gathered, into the entries of the last build, for an update that
//! keeps the build's grid because the colliders only drifted within their grown boxes.
//!
//! Slot by slot in the build's order: the gathered collider the build put there must be the same
//! entity, its new shape replaces the entry's, and its box must lie within its grown box of the build
//! or it counts as escaped. Above [`PARALLEL_THRESHOLD`] colliders the slots are split over the compute
//! task pool when it has several threads, a run of slots a task, as the build's reorder is.

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bevy::tasks::TaskPool;

use super::ColliderEntry;
use super::gather::GatheredCollider;
use super::grid::{Bounds, UniformGrid};
use super::moved::MovedSinceBuild;
use crate::prefetch::{AHEAD, prefetch_ahead, worth_prefetching};

/// Below this many colliders the slots are taken on one thread.
pub(super) const PARALLEL_THRESHOLD: usize = 32_768;

/// What the slots are taken from and checked against.
#[derive(Clone, Copy)]
pub(super) struct DriftSource<'a> {
    /// The colliders as gathered this update, with their padded boxes, in the order of Bevy's tables.
    pub gathered: &'a [GatheredCollider],
    /// The build's grid, whose boxes are the grown ones, in the slots' order.
    pub grid: &'a UniformGrid,
    /// The slots moved since the build: they need no check.
    pub moved: &'a MovedSinceBuild,
    /// How many slots may escape in all.
    pub room: usize,
}

/// The entries and boxes to write, slot by slot, and the build's order (`order[slot]` is the gathered
/// index the build put in that slot).
pub(super) struct DriftTarget<'a> {
    pub entries: &'a mut [ColliderEntry],
    pub slot_bounds: &'a mut [Bounds],
    pub order: &'a [u32],
}

/// Takes every slot, on `pool` when given: writes each entry's new shape and packed box, and sets
/// `escaped` to the slots whose boxes left their grown boxes (in order). Returns `false`, with the
/// entries partly written, when a gathered collider is not the entity of its slot or more than `room`
/// escaped. `task_escaped` holds the tasks' lists between updates.
pub(super) fn take_drifted(
    pool: Option<&TaskPool>,
    source: DriftSource,
    target: DriftTarget,
    escaped: &mut Vec<u32>,
    task_escaped: &mut Vec<Vec<u32>>,
) -> bool {
    escaped.clear();
    let escaped_count = &AtomicUsize::new(0);
    let Some(pool) = pool else {
        return take_run(source, 0, target, escaped_count, escaped);
    };
    let tasks = pool.thread_num() * 4;
    let run_len = target.entries.len().div_ceil(tasks).max(1);
    task_escaped.resize_with(tasks, Vec::new);
    // Every list, also of tasks without a run this update.
    for list in task_escaped.iter_mut() {
        list.clear();
    }
    let failed = &AtomicBool::new(false);
    pool.scope(|scope| {
        let DriftTarget {
            entries,
            slot_bounds,
            order,
        } = target;
        let runs = (entries.chunks_mut(run_len))
            .zip(slot_bounds.chunks_mut(run_len))
            .zip(order.chunks(run_len))
            .zip(task_escaped.iter_mut());
        for (run, (((entries, slot_bounds), order), list)) in runs.enumerate() {
            scope.spawn(async move {
                let run_target = DriftTarget {
                    entries,
                    slot_bounds,
                    order,
                };
                if !take_run(source, run * run_len, run_target, escaped_count, list) {
                    failed.store(true, Ordering::Relaxed);
                }
            });
        }
    });
    if failed.load(Ordering::Relaxed) {
        return false;
    }
    for list in task_escaped.iter() {
        escaped.extend_from_slice(list);
    }
    escaped.len() <= source.room
}

/// [`sample_shows_too_many_escaped`] checks one slot in this many.
const ESCAPE_SAMPLE_STRIDE: usize = 16;

/// Whether one slot in [`ESCAPE_SAMPLE_STRIDE`] shows more than `room` escaped in all, checked before
/// [`take_drifted`]: where it does (every sixth update of workload W1), the pass over every slot would
/// be spent for nothing. A sample that misjudges builds an update early, or lets the pass fail.
pub(super) fn sample_shows_too_many_escaped(source: DriftSource, order: &[u32]) -> bool {
    let sampled = (0..order.len()).step_by(ESCAPE_SAMPLE_STRIDE);
    let escaped = sampled
        .filter(|&slot| {
            let bounds = Bounds::of(&source.gathered[order[slot] as usize].aabb);
            source.has_escaped(slot, bounds)
        })
        .count();
    escaped * ESCAPE_SAMPLE_STRIDE > source.room
}

impl DriftSource<'_> {
    /// Whether the collider taken into `slot`, of box `bounds`, left its grown box for the first time
    /// since the build.
    #[inline]
    fn has_escaped(&self, slot: usize, bounds: Bounds) -> bool {
        !self.grid.sorted_contains(slot, bounds) && !self.moved.is_moved(slot)
    }
}

/// [`take_drifted`] for one run of slots, the first being `first_slot`; `escaped_count` counts the
/// escapes of every run, so that each stops once they are too many.
#[inline(always)]
fn take_run(
    source: DriftSource,
    first_slot: usize,
    target: DriftTarget,
    escaped_count: &AtomicUsize,
    escaped: &mut Vec<u32>,
) -> bool {
    // The gathered colliders are read out of order (`prefetch.rs`): a loop for each choice, so that
    // the one that does not ask costs nothing for it.
    if worth_prefetching(source.gathered) {
        take_slots::<true>(source, first_slot, target, escaped_count, escaped)
    } else {
        take_slots::<false>(source, first_slot, target, escaped_count, escaped)
    }
}

/// [`take_run`]'s loop, asking for the gathered colliders [`AHEAD`] slots on when `PREFETCH`.
#[inline(always)]
fn take_slots<const PREFETCH: bool>(
    source: DriftSource,
    first_slot: usize,
    target: DriftTarget,
    escaped_count: &AtomicUsize,
    escaped: &mut Vec<u32>,
) -> bool {
    let runs = (target.entries.iter_mut())
        .zip(target.slot_bounds.iter_mut())
        .zip(target.order);
    for (offset, ((entry, slot_bounds), &gathered)) in runs.enumerate() {
        if let Some(&ahead) = target.order.get(offset + AHEAD).filter(|_| PREFETCH) {
            prefetch_ahead(source.gathered, ahead as usize);
        }
        let slot = first_slot + offset;
        let new = &source.gathered[gathered as usize];
        if new.entry.entity != entry.entity {
            return false;
        }
        entry.shape = new.entry.shape;
        let bounds = Bounds::of(&new.aabb);
        *slot_bounds = bounds;
        if source.has_escaped(slot, bounds) {
            escaped.push(slot as u32);
            if escaped_count.fetch_add(1, Ordering::Relaxed) >= source.room {
                return false;
            }
        }
    }
    true
}
