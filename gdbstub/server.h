/* SPDX-License-Identifier: GPL-2.0 */
/*
 * server.h - a gdb remote serial protocol stub over a target: threads, their registers,
 * memory and branch trace (gdb's `record btrace` in BTS format); a recorded trace that does
 * not run, or a live VM that runs, steps and stops at breakpoints. One connection,
 * all-stop; reverse execution happens inside gdb.
 */
#ifndef VBTS_GDBSTUB_SERVER_H
#define VBTS_GDBSTUB_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btrace-xml.h"

/*
 * The registers of gdb's org.gnu.gdb.i386.core feature for x86-64, in target.xml's order;
 * the x87 registers after GDB_REG_GS are never known.
 */
enum gdb_reg {
	GDB_REG_RAX, GDB_REG_RBX, GDB_REG_RCX, GDB_REG_RDX, GDB_REG_RSI, GDB_REG_RDI,
	GDB_REG_RBP, GDB_REG_RSP, GDB_REG_R8, GDB_REG_R9, GDB_REG_R10, GDB_REG_R11,
	GDB_REG_R12, GDB_REG_R13, GDB_REG_R14, GDB_REG_R15, GDB_REG_RIP, GDB_REG_EFLAGS,
	GDB_REG_CS, GDB_REG_SS, GDB_REG_DS, GDB_REG_ES, GDB_REG_FS, GDB_REG_GS,
	GDB_REG_NR
};

/**
 * struct gdb_regs - what is known of a thread's registers.
 * @val:   the values (eflags and the selectors use their low 32 bits)
 * @valid: bit n set when @val[n] is known; the others read as unavailable
 */
struct gdb_regs {
	uint64_t val[GDB_REG_NR];
	uint32_t valid;
};

/**
 * enum gdb_btrace_read - what a qXfer:btrace:read asks for (gdb's btrace_read_type).
 * @GDB_BTRACE_ALL:   everything recorded since recording was turned on
 * @GDB_BTRACE_NEW:   everything, when anything changed since the last read; else nothing
 * @GDB_BTRACE_DELTA: what is new since the last read, the oldest block starting at 0 (gdb
 *                    stitches it to the end of what it has)
 */
enum gdb_btrace_read {
	GDB_BTRACE_ALL,
	GDB_BTRACE_NEW,
	GDB_BTRACE_DELTA,
};

/**
 * enum gdb_stop_kind - why a target that ran stopped.
 * @GDB_STOP_SIGNAL: a thread stopped (breakpoint, step, interrupt): a `T` reply
 * @GDB_STOP_EXITED: the target is gone: a `W` reply, and the session ends
 */
enum gdb_stop_kind {
	GDB_STOP_SIGNAL,
	GDB_STOP_EXITED,
};

/**
 * struct gdb_stop - a stop, as a stop reply tells it.
 * @kind:    enum gdb_stop_kind
 * @thread:  the thread that stopped (GDB_STOP_SIGNAL)
 * @sig:     gdb's signal number: 5 (SIGTRAP) for a breakpoint or a step, 2 for an interrupt
 * @swbreak: it stopped at a software breakpoint (Z0), the PC at the breakpoint
 * @hwbreak: it stopped at a hardware breakpoint (Z1)
 * @status:  the exit status (GDB_STOP_EXITED), 0-255
 */
struct gdb_stop {
	enum gdb_stop_kind kind;
	unsigned int thread;
	int sig;
	bool swbreak, hwbreak;
	int status;
};

/**
 * struct gdb_process_file - an ELF file of a thread's process, as gdb finds it: the program
 * (its name for qXfer:exec-file, its entry and headers for qXfer:auxv) or a shared library
 * (qXfer:libraries-svr4); gdb reads its bytes through vFile packets by @name.
 * @name:      its path in the guest (guest bytes: escaped by the stub)
 * @host_path: the file the stub serves for it
 * @exec:      the program; else a library (or the dynamic loader)
 * @l_addr:    run-time minus link-time address
 * @l_ld:      run-time address of its dynamic section, 0 when it has none
 * @segment:   run-time address of its first loadable segment (qXfer:libraries's segment)
 * @entry:     @exec: its entry point, run-time address
 * @phdr:      @exec: run-time address of its program headers, 0 when unknown
 * @phnum:     @exec: how many program headers
 */
struct gdb_process_file {
	const char *name;
	const char *host_path;
	bool exec;
	uint64_t l_addr, l_ld, segment;
	uint64_t entry, phdr;
	unsigned int phnum;
};

/**
 * struct gdb_target_ops - what the stub asks of the target. Threads are numbered from 0;
 * gdb sees thread n as p1.(n + 1).
 * @nr_threads: how many threads, at least 1
 * @regs:       the registers of thread @t
 * @read_mem:   copy @len bytes at guest virtual address @addr of thread @t's address space;
 *              returns how many bytes could be read from @addr on (0: none)
 * @btrace:     thread @t's branch trace, newest block first, the first ending at its PC;
 *              the array stays the target's. Returns 0 or -errno.
 * @describe:   optional: a few words on thread @t for gdb's `info threads`
 *              (qThreadExtraInfo) into @buf, NUL-terminated
 * @bts_size:   the size reported in btrace-conf (bytes)
 * @files:      optional: the ELF files of thread @t's process (the array stays the
 *              target's); 0 or -errno. With it the stub serves qXfer:exec-file,
 *              qXfer:auxv, qOffsets, qXfer:libraries-svr4, qXfer:libraries and reads of
 *              those files (vFile), so that gdb finds a Linux process's program and
 *              libraries by itself.
 *
 * A target that runs (a live VM) sets these too; NULL in a target that does not (a
 * recorded trace: writes, resumption and breakpoints get an error reply). The target is
 * stopped when the session starts and whenever the stub reads a packet; it runs between
 * @resume and the stop @stopped reports.
 * @write_regs:    set the registers of thread @t whose bit is set in @regs->valid; 0 or
 *                 -errno
 * @write_mem:     store @len bytes at guest virtual address @addr of thread @t's space; 0, or
 *                 -EFAULT when any of it is not mapped (nothing is written then)
 * @breakpoint:    insert (@insert) or remove a breakpoint of @type ('0' software, '1'
 *                 hardware) at @addr; 0, -ENOSPC (too many), -ENOENT (none there to remove)
 * @resume:        run: every thread (@step < 0), or single-step thread @step alone; 0 or
 *                 -errno
 * @interrupt:     ask a running target to stop (gdb's ^C); @stopped then reports it
 * @event_fd:      a descriptor that becomes readable when the target stopped or ended
 * @stopped:       how the target stopped: 1 with @stop filled, 0 while it still runs (a
 *                 wake-up that was no stop), or -errno. While stopped, 1 with the last stop;
 *                 GDB_STOP_EXITED once the target is gone.
 * @btrace_enable: turn recording on (@on) or off for thread @t; 0, or -errno with one line
 *                 for gdb in @err
 * @btrace_read:   instead of @btrace: thread @t's blocks for @how, newest first (the array
 *                 stays the target's until the next call); 0, -EOVERFLOW when records were
 *                 lost since the last read (a delta read), -ENODATA when it is not recording,
 *                 or -errno
 */
struct gdb_target_ops {
	unsigned int (*nr_threads)(void *ctx);
	void (*regs)(void *ctx, unsigned int t, struct gdb_regs *regs);
	size_t (*read_mem)(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len);
	int (*btrace)(void *ctx, unsigned int t, const struct gdb_btrace_block **blocks,
		      size_t *nr);
	void (*describe)(void *ctx, unsigned int t, char *buf, size_t cap);
	uint64_t bts_size;
	int (*files)(void *ctx, unsigned int t, const struct gdb_process_file **files, size_t *nr);
	int (*write_regs)(void *ctx, unsigned int t, const struct gdb_regs *regs);
	int (*write_mem)(void *ctx, unsigned int t, uint64_t addr, const void *buf, size_t len);
	int (*breakpoint)(void *ctx, char type, uint64_t addr, bool insert);
	int (*resume)(void *ctx, int step);
	void (*interrupt)(void *ctx);
	int (*event_fd)(void *ctx);
	int (*stopped)(void *ctx, struct gdb_stop *stop);
	int (*btrace_enable)(void *ctx, unsigned int t, bool on, char *err, size_t errlen);
	int (*btrace_read)(void *ctx, unsigned int t, enum gdb_btrace_read how,
			   const struct gdb_btrace_block **blocks, size_t *nr);
};

/**
 * gdb_server__run() - serve one gdb connection until it detaches, kills or closes.
 * @in_fd:  the connection's read side
 * @out_fd: its write side (the same descriptor for a socket)
 * @ops:    the target
 * @ctx:    argument of @ops
 * @err:    receives one line on failure
 * @errlen: size of @err
 *
 * Every packet is bounded by GDB_PACKET_MAX and checksummed: a bad checksum is answered
 * with `-` (gdb sends it again), too many in a row, garbage between packets, a packet too
 * long or a connection closed inside a packet end the session with an error.
 *
 * A target that runs is resumed by `c`, `s` and `vCont`, and the stub then waits for its
 * stop or a ^C; a session that ends while it runs leaves it running.
 *
 * Return: 0 when gdb detached or killed the target or closed the connection between packets,
 * or the target ended;
 * -EPROTO (garbage, bad checksums), -EMSGSIZE (a packet too long), -EPIPE (closed inside a
 * packet), -EIO or another -errno of read() or write(), -ENOMEM.
 */
int gdb_server__run(int in_fd, int out_fd, const struct gdb_target_ops *ops, void *ctx,
		    char *err, size_t errlen);

#endif /* VBTS_GDBSTUB_SERVER_H */
