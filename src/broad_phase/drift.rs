//! Taking this update's colliders, as gathered, into the entries of the last build, for an update that
//! keeps the build's grid because the colliders only drifted within their grown boxes.
//!
//! Slot by slot in the build's order: the gathered collider the build put there must be the same
//! entity, its new shape replaces the entry's, and its box must lie within its grown box of the build
//! or it counts as escaped. Above [`PARALLEL_THRESHOLD`] colliders the slots are split over the compute
//! task pool when it has several threads, a run of slots a task, as the build's reorder is.
//!
//! Where the build's gathered colliders were the rows of the tables that hold them, one table after
//! another, the update reads those tables instead, row by row, and takes each row into its slot
//! ([`take_rows`]): no gather.

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bevy::prelude::*;
use bevy::tasks::TaskPool;

use super::background;
use super::gather::GatheredCollider;
use super::grid::{Bounds, UniformGrid};
use super::moved::MovedSinceBuild;
use super::{ColliderEntry, RowSlot, padded};
use crate::collider::ColliderWorldShape;
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;
use crate::prefetch::{
    AHEAD, prefetch_ahead, worth_prefetching, worth_prefetching_between_updates,
};

/// Below this many colliders the slots are taken on one thread.
pub(super) const PARALLEL_THRESHOLD: usize = 32_768;

/// What the slots are taken from and checked against.
#[derive(Clone, Copy)]
pub(super) struct DriftSource<'a> {
    /// The colliders as gathered this update, with their padded boxes, in the order of Bevy's tables.
    pub gathered: &'a [GatheredCollider],
    /// What their new boxes are checked against.
    pub checks: EscapeChecks<'a>,
}

/// What the slots' new boxes are checked against.
#[derive(Clone, Copy)]
pub(super) struct EscapeChecks<'a> {
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

/// How an update's attempt to take the drifted colliders went.
pub(super) enum Drift {
    /// Every slot was taken, and few escaped.
    Taken,
    /// Too many escaped: the sample before the pass showed it (see [`sample_shows_too_many_escaped`]),
    /// or the pass found it.
    TooManyEscaped,
    /// The pass found a collider not the entity of its slot, or an invalid one.
    NotTaken,
}

/// The most of Bevy's tables with colliders whose rows an update that keeps the grid reads in place
/// ([`TableRows`]); colliders spread over more tables are gathered.
pub(super) const MAX_TABLES_IN_PLACE: usize = 8;

/// The colliders as they are in the tables of Bevy's that hold them, row by row, one table after
/// another in the order a gather reads them: a row's index counts the rows of the tables before its
/// own.
#[derive(Default)]
pub(super) struct TableRows<'a> {
    /// The tables with rows, the first `count`.
    tables: [TableSlices<'a>; MAX_TABLES_IN_PLACE],
    count: usize,
    /// How many rows in all.
    len: usize,
}

/// One table's rows, as slices.
#[derive(Clone, Copy, Default)]
struct TableSlices<'a> {
    entities: &'a [Entity],
    shapes: &'a [ColliderWorldShape],
    layers: &'a [CollisionLayers],
}

impl<'a> TableRows<'a> {
    /// Adds a table's rows after the others'; returns `false`, adding nothing, when
    /// [`MAX_TABLES_IN_PLACE`] tables hold rows already. A table without rows adds nothing.
    pub(super) fn push(
        &mut self,
        entities: &'a [Entity],
        shapes: &'a [ColliderWorldShape],
        layers: &'a [CollisionLayers],
    ) -> bool {
        if entities.is_empty() {
            return true;
        }
        let Some(table) = self.tables.get_mut(self.count) else {
            return false;
        };
        *table = TableSlices {
            entities,
            shapes,
            layers,
        };
        self.count += 1;
        self.len += entities.len();
        true
    }

    /// How many rows in all.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The tables with rows, in order.
    fn tables(&self) -> &[TableSlices<'a>] {
        &self.tables[..self.count]
    }

    /// The table of `row` (counted over every table), and the row in it.
    fn table_of(&self, mut row: usize) -> Option<(&TableSlices<'a>, usize)> {
        for table in self.tables() {
            if row < table.entities.len() {
                return Some((table, row));
            }
            row -= table.entities.len();
        }
        None
    }

    /// The entity in `row` (counted over every table).
    fn entity(&self, row: usize) -> Option<Entity> {
        let (table, row) = self.table_of(row)?;
        Some(table.entities[row])
    }

    /// The shape and padded box of the collider in `row` (counted over every table); `None` when its
    /// shape is invalid.
    fn shape_and_bounds(&self, row: usize) -> Option<(WorldShape, Bounds)> {
        let (table, row) = self.table_of(row)?;
        table.shape_and_bounds(row)
    }
}

impl TableSlices<'_> {
    /// The shape and padded box of the collider in `row`; `None` when its shape is invalid.
    #[inline(always)]
    fn shape_and_bounds(&self, row: usize) -> Option<(WorldShape, Bounds)> {
        let shape = self.shapes[row].0?;
        Some((shape, Bounds::of(&padded(shape.aabb()))))
    }
}

/// A row of the tables whose entity has no live slot in the build: a collider new since, which the
/// update appends to the entries as moved.
#[derive(Clone, Copy, Debug)]
pub(super) struct NewRow {
    pub entity: Entity,
    pub shape: WorldShape,
    pub layers: CollisionLayers,
    /// Its row, counted over every table.
    pub row: u32,
}

/// What [`take_rows`] found besides the slots it wrote and those that escaped.
#[derive(Debug, Default)]
pub(super) struct RowsTaken {
    /// The rows of colliders new since the build.
    pub new_rows: Vec<NewRow>,
    /// Whether a collider of the build was in another row than `row_slots` said.
    pub relocated: bool,
}

/// Takes every row of `rows` into the slot the build put it in (`row_slots[row]`, whose gathered
/// indices were these rows, counted over every table), on one thread: as [`take_drifted`], writing the
/// entries and boxes out of order instead of reading the colliders out of order.
///
/// Colliders that came or went since the build move rows: Bevy's table fills a despawned collider's row
/// with its last one, and a new collider takes a row at the end. A row whose entity is not the one
/// `row_slots` gives (or whose slot is gone, [`MovedSinceBuild::remove`]) looks its entity's slot up
/// ([`MovedSinceBuild::slot`]) and rewrites its `row_slots` entry, so that the next update finds it in
/// order again; an entity with no live slot is new since the build, listed in `taken` for the caller to
/// append. Every live slot must be taken, once: otherwise a collider left without the broad phase being
/// told, and nothing is taken. `row_slots` ends as long as `rows`.
///
/// The tables are read one after another, up to [`MAX_TABLES_IN_PLACE`] with rows, as a game's
/// colliders spread over the component sets of its kinds of entity: on workload W1 at 10,000
/// colliders spread over four tables (`collision_bench --tables 4`), the broad phase took 0.084 to
/// 0.097 ms, against 0.100 to 0.112 ms when only colliders in one table were read in place and these
/// were gathered (seven alternating runs each, 400 frames, in two quiet stretches).
///
/// The rows come in the order of Bevy's table, where the colliders' kinds come in whatever order the
/// game spawned them: in the slots' order they come as the colliders lie in the world, and the box of
/// each shape, worked out by its kind, costs a mispredicted branch on about every other one. On
/// workload W1 at 10,000 colliders, whose kinds come in a period of ten, reading the table in the
/// slots' order took the broad phase 0.216 to 0.225 ms, against 0.145 to 0.147 ms for the gather and
/// the pass over the gathered colliders (three alternating runs each). In the table's order it takes
/// 0.121 to 0.124 ms, against 0.144 to 0.148 ms (six alternating runs each, in a quieter stretch).
///
/// What each row is checked against, its slot's entity and grown box, comes from `row_slots` in the
/// rows' order, so that the loop reads nothing out of order and only writes there: reading the entity
/// from the entry and the grown box from the grid, by slot, the broad phase took 0.100 ms on W1 at
/// 10,000, against 0.085 ms (two alternating runs each, both builds with temporary timers in the
/// stage). Asking for the slots' entries and boxes ahead of their writes, which paid while the loop
/// read them, no longer does: 0.082 to 0.085 ms without, against 0.085 to 0.087 ms asking 16 rows ahead
/// (three alternating runs each), and the same at 8 or 32.
pub(super) fn take_rows(
    rows: &TableRows,
    row_slots: &mut Vec<RowSlot>,
    checks: EscapeChecks,
    target: DriftTarget,
    escaped: &mut Vec<u32>,
    taken: &mut RowsTaken,
) -> Drift {
    let RowsTaken {
        new_rows,
        relocated,
    } = taken;
    escaped.clear();
    new_rows.clear();
    *relocated = false;
    row_slots.resize(rows.len(), RowSlot::UNSET);
    let moved = checks.moved;
    // An invalid collider counts as escaped: the pass stops at it. A row that holds another collider
    // than `row_slots` says (one came, went or changed tables) is left to the pass, which looks it up.
    let row_escaped = |row: usize| {
        let RowSlot {
            grown,
            entity,
            slot,
        } = row_slots[row];
        rows.entity(row) == Some(entity)
            && (rows.shape_and_bounds(row))
                .is_none_or(|(_, bounds)| checks.has_left(slot as usize, grown, bounds))
    };
    if worth_sampling(rows.len())
        && sample_shows_too_many_escaped(rows.len(), checks.room, row_escaped)
    {
        return Drift::TooManyEscaped;
    }
    // The build's slots, which its grid holds; slots appended since have no grown box.
    let built_slots = target.order.len();
    let DriftTarget {
        entries,
        slot_bounds,
        ..
    } = target;
    let mut target = RowsTarget {
        entries,
        slot_bounds,
        escaped,
    };
    // A slot is gone only where some collider went since the build.
    let some_gone = moved.gone_count() > 0;
    let mut first_row = 0;
    for table in rows.tables() {
        let len = table.entities.len();
        let table_slots = &mut row_slots[first_row..first_row + len];
        let mut row = 0;
        loop {
            // The room the new colliders left for escapes.
            let room = checks.room.saturating_sub(new_rows.len());
            let stopped = if some_gone {
                take_rows_in_order::<true>(table, row, table_slots, checks, &mut target, room)
            } else {
                take_rows_in_order::<false>(table, row, table_slots, checks, &mut target, room)
            };
            row = match stopped {
                Ok(row) => row,
                Err(drift) => return drift,
            };
            if row == len {
                break;
            }
            // The row holds another collider than its record says: its slot is looked up, and the
            // pass goes on from it; or it is new.
            let entity = table.entities[row];
            if let Some(found) = slot_of_row(entity, target.entries, checks, built_slots) {
                table_slots[row] = found;
                *relocated = true;
                continue;
            }
            let Some((shape, _)) = table.shape_and_bounds(row) else {
                return Drift::NotTaken;
            };
            new_rows.push(NewRow {
                entity,
                shape,
                layers: table.layers[row],
                row: (first_row + row) as u32,
            });
            table_slots[row] = RowSlot::UNSET;
            if target.escaped.len() + new_rows.len() > checks.room {
                return Drift::TooManyEscaped;
            }
            row += 1;
        }
        first_row += len;
    }
    let (entries, escaped) = (&*target.entries, target.escaped);
    // Each row not new took the slot of its entity, each slot at most once: every live slot was taken
    // if as many.
    if rows.len() - new_rows.len() != entries.len() - moved.gone_count() {
        return Drift::NotTaken;
    }
    // In the slots' order, as the pass over the slots lists them.
    escaped.sort_unstable();
    Drift::Taken
}

/// What [`take_rows_in_order`] writes: each slot's entry and box, and the slots that escaped.
struct RowsTarget<'a> {
    entries: &'a mut [ColliderEntry],
    slot_bounds: &'a mut [Bounds],
    escaped: &'a mut Vec<u32>,
}

/// Takes `table`'s rows from `start` on into the slots their records give (`row_slots`, the table's),
/// while each row holds the entity of its record (and, with `CHECK_GONE`, the record's slot is not
/// gone): returns the row it stopped at, the table's length where it took every row, or how the pass
/// ends (an invalid collider, or more than `room` escaped). The loop holds nothing else, so that the
/// look-ups of rows that changed, and the new colliders' list, cost it nothing: with them in the loop,
/// W1's broad phase at 10,000 took 0.096 to 0.139 ms, against 0.093 to 0.095 ms before any look-up and
/// 0.085 to 0.106 ms with this loop (four alternating runs each of 500 frames, a noisy stretch); in a
/// quieter one, this loop 0.076 to 0.085 ms against 0.072 to 0.089 ms.
///
/// Each row's slot lies anywhere in the entries and boxes, so the loop asks for the slot [`AHEAD`] rows
/// on (`prefetch.rs`) where the entries take more than a quarter of a mebibyte, though they fit the
/// cache: in a game, whose updates lie milliseconds apart, they are out of it when the update comes
/// ([`worth_prefetching_between_updates`], which gives the figures).
#[inline(never)]
fn take_rows_in_order<const CHECK_GONE: bool>(
    table: &TableSlices,
    start: usize,
    row_slots: &[RowSlot],
    checks: EscapeChecks,
    target: &mut RowsTarget,
    room: usize,
) -> Result<usize, Drift> {
    let prefetch = worth_prefetching_between_updates(target.entries);
    let rows = table.entities[start..].iter().zip(&row_slots[start..]);
    for (row, (&entity, row_slot)) in (start..).zip(rows) {
        if let Some(ahead) = row_slots.get(row + AHEAD).filter(|_| prefetch) {
            prefetch_ahead(target.entries, ahead.slot as usize);
            prefetch_ahead(target.slot_bounds, ahead.slot as usize);
        }
        if row_slot.entity != entity || (CHECK_GONE && checks.moved.is_gone(row_slot.slot as usize))
        {
            return Ok(row);
        }
        let Some((shape, bounds)) = table.shape_and_bounds(row) else {
            return Err(Drift::NotTaken);
        };
        let slot = row_slot.slot as usize;
        target.entries[slot].shape = shape;
        target.slot_bounds[slot] = bounds;
        if checks.has_left(slot, row_slot.grown, bounds) {
            target.escaped.push(slot as u32);
            if target.escaped.len() > room {
                return Err(Drift::TooManyEscaped);
            }
        }
    }
    Ok(table.entities.len())
}

/// The slot of `entity`, found in another row than the build's (or than the last update's), as a row of
/// `row_slots`: `None` when it has no live slot, being new since the build. `built_slots` is how many
/// slots the build made: those appended since have no grown box, and count as moved.
#[cold]
#[inline(never)]
fn slot_of_row(
    entity: Entity,
    entries: &[ColliderEntry],
    checks: EscapeChecks,
    built_slots: usize,
) -> Option<RowSlot> {
    let moved = checks.moved;
    let slot = moved
        .slot(entity, entries)
        .filter(|&slot| !moved.is_gone(slot))?;
    let grown = if slot < built_slots {
        checks.grid.sorted_bounds(slot)
    } else {
        Bounds::NOWHERE
    };
    Some(RowSlot {
        grown,
        entity,
        slot: slot as u32,
    })
}

/// Takes every slot, on `pool` when given, unless a sample ([`worth_sampling`]) shows too many escaped
/// first ([`sample_shows_too_many_escaped`]): writes each entry's new shape and packed box, and sets
/// `escaped` to the slots whose boxes left their grown boxes (in order). The entries are left partly
/// written when a gathered collider is not the entity of its slot or more than `room` escaped.
/// `task_escaped` holds the tasks' lists between updates.
pub(super) fn take_drifted(
    pool: Option<&TaskPool>,
    source: DriftSource,
    target: DriftTarget,
    escaped: &mut Vec<u32>,
    task_escaped: &mut Vec<Vec<u32>>,
) -> Drift {
    let order = target.order;
    let slot_escaped = |slot: usize| {
        let bounds = Bounds::of(&source.gathered[order[slot] as usize].aabb);
        source.checks.has_escaped(slot, bounds)
    };
    if worth_sampling(order.len())
        && sample_shows_too_many_escaped(order.len(), source.checks.room, slot_escaped)
    {
        return Drift::TooManyEscaped;
    }
    take_slots_of_runs(pool, source, target, escaped, task_escaped)
}

/// [`take_drifted`]'s pass over the slots, in runs over `pool` when given.
fn take_slots_of_runs(
    pool: Option<&TaskPool>,
    source: DriftSource,
    target: DriftTarget,
    escaped: &mut Vec<u32>,
    task_escaped: &mut Vec<Vec<u32>>,
) -> Drift {
    escaped.clear();
    let escaped_count = &AtomicUsize::new(0);
    let outcome = |taken: bool| {
        if taken {
            Drift::Taken
        } else if escaped_count.load(Ordering::Relaxed) > source.checks.room {
            Drift::TooManyEscaped
        } else {
            Drift::NotTaken
        }
    };
    let Some(pool) = pool else {
        return outcome(take_run(source, 0, target, escaped_count, escaped));
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
        return outcome(false);
    }
    for list in task_escaped.iter() {
        escaped.extend_from_slice(list);
    }
    outcome(escaped.len() <= source.checks.room)
}

/// [`sample_shows_too_many_escaped`] checks one slot in this many.
const ESCAPE_SAMPLE_STRIDE: usize = 16;

/// Whether a sample of `colliders` comes before the pass over them: only where the builds run in the
/// update. There, the update on which a wave of colliders leaves their grown boxes finds too many
/// escaped, and the sample spares it a pass spent for nothing. Where the builds run in the background
/// (`background.rs`), one starts before such a wave, and the update takes it in instead: the sample
/// costs every update and spares almost none, and the pass tells when too many escaped. On workload W1
/// at 10,000 colliders a temporary timer put the sample at 6.5 to 8.5 µs an update, and without it the
/// broad phase took 0.091 to 0.104 ms against 0.097 to 0.107 ms (five alternating runs each); at
/// 100,000, 2.28 to 2.31 ms against 2.35 to 2.49 ms (three).
#[inline]
fn worth_sampling(colliders: usize) -> bool {
    !background::SIZES.contains(&colliders)
}

/// Whether one in [`ESCAPE_SAMPLE_STRIDE`] of `count` colliders (`escaped` telling whether the k-th
/// left its grown box) shows more than `room` escaped in all, checked before the pass of [`take_rows`]
/// or [`take_drifted`]: where it does (every sixth update of workload W1 in a world whose builds run in
/// the update), the pass over every collider would be spent for nothing. A sample that misjudges
/// builds an update early, or lets the pass fail.
#[inline]
fn sample_shows_too_many_escaped(
    count: usize,
    room: usize,
    escaped: impl Fn(usize) -> bool,
) -> bool {
    let sampled = (0..count).step_by(ESCAPE_SAMPLE_STRIDE);
    sampled.filter(|&k| escaped(k)).count() * ESCAPE_SAMPLE_STRIDE > room
}

impl EscapeChecks<'_> {
    /// Whether the collider taken into `slot`, of box `bounds`, left its grown box for the first time
    /// since the build.
    #[inline]
    fn has_escaped(&self, slot: usize, bounds: Bounds) -> bool {
        self.has_left(slot, self.grid.sorted_bounds(slot), bounds)
    }

    /// [`Self::has_escaped`], with the slot's grown box given.
    #[inline]
    fn has_left(&self, slot: usize, grown: Bounds, bounds: Bounds) -> bool {
        !grown.contains(bounds) && !self.moved.is_moved(slot)
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
        if source.checks.has_escaped(slot, bounds) {
            escaped.push(slot as u32);
            if escaped_count.fetch_add(1, Ordering::Relaxed) >= source.checks.room {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::WorldCircle;

    #[test]
    fn table_rows_count_over_the_tables_in_order_and_hold_at_most_eight_with_rows() {
        let entities = [1, 2, 3].map(|index| Entity::from_raw_u32(index).unwrap());
        let circle_at = |x: f32| {
            let circle = WorldCircle::new(Vec2::new(x, 0.0), 1.0);
            ColliderWorldShape(Some(WorldShape::Circle(circle)))
        };
        let shapes = [circle_at(1.0), circle_at(2.0), ColliderWorldShape(None)];
        let layers = [CollisionLayers::ALL; 3];
        let mut rows = TableRows::default();
        assert!(rows.push(&entities[..2], &shapes[..2], &layers[..2]));
        assert!(
            rows.push(&[], &[], &[]),
            "a table without rows adds nothing"
        );
        assert!(rows.push(&entities[2..], &shapes[2..], &layers[2..]));
        assert_eq!((rows.len(), rows.tables().len()), (3, 2));
        let center = |row| {
            rows.shape_and_bounds(row)
                .map(|(shape, _)| shape.center().x)
        };
        // The third row, the first of the second table, is invalid; there is no fourth.
        assert_eq!([0, 1, 2, 3].map(center), [Some(1.0), Some(2.0), None, None]);
        let [first, second, third] = entities.map(Some);
        assert_eq!(
            [0, 1, 2, 3].map(|row| rows.entity(row)),
            [first, second, third, None]
        );
        let (_, bounds) = rows.shape_and_bounds(1).unwrap();
        let expected = Bounds::of(&padded(circle_at(2.0).0.unwrap().aabb()));
        assert!(bounds.contains(expected) && expected.contains(bounds));

        let mut full = TableRows::default();
        for _ in 0..MAX_TABLES_IN_PLACE {
            assert!(full.push(&entities[..1], &shapes[..1], &layers[..1]));
        }
        assert!(
            !full.push(&entities[..1], &shapes[..1], &layers[..1]),
            "one table too many"
        );
        assert!(
            full.push(&[], &[], &[]),
            "a table without rows still adds nothing"
        );
        assert_eq!(full.len(), MAX_TABLES_IN_PLACE);
    }
}
