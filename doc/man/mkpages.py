#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# mkpages.py - the man pages, `vbts help` texts and bash completion, from doc/commands.md.
#
# usage: mkpages.py list COMMANDS_MD
#        mkpages.py man OUTDIR VERSION COMMANDS_MD FORMATS_MD
#        mkpages.py c OUT.c COMMANDS_MD
#        mkpages.py completion OUT COMMANDS_MD
#        mkpages.py options COMMANDS_MD
#
# doc/commands.md is the one source: a `## vbts` section for vbts(1), then one `## vbts CMD`
# section per command, each in this order: the command's one-line summary in `*...*`, its
# synopsis in a fenced code block, paragraphs (and code blocks) saying what it does, its
# options as a list of "- `--opt ARG`: text" items, more paragraphs, and a paragraph starting
# "Exit status:". From it come vbts(1) and vbts-CMD(1) (roff), the texts `vbts help CMD` prints
# (a C table, cli/help.c reads it) and the bash completion of commands and options. A
# `## vbts-PROG` section (same shape) is a program of the project's own, not a command of vbts:
# its page is PROG(8) (vbts-agent(8)), it has no help text nor completion. vbts-trace(5)
# is doc/formats.md. `list` prints the man page file names, `options` each command's options.
# A section out of this shape stops the build with the line and what was expected.
import re
import sys
import textwrap

WIDTH = 79
HELP_OPT_COL = 22


class FormatError(Exception):
    pass


class Section:
    def __init__(self, name, line):
        self.name = name          # '' for vbts(1), else the command
        self.line = line
        self.summary = None
        self.synopsis = []
        self.blocks = []          # ('p', text) | ('code', [lines]) before the options
        self.options = []         # (head, text)
        self.after = []           # blocks after the options
        self.exit_status = None


def read_blocks(lines, start):
    """Markdown blocks from lines[start:] up to the next `## ` heading: (kind, payload, lineno)."""
    blocks, i = [], start
    while i < len(lines):
        line = lines[i]
        if line.startswith('## ') or line.startswith('# '):
            break
        if not line.strip():
            i += 1
            continue
        if line.startswith('```'):
            code, j = [], i + 1
            while j < len(lines) and not lines[j].startswith('```'):
                code.append(lines[j])
                j += 1
            if j == len(lines):
                raise FormatError(f'{i + 1}: code block not closed')
            blocks.append(('code', code, i + 1))
            i = j + 1
            continue
        if line.startswith('- '):
            text, j = [line[2:].strip()], i + 1
            while j < len(lines) and lines[j].startswith('  ') and lines[j].strip():
                text.append(lines[j].strip())
                j += 1
            blocks.append(('item', ' '.join(text), i + 1))
            i = j
            continue
        if line.startswith('#'):
            raise FormatError(f'{i + 1}: only `#` and `##` headings are understood')
        text, j = [], i
        while (j < len(lines) and lines[j].strip() and not lines[j].startswith('```') and
               not lines[j].startswith('- ') and not lines[j].startswith('#')):
            text.append(lines[j].strip())
            j += 1
        blocks.append(('p', ' '.join(text), i + 1))
        i = j
    return blocks, i


OPT_ITEM = re.compile(r'^((?:`-[^`]+`(?:, )?)+): (.*)$')


PROGRAM = re.compile(r'^## (vbts-[a-z][a-z0-9-]*)\s*$')


def parse_commands(path, programs=False):
    """The sections of doc/commands.md, in order: the commands of vbts, or with @programs the
    `## vbts-PROG` sections of programs of their own (named vbts-PROG)."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    sections, i = [], 0
    while i < len(lines):
        m = re.match(r'^## vbts(?: ([a-z][a-z0-9-]*))?\s*$', lines[i])
        p = PROGRAM.match(lines[i])
        if p:
            m = p if programs else None
            if not programs:
                i += 1
                continue
        elif m and programs:
            m = None
            i += 1
            continue
        if not m:
            if lines[i].startswith('## '):
                raise FormatError(f'{path}:{i + 1}: expected "## vbts", "## vbts CMD" or '
                                  f'"## vbts-PROG"')
            i += 1
            continue
        sec = Section(m.group(1) or '', i + 1)
        blocks, i = read_blocks(lines, i + 1)
        where = f'{path}:{sec.line}: vbts {sec.name}'.rstrip()
        if not blocks or blocks[0][0] != 'p' or not re.fullmatch(r'\*[^*]+\*', blocks[0][1]):
            raise FormatError(f'{where}: the first line must be its summary in *...*')
        sec.summary = blocks[0][1][1:-1]
        if len(blocks) < 2 or blocks[1][0] != 'code':
            raise FormatError(f'{where}: the summary must be followed by the synopsis in ```')
        sec.synopsis = blocks[1][1]
        seen_options = False
        for kind, payload, lineno in blocks[2:]:
            if kind == 'item':
                m = OPT_ITEM.match(payload)
                if not m:
                    raise FormatError(f'{path}:{lineno}: expected "- `--option ARG`: text"')
                if sec.after:
                    raise FormatError(f'{path}:{lineno}: options must be one list')
                sec.options.append((m.group(1), m.group(2)))
                seen_options = True
            elif kind == 'p' and payload.startswith('Exit status:'):
                if sec.exit_status:
                    raise FormatError(f'{path}:{lineno}: a second "Exit status:"')
                sec.exit_status = payload[len('Exit status:'):].strip()
            elif sec.exit_status:
                raise FormatError(f'{path}:{lineno}: "Exit status:" must be the last paragraph')
            elif seen_options:
                sec.after.append((kind, payload))
            else:
                sec.blocks.append((kind, payload))
        sections.append(sec)
    if programs:
        return sections
    if not sections or sections[0].name:
        raise FormatError(f'{path}: the first section must be "## vbts"')
    names = [s.name for s in sections]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise FormatError(f'{path}: sections given twice: {", ".join(sorted(dup))}')
    return sections


def option_words(head):
    """The options an item's head names: '`-o FILE`, `--output FILE`' -> ['-o', '--output']."""
    return [c.split()[0].split('=')[0] for c in re.findall(r'`([^`]+)`', head)
            if c.startswith('-')]


# ---- plain text (vbts help) ----------------------------------------------------------------

def plain(text):
    text = re.sub(r'\[([^\]]+)\]\(([^)]+)\)', r'\1', text)
    text = re.sub(r'\*\*([^*]+)\*\*', r'\1', text)
    return text.replace('`', '')


def wrap(text, indent='', first=None):
    return textwrap.fill(plain(text), WIDTH, initial_indent=indent if first is None else first,
                         subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def help_blocks(blocks, out):
    for kind, payload in blocks:
        if kind == 'code':
            out += ['  ' + line for line in payload] + ['']
        elif kind == 'item':
            out += [wrap(payload, '    ', '  - '), '']
        else:
            out += [wrap(payload), '']


def help_text(sec):
    out = []
    for n, line in enumerate(sec.synopsis):
        out.append(('usage: ' if n == 0 else '       ') + line)
    out.append('')
    help_blocks(sec.blocks, out)
    if sec.options:
        out.append('options:')
        for head, text in sec.options:
            h = '  ' + plain(head)
            if len(h) < HELP_OPT_COL - 1:
                out.append(wrap(text, ' ' * HELP_OPT_COL, h.ljust(HELP_OPT_COL)))
            else:
                out += [h, wrap(text, ' ' * HELP_OPT_COL)]
        out.append('')
    help_blocks(sec.after, out)
    if sec.exit_status:
        out += [wrap('Exit status: ' + sec.exit_status), '']
    if sec.name:
        out.append(f"The manual: man vbts-{sec.name}")
    return '\n'.join(out).rstrip('\n') + '\n'


def c_string(s):
    out = []
    for b in s.encode('utf-8'):
        c = chr(b)
        if c == '\n':
            out.append('\\n"\n\t"')
        elif c in '"\\':
            out.append('\\' + c)
        elif 32 <= b < 127 and c != '?':
            out.append(c)
        else:
            out.append('\\%03o' % b)
    return '"' + ''.join(out) + '"'


def write_c(path, sections):
    with open(path, 'w', encoding='utf-8') as f:
        f.write('/* SPDX-License-Identifier: GPL-2.0 */\n'
                '/* Generated by doc/man/mkpages.py from doc/commands.md: do not edit. */\n'
                '#include "help.h"\n\n'
                'const struct help_page help__pages[] = {\n')
        for sec in sections:
            if not sec.name:
                continue
            f.write(f'\t{{ {c_string(sec.name)}, {c_string(sec.summary)},\n'
                    f'\t  {c_string(help_text(sec))} }},\n')
        f.write('\t{ NULL, NULL, NULL },\n};\n')


# ---- roff (man pages) ----------------------------------------------------------------------

GLYPHS = {'\u2013': '\\(en', '\u2014': '\\(em', '\u2026': '\\&...', '\u2192': '\\(->',
          '\u2018': '\\(oq', '\u2019': '\\(cq', '\u201c': '\\(lq', '\u201d': '\\(rq'}


def roff_escape(s, code=False):
    out = []
    for c in s:
        if c == '\\':
            out.append('\\e')
        elif c == '-' and code:
            out.append('\\-')
        elif c in GLYPHS:
            out.append(GLYPHS[c])
        elif ord(c) > 126:
            out.append('\\[u%04X]' % ord(c))
        else:
            out.append(c)
    return ''.join(out)


def roff_inline(text):
    out, pos = [], 0
    token = re.compile(r'`([^`]+)`|\[([^\]]+)\]\(([^)]+)\)|\*\*([^*]+)\*\*')
    for m in token.finditer(text):
        out.append(roff_escape(text[pos:m.start()]))
        if m.group(1) is not None:
            # a break point after each comma: a long JSON example still fills lines
            out.append('\\fB' + roff_escape(m.group(1), code=True).replace(',', ',\\:') +
                       '\\fR')
        elif m.group(2) is not None:
            out.append(roff_inline(m.group(2)))
        else:
            out.append('\\fB' + roff_escape(m.group(4)) + '\\fR')
        pos = m.end()
    out.append(roff_escape(text[pos:]))
    return ''.join(out)


def roff_line(s):
    """A text line that roff will not take for a request."""
    return '\\&' + s if s[:1] in ('.', "'") else s


def roff_code(lines):
    out = ['.PP', '.RS 4', '.nf']
    out += [roff_line(roff_escape(line, code=True)) for line in lines]
    out += ['.fi', '.RE']
    return out


def roff_blocks(blocks):
    out = []
    for kind, payload in blocks:
        if kind == 'code':
            out += roff_code(payload)
        elif kind == 'item':
            out += ['.IP \\(bu 2', roff_line(roff_inline(payload))]
        else:
            out += ['.PP', roff_line(roff_inline(payload))]
    return out


def links_of(texts):
    docs = []
    for t in texts:
        for target in re.findall(r'\]\(([^)#]+\.md)(?:#[^)]*)?\)', t):
            name = target.split('/')[-1]
            if name not in docs:
                docs.append(name)
    return docs


def see_also(pages, docs):
    out = ['.SH "SEE ALSO"', roff_line(',\n'.join(f'\\fB{p}\\fR({s})' for p, s in pages))]
    if docs:
        out += ['.PP', 'The reference in \\fI/usr/share/doc/vbts/\\fR: ' +
                ', '.join(roff_escape(d) for d in docs) + '.']
    return out


def header(name, section, version, what):
    return [f'.\\" Generated by doc/man/mkpages.py from {what}: do not edit.',
            f'.TH {name.upper()} {section} "" "vbts {version}" "vbts manual"',
            # left-aligned: a line of one long JSON example has no space to stretch
            '.ad l', '.SH NAME']


def texts_of(sec):
    t = [p for k, p in sec.blocks + sec.after if k != 'code'] + [x for _, x in sec.options]
    return t + ([sec.exit_status] if sec.exit_status else [])


def man_command(sec, sections, version):
    out = header(f'vbts-{sec.name}', 1, version, 'doc/commands.md')
    out.append(f'vbts\\-{roff_escape(sec.name, True)} \\- {roff_escape(sec.summary)}')
    out += ['.SH SYNOPSIS', '.nf'] + [roff_line(roff_escape(s, True)) for s in sec.synopsis]
    out += ['.fi', '.SH DESCRIPTION'] + roff_blocks(sec.blocks)
    if sec.options:
        out.append('.SH OPTIONS')
        for head, text in sec.options:
            out += ['.TP', roff_line(roff_inline(head)), roff_line(roff_inline(text))]
    if sec.after:
        out += ['.SH NOTES'] + roff_blocks(sec.after)
    if sec.exit_status:
        out += ['.SH "EXIT STATUS"', roff_line(roff_inline(sec.exit_status))]
    mentioned = set(re.findall(r'vbts ([a-z]+)', ' '.join(texts_of(sec) + sec.synopsis)))
    pages = [('vbts', 1)] + [(f'vbts-{s.name}', 1) for s in sections
                             if s.name and s.name != sec.name and s.name in mentioned]
    pages.append(('vbts-trace', 5))
    out += see_also(pages, links_of(texts_of(sec)))
    return '\n'.join(out) + '\n'


def man_vbts(sec, sections, version):
    out = header('vbts', 1, version, 'doc/commands.md')
    out.append(f'vbts \\- {roff_escape(sec.summary)}')
    out += ['.SH SYNOPSIS', '.nf'] + [roff_line(roff_escape(s, True)) for s in sec.synopsis]
    out += ['.fi', '.SH DESCRIPTION'] + roff_blocks(sec.blocks)
    out.append('.SH COMMANDS')
    for s in sections:
        if s.name:
            out += ['.TP', f'\\fBvbts\\-{roff_escape(s.name, True)}\\fR(1)',
                    roff_line(roff_escape(s.summary))]
    if sec.options:
        out.append('.SH OPTIONS')
        for head, text in sec.options:
            out += ['.TP', roff_line(roff_inline(head)), roff_line(roff_inline(text))]
    if sec.after:
        out += ['.SH NOTES'] + roff_blocks(sec.after)
    if sec.exit_status:
        out += ['.SH "EXIT STATUS"', roff_line(roff_inline(sec.exit_status))]
    pages = [(f'vbts-{s.name}', 1) for s in sections if s.name] + [('vbts-trace', 5)]
    out += see_also(pages, links_of(texts_of(sec)))
    return '\n'.join(out) + '\n'


def man_trace(path, sections, version):
    """vbts-trace(5): doc/formats.md, its `## ` headings as sections."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    out = header('vbts-trace', 5, version, 'doc/formats.md')
    out.append('vbts-trace \\- the trace directory of vbts and the formats of its files')
    texts, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('## '):
            out.append('.SH ' + '"' + roff_escape(line[3:].strip().upper()) + '"')
            blocks, i = read_blocks(lines, i + 1)
            out += roff_blocks([(k, p) for k, p, _ in blocks])
            texts += [p for k, p, _ in blocks if k != 'code']
            continue
        i += 1
    pages = [('vbts', 1)] + [(f'vbts-{s.name}', 1) for s in sections
                             if s.name in ('run', 'attach', 'decode')]
    out += see_also(pages, links_of(texts))
    return '\n'.join(out) + '\n'


def man_program(sec, sections, version):
    """PROG(8) of a `## vbts-PROG` section."""
    out = header(sec.name, 8, version, 'doc/commands.md')
    out.append(f'{roff_escape(sec.name, True)} \\- {roff_escape(sec.summary)}')
    out += ['.SH SYNOPSIS', '.nf'] + [roff_line(roff_escape(s, True)) for s in sec.synopsis]
    out += ['.fi', '.SH DESCRIPTION'] + roff_blocks(sec.blocks)
    if sec.options:
        out.append('.SH OPTIONS')
        for head, text in sec.options:
            out += ['.TP', roff_line(roff_inline(head)), roff_line(roff_inline(text))]
    if sec.after:
        out += ['.SH NOTES'] + roff_blocks(sec.after)
    if sec.exit_status:
        out += ['.SH "EXIT STATUS"', roff_line(roff_inline(sec.exit_status))]
    mentioned = set(re.findall(r'vbts ([a-z]+)', ' '.join(texts_of(sec) + sec.synopsis)))
    pages = [('vbts', 1)] + [(f'vbts-{s.name}', 1) for s in sections
                             if s.name and s.name in mentioned]
    pages.append(('vbts-trace', 5))
    out += see_also(pages, links_of(texts_of(sec)))
    return '\n'.join(out) + '\n'


def page_names(sections, programs=()):
    return ['vbts.1'] + [f'vbts-{s.name}.1' for s in sections if s.name] + ['vbts-trace.5'] + \
        [f'{p.name}.8' for p in programs]


def write_man(outdir, version, sections, formats, programs=()):
    for prog in programs:
        with open(f'{outdir}/{prog.name}.8', 'w', encoding='ascii') as f:
            f.write(man_program(prog, sections, version))
    for sec in sections:
        name = f'vbts-{sec.name}.1' if sec.name else 'vbts.1'
        text = man_command(sec, sections, version) if sec.name else \
            man_vbts(sec, sections, version)
        with open(f'{outdir}/{name}', 'w', encoding='ascii') as f:
            f.write(text)
    with open(f'{outdir}/vbts-trace.5', 'w', encoding='ascii') as f:
        f.write(man_trace(formats, sections, version))


# ---- bash completion -----------------------------------------------------------------------

def write_completion(path, sections):
    cmds = [s.name for s in sections if s.name]
    out = ['# bash completion for vbts',
           '# Generated by doc/man/mkpages.py from doc/commands.md: do not edit.',
           '_vbts()', '{',
           '\tlocal cur prev words cword',
           '\t_init_completion || return',
           '\tif [ "$cword" -eq 1 ]; then',
           f'\t\tCOMPREPLY=($(compgen -W "{" ".join(cmds)} --version" -- "$cur"))',
           '\t\treturn', '\tfi',
           '\tlocal opts=', '\tcase ${words[1]} in']
    for s in sections:
        if not s.name:
            continue
        if s.name == 'help':
            out.append(f'\thelp) COMPREPLY=($(compgen -W "{" ".join(cmds)}" -- "$cur")); '
                       'return ;;')
            continue
        opts = sorted({w for head, _ in s.options for w in option_words(head)})
        out.append(f'\t{s.name}) opts="{" ".join(opts)}" ;;')
    out += ['\tesac',
            '\tif [[ $cur == -* ]] && [ -n "$opts" ]; then',
            '\t\tCOMPREPLY=($(compgen -W "$opts" -- "$cur"))',
            '\t\treturn', '\tfi',
            '\t_filedir', '}',
            'complete -F _vbts vbts', '']
    with open(path, 'w', encoding='ascii') as f:
        f.write('\n'.join(out))


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == 'list':
            print('\n'.join(page_names(parse_commands(argv[2]),
                                        parse_commands(argv[2], programs=True))))
        elif len(argv) == 3 and argv[1] == 'options':
            for s in parse_commands(argv[2]):
                print(s.name or '-', *[w for head, _ in s.options for w in option_words(head)])
        elif len(argv) == 6 and argv[1] == 'man':
            write_man(argv[2], argv[3], parse_commands(argv[4]), argv[5],
                      parse_commands(argv[4], programs=True))
        elif len(argv) == 4 and argv[1] == 'c':
            write_c(argv[2], parse_commands(argv[3]))
        elif len(argv) == 4 and argv[1] == 'completion':
            write_completion(argv[2], parse_commands(argv[3]))
        else:
            sys.stderr.write('usage: mkpages.py list|options|man|c|completion ... '
                             '(see the top of this file)\n')
            return 2
    except FormatError as e:
        sys.stderr.write(f'mkpages.py: {e}\n')
        return 1
    except OSError as e:
        sys.stderr.write(f'mkpages.py: {e}\n')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
