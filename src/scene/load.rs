//! Scenes from glTF files: one tree per glTF mesh, one instance per node that places it.
//! The file is read by `io` (the layer below), which knows nothing of trees or scenes.

use super::Scene;
use crate::{Bvh, Error, LoadOptions, Result};
use std::path::Path;
use std::sync::Arc;

impl Scene {
    /// Loads a glTF 2.0 file (`.gltf` or `.glb`) as a scene: each glTF mesh is built once
    /// into a [`Bvh`] (in its own space), and each node that uses it becomes an instance
    /// with the node's world transform, so a mesh placed a hundred times is stored once.
    /// Instances follow a depth-first walk of the scene's nodes; [`Scene::instance`] gives each
    /// one's node name (else its mesh's, else `node N`). Nodes are taken as for
    /// [`Mesh::load`](crate::Mesh::load); a node whose transform is singular (a zero scale, used to hide
    /// things), or whose mesh is too small to compute with on its own, gets no instance and
    /// is reported in [`Scene::load_warnings`]; nor does a mesh without triangles get one.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # let dir = std::env::temp_dir().join(format!("meshray-gltf-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("two.gltf");
    /// # // One triangle (in a data URI) used by two nodes, the second moved 5 along x.
    /// # std::fs::write(&path, r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,1]}],
    /// #   "nodes":[{"name":"left","mesh":0},{"name":"right","mesh":0,"translation":[5,0,0]}],
    /// #   "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
    /// #   "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",
    /// #     "min":[0,0,0],"max":[1,1,0]}],
    /// #   "bufferViews":[{"buffer":0,"byteLength":36}],
    /// #   "buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]}"#).unwrap();
    /// use meshray::{Ray, Scene, SceneOptions};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let scene = Scene::load(&path)?;
    /// assert_eq!(scene.len(), 2);
    /// let name = |id| scene.instance(id).map(|instance| instance.name);
    /// assert_eq!((name(0), name(1)), (Some("left"), Some("right")));
    /// assert!(scene.load_warnings().is_empty());
    ///
    /// let ray = Ray::new(Point3::new(5.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0));
    /// let hit = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
    /// assert_eq!(name(hit.instance), Some("right"));
    /// assert!((hit.hit.point - Point3::new(5.2, 0.2, 0.0)).norm() < 1e-6); // world space
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`load_with`](Scene::load_with).
    pub fn load(path: impl AsRef<Path>) -> Result<Scene> {
        Scene::load_with(path, &LoadOptions::default())
    }

    /// [`load`](Scene::load) with the given [`LoadOptions`] (limits, and a glTF file of any
    /// name when `options.format` is [`Format::Gltf`](crate::Format::Gltf)).
    ///
    /// # Errors
    /// As [`Mesh::load_with`](crate::Mesh::load_with); [`Error::Parse`] when the file is not named or asked for as
    /// glTF (a scene of instances comes only from glTF); [`Error::NoTriangles`] when no node
    /// places a triangle, or the warning of a node left out when every one is.
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Scene> {
        let path = path.as_ref();
        let format = options.format.or_else(|| crate::Format::from_path(path));
        if format != Some(crate::Format::Gltf) {
            return Err(Error::Parse {
                path: path.into(),
                line: None,
                message: "a scene of instances loads from glTF only (.gltf, .glb; or set \
                          LoadOptions::format); load other formats with Mesh::load"
                    .into(),
            });
        }
        let placed = crate::io::gltf::read_scene(path, options)?;
        let trees: Vec<Option<Result<Arc<Bvh>>>> = placed
            .meshes
            .into_iter()
            .map(|mesh| mesh.map(|mesh| mesh.map(|mesh| Arc::new(Bvh::build(mesh)))))
            .collect();
        let (mut instances, mut names, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
        for placement in placed.instances {
            let bvh = match &trees[placement.mesh] {
                Some(Ok(bvh)) => bvh,
                Some(Err(too_small)) => {
                    warnings.push(too_small.clone());
                    continue;
                }
                None => continue,
            };
            if let Some(singular) = placement.singular {
                warnings.push(singular);
                continue;
            }
            instances.push((bvh.clone(), placement.world));
            names.push(placement.name);
        }
        if instances.is_empty() {
            // Say why when every placement was singular or too small.
            return Err(warnings.pop().unwrap_or(Error::NoTriangles {
                path: Some(path.into()),
            }));
        }
        let mut scene = Scene::new();
        scene.add_all(instances)?;
        scene.set_loaded(names, warnings);
        Ok(scene)
    }
}
