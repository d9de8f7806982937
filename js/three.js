// meshray for three.js: BVH-accelerated Mesh.raycast, in the shape three-mesh-bvh made
// familiar.
//
//   import * as THREE from "three";
//   import { init } from "meshray";
//   import { computeBoundsTree, disposeBoundsTree, acceleratedRaycast } from "meshray/three";
//   await init();
//   THREE.BufferGeometry.prototype.computeBoundsTree = computeBoundsTree;
//   THREE.BufferGeometry.prototype.disposeBoundsTree = disposeBoundsTree;
//   THREE.Mesh.prototype.raycast = acceleratedRaycast;
//   geometry.computeBoundsTree();
//   raycaster.firstHitOnly = true;          // optional: only the nearest hit
//   raycaster.intersectObject(mesh);        // three's own intersections, from the BVH
//
// BatchedMesh too: computeBatchedBoundsTree / disposeBatchedBoundsTree as
// BatchedMesh.prototype.computeBoundsTree / disposeBoundsTree, acceleratedRaycast as its
// raycast. InstancedMesh needs nothing more: three's raycasts each instance as a Mesh.
//
// The tree is built over the geometry's positions and index in local space; a ray is taken
// into local space with the inverse of matrixWorld, its direction scaled so that the local
// ray parameter t is the world distance (near/far and distances need no conversion).
// Answers are three's Mesh.raycast answers: side, groups, drawRange, near/far, uv, uv1,
// normal, barycoord, face. Not accelerated (three's own raycast runs): meshes without a
// boundsTree. The tree is not updated when the geometry changes: compute it again.
//
// Animated meshes go through the tree too: a SkinnedMesh (set
// SkinnedMesh.prototype.raycast = acceleratedRaycast as well: it has a raycast of its own)
// and morph targets are raycast where three draws them. Each raycast compares the pose
// (bone matrices, bind matrices, morph influences) with the one the tree was last refit to;
// when it changed, the vertices are posed by three's rules (Mesh.getVertexPosition,
// SkinnedMesh.applyBoneTransform) and the tree refit (BVH.refit), so an unchanged pose costs
// a comparison of a few numbers per bone.

import {
  BackSide,
  BatchedMesh,
  FrontSide,
  Matrix4,
  Mesh,
  SkinnedMesh,
  Vector2,
  Vector3,
} from "three";
import { BVH, build, _hitView } from "./meshray.js";

// three's own raycasts, kept before anyone replaces them.
const meshRaycast = Mesh.prototype.raycast;
const skinnedRaycast = SkinnedMesh.prototype.raycast;
const batchedRaycast = BatchedMesh.prototype.raycast;

// meshray's query flags (see meshray.js / src/lib.rs): 1 watertight, 2 back faces culled
// ("front"), 4 front faces culled ("back").
const WATERTIGHT = 1;
const CULL_BACK = 2;
const CULL_FRONT = 4;

/**
 * The meshray tree of a geometry (or of one geometry of a BatchedMesh): `bvh` holds the
 * triangles `first .. first + count - 1` of the geometry's numbering (faceIndex).
 */
export class MeshrayBoundsTree {
  constructor(bvh, first, count, watertight) {
    /** The meshray BVH (local space). */
    this.bvh = bvh;
    /** The geometry's number of the tree's triangle 0 (non-zero in a BatchedMesh). */
    this.first = first;
    /** The tree's triangle count. */
    this.count = count;
    /** Whether queries use the watertight triangle test (as three's Ray.intersectTriangle). */
    this.watertight = watertight;
    /**
     * For a skinned or morphed mesh, the pose the tree was last refit to: `key` (its
     * numbers), `positions` (the posed vertices, a Float32Array) and `view` (them as an
     * attribute for the face normals); null until the first raycast of an animated mesh.
     */
    this.posed = null;
    /** Whether some skin weights do not sum to 1 (found at the first raycast of a skin). */
    this.unnormalized = undefined;
    /** Whether the tree has the crate's rig (posed in the module); undefined until asked. */
    this.rigged = undefined;
  }

  /** Frees the tree's wasm memory; the tree is unusable afterwards. */
  dispose() {
    this.bvh.free();
  }
}

function checkInit(what) {
  if (build() === null) {
    throw new Error(`meshray/three: ${what} needs the WebAssembly module: call \`await init()\` from "meshray" first`);
  }
}

function checkOptions(options) {
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw new Error("meshray/three: options must be an object like { quality, watertight }");
  }
  return { quality: options?.quality ?? "default", watertight: options?.watertight ?? true };
}

// The local positions (x y z per vertex) of vertices `start .. start + count - 1` as a
// Float32Array: the attribute's own array when it is plain float32 xyz, else a copy read
// with getX/getY/getZ (interleaved, normalized or other array types).
function positionsOf(position, start, count) {
  if (!position.isInterleavedBufferAttribute && position.itemSize === 3 && !position.normalized &&
      position.array instanceof Float32Array) {
    return position.array.subarray(3 * start, 3 * (start + count));
  }
  const out = new Float32Array(3 * count);
  for (let i = 0; i < count; i++) {
    out[3 * i] = position.getX(start + i);
    out[3 * i + 1] = position.getY(start + i);
    out[3 * i + 2] = position.getZ(start + i);
  }
  return out;
}

// Index entries `start .. start + count - 1` (Uint16Array or Uint32Array, shared when possible).
function indicesOf(index, start, count) {
  const a = index.array;
  if (!index.isInterleavedBufferAttribute && (a instanceof Uint32Array || a instanceof Uint16Array)) {
    return a.subarray(start, start + count);
  }
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = index.getX(start + i);
  return out;
}

// A tree over the geometry's index entries (or vertices, without an index) `start .. end - 1`,
// whole triangles only.
function buildTree(geometry, start, end, options) {
  const position = geometry.attributes.position;
  if (position === undefined) throw new Error("meshray/three: the geometry has no position attribute");
  const index = geometry.index;
  const total = index ? index.count : position.count;
  end = Math.min(end, total);
  const count = Math.floor(Math.max(0, end - start) / 3);
  if (start % 3 !== 0) throw new Error(`meshray/three: a range must start at a multiple of 3, not ${start}`);
  if (count === 0) throw new Error("meshray/three: the geometry has no triangles");
  let bvh;
  if (index) {
    bvh = new BVH(positionsOf(position, 0, position.count), indicesOf(index, start, 3 * count), options);
  } else {
    bvh = new BVH(positionsOf(position, start, 3 * count), null, options);
  }
  return new MeshrayBoundsTree(bvh, start / 3, count, options.watertight);
}

/**
 * BufferGeometry extension: builds `this.boundsTree`, a meshray BVH of the geometry
 * (freeing the previous one). `options.quality`: "fast", "default" or "high";
 * `options.watertight` (default true): the watertight triangle test, as three's own.
 * Throws when `init()` has not run or the geometry has no triangles.
 */
export function computeBoundsTree(options) {
  checkInit("computeBoundsTree");
  const { quality, watertight } = checkOptions(options);
  if (!this?.isBufferGeometry) throw new Error("meshray/three: computeBoundsTree must be called on a BufferGeometry");
  const tree = buildTree(this, 0, Infinity, { quality, watertight });
  if (this.boundsTree instanceof MeshrayBoundsTree) this.boundsTree.dispose();
  this.boundsTree = tree;
  return tree;
}

/** BufferGeometry extension: frees `this.boundsTree` and sets it to null. */
export function disposeBoundsTree() {
  if (this.boundsTree instanceof MeshrayBoundsTree) this.boundsTree.dispose();
  this.boundsTree = null;
}

/**
 * BatchedMesh extension: builds the tree of geometry `index` of the batch, or of every
 * geometry when `index` is -1, into `this.boundsTrees` (an array by geometry id). Returns
 * the tree, or the array.
 */
export function computeBatchedBoundsTree(index = -1, options) {
  checkInit("computeBatchedBoundsTree");
  const opts = checkOptions(options);
  if (!this?.isBatchedMesh) throw new Error("meshray/three: computeBatchedBoundsTree must be called on a BatchedMesh");
  const infos = this._geometryInfo;
  if (!this.boundsTrees) this.boundsTrees = [];
  while (this.boundsTrees.length < infos.length) this.boundsTrees.push(null);
  const one = (id) => {
    const info = infos[id];
    if (this.boundsTrees[id]) this.boundsTrees[id].dispose();
    this.boundsTrees[id] = info.active === false ? null : buildTree(this.geometry, info.start, info.start + info.count, opts);
    return this.boundsTrees[id];
  };
  if (index < 0) {
    for (let id = 0; id < infos.length; id++) one(id);
    return this.boundsTrees;
  }
  if (!Number.isInteger(index) || index >= infos.length) {
    throw new Error(`meshray/three: no geometry ${index} in this BatchedMesh`);
  }
  return one(index);
}

/** BatchedMesh extension: frees the tree of geometry `index`, or all of them (-1). */
export function disposeBatchedBoundsTree(index = -1) {
  const trees = this.boundsTrees;
  if (!trees) return;
  if (index < 0) {
    for (const tree of trees) tree?.dispose();
    this.boundsTrees = null;
  } else if (trees[index]) {
    trees[index].dispose();
    trees[index] = null;
  }
}

// Scratch, so the firstHitOnly path allocates only the intersection it returns.
const _inverse = new Matrix4();
const _batchMatrix = new Matrix4();
const _batchIntersects = [];
const _a = new Vector3();
const _b = new Vector3();
const _c = new Vector3();
const _n = new Vector3();

// The query: local ray (origin o, direction d scaled so t = world distance), world ray.
const q = { ox: 0, oy: 0, oz: 0, dx: 0, dy: 0, dz: 0, wox: 0, woy: 0, woz: 0, wdx: 0, wdy: 0, wdz: 0 };

// The inverse of the last matrix asked for, kept: picking the same mesh again and again
// skips the inversion.
const _lastMatrix = new Float64Array(16).fill(NaN);
function inverseOf(matrix) {
  const m = matrix.elements;
  for (let i = 0; i < 16; i++) {
    if (m[i] !== _lastMatrix[i]) {
      _lastMatrix.set(m);
      _inverse.copy(matrix).invert();
      break;
    }
  }
  return _inverse.elements;
}

// The wasm hit buffer's view; taken again once the memory grew (the old view is then
// detached: length 0).
let _hit = null;
function hitView() {
  if (_hit === null || _hit.length === 0) _hit = _hitView();
  return _hit;
}

// Fills `q` from the raycaster's ray and the inverse of `matrixWorld`. The world direction
// is made unit length, so the local t of a hit is its world distance (three's `distance`).
function localRay(raycaster, matrixWorld) {
  const { origin, direction } = raycaster.ray;
  const len = Math.sqrt(direction.x * direction.x + direction.y * direction.y + direction.z * direction.z);
  q.wox = origin.x; q.woy = origin.y; q.woz = origin.z;
  q.wdx = direction.x / len; q.wdy = direction.y / len; q.wdz = direction.z / len;
  const e = inverseOf(matrixWorld);
  q.ox = e[0] * q.wox + e[4] * q.woy + e[8] * q.woz + e[12];
  q.oy = e[1] * q.wox + e[5] * q.woy + e[9] * q.woz + e[13];
  q.oz = e[2] * q.wox + e[6] * q.woy + e[10] * q.woz + e[14];
  q.dx = e[0] * q.wdx + e[4] * q.wdy + e[8] * q.wdz;
  q.dy = e[1] * q.wdx + e[5] * q.wdy + e[9] * q.wdz;
  q.dz = e[2] * q.wdx + e[6] * q.wdy + e[10] * q.wdz;
}

// meshray's culling for a three.js side: three's FrontSide keeps the faces whose corners
// turn counter-clockwise seen from the ray origin, meshray's "front" too.
function sideFlags(side) {
  return side === FrontSide ? CULL_BACK : side === BackSide ? CULL_FRONT : 0;
}

// The same as meshray.js's `cull` option.
function cullName(side) {
  return side === FrontSide ? "back" : side === BackSide ? "front" : "none";
}

// Whether the ray meets triangle (a, b, c)'s front (counter-clockwise) side.
function isFront(position, a, b, c) {
  const n = faceNormal(position, a, b, c, _n);
  return n.x * q.dx + n.y * q.dy + n.z * q.dz < 0;
}

function sideAccepts(side, front) {
  return side === FrontSide ? front : side === BackSide ? !front : true;
}

// Whether an attribute's values are its array's, itemSize apart (read without getX).
function plain(attr) {
  return !attr.isInterleavedBufferAttribute && !attr.normalized;
}

// Interpolates attribute `attr` (itemSize 2 or 3) at barycentrics (w, u, v) of a, b, c.
function interpolate(attr, a, b, c, w, u, v, target) {
  if (plain(attr)) {
    const s = attr.itemSize, x = attr.array;
    a *= s; b *= s; c *= s;
    target.x = w * x[a] + u * x[b] + v * x[c];
    target.y = w * x[a + 1] + u * x[b + 1] + v * x[c + 1];
    if (target.isVector3) target.z = w * x[a + 2] + u * x[b + 2] + v * x[c + 2];
    return target;
  }
  target.x = w * attr.getX(a) + u * attr.getX(b) + v * attr.getX(c);
  target.y = w * attr.getY(a) + u * attr.getY(b) + v * attr.getY(c);
  if (target.isVector3) target.z = w * attr.getZ(a) + u * attr.getZ(b) + v * attr.getZ(c);
  return target;
}

// The corners of triangle (a, b, c) into _a, _b, _c (local space).
function corners(position, a, b, c) {
  if (plain(position)) {
    const s = position.itemSize, x = position.array;
    _a.set(x[a * s], x[a * s + 1], x[a * s + 2]);
    _b.set(x[b * s], x[b * s + 1], x[b * s + 2]);
    _c.set(x[c * s], x[c * s + 1], x[c * s + 2]);
  } else {
    _a.fromBufferAttribute(position, a);
    _b.fromBufferAttribute(position, b);
    _c.fromBufferAttribute(position, c);
  }
}

// The unnormalised normal of triangle (a, b, c): (b - a) × (c - a), into `target`.
function faceNormal(position, a, b, c, target) {
  corners(position, a, b, c);
  _b.sub(_a);
  _c.sub(_a);
  return target.crossVectors(_b, _c);
}

// three's intersection object for the hit of triangle `faceIndex` (the geometry's
// numbering) at world distance t, barycentrics u, v.
function intersection(object, geometry, position, faceIndex, t, u, v, materialIndex) {
  const index = geometry.index;
  const j = 3 * faceIndex;
  let a = j, b = j + 1, c = j + 2;
  if (index) [a, b, c] = [index.getX(j), index.getX(j + 1), index.getX(j + 2)];
  const w = 1 - u - v;
  const hit = {
    distance: t,
    point: new Vector3(q.wox + t * q.wdx, q.woy + t * q.wdy, q.woz + t * q.wdz),
    object,
  };
  const { uv, uv1, normal } = geometry.attributes;
  if (uv) hit.uv = interpolate(uv, a, b, c, w, u, v, new Vector2());
  if (uv1) hit.uv1 = interpolate(uv1, a, b, c, w, u, v, new Vector2());
  if (normal) {
    const n = (hit.normal = interpolate(normal, a, b, c, w, u, v, new Vector3()));
    // three turns the interpolated normal against the (local) ray.
    if (n.x * q.dx + n.y * q.dy + n.z * q.dz > 0) n.multiplyScalar(-1);
  }
  // The face's unit normal in local space, not turned.
  const fn = faceNormal(position, a, b, c, new Vector3());
  const len = fn.length();
  if (len > 0) fn.divideScalar(len);
  hit.face = { a, b, c, normal: fn, materialIndex };
  hit.faceIndex = faceIndex;
  hit.barycoord = new Vector3(w, u, v);
  return hit;
}

// Which triangles (of the geometry's numbering) three tests, with which material: null
// when every triangle of the tree is tested with one material, else a filter.
// Returns false when the arrangement is one meshray cannot mirror (three's own raycast runs).
function rangesOf(geometry, material, tree) {
  const total = geometry.index ? geometry.index.count : geometry.attributes.position.count;
  const dr = geometry.drawRange;
  if (!Array.isArray(material)) {
    const start = Math.max(0, dr.start);
    const end = Math.min(total, dr.start + dr.count);
    if (start <= 3 * tree.first && end >= 3 * (tree.first + tree.count)) return null;
    if (start % 3 !== 0) return false;
    return [{ start, end, side: material.side, materialIndex: 0 }];
  }
  const ranges = [];
  for (const group of geometry.groups) {
    const start = Math.max(group.start, dr.start);
    const end = Math.min(total, group.start + group.count, dr.start + dr.count);
    const m = material[group.materialIndex];
    if (end <= start || m === undefined) continue;
    if (start % 3 !== 0) return false;
    ranges.push({ start, end, side: m.side, materialIndex: group.materialIndex });
  }
  return ranges;
}

// Raycasts `object` (a Mesh, or an instance of a BatchedMesh: `matrixWorld` then differs
// from object.matrixWorld) against `tree`. Returns false when three's raycast must run.
function raycastTree(object, geometry, material, matrixWorld, tree, raycaster, intersects) {
  const ranges = rangesOf(geometry, material, tree);
  if (ranges === false) return false;
  if (ranges !== null && ranges.length === 0) return true;
  localRay(raycaster, matrixWorld);
  // As three: a NaN or negative near is 0, a NaN far is no limit.
  const near = raycaster.near > 0 ? raycaster.near : 0;
  const far = Number.isNaN(raycaster.far) ? Infinity : raycaster.far;
  if (far < near) return true;
  const bvh = tree.bvh;
  // The posed vertices, for an animated mesh: its faces' normals and sides are the posed ones.
  const position = tree.posed?.view ?? geometry.attributes.position;

  if (ranges === null) {
    if (raycaster.firstHitOnly === true) {
      // The fast path: one wasm call, the hit read from the shared hit buffer.
      const flags = (tree.watertight ? WATERTIGHT : 0) | sideFlags(material.side);
      const k = bvh._closestHitRaw(q.ox, q.oy, q.oz, q.dx, q.dy, q.dz, near, far, flags);
      if (k >= 0) {
        const h = hitView();
        intersects.push(intersection(object, geometry, position, tree.first + k, h[0], h[1], h[2], 0));
      }
      return true;
    }
    const cull = cullName(material.side);
    const all = bvh.allHitsBatch([q.ox, q.oy, q.oz, q.dx, q.dy, q.dz], { near, far, cull, watertight: tree.watertight });
    for (let i = 0; i < all.distance.length; i++) {
      intersects.push(intersection(object, geometry, position, tree.first + all.triangle[i], all.distance[i], all.u[i], all.v[i], 0));
    }
    return true;
  }

  // Groups and/or a partial drawRange: every hit, kept per range that tests it (three tests
  // a triangle once per group that holds it) with that range's material side.
  // One side in every range: meshray culls; else both sides, and the side test below.
  const cull = ranges.every((r) => cullName(r.side) === cullName(ranges[0].side)) ? cullName(ranges[0].side) : "none";
  const all = bvh.allHitsBatch([q.ox, q.oy, q.oz, q.dx, q.dy, q.dz], { near, far, cull, watertight: tree.watertight });
  const index = geometry.index;
  let best = null;
  for (let i = 0; i < all.distance.length; i++) {
    const face = tree.first + all.triangle[i];
    const j = 3 * face;
    let front;
    for (const r of ranges) {
      if (j < r.start || j >= r.end) continue;
      if ((r.side === FrontSide || r.side === BackSide) && cull === "none") {
        front ??= index
          ? isFront(position, index.getX(j), index.getX(j + 1), index.getX(j + 2))
          : isFront(position, j, j + 1, j + 2);
        if (!sideAccepts(r.side, front)) continue;
      }
      const hit = intersection(object, geometry, position, face, all.distance[i], all.u[i], all.v[i], r.materialIndex);
      if (raycaster.firstHitOnly === true) {
        best = hit;
        break;
      }
      intersects.push(hit);
    }
    if (best) break;
  }
  if (best) intersects.push(best);
  return true;
}

/**
 * Mesh (and SkinnedMesh and BatchedMesh) raycast through the meshray tree in
 * `geometry.boundsTree` (`BatchedMesh.boundsTrees`), else three's own. With
 * `raycaster.firstHitOnly === true` only the nearest hit is reported (per instance of an
 * InstancedMesh, as three-mesh-bvh). A skinned or morphed mesh is raycast in its current
 * pose: the tree is refit when the pose changed since its last raycast.
 */
export function acceleratedRaycast(raycaster, intersects) {
  if (this.isBatchedMesh) return batchedMeshRaycast.call(this, raycaster, intersects);
  const geometry = this.geometry;
  const tree = geometry?.boundsTree;
  const material = this.material;
  const animated = this.isSkinnedMesh || geometry?.morphAttributes?.position !== undefined;
  if (
    !(tree instanceof MeshrayBoundsTree) ||
    material === undefined ||
    (animated && !poseTree(this, geometry, tree)) ||
    !raycastTree(this, geometry, material, this.matrixWorld, tree, raycaster, intersects)
  ) {
    (this.isSkinnedMesh ? skinnedRaycast : meshRaycast).call(this, raycaster, intersects);
  }
}

const _bone = new Matrix4();

// Whether some vertex's skin weights do not sum to 1 (then three's inverse bind matrix's
// translation does not cancel out of its formula: see posePositions).
function unnormalized(geometry) {
  const w = geometry.attributes.skinWeight;
  for (let i = 0; i < w.count; i++) {
    if (Math.abs(w.getX(i) + w.getY(i) + w.getZ(i) + w.getW(i) - 1) > 1e-6) return true;
  }
  return false;
}

// The numbers a pose is made of, in the mesh's own space: per bone the matrix that takes a
// vertex to where three draws it (bindMatrixInverse × bone.matrixWorld × boneInverse ×
// bindMatrix), then, for skins whose weights do not sum to 1, the inverse bind matrix's
// translation; then the morph influences. A mesh that moves without changing its pose keeps
// them (up to rounding). Returns null when the mesh cannot be posed here.
function poseKey(object, geometry, tree) {
  const influences = geometry.morphAttributes?.position !== undefined ? (object.morphTargetInfluences ?? []) : [];
  let bones = 0;
  let shift = 0;
  if (object.isSkinnedMesh) {
    const skeleton = object.skeleton;
    const { skinIndex, skinWeight } = geometry.attributes;
    if (!skeleton || !skinIndex || !skinWeight) return null;
    bones = skeleton.bones.length;
    tree.unnormalized ??= unnormalized(geometry);
    shift = tree.unnormalized ? 3 : 0;
  }
  const key = new Float64Array(16 * bones + shift + influences.length);
  let at = 0;
  if (object.isSkinnedMesh) {
    const { bones: list, boneInverses } = object.skeleton;
    for (let b = 0; b < bones; b++) {
      _bone.multiplyMatrices(object.bindMatrixInverse, list[b].matrixWorld);
      if (boneInverses[b]) _bone.multiply(boneInverses[b]);
      _bone.multiply(object.bindMatrix);
      key.set(_bone.elements, at);
      at += 16;
    }
    if (shift) {
      const e = object.bindMatrixInverse.elements;
      key.set([e[12], e[13], e[14]], at);
      at += 3;
    }
  }
  for (let k = 0; k < influences.length; k++) key[at + k] = influences[k];
  return key;
}

// Whether two poses' numbers agree to far below f32's resolution (a mesh moved, not posed).
function samePose(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!(Math.abs(a[i] - b[i]) <= 1e-12 * (1 + Math.abs(a[i])))) return false;
  }
  return true;
}

// Refits `tree` to `object`'s current pose when it changed; false when the mesh cannot be
// posed through the tree (a tree of part of the geometry, a skin without a skeleton).
function poseTree(object, geometry, tree) {
  if (tree.first !== 0) return false;
  const position = geometry.attributes.position;
  const vertices = geometry.index ? position.count : 3 * tree.count;
  const last = tree.posed;
  const key = poseKey(object, geometry, tree);
  if (key === null) return false;
  if (last !== null && samePose(last.key, key)) return true;
  // In the module, when three's formula is the crate's (weights that sum to 1, plain
  // attributes): posed there with SIMD and refit in the same call.
  if (tree.rigged !== false && !tree.unnormalized && rigTree(object, geometry, tree, vertices)) {
    const bones = object.isSkinnedMesh ? object.skeleton.bones.length : 0;
    tree.bvh._pose(Float32Array.from(key.subarray(0, 16 * bones)), Float32Array.from(key.subarray(16 * bones)));
    const bvh = tree.bvh;
    // The module's positions, looked up on each read (a pose swaps them, memory may grow).
    tree.posed = { key, positions: null, view: floatView(() => bvh._positions(vertices)) };
    return true;
  }
  const reuse = last?.positions?.length === 3 * vertices;
  const positions = reuse ? last.positions : new Float32Array(3 * vertices);
  posePositions(object, geometry, key, tree.unnormalized === true, vertices, positions);
  tree.bvh.refit(positions);
  tree.posed = { key, positions, view: reuse ? last.view : floatView(() => positions) };
  return true;
}

// Gives the tree the crate's rig of the geometry (once): joints and weights, morph targets
// as deltas. False (and remembered) when an attribute is not plain (interleaved,
// normalized) or the rig is refused; three's rules in JavaScript then pose it.
function rigTree(object, geometry, tree, vertices) {
  if (tree.rigged === true) return true;
  const direct = (a, size) => a && !a.isInterleavedBufferAttribute && !a.normalized && a.itemSize === size;
  const { position, skinIndex, skinWeight } = geometry.attributes;
  const morphs = geometry.morphAttributes?.position ?? [];
  const skinned = object.isSkinnedMesh;
  const plain = direct(position, 3) && morphs.every((m) => direct(m, 3)) &&
    (!skinned || (direct(skinIndex, 4) && direct(skinWeight, 4)));
  tree.rigged = false;
  if (!plain) return false;
  const base = position.array.subarray(0, 3 * vertices);
  const deltas = morphs.map((m) => {
    const d = Float32Array.from(m.array.subarray(0, 3 * vertices));
    if (!geometry.morphTargetsRelative) for (let i = 0; i < d.length; i++) d[i] -= base[i];
    return d;
  });
  try {
    tree.bvh._rig(
      skinned ? Float32Array.from(skinIndex.array.subarray(0, 4 * vertices)) : null,
      skinned ? Float32Array.from(skinWeight.array.subarray(0, 4 * vertices)) : null,
      deltas,
    );
  } catch {
    return false;
  }
  tree.rigged = true;
  return true;
}

// The posed positions of vertices 0 .. count - 1 into `out`, by three's rules: morph
// targets (relative or absolute) on the base position, then the skin, Σ w·K·v with the
// weights as given and K each bone's matrix in the key. three applies the inverse bind
// matrix after the sum, so its translation t counts once, not Σw times: with `shift`, the
// key's t is added (1 − Σw) times.
function posePositions(object, geometry, key, shift, count, out) {
  const position = geometry.attributes.position;
  const morphs = geometry.morphAttributes?.position;
  const relative = geometry.morphTargetsRelative;
  const skinned = object.isSkinnedMesh;
  const bones = skinned ? object.skeleton.bones.length : 0;
  const at = 16 * bones + (shift ? 3 : 0);
  const influences = key.subarray(skinned ? at : 0);
  const [tx, ty, tz] = shift ? key.subarray(16 * bones, at) : [0, 0, 0];
  const { skinIndex, skinWeight } = geometry.attributes;
  // Plain attributes (not interleaved, not normalized) are read straight from their arrays:
  // a posing reads every vertex every frame.
  const direct = (a, size) => a && !a.isInterleavedBufferAttribute && !a.normalized && a.itemSize === size;
  const p = direct(position, 3) ? position.array : null;
  const si = skinned && direct(skinIndex, 4) ? skinIndex.array : null;
  const sw = skinned && direct(skinWeight, 4) ? skinWeight.array : null;
  const get = [(a, i) => a.getX(i), (a, i) => a.getY(i), (a, i) => a.getZ(i), (a, i) => a.getW(i)];
  const weightOf = sw ? (i, c) => sw[4 * i + c] : (i, c) => get[c](skinWeight, i);
  const jointOf = si ? (i, c) => si[4 * i + c] : (i, c) => get[c](skinIndex, i);
  for (let i = 0; i < count; i++) {
    let x, y, z;
    if (p) {
      x = p[3 * i];
      y = p[3 * i + 1];
      z = p[3 * i + 2];
    } else {
      x = position.getX(i);
      y = position.getY(i);
      z = position.getZ(i);
    }
    if (morphs !== undefined) {
      let mx = 0, my = 0, mz = 0;
      for (let k = 0; k < influences.length; k++) {
        const f = influences[k];
        if (f === 0) continue;
        const m = morphs[k];
        let dx = m.getX(i), dy = m.getY(i), dz = m.getZ(i);
        if (!relative) {
          dx -= x;
          dy -= y;
          dz -= z;
        }
        mx += f * dx;
        my += f * dy;
        mz += f * dz;
      }
      x += mx;
      y += my;
      z += mz;
    }
    if (skinned) {
      let sx = 0, sy = 0, sz = 0, sum = 0;
      for (let c = 0; c < 4; c++) {
        const w = weightOf(i, c);
        if (w === 0) continue;
        sum += w;
        const e = 16 * jointOf(i, c);
        sx += w * (key[e] * x + key[e + 4] * y + key[e + 8] * z + key[e + 12]);
        sy += w * (key[e + 1] * x + key[e + 5] * y + key[e + 9] * z + key[e + 13]);
        sz += w * (key[e + 2] * x + key[e + 6] * y + key[e + 10] * z + key[e + 14]);
      }
      x = sx + (1 - sum) * tx;
      y = sy + (1 - sum) * ty;
      z = sz + (1 - sum) * tz;
    }
    out[3 * i] = x;
    out[3 * i + 1] = y;
    out[3 * i + 2] = z;
  }
}

// Posed positions (`positions()`: x y z per vertex) as the face-normal and side code reads
// an attribute (a plain one).
function floatView(positions) {
  return {
    itemSize: 3,
    get array() {
      return positions();
    },
    getX: (i) => positions()[3 * i],
    getY: (i) => positions()[3 * i + 1],
    getZ: (i) => positions()[3 * i + 2],
  };
}

// BatchedMesh: each visible instance against its geometry's tree; three's own raycast when
// a tree is missing. Intersections carry `batchId` (the instance), as three's.
function batchedMeshRaycast(raycaster, intersects) {
  const trees = this.boundsTrees;
  const infos = this._instanceInfo;
  const material = this.material;
  if (!trees || material === undefined || Array.isArray(material) ||
      infos.some((info) => info.active && info.visible && !trees[info.geometryIndex])) {
    return batchedRaycast.call(this, raycaster, intersects);
  }
  const firstOnly = raycaster.firstHitOnly === true;
  let best = null;
  // Each instance is raycast alone: no groups, the geometry's drawRange ignored (three's
  // BatchedMesh sets the instance's range itself).
  const view = { index: this.geometry.index, attributes: this.geometry.attributes, groups: [], drawRange: { start: 0, count: Infinity } };
  for (let i = 0; i < infos.length; i++) {
    const info = infos[i];
    if (!info.active || !info.visible) continue;
    this.getMatrixAt(i, _batchMatrix).premultiply(this.matrixWorld);
    raycastTree(this, view, material, _batchMatrix, trees[info.geometryIndex], raycaster, _batchIntersects);
    for (const hit of _batchIntersects) {
      hit.batchId = i;
      if (!firstOnly) intersects.push(hit);
      else if (best === null || hit.distance < best.distance) best = hit;
    }
    _batchIntersects.length = 0;
  }
  if (best) intersects.push(best);
}

// Sweeps: a sphere moved through meshes, as a character controller moves its body.

const sweepInverse = new Matrix4();
const sweepScale = new Vector3();

/**
 * Where a sphere of `radius` whose centre moves from `origin` along `direction` (world
 * space, three Vector3s; `near <= t <= far` in `options`, t counting in direction's length)
 * first touches `mesh` (whose geometry has a `boundsTree`), exactly: `{ distance, point,
 * normal, faceIndex, object }` (`point` the contact on the mesh, `normal` the unit normal
 * from the mesh towards the sphere, world space), or null. The mesh's `matrixWorld` must
 * scale alike along every axis (rotation, translation, uniform scale, mirror): a sphere
 * stays a sphere in its local space; another scale throws (a meshray `Scene` answers those
 * exactly). `options.cull` as for rays.
 */
export function sweepSphere(mesh, origin, direction, radius, options) {
  const tree = mesh.geometry?.boundsTree;
  if (!(tree instanceof MeshrayBoundsTree)) {
    throw new Error("meshray/three: sweepSphere needs a mesh whose geometry has a boundsTree (computeBoundsTree)");
  }
  const m = mesh.matrixWorld;
  const e = m.elements;
  sweepScale.set(Math.hypot(e[0], e[1], e[2]), Math.hypot(e[4], e[5], e[6]), Math.hypot(e[8], e[9], e[10]));
  const scale = sweepScale.x;
  const cos = (a, b) => Math.abs(e[a] * e[b] + e[a + 1] * e[b + 1] + e[a + 2] * e[b + 2]) / (scale * scale);
  const uniform = scale > 0 && Math.abs(sweepScale.y - scale) <= 1e-6 * scale &&
    Math.abs(sweepScale.z - scale) <= 1e-6 * scale && cos(0, 4) <= 1e-6 && cos(0, 8) <= 1e-6 && cos(4, 8) <= 1e-6;
  if (!uniform) {
    throw new Error("meshray/three: sweepSphere needs a mesh whose matrixWorld scales alike along every axis (a sphere would not stay a sphere in its space)");
  }
  sweepInverse.copy(m).invert();
  const o = origin.clone().applyMatrix4(sweepInverse);
  // The direction without the translation, so that t means the same in both spaces.
  const d = direction.clone().add(origin).applyMatrix4(sweepInverse).sub(o);
  const hit = tree.bvh.castSphere(o, d, radius / scale, options);
  if (hit === null) return null;
  return {
    distance: hit.distance,
    point: new Vector3(...hit.point).applyMatrix4(m),
    normal: new Vector3(...hit.normal).transformDirection(m),
    faceIndex: hit.triangle + tree.first,
    object: mesh,
  };
}

/**
 * One step of a character controller: moves a sphere of `radius` at `position` by `motion`
 * (world-space Vector3s) through `meshes` (each with a `boundsTree`; see `sweepSphere`),
 * stopping where it touches and sliding along what it touched, at most
 * `options.iterations` times (default 3); it stops `options.skin` short of each contact
 * (default a thousandth of the radius) so the next step starts clear. Returns `{ position,
 * contacts }`: the new centre (a new Vector3) and the `sweepSphere` answers met on the way.
 */
export function moveSphere(meshes, position, motion, radius, options) {
  const iterations = options?.iterations ?? 3;
  const skin = options?.skin ?? 1e-3 * radius;
  const p = position.clone();
  const m = motion.clone();
  const contacts = [];
  for (let k = 0; k < iterations; k++) {
    const length = m.length();
    if (length === 0) break;
    let first = null;
    for (const mesh of meshes) {
      const hit = sweepSphere(mesh, p, m, radius, { ...options, near: 0, far: 1 });
      if (hit !== null && (first === null || hit.distance < first.distance)) first = hit;
    }
    if (first === null) {
      p.add(m);
      break;
    }
    const t = Math.max(0, first.distance - skin / length);
    p.addScaledVector(m, t);
    m.multiplyScalar(1 - t);
    const into = m.dot(first.normal);
    if (into < 0) m.addScaledVector(first.normal, -into);
    contacts.push(first);
  }
  return { position: p, contacts };
}
