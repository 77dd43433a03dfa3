/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Synthetic packets through the real stages (`pipefwd-ctl trace inject`;
 * the console's trace.c builds the packet and walks the stage graph): one
 * step runs one stage's process_burst (after its expand, for a stage that
 * has one) on one packet, on the lcore that owns the stage, as a dry run
 * (pf_stage.dry_run, include/pf_stage.h): the stage decides as always, its
 * counters move in a copy the step hands back, it learns and keeps nothing,
 * and nothing is sent (the sink's tx is never called). The runtime's own
 * counters (packets, edges, rings) are not touched.
 *
 * The control thread posts a step (rt->inject) and waits; the owning lcore
 * serves it at its next upkeep, about a millisecond later, between passes,
 * so the step never runs beside the stage's own bursts.
 */
#ifndef PF_INJECT_H
#define PF_INJECT_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "pf_runtime.h"
#include "pf_watch.h"

/** One step: filled by the caller (in), by the lcore (out). */
struct pf_inject_step {
	struct pf_rt_stage *rs;           /**< in: the stage */
	struct rte_mbuf *m;               /**< in/out: the packet (expand may replace it) */
	uint64_t *ctrs;                   /**< in: room for the stage's n_ctrs counters (a copy) */
	uint64_t *before;                 /**< in: the same again */
	uint16_t edge;                    /**< out: the edge it took */
	uint16_t made;                    /**< out: packets expand made of it (0: no expand) */
	struct pf_trace_rec rec;          /**< out: the step as a trace records it */
	uint32_t state;                   /**< the mailbox's (pf_inject_run) */
};

/**
 * Run step @p s on the lcore that owns s->rs, and wait at most @p wait_ms
 * for it. Returns 0 (s filled), or -ETIMEDOUT (no lcore took it: the stage
 * is mid hand-over, or its lcore is stuck; the step was withdrawn). Control
 * thread, one step at a time (the console's lock).
 */
int pf_inject_run(struct pf_runtime *rt, struct pf_inject_step *s, unsigned int wait_ms);

/**
 * Worker lcore @p me, at its upkeep: run the posted step if it owns the
 * stage. Called only when rt->inject is set.
 */
void pf_inject_serve(struct pf_runtime *rt, int me);

#endif /* PF_INJECT_H */
