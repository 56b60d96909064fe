# SPDX-License-Identifier: GPL-2.0
# needs.sh - sourced by the kvm suite's scripts: does this machine's KVM have what a test needs?
#
#   . "$(dirname "$0")/needs.sh"
#   needs__check VBTS "CAP[,CAP...]"
#
# CAP is a capability line of `vbts probe --verbose` ("cpl3 single-step"). A missing one skips
# the test (the caller's skip(), exit 77) with the probe's reason. VBTS_PROBE_CACHE names a
# file that keeps the probe's answer for the tests that follow on the same machine and boot
# (set it to a path that lives only as long as the machine's current boot, e.g. under /run).
#
# VBTS_HOST_PROBE names the host's probe answer when this runs inside the QEMU harness
# (tests/harness/kvm-suite writes it): a test whose every capability the host's KVM has ran on
# the host already, in the same `meson test`, and is skipped here.

# needs__probe VBTS - print this machine's probe answer (cached); fails when the probe fails.
needs__probe() {
	if [ -n "${VBTS_PROBE_CACHE:-}" ] && [ -s "$VBTS_PROBE_CACHE" ]; then
		cat "$VBTS_PROBE_CACHE"
		return 0
	fi
	_needs_out=$("$1" probe --verbose 2>&1) || { echo "$_needs_out"; return 1; }
	if [ -n "${VBTS_PROBE_CACHE:-}" ]; then
		echo "$_needs_out" >"$VBTS_PROBE_CACHE.$$" &&
			mv "$VBTS_PROBE_CACHE.$$" "$VBTS_PROBE_CACHE"
	fi
	echo "$_needs_out"
}

# needs__missing PROBE CAPS - print the first of CAPS that PROBE does not report as present
# (with the probe's line), nothing when all are there.
needs__missing() {
	_needs_ifs=$IFS
	IFS=,
	for _needs_cap in $2; do
		_needs_line=$(echo "$1" | grep "^$_needs_cap:")
		case $_needs_line in
		"$_needs_cap: yes"*) ;;
		*)
			IFS=$_needs_ifs
			echo "$_needs_cap (${_needs_line:-not reported by vbts probe})"
			return 0
			;;
		esac
	done
	IFS=$_needs_ifs
}

# needs__check VBTS CAPS - return when this KVM has CAPS and the test must run here; skip
# otherwise.
needs__check() {
	if [ -n "${VBTS_HOST_PROBE:-}" ] && [ -s "$VBTS_HOST_PROBE" ] &&
	   [ -z "$(needs__missing "$(cat "$VBTS_HOST_PROBE")" "$2")" ]; then
		skip "the host ran this test: its own KVM has everything the test needs"
	fi
	_needs_probe=$(needs__probe "$1") ||
		skip "vbts probe failed: $(echo "$_needs_probe" | tail -n 1)"
	_needs_lack=$(needs__missing "$_needs_probe" "$2")
	[ -z "$_needs_lack" ] || skip "this KVM lacks $_needs_lack"
}
