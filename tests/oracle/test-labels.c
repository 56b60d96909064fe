// SPDX-License-Identifier: GPL-2.0
/*
 * test-labels.c - the label table of the real branches guest image and its check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "oracle-tests.h"
#include "symtab.h"

static void load_branches(struct label_table *t)
{
	const char *image = getenv("VBTS_BRANCHES_IMAGE");
	char err[512];

	ck_assert_msg(image != NULL, "VBTS_BRANCHES_IMAGE is not set");
	ck_assert_msg(label_table__load(t, image, err, sizeof(err)) == 0, "%s", err);
}

static const struct label *find(const struct label_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->labels[i].name, name))
			return &t->labels[i];
	return NULL;
}

/* A list holding exactly the label pairs of the table. */
static void list_from_labels(const struct label_table *t, struct branch_list *l)
{
	struct branch_rec r;
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < t->n; i++) {
		if (t->labels[i].nonbranch)
			continue;
		memset(&r, 0, sizeof(r));
		r.from = t->labels[i].from;
		r.to = t->labels[i].to;
		r.cpl = t->labels[i].cpl;
		ck_assert_int_eq(branch_list__append(l, &r), 0);
	}
}

START_TEST(test_table)
{
	static const char *kinds[] = {
		"jcc_taken", "jmp", "jmp_ind", "call", "ret", "call_ind", "far_jmp", "far_call",
		"far_ret", "lretq", "loop", "jrcxz", "iretq", "int", "syscall", "ud2",
	};
	const struct label *l;
	struct label_table t;
	char name[64];
	size_t i;

	load_branches(&t);
	ck_assert_uint_eq(t.entry, 0x10000c);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(name, sizeof(name), "br_k_%s", kinds[i]);
		l = find(&t, name);
		ck_assert_msg(l != NULL, "%s missing", name);
		ck_assert_int_eq(l->cpl, 0);
		ck_assert_uint_ne(l->from, l->to);
		snprintf(name, sizeof(name), "br_u_%s", kinds[i]);
		l = find(&t, name);
		ck_assert_msg(l != NULL, "%s missing", name);
		ck_assert_int_eq(l->cpl, 3);
	}
	ck_assert_ptr_nonnull(find(&t, "br_u_int3"));
	ck_assert_ptr_nonnull(find(&t, "br_k_sysretq"));
	l = find(&t, "nb_k_rep_movsb");
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(l->nonbranch, 1);
	label_table__free(&t);
}
END_TEST

START_TEST(test_check)
{
	struct label_table t;
	struct branch_list l;
	size_t checked, failed, all;
	const struct label *nb;
	struct branch_rec r;

	load_branches(&t);
	list_from_labels(&t, &l);
	all = label_table__check(&t, &l, CPL_FILTER_ALL, &failed, NULL);
	ck_assert_uint_eq(all, t.n);
	ck_assert_uint_eq(failed, 0);
	checked = label_table__check(&t, &l, CPL_FILTER_KERNEL, &failed, NULL);
	ck_assert_uint_gt(checked, 10);
	ck_assert_uint_lt(checked, all);

	/* one pair missing */
	l.recs[0] = l.recs[--l.n];
	label_table__check(&t, &l, CPL_FILTER_ALL, &failed, NULL);
	ck_assert_uint_eq(failed, 1);
	/* a branch from a non-branch instruction */
	branch_list__free(&l);
	list_from_labels(&t, &l);
	nb = find(&t, "nb_u_after_mov_ss");
	ck_assert_ptr_nonnull(nb);
	memset(&r, 0, sizeof(r));
	r.from = nb->from;
	r.to = nb->from + 3;
	r.cpl = 3;
	ck_assert_int_eq(branch_list__append(&l, &r), 0);
	label_table__check(&t, &l, CPL_FILTER_ALL, &failed, NULL);
	ck_assert_uint_eq(failed, 1);
	label_table__check(&t, &l, CPL_FILTER_KERNEL, &failed, NULL);
	ck_assert_uint_eq(failed, 0);
	branch_list__free(&l);
	label_table__free(&t);
}
END_TEST

START_TEST(test_not_elf)
{
	struct label_table t;
	char err[512];

	ck_assert_int_eq(label_table__load(&t, "/dev/null", err, sizeof(err)), -ENOEXEC);
	ck_assert_int_eq(label_table__load(&t, "/nonexistent/image", err, sizeof(err)), -ENOENT);
}
END_TEST

START_TEST(test_symtab)
{
	const char *image = getenv("VBTS_BRANCHES_IMAGE");
	struct label_table t;
	const struct label *call;
	struct symtab *st;
	uint64_t off, entry;
	const char *name;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	load_branches(&t);
	call = find(&t, "br_k_call");
	ck_assert_ptr_nonnull(call);
	st = symtab__load(image);
	ck_assert_ptr_nonnull(st);
	/* the function wins over the label at the same address */
	name = symtab__lookup(st, call->to, &off);
	ck_assert_str_eq(name, "k_leaf");
	ck_assert_uint_eq(off, 0);
	ck_assert_int_eq(image__symbol(image, "_start", &entry), 0);
	name = symtab__lookup(st, entry + 3, &off);
	ck_assert_str_eq(name, "_start");
	ck_assert_uint_eq(off, 3);
	ck_assert_ptr_null(symtab__lookup(st, 0x1000, &off));
	ck_assert_int_eq(image__symbol(image, "no_such_symbol", &entry), -ENOENT);

	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	symtab__annotate(st, "from 0x10000f to 0x1000 (0x)", f);
	fclose(f);
	ck_assert_str_eq(text, "from 0x10000f <_start+0x3> to 0x1000 (0x)");
	free(text);
	symtab__free(st);
	label_table__free(&t);
	ck_assert_ptr_null(symtab__load("/dev/null"));
}
END_TEST

Suite *labels_suite(void)
{
	Suite *s = suite_create("labels");
	TCase *tc = tcase_create("labels");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_symtab);
	suite_add_tcase(s, tc);
	return s;
}
