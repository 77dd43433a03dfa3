/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Stage placement: propose an lcore map from measured load.
 *
 * A pure function (no DPDK, no globals) so the advice can be unit-tested on
 * synthetic loads. The cost model: a stage costs its measured cycles per
 * second (cycles/packet x packets/s) on the lcore that runs it; an edge whose
 * two stages run on different lcores costs @c cross_cycles per packet on the
 * consumer's lcore (cache lines moving between cores). The proposal minimises
 * the busiest lcore's load; ties go to fewer moves, then fewer lcores.
 */
#ifndef PF_PLACEMENT_H
#define PF_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#define PF_PLACE_MAX_STAGES 64
#define PF_PLACE_MAX_EDGES 256
#define PF_PLACE_MAX_LCORES 32

struct pf_place_edge {
	uint16_t from, to;          /**< stage indexes */
	double pps;                 /**< packets per second crossing the edge */
};

struct pf_place_input {
	uint16_t n_stages;
	double load[PF_PLACE_MAX_STAGES];      /**< cycles per second each stage needs */
	uint16_t n_edges;
	struct pf_place_edge edges[PF_PLACE_MAX_EDGES];
	uint16_t n_lcores;                     /**< lcores available (indexes 0..n-1) */
	int current[PF_PLACE_MAX_STAGES];      /**< lcore index running each stage now */
	double cross_cycles;                   /**< cost of a cross-lcore edge per packet */
	double hz;                             /**< cycles per second of one lcore */
};

struct pf_place_result {
	int lcore[PF_PLACE_MAX_STAGES];        /**< proposed lcore index per stage */
	double busiest_before;                 /**< busiest lcore's load now, cycles/s */
	double busiest_after;                  /**< ... with the proposal */
	int busiest_lcore_before, busiest_lcore_after;
	uint16_t moves;                        /**< stages that change lcore */
	uint16_t lcores_used;
	bool exhaustive;                       /**< searched every map (else greedy) */
};

/** Load of each lcore for @p map (cycles/s), into @p out (n_lcores values). */
void pf_place_lcore_loads(const struct pf_place_input *in, const int *map, double *out);

/** Propose a map. Returns 0, or -EINVAL on inconsistent input. */
int pf_place(const struct pf_place_input *in, struct pf_place_result *res);

#endif /* PF_PLACEMENT_H */
