#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""embed-text.py - a C header holding a text file as a string constant.

Usage: embed-text.py INPUT OUTPUT NAME   (writes: static const char NAME[] = "...";)
"""
import json
import sys

src, dst, name = sys.argv[1:4]
with open(src, encoding="ascii") as f:
    text = f.read()
with open(dst, "w", encoding="ascii") as f:
    f.write(f"/* generated from {src.rsplit('/', 1)[-1]} by embed-text.py */\n")
    f.write(f"static const char {name}[] = {json.dumps(text)};\n")
