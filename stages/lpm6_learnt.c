/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm6's learnt routes (stages/lpm6_fib.h): the IPv6 table side of the
 * learnt routes' store (stages/lib/pf_lrn.h), lpm_learnt.c's counterpart,
 * updated one route at a time with rte_lpm6_add/rte_lpm6_delete while the
 * data path runs (docs/controlplane.md, "Choosing the FIB").
 *
 * A learnt id is nh[] entry learnt_base + id of every table; a port's
 * connected subnet is nh[lconn_base + port]. A configured route (or a
 * port's own prefix or address) of the same prefix wins over every learnt
 * one: it is kept, "shadowed", not installed. ::/0 is rte_lpm6's two /1
 * halves (it has no depth 0), shared with ::/1 and 8000::/1: each half
 * holds the configured /1, else the learnt /1, else the default (configured,
 * else learnt, else "no route").
 *
 * The table never says which entry the fast path takes: the entry does
 * (max_plen 0 leaves it). A next hop by address whose neighbour is resolved
 * is a plain forward, its MAC in the entry; unresolved it is LPM6_NH_GW (the
 * neighbour table, the neigh edge). An entry is one aligned 16-byte store;
 * the x4 fast path reads its last word and its MACs in two loads, so a
 * forward never becomes another kind at once: a next hop that lost its
 * neighbour is first a forward to its old MAC with max_plen 0 (slow path,
 * still out) and only a grace period later a gateway (pf_lrn.h `leaving`).
 *
 * rte_lpm6 gives a tbl8 group that a delete emptied to the very next add
 * that needs one (a LIFO pool; DPDK 22.11 has no RCU hook for rte_lpm6, as
 * it has for rte_lpm), and a reader that read the pointer to the group
 * before the delete may read it after: another route's entries. So an add
 * that may take groups (a new prefix longer than /24) after a delete that
 * may have freed some (longer than /24) waits until every worker has passed
 * a quiescent point since that delete (pf_rcu_done); counted in the gauge
 * learnt_tbl8_waits. Replaces and deletes never wait; a batch of adds only
 * waits once, after the batch's last delete before it.
 *
 * One writer, the control thread (batches, upkeep, reloads, in turn).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_vect.h>

#include "lpm6_fib.h"
#include "pf_log.h"
#include "pf_services.h"

/* What the store's callbacks write: one table of one stage. */
struct lpm6_tbl {
	struct pf_stage *st;
	const struct pf_lrn *store;
	struct lpm6_fib *fib;
	bool live;                /* readers may be in it (not a table being built) */
};

static inline uint32_t
tgt_hop(const struct lpm6_fib *fib, uint32_t code)
{
	return (code & PF_LRN_CONN) ? fib->lconn_base + (code & ~PF_LRN_CONN) :
	       fib->learnt_base + code;
}

/* Write next-hop entry @p hop of @p fib in one 16-byte store (readers see old or new). */
static void
nh_store(struct lpm6_fib *fib, uint32_t hop, const struct lpm6_nh *e)
{
	RTE_BUILD_BUG_ON(sizeof(*e) != 16);
	_mm_store_si128((__m128i *)&fib->nh[hop], _mm_loadu_si128((const __m128i *)e));
}

/* ---- the store's callbacks ------------------------------------------------------ */

static void
tbl_entry(void *tblp, uint32_t id, const struct pf_lrn_obj *o)
{
	struct lpm6_tbl *t = tblp;
	const struct pf_port_conf *pc;
	struct lpm6_nh e;
	int gw;

	memset(&e, 0, sizeof(e));
	switch (o->kind) {
	case PF_LRN_FIXED:
		e.kind = id == PF_LRN_BLACKHOLE ? LPM6_NH_BLACKHOLE :
			 id == PF_LRN_UNREACH ? LPM6_NH_UNREACH : LPM6_NH_PROHIBIT;
		break;
	case PF_LRN_GROUP:
		e.kind = LPM6_NH_GROUP;
		memcpy(e.macs, &o->group, 4);
		break;
	case PF_LRN_NH:
		pc = &t->st->env->ports[o->port];
		e.port = (uint8_t)o->port;
		memcpy(e.macs + 6, pc->mac, 6);
		if (o->resolved) {
			/* Leaving: still a forward, off the fast path (see the file comment). */
			memcpy(e.macs, o->mac, 6);
			e.kind = LPM6_NH_FWD;
			e.max_plen = pc->max_frame > RTE_ETHER_HDR_LEN + 40 && !o->leaving ?
				     (uint16_t)(pc->max_frame - RTE_ETHER_HDR_LEN - 40) : 0;
			break;
		}
		/* The neigh stage learns the gateway's address from its id. */
		gw = pf_neigh_gw6_id(t->st->edge_table[LPM6_EDGE_NEIGH], o->gw);
		if (gw < 0) {
			PF_LOG(WARNING, "lpm6 %s: more than %d IPv6 gateways in the neighbour table: "
			       "a learnt one is not resolved", t->st->conf->name, PF_NEIGH_GW6_MAX);
			gw = PF_NEIGH_GW6_MAX;   /* unknown to neigh: dropped there by name */
		}
		memcpy(e.macs, &gw, 4);
		e.kind = LPM6_NH_GW;
		break;
	default:
		e.kind = LPM6_NH_BLACKHOLE;
		break;
	}
	nh_store(t->fib, t->fib->learnt_base + id, &e);
}

/* The hop of ::/0 without a /1 route: configured, learnt, or "no route". */
static uint32_t
dflt_hop(const struct lpm6_fib *fib)
{
	if (fib->dflt_cfg)
		return fib->dflt;
	return fib->lrn_dflt != PF_LRN_NONE ? tgt_hop(fib, fib->lrn_dflt) : fib->miss;
}

/* Half @p h of the address space (::/1, 8000::/1) after a change of what it holds. */
static void
half_write(struct lpm6_fib *fib, unsigned int h)
{
	uint8_t pfx[16] = { [0] = (uint8_t)(h << 7) };
	uint32_t hop = fib->half_cfg[h] != UINT32_MAX ? fib->half_cfg[h] :
		       fib->lrn_half[h] != PF_LRN_NONE ? tgt_hop(fib, fib->lrn_half[h]) :
		       dflt_hop(fib);

	/* The rule exists (the build put both halves in): a replace takes no group. */
	rte_lpm6_add(fib->lpm, pfx, 1, hop);
}

/* ::/0 (@p len 0) or a /1: the two halves rte_lpm6 holds them as. */
static void
half_install(struct lpm6_fib *fib, const uint8_t *prefix, uint8_t len, uint32_t code,
	     uint8_t *in)
{
	unsigned int h = prefix[0] >> 7;

	if (len == 0) {
		if (fib->dflt_cfg)
			return;   /* a configured default route: it wins */
		fib->lrn_dflt = code;
		half_write(fib, 0);
		half_write(fib, 1);
	} else {
		if (fib->half_cfg[h] != UINT32_MAX)
			return;
		fib->lrn_half[h] = code;
		half_write(fib, h);
	}
	*in = code != PF_LRN_NONE;
}

/* A group a delete may have freed is taken again only a grace period later. */
static void
tbl8_gate(struct lpm6_tbl *t)
{
	struct lpm6_fib *fib = t->fib;
	struct lpm6_priv *lp = t->st->priv;

	if (!fib->w.freed)
		return;
	if (!pf_rcu_done(fib->w.free_tok)) {
		__atomic_store_n(&lp->g_waits, lp->g_waits + 1, __ATOMIC_RELAXED);
		/* A grace period is microseconds on workers of their own; where
		 * lcores share CPUs the workers need this one to get there. */
		while (!pf_rcu_done(fib->w.free_tok))
			sched_yield();
	}
	fib->w.freed = false;
}

static int
tbl_install(void *tblp, const uint8_t *prefix, uint8_t len, uint32_t code, uint8_t *in)
{
	struct lpm6_tbl *t = tblp;
	struct lpm6_fib *fib = t->fib;
	uint32_t hop;
	int present;

	*in = 0;
	if (len <= 1) {
		half_install(fib, prefix, len, code, in);
		return 0;
	}
	present = rte_lpm6_is_rule_present(fib->lpm, (uint8_t *)(uintptr_t)prefix, len, &hop) == 1;
	if (present && hop < fib->lconn_base)
		return 0;   /* a configured route (or a port's own prefix): it wins */
	if (code == PF_LRN_NONE) {
		if (present && rte_lpm6_delete(fib->lpm, (uint8_t *)(uintptr_t)prefix, len) == 0 &&
		    len > 24 && t->live) {
			fib->w.freed = true;
			fib->w.free_tok = pf_rcu_start();
		}
		return 0;
	}
	if (!present && len > 24 && t->live)
		tbl8_gate(t);
	/* -ENOSPC: no group or rule left; the table keeps what it had (rte_lpm6 checks first). */
	if (rte_lpm6_add(fib->lpm, (uint8_t *)(uintptr_t)prefix, len, tgt_hop(fib, code)) < 0)
		return -ENOSPC;
	*in = 1;
	return 0;
}

static bool
tbl_holds(void *tblp, const uint8_t *prefix, uint8_t len, uint32_t code)
{
	struct lpm6_tbl *t = tblp;
	uint32_t hop;

	if (len == 0)
		return !t->fib->dflt_cfg;
	if (len == 1)
		return t->fib->half_cfg[prefix[0] >> 7] == UINT32_MAX;
	return rte_lpm6_is_rule_present(t->fib->lpm, (uint8_t *)(uintptr_t)prefix, len, &hop) == 1 &&
	       hop == tgt_hop(t->fib, code);
}

static bool
tbl_resolve(void *tblp, const struct pf_lrn_obj *o, uint8_t *mac)
{
	struct lpm6_tbl *t = tblp;
	const struct lpm6_priv *lp = t->st->priv;
	struct pf_neigh_key nk;

	pf_neigh_key_ip6(&nk, o->port, o->gw);
	return pf_neigh_resolve(lp->nt, &nk, mac);
}

/*
 * Next hops changed resolution: the entries say it all (no flag in the
 * table), so a next hop that started leaving gets its slow entry now.
 */
static void
tbl_resolution(void *tblp, const uint8_t *changed)
{
	struct lpm6_tbl *t = tblp;
	uint32_t id, n = pf_lrn_ids(t->store);

	for (id = 0; id < n; id++)
		if (changed[id / 8] & (1u << (id % 8)))
			tbl_entry(t, id, pf_lrn_obj(t->store, id));
}

static const struct pf_lrn_ops lpm6_lrn_ops = {
	.install = tbl_install,
	.entry = tbl_entry,
	.resolution = tbl_resolution,
	.resolve = tbl_resolve,
	.holds = tbl_holds,
};

static struct lpm6_tbl
tbl_of(struct pf_stage *st, struct lpm6_fib *fib, bool live)
{
	const struct lpm6_priv *lp = st->priv;

	return (struct lpm6_tbl){ .st = st, .store = lp->ln, .fib = fib, .live = live };
}

/* ---- the stage's side ------------------------------------------------------------- */

int
lpm6_learnt_apply(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
		  struct pf_route_result *res)
{
	struct lpm6_priv *lp = st->priv;
	struct lpm6_tbl t = tbl_of(st, lp->fib, true);

	/* None of the batch is IPv6: another stage's (lpm). */
	if (lp->ln == NULL || (pf_lrn_apply(lp->ln, &lpm6_lrn_ops, &t, st->env, ops, n, res) == 0 &&
			       n != 0))
		return -ENOTSUP;
	return 0;
}

int
lpm6_learnt_fill(const struct pf_lrn *ln, struct pf_stage *st, struct lpm6_fib *fib,
		 struct pf_errs *errs)
{
	struct lpm6_tbl t = tbl_of(st, fib, false);

	fib->groups = pf_lrn_groups(ln);
	/* Not running yet: nothing of the store changes (a refused reload leaves it). */
	return pf_lrn_fill_stage(ln, st, &lpm6_lrn_ops, &t, errs);
}

void
lpm6_learnt_published(struct pf_stage *st, struct pf_lrn *ln, struct lpm6_fib *fib)
{
	struct lpm6_tbl t = tbl_of(st, fib, true);

	pf_lrn_recount(ln, &lpm6_lrn_ops, &t);
}

void
lpm6_learnt_upkeep(struct pf_stage *st, uint64_t now)
{
	struct lpm6_priv *lp = st->priv;
	struct lpm6_tbl t;

	if (!pf_lrn_due(lp->ln, now))
		return;
	t = tbl_of(st, lp->fib, true);
	pf_lrn_stage_upkeep(lp->ln, st, &lpm6_lrn_ops, &t);
}
