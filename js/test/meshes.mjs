// Test meshes: the shared meshes' directory, OBJ files, procedural meshes, and a seeded
// random generator.
import { existsSync, readFileSync } from "node:fs";
import { parseOBJ } from "../bench/common.mjs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The shared meshes' directory ($MESHRAY_MESHES, else ../shared/meshes beside the repo), or
 * null when absent. A test that needs them skips without them, except under CI=true.
 */
export function sharedMeshes() {
  const dir = process.env.MESHRAY_MESHES ?? join(repo, "..", "shared", "meshes");
  return existsSync(join(dir, "manifest.tsv")) ? dir : null;
}

/** node:test's `skip` option for a test of the shared meshes: false when they are there. */
export function skipWithoutShared() {
  if (sharedMeshes()) return false;
  if (process.env.CI === "true") {
    throw new Error("the shared meshes are missing (set MESHRAY_MESHES); under CI=true they are required");
  }
  return "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES";
}

/**
 * Reads the `v` and `f` lines of an OBJ file (polygons fanned from their first corner):
 * `{ positions: Float32Array, indices: Uint32Array }`, with the benchmark's reader.
 */
export function readObj(path) {
  return parseOBJ(readFileSync(path));
}

/** The repository's own assets/NAME. */
export function asset(name) {
  return join(repo, "assets", name);
}

/** A seeded generator of floats in [0, 1) (mulberry32). */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A closed UV sphere of `rings × segments` quads (degenerate triangles at the poles),
 * radius `r` at `centre`, its triangles counter-clockwise seen from outside.
 */
export function sphere(rings, segments, r = 1, centre = [0, 0, 0]) {
  const positions = [];
  const indices = [];
  for (let i = 0; i <= rings; i++) {
    const theta = (Math.PI * i) / rings;
    for (let j = 0; j < segments; j++) {
      const phi = (2 * Math.PI * j) / segments;
      positions.push(
        centre[0] + r * Math.sin(theta) * Math.cos(phi),
        centre[1] + r * Math.cos(theta),
        centre[2] + r * Math.sin(theta) * Math.sin(phi),
      );
    }
  }
  const at = (i, j) => i * segments + (j % segments);
  for (let i = 0; i < rings; i++) {
    for (let j = 0; j < segments; j++) {
      // Counter-clockwise seen from outside.
      indices.push(at(i, j), at(i + 1, j + 1), at(i + 1, j));
      indices.push(at(i, j), at(i, j + 1), at(i + 1, j + 1));
    }
  }
  return { positions: new Float32Array(positions), indices: new Uint32Array(indices) };
}

/** `n` random triangles in the unit cube (a soup: overlapping, every size). */
export function soup(n, rng) {
  const positions = new Float32Array(9 * n);
  for (let t = 0; t < n; t++) {
    const c = [rng(), rng(), rng()];
    const size = 0.3 * rng() ** 3;
    for (let k = 0; k < 9; k++) positions[9 * t + k] = c[k % 3] + size * (rng() - 0.5);
  }
  return { positions, indices: null };
}

/**
 * `n` rays from a sphere around the bounds towards random points in them (the Rust bench's
 * random set), unit directions: a Float32Array of ox oy oz dx dy dz per ray.
 */
export function rays(positions, n, rng) {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i++) {
    lo[i % 3] = Math.min(lo[i % 3], positions[i]);
    hi[i % 3] = Math.max(hi[i % 3], positions[i]);
  }
  const centre = lo.map((l, k) => (l + hi[k]) / 2);
  const radius = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  const out = new Float32Array(6 * n);
  for (let i = 0; i < n; i++) {
    let g;
    do g = [rng() * 2 - 1, rng() * 2 - 1, rng() * 2 - 1];
    while (Math.hypot(...g) > 1 || Math.hypot(...g) < 1e-3);
    const len = Math.hypot(...g);
    const o = centre.map((c, k) => c + (radius * g[k]) / len);
    const target = lo.map((l, k) => l + (hi[k] - l) * rng());
    const d = target.map((t, k) => t - o[k]);
    const dl = Math.hypot(...d);
    out.set([...o, ...d.map((x) => x / dl)], 6 * i);
  }
  return out;
}
