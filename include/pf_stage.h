/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The stage interface.
 *
 * A stage type is a registered struct pf_stage_ops. The runtime feeds a
 * stage bursts (from ports for a source stage, from rings otherwise), the
 * stage's process_burst writes one edge per packet, and the runtime moves
 * the packets: edge 0 (PF_EDGE_DROP) is freed and counted, every other edge
 * goes to the ring of the stage it is wired to (a stage that says the
 * whole burst took one edge leaves edge[] alone). process_burst never frees,
 * enqueues, logs, allocates or locks: it is a function of (state, burst) ->
 * verdicts, so cmocka tests drive it directly on hand-built mbufs.
 *
 * Every drop has a named counter: PF_DROP() sets edge 0 and bumps the
 * stage's reason counter in one step. Counters have a single writer (the
 * lcore running the stage) and are read lock-free by stats readers.
 */
#ifndef PF_STAGE_H
#define PF_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "pf_err.h"
#include "pf_meta.h"
#include "pf_services.h"
#include "pf_stage_ctl.h"
#include "pf_stage_obs.h"

#define PF_EDGE_DROP 0
/**
 * process_burst's answer when the packets of a burst took different edges
 * (always a correct answer: the runtime then sorts the burst by edge).
 */
#define PF_EDGE_MIXED UINT16_MAX
/**
 * edge[i] of a stage that holds packets (ops->emit set, a slow path such
 * as neigh): the stage kept packet i and will hand it back through emit.
 * The runtime leaves it alone; the stage reports it in its "in_flight" gauge.
 */
#define PF_EDGE_HELD (UINT16_MAX - 1)

/**
 * Drop reasons that are not a stage counter: the runtime's own (a full
 * ring, an unwired edge), and none. Every other reason is the index of a
 * stage's DROP counter.
 */
#define PF_REASON_RING_FULL 0xfff0
#define PF_REASON_NO_EDGE   0xfff1
#define PF_REASON_NONE      0xffff

/** Counter kinds: a DROP counter is a drop reason, an INFO counter is not. */
enum pf_ctr_kind {
	PF_CTR_INFO = 0,
	PF_CTR_DROP = 1,
};

struct pf_ctr_desc {
	const char *name;   /**< snake_case, as in stats and docs ("no_route") */
	uint8_t kind;       /**< enum pf_ctr_kind */
	const char *help;   /**< one line for docs and Prometheus HELP */
};

/**
 * Counters are declared once with an X-macro:
 *   #define foreach_lpm_ctr(_) \
 *       _(LPM_CTR_NO_ROUTE, no_route, DROP, "destination matched no route") ...
 *   PF_CTR_ENUM(lpm, foreach_lpm_ctr);   -> enum lpm_ctr { LPM_CTR_NO_ROUTE, ..., lpm_ctr_max }
 *   PF_CTR_DESCS(lpm, foreach_lpm_ctr);  -> static const struct pf_ctr_desc lpm_ctrs[]
 */
#define PF__CTR_ENUM_ITEM(id, name, kind, help) id,
#define PF__CTR_DESC_ITEM(id, name, kind, help) { #name, PF_CTR_##kind, help },
#define PF_CTR_ENUM(type, list) enum type##_ctr { list(PF__CTR_ENUM_ITEM) type##_ctr_max }
#define PF_CTR_DESCS(type, list) \
	static const struct pf_ctr_desc type##_ctrs[] = { list(PF__CTR_DESC_ITEM) }

/** Mark packet @p i of a burst as dropped for reason @p ctr. */
#define PF_DROP(edge, i, ctrs, ctr) do {	\
	(edge)[i] = PF_EDGE_DROP;		\
	(ctrs)[ctr]++;				\
} while (0)

/** A burst_port hint value for port index @p p (0 means no hint). */
#define PF_BURST_PORT(p) ((uint16_t)((p) + 1))
/**
 * Or'ed into a burst_port hint: the producer left out_port unwritten, the
 * hint stands for it. The runtime writes out_port (pf_burst_port_write)
 * before anything but a sink that takes the hint sees the burst; such a
 * sink (tx) finds the flag in in_burst_port and must not read out_port.
 */
#define PF_BURST_PORT_UNWRITTEN 0x8000u
/** The port index of a burst_port hint @p h (non-zero). */
#define PF_BURST_PORT_INDEX(h) ((uint16_t)(((h) & ~PF_BURST_PORT_UNWRITTEN) - 1u))

/** Write out_port from burst_port hint @p hint into the @p n packets (what the hint stood for). */
static inline void
pf_burst_port_write(struct rte_mbuf **pkts, uint16_t n, uint16_t hint)
{
	uint16_t port = PF_BURST_PORT_INDEX(hint), i;
	int off = pf_meta_off();

	for (i = 0; i < n; i++)
		pf_meta_at(pkts[i], off)->out_port = port;
}

/** Stage type flags. */
#define PF_STAGE_SOURCE 0x1  /**< reads packets from ports (has ops->rx) */
#define PF_STAGE_SINK   0x2  /**< writes packets to ports (has ops->tx) */
#define PF_STAGE_NEXT_ALL 0x4 /**< "next: <stage>" wires every edge, not just default_edge */
/**
 * With `instances: N`, the instances share one table: instance 0 creates it,
 * the others reference it through st->first (and must be safe with several
 * writers). Without this flag every instance keeps its own tables.
 */
#define PF_STAGE_SHARED 0x8
/**
 * The stage's table is read per packet by the stages wired to it through
 * an edge named after its type (neigh: lpm's "neigh" edge, lpm reads the
 * neighbour table), so it goes on the first one's socket (NUMA).
 */
#define PF_STAGE_UPSTREAM_READS 0x80
/**
 * A sink whose process_burst sends every packet to ops->tx (edge 1, the
 * whole burst): the runtime calls ops->tx without it (process_burst still
 * runs for a traced packet).
 */
#define PF_STAGE_TX_ALL 0x100
/**
 * The stage's tables are built from the ports (lpm, lpm6: the connected
 * subnets and local addresses): when ports are added or removed live, the
 * runtime updates the stage (ctl prepare/commit or swap) as if its
 * parameters had changed.
 */
#define PF_STAGE_PORT_TABLES 0x200
/**
 * What the stage keeps per port is made at start and cannot follow a port
 * added or removed live (host: a kernel interface per port): a reload that
 * changes the ports is refused while such a stage runs.
 */
#define PF_STAGE_PORTS_FIXED 0x400
/**
 * Every packet the stage sends on leaves with the flow key it came with
 * (addresses, protocol, ports, fragment bits: stages/lib/pf_flowhash.h) and
 * makes no packets of its own; a reply it builds in place (lpm's echo and
 * ARP replies) is sent back the way its request came, so every packet of
 * one flow still takes one path. Instance k of such a stage, when its
 * instance was picked by flow hash, sends straight to instance k of a next
 * stage with as many instances (no second hash: it would pick k again).
 * Not for a stage that rewrites or builds packets (icmp, ip4frag, neigh).
 */
#define PF_STAGE_KEEPS_FLOW 0x800

struct pf_stage;

/**
 * Data-path ops: the worker lcore that owns the stage calls them, between
 * bursts of the stages it runs; no lock, no allocation but expand's, no log.
 */
struct pf_stage_dp {
	/** Source stages: fill @p pkts from the stage's ports; returns how many. */
	uint16_t (*rx)(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max);

	/**
	 * Decide each packet's edge. Returns the edge every packet took when
	 * the stage knows they all took one (the runtime then moves the burst
	 * whole, without reading edge[], which the stage need not have
	 * written), else PF_EDGE_MIXED, and then edge[i] must be set for
	 * every i < n.
	 */
	uint16_t (*process_burst)(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n,
				  uint16_t *edge);

	/**
	 * Stages that emit more packets than they take (ip4frag), optional:
	 * turn the first *@p taken (>= 1) of @p pkts[0..n) into at most @p max
	 * packets in @p out, and return how many. Each input becomes one packet
	 * or more (or itself, marked for process_burst to drop); the extra ones
	 * are replicas: the runtime adds (returned - *@p taken) to st->replicas.
	 * The runtime then runs process_burst on out[] at once and calls expand
	 * again for the rest of the input. Unlike process_burst it allocates
	 * and frees (the fragments, the input they replace).
	 */
	uint16_t (*expand)(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n,
			   uint16_t *taken, struct rte_mbuf **out, uint16_t max);

	/**
	 * Sink stages: take ownership of the packets that process_burst did not
	 * drop and send them; every packet ends up sent or counted as dropped.
	 */
	void (*tx)(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n);

	/** Called when a loop pass found no input: flush buffers, age tables. */
	void (*idle)(struct pf_stage *st, uint64_t now_ns);

	/**
	 * Table upkeep that must not wait for an idle lcore (aging, posted
	 * control commands): the owning lcore calls it between bursts, about
	 * once a millisecond, loaded or not. Bounded work per call; optional.
	 */
	void (*housekeep)(struct pf_stage *st, uint64_t now_ns);

	/**
	 * Stages that hold or originate packets (slow paths: neigh): hand over
	 * up to @p max packets ready to go now (held packets released, packets
	 * the stage made), each with its edge in @p edge (edge 0 with a drop
	 * counter, as in process_burst). Called by the owning lcore after each
	 * burst whose process_burst returned PF_EDGE_MIXED (a holding stage
	 * always does) and after each housekeep; @p draining: the runtime
	 * stops, release what is held. Packets the stage made count in
	 * st->replicas (the invariant's extra packets). Bounded work; optional.
	 */
	uint16_t (*emit)(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max,
			 uint16_t *edge, bool draining);
};

/**
 * A stage type: what it is (name, edges, counters) and its ops, grouped by
 * the thread that calls them: dp (the owning worker lcore, this header),
 * ctl (the control thread, pf_stage_ctl.h), obs (the stats socket and the
 * reports, pf_stage_obs.h).
 */
struct pf_stage_ops {
	const char *type;                 /**< the YAML "type:" value */
	const char *summary;              /**< one line for --help and docs */
	uint32_t flags;                   /**< PF_STAGE_* */
	size_t priv_size;                 /**< zeroed, cache aligned, given in st->priv */
	uint16_t n_edges;                 /**< edge 0 is always "drop" */
	const char *const *edge_names;
	uint16_t default_edge;            /**< edge that "next: <stage>" wires */
	/** With PF_STAGE_NEXT_ALL: edges (bit e) that `next: <stage>` leaves unwired (slow paths). */
	uint32_t next_all_skip;
	uint16_t n_ctrs;
	const struct pf_ctr_desc *ctrs;

	struct pf_stage_dp dp;
	struct pf_stage_ctl ctl;
	struct pf_stage_obs obs;
};

/** A running stage: its ops, its config, its view of the topology (env) and its state. */
struct pf_stage {
	const struct pf_stage_ops *ops;
	const struct pf_stage_conf *conf;
	const struct pf_stage_env *env;   /**< ports, clock, file: what a stage sees of the topology */
	uint16_t id;
	/**
	 * NUMA socket to allocate the stage's tables on (init, update_prepare):
	 * the socket of the lcore that reads them (pf_numa_table_socket), or
	 * SOCKET_ID_ANY when unknown or without memory there.
	 */
	int socket;
	void *priv;
	uint64_t *ctrs;                   /**< ops->n_ctrs counters, single writer */
	uint32_t edge_connected;          /**< bit e set when edge e is wired */
	/**
	 * Burst-port hint, optional: process_burst may set it to
	 * PF_BURST_PORT(p) when it returns one edge for the whole burst and
	 * every packet's out_port is p (or, with PF_BURST_PORT_UNWRITTEN, will
	 * be: the producer wrote none). The runtime reads and clears it after
	 * each burst; when that burst goes whole and direct to a stage on this
	 * lcore, the consumer finds it in in_burst_port for that burst only
	 * (0 otherwise: a ring, a mixed burst, a producer that set none), so a
	 * sink can skip its per-packet out_port pass. Debug builds check it.
	 */
	uint16_t burst_port;
	/**
	 * In-port hint: PF_BURST_PORT(p) when every packet of the burst being
	 * processed arrived on port p (metadata in_port), else 0. A source
	 * sets it in process_burst for its own burst; the runtime hands it on
	 * with a whole burst that goes direct to a consumer on this lcore (an
	 * in_port never changes, so it holds for any part of the burst) and
	 * clears it after each burst. Optional to set and to read; debug
	 * builds check it.
	 */
	uint16_t in_burst_in_port;
	/*
	 * In this order: the runtime takes burst_port and in_burst_in_port as
	 * one word and gives a consumer in_burst_in_port and in_burst_port as
	 * one (app/runtime/edge.c).
	 */
	uint16_t in_burst_port;           /**< the producer's burst_port, or 0 (runtime) */
	/**
	 * A dry run (`pipefwd-ctl trace inject`): set by the runtime, on the
	 * owning lcore, around one call of process_burst (and expand) on one
	 * synthetic packet. The stage decides as it always does (the same
	 * edge, metadata and header rewrite; counters may move: the runtime
	 * points ctrs at a copy for the call) but changes nothing a later
	 * packet could find: it learns nothing (MACs, neighbours), opens and
	 * refreshes no session, takes no token, counts no rule hit outside
	 * ctrs, keeps no packet (a packet it would hold gets PF_EDGE_HELD and
	 * stays the caller's), writes no table or timer. A guess about the
	 * next burst's shape (how edges are stored) may change. Never set on
	 * a live burst. Tested once per burst.
	 */
	bool dry_run;
	/** Instance 0 of this stage's instances (itself when it is instance 0 or plain). */
	struct pf_stage *first;
	/**
	 * Per edge: the table the stage it feeds exports (ctl.export_table),
	 * set before init; NULL when there is none (or no such stage runs:
	 * unit tests of one stage).
	 */
	void *edge_table[PF_MAX_EDGES];

	/* Per-port packet counts for sources (rx) and sinks (tx), single writer. */
	uint64_t port_rx[PF_MAX_PORTS];
	uint64_t port_tx[PF_MAX_PORTS];
	/**
	 * Extra packets made: flood copies (sinks), fragments beyond the first
	 * (ops->expand, counted by the runtime) and packets a stage originated
	 * (ARP requests); accounting adds them to rx.
	 */
	uint64_t replicas;

	/**
	 * Set by the runtime when it runs the stage on a worker lcore; false
	 * for a stand-alone stage (unit tests, fuzzers), whose control ops
	 * then do in the caller what they would post to the lcore.
	 */
	bool runtime_runs;
} __rte_cache_aligned;

/**
 * All stage types, NULL-terminated (stages/registry.c; the test binary's
 * list, stages/test_registry.c, adds the test-only types).
 */
extern const struct pf_stage_ops *const *const pf_stage_types;
extern const struct pf_stage_ops pf_rx_ops, pf_tx_ops, pf_xconnect_ops, pf_l2fib_ops,
	pf_acl_ops, pf_lpm_ops, pf_icmp_ops, pf_ip4frag_ops, pf_neigh_ops, pf_lpm6_ops,
	pf_icmp6_ops, pf_host_ops;
/** The production types, in registry order (both lists start with them). */
#define PF_STAGE_TYPES_PRODUCTION \
	&pf_rx_ops, &pf_tx_ops, &pf_xconnect_ops, &pf_l2fib_ops, &pf_acl_ops, &pf_lpm_ops, \
	&pf_icmp_ops, &pf_ip4frag_ops, &pf_neigh_ops, &pf_lpm6_ops, &pf_icmp6_ops, &pf_host_ops
/** Look a type up by name, NULL if unknown. */
const struct pf_stage_ops *pf_stage_type_find(const char *type);
/** The name of drop reason @p reason of stage @p st ("ip4_ttl_expired", "ring_full"). */
const char *pf_stage_reason_name(const struct pf_stage *st, uint16_t reason);

/**
 * Whether the burst being processed came straight from rx on this lcore:
 * the runtime hands rx's in-port hint on only with a whole burst that goes
 * direct, so rx parsed it a moment ago and its frames' first lines and
 * metadata are in L1 (a stage may skip prefetching them). Behind a ring
 * the lines may be cold.
 */
static inline bool
pf_burst_fresh(const struct pf_stage *st)
{
	return st->in_burst_in_port != 0;
}

#endif /* PF_STAGE_H */
