/* SPDX-License-Identifier: GPL-2.0 */
/*
 * step-tests.h - the suites of check-step and the fake guest memory they share.
 */
#ifndef VBTS_TESTS_UNIT_STEP_TESTS_H
#define VBTS_TESTS_UNIT_STEP_TESTS_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "gva.h"

Suite *insn_suite(void);
Suite *gva_suite(void);
Suite *core_suite(void);
Suite *transition_suite(void);

/**
 * struct fake_ram - guest RAM in a test buffer, [0, size).
 */
struct fake_ram {
	uint8_t *buf;
	uint64_t size;
};

/* The bounds-checked accessor, as guest_memory__ptr() behaves. */
static inline void *fake_ram_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	const struct fake_ram *r = ctx;

	if (len == 0 || gpa >= r->size || len > r->size - gpa)
		return NULL;
	return r->buf + gpa;
}

static inline void fake_put64(struct fake_ram *r, uint64_t gpa, uint64_t v)
{
	memcpy(r->buf + gpa, &v, sizeof(v));
}

static inline void fake_put32(struct fake_ram *r, uint64_t gpa, uint32_t v)
{
	memcpy(r->buf + gpa, &v, sizeof(v));
}

#endif /* VBTS_TESTS_UNIT_STEP_TESTS_H */
