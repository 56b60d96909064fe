#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# linux-oracle.py - the process-oracle test's reference and comparison.
#
#   linux-oracle.py text PROG
#       the program's executable range, "0xLO 0xHI" (HI exclusive), from its ELF program headers
#   linux-oracle.py reference --prog PROG LOG
#       QEMU's `-singlestep -d in_asm,exec,nochain -dfilter LO+SIZE` log as the program's taken
#       branches, one "0xFROM 0xTO" line each, in execution order
#   linux-oracle.py compare --prog PROG --reference REF --trace JSONL --console FILE
#                           [--name NAME] [--decoy-name NAME]
#       `vbts decode --format jsonl` of a trace recorded with --task NAME --cpl user against REF
#       and against what /init printed ("vbts-oracle-init: spawned COMM pid N status S")
#   linux-oracle.py self-test --data DIR
#       the two above on hand-made inputs, and each perturbation of them must fail
#
# The reference: each "Trace" line of the log is one executed instruction (one instruction per
# block with -singlestep); its length comes from the in_asm listing of the block. Consecutive
# executions whose second PC is not the first's fall-through are a taken branch; a PC repeated
# (an instruction re-executed after a fault, a REP string step) is one execution, and a
# "Stopped execution of TB chain before PC" line withdraws the Trace line of PC before it.
# A system call or an interrupt returns to the fall-through and adds nothing.
#
# Exit status: 0 agreement (or a reference written), 1 a difference, 2 bad input.
import argparse
import json
import os
import re
import struct
import sys

KERNEL_MIN = 0xFFFF800000000000
# Branches from the program into the kernel: their "to" lies outside the program.
TO_KERNEL_KINDS = {"syscall", "exception", "interrupt", "int"}
CONTEXT = 6


class BadInput(Exception):
    pass


def text_ranges(path):
    """Executable PT_LOAD segments of the ELF file at @path: [(lo, hi)], hi exclusive."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise BadInput(f"{path}: not a little-endian ELF64 file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    if phentsize < 56 or phoff + phnum * phentsize > len(data):
        raise BadInput(f"{path}: program headers out of bounds")
    ranges = []
    for i in range(phnum):
        p_type, p_flags, _, vaddr, _, _, memsz = struct.unpack_from(
            "<IIQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1 and memsz:
            ranges.append((vaddr, vaddr + memsz))
    if not ranges:
        raise BadInput(f"{path}: no executable segment")
    return ranges


def in_ranges(addr, ranges):
    return any(lo <= addr < hi for lo, hi in ranges)


# ---- the reference ---------------------------------------------------------------------------

INSN_RE = re.compile(r"^0x([0-9a-fA-F]+):\s+((?:[0-9a-fA-F]{2}(?: |$))+)\s*(.*)$")
TRACE_RE = re.compile(r"^Trace \d+: 0x[0-9a-fA-F]+ \[([0-9a-fA-F]+)/([0-9a-fA-F]+)/")
STOPPED_RE = re.compile(r"^Stopped execution of TB chain before 0x[0-9a-fA-F]+ \[([0-9a-fA-F]+)\]")
REP_PREFIXES = (0xF2, 0xF3)
STRING_OPS = {0x6C, 0x6D, 0x6E, 0x6F, 0xA4, 0xA5, 0xA6, 0xA7, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF}


def is_rep_string(code):
    rep = False
    for b in code:
        if b in REP_PREFIXES:
            rep = True
        elif b in (0x66, 0x67, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0xF0) or 0x40 <= b <= 0x4F:
            continue
        else:
            return rep and b in STRING_OPS
    return False


STATE_RE = re.compile(r"\b(RSP|CR3)=([0-9a-fA-F]+)")
FS_RE = re.compile(r"^FS =[0-9a-fA-F]{4} ([0-9a-fA-F]{16})")


def executions(lines):
    """The log's @lines as (blocks, executions): blocks maps a first pc to (last instruction,
    fall-through, rep string); each execution is [pc, rsp, cr3], the last two from a `-d cpu`
    register dump after its Trace line (None without one), then its FS base."""
    blocks = {}  # first pc -> (last insn, fall-through, rep string)
    cur = None   # block being listed: [first, last, bytes of last]
    execs = []   # executed [pc, rsp, cr3]

    def commit():
        nonlocal cur
        if cur:
            first, last, code = cur
            blocks[first] = (last, last + len(code), is_rep_string(code))
            cur = None

    for n, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        m = INSN_RE.match(line)
        if m:
            addr = int(m.group(1), 16)
            code = bytes.fromhex(m.group(2).replace(" ", ""))
            if cur and not m.group(3) and addr == cur[1] + len(cur[2]):
                cur[2] += code  # the rest of a long encoding
            elif cur:
                cur[1], cur[2] = addr, bytearray(code)
            else:
                cur = [addr, addr, bytearray(code)]
            continue
        commit()
        m = TRACE_RE.match(line)
        if m:
            pc = int(m.group(2), 16)
            if pc not in blocks:
                raise BadInput(f"log line {n}: executed 0x{pc:x} was never listed (in_asm)")
            execs.append([pc, None, None, None])
            continue
        m = STOPPED_RE.match(line)
        if m and execs and execs[-1][0] == int(m.group(1), 16):
            execs.pop()
            continue
        if execs and ("RSP=" in line or "CR3=" in line):
            for reg, val in STATE_RE.findall(line):
                execs[-1][1 if reg == "RSP" else 2] = int(val, 16)
        m = FS_RE.match(line)
        if m and execs:
            execs[-1][3] = int(m.group(1), 16)
    commit()
    return blocks, execs


def branches_of(blocks, pcs):
    """Taken branches [(from, to)] of the executed @pcs, in order."""
    branches = []
    prev = None
    for pc in pcs:
        if pc == prev:
            continue  # re-executed after a fault, or the next step of a REP
        if prev is not None:
            last, end, rep = blocks[prev]
            if pc != end and not (rep and pc == last):
                branches.append((last, pc))
        prev = pc
    return branches


def reference(lines):
    """Taken branches [(from, to)] of the log's @lines; also the count of executions."""
    blocks, execs = executions(lines)
    return branches_of(blocks, [e[0] for e in execs]), len(execs)


def read_pairs(path):
    pairs = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                parts = line.split()
                if len(parts) != 2:
                    raise BadInput(f"{path}:{n}: not a 0xFROM 0xTO line")
                pairs.append((int(parts[0], 16), int(parts[1], 16)))
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: {e}")
    return pairs


# ---- the comparison --------------------------------------------------------------------------

SPAWNED_RE = re.compile(r"vbts-oracle-init: spawned (\S+) pid (\d+) status (-?\d+)")


def spawned(console_lines):
    """What /init printed: {comm: (pid, status)}."""
    out = {}
    for line in console_lines:
        m = SPAWNED_RE.search(line)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def hexaddr(v):
    try:
        return int(v, 16) if isinstance(v, str) else int(v)
    except (TypeError, ValueError):
        return None


def pair_text(p):
    return f"0x{p[0]:x} -> 0x{p[1]:x}" if p else "(end)"


def first_difference(want, got):
    """Lines describing the first position where @got differs from @want, or []."""
    n = min(len(want), len(got))
    i = next((k for k in range(n) if want[k] != got[k]), n)
    if i == n and len(want) == len(got):
        return []
    out = [f"first difference at branch {i} of {len(want)} expected, {len(got)} recorded:",
           f"  {'#':>6}  {'expected (QEMU)':<34} recorded (vbts)"]
    for k in range(max(0, i - CONTEXT), min(max(len(want), len(got)), i + CONTEXT + 1)):
        w = want[k] if k < len(want) else None
        g = got[k] if k < len(got) else None
        mark = ">" if k == i else (" " if w == g else "!")
        out.append(f"{mark} {k:>6}  {pair_text(w):<34} {pair_text(g)}")
    return out


def compare(ref, records, text, console, name, decoy_name):
    """Failure lines (empty: the trace is exact), and a summary line."""
    fails = []
    seen = spawned(console)
    if name not in seen:
        return [f"/init did not report a process named {name!r} (saw {sorted(seen)})"], ""
    pid, status = seen[name]
    if status != 0:
        fails.append(f"{name} exited with status {status}")
    decoy_pid = seen.get(decoy_name, (None, None))[0] if decoy_name else None
    if decoy_name and decoy_pid is None:
        fails.append(f"/init did not report the decoy {decoy_name!r}")
    if not ref:
        fails.append("the reference holds no branch")

    got = []
    arrivals = 0
    stream_pids = 0
    switches = 0
    foreign = []
    for n, r in records:
        t = r.get("type")
        mine = r.get("pid") == pid and r.get("task") == name
        if t == "branch" and not mine and "pid" not in r and "task" not in r:
            foreign.append(f"record {n} (branch) belongs to no known task")
        elif ("pid" in r or "task" in r) and not mine:
            # A switch to another task may be recorded; nothing else of it, nothing at all
            # of the decoy.
            decoy = r.get("pid") == decoy_pid or r.get("task") == decoy_name
            if decoy or t not in ("task-arrive", "task-depart", "task-pid"):
                who = f"{r.get('task')!r} pid {r.get('pid')}" + (" (the decoy)" if decoy else "")
                foreign.append(f"record {n} ({t}) belongs to {who}, not {name!r} pid {pid}")
            else:
                switches += 1
        if t == "task-arrive" and r.get("pid") == pid and r.get("task") == name:
            arrivals += 1
        elif t == "task-pid" and mine:
            # The pid the trace itself carries, not a label from events.jsonl
            if r.get("guest_pid") == pid:
                stream_pids += 1
            else:
                fails.append(f"record {n}: the trace says pid {r.get('guest_pid')} "
                             f"where /init printed {pid}")
        elif t == "lost":
            fails.append(f"record {n}: {r.get('count')} records lost")
        elif t == "branch":
            frm, to = hexaddr(r.get("from")), hexaddr(r.get("to"))
            if frm is None or to is None:
                fails.append(f"record {n}: a branch without from/to")
                continue
            if r.get("cpl") != 3:
                fails.append(f"record {n}: a branch at CPL {r.get('cpl')} "
                             f"({pair_text((frm, to))}, {r.get('kind')}) despite --cpl user")
            if not in_ranges(frm, text):
                fails.append(f"record {n}: a branch from 0x{frm:x}, outside the program")
            elif in_ranges(to, text):
                got.append((frm, to))
            elif not (to >= KERNEL_MIN and r.get("kind") in TO_KERNEL_KINDS):
                fails.append(f"record {n}: a {r.get('kind')} from the program to 0x{to:x}, "
                             "outside it")
    if foreign:
        fails.insert(0, foreign[0])
        fails += foreign[1:5]
    if len(foreign) > 5:
        fails.append(f"... {len(foreign) - 5} more records of other tasks")
    if not arrivals:
        fails.append(f"decode shows no task-arrive of {name!r} pid {pid}")
    if not stream_pids:
        fails.append(f"the trace carries no task-pid record of pid {pid}")
    fails += first_difference(ref, got)
    summary = (f"{len(got)} branches of {name} pid {pid} inside the program equal QEMU's "
               f"{len(ref)}; {len(records)} records, none of the decoy, none outside the program, "
               f"{switches} switches to other tasks")
    return fails, summary


def read_jsonl(path):
    records = []
    try:
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                if not isinstance(r, dict):
                    raise BadInput(f"{path}:{n}: not a JSON object")
                records.append((n, r))
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: {e}")
    return records


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: {e}")


def report(result):
    """Prints a comparison's (failure lines, summary); its exit status."""
    fails, summary = result
    for line in fails:
        print("FAIL: " + line if not line.startswith((" ", ">", "!")) else line)
    if fails:
        return 1
    print("ok: " + summary)
    return 0


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.readlines()
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")


# ---- the threads-oracle test: one process's every thread, its children and its exec ----------

ROLES = ("main", "thread", "vfork", "fork", "exec")
ROLE_RE = re.compile(r"mt-oracle: (main|thread|vfork|fork|exec) ([0-9a-f]{8})\b")
MAIN_STACK_MIN = 0x7F0000000000  # the process stack lies at the top of user space
CR3_BITS = 0x000FFFFFFFFFF000


def symbols(path):
    """{name: (value, size)} of the ELF file's .symtab."""
    try:
        with open(path, "rb") as f:
            data = f.read(16 << 20)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:
        raise BadInput(f"{path}: not an ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data):
        raise BadInput(f"{path}: section headers out of bounds")
    sects = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
             for i in range(shnum)]
    out = {}
    for _, sh_type, _, _, off, size, link, _, _, entsize in sects:
        if sh_type != 2 or entsize < 24 or link >= shnum:
            continue
        stroff, strsize = sects[link][4], sects[link][5]
        for k in range(0, size - entsize + 1, entsize):
            name, _, _, _, value, sz = struct.unpack_from("<IBBHQQ", data, off + k)
            if name < strsize:
                end = data.index(b"\0", stroff + name)
                out[data[stroff + name:end].decode("ascii", "replace")] = (value, sz)
    return out


def thread_reference(lines, prog, exe):
    """Per role, QEMU's first instruction and taken branches: each execution's role from its
    address (the program or the exec'd one), its stack (stack_t1, stack_vf or the process
    stack) and its CR3 (the first instruction's is the main process's, another is the fork
    child's). Returns {"roles": {role: {"first", "branches"}}, "fallthrough": {pc: next}}."""
    blocks, execs = executions(lines)
    ptext, etext = text_ranges(prog), text_ranges(exe)
    syms = symbols(prog)
    stacks = {}
    for role, sym in (("thread", "stack_t1"), ("vfork", "stack_vf")):
        if sym not in syms:
            raise BadInput(f"{prog}: no symbol {sym}")
        stacks[role] = syms[sym]
    main_cr3 = None
    pcs = {role: [] for role in ROLES}
    for pc, rsp, cr3, _ in execs:
        if rsp is None or cr3 is None:
            raise BadInput(f"executed 0x{pc:x} has no register dump (QEMU's -d cpu)")
        cr3 &= CR3_BITS
        if not in_ranges(pc, etext) and not in_ranges(pc, ptext):
            continue  # another program's, logged in the same run
        if in_ranges(pc, etext):
            role = "exec"
        elif in_ranges(pc, ptext):
            main_cr3 = cr3 if main_cr3 is None else main_cr3
            role = next((r for r, (lo, size) in stacks.items() if lo <= rsp - 1 < lo + size),
                        None)
            if role is None and rsp >= MAIN_STACK_MIN:
                role = "main" if cr3 == main_cr3 else "fork"
            if role is None:
                raise BadInput(f"0x{pc:x} ran on a stack of no role (RSP 0x{rsp:x})")
        else:
            raise BadInput(f"0x{pc:x} is in neither program")
        pcs[role].append(pc)
    roles = {r: {"first": p[0] if p else None, "branches": branches_of(blocks, p)}
             for r, p in pcs.items()}
    fall = {last: end for last, end, _ in blocks.values()}
    return {"roles": roles, "fallthrough": fall}


def role_pids(console, role_re, roles):
    """{role: tid} of what the program said on @console, and a failure line when a role of
    @roles is missing (else None)."""
    pids = {}
    for line in console:
        m = role_re.search(line)
        if m:
            pids.setdefault(m.group(1), int(m.group(2), 16))
    missing = [r for r in roles if r not in pids]
    return pids, (f"the program did not say who {', '.join(missing)} is" if missing else None)


def broken(n, r):
    """The failure line of a lost or gap record @r (number @n), else None."""
    t = r.get("type")
    if t == "lost":
        return f"record {n}: {r.get('count')} records lost"
    if t and "gap" in t:
        return f"record {n}: a {t} record"
    return None


def branch_ends(n, r, role, fails):
    """(from, to) of the branch record @r (number @n) of @role, or None; a failure line into
    @fails when it has no addresses or is not at CPL 3."""
    frm, to = hexaddr(r.get("from")), hexaddr(r.get("to"))
    if frm is None or to is None:
        fails.append(f"record {n}: a branch without from/to")
        return None
    if r.get("cpl") != 3:
        fails.append(f"record {n}: a branch at CPL {r.get('cpl')} of {role}")
    return frm, to


def thread_streams(records, text, console, others_ok=False):
    """Per role, what the trace says: its first instruction (an entry record) and its flow,
    an edge per branch inside the programs and per entry after a departure into the kernel
    (its "from" the departing instruction; ("ft", X, to) after an interrupt at X, whose
    instruction before X ran last). Returns (streams, pids, failure lines)."""
    fails = []
    pids, missing = role_pids(console, ROLE_RE, ROLES)
    if missing:
        return {}, pids, [missing]
    if pids["exec"] != pids["vfork"]:
        fails.append(f"exec ran as {pids['exec']}, the vfork child is {pids['vfork']}")
    role_of = {pids[r]: r for r in ("main", "thread", "fork", "vfork")}
    if len(role_of) != 4:
        fails.append(f"roles share a thread: {pids}")
    streams = {r: {"first": None, "edges": [], "dep": None, "entries": []} for r in ROLES}
    for n, r in records:
        t = r.get("type")
        if broken(n, r):
            fails.append(broken(n, r))
            continue
        pid = r.get("pid")
        if pid not in role_of:
            if t in ("branch", "entry") and not others_ok:
                fails.append(f"record {n} ({t}) belongs to pid {pid}, none of the program's")
            continue
        role = role_of[pid]
        st = streams[role]
        started = st["first"] is not None or st["edges"]
        if t == "entry":
            to = hexaddr(r.get("to"))
            reason = r.get("reason")
            if to is None:
                fails.append(f"record {n}: an entry without an address")
                continue
            if not started and not in_ranges(to, text):
                continue  # its pid before its exec, in its parent's program
            if reason == "exec" and role == "vfork":
                role = role_of[pid] = "exec"
                st = streams[role]
            st["entries"].append(reason)
            if st["first"] is None and not st["edges"]:
                st["first"] = to
            elif st["dep"] is None:
                fails.append(f"record {n}: {role} enters 0x{to:x} ({reason}) with no "
                             "departure from the program before it")
            elif st["dep"][0] == "interrupt":
                st["edges"].append(("ft", st["dep"][1], to))
            else:
                st["edges"].append((st["dep"][1], to))
            st["dep"] = None
        elif t == "branch":
            ends = branch_ends(n, r, role, fails)
            if not ends:
                continue
            frm, to = ends
            if not started and not in_ranges(frm, text):
                continue  # its pid before its exec, in its parent's program
            if not in_ranges(frm, text):
                fails.append(f"record {n}: a branch of {role} from 0x{frm:x}, outside it")
            elif in_ranges(to, text):
                st["edges"].append((frm, to))
                st["dep"] = None
            elif to >= KERNEL_MIN and r.get("kind") in TO_KERNEL_KINDS:
                st["dep"] = (r.get("kind"), frm)
            else:
                fails.append(f"record {n}: a {r.get('kind')} of {role} to 0x{to:x}")
    return streams, pids, fails


def thread_compare(ref, records, text, console, others_ok=False):
    """Failure lines, and a summary line: each role's flow in the trace against QEMU's;
    @others_ok: records of other processes are allowed (a trace of every process)."""
    streams, pids, fails = thread_streams(records, text, console, others_ok)
    if not streams:
        return fails, ""
    fall = {int(k): v for k, v in ref["fallthrough"].items()}
    total = 0
    for role in ROLES:
        want = ref["roles"][role]
        st = streams[role]
        if not want["branches"]:
            fails.append(f"QEMU's log has no branch of {role}")
        if st["first"] != want["first"]:
            fails.append(f"{role} (pid {pids[role]}): its first instruction is "
                         f"{hex(st['first']) if st['first'] is not None else 'not recorded'}"
                         f", QEMU's is {hex(want['first']) if want['first'] else None}")
        got = []
        for k, e in enumerate(visible(st["edges"], fall)):
            w = tuple(want["branches"][k]) if k < len(want["branches"]) else None
            if e[0] == "ft":
                # An interrupt at X sent it elsewhere: QEMU's last instruction falls to X.
                got.append(w if w and fall.get(w[0]) == e[1] and w[1] == e[2] else
                           (e[1], e[2]))
            else:
                got.append(e)
        diff = first_difference([tuple(b) for b in want["branches"]], got)
        if diff:
            fails.append(f"{role} (pid {pids[role]}) differs from QEMU's log:")
            fails += diff
        total += len(got)
    entries = {r: streams[r]["entries"] for r in ROLES}
    summary = (f"{total} branches and entries of the 5 roles equal QEMU's, each attributed to "
               f"its thread ({', '.join(f'{r} {pids[r]}' for r in ROLES)}); entries: "
               f"{entries}")
    return fails, summary


# ---- the dynamically linked program (glibc's pthreads): its own code only --------------------

DYN_ROLES = ("main", "worker_a", "worker_b")
DYN_ROLE_RE = re.compile(r"mt-dyn: (main|worker_a|worker_b) ([0-9a-f]{8})\b")
LDSO_RE = re.compile(r"mt-dyn: ldso-entry (0x[0-9a-f]+)")


def dyn_reference(lines, prog):
    """Per role, QEMU's branches of the program's own code, each execution's thread by its
    FS base (glibc's threads each have their own) and CR3: the first one's is the main
    thread's, another's role is the function its first instruction is in. An excursion out of
    the program (libc, the kernel) is not in the log: the next instruction in it follows the
    last one before, a branch unless it is the fall-through (a system call's return)."""
    blocks, execs = executions(lines)
    text = text_ranges(prog)
    syms = symbols(prog)
    funcs = {r: syms[r] for r in DYN_ROLES[1:] if r in syms}
    if len(funcs) != 2:
        raise BadInput(f"{prog}: no symbols worker_a, worker_b")
    role_of = {}
    pcs = {r: [] for r in DYN_ROLES}
    for pc, _, cr3, fs in execs:
        if cr3 is None or fs is None:
            raise BadInput(f"executed 0x{pc:x} has no register dump (QEMU's -d cpu)")
        if not in_ranges(pc, text):
            continue  # another program's, logged in the same run
        key = (cr3 & CR3_BITS, fs)
        if key not in role_of:
            role = "main" if not role_of else next(
                (r for r, (lo, size) in funcs.items() if lo <= pc < lo + max(size, 1)), None)
            if role is None or role in role_of.values():
                raise BadInput(f"thread FS 0x{fs:x} starts at 0x{pc:x}, in no other role's "
                               "function")
            role_of[key] = role
        pcs[role_of[key]].append(pc)
    return {"roles": {r: {"first": p[0] if p else None, "branches": branches_of(blocks, p)}
                      for r, p in pcs.items()},
            "fallthrough": {last: end for last, end, _ in blocks.values()}}


def dyn_streams(records, text, console):
    """Per role, the trace's flow through the program's own code as QEMU's filtered log shows
    it: a branch inside it; a way out into libc (from the branch that left, not into the
    kernel) and back in (to the branch's target) as one edge; a departure into the kernel and
    an entry into the program elsewhere as one edge. Also the main thread's first entry."""
    fails = []
    pids, missing = role_pids(console, DYN_ROLE_RE, DYN_ROLES)
    if missing:
        return {}, pids, [missing]
    role_of = {pid: r for r, pid in pids.items()}
    streams = {r: {"edges": [], "dep": None, "out": None, "entries": []} for r in DYN_ROLES}
    for n, r in records:
        t = r.get("type")
        if broken(n, r):
            fails.append(broken(n, r))
            continue
        if r.get("pid") not in role_of:
            if t in ("branch", "entry") and r.get("tgid") == pids["main"]:
                fails.append(f"record {n} ({t}): a thread of mt-dyn that did not say who it is")
            continue
        role = role_of[r["pid"]]
        st = streams[role]
        if t == "entry":
            to = hexaddr(r.get("to"))
            st["entries"].append((r.get("reason"), to))
            if to is None or not in_ranges(to, text):
                st["dep"] = None
                continue
            src = st["dep"][1] if st["dep"] else st["out"]
            if src is not None:
                st["edges"].append((src, to))
            st["dep"] = st["out"] = None
        elif t == "branch":
            ends = branch_ends(n, r, role, fails)
            if not ends:
                continue
            frm, to = ends
            # User code ran again: the last departure came back where it left.
            st["dep"] = None
            fin, tin = in_ranges(frm, text), in_ranges(to, text)
            if fin and tin:
                st["edges"].append((frm, to))
                st["out"] = None
            elif fin and to >= KERNEL_MIN:
                st["dep"] = (r.get("kind"), frm)
            elif fin:
                st["out"] = frm
            elif tin:
                if st["out"] is not None:
                    st["edges"].append((st["out"], to))
                st["out"] = None
    return streams, pids, fails


def visible(edges, fall):
    """@edges without the branches QEMU's log cannot show: those to the address right after
    them (a taken branch there is a fall-through in the log), by @fall of the reference."""
    return [e for e in edges if e[0] == "ft" or fall.get(e[0]) != e[1]]


def dyn_compare(ref, records, text, console):
    """Failure lines, and a summary line."""
    streams, pids, fails = dyn_streams(records, text, console)
    if not streams:
        return fails, ""
    fall = {int(k): v for k, v in ref["fallthrough"].items()}
    ldso = next((int(m.group(1), 16) for m in map(LDSO_RE.search, console) if m), None)
    entries = streams["main"]["entries"]
    if ldso is None:
        fails.append("the program did not say where its loader begins")
    elif not any(e[1] == ldso and e[0] in ("first", "exec") for e in entries):
        # Its pid may have entries before, in its parent's program (recorded from the boot).
        fails.append(f"main (pid {pids['main']}): no entry at its loader's first instruction "
                     f"0x{ldso:x} (entries {entries[:3]})")
    for role in DYN_ROLES[1:]:
        if not any(e[0] == "first" for e in streams[role]["entries"]):
            fails.append(f"{role} (pid {pids[role]}): no entry record of its first instruction")
    total = 0
    for role in DYN_ROLES:
        want = [tuple(b) for b in ref["roles"][role]["branches"]]
        got = visible(streams[role]["edges"], fall)
        if not want:
            fails.append(f"QEMU's log has no branch of {role}")
        diff = first_difference(want, got)
        if diff:
            fails.append(f"{role} (pid {pids[role]}) differs from QEMU's log:")
            fails += diff
        total += len(got)
    summary = (f"{total} branches of mt-dyn's own code in 3 threads equal QEMU's, each "
               f"attributed to its thread ({', '.join(f'{r} {pids[r]}' for r in DYN_ROLES)}); "
               f"the main thread's first record is the loader's entry 0x{ldso or 0:x}")
    return fails, summary


# ---- self-test on hand-made inputs -----------------------------------------------------------

def self_test(data):
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("ok: " if ok else "FAIL: ") + what)
        if not ok:
            fails += 1

    ref, execs = reference(read_lines(os.path.join(data, "qemu.log")))
    want = read_pairs(os.path.join(data, "qemu.pairs"))
    check(ref == want, f"reference of qemu.log: {len(ref)} branches of {execs} executions "
          f"equal qemu.pairs ({len(want)})")
    if ref != want:
        print("\n".join(first_difference(want, ref)))

    text = [(0x10001000, 0x10001200)]
    console = read_lines(os.path.join(data, "console.txt"))
    good = read_jsonl(os.path.join(data, "trace.jsonl"))
    f, _ = compare(want, good, text, console, "oracle", "oracle-decoy")
    check(not f, "trace.jsonl equals the reference")
    for line in f:
        print("  " + line)

    def edited(fn):
        return [(n, dict(r)) for n, r in fn([(n, dict(r)) for n, r in good])]

    def branches_at(recs):
        return [i for i, (_, r) in enumerate(recs) if r.get("type") == "branch" and
                r.get("cpl") == 3 and str(r.get("to", "")).startswith("0x1000")]

    def drop_branch(recs):
        i = branches_at(recs)[2]
        return recs[:i] + recs[i + 1:]

    def swap_branches(recs):
        a, b = branches_at(recs)[1:3]
        recs[a], recs[b] = recs[b], recs[a]
        return recs

    def extra_branch(recs):
        return recs + [(999, {"type": "branch", "from": "0x10001010", "to": "0x10001020",
                              "cpl": 3, "kind": "call", "task": "oracle", "pid": 42,
                              "tgid": 42})]

    def decoy_record(recs):
        return recs + [(999, {"type": "branch", "from": "0x20001010", "to": "0x20001020",
                              "cpl": 3, "kind": "call", "task": "oracle-decoy", "pid": 43,
                              "tgid": 43})]

    def kernel_record(recs):
        return recs + [(999, {"type": "branch", "from": "0xffffffff81000000",
                              "to": "0x10001020", "cpl": 0, "kind": "sysret",
                              "task": "oracle", "pid": 42, "tgid": 42})]

    def outside_record(recs):
        return recs + [(999, {"type": "branch", "from": "0x10001010", "to": "0x7fff0000",
                              "cpl": 3, "kind": "jmp", "task": "oracle", "pid": 42,
                              "tgid": 42})]

    def init_switch(recs):
        return recs + [(999, {"type": "task-arrive", "cr3": "0x1000", "time": 5,
                              "task": "init", "pid": 1, "tgid": 1})]

    def decoy_switch(recs):
        return recs + [(999, {"type": "task-arrive", "cr3": "0x3000", "time": 5,
                              "task": "oracle-decoy", "pid": 43, "tgid": 43})]

    def other_pid(recs):
        for _, r in recs:
            if "pid" in r:
                r["pid"] = 44
                r["tgid"] = 44
        return recs

    def untasked(recs):
        return recs + [(999, {"type": "branch", "from": "0x10001010", "to": "0x10001020",
                              "cpl": 3, "kind": "call"})]

    def no_stream_pid(recs):
        return [(n, r) for n, r in recs if r.get("type") != "task-pid"]

    def wrong_stream_pid(recs):
        for _, r in recs:
            if r.get("type") == "task-pid":
                r["guest_pid"] = 44
        return recs

    def lost(recs):
        return recs + [(999, {"type": "lost", "vcpu": 0, "seq": 99, "count": 3})]

    def perturb_reference(_):
        return None

    f, _ = compare(want, edited(init_switch), text, console, "oracle", "oracle-decoy")
    check(not f, "a switch to another task (init) is allowed")
    for line in f:
        print("  " + line)
    cases = [("a branch missing", drop_branch, want, console),
             ("a switch to the decoy", decoy_switch, want, console),
             ("two branches swapped", swap_branches, want, console),
             ("a branch too many", extra_branch, want, console),
             ("a record of the decoy", decoy_record, want, console),
             ("a kernel-mode branch", kernel_record, want, console),
             ("a branch to outside the program", outside_record, want, console),
             ("another pid than /init printed", other_pid, want, console),
             ("lost records", lost, want, console),
             ("no pid in the trace itself", no_stream_pid, want, console),
             ("another pid in the trace itself", wrong_stream_pid, want, console),
             ("a branch of no known task", untasked, want, console),
             ("a perturbed reference", lambda r: r, want[:3] + [(0x10001000, 0x10001001)] +
              want[4:], console),
             ("/init's report missing", lambda r: r, want, [])]
    for what, fn, w, con in cases:
        f, _ = compare(w, edited(fn), text, con, "oracle", "oracle-decoy")
        check(bool(f), f"{what} is caught: {f[0] if f else 'NOT CAUGHT'}")
    fails += thread_self_test(check)
    return 1 if fails else 0


def thread_self_test(check):
    """threads-compare on a hand-made reference and trace; each perturbation must fail."""
    text = [(0x10001000, 0x10001100), (0x30001000, 0x30001100)]
    console = [f"mt-oracle: {r} {p:08x}\n" for r, p in
               (("main", 50), ("thread", 51), ("vfork", 52), ("fork", 53), ("exec", 52))]
    K = 0xFFFFFFFF81000000
    ref = {"roles": {
        "main": {"first": 0x10001000, "branches": [[0x10001004, 0x10001010],
                                                   [0x10001012, 0x10001080],
                                                   [0x10001090, 0x10001014]]},
        "thread": {"first": 0x10001020, "branches": [[0x10001024, 0x10001030]]},
        "vfork": {"first": 0x10001020, "branches": [[0x10001026, 0x10001040]]},
        "fork": {"first": 0x10001014, "branches": [[0x10001016, 0x10001050]]},
        "exec": {"first": 0x30001000, "branches": [[0x30001004, 0x30001010]]},
    }, "fallthrough": {str(0x10001010): 0x10001012}}

    def rec(t, pid, **kw):
        r = {"type": t, "pid": pid, "tgid": 50 if pid in (50, 51) else pid}
        r.update({k: (hex(v) if isinstance(v, int) and k in ("from", "to") else v)
                  for k, v in kw.items()})
        return r

    def br(pid, f, t, kind="jmp", cpl=3):
        return rec("branch", pid, **{"from": f, "to": t, "kind": kind, "cpl": cpl})

    good = [rec("thread", 50), rec("entry", 50, to=0x10001000, reason="first"),
            br(50, 0x10001004, 0x10001010), br(50, 0x10001012, K, "syscall"),
            rec("entry", 50, to=0x10001080, reason="signal"),
            br(50, 0x10001090, K, "syscall"),
            rec("entry", 50, to=0x10001014, reason="sigreturn"),
            rec("thread", 51), rec("entry", 51, to=0x10001020, reason="first"),
            br(51, 0x10001024, 0x10001030),
            rec("thread", 52), rec("entry", 52, to=0x10001020, reason="first"),
            br(52, 0x10001026, 0x10001040), br(52, 0x10001044, K, "syscall"),
            rec("entry", 52, to=0x30001000, reason="exec"), br(52, 0x30001004, 0x30001010),
            rec("thread", 53), rec("entry", 53, to=0x10001014, reason="first"),
            br(53, 0x10001016, 0x10001050)]
    numbered = list(enumerate(good, 1))
    f, _ = thread_compare(ref, numbered, text, console)
    check(not f, "threads: the hand-made trace equals its reference")
    for line in f:
        print("  " + line)

    def without(i):
        return [(n, r) for n, r in numbered if n != i]

    def changed(i, **kw):
        return [(n, dict(r, **kw) if n == i else r) for n, r in numbered]

    cases = [("a signal entry missing", without(5)),
             ("a thread's first instruction missing", without(9)),
             ("a branch given to another thread", changed(10, pid=50)),
             ("the exec's entry missing", without(15)),
             ("a gap", numbered + [(99, rec("gap-begin", 50))]),
             ("a branch at CPL 0", changed(3, cpl=0)),
             ("a record of another process", numbered + [(99, br(60, 0x10001004,
                                                                0x10001010))]),
             ("the sigreturn's target moved", changed(7, to="0x10001018")),
             ("a role the program did not name", None)]
    for what, recs in cases:
        con = console[:-1] if recs is None else console
        f, _ = thread_compare(ref, recs if recs is not None else numbered, text, con)
        check(bool(f), f"threads: {what} is caught: {f[0] if f else 'NOT CAUGHT'}")

    # mt-dyn: a way out into libc and back is one edge, a jump to the next instruction is
    # invisible to QEMU, the main thread's first entry is the loader's.
    dtext = [(0x50001000, 0x50001100)]
    dcon = ["mt-dyn: ldso-entry 0x7f0000001000\n", "mt-dyn: main 00000046\n",
            "mt-dyn: worker_a 00000047\n", "mt-dyn: worker_b 00000048\n"]
    dref = {"roles": {"main": {"first": 0x50001000, "branches": [[0x50001004, 0x50001020],
                                                                 [0x50001026, 0x5000100a]]},
                      "worker_a": {"first": 0x50001040, "branches": [[0x50001044, 0x50001050]]},
                      "worker_b": {"first": 0x50001060, "branches": [[0x50001064, 0x50001070]]}},
            "fallthrough": {str(0x50001080): 0x50001086}}
    L = 0x7F0000002000
    dgood = [rec("entry", 70, to=0x7F0000001000, reason="exec"), br(70, L, 0x50001000),
             br(70, 0x50001004, 0x50001020), br(70, 0x50001080, 0x50001086),
             br(70, 0x50001026, L), br(70, L, L + 8), br(70, L + 8, K, "syscall"),
             br(70, L + 12, 0x5000100a, "ret"),
             rec("entry", 71, to=L, reason="first"), br(71, 0x50001044, 0x50001050),
             rec("entry", 72, to=L, reason="first"), br(72, 0x50001064, 0x50001070)]
    for r in dgood:
        r["tgid"] = 70
    dnum = list(enumerate(dgood, 1))
    f, _ = dyn_compare(dref, dnum, dtext, dcon)
    check(not f, "dyn: the hand-made trace equals its reference")
    for line in f:
        print("  " + line)
    dcases = [("a way back from libc elsewhere", [(n, dict(r, to="0x5000100c") if n == 8
                                                    else r) for n, r in dnum]),
              ("the loader's entry missing", [(n, r) for n, r in dnum if n != 1]),
              ("a worker's first entry missing", [(n, r) for n, r in dnum if n != 9]),
              ("a branch of a worker given to main", [(n, dict(r, pid=70) if n == 10 else r)
                                                      for n, r in dnum])]
    for what, recs in dcases:
        f, _ = dyn_compare(dref, recs, dtext, dcon)
        check(bool(f), f"dyn: {what} is caught: {f[0] if f else 'NOT CAUGHT'}")
    return 0


def main():
    ap = argparse.ArgumentParser(prog="linux-oracle.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("text")
    p.add_argument("prog")
    # Each subcommand's required options; "log" is a positional argument.
    for cmd, opts in (("reference", ("prog", "log")),
                      ("compare", ("prog", "reference", "trace", "console")),
                      ("threads-reference", ("prog", "exec", "log")),
                      ("threads-compare", ("prog", "exec", "reference", "trace", "console")),
                      ("dyn-reference", ("prog", "log")),
                      ("dyn-compare", ("prog", "reference", "trace", "console"))):
        p = sub.add_parser(cmd)
        for o in opts:
            if o == "log":
                p.add_argument("log")
            else:
                p.add_argument("--" + o, dest="exe" if o == "exec" else o, required=True)
        if cmd == "threads-compare":
            p.add_argument("--others-ok", action="store_true")
        if cmd == "compare":
            p.add_argument("--name", default="oracle")
            p.add_argument("--decoy-name", default="oracle-decoy")
    p = sub.add_parser("self-test")
    p.add_argument("--data", required=True)
    a = ap.parse_args()

    try:
        if a.cmd == "text":
            lo, hi = text_ranges(a.prog)[0]
            print(f"0x{lo:x} 0x{hi:x}")
            return 0
        if a.cmd == "reference":
            text = text_ranges(a.prog)
            ref, execs = reference(read_lines(a.log))
            outside = [p for p in ref if not (in_ranges(p[0], text) and in_ranges(p[1], text))]
            if outside:
                raise BadInput(f"{a.log}: a branch outside the program: {pair_text(outside[0])}")
            for f, t in ref:
                print(f"0x{f:x} 0x{t:x}")
            print(f"reference: {len(ref)} taken branches in {execs} executed instructions",
                  file=sys.stderr)
            return 0
        if a.cmd == "compare":
            return report(compare(read_pairs(a.reference), read_jsonl(a.trace),
                                  text_ranges(a.prog), read_lines(a.console), a.name,
                                  a.decoy_name))
        if a.cmd == "threads-reference":
            ref = thread_reference(read_lines(a.log), a.prog, a.exe)
            json.dump(ref, sys.stdout)
            print(", ".join(f"{r} {len(v['branches'])}" for r, v in ref["roles"].items()) +
                  " taken branches", file=sys.stderr)
            return 0
        if a.cmd == "threads-compare":
            return report(thread_compare(read_json(a.reference), read_jsonl(a.trace),
                                         text_ranges(a.prog) + text_ranges(a.exe),
                                         read_lines(a.console), a.others_ok))
        if a.cmd == "dyn-reference":
            ref = dyn_reference(read_lines(a.log), a.prog)
            json.dump(ref, sys.stdout)
            print(", ".join(f"{r} {len(v['branches'])}" for r, v in ref["roles"].items()) +
                  " taken branches", file=sys.stderr)
            return 0
        if a.cmd == "dyn-compare":
            return report(dyn_compare(read_json(a.reference), read_jsonl(a.trace),
                                      text_ranges(a.prog), read_lines(a.console)))
        return self_test(a.data)
    except BadInput as e:
        print(f"linux-oracle.py: {e}", file=sys.stderr)
        return 2


sys.exit(main())
