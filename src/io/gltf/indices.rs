//! Every index in a glTF document, checked against the array it names before anything
//! follows it.
//!
//! `gltf`'s own validation ([`gltf::Document::from_json`]) checks most indices, but not all,
//! and not first: it reads a primitive's `POSITION` accessor before checking that it exists
//! (a panic inside `gltf-json` for an accessor past the end), and it never checks which node
//! an animation channel targets. Its accessors (`Node::children`, `Primitive::get`,
//! `Accessor::view`...) then unwrap the indices they follow. So the loader runs
//! [`check`] on the parsed JSON first, and only then `gltf`'s validation and API; the
//! message names the place in the document, the index and what the document holds.

use gltf::json::{self, Index, Root};
use gltf::json::{accessor, animation, material, mesh, scene, skin, texture};

/// The first index in `root` that names an element past the end of its array, as a
/// sentence: `meshes[0].primitives[0].attributes.POSITION names accessor 7, but the document
/// has 2 accessors`.
pub(super) fn check(root: &Root) -> Result<(), String> {
    let of = Arrays::of(root);
    for (i, view) in root.buffer_views.iter().enumerate() {
        of.buffers
            .has(view.buffer, || format!("bufferViews[{i}].buffer"))?;
    }
    for (i, a) in root.accessors.iter().enumerate() {
        check_accessor(&of, a, &format!("accessors[{i}]"))?;
    }
    for (i, image) in root.images.iter().enumerate() {
        of.views
            .has_some(image.buffer_view, || format!("images[{i}].bufferView"))?;
    }
    for (i, t) in root.textures.iter().enumerate() {
        of.samplers
            .has_some(t.sampler, || format!("textures[{i}].sampler"))?;
        // `u32::MAX` is gltf's mark for "no source"; its validation reports it as missing.
        if t.source.value() != u32::MAX as usize {
            of.images
                .has(t.source, || format!("textures[{i}].source"))?;
        }
    }
    for (i, m) in root.materials.iter().enumerate() {
        check_material(&of, m, &format!("materials[{i}]"))?;
    }
    for (i, m) in root.meshes.iter().enumerate() {
        for (j, p) in m.primitives.iter().enumerate() {
            check_primitive(&of, p, &format!("meshes[{i}].primitives[{j}]"))?;
        }
    }
    for (i, node) in root.nodes.iter().enumerate() {
        check_node(&of, node, &format!("nodes[{i}]"))?;
    }
    for (i, s) in root.skins.iter().enumerate() {
        check_skin(&of, s, &format!("skins[{i}]"))?;
    }
    for (i, s) in root.scenes.iter().enumerate() {
        for (j, &node) in s.nodes.iter().enumerate() {
            of.nodes.has(node, || format!("scenes[{i}].nodes[{j}]"))?;
        }
    }
    of.scenes
        .has_some(root.scene, || "scene (the default one)".into())?;
    for (i, a) in root.animations.iter().enumerate() {
        check_animation(&of, a, &format!("animations[{i}]"))?;
    }
    Ok(())
}

/// One array of the document: how many elements it holds, and what they are called.
#[derive(Clone, Copy)]
struct Array {
    len: usize,
    one: &'static str,
    many: &'static str,
    /// Who holds the array: `"document"`, or `"animation"` for an animation's samplers.
    holder: &'static str,
}

impl Array {
    fn new(len: usize, one: &'static str, many: &'static str) -> Array {
        Array {
            len,
            one,
            many,
            holder: "document",
        }
    }

    /// Whether `index`, found at the place `at` names, is inside the array.
    fn has<T>(&self, index: Index<T>, at: impl FnOnce() -> String) -> Result<(), String> {
        let index = index.value();
        if index < self.len {
            return Ok(());
        }
        let holds = match self.len {
            0 => format!("no {}", self.many),
            1 => format!("1 {}", self.one),
            n => format!("{n} {}", self.many),
        };
        Err(format!(
            "{} names {} {index}, but the {} has {holds}",
            at(),
            self.one,
            self.holder
        ))
    }

    /// [`has`](Array::has) for an optional index.
    fn has_some<T>(
        &self,
        index: Option<Index<T>>,
        at: impl FnOnce() -> String,
    ) -> Result<(), String> {
        index.map_or(Ok(()), |index| self.has(index, at))
    }
}

/// The document's arrays that indices name.
struct Arrays {
    accessors: Array,
    buffers: Array,
    views: Array,
    cameras: Array,
    images: Array,
    materials: Array,
    meshes: Array,
    nodes: Array,
    samplers: Array,
    scenes: Array,
    skins: Array,
    textures: Array,
}

impl Arrays {
    fn of(root: &Root) -> Arrays {
        Arrays {
            accessors: Array::new(root.accessors.len(), "accessor", "accessors"),
            buffers: Array::new(root.buffers.len(), "buffer", "buffers"),
            views: Array::new(root.buffer_views.len(), "buffer view", "buffer views"),
            cameras: Array::new(root.cameras.len(), "camera", "cameras"),
            images: Array::new(root.images.len(), "image", "images"),
            materials: Array::new(root.materials.len(), "material", "materials"),
            meshes: Array::new(root.meshes.len(), "mesh", "meshes"),
            nodes: Array::new(root.nodes.len(), "node", "nodes"),
            samplers: Array::new(root.samplers.len(), "sampler", "samplers"),
            scenes: Array::new(root.scenes.len(), "scene", "scenes"),
            skins: Array::new(root.skins.len(), "skin", "skins"),
            textures: Array::new(root.textures.len(), "texture", "textures"),
        }
    }
}

fn check_accessor(of: &Arrays, a: &json::Accessor, at: &str) -> Result<(), String> {
    of.views
        .has_some(a.buffer_view, || format!("{at}.bufferView"))?;
    if let Some(accessor::sparse::Sparse {
        indices, values, ..
    }) = &a.sparse
    {
        let indices = indices.buffer_view;
        of.views
            .has(indices, || format!("{at}.sparse.indices.bufferView"))?;
        let values = values.buffer_view;
        of.views
            .has(values, || format!("{at}.sparse.values.bufferView"))?;
    }
    Ok(())
}

fn check_material(of: &Arrays, m: &json::Material, at: &str) -> Result<(), String> {
    let pbr = &m.pbr_metallic_roughness;
    let infos: [(&str, Option<&texture::Info>); 3] = [
        (
            "pbrMetallicRoughness.baseColorTexture",
            pbr.base_color_texture.as_ref(),
        ),
        (
            "pbrMetallicRoughness.metallicRoughnessTexture",
            pbr.metallic_roughness_texture.as_ref(),
        ),
        ("emissiveTexture", m.emissive_texture.as_ref()),
    ];
    for (field, info) in infos {
        of.textures
            .has_some(info.map(|i| i.index), || format!("{at}.{field}.index"))?;
    }
    let normal = m
        .normal_texture
        .as_ref()
        .map(|t: &material::NormalTexture| t.index);
    of.textures
        .has_some(normal, || format!("{at}.normalTexture.index"))?;
    let occlusion = m.occlusion_texture.as_ref().map(|t| t.index);
    of.textures
        .has_some(occlusion, || format!("{at}.occlusionTexture.index"))
}

fn check_primitive(of: &Arrays, p: &mesh::Primitive, at: &str) -> Result<(), String> {
    for (semantic, &accessor) in &p.attributes {
        let name = semantic.to_string();
        of.accessors
            .has(accessor, || format!("{at}.attributes.{name}"))?;
    }
    of.accessors
        .has_some(p.indices, || format!("{at}.indices"))?;
    of.materials
        .has_some(p.material, || format!("{at}.material"))?;
    for (i, target) in p.targets.iter().flatten().enumerate() {
        let attributes = [
            ("POSITION", target.positions),
            ("NORMAL", target.normals),
            ("TANGENT", target.tangents),
        ];
        for (name, accessor) in attributes {
            of.accessors
                .has_some(accessor, || format!("{at}.targets[{i}].{name}"))?;
        }
    }
    Ok(())
}

fn check_node(of: &Arrays, node: &scene::Node, at: &str) -> Result<(), String> {
    of.cameras
        .has_some(node.camera, || format!("{at}.camera"))?;
    of.meshes.has_some(node.mesh, || format!("{at}.mesh"))?;
    of.skins.has_some(node.skin, || format!("{at}.skin"))?;
    for (i, &child) in node.children.iter().flatten().enumerate() {
        of.nodes.has(child, || format!("{at}.children[{i}]"))?;
    }
    Ok(())
}

fn check_skin(of: &Arrays, s: &skin::Skin, at: &str) -> Result<(), String> {
    let matrices = s.inverse_bind_matrices;
    of.accessors
        .has_some(matrices, || format!("{at}.inverseBindMatrices"))?;
    for (i, &joint) in s.joints.iter().enumerate() {
        of.nodes.has(joint, || format!("{at}.joints[{i}]"))?;
    }
    of.nodes.has_some(s.skeleton, || format!("{at}.skeleton"))
}

fn check_animation(of: &Arrays, a: &animation::Animation, at: &str) -> Result<(), String> {
    for (i, sampler) in a.samplers.iter().enumerate() {
        of.accessors
            .has(sampler.input, || format!("{at}.samplers[{i}].input"))?;
        of.accessors
            .has(sampler.output, || format!("{at}.samplers[{i}].output"))?;
    }
    let samplers = Array {
        holder: "animation",
        ..Array::new(a.samplers.len(), "sampler", "samplers")
    };
    for (i, channel) in a.channels.iter().enumerate() {
        samplers.has(channel.sampler, || format!("{at}.channels[{i}].sampler"))?;
        let node = channel.target.node;
        of.nodes
            .has(node, || format!("{at}.channels[{i}].target.node"))?;
    }
    Ok(())
}
