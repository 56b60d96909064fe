/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fake-kernel.h - a made-up Linux kernel for the introspection tests: its BTF (written with
 * libbpf, with a layout unlike any real kernel's: members inside nested anonymous structs and
 * unions at non-zero offsets, a bit field), its vmlinux ELF (.BTF, .notes build ID,
 * __ksymtab, init_task's initializer), a System.map, and a "booted" guest RAM with page tables,
 * the kernel image moved by a KASLR slide, a randomized direct map and a task list.
 */
#ifndef VBTS_TESTS_UNIT_INTROSPECT_FAKE_KERNEL_H
#define VBTS_TESTS_UNIT_INTROSPECT_FAKE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "introspect.h"

/* The layout the fake BTF describes (what kernel_info must find). */
#define FK_TASK_SIZE 1024
#define FK_TASK_TASKS 24	/* anonymous struct at 16, union at 8 in it */
#define FK_TASK_PID 56		/* anonymous struct at 16, pid at 40 in it */
#define FK_TASK_TGID 64
#define FK_TASK_COMM 72
#define FK_TASK_MM 96
#define FK_TASK_ACTIVE_MM 104
#define FK_TASK_EXIT_STATE 112
#define FK_TASK_SIGNAL 120
#define FK_TASK_THREAD_NODE 128
#define FK_TASK_GROUP_LEADER 144
#define FK_TASK_EXIT_CODE 160
#define FK_TASK_REAL_PARENT 168
#define FK_MM_EXE_FILE 96
#define FK_FILE_SIZE 64
#define FK_FILE_DENTRY 24	/* f_path at 16, dentry at 8 in it */
#define FK_DENTRY_SIZE 128
#define FK_DENTRY_NAME 40	/* d_name at 32, name at 8 in it */
#define FK_MM_SIZE 128
#define FK_MM_PGD 72		/* anonymous struct at 64, pgd at 8 in it */
#define FK_SIGNAL_SIZE 64
#define FK_SIGNAL_THREAD_HEAD 8
#define FK_PCPU_CURRENT 8	/* pcpu_hot: union at 0, struct at 0, current_task at 8 */

/* Link-time addresses: the image starts at FK_LINK_BASE. */
#define FK_LINK_BASE 0xffffffff81000000ULL
#define FK_IMAGE_SIZE 0x100000ULL
#define FK_ENTRY_SYSCALL_64 (FK_LINK_BASE + 0x80)
#define FK_NOTES (FK_LINK_BASE + 0x1000)
#define FK_KSYMTAB (FK_LINK_BASE + 0x2000)
#define FK_KSYMTAB_STRINGS (FK_LINK_BASE + 0x3000)
#define FK_DATA (FK_LINK_BASE + 0x10000)
#define FK_INIT_TASK (FK_LINK_BASE + 0x10000)
#define FK_INIT_MM (FK_LINK_BASE + 0x11000)
#define FK_PAGE_OFFSET_BASE (FK_LINK_BASE + 0x12000)
#define FK_PER_CPU_OFFSET (FK_LINK_BASE + 0x12100)
#define FK_PANIC_CPU (FK_LINK_BASE + 0x12200)
#define FK_PANIC_DECOY (FK_LINK_BASE + 0x12300)
#define FK_PANIC (FK_LINK_BASE + 0x200)
#define FK_INIT_TOP_PGT (FK_LINK_BASE + 0x20000)
#define FK_PCPU_HOT 0x40ULL /* in the zero-based per-CPU section */

/* Guest-physical placement. */
#define FK_RAM_SIZE (32ULL << 20)
#define FK_IMAGE_PHYS 0x1000000ULL
#define FK_PERCPU_PHYS 0x500000ULL

/**
 * struct fk_btf_opts - what to break in the fake BTF (all false: a good one).
 */
struct fk_btf_opts {
	bool no_pid;		/* task_struct without pid */
	bool pid_bitfield;	/* pid a bit field */
	bool pid_pointer;	/* pid a pointer */
	bool comm_100;		/* comm[100] */
	bool no_pcpu_hot;	/* an older kernel: per-CPU current_task, no struct pcpu_hot */
	bool no_thread_node;	/* thread_group instead of thread_node/thread_head */
	bool self_nesting;	/* an anonymous struct of 1000 anonymous members of itself */
	bool panic_cpu_zero;	/* panic()'s LOCK CMPXCHG operand starts as 0, not -1 */
	bool panic_cpu_late;	/* a locked CMPXCHG on another variable comes first in panic() */
};

/**
 * struct fake_kernel - the files and the guest.
 * @dir:      temporary directory holding the files
 * @vmlinux:  the ELF (.BTF, .notes, __ksymtab, .data)
 * @btf_raw:  the raw BTF alone
 * @sysmap:   a System.map with init_task, init_mm, entry_SYSCALL_64 and the exported ones
 * @image:    the image bytes at link time, FK_IMAGE_SIZE from FK_LINK_BASE
 * @ram:      guest RAM
 * @ram_size: bytes of @ram
 * @slide:    KASLR slide of the boot
 * @pob:      page_offset_base of the boot
 * @la57:     5-level paging
 * @root:     guest-physical address of the kernel's top-level table (init_top_pgt)
 * @reads:    counted by the memory callbacks
 * @pt_next, @heap_next, @pgd_next: bump allocators for page tables, structs, process PGDs
 */
struct fake_kernel {
	char dir[64];
	char vmlinux[96];
	char btf_raw[96];
	char sysmap[96];
	uint8_t *image;
	uint8_t *ram;
	uint64_t ram_size;
	uint64_t slide;
	uint64_t pob;
	bool la57;
	uint64_t root;
	uint64_t reads;
	uint64_t pt_next;
	uint64_t heap_next;
	uint64_t pgd_next;
};

/**
 * fk_btf() - the fake kernel's BTF, raw.
 * @o:    what to break, or NULL
 * @size: result: bytes
 *
 * Return: malloc'ed BTF bytes.
 */
void *fk_btf(const struct fk_btf_opts *o, size_t *size);

/**
 * fk_write_elf() - write an ELF64 executable with these sections (plus .shstrtab).
 * @path:  where
 * @names: section names
 * @types: SHT_* types
 * @addrs: sh_addr
 * @data:  contents (NULL for SHT_NOBITS)
 * @sizes: sizes
 * @n:     number of sections
 */
void fk_write_elf(const char *path, const char *const *names, const uint32_t *types,
		  const uint64_t *addrs, const void *const *data, const size_t *sizes, size_t n);

/**
 * fk_create() - build the files (in a fresh temporary directory) and an unbooted RAM.
 * @fk: result
 * @o:  what to break in the BTF, or NULL
 */
void fk_create(struct fake_kernel *fk, const struct fk_btf_opts *o);

/**
 * fk_boot() - "boot": page tables, the image at its slide, the direct map, init_task with an
 * empty task list, page_offset_base and the per-CPU area of CPU 0.
 * @fk:    the kernel
 * @slide: KASLR slide (multiple of 2 MiB)
 * @pob:   page_offset_base (1 GiB aligned)
 * @la57:  5-level paging
 */
void fk_boot(struct fake_kernel *fk, uint64_t slide, uint64_t pob, bool la57);

/**
 * fk_destroy() - remove the files and free the memory.
 * @fk: the kernel
 */
void fk_destroy(struct fake_kernel *fk);

/* Guest memory access for introspect_mem: the fixture's RAM through gva.c. */
struct introspect_mem fk_mem(struct fake_kernel *fk);

/* CR3 / CR4 of the booted kernel (CR4: PAE, LA57 as booted). */
uint64_t fk_cr4(const struct fake_kernel *fk);

/* Runtime (slid) address of an image link address. */
uint64_t fk_rt(const struct fake_kernel *fk, uint64_t link);

/* Guest-physical address of a direct-map or image virtual address. */
uint64_t fk_pa(const struct fake_kernel *fk, uint64_t va);

void fk_w64(struct fake_kernel *fk, uint64_t va, uint64_t v);
void fk_w32(struct fake_kernel *fk, uint64_t va, uint32_t v);
void fk_wbytes(struct fake_kernel *fk, uint64_t va, const void *p, size_t len);

/* A fresh process PGD holding the kernel's entries: its guest-physical address (8 KiB aligned
 * when @kpti, the user half being the next page, empty). */
uint64_t fk_pgd(struct fake_kernel *fk, bool kpti);

/* A new mm_struct whose pgd is the direct-map address of @pgd_pa; its virtual address. */
uint64_t fk_mm(struct fake_kernel *fk, uint64_t pgd_pa);

/* A new task_struct; its virtual address. Up to 16 bytes of @comm fill comm[16], the rest is
 * zeroed: a 16-character @comm leaves it unterminated. */
uint64_t fk_task(struct fake_kernel *fk, int32_t pid, int32_t tgid, const char *comm,
		 uint64_t mm);

/* Gives @mm an executable: mm->exe_file->f_path.dentry->d_name.name = @name (copied, NUL
 * terminated); returns the dentry's virtual address. */
uint64_t fk_exe(struct fake_kernel *fk, uint64_t mm, const char *name);

/* Links @n tasks after init_task in init_task.tasks, in this order (a proper ring). */
void fk_link(struct fake_kernel *fk, const uint64_t *tasks, size_t n);

/* Maps the page at user address @va to guest-physical @pa in the kernel's own tables (which a
 * real kernel never does: a pointer there must not be followed). */
void fk_map_user(struct fake_kernel *fk, uint64_t va, uint64_t pa);

/* The init_task runtime address. */
uint64_t fk_init_task(const struct fake_kernel *fk);

#endif /* VBTS_TESTS_UNIT_INTROSPECT_FAKE_KERNEL_H */
