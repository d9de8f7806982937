#!/usr/bin/env python3
"""Counts meshray's public functions and methods (issue 25's API budget), from rustdoc's
JSON output, which needs a nightly toolchain:

    CARGO_TARGET_DIR=/tmp/docjson cargo +nightly rustdoc -p meshray --all-features -- \
        -Z unstable-options --output-format json
    python3 .ci/api_count.py /tmp/docjson/doc/meshray.json

Counts every free function reachable from the crate root (through public modules and
re-exports), every public inherent method of the public types, and each method of the
crate's own traits once (`query::RayCast::closest_hit`, however many types implement it);
implementations of traits (Display, From, and the crate's own) are not counted again.
Prints the total, then one name per line.
"""
import json
import sys


def main(path):
    doc = json.load(open(path))
    index = doc["index"]
    get = lambda i: index.get(str(i)) or index.get(i)
    seen, functions = set(), []

    def walk(i, prefix):
        item = get(i)
        if item is None or i in seen:
            return
        seen.add(i)
        kind, inner = next(iter(item["inner"].items()))
        name = item.get("name")
        if kind == "module":
            inside = prefix + (name + "::" if name and name != "meshray" else "")
            for child in inner["items"]:
                walk(child, inside)
        elif kind == "use" and inner.get("id") is not None:
            walk(inner["id"], prefix)
        elif kind == "function":
            functions.append(prefix + name)
        elif kind in ("struct", "enum", "trait"):
            if kind == "trait":
                # A trait's methods, once each, however many types implement it.
                for m in inner.get("items", []):
                    method = get(m)
                    if method and "function" in method["inner"]:
                        functions.append(prefix + name + "::" + method["name"])
            for impl_id in inner.get("impls", []):
                impl = get(impl_id)
                if impl is None:
                    continue
                block = impl["inner"]["impl"]
                if block.get("trait") is not None or block.get("is_synthetic") or block.get("blanket_impl"):
                    continue
                for m in block["items"]:
                    method = get(m)
                    if method and "function" in method["inner"] and method.get("visibility") == "public":
                        functions.append(prefix + name + "::" + method["name"])

    walk(doc["root"], "")
    print(len(functions), "public functions and methods")
    for f in sorted(functions):
        print(" ", f)


if __name__ == "__main__":
    main(sys.argv[1])
