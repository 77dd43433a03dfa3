/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Rebalance advice for a running pipeline (served as /pipefwd/rebalance).
 */
#ifndef PF_REBALANCE_H
#define PF_REBALANCE_H

#include "pf_placement.h"
#include "pf_runtime.h"

/** Cost assumed for a cross-lcore ring hand-off, cycles per packet (measured here). */
#define PF_CROSS_CYCLES_DEFAULT 130.0

/**
 * Propose an lcore map for @p rt from its counters since start: per stage
 * cycles/s, per ring packets/s. Lcore indexes are rt->lcores indexes.
 */
int pf_rebalance_suggest(const struct pf_runtime *rt, double cross_cycles,
			 struct pf_place_input *in, struct pf_place_result *res);

#endif /* PF_REBALANCE_H */
