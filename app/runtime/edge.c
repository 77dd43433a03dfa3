/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path: run a burst through a stage and move it on by edge.
 *
 * Edge 0 is freed (the stage counted why), a sink takes the rest, and every
 * other edge goes to the stage it is wired to:
 *   direct  when that stage runs on this lcore and the edge's ring is empty:
 *           the burst is handed straight to it and runs there and then,
 *           depth-first (rte_graph's rte_node_next_stream_move, VPP frames);
 *   ring    otherwise (another lcore, a stage mid hand-over, or a ring that
 *           still drains after a move). A full ring drops the overflow and
 *           counts it (ring_full) on the producer and on the ring: the
 *           producer never blocks.
 * Time is chained: one rdtsc per stage boundary, a stage's end is the next
 * one's start, so each stage's cycles exclude the consumers it called; and
 * sampled: only a timed pass takes them (charge()).
 * Ring statistics (enqueued, hwm, histogram) move only on ring sends; a
 * direct hand-over counts its packets in the ring's `direct`.
 *
 * Lossless mode (runtime.backpressure) bounds every burst instead: a stage
 * takes (from its port or ring) only what every ring after it, up to the
 * next lcore boundary, can hold, so nothing is dropped as ring_full. (A
 * stage that expands its input, ip4frag, can still overfill: room is
 * counted in packets taken, not packets made.)
 */
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "burst_hint.h"
#include "pf_latency.h"
#include "pf_tap.h"
#include "pf_flowhash.h"
#include "pf_watch.h"
#include "rt_internal.h"

/* No preemption until pf_runtime_start sets the floor (the unit tests drive bursts without it). */
uint64_t pf_rt_time_floor = UINT64_MAX;

/*
 * Charge @p rs the cycles since @p t0 and return the time now: the boundary
 * that ends its interval starts the next one. Stage time is sampled (one
 * pass in PF_RT_TIME_EVERY, rt_internal.h): an untimed pass carries t0 0,
 * takes no timestamp and stays 0; a timed interval counts PF_RT_TIME_EVERY
 * times, so rs->cycles estimates the cycles of all passes. An interval
 * that was preempted (another thread ran on the CPU: pf_rt_interval) counts
 * as the stage's typical one, so a shared CPU does not inflate a stage's
 * cycles (time_skipped counts these).
 */
static __rte_always_inline uint64_t
charge(struct pf_rt_stage *rs, uint64_t t0)
{
	uint64_t t1, d;

	if (likely(t0 == 0))
		return 0;
	t1 = rte_rdtsc();
	d = pf_rt_interval(&rs->time_typ, t1 - t0, &rs->time_skipped);
	rs->cycles += d << PF_RT_TIME_SHIFT;
	return t1;
}

/*
 * Latency on, a source's burst in a timed pass, as it leaves the source:
 * its first packet carries the time the source took it (@p t, right after
 * the port's rx) to the sink (pf_latency.h).
 */
static __rte_always_inline void
lat_rx_stamp(const struct pf_rt_stage *rs, struct rte_mbuf *m, uint64_t t)
{
	if ((rs->kind & PF_RT_KIND_SOURCE) && __atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED)) {
		*PF_LAT_STAMP(m) = t;
		m->ol_flags |= pf_lat_flag;
	}
}

/*
 * Latency on, a timed pass: stamp a source's burst (above), and give the
 * consumer the ring position of this burst's first packet and the time, to
 * find at dequeue (pf_latency.h).
 */
static __rte_noinline void
lat_ring_stamp(const struct pf_rt_stage *rs, struct pf_rt_ring *r, struct rte_mbuf *m,
	       uint32_t pos, uint64_t t)
{
	lat_rx_stamp(rs, m, t);
	__atomic_store_n(&r->lat_sample, (uint64_t)pos << 32 | (uint32_t)rte_rdtsc(),
			 __ATOMIC_RELEASE);
}

/*
 * charge() at a direct hand-over: in a timed pass with latency on, a
 * source's burst is stamped first. Out of line: one pass in sixteen.
 */
static __rte_noinline uint64_t
charge_stamp(struct pf_rt_stage *rs, struct rte_mbuf *m, uint64_t t0)
{
	lat_rx_stamp(rs, m, t0);
	return charge(rs, t0);
}

/*
 * Latency on, a sink in a timed pass: the packets rx stamped, by output port
 * (the burst-port hint, else out_port). Out of line: one in sixteen passes.
 */
static __rte_noinline void
lat_sink(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t hint = rs->st->in_burst_port, i, port;
	uint64_t now = rte_rdtsc();

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (likely(!(m->ol_flags & pf_lat_flag)))
			continue;
		m->ol_flags &= ~pf_lat_flag;
		port = hint != 0 ? PF_BURST_PORT_INDEX(hint) : pf_meta(m)->out_port;
		if (port < PF_MAX_PORTS && rs->lat != NULL)
			pf_lat_record(&rs->lat[port],
				      now - *PF_LAT_STAMP(m));
	}
}

/* Cross-lcore send: the only place ring statistics move. */
static __rte_always_inline void
ring_send(struct pf_rt_stage *rs, struct pf_rt_ring *r, struct rte_mbuf **pkts, uint16_t n,
	  uint64_t t)
{
	unsigned int free_space, sent, used;
	uint32_t pos = r->ring->prod.head;

	/* Stamped before the enqueue: the consumer may take the packet at once. */
	if (unlikely(t != 0) && __atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED))
		lat_ring_stamp(rs, r, pkts[0], pos, t);
	sent = rte_ring_enqueue_burst(r->ring, (void **)pkts, n, &free_space);
	r->enqueued += sent;
	used = rte_ring_get_capacity(r->ring) - free_space;
	if (used > r->hwm)
		r->hwm = used;
	r->hist[used == 0 ? 0 : 32 - __builtin_clz(used)]++;
	if (unlikely(sent < n)) {
		r->full_drops += n - sent;
		rs->ring_full += n - sent;
		/* trace.c: a traced packet or a drop capture sees the loss. */
		if (__atomic_load_n(&rs->watch, __ATOMIC_RELAXED) != 0 ||
		    __atomic_load_n(&rs->drop_tap, __ATOMIC_RELAXED) != NULL)
			pf_watch_lost(rs, pkts + sent, n - sent, PF_REASON_RING_FULL);
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

/*
 * Direct or ring (direct.h)? In lossless mode pf_rt_room() made the
 * decision for this burst (and sized the burst by it); the owner cannot
 * become this lcore in between without the test failing the same way.
 */
static __rte_always_inline bool
edge_direct(const struct pf_rt_stage *rs, const struct pf_rt_ring *r, int me)
{
	if (unlikely(rs->kind & PF_RT_KIND_LOSSLESS))
		return r->bp_direct;
	return pf_rt_edge_direct_ok(r, r->to, me);
}

/*
 * The hand-over itself: charge @p rs, count the burst on @p r, let a capture
 * armed there see it as its consumer gets it, give the consumer the hints
 * @p hints (burst_hint.h). Returns the time the consumer starts at.
 */
static __rte_always_inline uint64_t
hand_over(struct pf_rt_stage *rs, struct pf_rt_ring *r, struct rte_mbuf **pkts, uint16_t n,
	  uint64_t t, uint32_t hints)
{
	uint64_t now = likely(t == 0) ? 0 : charge_stamp(rs, pkts[0], t);

	r->direct += n;
	if (unlikely(__atomic_load_n(&r->tap, __ATOMIC_RELAXED) != NULL))
		pf_tap_burst(&r->tap, pkts, n);
	pf_hint_give(r->to->st, hints);
	return now;
}

static __rte_always_inline uint64_t
direct_send(struct pf_rt_stage *rs, struct pf_rt_ring *r, struct rte_mbuf **pkts, uint16_t n,
	    int me, uint64_t t)
{
	return pf_rt_run_burst(r->to, pkts, n, me, hand_over(rs, r, pkts, n, t, 0));
}

/*
 * Send @p n packets over @p r. @p rs has been running since @p t, not yet
 * charged; returns the time since which it runs uncharged again.
 */
static __rte_always_inline uint64_t
edge_send(struct pf_rt_stage *rs, struct pf_rt_ring *r, struct rte_mbuf **pkts, uint16_t n,
	  int me, uint64_t t)
{
	if (edge_direct(rs, r, me))
		return direct_send(rs, r, pkts, n, me, t);
	ring_send(rs, r, pkts, n, t);
	return t;
}

/*
 * An edge to a stage with instances: the symmetric flow hash picks each
 * packet's instance (a flow always takes the same one, so it keeps its
 * order); a stable counting sort keeps the burst order within each.
 */
static __rte_noinline uint64_t
fan_send(struct pf_rt_stage *rs, const struct pf_rt_fan *f, struct rte_mbuf **pkts, uint16_t n,
	 int me, uint64_t t)
{
	struct rte_mbuf *sorted[PF_BURST_MAX];
	uint16_t cnt[PF_MAX_INSTANCES] = { 0 }, at[PF_MAX_INSTANCES], i, k, sum = 0;
	uint8_t inst[PF_BURST_MAX];

	pf_flow_pick_burst(pkts, n, f->n, inst);
	if (f->n == 2) {
		/* Two instances (the common case): both lists at once, no counting
		 * pass and no counters in memory; each keeps the burst order. */
		struct rte_mbuf **one = sorted + PF_BURST_MAX / 2;
		uint16_t n0 = 0, n1 = 0;

		if (unlikely(n > PF_BURST_MAX / 2))
			goto any_n;
		for (i = 0; i < n; i++) {
			sorted[n0] = pkts[i];
			one[n1] = pkts[i];
			n0 += inst[i] == 0;
			n1 += inst[i] != 0;
		}
		if (n0 != 0)
			t = edge_send(rs, f->ring[0], sorted, n0, me, t);
		if (n1 != 0)
			t = edge_send(rs, f->ring[1], one, n1, me, t);
		return t;
	}
any_n:
	for (i = 0; i < n; i++)
		cnt[inst[i]]++;
	for (k = 0; k < f->n; k++) {
		at[k] = sum;
		sum += cnt[k];
	}
	for (i = 0; i < n; i++)
		sorted[at[inst[i]]++] = pkts[i];
	for (k = 0, sum = 0; k < f->n; sum += cnt[k], k++)
		if (cnt[k] != 0)
			t = edge_send(rs, f->ring[k], sorted + sum, cnt[k], me, t);
	return t;
}

/* Move @p n packets that all took edge @p e; same contract as edge_send(). */
static __rte_always_inline uint64_t
edge_move(struct pf_rt_stage *rs, uint16_t e, struct rte_mbuf **pkts, uint16_t n, int me,
	  uint64_t t)
{
	struct pf_stage *st = rs->st;

	rs->edge_pkts[e] += n;
	if (e == PF_EDGE_DROP)
		rte_pktmbuf_free_bulk(pkts, n);
	else if (st->ops->dp.tx != NULL) {
		if (unlikely(t != 0) && __atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED))
			lat_sink(rs, pkts, n);
		st->ops->dp.tx(st, pkts, n);
	}
	else if (likely(rs->out[e] != NULL))
		return edge_send(rs, rs->out[e], pkts, n, me, t);
	else if (rs->fan[e] != NULL)
		return fan_send(rs, rs->fan[e], pkts, n, me, t);
	else {
		rs->no_edge += n;
		if (__atomic_load_n(&rs->watch, __ATOMIC_RELAXED) != 0 ||
		    __atomic_load_n(&rs->drop_tap, __ATOMIC_RELAXED) != NULL)
			pf_watch_lost(rs, pkts, n, PF_REASON_NO_EDGE);
		rte_pktmbuf_free_bulk(pkts, n);
	}
	return t;
}

/* Packets took different edges: sort them by edge (stable), move each group. */
static __rte_noinline uint64_t
dispatch_mixed(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, const uint16_t *edge,
	       int me, uint64_t t)
{
	struct rte_mbuf *sorted[PF_BURST_MAX];
	uint16_t cnt[PF_MAX_EDGES] = { 0 }, at[PF_MAX_EDGES], i, e, sum = 0;

	for (i = 0; i < n; i++)
		cnt[edge[i]]++;
	for (e = 0; e < PF_MAX_EDGES; e++) {
		at[e] = sum;
		sum += cnt[e];
	}
	for (i = 0; i < n; i++)
		sorted[at[edge[i]]++] = pkts[i];
	for (e = 0, sum = 0; e < PF_MAX_EDGES; sum += cnt[e], e++)
		if (cnt[e] != 0)
			t = edge_move(rs, e, sorted + sum, cnt[e], me, t);
	return t;
}

#ifndef NDEBUG
/*
 * Debug builds: every packet a stage sends to edge 0 must bump exactly one
 * of its DROP counters, or the accounting cannot add up.
 */
static uint64_t
drop_ctr_sum(const struct pf_stage *st)
{
	uint64_t drops = 0;
	uint16_t k;

	for (k = 0; k < st->ops->n_ctrs; k++)
		if (st->ops->ctrs[k].kind == PF_CTR_DROP)
			drops += st->ctrs[k];
	return drops;
}

static void
check_drop_discipline(const struct pf_stage *st, uint64_t before, uint16_t n,
		      const uint16_t *edge, uint16_t all)
{
	uint64_t dropped = 0, moved = drop_ctr_sum(st) - before;
	uint16_t i;

	/* One edge for the burst: edge[] may be unwritten (pf_stage.h). */
	if (all != PF_EDGE_MIXED)
		dropped = all == PF_EDGE_DROP ? n : 0;
	for (i = 0; all == PF_EDGE_MIXED && i < n; i++)
		dropped += edge[i] == PF_EDGE_DROP;
	if (moved != dropped)
		rte_panic("stage %s: %" PRIu64 " packets on edge 0 but drop counters moved by %" PRIu64 "\n",
			  st->conf->name, dropped, moved);
}

#endif

/*
 * A holding stage's burst (ops->dp.emit set, always MIXED): take out what it
 * kept (PF_EDGE_HELD), move the rest, then send what the burst released.
 * Out of line, so the common dispatch stays as it was.
 */
static __rte_noinline uint64_t
run_held(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge, int me,
	 uint64_t t0)
{
	uint16_t i, k = 0;
	uint64_t t1;

	for (i = 0; i < n; i++)
		if (edge[i] != PF_EDGE_HELD) {
			pkts[k] = pkts[i];
			edge[k++] = edge[i];
		}
	if (k != 0)
		t0 = dispatch_mixed(rs, pkts, k, edge, me, t0);
	t1 = charge(rs, t0);
	pf_rt_emit(rs, me, false, t1 != 0);
	return t1 != 0 ? rte_rdtsc() : 0;
}

static uint64_t run_expand(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, int me,
			   uint64_t t0);

/*
 * A sink that takes every packet (PF_STAGE_TX_ALL): no verdicts, straight
 * to ops->dp.tx, which reads the producer's hint in in_burst_port.
 */
static __rte_always_inline uint64_t
run_sink(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint64_t t0)
{
	struct pf_stage *st = rs->st;

	rs->packets += n;
	rs->bursts++;
	rs->ran = true;
	rs->edge_pkts[1] += n;
	/* One test of t0 for both: an untimed pass sends and returns (charge's
	 * own test), a timed one may look for rx stamps first. */
	if (likely(t0 == 0)) {
		st->ops->dp.tx(st, pkts, n);
		pf_hint_give(st, 0);
		return 0;
	}
	if (__atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED))
		lat_sink(rs, pkts, n);
	st->ops->dp.tx(st, pkts, n);
	pf_hint_give(st, 0);
	return charge(rs, t0);
}

/*
 * Run the burst through @p rs and on, depth-first, through the consumers
 * on this lcore. A whole burst handed directly to the next stage is a tail
 * call: the loop goes on with that stage (one frame and one edge array for
 * the chain), so a fused pipeline costs one call per burst, not per stage.
 */
static __rte_always_inline uint64_t
run_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, int me, uint64_t t0)
{
	uint16_t edge[PF_BURST_MAX];
	uint64_t t1;
	uint32_t hints;
	uint16_t all, i, diff;

	for (;;) {
		struct pf_stage *st = rs->st;
		uint8_t watch = __atomic_load_n(&rs->watch, __ATOMIC_RELAXED);
		uint8_t kind = rs->kind;
#ifndef NDEBUG
		uint64_t drops_before = drop_ctr_sum(st);
#endif

		/* One load for the burst's kind tests (GCC would test memory twice). */
		__asm__("" : "+r"(kind));
		if ((kind & PF_RT_KIND_TX_ALL) && likely(watch == 0))
			return run_sink(rs, pkts, n, t0);
		/* Counted before the call: nothing held across it. */
		rs->packets += n;
		rs->bursts++;
		rs->ran = true;
		/* Trace or drop capture armed (app/console/trace.c): the one branch per burst. */
		if (unlikely(watch != 0)) {
			/* One packet per call: no hint holds for the burst, none is taken. */
			pf_hint_per_packet(st);
			all = pf_watch_burst(rs, pkts, n, edge);
			pf_hint_take(st);
			hints = 0;
		} else {
			all = rs->process_burst(st, pkts, n, edge);
			/* Its own hint and its producer's in-port hint end here (in_burst_port
			 * lasts until the burst has left: a sink's tx reads it). */
			hints = pf_hint_take(st);
		}
#ifndef NDEBUG
		check_drop_discipline(st, drops_before, n, edge, all);
		pf_hint_check(st, pkts, n, hints, all);
#endif
		diff = 0;
		if (unlikely(all == PF_EDGE_MIXED)) {
			if (unlikely(kind & PF_RT_KIND_EMIT)) {
				pf_hint_end(st);
				return run_held(rs, pkts, n, edge, me, t0);
			}
			/* The stage did not say: find out, eight edges per step. */
			uint64_t want = edge[0] * 0x0001000100010001ull, w[2], d4 = 0;
			uint16_t steps = n >> 3;

			all = edge[0];
			for (i = 0; i < steps; i++) {
				memcpy(w, edge + 8 * i, sizeof(w));
				d4 |= (w[0] ^ want) | (w[1] ^ want);
			}
			for (i = steps * 8; i < n; i++)
				diff |= edge[i] ^ all;
			diff |= d4 != 0;
			if (diff != 0)
				t0 = dispatch_mixed(rs, pkts, n, edge, me, t0);
		}
		if (likely(diff == 0)) {
			/* The common case: the whole burst takes one edge. Handed
			 * over directly, this stage's end is its consumer's start
			 * (one timestamp) and the loop goes on with the consumer. */
			struct pf_rt_ring *r = rs->out[all];   /* out[PF_EDGE_DROP] is NULL */
			struct pf_rt_stage *to;

			/* Neither a sink nor lossless (edge_direct's other case): one
			 * test. (to read once: the acquire would have GCC read it again.) */
			if (r != NULL &&
			    (to = r->to, likely(!(kind & (PF_RT_KIND_TX | PF_RT_KIND_LOSSLESS))) ?
					 pf_rt_edge_direct_ok(r, to, me) :
					 !(kind & PF_RT_KIND_TX) && edge_direct(rs, r, me))) {
				pf_hint_resolve(pkts, n, &hints, r);
				rs->edge_pkts[all] += n;
				pf_hint_end(st);
				t1 = hand_over(rs, r, pkts, n, t0, hints);
				if (unlikely(to->kind & PF_RT_KIND_EXPAND))
					return run_expand(to, pkts, n, me, t1);
				rs = to;
				t0 = t1;
				continue;
			}
			pf_hint_resolve_all(pkts, n, hints);
			t0 = edge_move(rs, all, pkts, n, me, t0);
		}
		/* This burst's hint from the producer (if any) ends with it. */
		pf_hint_end(st);
		return charge(rs, t0);
	}
}

/*
 * A stage that emits more packets than it takes (ops->dp.expand: ip4frag).
 * expand turns a prefix of the input into at most one burst of output, and
 * that burst runs through process_burst and moves on like any other. The
 * packets beyond the ones taken are the stage's replicas: accounting adds
 * them to rx, as it does tx's flood copies.
 */
static __rte_noinline uint64_t
run_expand(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, int me, uint64_t t0)
{
	struct rte_mbuf *out[PF_BURST_MAX];
	struct pf_stage *st = rs->st;
	uint16_t done = 0, taken, m;

	while (done < n) {
		taken = 0;
		m = st->ops->dp.expand(st, pkts + done, n - done, &taken, out, PF_BURST_MAX);
		/* Each input packet becomes one or more: no progress is a bug. */
		RTE_VERIFY(taken != 0 && taken <= n - done && m >= taken);
		done += taken;
		st->replicas += m - taken;
		t0 = run_burst(rs, out, m, me, t0);
	}
	return t0;
}

uint64_t
pf_rt_run_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, int me, uint64_t t0)
{
	if (unlikely(rs->kind & PF_RT_KIND_EXPAND))
		return run_expand(rs, pkts, n, me, t0);
	return run_burst(rs, pkts, n, me, t0);
}

uint16_t
pf_rt_emit(struct pf_rt_stage *rs, int me, bool draining, bool timed)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint16_t edge[PF_BURST_MAX], n;
	uint32_t max = PF_BURST_MAX;
	uint64_t t0 = timed ? rte_rdtsc() : 0;
#ifndef NDEBUG
	uint64_t drops_before = drop_ctr_sum(rs->st);
#endif

	if (unlikely(rs->kind & PF_RT_KIND_LOSSLESS))
		max = pf_rt_room(rs, me, max);
	n = max != 0 ? rs->st->ops->dp.emit(rs->st, pkts, (uint16_t)max, edge, draining) : 0;
	if (n == 0)
		return 0;
#ifndef NDEBUG
	check_drop_discipline(rs->st, drops_before, n, edge, PF_EDGE_MIXED);
#endif
	t0 = dispatch_mixed(rs, pkts, n, edge, me, t0);
	charge(rs, t0);
	return n;
}

uint32_t
pf_rt_room(struct pf_rt_stage *rs, int me, uint32_t max)
{
	uint16_t k;

	for (k = 0; k < rs->n_out && max != 0; k++) {
		struct pf_rt_ring *r = rs->outs[k];
		uint32_t room;

		r->bp_direct = pf_rt_edge_direct_ok(r, r->to, me);
		room = r->bp_direct ? pf_rt_room(r->to, me, max) : rte_ring_free_count(r->ring);
		if (room < max)
			max = room;
	}
	return max;
}
