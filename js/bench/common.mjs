// The measuring code of the meshray vs three-mesh-bvh benchmark, shared by Node
// (bench.mjs) and the browser page (bench-page.mjs): an OBJ parser, a BVHRAYS1 reader and
// `benchMesh`, which builds both trees of one mesh and times them on the ray sets.
//
// Nothing here touches the file system or the network: the callers hand in bytes.

import * as THREE from "three";
import { MeshBVH, SAH, CENTER, acceleratedRaycast } from "three-mesh-bvh";

const now = () => performance.now();

/** The shared meshes the benches run by default: name -> path in the shared directory. */
export const SHARED_MESHES = {
  "stanford-bunny": "stanford-bunny/stanford-bunny.obj",
  armadillo: "armadillo/armadillo.obj",
  "crytek-sponza": "crytek-sponza/sponza.obj",
  conference: "conference/conference.obj",
  "lost-empire": "lost-empire/lost_empire.obj",
};

// ---------------------------------------------------------------------------------------
// OBJ: positions (`v x y z`) and faces (`f a b c ...`, any of the v, v/vt, v/vt/vn, v//vn
// forms, negative = relative), polygons split as a fan. Everything else is skipped.

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k); // exact doubles
const latin1 = new TextDecoder("latin1");
let at = 0; // the parser's cursor after a number

function isSpace(c) {
  return c === 32 || c === 9;
}

// A decimal number at bytes[i..]: exact to the double when it has at most 15 significant
// digits and a small exponent (the usual case), else through parseFloat.
function parseNumber(bytes, i) {
  const start = i;
  let c = bytes[i];
  let negative = false;
  if (c === 45 || c === 43) {
    negative = c === 45;
    c = bytes[++i];
  }
  let mantissa = 0;
  let digits = 0;
  let scale = 0;
  while (c >= 48 && c <= 57) {
    mantissa = mantissa * 10 + (c - 48);
    digits++;
    c = bytes[++i];
  }
  if (c === 46) {
    c = bytes[++i];
    while (c >= 48 && c <= 57) {
      mantissa = mantissa * 10 + (c - 48);
      digits++;
      scale--;
      c = bytes[++i];
    }
  }
  let slow = digits > 15 || digits === 0;
  if (c === 101 || c === 69) {
    c = bytes[++i];
    let expNegative = false;
    if (c === 45 || c === 43) {
      expNegative = c === 45;
      c = bytes[++i];
    }
    let e = 0;
    while (c >= 48 && c <= 57) {
      e = e * 10 + (c - 48);
      c = bytes[++i];
    }
    scale += expNegative ? -e : e;
  }
  at = i;
  if (slow || scale < -22 || scale > 22) {
    const v = parseFloat(latin1.decode(bytes.subarray(start, i)));
    if (Number.isNaN(v)) throw new Error(`OBJ: bad number at byte ${start}`);
    return v;
  }
  const v = scale < 0 ? mantissa / POW10[-scale] : mantissa * POW10[scale];
  return negative ? -v : v;
}

/**
 * Parses an OBJ file's bytes (Uint8Array): `{ positions: Float32Array, indices: Uint32Array }`.
 */
export function parseOBJ(bytes) {
  let positions = new Float32Array(1 << 16);
  let indices = new Uint32Array(1 << 16);
  let np = 0;
  let ni = 0;
  const face = [];
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    let c = bytes[i];
    while (isSpace(c)) c = bytes[++i];
    const next = bytes[i + 1];
    if (c === 118 && isSpace(next)) {
      // v x y z
      if (np + 3 > positions.length) {
        const grown = new Float32Array(positions.length * 2);
        grown.set(positions);
        positions = grown;
      }
      i += 2;
      for (let k = 0; k < 3; k++) {
        while (isSpace(bytes[i])) i++;
        positions[np++] = parseNumber(bytes, i);
        i = at;
      }
    } else if (c === 102 && isSpace(next)) {
      // f a b c ...
      i += 2;
      face.length = 0;
      const vertices = np / 3;
      for (;;) {
        while (isSpace(bytes[i])) i++;
        c = bytes[i];
        if (i >= n || c === 10 || c === 13 || c === 35) break;
        let negative = false;
        if (c === 45) {
          negative = true;
          c = bytes[++i];
        }
        let v = 0;
        while (c >= 48 && c <= 57) {
          v = v * 10 + (c - 48);
          c = bytes[++i];
        }
        v = negative ? vertices - v : v - 1;
        if (!(v >= 0 && v < vertices)) throw new Error(`OBJ: face index out of range at byte ${i}`);
        face.push(v);
        while (i < n && !isSpace(c) && c !== 10 && c !== 13) c = bytes[++i]; // /vt/vn
      }
      if (face.length >= 3) {
        const need = ni + 3 * (face.length - 2);
        if (need > indices.length) {
          const grown = new Uint32Array(Math.max(need, indices.length * 2));
          grown.set(indices);
          indices = grown;
        }
        for (let k = 1; k + 1 < face.length; k++) {
          indices[ni++] = face[0];
          indices[ni++] = face[k];
          indices[ni++] = face[k + 1];
        }
      }
    }
    while (i < n && bytes[i] !== 10) i++;
    i++;
  }
  return { positions: positions.slice(0, np), indices: indices.slice(0, ni) };
}

// ---------------------------------------------------------------------------------------
// BVHRAYS1 ray files: a 32-byte header (magic, count u64, seed u64, kind u32, width u32),
// then ox oy oz dx dy dz tmin tmax (f32) per ray.

/**
 * Reads a ray file (ArrayBuffer or Uint8Array): `{ count, seed, kind, width, tmin, rays }`,
 * `rays` holding ox oy oz dx dy dz per ray (what meshray's batch queries take). Refuses a
 * set whose tmin varies or whose tmax is finite (the benchmark passes one near and far).
 */
export function parseRays(data) {
  let bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (bytes.byteOffset % 4 !== 0) bytes = bytes.slice();
  const magic = latin1.decode(bytes.subarray(0, 8));
  if (magic !== "BVHRAYS1") throw new Error(`not a BVHRAYS1 file (magic ${JSON.stringify(magic)})`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = Number(view.getBigUint64(8, true));
  const seed = Number(view.getBigUint64(16, true));
  const kind = view.getUint32(24, true);
  const width = view.getUint32(28, true);
  if (bytes.byteLength !== 32 + 32 * count) throw new Error(`ray file: ${count} rays but ${bytes.byteLength} bytes`);
  const f = new Float32Array(bytes.buffer, bytes.byteOffset + 32, 8 * count);
  const rays = new Float32Array(6 * count);
  const tmin = count > 0 ? f[6] : 0;
  for (let r = 0; r < count; r++) {
    const s = 8 * r;
    const d = 6 * r;
    rays[d] = f[s];
    rays[d + 1] = f[s + 1];
    rays[d + 2] = f[s + 2];
    rays[d + 3] = f[s + 3];
    rays[d + 4] = f[s + 4];
    rays[d + 5] = f[s + 5];
    if (f[s + 6] !== tmin || f[s + 7] !== Infinity) {
      throw new Error(`ray file: ray ${r} has tmin ${f[s + 6]} tmax ${f[s + 7]}; expected ${tmin} and +inf for all`);
    }
  }
  return { count, seed, kind, width, tmin, rays };
}

/**
 * At most `n` rays of a set, spread evenly: for an image set (`width` > 0) every s-th pixel
 * of every s-th row, a smaller image of the same view (neighbouring rays stay neighbours,
 * as in the full image); else every (count/n)-th ray. The whole set when n >= count.
 */
export function sampleRays(rays, n, width = 0) {
  const count = rays.length / 6;
  if (!(n < count)) return rays;
  let picks;
  if (width > 0 && count % width === 0) {
    const height = count / width;
    const s = Math.ceil(Math.sqrt(count / n));
    picks = [];
    for (let y = 0; y < height; y += s) for (let x = 0; x < width; x += s) picks.push(y * width + x);
  } else {
    picks = Array.from({ length: n }, (_, k) => Math.floor((k * count) / n));
  }
  const out = new Float32Array(6 * picks.length);
  picks.forEach((r, k) => out.set(rays.subarray(6 * r, 6 * r + 6), 6 * k));
  return out;
}

// ---------------------------------------------------------------------------------------
// The benchmark.

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

let freshCount = 0;

// A meshray module instance of its own (a fresh wasm memory, imported under another URL),
// so the memory growth of one build can be read: through the package's `memoryBytes()`,
// or, in a version without it, by seeing the instance `init` makes.
async function freshMeshray() {
  const url = new URL(`../meshray.js?instance=${++freshCount}`, import.meta.url);
  const meshray = await import(url.href);
  if (typeof meshray.memoryBytes === "function") {
    await meshray.init();
    return { meshray, memoryBytes: meshray.memoryBytes };
  }
  const original = WebAssembly.instantiate;
  let instance = null;
  WebAssembly.instantiate = async function (...args) {
    const result = await original.apply(this, args);
    instance = result instanceof WebAssembly.Instance ? result : result.instance;
    return result;
  };
  try {
    await meshray.init();
  } finally {
    WebAssembly.instantiate = original;
  }
  const memory = instance?.exports?.memory;
  if (!memory) throw new Error("could not see meshray's wasm memory");
  return { meshray, memoryBytes: () => memory.buffer.byteLength };
}

function geometryOf(positions, indices) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.BufferAttribute(positions, 3));
  geometry.setIndex(new THREE.BufferAttribute(indices.slice(), 1)); // three-mesh-bvh reorders it
  return geometry;
}

// three-mesh-bvh, closest hit of every ray: raycastFirst with one reused THREE.Ray.
// Directions are unit length in the standard sets, so its distance is meshray's t.
function tmbClosest(bvh, rays, near, out) {
  const ray = new THREE.Ray();
  const o = ray.origin;
  const d = ray.direction;
  const n = rays.length / 6;
  for (let r = 0; r < n; r++) {
    const k = 6 * r;
    o.x = rays[k];
    o.y = rays[k + 1];
    o.z = rays[k + 2];
    d.x = rays[k + 3];
    d.y = rays[k + 4];
    d.z = rays[k + 5];
    const hit = bvh.raycastFirst(ray, THREE.DoubleSide, near, Infinity);
    out[r] = hit === null ? Infinity : hit.distance;
  }
}

// One ray at a time through three's Raycaster (firstHitOnly), whatever `mesh.raycast` is.
function raycasterLoop(raycaster, mesh, rays, out) {
  const o = raycaster.ray.origin;
  const d = raycaster.ray.direction;
  const hits = [];
  const n = rays.length / 6;
  for (let r = 0; r < n; r++) {
    const k = 6 * r;
    o.set(rays[k], rays[k + 1], rays[k + 2]);
    d.set(rays[k + 3], rays[k + 4], rays[k + 5]);
    hits.length = 0;
    raycaster.intersectObject(mesh, false, hits);
    out[r] = hits.length ? hits[0].distance : Infinity;
  }
}

// Agreement of two distance arrays on every `stride`-th entry: the same distance (relative
// 1e-4, ties between triangles count as agreeing) or both a miss.
function compare(a, b, stride) {
  let checked = 0;
  let hitMiss = 0;
  let distance = 0;
  const examples = [];
  for (let r = 0; r < a.length; r += stride) {
    checked++;
    const x = a[r];
    const y = b[r];
    if (x === Infinity && y === Infinity) continue;
    if ((x === Infinity) !== (y === Infinity)) {
      hitMiss++;
    } else if (!(Math.abs(x - y) <= 1e-4 * Math.max(Math.abs(x), Math.abs(y)))) {
      distance++;
    } else {
      continue;
    }
    if (examples.length < 5) examples.push({ ray: r, a: x, b: y });
  }
  return { checked, hitMiss, distance, disagreements: hitMiss + distance, examples };
}

/**
 * Benchmarks one mesh. `mesh`: `{ name, positions, indices }`; `sets`: `[{ name, tmin,
 * rays }]` (rays already sampled to the size wanted); options: `passes` (3), `raycasterRays`
 * (100000 per set), `adapter` (the meshray three.js adapter module, or null), `log`.
 */
export async function benchMesh(mesh, sets, options = {}) {
  const passes = options.passes ?? 3;
  const raycasterRays = options.raycasterRays ?? 100000;
  const log = options.log ?? (() => {});
  const adapter = options.adapter ?? null;
  const { positions, indices } = mesh;
  const triangles = indices.length / 3;
  const vertices = positions.length / 3;
  const result = { mesh: mesh.name, triangles, vertices, sets: [] };

  // Builds, alternating: meshray (default quality), three-mesh-bvh SAH, three-mesh-bvh CENTER.
  const { meshray, memoryBytes } = await freshMeshray();
  result.meshrayBuild = meshray.build();
  const times = { meshray: [], sah: [], center: [] };
  let bvh = null;
  let tmb = null;
  let tmbGeometry = null;
  for (let p = 0; p < passes; p++) {
    if (bvh) bvh.free();
    const before = memoryBytes();
    let t = now();
    bvh = new meshray.BVH(positions, indices, { quality: "default" });
    times.meshray.push(now() - t);
    if (p === 0) result.meshrayWasmGrowth = memoryBytes() - before;

    const centerGeometry = geometryOf(positions, indices);
    t = now();
    const center = new MeshBVH(centerGeometry, { strategy: CENTER });
    times.center.push(now() - t);
    if (p === 0) result.tmbCenterBytes = MeshBVH.serialize(center, { cloneBuffers: false }).roots.reduce((s, b) => s + b.byteLength, 0);

    tmbGeometry = geometryOf(positions, indices);
    t = now();
    tmb = new MeshBVH(tmbGeometry, { strategy: SAH });
    times.sah.push(now() - t);
    log(`  build pass ${p + 1}: meshray ${times.meshray.at(-1).toFixed(1)} ms, three-mesh-bvh SAH ${times.sah.at(-1).toFixed(1)} ms, CENTER ${times.center.at(-1).toFixed(1)} ms`);
  }
  result.build = { meshray: median(times.meshray), sah: median(times.sah), center: median(times.center) };
  result.meshrayWasmMemory = memoryBytes();
  result.meshBytes = 12 * vertices + 12 * triangles; // the mesh copy meshray keeps in wasm
  result.tmbBytes = MeshBVH.serialize(tmb, { cloneBuffers: false }).roots.reduce((s, b) => s + b.byteLength, 0);

  // The Raycaster route: three-mesh-bvh's acceleratedRaycast and meshray's adapter.
  const material = new THREE.MeshBasicMaterial({ side: THREE.DoubleSide });
  tmbGeometry.boundsTree = tmb;
  const tmbMesh = new THREE.Mesh(tmbGeometry, material);
  tmbMesh.raycast = acceleratedRaycast;
  let mrMesh = null;
  if (adapter) {
    const geometry = geometryOf(positions, indices);
    await adapter.computeBoundsTree.call(geometry);
    mrMesh = new THREE.Mesh(geometry, material);
    mrMesh.raycast = adapter.acceleratedRaycast;
  }
  const raycaster = new THREE.Raycaster();
  raycaster.firstHitOnly = true;

  for (const set of sets) {
    const n = set.rays.length / 6;
    const near = set.tmin;
    const row = { set: set.name, rays: n, tmin: near };
    const t = { closest: [], tmbClosest: [], any: [] };
    let closest = null;
    let any = null;
    const tmbDistance = new Float64Array(n);
    for (let p = 0; p < passes; p++) {
      let s = now();
      closest = bvh.closestHits(set.rays, { near });
      t.closest.push(now() - s);
      s = now();
      tmbClosest(tmb, set.rays, near, tmbDistance);
      t.tmbClosest.push(now() - s);
      s = now();
      any = bvh.anyHits(set.rays, { near });
      t.any.push(now() - s);
      log(`  ${set.name} pass ${p + 1}: meshray closest ${t.closest.at(-1).toFixed(0)} ms, any ${t.any.at(-1).toFixed(0)} ms; three-mesh-bvh ${t.tmbClosest.at(-1).toFixed(0)} ms`);
    }
    const mrays = (ms) => n / ms / 1000;
    row.meshray = { closest: mrays(median(t.closest)), any: mrays(median(t.any)) };
    // three-mesh-bvh has no any-hit query; its fastest occlusion answer is raycastFirst,
    // the same call as closest hit, so one timing serves both columns.
    row.tmb = { closest: mrays(median(t.tmbClosest)), any: mrays(median(t.tmbClosest)) };

    let hits = 0;
    let tmbHits = 0;
    let anyMismatch = 0;
    for (let r = 0; r < n; r++) {
      const hit = closest.distance[r] !== Infinity;
      hits += hit;
      tmbHits += tmbDistance[r] !== Infinity;
      if (hit !== (any.distance[r] !== Infinity)) anyMismatch++;
    }
    row.hits = { meshray: hits, tmb: tmbHits };
    row.anyVsClosestMismatch = anyMismatch; // meshray: any-hit found iff closest found
    row.check = compare(closest.distance, tmbDistance, 97);

    // Single rays through THREE.Raycaster, on an even subset of the set.
    const sub = sampleRays(set.rays, Math.min(raycasterRays, n), set.width);
    const m = sub.length / 6;
    raycaster.near = near;
    raycaster.far = Infinity;
    const tr = { tmb: [], meshray: [] };
    const tmbOut = new Float64Array(m);
    const mrOut = new Float64Array(m);
    for (let p = 0; p < passes; p++) {
      if (mrMesh) {
        const s = now();
        raycasterLoop(raycaster, mrMesh, sub, mrOut);
        tr.meshray.push(now() - s);
      }
      const s = now();
      raycasterLoop(raycaster, tmbMesh, sub, tmbOut);
      tr.tmb.push(now() - s);
    }
    row.raycasterRays = m;
    row.tmb.raycaster = m / median(tr.tmb) / 1000;
    if (mrMesh) {
      row.meshray.raycaster = m / median(tr.meshray) / 1000;
      row.raycasterCheck = compare(mrOut, tmbOut, 1);
    }
    log(`  ${set.name}: ${n} rays, meshray ${row.meshray.closest.toFixed(2)} / ${row.meshray.any.toFixed(2)} Mrays/s, three-mesh-bvh ${row.tmb.closest.toFixed(2)} Mrays/s; raycaster ${row.meshray.raycaster?.toFixed(2) ?? "-"} vs ${row.tmb.raycaster.toFixed(2)}; ${row.check.disagreements} of ${row.check.checked} disagree`);
    result.sets.push(row);
  }
  if (mrMesh && adapter.disposeBoundsTree) adapter.disposeBoundsTree.call(mrMesh.geometry);
  bvh.free();
  return result;
}
