// SPDX-License-Identifier: GPL-2.0
/*
 * test-decoder.c - the pure record parser (table-driven) and the stateful decoder: tasks, CPL,
 * gap pairing and orphans, losses, start/stop/freeze, threads and entries, unknown escapes,
 * multi-vCPU merge.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "decoder-int.h"
#include "decoder-test.h"

/* ---- memory source ------------------------------------------------------------------------ */

static ssize_t mem_read(void *ctx, struct vbts_record *buf, size_t max, uint64_t *first_seq)
{
	struct mem_source *m = ctx;
	size_t n;

	if (m->skip_n && m->pos == m->skip_at)
		m->pos += m->skip_n;
	if (m->pos >= m->nr)
		return 0;
	n = m->nr - m->pos;
	if (m->skip_n && m->pos < m->skip_at && n > m->skip_at - m->pos)
		n = m->skip_at - m->pos;
	if (m->chunk && n > m->chunk)
		n = m->chunk;
	if (n > max)
		n = max;
	memcpy(buf, m->recs + m->pos, n * sizeof(*buf));
	*first_seq = m->first_seq + m->pos;
	m->pos += n;
	return (ssize_t)n;
}

/* Records never handed out at the end (skipped there), plus the configured drops. */
static uint64_t mem_dropped(void *ctx, uint64_t end_seq)
{
	struct mem_source *m = ctx;
	uint64_t end = m->first_seq + m->nr;

	return m->dropped + (end > end_seq ? end - end_seq : 0);
}

const struct decoder_source_ops mem_source_ops = {
	.read = mem_read,
	.dropped = mem_dropped,
};

size_t decode_all(const struct decoder_source *src, size_t n, struct decoded_record *out,
		  size_t max)
{
	struct decoder *d = decoder__new(src, n);
	struct decoded_record r;
	size_t count = 0;
	int ret;

	ck_assert_ptr_nonnull(d);
	while ((ret = decoder__next(d, &r)) > 0) {
		ck_assert_uint_lt(count, max);
		out[count++] = r;
	}
	ck_assert_int_eq(ret, 0);
	/* Finished decoders stay finished. */
	ck_assert_int_eq(decoder__next(d, &r), 0);
	decoder__free(d);
	return count;
}

/* ---- parser ------------------------------------------------------------------------------- */

static const struct {
	struct vbts_record rec;
	enum decoded_type type;
	bool gap_end, time_valid, cpl_valid, vector_valid;
	uint64_t time, payload, aux;
	unsigned int cpl, kind, vector, esc_kind;
} parse_cases[] = {
	{ { 0x1000, 0x2000, 0 }, DECODED_BRANCH },
	{ { 0x1000, 0x2000, VBTS_REC_PREDICTED }, DECODED_BRANCH },
	{ { 0x1000, 0x2000, VBTS_REC_CPL_VALID | (3ULL << 8) | (4ULL << 16) }, DECODED_BRANCH,
	  .cpl_valid = true, .cpl = 3, .kind = VBTS_BR_CALL },
	/* CPL bits without the valid bit are not a CPL. */
	{ { 0x1000, 0x2000, 3ULL << 8 }, DECODED_BRANCH },
	{ { 0x1000, 0x2000, VBTS_REC_CPL_VALID | (16ULL << 16) | VBTS_REC_VECTOR_VALID |
				    (14ULL << 24) },
	  DECODED_BRANCH, .cpl_valid = true, .kind = VBTS_BR_EXCEPTION, .vector_valid = true,
	  .vector = 14 },
	{ { VBTS_ESCAPE, 0x203000, (77ULL << 8) | VBTS_ESC_TASK_DEPART }, DECODED_TASK_DEPART,
	  .time_valid = true, .time = 77, .payload = 0x203000, .aux = 77,
	  .esc_kind = VBTS_ESC_TASK_DEPART },
	{ { VBTS_ESCAPE, 0x204000, (78ULL << 8) | VBTS_ESC_TASK_ARRIVE }, DECODED_TASK_ARRIVE,
	  .time_valid = true, .time = 78, .payload = 0x204000, .aux = 78,
	  .esc_kind = VBTS_ESC_TASK_ARRIVE },
	{ { VBTS_ESCAPE, 0x100010, (1ULL << 8) | VBTS_ESC_GAP_BEGIN }, DECODED_GAP,
	  .payload = 0x100010, .aux = 1, .esc_kind = VBTS_ESC_GAP_BEGIN },
	{ { VBTS_ESCAPE, 0x100020, (99ULL << 8) | VBTS_ESC_GAP_END }, DECODED_GAP,
	  .gap_end = true, .time_valid = true, .time = 99, .payload = 0x100020, .aux = 99,
	  .esc_kind = VBTS_ESC_GAP_END },
	{ { VBTS_ESCAPE, 12, VBTS_ESC_LOST }, DECODED_LOST, .payload = 12,
	  .esc_kind = VBTS_ESC_LOST },
	{ { VBTS_ESCAPE, 500, VBTS_ESC_TIME }, DECODED_TIME, .time_valid = true, .time = 500,
	  .payload = 500, .esc_kind = VBTS_ESC_TIME },
	{ { VBTS_ESCAPE, 0, (3ULL << 8) | VBTS_ESC_START }, DECODED_START, .time_valid = true,
	  .aux = 3, .esc_kind = VBTS_ESC_START },
	{ { VBTS_ESCAPE, 900, VBTS_ESC_STOP }, DECODED_STOP, .time_valid = true, .time = 900,
	  .payload = 900, .esc_kind = VBTS_ESC_STOP },
	{ { VBTS_ESCAPE, 901, (2ULL << 8) | VBTS_ESC_FREEZE }, DECODED_FREEZE, .time_valid = true,
	  .time = 901, .payload = 901, .aux = 2, .esc_kind = VBTS_ESC_FREEZE },
	{ { VBTS_ESCAPE, 126ULL << 32 | 125, VBTS_ESC_TASK_PID }, DECODED_TASK_PID,
	  .payload = 126ULL << 32 | 125, .esc_kind = VBTS_ESC_TASK_PID },
	{ { VBTS_ESCAPE, 0x401000, (4ULL << 8) | VBTS_ESC_GUEST_BTS_DROP }, DECODED_GUEST_BTS_DROP,
	  .payload = 0x401000, .aux = 4, .esc_kind = VBTS_ESC_GUEST_BTS_DROP },
	/* A thread: pid 42, tgid 41, the low 56 bits of its task's address. */
	{ { VBTS_ESCAPE, 41ULL << 32 | 42, (0x88800a002000ULL << 8) | VBTS_ESC_THREAD },
	  DECODED_THREAD, .payload = 41ULL << 32 | 42, .aux = 0x88800a002000ULL,
	  .esc_kind = VBTS_ESC_THREAD },
	/* Numbers no kernel writes are numbers all the same: nothing from the trace is trusted. */
	{ { VBTS_ESCAPE, ~0ULL, (VBTS_ESC_AUX_MAX << 8) | VBTS_ESC_THREAD }, DECODED_THREAD,
	  .payload = ~0ULL, .aux = VBTS_ESC_AUX_MAX, .esc_kind = VBTS_ESC_THREAD },
	{ { VBTS_ESCAPE, 0, VBTS_ESC_THREAD }, DECODED_THREAD, .esc_kind = VBTS_ESC_THREAD },
	/* An entry: its address, and its reason; one outside 1..4 still decodes. */
	{ { VBTS_ESCAPE, 0x401000, ((uint64_t)VBTS_ENTRY_FIRST << 8) | VBTS_ESC_ENTRY },
	  DECODED_ENTRY, .payload = 0x401000, .aux = VBTS_ENTRY_FIRST, .esc_kind = VBTS_ESC_ENTRY },
	{ { VBTS_ESCAPE, 0x7fff0000, ((uint64_t)VBTS_ENTRY_SIGRETURN << 8) | VBTS_ESC_ENTRY },
	  DECODED_ENTRY, .payload = 0x7fff0000, .aux = VBTS_ENTRY_SIGRETURN,
	  .esc_kind = VBTS_ESC_ENTRY },
	{ { VBTS_ESCAPE, 0x401000, VBTS_ESC_ENTRY }, DECODED_ENTRY, .payload = 0x401000,
	  .esc_kind = VBTS_ESC_ENTRY },
	{ { VBTS_ESCAPE, 0x401000, ((uint64_t)VBTS_ENTRY_MAX << 8) | VBTS_ESC_ENTRY },
	  DECODED_ENTRY, .payload = 0x401000, .aux = VBTS_ENTRY_MAX, .esc_kind = VBTS_ESC_ENTRY },
	{ { VBTS_ESCAPE, ~0ULL, (VBTS_ESC_AUX_MAX << 8) | VBTS_ESC_ENTRY }, DECODED_ENTRY,
	  .payload = ~0ULL, .aux = VBTS_ESC_AUX_MAX, .esc_kind = VBTS_ESC_ENTRY },
	{ { VBTS_ESCAPE, 0, 0 }, DECODED_UNKNOWN, .esc_kind = VBTS_ESC_NONE },
	{ { VBTS_ESCAPE, 5, (0xabULL << 8) | 0x42 }, DECODED_UNKNOWN, .payload = 5, .aux = 0xab,
	  .esc_kind = 0x42 },
	{ { VBTS_ESCAPE, 5, (VBTS_ESC_AUX_MAX << 8) | VBTS_ESC_MAX }, DECODED_UNKNOWN,
	  .payload = 5, .aux = VBTS_ESC_AUX_MAX, .esc_kind = VBTS_ESC_MAX },
};

START_TEST(test_parse_table)
{
	struct parsed_record p;

	record__parse(&parse_cases[_i].rec, &p);
	ck_assert_int_eq(p.type, parse_cases[_i].type);
	ck_assert_int_eq(p.gap_end, parse_cases[_i].gap_end);
	ck_assert_int_eq(p.time_valid, parse_cases[_i].time_valid);
	ck_assert_uint_eq(p.time, parse_cases[_i].time);
	if (p.type == DECODED_BRANCH) {
		ck_assert_uint_eq(p.from, parse_cases[_i].rec.from);
		ck_assert_uint_eq(p.to, parse_cases[_i].rec.to);
		ck_assert_int_eq(p.cpl_valid, parse_cases[_i].cpl_valid);
		ck_assert_uint_eq(p.cpl, parse_cases[_i].cpl);
		ck_assert_uint_eq(p.kind, parse_cases[_i].kind);
		ck_assert_int_eq(p.vector_valid, parse_cases[_i].vector_valid);
		ck_assert_uint_eq(p.vector, parse_cases[_i].vector);
	} else {
		ck_assert_uint_eq(p.payload, parse_cases[_i].payload);
		ck_assert_uint_eq(p.aux, parse_cases[_i].aux);
		ck_assert_uint_eq(p.esc_kind, parse_cases[_i].esc_kind);
	}
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(decoded_type__name(DECODED_TASK_ARRIVE), "task-arrive");
	ck_assert_str_eq(decoded_type__name(DECODED_TYPE_MAX), "?");
	ck_assert_ptr_null(branch_kind__name(VBTS_BR_UNKNOWN));
	ck_assert_ptr_null(branch_kind__name(VBTS_BR_MAX));
	for (unsigned int k = 1; k < VBTS_BR_MAX; k++)
		ck_assert_ptr_nonnull(branch_kind__name(k));
	ck_assert_str_eq(branch_kind__name(VBTS_BR_CALL_IND), "call-ind");
	ck_assert_str_eq(gap_reason__name(VBTS_GAP_IDT), "idt");
	ck_assert_str_eq(gap_reason__name(12345), "unknown");
	ck_assert_str_eq(freeze_reason__name(VBTS_FREEZE_TRIPLE_FAULT), "triple-fault");
	ck_assert_str_eq(freeze_reason__name(99), "unknown");
	ck_assert_str_eq(decoded_type__name(DECODED_GUEST_BTS_DROP), "guest-bts-drop");
	ck_assert_str_eq(guest_bts_drop__name(VBTS_GUEST_BTS_DROP_DS_AREA), "ds-area");
	ck_assert_str_eq(guest_bts_drop__name(VBTS_GUEST_BTS_DROP_FIELDS), "ds-fields");
	ck_assert_str_eq(guest_bts_drop__name(VBTS_GUEST_BTS_DROP_FULL), "full");
	ck_assert_str_eq(guest_bts_drop__name(VBTS_GUEST_BTS_DROP_BUFFER), "buffer");
	ck_assert_str_eq(guest_bts_drop__name(VBTS_GUEST_BTS_DROP_INDEX), "index");
	ck_assert_str_eq(guest_bts_drop__name(0), "unknown");
	ck_assert_str_eq(guest_bts_drop__name(VBTS_GUEST_BTS_DROP_MAX), "unknown");
	ck_assert_str_eq(guest_bts_drop__name(~0ULL), "unknown");
	ck_assert_str_eq(decoded_type__name(DECODED_THREAD), "thread");
	ck_assert_str_eq(decoded_type__name(DECODED_ENTRY), "entry");
	ck_assert_str_eq(entry_reason__name(VBTS_ENTRY_FIRST), "first");
	ck_assert_str_eq(entry_reason__name(VBTS_ENTRY_EXEC), "exec");
	ck_assert_str_eq(entry_reason__name(VBTS_ENTRY_SIGNAL), "signal");
	ck_assert_str_eq(entry_reason__name(VBTS_ENTRY_SIGRETURN), "sigreturn");
	ck_assert_ptr_null(entry_reason__name(0));
	ck_assert_ptr_null(entry_reason__name(VBTS_ENTRY_MAX));
	ck_assert_ptr_null(entry_reason__name(VBTS_ESC_AUX_MAX));
	ck_assert_ptr_null(entry_reason__name(~0ULL));
	for (unsigned int t = 0; t < DECODED_TYPE_MAX; t++)
		ck_assert_str_ne(decoded_type__name((enum decoded_type)t), "?");
}
END_TEST

Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_parse_table, 0,
			    (int)(sizeof(parse_cases) / sizeof(parse_cases[0])));
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- stateful decoder --------------------------------------------------------------------- */

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct decoder_source one_source(struct mem_source *m, uint32_t vcpu)
{
	struct decoder_source s = {
		.vcpu = vcpu, .first_seq = 0, .ops = &mem_source_ops, .ctx = m,
	};
	return s;
}

START_TEST(test_tasks_and_cpl)
{
	const struct vbts_record recs[] = {
		esc(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
		br(0x100, 0x200, 0, VBTS_BR_JMP),
		esc(VBTS_ESC_TASK_ARRIVE, 0x203000, 10),
		br(0x400100, 0x400200, 3, VBTS_BR_CALL),
		esc(VBTS_ESC_TASK_DEPART, 0x203000, 20),
		br(0x300, 0x400, 0, VBTS_BR_RET),
		esc(VBTS_ESC_STOP, 30, 0),
	};
	struct mem_source m = { .recs = recs, .nr = N(recs), .chunk = 2 };
	struct decoder_source src = one_source(&m, 5);
	struct decoded_record out[16];
	size_t n = decode_all(&src, 1, out, 16);

	ck_assert_uint_eq(n, 7);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(out[i].seq, i);
		ck_assert_uint_eq(out[i].vcpu, 5);
	}
	ck_assert_int_eq(out[0].type, DECODED_START);
	ck_assert_uint_eq(out[0].aux, 3);
	ck_assert_int_eq(out[1].type, DECODED_BRANCH);
	ck_assert(!out[1].cr3_valid);
	ck_assert(out[1].cpl_valid && out[1].cpl == 0);
	ck_assert_int_eq(out[2].type, DECODED_TASK_ARRIVE);
	ck_assert_uint_eq(out[2].cr3, 0x203000);
	ck_assert_uint_eq(out[2].time, 10);
	ck_assert_int_eq(out[3].type, DECODED_BRANCH);
	ck_assert(out[3].cr3_valid && out[3].cr3 == 0x203000);
	ck_assert(out[3].cpl_valid && out[3].cpl == 3);
	ck_assert_uint_eq(out[3].kind, VBTS_BR_CALL);
	ck_assert(out[3].time_valid && out[3].time == 10);
	ck_assert_int_eq(out[4].type, DECODED_TASK_DEPART);
	ck_assert_uint_eq(out[4].cr3, 0x203000);
	ck_assert_int_eq(out[5].type, DECODED_BRANCH);
	ck_assert(!out[5].cr3_valid);
	ck_assert_int_eq(out[6].type, DECODED_STOP);
	ck_assert_uint_eq(out[6].time, 30);
}
END_TEST

START_TEST(test_gaps)
{
	const struct vbts_record recs[] = {
		/* 0: orphan end (its begin was overwritten) */
		esc(VBTS_ESC_GAP_END, 0x500, 5),
		/* 1-2: a pair */
		esc(VBTS_ESC_GAP_BEGIN, 0x600, VBTS_GAP_IDT),
		esc(VBTS_ESC_GAP_END, 0x700, 6),
		/* 3-5: a pair with a task switch inside */
		esc(VBTS_ESC_GAP_BEGIN, 0x800, VBTS_GAP_SYSCALL),
		esc(VBTS_ESC_TASK_ARRIVE, 0x9000, 7),
		esc(VBTS_ESC_GAP_END, 0x900, 8),
		/* 6-7: a begin interrupted by a branch: orphan begin, then the branch */
		esc(VBTS_ESC_GAP_BEGIN, 0xa00, VBTS_GAP_MEMORY),
		br(0xb00, 0xc00, 0, 0),
		/* 8-9: two begins: the first is an orphan */
		esc(VBTS_ESC_GAP_BEGIN, 0xd00, VBTS_GAP_NOSTEP),
		esc(VBTS_ESC_GAP_BEGIN, 0xe00, VBTS_GAP_PAUSED),
		/* 10: the end of the stream leaves the second one an orphan */
	};
	struct mem_source m = { .recs = recs, .nr = N(recs) };
	struct decoder_source src = one_source(&m, 0);
	struct decoded_record o[16];
	size_t n = decode_all(&src, 1, o, 16);

	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(o[0].type, DECODED_GAP);
	ck_assert(!o[0].from_valid && o[0].to_valid && o[0].to == 0x500 && o[0].seq == 0);
	ck_assert_int_eq(o[1].type, DECODED_GAP);
	ck_assert(o[1].from_valid && o[1].from == 0x600 && o[1].to_valid && o[1].to == 0x700);
	ck_assert_uint_eq(o[1].seq, 1);
	ck_assert_uint_eq(o[1].aux, VBTS_GAP_IDT);
	ck_assert_uint_eq(o[1].time, 6);
	ck_assert_int_eq(o[2].type, DECODED_TASK_ARRIVE);
	ck_assert_int_eq(o[3].type, DECODED_GAP);
	ck_assert(o[3].from == 0x800 && o[3].to == 0x900 && o[3].aux == VBTS_GAP_SYSCALL);
	ck_assert_uint_eq(o[3].seq, 3);
	ck_assert_int_eq(o[4].type, DECODED_GAP);
	ck_assert(o[4].from_valid && o[4].from == 0xa00 && !o[4].to_valid);
	ck_assert_int_eq(o[5].type, DECODED_BRANCH);
	ck_assert_uint_eq(o[5].seq, 7);
	ck_assert_int_eq(o[6].type, DECODED_GAP);
	ck_assert(o[6].from == 0xd00 && !o[6].to_valid && o[6].seq == 8);
	ck_assert_int_eq(o[7].type, DECODED_GAP);
	ck_assert(o[7].from == 0xe00 && !o[7].to_valid && o[7].seq == 9);
	ck_assert_uint_eq(o[7].aux, VBTS_GAP_PAUSED);
}
END_TEST

START_TEST(test_gap_pending_at_end)
{
	const struct vbts_record recs[] = {
		esc(VBTS_ESC_GAP_BEGIN, 0xd00, VBTS_GAP_NOSTEP),
		esc(VBTS_ESC_GAP_BEGIN, 0xe00, VBTS_GAP_PAUSED),
	};
	struct mem_source m = { .recs = recs, .nr = N(recs) };
	struct decoder_source src = one_source(&m, 0);
	struct decoded_record o[8];
	size_t n = decode_all(&src, 1, o, 8);

	ck_assert_uint_eq(n, 2);
	ck_assert(o[0].type == DECODED_GAP && o[0].from == 0xd00 && !o[0].to_valid);
	ck_assert(o[1].type == DECODED_GAP && o[1].from == 0xe00 && !o[1].to_valid);
	ck_assert_uint_eq(o[1].aux, VBTS_GAP_PAUSED);
	ck_assert_uint_eq(o[1].seq, 1);
}
END_TEST

START_TEST(test_losses)
{
	const struct vbts_record recs[] = {
		br(0x1, 0x2, 0, 0), br(0x3, 0x4, 0, 0), br(0x5, 0x6, 0, 0),
		esc(VBTS_ESC_LOST, 42, 0),
		br(0x7, 0x8, 0, 0), br(0x9, 0xa, 0, 0),
		esc(VBTS_ESC_FREEZE, 99, VBTS_FREEZE_PANIC),
	};
	/* The stream starts at seq 100 (100 overwritten); index 1 and 2 are skipped. */
	struct mem_source m = {
		.recs = recs, .nr = N(recs), .first_seq = 100, .skip_at = 1, .skip_n = 2,
		.dropped = 3,
	};
	struct decoder_source src = one_source(&m, 1);
	struct decoded_record o[16];
	size_t n = decode_all(&src, 1, o, 16);

	ck_assert_uint_eq(n, 8);
	ck_assert(o[0].type == DECODED_LOST && o[0].count == 100 && o[0].seq == 0);
	ck_assert(o[1].type == DECODED_BRANCH && o[1].seq == 100);
	ck_assert(o[2].type == DECODED_LOST && o[2].count == 2 && o[2].seq == 101);
	ck_assert(o[3].type == DECODED_LOST && o[3].count == 42 && o[3].seq == 103);
	ck_assert(o[4].type == DECODED_BRANCH && o[4].seq == 104);
	ck_assert(o[5].type == DECODED_BRANCH && o[5].seq == 105);
	ck_assert(o[6].type == DECODED_FREEZE && o[6].aux == VBTS_FREEZE_PANIC);
	ck_assert_uint_eq(o[6].time, 99);
	ck_assert(o[7].type == DECODED_LOST && o[7].count == 3 && o[7].seq == 107);
}
END_TEST

START_TEST(test_unknown_escape)
{
	const struct vbts_record recs[] = {
		esc(0x42, 0x1234, 0x56),
		esc(VBTS_ESC_NONE, 0, 0),
	};
	struct mem_source m = { .recs = recs, .nr = N(recs) };
	struct decoder_source src = one_source(&m, 0);
	struct decoded_record o[4];
	size_t n = decode_all(&src, 1, o, 4);

	ck_assert_uint_eq(n, 2);
	ck_assert(o[0].type == DECODED_UNKNOWN && o[0].esc_kind == 0x42);
	ck_assert(o[0].payload == 0x1234 && o[0].aux == 0x56);
	ck_assert(o[1].type == DECODED_UNKNOWN && o[1].esc_kind == 0);
}
END_TEST

/*
 * Thread records: the records after one carry its pid and tgid (the fast path's branches
 * too), up to the next one; a task's arrival and a start forget it, a departure carries it
 * and forgets it after. An entry is its address and reason, whatever the reason; a gap half
 * waiting is an orphan at an entry.
 */
START_TEST(test_threads)
{
	const struct vbts_record recs[] = {
		esc(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
		esc(VBTS_ESC_THREAD, 40ULL << 32 | 40, 0x1000),         /* 1: before any task */
		esc(VBTS_ESC_TASK_ARRIVE, 0x5000, 10),                  /* 2 */
		br(0x401000, 0x401100, 3, VBTS_BR_JMP),                 /* 3: no thread yet */
		esc(VBTS_ESC_THREAD, 41ULL << 32 | 42, 0x88800a002000), /* 4 */
		br(0x401100, 0x401200, 3, VBTS_BR_CALL),                /* 5 */
		esc(VBTS_ESC_GAP_BEGIN, 0x401200, VBTS_GAP_IDT),        /* 6 */
		esc(VBTS_ESC_ENTRY, 0x402000, VBTS_ENTRY_SIGNAL),       /* 7: gap half orphaned */
		esc(VBTS_ESC_THREAD, 41ULL << 32 | 41, 0x88800a001000), /* 8: same CR3 */
		esc(VBTS_ESC_ENTRY, 0x403000, 77),                      /* 9: a reason unknown */
		br(0x403000, 0x403100, 3, VBTS_BR_JMP),                 /* 10 */
		esc(VBTS_ESC_TASK_DEPART, 0x5000, 20),                  /* 11: thread 41 leaves */
		br(0x100, 0x200, 0, VBTS_BR_JMP),                       /* 12: none */
		esc(VBTS_ESC_TASK_ARRIVE, 0x6000, 30),                  /* 13 */
		esc(VBTS_ESC_THREAD, ~0ULL, VBTS_ESC_AUX_MAX),          /* 14: numbers, whatever */
		br(0x404000, 0x404100, 3, VBTS_BR_JMP),                 /* 15 */
		esc(VBTS_ESC_START, 40, VBTS_START_CPL_USER),           /* 16: forgets it */
		br(0x404100, 0x404200, 3, VBTS_BR_JMP),                 /* 17 */
	};
	static const struct {
		enum decoded_type type;
		bool valid;
		uint32_t pid, tgid;
	} want[] = {
		{ DECODED_START }, { DECODED_THREAD, true, 40, 40 }, { DECODED_TASK_ARRIVE },
		{ DECODED_BRANCH }, { DECODED_THREAD, true, 42, 41 },
		{ DECODED_BRANCH, true, 42, 41 }, { DECODED_GAP, true, 42, 41 },
		{ DECODED_ENTRY, true, 42, 41 }, { DECODED_THREAD, true, 41, 41 },
		{ DECODED_ENTRY, true, 41, 41 }, { DECODED_BRANCH, true, 41, 41 },
		{ DECODED_TASK_DEPART, true, 41, 41 }, { DECODED_BRANCH }, { DECODED_TASK_ARRIVE },
		{ DECODED_THREAD, true, UINT32_MAX, UINT32_MAX },
		{ DECODED_BRANCH, true, UINT32_MAX, UINT32_MAX }, { DECODED_START },
		{ DECODED_BRANCH },
	};
	struct mem_source m = { .recs = recs, .nr = N(recs), .chunk = 3 };
	struct decoder_source src = one_source(&m, 2);
	struct decoded_record o[32];
	size_t n = decode_all(&src, 1, o, 32);

	ck_assert_uint_eq(n, N(want));
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(o[i].type == want[i].type, "item %zu: type %d", i, o[i].type);
		ck_assert_msg(o[i].thread_valid == want[i].valid &&
			      o[i].thread_pid == want[i].pid && o[i].thread_tgid == want[i].tgid,
			      "item %zu (seq %" PRIu64 "): thread %d %u/%u", i, o[i].seq,
			      o[i].thread_valid, o[i].thread_pid, o[i].thread_tgid);
	}
	/* The thread record keeps what it says: the ids, the task's address. */
	ck_assert_uint_eq(o[4].payload, 41ULL << 32 | 42);
	ck_assert_uint_eq(o[4].aux, 0x88800a002000ULL);
	ck_assert(o[4].cr3_valid && o[4].cr3 == 0x5000);
	/* The gap half waiting is reported before the entry, its end unknown. */
	ck_assert(o[6].from_valid && o[6].from == 0x401200 && !o[6].to_valid);
	ck_assert(o[7].to_valid && o[7].to == 0x402000 && !o[7].from_valid);
	ck_assert_uint_eq(o[7].aux, VBTS_ENTRY_SIGNAL);
	ck_assert_uint_eq(o[7].seq, 7);
	ck_assert(o[9].to == 0x403000 && o[9].aux == 77);
	ck_assert(o[11].cr3_valid && o[11].cr3 == 0x5000);
	ck_assert_uint_eq(o[14].aux, VBTS_ESC_AUX_MAX);
}
END_TEST

/* A guest-bts-drop escape: the dropped branch's address and the reason, in the task's CR3. */
START_TEST(test_guest_bts_drop)
{
	const struct vbts_record recs[] = {
		esc(VBTS_ESC_TASK_ARRIVE, 0x5000, 10),
		esc(VBTS_ESC_GUEST_BTS_DROP, 0x401234, VBTS_GUEST_BTS_DROP_FULL),
	};
	struct mem_source m = { .recs = recs, .nr = N(recs) };
	struct decoder_source src = one_source(&m, 0);
	struct decoded_record o[4];
	size_t n = decode_all(&src, 1, o, 4);

	ck_assert_uint_eq(n, 2);
	ck_assert(o[1].type == DECODED_GUEST_BTS_DROP);
	ck_assert(o[1].from_valid && o[1].from == 0x401234 && !o[1].to_valid);
	ck_assert_uint_eq(o[1].aux, VBTS_GUEST_BTS_DROP_FULL);
	ck_assert(o[1].cr3_valid && o[1].cr3 == 0x5000);
}
END_TEST

/*
 * Two vCPUs: runs start at timestamped escapes and are merged by their start time; the
 * untimestamped head of a stream comes first.
 */
START_TEST(test_merge)
{
	const struct vbts_record v0[] = {
		br(0xa0, 0xa1, 0, 0),                      /* head, time unknown */
		esc(VBTS_ESC_TIME, 10, 0), br(0xa2, 0xa3, 0, 0),
		esc(VBTS_ESC_TIME, 30, 0), br(0xa4, 0xa5, 0, 0),
		esc(VBTS_ESC_TIME, 50, 0),
	};
	const struct vbts_record v1[] = {
		esc(VBTS_ESC_TASK_ARRIVE, 0x1000, 20), br(0xb0, 0xb1, 3, 0), br(0xb2, 0xb3, 3, 0),
		esc(VBTS_ESC_TIME, 30, 0),                 /* tie with vCPU 0: vCPU 0 first */
		br(0xb4, 0xb5, 3, 0),
		esc(VBTS_ESC_GAP_BEGIN, 0xb6, 1), esc(VBTS_ESC_GAP_END, 0xb7, 40),
		br(0xb8, 0xb9, 3, 0),
	};
	struct mem_source m0 = { .recs = v0, .nr = N(v0), .chunk = 1 };
	struct mem_source m1 = { .recs = v1, .nr = N(v1), .chunk = 3 };
	struct decoder_source src[2] = { one_source(&m1, 1), one_source(&m0, 0) };
	struct decoded_record o[32];
	static const struct {
		uint32_t vcpu;
		uint64_t seq;
	} want[] = {
		{ 0, 0 }, { 0, 1 }, { 0, 2 },           /* head (time unknown), t=10 */
		{ 1, 0 }, { 1, 1 }, { 1, 2 },           /* t=20 */
		{ 0, 3 }, { 0, 4 },                     /* t=30, vCPU 0 */
		{ 1, 3 }, { 1, 4 },                     /* t=30, vCPU 1 (gap begin pending) */
		{ 1, 5 }, { 1, 7 },                     /* t=40: the gap, then its branch */
		{ 0, 5 },                               /* t=50 */
	};
	size_t n = decode_all(src, 2, o, 32);

	ck_assert_uint_eq(n, N(want));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(o[i].vcpu == want[i].vcpu && o[i].seq == want[i].seq,
			      "item %zu: vcpu%u seq %llu, want vcpu%u seq %llu", i, o[i].vcpu,
			      (unsigned long long)o[i].seq, want[i].vcpu,
			      (unsigned long long)want[i].seq);
	ck_assert_int_eq(o[10].type, DECODED_GAP);
	ck_assert(o[11].cr3_valid && o[11].cr3 == 0x1000 && o[11].time == 40);
	/* Branches inherit the time of their run. */
	ck_assert(o[7].time_valid && o[7].time == 30);
	ck_assert(!o[0].time_valid);
}
END_TEST

START_TEST(test_merge_many)
{
	/* 8 vCPUs, times interleaved: the output times never go backwards. */
	struct vbts_record recs[8][40];
	struct mem_source m[8];
	struct decoder_source src[8];
	static struct decoded_record o[8 * 40];
	uint64_t last = 0;
	size_t n;

	for (unsigned int v = 0; v < 8; v++) {
		for (unsigned int i = 0; i < 20; i++) {
			recs[v][2 * i] = esc(VBTS_ESC_TIME, (uint64_t)i * 100 + (v * 37) % 100, 0);
			recs[v][2 * i + 1] = br(v, i, 0, 0);
		}
		m[v] = (struct mem_source){ .recs = recs[v], .nr = 40, .chunk = 1 + v };
		src[v] = one_source(&m[v], v);
	}
	n = decode_all(src, 8, o, 8 * 40);
	ck_assert_uint_eq(n, 8 * 40);
	for (size_t i = 0; i < n; i++) {
		ck_assert(o[i].time_valid);
		ck_assert_uint_ge(o[i].time, last);
		last = o[i].time;
	}
}
END_TEST

/*
 * Random streams (random flags, escape kinds, payloads, times, chunking, skipped ranges):
 * the decoder terminates, every branch comes out once, and lost counts add up.
 */
#define RND_VCPUS 3
#define RND_RECORDS 2000

START_TEST(test_random_streams)
{
	static struct vbts_record recs[RND_VCPUS][RND_RECORDS];
	static struct decoded_record out[RND_VCPUS * RND_RECORDS * 2 + 16];
	struct mem_source m[RND_VCPUS];
	struct decoder_source src[RND_VCPUS];
	unsigned int seed = 1234 + (unsigned int)_i;
	uint64_t want_branches = 0, want_lost = 0, branches = 0, lost = 0;
	size_t n;

	for (unsigned int v = 0; v < RND_VCPUS; v++) {
		m[v] = (struct mem_source){
			.recs = recs[v], .nr = RND_RECORDS, .chunk = 1 + rand_r(&seed) % 50,
			.skip_at = (size_t)(rand_r(&seed) % RND_RECORDS),
			.skip_n = (size_t)(rand_r(&seed) % 100), .dropped = rand_r(&seed) % 3,
			.first_seq = rand_r(&seed) % 5,
		};
		if (m[v].skip_at + m[v].skip_n > RND_RECORDS)
			m[v].skip_n = RND_RECORDS - m[v].skip_at;
		want_lost += m[v].first_seq + m[v].skip_n + m[v].dropped;
		for (size_t i = 0; i < RND_RECORDS; i++) {
			struct vbts_record *r = &recs[v][i];
			bool skipped = i >= m[v].skip_at && i < m[v].skip_at + m[v].skip_n;

			if (rand_r(&seed) % 2) {
				r->from = (uint64_t)rand_r(&seed) << 20 | (uint64_t)rand_r(&seed);
				r->to = (uint64_t)rand_r(&seed);
				r->flags = (uint64_t)rand_r(&seed) << 32 | (uint64_t)rand_r(&seed);
				if (r->from == VBTS_ESCAPE)
					r->from = 0;
				if (!skipped)
					want_branches++;
				continue;
			}
			*r = esc((unsigned int)rand_r(&seed) % (VBTS_ESC_MAX + 1),
				 (uint64_t)rand_r(&seed) % 1000, (uint64_t)rand_r(&seed) % 1000);
			if (vbts_record__escape_kind(r) == VBTS_ESC_LOST && !skipped)
				want_lost += r->to;
		}
		src[v] = one_source(&m[v], v);
	}
	n = decode_all(src, RND_VCPUS, out, sizeof(out) / sizeof(out[0]));
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_lt(out[i].vcpu, RND_VCPUS);
		if (out[i].type == DECODED_BRANCH)
			branches++;
		else if (out[i].type == DECODED_LOST)
			lost += out[i].count;
	}
	ck_assert_uint_eq(branches, want_branches);
	ck_assert_uint_eq(lost, want_lost);
}
END_TEST

/* Every member the decoder sets, compared one by one (not the padding). */
static bool same_item(const struct decoded_record *a, const struct decoded_record *b)
{
	return a->seq == b->seq && a->from == b->from && a->to == b->to && a->cr3 == b->cr3 &&
	       a->time == b->time && a->count == b->count && a->aux == b->aux &&
	       a->payload == b->payload && a->type == b->type && a->vcpu == b->vcpu &&
	       a->cpl == b->cpl && a->kind == b->kind && a->vector == b->vector &&
	       a->esc_kind == b->esc_kind && a->from_valid == b->from_valid &&
	       a->to_valid == b->to_valid && a->cpl_valid == b->cpl_valid &&
	       a->vector_valid == b->vector_valid && a->cr3_valid == b->cr3_valid &&
	       a->time_valid == b->time_valid && a->thread_pid == b->thread_pid &&
	       a->thread_tgid == b->thread_tgid && a->thread_valid == b->thread_valid;
}

/* The items of @src decoded by the fast path or the reference path (decoder-int.h). */
static size_t decode_path(struct mem_source *m, const struct decoder_source *src, size_t n,
			  bool reference, struct decoded_record *out, size_t max)
{
	struct decoder *d;
	struct decoded_record r;
	size_t count = 0;
	int ret;

	for (size_t v = 0; v < n; v++)
		m[v].pos = 0;
	d = decoder__new(src, n);
	ck_assert_ptr_nonnull(d);
	decoder__use_reference(d, reference);
	while ((ret = decoder__next(d, &r)) > 0) {
		ck_assert_uint_lt(count, max);
		out[count++] = r;
	}
	ck_assert_int_eq(ret, 0);
	decoder__free(d);
	return count;
}

/*
 * The fast path for branch records gives exactly the items of the general path: random
 * streams of branches with random flags among tasks, times, gap halves and losses.
 */
START_TEST(test_fast_path_reference)
{
	static struct vbts_record recs[RND_VCPUS][RND_RECORDS];
	static struct decoded_record fast[RND_VCPUS * RND_RECORDS * 2 + 16];
	static struct decoded_record ref[RND_VCPUS * RND_RECORDS * 2 + 16];
	const size_t max = sizeof(fast) / sizeof(fast[0]);
	struct mem_source m[RND_VCPUS];
	struct decoder_source src[RND_VCPUS];
	unsigned int seed = 99 + (unsigned int)_i;
	size_t nf, nr, branches = 0;

	for (unsigned int v = 0; v < RND_VCPUS; v++) {
		m[v] = (struct mem_source){
			.recs = recs[v], .nr = RND_RECORDS, .chunk = 1 + rand_r(&seed) % 50,
			.skip_at = (size_t)(rand_r(&seed) % RND_RECORDS),
			.skip_n = (size_t)(rand_r(&seed) % 100), .dropped = rand_r(&seed) % 3,
		};
		if (m[v].skip_at + m[v].skip_n > RND_RECORDS)
			m[v].skip_n = RND_RECORDS - m[v].skip_at;
		for (size_t i = 0; i < RND_RECORDS; i++) {
			struct vbts_record *r = &recs[v][i];

			if (rand_r(&seed) % 4) {
				r->from = (uint64_t)rand_r(&seed) << 20 | (uint64_t)rand_r(&seed);
				r->to = (uint64_t)rand_r(&seed);
				r->flags = (uint64_t)rand_r(&seed) << 32 | (uint64_t)rand_r(&seed);
				continue;
			}
			/* Thread records with random ids: the fast path carries them too. */
			*r = esc((unsigned int)rand_r(&seed) % VBTS_ESC_MAX,
				 (uint64_t)rand_r(&seed) << 32 | (uint64_t)rand_r(&seed),
				 (uint64_t)rand_r(&seed) % 1000);
		}
		src[v] = one_source(&m[v], v);
	}
	nf = decode_path(m, src, RND_VCPUS, false, fast, max);
	nr = decode_path(m, src, RND_VCPUS, true, ref, max);
	ck_assert_uint_eq(nf, nr);
	for (size_t i = 0; i < nf; i++) {
		if (!same_item(&fast[i], &ref[i]))
			ck_abort_msg("item %zu (type %d, seq %" PRIu64 ") differs", i, ref[i].type,
				     ref[i].seq);
		branches += ref[i].type == DECODED_BRANCH;
	}
	ck_assert_uint_gt(branches, RND_RECORDS);
}
END_TEST

START_TEST(test_bad_args)
{
	struct decoder_source src = { .vcpu = 0 };

	ck_assert_ptr_null(decoder__new(NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(decoder__new(&src, 1));
	ck_assert_int_eq(errno, EINVAL);
	decoder__free(NULL);
}
END_TEST

static ssize_t failing_read(void *ctx, struct vbts_record *buf, size_t max, uint64_t *first)
{
	return -EIO;
}

START_TEST(test_source_error)
{
	static const struct decoder_source_ops ops = { .read = failing_read };
	struct decoder_source src = { .vcpu = 0, .ops = &ops };
	struct decoder *d = decoder__new(&src, 1);
	struct decoded_record r;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(decoder__next(d, &r), -EIO);
	ck_assert_int_eq(decoder__next(d, &r), -EIO);
	decoder__free(d);
}
END_TEST

Suite *decoder_suite(void)
{
	Suite *s = suite_create("decoder");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_tasks_and_cpl);
	tcase_add_test(tc, test_gaps);
	tcase_add_test(tc, test_gap_pending_at_end);
	tcase_add_test(tc, test_losses);
	tcase_add_test(tc, test_unknown_escape);
	tcase_add_test(tc, test_guest_bts_drop);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_merge_many);
	tcase_add_loop_test(tc, test_random_streams, 0, 20);
	tcase_add_loop_test(tc, test_fast_path_reference, 0, 20);
	tcase_add_test(tc, test_bad_args);
	tcase_add_test(tc, test_source_error);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(parse_suite, decoder_suite, procmap_suite, linux_procmap_suite, symbols_suite,
		system_map_suite,
		golden_suite,
		inputs_suite, scale_suite, linux_decode_suite, out_buf_suite,
		progress_suite, diff_suite, crash_suite, plt_suite, threads_suite)
