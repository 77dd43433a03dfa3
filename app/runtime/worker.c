/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker lcore loop. Each pass runs the stages of the lcore's map that
 * the lcore owns, in order: a source takes one burst from its ports, any
 * other stage whose rings may hold packets (rings_maybe: edges from other
 * lcores, or a ring still draining after a move) one burst from each input
 * ring; edge.c runs each burst through the stage and, depth-first, through
 * its consumers on this lcore. After the pass: stage upkeep about once a
 * millisecond, the lcore's cycles, and every PF_RT_QSBR_EVERY passes a
 * quiescent state for QSBR. One pass in PF_RT_TIME_EVERY (at random) times
 * its stages (rt_internal.h); every pass reads the clock once.
 */
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "pf_inject.h"
#include "pf_latency.h"
#include "pf_tap.h"
#include "rt_internal.h"

#define PF_RT_QSBR_EVERY 16
/* With runtime.idle_sleep_us: passes in a row that moved nothing before a sleep. */
#define PF_RT_NAP_AFTER 64

/*
 * Where a frame starts in a pipefwd mbuf (pools with no private area, the
 * standard headroom; rx's fast path assumes the same). A prefetch needs
 * the address before the mbuf's first line has arrived to say it.
 */
#define PF_RT_FRAME_OFF (sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM)

/*
 * A burst dequeued from another lcore's ring: every line the consumer will
 * read was last written on that lcore (the mbuf's first line, its metadata
 * line, the frame). Ask for all of them at once, so the transfers overlap
 * (about 166 cycles each here, docs/scaling.md) instead of each stage
 * waiting for them four packets at a time, behind a dependent load.
 */
static __rte_always_inline void
prefetch_burst(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		const char *m = (const char *)pkts[i];

		rte_prefetch0(m);
		rte_prefetch0(m + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(m + PF_RT_FRAME_OFF);
	}
}

/*
 * A source on an lcore that exchanges packets with another (its mbufs come
 * back freed by that core: pf_rt_lcore.recycled): prefetch for write the
 * three lines of each mbuf its port's next burst will take from this
 * lcore's mempool cache (the cache hands out its top first), so the
 * driver's rewrite of them (rte_pktmbuf_reset, the frame copy) does not
 * wait for each transfer in turn. This burst's processing hides them.
 * Measured: l3-1k `[rx] | [lpm tx]` port rx 107-133 -> 66-91 cycles a
 * packet (docs/scaling.md section 6). PREFETCHW as such: GCC's write
 * prefetch is a read prefetch at the build's -march (corei7); a CPU
 * without it runs the encoding as a NOP.
 */
static __rte_noinline void
prefetch_recycled(struct rte_mempool *mp, unsigned int me, uint16_t burst)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(mp, me);
	uint32_t k, n;

	if (c == NULL)
		return;
	n = RTE_MIN(c->len, (uint32_t)burst);
	for (k = 1; k <= n; k++) {
		const char *m = c->objs[c->len - k];

#if defined(RTE_ARCH_X86)
		__asm__ volatile("prefetchw %0" : : "m"(*m));
		__asm__ volatile("prefetchw %0" : : "m"(*(m + RTE_CACHE_LINE_SIZE)));
		__asm__ volatile("prefetchw %0" : : "m"(*(m + PF_RT_FRAME_OFF)));
#else
		rte_prefetch0(m);
		rte_prefetch0(m + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(m + PF_RT_FRAME_OFF);
#endif
	}
}

/*
 * Latency on: did this dequeue (ring positions @p c .. @p c + @p n - 1) take
 * the packet the producer stamped? Then record how long it sat (pf_latency.h).
 */
static __rte_noinline void
lat_ring_check(struct pf_rt_ring *r, uint32_t c, uint16_t n)
{
	uint64_t s = __atomic_load_n(&r->lat_sample, __ATOMIC_ACQUIRE);
	uint32_t pos = (uint32_t)(s >> 32);

	if (s == 0 || pos - c >= n || pos + 1 == r->lat_seen)
		return;
	r->lat_seen = pos + 1;
	pf_lat_record(&r->sojourn, (uint32_t)((uint32_t)rte_rdtsc() - (uint32_t)s));
}

/*
 * A burst from each of @p rs's input rings. Out of line: on one lcore the
 * rings of direct edges stay empty and the pass does not come here. Once
 * every ring is empty and every producer runs on this lcore, the rings
 * need no more polling (direct.h). A timed pass charges the dequeue and
 * the prefetch to @p rs: they are its side of the hand-off (the ring's
 * index and slot lines come from the producer's core), which no stage was
 * charged before and the planner counts on (docs/scaling.md, section 6,
 * "The crossing re-measured").
 */
static __rte_noinline uint16_t
run_rings(struct pf_rt_stage *rs, int me, bool timed)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint16_t i, n, moved = 0;
	bool settled = true;
	uint32_t max, c;
	uint64_t t0;

	for (i = 0; i < rs->n_in; i++) {
		struct pf_rt_ring *r = rs->in[i];

		if (!pf_rt_ring_settled(r, me))
			settled = false;
		if (rte_ring_empty(r->ring))
			continue;
		max = __atomic_load_n(&r->burst, __ATOMIC_RELAXED);
		if (unlikely(rs->kind & PF_RT_KIND_LOSSLESS))
			max = pf_rt_room(rs, me, max);
		t0 = timed ? rte_rdtsc() : 0;
		c = r->ring->cons.head;
		n = (uint16_t)rte_ring_dequeue_burst(r->ring, (void **)pkts, max, NULL);
		if (n == 0) {
			settled = false;
			continue;
		}
		if (unlikely(__atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED)))
			lat_ring_check(r, c, n);
		prefetch_burst(pkts, n);
		r->dequeued += n;
		if (unlikely(__atomic_load_n(&r->tap, __ATOMIC_RELAXED) != NULL))
			pf_tap_burst(&r->tap, pkts, n);
		pf_rt_run_burst(rs, pkts, n, me, t0);
		moved += n;
		if (!rte_ring_empty(r->ring))
			settled = false;
	}
	pf_rt_rings_settle(rs, settled);
	return moved;
}

/*
 * A source's burst in a timed pass: the port's rx is timed too (io_cycles,
 * the driver's share, which no stage is charged; preempted intervals count
 * as the typical one, as charge() does), then the burst runs from the time
 * after it. Out of line: the untimed pass stays as it was.
 */
static __rte_noinline uint16_t
run_source_timed(struct pf_rt_stage *rs, uint32_t max, int me, bool recycled)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	struct pf_stage *st = rs->st;
	uint64_t t0 = rte_rdtsc(), t1, d;
	uint16_t n = st->ops->dp.rx(st, pkts, (uint16_t)max);

	if (n == 0)
		return 0;           /* an empty poll is idle time, not a packet's */
	/* The prefetch for the next burst is the port rx's cost: timed with it. */
	if (recycled && rs->rx_pool != NULL)
		prefetch_recycled(rs->rx_pool, (unsigned int)me, (uint16_t)max);
	t1 = rte_rdtsc();
	d = pf_rt_interval(&rs->io_typ, t1 - t0, &rs->time_skipped);
	rs->io_cycles += d << PF_RT_TIME_SHIFT;
	if (unlikely(__atomic_load_n(&rs->tap, __ATOMIC_RELAXED) != NULL))
		pf_tap_burst(&rs->tap, pkts, n);
	pf_rt_run_burst(rs, pkts, n, me, t1);
	return n;
}

/* One pass of a stage; returns packets it took in. */
static __rte_always_inline uint16_t
run_stage(const struct pf_runtime *rt, struct pf_rt_stage *rs, int me, bool timed, bool rings,
	  bool recycled)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	struct pf_stage *st = rs->st;
	uint16_t n, moved = 0;
	uint32_t max;

	if (rs->kind & PF_RT_KIND_SOURCE) {
		if (likely(rt->rx_state == PF_RX_POLLING)) {
			max = __atomic_load_n(&rs->burst, __ATOMIC_RELAXED);
			if (unlikely(rs->kind & PF_RT_KIND_LOSSLESS)) {
				max = pf_rt_room(rs, me, max);
				if (max == 0)      /* held back, not idle (--idle-exit) */
					__atomic_store_n(&rs->held, rs->held + 1,
							 __ATOMIC_RELAXED);
			}
			if (unlikely(timed)) {
				moved = max != 0 ? run_source_timed(rs, max, me, recycled) : 0;
			} else {
				n = max != 0 ? st->ops->dp.rx(st, pkts, (uint16_t)max) : 0;
				if (n != 0) {
					if (recycled && rs->rx_pool != NULL)
						prefetch_recycled(rs->rx_pool, (unsigned int)me,
								  (uint16_t)max);
					if (unlikely(__atomic_load_n(&rs->tap, __ATOMIC_RELAXED) !=
						     NULL))
						pf_tap_burst(&rs->tap, pkts, n);
					pf_rt_run_burst(rs, pkts, n, me, 0);
					moved += n;
				}
			}
		}
	} else if (rings) {
		/* Rings from other lcores, or still draining after a move. */
		moved = run_rings(rs, me, timed);
	}
	/* Idle: no burst since the last check, from a port, a ring or a
	 * producer on this lcore that handed one over directly. */
	if (rs->kind & PF_RT_KIND_IDLE) {
		if (!rs->ran)
			st->ops->dp.idle(st, pf_now_ns());
		rs->ran = false;
	}
	return moved;
}

int
pf_rt_worker_main(void *arg)
{
	struct pf_runtime *rt = arg;
	struct pf_rt_lcore *lc = NULL;
	const struct pf_lcore_map *map;
	int me = (int)rte_lcore_id();
	const uint64_t key = pf_rt_direct_key(me);
	uint64_t t0, t1, moved;
	/* runtime.idle_sleep_us, read once: a reload keeps the value of the start. */
	const uint32_t nap_us = rt->idle_sleep_us;
	uint32_t rnd, empty = 0;
	uint16_t i;
	bool timed, recycled;

	for (i = 0; i < rt->n_lcores; i++)
		if ((int)rt->lcores[i].id == me)
			lc = &rt->lcores[i];
	if (lc == NULL)
		return 0;
	rte_rcu_qsbr_thread_online(rt->qsbr, lc->qsbr_id);
	/* Sources wait for every worker: a replayed file is read at once, and a
	 * consumer that is not polling yet would turn it into ring_full drops. */
	if (__atomic_add_fetch(&rt->workers_ready, 1, __ATOMIC_ACQ_REL) == rt->n_lcores) {
		int off = PF_RX_NOT_STARTED;

		/* Unless a stop came first (it stays PF_RX_STOPPED then). */
		__atomic_compare_exchange_n(&rt->rx_state, &off, PF_RX_POLLING, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	t0 = rte_rdtsc();
	__atomic_store_n(&lc->first_tsc, t0, __ATOMIC_RELAXED);
	__atomic_store_n(&lc->last_tsc, t0, __ATOMIC_RELEASE);
	rnd = (uint32_t)t0 | 1;
	while (!__atomic_load_n(&rt->stop, __ATOMIC_ACQUIRE)) {
		moved = 0;
		/* One pass in PF_RT_TIME_EVERY times its stages, at random (so
		 * no periodic traffic pattern aliases with it): the top bits of
		 * a 32-bit LCG (Numerical Recipes' constants; its low bits are
		 * periodic, its top four are not, over 2^32 passes). */
		rnd = rnd * 1664525u + 1013904223u;
		timed = (rnd >> (32 - PF_RT_TIME_SHIFT)) == 0;
		/* The map can change between passes (reload); a stage in the map
		 * runs only once this lcore owns it (hand-over in progress). */
		map = __atomic_load_n(&lc->map, __ATOMIC_ACQUIRE);
		recycled = __atomic_load_n(&lc->recycled, __ATOMIC_RELAXED) != 0;
		for (i = 0; i < map->n; i++) {
			struct pf_rt_stage *rs = map->stages[i];
			/* Owned, and (one compare) whether its rings need a look. */
			if (likely(pf_rt_settled_here(rs, key)))
				moved += run_stage(rt, rs, me, timed, false, recycled);
			else if (pf_rt_owns(rs, me, false))
				moved += run_stage(rt, rs, me, timed, true, recycled);
		}
		t1 = rte_rdtsc();
		if (unlikely(t1 >= lc->housekeep_tsc)) {
			/* Upkeep runs loaded or idle, about once a millisecond. */
			for (i = 0; i < map->n; i++) {
				struct pf_stage *st = map->stages[i]->st;

				if (!pf_rt_owns(map->stages[i], me, true))
					continue;
				if (st->ops->dp.housekeep != NULL)
					st->ops->dp.housekeep(st, pf_now_ns());
				/* What the timers made or released (and, stopping, dropped). */
				if (st->ops->dp.emit != NULL)
					pf_rt_emit(map->stages[i], me, rt->rx_state == PF_RX_STOPPED, timed);
				pf_rt_hwm_serve(map->stages[i]);   /* hwm restart after a clear */
			}
			/* trace inject: a synthetic packet's step, if it is ours. */
			if (unlikely(__atomic_load_n(&rt->inject, __ATOMIC_RELAXED) != NULL))
				pf_inject_serve(rt, me);
			lc->housekeep_tsc = t1 + rte_get_tsc_hz() / 1000;
		}
		if (moved == 0)
			lc->idle_cycles += t1 - t0;
		__atomic_store_n(&lc->last_tsc, t1, __ATOMIC_RELEASE);
		t0 = t1;
		__atomic_store_n(&lc->loops, lc->loops + 1, __ATOMIC_RELEASE);
		/* A quiescent state every PF_RT_QSBR_EVERY passes: a synchronize
		 * waits a few microseconds more, the loop skips its loads. */
		if ((lc->loops & (PF_RT_QSBR_EVERY - 1)) == 0)
			rte_rcu_qsbr_quiescent(rt->qsbr, lc->qsbr_id);
		/*
		 * Idle sleep (runtime.idle_sleep_us, off by default): after
		 * PF_RT_NAP_AFTER passes in a row that moved nothing, the lcore
		 * gives its CPU back for a while, as OVS's pmd-sleep-max does, on
		 * a machine it shares. The first packet after waits up to the
		 * sleep (plus the kernel's timer slack). Offline in QSBR while
		 * asleep (it holds no table between passes), so no grace period
		 * waits on a sleeper. Counted idle.
		 */
		if (unlikely(nap_us != 0)) {
			if (moved != 0) {
				empty = 0;
			} else if (++empty >= PF_RT_NAP_AFTER) {
				rte_rcu_qsbr_thread_offline(rt->qsbr, lc->qsbr_id);
				rte_delay_us_sleep(nap_us);
				rte_rcu_qsbr_thread_online(rt->qsbr, lc->qsbr_id);
				t0 = rte_rdtsc();
				lc->idle_cycles += t0 - t1;
				__atomic_store_n(&lc->naps, lc->naps + 1, __ATOMIC_RELAXED);
				__atomic_store_n(&lc->last_tsc, t0, __ATOMIC_RELEASE);
			}
		}
		/* A spare lcore (no stages) waits without burning its CPU. */
		if (unlikely(map->n == 0)) {
			rte_rcu_qsbr_quiescent(rt->qsbr, lc->qsbr_id);
			rte_delay_us_sleep(200);
		}
	}
	rte_rcu_qsbr_thread_offline(rt->qsbr, lc->qsbr_id);
	return 0;
}
