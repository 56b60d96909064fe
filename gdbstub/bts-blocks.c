// SPDX-License-Identifier: GPL-2.0
/*
 * bts-blocks.c - a thread's branches as gdb's BTS blocks.
 */
#include <errno.h>
#include <stdlib.h>

#include "bts-blocks.h"

struct block_vec {
	struct gdb_btrace_block *v;
	size_t nr, cap;
};

static int push(struct block_vec *b, uint64_t begin, uint64_t end)
{
	if (b->nr == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct gdb_btrace_block *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->nr].begin = begin;
	b->v[b->nr].end = end;
	b->nr++;
	return 0;
}

/* Instructions walked at most from where a block left its space to where it is seen again. */
#define STRAIGHT_MAX 4096

/* Do the instructions from @from on reach @to without a jump (@to itself included)? */
static bool straight_on(uint64_t from, uint64_t to,
			uint64_t (*next_insn)(void *ctx, uint64_t addr), void *ctx)
{
	uint64_t a = from;

	for (unsigned int n = 0; n < STRAIGHT_MAX && a && a <= to; n++) {
		if (a == to)
			return true;
		if (!next_insn)
			return false;
		a = next_insn(ctx, a);
	}
	return false;
}

int bts_blocks__build(const struct bts_branch *br, size_t nr,
		      uint64_t (*next_insn)(void *ctx, uint64_t addr), void *ctx,
		      struct gdb_btrace_block **out, size_t *nr_out)
{
	struct block_vec b = { 0 };
	uint64_t begin = 0, exit_from = 0;
	bool have_begin = false, pending = false;
	int ret = 0;

	*out = NULL;
	*nr_out = 0;
	for (size_t i = 0; i < nr && !ret; i++) {
		const struct bts_branch *r = &br[i];
		/* The newest branch's target is the PC unless it left the space (a crash). */
		bool to_in = (i + 1 == nr && r->from_in) ? r->to_in : (i + 1 == nr || r->to_in);

		if (r->after_break) {
			/* A block that left the space before the break ended where it left. */
			if (pending)
				ret = push(&b, begin, exit_from);
			have_begin = pending = false;
		}
		if (r->from_in && pending) {
			/*
			 * Back in the space with no branch that says where (its way back was not
			 * recorded, as a user-mode trace leaves out the kernel's return): when the
			 * instructions from where it left run straight on to this branch's source,
			 * it came back there and the block goes on; else the open block ended where
			 * it left, what ran since it came back is unknown.
			 */
			if (straight_on(exit_from, r->from, next_insn, ctx)) {
				pending = false;
			} else {
				ret = push(&b, begin, exit_from);
				have_begin = pending = false;
			}
		}
		if (r->from_in && to_in) {
			if (have_begin)
				ret = push(&b, begin, r->from);
			begin = r->to;
			have_begin = true;
		} else if (r->from_in) {
			/* Leaves the space: the block stays open until it comes back. */
			exit_from = r->from;
			pending = have_begin;
		} else if (to_in) {
			if (pending) {
				if (r->to == exit_from ||
				    (next_insn && r->to == next_insn(ctx, exit_from))) {
					pending = false;
					continue;
				}
				ret = push(&b, begin, exit_from);
			}
			pending = false;
			begin = r->to;
			have_begin = true;
		}
	}
	/*
	 * The newest block ends at the PC: where the newest branch went, or where it left the
	 * space when the thread stopped there (its way back was never taken).
	 */
	if (!ret && nr && have_begin && !pending)
		ret = push(&b, begin, br[nr - 1].to);
	else if (!ret && nr && pending && br[nr - 1].from_in && !br[nr - 1].to_in)
		ret = push(&b, begin, exit_from);
	if (ret) {
		free(b.v);
		return ret;
	}
	for (size_t i = 0; i < b.nr / 2; i++) {
		struct gdb_btrace_block t = b.v[i];

		b.v[i] = b.v[b.nr - 1 - i];
		b.v[b.nr - 1 - i] = t;
	}
	*out = b.v;
	*nr_out = b.nr;
	return 0;
}
