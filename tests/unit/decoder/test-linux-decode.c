// SPDX-License-Identifier: GPL-2.0
/*
 * test-linux-decode.c - `vbts decode` of a Linux guest's trace end to end: vm.json naming a
 * kernel, a System.map and a KASLR slide; events.jsonl with task, exec and exit events (a CR3
 * reused after an exit, an exec into a new CR3); ring files written with the ring writer; the
 * programs of the tasks (linux-prog.S, built by meson as a static executable at 0x10000000
 * and as a PIE) found under --symbols in a made-up root file system. Output is compared with
 * the golden files tests/data/decode-linux*; options that override vm.json, and hostile
 * inputs (System.map with huge lines and garbage, directory loops, ELF files with lying
 * headers), are checked for their one-line warnings and for the output they leave intact.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash-report.h"
#include "crash-symbols.h"
#include "decoder-test.h"
#include "guest-maps.h"
#include "symbols.h"
#include "test-files.h"
#include "test-ring.h"

/* The guest kernel's text is 16 MiB above its link address. */
#define SLIDE 0x1000000ULL
#define K(link) ((link) + SLIDE)
#define ENTRY_SYSCALL K(0xffffffff81001000ULL)
#define DO_SYSCALL K(0xffffffff81002000ULL)
#define SCHEDULE K(0xffffffff81004000ULL)
#define PAGE_FAULT K(0xffffffff81006000ULL)
/* linux-prog.S: _start, work and leaf at these offsets of .text. */
#define STATIC_TEXT 0x10001000ULL
#define PIE_LOAD_BASE 0x555555554000ULL
#define PIE_TEXT (PIE_LOAD_BASE + 0x1000)
#define START 0x00
#define WORK 0x20
#define LEAF 0x40
/* The build IDs meson links them with. */
#define STATIC_BUILD_ID "5747a71c0000000000000000000000000000000a"
#define PIE_BUILD_ID "9e0000000000000000000000000000000000000b"

static const char system_map[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81001000 T entry_SYSCALL_64\n"
	"ffffffff81001100 t entry_SYSCALL_64_after_hwframe\n"
	"ffffffff81002000 T do_syscall_64\n"
	"ffffffff81003000 d some_data\n"
	"ffffffff81004000 T schedule\n"
	"ffffffff81006000 T asm_exc_page_fault\n"
	"ffffffff81007000 T _etext\n";

/*
 * init (pid 1); a shell (pid 50) that execs the static program by build ID and exits; CR3
 * 0x3000000 reused by another shell (pid 51), which execs the PIE (found by its path, at a
 * known load base) and crashes; the static program by its name alone (pid 52: the comm is
 * its first 15 bytes); the PIE without a load base (pid 53).
 */
static const char linux_events[] =
	"{\"time\":10,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"tgid\":1,\"name\":\"init\","
	"\"cr3\":\"0x1000000\"}\n"
	"{\"time\":100,\"vcpu\":0,\"event\":\"task\",\"pid\":50,\"tgid\":50,\"name\":\"sh\","
	"\"cr3\":\"0x2000000\"}\n"
	"{\"time\":200,\"vcpu\":0,\"event\":\"exec\",\"pid\":50,\"tgid\":50,"
	"\"name\":\"vbts-linux-stat\",\"cr3\":\"0x3000000\",\"build_id\":\"" STATIC_BUILD_ID "\"}\n"
	"{\"time\":300,\"vcpu\":0,\"event\":\"exit\",\"pid\":50,\"code\":0}\n"
	"{\"time\":400,\"vcpu\":0,\"event\":\"task\",\"pid\":51,\"tgid\":51,\"name\":\"sh\","
	"\"cr3\":\"0x3000000\"}\n"
	"{\"time\":500,\"vcpu\":0,\"event\":\"exec\",\"pid\":51,\"tgid\":51,"
	"\"name\":\"vbts-linux-pie\",\"cr3\":\"0x4000000\",\"exe\":\"/usr/bin/vbts-linux-pie\","
	"\"load_base\":\"0x555555554000\"}\n"
	"{\"time\":700,\"vcpu\":0,\"event\":\"exit\",\"pid\":51,\"code\":139}\n"
	"{\"time\":800,\"vcpu\":0,\"event\":\"task\",\"pid\":52,\"tgid\":52,"
	"\"name\":\"vbts-linux-stat\",\"cr3\":\"0x5000000\"}\n"
	"{\"time\":900,\"vcpu\":0,\"event\":\"exec\",\"pid\":53,\"tgid\":53,"
	"\"name\":\"vbts-linux-pie\",\"cr3\":\"0x6000000\"}\n";

static const struct vbts_record linux_ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x1000000, 10),
	BR(SCHEDULE + 0x10, SCHEDULE + 0x100, 0, VBTS_BR_JMP),
	BR(0x401000, 0x401100, 3, VBTS_BR_JMP),                 /* no file for init */
	ESC(VBTS_ESC_TASK_DEPART, 0x1000000, 90),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x2000000, 100),
	BR(0x401234, 0x401300, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, 0x2000000, 190),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x3000000, 200),
	BR(STATIC_TEXT + START, STATIC_TEXT + WORK, 3, VBTS_BR_CALL),
	BR(STATIC_TEXT + WORK, STATIC_TEXT + LEAF, 3, VBTS_BR_CALL),
	BR(STATIC_TEXT + LEAF + 1, STATIC_TEXT + WORK + 5, 3, VBTS_BR_RET),
	BR(STATIC_TEXT + WORK + 0xa, ENTRY_SYSCALL, 3, VBTS_BR_SYSCALL),
	BR(ENTRY_SYSCALL + 0x40, DO_SYSCALL, 0, VBTS_BR_CALL),
	BR(ENTRY_SYSCALL + 0x180, STATIC_TEXT + WORK + 0xc, 0, VBTS_BR_SYSRET),
	BR(STATIC_TEXT + WORK + 0xc, STATIC_TEXT + START + 5, 3, VBTS_BR_RET),
	BR(STATIC_TEXT + START + 0xc, ENTRY_SYSCALL, 3, VBTS_BR_SYSCALL),
	ESC(VBTS_ESC_TASK_DEPART, 0x3000000, 290),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x3000000, 400),              /* reused by pid 51 */
	BR(0x401234, 0x401300, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, 0x3000000, 490),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x4000000, 500),
	BR(PIE_TEXT + START, PIE_TEXT + WORK, 3, VBTS_BR_CALL),
	BR(PIE_TEXT + WORK, PIE_TEXT + LEAF, 3, VBTS_BR_CALL),
	BRV(PIE_TEXT + LEAF, PAGE_FAULT, 3, VBTS_BR_EXCEPTION, 14),
	ESC(VBTS_ESC_TASK_DEPART, 0x4000000, 690),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x5000000, 800),
	BR(STATIC_TEXT + START, STATIC_TEXT + WORK, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, 0x5000000, 890),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x6000000, 900),
	BR(PIE_TEXT + START, PIE_TEXT + WORK, 3, VBTS_BR_CALL), /* no load base */
	ESC(VBTS_ESC_STOP, 990, 0),
};

/* The warning of pid 53's PIE (the rest of the line names the file). */
#define NO_LOAD_BASE "1 task runs a PIE or shared object whose load base the events do not " \
		     "give, not symbolized (the first: vbts-linux-pie[53]: "

static void write_vm_json(const char *dir, const char *slide)
{
	char vm[512];

	snprintf(vm, sizeof(vm),
		 "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"kernel\":\"/boot/vmlinuz-test\","
		 "\"system_map\":\"System.map\",%s%s\"vcpus\":1,\"backend\":\"step\"}\n",
		 slide ? "\"kaslr_slide\":" : "", slide ? slide : "");
	test__write_text(dir, "vm.json", vm);
}

/*
 * The trace in @dir (room for 64 bytes), and its guest's root file system DIR/rootfs with the
 * static program in bin/ and the PIE in usr/bin/.
 */
static void make_linux_trace(char *dir)
{
	snprintf(dir, 64, "/tmp/vbts-linux-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, "16777216,");
	test__write_text(dir, "System.map", system_map);
	test__write_text(dir, "events.jsonl", linux_events);
	test__write_ring(dir, 0, 64, linux_ring, sizeof(linux_ring) / sizeof(linux_ring[0]), 0);
	test__make_dir(dir, "rootfs");
	test__make_dir(dir, "rootfs/bin");
	test__make_dir(dir, "rootfs/usr");
	test__make_dir(dir, "rootfs/usr/bin");
	test__copy_file(LINUX_STATIC, dir, "rootfs/bin/vbts-linux-static");
	test__copy_file(LINUX_PIE, dir, "rootfs/usr/bin/vbts-linux-pie");
}

/*
 * Runs `vbts decode ARGS DIR` in a child process; "DIR" and "ROOTFS" in @args stand for the
 * trace and its root file system. Returns the status; @out and @err receive the output.
 */
static int decode_linux(const char *dir, const char *const *args, char **out, char **err)
{
	char rootfs[128], paths[4][256];
	const char *argv[16];
	int argc = 0, np = 0;

	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", dir);
	for (; *args && argc < 14; args++) {
		if (!strcmp(*args, "DIR")) {
			argv[argc++] = dir;
		} else if (!strcmp(*args, "ROOTFS")) {
			argv[argc++] = rootfs;
		} else if (!strncmp(*args, "DIR/", 4) && np < 4) {
			snprintf(paths[np], sizeof(paths[np]), "%s/%s", dir, *args + 4);
			argv[argc++] = paths[np++];
		} else {
			argv[argc++] = *args;
		}
	}
	argv[argc++] = dir;
	argv[argc] = NULL;
	return run_decode_nofile(out, err, 0, argv);
}

static const struct {
	const char *golden;
	const char *args[8];
	bool load_base_warning; /* the only line on stderr; else nothing */
} golden_cases[] = {
	{ "decode-linux.txt", { "--symbols", "ROOTFS", "--lines", "--summary", NULL }, true },
	{ "decode-linux.jsonl", { "--symbols", "ROOTFS", "--format", "jsonl", NULL }, false },
	/* The full name: the comm of pid 50 after its exec, and of pid 52. */
	{ "decode-linux-task-static.txt",
	  { "--symbols", "ROOTFS", "--task", "vbts-linux-static", NULL }, true },
	/* A pid: before and after its exec. */
	{ "decode-linux-task-51.txt", { "--symbols", "ROOTFS", "--task", "51", NULL }, true },
	/* A name each process had before its exec; then --task repeated. */
	{ "decode-linux-task-sh.jsonl", { "--task", "sh", "--format", "jsonl", NULL }, false },
	{ "decode-linux-task-1-52.txt",
	  { "--symbols", "ROOTFS", "--task", "1", "--task", "52", NULL }, true },
	{ "decode-linux-crashed.txt", { "--symbols", "ROOTFS", "--crashed", NULL }, true },
	/* Without --symbols: kernel symbols only. */
	{ "decode-linux-kernel.txt", { "--cpl", "kernel", NULL }, false },
};

START_TEST(test_linux_golden)
{
	char dir[64], *out, *err;
	int status;

	make_linux_trace(dir);
	status = decode_linux(dir, golden_cases[_i].args, &out, &err);
	ck_assert_msg(status == 0, "exit %d: %s", status, err);
	if (golden_cases[_i].load_base_warning) {
		ck_assert_msg(!strncmp(err, "vbts decode: warning: " NO_LOAD_BASE,
				       strlen("vbts decode: warning: " NO_LOAD_BASE)), "%s", err);
		ck_assert_msg(strstr(err, "/rootfs/usr/bin/vbts-linux-pie)\n"), "%s", err);
		ck_assert_uint_eq(test__count_lines(err), 1);
	} else {
		ck_assert_str_eq(err, "");
	}
	assert_printable(out, SIZE_MAX);
	compare_golden(golden_cases[_i].golden, out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * A CR3 used again: the summary names each CR3 by the task that had it when it first arrived
 * in the trace, not by its first owner in events.jsonl (a process selected by --task runs in
 * an address space an earlier, unrecorded one had).
 */
START_TEST(test_linux_summary_reused_cr3)
{
	static const char events[] =
		"{\"time\":10,\"vcpu\":0,\"event\":\"task\",\"pid\":60,\"tgid\":60,"
		"\"name\":\"first\",\"cr3\":\"0x7000000\"}\n"
		"{\"time\":20,\"vcpu\":0,\"event\":\"exit\",\"pid\":60,\"code\":0}\n"
		"{\"time\":30,\"vcpu\":0,\"event\":\"task\",\"pid\":61,\"tgid\":61,"
		"\"name\":\"second\",\"cr3\":\"0x7000000\"}\n"
		"{\"time\":60,\"vcpu\":0,\"event\":\"exit\",\"pid\":61,\"code\":139}\n";
	static const struct vbts_record ring[] = {
		ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
		ESC(VBTS_ESC_TASK_ARRIVE, 0x7000000, 40),
		BR(0x401000, 0x401100, 3, VBTS_BR_JMP),
		ESC(VBTS_ESC_TASK_DEPART, 0x7000000, 50),
	};
	static const char *const args[] = { "--summary", NULL };
	char dir[64], *out, *err;

	snprintf(dir, sizeof(dir), "/tmp/vbts-linux-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, "16777216,");
	test__write_text(dir, "events.jsonl", events);
	test__write_ring(dir, 0, 64, ring, sizeof(ring) / sizeof(ring[0]), 0);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(out, "\ntasks: second[61] (exit 139)\n"), "%s", out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * The symbols vm.json's kaslr_slide and System.map give, overridden by options; a slide
 * unknown until --kaslr-slide gives it.
 */
static const struct {
	const char *vm_slide;   /* the "kaslr_slide" member with its comma, or NULL */
	const char *args[6];
	int status;
	const char *want;       /* in stdout */
	const char *warning;    /* in stderr, or NULL for none */
	unsigned int lines;     /* of stderr */
} slide_cases[] = {
	{ "16777216,", { NULL }, 0, "0xffffffff82001000 entry_SYSCALL_64+0x0", NULL },
	{ NULL, { NULL }, 0, "=>  0xffffffff82001000  (syscall)",
	  "the guest kernel's KASLR slide is unknown (no kaslr_slide in vm.json), kernel "
	  "addresses not symbolized; --kaslr-slide gives it", 1 },
	{ NULL, { "--kaslr-slide", "0x1000000", NULL }, 0,
	  "0xffffffff82001000 entry_SYSCALL_64+0x0", NULL },
	{ "16777216,", { "--kaslr-slide", "16773120", NULL }, 0,
	  "0xffffffff82001000 do_syscall_64+0x0", NULL },
	{ "16777216,", { "--kaslr-slide", "0x1000100", NULL }, 0,
	  "0xffffffff82001000 _stext+0xf00", NULL },
	/* Beyond the last symbol, which covers its own address only. */
	{ "16777216,", { "--kaslr-slide", "0", NULL }, 0, "0xffffffff82001000 [unknown]", NULL },
	{ "16777216,", { "--kaslr-slide", "-0x1000", NULL }, 0, "0xffffffff82001000 [unknown]",
	  NULL },
	{ "\"0x1000000\",", { NULL }, 2, "=>  0xffffffff82001000  (syscall)",
	  "vm.json: kaslr_slide is not an integer; ignored", 2 },
	{ "16777216,", { "--system-map", "DIR/other.map", NULL }, 0,
	  "0xffffffff82001000 other_entry+0x0", NULL },
	/* An option naming a file that is not there: reported, the rest decoded. */
	{ "16777216,", { "--system-map", "DIR/missing.map", NULL }, 2,
	  "=>  0xffffffff82001000  (syscall)",
	  "missing.map: No such file or directory, kernel addresses not symbolized from it", 1 },
	/* A FIFO is never opened. */
	{ "16777216,", { "--system-map", "DIR/fifo", NULL }, 2,
	  "=>  0xffffffff82001000  (syscall)",
	  "fifo: not a regular file (a FIFO), kernel addresses not symbolized from it", 1 },
	{ "16777216,", { "--kaslr-slide", "0x", NULL }, 2, NULL, "bad --kaslr-slide '0x'", 1 },
	{ "16777216,", { "--kaslr-slide", "12abc", NULL }, 2, NULL, "bad --kaslr-slide '12abc'",
	  1 },
	{ "16777216,", { "--kaslr-slide", "99999999999999999999", NULL }, 2, NULL,
	  "bad --kaslr-slide", 1 },
};

START_TEST(test_linux_slide)
{
	char dir[64], path[128], *out, *err;
	int status;

	make_linux_trace(dir);
	write_vm_json(dir, slide_cases[_i].vm_slide);
	test__write_text(dir, "other.map", "ffffffff81001000 T other_entry\n");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	status = decode_linux(dir, slide_cases[_i].args, &out, &err);
	ck_assert_msg(status == slide_cases[_i].status, "exit %d: %s", status, err);
	if (slide_cases[_i].want)
		ck_assert_msg(strstr(out, slide_cases[_i].want), "stdout lacks '%s':\n%s",
			      slide_cases[_i].want, out);
	else
		ck_assert_str_eq(out, "");
	if (slide_cases[_i].warning)
		ck_assert_msg(strstr(err, slide_cases[_i].warning), "stderr: %s", err);
	else
		ck_assert_str_eq(err, "");
	ck_assert_uint_eq(test__count_lines(err), slide_cases[_i].lines);
	assert_printable(err, slide_cases[_i].lines);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * vm.json's vmlinux: an ELF file with symbols and DWARF, tried before System.map at the same
 * slide. The static program stands in for it: linked at 0x10000000 and shifted by
 * 0xffffffff72000000 (a negative slide), its _start is where entry_SYSCALL_64 runs and its
 * label __bss_start (end of data) where do_syscall_64 does.
 */
START_TEST(test_linux_vmlinux)
{
	const char *const args[] = { "--lines", NULL };
	char vm[1024], dir[64], *out, *err;

	make_linux_trace(dir);
	/* The System.map of the same kernel: where vmlinux has symbols, they are taken. */
	test__write_text(dir, "System.map", "0000000010001000 T map_start\n"
					    "0000000010004000 T map_only\n"
					    "0000000010005000 T map_end\n");
	snprintf(vm, sizeof(vm),
		 "{\"version\":1,\"kernel\":\"/boot/vmlinuz\",\"system_map\":\"System.map\","
		 "\"vmlinux\":\"%s\",\"kaslr_slide\":%lld,\"vcpus\":1}\n", LINUX_STATIC,
		 (long long)(ENTRY_SYSCALL - STATIC_TEXT));
	test__write_text(dir, "vm.json", vm);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_str_eq(err, "");
	/* vmlinux first, with its source lines; System.map where vmlinux has no symbol. */
	ck_assert_msg(strstr(out, "0x1000102a [unknown]  =>  0xffffffff82001000 _start+0x0 "
				  "(linux-prog.S:13)  (syscall)\n"), "%s", out);
	ck_assert_msg(strstr(out, "0xffffffff82001040 leaf+0x0 (linux-prog.S:32)  =>  "
				  "0xffffffff82002000 __bss_start+0x0  (call)\n"), "%s", out);
	ck_assert_msg(strstr(out, "0xffffffff82004010 map_only+0x10  =>  0xffffffff82004100 "
				  "map_only+0x100  (jmp)\n"), "%s", out);
	ck_assert_msg(strstr(out, "0xffffffff82001180 map_start+0x180  =>  0x1000102c [unknown]"),
		      "%s", out);
	ck_assert_ptr_null(strstr(out, "map_start+0x0 "));
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* ---- hostile inputs ------------------------------------------------------------------------ */

/* A System.map of 4 MiB lines, garbage and NUL bytes between good lines. */
static void write_hostile_map(const char *dir)
{
	size_t huge = 4u << 20, len = 0, cap = huge + sizeof(system_map) + 4096;
	char *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	memset(buf, 'x', huge);
	len = huge;
	buf[len++] = '\n';
	for (int i = 0; i < 1000; i++)                          /* no newline among them */
		buf[len++] = (char)((i * 151 + 7) | 0x80);
	buf[len++] = '\n';
	memcpy(buf + len, "ffffffff81000000 T nul\0byte\n", 28);
	len += 28;
	memcpy(buf + len, system_map, sizeof(system_map) - 1);
	len += sizeof(system_map) - 1;
	memset(buf + len, 'y', 2000);
	len += 2000;
	test__write_file(dir, "System.map", buf, len);
	free(buf);
}

/*
 * Bad System.map contents: the kernel symbols that are there are used, the rest is one
 * warning line; the other records are decoded as with a good map.
 */
START_TEST(test_linux_hostile_map)
{
	const char *const args[] = { "--symbols", "ROOTFS", NULL };
	char dir[64], *out, *err, *good, *gerr;

	make_linux_trace(dir);
	ck_assert_int_eq(decode_linux(dir, args, &good, &gerr), 0);
	write_hostile_map(dir);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_str_eq(out, good);
	ck_assert_msg(strstr(err, "/System.map: 4 malformed lines ignored (the first is line 1)\n"),
		      "%s", err);
	ck_assert_uint_eq(test__count_lines(err), 2);        /* and pid 53's load base */
	assert_printable(err, 2);
	free(out);
	free(err);

	/* Garbage only: no symbols from it, one line that says so. */
	test__write_file(dir, "System.map", "\x7f" "ELF\x01\x02\x03\xff\xfe\n\n\x1b[2J", 14);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(out, "0xffffffff82001000 [unknown]"), "%s", out);
	ck_assert_msg(strstr(err, "/System.map: 3 malformed lines ignored (the first is line 1)\n"),
		      "%s", err);
	ck_assert_msg(strstr(err, "/System.map: no text symbols, kernel addresses not "
				  "symbolized from it\n"), "%s", err);
	assert_printable(err, 3);
	free(out);
	free(err);
	free(good);
	free(gerr);
	remove_trace(dir);
}
END_TEST

/*
 * Directories that loop through symbolic links, links to files and directories already
 * searched, dangling links and FIFOs: the same symbols as the plain root file system, and one
 * line for the loops.
 */
START_TEST(test_linux_symbols_loops)
{
	const char *const args[] = { "--symbols", "ROOTFS", "--symbols", "ROOTFS", NULL };
	const char *const plain[] = { "--symbols", "ROOTFS", NULL };
	char dir[64], path[256], target[256], *out, *err, *good, *gerr;
	static const char *const links[][2] = {
		{ "rootfs/self", "." },
		{ "rootfs/usr/up", ".." },
		{ "rootfs/usr/bin/root", "../.." },
		{ "rootfs/usr/sbin", "bin" },                   /* searched once */
		{ "rootfs/bin/again", "vbts-linux-static" },    /* one file, two paths */
		{ "rootfs/dangling", "/nonexistent/file" },
	};

	make_linux_trace(dir);
	ck_assert_int_eq(decode_linux(dir, plain, &good, &gerr), 0);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, links[i][0]);
		snprintf(target, sizeof(target), "%s", links[i][1]);
		ck_assert_int_eq(symlink(target, path), 0);
	}
	snprintf(path, sizeof(path), "%s/rootfs/bin/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_str_eq(out, good);
	ck_assert_msg(strstr(err, "/rootfs: 3 symbolic links back to a directory being searched, "
				  "not followed (the first: "), "%s", err);
	ck_assert_uint_eq(test__count_lines(err), 2);        /* and pid 53's load base */
	assert_printable(err, 2);
	free(out);
	free(err);
	free(good);
	free(gerr);
	remove_trace(dir);
}
END_TEST

/* A --symbols PATH that cannot be used: one line, exit 2, everything else decoded. */
static const struct {
	const char *path;       /* "DIR/..." inside the trace */
	const char *error;
} bad_paths[] = {
	{ "/nonexistent/rootfs", "--symbols /nonexistent/rootfs: No such file or directory, "
				 "not searched" },
	{ "DIR/events.jsonl", "/events.jsonl: not an ELF executable or shared object, not "
			      "searched" },
	{ "DIR/fifo", "/fifo: neither a directory nor a regular file, not searched" },
	{ "DIR/vcpu0.ring", "/vcpu0.ring: not an ELF executable or shared object" },
};

START_TEST(test_linux_symbols_bad_path)
{
	const char *const plain[] = { "--symbols", "ROOTFS", NULL };
	const char *args[] = { "--symbols", "ROOTFS", "--symbols", NULL, NULL };
	char dir[64], path[256], *out, *err, *good, *gerr;

	make_linux_trace(dir);
	ck_assert_int_eq(decode_linux(dir, plain, &good, &gerr), 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	if (!strncmp(bad_paths[_i].path, "DIR/", 4))
		snprintf(path, sizeof(path), "%s/%s", dir, bad_paths[_i].path + 4);
	else
		snprintf(path, sizeof(path), "%s", bad_paths[_i].path);
	args[3] = path;
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 2);
	ck_assert_str_eq(out, good);
	ck_assert_msg(strstr(err, bad_paths[_i].error), "%s", err);
	ck_assert_uint_eq(test__count_lines(err), 2);        /* and pid 53's load base */
	assert_printable(err, 2);
	free(out);
	free(err);
	free(good);
	free(gerr);
	remove_trace(dir);
}
END_TEST

/* ---- ELF files with lying headers ------------------------------------------------------------ */

enum lie {
	LIE_SHOFF,              /* the section header table beyond the end of the file */
	LIE_SHNUM,              /* 65535 section headers */
	LIE_SHSTRNDX,           /* the section name table a section that does not exist */
	LIE_SYMTAB_OFFSET,      /* the symbol table beyond the end of the file */
	LIE_SYMTAB_SIZE,        /* the symbol table 4 GiB long */
	LIE_SYMTAB_LINK,        /* the symbol table's strings in a section that does not exist */
	LIE_SYMTAB_ENTSIZE,     /* symbol table entries of 1 byte */
	LIE_PHOFF,              /* the program headers beyond the end of the file */
	LIE_NOTE_SIZE,          /* the build ID note longer than its section */
	LIE_CLASS,              /* neither ELF32 nor ELF64 */
	LIE_TRUNCATED,          /* the file cut inside its ELF header */
	LIE_MAX
};

static uint64_t get_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put_le(unsigned char *p, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

/* The section header of type @type in an ELF64 image. */
static unsigned char *find_section(unsigned char *im, uint32_t type)
{
	uint64_t shoff = get_le(im + offsetof(Elf64_Ehdr, e_shoff), 8);
	unsigned int shnum = (unsigned int)get_le(im + offsetof(Elf64_Ehdr, e_shnum), 2);

	for (unsigned int i = 1; i < shnum; i++) {
		unsigned char *sh = im + shoff + i * sizeof(Elf64_Shdr);

		if (get_le(sh + offsetof(Elf64_Shdr, sh_type), 4) == type)
			return sh;
	}
	ck_abort_msg("no section of type %u", type);
	return NULL;
}

/* Tells @l about the ELF image @im of *@len bytes, in place. */
static void lie(unsigned char *im, size_t *lenp, enum lie l)
{
	size_t len = *lenp;
	unsigned char *sh;

	switch (l) {
	case LIE_SHOFF:
		put_le(im + offsetof(Elf64_Ehdr, e_shoff), 8, len + 0x1000);
		break;
	case LIE_SHNUM:
		put_le(im + offsetof(Elf64_Ehdr, e_shnum), 2, 0xffff);
		break;
	case LIE_SHSTRNDX:
		put_le(im + offsetof(Elf64_Ehdr, e_shstrndx), 2, 0xfff0);
		break;
	case LIE_SYMTAB_OFFSET:
		sh = find_section(im, SHT_SYMTAB);
		put_le(sh + offsetof(Elf64_Shdr, sh_offset), 8, len + 0x100000);
		break;
	case LIE_SYMTAB_SIZE:
		sh = find_section(im, SHT_SYMTAB);
		put_le(sh + offsetof(Elf64_Shdr, sh_size), 8, 0xffffffffULL);
		break;
	case LIE_SYMTAB_LINK:
		sh = find_section(im, SHT_SYMTAB);
		put_le(sh + offsetof(Elf64_Shdr, sh_link), 4, 0x7ffffff0);
		break;
	case LIE_SYMTAB_ENTSIZE:
		sh = find_section(im, SHT_SYMTAB);
		put_le(sh + offsetof(Elf64_Shdr, sh_entsize), 8, 1);
		break;
	case LIE_PHOFF:
		put_le(im + offsetof(Elf64_Ehdr, e_phoff), 8, 0xfffffffffff0ULL);
		break;
	case LIE_NOTE_SIZE:
		sh = find_section(im, SHT_NOTE);
		put_le(im + get_le(sh + offsetof(Elf64_Shdr, sh_offset), 8) + 4, 4, 0x7ffffff0);
		break;
	case LIE_CLASS:
		im[EI_CLASS] = 0x33;
		break;
	case LIE_TRUNCATED:
		*lenp = 40;
		break;
	default:
		break;
	}
}

/*
 * Both programs with one lie each, in the root file system: decoding neither crashes nor
 * reads out of bounds (run under valgrind and ASan too), warns in printable lines, and the
 * records come out as before, their addresses with the symbols the lying file still gives
 * or none.
 */
START_TEST(test_linux_lying_elf)
{
	const char *const args[] = { "--symbols", "ROOTFS", "--lines", NULL };
	char dir[64], *out, *err, *good, *gerr;
	unsigned char *st, *pie;
	size_t st_len, pie_len;

	make_linux_trace(dir);
	ck_assert_int_eq(decode_linux(dir, args, &good, &gerr), 0);
	st = test__slurp(LINUX_STATIC, &st_len);
	pie = test__slurp(LINUX_PIE, &pie_len);
	lie(st, &st_len, (enum lie)_i);
	lie(pie, &pie_len, (enum lie)_i);
	test__write_file(dir, "rootfs/bin/vbts-linux-static", st, st_len);
	test__write_file(dir, "rootfs/usr/bin/vbts-linux-pie", pie, pie_len);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	assert_printable(err, 10);
	assert_printable(out, test__count_lines(good));
	ck_assert_uint_eq(test__count_lines(out), test__count_lines(good));
	/* The kernel's symbols do not depend on the programs. */
	ck_assert_msg(strstr(out, "0xffffffff82001000 entry_SYSCALL_64+0x0"), "%s", out);
	free(out);
	free(err);
	free(good);
	free(gerr);
	free(st);
	free(pie);
	remove_trace(dir);
}
END_TEST

/* Warnings the lies give, checked where they are certain. */
START_TEST(test_linux_lying_elf_warnings)
{
	const char *const args[] = { "--symbols", "ROOTFS", NULL };
	char dir[64], *out, *err;
	unsigned char *im;
	size_t len;

	make_linux_trace(dir);
	/* Headers libelf cannot read: skipped when searched, with one line for both. */
	im = test__slurp(LINUX_STATIC, &len);
	lie(im, &len, LIE_CLASS);
	test__write_file(dir, "rootfs/bin/vbts-linux-static", im, len);
	free(im);
	im = test__slurp(LINUX_PIE, &len);
	lie(im, &len, LIE_TRUNCATED);
	test__write_file(dir, "rootfs/usr/bin/vbts-linux-pie", im, len);
	free(im);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "/rootfs: 2 ELF files whose headers cannot be read, skipped "
				  "(the first: "), "%s", err);
	ck_assert_uint_eq(test__count_lines(err), 1);
	ck_assert_msg(strstr(out, "vbts-linux-stat[50] 0x10001000 [unknown]  =>  0x10001020 "
				  "[unknown]"), "%s", out);
	free(out);
	free(err);

	/* The section header table out of the file: no sections, so no symbols, one line. */
	test__copy_file(LINUX_PIE, dir, "rootfs/usr/bin/vbts-linux-pie");
	im = test__slurp(LINUX_STATIC, &len);
	lie(im, &len, LIE_SHOFF);
	test__write_file(dir, "rootfs/bin/vbts-linux-static", im, len);
	free(im);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "/rootfs/bin/vbts-linux-static: no symbol table\n"), "%s", err);
	ck_assert_uint_eq(test__count_lines(err), 2);        /* and pid 53's load base */
	ck_assert_msg(strstr(out, "vbts-linux-stat[50] 0x10001000 [unknown]  =>  0x10001020 "
				  "[unknown]"), "%s", out);
	free(out);
	free(err);

	/* A PIE whose program headers cannot be read has no load base to measure from. */
	test__copy_file(LINUX_STATIC, dir, "rootfs/bin/vbts-linux-static");
	im = test__slurp(LINUX_PIE, &len);
	lie(im, &len, LIE_PHOFF);
	test__write_file(dir, "rootfs/usr/bin/vbts-linux-pie", im, len);
	free(im);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "1 task: a PIE or shared object without a loadable segment, "
				  "not symbolized (the first: vbts-linux-pie[51]: "), "%s", err);
	ck_assert_msg(strstr(out, "vbts-linux-pie[51] 0x555555555000 [unknown]"), "%s", out);
	free(out);
	free(err);

	/* A symbol table out of the file: loaded without symbols, and said so. */
	test__copy_file(LINUX_PIE, dir, "rootfs/usr/bin/vbts-linux-pie");
	im = test__slurp(LINUX_STATIC, &len);
	lie(im, &len, LIE_SYMTAB_OFFSET);
	test__write_file(dir, "rootfs/bin/vbts-linux-static", im, len);
	free(im);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "/rootfs/bin/vbts-linux-static: no symbol table\n"), "%s", err);
	ck_assert_msg(strstr(err, "/rootfs/bin/vbts-linux-static: section 9 (.symtab): "), "%s",
		      err);
	ck_assert_msg(strstr(out, "vbts-linux-stat[50] 0x10001000 [unknown]"), "%s", out);
	assert_printable(err, 3);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* ---- the agent's mappings and the build-ID store ------------------------------------------- */

/*
 * The agent's reports, as the VMM stores them: pid 53 (its PIE without a load base in the
 * exec event) has the PIE's code segment (file offset 0x1000) at 0x555555555000; pid 51 has
 * the static program's code segment there, as a library loaded 0x5555 4555 4000 above its
 * link address would be: its symbols shifted by that bias.
 */
#define AGENT_MAP(time, pid, path, id)                                                     \
	"{\"time\":" #time ",\"vcpu\":0,\"event\":\"agent-map\",\"v\":1,\"pid\":" #pid ","     \
	"\"start\":\"0x555555555000\",\"end\":\"0x555555556000\",\"offset\":\"0x1000\","       \
	"\"path\":\"" path "\",\"build_id\":\"" id "\"}\n"

static const char agent_maps[] =
	AGENT_MAP(950, 53, "/usr/bin/vbts-linux-pie", PIE_BUILD_ID)
	AGENT_MAP(600, 51, "/lib/libstatic.so", STATIC_BUILD_ID)
	/* Garbage the guest may send: counted, never used. */
	"{\"time\":960,\"vcpu\":0,\"event\":\"agent-map\",\"v\":1,\"pid\":53,"
	"\"start\":\"0x7000\",\"end\":\"0x6000\",\"offset\":\"0x0\",\"path\":\"/x\","
	"\"build_id\":\"" PIE_BUILD_ID "\"}\n"
	"{\"time\":961,\"vcpu\":0,\"event\":\"agent-map\",\"v\":1,\"pid\":53,"
	"\"start\":\"0x1000\",\"end\":\"0x2000\",\"offset\":\"0x0\",\"path\":\"/x\","
	"\"build_id\":\"../../etc\"}\n";

/* The trace of make_linux_trace() with the agent's mappings and the store holding @pie and
 * @stat as the PIE's and the static program's files. */
static void make_agent_trace(char *dir, const void *pie, size_t pie_len, const void *stat,
			     size_t stat_len)
{
	char events[sizeof(linux_events) + sizeof(agent_maps)];

	make_linux_trace(dir);
	snprintf(events, sizeof(events), "%s%s", linux_events, agent_maps);
	test__write_text(dir, "events.jsonl", events);
	test__make_dir(dir, "debuginfod");
	test__make_dir(dir, "debuginfod/" PIE_BUILD_ID);
	test__make_dir(dir, "debuginfod/" STATIC_BUILD_ID);
	test__write_file(dir, "debuginfod/" PIE_BUILD_ID "/executable", pie, pie_len);
	test__write_file(dir, "debuginfod/" STATIC_BUILD_ID "/executable", stat, stat_len);
}

/*
 * No --symbols: the user addresses of pid 53 and 51 are named, with their source lines, by
 * the store's files at the mappings the agent reported; the other tasks stay unnamed. Then a
 * file in the store whose build ID is not its directory's names nothing, in one line.
 */
START_TEST(test_linux_agent_maps)
{
	const char *const args[] = { "--lines", NULL };
	char dir[64], *out, *err;
	unsigned char *pie, *st;
	size_t pie_len, st_len;

	pie = test__slurp(LINUX_PIE, &pie_len);
	st = test__slurp(LINUX_STATIC, &st_len);
	make_agent_trace(dir, pie, pie_len, st, st_len);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(out, "vbts-linux-pie[53] 0x555555555000 _start+0x0 (linux-prog.S:13)"
				  "  =>  0x555555555020 work+0x0 (linux-prog.S:23)"), "%s", out);
	ck_assert_msg(strstr(out, "vbts-linux-pie[51] 0x555555555040 leaf+0x0 (linux-prog.S:32)"),
		      "%s", out);
	ck_assert_msg(strstr(out, "vbts-linux-stat[52] 0x10001000 [unknown]"), "%s", out);
	ck_assert_msg(strstr(err, "2 agent-map events not used"), "%s", err);
	assert_printable(err, 3);
	free(out);
	free(err);

	/* The static program under the PIE's build ID: refused, whatever the agent says. */
	test__write_file(dir, "debuginfod/" PIE_BUILD_ID "/executable", st, st_len);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "/debuginfod/" PIE_BUILD_ID "/executable: not used: its build "
				  "ID is " STATIC_BUILD_ID "\n"), "%s", err);
	ck_assert_msg(strstr(out, "vbts-linux-pie[53] 0x555555555000 [unknown]"), "%s", out);
	ck_assert_msg(strstr(out, "vbts-linux-pie[51] 0x555555555040 leaf+0x0"), "%s", out);
	free(out);
	free(err);
	free(pie);
	free(st);
	remove_trace(dir);
}
END_TEST

/*
 * Lying ELF files in the store (each lie of test_linux_lying_elf): decoding neither crashes
 * nor reads out of bounds, warns in printable lines and prints every record.
 */
START_TEST(test_linux_agent_lying_elf)
{
	const char *const args[] = { "--lines", NULL };
	char dir[64], *out, *err, *good, *gerr;
	unsigned char *pie, *st;
	size_t pie_len, st_len;

	pie = test__slurp(LINUX_PIE, &pie_len);
	st = test__slurp(LINUX_STATIC, &st_len);
	make_agent_trace(dir, pie, pie_len, st, st_len);
	ck_assert_int_eq(decode_linux(dir, args, &good, &gerr), 0);
	lie(pie, &pie_len, (enum lie)_i);
	lie(st, &st_len, (enum lie)_i);
	test__write_file(dir, "debuginfod/" PIE_BUILD_ID "/executable", pie, pie_len);
	test__write_file(dir, "debuginfod/" STATIC_BUILD_ID "/executable", st, st_len);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	assert_printable(err, 10);
	assert_printable(out, test__count_lines(good));
	ck_assert_uint_eq(test__count_lines(out), test__count_lines(good));
	free(out);
	free(err);
	free(good);
	free(gerr);
	free(pie);
	free(st);
	remove_trace(dir);
}
END_TEST

/*
 * The crash report of pid 51 (its PIE's code is the "library" the agent reported at
 * 0x555555555000): written with the decoder's annotation, its branches carry function, line
 * and module; `vbts decode --crash` prints them, and still does once the store is gone (the
 * report keeps what was known when it was written).
 */
START_TEST(test_linux_agent_crash)
{
	const char *const args[] = { "--crash", NULL };
	struct vbts_record br[] = {
		BR(PIE_TEXT + START, PIE_TEXT + WORK, 3, VBTS_BR_CALL),
		BR(PIE_TEXT + WORK, PIE_TEXT + LEAF, 3, VBTS_BR_CALL),
		BRV(PIE_TEXT + LEAF, PAGE_FAULT, 3, VBTS_BR_EXCEPTION, 14),
	};
	struct crash_report r = {
		.kind = CRASH_PROCESS, .signo = 11, .time_ns = 700, .cr3 = 0x4000000,
		.have_process = true, .pid = 51, .tgid = 51, .comm = "vbts-linux-pie",
		.branches = br, .nr_branches = 3, .requested = 3,
	};
	char dir[64], path[128], *out, *err;
	unsigned char *pie, *st;
	size_t pie_len, st_len;
	json_t *o, *last;

	pie = test__slurp(LINUX_PIE, &pie_len);
	st = test__slurp(LINUX_STATIC, &st_len);
	make_agent_trace(dir, pie, pie_len, st, st_len);
	crash_report__set_annotate(crash_symbols__annotate);
	ck_assert_int_eq(crash_report__write(dir, 0, &r), 0);
	crash_report__set_annotate(NULL);
	snprintf(path, sizeof(path), "%s/crash.json", dir);
	o = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(o);
	last = json_object_get(json_array_get(json_object_get(o, "branches"), 2), "from_symbol");
	ck_assert_str_eq(json_string_value(json_object_get(last, "function")), "leaf");
	ck_assert_str_eq(json_string_value(json_object_get(last, "offset")), "0x0");
	ck_assert_str_eq(json_string_value(json_object_get(last, "file")), "linux-prog.S");
	ck_assert_int_eq(json_integer_value(json_object_get(last, "line")), 32);
	ck_assert_str_eq(json_string_value(json_object_get(last, "module")), "/lib/libstatic.so");
	/* The kernel's System.map: named, without a line. */
	last = json_object_get(json_array_get(json_object_get(o, "branches"), 2), "to_symbol");
	ck_assert_str_eq(json_string_value(json_object_get(last, "function")),
			 "asm_exc_page_fault");
	ck_assert_ptr_null(json_object_get(last, "line"));
	json_decref(o);

	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
		ck_assert_msg(strstr(out, "\ncrashed in leaf at linux-prog.S:32 in /lib/libstatic.so: "
					  "its last branch left user code at 0x555555555040 leaf+0x0 "
					  "for the kernel: exception 14"), "%s", out);
		ck_assert_msg(strstr(out, "  #1   0x555555555040 leaf+0x0 at linux-prog.S:32 in "
					  "/lib/libstatic.so (call)\n       from 0x555555555020 "
					  "work+0x0 at linux-prog.S:23 in /lib/libstatic.so\n"), "%s",
			      out);
		free(out);
		free(err);
		/* The store gone: the report still says it. */
		snprintf(path, sizeof(path), "%s/debuginfod/" STATIC_BUILD_ID "/executable", dir);
		unlink(path);
	}
	free(pie);
	free(st);
	remove_trace(dir);
}
END_TEST

/* One load per build ID, however many processes map the file; a bias per mapping. */
START_TEST(test_linux_agent_one_load)
{
	char dir[64], store[96], line[512];
	struct guest_maps *gm;
	uint64_t bias;

	make_agent_trace(dir, "", 0, "", 0);
	test__copy_file(LINUX_PIE, dir, "debuginfod/" PIE_BUILD_ID "/executable");
	snprintf(store, sizeof(store), "%s/debuginfod", dir);
	gm = guest_maps__new(store, NULL, NULL);
	ck_assert_ptr_nonnull(gm);
	for (int pid = 100; pid < 150; pid++) {
		snprintf(line, sizeof(line),
			 "{\"time\":%d,\"event\":\"agent-map\",\"pid\":%d,\"start\":\"0x%x000\","
			 "\"end\":\"0x%x000\",\"offset\":\"0x1000\",\"path\":\"/p\","
			 "\"build_id\":\"%s\"}", pid, pid, pid, pid + 1, PIE_BUILD_ID);
		ck_assert_int_eq(guest_maps__add_line(gm, line), 0);
	}
	ck_assert_uint_eq(guest_maps__nr(gm), 50);
	for (size_t i = 0; i < guest_maps__nr(gm); i++) {
		const struct guest_map *m = guest_maps__get(gm, i);

		ck_assert_ptr_nonnull(guest_maps__table(gm, m, &bias));
		/* The code segment's link address is 0x1000. */
		ck_assert_uint_eq(bias, m->start - 0x1000);
	}
	ck_assert_uint_eq(guest_maps__files_loaded(gm), 1);
	guest_maps__free(gm);
	remove_trace(dir);
}
END_TEST

/* ---- file choice ------------------------------------------------------------------------------ */

/*
 * Files that cannot decide a task's program: two different files by one name, and a file by
 * name whose build ID is not the task's. Nothing is guessed.
 */
START_TEST(test_linux_ambiguous)
{
	const char *const args[] = { "--symbols", "ROOTFS", NULL };
	char dir[64], *out, *err;

	make_linux_trace(dir);
	/* A second, different vbts-linux-static: pid 52 (by name only) has no program. */
	test__make_dir(dir, "rootfs/opt");
	test__copy_file(LINUX_PIE, dir, "rootfs/opt/vbts-linux-static");
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "1 task matches different ELF files by path or name, not "
				  "symbolized (the first: vbts-linux-stat[52]: "), "%s", err);
	ck_assert_msg(strstr(out, "vbts-linux-stat[52] 0x10001000 [unknown]"), "%s", out);
	/* pid 50 has a build ID: found all the same. */
	ck_assert_msg(strstr(out, "vbts-linux-stat[50] 0x10001000 _start+0x0"), "%s", out);
	free(out);
	free(err);
	remove_trace(dir);

	/* The static program by name, and the task's build ID is another one. */
	make_linux_trace(dir);
	test__write_text(dir, "events.jsonl",
		"{\"time\":800,\"event\":\"exec\",\"pid\":52,\"tgid\":52,"
		"\"name\":\"vbts-linux-stat\",\"cr3\":\"0x5000000\",\"build_id\":\"0badc0de\"}\n");
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_msg(strstr(err, "1 task: the ELF file of the same path or name has another "
				  "build ID, not symbolized (the first: vbts-linux-stat[52]: "), "%s",
		      err);
	ck_assert_msg(strstr(err, " has " STATIC_BUILD_ID ", the task 0badc0de)"), "%s", err);
	ck_assert_msg(strstr(out, "vbts-linux-stat[52] 0x10001000 [unknown]"), "%s", out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* One file given by itself: found by name; and its guest path is its own path. */
START_TEST(test_linux_symbols_file)
{
	const char *const args[] = { "--symbols", LINUX_STATIC, NULL };
	char dir[64], *out, *err;

	make_linux_trace(dir);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	ck_assert_str_eq(err, "");
	ck_assert_msg(strstr(out, "vbts-linux-stat[52] 0x10001000 _start+0x0  =>  0x10001020 "
				  "work+0x0"), "%s", out);
	ck_assert_msg(strstr(out, "vbts-linux-stat[50] 0x10001020 work+0x0  =>  0x10001040 "
				  "leaf+0x0"), "%s", out);
	ck_assert_msg(strstr(out, "vbts-linux-pie[51] 0x555555555000 [unknown]"), "%s", out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* ---- Debian's kernel ------------------------------------------------------------------------ */

int debian_kernel_file(const char *what, char *path, size_t len)
{
	const char *build = getenv("VBTS_BUILD_DIR");
	char rel_path[512], rel[128] = "";
	FILE *f;

	if (!build)
		return -ENOENT;
	snprintf(rel_path, sizeof(rel_path), "%s/harness/kernel-release", build);
	f = fopen(rel_path, "r");
	if (!f)
		return -ENOENT;
	if (!fgets(rel, sizeof(rel), f))
		rel[0] = '\0';
	fclose(f);
	rel[strcspn(rel, "\n")] = '\0';
	if (!rel[0])
		return -ENOENT;
	if (!strcmp(what, "System.map"))
		snprintf(path, len, "%s/harness/%s/root/boot/System.map-%s", build, rel, rel);
	else
		snprintf(path, len, "%s/harness/%s/%s", build, rel, what);
	return access(path, R_OK) ? -errno : 0;
}

/* Text symbols of a System.map as the test reads it: address and name per line. */
struct map_entry {
	uint64_t addr;
	char name[128];
};

static size_t read_text_symbols(const char *path, struct map_entry **out)
{
	size_t n = 0, alloc = 0;
	char line[1100], type;
	struct map_entry e, *p;
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	*out = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %127s", &e.addr, &type, e.name) != 3 ||
		    !strchr("TtWw", type))
			continue;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 4096;
			p = realloc(*out, alloc * sizeof(*p));
			ck_assert_ptr_nonnull(p);
			*out = p;
		}
		(*out)[n++] = e;
	}
	fclose(f);
	return n;
}

/*
 * The System.map of Debian's kernel package: what it holds (Debian ships a one-line
 * placeholder in linux-image, the map itself in the -dbg package) is found and used, with
 * the slide, and a placeholder is said to be one, in one line.
 */
/*
 * kallsyms.map, the running kernel's symbols `vbts run` saved, names kernel addresses when
 * vm.json's System.map is Debian's placeholder; --system-map still wins over it.
 */
START_TEST(test_linux_kallsyms_map)
{
	const char *none[] = { "--cpl", "kernel", NULL };
	char dir[64], path[128], *out, *err;
	const char *given[] = { "--cpl", "kernel", "--system-map", path, NULL };

	make_linux_trace(dir);
	test__write_text(dir, "System.map", "ffffffffffffffff B The real System.map is in the "
			 "linux-image-<version>-dbg package\n");
	ck_assert_int_eq(decode_linux(dir, none, &out, &err), 0);
	ck_assert_msg(strstr(err, "placeholder"), "%s", err);
	ck_assert_msg(!strstr(out, "schedule+0x10"), "%s", out);
	free(out);
	free(err);

	test__write_text(dir, "kallsyms.map", system_map);
	ck_assert_int_eq(decode_linux(dir, none, &out, &err), 0);
	ck_assert_str_eq(err, "");
	ck_assert_msg(strstr(out, "0xffffffff82004010 schedule+0x10  =>  0xffffffff82004100 "
				  "schedule+0x100  (jmp)"), "%s", out);
	free(out);
	free(err);

	snprintf(path, sizeof(path), "%s/System.map", dir);
	ck_assert_int_eq(decode_linux(dir, given, &out, &err), 0);
	ck_assert_msg(strstr(err, "placeholder"), "%s", err);
	ck_assert_msg(!strstr(out, "schedule+0x10"), "%s", out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

START_TEST(test_debian_system_map)
{
	char path[768], arg[800], dir[64], *out, *err;
	const char *args[] = { "--system-map", path, NULL };
	struct system_map_stats st;
	struct map_entry *syms;
	struct symbols *s;
	size_t n;

	ck_assert_int_eq(debian_kernel_file("System.map", path, sizeof(path)), 0);
	s = symbols__load_system_map(path, &st, arg, sizeof(arg));
	ck_assert_msg(s, "%s", arg);
	n = read_text_symbols(path, &syms);
	/* Aliases no lookup can return are not kept. */
	ck_assert_uint_le(symbols__count(s), n);
	make_linux_trace(dir);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	assert_printable(err, 1);
	if (st.placeholder) {
		/* Debian's linux-image package. */
		ck_assert_uint_eq(symbols__count(s), 0);
		ck_assert_uint_eq(n, 0);
		ck_assert_msg(strstr(err, ": the placeholder of Debian's linux-image package, no "
					  "symbols (the System.map is in its -dbg package), kernel "
					  "addresses not symbolized from it\n"), "%s", err);
		ck_assert_msg(strstr(out, "=>  0xffffffff82001000  (syscall)"), "%s", out);
	} else {
		/* A map with symbols: every text symbol found at its address plus the slide. */
		ck_assert_uint_gt(n, 1000);
		ck_assert_uint_gt(symbols__count(s), n / 2);
		ck_assert_uint_eq(st.malformed, 0);
		ck_assert_str_eq(err, "");
		for (size_t i = 0; i + 1 < n; i += 1 + n / 4096) {
			struct symbol_hit hit;

			if (syms[i + 1].addr <= syms[i].addr + 1)
				continue;
			ck_assert_int_eq(symbols__lookup(s, syms[i].addr + 1, &hit), 0);
			ck_assert_uint_eq(hit.offset, 1);
		}
		ck_assert_msg(!strstr(out, "=>  0xffffffff82001000  (syscall)"), "%s", out);
	}
	free(syms);
	free(out);
	free(err);
	symbols__free(s);
	remove_trace(dir);
}
END_TEST

/*
 * The uncompressed kernel of Debian's package as vm.json's vmlinux: a 60 MiB ELF file stripped
 * of its symbol table; said so in one line, everything else decoded.
 */
START_TEST(test_debian_vmlinux)
{
	char path[768], vm[1024], dir[64], *out, *err;
	const char *args[] = { NULL };
	struct symbols *s;

	if (debian_kernel_file("vmlinux", path, sizeof(path))) {
		/* prepare could not extract it (no zstd): the bzImage is booted then. */
		fprintf(stderr, "test_debian_vmlinux: no vmlinux in the harness cache, not run\n");
		return;
	}
	s = symbols__load(path);
	ck_assert_msg(s, "%s: %s", path, strerror(errno));
	make_linux_trace(dir);
	snprintf(vm, sizeof(vm),
		 "{\"version\":1,\"kernel\":\"/boot/vmlinuz\",\"vmlinux\":\"%s\","
		 "\"kaslr_slide\":0,\"vcpus\":1}\n", path);
	test__write_text(dir, "vm.json", vm);
	ck_assert_int_eq(decode_linux(dir, args, &out, &err), 0);
	if (!symbols__count(s))
		ck_assert_msg(strstr(err, "/vmlinux: no symbol table, kernel addresses not "
					  "symbolized from it\n"), "%s", err);
	else
		ck_assert_str_eq(err, "");
	assert_printable(err, 1);
	ck_assert_uint_eq(test__count_lines(out), sizeof(linux_ring) / sizeof(linux_ring[0]));
	free(out);
	free(err);
	symbols__free(s);
	remove_trace(dir);
}
END_TEST

Suite *linux_debian_suite(void)
{
	Suite *s = suite_create("linux-debian");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_debian_system_map);
	tcase_add_test(tc, test_debian_vmlinux);
	suite_add_tcase(s, tc);
	return s;
}

Suite *linux_decode_suite(void)
{
	Suite *s = suite_create("linux-decode");
	TCase *tc = tcase_create("core");

	/* A hang guard only: each decode also has its own (run_decode_nofile()). */
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_linux_golden, 0,
			    (int)(sizeof(golden_cases) / sizeof(golden_cases[0])));
	tcase_add_test(tc, test_linux_summary_reused_cr3);
	tcase_add_loop_test(tc, test_linux_slide, 0,
			    (int)(sizeof(slide_cases) / sizeof(slide_cases[0])));
	tcase_add_test(tc, test_linux_vmlinux);
	tcase_add_test(tc, test_linux_hostile_map);
	tcase_add_test(tc, test_linux_symbols_loops);
	tcase_add_loop_test(tc, test_linux_symbols_bad_path, 0,
			    (int)(sizeof(bad_paths) / sizeof(bad_paths[0])));
	tcase_add_loop_test(tc, test_linux_lying_elf, 0, LIE_MAX);
	tcase_add_test(tc, test_linux_lying_elf_warnings);
	tcase_add_test(tc, test_linux_ambiguous);
	tcase_add_test(tc, test_linux_symbols_file);
	tcase_add_test(tc, test_linux_kallsyms_map);
	tcase_add_test(tc, test_linux_agent_maps);
	tcase_add_loop_test(tc, test_linux_agent_lying_elf, 0, LIE_MAX);
	tcase_add_test(tc, test_linux_agent_one_load);
	tcase_add_test(tc, test_linux_agent_crash);
	suite_add_tcase(s, tc);
	return s;
}
