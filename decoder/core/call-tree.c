// SPDX-License-Identifier: GPL-2.0
/*
 * call-tree.c - call paths as a tree with a hash table of (parent, key) (call-tree.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "call-tree.h"

static size_t slot(const struct call_tree *t, uint32_t parent, uint64_t key)
{
	uint64_t h = (key ^ ((uint64_t)parent * 0xff51afd7ed558ccdULL)) * t->mult;

	return (size_t)(h >> (64 - t->bits));
}

/* The table, twice as large (at most half full afterwards). Returns 0 or -ENOMEM. */
static int grow(struct call_tree *t)
{
	unsigned int bits = t->bits ? t->bits + 1 : 8;
	uint32_t *table = calloc((size_t)1 << bits, sizeof(*table));
	size_t mask = ((size_t)1 << bits) - 1, j;

	if (!table)
		return -ENOMEM;
	if (!t->mult) {
		if (getrandom(&t->mult, sizeof(t->mult), GRND_NONBLOCK) != sizeof(t->mult))
			t->mult = 0x9e3779b97f4a7c15ULL; /* no entropy yet: only predictable */
		t->mult |= 1;
	}
	free(t->table);
	t->table = table;
	t->bits = bits;
	for (size_t i = 0; i < t->nr; i++) {
		for (j = slot(t, t->nodes[i].parent, t->nodes[i].key); table[j];
		     j = (j + 1) & mask)
			;
		table[j] = (uint32_t)i + 1;
	}
	return 0;
}

int64_t call_tree__child(struct call_tree *t, uint32_t parent, uint64_t key, const char *text,
			 size_t text_len)
{
	struct call_tree_node *n;
	size_t mask, i;

	if (!t->bits || 2 * (t->nr + 1) > ((size_t)1 << t->bits)) {
		/* Indexes are 32 bits, CALL_TREE_ROOT excluded. */
		if (t->nr >= UINT32_MAX / 4 || grow(t))
			return -ENOMEM;
	}
	mask = ((size_t)1 << t->bits) - 1;
	for (i = slot(t, parent, key); t->table[i]; i = (i + 1) & mask) {
		n = &t->nodes[t->table[i] - 1];
		if (n->parent == parent && n->key == key)
			return t->table[i] - 1;
	}
	if (t->nr == t->alloc) {
		size_t alloc = t->alloc ? 2 * t->alloc : 256;

		n = realloc(t->nodes, alloc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->nodes = n;
		t->alloc = alloc;
	}
	n = &t->nodes[t->nr];
	*n = (struct call_tree_node){
		.parent = parent, .key = key, .text = text, .text_len = text_len,
	};
	t->table[i] = (uint32_t)++t->nr;
	return (int64_t)t->nr - 1;
}

void call_tree__release(struct call_tree *t)
{
	free(t->nodes);
	free(t->table);
	*t = (struct call_tree){ 0 };
}
