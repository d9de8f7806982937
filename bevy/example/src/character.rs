//! The animated character the example shows: a tentacle creature, written as a glTF 2.0
//! file (`assets/character.gltf`, one JSON file with its buffer inline), procedurally and
//! deterministically, so the repository ships no one else's model:
//!
//! ```text
//! cargo +1.97.1 run -p meshray-bevy-example -- --write-character bevy/example/assets/character.gltf
//! ```
//!
//! A closed tube of radius 0.35 from y = 0 to 3 (a cone on top), skinned to a chain of four
//! joints 0.75 apart, each vertex weighing the two joints nearest its height; one morph
//! target swells its middle. The animation `sway` (2 s, looping) bends each joint about z
//! and x, a quarter turn out of phase with the one below, and breathes the swell in and out.

use std::f32::consts::TAU;
use std::fmt::Write as _;

/// Rings of vertices along the tube and vertices around each.
const RINGS: usize = 32;
const SEGMENTS: usize = 20;
const RADIUS: f32 = 0.35;
const HEIGHT: f32 = 3.0;
/// Joints in the chain, evenly spaced from the base.
const JOINTS: usize = 4;
/// Animation keyframes over one loop.
const KEYS: usize = 17;
const SECONDS: f32 = 2.0;

/// The glTF file's text.
pub fn gltf() -> String {
    let spacing = HEIGHT / JOINTS as f32;
    // Vertices: the tube's rings, then the tip.
    let (mut positions, mut normals, mut joints, mut weights, mut swell) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let skin_at = |y: f32, joints: &mut Vec<[u16; 4]>, weights: &mut Vec<[f32; 4]>| {
        let s = (y / spacing - 0.5).clamp(0.0, (JOINTS - 1) as f32);
        let below = (s.floor() as usize).min(JOINTS - 2);
        let up = s - below as f32;
        joints.push([below as u16, below as u16 + 1, 0, 0]);
        weights.push([1.0 - up, up, 0.0, 0.0]);
    };
    for r in 0..=RINGS {
        let y = HEIGHT * 0.9 * r as f32 / RINGS as f32;
        for s in 0..SEGMENTS {
            let a = TAU * s as f32 / SEGMENTS as f32;
            let (x, z) = (a.cos(), a.sin());
            positions.push([RADIUS * x, y, RADIUS * z]);
            normals.push([x, 0.0, z]);
            skin_at(y, &mut joints, &mut weights);
            let k = 0.6 * (-((y - 1.4) / 0.5).powi(2)).exp();
            swell.push([k * RADIUS * x, 0.0, k * RADIUS * z]);
        }
    }
    let tip = positions.len() as u32;
    positions.push([0.0, HEIGHT, 0.0]);
    normals.push([0.0, 1.0, 0.0]);
    skin_at(HEIGHT, &mut joints, &mut weights);
    swell.push([0.0; 3]);
    let at = |r: usize, s: usize| (r * SEGMENTS + s % SEGMENTS) as u32;
    let mut indices = Vec::new();
    for r in 0..RINGS {
        for s in 0..SEGMENTS {
            indices.extend([at(r, s), at(r + 1, s), at(r, s + 1)]);
            indices.extend([at(r, s + 1), at(r + 1, s), at(r + 1, s + 1)]);
        }
    }
    for s in 0..SEGMENTS {
        indices.extend([at(RINGS, s), tip, at(RINGS, s + 1)]);
    }
    // The base stays open: the creature stands on it.
    let inverse_binds: Vec<[f32; 16]> = (0..JOINTS)
        .map(|j| {
            let mut m = [0.0; 16];
            (m[0], m[5], m[10], m[15]) = (1.0, 1.0, 1.0, 1.0);
            m[13] = -(j as f32) * spacing; // column-major: the translation's y
            m
        })
        .collect();
    let times: Vec<f32> = (0..KEYS)
        .map(|k| SECONDS * k as f32 / (KEYS - 1) as f32)
        .collect();
    let phase = |k: usize| TAU * k as f32 / (KEYS - 1) as f32;
    let rotations: Vec<Vec<[f32; 4]>> = (1..JOINTS)
        .map(|j| {
            (0..KEYS)
                .map(|k| {
                    let about_z = 0.45 * (phase(k) + 1.5 * j as f32).sin();
                    let about_x = 0.25 * (phase(k) + 1.5 * j as f32).cos();
                    quaternion(about_z, about_x)
                })
                .collect()
        })
        .collect();
    let breath: Vec<f32> = (0..KEYS)
        .map(|k| 0.5 - 0.5 * (2.0 * phase(k)).cos())
        .collect();

    let mut buffer = Buffer::default();
    let (lo, hi) = positions.iter().fold(
        ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]),
        |(lo, hi), p| {
            (
                [0, 1, 2].map(|i| lo[i].min(p[i])),
                [0, 1, 2].map(|i| hi[i].max(p[i])),
            )
        },
    );
    let (slo, shi) = swell.iter().fold(
        ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]),
        |(lo, hi), p| {
            (
                [0, 1, 2].map(|i| lo[i].min(p[i])),
                [0, 1, 2].map(|i| hi[i].max(p[i])),
            )
        },
    );
    let vertices = positions.len();
    let position = buffer.floats(&flat(&positions), "VEC3", vertices, Some((&lo, &hi)), true);
    let normal = buffer.floats(&flat(&normals), "VEC3", vertices, None, true);
    let joint = buffer.shorts(&joints.concat(), vertices);
    let weight = buffer.floats(&flat(&weights), "VEC4", vertices, None, true);
    let index = buffer.indices(&indices);
    let target = buffer.floats(&flat(&swell), "VEC3", vertices, Some((&slo, &shi)), true);
    let inverse = buffer.floats(&inverse_binds.concat(), "MAT4", JOINTS, None, false);
    let time = buffer.floats(&times, "SCALAR", KEYS, Some((&[0.0], &[SECONDS])), false);
    let rotation: Vec<usize> = rotations
        .iter()
        .map(|r| buffer.floats(&flat(r), "VEC4", KEYS, None, false))
        .collect();
    let weights_out = buffer.floats(&breath, "SCALAR", KEYS, None, false);

    // Nodes: 0 the mesh, 1.. the joints, each the parent of the next.
    let mut nodes = vec![format!(r#"{{"name":"creature","mesh":0,"skin":0}}"#)];
    for j in 0..JOINTS {
        let children = if j + 1 < JOINTS {
            format!(r#","children":[{}]"#, j + 2)
        } else {
            String::new()
        };
        let y = if j == 0 { 0.0 } else { spacing };
        nodes.push(format!(
            r#"{{"name":"joint{j}","translation":[0,{y},0]{children}}}"#
        ));
    }
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    for (j, &output) in rotation.iter().enumerate() {
        samplers.push(format!(r#"{{"input":{time},"output":{output}}}"#));
        channels.push(format!(
            r#"{{"sampler":{j},"target":{{"node":{},"path":"rotation"}}}}"#,
            j + 2
        ));
    }
    samplers.push(format!(r#"{{"input":{time},"output":{weights_out}}}"#));
    channels.push(format!(
        r#"{{"sampler":{},"target":{{"node":0,"path":"weights"}}}}"#,
        rotation.len()
    ));
    let joint_nodes: Vec<String> = (1..=JOINTS).map(|n| n.to_string()).collect();
    let mut out = String::new();
    write!(
        out,
        concat!(
            r#"{{"asset":{{"version":"2.0","generator":"meshray-bevy-example character.rs"}},"#,
            r#""scene":0,"scenes":[{{"name":"creature","nodes":[0,1]}}],"#,
            r#""nodes":[{nodes}],"#,
            r#""meshes":[{{"name":"creature","primitives":[{{"attributes":{{"POSITION":{position},"NORMAL":{normal},"JOINTS_0":{joint},"WEIGHTS_0":{weight}}},"indices":{index},"targets":[{{"POSITION":{target}}}],"material":0}}],"weights":[0],"extras":{{"targetNames":["swell"]}}}}],"#,
            r#""materials":[{{"name":"skin","pbrMetallicRoughness":{{"baseColorFactor":[0.55,0.75,0.5,1],"metallicFactor":0,"roughnessFactor":0.6}}}}],"#,
            r#""skins":[{{"joints":[{joints}],"inverseBindMatrices":{inverse},"skeleton":1}}],"#,
            r#""animations":[{{"name":"sway","samplers":[{samplers}],"channels":[{channels}]}}],"#,
            r#"{buffer}}}"#,
        ),
        nodes = nodes.join(","),
        position = position,
        normal = normal,
        joint = joint,
        weight = weight,
        index = index,
        target = target,
        joints = joint_nodes.join(","),
        inverse = inverse,
        samplers = samplers.join(","),
        channels = channels.join(","),
        buffer = buffer.finish(),
    )
    .expect("writing to a String");
    out.push('\n');
    out
}

/// A rotation by `about_z` radians about z, then `about_x` about x, as a glTF quaternion
/// (x, y, z, w).
fn quaternion(about_z: f32, about_x: f32) -> [f32; 4] {
    let (sz, cz) = (about_z / 2.0).sin_cos();
    let (sx, cx) = (about_x / 2.0).sin_cos();
    // q = qx · qz
    [sx * cz, -sx * sz, cx * sz, cx * cz]
}

fn flat<const N: usize>(v: &[[f32; N]]) -> Vec<f32> {
    v.iter().flatten().copied().collect()
}

/// One binary buffer, one view per accessor, each 4-byte aligned.
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl Buffer {
    /// A view of `data` and an accessor over it; returns the accessor's number.
    fn add(&mut self, data: &[u8], target: Option<u32>, accessor: String) -> usize {
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(data);
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let target = target.map_or(String::new(), |t| format!(r#","target":{t}"#));
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{offset},"byteLength":{}{target}}}"#,
            data.len()
        ));
        let view = self.views.len() - 1;
        self.accessors
            .push(format!(r#"{{"bufferView":{view},{accessor}}}"#));
        self.accessors.len() - 1
    }

    fn floats(
        &mut self,
        data: &[f32],
        kind: &str,
        count: usize,
        bounds: Option<(&[f32], &[f32])>,
        vertex: bool,
    ) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let list = |v: &[f32]| {
            v.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let bounds = bounds.map_or(String::new(), |(lo, hi)| {
            format!(r#","min":[{}],"max":[{}]"#, list(lo), list(hi))
        });
        let accessor = format!(r#""componentType":5126,"count":{count},"type":"{kind}"{bounds}"#);
        self.add(&bytes, vertex.then_some(34962), accessor)
    }

    fn shorts(&mut self, data: &[u16], count: usize) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let accessor = format!(r#""componentType":5123,"count":{count},"type":"VEC4""#);
        self.add(&bytes, Some(34962), accessor)
    }

    fn indices(&mut self, data: &[u32]) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let accessor = format!(
            r#""componentType":5125,"count":{},"type":"SCALAR""#,
            data.len()
        );
        self.add(&bytes, Some(34963), accessor)
    }

    /// The `bufferViews`, `accessors` and `buffers` members, the bytes inline in base64.
    fn finish(self) -> String {
        format!(
            r#""bufferViews":[{}],"accessors":[{}],"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}]"#,
            self.views.join(","),
            self.accessors.join(","),
            self.bytes.len(),
            base64(&self.bytes)
        )
    }
}

/// Standard base64 with padding (RFC 4648).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
