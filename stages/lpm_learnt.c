/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm's learnt routes (stages/lpm_fib.h): what routing daemons announce,
 * beside the configured routes, updated one route at a time while the data
 * path runs.
 *
 * Per prefix, each source's target (a next hop, an ECMP group, a port's
 * connected subnet, or a drop kind); the lowest source id wins, and a
 * configured route of the same prefix wins over all of them (the prefix is
 * then "shadowed": kept, not installed). A target is a learnt id: nh[] entry
 * learnt_base + id of every table. A next hop by address whose neighbour is
 * resolved is a plain forward (its MAC in the entry, no LPM_HOP_SLOW in the
 * table: the x4 fast path takes it); unresolved, it is LPM_NH_GW (slow path,
 * the neighbour table, the neigh edge). Ids and groups are shared by
 * reference counts and come back after a grace period.
 *
 * One writer, the control thread (batches, upkeep, reloads, in turn);
 * readers never lock: every table entry, next-hop entry (16 bytes, one
 * aligned vector store) and bucket is one store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_vect.h>

#include "lpm_fib.h"
#include "pf_flowhash.h"
#include "pf_log.h"

#define LRN_NONE UINT32_MAX
#define LRN_CONN 0x80000000u      /* target code: | port, the port's connected subnet */
#define LRN_LINK_CHECK_NS 100000000ull

/* Fixed learnt ids: the drop kinds. */
enum { LRN_ID_BLACKHOLE, LRN_ID_UNREACH, LRN_ID_PROHIBIT, LRN_ID_FIRST };

enum { LRN_OBJ_FREE = 0, LRN_OBJ_FIXED, LRN_OBJ_NH, LRN_OBJ_GROUP };

struct lrn_key {
	uint32_t ip;
	uint8_t len;
	uint8_t pad[3];
};

struct lrn_route {
	uint32_t tgt[PF_ROUTE_SRC_MAX];   /* per source: target code, LRN_NONE */
	uint32_t ip;
	uint8_t len;
	uint8_t installed;                /* its winner is in the table */
	uint8_t live;
};

struct lrn_nhkey {
	uint32_t gw;                      /* host order */
	uint16_t port;
	uint16_t pad;
};

struct lrn_member {
	uint32_t id;                      /* the member's learnt id */
	uint16_t w;
	uint16_t pad;
};

struct lrn_grpkey {
	uint32_t n;
	struct lrn_member m[PF_ROUTE_NH_MAX];   /* sorted by id; unused slots zero */
};

struct lrn_obj {
	uint32_t refs;
	uint8_t kind;                     /* LRN_OBJ_* */
	uint8_t resolved;                 /* next hop: its entry is a plain forward */
	uint16_t port;
	uint32_t gw;                      /* next hop: address, host order */
	uint8_t mac[6];                   /* next hop, resolved: the neighbour's MAC */
	uint32_t group;                   /* group: index into groups[] */
	struct lrn_grpkey gk;             /* group: members */
	uint32_t assign[LPM_GROUP_BUCKETS];   /* group: buckets with every member up */
};

struct lpm_learnt {
	struct lpm_learnt_conf conf;
	struct rte_hash *routes;          /* lrn_key -> position in r[] */
	struct lrn_route *r;
	struct rte_hash *nhs;             /* lrn_nhkey -> learnt id */
	struct rte_hash *grps;            /* lrn_grpkey -> learnt id */
	struct lrn_obj *obj;              /* by learnt id */
	uint32_t *free_id, n_free_id;
	uint32_t *dead_id, n_dead_id;
	uint64_t *dead_id_tok;
	struct lpm_group *groups;         /* what tables read (fib->groups) */
	uint32_t *free_grp, n_free_grp;
	uint32_t *dead_grp, n_dead_grp;
	uint64_t *dead_grp_tok;
	uint32_t port_down;               /* bit p: port p's link was down at the last check */
	uint64_t link_check_ns;
	/* for gauges, relaxed */
	uint64_t n_routes, n_installed, n_shadowed, n_groups, n_nhs;
	uint64_t src_routes[PF_ROUTE_SRC_MAX];
	uint64_t batches, ops;
};

/* ---- configuration ---------------------------------------------------------- */

int
lpm_learnt_parse(const struct pf_stage_conf *sc, struct lpm_learnt_conf *lc, struct pf_errs *errs)
{
	static const char *const keys[] = { "routes", "nexthops", "groups", "tbl8", NULL };
	const struct pf_node *n = pf_map_get(sc->node, "learnt"), *v;
	char path[PF_CONF_PATH_MAX];
	int rc = 0;

	memset(lc, 0, sizeof(*lc));
	if (n == NULL)
		return 0;
	snprintf(path, sizeof(path), "stages.%s.learnt", sc->name);
	if (pf_node_expect(n, PF_NODE_MAP, path, errs) < 0 ||
	    pf_map_check_keys(n, path, keys, errs) < 0)
		return -EINVAL;
	lc->routes = 1u << 20;
	lc->nexthops = 4096;
	lc->groups = 1024;
	lc->tbl8 = 4096;
#define LRN_KEY(k, lo, hi) do {							\
	v = pf_map_get(n, #k);							\
	if (v != NULL && pf_node_u32(v, path, lo, hi, &lc->k, errs) < 0)	\
		rc = -EINVAL;							\
} while (0)
	LRN_KEY(routes, 1, 16u << 20);
	LRN_KEY(nexthops, 16, 1u << 20);
	LRN_KEY(groups, 1, 1u << 16);
	LRN_KEY(tbl8, 1, 1u << 16);
#undef LRN_KEY
	if (lc->groups >= lc->nexthops)
		rc = pf_node_err(errs, n, "%s: groups (%u) must be fewer than nexthops (%u): a group "
				 "takes a next-hop id", path, lc->groups, lc->nexthops);
	return rc;
}

/* ---- ids ---------------------------------------------------------------------- */

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
id_take(struct lpm_learnt *ln)
{
	if (ln->n_free_id == 0)
		reclaim(ln->dead_id, ln->dead_id_tok, &ln->n_dead_id, ln->free_id, &ln->n_free_id);
	if (ln->n_free_id == 0)
		return -ENOSPC;
	return ln->free_id[--ln->n_free_id];
}

/* An id no route or group refers to any more: reused after a grace period. */
static void
id_put(struct lpm_learnt *ln, uint32_t id)
{
	ln->obj[id].kind = LRN_OBJ_FREE;
	ln->dead_id[ln->n_dead_id] = id;
	ln->dead_id_tok[ln->n_dead_id++] = pf_rcu_start();
}

static inline uint32_t
tgt_hop(const struct lpm_fib *fib, uint32_t code)
{
	return (code & LRN_CONN) ? fib->conn_base + (code & ~LRN_CONN) : fib->learnt_base + code;
}

/* The hop value a table entry holds for @p hop: with LPM_HOP_SLOW unless a plain forward. */
static inline uint32_t
hop_flagged(const struct lpm_fib *fib, uint32_t hop)
{
	return fib->nh[hop].max_len == 0 ? hop | LPM_HOP_SLOW : hop;
}

/* Write next-hop entry @p hop of @p fib in one 16-byte store (readers see old or new). */
static void
nh_store(struct lpm_fib *fib, uint32_t hop, const struct lpm_nh *e)
{
	RTE_BUILD_BUG_ON(sizeof(*e) != 16);
	_mm_store_si128((__m128i *)&fib->nh[hop], _mm_loadu_si128((const __m128i *)e));
}

/* Learnt id @p id's entry as it should be now. */
static void
obj_entry(const struct pf_stage *st, const struct lpm_learnt *ln, uint32_t id, struct lpm_nh *e)
{
	const struct lrn_obj *o = &ln->obj[id];
	const struct pf_port_conf *pc;

	memset(e, 0, sizeof(*e));
	switch (o->kind) {
	case LRN_OBJ_FIXED:
		e->kind = id == LRN_ID_BLACKHOLE ? LPM_NH_BLACKHOLE :
			  id == LRN_ID_UNREACH ? LPM_NH_UNREACH : LPM_NH_PROHIBIT;
		break;
	case LRN_OBJ_GROUP:
		e->kind = LPM_NH_GROUP;
		memcpy(e->macs, &o->group, 4);
		break;
	case LRN_OBJ_NH:
		pc = &st->env->ports[o->port];
		e->port = (uint8_t)o->port;
		memcpy(e->macs + 6, pc->mac, 6);
		if (o->resolved) {
			memcpy(e->macs, o->mac, 6);
			e->kind = LPM_NH_FWD;
			e->max_len = pc->max_frame > RTE_ETHER_HDR_LEN ?
				     (uint16_t)(pc->max_frame - RTE_ETHER_HDR_LEN) : 0;
		} else {
			memcpy(e->macs, &o->gw, 4);
			e->kind = LPM_NH_GW;
		}
		break;
	default:
		e->kind = LPM_NH_BLACKHOLE;
		break;
	}
}

static void
obj_publish(struct pf_stage *st, struct lpm_learnt *ln, struct lpm_fib *fib, uint32_t id)
{
	struct lpm_nh e;

	obj_entry(st, ln, id, &e);
	nh_store(fib, fib->learnt_base + id, &e);
}

/* ---- next hops and groups ------------------------------------------------------ */

static void ref_put(struct pf_stage *st, struct lpm_learnt *ln, uint32_t code);

/* The learnt id of next hop @p gw on @p port (a reference taken), or -errno. */
static int64_t
nh_get(struct pf_stage *st, struct lpm_learnt *ln, struct lpm_fib *fib, uint32_t gw, uint16_t port)
{
	struct lrn_nhkey k = { .gw = gw, .port = port };
	void *data;
	int64_t id;

	if (rte_hash_lookup_data(ln->nhs, &k, &data) >= 0) {
		id = (int64_t)(uintptr_t)data;
		ln->obj[id].refs++;
		return id;
	}
	id = id_take(ln);
	if (id < 0)
		return id;
	if (rte_hash_add_key_data(ln->nhs, &k, (void *)(uintptr_t)id) < 0) {
		id_put(ln, (uint32_t)id);
		return -ENOSPC;
	}
	memset(&ln->obj[id], 0, sizeof(ln->obj[id]));
	ln->obj[id].kind = LRN_OBJ_NH;
	ln->obj[id].refs = 1;
	ln->obj[id].gw = gw;
	ln->obj[id].port = port;
	/* Resolved already? Then routes to it take the fast path from the start. */
	if (((const struct lpm_priv *)st->priv)->nt != NULL) {
		struct pf_neigh_key nk;

		pf_neigh_key_ip4(&nk, port, gw);
		ln->obj[id].resolved = pf_neigh_resolve(((const struct lpm_priv *)st->priv)->nt,
							&nk, ln->obj[id].mac);
	}
	obj_publish(st, ln, fib, (uint32_t)id);
	ln->n_nhs++;
	return id;
}

/* Bucket b's member with every member up: by cumulative weight. */
static void
group_assign(struct lrn_obj *g)
{
	uint32_t b, i, total = 0, acc;

	for (i = 0; i < g->gk.n; i++)
		total += g->gk.m[i].w;
	for (b = 0; b < LPM_GROUP_BUCKETS; b++) {
		uint32_t at = (uint32_t)(((uint64_t)b * total) / LPM_GROUP_BUCKETS);

		for (i = 0, acc = 0; i + 1 < g->gk.n && at >= acc + g->gk.m[i].w; i++)
			acc += g->gk.m[i].w;
		g->assign[b] = g->gk.m[i].id;
	}
}

/*
 * Write group @p g's buckets from its assignment, a member on a port whose
 * link is down replaced by a live one (only its flows move).
 */
static void
group_write(const struct lpm_learnt *ln, const struct lpm_fib *fib, const struct lrn_obj *g)
{
	struct lpm_group *grp = &ln->groups[g->group];
	uint32_t live[PF_ROUTE_NH_MAX], n_live = 0, b, i;

	for (i = 0; i < g->gk.n; i++)
		if (!(ln->port_down & (1u << ln->obj[g->gk.m[i].id].port)))
			live[n_live++] = g->gk.m[i].id;
	for (b = 0; b < LPM_GROUP_BUCKETS; b++) {
		uint32_t id = g->assign[b];

		if (n_live != 0 && (ln->port_down & (1u << ln->obj[id].port)))
			id = live[b % n_live];
		__atomic_store_n(&grp->bucket[b], fib->learnt_base + id, __ATOMIC_RELEASE);
	}
}

static int
member_cmp(const void *a, const void *b)
{
	const struct lrn_member *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The learnt id of the group of @p op's next hops (a reference taken), or -errno. */
static int64_t
group_get(struct pf_stage *st, struct lpm_learnt *ln, struct lpm_fib *fib,
	  const struct pf_route_op *op)
{
	struct lrn_grpkey k;
	struct lrn_obj *g;
	void *data;
	int64_t id, m;
	uint32_t i;

	memset(&k, 0, sizeof(k));
	for (i = 0; i < op->n_nh; i++) {
		uint32_t gw;

		memcpy(&gw, op->nh[i].gw, 4);
		m = nh_get(st, ln, fib, rte_be_to_cpu_32(gw), op->nh[i].port);
		if (m < 0) {
			while (k.n > 0)
				ref_put(st, ln, k.m[--k.n].id);
			return m;
		}
		k.m[k.n].id = (uint32_t)m;
		k.m[k.n++].w = (uint16_t)RTE_MAX(op->nh[i].weight, 1);
	}
	qsort(k.m, k.n, sizeof(k.m[0]), member_cmp);
	if (rte_hash_lookup_data(ln->grps, &k, &data) >= 0) {
		/* An existing group: the members' references it holds are enough. */
		for (i = 0; i < k.n; i++)
			ref_put(st, ln, k.m[i].id);
		id = (int64_t)(uintptr_t)data;
		ln->obj[id].refs++;
		return id;
	}
	if (ln->n_free_grp == 0)
		reclaim(ln->dead_grp, ln->dead_grp_tok, &ln->n_dead_grp, ln->free_grp,
			&ln->n_free_grp);
	id = ln->n_free_grp != 0 ? id_take(ln) : -ENOSPC;
	if (id < 0 || rte_hash_add_key_data(ln->grps, &k, (void *)(uintptr_t)id) < 0) {
		if (id >= 0)
			id_put(ln, (uint32_t)id);
		for (i = 0; i < k.n; i++)
			ref_put(st, ln, k.m[i].id);
		return -ENOSPC;
	}
	g = &ln->obj[id];
	memset(g, 0, sizeof(*g));
	g->kind = LRN_OBJ_GROUP;
	g->refs = 1;
	g->gk = k;
	g->group = ln->free_grp[--ln->n_free_grp];
	group_assign(g);
	/* Buckets first, then the entry that leads to them. */
	group_write(ln, fib, g);
	obj_publish(st, ln, fib, (uint32_t)id);
	ln->n_groups++;
	return id;
}

static void
ref_put(struct pf_stage *st, struct lpm_learnt *ln, uint32_t code)
{
	struct lrn_obj *o;
	uint32_t i;

	if (code == LRN_NONE || (code & LRN_CONN) || code < LRN_ID_FIRST)
		return;
	o = &ln->obj[code];
	if (--o->refs != 0)
		return;
	if (o->kind == LRN_OBJ_NH) {
		struct lrn_nhkey k = { .gw = o->gw, .port = o->port };

		rte_hash_del_key(ln->nhs, &k);
		ln->n_nhs--;
	} else if (o->kind == LRN_OBJ_GROUP) {
		struct lrn_grpkey k = o->gk;

		rte_hash_del_key(ln->grps, &k);
		ln->dead_grp[ln->n_dead_grp] = o->group;
		ln->dead_grp_tok[ln->n_dead_grp++] = pf_rcu_start();
		ln->n_groups--;
		for (i = 0; i < k.n; i++)
			ref_put(st, ln, k.m[i].id);
	}
	id_put(ln, code);
}

/* The target code of @p op (a reference taken), or -errno. */
static int64_t
target_get(struct pf_stage *st, struct lpm_learnt *ln, struct lpm_fib *fib,
	   const struct pf_route_op *op)
{
	static const uint8_t zero[16];
	uint32_t gw;

	switch (op->kind) {
	case PF_ROUTE_BLACKHOLE:
		return LRN_ID_BLACKHOLE;
	case PF_ROUTE_UNREACHABLE:
		return LRN_ID_UNREACH;
	case PF_ROUTE_PROHIBIT:
		return LRN_ID_PROHIBIT;
	case PF_ROUTE_UNICAST:
		break;
	default:
		return -EINVAL;
	}
	if (op->n_nh == 0 || op->n_nh > PF_ROUTE_NH_MAX)
		return -EINVAL;
	for (gw = 0; gw < op->n_nh; gw++)
		if (op->nh[gw].port >= st->env->n_ports || !st->env->ports[op->nh[gw].port].has_mac)
			return -EINVAL;
	if (op->n_nh > 1)
		return group_get(st, ln, fib, op);
	if (memcmp(op->nh[0].gw, zero, 4) == 0)
		return LRN_CONN | op->nh[0].port;
	memcpy(&gw, op->nh[0].gw, 4);
	return nh_get(st, ln, fib, rte_be_to_cpu_32(gw), op->nh[0].port);
}

/* ---- routes in the table --------------------------------------------------------- */

static uint32_t
winner(const struct lrn_route *r)
{
	uint32_t s;

	for (s = 0; s < PF_ROUTE_SRC_MAX; s++)
		if (r->tgt[s] != LRN_NONE)
			return r->tgt[s];
	return LRN_NONE;
}

/*
 * Whether the table's route @p ip/@p len -> @p hop is a learnt one: its hop
 * a learnt id, or a port's connected subnet on a prefix that is not the
 * port's own (those are configured).
 */
static bool
learnt_in_table(const struct pf_stage *st, const struct lpm_fib *fib, uint32_t ip, uint8_t len,
		uint32_t hop)
{
	const struct pf_port_conf *pc;
	uint32_t h = LPM_HOP(hop);

	if (h >= fib->learnt_base)
		return true;
	if (h < fib->conn_base || h >= fib->conn_base + fib->n_ports)
		return false;
	pc = &st->env->ports[h - fib->conn_base];
	return !(pc->has_ipv4 && pc->ipv4_len == len && (pc->ipv4 & ~0u << (32 - len)) == ip);
}

/*
 * Put route @p r's winner into @p fib (or take it out), unless a configured
 * route holds the prefix (it wins). Sets *@p in when the table holds it.
 * 0, or -ENOSPC (tbl8 groups: the table keeps what it had).
 */
static int
install(const struct pf_stage *st, struct lpm_fib *fib, const struct lrn_route *r, uint8_t *in)
{
	uint32_t code = winner(r), hop;
	int rc = 0;

	*in = 0;
	if (r->len == 0) {
		if (fib->dflt_cfg)
			return 0;
		__atomic_store_n(&fib->dflt, code == LRN_NONE ? fib->miss : tgt_hop(fib, code),
				 __ATOMIC_RELEASE);
		*in = code != LRN_NONE;
		return 0;
	}
	if (pf_dir24_get(fib->dir, r->ip, r->len, &hop) == 0 &&
	    !learnt_in_table(st, fib, r->ip, r->len, hop))
		return 0;   /* a configured route: it wins */
	if (code == LRN_NONE) {
		if (pf_dir24_get(fib->dir, r->ip, r->len, &hop) == 0)
			pf_dir24_del(fib->dir, r->ip, r->len);
		return 0;
	}
	rc = pf_dir24_add(fib->dir, r->ip, r->len, hop_flagged(fib, tgt_hop(fib, code)));
	if (rc == 0)
		*in = 1;
	return rc;
}

static void
shadow_count(struct lpm_learnt *ln)
{
	ln->n_shadowed = ln->n_routes - ln->n_installed;
}

static int
op_apply(struct pf_stage *st, struct lpm_learnt *ln, struct lpm_fib *fib,
	 const struct pf_route_op *op, struct pf_route_result *res)
{
	struct lrn_key k = { 0 };
	struct lrn_route *r;
	uint32_t ip, old, was;
	int32_t pos;
	int64_t code;
	int rc;

	memcpy(&ip, op->prefix, 4);
	ip = rte_be_to_cpu_32(ip);
	if (op->af != 4 || op->src >= PF_ROUTE_SRC_MAX || op->plen > 32 ||
	    (op->plen < 32 && (ip & (UINT32_MAX >> op->plen)) != 0 && op->plen != 0) ||
	    (op->plen == 0 && ip != 0)) {
		res->refused++;
		return -EINVAL;
	}
	k.ip = ip;
	k.len = op->plen;
	pos = rte_hash_lookup(ln->routes, &k);
	if (op->op == PF_ROUTE_DEL) {
		if (pos < 0 || ln->r[pos].tgt[op->src] == LRN_NONE) {
			res->missing++;
			return 0;
		}
		r = &ln->r[pos];
		old = r->tgt[op->src];
		was = r->installed;
		r->tgt[op->src] = LRN_NONE;
		ln->src_routes[op->src]--;
		install(st, fib, r, &r->installed);
		ln->n_installed -= was - r->installed;
		ref_put(st, ln, old);
		if (winner(r) == LRN_NONE) {
			rte_hash_del_key(ln->routes, &k);
			r->live = 0;
			ln->n_routes--;
		}
		res->deleted++;
		shadow_count(ln);
		return 0;
	}
	if (op->op != PF_ROUTE_ADD) {
		res->refused++;
		return -EINVAL;
	}
	code = target_get(st, ln, fib, op);
	if (code < 0) {
		res->refused++;
		return (int)code;
	}
	if (pos < 0) {
		pos = rte_hash_add_key(ln->routes, &k);
		if (pos < 0) {
			ref_put(st, ln, (uint32_t)code);
			res->refused++;
			return -ENOSPC;
		}
		r = &ln->r[pos];
		memset(r, 0xff, sizeof(r->tgt));
		r->ip = ip;
		r->len = op->plen;
		r->installed = 0;
		r->live = 1;
		ln->n_routes++;
	}
	r = &ln->r[pos];
	old = r->tgt[op->src];
	if (old == (uint32_t)code) {
		ref_put(st, ln, (uint32_t)code);   /* the same again (a replay): nothing moves */
		res->unchanged++;
		return 0;
	}
	was = r->installed;
	r->tgt[op->src] = (uint32_t)code;
	rc = install(st, fib, r, &r->installed);
	if (rc < 0) {
		/* The table is full: the source keeps what it had. */
		r->tgt[op->src] = old;
		ref_put(st, ln, (uint32_t)code);
		if (winner(r) == LRN_NONE) {
			rte_hash_del_key(ln->routes, &k);
			r->live = 0;
			ln->n_routes--;
		}
		res->refused++;
		return rc;
	}
	ln->n_installed += r->installed - was;
	if (old == LRN_NONE) {
		ln->src_routes[op->src]++;
		res->added++;
	} else {
		ref_put(st, ln, old);
		res->replaced++;
	}
	if (!r->installed)
		res->shadowed++;
	shadow_count(ln);
	return 0;
}

int
lpm_learnt_apply(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
		 struct pf_route_result *res)
{
	struct lpm_priv *lp = st->priv;
	struct lpm_learnt *ln = lp->ln;
	unsigned int i;

	if (ln == NULL)
		return -ENOTSUP;
	for (i = 0; i < n; i++)
		if (ops[i].af == 4)
			op_apply(st, ln, lp->fib, &ops[i], res);
	__atomic_store_n(&ln->batches, ln->batches + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ln->ops, ln->ops + n, __ATOMIC_RELAXED);
	return 0;
}

/* ---- a new table ---------------------------------------------------------------- */

int
lpm_learnt_fill(const struct lpm_learnt *ln, struct pf_stage *st, struct lpm_fib *fib,
		struct pf_errs *errs)
{
	const struct lrn_key *k;
	void *data;
	uint32_t id, it = 0, refused = 0;
	int32_t pos;
	uint8_t in;

	fib->groups = ln->groups;
	for (id = 0; id < ln->conf.nexthops; id++)
		if (ln->obj[id].kind != LRN_OBJ_FREE) {
			struct lpm_nh e;

			obj_entry(st, ln, id, &e);
			nh_store(fib, fib->learnt_base + id, &e);
		}
	/* Not running yet: nothing of ln changes (a refused reload leaves it). */
	while ((pos = rte_hash_iterate(ln->routes, (const void **)&k, &data, &it)) >= 0)
		if (install(st, fib, &ln->r[pos], &in) < 0)
			refused++;
	if (refused != 0)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: %u learnt routes do not fit the "
				  "table (raise learnt.tbl8)", st->conf->name, refused);
	return 0;
}

void
lpm_learnt_published(struct lpm_learnt *ln, const struct lpm_fib *fib)
{
	const struct lrn_key *k;
	void *data;
	uint32_t it = 0, hop;
	int32_t pos;

	ln->n_installed = 0;
	while ((pos = rte_hash_iterate(ln->routes, (const void **)&k, &data, &it)) >= 0) {
		struct lrn_route *r = &ln->r[pos];

		r->installed = r->len == 0 ? !fib->dflt_cfg :
			       pf_dir24_get(fib->dir, r->ip, r->len, &hop) == 0 &&
			       LPM_HOP(hop) == LPM_HOP(tgt_hop(fib, winner(r)));
		ln->n_installed += r->installed;
	}
	shadow_count(ln);
}

uint32_t
ln_routes(const struct lpm_learnt *ln)
{
	return ln != NULL ? ln->conf.routes : 0;
}

/* ---- upkeep ------------------------------------------------------------------------ */

struct reflag {
	struct lpm_fib *fib;
	const uint8_t *changed;   /* bit per learnt id */
	uint32_t n;
};

static void
reflag_route(void *arg, uint32_t ip, uint8_t len, uint32_t hop)
{
	struct reflag *rf = arg;
	uint32_t h = LPM_HOP(hop), id;

	if (h < rf->fib->learnt_base)
		return;
	id = h - rf->fib->learnt_base;
	if (!(rf->changed[id / 8] & (1u << (id % 8))))
		return;
	if (hop_flagged(rf->fib, h) != hop) {
		pf_dir24_add(rf->fib->dir, ip, len, hop_flagged(rf->fib, h));
		rf->n++;
	}
}

void
lpm_learnt_upkeep(struct pf_stage *st, uint64_t now)
{
	struct lpm_priv *lp = st->priv;
	struct lpm_learnt *ln = lp->ln;
	struct lpm_fib *fib = lp->fib;
	struct rte_eth_link link;
	uint8_t *changed = NULL;
	uint32_t id, down = 0, n_changed = 0;
	uint16_t p;

	if (ln == NULL || now < ln->link_check_ns)
		return;
	ln->link_check_ns = now + LRN_LINK_CHECK_NS;
	pf_dir24_reclaim(fib->dir);
	/* Links: a member on a port gone down leaves its groups' buckets now. */
	for (p = 0; p < st->env->n_ports && st->runtime_runs; p++)
		if (rte_eth_link_get_nowait(pf_env_port_id(st->env, p), &link) == 0 &&
		    link.link_status != RTE_ETH_LINK_UP)
			down |= 1u << p;
	if (down != ln->port_down) {
		PF_LOG(INFO, "lpm %s: ports down 0x%x (were 0x%x): ECMP groups rebalanced",
		       st->conf->name, down, ln->port_down);
		ln->port_down = down;
		for (id = LRN_ID_FIRST; id < ln->conf.nexthops; id++)
			if (ln->obj[id].kind == LRN_OBJ_GROUP)
				group_write(ln, fib, &ln->obj[id]);
	}
	/* Next hops by address follow the neighbour table. */
	if (lp->nt == NULL)
		return;
	for (id = LRN_ID_FIRST; id < ln->conf.nexthops; id++) {
		struct lrn_obj *o = &ln->obj[id];
		struct pf_neigh_key nk;
		uint8_t mac[6];
		bool res;

		if (o->kind != LRN_OBJ_NH)
			continue;
		pf_neigh_key_ip4(&nk, o->port, o->gw);
		res = pf_neigh_resolve(lp->nt, &nk, mac);
		if (res == o->resolved && (!res || memcmp(mac, o->mac, 6) == 0))
			continue;
		if (changed == NULL && res != o->resolved) {
			changed = calloc((ln->conf.nexthops + 7) / 8, 1);
			if (changed == NULL)
				return;   /* next time */
		}
		if (res != o->resolved) {
			changed[id / 8] |= (uint8_t)(1u << (id % 8));
			n_changed++;
		}
		o->resolved = res;
		if (res)
			memcpy(o->mac, mac, 6);
		/* The entry first: a route flagged for the old kind still finds it right. */
		obj_publish(st, ln, fib, id);
	}
	if (n_changed != 0) {
		struct reflag rf = { fib, changed, 0 };

		pf_dir24_walk(fib->dir, reflag_route, &rf);
		PF_LOG(INFO, "lpm %s: %u next hops changed resolution: %u routes re-flagged",
		       st->conf->name, n_changed, rf.n);
	}
	free(changed);
}

/* ---- data path ------------------------------------------------------------------------ */

uint32_t
lpm_group_member(const struct lpm_fib *fib, const struct lpm_nh *nh, struct rte_mbuf *m)
{
	const struct lpm_group *g;
	uint32_t gi, h;

	memcpy(&gi, nh->macs, 4);
	g = &fib->groups[gi];
	/* The symmetric flow hash (addresses only for a fragment: a fragmented
	 * datagram never splits); the top bits pick the bucket. */
	h = pf_flow_hash(m);
	return __atomic_load_n(&g->bucket[h >> (32 - 6)], __ATOMIC_ACQUIRE);
}

/* ---- show ------------------------------------------------------------------------------ */

void
lpm_learnt_show(const struct pf_stage *st, const struct pf_show_req *req, struct pf_show *sh)
{
	const struct lpm_priv *lp = st->priv;
	const struct lpm_learnt *ln = lp->ln;
	const struct lrn_key *k;
	void *data;
	uint32_t it = 0, code, s;
	int32_t pos;

	if (ln == NULL)
		return;
	while ((pos = rte_hash_iterate(ln->routes, (const void **)&k, &data, &it)) >= 0) {
		const struct lrn_route *r = &ln->r[pos];
		char pfx[24], nh[48], mac[18] = "-", src[16], port[PF_NAME_MAX] = "-";
		union pf_show_val v[6];
		const struct lrn_obj *o;
		bool first = true;

		for (s = 0; s < PF_ROUTE_SRC_MAX; s++) {
			code = r->tgt[s];
			if (code == LRN_NONE)
				continue;
			snprintf(port, sizeof(port), "-");
			if (code & LRN_CONN) {
				snprintf(nh, sizeof(nh), "connected");
				snprintf(port, sizeof(port), "%s",
					 st->env->ports[code & ~LRN_CONN].name);
			} else if (code < LRN_ID_FIRST) {
				snprintf(nh, sizeof(nh), "%s", code == LRN_ID_BLACKHOLE ? "blackhole" :
					 code == LRN_ID_UNREACH ? "unreachable" : "prohibit");
			} else if ((o = &ln->obj[code])->kind == LRN_OBJ_GROUP) {
				snprintf(nh, sizeof(nh), "ecmp(%u)", o->gk.n);
			} else {
				snprintf(nh, sizeof(nh), "%u.%u.%u.%u", o->gw >> 24, (o->gw >> 16) & 0xff,
					 (o->gw >> 8) & 0xff, o->gw & 0xff);
				snprintf(port, sizeof(port), "%s", st->env->ports[o->port].name);
				if (o->resolved)
					pf_show_mac(mac, o->mac);
			}
			if (req->port >= 0 && strcmp(port, st->env->ports[req->port].name) != 0)
				continue;
			snprintf(pfx, sizeof(pfx), "%u.%u.%u.%u/%u", r->ip >> 24, (r->ip >> 16) & 0xff,
				 (r->ip >> 8) & 0xff, r->ip & 0xff, r->len);
			snprintf(src, sizeof(src), "learnt:%u", s);
			v[0].s = pfx;
			v[1].s = nh;
			v[2].s = port;
			v[3].s = mac;
			v[4].s = src;
			/* The winner is the first source; the others wait behind it. */
			v[5].s = !first ? "standby" : r->installed ? "installed" : "shadowed";
			first = false;
			if (!pf_show_row(sh, v))
				return;
		}
	}
}

/* ---- life ------------------------------------------------------------------------------ */

struct lpm_learnt *
lpm_learnt_create(struct pf_stage *st, const struct lpm_learnt_conf *lc, struct pf_errs *errs)
{
	static uint32_t seq;
	struct lpm_learnt *ln = calloc(1, sizeof(*ln));
	struct rte_hash_parameters hp = { 0 };
	char name[RTE_HASH_NAMESIZE];
	uint32_t i, s = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

	RTE_BUILD_BUG_ON(LPM_GROUP_BUCKETS != 64);
	if (ln == NULL)
		goto nomem;
	ln->conf = *lc;
	hp.socket_id = st->socket;
	hp.hash_func = rte_hash_crc;
	snprintf(name, sizeof(name), "pf_lrn_r%u", s);
	hp.name = name;
	hp.entries = lc->routes;
	hp.key_len = sizeof(struct lrn_key);
	ln->routes = rte_hash_create(&hp);
	snprintf(name, sizeof(name), "pf_lrn_n%u", s);
	hp.entries = lc->nexthops;
	hp.key_len = sizeof(struct lrn_nhkey);
	ln->nhs = rte_hash_create(&hp);
	snprintf(name, sizeof(name), "pf_lrn_g%u", s);
	hp.entries = lc->groups;
	hp.key_len = sizeof(struct lrn_grpkey);
	ln->grps = rte_hash_create(&hp);
	/* rte_hash hands out positions up to a little over entries. */
	ln->r = calloc((size_t)lc->routes + 64, sizeof(ln->r[0]));
	ln->obj = calloc(lc->nexthops, sizeof(ln->obj[0]));
	ln->free_id = malloc(sizeof(uint32_t) * lc->nexthops);
	ln->dead_id = malloc(sizeof(uint32_t) * lc->nexthops);
	ln->dead_id_tok = malloc(sizeof(uint64_t) * lc->nexthops);
	ln->free_grp = malloc(sizeof(uint32_t) * lc->groups);
	ln->dead_grp = malloc(sizeof(uint32_t) * lc->groups);
	ln->dead_grp_tok = malloc(sizeof(uint64_t) * lc->groups);
	ln->groups = rte_zmalloc_socket("pf_lrn_groups", sizeof(struct lpm_group) * lc->groups,
					RTE_CACHE_LINE_SIZE, st->socket);
	if (ln->routes == NULL || ln->nhs == NULL || ln->grps == NULL || ln->r == NULL ||
	    ln->obj == NULL || ln->free_id == NULL || ln->dead_id == NULL ||
	    ln->dead_id_tok == NULL || ln->free_grp == NULL || ln->dead_grp == NULL ||
	    ln->dead_grp_tok == NULL || ln->groups == NULL)
		goto nomem;
	for (i = lc->nexthops; i-- > LRN_ID_FIRST;)
		ln->free_id[ln->n_free_id++] = i;
	for (i = 0; i < LRN_ID_FIRST; i++) {
		ln->obj[i].kind = LRN_OBJ_FIXED;
		ln->obj[i].refs = 1;   /* never freed */
	}
	for (i = lc->groups; i-- > 0;)
		ln->free_grp[ln->n_free_grp++] = i;
	return ln;
nomem:
	lpm_learnt_free(ln);
	pf_err_add(errs, NULL, 0, 0, "stage %s: no memory for %u learnt routes (raise EAL -m)",
		   st->conf->name, lc->routes);
	return NULL;
}

void
lpm_learnt_free(struct lpm_learnt *ln)
{
	if (ln == NULL)
		return;
	rte_hash_free(ln->routes);
	rte_hash_free(ln->nhs);
	rte_hash_free(ln->grps);
	free(ln->r);
	free(ln->obj);
	free(ln->free_id);
	free(ln->dead_id);
	free(ln->dead_id_tok);
	free(ln->free_grp);
	free(ln->dead_grp);
	free(ln->dead_grp_tok);
	rte_free(ln->groups);
	free(ln);
}

uint32_t
lpm_learnt_ids(const struct lpm_learnt *ln)
{
	return ln != NULL ? ln->conf.nexthops : 0;
}

uint32_t
lpm_learnt_tbl8(const struct lpm_learnt *ln)
{
	return ln != NULL ? ln->conf.tbl8 : 0;
}

void
lpm_learnt_gauges(const struct lpm_learnt *ln, struct pf_sink *out)
{
	char name[32];
	uint32_t s;

	if (ln == NULL)
		return;
	pf_sink_u64(out, "learnt_routes", __atomic_load_n(&ln->n_routes, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_installed", __atomic_load_n(&ln->n_installed, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_shadowed", __atomic_load_n(&ln->n_shadowed, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_nexthops", __atomic_load_n(&ln->n_nhs, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_groups", __atomic_load_n(&ln->n_groups, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_batches", __atomic_load_n(&ln->batches, __ATOMIC_RELAXED));
	pf_sink_u64(out, "learnt_updates", __atomic_load_n(&ln->ops, __ATOMIC_RELAXED));
	for (s = 0; s < PF_ROUTE_SRC_MAX; s++) {
		uint64_t v = __atomic_load_n(&ln->src_routes[s], __ATOMIC_RELAXED);

		if (v == 0)
			continue;
		snprintf(name, sizeof(name), "learnt_routes.src%u", s);
		pf_sink_u64(out, name, v);
	}
}
