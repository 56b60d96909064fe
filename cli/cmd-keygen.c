// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-keygen.c - `vbts keygen`: a forward-secure sealing key and its verification key.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "commands.h"
#include "log.h"
#include "seal-hash.h"
#include "seal-key.h"

static const char usage[] =
	"usage: vbts keygen [--out DIR] [--epoch SECONDS] [--epochs N]\n"
	"\n"
	"Make a key pair for sealed traces (vbts run --seal, vbts attach --seal, vbts verify):\n"
	"DIR/seal.key, the sealing key (mode 0600, for the host that records), and\n"
	"DIR/verify.key, the verification key, one printable line, also printed on stdout: keep\n"
	"it elsewhere (on paper, in the case file); it checks every trace sealed with the key.\n"
	"\n"
	"The sealing key is forward-secure: it evolves every epoch, and the seed of the epoch\n"
	"before is erased from the key file, so a key stolen today cannot seal anything as an\n"
	"earlier epoch. An existing key is never overwritten. See doc/sealing.md.\n"
	"\n"
	"  --out DIR        where to write the keys (default " SEAL_KEY_DEFAULT_DIR ", made\n"
	"                   with mode 0700 when missing)\n"
	"  --epoch SECONDS  length of an epoch (default 900, at least 1): a stolen key can seal\n"
	"                   as the epoch it was taken in, never as an earlier one\n"
	"  --epochs N       how many epochs the key lasts, a power of 2 from 2 to 1048576\n"
	"                   (default 65536: 682 days of 15-minute epochs)\n"
	"\n"
	"Exit status: 0, 1 when the keys could not be written, 2 on bad input.\n";

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int keygen(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "epoch", required_argument, NULL, 'e' },
		{ "epochs", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = SEAL_KEY_DEFAULT_DIR;
	uint64_t epoch_s = VBTS_SEAL_DEFAULT_EPOCH_S,
		 epochs = 1ULL << VBTS_SEAL_DEFAULT_LOG2_EPOCHS;
	char err[512], text[SEAL_VK_TEXT_SIZE];
	struct vbts_seal_vk vk;
	unsigned int log2 = 0;
	int opt, ret;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			dir = optarg;
			break;
		case 'e':
			if (parse_u64(optarg, UINT32_MAX, &epoch_s) < 0 || !epoch_s) {
				pr_err("--epoch '%s': not a number of seconds from 1 to %u", optarg,
				       UINT32_MAX);
				return 2;
			}
			break;
		case 'n':
			if (parse_u64(optarg, 1ULL << VBTS_SEAL_MAX_LOG2_EPOCHS, &epochs) < 0 ||
			    epochs < 2 || (epochs & (epochs - 1))) {
				pr_err("--epochs '%s': not a power of 2 from 2 to %llu", optarg,
				       1ULL << VBTS_SEAL_MAX_LOG2_EPOCHS);
				return 2;
			}
			break;
		default:
			command__option_error("keygen", opt, optopt, argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		pr_err("unexpected argument '%s' (keygen takes options only); see 'vbts help keygen'",
		       argv[optind]);
		return 2;
	}
	while ((1ULL << log2) < epochs)
		log2++;
	ret = seal_key__generate(dir, epoch_s, log2, time(NULL), &vk, err, sizeof(err));
	if (ret < 0) {
		pr_err("keygen: %s", err);
		return ret == -EEXIST || ret == -EINVAL ? 2 : 1;
	}
	seal_vk__format(&vk, text, sizeof(text));
	fprintf(stderr, "vbts: sealing key %s/%s (keep it on this host, mode 0600)\n", dir,
		SEAL_KEY_FILE);
	fprintf(stderr, "vbts: verification key %s/%s (keep a copy elsewhere):\n", dir,
		SEAL_KEY_VERIFY_FILE);
	printf("%s\n", text);
	return 0;
}

const struct vbts_command cmd_keygen = {
	.name = "keygen",
	.summary = "make a forward-secure key pair for sealed traces",
	.usage = usage,
	.fn = keygen,
};
