/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xconnect: fixed port-to-port forwarding (a patch panel, like testpmd io).
 * Edges: drop, out.
 * Counters: no_xconnect (drop: the ingress port has no peer).
 * Params: pairs (mapping ingress port -> egress port, required).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pf_stage.h"

#define foreach_xc_ctr(_) \
	_(XC_CTR_NO_XCONNECT, no_xconnect, DROP, "ingress port has no cross-connect peer")

PF_CTR_ENUM(xc, foreach_xc_ctr);
PF_CTR_DESCS(xc, foreach_xc_ctr);

enum { XC_EDGE_DROP, XC_EDGE_OUT, XC_EDGE_MAX };
static const char *const xc_edges[] = { "drop", "out" };
static const char *const xc_keys[] = { "pairs", NULL };

struct xc_cfg {
	uint16_t peer[PF_MAX_PORTS];
};

static int
xc_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *pairs = pf_map_get(sc->node, "pairs");
	struct xc_cfg *cfg;
	uint32_t i;
	int a, b, rc = 0;

	if (pairs == NULL)
		return pf_node_err(errs, sc->node, "stages.%s: missing required key 'pairs'",
				   sc->name);
	if (pf_node_expect(pairs, PF_NODE_MAP, "pairs", errs) < 0)
		return -EINVAL;
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	for (i = 0; i < PF_MAX_PORTS; i++)
		cfg->peer[i] = PF_PORT_NONE;
	for (i = 0; i < pairs->n; i++) {
		a = pf_stage_port_index(env, pairs->keys[i]->value);
		b = pairs->items[i]->kind == PF_NODE_SCALAR ?
			    pf_stage_port_index(env, pairs->items[i]->value) : -1;
		if (a < 0)
			rc = pf_node_err(errs, pairs->keys[i], "stages.%s.pairs: unknown port '%s'",
					 sc->name, pairs->keys[i]->value);
		else if (b < 0)
			rc = pf_node_err(errs, pairs->items[i],
					 "stages.%s.pairs.%s: expected a known port name", sc->name,
					 pairs->keys[i]->value);
		else
			cfg->peer[a] = (uint16_t)b;
	}
	sc->cfg = cfg;
	return rc;
}

static void
xc_cfg_free(void *cfg)
{
	free(cfg);
}

/*
 * Usually a whole burst came in on one port (an rx stage polls one port per
 * burst slot): then one peer lookup serves the burst and it takes edge "out"
 * as a whole. When rx's in-port hint says so, there is no pass: the
 * burst-port hint stands for every out_port (the runtime writes them where
 * anything but tx reads the burst); without it, the pass writes that peer
 * while it checks the ingress ports agree; a burst from several ports is
 * redone packet by packet.
 */
static __rte_noinline uint16_t
xc_burst_pass(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const uint64_t out4 = XC_EDGE_OUT * 0x0001000100010001ull;
	const struct xc_cfg *cfg = st->conf->cfg;
	int off = pf_meta_off();
	uint32_t in0, diff = 0;
	unsigned int j;
	uint16_t i, peer, dropped = 0;

	in0 = pf_meta_at(pkts[0], off)->in_port;
	peer = cfg->peer[in0];
	/* Four per step: the loop's own cost shared, four edges in one store. */
	for (j = 0; j + 4 <= n; j += 4) {
		struct pf_meta *m0 = pf_meta_at(pkts[j], off), *m1 = pf_meta_at(pkts[j + 1], off);
		struct pf_meta *m2 = pf_meta_at(pkts[j + 2], off), *m3 = pf_meta_at(pkts[j + 3], off);

		diff |= (m0->in_port ^ in0) | (m1->in_port ^ in0) | (m2->in_port ^ in0) |
			(m3->in_port ^ in0);
		m0->out_port = peer;
		m1->out_port = peer;
		m2->out_port = peer;
		m3->out_port = peer;
		memcpy(&edge[j], &out4, sizeof(out4));
	}
	for (; j < n; j++) {
		struct pf_meta *md = pf_meta_at(pkts[j], off);

		diff |= md->in_port ^ in0;
		md->out_port = peer;
		edge[j] = XC_EDGE_OUT;
	}
	if (likely(diff == 0 && peer != PF_PORT_NONE)) {
		st->burst_port = PF_BURST_PORT(peer);
		return XC_EDGE_OUT;
	}
	for (i = 0; i < n; i++) {
		struct pf_meta *md = pf_meta_at(pkts[i], off);

		md->out_port = cfg->peer[md->in_port];
		if (unlikely(md->out_port == PF_PORT_NONE)) {
			PF_DROP(edge, i, st->ctrs, XC_CTR_NO_XCONNECT);
			dropped++;
		}
	}
	return dropped == n ? XC_EDGE_DROP : dropped == 0 ? XC_EDGE_OUT : PF_EDGE_MIXED;
}

/* The hinted burst here, the pass out of line: this keeps no register. */
static uint16_t
xc_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct xc_cfg *cfg = st->conf->cfg;
	uint16_t peer;

	if (unlikely(n == 0))
		return PF_EDGE_MIXED;
	/* rx said the whole burst came in on one port: no per-packet look at in_port. */
	if (likely(st->in_burst_in_port != 0)) {
		peer = cfg->peer[st->in_burst_in_port - 1];
		if (likely(peer != PF_PORT_NONE)) {
			/* The hint stands for every out_port: the runtime writes
			 * them unless the burst goes straight to tx, and one edge
			 * for the burst leaves edge[] unread (pf_stage.h). */
			st->burst_port = PF_BURST_PORT(peer) | PF_BURST_PORT_UNWRITTEN;
			return XC_EDGE_OUT;
		}
	}
	return xc_burst_pass(st, pkts, n, edge);
}

const struct pf_stage_ops pf_xconnect_ops = {
	.type = "xconnect",
	.flags = PF_STAGE_KEEPS_FLOW,
	.summary = "fixed port-to-port forwarding (pass-through)",
	.n_edges = XC_EDGE_MAX,
	.edge_names = xc_edges,
	.default_edge = XC_EDGE_OUT,
	.n_ctrs = xc_ctr_max,
	.ctrs = xc_ctrs,
	.dp = {
		.process_burst = xc_process_burst,
	},
	.ctl = {
		.param_keys = xc_keys,
		.parse = xc_parse,
		.cfg_free = xc_cfg_free,
	},
};
