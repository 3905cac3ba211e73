//! The prepare stage: each collider's [`ColliderWorldShape`] from its [`Collider`] and
//! `GlobalTransform`, rebuilt when either changed.

use core::panic::Location;

use bevy::ecs::change_detection::{
    ContiguousComponentTicksMut, ContiguousMut, MAX_CHANGE_AGE, Tick,
};
use bevy::prelude::*;
use bevy::tasks::TaskPool;

use crate::collider::{Collider, ColliderWorldShape, InvalidCollider};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
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
    ),
    Or<(Changed<Collider>, Changed<GlobalTransform>)>,
>;

/// Every collider, with the change ticks of its `Collider` and `GlobalTransform`: read a table at a
/// time, as slices, where [`ChangedColliders`] yields one collider at a time.
type ColliderTables<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Ref<'static, Collider>,
        Ref<'static, GlobalTransform>,
        &'static mut ColliderWorldShape,
        Has<InvalidCollider>,
    ),
>;

/// Below this many colliders in a table, its rows are rebuilt on one thread.
const PARALLEL_THRESHOLD: usize = 2048;
/// How many change ticks are compared at a time, without a branch, before the rows they belong to are
/// read one by one.
pub(crate) const TICK_BLOCK: usize = 64;

/// Rebuilds [`ColliderWorldShape`] for every collider whose `Collider` or `GlobalTransform` changed,
/// marking it changed only where the shape did, and warns once per entity when one becomes invalid.
///
/// The colliders are read a table at a time, as slices (Bevy's contiguous iteration), with the change
/// ticks compared in the loop, which `collision_bench`'s workload W1 shows to pay over the query
/// filtered by `Changed`. Where the world cannot be read as slices (a disabling component stored as a
/// sparse set, see Bevy's `DefaultQueryFilters`), that query serves. A large table is split over
/// Bevy's compute task pool when it has more than one thread, a run of rows a task.
pub(crate) fn update_world_shapes(
    mut colliders: ParamSet<(ChangedColliders, ColliderTables)>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
    commands: ParallelCommands,
) {
    let timer = StageTimer::start();
    let mut tables = colliders.p1();
    match tables.contiguous_iter_mut().ok() {
        Some(tables) => {
            for (entities, colliders, transforms, world_shapes, was_invalid) in tables {
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
                    since: ChangedSince::new(last_run, this_run),
                    this_run,
                };
                match pool_for(rows.entities.len(), PARALLEL_THRESHOLD) {
                    Some(pool) => rebuild_rows_split(pool, &commands, rows, table),
                    None => rebuild_rows(&commands, rows, table),
                }
                record_callers(&mut world_shape_ticks, this_run);
            }
        }
        None => {
            for (entity, collider, transform, mut world_shape, was_invalid) in &mut colliders.p0() {
                let shape = collider.world_shape_from_transform(transform);
                if let Some(shape) = changed_world_shape(
                    &commands,
                    entity,
                    collider,
                    transform,
                    shape,
                    &world_shape,
                    was_invalid,
                ) {
                    world_shape.0 = shape;
                }
            }
        }
    }
    diagnostics.timings.prepare = timer.elapsed();
}

/// Bevy's test of a change tick against a system's last run (`Tick::is_newer_than`), for many ticks
/// against the same runs, in a form that the compiler turns into vector instructions: a subtraction
/// and a comparison a tick.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChangedSince {
    this_run: u32,
    /// How many ticks ago the last run was, at most `MAX_CHANGE_AGE`.
    ticks_since_last_run: u32,
}

impl ChangedSince {
    pub(crate) fn new(last_run: Tick, this_run: Tick) -> Self {
        let ticks_since_last_run = this_run.get().wrapping_sub(last_run.get());
        Self {
            this_run: this_run.get(),
            ticks_since_last_run: ticks_since_last_run.min(MAX_CHANGE_AGE),
        }
    }

    /// Whether `tick` is newer than the last run, as `tick.is_newer_than(last_run, this_run)` says.
    /// That clamps the tick's age to `MAX_CHANGE_AGE` before comparing it with the last run's age, which
    /// is clamped the same way and so at most `MAX_CHANGE_AGE`: an age above that is not the smaller,
    /// clamped or not, so the tick's clamp is left out, and the test of a block of ticks becomes a
    /// few vector instructions.
    #[inline(always)]
    pub(crate) fn holds(self, tick: Tick) -> bool {
        self.this_run.wrapping_sub(tick.get()) < self.ticks_since_last_run
    }
}

/// What holds for every row of one table, and the ticks to compare the rows' change ticks with.
#[derive(Clone, Copy)]
struct Table {
    was_invalid: bool,
    since: ChangedSince,
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

/// Calls `visit` with each row whose tick in `ticks` (one or two columns) is newer than `since`. The
/// rows are taken [`TICK_BLOCK`] at a time, and a block none of whose rows changed is passed over
/// after one test of its ticks without a branch, which workloads W3 and W7 (colliders at rest) show
/// to pay.
#[inline(always)]
pub(crate) fn for_each_changed_row(
    len: usize,
    changed: impl Fn(usize) -> bool,
    mut visit: impl FnMut(usize),
) {
    for block_start in (0..len).step_by(TICK_BLOCK) {
        let block = block_start..(block_start + TICK_BLOCK).min(len);
        // Where the first row changed, that settles it.
        if !changed(block_start) && !block.clone().fold(false, |found, row| found | changed(row)) {
            continue;
        }
        for row in block.filter(|&row| changed(row)) {
            visit(row);
        }
    }
}

/// Rebuilds the world shapes of the `rows` whose `Collider` or `GlobalTransform` changed, marking each
/// world shape that changed as changed, as a `Mut` would.
#[inline(always)]
fn rebuild_rows(commands: &ParallelCommands, rows: Rows, table: Table) {
    let since = table.since;
    let changed =
        |row: usize| since.holds(rows.collider_ticks[row]) | since.holds(rows.transform_ticks[row]);
    for_each_changed_row(rows.entities.len(), changed, |row| {
        let (entity, collider, transform) = (
            rows.entities[row],
            &rows.colliders[row],
            &rows.transforms[row],
        );
        let shape = collider.world_shape_from_transform(transform);
        let old = &rows.world_shapes[row];
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
        }
    });
}

/// [`rebuild_rows`] split over `pool`, a run of rows a task.
fn rebuild_rows_split(pool: &TaskPool, commands: &ParallelCommands, rows: Rows, table: Table) {
    let tasks = pool.thread_num() * 4;
    let run_len = rows.entities.len().div_ceil(tasks);
    pool.scope(|scope| {
        let mut rest = rows;
        while !rest.entities.is_empty() {
            let mid = run_len.min(rest.entities.len());
            let (run, after) = rest.split_at(mid);
            rest = after;
            scope.spawn(async move { rebuild_rows(commands, run, table) });
        }
    });
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
    // comparing it needs no branch on the kind, where comparing whole shapes does (workload W1).
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
    fn tables_of_mixed_scales_get_the_shapes_of_their_transforms() {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            TransformPlugin,
            crate::RectCollisionPlugin::default(),
        ));
        // Half the transforms drifted at random, out of the unscaled range; every kind, and some with
        // an offset.
        let mut next = crate::test_rng::xorshift(0x5ca1e);
        let coins: Vec<bool> = (0..400).map(|_| next().is_multiple_of(2)).collect();
        let transforms = turned_transforms(coins.len(), |k| coins[k]);
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
