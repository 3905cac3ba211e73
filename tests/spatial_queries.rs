//! `SpatialQuery` against brute force over the geometry functions, on a random world that moves,
//! loses and gains colliders and changes layers between the checks: points, boxes, shapes, rays and
//! shape casts.
//! Also the pipeline's figures in Bevy's `DiagnosticsStore`.

mod common;

use bevy::diagnostic::{DiagnosticPath, DiagnosticsStore};
use bevy::ecs::system::RunSystemOnce;
use bevy::math::Ray2d;
use bevy::math::bounding::{Aabb2d, IntersectsVolume};
use bevy::prelude::*;
use bevy_rect_collision::geometry::{Pose2d, RayHit, ShapeHit, WorldShape, ray_cast, shape_cast};
use bevy_rect_collision::prelude::*;
use common::*;

/// Every collider a query can find: enabled, valid, with its world shape and layers.
fn shapes(app: &mut App) -> Vec<(Entity, WorldShape, CollisionLayers)> {
    let mut query = app.world_mut().query_filtered::<(
        Entity,
        &ColliderWorldShape,
        &CollisionLayers,
    ), (With<Collider>, Without<ColliderDisabled>)>();
    let mut shapes: Vec<_> = query
        .iter(app.world())
        .filter_map(|(entity, shape, layers)| shape.0.map(|shape| (entity, shape, *layers)))
        .collect();
    shapes.sort_by_key(|&(entity, _, _)| entity);
    shapes
}

/// Whether a collider of `entity` on `layers` is one `filter` asks for: a membership in its mask,
/// and not excluded.
fn wanted(filter: &SpatialQueryFilter, entity: Entity, layers: CollisionLayers) -> bool {
    filter.mask & layers.memberships != 0 && !filter.excluded_entities.contains(&entity)
}

/// The entities of `shapes` that `filter` asks for and that pass `hit`, sorted.
fn brute_force(
    shapes: &[(Entity, WorldShape, CollisionLayers)],
    filter: &SpatialQueryFilter,
    hit: impl Fn(&WorldShape) -> bool,
) -> Vec<Entity> {
    shapes
        .iter()
        .filter(|&&(entity, shape, layers)| wanted(filter, entity, layers) && hit(&shape))
        .map(|&(entity, _, _)| entity)
        .collect()
}

/// The nearest hit of `ray` within `reach` among the `shapes` that `filter` asks for, the lower
/// entity on a tie.
fn brute_force_ray(
    shapes: &[(Entity, WorldShape, CollisionLayers)],
    ray: Ray2d,
    reach: f32,
    filter: &SpatialQueryFilter,
) -> Option<(Entity, RayHit)> {
    let mut best: Option<(Entity, RayHit)> = None;
    for &(entity, shape, layers) in shapes {
        if !wanted(filter, entity, layers) {
            continue;
        }
        if let Some(hit) = ray_cast(&shape, ray, reach)
            && best.is_none_or(|(_, best)| hit.distance < best.distance)
        {
            best = Some((entity, hit));
        }
    }
    best
}

/// Every hit of `collider` at `pose` cast along `direction` within `reach` among the `shapes` that
/// `filter` asks for, nearest first, ties by entity.
fn brute_force_casts(
    shapes: &[(Entity, WorldShape, CollisionLayers)],
    (collider, pose, direction, reach, filter): &Cast,
) -> Vec<(Entity, ShapeHit)> {
    let cast = collider.world_shape(pose).expect("a valid shape");
    let mut hits: Vec<(Entity, ShapeHit)> = (shapes.iter())
        .filter(|&&(entity, _, layers)| wanted(filter, entity, layers))
        .filter_map(|&(entity, shape, _)| {
            shape_cast(&cast, *direction, *reach, &shape).map(|hit| (entity, hit))
        })
        .collect();
    hits.sort_by(|(a, a_hit), (b, b_hit)| a_hit.distance.total_cmp(&b_hit.distance).then(a.cmp(b)));
    hits
}

/// A shape cast's arguments.
type Cast = (Collider, Pose2d, Dir2, f32, SpatialQueryFilter);

/// What each query answered, for one set of random arguments.
#[derive(Debug, PartialEq)]
struct Answers {
    points: Vec<Vec<Entity>>,
    boxes: Vec<Vec<Entity>>,
    shapes: Vec<Vec<Entity>>,
    rays: Vec<Option<(Entity, RayHit)>>,
    casts: Vec<Option<(Entity, ShapeHit)>>,
    casts_all: Vec<Vec<(Entity, ShapeHit)>>,
}

/// The random arguments of one set of queries.
struct Arguments {
    points: Vec<(Vec2, SpatialQueryFilter)>,
    boxes: Vec<(Aabb2d, SpatialQueryFilter)>,
    shapes: Vec<(Collider, Pose2d, SpatialQueryFilter)>,
    rays: Vec<(Ray2d, f32, SpatialQueryFilter)>,
    casts: Vec<Cast>,
}

/// Random queries, their filters naming layers and leaving out some of `live`.
fn arguments(rng: &mut Rng, live: &[Entity]) -> Arguments {
    let layers = |rng: &mut Rng| {
        let filter = match rng.below(3) {
            0 => SpatialQueryFilter::default(),
            _ => SpatialQueryFilter::from_mask(1 + rng.below(3) as u32),
        };
        let excluded = (0..rng.below(3) * 20).map(|_| live[rng.below(live.len())]);
        filter.with_excluded_entities(excluded.collect::<Vec<_>>())
    };
    let point = |rng: &mut Rng| Vec2::new(rng.range(-22.0, 22.0), rng.range(-22.0, 22.0));
    let collider = |rng: &mut Rng| match rng.below(5) {
        0 => Collider::rect(rng.range(0.5, 5.0), rng.range(0.5, 5.0)),
        1 => Collider::rotated_rect(rng.range(0.5, 5.0), rng.range(0.5, 5.0)),
        2 => Collider::circle(rng.range(0.25, 2.5)),
        3 => Collider::capsule(rng.range(0.25, 1.5), rng.range(0.0, 3.0)),
        _ => {
            let (w, h) = (rng.range(0.5, 5.0), rng.range(0.5, 5.0));
            quadrilateral(w, h)
        }
    };
    let pose =
        |rng: &mut Rng| Pose2d::new(point(rng), Rot2::radians(rng.range(-3.2, 3.2)), Vec2::ONE);
    Arguments {
        points: (0..40).map(|_| (point(rng), layers(rng))).collect(),
        boxes: (0..40)
            .map(|_| {
                let half = Vec2::new(rng.range(0.0, 4.0), rng.range(0.0, 4.0));
                (Aabb2d::new(point(rng), half), layers(rng))
            })
            .collect(),
        shapes: (0..40)
            .map(|_| (collider(rng), pose(rng), layers(rng)))
            .collect(),
        rays: (0..40)
            .map(|_| {
                let direction =
                    Dir2::from_xy(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)).unwrap_or(Dir2::X);
                let reach = rng.range(1.0, 30.0);
                (Ray2d::new(point(rng), direction), reach, layers(rng))
            })
            .collect(),
        casts: (0..40)
            .map(|_| {
                let direction =
                    Dir2::from_xy(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)).unwrap_or(Dir2::Y);
                let reach = [rng.range(0.0, 30.0), f32::INFINITY][usize::from(rng.below(8) == 0)];
                (collider(rng), pose(rng), direction, reach, layers(rng))
            })
            .collect(),
    }
}

/// Asks `SpatialQuery` every question of `arguments`.
fn ask(app: &mut App, arguments: &Arguments) -> Answers {
    let Arguments {
        points,
        boxes,
        shapes,
        rays,
        casts,
    } = arguments;
    let (points, boxes, shapes, rays, casts) = (
        points.clone(),
        boxes.clone(),
        shapes.clone(),
        rays.clone(),
        casts.clone(),
    );
    app.world_mut()
        .run_system_once(move |query: SpatialQuery| Answers {
            points: (points.iter())
                .map(|(point, filter)| query.point_intersections(*point, filter))
                .collect(),
            boxes: (boxes.iter())
                .map(|(aabb, filter)| query.aabb_intersections(*aabb, filter))
                .collect(),
            shapes: (shapes.iter())
                .map(|(collider, pose, filter)| query.shape_intersections(collider, pose, filter))
                .collect(),
            rays: (rays.iter())
                .map(|(ray, reach, filter)| query.cast_ray(*ray, *reach, filter))
                .collect(),
            casts: (casts.iter())
                .map(|(collider, pose, direction, reach, filter)| {
                    query.cast_shape(collider, pose, *direction, *reach, filter)
                })
                .collect(),
            casts_all: (casts.iter())
                .map(|(collider, pose, direction, reach, filter)| {
                    query.cast_shape_all(collider, pose, *direction, *reach, filter)
                })
                .collect(),
        })
        .expect("the query system runs")
}

/// The answers brute force gives to `arguments` over `shapes`.
fn expected(shapes: &[(Entity, WorldShape, CollisionLayers)], arguments: &Arguments) -> Answers {
    let mode = OverlapMode::Closed;
    Answers {
        points: (arguments.points.iter())
            .map(|(point, filter)| {
                brute_force(shapes, filter, |shape| shape.contains_point(*point, mode))
            })
            .collect(),
        boxes: (arguments.boxes.iter())
            .map(|(aabb, filter)| {
                brute_force(shapes, filter, |shape| shape.aabb().intersects(aabb))
            })
            .collect(),
        shapes: (arguments.shapes.iter())
            .map(|(collider, pose, filter)| {
                let query = collider.world_shape(pose).expect("a valid shape");
                brute_force(shapes, filter, |shape| query.intersects(shape, mode))
            })
            .collect(),
        rays: (arguments.rays.iter())
            .map(|(ray, reach, filter)| brute_force_ray(shapes, *ray, *reach, filter))
            .collect(),
        casts: (arguments.casts.iter())
            .map(|cast| brute_force_casts(shapes, cast).first().copied())
            .collect(),
        casts_all: (arguments.casts.iter())
            .map(|cast| brute_force_casts(shapes, cast))
            .collect(),
    }
}

#[test]
fn every_query_matches_brute_force_while_the_world_changes() {
    let mut app = app();
    app.add_systems(Update, move_movers);
    let mut rng = Rng::new(0x5a7a_11e5_0b5e_55ed);
    let mut live = spawn_movers(
        &mut app,
        Rng::new(0x9e0e_5eed_0000_0001),
        270,
        40.0,
        0.5..4.0,
    );
    // Long walls and giants, which live in the broad phase's coarser levels.
    live.extend(spawn_movers(
        &mut app,
        Rng::new(0x9e0e_5eed_0000_0002),
        30,
        40.0,
        6.0..70.0,
    ));
    let mut checked = 0;
    for set in 0..30 {
        // Moves, despawns, spawns and layer changes between the sets of queries.
        for _ in 0..5 {
            app.update();
        }
        for _ in 0..10 {
            let k = rng.below(live.len());
            match rng.below(3) {
                0 => {
                    app.world_mut().despawn(live.swap_remove(k));
                }
                1 => {
                    let layers =
                        CollisionLayers::new(1 + rng.below(3) as u32, 1 + rng.below(3) as u32);
                    app.world_mut().entity_mut(live[k]).insert(layers);
                }
                _ => {
                    let spawned =
                        spawn_movers(&mut app, Rng::new(rng.next() | 1), 1, 40.0, 0.5..4.0);
                    live.extend(spawned);
                }
            }
        }
        app.update();
        let shapes = shapes(&mut app);
        let arguments = arguments(&mut rng, &live);
        let answers = ask(&mut app, &arguments);
        let expected = expected(&shapes, &arguments);
        assert_eq!(
            answers, expected,
            "set {set}: the queries against brute force"
        );
        checked += expected.points.iter().map(Vec::len).sum::<usize>()
            + expected.boxes.iter().map(Vec::len).sum::<usize>()
            + expected.rays.iter().flatten().count()
            + expected.casts_all.iter().map(Vec::len).sum::<usize>();
    }
    assert!(
        checked > 1_000,
        "the queries found something to check: {checked}"
    );
}

/// Colliders from specks to walls longer than the world, so that the broad phase holds them on
/// several levels and moves them between levels: the pairs match brute force after every update.
#[test]
fn specks_to_long_walls_collide_as_brute_force_says() {
    let mut app = app();
    app.add_systems(Update, move_movers);
    spawn_movers(&mut app, Rng::new(0x5bec_0001), 200, 50.0, 0.1..1.5);
    spawn_movers(&mut app, Rng::new(0x5bec_0002), 40, 50.0, 2.0..20.0);
    spawn_movers(&mut app, Rng::new(0x5bec_0003), 6, 50.0, 40.0..120.0);
    let mut touching = 0;
    for frame in 0..40 {
        app.update();
        touching += assert_matches_brute_force(&mut app, &format!("frame {frame}")).len();
    }
    assert!(touching > 1_000, "the colliders touched: {touching}");
}

/// Updates where every collider moves between updates where a few do, so that the broad phase
/// switches between passing over its whole pair set and walking the lists of the moved colliders'
/// pairs: the pairs match brute force after every update.
#[test]
fn worlds_switching_between_crowds_and_few_movers_stay_exact() {
    fn move_all_or_a_few(mut movers: Query<(&mut Transform, &Velocity)>, mut frame: Local<usize>) {
        *frame += 1;
        let every = if *frame % 5 < 2 { 1 } else { 37 };
        for (k, (mut transform, velocity)) in movers.iter_mut().enumerate() {
            if k % every == 0 {
                transform.translation += velocity.0.extend(0.0) * 4.0;
                transform.rotate_z(0.1);
            }
        }
    }
    let mut app = app();
    app.add_systems(Update, move_all_or_a_few);
    let mut live = spawn_movers(&mut app, Rng::new(0x5917_c4e5), 300, 30.0, 0.5..3.0);
    let mut rng = Rng::new(0x5917_c4e6);
    let mut touching = 0;
    for frame in 0..60 {
        if frame % 7 == 3 {
            app.world_mut()
                .despawn(live.swap_remove(rng.below(live.len())));
            live.extend(spawn_movers(
                &mut app,
                Rng::new(rng.next() | 1),
                1,
                30.0,
                0.5..3.0,
            ));
        }
        app.update();
        touching += assert_matches_brute_force(&mut app, &format!("frame {frame}")).len();
    }
    assert!(touching > 1_000, "the colliders touched: {touching}");
}

fn move_movers(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.0.extend(0.0) * 5.0;
        transform.rotate_z(0.05);
    }
}

#[test]
fn the_pipeline_publishes_its_figures_to_the_diagnostics_store() {
    let mut app = app();
    app.world_mut().spawn((at(0.0, 0.0), Collider::circle(1.0)));
    app.world_mut()
        .spawn((at(1.5, 0.0), Collider::rect(1.0, 1.0)));
    app.world_mut()
        .spawn((at(10.0, 0.0), Collider::circle(1.0)));
    app.update();
    let store = app.world().resource::<DiagnosticsStore>();
    let value = |path: DiagnosticPath| {
        store
            .get(&path)
            .and_then(|diagnostic| diagnostic.value())
            .unwrap_or_else(|| panic!("a measurement of {path:?}"))
    };
    assert_eq!(
        value(CollisionDiagnostics::COLLIDERS),
        3.0,
        "three colliders"
    );
    assert_eq!(
        value(CollisionDiagnostics::TOUCHING_PAIRS),
        1.0,
        "one pair touches"
    );
    assert_eq!(value(CollisionDiagnostics::STARTED), 1.0, "and started");
    let total = app
        .world()
        .resource::<CollisionDiagnostics>()
        .timings
        .total();
    assert_eq!(
        value(CollisionDiagnostics::TOTAL),
        total.as_secs_f64() * 1e3,
        "the stages' time, in milliseconds"
    );
    app.update();
    let store = app.world().resource::<DiagnosticsStore>();
    assert_eq!(
        store
            .get(&CollisionDiagnostics::STARTED)
            .map(|diagnostic| diagnostic.history_len()),
        Some(2),
        "a measurement each update"
    );
}
