//! Swept colliders: bullets through thin walls, against the analytic time of impact, and a churning
//! world of fast swept colliders whose every start gets its end.

mod common;

use bevy::prelude::*;
use bevy_rect_collision::internals;
use bevy_rect_collision::prelude::*;
use common::*;

/// A bullet: its collider, and how far it reaches from its centre along the unit `normal`.
fn bullet(kind: usize, normal: Vec2) -> (Collider, f32) {
    match kind {
        0 => (Collider::circle(0.1), 0.1),
        _ => (
            Collider::rect(0.1, 0.4),
            0.05 * normal.x.abs() + 0.2 * normal.y.abs(),
        ),
    }
}

/// One bullet fired at one wall, in a region of its own.
struct Shot {
    bullet: Entity,
    wall: Entity,
    start: Vec2,
    step: Vec2,
    /// When the bullet first touches the wall, in updates since it left `start`, by the geometry of
    /// the wall's face.
    contact: f64,
    /// The updates after which it is past the wall.
    updates: u32,
}

/// Fires `count` bullets, each moving `speed` times its size an update, at walls 0.05 thick turned at
/// random, with or without [`SweptCollider`]; runs until every bullet is past its wall.
fn fire(seed: u64, count: usize, speed: f32, swept: bool) -> (App, Vec<Shot>) {
    let mut app = app();
    let mut rng = Rng::new(seed);
    let mut shots = Vec::new();
    let step_length = speed * 0.2;
    // Long enough that the bullet meets the wall's face, not its end.
    let half_length = 4.0 * step_length + 4.0;
    for k in 0..count {
        let region = Vec2::new((k % 8) as f32, (k / 8) as f32) * (4.0 * half_length);
        let angle = rng.range(-3.1, 3.1);
        let normal = Vec2::from_angle(angle);
        let kind = rng.below(2);
        let (collider, reach) = bullet(kind, normal);
        let wall = spawn_at(
            &mut app,
            Transform::from_translation(region.extend(0.0))
                .with_rotation(Quat::from_rotation_z(angle)),
            Collider::rotated_rect(0.05, 2.0 * half_length),
        );
        // Coming at the wall's face from behind its normal, within 60° of it, from up to one step
        // away.
        let direction = Vec2::from_angle(rng.range(-1.0, 1.0)).rotate(normal);
        let step = direction * step_length;
        let gap = rng.range(0.001, 1.0) * step_length;
        let start = region - normal * (0.025 + reach + gap) + normal.perp() * rng.range(-1.0, 1.0);
        let mut entity = app
            .world_mut()
            .spawn((Transform::from_translation(start.extend(0.0)), collider));
        if swept {
            entity.insert(SweptCollider);
        }
        let bullet = entity.id();
        let (start64, step64) = (start.as_dvec2(), step.as_dvec2());
        let face = -0.025 - f64::from(reach) - start64.dot(normal.as_dvec2())
            + region.as_dvec2().dot(normal.as_dvec2());
        let contact = face / step64.dot(normal.as_dvec2());
        let past = (0.05 + 2.0 * f64::from(reach) + f64::from(gap)) / step64.dot(normal.as_dvec2());
        shots.push(Shot {
            bullet,
            wall,
            start,
            step,
            contact,
            updates: past.ceil() as u32 + 1,
        });
    }
    app.update();
    let updates = shots.iter().map(|shot| shot.updates).max().unwrap_or(0);
    for n in 1..=updates + 1 {
        for shot in &shots {
            let position = shot.start + shot.step * n as f32;
            app.world_mut()
                .get_mut::<Transform>(shot.bullet)
                .expect("the bullet")
                .translation = position.extend(0.0);
        }
        app.update();
    }
    (app, shots)
}

/// Every start of the pair of `shot`, with the update it came in, and every end's update.
fn events_of(app: &App, shot: &Shot) -> (Vec<(u32, CollisionStarted)>, Vec<u32>) {
    let key = (shot.bullet.min(shot.wall), shot.bullet.max(shot.wall));
    let log = log(app);
    let mut starts = Vec::new();
    let mut start_messages = (log.started.iter()).filter(|s| (s.collider1, s.collider2) == key);
    let mut ends = Vec::new();
    for &(update, started, a, b) in &log.stream {
        if (a, b) != key {
            continue;
        }
        if started {
            starts.push((
                update,
                *start_messages.next().expect("a message for each start"),
            ));
        } else {
            ends.push(update);
        }
    }
    (starts, ends)
}

/// Bullets from a crawl to a thousand times their size an update: every crossing of a wall starts
/// once, at the time of impact the wall's face gives, and ends once after.
#[test]
fn swept_bullets_meet_every_wall_once_at_the_time_of_impact() {
    let mut checked = 0;
    for (seed, speed) in [
        (1, 1.0),
        (2, 3.0),
        (3, 10.0),
        (4, 40.0),
        (5, 200.0),
        (6, 1000.0),
    ] {
        let (app, shots) = fire(seed, 24, speed, true);
        for (k, shot) in shots.iter().enumerate() {
            let case = format!("speed {speed}, shot {k}");
            let (starts, ends) = events_of(&app, shot);
            assert_eq!(starts.len(), 1, "{case}: one start");
            assert_eq!(ends.len(), 1, "{case}: one end");
            let (update, start) = starts[0];
            assert!(update < ends[0], "{case}: the start before the end");
            // The first update only spawned; the bullet left its start at the second.
            let fraction = shot.contact - f64::from(update - 2);
            let toi = start
                .time_of_impact
                .expect("a swept start has a time of impact");
            assert!(
                (f64::from(toi) - fraction).abs() <= 1e-4,
                "{case}: time of impact {toi} for {fraction}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 6 * 24);
}

/// Without the marker a bullet faster than the wall is thick passes through it unseen, as the docs
/// say.
#[test]
fn bullets_without_the_marker_pass_through_thin_walls() {
    let (app, shots) = fire(7, 16, 40.0, false);
    for shot in &shots {
        let (starts, _) = events_of(&app, shot);
        assert!(starts.is_empty(), "a discrete bullet tunnels");
    }
}

/// A swept bullet passing 0.01 beside a wall, along its face or past its end, touches nothing.
#[test]
fn swept_bullets_passing_beside_a_wall_touch_nothing() {
    let mut app = app();
    let wall = spawn_at(&mut app, at(0.0, 0.0), Collider::rect(0.05, 10.0));
    // Along the face, 0.01 off it; and across the line of the wall, 0.01 past its end.
    let along = spawn_at(
        &mut app,
        at(0.025 + 0.1 + 0.01, -30.0),
        (Collider::circle(0.1), SweptCollider),
    );
    let past_the_end = spawn_at(
        &mut app,
        at(-30.0, 5.0 + 0.1 + 0.01),
        (Collider::circle(0.1), SweptCollider),
    );
    app.update();
    for n in 1..4 {
        let travelled = 20.0 * n as f32;
        app.world_mut()
            .get_mut::<Transform>(along)
            .unwrap()
            .translation
            .y = -30.0 + travelled;
        app.world_mut()
            .get_mut::<Transform>(past_the_end)
            .unwrap()
            .translation
            .x = -30.0 + travelled;
        app.update();
    }
    assert!(
        log(&app).stream.is_empty(),
        "no event: {:?}",
        log(&app).stream
    );
    assert!(touching(&mut app, wall).is_empty());
}

/// A swept collider set far away with `Teleported` is not swept across the jump, and the marker goes
/// after the update.
#[test]
fn a_teleported_bullet_is_not_swept_across_its_jump() {
    let mut app = app();
    app.world_mut()
        .spawn((at(0.0, 0.0), Collider::rect(0.05, 10.0)));
    let bullet = spawn_at(
        &mut app,
        at(-20.0, 0.0),
        (Collider::circle(0.1), SweptCollider),
    );
    app.update();
    let mut entity = app.world_mut().entity_mut(bullet);
    entity.get_mut::<Transform>().unwrap().translation.x = 20.0;
    entity.insert(Teleported);
    app.update();
    assert!(log(&app).stream.is_empty(), "the jump touched nothing");
    assert!(
        app.world().get::<Teleported>(bullet).is_none(),
        "the marker is gone"
    );
    // Without the marker, the jump back is swept.
    app.world_mut()
        .get_mut::<Transform>(bullet)
        .unwrap()
        .translation
        .x = -20.0;
    app.update();
    assert_eq!(log(&app).stream.len(), 1, "the way back crossed the wall");
}

/// Two swept colliders crossing each other's paths in one update touch where their motions meet, by
/// their relative motion: each moved alone past where the other ended would miss.
#[test]
fn two_swept_colliders_meet_by_their_relative_motion() {
    let mut app = app();
    let a = spawn_at(
        &mut app,
        at(-10.0, 0.0),
        (Collider::circle(0.5), SweptCollider),
    );
    let b = spawn_at(
        &mut app,
        at(10.0, 0.0),
        (Collider::circle(0.5), SweptCollider),
    );
    app.update();
    app.world_mut()
        .get_mut::<Transform>(a)
        .unwrap()
        .translation
        .x = 10.0;
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = -10.0;
    app.update();
    let started = &log(&app).started;
    assert_eq!(started.len(), 1, "they met");
    // Closing at 40 units an update from 20 apart, touching at 1 apart: at 19/40 of the update, at
    // the origin.
    let toi = started[0].time_of_impact.unwrap();
    assert!((toi - 19.0 / 40.0).abs() < 1e-5, "{toi}");
    assert!(started[0].point.length() < 1e-4, "{:?}", started[0].point);
    assert_eq!(started[0].depth, 0.0);
    // The contact keeps the time of impact, and the broad phase the ways the overlay draws.
    let contact = app.world().resource::<Contacts>().iter().next().copied();
    assert_eq!(contact.and_then(|pair| pair.time_of_impact), Some(toi));
    let mut ways: Vec<(Entity, Vec2)> = internals::sweeps(app.world())
        .into_iter()
        .map(|(entity, _, motion)| (entity, motion))
        .collect();
    ways.sort_by(|(_, one), (_, other)| one.x.total_cmp(&other.x));
    assert_eq!(
        ways,
        [(b, Vec2::new(-20.0, 0.0)), (a, Vec2::new(20.0, 0.0))]
    );
    app.update();
    assert_eq!(log(&app).stream.len(), 2, "and parted, at the next update");
}

/// A world of colliders, a third of them swept and fast, spawned, despawned, moved and sometimes
/// teleported at random: after every update the broad phase keeps its invariants, the event stream
/// agrees with `CollidingEntities`, every pair touching where the colliders are is reported, and
/// every other reported pair has a swept collider that moved. Once all are despawned, every start has
/// had its end.
#[test]
fn a_churning_world_of_swept_colliders_ends_every_start() {
    let mut app = app();
    let mut rng = Rng::new(0x5e_e9e5);
    let mut live: Vec<(Entity, bool)> = Vec::new();
    let mut moved_swept = Vec::new();
    for frame in 0..150 {
        for _ in 0..rng.below(6) {
            let swept = rng.below(3) == 0;
            let position = Vec2::new(rng.range(-20.0, 20.0), rng.range(-20.0, 20.0));
            let collider = match rng.below(5) {
                0 => Collider::circle(rng.range(0.1, 1.5)),
                1 => Collider::rect(rng.range(0.1, 3.0), rng.range(0.1, 3.0)),
                2 => Collider::rotated_rect(rng.range(0.1, 3.0), rng.range(0.1, 3.0)),
                3 => Collider::capsule(rng.range(0.1, 1.0), rng.range(0.0, 2.0)),
                _ => quadrilateral(rng.range(0.1, 3.0), rng.range(0.1, 3.0)),
            };
            let transform = Transform::from_translation(position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(rng.range(-3.1, 3.1)));
            let mut entity = app.world_mut().spawn((transform, collider));
            if swept {
                entity.insert(SweptCollider);
            }
            live.push((entity.id(), swept));
        }
        if !live.is_empty() && rng.below(3) == 0 {
            let (gone, _) = live.swap_remove(rng.below(live.len()));
            app.world_mut().despawn(gone);
        }
        moved_swept.clear();
        for &(entity, swept) in &live {
            let reach = if swept { 15.0 } else { 0.5 };
            let step = Vec2::new(rng.range(-reach, reach), rng.range(-reach, reach));
            let mut entity_mut = app.world_mut().entity_mut(entity);
            let mut transform = entity_mut.get_mut::<Transform>().unwrap();
            let position = (transform.translation.truncate() + step)
                .clamp(Vec2::splat(-25.0), Vec2::splat(25.0));
            transform.translation = position.extend(0.0);
            if swept && rng.below(10) == 0 {
                entity_mut.insert(Teleported);
            } else if swept {
                moved_swept.push(entity);
            }
        }
        app.update();
        let context = format!("frame {frame}");
        internals::validate_broad_phase(app.world());
        assert_events_alternate(&app, &context);
        assert_colliding_is_symmetric(&mut app, &context);
        let colliding = colliding_pairs(&mut app);
        assert_eq!(
            replayed_pairs(&app),
            colliding,
            "{context}: the event stream"
        );
        let where_they_are = brute_force_pairs(&mut app);
        for pair in &where_they_are {
            assert!(
                colliding.contains(pair),
                "{context}: {pair:?} touches, and is reported"
            );
        }
        for pair in colliding
            .iter()
            .filter(|pair| !where_they_are.contains(pair))
        {
            assert!(
                moved_swept.contains(&pair.0) || moved_swept.contains(&pair.1),
                "{context}: {pair:?} is reported apart, with no swept collider that moved"
            );
        }
    }
    let swept_starts = (log(&app).started.iter())
        .filter(|s| s.time_of_impact.is_some())
        .count();
    assert!(swept_starts > 50, "sweeps found pairs: {swept_starts}");
    for (entity, _) in live.drain(..) {
        app.world_mut().despawn(entity);
    }
    app.update();
    assert!(
        replayed_pairs(&app).is_empty(),
        "every start has had its end"
    );
    assert_events_alternate(&app, "after the despawns");
}

/// Every order of `0..n`.
fn orders(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for shorter in orders(n - 1) {
        for at in 0..=shorter.len() {
            let mut order = shorter.clone();
            order.insert(at, n - 1);
            all.push(order);
        }
    }
    all
}

/// A swept bullet that crosses three walls and passes an enemy in one update, the five spawned in
/// every order, so that entity order says nothing of where they stand: its starts come in the order
/// it met them, and an observer that despawns it at its first start is handed the nearest wall only.
#[test]
fn a_bullets_starts_come_in_the_order_it_met_what_it_crossed() {
    let places = [10.0, 20.0, 30.0, 40.0];
    for order in orders(5) {
        for despawn_at_first_start in [false, true] {
            let context = format!(
                "spawned in the order {order:?}, despawned at the first start: {despawn_at_first_start}"
            );
            let mut app = app();
            let mut entities = [Entity::PLACEHOLDER; 5];
            for &k in &order {
                entities[k] = match k {
                    0..3 => spawn_at(&mut app, at(places[k], 0.0), Collider::rect(0.5, 10.0)),
                    3 => spawn_at(&mut app, at(places[k], 0.0), Collider::circle(2.0)),
                    _ => spawn_at(
                        &mut app,
                        at(0.0, 0.0),
                        (Collider::circle(0.1), SweptCollider),
                    ),
                };
            }
            let bullet = entities[4];
            if despawn_at_first_start {
                app.world_mut().entity_mut(bullet).observe(
                    |hit: On<CollisionStarted>, mut commands: Commands| {
                        commands.entity(hit.collider1).despawn();
                    },
                );
            }
            app.update();
            assert!(
                log(&app).started.is_empty(),
                "{context}: nothing touches at first"
            );
            app.world_mut()
                .get_mut::<Transform>(bullet)
                .unwrap()
                .translation
                .x = 50.0;
            app.update();
            let starts: Vec<(Entity, f32)> = (log(&app).started.iter())
                .map(|start| {
                    let other = if start.collider1 == bullet {
                        start.collider2
                    } else {
                        start.collider1
                    };
                    let time = start
                        .time_of_impact
                        .expect("a swept pair has a time of impact");
                    (other, time)
                })
                .collect();
            let hit: Vec<Entity> = starts.iter().map(|&(other, _)| other).collect();
            if despawn_at_first_start {
                assert_eq!(hit, entities[..1], "{context}: the nearest wall alone");
                assert!(
                    app.world().get_entity(bullet).is_err(),
                    "{context}: despawned"
                );
            } else {
                assert_eq!(hit, entities[..4], "{context}: nearest first");
                assert!(
                    starts.windows(2).all(|pair| pair[0].1 < pair[1].1),
                    "{context}: times of impact {starts:?} increase"
                );
            }
        }
    }
}
