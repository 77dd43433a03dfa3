/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dry-run steps of a synthetic packet (app/runtime/pf_inject.h): a mailbox
 * of one step (rt->inject) the control thread posts and the owning lcore
 * serves at its upkeep.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "burst_hint.h"
#include "direct.h"
#include "pf_inject.h"

enum { INJ_POSTED = 1, INJ_RUNNING, INJ_DONE };

/*
 * The step itself, on the owning lcore between passes (no hint is pending
 * then: each burst took and ended its own). The stage's counters point at a
 * copy of themselves for the call, so a reader sees the same values
 * throughout and the live ones never move; dry_run tells the stage to keep
 * its state (pf_stage.h).
 */
static void
inject_step(struct pf_inject_step *s)
{
	struct pf_stage *st = s->rs->st;
	uint16_t nc = st->ops->n_ctrs, e, reason, len_in, taken = 0, k;
	struct rte_mbuf *out[PF_BURST_MAX];
	uint64_t *live = st->ctrs, t0, t1;
	uint8_t hdr_in[PF_TRACE_HDR], n_in;
	uint32_t h;

	memcpy(s->ctrs, live, nc * sizeof(*live));
	memcpy(s->before, live, nc * sizeof(*live));
	n_in = pf_watch_hdr(hdr_in, s->m);
	len_in = (uint16_t)rte_pktmbuf_pkt_len(s->m);
	st->ctrs = s->ctrs;
	st->dry_run = true;
	pf_hint_per_packet(st);
	t0 = rte_rdtsc();
	s->made = 0;
	if (s->rs->kind & PF_RT_KIND_EXPAND) {
		/* Its packets are new mbufs: follow the first, free the others. */
		k = st->ops->dp.expand(st, &s->m, 1, &taken, out, PF_BURST_MAX);
		RTE_VERIFY(taken == 1 && k >= 1);
		s->made = k;
		s->m = out[0];
		if (k > 1)
			rte_pktmbuf_free_bulk(out + 1, k - 1);
	}
	e = st->ops->dp.process_burst(st, &s->m, 1, &s->edge);
	t1 = rte_rdtsc();
	if (e != PF_EDGE_MIXED)
		s->edge = e;
	h = pf_hint_take(st);
	pf_hint_resolve_all(&s->m, 1, h);
	reason = pf_watch_moved(st, s->before, RTE_MIN(nc, (uint16_t)PF_TRACE_MAX_CTRS),
				s->edge, &s->rec);
	pf_watch_rec(&s->rec, st, s->m, s->edge, reason, t0, t1, hdr_in, n_in, len_in);
	st->dry_run = false;
	st->ctrs = live;
	pf_hint_end(st);
}

void
pf_inject_serve(struct pf_runtime *rt, int me)
{
	struct pf_inject_step *s = __atomic_load_n(&rt->inject, __ATOMIC_ACQUIRE);
	uint32_t posted = INJ_POSTED;

	if (s == NULL || !pf_rt_owns(s->rs, me, true) ||
	    !__atomic_compare_exchange_n(&s->state, &posted, INJ_RUNNING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	inject_step(s);
	__atomic_store_n(&s->state, INJ_DONE, __ATOMIC_RELEASE);
}

int
pf_inject_run(struct pf_runtime *rt, struct pf_inject_step *s, unsigned int wait_ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * wait_ms;
	uint32_t posted = INJ_POSTED;
	int rc = 0;

	memset(&s->rec, 0, sizeof(s->rec));
	s->state = INJ_POSTED;
	__atomic_store_n(&rt->inject, s, __ATOMIC_RELEASE);
	while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != INJ_DONE) {
		if (rte_get_timer_cycles() > end &&
		    __atomic_compare_exchange_n(&s->state, &posted, 0, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			rc = -ETIMEDOUT;   /* withdrawn before any lcore took it */
			break;
		}
		posted = INJ_POSTED;
		rte_delay_us_sleep(50);
	}
	__atomic_store_n(&rt->inject, NULL, __ATOMIC_RELEASE);
	return rc;
}
