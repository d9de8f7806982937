#!/usr/bin/env python3
# Usage (from the repo root, after `cargo build --release -p meshray-cli`; needs numpy):
#   python3 tests/heldout_pick.py ../shared/meshes/stanford-bunny/stanford-bunny.obj 400
# Casts N seeded random rays (sphere of radius 1.5h around the bounds into the bounds) through
# `pick --json` and compares each answer with an f64 brute force over every triangle.
# Held-out check: random rays through `pick --json` vs an f64 numpy brute force.
import subprocess, sys, json
import numpy as np
mesh_path, n = sys.argv[1], int(sys.argv[2])
V, F = [], []
for line in open(mesh_path, 'rb'):
    w = line.split()
    if not w: continue
    if w[0] == b'v': V.append([float(x) for x in w[1:4]])
    elif w[0] == b'f':
        idx = []
        for c in w[1:]:
            i = int(c.split(b'/')[0]); idx.append(i - 1 if i > 0 else len(V) + i)
        for k in range(1, len(idx) - 1): F.append([idx[0], idx[k], idx[k + 1]])
V = np.array(V, dtype=np.float32).astype(np.float64); F = np.array(F)
A, B, C = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
E1, E2 = B - A, C - A; N = np.cross(E1, E2)
lo, hi = V[F.reshape(-1)].min(0), V[F.reshape(-1)].max(0)
c, h = (lo + hi) / 2, np.linalg.norm(hi - lo) / 2
rng = np.random.default_rng(20261122)
args, rays = [], []
for _ in range(n):
    d = rng.normal(size=3); d /= np.linalg.norm(d)
    o = (c + 1.5 * h * d).astype(np.float32)
    tgt = rng.uniform(lo, hi).astype(np.float32)
    dr = (tgt - o).astype(np.float32)
    rays.append((o.astype(np.float64), dr.astype(np.float64)))
    args += ['--ray'] + [repr(float(x)) for x in o] + [repr(float(x)) for x in dr]
out = subprocess.run(['target/release/meshray', 'pick', mesh_path, '--json'] + args, capture_output=True, text=True, check=True).stdout.splitlines()
assert len(out) == n
agree = ties = bad = 0
for (o, d), line in zip(rays, out):
    r = json.loads(line)
    det = -(N @ d); s = o - A; w = np.cross(d, s)
    with np.errstate(divide='ignore', invalid='ignore'):
        u = -(E2 * w).sum(1) / det; v = (E1 * w).sum(1) / det; t = (N * s).sum(1) / det
    ok = (det != 0) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    if not ok.any():
        if r['hit']: bad += 1; print('brute misses, pick hits', r)
        else: agree += 1
        continue
    k = np.where(ok)[0][np.argmin(t[ok])]
    if not r['hit']: bad += 1; print('pick misses, brute hits', k, t[k]); continue
    if abs(r['t'] - t[k]) > 1e-5 * t[k]: bad += 1; print('t differs', r['t'], t[k]); continue
    if r['triangle'] == k: agree += 1
    elif abs(t[r['triangle']] - t[k]) <= 1e-5 * t[k]: ties += 1
    else: bad += 1; print('triangle differs', r['triangle'], k)
print(f"{mesh_path}: {n} held-out rays, {agree} identical, {ties} ties, {bad} disagreements")
