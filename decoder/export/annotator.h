/* SPDX-License-Identifier: GPL-2.0 */
/*
 * annotator.h - what an exporter shows of a decoded record besides its own fields: the task it
 * belongs to (process map), the task's labels, and the symbol and source line of an address
 * (symbolizer), with the guest's text already escaped for a terminal and for JSON.
 *
 * Each answer is worked out once and memoized: the task per vCPU for the (CR3, time) of its
 * records, the labels per task, the symbol and line per (address, scope) in a direct-mapped
 * cache of 2^ANNOTATOR_ADDR_CACHE_BITS entries, the escaped text per distinct name, and for
 * the text output the text written after an address per (address, scope) in a cache of
 * 2^ANNOTATOR_TEXT_CACHE_BITS sets of four entries. Memory stays bounded by the caches, the
 * tasks of the process map and the names of the symbol tables, whatever the trace holds. The
 * process map and the symbolizer must not change while the annotator is used with them.
 */
#ifndef VBTS_DECODER_ANNOTATOR_H
#define VBTS_DECODER_ANNOTATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder.h"
#include "procmap.h"
#include "symbolizer.h"

/* Entries of the address cache, 32 bytes each (4 MiB). */
#define ANNOTATOR_ADDR_CACHE_BITS 17
#define ANNOTATOR_ADDR_CACHE (1u << ANNOTATOR_ADDR_CACHE_BITS)
/* Sets of the text cache, four entries of 64 bytes each (16 MiB), made when first used. */
#define ANNOTATOR_TEXT_CACHE_BITS 16
/* Bytes of annotator__addr_text()'s text, at most. */
#define ANNOTATOR_TEXT_MAX 45
/* Escaped bytes of a task name in a text label, at most; the pid follows. */
#define ANNOTATOR_NAME_TEXT_MAX 48

struct annotator;

/**
 * struct annotator_task - the labels of one task.
 * @task:     the task
 * @text:     "name[pid]", the name escaped (escape.h) and cut to ANNOTATOR_NAME_TEXT_MAX bytes
 * @text_len: its length
 * @text_name_len: the length of its "name" part (a thread of the task is "name[its pid]")
 * @json:     its jsonl members: ,"task":"name" and for a Linux task ,"pid":P,"tgid":T
 * @json_len: their length
 * @json_name_len: the length of the ,"task":"name" member alone (a thread of the task
 *            follows it with its own pid and tgid)
 */
struct annotator_task {
	const struct procmap_task *task;
	const char *text;
	size_t text_len;
	size_t text_name_len;
	const char *json;
	size_t json_len;
	size_t json_name_len;
};

/**
 * struct annotator_addr - what the symbol tables say of one address of a task.
 * @addr:         the address
 * @name:         the symbol covering it, or NULL when no table names it
 * @name_text:    the name escaped for a terminal (escape.h)
 * @name_text_len: its length
 * @offset:       @addr minus the symbol's address
 * @file:         the base name of its source file, or NULL when no table has a line for it;
 *                meaningful only when the lines were asked for
 * @file_text:    the file name escaped for a terminal
 * @file_text_len: its length
 * @line:         the line number
 */
struct annotator_addr {
	uint64_t addr;
	const char *name;
	const char *name_text;
	size_t name_text_len;
	uint64_t offset;
	const char *file;
	const char *file_text;
	size_t file_text_len;
	int line;
};

/**
 * annotator__new() - an annotator for a process map and a symbolizer.
 * @pm: the tasks, or NULL (no record has a task)
 * @sz: the symbols, or NULL (no address has a symbol)
 *
 * Return: the annotator, or NULL with errno = ENOMEM.
 */
struct annotator *annotator__new(const struct procmap *pm, const struct symbolizer *sz);

/**
 * annotator__new_sized() - annotator__new() with smaller caches, for tests of their
 * replacements.
 * @pm:        the tasks, or NULL
 * @sz:        the symbols, or NULL
 * @addr_bits: 2^@addr_bits entries of the address cache, 0 (or more than
 *             ANNOTATOR_ADDR_CACHE_BITS) for the default
 * @text_bits: 2^@text_bits sets of the text cache, 0 (or more than ANNOTATOR_TEXT_CACHE_BITS)
 *             for the default
 *
 * Return: the annotator, or NULL with errno = ENOMEM.
 */
struct annotator *annotator__new_sized(const struct procmap *pm, const struct symbolizer *sz,
				       unsigned int addr_bits, unsigned int text_bits);

/**
 * annotator__task() - the task a record belongs to: procmap__lookup() of its CR3 and time.
 * @a: annotator
 * @r: record
 *
 * O(1) for a record of the same vCPU, CR3 and time as the one before it on that vCPU.
 *
 * Return: the task, or NULL when unknown (no process map, no CR3, no task had it).
 */
const struct procmap_task *annotator__task(struct annotator *a, const struct decoded_record *r);

/**
 * annotator__labels() - the labels of a task.
 * @a: annotator
 * @t: a task of the annotator's process map
 *
 * Return: the labels (valid as long as the annotator), or NULL when out of memory.
 */
const struct annotator_task *annotator__labels(struct annotator *a, const struct procmap_task *t);

/**
 * annotator__addr() - the symbol, and when asked the source line, of an address.
 * @a:     annotator
 * @t:     the task the address belongs to, or NULL
 * @addr:  guest address
 * @lines: look up the source line too
 *
 * symbolizer__lookup() and symbolizer__line() memoized; O(1) when the address was looked up
 * recently for a task of the same scope (symbolizer__scope()).
 *
 * Return: the answer, valid until the next annotator__addr() call; NULL when out of memory.
 */
const struct annotator_addr *annotator__addr(struct annotator *a, const struct procmap_task *t,
					     uint64_t addr, bool lines);

/**
 * annotator__addr_text() - the text output's text after an address: " name+0xoff" (name
 * escaped for a terminal) or " [unknown]", then with @lines " (file:line)" when a table has
 * its line; exactly what annotator__addr() says formatted so.
 * @a:     annotator
 * @t:     the task the address belongs to, or NULL
 * @addr:  guest address
 * @lines: with the source line
 * @text:  set to the text, valid until the next annotator__addr_text() call
 * @len:   set to its length
 *
 * Memoized per (address, scope) as text; O(1) when the address was asked for recently.
 *
 * Return: 0; -E2BIG when the text is longer than the cache keeps (or @a has no symbolizer):
 * format what annotator__addr() says instead; -ENOMEM.
 */
int annotator__addr_text(struct annotator *a, const struct procmap_task *t, uint64_t addr,
			 bool lines, const char **text, size_t *len);

/**
 * annotator__prefetch() - start loading what annotator__addr_text() will read for an address,
 * so that the answers of the addresses of records are fetched from memory together, ahead.
 * @a:    annotator
 * @t:    the task the address belongs to, or NULL
 * @addr: guest address
 */
void annotator__prefetch(struct annotator *a, const struct procmap_task *t, uint64_t addr);

/**
 * annotator__has_symbols() - whether addresses can have symbols: a symbolizer with a source
 * of symbols (symbolizer__has_tables()); text output marks unnamed addresses only then.
 * @a: annotator
 *
 * Return: true when it has.
 */
bool annotator__has_symbols(const struct annotator *a);

/**
 * annotator__free() - release the annotator.
 * @a: annotator, may be NULL
 */
void annotator__free(struct annotator *a);

#endif /* VBTS_DECODER_ANNOTATOR_H */
