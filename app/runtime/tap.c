/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture tap (app/runtime/pf_tap.h): what lcores do for a live capture.
 *
 * Where packets are copied, so that "crossing" means exactly that:
 *   edge a->b   the lcore running b copies each burst it dequeues from the
 *               ring a->b, or is handed directly (every packet a sent on, none
 *               that a dropped as ring_full; a copy taken before the enqueue
 *               could not know which ones the ring takes, and one taken after
 *               it would race with b, which may already be changing it);
 *   port rx     every source stage reading the port copies what it received
 *               from it, before parsing (malformed frames included);
 *   port tx     every tx stage sending on the port copies, from the rings
 *               that feed it, the packets it will send there.
 */
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "pf_runtime.h"
#include "pf_tap.h"

static __rte_always_inline bool
cap_selects(const struct pf_cap_tap *tap, struct rte_mbuf *m)
{
	const struct pf_meta *md = pf_meta(m);

	switch (tap->mode) {
	case PF_TAP_RX:
		/* Before parsing: rx has not written in_port, the PMD (or rx's
		 * own rx op) left the DPDK port in mbuf->port. */
		return m->port == tap->sink->port_id[tap->port];
	case PF_TAP_TX:
		return md->out_port == PF_PORT_FLOOD ? (md->flood_mask >> tap->port) & 1 :
						       md->out_port == tap->port;
	default:
		return true;
	}
}

void
pf_tap_burst(struct pf_cap_tap **where, struct rte_mbuf **pkts, uint16_t n)
{
	struct pf_cap_tap *tap = __atomic_load_n(where, __ATOMIC_ACQUIRE);
	struct rte_mbuf *sel[PF_BURST_MAX], *cp[PF_BURST_MAX];
	struct pf_tap_sink *s;
	uint64_t old, tsc;
	uint16_t i, k = 0, c = 0, port;
	unsigned int q;

	if (tap == NULL)
		return;
	s = tap->sink;
	for (i = 0; i < n && k < RTE_DIM(sel); i++)
		if (cap_selects(tap, pkts[i]))
			sel[k++] = pkts[i];
	if (k == 0)
		return;
	/* Several lcores may feed one capture (a port read by two rx stages):
	 * each claims its share of what is still wanted. */
	old = __atomic_fetch_add(&s->claimed, k, __ATOMIC_RELAXED);
	if (old >= s->wanted)
		return;
	k = (uint16_t)RTE_MIN((uint64_t)k, s->wanted - old);
	tsc = rte_rdtsc();
	for (i = 0; i < k; i++) {
		struct rte_mbuf *m = rte_pktmbuf_copy(sel[i], s->mp, 0, s->snaplen);
		struct pf_tap_priv *p;

		if (m == NULL)
			continue;
		p = rte_mbuf_to_priv(m);
		port = tap->mode == PF_TAP_EDGE ? pf_meta(sel[i])->in_port : tap->port;
		p->tsc = tsc;
		p->orig_len = rte_pktmbuf_pkt_len(sel[i]);
		p->port_id = s->port_id[port < s->n_ports ? port : 0];
		p->queue = tap->queue;
		p->dir = tap->mode == PF_TAP_RX ? RTE_PCAPNG_DIRECTION_IN :
			 tap->mode == PF_TAP_TX ? RTE_PCAPNG_DIRECTION_OUT :
					       RTE_PCAPNG_DIRECTION_UNKNOWN;
		p->reason = PF_REASON_NONE;
		cp[c++] = m;
	}
	q = rte_ring_enqueue_burst(s->q, (void **)cp, c, NULL);
	if (q < c)
		rte_pktmbuf_free_bulk(cp + q, c - q);
	if (q < k)
		__atomic_fetch_add(&s->dropped, k - q, __ATOMIC_RELAXED);
}

void
pf_tap_drop(struct pf_cap_tap *tap, struct rte_mbuf *m, uint16_t stage, uint16_t reason)
{
	struct pf_tap_sink *s = tap->sink;
	struct rte_mbuf *c;
	struct pf_tap_priv *p;

	if (tap->reason != PF_REASON_NONE && tap->reason != reason)
		return;
	if (__atomic_fetch_add(&s->claimed, 1, __ATOMIC_RELAXED) >= s->wanted)
		return;
	c = rte_pktmbuf_copy(m, s->mp, 0, s->snaplen);
	if (c != NULL) {
		p = rte_mbuf_to_priv(c);
		p->tsc = rte_rdtsc();
		p->orig_len = rte_pktmbuf_pkt_len(m);
		p->port_id = s->port_id[pf_meta(m)->in_port < s->n_ports ? pf_meta(m)->in_port : 0];
		p->queue = 0;
		p->dir = RTE_PCAPNG_DIRECTION_UNKNOWN;
		p->stage = stage;
		p->reason = reason;
		if (rte_ring_enqueue(s->q, c) == 0)
			return;
		rte_pktmbuf_free(c);
	}
	__atomic_fetch_add(&s->dropped, 1, __ATOMIC_RELAXED);
}

void
pf_tap_arm(struct pf_runtime *rt, struct pf_tap_set *set)
{
	uint16_t i;

	/* An lcore that sees a tap sees it complete (release). */
	for (i = 0; i < rt->n_stages; i++)
		if (set->stage[i].sink != NULL)
			__atomic_store_n(&rt->rts[i].tap, &set->stage[i], __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_rings; i++)
		if (set->ring[i].sink != NULL)
			__atomic_store_n(&rt->rings[i].tap, &set->ring[i], __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_stages; i++) {
		if (set->drop[i].sink == NULL)
			continue;
		__atomic_store_n(&rt->rts[i].drop_tap, &set->drop[i], __ATOMIC_RELEASE);
		if (set->drop_watch[i])
			__atomic_fetch_or(&rt->rts[i].watch, (uint8_t)PF_WATCH_DROPS,
					  __ATOMIC_RELEASE);
	}
}

void
pf_tap_disarm(struct pf_runtime *rt)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		if (rt->rts[i].tap != NULL)
			__atomic_store_n(&rt->rts[i].tap, NULL, __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_rings; i++)
		if (rt->rings[i].tap != NULL)
			__atomic_store_n(&rt->rings[i].tap, NULL, __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_stages; i++) {
		__atomic_fetch_and(&rt->rts[i].watch, (uint8_t)~PF_WATCH_DROPS, __ATOMIC_RELEASE);
		if (rt->rts[i].drop_tap != NULL)
			__atomic_store_n(&rt->rts[i].drop_tap, NULL, __ATOMIC_RELEASE);
	}
}
