//! Worlds where few colliders move, and worlds where every collider drifts a little: every frame must
//! match brute force, and the broad phase keep its invariants, through moves, stops, a collider
//! turning invalid and back, disabling, despawning, new layers, and colliders changing tables.

mod common;

use bevy::prelude::*;
use bevy_rect_collision::geometry::OverlapMode;
use bevy_rect_collision::prelude::*;
use common::*;

#[derive(Component)]
struct Velocity(Vec2);

fn move_movers(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.0.extend(0.0);
        transform.rotate_z(0.03);
    }
}

/// `count` colliders of the three kinds packed into a square of side `side`, a few on another layer.
fn spawn_still(app: &mut App, rng: &mut Rng, count: usize, side: f32) -> Vec<Entity> {
    (0..count)
        .map(|i| {
            let position = Vec2::new(rng.range(-side, side), rng.range(-side, side)) * 0.5;
            let (w, h) = (rng.range(0.5, 2.5), rng.range(0.5, 2.5));
            let collider = match i % 3 {
                0 => Collider::rect(w, h),
                1 => Collider::rotated_rect(w, h),
                _ => Collider::circle(w * 0.5),
            };
            let transform = Transform::from_translation(position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(rng.range(-3.1, 3.1)));
            let mut entity = app.world_mut().spawn((transform, collider));
            if i % 9 == 0 {
                entity.insert(CollisionLayers::new(0b10, 0b10));
            }
            entity.id()
        })
        .collect()
}

#[test]
fn few_movers_among_still_colliders_match_brute_force_every_frame() {
    let mut app = app();
    app.add_systems(Update, move_movers);
    let mut rng = Rng::new(0x5717_1a11);
    let still = spawn_still(&mut app, &mut rng, 900, 60.0);
    let movers: Vec<Entity> = spawn_still(&mut app, &mut rng, 30, 60.0)
        .into_iter()
        .inspect(|&e| {
            let velocity = Velocity(Vec2::new(rng.range(-0.4, 0.4), rng.range(-0.4, 0.4)));
            app.world_mut().entity_mut(e).insert(velocity);
        })
        .collect();
    app.update();
    let candidates = app
        .world()
        .resource::<CollisionDiagnostics>()
        .candidate_pairs;
    let mut most_tested = 0;
    for frame in 1..160 {
        let world = app.world_mut();
        // One still collider is nudged and stays at its new place: it has moved since the build.
        let nudged = still[rng.below(still.len())];
        world.get_mut::<Transform>(nudged).unwrap().translation +=
            Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0);
        match frame {
            40 => *world.get_mut::<Transform>(still[0]).unwrap() = at(f32::NAN, 0.0),
            45 => *world.get_mut::<Transform>(still[0]).unwrap() = at(0.0, 0.0),
            60 => {
                world.entity_mut(movers[0]).insert(ColliderDisabled);
            }
            70 => {
                world.entity_mut(movers[1]).remove::<Velocity>();
            }
            90 => {
                world.entity_mut(movers[0]).remove::<ColliderDisabled>();
            }
            _ => {}
        }
        app.update();
        most_tested = most_tested.max(app.world().resource::<CollisionDiagnostics>().tested_pairs);
        let colliding = colliding_pairs(&mut app);
        assert_eq!(
            colliding,
            brute_force_pairs(&mut app),
            "frame {frame}: CollidingEntities against brute force"
        );
        assert_eq!(
            replayed_pairs(&app),
            colliding,
            "frame {frame}: the event stream against CollidingEntities"
        );
        assert_eq!(
            contacts_pairs(&app),
            colliding,
            "frame {frame}: the Contacts resource against CollidingEntities"
        );
    }
    assert!(
        candidates > 1000,
        "the still colliders must touch each other: {candidates} candidates"
    );
    // The pairs of two still colliders keep their contacts untested.
    assert!(
        most_tested * 4 < candidates,
        "updates with few movers test only their pairs: at most {most_tested} of {candidates} \
         candidates"
    );
}

#[test]
fn overlap_mode_change_applies_without_any_motion() {
    let mut app = app();
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(2.0, 2.0));
    let b = spawn_at(&mut app, at(2.0, 0.0), Collider::rect(2.0, 2.0));
    app.update();
    assert!(
        touching(&mut app, a).contains(&b),
        "edges touch: closed sets collide"
    );
    app.world_mut()
        .resource_mut::<CollisionSettings>()
        .overlap_mode = OverlapMode::InteriorOnly;
    app.update();
    assert!(
        touching(&mut app, a).is_empty(),
        "interior-only: touching edges do not collide"
    );
    assert_eq!(log(&app).ended.len(), 1, "the pair ended once");
    app.world_mut()
        .resource_mut::<CollisionSettings>()
        .overlap_mode = OverlapMode::Closed;
    app.update();
    assert!(
        touching(&mut app, a).contains(&b),
        "closed again: they collide"
    );
    assert_eq!(log(&app).started.len(), 2, "the pair started again");
}

#[test]
fn a_disabled_collider_moving_among_resting_ones_changes_nothing() {
    let mut app = app();
    let mut rng = Rng::new(0xd15a_b1ed);
    spawn_still(&mut app, &mut rng, 300, 30.0);
    let parked = spawn_at(
        &mut app,
        at(0.0, 0.0),
        (Collider::rect(3.0, 3.0), ColliderDisabled),
    );
    app.update();
    let built = app
        .world()
        .resource::<CollisionDiagnostics>()
        .candidate_pairs;
    assert!(
        built > 50,
        "the resting colliders touch: {built} candidates"
    );
    for frame in 1..20 {
        app.world_mut()
            .get_mut::<Transform>(parked)
            .unwrap()
            .translation
            .x = frame as f32;
        app.update();
        // An update with nothing to do keeps the last one's pairs; one that looks for the pairs of
        // moved colliders would hand over none here.
        assert_eq!(
            app.world()
                .resource::<CollisionDiagnostics>()
                .candidate_pairs,
            built,
            "frame {frame}: the disabled collider's moves are no change to the pipeline"
        );
        assert!(touching(&mut app, parked).is_empty(), "frame {frame}");
    }
}

/// An app with 400 colliders of the three kinds drifting slowly and turning, in one table, updated
/// once; and the colliders.
fn drifting_world(seed: u64) -> (App, Vec<Entity>) {
    let mut app = app();
    app.add_systems(Update, move_movers);
    let mut rng = Rng::new(seed);
    let colliders = spawn_still(&mut app, &mut rng, 400, 41.0);
    for &collider in &colliders {
        let velocity = Velocity(Vec2::new(rng.range(-0.03, 0.03), rng.range(-0.03, 0.03)));
        app.world_mut().entity_mut(collider).insert(velocity);
    }
    app.update();
    (app, colliders)
}

#[test]
fn drifting_colliders_match_brute_force_through_changes_besides_their_places() {
    let (mut app, colliders) = drifting_world(0xd71f_7001);
    // Changes besides the colliders' places, one every ten frames, each to a collider that touches
    // another: new layers, another table, disabling, despawning, an invalid transform, and a jump far
    // out of its fat AABB.
    let changes = ["layers", "table", "disable", "despawn", "invalid", "jump"];
    for frame in 1..100 {
        let change = (frame % 10 == 0)
            .then(|| changes.get(frame / 10 - 1))
            .flatten();
        if let Some(&change) = change {
            let toucher = *colliders
                .iter()
                .find(|&&collider| {
                    app.world().get_entity(collider).is_ok()
                        && !touching(&mut app, collider).is_empty()
                })
                .expect("a collider touches another");
            let mut collider = app.world_mut().entity_mut(toucher);
            match change {
                "layers" => {
                    collider.insert(CollisionLayers::new(0b100, 0b100));
                }
                "table" => {
                    collider.insert(Tagged);
                }
                "disable" => {
                    collider.insert(ColliderDisabled);
                }
                "despawn" => collider.despawn(),
                "invalid" => *collider.get_mut::<Transform>().unwrap() = at(f32::NAN, 0.0),
                _ => collider.get_mut::<Transform>().unwrap().translation.x += 10.0,
            }
        }
        app.update();
        assert_matches_brute_force(&mut app, &format!("frame {frame}, after {change:?}"));
    }
}

#[test]
fn drifting_colliders_match_brute_force_when_rows_change_entity_or_turn_invalid() {
    let (mut app, colliders) = drifting_world(0x7ab1_e5a7);
    let update = |app: &mut App, context: &str| {
        for frame in 0..5 {
            app.update();
            assert_matches_brute_force(app, &format!("{context}, frame {frame}"));
        }
    };
    update(&mut app, "before the changes");
    // A collider that touches another, early in the table, so that the table's last row takes its
    // place when it leaves.
    let toucher = *colliders
        .iter()
        .find(|&&collider| !touching(&mut app, collider).is_empty())
        .expect("a collider touches another");
    // Out of the table and back within one update: the last row's collider takes its row and it takes
    // the last, and neither's change ticks tell (moving between tables changes no component).
    let mut collider = app.world_mut().entity_mut(toucher);
    collider.insert(Tagged);
    collider.remove::<Tagged>();
    update(&mut app, "after the rows changed");
    // A collider turning invalid, then valid again.
    let transform = *app.world().get::<Transform>(toucher).unwrap();
    *app.world_mut().get_mut::<Transform>(toucher).unwrap() = at(f32::NAN, 0.0);
    update(&mut app, "after a collider turned invalid");
    *app.world_mut().get_mut::<Transform>(toucher).unwrap() = transform;
    update(&mut app, "after the collider turned valid");
}

/// The entity a game's system despawns between the broad phase and the events stage, on the update
/// whose number it holds.
#[derive(Resource)]
struct DespawnBetweenStages(Entity, u32);

fn despawn_between_stages(
    mut commands: Commands,
    target: Res<DespawnBetweenStages>,
    log: Res<EventLog>,
) {
    if log.updates == target.1 {
        commands.entity(target.0).despawn();
    }
}

#[test]
fn a_collider_despawned_between_the_stages_takes_no_part_in_later_updates() {
    let mut app = app();
    app.add_systems(Update, move_movers);
    // A row of still squares, 3 apart, and a square moving along it from the left: it touches each in
    // turn. The third square is despawned by a system of the game's between the broad phase and the
    // events stage, before the mover reaches it.
    let still: Vec<Entity> = (0..40)
        .map(|k| {
            let at = Transform::from_xyz(k as f32 * 3.0, 0.0, 0.0);
            app.world_mut().spawn((at, Collider::rect(2.0, 2.0))).id()
        })
        .collect();
    let mover = spawn_at(
        &mut app,
        Transform::from_xyz(-4.0, 0.0, 0.0),
        (Collider::rect(2.0, 2.0), Velocity(Vec2::new(0.5, 0.0))),
    );
    let gone = still[2];
    app.insert_resource(DespawnBetweenStages(gone, 3))
        .add_systems(
            PostUpdate,
            despawn_between_stages
                .after(CollisionSystems::BroadPhase)
                .before(CollisionSystems::Events),
        );
    for frame in 0..100 {
        app.update();
        assert_matches_brute_force(&mut app, &format!("frame {frame}"));
        assert!(
            !touching(&mut app, mover).contains(&gone),
            "frame {frame}: the mover touches a despawned collider"
        );
    }
    let (started, _) = log(&app).counts_for(gone);
    assert_eq!(started, 0, "the despawned square never started touching");
    let (started, ended) = log(&app).counts_for(mover);
    // The mover touches one or two squares at a time.
    assert!(
        started >= 10 && started - ended <= 2,
        "the mover touched the squares in turn: {started} starts, {ended} ends"
    );
}

#[test]
fn new_colliders_touch_only_what_their_layers_allow() {
    let mut app = app();
    let squares: Vec<Entity> = (0..40)
        .map(|k| {
            let at = Transform::from_xyz(k as f32 * 3.0, 0.0, 0.0);
            app.world_mut().spawn((at, Collider::rect(2.0, 2.0))).id()
        })
        .collect();
    app.update();
    let spawn_on = |app: &mut App, square: usize, layers: Option<CollisionLayers>| {
        let at = Transform::from_xyz(square as f32 * 3.0 + 0.5, 0.0, 0.0);
        let mut collider = app.world_mut().spawn((at, Collider::rect(2.0, 2.0)));
        if let Some(layers) = layers {
            collider.insert(layers);
        }
        let collider = collider.id();
        app.update();
        assert_matches_brute_force(app, &format!("a collider on square {square}"));
        collider
    };
    // On the first square, with the default layers.
    let plain = spawn_on(&mut app, 0, None);
    assert!(touching(&mut app, plain).contains(&squares[0]));
    // On the second square, in a layer that collides with nothing.
    let apart = spawn_on(&mut app, 1, Some(CollisionLayers::new(0b10, 0)));
    assert!(touching(&mut app, apart).is_empty());
    let third = spawn_on(&mut app, 2, None);
    assert!(touching(&mut app, third).contains(&squares[2]));
    let fourth = spawn_on(&mut app, 3, Some(CollisionLayers::new(0b10, 0)));
    assert!(touching(&mut app, fourth).is_empty());
    let fifth = spawn_on(&mut app, 4, Some(CollisionLayers::new(0b100, 0b100)));
    assert!(touching(&mut app, fifth).contains(&squares[4]));
    // The sixth on the fifth, with which it shares a layer; the seventh on the fourth, with which it
    // shares none, and on the fourth square.
    let sixth = spawn_on(&mut app, 4, Some(CollisionLayers::new(0b100, 0b100)));
    assert!(touching(&mut app, sixth).contains(&fifth));
    let seventh = spawn_on(&mut app, 3, Some(CollisionLayers::new(0b100, 0b100)));
    assert!(!touching(&mut app, seventh).contains(&fourth));
    assert!(touching(&mut app, seventh).contains(&squares[3]));
}

#[test]
fn a_collider_removed_and_inserted_again_unchanged_collides_again() {
    let mut app = app();
    // Pairs of overlapping squares in a row, still.
    let squares: Vec<Entity> = (0..80)
        .map(|k| {
            let at = Transform::from_xyz((k / 2) as f32 * 5.0 + (k % 2) as f32, 0.0, 0.0);
            app.world_mut().spawn((at, Collider::rect(2.0, 2.0))).id()
        })
        .collect();
    app.update();
    let (first, partner) = (squares[0], squares[1]);
    assert!(touching(&mut app, first).contains(&partner));
    for frame in 0..8 {
        match frame {
            // Removed, then back with the very same collider, whose world shape does not change; and
            // again in one go between two updates.
            1 => {
                app.world_mut().entity_mut(first).remove::<Collider>();
            }
            4 => {
                app.world_mut()
                    .entity_mut(first)
                    .insert(Collider::rect(2.0, 2.0));
            }
            6 => {
                let mut entity = app.world_mut().entity_mut(first);
                entity.remove::<Collider>();
                entity.insert(Collider::rect(2.0, 2.0));
            }
            _ => {}
        }
        app.update();
        assert_matches_brute_force(&mut app, &format!("frame {frame}"));
        let expected = !(1..4).contains(&frame);
        assert_eq!(
            touching(&mut app, first).contains(&partner),
            expected,
            "frame {frame}"
        );
    }
    let (started, ended) = log(&app).counts_for(first);
    assert_eq!(
        (started, ended),
        (3, 2),
        "started at the spawn and on each return"
    );
}
