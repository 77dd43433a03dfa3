/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The l2fib key table (layout and lookup in l2fib.h): creating it, adding
 * and deleting keys. Writers are the lcores running the stage (learning,
 * upkeep); with instances they serialise on tb->wlock (as rte_hash's
 * MULTI_WRITER_ADD did), taken only to add a new MAC or delete one; lookups
 * never lock. Order keeps lock-free readers right: an add raises the
 * overflow counts on its way before the key appears, a delete hides the key
 * before it lowers them, so a reader can miss a key being added or deleted
 * but never one that stays in.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "l2fib.h"

#define L2_ENT_CACHED (256u << 10)       /* entry arrays up to this stay cached: no prefetch */

/* Buckets for @p cap keys: at most 80 % full, a power of two. */
static uint32_t
l2_tbl_buckets(uint32_t cap)
{
	uint64_t want = ((uint64_t)cap + cap / 4 + L2_BKT - 1) / L2_BKT;

	return (uint32_t)rte_align64pow2(RTE_MAX(want, 1u));
}

/* The table's data-path fields, copied into each instance's priv. */
void
l2_tbl_view(struct l2_priv *l2, const struct l2_table *tb)
{
	l2->keys = tb->keys;
	l2->ovf = tb->ovf;
	l2->ent = tb->ent;
	l2->n_pos = tb->n_pos;
	l2->bmask = tb->bmask;
	l2->seed = tb->seed;
	l2->mt = tb->mt;
	l2->prefetch_ent = (uint64_t)tb->n_pos * sizeof(*tb->ent) > L2_ENT_CACHED;
}

/* Bytes the table takes for @p cap keys: keys, overflow counts and entries. */
uint64_t
l2_tbl_mem(uint32_t cap)
{
	uint64_t nb = l2_tbl_buckets(cap);

	return nb * L2_BKT * (sizeof(uint64_t) + sizeof(union l2_slot)) + nb * sizeof(uint32_t);
}

int
l2_tbl_create(struct l2_table *tb, uint32_t cap, uint32_t seed, int socket)
{
	uint32_t nb = l2_tbl_buckets(cap);

	tb->n_pos = nb * L2_BKT;
	tb->bmask = nb - 1;
	tb->seed = seed;
	rte_spinlock_init(&tb->wlock);
	tb->keys = rte_malloc_socket("l2fib_keys", (size_t)tb->n_pos * sizeof(*tb->keys),
				     RTE_CACHE_LINE_SIZE, socket);
	tb->ovf = rte_zmalloc_socket("l2fib_ovf", (size_t)nb * sizeof(*tb->ovf),
				     RTE_CACHE_LINE_SIZE, socket);
	tb->ent = rte_zmalloc_socket("l2fib_ent", (size_t)tb->n_pos * sizeof(*tb->ent),
				     RTE_CACHE_LINE_SIZE, socket);
	if (tb->keys == NULL || tb->ovf == NULL || tb->ent == NULL) {
		l2_tbl_destroy(tb);
		return -ENOMEM;
	}
	memset(tb->keys, 0xff, (size_t)tb->n_pos * sizeof(*tb->keys));   /* L2_KEY_FREE */
	return 0;
}

void
l2_tbl_destroy(struct l2_table *tb)
{
	rte_free(tb->keys);
	rte_free(tb->ovf);
	rte_free(tb->ent);
	tb->keys = NULL;
	tb->ovf = NULL;
	tb->ent = NULL;
}

/*
 * Add @p key: its position, the one it already has if it is in, or
 * -ENOSPC if every slot is taken (not reached: the table has 25 % more
 * slots than table_size, which the callers check first).
 */
int32_t
l2_tbl_add(struct l2_priv *l2, uint64_t key)
{
	struct l2_table *tb = l2->tb;
	uint32_t sig = l2_hash_key(key, tb->seed);
	uint32_t home = sig & tb->bmask, b = home, n, m;
	int32_t pos;

	if (tb->mt)
		rte_spinlock_lock(&tb->wlock);
	pos = l2_tbl_find(l2, key, sig);
	if (pos >= 0)
		goto out;
	pos = -ENOSPC;
	for (n = 0; n <= tb->bmask; n++, b = (b + 1) & tb->bmask) {
		m = l2_bkt_match(&tb->keys[(size_t)b * L2_BKT], L2_KEY_FREE);
		if (m != 0) {
			pos = (int32_t)(b * L2_BKT + L2_BKT_SLOT(m));
			break;
		}
	}
	if (pos < 0)
		goto out;
	/* Raise the counts on the way first: a reader that sees the key can reach it. */
	for (b = home; b != (uint32_t)pos / L2_BKT; b = (b + 1) & tb->bmask)
		__atomic_store_n(&tb->ovf[b], tb->ovf[b] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&tb->keys[pos], key, __ATOMIC_RELEASE);
out:
	if (tb->mt)
		rte_spinlock_unlock(&tb->wlock);
	return pos;
}

/*
 * Delete the key at @p pos. @p hold: the position stays taken (L2_KEY_HELD)
 * until l2_tbl_release, because another instance may still hold it from a
 * lookup made before the delete; otherwise it is free at once.
 */
void
l2_tbl_del(struct l2_priv *l2, uint32_t pos, bool hold)
{
	struct l2_table *tb = l2->tb;
	uint64_t key;
	uint32_t b;

	if (tb->mt)
		rte_spinlock_lock(&tb->wlock);
	key = tb->keys[pos];
	if (key >= L2_KEY_HELD)
		goto out;
	__atomic_store_n(&tb->keys[pos], hold ? L2_KEY_HELD : L2_KEY_FREE, __ATOMIC_RELEASE);
	for (b = l2_hash_key(key, tb->seed) & tb->bmask; b != pos / L2_BKT;
	     b = (b + 1) & tb->bmask)
		__atomic_store_n(&tb->ovf[b], tb->ovf[b] - 1, __ATOMIC_RELEASE);
out:
	if (tb->mt)
		rte_spinlock_unlock(&tb->wlock);
}

/* Free a position l2_tbl_del held, once no burst can hold it. */
void
l2_tbl_release(struct l2_priv *l2, uint32_t pos)
{
	struct l2_table *tb = l2->tb;

	if (tb->mt)
		rte_spinlock_lock(&tb->wlock);
	if (tb->keys[pos] == L2_KEY_HELD)
		__atomic_store_n(&tb->keys[pos], L2_KEY_FREE, __ATOMIC_RELEASE);
	if (tb->mt)
		rte_spinlock_unlock(&tb->wlock);
}
