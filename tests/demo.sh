#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# demo.sh - `./vbts demo`: trace the bundled minios guest and show the crashed task's last
# branches with task name and symbols, then a summary of the trace.
# usage: tests/demo.sh BUILD_DIR
set -euo pipefail

build=$(cd "$1" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/backend.sh
. "$top/tests/lib/backend.sh"
vbts=$build/cli/vbts
image=$build/tests/guests/minios.elf
trace=$build/demo-trace

[ -x "$vbts" ] || { echo "vbts demo: $vbts is not built" >&2; exit 2; }
[ -f "$image" ] || { echo "vbts demo: $image is not built" >&2; exit 2; }

where=()
if ! "$vbts" probe 2>/dev/null | grep -qx 'cpl3 single-step: yes'; then
	echo "vbts demo: this host's KVM cannot single-step guest user mode; running in the QEMU harness (nested SVM, Debian's KVM)"
	where=(--harness)
fi

rm -rf "$trace"
echo "vbts demo: vbts run --trace ${trace#"$top"/} minios.elf"
status=0
"$vbts" run "${where[@]}" --trace "$trace" --console "$trace.console" "$image" || status=$?
# minios ends with debug-exit value 0, i.e. exit status 1.
if [ "$status" != 1 ]; then
	echo "vbts demo: minios did not finish cleanly (exit status $status); its console:" >&2
	cat "$trace.console" >&2 || true
	exit 1
fi
how=$(backend_how "$trace")
echo "vbts demo: branches recorded by $how${where:+, inside the QEMU harness}"
echo "vbts demo: guest console:"
sed 's/^/  | /' "$trace.console"
echo
echo "vbts demo: the last 16 user-mode branches of the task that crashed:"
"$vbts" decode "$trace" --crashed --cpl user --last 16
echo
"$vbts" decode "$trace" --summary --last 0 | sed -n '/^summary/,$p'
echo
echo "vbts demo: trace directory ${trace#"$top"/}; try: ./vbts decode ${trace#"$top"/} --format jsonl"
