// SPDX-License-Identifier: GPL-2.0
/*
 * test-images.c - the built test guest images keep the rules the oracle depends on.
 *
 * A direct branch to the very next instruction is invisible in QEMU's log (the next PC is the
 * fall-through either way), so no guest may contain one: every jmp/jcc/call/loop/jrcxz with a
 * relative target and every far jmp/call with a pointer operand is decoded (Zydis, linear sweep
 * over .text: _start to start64 in 32-bit mode, the rest in 64-bit mode) and checked; no
 * guest may contain STI either. Images: VBTS_GUEST_IMAGES, colon-separated.
 */
#include <Zydis/Zydis.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oracle-tests.h"

struct text {
	uint8_t *bytes;
	uint64_t addr;
	size_t size;
	uint64_t start32; /* _start */
	uint64_t start64; /* start64 */
};

static void load_text(const char *path, struct text *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	size_t shstrndx, i, n;
	const char *name;
	Elf *elf;
	int fd;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: cannot open", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		ck_assert_ptr_nonnull(gelf_getshdr(scn, &shdr));
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && !strcmp(name, ".text")) {
			data = elf_getdata(scn, NULL);
			ck_assert_ptr_nonnull(data);
			t->bytes = malloc(data->d_size);
			ck_assert_ptr_nonnull(t->bytes);
			memcpy(t->bytes, data->d_buf, data->d_size);
			t->size = data->d_size;
			t->addr = shdr.sh_addr;
		}
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && !strcmp(name, "_start"))
				t->start32 = sym.st_value;
			if (name && !strcmp(name, "start64"))
				t->start64 = sym.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	ck_assert_msg(t->bytes && t->start32 && t->start64 > t->start32,
		      "%s: no .text, _start or start64", path);
}

/*
 * Decodes [from, to) in @mode; returns the number of rule breaks: branches to the next
 * instruction, and STI (QEMU's PIT runs: an unmasked interrupt lands at a different
 * instruction in every run).
 */
static int sweep(const char *path, const struct text *t, uint64_t from, uint64_t to,
		 ZydisMachineMode mode, ZydisStackWidth width, size_t *decoded)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	uint64_t pc = from, target;
	int bad = 0;

	ck_assert(ZYAN_SUCCESS(ZydisDecoderInit(&dec, mode, width)));
	while (pc < to) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, t->bytes + (pc - t->addr),
							 to - pc, &insn, ops))) {
			pc++; /* data or padding the sweep cannot decode */
			continue;
		}
		(*decoded)++;
		target = 0;
		if (insn.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE && insn.operand_count_visible &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[0].imm.is_relative &&
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], pc, &target)))
			target = 0;
		/* far jmp/call ptr16:32 (flat segments: the offset is the address) */
		if (insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR && insn.operand_count_visible &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_POINTER)
			target = ops[0].ptr.offset;
		if (target == pc + insn.length) {
			fprintf(stderr, "%s: branch at 0x%llx goes to the next instruction\n", path,
				(unsigned long long)pc);
			bad++;
		}
		if (insn.mnemonic == ZYDIS_MNEMONIC_STI) {
			fprintf(stderr, "%s: sti at 0x%llx (interrupts must stay masked)\n", path,
				(unsigned long long)pc);
			bad++;
		}
		pc += insn.length;
	}
	return bad;
}

START_TEST(test_no_branch_to_next)
{
	const char *env = getenv("VBTS_GUEST_IMAGES");
	char *list, *path, *save;
	struct text t;
	size_t decoded;
	int images = 0, bad;

	ck_assert_msg(env != NULL, "VBTS_GUEST_IMAGES is not set");
	list = strdup(env);
	ck_assert_ptr_nonnull(list);
	for (path = strtok_r(list, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
		load_text(path, &t);
		decoded = 0;
		bad = sweep(path, &t, t.start32, t.start64, ZYDIS_MACHINE_MODE_LEGACY_32,
			    ZYDIS_STACK_WIDTH_32, &decoded);
		bad += sweep(path, &t, t.start64, t.addr + t.size, ZYDIS_MACHINE_MODE_LONG_64,
			     ZYDIS_STACK_WIDTH_64, &decoded);
		ck_assert_msg(bad == 0, "%s: %d rule breaks (see stderr)", path, bad);
		ck_assert_uint_gt(decoded, 100);
		free(t.bytes);
		images++;
	}
	free(list);
	ck_assert_int_ge(images, 1);
}
END_TEST

Suite *images_suite(void)
{
	Suite *s = suite_create("images");
	TCase *tc = tcase_create("images");

	tcase_add_test(tc, test_no_branch_to_next);
	suite_add_tcase(s, tc);
	return s;
}
