//! Collision events and `CollidingEntities` in a headless app: starts, ends, and every way a contact
//! can end.

mod common;

use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use common::*;

/// Two unit squares, one at the origin and one at `(x, 0)`, after an update; returns them.
fn unit_squares(app: &mut App, x: f32) -> (Entity, Entity) {
    let a = spawn_at(app, at(0.0, 0.0), Collider::rect(1.0, 1.0));
    let b = spawn_at(app, at(x, 0.0), Collider::rect(1.0, 1.0));
    app.update();
    (a, b)
}

/// Two unit squares overlapping at the origin; returns them.
fn overlapping_pair(app: &mut App) -> (Entity, Entity) {
    unit_squares(app, 0.5)
}

#[test]
fn start_is_sent_once_with_normal_and_depth() {
    let mut app = app();
    let (a, b) = overlapping_pair(&mut app);
    app.update();
    let log = log(&app);
    assert_eq!(
        log.started.len(),
        1,
        "one start for one pair over two updates"
    );
    let start = log.started[0];
    assert_eq!(
        (start.collider1, start.collider2),
        (a.min(b), a.max(b)),
        "collider1 < collider2"
    );
    assert!(
        (start.depth - 0.5).abs() < 1e-6,
        "depth of two unit squares half a unit apart: {}",
        start.depth
    );
    let expected_normal = if start.collider1 == a {
        Vec2::X
    } else {
        -Vec2::X
    };
    assert_eq!(
        start.normal, expected_normal,
        "the normal points from collider1 to collider2"
    );
    assert!(touching(&mut app, a).contains(&b), "a touches b");
    assert!(touching(&mut app, b).contains(&a), "b touches a");
    let contacts = app.world().resource::<Contacts>();
    assert_eq!(
        contacts.get(a, b).map(|c| c.normal),
        Some(Vec2::X),
        "Contacts orients from a to b"
    );
}

#[test]
fn touching_edges_start_a_collision() {
    let mut app = app();
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(2.0, 2.0));
    let b = spawn_at(&mut app, at(2.0, 0.0), Collider::circle(1.0));
    app.update();
    assert!(
        touching(&mut app, a).contains(&b),
        "a circle tangent to a side touches it"
    );
}

#[test]
fn moving_apart_ends_the_collision() {
    let mut app = app();
    let (a, b) = overlapping_pair(&mut app);
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = 1.5;
    app.update();
    assert_eq!(
        log(&app).ended.len(),
        1,
        "one end when the squares separate"
    );
    assert!(touching(&mut app, a).is_empty(), "a touches nothing");
    assert!(
        app.world().resource::<Contacts>().is_empty(),
        "no contacts left"
    );
}

#[test]
fn despawn_during_contact_ends_the_collision() {
    let mut app = app();
    let (a, b) = overlapping_pair(&mut app);
    app.world_mut().despawn(b);
    app.update();
    assert_eq!(
        log(&app).counts_for(b),
        (1, 1),
        "despawned b: one start, one end"
    );
    assert!(
        touching(&mut app, a).is_empty(),
        "a no longer lists the despawned b"
    );
}

#[test]
fn despawning_a_parent_ends_its_children_collisions() {
    let mut app = app();
    let wall = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(10.0, 1.0));
    let parent = app.world_mut().spawn(at(0.0, 0.0)).id();
    let child = spawn_at(
        &mut app,
        at(0.0, 0.5),
        (Collider::circle(0.5), ChildOf(parent)),
    );
    app.update();
    assert!(
        touching(&mut app, wall).contains(&child),
        "the child touches the wall"
    );
    app.world_mut().despawn(parent);
    app.update();
    assert_eq!(
        log(&app).counts_for(child),
        (1, 1),
        "the child's contact ended with its parent"
    );
    assert!(
        touching(&mut app, wall).is_empty(),
        "the wall touches nothing"
    );
}

#[test]
fn removing_the_collider_ends_the_collision() {
    let mut app = app();
    let (a, b) = overlapping_pair(&mut app);
    app.world_mut().entity_mut(b).remove::<Collider>();
    app.update();
    assert_eq!(log(&app).counts_for(b), (1, 1), "removal ends the pair");
    assert!(touching(&mut app, a).is_empty(), "a lets go of b");
    assert!(
        touching(&mut app, b).is_empty(),
        "b, still alive, lets go of a"
    );
}

#[test]
fn replacing_the_collider_with_one_that_does_not_touch_ends_the_collision() {
    let mut app = app();
    let (_, b) = overlapping_pair(&mut app);
    app.world_mut()
        .entity_mut(b)
        .insert(Collider::circle(0.1).with_offset(Vec2::new(5.0, 0.0)));
    app.update();
    assert_eq!(
        log(&app).counts_for(b),
        (1, 1),
        "a smaller, offset circle no longer touches"
    );
}

#[test]
fn disabling_ends_and_enabling_starts_again() {
    let mut app = app();
    let (a, b) = overlapping_pair(&mut app);
    app.world_mut().entity_mut(b).insert(ColliderDisabled);
    app.update();
    assert_eq!(log(&app).counts_for(b), (1, 1), "disabling ends the pair");
    assert!(
        touching(&mut app, a).is_empty(),
        "a lets go of the disabled b"
    );
    app.world_mut().entity_mut(b).remove::<ColliderDisabled>();
    app.update();
    assert_eq!(log(&app).counts_for(b), (2, 1), "enabling starts it again");
    assert!(touching(&mut app, a).contains(&b), "a touches b again");
}

#[test]
fn layer_change_that_disqualifies_the_pair_ends_it() {
    let mut app = app();
    let (a, b) = overlapping_pair(&mut app);
    app.world_mut()
        .entity_mut(a)
        .insert(CollisionLayers::new(1, 1));
    app.world_mut()
        .entity_mut(b)
        .insert(CollisionLayers::new(2, 2));
    app.update();
    assert_eq!(
        log(&app).counts_for(b),
        (1, 1),
        "layers that do not meet end the pair"
    );
    app.world_mut()
        .entity_mut(b)
        .insert(CollisionLayers::new(2, 1));
    app.world_mut()
        .entity_mut(a)
        .insert(CollisionLayers::new(1, 2));
    app.update();
    assert_eq!(
        log(&app).counts_for(b),
        (2, 1),
        "layers that meet start it again"
    );
}

#[test]
fn observers_see_both_sides_with_collider1_the_observed_entity() {
    #[derive(Resource, Default)]
    struct Seen(Vec<(Entity, Entity, Entity, Vec2)>);
    let mut app = app();
    app.init_resource::<Seen>();
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(1.0, 1.0));
    let b = spawn_at(&mut app, at(0.75, 0.0), Collider::rect(1.0, 1.0));
    for entity in [a, b] {
        app.world_mut().entity_mut(entity).observe(
            |hit: On<CollisionStarted>, mut seen: ResMut<Seen>| {
                seen.0
                    .push((hit.observer(), hit.collider1, hit.collider2, hit.normal));
            },
        );
    }
    app.update();
    let seen = &app.world().resource::<Seen>().0;
    assert_eq!(seen.len(), 2, "one trigger per entity");
    let on_a = seen
        .iter()
        .find(|s| s.1 == a)
        .expect("a observed its start");
    let on_b = seen
        .iter()
        .find(|s| s.1 == b)
        .expect("b observed its start");
    assert_eq!(on_a.2, b, "a's event names b as the other");
    assert_eq!(on_b.2, a, "b's event names a as the other");
    assert_eq!(on_a.3, Vec2::X, "from a towards b");
    assert_eq!(on_b.3, -Vec2::X, "from b towards a");
}

#[test]
fn despawning_inside_an_observer_still_ends_the_pair() {
    let mut app = app();
    let player = spawn_at(&mut app, at(0.0, 0.0), Collider::circle(1.0));
    let coin = app
        .world_mut()
        .spawn((at(1.5, 0.0), Collider::circle(1.0)))
        .observe(|hit: On<CollisionStarted>, mut commands: Commands| {
            commands.entity(hit.collider1).despawn();
        })
        .id();
    app.update();
    assert!(
        app.world().get_entity(coin).is_err(),
        "the observer despawned the coin"
    );
    app.update();
    assert_eq!(
        log(&app).counts_for(coin),
        (1, 1),
        "the collected coin's pair ended"
    );
    assert!(
        touching(&mut app, player).is_empty(),
        "the player lets go of the coin"
    );
}

#[test]
fn all_three_shapes_collide_with_each_other() {
    let mut app = app();
    let rect = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(2.0, 2.0));
    let rotated = spawn_at(
        &mut app,
        at(1.9, 0.0).with_rotation(Quat::from_rotation_z(0.7)),
        Collider::rotated_rect(3.0, 2.0),
    );
    // 0.36 from the rect's corner (1, 1), and 0.30 from the rotated rect in its own frame.
    let circle = spawn_at(&mut app, at(1.3, 1.2), Collider::circle(0.5));
    app.update();
    assert_eq!(touching(&mut app, rect).len(), 2, "the rect touches both");
    assert!(
        touching(&mut app, rotated).contains(&circle),
        "the rotated rect touches the circle"
    );
    assert_eq!(
        colliding_pairs(&mut app),
        brute_force_pairs(&mut app),
        "agrees with the geometry"
    );
}

#[test]
fn interior_only_mode_ignores_touching() {
    let mut app = App::new();
    app.insert_resource(CollisionSettings {
        overlap_mode: OverlapMode::InteriorOnly,
        ..default()
    });
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        RectCollisionPlugin::default(),
    ));
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(2.0, 2.0));
    app.world_mut()
        .spawn((at(2.0, 0.0), Collider::rect(2.0, 2.0)));
    let c = spawn_at(&mut app, at(-1.9, 0.0), Collider::rect(2.0, 2.0));
    app.update();
    assert_eq!(
        touching(&mut app, a).len(),
        1,
        "only the overlapping one counts"
    );
    assert!(touching(&mut app, a).contains(&c), "the overlapping one");
}

#[test]
fn a_fixed_schedule_can_run_the_pipeline() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        RectCollisionPlugin::new(Update),
    ));
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::circle(1.0));
    let b = spawn_at(&mut app, at(1.0, 0.0), Collider::circle(1.0));
    // The first update propagates transforms after the pipeline ran in Update; the second sees them.
    app.update();
    app.update();
    assert!(
        touching(&mut app, a).contains(&b),
        "the pipeline ran in Update"
    );
}

#[test]
fn observers_added_after_unobserved_updates_see_the_next_starts_and_ends() {
    // Events are triggered only while some observer watches them (the test helpers' app observes
    // both, so this app is built without them): one added between updates must see the next ones,
    // global or on an entity, and an observer of ends alone must not keep starts from one added later;
    // the same for the ends a despawn brings.
    #[derive(Resource, Default)]
    struct Seen {
        starts: Vec<Entity>,
        ends: Vec<Entity>,
    }
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        RectCollisionPlugin::default(),
    ))
    .init_resource::<Seen>();
    let (a, b) = unit_squares(&mut app, 5.0);
    let place_b = |app: &mut App, x: f32| {
        app.world_mut()
            .get_mut::<Transform>(b)
            .unwrap()
            .translation
            .x = x;
        app.update();
    };
    let colliding_with_a = |app: &mut App| touching(app, a).contains(&b);
    // Touch and part with nobody watching.
    place_b(&mut app, 0.5);
    assert!(colliding_with_a(&mut app), "they touch unobserved");
    place_b(&mut app, 5.0);
    assert!(!colliding_with_a(&mut app), "they part unobserved");
    // An observer of ends on `a` only: it sees the next end.
    let ends_observer = app
        .world_mut()
        .spawn(
            Observer::new(|hit: On<CollisionEnded>, mut seen: ResMut<Seen>| {
                seen.ends.push(hit.collider2);
            })
            .with_entity(a),
        )
        .id();
    place_b(&mut app, 0.5);
    place_b(&mut app, 5.0);
    assert_eq!(app.world().resource::<Seen>().ends, [b], "a saw its end");
    assert!(app.world().resource::<Seen>().starts.is_empty());
    // With that observer gone, a global observer of starts, added now, sees both sides of the next
    // start.
    app.world_mut().despawn(ends_observer);
    app.add_observer(|hit: On<CollisionStarted>, mut seen: ResMut<Seen>| {
        seen.starts.push(hit.collider1);
    });
    place_b(&mut app, 0.5);
    let mut starts = app.world().resource::<Seen>().starts.clone();
    starts.sort();
    let mut both = vec![a, b];
    both.sort();
    assert_eq!(
        starts, both,
        "the global observer saw the start from both entities"
    );
    // A global observer of ends, added while they touch, sees both sides of the end that despawning
    // `b` brings.
    app.add_observer(|hit: On<CollisionEnded>, mut seen: ResMut<Seen>| {
        seen.ends.push(hit.collider1);
    });
    app.world_mut().resource_mut::<Seen>().ends.clear();
    app.world_mut().despawn(b);
    let mut ends = app.world().resource::<Seen>().ends.clone();
    ends.sort();
    assert_eq!(
        ends, both,
        "the global observer saw the end from both entities"
    );
}

#[test]
fn crowds_taking_turns_at_two_walls_keep_colliding_entities_exact() {
    // Twelve squares, more than `CollidingEntities` holds in place, touch the lower wall on even
    // frames and the upper one on odd frames: each wall's set overflows and empties in turn, handing
    // its overflow to the other. Half the crowd stays one frame longer, so that a set empties partly.
    let mut app = app();
    let walls = [-10.0, 10.0].map(|y| spawn_at(&mut app, at(0.0, y), Collider::rect(40.0, 1.0)));
    let crowd: Vec<Entity> = (0..12)
        .map(|k| {
            spawn_at(
                &mut app,
                at(k as f32 * 3.0 - 18.0, -9.0),
                Collider::rect(1.0, 1.0),
            )
        })
        .collect();
    for frame in 0..13 {
        for (k, &square) in crowd.iter().enumerate() {
            let lagging = k % 2 == 1 && frame % 4 == 1;
            let lower = (frame % 2 == 0) != lagging;
            let y = if lower { -9.0 } else { 9.0 };
            app.world_mut()
                .get_mut::<Transform>(square)
                .expect("a square")
                .translation
                .y = y;
        }
        app.update();
        let context = format!("frame {frame}");
        assert_matches_brute_force(&mut app, &context);
        let at_lower = touching(&mut app, walls[0]).len();
        let at_upper = touching(&mut app, walls[1]).len();
        assert_eq!(
            at_lower + at_upper,
            12,
            "{context}: every square at one wall"
        );
        let expected_lower = match frame % 4 {
            0 | 2 => 12,
            1 => 6,
            _ => 0,
        };
        assert_eq!(
            at_lower, expected_lower,
            "{context}: squares at the lower wall"
        );
    }
    // The lower wall, touching all twelve after the last frame, goes away: every square forgets it.
    app.world_mut().despawn(walls[0]);
    app.update();
    assert_matches_brute_force(&mut app, "after the lower wall's despawn");
    for &square in &crowd {
        assert!(
            !touching(&mut app, square).contains(&walls[0]),
            "no square lists the despawned wall"
        );
    }
}

/// The entities whose `CollidingEntities` changed in the last update, sorted, as a system after the
/// collision update sees them.
#[derive(Resource, Default)]
struct ChangedSets(Vec<Entity>);

fn record_changed_sets(
    changed: Query<Entity, Changed<CollidingEntities>>,
    mut seen: ResMut<ChangedSets>,
) {
    seen.0 = changed.iter().collect();
    seen.0.sort();
}

/// Every collider's `CollidingEntities`, by entity.
fn sets(app: &mut App) -> bevy::platform::collections::HashMap<Entity, Vec<Entity>> {
    let mut query = app.world_mut().query::<(Entity, &CollidingEntities)>();
    query
        .iter(app.world())
        .map(|(entity, touching)| {
            let mut members: Vec<Entity> = touching.iter().collect();
            members.sort();
            (entity, members)
        })
        .collect()
}

#[test]
fn hundreds_of_changes_an_update_over_several_tables_keep_colliding_entities_exact() {
    // Hundreds of starts and ends an update, among colliders spread over four of Bevy's tables, some
    // with a parent, a few without a `CollidingEntities` of their own: every set exact, and marked
    // changed exactly when it changed.
    let mut app = app();
    app.init_resource::<ChangedSets>().add_systems(
        PostUpdate,
        record_changed_sets.after(CollisionSystems::Events),
    );
    let mut rng = Rng::new(0x5e7c_4a11);
    let parent = app.world_mut().spawn(at(0.5, -0.5)).id();
    let colliders: Vec<Entity> = (0..300)
        .map(|k| {
            let size = rng.range(1.0, 3.0);
            let collider = match k % 3 {
                0 => Collider::rect(size, rng.range(1.0, 3.0)),
                1 => Collider::rotated_rect(size, rng.range(1.0, 3.0)),
                _ => Collider::circle(size * 0.5),
            };
            let mut entity = app.world_mut().spawn((at(0.0, 0.0), collider));
            match k % 4 {
                1 => entity.insert(Tagged),
                2 => entity.insert(ChildOf(parent)),
                3 => entity.insert((Tagged, ChildOf(parent))),
                _ => &mut entity,
            };
            entity.id()
        })
        .collect();
    let moved = |app: &mut App, rng: &mut Rng| {
        for &collider in &colliders {
            if rng.below(2) == 0 {
                let mut transform = app.world_mut().get_mut::<Transform>(collider).unwrap();
                *transform = at(rng.range(-20.0, 20.0), rng.range(-20.0, 20.0))
                    .with_rotation(Quat::from_rotation_z(rng.range(-3.2, 3.2)));
            }
        }
    };
    moved(&mut app, &mut rng);
    app.update();
    // Without a set of its own, a collider is still in its partners' sets, as before.
    for &collider in &colliders[..6] {
        app.world_mut()
            .entity_mut(collider)
            .remove::<CollidingEntities>();
    }
    for frame in 0..12 {
        let before = sets(&mut app);
        moved(&mut app, &mut rng);
        app.update();
        let context = format!("frame {frame}");
        let update = log(&app).updates;
        let changes = (log(&app).stream.iter())
            .filter(|(at_update, ..)| *at_update == update)
            .count();
        assert!(
            2 * changes >= 64,
            "{context}: {changes} starts and ends, too few for the test"
        );
        let expected = brute_force_pairs(&mut app);
        let held = colliding_pairs(&mut app);
        let without_sets =
            |(a, b): &(Entity, Entity)| colliders[..6].contains(a) && colliders[..6].contains(b);
        assert_eq!(
            held,
            expected
                .iter()
                .copied()
                .filter(|pair| !without_sets(pair))
                .collect::<Vec<_>>(),
            "{context}: CollidingEntities against brute force"
        );
        assert_eq!(
            replayed_pairs(&app),
            expected,
            "{context}: the event stream"
        );
        let after = sets(&mut app);
        let mut differing: Vec<Entity> = (after.iter())
            .filter(|&(entity, members)| before.get(entity) != Some(members))
            .map(|(&entity, _)| entity)
            .collect();
        differing.sort();
        assert!(!differing.is_empty(), "{context}: some set changed");
        assert_eq!(
            app.world().resource::<ChangedSets>().0,
            differing,
            "{context}: the sets marked changed are the sets that changed"
        );
        // Under Bevy's `track_location` feature (`.ci/run` runs this file with it), each change is
        // recorded as made by the plugin's events stage. Without it nothing is recorded.
        let mut query = app.world_mut().query::<Ref<CollidingEntities>>();
        for &entity in &differing {
            let changed_by = query.get(app.world(), entity).unwrap().changed_by();
            if let Some(location) = changed_by.into_option() {
                assert!(
                    location.file().ends_with("src/events.rs"),
                    "{context}: changed by {location}"
                );
            }
        }
    }
}
