/** A point or vector: `[x, y, z]` or anything with `x`, `y`, `z` (a three.js `Vector3`). */
export type Vec3 = ArrayLike<number> | { x: number; y: number; z: number };

/** Options of every ray query. */
export interface QueryOptions {
  /** Hits with `t < near` are ignored (default 0; must be >= 0). */
  near?: number;
  /** Hits with `t > far` are ignored (default Infinity). */
  far?: number;
  /** Which faces are culled, as the Rust crate's `Culling` and Python's `cull` name them: "none" (default), "back" (front faces only) or "front" (back faces only). */
  cull?: "none" | "back" | "front";
  /** The watertight triangle test (default true): no ray slips between two triangles sharing an edge; false for plain Cramer's rule, a little faster. */
  watertight?: boolean;
}

/** Options of a batch: as `QueryOptions`, with `near` and `far` per ray if need be. */
export interface BatchOptions extends Omit<QueryOptions, "near" | "far"> {
  /** One value for every ray, or one per ray (each >= 0; default 0). */
  near?: number | ArrayLike<number>;
  /** One value for every ray, or one per ray (not NaN; default Infinity). */
  far?: number | ArrayLike<number>;
}

/** One ray's hit. */
export interface Hit {
  /** A scene's answer: the instance hit (-1 where none); absent for a BVH's. */
  instance?: number;
  /** The ray parameter `t` of the hit: the distance when the direction is unit length. */
  distance: number;
  /** The triangle's number (its position in the index buffer / 3). */
  triangle: number;
  /** Barycentrics: the point is `(1-u-v)·a + u·b + v·c`. */
  u: number;
  v: number;
  /** The hit point. */
  point: [number, number, number];
  /** The triangle's unit normal: its corners turn counter-clockwise seen from this side. */
  normal: [number, number, number];
  /** Whether the ray meets the side the normal points to. */
  frontFace: boolean;
}

/** Options of `castSphere`: a ray query's (culling by the side the motion meets a triangle from; `watertight` does not apply), and a capsule's axis. */
export interface SweepOptions extends QueryOptions {
  /** A capsule instead of a sphere: every point within the radius of the segment from the centre to centre + axis. */
  axis?: Vec3;
}

/** Where a moving sphere (or capsule) first touches. */
export interface SweepHit {
  /** A scene's answer: the instance touched; absent for a BVH's. */
  instance?: number;
  /** How far it moved: its centre is at `origin + distance·direction` when it touches (`near` where it touches already). */
  distance: number;
  /** The triangle touched. */
  triangle: number;
  /** Barycentrics of the contact point: `(1-u-v)·a + u·b + v·c`. */
  u: number;
  v: number;
  /** The contact point, on the triangle. */
  point: [number, number, number];
  /** The unit normal from the triangle towards the shape: the way to push it out, or slide along. */
  normal: [number, number, number];
}

/** Options of `castSpheres`: a batch's (`near` and `far` one value or one per ray; `watertight` does not apply), and a capsule's axis. */
export interface BatchSweepOptions extends BatchOptions {
  /** A capsule instead of a sphere: every point within the radius of the segment from the centre to centre + axis. */
  axis?: Vec3;
}

/** Per-ray answers of `castSpheres`: where nothing is touched, distance Infinity, triangle -1, the rest NaN. */
export interface SweepHits extends BatchHits {
  /** The contact points, three numbers per ray. */
  point: Float32Array;
  /** The unit normals from the triangle towards the shape, three numbers per ray. */
  normal: Float32Array;
}

/** One hit of `allHits`. */
export interface ShortHit {
  /** A scene's answer: the instance hit (-1 where none); absent for a BVH's. */
  instance?: number;
  distance: number;
  triangle: number;
  u: number;
  v: number;
}

/** Per-ray answers of a batch: misses have distance Infinity, triangle -1, u and v NaN. */
export interface BatchHits {
  /** A scene's answers: the instance of each (-1 where none); absent for a BVH's. */
  instance?: Int32Array;
  distance: Float32Array;
  triangle: Int32Array;
  u: Float32Array;
  v: Float32Array;
}

/** Every hit of a batch, flattened, nearest first per ray. */
export interface AllHits extends BatchHits {
  /** Which ray (its number in the batch) each hit belongs to. */
  ray: Uint32Array;
}

/** The mesh's nearest point to a query point. */
export interface ClosestPoint {
  /** A scene's answer: the instance hit (-1 where none); absent for a BVH's. */
  instance?: number;
  point: [number, number, number];
  distance: number;
  triangle: number;
  u: number;
  v: number;
}

/** Nearest points of a batch: `point` holds three numbers per query (NaN when none). */
export interface ClosestPoints extends BatchHits {
  point: Float32Array;
}

/** How a winding number is summed. */
export interface WindingOptions {
  /**
   * The fast sum's far-field distance, in subtree radii (Barill et al. 2018's β; default 2,
   * within 0.02 of the exact sum; must be >= 1 unless `exact`).
   */
  beta?: number;
  /** Sum every triangle's solid angle in f64 (default false): O(n) per point. */
  exact?: boolean;
}

/** Loads the WebAssembly module (once). See meshray.js for `source`. */
export function init(
  source?: string | URL | ArrayBuffer | ArrayBufferView | WebAssembly.Module | Response,
): Promise<void>;
/** Whether this engine runs WebAssembly's 128-bit SIMD. */
export function hasSimd(): boolean;
/** Which module `init` loaded: "simd128" or "scalar", null before `init`. */
export function build(): "simd128" | "scalar" | null;

/**
 * Builds a BVH in a worker (a Web Worker in browsers, a worker thread in Node) so this thread
 * keeps running during a large build; the tree comes back as bytes and is loaded here
 * (checked whole). Rejects with the constructor's errors. Needs `init()` first.
 */
export function buildAsync(
  positions: Float32Array | Float64Array | number[],
  indices?: Uint32Array | Uint16Array | Uint8Array | number[] | null,
  options?: { quality?: "fast" | "default" | "high" },
): Promise<BVH>;

/** The module's memory in bytes (it grows, never shrinks; freed space is reused). */
export function memoryBytes(): number;

/** @internal The last single-ray hit: `t u v px py pz nx ny nz front` (10 floats). */
export function _hitView(): Float32Array;

/**
 * What a `BVH` and a `Scene` share: every query. A scene's answers add the instance hit
 * (`instance`) beside the triangle (its number in that instance's mesh), in world space.
 */
export class Geometry {
  /** @internal Made by `BVH` and `Scene` only; throws otherwise. */
  protected constructor(handle: number, what: string, instances: boolean);
  /** Frees the memory now; later calls throw. A forgotten one is freed by the GC. */
  free(): void;
  closestHit(origin: Vec3, direction: Vec3, options?: QueryOptions): Hit | null;
  /**
   * @internal Fast path of the three.js adapter: the nearest hit's triangle or -1, its
   * `t u v` the first three floats of `_hitView()`. `flags`: 1 watertight, 2 cull back
   * faces, 4 cull front faces.
   */
  _closestHitRaw(
    ox: number, oy: number, oz: number,
    dx: number, dy: number, dz: number,
    near: number, far: number, flags: number,
  ): number;
  anyHit(origin: Vec3, direction: Vec3, options?: QueryOptions): Hit | null;
  /** Where a sphere of `radius` moving along the ray first touches (faces, edges, corners, exactly), or null; throws for a negative, NaN or infinite radius. */
  castSphere(origin: Vec3, direction: Vec3, radius: number, options?: SweepOptions): SweepHit | null;
  castSpheres(rays: Float32Array | Float64Array | number[], radius: number, options?: BatchSweepOptions): SweepHits;
  /**
   * Which triangles of this geometry and of `other` (the same kind) placed by `matrix`
   * (column-major; the identity when omitted) intersect, exactly, sorted: pairs `[i, j, ...]`
   * for a BVH, rows `[instance, triangle, otherInstance, otherTriangle, ...]` for a Scene.
   */
  intersectingTriangles(other: this, matrix?: ArrayLike<number> | { elements: ArrayLike<number> }): Uint32Array;
  /** Whether any triangle meets one of `other` placed by `matrix` (stops at the first pair). */
  intersects(other: this, matrix?: ArrayLike<number> | { elements: ArrayLike<number> }): boolean;
  /** Where the geometry intersects itself, as `intersectingTriangles` gives pairs (a mesh's neighbours left out). */
  selfIntersections(): Uint32Array;
  allHits(origin: Vec3, direction: Vec3, options?: QueryOptions): ShortHit[];
  /**
   * `rays`: ox oy oz dx dy dz per ray. `near` and `far` may also be one value per ray
   * (lasers of different lengths, shadow rays to different lights).
   */
  closestHits(rays: Float32Array | Float64Array | number[], options?: BatchOptions): BatchHits;
  anyHits(rays: Float32Array | Float64Array | number[], options?: BatchOptions): BatchHits;
  allHitsBatch(rays: Float32Array | Float64Array | number[], options?: BatchOptions): AllHits;
  closestPoint(point: Vec3, maxDistance?: number): ClosestPoint | null;
  closestPoints(points: Float32Array | Float64Array | number[], maxDistance?: number): ClosestPoints;
  /**
   * The generalized winding number at `point`: 1 inside a closed outward-facing mesh, 0
   * outside, in between near an open mesh's holes. NaN for a NaN or infinite point.
   */
  windingNumber(point: Vec3, options?: WindingOptions): number;
  /** `points`: x y z per point. NaN for a NaN or infinite point. */
  windingNumbers(points: Float32Array | Float64Array | number[], options?: WindingOptions): Float64Array;
  /** Whether the exact winding number at `point` is at least ½. False for a NaN or infinite point. */
  contains(point: Vec3): boolean;
  /** `contains` for each of `points` (x y z each): 1 inside, 0 outside. */
  containsPoints(points: Float32Array | Float64Array | number[]): Uint8Array;
  /**
   * The distance to the mesh, negative inside (where `contains` holds); null when nothing is
   * within `maxDistance` (default Infinity) or the point is NaN or infinite.
   */
  signedDistance(point: Vec3, maxDistance?: number): number | null;
  /** `signedDistance` for each of `points` (x y z each): NaN where it is null. */
  signedDistances(points: Float32Array | Float64Array | number[], maxDistance?: number): Float64Array;
}

/** A bounding volume hierarchy over a triangle mesh, in WebAssembly memory. */
export class BVH extends Geometry {
  /**
   * Builds the tree of `positions` (x y z per vertex) and `indices` (three per triangle;
   * without them every three vertices are a triangle). Throws for indices out of range, NaN
   * or infinite coordinates, an empty mesh, arrays of the wrong length, or more than 16
   * million triangles (what WebAssembly's 4 GiB can build).
   */
  constructor(
    positions: Float32Array | Float64Array | number[],
    indices?: Uint32Array | Uint16Array | Uint8Array | number[] | null,
    options?: { quality?: "fast" | "default" | "high" },
  );
  readonly triangleCount: number;
  readonly bounds: { min: [number, number, number]; max: [number, number, number] };
  /** The tree as bytes (the mesh and the tree's shape, with a checksum), for `fromBytes`. */
  toBytes(): Uint8Array;
  /** A tree from `toBytes`'s bytes, checked whole: corrupt bytes throw. */
  static fromBytes(bytes: Uint8Array | ArrayBuffer): BVH;
  /**
   * Moves the vertices to `positions` (one x y z per vertex of the built mesh) and refits
   * the tree: exact answers for the new positions, O(n), no allocation after the first
   * call. Throws for another vertex count or NaN or infinite coordinates.
   */
  refit(positions: Float32Array | Float64Array | number[]): void;
  /**
   * This tree on a WebGPU device (a `GPUDevice`): uploaded once, the kernel compiled (once
   * per device). Its `closestHits` answer as this BVH's, bit for bit; after a `refit`, call
   * its `update()`.
   */
  gpu(device: object): Promise<GpuBVH>;
  selectBox(min: Vec3, max: Vec3): Uint32Array;
  selectSphere(centre: Vec3, radius: number): Uint32Array;
  /**
   * Box select: the triangles in the frustum under the screen rectangle `a`–`b` (pixels,
   * origin top left). `view`, `projection`: column-major 4×4 (three.js `elements`).
   */
  selectFrustum(
    view: ArrayLike<number>,
    projection: ArrayLike<number>,
    viewport: [number, number],
    a: [number, number],
    b: [number, number],
  ): Uint32Array;
}

/** What a GPU batch cost and how much of it the CPU redid (`GpuBVH.stats`). */
export interface GpuStats {
  rays: number;
  /** Rays cast again on the CPU (a list or stack overflowed, a corner not finite). */
  flagged: number;
  /** Rays narrowed to several candidates, tested one by one. */
  several: number;
  /** Candidates tested exactly. */
  tested: number;
  /** Certain hits the exact test refused (cast again on the CPU). */
  refused: number;
  /** Nodes the kernel visited. */
  visits: number;
}

/**
 * A BVH's tree on a WebGPU device (`bvh.gpu(device)`): batches walked by meshray-gpu's WGSL
 * kernel, each ray finished exactly on the CPU, so the answers are the BVH's own. The
 * watertight test without culling only (other options throw).
 */
export class GpuBVH {
  private constructor();
  /** The last batch's counts. */
  stats: GpuStats | null;
  /** The BVH's closest hits (`BVH.closestHits`), bit for bit. */
  closestHits(rays: Float32Array | Float64Array | number[], options?: BatchOptions): Promise<BatchHits>;
  /** A hit exactly where `BVH.anyHits` finds one. */
  anyHits(rays: Float32Array | Float64Array | number[], options?: BatchOptions): Promise<BatchHits>;
  /** Writes the BVH's tree over the device's copy again (after `bvh.refit`). */
  update(): void;
  /** Frees the device's copy (the BVH stays). */
  destroy(): void;
}

/**
 * BVHs placed by 4×4 transforms and asked together, in world space. A scene holds each BVH
 * as it was when placed.
 */
export class Scene extends Geometry {
  constructor();
  /**
   * Places `bvh` by `matrix` (16 numbers column-major, or anything with `elements`, as a
   * three.js `Matrix4`; the identity when omitted); returns the instance's id. Throws for a
   * freed BVH and a singular, non-affine or non-finite transform.
   */
  add(bvh: BVH, matrix?: ArrayLike<number> | { elements: ArrayLike<number> }): number;
  /** Moves instance `id` to `matrix`. */
  setTransform(id: number, matrix: ArrayLike<number> | { elements: ArrayLike<number> }): void;
  /** Removes instance `id` (a later `add` may reuse its id). */
  remove(id: number): void;
  /** How many instances the scene holds. */
  readonly size: number;
}
