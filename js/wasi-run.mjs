// Runs a wasm32-wasip1 program under Node's WASI: cargo's runner for the crate's tests on a
// wasm target (`CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/js/wasi-run.mjs"`: an absolute
// path, since cargo runs each test binary in its own package's directory). The whole file
// system is preopened, so the tests read assets/ and the shared meshes by their host paths;
// the environment passes through (MESHRAY_MESHES, CI). Exits with the program's status.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import process from "node:process";

const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: "preview1",
  args: [file, ...args],
  env: process.env,
  preopens: { "/": "/" },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
