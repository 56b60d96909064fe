// SPDX-License-Identifier: GPL-2.0
/*
 * insn.c - classify x86 instructions for the step tracer with Zydis.
 */
#include <errno.h>
#include <string.h>

#include <vbts/ring-format.h>

#include "x86.h"
#include "insn.h"

/* Zydis machine mode and stack width of each enum insn_mode. */
static const struct {
	ZydisMachineMode mm;
	ZydisStackWidth sw;
} zydis_modes[INSN_MODE_MAX] = {
	[INSN_MODE_REAL16] = { ZYDIS_MACHINE_MODE_REAL_16, ZYDIS_STACK_WIDTH_16 },
	[INSN_MODE_PROT16] = { ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16 },
	[INSN_MODE_PROT32] = { ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32 },
	[INSN_MODE_COMPAT16] = { ZYDIS_MACHINE_MODE_LONG_COMPAT_16, ZYDIS_STACK_WIDTH_16 },
	[INSN_MODE_COMPAT32] = { ZYDIS_MACHINE_MODE_LONG_COMPAT_32, ZYDIS_STACK_WIDTH_32 },
	[INSN_MODE_LONG64] = { ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64 },
};

int insn_decoder__init(struct insn_decoder *d)
{
	for (unsigned int m = 0; m < INSN_MODE_MAX; m++) {
		ZyanStatus st = ZydisDecoderInit(&d->zd[m], zydis_modes[m].mm, zydis_modes[m].sw);

		if (!ZYAN_SUCCESS(st))
			return -EINVAL;
	}
	return 0;
}

enum insn_mode insn__mode(uint64_t cr0, uint64_t efer, uint64_t rflags, bool cs_l, bool cs_db)
{
	if (!(cr0 & X86_CR0_PE))
		return INSN_MODE_REAL16;
	if (efer & X86_EFER_LMA) {
		/* 64-bit mode ignores CS.D/B (L=1, D=1 is reserved: the CPU faults on entry). */
		if (cs_l)
			return INSN_MODE_LONG64;
		return cs_db ? INSN_MODE_COMPAT32 : INSN_MODE_COMPAT16;
	}
	if (rflags & X86_RFLAGS_VM)
		return INSN_MODE_REAL16;
	return cs_db ? INSN_MODE_PROT32 : INSN_MODE_PROT16;
}

/* The new IP of a relative branch: wraps at the operand size, as the CPU computes it. */
static uint64_t relative_target(const ZydisDecodedInstruction *zi, uint64_t ip)
{
	uint64_t t = ip + zi->length + (uint64_t)zi->raw.imm[0].value.s;

	if (zi->operand_width == 16)
		return t & 0xffff;
	if (zi->operand_width == 32)
		return t & 0xffffffff;
	return t;
}

/* Near or far jmp/call: direct relative, indirect, or far (new CS). */
static void classify_jmp_call(const ZydisDecodedInstruction *zi, uint64_t ip, uint8_t near_kind,
			      uint8_t ind_kind, uint8_t far_kind, struct insn_info *out)
{
	if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR) {
		/* A far transfer may go through a call gate or a task: any CPL. */
		out->kind = far_kind;
		out->flags |= INSN_F_FAR | INSN_F_CPL_CHANGE;
	} else if (zi->raw.imm[0].is_relative) {
		/* rel8/16/32; IS_RELATIVE alone also marks RIP-relative memory operands */
		out->kind = near_kind;
		out->flags |= INSN_F_DIRECT;
		out->target = relative_target(zi, ip);
	} else {
		out->kind = ind_kind;
	}
}

static void set_vector(struct insn_info *out, uint8_t kind, uint8_t vector, uint16_t flags)
{
	out->kind = kind;
	out->vector = vector;
	/* Delivery through the IDT may enter CPL 0 from any CPL. */
	out->flags |= INSN_F_VECTOR | INSN_F_CPL_CHANGE | flags;
}

static void classify(const ZydisDecodedInstruction *zi, uint64_t ip, struct insn_info *out)
{
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		classify_jmp_call(zi, ip, VBTS_BR_JMP, VBTS_BR_JMP_IND, VBTS_BR_FAR_JMP, out);
		return;
	case ZYDIS_MNEMONIC_CALL:
		classify_jmp_call(zi, ip, VBTS_BR_CALL, VBTS_BR_CALL_IND, VBTS_BR_FAR_CALL, out);
		return;
	case ZYDIS_MNEMONIC_RET:
		if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR) {
			out->kind = VBTS_BR_FAR_RET;
			out->flags |= INSN_F_FAR | INSN_F_CPL_CHANGE;
		} else {
			out->kind = VBTS_BR_RET;
		}
		return;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		out->kind = VBTS_BR_IRET;
		out->flags |= INSN_F_CPL_CHANGE;
		return;
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		out->kind = VBTS_BR_LOOP;
		out->flags |= INSN_F_DIRECT | INSN_F_COND;
		out->target = relative_target(zi, ip);
		out->cond = zi->opcode; /* e0 loopne, e1 loope, e2 loop */
		return;
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:
		out->kind = VBTS_BR_JRCXZ;
		out->flags |= INSN_F_DIRECT | INSN_F_COND;
		out->target = relative_target(zi, ip);
		out->cond = zi->opcode; /* e3 */
		return;
	case ZYDIS_MNEMONIC_INT:
		set_vector(out, VBTS_BR_INT, (uint8_t)zi->raw.imm[0].value.u, INSN_F_SOFT_INT);
		return;
	case ZYDIS_MNEMONIC_INT3:
		set_vector(out, VBTS_BR_INT, 3, INSN_F_SOFT_INT);
		return;
	case ZYDIS_MNEMONIC_INTO:
		set_vector(out, VBTS_BR_INT, 4, INSN_F_SOFT_INT | INSN_F_COND);
		return;
	case ZYDIS_MNEMONIC_INT1:
		/* icebp: a #DB that ignores the gate's DPL. */
		set_vector(out, VBTS_BR_INT, 1, 0);
		return;
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
		set_vector(out, VBTS_BR_EXCEPTION, 6, 0);
		return;
	case ZYDIS_MNEMONIC_SYSCALL:
		out->kind = VBTS_BR_SYSCALL;
		out->flags |= INSN_F_SYSCALL | INSN_F_CPL_CHANGE;
		return;
	case ZYDIS_MNEMONIC_SYSENTER:
		out->kind = VBTS_BR_SYSCALL;
		out->flags |= INSN_F_SYSENTER | INSN_F_CPL_CHANGE;
		return;
	case ZYDIS_MNEMONIC_SYSRET:
		out->kind = VBTS_BR_SYSRET;
		out->flags |= INSN_F_CPL_CHANGE;
		return;
	case ZYDIS_MNEMONIC_SYSEXIT:
		out->kind = VBTS_BR_SYSRET;
		out->flags |= INSN_F_CPL_CHANGE | INSN_F_SYSEXIT;
		return;
	case ZYDIS_MNEMONIC_RSM:
	case ZYDIS_MNEMONIC_UIRET:
		out->kind = VBTS_BR_OTHER;
		out->flags |= INSN_F_CPL_CHANGE;
		return;
	case ZYDIS_MNEMONIC_XBEGIN:
	case ZYDIS_MNEMONIC_XABORT:
	case ZYDIS_MNEMONIC_VMFUNC:
		out->kind = VBTS_BR_OTHER;
		return;
	case ZYDIS_MNEMONIC_HLT:
		out->flags |= INSN_F_HLT;
		return;
	case ZYDIS_MNEMONIC_MOV:
		/* 8E /2: mov r/m16, %ss */
		if (zi->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && zi->opcode == 0x8e &&
		    zi->raw.modrm.reg == 2)
			out->flags |= INSN_F_MOV_SS;
		/* 0F 22 /3: mov r, %cr3 */
		if (zi->opcode_map == ZYDIS_OPCODE_MAP_0F && zi->opcode == 0x22 &&
		    zi->raw.modrm.reg == 3)
			out->flags |= INSN_F_CR3;
		return;
	case ZYDIS_MNEMONIC_POP:
		/* 17: pop %ss (not valid in 64-bit mode) */
		if (zi->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && zi->opcode == 0x17)
			out->flags |= INSN_F_MOV_SS;
		return;
	default:
		break;
	}

	if (zi->meta.category == ZYDIS_CATEGORY_COND_BR) {
		out->kind = VBTS_BR_JCC;
		out->flags |= INSN_F_COND;
		/* 70+cc rel8 or 0f 80+cc rel16/32 */
		if ((zi->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (zi->opcode & 0xf0) == 0x70) ||
		    (zi->opcode_map == ZYDIS_OPCODE_MAP_0F && (zi->opcode & 0xf0) == 0x80))
			out->cond = 0x70 | (zi->opcode & 0xf);
		if (zi->raw.imm[0].is_relative) {
			out->flags |= INSN_F_DIRECT;
			out->target = relative_target(zi, ip);
		}
		return;
	}
	if ((zi->meta.category == ZYDIS_CATEGORY_STRINGOP ||
	     zi->meta.category == ZYDIS_CATEGORY_IOSTRINGOP) &&
	    (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
			       ZYDIS_ATTRIB_HAS_REPNE)))
		out->flags |= INSN_F_REP_STRING;
}

int insn__decode(const struct insn_decoder *d, enum insn_mode mode, uint64_t ip,
		 const uint8_t *bytes, size_t n, struct insn_info *out)
{
	ZydisDecodedInstruction zi;
	ZyanStatus st;

	if ((unsigned int)mode >= INSN_MODE_MAX)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (n > INSN_MAX_LEN)
		n = INSN_MAX_LEN;
	st = ZydisDecoderDecodeInstruction(&d->zd[mode], NULL, bytes, n, &zi);
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return -ENODATA;
	if (!ZYAN_SUCCESS(st))
		return -EILSEQ;
	out->len = zi.length;
	out->opsize = zi.operand_width / 8;
	out->adsize = zi.address_width / 8;
	classify(&zi, ip, out);
	return 0;
}

static bool plain_access(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_MOV:
	case ZYDIS_MNEMONIC_MOVZX:
	case ZYDIS_MNEMONIC_MOVSX:
	case ZYDIS_MNEMONIC_MOVSXD:
	case ZYDIS_MNEMONIC_CMP:
	case ZYDIS_MNEMONIC_TEST:
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_AND:
	case ZYDIS_MNEMONIC_OR:
	case ZYDIS_MNEMONIC_XOR:
	case ZYDIS_MNEMONIC_ADC:
	case ZYDIS_MNEMONIC_SBB:
		return true;
	default:
		return false;
	}
}

/* The value of a general register or RIP in an address; false for any other register. */
static bool reg_value(ZydisRegister r, const uint64_t gpr[INSN_GPR_MAX], uint64_t next_ip,
		      uint64_t *v)
{
	ZydisRegister full;

	if (r == ZYDIS_REGISTER_NONE) {
		*v = 0;
		return true;
	}
	if (r == ZYDIS_REGISTER_RIP || r == ZYDIS_REGISTER_EIP) {
		*v = next_ip;
		return true;
	}
	full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (full < ZYDIS_REGISTER_RAX || full > ZYDIS_REGISTER_R15)
		return false;
	*v = gpr[full - ZYDIS_REGISTER_RAX];
	return true;
}

int insn__mem_access(const struct insn_decoder *d, uint64_t ip, const uint8_t *bytes, size_t n,
		     const uint64_t gpr[INSN_GPR_MAX], uint64_t fs_base, uint64_t gs_base,
		     struct insn_mem *out)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const ZydisDecodedOperand *mem = NULL;
	ZydisDecodedInstruction zi;
	uint64_t base, index, la, next_ip;
	ZyanStatus st;

	if (n > INSN_MAX_LEN)
		n = INSN_MAX_LEN;
	st = ZydisDecoderDecodeFull(&d->zd[INSN_MODE_LONG64], bytes, n, &zi, ops);
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return -ENODATA;
	if (!ZYAN_SUCCESS(st))
		return -EILSEQ;
	if (!plain_access(zi.mnemonic) || (zi.attributes & ZYDIS_ATTRIB_HAS_LOCK))
		return -ENOENT;
	for (unsigned int i = 0; i < zi.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ZydisRegisterGetClass(op->reg.value) == ZYDIS_REGCLASS_SEGMENT)
			return -ENOENT; /* mov to or from a segment register */
		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		if (mem || op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT ||
		    op->mem.type != ZYDIS_MEMOP_TYPE_MEM)
			return -ENOENT;
		mem = op;
	}
	if (!mem)
		return -ENOENT;
	if ((mem->actions & ZYDIS_OPERAND_ACTION_MASK_READ) &&
	    (mem->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
		return -ENOENT; /* read-modify-write */
	next_ip = ip + zi.length;
	if (!reg_value(mem->mem.base, gpr, next_ip, &base) ||
	    !reg_value(mem->mem.index, gpr, next_ip, &index))
		return -ENOENT;
	la = base + index * mem->mem.scale + (uint64_t)mem->mem.disp.value;
	if (zi.address_width == 32)
		la &= 0xffffffffULL;
	if (mem->mem.segment == ZYDIS_REGISTER_FS)
		la += fs_base;
	else if (mem->mem.segment == ZYDIS_REGISTER_GS)
		la += gs_base;
	out->la = la;
	out->len = mem->size / 8;
	out->write = mem->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE;
	return out->len ? 0 : -ENOENT;
}
