// SPDX-License-Identifier: GPL-2.0
/*
 * qemu-log.c - turns QEMU's in_asm + exec log into the list of taken branches.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-log.h"

#define INSN_MAX 15 /* longest x86 instruction */

/* What a translation block ends with: its last instruction and the fall-through address. */
struct tb_info {
	uint64_t pc;   /* key: first instruction */
	uint64_t last; /* last instruction */
	uint64_t end;  /* last + its length */
	int rep;       /* the last instruction is a REP/REPNE string instruction */
	int used;
};

struct step {
	uint64_t pc;
	int cpl;
	int valid;
	struct tb_info tb;
};

struct qemu_log {
	uint64_t entry;
	qemu_log_branch_fn fn;
	void *ctx;

	struct tb_info *tbs; /* open addressing on pc, capacity a power of two */
	size_t tb_cap;
	size_t tb_count;

	/* The block being read from in_asm. */
	struct tb_info cur_tb;
	uint64_t cur_insn;         /* address of its last instruction */
	uint8_t insn[INSN_MAX];    /* bytes of that instruction */
	size_t insn_len;

	struct step prev; /* last confirmed step after the entry */
	struct step cur;  /* last Trace line, not yet confirmed */
	int started;

	uint64_t steps;
	uint64_t branches;
	uint64_t unknown;
};

struct qemu_log *qemu_log__new(uint64_t entry, qemu_log_branch_fn fn, void *ctx)
{
	struct qemu_log *log = calloc(1, sizeof(*log));

	if (!log)
		return NULL;
	log->tb_cap = 4096;
	log->tbs = calloc(log->tb_cap, sizeof(*log->tbs));
	if (!log->tbs)
		goto err_free_log;
	log->entry = entry;
	log->fn = fn;
	log->ctx = ctx;
	return log;

err_free_log:
	free(log);
	errno = ENOMEM;
	return NULL;
}

void qemu_log__delete(struct qemu_log *log)
{
	if (!log)
		return;
	free(log->tbs);
	free(log);
}

static size_t hash_pc(uint64_t pc, size_t cap)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

static struct tb_info *find_slot(struct tb_info *tbs, size_t cap, uint64_t pc)
{
	size_t i = hash_pc(pc, cap);

	while (tbs[i].used && tbs[i].pc != pc)
		i = (i + 1) & (cap - 1);
	return &tbs[i];
}

static int grow_table(struct qemu_log *log)
{
	size_t cap = log->tb_cap * 2, i;
	struct tb_info *tbs = calloc(cap, sizeof(*tbs));

	if (!tbs)
		return -ENOMEM;
	for (i = 0; i < log->tb_cap; i++)
		if (log->tbs[i].used)
			*find_slot(tbs, cap, log->tbs[i].pc) = log->tbs[i];
	free(log->tbs);
	log->tbs = tbs;
	log->tb_cap = cap;
	return 0;
}

static const struct tb_info *lookup_tb(const struct qemu_log *log, uint64_t pc)
{
	const struct tb_info *t = find_slot(log->tbs, log->tb_cap, pc);

	return t->used ? t : NULL;
}

/* REP/REPNE prefix on a string instruction (INS, OUTS, MOVS, CMPS, STOS, LODS, SCAS). */
static int is_rep_string(const uint8_t *b, size_t len)
{
	int rep = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		switch (b[i]) {
		case 0xf2:
		case 0xf3:
			rep = 1;
			continue;
		case 0x66: /* operand size */
		case 0x67: /* address size */
		case 0x26: /* segment overrides */
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0x64:
		case 0x65:
		case 0xf0: /* lock */
			continue;
		}
		if (b[i] >= 0x40 && b[i] <= 0x4f && i + 1 < len) /* REX */
			continue;
		break;
	}
	if (!rep || i >= len)
		return 0;
	return (b[i] >= 0x6c && b[i] <= 0x6f) || (b[i] >= 0xa4 && b[i] <= 0xa7) ||
	       (b[i] >= 0xaa && b[i] <= 0xaf);
}

/* Store the block read so far (called at the first line that is not one of its insns). */
static int commit_tb(struct qemu_log *log)
{
	struct tb_info *slot;
	int err;

	if (!log->cur_tb.used)
		return 0;
	log->cur_tb.last = log->cur_insn;
	log->cur_tb.end = log->cur_insn + log->insn_len;
	log->cur_tb.rep = is_rep_string(log->insn, log->insn_len);
	if ((log->tb_count + 1) * 2 > log->tb_cap) {
		err = grow_table(log);
		if (err)
			return err;
	}
	slot = find_slot(log->tbs, log->tb_cap, log->cur_tb.pc);
	if (!slot->used)
		log->tb_count++;
	*slot = log->cur_tb;
	log->cur_tb.used = 0;
	return 0;
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * "0x0010000c:  0f 01 15 38 40 10 00     lgdtl    0x104038" or a continuation
 * "0x00100014:  aa bb" (bytes beyond the first 8, no mnemonic).
 */
static int parse_insn(struct qemu_log *log, const char *line)
{
	uint8_t bytes[64];
	size_t n = 0;
	int mnemonic = 0;
	uint64_t addr;
	char *end;
	const char *p;

	addr = strtoull(line + 2, &end, 16);
	if (*end != ':')
		return 1;
	p = end + 1;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n' || *p == '\r')
			break;
		if (hex_digit(p[0]) >= 0 && hex_digit(p[1]) >= 0 &&
		    (p[2] == ' ' || p[2] == '\0' || p[2] == '\n' || p[2] == '\r') && !mnemonic) {
			if (n < sizeof(bytes))
				bytes[n++] = (uint8_t)(hex_digit(p[0]) << 4 | hex_digit(p[1]));
			p += 2;
			continue;
		}
		mnemonic = 1;
		break;
	}
	if (!n)
		return 1;
	if (!mnemonic && log->cur_tb.used && addr == log->cur_insn + log->insn_len) {
		/* continuation of a long encoding */
		if (log->insn_len + n > INSN_MAX)
			return 1;
		memcpy(log->insn + log->insn_len, bytes, n);
		log->insn_len += n;
		return 0;
	}
	if (n > INSN_MAX)
		return 1;
	if (!log->cur_tb.used) {
		log->cur_tb.used = 1;
		log->cur_tb.pc = addr;
	}
	log->cur_insn = addr;
	memcpy(log->insn, bytes, n);
	log->insn_len = n;
	return 0;
}

/* The pending step did execute: report the branch into it, if any. */
static int confirm_step(struct qemu_log *log)
{
	struct oracle_branch b;
	struct step *c = &log->cur;
	int err = 0;

	if (!c->valid)
		return 0;
	c->valid = 0;
	if (!log->started) {
		if (c->pc != log->entry)
			return 0;
		log->started = 1;
	} else if (log->prev.valid) {
		const struct tb_info *t = &log->prev.tb;

		if (c->pc != t->end && !(t->rep && c->pc == t->last)) {
			b.from = t->last;
			b.to = c->pc;
			b.cpl = log->prev.cpl;
			log->branches++;
			err = log->fn(log->ctx, &b);
		}
	}
	log->prev = *c;
	log->prev.valid = 1;
	log->steps++;
	return err;
}

/* "Trace 0: 0x7f8c7c2cd380 [0000000000000000/000000000010000c/000000b0/ff000201] _start" */
static int parse_trace(struct qemu_log *log, const char *line)
{
	const struct tb_info *t;
	uint64_t pc, flags;
	const char *p = strchr(line, '[');
	char *end;
	int err;

	if (!p)
		return 1;
	strtoull(p + 1, &end, 16);
	if (*end != '/')
		return 1;
	pc = strtoull(end + 1, &end, 16);
	if (*end != '/')
		return 1;
	flags = strtoull(end + 1, &end, 16);
	if (*end != '/')
		return 1;
	err = confirm_step(log);
	if (err)
		return err;
	t = lookup_tb(log, pc);
	if (!t && (log->started || pc == log->entry))
		return -EPROTO;
	log->cur.pc = pc;
	log->cur.cpl = (int)(flags & 3);
	log->cur.valid = 1;
	if (t)
		log->cur.tb = *t;
	return 0;
}

/* "Stopped execution of TB chain before 0x7f8c7c086700 [00000000000ea65f] " */
static int parse_stopped(struct qemu_log *log, const char *line)
{
	const char *p = strchr(line, '[');
	uint64_t pc;
	char *end;

	if (!p)
		return 1;
	pc = strtoull(p + 1, &end, 16);
	if (*end != ']')
		return 1;
	if (log->cur.valid && log->cur.pc == pc)
		log->cur.valid = 0;
	return 0;
}

int qemu_log__feed(struct qemu_log *log, const char *line)
{
	int err = 0;

	if (line[0] == '0' && line[1] == 'x')
		err = parse_insn(log, line);
	else {
		err = commit_tb(log);
		if (err)
			return err;
		if (!strncmp(line, "Trace ", 6))
			err = parse_trace(log, line);
		else if (!strncmp(line, "Stopped execution of TB chain", 29))
			err = parse_stopped(log, line);
		else if (!strncmp(line, "IN:", 3) || !strncmp(line, "----", 4) || line[0] == '\n' ||
			 line[0] == '\0')
			err = 0;
		else
			err = 1;
	}
	if (err == 1) {
		log->unknown++;
		err = 0;
	}
	return err;
}

int qemu_log__finish(struct qemu_log *log)
{
	int err = commit_tb(log);

	if (err)
		return err;
	err = confirm_step(log);
	if (err)
		return err;
	return log->started ? 0 : -ENOENT;
}

int qemu_log__parse_file(struct qemu_log *log, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	while (getline(&line, &cap, f) >= 0) {
		err = qemu_log__feed(log, line);
		if (err)
			goto out_free;
	}
	if (ferror(f)) {
		err = -EIO;
		goto out_free;
	}
	err = qemu_log__finish(log);
out_free:
	free(line);
	return err;
}

uint64_t qemu_log__steps(const struct qemu_log *log)
{
	return log->steps;
}

uint64_t qemu_log__branches(const struct qemu_log *log)
{
	return log->branches;
}

uint64_t qemu_log__unknown_lines(const struct qemu_log *log)
{
	return log->unknown;
}
