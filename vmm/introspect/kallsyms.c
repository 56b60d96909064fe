// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms.c - a Linux kernel's symbols from the kallsyms tables of its vmlinux, located by the
 * addresses of its vmcoreinfo (see kallsyms.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elfsec.h"
#include "errmsg.h"
#include "kallsyms.h"
#include "ksyms.h"

/* Lowest kernel address: a table below it is not the kernel's. */
#define KERNEL_SPACE 0xffff800000000000ULL

static const char *const table_names[KALLSYMS_TABLES] = {
	[KALLSYMS_NAMES] = "kallsyms_names",
	[KALLSYMS_NUM_SYMS] = "kallsyms_num_syms",
	[KALLSYMS_TOKEN_TABLE] = "kallsyms_token_table",
	[KALLSYMS_TOKEN_INDEX] = "kallsyms_token_index",
	[KALLSYMS_OFFSETS] = "kallsyms_offsets",
	[KALLSYMS_RELATIVE_BASE] = "kallsyms_relative_base",
};

/* Exported functions whose __ksymtab address the decoded tables must give. */
static const char *const check_names[] = { "panic", "_printk", "schedule", "kfree" };
#define NR_CHECK (sizeof(check_names) / sizeof(check_names[0]))

static int parse_hex(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!len || len > 16)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -EINVAL;
		x = x << 4 | d;
	}
	*v = x;
	return 0;
}

int kallsyms__parse_vmcoreinfo(const char *text, size_t len, struct kallsyms_where *out)
{
	bool seen[KALLSYMS_TABLES] = { false };
	const char *p = text, *end;
	size_t i;

	if (len > KALLSYMS_VMCOREINFO_MAX)
		len = KALLSYMS_VMCOREINFO_MAX;
	end = memchr(text, '\0', len);
	if (!end)
		end = text + len;
	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		for (i = 0; i < KALLSYMS_TABLES; i++) {
			size_t n = strlen(table_names[i]);

			/* SYMBOL(<name>)=<hex> */
			if ((size_t)(eol - p) < 7 + n + 2 || memcmp(p, "SYMBOL(", 7) ||
			    memcmp(p + 7, table_names[i], n) || memcmp(p + 7 + n, ")=", 2))
				continue;
			if (seen[i] || parse_hex(p + 9 + n, (size_t)(eol - p) - 9 - n,
						 &out->addr[i]) ||
			    out->addr[i] < KERNEL_SPACE)
				return -EINVAL;
			seen[i] = true;
		}
		p = eol + (nl ? 1 : 0);
	}
	for (i = 0; i < KALLSYMS_TABLES; i++)
		if (!seen[i])
			return -ENOENT;
	return 0;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The vmlinux: its allocated sections with file contents hold the tables (elfsec.h). */
struct image {
	const uint8_t *elf;
	size_t size;
};

/* The file's @len bytes at link-time address @va, all in one section, or NULL. */
static const uint8_t *image_range(const struct image *im, uint64_t va, uint64_t len)
{
	return elfsec__at(im->elf, im->size, va, len);
}

/*
 * The file's bytes at @va, and in @avail how many follow in the same section (found by
 * bisection: elfsec__at() holds for every length up to it); NULL when @va is in none.
 */
static const uint8_t *image_at(const struct image *im, uint64_t va, uint64_t *avail)
{
	const uint8_t *p = image_range(im, va, 1);
	uint64_t lo = 1, hi = im->size;

	if (!p)
		return NULL;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (image_range(im, va, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	*avail = lo;
	return p;
}

static bool name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$'))
			return false;
	}
	return true;
}

/* One decoded symbol: its name in the names buffer, its offset entry. */
struct sym {
	uint32_t name;
	uint16_t len;
	char type;
	int32_t offset;
};

struct tables {
	const uint8_t *names, *tokens, *offsets;
	uint64_t names_avail, tokens_avail;
	uint16_t index[256];
	uint32_t nr;
	uint64_t base;
};

static uint64_t sym_addr(const struct tables *t, int32_t off, bool abs_percpu)
{
	if (!abs_percpu)
		return t->base + (uint32_t)off;
	if (off >= 0)
		return (uint64_t)off;
	return t->base - 1 - (uint64_t)(int64_t)off;
}

static int find_tables(const struct image *im, const struct kallsyms_where *w, uint64_t slide,
		       struct tables *t, char *err, size_t errlen)
{
	uint64_t va[KALLSYMS_TABLES];
	const uint8_t *p;
	unsigned int i;

	for (i = 0; i < KALLSYMS_TABLES; i++) {
		va[i] = w->addr[i] - slide;
		if (w->addr[i] < slide || va[i] < KERNEL_SPACE) {
			errmsg__set(err, errlen, "%s is not in the kernel image", table_names[i]);
			return -EINVAL;
		}
	}
	p = image_range(im, va[KALLSYMS_NUM_SYMS], 4);
	if (!p)
		goto outside;
	t->nr = rd32(p);
	if (!t->nr || t->nr > KALLSYMS_MAX_SYMS) {
		errmsg__set(err, errlen, "kallsyms_num_syms is %" PRIu32 ", at most %u accepted", t->nr,
		    KALLSYMS_MAX_SYMS);
		return -EINVAL;
	}
	p = image_range(im, va[KALLSYMS_RELATIVE_BASE], 8);
	if (!p)
		goto outside;
	t->base = rd64(p);
	t->offsets = image_range(im, va[KALLSYMS_OFFSETS], (uint64_t)t->nr * 4);
	p = image_range(im, va[KALLSYMS_TOKEN_INDEX], sizeof(t->index));
	t->tokens = image_at(im, va[KALLSYMS_TOKEN_TABLE], &t->tokens_avail);
	t->names = image_at(im, va[KALLSYMS_NAMES], &t->names_avail);
	if (!t->offsets || !p || !t->tokens || !t->names)
		goto outside;
	for (i = 0; i < 256; i++) {
		t->index[i] = rd16(p + 2 * i);
		if (t->index[i] >= t->tokens_avail ||
		    !memchr(t->tokens + t->index[i], '\0', t->tokens_avail - t->index[i])) {
			errmsg__set(err, errlen, "kallsyms token %u lies outside the kernel image", i);
			return -EINVAL;
		}
	}
	return 0;

outside:
	errmsg__set(err, errlen, "a kallsyms table lies outside the kernel image's data");
	return -EINVAL;
}

/* Expands every name into @buf (NUL-separated), the symbols into @syms. */
static int expand(const struct tables *t, char **buf_out, struct sym **syms_out, char *err,
		  size_t errlen)
{
	size_t cap = (size_t)t->nr * 24, used = 0;
	char *buf = malloc(cap), name[KALLSYMS_NAME_MAX + 2];
	struct sym *syms = calloc(t->nr, sizeof(*syms));
	uint64_t pos = 0;
	uint32_t i;

	if (!buf || !syms)
		goto nomem;
	for (i = 0; i < t->nr; i++) {
		size_t len, n = 0, j;

		if (pos >= t->names_avail)
			goto bad;
		len = t->names[pos++];
		if (len & 0x80) {
			if (pos >= t->names_avail)
				goto bad;
			len = (len & 0x7f) | ((size_t)t->names[pos++] << 7);
		}
		if (!len || len > t->names_avail - pos)
			goto bad;
		for (j = 0; j < len; j++) {
			const char *tok = (const char *)t->tokens + t->index[t->names[pos + j]];
			size_t tl = strlen(tok);	/* NUL-terminated: find_tables() */

			if (tl > sizeof(name) - 1 - n)
				goto bad;
			memcpy(name + n, tok, tl);
			n += tl;
		}
		pos += len;
		if (n < 2)
			goto bad;
		if (used + n > cap) {
			char *nb;

			cap = cap * 2 + n;
			nb = realloc(buf, cap);
			if (!nb)
				goto nomem;
			buf = nb;
		}
		syms[i].type = name[0];
		syms[i].name = (uint32_t)used;
		syms[i].len = (uint16_t)(n - 1);
		syms[i].offset = (int32_t)rd32(t->offsets + 4 * (uint64_t)i);
		memcpy(buf + used, name + 1, n - 1);
		used += n - 1;
		if (used > UINT32_MAX - sizeof(name))
			goto bad;
	}
	*buf_out = buf;
	*syms_out = syms;
	return 0;

bad:
	errmsg__set(err, errlen, "kallsyms_names is malformed at symbol %" PRIu32, i);
	free(buf);
	free(syms);
	return -EINVAL;
nomem:
	free(buf);
	free(syms);
	return -ENOMEM;
}

/*
 * Whether the symbols, read with @abs_percpu, give each exported function of check_names the
 * address __ksymtab does (at least one must be exported).
 */
static bool agrees(const struct tables *t, const char *buf, const struct sym *syms,
		   const struct ksym_want *want, bool abs_percpu)
{
	unsigned int c, matched = 0;
	uint32_t i;

	for (c = 0; c < NR_CHECK; c++) {
		size_t n = strlen(check_names[c]);
		bool found = false;

		if (!want[c].found)
			continue;
		for (i = 0; i < t->nr && !found; i++)
			found = syms[i].len == n && (syms[i].type == 'T' || syms[i].type == 't') &&
				!memcmp(buf + syms[i].name, check_names[c], n) &&
				sym_addr(t, syms[i].offset, abs_percpu) == want[c].addr;
		if (!found)
			return false;
		matched++;
	}
	return matched > 0;
}

int kallsyms__write_map(const uint8_t *elf, size_t size, const struct kallsyms_where *where,
			uint64_t slide, FILE *out, size_t *nr, char *err, size_t errlen)
{
	struct ksym_want want[NR_CHECK];
	struct tables t = { 0 };
	struct image im;
	struct sym *syms = NULL;
	char *buf = NULL;
	size_t written = 0;
	bool abs_percpu;
	unsigned int c;
	uint32_t i;
	int ret;

	if (nr)
		*nr = 0;
	im.elf = elf;
	im.size = size;
	if (size < 64 || memcmp(elf, "\177ELF", 4)) {
		errmsg__set(err, errlen, "the kernel image is not an ELF file");
		return -ENOEXEC;
	}
	ret = find_tables(&im, where, slide, &t, err, errlen);
	if (ret)
		return ret;
	for (c = 0; c < NR_CHECK; c++)
		want[c] = (struct ksym_want){ .name = check_names[c] };
	if (ksyms__from_ksymtab(elf, size, want, NR_CHECK, NULL) < 0) {
		errmsg__set(err, errlen, "the kernel image has no exported-symbol table to check against");
		return -EINVAL;
	}
	ret = expand(&t, &buf, &syms, err, errlen);
	if (ret)
		return ret;
	if (agrees(&t, buf, syms, want, false)) {
		abs_percpu = false;
	} else if (agrees(&t, buf, syms, want, true)) {
		abs_percpu = true;
	} else {
		errmsg__set(err, errlen, "the kallsyms tables do not give the exported functions their "
			"addresses");
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < t.nr; i++) {
		const char *name = buf + syms[i].name;
		char type = syms[i].type;

		if (!((type >= 'a' && type <= 'z') || (type >= 'A' && type <= 'Z')) ||
		    !name_ok(name, syms[i].len))
			continue;
		if (fprintf(out, "%016" PRIx64 " %c %.*s\n",
			    sym_addr(&t, syms[i].offset, abs_percpu), type, (int)syms[i].len,
			    name) < 0) {
			ret = -EIO;
			goto out;
		}
		written++;
	}
	if (nr)
		*nr = written;
out:
	free(buf);
	free(syms);
	return ret;
}
