//! Tile maps: [`TilemapCollider`] merges a grid of tiles into few rectangle colliders, and merges
//! again only the part of the map an edit touched.
//!
//! The map is cut into chunks of [`TilemapCollider::CHUNK`] × [`TilemapCollider::CHUNK`] cells.
//! In each chunk, the solid cells of one kind are merged greedily into rectangles: runs along each
//! row, and a run stacked on an equal run of the row below grows that rectangle upward. Each
//! rectangle is a *region*: an entity of the map's ([`TileRegionOf`]) with a [`Collider::rect`], its
//! kind's [`CollisionLayers`] and a [`TileRegion`] that names its cells. A map's regions never pair
//! with one another. An edit marks its chunk stale; the next update merges the stale chunks again,
//! keeps the regions that came out the same, and despawns and spawns the others, so that pairs with a
//! region that went end and pairs with a new one start, as for any collider.

use bevy::prelude::*;

use crate::collider::{Collider, OneWayPlatform};
use crate::layers::CollisionLayers;

/// A grid of tiles as colliders: put it on the tile map's entity, whose `Transform` places the map.
///
/// Cell `(x, y)` covers `[x·w, (x+1)·w] × [y·h, (y+1)·h]` in the entity's local space, y up, for a
/// tile size of `w × h`. Kind 0 is empty; every other kind is solid, and kinds never merge with each
/// other, so that one-way tiles, hazards and walls stay apart. Each kind has its own
/// [`CollisionLayers`], and may be made a [`OneWayPlatform`].
///
/// The map's translation and scale place its regions. Its rotation moves them but does not turn them:
/// a region is a [`Collider::rect`], aligned with the world's axes, so a tile map is meant to stay
/// unturned.
///
/// An edit takes effect at the next update: maps are merged in `PreUpdate`.
///
/// A map of zero size, or of more cells than the machine can address, or with a tile size that is
/// not finite and positive, is skipped with one warning and has no regions.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// const WALL: u8 = 1;
/// const ONE_WAY: u8 = 2;
/// let mut map = TilemapCollider::new(UVec2::new(200, 40), Vec2::splat(16.0)).with_one_way(ONE_WAY);
/// map.fill(UVec2::ZERO, UVec2::new(200, 2), WALL);
/// map.set(UVec2::new(10, 6), ONE_WAY);
/// assert_eq!(map.get(UVec2::new(10, 6)), ONE_WAY);
/// assert_eq!(map.get(UVec2::new(500, 6)), 0, "outside the map is empty");
/// assert_eq!(map.cell_at(Vec2::new(40.0, 8.0)), Some(UVec2::new(2, 0)));
/// ```
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform)]
pub struct TilemapCollider {
    size: UVec2,
    tile_size: Vec2,
    /// The kind of each cell, row by row from the bottom.
    cells: Vec<u8>,
    /// Each kind's settings, by kind; kinds past the end have the defaults.
    kinds: Vec<TileKind>,
    /// Which chunks were edited since their regions were last made, by chunk, row by row.
    stale: Vec<bool>,
    /// Whether a kind's settings changed since the regions were last made: every chunk is made again.
    restyled: bool,
}

/// What a kind of tile's regions get besides their collider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Reflect)]
struct TileKind {
    layers: CollisionLayers,
    one_way: bool,
}

impl TilemapCollider {
    /// The side of a chunk, in cells: the map is merged a chunk at a time, and an edit merges its
    /// chunk again. Larger chunks merge into fewer regions; smaller ones make an edit cheaper.
    pub const CHUNK: u32 = 32;

    /// A map of `size` cells of `tile_size` each, every cell empty.
    pub fn new(size: UVec2, tile_size: Vec2) -> Self {
        let cells = (size.x as usize).checked_mul(size.y as usize);
        let size = if cells.is_some() { size } else { UVec2::ZERO };
        let chunks = chunks_of(size);
        Self {
            size,
            tile_size,
            cells: vec![0; cells.unwrap_or(0)],
            kinds: Vec::new(),
            stale: vec![true; chunks.x as usize * chunks.y as usize],
            restyled: false,
        }
    }

    /// The map's size, in cells.
    pub fn size(&self) -> UVec2 {
        self.size
    }

    /// The size of one tile, in the map entity's local space.
    pub fn tile_size(&self) -> Vec2 {
        self.tile_size
    }

    /// Whether the map has cells and a tile size that is finite and positive: an invalid map has no
    /// regions.
    pub fn is_valid(&self) -> bool {
        self.size.cmpgt(UVec2::ZERO).all()
            && self.tile_size.is_finite()
            && self.tile_size.cmpgt(Vec2::ZERO).all()
    }

    fn index(&self, cell: UVec2) -> Option<usize> {
        (cell.cmplt(self.size).all())
            .then(|| cell.y as usize * self.size.x as usize + cell.x as usize)
    }

    /// The kind of `cell`: 0 for an empty cell and for a cell outside the map.
    pub fn get(&self, cell: UVec2) -> u8 {
        self.index(cell).map_or(0, |at| self.cells[at])
    }

    /// Makes `cell` of `kind` (0 empties it). A cell outside the map is left alone.
    pub fn set(&mut self, cell: UVec2, kind: u8) {
        let Some(at) = self.index(cell) else {
            return;
        };
        if self.cells[at] != kind {
            self.cells[at] = kind;
            let (chunk, across) = (cell / Self::CHUNK, self.chunks().x);
            self.stale[(chunk.y * across + chunk.x) as usize] = true;
        }
    }

    /// Makes every cell from `min` up to but not including `max` of `kind`; the part outside the map is
    /// left alone.
    pub fn fill(&mut self, min: UVec2, max: UVec2, kind: u8) {
        let max = max.min(self.size);
        for y in min.y..max.y {
            for x in min.x..max.x {
                self.set(UVec2::new(x, y), kind);
            }
        }
    }

    /// The cell holding `local`, a point in the map entity's local space, or `None` outside the map.
    /// A point on the edge between two cells is in the upper one.
    pub fn cell_at(&self, local: Vec2) -> Option<UVec2> {
        let cell = (local / self.tile_size).floor();
        let inside = cell.cmpge(Vec2::ZERO).all() && cell.cmplt(self.size.as_vec2()).all();
        inside.then(|| cell.as_uvec2())
    }

    /// The box `cell` covers in the map entity's local space.
    pub fn cell_rect(&self, cell: UVec2) -> Rect {
        self.region_rect(cell, cell + 1)
    }

    fn region_rect(&self, min: UVec2, max: UVec2) -> Rect {
        Rect::from_corners(
            min.as_vec2() * self.tile_size,
            max.as_vec2() * self.tile_size,
        )
    }

    /// The layers of `kind`'s regions; [`CollisionLayers::default`] until set.
    pub fn layers(&self, kind: u8) -> CollisionLayers {
        self.kind(kind).layers
    }

    /// Gives `kind`'s regions `layers`.
    pub fn set_layers(&mut self, kind: u8, layers: CollisionLayers) {
        self.kind_mut(kind).layers = layers;
    }

    /// [`Self::set_layers`], by value.
    pub fn with_layers(mut self, kind: u8, layers: CollisionLayers) -> Self {
        self.set_layers(kind, layers);
        self
    }

    /// Whether `kind`'s regions are [`OneWayPlatform`]s.
    pub fn is_one_way(&self, kind: u8) -> bool {
        self.kind(kind).one_way
    }

    /// Makes `kind`'s regions [`OneWayPlatform`]s, or not.
    pub fn set_one_way(&mut self, kind: u8, one_way: bool) {
        self.kind_mut(kind).one_way = one_way;
    }

    /// Makes `kind`'s regions [`OneWayPlatform`]s, by value.
    pub fn with_one_way(mut self, kind: u8) -> Self {
        self.set_one_way(kind, true);
        self
    }

    fn kind(&self, kind: u8) -> TileKind {
        self.kinds
            .get(usize::from(kind))
            .copied()
            .unwrap_or_default()
    }

    fn kind_mut(&mut self, kind: u8) -> &mut TileKind {
        let at = usize::from(kind);
        if self.kinds.len() <= at {
            self.kinds.resize(at + 1, TileKind::default());
        }
        self.restyled = true;
        &mut self.kinds[at]
    }

    /// How many chunks the map has along each axis.
    fn chunks(&self) -> UVec2 {
        chunks_of(self.size)
    }

    /// Merges the solid cells of the chunk `chunk` into rectangles of one kind each, pushed to `out`.
    fn merge_chunk(&self, chunk: UVec2, out: &mut Vec<TileRegion>) {
        let min = chunk * Self::CHUNK;
        let max = (min + Self::CHUNK).min(self.size);
        // The rectangles that reached the row below, each waiting for an equal run to grow upward.
        let mut open: Vec<TileRegion> = Vec::new();
        let mut grown: Vec<TileRegion> = Vec::new();
        for y in min.y..max.y {
            let row = &self.cells[y as usize * self.size.x as usize..][..self.size.x as usize];
            let mut x = min.x;
            while x < max.x {
                let kind = row[x as usize];
                let start = x;
                while x < max.x && row[x as usize] == kind {
                    x += 1;
                }
                if kind == 0 {
                    continue;
                }
                let below = (open.iter())
                    .position(|open| open.kind == kind && open.min.x == start && open.max.x == x);
                grown.push(match below {
                    Some(at) => {
                        let mut region = open.swap_remove(at);
                        region.max.y = y + 1;
                        region
                    }
                    None => TileRegion {
                        kind,
                        min: UVec2::new(start, y),
                        max: UVec2::new(x, y + 1),
                    },
                });
            }
            out.append(&mut open);
            core::mem::swap(&mut open, &mut grown);
        }
        out.append(&mut open);
    }
}

/// How many chunks a map of `size` cells has along each axis.
fn chunks_of(size: UVec2) -> UVec2 {
    UVec2::new(
        size.x.div_ceil(TilemapCollider::CHUNK),
        size.y.div_ceil(TilemapCollider::CHUNK),
    )
}

/// A rectangle of a [`TilemapCollider`]'s cells of one kind, merged into one collider: on each of the
/// map's region entities, so that an event, a query hit or a move-and-slide hit names the cells it
/// came from, and their kind.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// const SPIKES: u8 = 3;
///
/// fn hurt_on_spikes(
///     mut started: MessageReader<CollisionStarted>,
///     regions: Query<&TileRegion>,
/// ) {
///     for event in started.read() {
///         for entity in [event.collider1, event.collider2] {
///             if let Ok(region) = regions.get(entity)
///                 && region.kind == SPIKES
///             {
///                 info!("spikes at cells {} to {}", region.min, region.max);
///             }
///         }
///     }
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Debug, PartialEq)]
pub struct TileRegion {
    /// The kind of every cell of the region.
    pub kind: u8,
    /// The lowest cell of the region, on both axes.
    pub min: UVec2,
    /// One past the highest cell of the region: its cells are `min.x..max.x` × `min.y..max.y`.
    pub max: UVec2,
}

impl TileRegion {
    /// Whether `cell` is one of the region's cells.
    pub fn contains(&self, cell: UVec2) -> bool {
        cell.cmpge(self.min).all() && cell.cmplt(self.max).all()
    }

    /// The region's cells, row by row from the bottom.
    pub fn cells(&self) -> impl Iterator<Item = UVec2> + '_ {
        (self.min.y..self.max.y)
            .flat_map(move |y| (self.min.x..self.max.x).map(move |x| UVec2::new(x, y)))
    }
}

/// The tile map a region belongs to: a relationship, whose target on the map is [`TileRegions`].
///
/// A region is not a child of its map, so that an edit, which spawns a few regions, does not have
/// Bevy propagate the transforms of every region of the map: the map places its regions itself, as
/// it moves.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[relationship(relationship_target = TileRegions)]
pub struct TileRegionOf(#[entities] pub Entity);

/// The regions of a tile map, on its entity: despawning the map despawns them, and their pairs end.
#[derive(Component, Debug, Default, PartialEq, Eq)]
#[relationship_target(relationship = TileRegionOf, linked_spawn)]
pub struct TileRegions(Vec<Entity>);

impl TileRegions {
    /// The entities of the map's regions.
    pub fn entities(&self) -> &[Entity] {
        &self.0
    }
}

/// The regions a map spawned, by chunk, with the map's size when they were made.
#[derive(Component, Debug, Default)]
pub(crate) struct TilemapChunks {
    size: UVec2,
    chunks: Vec<Vec<(Entity, TileRegion)>>,
    /// Whether the map was found invalid, and warned of.
    warned: bool,
}

impl TilemapChunks {
    /// Every region of the map, with its entity.
    fn regions(&self) -> impl Iterator<Item = &(Entity, TileRegion)> + '_ {
        self.chunks.iter().flatten()
    }
}

/// The tile maps whose cells or kinds changed, with their chunks' regions where they have been
/// merged before.
type EditedTilemaps<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Mut<'static, TilemapCollider>,
        Option<&'static mut TilemapChunks>,
        &'static GlobalTransform,
    ),
    Changed<TilemapCollider>,
>;

/// Merges again the stale chunks of every edited map, despawning the regions that changed and
/// spawning their replacements.
///
/// It runs in `PreUpdate`, whose commands Bevy applies at the schedule's end: the regions of an edit
/// made in an update collide from the next, and no update pays for a point where commands are applied
/// before the collision stages.
pub(crate) fn merge_tilemaps(
    mut commands: Commands,
    mut maps: EditedTilemaps,
    mut merged: Local<Vec<TileRegion>>,
) {
    for (entity, mut map, chunks, global) in &mut maps {
        let mut fresh = TilemapChunks::default();
        let (chunks, first) = match chunks {
            Some(chunks) => (chunks.into_inner(), false),
            None => (&mut fresh, true),
        };
        // A map given a new `TilemapCollider` of another size starts over.
        if chunks.size != map.size || !map.is_valid() {
            for &(region, _) in chunks.regions() {
                commands.entity(region).try_despawn();
            }
            chunks.chunks.clear();
        }
        chunks.size = map.size;
        if !map.is_valid() {
            if !chunks.warned {
                warn!(
                    "tile map {entity} has {} cells of {} each: it needs cells of a finite, positive size; it has no colliders",
                    map.size, map.tile_size
                );
                chunks.warned = true;
            }
        } else {
            chunks.warned = false;
            let across = map.chunks();
            chunks
                .chunks
                .resize_with(across.x as usize * across.y as usize, Vec::new);
            let map = map.bypass_change_detection();
            let restyled = core::mem::take(&mut map.restyled);
            for (index, old) in chunks.chunks.iter_mut().enumerate() {
                if !(core::mem::take(&mut map.stale[index]) || restyled) {
                    continue;
                }
                let chunk = UVec2::new(index as u32 % across.x, index as u32 / across.x);
                merged.clear();
                map.merge_chunk(chunk, &mut merged);
                // A region that came out the same keeps its entity, unless its kind was restyled.
                old.retain(|&(region_entity, region)| {
                    let kept = !restyled && merged.contains(&region);
                    if !kept {
                        commands.entity(region_entity).try_despawn();
                    }
                    kept
                });
                for region in merged.iter().copied() {
                    if !old.iter().any(|&(_, kept)| kept == region) {
                        let spawned = spawn_region(&mut commands, entity, map, global, region);
                        old.push((spawned, region));
                    }
                }
            }
        }
        if first {
            commands.entity(entity).try_insert(fresh);
        }
    }
}

/// Places the regions of every map whose `GlobalTransform` changed since the last update: regions are
/// not children of their map (see [`TileRegionOf`]), so the map moves them itself.
pub(crate) fn place_tilemap_regions(
    maps: Query<(&TilemapCollider, &TilemapChunks, Ref<GlobalTransform>), Without<TileRegion>>,
    mut regions: Query<(&mut Transform, &mut GlobalTransform), With<TileRegion>>,
) {
    for (map, chunks, global) in &maps {
        if !global.is_changed() {
            continue;
        }
        for &(entity, region) in chunks.regions() {
            if let Ok((mut transform, mut region_global)) = regions.get_mut(entity) {
                (*transform, *region_global) = region_pose(map, &global, region);
            }
        }
    }
}

/// Where `region` of `map` lies in the world, with the map at `global`.
fn region_pose(
    map: &TilemapCollider,
    global: &GlobalTransform,
    region: TileRegion,
) -> (Transform, GlobalTransform) {
    let local =
        Transform::from_translation(map.region_rect(region.min, region.max).center().extend(0.0));
    let placed = global.mul_transform(local);
    (placed.compute_transform(), placed)
}

/// Spawns `region` as a collider of the map `map_entity`, placed already, so that it collides in this
/// update.
fn spawn_region(
    commands: &mut Commands,
    map_entity: Entity,
    map: &TilemapCollider,
    global: &GlobalTransform,
    region: TileRegion,
) -> Entity {
    let rect = map.region_rect(region.min, region.max);
    let kind = map.kind(region.kind);
    let mut spawned = commands.spawn((
        TileRegionOf(map_entity),
        region,
        Collider::rect(rect.width(), rect.height()),
        kind.layers,
        region_pose(map, global, region),
    ));
    if kind.one_way {
        spawned.insert(OneWayPlatform);
    }
    spawned.id()
}
