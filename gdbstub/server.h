/* SPDX-License-Identifier: GPL-2.0 */
/*
 * server.h - a gdb remote serial protocol stub over a target that does not run: threads,
 * their registers, read-only memory and branch trace (gdb's `record btrace` in BTS format).
 * One connection, all-stop; reverse execution happens inside gdb.
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
 */
struct gdb_target_ops {
	unsigned int (*nr_threads)(void *ctx);
	void (*regs)(void *ctx, unsigned int t, struct gdb_regs *regs);
	size_t (*read_mem)(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len);
	int (*btrace)(void *ctx, unsigned int t, const struct gdb_btrace_block **blocks,
		      size_t *nr);
	void (*describe)(void *ctx, unsigned int t, char *buf, size_t cap);
	uint64_t bts_size;
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
 * Return: 0 when gdb detached or killed the target or closed the connection between packets;
 * -EPROTO (garbage, bad checksums), -EMSGSIZE (a packet too long), -EPIPE (closed inside a
 * packet), -EIO or another -errno of read() or write(), -ENOMEM.
 */
int gdb_server__run(int in_fd, int out_fd, const struct gdb_target_ops *ops, void *ctx,
		    char *err, size_t errlen);

#endif /* VBTS_GDBSTUB_SERVER_H */
