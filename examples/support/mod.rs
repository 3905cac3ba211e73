//! Pieces the examples share: the cursor in world space, dragging colliders with the mouse, rotating the
//! picked one with keys, tinting shapes while they touch, and a platformer's keys with a demo.
#![allow(dead_code, reason = "each example uses a different part")]

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_rect_collision::prelude::*;

/// Drag any collider with the left mouse button; `Q` and `E` turn the last one picked.
pub struct DragPlugin;

impl Plugin for DragPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Picked>().add_systems(
            Update,
            (
                pick_and_drag,
                rotate_picked,
                tint_touching,
                tint_touching_meshes,
            ),
        );
    }
}

/// The collider last picked with the mouse, and where on it the cursor grabbed it.
#[derive(Resource, Default)]
pub struct Picked {
    pub entity: Option<Entity>,
    pub grab_offset: Vec2,
    pub dragging: bool,
}

/// A sprite's colour when its collider touches nothing; it turns [`TOUCHING`] while it touches.
#[derive(Component)]
pub struct BaseColor(pub Color);

pub const TOUCHING: Color = Color::srgb(0.95, 0.3, 0.25);

/// The cursor's position in world space, if it is over the window.
pub fn cursor_world_position(
    window: &Query<&Window, With<PrimaryWindow>>,
    camera: &Query<(&Camera, &GlobalTransform)>,
) -> Option<Vec2> {
    let cursor = window.single().ok()?.cursor_position()?;
    let (camera, transform) = camera.single().ok()?;
    camera.viewport_to_world_2d(transform, cursor).ok()
}

fn pick_and_drag(
    buttons: Res<ButtonInput<MouseButton>>,
    window: Query<&Window, With<PrimaryWindow>>,
    camera: Query<(&Camera, &GlobalTransform)>,
    query: SpatialQuery,
    mut picked: ResMut<Picked>,
    mut transforms: Query<&mut Transform>,
) {
    let Some(cursor) = cursor_world_position(&window, &camera) else {
        return;
    };
    if buttons.just_pressed(MouseButton::Left) {
        // The last entity spawned under the cursor is drawn on top: pick it.
        if let Some(&entity) = query
            .point_intersections(cursor, &default())
            .iter()
            .max_by_key(|entity| entity.index_u32())
        {
            let position = transforms
                .get(entity)
                .map_or(cursor, |t| t.translation.truncate());
            *picked = Picked {
                entity: Some(entity),
                grab_offset: position - cursor,
                dragging: true,
            };
        }
    }
    if buttons.just_released(MouseButton::Left) {
        picked.dragging = false;
    }
    if picked.dragging
        && let Some(mut transform) = picked.entity.and_then(|e| transforms.get_mut(e).ok())
    {
        let target = cursor + picked.grab_offset;
        transform.translation = target.extend(transform.translation.z);
    }
}

fn rotate_picked(
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    picked: Res<Picked>,
    mut transforms: Query<&mut Transform>,
) {
    let turn = keys.pressed(KeyCode::KeyQ) as i32 - keys.pressed(KeyCode::KeyE) as i32;
    if turn != 0
        && let Some(mut transform) = picked.entity.and_then(|e| transforms.get_mut(e).ok())
    {
        transform.rotate_z(turn as f32 * 1.5 * time.delta_secs());
    }
}

fn tint_touching(mut sprites: Query<(&mut Sprite, &BaseColor, &CollidingEntities)>) {
    for (mut sprite, base, touching) in &mut sprites {
        sprite.color = if touching.is_empty() {
            base.0
        } else {
            TOUCHING
        };
    }
}

fn tint_touching_meshes(
    shapes: Query<(
        &MeshMaterial2d<ColorMaterial>,
        &BaseColor,
        &CollidingEntities,
    )>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    for (material, base, touching) in &shapes {
        let color = if touching.is_empty() {
            base.0
        } else {
            TOUCHING
        };
        if let Some(mut material) = materials.get_mut(&material.0)
            && material.color != color
        {
            material.color = color;
        }
    }
}

/// A sprite drawing a rectangle's or a circle's `collider`: a coloured rectangle, or the generated
/// white disc tinted. Capsules and polygons are drawn by [`mesh_for`].
pub fn sprite_for(collider: &Collider, color: Color, assets: &AssetServer) -> Sprite {
    match collider.shape {
        ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
            Sprite::from_color(color, half_size * 2.0)
        }
        ColliderShape::Circle { radius } => Sprite {
            image: assets.load("circle.png"),
            color,
            custom_size: Some(Vec2::splat(radius * 2.0)),
            ..default()
        },
        ColliderShape::Capsule { .. } | ColliderShape::ConvexPolygon(_) => {
            unreachable!("capsules and polygons are drawn by mesh_for")
        }
    }
}

/// A mesh drawing `collider`, a capsule's or a polygon's above all, with a material of its own so
/// that it can be tinted.
pub fn mesh_for(
    collider: &Collider,
    color: Color,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<ColorMaterial>,
) -> (Mesh2d, MeshMaterial2d<ColorMaterial>) {
    let mesh: Mesh = match collider.shape {
        ColliderShape::Capsule {
            radius,
            half_length,
        } => Capsule2d::new(radius, 2.0 * half_length).into(),
        ColliderShape::ConvexPolygon(polygon) => {
            bevy::math::primitives::ConvexPolygon::new_unchecked(polygon.vertices().iter().copied())
                .into()
        }
        ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
            Rectangle::from_size(half_size * 2.0).into()
        }
        ColliderShape::Circle { radius } => Circle::new(radius).into(),
    };
    let mesh = meshes.add(mesh.translated_by(collider.offset.extend(0.0)));
    (
        Mesh2d(mesh),
        MeshMaterial2d(materials.add(ColorMaterial::from_color(color))),
    )
}

/// Help text in the top-left corner.
pub fn help_text(text: &str) -> impl Bundle {
    (
        Text::new(text),
        TextFont {
            font_size: FontSize::Px(15.0),
            ..default()
        },
        Node {
            position_type: PositionType::Absolute,
            top: px(10.0),
            left: px(10.0),
            ..default()
        },
    )
}

/// What the keys ask of a platformer's character this frame ([`read_controls`]).
#[derive(Resource, Default)]
pub struct Controls {
    pub run: f32,
    pub jump: bool,
    pub drop: bool,
}

/// The demo [`read_controls`] plays until a key is pressed, in frames: in each `period`, it runs right
/// for the first `forward` and left for the rest, and it jumps every `jump_every`.
#[derive(Resource)]
pub struct DemoRun {
    pub period: u32,
    pub forward: u32,
    pub jump_every: u32,
}

/// Reads the keys: `A`/`D` or arrows run, `Space` jumps, `S` or down drops. Until one is pressed, the
/// [`DemoRun`] plays, by frames so that it plays the same at any frame rate.
pub fn read_controls(
    keys: Res<ButtonInput<KeyCode>>,
    run: Res<DemoRun>,
    mut controls: ResMut<Controls>,
    mut demo: Local<Option<(bool, u32)>>,
) {
    let pressed = |codes: [KeyCode; 2]| codes.iter().any(|&code| keys.pressed(code));
    let (left, right) = (
        pressed([KeyCode::KeyA, KeyCode::ArrowLeft]),
        pressed([KeyCode::KeyD, KeyCode::ArrowRight]),
    );
    let jump = keys.just_pressed(KeyCode::Space);
    let drop = keys.just_pressed(KeyCode::KeyS) || keys.just_pressed(KeyCode::ArrowDown);
    let (demo, frame) = demo.get_or_insert((true, 0));
    *frame += 1;
    *demo &= !(left || right || jump || drop);
    *controls = if *demo {
        Controls {
            run: if *frame % run.period < run.forward {
                1.0
            } else {
                -1.0
            },
            jump: *frame % run.jump_every == 0,
            drop: false,
        }
    } else {
        Controls {
            run: f32::from(right) - f32::from(left),
            jump,
            drop,
        }
    };
}
