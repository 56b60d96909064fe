#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""avro_read.py - reads an Avro object container file with Apache Avro's Python library
(Debian's python3-avro, independent of the C library that wrote it) and checks it.

Usage: avro_read.py FILE SCHEMA ROWS [INDEX:FIELD=VALUE]...

Checked: the file's writer schema is SCHEMA (the .avsc, compared in Avro's Parsing Canonical
Form, which leaves out the documentation), it holds
ROWS rows, and row INDEX has FIELD equal to VALUE (compared as text; "null" for None).
Prints the first row as JSON and exits 0, or says what is wrong and exits 1.
"""
import json
import sys

import avro.schema
from avro.datafile import DataFileReader
from avro.io import DatumReader


def main():
    path, schema_path, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(schema_path) as f:
        want_schema = avro.schema.parse(f.read()).canonical_form
    with open(path, "rb") as f:
        reader = DataFileReader(f, DatumReader())
        got_schema = avro.schema.parse(reader.get_meta("avro.schema").decode("utf-8"))
        got_schema = got_schema.canonical_form
        records = list(reader)
        codec = reader.get_meta("avro.codec")
        reader.close()
    if got_schema != want_schema:
        sys.exit(f"{path}: the writer schema is not {schema_path}")
    if len(records) != rows:
        sys.exit(f"{path}: {len(records)} rows, {rows} expected")
    for a in sys.argv[4:]:
        where, value = a.split("=", 1)
        index, field = where.split(":", 1)
        got = records[int(index)][field]
        if ("null" if got is None else str(got)) != value:
            sys.exit(f"{path}: row {index} {field} is {got!r}, {value} expected")
    print((codec or b"null").decode(), json.dumps(records[0], sort_keys=True))


if __name__ == "__main__":
    main()
