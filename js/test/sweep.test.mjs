// Sweeps from JavaScript: `castSphere` of a BVH and a Scene (one implementation in the
// module, over the library's Sweep trait), checked against this file's float64 brute force
// (the sphere is its radius from the contact, the nearest triangle, at the reported t, and
// clear of every triangle earlier along its path); a zero radius is a ray; bad shapes
// throw; and three.js's sweepSphere / moveSphere move a ball as a character controller.
import assert from "node:assert/strict";
import test from "node:test";
import * as THREE from "three";

import { BVH, init, Scene } from "../meshray.js";
import { computeBoundsTree, moveSphere, sweepSphere } from "../three.js";
import { bruteNearest } from "./brute.mjs";
import { asset, random, rays, readObj } from "./meshes.mjs";

await init();

const at = (o, d, t) => [o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]];

test("castSphere stops where a sphere first touches, as a brute force says", () => {
  const mesh = readObj(asset("scene.obj"));
  const bvh = new BVH(mesh.positions, mesh.indices);
  const set = rays(mesh.positions, 60, random(41));
  const radius = 0.2;
  let hits = 0;
  for (let k = 0; k < 60; k++) {
    const o = Array.from(set.subarray(6 * k, 6 * k + 3));
    const d = Array.from(set.subarray(6 * k + 3, 6 * k + 6));
    const hit = bvh.castSphere(o, d, radius);
    const end = hit ? hit.distance : 3;
    for (let s = 0; s < 20; s++) {
      const clear = bruteNearest(mesh, at(o, d, (end * s) / 20)).distance;
      assert.ok(clear > radius * (1 - 1e-4), `sweep ${k}: ${clear} at ${(end * s) / 20}`);
    }
    if (!hit) continue;
    hits++;
    const centre = at(o, d, hit.distance);
    const near = bruteNearest(mesh, centre);
    assert.ok(Math.abs(near.distance - radius) < 1e-4 * radius, `sweep ${k}: ${near.distance}`);
    const gap = centre.map((c, i) => c - hit.point[i]);
    assert.ok(Math.abs(Math.hypot(...gap) - radius) < 1e-4, `sweep ${k}`);
    gap.forEach((g, i) => assert.ok(Math.abs(g / radius - hit.normal[i]) < 1e-3, `sweep ${k}: normal`));
  }
  assert.ok(hits > 15, `${hits} contacts`);
  // A zero radius is a ray; a scene answers as its BVH, with the instance.
  const ray = bvh.closestHit([0.3, 5, 0.2], [0, -1, 0]);
  const dot = bvh.castSphere([0.3, 5, 0.2], [0, -1, 0], 0);
  assert.deepEqual([dot.triangle, dot.distance], [ray.triangle, ray.distance]);
  const scene = new Scene();
  scene.add(bvh);
  const a = bvh.castSphere([3.1, 5, 3.2], [0, -1, 0], 0.25, { cull: "back" });
  const b = scene.castSphere([3.1, 5, 3.2], [0, -1, 0], 0.25, { cull: "back" });
  assert.deepEqual(b, { instance: 0, ...a });
  assert.ok(Math.abs(a.distance - 4.75) < 1e-5 && a.normal[1] > 0.999);
  // A capsule standing on the ball's path reaches the ground no later.
  const capsule = bvh.castSphere([3.1, 5, 3.2], [0, -1, 0], 0.25, { axis: [0, -1, 0] });
  assert.ok(Math.abs(capsule.distance - 3.75) < 1e-5);
  // Out of range, or a bad ray: nothing. Bad shapes throw, naming what is wrong.
  assert.equal(bvh.castSphere([3.1, 5, 3.2], [0, -1, 0], 0.25, { far: 4 }), null);
  assert.equal(bvh.castSphere([3.1, 5, 3.2], [0, 0, 0], 0.25), null);
  assert.equal(bvh.castSphere([NaN, 5, 3.2], [0, -1, 0], 0.25), null);
  for (const r of [-1, NaN, Infinity]) assert.throws(() => bvh.castSphere([0, 5, 0], [0, -1, 0], r), /radius/);
  assert.throws(() => bvh.castSphere([0, 5, 0], [0, -1, 0], "1"), /radius/);
  assert.throws(() => bvh.castSphere([0, 5, 0], [0, -1, 0], 1, { axis: [NaN, 0, 0] }), /axis/);
  bvh.free();
});

test("castSpheres answers each ray as castSphere does, bit for bit", () => {
  const mesh = readObj(asset("scene.obj"));
  const bvh = new BVH(mesh.positions, mesh.indices);
  const scene = new Scene();
  scene.add(bvh, [0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0.5, 0, 0, 1]);
  const n = 200;
  const set = rays(mesh.positions, n, random(43));
  // A few rays that touch nothing: a zero direction, a NaN origin, away from the scene.
  set.set([0, 0, 0, 0, 0, 0], 0);
  set.set([NaN, 1, 1, 0, -1, 0], 6);
  set.set([0, 100, 0, 0, 1, 0], 12);
  const near = Float32Array.from({ length: n }, (_, k) => (k % 5 === 0 ? 0.5 : 0));
  const far = Float32Array.from({ length: n }, (_, k) => (k % 7 === 0 ? 2 : Infinity));
  for (const geometry of [bvh, scene]) {
    for (const options of [{}, { near, far, cull: "back" }, { axis: [0, 0.4, 0], near: 0.1, far: 50 }]) {
      const radius = options.axis ? 0.1 : 0.2;
      const batch = geometry.castSpheres(set, radius, options);
      let touched = 0;
      for (let k = 0; k < n; k++) {
        const one = geometry.castSphere(set.subarray(6 * k, 6 * k + 3), set.subarray(6 * k + 3, 6 * k + 6), radius, {
          ...options,
          near: typeof options.near === "object" ? options.near[k] : options.near,
          far: typeof options.far === "object" ? options.far[k] : options.far,
        });
        const got = {
          distance: batch.distance[k],
          triangle: batch.triangle[k],
          u: batch.u[k],
          v: batch.v[k],
          point: Array.from(batch.point.subarray(3 * k, 3 * k + 3)),
          normal: Array.from(batch.normal.subarray(3 * k, 3 * k + 3)),
        };
        if (geometry === scene) got.instance = batch.instance[k];
        if (one === null) {
          assert.equal(got.triangle, -1, `ray ${k}`);
          assert.equal(got.distance, Infinity);
          assert.ok([got.u, got.v, ...got.point, ...got.normal].every(Number.isNaN), `ray ${k}`);
          if (geometry === scene) assert.equal(got.instance, -1);
          continue;
        }
        touched++;
        // The single call answers in float32 too: the same bits.
        const f = (x) => Math.fround(x);
        assert.deepEqual(got, {
          ...(geometry === scene ? { instance: one.instance } : {}),
          distance: f(one.distance),
          triangle: one.triangle,
          u: f(one.u),
          v: f(one.v),
          point: one.point.map(f),
          normal: one.normal.map(f),
        }, `ray ${k}`);
      }
      assert.ok(touched > 40 && touched < n - 3, `${touched} of ${n} touched`);
    }
  }
  // Bad shapes throw, for an empty batch too; so do bad ranges.
  for (const r of [-1, NaN, Infinity]) {
    assert.throws(() => bvh.castSpheres(set, r), /radius/);
    assert.throws(() => scene.castSpheres(new Float32Array(0), r), /radius/);
  }
  assert.throws(() => bvh.castSpheres(set, "1"), /radius/);
  assert.throws(() => bvh.castSpheres(new Float32Array(0), 1, { axis: [0, Infinity, 0] }), /axis/);
  assert.throws(() => bvh.castSpheres(set, 1, { near: -1 }), /near/);
  assert.throws(() => bvh.castSpheres(set.subarray(0, 5), 1), /rays/);
  assert.equal(bvh.castSpheres(new Float32Array(0), 1).distance.length, 0);
  scene.free();
  bvh.free();
});

test("three.js: a ball rolls along the ground and stops against the sphere", () => {
  const mesh = readObj(asset("scene.obj"));
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.BufferAttribute(mesh.positions, 3));
  geometry.setIndex(new THREE.BufferAttribute(mesh.indices, 1));
  geometry.computeBoundsTree = computeBoundsTree;
  geometry.computeBoundsTree();
  // The scene placed twice as large and turned: the controller works in world space.
  const object = new THREE.Mesh(geometry);
  object.scale.setScalar(2);
  object.rotation.y = Math.PI / 2;
  object.updateMatrixWorld(true);
  const radius = 0.5;
  // In front of the sphere (world: its centre at (0, 2, 0), radius 2), on the ground.
  let position = new THREE.Vector3(7, radius + 0.01, 0);
  for (let frame = 0; frame < 60; frame++) {
    const step = moveSphere([object], position, new THREE.Vector3(-0.2, -0.1, 0), radius);
    position = step.position;
    assert.ok(position.y > radius * 0.99, `frame ${frame}: sank to ${position.y}`);
  }
  // At rest against the sphere's lower side: the sphere of radius 2 about (0, 2, 0) is
  // touched at |centre - (0, 2, 0)| = 2.5 (its facets a little inside).
  const gap = position.distanceTo(new THREE.Vector3(0, 2, 0));
  assert.ok(gap > 2.45 && gap < 2.55, `${gap} at ${position.toArray()}`);
  const hit = sweepSphere(object, new THREE.Vector3(0, 10, -6), new THREE.Vector3(0, -1, 0), radius);
  assert.ok(Math.abs(hit.distance - (10 - radius)) < 1e-4 && hit.normal.y > 0.999);
  // A scale that differs by axis is refused: the sphere would not stay one.
  object.scale.set(1, 2, 1);
  object.updateMatrixWorld(true);
  assert.throws(() => sweepSphere(object, new THREE.Vector3(0, 10, 0), new THREE.Vector3(0, -1, 0), radius), /scales alike/);
  geometry.boundsTree.dispose();
});

// Overlaps: `intersectingTriangles` and `selfIntersections` of a BVH and a Scene against a
// float64 brute force over every pair of two random soups' triangles: two triangles in
// general position meet when an edge of one crosses the other (signed volumes of opposite
// signs at the edge's ends, and of one sign around the triangle's edges); pairs within
// rounding of touching (a volume near zero) are left to either answer.

function soup(n, next, offset) {
  const positions = new Float32Array(9 * n);
  for (let t = 0; t < n; t++) {
    const c = [next() * 2 - 1 + offset, next() * 2 - 1, next() * 2 - 1];
    for (let k = 0; k < 9; k++) positions[9 * t + k] = c[k % 3] + (next() - 0.5) * 0.6;
  }
  return { positions, indices: Uint32Array.from({ length: 3 * n }, (_, i) => i) };
}

function corners(mesh, t, m) {
  const p = (i) => {
    const [x, y, z] = [0, 1, 2].map((k) => mesh.positions[3 * mesh.indices[3 * t + i] + k]);
    if (!m) return [x, y, z];
    return [0, 1, 2].map((r) => m[r] * x + m[4 + r] * y + m[8 + r] * z + m[12 + r]);
  };
  return [p(0), p(1), p(2)];
}

const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const volume = (a, b, c, d) => {
  const [u, v, w] = [sub(b, a), sub(c, a), sub(d, a)];
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
};

/** true, false, or null where rounding could decide it. */
function meet(s, t) {
  let unsure = false;
  const crosses = (p, q, [a, b, c]) => {
    const vs = [volume(a, b, c, p), volume(a, b, c, q), volume(p, q, a, b), volume(p, q, b, c), volume(p, q, c, a)];
    if (vs.some((v) => Math.abs(v) < 1e-9)) unsure = true;
    return vs[0] * vs[1] < 0 && ((vs[2] > 0 && vs[3] > 0 && vs[4] > 0) || (vs[2] < 0 && vs[3] < 0 && vs[4] < 0));
  };
  for (const [x, y] of [[s, t], [t, s]]) {
    for (let k = 0; k < 3; k++) if (crosses(x[k], x[(k + 1) % 3], y)) return true;
  }
  return unsure ? null : false;
}

function checkPairs(label, found, a, b, same, m) {
  const set = new Set();
  for (let k = 0; k < found.length; k += 2) set.add(`${found[k]},${found[k + 1]}`);
  assert.equal(set.size, found.length / 2, `${label}: no pair twice`);
  let meeting = 0;
  for (let i = 0; i < a.indices.length / 3; i++) {
    for (let j = same ? i + 1 : 0; j < b.indices.length / 3; j++) {
      const truth = meet(corners(a, i), corners(b, j, m));
      const has = set.has(`${i},${j}`);
      if (truth !== null) assert.equal(has, truth, `${label}: pair ${i}, ${j}`);
      meeting += has ? 1 : 0;
    }
  }
  return meeting;
}

test("intersectingTriangles and selfIntersections match a brute force, for a BVH and a Scene", () => {
  const next = random(77);
  const [x, y] = [soup(120, next, 0), soup(100, next, 0.3)];
  const [bx, by] = [new BVH(x.positions, x.indices), new BVH(y.positions, y.indices)];
  const m = new THREE.Matrix4().makeRotationZ(0.4).setPosition(0.1, 0.2, 0).elements;
  const across = bx.intersectingTriangles(by, m);
  assert.ok(across instanceof Uint32Array);
  assert.ok(checkPairs("x against y", across, x, y, false, m) > 30);
  const own = bx.selfIntersections();
  const alone = checkPairs("x alone", own, x, x, true);
  assert.ok(alone > 10, `${alone} pairs`);
  const far = new THREE.Matrix4().makeTranslation(50, 0, 0);
  assert.equal(bx.intersectingTriangles(by, far).length, 0);
  assert.equal(bx.intersects(by, m), true);
  assert.equal(bx.intersects(by, far), false);
  // A scene of the two placed so: rows (instance, triangle, instance, triangle).
  const scene = new Scene();
  const [a, b] = [scene.add(bx), scene.add(by, m)];
  const rows = scene.selfIntersections();
  const part = (i, j) => {
    const out = [];
    for (let k = 0; k < rows.length; k += 4) {
      if (rows[k] === i && rows[k + 2] === j) out.push(rows[k + 1], rows[k + 3]);
    }
    return out;
  };
  assert.deepEqual(part(a, a), Array.from(own));
  assert.deepEqual(part(a, b), Array.from(across));
  assert.deepEqual(part(b, b), Array.from(by.selfIntersections()));
  const other = new Scene();
  other.add(by);
  const two = scene.intersectingTriangles(other, m);
  assert.equal(two.length % 4, 0);
  const first = [];
  for (let k = 0; k < two.length; k += 4) if (two[k] === a) first.push(two[k + 1], two[k + 3]);
  assert.deepEqual(first, Array.from(across));
  assert.throws(() => bx.intersectingTriangles(scene), /same kind/);
  assert.throws(() => bx.intersects(scene), /same kind/);
  assert.equal(scene.intersects(other, m), true);
  assert.equal(scene.intersects(other, far.clone().multiply(new THREE.Matrix4().makeTranslation(500, 0, 0))), false);
  assert.throws(() => bx.intersectingTriangles(by, new Array(16).fill(0)), /transform/);
  for (const g of [bx, by, scene, other]) g.free();
  assert.throws(() => bx.selfIntersections(), /freed/);
});
