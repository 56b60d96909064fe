// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-verify.c - `vbts verify`: check a sealed trace directory, write or check the inclusion
 * proof of one of its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "escape.h"
#include "log.h"
#include "seal-hash.h"
#include "seal-verify.h"

static const char usage[] =
	"usage: vbts verify DIR [--key VERIFY_KEY] [--json]\n"
	"       vbts verify DIR --prove FILE -o PROOF [--key VERIFY_KEY]\n"
	"       vbts verify --proof PROOF [--key VERIFY_KEY] FILE\n"
	"\n"
	"Check a trace directory that vbts run --seal or vbts attach --seal wrote: every byte\n"
	"of every file against the leaves of DIR/seal.log, the chain of its checkpoints (their\n"
	"numbers, each one's link to the one before, the leaves each covers), the signature of\n"
	"each with its epoch's key, that key against the verification key, and each epoch\n"
	"against the checkpoint's time. What fails is named: the file, its bytes or segment, and\n"
	"the checkpoint that sealed it. What was written after the last checkpoint (the run was\n"
	"killed) is listed as unsealed, not as tampered. See doc/sealing.md.\n"
	"\n"
	"  --key VERIFY_KEY  the verification key vbts keygen printed, or a file holding it;\n"
	"                    without it the trace is checked against the key it names, which\n"
	"                    shows it is whole but not who sealed it\n"
	"  --json            one JSON object: verdict, checkpoints, the head, every finding\n"
	"  --prove FILE      write the inclusion proof of FILE (crash.json, a segment, ...) into\n"
	"  -o PROOF          PROOF (made new): FILE's leaves, their paths to the last\n"
	"                    checkpoint's root, that checkpoint and its key path\n"
	"  --proof PROOF     check FILE against PROOF alone, without its trace\n"
	"\n"
	"Exit status: 0 verified (the unsealed tail of a run that did not end is listed), 1 not\n"
	"verified (something was changed, a checkpoint does not verify, the trace is not\n"
	"sealed, the proof does not prove FILE), 2 bad input.\n";

/* --key: the key's text, or a file holding it. Return: 0 or -errno (reported). */
static int load_key(const char *arg, struct vbts_seal_vk *vk)
{
	char buf[4096];
	size_t n;
	FILE *f;
	int ret;

	if (!strncmp(arg, VBTS_SEAL_VK_PREFIX, strlen(VBTS_SEAL_VK_PREFIX))) {
		ret = seal_vk__parse(arg, vk);
	} else {
		f = fopen(arg, "re");
		if (!f) {
			pr_err("--key %s: %s", arg, strerror(errno));
			return -errno;
		}
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		ret = n == sizeof(buf) - 1 ? -EINVAL : seal_vk__parse(buf, vk);
	}
	if (ret < 0) {
		char e[256];

		pr_err("--key %s: %s", escape__str(e, sizeof(e), arg),
		       ret == -EBADMSG ? "its check digits do not match (a typo?)" :
		       ret == -ERANGE  ? "its parameters are out of range" :
					 "not a verification key (vbts keygen prints one)");
		return ret;
	}
	return 0;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void utc(char *out, size_t len, uint64_t ns)
{
	time_t t = ns / 1000000000ULL;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(out, len, "%" PRIu64 " ns", ns);
}

static const char *const verdict_names[] = {
	[SEAL_VERIFIED] = "verified",
	[SEAL_PARTIAL] = "verified up to its last checkpoint",
	[SEAL_FAILED] = "NOT VERIFIED",
	[SEAL_UNSEALED] = "not sealed",
};

static const char *const verdict_keys[] = {
	[SEAL_VERIFIED] = "verified",
	[SEAL_PARTIAL] = "partial",
	[SEAL_FAILED] = "failed",
	[SEAL_UNSEALED] = "unsealed",
};

static int print_json(const char *dir, const struct seal_report *r)
{
	char vk[SEAL_VK_TEXT_SIZE], id[2 * VBTS_SEAL_TRACE_ID_SIZE + 1];
	char root[2 * VBTS_SEAL_HASH_SIZE + 1];
	json_t *o, *probs;
	char *d;

	o = json_object();
	probs = json_array();
	if (!o || !probs)
		return -ENOMEM;
	d = escape__utf8_dup(dir, 4096);
	json_object_set_new(o, "dir", json_string(d ? d : ""));
	free(d);
	json_object_set_new(o, "verdict", json_string(verdict_keys[r->verdict]));
	if (r->verdict != SEAL_UNSEALED) {
		seal_vk__format(&r->vk, vk, sizeof(vk));
		hex(id, r->trace_id, sizeof(r->trace_id));
		json_object_set_new(o, "key_given", json_boolean(r->key_given));
		json_object_set_new(o, "verification_key", json_string(vk));
		json_object_set_new(o, "trace_id", json_string(id));
		json_object_set_new(o, "checkpoints", json_integer(r->checkpoints));
		json_object_set_new(o, "good_checkpoints", json_integer(r->good));
		json_object_set_new(o, "leaves", json_integer(r->leaves));
		json_object_set_new(o, "files", json_integer(r->files));
		json_object_set_new(o, "bytes", json_integer(r->bytes));
		json_object_set_new(o, "ended", json_boolean(r->ended));
		if (r->good) {
			hex(root, r->head.root, sizeof(r->head.root));
			json_object_set_new(o, "head",
					    json_pack("{s:I,s:I,s:s,s:i,s:I,s:s}", "checkpoint",
						      (json_int_t)r->head.seq, "tree_size",
						      (json_int_t)r->head.tree_size, "root", root,
						      "epoch", (int)r->head.epoch, "time_ns",
						      (json_int_t)r->head.time_ns, "reason",
						      seal_report__reason_name(r->head.reason)));
		}
	}
	for (uint64_t i = 0; i < r->nr_problems && i < SEAL_VERIFY_MAX_PROBLEMS; i++) {
		const struct seal_problem *p = &r->problems[i];
		json_t *po = json_object();
		char *f = escape__utf8_dup(p->file, sizeof(p->file));

		json_object_set_new(
			po, "status",
			json_string(p->kind == SEAL_P_TAMPERED ? "tampered" : "unsealed"));
		json_object_set_new(po, "file", json_string(f ? f : ""));
		free(f);
		json_object_set_new(po, "checkpoint",
				    p->checkpoint >= 0 ? json_integer(p->checkpoint) : json_null());
		json_object_set_new(po, "offset",
				    p->offset >= 0 ? json_integer(p->offset) : json_null());
		json_object_set_new(po, "end", p->end >= 0 ? json_integer(p->end) : json_null());
		f = escape__utf8_dup(p->message, sizeof(p->message));
		json_object_set_new(po, "message", json_string(f ? f : ""));
		free(f);
		json_array_append_new(probs, po);
	}
	json_object_set_new(o, "problems", probs);
	json_object_set_new(o, "problems_total", json_integer(r->nr_problems));
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
	return 0;
}

static void print_text(const char *dir, const struct seal_report *r)
{
	char d[1024], f[2 * VBTS_SEAL_NAME_MAX], m[512], t0[64], vk[SEAL_VK_TEXT_SIZE];
	char root[2 * VBTS_SEAL_HASH_SIZE + 1];

	escape__str(d, sizeof(d), dir);
	if (r->verdict == SEAL_UNSEALED) {
		printf("%s: not sealed (no %s): nothing to verify\n", d, VBTS_SEAL_LOG_NAME);
		return;
	}
	printf("%s: %s", d, verdict_names[r->verdict]);
	if (r->verdict != SEAL_FAILED) {
		utc(t0, sizeof(t0), r->head.time_ns);
		printf(": %" PRIu64 " files, %" PRIu64 " bytes, %" PRIu64
		       " checkpoints in epochs %u-%u, the last at %s (%s)",
		       r->files, r->bytes, r->good, r->first_epoch, r->head.epoch, t0,
		       seal_report__reason_name(r->head.reason));
	} else {
		printf(": %" PRIu64 " problem%s", r->nr_tampered, r->nr_tampered == 1 ? "" : "s");
	}
	putchar('\n');
	for (uint64_t i = 0; i < r->nr_problems && i < SEAL_VERIFY_MAX_PROBLEMS; i++) {
		const struct seal_problem *p = &r->problems[i];

		printf("  %s: %s: %s\n", p->kind == SEAL_P_TAMPERED ? "tampered" : "unsealed",
		       escape__str(f, sizeof(f), p->file), escape__str(m, sizeof(m), p->message));
	}
	if (r->nr_problems > SEAL_VERIFY_MAX_PROBLEMS)
		printf("  ... %" PRIu64 " more\n", r->nr_problems - SEAL_VERIFY_MAX_PROBLEMS);
	if (r->good) {
		hex(root, r->head.root, sizeof(r->head.root));
		printf("head: checkpoint %" PRIu64 ", %" PRIu64 " leaves, root %s\n", r->head.seq,
		       r->head.tree_size, root);
	}
	if (!r->key_given) {
		seal_vk__format(&r->vk, vk, sizeof(vk));
		printf("note: no --key: checked against the key the trace names, %s; it shows the "
		       "trace is whole, not who sealed it\n",
		       vk);
	}
}

static int check_proof(const char *proof, const struct vbts_seal_vk *vk, const char *file)
{
	struct seal_proof_info info;
	char err[1024], n[2 * VBTS_SEAL_NAME_MAX], fe[1024], t[64];
	char id[2 * VBTS_SEAL_TRACE_ID_SIZE + 1];
	int ret;

	ret = seal_verify__proof(proof, vk, file, &info, err, sizeof(err));
	escape__str(fe, sizeof(fe), file);
	if (ret < 0) {
		pr_err("verify: %s", escape__str(n, sizeof(n), err));
		return 2;
	}
	if (ret) {
		printf("NOT PROVED: %s\n", escape__str(n, sizeof(n), err));
		return 1;
	}
	hex(id, info.trace_id, sizeof(info.trace_id));
	utc(t, sizeof(t), info.checkpoint.time_ns);
	printf("%s: proved: %" PRIu64 " bytes, %s of trace %s, sealed by checkpoint %" PRIu64
	       " at %s (epoch %u)\n",
	       fe, info.size, escape__str(n, sizeof(n), info.name), id, info.checkpoint.seq, t,
	       info.checkpoint.epoch);
	if (!vk)
		printf("note: no --key: checked against the key the proof names; it shows the file "
		       "is what was sealed, not who sealed it\n");
	return 0;
}

static int verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "prove", required_argument, NULL, 'p' },
		{ "proof", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key = NULL, *prove = NULL, *proof = NULL, *out = NULL;
	struct vbts_seal_vk vk;
	struct seal_report *r;
	bool json = false;
	char err[1024];
	int opt, ret;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'k':
			key = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			prove = optarg;
			break;
		case 'P':
			proof = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			command__option_error("verify", opt, optopt, argv[optind - 1]);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		pr_err("verify takes one %s; see 'vbts help verify'",
		       proof ? "FILE (the file the proof is for)" : "trace directory");
		return 2;
	}
	if ((prove && !out) || (out && !prove)) {
		pr_err("--prove FILE and -o PROOF go together; see 'vbts help verify'");
		return 2;
	}
	if (proof && (prove || json)) {
		pr_err("--proof checks a proof: not with --prove or --json");
		return 2;
	}
	if (prove && json) {
		pr_err("--prove writes a proof: not with --json");
		return 2;
	}
	if (key && load_key(key, &vk) < 0)
		return 2;
	if (proof)
		return check_proof(proof, key ? &vk : NULL, argv[optind]);
	if (prove) {
		ret = seal_verify__prove(argv[optind], prove, key ? &vk : NULL, out, err,
					 sizeof(err));
		if (ret < 0) {
			char e[2048];

			pr_err("verify: %s", escape__str(e, sizeof(e), err));
			return ret == -EBADMSG || ret == -ENOENT || ret == -E2BIG ? 1 : 2;
		}
		fprintf(stderr, "vbts: proof of %s written to %s\n", prove, out);
		return 0;
	}
	ret = seal_verify__dir(argv[optind], key ? &vk : NULL, &r, err, sizeof(err));
	if (ret < 0) {
		char e[2048];

		pr_err("verify: %s", escape__str(e, sizeof(e), err));
		return 2;
	}
	if (json)
		print_json(argv[optind], r);
	else
		print_text(argv[optind], r);
	ret = r->verdict == SEAL_VERIFIED || r->verdict == SEAL_PARTIAL ? 0 : 1;
	seal_report__free(r);
	return ret;
}

const struct vbts_command cmd_verify = {
	.name = "verify",
	.summary = "check a sealed trace, or one file against its inclusion proof",
	.usage = usage,
	.fn = verify,
};
