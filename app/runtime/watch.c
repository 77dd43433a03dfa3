/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The watch path (app/runtime/pf_watch.h): a stage's bursts one packet at a
 * time for a packet trace and a drop capture. Nothing here runs unless
 * something is armed: pf_rt_run_burst() tests pf_rt_stage.watch once per
 * burst.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>

#include "pf_log.h"
#include "pf_tap.h"
#include "pf_watch.h"

struct pf_trace pf_trace;

/* Every traced packet has left: stop watching (tracing only). */
static void
trace_finish(struct pf_runtime *rt)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		__atomic_fetch_and(&rt->rts[i].watch, (uint8_t)~PF_WATCH_TRACE, __ATOMIC_RELEASE);
}

static void
trace_left(struct pf_runtime *rt, int32_t slot)
{
	pf_trace.active[slot] = NULL;
	if (__atomic_add_fetch(&pf_trace.done, 1, __ATOMIC_ACQ_REL) == pf_trace.wanted)
		trace_finish(rt);
}

/*
 * The trace slot of @p m (its number - 1): a marked packet's, or a new one
 * when @p start and the trace wants more. -1: not traced.
 */
static int32_t
trace_slot(struct rte_mbuf *m, bool start)
{
	uint32_t k, n;

	if (m->ol_flags & pf_trace.flag) {
		n = RTE_MIN(__atomic_load_n(&pf_trace.started, __ATOMIC_ACQUIRE), pf_trace.wanted);
		for (k = 0; k < n; k++)
			if (__atomic_load_n(&pf_trace.active[k], __ATOMIC_RELAXED) == m)
				return (int32_t)k;
		/* Marked by a trace since replaced: a new packet to this one. */
		m->ol_flags &= ~pf_trace.flag;
	}
	if (!start || __atomic_load_n(&pf_trace.started, __ATOMIC_RELAXED) >= pf_trace.wanted)
		return -1;
	k = __atomic_fetch_add(&pf_trace.started, 1, __ATOMIC_ACQ_REL);
	if (k >= pf_trace.wanted)
		return -1;
	m->ol_flags |= pf_trace.flag;
	__atomic_store_n(&pf_trace.active[k], m, __ATOMIC_RELEASE);
	return (int32_t)k;
}

static struct pf_trace_rec *
trace_rec_new(void)
{
	uint32_t k = __atomic_fetch_add(&pf_trace.n_recs, 1, __ATOMIC_RELAXED);

	return k < PF_TRACE_MAX_RECS ? &pf_trace.recs[k] : NULL;
}

uint8_t
pf_watch_hdr(uint8_t *to, const struct rte_mbuf *m)
{
	uint32_t len = RTE_MIN((uint32_t)rte_pktmbuf_data_len(m), (uint32_t)PF_TRACE_HDR);

	memcpy(to, rte_pktmbuf_mtod(m, const uint8_t *), len);
	return (uint8_t)len;
}

static bool
is_start(const struct pf_rt_stage *rs)
{
	return pf_trace.start < 0 ? rs->st->ops->dp.rx != NULL : rs->st->id == (uint16_t)pf_trace.start;
}

uint16_t
pf_watch_moved(const struct pf_stage *st, const uint64_t *before, uint16_t nc, uint16_t edge,
	       struct pf_trace_rec *r)
{
	uint16_t reason = PF_REASON_NONE, k;

	if (r != NULL)
		r->n_ctr = 0;
	for (k = 0; k < nc; k++) {
		uint64_t d = st->ctrs[k] - before[k];

		if (d == 0)
			continue;
		if (edge == PF_EDGE_DROP && reason == PF_REASON_NONE &&
		    st->ops->ctrs[k].kind == PF_CTR_DROP)
			reason = k;
		if (r != NULL && r->n_ctr < PF_TRACE_CTRS) {
			r->ctr_idx[r->n_ctr] = k;
			r->ctr_delta[r->n_ctr++] = (uint32_t)d;
		}
	}
	return reason;
}

void
pf_watch_rec(struct pf_trace_rec *r, const struct pf_stage *st, struct rte_mbuf *m,
	     uint16_t edge, uint16_t reason, uint64_t t0, uint64_t t1, const uint8_t *hdr_in,
	     uint8_t n_in, uint16_t len_in)
{
	r->note[0] = '\0';
	r->stage = st->id;
	r->edge = edge;
	r->reason = reason;
	r->lcore = (uint16_t)rte_lcore_id();
	r->tsc = t0;
	r->cycles = t1 - t0;
	r->len_in = len_in;
	r->len_out = (uint16_t)rte_pktmbuf_pkt_len(m);
	memcpy(r->hdr_in, hdr_in, n_in);
	r->n_hdr = RTE_MIN(n_in, pf_watch_hdr(r->hdr_out, m));
	r->md = *pf_meta(m);
	if (st->ops->obs.trace != NULL)
		st->ops->obs.trace(st, m, r->note, sizeof(r->note));
}

uint16_t
pf_watch_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct pf_stage *st = rs->st;
	uint8_t watch = __atomic_load_n(&rs->watch, __ATOMIC_ACQUIRE);
	struct pf_cap_tap *dtap = NULL;
	uint16_t nc = RTE_MIN(st->ops->n_ctrs, (uint16_t)PF_TRACE_MAX_CTRS), i;
	uint64_t before[PF_TRACE_MAX_CTRS], t0, t1;
	bool tracing = (watch & PF_WATCH_TRACE) != 0 && pf_trace.recs != NULL;
	bool start = tracing && is_start(rs);

	if (watch & PF_WATCH_DROPS)
		dtap = __atomic_load_n(&rs->drop_tap, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pf_trace_rec *r = NULL;
		uint16_t reason, len_in = 0, e;
		uint8_t hdr_in[PF_TRACE_HDR], n_in = 0;
		int32_t slot = tracing ? trace_slot(m, start) : -1;

		if (slot >= 0) {
			n_in = pf_watch_hdr(hdr_in, m);
			len_in = (uint16_t)rte_pktmbuf_pkt_len(m);
		}
		if (slot >= 0 || dtap != NULL)
			memcpy(before, st->ctrs, nc * sizeof(before[0]));
		t0 = rte_rdtsc();
		e = st->ops->dp.process_burst(st, &pkts[i], 1, &edge[i]);
		t1 = rte_rdtsc();
		/* One edge for the burst: edge[] may be unwritten (pf_stage.h). */
		if (e != PF_EDGE_MIXED)
			edge[i] = e;
		if (slot < 0 && (dtap == NULL || edge[i] != PF_EDGE_DROP))
			continue;
		if (slot >= 0)
			r = trace_rec_new();
		reason = pf_watch_moved(st, before, nc, edge[i], r);
		if (edge[i] == PF_EDGE_DROP && dtap != NULL)
			pf_tap_drop(dtap, m, st->id, reason);
		if (slot < 0)
			continue;
		if (r != NULL) {
			r->pkt = (uint32_t)slot + 1;
			pf_watch_rec(r, st, m, edge[i], reason, t0, t1, hdr_in, n_in, len_in);
			__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
		}
		/* Its path ends here: dropped, or handed to a sink's tx. */
		if (edge[i] == PF_EDGE_DROP || st->ops->dp.tx != NULL)
			trace_left(pf_trace.rt, slot);
	}
	return PF_EDGE_MIXED;
}

void
pf_watch_lost(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t reason)
{
	struct pf_cap_tap *dtap = __atomic_load_n(&rs->drop_tap, __ATOMIC_ACQUIRE);
	bool tracing = (__atomic_load_n(&rs->watch, __ATOMIC_ACQUIRE) & PF_WATCH_TRACE) != 0 &&
		       pf_trace.recs != NULL;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pf_trace_rec *r;
		int32_t slot;

		if (dtap != NULL)
			pf_tap_drop(dtap, m, rs->st->id, reason);
		slot = tracing ? trace_slot(m, false) : -1;
		if (slot < 0)
			continue;
		r = trace_rec_new();
		if (r != NULL) {
			memset(r, 0, offsetof(struct pf_trace_rec, hdr_in));
			r->pkt = (uint32_t)slot + 1;
			r->stage = rs->st->id;
			r->edge = PF_EDGE_DROP;
			r->reason = reason;
			r->lcore = (uint16_t)rte_lcore_id();
			r->tsc = rte_rdtsc();
			r->len_in = r->len_out = (uint16_t)rte_pktmbuf_pkt_len(m);
			r->n_hdr = pf_watch_hdr(r->hdr_in, m);
			memcpy(r->hdr_out, r->hdr_in, r->n_hdr);
			r->md = *pf_meta(m);
			snprintf(r->note, sizeof(r->note), "dropped by the runtime after the "
				 "stage");
			__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
		}
		trace_left(pf_trace.rt, slot);
	}
}

/* Stop recording and wait until no lcore is inside a traced burst. */
void
pf_trace_disarm(struct pf_runtime *rt)
{
	if (rt != NULL)
		trace_finish(rt);
	pf_rcu_synchronize();
}

int
pf_trace_arm(struct pf_runtime *rt, uint32_t n, int32_t start, char *err, size_t err_len)
{
	uint16_t i;
	int bit;

	if (pf_trace.flag == 0) {
		static const struct rte_mbuf_dynflag desc = { .name = "pipefwd_trace" };

		bit = rte_mbuf_dynflag_register(&desc);
		if (bit < 0) {
			snprintf(err, err_len, "no mbuf flag for tracing: %s", strerror(rte_errno));
			return -ENOSPC;
		}
		pf_trace.flag = UINT64_C(1) << bit;
	}
	if (pf_trace.recs == NULL) {
		pf_trace.recs = calloc(PF_TRACE_MAX_RECS, sizeof(*pf_trace.recs));
		if (pf_trace.recs == NULL) {
			snprintf(err, err_len, "no memory for the trace records");
			return -ENOMEM;
		}
	}
	/* A new trace replaces the last one: no lcore writes the old one now. */
	pf_trace_disarm(pf_trace.rt != NULL ? pf_trace.rt : rt);
	memset(pf_trace.recs, 0, PF_TRACE_MAX_RECS * sizeof(*pf_trace.recs));
	memset(pf_trace.active, 0, sizeof(pf_trace.active));
	pf_trace.rt = rt;
	pf_trace.wanted = n;
	pf_trace.start = start;
	pf_trace.started = 0;
	pf_trace.done = 0;
	pf_trace.n_recs = 0;
	pf_trace.start_tsc = rte_rdtsc();
	pf_trace.id++;
	/* Publish last: an lcore that sees the bit sees the trace complete. */
	for (i = 0; i < rt->n_stages; i++)
		__atomic_fetch_or(&rt->rts[i].watch, (uint8_t)PF_WATCH_TRACE, __ATOMIC_RELEASE);
	PF_LOG(INFO, "trace %" PRIu64 ": next %u packets entering %s", pf_trace.id, n,
	       start < 0 ? "every source stage" : rt->stages[start]->conf->name);
	return 0;
}

void
pf_trace_free(struct pf_runtime *rt)
{
	if (pf_trace.rt != NULL)
		pf_trace_disarm(pf_trace.rt);
	pf_trace.rt = NULL;
	pf_trace.wanted = 0;
	free(pf_trace.recs);
	pf_trace.recs = NULL;
}
