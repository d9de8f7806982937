#!/usr/bin/env python3
"""Checks the declared MSRV (`rust-version` in Cargo.toml) against the locked dependencies.

Every crate the library or the `meshray` command (cli/) depends on (normal dependencies,
default features, as locked) must
declare a `rust-version` no newer than ours, or none. Beside it, clippy's `incompatible_msrv`
lint checks every standard-library item we use against the same `rust-version`, and `.ci/run`
compiles everything with that Rust when rustup can install it.
"""
import json
import subprocess
import sys


def version(text):
    parts = [int(part) for part in text.split(".")[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    meta = json.loads(out)
    packages = {p["id"]: p for p in meta["packages"]}
    resolve = meta["resolve"]
    nodes = {n["id"]: n for n in resolve["nodes"]}
    ours = packages[resolve["root"]]
    msrv = version(ours["rust_version"])

    # The library and the command users install from cli/: their normal dependencies.
    command = [p["id"] for p in meta["packages"] if p["name"] == "meshray-cli"]
    seen, stack = set(), [resolve["root"]] + command
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for dep in nodes[node]["deps"]:
            if any(kind["kind"] is None for kind in dep["dep_kinds"]):
                stack.append(dep["pkg"])

    newer = []
    for node in seen - {resolve["root"]}:
        package = packages[node]
        declared = package.get("rust_version")
        if declared and version(declared) > msrv:
            newer.append(f"{package['name']} {package['version']} needs Rust {declared}")
    if newer:
        print(f"MSRV {ours['rust_version']} is older than these dependencies need:")
        print("\n".join(sorted(newer)))
        sys.exit(1)
    print(f"MSRV {ours['rust_version']}: {len(seen) - 1} locked dependencies declare nothing newer")


if __name__ == "__main__":
    main()
