// A large test mesh that needs no file: an n × n grid of 2·n² triangles over a wavy height
// field. Plain JavaScript (no Node modules), so a page under test imports it too
// (`/test/grid.mjs` from the demo server).

/** `{ positions: Float32Array, indices: Uint32Array }` of the n × n grid. */
export function grid(n) {
  const positions = new Float32Array(3 * (n + 1) * (n + 1));
  for (let j = 0, k = 0; j <= n; j++) {
    for (let i = 0; i <= n; i++, k += 3) {
      positions[k] = i;
      positions[k + 1] = Math.sin(i * 0.1) * Math.cos(j * 0.1);
      positions[k + 2] = j;
    }
  }
  const indices = new Uint32Array(6 * n * n);
  for (let j = 0, k = 0; j < n; j++) {
    for (let i = 0; i < n; i++, k += 6) {
      const v = j * (n + 1) + i;
      indices[k] = v;
      indices[k + 1] = v + 1;
      indices[k + 2] = v + n + 1;
      indices[k + 3] = v + 1;
      indices[k + 4] = v + n + 2;
      indices[k + 5] = v + n + 1;
    }
  }
  return { positions, indices };
}
