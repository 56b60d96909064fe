// SPDX-License-Identifier: GPL-2.0
/*
 * vm.c - the run's shared state: stop requests, the exit status, waiting for the end.
 *
 * Locking: see vm.h.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "vm.h"

void vm__init(struct vm *vm)
{
	pthread_condattr_t attr;

	memset(vm, 0, sizeof(*vm));
	vm->kvm.sys_fd = -1;
	vm->kvm.vm_fd = -1;
	io_bus__init(&vm->pio, "pio");
	io_bus__init(&vm->mmio, "mmio");
	pthread_mutex_init(&vm->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->cond, &attr);
	pthread_condattr_destroy(&attr);
}

void vm__fini(struct vm *vm)
{
	pthread_cond_destroy(&vm->cond);
	pthread_mutex_destroy(&vm->lock);
}

void vm__request_stop(struct vm *vm, int status)
{
	pthread_mutex_lock(&vm->lock);
	if (!vm->stop_requested) {
		vm->stop_requested = true;
		vm->exit_status = status;
	}
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		if (vm->vcpus && vm->vcpus[i])
			vm->vcpu_ops->stop(vm->vcpus[i]);
}

void vm__post_panic(struct vm *vm, unsigned int index)
{
	vm->vcpu_ops->post_panic(vm->vcpus[index]);
}

bool vm__claim_panic(struct vm *vm)
{
	bool first;

	pthread_mutex_lock(&vm->lock);
	first = !vm->panic_claimed;
	vm->panic_claimed = true;
	pthread_mutex_unlock(&vm->lock);
	return first;
}

bool vm__stop_requested(struct vm *vm)
{
	bool ret;

	pthread_mutex_lock(&vm->lock);
	ret = vm->stop_requested;
	pthread_mutex_unlock(&vm->lock);
	return ret;
}

void vm__vcpu_done(struct vm *vm)
{
	bool last;

	pthread_mutex_lock(&vm->lock);
	if (vm->nr_live)
		vm->nr_live--;
	last = !vm->nr_live;
	pthread_mutex_unlock(&vm->lock);
	if (last)
		vm__request_stop(vm, 0);
}

int vm__wait(struct vm *vm, uint64_t slice_ns)
{
	uint64_t end = clock__now_ns() + slice_ns;
	struct timespec deadline = {
		.tv_sec = end / 1000000000ULL,
		.tv_nsec = end % 1000000000ULL,
	};
	int ret = 0;

	pthread_mutex_lock(&vm->lock);
	while (!vm->stop_requested && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&vm->cond, &vm->lock, &deadline);
	ret = vm->stop_requested ? vm->exit_status : -ETIMEDOUT;
	pthread_mutex_unlock(&vm->lock);
	return ret;
}
