#!/usr/bin/env python3
# Usage (from the repo root, after `cargo build --release -p meshray-cli`; needs numpy):
#   python3 tests/heldout_bench.py ../shared/meshes/stanford-bunny/stanford-bunny.obj 1000
# Held-out check of the bench example's files: writes a ray file (the ../shared/DESIGN.md
# format) of N seeded rays made here (origins anywhere in and around the bounds, uniform
# directions, a third with a finite t_max), runs `bench --rays F --hits-out H --threads 2`, and
# compares every hit record with an f64 brute force over every triangle. A ray whose f64
# answer lies within 1e-6 (barycentric) of an edge, or whose range ends within 1e-6 of a hit,
# is counted as borderline: f32 may answer either way there.
import os, struct, subprocess, sys, tempfile
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
rng = np.random.default_rng(4242)
rays = []
for i in range(n):
    o = (c + rng.uniform(-1.2, 1.2, 3) * h).astype(np.float32)
    d = rng.normal(size=3); d = (d / np.linalg.norm(d)).astype(np.float32)
    tmax = np.float32(rng.uniform(0.1, 2.0) * h) if i % 3 == 0 else np.float32(np.inf)
    rays.append((o, d, np.float32(0.0), tmax))
tmp = tempfile.mkdtemp()
rays_file, hits_file = os.path.join(tmp, 'held.rays'), os.path.join(tmp, 'held.hits')
with open(rays_file, 'wb') as f:
    f.write(b'BVHRAYS1' + struct.pack('<QQII', n, 4242, 1, 0))
    for o, d, t0, t1 in rays: f.write(struct.pack('<8f', *o, *d, t0, t1))
subprocess.run(['target/release/meshray', 'bench', mesh_path, '--rays', rays_file, '--hits-out',
                hits_file, '--threads', '2', '--passes', '1'], check=True, capture_output=True)
data = open(hits_file, 'rb').read()
assert len(data) == 8 * n, 'one record per ray'
agree = ties = borderline = bad = 0
for i, (o, d, t0, t1) in enumerate(rays):
    t_got, tri_got = struct.unpack_from('<fI', data, 8 * i)
    o, d = o.astype(np.float64), d.astype(np.float64)
    det = -(N @ d); s = o - A; w = np.cross(d, s)
    with np.errstate(divide='ignore', invalid='ignore'):
        u = -(E2 * w).sum(1) / det; v = (E1 * w).sum(1) / det; t = (N * s).sum(1) / det
        uv = u + v
    inside = (det != 0) & (u >= 0) & (v >= 0) & (uv <= 1)
    ok = inside & (t >= t0) & (t <= t1)
    near = (det != 0) & (u >= -1e-6) & (v >= -1e-6) & (uv <= 1 + 1e-6) & (t >= t0 - 1e-6 * h) & (t <= t1 + 1e-6 * h)
    edgy = (near & ~ok).any() or (ok & ((u < 1e-6) | (v < 1e-6) | (uv > 1 - 1e-6))).any()
    if not ok.any():
        if tri_got == 0xFFFFFFFF: agree += 1
        elif edgy: borderline += 1
        else: bad += 1; print('brute misses, bench hits', i, t_got, tri_got)
        continue
    k = np.where(ok)[0][np.argmin(t[ok])]
    if tri_got == 0xFFFFFFFF:
        if edgy: borderline += 1
        else: bad += 1; print('bench misses, brute hits', i, k, t[k])
        continue
    if abs(t_got - t[k]) > 1e-5 * max(t[k], 1e-3 * h):
        if edgy: borderline += 1
        else: bad += 1; print('t differs', i, t_got, t[k])
        continue
    if tri_got == k: agree += 1
    elif abs(t[tri_got] - t[k]) <= 1e-5 * max(t[k], 1e-3 * h): ties += 1
    elif edgy: borderline += 1
    else: bad += 1; print('triangle differs', i, tri_got, k)
print(f"{mesh_path}: {n} held-out rays, {agree} identical, {ties} ties, {borderline} borderline, {bad} disagreements")
sys.exit(1 if bad else 0)
