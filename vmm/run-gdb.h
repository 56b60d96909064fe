/* SPDX-License-Identifier: GPL-2.0 */
/*
 * run-gdb.h - vbts run --gdb: the gdb stub of gdbstub/ on the running VM. vCPUs are gdb
 * threads; the VM stops whole while gdb holds it (all-stop); breakpoints and steps are seen at
 * the single-steps of the vCPUs; `record btrace` reads the vCPU's live ring.
 */
#ifndef VBTS_VMM_RUN_GDB_H
#define VBTS_VMM_RUN_GDB_H

#include <stdbool.h>
#include <stddef.h>

struct run_gdb;
struct trace;
struct vm;

/**
 * run_gdb__create() - listen for gdb on @addr (PORT, :PORT or ADDR:PORT; loopback unless
 * an address is given) and become @vm's debugger (vm->debug). Before the vCPU threads start.
 * @vm:     the VM, its vCPUs created
 * @addr:   --gdb's argument
 * @hold:   --gdb-wait: the vCPUs start paused, gdb resumes them
 * @trace:  the run's trace, or NULL (then `record btrace` is refused)
 * @err:    receives one line on failure
 * @errlen: size of @err
 *
 * Return: the debugger, or NULL with errno set (EINVAL for a bad address, a bind() error).
 */
struct run_gdb *run_gdb__create(struct vm *vm, const char *addr, bool hold,
				struct trace *trace, char *err, size_t errlen);

/**
 * run_gdb__hold() - with --gdb-wait, vCPU @index is one the run starts: gdb's first
 * continue starts it.
 * @g:     the debugger
 * @index: the vCPU
 */
void run_gdb__hold(struct run_gdb *g, unsigned int index);

/**
 * run_gdb__start() - start the thread that accepts gdb's connections and serves them.
 * @g: the debugger
 *
 * Return: 0 or -errno.
 */
int run_gdb__start(struct run_gdb *g);

/**
 * run_gdb__vm_ended() - the vCPU threads are joined: tell a connected gdb (`W` when it waits
 * for a stop) and end its session.
 * @g:      the debugger, may be NULL
 * @status: the run's exit status
 */
void run_gdb__vm_ended(struct run_gdb *g, int status);

/**
 * run_gdb__destroy() - end the thread, close the sockets; after run_gdb__vm_ended() when the
 * VM ran.
 * @g: the debugger, may be NULL
 */
void run_gdb__destroy(struct run_gdb *g);

#endif /* VBTS_VMM_RUN_GDB_H */
