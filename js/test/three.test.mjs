// The three.js adapter (meshray/three) against three's own Mesh.raycast, the oracle: many
// seeded random rays on procedural meshes (indexed and not, transformed), groups with mixed
// sides and a drawRange, near/far, firstHitOnly, InstancedMesh, BatchedMesh, skinned and
// morphed meshes (against three's raycast of the mesh as posed) and shared real meshes (skipped without them, a failure without them under CI=true).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as THREE from "three";
import { OBJLoader } from "three/examples/jsm/loaders/OBJLoader.js";
import { mergeVertices } from "three/examples/jsm/utils/BufferGeometryUtils.js";
import { init } from "../meshray.js";
import { sharedMeshes, skipWithoutShared } from "./meshes.mjs";
import {
  MeshrayBoundsTree,
  acceleratedRaycast,
  computeBatchedBoundsTree,
  computeBoundsTree,
  disposeBatchedBoundsTree,
  disposeBoundsTree,
} from "../three.js";

const here = dirname(fileURLToPath(import.meta.url));

// three's own raycasts: the oracle.
const threeMesh = THREE.Mesh.prototype.raycast;
const threeSkinned = THREE.SkinnedMesh.prototype.raycast;
const threeBatched = THREE.BatchedMesh.prototype.raycast;

await init();
THREE.BufferGeometry.prototype.computeBoundsTree = computeBoundsTree;
THREE.BufferGeometry.prototype.disposeBoundsTree = disposeBoundsTree;
THREE.Mesh.prototype.raycast = acceleratedRaycast;
THREE.BatchedMesh.prototype.computeBoundsTree = computeBatchedBoundsTree;
THREE.BatchedMesh.prototype.disposeBoundsTree = disposeBatchedBoundsTree;
THREE.BatchedMesh.prototype.raycast = acceleratedRaycast;

/** A seeded generator of floats in [0, 1) (mulberry32). */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** three's answer (its own raycasts, firstHitOnly ignored), sorted. */
function oracle(raycaster, object) {
  THREE.Mesh.prototype.raycast = threeMesh;
  THREE.BatchedMesh.prototype.raycast = threeBatched;
  try {
    return raycaster.intersectObject(object, false);
  } finally {
    THREE.Mesh.prototype.raycast = acceleratedRaycast;
    THREE.BatchedMesh.prototype.raycast = acceleratedRaycast;
  }
}

/** The nearest hit of each instance (firstHitOnly's answer on an InstancedMesh), sorted. */
function firstPerInstance(hits) {
  const seen = new Set();
  return hits.filter((h) => !seen.has(h.instanceId) && seen.add(h.instanceId));
}

/**
 * `n` rays at `object`'s world bounds: from a sphere around them towards points in them,
 * and a fifth from inside. Unit directions.
 */
function randomRays(object, n, rng) {
  const box = new THREE.Box3().setFromObject(object, true);
  const centre = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  const radius = size.length();
  const inBox = () =>
    new THREE.Vector3(rng(), rng(), rng()).multiply(size).add(box.min);
  const rays = [];
  for (let i = 0; i < n; i++) {
    let origin;
    if (i % 5 === 4) {
      origin = inBox();
    } else {
      const g = new THREE.Vector3(rng() - 0.5, rng() - 0.5, rng() - 0.5);
      if (g.lengthSq() < 1e-6) g.set(1, 0, 0);
      origin = g.normalize().multiplyScalar(radius).add(centre);
    }
    const direction = inBox().sub(origin);
    if (direction.lengthSq() < 1e-12) direction.set(0, 0, 1);
    rays.push(new THREE.Ray(origin, direction.normalize()));
  }
  return { rays, scale: radius };
}

const close = (a, b, tol) => Math.abs(a - b) <= tol;
const closeV = (a, b, tol) => close(a.x, b.x, tol) && close(a.y, b.y, tol) && close(a.z ?? 0, b.z ?? 0, tol);

/**
 * Asserts that our hits are three's: same count; per rank the same triangle (another one
 * only at a tie, distance equal within 1e-5 relative), distance and point within a small
 * tolerance, face, normal, uv, uv1, barycoord, object, instanceId, batchId alike. Ties are
 * looked for in `pool` (all of three's hits, when `theirs` keeps only the first).
 */
function assertSame(ours, theirs, scale, what, pool = theirs, normalTolerance = 1e-9) {
  const fail = (msg) => assert.fail(`${what}: ${msg}\nours ${brief(ours)}\nthree ${brief(theirs)}`);
  if (ours.length !== theirs.length) fail(`${ours.length} hits, three ${theirs.length}`);
  for (let i = 0; i < ours.length; i++) {
    const a = ours[i];
    let b = theirs[i];
    const tol = 1e-5 * Math.max(b.distance, scale);
    if (!close(a.distance, b.distance, tol)) fail(`hit ${i}: distance ${a.distance} vs ${b.distance}`);
    if (!closeV(a.point, b.point, tol)) fail(`hit ${i}: point`);
    if (a.object !== b.object || a.instanceId !== b.instanceId || a.batchId !== b.batchId) {
      fail(`hit ${i}: object/instanceId/batchId`);
    }
    const same = (c) => c.faceIndex === a.faceIndex && c.face.materialIndex === a.face.materialIndex &&
      c.instanceId === a.instanceId && c.batchId === a.batchId;
    if (!same(b)) {
      // Hits at the same distance may come in another order (a triangle in two groups), or
      // be of another triangle: a ray through a shared edge or corner.
      const tied = pool.filter((c) => close(c.distance, a.distance, tol));
      const partner = tied.find(same);
      if (partner) b = partner;
      else if (tied.some((c) => c.faceIndex !== a.faceIndex)) continue;
      else fail(`hit ${i}: triangle ${a.faceIndex} (material ${a.face.materialIndex}) vs ${b.faceIndex} (${b.face.materialIndex}), not a tie`);
    }
    const { face: fa } = a;
    const { face: fb } = b;
    if (fa.a !== fb.a || fa.b !== fb.b || fa.c !== fb.c || fa.materialIndex !== fb.materialIndex) {
      fail(`hit ${i}: face ${JSON.stringify(fa)} vs ${JSON.stringify(fb)}`);
    }
    if (!closeV(fa.normal, fb.normal, normalTolerance)) fail(`hit ${i}: face.normal`);
    // Attributes interpolate with meshray's f32 barycentrics; three's are f64.
    for (const key of ["barycoord", "normal", "uv", "uv1"]) {
      if ((a[key] === undefined) !== (b[key] === undefined)) fail(`hit ${i}: ${key} present in one only`);
      if (a[key] !== undefined && !closeV(a[key], b[key], 2e-4)) {
        fail(`hit ${i}: ${key} ${JSON.stringify(a[key])} vs ${JSON.stringify(b[key])}`);
      }
    }
  }
}

function brief(hits) {
  return JSON.stringify(hits.map((h) => [h.faceIndex, +h.distance.toFixed(6), h.instanceId ?? h.batchId]));
}

/**
 * Casts `rays` at `object` through the adapter and through three, with random near/far
 * when `limits`, and firstHitOnly off and on; returns how many rays hit.
 */
function compare(object, { rays, scale }, what, { limits = false, rng = random(7) } = {}) {
  const raycaster = new THREE.Raycaster();
  let hit = 0;
  for (const [k, ray] of rays.entries()) {
    raycaster.ray.copy(ray);
    raycaster.near = 0;
    raycaster.far = Infinity;
    if (limits) {
      raycaster.near = rng() < 0.3 ? 0 : rng() * scale;
      raycaster.far = rng() < 0.3 ? Infinity : raycaster.near + rng() * scale;
    }
    raycaster.firstHitOnly = false;
    const theirs = oracle(raycaster, object);
    assertSame(raycaster.intersectObject(object, false), theirs, scale, `${what}, ray ${k}`);
    raycaster.firstHitOnly = true;
    const first = object.isInstancedMesh ? firstPerInstance(theirs) : theirs.slice(0, 1);
    assertSame(raycaster.intersectObject(object, false), first, scale, `${what}, ray ${k}, firstHitOnly`, theirs);
    if (theirs.length > 0) hit++;
  }
  return hit;
}

const SIDES = { FrontSide: THREE.FrontSide, BackSide: THREE.BackSide, DoubleSide: THREE.DoubleSide };

/** A translated, rotated, non-uniformly scaled transform (mirrored when `mirror`). */
function transform(object, rng, mirror = false) {
  object.position.set(rng() * 4 - 2, rng() * 4 - 2, rng() * 4 - 2);
  object.rotation.set(rng() * 6, rng() * 6, rng() * 6);
  object.scale.set(0.5 + rng() * 2, 0.5 + rng() * 2, (0.5 + rng() * 2) * (mirror ? -1 : 1));
  object.updateMatrixWorld(true);
  return object;
}

test("meshray's front faces are three's FrontSide: counter-clockwise seen from the ray's origin", () => {
  const geometry = new THREE.BufferGeometry();
  // Counter-clockwise seen from +z.
  geometry.setAttribute("position", new THREE.Float32BufferAttribute([0, 0, 0, 1, 0, 0, 0, 1, 0], 3));
  geometry.computeBoundsTree();
  const raycaster = new THREE.Raycaster();
  for (const [name, side] of Object.entries(SIDES)) {
    const mesh = new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({ side }));
    for (const z of [1, -1]) {
      raycaster.set(new THREE.Vector3(0.2, 0.2, z), new THREE.Vector3(0, 0, -z));
      const ours = raycaster.intersectObject(mesh);
      const expected = side === THREE.DoubleSide || (side === THREE.FrontSide) === (z > 0) ? 1 : 0;
      assert.equal(ours.length, expected, `${name}, ray from z = ${z}`);
      assertSame(ours, oracle(raycaster, mesh), 1, `${name}, ray from z = ${z}`);
    }
  }
  geometry.disposeBoundsTree();
});

test("procedural meshes, indexed and not, transformed, every side: as three's raycast", () => {
  const rng = random(1);
  const shapes = {
    sphere: new THREE.SphereGeometry(1, 24, 16),
    torusKnot: new THREE.TorusKnotGeometry(1, 0.35, 96, 12),
  };
  let hits = 0;
  for (const [name, indexed] of Object.entries(shapes)) {
    for (const geometry of [indexed, indexed.toNonIndexed()]) {
      geometry.computeBoundsTree();
      const kind = `${name} ${geometry.index ? `indexed (${geometry.index.array.constructor.name})` : "non-indexed"}`;
      for (const [sideName, side] of Object.entries(SIDES)) {
        for (const mirror of [false, true]) {
          const mesh = transform(new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({ side })), rng, mirror);
          hits += compare(mesh, randomRays(mesh, 60, rng), `${kind}, ${sideName}${mirror ? ", mirrored" : ""}`);
        }
      }
      geometry.disposeBoundsTree();
    }
  }
  assert.ok(hits > 500, `only ${hits} rays hit`);
});

test("Uint32 indices, interleaved positions, uv1 and a ray direction not of unit length", () => {
  const rng = random(2);
  const source = new THREE.TorusKnotGeometry(1, 0.3, 64, 8);
  // Uint32 indices.
  const wide = source.clone();
  wide.setIndex(new THREE.BufferAttribute(new Uint32Array(source.index.array), 1));
  wide.setAttribute("uv1", source.attributes.uv.clone());
  // Interleaved positions and normals (stride 6), Uint16 indices.
  const interleaved = new THREE.BufferGeometry();
  const p = source.attributes.position;
  const n = source.attributes.normal;
  const data = new Float32Array(6 * p.count);
  for (let i = 0; i < p.count; i++) data.set([p.getX(i), p.getY(i), p.getZ(i), n.getX(i), n.getY(i), n.getZ(i)], 6 * i);
  const buffer = new THREE.InterleavedBuffer(data, 6);
  interleaved.setAttribute("position", new THREE.InterleavedBufferAttribute(buffer, 3, 0));
  interleaved.setAttribute("normal", new THREE.InterleavedBufferAttribute(buffer, 3, 3));
  interleaved.setIndex(new THREE.BufferAttribute(new Uint16Array(source.index.array), 1));
  for (const [what, geometry] of [["Uint32 indices, uv1", wide], ["interleaved", interleaved]]) {
    geometry.computeBoundsTree();
    const mesh = transform(new THREE.Mesh(geometry, new THREE.MeshBasicMaterial()), rng);
    assert.ok(compare(mesh, randomRays(mesh, 150, rng), what) > 30);
    geometry.disposeBoundsTree();
  }
  // A direction of length 3: three's distances are still world distances (no near/far:
  // three's own near/far pre-test assumes a unit direction, as its docs ask).
  wide.computeBoundsTree();
  const mesh = transform(new THREE.Mesh(wide, new THREE.MeshBasicMaterial()), rng);
  const { rays, scale } = randomRays(mesh, 100, rng);
  for (const ray of rays) ray.direction.multiplyScalar(3);
  assert.ok(compare(mesh, { rays, scale }, "direction of length 3") > 20);
  wide.disposeBoundsTree();
});

test("geometry groups with a material array of mixed sides, and drawRange", () => {
  const rng = random(3);
  const materials = [THREE.FrontSide, THREE.BackSide, THREE.DoubleSide].map(
    (side) => new THREE.MeshBasicMaterial({ side }),
  );
  const indexed = new THREE.TorusKnotGeometry(1, 0.35, 80, 10);
  for (const geometry of [indexed, indexed.toNonIndexed()]) {
    const count = geometry.index ? geometry.index.count : geometry.attributes.position.count;
    const third = 3 * Math.floor(count / 9);
    geometry.clearGroups();
    geometry.addGroup(0, third, 0);
    geometry.addGroup(third, third, 1);
    geometry.addGroup(2 * third, count - 2 * third, 2);
    geometry.addGroup(third - 30, 60, 2); // overlaps two groups: three tests those twice
    geometry.computeBoundsTree();
    const kind = geometry.index ? "indexed" : "non-indexed";
    const mesh = transform(new THREE.Mesh(geometry, materials), rng);
    compare(mesh, randomRays(mesh, 100, rng), `${kind}, groups`);
    // drawRange cutting groups, with groups and with one material of each side.
    geometry.setDrawRange(3 * Math.floor(count / 6), 3 * Math.floor(count / 3) + 2);
    compare(mesh, randomRays(mesh, 100, rng), `${kind}, groups + drawRange`);
    for (const material of materials) {
      const single = transform(new THREE.Mesh(geometry, material), rng);
      compare(single, randomRays(single, 60, rng), `${kind}, drawRange, side ${material.side}`);
    }
    // A range ending at a triangle's start, on the group boundaries.
    geometry.setDrawRange(third, third);
    compare(mesh, randomRays(mesh, 60, rng), `${kind}, groups + drawRange on a group`);
    const single = transform(new THREE.Mesh(geometry, materials[1]), rng);
    compare(single, randomRays(single, 60, rng), `${kind}, drawRange = one group`);
    // The same side in every group.
    const fronts = transform(new THREE.Mesh(geometry, [materials[0], materials[0], materials[0]]), rng);
    compare(fronts, randomRays(fronts, 60, rng), `${kind}, groups all FrontSide`);
    geometry.setDrawRange(0, Infinity);
    geometry.disposeBoundsTree();
  }
});

test("raycaster.near and far: world distances, with the object's scale", () => {
  const rng = random(4);
  const geometry = new THREE.TorusKnotGeometry(1, 0.35, 96, 12);
  geometry.computeBoundsTree();
  for (const side of Object.values(SIDES)) {
    const mesh = transform(new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({ side })), rng);
    mesh.scale.multiplyScalar(3);
    mesh.updateMatrixWorld(true);
    compare(mesh, randomRays(mesh, 150, rng), `near/far, side ${side}`, { limits: true, rng });
  }
  geometry.disposeBoundsTree();
});

test("firstHitOnly reports only the nearest hit", () => {
  const rng = random(5);
  const geometry = new THREE.TorusKnotGeometry(1, 0.35, 96, 12);
  geometry.computeBoundsTree();
  const mesh = transform(new THREE.Mesh(geometry, new THREE.MeshBasicMaterial()), rng);
  const raycaster = new THREE.Raycaster();
  let many = 0;
  for (const ray of randomRays(mesh, 200, rng).rays) {
    raycaster.ray.copy(ray);
    raycaster.firstHitOnly = true;
    const ours = raycaster.intersectObject(mesh);
    const theirs = oracle(raycaster, mesh);
    assert.equal(ours.length, Math.min(1, theirs.length));
    if (theirs.length > 1) many++;
    assertSame(ours, theirs.slice(0, 1), 10, "firstHitOnly");
  }
  assert.ok(many > 20, "too few rays with several hits");
  geometry.disposeBoundsTree();
});

test("InstancedMesh: three's per-instance raycast goes through the tree", () => {
  const rng = random(6);
  const geometry = new THREE.SphereGeometry(1, 20, 12);
  geometry.computeBoundsTree();
  const mesh = new THREE.InstancedMesh(geometry, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide }), 6);
  const dummy = new THREE.Object3D();
  for (let i = 0; i < mesh.count; i++) {
    transform(dummy, rng);
    mesh.setMatrixAt(i, dummy.matrix);
  }
  transform(mesh, rng);
  const hits = compare(mesh, randomRays(mesh, 150, rng), "InstancedMesh");
  assert.ok(hits > 30);
  geometry.disposeBoundsTree();
});

test("BatchedMesh: computeBatchedBoundsTree, per-instance raycast, batchId", () => {
  const rng = random(8);
  const a = new THREE.SphereGeometry(1, 16, 10);
  const b = new THREE.TorusKnotGeometry(0.8, 0.25, 48, 8);
  const mesh = new THREE.BatchedMesh(6, 5000, 20000, new THREE.MeshBasicMaterial({ side: THREE.FrontSide }));
  const ids = [mesh.addGeometry(a), mesh.addGeometry(b)];
  const dummy = new THREE.Object3D();
  for (let i = 0; i < 5; i++) {
    const instance = mesh.addInstance(ids[i % 2]);
    mesh.setMatrixAt(instance, transform(dummy, rng).matrix);
  }
  mesh.setVisibleAt(3, false);
  transform(mesh, rng);
  const trees = mesh.computeBoundsTree();
  assert.equal(trees.length, 2);
  assert.ok(trees.every((t) => t instanceof MeshrayBoundsTree));
  assert.ok(compare(mesh, randomRays(mesh, 150, rng), "BatchedMesh") > 30);
  // firstHitOnly: the nearest over every instance.
  const raycaster = new THREE.Raycaster();
  raycaster.firstHitOnly = true;
  for (const ray of randomRays(mesh, 50, rng).rays) {
    raycaster.ray.copy(ray);
    assertSame(raycaster.intersectObject(mesh), oracle(raycaster, mesh).slice(0, 1), 10, "BatchedMesh firstHitOnly");
  }
  // Without its trees, three's own raycast (firstHitOnly ignored).
  mesh.disposeBoundsTree();
  assert.equal(mesh.boundsTrees, null);
  assert.throws(() => trees[0].bvh.triangleCount, /freed/);
  raycaster.firstHitOnly = false;
  for (const ray of randomRays(mesh, 20, rng).rays) {
    raycaster.ray.copy(ray);
    assertSame(raycaster.intersectObject(mesh), oracle(raycaster, mesh), 10, "BatchedMesh without trees");
  }
  assert.throws(() => mesh.computeBoundsTree(7), /no geometry 7/);
});

test("disposeBoundsTree frees the tree; then, and without a tree, three's raycast runs", () => {
  const geometry = new THREE.TorusKnotGeometry(1, 0.35, 64, 8);
  const mesh = new THREE.Mesh(geometry, new THREE.MeshBasicMaterial());
  const raycaster = new THREE.Raycaster(new THREE.Vector3(0, 0, 5), new THREE.Vector3(0.05, 0.2, -1).normalize());
  raycaster.firstHitOnly = true;
  // three's raycast ignores firstHitOnly: every hit.
  const all = oracle(raycaster, mesh);
  assert.ok(all.length >= 2);
  assert.equal(raycaster.intersectObject(mesh).length, all.length, "no tree: three's raycast");
  const tree = geometry.computeBoundsTree();
  assert.ok(tree instanceof MeshrayBoundsTree && geometry.boundsTree === tree);
  assert.equal(raycaster.intersectObject(mesh).length, 1, "with the tree");
  // Computing it again frees the first one.
  const second = geometry.computeBoundsTree();
  assert.throws(() => tree.bvh.triangleCount, /freed/);
  geometry.disposeBoundsTree();
  assert.equal(geometry.boundsTree, null);
  assert.throws(() => second.bvh.triangleCount, /freed/);
  assertSame(raycaster.intersectObject(mesh), all, 10, "after dispose");
  geometry.disposeBoundsTree(); // twice is harmless
});

/**
 * The static mesh three draws for an animated one: its vertices posed by three's own
 * getVertexPosition (morph targets and skin), its other attributes and transform alike.
 */
function posedCopy(object) {
  const geometry = object.geometry;
  const count = geometry.attributes.position.count;
  const positions = new Float32Array(3 * count);
  const v = new THREE.Vector3();
  for (let i = 0; i < count; i++) {
    object.getVertexPosition(i, v);
    positions.set([v.x, v.y, v.z], 3 * i);
  }
  const posed = new THREE.BufferGeometry();
  posed.setAttribute("position", new THREE.BufferAttribute(positions, 3));
  for (const name of ["normal", "uv"]) {
    if (geometry.attributes[name]) posed.setAttribute(name, geometry.attributes[name]);
  }
  posed.setIndex(geometry.index);
  const mesh = new THREE.Mesh(posed, object.material);
  mesh.matrixAutoUpdate = false;
  mesh.matrix.copy(object.matrixWorld);
  mesh.matrixWorld.copy(object.matrixWorld);
  return mesh;
}

/** Rays at an animated mesh through the adapter, and at its posed copy through three. */
function comparePosed(object, rng, n, what) {
  const reference = posedCopy(object);
  const box = new THREE.Box3().setFromObject(reference);
  const scale = box.getSize(new THREE.Vector3()).length();
  const raycaster = new THREE.Raycaster();
  let hits = 0;
  for (const [k, ray] of randomRays(reference, n, rng).rays.entries()) {
    raycaster.ray.copy(ray);
    raycaster.firstHitOnly = false;
    const theirs = oracle(raycaster, reference);
    for (const h of theirs) h.object = object;
    // The module poses in f32 (three in f64, then rounded to the f32 positions of the
    // copy): face normals agree to f32's rounding, not to the bit.
    assertSame(raycaster.intersectObject(object, false), theirs, scale, `${what}, ray ${k}`, theirs, 1e-5);
    raycaster.firstHitOnly = true;
    assertSame(raycaster.intersectObject(object, false), theirs.slice(0, 1), scale, `${what}, ray ${k}, firstHitOnly`, theirs, 1e-5);
    if (theirs.length > 0) hits++;
  }
  return hits;
}

/** Counts the refits of a tree's BVH (a refit to posed positions, or a pose in the module). */
function countRefits(tree) {
  const counter = { refits: 0 };
  for (const name of ["refit", "_pose"]) {
    const original = tree.bvh[name].bind(tree.bvh);
    tree.bvh[name] = (...args) => {
      counter.refits++;
      original(...args);
    };
  }
  return counter;
}

test("SkinnedMesh: picked in its current pose, frame by frame, as three's raycast of the posed mesh", () => {
  // Weights that sum to 1, and (the second time) weights that do not, where three's
  // inverse bind matrix's translation counts once rather than with the weights.
  for (const scale of [1, 0.8]) skinnedCylinder(scale);
});

function skinnedCylinder(scale) {
  // A cylinder along y from -2 to 2 whose upper half follows a child bone at y = 0, blended
  // over the middle; one morph target (relative) bulges it.
  const geometry = new THREE.CylinderGeometry(0.5, 0.5, 4, 24, 32);
  const position = geometry.attributes.position;
  const count = position.count;
  const index = new Uint16Array(4 * count);
  const weight = new Float32Array(4 * count);
  const bulge = new Float32Array(3 * count);
  for (let i = 0; i < count; i++) {
    const y = position.getY(i);
    const t = Math.min(1, Math.max(0, (y + 0.5) / 1.0));
    const upper = t * t * (3 - 2 * t);
    index.set([0, 1, 0, 0], 4 * i);
    weight.set([1 - upper, upper, 0, 0].map((w) => (i % 2 ? w * scale : w)), 4 * i);
    const r = 0.3 * Math.exp(-y * y);
    bulge.set([position.getX(i) * r, 0, position.getZ(i) * r], 3 * i);
  }
  geometry.setAttribute("skinIndex", new THREE.Uint16BufferAttribute(index, 4));
  geometry.setAttribute("skinWeight", new THREE.Float32BufferAttribute(weight, 4));
  geometry.morphAttributes.position = [new THREE.Float32BufferAttribute(bulge, 3)];
  geometry.morphTargetsRelative = true;
  geometry.computeBoundsTree();
  const counter = countRefits(geometry.boundsTree);
  const mesh = new THREE.SkinnedMesh(geometry, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide }));
  const root = new THREE.Bone();
  root.position.y = -2;
  const child = new THREE.Bone();
  child.position.y = 2;
  root.add(child);
  mesh.add(root);
  mesh.bind(new THREE.Skeleton([root, child]));
  mesh.updateMorphTargets();
  const rng = random(21);
  THREE.SkinnedMesh.prototype.raycast = acceleratedRaycast;
  try {
    for (let frame = 0; frame < 8; frame++) {
      child.rotation.z = 0.3 * frame;
      root.rotation.x = 0.1 * frame;
      mesh.morphTargetInfluences[0] = Math.sin(frame);
      mesh.position.set(rng() - 0.5, rng() - 0.5, rng() - 0.5);
      mesh.updateMatrixWorld(true);
      const hits = comparePosed(mesh, rng, 60, `weights scaled ${scale}, frame ${frame}`);
      assert.ok(hits > 20, `frame ${frame}: ${hits} hits`);
      assert.equal(counter.refits, frame + 1, "one refit per pose");
    }
    // Moving the mesh without posing it refits nothing (rays go to its local space), unless
    // the weights do not sum to 1: then three's shape depends on where the mesh is.
    mesh.position.x += 1;
    mesh.updateMatrixWorld(true);
    comparePosed(mesh, rng, 20, `weights scaled ${scale}, moved, same pose`);
    assert.equal(counter.refits, scale === 1 ? 8 : 9);
    // Weights summing to 1: posed in the module (the crate's rig); else in JavaScript.
    assert.equal(geometry.boundsTree.rigged, scale === 1 ? true : undefined);
  } finally {
    THREE.SkinnedMesh.prototype.raycast = threeSkinned;
    geometry.disposeBoundsTree();
  }
}

test("morph targets, absolute and relative: picked as three draws them", () => {
  for (const relative of [false, true]) {
    const geometry = new THREE.SphereGeometry(1, 24, 16);
    const position = geometry.attributes.position;
    // Target 0 stretches along y, target 1 flattens along x.
    const targets = [(x, y, z) => [x, 1.8 * y, z], (x, y, z) => [0.4 * x, y, z]].map((f) => {
      const out = new Float32Array(3 * position.count);
      for (let i = 0; i < position.count; i++) {
        const [x, y, z] = [position.getX(i), position.getY(i), position.getZ(i)];
        const t = f(x, y, z);
        out.set(relative ? [t[0] - x, t[1] - y, t[2] - z] : t, 3 * i);
      }
      return new THREE.Float32BufferAttribute(out, 3);
    });
    geometry.morphAttributes.position = targets;
    geometry.morphTargetsRelative = relative;
    geometry.computeBoundsTree();
    const mesh = new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({ side: THREE.FrontSide }));
    mesh.updateMorphTargets();
    const rng = random(relative ? 3 : 4);
    for (const influences of [[0, 0], [1, 0], [0.5, 0.8], [0, 1]]) {
      mesh.morphTargetInfluences.splice(0, 2, ...influences);
      mesh.updateMatrixWorld(true);
      const hits = comparePosed(mesh, rng, 60, `relative ${relative}, influences ${influences}`);
      assert.ok(hits > 20);
    }
    geometry.disposeBoundsTree();
  }
});

test("BVH.refit: moved vertices answer exactly; bad positions throw and leave the tree", async () => {
  const { BVH } = await import("../meshray.js");
  const positions = new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]);
  const bvh = new BVH(positions, [0, 1, 2]);
  assert.equal(bvh.closestHit([0.2, 0.2, 1], [0, 0, -1]).distance, 1);
  bvh.refit(new Float32Array([0, 0, -1, 1, 0, -1, 0, 1, -1]));
  assert.equal(bvh.closestHit([0.2, 0.2, 1], [0, 0, -1]).distance, 2);
  assert.throws(() => bvh.refit(new Float32Array(6)), /vertex|3 vertices|positions/);
  assert.throws(() => bvh.refit(new Float32Array([0, 0, NaN, 1, 0, 0, 0, 1, 0])), /NaN|infinite/);
  assert.equal(bvh.closestHit([0.2, 0.2, 1], [0, 0, -1]).distance, 2, "unchanged by the refused refits");
  bvh.free();
  assert.throws(() => bvh.refit(positions), /freed/);
});

test("bad input throws clear errors", () => {
  const empty = new THREE.BufferGeometry();
  assert.throws(() => empty.computeBoundsTree(), /no position attribute/);
  empty.setAttribute("position", new THREE.Float32BufferAttribute([0, 0, 0, 1, 0, 0], 3));
  assert.throws(() => empty.computeBoundsTree(), /no triangles/);
  const nan = new THREE.BufferGeometry();
  nan.setAttribute("position", new THREE.Float32BufferAttribute([0, 0, 0, 1, NaN, 0, 0, 1, 0], 3));
  assert.throws(() => nan.computeBoundsTree(), /meshray/);
  const geometry = new THREE.SphereGeometry(1, 8, 6);
  assert.throws(() => geometry.computeBoundsTree("high"), /options must be an object/);
  assert.throws(() => geometry.computeBoundsTree({ quality: "best" }), /quality/);
  assert.throws(() => computeBoundsTree.call({}, {}), /BufferGeometry/);
  assert.throws(() => computeBatchedBoundsTree.call(new THREE.Mesh()), /BatchedMesh/);
  // Before init(): a fresh process.
  const script = `
    import { BufferGeometry, Float32BufferAttribute } from "three";
    import { computeBoundsTree } from "./three.js";
    const g = new BufferGeometry();
    g.setAttribute("position", new Float32BufferAttribute([0, 0, 0, 1, 0, 0, 0, 1, 0], 3));
    try { computeBoundsTree.call(g); console.log("no error"); } catch (e) { console.log(e.message); }`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: join(here, ".."), encoding: "utf8" });
  assert.match(run.stdout, /computeBoundsTree needs the WebAssembly module: call `await init\(\)`/, run.stderr);
});

function loadObj(path) {
  const group = new OBJLoader().parse(readFileSync(path, "utf8"));
  const geometry = group.children[0].geometry;
  geometry.deleteAttribute("uv"); // OBJLoader's are zeros where the file has none
  return geometry;
}

test("shared meshes: bunny and suzanne, as three's raycast", { skip: skipWithoutShared() }, () => {
  const dir = sharedMeshes();
  assert.ok(dir, "the shared meshes are missing: under CI=true they are required (set MESHRAY_MESHES)");
  const rng = random(9);
  for (const [file, rays] of [["suzanne/suzanne.obj", 300], ["stanford-bunny/stanford-bunny.obj", 120]]) {
    const soup = loadObj(join(dir, file));
    // OBJLoader's triangle soup, and an indexed copy.
    for (const geometry of [soup, mergeVertices(soup.clone().deleteAttribute("normal"))]) {
      geometry.computeBoundsTree();
      const mesh = transform(new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide })), rng);
      mesh.scale.multiplyScalar(10);
      mesh.updateMatrixWorld(true);
      const what = `${file}, ${geometry.index ? "indexed" : "soup"}`;
      assert.ok(compare(mesh, randomRays(mesh, rays, rng), what, { limits: true, rng }) > rays / 5, what);
      geometry.disposeBoundsTree();
    }
  }
});
