# SPDX-License-Identifier: GPL-2.0
# backend.sh - sourced by the demos: which tracer backend recorded a trace, said in words.

# backend_how TRACE: the backend named by TRACE/vm.json, as a phrase ("the kvm backend (...)").
backend_how() {
	local backend

	backend=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["backend"])' \
		  "$1/vm.json" 2>/dev/null || echo unknown)
	case $backend in
	kvm) echo "the kvm backend (kvm-patches/'s in-kernel tracer)" ;;
	step) echo "the step backend (single-stepping from the VMM on stock KVM)" ;;
	*) echo "the $backend backend" ;;
	esac
}
