#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""drcov_read.py - reads a drcov file (DynamoRIO drcov's format, version 2) as Lighthouse's
drcov parser reads it, and checks it. Debian packages no drcov reader.

Usage: drcov_read.py FILE MODULES BLOCKS [EXPECT]...

The file is read as Lighthouse does: lines of UTF-8 text up to the BB table, each stripped
of surrounding blanks: "DRCOV VERSION: 2", "DRCOV FLAVOR: NAME", "Module Table: version 2,
count N", "Columns: id, base, end, entry, checksum, timestamp, path", N module lines split
at ", " (id, base, end, entry in hex, checksum, timestamp, path = the last field), "BB Table:
M bbs", then M binary entries of 8 bytes (uint32 start offset, uint16 size, uint16 module
id, little-endian). Stricter than Lighthouse: every module line has exactly the 7 columns
(a path with ", " would be cut), ids are 0..N-1 in order, the file ends right after the M
entries, every block lies inside its module (base + start + size <= end) and no block
appears twice.

Checked: N == MODULES, M == BLOCKS, and each EXPECT:
  block:ID:OFFSET:SIZE   a block of module ID at OFFSET (hex) of SIZE bytes (decimal)
  module:ID=BASE,END     module ID's base and end (hex)
  path:ID=TEXT           module ID's path is TEXT exactly
Prints the module lines and the blocks and exits 0, or says what is wrong and exits 1.
"""
import struct
import sys

COLUMNS = ["id", "base", "end", "entry", "checksum", "timestamp", "path"]


def line(f):
    return f.readline().decode("utf-8").strip()


def read(path):
    with open(path, "rb") as f:
        version = int(line(f).split(":")[1])
        if version != 2:
            sys.exit(f"{path}: drcov version {version}, 2 expected")
        flavor = line(f).split(":")[1]
        name, data = line(f).split(": ")
        version_data, count_data = data.split(", ")
        if name != "Module Table" or version_data.split(" ") != ["version", "2"]:
            sys.exit(f"{path}: not a module table of version 2: {name}: {data}")
        word, count = count_data.split(" ")
        if word != "count":
            sys.exit(f"{path}: module table without a count: {data}")
        name, data = line(f).split(": ")
        if name != "Columns" or data.split(", ") != COLUMNS:
            sys.exit(f"{path}: columns {data!r}, {', '.join(COLUMNS)} expected")
        modules = []
        for i in range(int(count)):
            text = line(f)
            d = text.split(", ")
            if len(d) != len(COLUMNS):
                sys.exit(f"{path}: module line {text!r} has {len(d)} columns")
            m = {"id": int(d[0]), "base": int(d[1], 16), "end": int(d[2], 16),
                 "entry": int(d[3], 16), "checksum": int(d[4], 16),
                 "timestamp": int(d[5], 16), "path": d[-1], "line": text}
            if m["id"] != i or m["base"] >= m["end"]:
                sys.exit(f"{path}: module line {text!r}: id or extent wrong")
            modules.append(m)
        name, data = line(f).split(": ")
        count_data, word = data.split(" ")
        if name != "BB Table" or word != "bbs":
            sys.exit(f"{path}: not a BB table: {name}: {data}")
        raw = f.read()
    n = int(count_data)
    if len(raw) != 8 * n:
        sys.exit(f"{path}: {len(raw)} bytes of BB table, {8 * n} expected")
    blocks = [struct.unpack_from("<IHH", raw, 8 * i) for i in range(n)]
    return flavor, modules, blocks


def main():
    path, want_modules, want_blocks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    flavor, modules, blocks = read(path)
    if len(modules) != want_modules:
        sys.exit(f"{path}: {len(modules)} modules, {want_modules} expected")
    if len(blocks) != want_blocks:
        sys.exit(f"{path}: {len(blocks)} blocks, {want_blocks} expected: {blocks}")
    if len(set(blocks)) != len(blocks):
        sys.exit(f"{path}: a block appears twice: {blocks}")
    for start, size, mod in blocks:
        if mod >= len(modules):
            sys.exit(f"{path}: block of module {mod}, of {len(modules)}")
        m = modules[mod]
        if size == 0 or m["base"] + start + size > m["end"]:
            sys.exit(f"{path}: block {start:#x}+{size} out of module {mod}")
    for a in sys.argv[4:]:
        what, rest = a.split(":", 1)
        if what == "block":
            mod, offset, size = rest.split(":")
            b = (int(offset, 16), int(size), int(mod))
            if b not in blocks:
                sys.exit(f"{path}: no block {a}: {[(hex(s), z, m) for s, z, m in blocks]}")
        elif what in ("module", "path"):
            mod, value = rest.split("=", 1)
            m = modules[int(mod)]
            got = m["path"] if what == "path" else f"{m['base']:#x},{m['end']:#x}"
            if got != value:
                sys.exit(f"{path}: {what} of module {mod} is {got!r}, {value!r} expected")
        else:
            sys.exit(f"bad expectation {a}")
    print("flavor", flavor)
    for m in modules:
        print(m["line"])
    for start, size, mod in blocks:
        print(f"{mod} {start:#x} {size}")


if __name__ == "__main__":
    main()
