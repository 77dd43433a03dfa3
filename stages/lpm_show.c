/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the lpm stage shows (obs ops, any thread but its lcore's): gauges,
 * the routes and lookup pages of /pipefwd/table, the packet trace's route.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "lpm.h"
#include "lpm_fib.h"
#include "pf_conf.h"

void
lpm_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct lpm_priv *lp = st->priv;
	const struct { const char *name; uint64_t v; } g[] = {
		{ "routes", __atomic_load_n(&lp->g_routes, __ATOMIC_RELAXED) },
		{ "nexthops", __atomic_load_n(&lp->g_nh, __ATOMIC_RELAXED) },
		{ "tbl8_groups", __atomic_load_n(&lp->g_tbl8, __ATOMIC_RELAXED) },
		{ "memory_bytes", __atomic_load_n(&lp->g_mem, __ATOMIC_RELAXED) },
		{ "route_updates", __atomic_load_n(&lp->updates, __ATOMIC_RELAXED) },
	};
	uint16_t i;

	for (i = 0; i < RTE_DIM(g); i++)
		pf_sink_u64(out, g[i].name, g[i].v);
	pf_lrn_gauges(lp->ln, out);
}

/* ---- table contents for the stats socket -------------------------------- */

/*
 * /pipefwd/table,STAGE,routes|lookup. Runs on the telemetry thread, which
 * holds the stats lock a reload takes: the configuration and the fib it
 * built cannot change or be freed meanwhile, and the fib is only read.
 */
static void
lpm_fmt_prefix(char *buf, size_t len, uint32_t ip, uint8_t plen)
{
	snprintf(buf, len, "%u.%u.%u.%u/%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff,
		 ip & 0xff, plen);
}

/* Configured routes in prefix order (the order pf_rconf_check_dups sorted them in). */
static int
lpm_show_routes(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct lpm_cfg *cfg = st->conf->cfg;
	union pf_show_val v[PF_LRN_SHOW_COLS];
	char pfx[24], mac[18];
	struct pf_show *sh;
	uint32_t i;

	sh = pf_show_start(d, req, pf_lrn_show_cols, PF_LRN_SHOW_COLS);
	if (sh == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->rt.n_routes; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(&cfg->rt, i);
		const struct pf_rconf_nh *nh = &cfg->rt.nh[r->nh];

		if (req->port >= 0 && nh->port != req->port)
			continue;
		lpm_fmt_prefix(pfx, sizeof(pfx), pf_rconf_ip4(r->prefix), r->len);
		if (nh->has_gw)
			snprintf(mac, sizeof(mac), "-");   /* by address: neigh's table has it */
		else
			pf_show_mac(mac, nh->mac);
		v[0].s = pfx;
		v[1].s = nh->name;
		v[2].s = st->env->ports[nh->port].name;
		v[3].s = mac;
		v[4].s = "config";
		v[5].s = "installed";
		pf_show_row(sh, v);
	}
	/* The ports' own: connected subnets and local addresses. */
	for (i = 0; i < st->env->n_ports; i++) {
		const struct pf_port_conf *pc = &st->env->ports[i];

		if (!pc->has_ipv4 || (req->port >= 0 && (uint32_t)req->port != i))
			continue;
		v[1].s = "-";
		v[2].s = pc->name;
		v[3].s = "-";
		v[5].s = "installed";
		if (pc->ipv4_len < 32) {
			lpm_fmt_prefix(pfx, sizeof(pfx), pc->ipv4 & ~0u << (32 - pc->ipv4_len),
				       pc->ipv4_len);
			v[0].s = pfx;
			v[4].s = "connected";
			pf_show_row(sh, v);
		}
		lpm_fmt_prefix(pfx, sizeof(pfx), pc->ipv4, 32);
		v[0].s = pfx;
		v[4].s = "local";
		pf_show_row(sh, v);
	}
	pf_lrn_show(((const struct lpm_priv *)st->priv)->ln, st->env, req, sh);
	pf_show_end(sh);
	return 0;
}

/* The fib's own entry for @p ip (host order): next hop index and prefix length. */
static uint32_t
lpm_entry(const struct lpm_fib *fib, uint32_t ip, uint8_t *depth)
{
	struct rte_lpm_tbl_entry e;

	*depth = 0;
	e = fib->lpm->tbl24[ip >> 8];
	if (e.valid && e.valid_group)
		e = fib->lpm->tbl8[e.next_hop * RTE_LPM_TBL8_GROUP_NUM_ENTRIES + (ip & 0xff)];
	if (!e.valid)
		return fib->dflt;
	*depth = e.depth;
	return LPM_HOP(e.next_hop);
}

static const char *const lpm_kinds[] = { "route", "local", "broadcast", "neighbor", "connected",
					 "ecmp", "blackhole", "unreachable", "prohibit" };

/* What the data path would do with destination req->addr: the fib's own entry. */
static int
lpm_show_lookup(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct lpm_priv *lp = st->priv;
	const struct lpm_cfg *cfg = st->conf->cfg;
	const struct lpm_fib *fib = lp->fib;
	uint32_t ip, nh, mask;
	uint8_t depth;
	char pfx[24], mac[18];

	if (!pf_parse_ipv4(req->addr, &ip))
		return -EINVAL;
	pf_sink_str(d, "addr", req->addr);
	nh = lpm_entry(fib, ip, &depth);
	mask = depth == 0 ? 0 : ~0u << (32 - depth);
	lpm_fmt_prefix(pfx, sizeof(pfx), ip & mask, depth);
	if (fib->dir != NULL && lp->ln != NULL && nh >= fib->learnt_base) {
		/* A learnt route's target: the same entries the data path reads. */
		pf_sink_str(d, "prefix", pfx);
		pf_lrn_describe(lp->ln, nh - fib->learnt_base, st->env, d);
		return 0;
	}
	if (nh == fib->miss || nh >= fib->n_nh) {
		pf_sink_str(d, "result", "no_route");
		return 0;
	}
	pf_sink_str(d, "result", lpm_kinds[fib->nh[nh].kind]);
	pf_sink_str(d, "prefix", pfx);
	pf_sink_str(d, "port", st->env->ports[fib->nh[nh].port].name);
	if ((fib->nh[nh].kind == LPM_NH_FWD || fib->nh[nh].kind == LPM_NH_GW) &&
	    nh < cfg->rt.n_nh)
		pf_sink_str(d, "nexthop", cfg->rt.nh[nh].name);
	if (fib->nh[nh].kind == LPM_NH_FWD && nh < cfg->rt.n_nh && !cfg->rt.nh[nh].has_gw) {
		pf_show_mac(mac, fib->nh[nh].macs);
		pf_sink_str(d, "mac", mac);
	}
	return 0;
}

/* Packet trace (app/console/trace.c): the route the packet's destination takes. */
void
lpm_trace(const struct pf_stage *st, const struct rte_mbuf *m, char *buf, size_t len)
{
	const struct lpm_priv *lp = st->priv;
	const struct lpm_cfg *cfg = st->conf->cfg;
	const struct lpm_fib *fib = __atomic_load_n(&lp->fib, __ATOMIC_ACQUIRE);
	const struct pf_meta *md = pf_meta((struct rte_mbuf *)(uintptr_t)m);
	const struct rte_ipv4_hdr *ip;
	uint32_t dst, nh, mask;
	uint8_t depth;
	char pfx[24], mac[18];

	if (md->cls != PF_CLASS_IPV4 || rte_pktmbuf_data_len(m) < md->l2_len + 20u)
		return;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, md->l2_len);
	dst = rte_be_to_cpu_32(ip->dst_addr);
	nh = lpm_entry(fib, dst, &depth);
	if (nh == fib->miss || nh >= fib->n_nh) {
		snprintf(buf, len, "lookup: no route");
		return;
	}
	mask = depth == 0 ? 0 : ~0u << (32 - depth);
	lpm_fmt_prefix(pfx, sizeof(pfx), dst & mask, depth);
	pf_show_mac(mac, fib->nh[nh].macs);
	if (fib->nh[nh].kind == LPM_NH_FWD && nh < cfg->rt.n_nh)
		snprintf(buf, len, "lookup: %s via %s (%s) port %s", pfx, cfg->rt.nh[nh].name, mac,
			 st->env->ports[fib->nh[nh].port].name);
	else
		snprintf(buf, len, "lookup: %s %s port %s", pfx, lpm_kinds[fib->nh[nh].kind],
			 st->env->ports[fib->nh[nh].port].name);
}

const char *const lpm_show_tables[] = { "routes", "lookup", NULL };


int
lpm_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	 struct pf_sink *d)
{
	if (strcmp(what, "routes") == 0)
		return lpm_show_routes(st, req, d);
	if (strcmp(what, "lookup") == 0)
		return lpm_show_lookup(st, req, d);
	return -ENOENT;
}
