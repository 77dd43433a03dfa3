/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Rebalance advice for a running pipeline (served as /pipefwd/rebalance).
 */
#ifndef PF_REBALANCE_H
#define PF_REBALANCE_H

#include <stddef.h>

#include "pf_placement.h"
#include "pf_runtime.h"

/**
 * The planner's hand-off per packet per cross-lcore edge, both sides: stage
 * cycles pipelined over fused with the consumer's dequeue and prefetch
 * charged to it, in make bench on a quiet machine (docs/scaling.md section
 * 6, 2026-12-06 08:33: l3-1k 79, full 88, full-rx 64; 09:29: 81, 85, 69),
 * and the producer's share of it (its enqueue: 13 to 35 of those).
 */
#define PF_HANDOFF_CYCLES_DEFAULT 77.0
#define PF_HANDOFF_PROD_SHARE 0.28
/**
 * And the port rx of a source's lcore per packet that leaves it: the mbufs
 * come back cold from the other core (io_cycles pipelined over fused, with
 * the prefetch of the recycled mbufs, worker.c: 09:29, l3-1k +22, full +35,
 * full-rx +44; 69, 107 and 29 without it at 08:33; 16 to 43 at load).
 */
#define PF_HANDOFF_RECYCLE_DEFAULT 34.0
/**
 * The planner's flow-hash fan-out per packet on the producer's lcore (its
 * hash, its lists, the half bursts after it): rx 52 against 19 cycles a
 * packet with lpm and tx as two instances each on one lcore, nothing
 * crossing (docs/scaling.md, "The fan-out"; 127 instructions a packet
 * under callgrind, 88 of them the hash).
 */
#define PF_FAN_CYCLES_DEFAULT 33.0
/**
 * The advisor's crossing, the planner's model in one figure: the hand-off
 * plus the recycling, per packet per cross-lcore edge (111 cycles), of which
 * the producer's lcore pays its share of the hand-off and the recycling
 * (about half). It was 130, all on the consumer, before the prefetch at
 * dequeue, then 75 until the dequeue was charged to the consumer.
 */
#define PF_CROSS_CYCLES_DEFAULT (PF_HANDOFF_CYCLES_DEFAULT + PF_HANDOFF_RECYCLE_DEFAULT)
#define PF_CROSS_PROD_SHARE \
	((PF_HANDOFF_CYCLES_DEFAULT * PF_HANDOFF_PROD_SHARE + PF_HANDOFF_RECYCLE_DEFAULT) / \
	 PF_CROSS_CYCLES_DEFAULT)
/** Sliding window of the advice: default and longest, seconds. */
#define PF_REBALANCE_WINDOW_DEFAULT 10.0
#define PF_REBALANCE_WINDOW_MAX 60.0
/** A move must lower the busiest lcore by this fraction (pf_place_input.min_gain). */
#define PF_REBALANCE_MIN_GAIN 0.10
/** The advice holds until a stage's load moved by this fraction of the total. */
#define PF_REBALANCE_CHANGE 0.25
/** Counter samples: one per interval, enough for the longest window. */
#define PF_REBALANCE_INTERVAL_MS 1000
#define PF_REBALANCE_SAMPLES 62

/**
 * Record the counters when the last sample is PF_REBALANCE_INTERVAL_MS old.
 * The main thread calls it often (every pass of its loop).
 */
void pf_rebalance_sample(const struct pf_runtime *rt);

/** What the pipeline measured over a window, per second (pf_rebalance_window). */
struct pf_load_window {
	double secs;                       /**< the span measured */
	double cycles[PF_MAX_STAGES];      /**< stage cycles (process + dispatch) */
	double packets[PF_MAX_STAGES];     /**< packets each stage processed */
	double io[PF_MAX_STAGES];          /**< a source's cycles in its port rx */
	double ring_full[PF_MAX_STAGES];   /**< packets each stage dropped: next ring full */
	double ring_pkts[PF_MAX_RINGS];    /**< packets on each edge (ring or direct) */
};

/**
 * The counters' rates over the last @p window_s seconds (since start until
 * the first sample), into @p w. Console lock. Returns 0 or -EINVAL.
 */
int pf_rebalance_window(const struct pf_runtime *rt, double window_s, struct pf_load_window *w);

/**
 * Propose an lcore map for @p rt from its load over the last @p window_s
 * seconds (per stage cycles/s, per ring packets/s; since start until the
 * first sample). *@p used_s is the span measured. Lcore indexes are
 * rt->lcores indexes. Only lcores that can each have a CPU (their EAL
 * cpusets) are proposed; a move must gain PF_REBALANCE_MIN_GAIN; the
 * advice given last is given again (res->held) until the load moved by
 * PF_REBALANCE_CHANGE or the map changed otherwise. Console lock.
 */
int pf_rebalance_suggest(const struct pf_runtime *rt, double cross_cycles, double window_s,
			 double *used_s, struct pf_place_input *in, struct pf_place_result *res);

/**
 * When the lcores that run stages are more than the CPUs they may run on
 * (EAL cpusets), describe it in @p buf and return 1; else 0 and "".
 */
int pf_rebalance_cpu_sharing(const struct pf_runtime *rt, char *buf, size_t len);

#endif /* PF_REBALANCE_H */
