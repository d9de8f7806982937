#!/usr/bin/env node
// An animated frame, meshray against three-mesh-bvh, in Node, one thread: a shared mesh
// skinned to four bones stacked by height (every vertex weighing all four), posed anew each
// frame, then 1,000 rays picked with Raycaster.intersectObject and firstHitOnly.
//
//   node js/bench/animated.mjs [--frames N] [--rays N] [MESH...]
//
//   MESH       stanford-bunny armadillo (the default), or a path to an .obj file
//   --frames   frames timed per mesh and library (default 30; the median is reported)
//   --rays     rays per frame (default 1000)
//
// meshray: the SkinnedMesh raycast through its adapter (js/three.js), which poses the
// vertices by three's rules and refits its tree on the frame's first ray. three-mesh-bvh:
// its StaticGeometryGenerator bakes the pose into a static geometry (positions only,
// in the mesh's space), MeshBVH.refit, then its acceleratedRaycast on that geometry. The
// libraries alternate frame by frame; every ray's distance is compared between them.

import { readFileSync } from "node:fs";
import { join, resolve, dirname, basename } from "node:path";
import { fileURLToPath } from "node:url";
import * as THREE from "three";
import {
  MeshBVH,
  StaticGeometryGenerator,
  acceleratedRaycast as bvhRaycast,
} from "three-mesh-bvh";
import { init } from "../meshray.js";
import { acceleratedRaycast, computeBoundsTree } from "../three.js";
import { parseOBJ } from "./common.mjs";
import { random } from "../test/meshes.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const k = args.indexOf(name);
  if (k < 0) return fallback;
  const value = Number(args[k + 1]);
  args.splice(k, 2);
  return value;
};
const FRAMES = option("--frames", 30);
const RAYS = option("--rays", 1000);
const meshes = args.length > 0 ? args : ["stanford-bunny", "armadillo"];
const dir = process.env.MESHRAY_MESHES ?? join(repo, "../shared/meshes");
const pathOf = (name) => (name.endsWith(".obj") ? name : join(dir, name, `${name}.obj`));

await init();

/** The mesh skinned to four bones at heights 1/8, 3/8, 5/8, 7/8 of its box. */
function skinnedMesh(positions, indices) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.BufferAttribute(positions, 3));
  geometry.setIndex(new THREE.BufferAttribute(indices, 1));
  geometry.computeBoundingBox();
  const { min, max } = geometry.boundingBox;
  const count = positions.length / 3;
  const skinIndex = new Uint16Array(4 * count);
  const skinWeight = new Float32Array(4 * count);
  for (let i = 0; i < count; i++) {
    const h = (positions[3 * i + 1] - min.y) / (max.y - min.y);
    const w = [0.125, 0.375, 0.625, 0.875].map((c) => 1 / (0.05 + Math.abs(h - c)));
    const sum = w.reduce((a, b) => a + b);
    skinIndex.set([0, 1, 2, 3], 4 * i);
    skinWeight.set(w.map((x) => x / sum), 4 * i);
  }
  geometry.setAttribute("skinIndex", new THREE.Uint16BufferAttribute(skinIndex, 4));
  geometry.setAttribute("skinWeight", new THREE.Float32BufferAttribute(skinWeight, 4));
  const centre = new THREE.Vector3((min.x + max.x) / 2, 0, (min.z + max.z) / 2);
  const bones = [];
  for (let b = 0; b < 4; b++) {
    const bone = new THREE.Bone();
    const level = min.y + (max.y - min.y) * (0.125 + 0.25 * b);
    if (b === 0) bone.position.set(centre.x, level, centre.z);
    else bone.position.set(0, (max.y - min.y) * 0.25, 0);
    if (b > 0) bones[b - 1].add(bone);
    bones.push(bone);
  }
  const mesh = new THREE.SkinnedMesh(geometry, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide }));
  mesh.add(bones[0]);
  mesh.updateMatrixWorld(true);
  mesh.bind(new THREE.Skeleton(bones));
  return { mesh, bones };
}

/**
 * Frame f's pose: each bone turns a little about x and z. The skeleton's bone matrices are
 * updated as a renderer does each frame (three-mesh-bvh's generator reads them; meshray's
 * adapter reads the bones' world matrices).
 */
function pose(bones, mesh, f) {
  for (let b = 1; b < 4; b++) {
    bones[b].rotation.x = 0.15 * Math.sin(0.3 * f + b);
    bones[b].rotation.z = 0.1 * Math.cos(0.2 * f + b);
  }
  mesh.updateMatrixWorld(true);
  mesh.skeleton.update();
}

/** Rays from a sphere around the mesh's box towards points in it. */
function raysAround(box, n, rng) {
  const centre = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  const radius = size.length();
  const out = [];
  for (let i = 0; i < n; i++) {
    const g = new THREE.Vector3(rng() - 0.5, rng() - 0.5, rng() - 0.5).normalize();
    const origin = g.multiplyScalar(radius).add(centre);
    const target = new THREE.Vector3(rng(), rng(), rng()).multiply(size).add(box.min);
    out.push(new THREE.Ray(origin, target.sub(origin).normalize()));
  }
  return out;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = [];
for (const name of meshes) {
  const { positions, indices } = parseOBJ(readFileSync(pathOf(name)));
  const { mesh, bones } = skinnedMesh(positions, indices);
  mesh.raycast = acceleratedRaycast;
  computeBoundsTree.call(mesh.geometry);
  // three-mesh-bvh: the pose baked into a static geometry in the mesh's own space.
  const generator = new StaticGeometryGenerator(mesh);
  generator.attributes = ["position"];
  generator.applyWorldTransforms = false;
  generator.useGroups = false;
  const baked = generator.generate();
  baked.boundsTree = new MeshBVH(baked);
  const still = new THREE.Mesh(baked, mesh.material);
  still.raycast = bvhRaycast;
  const rays = raysAround(new THREE.Box3().setFromObject(mesh, true), RAYS, random(7));
  const raycaster = new THREE.Raycaster();
  raycaster.firstHitOnly = true;
  const times = { meshray: [], "three-mesh-bvh": [] };
  const firstRay = [];
  let compared = 0;
  let differ = 0;
  let hits = 0;
  for (let f = 0; f < FRAMES + 2; f++) {
    pose(bones, mesh, f);
    const distances = {};
    for (const lib of f % 2 === 0 ? ["meshray", "three-mesh-bvh"] : ["three-mesh-bvh", "meshray"]) {
      const out = new Float64Array(rays.length);
      const start = performance.now();
      let first = 0;
      if (lib === "three-mesh-bvh") {
        generator.generate(baked);
        baked.boundsTree.refit();
        still.updateMatrixWorld(true);
      }
      for (let r = 0; r < rays.length; r++) {
        raycaster.ray.copy(rays[r]);
        const [hit] = raycaster.intersectObject(lib === "meshray" ? mesh : still, false);
        out[r] = hit ? hit.distance : Infinity;
        if (r === 0) first = performance.now() - start;
      }
      const elapsed = performance.now() - start;
      if (f >= 2) {
        times[lib].push(elapsed);
        if (lib === "meshray") firstRay.push(first);
      }
      distances[lib] = out;
    }
    for (let r = 0; r < rays.length; r++) {
      const [a, b] = [distances.meshray[r], distances["three-mesh-bvh"][r]];
      compared++;
      if (a < Infinity) hits++;
      if (!(a === b || Math.abs(a - b) <= 1e-4 * Math.max(1, b))) differ++;
    }
  }
  const [m, t] = [median(times.meshray), median(times["three-mesh-bvh"])];
  rows.push(`| ${basename(name, ".obj")} | ${positions.length / 3} | ${indices.length / 3} | ${m.toFixed(2)} (${median(firstRay).toFixed(2)}) | ${t.toFixed(2)} | ${(t / m).toFixed(2)}× | ${differ} of ${compared} (${hits} hits) |`);
}
console.log(`${RAYS} rays per frame, median of ${FRAMES} frames, ms (Node ${process.versions.node}, one thread)\n`);
console.log("| mesh | vertices | triangles | meshray frame (pose + refit, in the first ray) | three-mesh-bvh frame | ratio | distances that differ |");
console.log("|---|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
