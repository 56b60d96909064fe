// SPDX-License-Identifier: GPL-2.0
/*
 * test-inputs.c - what `vbts decode` does with inputs that are not the regular files of
 * bounded size it expects: FIFOs, devices (directly and through symbolic links), directories,
 * files too large or with an endless line, broken and missing rings, and more ring files than
 * file descriptors. Every input is made for real in a temporary trace directory.
 *
 * Each decode runs in a child process with a hang guard (SIGALRM) and, outside valgrind and
 * AddressSanitizer, an address-space limit, so that a decoder that blocks or grows without
 * bound fails the test instead of the machine. A partly unreadable trace must name each problem on stderr, decode
 * the rest (compared with the decode of a trace that lacks the bad part) and exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* AddressSanitizer reserves terabytes of shadow address space: no RLIMIT_AS under it. */
#if defined(__SANITIZE_ADDRESS__)
#define ADDRESS_LIMIT_OK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ADDRESS_LIMIT_OK 0
#endif
#endif
#ifndef ADDRESS_LIMIT_OK
#define ADDRESS_LIMIT_OK 1
#endif

#include "commands.h"
#include "decoder-test.h"
#include "input-file.h"
#include "procmap.h"
#include "ring-reader.h"
#include "ring-writer.h"
#include "seg-writer.h"
#include "symbols.h"
#include "test-files.h"
#include "test-ring.h"

/* Hang guard of one decode, in seconds: far above what a decode of these traces takes. */
#define DECODE_GUARD_S 30

#define CR3_A 0x203000
#define CR3_B 0x204000

static const struct vbts_record ring0[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_A, 100),
	BR(0x13, 0x40, 3, VBTS_BR_CALL),
	BR(0x6f, 0x70, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, CR3_A, 300),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_B, 310),
	BR(0x30, 0x44, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_STOP, 410, 0),
};

static const struct vbts_record ring1[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TIME, 150, 0),
	BR(0x1, 0x2, 0, VBTS_BR_JMP),
	ESC(VBTS_ESC_TIME, 350, 0),
	BR(0xa0, 0xb0, 0, VBTS_BR_JMP_IND),
};

static const char events[] =
	"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
	"\"cr3\":\"0x203000\"}\n"
	"{\"time\":95,\"vcpu\":0,\"event\":\"task\",\"pid\":2,\"name\":\"pong\","
	"\"cr3\":\"0x204000\"}\n";

static void write_vm_json(const char *dir, const char *image, unsigned int vcpus)
{
	char vm[1024];

	snprintf(vm, sizeof(vm),
		 "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"image\":\"%s\","
		 "\"vcpus\":%u,\"backend\":\"step\"}\n", image, vcpus);
	test__write_text(dir, "vm.json", vm);
}

/* A two-vCPU trace with task names and symbols. */
static void make_trace(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/vbts-inputs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, SYMTEST64, 2);
	test__write_text(dir, "events.jsonl", events);
	test__write_ring(dir, 0, 64, ring0, sizeof(ring0) / sizeof(ring0[0]), 0);
	test__write_ring(dir, 1, 64, ring1, sizeof(ring1) / sizeof(ring1[0]), 0);
}

int run_decode_nofile(char **out, char **err, rlim_t nofile, const char *const *argv)
{
	char opath[] = "/tmp/vbts-out-XXXXXX", epath[] = "/tmp/vbts-err-XXXXXX";
	int ofd = mkstemp(opath), efd = mkstemp(epath), status;
	pid_t pid;

	ck_assert(ofd >= 0 && efd >= 0);
	unlink(opath);
	unlink(epath);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *args[16];
		int argc = 0;

		args[argc++] = "decode";
		while (*argv && argc < 15)
			args[argc++] = (char *)*argv++;
		args[argc] = NULL;
		/* The test runner may handle SIGALRM itself: here it must end the child. */
		signal(SIGALRM, SIG_DFL);
		alarm(DECODE_GUARD_S);
		if (!RUNNING_ON_VALGRIND && ADDRESS_LIMIT_OK) {
			/* An input that grows memory without bound fails fast, not the machine. */
			struct rlimit as = { 1ULL << 30, 1ULL << 30 };

			setrlimit(RLIMIT_AS, &as);
		}
		/* valgrind keeps descriptors of its own at the top and refuses a lower limit. */
		if (nofile && !RUNNING_ON_VALGRIND) {
			struct rlimit nf = { nofile, nofile };

			if (setrlimit(RLIMIT_NOFILE, &nf))
				_exit(99);
		}
		if (dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(99);
		close(ofd);
		close(efd);
		status = cmd_decode.fn(argc, args);
		fflush(stdout);
		fflush(stderr);
		_exit(status);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	*out = test__slurp_fd(ofd, NULL);
	*err = test__slurp_fd(efd, NULL);
	close(ofd);
	close(efd);
	if (WIFSIGNALED(status))
		return -WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Replaces "DIR" in @pattern by @dir. */
static void expand(char *buf, size_t size, const char *pattern, const char *dir)
{
	const char *p = strstr(pattern, "DIR");

	if (p)
		snprintf(buf, size, "%.*s%s%s", (int)(p - pattern), pattern, dir, p + 3);
	else
		snprintf(buf, size, "%s", pattern);
}

static void make_fifo(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
}

static void make_symlink(const char *dir, const char *name, const char *target)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* Extends @name to @size bytes without writing them (a sparse file of zeros). */
static void make_sparse(const char *dir, const char *name, off_t size)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
}

static void patch_ring(const char *dir, const char *name, off_t off, uint64_t v)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &v, sizeof(v), off), (ssize_t)sizeof(v));
	close(fd);
}

enum input_setup {
	VMJSON_FIFO, VMJSON_ZERO, VMJSON_DIR, VMJSON_BIG,
	RING_FIFO, RING_ZERO, RING_DIR, RING_BAD_MAGIC, RING_TRUNCATED, RING_MISSING,
	RINGS_MISSING_MANY, RINGS_ALL_BAD,
	EVENTS_FIFO, EVENTS_URANDOM, EVENTS_ZERO, EVENTS_DIR, EVENTS_ENDLESS_LINE,
	EVENTS_LONG_LINE,
	IMAGE_FIFO, IMAGE_ZERO, IMAGE_DIR, IMAGE_BIG,
	BUILD_ID_PATH,
};

/* What stdout must be: the decode of the intact trace with this part left out. */
enum input_expect {
	EXPECT_NOTHING,         /* stdout empty */
	EXPECT_ALL,             /* as the intact trace */
	EXPECT_VCPU0,           /* as `--vcpu 0` of the intact trace */
	EXPECT_NO_EVENTS,       /* as the intact trace without events.jsonl */
	EXPECT_NO_SYMBOLS,      /* as the intact trace with an image that does not exist */
};

static const struct {
	enum input_setup setup;
	const char *want;       /* in stderr; "DIR" is the trace directory */
	unsigned int lines;     /* of stderr */
	int status;
	enum input_expect expect;
} input_cases[] = {
	{ VMJSON_FIFO, "vbts decode: DIR/vm.json: not a regular file (a FIFO)\n", 1, 2,
	  EXPECT_NOTHING },
	{ VMJSON_ZERO, "vbts decode: DIR/vm.json: not a regular file (a character device)\n", 1,
	  2, EXPECT_NOTHING },
	{ VMJSON_DIR, "vbts decode: DIR/vm.json: not a regular file (a directory)\n", 1, 2,
	  EXPECT_NOTHING },
	{ VMJSON_BIG, "vbts decode: DIR/vm.json: 2097152 bytes, larger than the limit of "
		      "1048576\n", 1, 2, EXPECT_NOTHING },
	{ RING_FIFO, "warning: DIR/vcpu1.ring: not a regular file (a FIFO); ring skipped\n", 1,
	  2, EXPECT_VCPU0 },
	{ RING_ZERO, "warning: DIR/vcpu1.ring: not a regular file (a character device); ring "
		     "skipped\n", 1, 2, EXPECT_VCPU0 },
	{ RING_DIR, "warning: DIR/vcpu1.ring: not a regular file (a directory); ring skipped\n",
	  1, 2, EXPECT_VCPU0 },
	{ RING_BAD_MAGIC, "warning: DIR/vcpu1.ring: offset 0x0: bad magic 0x0000000000000000, "
			  "not a vbts ring file; ring skipped\n", 1, 2, EXPECT_VCPU0 },
	{ RING_TRUNCATED, "warning: DIR/vcpu1.ring: offset 0x18: capacity 64 does not fit a "
			  "file of 4120 bytes; ring skipped\n", 1, 2, EXPECT_VCPU0 },
	{ RING_MISSING, "warning: DIR/vcpu1.ring: No such file or directory; ring skipped\n", 1,
	  2, EXPECT_VCPU0 },
	/* vm.json says 40 vCPUs, there are 2 rings: 10 warnings and a count of the rest. */
	{ RINGS_MISSING_MANY, "warning: DIR: 28 more problems not shown\n", 11, 2, EXPECT_ALL },
	{ RINGS_ALL_BAD, "vbts decode: DIR: none of the 2 ring files is readable\n", 3, 2,
	  EXPECT_NOTHING },
	{ EVENTS_FIFO, "warning: DIR/events.jsonl: not a regular file (a FIFO), no task names\n",
	  1, 2, EXPECT_NO_EVENTS },
	{ EVENTS_URANDOM, "warning: DIR/events.jsonl: not a regular file (a character device), "
			  "no task names\n", 1, 2, EXPECT_NO_EVENTS },
	{ EVENTS_ZERO, "warning: DIR/events.jsonl: not a regular file (a character device), "
		       "no task names\n", 1, 2, EXPECT_NO_EVENTS },
	{ EVENTS_DIR, "warning: DIR/events.jsonl: not a regular file (a directory), no task "
		      "names\n", 1, 2, EXPECT_NO_EVENTS },
	/* 3 GiB: the two events, then zeros without a newline; the first 64 MiB are read. */
	{ EVENTS_ENDLESS_LINE, "warning: DIR/events.jsonl: 1 line longer than 4096 bytes ignored "
			       "(the first is line 3)\n", 2, 2, EXPECT_ALL },
	{ EVENTS_ENDLESS_LINE, "warning: DIR/events.jsonl: larger than 67108864 bytes, the "
			       "lines after line 3 are not read\n", 2, 2, EXPECT_ALL },
	/* A long line between the two events: a bad line, not a damaged trace. */
	{ EVENTS_LONG_LINE, "warning: DIR/events.jsonl: 1 line longer than 4096 bytes ignored "
			    "(the first is line 2)\n", 1, 0, EXPECT_ALL },
	{ IMAGE_FIFO, "warning: DIR/image: not a regular file (a FIFO), no symbols\n", 1, 2,
	  EXPECT_NO_SYMBOLS },
	{ IMAGE_ZERO, "warning: DIR/image: not a regular file (a character device), no "
		      "symbols\n", 1, 2, EXPECT_NO_SYMBOLS },
	{ IMAGE_DIR, "warning: DIR/image: not a regular file (a directory), no symbols\n", 1, 2,
	  EXPECT_NO_SYMBOLS },
	/* A build ID that climbs out of symbols/ is refused, not used as a path. */
	{ BUILD_ID_PATH, "warning: DIR/vm.json: build_id is not a hex build ID; ignored\n", 2, 2,
	  EXPECT_NO_SYMBOLS },
	{ IMAGE_BIG, "warning: DIR/image: 1073741825 bytes, larger than the limit of 1073741824, "
		     "no symbols\n", 1, 2, EXPECT_NO_SYMBOLS },
};

static void setup_input(const char *dir, enum input_setup setup)
{
	const char *second;
	char path[512];
	char *big;
	FILE *f;

	switch (setup) {
	case VMJSON_FIFO:
		make_fifo(dir, "vm.json");
		break;
	case VMJSON_ZERO:
		make_symlink(dir, "vm.json", "/dev/zero");
		break;
	case VMJSON_DIR:
		test__make_dir(dir, "vm.json");
		break;
	case VMJSON_BIG:
		/* Valid JSON, padded with spaces to 2 MiB. */
		big = malloc(2 << 20);
		ck_assert_ptr_nonnull(big);
		memset(big, ' ', 2 << 20);
		memcpy(big, "{\"vcpus\":2}", 11);
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		test__write_file(NULL, path, big, 2 << 20);
		free(big);
		break;
	case RING_FIFO:
		make_fifo(dir, "vcpu1.ring");
		break;
	case RING_ZERO:
		make_symlink(dir, "vcpu1.ring", "/dev/zero");
		break;
	case RING_DIR:
		test__make_dir(dir, "vcpu1.ring");
		break;
	case RING_BAD_MAGIC:
		patch_ring(dir, "vcpu1.ring", 0, 0);
		break;
	case RING_TRUNCATED:
		snprintf(path, sizeof(path), "%s/vcpu1.ring", dir);
		ck_assert_int_eq(truncate(path, 4120), 0);
		break;
	case RING_MISSING:
		snprintf(path, sizeof(path), "%s/vcpu1.ring", dir);
		ck_assert_int_eq(unlink(path), 0);
		break;
	case RINGS_MISSING_MANY:
		write_vm_json(dir, SYMTEST64, 40);
		break;
	case RINGS_ALL_BAD:
		patch_ring(dir, "vcpu0.ring", 0, 0);
		patch_ring(dir, "vcpu1.ring", 0, 0);
		break;
	case EVENTS_FIFO:
		make_fifo(dir, "events.jsonl");
		break;
	case EVENTS_URANDOM:
		make_symlink(dir, "events.jsonl", "/dev/urandom");
		break;
	case EVENTS_ZERO:
		make_symlink(dir, "events.jsonl", "/dev/zero");
		break;
	case EVENTS_DIR:
		test__make_dir(dir, "events.jsonl");
		break;
	case EVENTS_ENDLESS_LINE:
		make_sparse(dir, "events.jsonl", 3LL << 30);
		break;
	case EVENTS_LONG_LINE:
		/* The first event, a line of 100,000 bytes, the second event. */
		big = malloc(100000);
		ck_assert_ptr_nonnull(big);
		memset(big, 'x', 100000);
		big[99999] = '\n';
		snprintf(path, sizeof(path), "%s/events.jsonl", dir);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		second = strchr(events, '\n') + 1;
		fwrite(events, 1, (size_t)(second - events), f);
		fwrite(big, 1, 100000, f);
		fputs(second, f);
		ck_assert_int_eq(fclose(f), 0);
		free(big);
		break;
	case IMAGE_FIFO:
		snprintf(path, sizeof(path), "%s/image", dir);
		write_vm_json(dir, path, 2);
		make_fifo(dir, "image");
		break;
	case IMAGE_ZERO:
		snprintf(path, sizeof(path), "%s/image", dir);
		write_vm_json(dir, path, 2);
		make_symlink(dir, "image", "/dev/zero");
		break;
	case IMAGE_DIR:
		snprintf(path, sizeof(path), "%s/image", dir);
		write_vm_json(dir, path, 2);
		test__make_dir(dir, "image");
		break;
	case BUILD_ID_PATH:
		/* DIR/symbols/../escape/executable is DIR/escape/executable, a valid ELF. */
		test__write_text(dir, "vm.json",
			"{\"version\":1,\"vm_id\":\"00000000000000ab\","
			"\"image\":\"/nonexistent/image\",\"vcpus\":2,\"backend\":\"step\","
			"\"build_id\":\"../escape\"}\n");
		test__make_dir(dir, "symbols");
		test__make_dir(dir, "escape");
		snprintf(path, sizeof(path), "%s/escape/executable", dir);
		ck_assert_int_eq(symlink(SYMTEST64, path), 0);
		break;
	case IMAGE_BIG:
		snprintf(path, sizeof(path), "%s/image", dir);
		write_vm_json(dir, path, 2);
		make_sparse(dir, "image", (1LL << 30) + 1);
		break;
	}
}

/* The stdout a case must produce, from the decode of a trace without the bad part. */
static char *expected_output(enum input_expect expect)
{
	const char *argv[4] = { NULL };
	char dir[64], path[512], *out, *err;

	if (expect == EXPECT_NOTHING)
		return strdup("");
	make_trace(dir, sizeof(dir));
	switch (expect) {
	case EXPECT_VCPU0:
		argv[0] = "--vcpu";
		argv[1] = "0";
		break;
	case EXPECT_NO_EVENTS:
		snprintf(path, sizeof(path), "%s/events.jsonl", dir);
		ck_assert_int_eq(unlink(path), 0);
		break;
	case EXPECT_NO_SYMBOLS:
		write_vm_json(dir, "/nonexistent/image", 2);
		break;
	default:
		break;
	}
	argv[argv[0] ? 2 : 0] = dir;
	ck_assert_int_eq(run_decode_nofile(&out, &err, 0, argv), 0);
	free(err);
	remove_trace(dir);
	return out;
}

START_TEST(test_bad_inputs)
{
	char dir[64], want[1024], *out, *err, *ref;
	const char *argv[] = { NULL, NULL };
	int status;

	make_trace(dir, sizeof(dir));
	setup_input(dir, input_cases[_i].setup);
	argv[0] = dir;
	status = run_decode_nofile(&out, &err, 0, argv);
	ck_assert_msg(status == input_cases[_i].status, "exit %d (-14: hung), stderr: %s", status,
		      err);
	expand(want, sizeof(want), input_cases[_i].want, dir);
	ck_assert_msg(strstr(err, want), "stderr:\n%s\nlacks: %s", err, want);
	ck_assert_msg(test__count_lines(err) == input_cases[_i].lines, "%zu lines, not %u:\n%s",
		      test__count_lines(err), input_cases[_i].lines, err);
	ref = expected_output(input_cases[_i].expect);
	ck_assert_msg(!strcmp(out, ref), "stdout:\n%s\nwanted:\n%s", out, ref);
	free(ref);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

#define MANY_RINGS 1500
#define BRANCH_LINE "{\"type\":\"branch\""

/*
 * More rings than file descriptors: 1,500 vCPUs under RLIMIT_NOFILE 256. Each ring has one
 * time and one branch; the times run backwards with the vCPU number, so the merged output
 * must list the branches from the last vCPU to the first.
 */
START_TEST(test_many_rings)
{
	const char *argv[] = { "--format", "jsonl", NULL, NULL };
	char dir[64], vm[256], *out, *err, *p;
	unsigned int next = MANY_RINGS, vcpu;
	int status;

	snprintf(dir, sizeof(dir), "/tmp/vbts-rings-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(vm, sizeof(vm), "{\"version\":1,\"vm_id\":\"ab\",\"vcpus\":%u}\n", MANY_RINGS);
	test__write_text(dir, "vm.json", vm);
	for (unsigned int i = 0; i < MANY_RINGS; i++) {
		struct vbts_record recs[] = {
			ESC(VBTS_ESC_TIME, 10 * (MANY_RINGS - i), 0),
			BR(0x1000 + i, 0x2000 + i, 0, VBTS_BR_JMP),
		};

		test__write_ring(dir, i, 4, recs, 2, 0);
	}
	argv[2] = dir;
	status = run_decode_nofile(&out, &err, 256, argv);
	ck_assert_msg(status == 0, "exit %d, stderr: %s", status, err);
	ck_assert_str_eq(err, "");
	for (p = strstr(out, BRANCH_LINE); p; p = strstr(p + 1, BRANCH_LINE)) {
		ck_assert_int_eq(sscanf(p, BRANCH_LINE ",\"vcpu\":%u", &vcpu), 1);
		ck_assert_uint_gt(next, 0);
		ck_assert_uint_eq(vcpu, --next);
	}
	ck_assert_uint_eq(next, 0);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* The library entry points refuse a FIFO at once instead of blocking in open(2). */
START_TEST(test_api_fifo)
{
	char dir[64], path[512], err[RING_READER_ERR_MAX];
	struct procmap *pm;
	int status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/vbts-fifo-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	make_fifo(dir, "f");
	snprintf(path, sizeof(path), "%s/f", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(DECODE_GUARD_S);
		errno = 0;
		if (ring_reader__open(path, err, sizeof(err)) || errno != EINVAL)
			_exit(1);
		if (symbols__load(path) || errno != EINVAL)
			_exit(2);
		pm = procmap__new();
		if (!pm || procmap__load(pm, path) != -EINVAL)
			_exit(3);
		procmap__free(pm);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "status %#x (SIGALRM: an open blocked)", status);
	remove_trace(dir);
}
END_TEST

/* ---- a stream-mode trace whose segments a hostile user removed, changed or added ---- */

#define SEGR 16                 /* segment slots: 15 records each, the last slot kept */
#define SEGN (SEGR - 1)
#define STREAM_RECORDS 100      /* segments 0 to 5 full, 6 the last (10 records) */

static struct seg_budget stream_budget = { .limit = 64ULL << 20 };

/* A one-vCPU stream-mode trace of STREAM_RECORDS branches, from = 0x1000 + seq, closed. */
static void make_stream_trace(char *dir, size_t size)
{
	struct seg_writer_config sc = {
		.vcpu_id = 0,
		.vm_id = 0xab,
		.segment_records = SEGR,
		.budget = &stream_budget,
		.on_full = SEG_ON_FULL_STALL,
	};
	struct seg_writer *w;

	snprintf(dir, size, "/tmp/vbts-stream-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	test__write_text(dir, "vm.json", "{\"version\":1,\"vm_id\":\"00000000000000ab\","
			 "\"vcpus\":1,\"backend\":\"step\",\"mode\":\"stream\"}\n");
	sc.dir = dir;
	w = seg_writer__create(&sc);
	ck_assert_ptr_nonnull(w);
	for (uint64_t i = 0; i < STREAM_RECORDS; i++) {
		struct vbts_record r = BR(0x1000 + i, 0x2000 + i, 0, VBTS_BR_JMP);

		ck_assert_int_eq(seg_writer__append(w, &r, 1), 1);
	}
	ck_assert_int_eq(seg_writer__close(w), 0);
}

static void stream_seg(const char *dir, unsigned int vcpu, unsigned int index, char *buf,
		       size_t len)
{
	snprintf(buf, len, "%s/vcpu%u.%08u.vseg", dir, vcpu, index);
}

/* Writes @size bytes of @v at @off of segment @index's header. */
static void poke_header(const char *dir, unsigned int index, unsigned int off, uint64_t v,
			unsigned int size)
{
	char path[128];
	int fd;

	stream_seg(dir, 0, index, path, sizeof(path));
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &v, size, off), (ssize_t)size);
	close(fd);
}

static void remove_seg(const char *dir, unsigned int index)
{
	char path[128];

	stream_seg(dir, 0, index, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
}

enum stream_change {
	ST_NONE, ST_OLDEST, ST_MIDDLE, ST_TWO_MIDDLE, ST_NEWEST, ST_VM_ID_0, ST_VM_ID_OTHER,
	ST_LAST_EARLY, ST_FROZEN_EARLY, ST_EXTRA_VCPU, ST_SEQ_JUMP, ST_BAD_VM_ID, ST_BAD_MODE,
};

static const struct {
	enum stream_change change;
	int status;
	const char *want;       /* on stderr ("DIR" is the trace directory), "" for nothing */
	unsigned int lines;
	uint64_t from, to;      /* records [from, to) missing from the decode */
	uint64_t end;           /* the last record decoded, plus 1 (0: STREAM_RECORDS) */
} stream_cases[] = {
	{ ST_NONE, 0, "", 0, 0, 0 },
	/* a consumer took the oldest away: what README allows */
	{ ST_OLDEST, 0, "", 0, 0, 2 * SEGN },
	{ ST_MIDDLE, 2, "DIR/vcpu0: segment 2 missing: records 30 to 44 are not in the trace", 1,
	  30, 45 },
	{ ST_TWO_MIDDLE, 2, "DIR/vcpu0: segments 2 to 3 missing: records 30 to 59 are not in the "
	  "trace", 1, 30, 60 },
	{ ST_NEWEST, 2, "DIR/vcpu0: segment 5 is the newest and not the last: the segments after "
	  "it are missing", 1, 90, 100 },
	{ ST_VM_ID_0, 2, "DIR/vcpu0.00000003.vseg: offset 0x20: vm_id 0, which no run writes; "
	  "segment skipped", 1, 45, 60 },
	{ ST_VM_ID_OTHER, 2, "DIR/vcpu0.00000003.vseg: offset 0x20: vm_id 0xcd of another run "
	  "(this trace's is 0xab); segment skipped", 1, 45, 60 },
	{ ST_LAST_EARLY, 2, "DIR/vcpu0: 4 segments after segment 2, which says it is the last "
	  "(flags 0x5), not read: vcpu0.00000003.vseg and on", 1, 45, 100 },
	{ ST_FROZEN_EARLY, 2, "DIR/vcpu0: 4 segments after segment 2, which says it is the last "
	  "(flags 0x3), not read: vcpu0.00000003.vseg and on", 1, 45, 100 },
	{ ST_EXTRA_VCPU, 2, "DIR: 2 files of vCPUs the trace does not have (it has vCPUs 0 to 0), "
	  "not read: vcpu1.00000000.vseg and others", 1, 0, 0 },
	{ ST_SEQ_JUMP, 2, "DIR/vcpu0.00000006.vseg: offset 0x30: first seq 95, the segment before "
	  "ends at 90: records 90 to 94 are not in the trace", 1, 90, 95, 105 },
	/* vm.json's own members that say how to read the files */
	{ ST_BAD_VM_ID, 2, "DIR/vm.json: \"vm_id\" is not a run id (hex digits); the files' runs "
	  "are not checked", 1, 0, 0 },
	{ ST_BAD_MODE, 2, "DIR/vm.json: \"mode\" str\\x1b[2Jeam is neither \"wrap\" nor "
	  "\"stream\"; each vCPU read as its files are", 1, 0, 0 },
};

static void change_stream(const char *dir, enum stream_change c)
{
	char from[128], to[128];

	switch (c) {
	case ST_NONE:
		break;
	case ST_OLDEST:
		remove_seg(dir, 0);
		remove_seg(dir, 1);
		break;
	case ST_MIDDLE:
		remove_seg(dir, 2);
		break;
	case ST_TWO_MIDDLE:
		remove_seg(dir, 2);
		remove_seg(dir, 3);
		break;
	case ST_NEWEST:
		remove_seg(dir, 6);
		break;
	case ST_VM_ID_0:
		poke_header(dir, 3, 0x20, 0, 8);
		break;
	case ST_VM_ID_OTHER:
		poke_header(dir, 3, 0x20, 0xcd, 8);
		break;
	case ST_LAST_EARLY:
		poke_header(dir, 2, 0x14, VBTS_SEG_F_CLOSED | VBTS_SEG_F_LAST, 4);
		break;
	case ST_FROZEN_EARLY:
		poke_header(dir, 2, 0x14, VBTS_SEG_F_CLOSED | VBTS_SEG_F_FROZEN, 4);
		break;
	case ST_EXTRA_VCPU:
		/* another run's vCPU 1, and a ring of a vCPU 4 */
		stream_seg(dir, 0, 0, from, sizeof(from));
		stream_seg(dir, 1, 0, to, sizeof(to));
		ck_assert_int_eq(link(from, to), 0);
		snprintf(to, sizeof(to), "%s/vcpu4.ring", dir);
		ck_assert_int_eq(link(from, to), 0);
		break;
	case ST_SEQ_JUMP:
		poke_header(dir, 6, 0x30, 95, 8);
		break;
	case ST_BAD_VM_ID:
		test__write_text(dir, "vm.json", "{\"version\":1,\"vm_id\":\"the run\","
				 "\"vcpus\":1,\"backend\":\"step\",\"mode\":\"stream\"}\n");
		break;
	case ST_BAD_MODE:
		test__write_text(dir, "vm.json", "{\"version\":1,\"vm_id\":\"00000000000000ab\","
				 "\"vcpus\":1,\"backend\":\"step\",\"mode\":\"str\\u001b[2Jeam\"}\n");
		break;
	}
}

/*
 * Each change: the exit status, one line naming what is wrong (and which records it costs),
 * and every record but those decoded.
 */
START_TEST(test_stream_continuity)
{
	const char *argv[] = { "--format", "jsonl", NULL, NULL };
	char dir[64], want[1024], *out, *err;
	uint64_t seen[2 * STREAM_RECORDS] = { 0 }, end;
	unsigned int seq;
	int status;
	char *p;

	make_stream_trace(dir, sizeof(dir));
	change_stream(dir, stream_cases[_i].change);
	argv[2] = dir;
	status = run_decode_nofile(&out, &err, 0, argv);
	ck_assert_msg(status == stream_cases[_i].status, "exit %d (-14: hung), stderr: %s", status,
		      err);
	expand(want, sizeof(want), stream_cases[_i].want, dir);
	ck_assert_msg(strstr(err, want), "stderr:\n%s\nlacks: %s", err, want);
	ck_assert_msg(test__count_lines(err) == stream_cases[_i].lines, "%zu lines, not %u:\n%s",
		      test__count_lines(err), stream_cases[_i].lines, err);
	for (p = strstr(out, BRANCH_LINE); p; p = strstr(p + 1, BRANCH_LINE)) {
		ck_assert_int_eq(sscanf(p, BRANCH_LINE ",\"vcpu\":0,\"seq\":%u", &seq), 1);
		ck_assert_uint_lt(seq, 2 * STREAM_RECORDS);
		seen[seq]++;
	}
	end = stream_cases[_i].end ? stream_cases[_i].end : STREAM_RECORDS;
	for (unsigned int i = 0; i < 2 * STREAM_RECORDS; i++) {
		bool gone = (i >= stream_cases[_i].from && i < stream_cases[_i].to) || i >= end;

		ck_assert_msg(seen[i] == !gone, "record %u: %llu times", i,
			      (unsigned long long)seen[i]);
	}
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * The line reader on contents around its limits. Results as text: "LINE@N|" for line N,
 * "!@N|" for line N too long, "#|" for the size limit reached, "$" at the end.
 */
static const struct {
	const char *data;
	size_t len;             /* 0: strlen(data) */
	size_t line_max;
	uint64_t size_max;
	const char *want;
} line_cases[] = {
	{ "", 0, 4, 100, "$" },
	{ "a\nbb\n", 0, 4, 100, "a@1|bb@2|$" },
	{ "a\nbb", 0, 4, 100, "a@1|bb@2|$" },            /* no newline at the end */
	{ "\n\n", 0, 4, 100, "@1|@2|$" },
	{ "abcd\nabcde\nx\n", 0, 4, 100, "abcd@1|!@2|x@3|$" },
	{ "abcd", 0, 4, 100, "abcd@1|$" },
	{ "abcde", 0, 4, 100, "!@1|$" },
	{ "a\nbcdefghijklmnopqrstuvwxyz\nc\n", 0, 2, 100, "a@1|!@2|c@3|$" },
	{ "a\nb\nc\n", 0, 4, 4, "a@1|b@2|#|$" },        /* the size limit */
	{ "a\nb\ncd", 0, 4, 5, "a@1|b@2|#|$" },        /* a line cut by it is no line */
	{ "a\nb\nc", 0, 4, 5, "a@1|b@2|c@3|$" },
	{ "a\nb\n", 0, 4, 4, "a@1|b@2|$" },            /* exactly the limit */
	{ "a\nbcdefgh", 0, 2, 6, "a@1|!@2|#|$" },
	{ "a\0b\nc\n", 6, 4, 100, "a@1|c@2|$" },        /* NUL bytes stay in the line */
};

START_TEST(test_input_lines)
{
	char path[] = "/tmp/vbts-lines-XXXXXX", got[256], *line;
	size_t len, n = 0, data_len;
	struct input_lines *in;
	int fd, ret;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	data_len = line_cases[_i].len ? line_cases[_i].len : strlen(line_cases[_i].data);
	test__write_file(NULL, path, line_cases[_i].data, data_len);
	in = input_lines__open(path, line_cases[_i].line_max, line_cases[_i].size_max, NULL, 0);
	ck_assert_ptr_nonnull(in);
	got[0] = '\0';
	do {
		ret = input_lines__next(in, &line, &len);
		if (ret == 1) {
			ck_assert_uint_le(len, line_cases[_i].line_max);
			ck_assert_int_eq(line[len], '\0');
			n += snprintf(got + n, sizeof(got) - n, "%s@%llu|", line,
				      (unsigned long long)input_lines__lineno(in));
		} else if (ret == -E2BIG) {
			n += snprintf(got + n, sizeof(got) - n, "!@%llu|",
				      (unsigned long long)input_lines__lineno(in));
		} else if (ret == -EFBIG) {
			n += snprintf(got + n, sizeof(got) - n, "#|");
		} else {
			ck_assert_int_eq(ret, 0);
			n += snprintf(got + n, sizeof(got) - n, "$");
		}
		ck_assert_uint_lt(n, sizeof(got));
	} while (ret);
	ck_assert_int_eq(input_lines__next(in, &line, &len), 0);
	input_lines__close(in);
	ck_assert_str_eq(got, line_cases[_i].want);
	unlink(path);
}
END_TEST

Suite *inputs_suite(void)
{
	Suite *s = suite_create("inputs");
	TCase *tc = tcase_create("core");

	/* Hang guards are in the children; this one only bounds a whole test. */
	tcase_set_timeout(tc, 4 * DECODE_GUARD_S);
	tcase_add_loop_test(tc, test_bad_inputs, 0,
			    (int)(sizeof(input_cases) / sizeof(input_cases[0])));
	tcase_add_loop_test(tc, test_input_lines, 0,
			    (int)(sizeof(line_cases) / sizeof(line_cases[0])));
	tcase_add_test(tc, test_many_rings);
	tcase_add_test(tc, test_api_fifo);
	tcase_add_loop_test(tc, test_stream_continuity, 0,
			    (int)(sizeof(stream_cases) / sizeof(stream_cases[0])));
	suite_add_tcase(s, tc);
	return s;
}
