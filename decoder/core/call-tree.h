/* SPDX-License-Identifier: GPL-2.0 */
/*
 * call-tree.h - the call paths of a trace as a tree: a node per distinct (parent node, key)
 * pair, found in O(1) expected through a hash table, with a count per node. Keys are opaque
 * 64-bit values (a function's name pointer, a task); the folded-stack exporter keeps the
 * paths of flow.h's stacks in it.
 *
 * The keys come from the trace, so the table's multiplier is drawn at random per tree:
 * whatever the keys, two share a slot with a chance of at most 2 / slots.
 */
#ifndef VBTS_DECODER_CALL_TREE_H
#define VBTS_DECODER_CALL_TREE_H

#include <stddef.h>
#include <stdint.h>

/* The parent of a root node. */
#define CALL_TREE_ROOT UINT32_MAX

/**
 * struct call_tree_node - one node.
 * @parent:   the parent's index, CALL_TREE_ROOT for a root
 * @key:      its key
 * @text:     what the caller keeps with it (a name; not owned)
 * @text_len: its length
 * @count:    the caller's count
 */
struct call_tree_node {
	uint32_t parent;
	uint64_t key;
	const char *text;
	size_t text_len;
	uint64_t count;
};

/**
 * struct call_tree - the nodes, in the order made; zero-initialised is empty.
 * @nodes:  the nodes
 * @nr:     how many
 */
struct call_tree {
	struct call_tree_node *nodes;
	size_t nr, alloc;
	/* private */
	uint32_t *table;        /* 1 + node index, 0: empty */
	unsigned int bits;
	uint64_t mult;
};

/**
 * call_tree__child() - the node of @key under @parent, made when there is none.
 * @t:        tree
 * @parent:   a node's index, or CALL_TREE_ROOT
 * @key:      the key
 * @text:     kept with a node made now
 * @text_len: its length
 *
 * Return: the node's index, or -ENOMEM.
 */
int64_t call_tree__child(struct call_tree *t, uint32_t parent, uint64_t key, const char *text,
			 size_t text_len);

/**
 * call_tree__release() - free the nodes (the tree is empty again).
 * @t: tree
 */
void call_tree__release(struct call_tree *t);

#endif /* VBTS_DECODER_CALL_TREE_H */
