// SPDX-License-Identifier: GPL-2.0
/*
 * test-plt.c - the names of PLT stubs ("puts@plt") in real programs and shared objects the
 * test build links against the C library (plt-prog.c: lazy and immediate binding, IBT's
 * .plt.sec, .plt.got), compared with objdump -d's <name@plt> labels; then the same files
 * made to lie (bad links, indexes, sizes, addresses, string tables, overlapping sections, a
 * name with terminal controls), and `vbts decode` naming a task's branches through its PLT.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder-test.h"
#include "escape.h"
#include "symbols.h"
#include "symbols-int.h"
#include "test-files.h"
#include "test-ring.h"

#define PLT_PROG(name) PLT_PROG_DIR "/vbts-plt-" name

/* The variants of meson.build: whether their calls go through IBT's .plt.sec. */
static const struct {
	const char *path;
	bool ibt;
	const char *entry;      /* the program's own function */
} variants[] = {
	{ PLT_PROG("lazy"), false, "main" },         { PLT_PROG("now"), false, "main" },
	{ PLT_PROG("ibt"), true, "main" },           { PLT_PROG("ibt-now"), true, "main" },
	{ PLT_PROG("lib"), false, "plt_lib_entry" }, { PLT_PROG("lib-ibt"), true, "plt_lib_entry" },
};

/* An instruction of a PLT section in objdump's listing, and the @plt label it is under. */
struct ref_insn {
	uint64_t addr;
	char label[64];         /* "" when no <name@plt> label covers it */
	uint64_t label_addr;
};

struct ref {
	struct ref_insn *insn;
	size_t nr;
	size_t labels;          /* <name@plt> labels */
	bool plt_sec;           /* objdump listed a .plt.sec */
	uint64_t puts_plt;      /* the address of <puts@plt>, 0 when none */
	uint64_t cxa_plt;       /* of <__cxa_finalize@plt> */
	uint64_t main_addr;     /* of <main> or <plt_lib_entry> */
};

static bool is_plt(const char *section)
{
	return !strcmp(section, ".plt") || !strcmp(section, ".plt.sec") ||
	       !strcmp(section, ".plt.got");
}

static bool ends_with_plt(const char *s)
{
	size_t n = strlen(s);

	return n >= 4 && !strcmp(s + n - 4, "@plt");
}

/* objdump -d's listing of @path: every instruction of its PLT sections. */
static void objdump_ref(const char *path, struct ref *r)
{
	char cmd[1024], line[1024], section[64] = "", label[64] = "";
	uint64_t label_addr = 0;
	size_t alloc = 0;
	FILE *p;

	memset(r, 0, sizeof(*r));
	snprintf(cmd, sizeof(cmd), "'%s' -d -w --no-show-raw-insn '%s'", OBJDUMP, path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char name[256];

		if (sscanf(line, "Disassembly of section %63[^:]:", section) == 1) {
			label[0] = '\0';
			r->plt_sec |= !strcmp(section, ".plt.sec");
			continue;
		}
		if (sscanf(line, "%llx <%255[^>]>:", &a, name) == 2) {
			if (!strcmp(name, "main") || !strcmp(name, "plt_lib_entry"))
				r->main_addr = a;
			if (!is_plt(section))
				continue;
			label[0] = '\0';
			if (ends_with_plt(name)) {
				ck_assert_uint_lt(strlen(name), sizeof(label));
				strcpy(label, name);
				label_addr = a;
				r->labels++;
				if (!strcmp(name, "puts@plt"))
					r->puts_plt = a;
				if (!strcmp(name, "__cxa_finalize@plt"))
					r->cxa_plt = a;
			}
			continue;
		}
		if (!is_plt(section) || sscanf(line, " %llx:\t", &a) != 1 || line[0] != ' ')
			continue;
		if (r->nr == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			r->insn = realloc(r->insn, alloc * sizeof(*r->insn));
			ck_assert_ptr_nonnull(r->insn);
		}
		r->insn[r->nr].addr = a;
		strcpy(r->insn[r->nr].label, label);
		r->insn[r->nr].label_addr = label_addr;
		r->nr++;
	}
	ck_assert_int_eq(pclose(p), 0);
}

/* The name @s gives @addr, or NULL. */
static const char *name_at(const struct symbols *s, uint64_t addr, uint64_t *offset)
{
	struct symbol_hit hit;

	if (symbols__lookup(s, addr, &hit))
		return NULL;
	if (offset)
		*offset = hit.offset;
	return hit.name;
}

/*
 * Every instruction of the PLT sections objdump lists: named as objdump's label over it, at
 * the same offset, or, outside any label (PLT0, the lazy stubs of an IBT PLT), no @plt name.
 */
START_TEST(test_plt_objdump)
{
	const char *path = variants[_i].path;
	struct symbols *s = symbols__load(path);
	struct ref r;
	size_t named = 0;

	ck_assert_msg(s, "%s: %s", path, strerror(errno));
	objdump_ref(path, &r);
	/* The build made what the variant is for. */
	ck_assert_msg(r.plt_sec == variants[_i].ibt, "%s: .plt.sec %s", path,
		      r.plt_sec ? "present" : "absent");
	ck_assert_msg(r.labels >= 4 && r.puts_plt && r.cxa_plt && r.main_addr,
		      "%s: objdump shows %zu @plt labels", path, r.labels);
	for (size_t i = 0; i < r.nr; i++) {
		const struct ref_insn *in = &r.insn[i];
		uint64_t off = 0;
		const char *got = name_at(s, in->addr, &off);

		if (!in->label[0]) {
			ck_assert_msg(!got || !ends_with_plt(got), "%s: %#" PRIx64 " named %s, "
				      "objdump names nothing there", path, in->addr, got);
			continue;
		}
		ck_assert_msg(got && !strcmp(got, in->label) && off == in->addr - in->label_addr,
			      "%s: %#" PRIx64 " is %s+%#" PRIx64 ", objdump says %s+%#" PRIx64,
			      path, in->addr, got ? got : "(nothing)", off, in->label,
			      in->addr - in->label_addr);
		named++;
	}
	ck_assert_uint_ge(named, r.labels);
	/* The program's own symbols are still there. */
	ck_assert_str_eq(name_at(s, r.main_addr, NULL), variants[_i].entry);
	free(r.insn);
	symbols__free(s);
}
END_TEST

/* ---- lying files ------------------------------------------------------------------------ */

struct elf_buf {
	unsigned char *b;
	size_t len;
};

static Elf64_Ehdr *ehdr(struct elf_buf *e)
{
	return (Elf64_Ehdr *)e->b;
}

static Elf64_Shdr *shdr_at(struct elf_buf *e, size_t i)
{
	return (Elf64_Shdr *)(e->b + ehdr(e)->e_shoff) + i;
}

/* The header of the section called @name, and its index in @index. */
static Elf64_Shdr *shdr_named(struct elf_buf *e, const char *name, size_t *index)
{
	const Elf64_Shdr *strs = shdr_at(e, ehdr(e)->e_shstrndx);

	for (size_t i = 0; i < ehdr(e)->e_shnum; i++) {
		Elf64_Shdr *sh = shdr_at(e, i);

		if (!strcmp((const char *)e->b + strs->sh_offset + sh->sh_name, name)) {
			if (index)
				*index = i;
			return sh;
		}
	}
	ck_abort_msg("no section %s", name);
	return NULL;
}

/* The .dynsym entry of the symbol called @name. */
static Elf64_Sym *dynsym_named(struct elf_buf *e, const char *name)
{
	Elf64_Shdr *sym = shdr_named(e, ".dynsym", NULL);
	Elf64_Shdr *str = shdr_named(e, ".dynstr", NULL);

	for (size_t i = 1; i < sym->sh_size / sizeof(Elf64_Sym); i++) {
		Elf64_Sym *s = (Elf64_Sym *)(e->b + sym->sh_offset) + i;

		if (!strcmp((const char *)e->b + str->sh_offset + s->st_name, name))
			return s;
	}
	ck_abort_msg("no dynamic symbol %s", name);
	return NULL;
}

enum plt_lie {
	LIE_RELA_LINK_RANGE,    /* .rela.plt's symbol table index past the section table */
	LIE_RELA_LINK_TYPE,     /* .rela.plt's symbol table is .plt */
	LIE_DYNSYM_LINK_TYPE,   /* .dynsym's string table is .text */
	LIE_RELA_SYM_INDEX,     /* every JUMP_SLOT names symbol 0xffffff */
	LIE_RELA_SIZE,          /* .rela.plt far larger than the file */
	LIE_PLT_SIZE,           /* .plt and .plt.sec far larger than the file */
	LIE_PLT_WRAP,           /* .plt and .plt.sec at the top of the address space */
	LIE_DYNSTR_NO_NUL,      /* .dynstr's last byte is not NUL */
	LIE_NAME_OFFSET,        /* puts's name offset past .dynstr */
	LIE_NAME_CONTROLS,      /* puts is called ESC [ 2 J */
	LIE_PLT_OVERLAP,        /* .plt.got covers every PLT section and more */
	LIE_RELA_SIZE_ODD,      /* .rela.plt's size not a multiple of its entries' */
	LIE_ENTSIZE,            /* .plt's entry size 3 */
	LIE_MAX
};

static void lie(struct elf_buf *e, enum plt_lie l, bool ibt)
{
	Elf64_Shdr *rela = shdr_named(e, ".rela.plt", NULL);
	Elf64_Shdr *plt = shdr_named(e, ibt ? ".plt.sec" : ".plt", NULL);
	size_t plt_index, text_index;
	Elf64_Shdr *sh;

	shdr_named(e, ".plt", &plt_index);
	shdr_named(e, ".text", &text_index);
	switch (l) {
	case LIE_RELA_LINK_RANGE:
		rela->sh_link = 0xfff0;
		break;
	case LIE_RELA_LINK_TYPE:
		rela->sh_link = (Elf64_Word)plt_index;
		break;
	case LIE_DYNSYM_LINK_TYPE:
		shdr_named(e, ".dynsym", NULL)->sh_link = (Elf64_Word)text_index;
		break;
	case LIE_RELA_SYM_INDEX:
		for (size_t i = 0; i < rela->sh_size / sizeof(Elf64_Rela); i++) {
			Elf64_Rela *r = (Elf64_Rela *)(e->b + rela->sh_offset) + i;

			r->r_info = ELF64_R_INFO(0xffffff, ELF64_R_TYPE(r->r_info));
		}
		break;
	case LIE_RELA_SIZE:
		rela->sh_size = 0x7fffffff0ULL;
		break;
	case LIE_PLT_SIZE:
		shdr_named(e, ".plt", NULL)->sh_size = 0x7fffffff0ULL;
		plt->sh_size = 0x7fffffff0ULL;
		break;
	case LIE_PLT_WRAP:
		shdr_named(e, ".plt", NULL)->sh_addr = UINT64_MAX - 0x20;
		plt->sh_addr = UINT64_MAX - 0x20;
		break;
	case LIE_DYNSTR_NO_NUL:
		sh = shdr_named(e, ".dynstr", NULL);
		e->b[sh->sh_offset + sh->sh_size - 1] = 'x';
		break;
	case LIE_NAME_OFFSET:
		dynsym_named(e, "puts")->st_name = 0xfffffff0;
		break;
	case LIE_NAME_CONTROLS:
		sh = shdr_named(e, ".dynstr", NULL);
		memcpy(e->b + sh->sh_offset + dynsym_named(e, "puts")->st_name, "\x1b[2J", 4);
		break;
	case LIE_PLT_OVERLAP:
		sh = shdr_named(e, ".plt.got", NULL);
		sh->sh_addr = shdr_named(e, ".plt", NULL)->sh_addr;
		sh->sh_offset = shdr_named(e, ".plt", NULL)->sh_offset;
		sh->sh_size = 0x1000;
		sh->sh_entsize = 8;
		break;
	case LIE_RELA_SIZE_ODD:
		rela->sh_size -= 5;
		break;
	case LIE_ENTSIZE:
		shdr_named(e, ".plt", NULL)->sh_entsize = 3;
		break;
	default:
		ck_abort();
	}
}

/*
 * Each lie, in the lazy program and in the IBT one: the file still loads, its own symbols
 * still resolve, the PLT names the lie leaves intact are still objdump's, those it breaks
 * are gone (never another symbol's name), and loading stays linear in the file's size.
 */
START_TEST(test_plt_lying_elf)
{
	enum plt_lie l = (enum plt_lie)(_i / 2);
	bool ibt = _i % 2;
	const char *path = ibt ? PLT_PROG("ibt") : PLT_PROG("lazy");
	char tmp[] = "/tmp/vbts-plt-XXXXXX";
	const char *puts_name, *cxa_name;
	char esc[256];
	struct elf_buf e;
	struct symbols *s;
	struct ref r;
	int fd;

	objdump_ref(path, &r);
	e.b = test__slurp(path, &e.len);
	lie(&e, l, ibt);
	fd = mkstemp(tmp);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, e.b, e.len), (ssize_t)e.len);
	close(fd);
	s = symbols__load(tmp);
	unlink(tmp);
	ck_assert_msg(s, "lie %d: %s", l, strerror(errno));
	ck_assert_str_eq(name_at(s, r.main_addr, NULL), "main");
	ck_assert_uint_le(symbols__load_probes(s), e.len / 4);
	puts_name = name_at(s, r.puts_plt, NULL);
	cxa_name = name_at(s, r.cxa_plt, NULL);
	switch (l) {
	case LIE_RELA_LINK_RANGE:
	case LIE_RELA_LINK_TYPE:
	case LIE_RELA_SYM_INDEX:
	case LIE_RELA_SIZE:
		/* .rela.plt is useless; .rela.dyn still names .plt.got's entry. */
		ck_assert_ptr_null(puts_name);
		ck_assert_str_eq(cxa_name, "__cxa_finalize@plt");
		break;
	case LIE_DYNSYM_LINK_TYPE:
	case LIE_DYNSTR_NO_NUL:
		ck_assert_ptr_null(puts_name);
		ck_assert_ptr_null(cxa_name);
		break;
	case LIE_PLT_SIZE:
	case LIE_PLT_WRAP:
		ck_assert_ptr_null(puts_name);
		ck_assert_str_eq(cxa_name, "__cxa_finalize@plt");
		break;
	case LIE_NAME_OFFSET:
		ck_assert_ptr_null(puts_name);
		ck_assert_str_eq(cxa_name, "__cxa_finalize@plt");
		break;
	case LIE_NAME_CONTROLS:
		/* Kept as the file says: the annotator escapes names before any output. */
		ck_assert_msg(puts_name && !strcmp(puts_name, "\x1b[2J@plt"), "puts@plt is %s",
			      puts_name ? escape__str(esc, sizeof(esc), puts_name) : "(nothing)");
		break;
	case LIE_RELA_SIZE_ODD:
		/* libelf reads the whole entries only. */
		ck_assert_ptr_nonnull(cxa_name);
		break;
	case LIE_ENTSIZE:
		/* 16-byte entries all the same; the IBT program's are in .plt.sec. */
		ck_assert_str_eq(puts_name, "puts@plt");
		break;
	case LIE_PLT_OVERLAP:
		/* Whatever the overlap gives: PLT names or nothing, never a crash. */
		ck_assert(!puts_name || ends_with_plt(puts_name));
		break;
	default:
		break;
	}
	free(e.b);
	free(r.insn);
	symbols__free(s);
}
END_TEST

/* ---- vbts decode ------------------------------------------------------------------------- */

#define PLT_BASE 0x555555554000ULL
#define LIBC_PUTS 0x7ffff7e50000ULL

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * A Linux task of each program (pid 51: the lazy PIE, pid 52: the same with puts called ESC [ 2
 * J) calls puts through its PLT, the PLT jumps into the C library and puts returns, three
 * times over: `vbts decode --symbols ROOTFS` names both ends of the PLT's branches from
 * objdump's label, every time (the answers of the annotator's caches are the first one), in
 * the text and the --lines output; the hostile name comes out escaped.
 */
START_TEST(test_plt_decode)
{
	static const char vm_json[] =
		"{\"version\":1,\"vm_id\":\"00000000000000ac\",\"vcpus\":1,\"backend\":\"step\"}\n";
	static const char *const formats[][2] = { { NULL }, { "--lines", NULL } };
	char dir[] = "/tmp/vbts-plt-decode-XXXXXX", rootfs[64], events[1024], want[128];
	struct vbts_record recs[32];
	struct elf_buf e;
	struct ref r;
	size_t n = 0;
	uint64_t call, puts_plt, ret_to;

	objdump_ref(PLT_PROG("lazy"), &r);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", dir);
	ck_assert_int_eq(mkdir(rootfs, 0755), 0);
	e.b = test__slurp(PLT_PROG("lazy"), &e.len);
	test__write_file(dir, "rootfs/plain", e.b, e.len);
	lie(&e, LIE_NAME_CONTROLS, false);
	test__write_file(dir, "rootfs/evil", e.b, e.len);
	free(e.b);
	snprintf(events, sizeof(events),
		 "{\"time\":10,\"vcpu\":0,\"event\":\"exec\",\"pid\":51,\"tgid\":51,"
		 "\"name\":\"plain\",\"cr3\":\"0x4000000\",\"exe\":\"/plain\","
		 "\"load_base\":\"0x%llx\"}\n"
		 "{\"time\":20,\"vcpu\":0,\"event\":\"exec\",\"pid\":52,\"tgid\":52,"
		 "\"name\":\"evil\",\"cr3\":\"0x5000000\",\"exe\":\"/evil\","
		 "\"load_base\":\"0x%llx\"}\n", PLT_BASE, PLT_BASE);
	test__write_text(dir, "events.jsonl", events);
	test__write_text(dir, "vm.json", vm_json);
	call = PLT_BASE + r.main_addr + 4;
	puts_plt = PLT_BASE + r.puts_plt;
	ret_to = call + 5;
	recs[n++] = (struct vbts_record)ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER);
	for (uint64_t cr3 = 0x4000000; cr3 <= 0x5000000; cr3 += 0x1000000) {
		recs[n++] = (struct vbts_record)ESC(VBTS_ESC_TASK_ARRIVE, cr3, cr3 >> 20);
		for (int i = 0; i < 3; i++) {
			recs[n++] = br(call, puts_plt, 3, VBTS_BR_CALL);
			recs[n++] = br(puts_plt, LIBC_PUTS, 3, VBTS_BR_JMP);
			recs[n++] = br(LIBC_PUTS + 0x40, ret_to, 3, VBTS_BR_RET);
		}
		recs[n++] = (struct vbts_record)ESC(VBTS_ESC_TASK_DEPART, cr3, (cr3 >> 20) + 1);
	}
	recs[n++] = (struct vbts_record)ESC(VBTS_ESC_STOP, 200, 0);
	test__write_ring(dir, 0, 64, recs, n, 0);

	for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		const char *argv[8] = { "--symbols", rootfs };
		const char *name = formats[f][0] ? formats[f][0] : "text";
		char *out, *err;
		int argc = 2;

		for (int i = 0; formats[f][i]; i++)
			argv[argc++] = formats[f][i];
		argv[argc++] = dir;
		argv[argc] = NULL;
		ck_assert_msg(run_decode_nofile(&out, &err, 0, argv) == 0, "%s", err);
		assert_printable(out, 64);
		/* Both ends of the PLT's branches, in each of the three rounds of each task. */
		snprintf(want, sizeof(want), "0x%llx puts@plt+0x0", (unsigned long long)puts_plt);
		ck_assert_msg(count(out, want) == 6, "%s: not 6 times %s:\n%s", name, want, out);
		snprintf(want, sizeof(want), "0x%llx \\x1b[2J@plt+0x0",
			 (unsigned long long)puts_plt);
		ck_assert_msg(count(out, want) == 6, "%s: not 6 times %s:\n%s", name, want, out);
		free(out);
		free(err);
	}
	remove_trace(dir);
	free(r.insn);
}
END_TEST

Suite *plt_suite(void)
{
	Suite *s = suite_create("plt");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_plt_objdump, 0, (int)(sizeof(variants) / sizeof(variants[0])));
	tcase_add_loop_test(tc, test_plt_lying_elf, 0, 2 * LIE_MAX);
	tcase_add_test(tc, test_plt_decode);
	suite_add_tcase(s, tc);
	return s;
}
