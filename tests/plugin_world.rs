//! Whole worlds: a crowd against brute force, event replay, determinism, spatial queries.

mod common;

use bevy::math::bounding::Aabb2d;
use bevy::math::{Dir2, Ray2d};
use bevy::prelude::*;
use bevy_rect_collision::geometry::Pose2d;
use bevy_rect_collision::prelude::*;
use common::*;

#[derive(Component)]
struct Velocity(Vec2);

/// `count` colliders of all three kinds at random in a square of side `side`, some under parents, a
/// few on other layers, moving with random velocities.
fn spawn_crowd(app: &mut App, count: usize, side: f32, seed: u64) -> Vec<Entity> {
    let mut rng = Rng::new(seed);
    let parent = app
        .world_mut()
        .spawn(Transform::from_xyz(3.0, -2.0, 0.0).with_rotation(Quat::from_rotation_z(0.3)))
        .id();
    (0..count)
        .map(|i| {
            let position = Vec2::new(rng.range(-side, side), rng.range(-side, side)) * 0.5;
            let rotation = Quat::from_rotation_z(rng.range(-3.1, 3.1));
            let (w, h) = (rng.range(0.5, 3.0), rng.range(0.5, 3.0));
            let collider = match i % 3 {
                0 => Collider::rect(w, h),
                1 => Collider::rotated_rect(w, h),
                _ => Collider::circle(w * 0.5),
            };
            let velocity = Velocity(Vec2::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)));
            let mut entity = app.world_mut().spawn((
                Transform::from_translation(position.extend(0.0)).with_rotation(rotation),
                collider,
                velocity,
            ));
            if i % 7 == 0 {
                entity.insert(CollisionLayers::new(0b10, 0b10));
            }
            if i % 11 == 0 {
                entity.insert(ChildOf(parent));
            }
            entity.id()
        })
        .collect()
}

fn move_crowd(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.0.extend(0.0);
        transform.rotate_z(0.05);
    }
}

#[test]
fn crowd_of_1500_matches_brute_force() {
    let mut app = app();
    spawn_crowd(&mut app, 1500, 120.0, 7);
    app.update();
    let expected = brute_force_pairs(&mut app);
    assert!(
        expected.len() > 100,
        "the crowd must be crowded: {} pairs",
        expected.len()
    );
    assert_eq!(
        colliding_pairs(&mut app),
        expected,
        "CollidingEntities against brute force"
    );
    let contacts: Vec<_> = app
        .world()
        .resource::<Contacts>()
        .iter()
        .map(|p| (p.collider1.min(p.collider2), p.collider1.max(p.collider2)))
        .collect();
    let mut contacts_sorted = contacts.clone();
    contacts_sorted.sort();
    assert_eq!(contacts_sorted, expected, "Contacts against brute force");
}

#[test]
fn moving_world_replays_to_colliding_entities() {
    let mut app = app();
    app.add_systems(Update, move_crowd);
    spawn_crowd(&mut app, 400, 50.0, 11);
    for frame in 0..60 {
        app.update();
        // Replaying every message since the start must give exactly the current contacts.
        let replayed = replayed_pairs(&app);
        assert_eq!(
            replayed,
            colliding_pairs(&mut app),
            "frame {frame}: replay against CollidingEntities"
        );
        if frame % 20 == 0 {
            assert_eq!(
                replayed,
                brute_force_pairs(&mut app),
                "frame {frame}: against brute force"
            );
        }
    }
    let log = log(&app);
    assert!(
        log.started.len() > 50 && !log.ended.is_empty(),
        "the world must churn: {} starts, {} ends",
        log.started.len(),
        log.ended.len()
    );
}

#[test]
fn same_world_twice_gives_the_same_event_stream() {
    let run = || {
        let mut app = app();
        app.add_systems(Update, move_crowd);
        spawn_crowd(&mut app, 300, 40.0, 23);
        for _ in 0..30 {
            app.update();
        }
        let stream = log(&app).stream.clone();
        // Starts carry contact data too: compare it bit for bit.
        let starts: Vec<_> = log(&app)
            .started
            .iter()
            .map(|s| (s.normal.to_array().map(f32::to_bits), s.depth.to_bits()))
            .collect();
        (stream, starts)
    };
    let (first, first_starts) = run();
    let (second, second_starts) = run();
    assert!(!first.is_empty(), "the world must produce events");
    assert_eq!(
        first, second,
        "the same spawns and moves give the same stream"
    );
    assert_eq!(first_starts, second_starts, "and the same contacts");
    // Within an update, ends come first, then starts, each sorted by pair.
    for update in first.chunk_by(|a, b| a.0 == b.0) {
        let (ends, starts): (Vec<&(u32, bool, Entity, Entity)>, Vec<_>) =
            update.iter().partition(|e| !e.1);
        assert!(update.iter().map(|e| e.1).is_sorted(), "ends before starts");
        for group in [ends, starts] {
            assert!(
                group.iter().map(|e| (e.2, e.3)).is_sorted(),
                "sorted by pair within an update"
            );
        }
    }
}

#[test]
fn spatial_queries_find_points_shapes_and_ray_hits() {
    let mut app = app();
    let wall = spawn_at(&mut app, at(10.0, 0.0), Collider::rect(2.0, 10.0));
    let ball = spawn_at(&mut app, at(5.0, 0.0), Collider::circle(1.0));
    let ghost = spawn_at(
        &mut app,
        at(5.0, 0.0),
        (Collider::circle(1.0), CollisionLayers::new(0b100, 0b100)),
    );
    // A disabled collider at the same place is never found.
    app.world_mut()
        .spawn((at(5.0, 0.0), Collider::circle(1.0), ColliderDisabled));
    app.update();

    #[derive(Resource, Default)]
    struct Answers {
        at_point: Vec<Entity>,
        in_shape: Vec<Entity>,
        first: Option<Entity>,
        ray: Option<(Entity, f32)>,
        ray_on_ghost_layer: Option<Entity>,
    }
    app.init_resource::<Answers>();
    app.add_systems(
        Update,
        |query: SpatialQuery, mut answers: ResMut<Answers>| {
            let layer_one = SpatialQueryFilter::from_mask(1);
            answers.at_point = query.point_intersections(Vec2::new(5.0, 1.0), &layer_one);
            answers.in_shape = query.shape_intersections(
                &Collider::rect(8.0, 1.0),
                &Pose2d::from_translation(Vec2::new(7.0, 0.0)),
                &layer_one,
            );
            answers.first = query.lowest_shape_intersection(
                &Collider::circle(0.5),
                &Pose2d::from_translation(Vec2::new(9.5, 4.0)),
                &layer_one,
            );
            let ray = Ray2d::new(Vec2::ZERO, Dir2::X);
            answers.ray = query
                .cast_ray(ray, 100.0, &layer_one)
                .map(|(e, hit)| (e, hit.distance));
            answers.ray_on_ghost_layer = query
                .cast_ray(ray, 100.0, &SpatialQueryFilter::from_mask(0b100))
                .map(|(e, _)| e);
        },
    );
    app.update();
    let answers = app.world().resource::<Answers>();
    assert_eq!(
        answers.at_point,
        vec![ball],
        "the top of the ball, boundary included; not the other layer or the disabled one"
    );
    let mut expected = vec![wall, ball];
    expected.sort();
    assert_eq!(answers.in_shape, expected, "a bar across both");
    assert_eq!(answers.first, Some(wall), "only the wall is near (9.5, 4)");
    assert_eq!(
        answers.ray,
        Some((ball, 4.0)),
        "the ray meets the ball first, 4 units out"
    );
    assert_eq!(
        answers.ray_on_ghost_layer,
        Some(ghost),
        "layers filter ray casts"
    );
}

/// A disabling component stored as a sparse set: Bevy's default query filters then keep every query
/// from being read a table at a time, as slices.
#[derive(Component)]
#[component(storage = "SparseSet")]
struct Hidden;

/// A rect `a` and a circle `b` that touch, with `layers`, among 20 other colliders, after three updates
/// at rest; in a world read a table at a time, or not (`sparse`).
fn two_touching_at_rest(sparse: bool, layers: [CollisionLayers; 2]) -> (App, Entity, Entity) {
    let mut app = app();
    if sparse {
        app.world_mut().register_disabling_component::<Hidden>();
    }
    let mut spawn_one = |x: f32, collider: Collider, layers: CollisionLayers| {
        spawn_at(&mut app, at(x, 0.0), (collider, layers))
    };
    let (a, b) = (
        spawn_one(0.0, Collider::rect(2.0, 2.0), layers[0]),
        spawn_one(1.5, Collider::circle(1.0), layers[1]),
    );
    for k in 0..20 {
        let x = 10.0 + 3.0 * k as f32;
        spawn_one(x, Collider::rect(1.0, 1.0), CollisionLayers::ALL);
    }
    let contiguous = app
        .world_mut()
        .query::<(Entity, &ColliderWorldShape)>()
        .contiguous_iter(app.world())
        .is_ok();
    assert_eq!(
        contiguous, !sparse,
        "the stages must take the path under test"
    );
    for _ in 0..3 {
        app.update();
    }
    (app, a, b)
}

/// Two touching colliders at rest among others, one of which gets other layers in place (through
/// `get_mut`, not an insert) and back; in a world read a table at a time, or not (`sparse`).
fn layers_changed_in_place_at_rest(sparse: bool) {
    let (mut app, a, b) = two_touching_at_rest(sparse, [CollisionLayers::ALL; 2]);
    assert_eq!(log(&app).counts_for(b), (1, 0), "the pair starts");
    let set_layers = |app: &mut App, layers: CollisionLayers| {
        *app.world_mut().get_mut::<CollisionLayers>(b).unwrap() = layers;
        app.update();
    };
    set_layers(&mut app, CollisionLayers::NONE);
    assert_eq!(
        log(&app).counts_for(b),
        (1, 1),
        "layers that do not meet end it"
    );
    assert!(touching(&mut app, a).is_empty());
    set_layers(&mut app, CollisionLayers::ALL);
    assert_eq!(
        log(&app).counts_for(b),
        (2, 1),
        "layers that meet start it again"
    );
    assert!(touching(&mut app, a).contains(&b));
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(log(&app).counts_for(b), (2, 1), "nothing more at rest");
}

#[test]
fn layers_changed_in_place_at_rest_end_and_start_the_pair() {
    layers_changed_in_place_at_rest(false);
}

#[test]
fn layers_changed_in_place_at_rest_end_and_start_the_pair_in_a_world_not_read_as_slices() {
    layers_changed_in_place_at_rest(true);
}

#[test]
fn a_world_that_cannot_be_read_as_slices_collides_the_same() {
    let mut app = app();
    app.world_mut().register_disabling_component::<Hidden>();
    app.add_systems(Update, move_crowd);
    let crowd = spawn_crowd(&mut app, 400, 50.0, 13);
    assert!(
        app.world_mut()
            .query::<(Entity, &ColliderWorldShape)>()
            .contiguous_iter(app.world())
            .is_err(),
        "the stages must take their paths for worlds not read as slices"
    );
    let (broken, hidden) = (crowd[5], crowd[6]);
    app.world_mut().entity_mut(hidden).insert(Hidden);
    for frame in 0..30 {
        if frame == 10 {
            let mut transform = app.world_mut().get_mut::<Transform>(broken).unwrap();
            transform.scale = Vec3::ZERO;
        }
        if frame == 20 {
            app.world_mut().get_mut::<Transform>(broken).unwrap().scale = Vec3::ONE;
        }
        app.update();
        let expected = assert_matches_brute_force(&mut app, &format!("frame {frame}"));
        assert!(
            expected.iter().all(|&(a, b)| a != hidden && b != hidden),
            "frame {frame}: the hidden collider touches nothing"
        );
        assert_eq!(
            app.world().get::<InvalidCollider>(broken).is_some(),
            (10..20).contains(&frame),
            "frame {frame}: the zero-scale collider is marked invalid exactly while it is"
        );
    }
    assert!(
        log(&app).started.len() > 50,
        "the world must churn: {} starts",
        log(&app).started.len()
    );
}

/// Removing an entity's `CollisionLayers` by hand (a component its `Collider` requires) gives it the
/// default layers back, as if they had been set in place: at rest, in both kinds of world.
fn layers_removed_at_rest(sparse: bool) {
    let apart = [
        CollisionLayers::new(0b01, 0b01),
        CollisionLayers::new(0b10, 0b10),
    ];
    let (mut app, a, b) = two_touching_at_rest(sparse, apart);
    assert_eq!(log(&app).counts_for(b), (0, 0), "layers that do not meet");
    app.world_mut().entity_mut(b).remove::<CollisionLayers>();
    app.update();
    assert_eq!(
        app.world().get::<CollisionLayers>(b),
        Some(&CollisionLayers::default()),
        "the default layers are back"
    );
    assert_eq!(
        log(&app).counts_for(b),
        (1, 0),
        "the default layers meet a's"
    );
    assert!(touching(&mut app, a).contains(&b));
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(log(&app).counts_for(b), (1, 0), "nothing more at rest");
    // Removed again with the default layers on: the pair holds.
    app.world_mut().entity_mut(b).remove::<CollisionLayers>();
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(log(&app).counts_for(b), (1, 0), "the pair holds");
    assert!(touching(&mut app, a).contains(&b));
    // The world goes on colliding: a newcomer meets a.
    let c = (app.world_mut())
        .spawn((at(-1.5, 0.0), Collider::circle(1.0)))
        .id();
    app.update();
    assert_eq!(log(&app).counts_for(c), (1, 0), "a newcomer meets a");
    assert!(touching(&mut app, a).contains(&b));
    // Removed with the collider, the layers stay away, and the despawned are let be.
    (app.world_mut().entity_mut(c)).remove::<(Collider, CollisionLayers)>();
    app.world_mut().despawn(b);
    app.update();
    assert_eq!(app.world().get::<CollisionLayers>(c), None);
    assert_eq!(
        log(&app).counts_for(c),
        (1, 1),
        "c's pair ends with its collider"
    );
    assert!(touching(&mut app, a).is_empty());
}

#[test]
fn layers_removed_by_hand_are_the_default_layers_again() {
    layers_removed_at_rest(false);
}

#[test]
fn layers_removed_by_hand_are_the_default_layers_again_in_a_world_not_read_as_slices() {
    layers_removed_at_rest(true);
}

/// A query's mask names the layers to find, whatever the colliders' own filters: an enemy that
/// collides with nothing is found by the enemy mask, and excluded entities never are.
#[test]
fn queries_with_a_mask_find_what_it_names_whatever_the_colliders_filters() {
    const ENEMY: u32 = 1 << 3;
    const WALL: u32 = 1 << 4;
    let mut app = app();
    let enemy = spawn_at(
        &mut app,
        at(0.0, 0.0),
        (Collider::circle(1.0), CollisionLayers::new(ENEMY, 0)),
    );
    let picky = spawn_at(
        &mut app,
        at(0.5, 0.0),
        (Collider::circle(1.0), CollisionLayers::new(ENEMY, WALL)),
    );
    let wall = spawn_at(
        &mut app,
        at(-0.8, 0.0),
        (Collider::rect(1.0, 4.0), CollisionLayers::new(WALL, ENEMY)),
    );
    app.update();
    #[derive(Resource, Default, Debug, PartialEq)]
    struct Found(Vec<Vec<Entity>>);
    app.init_resource::<Found>();
    app.add_systems(
        Update,
        move |query: SpatialQuery, mut found: ResMut<Found>| {
            found.0.clear();
            for filter in [
                SpatialQueryFilter::from_mask(ENEMY),
                SpatialQueryFilter::from_mask(WALL),
                SpatialQueryFilter::from_mask(ENEMY).with_excluded_entities([enemy]),
                SpatialQueryFilter::default(),
            ] {
                let ray = Ray2d::new(Vec2::new(-10.0, 0.0), Dir2::X);
                let pose = Pose2d::from_translation(Vec2::new(-10.0, 0.0));
                let body = Collider::rect(0.1, 0.1);
                let mut cast_all: Vec<Entity> =
                    (query.cast_shape_all(&body, &pose, Dir2::X, 20.0, &filter))
                        .into_iter()
                        .map(|(entity, _)| entity)
                        .collect();
                cast_all.sort();
                for answer in [
                    query.point_intersections(Vec2::new(-0.4, 0.0), &filter),
                    query.aabb_intersections(Aabb2d::new(Vec2::ZERO, Vec2::splat(0.5)), &filter),
                    query.shape_intersections(
                        &body,
                        &Pose2d::from_translation(Vec2::new(-0.4, 0.0)),
                        &filter,
                    ),
                    cast_all,
                ] {
                    found.0.push(answer);
                }
                found.0.push(
                    query
                        .cast_ray(ray, 20.0, &filter)
                        .map(|(e, _)| e)
                        .into_iter()
                        .collect(),
                );
            }
        },
    );
    app.update();
    let mut all = vec![enemy, picky, wall];
    all.sort();
    let mut enemies = vec![enemy, picky];
    enemies.sort();
    let expected: Vec<Vec<Entity>> = [enemies, vec![wall], vec![picky], all]
        .into_iter()
        .flat_map(|set| {
            // Along the ray: the wall's face at -1.3, the enemy's at -1, the picky one's at -0.5.
            let order = |e: Entity| [wall, enemy, picky].iter().position(|&o| o == e);
            let nearest = vec![set.iter().copied().min_by_key(|&e| order(e)).unwrap()];
            [set.clone(), set.clone(), set.clone(), set, nearest]
        })
        .collect();
    assert_eq!(
        app.world().resource::<Found>().0,
        expected,
        "each kind of query, each filter"
    );
}
