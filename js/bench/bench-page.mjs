// The browser side of bench.mjs: index.html loads this; bench.mjs (through playwright)
// calls `window.benchMesh(config)`, which fetches the mesh and ray files from the little
// server and runs the measuring code that Node runs too (common.mjs).

import { parseOBJ, parseRays, sampleRays, benchMesh } from "./common.mjs";

async function bytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function loadAdapter() {
  try {
    const adapter = await import("../three.js");
    if (typeof adapter.computeBoundsTree !== "function" || typeof adapter.acceleratedRaycast !== "function") return null;
    if (typeof adapter.init === "function") await adapter.init();
    await (await import("../meshray.js")).init(); // the adapter's instance
    return adapter;
  } catch (e) {
    console.log(`no meshray three.js adapter: ${e.message}`);
    return null;
  }
}

/**
 * config: `{ name, obj: url, sets: [{ name, url }], rays, passes, raycasterRays }`.
 */
window.benchMesh = async (config) => {
  const log = (s) => console.log(s);
  let t = performance.now();
  const mesh = { name: config.name, ...parseOBJ(await bytes(config.obj)) };
  log(`  loaded ${config.name}: ${mesh.indices.length / 3} triangles in ${(performance.now() - t).toFixed(0)} ms`);
  const sets = [];
  for (const set of config.sets) {
    const file = parseRays(await bytes(set.url));
    sets.push({ name: set.name, tmin: file.tmin, count: file.count, width: file.width, rays: sampleRays(file.rays, config.rays ?? Infinity, file.width) });
  }
  const adapter = config.adapter === false ? null : await loadAdapter();
  const result = await benchMesh(mesh, sets, { passes: config.passes, raycasterRays: config.raycasterRays, adapter, log });
  result.adapter = adapter !== null;
  result.userAgent = navigator.userAgent;
  for (const row of result.sets) row.setCount = sets.find((s) => s.name === row.set).count;
  return result;
};

window.benchReady = true;
