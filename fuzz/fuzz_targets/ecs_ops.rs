//! Arbitrary sequences of ECS operations on colliders, with the churn invariants checked after every
//! update: pairs' starts and ends balance, `CollidingEntities` is symmetric, equals the pairs left open
//! by the events, and equals brute force over the geometry functions.
#![no_main]

use arbitrary::Arbitrary;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use libfuzzer_sys::fuzz_target;

// The reference checks the integration tests use: brute force over the geometry, and the pairs and
// symmetry of `CollidingEntities`.
#[path = "../../tests/common/mod.rs"]
mod common;
use common::{assert_colliding_is_symmetric, brute_force_pairs, colliding_pairs};

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
    Update,
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

/// Open pairs by the event stream, from a global observer (the canonical orientation only).
#[derive(Resource, Default)]
struct Open(HashMap<(Entity, Entity), i32>);

fn check(app: &mut App) {
    let open: Vec<(Entity, Entity)> = {
        let open = &app.world().resource::<Open>().0;
        assert!(
            open.values().all(|&n| n == 0 || n == 1),
            "unbalanced starts and ends"
        );
        let mut pairs: Vec<_> = open
            .iter()
            .filter(|&(_, &n)| n == 1)
            .map(|(&p, _)| p)
            .collect();
        pairs.sort();
        pairs
    };
    assert_colliding_is_symmetric(app, "after an update");
    let colliding = colliding_pairs(app);
    assert_eq!(open, colliding, "events and CollidingEntities disagree");
    assert_eq!(
        colliding,
        brute_force_pairs(app),
        "CollidingEntities differs from brute force"
    );
}

fuzz_target!(|ops: Vec<Op>| {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        RectCollisionPlugin::default(),
    ))
    .init_resource::<Open>()
    .add_observer(|e: On<CollisionStarted>, mut open: ResMut<Open>| {
        if e.collider1 < e.collider2 {
            *open.0.entry((e.collider1, e.collider2)).or_default() += 1;
        }
    })
    .add_observer(|e: On<CollisionEnded>, mut open: ResMut<Open>| {
        if e.collider1 < e.collider2 {
            *open.0.entry((e.collider1, e.collider2)).or_default() -= 1;
        }
    });
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
            Op::Update => {
                app.update();
                check(&mut app);
            }
        }
    }
    app.update();
    check(&mut app);
});
