/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Accounting: per-port totals summed over stages, and the invariant
 * rx + replicas = tx + dropped + in_flight. A packet handed directly to a
 * consumer on the same lcore is never in flight between stages: only ring
 * contents and what stages hold (tx buffers, gauge "in_flight") are.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "rt_internal.h"

bool
pf_rt_drained(const struct pf_runtime *rt)
{
	uint16_t i;

	for (i = 0; i < rt->n_rings; i++)
		if (rte_ring_count(rt->rings[i].ring) != 0)
			return false;
	for (i = 0; i < rt->n_stages; i++)
		if (rt->stages[i]->ops->obs.busy != NULL && rt->stages[i]->ops->obs.busy(rt->stages[i]))
			return false;
	return true;
}

/*
 * Every packet that was between stages at the call has left the ring it was
 * in and the ones after it (rings in a chain: one hop each round), and the
 * tx buffers have been flushed once since. Traffic on goes on meanwhile;
 * what came later is not waited for. Returns false at @p timeout_ms.
 */
bool
pf_runtime_drain_inflight(struct pf_runtime *rt, unsigned int timeout_ms)
{
	uint64_t snap[PF_MAX_RINGS], end = rte_get_timer_cycles() +
					   rte_get_timer_hz() * timeout_ms / 1000;
	uint16_t hop, i;
	bool done;

	for (hop = 0; hop <= rt->n_rings; hop++) {
		for (i = 0; i < rt->n_rings; i++)
			snap[i] = __atomic_load_n(&rt->rings[i].enqueued, __ATOMIC_ACQUIRE);
		do {
			done = true;
			for (i = 0; i < rt->n_rings && done; i++)
				done = __atomic_load_n(&rt->rings[i].dequeued, __ATOMIC_ACQUIRE) >=
				       snap[i];
			if (!done && rte_get_timer_cycles() > end)
				return false;
			if (!done)
				rte_delay_us_sleep(100);
		} while (!done);
	}
	/* A tx buffer older than tx_flush_us is flushed at the next pass. */
	rte_delay_us_sleep(rt->topo->tx_flush_us + 1);
	pf_rt_wait_passes(rt, 2);
	return true;
}

/* What the stages counted at port index @p port since start (whichever ports held it). */
static uint64_t
raw_rx(const struct pf_runtime *rt, uint16_t port)
{
	uint64_t v = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		v += rt->stages[i]->port_rx[port];
	return v;
}

static uint64_t
raw_rxq(const struct pf_runtime *rt, uint16_t port, uint16_t q)
{
	uint64_t v = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		if (rt->stages[i]->conf->rx_queue == q)
			v += rt->stages[i]->port_rx[port];
	return v;
}

static uint64_t
raw_tx(const struct pf_runtime *rt, uint16_t port)
{
	uint64_t v = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		v += rt->stages[i]->port_tx[port];
	return v;
}

/*
 * A port added live may take the index of one removed before: its own
 * counts start from what the index held then (the totals keep both).
 */
void
pf_rt_port_base(struct pf_runtime *rt, uint16_t port)
{
	uint16_t q;

	rt->port_base[port].rx = raw_rx(rt, port);
	rt->port_base[port].tx = raw_tx(rt, port);
	for (q = 0; q < PF_RXQ_MAX; q++)
		rt->port_base[port].rxq[q] = raw_rxq(rt, port, q);
}

uint64_t
pf_runtime_port_rx(const struct pf_runtime *rt, uint16_t port)
{
	return raw_rx(rt, port) - rt->port_base[port].rx;
}

uint64_t
pf_runtime_port_rxq(const struct pf_runtime *rt, uint16_t port, uint16_t q)
{
	return raw_rxq(rt, port, q) - rt->port_base[port].rxq[q];
}

uint64_t
pf_runtime_port_tx(const struct pf_runtime *rt, uint16_t port)
{
	return raw_tx(rt, port) - rt->port_base[port].tx;
}

uint64_t
pf_runtime_rx_total(const struct pf_runtime *rt)
{
	uint64_t v = 0;
	uint16_t p;

	/* Every index: a port removed live keeps what it received in the totals. */
	for (p = 0; p < PF_MAX_PORTS; p++)
		v += raw_rx(rt, p);
	return v;
}

uint64_t
pf_runtime_source_passes(const struct pf_runtime *rt)
{
	uint64_t v = 0;
	uint16_t i, j;

	for (i = 0; i < rt->n_lcores; i++) {
		const struct pf_rt_lcore *lc = &rt->lcores[i];
		const struct pf_lcore_map *map = __atomic_load_n(&lc->map, __ATOMIC_ACQUIRE);

		for (j = 0; j < map->n; j++)
			if (map->stages[j]->kind & PF_RT_KIND_SOURCE) {
				v += __atomic_load_n(&lc->loops, __ATOMIC_ACQUIRE);
				break;
			}
	}
	return v;
}

uint64_t
pf_runtime_source_held(const struct pf_runtime *rt)
{
	uint64_t v = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		if (rt->rts[i].kind & PF_RT_KIND_SOURCE)
			v += __atomic_load_n(&rt->rts[i].held, __ATOMIC_RELAXED);
	return v;
}

void
pf_runtime_totals(const struct pf_runtime *rt, struct pf_totals *t)
{
	uint16_t i, p, k;

	memset(t, 0, sizeof(*t));
	/* Every index: a port removed live keeps its packets in the totals. */
	for (p = 0; p < PF_MAX_PORTS; p++) {
		t->rx += raw_rx(rt, p);
		t->tx += raw_tx(rt, p);
	}
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage *st = rt->stages[i];
		const struct pf_rt_stage *rs = &rt->rts[i];

		t->replicas += st->replicas;
		t->dropped += rs->ring_full + rs->no_edge;
		for (k = 0; k < st->ops->n_ctrs; k++)
			if (st->ops->ctrs[k].kind == PF_CTR_DROP)
				t->dropped += st->ctrs[k];
		t->in_flight += pf_stage_gauge(st, "in_flight");
		if (st->ops->obs.delivered != NULL)
			t->tx += st->ops->obs.delivered(st);
	}
	for (i = 0; i < rt->n_rings; i++)
		t->in_flight += rte_ring_count(rt->rings[i].ring);
	t->unaccounted = (int64_t)(t->rx + t->replicas) -
			 (int64_t)(t->tx + t->dropped + t->in_flight);
}

/*
 * Upkeep on the lcore that owns @p rs (worker.c, about once a millisecond):
 * restart the high-water mark of its output rings that a clear asked for.
 * The producer is the mark's only writer, so the mark since the restart is
 * exact: occupancy rises only at an enqueue, which raises the mark.
 */
void
pf_rt_hwm_serve(struct pf_rt_stage *rs)
{
	uint16_t k;

	for (k = 0; k < rs->n_out; k++) {
		struct pf_rt_ring *r = rs->outs[k];
		uint32_t req = __atomic_load_n(&r->hwm_clear_req, __ATOMIC_ACQUIRE);

		if (req == r->hwm_clear_ack)
			continue;
		if (r->hwm > r->hwm_start)
			__atomic_store_n(&r->hwm_start, r->hwm, __ATOMIC_RELAXED);
		__atomic_store_n(&r->hwm, rte_ring_count(r->ring), __ATOMIC_RELEASE);
		__atomic_store_n(&r->hwm_clear_ack, req, __ATOMIC_RELEASE);
	}
}

unsigned int
pf_runtime_hwm_restart(struct pf_runtime *rt, const uint64_t *mask, uint32_t *req_out,
		       unsigned int wait_ms)
{
	uint64_t deadline = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * wait_ms;
	unsigned int done, want;
	uint16_t i;

	for (i = 0; i < rt->n_rings; i++)
		if (mask[i / 64] >> (i % 64) & 1)
			req_out[i] = __atomic_add_fetch(&rt->rings[i].hwm_clear_req, 1,
							__ATOMIC_RELEASE);
	for (;;) {
		done = want = 0;
		for (i = 0; i < rt->n_rings; i++) {
			if (!(mask[i / 64] >> (i % 64) & 1))
				continue;
			want++;
			done += pf_rt_ring_hwm_restarted(&rt->rings[i], req_out[i]);
		}
		if (done == want || rte_get_tsc_cycles() >= deadline)
			return done;
		rte_delay_us_sleep(200);
	}
}
