// meshray/three: BVH-accelerated raycasting for three.js meshes, in three-mesh-bvh's shape.
import type { BatchedMesh, BufferGeometry, Intersection, Mesh, Object3D, Raycaster, Vector3 } from "three";
import type { BVH } from "./meshray.js";

/** Options of `computeBoundsTree` / `computeBatchedBoundsTree`. */
export interface BoundsTreeOptions {
  /** The BVH's build: "fast", "default" (SAH, the default) or "high" (static meshes). */
  quality?: "fast" | "default" | "high";
  /** The watertight triangle test, as three's `Ray.intersectTriangle` (default true). */
  watertight?: boolean;
}

/** The meshray tree of a geometry (or of one geometry of a BatchedMesh), in local space. */
export class MeshrayBoundsTree {
  /** The meshray BVH over the geometry's positions and index. */
  readonly bvh: BVH;
  /** The geometry's triangle number (faceIndex) of the tree's triangle 0. */
  readonly first: number;
  /** The tree's triangle count. */
  readonly count: number;
  readonly watertight: boolean;
  /** Frees the tree's WebAssembly memory. */
  dispose(): void;
}

/**
 * For `BufferGeometry.prototype.computeBoundsTree`: builds `this.boundsTree` (freeing the
 * previous one). Throws when `init()` from "meshray" has not run, the geometry has no
 * position attribute or no triangle, or a coordinate is NaN or infinite.
 */
export function computeBoundsTree(this: BufferGeometry, options?: BoundsTreeOptions): MeshrayBoundsTree;

/** For `BufferGeometry.prototype.disposeBoundsTree`: frees `this.boundsTree`, sets it to null. */
export function disposeBoundsTree(this: BufferGeometry): void;

/**
 * For `BatchedMesh.prototype.computeBoundsTree`: the tree of geometry `index`, or of every
 * geometry (`index` -1, the default), into `this.boundsTrees`.
 */
export function computeBatchedBoundsTree(
  this: BatchedMesh,
  index?: number,
  options?: BoundsTreeOptions,
): MeshrayBoundsTree | Array<MeshrayBoundsTree | null> | null;

/** For `BatchedMesh.prototype.disposeBoundsTree`: frees one tree, or all of them (-1). */
export function disposeBatchedBoundsTree(this: BatchedMesh, index?: number): void;

/**
 * For `Mesh.prototype.raycast` (and `BatchedMesh.prototype.raycast`): three's intersections,
 * from the tree when the geometry has one, else from three's own raycast (also for morph
 * targets and SkinnedMesh). With `raycaster.firstHitOnly = true`, only the nearest hit
 * (per instance of an InstancedMesh).
 */
export function acceleratedRaycast(this: Object3D, raycaster: Raycaster, intersects: Intersection[]): void;

/** Where a moving sphere first touches a mesh (world space). */
export interface SphereContact {
  /** How far the centre moved, in lengths of the direction. */
  distance: number;
  /** The contact on the mesh. */
  point: Vector3;
  /** The unit normal from the mesh towards the sphere. */
  normal: Vector3;
  /** The triangle touched, as three numbers faces. */
  faceIndex: number;
  object: Mesh;
}

/**
 * Where a sphere of `radius` whose centre moves from `origin` along `direction` first
 * touches `mesh` (its geometry needs a `boundsTree`), exactly; null when nothing. Throws for
 * a `matrixWorld` that does not scale alike along every axis.
 */
export function sweepSphere(
  mesh: Mesh,
  origin: Vector3,
  direction: Vector3,
  radius: number,
  options?: { near?: number; far?: number; cull?: "none" | "back" | "front" },
): SphereContact | null;

/**
 * One step of a character controller: the sphere at `position` moved by `motion` through
 * `meshes`, stopping a `skin` short of each contact and sliding along it, at most
 * `iterations` times (default 3).
 */
export function moveSphere(
  meshes: Mesh[],
  position: Vector3,
  motion: Vector3,
  radius: number,
  options?: { iterations?: number; skin?: number; cull?: "none" | "back" | "front" },
): { position: Vector3; contacts: SphereContact[] };

declare module "three" {
  interface BufferGeometry {
    boundsTree?: MeshrayBoundsTree | null;
    computeBoundsTree(options?: BoundsTreeOptions): MeshrayBoundsTree;
    disposeBoundsTree(): void;
  }
  interface BatchedMesh {
    boundsTrees?: Array<MeshrayBoundsTree | null> | null;
    computeBoundsTree(index?: number, options?: BoundsTreeOptions): MeshrayBoundsTree | Array<MeshrayBoundsTree | null> | null;
    disposeBoundsTree(index?: number): void;
  }
  interface Raycaster {
    /** Only the nearest hit (meshray/three, as three-mesh-bvh). */
    firstHitOnly?: boolean;
  }
}
