//! A window on a mesh, picked by `meshray-bevy`: `cargo +1.97.1 run --release -p
//! meshray-bevy-example [MESH]`. Without a mesh it shows an animated glTF character
//! (`assets/character.gltf`: skinned, with a morph target; see `character.rs`), picked where
//! it is drawn in every frame; with one (any file meshray reads), that mesh, still. Move the
//! pointer over it to outline the triangle under it in yellow; click to print what was hit;
//! drag with the right button to orbit.
//!
//! `--write-character PATH` writes the character's glTF file (how `assets/character.gltf`
//! was made).

mod character;

use bevy::input::mouse::AccumulatedMouseMotion;
use bevy::picking::hover::HoverMap;
use bevy::prelude::*;
use bevy::world_serialization::WorldInstanceReady;
use meshray_bevy::{MeshrayHit, MeshrayPickingPlugin, MeshrayScene};

/// What the window shows: the animated character, or a still mesh (centred).
#[derive(Resource)]
enum Model {
    Character,
    Still {
        positions: Vec<Vec3>,
        triangles: Vec<[u32; 3]>,
        radius: f32,
    },
}

impl Model {
    /// The radius of a sphere around what is shown, about the origin the camera orbits.
    fn radius(&self) -> f32 {
        match self {
            Model::Character => 2.2,
            Model::Still { radius, .. } => *radius,
        }
    }

    /// The point the camera orbits.
    fn centre(&self) -> Vec3 {
        match self {
            Model::Character => Vec3::new(0.0, 1.5, 0.0),
            Model::Still { .. } => Vec3::ZERO,
        }
    }
}

/// The camera's orbit around the model's centre.
#[derive(Resource)]
struct Orbit {
    yaw: f32,
    pitch: f32,
}

fn main() -> AppExit {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model = match args.as_slice() {
        [] => Model::Character,
        [flag, path] if flag == "--write-character" => {
            return match std::fs::write(path, character::gltf()) {
                Ok(()) => AppExit::Success,
                Err(e) => {
                    eprintln!("error: {path}: {e}");
                    AppExit::error()
                }
            };
        }
        [path] if !path.starts_with('-') => match still(path) {
            Ok(model) => model,
            Err(e) => {
                eprintln!("error: {e}");
                return AppExit::error();
            }
        },
        _ => {
            eprintln!("usage: meshray-bevy-example [MESH | --write-character PATH]");
            return AppExit::error();
        }
    };
    App::new()
        .add_plugins((DefaultPlugins, MeshrayPickingPlugin))
        .insert_resource(model)
        .insert_resource(Orbit {
            yaw: 0.6,
            pitch: 0.35,
        })
        .add_systems(Startup, setup)
        .add_systems(Update, (orbit, outline_hovered))
        .run()
}

/// A mesh file, centred on the origin.
fn still(path: &str) -> Result<Model, meshray::Error> {
    let mesh = meshray::Mesh::load(path)?;
    let positions: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| Vec3::new(p.x, p.y, p.z))
        .collect();
    let (lo, hi) = positions
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
    let centre = (lo + hi) / 2.0;
    Ok(Model::Still {
        positions: positions.iter().map(|p| *p - centre).collect(),
        triangles: mesh.triangles().to_vec(),
        radius: (hi - lo).length() / 2.0,
    })
}

fn setup(
    mut commands: Commands,
    model: Res<Model>,
    assets: Res<AssetServer>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut gizmos: ResMut<GizmoConfigStore>,
) {
    // The outline lies on the surface: drawn over it (a depth bias of -1), and wide enough
    // to see on small triangles.
    let (outline, _) = gizmos.config_mut::<DefaultGizmoConfigGroup>();
    outline.depth_bias = -1.0;
    outline.line.width = 3.0;
    commands.spawn((
        DirectionalLight::default(),
        Transform::from_xyz(1.0, 2.0, 1.5).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((Camera3d::default(), Transform::default()));
    let Model::Still {
        positions,
        triangles,
        ..
    } = &*model
    else {
        // The character's scene, its animation looping once the scene is in the world.
        let file = "character.gltf";
        let (graph, node) =
            AnimationGraph::from_clip(assets.load(GltfAssetLabel::Animation(0).from_asset(file)));
        commands
            .spawn((
                WorldAssetRoot(assets.load(GltfAssetLabel::Scene(0).from_asset(file))),
                Animation(AnimationGraphHandle(graphs.add(graph)), node),
            ))
            .observe(play);
        return;
    };
    // Flat shading: three vertices per triangle, each with the face normal.
    let corners: Vec<Vec3> = triangles
        .iter()
        .flat_map(|t| t.map(|i| positions[i as usize]))
        .collect();
    let mut mesh = Mesh::new(
        bevy::mesh::PrimitiveTopology::TriangleList,
        bevy::asset::RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, corners);
    mesh.compute_flat_normals();
    commands
        .spawn((
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(materials.add(Color::srgb(0.7, 0.72, 0.75))),
        ))
        .observe(print_click);
}

/// The character's animation graph and its clip's node.
#[derive(Component)]
struct Animation(AnimationGraphHandle, AnimationNodeIndex);

/// Starts the character's animation, looping, on the scene's `AnimationPlayer`, and makes
/// its meshes print a click.
fn play(
    ready: On<WorldInstanceReady>,
    mut commands: Commands,
    animations: Query<&Animation>,
    children: Query<&Children>,
    mut players: Query<&mut AnimationPlayer>,
    meshes: Query<(), With<Mesh3d>>,
) {
    let Ok(Animation(graph, node)) = animations.get(ready.entity) else {
        return;
    };
    for entity in children.iter_descendants(ready.entity) {
        if let Ok(mut player) = players.get_mut(entity) {
            player.play(*node).repeat();
            commands.entity(entity).insert(graph.clone());
        }
        if meshes.contains(entity) {
            commands.entity(entity).observe(print_click);
        }
    }
}

/// Right-button drag orbits the camera around the model.
fn orbit(
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    model: Res<Model>,
    mut state: ResMut<Orbit>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    if buttons.pressed(MouseButton::Right) {
        state.yaw -= motion.delta.x * 0.005;
        state.pitch = (state.pitch + motion.delta.y * 0.005).clamp(-1.5, 1.5);
    }
    let direction = Vec3::new(
        state.yaw.sin() * state.pitch.cos(),
        state.pitch.sin(),
        state.yaw.cos() * state.pitch.cos(),
    );
    for mut transform in &mut camera {
        let centre = model.centre();
        *transform = Transform::from_translation(centre + direction * model.radius() * 2.6)
            .looking_at(centre, Vec3::Y);
    }
}

/// Outlines the triangle under each pointer, from the hit meshray reported: its corners as
/// meshray's scene holds them (posed, for the character), in world space.
fn outline_hovered(hover: Res<HoverMap>, picking: Res<MeshrayScene>, mut gizmos: Gizmos) {
    for hits in hover.values() {
        for (&entity, hit) in hits {
            let (Some(found), Some(id)) = (hit.extra_as::<MeshrayHit>(), picking.instance(entity))
            else {
                continue;
            };
            let Some(view) = picking.scene().instance(id) else {
                continue;
            };
            let [a, b, c] = view.bvh.mesh().triangle(found.triangle as usize).map(|p| {
                let p = view.transform.transform_point(&p);
                Vec3::new(p.x, p.y, p.z)
            });
            gizmos.linestrip([a, b, c, a], Color::srgb(1.0, 0.9, 0.1));
        }
    }
}

/// Prints the clicked triangle, its barycentrics and the world point.
fn print_click(click: On<PointerClick>) {
    if let Some(found) = click.hit.extra_as::<MeshrayHit>() {
        println!(
            "triangle {} at {:?} (u {:.4}, v {:.4}, {} face), depth {:.4}",
            found.triangle,
            click.hit.position,
            found.u,
            found.v,
            if found.front_face { "front" } else { "back" },
            click.hit.depth,
        );
    }
}
