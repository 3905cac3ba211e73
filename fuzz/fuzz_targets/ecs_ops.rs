//! Arbitrary sequences of ECS operations on colliders, some of them carried out by observers of the
//! collision events (despawn, collider removal, disabling, layer changes from inside an observer), with
//! the churn invariants checked after every update: each pair's starts and ends alternate in the order
//! observers see them, no start names a collider that is gone, messages hold what observers saw, each
//! collider's own observers keep what its `CollidingEntities` holds, which is symmetric, equals the
//! pairs left open by the events, and equals brute force over the geometry functions as the pipeline
//! saw the world, less the colliders observers removed since.
#![no_main]

use arbitrary::Arbitrary;
use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use libfuzzer_sys::fuzz_target;

// The test app and the reference checks the integration tests use: the event log and its checks,
// observers' own sets and reactions, brute force over the geometry, and the pairs and symmetry of
// `CollidingEntities`.
#[path = "../../tests/common/mod.rs"]
mod common;
use common::{
    OnEnd, OnStart, Reaction, add_reactions, assert_colliding_is_symmetric,
    assert_events_alternate, assert_observed_sets_match, colliding_pairs, expected_after_observers,
    observe_own_set, record_pairs_at_narrow_phase, replayed_pairs,
};

#[derive(Arbitrary, Debug)]
enum Op {
    Spawn {
        kind: u8,
        x: i8,
        y: i8,
        w: u8,
        h: u8,
        angle: i8,
        parent: Option<u8>,
    },
    Despawn(u8),
    Move {
        target: u8,
        x: i8,
        y: i8,
        angle: i8,
    },
    Poison(u8),
    ToggleDisabled(u8),
    Layers {
        target: u8,
        memberships: u8,
        filters: u8,
    },
    RemoveCollider(u8),
    ReplaceCollider {
        target: u8,
        kind: u8,
        w: u8,
    },
    /// The target's observers do `reaction` to each collider it starts touching.
    ReactOnStart {
        target: u8,
        reaction: u8,
    },
    /// The target's observers do `reaction` to each collider it stops touching.
    ReactOnEnd {
        target: u8,
        reaction: u8,
    },
    Update,
}

fn reaction(index: u8) -> Reaction {
    [
        Reaction::Despawn,
        Reaction::RemoveCollider,
        Reaction::Disable,
        Reaction::LayersNone,
    ][index as usize % 4]
}

fn collider(kind: u8, w: u8, h: u8) -> Collider {
    let (w, h) = (0.25 + w as f32 / 32.0, 0.25 + h as f32 / 32.0);
    match kind % 3 {
        0 => Collider::rect(w, h),
        1 => Collider::rotated_rect(w, h),
        _ => Collider::circle(w * 0.5),
    }
}

fn transform(x: i8, y: i8, angle: i8) -> Transform {
    Transform::from_xyz(x as f32 / 16.0, y as f32 / 16.0, 0.0)
        .with_rotation(Quat::from_rotation_z(angle as f32 / 20.0))
}

fn check(app: &mut App) {
    bevy_rect_collision::internals::validate_broad_phase(app.world());
    assert_events_alternate(app, "after an update");
    assert_colliding_is_symmetric(app, "after an update");
    assert_observed_sets_match(app, "after an update");
    let colliding = colliding_pairs(app);
    assert_eq!(
        replayed_pairs(app),
        colliding,
        "events and CollidingEntities disagree"
    );
    assert_eq!(
        colliding,
        expected_after_observers(app),
        "CollidingEntities differs from brute force as the pipeline saw the world"
    );
}

fuzz_target!(|ops: Vec<Op>| {
    let mut app = common::app();
    add_reactions(&mut app);
    record_pairs_at_narrow_phase(&mut app);
    let mut live: Vec<Entity> = Vec::new();
    for op in ops.into_iter().take(200) {
        live.retain(|&e| app.world().get_entity(e).is_ok());
        let pick = |i: u8| (!live.is_empty()).then(|| live[i as usize % live.len()]);
        let world = app.world_mut();
        match op {
            Op::Spawn {
                kind,
                x,
                y,
                w,
                h,
                angle,
                parent,
            } => {
                let mut entity = world.spawn((transform(x, y, angle), collider(kind, w, h)));
                if let Some(parent) = parent.and_then(pick) {
                    entity.insert(ChildOf(parent));
                }
                observe_own_set(&mut entity);
                live.push(entity.id());
            }
            Op::Despawn(i) => {
                if let Some(e) = pick(i) {
                    world.despawn(e);
                }
            }
            Op::Move {
                target,
                x,
                y,
                angle,
            } => {
                if let Some(e) = pick(target) {
                    world.entity_mut(e).insert(transform(x, y, angle));
                }
            }
            Op::Poison(i) => {
                if let Some(e) = pick(i) {
                    world
                        .entity_mut(e)
                        .insert(Transform::from_xyz(f32::NAN, 0.0, 0.0));
                }
            }
            Op::ToggleDisabled(i) => {
                if let Some(e) = pick(i) {
                    if world.get::<ColliderDisabled>(e).is_some() {
                        world.entity_mut(e).remove::<ColliderDisabled>();
                    } else {
                        world.entity_mut(e).insert(ColliderDisabled);
                    }
                }
            }
            Op::Layers {
                target,
                memberships,
                filters,
            } => {
                if let Some(e) = pick(target) {
                    world
                        .entity_mut(e)
                        .insert(CollisionLayers::new(memberships as u32, filters as u32));
                }
            }
            Op::RemoveCollider(i) => {
                if let Some(e) = pick(i) {
                    world.entity_mut(e).remove::<Collider>();
                }
            }
            Op::ReplaceCollider { target, kind, w } => {
                if let Some(e) = pick(target) {
                    world.entity_mut(e).insert(collider(kind, w, w));
                }
            }
            Op::ReactOnStart { target, reaction: r } => {
                if let Some(e) = pick(target) {
                    world.entity_mut(e).insert(OnStart(reaction(r)));
                }
            }
            Op::ReactOnEnd { target, reaction: r } => {
                if let Some(e) = pick(target) {
                    world.entity_mut(e).insert(OnEnd(reaction(r)));
                }
            }
            Op::Update => {
                app.update();
                check(&mut app);
            }
        }
    }
    app.update();
    check(&mut app);
});
