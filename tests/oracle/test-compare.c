// SPDX-License-Identifier: GPL-2.0
/*
 * test-compare.c - the comparator and the JSON-lines reader on small fabricated lists.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "branch-list.h"
#include "compare.h"
#include "oracle-tests.h"

/*
 * A list in a compact notation: "A>B:c" a branch 0xA -> 0xB at CPL c (hex addresses),
 * "gap" a gap record, separated by spaces.
 */
static void build(struct branch_list *l, const char *spec)
{
	char buf[512], *tok, *save;
	struct branch_rec r;
	unsigned long long from, to;
	int cpl;

	memset(l, 0, sizeof(*l));
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		memset(&r, 0, sizeof(r));
		r.seq = l->n;
		r.line = l->n + 1;
		if (!strcmp(tok, "gap")) {
			r.gap = 1;
			r.cpl = -1;
		} else {
			ck_assert_int_eq(sscanf(tok, "%llx>%llx:%d", &from, &to, &cpl), 3);
			r.from = from;
			r.to = to;
			r.cpl = cpl;
		}
		ck_assert_int_eq(branch_list__append(l, &r), 0);
	}
}

static int compare_mode(const char *oracle, const char *vbts, enum cpl_filter f, int exact)
{
	struct branch_list o, v;
	struct compare_result res;
	FILE *devnull = fopen("/dev/null", "w");

	build(&o, oracle);
	build(&v, vbts);
	if (exact)
		ck_assert_int_eq(oracle__compare_exact(&o, &v, f, &res, devnull), 0);
	else
		ck_assert_int_eq(oracle__compare(&o, &v, f, &res, devnull), 0);
	fclose(devnull);
	branch_list__free(&o);
	branch_list__free(&v);
	return res.ok;
}

static int compare(const char *oracle, const char *vbts, enum cpl_filter f)
{
	return compare_mode(oracle, vbts, f, 0);
}

#define ORACLE "10>20:0 21>30:0 31>40:3 41>50:3 51>60:0 61>70:0"

START_TEST(test_equal)
{
	ck_assert_int_eq(compare(ORACLE, ORACLE, CPL_FILTER_ALL), 1);
	ck_assert_int_eq(compare("", "", CPL_FILTER_ALL), 1);
}
END_TEST

START_TEST(test_missing_without_gap)
{
	ck_assert_int_eq(compare(ORACLE, "10>20:0 31>40:3 41>50:3 51>60:0 61>70:0",
				 CPL_FILTER_ALL), 0);
	/* the first and the last branch count too */
	ck_assert_int_eq(compare(ORACLE, "21>30:0 31>40:3 41>50:3 51>60:0 61>70:0",
				 CPL_FILTER_ALL), 0);
	ck_assert_int_eq(compare(ORACLE, "10>20:0 21>30:0 31>40:3 41>50:3 51>60:0",
				 CPL_FILTER_ALL), 0);
	ck_assert_int_eq(compare(ORACLE, "", CPL_FILTER_ALL), 0);
}
END_TEST

START_TEST(test_missing_inside_gap)
{
	ck_assert_int_eq(compare(ORACLE, "10>20:0 gap 41>50:3 51>60:0 61>70:0",
				 CPL_FILTER_ALL), 1);
	ck_assert_int_eq(compare(ORACLE, "gap 51>60:0 61>70:0", CPL_FILTER_ALL), 1);
	ck_assert_int_eq(compare(ORACLE, "10>20:0 21>30:0 gap", CPL_FILTER_ALL), 1);
	ck_assert_int_eq(compare(ORACLE, "gap", CPL_FILTER_ALL), 1);
}
END_TEST

START_TEST(test_unsound)
{
	/* a branch the oracle does not have */
	ck_assert_int_eq(compare(ORACLE, "10>20:0 gap 41>99:3 gap", CPL_FILTER_ALL), 0);
	/* order not kept */
	ck_assert_int_eq(compare(ORACLE, "gap 41>50:3 gap 31>40:3 gap", CPL_FILTER_ALL), 0);
	/* a record beyond the end */
	ck_assert_int_eq(compare(ORACLE, ORACLE " 10>20:0", CPL_FILTER_ALL), 0);
}
END_TEST

START_TEST(test_cpl_filter)
{
	ck_assert_int_eq(compare(ORACLE, "31>40:3 41>50:3", CPL_FILTER_USER), 1);
	ck_assert_int_eq(compare(ORACLE, "31>40:3 41>50:3", CPL_FILTER_ALL), 0);
	ck_assert_int_eq(compare(ORACLE, "10>20:0 21>30:0 51>60:0 61>70:0",
				 CPL_FILTER_KERNEL), 1);
	ck_assert_int_eq(compare(ORACLE, "10>20:0 51>60:0 61>70:0", CPL_FILTER_KERNEL), 0);
	/* records of the other CPL are left out of a filtered comparison */
	ck_assert_int_eq(compare(ORACLE, ORACLE, CPL_FILTER_USER), 1);
}
END_TEST

/* After a gap the segment may sit anywhere later: the leftmost place that fits whole wins. */
START_TEST(test_repeated_segment)
{
	const char *oracle = "1>2:0 3>4:0 1>2:0 5>6:0 7>8:0";

	ck_assert_int_eq(compare(oracle, "gap 1>2:0 5>6:0 7>8:0", CPL_FILTER_ALL), 1);
	ck_assert_int_eq(compare(oracle, "gap 1>2:0 gap 1>2:0 5>6:0 7>8:0", CPL_FILTER_ALL), 1);
	ck_assert_int_eq(compare(oracle, "gap 1>2:0 5>6:0 gap 1>2:0 7>8:0", CPL_FILTER_ALL), 0);
}
END_TEST

START_TEST(test_exact)
{
	ck_assert_int_eq(compare_mode(ORACLE, ORACLE, CPL_FILTER_ALL, 1), 1);
	ck_assert_int_eq(compare_mode(ORACLE, "10>20:0 21>30:0 31>40:3 41>50:3 gap 61>70:0",
				      CPL_FILTER_ALL, 1), 0);
	ck_assert_int_eq(compare_mode(ORACLE, ORACLE " gap", CPL_FILTER_ALL, 1), 0);
	ck_assert_int_eq(compare_mode(ORACLE, "10>20:0 31>40:3", CPL_FILTER_ALL, 1), 0);
}
END_TEST

static int tail(const char *oracle, const char *vbts, uint64_t target, size_t count)
{
	struct branch_list o, v;
	struct compare_result res;
	int ret;

	build(&o, oracle);
	build(&v, vbts);
	ret = oracle__check_tail(&o, &v, target, count, &res, NULL);
	branch_list__free(&o);
	branch_list__free(&v);
	return ret ? ret : res.ok;
}

/* The branches into the first entry of 0x90 (a fault at CPL 3 in this list). */
#define CRASH "1>2:3 3>4:0 5>6:3 7>8:3 9>90:3 91>a0:0 b>90:3"

START_TEST(test_tail)
{
	ck_assert_int_eq(tail(CRASH, CRASH, 0x90, 3), 1);
	ck_assert_int_eq(tail(CRASH, "gap 5>6:3 7>8:3 9>90:3 gap", 0x90, 3), 1);
	ck_assert_int_eq(tail(CRASH, "gap 5>6:3 gap 7>8:3 9>90:3", 0x90, 3), 0);
	ck_assert_int_eq(tail(CRASH, "gap 5>6:3 9>90:3", 0x90, 3), 0);
	ck_assert_int_eq(tail(CRASH, "7>8:3 9>90:3", 0x90, 2), 1);
	ck_assert_int_eq(tail(CRASH, "7>8:3 9>90:3", 0x90, 3), 0);
	/* the tail stops at the CPL change: 3>4 at CPL 0 is not part of it */
	ck_assert_int_eq(tail(CRASH, "gap 5>6:3 7>8:3 9>90:3", 0x90, 50), 1);
	ck_assert_int_eq(tail(CRASH, CRASH, 0x99, 3), -ENOENT);
}
END_TEST

static const char vbts_jsonl[] =
	"{\"type\":\"start\",\"vcpu\":0,\"seq\":0,\"time\":1}\n"
	"{\"type\":\"branch\",\"vcpu\":0,\"seq\":1,\"from\":\"0x100077\",\"to\":\"0x10007f\","
	"\"cpl\":0}\n"
	"{\"type\":\"task-arrive\",\"vcpu\":0,\"seq\":2,\"cr3\":\"0x203000\",\"time\":5}\n"
	"{\"type\":\"gap\",\"vcpu\":0,\"seq\":3,\"from\":\"0x100080\",\"to\":\"0x100090\"}\n"
	"\n"
	"{\"type\":\"branch\",\"vcpu\":0,\"seq\":4,\"from\":\"0x100095\",\"to\":\"0x1000a0\","
	"\"cpl\":3}\n";

START_TEST(test_read_vbts_jsonl)
{
	FILE *f = fmemopen((void *)vbts_jsonl, strlen(vbts_jsonl), "r");
	struct branch_list l = { 0 };
	char err[256];

	ck_assert_int_eq(branch_list__read(&l, f, "mem", err, sizeof(err)), 0);
	fclose(f);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_int_eq(l.recs[0].gap, 0);
	ck_assert_uint_eq(l.recs[0].from, 0x100077);
	ck_assert_uint_eq(l.recs[0].to, 0x10007f);
	ck_assert_uint_eq(l.recs[0].seq, 1);
	ck_assert_int_eq(l.recs[1].gap, 1);
	ck_assert_uint_eq(l.recs[1].to, 0x100090);
	ck_assert_int_eq(l.recs[2].cpl, 3);
	ck_assert_uint_eq(l.recs[2].line, 6);
	branch_list__free(&l);
}
END_TEST

START_TEST(test_read_bad_lines)
{
	static const char *bad[] = {
		"not json\n",
		"[1,2]\n",
		"{\"from\":\"0x10\"}\n",
		"{\"from\":\"zz\",\"to\":\"0x20\"}\n",
		"{\"type\":\"branch\",\"from\":\"0x10\",\"to\":\"0x20\",\"cpl\":7}\n",
	};
	struct branch_list l = { 0 };
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		ck_assert_int_eq(branch_list__read(&l, f, "mem", err, sizeof(err)), -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, "mem:1"));
		fclose(f);
		branch_list__free(&l);
	}
}
END_TEST

Suite *compare_suite(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("compare");

	tcase_add_test(tc, test_equal);
	tcase_add_test(tc, test_missing_without_gap);
	tcase_add_test(tc, test_missing_inside_gap);
	tcase_add_test(tc, test_unsound);
	tcase_add_test(tc, test_cpl_filter);
	tcase_add_test(tc, test_repeated_segment);
	tcase_add_test(tc, test_exact);
	tcase_add_test(tc, test_tail);
	tcase_add_test(tc, test_read_vbts_jsonl);
	tcase_add_test(tc, test_read_bad_lines);
	suite_add_tcase(s, tc);
	return s;
}
