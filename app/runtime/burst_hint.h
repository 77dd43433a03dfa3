/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime's half of the burst hints (the stage's half, the fields and
 * PF_BURST_PORT*, is the contract: include/pf_stage.h). Every rule of the
 * protocol the runtime keeps is here; edge.c only calls these at the points
 * a burst passes.
 *
 *   burst_port        a producer's "every packet goes to port p" (optionally
 *                     PF_BURST_PORT_UNWRITTEN: out_port left for the hint);
 *   in_burst_in_port  a source's "every packet came from port p";
 *   in_burst_port     what a consumer finds: its producer's burst_port.
 *
 * After each process_burst the runtime takes both outgoing hints and clears
 * them (pf_hint_take). It gives them to the next stage only with a whole burst
 * that goes direct to a consumer on this lcore (pf_hint_give); a ring, a mixed
 * burst or a trace gives none. An UNWRITTEN hint never escapes: out_port is
 * written (pf_hint_resolve) before the burst reaches anything but a sink that
 * takes the hint with no capture on the edge and no trace on the sink
 * (pf_hint_suffices). in_burst_port lasts until the burst has left its stage
 * (a sink's tx reads it), then pf_hint_end clears it. Debug builds check every
 * hint on every packet (pf_hint_check).
 */
#ifndef PF_RT_BURST_HINT_H
#define PF_RT_BURST_HINT_H

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_debug.h>

#include "pf_runtime.h"

/*
 * The hints as one word (pf_stage.h keeps the fields in this order): a
 * stage's outgoing pair, burst_port | in_burst_in_port << 16, taken and
 * cleared after its burst; a consumer's incoming pair, in_burst_in_port |
 * in_burst_port << 16, the same word rotated.
 */
static __rte_always_inline uint32_t
pf_hint_take(struct pf_stage *st)
{
	uint32_t h;

	RTE_BUILD_BUG_ON(offsetof(struct pf_stage, in_burst_in_port) !=
			 offsetof(struct pf_stage, burst_port) + 2 ||
			 offsetof(struct pf_stage, in_burst_port) !=
			 offsetof(struct pf_stage, burst_port) + 4);
	memcpy(&h, &st->burst_port, sizeof(h));
	memset(&st->burst_port, 0, sizeof(h));
	return h;
}

/* Give consumer @p to the hints @p h its producer took (0: none). */
static __rte_always_inline void
pf_hint_give(struct pf_stage *to, uint32_t h)
{
	h = (h >> 16) | (h << 16);
	memcpy(&to->in_burst_in_port, &h, sizeof(h));
}

/*
 * A trace runs @p st one packet per call: no in-port hint holds for the
 * burst (the producer's burst-port hint does: it held for every packet).
 */
static __rte_always_inline void
pf_hint_per_packet(struct pf_stage *st)
{
	st->in_burst_in_port = 0;
}

/* The burst has left @p st: its producer's burst-port hint ends with it. */
static __rte_always_inline void
pf_hint_end(struct pf_stage *st)
{
	st->in_burst_port = 0;
}

/*
 * Whether a burst whose out_port only the hint holds (PF_BURST_PORT_UNWRITTEN)
 * may reach @p r's consumer so: a sink that takes the hint, with no capture
 * on the edge and no trace on the sink (both read out_port).
 */
static __rte_always_inline bool
pf_hint_suffices(const struct pf_rt_ring *r)
{
	return (r->to->kind & PF_RT_KIND_TX_ALL) &&
	       __atomic_load_n(&r->tap, __ATOMIC_RELAXED) == NULL &&
	       __atomic_load_n(&r->to->watch, __ATOMIC_RELAXED) == 0;
}

/*
 * A whole burst goes direct over @p r with hints *@p hints: write the
 * out_port an UNWRITTEN hint stood for unless the consumer may take the
 * hint alone, and then hand the hint on as written.
 */
static __rte_always_inline void
pf_hint_resolve(struct rte_mbuf **pkts, uint16_t n, uint32_t *hints, const struct pf_rt_ring *r)
{
	if (unlikely(*hints & PF_BURST_PORT_UNWRITTEN) && !pf_hint_suffices(r)) {
		pf_burst_port_write(pkts, n, (uint16_t)*hints);
		*hints &= ~(uint32_t)PF_BURST_PORT_UNWRITTEN;
	}
}

/* Anything else (a ring, a mixed burst, a sink's tx, a drop): out_port must be written. */
static __rte_always_inline void
pf_hint_resolve_all(struct rte_mbuf **pkts, uint16_t n, uint32_t hints)
{
	if (unlikely(hints & PF_BURST_PORT_UNWRITTEN))
		pf_burst_port_write(pkts, n, (uint16_t)hints);
}

#ifndef NDEBUG
/*
 * Debug builds: a hint must hold for every packet of the burst, the
 * burst-port hint on out_port (@p out) or the in-port hint on in_port.
 */
static inline void
pf_hint_check_one(const struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t hint,
	       bool out)
{
	uint16_t i, port;

	/* out_port unwritten: the hint stands for it (the runtime writes it where needed). */
	if (out && (hint & PF_BURST_PORT_UNWRITTEN))
		return;
	for (i = 0; hint != 0 && i < n; i++) {
		port = out ? pf_meta(pkts[i])->out_port : pf_meta(pkts[i])->in_port;
		if (port != hint - 1)
			rte_panic("stage %s: %s hint %u, packet %u has %s %u\n", st->conf->name,
				  out ? "burst port" : "in-port", hint - 1, i,
				  out ? "out_port" : "in_port", port);
	}
}

/* Debug builds: the hints @p hints a stage gave with a burst of edge @p all. */
static inline void
pf_hint_check(const struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint32_t hints,
	   uint16_t all)
{
	if ((uint16_t)hints != 0 && (all == PF_EDGE_MIXED || all == PF_EDGE_DROP))
		rte_panic("stage %s: burst-port hint on a burst of edge %u\n",
			  st->conf->name, all);
	pf_hint_check_one(st, pkts, n, (uint16_t)hints, true);
	pf_hint_check_one(st, pkts, n, (uint16_t)(hints >> 16), false);
}
#endif

#endif /* PF_RT_BURST_HINT_H */
