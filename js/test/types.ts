// Type-checked (never run) by `npm run typecheck`: the package's API as a TypeScript user
// calls it, so a declaration that does not match the code's shape, or refers to a three.js
// type that does not exist, fails CI. Lines marked @ts-expect-error must stay errors.
import * as THREE from "three";
import { BVH, Geometry, GpuBVH, Scene, buildAsync, init, type Hit, type BatchHits, type GpuStats, type SweepHit, type SweepHits } from "meshray";
import {
  MeshrayBoundsTree,
  acceleratedRaycast,
  computeBatchedBoundsTree,
  computeBoundsTree,
  disposeBatchedBoundsTree,
  disposeBoundsTree,
  moveSphere,
  sweepSphere,
} from "meshray/three";

export async function usage(): Promise<number> {
  await init();
  const bvh = new BVH(new Float32Array(9), [0, 1, 2], { quality: "high" });
  const hit: Hit | null = bvh.closestHit([0, 0, 1], new THREE.Vector3(0, 0, -1), { cull: "back" });
  const batch: BatchHits = bvh.closestHits(new Float32Array(6), { near: 0, far: 10 });
  const touch: SweepHit | null = bvh.castSphere([0, 5, 0], [0, -1, 0], 0.5, { axis: [0, 1, 0], cull: "back" });
  const mesh = new THREE.Mesh(new THREE.BufferGeometry());
  const contact = sweepSphere(mesh, new THREE.Vector3(), new THREE.Vector3(0, -1, 0), 0.5);
  const step: THREE.Vector3 = moveSphere([mesh], new THREE.Vector3(), new THREE.Vector3(1, 0, 0), 0.5, { skin: 1e-3 }).position;
  // @ts-expect-error: the radius is a number
  bvh.castSphere([0, 5, 0], [0, -1, 0], "0.5");
  const sweeps: SweepHits = bvh.castSpheres(new Float32Array(6), 0.5, { near: [0], axis: [0, 1, 0] });
  const normals: Float32Array = sweeps.normal;
  bvh.refit(new Float32Array(9));
  const scene = new Scene();
  const id: number = scene.add(bvh, new THREE.Matrix4().makeTranslation(1, 0, 0));
  scene.setTransform(id, new THREE.Matrix4().elements);
  const placed: Geometry = scene;
  const fromScene: BatchHits = placed.closestHits(new Float32Array(6), { cull: "front" });
  const instances: Int32Array | undefined = fromScene.instance;
  const pairs: Uint32Array = bvh.intersectingTriangles(bvh, new THREE.Matrix4().makeTranslation(0, 1, 0));
  const clashes: Uint32Array = scene.selfIntersections();
  const clash: boolean = bvh.intersects(bvh, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1]);
  // @ts-expect-error: a BVH meets a BVH, not a scene
  bvh.intersectingTriangles(scene);
  scene.remove(id);
  // @ts-expect-error: a scene places BVHs, not scenes
  scene.add(scene);
  scene.free();
  const copy: BVH = BVH.fromBytes(bvh.toBytes());
  void pairs, clashes, clash, normals;
  const built: BVH = await buildAsync(new Float32Array(9), null, { quality: "fast" });
  const inside: boolean = bvh.contains([0, 0, 0]);
  const distance: number | null = bvh.signedDistance({ x: 0, y: 0, z: 0 });
  // @ts-expect-error: cull is "none", "back" or "front"
  bvh.anyHit([0, 0, 1], [0, 0, -1], { cull: "both" });
  // @ts-expect-error: a quality the builder does not have
  new BVH([], null, { quality: "best" });
  bvh.free();

  THREE.BufferGeometry.prototype.computeBoundsTree = computeBoundsTree;
  THREE.BufferGeometry.prototype.disposeBoundsTree = disposeBoundsTree;
  THREE.Mesh.prototype.raycast = acceleratedRaycast;
  THREE.SkinnedMesh.prototype.raycast = acceleratedRaycast;
  THREE.BatchedMesh.prototype.computeBoundsTree = computeBatchedBoundsTree;
  THREE.BatchedMesh.prototype.disposeBoundsTree = disposeBatchedBoundsTree;
  const geometry = new THREE.SphereGeometry();
  const tree: MeshrayBoundsTree = geometry.computeBoundsTree({ watertight: false });
  const hits = new THREE.Raycaster().intersectObject(new THREE.Mesh(geometry));
  geometry.disposeBoundsTree();
  return (hit?.distance ?? 0) + batch.distance.length + tree.count + hits.length +
    Number(inside) + (distance ?? 0) + copy.triangleCount + built.triangleCount + (instances?.length ?? 0) + scene.size;
}

// The WebGPU batch: a GPUDevice in, the BVH's batch answers out, asynchronously.
export async function onTheGpu(bvh: BVH, device: object): Promise<number> {
  const onGpu: GpuBVH = await bvh.gpu(device);
  const hits: BatchHits = await onGpu.closestHits(new Float32Array(6), { near: 0, far: 10 });
  const any: BatchHits = await onGpu.anyHits([0, 0, 1, 0, 0, -1]);
  const stats: GpuStats | null = onGpu.stats;
  onGpu.update();
  onGpu.destroy();
  return hits.distance.length + any.triangle.length + (stats?.flagged ?? 0);
}
