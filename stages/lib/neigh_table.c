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

static struct pf_neigh_table table;

struct pf_neigh_table *
pf_neigh_table(void)
{
	return &table;
}

int
pf_neigh_table_create(uint32_t size, int socket, struct pf_errs *errs)
{
	static uint32_t seq;
	struct rte_hash_parameters hp = { 0 };
	struct rte_hash *h;
	char name[RTE_HASH_NAMESIZE];

	if (table.h != NULL)
		return -EEXIST;
	snprintf(name, sizeof(name), "pf_neigh%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	hp.name = name;
	hp.entries = size;
	hp.key_len = sizeof(struct pf_neigh_key);
	hp.hash_func = rte_hash_crc;
	hp.socket_id = socket;
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			RTE_HASH_EXTRA_FLAGS_NO_FREE_ON_DEL;
	h = rte_hash_create(&hp);
	table.ents = rte_zmalloc_socket("pf_neigh_ents", sizeof(struct pf_neigh) * (size + 1),
					RTE_CACHE_LINE_SIZE, socket);
	table.dead_pos = rte_zmalloc_socket("pf_neigh_dead", sizeof(int32_t) * (size + 1), 0,
					    socket);
	table.dead_token = rte_zmalloc_socket("pf_neigh_dead", sizeof(uint64_t) * (size + 1), 0,
					      socket);
	if (h == NULL || table.ents == NULL || table.dead_pos == NULL ||
	    table.dead_token == NULL) {
		rte_hash_free(h);
		rte_free(table.ents);
		rte_free(table.dead_pos);
		rte_free(table.dead_token);
		memset(&table, 0, sizeof(table));
		return pf_err_add(errs, NULL, 0, 0,
				  "neighbour table of %u entries: out of memory (raise EAL -m)", size);
	}
	table.size = size;
	table.n = 0;
	table.n_dead = 0;
	__atomic_store_n(&table.h, h, __ATOMIC_RELEASE);
	return 0;
}

void
pf_neigh_table_destroy(void)
{
	uint32_t i, k;

	if (table.h == NULL)
		return;
	for (i = 0; i <= table.size; i++)
		for (k = 0; k < table.ents[i].n_held; k++)
			rte_pktmbuf_free(table.ents[i].held[k]);
	rte_hash_free(table.h);
	rte_free(table.ents);
	rte_free(table.dead_pos);
	rte_free(table.dead_token);
	memset(&table, 0, sizeof(table));
}

struct pf_neigh *
pf_neigh_find(const struct pf_neigh_key *k)
{
	int32_t pos;

	if (table.h == NULL)
		return NULL;
	pos = rte_hash_lookup(table.h, k);
	return pos < 0 ? NULL : &table.ents[pos];
}

struct pf_neigh *
pf_neigh_add(const struct pf_neigh_key *k)
{
	struct pf_neigh *n;
	int32_t pos;

	if (table.h == NULL)
		return NULL;
	pf_neigh_reclaim();
	/* rte_hash may take a few more keys than asked; the cap is ours. */
	if (table.n >= table.size)
		return NULL;
	pos = rte_hash_add_key(table.h, k);
	if (pos < 0)
		return NULL;
	n = &table.ents[pos];
	memset(n, 0, sizeof(*n));
	n->key = *k;
	n->in_use = 1;
	__atomic_store_n(&table.n, table.n + 1, __ATOMIC_RELAXED);
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
pf_neigh_del(struct pf_neigh *n)
{
	int32_t pos;

	pos = rte_hash_del_key(table.h, &n->key);
	if (pos < 0)
		return;
	__atomic_store_n(&n->pub, 0, __ATOMIC_RELEASE);
	n->in_use = 0;
	n->state = PF_NEIGH_NONE;
	table.dead_pos[table.n_dead] = pos;
	table.dead_token[table.n_dead] = pf_rcu_start();
	table.n_dead++;
	__atomic_store_n(&table.n, table.n - 1, __ATOMIC_RELAXED);
}

void
pf_neigh_reclaim(void)
{
	uint32_t i, k = 0;

	for (i = 0; i < table.n_dead; i++) {
		if (pf_rcu_done(table.dead_token[i])) {
			rte_hash_free_key_with_position(table.h, table.dead_pos[i]);
			continue;
		}
		table.dead_pos[k] = table.dead_pos[i];
		table.dead_token[k++] = table.dead_token[i];
	}
	table.n_dead = k;
}

struct pf_neigh *
pf_neigh_at(uint32_t i)
{
	if (table.h == NULL || i > table.size || !table.ents[i].in_use)
		return NULL;
	return &table.ents[i];
}

/* IPv6 gateways by id: append-only, written under a lock, read without one. */
static uint8_t gw6[PF_NEIGH_GW6_MAX][16];
static uint32_t n_gw6;
static rte_spinlock_t gw6_lock = RTE_SPINLOCK_INITIALIZER;

int
pf_neigh_gw6_id(const uint8_t a[16])
{
	uint32_t i;
	int id = -ENOSPC;

	rte_spinlock_lock(&gw6_lock);
	for (i = 0; i < n_gw6 && memcmp(gw6[i], a, 16) != 0; i++)
		;
	if (i < n_gw6) {
		id = (int)i;
	} else if (n_gw6 < PF_NEIGH_GW6_MAX) {
		memcpy(gw6[n_gw6], a, 16);
		id = (int)n_gw6;
		__atomic_store_n(&n_gw6, n_gw6 + 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&gw6_lock);
	return id;
}

const uint8_t *
pf_neigh_gw6(uint32_t id)
{
	return id < __atomic_load_n(&n_gw6, __ATOMIC_ACQUIRE) ? gw6[id] : NULL;
}

const char *
pf_neigh_state_name(uint8_t state)
{
	static const char *const names[PF_NEIGH_STATE_MAX] = {
		"none", "incomplete", "reachable", "stale", "probe", "failed", "permanent",
	};

	return state < PF_NEIGH_STATE_MAX ? names[state] : "?";
}
