// SPDX-License-Identifier: GPL-2.0
/*
 * make-corpus.c - writes the seed corpus of the fuzz targets: make-corpus OUTDIR fills
 * OUTDIR/{ring,segment,trace-dir,agent,multiboot}/ with valid and edge-case inputs. Ring files come
 * from the ring writer; the invalid ones are valid ones with one header field changed.
 * tests/fuzz/run make-corpus runs it (and adds the test guests' images to multiboot/); the
 * output is committed as tests/fuzz/corpus/.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vbts/agent-proto.h>

#include "fuzz-seal.h"
#include "ring-writer.h"
#include "seal-key.h"
#include "seal-verify.h"
#include "sealer.h"
#include "seg-writer.h"

static const char *outdir;
static char tmpdir[PATH_MAX];

static void die(const char *what)
{
	fprintf(stderr, "make-corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *target, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		die(path);
}

static void put_str(const char *target, const char *name, const char *s)
{
	put(target, name, s, strlen(s));
}

/* ---- ring files ------------------------------------------------------------------------- */

#define BR(from, to, cpl, kind)                                                              \
	{ (from), (to), ((uint64_t)(cpl) << VBTS_REC_CPL_SHIFT) | VBTS_REC_CPL_VALID |     \
				((uint64_t)(kind) << VBTS_REC_KIND_SHIFT) }
#define BRV(from, to, cpl, kind, vector)                                                     \
	{ (from), (to), ((uint64_t)(cpl) << VBTS_REC_CPL_SHIFT) | VBTS_REC_CPL_VALID |     \
				((uint64_t)(kind) << VBTS_REC_KIND_SHIFT) |                  \
				((uint64_t)(vector) << VBTS_REC_VECTOR_SHIFT) | VBTS_REC_VECTOR_VALID }
#define ESC(kind, payload, aux) { VBTS_ESCAPE, (payload), ((uint64_t)(aux) << 8) | (kind) }

/* Every record kind: two tasks, a system call with its gap, a fault, a loss, a freeze. */
static const struct vbts_record full_run[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x203000, 100),
	BR(0x401013, 0x401040, 3, VBTS_BR_CALL),
	BR(0x401045, 0x401050, 3, VBTS_BR_JCC),
	BR(0x40106f, 0x401070, 3, VBTS_BR_CALL_IND),
	BR(0x40107a, 0x401018, 3, VBTS_BR_RET),
	BR(0x401020, 0xffffffff81000090, 3, VBTS_BR_SYSCALL),
	ESC(VBTS_ESC_GAP_BEGIN, 0xffffffff81000090, VBTS_GAP_SYSCALL),
	ESC(VBTS_ESC_GAP_END, 0xffffffff810000b0, 200),
	BR(0xffffffff810000b8, 0x401024, 0, VBTS_BR_SYSRET),
	ESC(VBTS_ESC_TIME, 250, 0),
	ESC(VBTS_ESC_TASK_DEPART, 0x203000, 300),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x204000, 310),
	BR(0x401030, 0x401044, 3, VBTS_BR_CALL),
	BRV(0x401075, 0xffffffff81000100, 3, VBTS_BR_EXCEPTION, 14),
	ESC(VBTS_ESC_GAP_BEGIN, 0xffffffff81000100, VBTS_GAP_IDT),
	ESC(VBTS_ESC_LOST, 5, 0),
	BRV(0xffffffff81000200, 0xffffffff81000300, 0, VBTS_BR_INTERRUPT, 32),
	BR(0xffffffff81000310, 0x401080, 0, VBTS_BR_IRET),
	ESC(0x33, 0x1, 0x2),                            /* a kind from a newer writer */
	{ 0x1000, 0x2000, 0 },                          /* no annotations */
	ESC(VBTS_ESC_FREEZE, 400, VBTS_FREEZE_PANIC),
	ESC(VBTS_ESC_STOP, 410, 0),
};

/* A kernel-only vCPU whose gap begin was overwritten. */
static const struct vbts_record kernel_run[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TIME, 50, 0),
	BR(0x1, 0x2, 0, VBTS_BR_JMP),
	ESC(VBTS_ESC_TIME, 150, 0),
	BR(0x3, 0x4, 0, VBTS_BR_JMP),
	ESC(VBTS_ESC_GAP_END, 0x5, 250),
	BR(0xa0, 0xb0, 0, VBTS_BR_JMP_IND),
};

enum ring_end { RING_CLOSED, RING_LIVE, RING_FROZEN };

/*
 * A ring of @capacity slots holding @recs, as the writer leaves it: closed, still open (a
 * snapshot while the writer runs) or frozen with @refused appends refused. Returns its bytes.
 */
static uint8_t *make_ring(uint32_t vcpu, uint64_t capacity, const struct vbts_record *recs,
			  size_t n, enum ring_end end, unsigned int refused, size_t *len)
{
	struct ring_writer_config cfg = {
		.capacity = capacity,
		.mode = VBTS_RING_WRAP,
		.vcpu_id = vcpu,
		.vm_id = 0xab,
		.start_time_ns = 1700000000000000000ULL,
	};
	char path[PATH_MAX];
	struct ring_writer *w;
	struct stat st;
	uint8_t *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ring", tmpdir);
	w = ring_writer__create(path, &cfg);
	if (!w)
		die("ring_writer__create");
	for (size_t i = 0; i < n; i++)
		ring_writer__append(w, &recs[i]);
	if (end == RING_FROZEN) {
		ring_writer__freeze(w);
		for (unsigned int i = 0; i < refused; i++)
			ring_writer__append(w, &recs[0]);
	}
	/* A live ring is read while the writer still has it. */
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st))
		die(path);
	buf = malloc((size_t)st.st_size);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		die(path);
	fclose(f);
	if (ring_writer__close(w))
		die("ring_writer__close");
	if (end != RING_LIVE) {
		f = fopen(path, "rb");
		if (!f || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
			die(path);
		fclose(f);
	}
	unlink(path);
	*len = (size_t)st.st_size;
	return buf;
}

#define NREC(a) (sizeof(a) / sizeof((a)[0]))

static struct vbts_ring_header *hdr(uint8_t *ring)
{
	return (struct vbts_ring_header *)ring;
}

/* ---- stream segments ------------------------------------------------------------------- */

/* The file at @path with @tag before its bytes, as fuzz-segment takes it. */
static void put_segment(const char *name, char tag, const char *path)
{
	static uint8_t buf[1 << 16];
	size_t len;
	FILE *f = fopen(path, "rb");

	if (!f)
		die(path);
	buf[0] = (uint8_t)tag;
	len = fread(buf + 1, 1, sizeof(buf) - 1, f);
	fclose(f);
	put("segment", name, buf, len + 1);
}

static void segment_seeds(void)
{
	struct seg_budget budget = { .limit = 1 << 30 };
	struct seg_writer_config cfg = {
		.dir = tmpdir, .vm_id = 0xab, .segment_records = 8, .budget = &budget,
		.on_full = SEG_ON_FULL_DROP,
	};
	size_t n = sizeof(full_run) / sizeof(full_run[0]);
	char path[PATH_MAX + 32];
	struct seg_writer *w = seg_writer__create(&cfg);

	if (!w)
		die("seg_writer__create");
	seg_writer__append(w, full_run, n);
	/* a closed, compressed segment; the live open one; both read while the writer runs */
	snprintf(path, sizeof(path), "%s/vcpu0.00000000.vseg", tmpdir);
	put_segment("closed-0.seg", 0, path);
	snprintf(path, sizeof(path), "%s/vcpu0.open.vseg", tmpdir);
	put_segment("open-live.seg", 1, path);
	if (seg_writer__close(w))
		die("seg_writer__close");
	for (unsigned int i = 0;; i++) {
		char name[32];

		snprintf(path, sizeof(path), "%s/vcpu0.%08u.vseg", tmpdir, i);
		if (access(path, F_OK))
			break;
		snprintf(name, sizeof(name), "closed-%u-%c.seg", i, 'a' + (char)(i % 26));
		if (i)
			put_segment(name, 0, path);
		unlink(path);
	}
}

static void ring_seeds(void)
{
	struct vbts_record many[40];
	uint8_t *r, *bad;
	size_t len;

	for (size_t i = 0; i < NREC(many); i++) {
		struct vbts_record b = BR(0x1000 + 16 * i, 0x2000 + 16 * i, i & 3, 1 + i % 18);

		many[i] = i % 10 ? b : (struct vbts_record)ESC(VBTS_ESC_TIME, 10 * i, 0);
	}

	r = make_ring(0, 4, NULL, 0, RING_CLOSED, 0, &len);
	put("ring", "empty.ring", r, len);
	free(r);
	r = make_ring(0, 1, kernel_run, NREC(kernel_run), RING_CLOSED, 0, &len);
	put("ring", "capacity1.ring", r, len);
	free(r);
	r = make_ring(1, 4, kernel_run, NREC(kernel_run), RING_FROZEN, 2, &len);
	put("ring", "frozen-wrapped.ring", r, len);
	free(r);
	r = make_ring(0, 8, many, NREC(many), RING_LIVE, 0, &len);
	put("ring", "live-full.ring", r, len);
	free(r);
	r = make_ring(0, 8, many, 5, RING_LIVE, 0, &len);
	put("ring", "live-partial.ring", r, len);
	free(r);
	r = make_ring(2, 16, many, NREC(many), RING_CLOSED, 0, &len);
	put("ring", "wrapped.ring", r, len);
	free(r);

	/* Every record kind; then the same file with one field wrong at a time. */
	r = make_ring(0, 32, full_run, NREC(full_run), RING_CLOSED, 0, &len);
	put("ring", "all-kinds.ring", r, len);
	bad = malloc(len + 24);
	if (!bad)
		die("malloc");
#define BAD(name, change)                                                                    \
	do {                                                                                 \
		memcpy(bad, r, len);                                                         \
		change;                                                                      \
		put("ring", name, bad, len);                                                 \
	} while (0)
	BAD("stream-mode.ring", hdr(bad)->mode = VBTS_RING_STREAM);
	BAD("bad-magic.ring", hdr(bad)->magic ^= 1);
	BAD("bad-version.ring", hdr(bad)->version = 2);
	BAD("bad-header-size.ring", hdr(bad)->header_size = 64);
	BAD("bad-record-size.ring", hdr(bad)->record_size = 32);
	BAD("bad-mode.ring", hdr(bad)->mode = 7);
	BAD("bad-flags.ring", hdr(bad)->flags |= 0x80);
	BAD("capacity0.ring", hdr(bad)->capacity = 0);
	BAD("capacity-huge.ring", hdr(bad)->capacity = UINT64_MAX / 8);
	BAD("capacity-short.ring", hdr(bad)->capacity = 31);
	BAD("lost-too-small.ring", (hdr(bad)->committed = 1000, hdr(bad)->lost = 3));
	BAD("committed-huge.ring", (hdr(bad)->committed = UINT64_MAX,
				    hdr(bad)->lost = UINT64_MAX));
	put("ring", "truncated-header.ring", r, 100);
	put("ring", "truncated-slots.ring", r, len - 5);
	memcpy(bad, r, len);
	memset(bad + len, 0, 24);
	put("ring", "trailing-slot.ring", bad, len + 24);
#undef BAD
	free(bad);
	free(r);
}

/* ---- trace directories ------------------------------------------------------------------ */

static const char vm_json[] =
	"{\"version\":1,\"vm_id\":\"00000000000000ab\",\"image\":\"guest.elf\","
	"\"build_id\":\"0011\",\"vcpus\":2,\"memory_mib\":16,\"backend\":\"step\","
	"\"cpl\":\"all\",\"ring_records\":64,\"start_time_ns\":1700000000000000000}\n";

static const char events[] =
	"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
	"\"cr3\":\"0x203000\"}\n"
	"{\"time\":95,\"vcpu\":0,\"event\":\"task\",\"pid\":2,\"name\":\"crash\","
	"\"cr3\":\"0x204000\"}\n"
	"garbage line\n"
	"{\"time\":420,\"vcpu\":0,\"event\":\"exit\",\"pid\":2,\"code\":139}\n"
	"{\"time\":430,\"vcpu\":0,\"event\":\"exit\",\"pid\":1,\"code\":0}\n";

/* A line longer than the decoder reads from events.jsonl (4096 bytes). */
#define EVENTS_LINE_LONG 4200

/* A trace-dir input: vm.json, "\n#events\n" events, "\n#ring\n" rings (see fuzz-trace-dir.c). */
static void put_trace(const char *name, const char *vm, const char *ev, uint8_t *const *rings,
		      const size_t *lens, unsigned int nr)
{
	size_t cap = strlen(vm) + (ev ? strlen(ev) : 0) + 64, len = 0;
	uint8_t *buf;

	for (unsigned int i = 0; i < nr; i++)
		cap += lens[i] + 8;
	buf = malloc(cap);
	if (!buf)
		die("malloc");
#define ADD(p, n) (memcpy(buf + len, (p), (n)), len += (n))
	ADD(vm, strlen(vm));
	if (ev) {
		ADD("\n#events\n", 9);
		ADD(ev, strlen(ev));
	}
	for (unsigned int i = 0; i < nr; i++) {
		ADD("\n#ring\n", 7);
		ADD(rings[i], lens[i]);
	}
#undef ADD
	put("trace-dir", name, buf, len);
	free(buf);
}

static void trace_seeds(void)
{
	uint8_t *rings[2];
	size_t lens[2];
	static const char long_head[] = "{\"time\":1,\"event\":\"task\",\"pid\":1,\"name\":\"";
	static const char long_tail[] = "\",\"cr3\":\"0x203000\"}\n";
	char long_line[EVENTS_LINE_LONG + 1];

	rings[0] = make_ring(0, 64, full_run, NREC(full_run), RING_CLOSED, 0, &lens[0]);
	rings[1] = make_ring(1, 4, kernel_run, NREC(kernel_run), RING_FROZEN, 2, &lens[1]);
	put_trace("two-vcpus", vm_json, events, rings, lens, 2);
	put_trace("vcpus-missing-ring", vm_json, events, rings, lens, 1);
	put_trace("no-vcpus-member", "{\"version\":1}", events, rings, lens, 2);
	put_trace("no-events", "{\"vcpus\":1,\"vm_id\":171}", NULL, rings, lens, 1);
	put_trace("vm-id-mismatch", "{\"vcpus\":1,\"vm_id\":\"1234\"}", events, rings, lens, 1);
	free(rings[0]);
	rings[0] = make_ring(0, 8, full_run, NREC(full_run), RING_LIVE, 0, &lens[0]);
	put_trace("live-wrapped-ring", "{\"vcpus\":1}", events, rings, lens, 1);
	free(rings[0]);
	free(rings[1]);

	/* vm.json edge cases (the default ring of the target is vcpu0.ring). */
	put_trace("vm-empty", "", NULL, NULL, NULL, 0);
	put_trace("vm-array", "[1,2]", NULL, NULL, NULL, 0);
	put_trace("vm-vcpus-0", "{\"vcpus\":0}", NULL, NULL, NULL, 0);
	put_trace("vm-vcpus-string", "{\"vcpus\":\"1\"}", NULL, NULL, NULL, 0);
	put_trace("vm-vcpus-huge", "{\"vcpus\":4097}", NULL, NULL, NULL, 0);
	put_trace("vm-vcpus-max", "{\"vcpus\":4096}", NULL, NULL, NULL, 0);
	put_trace("vm-duplicate", "{\"vcpus\":1,\"vcpus\":1}", NULL, NULL, NULL, 0);
	put_trace("vm-bad-json", "{\"vcpus\":1,", NULL, NULL, NULL, 0);
	put_trace("vm-vm-id-bad", "{\"vm_id\":\"0xzz\",\"image\":null,\"build_id\":5}",
		  NULL, NULL, NULL, 0);

	/* events.jsonl edge cases over the default ring (one task, CR3 0x203000). */
	put_trace("ev-one-task", "{\"vcpus\":1}",
		  "{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":7,\"name\":\"sh\","
		  "\"cr3\":\"0x203000\"}\n", NULL, NULL, 0);
	put_trace("ev-cr3-reused", "{}",
		  "{\"time\":10,\"event\":\"task\",\"pid\":1,\"name\":\"a\",\"cr3\":\"203000\"}\n"
		  "{\"time\":60,\"event\":\"exit\",\"pid\":1,\"code\":139}\n"
		  "{\"time\":150,\"event\":\"task\",\"pid\":2,\"name\":\"b\",\"cr3\":\"0x203fff\"}\n"
		  "{\"time\":300,\"event\":\"exit\",\"pid\":2,\"code\":134}\n"
		  "{\"event\":\"task\",\"pid\":3,\"name\":\"c\",\"cr3\":\"0x8000000000203000\"}\n",
		  NULL, NULL, 0);
	put_trace("ev-hostile-names", "{}",
		  "{\"time\":1,\"event\":\"task\",\"pid\":1,\"name\":\"\\u001b[31mred\\r\\n\","
		  "\"cr3\":\"0x203000\"}\n"
		  "{\"time\":2,\"event\":\"task\",\"pid\":2,\"name\":\"\\u00e9\\u2603\\\"\\\\\","
		  "\"cr3\":\"0x203000\"}\n"
		  "{\"time\":3,\"event\":\"task\",\"pid\":3,\"name\":\"\",\"cr3\":\"0x203000\"}\n"
		  "{\"time\":4,\"event\":\"task\",\"pid\":-4,\"name\":\"12\",\"cr3\":\"0x203000\"}\n",
		  NULL, NULL, 0);
	put_trace("ev-bad-lines", "{}",
		  "\r\n"
		  "{\"time\":-1,\"event\":\"task\",\"pid\":1,\"name\":\"a\",\"cr3\":\"0x1000\"}\n"
		  "{\"time\":1,\"event\":\"task\",\"pid\":\"1\",\"name\":\"a\",\"cr3\":\"0x1000\"}\n"
		  "{\"time\":1,\"event\":\"task\",\"pid\":1,\"name\":\"a\",\"cr3\":\"zz\"}\n"
		  "{\"time\":1,\"event\":\"task\",\"pid\":1,\"name\":\"a\",\"cr3\":\"\"}\n"
		  "{\"time\":1,\"event\":\"task\",\"pid\":1,\"name\":\"a\",\"cr3\":"
		  "\"0x1ffffffffffffffff\"}\n"
		  "{\"event\":\"exit\",\"pid\":1,\"code\":\"x\"}\n"
		  "{\"event\":\"mmap\",\"pid\":1}\n"
		  "{\"event\":5}\n"
		  "[\"task\"]\n"
		  "{\"event\":\"task\",\"event\":\"exit\"}\n"
		  "{\"time\":1,\"event\":\"task\",\"pid\":1,\"name\":\"a\",\"cr3\":\"0x203000\"}",
		  NULL, NULL, 0);
	/* A Linux guest's trace: the agent's mappings (no build-ID store: nothing is loaded). */
	put_trace("ev-agent-maps", "{\"vcpus\":1,\"kernel\":\"/boot/vmlinuz\"}",
		  "{\"time\":10,\"vcpu\":0,\"event\":\"task\",\"pid\":7,\"tgid\":7,"
		  "\"name\":\"sh\",\"cr3\":\"0x203000\"}\n"
		  "{\"time\":20,\"vcpu\":0,\"event\":\"agent-map\",\"v\":1,\"pid\":7,"
		  "\"start\":\"0x555555555000\",\"end\":\"0x555555556000\",\"offset\":\"0x1000\","
		  "\"path\":\"/bin/sh\",\"build_id\":\"5747a71c\"}\n"
		  "{\"time\":21,\"event\":\"agent-map\",\"pid\":7,\"start\":\"0x2000\","
		  "\"end\":\"0x1000\",\"offset\":\"0x0\",\"path\":\"/x\",\"build_id\":\"../a\"}\n"
		  "{\"time\":22,\"event\":\"agent-map\",\"pid\":7,\"start\":\"0x0\","
		  "\"end\":\"0xffffffffffffffff\",\"offset\":\"0xfffffffffffff000\","
		  "\"path\":\"\\u001b[2J\",\"build_id\":\"AB\"}\n",
		  NULL, NULL, 0);
	memset(long_line, 'x', EVENTS_LINE_LONG);
	memcpy(long_line, long_head, sizeof(long_head) - 1);
	memcpy(long_line + EVENTS_LINE_LONG - (sizeof(long_tail) - 1), long_tail,
	       sizeof(long_tail));
	put_trace("ev-long-line", "{}", long_line, NULL, NULL, 0);
}

/* ---- agent channel ---------------------------------------------------------------------- */

static void agent_seeds(void)
{
	char line[VBTS_AGENT_LINE_MAX + 64];

	put_str("agent", "task", "{\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
		"\"cr3\":\"0x203000\"}\n");
	put_str("agent", "exit", "{\"event\":\"exit\",\"pid\":3,\"code\":139}\n");
	put_str("agent", "all-members",
		"{\"event\":\"fault\",\"pid\":3,\"tid\":4,\"ppid\":1,\"name\":\"n\",\"comm\":\"c\","
		"\"cr3\":\"0x1000\",\"code\":1,\"signal\":11,\"addr\":\"0x0\","
		"\"build_id\":\"00112233\"}\n");
	put_str("agent", "crlf-and-empty", "\r\n\n{\"event\":\"task\",\"pid\":1}\r\n\n");
	put_str("agent", "dropped-members",
		"{\"event\":\"task\",\"pid\":\"1\",\"time\":5,\"vcpu\":9,\"x\":{\"y\":[1]},"
		"\"name\":123,\"cr3\":null,\"code\":1.5}\n");
	put_str("agent", "invalid",
		"not json\n{\"pid\":1}\n{\"event\":1}\n[]\n{\"event\":\"a\",\"event\":\"b\"}\n"
		"{\"event\":\"task\"\n\"task\"\n");
	put_str("agent", "partial-last-line", "{\"event\":\"task\",\"pid\":1}\n{\"event\":");
	put_str("agent", "hostile-strings",
		"{\"event\":\"task\",\"name\":\"\\u001b]0;title\\u0007\\r\",\"comm\":\"\\u0000x\"}\n"
		"{\"event\":\"\\ud83d\\ude00\",\"name\":\"\\u00e9\"}\n");
	put_str("agent", "string-limit",
		"{\"event\":\"task\",\"name\":\""
		"0123456789012345678901234567890123456789012345678901234567890123\"}\n"
		"{\"event\":\"task\",\"name\":\""
		"01234567890123456789012345678901234567890123456789012345678901234\"}\n");
	put_str("agent", "over-limit",
		"{\"event\":\"a\"}\n{\"event\":\"b\"}\n{\"event\":\"c\"}\n{\"event\":\"d\"}\n"
		"{\"event\":\"e\"}\n{\"event\":\"f\"}\n{\"event\":\"g\"}\n{\"event\":\"h\"}\n"
		"{\"event\":\"i\"}\n{\"event\":\"j\"}\n");
	put("agent", "nul-byte", "{\"event\":\"t\0ask\"}\n", 18);

	/* Exactly VBTS_AGENT_LINE_MAX bytes, then one more, each followed by a good line. */
	memset(line, ' ', sizeof(line));
	memcpy(line, "{\"event\":\"task\"}", 16);
	line[VBTS_AGENT_LINE_MAX] = '\n';
	memcpy(line + VBTS_AGENT_LINE_MAX + 1, "{\"event\":\"ok\"}\n", 16);
	put("agent", "line-max", line, VBTS_AGENT_LINE_MAX + 16);
	line[VBTS_AGENT_LINE_MAX] = ' ';
	line[VBTS_AGENT_LINE_MAX + 1] = '\n';
	memcpy(line + VBTS_AGENT_LINE_MAX + 2, "{\"event\":\"ok\"}\n", 16);
	put("agent", "line-too-long", line, VBTS_AGENT_LINE_MAX + 17);
}

/* ---- multiboot images ------------------------------------------------------------------- */

#define MB_MAGIC 0x1badb002U
#define MB_FLAG_ADDR (1U << 16)
#define HDR_OFF 0x100
#define NOTE_OFF 0x200
#define SEG_OFF 0x1000
#define SEG_FILE 0x100
#define IMG_MAX (SEG_OFF + 4 * SEG_FILE)

/* One image: ELF32 with up to 4 PT_LOAD segments, a multiboot header, a build-ID note. */
struct img_spec {
	unsigned char elf_class, elf_data;
	uint16_t machine;
	unsigned int nseg;
	uint32_t paddr[4], vaddr[4], filesz[4], memsz[4];
	uint32_t entry;
	uint32_t mb_flags;
	bool bad_checksum, no_header, build_id;
	uint32_t kludge[5]; /* header_addr, load_addr, load_end, bss_end, entry */
	size_t truncate_to;
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put_image(const char *name, const struct img_spec *s)
{
	uint8_t img[IMG_MAX] = { 0 };
	Elf32_Ehdr eh = { 0 };
	size_t len = SEG_OFF + s->nseg * SEG_FILE;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = s->elf_class ? s->elf_class : ELFCLASS32;
	eh.e_ident[EI_DATA] = s->elf_data ? s->elf_data : ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = s->machine ? s->machine : EM_386;
	eh.e_version = EV_CURRENT;
	eh.e_entry = s->entry;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf32_Phdr);
	eh.e_phnum = s->nseg + (s->build_id ? 1 : 0);
	memcpy(img, &eh, sizeof(eh));
	for (unsigned int i = 0; i < s->nseg; i++) {
		Elf32_Phdr ph = {
			.p_type = PT_LOAD,
			.p_offset = SEG_OFF + i * SEG_FILE,
			.p_vaddr = s->vaddr[i] ? s->vaddr[i] : s->paddr[i],
			.p_paddr = s->paddr[i],
			.p_filesz = s->filesz[i],
			.p_memsz = s->memsz[i],
			.p_flags = PF_R | PF_X,
			.p_align = 0x1000,
		};

		memcpy(img + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
		memset(img + SEG_OFF + i * SEG_FILE, 0x90, SEG_FILE); /* nop */
		img[SEG_OFF + i * SEG_FILE + SEG_FILE - 1] = 0xf4;    /* hlt */
	}
	if (s->build_id) {
		Elf32_Phdr ph = { .p_type = PT_NOTE, .p_offset = NOTE_OFF, .p_filesz = 36 };

		memcpy(img + sizeof(eh) + s->nseg * sizeof(ph), &ph, sizeof(ph));
		put32(img + NOTE_OFF, 4);
		put32(img + NOTE_OFF + 4, 20);
		put32(img + NOTE_OFF + 8, NT_GNU_BUILD_ID);
		memcpy(img + NOTE_OFF + 12, "GNU", 4);
		for (int i = 0; i < 20; i++)
			img[NOTE_OFF + 16 + i] = (uint8_t)(0x10 + i);
	}
	if (!s->no_header) {
		put32(img + HDR_OFF, MB_MAGIC);
		put32(img + HDR_OFF + 4, s->mb_flags);
		put32(img + HDR_OFF + 8, -(MB_MAGIC + s->mb_flags) + (s->bad_checksum ? 1 : 0));
		for (int i = 0; i < 5; i++)
			put32(img + HDR_OFF + 12 + 4 * i, s->kludge[i]);
	}
	if (len < NOTE_OFF + 36)
		len = NOTE_OFF + 36;
	put("multiboot", name, img, s->truncate_to ? s->truncate_to : len);
}

static struct img_spec valid_image(void)
{
	struct img_spec s = { .nseg = 1, .entry = 0x100000, .build_id = true };

	s.paddr[0] = 0x100000;
	s.filesz[0] = SEG_FILE;
	s.memsz[0] = 0x2000;
	return s;
}

static void multiboot_seeds(void)
{
	struct img_spec s;

#define IMAGE(name, change)                                                                  \
	do {                                                                                 \
		s = valid_image();                                                           \
		change;                                                                      \
		put_image(name, &s);                                                         \
	} while (0)
	IMAGE("valid.elf", (void)0);
	IMAGE("no-build-id.elf", s.build_id = false);
	IMAGE("two-segments.elf", (s.nseg = 2, s.paddr[1] = 0x200000, s.filesz[1] = 0x80,
				   s.memsz[1] = 0x1000));
	IMAGE("virtual-entry.elf", (s.vaddr[0] = 0xc0100000, s.entry = 0xc0100010));
	IMAGE("kludge.elf", (s.mb_flags = MB_FLAG_ADDR, s.kludge[0] = 0x100100,
			     s.kludge[1] = 0x100000, s.kludge[2] = 0x100000 + SEG_OFF + SEG_FILE,
			     s.kludge[3] = 0x110000, s.kludge[4] = 0x101000));
	IMAGE("kludge-no-ends.elf", (s.mb_flags = MB_FLAG_ADDR | 3, s.kludge[0] = 0x100100,
				     s.kludge[1] = 0x100000, s.kludge[4] = 0x100000));
	IMAGE("kludge-bad-addr.elf", (s.mb_flags = MB_FLAG_ADDR, s.kludge[0] = 0x1000,
				      s.kludge[1] = 0x100000));
	IMAGE("overlapping.elf", (s.nseg = 2, s.paddr[1] = 0x101000, s.filesz[1] = 0x80,
				  s.memsz[1] = 0x1000));
	IMAGE("boot-area.elf", s.paddr[0] = 0x8800);
	IMAGE("outside-ram.elf", s.paddr[0] = 0xfff00000);
	IMAGE("entry-outside.elf", s.entry = 0x40000000);
	IMAGE("filesz-over-memsz.elf", s.memsz[0] = 0x10);
	IMAGE("no-load-segments.elf", s.nseg = 0);
	IMAGE("bad-checksum.elf", s.bad_checksum = true);
	IMAGE("no-header.elf", s.no_header = true);
	IMAGE("elf64-class.elf", s.elf_class = ELFCLASS64);
	IMAGE("big-endian.elf", s.elf_data = ELFDATA2MSB);
	IMAGE("x86-64-machine.elf", s.machine = EM_X86_64);
	IMAGE("truncated-phdrs.elf", s.truncate_to = 0x40);
	IMAGE("truncated-segment.elf", s.truncate_to = SEG_OFF + 0x10);
#undef IMAGE
	put_str("multiboot", "not-elf", "#!/bin/sh\n");
}

/* One gdb packet, framed, appended to @buf at *@n. */
static void gdb_put(char *buf, size_t cap, size_t *n, const char *payload)
{
	uint8_t sum = 0;

	for (const char *p = payload; *p; p++)
		sum += (uint8_t)*p;
	*n += (size_t)snprintf(buf + *n, cap - *n, "$%s#%02x", payload, sum);
}

/*
 * fuzz-gdb-packet: the first byte picks the target (bit 0: live) and the btrace failures
 * (bits 1-2), then a client's bytes: gdb's own sessions and edge cases of the framing.
 */
static void gdb_seeds(void)
{
	static const char *const session[] = {
		"qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;vfork-events+;"
		"exec-events+;vContSupported+;QThreadEvents+;no-resumed+;memory-tagging+",
		"vMustReplyEmpty", "QStartNoAckMode", "Hgp0.0", "qXfer:features:read:target.xml:0,ffb",
		"qTStatus", "?", "qfThreadInfo", "qsThreadInfo", "qAttached:1", "Hcp1.1", "qC",
		"g", "qThreadExtraInfo,p1.2", "m1000,40", "p10", "Z0,1010,1", "vCont?",
		"vCont;c:p1.-1", "z0,1010,1", "vCont;s:p1.1", "s", "c", "Z1,1020,1",
		"Qbtrace-conf:bts:size=0x10000", "Hgp1.1", "Qbtrace:bts",
		"qXfer:btrace-conf:read::0,ffb", "qXfer:btrace:read:all:0,ffb",
		"qXfer:btrace:read:delta:0,ffb", "qXfer:btrace:read:new:0,10",
		"qXfer:btrace:read:new:10,10", "P10=1010000000000000", "M1000,4:01020304",
		"X1004,0:", "m1000,8", "Qbtrace:off", "Hgp1.2", "Qbtrace:bts", "D;1",
	};
	static const char *const edges[][2] = {
		{ "bad-sum", "$?#00$?#00$?#3f" },
		{ "rle", "$M1000,8:0*\"#00" },
		{ "escape", "$X1000,2:}\x03}]#00" },
		{ "cut", "$qSupported:multipro" },
		{ "garbage", "+\x03hello$$$##" },
		{ "vcont", "$vCont;S05:p1.1;C02#00$vCont;t#00$vCont;s:p1.9#00" },
	};
	char buf[4096];
	size_t n = 1;

	buf[0] = 1;
	for (size_t i = 0; i < sizeof(session) / sizeof(session[0]); i++)
		gdb_put(buf, sizeof(buf), &n, session[i]);
	put("gdb-packet", "live-session", buf, n);
	buf[0] = 3;
	put("gdb-packet", "live-overflow", buf, n);
	buf[0] = 0;
	put("gdb-packet", "trace-session", buf, n);
	n = 1;
	buf[0] = 1;
	gdb_put(buf, sizeof(buf), &n, "QStartNoAckMode");
	gdb_put(buf, sizeof(buf), &n, "vCont;c");
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\x03");
	gdb_put(buf, sizeof(buf), &n, "k");
	put("gdb-packet", "interrupt", buf, n);
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		n = 1;
		buf[0] = 1;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", edges[i][1]);
		put("gdb-packet", edges[i][0], buf, n);
	}
}

/* ---- sealed traces --------------------------------------------------------------------- */

/* The file at @path with @tag before its bytes (at most @max of them), as fuzz-seal takes it. */
static void put_tagged(const char *target, const char *name, char tag, const char *path,
		       size_t max)
{
	static uint8_t buf[1 << 16];
	size_t len;
	FILE *f = fopen(path, "rb");

	if (!f)
		die(path);
	buf[0] = (uint8_t)tag;
	len = fread(buf + 1, 1, sizeof(buf) - 1, f);
	fclose(f);
	put(target, name, buf, (len < max ? len : max) + 1);
}

/* A trace of fuzz-seal's fixed files sealed with a new key: its seal.log, cut, and a proof. */
static void seal_seeds(void)
{
	char keys[PATH_MAX], key[PATH_MAX + 16], dir[PATH_MAX], path[PATH_MAX + 16], err[512];
	struct vbts_seal_vk vk;
	struct sealer *s;
	FILE *f;

	snprintf(keys, sizeof(keys), "%s/keys", tmpdir);
	snprintf(key, sizeof(key), "%s/seal.key", keys);
	snprintf(dir, sizeof(dir), "%s/seal", tmpdir);
	if (seal_key__generate(keys, 3600, 2, time(NULL), &vk, err, sizeof(err)) < 0 ||
	    mkdir(dir, 0755))
		die(keys);
	snprintf(path, sizeof(path), "%s/vm.json", dir);
	f = fopen(path, "w");
	if (!f || fputs(FUZZ_SEAL_VM_JSON, f) < 0 || fclose(f))
		die(path);
	s = sealer__start(dir, key, 3600, err, sizeof(err));
	if (!s)
		die(err);
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	f = fopen(path, "w");
	if (!f || fputs(FUZZ_SEAL_EVENTS, f) < 0 || fclose(f))
		die(path);
	if (sealer__checkpoint(s, VBTS_SEAL_REASON_INTERVAL) < 0 || sealer__finish(s) < 0)
		die("sealing");
	snprintf(path, sizeof(path), "%s/seal.log", dir);
	put_tagged("seal", "sealed.log", 0, path, SIZE_MAX);
	put_tagged("seal", "cut.log", 0, path, 700);
	snprintf(path, sizeof(path), "%s/vm.proof", tmpdir);
	if (seal_verify__prove(dir, "vm.json", &vk, path, err, sizeof(err)) < 0)
		die(err);
	put_tagged("seal", "vm.proof", 1, path, SIZE_MAX);
	put_str("seal", "empty", "");
	unlink(path);
	for (const char *const *n = (const char *const[]){ "vm.json", "events.jsonl", "seal.log",
							     NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		unlink(path);
	}
	rmdir(dir);
	unlink(key);
	snprintf(path, sizeof(path), "%s/verify.key", keys);
	unlink(path);
	rmdir(keys);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	if (argc != 2) {
		fprintf(stderr, "usage: make-corpus OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) && errno != EEXIST)
		die(outdir);
	snprintf(tmpdir, sizeof(tmpdir), "%s/vbts-corpus-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		die(tmpdir);
	ring_seeds();
	segment_seeds();
	trace_seeds();
	agent_seeds();
	multiboot_seeds();
	gdb_seeds();
	seal_seeds();
	rmdir(tmpdir);
	return 0;
}
