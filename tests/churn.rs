//! Thousands of frames of random structural churn — spawn, despawn (also of parents), move, teleport
//! to NaN and back, zero scale, disable, enable, layer changes, collider removal and replacement, a
//! collider added and removed in the same frame, and observers that despawn, remove, disable or
//! re-layer the colliders they meet or leave — with every invariant checked after every frame:
//! - each pair's starts and ends alternate, beginning with a start, in the order observers see them;
//! - no start names a collider gone when it is dispatched, and messages hold what observers saw;
//! - what each collider's own observers kept equals its `CollidingEntities`;
//! - the pairs left open by the event stream are exactly the pairs in `CollidingEntities`;
//! - `CollidingEntities` is symmetric;
//! - and it equals brute force over the geometry functions, as the pipeline saw the world, less the
//!   colliders observers removed since.
//!
//! A second run churns only which colliders exist, in a world where few move: the colliders that come
//! and go are the broad phase's only new proxies.

mod common;

use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use common::*;

const FRAMES: u32 = 2_000;

/// Random pieces of the churn.
trait ChurnRng {
    fn collider(&mut self) -> Collider;
    fn transform(&mut self) -> Transform;
    fn layers(&mut self) -> CollisionLayers;
}

impl ChurnRng for Rng {
    fn collider(&mut self) -> Collider {
        let (w, h) = (self.range(0.5, 4.0), self.range(0.5, 4.0));
        let collider = match self.below(3) {
            0 => Collider::rect(w, h),
            1 => Collider::rotated_rect(w, h),
            _ => Collider::circle(w * 0.5),
        };
        if self.below(4) == 0 {
            collider.with_offset(Vec2::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0)))
        } else {
            collider
        }
    }

    fn transform(&mut self) -> Transform {
        Transform::from_xyz(self.range(-20.0, 20.0), self.range(-20.0, 20.0), 0.0)
            .with_rotation(Quat::from_rotation_z(self.range(-3.2, 3.2)))
    }

    fn layers(&mut self) -> CollisionLayers {
        CollisionLayers::new(1 + self.below(3) as u32, 1 + self.below(3) as u32)
    }
}

/// A random reaction for an observer to carry out.
fn reaction(rng: &mut Rng) -> Reaction {
    [
        Reaction::Despawn,
        Reaction::RemoveCollider,
        Reaction::Disable,
        Reaction::LayersNone,
    ][rng.below(4)]
}

/// The churn's app: the test app, with the observers that carry out [`OnStart`] and [`OnEnd`], and
/// brute force taken as the narrow phase saw the world.
fn churn_app() -> App {
    let mut app = app();
    add_reactions(&mut app);
    record_pairs_at_narrow_phase(&mut app);
    app
}

/// Applies one random operation to the world.
fn churn_once(app: &mut App, rng: &mut Rng, live: &mut Vec<Entity>) {
    let operation = rng.below(14);
    apply(operation, app, rng, live);
}

/// Applies operation number `operation` of [`churn_once`] to the world.
fn apply(operation: usize, app: &mut App, rng: &mut Rng, live: &mut Vec<Entity>) {
    let world = app.world_mut();
    live.retain(|&e| world.get_entity(e).is_ok());
    let pick =
        |rng: &mut Rng, live: &[Entity]| (!live.is_empty()).then(|| live[rng.below(live.len())]);
    match operation {
        0..=2 => {
            let bundle = (rng.transform(), rng.collider());
            let mut entity = match (rng.below(8), pick(rng, live)) {
                (0, Some(parent)) => world.spawn((bundle, ChildOf(parent))),
                (1, _) => world.spawn((bundle, OnStart(reaction(rng)))),
                (2, _) => world.spawn((bundle, OnEnd(reaction(rng)))),
                _ => world.spawn(bundle),
            };
            observe_own_set(&mut entity);
            live.push(entity.id());
        }
        3 => {
            if let Some(e) = pick(rng, live) {
                world.despawn(e);
            }
        }
        4..=6 => {
            if let Some(e) = pick(rng, live) {
                let moved = rng.transform();
                if let Some(mut transform) = world.get_mut::<Transform>(e) {
                    *transform = moved;
                }
            }
        }
        7 => {
            if let Some(e) = pick(rng, live) {
                let bad = match rng.below(3) {
                    0 => Transform::from_xyz(f32::NAN, 0.0, 0.0),
                    1 => Transform::from_scale(Vec3::ZERO),
                    _ => Transform::from_xyz(f32::INFINITY, 1.0, 0.0),
                };
                world.entity_mut(e).insert(bad);
            }
        }
        8 => {
            if let Some(e) = pick(rng, live) {
                if world.get::<ColliderDisabled>(e).is_some() {
                    world.entity_mut(e).remove::<ColliderDisabled>();
                } else {
                    world.entity_mut(e).insert(ColliderDisabled);
                }
            }
        }
        9 => {
            if let Some(e) = pick(rng, live) {
                let layers = rng.layers();
                world.entity_mut(e).insert(layers);
            }
        }
        10 => {
            if let Some(e) = pick(rng, live) {
                world.entity_mut(e).remove::<Collider>();
            }
        }
        11 => {
            if let Some(e) = pick(rng, live) {
                let collider = rng.collider();
                world.entity_mut(e).insert(collider);
            }
        }
        12 => {
            // Added and removed before the pipeline sees it.
            if let Some(e) = pick(rng, live) {
                let collider = rng.collider();
                world.entity_mut(e).insert(collider).remove::<Collider>();
            }
        }
        _ => {
            // A parent with collider children goes at once.
            if let Some(e) = pick(rng, live)
                && world.get::<Children>(e).is_some()
            {
                world.despawn(e);
            }
        }
    }
}

/// Checks every invariant; returns how many events the log holds.
fn check_invariants(app: &mut App, frame: u32) -> usize {
    let context = format!("frame {frame}");
    bevy_rect_collision::internals::validate_broad_phase(app.world());
    assert_events_alternate(app, &context);
    assert_colliding_is_symmetric(app, &context);
    assert_observed_sets_match(app, &context);
    let colliding = colliding_pairs(app);
    assert_eq!(
        replayed_pairs(app),
        colliding,
        "{context}: the open pairs of the event stream differ from CollidingEntities"
    );
    assert_eq!(
        colliding,
        expected_after_observers(app),
        "{context}: CollidingEntities differs from brute force over the geometry the pipeline saw, \
         less the colliders observers removed since"
    );
    log(app).stream.len()
}

/// Checks that the churn sent more than `least` starts and as many ends.
fn assert_events_exercised(app: &App, least: usize) {
    let log = log(app);
    assert!(
        log.started.len() > least && log.ended.len() > least,
        "the churn must exercise the events: {} starts, {} ends",
        log.started.len(),
        log.ended.len()
    );
}

#[test]
fn churn_keeps_every_invariant() {
    let mut app = churn_app();
    let mut rng = Rng::new(0xc0ff_ee00_d15e_a5e5);
    let mut live = Vec::new();
    for _ in 0..60 {
        churn_once(&mut app, &mut rng, &mut live);
    }
    let mut events = 0;
    for frame in 0..FRAMES {
        for _ in 0..1 + rng.below(6) {
            churn_once(&mut app, &mut rng, &mut live);
        }
        app.update();
        events = check_invariants(&mut app, frame);
    }
    assert_events_exercised(&app, 500);
    let log = log(&app);
    println!(
        "churn: {FRAMES} frames, {events} events checked ({} starts, {} ends), {} colliders alive at the end",
        log.started.len(),
        log.ended.len(),
        live.len()
    );
}

/// Moves every collider with a [`Velocity`] by it, each update.
fn move_movers(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.0.extend(0.0);
    }
}

/// Applies one random change of membership, an operation of [`churn_once`]: a collider spawned (a
/// child, or reacting to what it meets or leaves, some of the time), despawned, its `Collider` removed,
/// replaced, or inserted again after its removal, or a collider added and removed before the pipeline
/// sees it.
fn spawn_or_despawn_once(app: &mut App, rng: &mut Rng, live: &mut Vec<Entity>) {
    const MEMBERSHIP: [usize; 8] = [0, 1, 2, 3, 3, 10, 11, 12];
    let operation = MEMBERSHIP[rng.below(MEMBERSHIP.len())];
    apply(operation, app, rng, live);
}

/// How many colliders took part when the broad phase ran: observers may despawn some later in the
/// update.
#[derive(Resource, Default)]
struct CollidersAtBroadPhase(usize);

fn count_colliders(
    colliders: Query<
        (),
        (
            With<Collider>,
            Without<ColliderDisabled>,
            Without<InvalidCollider>,
        ),
    >,
    mut count: ResMut<CollidersAtBroadPhase>,
) {
    count.0 = colliders.iter().count();
}

#[test]
fn colliders_spawned_and_despawned_among_still_ones_keep_the_grid_and_every_invariant() {
    let mut app = churn_app();
    app.init_resource::<CollidersAtBroadPhase>()
        .add_systems(Update, move_movers)
        .add_systems(
            PostUpdate,
            count_colliders
                .after(CollisionSystems::BroadPhase)
                .before(CollisionSystems::NarrowPhase),
        );
    let mut rng = Rng::new(0x5b0a_7d35_9e11_c0de);
    // Still colliders packed tight enough to touch, and ten moving among them.
    let mut live: Vec<Entity> = (0..400)
        .map(|k| {
            let bundle = (rng.transform(), rng.collider());
            let velocity = Velocity(Vec2::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3)));
            let mut collider = app.world_mut().spawn(bundle);
            if k < 10 {
                collider.insert(velocity);
            }
            collider.id()
        })
        .collect();
    app.update();
    for frame in 0..600 {
        for _ in 0..rng.below(4) {
            spawn_or_despawn_once(&mut app, &mut rng, &mut live);
        }
        app.update();
        check_invariants(&mut app, frame);
        let diagnostics = *app.world().resource::<CollisionDiagnostics>();
        assert_eq!(
            diagnostics.colliders,
            app.world().resource::<CollidersAtBroadPhase>().0,
            "frame {frame}: the colliders taking part, gone ones left out"
        );
    }
    assert_events_exercised(&app, 300);
}
