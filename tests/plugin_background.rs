//! Colliders that all drift, in a world of a size whose grid is built in the background (512
//! colliders or more): the grid built on the plugin's own thread beside one update is taken in by the
//! next, and every frame must match an independent sweep, whether Bevy's async compute pool is free or
//! busy with the game's work.

mod common;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use bevy_rect_collision::prelude::*;
use common::*;

/// The tests share the process's async compute task pool, which one of them keeps busy, and two cores:
/// they run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Moves every collider by a sixth of its velocity, without turning: colliders leave their grown boxes
/// of the broad phase's build after a few updates.
fn drift_faster(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += (velocity.0 / 6.0).extend(0.0);
    }
}

/// An app with `count` colliders drifting faster than they turn, updated once, in a square of the
/// workloads' density; and the colliders.
fn drifting_world(count: usize, seed: u64) -> (App, Vec<Entity>) {
    let mut app = app();
    app.add_systems(Update, drift_faster);
    let side = 2.5 * (count as f32).sqrt();
    let colliders = spawn_movers(&mut app, Rng(seed), count, side, 1.0..3.0);
    app.update();
    (app, colliders)
}

/// Updates `app`, checks its pairs against the sweep, and returns the update's diagnostics.
fn update_and_match_the_sweep(app: &mut App, frame: usize) -> CollisionDiagnostics {
    app.update();
    let expected = swept_pairs(app);
    assert_matches(app, &expected, frame);
    *app.world().resource::<CollisionDiagnostics>()
}

/// Holds the lock that lets one test at a time use the async compute task pool.
fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn drift_of_a_mid_sized_world_builds_the_grid_in_the_background_and_matches_a_sweep_every_frame() {
    let _alone = alone();
    // Within the sizes whose grid is built in the background (512 colliders or more).
    let count = 6_000;
    let (mut app, colliders) = drifting_world(count, 0xb6c8_0a11);
    // Changes besides the colliders' places, each on the update after one that took in a grid built
    // in the background: a collider's new layers, or one disabled, must build the grid in the update,
    // not keep the new one; a collider gone to another table, despawned, or spawned (with the default
    // layers, or its own, which interact with every other collider's here, as the sweep needs), keeps
    // it.
    let changes = [
        "layers",
        "table",
        "disable",
        "despawn",
        "spawn",
        "spawn layered",
    ];
    let mut changes = changes.into_iter();
    let (mut in_background, mut built, mut after_background) = (0, 0, false);
    // The updates that started a build in the background, and whether the last one did.
    let (mut started, mut started_last) = (0, false);
    // The updates whose events compared only the pairs whose rank in the kept grid changed.
    let mut compared_by_rank = 0;
    // Each update changes, if any change is due, a collider of its own.
    for (frame, &changed) in colliders.iter().enumerate().take(60).skip(1) {
        let change = if after_background && frame > 10 {
            changes.next()
        } else {
            None
        };
        match change {
            Some("layers") => {
                let layers = CollisionLayers::new(0b10, 0b10);
                app.world_mut().entity_mut(changed).insert(layers);
            }
            Some("table") => {
                app.world_mut().entity_mut(changed).insert(Tagged);
            }
            Some("disable") => {
                app.world_mut().entity_mut(changed).insert(ColliderDisabled);
            }
            Some("despawn") => {
                app.world_mut().entity_mut(changed).despawn();
            }
            Some(spawn) => {
                let new = spawn_movers(&mut app, Rng(frame as u64), 1, 1.0, 1.0..3.0)[0];
                if spawn == "spawn layered" {
                    let layers = CollisionLayers::new(0b10, 0b10);
                    app.world_mut().entity_mut(new).insert(layers);
                }
            }
            None => {}
        }
        let diagnostics = update_and_match_the_sweep(&mut app, frame);
        // The updates that keep the grid read the colliders in their table (two, once a collider
        // went to a table of its own), also those that start a build in the background (which
        // gathers them from the update's entries, on its own thread).
        assert!(
            diagnostics.grid_built || !diagnostics.colliders_gathered,
            "frame {frame}: colliders in their tables are not gathered to keep the grid"
        );
        assert!(
            diagnostics.touching_pairs > count / 2,
            "frame {frame}: pairs to find"
        );
        let builds = matches!(change, Some("layers" | "disable"));
        assert!(
            diagnostics.grid_built == builds || change.is_none(),
            "frame {frame}: a change besides the colliders' places ({change:?}) builds the grid \
             anew: {builds}"
        );
        assert!(
            !(diagnostics.grid_built && diagnostics.grid_built_in_background),
            "frame {frame}: a grid taken in from the background is not built again"
        );
        assert!(
            !diagnostics.grid_built_in_background || started_last,
            "frame {frame}: a grid taken in from the background was started by the update before"
        );
        assert!(
            !(diagnostics.grid_built && diagnostics.build_started_in_background),
            "frame {frame}: an update that builds the grid starts no build in the background"
        );
        started_last = diagnostics.build_started_in_background;
        started += usize::from(started_last);
        let compared_all = diagnostics.compared_pairs >= diagnostics.touching_pairs;
        assert!(
            compared_all || !(diagnostics.grid_built || diagnostics.grid_built_in_background),
            "frame {frame}: a new grid's pairs are compared with the last update's whole"
        );
        compared_by_rank += usize::from(!compared_all);
        after_background = diagnostics.grid_built_in_background;
        in_background += usize::from(diagnostics.grid_built_in_background);
        built += usize::from(diagnostics.grid_built);
    }
    assert!(changes.next().is_none(), "every change was made");
    assert!(
        compared_by_rank >= 20,
        "{compared_by_rank} updates compared the pairs whose rank in the kept grid changed"
    );
    // The first builds are brought by the spawn and by the first moves, then one by each change.
    assert!(
        in_background >= 8 && built <= 7,
        "{in_background} grids built in the background, {built} in the update"
    );
    assert!(
        started >= in_background,
        "{started} builds started in the background, {in_background} taken in"
    );
}

#[test]
fn colliders_spawned_and_despawned_among_drifting_ones_keep_the_grid_and_match_a_sweep_every_frame()
{
    let _alone = alone();
    // A world whose builds run in the update, and one whose builds run in the background.
    for (count, seed) in [(400, 0x5eed_c4a1), (5_000, 0x5eed_c4a2)] {
        let (mut app, mut colliders) = drifting_world(count, seed);
        let side = 2.5 * (count as f32).sqrt();
        let mut rng = Rng(seed);
        let mut taken_away = None;
        let (mut kept, mut built, mut in_background) = (0, 0, 0);
        for frame in 1..60 {
            // A hundredth of the colliders despawned and as many spawned; on some frames only one or
            // the other.
            let churn = count / 100;
            let (despawned, spawned) = match frame % 5 {
                1 => (churn, 0),
                2 => (0, churn),
                _ => (churn, churn),
            };
            for _ in 0..despawned {
                let entity = colliders.swap_remove(rng.below(colliders.len()));
                app.world_mut().entity_mut(entity).despawn();
            }
            let seed = Rng(rng.next());
            colliders.extend(spawn_movers(&mut app, seed, spawned, side, 1.0..3.0));
            // Now and then a collider's `Collider` taken away, and inserted again two frames later; or
            // a collider sent to a table of its own.
            match frame % 7 {
                0 => {
                    let entity = colliders.swap_remove(rng.below(colliders.len()));
                    let collider = app.world_mut().entity_mut(entity).take::<Collider>();
                    taken_away = collider.map(|collider| (entity, collider));
                }
                2 => {
                    if let Some((entity, collider)) = taken_away.take() {
                        app.world_mut().entity_mut(entity).insert(collider);
                        colliders.push(entity);
                    }
                }
                4 => {
                    let entity = colliders[rng.below(colliders.len())];
                    app.world_mut().entity_mut(entity).insert(Tagged);
                }
                // Taken away and inserted again at once, touching others: its contacts ended, and the
                // pairs that still touch start again, though they touch in both updates.
                5 => {
                    let entity = *colliders
                        .iter()
                        .find(|&&entity| !touching(&mut app, entity).is_empty())
                        .expect("a collider touches another");
                    let mut collider = app.world_mut().entity_mut(entity);
                    let taken = collider.take::<Collider>().expect("a collider");
                    collider.insert(taken);
                }
                _ => {}
            }
            let diagnostics = update_and_match_the_sweep(&mut app, frame);
            assert_eq!(
                diagnostics.colliders,
                colliders.len(),
                "frame {frame}: the colliders taking part"
            );
            assert!(
                diagnostics.grid_built || !diagnostics.colliders_gathered,
                "frame {frame}: the colliders are read in their tables to keep the grid"
            );
            in_background += usize::from(diagnostics.grid_built_in_background);
            if diagnostics.grid_built {
                built += 1;
            } else {
                kept += 1;
            }
        }
        // Before, every update on which a collider went built the grid anew.
        assert!(
            kept >= 3 * built,
            "{count} colliders: the grid kept {kept} times and built {built} times"
        );
        // The builds in the background start from the rows as the updates found them, gone colliders
        // left out and new ones in: taken in, the next update keeps them.
        assert!(
            count < 512 || (in_background >= 4 && built <= in_background),
            "{count} colliders: {in_background} grids built in the background, {built} in the update"
        );
    }
}

#[test]
fn updates_far_apart_start_their_builds_at_the_pipelines_end_and_match_a_sweep_every_frame() {
    let _alone = alone();
    let (mut app, _) = drifting_world(2_000, 0x5eed_f00d);
    let mut in_background = 0;
    for frame in 1..40 {
        // The rest of a game's frame between two updates: several times what a build of 2,000
        // colliders takes even in a debug build, so that each build goes to its thread when the
        // pipeline ends rather than beside the update's narrow phase.
        std::thread::sleep(std::time::Duration::from_millis(40));
        let diagnostics = update_and_match_the_sweep(&mut app, frame);
        in_background += usize::from(diagnostics.grid_built_in_background);
    }
    assert!(
        in_background >= 3,
        "{in_background} grids built in the background"
    );
}

#[test]
fn a_busy_async_compute_pool_does_not_hold_back_the_builds_in_the_background() {
    let _alone = alone();
    let (mut app, _) = drifting_world(5_000, 0x0b05_7b1d);
    // Every thread of the async compute pool held by a task of the game's, until released: the builds
    // must not wait for that pool.
    let pool = AsyncComputeTaskPool::get();
    let held: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
    let release: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    // Should the test fail before it releases the pool, this releases it after a while.
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(20));
        release.store(true, Ordering::SeqCst);
    });
    let holders: Vec<_> = (0..pool.thread_num())
        .map(|_| {
            pool.spawn(async move {
                held.fetch_add(1, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            })
        })
        .collect();
    while held.load(Ordering::SeqCst) < pool.thread_num() {
        std::thread::yield_now();
    }
    let mut in_background = 0;
    for frame in 1..30 {
        let diagnostics = update_and_match_the_sweep(&mut app, frame);
        in_background += usize::from(diagnostics.grid_built_in_background);
    }
    let still_held = !release.load(Ordering::SeqCst);
    release.store(true, Ordering::SeqCst);
    for holder in holders {
        bevy::tasks::block_on(holder);
    }
    assert!(still_held, "the pool was held for the 29 updates");
    assert!(
        in_background >= 3,
        "{in_background} grids built in the background while the pool was busy"
    );
}

#[test]
fn colliders_that_change_kind_while_the_grid_is_kept_match_a_sweep_every_frame() {
    let _alone = alone();
    let (mut app, colliders) = drifting_world(5_000, 0x6b1d_c4a5);
    // The kinds `spawn_movers` gives by index: collider i is of kind i % 3.
    let of_kind = |kind: usize| match kind {
        0 => Collider::rect(2.0, 1.0),
        1 => Collider::rotated_rect(1.0, 2.5),
        _ => Collider::circle(1.2),
    };
    let mut changed_with_the_grid_kept = 0;
    for frame in 1..40 {
        // Each update, ten colliders never changed before take another kind than their own: the
        // broad phase laid out their pairs by their old kinds when it built the grid.
        for (i, &collider) in colliders.iter().enumerate().skip(frame * 10).take(10) {
            let kind = (i + 1 + frame % 2) % 3;
            app.world_mut().entity_mut(collider).insert(of_kind(kind));
        }
        let diagnostics = update_and_match_the_sweep(&mut app, frame);
        changed_with_the_grid_kept += usize::from(!diagnostics.grid_built);
    }
    assert!(
        changed_with_the_grid_kept >= 30,
        "kinds changed on {changed_with_the_grid_kept} updates that kept the grid"
    );
}

/// The share of [`drift_faster`]'s pace at which [`drift_at_pace`] moves the colliders.
#[derive(Resource)]
struct Pace(f32);

/// [`drift_faster`] at the share of its pace that [`Pace`] gives.
fn drift_at_pace(pace: Res<Pace>, mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += (velocity.0 / 6.0 * pace.0).extend(0.0);
    }
}

#[test]
fn colliders_that_slow_down_and_speed_up_again_match_a_sweep_every_frame() {
    let _alone = alone();
    let count = 5_000;
    let mut app = app();
    app.insert_resource(Pace(1.0))
        .add_systems(Update, drift_at_pace);
    let side = 2.5 * (count as f32).sqrt();
    spawn_movers(&mut app, Rng(0x51d0_3a7e), count, side, 1.0..3.0);
    app.update();
    // A tenth of the pace from the 40th update, the whole pace again from the 100th: the builds in the
    // background slow down with the colliders, and the pairs match the sweep whatever the pace.
    let mut in_background = [0; 3];
    for frame in 1..130 {
        let stretch = match frame {
            ..40 => 0,
            40..100 => 1,
            _ => 2,
        };
        app.world_mut().resource_mut::<Pace>().0 = if stretch == 1 { 0.1 } else { 1.0 };
        let diagnostics = update_and_match_the_sweep(&mut app, frame);
        in_background[stretch] += usize::from(diagnostics.grid_built_in_background);
    }
    let [fast, slow, fast_again] = in_background;
    assert!(
        fast >= 5 && slow <= 3 && fast_again >= 3,
        "grids built in the background: {in_background:?}"
    );
}

/// Puts the colliders that have it in other tables of Bevy's than those without: [`spread_over`]
/// combines four of them, for up to sixteen tables.
#[derive(Component)]
struct TableBit<const BIT: u8>;

/// Moves the i-th of `colliders` to the (i mod `tables`)-th of `tables` tables.
fn spread_over(app: &mut App, colliders: &[Entity], tables: usize) {
    for (i, &collider) in colliders.iter().enumerate() {
        let table = i % tables;
        let mut collider = app.world_mut().entity_mut(collider);
        if table & 1 != 0 {
            collider.insert(TableBit::<0>);
        }
        if table & 2 != 0 {
            collider.insert(TableBit::<1>);
        }
        if table & 4 != 0 {
            collider.insert(TableBit::<2>);
        }
        if table & 8 != 0 {
            collider.insert(TableBit::<3>);
        }
    }
}

#[test]
fn colliders_in_up_to_eight_tables_are_read_in_place_and_in_more_gathered_matching_a_sweep() {
    let _alone = alone();
    // A world too small to build in the background too, whose updates sample the rows before the pass.
    for (count, tables) in [(400, 3), (5_000, 3), (5_000, 8), (5_000, 9)] {
        let (mut app, colliders) = drifting_world(count, 0x7ab1_e5e7 + tables as u64);
        spread_over(&mut app, &colliders, tables);
        let (mut kept_in_place, mut kept_gathered, mut in_background) = (0, 0, 0);
        for frame in 1..40 {
            // A collider that goes to another of the tables while the grid is kept (from the first to
            // the second): its row is another collider's now, and the rows after it move.
            if frame == 22 {
                app.world_mut()
                    .entity_mut(colliders[0])
                    .insert(TableBit::<0>);
            }
            let diagnostics = update_and_match_the_sweep(&mut app, frame);
            // Read in place, the rows are looked up by entity where they changed, and the grid is
            // kept (where builds run in the update, whose pace no thread of the pool sways); gathered,
            // the colliders are taken by their index, and it is built anew.
            if frame == 22 && (tables > 8 || count < 512) {
                assert_eq!(
                    diagnostics.grid_built,
                    tables > 8,
                    "{count} colliders in {tables} tables: a collider that went to another table"
                );
            }
            let kept = !(diagnostics.grid_built || diagnostics.grid_built_in_background);
            kept_in_place += usize::from(kept && !diagnostics.colliders_gathered);
            kept_gathered += usize::from(kept && diagnostics.colliders_gathered);
            in_background += usize::from(diagnostics.grid_built_in_background);
        }
        // The first frame keeps no grid yet; a build in the background starts on a kept update.
        if tables <= 8 {
            assert!(
                kept_in_place >= 20 && kept_gathered == 0,
                "{count} colliders in {tables} tables: the grid kept {kept_in_place} times in \
                 place, {kept_gathered} times gathering the colliders"
            );
        } else {
            assert!(
                kept_gathered >= 20 && kept_in_place == 0,
                "{count} colliders in {tables} tables: the grid kept {kept_gathered} times \
                 gathering the colliders, {kept_in_place} times in place"
            );
        }
        let background = count >= 512;
        assert!(
            (in_background >= 4) == background,
            "{count} colliders in {tables} tables: {in_background} grids built in the background"
        );
    }
}
