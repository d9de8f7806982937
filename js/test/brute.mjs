// Brute-force oracles in f64 (JavaScript's numbers) over every triangle, to check the BVH
// against: ray hits with Cramer's rule, and the nearest point of a triangle.

/** The three corners of triangle `t`, as [x, y, z] arrays of f64. */
export function corners(mesh, t) {
  const { positions: p, indices } = mesh;
  return [0, 1, 2].map((k) => {
    const i = indices ? indices[3 * t + k] : 3 * t + k;
    return [p[3 * i], p[3 * i + 1], p[3 * i + 2]];
  });
}

const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];

/**
 * The ray's hit of triangle `abc` by Cramer's rule in f64, or null: `{ t, u, v, margin,
 * front }`, where `margin` is the least of u, v and 1-u-v (how far inside the edges; near
 * 0 the f32 answer may go either way) and `front` whether the corners turn
 * counter-clockwise seen from the origin. Parallel rays and degenerate triangles miss.
 */
export function hitTriangle(o, d, [a, b, c]) {
  const e1 = sub(b, a);
  const e2 = sub(c, a);
  const p = cross(d, e2);
  const det = dot(e1, p);
  if (det === 0 || !Number.isFinite(det)) return null;
  const s = sub(o, a);
  const q = cross(s, e1);
  const u = dot(s, p) / det;
  const v = dot(d, q) / det;
  const t = dot(e2, q) / det;
  const margin = Math.min(u, v, 1 - u - v);
  return { t, u, v, margin, front: det > 0 };
}

/**
 * Every hit of ray `k` of `rays` (ox oy oz dx dy dz) with `t` in [near, far] on the faces
 * `cull` keeps ("none"; "back": front faces only; "front": back faces only), nearest first: `{ t, triangle, u, v, margin }`.
 * Hits just outside an edge (margin above -slack) are kept and flagged `outside`, so a
 * comparison can call them borderline.
 */
export function bruteHits(mesh, rays, k, { near = 0, far = Infinity, cull = "none" } = {}, slack = 1e-5) {
  const o = [rays[6 * k], rays[6 * k + 1], rays[6 * k + 2]];
  const d = [rays[6 * k + 3], rays[6 * k + 4], rays[6 * k + 5]];
  const count = (mesh.indices ? mesh.indices.length : mesh.positions.length / 3) / 3;
  const hits = [];
  for (let t = 0; t < count; t++) {
    const h = hitTriangle(o, d, corners(mesh, t));
    if (!h || h.margin < -slack || h.t < near * (1 - 1e-6) || h.t > far * (1 + 1e-6)) continue;
    if ((cull === "back" && !h.front) || (cull === "front" && h.front)) continue;
    hits.push({ ...h, triangle: t, outside: h.margin < 0 });
  }
  return hits.sort((x, y) => x.t - y.t);
}

/** The nearest point of triangle `abc` to `p` (Ericson, Real-Time Collision Detection 5.1.5). */
export function nearestOnTriangle(p, [a, b, c]) {
  const ab = sub(b, a);
  const ac = sub(c, a);
  const ap = sub(p, a);
  const d1 = dot(ab, ap);
  const d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const bp = sub(p, b);
  const d3 = dot(ab, bp);
  const d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const vc = d1 * d4 - d3 * d2;
  const along = (x, y, s) => [x[0] + s * y[0], x[1] + s * y[1], x[2] + s * y[2]];
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return along(a, ab, d1 / (d1 - d3));
  const cp = sub(p, c);
  const d5 = dot(ab, cp);
  const d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return along(a, ac, d2 / (d2 - d6));
  const va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) return along(b, sub(c, b), (d4 - d3) / (d4 - d3 + (d5 - d6)));
  const denom = 1 / (va + vb + vc);
  return along(along(a, ab, vb * denom), ac, vc * denom);
}

/** The distance from `p` to the mesh, and the nearest triangle, over every triangle. */
export function bruteNearest(mesh, p) {
  const count = (mesh.indices ? mesh.indices.length : mesh.positions.length / 3) / 3;
  let best = { distance: Infinity, triangle: -1 };
  for (let t = 0; t < count; t++) {
    const q = nearestOnTriangle(p, corners(mesh, t));
    const distance = Math.hypot(q[0] - p[0], q[1] - p[1], q[2] - p[2]);
    if (distance < best.distance) best = { distance, triangle: t };
  }
  return best;
}

/**
 * The generalized winding number of the mesh at `p` in f64 over every triangle: the sum of
 * the signed solid angles the triangles subtend there (Van Oosterom and Strackee 1983,
 * corners relative to `p`), over 4π. Positive for triangles counter-clockwise seen from `p`'s
 * far side, so 1 inside a closed mesh whose triangles face outwards.
 */
export function bruteWinding(mesh, p) {
  const { positions: q, indices } = mesh;
  const count = (indices ? indices.length : q.length / 3) / 3;
  const [px, py, pz] = p;
  let sum = 0;
  for (let t = 0; t < count; t++) {
    const i = indices ? indices[3 * t] : 3 * t;
    const j = indices ? indices[3 * t + 1] : 3 * t + 1;
    const k = indices ? indices[3 * t + 2] : 3 * t + 2;
    const ax = q[3 * i] - px, ay = q[3 * i + 1] - py, az = q[3 * i + 2] - pz;
    const bx = q[3 * j] - px, by = q[3 * j + 1] - py, bz = q[3 * j + 2] - pz;
    const cx = q[3 * k] - px, cy = q[3 * k + 1] - py, cz = q[3 * k + 2] - pz;
    const la = Math.sqrt(ax * ax + ay * ay + az * az);
    const lb = Math.sqrt(bx * bx + by * by + bz * bz);
    const lc = Math.sqrt(cx * cx + cy * cy + cz * cz);
    const det = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx);
    const ab = ax * bx + ay * by + az * bz;
    const ac = ax * cx + ay * cy + az * cz;
    const bc = bx * cx + by * cy + bz * cz;
    sum += 2 * Math.atan2(det, la * lb * lc + ab * lc + ac * lb + bc * la);
  }
  return sum / (4 * Math.PI);
}
