#!/usr/bin/env node
// meshray (this package) against three-mesh-bvh, in Node and in headless Chromium, one
// thread, on the shared meshes and the Rust tool's standard ray sets.
//
//   node js/bench/bench.mjs [--rays N] [--passes N] [--raycaster-rays N]
//                           [--node-only | --browser-only] [MESH...]
//
//   MESH            stanford-bunny armadillo crytek-sponza conference lost-empire (the
//                   default: all five), or a path to an .obj file
//   --rays N        at most N rays per set, spread evenly over the set (default: all)
//   --passes N      timed passes, the median is reported (default 3)
//   --raycaster-rays N  rays per set through THREE.Raycaster (default 100000)
//   --node-only     skip the browser; --browser-only skips Node
//   --from-json F   print the tables of an earlier run's results.json, measuring nothing
//
// Meshes come from $MESHRAY_MESHES (else ../shared/meshes beside the repository). Ray sets (primary: a
// 1024×1024 pinhole image, random: 1M rays, secondary: a bounce from each primary hit) are
// written once by `target/release/meshray bench MESH --write-rays DIR --passes 1` and kept
// in target/js-bench/<mesh>/. Per mesh and set it measures, alternating the libraries pass
// by pass: the build (meshray `new BVH` default quality; three-mesh-bvh `new MeshBVH` with
// SAH, and CENTER, its default), closest hit (meshray `closestHits` over the whole set;
// three-mesh-bvh `raycastFirst(ray, DoubleSide, near, far)` in a loop with one THREE.Ray),
// any hit (meshray `anyHits`; three-mesh-bvh has no any-hit query, so its column repeats
// raycastFirst), single rays through `Raycaster.intersectObject` with firstHitOnly (the
// two libraries' acceleratedRaycast; meshray's from js/three.js when it exists), and
// memory. Every 97th ray's closest distance is compared between the libraries.
// The measuring code is common.mjs, run by Node here and by the page bench-page.mjs.
// Prints a markdown table; results also go to target/js-bench/results.{md,json}.

import { spawnSync, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync, statSync, createReadStream } from "node:fs";
import { createServer } from "node:http";
import { tmpdir, cpus } from "node:os";
import { join, resolve, dirname, basename, extname, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseOBJ, parseRays, sampleRays, benchMesh, SHARED_MESHES as MESHES } from "./common.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const jsDir = resolve(here, "..");
const repo = resolve(jsDir, "..");
const meshesDir = process.env.MESHRAY_MESHES ?? join(repo, "..", "shared", "meshes");
const cacheDir = join(repo, "target", "js-bench");
const tool = join(repo, "target", "release", "meshray");
const chromiumPath = "/usr/bin/chromium";

const SETS = ["primary", "random", "secondary"];

function parseArgs(argv) {
  const o = { rays: Infinity, passes: 3, raycasterRays: 100000, node: true, browser: true, meshes: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const number = () => {
      const v = Number(argv[++i]);
      if (!(v >= 1) || !Number.isInteger(v)) throw new Error(`${a} needs a whole number >= 1`);
      return v;
    };
    if (a === "--rays") o.rays = number();
    else if (a === "--passes") o.passes = number();
    else if (a === "--raycaster-rays") o.raycasterRays = number();
    else if (a === "--node-only") o.browser = false;
    else if (a === "--browser-only") o.node = false;
    else if (a === "--from-json") o.fromJson = argv[++i];
    else if (a === "-h" || a === "--help") {
      console.log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1, 30).join("\n"));
      process.exit(0);
    } else if (a.startsWith("-")) throw new Error(`unknown option ${a}`);
    else o.meshes.push(a);
  }
  if (!o.node && !o.browser) throw new Error("--node-only and --browser-only exclude each other");
  if (o.meshes.length === 0) o.meshes = Object.keys(MESHES);
  o.meshes = o.meshes.map((m) => {
    const path = MESHES[m] ? join(meshesDir, MESHES[m]) : resolve(m);
    if (!existsSync(path)) throw new Error(`no mesh ${m} (${path})`);
    return { name: MESHES[m] ? m : basename(m, extname(m)), path };
  });
  return o;
}

// The Rust tool's ray sets for a mesh, made once; also its own line about the tree (the
// structure's bytes per triangle).
function ensureRays(mesh) {
  const dir = join(cacheDir, mesh.name);
  const info = join(dir, "meshray-bench.txt");
  const have = SETS.every((s) => existsSync(join(dir, `${s}.rays`))) && existsSync(info);
  if (!have) {
    if (!existsSync(tool)) throw new Error(`${tool} is missing: build the Rust tool first (cargo build --release)`);
    mkdirSync(dir, { recursive: true });
    console.error(`writing the ray sets of ${mesh.name} to ${dir}`);
    const run = spawnSync(tool, ["bench", mesh.path, "--write-rays", dir, "--passes", "1"], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`${tool} failed: ${run.stderr}`);
    writeFileSync(info, run.stdout);
  }
  const text = readFileSync(info, "utf8");
  const bpt = /([\d.]+) bytes\/triangle/.exec(text);
  const rustHits = {};
  for (const m of text.matchAll(/^[ \t]*(\w+)[^:\n]*:[ \t]+(\d+) rays,[ \t]+(\d+) hits/gm)) rustHits[m[1]] = { rays: +m[2], hits: +m[3] };
  return { dir, bytesPerTriangle: bpt ? Number(bpt[1]) : null, rustHits };
}

async function loadAdapter() {
  const path = join(jsDir, "three.js");
  if (!existsSync(path)) return null;
  try {
    const adapter = await import(pathToFileURL(path).href);
    if (typeof adapter.computeBoundsTree !== "function" || typeof adapter.acceleratedRaycast !== "function") {
      console.error("js/three.js lacks computeBoundsTree or acceleratedRaycast: Raycaster column without meshray");
      return null;
    }
    if (typeof adapter.init === "function") await adapter.init();
    await (await import(pathToFileURL(join(jsDir, "meshray.js")).href)).init(); // the adapter's instance
    return adapter;
  } catch (e) {
    console.error(`js/three.js did not load (${e.message}): Raycaster column without meshray`);
    return null;
  }
}

async function runNode(options, rayInfo, adapter) {
  const results = [];
  for (const mesh of options.meshes) {
    console.error(`node: ${mesh.name}`);
    let t = performance.now();
    const parsed = { name: mesh.name, ...parseOBJ(readFileSync(mesh.path)) };
    console.error(`  parsed ${parsed.indices.length / 3} triangles in ${(performance.now() - t).toFixed(0)} ms`);
    const sets = SETS.map((name) => {
      const file = parseRays(readFileSync(join(rayInfo[mesh.name].dir, `${name}.rays`)));
      return { name, tmin: file.tmin, count: file.count, width: file.width, rays: sampleRays(file.rays, options.rays, file.width) };
    });
    const result = await benchMesh(parsed, sets, {
      passes: options.passes,
      raycasterRays: options.raycasterRays,
      adapter,
      log: (s) => console.error(s),
    });
    result.adapter = adapter !== null;
    for (const row of result.sets) row.setCount = sets.find((s) => s.name === row.set).count;
    results.push(result);
  }
  return results;
}

// A tiny static server: /js/... from js/, /meshes/<name>.obj, /rays/<name>/<set>.rays.
function serve(options) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };
  const meshPaths = new Map(options.meshes.map((m) => [m.name, m.path]));
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://localhost");
    const path = decodeURIComponent(url.pathname);
    let file = null;
    if (path.startsWith("/js/")) {
      const f = resolve(jsDir, "." + path.slice(3));
      if (f.startsWith(jsDir + sep)) file = f;
    } else if (path.startsWith("/meshes/")) {
      file = meshPaths.get(basename(path, ".obj")) ?? null;
    } else if (path.startsWith("/rays/")) {
      const [, , name, set] = path.split("/");
      if (meshPaths.has(name) && SETS.includes(basename(set ?? "", ".rays"))) file = join(cacheDir, name, set);
    }
    if (!file || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, {
      "content-type": types[extname(file)] ?? "application/octet-stream",
      "content-length": statSync(file).size,
      "cache-control": "no-store",
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

async function runBrowser(options, adapter) {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing`);
  const { chromium } = await import("playwright-core");
  const server = await serve(options);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const profile = mkdtempSync(join(tmpdir(), "meshray-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  const results = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (m) => console.error(`  [chromium] ${m.text()}`));
    page.on("pageerror", (e) => console.error(`  [chromium error] ${e.message}`));
    for (const mesh of options.meshes) {
      console.error(`chromium: ${mesh.name}`);
      // A fresh page per mesh: the previous mesh's memory goes with it.
      await page.goto(`${origin}/js/bench/index.html`);
      await page.waitForFunction(() => window.benchReady === true);
      const config = {
        name: mesh.name,
        obj: `/meshes/${mesh.name}.obj`,
        sets: SETS.map((s) => ({ name: s, url: `/rays/${mesh.name}/${s}.rays` })),
        rays: Number.isFinite(options.rays) ? options.rays : null,
        passes: options.passes,
        raycasterRays: options.raycasterRays,
        adapter: adapter !== null, // decided once, so both runs measure the same
      };
      results.push(await page.evaluate((c) => window.benchMesh(c), config));
    }
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return results;
}

// ---------------------------------------------------------------------------------------
// Report.

const f2 = (x) => (x == null ? "–" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const mb = (b) => (b / 2 ** 20).toFixed(1);
const ratio = (a, b) => (a == null || b == null ? "–" : `${(a / b).toFixed(2)}×`);

function table(env, results, rayInfo) {
  const lines = [];
  lines.push(`### ${env}`, "");
  lines.push("| mesh | set | rays | library | build ms | closest Mrays/s | any Mrays/s | Raycaster Mrays/s | memory MB |");
  lines.push("|---|---|---:|---|---:|---:|---:|---:|---:|");
  for (const r of results) {
    for (const s of r.sets) {
      const rays = s.rays === s.setCount ? `${s.rays}` : `${s.rays} of ${s.setCount}`;
      const mr = s.meshray;
      const tb = s.tmb;
      lines.push(`| ${r.mesh} | ${s.set} | ${rays} | meshray | ${f2(r.build.meshray)} | ${f2(mr.closest)} | ${f2(mr.any)} | ${f2(mr.raycaster)} | ${mb(r.meshrayWasmGrowth)} |`);
      lines.push(`| | | | three-mesh-bvh | ${f2(r.build.sah)} | ${f2(tb.closest)} | ${f2(tb.any)}¹ | ${f2(tb.raycaster)} | ${mb(r.tmbBytes)} |`);
      lines.push(`| | | | **ratio** | ${ratio(r.build.meshray, r.build.sah)} | **${ratio(mr.closest, tb.closest)}** | ${ratio(mr.any, tb.any)} | ${ratio(mr.raycaster, tb.raycaster)} | ${ratio(r.meshrayWasmGrowth, r.tmbBytes)} |`);
    }
  }
  lines.push("");
  lines.push("| mesh | triangles | three-mesh-bvh CENTER build ms (its default) | CENTER roots MB | meshray structure MB (Rust stats, no mesh) | meshray mesh copy MB | meshray wasm memory after the sets MB |");
  lines.push("|---|---:|---:|---:|---:|---:|---:|");
  for (const r of results) {
    const bpt = rayInfo[r.mesh]?.bytesPerTriangle;
    lines.push(`| ${r.mesh} | ${r.triangles} | ${f2(r.build.center)} | ${mb(r.tmbCenterBytes)} | ${bpt ? mb(bpt * r.triangles) : "–"} | ${mb(r.meshBytes)} | ${mb(r.meshrayWasmMemory)} |`);
  }
  lines.push("");
  lines.push("| mesh | set | closest distances checked (every 97th ray) | hit/miss differ | distance differs | hits meshray / three-mesh-bvh (all rays) | Rust tool hits | meshray any≠closest hit/miss | Raycaster route disagreements |");
  lines.push("|---|---|---:|---:|---:|---|---:|---:|---:|");
  for (const r of results) {
    for (const s of r.sets) {
      const rust = rayInfo[r.mesh]?.rustHits?.[s.set];
      const rustCell = rust && s.rays === s.setCount ? `${rust.hits}` : "–";
      const rc = s.raycasterCheck ? `${s.raycasterCheck.disagreements} of ${s.raycasterCheck.checked}` : "–";
      lines.push(`| ${r.mesh} | ${s.set} | ${s.check.checked} | ${s.check.hitMiss} | ${s.check.distance} | ${s.hits.meshray} / ${s.hits.tmb} | ${rustCell} | ${s.anyVsClosestMismatch} | ${rc} |`);
    }
  }
  const examples = results.flatMap((r) => r.sets.flatMap((s) => s.check.examples.map((e) => `${r.mesh}/${s.set} ray ${e.ray}: meshray ${e.a}, three-mesh-bvh ${e.b}`)));
  if (examples.length) lines.push("", "Disagreements (first few per set): " + examples.slice(0, 12).join("; ") + ".");
  return lines.join("\n");
}

function cpuName() {
  try {
    const m = /^model name\s*:\s*(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    return m ? m[1] : cpus()[0]?.model;
  } catch {
    return cpus()[0]?.model ?? "unknown";
  }
}

function chromiumVersion() {
  try {
    return execFileSync(chromiumPath, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const rayInfo = {};
  let out;
  if (options.fromJson) {
    out = JSON.parse(readFileSync(options.fromJson, "utf8"));
    Object.assign(options, out.options, { rays: out.options.rays ?? Infinity });
    out.options.meshes = options.meshes = (out.nodeResults ?? out.browserResults).map((r) => ({ name: r.mesh, path: join(meshesDir, MESHES[r.mesh] ?? "") }));
  } else {
    out = { date: new Date().toISOString(), node: process.version, cpu: cpuName(), options: { ...options, rays: Number.isFinite(options.rays) ? options.rays : null } };
  }
  for (const mesh of options.meshes) rayInfo[mesh.name] = ensureRays(mesh);
  const started = new Date(out.date);
  if (!options.fromJson) {
    const adapter = await loadAdapter();
    if (options.node) out.nodeResults = await runNode(options, rayInfo, adapter);
    if (options.browser) {
      out.chromium = chromiumVersion();
      out.browserResults = await runBrowser(options, adapter);
    }
  }
  const three = JSON.parse(readFileSync(join(jsDir, "node_modules/three/package.json"), "utf8")).version;
  const tmb = JSON.parse(readFileSync(join(jsDir, "node_modules/three-mesh-bvh/package.json"), "utf8")).version;
  const first = out.nodeResults?.[0] ?? out.browserResults?.[0];
  const adapterNote = first?.adapter ? "meshray's js/three.js adapter" : "no meshray adapter (js/three.js absent)";
  const md = [
    `## meshray vs three-mesh-bvh ${tmb} (three ${three}), one thread`,
    "",
    `${started.toISOString().slice(0, 10)}; Node ${out.node}; ${out.chromium ?? "no browser run"}; CPU ${out.cpu} (${cpus().length} logical); meshray wasm build: ${first?.meshrayBuild}; ` +
      `rays per set: ${Number.isFinite(options.rays) ? `at most ${options.rays} (primary: every s-th pixel and row; others: evenly strided)` : "all"}; median of ${options.passes} passes, libraries alternating; Raycaster column: ${options.raycasterRays} rays per set, ${adapterNote}.`,
    "",
    "Build: meshray `new BVH` (default quality) vs three-mesh-bvh `new MeshBVH({strategy: SAH})`. " +
      "Memory: meshray = growth of its wasm memory over the first build (mesh copy + structure + build scratch high-water mark, 64 KiB pages); " +
      "three-mesh-bvh = its `serialize(bvh).roots` buffers (nodes only; it keeps using the geometry's own index, reordered in place, and positions). " +
      "Ratios are meshray / three-mesh-bvh (for build ms and memory, below 1 is better for meshray). ¹ three-mesh-bvh has no any-hit query; its column repeats raycastFirst.",
    "",
  ];
  if (out.nodeResults) md.push(table(`Node ${out.node}`, out.nodeResults, rayInfo), "");
  if (out.browserResults) md.push(table(`Chromium (${out.chromium}, headless)`, out.browserResults, rayInfo), "");
  const text = md.join("\n");
  console.log(text);
  if (options.fromJson) return;
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(join(cacheDir, "results.md"), text + "\n");
  writeFileSync(join(cacheDir, "results.json"), JSON.stringify(out, null, 1));
}

main().catch((e) => {
  console.error(e.stack ?? String(e));
  process.exit(1);
});
