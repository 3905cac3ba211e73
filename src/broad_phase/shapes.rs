//! The proxies' shapes, packed: a polygon's vertices are kept apart from the rest, so that the shapes
//! the narrow phase reads for most pairs, rectangles and circles, take no more room than a rotated
//! rectangle (`collision_bench`, W1).

use bevy::math::Vec2;

use crate::geometry::*;

/// A [`WorldShape`] with a polygon's vertices in a slot of [`ShapeStore::polygons`].
#[derive(Clone, Copy, Debug)]
enum Packed {
    Rect(WorldRect),
    RotatedRect(WorldRotatedRect),
    Circle(WorldCircle),
    Capsule(WorldCapsule),
    Polygon(u32),
}

/// Each proxy's shape, by proxy.
#[derive(Clone, Debug, Default)]
pub(crate) struct ShapeStore {
    packed: Vec<Packed>,
    polygons: Vec<ConvexPolygon>,
    /// Slots of `polygons` that no proxy's shape holds.
    free_polygons: Vec<u32>,
}

impl ShapeStore {
    /// Packs `shape`, its vertices in the slot `reuse` if it is a polygon and one is given.
    #[inline]
    fn pack(&mut self, shape: &WorldShape, reuse: Option<u32>) -> Packed {
        match shape {
            WorldShape::Rect(rect) => Packed::Rect(*rect),
            WorldShape::RotatedRect(rect) => Packed::RotatedRect(*rect),
            WorldShape::Circle(circle) => Packed::Circle(*circle),
            WorldShape::Capsule(capsule) => Packed::Capsule(*capsule),
            WorldShape::Polygon(polygon) => {
                let slot = reuse.or_else(|| self.free_polygons.pop());
                let slot = slot.unwrap_or_else(|| {
                    self.polygons.push(ConvexPolygon::EMPTY);
                    (self.polygons.len() - 1) as u32
                });
                self.polygons[slot as usize] = *polygon;
                Packed::Polygon(slot)
            }
        }
    }

    /// Gives the proxy `id` its shape; `id` is at most the number of proxies stored.
    #[inline]
    pub(crate) fn set(&mut self, id: u32, shape: &WorldShape) {
        let old = match self.packed.get(id as usize) {
            Some(Packed::Polygon(slot)) => Some(*slot),
            _ => None,
        };
        let packed = self.pack(shape, old);
        if let Some(slot) = old
            && !matches!(packed, Packed::Polygon(_))
        {
            self.free_polygons.push(slot);
        }
        match self.packed.get_mut(id as usize) {
            Some(place) => *place = packed,
            None => self.packed.push(packed),
        }
    }

    /// The shape of the proxy `id`.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> WorldShape {
        match self.packed[id as usize] {
            Packed::Rect(rect) => WorldShape::Rect(rect),
            Packed::RotatedRect(rect) => WorldShape::RotatedRect(rect),
            Packed::Circle(circle) => WorldShape::Circle(circle),
            Packed::Capsule(capsule) => WorldShape::Capsule(capsule),
            Packed::Polygon(slot) => WorldShape::Polygon(self.polygons[slot as usize]),
        }
    }

    /// The contact of the proxies `a` and `b`, as [`WorldShape::contact`] gives it. The pairs of
    /// rectangles and circles go to their tests from the packed shapes, which costs less than a
    /// `WorldShape` made for each (`collision_bench`, W1).
    #[inline]
    pub(crate) fn contact(&self, a: u32, b: u32, mode: OverlapMode) -> Option<Contact> {
        use Packed::*;
        match (&self.packed[a as usize], &self.packed[b as usize]) {
            (Rect(a), Rect(b)) => contact_rect_rect(a, b, mode),
            (Rect(a), RotatedRect(b)) => contact_rect_rotated_rect(a, b, mode),
            (Rect(a), Circle(b)) => contact_rect_circle(a, b, mode),
            (RotatedRect(a), Rect(b)) => contact_rotated_rect_rect(a, b, mode),
            (RotatedRect(a), RotatedRect(b)) => contact_rotated_rect_rotated_rect(a, b, mode),
            (RotatedRect(a), Circle(b)) => contact_rotated_rect_circle(a, b, mode),
            (Circle(a), Rect(b)) => contact_circle_rect(a, b, mode),
            (Circle(a), RotatedRect(b)) => contact_circle_rotated_rect(a, b, mode),
            (Circle(a), Circle(b)) => contact_circle_circle(a, b, mode),
            _ => self.get(a).contact(&self.get(b), mode),
        }
    }

    /// The centre of the proxy `id`'s shape.
    #[inline]
    pub(crate) fn center(&self, id: u32) -> Vec2 {
        match &self.packed[id as usize] {
            Packed::Rect(rect) => rect.center,
            Packed::RotatedRect(rect) => rect.center,
            Packed::Circle(circle) => circle.center,
            Packed::Capsule(capsule) => capsule.center,
            Packed::Polygon(slot) => self.polygons[*slot as usize].center(),
        }
    }
}

#[cfg(test)]
mod tests {
    use bevy::math::Rot2;

    use super::*;

    /// Shapes of every kind set over one another at random: each proxy gives back the shape it was
    /// last given, and the polygons' slots are reused, never more than the polygons held at once.
    #[test]
    fn each_proxy_gives_back_its_last_shape() {
        let mut store = ShapeStore::default();
        let mut expected: Vec<WorldShape> = Vec::new();
        let mut next = crate::test_rng::xorshift(0x5a7e_5701);
        let triangle = ConvexPolygon::hull(&[Vec2::ZERO, Vec2::X, Vec2::Y]).unwrap();
        for step in 0..5_000u32 {
            let at = Vec2::new(step as f32, 0.0);
            let shape = match next() % 5 {
                0 => WorldRect::new(at, Vec2::ONE).into(),
                1 => WorldRotatedRect::new(at, Vec2::ONE, Rot2::radians(0.3)).into(),
                2 => WorldCircle::new(at, 1.0).into(),
                3 => WorldCapsule::new(at, 1.0, 0.5, Rot2::IDENTITY).into(),
                _ => triangle.translated(at).into(),
            };
            let id = (next() % 40) as usize;
            let id = id.min(expected.len());
            store.set(id as u32, &shape);
            match expected.get_mut(id) {
                Some(old) => *old = shape,
                None => expected.push(shape),
            }
            for (id, shape) in expected.iter().enumerate() {
                assert_eq!(store.get(id as u32), *shape, "step {step}");
                assert_eq!(store.center(id as u32), shape.center());
            }
            let polygons = expected
                .iter()
                .filter(|shape| matches!(shape, WorldShape::Polygon(_)))
                .count();
            assert_eq!(store.polygons.len() - store.free_polygons.len(), polygons);
        }
    }
}
