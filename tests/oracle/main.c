// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - vbts-oracle: QEMU's execution log as the expected branches of a test guest.
 *
 *   vbts-oracle gen [--cache DIR] [--qemu PATH] [--no-dfilter] [--keep-log]
 *                   [--timeout S] [-o FILE] IMAGE
 *   vbts-oracle key IMAGE          (the image's cache key: the list is <cache>/<key>.jsonl)
 *   vbts-oracle parse --entry ADDR LOG
 *   vbts-oracle compare ORACLE.jsonl VBTS.jsonl [--cpl all|user|kernel] [--exact|--prefix]
 *                       [--image IMAGE]
 *   vbts-oracle labels IMAGE LIST.jsonl [--cpl all|user|kernel]
 *   vbts-oracle tail IMAGE SYMBOL ORACLE.jsonl VBTS.jsonl [--count N]
 *
 * Reports name addresses by symbol: compare with --image, labels and tail with their IMAGE.
 * Exit status: 0 success / agreement, 1 divergence, 2 bad input, 77 QEMU not installed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "branch-list.h"
#include "compare.h"
#include "gen.h"
#include "labels.h"
#include "qemu-log.h"
#include "symtab.h"

static const char usage[] =
	"usage: vbts-oracle gen [--cache DIR] [--qemu PATH] [--no-dfilter] [--keep-log]\n"
	"                       [--timeout S] [-o FILE] IMAGE\n"
	"       vbts-oracle key IMAGE\n"
	"       vbts-oracle parse --entry ADDR LOG\n"
	"       vbts-oracle compare ORACLE.jsonl VBTS.jsonl [--cpl all|user|kernel]\n"
	"                          [--exact|--prefix]\n"
	"                           [--image IMAGE]\n"
	"       vbts-oracle labels IMAGE LIST.jsonl [--cpl all|user|kernel]\n"
	"       vbts-oracle tail IMAGE SYMBOL ORACLE.jsonl VBTS.jsonl [--count N]\n";

/*
 * Reports are collected in memory and printed with symbols added when an image is known.
 * struct report - the memory stream and the symbols.
 */
struct report {
	FILE *f;
	char *buf;
	size_t len;
	struct symtab *st;
};

static int report_open(struct report *r, const char *image)
{
	r->buf = NULL;
	r->len = 0;
	r->st = image ? symtab__load(image) : NULL;
	r->f = open_memstream(&r->buf, &r->len);
	if (!r->f) {
		symtab__free(r->st);
		return -ENOMEM;
	}
	return 0;
}

static void report_print(struct report *r)
{
	fclose(r->f);
	if (r->st)
		symtab__annotate(r->st, r->buf, stdout);
	else
		fputs(r->buf, stdout);
	free(r->buf);
	symtab__free(r->st);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in, *out;
	size_t n;
	int ret = 0;

	in = fopen(from, "r");
	if (!in)
		return -errno;
	out = fopen(to, "w");
	if (!out) {
		ret = -errno;
		goto out_close_in;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			ret = -EIO;
	if (ferror(in))
		ret = -EIO;
	if (fclose(out) && !ret)
		ret = -EIO;
out_close_in:
	fclose(in);
	return ret;
}

static int cmd_gen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cache", required_argument, NULL, 'c' },
		{ "qemu", required_argument, NULL, 'q' },
		{ "no-dfilter", no_argument, NULL, 'n' },
		{ "keep-log", no_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen_opts o = {
		.qemu = "qemu-system-x86_64", .cache_dir = ".", .dfilter = 1, .timeout_s = 300,
	};
	char path[4096], err[512] = "";
	const char *output = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.cache_dir = optarg;
			break;
		case 'q':
			o.qemu = optarg;
			break;
		case 'n':
			o.dfilter = 0;
			break;
		case 'k':
			o.keep_log = 1;
			break;
		case 't':
			o.timeout_s = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			output = optarg;
			break;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fputs(usage, stderr);
		return 2;
	}
	ret = oracle__generate(argv[optind], &o, path, sizeof(path), err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vbts-oracle gen: %s\n", err);
		return ret == -ENOENT ? 77 : 2;
	}
	if (output) {
		ret = copy_file(path, output);
		if (ret) {
			fprintf(stderr, "vbts-oracle gen: %s: %s\n", output, strerror(-ret));
			return 2;
		}
	}
	printf("%s\n", path);
	return 0;
}

static int cmd_key(int argc, char **argv)
{
	char key[64];
	int ret;

	if (argc != 2) {
		fputs(usage, stderr);
		return 2;
	}
	ret = oracle__cache_key(argv[1], key, sizeof(key));
	if (ret) {
		fprintf(stderr, "vbts-oracle key: %s: %s\n", argv[1], strerror(-ret));
		return 2;
	}
	printf("%s\n", key);
	return 0;
}

static int print_branch(void *ctx, const struct oracle_branch *b)
{
	printf("{\"from\":\"0x%" PRIx64 "\",\"to\":\"0x%" PRIx64 "\",\"cpl\":%d}\n",
	       b->from, b->to, b->cpl);
	return 0;
}

static int cmd_parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "entry", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	struct qemu_log *log;
	uint64_t entry = 0;
	FILE *f;
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'e') {
			fputs(usage, stderr);
			return 2;
		}
		entry = strtoull(optarg, NULL, 0);
	}
	if (optind + 1 != argc || !entry) {
		fputs(usage, stderr);
		return 2;
	}
	f = fopen(argv[optind], "r");
	if (!f) {
		fprintf(stderr, "vbts-oracle parse: %s: %s\n", argv[optind], strerror(errno));
		return 2;
	}
	log = qemu_log__new(entry, print_branch, NULL);
	if (!log) {
		fclose(f);
		fprintf(stderr, "vbts-oracle parse: out of memory\n");
		return 2;
	}
	ret = qemu_log__parse_file(log, f);
	fprintf(stderr, "vbts-oracle parse: %" PRIu64 " steps, %" PRIu64 " branches, %" PRIu64
		" lines not understood\n", qemu_log__steps(log), qemu_log__branches(log),
		qemu_log__unknown_lines(log));
	qemu_log__delete(log);
	fclose(f);
	if (ret) {
		fprintf(stderr, "vbts-oracle parse: %s\n", ret == -ENOENT ?
			"the entry point was never reached" : strerror(-ret));
		return 2;
	}
	return 0;
}

/*
 * Parses "--cpl MODE" (and "--exact", "--count N", "--image IMAGE" when @exact, @count, @image
 * are not NULL) anywhere in argv, leaving the positional arguments in pos[].
 */
static int split_args(int argc, char **argv, const char **pos, int npos, enum cpl_filter *f,
		      int *exact, size_t *count, const char **image)
{
	int i, n = 0;

	*f = CPL_FILTER_ALL;
	for (i = 1; i < argc; i++) {
		if (exact && !strcmp(argv[i], "--exact")) {
			*exact = 1;
		} else if (exact && !strcmp(argv[i], "--prefix")) {
			*exact = 2;
		} else if (image && !strcmp(argv[i], "--image") && i + 1 < argc) {
			*image = argv[++i];
		} else if (count && !strcmp(argv[i], "--count") && i + 1 < argc) {
			*count = strtoul(argv[++i], NULL, 0);
			if (!*count)
				return -EINVAL;
		} else if (!strcmp(argv[i], "--cpl") && i + 1 < argc) {
			if (branch_list__parse_cpl(argv[++i], f))
				return -EINVAL;
		} else if (!strncmp(argv[i], "--cpl=", 6)) {
			if (branch_list__parse_cpl(argv[i] + 6, f))
				return -EINVAL;
		} else if (argv[i][0] == '-' || n == npos) {
			return -EINVAL;
		} else {
			pos[n++] = argv[i];
		}
	}
	return n == npos ? 0 : -EINVAL;
}

static int cmd_compare(int argc, char **argv)
{
	struct branch_list oracle = { 0 }, vbts = { 0 };
	struct compare_result res;
	const char *pos[2], *image = NULL;
	struct report rep;
	enum cpl_filter f;
	char err[512];
	int ret = 2, exact = 0, err_cmp;

	if (split_args(argc, argv, pos, 2, &f, &exact, NULL, &image)) {
		fputs(usage, stderr);
		return 2;
	}
	if (branch_list__load(&oracle, pos[0], err, sizeof(err)) ||
	    branch_list__load(&vbts, pos[1], err, sizeof(err))) {
		fprintf(stderr, "vbts-oracle compare: %s\n", err);
		goto out;
	}
	if (report_open(&rep, image)) {
		fprintf(stderr, "vbts-oracle compare: out of memory\n");
		goto out;
	}
	err_cmp = (exact == 2 ? oracle__compare_prefix :
		   exact ? oracle__compare_exact : oracle__compare)(&oracle, &vbts, f, &res, rep.f);
	report_print(&rep);
	if (err_cmp) {
		fprintf(stderr, "vbts-oracle compare: out of memory\n");
		goto out;
	}
	printf("%s: %zu of %zu vbts branches placed, %zu oracle branches, %zu gaps\n",
	       res.ok ? "agree" : "DIVERGE", res.matched, res.vbts_n, res.oracle_n, res.gaps);
	ret = res.ok ? 0 : 1;
out:
	branch_list__free(&oracle);
	branch_list__free(&vbts);
	return ret;
}

static int cmd_labels(int argc, char **argv)
{
	struct branch_list list = { 0 };
	struct label_table t;
	struct report rep;
	size_t checked, failed;
	const char *pos[2];
	enum cpl_filter f;
	char err[512];

	if (split_args(argc, argv, pos, 2, &f, NULL, NULL, NULL)) {
		fputs(usage, stderr);
		return 2;
	}
	if (label_table__load(&t, pos[0], err, sizeof(err))) {
		fprintf(stderr, "vbts-oracle labels: %s\n", err);
		return 2;
	}
	if (branch_list__load(&list, pos[1], err, sizeof(err))) {
		fprintf(stderr, "vbts-oracle labels: %s\n", err);
		label_table__free(&t);
		return 2;
	}
	if (report_open(&rep, pos[0])) {
		fprintf(stderr, "vbts-oracle labels: out of memory\n");
		label_table__free(&t);
		branch_list__free(&list);
		return 2;
	}
	checked = label_table__check(&t, &list, f, &failed, rep.f);
	report_print(&rep);
	printf("%zu labels checked, %zu missing\n", checked, failed);
	label_table__free(&t);
	branch_list__free(&list);
	if (!checked) {
		fprintf(stderr, "vbts-oracle labels: %s has no labels for this CPL filter\n",
			pos[0]);
		return 2;
	}
	return failed ? 1 : 0;
}

static int cmd_tail(int argc, char **argv)
{
	struct branch_list oracle = { 0 }, vbts = { 0 };
	struct compare_result res;
	const char *pos[4];
	enum cpl_filter f;
	size_t count = 16;
	uint64_t target;
	struct report rep;
	char err[512];
	int ret = 2, err_tail;

	if (split_args(argc, argv, pos, 4, &f, NULL, &count, NULL) || f != CPL_FILTER_ALL) {
		fputs(usage, stderr);
		return 2;
	}
	ret = image__symbol(pos[0], pos[1], &target);
	if (ret) {
		fprintf(stderr, "vbts-oracle tail: %s: symbol %s: %s\n", pos[0], pos[1],
			strerror(-ret));
		return 2;
	}
	ret = 2;
	if (branch_list__load(&oracle, pos[2], err, sizeof(err)) ||
	    branch_list__load(&vbts, pos[3], err, sizeof(err))) {
		fprintf(stderr, "vbts-oracle tail: %s\n", err);
		goto out;
	}
	if (report_open(&rep, pos[0])) {
		fprintf(stderr, "vbts-oracle tail: out of memory\n");
		goto out;
	}
	err_tail = oracle__check_tail(&oracle, &vbts, target, count, &res, rep.f);
	report_print(&rep);
	switch (err_tail) {
	case 0:
		break;
	case -ENOENT:
		fprintf(stderr, "vbts-oracle tail: the oracle never branches to %s (0x%" PRIx64
			")\n", pos[1], target);
		goto out;
	default:
		fprintf(stderr, "vbts-oracle tail: out of memory\n");
		goto out;
	}
	printf("%s: %zu of the %zu branches into %s recorded in a row\n",
	       res.ok ? "complete" : "INCOMPLETE", res.matched, res.oracle_n, pos[1]);
	ret = res.ok ? 0 : 1;
out:
	branch_list__free(&oracle);
	branch_list__free(&vbts);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "gen"))
		return cmd_gen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "key"))
		return cmd_key(argc - 1, argv + 1);
	if (!strcmp(argv[1], "parse"))
		return cmd_parse(argc - 1, argv + 1);
	if (!strcmp(argv[1], "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "labels"))
		return cmd_labels(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tail"))
		return cmd_tail(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	fputs(usage, stderr);
	return 2;
}
