//! The prepare stage: each collider's [`ColliderWorldShape`] from its [`Collider`] and
//! `GlobalTransform`, rebuilt when either changed.

use core::panic::Location;
use core::sync::atomic::{AtomicUsize, Ordering};

use bevy::ecs::change_detection::{
    ContiguousComponentTicksMut, ContiguousMut, MAX_CHANGE_AGE, Tick,
};
use bevy::prelude::*;
use bevy::tasks::TaskPool;

use crate::broad_phase::BroadPhase;
use crate::collider::{Collider, ColliderDisabled, ColliderWorldShape, InvalidCollider, is_scaled};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;
use crate::parallel::pool_for;

/// The colliders whose `Collider` or `GlobalTransform` changed since the prepare stage last ran, one at
/// a time: for worlds whose tables cannot be read as slices.
type ChangedColliders<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Collider,
        &'static GlobalTransform,
        &'static mut ColliderWorldShape,
        Has<InvalidCollider>,
        Has<ColliderDisabled>,
    ),
    Or<(Changed<Collider>, Changed<GlobalTransform>)>,
>;

/// Every collider, with the change ticks of its `Collider`, `GlobalTransform` and `CollisionLayers`:
/// read a table at a time, as slices, where [`ChangedColliders`] yields one collider at a time.
type ColliderTables<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Ref<'static, Collider>,
        Ref<'static, GlobalTransform>,
        &'static mut ColliderWorldShape,
        Has<InvalidCollider>,
        Has<ColliderDisabled>,
        Option<Ref<'static, CollisionLayers>>,
    ),
>;

/// The colliders whose `CollisionLayers` changed since the prepare stage last ran: for worlds whose
/// tables cannot be read as slices.
type ChangedLayers<'w, 's> = Query<'w, 's, (), (With<Collider>, Changed<CollisionLayers>)>;

/// Below this many colliders in a table, its rows are rebuilt on one thread.
const PARALLEL_THRESHOLD: usize = 2048;
/// How many change ticks are compared at a time, without a branch, before the rows they belong to are
/// read one by one (see [`any_changed`]).
const TICK_BLOCK: usize = 64;
/// A table's shapes are built without a branch on whether each transform is scaled once more than one
/// sampled transform in this many takes the rarer way (see [`scales_mixed`]).
const MIXED_SCALES_SHARE: usize = 6;
/// How many of a table's transforms [`scales_mixed`] samples.
const SCALE_SAMPLES: usize = 64;
/// The tasks of a split rebuild add to their shared count of listed colliders this many at a time.
const LISTED_COUNT_STEP: usize = 64;

/// Rebuilds [`ColliderWorldShape`] for every collider whose `Collider` or `GlobalTransform` changed,
/// hands the enabled ones whose shape changed to the broad phase with their new shapes (so that it need
/// not look them up), and warns once per entity when one becomes invalid. The list of moved colliders
/// stops growing once it shows that too many moved for the broad phase to look for their pairs one by
/// one: it then gathers every collider, which needs no list.
///
/// The colliders are read a table at a time, as slices (Bevy's contiguous iteration), with the change
/// ticks compared in the loop: on workload W1 at 10,000 colliders the stage took 0.121 ms against 0.161
/// ms through the query filtered by `Changed`, one collider at a time. Where the world cannot be read
/// as slices (a disabling component stored as a sparse set, see Bevy's `DefaultQueryFilters`), that
/// query serves, on one thread.
///
/// A large table is split over Bevy's compute task pool when it has more than one thread, a run of rows
/// a task: on two threads, 0.094 ms at 10,000, against 0.113 ms through the filtered query's
/// `par_iter_mut`. With one thread (Bevy's default on two cores) splitting only costs.
///
/// It also tells the broad phase whether a collider's layers changed ([`BroadPhase::layers_changed`]),
/// from the same tables' change ticks: see [`any_changed`].
pub(crate) fn update_world_shapes(
    mut colliders: ParamSet<(ChangedColliders, ColliderTables)>,
    changed_layers: ChangedLayers,
    mut broad_phase: ResMut<BroadPhase>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
    commands: ParallelCommands,
    mut task_lists: Local<Vec<Vec<MovedCollider>>>,
) {
    let timer = StageTimer::start();
    let broad_phase = &mut *broad_phase;
    // Worked out once, not for every collider (the grid's build and the colliders moved since stay as
    // they are until the broad phase runs): 122.0 million instructions in 70 updates of W1 at 10,000
    // for the stage before (callgrind), 120.3 million after.
    let room = broad_phase.moved_room();
    let mut tables = colliders.p1();
    match tables.contiguous_iter_mut().ok() {
        Some(tables) => {
            for (entities, colliders, transforms, world_shapes, was_invalid, disabled, layers) in
                tables
            {
                broad_phase.layers_changed |= layers.is_some_and(|layers| {
                    let since = ChangedSince::new(layers.last_run_tick(), layers.this_run_tick());
                    any_changed(layers.changed_ticks_slice(), since)
                        && layers_changed_beyond_new_colliders(
                            layers.changed_ticks_slice(),
                            colliders.added_ticks_slice(),
                            since,
                        )
                });
                let (world_shapes, mut world_shape_ticks) =
                    ContiguousMut::bypass_change_detection_split(world_shapes);
                let (last_run, this_run) = (colliders.last_run_tick(), colliders.this_run_tick());
                let rows = Rows {
                    entities,
                    collider_ticks: colliders.changed_ticks_slice(),
                    transform_ticks: transforms.changed_ticks_slice(),
                    colliders: colliders.into_inner(),
                    transforms: transforms.into_inner(),
                    world_shapes,
                    world_shape_ticks: world_shape_ticks.changed_mut(),
                };
                let table = Table {
                    was_invalid,
                    disabled,
                    scales_mixed: scales_mixed(rows.transforms),
                    last_run,
                    this_run,
                };
                match pool_for(rows.entities.len(), PARALLEL_THRESHOLD) {
                    Some(pool) => {
                        rebuild_rows_split(
                            pool,
                            &commands,
                            rows,
                            table,
                            &mut broad_phase.moved_entities,
                            room,
                            &mut task_lists,
                        );
                    }
                    None => rebuild_table_rows(&commands, rows, table, |change| {
                        push_moved(&mut broad_phase.moved_entities, room, change);
                    }),
                }
                record_callers(&mut world_shape_ticks, table.this_run);
            }
        }
        None => {
            broad_phase.layers_changed |= !changed_layers.is_empty();
            for item in &mut colliders.p0() {
                if let Some(change) = rebuild_changed(&commands, item) {
                    push_moved(&mut broad_phase.moved_entities, room, change);
                }
            }
        }
    }
    diagnostics.timings.prepare = timer.elapsed();
}

/// Whether the layers of a table's rows changed (`changed_ticks`) `since` a run for a collider older
/// than that run: a new collider's layers (`collider_added_ticks` since the run) are new too, but the
/// broad phase reads them where it takes the collider in, and builds the grid where they are not the
/// default ones and it filters by no layers yet ([`BroadPhase::layers_changed`]). Asked only where
/// some row's layers changed ([`any_changed`]); rows are read only in the blocks of [`TICK_BLOCK`]
/// where some did, such as the last blocks of a table that new colliders joined.
#[cold]
fn layers_changed_beyond_new_colliders(
    changed_ticks: &[Tick],
    collider_added_ticks: &[Tick],
    since: ChangedSince,
) -> bool {
    let changed_beyond_new =
        |(&changed, &added): (&Tick, &Tick)| since.holds(changed) && !since.holds(added);
    let blocks = (changed_ticks.chunks(TICK_BLOCK)).zip(collider_added_ticks.chunks(TICK_BLOCK));
    (blocks.filter(|(changed, _)| any_changed(changed, since)))
        .any(|(changed, added)| changed.iter().zip(added).any(changed_beyond_new))
}

/// Whether any of `ticks` changed `since` a run: whether a component of the table changed since then.
///
/// Blocks of ticks are compared without a branch, so that the compiler compares a block in a few vector
/// instructions. The broad phase asked the same of a query filtered by `Changed<CollisionLayers>`,
/// which reads a row at a time: on workload W7 (10,000 colliders at rest) that took 8 to 22 µs of its
/// 17 to 35 µs.
#[inline]
fn any_changed(ticks: &[Tick], since: ChangedSince) -> bool {
    ticks
        .chunks(TICK_BLOCK)
        .any(|block| (block.iter()).fold(false, |any, &tick| any | since.holds(tick)))
}

/// Bevy's test of a change tick against a system's last run (`Tick::is_newer_than`), for many ticks
/// against the same runs, in a form that the compiler turns into vector instructions: a subtraction
/// and a comparison a tick.
#[derive(Clone, Copy, Debug)]
struct ChangedSince {
    this_run: u32,
    /// How many ticks ago the last run was, at most `MAX_CHANGE_AGE`.
    ticks_since_last_run: u32,
}

impl ChangedSince {
    fn new(last_run: Tick, this_run: Tick) -> Self {
        let ticks_since_last_run = this_run.get().wrapping_sub(last_run.get());
        Self {
            this_run: this_run.get(),
            ticks_since_last_run: ticks_since_last_run.min(MAX_CHANGE_AGE),
        }
    }

    /// Whether `tick` is newer than the last run, as `tick.is_newer_than(last_run, this_run)` says.
    /// That clamps the tick's age to `MAX_CHANGE_AGE` before comparing it with the last run's age, which
    /// is clamped the same way and so at most `MAX_CHANGE_AGE`: an age above that is not the smaller,
    /// clamped or not, so the tick's clamp is left out. With Bevy's test the scan of the layers' ticks
    /// alone took 4.2 million instructions in 70 updates of workload W1 at 10,000 colliders
    /// (callgrind); with this one, that scan and the blocks' test of the rows together take 2.4
    /// million.
    #[inline(always)]
    fn holds(self, tick: Tick) -> bool {
        self.this_run.wrapping_sub(tick.get()) < self.ticks_since_last_run
    }
}

/// Whether the `transforms` of a table are scaled and unscaled in such a mix that a branch on which
/// would go one way or the other at random: more than one in [`MIXED_SCALES_SHARE`] of a sample of
/// them takes the rarer way. The table's shapes are then built without that branch
/// ([`Collider::world_shape_from_transform_unbranched`]), which costs more than the branch where the
/// branch nearly always goes the same way. On workload W1 at 10,000 colliders, which turns every
/// collider with `rotate_z` every frame, the prepare stage took 0.080 to 0.082 ms against 0.102 to
/// 0.118 ms over 1,000 frames, as the turns drift the axes' lengths of about half the colliders out of
/// the unscaled range; over 200 frames, before they drift that far, 0.066 to 0.069 ms against 0.066
/// to 0.104 ms (four alternating runs each).
///
/// The sample of a large table steps through its rows by about the golden ratio of their count, a step
/// prime to it, so that it does not keep to every other row, or every tenth, of a table whose rows
/// alternate between kinds of entities (those that turn and those that do not), as a regular stride
/// can. A small table is read whole.
fn scales_mixed(transforms: &[GlobalTransform]) -> bool {
    let len = transforms.len();
    let sampled = len.min(SCALE_SAMPLES);
    let mut step = if len > SCALE_SAMPLES {
        (len as f64 * 0.618_033_988_75) as usize
    } else {
        1
    };
    while greatest_common_divisor(step, len) > 1 {
        step += 1;
    }
    let (mut row, mut scaled) = (0, 0);
    for _ in 0..sampled {
        scaled += usize::from(is_scaled(&transforms[row]));
        row = (row + step) % len;
    }
    scaled.min(sampled - scaled) * MIXED_SCALES_SHARE > sampled
}

/// The greatest common divisor of `a` and `b`, by Euclid's algorithm.
fn greatest_common_divisor(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// An enabled collider whose world shape changed, and its new shape: what the broad phase is handed.
type MovedCollider = (Entity, Option<WorldShape>);

/// Adds `change` to `moved`, the broad phase's list of moved colliders, unless the list already shows
/// that the broad phase will gather every collider: that it holds more than `room` (see
/// [`BroadPhase::moved_room`]).
#[inline]
fn push_moved(moved: &mut Vec<MovedCollider>, room: Option<usize>, change: MovedCollider) {
    if room.is_some_and(|room| moved.len() <= room) {
        moved.push(change);
    }
}

/// What holds for every row of one table, and the ticks to compare the rows' change ticks with.
#[derive(Clone, Copy)]
struct Table {
    was_invalid: bool,
    disabled: bool,
    /// Whether the rows' shapes are built without a branch on whether each transform is scaled (see
    /// [`scales_mixed`]).
    scales_mixed: bool,
    last_run: Tick,
    this_run: Tick,
}

/// Rows of one table, as slices: what the rebuild reads, and the world shapes and their change ticks,
/// which it writes.
struct Rows<'a> {
    entities: &'a [Entity],
    colliders: &'a [Collider],
    transforms: &'a [GlobalTransform],
    collider_ticks: &'a [Tick],
    transform_ticks: &'a [Tick],
    world_shapes: &'a mut [ColliderWorldShape],
    world_shape_ticks: &'a mut [Tick],
}

impl Rows<'_> {
    /// The first `mid` rows, and the rest.
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (entities, entities_rest) = self.entities.split_at(mid);
        let (colliders, colliders_rest) = self.colliders.split_at(mid);
        let (transforms, transforms_rest) = self.transforms.split_at(mid);
        let (collider_ticks, collider_ticks_rest) = self.collider_ticks.split_at(mid);
        let (transform_ticks, transform_ticks_rest) = self.transform_ticks.split_at(mid);
        let (world_shapes, world_shapes_rest) = self.world_shapes.split_at_mut(mid);
        let (world_shape_ticks, world_shape_ticks_rest) = self.world_shape_ticks.split_at_mut(mid);
        (
            Rows {
                entities,
                colliders,
                transforms,
                collider_ticks,
                transform_ticks,
                world_shapes,
                world_shape_ticks,
            },
            Rows {
                entities: entities_rest,
                colliders: colliders_rest,
                transforms: transforms_rest,
                collider_ticks: collider_ticks_rest,
                transform_ticks: transform_ticks_rest,
                world_shapes: world_shapes_rest,
                world_shape_ticks: world_shape_ticks_rest,
            },
        )
    }
}

/// Rebuilds the world shapes of the `rows` whose `Collider` or `GlobalTransform` changed, marking each
/// world shape that changed as changed, as a `Mut` would; calls `moved` with the entity and new shape
/// of each enabled one. With `SCALES_MIXED` it builds their shapes without a branch on whether each
/// transform is scaled: [`rebuild_table_rows`] sets it as the table's [`Table::scales_mixed`].
///
/// The rows are taken [`TICK_BLOCK`] at a time, and a block none of whose rows changed is passed over
/// after one test of its ticks without a branch: the stage took 0.003 to 0.006 ms against 0.009 ms on
/// workload W7 (10,000 colliders at rest), and 0.044 to 0.065 ms against 0.102 to 0.151 ms on W3
/// (100,000 at rest and 1,000 moving), three alternating runs each.
#[inline(always)]
fn rebuild_rows<const SCALES_MIXED: bool>(
    commands: &ParallelCommands,
    rows: Rows,
    table: Table,
    mut moved: impl FnMut(MovedCollider),
) {
    let since = ChangedSince::new(table.last_run, table.this_run);
    let changed =
        |row: usize| since.holds(rows.collider_ticks[row]) | since.holds(rows.transform_ticks[row]);
    let len = rows.entities.len();
    for block_start in (0..len).step_by(TICK_BLOCK) {
        let block = block_start..(block_start + TICK_BLOCK).min(len);
        // A block whose rows did not change is passed over after one comparison of its ticks without a
        // branch (see `any_changed`); where the first row changed, that settles it.
        if !changed(block_start) && !block.clone().fold(false, |any, row| any | changed(row)) {
            continue;
        }
        // By index: over `entities.iter().enumerate()` the stage took 0.16 to 0.18 ms on W1 at 10,000,
        // where a loop by index took 0.136 ms (0.121 ms once it read the slices held in `Rows`).
        for row in block {
            // Both ticks compared without a branch between them: the filter `Changed` does the same.
            if !changed(row) {
                continue;
            }
            let (entity, collider, transform) = (
                rows.entities[row],
                &rows.colliders[row],
                &rows.transforms[row],
            );
            let old = &rows.world_shapes[row];
            let shape = if SCALES_MIXED {
                collider.world_shape_from_transform_unbranched(transform)
            } else {
                collider.world_shape_from_transform(transform)
            };
            if let Some(shape) = changed_world_shape(
                commands,
                entity,
                collider,
                transform,
                shape,
                old,
                table.was_invalid,
            ) {
                rows.world_shapes[row].0 = shape;
                rows.world_shape_ticks[row] = table.this_run;
                if !table.disabled {
                    moved((entity, shape));
                }
            }
        }
    }
}

/// [`rebuild_rows`] for a table, each shape built the way the table's [`Table::scales_mixed`] tells.
#[inline(always)]
fn rebuild_table_rows(
    commands: &ParallelCommands,
    rows: Rows,
    table: Table,
    moved: impl FnMut(MovedCollider),
) {
    if table.scales_mixed {
        rebuild_rows::<true>(commands, rows, table, moved);
    } else {
        rebuild_rows::<false>(commands, rows, table, moved);
    }
}

/// [`rebuild_rows`] split over `pool`, a run of rows a task, each task listing its moved colliders in
/// one of `task_lists` (kept between updates); the lists are added to `moved`, the broad phase's list,
/// in the rows' order, up to `room` (see [`push_moved`]).
fn rebuild_rows_split(
    pool: &TaskPool,
    commands: &ParallelCommands,
    rows: Rows,
    table: Table,
    moved: &mut Vec<MovedCollider>,
    room: Option<usize>,
    task_lists: &mut Vec<Vec<MovedCollider>>,
) {
    let tasks = pool.thread_num() * 4;
    let run_len = rows.entities.len().div_ceil(tasks);
    task_lists.resize_with(tasks, Vec::new);
    // How many colliders the tasks have listed, each task adding its count every
    // `LISTED_COUNT_STEP`: every collider counted is listed, so once the count shows that the broad phase
    // will gather every collider the lists together show it too, and the tasks stop listing.
    let listed = &AtomicUsize::new(0);
    pool.scope(|scope| {
        let mut rest = rows;
        for list in task_lists.iter_mut() {
            let run_end = run_len.min(rest.entities.len());
            let (run, after) = rest.split_at(run_end);
            rest = after;
            list.clear();
            scope.spawn(async move {
                rebuild_table_rows(commands, run, table, |change| {
                    if room.is_some_and(|room| listed.load(Ordering::Relaxed) <= room) {
                        list.push(change);
                        if list.len() % LISTED_COUNT_STEP == 0 {
                            listed.fetch_add(LISTED_COUNT_STEP, Ordering::Relaxed);
                        }
                    }
                });
            });
        }
    });
    for list in task_lists.iter() {
        for &change in list {
            push_moved(moved, room, change);
        }
    }
}

/// Records, for the world shapes changed in this run, where they were changed, as `Mut` does under
/// Bevy's `track_location` feature; nothing without it.
#[inline]
fn record_callers(ticks: &mut ContiguousComponentTicksMut, this_run: Tick) {
    if ticks.changed_by().into_option().is_none() {
        return;
    }
    let changed_rows: Vec<usize> = (ticks.changed().iter().enumerate())
        .filter(|&(_, &tick)| tick == this_run)
        .map(|(row, _)| row)
        .collect();
    let _ = ticks.changed_by_mut().map(|callers| {
        for row in changed_rows {
            callers[row] = Location::caller();
        }
    });
}

/// [`changed_world_shape`] for one item of [`ChangedColliders`], written to its world shape: returns
/// the entity and its new shape when the shape of an enabled collider changed.
#[inline(always)]
fn rebuild_changed(
    commands: &ParallelCommands,
    (entity, collider, transform, mut world_shape, was_invalid, disabled): (
        Entity,
        &Collider,
        &GlobalTransform,
        Mut<ColliderWorldShape>,
        bool,
        bool,
    ),
) -> Option<MovedCollider> {
    let shape = changed_world_shape(
        commands,
        entity,
        collider,
        transform,
        collider.world_shape_from_transform(transform),
        &world_shape,
        was_invalid,
    )?;
    world_shape.0 = shape;
    (!disabled).then_some((entity, shape))
}

/// The world `shape` of a collider as just built from its transform, when it differs from `old`
/// (`Some(None)` when the collider turned invalid); marks the collider valid or invalid when that
/// changed.
#[inline(always)]
fn changed_world_shape(
    commands: &ParallelCommands,
    entity: Entity,
    collider: &Collider,
    transform: &GlobalTransform,
    shape: Option<WorldShape>,
    old: &ColliderWorldShape,
    was_invalid: bool,
) -> Option<Option<WorldShape>> {
    if shape.is_some() == was_invalid {
        mark_validity(commands, entity, collider, transform, shape.is_some());
    }
    // A moved centre settles that the shape changed. The centre is the first field of every kind, so
    // comparing it needs no branch on the kind, where comparing whole shapes does: on workload W1 at
    // 10,000 colliders the stage took 0.189 ms with `set_if_neq` alone, 0.172 ms with this first
    // (builds with aligned code, as `benches/README.md` tells).
    let changed = match (old.0, shape) {
        (Some(old), Some(new)) if old.center() != new.center() => true,
        (old, new) => old != new,
    };
    changed.then_some(shape)
}

/// Adds or removes [`InvalidCollider`] when a collider's validity changed, warning when it became invalid.
#[cold]
fn mark_validity(
    commands: &ParallelCommands,
    entity: Entity,
    collider: &Collider,
    transform: &GlobalTransform,
    valid: bool,
) {
    commands.command_scope(|mut commands| {
        if valid {
            commands.entity(entity).try_remove::<InvalidCollider>();
        } else {
            warn!(
                "collider on {entity} is skipped: its shape is invalid ({collider:?} at {:?}); \
                 it touches nothing until its size and transform are finite and non-zero",
                transform.translation()
            );
            commands.entity(entity).try_insert(InvalidCollider);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_since_agrees_with_bevys_test() {
        let mut next = crate::test_rng::xorshift(0x7157);
        let near = [
            0,
            1,
            2,
            MAX_CHANGE_AGE - 1,
            MAX_CHANGE_AGE,
            MAX_CHANGE_AGE + 1,
            u32::MAX,
        ];
        for _ in 0..200_000 {
            // Ages at random, and ages at or next to the edges: none, the oldest.
            let mut pick = || {
                let bits = next();
                match bits % 3 {
                    0 => (bits >> 32) as u32,
                    _ => near[(bits >> 32) as usize % near.len()],
                }
            };
            let this_run = pick();
            let (last_run, tick) = (this_run.wrapping_sub(pick()), this_run.wrapping_sub(pick()));
            let (last_run, this_run, tick) =
                (Tick::new(last_run), Tick::new(this_run), Tick::new(tick));
            assert_eq!(
                ChangedSince::new(last_run, this_run).holds(tick),
                tick.is_newer_than(last_run, this_run),
                "{tick:?} since {last_run:?}, now {this_run:?}"
            );
        }
    }

    #[test]
    fn any_changed_finds_one_newer_tick_in_any_block_and_no_other() {
        let since =
            |last_run, this_run| ChangedSince::new(Tick::new(last_run), Tick::new(this_run));
        let since_500 = since(500, 510);
        // Ticks up to `last_run` are older, whatever their place among 200 (blocks of 64 and a rest).
        let mut ticks: Vec<Tick> = (0..200).map(|k| Tick::new(300 + k)).collect();
        assert!(!any_changed(&ticks, since_500));
        assert!(!any_changed(&[], since_500), "no rows, no change");
        for row in [0, 63, 64, 127, 199] {
            let old = ticks[row];
            ticks[row] = Tick::new(501);
            assert!(any_changed(&ticks, since_500), "row {row}");
            ticks[row] = old;
        }
        // Across the wrap of the tick counter: changed at u32::MAX, last run just before it.
        let across_the_wrap = since(u32::MAX - 1, 3);
        assert!(any_changed(&[Tick::new(u32::MAX)], across_the_wrap));
        assert!(!any_changed(&[Tick::new(u32::MAX - 1)], across_the_wrap));
    }

    /// `count` transforms at places and angles of their own, those for which `drifted(k)` holds
    /// turned 3,000 times by `rotate_z`, which drifts their axes' lengths out of the unscaled range.
    fn turned_transforms(count: usize, drifted: impl Fn(usize) -> bool) -> Vec<Transform> {
        (0..count)
            .map(|k| {
                let mut transform = Transform::from_xyz(k as f32 * 3.0, (k % 7) as f32, 0.0)
                    .with_rotation(Quat::from_rotation_z(k as f32 * 0.37));
                if drifted(k) {
                    for _ in 0..3_000 {
                        transform.rotate_z(0.01);
                    }
                }
                transform
            })
            .collect()
    }

    #[test]
    fn scales_are_mixed_when_more_than_a_sixth_of_a_sample_takes_the_rarer_way() {
        // Transforms scaled by 1.5 with probability `share`, the others unscaled.
        let mixed = |share: f64| {
            let mut next = crate::test_rng::xorshift(0x5ca1e);
            let transforms: Vec<GlobalTransform> = turned_transforms(640, |_| false)
                .into_iter()
                .map(|transform| {
                    let scaled = (next() % 1000) as f64 / 1000.0 < share;
                    let scale = if scaled { 1.5 } else { 1.0 };
                    transform.with_scale(Vec3::new(scale, scale, 1.0)).into()
                })
                .collect();
            scales_mixed(&transforms)
        };
        assert!(!mixed(0.0), "unscaled only");
        assert!(!mixed(0.1), "a tenth scaled");
        assert!(mixed(0.3), "three tenths scaled");
        assert!(mixed(0.5), "half scaled");
        assert!(mixed(0.7), "three tenths unscaled");
        assert!(!mixed(0.9), "a tenth unscaled");
        assert!(!mixed(1.0), "scaled only");
        assert!(!scales_mixed(&[]), "no transforms");
        // Rows that alternate, in a large table and in a small one, read whole.
        let alternating = |count: usize, period: usize| -> Vec<GlobalTransform> {
            (turned_transforms(count, |_| false).into_iter().enumerate())
                .map(|(k, transform)| {
                    let scale = if k % period == 0 { 1.5 } else { 1.0 };
                    transform.with_scale(Vec3::new(scale, scale, 1.0)).into()
                })
                .collect()
        };
        for (count, period, mixed) in [
            (640, 2, true),
            (1000, 4, true),
            (1000, 10, false),
            (20, 2, true),
            (20, 10, false),
        ] {
            assert_eq!(
                scales_mixed(&alternating(count, period)),
                mixed,
                "one row in {period} of {count} scaled"
            );
        }
        // Turned 3,000 times, three quarters of the transforms drift out of the unscaled range.
        let drifted: Vec<GlobalTransform> = (turned_transforms(640, |k| k % 2 == 1).into_iter())
            .map(Into::into)
            .collect();
        let scaled = drifted
            .iter()
            .filter(|&transform| is_scaled(transform))
            .count();
        assert!((200..320).contains(&scaled), "{scaled} of 640 scaled");
        assert!(scales_mixed(&drifted), "half of them drifted");
    }

    #[test]
    fn tables_of_mixed_scales_get_the_shapes_of_their_transforms() {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            TransformPlugin,
            crate::RectCollisionPlugin::default(),
        ));
        // Half the transforms drifted at random, so that the table's shapes are built without the
        // branch on the scale; every kind, and some with an offset, which keeps the branch.
        let mut next = crate::test_rng::xorshift(0x5ca1e);
        let coins: Vec<bool> = (0..400).map(|_| next().is_multiple_of(2)).collect();
        let transforms = turned_transforms(coins.len(), |k| coins[k]);
        let globals: Vec<GlobalTransform> = transforms.iter().map(|&t| t.into()).collect();
        assert!(scales_mixed(&globals), "the table's scales are mixed");
        let entities: Vec<Entity> = (transforms.iter().enumerate())
            .map(|(k, &transform)| {
                let collider = match k % 4 {
                    0 => Collider::rect(2.0, 1.0),
                    1 => Collider::rotated_rect(3.0, 0.5),
                    2 => Collider::circle(1.25),
                    _ => Collider::rotated_rect(1.0, 2.0).with_offset(Vec2::new(0.5, -1.0)),
                };
                app.world_mut().spawn((transform, collider)).id()
            })
            .collect();
        for update in 0..3 {
            for &entity in &entities {
                let world = app.world();
                let global = world.get::<GlobalTransform>(entity).unwrap();
                let collider = world.get::<Collider>(entity).unwrap();
                let shape = world.get::<ColliderWorldShape>(entity).unwrap().0;
                if update > 0 {
                    assert!(shape.is_some(), "{entity} has a shape");
                }
                if shape.is_some() {
                    assert_eq!(
                        shape,
                        collider.world_shape_from_transform(global),
                        "{entity}"
                    );
                }
            }
            // Each collider moves and turns once more before the next update.
            for &entity in &entities {
                let mut transform = app.world_mut().get_mut::<Transform>(entity).unwrap();
                transform.translation.x += 0.5;
                transform.rotate_z(0.01);
            }
            app.update();
        }
    }
}
