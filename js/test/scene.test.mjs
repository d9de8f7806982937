// meshray's Scene from JavaScript: every query of Geometry, written once, answers for a
// scene of placed BVHs; checked against the same BVH (a scene of one instance placed where
// it is gives the BVH's answers, bit for bit, with its instance) and against a BVH built
// over the moved vertices (a scene of placed instances, within f32 rounding); edits and
// bad input.
import assert from "node:assert/strict";
import test from "node:test";

import { BVH, Geometry, init, Scene } from "../meshray.js";
import { asset, random, rays, readObj, sphere } from "./meshes.mjs";

await init();

test("a scene of one BVH placed where it is answers as the BVH, with its instance", () => {
  const mesh = readObj(asset("scene.obj"));
  const bvh = new BVH(mesh.positions, mesh.indices);
  const scene = new Scene();
  assert.ok(scene instanceof Geometry && bvh instanceof Geometry);
  assert.equal(scene.add(bvh), 0);
  assert.equal(scene.size, 1);
  const rng = random(39);
  const set = rays(mesh.positions, 2000, rng);
  for (const options of [{}, { cull: "back" }, { cull: "front", watertight: false }]) {
    for (const query of ["closestHits", "anyHits"]) {
      const a = bvh[query](set, options);
      const b = scene[query](set, options);
      assert.deepEqual(b.distance, a.distance, `${query} ${JSON.stringify(options)}`);
      assert.deepEqual(b.triangle, a.triangle);
      assert.deepEqual([b.u, b.v], [a.u, a.v]);
      assert.ok(!("instance" in a));
      assert.deepEqual(b.instance, Int32Array.from(a.triangle, (t) => (t < 0 ? -1 : 0)));
    }
    const a = bvh.allHitsBatch(set, options);
    const b = scene.allHitsBatch(set, options);
    for (const key of ["ray", "distance", "triangle", "u", "v"]) assert.deepEqual(b[key], a[key], key);
    assert.ok(b.instance.every((i) => i === 0));
  }
  const hits = bvh.closestHits(set);
  let seen = 0;
  for (let k = 0; k < 200; k++) {
    const o = set.subarray(6 * k, 6 * k + 3);
    const d = set.subarray(6 * k + 3, 6 * k + 6);
    const a = bvh.closestHit(o, d);
    const b = scene.closestHit(o, d);
    if (a === null) {
      assert.equal(b, null);
      continue;
    }
    seen++;
    assert.equal(hits.triangle[k], a.triangle);
    assert.deepEqual([b.instance, b.triangle, b.distance, b.u, b.v, b.point, b.frontFace], [0, a.triangle, a.distance, a.u, a.v, a.point, a.frontFace]);
    b.normal.forEach((x, i) => assert.ok(Math.abs(x - a.normal[i]) < 1e-6));
    assert.deepEqual(scene.allHits(o, d).map((h) => [h.instance, h.distance]), bvh.allHits(o, d).map((h) => [0, h.distance]));
  }
  assert.ok(seen > 50);
  const points = new Float32Array(Array.from({ length: 900 }, () => rng() * 8 - 4));
  const a = bvh.closestPoints(points);
  const b = scene.closestPoints(points);
  for (const key of ["point", "distance", "triangle", "u", "v"]) assert.deepEqual(b[key], a[key], key);
  assert.deepEqual(scene.windingNumbers(points), bvh.windingNumbers(points));
  assert.deepEqual(scene.containsPoints(points), bvh.containsPoints(points));
  assert.deepEqual(scene.signedDistances(points), bvh.signedDistances(points));
  assert.deepEqual(scene.closestPoint([0, 5, 0]), { instance: 0, ...bvh.closestPoint([0, 5, 0]) });
  scene.free();
  bvh.free();
});

test("placed instances answer as a BVH of the moved vertices", () => {
  const ball = sphere(24, 48);
  const bvh = new BVH(ball.positions, ball.indices);
  const scene = new Scene();
  // Column-major: a stretch (2, 1, 0.5) then a move to (5, 0, 0); the second ball moved to (-5, 1, 0).
  const stretched = [2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.5, 0, 5, 0, 0, 1];
  const moved = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -5, 1, 0, 1];
  assert.equal(scene.add(bvh, stretched), 0);
  assert.equal(scene.add(bvh, { elements: moved }), 1);
  const baked = (m) => {
    const p = new Float32Array(ball.positions.length);
    for (let i = 0; i < p.length; i += 3) {
      const [x, y, z] = ball.positions.subarray(i, i + 3);
      for (let r = 0; r < 3; r++) p[i + r] = m[r] * x + m[4 + r] * y + m[8 + r] * z + m[12 + r];
    }
    return p;
  };
  const parts = [baked(stretched), baked(moved)];
  const both = new Float32Array(parts[0].length + parts[1].length);
  both.set(parts[0]);
  both.set(parts[1], parts[0].length);
  const offset = ball.positions.length / 3;
  const indices = new Uint32Array([...ball.indices, ...ball.indices.map((i) => i + offset)]);
  const reference = new BVH(both, indices);
  const triangles = ball.indices.length / 3;
  const set = rays(both, 3000, random(41));
  const a = reference.closestHits(set);
  const b = scene.closestHits(set);
  let hits = 0;
  for (let k = 0; k < a.distance.length; k++) {
    if (a.triangle[k] < 0) {
      assert.equal(b.triangle[k], -1, `ray ${k}`);
      continue;
    }
    hits++;
    const [instance, triangle] = [Math.floor(a.triangle[k] / triangles), a.triangle[k] % triangles];
    assert.ok(Math.abs(a.distance[k] - b.distance[k]) <= 1e-4 * Math.max(1, a.distance[k]), `ray ${k}`);
    // The same triangle, but where the ray passes within rounding of an edge.
    if (b.triangle[k] !== triangle || b.instance[k] !== instance) {
      assert.ok(Math.min(a.u[k], a.v[k], 1 - a.u[k] - a.v[k]) < 1e-4, `ray ${k}`);
    }
  }
  assert.ok(hits > 500);
  // Inside: the stretched ball's centre is in it, a point between the balls is in neither.
  assert.deepEqual(Array.from(scene.containsPoints(new Float32Array([5, 0, 0, 0, 0, 0, -5, 1, 0]))), [1, 0, 1]);
  // Edits: the removed instance is gone; a moved one is found where it went.
  scene.remove(1);
  assert.equal(scene.size, 1);
  assert.equal(scene.closestHit([-5, 1, 10], [0, 0, -1]), null);
  scene.setTransform(0, moved);
  assert.equal(scene.closestHit([-5, 1, 10], [0, 0, -1])?.instance, 0);
  for (const g of [scene, bvh, reference]) g.free();
});

test("bad scene input throws, never traps", () => {
  const ball = sphere(4, 8);
  const bvh = new BVH(ball.positions, ball.indices);
  const scene = new Scene();
  assert.throws(() => new Geometry(1, "x", false), /base of BVH and Scene/);
  assert.throws(() => scene.add({}), /takes a BVH/);
  assert.throws(() => scene.add(bvh, [1, 2, 3]), /16 numbers/);
  assert.throws(() => scene.add(bvh, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), /meshray/);
  assert.throws(() => scene.add(bvh, Array(16).fill(NaN)), /meshray/);
  assert.throws(() => scene.remove(3), /meshray/);
  assert.throws(() => scene.setTransform(-1, undefined), /no instance/);
  const freed = new BVH(ball.positions, ball.indices);
  freed.free();
  assert.throws(() => scene.add(freed), /freed/);
  scene.add(bvh);
  assert.throws(() => scene.closestHits(new Float32Array(5)), /multiple of 6/);
  assert.throws(() => scene.closestHits(new Float32Array(6), { cull: "both" }), /cull/);
  scene.free();
  assert.throws(() => scene.closestHit([0, 0, 1], [0, 0, -1]), /Scene was freed/);
  scene.free(); // twice: nothing
  bvh.free();
});
