#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# doc-layout.py - README's Layout section, the documentation's paths and links, its line lengths.
#
# usage: tests/doc-layout.py SOURCE_DIR
#
# Checks, one line on stderr for each thing wrong (exit status 1; 0 when none):
# - every folder README's `## Layout` section names exists in the tree;
# - the section names every top-level folder (itself or a folder inside it) and every folder
#   directly inside vmm/, decoder/, format/ and tests/ (the rooms);
# - every path of the tree that README or doc/*.md writes in backquotes (one that starts with a
#   top-level folder of the tree) exists, and so does every relative link's file and anchor;
# - no line of README or doc/*.md outside a code block is longer than 100 columns.
# The tree is what git tracks (the files on disk, build directories left out, without git).
import os
import re
import subprocess
import sys

MAX_COLUMNS = 100
ROOMS_OF = ('vmm', 'decoder', 'format', 'tests')
# Not kept by this file's owner to the column limit: the control protocol's tables.
LONG_LINES_ALLOWED = {'doc/control-protocol.md'}


def tracked_files(top):
    try:
        out = subprocess.run(['git', '-C', top, 'ls-files', '-z'], check=True,
                             capture_output=True).stdout
        files = [f for f in out.decode().split('\0') if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for root, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith('.git') and
                   not os.path.exists(os.path.join(root, d, 'meson-private'))]
        rel = os.path.relpath(root, top)
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return files


def folders_of(files):
    """Every folder that holds a file, as 'a/', 'a/b/', ..."""
    dirs = set()
    for f in files:
        parts = f.split('/')[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add('/'.join(parts[:i]) + '/')
    return dirs


def layout_folders(readme_lines):
    """The folders the code block of README's Layout section names, first word of a line."""
    names, in_section, in_code = [], False, False
    for line in readme_lines:
        if line.startswith('## '):
            in_section = line.strip() == '## Layout'
            continue
        if not in_section:
            continue
        if line.startswith('```'):
            in_code = not in_code
            continue
        if in_code and line and not line[0].isspace():
            names.append(line.split()[0])
    return names


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower().replace('`', '')
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def prose_lines(lines):
    """(number, line) of the lines outside code blocks."""
    code = False
    for n, line in enumerate(lines, 1):
        if line.startswith('```'):
            code = not code
            continue
        if not code:
            yield n, line


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    files = tracked_files(top)
    file_set = set(files)
    dirs = folders_of(files)
    tops = {d for d in dirs if d.count('/') == 1}
    problems = []

    docs = ['README.md'] + sorted(f for f in files if re.fullmatch(r'doc/[^/]+\.md', f))
    text = {d: open(os.path.join(top, d), encoding='utf-8').read().split('\n') for d in docs}

    named = layout_folders(text['README.md'])
    if not named:
        problems.append('README.md: no folders in a code block of its ## Layout section')
    for name in named:
        if not name.endswith('/'):
            problems.append(f'README.md Layout: {name!r} does not end with / (a folder)')
        elif name not in dirs:
            problems.append(f'README.md Layout: {name} is not a folder of the tree')
    wanted = set(tops)
    for room in ROOMS_OF:
        wanted |= {d for d in dirs if d.startswith(room + '/') and d.count('/') == 2}
    for d in sorted(wanted):
        if not any(name.startswith(d) for name in named):
            problems.append(f'README.md Layout: {d} is missing')

    anchors = {d: {slug(l.lstrip('#')) for _, l in prose_lines(text[d]) if l.startswith('#')}
               for d in docs}
    for doc in docs:
        here = os.path.dirname(doc)
        lines = list(prose_lines(text[doc]))
        # A code span may go on on the next line of its paragraph: look for them in the
        # paragraph's text, numbered by the line where they start.
        prose, starts = '', []
        for n, line in lines:
            starts.append((len(prose), n))
            prose += line + '\n'
        for m in re.finditer(r'`([^`]+)`', prose):
            words = m.group(1).split()
            if '\n\n' in m.group(1) or not words:
                continue
            path = words[0].rstrip(':,;.)')
            if path.split('/')[0] + '/' not in tops or '/' not in path:
                continue
            if path not in file_set and path.rstrip('/') + '/' not in dirs:
                n = max(line for off, line in starts if off <= m.start())
                problems.append(f'{doc}:{n}: `{path}` is not in the tree')
        for n, line in lines:
            where = f'{doc}:{n}'
            if len(line) > MAX_COLUMNS and doc not in LONG_LINES_ALLOWED:
                problems.append(f'{where}: {len(line)} columns (at most {MAX_COLUMNS})')
            for target in re.findall(r'\]\(([^)\s]+)\)', line):
                if re.match(r'[a-z]+:', target):
                    continue
                path, _, anchor = target.partition('#')
                path = os.path.normpath(os.path.join(here, path)) if path else doc
                if path not in file_set and path + '/' not in dirs:
                    problems.append(f'{where}: link {target} names no file of the tree')
                elif anchor and path in anchors and anchor not in anchors[path]:
                    problems.append(f'{where}: link {target}: {path} has no such heading')
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
