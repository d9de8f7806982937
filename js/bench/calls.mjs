// The cost of one call into the WebAssembly core, measured on a ray that misses the root
// box (so the walk is one box test): through the adapter's raw path, through closestHit
// (argument checks, a result object), and per ray of a batch (copies in and out).
//
//   node js/bench/calls.mjs
import { BVH, init } from "../meshray.js";

await init();
const bvh = new BVH(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]));
const n = 5_000_000;
const rays = new Float32Array(6 * 100_000);
for (let i = 0; i < 100_000; i++) rays.set([5, 5, 5, 0, 0, 1], 6 * i);
const ns = (f, count) => {
  const start = performance.now();
  f();
  return (((performance.now() - start) * 1e6) / count).toFixed(1);
};
for (let round = 0; round < 3; round++) {
  let misses = 0;
  const raw = ns(() => {
    for (let i = 0; i < n; i++) misses += bvh._closestHitRaw(5, 5, 5, 0, 0, 1, 0, Infinity, 0) === -1;
  }, n);
  const api = ns(() => {
    for (let i = 0; i < n / 5; i++) misses += bvh.closestHit([5, 5, 5], [0, 0, 1]) === null;
  }, n / 5);
  const batch = ns(() => {
    for (let k = 0; k < 10; k++) misses += bvh.closestHits(rays).triangle[0] === -1;
  }, 1e6);
  console.log(`ns per call: raw ${raw}, closestHit ${api}, batch ${batch} per ray (${misses} misses)`);
}
