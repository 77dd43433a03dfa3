/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm's learnt routes (stages/lpm_fib.h): the IPv4 table side of the learnt
 * routes' store (stages/lib/pf_lrn.h), updated one route at a time while the
 * data path runs.
 *
 * A learnt id is nh[] entry learnt_base + id of every table; a port's
 * connected subnet is its configured connected entry. A configured route of
 * the same prefix wins over every learnt one (the prefix is then "shadowed":
 * kept, not installed). A next hop by address whose neighbour is resolved is
 * a plain forward (its MAC in the entry, no LPM_HOP_SLOW in the table: the x4
 * fast path takes it); unresolved, it is LPM_NH_GW (slow path, the neighbour
 * table, the neigh edge).
 *
 * One writer, the control thread (batches, upkeep, reloads, in turn);
 * readers never lock: every table entry and next-hop entry (16 bytes, one
 * aligned vector store) is one store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_vect.h>

#include "lpm_fib.h"
#include "pf_log.h"

/* What the store's callbacks write: one table of one stage. */
struct lpm_tbl {
	const struct pf_stage *st;
	const struct pf_lrn *store;
	struct lpm_fib *fib;
	const struct pf_neigh_table *nt;
	uint32_t reflagged;
};

static inline uint32_t
ip_of(const uint8_t *prefix)
{
	uint32_t ip;

	memcpy(&ip, prefix, 4);
	return rte_be_to_cpu_32(ip);
}

static inline uint32_t
tgt_hop(const struct lpm_fib *fib, uint32_t code)
{
	return (code & PF_LRN_CONN) ? fib->conn_base + (code & ~PF_LRN_CONN) :
	       fib->learnt_base + code;
}

/*
 * The hop value a table entry holds for target @p code: with LPM_HOP_SLOW
 * unless a next hop resolved and not leaving (the x4 fast path then reads
 * its entry without a look at its kind).
 */
static inline uint32_t
hop_flagged(const struct lpm_tbl *t, uint32_t code)
{
	uint32_t hop = tgt_hop(t->fib, code);

	return pf_lrn_fast(t->store, code) ? hop : hop | LPM_HOP_SLOW;
}

/* Write next-hop entry @p hop of @p fib in one 16-byte store (readers see old or new). */
static void
nh_store(struct lpm_fib *fib, uint32_t hop, const struct lpm_nh *e)
{
	RTE_BUILD_BUG_ON(sizeof(*e) != 16);
	_mm_store_si128((__m128i *)&fib->nh[hop], _mm_loadu_si128((const __m128i *)e));
}

/* ---- the store's callbacks ------------------------------------------------------ */

static void
tbl_entry(void *tblp, uint32_t id, const struct pf_lrn_obj *o)
{
	struct lpm_tbl *t = tblp;
	const struct pf_port_conf *pc;
	struct lpm_nh e;
	uint32_t gw;

	memset(&e, 0, sizeof(e));
	switch (o->kind) {
	case PF_LRN_FIXED:
		e.kind = id == PF_LRN_BLACKHOLE ? LPM_NH_BLACKHOLE :
			 id == PF_LRN_UNREACH ? LPM_NH_UNREACH : LPM_NH_PROHIBIT;
		break;
	case PF_LRN_GROUP:
		e.kind = LPM_NH_GROUP;
		memcpy(e.macs, &o->group, 4);
		break;
	case PF_LRN_NH:
		pc = &t->st->env->ports[o->port];
		e.port = (uint8_t)o->port;
		memcpy(e.macs + 6, pc->mac, 6);
		if (o->resolved) {
			memcpy(e.macs, o->mac, 6);
			e.kind = LPM_NH_FWD;
			e.max_len = pc->max_frame > RTE_ETHER_HDR_LEN ?
				    (uint16_t)(pc->max_frame - RTE_ETHER_HDR_LEN) : 0;
		} else {
			gw = ip_of(o->gw);
			memcpy(e.macs, &gw, 4);
			e.kind = LPM_NH_GW;
		}
		break;
	default:
		e.kind = LPM_NH_BLACKHOLE;
		break;
	}
	nh_store(t->fib, t->fib->learnt_base + id, &e);
}

/*
 * Whether the table's route @p ip/@p len -> @p hop is a learnt one: its hop
 * a learnt id, or a port's connected subnet on a prefix that is not the
 * port's own (those are configured).
 */
static bool
learnt_in_table(const struct lpm_tbl *t, uint32_t ip, uint8_t len, uint32_t hop)
{
	const struct lpm_fib *fib = t->fib;
	const struct pf_port_conf *pc;
	uint32_t h = LPM_HOP(hop);

	if (h >= fib->learnt_base)
		return true;
	if (h < fib->conn_base || h >= fib->conn_base + fib->n_ports)
		return false;
	pc = &t->st->env->ports[h - fib->conn_base];
	return !(pc->has_ipv4 && pc->ipv4_len == len && (pc->ipv4 & ~0u << (32 - len)) == ip);
}

static int
tbl_install(void *tblp, const uint8_t *prefix, uint8_t len, uint32_t code, uint8_t *in)
{
	struct lpm_tbl *t = tblp;
	struct lpm_fib *fib = t->fib;
	uint32_t ip = ip_of(prefix), hop;
	int rc;

	*in = 0;
	if (len == 0) {
		if (fib->dflt_cfg)
			return 0;
		__atomic_store_n(&fib->dflt, code == PF_LRN_NONE ? fib->miss : tgt_hop(fib, code),
				 __ATOMIC_RELEASE);
		*in = code != PF_LRN_NONE;
		return 0;
	}
	if (pf_dir24_get(fib->dir, ip, len, &hop) == 0 && !learnt_in_table(t, ip, len, hop))
		return 0;   /* a configured route: it wins */
	if (code == PF_LRN_NONE) {
		if (pf_dir24_get(fib->dir, ip, len, &hop) == 0)
			pf_dir24_del(fib->dir, ip, len);
		return 0;
	}
	rc = pf_dir24_add(fib->dir, ip, len, hop_flagged(t, code));
	if (rc == 0)
		*in = 1;
	return rc;
}

static bool
tbl_holds(void *tblp, const uint8_t *prefix, uint8_t len, uint32_t code)
{
	struct lpm_tbl *t = tblp;
	uint32_t hop;

	if (len == 0)
		return !t->fib->dflt_cfg;
	return pf_dir24_get(t->fib->dir, ip_of(prefix), len, &hop) == 0 &&
	       LPM_HOP(hop) == LPM_HOP(tgt_hop(t->fib, code));
}

static bool
tbl_resolve(void *tblp, const struct pf_lrn_obj *o, uint8_t *mac)
{
	struct lpm_tbl *t = tblp;
	struct pf_neigh_key nk;

	if (t->nt == NULL)
		return false;
	pf_neigh_key_ip4(&nk, o->port, ip_of(o->gw));
	return pf_neigh_resolve(t->nt, &nk, mac);
}

struct reflag {
	struct lpm_tbl *t;
	const uint8_t *changed;   /* bit per learnt id */
};

static void
reflag_route(void *arg, uint32_t ip, uint8_t len, uint32_t hop)
{
	struct reflag *rf = arg;
	struct lpm_fib *fib = rf->t->fib;
	uint32_t h = LPM_HOP(hop), id;

	if (h < fib->learnt_base)
		return;
	id = h - fib->learnt_base;
	if (!(rf->changed[id / 8] & (1u << (id % 8))))
		return;
	if (hop_flagged(rf->t, id) != hop) {
		pf_dir24_add(fib->dir, ip, len, hop_flagged(rf->t, id));
		rf->t->reflagged++;
	}
}

/* Next hops changed resolution: their routes' LPM_HOP_SLOW flag follows. */
static void
tbl_resolution(void *tblp, const uint8_t *changed)
{
	struct lpm_tbl *t = tblp;
	struct reflag rf = { t, changed };

	pf_dir24_walk(t->fib->dir, reflag_route, &rf);
}

static const struct pf_lrn_ops lpm_lrn_ops = {
	.install = tbl_install,
	.entry = tbl_entry,
	.resolution = tbl_resolution,
	.resolve = tbl_resolve,
	.holds = tbl_holds,
};

static struct lpm_tbl
tbl_of(const struct pf_stage *st, struct lpm_fib *fib)
{
	const struct lpm_priv *lp = st->priv;

	return (struct lpm_tbl){ .st = st, .store = lp->ln, .fib = fib, .nt = lp->nt };
}

/* ---- the stage's side ------------------------------------------------------------- */

int
lpm_learnt_apply(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
		 struct pf_route_result *res)
{
	struct lpm_priv *lp = st->priv;
	struct lpm_tbl t = tbl_of(st, lp->fib);

	/* None of the batch is IPv4: another stage's (lpm6). */
	if (lp->ln == NULL || (pf_lrn_apply(lp->ln, &lpm_lrn_ops, &t, st->env, ops, n, res) == 0 &&
			       n != 0))
		return -ENOTSUP;
	return 0;
}

int
lpm_learnt_fill(const struct pf_lrn *ln, struct pf_stage *st, struct lpm_fib *fib,
		struct pf_errs *errs)
{
	struct lpm_tbl t = tbl_of(st, fib);

	fib->groups = pf_lrn_groups(ln);
	/* Not running yet: nothing of the store changes (a refused reload leaves it). */
	return pf_lrn_fill_stage(ln, st, &lpm_lrn_ops, &t, errs);
}

void
lpm_learnt_published(struct pf_stage *st, struct pf_lrn *ln, struct lpm_fib *fib)
{
	struct lpm_tbl t = tbl_of(st, fib);

	pf_lrn_recount(ln, &lpm_lrn_ops, &t);
}

void
lpm_learnt_upkeep(struct pf_stage *st, uint64_t now)
{
	struct lpm_priv *lp = st->priv;
	struct lpm_tbl t;

	if (!pf_lrn_due(lp->ln, now))
		return;
	t = tbl_of(st, lp->fib);
	pf_dir24_reclaim(t.fib->dir);
	if (pf_lrn_stage_upkeep(lp->ln, st, &lpm_lrn_ops, &t) != 0)
		PF_LOG(DEBUG, "lpm %s: %u routes re-flagged", st->conf->name, t.reflagged);
}
