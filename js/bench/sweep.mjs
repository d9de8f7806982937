#!/usr/bin/env node
// A small sphere's sweep against the closest hit of the same rays, through the calls a user
// of the npm package makes: `bvh.castSphere(origin, direction, radius)` and
// `bvh.closestHit(origin, direction)`, one ray per call, in Node on one thread (issue 41's
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
  console.log("| mesh | closestHit | castSphere | castSphere / closestHit | hits (closest, sweep) |");
  console.log("|---|---:|---:|---:|---|");
  for (const name of options.meshes) {
    const { positions, indices } = parseOBJ(readFileSync(meshPath(name)));
    const bvh = new BVH(positions, indices);
    const { rays: set, half } = rays(positions, options.rays);
    const radius = 0.001 * half;
    const rates = { closest: [], sweep: [] };
    let hits = { closest: 0, sweep: 0 };
    const calls = {
      closest: (o, d) => bvh.closestHit(o, d),
      sweep: (o, d) => bvh.castSphere(o, d, radius),
    };
    for (let round = 0; round < options.rounds; round++) {
      for (const kind of ["closest", "sweep"]) {
        let found = 0;
        const start = performance.now();
        for (const [o, d] of set) found += calls[kind](o, d) !== null;
        const seconds = (performance.now() - start) / 1000;
        rates[kind].push(set.length / seconds / 1e6);
        hits[kind] = found;
      }
    }
    const [c, s] = [median(rates.closest), median(rates.sweep)];
    const label = name.endsWith(".obj") ? basename(name, ".obj") : name;
    console.log(
      `| ${label} | ${c.toFixed(3)} M/s | ${s.toFixed(3)} M/s | ${(s / c).toFixed(2)} | ${hits.closest}, ${hits.sweep} |`,
    );
    bvh.free();
  }
}

await main();
