#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""folded.py - reads folded stacks as flamegraph.pl reads them, and checks them.

Usage: folded.py FILE BRANCHES [STACK=COUNT]...

flamegraph.pl takes each line as /^(.*)\\s+?(\\d+(?:\\.\\d*)?)$/ (the stack, then the sample
count after the last blank) and splits the stack at ';' into frames; a line that does not
match is "Ignored". Checked here: every line matches, no frame is empty, no stack comes
twice, the counts add up to BRANCHES (every branch record weighs one), each STACK=COUNT
given is there with that count, and the call tree flamegraph.pl would draw (a node per
frame under its parent) has as its total the sum of its roots. Prints the tree's widest
path and exits 0, or says what is wrong and exits 1.
"""
import re
import sys

LINE = re.compile(r"^(.*)\s+?(\d+(?:\.\d*)?)$")


def main():
    path, branches = sys.argv[1], int(sys.argv[2])
    want = dict(a.rsplit("=", 1) for a in sys.argv[3:])
    stacks = {}
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")  # flamegraph.pl reads UTF-8 (its --encoding)
    for n, line in enumerate(text.split("\n")[:-1], 1):
        m = LINE.match(line)
        if not m:
            sys.exit(f"{path}:{n}: flamegraph.pl ignores this line: {line!r}")
        stack, count = m.group(1), int(m.group(2))
        frames = stack.split(";")
        if any(not fr for fr in frames):
            sys.exit(f"{path}:{n}: empty frame in {stack!r}")
        if stack in stacks:
            sys.exit(f"{path}:{n}: stack {stack!r} twice")
        stacks[stack] = count
    if not text.endswith("\n") and text:
        sys.exit(f"{path}: last line unterminated")
    total = sum(stacks.values())
    if total != branches:
        sys.exit(f"{path}: {total} samples, {branches} branches expected")
    for stack, count in want.items():
        if stacks.get(stack) != int(count):
            sys.exit(f"{path}: {stack!r}: {stacks.get(stack)} samples, {count} expected")
    # The tree: each node's total is its own samples plus its children's.
    tree = {}
    for stack, count in stacks.items():
        frames = stack.split(";")
        for i in range(1, len(frames) + 1):
            key = tuple(frames[:i])
            tree[key] = tree.get(key, 0) + count
    roots = sum(c for k, c in tree.items() if len(k) == 1)
    if roots != total:
        sys.exit(f"{path}: roots sum to {roots}, not {total}")
    widest = max(tree, key=lambda k: (tree[k], len(k)))
    print(";".join(widest), tree[widest])


if __name__ == "__main__":
    main()
