#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# demo-linux.sh - `./vbts demo linux`: boot Debian's kernel (the harness's pinned release) in
# the vbts VMM with an initramfs whose /init (tests/linux/crashlib/init.sh) runs crashlib, a
# PIE program whose shared library libcrashlib.so dies of SIGSEGV, and the guest agent, which
# reports crashlib's mappings with their build IDs and uploads both files; trace only
# crashlib's user mode with the kvm backend, and show the guest console, crashlib's last
# branches with functions and source lines from the agent's build IDs (no --symbols), a
# summary of the trace and the crash report written when crashlib died (where it crashed, its
# last branches newest first).
# usage: tests/demo-linux.sh BUILD_DIR
set -euo pipefail

build=$(cd "$1" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/backend.sh
. "$top/tests/lib/backend.sh"
vbts=$build/cli/vbts
prog=$build/tests/linux/crashlib/crashlib
lib=$build/tests/linux/crashlib/libcrashlib.so
agent=$build/guest-agent/vbts-agent
work=$build/demo-linux
trace=$work/trace
append="console=ttyS0 quiet panic=-1"

say() { printf 'vbts demo: %s\n' "$*"; }
fail() { say "$1" >&2; exit "${2:-1}"; }

[ -x "$vbts" ] || fail "$vbts is not built" 2
for f in "$prog" "$lib" "$agent"; do
	[ -f "$f" ] || fail "$f is not built" 2
done
# Read whole (grep -q would end the pipe early: SIGPIPE, a failure under pipefail).
"$vbts" help run 2>&1 | grep -- '--task' > /dev/null ||
	fail "this vbts run has no --task: tracing one Linux process needs it" 2

# The kernel: the harness's pinned Debian release, fetched and unpacked by prepare.
rc=0
prepared=$("$top/tests/harness/prepare" --build "$build" --print) || rc=$?
[ $rc = 77 ] && fail "Debian's kernel package cannot be had here (tests/harness/prepare)" 2
[ $rc = 0 ] || fail "tests/harness/prepare failed (status $rc)"
read -r rel _ _ <<< "$prepared"
bzimage=$build/harness/$rel/root/boot/vmlinuz-$rel
[ -f "$bzimage" ] || fail "$bzimage is missing"

busybox=$(command -v busybox || echo /bin/busybox)
ldso=$(readlink -f /lib64/ld-linux-x86-64.so.2)
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
rm -rf "$work"
mkdir -p "$work"
# The guest's /: busybox, the agent, crashlib with its library, and the host's loader and libc.
"$top/tests/linux/mkinitramfs" --program busybox="$busybox" --program vbts-agent="$agent" \
	--program crashlib="$prog" --program libcrashlib.so="$lib" \
	--program ld-linux-x86-64.so.2="$ldso" --program libc.so.6="$libc" \
	"$work/initramfs.cpio" "$top/tests/linux/crashlib/init.sh" ||
	fail "cannot build the initramfs (Debian's busybox-static?)" 2

where=()
if ! "$vbts" probe 2>/dev/null | grep -x 'kvm bts backend: yes' > /dev/null; then
	say "this host's KVM has no in-kernel tracer; running in the QEMU harness (nested SVM, kvm-patches/'s modules)"
	where=(--harness)
fi

say "vbts run --backend kvm --kernel vmlinuz-$rel --initrd initramfs.cpio --task crashlib --cpl user --trace ${trace#"$top"/}"
status=0
"$vbts" run "${where[@]}" --backend kvm --kernel "$bzimage" --initrd "$work/initramfs.cpio" \
	--append "$append" --memory 256 --timeout 900 --trace "$trace" --console "$work/console" \
	--task crashlib --cpl user || status=$?
if [ "$status" != 0 ]; then
	say "the guest did not power off cleanly (exit status $status); the end of its console:" >&2
	tail -n 40 "$work/console" | sed 's/^/  | /' >&2 || true
	exit 1
fi
how=$(backend_how "$trace")
say "branches recorded by $how${where:+, inside the QEMU harness}"
say "guest console (the core dump's base64 left out):"
tr -d '\r' < "$work/console" | sed '/^crash-test: core begin$/,/^crash-test: core end$/{/^crash-test: core/!d}' |
	sed 's/^/  | /'
echo
# Debian's kernel package has no System.map (its file is a placeholder): kernel addresses stay
# unsymbolized, said once here instead of by each decode.
decode() {
	local rc=0
	"$vbts" decode "$trace" "$@" 2> "$work/decode.err" || rc=$?
	grep -v 'names no System.map or vmlinux of the guest kernel' "$work/decode.err" >&2 || true
	return $rc
}
say "the last 16 user-mode branches of crashlib, named from the build IDs the agent reported (no --symbols; kernel addresses unsymbolized: Debian ships no System.map):"
decode --task crashlib --cpl user --last 16 --lines
echo
decode --summary --last 0 | sed -n '/^summary/p'
# crashlib's end: the crash report the VMM wrote, with its symbols, when it saw crashlib die.
echo
if [ -f "$trace/crash.json" ]; then
	say "the crash report (vbts decode ${trace#"$top"/} --crash):"
	decode --crash | sed 's/^/  /'
	where_line=$(decode --crash | grep -m1 '^crashed in ' || true)
	[ -n "$where_line" ] && say "crashlib ${where_line%%: *}"
else
	say "no crash report in ${trace#"$top"/} (crash.json)" >&2
fi
echo
say "trace directory ${trace#"$top"/}; try: ./vbts decode ${trace#"$top"/} --task crashlib --lines --format jsonl"
