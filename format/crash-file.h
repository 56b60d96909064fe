/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crash-file.h - the one reader of a trace directory's crash reports (crash.json,
 * crash-N.json, written by vmm/record/crash-report.c): bounded, every member checked.
 */
#ifndef VBTS_FORMAT_CRASH_FILE_H
#define VBTS_FORMAT_CRASH_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Largest crash report, bytes: the one limit of the format (doc/formats.md), which the VMM's
 * writer keeps (vmm/record/crash-report.c) and every reader enforces.
 */
#define CRASH_FILE_SIZE_MAX (1U << 20)
/* Most branches a report may hold. */
#define CRASH_FILE_BRANCHES_MAX 4096

/* The registers of a report, in the order vbts decode --crash prints them. */
enum crash_file_reg {
	CRASH_REG_RIP, CRASH_REG_RSP, CRASH_REG_RBP, CRASH_REG_RFLAGS,
	CRASH_REG_RAX, CRASH_REG_RBX, CRASH_REG_RCX, CRASH_REG_RDX,
	CRASH_REG_RSI, CRASH_REG_RDI, CRASH_REG_R8, CRASH_REG_R9,
	CRASH_REG_R10, CRASH_REG_R11, CRASH_REG_R12, CRASH_REG_R13,
	CRASH_REG_R14, CRASH_REG_R15, CRASH_REG_CS, CRASH_REG_SS,
	CRASH_REG_CR0, CRASH_REG_CR2, CRASH_REG_CR3, CRASH_REG_CR4,
	CRASH_REG_EFER,
	CRASH_REG_NR
};

/* What a report (decoder/crash-symbols.c) says of an address; strings raw, unescaped. */
struct crash_file_sym {
	bool present;
	const char *function;   /* NULL when absent */
	const char *file;
	const char *module;
	uint64_t offset;        /* 0 when absent */
	int64_t line;           /* 1..INT32_MAX, 0 when absent */
};

struct crash_file_branch {
	uint64_t from, to;
	uint64_t flags;         /* a ring record's flags word, 0 when absent */
	struct crash_file_sym sym[2];   /* of from, of to */
};

/* A report, valid until crash_file__release(); its strings are the guest's, unescaped. */
struct crash_file {
	struct json_t *root;
	const char *reason;
	int64_t time;           /* ns since the trace started */
	uint32_t vcpu;
	const char *signal;     /* NULL when absent or null */
	int64_t signo;          /* 0 when absent */
	bool have_cr3;
	uint64_t cr3;
	bool have_process;
	int32_t pid, tgid;
	const char *comm;       /* with have_process */
	bool have_regs;
	uint32_t regs_valid;    /* bit 1 << CRASH_REG_x: regs[x] was in the report */
	uint64_t regs[CRASH_REG_NR];
	const char *regs_note;  /* without registers: why, or NULL */
	struct crash_file_branch *branches;     /* oldest first */
	size_t nr_branches;
};

/**
 * crash_file__reg_name() - a register's member name in a report's "registers".
 * @reg: the register
 *
 * Return: the name ("rip", ...), or NULL for no register.
 */
const char *crash_file__reg_name(enum crash_file_reg reg);

/**
 * crash_file__read() - read and check a crash report.
 * @cf: filled in; crash_file__release() it after a success
 * @path: the report (a regular file of at most CRASH_FILE_SIZE_MAX bytes, no symlink)
 * @err: what was wrong, with @path escaped, on failure
 * @errlen: size of @err
 *
 * Return: 0; -errno of lstat() and open() (-ENOENT: no such report), -EINVAL for what is no
 * crash report (not a regular file, a symbolic link, more than CRASH_FILE_SIZE_MAX bytes, not
 * JSON, a member missing or invalid), -EIO and the other errors of read(), or -ENOMEM.
 */
int crash_file__read(struct crash_file *cf, const char *path, char *err, size_t errlen);

/**
 * crash_file__release() - free what crash_file__read() holds.
 * @cf: a report read, or zeroed
 */
void crash_file__release(struct crash_file *cf);

#endif /* VBTS_FORMAT_CRASH_FILE_H */
