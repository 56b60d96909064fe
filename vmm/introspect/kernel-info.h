/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel-info.h - what host-side introspection needs to know about one Linux kernel build, taken
 * from its files alone: structure member offsets from its BTF, and link-time addresses of a few
 * symbols from System.map or from the vmlinux's own exported-symbol table.
 *
 * Nothing is hard-coded: another x86-64 kernel with BTF (CONFIG_DEBUG_INFO_BTF) works as long
 * as it has the members named here.
 */
#ifndef VBTS_VMM_INTROSPECT_KERNEL_INFO_H
#define VBTS_VMM_INTROSPECT_KERNEL_INFO_H

#include <stddef.h>
#include <stdint.h>

struct kernel_info;

/* An optional member the kernel does not have. */
#define KERNEL_LAYOUT_ABSENT UINT32_MAX
/* Largest task_struct.comm accepted (TASK_COMM_LEN is 16). */
#define KERNEL_COMM_MAX 64
/* Largest struct task_struct accepted (Debian 6.12's is 9792 bytes). */
#define KERNEL_TASK_MAX (64U << 10)

/**
 * struct kernel_layout - byte offsets of members, through nested anonymous structs and unions.
 * @task_size:          sizeof(struct task_struct)
 * @task_pid:           task_struct.pid (pid_t)
 * @task_tgid:          task_struct.tgid (pid_t)
 * @task_comm:          task_struct.comm (char[@task_comm_len])
 * @task_comm_len:      elements of comm, 1..KERNEL_COMM_MAX
 * @task_mm:            task_struct.mm (struct mm_struct *; NULL for kernel threads)
 * @task_active_mm:     task_struct.active_mm (&init_mm in init_task)
 * @task_tasks:         task_struct.tasks (struct list_head; the list of thread-group leaders,
 *                      headed by init_task.tasks)
 * @task_group_leader:  task_struct.group_leader, or KERNEL_LAYOUT_ABSENT
 * @task_exit_state:    task_struct.exit_state (int), or KERNEL_LAYOUT_ABSENT
 * @task_signal:        task_struct.signal, or KERNEL_LAYOUT_ABSENT
 * @task_thread_node:   task_struct.thread_node (6.7+: in signal->thread_head), or ABSENT
 * @task_thread_group:  task_struct.thread_group (before 6.7: a ring of the group's threads),
 *                      or ABSENT
 * @signal_thread_head: signal_struct.thread_head, or ABSENT
 * @mm_pgd:             mm_struct.pgd (pgd_t *, a direct-map address)
 * @list_next:          list_head.next
 * @pcpu_current_task:  offset of the current task pointer inside the per-CPU symbol
 *                      KERNEL_SYM_CURRENT (pcpu_hot.current_task on 6.x, 0 for current_task)
 * @task_exit_code:     task_struct.exit_code (int: a wait status), or ABSENT
 * @mm_exe_file:        mm_struct.exe_file (struct file *), or ABSENT
 * @file_dentry:        file.f_path.dentry (struct dentry *), or ABSENT
 * @dentry_name:        dentry.d_name.name (const unsigned char *), or ABSENT
 * @task_real_parent:   task_struct.real_parent (struct task_struct *), or ABSENT
 * @tlb_ctx:            offset in the per-CPU area of cpu_tlbstate.ctxs[0].ctx_id (the id of
 *                      the mm an ASID holds, written before its CR3 is loaded), or ABSENT
 * @tlb_ctx_stride:     sizeof(struct tlb_context), 0 when @tlb_ctx is ABSENT
 * @tlb_ctx_count:      elements of cpu_tlbstate.ctxs (TLB_NR_DYN_ASIDS), 0 when ABSENT
 */
struct kernel_layout {
	uint32_t task_size;
	uint32_t task_pid;
	uint32_t task_tgid;
	uint32_t task_comm;
	uint32_t task_comm_len;
	uint32_t task_mm;
	uint32_t task_active_mm;
	uint32_t task_tasks;
	uint32_t task_group_leader;
	uint32_t task_exit_state;
	uint32_t task_signal;
	uint32_t task_thread_node;
	uint32_t task_thread_group;
	uint32_t signal_thread_head;
	uint32_t mm_pgd;
	uint32_t list_next;
	uint32_t pcpu_current_task;
	uint32_t task_exit_code;
	uint32_t mm_exe_file;
	uint32_t file_dentry;
	uint32_t dentry_name;
	uint32_t task_real_parent;
	uint32_t tlb_ctx;
	uint32_t tlb_ctx_stride;
	uint32_t tlb_ctx_count;
};

/**
 * enum kernel_sym - the symbols introspection uses.
 * @KERNEL_SYM_INIT_TASK:        init_task (required)
 * @KERNEL_SYM_INIT_MM:          init_mm, the kernel's own mm: its pgd is the root of every
 *                               read (required; not exported, so from System.map, else from
 *                               the static initializer init_task.active_mm = &init_mm in the
 *                               image: at run time the field is NULL while CPU 0 runs a task)
 * @KERNEL_SYM_PER_CPU_OFFSET:   __per_cpu_offset[NR_CPUS]
 * @KERNEL_SYM_CURRENT:          the per-CPU variable holding the current task: pcpu_hot (6.x)
 *                               or current_task (older kernels)
 * @KERNEL_SYM_PAGE_OFFSET_BASE: page_offset_base, the randomized base of the direct map
 * @KERNEL_SYM_PANIC_CPU:        panic_cpu, the atomic_t that panic() sets to its CPU (optional; not
 *                               exported, so from System.map, else from the first LOCK CMPXCHG
 *                               to memory in the code of the exported panic())
 * @KERNEL_SYM_ENTRY_SYSCALL_64: entry_SYSCALL_64, what MSR_LSTAR holds (System.map only: it is
 *                               not exported)
 * @KERNEL_SYM_COUNT:            number of symbols
 */
enum kernel_sym {
	KERNEL_SYM_INIT_TASK,
	KERNEL_SYM_INIT_MM,
	KERNEL_SYM_PER_CPU_OFFSET,
	KERNEL_SYM_CURRENT,
	KERNEL_SYM_PAGE_OFFSET_BASE,
	KERNEL_SYM_ENTRY_SYSCALL_64,
	KERNEL_SYM_PANIC_CPU,
	KERNEL_SYM_COUNT,
};

/**
 * enum kernel_sym_source - where a symbol's address came from.
 * @KERNEL_SYM_FROM_NONE:       not known
 * @KERNEL_SYM_FROM_SYSTEM_MAP: the System.map given
 * @KERNEL_SYM_FROM_KSYMTAB:    the vmlinux's exported-symbol table
 * @KERNEL_SYM_FROM_IMAGE:      a pointer's initial value in the vmlinux's data
 * @KERNEL_SYM_FROM_CODE:       an operand of an instruction of an exported function
 */
enum kernel_sym_source {
	KERNEL_SYM_FROM_NONE,
	KERNEL_SYM_FROM_SYSTEM_MAP,
	KERNEL_SYM_FROM_KSYMTAB,
	KERNEL_SYM_FROM_IMAGE,
	KERNEL_SYM_FROM_CODE,
};

/**
 * kernel_info__open() - learn a kernel build from its files.
 * @kernel:     a bzImage (its zstd, xz or gzip payload is decompressed), an uncompressed vmlinux
 *              ELF with a .BTF section, or raw BTF (a copy of /sys/kernel/btf/vmlinux)
 * @system_map: its System.map, or NULL. Symbols are taken from it first, then from the
 *              vmlinux's exported symbols; a placeholder without symbol lines (Debian's) is as
 *              good as none. A symbol both give with different addresses is an error (the map is
 *              another build's).
 * @err:        one line saying why, on failure
 * @errlen:     bytes at @err
 *
 * Return: the kernel's info, or NULL with errno set: ENOEXEC (not a kernel file, or no .BTF in
 * it), EINVAL (BTF without the required members, a mismatched System.map), ENOENT (init_task
 * or init_mm unknown: raw BTF needs a System.map), ENOMEM, or the errno of reading a file.
 */
struct kernel_info *kernel_info__open(const char *kernel, const char *system_map, char *err,
				      size_t errlen);

/**
 * kernel_info__close() - free the info.
 * @ki: the info; may be NULL
 */
void kernel_info__close(struct kernel_info *ki);

/**
 * kernel_info__layout() - the member offsets.
 * @ki: the info
 *
 * Return: the offsets, valid until kernel_info__close().
 */
const struct kernel_layout *kernel_info__layout(const struct kernel_info *ki);

/**
 * kernel_info__symbol() - a symbol's link-time address.
 * @ki:   the info
 * @sym:  which symbol
 * @addr: result: the address; a per-CPU variable's is its offset in the per-CPU area on
 *        kernels whose per-CPU section is zero-based (below 0xffff800000000000)
 *
 * Return: 0, or -ENOENT when the symbol is unknown.
 */
int kernel_info__symbol(const struct kernel_info *ki, enum kernel_sym sym, uint64_t *addr);

/**
 * kernel_info__symbol_source() - where a symbol's address came from.
 * @ki:  the info
 * @sym: which symbol
 *
 * Return: the source, KERNEL_SYM_FROM_NONE when it is unknown.
 */
enum kernel_sym_source kernel_info__symbol_source(const struct kernel_info *ki,
						  enum kernel_sym sym);

/**
 * kernel_info__identity() - bytes the running kernel holds at a known link-time address and
 * that no relocation changes: the GNU build-ID note, else the start of __ksymtab_strings.
 * Introspection finds the KASLR slide by where in guest memory these bytes are.
 * @ki:    the info
 * @va:    result: their link-time virtual address
 * @bytes: result: the bytes (valid until kernel_info__close())
 * @len:   result: their number, 1..4096
 *
 * Return: 0, or -ENOENT when the info came from raw BTF (no image).
 */
int kernel_info__identity(const struct kernel_info *ki, uint64_t *va, const uint8_t **bytes,
			  size_t *len);

#endif /* VBTS_VMM_INTROSPECT_KERNEL_INFO_H */
