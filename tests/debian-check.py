#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# debian-check.py - debian/ is consistent with the tree and the build, without building packages.
#
# usage: tests/debian-check.py SOURCE_DIR BUILD_DIR
#
# Checks, one line on stderr for each thing wrong (exit status 1; 0 when none):
# - debian/control parses: a source paragraph, then binary paragraphs with Package,
#   Architecture and Description; every build dependency is in ./vbts's package list (so a fresh
#   machine can build the packages), every library the build outside tests/ asks meson for
#   (dependency(), cc.find_library(); the Debian package that holds its .pc file or library,
#   by dpkg -S) is a build dependency, and debian/changelog's version is meson.build's;
# - every path a debian/*.install list names is one the meson build installs, every file a
#   debian/*.docs list names exists, and so does every file debian/rules installs itself;
# - the systemd unit passes `systemd-analyze verify` (with the agent this build made) without a
#   word, and the udev rule names the unit;
# - the DKMS config, read by bash as DKMS reads it, names kvm, kvm-amd and kvm-intel and a build
#   script that debian/rules installs, and takes 6.12 kernels only; DKMS is told to replace the
#   kernel's own modules (whose version it cannot tell from these);
# - the DKMS build script refuses, with one line naming the kernel (and the patch), a kernel
#   that is not 6.12, a source of another version, and a source the series does not apply to.
# The package build itself (dpkg-buildpackage, lintian) is tests/debian-build, in --long.
import fnmatch
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

errors = []


def error(msg):
    errors.append(msg)
    sys.stderr.write(f'debian-check: {msg}\n')


def paragraphs(path):
    """deb822 paragraphs of a file: [{field: value}], continuation lines joined."""
    paras, cur, last = [], {}, None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if line.startswith('#'):
                continue
            if not line.strip():
                if cur:
                    paras.append(cur)
                cur, last = {}, None
                continue
            if line[0] in ' \t':
                if last is None:
                    error(f'{path}:{n}: a continuation line before any field')
                    continue
                cur[last] += '\n' + line.strip()
                continue
            m = re.match(r'^([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*)$', line)
            if not m:
                error(f'{path}:{n}: not a field: {line!r}')
                continue
            last = m.group(1)
            if last in cur:
                error(f'{path}:{n}: field {last} given twice')
            cur[last] = m.group(2)
    if cur:
        paras.append(cur)
    return paras


def vbts_packages(top):
    with open(os.path.join(top, 'vbts'), encoding='utf-8') as f:
        m = re.search(r'^packages=\((.*?)^\)', f.read(), re.S | re.M)
    return set(m.group(1).split()) if m else set()


def check_control(top):
    deb = os.path.join(top, 'debian')
    paras = paragraphs(os.path.join(deb, 'control'))
    if not paras or 'Source' not in paras[0]:
        error('debian/control: the first paragraph must be the source package')
        return []
    src = paras[0]
    have = vbts_packages(top)
    provided = {'debhelper-compat': 'debhelper'}
    for dep in re.split(r',', src.get('Build-Depends', '')):
        name = re.sub(r'[\s(\[<].*', '', dep.strip())
        if name and provided.get(name, name) not in have:
            error(f'debian/control: build dependency {name} is not in ./vbts\'s packages')
    check_libraries(top, {re.sub(r'[\s(\[<].*', '', d.strip())
                          for d in src.get('Build-Depends', '').split(',')})
    pkgs = []
    for p in paras[1:]:
        for field in ('Package', 'Architecture', 'Description'):
            if field not in p:
                error(f'debian/control: paragraph {p.get("Package", "?")} has no {field}')
        if 'Package' in p:
            pkgs.append(p['Package'])
    with open(os.path.join(deb, 'changelog'), encoding='utf-8') as f:
        m = re.match(r'^(\S+) \(([^)]+)\)', f.readline())
    with open(os.path.join(top, 'meson.build'), encoding='utf-8') as f:
        mv = re.search(r"version\s*:\s*'([^']+)'", f.read())
    if not m or m.group(1) != src['Source']:
        error('debian/changelog: its first line does not name the source package')
    elif not mv or m.group(2).split('-')[0] != mv.group(1):
        error(f'debian/changelog: version {m.group(2)}, meson.build says '
              f'{mv.group(1) if mv else "nothing"}')
    return pkgs


def owner(path):
    """The Debian package that holds the file path, or None."""
    p = subprocess.run(['dpkg-query', '-S', os.path.normpath(path)], capture_output=True,
                       text=True)
    return p.stdout.split(':')[0] if p.returncode == 0 else None


def check_libraries(top, build_deps):
    """Every library meson.build files outside tests/ ask for comes from a build dependency."""
    deps, libs = set(), set()
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        dirs[:] = [d for d in dirs if not d.startswith('.') and
                   not (rel == '.' and d in ('tests', 'build', 'debian')) and
                   not os.path.exists(os.path.join(root, d, 'meson-private'))]
        if 'meson.build' in files:
            with open(os.path.join(root, 'meson.build'), encoding='utf-8') as f:
                text = f.read()
            # a library for the tests only (required : get_option('tests')) is not built here
            deps |= {m for line in text.split('\n') if "get_option('tests')" not in line
                     for m in re.findall(r"\bdependency\('([^']+)'", line)}
            libs |= set(re.findall(r"find_library\('([^']+)'", text))
    deps.discard('threads')
    for name in sorted(deps):
        p = subprocess.run(['pkg-config', '--variable=pcfiledir', name], capture_output=True,
                           text=True)
        pkg = owner(os.path.join(p.stdout.strip(), name + '.pc')) if p.returncode == 0 else None
        if pkg is None:
            error(f'meson dependency {name}: no installed package holds its .pc file')
        elif pkg.split(':')[0] not in build_deps:
            error(f'meson dependency {name} ({pkg}) is not in debian/control\'s Build-Depends')
    for name in sorted(libs):
        p = subprocess.run(['cc', f'-print-file-name=lib{name}.so'], capture_output=True,
                           text=True)
        pkg = owner(p.stdout.strip()) if p.returncode == 0 else None
        if pkg is None:
            error(f'meson find_library {name}: no installed package holds lib{name}.so')
        elif pkg.split(':')[0] not in build_deps:
            error(f'meson find_library {name} ({pkg}) is not in debian/control\'s Build-Depends')


def installed_paths(build):
    """What `meson install` puts where, relative to the prefix (usr/bin/vbts, ...)."""
    out = subprocess.run(['meson', 'introspect', '--installed', build], capture_output=True,
                         text=True, check=True).stdout
    opts = json.loads(subprocess.run(['meson', 'introspect', '--buildoptions', build],
                                     capture_output=True, text=True, check=True).stdout)
    prefix = next(o['value'] for o in opts if o['name'] == 'prefix').rstrip('/')
    paths = []
    for dest in json.loads(out).values():
        if dest.startswith(prefix + '/'):
            paths.append('usr/' + dest[len(prefix) + 1:])
    return paths


def check_lists(top, build, pkgs):
    deb = os.path.join(top, 'debian')
    installed = installed_paths(build)
    for pkg in pkgs:
        path = os.path.join(deb, f'{pkg}.install')
        if os.path.exists(path):
            for line in open(path, encoding='utf-8'):
                pattern = line.split('#')[0].split()
                if pattern and not fnmatch.filter(installed, pattern[0]):
                    error(f'debian/{pkg}.install: {pattern[0]} is nothing meson installs')
        path = os.path.join(deb, f'{pkg}.docs')
        if os.path.exists(path):
            for line in open(path, encoding='utf-8'):
                pattern = line.strip()
                if pattern and not glob.glob(os.path.join(top, pattern)):
                    error(f'debian/{pkg}.docs: {pattern} is no file of the tree')
    with open(os.path.join(deb, 'rules'), encoding='utf-8') as f:
        rules = f.read()
    for src in re.findall(r'install (?:-D )?-m 0\d\d\d (\S+)', rules):
        if '$' in src:
            continue
        if src.startswith('obj-'):
            src = os.path.join(build, src.split('/', 1)[1])
        else:
            src = os.path.join(top, src)
        if not os.path.exists(src):
            error(f'debian/rules installs {src}, which does not exist')
    if not glob.glob(os.path.join(top, 'kvm-patches/0001-*.patch')):
        error('debian/rules: no kvm-patches/0001-*.patch to ship')


def check_unit(top, build):
    deb = os.path.join(top, 'debian')
    unit = os.path.join(deb, 'vbts-guest-agent.service')
    agent = os.path.join(build, 'guest-agent/vbts-agent')
    if not os.access(agent, os.X_OK):
        error(f'{agent}: not built')
        return
    with open(unit, encoding='utf-8') as f:
        text = f.read()
    if 'ExecStart=/usr/sbin/vbts-agent ' not in text:
        error('the unit does not run /usr/sbin/vbts-agent, where debian/rules installs it')
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'vbts-guest-agent.service')
        with open(copy, 'w', encoding='utf-8') as f:
            f.write(text.replace('/usr/sbin/vbts-agent', agent))
        p = subprocess.run(['systemd-analyze', 'verify', copy], capture_output=True, text=True)
        if p.returncode != 0 or p.stdout.strip() or p.stderr.strip():
            error(f'systemd-analyze verify {os.path.basename(unit)}: exit status '
                  f'{p.returncode}: {(p.stdout + p.stderr).strip()}')
    with open(os.path.join(deb, 'vbts-guest-agent.udev'), encoding='utf-8') as f:
        rule = f.read()
    if 'SYSTEMD_WANTS}+="vbts-guest-agent.service"' not in rule or \
            'ATTR{name}=="org.vbts.agent.0"' not in rule:
        error('debian/vbts-guest-agent.udev: does not start the unit for the agent\'s port')


def unit_lines(text):
    """The unit's NAME=VALUE lines, continuation lines joined."""
    text = re.sub(r'\\\n\s*', ' ', text)
    return [l.strip() for l in text.splitlines() if l.strip() and not l.startswith(('#', '['))]


def check_recorder(top, build):
    """vbts-attach@.service, its settings and libvirt's hook."""
    deb = os.path.join(top, 'debian')
    unit = os.path.join(deb, 'vbts-attach@.service')
    vbts = os.path.join(build, 'cli/vbts')
    hook = os.path.join(build, 'attach/vbts-libvirt-hook')
    for exe in (vbts, hook):
        if not os.access(exe, os.X_OK):
            error(f'{exe}: not built')
            return
    with open(unit, encoding='utf-8') as f:
        text = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        # a template is verified through an instance of it
        copy = os.path.join(tmp, 'vbts-attach@web1.service')
        with open(copy, 'w', encoding='utf-8') as f:
            f.write(text.replace('/usr/bin/vbts ', vbts + ' '))
        p = subprocess.run(['systemd-analyze', 'verify', copy], capture_output=True, text=True)
        if p.returncode != 0 or p.stdout.strip() or p.stderr.strip():
            error(f'systemd-analyze verify vbts-attach@.service: exit status '
                  f'{p.returncode}: {(p.stdout + p.stderr).strip()}')
    keys = {}
    for line in unit_lines(text):
        k, _, v = line.partition('=')
        keys.setdefault(k, []).append(v)
    start = keys.get('ExecStart', [''])[0]
    argv = start.split()
    if argv[:4] != ['/usr/bin/vbts', 'attach', '--domain', '%I'] or \
            '--mode stream' not in start or '--disk-budget' not in start or \
            '--trace-base /var/lib/vbts/%I' not in start:
        error(f'vbts-attach@.service: ExecStart is not vbts attach --domain %I in stream mode '
              f'with a budget under /var/lib/vbts/%I: {start}')
    if re.search(r'(^|/)(sh|bash|dash|env)( |$)', start):
        error('vbts-attach@.service: a shell or env in ExecStart')
    if keys.get('User', ['x'])[0] == 'root' or 'DynamicUser' not in keys and 'User' not in keys:
        error('vbts-attach@.service: runs as root')
    caps = set(' '.join(keys.get('AmbientCapabilities', [])).split())
    bound = set(' '.join(keys.get('CapabilityBoundingSet', [])).split())
    if caps != {'CAP_DAC_READ_SEARCH', 'CAP_SYS_PTRACE', 'CAP_PERFMON'} or bound != caps:
        error(f'vbts-attach@.service: capabilities {sorted(caps)}, bound {sorted(bound)}: '
              f'attach needs CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE and CAP_PERFMON, nothing more')
    envs = keys.get('EnvironmentFile', [])
    if '/etc/vbts/attach.conf' not in envs or '-/etc/vbts/attach.d/%I.conf' not in envs:
        error(f'vbts-attach@.service: EnvironmentFile= {envs}')
    # Every variable ExecStart uses is set by the defaults, and vbts attach takes their values.
    conf = {}
    with open(os.path.join(deb, 'attach.conf'), encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                k, eq, v = line.partition('=')
                if not eq or not re.fullmatch(r'[A-Z_][A-Z0-9_]*', k):
                    error(f'debian/attach.conf: not NAME=VALUE: {line}')
                conf[k] = v
    used = re.findall(r'\$\{?([A-Z_][A-Z0-9_]*)\}?', start)
    for k in used:
        if k not in conf:
            error(f'vbts-attach@.service: ${k} is not set in debian/attach.conf')
    args = []
    for word in argv[1:]:
        m = re.fullmatch(r'\$\{([A-Z_0-9]+)\}', word)
        if m:
            args.append(conf.get(m.group(1), ''))
        elif re.fullmatch(r'\$([A-Z_0-9]+)', word):
            args += conf.get(word[1:], '').split()
        else:
            args.append(word.replace('%I', 'web1'))
    # --pid as well: past every option, vbts attach refuses two VMs (nothing is attached).
    p = subprocess.run([vbts] + args + ['--pid', '1'], capture_output=True, text=True)
    if p.returncode != 2 or 'more than one VM' not in p.stderr:
        error(f'vbts attach with the unit\'s options and the default settings: '
              f'{p.stderr.strip()}')
    with open(os.path.join(deb, 'vbts.links'), encoding='utf-8') as f:
        links = [l.split() for l in f if l.strip()]
    if ['usr/libexec/vbts/vbts-libvirt-hook', 'etc/libvirt/hooks/qemu.d/vbts-attach'] not in links:
        error('debian/vbts.links: no libvirt qemu hook for the recorder')
    with open(os.path.join(deb, 'rules'), encoding='utf-8') as f:
        rules = f.read()
    for want in ('debian/vbts/lib/systemd/system/vbts-attach@.service',
                 'debian/vbts/etc/vbts/attach.conf', 'debian/vbts/etc/vbts/attach.d'):
        if want not in rules:
            error(f'debian/rules does not install {want}')
    # The hook: nothing for a domain without settings, whatever the operation.
    p = subprocess.run([hook, 'no-such-domain-here', 'started', 'begin', '-'],
                       capture_output=True, text=True, input='<domain/>')
    if p.returncode != 0 or p.stdout or p.stderr:
        error(f'the libvirt hook on an unselected domain: status {p.returncode}, '
              f'{(p.stdout + p.stderr).strip()}')


def dkms_vars(conf, kernel):
    script = ('kernelver=$1; kernel_source_dir=/lib/modules/$1/build; . "$2"; '
              'printf "%s\\n" "$PACKAGE_NAME" "${BUILT_MODULE_NAME[*]}" "${MAKE[0]}" '
              '"$PRE_BUILD" "$AUTOINSTALL"; [[ $1 =~ $BUILD_EXCLUSIVE_KERNEL ]] && echo yes || '
              'echo no')
    p = subprocess.run(['bash', '-euc', script, 'x', kernel, conf], capture_output=True,
                       text=True)
    if p.returncode != 0:
        error(f'debian/vbts-kvm-dkms.dkms: bash cannot read it: {p.stderr.strip()}')
        return None
    return p.stdout.split('\n')


def check_dkms(top):
    conf = os.path.join(top, 'debian/vbts-kvm-dkms.dkms')
    v = dkms_vars(conf, '6.12.117+deb12-amd64')
    if not v:
        return
    name, modules, make, pre, auto, exclusive = v[:6]
    if name != 'vbts-kvm':
        error(f'dkms.conf: PACKAGE_NAME {name}, the package vbts-kvm-dkms needs vbts-kvm')
    if modules.split() != ['kvm', 'kvm-amd', 'kvm-intel']:
        error(f'dkms.conf: builds {modules}, not kvm kvm-amd kvm-intel')
    if not make.startswith('./vbts-kvm-build 6.12.117+deb12-amd64 /lib/modules/'):
        error(f'dkms.conf: MAKE[0] is {make!r}')
    if not pre.startswith('vbts-kvm-build --check 6.12.117+deb12-amd64 '):
        error(f'dkms.conf: PRE_BUILD is {pre!r}')
    if auto != 'yes':
        error('dkms.conf: AUTOINSTALL is not yes: new kernels would get no modules')
    if exclusive != 'yes':
        error('dkms.conf: BUILD_EXCLUSIVE_KERNEL refuses 6.12.117+deb12-amd64')
    v = dkms_vars(conf, '6.1.0-30-amd64')
    if v and v[5] != 'no':
        error('dkms.conf: BUILD_EXCLUSIVE_KERNEL takes 6.1.0-30-amd64')
    with open(os.path.join(top, 'debian/rules'), encoding='utf-8') as f:
        rules = f.read()
    if 'debian/dkms/vbts-kvm-build $(dkms_src)/' not in rules:
        error('debian/rules does not install the build script DKMS runs')
    # DKMS keeps the kernel's own kvm*.ko when the versions look alike (neither has one).
    with open(os.path.join(top, 'debian/dkms/modules_to_force_install'), encoding='utf-8') as f:
        if f.read().split() != [f'{name}_version-override']:
            error('debian/dkms/modules_to_force_install does not name '
                  f'{name}_version-override')
    if 'usr/share/dkms/modules_to_force_install/' + name not in rules:
        error('debian/rules does not install modules_to_force_install')


def fake_source(path, sublevel):
    """A linux-source tarball of Linux 6.12.SUBLEVEL that holds a Makefile only."""
    with tarfile.open(path, 'w:xz') as t:
        data = f'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = {sublevel}\n'.encode()
        info = tarfile.TarInfo('linux-source-6.12/Makefile')
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))


def refusal(top, tmp, kernel, source, want):
    """Runs the DKMS build script as DKMS does; it must fail with the one line `want`."""
    work = os.path.join(tmp, 'build')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, 'patches'))
    for p in glob.glob(os.path.join(top, 'kvm-patches/[0-9][0-9][0-9][0-9]-*.patch')):
        shutil.copy(p, os.path.join(work, 'patches'))
    hdr = os.path.join(tmp, 'headers')
    os.makedirs(hdr, exist_ok=True)
    for f in ('.config', 'Module.symvers'):
        open(os.path.join(hdr, f), 'w').close()
    env = dict(os.environ, VBTS_KVM_SOURCE=source)
    p = subprocess.run([os.path.join(top, 'debian/dkms/vbts-kvm-build'), '--check', kernel, hdr],
                       cwd=work, capture_output=True, text=True, env=env, timeout=120)
    lines = p.stderr.strip().split('\n')
    if p.returncode == 0 or len(lines) != 1 or not re.fullmatch(want, lines[0]):
        error(f'vbts-kvm-build --check {kernel}: exit status {p.returncode}, said '
              f'{p.stderr.strip()!r}; expected one line matching {want!r}')


def check_refusals(top):
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, 'linux-source-6.12.117.tar.xz')
        other = os.path.join(tmp, 'linux-source-6.12.48.tar.xz')
        fake_source(good, 117)
        fake_source(other, 48)
        refusal(top, tmp, '6.1.0-30-amd64', good,
                r'vbts-kvm: kernel 6\.1\.0-30-amd64: the series is for Linux 6\.12, not 6\.1\.0')
        refusal(top, tmp, '6.12.117+deb12-amd64', other,
                r'vbts-kvm: kernel 6\.12\.117\+deb12-amd64: linux-source-6\.12 is Linux '
                r'6\.12\.48, not 6\.12\.117 .*')
        refusal(top, tmp, '6.12.117+deb12-amd64', good,
                r'vbts-kvm: kernel 6\.12\.117\+deb12-amd64: 0001-[^ ]+\.patch does not apply '
                r'to Linux 6\.12\.117')


def main(argv):
    if len(argv) != 3:
        sys.stderr.write('usage: debian-check.py SOURCE_DIR BUILD_DIR\n')
        return 2
    top, build = (os.path.abspath(a) for a in argv[1:])
    pkgs = check_control(top)
    if set(pkgs) != {'vbts', 'vbts-kvm-dkms', 'vbts-guest-agent'}:
        error(f'debian/control: packages {pkgs}, expected vbts, vbts-kvm-dkms, vbts-guest-agent')
    check_lists(top, build, pkgs)
    check_unit(top, build)
    check_recorder(top, build)
    check_dkms(top)
    check_refusals(top)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
