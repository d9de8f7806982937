// Inside or outside: winding numbers, contains and signed distances against an f64 brute
// force of the winding number (every triangle's solid angle), on a closed sphere, an open
// hemisphere, an inside-out sphere and the Stanford bunny (open at its base); then bad input.
import assert from "node:assert/strict";
import { join } from "node:path";
import test from "node:test";

import { BVH, init } from "../meshray.js";
import { bruteWinding } from "./brute.mjs";
import { random, readObj, sharedMeshes, skipWithoutShared, sphere } from "./meshes.mjs";

await init();

/**
 * Checks every new query at each of `points` against the brute force: exact winding numbers
 * within 1e-9, fast ones (`beta` 2) within 0.02; `contains` is `brute >= ½` wherever the
 * brute force is more than 1e-9 from ½ and the point is off the surface (`closestPoint`
 * farther than 1e-9: some test points are only 1e-7 away); `signedDistance`
 * has `closestPoint`'s distance (1e-6 relative) and is negative exactly where `contains`
 * holds; the single-point forms answer as the batches do. Returns how many points `contains`
 * was checked at and how many of those are inside.
 */
function checkInside(mesh, bvh, points) {
  const n = points.length / 3;
  const exact = bvh.windingNumbers(points, { exact: true });
  const fast = bvh.windingNumbers(points);
  const inside = bvh.containsPoints(points);
  const signed = bvh.signedDistances(points);
  assert.ok(exact instanceof Float64Array && fast instanceof Float64Array && signed instanceof Float64Array);
  assert.ok(inside instanceof Uint8Array);
  assert.deepEqual([exact.length, fast.length, inside.length, signed.length], [n, n, n, n]);
  const failures = [];
  let decided = 0;
  let inCount = 0;
  for (let k = 0; k < n; k++) {
    const p = Array.from(points.subarray(3 * k, 3 * k + 3));
    const want = bruteWinding(mesh, p);
    if (!(Math.abs(exact[k] - want) <= 1e-9)) failures.push(`point ${k}: exact ${exact[k]}, f64 says ${want}`);
    if (!(Math.abs(fast[k] - want) <= 0.02)) failures.push(`point ${k}: fast ${fast[k]}, f64 says ${want}`);
    if (inside[k] !== 0 && inside[k] !== 1) failures.push(`point ${k}: contains gave ${inside[k]}`);
    const near = bvh.closestPoint(p);
    if (near.distance > 1e-9 && Math.abs(want - 0.5) > 1e-9) {
      decided++;
      if (inside[k] === 1) inCount++;
      if ((inside[k] === 1) !== want >= 0.5) failures.push(`point ${k}: contains ${inside[k]}, f64 winding number ${want}`);
    }
    if (!(Math.abs(Math.abs(signed[k]) - near.distance) <= 1e-6 * near.distance)) {
      failures.push(`point ${k}: signed distance ${signed[k]}, closest point at ${near.distance}`);
    }
    if (signed[k] !== 0 && (signed[k] < 0) !== (inside[k] === 1)) {
      failures.push(`point ${k}: signed distance ${signed[k]} but contains ${inside[k]}`);
    }
    const single = [bvh.windingNumber(p, { exact: true }), bvh.windingNumber(p), bvh.contains(p), bvh.signedDistance(p)];
    const batch = [exact[k], fast[k], inside[k] === 1, signed[k]];
    if (!single.every((x, i) => Object.is(x, batch[i]))) failures.push(`point ${k}: single ${single}, batch ${batch}`);
  }
  assert.deepEqual(failures.slice(0, 10), []);
  return { decided, inside: inCount };
}

/** `n` random points in the box `lo..hi` (a Float32Array, x y z each). */
function boxPoints(lo, hi, n, rng) {
  return new Float32Array(3 * n).map((_, i) => lo[i % 3] + (hi[i % 3] - lo[i % 3]) * rng());
}

/**
 * `n` points near the surface: the centroids of random triangles moved off their plane by
 * ±`offset` times the triangle's size (both sides, some only 1e-4 away).
 */
function nearSurface(mesh, n, offset, rng) {
  const { positions: q, indices } = mesh;
  const count = indices.length / 3;
  const out = new Float32Array(3 * n);
  for (let k = 0; k < n; k++) {
    let c, normal, size;
    do {
      const t = Math.floor(rng() * count);
      const [a, b, d] = [0, 1, 2].map((j) => Array.from(q.subarray(3 * indices[3 * t + j], 3 * indices[3 * t + j] + 3)));
      const e1 = b.map((x, i) => x - a[i]);
      const e2 = d.map((x, i) => x - a[i]);
      normal = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
      size = Math.hypot(...e1) + Math.hypot(...e2);
      c = a.map((x, i) => (x + b[i] + d[i]) / 3);
    } while (Math.hypot(...normal) === 0);
    const len = Math.hypot(...normal);
    const s = (rng() < 0.5 ? -1 : 1) * offset * size * (rng() < 0.3 ? 1e-3 : 0.5 + rng());
    out.set(c.map((x, i) => x + (s * normal[i]) / len), 3 * k);
  }
  return out;
}

/** The mesh with only the triangles whose corners all have y >= 0 (indices renumbered none). */
function upperHalf(mesh) {
  const { positions: q, indices } = mesh;
  const kept = [];
  for (let t = 0; t < indices.length / 3; t++) {
    const tri = [indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]];
    if (tri.every((i) => q[3 * i + 1] >= 0)) kept.push(...tri);
  }
  return { positions: q, indices: new Uint32Array(kept) };
}

const concat = (...arrays) => {
  const out = new Float32Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
};

test("a closed sphere: winding numbers 1 inside, 0 outside, as the f64 brute force says", () => {
  const rng = random(11);
  const mesh = sphere(16, 32, 1, [0.3, -0.2, 0.1]);
  const bvh = new BVH(mesh.positions, mesh.indices);
  const points = concat(boxPoints([-1.4, -1.9, -1.4], [2, 1.5, 2], 400, rng), nearSurface(mesh, 200, 0.05, rng));
  const { decided, inside } = checkInside(mesh, bvh, points);
  assert.ok(decided === 600 && inside > 100 && decided - inside > 300, `${inside} of ${decided} inside`);
  // Closed and outward-facing: the exact sum is 1 or 0 to rounding.
  for (const w of bvh.windingNumbers(points, { exact: true })) {
    assert.ok(Math.abs(w) < 1e-9 || Math.abs(w - 1) < 1e-9, `winding number ${w}`);
  }
  assert.ok(bvh.contains([0.3, -0.2, 0.1]) && !bvh.contains([0.3, 1.5, 0.1]));
  assert.ok(Math.abs(bvh.signedDistance([0.3, -0.2, 0.1]) + 0.99) < 0.02);
  bvh.free();
});

test("an open hemisphere: winding numbers between 0 and 1, contains at ½", () => {
  const rng = random(12);
  const mesh = upperHalf(sphere(16, 32));
  assert.equal(mesh.indices.length / 3, 16 * 32); // the upper 8 rings, two triangles a quad
  const bvh = new BVH(mesh.positions, mesh.indices);
  // Points all round it, near its surface, and near the plane of its rim, where the winding
  // number is within 1e-3 of ½, some within 1e-6 (one side of the open disc or the other):
  // there contains must go past its fast sum to the finer ones.
  const rim = boxPoints([-0.9, 0, -0.9], [0.9, 0, 0.9], 100, rng).map((x, i) =>
    i % 3 === 1 ? (rng() - 0.5) * 2e-3 * (rng() < 0.3 ? 1e-3 : 1) : x,
  );
  const points = concat(boxPoints([-1.5, -1.5, -1.5], [1.5, 1.5, 1.5], 300, rng), nearSurface(mesh, 150, 0.05, rng), rim);
  const { decided, inside } = checkInside(mesh, bvh, points);
  assert.ok(decided >= 500 && inside > 50 && decided - inside > 200, `${inside} of ${decided} inside`);
  const w = bvh.windingNumbers(points, { exact: true });
  assert.ok(w.some((x) => x > 0.3 && x < 0.45) && w.some((x) => x > 0.55 && x < 0.7), "winding numbers on both sides of ½");
  bvh.free();
});

test("an inside-out sphere: winding number -1 inside, and nothing is contained", () => {
  const rng = random(13);
  const mesh = sphere(12, 24);
  for (let t = 0; t < mesh.indices.length; t += 3) {
    [mesh.indices[t + 1], mesh.indices[t + 2]] = [mesh.indices[t + 2], mesh.indices[t + 1]];
  }
  const bvh = new BVH(mesh.positions, mesh.indices);
  const points = boxPoints([-1.3, -1.3, -1.3], [1.3, 1.3, 1.3], 200, rng);
  const { decided, inside } = checkInside(mesh, bvh, points);
  assert.ok(decided === 200 && inside === 0, `${inside} of ${decided} inside`);
  assert.ok(Math.abs(bvh.windingNumber([0, 0, 0], { exact: true }) + 1) < 1e-9);
  assert.ok(bvh.signedDistance([0, 0, 0]) > 0.9);
  bvh.free();
});

test("shared mesh stanford-bunny (open at its base): winding numbers, contains, signed distance", { skip: skipWithoutShared() }, () => {
  const rng = random(14);
  const mesh = readObj(join(sharedMeshes(), "stanford-bunny/stanford-bunny.obj"));
  const bvh = new BVH(mesh.positions, mesh.indices);
  const { min, max } = bvh.bounds;
  const pad = min.map((m, i) => 0.1 * (max[i] - m));
  const points = concat(
    boxPoints(min.map((m, i) => m - pad[i]), max.map((m, i) => m + pad[i]), 200, rng),
    nearSurface(mesh, 100, 0.2, rng),
  );
  const { decided, inside } = checkInside(mesh, bvh, points);
  assert.ok(decided >= 295 && inside > 40 && decided - inside > 40, `${inside} of ${decided} inside`);
  // Open: some winding numbers are neither 0 nor 1.
  const exact = bvh.windingNumbers(points, { exact: true });
  assert.ok(exact.some((w) => w > 0.05 && w < 0.95), "winding numbers between 0 and 1");
  // beta reaches the sum: infinite is the exact sum (no far-field term), 1 is coarser than 2.
  const far = bvh.windingNumbers(points, { beta: Infinity });
  assert.ok(far.every((w, k) => Math.abs(w - exact[k]) < 1e-9));
  const err = (beta) => Math.max(...bvh.windingNumbers(points, { beta }).map((w, k) => Math.abs(w - exact[k])));
  assert.ok(err(1) > err(2) && err(2) > 0 && err(2) < 0.02, `errors ${err(1)} at beta 1, ${err(2)} at 2`);
  // Within a limit: null (NaN in the batch) exactly where closestPoint finds nothing.
  const limit = 0.02 * Math.hypot(...max.map((m, i) => m - min[i]));
  const limited = bvh.signedDistances(points, limit);
  const all = bvh.signedDistances(points);
  let beyond = 0;
  for (let k = 0; k < points.length / 3; k++) {
    const p = points.subarray(3 * k, 3 * k + 3);
    if (bvh.closestPoint(p, limit) === null) {
      beyond++;
      assert.ok(Number.isNaN(limited[k]) && bvh.signedDistance(p, limit) === null, `point ${k}`);
    } else {
      assert.equal(limited[k], all[k], `point ${k}`);
    }
  }
  assert.ok(beyond > 50 && beyond < 250, `${beyond} beyond the limit`);
  bvh.free();
});

test("inside queries: bad input throws, NaN and infinite points answer NaN, false, null", () => {
  const mesh = sphere(8, 16);
  const bvh = new BVH(mesh.positions, mesh.indices);
  for (const p of [[NaN, 0, 0], [0, Infinity, 0], [0, 0, -Infinity]]) {
    assert.ok(Number.isNaN(bvh.windingNumber(p)), String(p));
    assert.ok(Number.isNaN(bvh.windingNumber(p, { exact: true })), String(p));
    assert.equal(bvh.contains(p), false, String(p));
    assert.equal(bvh.signedDistance(p), null, String(p));
  }
  // In a batch, only the bad point's answer is NaN / 0 / NaN.
  const points = new Float32Array([0, 0, 0, NaN, 0, 0, 0, 5, 0]);
  const w = bvh.windingNumbers(points);
  assert.ok(Math.abs(w[0] - 1) < 0.02 && Number.isNaN(w[1]) && Math.abs(w[2]) < 0.02, String(w));
  assert.deepEqual(Array.from(bvh.containsPoints(points)), [1, 0, 0]);
  const d = bvh.signedDistances(points);
  assert.ok(d[0] < -0.9 && Number.isNaN(d[1]) && Math.abs(d[2] - 4) < 1e-6, String(d));
  assert.ok(Number.isNaN(bvh.signedDistances(points, 1)[2]));
  assert.equal(bvh.signedDistance([0, 5, 0], 1), null);
  // Empty batches, and an exact sum ignores beta.
  assert.equal(bvh.windingNumbers(new Float32Array(0)).length, 0);
  assert.equal(bvh.containsPoints([]).length, 0);
  assert.equal(bvh.signedDistances(new Float64Array(0)).length, 0);
  assert.equal(bvh.windingNumber([0, 0, 0], { exact: true, beta: 0.5 }), bvh.windingNumber([0, 0, 0], { exact: true }));
  const cases = [
    [() => bvh.windingNumbers(new Float32Array(4)), /has 4 numbers, not a multiple of 3/],
    [() => bvh.containsPoints(new Float32Array(5)), /has 5 numbers, not a multiple of 3/],
    [() => bvh.signedDistances([0, 0]), /has 2 numbers, not a multiple of 3/],
    [() => bvh.windingNumbers("points"), /Float32Array/],
    [() => bvh.windingNumber([0, 0, 0], { beta: 0.5 }), /beta must be a number >= 1.*not 0\.5/],
    [() => bvh.windingNumber([0, 0, 0], { beta: NaN }), /beta must be a number >= 1/],
    [() => bvh.windingNumbers(new Float32Array(3), { beta: "2" }), /beta must be a number >= 1/],
    [() => bvh.signedDistance([0, 0, 0], -1), /maxDistance must be a number >= 0, not -1/],
    [() => bvh.signedDistances(new Float32Array(3), NaN), /maxDistance must be a number >= 0/],
    [() => bvh.windingNumber([0, 0]), /three numbers/],
    [() => bvh.contains(null), /point/],
    [() => bvh.signedDistance({ x: 0, y: 0 }), /three numbers/],
  ];
  for (const [query, message] of cases) {
    assert.throws(query, (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message), String(query));
  }
  bvh.free();
  for (const use of [
    () => bvh.windingNumber([0, 0, 0]),
    () => bvh.windingNumbers(new Float32Array(3)),
    () => bvh.contains([0, 0, 0]),
    () => bvh.containsPoints(new Float32Array(3)),
    () => bvh.signedDistance([0, 0, 0]),
    () => bvh.signedDistances(new Float32Array(3)),
  ]) {
    assert.throws(use, /freed/);
  }
});
