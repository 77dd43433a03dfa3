/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table (stages/lib/pf_neigh.h): an rte_hash with lock-free
 * readers and one writer, entries in an array by hash position. A deleted
 * key keeps its position (RTE_HASH_EXTRA_FLAGS_NO_FREE_ON_DEL) until every
 * worker has passed a quiescent point, so a reader that found it still
 * reads a valid entry. Family-generic: ARP and IPv6 ND share it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "pf_neigh.h"
#include "pf_stage.h"

int
pf_neigh_table_create(struct pf_neigh_table **out, uint32_t size, int socket,
		      struct pf_errs *errs)
{
	static uint32_t seq;
	struct rte_hash_parameters hp = { 0 };
	struct pf_neigh_table *t;
	char name[RTE_HASH_NAMESIZE];

	*out = NULL;
	t = rte_zmalloc_socket("pf_neigh", sizeof(*t), RTE_CACHE_LINE_SIZE, socket);
	if (t == NULL)
		goto nomem;
	snprintf(name, sizeof(name), "pf_neigh%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	hp.name = name;
	hp.entries = size;
	hp.key_len = sizeof(struct pf_neigh_key);
	hp.hash_func = rte_hash_crc;
	hp.socket_id = socket;
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			RTE_HASH_EXTRA_FLAGS_NO_FREE_ON_DEL;
	t->h = rte_hash_create(&hp);
	t->ents = rte_zmalloc_socket("pf_neigh_ents", sizeof(struct pf_neigh) * (size + 1),
				     RTE_CACHE_LINE_SIZE, socket);
	t->dead_pos = rte_zmalloc_socket("pf_neigh_dead", sizeof(int32_t) * (size + 1), 0, socket);
	t->dead_token = rte_zmalloc_socket("pf_neigh_dead", sizeof(uint64_t) * (size + 1), 0,
					   socket);
	t->gw6 = rte_zmalloc_socket("pf_neigh_gw6", sizeof(t->gw6[0]) * PF_NEIGH_GW6_MAX, 0, socket);
	if (t->h == NULL || t->ents == NULL || t->dead_pos == NULL || t->dead_token == NULL ||
	    t->gw6 == NULL)
		goto nomem;
	t->size = size;
	rte_spinlock_init(&t->gw6_lock);
	*out = t;
	return 0;
nomem:
	pf_neigh_table_destroy(t);
	return pf_err_add(errs, NULL, 0, 0,
			  "neighbour table of %u entries: out of memory (raise EAL -m)", size);
}

void
pf_neigh_table_destroy(struct pf_neigh_table *t)
{
	uint32_t i, k;

	if (t == NULL)
		return;
	for (i = 0; t->ents != NULL && i <= t->size; i++)
		for (k = 0; k < t->ents[i].n_held; k++)
			rte_pktmbuf_free(t->ents[i].held[k]);
	rte_hash_free(t->h);
	rte_free(t->ents);
	rte_free(t->dead_pos);
	rte_free(t->dead_token);
	rte_free(t->gw6);
	rte_free(t);
}

struct pf_neigh *
pf_neigh_find(struct pf_neigh_table *t, const struct pf_neigh_key *k)
{
	int32_t pos = rte_hash_lookup(t->h, k);

	return pos < 0 ? NULL : &t->ents[pos];
}

struct pf_neigh *
pf_neigh_add(struct pf_neigh_table *t, const struct pf_neigh_key *k)
{
	struct pf_neigh *n;
	int32_t pos;

	pf_neigh_reclaim(t);
	/* rte_hash may take a few more keys than asked; the cap is ours. */
	if (t->n >= t->size)
		return NULL;
	pos = rte_hash_add_key(t->h, k);
	if (pos < 0)
		return NULL;
	n = &t->ents[pos];
	memset(n, 0, sizeof(*n));
	n->key = *k;
	n->in_use = 1;
	__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELAXED);
	return n;
}

void
pf_neigh_publish(struct pf_neigh *n, uint8_t state, const uint8_t *mac)
{
	uint64_t mac48 = 0;

	if (mac != NULL && mac != n->mac)
		memcpy(n->mac, mac, 6);
	if (state == PF_NEIGH_REACHABLE || state == PF_NEIGH_STALE || state == PF_NEIGH_PROBE ||
	    state == PF_NEIGH_PERMANENT)
		memcpy(&mac48, n->mac, 6);
	n->state = state;
	if (state != PF_NEIGH_STALE)
		__atomic_store_n(&n->used, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->pub, PF_NEIGH_PUB(mac48, state), __ATOMIC_RELEASE);
}

void
pf_neigh_del(struct pf_neigh_table *t, struct pf_neigh *n)
{
	int32_t pos;

	pos = rte_hash_del_key(t->h, &n->key);
	if (pos < 0)
		return;
	__atomic_store_n(&n->pub, 0, __ATOMIC_RELEASE);
	n->in_use = 0;
	n->state = PF_NEIGH_NONE;
	t->dead_pos[t->n_dead] = pos;
	t->dead_token[t->n_dead] = pf_rcu_start();
	t->n_dead++;
	__atomic_store_n(&t->n, t->n - 1, __ATOMIC_RELAXED);
}

void
pf_neigh_reclaim(struct pf_neigh_table *t)
{
	uint32_t i, k = 0;

	for (i = 0; i < t->n_dead; i++) {
		if (pf_rcu_done(t->dead_token[i])) {
			rte_hash_free_key_with_position(t->h, t->dead_pos[i]);
			continue;
		}
		t->dead_pos[k] = t->dead_pos[i];
		t->dead_token[k++] = t->dead_token[i];
	}
	t->n_dead = k;
}

struct pf_neigh *
pf_neigh_at(const struct pf_neigh_table *t, uint32_t i)
{
	if (i > t->size || !t->ents[i].in_use)
		return NULL;
	return &t->ents[i];
}

int
pf_neigh_gw6_id(struct pf_neigh_table *t, const uint8_t a[16])
{
	uint32_t i;
	int id = -ENOSPC;

	if (t == NULL)
		return 0;
	rte_spinlock_lock(&t->gw6_lock);
	for (i = 0; i < t->n_gw6 && memcmp(t->gw6[i], a, 16) != 0; i++)
		;
	if (i < t->n_gw6) {
		id = (int)i;
	} else if (t->n_gw6 < PF_NEIGH_GW6_MAX) {
		memcpy(t->gw6[t->n_gw6], a, 16);
		id = (int)t->n_gw6;
		__atomic_store_n(&t->n_gw6, t->n_gw6 + 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&t->gw6_lock);
	return id;
}

const uint8_t *
pf_neigh_gw6(const struct pf_neigh_table *t, uint32_t id)
{
	if (t == NULL)
		return NULL;
	return id < __atomic_load_n(&t->n_gw6, __ATOMIC_ACQUIRE) ? t->gw6[id] : NULL;
}

const char *
pf_neigh_state_name(uint8_t state)
{
	static const char *const names[PF_NEIGH_STATE_MAX] = {
		"none", "incomplete", "reachable", "stale", "probe", "failed", "permanent",
	};

	return state < PF_NEIGH_STATE_MAX ? names[state] : "?";
}
