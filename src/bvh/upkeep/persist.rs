//! Saving and loading a built BVH (the `serde` feature): a versioned record of the mesh and
//! the tree's shape that loading checks in full, so a corrupt or truncated file is an error,
//! never a panic or a wrong answer.
//!
//! The record keeps what cannot be recomputed cheaply — the mesh, the build options, which
//! children and triangles each node has — and nothing derived: the leaf triangles are copied
//! from the mesh and every box is recomputed bottom-up on load (as [`Bvh::refit`] does), in
//! a small fraction of a build. So the record holds no infinities or NaN padding, and does
//! not change when the in-memory layout does.
//!
//! Every float survives every serde format bit for bit: human-readable formats (JSON, RON,
//! YAML...) get each `f32` as its bit pattern, a `u32` (JSON has no NaN, and its decimal
//! round trip through `f64` is not exact in every reader); binary formats get the floats.

use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::ray_node::set_orders;
use crate::bvh::wide::{Child, LEAF, NO_CHILD, WIDTH, WideNode};
use crate::bvh::{BuildOptions, BuildQuality, Bvh};
use crate::mesh::{CornerAttribute, PerTriangle};
use crate::{Error, Mesh, Result};
use nalgebra::{Point2, Vector3};
use serde::de::{self, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What the record says it is, so a file of something else is refused by name.
const FORMAT: &str = "meshray-bvh";
/// Bumped whenever the record's meaning changes; older or newer files are refused by
/// version, before their body is read. Version 1 (before 0.2) stored boxes and leaf
/// triangles, with NaN padding that JSON could not carry; version 3 (before every leaf lane
/// was one packet) stored leaves of up to `max_leaf_size` triangles.
const VERSION: u32 = 4;

/// A built [`Bvh`] in the form it is saved in: the format's name, its version and the
/// record. `Bvh` itself is `Serialize` and `Deserialize` through this type; use it directly
/// to learn why a file is refused in a serde format that drops error messages (postcard
/// reports every custom error as "Serde Deserialization Error"): deserialize a `SavedBvh`,
/// which checks only the format's syntax, then [`Bvh::try_from`] checks the rest and returns
/// a typed [`Error`].
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{Bvh, Error, Mesh};
/// use meshray::tree::SavedBvh;
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let bytes = postcard::to_allocvec(&bvh).unwrap();
///
/// // Loading as a user who wants to know why a file is refused.
/// let saved: SavedBvh = postcard::from_bytes(&bytes).unwrap();
/// let loaded = Bvh::try_from(saved)?;
/// assert_eq!(loaded.stats(), bvh.stats());
///
/// // A JSON file of a future version is refused by its version, not by its body.
/// let future = r#"{"format":"meshray-bvh","version":99,"body":"whatever it holds"}"#;
/// let saved: SavedBvh = serde_json::from_str(future).unwrap();
/// match Bvh::try_from(saved) {
///     Err(Error::InvalidBvh { reason }) => assert!(reason.contains("version 99"), "{reason}"),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SavedBvh {
    format: String,
    version: u32,
    /// `None` when the format or version is not this build's: the body was not read.
    body: Option<Body>,
}

/// The record itself, for [`VERSION`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Body {
    /// Three per vertex.
    positions: Floats,
    triangles: Vec<[u32; 3]>,
    /// Three floats per normal, and per triangle its corners' normals.
    normals: Option<(Floats, Vec<[u32; 3]>)>,
    /// Two floats per uv, and per triangle its corners' uvs.
    uvs: Option<(Floats, Vec<[u32; 3]>)>,
    /// Per triangle, or one for every triangle.
    object_ids: Vec<u32>,
    objects: Vec<String>,
    /// Per triangle (`u32::MAX` for no material), or one for every triangle.
    material_ids: Vec<u32>,
    materials: Vec<String>,
    /// 0 for [`BuildQuality::Fast`], 1 for [`BuildQuality::Default`], 2 for
    /// [`BuildQuality::High`].
    quality: u32,
    bins: u64,
    max_leaf_size: u64,
    /// The traversal and the intersection cost.
    costs: Floats,
    /// Per node, its `WIDTH` child words (a leaf lane's with [`LEAF`]) and then their `WIDTH`
    /// triangle counts (see [`WideNode`]); the order words are recomputed from the boxes.
    nodes: Vec<u32>,
    /// Per leaf slot, the mesh's triangle number (`u32::MAX` for padding).
    triangle_index: Vec<u32>,
    /// [`Body::checksum`] when saved: a flipped bit in a coordinate would otherwise load as a
    /// valid tree of another mesh.
    checksum: u64,
}

impl Body {
    /// A hash of everything above, independent of the serde format. Each step
    /// (`rotate, xor, multiply by an odd constant`) is a bijection of the state, so changing
    /// any one word always changes the result. Not a defence against a forger, only against
    /// corruption.
    fn checksum(&self) -> u64 {
        let mut h = Checksum(0x6d65_7368_7261_7921);
        h.floats(&self.positions);
        h.words(self.triangles.iter().flatten().copied());
        for attribute in [&self.normals, &self.uvs] {
            h.words([attribute.is_some() as u32]);
            if let Some((values, corners)) = attribute {
                h.floats(values);
                h.words(corners.iter().flatten().copied());
            }
        }
        h.words(self.object_ids.iter().copied());
        h.words(self.material_ids.iter().copied());
        for name in self.objects.iter().chain(&self.materials) {
            h.words([name.len() as u32]);
            h.words(name.bytes().map(u32::from));
        }
        h.words([self.objects.len() as u32, self.materials.len() as u32]);
        h.words([self.quality]);
        h.words([self.bins as u32, (self.bins >> 32) as u32]);
        h.words([self.max_leaf_size as u32, (self.max_leaf_size >> 32) as u32]);
        h.floats(&self.costs);
        h.words(self.nodes.iter().copied());
        h.words(self.triangle_index.iter().copied());
        h.0
    }
}

/// The state of [`Body::checksum`].
struct Checksum(u64);

impl Checksum {
    fn words(&mut self, words: impl IntoIterator<Item = u32>) {
        let mut count = 0u64;
        for w in words {
            self.0 = (self.0.rotate_left(5) ^ u64::from(w)).wrapping_mul(0x517c_c1b7_2722_0a95);
            count += 1;
        }
        // The length too, so moving a word from one list to the next changes the result.
        self.0 = (self.0.rotate_left(5) ^ count).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn floats(&mut self, floats: &Floats) {
        self.words(floats.0.iter().map(|x| x.to_bits()));
    }
}

/// `f32` values that every serde format carries bit for bit (see the module's docs).
#[derive(Clone, Debug, Default)]
struct Floats(Vec<f32>);

impl Serialize for Floats {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_seq(self.0.iter().map(|x| x.to_bits()))
        } else {
            self.0.serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Floats {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Floats, D::Error> {
        if deserializer.is_human_readable() {
            let bits = Vec::<u32>::deserialize(deserializer)?;
            Ok(Floats(bits.into_iter().map(f32::from_bits).collect()))
        } else {
            Vec::<f32>::deserialize(deserializer).map(Floats)
        }
    }
}

impl From<&Bvh> for SavedBvh {
    fn from(bvh: &Bvh) -> SavedBvh {
        let m = bvh.mesh.parts();
        let flat3 = |v: &mut dyn Iterator<Item = [f32; 3]>| Floats(v.flatten().collect());
        let body = Body {
            positions: flat3(&mut m.positions.iter().map(|p| p.coords.into())),
            triangles: m.triangles.to_vec(),
            normals: m.normals.map(|a: &CornerAttribute<Vector3<f32>>| {
                (
                    flat3(&mut a.values.iter().map(|n| (*n).into())),
                    a.corners.clone(),
                )
            }),
            uvs: m.uvs.map(|a: &CornerAttribute<Point2<f32>>| {
                (
                    Floats(a.values.iter().flat_map(|t| [t.x, t.y]).collect()),
                    a.corners.clone(),
                )
            }),
            object_ids: m.object_ids.stored().to_vec(),
            objects: m.objects.to_vec(),
            material_ids: m.material_ids.stored().to_vec(),
            materials: m.materials.to_vec(),
            quality: match bvh.options.quality {
                BuildQuality::Fast => 0,
                BuildQuality::Default => 1,
                BuildQuality::High => 2,
            },
            bins: bvh.options.bins as u64,
            max_leaf_size: bvh.options.max_leaf_size as u64,
            costs: Floats(vec![
                bvh.options.traversal_cost,
                bvh.options.intersection_cost,
            ]),
            nodes: bvh
                .nodes
                .iter()
                .flat_map(|n| n.child.into_iter().chain(n.counts()))
                .collect(),
            triangle_index: bvh.triangle_index.clone(),
            checksum: 0,
        };
        let body = Body {
            checksum: body.checksum(),
            ..body
        };
        SavedBvh {
            format: FORMAT.into(),
            version: VERSION,
            body: Some(body),
        }
    }
}

impl TryFrom<SavedBvh> for Bvh {
    type Error = Error;

    /// Checks a saved tree whole: the format's name and version, the mesh (as
    /// [`Mesh::from_buffers`] and the attribute setters do), the tree's shape, then, with
    /// the leaves and boxes recomputed from the mesh, every invariant ([`diagnostics::validate`](crate::diagnostics::validate)).
    ///
    /// # Errors
    /// [`Error::InvalidBvh`] saying which check failed: the format, the version, or the
    /// invariant (mesh errors are wrapped in it, with their own words).
    fn try_from(saved: SavedBvh) -> Result<Bvh> {
        let fail = |reason: String| Error::InvalidBvh { reason };
        if saved.format != FORMAT {
            return Err(fail(format!(
                "not a saved meshray BVH: its format is \"{}\", not \"{FORMAT}\"",
                saved.format
            )));
        }
        if saved.version != VERSION {
            return Err(fail(format!(
                "a saved meshray BVH of format version {}, but this build of meshray reads \
                 version {VERSION}: load it with the meshray that saved it, or build the tree \
                 again",
                saved.version
            )));
        }
        let Some(mut r) = saved.body else {
            return Err(fail("the saved BVH has no body".into()));
        };
        if r.checksum() != r.checksum {
            return Err(fail(
                "its checksum does not match its contents: the file is corrupt".into(),
            ));
        }
        let [traversal_cost, intersection_cost] = r.costs.0[..] else {
            return Err(fail(format!(
                "it has {} build costs, not 2",
                r.costs.0.len()
            )));
        };
        let quality = match r.quality {
            0 => BuildQuality::Fast,
            1 => BuildQuality::Default,
            2 => BuildQuality::High,
            q => return Err(fail(format!("it names build quality {q}, not 0, 1 or 2"))),
        };
        let options = BuildOptions {
            quality,
            bins: usize::try_from(r.bins).unwrap_or(usize::MAX),
            max_leaf_size: usize::try_from(r.max_leaf_size).unwrap_or(usize::MAX),
            traversal_cost,
            intersection_cost,
            progress: None,
        };
        let (nodes, triangle_index) = (
            std::mem::take(&mut r.nodes),
            std::mem::take(&mut r.triangle_index),
        );
        let mesh = mesh_of(r).map_err(|e| fail(format!("its mesh is invalid: {e}")))?;
        let n = mesh.triangle_count();
        let nodes = nodes_of(&nodes, n, triangle_index.len()).map_err(fail)?;
        if let Some(&t) = triangle_index
            .iter()
            .find(|&&t| t != u32::MAX && t as usize >= n)
        {
            return Err(fail(format!(
                "a leaf names triangle {t} of a mesh of {n} triangles"
            )));
        }
        let mut bvh = Bvh {
            mesh,
            nodes,
            depth: 0,
            leaf_packets: vec![TrianglePacket::EMPTY; triangle_index.len() / LANES],
            triangle_index,
            options,
            far_fields: Default::default(),
            inside_grid: Default::default(),
            normals: Default::default(),
            built_cost: 0.0,
            spare_positions: Vec::new(),
        };
        bvh.refill_leaves_and_boxes();
        bvh.nodes.iter_mut().for_each(set_orders);
        bvh.validate()?;
        bvh.depth = bvh.sweep().depth;
        bvh.built_cost = bvh.sah_cost() as f32;
        Ok(bvh)
    }
}

/// The saved mesh, checked as the public constructors check it.
fn mesh_of(body: Body) -> Result<Mesh> {
    let Body {
        positions,
        triangles,
        normals,
        uvs,
        object_ids,
        objects,
        material_ids,
        materials,
        ..
    } = body;
    let mut mesh = Mesh::from_buffers(groups::<3>(&positions, "position coordinate")?, triangles)?;
    if let Some((values, corners)) = normals {
        let values = groups::<3>(&values, "normal coordinate")?;
        mesh = mesh.with_corner_normals(values, corners)?;
    }
    if let Some((values, corners)) = uvs {
        let values = groups::<2>(&values, "uv coordinate")?;
        mesh = mesh.with_corner_uvs(values, corners)?;
    }
    // One id stands for every triangle's (a mesh of one object or one material).
    let ids = |ids: Vec<u32>| match ids[..] {
        [id] => PerTriangle::Same(id),
        _ => PerTriangle::Each(ids),
    };
    mesh.with_object_ids(ids(object_ids), objects)?
        .with_material_ids(ids(material_ids), materials)
}

/// The floats in groups of `N` (points, normals, uvs); a count that is not a multiple of
/// `N` is an error naming `what`.
fn groups<const N: usize>(floats: &Floats, what: &'static str) -> Result<Vec<[f32; N]>> {
    let chunks = floats.0.chunks_exact(N);
    if !chunks.remainder().is_empty() {
        return Err(Error::IndexOutOfRange {
            path: None,
            line: None,
            what,
            index: floats.0.len() as i64,
            count: floats.0.len() / N * N,
        });
    }
    Ok(chunks.map(|c| c.try_into().expect("chunks of N")).collect())
}

/// The saved nodes with empty boxes, after checking what recomputing the boxes relies on:
/// whole nodes, at most one per triangle, interior children after their parent and in
/// range, leaves within the slots. [`diagnostics::validate`](crate::diagnostics::validate) checks the rest afterwards.
fn nodes_of(
    flat: &[u32],
    triangles: usize,
    slots: usize,
) -> std::result::Result<Vec<WideNode>, String> {
    if flat.is_empty()
        || !flat.len().is_multiple_of(2 * WIDTH)
        || flat.len() / (2 * WIDTH) > triangles
    {
        return Err(format!(
            "its node list has {} entries: it needs {} per node and one to {triangles} nodes",
            flat.len(),
            2 * WIDTH
        ));
    }
    if !slots.is_multiple_of(LANES) {
        return Err(format!(
            "it has {slots} leaf slots, not a multiple of {LANES}"
        ));
    }
    let count = flat.len() / (2 * WIDTH);
    let mut nodes = Vec::with_capacity(count);
    for (i, entry) in flat.chunks_exact(2 * WIDTH).enumerate() {
        let mut node = WideNode::EMPTY;
        let empty = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
        for k in 0..WIDTH {
            let (word, n) = (entry[k], entry[WIDTH + k]);
            let child = (word & !LEAF) as usize;
            let lane = if word == NO_CHILD {
                (n == 0).then_some(Child::Empty)
            } else if word & LEAF != 0 {
                let fits = (1..=LANES as u32).contains(&n)
                    && child
                        .checked_mul(LANES)
                        .and_then(|first| first.checked_add(n as usize))
                        .is_some_and(|end| end <= slots);
                fits.then_some(Child::Leaf {
                    first: child as u32,
                    count: n,
                })
            } else {
                (n == 0 && child > i && child < count).then_some(Child::Node(child as u32))
            };
            let Some(lane) = lane else {
                return Err(format!(
                    "node {i} lane {k} names child {child} with {n} triangles, outside the tree"
                ));
            };
            node.set_lane(k, empty, lane);
        }
        nodes.push(node);
    }
    Ok(nodes)
}

impl Serialize for SavedBvh {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("SavedBvh", 3)?;
        s.serialize_field("format", &self.format)?;
        s.serialize_field("version", &self.version)?;
        s.serialize_field("body", &self.body)?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for SavedBvh {
    /// Reads the format and the version first and stops there when they are not this
    /// build's, so a file of another version is refused by its version (in
    /// [`Bvh::try_from`]), not by whatever its body holds. (In a self-describing format whose
    /// writer put the body first, the body is read as this version's.)
    fn deserialize<D: Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<SavedBvh, D::Error> {
        deserializer.deserialize_struct("SavedBvh", &["format", "version", "body"], SavedVisitor)
    }
}

struct SavedVisitor;

impl SavedVisitor {
    fn ours(format: &str, version: u32) -> bool {
        format == FORMAT && version == VERSION
    }
}

impl<'de> Visitor<'de> for SavedVisitor {
    type Value = SavedBvh;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a saved meshray BVH (format, version, body)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<SavedBvh, A::Error> {
        let format: String = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let version: u32 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if !SavedVisitor::ours(&format, version) {
            // Not ours: leave the body unread (a binary format cannot skip it).
            return Ok(SavedBvh {
                format,
                version,
                body: None,
            });
        }
        let body: Option<Body> = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(2, &self))?;
        Ok(SavedBvh {
            format,
            version,
            body,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<SavedBvh, A::Error> {
        let (mut format, mut version, mut body): (Option<String>, Option<u32>, Option<Body>) =
            (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => format = Some(map.next_value()?),
                "version" => version = Some(map.next_value()?),
                "body" => match (&format, version) {
                    (Some(f), Some(v)) if !SavedVisitor::ours(f, v) => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    // Ours, or not yet known (a writer that sorts keys puts "body" first):
                    // read it as this version's; a mismatch found later discards it.
                    _ => body = map.next_value()?,
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let format = format.ok_or_else(|| A::Error::missing_field("format"))?;
        let version = version.ok_or_else(|| A::Error::missing_field("version"))?;
        let body = body.filter(|_| SavedVisitor::ours(&format, version));
        Ok(SavedBvh {
            format,
            version,
            body,
        })
    }
}

impl Serialize for Bvh {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        SavedBvh::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Bvh {
    /// Reads a [`SavedBvh`] and checks it whole ([`Bvh::try_from`]); a refused file is a
    /// deserialization error carrying that error's words (in formats that keep them).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Bvh, D::Error> {
        Bvh::try_from(SavedBvh::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    fn saved() -> (Bvh, Body) {
        let mut positions = Vec::new();
        let mut triangles = Vec::new();
        for i in 0..40u32 {
            let x = i as f32;
            positions.extend([
                Point3::new(x, 0.0, 0.0),
                Point3::new(x + 1.0, 0.0, 0.0),
                Point3::new(x, 1.0, 0.5),
            ]);
            triangles.push([3 * i, 3 * i + 1, 3 * i + 2]);
        }
        let bvh = Bvh::build(Mesh::from_buffers(positions, triangles).unwrap());
        let body = SavedBvh::from(&bvh).body.unwrap();
        (bvh, body)
    }

    /// The reason for loading `body` after `edit`, with the checksum made to match, so it is
    /// the invariant that is refused.
    fn refusal(edit: impl FnOnce(&mut Body)) -> String {
        let (_, mut body) = saved();
        edit(&mut body);
        body.checksum = body.checksum();
        let saved = SavedBvh {
            format: FORMAT.into(),
            version: VERSION,
            body: Some(body),
        };
        match Bvh::try_from(saved) {
            Err(Error::InvalidBvh { reason }) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_saved_tree_loads_as_it_was() {
        let (bvh, body) = saved();
        let loaded = Bvh::try_from(SavedBvh {
            format: FORMAT.into(),
            version: VERSION,
            body: Some(body),
        })
        .unwrap();
        assert_eq!(loaded.nodes, bvh.nodes);
        assert_eq!(loaded.leaf_packets, bvh.leaf_packets);
        assert_eq!(loaded.triangle_index, bvh.triangle_index);
    }

    #[test]
    fn ids_shared_by_every_triangle_are_saved_once() {
        let (bvh, body) = saved();
        assert_eq!((body.object_ids.len(), body.material_ids.len()), (1, 1));
        let n = bvh.mesh().triangle_count() as u32;
        let mesh = bvh.into_mesh();
        let names = vec!["even".to_string(), "odd".to_string()];
        let mesh = mesh.with_objects((0..n).map(|i| i % 2).collect(), names.clone());
        let materials = (0..n).map(|i| (i % 3 == 0).then_some(0)).collect();
        let mesh = mesh.unwrap().with_materials(materials, vec!["m".into()]);
        let bvh = Bvh::build(mesh.unwrap());
        let body = SavedBvh::from(&bvh).body.unwrap();
        assert_eq!(body.object_ids.len(), n as usize);
        let saved = SavedBvh {
            format: FORMAT.into(),
            version: VERSION,
            body: Some(body),
        };
        let loaded = Bvh::try_from(saved).unwrap();
        for i in 0..n as usize {
            let attributes = (loaded.mesh().attributes(i), bvh.mesh().attributes(i));
            assert_eq!(attributes.0, attributes.1);
        }
        assert_eq!(loaded.mesh().objects(), names);
    }

    #[test]
    fn each_broken_invariant_is_named() {
        type Edit = fn(&mut Body);
        let cases: [(&str, Edit); 12] = [
            ("its mesh is invalid: vertex index 999", |b| {
                b.triangles[0][1] = 999
            }),
            (
                "its mesh is invalid: vertex 3 has the coordinate 2e12",
                |b| b.positions.0[9] = 2e12,
            ),
            ("its mesh is invalid: position coordinate index 359", |b| {
                b.positions.0.pop();
            }),
            ("not 2", |b| b.costs.0.push(1.0)),
            ("its mesh is invalid: triangle index 2", |b| {
                b.object_ids = vec![0, 0]
            }),
            ("its mesh is invalid: object index 1", |b| {
                b.object_ids = vec![1]
            }),
            ("its mesh is invalid: material index 0", |b| {
                b.material_ids = vec![0]
            }),
            ("its node list has 15 entries", |b| {
                b.nodes.truncate(15);
            }),
            ("outside the tree", |b| b.nodes[0] = 50_000),
            ("a leaf names triangle 77", |b| b.triangle_index[0] = 77),
            ("not a multiple of 4", |b| {
                b.triangle_index.pop();
            }),
            ("is out of range or in two leaves", |b| {
                let t = b.triangle_index[0];
                let last = b
                    .triangle_index
                    .iter()
                    .rposition(|&x| x != u32::MAX)
                    .unwrap();
                b.triangle_index[last] = t;
            }),
        ];
        for (want, edit) in cases {
            let reason = refusal(edit);
            assert!(reason.contains(want), "want {want:?} in {reason:?}");
        }
    }
}
