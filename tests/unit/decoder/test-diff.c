// SPDX-License-Identifier: GPL-2.0
/*
 * test-diff.c - `vbts diff A B` end to end on trace directories written with the ring
 * writer: equal traces, a divergence planted at a known branch (near the start, deep in a
 * long stream, a stream that ends early), a PIE loaded at two bases with one build ID (equal)
 * and with two (different), and bad input.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "decoder-test.h"
#include "test-files.h"
#include "test-ring.h"

#define CR3_PING 0x203000
#define CR3_PIE 0x4000000
#define BUILD_ID "9e0000000000000000000000000000000000000b"
#define OTHER_ID "9e0000000000000000000000000000000000000c"

static const char events[] =
	"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
	"\"cr3\":\"0x203000\"}\n";

/* The records of the golden trace's ping task: main, parse, deref (symtest.S). */
static const struct vbts_record ping[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
	BR(0x13, 0x40, 3, VBTS_BR_CALL),        /* 0: main+0x13 => parse */
	BR(0x45, 0x50, 3, VBTS_BR_JCC),         /* 1 */
	BR(0x6f, 0x70, 3, VBTS_BR_CALL),        /* 2: parse => deref */
	BR(0x7a, 0x18, 3, VBTS_BR_RET),         /* 3 */
	BR(0x20, 0x90, 3, VBTS_BR_SYSCALL),     /* 4 */
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 300),
	ESC(VBTS_ESC_STOP, 410, 0),
};

/*
 * A one-vCPU trace of @recs with the symtest image and @ev as events.jsonl; @vm_extra (or
 * NULL) adds members to vm.json.
 */
static void make_trace_vm(char *dir, const struct vbts_record *recs, size_t n, const char *ev,
			  const char *vm_extra)
{
	char vm[512];

	snprintf(dir, 64, "/tmp/vbts-diff-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(vm, sizeof(vm),
		 "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"image\":\"%s\",\"vcpus\":1%s}\n",
		 SYMTEST64, vm_extra ? vm_extra : "");
	test__write_text(dir, "vm.json", vm);
	test__write_text(dir, "events.jsonl", ev);
	test__write_ring(dir, 0, n + 16, recs, n, 0);
}

static void make_trace(char *dir, const struct vbts_record *recs, size_t n, const char *ev)
{
	make_trace_vm(dir, recs, n, ev, NULL);
}

/* Runs `vbts diff ARGS... A B`, returns the status, output in @out and @err. */
static int run_diff(char **out, char **err, const char *a, const char *b,
		    const char *const *args)
{
	char *argv[16];
	int argc = 0;

	argv[argc++] = "diff";
	for (size_t i = 0; args && args[i]; i++)
		argv[argc++] = (char *)args[i];
	if (a)
		argv[argc++] = (char *)a;
	if (b)
		argv[argc++] = (char *)b;
	argv[argc] = NULL;
	return run_command(&cmd_diff, out, err, argv);
}

#define N_PING (sizeof(ping) / sizeof(ping[0]))

START_TEST(test_diff_equal)
{
	char a[64], b[64], *out, *err;

	make_trace(a, ping, N_PING, events);
	make_trace(b, ping, N_PING, events);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(out, "traces are equal: 1 streams, 5 branches (asynchronous events left"
			 " out: 0 in A, 0 in B)\n");
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* B's deref call lands 4 bytes further: branch 2 of ping differs, shown symbolized. */
START_TEST(test_diff_planted)
{
	const char *const ctx1[] = { "--context", "1", NULL };
	struct vbts_record planted[N_PING];
	char a[64], b[64], *out, *err;

	memcpy(planted, ping, sizeof(ping));
	planted[4].to = 0x74;
	make_trace(a, ping, N_PING, events);
	make_trace(b, planted, N_PING, events);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 1);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(out,
		"ping: first difference at branch 2 (A pid 1, 5 branches; B pid 1, 5 branches)\n"
		"  A at parse (symtest.S:20)\n"
		"  B at parse (symtest.S:20)\n"
		"  A    -2  0x13 main+0x13 (symtest.S:12) => 0x40 parse+0x0 (symtest.S:20)  call\n"
		"  A    -1  0x45 parse+0x5 (symtest.S:20) => 0x50 parse+0x10 (symtest.S:20)  jcc\n"
		"  A     0  0x6f parse+0x2f (symtest.S:20) => 0x70 deref+0x0 (symtest.S:27)  call\n"
		"  A     1  0x7a deref+0xa (symtest.S:27) => 0x18 main+0x18 (symtest.S:12)  ret\n"
		"  A     2  0x20 main+0x20 (symtest.S:12) => 0x90 isr_entry+0x0 (symtest.S:38)"
		"  syscall\n"
		"  B    -2  0x13 main+0x13 (symtest.S:12) => 0x40 parse+0x0 (symtest.S:20)  call\n"
		"  B    -1  0x45 parse+0x5 (symtest.S:20) => 0x50 parse+0x10 (symtest.S:20)  jcc\n"
		"  B     0  0x6f parse+0x2f (symtest.S:20) => 0x74 deref+0x4 (symtest.S:27)  call\n"
		"  B     1  0x7a deref+0xa (symtest.S:27) => 0x18 main+0x18 (symtest.S:12)  ret\n"
		"  B     2  0x20 main+0x20 (symtest.S:12) => 0x90 isr_entry+0x0 (symtest.S:38)"
		"  syscall\n"
		"traces differ: 1 of 1 streams (5 branches in A, 5 in B; asynchronous events left"
		" out: 0 in A, 0 in B)\n");
	free(out);
	free(err);
	/* --context 1: one branch before it and one after. */
	ck_assert_int_eq(run_diff(&out, &err, a, b, ctx1), 1);
	ck_assert_msg(!strstr(out, " -2 ") && !strstr(out, "  2  ") && strstr(out, "  B    -1 ") &&
		      strstr(out, "  B     1 "), "%s", out);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* Long streams: @n branches of ping, the one at @plant (if below @n) changed. */
static struct vbts_record *long_ping(size_t n, size_t plant, size_t *nr)
{
	struct vbts_record *r = calloc(n + 3, sizeof(*r));
	size_t k = 0;

	ck_assert_ptr_nonnull(r);
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER);
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100);
	for (size_t i = 0; i < n; i++) {
		r[k] = br(0x40 + i % 0x30, 0x40 + (i * 7) % 0x30, 3, VBTS_BR_JCC);
		if (i == plant)
			r[k].to = 0x70;
		k++;
	}
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_STOP, 410, 0);
	*nr = k;
	return r;
}

static const struct {
	size_t na, nb, plant;   /* branches of A and B, the one changed in B */
	const char *want;
} long_cases[] = {
	/* Deep in the third chunk of hashes. */
	{ 10000, 10000, 9000,
	  "ping: first difference at branch 9000 (A pid 1, 10000 branches; B pid 1, 10000"
	  " branches)\n" },
	/* At the first branch of a chunk. */
	{ 10000, 10000, 4096,
	  "ping: first difference at branch 4096 (A pid 1, 10000 branches; B pid 1, 10000"
	  " branches)\n" },
	/* B ends early, in a chunk, and at a chunk's end. */
	{ 10000, 5000, SIZE_MAX,
	  "ping: first difference at branch 5000 (A pid 1, 10000 branches; B pid 1, 5000"
	  " branches)\n" },
	{ 8192, 10000, SIZE_MAX,
	  "ping: first difference at branch 8192 (A pid 1, 8192 branches; B pid 1, 10000"
	  " branches)\n" },
};

START_TEST(test_diff_long)
{
	char a[64], b[64], *out, *err, want[128];
	struct vbts_record *ra, *rb;
	size_t na, nb;

	ra = long_ping(long_cases[_i].na, SIZE_MAX, &na);
	rb = long_ping(long_cases[_i].nb, long_cases[_i].plant, &nb);
	make_trace(a, ra, na, events);
	make_trace(b, rb, nb, events);
	ck_assert_msg(run_diff(&out, &err, a, b, NULL) == 1, "%s%s", out, err);
	ck_assert_msg(!strncmp(out, long_cases[_i].want, strlen(long_cases[_i].want)),
		      "%s", out);
	/* The context: the 5 equal branches before it on each side, then the difference. */
	snprintf(want, sizeof(want), "  B    -5 ");
	ck_assert_msg(strstr(out, want), "%s", out);
	if (long_cases[_i].plant == SIZE_MAX)
		ck_assert_msg(strstr(out, "     0  (no more branches: "), "%s", out);
	free(out);
	free(err);
	/* And both against themselves. */
	ck_assert_int_eq(run_diff(&out, &err, b, b, NULL), 0);
	free(out);
	free(err);
	free(ra);
	free(rb);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* A PIE's task: exec events with a build ID and a load base. */
static void pie_events(char *buf, size_t len, const char *build_id, const char *load_base)
{
	snprintf(buf, len,
		 "{\"time\":10,\"vcpu\":0,\"event\":\"task\",\"pid\":7,\"tgid\":7,\"name\":\"sh\","
		 "\"cr3\":\"0x3000000\"}\n"
		 "{\"time\":20,\"vcpu\":0,\"event\":\"exec\",\"pid\":7,\"tgid\":7,"
		 "\"name\":\"pie\",\"cr3\":\"0x4000000\"%s%s%s%s%s}\n",
		 build_id ? ",\"build_id\":\"" : "", build_id ? build_id : "",
		 build_id ? "\"" : "", load_base ? ",\"load_base\":" : "",
		 load_base ? load_base : "");
}

/* The PIE's branches at @base, and kernel branches at fixed addresses. */
static void pie_ring(struct vbts_record *r, uint64_t base)
{
	size_t k = 0;

	r[k++] = (struct vbts_record)ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER);
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_TASK_ARRIVE, CR3_PIE, 30);
	r[k++] = br(base + 0x1000, base + 0x1020, 3, VBTS_BR_CALL);
	r[k++] = br(base + 0x1020, base + 0x1040, 3, VBTS_BR_CALL);
	r[k++] = br(base + 0x1041, 0xffffffff81001000ULL, 3, VBTS_BR_SYSCALL);
	r[k++] = br(0xffffffff81001100ULL, base + 0x1042, 0, VBTS_BR_SYSRET);
	r[k++] = br(base + 0x1045, base + 0x1025, 3, VBTS_BR_RET);
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_STOP, 100, 0);
}

static const struct {
	const char *id_a, *base_a, *id_b, *base_b;
	uint64_t ra, rb;        /* where the ring has it */
	int status;
	const char *want;
} aslr_cases[] = {
	/* One build, two bases: the same code. */
	{ BUILD_ID, "\"0x555555554000\"", BUILD_ID, "\"0x561234560000\"", 0x555555554000ULL,
	  0x561234560000ULL, 0, "traces are equal: 1 streams, 5 branches" },
	/* A load base given as an integer. */
	{ BUILD_ID, "93824992231424", BUILD_ID, "\"0x7f0000000000\"", 0x555555554000ULL,
	  0x7f0000000000ULL, 0, "traces are equal" },
	/* Two builds: never equal. */
	{ BUILD_ID, "\"0x555555554000\"", OTHER_ID, "\"0x561234560000\"", 0x555555554000ULL,
	  0x561234560000ULL, 1, "  the programs differ: build ID " BUILD_ID " in A, " OTHER_ID
	  " in B\n" },
	/* No load base in B: its addresses are not comparable. */
	{ BUILD_ID, "\"0x555555554000\"", BUILD_ID, NULL, 0x555555554000ULL, 0x561234560000ULL,
	  1, "first difference at branch 0" },
	/* No build ID: addresses as they are. */
	{ NULL, "\"0x555555554000\"", NULL, "\"0x561234560000\"", 0x555555554000ULL,
	  0x561234560000ULL, 1, "first difference at branch 0" },
};

START_TEST(test_diff_aslr)
{
	char a[64], b[64], ev[1024], *out, *err;
	struct vbts_record ra[8], rb[8];

	pie_ring(ra, aslr_cases[_i].ra);
	pie_ring(rb, aslr_cases[_i].rb);
	pie_events(ev, sizeof(ev), aslr_cases[_i].id_a, aslr_cases[_i].base_a);
	make_trace(a, ra, 8, ev);
	pie_events(ev, sizeof(ev), aslr_cases[_i].id_b, aslr_cases[_i].base_b);
	make_trace(b, rb, 8, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), aslr_cases[_i].status);
	ck_assert_msg(strstr(out, aslr_cases[_i].want), "%s", out);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* The kernel at two KASLR slides: the same code when both traces know their slide. */
START_TEST(test_diff_kaslr)
{
	char a[64], b[64], ev[1024], *out, *err;
	struct vbts_record ra[8], rb[8];

	pie_ring(ra, 0x555555554000ULL);
	pie_ring(rb, 0x555555554000ULL);
	rb[4].to += 0x2000000;
	rb[5].from += 0x2000000;
	pie_events(ev, sizeof(ev), BUILD_ID, "\"0x555555554000\"");
	make_trace_vm(a, ra, 8, ev, ",\"kaslr_slide\":16777216");
	make_trace_vm(b, rb, 8, ev, ",\"kaslr_slide\":50331648");
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	ck_assert_msg(strstr(out, "traces are equal"), "%s", out);
	free(out);
	free(err);
	remove_trace(b);
	/* B's slide unknown: its kernel addresses are not comparable */
	make_trace_vm(b, rb, 8, ev, NULL);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 1);
	ck_assert_msg(strstr(out, "first difference at branch 2"), "%s", out);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

START_TEST(test_diff_bad_input)
{
	const char *const ctx[] = { "--context", "1001", NULL };
	const char *const task[] = { "--task", "nobody", NULL };
	char a[64], *out, *err;

	make_trace(a, ping, N_PING, events);
	ck_assert_int_eq(run_diff(&out, &err, a, "/nonexistent/trace", NULL), 2);
	ck_assert_msg(strstr(err, "vbts diff: /nonexistent/trace: No such file"), "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(run_diff(&out, &err, a, NULL, NULL), 2);
	ck_assert_msg(strstr(err, "two trace directories needed"), "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(run_diff(&out, &err, a, a, ctx), 2);
	ck_assert_msg(strstr(err, "bad --context '1001'"), "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(run_diff(&out, &err, a, a, task), 2);
	ck_assert_msg(strstr(err, "no task 'nobody' in either trace"), "%s", err);
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	remove_trace(a);
}
END_TEST


/* ---- matching by identity, asynchronous events, the CI formats, coverage ----------------- */

#define CR3_PING2 0x205000

/* Two processes named ping, created in the order of their times; @pid_a is the first's pid. */
static void two_pings(char *buf, size_t len, int pid_a, int pid_b, int t_a, int t_b)
{
	snprintf(buf, len,
		 "{\"time\":5,\"vcpu\":0,\"event\":\"task\",\"pid\":3,\"name\":\"sh\","
		 "\"cr3\":\"0x300000\"}\n"
		 "{\"time\":%d,\"vcpu\":0,\"event\":\"task\",\"pid\":%d,\"name\":\"ping\","
		 "\"cr3\":\"0x203000\"}\n"
		 "{\"time\":%d,\"vcpu\":0,\"event\":\"task\",\"pid\":%d,\"name\":\"ping\","
		 "\"cr3\":\"0x205000\"}\n", t_a, pid_a, t_b, pid_b);
}

/* The first ping runs main => parse, the second parse => deref, each in its address space. */
static const struct vbts_record two_ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
	BR(0x13, 0x40, 3, VBTS_BR_CALL),
	BR(0x45, 0x50, 3, VBTS_BR_JCC),
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 200),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING2, 210),
	BR(0x6f, 0x70, 3, VBTS_BR_CALL),
	BR(0x7a, 0x18, 3, VBTS_BR_RET),
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING2, 300),
	ESC(VBTS_ESC_STOP, 410, 0),
};

#define N_TWO (sizeof(two_ring) / sizeof(two_ring[0]))

/*
 * Processes are matched by name and creation order, not by pid: other pids compare equal;
 * the same pids with the creation order swapped do not.
 */
START_TEST(test_diff_identity)
{
	char a[64], b[64], ev[1024], *out, *err;

	two_pings(ev, sizeof(ev), 1, 2, 90, 95);
	make_trace(a, two_ring, N_TWO, ev);
	two_pings(ev, sizeof(ev), 140, 141, 90, 95);
	make_trace(b, two_ring, N_TWO, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	ck_assert_msg(strstr(out, "traces are equal: 2 streams, 4 branches"), "%s", out);
	free(out);
	free(err);
	remove_trace(b);
	/* B's second ping (by pid) was created first: it is B's "ping", and runs parse. */
	two_pings(ev, sizeof(ev), 1, 2, 95, 90);
	make_trace(b, two_ring, N_TWO, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 1);
	ck_assert_msg(strstr(out, "ping: first difference at branch 0 (A pid 1, 2 branches; B pid"
				  " 2, 2 branches)\n") &&
		      strstr(out, "ping#2: first difference at branch 0 (A pid 2"), "%s", out);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/*
 * Two shells, pids @sh1 and @sh2, that fork a ping each (0x203000 and 0x205000); with @swap
 * the second shell's ping is created first; @ppid false leaves the events' ppid out.
 */
static void forked_pings(char *buf, size_t len, int sh1, int sh2, bool swap, bool ppid)
{
	char p1[24] = "", p2[24] = "";

	if (ppid) {
		snprintf(p1, sizeof(p1), "\"ppid\":%d,", sh1);
		snprintf(p2, sizeof(p2), "\"ppid\":%d,", sh2);
	}
	snprintf(buf, len,
		 "{\"time\":5,\"vcpu\":0,\"event\":\"task\",\"pid\":%d,\"tgid\":%d,\"name\":\"sh\","
		 "\"cr3\":\"0x300000\"}\n"
		 "{\"time\":6,\"vcpu\":0,\"event\":\"task\",\"pid\":%d,\"tgid\":%d,\"name\":\"sh\","
		 "\"cr3\":\"0x301000\"}\n"
		 "{\"time\":%d,\"vcpu\":0,\"event\":\"task\",\"pid\":%d,\"tgid\":%d,%s"
		 "\"name\":\"ping\",\"cr3\":\"0x203000\"}\n"
		 "{\"time\":%d,\"vcpu\":0,\"event\":\"task\",\"pid\":%d,\"tgid\":%d,%s"
		 "\"name\":\"ping\",\"cr3\":\"0x205000\"}\n",
		 sh1, sh1, sh2, sh2, swap ? 95 : 90, sh2 + 10, sh2 + 10, p1, swap ? 90 : 95,
		 sh2 + 11, sh2 + 11, p2);
}

/*
 * A forked process is placed under its parent (the events' ppid): two pings of two shells
 * match by their parents' creation order, whichever ping was created first, and whatever the
 * pids; without ppid (traces of older versions) creation order alone decides. A thread
 * announced before another process of its name changes no number.
 */
START_TEST(test_diff_fork_parents)
{
	char a[64], b[64], ev[1024], *out, *err;

	forked_pings(ev, sizeof(ev), 3, 4, false, true);
	make_trace(a, two_ring, N_TWO, ev);
	forked_pings(ev, sizeof(ev), 7, 9, true, true);
	make_trace(b, two_ring, N_TWO, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	ck_assert_msg(strstr(out, "traces are equal: 2 streams, 4 branches"), "%s%s", out, err);
	free(out);
	free(err);
	remove_trace(b);
	/* the second shell's ping created first, without ppid: the first ping */
	forked_pings(ev, sizeof(ev), 7, 9, true, false);
	make_trace(b, two_ring, N_TWO, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 1);
	ck_assert_msg(strstr(out, "ping: first difference at branch 0") &&
		      strstr(out, "ping#2: first difference at branch 0"), "%s", out);
	free(out);
	free(err);
	remove_trace(b);
	/* a thread of the first ping announced before the second ping takes no number of it */
	forked_pings(ev, sizeof(ev), 7, 9, false, true);
	strcat(ev, "{\"time\":91,\"vcpu\":0,\"event\":\"thread\",\"pid\":30,\"tgid\":19,"
		   "\"name\":\"ping\",\"cr3\":\"0x203000\"}\n");
	make_trace(b, two_ring, N_TWO, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	free(out);
	free(err);
	remove_trace(b);
	/* a parent that exited before its child was announced is not it: creation order */
	forked_pings(ev, sizeof(ev), 7, 9, true, true);
	strcat(ev, "{\"time\":7,\"event\":\"exit\",\"pid\":9,\"code\":0}\n");
	make_trace(b, two_ring, N_TWO, ev);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 1);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/*
 * B is ping with a timer interrupt and a page fault in a trace of user mode (no return
 * recorded), and an interrupt whose handler's branches and IRET back to the interrupted
 * instruction are recorded: equal unless --strict.
 */
static const struct vbts_record ping_async[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
	BR(0x13, 0x40, 3, VBTS_BR_CALL),
	BRV(0x41, 0xffffffff81000100ULL, 3, VBTS_BR_INTERRUPT, 236),
	BRV(0x43, 0xffffffff81000200ULL, 3, VBTS_BR_EXCEPTION, 14),
	BR(0x45, 0x50, 3, VBTS_BR_JCC),
	BRV(0x52, 0x90, 3, VBTS_BR_INTERRUPT, 32),
	BR(0x92, 0x98, 0, VBTS_BR_JMP),
	BR(0x9a, 0x52, 0, VBTS_BR_IRET),
	BR(0x6f, 0x70, 3, VBTS_BR_CALL),
	BR(0x7a, 0x18, 3, VBTS_BR_RET),
	BR(0x20, 0x90, 3, VBTS_BR_SYSCALL),
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 300),
	/* a task that B saw only interrupted: no stream */
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING2, 310),
	BRV(0x13, 0xffffffff81000100ULL, 3, VBTS_BR_INTERRUPT, 236),
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING2, 320),
	ESC(VBTS_ESC_STOP, 410, 0),
};

static const char async_events[] =
	"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
	"\"cr3\":\"0x203000\"}\n"
	"{\"time\":305,\"vcpu\":0,\"event\":\"task\",\"pid\":2,\"name\":\"pong\","
	"\"cr3\":\"0x205000\"}\n";

START_TEST(test_diff_async)
{
	const char *const strict[] = { "--strict", NULL };
	char a[64], b[64], *out, *err;

	make_trace(a, ping, N_PING, events);
	make_trace(b, ping_async, sizeof(ping_async) / sizeof(ping_async[0]), async_events);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	ck_assert_msg(strstr(out, "traces are equal: 1 streams, 5 branches (asynchronous events"
				  " left out: 0 in A, 4 in B)"), "%s", out);
	free(out);
	free(err);
	ck_assert_int_eq(run_diff(&out, &err, a, b, strict), 1);
	ck_assert_msg(strstr(out, "ping: first difference at branch 1 (A pid 1, 5 branches; B pid"
				  " 1, 10 branches)") &&
		      strstr(out, "pong: only in B (pid 2, 1 branches)") &&
		      strstr(out, "  B     0  0x41 parse+0x1 (symtest.S:20) => 0xffffffff81000100"),
		      "%s", out);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* @text written to a file of @dir; returns its path (static). */
static const char *save(const char *dir, const char *name, const char *text)
{
	static char path[128];

	test__write_text(dir, name, text);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/*
 * The JUnit file read by a JUnit consumer (python3-junitparser): one test case per stream,
 * the divergence as the failure of the one that differs.
 */
static const char junit_check[] =
	"import sys\n"
	"from junitparser import JUnitXml, Failure\n"
	"xml = JUnitXml.fromfile(sys.argv[1])\n"
	"cases = [c for s in xml for c in s]\n"
	"failed = [c.name for c in cases if any(isinstance(r, Failure) for r in c.result)]\n"
	"print(len(cases), ','.join(failed), xml.failures)\n"
	"assert [c.name for c in cases] == sys.argv[2].split(','), [c.name for c in cases]\n"
	"assert failed == sys.argv[3].split(',') if sys.argv[3] else not failed, failed\n"
	"for c in cases:\n"
	"    for r in c.result:\n"
	"        assert 'first difference at branch 0' in r.message, r.message\n"
	"        assert '=> 0x44 parse+0x4 (symtest.S:20)' in r.text, r.text\n";

START_TEST(test_diff_formats)
{
	const char *const json[] = { "--format", "json", NULL };
	const char *const junit[] = { "--format", "junit", NULL };
	const char *const md[] = { "--format", "markdown", NULL };
	const char *const bad[] = { "--format", "xml", NULL };
	char a[64], b[64], ev[1024], cmd[1024], *out, *err;
	struct vbts_record planted[N_TWO];
	json_error_t jerr;
	json_t *j, *s;

	two_pings(ev, sizeof(ev), 1, 2, 90, 95);
	make_trace(a, two_ring, N_TWO, ev);
	memcpy(planted, two_ring, sizeof(two_ring));
	planted[2].to = 0x44;   /* ping's first call lands in parse+0x4 */
	make_trace(b, planted, N_TWO, ev);
	/* JSON */
	ck_assert_int_eq(run_diff(&out, &err, a, b, json), 1);
	j = json_loads(out, 0, &jerr);
	ck_assert_msg(j, "%s: %s", jerr.text, out);
	ck_assert(json_is_false(json_object_get(j, "equal")));
	s = json_array_get(json_object_get(j, "streams"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(s, "id")), "ping");
	ck_assert_str_eq(json_string_value(json_object_get(s, "status")), "differs");
	ck_assert_int_eq(json_integer_value(json_object_get(s, "first")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(s, "b"), "where")),
			 "main (symtest.S:12)");
	s = json_array_get(json_object_get(j, "streams"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(s, "status")), "equal");
	json_decref(j);
	free(out);
	free(err);
	/* JUnit, read by a JUnit consumer */
	ck_assert_int_eq(run_diff(&out, &err, a, b, junit), 1);
	save(a, "check.py", junit_check);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$(cat %s/check.py)\" %s ping,ping#2 ping",
		 a, save(a, "junit.xml", out));
	ck_assert_msg(system(cmd) == 0, "%s\n%s", cmd, out);
	free(out);
	free(err);
	/* the consumer fails on a malformed file */
	test__write_text(a, "junit.xml", "<testsuites><testsuite name=\"x\"><testcase");
	ck_assert_msg(system(cmd) != 0, "a malformed file read");
	/* equal traces: no failure */
	ck_assert_int_eq(run_diff(&out, &err, a, a, junit), 0);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$(cat %s/check.py)\" %s ping,ping#2 ''",
		 a, save(a, "junit.xml", out));
	ck_assert_msg(system(cmd) == 0, "%s\n%s", cmd, out);
	free(out);
	free(err);
	/* markdown */
	ck_assert_int_eq(run_diff(&out, &err, a, b, md), 1);
	ck_assert_msg(strstr(out, "### vbts diff: the runs differ\n") &&
		      strstr(out, "| ping | differs | first difference at branch 0: A at main "
			     "(symtest.S:12), B at main (symtest.S:12) |\n") &&
		      strstr(out, "<details><summary>ping: branch 0</summary>"), "%s", out);
	free(out);
	free(err);
	ck_assert_int_eq(run_diff(&out, &err, a, b, bad), 2);
	ck_assert_msg(strstr(err, "bad --format 'xml'"), "%s", err);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* --coverage: what B reached that A did not, and an lcov file per side that genhtml reads. */
START_TEST(test_diff_coverage)
{
	char a[64], b[64], la[128], lb[128], cmd[1024], *out, *err;
	struct vbts_record planted[N_PING];
	const char *args[] = { "--coverage", "--lcov-a", la, "--lcov-b", lb, NULL };

	memcpy(planted, ping, sizeof(ping));
	planted[4].to = 0x40;   /* parse calls itself instead of deref */
	make_trace(a, ping, N_PING, events);
	make_trace(b, planted, N_PING, events);
	snprintf(la, sizeof(la), "%s/a.info", a);
	snprintf(lb, sizeof(lb), "%s/b.info", a);
	ck_assert_int_eq(run_diff(&out, &err, a, b, args), 1);
	ck_assert_msg(strstr(out, "branch directions taken only in A (1):\n  parse+0x2f "
			     "(symtest.S:20) => deref+0x0 (symtest.S:27)  call\n") &&
		      strstr(out, "branch directions taken only in B (1):\n  parse+0x2f "
			     "(symtest.S:20) => parse+0x0 (symtest.S:20)  call\n"), "%s", out);
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "grep -q '^SF:symtest.S' %s && grep -q '^SF:symtest.S' %s && "
		 "genhtml -q --no-source -o %s/html %s %s >/dev/null 2>&1", la, lb, a, la, lb);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

/* ---- baselines --------------------------------------------------------------------------- */

static const char pong_events[] =
	"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
	"\"cr3\":\"0x203000\"}\n"
	"{\"time\":95,\"vcpu\":0,\"event\":\"task\",\"pid\":2,\"name\":\"pong\","
	"\"cr3\":\"0x205000\"}\n";

/*
 * A run of ping with a data-dependent loop of @loops rounds in parse, then @derefs calls of
 * deref (@to: where they land), and with @pong a second task that runs once.
 */
static void loop_run(char *dir, unsigned int loops, unsigned int derefs, uint64_t to,
		     bool pong)
{
	struct vbts_record r[64];
	size_t k = 0;

	r[k++] = (struct vbts_record)ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER);
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100);
	r[k++] = br(0x13, 0x40, 3, VBTS_BR_CALL);
	for (unsigned int i = 0; i < loops; i++)
		r[k++] = br(0x45, 0x41, 3, VBTS_BR_JCC);
	for (unsigned int i = 0; i < derefs; i++) {
		r[k++] = br(0x6f, to, 3, VBTS_BR_CALL);
		r[k++] = br(0x7a, 0x6f, 3, VBTS_BR_RET);
	}
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 300);
	if (pong) {
		r[k++] = (struct vbts_record)ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING2, 310);
		r[k++] = br(0x20, 0x90, 3, VBTS_BR_SYSCALL);
		r[k++] = (struct vbts_record)ESC(VBTS_ESC_TASK_DEPART, CR3_PING2, 320);
	}
	r[k++] = (struct vbts_record)ESC(VBTS_ESC_STOP, 410, 0);
	make_trace(dir, r, k, pong ? pong_events : events);
}

static int run_baseline(char **out, char **err, const char *const *args)
{
	char *argv[16];
	int argc = 0;

	argv[argc++] = "baseline";
	for (size_t i = 0; args[i]; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	return run_command(&cmd_baseline, out, err, argv);
}

/*
 * A baseline of three runs whose loop count varies (3, 5, 7) and whose second run has a task
 * the others lack accepts a fourth run (4 rounds, no pong) and rejects a changed build (deref
 * entered 4 bytes further: a branch direction no run took) and a run that calls deref twice
 * (a count that never varied); a file that is no baseline is bad input.
 */
START_TEST(test_diff_baseline)
{
	char r1[64], r2[64], r3[64], r4[64], bad[128], file[128], *out, *err;
	const char *create[] = { "create", file, r1, r2, r3, NULL };
	const char *base[] = { "--baseline", file, NULL };
	const char *json[] = { "--baseline", file, "--format", "json", NULL };

	loop_run(r1, 3, 1, 0x70, false);
	loop_run(r2, 5, 1, 0x70, true);
	loop_run(r3, 7, 1, 0x70, false);
	snprintf(file, sizeof(file), "%s/base.json", r1);
	ck_assert_int_eq(run_baseline(&out, &err, create), 0);
	ck_assert_msg(strstr(out, "baseline of 3 runs written to "), "%s%s", out, err);
	free(out);
	free(err);
	/* the loop's count and pong vary: accepted */
	loop_run(r4, 4, 1, 0x70, false);
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, base), 0);
	ck_assert_msg(strstr(out, "the run is within the baseline of 3 runs: 1 streams, 7 "
				  "branches\n"), "%s%s", out, err);
	free(out);
	free(err);
	remove_trace(r4);
	loop_run(r4, 9, 1, 0x70, true);
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, base), 0);
	free(out);
	free(err);
	remove_trace(r4);
	/* the changed build */
	loop_run(r4, 4, 1, 0x74, false);
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, base), 1);
	ck_assert_msg(strstr(out, "ping: outside the baseline of 3 runs (pid 1, 7 branches)\n"
				  "  not in the baseline: parse+0x2f (symtest.S:20) => deref+0x4 "
				  "(symtest.S:27)  call\n"), "%s", out);
	free(out);
	free(err);
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, json), 1);
	ck_assert_msg(strstr(out, "\"baseline_runs\": 3") && strstr(out, "\"status\": \"differs\""),
		      "%s", out);
	free(out);
	free(err);
	remove_trace(r4);
	/* deref called twice */
	loop_run(r4, 4, 2, 0x70, false);
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, base), 1);
	ck_assert_msg(strstr(out, "(baseline, run): deref 1 2\n"), "%s", out);
	free(out);
	free(err);
	/* not a baseline */
	snprintf(bad, sizeof(bad), "%s/vm.json", r4);
	base[1] = bad;
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, base), 2);
	ck_assert_msg(strstr(err, "not a baseline file of version 1"), "%s", err);
	free(out);
	free(err);
	test__write_text(r4, "b.json", "{\"vbts_baseline\":1,\"runs\":1,\"strict\":false,"
			 "\"streams\":[{\"id\":\"ping\",\"runs\":1,\"branches\":[1],"
			 "\"functions\":{},\"lines\":[],\"edges\":[]}]}");
	snprintf(bad, sizeof(bad), "%s/b.json", r4);
	ck_assert_int_eq(run_diff(&out, &err, r4, NULL, base), 2);
	ck_assert_msg(strstr(err, "stream 0 of the baseline is malformed"), "%s", err);
	free(out);
	free(err);
	create[1] = "create";
	create[0] = "make";
	ck_assert_int_eq(run_baseline(&out, &err, create), 2);
	ck_assert_msg(strstr(err, "the only subcommand is create"), "%s", err);
	free(out);
	free(err);
	remove_trace(r1);
	remove_trace(r2);
	remove_trace(r3);
	remove_trace(r4);
}
END_TEST

/* ---- threads ----------------------------------------------------------------------------- */

#define IDS(pid, tgid) ((uint64_t)(tgid) << 32 | (pid))

/*
 * Process @p (ping) and its threads @p + 1 and @p + 2: the main thread calls parse, the thread
 * @jcc takes parse's jcc, the thread @call calls deref; @call runs before @jcc.
 */
static void thread_run(char *dir, unsigned int p, unsigned int jcc, unsigned int call,
		       bool announce)
{
	const struct vbts_record r[] = {
		ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
		ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
		ESC(VBTS_ESC_THREAD, IDS(p, p), 0x1000),
		BR(0x13, 0x40, 3, VBTS_BR_CALL),
		ESC(VBTS_ESC_TIME, 150, 0),
		ESC(VBTS_ESC_THREAD, IDS(call, p), 0x3000),
		BR(0x6f, 0x70, 3, VBTS_BR_CALL),
		ESC(VBTS_ESC_THREAD, IDS(jcc, p), 0x2000),
		BR(0x45, 0x50, 3, VBTS_BR_JCC),
		ESC(VBTS_ESC_THREAD, IDS(p, p), 0x1000),
		BR(0x7a, 0x18, 3, VBTS_BR_RET),
		ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 300),
		ESC(VBTS_ESC_STOP, 410, 0),
	};
	char ev[1024];
	int n;

	n = snprintf(ev, sizeof(ev), "{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":%u,"
		     "\"tgid\":%u,\"name\":\"ping\",\"cr3\":\"0x203000\"}\n", p, p);
	for (unsigned int t = p + 1; announce && t <= p + 2; t++)
		n += snprintf(ev + n, sizeof(ev) - (size_t)n, "{\"time\":%u,\"vcpu\":0,\"event\":"
			      "\"thread\",\"pid\":%u,\"tgid\":%u,\"name\":\"ping\",\"cr3\":"
			      "\"0x203000\"}\n", 100 + t, t, p);
	make_trace(dir, r, sizeof(r) / sizeof(r[0]), ev);
}

/*
 * Threads are matched by their place among their process's threads (pid order), whether
 * events.jsonl announced them or not, whatever order they ran in; not by pid.
 */
START_TEST(test_diff_threads)
{
	char a[64], b[64], *out, *err;

	thread_run(a, 41, 42, 43, true);
	thread_run(b, 51, 52, 53, false);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 0);
	ck_assert_msg(strstr(out, "traces are equal: 3 streams, 4 branches"), "%s", out);
	free(out);
	free(err);
	remove_trace(b);
	/* the second thread made does what the first did */
	thread_run(b, 51, 53, 52, false);
	ck_assert_int_eq(run_diff(&out, &err, a, b, NULL), 1);
	ck_assert_msg(strstr(out, "ping.t2: first difference at branch 0 (A pid 42, 1 branches; "
				  "B pid 52, 1 branches)") &&
		      strstr(out, "ping.t3: first difference at branch 0 (A pid 43"), "%s", out);
	free(out);
	free(err);
	remove_trace(a);
	remove_trace(b);
}
END_TEST

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_diff_equal);
	tcase_add_test(tc, test_diff_planted);
	tcase_add_loop_test(tc, test_diff_long, 0, sizeof(long_cases) / sizeof(long_cases[0]));
	tcase_add_loop_test(tc, test_diff_aslr, 0, sizeof(aslr_cases) / sizeof(aslr_cases[0]));
	tcase_add_test(tc, test_diff_kaslr);
	tcase_add_test(tc, test_diff_bad_input);
	tcase_add_test(tc, test_diff_identity);
	tcase_add_test(tc, test_diff_fork_parents);
	tcase_add_test(tc, test_diff_async);
	tcase_add_test(tc, test_diff_formats);
	tcase_add_test(tc, test_diff_coverage);
	tcase_add_test(tc, test_diff_baseline);
	tcase_add_test(tc, test_diff_threads);
	suite_add_tcase(s, tc);
	return s;
}
