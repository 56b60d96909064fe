#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# demo-linux.sh - `./vbts demo linux`: boot Debian's kernel (the harness's pinned release) in
# the vbts VMM with a busybox initramfs whose /init runs crashme (tests/linux/demo), trace only
# crashme's user mode with the kvm backend, and show the guest console, crashme's last
# branches with function names, a summary of the trace and the crash report written when
# crashme died of SIGSEGV (where it crashed, its last branches newest first).
# usage: tests/demo-linux.sh BUILD_DIR
set -euo pipefail

build=$(cd "$1" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vbts=$build/cli/vbts
crashme=$build/tests/linux/demo/crashme
work=$build/demo-linux
trace=$work/trace
append="console=ttyS0 quiet panic=-1"

say() { printf 'vbts demo: %s\n' "$*"; }
fail() { say "$1" >&2; exit "${2:-1}"; }

[ -x "$vbts" ] || fail "$vbts is not built" 2
[ -x "$crashme" ] || fail "$crashme is not built" 2
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
rm -rf "$work"
mkdir -p "$work"
"$top/tests/linux/demo/mkinitramfs" "$work/initramfs.cpio" "$top/tests/linux/demo/init.sh" \
	"$busybox" "$crashme" || fail "cannot build the initramfs (Debian's busybox-static?)" 2

where=()
if ! "$vbts" probe 2>/dev/null | grep -x 'kvm bts backend: yes' > /dev/null; then
	say "this host's KVM has no in-kernel tracer; running in the QEMU harness (nested SVM, kvm-patches/'s modules)"
	where=(--harness)
fi

say "vbts run --backend kvm --kernel vmlinuz-$rel --initrd initramfs.cpio --task crashme --cpl user --trace ${trace#"$top"/}"
status=0
"$vbts" run "${where[@]}" --backend kvm --kernel "$bzimage" --initrd "$work/initramfs.cpio" \
	--append "$append" --timeout 600 --trace "$trace" --console "$work/console" \
	--task crashme --cpl user || status=$?
if [ "$status" != 0 ]; then
	say "the guest did not power off cleanly (exit status $status); the end of its console:" >&2
	tail -n 40 "$work/console" | sed 's/^/  | /' >&2 || true
	exit 1
fi
backend=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["backend"])' \
	  "$trace/vm.json" 2>/dev/null || echo unknown)
case $backend in
kvm) how="the kvm backend (kvm-patches/'s in-kernel tracer)" ;;
step) how="the step backend (single-stepping from the VMM on stock KVM)" ;;
*) how="the $backend backend" ;;
esac
say "branches recorded by $how${where:+, inside the QEMU harness}"
say "guest console:"
sed 's/^/  | /' "$work/console"
echo
# Debian's kernel package has no System.map (its file is a placeholder): kernel addresses stay
# unsymbolized, said once here instead of by each decode.
decode() {
	local rc=0
	"$vbts" decode "$trace" "$@" 2> "$work/decode.err" || rc=$?
	grep -v 'names no System.map or vmlinux of the guest kernel' "$work/decode.err" >&2 || true
	return $rc
}
say "the last 16 user-mode branches of crashme (kernel addresses unsymbolized: Debian ships no System.map):"
decode --task crashme --cpl user --last 16 --symbols "$crashme"
echo
decode --summary --last 0 | sed -n '/^summary/p'
# crashme's end: the crash report the VMM wrote when it saw crashme killed by SIGSEGV.
echo
if [ -f "$trace/crash.json" ]; then
	say "the crash report (vbts decode ${trace#"$top"/} --crash --symbols crashme):"
	decode --crash --symbols "$crashme" | sed 's/^/  /'
else
	say "no crash report in ${trace#"$top"/} (crash.json)" >&2
fi
echo
say "trace directory ${trace#"$top"/}; try: ./vbts decode ${trace#"$top"/} --task crashme --symbols ${crashme#"$top"/} --format jsonl"
