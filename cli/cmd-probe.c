// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-probe.c - `vbts probe`: what this host's KVM can do, one line per capability, each
 * established by running a probe guest.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "harness.h"
#include "log.h"
#include "probe.h"

static const char usage[] =
	"usage: vbts probe [--json] [--verbose] [--harness]\n"
	"\n"
	"Run tiny probe guests to find out what this host's KVM can do, and print one line per\n"
	"capability: `NAME: yes` or `NAME: no`.\n"
	"\n"
	"  cpl0 single-step     KVM_SET_GUEST_DEBUG single-steps ring-0 code\n"
	"  cpl3 single-step     ... and ring-3 code\n"
	"  cpl3 hw breakpoint   a guest-debug hardware breakpoint fires at a ring-3 address\n"
	"  user msr exits       an MSR filter on IA32_DEBUGCTL exits to the VMM on WRMSR\n"
	"  sync regs            kvm_run carries the guest's registers after each exit\n"
	"  kvm bts backend      the patched KVM of kvm-patches/ records the ring-0 probe guest\n"
	"\n"
	"A last line lists the patched KVM's modes (KVM_CAP_X86_BTS): ring, step, guest (BTS\n"
	"that the guest programs itself), hw (the CPU's BTS for the guest), or none.\n"
	"\n"
	"  --json      one JSON object instead of the lines\n"
	"  --verbose   say what each probe guest did\n"
	"  --harness   probe the KVM inside the QEMU harness (tests/harness/run) instead, with\n"
	"              kvm-patches/'s modules (built on first use, cached in BUILD/kvm-patches)\n"
	"\n"
	"Exit status: 0, or 2 when /dev/kvm is missing or unusable.\n";

static int probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_report rep;
	bool json = false, verbose = false;
	char modes[64];
	int opt, ret;

	/* Inside the harness, probe the series' modules: what `run --backend kvm` would get. */
	if (harness__strip(&argc, argv))
		return harness__run(argv, HARNESS_KVM_SERIES, 0);
	optind = 1;
	opterr = 0; /* one line of our own instead of getopt's */
	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			command__option_error("probe", opt, optopt, argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		pr_err("unexpected argument '%s' (probe takes options only); see 'vbts help probe'",
		       argv[optind]);
		return 2;
	}
	ret = probe__report(&rep);
	if (ret < 0) {
		if (ret != -ENODEV)
			pr_err("probe: %s", strerror(-ret));
		return 2;
	}
	probe__format_modes(rep.caps.kvm_bts_modes, modes, sizeof(modes));
	if (json) {
		json_t *o = json_object(), *why = json_object();

		for (int c = 0; c < PROBE_NR_CAPS; c++) {
			json_object_set_new(o, probe__cap_key(c),
					    json_boolean(probe__answer(&rep.caps, c)));
			json_object_set_new(why, probe__cap_key(c), json_string(rep.why[c]));
		}
		json_object_set_new(o, "kvm_bts_modes", json_string(modes));
		json_object_set_new(o, "why", why);
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(o);
		return 0;
	}
	for (int c = 0; c < PROBE_NR_CAPS; c++) {
		printf("%s: %s", probe__cap_name(c), probe__answer(&rep.caps, c) ? "yes" : "no");
		if (verbose && rep.why[c][0])
			printf("  (%s)", rep.why[c]);
		putchar('\n');
	}
	printf("kvm bts modes: %s\n", modes);
	return 0;
}

const struct vbts_command cmd_probe = {
	.name = "probe",
	.summary = "report what this host's KVM can do for tracing",
	.usage = usage,
	.fn = probe,
};
