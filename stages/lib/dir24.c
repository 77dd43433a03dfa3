/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental DIR-24-8 updates with readers running (stages/lib/pf_dir24.h).
 *
 * An entry of rte_lpm's tables is 32 bits: next hop (24), valid, valid
 * group, depth (6). A route of length L owns the entries of its range whose
 * depth is at most L; writing it stores {hop, L} there, and removing it
 * stores what its closest covering route has ({hop', L'} or invalid) where
 * the depth is L. Each store is one aligned 32-bit word.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lpm.h>
#include <rte_malloc.h>
#include <rte_rib.h>

#include "pf_dir24.h"
#include "pf_services.h"

#define T8N RTE_LPM_TBL8_GROUP_NUM_ENTRIES
#define HOP_MAX ((1u << 24) - 1)

struct pf_dir24 {
	struct rte_lpm *lpm;
	struct rte_rib *rib;
	uint32_t n_groups;
	uint32_t n_routes;
	uint32_t n_free;
	uint32_t *free_g;                /* free tbl8 groups (a stack) */
	uint32_t n_dead;
	uint32_t *dead_g;                /* folded groups, free after their grace period */
	uint64_t *dead_tok;
	/*
	 * The last prefix looked up and its node (NULL: not there). A caller asks
	 * pf_dir24_get before it adds or deletes: at a million routes each walk
	 * of the trie is some 20 cache misses, most of an update's cost.
	 */
	bool last_ok;
	uint8_t last_len;
	uint32_t last_ip;
	struct rte_rib_node *last;
};

/* An entry as rte_lpm lays it out (little-endian bit-fields). */
static inline uint32_t
ent(uint32_t hop, bool valid, bool group, uint8_t depth)
{
	struct rte_lpm_tbl_entry e = {
		.next_hop = hop, .valid = valid, .valid_group = group, .depth = depth,
	};
	uint32_t v;

	memcpy(&v, &e, 4);
	return v;
}

static inline struct rte_lpm_tbl_entry
ld(const struct rte_lpm_tbl_entry *p)
{
	uint32_t v = __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
	struct rte_lpm_tbl_entry e;

	memcpy(&e, &v, 4);
	return e;
}

static inline void
st(struct rte_lpm_tbl_entry *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, v, __ATOMIC_RELEASE);
}

static inline bool
is_group(struct rte_lpm_tbl_entry e)
{
	return e.valid && e.valid_group;
}

struct pf_dir24 *
pf_dir24_create(struct rte_lpm *lpm, uint32_t first_free, uint32_t n_groups,
		uint32_t max_routes, int socket)
{
	static uint32_t seq;
	struct rte_rib_conf rc = { .ext_sz = 0, .max_nodes = (int)(2 * max_routes + 64) };
	struct pf_dir24 *d = calloc(1, sizeof(*d));
	char name[32];
	uint32_t g;

	if (d == NULL)
		return NULL;
	snprintf(name, sizeof(name), "pf_rib%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	d->lpm = lpm;
	d->n_groups = n_groups;
	d->rib = rte_rib_create(name, socket, &rc);
	d->free_g = malloc(sizeof(uint32_t) * (n_groups + 1));
	d->dead_g = malloc(sizeof(uint32_t) * (n_groups + 1));
	d->dead_tok = malloc(sizeof(uint64_t) * (n_groups + 1));
	if (d->rib == NULL || d->free_g == NULL || d->dead_g == NULL || d->dead_tok == NULL) {
		pf_dir24_free(d);
		return NULL;
	}
	/* Lowest first, as a build hands them out. */
	for (g = n_groups; g-- > first_free;)
		d->free_g[d->n_free++] = g;
	return d;
}

void
pf_dir24_free(struct pf_dir24 *d)
{
	if (d == NULL)
		return;
	rte_rib_free(d->rib);
	free(d->free_g);
	free(d->dead_g);
	free(d->dead_tok);
	free(d);
}

static bool
prefix_ok(uint32_t ip, uint8_t len)
{
	return len >= 1 && len <= 32 && (len == 32 || (ip & (UINT32_MAX >> len)) == 0);
}

/* The node of route @p ip/@p len, or NULL; remembered for the next call. */
static struct rte_rib_node *
find(struct pf_dir24 *d, uint32_t ip, uint8_t len)
{
	if (!d->last_ok || d->last_ip != ip || d->last_len != len) {
		d->last = rte_rib_lookup_exact(d->rib, ip, len);
		d->last_ip = ip;
		d->last_len = len;
		d->last_ok = true;
	}
	return d->last;
}

/* Insert route @p ip/@p len, known not to be there (find said so). */
static struct rte_rib_node *
insert(struct pf_dir24 *d, uint32_t ip, uint8_t len)
{
	struct rte_rib_node *n = rte_rib_insert(d->rib, ip, len);

	d->last_ok = n != NULL;
	d->last = n;
	return n;
}

/* Remove route @p ip/@p len: the trie frees nodes, what find remembered goes. */
static void
remove_route(struct pf_dir24 *d, uint32_t ip, uint8_t len)
{
	rte_rib_remove(d->rib, ip, len);
	d->last_ok = false;
}

int
pf_dir24_note(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t hop)
{
	struct rte_rib_node *n;

	if (!prefix_ok(ip, len) || hop > HOP_MAX)
		return -EINVAL;
	n = find(d, ip, len);
	if (n == NULL) {
		n = insert(d, ip, len);
		if (n == NULL)
			return -ENOSPC;
		d->n_routes++;
	}
	rte_rib_set_nh(n, hop);
	return 0;
}

void
pf_dir24_reclaim(struct pf_dir24 *d)
{
	uint32_t i, k = 0;

	for (i = 0; i < d->n_dead; i++) {
		if (pf_rcu_done(d->dead_tok[i])) {
			d->free_g[d->n_free++] = d->dead_g[i];
			continue;
		}
		d->dead_g[k] = d->dead_g[i];
		d->dead_tok[k++] = d->dead_tok[i];
	}
	d->n_dead = k;
}

/* A free tbl8 group, or -ENOSPC: folded ones come back once their grace period ended. */
static int
group_take(struct pf_dir24 *d)
{
	if (d->n_free == 0)
		pf_dir24_reclaim(d);
	if (d->n_free == 0)
		return -ENOSPC;
	return (int)d->free_g[--d->n_free];
}

/* Entries [from, from + n) of group @p g that a route of depth @p len owns get @p v. */
static void
group_write(struct pf_dir24 *d, uint32_t g, uint32_t from, uint32_t n, uint8_t len, uint32_t v)
{
	struct rte_lpm_tbl_entry *t8 = &d->lpm->tbl8[g * T8N];
	uint32_t j;

	for (j = from; j < from + n; j++) {
		struct rte_lpm_tbl_entry e = ld(&t8[j]);

		if (!e.valid || e.depth <= len)
			st(&t8[j], v);
	}
}

/* Entries of group @p g that route depth @p len had (depth == len) get @p v. */
static void
group_unwrite(struct pf_dir24 *d, uint32_t g, uint32_t from, uint32_t n, uint8_t len,
	      uint32_t v)
{
	struct rte_lpm_tbl_entry *t8 = &d->lpm->tbl8[g * T8N];
	uint32_t j;

	for (j = from; j < from + n; j++) {
		struct rte_lpm_tbl_entry e = ld(&t8[j]);

		if (e.valid && e.depth == len)
			st(&t8[j], v);
	}
}

/*
 * A group whose 256 entries are one route of /24 or shorter (or none) is
 * that route's tbl24 entry again; the group is free after a grace period
 * (a reader may still be inside it).
 */
static void
group_fold(struct pf_dir24 *d, uint32_t i24, uint32_t g)
{
	struct rte_lpm_tbl_entry *t8 = &d->lpm->tbl8[g * T8N], e0 = ld(&t8[0]);
	uint32_t j, v0;

	memcpy(&v0, &e0, 4);
	if (e0.valid && e0.depth > 24)
		return;
	for (j = 1; j < T8N; j++) {
		struct rte_lpm_tbl_entry e = ld(&t8[j]);
		uint32_t v;

		memcpy(&v, &e, 4);
		if (v != v0)
			return;
	}
	st(&d->lpm->tbl24[i24], e0.valid ? ent(e0.next_hop, true, false, e0.depth) : 0);
	d->dead_g[d->n_dead] = g;
	d->dead_tok[d->n_dead++] = pf_rcu_start();
}

/* Write route @p ip/@p len -> @p hop into the tables (group for /25../32 taken by the caller). */
static void
table_write(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t hop, int group)
{
	struct rte_lpm_tbl_entry *t24 = d->lpm->tbl24;
	uint32_t i, first = ip >> 8, v8 = ent(hop, true, true, len);

	if (len <= 24) {
		uint32_t n = 1u << (24 - len), v24 = ent(hop, true, false, len);

		for (i = first; i < first + n; i++) {
			struct rte_lpm_tbl_entry e = ld(&t24[i]);

			if (is_group(e))
				group_write(d, e.next_hop, 0, T8N, len, v8);
			else if (!e.valid || e.depth <= len)
				st(&t24[i], v24);
		}
		return;
	}
	if (group >= 0) {
		struct rte_lpm_tbl_entry e = ld(&t24[first]), *t8 = &d->lpm->tbl8[group * T8N];

		/* The group first holds what the /24 had, then tbl24 points to it. */
		for (i = 0; i < T8N; i++)
			st(&t8[i], e.valid ? ent(e.next_hop, true, true, e.depth) : 0);
		st(&t24[first], ent((uint32_t)group, true, true, 0));
	}
	group_write(d, ld(&t24[first]).next_hop, ip & 0xff, 1u << (32 - len), len, v8);
}

int
pf_dir24_add(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t hop)
{
	struct rte_rib_node *n;
	int group = -1;
	bool fresh = false;

	if (!prefix_ok(ip, len) || hop > HOP_MAX)
		return -EINVAL;
	n = find(d, ip, len);
	if (n == NULL) {
		n = insert(d, ip, len);
		if (n == NULL)
			return -ENOSPC;
		fresh = true;
	}
	if (len > 24 && !is_group(ld(&d->lpm->tbl24[ip >> 8]))) {
		group = group_take(d);
		if (group < 0) {
			if (fresh)
				remove_route(d, ip, len);
			return -ENOSPC;
		}
	}
	d->n_routes += fresh;
	rte_rib_set_nh(n, hop);
	table_write(d, ip, len, hop, group);
	return 0;
}

int
pf_dir24_del(struct pf_dir24 *d, uint32_t ip, uint8_t len)
{
	struct rte_lpm_tbl_entry *t24 = d->lpm->tbl24;
	struct rte_rib_node *n, *p;
	uint32_t i, first = ip >> 8, v24 = 0, v8 = 0;
	uint64_t phop;
	uint8_t plen;

	if (!prefix_ok(ip, len))
		return -EINVAL;
	n = find(d, ip, len);
	if (n == NULL)
		return -ENOENT;
	/* What covers the prefix once it is gone: its entries become that. */
	p = rte_rib_lookup_parent(n);
	if (p != NULL && rte_rib_get_nh(p, &phop) == 0 && rte_rib_get_depth(p, &plen) == 0) {
		v24 = ent((uint32_t)phop, true, false, plen);
		v8 = ent((uint32_t)phop, true, true, plen);
	}
	remove_route(d, ip, len);
	d->n_routes--;
	if (len <= 24) {
		for (i = first; i < first + (1u << (24 - len)); i++) {
			struct rte_lpm_tbl_entry e = ld(&t24[i]);

			if (is_group(e)) {
				group_unwrite(d, e.next_hop, 0, T8N, len, v8);
				group_fold(d, i, e.next_hop);
			} else if (e.valid && e.depth == len) {
				st(&t24[i], v24);
			}
		}
		return 0;
	}
	{
		struct rte_lpm_tbl_entry e = ld(&t24[first]);

		if (!is_group(e))
			return 0;   /* cannot be: a /25../32 lives in a group */
		group_unwrite(d, e.next_hop, ip & 0xff, 1u << (32 - len), len, v8);
		group_fold(d, first, e.next_hop);
	}
	return 0;
}

int
pf_dir24_get(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t *hop)
{
	struct rte_rib_node *n = find(d, ip, len);
	uint64_t h;

	if (n == NULL || rte_rib_get_nh(n, &h) != 0)
		return -ENOENT;
	*hop = (uint32_t)h;
	return 0;
}

uint32_t
pf_dir24_each_hop(struct pf_dir24 *d, uint32_t hop,
		  void (*fn)(void *arg, uint32_t ip, uint8_t len), void *arg)
{
	struct rte_rib_node *n = NULL;
	uint32_t count = 0, ip;
	uint64_t h;
	uint8_t len;

	while ((n = rte_rib_get_nxt(d->rib, 0, 0, n, RTE_RIB_GET_NXT_ALL)) != NULL) {
		if (rte_rib_get_nh(n, &h) != 0 || h != hop)
			continue;
		rte_rib_get_ip(n, &ip);
		rte_rib_get_depth(n, &len);
		fn(arg, ip, len);
		count++;
	}
	return count;
}

void
pf_dir24_reserve(struct pf_dir24 *d, uint32_t used)
{
	uint32_t g;

	d->n_free = 0;
	d->n_dead = 0;
	for (g = d->n_groups; g-- > used;)
		d->free_g[d->n_free++] = g;
}

void
pf_dir24_walk(struct pf_dir24 *d, void (*fn)(void *arg, uint32_t ip, uint8_t len, uint32_t hop),
	      void *arg)
{
	struct rte_rib_node *n = NULL;
	uint32_t ip;
	uint64_t h;
	uint8_t len;

	while ((n = rte_rib_get_nxt(d->rib, 0, 0, n, RTE_RIB_GET_NXT_ALL)) != NULL) {
		if (rte_rib_get_nh(n, &h) != 0)
			continue;
		rte_rib_get_ip(n, &ip);
		rte_rib_get_depth(n, &len);
		fn(arg, ip, len, (uint32_t)h);
	}
}

uint32_t
pf_dir24_routes(const struct pf_dir24 *d)
{
	return d->n_routes;
}

uint32_t
pf_dir24_groups_used(const struct pf_dir24 *d)
{
	return d->n_groups - d->n_free;
}
