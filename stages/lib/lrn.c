/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Learnt routes' store (stages/lib/pf_lrn.h): per prefix each source's
 * target, the next hops and ECMP groups they share. Control thread only; the
 * data path reads what the family's table writer publishes and the groups'
 * buckets (one 32-bit store each).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "pf_conf.h"
#include "pf_err.h"
#include "pf_ip6.h"
#include "pf_log.h"
#include "pf_lrn.h"
#include "pf_services.h"
#include "pf_stage.h"
#include "pf_stage_obs.h"

struct lrn_key {
	uint8_t prefix[16];
	uint8_t len;
	uint8_t pad[3];
};

struct lrn_route {
	uint32_t tgt[PF_ROUTE_SRC_MAX];   /* per source: target code, PF_LRN_NONE */
	struct lrn_key k;
	uint8_t installed;                /* its winner is in the table */
};

struct lrn_nhkey {
	uint8_t gw[16];
	uint16_t port;
	uint16_t pad;
};

struct lrn_grpkey {
	uint32_t n;
	uint32_t id[PF_ROUTE_NH_MAX];     /* sorted; unused slots zero */
	uint16_t w[PF_ROUTE_NH_MAX];
};

struct pf_lrn {
	struct pf_lrn_conf conf;
	struct rte_hash *routes;          /* lrn_key -> position in r[] */
	struct lrn_route *r;
	struct rte_hash *nhs;             /* lrn_nhkey -> id */
	struct rte_hash *grps;            /* lrn_grpkey -> id */
	struct pf_lrn_obj *obj;           /* by id */
	uint32_t *free_id, n_free_id, *dead_id, n_dead_id;
	uint64_t *dead_id_tok;
	uint64_t *leave_tok;              /* by id: a leaving next hop's grace period */
	struct pf_lrn_group *groups;
	uint32_t *free_grp, n_free_grp, *dead_grp, n_dead_grp;
	uint64_t *dead_grp_tok;
	uint32_t port_down;
	uint64_t upkeep_ns;               /* the stage's next upkeep (pf_lrn_due) */
	/* gauges, read relaxed */
	uint64_t n_routes, n_installed, n_groups, n_nhs, batches, ops;
	uint64_t src_routes[PF_ROUTE_SRC_MAX];
};

/* ---- configuration ------------------------------------------------------------------- */

int
pf_lrn_parse(const struct pf_stage_conf *sc, uint8_t af, struct pf_lrn_conf *c,
	     struct pf_errs *errs)
{
	static const char *const keys[] = { "routes", "nexthops", "groups", "tbl8", NULL };
	const struct pf_node *n = pf_map_get(sc->node, "learnt"), *v;
	char path[PF_CONF_PATH_MAX];
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->af = af;
	if (n == NULL)
		return 0;
	snprintf(path, sizeof(path), "stages.%s.learnt", sc->name);
	if (pf_node_expect(n, PF_NODE_MAP, path, errs) < 0 ||
	    pf_map_check_keys(n, path, keys, errs) < 0)
		return -EINVAL;
	c->routes = 1u << 20;
	c->nexthops = 4096;
	c->groups = 1024;
	c->tbl8 = af == 4 ? 4096 : 65536;
#define LRN_KEY(k, lo, hi) do {							\
	v = pf_map_get(n, #k);							\
	if (v != NULL && pf_node_u32(v, path, lo, hi, &c->k, errs) < 0)	\
		rc = -EINVAL;							\
} while (0)
	LRN_KEY(routes, 1, 16u << 20);
	LRN_KEY(nexthops, 16, 1u << 20);
	LRN_KEY(groups, 1, 1u << 16);
	/* rte_lpm6 takes at most 2^21 groups, configured ones included. */
	LRN_KEY(tbl8, 1, af == 4 ? 1u << 16 : 1u << 20);
#undef LRN_KEY
	if (c->groups >= c->nexthops)
		rc = pf_node_err(errs, n, "%s: groups (%u) must be fewer than nexthops (%u): a group "
				 "takes a next-hop id", path, c->groups, c->nexthops);
	return rc;
}

/* ---- ids ------------------------------------------------------------------------ */

static void
reclaim(uint32_t *dead, uint64_t *tok, uint32_t *n_dead, uint32_t *free_, uint32_t *n_free)
{
	uint32_t i, k = 0;

	for (i = 0; i < *n_dead; i++) {
		if (pf_rcu_done(tok[i])) {
			free_[(*n_free)++] = dead[i];
			continue;
		}
		dead[k] = dead[i];
		tok[k++] = tok[i];
	}
	*n_dead = k;
}

static int64_t
id_take(struct pf_lrn *l)
{
	if (l->n_free_id == 0)
		reclaim(l->dead_id, l->dead_id_tok, &l->n_dead_id, l->free_id, &l->n_free_id);
	if (l->n_free_id == 0)
		return -ENOSPC;
	return l->free_id[--l->n_free_id];
}

/* Nothing refers to @p id any more: reused after a grace period (a burst may still hold it). */
static void
id_put(struct pf_lrn *l, uint32_t id)
{
	l->obj[id].kind = PF_LRN_FREE;
	l->dead_id[l->n_dead_id] = id;
	l->dead_id_tok[l->n_dead_id++] = pf_rcu_start();
}

/* ---- next hops and groups ----------------------------------------------------------- */

static void ref_put(struct pf_lrn *l, uint32_t code);

static int64_t
nh_get(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl, const uint8_t *gw, uint16_t port)
{
	struct lrn_nhkey k = { .port = port };
	struct pf_lrn_obj *o;
	void *data;
	int64_t id;

	memcpy(k.gw, gw, 16);
	if (rte_hash_lookup_data(l->nhs, &k, &data) >= 0) {
		id = (int64_t)(uintptr_t)data;
		l->obj[id].refs++;
		return id;
	}
	id = id_take(l);
	if (id < 0)
		return id;
	if (rte_hash_add_key_data(l->nhs, &k, (void *)(uintptr_t)id) < 0) {
		id_put(l, (uint32_t)id);
		return -ENOSPC;
	}
	o = &l->obj[id];
	memset(o, 0, sizeof(*o));
	o->kind = PF_LRN_NH;
	o->refs = 1;
	o->port = port;
	memcpy(o->gw, gw, 16);
	/* Resolved already? Then its routes take the fast path from the start. */
	o->resolved = fo->resolve(tbl, o, o->mac);
	fo->entry(tbl, (uint32_t)id, o);
	l->n_nhs++;
	return id;
}

/* Bucket b's member with every member up: by cumulative weight. */
static void
group_assign(struct pf_lrn_obj *g)
{
	uint32_t b, i, total = 0, acc;

	for (i = 0; i < g->n_members; i++)
		total += g->weight[i];
	for (b = 0; b < PF_LRN_BUCKETS; b++) {
		uint32_t at = (uint32_t)(((uint64_t)b * total) / PF_LRN_BUCKETS);

		for (i = 0, acc = 0; i + 1 < g->n_members && at >= acc + g->weight[i]; i++)
			acc += g->weight[i];
		g->assign[b] = g->member[i];
	}
}

/* Group @p g's buckets from its assignment, a member on a down port replaced by a live one. */
static void
group_write(const struct pf_lrn *l, const struct pf_lrn_obj *g)
{
	struct pf_lrn_group *grp = &l->groups[g->group];
	uint32_t live[PF_ROUTE_NH_MAX], n_live = 0, b, i;

	for (i = 0; i < g->n_members; i++)
		if (!(l->port_down & (1u << l->obj[g->member[i]].port)))
			live[n_live++] = g->member[i];
	for (b = 0; b < PF_LRN_BUCKETS; b++) {
		uint32_t id = g->assign[b];

		if (n_live != 0 && (l->port_down & (1u << l->obj[id].port)))
			id = live[b % n_live];
		__atomic_store_n(&grp->bucket[b], id, __ATOMIC_RELEASE);
	}
}

static int64_t
group_get(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl, const struct pf_route_op *op)
{
	struct lrn_grpkey k;
	struct pf_lrn_obj *g;
	void *data;
	int64_t id, m;
	uint32_t i, j;

	memset(&k, 0, sizeof(k));
	for (i = 0; i < op->n_nh; i++) {
		uint8_t gw[16] = { 0 };

		memcpy(gw, op->nh[i].gw, l->conf.af == 4 ? 4 : 16);
		m = nh_get(l, fo, tbl, gw, op->nh[i].port);
		if (m < 0) {
			while (k.n > 0)
				ref_put(l, k.id[--k.n]);
			return m;
		}
		/* Sorted by id: the same set is the same group whatever the order. */
		for (j = k.n; j > 0 && k.id[j - 1] > (uint32_t)m; j--) {
			k.id[j] = k.id[j - 1];
			k.w[j] = k.w[j - 1];
		}
		k.id[j] = (uint32_t)m;
		k.w[j] = (uint16_t)RTE_MAX(op->nh[i].weight, 1);
		k.n++;
	}
	if (rte_hash_lookup_data(l->grps, &k, &data) >= 0) {
		for (i = 0; i < k.n; i++)
			ref_put(l, k.id[i]);   /* the group holds its members already */
		id = (int64_t)(uintptr_t)data;
		l->obj[id].refs++;
		return id;
	}
	if (l->n_free_grp == 0)
		reclaim(l->dead_grp, l->dead_grp_tok, &l->n_dead_grp, l->free_grp, &l->n_free_grp);
	id = l->n_free_grp != 0 ? id_take(l) : -ENOSPC;
	if (id < 0 || rte_hash_add_key_data(l->grps, &k, (void *)(uintptr_t)id) < 0) {
		if (id >= 0)
			id_put(l, (uint32_t)id);
		for (i = 0; i < k.n; i++)
			ref_put(l, k.id[i]);
		return -ENOSPC;
	}
	g = &l->obj[id];
	memset(g, 0, sizeof(*g));
	g->kind = PF_LRN_GROUP;
	g->refs = 1;
	g->n_members = k.n;
	memcpy(g->member, k.id, sizeof(k.id));
	memcpy(g->weight, k.w, sizeof(k.w));
	g->group = l->free_grp[--l->n_free_grp];
	group_assign(g);
	/* Buckets first, then the entry that leads to them. */
	group_write(l, g);
	fo->entry(tbl, (uint32_t)id, g);
	l->n_groups++;
	return id;
}

static void
ref_put(struct pf_lrn *l, uint32_t code)
{
	struct pf_lrn_obj *o;
	uint32_t i;

	if (code == PF_LRN_NONE || (code & PF_LRN_CONN) || code < PF_LRN_FIRST)
		return;
	o = &l->obj[code];
	if (--o->refs != 0)
		return;
	if (o->kind == PF_LRN_NH) {
		struct lrn_nhkey k = { .port = o->port };

		memcpy(k.gw, o->gw, 16);
		rte_hash_del_key(l->nhs, &k);
		l->n_nhs--;
	} else if (o->kind == PF_LRN_GROUP) {
		struct lrn_grpkey k;

		memset(&k, 0, sizeof(k));
		k.n = o->n_members;
		memcpy(k.id, o->member, sizeof(k.id));
		memcpy(k.w, o->weight, sizeof(k.w));
		rte_hash_del_key(l->grps, &k);
		l->dead_grp[l->n_dead_grp] = o->group;
		l->dead_grp_tok[l->n_dead_grp++] = pf_rcu_start();
		l->n_groups--;
		for (i = 0; i < k.n; i++)
			ref_put(l, k.id[i]);
	}
	id_put(l, code);
}

static int64_t
target_get(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl,
	   const struct pf_stage_env *env, const struct pf_route_op *op)
{
	static const uint8_t zero[16];
	uint32_t alen = l->conf.af == 4 ? 4 : 16, i;
	uint8_t gw[16] = { 0 };

	switch (op->kind) {
	case PF_ROUTE_BLACKHOLE:
		return PF_LRN_BLACKHOLE;
	case PF_ROUTE_UNREACHABLE:
		return PF_LRN_UNREACH;
	case PF_ROUTE_PROHIBIT:
		return PF_LRN_PROHIBIT;
	case PF_ROUTE_UNICAST:
		break;
	default:
		return -EINVAL;
	}
	if (op->n_nh == 0 || op->n_nh > PF_ROUTE_NH_MAX)
		return -EINVAL;
	for (i = 0; i < op->n_nh; i++) {
		if (op->nh[i].port >= env->n_ports || !env->ports[op->nh[i].port].has_mac)
			return -EINVAL;
		/* An IPv6 gateway is a unicast address (:: is "on the link"). */
		if (l->conf.af == 6 && memcmp(op->nh[i].gw, zero, 16) != 0 &&
		    (pf_ip6_is_mcast(op->nh[i].gw) || pf_ip6_zero_or_loopback(op->nh[i].gw) >= 0 ||
		     pf_ip6_is_v4mapped(op->nh[i].gw)))
			return -EINVAL;
	}
	if (op->n_nh > 1)
		return group_get(l, fo, tbl, op);
	if (memcmp(op->nh[0].gw, zero, alen) == 0)
		return PF_LRN_CONN | op->nh[0].port;
	memcpy(gw, op->nh[0].gw, alen);
	return nh_get(l, fo, tbl, gw, op->nh[0].port);
}

/* ---- routes ------------------------------------------------------------------------ */

static uint32_t
winner(const struct lrn_route *r)
{
	uint32_t s;

	for (s = 0; s < PF_ROUTE_SRC_MAX; s++)
		if (r->tgt[s] != PF_LRN_NONE)
			return r->tgt[s];
	return PF_LRN_NONE;
}

static bool
prefix_ok(uint8_t af, const uint8_t *p, uint8_t len)
{
	uint32_t bits = af == 4 ? 32 : 128, i;

	if (len > bits)
		return false;
	for (i = len; i < bits; i++)
		if (p[i / 8] & (0x80u >> (i % 8)))
			return false;
	return true;
}

static void
op_apply(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl, const struct pf_stage_env *env,
	 const struct pf_route_op *op, struct pf_route_result *res)
{
	struct lrn_key k;
	struct lrn_route *r;
	uint32_t old;
	uint8_t was;
	int32_t pos;
	int64_t code;

	memset(&k, 0, sizeof(k));
	memcpy(k.prefix, op->prefix, l->conf.af == 4 ? 4 : 16);
	k.len = op->plen;
	if (op->src >= PF_ROUTE_SRC_MAX || !prefix_ok(l->conf.af, k.prefix, k.len) ||
	    (op->op != PF_ROUTE_ADD && op->op != PF_ROUTE_DEL)) {
		res->refused++;
		return;
	}
	pos = rte_hash_lookup(l->routes, &k);
	if (op->op == PF_ROUTE_DEL) {
		if (pos < 0 || l->r[pos].tgt[op->src] == PF_LRN_NONE) {
			res->missing++;
			return;
		}
		r = &l->r[pos];
		old = r->tgt[op->src];
		was = r->installed;
		r->tgt[op->src] = PF_LRN_NONE;
		l->src_routes[op->src]--;
		fo->install(tbl, r->k.prefix, r->k.len, winner(r), &r->installed);
		l->n_installed -= was - r->installed;
		ref_put(l, old);
		if (winner(r) == PF_LRN_NONE) {
			rte_hash_del_key(l->routes, &k);
			l->n_routes--;
		}
		res->deleted++;
		return;
	}
	code = target_get(l, fo, tbl, env, op);
	if (code < 0) {
		res->refused++;
		return;
	}
	if (pos < 0) {
		pos = rte_hash_add_key(l->routes, &k);
		if (pos < 0) {
			ref_put(l, (uint32_t)code);
			res->refused++;
			return;
		}
		r = &l->r[pos];
		memset(r->tgt, 0xff, sizeof(r->tgt));
		r->k = k;
		r->installed = 0;
		l->n_routes++;
	}
	r = &l->r[pos];
	old = r->tgt[op->src];
	if (old == (uint32_t)code) {
		ref_put(l, (uint32_t)code);   /* the same again (a replay): nothing moves */
		res->unchanged++;
		return;
	}
	was = r->installed;
	r->tgt[op->src] = (uint32_t)code;
	if (fo->install(tbl, r->k.prefix, r->k.len, winner(r), &r->installed) < 0) {
		/* Full: the source keeps what it had, the table too. */
		r->tgt[op->src] = old;
		r->installed = was;
		ref_put(l, (uint32_t)code);
		if (winner(r) == PF_LRN_NONE) {
			rte_hash_del_key(l->routes, &k);
			l->n_routes--;
		}
		res->refused++;
		return;
	}
	l->n_installed += r->installed - was;
	if (old == PF_LRN_NONE) {
		l->src_routes[op->src]++;
		res->added++;
	} else {
		ref_put(l, old);
		res->replaced++;
	}
	if (!r->installed)
		res->shadowed++;
}

unsigned int
pf_lrn_apply(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl,
	     const struct pf_stage_env *env, const struct pf_route_op *ops, unsigned int n,
	     struct pf_route_result *res)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (ops[i].af == l->conf.af) {
			op_apply(l, fo, tbl, env, &ops[i], res);
			k++;
		}
	if (k == 0)
		return 0;
	__atomic_store_n(&l->batches, l->batches + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->ops, l->ops + k, __ATOMIC_RELAXED);
	return k;
}

uint32_t
pf_lrn_fill(const struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl)
{
	const void *k;
	void *data;
	uint32_t id, it = 0, refused = 0;
	int32_t pos;
	uint8_t in;

	for (id = 0; id < l->conf.nexthops; id++)
		if (l->obj[id].kind != PF_LRN_FREE)
			fo->entry(tbl, id, &l->obj[id]);
	while ((pos = rte_hash_iterate(l->routes, &k, &data, &it)) >= 0)
		if (fo->install(tbl, l->r[pos].k.prefix, l->r[pos].k.len, winner(&l->r[pos]),
				&in) < 0)
			refused++;
	return refused;
}

int
pf_lrn_fill_stage(const struct pf_lrn *l, const struct pf_stage *st, const struct pf_lrn_ops *fo,
		  void *tbl, struct pf_errs *errs)
{
	uint32_t refused = pf_lrn_fill(l, fo, tbl);

	if (refused != 0)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: %u learnt routes do not fit the "
				  "table (raise learnt.tbl8)", st->conf->name, refused);
	return 0;
}

void
pf_lrn_recount(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl)
{
	const void *k;
	void *data;
	uint32_t it = 0;
	uint64_t n = 0;
	int32_t pos;

	while ((pos = rte_hash_iterate(l->routes, &k, &data, &it)) >= 0) {
		struct lrn_route *r = &l->r[pos];

		r->installed = fo->holds(tbl, r->k.prefix, r->k.len, winner(r));
		n += r->installed;
	}
	__atomic_store_n(&l->n_installed, n, __ATOMIC_RELAXED);
}

uint32_t
pf_lrn_upkeep(struct pf_lrn *l, const struct pf_lrn_ops *fo, void *tbl, uint32_t down)
{
	uint8_t *changed = NULL;
	uint32_t id, n_changed = 0;

	reclaim(l->dead_id, l->dead_id_tok, &l->n_dead_id, l->free_id, &l->n_free_id);
	reclaim(l->dead_grp, l->dead_grp_tok, &l->n_dead_grp, l->free_grp, &l->n_free_grp);
	if (down != l->port_down) {
		l->port_down = down;
		for (id = PF_LRN_FIRST; id < l->conf.nexthops; id++)
			if (l->obj[id].kind == PF_LRN_GROUP)
				group_write(l, &l->obj[id]);
	}
	for (id = PF_LRN_FIRST; id < l->conf.nexthops; id++) {
		struct pf_lrn_obj *o = &l->obj[id];
		uint8_t mac[6];
		bool res, flip;

		if (o->kind != PF_LRN_NH)
			continue;
		/* Left the fast path a grace period ago: now the entry may change kind. */
		if (o->leaving && pf_rcu_done(l->leave_tok[id])) {
			o->leaving = 0;
			o->resolved = 0;
			fo->entry(tbl, id, o);
		}
		res = fo->resolve(tbl, o, mac);
		if (res) {
			/* Resolved (again, or a new MAC): the entry first, then its routes. */
			flip = !o->resolved || o->leaving;
			if (!flip && memcmp(mac, o->mac, 6) == 0)
				continue;
			o->resolved = 1;
			o->leaving = 0;
			memcpy(o->mac, mac, 6);
			fo->entry(tbl, id, o);
		} else {
			if (!o->resolved || o->leaving)
				continue;
			/* Routes off the fast path now; the entry after a grace period. */
			o->leaving = 1;
			l->leave_tok[id] = pf_rcu_start();
			flip = true;
		}
		if (!flip)
			continue;
		if (changed == NULL)
			changed = calloc((l->conf.nexthops + 7) / 8, 1);
		if (changed == NULL)
			continue;   /* the flags stay slow: correct, and fixed next time */
		changed[id / 8] |= (uint8_t)(1u << (id % 8));
		n_changed++;
	}
	if (n_changed != 0 && fo->resolution != NULL)
		fo->resolution(tbl, changed);
	free(changed);
	return n_changed;
}

void
pf_lrn_each(const struct pf_lrn *l,
	    bool (*fn)(void *arg, const uint8_t *prefix, uint8_t len, uint8_t src, uint32_t code,
		       bool winner, bool installed), void *arg)
{
	const void *k;
	void *data;
	uint32_t it = 0, s;
	int32_t pos;

	while ((pos = rte_hash_iterate(l->routes, &k, &data, &it)) >= 0) {
		const struct lrn_route *r = &l->r[pos];
		bool first = true;

		for (s = 0; s < PF_ROUTE_SRC_MAX; s++) {
			if (r->tgt[s] == PF_LRN_NONE)
				continue;
			if (!fn(arg, r->k.prefix, r->k.len, (uint8_t)s, r->tgt[s], first,
				r->installed))
				return;
			first = false;
		}
	}
}

struct show_arg {
	const struct pf_lrn *l;
	const struct pf_stage_env *env;
	const struct pf_show_req *req;
	struct pf_show *sh;
};

static bool
show_route(void *arg, const uint8_t *prefix, uint8_t len, uint8_t src, uint32_t code,
	   bool winner, bool installed)
{
	struct show_arg *a = arg;
	const struct pf_stage_env *env = a->env;
	int af = a->l->conf.af == 4 ? AF_INET : AF_INET6;
	char pfx[INET6_ADDRSTRLEN + 4], nh[INET6_ADDRSTRLEN], mac[18] = "-", source[16];
	const char *port = "-";
	union pf_show_val v[6];
	const struct pf_lrn_obj *o;
	size_t n;

	if (code & PF_LRN_CONN) {
		snprintf(nh, sizeof(nh), "connected");
		port = env->ports[code & ~PF_LRN_CONN].name;
	} else if (code < PF_LRN_FIRST) {
		snprintf(nh, sizeof(nh), "%s", code == PF_LRN_BLACKHOLE ? "blackhole" :
			 code == PF_LRN_UNREACH ? "unreachable" : "prohibit");
	} else if ((o = &a->l->obj[code])->kind == PF_LRN_GROUP) {
		snprintf(nh, sizeof(nh), "ecmp(%u)", o->n_members);
	} else {
		inet_ntop(af, o->gw, nh, sizeof(nh));
		port = env->ports[o->port].name;
		if (o->resolved)
			pf_show_mac(mac, o->mac);
	}
	if (a->req->port >= 0 && strcmp(port, env->ports[a->req->port].name) != 0)
		return true;
	inet_ntop(af, prefix, pfx, sizeof(pfx));
	n = strlen(pfx);
	snprintf(pfx + n, sizeof(pfx) - n, "/%u", len);
	snprintf(source, sizeof(source), "learnt:%u", src);
	v[0].s = pfx;
	v[1].s = nh;
	v[2].s = port;
	v[3].s = mac;
	v[4].s = source;
	/* The winner is the first source; the others wait behind it. */
	v[5].s = !winner ? "standby" : installed ? "installed" : "shadowed";
	return pf_show_row(a->sh, v);
}

void
pf_lrn_describe(const struct pf_lrn *l, uint32_t code, const struct pf_stage_env *env,
		struct pf_sink *d)
{
	int af = l->conf.af == 4 ? AF_INET : AF_INET6;
	char nh[INET6_ADDRSTRLEN], mac[18], key[16];
	const struct pf_lrn_obj *o, *m;
	uint32_t i;

	pf_sink_str(d, "source", "learnt");
	if (code & PF_LRN_CONN) {
		pf_sink_str(d, "result", "connected");
		pf_sink_str(d, "port", env->ports[code & ~PF_LRN_CONN].name);
		return;
	}
	if (code < PF_LRN_FIRST) {
		pf_sink_str(d, "result", code == PF_LRN_BLACKHOLE ? "blackhole" :
			    code == PF_LRN_UNREACH ? "unreachable" : "prohibit");
		return;
	}
	o = &l->obj[code];
	if (o->kind == PF_LRN_GROUP) {
		/* A packet takes one member by its flow hash: all of them, with weights. */
		pf_sink_str(d, "result", "ecmp");
		for (i = 0; i < o->n_members; i++) {
			m = &l->obj[o->member[i]];
			inet_ntop(af, m->gw, nh, sizeof(nh));
			snprintf(key, sizeof(key), "member%u", i);
			pf_sink_str(d, key, nh);
			snprintf(key, sizeof(key), "member%u_port", i);
			pf_sink_str(d, key, env->ports[m->port].name);
			snprintf(key, sizeof(key), "member%u_weight", i);
			pf_sink_u64(d, key, o->weight[i]);
		}
		return;
	}
	pf_sink_str(d, "result", o->resolved && !o->leaving ? "route" : "neighbor");
	inet_ntop(af, o->gw, nh, sizeof(nh));
	pf_sink_str(d, "nexthop", nh);
	pf_sink_str(d, "port", env->ports[o->port].name);
	if (o->resolved) {
		pf_show_mac(mac, o->mac);
		pf_sink_str(d, "mac", mac);
	}
}

const struct pf_show_col pf_lrn_show_cols[PF_LRN_SHOW_COLS] = {
	{ "prefix", PF_SHOW_STR }, { "nexthop", PF_SHOW_STR }, { "port", PF_SHOW_STR },
	{ "mac", PF_SHOW_STR }, { "source", PF_SHOW_STR }, { "state", PF_SHOW_STR },
};

void
pf_lrn_show(const struct pf_lrn *l, const struct pf_stage_env *env, const struct pf_show_req *req,
	    struct pf_show *sh)
{
	struct show_arg a = { l, env, req, sh };

	if (l != NULL)
		pf_lrn_each(l, show_route, &a);
}

uint32_t
pf_lrn_links_down(const struct pf_stage *st)
{
	struct rte_eth_link link;
	uint32_t down = 0;
	uint16_t p;

	for (p = 0; p < st->env->n_ports && st->runtime_runs; p++)
		if (!pf_port_present(&st->env->ports[p]) ||
		    (rte_eth_link_get_nowait(pf_env_port_id(st->env, p), &link) == 0 &&
		     link.link_status != RTE_ETH_LINK_UP))
			down |= 1u << p;   /* a port removed live is down for good */
	return down;
}

#define LRN_UPKEEP_NS 100000000ull

bool
pf_lrn_due(struct pf_lrn *l, uint64_t now_ns)
{
	if (l == NULL || now_ns < l->upkeep_ns)
		return false;
	l->upkeep_ns = now_ns + LRN_UPKEEP_NS;
	return true;
}

uint32_t
pf_lrn_stage_upkeep(struct pf_lrn *l, const struct pf_stage *st, const struct pf_lrn_ops *fo,
		    void *tbl)
{
	uint32_t down = pf_lrn_links_down(st), n;

	/* Links first: a member on a port gone down leaves its groups' buckets now. */
	if (down != l->port_down)
		PF_LOG(INFO, "%s %s: ports down 0x%x (were 0x%x): ECMP groups rebalanced",
		       st->ops->type, st->conf->name, down, l->port_down);
	n = pf_lrn_upkeep(l, fo, tbl, down);
	if (n != 0)
		PF_LOG(INFO, "%s %s: %u next hops changed resolution", st->ops->type,
		       st->conf->name, n);
	return n;
}

/* ---- life ------------------------------------------------------------------------------ */

struct pf_lrn *
pf_lrn_create(const struct pf_lrn_conf *c, const char *name, int socket)
{
	static uint32_t seq;
	struct pf_lrn *l = calloc(1, sizeof(*l));
	struct rte_hash_parameters hp = { 0 };
	char hn[RTE_HASH_NAMESIZE];
	uint32_t i, s = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

	if (l == NULL)
		return NULL;
	l->conf = *c;
	hp.socket_id = socket;
	hp.hash_func = rte_hash_crc;
	hp.name = hn;
	snprintf(hn, sizeof(hn), "pf_lrn_r%u", s);
	hp.entries = c->routes;
	hp.key_len = sizeof(struct lrn_key);
	l->routes = rte_hash_create(&hp);
	snprintf(hn, sizeof(hn), "pf_lrn_n%u", s);
	hp.entries = c->nexthops;
	hp.key_len = sizeof(struct lrn_nhkey);
	l->nhs = rte_hash_create(&hp);
	snprintf(hn, sizeof(hn), "pf_lrn_g%u", s);
	hp.entries = RTE_MAX(c->groups, 8u);
	hp.key_len = sizeof(struct lrn_grpkey);
	l->grps = rte_hash_create(&hp);
	/* rte_hash hands out positions up to a little over its entries. */
	l->r = calloc((size_t)c->routes + 64, sizeof(l->r[0]));
	l->obj = calloc(c->nexthops, sizeof(l->obj[0]));
	l->free_id = malloc(sizeof(uint32_t) * c->nexthops);
	l->dead_id = malloc(sizeof(uint32_t) * c->nexthops);
	l->dead_id_tok = malloc(sizeof(uint64_t) * c->nexthops);
	l->leave_tok = calloc(c->nexthops, sizeof(uint64_t));
	l->free_grp = malloc(sizeof(uint32_t) * c->groups);
	l->dead_grp = malloc(sizeof(uint32_t) * c->groups);
	l->dead_grp_tok = malloc(sizeof(uint64_t) * c->groups);
	l->groups = rte_zmalloc_socket(name, sizeof(struct pf_lrn_group) * c->groups,
				       RTE_CACHE_LINE_SIZE, socket);
	if (l->routes == NULL || l->nhs == NULL || l->grps == NULL || l->r == NULL ||
	    l->obj == NULL || l->free_id == NULL || l->dead_id == NULL || l->dead_id_tok == NULL ||
	    l->leave_tok == NULL ||
	    l->free_grp == NULL || l->dead_grp == NULL || l->dead_grp_tok == NULL ||
	    l->groups == NULL) {
		pf_lrn_free(l);
		return NULL;
	}
	for (i = c->nexthops; i-- > PF_LRN_FIRST;)
		l->free_id[l->n_free_id++] = i;
	for (i = 0; i < PF_LRN_FIRST; i++) {
		l->obj[i].kind = PF_LRN_FIXED;
		l->obj[i].refs = 1;   /* never freed */
	}
	for (i = c->groups; i-- > 0;)
		l->free_grp[l->n_free_grp++] = i;
	return l;
}

struct pf_lrn *
pf_lrn_open(const struct pf_stage *st, const struct pf_lrn_conf *c, struct pf_errs *errs)
{
	struct pf_lrn *l = pf_lrn_create(c, "pf_lrn_groups", st->socket);

	if (l == NULL)
		pf_err_add(errs, NULL, 0, 0, "stage %s: no memory for %u learnt routes (raise EAL -m)",
			   st->conf->name, c->routes);
	return l;
}

const struct pf_lrn_conf *
pf_lrn_conf_of(const struct pf_lrn *l)
{
	static const struct pf_lrn_conf none;

	return l != NULL ? &l->conf : &none;
}

void
pf_lrn_free(struct pf_lrn *l)
{
	if (l == NULL)
		return;
	rte_hash_free(l->routes);
	rte_hash_free(l->nhs);
	rte_hash_free(l->grps);
	free(l->r);
	free(l->obj);
	free(l->free_id);
	free(l->dead_id);
	free(l->dead_id_tok);
	free(l->leave_tok);
	free(l->free_grp);
	free(l->dead_grp);
	free(l->dead_grp_tok);
	rte_free(l->groups);
	free(l);
}

const struct pf_lrn_group *
pf_lrn_groups(const struct pf_lrn *l)
{
	return l->groups;
}

bool
pf_lrn_fast(const struct pf_lrn *l, uint32_t code)
{
	const struct pf_lrn_obj *o;

	if (code == PF_LRN_NONE || (code & PF_LRN_CONN) || code >= l->conf.nexthops)
		return false;
	o = &l->obj[code];
	return o->kind == PF_LRN_NH && o->resolved && !o->leaving;
}

const struct pf_lrn_obj *
pf_lrn_obj(const struct pf_lrn *l, uint32_t id)
{
	return &l->obj[id];
}

uint32_t
pf_lrn_ids(const struct pf_lrn *l)
{
	return l->conf.nexthops;
}

void
pf_lrn_gauges(const struct pf_lrn *l, struct pf_sink *out)
{
	uint64_t routes, in;
	char name[32];
	uint32_t s;

	if (l == NULL)
		return;
	routes = __atomic_load_n(&l->n_routes, __ATOMIC_RELAXED);
	in = __atomic_load_n(&l->n_installed, __ATOMIC_RELAXED);
	pf_sink_u64(out, "learnt_routes", routes);
	pf_sink_u64(out, "learnt_installed", in);
	pf_sink_u64(out, "learnt_shadowed", routes > in ? routes - in : 0);
	pf_sink_u64(out, "learnt_nexthops", __atomic_load_n(&l->n_nhs, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_groups", __atomic_load_n(&l->n_groups, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_batches", __atomic_load_n(&l->batches, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_updates", __atomic_load_n(&l->ops, __ATOMIC_RELAXED));
	for (s = 0; s < PF_ROUTE_SRC_MAX; s++) {
		uint64_t v = __atomic_load_n(&l->src_routes[s], __ATOMIC_RELAXED);

		if (v == 0)
			continue;
		snprintf(name, sizeof(name), "learnt_routes.src%u", s);
		pf_sink_u64(out, name, v);
	}
}
