"""meshray against Open3D's RaycastingScene (Embree 4 inside; the `open3d-cpu` package) and
trimesh (with embreex, and its pure-numpy intersector), in one Python process: closest and
any hit, the count and the list of every crossing, a small sphere's sweep (meshray's alone,
against its own closest hit), closest point, inside/outside and signed
distance; meshray both through its own calls (`BVH.cast`, ...) and through its Open3D
drop-in (`meshray.open3d.RaycastingScene`, Open3D's calls with Open3D tensors, as a
switching user makes them):

    python python/bench.py [--rays 1000000] [--points 100000] [--threads 1 2] [--only QUERY ...] [MESH ...]
    python python/bench.py --binding [--rays 1000000] [MESH ...]
    python python/bench.py --inside [--points 1000000] [--check 2000] [MESH ...]

Meshes: the given files, else the shared meshes ($MESHRAY_MESHES or ../shared/meshes) that
are present. Rays: from a sphere around the mesh towards random points of its box (the Rust
bench's random set). Each figure is the best of three runs, in million queries per second;
an engine that is not installed is left out. Threads: meshray's (rayon) and Open3D's
`nthreads` (0, its default, when the count is every core); trimesh's are its own (one).
Prints a markdown table.

--binding measures the binding's own cost instead: the same rays, on one thread, through
`BVH.cast`, the drop-in's `cast_rays`, the Rust command `meshray bench --rays FILE --details` (closest_hit,
which computes the point and normal as `cast` does) and `meshray bench --rays FILE` (the
compact closest_triangle: triangle and t); the command is `$MESHRAY_BIN`, else
`cargo run --release -p meshray-cli`; alternated, five times each; the median of each, in
Mrays/s.

--inside measures inside/outside and signed distance on one thread, `--points` uniform in
each mesh's box: meshray's `contains` (winding number) against Open3D's
`compute_occupancy` (ray parity), libigl's `fast_winding_number` (PyPI `libigl`, Barill et
al. with beta 2; `IGL_NUM_THREADS=1`) and trimesh's `contains_points` (embreex), and
`signed_distance` against Open3D's `compute_signed_distance`; best of two runs, in
microseconds per point. Then, on the first `--check` of those points, how often each
engine's inside/outside disagrees with the exact winding number (meshray's
`winding_numbers(exact=True)`, which tests/winding.rs checks against a brute force).
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# The script's own directory holds the package's sources (python/meshray) without the native
# module; import the installed package instead (`pip install ./python`).
HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != HERE]
import meshray  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = [
    "stanford-bunny/stanford-bunny.obj",
    "armadillo/armadillo.obj",
    "crytek-sponza/sponza.obj",
    "conference/conference.obj",
    "lost-empire/lost_empire.obj",
]


QUERIES = ["closest", "any", "count", "list", "sweep", "closest point", "contains", "signed distance"]


def best(f, runs=3):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def rays(vertices, n, rng):
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    centre, radius = (lo + hi) / 2, np.linalg.norm(hi - lo)
    normal = rng.normal(size=(n, 3))
    origins = centre + radius * normal / np.linalg.norm(normal, axis=1, keepdims=True)
    targets = lo + (hi - lo) * rng.random((n, 3))
    d = targets - origins
    return origins.astype(np.float32), (d / np.linalg.norm(d, axis=1, keepdims=True)).astype(np.float32)


def engines(mesh, threads):
    """name -> {query: function(origins, directions, points) -> None} for what is installed."""
    v, f = mesh.vertices, mesh.faces
    out = {}
    bvh = meshray.BVH(mesh)
    # A sphere of 0.001 of the half diagonal moving along each ray (the Rust sweep bench's).
    radius = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0))) / 2 * 0.001
    out["meshray"] = {
        "closest": lambda o, d, p: bvh.cast(o, d),
        "any": lambda o, d, p: bvh.occluded(o, d),
        "count": lambda o, d, p: bvh.count_hits(o, d),
        "list": lambda o, d, p: bvh.cast_all(o, d),
        "sweep": lambda o, d, p: bvh.cast_spheres(o, d, radius),
        "closest point": lambda o, d, p: bvh.closest_points(p),
        "contains": lambda o, d, p: bvh.contains(p),
        "signed distance": lambda o, d, p: bvh.signed_distance(p),
    }
    try:
        import open3d as o3d

        from meshray.open3d import RaycastingScene

        # The same calls on Open3D's scene and on the drop-in: what a switching user runs;
        # every core is Open3D's default, nthreads=0.
        nthreads = 0 if threads >= (os.cpu_count() or 1) else threads
        for name, scene in [("Open3D", o3d.t.geometry.RaycastingScene(nthreads=nthreads)),
                            ("drop-in", RaycastingScene(nthreads=nthreads))]:
            scene.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(f.astype(np.uint32)))
            out[name] = open3d_calls(o3d, scene, nthreads)
    except ImportError:
        pass
    if threads == 1:
        try:
            import trimesh

            tm = trimesh.Trimesh(v, f, process=False)
            try:
                from trimesh.ray.ray_pyembree import RayMeshIntersector

                embree = RayMeshIntersector(tm)
                out["trimesh + embreex"] = {
                    "closest": lambda o, d, p: embree.intersects_first(o, d),
                    "any": lambda o, d, p: embree.intersects_any(o, d),
                    "contains": lambda o, d, p: embree.contains_points(p),
                }
            except ImportError:
                pass
        except ImportError:
            pass
    return out


def open3d_calls(o3d, scene, threads):
    """Open3D's calls on `scene` (Open3D's RaycastingScene or meshray's drop-in): tensors
    in, `nthreads` as given. A user holds the rays as an `(n, 6)` tensor already: each is
    made once, by the first call (which the best of three leaves out), not by every call."""
    made = {}

    def tensor(*arrays):
        key = tuple(id(a) for a in arrays)
        if key not in made:
            made.clear()
            made[key] = o3d.core.Tensor(np.hstack(arrays) if len(arrays) > 1 else arrays[0])
        return made[key]

    return {
        "closest": lambda o, d, p: scene.cast_rays(tensor(o, d), nthreads=threads),
        "any": lambda o, d, p: scene.test_occlusions(tensor(o, d), nthreads=threads),
        "count": lambda o, d, p: scene.count_intersections(tensor(o, d), nthreads=threads),
        "list": lambda o, d, p: scene.list_intersections(tensor(o, d), nthreads=threads),
        "closest point": lambda o, d, p: scene.compute_closest_points(tensor(p), nthreads=threads),
        "contains": lambda o, d, p: scene.compute_occupancy(tensor(p), nthreads=threads),
        "signed distance": lambda o, d, p: scene.compute_signed_distance(tensor(p), nthreads=threads),
    }


def run(paths, n_rays, n_points, threads, only=None):
    rng = np.random.default_rng(1)
    rows = []
    for path in paths:
        mesh = meshray.Mesh.load(path)
        o, d = rays(mesh.vertices, n_rays, rng)
        lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
        p = (lo + (hi - lo) * rng.random((n_points, 3))).astype(np.float32)
        for engine, queries in engines(mesh, threads).items():
            for query, f in queries.items():
                if only and query not in only:
                    continue
                n = n_rays if query in ("closest", "any", "count", "list", "sweep") else n_points
                seconds = best(lambda: f(o, d, p))
                rows.append((Path(path).stem, engine, query, threads, n / seconds / 1e6))
    return rows


def inside(paths, n_points, n_check):
    """Per mesh: microseconds per point for inside/outside and signed distance, one thread,
    and the disagreements with the exact winding number on a subsample."""
    rng = np.random.default_rng(1)
    speed, wrong, setup = [], [], []
    for path in paths:
        mesh = meshray.Mesh.load(path)
        v, f = mesh.vertices, mesh.faces
        lo, hi = v.min(axis=0), v.max(axis=0)
        p = (lo + (hi - lo) * rng.random((n_points, 3))).astype(np.float32)
        bvh = meshray.BVH(mesh)
        # The far-field terms and contains' lattice are made on first use, once per tree.
        start = time.perf_counter()
        bvh.contains(p[:1])
        setup.append((Path(path).stem, time.perf_counter() - start))
        contains = {"meshray": lambda q: bvh.contains(q)}
        distance = {"meshray": lambda q: bvh.signed_distance(q)}
        try:
            import open3d as o3d

            scene = o3d.t.geometry.RaycastingScene(nthreads=1)
            scene.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(f.astype(np.uint32)))
            contains["Open3D"] = lambda q: scene.compute_occupancy(o3d.core.Tensor(q), nthreads=1).numpy() > 0.5
            distance["Open3D"] = lambda q: scene.compute_signed_distance(o3d.core.Tensor(q), nthreads=1).numpy()
        except ImportError:
            pass
        try:
            import igl

            v64, f64 = v.astype(np.float64), f.astype(np.int64)
            contains["libigl"] = lambda q: igl.fast_winding_number(v64, f64, q.astype(np.float64)) >= 0.5
        except ImportError:
            pass
        try:
            import trimesh
            from trimesh.ray.ray_pyembree import RayMeshIntersector

            embree = RayMeshIntersector(trimesh.Trimesh(v, f, process=False))
            contains["trimesh + embreex"] = lambda q: embree.contains_points(q)
        except ImportError:
            pass
        name = Path(path).stem
        for query, engines in (("contains", contains), ("signed distance", distance)):
            for engine, run_ in engines.items():
                speed.append((name, query, engine, best(lambda: run_(p), runs=2) / n_points * 1e6))
        q = p[:n_check]
        exact = bvh.winding_numbers(q, exact=True) >= 0.5
        for engine, run_ in contains.items():
            wrong.append((name, engine, int((run_(q) != exact).sum()), len(q)))
    print("| mesh | query | engine | µs per point | meshray's speed-up |")
    print("|---|---|---|---|---|")
    for name, query, engine, us in speed:
        ours = next(u for m, qq, e, u in speed if m == name and qq == query and e == "meshray")
        print(f"| {name} | {query} | {engine} | {us:.3f} | {us / ours:.2f}× |")
    print("\nmeshray's first contains on a tree (far-field terms and lattice, one thread): "
          + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in setup))
    print("\n| mesh | engine | inside/outside wrong (of the exact winding number's) |")
    print("|---|---|---|")
    for name, engine, n_wrong, n in wrong:
        print(f"| {name} | {engine} | {n_wrong} of {n} ({100 * n_wrong / n:.2f} %) |")


def write_rays(path, origins, directions):
    """The rays in the BVHRAYS1 format of ../shared/DESIGN.md (kind 1, random), t in [0, inf)."""
    n = len(origins)
    header = b"BVHRAYS1" + np.array([n, 1], "<u8").tobytes() + np.array([1, 0], "<u4").tobytes()
    body = np.zeros((n, 8), "<f4")
    body[:, 0:3], body[:, 3:6], body[:, 7] = origins, directions, np.inf
    Path(path).write_bytes(header + body.tobytes())


def binding(paths, n_rays):
    """Per mesh: Python's cast, the Open3D drop-in's cast_rays (its (n, 6) float32 rays as
    numpy; t, ids, uvs and normals), Rust's closest_hit (with the details cast reports) and
    Rust's compact closest_triangle (the triangle and t only), on the same rays, one thread,
    in Mrays/s."""
    import json
    import statistics
    import tempfile

    command = os.environ.get("MESHRAY_BIN", "").split() or [
        "cargo", "run", "-q", "--release", "-p", "meshray-cli", "--"]
    rng = np.random.default_rng(1)
    from meshray.open3d import RaycastingScene

    print("| mesh | Python cast | drop-in cast_rays | Rust closest_hit | Rust closest_triangle "
          "| cast / closest_triangle | drop-in / closest_triangle |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            mesh = meshray.Mesh.load(path)
            bvh = meshray.BVH(mesh)
            drop_in = RaycastingScene()
            drop_in.add_triangles(mesh.vertices, mesh.faces.astype(np.uint32))
            o, d = rays(mesh.vertices, n_rays, rng)
            six = np.hstack([o, d])
            file = os.path.join(tmp, "rays")
            write_rays(file, o, d)
            python, open3d, details, compact = [], [], [], []

            def rust(*extra):
                out = subprocess.run(
                    command + ["bench", path, "--rays", file, *extra, "--json", "--passes", "1"],
                    check=True, capture_output=True, text=True,
                    env=dict(os.environ, RAYON_NUM_THREADS="1"),
                ).stdout
                return json.loads(out.splitlines()[-1])["mrays_per_s"]

            for _ in range(5):
                python.append(n_rays / best(lambda: bvh.cast(o, d), runs=1) / 1e6)
                open3d.append(n_rays / best(lambda: drop_in.cast_rays(six, nthreads=1), runs=1) / 1e6)
                details.append(rust("--details"))
                compact.append(rust())
            p, q, r, c = (statistics.median(x) for x in (python, open3d, details, compact))
            print(f"| {Path(path).stem} | {p:.2f} | {q:.2f} | {r:.2f} | {c:.2f} | {p / c:.2f}× | {q / c:.2f}× |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("meshes", nargs="*")
    parser.add_argument("--rays", type=int, default=1_000_000)
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--binding", action="store_true", help="the binding's cost against Rust")
    parser.add_argument("--inside", action="store_true", help="contains and signed distance, one thread")
    parser.add_argument("--check", type=int, default=2000, help="--inside: points checked against the exact sum")
    parser.add_argument("--only", nargs="+", choices=QUERIES, help="these queries only")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(os.environ.get("MESHRAY_MESHES", REPO.parent / "shared" / "meshes"))
    paths = args.meshes or [str(root / m) for m in SHARED if (root / m).exists()]
    if args.inside:
        if os.environ.get("RAYON_NUM_THREADS") != "1" or os.environ.get("IGL_NUM_THREADS") != "1":
            # Thread pools are sized once per process: the measurement runs in a child.
            env = dict(os.environ, RAYON_NUM_THREADS="1", IGL_NUM_THREADS="1")
            subprocess.run([sys.executable, *sys.argv], env=env, check=True)
        else:
            inside(paths, args.points, args.check)
        return
    if args.binding:
        if os.environ.get("RAYON_NUM_THREADS") != "1":
            # rayon's pool is sized once per process: the measurement runs in a child.
            env = dict(os.environ, RAYON_NUM_THREADS="1")
            subprocess.run([sys.executable, *sys.argv], env=env, check=True)
        else:
            binding(paths, args.rays)
        return
    if args.child is not None:
        for row in run(paths, args.rays, args.points, args.child, args.only):
            print("\t".join(map(str, row)))
        return
    # One child process per thread count: rayon's pool is sized once per process.
    rows = []
    for threads in args.threads:
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(threads), "--rays", str(args.rays),
             "--points", str(args.points), *paths, *(["--only", *args.only] if args.only else [])],
            env=env, check=True, capture_output=True, text=True,
        ).stdout
        rows += [line.split("\t") for line in out.splitlines()]
    meshes = list(dict.fromkeys(r[0] for r in rows))
    columns = list(dict.fromkeys((r[1], r[3]) for r in rows))
    for query in args.only or QUERIES:
        print(f"\n{query} (M/s)\n")
        ratio_heads = " | sweep / closest |" if query == "sweep" else " | meshray / Open3D | drop-in / Open3D |"
        print("| mesh | " + " | ".join(f"{e}, {t} thr" for e, t in columns) + ratio_heads)
        print("|---" * (len(columns) + ratio_heads.count("|")) + "|")
        for m in meshes:
            value = {(r[1], r[3]): float(r[4]) for r in rows if r[0] == m and r[2] == query}
            cells = [f"{value[c]:.2f}" if c in value else "—" for c in columns]

            def ratios(engine):
                return " / ".join(
                    f"{value[(engine, t)] / value[('Open3D', t)]:.2f}×"
                    for t in map(str, args.threads)
                    if (engine, t) in value and ("Open3D", t) in value
                )

            if query == "sweep":
                # No peer sweeps: the ratio to meshray's own closest hit on the same rays.
                closest = {(r[1], r[3]): float(r[4]) for r in rows if r[0] == m and r[2] == "closest"}
                print(f"| {m} | " + " | ".join(cells) + " | " + " / ".join(
                    f"{value[c] / closest[c]:.2f}×" for c in columns if c in value and c in closest) + " |")
                continue
            print(f"| {m} | " + " | ".join(cells) + f" | {ratios('meshray')} | {ratios('drop-in')} |")


if __name__ == "__main__":
    main()
