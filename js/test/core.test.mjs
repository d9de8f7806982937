// The package's core against f64 brute forces (procedural meshes and the shared meshes),
// and bad input: every mistake throws an Error that says what is wrong, never a wasm trap.
import assert from "node:assert/strict";
import { join } from "node:path";
import test from "node:test";

import { BVH, build, hasSimd, init, memoryBytes } from "../meshray.js";
import { bruteHits, bruteNearest, corners, hitTriangle } from "./brute.mjs";
import { asset, random, rays, readObj, sharedMeshes, skipWithoutShared, soup, sphere } from "./meshes.mjs";

await init();

const tolerance = (t) => 1e-5 * Math.max(1, Math.abs(t));

/**
 * Checks the closest, any and all hits of `rays` (batch and single) against the f64 brute
 * force. A difference is allowed only where f64 says the ray passes within 1e-5 (in
 * barycentrics) of an edge (counted: they must stay under 1 %), and at a tie of distances,
 * where the nearest must be one of the tied triangles. Returns the number of rays that hit.
 */
function checkRays(mesh, bvh, rayset, options = {}) {
  const n = rayset.length / 6;
  const closest = bvh.closestHits(rayset, options);
  const any = bvh.anyHits(rayset, options);
  const all = bvh.allHitsBatch(rayset, options);
  let borderline = 0;
  let ties = 0;
  let hits = 0;
  let next = 0; // the first hit of the current ray in `all`
  const failures = [];
  for (let k = 0; k < n; k++) {
    const brute = bruteHits(mesh, rayset, k, options);
    const sure = brute.filter((h) => h.margin > 1e-5);
    const mine = [];
    while (next < all.ray.length && all.ray[next] === k) mine.push(all.triangle[next++]);
    const t = closest.distance[k];
    const tri = closest.triangle[k];
    const o = Array.from(rayset.subarray(6 * k, 6 * k + 3));
    const d = Array.from(rayset.subarray(6 * k + 3, 6 * k + 6));
    // The single-ray query answers as the batch does.
    const single = bvh.closestHit(o, d, options);
    if ((single?.triangle ?? -1) !== tri || (single && single.distance !== t)) {
      failures.push(`ray ${k}: closestHit ${JSON.stringify(single)} vs batch ${tri} at ${t}`);
    }
    if (tri >= 0) hits++;
    // A tie (two triangles at the same distance within rounding, e.g. coplanar ones): either
    // may be the nearest, and the all-hits sets may differ by one of them.
    const tied = !brute.some((h) => h.margin <= 1e-5) && brute.length > 1 && brute[1].t - brute[0].t <= tolerance(brute[0].t);
    if (tied) {
      ties++;
      if (!brute.some((h) => h.triangle === tri && Math.abs(h.t - t) <= tolerance(h.t))) {
        failures.push(`ray ${k}: triangle ${tri} at ${t} is none of the tied nearest`);
      }
      continue;
    }
    if (brute.some((h) => h.margin <= 1e-5)) {
      borderline++;
      // Even then, a reported hit must be a real one at its distance.
      if (tri >= 0) {
        const h = hitTriangle(o, d, corners(mesh, tri));
        if (!h || Math.abs(h.t - t) > tolerance(h.t)) failures.push(`ray ${k}: triangle ${tri} at ${t} is no hit`);
      }
      continue;
    }
    const want = sure[0];
    if (!want) {
      if (tri >= 0 || any.triangle[k] >= 0 || mine.length) failures.push(`ray ${k}: a hit where f64 sees none`);
      continue;
    }
    if (tri !== want.triangle || Math.abs(t - want.t) > tolerance(want.t)) {
      failures.push(`ray ${k}: triangle ${tri} at ${t}, f64 says ${want.triangle} at ${want.t}`);
    }
    if (Math.abs(closest.u[k] - want.u) > 1e-4 || Math.abs(closest.v[k] - want.v) > 1e-4) {
      failures.push(`ray ${k}: u, v ${closest.u[k]}, ${closest.v[k]}, f64 says ${want.u}, ${want.v}`);
    }
    if (!sure.some((h) => h.triangle === any.triangle[k])) failures.push(`ray ${k}: any hit ${any.triangle[k]} is no hit`);
    const expected = sure.map((h) => h.triangle).sort((a, b) => a - b);
    if (JSON.stringify([...mine].sort((a, b) => a - b)) !== JSON.stringify(expected)) {
      failures.push(`ray ${k}: all hits ${mine}, f64 says ${expected}`);
    }
  }
  assert.deepEqual(failures.slice(0, 10), []);
  assert.ok(borderline <= Math.max(2, n / 100), `${borderline} borderline rays of ${n}`);
  return hits;
}

test("the simd128 build loads where the engine has SIMD", () => {
  assert.equal(build(), hasSimd() ? "simd128" : "scalar");
});

test("a random soup: closest, any and all hits equal the f64 brute force", () => {
  const rng = random(1);
  const mesh = soup(3000, rng);
  for (const quality of ["fast", "default", "high"]) {
    const bvh = new BVH(mesh.positions, null, { quality });
    assert.equal(bvh.triangleCount, 3000);
    const hits = checkRays(mesh, bvh, rays(mesh.positions, 1500, rng));
    assert.ok(hits > 300, `${hits} hits`);
    bvh.free();
  }
});

test("a sphere, with a range, culling and the watertight test", () => {
  const rng = random(2);
  const mesh = sphere(24, 48, 2, [1, -3, 0.5]);
  const bvh = new BVH(mesh.positions, mesh.indices);
  const set = rays(mesh.positions, 1000, rng);
  for (const options of [
    {},
    { near: 5, far: 8 },
    { cull: "back" },
    { cull: "front" },
    { watertight: true },
  ]) {
    assert.ok(checkRays(mesh, bvh, set, options) > 100, JSON.stringify(options));
  }
  // From outside, front faces are met first: the sphere's triangles turn counter-clockwise
  // seen from outside.
  // (A ray off the axis, which would pass through vertices.)
  const front = bvh.closestHit([1.13, -2.93, 10], [0, 0, -1], { cull: "back" });
  assert.ok(front.frontFace && Math.abs(front.distance - 7.5055) < 2e-2, JSON.stringify(front));
  assert.ok(front.normal[2] > 0.9, "the normal faces the ray");
  const back = bvh.closestHit([1.13, -2.93, 10], [0, 0, -1], { cull: "front" });
  assert.ok(!back.frontFace && Math.abs(back.distance - 11.4945) < 2e-2, JSON.stringify(back));
  bvh.free();
});

test("the project's scene asset", () => {
  const mesh = readObj(asset("scene.obj"));
  const bvh = new BVH(mesh.positions, mesh.indices);
  assert.ok(checkRays(mesh, bvh, rays(mesh.positions, 2000, random(3))) > 500);
  bvh.free();
});

for (const name of ["stanford-bunny/stanford-bunny.obj", "teapot/teapot.obj", "suzanne/suzanne.obj", "crytek-sponza/sponza.obj"]) {
  test(`shared mesh ${name}: hits equal the f64 brute force`, { skip: skipWithoutShared() }, () => {
    const mesh = readObj(join(sharedMeshes(), name));
    const bvh = new BVH(mesh.positions, mesh.indices);
    const n = Math.max(50, Math.min(1000, Math.floor(3e7 / (mesh.indices.length / 3))));
    assert.ok(checkRays(mesh, bvh, rays(mesh.positions, n, random(4))) > n / 10);
    bvh.free();
  });
}

test("closest points equal the f64 brute force", () => {
  const rng = random(5);
  const mesh = soup(2000, rng);
  const bvh = new BVH(mesh.positions);
  const points = new Float32Array(3 * 300).map(() => 1.4 * rng() - 0.2);
  const out = bvh.closestPoints(points);
  for (let k = 0; k < 300; k++) {
    const p = Array.from(points.subarray(3 * k, 3 * k + 3));
    const want = bruteNearest(mesh, p);
    assert.ok(Math.abs(out.distance[k] - want.distance) <= tolerance(want.distance), `point ${k}: ${out.distance[k]} vs ${want.distance}`);
    const q = out.point.subarray(3 * k, 3 * k + 3);
    assert.ok(Math.abs(Math.hypot(q[0] - p[0], q[1] - p[1], q[2] - p[2]) - out.distance[k]) < 1e-5);
  }
  const one = bvh.closestPoint(points.subarray(0, 3));
  assert.equal(one.triangle, out.triangle[0]);
  // Within a limit: none farther.
  const near = bvh.closestPoints(points, 0.01);
  for (let k = 0; k < 300; k++) {
    assert.equal(near.triangle[k] >= 0, out.distance[k] <= 0.01, `point ${k}`);
  }
  assert.equal(bvh.closestPoint([50, 50, 50], 1), null);
  bvh.free();
});

test("box, sphere and frustum selection", () => {
  const mesh = sphere(16, 32, 1);
  const bvh = new BVH(mesh.positions, mesh.indices);
  const count = bvh.triangleCount;
  const box = bvh.selectBox([0, 0, 0], [2, 2, 2]);
  const ball = bvh.selectSphere([0, 1, 0], 0.5);
  for (let t = 0; t < count; t++) {
    const c = corners(mesh, t);
    const inBox = c.every((p) => p.every((x) => x >= 0));
    const outBox = c.every((p) => p[0] < -1e-6) || c.every((p) => p[1] < -1e-6) || c.every((p) => p[2] < -1e-6);
    if (inBox) assert.ok(box.includes(t), `triangle ${t} lies in the box`);
    if (outBox) assert.ok(!box.includes(t), `triangle ${t} lies outside the box`);
    const distance = Math.min(...c.map((p) => Math.hypot(p[0], p[1] - 1, p[2])));
    if (distance < 0.49) assert.ok(ball.includes(t), `triangle ${t} has a corner in the ball`);
  }
  assert.deepEqual(Array.from(box), Array.from(box).sort((a, b) => a - b));
  assert.equal(bvh.selectSphere([5, 5, 5], 1).length, 0);
  // A camera at z = 5 looking down -z (three.js's column-major matrices), a 100 × 100 px
  // viewport: the whole screen holds the whole sphere, a corner of it only part.
  const view = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, -5, 1];
  const f = 1 / Math.tan(Math.PI / 8);
  const [n, far] = [0.1, 100];
  const projection = [f, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + n) / (n - far), -1, 0, 0, (2 * far * n) / (n - far), 0];
  const all = bvh.selectFrustum(view, projection, [100, 100], [0, 0], [100, 100]);
  assert.equal(all.length, count);
  const corner = bvh.selectFrustum(view, projection, [100, 100], [0, 0], [50, 50]);
  assert.ok(corner.length > 0 && corner.length < count);
  // The triangle under the rectangle's middle pixel is in it.
  const hit = bvh.closestHit([0, 0, 5], [-0.1, 0.1, -1]);
  assert.ok(corner.includes(hit.triangle));
  bvh.free();
});

test("bad meshes throw Errors that say what is wrong", () => {
  const p = new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]);
  const cases = [
    [() => new BVH(p, new Uint32Array([0, 1, 3])), /vertex index 3 is out of range/],
    [() => new BVH(new Float32Array([0, 0, 0, 1, 0, NaN, 0, 1, 0]), [0, 1, 2]), /NaN or infinite/],
    [() => new BVH(new Float32Array([0, 0, 0, 1, 0, Infinity, 0, 1, 0])), /NaN or infinite/],
    [() => new BVH(new Float32Array(0), new Uint32Array(0)), /triangle/],
    [() => new BVH(p.subarray(0, 8)), /not a multiple of 3/],
    [() => new BVH(p, new Uint32Array([0, 1])), /not a multiple of 3/],
    [() => new BVH(p, [0, 1, -2]), /whole numbers/],
    [() => new BVH(p, [0, 1, 1.5]), /whole numbers/],
    [() => new BVH("positions"), /Float32Array/],
    [() => new BVH(p, "012"), /Uint32Array/],
    [() => new BVH(p, null, { quality: "best" }), /quality/],
    // More than wasm32's memory can build: refused before anything is allocated.
    [() => new BVH(p, new Uint32Array(3 * 16_000_001)), /at most 16000000/],
  ];
  for (const [make, message] of cases) {
    assert.throws(make, (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message), String(make));
  }
});

test("bad queries throw; NaN and zero directions hit nothing", () => {
  const bvh = new BVH(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]));
  const cases = [
    [() => bvh.closestHit([0, 0, 1], [0, 0, -1], { near: -1 }), /near/],
    [() => bvh.closestHit([0, 0, 1], [0, 0, -1], { far: NaN }), /far/],
    [() => bvh.closestHit([0, 0, 1], [0, 0, -1], { cull: "left" }), /cull/],
    [() => bvh.closestHit([0, 0, 1], [0, 0, -1], { cull: "toString" }), /cull/],
    [() => bvh.closestHit([0, 0], [0, 0, -1]), /three numbers/],
    [() => bvh.closestHit(null, [0, 0, -1]), /origin/],
    [() => bvh.closestHits(new Float32Array(7)), /multiple of 6/],
    [() => bvh.closestHits("rays"), /Float32Array/],
    [() => bvh.closestPoints(new Float32Array(4)), /multiple of 3/],
    [() => bvh.closestPoints(new Float32Array(3), -1), /maxDistance/],
    [() => bvh.selectBox([1, 1, 1], [0, 0, 0]), /min <= max/],
    [() => bvh.selectSphere([0, 0, 0], NaN), /radius/],
    [() => bvh.selectFrustum([1], [1], [1, 1], [0, 0], [1, 1]), /16 numbers/],
    [() => bvh.selectFrustum(new Array(16).fill(0), new Array(16).fill(0), [10, 10], [0, 0], [5, 5]), /singular/],
  ];
  for (const [query, message] of cases) {
    assert.throws(query, (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message), String(query));
  }
  for (const direction of [[0, 0, 0], [NaN, 0, -1], [0, Infinity, -1]]) {
    assert.equal(bvh.closestHit([0.2, 0.2, 1], direction), null);
    assert.equal(bvh.anyHit([0.2, 0.2, 1], direction), null);
    assert.deepEqual(bvh.allHits([0.2, 0.2, 1], direction), []);
  }
  assert.equal(bvh.closestHit([NaN, 0.2, 1], [0, 0, -1]), null);
  const batch = bvh.closestHits(new Float32Array([0.2, 0.2, 1, 0, 0, 0, 0.2, 0.2, 1, 0, 0, -1]));
  assert.deepEqual(Array.from(batch.triangle), [-1, 0]);
  assert.ok(Number.isNaN(batch.u[0]) && batch.distance[0] === Infinity);
  assert.equal(bvh.closestHits(new Float32Array(0)).distance.length, 0);
  bvh.free();
});

test("a freed tree throws on every use, and freeing twice is harmless", () => {
  const bvh = new BVH(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]));
  bvh.free();
  bvh.free();
  for (const use of [
    () => bvh.closestHit([0, 0, 1], [0, 0, -1]),
    () => bvh.closestHits(new Float32Array(6)),
    () => bvh.closestPoint([0, 0, 0]),
    () => bvh.selectBox([0, 0, 0], [1, 1, 1]),
    () => bvh.triangleCount,
    () => bvh.bounds,
  ]) {
    assert.throws(use, /freed/);
  }
});

test("trees that are dropped without free() are freed by the garbage collector", async (t) => {
  if (typeof globalThis.gc !== "function") {
    t.skip("needs node --expose-gc (npm test passes it)");
    return;
  }
  const mesh = sphere(64, 128);
  // Each tree of this 16k-triangle sphere takes about a megabyte of wasm memory; 300 of
  // them kept would take 300 MB. Dropped, the registry frees them and the memory is reused.
  const grow = async () => {
    for (let i = 0; i < 100; i++) new BVH(mesh.positions, mesh.indices);
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  };
  await grow();
  const before = memoryBytes();
  for (let round = 0; round < 3; round++) await grow();
  const after = memoryBytes();
  assert.ok(after - before < 50e6, `wasm memory grew by ${((after - before) / 1e6).toFixed(0)} MB`);
});

test("a build grows a fresh module's memory by at most 100 bytes per triangle", async () => {
  // WebAssembly memory never shrinks: a build's peak is what the page keeps. 245k triangles,
  // so the 64 KiB pages round to nothing; each quality in a module instance of its own.
  const mesh = sphere(350, 350);
  const n = mesh.indices.length / 3;
  // Measured 98, 116 and 148 (the fast build keeps its corners in leaf order, for speed).
  // Before leaves of four became the default (issue 38), 80, 97 and 157: their binary tree
  // has 0.52n to 0.55n nodes where leaves of eight had 0.37n.
  const limits = { default: 105, high: 125, fast: 170 };
  for (const [quality, limit] of Object.entries(limits)) {
    const fresh = await import(new URL(`../meshray.js?memory=${quality}`, import.meta.url).href);
    await fresh.init();
    const before = fresh.memoryBytes();
    const bvh = new fresh.BVH(mesh.positions, mesh.indices, { quality });
    const perTriangle = (fresh.memoryBytes() - before) / n;
    assert.ok(perTriangle <= limit, `${quality}: ${perTriangle.toFixed(1)} bytes per triangle`);
    bvh.free();
  }
});

test("batches take near and far per ray, as single rays with their own range answer", () => {
  const rng = random(31);
  const mesh = sphere(30, 40);
  const bvh = new BVH(mesh.positions, mesh.indices);
  const rayset = rays(mesh.positions, 600, rng);
  const n = rayset.length / 6;
  const near = new Float32Array(n).map(() => (rng() < 0.3 ? 0 : rng() * 2));
  const far = Array.from({ length: n }, (_, k) => (rng() < 0.3 ? Infinity : near[k] + rng() * 2));
  for (const [options, single] of [
    [{ near, far }, (k) => ({ near: near[k], far: far[k] })],
    [{ near: 0.5, far }, (k) => ({ near: 0.5, far: far[k] })],
    [{ near, cull: "back" }, (k) => ({ near: near[k], cull: "back" })],
  ]) {
    const closest = bvh.closestHits(rayset, options);
    const any = bvh.anyHits(rayset, options);
    const all = bvh.allHitsBatch(rayset, options);
    let hits = 0;
    for (let k = 0; k < n; k++) {
      const o = rayset.subarray(6 * k, 6 * k + 3);
      const d = rayset.subarray(6 * k + 3, 6 * k + 6);
      const one = bvh.closestHit(o, d, single(k));
      assert.equal(closest.distance[k], one ? Math.fround(one.distance) : Infinity, `ray ${k}`);
      assert.equal(any.triangle[k] >= 0, one !== null, `ray ${k}: any hit`);
      const mine = Array.from(all.ray.entries()).filter(([, r]) => r === k).map(([i]) => all.distance[i]);
      assert.deepEqual(mine, bvh.allHits(o, d, single(k)).map((h) => Math.fround(h.distance)), `ray ${k}: all hits`);
      if (one) hits++;
    }
    assert.ok(hits > n / 10 && hits < n, `${hits} of ${n} hit: the ranges cut some`);
  }
  assert.throws(() => bvh.closestHits(rayset, { near: new Float32Array(n - 1) }), /one number per ray \(600\)/);
  const bad = near.slice();
  bad[7] = NaN;
  assert.throws(() => bvh.closestHits(rayset, { near: bad }), /ray 7: near must be/);
  assert.throws(() => bvh.anyHits(rayset, { far: Array(n).fill(NaN) }), /ray 0: .*far/);
  bvh.free();
});
