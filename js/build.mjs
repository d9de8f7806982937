// Builds the package's two WebAssembly modules into dist/: meshray-simd.wasm (simd128, the
// wide-node slab test on wasm's 128-bit lanes) and meshray.wasm (no SIMD, for engines
// without it; meshray.js picks one by feature detection). Needs cargo and the
// wasm32-unknown-unknown target (`rustup target add wasm32-unknown-unknown`).
//
//   node build.mjs      (or npm run build)
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
mkdirSync(join(here, "dist"), { recursive: true });

for (const [name, flags] of [
  ["meshray-simd.wasm", "-C target-feature=+simd128"],
  ["meshray.wasm", ""],
]) {
  // One target directory per flag set, so switching does not rebuild everything.
  const target = join(root, "target", name.includes("simd") ? "wasm-simd" : "wasm-scalar");
  execFileSync(
    "cargo",
    [
      "build", "--release", "--target", "wasm32-unknown-unknown", "-p", "meshray-js",
      // Whole-program optimisation and no symbol names: smaller and faster modules.
      "--config", "profile.release.lto=true",
      "--config", "profile.release.codegen-units=1",
      "--config", "profile.release.strip=true",
    ],
    { cwd: root, stdio: "inherit", env: { ...process.env, RUSTFLAGS: flags, CARGO_TARGET_DIR: target } },
  );
  const out = join(here, "dist", name);
  copyFileSync(join(target, "wasm32-unknown-unknown", "release", "meshray_js.wasm"), out);
  const gz = gzipSync(readFileSync(out), { level: 9 }).length;
  console.log(`${name}: ${statSync(out).size} bytes, ${gz} gzipped`);
}
