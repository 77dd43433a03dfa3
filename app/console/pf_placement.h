/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Stage placement: propose an lcore map from measured load.
 *
 * A pure function (no DPDK, no globals) so the advice can be unit-tested on
 * synthetic loads. The cost model: a stage costs its measured cycles per
 * second (cycles/packet x packets/s) on the lcore that runs it; an edge whose
 * two stages run on different lcores costs @c cross_cycles per packet (cache
 * lines moving between cores), @c cross_prod_share of it on the producer's
 * lcore and the rest on the consumer's. The proposal minimises the busiest
 * lcore's load; ties go to fewer moves, then fewer lcores.
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
	/**
	 * Cycles per second each stage needs on its own: without the cost of
	 * the crossings into it (pf_place_own_loads takes them out of a
	 * measured load).
	 */
	double load[PF_PLACE_MAX_STAGES];
	uint16_t n_edges;
	struct pf_place_edge edges[PF_PLACE_MAX_EDGES];
	uint16_t n_lcores;                     /**< lcores available (indexes 0..n-1) */
	int current[PF_PLACE_MAX_STAGES];      /**< lcore index running each stage now */
	double cross_cycles;                   /**< cost of a cross-lcore edge per packet */
	/**
	 * The part of @c cross_cycles the producer's lcore pays (0 to 1; 0: all
	 * on the consumer): its enqueue and the mbufs coming back cold to its
	 * port rx (docs/scaling.md, "Where the hand-off goes").
	 */
	double cross_prod_share;
	double hz;                             /**< cycles per second of one lcore */
	/**
	 * The CPUs each lcore may run on (bit c: CPU c; 0: unknown, taken as a
	 * CPU of its own). A proposal only uses lcores that can each have a
	 * CPU no other used lcore needs: an lcore that shares its CPU with a
	 * busy one adds no capacity, it takes turns.
	 */
	uint64_t cpus[PF_PLACE_MAX_LCORES];
	/**
	 * A move must lower the busiest lcore's load by at least this fraction
	 * (0.10: 10 %), else the running map is kept: advice that moves stages
	 * for a few percent flaps with the noise of the measurement.
	 */
	double min_gain;
};

struct pf_place_result {
	int lcore[PF_PLACE_MAX_STAGES];        /**< proposed lcore index per stage */
	double busiest_before;                 /**< busiest lcore's load now, cycles/s */
	double busiest_after;                  /**< ... with the proposal */
	int busiest_lcore_before, busiest_lcore_after;
	uint16_t moves;                        /**< stages that change lcore */
	uint16_t lcores_used;
	bool exhaustive;                       /**< searched every map (else greedy) */
	/** The running map uses lcores that cannot each have a CPU: any map that can wins. */
	bool current_shares;
	/** A better map existed, but by less than min_gain: the running map is kept. */
	bool kept;
	/** The advice given before, held (pf_place_recall): the load has not moved. */
	bool held;
};

/**
 * What the advisor said last, for pf_place_recall: the running map it was
 * given, the map it proposed (the same when it said keep) and the loads it
 * saw.
 */
struct pf_place_memory {
	bool valid;
	uint16_t n_stages, n_lcores;
	int from[PF_PLACE_MAX_STAGES];
	int to[PF_PLACE_MAX_STAGES];
	double load[PF_PLACE_MAX_STAGES];
};

/** Load of each lcore for @p map (cycles/s), into @p out (n_lcores values). */
void pf_place_lcore_loads(const struct pf_place_input *in, const int *map, double *out);

/** Propose a map. Returns 0, or -EINVAL on inconsistent input (-ENOMEM). */
int pf_place(const struct pf_place_input *in, struct pf_place_result *res);

/**
 * Turn measured loads into what pf_place takes: a stage fed across lcores
 * now pays the crossing in what it measured, so cross_cycles x pps of each
 * edge that crosses in the running map (in->current) comes off the loads of
 * its producer and consumer in their shares (never below 0). Without this
 * the model counts a crossing twice and advises fusing back what it just
 * split.
 */
void pf_place_own_loads(struct pf_place_input *in);

/**
 * Hysteresis: the advice @p mem gave is still the advice when the running
 * map is the one it was given (not applied: the same proposal) or the one
 * it proposed (applied, or keep: keep), and no stage's load moved by more
 * than @p change (0.25) of the total load since. Then fills @p res with it
 * (busiest figures for @p in's loads) and returns true; else returns false
 * and the caller places anew and remembers with pf_place_remember.
 */
bool pf_place_recall(const struct pf_place_memory *mem, const struct pf_place_input *in,
		     double change, struct pf_place_result *res);

/** Remember the advice @p res gave for @p in (pf_place_recall). */
void pf_place_remember(struct pf_place_memory *mem, const struct pf_place_input *in,
		       const struct pf_place_result *res);

#endif /* PF_PLACEMENT_H */
