#!/usr/bin/env python3
"""Writes an OBJ mesh as binary PLY, ASCII PLY, binary STL and GLB, for timing the loaders.

    python3 benches/convert.py MESH.obj OUT_DIR

Only positions and triangles (polygons fanned from their first corner, as meshray does) are
written, so every file holds the OBJ's triangles, in order. Then time each with the bench
example, which prints the load time:

    cargo run --release --example bench -- OUT_DIR/NAME.ply --random 1000

numpy only; no meshray code is used, so the files are an independent check of the loaders.
"""
import json
import os
import struct
import sys

import numpy as np


def read_obj(path):
    vertices, triangles = [], []
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"v "):
                vertices.append([float(x) for x in line.split()[1:4]])
            elif line.startswith(b"f "):
                corners = []
                for token in line.split()[1:]:
                    i = int(token.split(b"/")[0])
                    corners.append(i - 1 if i > 0 else len(vertices) + i)
                for k in range(1, len(corners) - 1):
                    triangles.append([corners[0], corners[k], corners[k + 1]])
    return np.array(vertices, dtype=np.float32), np.array(triangles, dtype=np.uint32)


def write_ply(path, v, t, binary):
    header = (
        f"ply\nformat {'binary_little_endian' if binary else 'ascii'} 1.0\n"
        f"element vertex {len(v)}\nproperty float x\nproperty float y\nproperty float z\n"
        f"element face {len(t)}\nproperty list uchar uint vertex_indices\nend_header\n"
    )
    with open(path, "wb") as f:
        f.write(header.encode())
        if binary:
            f.write(v.astype("<f4").tobytes())
            faces = np.zeros(len(t), dtype=[("n", "u1"), ("i", "<u4", 3)])
            faces["n"] = 3
            faces["i"] = t
            f.write(faces.tobytes())
        else:
            for p in v:
                f.write(" ".join(repr(float(c)) for c in p).encode() + b"\n")
            for a, b, c in t:
                f.write(f"3 {a} {b} {c}\n".encode())


def write_stl(path, v, t):
    facets = np.zeros(len(t), dtype=[("n", "<f4", 3), ("p", "<f4", (3, 3)), ("a", "<u2")])
    facets["p"] = v[t]
    with open(path, "wb") as f:
        f.write(b"meshray benches/convert.py".ljust(80, b" "))
        f.write(struct.pack("<I", len(t)))
        f.write(facets.tobytes())


def write_glb(path, v, t):
    positions = v.astype("<f4").tobytes()
    indices = t.astype("<u4").tobytes()
    binary = positions + indices
    doc = {
        "asset": {"version": "2.0", "generator": "meshray benches/convert.py"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": len(v), "type": "VEC3",
             "min": v.min(axis=0).tolist(), "max": v.max(axis=0).tolist()},
            {"bufferView": 1, "componentType": 5125, "count": t.size, "type": "SCALAR"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": len(positions)},
            {"buffer": 0, "byteOffset": len(positions), "byteLength": len(indices)},
        ],
        "buffers": [{"byteLength": len(binary)}],
    }
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(text) + 8 + len(binary)
    with open(path, "wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, total))
        f.write(struct.pack("<I4s", len(text), b"JSON") + text)
        f.write(struct.pack("<I4s", len(binary), b"BIN\0") + binary)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    name = os.path.splitext(os.path.basename(source))[0]
    v, t = read_obj(source)
    base = os.path.join(out, name)
    write_ply(base + ".ply", v, t, binary=True)
    write_ply(base + "-ascii.ply", v, t, binary=False)
    write_stl(base + ".stl", v, t)
    write_glb(base + ".glb", v, t)
    print(f"{name}: {len(v)} vertices, {len(t)} triangles -> {base}.{{ply,-ascii.ply,stl,glb}}")


if __name__ == "__main__":
    main()
