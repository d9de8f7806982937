// Trees as bytes and builds in a worker: toBytes/fromBytes answer bit for bit as the tree
// they came from, corrupt bytes throw (never a wasm trap); buildAsync builds in a worker
// thread, answers as a build here, rejects as the constructor throws, and leaves this
// thread's event loop running while it builds.
import assert from "node:assert/strict";
import test from "node:test";

import { BVH, buildAsync, init } from "../meshray.js";
import { grid } from "./grid.mjs";
import { random, rays, soup, sphere } from "./meshes.mjs";

await init();

/** The closest hits of `rayset` as comparable arrays (bits of t, triangles). */
function answers(bvh, rayset) {
  const hits = bvh.closestHits(rayset);
  return { t: Array.from(new Uint32Array(hits.distance.buffer.slice(0))), triangle: Array.from(hits.triangle) };
}

test("toBytes and fromBytes: the same answers, bit for bit", () => {
  const rng = random(3);
  for (const mesh of [sphere(40, 60), soup(3000, rng)]) {
    const bvh = new BVH(mesh.positions, mesh.indices);
    const bytes = bvh.toBytes();
    assert.ok(bytes instanceof Uint8Array && bytes.length > 0);
    const copy = BVH.fromBytes(bytes);
    const fromBuffer = BVH.fromBytes(bytes.slice().buffer);
    const rayset = rays(mesh.positions, 2000, rng);
    assert.deepEqual(answers(copy, rayset), answers(bvh, rayset));
    assert.deepEqual(answers(fromBuffer, rayset), answers(bvh, rayset));
    assert.equal(copy.triangleCount, bvh.triangleCount);
    assert.deepEqual(copy.bounds, bvh.bounds);
    // Saving the copy gives the same bytes.
    assert.deepEqual(copy.toBytes(), bytes);
    for (const b of [bvh, copy, fromBuffer]) b.free();
  }
});

test("fromBytes refuses corrupt bytes with a message, never a trap", () => {
  const mesh = sphere(20, 30);
  const bvh = new BVH(mesh.positions, mesh.indices);
  const bytes = bvh.toBytes();
  bvh.free();
  const rng = random(9);
  const bad = [new Uint8Array(0), bytes.subarray(0, bytes.length >> 1), new Uint8Array(1000).map(() => rng() * 256)];
  for (let k = 0; k < 60; k++) {
    const flipped = bytes.slice();
    flipped[Math.floor(rng() * flipped.length)] ^= 1 << Math.floor(rng() * 8);
    bad.push(flipped);
  }
  let refused = 0;
  for (const b of bad) {
    try {
      BVH.fromBytes(b).free();
    } catch (error) {
      assert.match(error.message, /^meshray: /);
      assert.ok(!(error instanceof WebAssembly.RuntimeError), error.message);
      refused++;
    }
  }
  // Every one: a flipped bit fails the checksum, if nothing before it.
  assert.equal(refused, bad.length);
  assert.throws(() => BVH.fromBytes("bytes"), /Uint8Array or an ArrayBuffer/);
});

test("buildAsync: built in a worker, the same answers as a build here", async () => {
  const rng = random(5);
  const mesh = sphere(60, 90);
  const [a, b] = await Promise.all([
    buildAsync(mesh.positions, mesh.indices),
    buildAsync(mesh.positions, mesh.indices, { quality: "high" }),
  ]);
  const here = new BVH(mesh.positions, mesh.indices);
  const high = new BVH(mesh.positions, mesh.indices, { quality: "high" });
  const rayset = rays(mesh.positions, 2000, rng);
  assert.deepEqual(answers(a, rayset), answers(here, rayset));
  assert.deepEqual(answers(b, rayset), answers(high, rayset));
  assert.ok(mesh.positions.length > 0, "the arrays stay usable here");
  // One after another (the idle worker ends after each; the next starts another), and one
  // asked for as another finishes.
  for (let k = 0; k < 3; k++) (await buildAsync(mesh.positions, mesh.indices)).free();
  const chained = await buildAsync(mesh.positions, mesh.indices).then((first) => {
    first.free();
    return buildAsync(mesh.positions, mesh.indices);
  });
  assert.deepEqual(answers(chained, rayset), answers(here, rayset));
  chained.free();
  await assert.rejects(buildAsync(mesh.positions, [0, 1, 1e9]), /index|vertex|out of range/i);
  await assert.rejects(buildAsync(new Float32Array([0, 0, NaN, 1, 0, 0, 0, 1, 0])), /NaN|infinite/);
  for (const t of [a, b, here, high]) t.free();
});

test("buildAsync keeps this thread's event loop running during a large build", async () => {
  // A 1000 × 1000 grid: two million triangles.
  const n = 1000;
  const { positions, indices } = grid(n);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const start = performance.now();
  const bvh = await buildAsync(positions, indices, { quality: "fast" });
  const elapsed = performance.now() - start;
  clearInterval(timer);
  // The timer ran through the build (not one long stall): at least a third of its ticks.
  assert.ok(ticks >= elapsed / 5 / 3, `${ticks} ticks in ${elapsed.toFixed(0)} ms`);
  assert.equal(bvh.triangleCount, 2 * n * n);
  // A build here blocks the same timer for as long as it takes.
  ticks = 0;
  const blocked = setInterval(() => ticks++, 5);
  const here = new BVH(positions, indices, { quality: "fast" });
  const still = ticks;
  clearInterval(blocked);
  assert.equal(still, 0, "a build on this thread lets no timer run");
  const rayset = rays(positions, 1000, random(2));
  assert.deepEqual(answers(bvh, rayset), answers(here, rayset));
  bvh.free();
  here.free();
});
