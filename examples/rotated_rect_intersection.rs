//! The worked example of "Rotated rectangle intersection" (a Google Answers thread): a 6 × 4.5 rectangle rotated about the midpoint of its left side, against a
//! 1 × 0.5 rectangle. Drag the angle slider: at -1.4 rad they are apart; past -1.35906 rad (the switch
//! angle, found by bisection in the crate's tests) they meet.
//!
//! Run: `cargo run --example rotated_rect_intersection --features egui`

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use bevy_rect_collision::prelude::*;

/// The angle at which the rectangles start to meet, from the crate's `worked_example_switch_angle` test.
const SWITCH_ANGLE: f32 = -1.359_062_7;
/// Pixels per unit of the worked example's coordinates.
const SCALE: f32 = 60.0;

#[derive(Resource)]
struct Angle(f32);

/// The rotated rectangle's pivot: the midpoint of its left side, where the worked example rotates it.
#[derive(Component)]
struct Pivot;

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins,
            RectCollisionPlugin::default(),
            RectCollisionEguiPlugin,
        ))
        .insert_resource(Angle(-1.4))
        .add_systems(Startup, setup)
        .add_systems(Update, apply_angle)
        .add_systems(EguiPrimaryContextPass, angle_window)
        .run();
}

fn setup(mut commands: Commands) {
    commands.spawn((Camera2d, Transform::from_xyz(80.0, 60.0, 0.0)));
    // Everything in the worked example's units under one scaled parent: the hierarchy scales the
    // colliders too.
    let world = commands
        .spawn(Transform::from_scale(Vec3::splat(SCALE)))
        .id();
    // P: corner (-1, 1), 6 × 4.5, so its left side's midpoint is (-1, 3.25) and its centre 3 to the right.
    commands.spawn((
        ChildOf(world),
        Pivot,
        Transform::from_xyz(-1.0, 3.25, 0.0),
        Collider::rotated_rect(6.0, 4.5).with_offset(Vec2::new(3.0, 0.0)),
        children![(
            Transform::from_xyz(3.0, 0.0, -1.0),
            Sprite::from_color(Color::srgba(0.3, 0.55, 0.9, 0.5), Vec2::new(6.0, 4.5)),
        )],
    ));
    // Q: corner (2, 0), 1 × 0.5.
    commands.spawn((
        ChildOf(world),
        Transform::from_xyz(2.5, 0.25, 0.0),
        Collider::rect(1.0, 0.5),
        Sprite::from_color(Color::srgba(0.9, 0.7, 0.3, 0.6), Vec2::new(1.0, 0.5)),
    ));
}

fn apply_angle(angle: Res<Angle>, mut pivot: Single<&mut Transform, With<Pivot>>) {
    pivot.rotation = Quat::from_rotation_z(angle.0);
}

fn angle_window(
    mut contexts: EguiContexts,
    mut angle: ResMut<Angle>,
    pivot: Single<&CollidingEntities, With<Pivot>>,
) -> Result {
    egui::Window::new("Rotated rectangle intersection")
        .default_pos([900.0, 20.0])
        .show(contexts.ctx_mut()?, |ui| {
            ui.add(egui::Slider::new(&mut angle.0, -1.6..=-1.1).text("angle (rad)"));
            ui.horizontal(|ui| {
                if ui.button("-1.4 (the example's)").clicked() {
                    angle.0 = -1.4;
                }
                if ui.button("just below").clicked() {
                    angle.0 = SWITCH_ANGLE - 1e-3;
                }
                if ui.button("just above").clicked() {
                    angle.0 = SWITCH_ANGLE + 1e-3;
                }
            });
            let meet = !pivot.is_empty();
            ui.label(format!(
                "They {}. They start to meet at {SWITCH_ANGLE} rad.",
                if meet { "meet" } else { "are apart" }
            ));
        });
    Ok(())
}
