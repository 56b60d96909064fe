/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decoder-test.h - suites of check-decoder and the record-building helpers they share.
 */
#ifndef VBTS_TESTS_DECODER_TEST_H
#define VBTS_TESTS_DECODER_TEST_H

#include <check.h>
#include <stddef.h>
#include <sys/resource.h>
#include <vbts/ring-format.h>

#include "decoder.h"

Suite *parse_suite(void);
Suite *decoder_suite(void);
Suite *procmap_suite(void);
Suite *symbols_suite(void);
Suite *golden_suite(void);
Suite *inputs_suite(void);
Suite *scale_suite(void);
Suite *out_buf_suite(void);
Suite *progress_suite(void);
Suite *system_map_suite(void);
Suite *linux_procmap_suite(void);
Suite *linux_decode_suite(void);
Suite *linux_debian_suite(void);
Suite *consumers_suite(void);
Suite *diff_suite(void);
Suite *crash_suite(void);
Suite *plt_suite(void);
Suite *threads_suite(void);

struct vbts_command;

/**
 * debian_kernel_file() - a file of Debian's kernel package in the harness cache.
 * @what: "System.map" (boot/System.map-<release>), or a file of the release's directory
 *        ("vmlinux")
 * @path: receives its path under $VBTS_BUILD_DIR/harness/<release>/
 * @len:  room in @path
 *
 * Return: 0 when it is there and readable, -ENOENT (no $VBTS_BUILD_DIR, no cache) or the
 * errno of access(2).
 */
int debian_kernel_file(const char *what, char *path, size_t len);

/* The same as constant initializers, for static tables. */
#define BR(from, to, cpl, kind)                                                              \
	{ (from), (to),                                                                      \
	  VBTS_REC_CPL_VALID | ((uint64_t)(cpl) << VBTS_REC_CPL_SHIFT) |                     \
		  ((uint64_t)(kind) << VBTS_REC_KIND_SHIFT) }
#define BRV(from, to, cpl, kind, vector)                                                     \
	{ (from), (to),                                                                      \
	  VBTS_REC_CPL_VALID | ((uint64_t)(cpl) << VBTS_REC_CPL_SHIFT) |                     \
		  ((uint64_t)(kind) << VBTS_REC_KIND_SHIFT) | VBTS_REC_VECTOR_VALID |         \
		  ((uint64_t)(vector) << VBTS_REC_VECTOR_SHIFT) }
#define ESC(kind, payload, aux)                                                              \
	{ VBTS_ESCAPE, (payload), ((uint64_t)(aux) << VBTS_ESC_AUX_SHIFT) | (kind) }

/* Branch record with CPL and kind annotations. */
static inline struct vbts_record br(uint64_t from, uint64_t to, unsigned int cpl,
				    unsigned int kind)
{
	struct vbts_record r = {
		.from = from,
		.to = to,
		.flags = VBTS_REC_CPL_VALID | ((uint64_t)cpl << VBTS_REC_CPL_SHIFT) |
			 ((uint64_t)kind << VBTS_REC_KIND_SHIFT),
	};
	return r;
}

/* Branch record that delivers a vector (exception, int n). */
static inline struct vbts_record br_vec(uint64_t from, uint64_t to, unsigned int cpl,
					unsigned int kind, unsigned int vector)
{
	struct vbts_record r = br(from, to, cpl, kind);

	r.flags |= VBTS_REC_VECTOR_VALID | ((uint64_t)vector << VBTS_REC_VECTOR_SHIFT);
	return r;
}

static inline struct vbts_record esc(unsigned int kind, uint64_t payload, uint64_t aux)
{
	return vbts_record__make_escape(kind, payload, aux);
}

/**
 * struct mem_source - a decoder source over an array, handed out @chunk records at a time.
 * @recs:      records, recs[0] has seq @first_seq
 * @skip_at:   when nonzero, the records with index in [skip_at, skip_at + skip_n) are never
 *             handed out (the source jumps over them, like a reader that lost them)
 * @dropped:   what the dropped() callback reports
 */
struct mem_source {
	const struct vbts_record *recs;
	size_t nr;
	uint64_t first_seq;
	size_t chunk;
	size_t skip_at, skip_n;
	uint64_t dropped;
	size_t pos;
};

extern const struct decoder_source_ops mem_source_ops;

/**
 * decode_all() - run a decoder to the end.
 * @src:  sources
 * @n:    how many
 * @out:  receives the items (at most @max)
 * @max:  room in @out
 *
 * Return: the number of items.
 */
size_t decode_all(const struct decoder_source *src, size_t n, struct decoded_record *out,
		  size_t max);

/**
 * run_decode() - run `vbts decode ARGS...` in this process, capturing stdout and stderr.
 * @out:  receives stdout (malloc'ed)
 * @err:  receives stderr (malloc'ed)
 * @argv: "decode" and its arguments, NULL-terminated
 *
 * Return: the command's exit status.
 */
int run_decode(char **out, char **err, char **argv);

/**
 * run_command() - run a vbts command (commands.h) in this process, capturing stdout and
 * stderr.
 * @cmd:  the command
 * @out:  receives stdout (malloc'ed)
 * @err:  receives stderr (malloc'ed)
 * @argv: the command's name and its arguments, NULL-terminated
 *
 * Return: the command's exit status.
 */
int run_command(const struct vbts_command *cmd, char **out, char **err, char **argv);

/**
 * run_command_fds() - run a vbts command (commands.h) in this process with its stdout and
 * stderr into open files.
 * @cmd:  the command
 * @ofd:  where stdout goes
 * @efd:  where stderr goes
 * @argv: the command's name and its arguments, NULL-terminated
 *
 * This process's stdout and stderr are flushed around the command and then restored.
 *
 * Return: the command's exit status.
 */
int run_command_fds(const struct vbts_command *cmd, int ofd, int efd, char **argv);

/**
 * run_decode_nofile() - `vbts decode ARGS...` in a child process, with a hang guard and,
 * outside valgrind and AddressSanitizer, an address-space limit.
 * @out, @err: receive its stdout and stderr
 * @nofile:    RLIMIT_NOFILE of the child (not under valgrind), 0 to keep the current one
 * @argv:      arguments after "decode", NULL-terminated (at most 14)
 *
 * Return: the exit status, or -N when signal N ended the child (SIGALRM: it hung).
 */
int run_decode_nofile(char **out, char **err, rlim_t nofile, const char *const *argv);

/**
 * compare_golden() - compare output with tests/data/@name (VBTS_UPDATE_GOLDEN=1 in the
 * environment rewrites the file instead).
 * @name: the golden file's name
 * @got:  the output
 */
void compare_golden(const char *name, const char *got);

/**
 * assert_printable() - @text is lines of printable text: valid UTF-8 (the C library's decoder
 * says so), no control character but the newline ending each line, at most @max_lines lines.
 * @text:      the text
 * @max_lines: lines at most
 */
void assert_printable(const char *text, size_t max_lines);

/**
 * make_golden_trace() - the trace directory of the golden tests (test-golden.c): two vCPUs,
 * tasks ping and crash, vm.json naming the symtest object.
 * @dir: receives its path (64 bytes)
 */
void make_golden_trace(char *dir);

/**
 * remove_trace() - remove a trace directory and everything in it.
 * @dir: the directory
 */
void remove_trace(const char *dir);

#endif /* VBTS_TESTS_DECODER_TEST_H */
