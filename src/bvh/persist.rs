//! Saving and loading a built BVH (the `serde` feature): a versioned record that loading
//! checks in full, so a corrupt or truncated file is an error, never a panic or a wrong
//! answer. Any serde format works (postcard, bincode, JSON...).

use super::wide::{WIDTH, WideNode};
use super::{BuildOptions, Bvh};
use crate::Mesh;
use crate::mesh::{CornerAttribute, NO_INDEX};
use crate::packet::{LANES, TrianglePacket};
use nalgebra::{Point2, Point3, Vector3};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What the record says it is, so a file of something else is refused by name.
const FORMAT: &str = "meshray-bvh";
/// Bumped whenever the record's meaning changes; older or newer files are refused.
const VERSION: u32 = 1;

/// A per-corner attribute: the values, and per triangle the indices of its corners' values.
type CornerRecord<const N: usize> = (Vec<[f32; N]>, Vec<[u32; 3]>);

#[derive(Serialize, Deserialize)]
struct BvhRecord {
    format: String,
    version: u32,
    positions: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
    normals: Option<CornerRecord<3>>,
    uvs: Option<CornerRecord<2>>,
    object_ids: Vec<u32>,
    objects: Vec<String>,
    /// `u32::MAX` for no material.
    material_ids: Vec<u32>,
    materials: Vec<String>,
    bins: u64,
    max_leaf_size: u64,
    traversal_cost: f32,
    intersection_cost: f32,
    nodes: Vec<NodeRecord>,
    packets: Vec<PacketRecord>,
    triangle_index: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
struct NodeRecord {
    min: [[f32; WIDTH]; 3],
    max: [[f32; WIDTH]; 3],
    child: [u32; WIDTH],
    count: [u32; WIDTH],
}

#[derive(Serialize, Deserialize)]
struct PacketRecord {
    a: [[f32; LANES]; 3],
    b: [[f32; LANES]; 3],
    c: [[f32; LANES]; 3],
}

impl Serialize for Bvh {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = &self.mesh;
        let record = BvhRecord {
            format: FORMAT.to_string(),
            version: VERSION,
            positions: m.positions.iter().map(|p| p.coords.into()).collect(),
            triangles: m.triangles.clone(),
            normals: m.normals.as_ref().map(|a: &CornerAttribute<Vector3<f32>>| {
                (
                    a.values.iter().map(|n| (*n).into()).collect(),
                    a.corners.clone(),
                )
            }),
            uvs: m.uvs.as_ref().map(|a: &CornerAttribute<Point2<f32>>| {
                (
                    a.values.iter().map(|t| t.coords.into()).collect(),
                    a.corners.clone(),
                )
            }),
            object_ids: m.object_ids.clone(),
            objects: m.objects.clone(),
            material_ids: m.material_ids.clone(),
            materials: m.materials.clone(),
            bins: self.options.bins as u64,
            max_leaf_size: self.options.max_leaf_size as u64,
            traversal_cost: self.options.traversal_cost,
            intersection_cost: self.options.intersection_cost,
            nodes: self
                .nodes
                .iter()
                .map(|n| NodeRecord {
                    min: n.min,
                    max: n.max,
                    child: n.child,
                    count: n.count,
                })
                .collect(),
            packets: self
                .leaf_packets
                .iter()
                .map(|p| PacketRecord {
                    a: p.a,
                    b: p.b,
                    c: p.c,
                })
                .collect(),
            triangle_index: self.triangle_index.clone(),
        };
        record.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Bvh {
    /// Reads a record and checks it whole: the format name and version, the mesh (as
    /// [`Mesh::from_buffers`] and the attribute setters do), then every invariant of the
    /// tree ([`Bvh::validate`]). Any failure is a deserialization error naming it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bvh, D::Error> {
        let r = BvhRecord::deserialize(deserializer)?;
        if r.format != FORMAT {
            return Err(D::Error::custom(format!(
                "not a meshray BVH (format {:?})",
                r.format
            )));
        }
        if r.version != VERSION {
            return Err(D::Error::custom(format!(
                "meshray BVH format version {} (this build reads {VERSION})",
                r.version
            )));
        }
        let invalid = |e: crate::Error| D::Error::custom(format!("invalid meshray BVH: {e}"));
        let mut mesh = Mesh::from_buffers(
            r.positions.into_iter().map(Point3::from).collect(),
            r.triangles,
        )
        .map_err(invalid)?;
        if let Some((values, corners)) = r.normals {
            mesh = mesh
                .with_corner_normals(values.into_iter().map(Vector3::from).collect(), corners)
                .map_err(invalid)?;
        }
        if let Some((values, corners)) = r.uvs {
            mesh = mesh
                .with_corner_uvs(values.into_iter().map(Point2::from).collect(), corners)
                .map_err(invalid)?;
        }
        let materials = r
            .material_ids
            .into_iter()
            .map(|m| (m != NO_INDEX).then_some(m))
            .collect();
        mesh = mesh
            .with_objects(r.object_ids, r.objects)
            .and_then(|m| m.with_materials(materials, r.materials))
            .map_err(invalid)?;
        let options = BuildOptions {
            bins: usize::try_from(r.bins).unwrap_or(usize::MAX),
            max_leaf_size: usize::try_from(r.max_leaf_size).unwrap_or(usize::MAX),
            traversal_cost: r.traversal_cost,
            intersection_cost: r.intersection_cost,
        };
        let bvh = Bvh {
            mesh,
            nodes: r
                .nodes
                .into_iter()
                .map(|n| WideNode {
                    min: n.min,
                    max: n.max,
                    child: n.child,
                    count: n.count,
                })
                .collect(),
            leaf_packets: r
                .packets
                .into_iter()
                .map(|p| TrianglePacket {
                    a: p.a,
                    b: p.b,
                    c: p.c,
                })
                .collect(),
            triangle_index: r.triangle_index,
            options,
        };
        bvh.validate().map_err(invalid)?;
        Ok(bvh)
    }
}
