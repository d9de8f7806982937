// Model loading and merging, shared by the demo page (demo.js) and its browser test
// (test/browser.test.mjs): the test builds its reference BVH in Node through exactly this
// code, so page and test triangle numbers mean the same thing.
//
// Imports the bare specifier "three": the page maps it with an import map, Node finds
// js/node_modules/three.

import { Matrix4, Vector3 } from "three";
import { OBJLoader } from "three/addons/loaders/OBJLoader.js";
import { MTLLoader } from "three/addons/loaders/MTLLoader.js";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";

/** The file types `parseModel` reads. */
export const MODEL_EXTENSIONS = ["obj", "glb", "gltf"];

/**
 * Parses a model file into a three.js object. `data`: the file's bytes (ArrayBuffer) or, for
 * OBJ, its text. `mtlText`: an optional MTL material library for an OBJ (colours only; the
 * geometry is the same without it). A .gltf must be self-contained (embedded buffers):
 * side files of a dropped file cannot be fetched.
 */
export async function parseModel(fileName, data, mtlText) {
  const ext = fileName.split(".").pop().toLowerCase();
  if (ext === "obj") {
    const loader = new OBJLoader();
    if (mtlText) {
      const materials = new MTLLoader().parse(mtlText, "");
      materials.preload();
      loader.setMaterials(materials);
    }
    return loader.parse(typeof data === "string" ? data : new TextDecoder().decode(data));
  }
  if (ext === "glb" || ext === "gltf") {
    return (await new GLTFLoader().parseAsync(data, "")).scene;
  }
  throw new Error(`cannot read ${fileName}: use .${MODEL_EXTENSIONS.join(", .")}`);
}

/**
 * Merges every mesh under `root` into one triangle soup in world space, the input of one
 * meshray BVH. Returns `{ positions: Float32Array, indices: Uint32Array, parts }`, where
 * `parts[k] = { name, firstTriangle, triangleCount }` says which mesh triangles come from.
 * Meshes are taken in `traverse` order; each geometry's index (or, without one, its vertex
 * order) gives its triangles. Instanced meshes add one copy per instance. Skinning and
 * morph targets are ignored: the rest pose is what gets picked.
 */
export function mergeMeshes(root) {
  root.updateMatrixWorld(true);
  // Collect (mesh, world matrix) pairs first to size the arrays.
  const items = [];
  root.traverse((object) => {
    if (!object.isMesh || !object.geometry?.attributes.position) return;
    if (object.isInstancedMesh) {
      for (let i = 0; i < object.count; i++) {
        const instance = new Matrix4();
        object.getMatrixAt(i, instance);
        items.push({ object, matrix: instance.premultiply(object.matrixWorld), name: `${nameOf(object)}#${i}` });
      }
    } else {
      items.push({ object, matrix: object.matrixWorld, name: nameOf(object) });
    }
  });

  let vertexCount = 0;
  let indexCount = 0;
  for (const { object } of items) {
    const { index, attributes } = object.geometry;
    vertexCount += attributes.position.count;
    // Without an index every three vertices are a triangle (a trailing partial one dropped).
    indexCount += index ? index.count - (index.count % 3) : attributes.position.count - (attributes.position.count % 3);
  }

  const positions = new Float32Array(3 * vertexCount);
  const indices = new Uint32Array(indexCount);
  const parts = [];
  const v = new Vector3();
  let vertexBase = 0;
  let at = 0;
  for (const { object, matrix, name } of items) {
    const { index, attributes } = object.geometry;
    const position = attributes.position;
    // fromBufferAttribute copes with interleaved and normalized (quantized glTF) attributes.
    for (let i = 0; i < position.count; i++) {
      v.fromBufferAttribute(position, i).applyMatrix4(matrix);
      positions.set([v.x, v.y, v.z], 3 * (vertexBase + i));
    }
    const count = index ? index.count - (index.count % 3) : position.count - (position.count % 3);
    for (let i = 0; i < count; i++) indices[at + i] = vertexBase + (index ? index.getX(i) : i);
    parts.push({ name, firstTriangle: at / 3, triangleCount: count / 3 });
    vertexBase += position.count;
    at += count;
  }
  return { positions, indices, parts };
}

/** The part (see `mergeMeshes`) triangle `triangle` belongs to. */
export function partOf(parts, triangle) {
  return parts.find((p) => triangle >= p.firstTriangle && triangle < p.firstTriangle + p.triangleCount);
}

function nameOf(object) {
  return object.name || object.parent?.name || object.type;
}
