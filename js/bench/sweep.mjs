#!/usr/bin/env node
// A small sphere's sweep against the closest hit of the same rays, through the calls a user
// of the npm package makes: `bvh.castSphere(origin, direction, radius)` against
// `bvh.closestHit(origin, direction)`, one ray per call, and `bvh.castSpheres(rays, radius)`
// against `bvh.closestHits(rays)`, every ray in one call, in Node on one thread (issue 41's
// target: a sweep at least half as fast as a closest hit).
//
//   node js/bench/sweep.mjs [--rays N] [--rounds N] [MESH...]
//
//   MESH        stanford-bunny armadillo crytek-sponza (the default), or a path to an .obj
//   --rays N    random rays per mesh (default 100000): from a sphere around the mesh
//               towards random points of its box, as the Rust sweep bench's
//   --rounds N  timed rounds, alternating the two calls (default 3); the median is reported
//
// The sphere's radius is 0.001 of the mesh's half diagonal. Meshes come from
// $MESHRAY_MESHES (else ../shared/meshes beside the repository). Prints a markdown table.

import { readFileSync } from "node:fs";
import { join, resolve, dirname, basename } from "node:path";
import { fileURLToPath } from "node:url";
import { init, BVH } from "../meshray.js";
import { parseOBJ, SHARED_MESHES } from "./common.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..");

function parseArgs(argv) {
  const options = { rays: 100_000, rounds: 3, meshes: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      console.log("usage: node js/bench/sweep.mjs [--rays N] [--rounds N] [MESH...]");
      process.exit(0);
    } else if (arg === "--rays" || arg === "--rounds") {
      const value = Number(argv[++i]);
      if (!(Number.isInteger(value) && value > 0)) throw new Error(`${arg} wants a positive integer`);
      options[arg.slice(2)] = value;
    } else if (arg.startsWith("--")) {
      throw new Error(`unknown option ${arg}`);
    } else {
      options.meshes.push(arg);
    }
  }
  if (options.meshes.length === 0) options.meshes = ["stanford-bunny", "armadillo", "crytek-sponza"];
  return options;
}

function meshPath(name) {
  if (name.endsWith(".obj")) return name;
  const root = process.env.MESHRAY_MESHES ?? join(repo, "..", "shared", "meshes");
  const file = SHARED_MESHES[name];
  if (!file) throw new Error(`unknown mesh ${name}`);
  return join(root, file);
}

// A seeded xorshift: the same rays every run.
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

function rays(positions, n) {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i += 3) {
    for (let a = 0; a < 3; a++) {
      lo[a] = Math.min(lo[a], positions[i + a]);
      hi[a] = Math.max(hi[a], positions[i + a]);
    }
  }
  const centre = lo.map((l, a) => (l + hi[a]) / 2);
  const half = Math.hypot(...hi.map((h, a) => h - lo[a])) / 2;
  const next = random(7);
  const out = [];
  for (let r = 0; r < n; r++) {
    const z = 2 * next() - 1;
    const phi = 2 * Math.PI * next();
    const s = Math.sqrt(Math.max(0, 1 - z * z));
    const origin = [s * Math.cos(phi), s * Math.sin(phi), z].map((u, a) => centre[a] + 1.5 * half * u);
    const target = lo.map((l, a) => l + (hi[a] - l) * next());
    out.push([origin, target.map((t, a) => t - origin[a])]);
  }
  return { rays: out, half };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const options = parseArgs(process.argv.slice(2));
  await init();
  console.log(`Node ${process.version}, ${options.rays} random rays per mesh, median of ${options.rounds} rounds\n`);
  console.log(
    "| mesh | closestHit | castSphere | castSphere / closestHit | closestHits | castSpheres | castSpheres / closestHits | hits (closest, sweep) |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---|");
  for (const name of options.meshes) {
    const { positions, indices } = parseOBJ(readFileSync(meshPath(name)));
    const bvh = new BVH(positions, indices);
    const { rays: set, half } = rays(positions, options.rays);
    const radius = 0.001 * half;
    const flat = Float32Array.from(set.flatMap(([o, d]) => [...o, ...d]));
    const rates = { closest: [], sweep: [], closestBatch: [], sweepBatch: [] };
    const hits = {};
    const count = (batch) => batch.triangle.reduce((n, t) => n + (t >= 0), 0);
    const calls = {
      closest: () => set.reduce((n, [o, d]) => n + (bvh.closestHit(o, d) !== null), 0),
      sweep: () => set.reduce((n, [o, d]) => n + (bvh.castSphere(o, d, radius) !== null), 0),
      closestBatch: () => count(bvh.closestHits(flat)),
      sweepBatch: () => count(bvh.castSpheres(flat, radius)),
    };
    for (let round = 0; round < options.rounds; round++) {
      for (const kind of Object.keys(calls)) {
        const start = performance.now();
        hits[kind] = calls[kind]();
        const seconds = (performance.now() - start) / 1000;
        rates[kind].push(set.length / seconds / 1e6);
      }
    }
    for (const [one, batch] of [["closest", "closestBatch"], ["sweep", "sweepBatch"]]) {
      if (hits[one] !== hits[batch]) throw new Error(`${name}: ${one} found ${hits[one]}, the batch ${hits[batch]}`);
    }
    const [c, s, cb, sb] = ["closest", "sweep", "closestBatch", "sweepBatch"].map((k) => median(rates[k]));
    const label = name.endsWith(".obj") ? basename(name, ".obj") : name;
    const rate = (x) => `${x.toFixed(3)} M/s`;
    console.log(
      `| ${label} | ${rate(c)} | ${rate(s)} | ${(s / c).toFixed(2)} | ${rate(cb)} | ${rate(sb)} | ${(sb / cb).toFixed(2)} | ${hits.closest}, ${hits.sweep} |`,
    );
    bvh.free();
  }
}

await main();
