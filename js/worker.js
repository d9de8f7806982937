// meshray's build worker: builds a BVH off the page's main thread and sends it back as bytes
// (BVH.toBytes), which the main thread loads (BVH.fromBytes, checked whole). Started by
// `buildAsync` in meshray.js, as a module Web Worker in browsers and a worker_threads
// Worker in Node; not meant to be imported.
import { init, BVH } from "./meshray.js";

let post;

async function onMessage({ id, positions, indices, options }) {
  try {
    await init();
    const bvh = new BVH(positions, indices, options);
    const bytes = bvh.toBytes();
    bvh.free();
    post({ id, bytes }, [bytes.buffer]);
  } catch (error) {
    post({ id, error: String(error?.message ?? error) });
  }
}

if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  post = (message, transfer) => self.postMessage(message, transfer);
  self.onmessage = (event) => onMessage(event.data);
} else {
  const { parentPort } = await import("node:worker_threads");
  post = (message, transfer) => parentPort.postMessage(message, transfer);
  parentPort.on("message", onMessage);
}
