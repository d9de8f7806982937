// The meshray demo page: a three.js view of a mesh, picked with meshray's BVH.
//
// A click casts the camera ray through the pixel (three's Raycaster.setFromCamera) and asks
// meshray's BVH for the nearest hit; the hit triangle is drawn again on top in yellow. The
// whole model is merged into one BVH in world space (mesh.js), so a triangle number is a
// position in that merged index buffer.
//
// For tests, `window.meshrayDemo` exposes the state (see the end of the file) and the
// #status element carries data-state, data-triangle and data-distance.

import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { init, build, BVH } from "../meshray.js";
import { MODEL_EXTENSIONS, mergeMeshes, parseModel, partOf } from "./mesh.js";

const canvas = document.querySelector("#view");
const statusEl = document.querySelector("#status");
const modelEl = document.querySelector("#model");

const renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
renderer.setPixelRatio(window.devicePixelRatio);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x20232a);
scene.add(new THREE.HemisphereLight(0xffffff, 0x404040, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 2);
sun.position.set(3, 10, 6);
scene.add(sun);

const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
const controls = new OrbitControls(camera, canvas);
// No animation loop: draw only when something changed (the page idles at 0% CPU).
controls.addEventListener("change", render);

// The picked triangle: one triangle in world space, drawn over the model. polygonOffset
// pulls it towards the camera so it wins the depth test against the identical triangle.
const highlight = new THREE.Mesh(
  new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(new Float32Array(9), 3)),
  new THREE.MeshBasicMaterial({
    color: 0xffff00,
    side: THREE.DoubleSide,
    polygonOffset: true,
    polygonOffsetFactor: -4,
    polygonOffsetUnits: -4,
  }),
);
highlight.visible = false;
highlight.frustumCulled = false; // its bounding sphere would go stale as it moves
scene.add(highlight);

// The current model: { name, root (the three.js object), bvh, positions, indices, parts }.
let model = null;
let lastPick = null;

function render() {
  renderer.render(scene, camera);
}

function resize() {
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  renderer.setSize(width, height, false);
  camera.aspect = width / height;
  camera.updateProjectionMatrix();
  render();
}
window.addEventListener("resize", resize);

function setStatus(text, data = {}) {
  statusEl.textContent = text;
  for (const key of ["state", "triangle", "distance"]) {
    if (key in data) statusEl.dataset[key] = String(data[key]);
    else delete statusEl.dataset[key];
  }
}

// Replaces the model: builds its BVH, shows it and frames the camera on it.
function showModel(name, root) {
  const { positions, indices, parts } = mergeMeshes(root);
  const start = performance.now();
  const bvh = new BVH(positions, indices); // throws for an empty or broken mesh
  const buildMs = performance.now() - start;

  if (model) {
    scene.remove(model.root);
    model.bvh.free();
  }
  model = { name, root, bvh, positions, indices, parts };
  scene.add(root);
  highlight.visible = false;
  lastPick = null;

  // Frame the bounds: look at their centre from the front, a little from above and the
  // right, far enough back for the bounding sphere to fit the view.
  const { min, max } = bvh.bounds;
  const box = new THREE.Box3(new THREE.Vector3(...min), new THREE.Vector3(...max));
  const centre = box.getCenter(new THREE.Vector3());
  const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-6);
  const fov = THREE.MathUtils.degToRad(Math.min(camera.fov, camera.fov * camera.aspect));
  // (0.8: the bounding sphere is loose around most models, a box's corners rarely reach it.)
  const distance = (0.8 * radius) / Math.sin(fov / 2);
  camera.position.copy(centre).addScaledVector(new THREE.Vector3(0.45, 0.35, 1).normalize(), distance);
  camera.near = distance / 1000;
  camera.far = distance * 10;
  camera.updateProjectionMatrix();
  controls.target.copy(centre);
  controls.update(); // renders through the "change" listener

  // Warm up: V8 compiles wasm in a quick baseline tier first and optimizes the functions
  // that run a lot, so the first picks would be timed in slow code.
  const warmUntil = performance.now() + 20;
  for (let i = 0; performance.now() < warmUntil; i++) {
    bvh.closestHit(camera.position, [centre.x - camera.position.x + Math.sin(i), centre.y - camera.position.y + Math.cos(i), centre.z - camera.position.z]);
  }

  modelEl.textContent =
    `${name}: ${bvh.triangleCount} triangles in ${parts.length} mesh${parts.length === 1 ? "" : "es"}, ` +
    `BVH built in ${buildMs.toFixed(1)} ms (${build()} wasm)`;
  setStatus("click the model to pick a triangle", { state: "ready" });
  render();
}

// Picks at a point given in CSS pixels relative to the canvas' top left corner.
function pick(x, y) {
  const pointer = new THREE.Vector2((x / canvas.clientWidth) * 2 - 1, -(y / canvas.clientHeight) * 2 + 1);
  const raycaster = new THREE.Raycaster();
  raycaster.setFromCamera(pointer, camera);
  const origin = raycaster.ray.origin.toArray();
  const direction = raycaster.ray.direction.toArray(); // unit length: distance = t

  const start = performance.now();
  const hit = model.bvh.closestHit(origin, direction);
  const firstUs = (performance.now() - start) * 1000;
  // One query takes about a microsecond, below the clock's resolution (5 µs when the page
  // is cross-origin isolated, 100 µs when not), so also time a loop of them (~2 ms).
  let runs = 0;
  let now;
  const loopStart = performance.now();
  do {
    model.bvh.closestHit(origin, direction);
    runs++;
  } while ((now = performance.now()) - loopStart < 2);
  const meanUs = ((now - loopStart) * 1000) / runs;

  lastPick = {
    x, y, origin, direction,
    hit: hit !== null,
    triangle: hit ? hit.triangle : -1,
    distance: hit ? hit.distance : null,
    point: hit ? hit.point : null,
    part: hit ? partOf(model.parts, hit.triangle)?.name ?? null : null,
    firstUs, meanUs, runs,
  };

  const timing = `closestHit ${meanUs.toFixed(2)} µs (mean of ${runs}; first call ${firstUs.toFixed(0)} µs)`;
  if (hit) {
    const position = highlight.geometry.attributes.position;
    for (let corner = 0; corner < 3; corner++) {
      const vertex = model.indices[3 * hit.triangle + corner];
      position.setXYZ(corner, ...model.positions.subarray(3 * vertex, 3 * vertex + 3));
    }
    position.needsUpdate = true;
    highlight.visible = true;
    setStatus(`triangle ${hit.triangle} (${lastPick.part}) at distance ${hit.distance.toFixed(4)} · ${timing}`, {
      state: "hit", triangle: hit.triangle, distance: hit.distance,
    });
  } else {
    highlight.visible = false;
    setStatus(`no hit · ${timing}`, { state: "miss", triangle: -1 });
  }
  render();
  return lastPick;
}

// A click is a pointer press and release without moving: a drag orbits instead.
let pressedAt = null;
canvas.addEventListener("pointerdown", (event) => {
  if (event.button === 0) pressedAt = [event.clientX, event.clientY];
});
canvas.addEventListener("pointerup", (event) => {
  if (event.button !== 0 || !pressedAt || !model) return;
  const moved = Math.hypot(event.clientX - pressedAt[0], event.clientY - pressedAt[1]);
  pressedAt = null;
  if (moved > 4) return;
  const rect = canvas.getBoundingClientRect();
  pick(event.clientX - rect.left, event.clientY - rect.top);
});

// Drag and drop: a model file, plus optionally an .mtl for an OBJ's colours.
let loading = Promise.resolve();
async function loadFiles(files) {
  const file = files.find((f) => MODEL_EXTENSIONS.includes(f.name.split(".").pop().toLowerCase()));
  if (!file) throw new Error(`drop a .${MODEL_EXTENSIONS.join(", .")} file`);
  const mtl = files.find((f) => f.name.toLowerCase().endsWith(".mtl"));
  setStatus(`loading ${file.name}…`, { state: "loading" });
  const root = await parseModel(file.name, await file.arrayBuffer(), mtl && (await mtl.text()));
  showModel(file.name, root);
}
window.addEventListener("dragover", (event) => {
  event.preventDefault(); // allows the drop
  event.dataTransfer.dropEffect = "copy";
  document.body.classList.add("dragging");
});
window.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
window.addEventListener("drop", (event) => {
  event.preventDefault();
  document.body.classList.remove("dragging");
  loading = loadFiles([...event.dataTransfer.files]).catch((error) => {
    console.error(error);
    setStatus(`could not load: ${error.message}`, { state: "error" });
  });
  meshrayDemo.loading = loading;
});

async function start() {
  await init();
  // The default model: the repository's demo scene (assets/scene.obj and its colours).
  const [obj, mtl] = await Promise.all(
    ["../assets/scene.obj", "../assets/scene.mtl"].map(async (url) => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      return response.text();
    }),
  );
  resize();
  showModel("scene.obj", await parseModel("scene.obj", obj, mtl));
}

const ready = start().catch((error) => {
  console.error(error);
  setStatus(`error: ${error.message}`, { state: "error" });
  throw error;
});

// The test's window into the page.
const meshrayDemo = {
  /** Resolves once the default model is shown and pickable. */
  ready,
  /** Resolves when the last dropped file is loaded (or failed). */
  loading,
  /** The last pick: { x, y, origin, direction, hit, triangle, distance, point, part, ... }. */
  get lastPick() { return lastPick; },
  /** The model: name, triangle count, parts. */
  get model() {
    return model && { name: model.name, triangleCount: model.bvh.triangleCount, parts: model.parts, build: build() };
  },
  /** The highlight's state: whether it is drawn, and its corners (9 numbers). */
  get highlight() {
    return { visible: highlight.visible, vertices: Array.from(highlight.geometry.attributes.position.array) };
  },
  pick,
  /** The CSS pixel [x, y] where the world point [x, y, z] is drawn. */
  toScreen(point) {
    const ndc = new THREE.Vector3(...point).project(camera);
    return [((ndc.x + 1) / 2) * canvas.clientWidth, ((1 - ndc.y) / 2) * canvas.clientHeight];
  },
  /** The colour [r, g, b, a] drawn at CSS pixel (x, y): renders, then reads it back. */
  pixelAt(x, y) {
    render();
    // Read in the same task as the render: the drawing buffer is not preserved after that.
    const gl = renderer.getContext();
    const ratio = renderer.getPixelRatio();
    const out = new Uint8Array(4);
    gl.readPixels(Math.floor(x * ratio), gl.drawingBufferHeight - 1 - Math.floor(y * ratio), 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, out);
    return Array.from(out);
  },
};
window.meshrayDemo = meshrayDemo;
