//! `TilemapCollider` through the public API: the regions cover exactly the solid cells, against the
//! cells themselves; queries against brute force over the cells; edits, events and characters.

mod common;

use bevy::ecs::system::RunSystemOnce;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use common::{Rng, app, assert_events_alternate, assert_matches_brute_force, spawn_at};

const CHUNK: u32 = TilemapCollider::CHUNK;

/// A map of `size` with random cells of kinds 0 to 3: blobs where `blobs`, noise otherwise.
fn random_map(rng: &mut Rng, size: UVec2, tile: Vec2, blobs: bool) -> TilemapCollider {
    let mut map = TilemapCollider::new(size, tile);
    if blobs {
        for _ in 0..(size.x * size.y / 40).max(1) {
            let at = UVec2::new(
                rng.below(size.x as usize) as u32,
                rng.below(size.y as usize) as u32,
            );
            let reach = UVec2::new(rng.below(9) as u32 + 1, rng.below(9) as u32 + 1);
            map.fill(at, at + reach, rng.below(4) as u8);
        }
    } else {
        for y in 0..size.y {
            for x in 0..size.x {
                map.set(UVec2::new(x, y), rng.below(4).saturating_sub(1) as u8);
            }
        }
    }
    map
}

/// Every region entity of `map` with its region.
fn regions_of(app: &mut App, map: Entity) -> Vec<(Entity, TileRegion)> {
    let mut regions = (app.world_mut())
        .query::<(Entity, &TileRegion, &TileRegionOf)>()
        .iter(app.world())
        .filter(|(_, _, of)| of.0 == map)
        .map(|(entity, region, _)| (entity, *region))
        .collect::<Vec<_>>();
    regions.sort_by_key(|&(entity, _)| entity);
    let listed = app.world().get::<TileRegions>(map);
    let mut listed = listed.map_or(Vec::new(), |listed| listed.entities().to_vec());
    listed.sort();
    assert_eq!(
        listed,
        regions
            .iter()
            .map(|&(entity, _)| entity)
            .collect::<Vec<_>>(),
        "the map lists its regions"
    );
    regions
}

fn map_of(app: &App, map: Entity) -> &TilemapCollider {
    app.world().get::<TilemapCollider>(map).unwrap()
}

/// The runs of solid cells of one kind along each row, cut at chunk borders: the most regions the
/// greedy merge may make.
fn row_runs(map: &TilemapCollider) -> usize {
    let size = map.size();
    let mut runs = 0;
    for y in 0..size.y {
        for x in 0..size.x {
            let kind = map.get(UVec2::new(x, y));
            let left = (x % CHUNK != 0).then(|| map.get(UVec2::new(x - 1, y)));
            if kind != 0 && left != Some(kind) {
                runs += 1;
            }
        }
    }
    runs
}

/// Fails, naming `context`, unless the regions of `map` cover each solid cell once, with a region of
/// its kind, and no empty cell; lie each in one chunk; are no more than the row runs; and have the
/// box their cells cover, placed by the map's transform (translation and scale).
fn assert_exact_cover(app: &mut App, map: Entity, context: &str) {
    let regions = regions_of(app, map);
    let tilemap = map_of(app, map).clone();
    let size = tilemap.size();
    let mut cover = vec![0u32; (size.x * size.y) as usize];
    for &(entity, region) in &regions {
        assert!(
            region.min.cmplt(region.max).all() && region.max.cmple(size).all(),
            "{context}: region {region:?} lies in the map"
        );
        assert_eq!(
            region.min / CHUNK,
            (region.max - 1) / CHUNK,
            "{context}: region {region:?} lies in one chunk"
        );
        for cell in region.cells() {
            assert_eq!(
                tilemap.get(cell),
                region.kind,
                "{context}: cell {cell} in region {region:?}"
            );
            cover[(cell.y * size.x + cell.x) as usize] += 1;
        }
        let transform = app
            .world()
            .get::<GlobalTransform>(map)
            .unwrap()
            .compute_transform();
        let local = Rect::from_corners(
            region.min.as_vec2() * tilemap.tile_size(),
            region.max.as_vec2() * tilemap.tile_size(),
        );
        let expected = Rect::from_corners(
            transform.transform_point(local.min.extend(0.0)).truncate(),
            transform.transform_point(local.max.extend(0.0)).truncate(),
        );
        let aabb = (app.world().get::<ColliderWorldShape>(entity))
            .and_then(ColliderWorldShape::aabb)
            .unwrap_or_else(|| panic!("{context}: region {region:?} has a world shape"));
        let tolerance = 1e-4 * (1.0 + expected.max.abs().max_element());
        assert!(
            (aabb.min - expected.min).abs().max_element() <= tolerance
                && (aabb.max - expected.max).abs().max_element() <= tolerance,
            "{context}: region {region:?} covers {aabb:?}, its cells {expected:?}"
        );
    }
    for y in 0..size.y {
        for x in 0..size.x {
            let solid = tilemap.get(UVec2::new(x, y)) != 0;
            assert_eq!(
                cover[(y * size.x + x) as usize],
                u32::from(solid),
                "{context}: cell ({x}, {y}) of kind {}",
                tilemap.get(UVec2::new(x, y))
            );
        }
    }
    assert!(
        regions.len() <= row_runs(&tilemap),
        "{context}: {} regions, more than the {} row runs",
        regions.len(),
        row_runs(&tilemap)
    );
}

#[test]
fn regions_cover_exactly_the_solid_cells() {
    let mut rng = Rng::new(0x711e_0001);
    let sizes = [
        (1, 1),
        (1, 9),
        (9, 1),
        (32, 32),
        (33, 5),
        (31, 65),
        (70, 45),
        (100, 3),
    ];
    for (case, &(w, h)) in sizes.iter().enumerate() {
        for blobs in [false, true] {
            let mut app = app();
            let tile = Vec2::new(rng.range(0.5, 3.0), rng.range(0.5, 3.0));
            let map = random_map(&mut rng, UVec2::new(w, h), tile, blobs);
            let transform =
                Transform::from_xyz(rng.range(-50.0, 50.0), rng.range(-50.0, 50.0), 0.0)
                    .with_scale(Vec3::new(rng.range(0.5, 2.0), rng.range(0.5, 2.0), 1.0));
            let map = spawn_at(&mut app, transform, map);
            app.update();
            assert_exact_cover(&mut app, map, &format!("case {case} {w}×{h} blobs {blobs}"));
        }
    }
}

#[test]
fn a_solid_block_is_one_region_per_chunk() {
    let mut app = app();
    let size = UVec2::new(70, 45);
    let mut tilemap = TilemapCollider::new(size, Vec2::ONE);
    tilemap.fill(UVec2::ZERO, size, 1);
    let map = spawn_at(&mut app, Transform::default(), tilemap);
    app.update();
    assert_exact_cover(&mut app, map, "a solid block");
    assert_eq!(
        regions_of(&mut app, map).len(),
        3 * 2,
        "one region per chunk"
    );
}

#[test]
fn kinds_keep_apart_with_their_own_layers_and_one_way_platforms() {
    const WALL: u8 = 1;
    const ONE_WAY: u8 = 2;
    let mut app = app();
    let wall_layers = CollisionLayers::new(1 << 1, 1 << 0);
    let mut tilemap = TilemapCollider::new(UVec2::new(10, 4), Vec2::ONE)
        .with_layers(WALL, wall_layers)
        .with_one_way(ONE_WAY);
    tilemap.fill(UVec2::ZERO, UVec2::new(10, 1), WALL);
    tilemap.fill(UVec2::new(3, 0), UVec2::new(6, 1), ONE_WAY);
    let map = spawn_at(&mut app, Transform::default(), tilemap);
    app.update();
    assert_exact_cover(&mut app, map, "three runs of two kinds");
    let regions = regions_of(&mut app, map);
    assert_eq!(regions.len(), 3, "kinds never merge");
    for (entity, region) in regions {
        let one_way = app.world().get::<OneWayPlatform>(entity).is_some();
        let layers = *app.world().get::<CollisionLayers>(entity).unwrap();
        match region.kind {
            WALL => assert!(!one_way && layers == wall_layers, "{region:?}"),
            _ => assert!(
                one_way && layers == CollisionLayers::default(),
                "{region:?}"
            ),
        }
    }
}

#[test]
fn cells_outside_the_map_are_empty_and_left_alone() {
    let mut tilemap = TilemapCollider::new(UVec2::new(4, 3), Vec2::new(2.0, 0.5));
    tilemap.set(UVec2::new(4, 0), 1);
    tilemap.set(UVec2::new(0, 3), 1);
    tilemap.fill(UVec2::new(2, 2), UVec2::new(9, 9), 5);
    assert_eq!(tilemap.get(UVec2::new(4, 0)), 0);
    assert_eq!(tilemap.get(UVec2::new(3, 2)), 5);
    assert_eq!(tilemap.get(UVec2::new(100, 100)), 0);
    assert_eq!(tilemap.cell_at(Vec2::new(7.9, 1.4)), Some(UVec2::new(3, 2)));
    assert_eq!(tilemap.cell_at(Vec2::new(8.0, 1.0)), None);
    assert_eq!(tilemap.cell_at(Vec2::new(-0.1, 1.0)), None);
    assert_eq!(
        tilemap.cell_at(Vec2::new(2.0, 0.5)),
        Some(UVec2::new(1, 1)),
        "a point on a cell's edge is in the upper cell"
    );
}

/// Each cell's centre, by point query, finds exactly its region, and an empty cell's nothing.
#[test]
fn a_point_at_each_cells_centre_finds_its_region() {
    let mut rng = Rng::new(0x711e_0002);
    let mut app = app();
    let tilemap = random_map(&mut rng, UVec2::new(45, 38), Vec2::new(1.5, 0.75), true);
    let transform = Transform::from_xyz(-20.0, 7.0, 0.0);
    let map = spawn_at(&mut app, transform, tilemap.clone());
    app.update();
    let regions: HashMap<Entity, TileRegion> = regions_of(&mut app, map).into_iter().collect();
    let found = app
        .world_mut()
        .run_system_once(move |query: SpatialQuery| {
            let size = tilemap.size();
            let mut found = Vec::new();
            for y in 0..size.y {
                for x in 0..size.x {
                    let cell = UVec2::new(x, y);
                    let center = transform
                        .transform_point(tilemap.cell_rect(cell).center().extend(0.0))
                        .truncate();
                    let hits = query.point_intersections(center, &SpatialQueryFilter::default());
                    found.push((cell, tilemap.get(cell), hits));
                }
            }
            found
        })
        .unwrap();
    for (cell, kind, hits) in found {
        match kind {
            0 => assert_eq!(hits, [], "empty cell {cell}"),
            _ => {
                assert_eq!(hits.len(), 1, "cell {cell} lies in one region");
                let region = regions[&hits[0]];
                assert!(region.contains(cell) && region.kind == kind, "cell {cell}");
            }
        }
    }
}

/// Where a ray first meets the box `rect` within `reach`: the slabs, worked out apart from the crate.
fn ray_meets(rect: Rect, origin: Vec2, direction: Vec2, reach: f32) -> Option<f32> {
    let mut enter = 0.0f32;
    let mut exit = reach;
    for axis in 0..2 {
        if direction[axis] == 0.0 {
            if origin[axis] < rect.min[axis] || origin[axis] > rect.max[axis] {
                return None;
            }
            continue;
        }
        let near = (rect.min[axis] - origin[axis]) / direction[axis];
        let far = (rect.max[axis] - origin[axis]) / direction[axis];
        enter = enter.max(near.min(far));
        exit = exit.min(near.max(far));
    }
    (enter <= exit).then_some(enter)
}

#[test]
fn rays_hit_the_nearest_solid_cell() {
    let mut rng = Rng::new(0x711e_0003);
    let mut app = app();
    let tilemap = random_map(&mut rng, UVec2::new(60, 40), Vec2::new(1.0, 1.5), true);
    let offset = Vec2::new(3.0, -4.0);
    let map = spawn_at(
        &mut app,
        Transform::from_translation(offset.extend(0.0)),
        tilemap.clone(),
    );
    app.update();
    let regions: HashMap<Entity, TileRegion> = regions_of(&mut app, map).into_iter().collect();
    let rays: Vec<(Vec2, Dir2)> = (0..500)
        .map(|case| {
            let origin = offset + Vec2::new(rng.range(-10.0, 70.0), rng.range(-10.0, 70.0));
            let angle = match case % 4 {
                0 => rng.below(8) as f32 * core::f32::consts::FRAC_PI_4,
                _ => rng.range(0.0, core::f32::consts::TAU),
            };
            (origin, Dir2::new(Vec2::from_angle(angle)).unwrap())
        })
        .collect();
    let casts = rays.clone();
    let hits = app
        .world_mut()
        .run_system_once(move |query: SpatialQuery| {
            (casts.iter())
                .map(|&(origin, direction)| {
                    let ray = Ray2d::new(origin, direction);
                    query.cast_ray(ray, 40.0, &SpatialQueryFilter::default())
                })
                .collect::<Vec<_>>()
        })
        .unwrap();
    let size = tilemap.size();
    for ((origin, direction), hit) in rays.into_iter().zip(hits) {
        let mut nearest: Option<(f32, UVec2)> = None;
        for y in 0..size.y {
            for x in 0..size.x {
                let cell = UVec2::new(x, y);
                if tilemap.get(cell) == 0 {
                    continue;
                }
                let rect = tilemap.cell_rect(cell);
                let rect = Rect::from_corners(rect.min + offset, rect.max + offset);
                if let Some(distance) = ray_meets(rect, origin, *direction, 40.0)
                    && nearest.is_none_or(|(best, _)| distance < best)
                {
                    nearest = Some((distance, cell));
                }
            }
        }
        match (hit, nearest) {
            (None, None) => {}
            (Some((entity, hit)), Some((distance, _))) => {
                assert!(
                    (hit.distance - distance).abs() <= 1e-3,
                    "ray from {origin} along {direction:?}: {} against {distance}",
                    hit.distance
                );
                let region = regions[&entity];
                let point = origin + *direction * hit.distance - offset;
                let near_cell = region.cells().any(|cell| {
                    let rect = tilemap.cell_rect(cell).inflate(1e-3);
                    rect.contains(point)
                });
                assert!(
                    near_cell,
                    "the hit point {point} lies on a cell of {region:?}"
                );
            }
            (hit, nearest) => {
                panic!("ray from {origin} along {direction:?}: {hit:?} against {nearest:?}")
            }
        }
    }
}

/// Random edits over many frames, some under moving colliders: the cover stays exact, regions far
/// from every edit keep their entities, and every pair's starts and ends alternate.
#[test]
fn edits_keep_the_cover_and_far_regions_keep_their_entities() {
    let mut rng = Rng::new(0x711e_0004);
    let mut app = app();
    let size = UVec2::new(100, 70);
    let tilemap = random_map(&mut rng, size, Vec2::ONE, true);
    let map = spawn_at(&mut app, Transform::default(), tilemap);
    let movers: Vec<(Entity, Vec2)> = (0..30)
        .map(|i| {
            let at = Vec2::new(rng.range(0.0, 40.0), rng.range(0.0, 40.0));
            let velocity = Vec2::new(rng.range(-0.4, 0.4), rng.range(-0.4, 0.4));
            let collider = match i % 3 {
                0 => Collider::rect(1.5, 0.8),
                1 => Collider::rotated_rect(1.5, 0.8),
                _ => Collider::circle(0.6),
            };
            (
                spawn_at(
                    &mut app,
                    Transform::from_translation(at.extend(0.0)),
                    collider,
                ),
                velocity,
            )
        })
        .collect();
    app.update();
    for frame in 0..200 {
        let before = regions_of(&mut app, map);
        let mut edited = Vec::new();
        {
            let mut tilemap = app.world_mut().get_mut::<TilemapCollider>(map).unwrap();
            for _ in 0..rng.below(4) {
                // Mostly where the movers are, so that tiles change under them.
                let reach = if rng.below(3) == 0 {
                    size
                } else {
                    UVec2::splat(40)
                };
                let cell = UVec2::new(
                    rng.below(reach.x as usize) as u32,
                    rng.below(reach.y as usize) as u32,
                );
                tilemap.set(cell, rng.below(4) as u8);
                edited.push(cell);
            }
        }
        for &(mover, velocity) in &movers {
            let mut transform = app.world_mut().get_mut::<Transform>(mover).unwrap();
            transform.translation += velocity.extend(0.0);
            transform.translation = transform.translation.rem_euclid(Vec3::new(40.0, 40.0, 1.0));
        }
        app.update();
        let context = format!("frame {frame}");
        assert_exact_cover(&mut app, map, &context);
        assert_matches_brute_force(&mut app, &context);
        let after: HashMap<Entity, TileRegion> = regions_of(&mut app, map).into_iter().collect();
        for (entity, region) in before {
            let far = edited.iter().all(|&cell| {
                let below = region.min.saturating_sub(cell).max_element();
                let above = cell.saturating_sub(region.max - 1).max_element();
                below.max(above) >= CHUNK
            });
            if far {
                assert_eq!(
                    after.get(&entity),
                    Some(&region),
                    "{context}: region {region:?}, far from the edits {edited:?}, keeps its entity"
                );
            }
        }
    }
    assert_events_alternate(&app, "edits under movers");
}

#[test]
fn despawning_the_map_despawns_its_regions_and_ends_their_pairs() {
    let mut app = app();
    let mut tilemap = TilemapCollider::new(UVec2::new(40, 2), Vec2::ONE);
    tilemap.fill(UVec2::ZERO, UVec2::new(40, 1), 1);
    let map = spawn_at(&mut app, Transform::default(), tilemap);
    let crate_ = spawn_at(
        &mut app,
        Transform::from_xyz(32.0, 1.2, 0.0),
        Collider::rect(2.0, 0.5),
    );
    app.update();
    assert_eq!(
        common::touching(&mut app, crate_).len(),
        2,
        "it stands across a chunk border"
    );
    app.world_mut().entity_mut(map).despawn();
    app.update();
    assert!(common::touching(&mut app, crate_).is_empty());
    assert_eq!(common::log(&app).counts_for(crate_), (2, 2));
    assert_eq!(
        app.world_mut()
            .query::<&TileRegion>()
            .iter(app.world())
            .count(),
        0
    );
    assert_events_alternate(&app, "the map despawned");
}

#[test]
fn bad_maps_have_no_regions_and_the_good_one_still_collides() {
    let mut app = app();
    let bad = [
        TilemapCollider::new(UVec2::ZERO, Vec2::ONE),
        TilemapCollider::new(UVec2::new(0, 5), Vec2::ONE),
        TilemapCollider::new(UVec2::new(5, 5), Vec2::new(0.0, 1.0)),
        TilemapCollider::new(UVec2::new(5, 5), Vec2::new(1.0, -1.0)),
        TilemapCollider::new(UVec2::new(5, 5), Vec2::new(f32::NAN, 1.0)),
        TilemapCollider::new(UVec2::new(5, 5), Vec2::new(1.0, f32::INFINITY)),
    ];
    let bad: Vec<Entity> = (bad.into_iter())
        .map(|mut tilemap| {
            assert!(!tilemap.is_valid());
            tilemap.fill(UVec2::ZERO, UVec2::splat(5), 1);
            spawn_at(&mut app, Transform::default(), tilemap)
        })
        .collect();
    let mut good = TilemapCollider::new(UVec2::new(5, 5), Vec2::ONE);
    good.fill(UVec2::ZERO, UVec2::splat(5), 1);
    let good = spawn_at(&mut app, Transform::from_xyz(100.0, 0.0, 0.0), good);
    let ball = spawn_at(
        &mut app,
        Transform::from_xyz(102.0, 5.5, 0.0),
        Collider::circle(0.5),
    );
    for _ in 0..3 {
        app.update();
    }
    for map in bad {
        assert_eq!(regions_of(&mut app, map), [], "a bad map has no regions");
    }
    assert_eq!(regions_of(&mut app, good).len(), 1);
    assert_eq!(
        common::touching(&mut app, ball).len(),
        1,
        "the ball rests on the good map"
    );
}

/// A map given a new `TilemapCollider` of another size starts over: its old regions go.
#[test]
fn a_new_map_on_the_same_entity_replaces_the_regions() {
    let mut app = app();
    let mut first = TilemapCollider::new(UVec2::new(50, 50), Vec2::ONE);
    first.fill(UVec2::ZERO, UVec2::new(50, 50), 1);
    let map = spawn_at(&mut app, Transform::default(), first);
    app.update();
    assert_eq!(regions_of(&mut app, map).len(), 4);
    let mut second = TilemapCollider::new(UVec2::new(10, 3), Vec2::ONE);
    second.fill(UVec2::ZERO, UVec2::new(10, 1), 2);
    app.world_mut().entity_mut(map).insert(second);
    app.update();
    assert_exact_cover(&mut app, map, "the new map");
    assert_eq!(regions_of(&mut app, map).len(), 1);
}

#[derive(Component)]
struct Walker;

/// Moves the walker right and down by a fixed step with `move_and_slide`, recording where it ends.
fn walk(
    query: SpatialQuery,
    mut heights: ResMut<Heights>,
    walker: Single<(Entity, &mut Transform), With<Walker>>,
) {
    let (entity, mut transform) = walker.into_inner();
    if let Some(moved) = query.move_and_slide(entity, Vec2::new(0.1, -0.05), &default()) {
        transform.translation += moved.motion.extend(0.0);
        heights
            .0
            .push((transform.translation.truncate(), moved.grounded()));
    }
}

#[derive(Resource, Default)]
struct Heights(Vec<(Vec2, bool)>);

/// A floor of many regions, of two kinds every three cells and cut at chunk borders: a character
/// walks across it at one height, grounded all the way.
#[test]
fn a_character_crosses_region_and_chunk_borders_at_one_height() {
    let mut app = app();
    app.init_resource::<Heights>().add_systems(Update, walk);
    let mut tilemap = TilemapCollider::new(UVec2::new(100, 3), Vec2::ONE);
    for x in 0..100 {
        tilemap.fill(
            UVec2::new(x, 0),
            UVec2::new(x + 1, 2),
            1 + (x / 3 % 2) as u8,
        );
    }
    let map = spawn_at(&mut app, Transform::from_xyz(-10.0, -3.0, 0.0), tilemap);
    spawn_at(
        &mut app,
        Transform::from_xyz(-8.0, -0.2, 0.0),
        (Walker, Collider::rect(0.8, 1.6)),
    );
    for _ in 0..900 {
        app.update();
    }
    assert!(
        regions_of(&mut app, map).len() >= 34,
        "many regions under the walk"
    );
    let heights = &app.world().resource::<Heights>().0;
    let landed = heights.iter().position(|&(_, grounded)| grounded).unwrap();
    let (start, _) = heights[landed];
    let (end, _) = *heights.last().unwrap();
    assert!(end.x > 85.0 - 10.0, "it walked across the floor, to {end}");
    for &(at, grounded) in &heights[landed..] {
        assert!(grounded, "grounded at {at}");
        assert!(
            (at.y - start.y).abs() <= 1e-4,
            "at {at}, it stood at {}",
            start.y
        );
    }
}

/// Regions of one map touch along their borders but never pair; regions of two maps that touch do.
#[test]
fn regions_of_one_map_never_pair_with_one_another() {
    let mut app = app();
    let mut block = TilemapCollider::new(UVec2::new(70, 40), Vec2::ONE);
    block.fill(UVec2::ZERO, UVec2::new(70, 40), 1);
    block.fill(UVec2::new(10, 0), UVec2::new(11, 40), 2);
    let map = spawn_at(&mut app, Transform::default(), block.clone());
    let beside = spawn_at(&mut app, Transform::from_xyz(70.0, 0.0, 0.0), block);
    app.update();
    let (regions, others) = (regions_of(&mut app, map), regions_of(&mut app, beside));
    assert!(regions.len() > 4, "regions across kinds and chunk borders");
    for &(entity, _) in &regions {
        let touched = common::touching(&mut app, entity);
        assert!(
            touched
                .iter()
                .all(|other| others.iter().any(|&(region, _)| region == *other)),
            "a region touches only the other map's regions"
        );
    }
    assert!(
        regions
            .iter()
            .any(|&(entity, _)| !common::touching(&mut app, entity).is_empty()),
        "the two maps touch along their shared edge"
    );
    assert_matches_brute_force(&mut app, "two maps side by side");
}

/// A map moved and scaled takes its regions along in the same update.
#[test]
fn regions_follow_the_map_as_it_moves() {
    let mut rng = Rng::new(0x711e_0005);
    let mut app = app();
    let mut tilemap = random_map(&mut rng, UVec2::new(40, 35), Vec2::new(1.0, 2.0), true);
    tilemap.fill(UVec2::new(0, 2), UVec2::new(40, 3), 1);
    let map = spawn_at(&mut app, Transform::default(), tilemap);
    let ball = spawn_at(
        &mut app,
        Transform::from_xyz(-30.0, 5.0, 0.0),
        Collider::circle(1.0),
    );
    app.update();
    for step in 0..40 {
        let mut transform = app.world_mut().get_mut::<Transform>(map).unwrap();
        transform.translation.x -= 1.0;
        transform.scale = Vec3::new(1.0 + 0.01 * step as f32, 1.0, 1.0);
        app.update();
        let context = format!("step {step}");
        assert_exact_cover(&mut app, map, &context);
        assert_matches_brute_force(&mut app, &context);
    }
    assert!(
        common::log(&app).counts_for(ball).0 > 0,
        "the map reached the ball as it moved"
    );
    assert_events_alternate(&app, "a moving map");
}
