//! Thousands of frames of random structural churn — spawn, despawn (also of parents and inside
//! observers), move, teleport to NaN and back, zero scale, disable, enable, layer changes, collider
//! removal and replacement, a collider added and removed in the same frame — with every invariant
//! checked after every frame:
//! - each pair's starts and ends alternate, beginning with a start (update by update);
//! - the pairs left open by the event stream are exactly the pairs in `CollidingEntities`;
//! - `CollidingEntities` is symmetric;
//! - and it equals brute force over the geometry functions.

mod common;

use bevy::platform::collections::HashMap;
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

/// Despawns the other collider when this one starts touching it: structural change inside an observer.
fn despawn_other(hit: On<CollisionStarted>, mut commands: Commands) {
    if let Ok(mut other) = commands.get_entity(hit.collider2) {
        other.despawn();
    }
}

/// Applies one random operation to the world.
fn churn_once(app: &mut App, rng: &mut Rng, live: &mut Vec<Entity>) {
    let world = app.world_mut();
    live.retain(|&e| world.get_entity(e).is_ok());
    let pick =
        |rng: &mut Rng, live: &[Entity]| (!live.is_empty()).then(|| live[rng.below(live.len())]);
    match rng.below(14) {
        0..=2 => {
            let bundle = (rng.transform(), rng.collider());
            let entity = match (rng.below(6), pick(rng, live)) {
                (0, Some(parent)) => world.spawn((bundle, ChildOf(parent))).id(),
                (1, _) => world.spawn(bundle).observe(despawn_other).id(),
                _ => world.spawn(bundle).id(),
            };
            live.push(entity);
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
///
/// Starts and ends alternate per pair, checked update by update: within one update the order of a pair's
/// events is not observable (an observer that despawns a collider on `CollisionStarted` sends its
/// `CollisionEnded` while the start is still being dispatched), so each update's events must fit an
/// alternation from the pair's state before it, and leave it open at most once.
fn check_invariants(app: &mut App, frame: u32) -> usize {
    let mut open: HashMap<(Entity, Entity), i32> = HashMap::default();
    for update in log(app).stream.chunk_by(|a, b| a.0 == b.0) {
        let mut changes: HashMap<(Entity, Entity), (i32, i32)> = HashMap::default();
        for &(_, started, a, b) in update {
            let (starts, ends) = changes.entry((a, b)).or_default();
            *if started { starts } else { ends } += 1;
        }
        for (pair, (starts, ends)) in changes {
            let before = open.get(&pair).copied().unwrap_or(0);
            let after = before + starts - ends;
            // From closed, an alternation has as many starts as ends, or one more; from open, the reverse.
            let fits = if before == 0 {
                starts - ends == 0 || starts - ends == 1
            } else {
                ends - starts == 0 || ends - starts == 1
            };
            assert!(
                fits && (after == 0 || after == 1),
                "frame {frame}: the pair {}–{} was {before} open and got {starts} starts and {ends} ends in \
                 update {}",
                pair.0,
                pair.1,
                update[0].0
            );
            open.insert(pair, after);
        }
    }
    let mut replayed: Vec<_> = open
        .into_iter()
        .filter(|&(_, n)| n == 1)
        .map(|((a, b), _)| (a.min(b), a.max(b)))
        .collect();
    replayed.sort();

    assert_colliding_is_symmetric(app, &format!("frame {frame}"));
    let colliding = colliding_pairs(app);
    assert_eq!(
        replayed, colliding,
        "frame {frame}: the open pairs of the event stream differ from CollidingEntities"
    );
    assert_eq!(
        colliding,
        brute_force_pairs(app),
        "frame {frame}: CollidingEntities differs from brute force over the geometry"
    );
    log(app).stream.len()
}

#[test]
fn churn_keeps_every_invariant() {
    let mut app = app();
    let mut rng = Rng(0xc0ff_ee00_d15e_a5e5);
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
    let log = log(&app);
    assert!(
        log.started.len() > 500 && log.ended.len() > 500,
        "the churn must exercise the events: {} starts, {} ends",
        log.started.len(),
        log.ended.len()
    );
    println!(
        "churn: {FRAMES} frames, {events} events checked ({} starts, {} ends), {} colliders alive at the end",
        log.started.len(),
        log.ended.len(),
        live.len()
    );
}
