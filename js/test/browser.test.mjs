// The demo page (demo/) in headless Chromium, driven by playwright-core:
//
//   cd js && node --test test/browser.test.mjs
//
// Clicks on the model and checks that the page picked what meshray answers in Node for the
// same ray and the same mesh (loaded and merged by the same code, demo/mesh.js), that the
// picked triangle is highlighted, that a click on the background misses, and that dropped
// OBJ and GLB files load. Saves a screenshot after a pick: to $MESHRAY_DEMO_SCREENSHOT when
// set (docs/javascript.md's is demo/screenshot.png), else to the system's temporary directory.
//
// Chromium: $CHROMIUM, else /usr/bin/chromium. Without one the test is skipped, except
// when CI=true, where it fails.

import test from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { init, build, BVH } from "../meshray.js";
import { mergeMeshes, parseModel } from "../demo/mesh.js";
import { startServer } from "../demo/serve.mjs";
import { CHROMIUM, HAVE_CHROMIUM, QUIET } from "./chromium.mjs";

const SKIP = !HAVE_CHROMIUM && process.env.CI !== "true"
  ? `no Chromium at ${CHROMIUM} (install chromium or set $CHROMIUM to its binary)`
  : false;

const SCREENSHOT =
  process.env.MESHRAY_DEMO_SCREENSHOT ?? join(tmpdir(), `meshray-demo-${process.pid}.png`);
const ASSETS = new URL("../../assets/", import.meta.url);
const VIEWPORT = { width: 960, height: 640 };

const ARGS = [
  // Software WebGL: ANGLE on SwiftShader. Chromium no longer falls back to it by itself
  // (playwright-core passes the second flag too, but don't depend on that).
  "--use-angle=swiftshader",
  "--enable-unsafe-swiftshader",
  ...QUIET,
];

// A reference BVH in Node for a model file, built like the page builds its own.
async function reference(fileName, data, mtlText) {
  const { positions, indices, parts } = mergeMeshes(await parseModel(fileName, data, mtlText));
  return { bvh: new BVH(positions, indices), positions, indices, parts };
}

// The triangle's corners, 9 numbers, as the page's highlight holds them.
function corners({ positions, indices }, triangle) {
  return [0, 1, 2].flatMap((k) => Array.from(positions.subarray(3 * indices[3 * triangle + k], 3 * indices[3 * triangle + k] + 3)));
}

test("demo page: picking in Chromium matches meshray in Node", { skip: SKIP, timeout: 120_000 }, async (t) => {
  assert.ok(HAVE_CHROMIUM, `CI=true but there is no Chromium at ${CHROMIUM}: install chromium or set $CHROMIUM`);
  const { chromium } = await import("playwright-core");
  await init();

  const server = await startServer();
  t.after(() => server.close());
  // launch() runs Chromium with a fresh temporary profile (user data dir), removed on close.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });

  const lastPick = () => page.evaluate(() => window.meshrayDemo.lastPick);
  // Drops files on the page as a drag and drop would; `files`: [name, content] pairs,
  // content a string or an array of bytes.
  const drop = (files) => page.evaluate(async (files) => {
    const transfer = new DataTransfer();
    for (const [name, content] of files) {
      transfer.items.add(new File([typeof content === "string" ? content : new Uint8Array(content)], name));
    }
    document.querySelector("#view").dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    await window.meshrayDemo.loading;
    return window.meshrayDemo.model;
  }, files);

  await page.goto(server.url);
  await page.waitForFunction(() => window.meshrayDemo);
  await page.evaluate(() => window.meshrayDemo.ready);

  const [obj, mtl] = await Promise.all([readFile(new URL("scene.obj", ASSETS), "utf8"), readFile(new URL("scene.mtl", ASSETS), "utf8")]);
  const scene = await reference("scene.obj", obj, mtl);
  const pageModel = await page.evaluate(() => window.meshrayDemo.model);
  // Same engine build on both sides: answers must then be bit for bit the same.
  const sameBuild = pageModel.build === build();

  // The page's pick `p` against meshray in Node for the same ray.
  function checkAgainstNode(p, ref) {
    const expected = ref.bvh.closestHit(p.origin, p.direction);
    if (expected === null) {
      assert.equal(p.hit, false, `Node misses, the page hit triangle ${p.triangle}`);
      return;
    }
    assert.equal(p.hit, true, `Node hits triangle ${expected.triangle}, the page missed`);
    assert.equal(p.triangle, expected.triangle);
    if (sameBuild) assert.equal(p.distance, expected.distance);
    else assert.ok(Math.abs(p.distance - expected.distance) <= 1e-5 * expected.distance);
  }

  await t.test("the default model loads", () => {
    assert.equal(pageModel.name, "scene.obj");
    assert.equal(pageModel.triangleCount, 2090);
    assert.equal(pageModel.triangleCount, scene.bvh.triangleCount);
    assert.deepEqual(pageModel.parts, scene.parts);
  });

  await t.test("a click in the middle picks the sphere, as in Node", async () => {
    // The camera looks at the scene's centre (0, 1, 0) along the ray assets/README.md
    // describes: it meets the sphere at about (0.388, 1.302, 0.863).
    await page.mouse.click(VIEWPORT.width / 2, VIEWPORT.height / 2);
    const p = await lastPick();
    checkAgainstNode(p, scene);
    assert.equal(p.part, "sphere");
    [0.388, 1.302, 0.863].forEach((c, k) => assert.ok(Math.abs(p.point[k] - c) < 2e-3, `point ${p.point}`));
    assert.match(await page.textContent("#status"), new RegExp(`triangle ${p.triangle} \\(sphere\\).* µs`));
    assert.equal(await page.getAttribute("#status", "data-triangle"), String(p.triangle));
  });

  await t.test("a click on the box picks and highlights its triangle", async () => {
    // A point on the box's front face (z = -0.4), low in its middle: away from both diagonals,
    // so well inside one triangle whichever way the quad was split.
    const [x, y] = await page.evaluate(() => window.meshrayDemo.toScreen([2.2, 0.2, -0.4]));
    await page.mouse.click(x, y);
    const p = await lastPick();
    checkAgainstNode(p, scene);
    assert.equal(p.part, "box");

    const highlight = await page.evaluate(() => window.meshrayDemo.highlight);
    assert.equal(highlight.visible, true);
    assert.deepEqual(highlight.vertices, corners(scene, p.triangle));
    // The pixel under the pointer is drawn in the highlight's yellow.
    const [r, g, b] = await page.evaluate(([x, y]) => window.meshrayDemo.pixelAt(x, y), [x, y]);
    assert.ok(r > 240 && g > 240 && b < 30, `pixel (${r}, ${g}, ${b}) at the pick is not yellow`);
    await page.screenshot({ path: SCREENSHOT });
  });

  await t.test("a click on the background misses", async () => {
    await page.mouse.click(5, VIEWPORT.height - 5);
    const p = await lastPick();
    assert.equal(p.hit, false);
    assert.equal(scene.bvh.closestHit(p.origin, p.direction), null);
    assert.equal((await page.evaluate(() => window.meshrayDemo.highlight)).visible, false);
    assert.equal(await page.getAttribute("#status", "data-state"), "miss");
    assert.match(await page.textContent("#status"), /no hit/);
    const [r, g, b] = await page.evaluate(() => window.meshrayDemo.pixelAt(5, 640 - 5));
    assert.deepEqual([r, g, b], [0x20, 0x23, 0x2a]); // the background colour
  });

  await t.test("a dropped GLB loads and picks as in Node", async () => {
    // Make a GLB in the page: a transformed torus knot, exported by three's GLTFExporter.
    const bytes = await page.evaluate(async () => {
      const THREE = await import("three");
      const { GLTFExporter } = await import("three/addons/exporters/GLTFExporter.js");
      const knot = new THREE.Mesh(new THREE.TorusKnotGeometry(1, 0.3, 64, 8), new THREE.MeshStandardMaterial());
      knot.name = "knot";
      knot.position.set(1, 2, 3);
      knot.rotation.set(0.3, 0.6, 0.1);
      knot.scale.set(2, 1, 1);
      const glb = await new GLTFExporter().parseAsync(knot, { binary: true });
      return Array.from(new Uint8Array(glb));
    });
    const model = await drop([["knot.glb", bytes]]);
    const knot = await reference("knot.glb", new Uint8Array(bytes).buffer);
    assert.equal(model.name, "knot.glb");
    assert.equal(model.triangleCount, 64 * 8 * 2);
    assert.deepEqual(model.parts, knot.parts);
    // Picks across the middle row: some on the knot, some through its holes or beside it.
    let hits = 0;
    for (let x = 100; x < VIEWPORT.width; x += 95) {
      await page.mouse.click(x, VIEWPORT.height / 2);
      const p = await lastPick();
      checkAgainstNode(p, knot);
      hits += p.hit;
    }
    assert.ok(hits >= 2, `only ${hits} of the clicks hit the knot`);
  });

  await t.test("a dropped OBJ loads and picks as in Node", async () => {
    const quad = "o quad\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3 4\n";
    const model = await drop([["quad.obj", quad]]);
    assert.deepEqual([model.name, model.triangleCount], ["quad.obj", 2]);
    await page.mouse.click(VIEWPORT.width / 2 + 30, VIEWPORT.height / 2 + 30);
    const p = await lastPick();
    checkAgainstNode(p, await reference("quad.obj", quad));
    assert.equal(p.hit, true);
  });

  await t.test("a file of another type is refused with a message", async () => {
    await drop([["notes.txt", "hello"]]);
    assert.equal(await page.getAttribute("#status", "data-state"), "error");
    assert.match(await page.textContent("#status"), /could not load: drop a \.obj/);
    // The page logs that error to the console too: expected here.
    const logged = problems.findIndex((m) => m.includes("drop a .obj"));
    assert.ok(logged >= 0, "the refusal was not logged");
    problems.splice(logged, 1);
  });

  await t.test("buildAsync: a 2M-triangle build in a Web Worker, the page's timer ticking", async () => {
    const result = await page.evaluate(async () => {
      const m = await import("/meshray.js");
      await m.init();
      // A 1000 × 1000 grid: two million triangles.
      const { positions, indices } = (await import("/test/grid.mjs")).grid(1000);
      const stamps = [];
      const timer = setInterval(() => stamps.push(performance.now()), 5);
      const start = performance.now();
      const bvh = await m.buildAsync(positions, indices, { quality: "fast" });
      // The last gap runs to here: it holds the load of the worker's bytes on this thread.
      stamps.push(performance.now());
      const elapsed = performance.now() - start;
      clearInterval(timer);
      let longest = 0;
      for (let k = 1; k < stamps.length; k++) longest = Math.max(longest, stamps[k] - stamps[k - 1]);
      const here = new m.BVH(positions, indices, { quality: "fast" });
      const rays = new Float32Array(6 * 500);
      for (let k = 0; k < 500; k++) rays.set([k * 2 + 0.3, 5, (k * 7) % 1000 + 0.6, 0, -1, 0], 6 * k);
      const a = bvh.closestHits(rays).distance;
      const b = here.closestHits(rays).distance;
      const same = a.every((t, k) => Object.is(t, b[k])) && a.every((t) => t < Infinity);
      const triangles = bvh.triangleCount;
      bvh.free();
      here.free();
      return { ticks: stamps.length, elapsed, longest, same, triangles };
    });
    assert.equal(result.triangles, 2_000_000);
    assert.ok(result.same, "the worker's tree answers as one built on the page");
    // The page's timer ran through the build, not after one long stall.
    assert.ok(result.ticks >= result.elapsed / 5 / 3, JSON.stringify(result));
    console.log(`buildAsync in Chromium: ${result.elapsed.toFixed(0)} ms, ${result.ticks} ticks, longest gap ${result.longest.toFixed(0)} ms`);
  });

  assert.deepEqual(problems, [], "the page reported errors");
});
