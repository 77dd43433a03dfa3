/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The layout planner (issue 31 item 4): predicted Mpps of candidate layouts
 * of a pipeline from its measured costs.
 *
 * A pure function (no DPDK, no globals), unit-tested on given costs. The
 * model: a layout maps stages (or copies of them) to worker lcores; an
 * lcore's cost per packet entering the pipeline is the sum, over what it
 * runs, of each stage's cycles per packet times the packets it sees per
 * input packet (its fraction), plus the source's I/O (the port's rx and the
 * loop, per input packet) on each lcore that reads a port, plus for every
 * edge that crosses lcores the hand-off: `handoff_prod` per packet on the
 * producer's lcore and `handoff_cons` on the consumer's, and `recycle` more
 * on the producer's when that lcore runs a source (its packets' mbufs come
 * back from another core). Packets a full ring drops count as carried: the
 * model is of the layout's capacity, not of its overflow. The layout forwards
 * hz / (its busiest lcore's cost) input packets per second: the bottleneck.
 *
 * Candidates for `cores` worker lcores:
 *   fused         every stage on one lcore;
 *   split k       the stages, in pipeline order, cut into k contiguous groups,
 *                 one lcore each (2 <= k <= cores), the best cut for each k
 *                 (every cut with all_splits);
 *   rss affine N  N copies of the fused pipeline, one rx queue each (RSS),
 *                 affine: nothing crosses (needs a port that spreads flows);
 *   rss fanout N  the same without affine: the first edge after rx hashes each
 *                 packet to an instance (`fan` per packet), (N-1)/N of them
 *                 on another lcore;
 *   fanout N      one rx (one queue, no RSS) on its own lcore, the rest as
 *                 N-1 instances fed by flow hash (needs stages that may run as
 *                 instances: not a single-writer stage); N >= 3 (with 2 it is
 *                 the split "sources | the rest").
 */
#ifndef PF_PLAN_H
#define PF_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#define PF_PLAN_MAX_STAGES 64
#define PF_PLAN_MAX_EDGES 256
#define PF_PLAN_MAX_LAYOUTS 64

struct pf_plan_stage {
	double cpp;                 /**< cycles per packet it processes, without hand-off */
	double frac;                /**< packets it processes per packet read by the sources */
	bool source;                /**< reads ports (rx) */
	bool single;                /**< must stay one instance (a single writer) */
};

struct pf_plan_edge {
	uint16_t from, to;          /**< stage indexes */
	double frac;                /**< packets on the edge per packet read by the sources */
};

struct pf_plan_input {
	uint16_t n_stages;          /**< in pipeline (topological) order, sources first */
	struct pf_plan_stage st[PF_PLAN_MAX_STAGES];
	uint16_t n_edges;
	struct pf_plan_edge e[PF_PLAN_MAX_EDGES];
	double hz;                  /**< cycles per second of one lcore */
	double io_cycles;           /**< per packet, on each lcore running a source, beside stages */
	double handoff_prod;        /**< per packet per cross-lcore edge, producer's lcore */
	double handoff_cons;        /**< ... consumer's lcore */
	/**
	 * Per packet that leaves a source's lcore, on that lcore: its port rx
	 * gets back mbufs freed on another core, cold (the driver writes their
	 * header, metadata and frame lines), timed in io_cycles, not a stage.
	 */
	double recycle;
	/**
	 * Per packet an edge to instances sends by flow hash, on the producer's
	 * lcore: the hash and the per-instance lists (edge.c fan_send), and the
	 * half bursts after it. Paid once per packet: later edges keep the
	 * instance the hash picked (docs/architecture.md, "Instances").
	 */
	double fan;
	uint16_t cores;             /**< worker lcores available (>= 1) */
	bool rss;                   /**< the sources' ports can spread flows over rx queues */
	bool all_splits;            /**< every cut of each k, not only the best (a bench's split) */
};

enum pf_plan_kind {
	PF_PLAN_FUSED,
	PF_PLAN_SPLIT,
	PF_PLAN_RSS_AFFINE,
	PF_PLAN_RSS_FANOUT,
	PF_PLAN_FANOUT,
};

struct pf_plan_layout {
	enum pf_plan_kind kind;
	uint16_t lcores;            /**< worker lcores it uses */
	uint16_t copies;            /**< instances of the replicated stages (1: none) */
	/** split: the group (0 .. lcores-1) of each stage; fanout: 0 for rx, 1 the rest. */
	uint8_t group[PF_PLAN_MAX_STAGES];
	double busiest;             /**< cycles per input packet on the busiest lcore */
	double mpps;                /**< predicted: hz / busiest, in millions per second */
};

/** "fused", "split", "rss-affine", "rss-fanout", "fanout". */
const char *pf_plan_kind_name(enum pf_plan_kind k);

/**
 * Cost of every lcore of @p map (stage -> lcore index, @p n_lcores of them),
 * one copy of each stage, into @p load (cycles per input packet); returns
 * the busiest's. Used for splits and for the current layout.
 */
double pf_plan_map_cost(const struct pf_plan_input *in, const int *map, uint16_t n_lcores,
			double *load);

/**
 * Every candidate layout for @p in->cores lcores, best (highest mpps) first,
 * at most @p max into @p out. Returns how many, or -EINVAL.
 */
int pf_plan(const struct pf_plan_input *in, struct pf_plan_layout *out, int max);

#endif /* PF_PLAN_H */
