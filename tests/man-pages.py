#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# man-pages.py - the man pages, `vbts help` and the commands and options the binary takes agree.
#
# usage: tests/man-pages.py SOURCE_DIR VBTS MAN_DIR
#
# Checks, one line on stderr for each thing wrong (exit status 1; 0 when none):
# - every command cli/main.c dispatches (its commands[] table, each struct vbts_command found in
#   cli/*.c) and every command `vbts help` lists has a section in doc/commands.md, and the other
#   way round;
# - `vbts help CMD` and `vbts CMD --help` print the text made from that section (its synopsis
#   first, its pointer to the man page last), not a text of the command's own;
# - every option the command's file parses (getopt_long()'s table and option letters, options
#   compared with strcmp(), --harness where harness__strip() takes it) is one of its section's
#   options;
# - MAN_DIR holds vbts(1), vbts-CMD(1) for each section, vbts-trace(5) and PROG(8) for each
#   `## vbts-PROG` section (vbts-agent(8), whose options are its getopt() letters), and
#   `man --warnings`
#   renders each (as lintian does) with no warning at 80 and 60 columns;
# - the bash completion in MAN_DIR is valid bash and offers every command.
import os
import re
import subprocess
import sys

errors = []


def error(msg):
    errors.append(msg)
    sys.stderr.write(f'man-pages: {msg}\n')


def dispatched(top):
    """{command name: path of the cli/ file that defines it} of cli/main.c's commands[]."""
    with open(os.path.join(top, 'cli/main.c'), encoding='utf-8') as f:
        main = f.read()
    table = re.search(r'commands\[\]\s*=\s*\{(.*?)\};', main, re.S)
    if not table:
        error('cli/main.c: no commands[] table')
        return {}
    symbols = re.findall(r'&(\w+)', table.group(1))
    found, defined = {}, set()
    cli = os.path.join(top, 'cli')
    for name in sorted(os.listdir(cli)):
        if not name.endswith('.c'):
            continue
        with open(os.path.join(cli, name), encoding='utf-8') as f:
            src = f.read()
        for sym in symbols:
            m = re.search(r'struct vbts_command\s+' + sym + r'\s*=\s*\{(.*?)\};', src, re.S)
            cmd = m and re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
            if cmd:
                found[cmd.group(1)] = os.path.join(cli, name)
                defined.add(sym)
    for sym in symbols:
        if sym not in defined:
            error(f'cli/main.c dispatches {sym}, which no cli/*.c defines with a .name')
    return found


def parsed_options(path):
    """The options a cli/cmd-*.c file parses: '--long' and '-x' words."""
    with open(path, encoding='utf-8') as f:
        src = f.read()
    opts = set()
    for name in re.findall(r'\{\s*"([a-z0-9-]+)"\s*,\s*(?:no|required|optional)_argument', src):
        opts.add('--' + name)
    for optstring in re.findall(r'getopt_long\([^,]+,[^,]+,\s*"([^"]*)"', src):
        for c in optstring:
            if c.isalnum():
                opts.add('-' + c)
    for name in re.findall(r'strcmp\([^,()]*argv[^,()]*(?:\([^)]*\))?[^,]*,\s*"(--[a-z][a-z0-9-]*)"',
                           src):
        opts.add(name)
    if 'harness__strip(' in src:
        opts.add('--harness')
    return opts


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main(argv):
    if len(argv) != 4:
        sys.stderr.write('usage: man-pages.py SOURCE_DIR VBTS MAN_DIR\n')
        return 2
    top, vbts, man_dir = argv[1:]
    sys.path.insert(0, os.path.join(top, 'doc/man'))
    import mkpages
    try:
        sections = mkpages.parse_commands(os.path.join(top, 'doc/commands.md'))
    except mkpages.FormatError as e:
        error(f'doc/commands.md: {e}')
        return 1
    by_name = {s.name: s for s in sections if s.name}

    commands = dispatched(top)
    rc, out, _ = run([vbts, 'help'])
    listed = re.findall(r'^  ([a-z][a-z0-9-]*)\s', out, re.M)
    if rc != 0 or not listed:
        error(f'vbts help: exit status {rc}, no list of commands')
    for name in sorted(set(commands) | set(listed)):
        if name not in by_name:
            error(f'vbts {name}: no "## vbts {name}" section in doc/commands.md')
    for name in sorted(by_name):
        if name not in commands and name != 'help':
            error(f'doc/commands.md: "## vbts {name}" is no command cli/main.c dispatches')
        if name not in listed:
            error(f'vbts help does not list {name}')

    for name, sec in sorted(by_name.items()):
        want = mkpages.help_text(sec)
        for args in ([vbts, 'help', name], [vbts, name, '--help']):
            if name == 'help' and args[2] == '--help':
                continue
            rc, out, err = run(args)
            if rc != 0 or out != want:
                first = out.split('\n', 1)[0]
                error(f'{" ".join(args[1:])}: exit status {rc}, prints "{first}", not the text '
                      f'of doc/commands.md')
        documented = {w for head, _ in sec.options for w in mkpages.option_words(head)}
        if name in commands:
            for opt in sorted(parsed_options(commands[name]) - documented):
                error(f'vbts {name} parses {opt} ({os.path.relpath(commands[name], top)}), '
                      f'which its section of doc/commands.md does not list')

    env = dict(os.environ, LC_ALL='C.UTF-8', MAN_KEEP_FORMATTING='1')
    programs = mkpages.parse_commands(os.path.join(top, 'doc/commands.md'), programs=True)
    for prog in programs:
        # a program's options are its getopt() letters (guest-agent/vbts-agent.c, ...)
        src = os.path.join(top, 'guest-agent', prog.name + '.c')
        text = open(src, encoding='utf-8').read() if os.path.exists(src) else ''
        m = re.search(r'getopt\(argc, argv, "([^"]*)"\)', text)
        if not m:
            error(f'{prog.name}: no getopt() in {os.path.relpath(src, top)}')
            continue
        parsed = {'-' + c for c in m.group(1) if c != ':'}
        documented = {w for head, _ in prog.options for w in mkpages.option_words(head)}
        if parsed != documented:
            error(f'{prog.name}: parses {sorted(parsed)}, its section of doc/commands.md '
                  f'lists {sorted(documented)}')
    for page in mkpages.page_names(sections, programs):
        path = os.path.join(man_dir, page)
        if not os.path.isfile(path):
            error(f'{page}: not made ({path})')
            continue
        for width in ('80', '60'):
            env['MANWIDTH'] = width
            p = subprocess.run(['man', '--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', path],
                               capture_output=True, text=True, env=env, timeout=60)
            if p.returncode != 0 or p.stderr.strip():
                error(f'{page}: man --warnings at {width} columns: exit status {p.returncode}: '
                      + ' | '.join(p.stderr.strip().split('\n')[:3]))

    comp = os.path.join(man_dir, 'vbts')
    p = subprocess.run(['bash', '-n', comp], capture_output=True, text=True)
    if p.returncode != 0:
        error(f'bash completion: {p.stderr.strip()}')
    else:
        with open(comp, encoding='ascii') as f:
            text = f.read()
        for name in by_name:
            if not re.search(r'compgen -W "[^"]*\b' + re.escape(name) + r'\b', text):
                error(f'bash completion: no command {name}')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
