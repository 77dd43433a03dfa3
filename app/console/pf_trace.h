/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Packet trace and the drop tap (app/console/trace.c), VPP's `trace add` for pipefwd.
 *
 *   /pipefwd/trace,N[,STAGE]   record the next N packets entering STAGE (every
 *                              source when none is named) and their path
 *   /pipefwd/trace_show[,K]    the trace's state; with K, packet K's path
 *   /pipefwd/trace_clear       stop tracing and forget the records
 *
 * Armed, the runtime sets PF_WATCH_* bits in the stages concerned
 * (pf_rt_stage.watch). pf_rt_run_burst() tests the byte once per burst and,
 * when it is set, runs the burst through pf_trace_burst(), which calls the
 * stage's process_burst one packet at a time: each packet's edge, its drop
 * reason (the DROP counter that moved), every counter it moved, its cycles,
 * its headers before and after the stage and its metadata are then exact,
 * without any stage knowing about traces. Stages promise that a burst is
 * processed "as if the packets came one by one" (l2fib learning, acl
 * sessions), so a traced packet is forwarded or dropped exactly as it would
 * be untraced, and every counter moves the same.
 */
#ifndef PF_TRACE_H
#define PF_TRACE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "pf_runtime.h"

#define PF_WATCH_TRACE 0x1   /**< a packet trace is armed: record traced packets */
#define PF_WATCH_DROPS 0x2   /**< a drop capture wants this stage's drop reasons */

/** Drop reasons that are not a stage counter: the runtime's own. */
#define PF_REASON_RING_FULL 0xfff0
#define PF_REASON_NO_EDGE   0xfff1
#define PF_REASON_NONE      0xffff

/**
 * Data path (the watch branch of pf_rt_run_burst()): process @p n packets
 * of @p rs one by one, fill edge[], record traced packets and hand dropped
 * ones to the drop capture. Returns PF_EDGE_MIXED (always a correct answer).
 */
uint16_t pf_trace_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n,
			uint16_t *edge);

/**
 * Data path, on the (already unlikely) paths where the runtime itself
 * drops: @p n packets of @p rs lost as @p reason (PF_REASON_RING_FULL,
 * PF_REASON_NO_EDGE), before they are freed.
 */
void pf_trace_lost(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t reason);

/** The name of drop reason @p reason of stage @p st ("ip4_ttl_expired", "ring_full"). */
const char *pf_trace_reason_name(const struct pf_stage *st, uint16_t reason);

/** Register the /pipefwd/trace* commands (once) and publish @p rt. Returns 0 or -errno. */
int pf_trace_init(struct pf_runtime *rt);

/** Disarm, wait for the lcores to stop recording, free the records. Before runtime stop. */
void pf_trace_shutdown(void);

#endif /* PF_TRACE_H */
