/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compare.h - checks vbts's records against the oracle's branch list.
 *
 * The vbts records split at gaps into segments of consecutive branches. With the CPL filter
 * applied to both sides, each segment must be a contiguous run of the oracle list, segments in
 * order (sound: every vbts branch is in the oracle, order kept; complete: no oracle branch
 * between two vbts records that have no gap between them). The trace starts at the image's
 * entry point and ends at its exit, so the first segment must start the oracle list and the
 * last must end it, unless a gap comes first or last. Exact mode (a backend that never loses
 * control) also refuses gaps: the lists must be equal.
 */
#ifndef VBTS_ORACLE_COMPARE_H
#define VBTS_ORACLE_COMPARE_H

#include <stdio.h>

#include "branch-list.h"

/**
 * struct compare_result - what a comparison found.
 * @ok:        1 when the records agree with the oracle
 * @matched:   vbts branches placed in the oracle list
 * @oracle_n:  oracle branches after the CPL filter
 * @vbts_n:    vbts branches after the CPL filter
 * @gaps:      gap records seen
 */
struct compare_result {
	int ok;
	size_t matched;
	size_t oracle_n;
	size_t vbts_n;
	size_t gaps;
};

/**
 * oracle__compare() - compare @vbts with @oracle under @f; the first divergence, with
 * context, is described on @report (may be NULL).
 * Returns 0 (see @res->ok) or -ENOMEM.
 */
int oracle__compare(const struct branch_list *oracle, const struct branch_list *vbts,
		    enum cpl_filter f, struct compare_result *res, FILE *report);

/**
 * oracle__compare_prefix() - oracle__compare() of a trace that may have been cut short (its
 * writer killed): it need not reach the oracle's end.
 * Returns 0 (see @res->ok) or -ENOMEM.
 */
int oracle__compare_prefix(const struct branch_list *oracle, const struct branch_list *vbts,
			   enum cpl_filter f, struct compare_result *res, FILE *report);

/**
 * oracle__compare_exact() - oracle__compare(), and any gap record is a divergence too.
 * Returns 0 (see @res->ok) or -ENOMEM.
 */
int oracle__compare_exact(const struct branch_list *oracle, const struct branch_list *vbts,
			  enum cpl_filter f, struct compare_result *res, FILE *report);

/**
 * oracle__check_tail() - the branches that lead into the first entry of @target in the
 * oracle (e.g. the page-fault handler: a crashed task's last branches) appear in @vbts as
 * consecutive branch records, no gap among them. The tail is the run of branches at the CPL
 * of the one into @target, at most @count long, ending with it. @res->oracle_n gets the tail's
 * length, @res->matched the longest run found.
 * Returns 0 (see @res->ok), -ENOENT when the oracle never branches to @target, -ENOMEM.
 */
int oracle__check_tail(const struct branch_list *oracle, const struct branch_list *vbts,
		       uint64_t target, size_t count, struct compare_result *res, FILE *report);

#endif /* VBTS_ORACLE_COMPARE_H */
