// meshray for JavaScript: exact ray casting against triangle meshes, a BVH in WebAssembly.
//
//   import { init, BVH } from "meshray";
//   await init();                                   // once: loads the wasm module
//   const bvh = new BVH(positions, indices);        // Float32Array, Uint32Array (or none)
//   const hit = bvh.closestHit([0, 0, 10], [0, 0, -1]);
//   bvh.free();                                     // or let the garbage collector do it
//
// The module (dist/meshray-simd.wasm, or dist/meshray.wasm where the engine lacks simd128)
// speaks a plain C ABI (js/src/lib.rs): buffers belong to the wasm side, this file writes
// inputs into them and reads answers out through typed-array views of its memory. Every
// input is checked here or there, so bad input throws an Error that says what is wrong;
// the module never traps.

/** @type {WebAssembly.Exports | null} */
let wasm = null;
let simd = false;
let views = { buffer: null, f32: null, f64: null, u32: null, i32: null, u8: null, hit: null };

// The smallest module that uses a simd128 instruction (i8x16.splat): valid where the
// engine has SIMD.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0,
  253, 15, 253, 98, 11,
]);

/** Whether this engine runs WebAssembly's 128-bit SIMD. */
export function hasSimd() {
  return WebAssembly.validate(SIMD_PROBE);
}

/**
 * Loads the WebAssembly module, once; later calls return at once. `source` overrides where
 * the module comes from: a URL or path, bytes (`ArrayBuffer`, typed array), a
 * `WebAssembly.Module` or a `Response`. By default the simd128 build when the engine
 * has SIMD, else the scalar one, from dist/ beside this file (a file read in Node, a
 * fetch in a browser).
 */
export async function init(source) {
  if (wasm) return;
  simd = hasSimd();
  const name = simd ? "meshray-simd.wasm" : "meshray.wasm";
  let module;
  if (source instanceof WebAssembly.Module) {
    module = source;
  } else if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    module = await WebAssembly.compile(source);
  } else if (typeof Response !== "undefined" && source instanceof Response) {
    module = await WebAssembly.compile(await source.arrayBuffer());
  } else {
    const url = source ?? new URL(`./dist/${name}`, import.meta.url);
    const isFile =
      typeof process !== "undefined" && process.versions?.node &&
      (String(url).startsWith("file:") || !/^[a-z]+:/i.test(String(url)));
    if (isFile) {
      const { readFile } = await import("node:fs/promises");
      module = await WebAssembly.compile(await readFile(url instanceof URL ? url : new URL(url, `file://${process.cwd()}/`)));
    } else {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`meshray: could not load ${url}: HTTP ${response.status}`);
      module = await WebAssembly.compile(await response.arrayBuffer());
    }
  }
  wasm = (await WebAssembly.instantiate(module, {})).exports;
}

// The build worker (worker.js), started when a build is asked for and ended when none is
// pending (`starting`: the promise of it, so builds asked for at once share one worker);
// its pending builds.
let worker = null;
let starting = null;
let nextBuild = 0;
const pendingBuilds = new Map();

function settleBuild({ id, bytes, error }) {
  const pending = pendingBuilds.get(id);
  if (!pending) return;
  pendingBuilds.delete(id);
  if (error !== undefined) pending.reject(new Error(error));
  else pending.resolve(bytes);
  // Idle: the worker goes, and with it its WebAssembly memory (which never shrinks and
  // holds the build's peak); the next build starts another.
  if (pendingBuilds.size === 0) {
    worker?.terminate();
    worker = null;
    starting = null;
  }
}

function failBuilds(error) {
  for (const { reject } of pendingBuilds.values()) reject(error);
  pendingBuilds.clear();
  worker = null;
  starting = null;
}

function buildWorker() {
  starting ??= startWorker();
  return starting;
}

async function startWorker() {
  const url = new URL("./worker.js", import.meta.url);
  if (typeof process !== "undefined" && process.versions?.node) {
    const { Worker } = await import("node:worker_threads");
    worker = new Worker(url);
    worker.on("message", settleBuild);
    worker.on("error", failBuilds);
  } else {
    worker = new Worker(url, { type: "module" });
    worker.onmessage = (event) => settleBuild(event.data);
    worker.onerror = (event) => failBuilds(new Error(`meshray: the build worker failed: ${event.message}`));
  }
  return worker;
}

/**
 * Builds a BVH in a worker (a Web Worker in browsers, a worker thread in Node), so the page
 * keeps drawing and answering input during a large build; resolves to the tree, loaded on
 * this thread from the worker's bytes (checked whole, a small fraction of the build's time).
 * Takes the constructor's arguments and throws its errors (as a rejection). `init()` must
 * have run here; the worker loads its own module. Copies `positions` and `indices` to the
 * worker (they stay usable here). The worker ends when no build is pending, giving back
 * its memory; this thread's grows by the loaded tree only (no build scratch).
 */
export async function buildAsync(positions, indices, options) {
  exports();
  const id = nextBuild++;
  // Pending before the worker is asked for, so a build finishing meanwhile does not end it.
  const built = new Promise((resolve, reject) => pendingBuilds.set(id, { resolve, reject }));
  (await buildWorker()).postMessage({ id, positions, indices, options });
  return BVH.fromBytes(await built);
}

/** Which build `init` loaded: "simd128" or "scalar" (null before `init`). */
export function build() {
  return wasm ? (simd ? "simd128" : "scalar") : null;
}

/**
 * The size of the module's memory in bytes: every tree and buffer meshray holds. It grows
 * and never shrinks (WebAssembly memory cannot), but freed space is reused.
 */
export function memoryBytes() {
  return wasm ? wasm.memory.buffer.byteLength : 0;
}

function exports() {
  if (!wasm) throw new Error("meshray: call `await init()` before using it");
  return wasm;
}

// Typed-array views of the wasm memory, made again when the memory has grown (growth
// detaches the old buffer).
function heap() {
  const buffer = wasm.memory.buffer;
  if (views.buffer !== buffer) {
    views = {
      buffer,
      f32: new Float32Array(buffer),
      f64: new Float64Array(buffer),
      u32: new Uint32Array(buffer),
      i32: new Int32Array(buffer),
      u8: new Uint8Array(buffer),
      // The single-ray answer buffer (mr_hit: t u v px py pz nx ny nz front). Its address
      // is fixed: the module's state is a static of a single-threaded instance.
      hit: new Float32Array(buffer, wasm.mr_hit(), 10),
    };
  }
  return views;
}

/**
 * Internal (see `BVH._closestHitRaw`): a Float32Array view of the 10 floats of the last
 * single-ray hit, `t u v px py pz nx ny nz front`. Read it before the next query; take
 * the view again after anything that may grow the memory (building a tree, a batch).
 */
export function _hitView() {
  exports();
  return heap().hit;
}

function lastError() {
  const { u8 } = heap();
  const at = wasm.mr_error();
  return new TextDecoder().decode(u8.subarray(at, at + wasm.mr_error_len()));
}

// Throws the module's message for a negative status.
function check(status) {
  if (status < 0) throw new Error(`meshray: ${lastError()}`);
  return status;
}

const QUALITIES = { fast: 0, default: 1, high: 2 };

// The constructor's first argument when `fromBytes` hands it a loaded tree's handle.
const LOADED = Symbol("loaded");
// The culling vocabulary of the Rust crate (`Culling::None`, `Back`, `Front`) and the Python
// package (`cull="none"`, `"back"`, `"front"`): the faces culled, by name.
const CULLS = { none: 0, back: 2, front: 4 };

// Query flags from options: cull ("none", "back": back faces culled, "front": front faces
// culled) and watertight.
function flagsOf(options) {
  const cull = options?.cull ?? "none";
  if (!Object.hasOwn(CULLS, cull)) throw new Error(`meshray: cull must be "none", "back" or "front", not ${JSON.stringify(cull)}`);
  return CULLS[cull] | ((options?.watertight ?? true) ? 1 : 0);
}

function rangeOf(options) {
  const near = options?.near ?? 0;
  const far = options?.far ?? Infinity;
  if (typeof near !== "number" || typeof far !== "number" || !(near >= 0) || Number.isNaN(far)) {
    throw new Error(`meshray: near must be a number >= 0 and far a number, not NaN (near ${near}, far ${far})`);
  }
  return [near, far];
}

// A batch's range: `near` and `far` numbers for every ray, or either one an array (a typed
// array or numbers) of one value per ray. Per-ray values are staged in the module, and the
// call then takes a NaN near (see mr_ranges in src/lib.rs).
function batchRange(options, n) {
  const near = options?.near ?? 0;
  const far = options?.far ?? Infinity;
  if (typeof near === "number" && typeof far === "number") return rangeOf(options);
  const perRay = (x, what) => {
    if (typeof x === "number") return () => x;
    if (!(ArrayBuffer.isView(x) || Array.isArray(x)) || x.length !== n) {
      throw new Error(`meshray: ${what} must be a number or one number per ray (${n}), not ${x?.length ?? typeof x} values`);
    }
    return (k) => x[k];
  };
  const [nearAt, farAt] = [perRay(near, "near"), perRay(far, "far")];
  check(wasm.mr_ranges(n));
  const f32 = heap().f32;
  const at = wasm.mr_ranges_ptr() / 4;
  for (let k = 0; k < n; k++) {
    const [a, b] = [nearAt(k), farAt(k)];
    if (typeof a !== "number" || typeof b !== "number" || !(a >= 0) || Number.isNaN(b)) {
      throw new Error(`meshray: ray ${k}: near must be a number >= 0 and far a number, not NaN (near ${a}, far ${b})`);
    }
    f32[at + 2 * k] = a;
    f32[at + 2 * k + 1] = b;
  }
  return [NaN, NaN];
}

// The far-field sum's beta (a number >= 1, default 2) and whether to sum exactly, from
// the options of a winding-number query; beta is not checked when the sum is exact.
function windingOf(options) {
  const beta = options?.beta ?? 2;
  const exact = options?.exact ?? false;
  if (!exact && (typeof beta !== "number" || !(beta >= 1))) {
    throw new Error(`meshray: beta must be a number >= 1 (2 is Barill et al.'s and libigl's default), not ${beta}`);
  }
  return [exact ? 0 : beta, exact ? 1 : 0];
}

function maxDistanceOf(maxDistance) {
  if (typeof maxDistance !== "number" || !(maxDistance >= 0)) {
    throw new Error(`meshray: maxDistance must be a number >= 0, not ${maxDistance}`);
  }
  return maxDistance;
}

function vector3(v, what) {
  if (v == null || typeof v.length !== "number" && !("x" in v)) {
    throw new Error(`meshray: ${what} must be [x, y, z] or {x, y, z}`);
  }
  const [x, y, z] = "x" in v ? [v.x, v.y, v.z] : [v[0], v[1], v[2]];
  if (![x, y, z].every((c) => typeof c === "number")) {
    throw new Error(`meshray: ${what} must hold three numbers`);
  }
  return [x, y, z];
}

function floats(array, stride, what) {
  if (!(array instanceof Float32Array || array instanceof Float64Array || Array.isArray(array))) {
    throw new Error(`meshray: ${what} must be a Float32Array (or Float64Array, or an array of numbers)`);
  }
  if (array.length % stride !== 0) {
    throw new Error(`meshray: ${what} has ${array.length} numbers, not a multiple of ${stride}`);
  }
  return array.length / stride;
}

const registry = new FinalizationRegistry((handle) => {
  if (wasm) wasm.mr_free(handle);
});

/**
 * What a `BVH` (one mesh) and a `Scene` (BVHs placed by transforms) share: every query,
 * each written once here over the module's calls, which answer for a tree and a scene
 * alike. A scene's answers add the instance hit (`instance`, -1 where none) beside the
 * triangle (its number in that instance's mesh); its points and normals are in world space.
 */
export class Geometry {
  #handle = 0;
  #what;
  #instances;

  /** Internal: a BVH or Scene constructor hands over the module's handle. */
  constructor(handle, what, instances) {
    if (new.target === Geometry) throw new Error("meshray: Geometry is the base of BVH and Scene; make one of those");
    this.#handle = handle;
    this.#what = what;
    this.#instances = instances;
    registry.register(this, handle, this);
  }

  /** Internal: the handle, or an error when freed. */
  _live() {
    if (this.#handle === 0) throw new Error(`meshray: this ${this.#what} was freed`);
    return this.#handle;
  }

  /** Frees the module's memory now (else the garbage collector does, some time). */
  free() {
    if (this.#handle === 0) return;
    registry.unregister(this);
    check(wasm.mr_free(this.#handle));
    this.#handle = 0;
  }


  _cast(origin, direction, options, any) {
    const handle = this._live();
    const [ox, oy, oz] = vector3(origin, "origin");
    const [dx, dy, dz] = vector3(direction, "direction");
    const [near, far] = rangeOf(options);
    const triangle = wasm.mr_cast(handle, ox, oy, oz, dx, dy, dz, near, far, flagsOf(options), any);
    const hit = this._hit(triangle);
    if (hit !== null) hit.frontFace = heap().f32[wasm.mr_hit() / 4 + 9] === 1;
    return hit;
  }


  /** Internal: the single answer a call left (`triangle`, -1 for none, or a failure). */
  _hit(triangle) {
    if (triangle === -1) return null;
    if (triangle < -1) check(triangle + 1);
    const { f32 } = heap();
    const at = wasm.mr_hit() / 4;
    return {
      ...(this.#instances ? { instance: wasm.mr_hit_instance() } : {}),
      distance: f32[at],
      triangle,
      u: f32[at + 1],
      v: f32[at + 2],
      point: [f32[at + 3], f32[at + 4], f32[at + 5]],
      normal: [f32[at + 6], f32[at + 7], f32[at + 8]],
    };
  }


  /**
   * The nearest hit of the ray `origin + t·direction`, `near <= t <= far`, or null.
   * `distance` is `t` (the distance when `direction` is unit length), `u`, `v` the
   * barycentrics (the point is `(1-u-v)·a + u·b + v·c`), `normal` the triangle's unit
   * normal (counter-clockwise corners face it), `frontFace` whether the ray meets that side.
   * A zero, NaN or infinite direction hits nothing.
   */
  closestHit(origin, direction, options) {
    return this._cast(origin, direction, options, 0);
  }


  /**
   * Internal fast path for adapters (meshray/three), not public API: `closestHit` with
   * scalar arguments, unchecked `near`/`far` and raw query `flags` (1 watertight, 2 back
   * faces culled, 4 front faces culled), allocating nothing. Returns the triangle, or -1
   * for no hit; the hit's `t u v` are then the first three floats of `_hitView()`.
   */
  _closestHitRaw(ox, oy, oz, dx, dy, dz, near, far, flags) {
    // Mode 2: the closest hit's t u v only (the adapter reads the triangle itself).
    const triangle = wasm.mr_cast(this._live(), ox, oy, oz, dx, dy, dz, near, far, flags, 2);
    if (triangle < -1) check(triangle + 1);
    return triangle;
  }


  /**
   * Which triangles of this geometry and of `other` (of the same kind: a BVH with a BVH, a
   * Scene with a Scene) placed by `matrix` (16 numbers column-major, or a three.js
   * `Matrix4`; the identity when omitted) intersect, sorted, decided exactly (touching and
   * coplanar overlaps count; zero-area triangles meet nothing): a Uint32Array of pairs
   * `[i0, j0, i1, j1, ...]` (this mesh's triangle, `other`'s) for a BVH, of rows
   * `[instance, triangle, otherInstance, otherTriangle, ...]` for a Scene. Throws for a
   * freed geometry, another kind of `other`, or a singular, non-affine or non-finite matrix.
   */
  intersectingTriangles(other, matrix) {
    const handle = this._live();
    if (!(other instanceof Geometry)) throw new Error("meshray: other must be a BVH or a Scene");
    const theirs = other._live();
    stageTransform(matrix);
    return this._pairs(wasm.mr_overlap(handle, theirs, 0));
  }

  /**
   * Whether any triangle of this geometry meets one of `other` placed by `matrix`: as
   * `intersectingTriangles(other, matrix).length > 0`, but the walk stops at the first
   * intersecting pair (a clash check).
   */
  intersects(other, matrix) {
    const handle = this._live();
    if (!(other instanceof Geometry)) throw new Error("meshray: other must be a BVH or a Scene");
    const theirs = other._live();
    stageTransform(matrix);
    return check(Number(wasm.mr_overlap(handle, theirs, 1))) === 1;
  }

  /**
   * Where the geometry intersects itself, as `intersectingTriangles` gives pairs: a BVH's
   * `i < j`, neighbours with a corner at the same position left out (they touch there by
   * construction); a Scene's: each instance's own, and every pair from two instances that
   * overlap or touch (which instances clash).
   */
  selfIntersections() {
    return this._pairs(wasm.mr_overlap(this._live(), 0, 0));
  }

  /** Internal: the pairs the module just wrote, flattened. */
  _pairs(count) {
    const n = check(Number(count)) * (this.#instances ? 4 : 2);
    const at = wasm.mr_out(4) / 4;
    return heap().u32.slice(at, at + n);
  }

  /**
   * Where a sphere of `radius` whose centre moves along `origin + t·direction`, `near <= t
   * <= far`, first touches the mesh (its faces, edges or corners, exactly), or null: `{
   * distance, triangle, u, v, point, normal }` — `distance` the `t` it moved (`near` where
   * it touches already), `point` the contact on the triangle, `u`, `v` its barycentrics,
   * `normal` the unit normal from the triangle towards the sphere (the way to push it out,
   * or slide along); a scene's adds `instance`. With `options.axis` (three numbers), a
   * capsule instead: every point within `radius` of the segment from the centre to centre
   * + axis. `options.cull` as for rays, by the side the motion meets a triangle from. A
   * negative, NaN or infinite radius or a non-finite axis throws; a zero, NaN or infinite
   * direction touches nothing.
   */
  castSphere(origin, direction, radius, options) {
    const handle = this._live();
    const [ox, oy, oz] = vector3(origin, "origin");
    const [dx, dy, dz] = vector3(direction, "direction");
    const [ax, ay, az] = options?.axis === undefined ? [0, 0, 0] : vector3(options.axis, "axis");
    if (typeof radius !== "number") throw new Error(`meshray: radius must be a number, not ${radius}`);
    const [near, far] = rangeOf(options);
    return this._hit(wasm.mr_sweep(handle, ox, oy, oz, dx, dy, dz, ax, ay, az, radius, near, far, flagsOf(options)));
  }


  /**
   * `castSphere` for each ray of `rays` (`ox oy oz dx dy dz` per ray, a Float32Array), one
   * `radius` (and `options.axis`) for all, in one call: typed arrays `distance` (Infinity
   * where the sphere touches nothing), `triangle` (-1), `u`, `v` (NaN), and `point` and
   * `normal`, three numbers per ray (NaN); a scene's adds `instance`. `near` and `far` as
   * a batch's (a number, or one per ray). A bad radius or axis throws, for an empty batch
   * too.
   */
  castSpheres(rays, radius, options) {
    const handle = this._live();
    const [ax, ay, az] = options?.axis === undefined ? [0, 0, 0] : vector3(options.axis, "axis");
    if (typeof radius !== "number") throw new Error(`meshray: radius must be a number, not ${radius}`);
    const flags = flagsOf(options);
    const n = this._rays(rays);
    const [near, far] = batchRange(options, n);
    check(wasm.mr_sweep_batch(handle, n, near, far, flags, ax, ay, az, radius));
    const out = this._answers(n, ["distance", "triangle", "u", "v"]);
    const { f32 } = heap();
    for (const [key, k] of [["point", 5], ["normal", 10]]) {
      const at = wasm.mr_out(k) / 4;
      out[key] = f32.slice(at, at + 3 * n);
    }
    return out;
  }

  /** Some hit in range (not always the nearest), or null: the fastest occlusion test. */
  anyHit(origin, direction, options) {
    return this._cast(origin, direction, options, 1);
  }


  /** Every hit of one ray in range, nearest first: `{ distance, triangle, u, v }` each. */
  allHits(origin, direction, options) {
    const [ox, oy, oz] = vector3(origin, "origin");
    const [dx, dy, dz] = vector3(direction, "direction");
    const all = this.allHitsBatch(new Float32Array([ox, oy, oz, dx, dy, dz]), options);
    return Array.from(all.distance, (distance, k) => ({
      ...(this.#instances ? { instance: all.instance[k] } : {}),
      distance,
      triangle: all.triangle[k],
      u: all.u[k],
      v: all.v[k],
    }));
  }


  _rays(rays) {
    const n = floats(rays, 6, "rays (ox oy oz dx dy dz per ray)");
    check(wasm.mr_rays(n));
    heap().f32.set(rays, wasm.mr_input() / 4);
    return n;
  }


  _answers(n, keys) {
    const { f32, i32, u32 } = heap();
    const out = {};
    const arrays = {
      distance: [f32, 0, Float32Array],
      triangle: [i32, 1, Int32Array],
      u: [f32, 2, Float32Array],
      v: [f32, 3, Float32Array],
      ray: [u32, 4, Uint32Array],
      instance: [i32, 9, Int32Array],
    };
    for (const key of this.#instances ? [...keys, "instance"] : keys) {
      const [view, k] = arrays[key];
      const at = wasm.mr_out(k) / 4;
      out[key] = view.slice(at, at + n);
    }
    return out;
  }


  /**
   * The nearest hit of each ray of `rays` (`ox oy oz dx dy dz` per ray, a Float32Array):
   * typed arrays `distance` (Infinity on a miss), `triangle` (-1), `u`, `v`.
   */
  closestHits(rays, options) {
    return this._castBatch(rays, options, 0);
  }


  /** Any hit of each ray of `rays`, as `closestHits` reports them. */
  anyHits(rays, options) {
    return this._castBatch(rays, options, 1);
  }


  _castBatch(rays, options, any) {
    const handle = this._live();
    const flags = flagsOf(options);
    const n = this._rays(rays);
    const [near, far] = batchRange(options, n);
    check(wasm.mr_cast_batch(handle, n, near, far, flags, any));
    return this._answers(n, ["distance", "triangle", "u", "v"]);
  }


  /**
   * Every hit of each ray of `rays`, flattened, nearest first per ray: typed arrays `ray`
   * (which ray), `distance`, `triangle`, `u`, `v`.
   */
  allHitsBatch(rays, options) {
    const handle = this._live();
    const flags = flagsOf(options);
    const n = this._rays(rays);
    const [near, far] = batchRange(options, n);
    const count = check(Number(wasm.mr_all_hits(handle, n, near, far, flags)));
    return this._answers(count, ["ray", "distance", "triangle", "u", "v"]);
  }


  /**
   * The mesh's nearest point to `point` within `maxDistance`, or null: `{ point, distance,
   * triangle, u, v }`.
   */
  closestPoint(point, maxDistance = Infinity) {
    const out = this.closestPoints(new Float32Array(vector3(point, "point")), maxDistance);
    if (out.triangle[0] < 0) return null;
    return {
      ...(this.#instances ? { instance: out.instance[0] } : {}),
      point: Array.from(out.point),
      distance: out.distance[0],
      triangle: out.triangle[0],
      u: out.u[0],
      v: out.v[0],
    };
  }


  /**
   * The nearest mesh point to each of `points` (x y z each) within `maxDistance`: typed
   * arrays `point` (three per query, NaN when none), `distance` (Infinity), `triangle`
   * (-1), `u`, `v`.
   */
  closestPoints(points, maxDistance = Infinity) {
    const handle = this._live();
    maxDistanceOf(maxDistance);
    const n = this._points(points);
    check(wasm.mr_closest_points(handle, n, maxDistance));
    const out = this._answers(n, ["distance", "triangle", "u", "v"]);
    const at = wasm.mr_out(5) / 4;
    out.point = heap().f32.slice(at, at + 3 * n);
    return out;
  }


  _points(points) {
    const n = floats(points, 3, "points");
    check(wasm.mr_points(n));
    heap().f32.set(points, wasm.mr_input() / 4);
    return n;
  }


  // The f64 answers of the last batch of `n` points (winding numbers, signed distances).
  _numbers(n) {
    const at = wasm.mr_out(6) / 8;
    return heap().f64.slice(at, at + n);
  }


  /**
   * The generalized winding number of the mesh at `point` (Jacobson et al. 2013): the sum of
   * the signed solid angles of its triangles there, over 4π. For a closed mesh whose
   * triangles turn counter-clockwise seen from outside it is 1 inside and 0 outside; for a
   * mesh with holes, overlaps or loose triangles it moves smoothly between. By default the
   * fast sum (Barill et al. 2018: a subtree farther than `beta` times its radius counts as
   * one far-field term; `beta` >= 1, default 2: within 0.02 of the exact sum); `exact: true`
   * sums every triangle's solid angle. NaN for a NaN or infinite point. The first call on a
   * tree computes its far-field terms.
   */
  windingNumber(point, options) {
    return this.windingNumbers(new Float32Array(vector3(point, "point")), options)[0];
  }


  /**
   * The winding number at each of `points` (x y z each), as `windingNumber` answers it: a
   * Float64Array.
   */
  windingNumbers(points, options) {
    const handle = this._live();
    const [beta, exact] = windingOf(options);
    const n = this._points(points);
    check(wasm.mr_winding_numbers(handle, n, beta, exact));
    return this._numbers(n);
  }


  /**
   * Whether `point` is inside the mesh: its exact winding number is at least ½. On a closed
   * mesh that is the parity of a ray's crossings; on an open one, a soup or overlapping
   * shells it is still what "inside" means. False for a NaN or infinite point. The first
   * call on a tree makes a lattice of known winding numbers (about one point per four
   * triangles).
   */
  contains(point) {
    return this.containsPoints(new Float32Array(vector3(point, "point")))[0] === 1;
  }


  /**
   * Whether each of `points` (x y z each) is inside the mesh, as `contains` answers it: a
   * Uint8Array of 1 (inside) and 0.
   */
  containsPoints(points) {
    const handle = this._live();
    const n = this._points(points);
    check(wasm.mr_contains(handle, n));
    const at = wasm.mr_out(7);
    return heap().u8.slice(at, at + n);
  }


  /**
   * The distance from `point` to the mesh, negative inside it (where `contains` holds): the
   * distance of `closestPoint`, in f64. Null when no triangle is within `maxDistance`, and
   * for a NaN or infinite point.
   */
  signedDistance(point, maxDistance = Infinity) {
    const d = this.signedDistances(new Float32Array(vector3(point, "point")), maxDistance)[0];
    return Number.isNaN(d) ? null : d;
  }


  /**
   * The signed distance of each of `points` (x y z each), as `signedDistance` answers it: a
   * Float64Array, NaN where no triangle is within `maxDistance`.
   */
  signedDistances(points, maxDistance = Infinity) {
    const handle = this._live();
    maxDistanceOf(maxDistance);
    const n = this._points(points);
    check(wasm.mr_signed_distances(handle, n, maxDistance));
    return this._numbers(n);
  }
}

/**
 * A bounding volume hierarchy over a triangle mesh, in WebAssembly memory. Answers are
 * exact: what testing every triangle would answer.
 */
export class BVH extends Geometry {

  /**
   * Builds the tree of a mesh: `positions` (x y z per vertex) and `indices` (three vertex
   * numbers per triangle; without them, every three vertices are a triangle). `quality`:
   * "fast" (a linear BVH, for per-frame rebuilds), "default" (SAH) or "high" (SAH and
   * reinsertion, for static meshes). Throws for indices out of range, NaN or infinite
   * coordinates, an empty mesh, arrays of the wrong length, and more than 16 million
   * triangles (a build takes about 80 bytes per triangle at its peak, a "fast" one about
   * 160, and WebAssembly's memory ends at 4 GiB).
   */
  constructor(positions, indices, { quality = "default" } = {}) {
    const w = exports();
    if (positions === LOADED) {
      // BVH.fromBytes: `indices` is the loaded tree's handle.
      super(indices, "BVH", false);
      return;
    }
    const vertices = floats(positions, 3, "positions");
    let triangles;
    if (indices == null) {
      if (vertices % 3 !== 0) throw new Error(`meshray: without indices the vertex count must be a multiple of 3, not ${vertices}`);
      triangles = vertices / 3;
    } else {
      if (!(indices instanceof Uint32Array || indices instanceof Uint16Array || indices instanceof Uint8Array || Array.isArray(indices))) {
        throw new Error("meshray: indices must be a Uint32Array (or Uint16Array, or an array of numbers)");
      }
      if (indices.length % 3 !== 0) throw new Error(`meshray: indices has ${indices.length} numbers, not a multiple of 3`);
      triangles = indices.length / 3;
    }
    if (!(quality in QUALITIES)) throw new Error(`meshray: quality must be "fast", "default" or "high", not ${JSON.stringify(quality)}`);
    check(w.mr_stage_mesh(vertices, triangles));
    const { f32, u32 } = heap();
    f32.set(positions, w.mr_staged_positions() / 4);
    const at = w.mr_staged_triangles() / 4;
    if (indices == null) {
      for (let i = 0; i < 3 * triangles; i++) u32[at + i] = i;
    } else {
      if (Array.isArray(indices) && !indices.every((i) => Number.isInteger(i) && i >= 0 && i < 2 ** 32)) {
        throw new Error("meshray: indices must be whole numbers from 0 to 2^32 - 1");
      }
      u32.set(indices, at);
    }
    super(check(w.mr_build(QUALITIES[quality])), "BVH", false);
  }

  /** The mesh's triangle count. */
  get triangleCount() {
    return check(wasm.mr_triangle_count(this._live()));
  }

  /** The mesh's bounds: `{ min: [x, y, z], max: [x, y, z] }`. */
  get bounds() {
    check(wasm.mr_bounds(this._live()));
    const { f32 } = heap();
    const at = wasm.mr_hit() / 4;
    return { min: Array.from(f32.subarray(at, at + 3)), max: Array.from(f32.subarray(at + 3, at + 6)) };
  }

  /**
   * Moves the mesh's vertices to `positions` (x y z per vertex, as many vertices as the
   * mesh was built with, in the same order) and refits the tree to them: the boxes follow,
   * the tree's shape stays, and every query answers exactly for the new positions. For
   * animated meshes (skinning, morph targets, cloth): O(n), much faster than a build, and
   * it allocates nothing after the first call. The tree gets slower as triangles move
   * relative to each other; build anew when the motion is large. Throws for another vertex
   * count or NaN or infinite coordinates (the tree is then unchanged).
   */
  refit(positions) {
    const handle = this._live();
    const vertices = floats(positions, 3, "positions");
    const w = exports();
    check(w.mr_stage_mesh(vertices, 0));
    heap().f32.set(positions, w.mr_staged_positions() / 4);
    check(w.mr_refit(handle));
  }

  /**
   * This tree on a WebGPU device (`device`: a `GPUDevice`, such as
   * `await (await navigator.gpu.requestAdapter()).requestDevice()`): the tree is uploaded
   * once and the kernel compiled; resolves to a `GpuBVH` whose `closestHits` and `anyHits`
   * answer as this BVH's do. The GPU narrows each ray in f32 and the CPU finishes it
   * exactly, so every closest hit is this BVH's `closestHits` answer bit for bit. The copy
   * is the tree as it is now: after a `refit`, call the GpuBVH's `update()`.
   */
  gpu(device) {
    return GpuBVH._create(this, device);
  }

  /**
   * Internal, for adapters (meshray/three), not public API: gives the tree a rig (the
   * crate's `Rig`): `joints` and `weights` four per vertex (or null: no skin), `targets` an
   * array of morph targets' deltas (three per vertex). `_pose` then poses it.
   */
  _rig(joints, weights, targets) {
    const handle = this._live();
    const n = (joints?.length ?? 0) + (weights?.length ?? 0) + targets.reduce((a, t) => a + t.length, 0);
    check(wasm.mr_points(Math.ceil(n / 3)));
    const f32 = heap().f32;
    let at = wasm.mr_input() / 4;
    for (const part of [joints, weights, ...targets]) {
      if (!part) continue;
      f32.set(part, at);
      at += part.length;
    }
    check(wasm.mr_rig(handle, joints ? 1 : 0, targets.length));
  }

  /**
   * Internal, for adapters: poses the tree with its rig (`_rig`): `matrices` 16 numbers per
   * joint (column-major), `weights` one per morph target; refits (or rebuilds) the tree.
   */
  _pose(matrices, weights) {
    const handle = this._live();
    check(wasm.mr_points(Math.ceil((matrices.length + weights.length) / 3)));
    const f32 = heap().f32;
    const at = wasm.mr_input() / 4;
    f32.set(matrices, at);
    f32.set(weights, at + matrices.length);
    check(wasm.mr_pose(handle, matrices.length / 16, weights.length));
  }

  /**
   * Internal, for adapters: the mesh's vertex positions as they stand in the module (a
   * view, not a copy: valid until the tree next changes or the module's memory grows).
   */
  _positions(vertices) {
    const at = wasm.mr_positions(this._live()) / 4;
    return heap().f32.subarray(at, at + 3 * vertices);
  }

  /**
   * The tree as bytes (meshray's saved format: the mesh and the tree's shape, with a
   * checksum), to send to another worker or page, or to store; `BVH.fromBytes` loads them.
   * About 40 bytes per triangle.
   */
  toBytes() {
    const n = Number(check(wasm.mr_save(this._live())));
    const at = wasm.mr_out(8);
    return heap().u8.slice(at, at + n);
  }

  /**
   * A tree from `toBytes`'s bytes (a Uint8Array or an ArrayBuffer), checked whole as meshray
   * checks a saved tree (format and version, checksum, every index; boxes recomputed), so
   * bytes from anywhere are safe: corrupt ones throw. Much faster than a build.
   */
  static fromBytes(bytes) {
    const w = exports();
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw new Error("meshray: fromBytes takes a Uint8Array or an ArrayBuffer");
    check(w.mr_stage_bytes(bytes.length));
    heap().u8.set(bytes, w.mr_staged_bytes());
    return new BVH(LOADED, check(w.mr_load()));
  }

  _selection(count) {
    const at = wasm.mr_out(4) / 4;
    return heap().u32.slice(at, at + check(Number(count)));
  }

  /** The triangles overlapping the box `min..max`, ascending (a Uint32Array). */
  selectBox(min, max) {
    const handle = this._live();
    const [a, b] = [vector3(min, "min"), vector3(max, "max")];
    return this._selection(wasm.mr_select_box(handle, ...a, ...b));
  }

  /** The triangles overlapping the ball of `radius` around `centre`, ascending. */
  selectSphere(centre, radius) {
    const handle = this._live();
    if (typeof radius !== "number") throw new Error("meshray: radius must be a number");
    return this._selection(wasm.mr_select_sphere(handle, ...vector3(centre, "centre"), radius));
  }

  /**
   * The triangles in the frustum a camera sees through the screen rectangle with corners
   * `a` and `b` (pixels `[x, y]`, origin top left), hidden ones included, ascending: box
   * select. `view` and `projection` are 16 numbers each, column-major as three.js keeps
   * them (`camera.matrixWorldInverse.elements`, `camera.projectionMatrix.elements`);
   * `viewport` is `[width, height]` in pixels.
   */
  selectFrustum(view, projection, viewport, a, b) {
    const handle = this._live();
    for (const [m, what] of [[view, "view"], [projection, "projection"]]) {
      if (m == null || m.length !== 16) throw new Error(`meshray: ${what} must be 16 numbers (column-major)`);
    }
    if (viewport?.length !== 2 || a?.length !== 2 || b?.length !== 2) {
      throw new Error("meshray: viewport, a and b must be [x, y] pairs");
    }
    check(wasm.mr_points(11)); // room for 33 floats: the two matrices
    const { f32 } = heap();
    const at = wasm.mr_input() / 4;
    f32.set(view, at);
    f32.set(projection, at + 16);
    return this._selection(wasm.mr_select_frustum(handle, viewport[0], viewport[1], a[0], a[1], b[0], b[1]));
  }
}

// The WebGPU names the GPU batch uses (a browser's globals; absent in Node).
const STORAGE = 0x80, UNIFORM = 0x40, COPY_SRC = 0x04, COPY_DST = 0x08, MAP_READ = 0x01;

// The kernel's pipeline on each device, compiled once and shared by every tree put there
// (a software device such as SwiftShader takes minutes to compile it).
const PIPELINES = new WeakMap();

function pipelineOn(device) {
  let pipeline = PIPELINES.get(device);
  if (!pipeline) {
    const w = exports();
    const code = new TextDecoder().decode(heap().u8.subarray(w.mr_gpu_kernel(), w.mr_gpu_kernel() + w.mr_gpu_kernel_len()));
    const module = device.createShaderModule({ code, label: "meshray closest.wgsl" });
    pipeline = device.createComputePipelineAsync({ label: "meshray", layout: "auto", compute: { module, entryPoint: "main" } });
    PIPELINES.set(device, pipeline);
    // A failed compile is not kept: the next call tries again (and reports its error).
    pipeline.catch(() => PIPELINES.delete(device));
  }
  return pipeline;
}

/**
 * A BVH's tree on a WebGPU device (`bvh.gpu(device)`): batches of rays walked by
 * meshray-gpu's WGSL kernel (the same text the Rust crate runs through wgpu), each ray
 * finished on the CPU in the module, so that the answers are the BVH's own. Only the
 * watertight test without culling (the default options).
 */
export class GpuBVH {
  #bvh;
  #device;
  #pipeline;
  #nodes;
  #packets;
  /**
   * The last batch's counts: `rays`, `flagged` (cast again on the CPU), `several`
   * (narrowed to several candidates), `tested` (candidates tested exactly), `refused`
   * (certain hits the exact test refused), `visits` (nodes the kernel visited).
   */
  stats = null;

  /** Internal: `bvh.gpu(device)` makes one. */
  static async _create(bvh, device) {
    if (typeof device?.createBuffer !== "function" || typeof device?.queue?.writeBuffer !== "function") {
      throw new Error("meshray: gpu(device) takes a WebGPU GPUDevice");
    }
    bvh._live();
    const self = new GpuBVH();
    self.#bvh = bvh;
    self.#device = device;
    self.#pipeline = await pipelineOn(device);
    [self.#nodes, self.#packets] = [0, 1].map((part) => {
      const words = self._words(part);
      const buffer = device.createBuffer({ label: ["meshray nodes", "meshray packets"][part], size: Math.max(4, words.byteLength), usage: STORAGE | COPY_DST });
      if (words.length > 0) device.queue.writeBuffer(buffer, 0, words);
      return buffer;
    });
    return self;
  }

  // A copy of the tree's words for the device (`part` 0 nodes, 1 packets).
  _words(part) {
    const n = check(Number(wasm.mr_gpu_tree(this.#bvh._live(), part)));
    const limit = this.#device.limits?.maxStorageBufferBindingSize ?? Infinity;
    if (4 * n > limit) {
      throw new Error(`meshray: the tree's ${part ? "packets" : "nodes"} take ${4 * n} bytes, more than this device binds (${limit})`);
    }
    const at = wasm.mr_gpu_words() / 4;
    return heap().u32.slice(at, at + n);
  }

  /** Writes the BVH's tree over the device's copy again (after `bvh.refit`). */
  update() {
    for (const [part, buffer] of [[0, this.#nodes], [1, this.#packets]]) {
      const words = this._words(part);
      if (words.length > 0) this.#device.queue.writeBuffer(buffer, 0, words);
    }
  }

  /** Frees the device's copy of the tree (the BVH stays). */
  destroy() {
    this.#nodes?.destroy();
    this.#packets?.destroy();
    this.#nodes = this.#packets = null;
  }

  /**
   * The nearest hit of each ray of `rays` (`ox oy oz dx dy dz` per ray, a Float32Array),
   * resolving to what the BVH's `closestHits` returns for them, bit for bit: typed arrays
   * `distance` (Infinity on a miss), `triangle` (-1), `u`, `v`. `options`: `near` and `far`
   * (numbers, or one per ray); culling and Cramer's rule are refused.
   */
  closestHits(rays, options) {
    return this._cast(rays, options, 0);
  }

  /**
   * Some hit of each ray in range (an occlusion test), a hit exactly where the BVH's
   * `anyHits` finds one, reported as `closestHits` reports them.
   */
  anyHits(rays, options) {
    return this._cast(rays, options, 1);
  }

  async _cast(rays, options, any) {
    if (!this.#nodes) throw new Error("meshray: this GpuBVH was destroyed");
    const bvh = this.#bvh;
    const handle = bvh._live();
    const flags = flagsOf(options);
    const n = bvh._rays(rays);
    let [near, far] = batchRange(options, n);
    check(wasm.mr_gpu_rays(handle, n, near, far, flags));
    const [workgroup, chunk, rayBytes, answerBytes] = [0, 1, 2, 3].map((k) => wasm.mr_gpu_layout(k));
    const at = wasm.mr_gpu_rays_ptr();
    // Copied out before any wait: other calls may use the module's buffers meanwhile.
    const staged = heap().u8.slice(at, at + n * rayBytes);
    const answers = new Uint8Array(n * answerBytes);
    const device = this.#device;
    const limit = device.limits?.maxStorageBufferBindingSize ?? Infinity;
    const step = Math.max(1, Math.min(chunk, Math.floor(limit / answerBytes)));
    for (let first = 0; first < n; first += step) {
      const count = Math.min(step, n - first);
      const made = [];
      const buffer = (label, size, usage) => {
        const b = device.createBuffer({ label, size, usage });
        made.push(b);
        return b;
      };
      const rayBuffer = buffer("meshray rays", count * rayBytes, STORAGE | COPY_DST);
      const answerBuffer = buffer("meshray answers", count * answerBytes, STORAGE | COPY_SRC);
      const readBuffer = buffer("meshray read-back", count * answerBytes, MAP_READ | COPY_DST);
      const params = buffer("meshray params", 16, UNIFORM | COPY_DST);
      device.queue.writeBuffer(rayBuffer, 0, staged, first * rayBytes, count * rayBytes);
      device.queue.writeBuffer(params, 0, new Uint32Array([count, any, 0, 0]));
      const group = device.createBindGroup({
        layout: this.#pipeline.getBindGroupLayout(0),
        entries: [this.#nodes, this.#packets, rayBuffer, answerBuffer, params].map((b, binding) => ({ binding, resource: { buffer: b } })),
      });
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(this.#pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(Math.ceil(count / workgroup));
      pass.end();
      encoder.copyBufferToBuffer(answerBuffer, 0, readBuffer, 0, count * answerBytes);
      device.queue.submit([encoder.finish()]);
      try {
        await readBuffer.mapAsync(1 /* GPUMapMode.READ */);
        answers.set(new Uint8Array(readBuffer.getMappedRange()), first * answerBytes);
        readBuffer.unmap();
      } finally {
        for (const b of made) b.destroy();
      }
    }
    // The finish, on the rays staged again (as above: the module's buffers may have changed
    // while the GPU worked).
    bvh._rays(rays);
    [near, far] = batchRange(options, n);
    check(wasm.mr_gpu_answers(n));
    heap().u8.set(answers, wasm.mr_gpu_answers_ptr());
    check(wasm.mr_gpu_finish(handle, n, near, far, flags, any));
    const f64 = heap().f64;
    const s = wasm.mr_gpu_stats() / 8;
    const [count, flagged, several, tested, refused, visits] = f64.slice(s, s + 6);
    this.stats = { rays: count, flagged, several, tested, refused, visits };
    return bvh._answers(n, ["distance", "triangle", "u", "v"]);
  }
}

/**
 * BVHs placed by 4 × 4 transforms and asked together: each instance is a `BVH` (one BVH
 * can be placed many times without a copy) and its transform; every query of `Geometry`
 * answers in world space and names the instance. A scene holds each BVH as it was when
 * placed: refitting or posing the BVH afterwards leaves the scene's as it was (place it
 * again to follow it).
 */
export class Scene extends Geometry {
  /** An empty scene. */
  constructor() {
    super(check(exports().mr_scene_new()), "Scene", true);
  }

  // The transform as the module reads it: 16 numbers, column-major (a three.js
  // `Matrix4.elements`); the identity when omitted.
  /**
   * Places `bvh` by `matrix` (16 numbers column-major, or a three.js `Matrix4`; the identity
   * when omitted) and returns the instance's id (0, 1, ...; a removed id is reused). Throws
   * for a freed BVH and a singular, non-affine or non-finite transform.
   */
  add(bvh, matrix) {
    const scene = this._live();
    if (!(bvh instanceof BVH)) throw new Error("meshray: Scene.add takes a BVH");
    const tree = bvh._live();
    stageTransform(matrix);
    return check(wasm.mr_scene_add(scene, tree));
  }

  /** Moves instance `id` to `matrix` (as for `add`). */
  setTransform(id, matrix) {
    const scene = this._live();
    stageTransform(matrix);
    check(wasm.mr_scene_set_transform(scene, instanceId(id)));
  }

  /** Removes instance `id` (its id may be reused by a later `add`). */
  remove(id) {
    check(wasm.mr_scene_remove(this._live(), instanceId(id)));
  }

  /** How many instances the scene holds. */
  get size() {
    return check(wasm.mr_scene_len(this._live()));
  }
}

/** Stages a transform (16 numbers column-major, a three.js `Matrix4`, or the identity) for the module. */
function stageTransform(matrix) {
  const m = matrix?.elements ?? matrix ?? [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  if (m.length !== 16 || !Array.from(m).every((x) => typeof x === "number")) {
    throw new Error("meshray: a transform is 16 numbers, column-major (a three.js Matrix4 or its elements)");
  }
  check(wasm.mr_points(6)); // room for 18 floats
  heap().f32.set(m, wasm.mr_input() / 4);
}

function instanceId(id) {
  if (!Number.isInteger(id) || id < 0 || id >= 2 ** 32) throw new Error(`meshray: no instance ${id} in the scene`);
  return id;
}
