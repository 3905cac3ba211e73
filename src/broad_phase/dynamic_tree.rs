//! A dynamic AABB tree, after Box2D's `dynamic_tree.c`: each proxy is a leaf holding its fat AABB,
//! and every inner node the union of its two children's boxes. Proxies are inserted, moved and removed
//! one at a time, in time logarithmic in their number, and the tree answers box and ray queries by
//! visiting only the branches whose boxes the query reaches.

use bevy::math::Vec2;
use bevy::math::bounding::{Aabb2d, BoundingVolume, IntersectsVolume};

/// The index of no node: the root's parent, a leaf's children, the end of the free list.
const NULL: u32 = u32::MAX;

/// The deepest a query descends. The tree is kept balanced (every inner node's children differ in
/// height by at most one after each insertion and removal), so its height stays below 1.45 log2 of
/// the proxies: 64 levels hold far more proxies than memory does.
const MAX_DEPTH: usize = 64;

/// A node: a leaf (a proxy) or an inner node with two children.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The leaf's fat AABB, or the union of the children's boxes.
    aabb: Aabb2d,
    /// The parent node, or, on the free list, the next free node.
    parent: u32,
    child1: u32,
    /// [`NULL`] for a leaf.
    child2: u32,
    /// 0 for a leaf, one more than the taller child for an inner node; -1 for a free node.
    height: i32,
    /// The leaf's payload, the caller's own index.
    user: u32,
}

impl Node {
    const FREE: Self = Self {
        aabb: Aabb2d {
            min: Vec2::ZERO,
            max: Vec2::ZERO,
        },
        parent: NULL,
        child1: NULL,
        child2: NULL,
        height: -1,
        user: NULL,
    };

    fn is_leaf(&self) -> bool {
        self.child1 == NULL
    }
}

/// The perimeter of `aabb`, the cost the tree's choices weigh: a query's chance to enter a node
/// grows with it (the surface area heuristic, in 2D).
#[inline]
fn perimeter(aabb: &Aabb2d) -> f32 {
    let size = aabb.max - aabb.min;
    2.0 * (size.x + size.y)
}

/// Where the segment from `origin` along a direction whose inverse is `inverse` (infinite along an
/// axis the segment does not move on) enters and leaves `aabb` within `reach`, if it meets it: Ericson,
/// Real-Time Collision Detection, 5.3.3, the slabs. A NaN, where the origin lies on a slab's plane and
/// the segment runs along it, loses to the other operand of `min` and `max`, as a slab the segment
/// stays inside should.
#[inline]
pub(crate) fn segment_in(
    aabb: &Aabb2d,
    origin: Vec2,
    inverse: Vec2,
    reach: f32,
) -> Option<(f32, f32)> {
    let near = (aabb.min - origin) * inverse;
    let far = (aabb.max - origin) * inverse;
    let enter = near.min(far).max_element().max(0.0);
    let exit = near.max(far).min_element().min(reach);
    (enter <= exit).then_some((enter, exit))
}

/// A dynamic AABB tree of proxies, each with a fat AABB and a `u32` payload.
#[derive(Clone, Debug)]
pub(crate) struct DynamicTree {
    nodes: Vec<Node>,
    root: u32,
    /// The first free node; the free nodes are chained through their `parent`.
    free: u32,
    proxies: usize,
}

impl Default for DynamicTree {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            root: NULL,
            free: NULL,
            proxies: 0,
        }
    }
}

impl DynamicTree {
    /// How many proxies the tree holds.
    pub(crate) fn len(&self) -> usize {
        self.proxies
    }

    /// Inserts a proxy with box `aabb` and payload `user`; returns its id, which stays the same until
    /// it is destroyed.
    pub(crate) fn create_proxy(&mut self, aabb: Aabb2d, user: u32) -> u32 {
        let proxy = self.allocate();
        let node = &mut self.nodes[proxy as usize];
        node.aabb = aabb;
        node.user = user;
        node.height = 0;
        self.insert_leaf(proxy);
        self.proxies += 1;
        proxy
    }

    /// Removes `proxy`; its id may be handed out again.
    pub(crate) fn destroy_proxy(&mut self, proxy: u32) {
        debug_assert!(self.is_proxy(proxy), "{proxy} is not a proxy");
        self.remove_leaf(proxy);
        self.release(proxy);
        self.proxies -= 1;
    }

    /// The box of `proxy`.
    pub(crate) fn fat_aabb(&self, proxy: u32) -> Aabb2d {
        self.nodes[proxy as usize].aabb
    }

    /// The payload of `proxy`.
    pub(crate) fn user(&self, proxy: u32) -> u32 {
        self.nodes[proxy as usize].user
    }

    /// Calls `visit` with the id and payload of every proxy whose box overlaps `aabb` (touching
    /// counts), until `visit` returns `false`.
    pub(crate) fn query(&self, aabb: &Aabb2d, mut visit: impl FnMut(u32, u32) -> bool) {
        // An empty tree is the common case of a world without large proxies: no stack to set up.
        if self.root == NULL {
            return;
        }
        let mut stack = Stack::new(self.root);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if !node.aabb.intersects(aabb) {
                continue;
            }
            if node.is_leaf() {
                if !visit(index, node.user) {
                    return;
                }
            } else {
                stack.push(node.child1);
                stack.push(node.child2);
            }
        }
    }

    /// Calls `visit` with the id and payload of every proxy whose box the segment from `origin` along
    /// the unit `direction` reaches within `max_distance`, the nearer branch of each node first.
    /// `visit` returns how far the search must still reach: the distance of a hit it found, to shorten
    /// the segment, or the distance it was given, to keep it. Returning zero ends the search.
    pub(crate) fn ray_cast(
        &self,
        origin: Vec2,
        direction: Vec2,
        max_distance: f32,
        mut visit: impl FnMut(u32, u32, f32) -> f32,
    ) {
        if self.root == NULL {
            return;
        }
        let inverse = direction.recip();
        let mut reach = max_distance;
        let entry = |aabb: &Aabb2d, reach: f32| {
            segment_in(aabb, origin, inverse, reach).map(|(enter, _)| enter)
        };
        let mut stack = Stack::new(NULL);
        if let Some(root) = self.node(self.root)
            && entry(&root.aabb, reach).is_some()
        {
            stack.push(self.root);
        }
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                // The box was reached when pushed; a hit found since may have cut the segment short.
                if entry(&node.aabb, reach).is_some() {
                    reach = visit(index, node.user, reach);
                    if reach <= 0.0 {
                        return;
                    }
                }
                continue;
            }
            let (a, b) = (node.child1, node.child2);
            let enter_a = entry(&self.nodes[a as usize].aabb, reach);
            let enter_b = entry(&self.nodes[b as usize].aabb, reach);
            // The farther child first, so that the nearer is popped first.
            match (enter_a, enter_b) {
                (Some(ta), Some(tb)) if ta <= tb => {
                    stack.push(b);
                    stack.push(a);
                }
                (Some(_), Some(_)) => {
                    stack.push(a);
                    stack.push(b);
                }
                (Some(_), None) => stack.push(a),
                (None, Some(_)) => stack.push(b),
                (None, None) => {}
            }
        }
    }

    /// Checks the tree's invariants, panicking with the first broken one: every node reachable from
    /// the root once, with its parent linked back; a leaf's height 0 and an inner node's one more than
    /// its taller child, the two differing by at most one; an inner node's box the union of its
    /// children's; every other node on the free list; and the count of proxies.
    pub(crate) fn validate(&self) {
        let mut reached = vec![false; self.nodes.len()];
        let mut leaves = 0;
        if self.root != NULL {
            assert_eq!(
                self.nodes[self.root as usize].parent, NULL,
                "the root has no parent"
            );
            let mut stack = vec![self.root];
            while let Some(index) = stack.pop() {
                assert!(!reached[index as usize], "node {index} is reached twice");
                reached[index as usize] = true;
                let node = &self.nodes[index as usize];
                if node.is_leaf() {
                    assert_eq!(node.child2, NULL, "leaf {index} has one child");
                    assert_eq!(node.height, 0, "leaf {index}'s height");
                    leaves += 1;
                    continue;
                }
                let (a, b) = (
                    self.nodes[node.child1 as usize],
                    self.nodes[node.child2 as usize],
                );
                assert!(
                    a.parent == index && b.parent == index,
                    "node {index}'s children link back"
                );
                assert_eq!(
                    node.height,
                    1 + a.height.max(b.height),
                    "node {index}'s height"
                );
                assert!(
                    (a.height - b.height).abs() <= 1,
                    "node {index} is balanced: its children's heights {} and {}",
                    a.height,
                    b.height
                );
                assert_eq!(
                    node.aabb,
                    a.aabb.merge(&b.aabb),
                    "node {index}'s box is its children's union"
                );
                stack.extend([node.child1, node.child2]);
            }
        }
        assert_eq!(leaves, self.proxies, "every proxy is a leaf of the tree");
        let mut free = self.free;
        while free != NULL {
            assert!(!reached[free as usize], "free node {free} is in the tree");
            reached[free as usize] = true;
            assert_eq!(self.nodes[free as usize].height, -1, "free node {free}");
            free = self.nodes[free as usize].parent;
        }
        assert!(
            reached.iter().all(|&r| r),
            "every node is in the tree or on the free list"
        );
    }

    fn node(&self, index: u32) -> Option<&Node> {
        self.nodes.get(index as usize)
    }

    fn is_proxy(&self, index: u32) -> bool {
        self.node(index)
            .is_some_and(|node| node.height == 0 && node.is_leaf())
    }

    /// A node off the free list, or a new one.
    fn allocate(&mut self) -> u32 {
        if self.free == NULL {
            self.nodes.push(Node::FREE);
            return (self.nodes.len() - 1) as u32;
        }
        let index = self.free;
        self.free = self.nodes[index as usize].parent;
        self.nodes[index as usize] = Node::FREE;
        index
    }

    fn release(&mut self, index: u32) {
        self.nodes[index as usize] = Node {
            parent: self.free,
            ..Node::FREE
        };
        self.free = index;
    }

    /// Puts `leaf` beside the node where it adds the least perimeter, then walks up to the root,
    /// rebalancing and refitting.
    fn insert_leaf(&mut self, leaf: u32) {
        if self.root == NULL {
            self.root = leaf;
            self.nodes[leaf as usize].parent = NULL;
            return;
        }
        let leaf_aabb = self.nodes[leaf as usize].aabb;
        let sibling = self.best_sibling(&leaf_aabb);
        let old_parent = self.nodes[sibling as usize].parent;
        let new_parent = self.allocate();
        let sibling_node = self.nodes[sibling as usize];
        self.nodes[new_parent as usize] = Node {
            aabb: leaf_aabb.merge(&sibling_node.aabb),
            parent: old_parent,
            child1: sibling,
            child2: leaf,
            height: sibling_node.height + 1,
            user: NULL,
        };
        self.nodes[sibling as usize].parent = new_parent;
        self.nodes[leaf as usize].parent = new_parent;
        if old_parent == NULL {
            self.root = new_parent;
        } else {
            self.replace_child(old_parent, sibling, new_parent);
        }
        self.refit_from(new_parent);
    }

    /// The node beside which a leaf of box `aabb` adds the least perimeter to the tree. From the root
    /// down, each step weighs making the leaf a sibling of the node here against descending into
    /// either child, which costs at least the growth of every box on the way (Box2D v2's
    /// `InsertLeaf`).
    fn best_sibling(&self, aabb: &Aabb2d) -> u32 {
        let mut index = self.root;
        loop {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                return index;
            }
            let area = perimeter(&node.aabb);
            let combined = perimeter(&node.aabb.merge(aabb));
            // Here: a new parent of this node and the leaf, whose box is the combined one.
            let cost = 2.0 * combined;
            // Below: every box on the way grows by as much as this one does.
            let inherited = 2.0 * (combined - area);
            let descend = |child: u32| {
                let child = &self.nodes[child as usize];
                let merged = perimeter(&child.aabb.merge(aabb));
                let growth = if child.is_leaf() {
                    merged
                } else {
                    merged - perimeter(&child.aabb)
                };
                growth + inherited
            };
            let (cost1, cost2) = (descend(node.child1), descend(node.child2));
            if cost < cost1 && cost < cost2 {
                return index;
            }
            index = if cost1 < cost2 {
                node.child1
            } else {
                node.child2
            };
        }
    }

    /// Takes `leaf` out: its sibling takes its parent's place, and the ancestors are rebalanced and
    /// refitted.
    fn remove_leaf(&mut self, leaf: u32) {
        if leaf == self.root {
            self.root = NULL;
            return;
        }
        let parent = self.nodes[leaf as usize].parent;
        let parent_node = self.nodes[parent as usize];
        let sibling = if parent_node.child1 == leaf {
            parent_node.child2
        } else {
            parent_node.child1
        };
        let grandparent = parent_node.parent;
        self.nodes[sibling as usize].parent = grandparent;
        self.release(parent);
        if grandparent == NULL {
            self.root = sibling;
        } else {
            self.replace_child(grandparent, parent, sibling);
            self.refit_from(grandparent);
        }
    }

    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        let node = &mut self.nodes[parent as usize];
        if node.child1 == old {
            node.child1 = new;
        } else {
            debug_assert_eq!(node.child2, old);
            node.child2 = new;
        }
    }

    /// Rebalances and refits `index` and every ancestor of it.
    fn refit_from(&mut self, mut index: u32) {
        while index != NULL {
            index = self.balance(index);
            let node = self.nodes[index as usize];
            let (a, b) = (
                self.nodes[node.child1 as usize],
                self.nodes[node.child2 as usize],
            );
            let node = &mut self.nodes[index as usize];
            node.height = 1 + a.height.max(b.height);
            node.aabb = a.aabb.merge(&b.aabb);
            index = node.parent;
        }
    }

    /// Where `a`'s children differ in height by more than one, lifts the taller child's taller child
    /// into `a`'s place (an AVL rotation, as Box2D v2's `Balance`); returns the node now at `a`'s place.
    fn balance(&mut self, a: u32) -> u32 {
        let node_a = self.nodes[a as usize];
        if node_a.is_leaf() || node_a.height < 2 {
            return a;
        }
        let (b, c) = (node_a.child1, node_a.child2);
        let balance = self.nodes[c as usize].height - self.nodes[b as usize].height;
        if balance > 1 {
            self.rotate_up(a, c, b)
        } else if balance < -1 {
            self.rotate_up(a, b, c)
        } else {
            a
        }
    }

    /// Lifts `up`, the taller child of `a`, into `a`'s place; `a` keeps `other` and takes the shorter
    /// of `up`'s children. Returns `up`.
    fn rotate_up(&mut self, a: u32, up: u32, other: u32) -> u32 {
        let node_up = self.nodes[up as usize];
        let (f, g) = (node_up.child1, node_up.child2);
        // `up` takes `a`'s place under `a`'s parent.
        let parent = self.nodes[a as usize].parent;
        self.nodes[up as usize].parent = parent;
        if parent == NULL {
            self.root = up;
        } else {
            self.replace_child(parent, a, up);
        }
        // `up` keeps its taller child and takes `a`; `a` takes the shorter one beside `other`.
        let (taller, shorter) = if self.nodes[f as usize].height > self.nodes[g as usize].height {
            (f, g)
        } else {
            (g, f)
        };
        {
            let node = &mut self.nodes[up as usize];
            node.child1 = a;
            node.child2 = taller;
        }
        self.nodes[a as usize].parent = up;
        {
            let node = &mut self.nodes[a as usize];
            if node.child1 == up {
                node.child1 = shorter;
            } else {
                node.child2 = shorter;
            }
        }
        self.nodes[shorter as usize].parent = a;
        let (o, s) = (self.nodes[other as usize], self.nodes[shorter as usize]);
        {
            let node = &mut self.nodes[a as usize];
            node.aabb = o.aabb.merge(&s.aabb);
            node.height = 1 + o.height.max(s.height);
        }
        let (na, t) = (self.nodes[a as usize], self.nodes[taller as usize]);
        let node = &mut self.nodes[up as usize];
        node.aabb = na.aabb.merge(&t.aabb);
        node.height = 1 + na.height.max(t.height);
        up
    }
}

/// The nodes a query has still to visit: a stack on the stack, so that queries allocate nothing.
struct Stack {
    items: [u32; MAX_DEPTH * 2],
    len: usize,
}

impl Stack {
    fn new(root: u32) -> Self {
        let mut stack = Self {
            items: [NULL; MAX_DEPTH * 2],
            len: 0,
        };
        if root != NULL {
            stack.push(root);
        }
        stack
    }

    #[inline]
    fn push(&mut self, index: u32) {
        self.items[self.len] = index;
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<u32> {
        self.len = self.len.checked_sub(1)?;
        Some(self.items[self.len])
    }
}

#[cfg(test)]
impl DynamicTree {
    /// The height of the tree: 0 for a single leaf, -1 when empty.
    fn height(&self) -> i32 {
        self.node(self.root).map_or(-1, |node| node.height)
    }

    /// Gives `proxy` the box `aabb`, moving it in the tree.
    fn move_proxy(&mut self, proxy: u32, aabb: Aabb2d) {
        self.remove_leaf(proxy);
        self.nodes[proxy as usize].aabb = aabb;
        self.insert_leaf(proxy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::TestRng;

    fn random_box(rng: &mut TestRng, side: f32) -> Aabb2d {
        let center = Vec2::new(rng.range(-side, side), rng.range(-side, side));
        let half = Vec2::new(rng.range(0.1, 3.0), rng.range(0.1, 3.0));
        Aabb2d::new(center, half)
    }

    /// Proxies created, moved and destroyed at random, the tree checked after each change and
    /// queried against brute force over the live boxes.
    #[test]
    fn random_changes_keep_the_invariants_and_the_queries_exact() {
        let mut rng = TestRng::new(0x7e55_1e5e);
        let mut tree = DynamicTree::default();
        let mut live: Vec<(u32, Aabb2d, u32)> = Vec::new();
        for step in 0..3_000u32 {
            match rng.below(4) {
                0 | 1 => {
                    let aabb = random_box(&mut rng, 50.0);
                    live.push((tree.create_proxy(aabb, step), aabb, step));
                }
                2 if !live.is_empty() => {
                    let k = rng.below(live.len());
                    let aabb = random_box(&mut rng, 50.0);
                    tree.move_proxy(live[k].0, aabb);
                    live[k].1 = aabb;
                }
                _ if !live.is_empty() => {
                    let (proxy, _, _) = live.swap_remove(rng.below(live.len()));
                    tree.destroy_proxy(proxy);
                }
                _ => {}
            }
            tree.validate();
            if step % 50 == 0 {
                let query = random_box(&mut rng, 50.0);
                let mut found = Vec::new();
                tree.query(&query, |proxy, user| {
                    assert_eq!(tree.user(proxy), user);
                    found.push(user);
                    true
                });
                found.sort_unstable();
                let mut expected: Vec<u32> = (live.iter())
                    .filter(|(_, aabb, _)| aabb.intersects(&query))
                    .map(|&(_, _, user)| user)
                    .collect();
                expected.sort_unstable();
                assert_eq!(
                    found, expected,
                    "step {step}: the query against brute force"
                );
            }
        }
        assert_eq!(tree.len(), live.len());
        for &(proxy, aabb, user) in &live {
            assert_eq!(tree.fat_aabb(proxy), aabb);
            assert_eq!(tree.user(proxy), user);
        }
    }

    #[test]
    fn the_height_stays_logarithmic_for_proxies_inserted_in_order() {
        let mut tree = DynamicTree::default();
        for i in 0..4_096 {
            let x = i as f32;
            tree.create_proxy(Aabb2d::new(Vec2::new(x, 0.0), Vec2::splat(0.4)), i);
        }
        tree.validate();
        // A balanced tree of 4,096 leaves: at most 1.45 log2(4096) levels.
        assert!(tree.height() <= 17, "height {}", tree.height());
    }

    #[test]
    fn an_empty_tree_answers_nothing() {
        let tree = DynamicTree::default();
        tree.validate();
        assert_eq!(tree.height(), -1);
        tree.query(&Aabb2d::new(Vec2::ZERO, Vec2::ONE), |_, _| {
            panic!("no proxy")
        });
        tree.ray_cast(Vec2::ZERO, Vec2::X, 10.0, |_, _, _| panic!("no proxy"));
    }

    #[test]
    fn touching_boxes_are_found() {
        let mut tree = DynamicTree::default();
        tree.create_proxy(Aabb2d::new(Vec2::ZERO, Vec2::ONE), 7);
        let mut found = Vec::new();
        tree.query(&Aabb2d::new(Vec2::new(2.0, 2.0), Vec2::ONE), |_, user| {
            found.push(user);
            true
        });
        assert_eq!(found, [7], "a box sharing a corner touches");
    }

    /// Whether the segment from `origin` along `direction` for `reach` meets `aabb`, by sampling it
    /// densely: the reference for the ray cast's choice of branches. It may miss a box the segment
    /// only grazes, never count one it misses.
    fn segment_meets(aabb: &Aabb2d, origin: Vec2, direction: Vec2, reach: f32) -> bool {
        (0..=2_000).any(|k| {
            let point = origin + direction * reach * (k as f32 / 2_000.0);
            aabb.closest_point(point) == point
        })
    }

    #[test]
    fn ray_casts_visit_every_box_the_segment_reaches() {
        let mut rng = TestRng::new(0x5ca7_7e5d);
        let mut tree = DynamicTree::default();
        let boxes: Vec<Aabb2d> = (0..400).map(|_| random_box(&mut rng, 40.0)).collect();
        for (user, aabb) in boxes.iter().enumerate() {
            tree.create_proxy(*aabb, user as u32);
        }
        for case in 0..200 {
            let origin = Vec2::new(rng.range(-45.0, 45.0), rng.range(-45.0, 45.0));
            // Along the axes a quarter of the time, where the slabs divide by zero.
            let direction = match case % 4 {
                0 => Vec2::X,
                1 => -Vec2::Y,
                _ => Vec2::from_angle(rng.range(-3.2, 3.2)),
            };
            let reach = rng.range(1.0, 30.0);
            let mut visited = Vec::new();
            tree.ray_cast(origin, direction, reach, |_, user, reach| {
                visited.push(user);
                reach
            });
            for (user, aabb) in boxes.iter().enumerate() {
                if segment_meets(aabb, origin, direction, reach) {
                    assert!(
                        visited.contains(&(user as u32)),
                        "case {case}: the ray from {origin} along {direction} for {reach} reaches box \
                         {user}, {aabb:?}, but did not visit it"
                    );
                }
            }
        }
    }

    #[test]
    fn a_ray_cast_shortened_by_a_hit_skips_the_boxes_beyond() {
        let mut tree = DynamicTree::default();
        for k in 0..10 {
            let x = 5.0 + 10.0 * k as f32;
            tree.create_proxy(Aabb2d::new(Vec2::new(x, 0.0), Vec2::ONE), k);
        }
        let mut visited = Vec::new();
        tree.ray_cast(Vec2::ZERO, Vec2::X, 200.0, |_, user, reach| {
            visited.push(user);
            // Each box is hit at its near side: the first one found cuts the ray there.
            reach.min(4.0 + 10.0 * user as f32)
        });
        assert!(visited.contains(&0), "the nearest box is visited");
        assert!(
            visited.len() < 10,
            "boxes beyond a hit are skipped once it is found: visited {visited:?}"
        );
    }
}
