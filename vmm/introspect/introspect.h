/* SPDX-License-Identifier: GPL-2.0 */
/*
 * introspect.h - a running Linux guest's processes, read from guest memory without the guest's
 * help: which process a CR3 belongs to, and the list of all processes.
 *
 * Everything read from the guest is hostile: pointers are checked to be canonical, aligned
 * kernel addresses before use, list walks are bounded and detect cycles, and strings may be
 * unterminated. Garbage yields an error or a skipped task, never a crash.
 *
 * An introspection object is used by one thread at a time (the VMM's collector); it holds no
 * locks and keeps no state between calls except what introspect__open() found.
 */
#ifndef VBTS_VMM_INTROSPECT_INTROSPECT_H
#define VBTS_VMM_INTROSPECT_INTROSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "kernel-info.h"

struct introspect;

/* Default bound of a process-list walk (thread-group leaders, plus threads looked at). */
#define INTROSPECT_MAX_TASKS 65536U
/* CR3 bits 51:12: the physical address of the top-level page table (no PCID, no bit 63). */
#define INTROSPECT_CR3_ADDR 0x000ffffffffff000ULL

/**
 * struct introspect_mem - guest memory as the kernel sees it.
 * @read:      copy @len bytes of guest linear memory at @va, translated through the
 *             4- or 5-level page tables whose top level is at guest-physical @root (a CR3
 *             without flags); 0, or a negative errno when any byte is not mapped to guest RAM
 * @translate: the guest-physical address of @va through the same tables; 0 or -errno
 * @ctx:       their first argument
 *
 * In the VMM both are gva__read() and gva__translate() of vmm/core/gva.h on a struct
 * gva_space with cr0 = PE|PG, cr3 = @root, cr4 = PAE (plus LA57 when the guest's CR4 has it)
 * and efer = LME|LMA, over guest_memory__ptr().
 */
struct introspect_mem {
	int (*read)(void *ctx, uint64_t root, uint64_t va, void *buf, size_t len);
	int (*translate)(void *ctx, uint64_t root, uint64_t va, uint64_t *gpa);
	void *ctx;
};

/* introspect_attach.flags: translate mm->pgd by walking the page tables, never through the
 * direct map at page_offset_base (the reference path). */
#define INTROSPECT_WALK_PGD 0x1U

/**
 * struct introspect_attach - the vCPU state introspection starts from.
 * @cr3:       a CR3 the guest kernel has loaded (any process's, with or without PCID, the KPTI
 *             user half or the kernel half)
 * @cr4:       the guest's CR4: LA57 (bit 12) says which addresses are canonical
 * @lstar:     MSR_LSTAR (the runtime address of entry_SYSCALL_64), 0 when unknown. With a
 *             System.map giving entry_SYSCALL_64 the KASLR slide is their difference;
 *             otherwise the slide is where the build's identity bytes are found.
 * @max_tasks: bound of one walk, 0 for INTROSPECT_MAX_TASKS
 * @flags:     INTROSPECT_WALK_PGD or 0
 */
struct introspect_attach {
	uint64_t cr3;
	uint64_t cr4;
	uint64_t lstar;
	uint32_t max_tasks;
	uint32_t flags;
};

/**
 * struct guest_task - one guest task as read from its task_struct.
 * @task: guest virtual address of its task_struct
 * @mm:   guest virtual address of its mm_struct, 0 for a kernel thread (for a thread-group
 *        leader that has exited while its threads run: the threads' mm)
 * @pgd:  guest-physical address of mm->pgd, the value of CR3 bits 51:12 while it runs (the
 *        kernel half with KPTI: the user half is @pgd + 4 KiB); 0 without an mm
 * @pid:  task_struct.pid
 * @tgid: task_struct.tgid
 * @comm: task_struct.comm as the guest wrote it, cut at its first NUL and always terminated;
 *        any bytes, to be escaped before it reaches a terminal
 * @exit_state: task_struct.exit_state (0 while it runs; EXIT_ZOMBIE 32, EXIT_DEAD 16)
 * @exit_code:  task_struct.exit_code, a wait status (0 when the kernel lacks the member)
 * @parent:     task_struct.real_parent, the task that forked it (0 when unknown)
 */
struct guest_task {
	uint64_t task;
	uint64_t mm;
	uint64_t pgd;
	int32_t pid;
	int32_t tgid;
	char comm[KERNEL_COMM_MAX + 1];
	int32_t exit_state;
	int32_t exit_code;
	uint64_t parent;
};

/**
 * struct introspect_stats - work done so far, for bounds and tests.
 * @reads:   calls of introspect_mem's read and translate
 * @tasks:   task_structs visited by walks
 * @skipped: tasks left out of a walk because a field was unreadable or invalid
 */
struct introspect_stats {
	uint64_t reads;
	uint64_t tasks;
	uint64_t skipped;
};

/**
 * introspect__open() - find a booted kernel in guest memory.
 * @ki:     the kernel build (only read during this call; it may be closed afterwards)
 * @mem:    guest memory access (copied)
 * @at:     vCPU state
 * @err:    one line saying why, on failure
 * @errlen: bytes at @err
 *
 * Finds the KASLR slide, checks init_task (pid 0, no mm), reads page_offset_base (the
 * randomized direct-map base) and from then on walks the kernel's own page tables
 * (init_mm.pgd), whatever CR3 the vCPU has. Call it once the guest has started user space:
 * earlier, its page tables or these variables may not be set up yet.
 *
 * Return: the object, or NULL with errno set: ENOENT (the slide cannot be found: no identity
 * bytes in a raw-BTF kernel_info and no LSTAR with a System.map giving entry_SYSCALL_64, or
 * the bytes are nowhere in the kernel's address range), EINVAL (LSTAR and System.map disagree
 * with the image, or init_task or page_offset_base make no sense: another kernel build, or the
 * guest is not booted), EFAULT (guest memory unreadable where it must be), ENOMEM.
 */
struct introspect *introspect__open(const struct kernel_info *ki, const struct introspect_mem *mem,
				    const struct introspect_attach *at, char *err, size_t errlen);

/**
 * introspect__close() - free the object.
 * @in: the object; may be NULL
 */
void introspect__close(struct introspect *in);

/**
 * introspect__resolve_cr3() - the process whose page tables a CR3 points at.
 * @in:  the object
 * @cr3: a CR3 value as loaded: PCID (bits 11:0) and the no-flush bit 63 are ignored, and a
 *       KPTI user half (the kernel half + 4 KiB) resolves to its process
 * @out: the process (its thread-group leader)
 *
 * Walks init_task.tasks and compares each process's mm->pgd; an exact match wins over a user
 * half. The kernel's own tables (init_mm, used by idle and kernel threads) resolve to
 * init_task, pid 0, with @out->pgd set to them.
 *
 * Return: 0; -ENOENT when no process has these page tables; -EFAULT when the list cannot be
 * read on; -ELOOP when it cycles or holds more than the bound of tasks.
 */
int introspect__resolve_cr3(struct introspect *in, uint64_t cr3, struct guest_task *out);

/**
 * introspect__for_each_process() - call @fn for each process (thread-group leader), init_task
 * first, in the order of the kernel's task list.
 * @in:  the object
 * @fn:  called with each process; a non-zero return stops the walk and is returned
 * @ctx: @fn's second argument
 *
 * Tasks whose fields cannot be read or make no sense are skipped (counted in the stats).
 *
 * Return: 0 after the last process; @fn's non-zero value; -EFAULT or -ELOOP as
 * introspect__resolve_cr3().
 */
int introspect__for_each_process(struct introspect *in,
				 int (*fn)(const struct guest_task *task, void *ctx), void *ctx);

/**
 * introspect__read_task() - read one task_struct again, at an address a walk returned.
 * @in:   the object
 * @task: guest virtual address of the task_struct (guest_task.task)
 * @out:  the task as it is now; @out->mm and @out->pgd are 0 once it has dropped its mm
 *        (exited, or a kernel thread)
 *
 * The memory may have been freed and reused since: compare the pid with the one known.
 *
 * Return: 0; -EINVAL for an address that is no kernel pointer; -EFAULT when it or its mm is
 * unreadable.
 */
int introspect__read_task(struct introspect *in, uint64_t task, struct guest_task *out);

/**
 * introspect__parent_tgid() - the thread-group id of the process that forked a task.
 * @in:   the object
 * @task: the task (guest_task.parent is its parent's task_struct)
 * @tgid: the parent's tgid
 *
 * Return: 0; -ENOENT when the kernel lacks real_parent; -EINVAL or -EFAULT for a parent that
 * is no kernel pointer or unreadable.
 */
int introspect__parent_tgid(struct introspect *in, const struct guest_task *task, int32_t *tgid);

/**
 * introspect__exe_name() - the base name of the file a process runs (mm->exe_file's dentry).
 * @in:  the object
 * @mm:  guest virtual address of the mm_struct (guest_task.mm)
 * @buf: the name, cut at @len - 1 bytes and terminated; any bytes but NUL
 * @len: bytes at @buf, at least 1
 *
 * Set by execve before it switches to the new address space: it names the program while the
 * comm is still the parent's.
 *
 * Return: 0; -ENOENT when the kernel lacks the members or the mm has no file; -EINVAL for a
 * pointer that is no kernel pointer; -EFAULT when something is unreadable.
 */
int introspect__exe_name(struct introspect *in, uint64_t mm, char *buf, size_t len);

/**
 * introspect__current() - the task a CPU's per-CPU `current` points at.
 * @in:  the object
 * @cpu: the CPU number (the vCPU index), < 8192
 * @out: the task (any thread, not necessarily a group leader)
 *
 * switch_mm() writes CR3 before `current` changes, so this is not how a CR3 is resolved; it is
 * what the guest's scheduler last chose on that CPU.
 *
 * Return: 0; -ENOENT when the kernel_info lacked __per_cpu_offset or the current-task symbol;
 * -EINVAL for a bad @cpu; -EFAULT when memory is unreadable or a pointer is not a kernel one.
 */
int introspect__current(struct introspect *in, unsigned int cpu, struct guest_task *out);

/**
 * introspect__slide() - the KASLR slide of the kernel image.
 * @in: the object
 *
 * Return: runtime minus link-time address of every image symbol (a multiple of 2 MiB).
 */
uint64_t introspect__slide(const struct introspect *in);

/**
 * introspect__page_offset_base() - the direct map's base as the guest randomized it.
 * @in: the object
 *
 * Return: page_offset_base read from the guest, or 0 when the kernel_info lacked the symbol
 * (mm->pgd is then translated by walking the page tables).
 */
uint64_t introspect__page_offset_base(const struct introspect *in);

/**
 * introspect__tasks_tail() - the last task of init_task.tasks, where a new process is added.
 * @in:   the object
 * @tail: its list node's address
 *
 * One read: a changed tail says that processes were created (or the last one exited).
 *
 * Return: 0, or -EFAULT when unreadable.
 */
int introspect__tasks_tail(struct introspect *in, uint64_t *tail);

/**
 * introspect__panic_cpu() - the CPU that is panicking, as the guest's panic_cpu says.
 * @in:  the object
 * @cpu: its value: the panicking CPU's number, -1 (PANIC_CPU_INVALID) while nothing panics
 *
 * One read. The guest kernel writes it; a guest that panics or lies about it harms no one.
 *
 * Return: 0; -ENOENT when the kernel_info lacked panic_cpu; -EFAULT when unreadable.
 */
int introspect__panic_cpu(struct introspect *in, int32_t *cpu);

/**
 * introspect__kernel_root() - the kernel's own top-level page table (init_mm.pgd).
 * @in: the object
 *
 * Return: its guest-physical address, the root of every read.
 */
uint64_t introspect__kernel_root(const struct introspect *in);

/**
 * introspect__stats() - work counters.
 * @in: the object
 *
 * Return: the counters, updated by every call.
 */
const struct introspect_stats *introspect__stats(const struct introspect *in);

#endif /* VBTS_VMM_INTROSPECT_INTROSPECT_H */
