/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capacity drops get a log line, not only a counter.
 *
 * A full ring, an empty mempool (rx_nombuf), a NIC that missed frames
 * (imissed) and a stage drop counter named *_full (session_full, tx_full)
 * mean pipefwd ran out of something: the operator must see it in the log,
 * not only in a counter nobody polls. The main thread calls
 * pf_dropwatch_poll() every 100 ms: the first drop of a resource is logged at
 * once (WARNING, with the increase and the total), and then at most one line
 * a second per resource, so a sustained overload never logs per packet.
 * The data path is untouched: this reads the single-writer counters.
 * A sink's *_full drops in the moments after a port's link fell are the
 * link's: its lines (linkwatch.c) say what it cost, and are not repeated here.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "pf_log.h"
#include "pf_runtime.h"
#include "pf_stage.h"

/* The value last logged, with the object it belonged to (a reload may replace it). */
struct dw_last {
	const void *obj;
	uint64_t val;
	uint64_t logged_tsc;
};

static uint64_t dw_now;

static struct dw_last ring_last[PF_MAX_RINGS];
static struct dw_last port_last[PF_MAX_PORTS][2];       /* rx_nombuf, imissed */
static struct dw_last ctr_last[PF_MAX_STAGES][8];       /* the stage's *_full counters */

/*
 * The increase to log now for @p obj: 0 the first time (the baseline), 0
 * while the last line is under a second old (the increase waits for the
 * next line), else the drops since the last line.
 */
static uint64_t
dw_delta(struct dw_last *l, const void *obj, uint64_t val)
{
	uint64_t d;

	if (l->obj != obj) {
		l->obj = obj;
		l->val = val;
		return 0;
	}
	if (val <= l->val || dw_now - l->logged_tsc < rte_get_tsc_hz())
		return 0;
	d = val - l->val;
	l->val = val;
	l->logged_tsc = dw_now;
	return d;
}

/* Take @p val as logged: drops another line (a link's) accounts for. */
static void
dw_fold(struct dw_last *l, const void *obj, uint64_t val)
{
	l->obj = obj;
	l->val = val;
}

static bool
is_capacity_ctr(const struct pf_ctr_desc *c)
{
	size_t n = strlen(c->name);

	return c->kind == PF_CTR_DROP && n > 5 && strcmp(c->name + n - 5, "_full") == 0;
}

void
pf_dropwatch_poll(const struct pf_runtime *rt)
{
	struct rte_eth_stats es;
	uint16_t i, c, k;
	uint64_t d;

	dw_now = rte_rdtsc();
	for (i = 0; i < rt->n_rings; i++) {
		const struct pf_rt_ring *r = &rt->rings[i];

		d = dw_delta(&ring_last[i], r->conf, r->full_drops);
		if (d != 0)
			PF_LOG(WARNING, "ring %s full: %" PRIu64 " packets dropped "
			       "(ring_full %" PRIu64 " in total); a slower consumer or a "
			       "small ring (docs/rebalance.md)", r->conf->name, d, r->full_drops);
	}
	for (i = 0; i < rt->n_stages && i < PF_MAX_STAGES; i++) {
		const struct pf_stage *st = rt->stages[i];

		/* A sink's drops just after a link fell are the link's (linkwatch.c). */
		bool fold = (rt->rts[i].kind & PF_RT_KIND_TX) && dw_now < rt->link_fold_until;

		for (c = 0, k = 0; c < st->ops->n_ctrs && k < RTE_DIM(ctr_last[i]); c++) {
			if (!is_capacity_ctr(&st->ops->ctrs[c]))
				continue;
			if (fold) {
				dw_fold(&ctr_last[i][k++], st, st->ctrs[c]);
				continue;
			}
			d = dw_delta(&ctr_last[i][k++], st, st->ctrs[c]);
			if (d != 0)
				PF_LOG(WARNING, "stage %s: %s: %" PRIu64 " packets dropped "
				       "(%" PRIu64 " in total)", st->conf->name,
				       st->ops->ctrs[c].name, d, st->ctrs[c]);
		}
	}
	if (rt->ports_closed)
		return;
	for (i = 0; i < rt->topo->n_ports; i++) {
		const struct pf_port_conf *p = &rt->topo->ports[i];

		if (!pf_port_present(p))
			continue;
		if (rte_eth_stats_get(rt->port_run[i].port_id, &es) != 0)
			continue;
		d = dw_delta(&port_last[i][0], p, es.rx_nombuf);
		if (d != 0)
			PF_LOG(WARNING, "port %s: mempool empty: %" PRIu64 " frames not received "
			       "(rx_nombuf %" PRIu64 " in total); raise mbufs: or drain faster",
			       p->name, d, es.rx_nombuf);
		d = dw_delta(&port_last[i][1], p, es.imissed);
		if (d != 0)
			PF_LOG(WARNING, "port %s: rx queue full: %" PRIu64 " frames missed by the "
			       "device (imissed %" PRIu64 " in total)", p->name, d, es.imissed);
	}
}
