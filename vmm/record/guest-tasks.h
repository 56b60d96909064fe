/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest-tasks.h - a Linux guest's processes as the collector sees them: which process each
 * loaded CR3 is (through vmm/introspect/, without the guest's help), the --task selection of
 * the processes to record, and the task, exec, thread and exit events of events.jsonl.
 *
 * The tracer backend calls guest_tasks__switch() at every CR3 load the kernel reports and
 * guest_tasks__settle() at its other exits; all functions may be called from any vCPU thread.
 */
#ifndef VBTS_VMM_GUEST_TASKS_H
#define VBTS_VMM_GUEST_TASKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct guest_memory;
struct guest_tasks;

/* --task values accepted at most. */
#define GUEST_TASKS_MAX_SELECT 64
/* Events written at most (a guest that forks without end fills no disk); then counted. */
#define GUEST_TASKS_MAX_EVENTS (1U << 20)
/* Processes remembered at once (exited ones are forgotten first). */
#define GUEST_TASKS_MAX_PROCS 4096
/* Exited processes remembered for the thread records still waiting in the vCPUs' rings. */
#define GUEST_TASKS_EXITED_MAX 64
/*
 * The address-space id of a CR3 as the kernel's CR3 tracing reports it with KPTI masking:
 * bits 51:13. A Linux PGD is two pages when the kernel is built with page-table isolation
 * (its user half at bit 12), so one process has one id whether or not KPTI is on. (A kernel
 * built without it may give two processes the two pages of one such pair: they then share an
 * id, and the second is taken for the first.)
 */
#define GUEST_TASKS_CR3_ID 0x7fffffffffffe000ULL

/**
 * struct guest_tasks_config - what the collector knows before the guest runs.
 * @kernel:     the bzImage or vmlinux booted (its BTF and exported symbols)
 * @system_map: its System.map, or NULL
 * @select:     the --task values: process names (a comm, cut to 15 bytes, or the base name of
 *              the executable) or decimal pids; none records every process
 * @nr_select:  their number, at most GUEST_TASKS_MAX_SELECT
 * @nr_vcpus:   vCPUs of the VM
 * @mem:        guest memory of the VMM's own VM, or NULL when @phys is given
 * @phys:       guest-physical memory through another accessor (`vbts attach` reads it
 *              through the tracer fd: attach/tracer-mem.h), used when @mem is NULL; it has the
 *              semantics of struct gva_space's ptr: a host pointer valid for [gpa, gpa + len)
 *              until the next call, or NULL when any of it is not guest RAM
 * @phys_ctx:   its first argument
 * @read:       with @phys, bulk reads of guest-physical memory for the one search of guest RAM
 *              (guest_tasks__write_kallsyms()): @len bytes (at most GUEST_TASKS_READ_MAX) at
 *              @gpa into @buf, 0 or -errno (-ENOENT where it is no guest RAM); may be NULL
 */
struct guest_tasks_config {
	const char *kernel;
	const char *system_map;
	const char *const *select;
	unsigned int nr_select;
	unsigned int nr_vcpus;
	const struct guest_memory *mem;
	void *(*phys)(const void *ctx, uint64_t gpa, uint64_t len);
	const void *phys_ctx;
	int (*read)(const void *ctx, uint64_t gpa, void *buf, size_t len);
};

/* The largest read of struct guest_tasks_config.read. */
#define GUEST_TASKS_READ_MAX (64U << 10)

/**
 * guest_tasks__create() - read the kernel's BTF and symbols; the guest runs later.
 * @cfg:    the configuration (copied)
 * @err:    one line saying why, on failure
 * @errlen: bytes at @err
 *
 * Return: the object, or NULL with errno set (ENOEXEC, EINVAL, ENOENT as kernel_info__open();
 * EINVAL for a bad --task value; ENOMEM).
 */
struct guest_tasks *guest_tasks__create(const struct guest_tasks_config *cfg, char *err,
					size_t errlen);

/**
 * guest_tasks__destroy() - free the object.
 * @gt: may be NULL
 */
void guest_tasks__destroy(struct guest_tasks *gt);

/**
 * guest_tasks__set_events() - where events go (events.jsonl), NULL for nowhere.
 * @gt:     the object
 * @events: a stream shared with other writers: each line is written under flockfile()
 */
void guest_tasks__set_events(struct guest_tasks *gt, FILE *events);

/**
 * guest_tasks__set_select() - a new --task selection while the guest runs (the control
 * socket's config tasks); @nr 0: no selection. Every process is judged anew at its next
 * address-space load (its children are selected from then on, as with --task).
 * @gt:     the tasks
 * @select: process names or pids, as --task takes them
 * @nr:     their number, at most GUEST_TASKS_MAX_SELECT
 * @err:    one line on refusal
 * @errlen: its size
 *
 * Return: 0, or -EINVAL (a bad value, too many; the selection is then as it was), -ENOMEM.
 */
int guest_tasks__set_select(struct guest_tasks *gt, const char *const *select, unsigned int nr,
			    char *err, size_t errlen);

/**
 * guest_tasks__selective() - whether --task values were given.
 * @gt: the object
 *
 * Return: true when only selected processes are to be recorded.
 */
bool guest_tasks__selective(const struct guest_tasks *gt);

/**
 * guest_tasks__attached() - whether introspection has found the running kernel.
 * @gt: the object
 *
 * Return: true once guest_tasks__attach() succeeded.
 */
bool guest_tasks__attached(struct guest_tasks *gt);

/**
 * guest_tasks__attach() - find the running kernel in guest memory.
 * @gt:    the object
 * @cr3:   a CR3 the guest has loaded
 * @cr4:   the guest's CR4
 * @lstar: the guest's MSR_LSTAR, 0 when unknown
 *
 * Cheap to call again while it fails (the guest has not booted far enough); after a bounded
 * number of failures it stops trying and says why once.
 *
 * Return: 0 (also when already attached), or a negative errno of introspect__open().
 */
int guest_tasks__attach(struct guest_tasks *gt, uint64_t cr3, uint64_t cr4, uint64_t lstar);

/**
 * guest_tasks__kaslr_slide() - the slide introspection found.
 * @gt:    the object
 * @slide: the slide, when known
 *
 * Return: true when known.
 */
bool guest_tasks__kaslr_slide(struct guest_tasks *gt, uint64_t *slide);

/**
 * guest_tasks__write_kallsyms() - every symbol of the guest kernel, as a System.map.
 * @gt:     the object, attached (the slide known)
 * @path:   the file written (through @path.tmp, renamed over it)
 * @nr:     result: the symbols written; may be NULL
 * @err:    one line saying why, on failure
 * @errlen: bytes at @err
 *
 * The running kernel's vmcoreinfo page, found in guest RAM (the VMM's memory, or read through
 * struct guest_tasks_config.read: from 0 up to the first hole above 1 MiB, then from 4 GiB up
 * to the next, as PC machines place RAM), says where its kallsyms tables are; they are read
 * from the kernel file booted, checked against its exported symbols, and written with
 * link-time addresses (vmm/introspect/kallsyms.h). Everything from the guest is
 * a candidate only: a page that fails the checks is passed over.
 *
 * Return: 0; -ENOENT when the kernel is not attached or no vmcoreinfo page names the tables;
 * -EINVAL when none of them holds; the errors of reading the kernel file or writing @path.
 */
int guest_tasks__write_kallsyms(struct guest_tasks *gt, const char *path, size_t *nr, char *err,
				size_t errlen);

/**
 * guest_tasks__switch() - a vCPU loaded another address space.
 * @gt:      the object
 * @vcpu:    the vCPU index
 * @old_cr3: CR3 before the load
 * @new_cr3: CR3 after it
 * @time_ns: when (ns since the trace started, the time of the ring's escape records)
 *
 * Settles the announcement of @old_cr3's process, writes an exit event when that process has
 * gone, resolves @new_cr3 to its process and queues its task or exec event (written by the
 * next settle, with the comm the process has then: execve loads the new address space before
 * it sets the new comm).
 *
 * Return: true when @new_cr3's process is to be recorded: one --task selects, or without
 * --task any process but the kernel's own (pid 0); false otherwise, and for an address space
 * no process has.
 */
/**
 * guest_tasks__thread() - a THREAD record of the kernel ring: guest thread @pid (of @tgid, task
 * address bits 0-55 @task) returned to user mode in the address space loaded on @vcpu.
 * @gt:      the guest's tasks
 * @vcpu:    the vCPU it returned on
 * @pid:     the thread's pid
 * @tgid:    its tgid
 * @task:    bits 0-55 of its task_struct's address
 * @cr3:     the address space the record's stream had then (its last TASK_ARRIVE), or ~0 when
 *           not known: the task's own then
 * @time_ns: when (ns since the trace started)
 *
 * A pid that is neither the address space's owner nor a process known by an address space
 * of its own (a thread, or a CLONE_VM child such as a vfork child) is announced once with a
 * `thread` event ({"event":"thread","pid","tgid","name","cr3","time","vcpu"}: the CR3 stays its
 * owner's), when it is of the owner's thread group or a group of its own; its name is its
 * task's comm while the task is still in that address space, else the owner's (the record may
 * be copied after the thread exited or exec'd). The owner may have exited already (its exit
 * seen on another vCPU, or at the CR3 load whose exit copies this record): the last
 * GUEST_TASKS_EXITED_MAX processes that exited are remembered for that. The event's "ppid" is
 * the task's parent's tgid when it is read, else the owner's parent for a thread of its group.
 * When it execs later, its new address space is announced as an exec, not a new task. Guest
 * values are not trusted: a record that does not check out announces nothing.
 */
void guest_tasks__thread(struct guest_tasks *gt, unsigned int vcpu, int32_t pid, int32_t tgid,
			 uint64_t task, uint64_t cr3, uint64_t time_ns);

/**
 * guest_tasks__thread_layout() - where the guest kernel keeps a running thread's identity,
 * for the patched KVM to name threads at their returns to user mode (its
 * KVM_X86_BTS_CFG_THREADS).
 * @gt:      the guest's tasks
 * @current: result: offset of the current-task pointer from the per-CPU base (the kernel's GS
 *           base; pcpu_hot.current_task on 6.x)
 * @pid:     result: offset of task_struct.pid
 * @tgid:    result: offset of task_struct.tgid
 *
 * Known from the kernel's BTF and symbols before it boots: no guest memory is read.
 *
 * Return: 0; -ENOENT when the kernel's per-CPU area is not zero-based or its current task
 * variable is unknown.
 */
int guest_tasks__thread_layout(const struct guest_tasks *gt, uint64_t *current, uint32_t *pid,
			       uint32_t *tgid);

bool guest_tasks__switch(struct guest_tasks *gt, unsigned int vcpu, uint64_t old_cr3,
			 uint64_t new_cr3, uint64_t time_ns);

/**
 * guest_tasks__tlb_layout() - where the guest kernel keeps the id of the mm each ASID holds
 * (cpu_tlbstate.ctxs[asid].ctx_id), for the patched KVM to keep the CR3 loads of processes
 * that are not recorded from exiting (its KVM_X86_SET_CR3_QUIET).
 * @gt:     the guest's tasks
 * @offset: result: offset of ctxs[0].ctx_id from the per-CPU base (the kernel's GS base)
 * @stride: result: bytes from one ASID's context to the next
 * @count:  result: number of ASIDs
 *
 * Known from the kernel's BTF: no guest memory is read.
 *
 * Return: 0; -ENOENT when the BTF does not have it.
 */
int guest_tasks__tlb_layout(const struct guest_tasks *gt, uint64_t *offset, uint32_t *stride,
			    uint32_t *count);

/**
 * guest_tasks__quiet() - whether address space @cr3, which @vcpu loaded last
 * (guest_tasks__switch()), has nothing more to tell at its loads: processes are selected by
 * name, and it is a process's (or the kernel's own, pid 0) that is not one of them and has its
 * final name (announced), or no process's and older than every process's (text poking's).
 * @gt:   the guest's tasks
 * @vcpu: the vCPU
 * @cr3:  the address space
 * @ctx:  its mm's context id, as the kernel read it at the load (kvm-bts-uapi.h): mms are
 *        numbered in the order they were made
 *
 * Its loads from and to other such processes may then stay in the kernel; the vCPU's
 * current process is then known at the next load that exits, or guest_tasks__resync().
 *
 * Return: true when it is such a process.
 */
bool guest_tasks__quiet(struct guest_tasks *gt, unsigned int vcpu, uint64_t cr3, uint64_t ctx);

/**
 * guest_tasks__select_gen() - a count that changes with every guest_tasks__set_select(): a
 * process found quiet before may be selected now.
 * @gt: the guest's tasks
 *
 * Return: the count.
 */
unsigned int guest_tasks__select_gen(const struct guest_tasks *gt);

/**
 * guest_tasks__resync() - @vcpu has address space @cr3 loaded now (its loads may have stayed
 * in the kernel since the last guest_tasks__switch()): make the process that has it the
 * vCPU's current one, or none when no known process has it.
 * @gt:   the guest's tasks
 * @vcpu: the vCPU
 * @cr3:  its CR3
 */
void guest_tasks__resync(struct guest_tasks *gt, unsigned int vcpu, uint64_t cr3);

/**
 * guest_tasks__walks_saved() - loads of an address space that recently had no process, not
 * walked for again.
 * @gt: the object
 *
 * Return: the count.
 */
uint64_t guest_tasks__walks_saved(struct guest_tasks *gt);

/**
 * guest_tasks__current_pid() - the process a vCPU loaded last.
 * @gt:   the object
 * @vcpu: the vCPU index
 * @pid:  its pid, as the guest kernel has it
 * @tgid: its tgid
 *
 * Return: true when the address space @vcpu loaded last belongs to a known process.
 */
bool guest_tasks__current_pid(struct guest_tasks *gt, unsigned int vcpu, int32_t *pid,
			      int32_t *tgid);

/**
 * guest_tasks__renewed() - whether a vCPU's last load found its address space anew.
 * @gt:   the object
 * @vcpu: the vCPU index
 *
 * Return: true when the address space loaded by @vcpu's last guest_tasks__switch() was not
 * known with the process that has it now: a new process, an exec, or page tables used again
 * after their process exited. Whatever was left waiting in it belongs to its last owner.
 */
bool guest_tasks__renewed(struct guest_tasks *gt, unsigned int vcpu);

/**
 * guest_tasks__settle() - write a queued announcement once the process's comm is final.
 * @gt:    the object
 * @vcpu:  the vCPU index
 * @force: write it now whatever the comm (the vCPU leaves the address space, or the run ends)
 *
 * Without @force the announcement waits until the comm equals the executable's base name
 * (cut to 15 bytes).
 *
 * Return: true when the process on @vcpu became selected just now (its final comm matches a
 * --task name its executable's name did not): it is to be recorded from here on.
 */
bool guest_tasks__settle(struct guest_tasks *gt, unsigned int vcpu, bool force);

/**
 * guest_tasks__gone() - whether the process whose address space a vCPU loaded last has exited
 * (then its exit event is written now).
 * @gt:      the object
 * @vcpu:    the vCPU index
 * @time_ns: the time of the exit event
 *
 * One read of its task_struct. The address space of an exited task stays loaded while kernel
 * threads run on the vCPU, until the next user task is scheduled there.
 *
 * Return: true when it has exited, or the vCPU has no known process loaded.
 */
bool guest_tasks__gone(struct guest_tasks *gt, unsigned int vcpu, uint64_t time_ns);

/**
 * guest_tasks__reap() - find recorded processes that have exited on their vCPU without
 * another CR3 load (the kernel keeps an exited task's address space loaded while kernel
 * threads run), and write their exit events.
 * @gt:      the object
 * @time_ns: the time of the exit events
 * @gone:    per vCPU (nr_vcpus entries): set when its process has exited just now; the vCPU is
 *           to be kicked so that its tracer stops recording (guest_tasks__gone())
 *
 * One read of a task_struct per vCPU; for the VMM's main thread, every 100 ms.
 *
 * Return: the number of vCPUs set in @gone.
 */
unsigned int guest_tasks__reap(struct guest_tasks *gt, uint64_t time_ns, bool *gone);

/**
 * guest_tasks__panicking() - whether the guest kernel is panicking, by its panic_cpu.
 * @gt:  the object
 * @cpu: receives the panicking CPU's number as the guest wrote it (not checked)
 *
 * One read of guest memory, once attached; for the VMM's main thread (every 100 ms) and for a
 * vCPU that sees the guest reset. This sees a panic without the guest's pvpanic driver.
 *
 * Return: true when panic_cpu is known and holds a CPU.
 */
bool guest_tasks__panicking(struct guest_tasks *gt, int32_t *cpu);

/* Crashes waiting per vCPU for guest_tasks__take_crash(); more are counted and dropped. */
#define GUEST_TASKS_MAX_CRASHES 8

/**
 * struct guest_crash - a guest process, and the fatal signal that killed it.
 * @pid, @tgid: its ids
 * @signo:      the signal (Linux x86 numbers), 0 for a process that did not crash
 * @id:         its address-space id (guest_tasks__id())
 * @time_ns:    when its exit was seen (ns since the trace started)
 * @comm:       its comm (guest bytes, NUL-terminated)
 */
struct guest_crash {
	int32_t pid;
	int32_t tgid;
	int signo;
	uint64_t id;
	uint64_t time_ns;
	char comm[64 + 1];
};

/**
 * guest_tasks__take_crash() - a process that ran on a vCPU last and was killed by SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE or SIGABRT, as its exit was seen (oldest first).
 * @gt:   the object
 * @vcpu: the vCPU index
 * @c:    receives it
 *
 * Return: true when there was one (it is taken off the queue).
 */
bool guest_tasks__take_crash(struct guest_tasks *gt, unsigned int vcpu, struct guest_crash *c);

/**
 * guest_tasks__current() - the process a vCPU loaded last, with its comm now.
 * @gt:   the object
 * @vcpu: the vCPU index
 * @c:    receives it (@signo 0)
 *
 * Return: true when known.
 */
bool guest_tasks__current(struct guest_tasks *gt, unsigned int vcpu, struct guest_crash *c);

/**
 * guest_tasks__id() - the address-space id of a CR3, as in the events and the ring's task
 * escape records.
 * @cr3: a CR3 value
 *
 * Return: @cr3 & GUEST_TASKS_CR3_ID.
 */
static inline uint64_t guest_tasks__id(uint64_t cr3)
{
	return cr3 & GUEST_TASKS_CR3_ID;
}

#endif /* VBTS_VMM_GUEST_TASKS_H */
