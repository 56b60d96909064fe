/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbolizer.h - the symbol table that names an address of a guest task: the glue between the
 * process map and the symbol tables.
 *
 * The tables tried for an address, in this order:
 *  - a kernel address (>= SYMBOLIZER_KERNEL_START): the guest kernel's vmlinux, then its
 *    System.map, both shifted by the kernel's KASLR slide (run-time minus link-time address);
 *  - a user address (< SYMBOLIZER_USER_END): the ELF file bound to the task (see
 *    symbolizer__bind()), at its link addresses for an executable (ET_EXEC), shifted by the
 *    task's load base for a PIE or shared object (ET_DYN), which is never guessed: without a
 *    load base such a file names nothing; then the file of the build-ID store whose mapping
 *    the guest agent reported for the task's process at that address (a PIE, a shared
 *    library), shifted by that mapping's bias (symbolizer__set_guest_maps());
 *  - any address: the guest image, the one file of a multiboot guest (kernel and tasks).
 * The first table with a symbol covering the address names it; source lines come from the
 * first table with DWARF line information for it.
 */
#ifndef VBTS_DECODER_SYMBOLIZER_H
#define VBTS_DECODER_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-maps.h"
#include "procmap.h"
#include "symbol-files.h"
#include "symbols.h"

/* The lowest address of the upper, kernel half of a 48-bit (or larger) address space. */
#define SYMBOLIZER_KERNEL_START 0xffff800000000000ULL
/* The end of the lower, user half of a 48-bit address space. */
#define SYMBOLIZER_USER_END 0x0000800000000000ULL

struct symbolizer;

/**
 * symbolizer__new() - a symbolizer without tables.
 *
 * Return: it, or NULL with errno = ENOMEM.
 */
struct symbolizer *symbolizer__new(void);

/**
 * symbolizer__set_image() - the guest image, for every address.
 * @sz:    symbolizer
 * @image: its table; the symbolizer owns it from now on (a previous one is freed)
 */
void symbolizer__set_image(struct symbolizer *sz, struct symbols *image);

/**
 * symbolizer__set_kernel() - the guest kernel's tables, for kernel addresses.
 * @sz:         symbolizer
 * @vmlinux:    the kernel's ELF file with symbols (and DWARF), or NULL
 * @system_map: its System.map, or NULL
 * @slide:      the KASLR slide: run-time minus link-time address, modulo 2^64
 *
 * The symbolizer owns the tables from now on (previous ones are freed).
 */
void symbolizer__set_kernel(struct symbolizer *sz, struct symbols *vmlinux,
			    struct symbols *system_map, uint64_t slide);

/**
 * symbolizer__bind() - choose the ELF file of every task of a process map.
 * @sz:       symbolizer
 * @sf:       the files (--symbols)
 * @pm:       the tasks; it must not change while the symbolizer is used with it
 * @warn:     called with one line per problem (a file that cannot be loaded, tasks whose file
 *            cannot be used), or NULL
 * @warn_ctx: its argument
 *
 * A task's file is the one whose GNU build ID is the task's build_id; else, when the task has
 * none or no file has it, the one whose path or guest path (symbol-files.h) is its exe; else
 * the one whose base name is its name, both cut to PROCMAP_COMM_LEN bytes as the kernel cuts
 * a comm. Of several files with one build ID, the one with the most symbols (then DWARF, then
 * the first path) is taken. Nothing is guessed: a task is left without a file when the files
 * of its path or name differ from each other, or when the file found by path or name has
 * another build ID than the task; files are loaded (symbols__load()) once each, when a task
 * needs them.
 *
 * Return: 0, or -ENOMEM.
 */
int symbolizer__bind(struct symbolizer *sz, const struct symbol_files *sf,
		     const struct procmap *pm, void (*warn)(void *warn_ctx, const char *line),
		     void *warn_ctx);

/**
 * symbolizer__set_guest_maps() - the agent's reported mappings, for the user addresses of the
 * tasks of a process map.
 * @sz: symbolizer
 * @gm: the mappings and their build-ID store (the symbolizer owns them from now on, on
 *      failure too), or NULL
 * @pm: the tasks; it must not change while the symbolizer is used with it
 *
 * A task's mappings are those reported for its process (tgid, else pid) from its exec (any
 * time for a first announcement) up to the next exec of its process; of several that start
 * at one address, the one reported last. O(m log m) in the mappings of each task.
 *
 * Return: 0, or -ENOMEM.
 */
int symbolizer__set_guest_maps(struct symbolizer *sz, struct guest_maps *gm,
			       const struct procmap *pm);

/**
 * symbolizer__file() - the ELF file bound to a task.
 * @sz: symbolizer
 * @t:  task of the map given to symbolizer__bind()
 *
 * Return: the file, or NULL when the task has none (or is not of that map).
 */
const struct symbol_file *symbolizer__file(const struct symbolizer *sz,
					   const struct procmap_task *t);

/**
 * symbolizer__lookup() - the symbol of an address.
 * @sz:   symbolizer
 * @t:    the task the address belongs to, or NULL when unknown
 * @addr: guest address
 * @hit:  receives name and offset (the name owned by the symbolizer)
 *
 * O(log n) in the size of the tables.
 *
 * Return: 0, or -ENOENT when no table names @addr.
 */
int symbolizer__lookup(const struct symbolizer *sz, const struct procmap_task *t,
		       uint64_t addr, struct symbol_hit *hit);

/**
 * symbolizer__scope() - what the symbol and line of an address depend on besides the address,
 * for memoizing them.
 * @sz:   symbolizer
 * @t:    the task the address belongs to, or NULL when unknown
 * @addr: guest address
 *
 * For two tasks and one address, equal scopes mean equal answers of symbolizer__lookup() and
 * symbolizer__line(). The scope is 0 when the task does not matter (a kernel address, a task
 * without a file of its own); never 0 when it does. It is the same for every address below
 * SYMBOLIZER_USER_END (the task's file). O(1).
 *
 * Return: the scope.
 */
uintptr_t symbolizer__scope(const struct symbolizer *sz, const struct procmap_task *t,
			    uint64_t addr);

/**
 * symbolizer__line() - the source line of an address.
 * @sz:   symbolizer
 * @t:    the task, or NULL
 * @addr: guest address
 * @file: receives the source file's base name (owned by the symbolizer)
 * @line: receives the line number
 *
 * Return: 0, or -ENOENT when no table has a line for @addr.
 */
int symbolizer__line(const struct symbolizer *sz, const struct procmap_task *t, uint64_t addr,
		     const char **file, int *line);

/**
 * struct symbolizer_module - a loaded image, as symbolizer__module() finds it.
 * @path:  the file its table was read from (the user's --image, --symbols, --system-map or
 *         what vm.json names), not escaped; "" when not known
 * @guest_path: the path the guest agent reported for the mapping of a build-ID store's file
 *         (guest bytes, not escaped), else NULL
 * @base:  its first run-time address (symbols__extent()'s start plus the table's bias: a
 *         task's load base, the KASLR slide)
 * @end:   one past its last run-time address
 * @table: its table; (@table, @base) is the image's identity: one file loaded at two bases
 *         (a PIE in two processes) is two images
 */
struct symbolizer_module {
	const char *path;
	const char *guest_path;
	uint64_t base, end;
	const struct symbols *table;
};

/**
 * symbolizer__module() - the loaded image an address is in.
 * @sz:   symbolizer
 * @t:    the task the address belongs to, or NULL when unknown
 * @addr: guest address
 * @m:    receives the image
 *
 * The tables are tried in symbolizer__lookup()'s order (the kernel's vmlinux, then its
 * System.map, for a kernel address; the task's file for a user address; the guest image);
 * the first whose extent holds @addr answers. O(1) for an ELF file with segments, O(n) in the
 * symbols of one without (a relocatable object, a System.map).
 *
 * Return: 0, or -ENOENT when no image holds @addr.
 */
int symbolizer__module(const struct symbolizer *sz, const struct procmap_task *t, uint64_t addr,
		       struct symbolizer_module *m);

/**
 * symbolizer__has_tables() - whether any source of symbols was given: the text output marks
 * an address no table names as [unknown] only then.
 * @sz: symbolizer
 *
 * Return: true when an image, a kernel table or a file to bind was given.
 */
bool symbolizer__has_tables(const struct symbolizer *sz);

/**
 * symbolizer__free() - release the symbolizer and its tables.
 * @sz: symbolizer, may be NULL
 */
void symbolizer__free(struct symbolizer *sz);

#endif /* VBTS_DECODER_SYMBOLIZER_H */
