/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lpm stage's table (control thread): a complete struct lpm_fib built
 * from the configuration (next hops with their MACs, routes in length
 * order written straight into rte_lpm's DIR-24-8 tables, the ports'
 * connected subnets and own addresses), at init and beside the running one
 * for a reload (ctl.swap: the runtime publishes it and frees the old one
 * after a grace period); the learnt routes' ops (stages/lpm_learnt.c); free.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_malloc.h>

#include "lpm.h"
#include "lpm_fib.h"
#include "pf_log.h"

static void
fib_free(struct lpm_fib *fib)
{
	if (fib == NULL)
		return;
	pf_dir24_free(fib->dir);
	rte_lpm_free(fib->lpm);
	rte_free(fib);
}

/* Count the tbl8 groups rte_lpm will use: one per /24 holding a route longer than /24. */
static int
count_tbl8(const struct pf_rconf *rt, const struct pf_stage_env *env, uint32_t *out)
{
	uint64_t *seen = calloc((1u << 24) / 64, sizeof(uint64_t));
	uint32_t i, k, n = 0, extra[2 * PF_MAX_PORTS], n_extra = 0;

	if (seen == NULL)
		return -ENOMEM;
	for (i = 0; i < env->n_ports; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		if (!pc->has_ipv4)
			continue;
		extra[n_extra++] = pc->ipv4 >> 8;
		if (pc->ipv4_len <= 30)
			extra[n_extra++] = (pc->ipv4 | ~(~0u << (32 - pc->ipv4_len))) >> 8;
	}
	for (i = 0; i < rt->n_routes + n_extra; i++) {
		if (i < rt->n_routes) {
			if (pf_rconf_route(rt, i)->len <= 24)
				continue;
			k = pf_rconf_ip4(pf_rconf_route(rt, i)->prefix) >> 8;
		} else {
			k = extra[i - rt->n_routes];
		}
		if (!(seen[k / 64] & (1ull << (k % 64)))) {
			seen[k / 64] |= 1ull << (k % 64);
			n++;
		}
	}
	free(seen);
	*out = n;
	return 0;
}

static inline struct rte_lpm_tbl_entry
tbl_entry(uint32_t next_hop, bool group, uint8_t depth)
{
	struct rte_lpm_tbl_entry e = {
		.next_hop = next_hop, .valid = 1, .valid_group = group, .depth = depth,
	};

	return e;
}

/*
 * Write one route into the DIR-24-8 tables of @p lpm. Routes must come in
 * order of increasing length (a longer prefix overwrites a shorter one) and
 * every route up to /24 before any longer one (then no tbl8 group exists
 * yet when tbl24 is written). A route longer than /24 takes a tbl8 group for
 * its /24, seeded with what tbl24 held there.
 */
static int
fib_fill(const struct lpm_fib *fib, uint32_t ip, uint8_t len, uint32_t nh, uint32_t *next_group,
	 uint32_t n_groups)
{
	struct rte_lpm *lpm = fib->lpm;
	struct rte_lpm_tbl_entry *t24 = lpm->tbl24, *t8, e;
	uint32_t i, first, n, g;

	/* The table says which next hops the fast path takes (lpm_x4_group). */
	if (fib->nh[nh].max_len == 0)
		nh |= LPM_HOP_SLOW;
	/* With learnt routes, the trie knows every route the table holds. */
	if (fib->dir != NULL && pf_dir24_note(fib->dir, ip, len, nh) < 0)
		return -ENOSPC;
	if (len <= 24) {
		first = ip >> 8;
		n = 1u << (24 - len);
		e = tbl_entry(nh, false, len);
		for (i = 0; i < n; i++)
			t24[first + i] = e;
		return 0;
	}
	e = t24[ip >> 8];
	if (!(e.valid && e.valid_group)) {
		if (*next_group == n_groups)
			return -ENOSPC;
		g = (*next_group)++;
		t8 = &lpm->tbl8[g * RTE_LPM_TBL8_GROUP_NUM_ENTRIES];
		for (i = 0; i < RTE_LPM_TBL8_GROUP_NUM_ENTRIES; i++) {
			t8[i] = e.valid ? tbl_entry(e.next_hop, true, e.depth) : tbl_entry(0, true, 0);
			t8[i].valid = e.valid;
		}
		t24[ip >> 8] = tbl_entry(g, true, 0);
	}
	t8 = &lpm->tbl8[t24[ip >> 8].next_hop * RTE_LPM_TBL8_GROUP_NUM_ENTRIES];
	first = ip & 0xff;
	n = 1u << (32 - len);
	e = tbl_entry(nh, true, len);
	for (i = 0; i < n; i++)
		t8[first + i] = e;
	return 0;
}

/*
 * Connected subnets (the ports' ipv4 prefixes) of lengths *@p from to
 * @p upto, to next hop @p base + port: filled in length order with the
 * routes, before the routes of the same length (a configured route wins).
 */
static int
fib_fill_connected(const struct lpm_fib *fib, const struct pf_stage_env *env, uint32_t base,
		   uint8_t *from, uint8_t upto, uint32_t *next_group, uint32_t n_groups)
{
	uint32_t len, i;
	int rc = 0;

	for (len = *from; len <= upto && rc == 0; len++)
		for (i = 0; i < env->n_ports && rc == 0; i++) {
			const struct pf_port_conf *pc = &env->ports[i];

			if (pc->has_ipv4 && pc->ipv4_len == len && len != 0 && len < 32)
				rc = fib_fill(fib, pc->ipv4 & ~0u << (32 - len), (uint8_t)len,
					      base + i, next_group, n_groups);
		}
	*from = (uint8_t)(upto + 1);
	return rc;
}

/* Route indexes of @p rt ordered by prefix length (counting sort), or NULL. */
static uint32_t *
routes_by_len(const struct pf_rconf *rt)
{
	uint32_t start[RTE_LPM_MAX_DEPTH + 2] = { 0 }, i;
	uint32_t *idx = malloc(sizeof(uint32_t) * RTE_MAX(rt->n_routes, 1u));

	if (idx == NULL)
		return NULL;
	for (i = 0; i < rt->n_routes; i++)
		start[pf_rconf_route(rt, i)->len + 1]++;
	for (i = 1; i <= RTE_LPM_MAX_DEPTH + 1; i++)
		start[i] += start[i - 1];
	for (i = 0; i < rt->n_routes; i++)
		idx[start[pf_rconf_route(rt, i)->len]++] = i;
	return idx;
}

/*
 * Build a complete table for @p cfg: next hops (source MAC from the egress
 * port), routes, then the ports' own addresses (which win over equal
 * routes). Sized from the route set: tbl8 groups exactly as needed plus a
 * little slack, rules for every route.
 */
static int
fib_build(const struct pf_stage *st, const struct pf_stage_conf *sc, struct lpm_fib **out,
	  struct pf_errs *errs)
{
	static uint32_t seq;
	const char *stage = sc->name;
	const struct lpm_cfg *cfg = sc->cfg;
	/* The ports of the topology being loaded (a reload may add or remove some). */
	const struct pf_stage_env *env = sc->env;
	const struct pf_rconf *rt = &cfg->rt;
	const struct pf_lrn *ln = ((const struct lpm_priv *)st->priv)->ln;
	const struct pf_lrn_conf *lrn = pf_lrn_conf_of(ln);
	struct rte_lpm_config lc = { 0 };
	struct lpm_fib *fib;
	char name[RTE_LPM_NAMESIZE];
	uint32_t i, n_nh, need, groups = 0, nports = env->n_ports, *order;
	uint64_t t0 = rte_get_timer_cycles();
	/* Connected routes need neighbour resolution: only with the neigh edge. */
	uint8_t conn = (st->edge_connected & (1u << LPM_EDGE_NEIGH)) ? 0 : 33;
	int rc;

	*out = NULL;
	rc = count_tbl8(rt, env, &need);
	if (rc < 0)
		return rc;
	n_nh = rt->n_nh + 3 * nports;
	/* The learnt ids after "no route" (nh[n_nh]). */
	fib = rte_zmalloc_socket("pf_lpm_fib", sizeof(*fib) + (n_nh + 1 + lrn->nexthops) *
				 sizeof(fib->nh[0]), RTE_CACHE_LINE_SIZE, st->socket);
	if (fib == NULL)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: out of memory", stage);
	fib->mode = cfg->mode;
	fib->n_nh = n_nh;
	fib->n_user_nh = rt->n_nh;
	fib->miss = n_nh;
	fib->dflt = fib->miss;
	fib->n_ports = nports;
	fib->conn_base = rt->n_nh + 2 * nports;
	fib->learnt_base = n_nh + 1;
	for (i = 0; i < rt->n_nh; i++) {
		const struct pf_port_conf *pc = &env->ports[rt->nh[i].port];

		if (!pc->has_mac) {
			fib_free(fib);
			return pf_err_add(errs, NULL, 0, 0,
					  "stage %s: next hop %s: port %s has no MAC address",
					  stage, rt->nh[i].name, pc->name);
		}
		memcpy(fib->nh[i].macs, rt->nh[i].mac, 6);
		memcpy(fib->nh[i].macs + 6, pc->mac, 6);
		fib->nh[i].port = (uint8_t)rt->nh[i].port;
		fib->nh[i].kind = LPM_NH_FWD;
		fib->nh[i].max_len = pc->max_frame > RTE_ETHER_HDR_LEN ?
				     (uint16_t)(pc->max_frame - RTE_ETHER_HDR_LEN) : 0;
		if (rt->nh[i].has_gw) {
			uint32_t gw = pf_rconf_ip4(rt->nh[i].gw);

			/* max_len 0 keeps it off the fast path: lpm_ip4 resolves it. */
			if (conn != 0) {
				fib_free(fib);
				return pf_err_add(errs, NULL, 0, 0,
						  "stage %s: next hop %s is an address: wire the neigh edge (next: { neigh: ... })",
						  stage, rt->nh[i].name);
			}
			memcpy(fib->nh[i].macs, &gw, 4);
			fib->nh[i].kind = LPM_NH_GW;
			fib->nh[i].max_len = 0;
		}
	}
	for (i = 0; i < nports; i++) {
		fib->nh[rt->n_nh + 2 * nports + i].kind = LPM_NH_CONN;
		fib->nh[rt->n_nh + 2 * nports + i].port = (uint8_t)i;
		if (env->ports[i].has_mac)
			memcpy(fib->nh[rt->n_nh + 2 * nports + i].macs + 6, env->ports[i].mac, 6);
		fib->nh[rt->n_nh + i].kind = LPM_NH_LOCAL;
		fib->nh[rt->n_nh + i].port = (uint8_t)i;
		fib->nh[rt->n_nh + nports + i].kind = LPM_NH_DBCAST;
		fib->nh[rt->n_nh + nports + i].port = (uint8_t)i;
	}
	fib->fast_len = UINT16_MAX;
	for (i = 0; i < n_nh; i++)
		if (fib->nh[i].max_len != 0)
			fib->fast_len = RTE_MIN(fib->fast_len, fib->nh[i].max_len);
	/* A learnt next hop may be on any port: the least of them all. */
	for (i = 0; ln != NULL && i < nports; i++)
		if (env->ports[i].max_frame > RTE_ETHER_HDR_LEN)
			fib->fast_len = RTE_MIN(fib->fast_len,
						(uint16_t)(env->ports[i].max_frame - RTE_ETHER_HDR_LEN));
	/* The tables are filled directly (see fib_fill): no rules table needed. */
	lc.max_rules = 1;
	lc.number_tbl8s = need + 1 + lrn->tbl8;
	snprintf(name, sizeof(name), "pf_lpm%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	fib->lpm = rte_lpm_create(name, st->socket, &lc);
	order = routes_by_len(rt);
	if (fib->lpm == NULL || order == NULL) {
		free(order);
		fib_free(fib);
		return pf_err_add(errs, NULL, 0, 0,
				  "stage %s: cannot create an LPM table for %u routes, %u tbl8 groups: %s (raise EAL -m)",
				  stage, rt->n_routes, lc.number_tbl8s, rte_strerror(rte_errno));
	}
	fib->n_tbl8 = lc.number_tbl8s;
	fib->n_routes = rt->n_routes;
	if (ln != NULL) {
		/* Routes are noted as they are written (fib_fill); groups are handed
		 * out from 0 by the build, the rest by the trie afterwards. */
		fib->dir = pf_dir24_create(fib->lpm, 0, lc.number_tbl8s,
					   rt->n_routes + 3 * nports + lrn->routes, st->socket);
		if (fib->dir == NULL) {
			free(order);
			fib_free(fib);
			return pf_err_add(errs, NULL, 0, 0, "stage %s: no memory for the route trie",
					  stage);
		}
	}
	for (i = 0; i < rt->n_routes && rc == 0; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(rt, order[i]);

		if (conn <= r->len)
			rc = fib_fill_connected(fib, env, rt->n_nh + 2 * nports, &conn,
						r->len, &groups, lc.number_tbl8s);
		if (rc != 0)
			break;
		if (r->len == 0) {
			fib->dflt = r->nh;
			fib->dflt_cfg = true;
		} else
			rc = fib_fill(fib, pf_rconf_ip4(r->prefix), r->len, r->nh, &groups,
				      lc.number_tbl8s);
	}
	free(order);
	if (rc == 0 && conn <= 32)
		rc = fib_fill_connected(fib, env, rt->n_nh + 2 * nports, &conn, 32, &groups,
					lc.number_tbl8s);
	/* The ports' own addresses last: /32s that win over any equal route. */
	for (i = 0; i < nports && rc == 0; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		if (!pc->has_ipv4)
			continue;
		if (pc->ipv4_len <= 30)
			rc = fib_fill(fib, pc->ipv4 | ~(~0u << (32 - pc->ipv4_len)), 32,
				      rt->n_nh + nports + i, &groups, lc.number_tbl8s);
		if (rc == 0)
			rc = fib_fill(fib, pc->ipv4, 32, rt->n_nh + i, &groups, lc.number_tbl8s);
	}
	if (rc < 0) {
		fib_free(fib);
		return pf_err_add(errs, NULL, 0, 0, "stage %s: tbl8 groups exhausted (%u)", stage,
				  lc.number_tbl8s);
	}
	if (ln != NULL) {
		/* The groups the build took are in use; then the learnt routes. */
		pf_dir24_reserve(fib->dir, groups);
		rc = lpm_learnt_fill(ln, (struct pf_stage *)(uintptr_t)st, fib, errs);
		if (rc < 0) {
			fib_free(fib);
			return rc;
		}
	}
	fib->mem_bytes = sizeof(struct rte_lpm) + (uint64_t)lc.number_tbl8s *
			 RTE_LPM_TBL8_GROUP_NUM_ENTRIES * sizeof(struct rte_lpm_tbl_entry) +
			 sizeof(*fib) + (n_nh + 1 + lrn->nexthops) * sizeof(fib->nh[0]);
	PF_LOG(INFO, "lpm %s: %u routes, %u next hops, %u tbl8 groups, %.1f MiB, built in %.2f s",
	       stage, rt->n_routes, rt->n_nh, groups,
	       (double)fib->mem_bytes / (1 << 20),
	       (double)(rte_get_timer_cycles() - t0) / (double)rte_get_timer_hz());
	*out = fib;
	return 0;
}

static void
gauges_set(struct lpm_priv *lp, const struct lpm_fib *fib)
{
	__atomic_store_n(&lp->g_routes, fib->n_routes, __ATOMIC_RELAXED);
	__atomic_store_n(&lp->g_nh, fib->n_user_nh, __ATOMIC_RELAXED);
	__atomic_store_n(&lp->g_tbl8, fib->n_tbl8, __ATOMIC_RELAXED);
	__atomic_store_n(&lp->g_mem, fib->mem_bytes, __ATOMIC_RELAXED);
}

/*
 * The ports' MACs, addresses and frame limits the data path answers and
 * routes with (init, and ports added or removed live: ctl.ports, before
 * the new table routes to an added port; PF_STAGE_PORT_TABLES rebuilds
 * the table with its connected subnet). An added port's entries are
 * written before its bit; a kept port's are rewritten with what they hold.
 */
void
lpm_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct lpm_priv *lp = st->priv;
	const struct pf_stage_env *env = st->env;
	uint32_t has_ip = 0;
	uint16_t i;

	for (i = 0; i < env->n_ports; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		/* A port that goes keeps its MAC and limit while what was routed to it drains. */
		if (!pf_port_present(pc))
			continue;
		if (pc->has_mac)
			memcpy(lp->port_mac[i].addr_bytes, pc->mac, 6);
		lp->max_frame[i] = pc->max_frame;
		if (pc->has_ipv4) {
			lp->port_ip[i] = pc->ipv4;
			has_ip |= 1u << i;
		}
	}
	__atomic_store_n(&lp->port_has_ip, has_ip, __ATOMIC_RELEASE);
}

int
lpm_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct lpm_priv *lp = st->priv;
	int rc;

	/* lpm_meta_word reads these four bytes as one word. */
	RTE_BUILD_BUG_ON(offsetof(struct pf_meta, l3_len) != offsetof(struct pf_meta, l2_len) + 1 ||
			 offsetof(struct pf_meta, cls) != offsetof(struct pf_meta, l2_len) + 2 ||
			 offsetof(struct pf_meta, flags) != offsetof(struct pf_meta, l2_len) + 3 ||
			 RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN);
	RTE_BUILD_BUG_ON(sizeof(struct lpm_nh) != 16 || PF_MAX_PORTS > UINT8_MAX);
	lpm_ports(st, 0, 0, true);
	lp->icmp = (st->edge_connected & (1u << LPM_EDGE_ICMP)) != 0;
	lp->frag = (st->edge_connected & (1u << LPM_EDGE_FRAG)) != 0;
	lp->host = (st->edge_connected & (1u << LPM_EDGE_HOST)) != 0;
	lp->slow = (st->edge_connected &
		    (1u << LPM_EDGE_ICMP | 1u << LPM_EDGE_FRAG | 1u << LPM_EDGE_NEIGH |
		     1u << LPM_EDGE_HOST)) != 0;
	if (st->edge_connected & (1u << LPM_EDGE_NEIGH))
		lp->nt = st->edge_table[LPM_EDGE_NEIGH];
	if (((const struct lpm_cfg *)st->conf->cfg)->learnt.routes != 0) {
		lp->ln = pf_lrn_open(st, &((const struct lpm_cfg *)st->conf->cfg)->learnt, errs);
		if (lp->ln == NULL)
			return -ENOMEM;
	}
	rc = fib_build(st, st->conf, &lp->fib, errs);
	if (rc < 0)
		return rc;
	gauges_set(lp, lp->fib);
	if (lp->ln != NULL)
		lpm_learnt_published(st, lp->ln, lp->fib);
	return 0;
}

/* ---- live update -------------------------------------------------------- */

/*
 * Replace the whole table: build the new one beside the running one (a
 * failure changes nothing and the old table keeps forwarding), publish it
 * with one pointer store, wait until every worker lcore has finished the
 * pass it was in (process_burst reads the pointer once per burst), then
 * free the old one: the runtime's swap does the three steps (ctl.swap).
 * No packet is dropped or delayed by the swap.
 */
static int
lpm_swap_build(struct pf_stage *st, const struct pf_stage_conf *sc, void **out,
	       struct pf_errs *errs)
{
	return fib_build(st, sc, (struct lpm_fib **)out, errs);
}

static void
lpm_swap_free(void *fib)
{
	fib_free(fib);
}

static void
lpm_swap_published(struct pf_stage *st, const struct pf_stage_conf *sc, const void *fib)
{
	struct lpm_priv *lp = st->priv;

	__atomic_store_n(&lp->updates, lp->updates + 1, __ATOMIC_RELAXED);
	gauges_set(lp, fib);
	if (lp->ln != NULL)
		lpm_learnt_published(st, lp->ln, (struct lpm_fib *)(uintptr_t)fib);
}

const struct pf_stage_swap lpm_swap = {
	.table_off = offsetof(struct lpm_priv, fib),
	.build = lpm_swap_build,
	.free = lpm_swap_free,
	.published = lpm_swap_published,
};

void
lpm_free(struct pf_stage *st)
{
	struct lpm_priv *lp = st->priv;

	if (lp == NULL)
		return;
	/* No reader runs any more. */
	fib_free(lp->fib);
	lp->fib = NULL;
	pf_lrn_free(lp->ln);
	lp->ln = NULL;
}

int
lpm_learn(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
	  struct pf_route_result *res)
{
	return lpm_learnt_apply(st, ops, n, res);
}

void
lpm_upkeep(struct pf_stage *st, uint64_t now_ns)
{
	lpm_learnt_upkeep(st, now_ns);
}
