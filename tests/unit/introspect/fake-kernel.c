// SPDX-License-Identifier: GPL-2.0
/*
 * fake-kernel.c - a made-up kernel's files and booted guest memory for the introspection tests.
 */
#include <bpf/btf.h>
#include <check.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-kernel.h"
#include "gva.h"
#include "x86.h"

static int must(int id)
{
	ck_assert_int_gt(id, 0);
	return id;
}

static void field(struct btf *b, const char *name, int type, unsigned int bit_off,
		  unsigned int bit_size)
{
	ck_assert_int_eq(btf__add_field(b, name, type, bit_off, bit_size), 0);
}

void *fk_btf(const struct fk_btf_opts *o, size_t *size)
{
	static const struct fk_btf_opts none;
	struct btf *b = btf__new_empty();
	int t_int, t_uint, t_long, t_ulong, t_char, t_u8, t_pid, t_vpid;
	int p_task, p_mm, p_sig, p_lh, p_pgd, s_pgd, t_pgd, lh;
	int a_comm, a32, a64, u1, s1, m1, h1, hu;
	int p_uchar, qstr, dentry, path, file, p_dentry, p_file;
	const void *raw;
	uint32_t sz;
	void *copy;

	if (!o)
		o = &none;
	ck_assert_ptr_nonnull(b);
	t_int = must(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
	t_uint = must(btf__add_int(b, "unsigned int", 4, 0));
	t_long = must(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
	t_ulong = must(btf__add_int(b, "long unsigned int", 8, 0));
	t_char = must(btf__add_int(b, "char", 1, BTF_INT_SIGNED));
	t_u8 = must(btf__add_int(b, "unsigned char", 1, 0));
	t_pid = must(btf__add_typedef(b, "pid_t", t_int));
	t_vpid = must(btf__add_volatile(b, t_pid));
	p_task = must(btf__add_ptr(b, must(btf__add_fwd(b, "task_struct", BTF_FWD_STRUCT))));
	p_mm = must(btf__add_ptr(b, must(btf__add_fwd(b, "mm_struct", BTF_FWD_STRUCT))));
	p_sig = must(btf__add_ptr(b, must(btf__add_fwd(b, "signal_struct", BTF_FWD_STRUCT))));
	p_lh = must(btf__add_ptr(b, must(btf__add_fwd(b, "list_head", BTF_FWD_STRUCT))));

	s_pgd = must(btf__add_struct(b, NULL, 8));
	field(b, "pgd", t_ulong, 0, 0);
	t_pgd = must(btf__add_typedef(b, "pgd_t", s_pgd));
	p_pgd = must(btf__add_ptr(b, t_pgd));

	lh = must(btf__add_struct(b, "list_head", 16));
	field(b, "next", p_lh, 0, 0);
	field(b, "prev", p_lh, 64, 0);

	a_comm = must(btf__add_array(b, t_int, t_char, o->comm_100 ? 100 : 16));
	a32 = must(btf__add_array(b, t_int, t_char, 32));
	a64 = must(btf__add_array(b, t_int, t_u8, 64));

	/* task_struct: { long state; struct { long x; union { list_head tasks; char u[32]; };
	 * pid_t pid; }; volatile pid_t tgid; char comm[16]; ... } */
	u1 = must(btf__add_union(b, NULL, 32));
	field(b, "tasks", lh, 0, 0);
	field(b, "u", a32, 0, 0);
	s1 = must(btf__add_struct(b, NULL, 48));
	field(b, "x", t_long, 0, 0);
	field(b, NULL, u1, 64, 0);
	if (!o->no_pid)
		field(b, "pid", o->pid_pointer ? p_task : t_pid, 320, o->pid_bitfield ? 20 : 0);
	if (o->self_nesting) {
		int self = must(btf__add_struct(b, NULL, 8));

		for (int i = 0; i < 1000; i++)
			field(b, NULL, self, 0, 0);
		s1 = self;
	}
	must(btf__add_struct(b, "task_struct", FK_TASK_SIZE));
	field(b, "state", t_long, 0, 0);
	field(b, NULL, s1, 128, 0);
	field(b, "tgid", t_vpid, FK_TASK_TGID * 8, 0);
	field(b, "comm", a_comm, FK_TASK_COMM * 8, 0);
	field(b, "mm", p_mm, FK_TASK_MM * 8, 0);
	field(b, "active_mm", p_mm, FK_TASK_ACTIVE_MM * 8, 0);
	field(b, "exit_state", t_int, FK_TASK_EXIT_STATE * 8, 0);
	field(b, "signal", p_sig, FK_TASK_SIGNAL * 8, 0);
	field(b, o->no_thread_node ? "thread_group" : "thread_node", lh, FK_TASK_THREAD_NODE * 8,
	      0);
	field(b, "group_leader", p_task, FK_TASK_GROUP_LEADER * 8, 0);
	field(b, "flags", t_uint, 152 * 8, 3); /* a bit field: the kind_flag encoding */
	field(b, "exit_code", t_int, FK_TASK_EXIT_CODE * 8, 0);
	field(b, "real_parent", p_task, FK_TASK_REAL_PARENT * 8, 0);

	m1 = must(btf__add_struct(b, NULL, 16));
	field(b, "mm_count", t_int, 0, 0);
	field(b, "pgd", p_pgd, 64, 0);
	/* struct qstr { u64 hash_len; const unsigned char *name; } in struct dentry at 32;
	 * struct path { vfsmount *mnt; dentry *dentry; } in struct file at 16 */
	p_uchar = must(btf__add_ptr(b, must(btf__add_const(b, t_u8))));
	qstr = must(btf__add_struct(b, "qstr", 16));
	field(b, "hash_len", t_ulong, 0, 0);
	field(b, "name", p_uchar, 64, 0);
	dentry = must(btf__add_struct(b, "dentry", FK_DENTRY_SIZE));
	field(b, "d_flags", t_uint, 0, 0);
	field(b, "d_name", qstr, (FK_DENTRY_NAME - 8) * 8, 0);
	p_dentry = must(btf__add_ptr(b, dentry));
	path = must(btf__add_struct(b, "path", 16));
	field(b, "mnt", p_lh, 0, 0);
	field(b, "dentry", p_dentry, 64, 0);
	file = must(btf__add_struct(b, "file", FK_FILE_SIZE));
	field(b, "f_count", t_long, 0, 0);
	field(b, "f_path", path, (FK_FILE_DENTRY - 8) * 8, 0);
	p_file = must(btf__add_ptr(b, file));

	must(btf__add_struct(b, "mm_struct", FK_MM_SIZE));
	field(b, "mmap_base", t_ulong, 0, 0);
	field(b, NULL, m1, 64 * 8, 0);
	field(b, "exe_file", p_file, FK_MM_EXE_FILE * 8, 0);

	must(btf__add_struct(b, "signal_struct", FK_SIGNAL_SIZE));
	field(b, "nr_threads", t_int, 0, 0);
	if (!o->no_thread_node)
		field(b, "thread_head", lh, FK_SIGNAL_THREAD_HEAD * 8, 0);

	if (!o->no_pcpu_hot) {
		h1 = must(btf__add_struct(b, NULL, 16));
		field(b, "pad0", t_long, 0, 0);
		field(b, "current_task", p_task, 64, 0);
		hu = must(btf__add_union(b, NULL, 64));
		field(b, NULL, h1, 0, 0);
		field(b, "pad", a64, 0, 0);
		must(btf__add_struct(b, "pcpu_hot", 64));
		field(b, NULL, hu, 0, 0);
	}

	raw = btf__raw_data(b, &sz);
	ck_assert_ptr_nonnull(raw);
	copy = malloc(sz);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, raw, sz);
	*size = sz;
	btf__free(b);
	return copy;
}

void fk_write_elf(const char *path, const char *const *names, const uint32_t *types,
		  const uint64_t *addrs, const void *const *data, const size_t *sizes, size_t n)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr *sh = calloc(n + 2, sizeof(*sh));
	char strtab[512] = "";
	size_t strlen_ = 1, off = sizeof(eh);
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(sh);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = n + 2;
	eh.e_shstrndx = n + 1;

	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? names[i] : ".shstrtab";

		ck_assert_uint_lt(strlen_ + strlen(name) + 1, sizeof(strtab));
		sh[i + 1].sh_name = strlen_;
		strcpy(strtab + strlen_, name);
		strlen_ += strlen(name) + 1;
	}
	for (size_t i = 0; i < n; i++) {
		off = (off + 7) & ~7UL;
		sh[i + 1].sh_type = types[i];
		sh[i + 1].sh_flags = types[i] == SHT_NOTE || addrs[i] ? SHF_ALLOC : 0;
		sh[i + 1].sh_addr = addrs[i];
		sh[i + 1].sh_offset = off;
		sh[i + 1].sh_size = sizes[i];
		if (types[i] != SHT_NOBITS)
			off += sizes[i];
	}
	sh[n + 1].sh_type = SHT_STRTAB;
	sh[n + 1].sh_offset = off;
	sh[n + 1].sh_size = strlen_;
	off += strlen_;
	eh.e_shoff = (off + 7) & ~7UL;

	fwrite(&eh, sizeof(eh), 1, f);
	for (size_t i = 0; i < n; i++) {
		if (types[i] == SHT_NOBITS)
			continue;
		fseek(f, sh[i + 1].sh_offset, SEEK_SET);
		fwrite(data[i], 1, sizes[i], f);
	}
	fseek(f, sh[n + 1].sh_offset, SEEK_SET);
	fwrite(strtab, 1, strlen_, f);
	fseek(f, eh.e_shoff, SEEK_SET);
	fwrite(sh, sizeof(*sh), n + 2, f);
	ck_assert_int_eq(fclose(f), 0);
	free(sh);
}

static void img64(struct fake_kernel *fk, uint64_t link, uint64_t v)
{
	memcpy(fk->image + (link - FK_LINK_BASE), &v, 8);
}

static void img32(struct fake_kernel *fk, uint64_t link, uint32_t v)
{
	memcpy(fk->image + (link - FK_LINK_BASE), &v, 4);
}

/* __ksymtab entries {value, name, namespace} of 32-bit place-relative offsets. */
static size_t put_ksymtab(struct fake_kernel *fk, const char *const *names,
			  const uint64_t *values, size_t n)
{
	uint64_t str = FK_KSYMTAB_STRINGS;

	for (size_t i = 0; i < n; i++) {
		uint64_t ent = FK_KSYMTAB + 12 * i;

		img32(fk, ent, (uint32_t)(values[i] - ent));
		img32(fk, ent + 4, (uint32_t)(str - (ent + 4)));
		img32(fk, ent + 8, 0);
		strcpy((char *)fk->image + (str - FK_LINK_BASE), names[i]);
		str += strlen(names[i]) + 1;
	}
	return str - FK_KSYMTAB_STRINGS;
}

/* "cmpxchg %edx, VAR(%rip)" at @ip, locked or not; returns the next instruction's address. */
static uint64_t put_cmpxchg_rip(struct fake_kernel *fk, uint64_t ip, uint64_t var, bool lock)
{
	uint8_t *p = fk->image + (ip - FK_LINK_BASE);
	const uint8_t op[] = { 0xf0, 0x0f, 0xb1, 0x15 };
	size_t n = lock ? 4 : 3;

	memcpy(p, lock ? op : op + 1, n);
	ip += n + 4;
	img32(fk, ip - 4, (uint32_t)(var - ip));
	return ip;
}

/*
 * panic(), as far as introspection reads it: a prologue, a CMPXCHG without LOCK on a decoy
 * that also starts as -1, then atomic_try_cmpxchg(&panic_cpu, ...), as kernel/panic.c does.
 */
static void put_panic(struct fake_kernel *fk, const struct fk_btf_opts *o)
{
	const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5, 0xfa }; /* push, mov rbp, cli */
	uint64_t ip = FK_PANIC + sizeof(prologue);

	memcpy(fk->image + (FK_PANIC - FK_LINK_BASE), prologue, sizeof(prologue));
	ip = put_cmpxchg_rip(fk, ip, FK_PANIC_DECOY, false);
	if (o && o->panic_cpu_late)
		ip = put_cmpxchg_rip(fk, ip, FK_PANIC_DECOY + 4, true);
	ip = put_cmpxchg_rip(fk, ip, FK_PANIC_CPU, true);
	fk->image[ip - FK_LINK_BASE] = 0xc3;
	img32(fk, FK_PANIC_CPU, o && o->panic_cpu_zero ? 0 : 0xffffffffU);
	img32(fk, FK_PANIC_DECOY, 0xffffffffU);
	img32(fk, FK_PANIC_DECOY + 4, 0);
}

/* .notes: a Xen-style note holding an address (relocated at boot), then the build ID. */
static size_t put_notes(struct fake_kernel *fk)
{
	uint8_t *p = fk->image + (FK_NOTES - FK_LINK_BASE);
	const uint32_t xen[3] = { 4, 8, 0x12 }, gnu[3] = { 4, 20, NT_GNU_BUILD_ID };
	uint64_t entry = FK_ENTRY_SYSCALL_64;

	memcpy(p, xen, 12);
	memcpy(p + 12, "Xen", 4);
	memcpy(p + 16, &entry, 8);
	memcpy(p + 24, gnu, 12);
	memcpy(p + 36, "GNU", 4);
	for (int i = 0; i < 20; i++)
		p[40 + i] = (uint8_t)(0xa0 + i);
	return 60;
}

void fk_create(struct fake_kernel *fk, const struct fk_btf_opts *o)
{
	const char *pcpu = o && o->no_pcpu_hot ? "current_task" : "pcpu_hot";
	const char *const exp_names[] = { "init_task", "page_offset_base", "__per_cpu_offset",
					  pcpu, "panic" };
	const uint64_t exp_values[] = { FK_INIT_TASK, FK_PAGE_OFFSET_BASE, FK_PER_CPU_OFFSET,
					FK_PCPU_HOT, FK_PANIC };
	size_t btf_size, notes_size, strs_size;
	uint8_t percpu[0x100] = { 0 };
	void *btf;
	FILE *f;

	memset(fk, 0, sizeof(*fk));
	strcpy(fk->dir, "/tmp/vbts-introspect-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fk->dir));
	snprintf(fk->vmlinux, sizeof(fk->vmlinux), "%s/vmlinux", fk->dir);
	snprintf(fk->btf_raw, sizeof(fk->btf_raw), "%s/btf", fk->dir);
	snprintf(fk->sysmap, sizeof(fk->sysmap), "%s/System.map", fk->dir);
	fk->image = calloc(1, FK_IMAGE_SIZE);
	ck_assert_ptr_nonnull(fk->image);

	memset(fk->image, 0xcc, 0x1000); /* .text */
	notes_size = put_notes(fk);
	strs_size = put_ksymtab(fk, exp_names, exp_values, 5);
	put_panic(fk, o);
	/* init_task, as init/init_task.c initializes it */
	img32(fk, FK_INIT_TASK + FK_TASK_PID, 0);
	img32(fk, FK_INIT_TASK + FK_TASK_TGID, 0);
	strcpy((char *)fk->image + (FK_INIT_TASK + FK_TASK_COMM - FK_LINK_BASE), "swapper");
	img64(fk, FK_INIT_TASK + FK_TASK_ACTIVE_MM, FK_INIT_MM);
	img64(fk, FK_INIT_TASK + FK_TASK_TASKS, FK_INIT_TASK + FK_TASK_TASKS);
	img64(fk, FK_INIT_TASK + FK_TASK_TASKS + 8, FK_INIT_TASK + FK_TASK_TASKS);
	img64(fk, FK_INIT_MM + FK_MM_PGD, FK_INIT_TOP_PGT);
	img64(fk, FK_PAGE_OFFSET_BASE, 0xffff888000000000ULL);

	btf = fk_btf(o, &btf_size);
	{
		const char *const names[] = { ".text", ".notes", "__ksymtab", "__ksymtab_strings",
					      ".data", ".data..percpu", ".BTF" };
		const uint32_t types[] = { SHT_PROGBITS, SHT_NOTE, SHT_PROGBITS, SHT_PROGBITS,
					   SHT_PROGBITS, SHT_PROGBITS, SHT_PROGBITS };
		const uint64_t addrs[] = { FK_LINK_BASE, FK_NOTES, FK_KSYMTAB, FK_KSYMTAB_STRINGS,
					   FK_DATA, 0, FK_LINK_BASE + 0x80000 };
		const void *const data[] = { fk->image, fk->image + 0x1000, fk->image + 0x2000,
					     fk->image + 0x3000, fk->image + 0x10000, percpu, btf };
		const size_t sizes[] = { 0x1000, notes_size, 5 * 12, strs_size, 0x20000,
					 sizeof(percpu), btf_size };

		fk_write_elf(fk->vmlinux, names, types, addrs, data, sizes, 7);
	}
	f = fopen(fk->btf_raw, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(btf, 1, btf_size, f);
	fclose(f);
	free(btf);

	/* a local symbol of the same name first: the global one must win */
	f = fopen(fk->sysmap, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "0000000000000040 D %s\n", pcpu);
	fprintf(f, "ffffffff81000000 T _text\n");
	fprintf(f, "ffffffff81000080 T entry_SYSCALL_64\n");
	fprintf(f, "ffffffff81099990 d init_task\n");
	fprintf(f, "ffffffff81010000 D init_task\n");
	fprintf(f, "ffffffff81011000 D init_mm\n");
	fprintf(f, "ffffffff81012000 D page_offset_base\n");
	fprintf(f, "ffffffff81012100 D __per_cpu_offset\n");
	fprintf(f, "ffffffff81012200 D panic_cpu\n");
	fclose(f);
}

static void *ram_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	const struct fake_kernel *fk = ctx;

	if (len == 0 || gpa >= fk->ram_size || len > fk->ram_size - gpa)
		return NULL;
	return fk->ram + gpa;
}

static struct gva_space space(struct fake_kernel *fk, uint64_t root)
{
	return (struct gva_space){
		.ptr = ram_ptr, .ctx = fk, .cr0 = 0x80000001ULL, .cr3 = root,
		.cr4 = fk_cr4(fk), .efer = 0x500ULL,
	};
}

static int mem_read(void *ctx, uint64_t root, uint64_t va, void *buf, size_t len)
{
	struct fake_kernel *fk = ctx;
	struct gva_space s = space(fk, root);

	fk->reads++;
	return gva__read(&s, va, buf, len);
}

static int mem_translate(void *ctx, uint64_t root, uint64_t va, uint64_t *gpa)
{
	struct fake_kernel *fk = ctx;
	struct gva_space s = space(fk, root);

	fk->reads++;
	return gva__translate(&s, va, gpa);
}

struct introspect_mem fk_mem(struct fake_kernel *fk)
{
	return (struct introspect_mem){ mem_read, mem_translate, fk };
}

uint64_t fk_cr4(const struct fake_kernel *fk)
{
	return 0x20ULL | (fk->la57 ? 0x1000ULL : 0);
}

uint64_t fk_rt(const struct fake_kernel *fk, uint64_t link)
{
	return link + fk->slide;
}

uint64_t fk_pa(const struct fake_kernel *fk, uint64_t va)
{
	if (va >= fk->pob && va - fk->pob < fk->ram_size)
		return va - fk->pob;
	ck_assert_msg(va >= fk_rt(fk, FK_LINK_BASE) && va - fk_rt(fk, FK_LINK_BASE) < FK_IMAGE_SIZE,
		      "%#llx is no fake-kernel address", (unsigned long long)va);
	return FK_IMAGE_PHYS + (va - fk_rt(fk, FK_LINK_BASE));
}

void fk_wbytes(struct fake_kernel *fk, uint64_t va, const void *p, size_t len)
{
	memcpy(fk->ram + fk_pa(fk, va), p, len);
}

void fk_w64(struct fake_kernel *fk, uint64_t va, uint64_t v)
{
	fk_wbytes(fk, va, &v, 8);
}

void fk_w32(struct fake_kernel *fk, uint64_t va, uint32_t v)
{
	fk_wbytes(fk, va, &v, 4);
}

static uint64_t r64pa(struct fake_kernel *fk, uint64_t pa)
{
	uint64_t v;

	memcpy(&v, fk->ram + pa, 8);
	return v;
}

static void w64pa(struct fake_kernel *fk, uint64_t pa, uint64_t v)
{
	memcpy(fk->ram + pa, &v, 8);
}

/* Maps @va to @pa with a page of level @lvl (1: 4 KiB, 2: 2 MiB). */
static void map(struct fake_kernel *fk, uint64_t va, uint64_t pa, unsigned int lvl)
{
	uint64_t table = fk->root;

	for (unsigned int l = fk->la57 ? 5 : 4; l > lvl; l--) {
		uint64_t slot = table + ((va >> (12 + 9 * (l - 1))) & 511) * 8;
		uint64_t e = r64pa(fk, slot);

		if (!(e & X86_PTE_P)) {
			e = fk->pt_next | X86_PTE_P | X86_PTE_RW;
			fk->pt_next += X86_PAGE_SIZE;
			ck_assert_uint_le(fk->pt_next, 0x400000);
			w64pa(fk, slot, e);
		}
		table = e & X86_PTE_ADDR_MASK;
	}
	w64pa(fk, table + ((va >> (12 + 9 * (lvl - 1))) & 511) * 8,
	      pa | X86_PTE_P | X86_PTE_RW | (lvl == 2 ? X86_PTE_PS : 0));
}

void fk_boot(struct fake_kernel *fk, uint64_t slide, uint64_t pob, bool la57)
{
	uint64_t head;

	fk->slide = slide;
	fk->pob = pob;
	fk->la57 = la57;
	fk->ram_size = FK_RAM_SIZE;
	free(fk->ram);
	fk->ram = calloc(1, FK_RAM_SIZE);
	ck_assert_ptr_nonnull(fk->ram);
	fk->pt_next = 0x200000;
	fk->heap_next = 0x600000;
	fk->pgd_next = 0x1200000;
	fk->root = FK_IMAGE_PHYS + (FK_INIT_TOP_PGT - FK_LINK_BASE);

	memcpy(fk->ram + FK_IMAGE_PHYS, fk->image, FK_IMAGE_SIZE);
	for (uint64_t off = 0; off < FK_IMAGE_SIZE; off += X86_PAGE_SIZE)
		map(fk, fk_rt(fk, FK_LINK_BASE) + off, FK_IMAGE_PHYS + off, 1);
	for (uint64_t pa = 0; pa < FK_RAM_SIZE; pa += 2ULL << 20)
		map(fk, pob + pa, pa, 2);

	/* what relocation and start_kernel() leave in the image */
	head = fk_init_task(fk) + FK_TASK_TASKS;
	fk_w64(fk, head, head);
	fk_w64(fk, head + 8, head);
	fk_w64(fk, fk_init_task(fk) + FK_TASK_ACTIVE_MM, 0); /* CPU 0 runs a task */
	fk_wbytes(fk, fk_init_task(fk) + FK_TASK_COMM, "swapper/0", 10);
	fk_w64(fk, fk_rt(fk, FK_INIT_MM) + FK_MM_PGD, fk_rt(fk, FK_INIT_TOP_PGT));
	fk_w64(fk, fk_rt(fk, FK_NOTES) + 16, fk_rt(fk, FK_ENTRY_SYSCALL_64));
	fk_w64(fk, fk_rt(fk, FK_PAGE_OFFSET_BASE), pob);
	fk_w64(fk, fk_rt(fk, FK_PER_CPU_OFFSET), pob + FK_PERCPU_PHYS);
}

void fk_destroy(struct fake_kernel *fk)
{
	unlink(fk->vmlinux);
	unlink(fk->btf_raw);
	unlink(fk->sysmap);
	rmdir(fk->dir);
	free(fk->image);
	free(fk->ram);
	memset(fk, 0, sizeof(*fk));
}

uint64_t fk_pgd(struct fake_kernel *fk, bool kpti)
{
	uint64_t pa;

	if (kpti)
		fk->pgd_next = (fk->pgd_next + 2 * X86_PAGE_SIZE - 1) & ~(2 * X86_PAGE_SIZE - 1);
	pa = fk->pgd_next;
	fk->pgd_next += kpti ? 2 * X86_PAGE_SIZE : X86_PAGE_SIZE;
	ck_assert_uint_le(fk->pgd_next, 0x1400000);
	/* pgd_alloc(): the kernel's entries copied; a KPTI user half maps nothing here */
	memcpy(fk->ram + pa, fk->ram + fk->root, X86_PAGE_SIZE);
	return pa;
}

static uint64_t alloc(struct fake_kernel *fk, uint64_t size)
{
	uint64_t pa = fk->heap_next;

	fk->heap_next += (size + 63) & ~63ULL;
	ck_assert_uint_le(fk->heap_next, 0xf00000);
	return fk->pob + pa;
}

uint64_t fk_mm(struct fake_kernel *fk, uint64_t pgd_pa)
{
	uint64_t mm = alloc(fk, FK_MM_SIZE);

	fk_w64(fk, mm + FK_MM_PGD, fk->pob + pgd_pa);
	return mm;
}

uint64_t fk_task(struct fake_kernel *fk, int32_t pid, int32_t tgid, const char *comm,
		 uint64_t mm)
{
	uint64_t t = alloc(fk, FK_TASK_SIZE);
	char c[16] = { 0 };

	memcpy(c, comm, strnlen(comm, sizeof(c)));
	fk_w32(fk, t + FK_TASK_PID, (uint32_t)pid);
	fk_w32(fk, t + FK_TASK_TGID, (uint32_t)tgid);
	fk_wbytes(fk, t + FK_TASK_COMM, c, sizeof(c));
	fk_w64(fk, t + FK_TASK_MM, mm);
	fk_w64(fk, t + FK_TASK_ACTIVE_MM, mm);
	fk_w64(fk, t + FK_TASK_GROUP_LEADER, t);
	return t;
}

uint64_t fk_exe(struct fake_kernel *fk, uint64_t mm, const char *name)
{
	uint64_t file = alloc(fk, FK_FILE_SIZE), dentry = alloc(fk, FK_DENTRY_SIZE);
	uint64_t str = alloc(fk, strlen(name) + 1);

	fk_wbytes(fk, str, name, strlen(name) + 1);
	fk_w64(fk, dentry + FK_DENTRY_NAME, str);
	fk_w64(fk, file + FK_FILE_DENTRY, dentry);
	fk_w64(fk, mm + FK_MM_EXE_FILE, file);
	return dentry;
}

void fk_link(struct fake_kernel *fk, const uint64_t *tasks, size_t n)
{
	uint64_t head = fk_init_task(fk) + FK_TASK_TASKS, prev = head;

	for (size_t i = 0; i < n; i++) {
		uint64_t node = tasks[i] + FK_TASK_TASKS;

		fk_w64(fk, prev, node);
		fk_w64(fk, node + 8, prev);
		prev = node;
	}
	fk_w64(fk, prev, head);
	fk_w64(fk, head + 8, prev);
}

void fk_map_user(struct fake_kernel *fk, uint64_t va, uint64_t pa)
{
	map(fk, va, pa, 1);
}

uint64_t fk_init_task(const struct fake_kernel *fk)
{
	return fk_rt(fk, FK_INIT_TASK);
}
