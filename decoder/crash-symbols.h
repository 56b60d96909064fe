/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crash-symbols.h - the symbols of a crash report's branches, added when the VMM writes the
 * report: the function, source file and line and module of each branch's source and target,
 * from what the trace directory holds at that time (vm.json's kernel tables, the agent's
 * mappings and the build-ID store's files: trace-dir.h, guest-maps.h).
 *
 * Each branch of "branches" gets "from_symbol" and "to_symbol" when something is known of
 * the address:
 *   {"function":"crashlib_store","offset":"0x11","file":"libcrashlib.c","line":12,
 *    "module":"/libcrashlib.so"}
 * "function" and "offset", "file" and "line", "module" each only when known; the names come
 * from guest files and are stored as valid UTF-8 of at most CRASH_SYMBOLS_NAME_MAX bytes.
 */
#ifndef VBTS_DECODER_CRASH_SYMBOLS_H
#define VBTS_DECODER_CRASH_SYMBOLS_H

#include <jansson.h>

/* Bytes of a function, file or module name stored at most. */
#define CRASH_SYMBOLS_NAME_MAX 256

/**
 * crash_symbols__annotate() - add the symbols of a report's branches.
 * @dir:    the trace directory the report is written into
 * @report: the report as crash-report.c builds it: "cr3", "time" and "branches" (objects with
 *          "from" and "to" as "0x..." strings) are read, the symbol members added
 *
 * The task is the one events.jsonl gives for the report's cr3 at its time. Nothing is
 * printed: a trace whose files cannot be used leaves the report as it was.
 *
 * Return: the number of addresses named, or -errno: -EINVAL when @report is not such an
 * object, -ENOMEM, or what opening the trace directory gave.
 */
int crash_symbols__annotate(const char *dir, json_t *report);

#endif /* VBTS_DECODER_CRASH_SYMBOLS_H */
