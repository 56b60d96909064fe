// SPDX-License-Identifier: GPL-2.0
/*
 * pc.c - the PC platform of Linux guests: in-kernel irqchip and PIT, ACPI power off, i8042
 * reset, the console's IRQ and input, and each vCPU's firmware state.
 *
 * Locking: the devices lock themselves; @uart and @input are set by the main thread before
 * the vCPUs run and cleared after they stopped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/acpi-pm.h"
#include "devices/i8042.h"
#include "devices/tty-input.h"
#include "guest-tasks.h"
#include "kvm.h"
#include "log.h"
#include "pc.h"
#include "uart.h"
#include "vm.h"
#include "x86.h"

struct pc {
	struct vm *vm;
	struct acpi_pm pm;
	struct i8042 kbd;
	struct uart *uart;
	struct tty_input *input;
	uint64_t irq_errors; /* failed KVM_IRQ_LINE calls (counted: the guest drives them) */
};

static void power_off(void *opaque)
{
	struct vm *vm = opaque;

	if (!vm__stop_requested(vm))
		pr_info("the guest powered off");
	vm__request_stop(vm, 0);
}

static void reset(void *opaque)
{
	struct vm *vm = opaque;
	int32_t cpu;

	/* Linux's panic=-1: the panicking CPU resets at once, the panic is reported from there. */
	if (vm->tasks && guest_tasks__panicking(vm->tasks, &cpu) && vm__claim_panic(vm)) {
		unsigned int i = (uint32_t)cpu < vm->nr_vcpus ? (unsigned int)cpu : 0;

		pr_err("vcpu %u: the guest kernel panicked (its panic_cpu is %d), then reset the "
		       "machine", i, (int)cpu);
		vm__post_panic(vm, i);
		vm__request_stop(vm, 1);
		return;
	}
	if (!vm__stop_requested(vm))
		pr_info("the guest reset the machine");
	vm__request_stop(vm, 0);
}

struct pc *pc__create(struct vm *vm)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	uint64_t identity_map = PC_IDENTITY_MAP_GPA;
	int vm_fd = vm->kvm.vm_fd, ret;
	struct pc *pc;

	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->vm = vm;
	/* VMX runs real mode through an identity-mapped page; SVM ignores it. */
	if (kvm__check_extension(&vm->kvm, KVM_CAP_SET_IDENTITY_MAP_ADDR)) {
		ret = kvm__ioctl(vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &identity_map);
		if (ret < 0)
			goto err_free;
	}
	ret = kvm__ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0);
	if (ret < 0)
		goto err_free;
	ret = kvm__ioctl(vm_fd, KVM_CREATE_PIT2, &pit);
	if (ret < 0)
		goto err_free;
	acpi_pm__init(&pc->pm, power_off, vm);
	pc->kbd.reset = reset;
	pc->kbd.opaque = vm;
	ret = acpi_pm__register(&pc->pm, &vm->pio);
	if (!ret)
		ret = i8042__register(&pc->kbd, &vm->pio);
	if (ret < 0) {
		pr_err("PC device set-up: %s", strerror(-ret));
		acpi_pm__fini(&pc->pm);
		goto err_free;
	}
	vm->platform_init_vcpu = pc__init_vcpu;
	return pc;

err_free:
	free(pc);
	errno = -ret;
	return NULL;
}

void pc__destroy(struct pc *pc)
{
	if (!pc)
		return;
	if (pc->irq_errors)
		pr_warn("KVM_IRQ_LINE failed %llu times: console interrupts were lost",
			(unsigned long long)pc->irq_errors);
	acpi_pm__fini(&pc->pm);
	pc->vm->platform_init_vcpu = NULL;
	free(pc);
}

int pc__init_vcpu(int vcpu_fd)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[2];
	} msrs = { .hdr.nmsrs = 1, .e[0].index = X86_MSR_IA32_MISC_ENABLE };
	struct kvm_lapic_state lapic;
	uint32_t lvt;
	int ret;

	ret = kvm__ioctl(vcpu_fd, KVM_GET_MSRS, &msrs);
	if (ret < 0)
		return ret;
	msrs.hdr.nmsrs = 2;
	msrs.e[0].data |= X86_MISC_ENABLE_FAST_STRING;
	msrs.e[1].index = X86_MSR_IA32_MTRR_DEF_TYPE;
	msrs.e[1].data = X86_MTRR_DEF_TYPE_E | X86_MTRR_TYPE_WB;
	ret = kvm__ioctl(vcpu_fd, KVM_SET_MSRS, &msrs);
	if (ret < 0)
		return ret;
	if (ret != 2) {
		pr_err("KVM_SET_MSRS: %d of 2 MSRs set", ret);
		return -EIO;
	}
	/* Virtual-wire mode, as a BIOS leaves the LAPIC: the PIC through LINT0, NMI on LINT1. */
	ret = kvm__ioctl(vcpu_fd, KVM_GET_LAPIC, &lapic);
	if (ret < 0)
		return ret;
	memcpy(&lvt, lapic.regs + X86_APIC_REG_LVT0, sizeof(lvt));
	lvt = (lvt & ~(X86_APIC_DM_MASK | X86_APIC_LVT_MASKED)) | X86_APIC_DM_EXTINT;
	memcpy(lapic.regs + X86_APIC_REG_LVT0, &lvt, sizeof(lvt));
	memcpy(&lvt, lapic.regs + X86_APIC_REG_LVT1, sizeof(lvt));
	lvt = (lvt & ~(X86_APIC_DM_MASK | X86_APIC_LVT_MASKED)) | X86_APIC_DM_NMI;
	memcpy(lapic.regs + X86_APIC_REG_LVT1, &lvt, sizeof(lvt));
	ret = kvm__ioctl(vcpu_fd, KVM_SET_LAPIC, &lapic);
	return ret < 0 ? ret : 0;
}

static void uart_irq(void *opaque, int level)
{
	struct pc *pc = opaque;
	struct kvm_irq_level irq = { .irq = PC_UART_IRQ, .level = level };

	if (kvm__ioctl_quiet(pc->vm->kvm.vm_fd, KVM_IRQ_LINE, &irq) < 0)
		__atomic_add_fetch(&pc->irq_errors, 1, __ATOMIC_RELAXED);
}

static size_t uart_input(void *opaque, const uint8_t *buf, size_t n)
{
	struct pc *pc = opaque;

	return uart__receive(pc->uart, buf, n);
}

int pc__connect_uart(struct pc *pc, struct uart *uart)
{
	pc->uart = uart;
	uart__set_irq(uart, uart_irq, pc);
	pc->input = tty_input__start(STDIN_FILENO, uart_input, pc);
	if (!pc->input && errno != ENOTTY) {
		pr_err("console input: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

void pc__disconnect_uart(struct pc *pc)
{
	if (!pc)
		return;
	tty_input__stop(pc->input);
	pc->input = NULL;
	if (pc->uart)
		uart__set_irq(pc->uart, NULL, NULL);
	pc->uart = NULL;
}
