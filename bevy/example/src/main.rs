//! A window on a mesh, picked by `meshray-bevy`: `cargo +1.97.1 run --release -p
//! meshray-bevy-example [MESH]` (any file meshray reads; default: the repository's
//! `assets/scene.obj`). Move the pointer over the mesh to outline the triangle under it in
//! yellow; click to print what was hit; drag with the right button to orbit.

use bevy::input::mouse::AccumulatedMouseMotion;
use bevy::picking::hover::HoverMap;
use bevy::prelude::*;
use meshray_bevy::{MeshrayHit, MeshrayPickingPlugin};

/// The picked mesh's positions and triangles, to outline the hovered triangle.
#[derive(Resource)]
struct Model {
    positions: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    radius: f32,
}

/// The camera's orbit around the model's centre.
#[derive(Resource)]
struct Orbit {
    yaw: f32,
    pitch: f32,
}

fn main() -> AppExit {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/scene.obj").into());
    let mesh = match meshray::Mesh::load(&path) {
        Ok(mesh) => mesh,
        Err(e) => {
            eprintln!("error: {e}");
            return AppExit::error();
        }
    };
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
    let model = Model {
        positions: positions.iter().map(|p| *p - centre).collect(),
        triangles: mesh.triangles().to_vec(),
        radius: (hi - lo).length() / 2.0,
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

fn setup(
    mut commands: Commands,
    model: Res<Model>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    // Flat shading: three vertices per triangle, each with the face normal.
    let corners: Vec<Vec3> = model
        .triangles
        .iter()
        .flat_map(|t| t.map(|i| model.positions[i as usize]))
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
    commands.spawn((
        DirectionalLight::default(),
        Transform::from_xyz(1.0, 2.0, 1.5).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((Camera3d::default(), Transform::default()));
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
        *transform = Transform::from_translation(direction * model.radius * 2.6)
            .looking_at(Vec3::ZERO, Vec3::Y);
    }
}

/// Outlines the triangle under each pointer, from the hit meshray reported.
fn outline_hovered(hover: Res<HoverMap>, model: Res<Model>, mut gizmos: Gizmos) {
    for hits in hover.values() {
        for hit in hits.values() {
            let Some(found) = hit.extra_as::<MeshrayHit>() else {
                continue;
            };
            let [a, b, c] =
                model.triangles[found.triangle as usize].map(|i| model.positions[i as usize]);
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
