// SPDX-License-Identifier: GPL-2.0
/*
 * kernel-info.c - member offsets from a kernel's BTF, symbols from System.map or __ksymtab, and
 * the bytes that identify the build in guest memory.
 */
#include <Zydis/Zydis.h>
#include <bpf/btf.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "elfsec.h"
#include "kernel-info.h"
#include "ksyms.h"
#include "vmlinux.h"

/* Nesting of anonymous structs and unions followed when looking for a member, and members
 * looked at in all (a BTF whose anonymous members nest into themselves stays cheap). */
#define MEMBER_DEPTH_MAX 8
#define MEMBER_VISITS_MAX 100000U
#define IDENTITY_MAX 4096
/* Link-time addresses of the kernel image: __START_KERNEL_map up to the modules. */
#define KERNEL_IMAGE_START 0xffffffff80000000ULL
#define KERNEL_IMAGE_END 0xffffffffc0000000ULL

struct kernel_info {
	struct kernel_layout layout;
	uint64_t sym[KERNEL_SYM_COUNT];
	enum kernel_sym_source source[KERNEL_SYM_COUNT];
	uint64_t identity_va;
	uint8_t *identity;
	size_t identity_len;
};

/* What a member must be. */
enum member_kind {
	MEMBER_INT32, /* a 4-byte integer (pid_t, int) */
	MEMBER_U64,   /* an 8-byte integer */
	MEMBER_PTR,   /* an 8-byte pointer */
	MEMBER_LIST,  /* struct list_head */
	MEMBER_CHARS, /* an array of 1-byte integers */
	MEMBER_STRUCT, /* a struct or union member */
};

struct member_info {
	uint32_t offset; /* bytes */
	uint32_t size;   /* bytes */
	uint32_t nelems; /* MEMBER_CHARS only */
};

static const char *btf_name(const struct btf *btf, uint32_t off)
{
	const char *s = btf__name_by_offset(btf, off);

	return s ? s : "";
}

/*
 * Finds member @name of the struct or union @type_id, looking into anonymous struct and union
 * members; @bit_off is the offset in bits from the start of @type_id.
 */
static int find_member(const struct btf *btf, int type_id, const char *name, unsigned int depth,
		       unsigned int *visits, uint32_t *bit_off, uint32_t *member_type)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;

	if (!t || depth > MEMBER_DEPTH_MAX || !btf_is_composite(t))
		return -ENOENT;
	m = btf_members(t);
	for (unsigned int i = 0; i < btf_vlen(t); i++, m++) {
		uint32_t off = btf_member_bit_offset(t, i);
		uint32_t inner, mtype;
		int sub, ret;

		if (++*visits > MEMBER_VISITS_MAX)
			return -E2BIG;

		if (*btf_name(btf, m->name_off)) {
			if (strcmp(btf_name(btf, m->name_off), name))
				continue;
			if (btf_member_bitfield_size(t, i))
				return -EINVAL;
			*bit_off = off;
			*member_type = m->type;
			return 0;
		}
		sub = btf__resolve_type(btf, m->type);
		if (sub < 0)
			continue;
		ret = find_member(btf, sub, name, depth + 1, visits, &inner, &mtype);
		if (ret == -ENOENT)
			continue;
		if (ret)
			return ret;
		if (inner > UINT32_MAX - off)
			return -EINVAL;
		*bit_off = off + inner;
		*member_type = mtype;
		return 0;
	}
	return -ENOENT;
}

/* Resolves typedefs and modifiers of @id; NULL when it does not lead to a type. */
static const struct btf_type *resolved(const struct btf *btf, uint32_t id, int *rid)
{
	int r = btf__resolve_type(btf, id);

	if (r < 0)
		return NULL;
	*rid = r;
	return btf__type_by_id(btf, r);
}

static bool is_list_head(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t;
	int rid;

	t = resolved(btf, id, &rid);
	return t && btf_is_struct(t) && !strcmp(btf_name(btf, t->name_off), "list_head") &&
	       t->size == 16;
}

static int member(const struct btf *btf, int struct_id, const char *sname, const char *name,
		  enum member_kind kind, struct member_info *out, char *err, size_t errlen)
{
	const struct btf_type *st = btf__type_by_id(btf, struct_id), *t;
	unsigned int visits = 0;
	uint32_t bits, type;
	int rid, ret;

	ret = find_member(btf, struct_id, name, 0, &visits, &bits, &type);
	if (ret) {
		errmsg__set(err, errlen, "BTF: struct %s has no member %s%s", sname, name,
			ret == -EINVAL ? " that is not a bit field" :
			ret == -E2BIG ? " within a sane nesting of anonymous members" : "");
		return -EINVAL;
	}
	if (bits % 8) {
		errmsg__set(err, errlen, "BTF: %s.%s is not byte aligned", sname, name);
		return -EINVAL;
	}
	out->offset = bits / 8;
	out->nelems = 0;
	t = resolved(btf, type, &rid);
	if (!t)
		goto bad_type;
	switch (kind) {
	case MEMBER_INT32:
		if (!(btf_is_int(t) || btf_is_enum(t)) || t->size != 4)
			goto bad_type;
		out->size = 4;
		break;
	case MEMBER_U64:
		if (!btf_is_int(t) || t->size != 8)
			goto bad_type;
		out->size = 8;
		break;
	case MEMBER_PTR:
		if (!btf_is_ptr(t))
			goto bad_type;
		out->size = 8;
		break;
	case MEMBER_LIST:
		if (!is_list_head(btf, type))
			goto bad_type;
		out->size = 16;
		break;
	case MEMBER_STRUCT:
		if (!btf_is_composite(t))
			goto bad_type;
		out->size = t->size;
		break;
	case MEMBER_CHARS: {
		const struct btf_array *a;
		const struct btf_type *et;
		int eid;

		if (!btf_is_array(t))
			goto bad_type;
		a = btf_array(t);
		et = resolved(btf, a->type, &eid);
		if (!et || !btf_is_int(et) || et->size != 1 || a->nelems < 1 ||
		    a->nelems > KERNEL_COMM_MAX)
			goto bad_type;
		out->size = a->nelems;
		out->nelems = a->nelems;
		break;
	}
	}
	if (out->offset > st->size || out->size > st->size - out->offset) {
		errmsg__set(err, errlen, "BTF: %s.%s lies outside the struct", sname, name);
		return -EINVAL;
	}
	return 0;

bad_type:
	errmsg__set(err, errlen, "BTF: %s.%s has an unexpected type", sname, name);
	return -EINVAL;
}

static int find_struct(const struct btf *btf, const char *name, char *err, size_t errlen)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);

	if (id <= 0)
		errmsg__set(err, errlen, "BTF: no struct %s", name);
	return id;
}

/* An optional member: its offset, or KERNEL_LAYOUT_ABSENT when the kernel lacks it. */
static uint32_t optional(const struct btf *btf, int struct_id, const char *sname,
			 const char *name, enum member_kind kind)
{
	struct member_info mi;

	if (struct_id <= 0 || member(btf, struct_id, sname, name, kind, &mi, NULL, 0))
		return KERNEL_LAYOUT_ABSENT;
	return mi.offset;
}

/*
 * An optional member reached through a struct member (@outer of @sname, whose type is @iname)
 * and a pointer member of that (@inner): their summed offset, or KERNEL_LAYOUT_ABSENT.
 */
static uint32_t optional_nested(const struct btf *btf, const char *sname, const char *outer,
				const char *iname, const char *inner)
{
	int sid = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	int iid = btf__find_by_name_kind(btf, iname, BTF_KIND_STRUCT);
	struct member_info mo, mi;

	if (sid <= 0 || iid <= 0 ||
	    member(btf, sid, sname, outer, MEMBER_STRUCT, &mo, NULL, 0) ||
	    member(btf, iid, iname, inner, MEMBER_PTR, &mi, NULL, 0) ||
	    mo.size != btf__type_by_id(btf, iid)->size || mi.offset + 8 > mo.size)
		return KERNEL_LAYOUT_ABSENT;
	return mo.offset + mi.offset;
}

/* Largest per-CPU offset and ASID count accepted for cpu_tlbstate (Linux: 6 ASIDs). */
#define TLB_PERCPU_MAX (16U << 20)
#define TLB_CTXS_MAX 64U

/* The offset of per-CPU variable @name in the BTF's .data..percpu section, or -ENOENT. */
static int64_t percpu_var(const struct btf *btf, const char *name, int *type)
{
	int sec = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_var_secinfo *vs;
	const struct btf_type *t;

	if (sec <= 0)
		return -ENOENT;
	t = btf__type_by_id(btf, sec);
	vs = btf_var_secinfos(t);
	for (unsigned int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);
		const char *n = v && btf_is_var(v) ? btf__name_by_offset(btf, v->name_off) : NULL;

		if (n && !strcmp(n, name)) {
			*type = v->type;
			return vs->offset;
		}
	}
	return -ENOENT;
}

/*
 * Where the guest kernel keeps the id of the mm each ASID holds (x86 Linux 4.15+:
 * cpu_tlbstate.ctxs[asid].ctx_id), for the patched KVM to tell a reused page table from its
 * old owner's at a CR3 load; ABSENT where the BTF lacks any of it.
 */
static void read_tlb_ctx(const struct btf *btf, struct kernel_layout *l)
{
	int state = btf__find_by_name_kind(btf, "tlb_state", BTF_KIND_STRUCT);
	int ctx = btf__find_by_name_kind(btf, "tlb_context", BTF_KIND_STRUCT);
	const struct btf_type *t, *arr;
	uint32_t id_off;
	int64_t var;
	int type, aid;

	l->tlb_ctx = KERNEL_LAYOUT_ABSENT;
	l->tlb_ctx_stride = 0;
	l->tlb_ctx_count = 0;
	if (state <= 0 || ctx <= 0)
		return;
	var = percpu_var(btf, "cpu_tlbstate", &type);
	if (var < 0 || var >= TLB_PERCPU_MAX || btf__resolve_type(btf, type) != state)
		return;
	id_off = optional(btf, ctx, "tlb_context", "ctx_id", MEMBER_U64);
	if (id_off == KERNEL_LAYOUT_ABSENT)
		return;
	/* ctxs: an array of struct tlb_context */
	t = btf__type_by_id(btf, state);
	for (unsigned int i = 0; i < btf_vlen(t); i++) {
		const struct btf_member *m = btf_members(t) + i;
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (!n || strcmp(n, "ctxs") || btf_member_bitfield_size(t, i))
			continue;
		aid = btf__resolve_type(btf, m->type);
		arr = aid > 0 ? btf__type_by_id(btf, aid) : NULL;
		if (!arr || !btf_is_array(arr) || btf__resolve_type(btf, btf_array(arr)->type) != ctx)
			return;
		if (btf_array(arr)->nelems < 1 || btf_array(arr)->nelems > TLB_CTXS_MAX ||
		    btf_member_bit_offset(t, i) % 8)
			return;
		l->tlb_ctx = (uint32_t)var + btf_member_bit_offset(t, i) / 8 + id_off;
		l->tlb_ctx_stride = btf__type_by_id(btf, ctx)->size;
		l->tlb_ctx_count = btf_array(arr)->nelems;
		return;
	}
}

static int read_layout(const struct btf *btf, struct kernel_layout *l, bool *pcpu_hot, char *err,
		       size_t errlen)
{
	struct member_info mi;
	int task, mm, list, sig, hot;
	int ret;

	task = find_struct(btf, "task_struct", err, errlen);
	if (task <= 0)
		return -EINVAL;
	mm = find_struct(btf, "mm_struct", err, errlen);
	if (mm <= 0)
		return -EINVAL;
	list = find_struct(btf, "list_head", err, errlen);
	if (list <= 0)
		return -EINVAL;
	l->task_size = btf__type_by_id(btf, task)->size;
	if (l->task_size == 0 || l->task_size > KERNEL_TASK_MAX) {
		errmsg__set(err, errlen, "BTF: struct task_struct of %u bytes", l->task_size);
		return -EINVAL;
	}

#define REQUIRE(id, sname, field, kind, dst)                                           \
	do {                                                                           \
		ret = member(btf, id, sname, field, kind, &mi, err, errlen);           \
		if (ret)                                                               \
			return ret;                                                    \
		(dst) = mi.offset;                                                     \
	} while (0)

	REQUIRE(task, "task_struct", "pid", MEMBER_INT32, l->task_pid);
	REQUIRE(task, "task_struct", "tgid", MEMBER_INT32, l->task_tgid);
	REQUIRE(task, "task_struct", "comm", MEMBER_CHARS, l->task_comm);
	l->task_comm_len = mi.nelems;
	REQUIRE(task, "task_struct", "mm", MEMBER_PTR, l->task_mm);
	REQUIRE(task, "task_struct", "active_mm", MEMBER_PTR, l->task_active_mm);
	REQUIRE(task, "task_struct", "tasks", MEMBER_LIST, l->task_tasks);
	REQUIRE(mm, "mm_struct", "pgd", MEMBER_PTR, l->mm_pgd);
	REQUIRE(list, "list_head", "next", MEMBER_PTR, l->list_next);
#undef REQUIRE

	l->task_group_leader = optional(btf, task, "task_struct", "group_leader", MEMBER_PTR);
	l->task_exit_state = optional(btf, task, "task_struct", "exit_state", MEMBER_INT32);
	l->task_signal = optional(btf, task, "task_struct", "signal", MEMBER_PTR);
	l->task_thread_node = optional(btf, task, "task_struct", "thread_node", MEMBER_LIST);
	l->task_thread_group = optional(btf, task, "task_struct", "thread_group", MEMBER_LIST);
	l->task_exit_code = optional(btf, task, "task_struct", "exit_code", MEMBER_INT32);
	l->task_real_parent = optional(btf, task, "task_struct", "real_parent", MEMBER_PTR);
	l->mm_exe_file = optional(btf, mm, "mm_struct", "exe_file", MEMBER_PTR);
	l->file_dentry = optional_nested(btf, "file", "f_path", "path", "dentry");
	l->dentry_name = optional_nested(btf, "dentry", "d_name", "qstr", "name");
	sig = btf__find_by_name_kind(btf, "signal_struct", BTF_KIND_STRUCT);
	l->signal_thread_head = optional(btf, sig, "signal_struct", "thread_head", MEMBER_LIST);

	/* 6.x keeps `current` in pcpu_hot; older kernels in the per-CPU current_task */
	hot = btf__find_by_name_kind(btf, "pcpu_hot", BTF_KIND_STRUCT);
	l->pcpu_current_task = optional(btf, hot, "pcpu_hot", "current_task", MEMBER_PTR);
	*pcpu_hot = l->pcpu_current_task != KERNEL_LAYOUT_ABSENT;
	if (!*pcpu_hot)
		l->pcpu_current_task = 0;
	read_tlb_ctx(btf, l);
	return 0;
}

/* The GNU build-ID note of the image: its whole record (header, "GNU\0", the ID). */
static bool find_build_id(const struct elf_section *notes, uint64_t *va, const uint8_t **p,
			  size_t *len)
{
	uint64_t off = 0;

	while (notes->size - off >= 12) {
		uint32_t namesz, descsz, type;
		uint64_t rec;

		memcpy(&namesz, notes->data + off, 4);
		memcpy(&descsz, notes->data + off + 4, 4);
		memcpy(&type, notes->data + off + 8, 4);
		rec = 12 + (((uint64_t)namesz + 3) & ~3ULL) + (((uint64_t)descsz + 3) & ~3ULL);
		if (rec > notes->size - off)
			return false;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(notes->data + off + 12, "GNU", 4) &&
		    descsz >= 8 && rec <= IDENTITY_MAX) {
			*va = notes->addr + off;
			*p = notes->data + off;
			*len = rec;
			return true;
		}
		off += rec;
	}
	return false;
}

static int read_identity(struct kernel_info *ki, const struct vmlinux *v)
{
	struct elf_section sec;
	const uint8_t *p = NULL;
	size_t len = 0;
	uint64_t va = 0;

	if (!elfsec__find(v->data, v->size, ".notes", &sec) && sec.data &&
	    find_build_id(&sec, &va, &p, &len) && va >= KERNEL_IMAGE_START &&
	    va + len <= KERNEL_IMAGE_END) {
		/* found */
	} else if (!elfsec__find(v->data, v->size, "__ksymtab_strings", &sec) && sec.data &&
		   sec.size && sec.addr >= KERNEL_IMAGE_START &&
		   sec.addr + sec.size <= KERNEL_IMAGE_END) {
		va = sec.addr;
		p = sec.data;
		len = sec.size < IDENTITY_MAX ? sec.size : IDENTITY_MAX;
	} else {
		return 0;
	}
	ki->identity = malloc(len);
	if (!ki->identity)
		return -ENOMEM;
	memcpy(ki->identity, p, len);
	ki->identity_len = len;
	ki->identity_va = va;
	return 0;
}

/* Symbol table names, in the order of `wanted` below. */
enum {
	W_INIT_TASK,
	W_INIT_MM,
	W_PER_CPU_OFFSET,
	W_PCPU_HOT,
	W_CURRENT_TASK,
	W_PAGE_OFFSET_BASE,
	W_ENTRY_SYSCALL_64,
	W_PANIC_CPU,
	W_PANIC,
	W_COUNT,
};

static void wanted(struct ksym_want *w)
{
	static const char *const names[W_COUNT] = {
		[W_INIT_TASK] = "init_task",
		[W_INIT_MM] = "init_mm",
		[W_PER_CPU_OFFSET] = "__per_cpu_offset",
		[W_PCPU_HOT] = "pcpu_hot",
		[W_CURRENT_TASK] = "current_task",
		[W_PAGE_OFFSET_BASE] = "page_offset_base",
		[W_ENTRY_SYSCALL_64] = "entry_SYSCALL_64",
		[W_PANIC_CPU] = "panic_cpu",
		[W_PANIC] = "panic",
	};

	for (int i = 0; i < W_COUNT; i++)
		w[i] = (struct ksym_want){ .name = names[i] };
}

/* Bytes of panic() looked at for its first LOCK CMPXCHG (Linux 6.12: about 0x90 in). */
#define PANIC_SCAN_MAX 1024
/* kernel/panic.c: PANIC_CPU_INVALID, panic_cpu's initial value */
#define PANIC_CPU_INVALID 0xffffffffU

/*
 * panic_cpu from the code of panic(), which claims the panic with
 * atomic_try_cmpxchg(&panic_cpu, &old, this_cpu) before anything else it locks: the first
 * LOCK CMPXCHG with a 32-bit RIP-relative memory operand. The operand must be an aligned
 * address of the image whose initial value is PANIC_CPU_INVALID; otherwise it stays unknown.
 */
static void panic_cpu_from_code(struct kernel_info *ki, const struct vmlinux *v, uint64_t panic)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisDecoder dec;
	const uint8_t *code, *init;
	uint64_t ip = panic, target;
	size_t len = PANIC_SCAN_MAX;
	uint32_t value;

	if (panic < KERNEL_IMAGE_START || panic >= KERNEL_IMAGE_END)
		return;
	/* the scan stops at the end of the section that holds panic() */
	while (len && !(code = elfsec__at(v->data, v->size, panic, len)))
		len /= 2;
	if (!len ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return;
	for (size_t off = 0; off < len; off += zi.length, ip += zi.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &zi, ops)))
			return;
		if (zi.mnemonic != ZYDIS_MNEMONIC_CMPXCHG || !(zi.attributes & ZYDIS_ATTRIB_HAS_LOCK))
			continue;
		if (ops[0].type != ZYDIS_OPERAND_TYPE_MEMORY || ops[0].size != 32 ||
		    ops[0].mem.base != ZYDIS_REGISTER_RIP || ops[0].mem.index != ZYDIS_REGISTER_NONE)
			return;
		target = ip + zi.length + (uint64_t)ops[0].mem.disp.value;
		init = elfsec__at(v->data, v->size, target, sizeof(value));
		if (target < KERNEL_IMAGE_START || target >= KERNEL_IMAGE_END || (target & 3) || !init)
			return;
		memcpy(&value, init, sizeof(value));
		if (value != PANIC_CPU_INVALID)
			return;
		ki->sym[KERNEL_SYM_PANIC_CPU] = target;
		ki->source[KERNEL_SYM_PANIC_CPU] = KERNEL_SYM_FROM_CODE;
		return;
	}
}

static int read_symbols(struct kernel_info *ki, const struct vmlinux *v, const char *system_map,
			bool pcpu_hot, char *err, size_t errlen)
{
	struct ksym_want map[W_COUNT], tab[W_COUNT];
	static const int to_sym[W_COUNT] = {
		[W_INIT_TASK] = KERNEL_SYM_INIT_TASK,
		[W_INIT_MM] = KERNEL_SYM_INIT_MM,
		[W_PER_CPU_OFFSET] = KERNEL_SYM_PER_CPU_OFFSET,
		[W_PCPU_HOT] = KERNEL_SYM_CURRENT,
		[W_CURRENT_TASK] = KERNEL_SYM_CURRENT,
		[W_PAGE_OFFSET_BASE] = KERNEL_SYM_PAGE_OFFSET_BASE,
		[W_ENTRY_SYSCALL_64] = KERNEL_SYM_ENTRY_SYSCALL_64,
		[W_PANIC_CPU] = KERNEL_SYM_PANIC_CPU,
		[W_PANIC] = -1,
	};
	int ret;

	wanted(map);
	wanted(tab);
	if (system_map) {
		ret = ksyms__from_system_map(system_map, map, W_COUNT, NULL);
		if (ret) {
			errmsg__set(err, errlen, "%s: %s", system_map, strerror(-ret));
			return ret;
		}
	}
	if (v->kind == VMLINUX_ELF) {
		ret = ksyms__from_ksymtab(v->data, v->size, tab, W_COUNT, NULL);
		if (ret && ret != -ENOENT) {
			errmsg__set(err, errlen, "vmlinux: corrupt exported-symbol table");
			return ret;
		}
	}
	for (int i = 0; i < W_COUNT; i++) {
		int s = to_sym[i];

		if (map[i].found && tab[i].found && map[i].addr != tab[i].addr) {
			errmsg__set(err, errlen,
				"System.map is another build's: %s at %#" PRIx64 ", the vmlinux "
				"exports it at %#" PRIx64, map[i].name, map[i].addr, tab[i].addr);
			return -EINVAL;
		}
		/* pcpu_hot only where the BTF has it, current_task only where it has not */
		if ((i == W_PCPU_HOT && !pcpu_hot) || (i == W_CURRENT_TASK && pcpu_hot) || s < 0)
			continue;
		if (map[i].found) {
			ki->sym[s] = map[i].addr;
			ki->source[s] = KERNEL_SYM_FROM_SYSTEM_MAP;
		} else if (tab[i].found) {
			ki->sym[s] = tab[i].addr;
			ki->source[s] = KERNEL_SYM_FROM_KSYMTAB;
		}
	}
	if (ki->source[KERNEL_SYM_INIT_TASK] == KERNEL_SYM_FROM_NONE) {
		errmsg__set(err, errlen, "init_task is unknown: %s",
			v->kind == VMLINUX_BTF ? "raw BTF needs a System.map"
					       : "neither System.map nor the vmlinux's exports "
						 "have it");
		return -ENOENT;
	}
	if (ki->source[KERNEL_SYM_INIT_MM] == KERNEL_SYM_FROM_NONE && v->kind == VMLINUX_ELF) {
		/* init/init_task.c: .active_mm = &init_mm, a link-time address in the file */
		const uint8_t *p = elfsec__at(v->data, v->size,
					      ki->sym[KERNEL_SYM_INIT_TASK] +
						      ki->layout.task_active_mm, 8);
		uint64_t mm;

		if (p) {
			memcpy(&mm, p, sizeof(mm));
			if (mm >= KERNEL_IMAGE_START && mm < KERNEL_IMAGE_END && !(mm & 7)) {
				ki->sym[KERNEL_SYM_INIT_MM] = mm;
				ki->source[KERNEL_SYM_INIT_MM] = KERNEL_SYM_FROM_IMAGE;
			}
		}
	}
	if (ki->source[KERNEL_SYM_PANIC_CPU] == KERNEL_SYM_FROM_NONE && v->kind == VMLINUX_ELF &&
	    (map[W_PANIC].found || tab[W_PANIC].found))
		panic_cpu_from_code(ki, v, map[W_PANIC].found ? map[W_PANIC].addr : tab[W_PANIC].addr);
	if (ki->source[KERNEL_SYM_INIT_MM] == KERNEL_SYM_FROM_NONE) {
		errmsg__set(err, errlen, "init_mm is unknown: %s",
			v->kind == VMLINUX_BTF ? "raw BTF needs a System.map that has it"
					       : "System.map lacks it and init_task's "
						 "initializer in the vmlinux does not point at it");
		return -ENOENT;
	}
	return 0;
}

struct kernel_info *kernel_info__open(const char *kernel, const char *system_map, char *err,
				      size_t errlen)
{
	struct kernel_info *ki;
	struct elf_section sec;
	struct vmlinux v;
	struct btf *btf;
	bool pcpu_hot;
	char why[160];
	int ret;

	errmsg__set(err, errlen, "%s", "");
	ki = calloc(1, sizeof(*ki));
	if (!ki) {
		errmsg__set(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ret = vmlinux__load(kernel, &v, why, sizeof(why));
	if (ret) {
		errmsg__set(err, errlen, "%s: %s", kernel, why);
		goto err_free;
	}
	if (v.kind == VMLINUX_BTF) {
		if (v.size > UINT32_MAX) {
			ret = -EFBIG;
			errmsg__set(err, errlen, "%s: BTF too large", kernel);
			goto err_release;
		}
		btf = btf__new(v.data, (uint32_t)v.size);
	} else {
		ret = elfsec__find(v.data, v.size, ".BTF", &sec);
		if (ret || !sec.data || sec.size > UINT32_MAX) {
			ret = ret == -ENOENT ? -ENOEXEC : -EINVAL;
			errmsg__set(err, errlen, "%s: no usable .BTF section (a kernel built with "
				"CONFIG_DEBUG_INFO_BTF is needed)", kernel);
			goto err_release;
		}
		btf = btf__new(sec.data, (uint32_t)sec.size);
	}
	if (!btf) {
		ret = errno ? -errno : -EINVAL;
		errmsg__set(err, errlen, "%s: BTF rejected by libbpf: %s", kernel, strerror(-ret));
		goto err_release;
	}
	ret = read_layout(btf, &ki->layout, &pcpu_hot, why, sizeof(why));
	btf__free(btf);
	if (ret) {
		errmsg__set(err, errlen, "%s: %s", kernel, why);
		goto err_release;
	}
	ret = read_symbols(ki, &v, system_map, pcpu_hot, err, errlen);
	if (ret)
		goto err_release;
	if (v.kind == VMLINUX_ELF) {
		ret = read_identity(ki, &v);
		if (ret) {
			errmsg__set(err, errlen, "out of memory");
			goto err_release;
		}
	}
	vmlinux__release(&v);
	return ki;

err_release:
	vmlinux__release(&v);
err_free:
	kernel_info__close(ki);
	errno = -ret;
	return NULL;
}

void kernel_info__close(struct kernel_info *ki)
{
	if (!ki)
		return;
	free(ki->identity);
	free(ki);
}

const struct kernel_layout *kernel_info__layout(const struct kernel_info *ki)
{
	return &ki->layout;
}

int kernel_info__symbol(const struct kernel_info *ki, enum kernel_sym sym, uint64_t *addr)
{
	if ((unsigned int)sym >= KERNEL_SYM_COUNT || ki->source[sym] == KERNEL_SYM_FROM_NONE)
		return -ENOENT;
	*addr = ki->sym[sym];
	return 0;
}

enum kernel_sym_source kernel_info__symbol_source(const struct kernel_info *ki,
						  enum kernel_sym sym)
{
	if ((unsigned int)sym >= KERNEL_SYM_COUNT)
		return KERNEL_SYM_FROM_NONE;
	return ki->source[sym];
}

int kernel_info__identity(const struct kernel_info *ki, uint64_t *va, const uint8_t **bytes,
			  size_t *len)
{
	if (!ki->identity)
		return -ENOENT;
	*va = ki->identity_va;
	*bytes = ki->identity;
	*len = ki->identity_len;
	return 0;
}
