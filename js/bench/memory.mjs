// What a build costs the page: how far the wasm memory of a fresh meshray module grows over
// one build (`new BVH` on this thread, and `buildAsync`, built in a worker and loaded here),
// the longest stall of this thread's event loop meanwhile, and three-mesh-bvh's tree
// (its roots' buffers; it reuses the geometry's arrays). Each measurement runs in a fresh
// Node process, since wasm memory never shrinks.
//
//   node bench/memory.mjs [MESH ...] [--grid N]
//
//   MESH      stanford-bunny armadillo crytek-sponza conference lost-empire (the default), or
//             a path to an .obj file
//   --grid N  also an N × N grid of 2·N² triangles (a wavy terrain); 1581 makes 5 million
//
// Meshes come from $MESHRAY_MESHES (else ../shared/meshes beside the repository). Run
// `npm run build` first. Prints a Markdown table.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SHARED_MESHES as MESHES } from "./common.mjs";
import { grid } from "../test/grid.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..");
const meshesDir = process.env.MESHRAY_MESHES ?? join(repo, "..", "shared", "meshes");
const MODES = ["sync", "async", "three-mesh-bvh"];

async function child(source, mode) {
  const { readObj } = await import("../test/meshes.mjs");
  const mesh = source.startsWith("grid:") ? grid(Number(source.slice(5))) : readObj(source);
  const triangles = mesh.indices.length / 3;
  if (mode === "three-mesh-bvh") {
    const THREE = await import("three");
    const { MeshBVH } = await import("three-mesh-bvh");
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.BufferAttribute(mesh.positions, 3));
    geometry.setIndex(new THREE.BufferAttribute(mesh.indices, 1));
    const bvh = new MeshBVH(geometry);
    const bytes = bvh._roots.reduce((sum, root) => sum + root.byteLength, 0);
    return { triangles, bytes };
  }
  const { init, BVH, buildAsync, memoryBytes } = await import("../meshray.js");
  await init();
  // The longest gap between ticks of a 1 ms timer: how long this thread was blocked.
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  const before = memoryBytes();
  const start = performance.now();
  const bvh = mode === "sync" ? new BVH(mesh.positions, mesh.indices) : await buildAsync(mesh.positions, mesh.indices);
  const ms = performance.now() - start;
  const bytes = memoryBytes() - before;
  last = performance.now();
  stall = Math.max(stall, last - start > 0 && mode === "sync" ? ms : 0);
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(timer);
  if (bvh.triangleCount !== triangles) throw new Error(`${bvh.triangleCount} triangles, not ${triangles}`);
  bvh.free();
  return { triangles, bytes, ms, stall };
}

async function main(argv) {
  if (argv[0] === "--child") {
    console.log(JSON.stringify(await child(argv[1], argv[2])));
    return;
  }
  const sources = [];
  const grids = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--grid") {
      const n = Number(argv[++i]);
      grids.push({ name: `grid ${n}×${n}`, path: `grid:${n}` });
    } else {
      const path = MESHES[argv[i]] ? join(meshesDir, MESHES[argv[i]]) : resolve(argv[i]);
      sources.push({ name: MESHES[argv[i]] ? argv[i] : basename(argv[i]), path });
    }
  }
  if (sources.length === 0) {
    for (const [name, file] of Object.entries(MESHES)) sources.push({ name, path: join(meshesDir, file) });
  }
  sources.push(...grids);
  console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}: wasm memory growth over one build`);
  console.log("(a fresh process each; MB = 10^6 bytes; stall = the longest gap between this thread's 1 ms timer ticks)\n");
  console.log("| mesh | triangles | `new BVH` B/tri | stall ms | `buildAsync` B/tri | stall ms | build ms | three-mesh-bvh B/tri |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const { name, path } of sources) {
    if (!path.startsWith("grid:") && !existsSync(path)) {
      console.log(`| ${name} | missing: ${path} | | | | | | |`);
      continue;
    }
    const run = (mode) =>
      JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--child", path, mode], { maxBuffer: 1 << 20 }).toString());
    const [sync, async_, tmb] = MODES.map(run);
    const per = (r) => (r.bytes / r.triangles).toFixed(1);
    console.log(
      `| ${name} | ${sync.triangles.toLocaleString("en")} | ${per(sync)} | ${sync.stall.toFixed(0)} | ${per(async_)} | ${async_.stall.toFixed(0)} | ${async_.ms.toFixed(0)} | ${per(tmb)} |`,
    );
  }
}

await main(process.argv.slice(2));
