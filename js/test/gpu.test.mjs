// `bvh.gpu(device)` in headless Chromium's WebGPU (SwiftShader, a CPU implementation),
// driven by playwright-core:
//
//   cd js && node --test test/gpu.test.mjs
//
// The page builds the same BVH as Node does, casts the same rays through the GPU kernel
// (meshray-gpu's WGSL) and the module's finish, and every closest hit must be Node's
// `closestHits` answer bit for bit, after a refit too (`update()`); any hits must hit
// exactly where Node's do. The asset
// scene always, the bunny when the shared meshes are there; random rays, rays at vertices,
// per-ray ranges, and rays that cannot hit (NaN, zero direction).
//
// Chromium: $CHROMIUM, else /usr/bin/chromium. Without one, or without a WebGPU adapter in
// it, the test is skipped, except when CI=true, where it fails.

import test from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";

import { init, BVH } from "../meshray.js";
import { startServer } from "../demo/serve.mjs";
import { CHROMIUM, HAVE_CHROMIUM, QUIET } from "./chromium.mjs";
import { asset, random, rays as randomRays, readObj, sharedMeshes } from "./meshes.mjs";

const CI = process.env.CI === "true";
const SKIP = !HAVE_CHROMIUM && !CI
  ? `no Chromium at ${CHROMIUM} (install chromium or set $CHROMIUM to its binary)`
  : false;

const ARGS = [
  // WebGPU on SwiftShader: Chromium offers it only with this flag on Linux.
  "--enable-unsafe-webgpu",
  "--enable-unsafe-swiftshader",
  ...QUIET,
];

// The rays of a mesh: random ones through its box, one at each of some vertices (from
// outside, along a fixed direction), and four that cannot hit.
function testRays(positions, count, seed) {
  const rng = random(seed);
  const random_ = randomRays(positions, count, rng);
  const atVertices = [];
  const vertices = positions.length / 3;
  for (let k = 0; k < Math.min(500, vertices); k++) {
    const v = Math.floor(rng() * vertices);
    const d = [0.3, -1, 0.2];
    const p = [0, 1, 2].map((a) => positions[3 * v + a]);
    atVertices.push(p[0] - 5 * d[0], p[1] - 5 * d[1], p[2] - 5 * d[2], ...d);
  }
  const bad = [NaN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, Infinity, 0, 0, 1e30, 1e30, 1e30, 0, 0, -1];
  return Float32Array.from([...random_, ...atVertices, ...bad]);
}

// Bit for bit: the same numbers (NaN equal to NaN, +0 not -0).
function assertSameArrays(got, want, what) {
  assert.equal(got.length, want.length, `${what}: lengths`);
  for (let k = 0; k < want.length; k++) {
    if (!Object.is(got[k], want[k])) {
      assert.fail(`${what}[${k}]: the GPU's ${got[k]}, the CPU's ${want[k]}`);
    }
  }
}

test("bvh.gpu(device): WebGPU answers in Chromium are the CPU's", { skip: SKIP, timeout: 600_000 }, async (t) => {
  assert.ok(HAVE_CHROMIUM, `CI=true but there is no Chromium at ${CHROMIUM}: install chromium or set $CHROMIUM`);
  const { chromium } = await import("playwright-core");
  await init();

  const meshes = [["scene", readObj(asset("scene.obj")), 4000]];
  const shared = sharedMeshes();
  if (shared) meshes.push(["bunny", readObj(join(shared, "stanford-bunny", "stanford-bunny.obj")), 3000]);
  else if (CI) assert.fail("CI=true but the shared meshes are missing");

  const server = await startServer();
  t.after(() => server.close());
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  // Any page of the server: a secure context (localhost), where `navigator.gpu` exists.
  const origin = new URL(server.url).origin;
  await page.goto(`${origin}/package.json`);
  const adapter = await page.evaluate(async () => {
    const adapter = await navigator.gpu?.requestAdapter();
    return adapter ? `${adapter.info?.vendor} ${adapter.info?.architecture}` : null;
  });
  if (!adapter) {
    assert.ok(!CI, "CI=true but Chromium offers no WebGPU adapter");
    t.skip("Chromium offers no WebGPU adapter here");
    return;
  }
  t.diagnostic(`WebGPU adapter: ${adapter}`);

  for (const [name, { positions, indices }, count] of meshes) {
    const rays = testRays(positions, count, 42);
    const n = rays.length / 6;
    const bvh = new BVH(positions, indices);
    const near = Float32Array.from({ length: n }, (_, k) => (k % 7 === 3 ? 0.5 : 0));
    const far = Float32Array.from({ length: n }, (_, k) => (k % 5 === 1 ? 2 : Infinity));
    // The mesh bent, for the refit: the device's copy must follow the tree.
    const bent = positions.map((x, i) => (i % 3 === 1 ? x + 0.05 * Math.sin(3 * positions[i - 1]) : x));
    const cpu = {
      closest: bvh.closestHits(rays),
      ranged: bvh.closestHits(rays, { near, far }),
      any: bvh.anyHits(rays),
    };
    bvh.refit(bent);
    cpu.refitted = bvh.closestHits(rays);
    bvh.free();
    const gpu = await page.evaluate(
      async ({ origin, positions, indices, bent, rays, near, far }) => {
        const { init, BVH } = await import(`${origin}/meshray.js`);
        await init();
        // One device for both meshes: the kernel is compiled once per device (minutes on
        // SwiftShader).
        window.meshrayDevice ??= await (await navigator.gpu.requestAdapter()).requestDevice();
        const device = window.meshrayDevice;
        const bvh = new BVH(new Float32Array(positions), new Uint32Array(indices));
        const onGpu = await bvh.gpu(device);
        const plain = (a) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, Array.from(v)]));
        const closest = plain(await onGpu.closestHits(new Float32Array(rays)));
        const stats = onGpu.stats;
        const ranged = plain(await onGpu.closestHits(new Float32Array(rays), { near: new Float32Array(near), far: new Float32Array(far) }));
        const any = plain(await onGpu.anyHits(new Float32Array(rays)));
        bvh.refit(new Float32Array(bent));
        onGpu.update();
        const refitted = plain(await onGpu.closestHits(new Float32Array(rays)));
        const refused = [];
        for (const options of [{ cull: "back" }, { watertight: false }]) {
          try {
            await onGpu.closestHits(new Float32Array(rays.slice(0, 6)), options);
          } catch (error) {
            refused.push(error.message);
          }
        }
        onGpu.destroy();
        bvh.free();
        return { closest, ranged, any, refitted, stats, refused };
      },
      {
        origin,
        bent: Array.from(bent),
        positions: Array.from(positions),
        indices: Array.from(indices),
        rays: Array.from(rays),
        near: Array.from(near),
        far: Array.from(far),
      },
    );
    t.diagnostic(`${name}: ${n} rays, ${gpu.stats.flagged} flagged, ${gpu.stats.several} narrowed to several, ${gpu.stats.visits} node visits on the GPU`);
    assert.equal(gpu.stats.rays, n);
    // The kernel ran: it visited nodes, and answered most rays itself.
    assert.ok(gpu.stats.visits > n, `${name}: ${gpu.stats.visits} node visits`);
    assert.ok(gpu.stats.flagged < n / 20, `${name}: ${gpu.stats.flagged} of ${n} rays flagged`);
    for (const form of ["closest", "ranged", "refitted"]) {
      for (const key of ["distance", "triangle", "u", "v"]) {
        assertSameArrays(gpu[form][key], Array.from(cpu[form][key]), `${name} ${form} ${key}`);
      }
    }
    const hits = cpu.closest.triangle.filter((x) => x >= 0).length;
    assert.ok(hits > n / 4, `${name}: ${hits} of ${n} rays hit`);
    for (let k = 0; k < n; k++) {
      assert.equal(gpu.any.triangle[k] >= 0, cpu.any.triangle[k] >= 0, `${name} any hit of ray ${k}`);
      if (gpu.any.triangle[k] >= 0 && gpu.any.triangle[k] === cpu.closest.triangle[k]) {
        assert.ok(Object.is(gpu.any.distance[k], cpu.closest.distance[k]), `${name} any hit ${k}'s distance`);
      }
    }
    assert.equal(gpu.refused.length, 2, `culling and Cramer's rule refused: ${gpu.refused}`);
    assert.ok(gpu.refused.every((m) => m.includes("watertight test and no culling")), gpu.refused.join("; "));
  }
  assert.deepEqual(problems, []);
});

test("bvh.gpu refuses what is not a GPUDevice, and a freed BVH", async () => {
  await init();
  const { positions, indices } = readObj(asset("scene.obj"));
  const bvh = new BVH(positions, indices);
  for (const notADevice of [undefined, null, {}, { createBuffer() {} }, 42]) {
    await assert.rejects(bvh.gpu(notADevice), /takes a WebGPU GPUDevice/);
  }
  bvh.free();
  const device = { createBuffer() {}, queue: { writeBuffer() {} } };
  await assert.rejects(bvh.gpu(device), /freed/);
});
