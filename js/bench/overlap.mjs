// Mesh against mesh in Node, a shared mesh against a copy of itself moved by (0.1, 0.05, 0)
// of its half diagonal (as benches/overlap.rs places it), meshray beside three-mesh-bvh:
// every intersecting pair (meshray's `intersectingTriangles`, decided exactly; three-mesh-
// bvh's `bvhcast` with `ExtendedTriangle.intersectsTriangle` on every pair of triangles its
// walk reaches, as its issues #310 and #762 ask), and yes or no, stopping at the first pair
// (meshray's `intersects`; three-mesh-bvh's `intersectsGeometry`, the other geometry's tree
// given as `boundsTree`). One thread, the four alternated, median of the passes; the
// builds apart.
//
//   node js/bench/overlap.mjs [--passes N] [MESH.obj ...]   (default: the shared meshes)
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import * as THREE from "three";
import { MeshBVH } from "three-mesh-bvh";

import { BVH, init } from "../meshray.js";
import { SHARED_MESHES, parseOBJ } from "./common.mjs";

await init();
const args = process.argv.slice(2);
let passes = 5;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--passes") passes = Number(args[++i]);
  else files.push(args[i]);
}
const shared = process.env.MESHRAY_MESHES ?? new URL("../../../shared/meshes", import.meta.url).pathname;
if (files.length === 0) {
  for (const name of ["stanford-bunny", "armadillo", "crytek-sponza"]) {
    const path = join(shared, SHARED_MESHES[name]);
    if (existsSync(path)) files.push(path);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const timed = (f) => {
  const start = performance.now();
  const value = f();
  return [value, performance.now() - start];
};

console.log(`date: ${new Date().toISOString()}; node ${process.version}; median of ${passes} passes, one thread`);
console.log(
  "mesh, triangles | every pair: meshray pairs, ms | bvhcast pairs, ms | ratio || yes or no: meshray intersects, ms | intersectsGeometry, ms | ratio",
);
for (const file of files) {
  const { positions, indices } = parseOBJ(readFileSync(file));
  const box = new THREE.Box3().setFromArray(positions);
  const h = box.getSize(new THREE.Vector3()).length() / 2;
  const moved = new THREE.Matrix4().makeTranslation(0.1 * h, 0.05 * h, 0);
  const ours = new BVH(positions, indices);
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.BufferAttribute(positions, 3));
  geometry.setIndex(new THREE.BufferAttribute(indices.slice(), 1));
  const theirs = new MeshBVH(geometry);
  // intersectsGeometry moves the other geometry into this tree's space itself; bvhcast takes
  // the other tree and the same matrix.
  const other = new THREE.BufferGeometry();
  other.setAttribute("position", new THREE.BufferAttribute(positions, 3));
  other.setIndex(new THREE.BufferAttribute(indices.slice(), 1));
  const otherTree = new MeshBVH(other);
  // With the other geometry's own tree in place, as three-mesh-bvh's docs ask
  // (`geometry.boundsTree`), intersectsGeometry walks the two trees together; without it,
  // it tests the other's triangles against each leaf (tens of seconds on the bunny).
  other.boundsTree = otherTree;
  const times = { meshray: [], bvhcast: [], intersects: [], meets: [] };
  let counts = { meshray: 0, bvhcast: 0, intersects: false, meets: false };
  for (let p = 0; p < passes; p++) {
    const runs = [
      () => {
        const [pairs, ms] = timed(() => ours.intersectingTriangles(ours, moved).length / 2);
        times.meshray.push(ms);
        counts.meshray = pairs;
      },
      () => {
        const [pairs, ms] = timed(() => {
          let n = 0;
          theirs.bvhcast(otherTree, moved, {
            intersectsTriangles(t1, t2) {
              if (t1.intersectsTriangle(t2)) n++;
              return false;
            },
          });
          return n;
        });
        times.bvhcast.push(ms);
        counts.bvhcast = pairs;
      },
      () => {
        const [any, ms] = timed(() => ours.intersects(ours, moved));
        times.meets.push(ms);
        counts.meets = any;
      },
      () => {
        const [any, ms] = timed(() => theirs.intersectsGeometry(other, moved));
        times.intersects.push(ms);
        counts.intersects = any;
      },
    ];
    for (let k = 0; k < runs.length; k++) runs[(p + k) % runs.length]();
  }
  const [m, b, g, y] = [times.meshray, times.bvhcast, times.intersects, times.meets].map(median);
  const name = file.split("/").slice(-2, -1)[0];
  console.log(
    `${name}, ${indices.length / 3} | ${counts.meshray}, ${m.toFixed(1)} | ${counts.bvhcast}, ${b.toFixed(1)} | ` +
      `${(b / m).toFixed(2)}x || ${counts.meets}, ${y.toFixed(3)} | ${counts.intersects}, ${g.toFixed(3)} | ${(g / y).toFixed(2)}x`,
  );
  ours.free();
}
