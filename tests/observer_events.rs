//! Observers that change the world while the events are being dispatched: despawning, removing a
//! `Collider`, disabling or re-layering a collider from inside `CollisionStarted` and `CollisionEnded`
//! observers. Through all of it, each pair's starts and ends alternate, beginning with a start; no
//! start names a collider that is gone when it is dispatched; messages and observers agree; and what
//! each collider's observers kept equals its `CollidingEntities`.

mod common;

use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use common::*;

/// The three roles of the arena-shooter story: a sensor that tracks who is inside it with its own
/// observers, a victim entering it, and a killer that reaches the victim on the same update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Sensor,
    Victim,
    Killer,
}

#[derive(Component)]
struct Victim;

/// Every order of the three roles.
fn spawn_orders() -> [[Role; 3]; 6] {
    use Role::*;
    [
        [Sensor, Victim, Killer],
        [Sensor, Killer, Victim],
        [Victim, Sensor, Killer],
        [Victim, Killer, Sensor],
        [Killer, Sensor, Victim],
        [Killer, Victim, Sensor],
    ]
}

/// Checks the event guarantees and the observers' sets after an update.
fn assert_story_holds(app: &mut App, context: &str) {
    assert_events_alternate(app, context);
    assert_colliding_is_symmetric(app, context);
    assert_observed_sets_match(app, context);
}

/// Spawns the three roles in `order`, all overlapping at the origin, the killer doing `reaction` to the
/// victim from its start observer, and runs three updates with the guarantees checked after each.
/// Returns the app, the sensor and the victim.
fn sensor_victim_killer(order: [Role; 3], reaction: Reaction) -> (App, Entity, Entity) {
    let mut app = app();
    let (mut sensor, mut victim) = (Entity::PLACEHOLDER, Entity::PLACEHOLDER);
    for role in order {
        let world = app.world_mut();
        match role {
            Role::Sensor => {
                let mut entity = world.spawn((at(0.0, 0.0), Collider::rect(50.0, 50.0)));
                observe_own_set(&mut entity);
                sensor = entity.id();
            }
            Role::Victim => {
                let mut entity = world.spawn((at(1.0, 0.0), Collider::circle(2.0), Victim));
                observe_own_set(&mut entity);
                victim = entity.id();
            }
            Role::Killer => {
                let mut entity = world.spawn((at(-1.0, 0.0), Collider::circle(2.0)));
                observe_own_set(&mut entity);
                entity.observe(
                    move |hit: On<CollisionStarted>,
                          victims: Query<(), With<Victim>>,
                          mut commands: Commands| {
                        if victims.contains(hit.collider2) {
                            reaction.apply(&mut commands, hit.collider2);
                        }
                    },
                );
            }
        }
    }
    for update in 1..=3 {
        app.update();
        assert_story_holds(
            &mut app,
            &format!("{order:?}, {reaction:?}, update {update}"),
        );
    }
    (app, sensor, victim)
}

#[test]
fn a_victim_despawned_by_a_start_observer_never_stays_in_the_sensors_set_in_any_spawn_order() {
    for order in spawn_orders() {
        let (mut app, sensor, victim) = sensor_victim_killer(order, Reaction::Despawn);
        assert!(
            app.world().get_entity(victim).is_err(),
            "{order:?}: the killer despawned the victim"
        );
        let observed = &app.world().get::<ObservedSet>(sensor).unwrap().0;
        assert!(
            !observed.contains(&victim),
            "{order:?}: the sensor's observers do not keep the despawned victim"
        );
        assert_eq!(
            observed.len(),
            1,
            "{order:?}: the sensor's observers keep the killer alone"
        );
        assert!(
            !touching(&mut app, sensor).contains(&victim),
            "{order:?}: the sensor's CollidingEntities lets go of the victim"
        );
    }
}

#[test]
fn a_victim_losing_its_collider_in_a_start_observer_leaves_every_set_in_any_spawn_order() {
    for order in spawn_orders() {
        let (app, sensor, victim) = sensor_victim_killer(order, Reaction::RemoveCollider);
        assert!(
            app.world().get::<Collider>(victim).is_none(),
            "{order:?}: the killer took the victim's collider"
        );
        assert!(
            !app.world()
                .get::<ObservedSet>(sensor)
                .unwrap()
                .0
                .contains(&victim),
            "{order:?}: the sensor's observers do not keep the victim"
        );
        assert!(
            app.world().get::<ObservedSet>(victim).unwrap().0.is_empty(),
            "{order:?}: the victim's own observers let go of everything"
        );
    }
}

#[test]
fn a_victim_disabled_or_relayered_in_a_start_observer_starts_and_then_ends_in_any_spawn_order() {
    for reaction in [Reaction::Disable, Reaction::LayersNone] {
        for order in spawn_orders() {
            let (mut app, sensor, victim) = sensor_victim_killer(order, reaction);
            // The victim kept its collider while the starts went out: its pairs started, and ended on
            // the next update, when the pipeline saw the change.
            let log = log(&app);
            let pair = (sensor.min(victim), sensor.max(victim));
            let events: Vec<bool> = log
                .stream
                .iter()
                .filter(|&&(_, _, a, b)| (a, b) == pair)
                .map(|&(_, started, _, _)| started)
                .collect();
            assert_eq!(
                events,
                [true, false],
                "{order:?}, {reaction:?}: the sensor–victim pair started, then ended"
            );
            assert!(
                touching(&mut app, victim).is_empty(),
                "{order:?}, {reaction:?}: the victim touches nothing once the change is seen"
            );
        }
    }
}

/// Spawns an enemy and `bullets` bullets all reaching it on the first update, in the order given
/// (`enemy_first`), each bullet despawning the enemy from its start observer. Returns the app and
/// the enemy.
fn bullets_on_one_enemy(bullets: usize, enemy_first: bool) -> (App, Entity) {
    #[derive(Resource, Default)]
    struct Handed(Vec<(Entity, Entity)>);

    let mut app = app();
    app.init_resource::<Handed>();
    let spawn_enemy = |app: &mut App| {
        let mut enemy = app
            .world_mut()
            .spawn((at(0.0, 0.0), Collider::rect(2.0, 2.0), Victim));
        observe_own_set(&mut enemy);
        enemy.id()
    };
    let enemy = if enemy_first {
        Some(spawn_enemy(&mut app))
    } else {
        None
    };
    for k in 0..bullets {
        let y = k as f32 * 0.5 - 0.5;
        let mut bullet = app.world_mut().spawn((at(1.2, y), Collider::circle(0.25)));
        observe_own_set(&mut bullet);
        bullet.observe(
            |hit: On<CollisionStarted>,
             victims: Query<(), With<Victim>>,
             mut handed: ResMut<Handed>,
             mut commands: Commands| {
                if victims.contains(hit.collider2) {
                    handed.0.push((hit.collider1, hit.collider2));
                    // `despawn`, not `try_despawn`: an enemy handed over must still be there.
                    commands.entity(hit.collider2).despawn();
                }
            },
        );
    }
    let enemy = enemy.unwrap_or_else(|| spawn_enemy(&mut app));
    for update in 1..=3 {
        app.update();
        assert_story_holds(
            &mut app,
            &format!("{bullets} bullets, enemy first: {enemy_first}, update {update}"),
        );
    }
    let handed = &app.world().resource::<Handed>().0;
    assert_eq!(
        handed.len(),
        1,
        "{bullets} bullets, enemy first: {enemy_first}: one bullet is handed the enemy: {handed:?}"
    );
    (app, enemy)
}

#[test]
fn two_bullets_reaching_one_enemy_on_one_update_hand_it_to_one_of_them() {
    for enemy_first in [true, false] {
        let (app, enemy) = bullets_on_one_enemy(2, enemy_first);
        assert!(app.world().get_entity(enemy).is_err(), "the enemy is gone");
    }
}

#[test]
fn three_bullets_reaching_one_enemy_on_one_update_hand_it_to_one_of_them() {
    for enemy_first in [true, false] {
        let (mut app, enemy) = bullets_on_one_enemy(3, enemy_first);
        assert!(app.world().get_entity(enemy).is_err(), "the enemy is gone");
        let (starts, ends) = log(&app).counts_for(enemy);
        assert_eq!(
            (starts, ends),
            (1, 1),
            "the enemy's one start, with the bullet that took it, and its end"
        );
        assert_matches_brute_force(&mut app, "after the bullets");
    }
}

#[test]
fn a_despawn_in_an_end_observer_drops_the_starts_still_waiting() {
    let mut app = app();
    let (a, b, c, d) = {
        let world = app.world_mut();
        let mut a = world.spawn((at(0.0, 0.0), Collider::circle(1.0)));
        observe_own_set(&mut a);
        let a = a.id();
        let mut b = world.spawn((at(1.5, 0.0), Collider::circle(1.0)));
        observe_own_set(&mut b);
        let b = b.id();
        // c and d are far away and apart for now.
        let mut c = world.spawn((at(100.0, 0.0), Collider::circle(1.0), Victim));
        observe_own_set(&mut c);
        let c = c.id();
        let mut d = world.spawn((at(110.0, 0.0), Collider::circle(1.0)));
        observe_own_set(&mut d);
        (a, b, c, d.id())
    };
    app.world_mut().entity_mut(a).observe(
        |_: On<CollisionEnded>, victims: Query<Entity, With<Victim>>, mut commands: Commands| {
            for victim in &victims {
                commands.entity(victim).despawn();
            }
        },
    );
    app.update();
    assert_story_holds(&mut app, "a and b touch");
    // On one update a and b part, and c and d meet: a's end observer despawns c while c–d's start
    // waits to be sent.
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = 10.0;
    app.world_mut()
        .get_mut::<Transform>(d)
        .unwrap()
        .translation
        .x = 101.0;
    app.update();
    assert_story_holds(&mut app, "a and b part, c and d meet");
    assert!(
        app.world().get_entity(c).is_err(),
        "a's observer despawned c"
    );
    assert_eq!(
        log(&app).counts_for(c),
        (0, 0),
        "c's start with d was dropped, and no end was sent for it"
    );
    assert!(
        app.world().get::<ObservedSet>(d).unwrap().0.is_empty(),
        "d's observers were never handed c"
    );
    app.update();
    assert_story_holds(&mut app, "the update after");
    assert_matches_brute_force(&mut app, "the update after");
}

#[test]
fn a_collider_despawned_between_the_narrow_phase_and_the_events_never_starts() {
    fn despawn_victims(victims: Query<Entity, With<Victim>>, mut commands: Commands) {
        for victim in &victims {
            commands.entity(victim).despawn();
        }
    }
    let mut app = app();
    app.add_systems(
        PostUpdate,
        despawn_victims
            .after(CollisionSystems::NarrowPhase)
            .before(CollisionSystems::Events),
    );
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::circle(1.0));
    let b = spawn_at(&mut app, at(1.5, 0.0), (Collider::circle(1.0), Victim));
    for update in 1..=3 {
        app.update();
        assert_story_holds(&mut app, &format!("update {update}"));
    }
    assert!(app.world().get_entity(b).is_err(), "b was despawned");
    assert_eq!(
        log(&app).counts_for(b),
        (0, 0),
        "b, gone before the events stage, neither started nor ended"
    );
    assert!(touching(&mut app, a).is_empty(), "a touches nothing");
    assert_matches_brute_force(&mut app, "after three updates");
}

#[test]
fn reactions_from_start_and_end_observers_on_a_crowd_keep_the_story() {
    // Many pairs at once, every collider reacting to what it meets or leaves: starts queued behind
    // each other, and ends sent from removals while starts still wait.
    let reactions = [
        Reaction::Despawn,
        Reaction::RemoveCollider,
        Reaction::Disable,
        Reaction::LayersNone,
    ];
    let mut app = app();
    add_reactions(&mut app);
    record_pairs_at_narrow_phase(&mut app);
    let mut rng = Rng::new(0x0b5e_77e5_0ff1_ce55);
    let movers = spawn_movers(
        &mut app,
        Rng::new(0x7e57_a11e_5eed_0001),
        300,
        30.0,
        1.0..3.0,
    );
    for &entity in &movers {
        let mut entity = app.world_mut().entity_mut(entity);
        observe_own_set(&mut entity);
        match rng.below(4) {
            0 => {
                entity.insert(OnStart(reactions[rng.below(4)]));
            }
            1 => {
                entity.insert(OnEnd(reactions[rng.below(4)]));
            }
            _ => {}
        }
    }
    app.add_systems(Update, move_by_velocity);
    for update in 1..=60 {
        app.update();
        let context = format!("update {update}");
        assert_story_holds(&mut app, &context);
        assert_eq!(
            colliding_pairs(&mut app),
            expected_after_observers(&app),
            "{context}: CollidingEntities against brute force as the pipeline saw the world"
        );
    }
    let log = log(&app);
    assert!(
        log.started.len() > 50 && log.ended.len() > 50,
        "the crowd exercised the events: {} starts, {} ends",
        log.started.len(),
        log.ended.len()
    );
}

fn move_by_velocity(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.0.extend(0.0) * 4.0;
    }
}
