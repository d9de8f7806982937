//! The WebAssembly core of the `meshray` npm package (`js/meshray.js`): a plain C ABI of
//! numbers and pointers, no bindings generator.
//!
//! Every buffer lives in this module's state and belongs to Rust; JavaScript asks for a
//! buffer of a size ([`mr_stage_mesh`], [`mr_rays`], [`mr_points`]), writes into it through
//! a typed-array view of the wasm memory, then calls the query, which reads it and writes
//! its answers to other Rust-owned buffers ([`mr_out`]). So there is no `unsafe` here: Rust
//! never dereferences a pointer it was given. Trees are numbered handles into a table, so a
//! freed or made-up handle is an error, never a dangling pointer. Nothing here panics on
//! any input: a failure returns a negative status and leaves its words in [`mr_error`].
//!
//! Status codes: `0` done, `-1` a bad handle (freed, or never made), `-2` bad input (the
//! message says what), `-3` out of memory for the size asked.
#![deny(missing_docs)]

use meshray::geometry::Aabb;
use meshray::pose::{Pose, Rig};
use meshray::query::WindingAccuracy;
use meshray::query::{
    Overlap, PointQuery, RayCast, SceneCompactHit, SceneSweepHit, SceneTriangle, Sweep, SweepHit,
};
use meshray::selection::Region;
use meshray::tree::BuildQuality;
use meshray::{BuildOptions, Bvh, Camera, Culling, Mesh, QueryOptions, Ray, RayQuery, Scene};
use meshray_gpu::narrow::{
    ANSWER_BYTES, CHUNK, Finisher, GpuAnswer, GpuRay, KERNEL, MODE_ANY, MODE_CLOSEST, RAY_BYTES,
    WORKGROUP,
};
use nalgebra::{Matrix4, Point3, Vector3};
use std::cell::RefCell;
use std::sync::Arc;

/// Done.
const OK: i32 = 0;
/// A freed or unknown tree handle.
const BAD_HANDLE: i32 = -1;
/// Input the library refuses; the message is in [`mr_error`].
const BAD_INPUT: i32 = -2;
/// An allocation that cannot be made.
const NO_MEMORY: i32 = -3;

/// The most triangles a tree may have. A build's memory peaks at about 80 bytes per
/// triangle (a fast build's at about 160; `js/bench/memory.mjs`), and running out of
/// wasm32's 4 GiB aborts the module; 16M leaves room for the trees already built.
const MAX_TRIANGLES: usize = 16_000_000;

/// Rays per call of the batch query: the rays made from the input take this much memory.
const RAYS_PER_CHUNK: usize = 256;

/// Query flags: the watertight triangle test.
const WATERTIGHT: u32 = 1;
/// Query flags: back faces culled (front faces only).
const CULL_BACK: u32 = 2;
/// Query flags: front faces culled (back faces only).
const CULL_FRONT: u32 = 4;

/// The bit that marks a scene's handle (a tree's handles stay below it).
const SCENE: u32 = 1 << 30;

/// The answer buffers a query writes (per ray or per hit), read by JavaScript through
/// [`mr_out`]: `t` (+inf on a miss), `triangle` (-1), `u`, `v`, and for the all-hits batch
/// the ray of each hit, for closest points the points (three floats each), for winding
/// numbers and signed distances one `f64` per point, for `contains` one byte (1 or 0).
#[derive(Default)]
struct Answers {
    t: Vec<f32>,
    triangle: Vec<i32>,
    /// The instance of each answer, for a scene's queries (-1 where none); empty for a
    /// tree's.
    instance: Vec<i32>,
    u: Vec<f32>,
    v: Vec<f32>,
    ray: Vec<u32>,
    point: Vec<f32>,
    /// A sweep's contact normals, three each ([`mr_sweep_batch`]).
    normal: Vec<f32>,
    number: Vec<f64>,
    inside: Vec<u8>,
    /// A saved tree ([`mr_save`]).
    bytes: Vec<u8>,
}

/// The batches' scratch: a chunk of rays and its answers, one ray's every hit, for a tree
/// and for a scene.
#[derive(Default)]
struct Scratch {
    chunk: Vec<Ray>,
    tree: Vec<Option<meshray::CompactHit>>,
    scene: Vec<Option<SceneCompactHit>>,
    tree_hits: Vec<meshray::CompactHit>,
    scene_hits: Vec<SceneCompactHit>,
}

/// Everything the module holds between calls (one instance is one thread).
#[derive(Default)]
struct State {
    /// Built trees; a handle is an index + 1, and a freed slot is `None`. Shared with the
    /// scenes that place them: a refit or pose after a tree is placed gives the tree a copy
    /// of its own, and the scene keeps the tree as it was placed.
    trees: Vec<Option<Arc<Bvh>>>,
    /// Scenes; a handle is [`SCENE`] + an index + 1.
    scenes: Vec<Option<Scene>>,
    /// Freed scene slots.
    free_scenes: Vec<usize>,
    /// Each tree's rig, when it has one ([`mr_rig`]), by the tree's slot.
    rigs: Vec<Option<Rig>>,
    /// A pose's joint matrices, kept between frames.
    matrices: Vec<Matrix4<f32>>,
    /// Freed slots, reused by the next build.
    free: Vec<usize>,
    /// The next mesh's vertices and triangles, written by JavaScript.
    positions: Vec<Point3<f32>>,
    triangles: Vec<[u32; 3]>,
    /// Rays (`ox oy oz dx dy dz` per ray) or points (`x y z`), written by JavaScript.
    input: Vec<f32>,
    /// A saved tree to load ([`mr_load`]), written by JavaScript.
    staged_bytes: Vec<u8>,
    /// Per-ray ranges of the next batch (`near far` per ray, [`mr_ranges`]), written by
    /// JavaScript; used when a batch call's `near` is NaN.
    ranges: Vec<f32>,
    /// The kernel's answers of a GPU batch, written by JavaScript ([`mr_gpu_answers`]).
    gpu_answers: Vec<GpuAnswer>,
    /// A GPU batch's rays as the kernel reads them ([`mr_gpu_rays`]).
    gpu_rays: Vec<GpuRay>,
    /// A tree's words for the GPU ([`mr_gpu_tree`]).
    gpu_words: Vec<u32>,
    /// What the last GPU batch's finish counted ([`mr_gpu_finish`]).
    gpu_stats: [f64; 6],
    answers: Answers,
    /// The single-ray answer: `t u v px py pz nx ny nz front` (front 1 or 0).
    hit: [f32; 10],
    /// The single-ray answer's instance (a scene's; -1 for a tree's).
    hit_instance: i32,
    /// Scratch for the batches, kept between calls.
    scratch: Scratch,
    /// The last error's message (UTF-8).
    error: String,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

impl State {
    fn fail(&mut self, code: i32, message: impl Into<String>) -> i32 {
        self.error = message.into();
        code
    }

    /// Fails with the bad-handle status for `handle`.
    fn bad_handle(&mut self, handle: u32) -> i32 {
        self.fail(BAD_HANDLE, freed(handle))
    }

    /// Keeps a new tree in a free slot (or a new one); returns its handle.
    fn keep(&mut self, tree: Bvh) -> i32 {
        let tree = Arc::new(tree);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.trees[slot] = Some(tree);
                slot
            }
            None => {
                self.trees.push(Some(tree));
                self.trees.len() - 1
            }
        };
        i32::try_from(slot + 1).unwrap_or(BAD_INPUT)
    }

    fn tree(&self, handle: u32) -> Option<&Bvh> {
        let slot = (handle as usize).checked_sub(1)?;
        self.trees.get(slot)?.as_deref()
    }

    /// The geometry of `handle`: a tree, or a scene.
    fn geometry(&self, handle: u32) -> Option<Geometry<'_>> {
        if handle & SCENE != 0 {
            let slot = ((handle & !SCENE) as usize).checked_sub(1)?;
            return self.scenes.get(slot)?.as_ref().map(Geometry::Scene);
        }
        self.tree(handle).map(Geometry::Mesh)
    }

    /// Splits the state into the geometry (or a bad-handle status) and the buffers the
    /// queries read and write.
    fn parts(&mut self, handle: u32) -> Result<(Geometry<'_>, &[f32], &mut Answers), i32> {
        let geometry = if handle & SCENE != 0 {
            let slot = ((handle & !SCENE) as usize).wrapping_sub(1);
            self.scenes
                .get(slot)
                .and_then(Option::as_ref)
                .map(Geometry::Scene)
        } else {
            let slot = (handle as usize).wrapping_sub(1);
            self.trees
                .get(slot)
                .and_then(Option::as_deref)
                .map(Geometry::Mesh)
        };
        match geometry {
            Some(g) => Ok((g, &self.input, &mut self.answers)),
            // `self.error` directly: `bad_handle` would borrow all of `self`.
            None => {
                self.error = freed(handle);
                Err(BAD_HANDLE)
            }
        }
    }
}

/// What a query is asked of: a tree, or a scene of placed trees.
#[derive(Clone, Copy)]
enum Geometry<'a> {
    Mesh(&'a Bvh),
    Scene(&'a Scene),
}

/// Runs `$body` with `$g` bound to the geometry (`&Bvh` or `&Scene`): the body, generic code
/// over the library's query traits, is written once.
macro_rules! on_geometry {
    ($geometry:expr, $g:ident => $body:expr) => {
        match $geometry {
            Geometry::Mesh($g) => $body,
            Geometry::Scene($g) => $body,
        }
    };
}

/// The message of a bad handle.
fn freed(handle: u32) -> String {
    if handle & SCENE != 0 {
        return format!("scene {} was freed or never made", handle & !SCENE);
    }
    format!("tree {handle} was freed or never built")
}

/// Resizes `v` to `n` default elements, reporting instead of aborting when the memory is
/// not there.
fn resize<T: Default + Clone>(v: &mut Vec<T>, n: usize) -> bool {
    v.clear();
    if v.try_reserve(n).is_err() {
        return false;
    }
    v.resize(n, T::default());
    true
}

/// The query options of `flags` (bit 0 watertight, bit 1 cull back faces, bit 2 cull front
/// faces; both cull bits are refused by the caller).
fn options(flags: u32) -> QueryOptions {
    QueryOptions {
        watertight: flags & WATERTIGHT != 0,
        culling: if flags & CULL_BACK != 0 {
            Culling::Back
        } else if flags & CULL_FRONT != 0 {
            Culling::Front
        } else {
            Culling::None
        },
    }
}

/// Refuses a NaN or negative `near`, a NaN `far`, and both cull bits at once.
fn check_query(state: &mut State, near: f32, far: f32, flags: u32) -> i32 {
    if near.is_nan() || near < 0.0 || far.is_nan() {
        return state.fail(
            BAD_INPUT,
            format!("near must be >= 0 and far not NaN (near {near}, far {far})"),
        );
    }
    if flags & CULL_BACK != 0 && flags & CULL_FRONT != 0 {
        return state.fail(BAD_INPUT, "cull the back faces or the front ones, not both");
    }
    OK
}

/// The `k`-th ray of `input`. A NaN, infinite or zero direction makes a ray that hits
/// nothing (the library's documented "no hit").
fn ray_at(input: &[f32], k: usize, near: f32, far: f32) -> Ray {
    let r = &input[6 * k..6 * k + 6];
    Ray::with_range([r[0], r[1], r[2]], [r[3], r[4], r[5]], near, far)
}

/// The range of a batch's ray `k`: `near` and `far` for all, or per ray from `ranges` when
/// the batch's `near` is NaN (JavaScript checked them: near >= 0, far not NaN).
fn range_of(ranges: &[f32], k: usize, near: f32, far: f32) -> (f32, f32) {
    if near.is_nan() {
        (ranges[2 * k], ranges[2 * k + 1])
    } else {
        (near, far)
    }
}

/// Makes room for `n` rays' ranges (`near far` each) at [`mr_ranges_ptr`], for a batch
/// called with `near` NaN.
#[unsafe(no_mangle)]
pub extern "C" fn mr_ranges(n: usize) -> i32 {
    with(|s| match n.checked_mul(2) {
        Some(len) if resize(&mut s.ranges, len) => OK,
        _ => s.fail(NO_MEMORY, format!("no memory for {n} ray ranges")),
    })
}

/// Where JavaScript writes the per-ray ranges.
#[unsafe(no_mangle)]
pub extern "C" fn mr_ranges_ptr() -> *mut f32 {
    with(|s| s.ranges.as_mut_ptr())
}

/// Checks a batch's range arguments: NaN `near` asks for per-ray ranges, which must have
/// room for `n` rays.
fn check_batch(s: &mut State, n: usize, near: f32, far: f32, flags: u32) -> i32 {
    if near.is_nan() {
        if n.checked_mul(2).is_none_or(|len| len > s.ranges.len()) {
            return s.fail(
                BAD_INPUT,
                format!("{n} ray ranges asked, room made for {}", s.ranges.len() / 2),
            );
        }
        return check_query(s, 0.0, 0.0, flags);
    }
    check_query(s, near, far, flags)
}

/// The message of the last failed call: its address in memory (UTF-8, [`mr_error_len`]
/// bytes).
#[unsafe(no_mangle)]
pub extern "C" fn mr_error() -> *const u8 {
    with(|s| s.error.as_ptr())
}

/// The length in bytes of [`mr_error`]'s message.
#[unsafe(no_mangle)]
pub extern "C" fn mr_error_len() -> usize {
    with(|s| s.error.len())
}

/// Makes room for the next mesh: `vertices` points (three floats each, at
/// [`mr_staged_positions`]) and `triangles` index triples (at [`mr_staged_triangles`]).
#[unsafe(no_mangle)]
pub extern "C" fn mr_stage_mesh(vertices: usize, triangles: usize) -> i32 {
    with(|s| {
        if triangles > MAX_TRIANGLES {
            return s.fail(
                BAD_INPUT,
                format!(
                    "{triangles} triangles: in WebAssembly's 4 GiB meshray builds at most \
                     {MAX_TRIANGLES} (a build takes up to 160 bytes per triangle at its peak)"
                ),
            );
        }
        if !resize(&mut s.positions, vertices) || !resize(&mut s.triangles, triangles) {
            s.positions = Vec::new();
            s.triangles = Vec::new();
            return s.fail(
                NO_MEMORY,
                format!("no memory for a mesh of {vertices} vertices and {triangles} triangles"),
            );
        }
        OK
    })
}

/// Where JavaScript writes the staged mesh's vertex coordinates (`x y z` per vertex).
#[unsafe(no_mangle)]
pub extern "C" fn mr_staged_positions() -> *mut f32 {
    with(|s| s.positions.as_mut_ptr().cast())
}

/// Where JavaScript writes the staged mesh's triangles (three `u32` vertex indices each).
#[unsafe(no_mangle)]
pub extern "C" fn mr_staged_triangles() -> *mut u32 {
    with(|s| s.triangles.as_mut_ptr().cast())
}

/// Builds a tree of the staged mesh (which it takes) at `quality` (0 fast, 1 default,
/// 2 high). Returns the tree's handle (≥ 1), or a negative status: the mesh is checked
/// first (indices in range, finite coordinates, at least one triangle).
#[unsafe(no_mangle)]
pub extern "C" fn mr_build(quality: u32) -> i32 {
    with(|s| {
        let quality = match quality {
            0 => BuildQuality::Fast,
            1 => BuildQuality::Default,
            2 => BuildQuality::High,
            q => return s.fail(BAD_INPUT, format!("unknown build quality {q}")),
        };
        let positions = std::mem::take(&mut s.positions);
        let triangles = std::mem::take(&mut s.triangles);
        let mesh = match Mesh::from_buffers(positions, triangles) {
            Ok(mesh) => mesh,
            Err(e) => return s.fail(BAD_INPUT, e.to_string()),
        };
        let options = BuildOptions {
            quality,
            ..Default::default()
        };
        let tree = Bvh::build_with(mesh, &options);
        s.keep(tree)
    })
}

/// Refits tree `handle` to the staged positions ([`mr_stage_mesh`] with the mesh's vertex
/// count and no triangles, then [`mr_staged_positions`]): every box follows the moved
/// vertices, the tree's shape stays, and queries answer for the new positions exactly. The
/// staged buffer is kept for the next refit (no allocation per frame). On an error (another
/// vertex count, a NaN, infinite or out-of-range coordinate) the tree is unchanged.
#[unsafe(no_mangle)]
pub extern "C" fn mr_refit(handle: u32) -> i32 {
    with(|s| {
        let slot = (handle as usize).wrapping_sub(1);
        let Some(Some(tree)) = s.trees.get_mut(slot) else {
            return s.bad_handle(handle);
        };
        match Arc::make_mut(tree).refit(&s.positions) {
            Ok(()) => OK,
            Err(e) => s.fail(BAD_INPUT, e.to_string()),
        }
    })
}

/// Saves tree `handle` as bytes (meshray's saved format: the mesh and the tree's shape, with
/// a checksum; postcard) into the `bytes` answer ([`mr_out`] 8); returns their count, or a
/// negative status.
#[unsafe(no_mangle)]
pub extern "C" fn mr_save(handle: u32) -> i64 {
    with(|s| {
        let mut bytes = std::mem::take(&mut s.answers.bytes);
        bytes.clear();
        let Some(tree) = s.tree(handle) else {
            s.answers.bytes = bytes;
            return i64::from(s.bad_handle(handle));
        };
        match postcard::to_extend(tree, bytes) {
            Ok(bytes) => {
                s.answers.bytes = bytes;
                s.answers.bytes.len() as i64
            }
            Err(e) => i64::from(s.fail(NO_MEMORY, format!("could not save the tree: {e}"))),
        }
    })
}

/// Makes room for `len` bytes of a saved tree at [`mr_staged_bytes`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_stage_bytes(len: usize) -> i32 {
    with(|s| {
        if resize(&mut s.staged_bytes, len) {
            OK
        } else {
            s.fail(NO_MEMORY, format!("no memory for {len} bytes"))
        }
    })
}

/// Where JavaScript writes a saved tree's bytes.
#[unsafe(no_mangle)]
pub extern "C" fn mr_staged_bytes() -> *mut u8 {
    with(|s| s.staged_bytes.as_mut_ptr())
}

/// Loads the staged bytes as a tree, checked whole as the Rust crate loads a saved tree (the
/// format's name and version, the checksum, every index and invariant; boxes recomputed), so
/// bytes from anywhere are safe. Returns the tree's handle (≥ 1), or a negative status.
#[unsafe(no_mangle)]
pub extern "C" fn mr_load() -> i32 {
    with(|s| {
        let bytes = std::mem::take(&mut s.staged_bytes);
        // The record first, then the bytes freed, then the tree: the tree's leaves can take
        // the bytes' place in memory.
        let saved = postcard::from_bytes::<meshray::tree::SavedBvh>(&bytes);
        drop(bytes);
        match saved
            .map_err(|e| e.to_string())
            .and_then(|saved| Bvh::try_from(saved).map_err(|e| e.to_string()))
        {
            Ok(tree) => s.keep(tree),
            Err(e) => s.fail(BAD_INPUT, format!("not a saved meshray tree: {e}")),
        }
    })
}

/// Gives tree `handle` a rig from the numbers at [`mr_input`] (see [`mr_points`]): with
/// `skinned` nonzero, four joint numbers then four weights per vertex (`8 · vertices`
/// floats; joint numbers whole, below 65,536), then `targets` morph targets of three deltas
/// per vertex. Replaces its rig, if any.
#[unsafe(no_mangle)]
pub extern "C" fn mr_rig(handle: u32, skinned: u32, targets: usize) -> i32 {
    with(|s| {
        let Some(tree) = s.tree(handle) else {
            return s.bad_handle(handle);
        };
        let n = tree.mesh().positions().len();
        let skin = if skinned != 0 { 8 * n } else { 0 };
        let need = targets.checked_mul(3 * n).and_then(|t| t.checked_add(skin));
        if need.is_none_or(|need| need > s.input.len()) {
            return s.fail(BAD_INPUT, format!("a rig of {n} vertices and {targets} morph targets needs more numbers than were staged"));
        }
        let input = &s.input;
        let mut rig = Rig::new(tree.mesh());
        if skinned != 0 {
            let joint =
                |x: f32| ((0.0..65536.0).contains(&x) && x.fract() == 0.0).then_some(x as u16);
            let joints: Option<Vec<[u16; 4]>> = input[..4 * n]
                .chunks_exact(4)
                .map(|j| Some([joint(j[0])?, joint(j[1])?, joint(j[2])?, joint(j[3])?]))
                .collect();
            let Some(joints) = joints else {
                return s.fail(
                    BAD_INPUT,
                    "joint numbers must be whole numbers from 0 to 65535",
                );
            };
            let weights = input[4 * n..8 * n]
                .chunks_exact(4)
                .map(|w| [w[0], w[1], w[2], w[3]])
                .collect();
            rig = match rig.with_skin(joints, weights) {
                Ok(rig) => rig,
                Err(e) => return s.fail(BAD_INPUT, e.to_string()),
            };
        }
        if targets > 0 {
            let deltas = input[skin..skin + 3 * n * targets]
                .chunks_exact(3 * n)
                .map(|t| {
                    t.chunks_exact(3)
                        .map(|d| Vector3::new(d[0], d[1], d[2]))
                        .collect()
                })
                .collect();
            rig = match rig.with_morph_targets(deltas) {
                Ok(rig) => rig,
                Err(e) => return s.fail(BAD_INPUT, e.to_string()),
            };
        }
        let slot = handle as usize - 1;
        if s.rigs.len() <= slot {
            s.rigs.resize_with(slot + 1, || None);
        }
        s.rigs[slot] = Some(rig);
        OK
    })
}

/// Poses tree `handle` with its rig ([`mr_rig`]): `joints` matrices (16 floats each,
/// column-major) then `targets` morph weights at [`mr_input`]; refits the tree, rebuilding
/// it when refitting has spoiled it (`Bvh::pose`). Returns 1 when it rebuilt, 0 when it
/// refit, or a negative status (the tree then unchanged).
#[unsafe(no_mangle)]
pub extern "C" fn mr_pose(handle: u32, joints: usize, targets: usize) -> i32 {
    with(|s| {
        let slot = (handle as usize).wrapping_sub(1);
        if s.tree(handle).is_none() {
            return s.bad_handle(handle);
        }
        if s.rigs.get(slot).is_none_or(Option::is_none) {
            return s.fail(BAD_INPUT, "this tree has no rig");
        }
        if joints
            .checked_mul(16)
            .and_then(|j| j.checked_add(targets))
            .is_none_or(|need| need > s.input.len())
        {
            return s.fail(BAD_INPUT, "a pose needs more numbers than were staged");
        }
        let mut matrices = std::mem::take(&mut s.matrices);
        matrices.clear();
        matrices.extend(
            s.input[..16 * joints]
                .chunks_exact(16)
                .map(Matrix4::from_column_slice),
        );
        let weights = &s.input[16 * joints..16 * joints + targets];
        let pose = Pose {
            joints: &matrices,
            morph_weights: weights,
        };
        let (Some(Some(tree)), Some(Some(rig))) = (s.trees.get_mut(slot), s.rigs.get(slot)) else {
            unreachable!("checked above");
        };
        let result = Arc::make_mut(tree).pose(rig, &pose);
        s.matrices = matrices;
        match result {
            Ok(update) => i32::from(update.rebuilt),
            Err(e) => s.fail(BAD_INPUT, e.to_string()),
        }
    })
}

/// Where tree `handle`'s mesh keeps its vertex positions (`x y z` per vertex, f32): valid
/// until the next call that changes the tree (a pose swaps the buffer). Null for a bad
/// handle.
#[unsafe(no_mangle)]
pub extern "C" fn mr_positions(handle: u32) -> *const f32 {
    with(|s| {
        s.tree(handle)
            .map_or(std::ptr::null(), |t| t.mesh().positions().as_ptr().cast())
    })
}

/// Frees a tree. Freeing a freed or unknown handle is a bad-handle status, not a crash.
#[unsafe(no_mangle)]
pub extern "C" fn mr_free(handle: u32) -> i32 {
    with(|s| {
        if handle & SCENE != 0 {
            let slot = ((handle & !SCENE) as usize).wrapping_sub(1);
            return match s.scenes.get_mut(slot) {
                Some(scene @ Some(_)) => {
                    *scene = None;
                    s.free_scenes.push(slot);
                    OK
                }
                _ => s.bad_handle(handle),
            };
        }
        let slot = (handle as usize).wrapping_sub(1);
        match s.trees.get_mut(slot) {
            Some(tree @ Some(_)) => {
                *tree = None;
                if let Some(rig) = s.rigs.get_mut(slot) {
                    *rig = None;
                }
                s.free.push(slot);
                OK
            }
            _ => s.bad_handle(handle),
        }
    })
}

/// A new, empty scene: its handle (≥ [`SCENE`]), or a negative status. Freed with
/// [`mr_free`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_scene_new() -> i32 {
    with(|s| {
        let slot = match s.free_scenes.pop() {
            Some(slot) => {
                s.scenes[slot] = Some(Scene::new());
                slot
            }
            None => {
                s.scenes.push(Some(Scene::new()));
                s.scenes.len() - 1
            }
        };
        match u32::try_from(slot + 1) {
            Ok(n) if n < SCENE => (SCENE | n) as i32,
            _ => s.fail(NO_MEMORY, "too many scenes"),
        }
    })
}

/// The 4 × 4 transform (16 floats, column-major as three.js keeps a `Matrix4`) staged at
/// [`mr_input`] (see [`mr_points`]).
fn staged_transform(s: &mut State) -> Result<Matrix4<f32>, i32> {
    if s.input.len() < 16 {
        return Err(s.fail(BAD_INPUT, "a transform needs 16 numbers (column-major)"));
    }
    Ok(Matrix4::from_column_slice(&s.input[..16]))
}

/// The scene of `handle`, mutable, or a bad-handle status.
fn scene_mut(s: &mut State, handle: u32) -> Result<&mut Scene, i32> {
    let slot = ((handle & !SCENE) as usize).wrapping_sub(1);
    if handle & SCENE == 0 || !matches!(s.scenes.get(slot), Some(Some(_))) {
        return Err(s.fail(BAD_HANDLE, freed(handle | SCENE)));
    }
    Ok(s.scenes[slot].as_mut().expect("checked above"))
}

/// `edit(scene, transform)` with scene `scene` and the transform staged at [`mr_input`]:
/// its answer, or the status of a bad handle, a short transform or the edit's error.
fn place<T>(
    s: &mut State,
    scene: u32,
    edit: impl FnOnce(&mut Scene, Matrix4<f32>) -> meshray::Result<T>,
) -> Result<T, i32> {
    let transform = staged_transform(s)?;
    let placed = scene_mut(s, scene)?;
    edit(placed, transform).map_err(|e| s.fail(BAD_INPUT, e.to_string()))
}

/// Places tree `tree` in scene `scene` by the transform staged at [`mr_input`]: the new
/// instance's id (≥ 0), or a negative status (a bad handle; a singular, non-affine or
/// out-of-range transform). The scene holds the tree as it is now (a later refit or pose
/// of the tree gives the tree a copy of its own).
#[unsafe(no_mangle)]
pub extern "C" fn mr_scene_add(scene: u32, tree: u32) -> i32 {
    with(|s| {
        let Some(bvh) = (tree as usize)
            .checked_sub(1)
            .and_then(|slot| s.trees.get(slot)?.clone())
        else {
            return s.bad_handle(tree);
        };
        match place(s, scene, |placed, transform| placed.add(bvh, transform)) {
            Ok(id) => i32::try_from(id).unwrap_or(BAD_INPUT),
            Err(code) => code,
        }
    })
}

/// Moves instance `id` of scene `scene` to the transform staged at [`mr_input`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_scene_set_transform(scene: u32, id: u32) -> i32 {
    with(|s| {
        match place(s, scene, |placed, transform| {
            placed.set_transform(id, transform)
        }) {
            Ok(()) => OK,
            Err(code) => code,
        }
    })
}

/// Removes instance `id` from scene `scene` (its id may be reused by a later add).
#[unsafe(no_mangle)]
pub extern "C" fn mr_scene_remove(scene: u32, id: u32) -> i32 {
    with(|s| {
        let removed = match scene_mut(s, scene) {
            Ok(placed) => placed.remove(id).map(drop),
            Err(code) => return code,
        };
        match removed {
            Ok(()) => OK,
            Err(e) => s.fail(BAD_INPUT, e.to_string()),
        }
    })
}

/// How many instances scene `scene` holds, or a bad-handle status.
#[unsafe(no_mangle)]
pub extern "C" fn mr_scene_len(scene: u32) -> i32 {
    with(|s| match scene_mut(s, scene) {
        Ok(placed) => i32::try_from(placed.len()).unwrap_or(i32::MAX),
        Err(code) => code,
    })
}

/// The tree's triangle count (at most [`MAX_TRIANGLES`]), or a bad-handle status.
#[unsafe(no_mangle)]
pub extern "C" fn mr_triangle_count(handle: u32) -> i32 {
    with(|s| match s.tree(handle) {
        Some(tree) => i32::try_from(tree.mesh().triangle_count()).unwrap_or(i32::MAX),
        None => s.bad_handle(handle),
    })
}

/// The tree's bounds, `min x y z, max x y z`, into the single-hit buffer ([`mr_hit`]).
#[unsafe(no_mangle)]
pub extern "C" fn mr_bounds(handle: u32) -> i32 {
    with(|s| match s.tree(handle).map(Bvh::bounds) {
        Some(b) => {
            s.hit[..6].copy_from_slice(&[b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z]);
            OK
        }
        None => s.bad_handle(handle),
    })
}

/// The single-ray answer buffer: `t u v px py pz nx ny nz front` after [`mr_closest`] or
/// [`mr_any`] found a hit.
#[unsafe(no_mangle)]
pub extern "C" fn mr_hit() -> *const f32 {
    with(|s| s.hit.as_ptr())
}

/// The single-ray answer's instance (a scene's; -1 for a tree's), after [`mr_cast`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_hit_instance() -> i32 {
    with(|s| s.hit_instance)
}

/// Single-ray queries: the closest hit with its point, normal and side.
const CLOSEST: u32 = 0;
/// Single-ray queries: any hit, with its details.
const ANY: u32 = 1;
/// Single-ray queries: the closest hit's `t u v` only (the three.js adapter's, which reads
/// the mesh itself): no second read of the triangle.
const CLOSEST_SHORT: u32 = 2;

/// One ray's hit by `mode` ([`CLOSEST`], [`ANY`] or [`CLOSEST_SHORT`]): its triangle (≥ 0,
/// details in [`mr_hit`]), -1 for no hit, or a failure's status minus one (-2 a bad handle,
/// -3 bad input).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mr_cast(
    handle: u32,
    ox: f32,
    oy: f32,
    oz: f32,
    dx: f32,
    dy: f32,
    dz: f32,
    near: f32,
    far: f32,
    flags: u32,
    mode: u32,
) -> i32 {
    with(|s| {
        let status = check_query(s, near, far, flags);
        if status != OK {
            return status - 1;
        }
        let query = match mode {
            ANY => RayQuery::Any,
            CLOSEST | CLOSEST_SHORT => RayQuery::Closest,
            m => return s.fail(BAD_INPUT, format!("unknown query mode {m}")) - 1,
        };
        let Some(geometry) = s.geometry(handle) else {
            return s.bad_handle(handle) - 1;
        };
        let ray = Ray::with_range([ox, oy, oz], [dx, dy, dz], near, far);
        let found =
            on_geometry!(geometry, g => one_hit(g, &ray, query, flags, mode == CLOSEST_SHORT));
        match found {
            Some((instance, triangle, hit)) => {
                s.hit_instance = instance;
                let n = if mode == CLOSEST_SHORT { 3 } else { 10 };
                s.hit[..n].copy_from_slice(&hit[..n]);
                triangle as i32
            }
            None => -1,
        }
    })
}

/// A sphere of `radius` (a capsule of axis `(ax, ay, az)`, when not zero) moving along the
/// ray `o + t·d`, `near <= t <= far`: the triangle it first touches (≥ 0; `t u v px py pz
/// nx ny nz` in [`mr_hit`], the instance in [`mr_hit_instance`]), -1 when it touches
/// nothing, or a failure's status minus one (-2 a bad handle, -3 bad input: a negative,
/// NaN or infinite radius, a non-finite axis, a bad range or culling).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mr_sweep(
    handle: u32,
    ox: f32,
    oy: f32,
    oz: f32,
    dx: f32,
    dy: f32,
    dz: f32,
    ax: f32,
    ay: f32,
    az: f32,
    radius: f32,
    near: f32,
    far: f32,
    flags: u32,
) -> i32 {
    with(|s| {
        let status = check_query(s, near, far, flags);
        if status != OK {
            return status - 1;
        }
        let Some(geometry) = s.geometry(handle) else {
            return s.bad_handle(handle) - 1;
        };
        let ray = Ray::with_range([ox, oy, oz], [dx, dy, dz], near, far);
        let found = on_geometry!(geometry, g => one_sweep(g, &ray, [ax, ay, az], radius, flags));
        match found {
            Ok(Some((instance, h))) => {
                s.hit_instance = instance;
                s.hit[..9].copy_from_slice(&[
                    h.t, h.u, h.v, h.point.x, h.point.y, h.point.z, h.normal.x, h.normal.y,
                    h.normal.z,
                ]);
                h.triangle as i32
            }
            Ok(None) => -1,
            Err(e) => s.fail(BAD_INPUT, e.to_string()) - 1,
        }
    })
}

/// One sweep through the query traits: the instance (-1 for a tree's) and the contact.
fn one_sweep<G: Sweep>(
    g: &G,
    ray: &Ray,
    axis: [f32; 3],
    radius: f32,
    flags: u32,
) -> meshray::Result<Option<(i32, SweepHit)>>
where
    G::SweepHit: MeshSweep,
{
    let found = g.cast_capsule(ray, axis, radius, &G::Options::from(options(flags)))?;
    Ok(found.map(|h| h.mesh_sweep()))
}

/// A sweep's answer as a tree's: the instance (-1 for a tree's) and the contact.
trait MeshSweep {
    fn mesh_sweep(&self) -> (i32, SweepHit);
}

impl MeshSweep for SweepHit {
    fn mesh_sweep(&self) -> (i32, SweepHit) {
        (-1, *self)
    }
}

impl MeshSweep for SceneSweepHit {
    fn mesh_sweep(&self) -> (i32, SweepHit) {
        (self.instance as i32, self.hit)
    }
}

/// One ray's hit through the query traits: its instance (-1 for a tree's), triangle, and
/// `t u v` (`short`) or `t u v px py pz nx ny nz front`.
fn one_hit<G: RayCast>(
    g: &G,
    ray: &Ray,
    query: RayQuery,
    flags: u32,
    short: bool,
) -> Option<(i32, u32, [f32; 10])>
where
    G::Hit: WholeHit,
{
    let compact = g.cast_ray(ray, query, &G::Options::from(options(flags)))?;
    let (instance, h) = G::mesh_hit(&compact);
    let instance = instance.map_or(-1, |id| id as i32);
    let mut out = [h.t, h.u, h.v, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    if !short {
        let whole = g.hit_details(ray, &compact)?;
        let w = whole.hit();
        out[3..].copy_from_slice(&[
            w.point.x,
            w.point.y,
            w.point.z,
            w.normal.x,
            w.normal.y,
            w.normal.z,
            f32::from(u8::from(w.front_face)),
        ]);
    }
    Some((instance, h.triangle, out))
}

/// A whole hit as a tree's: a scene's is in world space.
trait WholeHit {
    fn hit(&self) -> &meshray::Hit;
}

impl WholeHit for meshray::Hit {
    fn hit(&self) -> &meshray::Hit {
        self
    }
}

impl WholeHit for meshray::query::SceneHit {
    fn hit(&self) -> &meshray::Hit {
        &self.hit
    }
}

/// Makes room for `n` rays (six floats each: origin, direction) at [`mr_input`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_rays(n: usize) -> i32 {
    input(n, 6, "rays")
}

/// Makes room for `n` points (three floats each) at [`mr_input`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_points(n: usize) -> i32 {
    input(n, 3, "points")
}

fn input(n: usize, floats: usize, what: &str) -> i32 {
    with(|s| match n.checked_mul(floats) {
        Some(len) if resize(&mut s.input, len) => OK,
        _ => s.fail(NO_MEMORY, format!("no memory for {n} {what}")),
    })
}

/// Where JavaScript writes the rays or points of the next batch.
#[unsafe(no_mangle)]
pub extern "C" fn mr_input() -> *mut f32 {
    with(|s| s.input.as_mut_ptr())
}

/// An answer buffer of the last batch: 0 `t` (f32), 1 `triangle` (i32), 2 `u`, 3 `v` (f32),
/// 4 `ray` (u32, all-hits), 5 `point` (three f32 each, closest points), 6 `number` (f64,
/// winding numbers and signed distances), 7 `inside` (u8, 1 or 0), 8 `bytes` (a saved tree),
/// 9 `instance` (i32, a scene's answers: the instance of each, -1 where none), 10 `normal`
/// (three f32 each, sweeps).
#[unsafe(no_mangle)]
pub extern "C" fn mr_out(k: u32) -> *const u8 {
    with(|s| {
        let a = &s.answers;
        match k {
            0 => a.t.as_ptr().cast(),
            1 => a.triangle.as_ptr().cast(),
            2 => a.u.as_ptr().cast(),
            3 => a.v.as_ptr().cast(),
            4 => a.ray.as_ptr().cast(),
            5 => a.point.as_ptr().cast(),
            6 => a.number.as_ptr().cast(),
            7 => a.inside.as_ptr(),
            9 => a.instance.as_ptr().cast(),
            10 => a.normal.as_ptr().cast(),
            _ => a.bytes.as_ptr(),
        }
    })
}

/// Sizes the per-ray answers for `n` rays, misses throughout (`t` +inf, `triangle` -1, `u`
/// and `v` NaN); false when out of memory.
fn per_ray(a: &mut Answers, n: usize) -> bool {
    let ok = resize(&mut a.t, n)
        && resize(&mut a.triangle, n)
        && resize(&mut a.instance, n)
        && resize(&mut a.u, n)
        && resize(&mut a.v, n);
    if ok {
        a.t.fill(f32::INFINITY);
        a.triangle.fill(-1);
        a.instance.fill(-1);
        a.u.fill(f32::NAN);
        a.v.fill(f32::NAN);
    }
    ok
}

/// The closest hit (`any` 0) or any hit (`any` 1) of each of the `n` rays at [`mr_input`]
/// (see [`mr_rays`]), into the answers `t`, `triangle`, `u`, `v` ([`mr_out`]); `near` NaN:
/// each ray's range from [`mr_ranges`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_cast_batch(
    handle: u32,
    n: usize,
    near: f32,
    far: f32,
    flags: u32,
    any: u32,
) -> i32 {
    let query = if any != 0 {
        RayQuery::Any
    } else {
        RayQuery::Closest
    };
    let status = with(|s| {
        on_rays(
            s,
            (handle, n, near, far, flags),
            |batch, geometry, answers, scratch| {
                if !per_ray(answers, n) {
                    return Err((NO_MEMORY, format!("no memory for the answers of {n} rays")));
                }
                let chunk = &mut scratch.chunk;
                match geometry {
                    Geometry::Mesh(g) => batch.cast(g, n, query, chunk, &mut scratch.tree, answers),
                    Geometry::Scene(g) => {
                        batch.cast(g, n, query, chunk, &mut scratch.scene, answers)
                    }
                }
                Ok(0)
            },
        )
    });
    i32::try_from(status).unwrap_or(BAD_INPUT)
}

/// A sphere of `radius` (a capsule of axis `(ax, ay, az)`, when not zero) moving along each
/// of the `n` rays at [`mr_input`] (see [`mr_rays`]): where each first touches, into the
/// answers `t`, `triangle`, `u`, `v`, `point` and `normal` (three f32 each; NaN where it
/// touches nothing) ([`mr_out`]); `near` NaN: each ray's range from [`mr_ranges`]. A
/// negative, NaN or infinite radius or a non-finite axis refuses the whole batch (bad
/// input), an empty one too.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mr_sweep_batch(
    handle: u32,
    n: usize,
    near: f32,
    far: f32,
    flags: u32,
    ax: f32,
    ay: f32,
    az: f32,
    radius: f32,
) -> i32 {
    let status = with(|s| {
        on_rays(s, (handle, n, near, far, flags), |batch, geometry, a, _| {
            if !(per_ray(a, n) && resize(&mut a.point, 3 * n) && resize(&mut a.normal, 3 * n)) {
                return Err((
                    NO_MEMORY,
                    format!("no memory for the answers of {n} sweeps"),
                ));
            }
            a.point.fill(f32::NAN);
            a.normal.fill(f32::NAN);
            let shape = ([ax, ay, az], radius);
            on_geometry!(geometry, g => batch.sweep(g, n, shape, a))
                .map_err(|e| (BAD_INPUT, e.to_string()))?;
            Ok(0)
        })
    });
    i32::try_from(status).unwrap_or(BAD_INPUT)
}

/// A batch query on the `n` rays staged at [`mr_input`] (`args`: the handle, `n`, `near`,
/// `far`, the flags): checks them and the handle, then runs `query` with the rays, the
/// geometry, the answers and the scratch (kept for the next call). Returns `query`'s count,
/// or a negative status.
fn on_rays(
    s: &mut State,
    (handle, n, near, far, flags): (u32, usize, f32, f32, u32),
    query: impl FnOnce(&Batch, Geometry<'_>, &mut Answers, &mut Scratch) -> Result<i64, (i32, String)>,
) -> i64 {
    let status = check_batch(s, n, near, far, flags);
    if status != OK {
        return i64::from(status);
    }
    if n.checked_mul(6).is_none_or(|len| len > s.input.len()) {
        return i64::from(s.fail(
            BAD_INPUT,
            format!("{n} rays asked, room made for {}", s.input.len() / 6),
        ));
    }
    let ranges = std::mem::take(&mut s.ranges);
    let mut scratch = std::mem::take(&mut s.scratch);
    let answered = match s.parts(handle) {
        Ok((geometry, input, answers)) => {
            let batch = Batch {
                input,
                ranges: &ranges,
                near,
                far,
                flags,
            };
            query(&batch, geometry, answers, &mut scratch).map_err(|(code, why)| {
                s.error = why;
                code
            })
        }
        Err(code) => Err(code),
    };
    (s.scratch, s.ranges) = (scratch, ranges);
    answered.unwrap_or_else(i64::from)
}

/// A batch's rays as JavaScript staged them: ray `k` from `input`, over `near..far` or,
/// when `near` is NaN, its own range from `ranges`.
struct Batch<'a> {
    input: &'a [f32],
    ranges: &'a [f32],
    near: f32,
    far: f32,
    flags: u32,
}

impl Batch<'_> {
    /// Ray `k`.
    fn ray(&self, k: usize) -> Ray {
        let (near, far) = range_of(self.ranges, k, self.near, self.far);
        ray_at(self.input, k, near, far)
    }

    /// The batch query chunk by chunk (so that the rays made from the input take a chunk's
    /// memory, not the whole batch's), each hit into `answers`.
    fn cast<G: RayCast>(
        &self,
        g: &G,
        n: usize,
        query: RayQuery,
        chunk: &mut Vec<Ray>,
        hits: &mut Vec<Option<G::Compact>>,
        answers: &mut Answers,
    ) {
        let options = G::Options::from(options(self.flags));
        for start in (0..n).step_by(RAYS_PER_CHUNK) {
            let end = (start + RAYS_PER_CHUNK).min(n);
            chunk.clear();
            chunk.extend((start..end).map(|k| self.ray(k)));
            g.cast_rays(chunk, query, &options, hits);
            for (k, hit) in (start..end).zip(hits.drain(..)) {
                if let Some(hit) = hit {
                    let (instance, h) = G::mesh_hit(&hit);
                    answers.t[k] = h.t;
                    answers.triangle[k] = h.triangle as i32;
                    answers.instance[k] = instance.map_or(-1, |id| id as i32);
                    answers.u[k] = h.u;
                    answers.v[k] = h.v;
                }
            }
        }
    }

    /// Each of the `n` rays' sweep of the capsule `(axis, radius)` (a sphere for a zero
    /// axis), its contact into `a`.
    fn sweep<G: Sweep>(
        &self,
        g: &G,
        n: usize,
        (axis, radius): ([f32; 3], f32),
        a: &mut Answers,
    ) -> meshray::Result<()>
    where
        G::SweepHit: MeshSweep,
    {
        let options = G::Options::from(options(self.flags));
        // The shape checked once on a ray that cannot hit (a zero direction answers nothing
        // after the shape's checks), so an empty batch refuses a bad radius as others do.
        g.cast_capsule(&Ray::new([0.0; 3], [0.0; 3]), axis, radius, &options)?;
        for k in 0..n {
            let Some(found) = g.cast_capsule(&self.ray(k), axis, radius, &options)? else {
                continue;
            };
            let (instance, h) = found.mesh_sweep();
            a.t[k] = h.t;
            a.triangle[k] = h.triangle as i32;
            a.instance[k] = instance;
            a.u[k] = h.u;
            a.v[k] = h.v;
            a.point[3 * k..3 * k + 3].copy_from_slice(&[h.point.x, h.point.y, h.point.z]);
            a.normal[3 * k..3 * k + 3].copy_from_slice(&[h.normal.x, h.normal.y, h.normal.z]);
        }
        Ok(())
    }

    /// Every hit of each of the `n` rays, flattened into `a` (ray, t, instance, triangle,
    /// u, v per hit), nearest first per ray.
    fn all_hits<G: RayCast>(
        &self,
        g: &G,
        n: usize,
        scratch: &mut Vec<G::Compact>,
        a: &mut Answers,
    ) {
        let options = G::Options::from(options(self.flags));
        for k in 0..n {
            g.all_triangles(&self.ray(k), &options, scratch);
            for hit in scratch.iter() {
                let (instance, h) = G::mesh_hit(hit);
                a.ray.push(k as u32);
                a.t.push(h.t);
                a.triangle.push(h.triangle as i32);
                a.instance.push(instance.map_or(-1, |id| id as i32));
                a.u.push(h.u);
                a.v.push(h.v);
            }
        }
    }
}

/// Every hit of each of the `n` rays at [`mr_input`], nearest first per ray, flattened:
/// `ray`, `t`, `triangle`, `u`, `v` per hit ([`mr_out`]); `near` NaN: each ray's range from
/// [`mr_ranges`]. Returns the hit count, or a negative status.
#[unsafe(no_mangle)]
pub extern "C" fn mr_all_hits(handle: u32, n: usize, near: f32, far: f32, flags: u32) -> i64 {
    with(|s| {
        on_rays(
            s,
            (handle, n, near, far, flags),
            |batch, geometry, a, scratch| {
                for v in [&mut a.t, &mut a.u, &mut a.v] {
                    v.clear();
                }
                a.triangle.clear();
                a.instance.clear();
                a.ray.clear();
                match geometry {
                    Geometry::Mesh(g) => batch.all_hits(g, n, &mut scratch.tree_hits, a),
                    Geometry::Scene(g) => batch.all_hits(g, n, &mut scratch.scene_hits, a),
                }
                Ok(a.t.len() as i64)
            },
        )
    })
}

/// The nearest point of the mesh to each of the `n` points at [`mr_input`] (see
/// [`mr_points`]) within `max_distance`: `point` (NaN when none), `t` the distance (+inf),
/// `triangle` (-1), `u`, `v` ([`mr_out`]).
#[unsafe(no_mangle)]
pub extern "C" fn mr_closest_points(handle: u32, n: usize, max_distance: f32) -> i32 {
    with(|s| {
        if max_distance.is_nan() || max_distance < 0.0 {
            return bad_max_distance(s, max_distance);
        }
        on_points(s, handle, n, |geometry, input, a| {
            if !per_ray(a, n) || !resize(&mut a.point, 3 * n) {
                return false;
            }
            a.point.fill(f32::NAN);
            on_geometry!(geometry, g => closest_points(g, input, n, max_distance, a));
            true
        })
    })
}

/// The nearest point of `g` to each of the `n` points of `input` into `a`.
fn closest_points<G: PointQuery>(
    g: &G,
    input: &[f32],
    n: usize,
    max_distance: f32,
    a: &mut Answers,
) {
    let options = G::Options::default();
    for k in 0..n {
        if let Some(found) = g.closest_point(point_at(input, k), max_distance, &options) {
            let (instance, c) = G::mesh_point(&found);
            a.t[k] = c.distance;
            a.triangle[k] = c.triangle as i32;
            a.instance[k] = instance.map_or(-1, |id| id as i32);
            a.u[k] = c.u;
            a.v[k] = c.v;
            a.point[3 * k..3 * k + 3].copy_from_slice(&[c.point.x, c.point.y, c.point.z]);
        }
    }
}

/// Refuses a NaN or negative `max_distance`.
fn bad_max_distance(s: &mut State, max_distance: f32) -> i32 {
    s.fail(
        BAD_INPUT,
        format!("max_distance must be >= 0, not {max_distance}"),
    )
}

/// A query on the `n` points at [`mr_input`]: checks the count and the handle, then lets
/// `answer` fill the answers from the tree and the points (it returns `false` when there
/// was no memory for them).
fn on_points(
    s: &mut State,
    handle: u32,
    n: usize,
    answer: impl FnOnce(Geometry<'_>, &[f32], &mut Answers) -> bool,
) -> i32 {
    let status = check_points(s, n);
    if status != OK {
        return status;
    }
    let (geometry, input, a) = match s.parts(handle) {
        Ok(parts) => parts,
        Err(code) => return code,
    };
    if !answer(geometry, input, a) {
        return s.fail(
            NO_MEMORY,
            format!("no memory for the answers of {n} points"),
        );
    }
    OK
}

/// Refuses `n` points when [`mr_points`] made room for fewer.
fn check_points(s: &mut State, n: usize) -> i32 {
    if n.checked_mul(3).is_none_or(|len| len > s.input.len()) {
        return s.fail(
            BAD_INPUT,
            format!("{n} points asked, room made for {}", s.input.len() / 3),
        );
    }
    OK
}

/// The `k`-th point of `input`.
fn point_at(input: &[f32], k: usize) -> [f32; 3] {
    [input[3 * k], input[3 * k + 1], input[3 * k + 2]]
}

/// The generalized winding number of the mesh at each of the `n` points at [`mr_input`]
/// (see [`mr_points`]), into the `number` answer ([`mr_out`] 6; NaN for a NaN or infinite
/// point): the far-field sum with `beta` (at least 1), or with `exact` nonzero every
/// triangle's solid angle (`beta` is then ignored).
#[unsafe(no_mangle)]
pub extern "C" fn mr_winding_numbers(handle: u32, n: usize, beta: f64, exact: u32) -> i32 {
    with(|s| {
        let accuracy = if exact != 0 {
            WindingAccuracy::Exact
        } else if beta.is_nan() || beta < 1.0 {
            return s.fail(
                BAD_INPUT,
                format!(
                    "beta must be >= 1 (2 is Barill et al.'s and libigl's default), not {beta}"
                ),
            );
        } else {
            WindingAccuracy::FarField { beta }
        };
        on_points(s, handle, n, |geometry, input, a| {
            if !resize(&mut a.number, n) {
                return false;
            }
            on_geometry!(geometry, g => {
                for (k, w) in a.number.iter_mut().enumerate() {
                    *w = g.winding_number(point_at(input, k), accuracy, &Default::default());
                }
            });
            true
        })
    })
}

/// Whether each of the `n` points at [`mr_input`] is inside the mesh (its exact winding
/// number is at least ½), into the `inside` answer ([`mr_out`] 7): 1 or 0, 0 for a NaN or
/// infinite point. The first call on a tree makes its lattice of known winding numbers.
#[unsafe(no_mangle)]
pub extern "C" fn mr_contains(handle: u32, n: usize) -> i32 {
    with(|s| {
        on_points(s, handle, n, |geometry, input, a| {
            if !resize(&mut a.inside, n) {
                return false;
            }
            on_geometry!(geometry, g => {
                for (k, inside) in a.inside.iter_mut().enumerate() {
                    *inside = u8::from(g.contains(point_at(input, k), &Default::default()));
                }
            });
            true
        })
    })
}

/// The distance from each of the `n` points at [`mr_input`] to the mesh, negative inside
/// (where [`mr_contains`] says 1), into the `number` answer ([`mr_out`] 6): NaN where no
/// triangle is within `max_distance`, and for a NaN or infinite point.
#[unsafe(no_mangle)]
pub extern "C" fn mr_signed_distances(handle: u32, n: usize, max_distance: f32) -> i32 {
    with(|s| {
        if max_distance.is_nan() || max_distance < 0.0 {
            return bad_max_distance(s, max_distance);
        }
        on_points(s, handle, n, |geometry, input, a| {
            if !resize(&mut a.number, n) {
                return false;
            }
            on_geometry!(geometry, g => {
                for (k, d) in a.number.iter_mut().enumerate() {
                    *d = g
                        .signed_distance(point_at(input, k), max_distance, &Default::default())
                        .unwrap_or(f64::NAN);
                }
            });
            true
        })
    })
}

/// The message of an overlap between geometries of two kinds.
const KINDS: &str =
    "the other geometry must be of the same kind: a BVH with a BVH, a Scene with a Scene";

/// Which triangles of geometry `handle` and of `other` (of the same kind) placed by the
/// transform staged at [`mr_input`] intersect (`other` 0: of `handle` with itself, nothing
/// staged), sorted and flattened into the `ray` answer ([`mr_out`] 4): pairs (triangle,
/// `other`'s triangle) of a mesh, rows (instance, triangle, instance, triangle) of a scene.
/// Returns how many pairs, or a negative status (a bad handle, a short or bad transform,
/// geometries of two kinds). With `first` (and an `other`), whether any pair meets: 1 or
/// 0, the walk stopped at the first pair, nothing written.
#[unsafe(no_mangle)]
pub extern "C" fn mr_overlap(handle: u32, other: u32, first: u32) -> i64 {
    with(|s| {
        let transform = match other {
            0 => None,
            _ => match staged_transform(s) {
                Ok(m) => Some(m),
                Err(code) => return i64::from(code),
            },
        };
        let Some(geometry) = s.geometry(handle) else {
            return i64::from(s.bad_handle(handle));
        };
        let second = match other {
            0 => None,
            _ => match s.geometry(other) {
                Some(g) => Some(g),
                None => return i64::from(s.bad_handle(other)),
            },
        };
        let all = QueryOptions::default();
        let mesh = |pairs: Vec<(u32, u32)>| pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
        let scene = |pairs: Vec<(SceneTriangle, SceneTriangle)>| {
            pairs
                .iter()
                .flat_map(|(p, q)| [p.instance, p.triangle, q.instance, q.triangle])
                .collect()
        };
        if first != 0 {
            let meets = match (&second, transform) {
                (Some(second), Some(m)) => match (&geometry, second) {
                    (Geometry::Mesh(a), Geometry::Mesh(b)) => a.intersects(b, m, &all),
                    (Geometry::Scene(a), Geometry::Scene(b)) => a.intersects(b, m, &all.into()),
                    _ => return i64::from(s.fail(BAD_INPUT, KINDS)),
                },
                _ => {
                    return i64::from(
                        s.fail(BAD_INPUT, "a yes-or-no overlap needs another geometry"),
                    );
                }
            };
            return match meets {
                Ok(meets) => i64::from(meets),
                Err(e) => i64::from(s.fail(BAD_INPUT, e.to_string())),
            };
        }
        let found: Result<(Vec<u32>, usize), String> = match (geometry, second, transform) {
            (Geometry::Mesh(a), None, _) => Ok((mesh(a.self_intersections(&all)), 2)),
            (Geometry::Scene(a), None, _) => Ok((scene(a.self_intersections(&all.into())), 4)),
            (Geometry::Mesh(a), Some(Geometry::Mesh(b)), Some(m)) => a
                .intersecting_triangles(b, m, &all)
                .map(|pairs| (mesh(pairs), 2))
                .map_err(|e| e.to_string()),
            (Geometry::Scene(a), Some(Geometry::Scene(b)), Some(m)) => a
                .intersecting_triangles(b, m, &all.into())
                .map(|pairs| (scene(pairs), 4))
                .map_err(|e| e.to_string()),
            _ => Err(
                "the other geometry must be of the same kind: a BVH with a BVH, a Scene \
                      with a Scene"
                    .into(),
            ),
        };
        match found {
            Ok((flat, width)) => {
                let pairs = flat.len() / width;
                s.answers.ray = flat;
                pairs as i64
            }
            Err(e) => i64::from(s.fail(BAD_INPUT, e)),
        }
    })
}

/// Keeps `selected` as the `ray` answer (triangle numbers, ascending) and returns its length.
fn selection(s: &mut State, selected: Vec<u32>) -> i64 {
    s.answers.ray = selected;
    s.answers.ray.len() as i64
}

/// The triangles overlapping the box `min..max`, ascending, as the `ray` answer
/// ([`mr_out`] 4); returns their count.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mr_select_box(
    handle: u32,
    x0: f32,
    y0: f32,
    z0: f32,
    x1: f32,
    y1: f32,
    z1: f32,
) -> i64 {
    with(|s| {
        let corners = [x0, y0, z0, x1, y1, z1];
        if !corners.iter().all(|c| c.is_finite()) || x0 > x1 || y0 > y1 || z0 > z1 {
            return i64::from(s.fail(BAD_INPUT, "the box needs finite corners with min <= max"));
        }
        let Some(tree) = s.tree(handle) else {
            return i64::from(s.bad_handle(handle));
        };
        let region = Region::Box(Aabb::new([x0, y0, z0], [x1, y1, z1]));
        let selected = tree.triangles_in(&region);
        selection(s, selected)
    })
}

/// The triangles overlapping the ball at `(x, y, z)` of `radius`, ascending, as the `ray`
/// answer; returns their count.
#[unsafe(no_mangle)]
pub extern "C" fn mr_select_sphere(handle: u32, x: f32, y: f32, z: f32, radius: f32) -> i64 {
    with(|s| {
        if ![x, y, z, radius].iter().all(|c| c.is_finite()) || radius < 0.0 {
            return i64::from(s.fail(
                BAD_INPUT,
                "the sphere needs a finite centre and a radius >= 0",
            ));
        }
        let Some(tree) = s.tree(handle) else {
            return i64::from(s.bad_handle(handle));
        };
        let centre = Point3::new(x, y, z);
        let selected = tree.triangles_in(&Region::Sphere { centre, radius });
        selection(s, selected)
    })
}

/// The triangles overlapping the frustum under the screen rectangle with corners `(ax, ay)`
/// and `(bx, by)` (pixels, origin top left) of a camera: `view` then `projection` (16 floats
/// each, column-major as three.js stores them) at [`mr_input`] (see [`mr_points`]: 32
/// floats), in a viewport of `width × height` pixels. Ascending, as the `ray` answer;
/// returns their count.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mr_select_frustum(
    handle: u32,
    width: f32,
    height: f32,
    ax: f32,
    ay: f32,
    bx: f32,
    by: f32,
) -> i64 {
    with(|s| {
        if s.input.len() < 32 {
            return i64::from(s.fail(
                BAD_INPUT,
                "the frustum needs 32 floats: view, then projection",
            ));
        }
        let mut view = [0.0f32; 16];
        let mut projection = [0.0f32; 16];
        view.copy_from_slice(&s.input[..16]);
        projection.copy_from_slice(&s.input[16..32]);
        let camera = Camera::new(
            mint::ColumnMatrix4::from(view),
            mint::ColumnMatrix4::from(projection),
            [width, height],
        );
        let frustum = match camera.and_then(|camera| camera.frustum([ax, ay], [bx, by])) {
            Ok(f) => f,
            Err(e) => return i64::from(s.fail(BAD_INPUT, e.to_string())),
        };
        let Some(tree) = s.tree(handle) else {
            return i64::from(s.bad_handle(handle));
        };
        let selected = tree.triangles_in(&Region::Frustum(frustum));
        selection(s, selected)
    })
}

// The GPU batch (issue 42): the page runs the kernel of `meshray-gpu` through WebGPU on the
// words of a tree and the rays staged here; its answers come back here for the CPU's exact
// finish. In order: `mr_gpu_tree` (once per tree), `mr_rays` and `mr_gpu_rays` (the rays
// as the kernel reads them), the dispatches, `mr_gpu_answers` (room for the kernel's
// answers, which JavaScript copies in), then `mr_rays` again and `mr_gpu_finish`.

/// The GPU kernel's text (WGSL, UTF-8): its address ([`mr_gpu_kernel_len`] bytes).
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_kernel() -> *const u8 {
    KERNEL.as_ptr()
}

/// The length in bytes of [`mr_gpu_kernel`]'s text.
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_kernel_len() -> usize {
    KERNEL.len()
}

/// The GPU kernel's sizes: 0 its workgroup size, 1 the most rays per dispatch, 2 bytes per
/// ray ([`mr_gpu_rays`]), 3 bytes per answer ([`mr_gpu_answers`]); else 0.
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_layout(k: u32) -> u32 {
    match k {
        0 => WORKGROUP,
        1 => CHUNK as u32,
        2 => RAY_BYTES as u32,
        3 => ANSWER_BYTES as u32,
        _ => 0,
    }
}

/// Copies a tree's words for the GPU into [`mr_gpu_words`]: `part` 0 its nodes, 1 its
/// leaf packets. Returns the number of words, or a negative status (a scene's handle is
/// bad input: scenes are not cast on the GPU yet).
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_tree(handle: u32, part: u32) -> i64 {
    with(|s| {
        if handle & SCENE != 0 {
            return i64::from(s.fail(
                BAD_INPUT,
                "a scene is not cast on the GPU (yet): its trees are",
            ));
        }
        let bvh = match s.parts(handle) {
            Ok((Geometry::Mesh(bvh), ..)) => bvh,
            Ok(_) | Err(_) => return i64::from(s.bad_handle(handle)),
        };
        let raw = bvh.raw_tree();
        let words = match part {
            0 => raw.nodes,
            _ => raw.packets,
        };
        let n = words.len() as i64;
        s.gpu_words = words;
        n
    })
}

/// Where [`mr_gpu_tree`] left the words.
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_words() -> *const u32 {
    with(|s| s.gpu_words.as_ptr())
}

/// The `n` rays at [`mr_input`] (see [`mr_rays`]; `near` NaN: each ray's range from
/// [`mr_ranges`]) as the kernel reads them, at [`mr_gpu_rays_ptr`] (a ray the CPU answers
/// itself, invalid or with a tiny direction component, as an empty range). The GPU casts
/// with the watertight test and no culling only: other `flags` are bad input.
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_rays(handle: u32, n: usize, near: f32, far: f32, flags: u32) -> i32 {
    let mut rays = with(|s| std::mem::take(&mut s.gpu_rays));
    let status = with(|s| {
        if let Err(status) = gpu_flags(s, flags) {
            return i64::from(status);
        }
        on_rays(s, (handle, n, near, far, flags), |batch, _, _, _| {
            rays.clear();
            if rays.try_reserve(n).is_err() {
                return Err((NO_MEMORY, format!("no memory for {n} rays")));
            }
            rays.extend((0..n).map(|k| GpuRay::for_kernel(&batch.ray(k))));
            Ok(0)
        })
    });
    with(|s| s.gpu_rays = rays);
    i32::try_from(status).unwrap_or(BAD_INPUT)
}

/// Refuses query `flags` the GPU does not cast with: only the watertight test without
/// culling (the kernel's and the finish's).
fn gpu_flags(s: &mut State, flags: u32) -> Result<(), i32> {
    if flags == WATERTIGHT {
        return Ok(());
    }
    Err(s.fail(
        BAD_INPUT,
        "the GPU casts with the watertight test and no culling only",
    ))
}

/// Where [`mr_gpu_rays`] left the rays ([`mr_gpu_layout`]`(2)` bytes each).
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_rays_ptr() -> *const u8 {
    with(|s| s.gpu_rays.as_ptr().cast())
}

/// Makes room for the kernel's answers to `n` rays ([`mr_gpu_layout`]`(3)` bytes each) at
/// [`mr_gpu_answers_ptr`], zeroed, for JavaScript to copy the read-back into.
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_answers(n: usize) -> i32 {
    with(|s| {
        s.gpu_answers.clear();
        if s.gpu_answers.try_reserve(n).is_err() {
            return s.fail(
                NO_MEMORY,
                format!("no memory for the GPU's answers to {n} rays"),
            );
        }
        s.gpu_answers.resize(n, bytemuck::Zeroable::zeroed());
        OK
    })
}

/// Where JavaScript writes the kernel's answers ([`mr_gpu_answers`]).
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_answers_ptr() -> *mut u8 {
    with(|s| s.gpu_answers.as_mut_ptr().cast())
}

/// The exact closest hit (`any` 0) or any hit (`any` 1) of each of the `n` rays at
/// [`mr_input`] (as staged for [`mr_gpu_rays`]), from the kernel's answers at
/// [`mr_gpu_answers_ptr`], into the answers `t`, `triangle`, `u`, `v` ([`mr_out`]), as
/// [`mr_cast_batch`] answers them, bit for bit (an answer naming no triangle of the tree
/// sends its ray to the CPU's own cast). The finish's counts at [`mr_gpu_stats`].
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_finish(
    handle: u32,
    n: usize,
    near: f32,
    far: f32,
    flags: u32,
    any: u32,
) -> i32 {
    let mode = if any != 0 { MODE_ANY } else { MODE_CLOSEST };
    let kernel = with(|s| std::mem::take(&mut s.gpu_answers));
    let mut stats = meshray_gpu::BatchStats {
        rays: n,
        ..Default::default()
    };
    let status = with(|s| {
        if let Err(status) = gpu_flags(s, flags) {
            return i64::from(status);
        }
        if kernel.len() < n {
            return i64::from(s.fail(
                BAD_INPUT,
                format!(
                    "{n} rays to finish, the GPU's answers to {} staged",
                    kernel.len()
                ),
            ));
        }
        on_rays(
            s,
            (handle, n, near, far, flags),
            |batch, geometry, answers, _| {
                let Geometry::Mesh(bvh) = geometry else {
                    return Err((BAD_INPUT, "a scene is not cast on the GPU (yet)".into()));
                };
                if !per_ray(answers, n) {
                    return Err((NO_MEMORY, format!("no memory for the answers of {n} rays")));
                }
                let finisher = Finisher::new(bvh);
                for (k, answer) in kernel[..n].iter().enumerate() {
                    if let Some(h) = finisher.answer(&batch.ray(k), answer, mode, &mut stats) {
                        answers.t[k] = h.t;
                        answers.triangle[k] = h.triangle as i32;
                        answers.u[k] = h.u;
                        answers.v[k] = h.v;
                    }
                }
                Ok(0)
            },
        )
    });
    with(|s| {
        s.gpu_answers = kernel;
        s.gpu_stats = [
            stats.rays as f64,
            stats.flagged as f64,
            stats.several as f64,
            stats.tested as f64,
            stats.refused as f64,
            stats.visits as f64,
        ];
    });
    i32::try_from(status).unwrap_or(BAD_INPUT)
}

/// The last [`mr_gpu_finish`]'s counts: rays, flagged (cast again on the CPU), narrowed to
/// several candidates, candidates tested, certain hits refused, nodes the kernel visited.
#[unsafe(no_mangle)]
pub extern "C" fn mr_gpu_stats() -> *const f64 {
    with(|s| s.gpu_stats.as_ptr())
}
