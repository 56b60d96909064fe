// SPDX-License-Identifier: GPL-2.0
/*
 * crash-file.c - a crash report read as hostile input: bounded in size, duplicate members
 * refused, every member checked for its type and range before anyone uses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash-file.h"
#include "escape.h"
#include "input-file.h"
#include "trace-keys.h"

/* Escaped bytes of a path or parser message in an error, at most. */
#define TEXT_MAX 256

static const char *const reg_names[CRASH_REG_NR] = {
	[CRASH_REG_RIP] = "rip", [CRASH_REG_RSP] = "rsp", [CRASH_REG_RBP] = "rbp",
	[CRASH_REG_RFLAGS] = "rflags", [CRASH_REG_RAX] = "rax", [CRASH_REG_RBX] = "rbx",
	[CRASH_REG_RCX] = "rcx", [CRASH_REG_RDX] = "rdx", [CRASH_REG_RSI] = "rsi",
	[CRASH_REG_RDI] = "rdi", [CRASH_REG_R8] = "r8", [CRASH_REG_R9] = "r9",
	[CRASH_REG_R10] = "r10", [CRASH_REG_R11] = "r11", [CRASH_REG_R12] = "r12",
	[CRASH_REG_R13] = "r13", [CRASH_REG_R14] = "r14", [CRASH_REG_R15] = "r15",
	[CRASH_REG_CS] = "cs", [CRASH_REG_SS] = "ss", [CRASH_REG_CR0] = "cr0",
	[CRASH_REG_CR2] = "cr2", [CRASH_REG_CR3] = "cr3", [CRASH_REG_CR4] = "cr4",
	[CRASH_REG_EFER] = "efer",
};

const char *crash_file__reg_name(enum crash_file_reg reg)
{
	return (unsigned int)reg < CRASH_REG_NR ? reg_names[reg] : NULL;
}

/* "0x..." hex, as the VMM writes addresses; false for anything else. */
static bool get_hex(json_t *o, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(o, key);
	const char *s;
	char *end;

	if (!json_is_string(j))
		return false;
	s = json_string_value(j);
	if (strncmp(s, "0x", 2) && strcmp(s, "0"))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 16);
	return !errno && !*end && end != s;
}

/* An integer member in [@min, @max]; *@v is set to any integer, in range or not. */
static bool get_int(json_t *o, const char *key, int64_t min, int64_t max, int64_t *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*v = json_integer_value(j);
	return *v >= min && *v <= max;
}

static const char *get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A member of a report's symbol object, checked: NULL when absent, false when invalid. */
static bool sym_member(json_t *sym, const char *key, bool text)
{
	json_t *v = json_object_get(sym, key);

	if (!v)
		return true;
	return text ? json_is_string(v) : json_is_integer(v) && json_integer_value(v) > 0 &&
					  json_integer_value(v) <= INT32_MAX;
}

/* @sym, a symbol object as crash-symbols.h describes it (or absent), into @s. */
static bool parse_sym(json_t *sym, struct crash_file_sym *s)
{
	memset(s, 0, sizeof(*s));
	if (!sym)
		return true;
	if (!json_is_object(sym) || !sym_member(sym, CRASH_KEY_SYM_FUNCTION, true) ||
	    !sym_member(sym, CRASH_KEY_SYM_FILE, true) ||
	    !sym_member(sym, CRASH_KEY_SYM_LINE, false) ||
	    !sym_member(sym, CRASH_KEY_SYM_MODULE, true))
		return false;
	if (json_object_get(sym, CRASH_KEY_SYM_OFFSET) &&
	    !get_hex(sym, CRASH_KEY_SYM_OFFSET, &s->offset))
		return false;
	s->present = true;
	s->function = get_str(sym, CRASH_KEY_SYM_FUNCTION);
	s->file = get_str(sym, CRASH_KEY_SYM_FILE);
	s->module = get_str(sym, CRASH_KEY_SYM_MODULE);
	s->line = json_integer_value(json_object_get(sym, CRASH_KEY_SYM_LINE));
	return true;
}

static int parse_branches(json_t *arr, struct crash_file *cf)
{
	size_t count = json_array_size(arr);
	struct crash_file_branch *b;

	if (!json_is_array(arr) || count > CRASH_FILE_BRANCHES_MAX)
		return -EINVAL;
	b = calloc(count ? count : 1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		json_t *e = json_array_get(arr, i);

		if (!json_is_object(e) || !get_hex(e, CRASH_KEY_FROM, &b[i].from) ||
		    !get_hex(e, CRASH_KEY_TO, &b[i].to) ||
		    (json_object_get(e, CRASH_KEY_FLAGS) &&
		     !get_hex(e, CRASH_KEY_FLAGS, &b[i].flags)) ||
		    !parse_sym(json_object_get(e, CRASH_KEY_FROM_SYMBOL), &b[i].sym[0]) ||
		    !parse_sym(json_object_get(e, CRASH_KEY_TO_SYMBOL), &b[i].sym[1])) {
			free(b);
			return -EINVAL;
		}
	}
	cf->branches = b;
	cf->nr_branches = count;
	return 0;
}

static json_t *load(const char *path, char *err, size_t errlen, int *ret)
{
	char q[TEXT_MAX], t[TEXT_MAX], why[TEXT_MAX * 2];
	size_t len = 0;
	json_error_t je;
	struct stat st;
	char *buf;
	ssize_t n = 0;
	json_t *o;
	int fd;

	/* never blocks, never follows a link: a FIFO or a device there is refused unopened */
	fd = input_file__open_entry(path, &st, why, sizeof(why));
	if (fd < 0) {
		*ret = fd == -ELOOP ? -EINVAL : fd;
		snprintf(err, errlen, "%s: not a crash report (%s)",
			 escape__str(q, sizeof(q), path),
			 fd == -ELOOP ? "a symbolic link" :
			 fd == -EINVAL ? "not a regular file" : strerror(-fd));
		return NULL;
	}
	if (st.st_size > CRASH_FILE_SIZE_MAX) {
		close(fd);
		*ret = -EINVAL;
		snprintf(err, errlen,
			 "%s: %lld bytes, more than a crash report's %u MiB (%u bytes)",
			 escape__str(q, sizeof(q), path), (long long)st.st_size,
			 CRASH_FILE_SIZE_MAX >> 20, CRASH_FILE_SIZE_MAX);
		return NULL;
	}
	/* At most the limit and one byte more: a file that grows while it is read is too big. */
	buf = malloc(CRASH_FILE_SIZE_MAX + 1);
	if (!buf) {
		close(fd);
		*ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while (len <= CRASH_FILE_SIZE_MAX) {
		n = read(fd, buf + len, CRASH_FILE_SIZE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0 || len > CRASH_FILE_SIZE_MAX) {
		*ret = n < 0 ? -EIO : -EINVAL;
		snprintf(err, errlen, "%s: %s", escape__str(q, sizeof(q), path), n < 0 ?
			 strerror(errno) : "grew past a crash report's limit while it was read");
		free(buf);
		return NULL;
	}
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (!json_is_object(o)) {
		json_decref(o);
		*ret = -EINVAL;
		snprintf(err, errlen, "%s: not a crash report (line %d: %s)",
			 escape__str(q, sizeof(q), path), je.line,
			 o ? "not a JSON object" : escape__str(t, sizeof(t), je.text));
		return NULL;
	}
	return o;
}

int crash_file__read(struct crash_file *cf, const char *path, char *err, size_t errlen)
{
	int64_t ver, pid = 0, tgid = 0, vcpu = 0;
	json_t *o, *proc, *regs, *s;
	const char *bad = NULL;
	char q[TEXT_MAX];
	int ret = 0;

	memset(cf, 0, sizeof(*cf));
	o = load(path, err, errlen, &ret);
	if (!o)
		return ret;
	cf->root = o;
	s = json_object_get(o, CRASH_KEY_REASON);
	proc = json_object_get(o, CRASH_KEY_PROCESS);
	regs = json_object_get(o, CRASH_KEY_REGISTERS);
	cf->have_cr3 = get_hex(o, CRASH_KEY_CR3, &cf->cr3);
	if (!get_int(o, CRASH_KEY_VERSION, 1, 1, &ver))
		bad = "version (1 expected)";
	else if (!json_is_string(s))
		bad = "reason";
	else if (!get_int(o, CRASH_KEY_TIME, 0, INT64_MAX, &cf->time))
		bad = "time";
	else if (!get_int(o, CRASH_KEY_VCPU, 0, UINT32_MAX, &vcpu))
		bad = "vcpu";
	else if (!cf->have_cr3 && !json_is_null(json_object_get(o, CRASH_KEY_CR3)))
		bad = "cr3";
	else if (!json_is_null(proc) &&
		 (!json_is_object(proc) ||
		  !get_int(proc, CRASH_KEY_PROCESS_PID, INT32_MIN, INT32_MAX, &pid) ||
		  !get_int(proc, CRASH_KEY_PROCESS_TGID, INT32_MIN, INT32_MAX, &tgid) ||
		  !json_is_string(json_object_get(proc, CRASH_KEY_PROCESS_COMM))))
		bad = "process";
	else if (!json_is_null(regs) && !json_is_object(regs))
		bad = "registers";
	else if ((ret = parse_branches(json_object_get(o, CRASH_KEY_BRANCHES), cf)) == -EINVAL)
		bad = "branches";
	if (bad || ret) {
		if (!ret)
			ret = -EINVAL;
		snprintf(err, errlen, "%s: not a crash report: member %s missing or invalid",
			 escape__str(q, sizeof(q), path), bad ? bad : "branches (out of memory)");
		crash_file__release(cf);
		return ret;
	}
	cf->reason = json_string_value(s);
	cf->vcpu = (uint32_t)vcpu;
	cf->signal = get_str(o, CRASH_KEY_SIGNAL);
	get_int(o, CRASH_KEY_SIGNO, 0, 127, &cf->signo);
	cf->have_process = json_is_object(proc);
	cf->pid = (int32_t)pid;
	cf->tgid = (int32_t)tgid;
	if (cf->have_process)
		cf->comm = get_str(proc, CRASH_KEY_PROCESS_COMM);
	cf->have_regs = json_is_object(regs);
	for (unsigned int i = 0; cf->have_regs && i < CRASH_REG_NR; i++) {
		if (get_hex(regs, reg_names[i], &cf->regs[i]))
			cf->regs_valid |= 1u << i;
	}
	cf->regs_note = get_str(o, CRASH_KEY_REGISTERS_NOTE);
	return 0;
}

void crash_file__release(struct crash_file *cf)
{
	free(cf->branches);
	json_decref(cf->root);
	memset(cf, 0, sizeof(*cf));
}
