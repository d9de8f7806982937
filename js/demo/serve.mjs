// A tiny static server for the demo: serves the js/ directory (so the page can import
// ../meshray.js, ../dist/*.wasm and ../node_modules/three) and the repository's assets/
// directory under /assets/ (the default model).
//
//   node demo/serve.mjs [port]     # or PORT=8080; default: a free port. Prints the URL.
//
// The test imports `startServer` instead.

import http from "node:http";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const JS_DIR = fileURLToPath(new URL("..", import.meta.url));
const ASSETS_DIR = fileURLToPath(new URL("../../assets/", import.meta.url));

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".css": "text/css",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".obj": "text/plain; charset=utf-8",
  ".mtl": "text/plain; charset=utf-8",
  ".gltf": "model/gltf+json",
  ".glb": "model/gltf-binary",
};

// The file a URL path names, or null when it leaves its root.
function fileFor(pathname) {
  let root = JS_DIR;
  let rest = pathname;
  if (pathname.startsWith("/assets/")) {
    root = ASSETS_DIR;
    rest = pathname.slice("/assets".length);
  }
  const file = path.join(root, decodeURIComponent(rest));
  return file.startsWith(root) ? file : null;
}

async function handle(request, response) {
  const { pathname } = new URL(request.url, "http://localhost");
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405).end();
    return;
  }
  if (pathname === "/" || pathname === "/demo") {
    response.writeHead(302, { Location: "/demo/" }).end();
    return;
  }
  let file = fileFor(pathname);
  let info = file && (await stat(file).catch(() => null));
  if (info?.isDirectory()) {
    file = path.join(file, "index.html");
    info = await stat(file).catch(() => null);
  }
  if (!info?.isFile()) {
    response.writeHead(404, { "Content-Type": "text/plain" }).end(`not found: ${pathname}\n`);
    return;
  }
  response.writeHead(200, {
    "Content-Type": TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
    "Content-Length": info.size,
    "Cache-Control": "no-store",
    // Cross-origin isolation: performance.now() then ticks in 5 µs steps instead of 100 µs.
    // Everything the page loads is same-origin, so it costs nothing.
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
  });
  if (request.method === "HEAD") response.end();
  else createReadStream(file).pipe(response);
}

/**
 * Starts the server on `port` (0: a free one) of `host`. Resolves to
 * `{ url, server, close() }`, `url` being the demo page's address.
 */
export function startServer({ port = 0, host = "127.0.0.1" } = {}) {
  const server = http.createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent) response.writeHead(500, { "Content-Type": "text/plain" });
      response.end(`${error}\n`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const url = `http://${host}:${server.address().port}/demo/`;
      resolve({ url, server, close: () => new Promise((done) => server.close(done)) });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
  const { url } = await startServer({ port, host: process.env.HOST ?? "127.0.0.1" });
  console.log(`meshray demo: ${url}`);
}
