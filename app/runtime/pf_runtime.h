/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The runtime: builds mempool, ports, rings and stages from a topology and
 * runs the worker lcore loops; moves packets by verdict and counts them.
 */
#ifndef PF_RUNTIME_H
#define PF_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "pf_latency.h"
#include "pf_stage.h"
#include "pf_stages.h"
#include "pf_topo.h"

#define PF_RING_HIST_BUCKETS 32

struct pf_cap_tap;   /* app/console/capture.c: a packet capture armed on a ring or a stage */

/**
 * The ring of one edge between two stages. Every edge keeps its ring, but
 * packets go through it only when the consumer runs on another lcore (or
 * while it drains after a move): when the consumer runs on the producer's
 * lcore and the ring is empty, dispatch hands the burst straight to it.
 * Producer fields and consumer fields are apart.
 */
struct pf_rt_ring {
	struct rte_ring *ring;
	const struct pf_ring_conf *conf;
	struct pf_cap_tap *tap;                     /**< capture armed here, else NULL */
	struct pf_rt_stage *to;                     /**< the consumer (instance) it feeds */
	struct pf_rt_stage *from;                   /**< the producer (one per ring) */
	uint32_t burst;                             /**< consumer dequeue burst (runtime copy) */
	/* written by the producer stage's lcore */
	uint64_t enqueued __rte_cache_aligned;      /**< through the ring (cross-lcore) */
	uint64_t direct;                            /**< handed to the consumer on the same lcore */
	uint64_t full_drops;
	uint64_t hwm;                               /**< most entries ever seen after enqueue */
	uint64_t hist[PF_RING_HIST_BUCKETS];        /**< occupancy after enqueue, log2 buckets */
	bool bp_direct;                             /**< lossless mode: this burst goes direct */
	/** The most entries before the last hwm restart (hwm is the mark since it). */
	uint64_t hwm_start;
	uint32_t hwm_clear_ack;                     /**< last hwm_clear_req the producer served */
	/* written by the control thread: ask the producer to restart hwm */
	uint32_t hwm_clear_req __rte_cache_aligned;
	/*
	 * Written by the producer in a timed pass with latency on (pf_latency.h):
	 * the ring position of a burst's first packet << 32 | the TSC's low 32
	 * bits. Its own line: the consumer reads it after every dequeue.
	 */
	uint64_t lat_sample __rte_cache_aligned;
	/* written by the consumer stage's lcore */
	uint64_t dequeued __rte_cache_aligned;
	uint32_t lat_seen;                          /**< last sample taken, position + 1 */
	struct pf_lat_hist sojourn;                 /**< cycles stamped packets sat in the ring */
};

/** The instance rings of one edge to a stage with `instances: N`. */
struct pf_rt_fan {
	uint16_t n;                                 /**< instances (> 1) */
	struct pf_rt_ring *ring[PF_MAX_INSTANCES];  /**< ring to instance k */
};

/** pf_runtime.rx_state. */
#define PF_RX_NOT_STARTED 0
#define PF_RX_POLLING     1
#define PF_RX_STOPPED     2

/** pf_rt_stage.watch bits: who wants a stage's bursts one packet at a time (app/runtime/watch.c). */
#define PF_WATCH_TRACE 0x1   /**< a packet trace is armed: record traced packets */
#define PF_WATCH_DROPS 0x2   /**< a drop capture wants this stage's drop reasons */

/** pf_rt_stage.kind bits. */
#define PF_RT_KIND_SOURCE 0x01   /**< ops->dp.rx */
#define PF_RT_KIND_TX     0x02   /**< ops->dp.tx (a sink) */
#define PF_RT_KIND_TX_ALL 0x04   /**< PF_STAGE_TX_ALL: ops->dp.tx without process_burst */
#define PF_RT_KIND_EXPAND 0x08   /**< ops->dp.expand */
#define PF_RT_KIND_EMIT   0x10   /**< ops->dp.emit (holds packets) */
#define PF_RT_KIND_LOSSLESS 0x20 /**< runtime.backpressure: take only what fits */
#define PF_RT_KIND_IDLE   0x40   /**< ops->dp.idle */

/** Runtime view of one stage (the stage itself is rs->st). */
struct pf_rt_stage {
	struct pf_stage *st;
	struct pf_cap_tap *tap;                     /**< capture of a source's rx, else NULL */
	uint16_t n_in;
	struct pf_rt_ring *in[PF_MAX_STAGES];
	struct pf_rt_ring *out[PF_MAX_EDGES];       /**< ring per edge, NULL if unconnected */
	/** Edges to a stage with instances: out[e] is NULL, the flow hash picks the ring. */
	struct pf_rt_fan *fan[PF_MAX_EDGES];
	/**
	 * Who runs the stage and whether its input rings may hold packets, in
	 * one word: a producer hands a burst straight to the stage when the
	 * word reads (uint32_t)me, i.e. its owner is the producer's lcore and
	 * no input ring needs polling. The protocol: app/runtime/direct.h.
	 */
	union {
		uint64_t direct_key;
		struct {
			/** lcore allowed to run the stage now (-1: none, mid hand-over). */
			int owner;
			/**
			 * Non-zero: an input ring may hold packets, its lcore polls
			 * them each pass. Set at start and by every hand-over; the
			 * owner clears it once its rings are empty and every
			 * producer runs on its lcore (direct.h).
			 */
			uint32_t rings_maybe;
		};
	};
	uint32_t burst;                             /**< source rx burst (runtime copy) */
	/** A source in lossless mode: passes a full ring kept it from asking its port. */
	uint64_t held;
	/**
	 * What the hand-over asks of the stage each burst, read from its ops
	 * once (PF_RT_KIND_*): one load instead of a chase through st->ops.
	 */
	uint8_t kind;
	/** st->ops->dp.process_burst, copied for the same reason. */
	uint16_t (*process_burst)(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n,
				  uint16_t *edge);
	/**
	 * PF_WATCH_* (app/runtime/pf_watch.h): a packet trace or a drop capture wants this
	 * stage's packets one by one. Tested once per burst; 0 when nothing is armed.
	 */
	uint8_t watch;
	struct pf_cap_tap *drop_tap;                /**< capture of this stage's drops, else NULL */
	/** A sink's rx -> tx latency per output port (PF_MAX_PORTS), else NULL (pf_latency.h). */
	struct pf_lat_hist *lat;
	/** A source: the pool its first port's rx queues refill from, else NULL. */
	struct rte_mempool *rx_pool;
	uint16_t n_out;                             /**< distinct output rings (fan rings included) */
	struct pf_rt_ring *outs[PF_MAX_EDGES * PF_MAX_INSTANCES];
	/* single writer: the lcore that runs the stage */
	uint64_t packets __rte_cache_aligned;
	/* Not next to packets: GCC would add both as one vector, held across calls. */
	uint64_t cycles;                            /**< in process + dispatch, consumers excluded */
	uint64_t bursts;
	bool ran;                                   /**< had a burst since its last idle check */
	/** The stage's typical timed interval (rt_internal.h pf_rt_interval). */
	uint64_t time_typ;
	/** Timed intervals that were preempted (charged time_typ instead). */
	uint64_t time_skipped;
	/** A source: cycles in its port rx calls that returned packets (sampled as cycles). */
	uint64_t io_cycles;
	uint64_t io_typ;                            /**< its typical interval */
	uint64_t ring_full;                         /**< dropped: next ring full */
	uint64_t no_edge;                           /**< dropped: edge not wired */
	uint64_t edge_pkts[PF_MAX_EDGES];
};

/** The stages one lcore runs, in order. Published by pointer swap. */
struct pf_lcore_map {
	uint16_t n;
	struct pf_rt_stage *stages[PF_MAX_STAGES];
};

struct pf_rt_lcore {
	unsigned int id;
	uint16_t qsbr_id;                           /**< thread id in the runtime's QSBR */
	struct pf_lcore_map *map;                   /**< current map, read each pass */
	struct pf_lcore_map maps[2];                /**< double buffer for map */
	uint64_t loops __rte_cache_aligned;         /**< passes over its stages */
	/* Busy = total - idle, total = last_tsc - first_tsc (pf_rt_lcore_cycles):
	 * a pass that moves packets writes one word. */
	uint64_t idle_cycles;                       /**< cycles in passes that moved nothing */
	uint64_t naps;                              /**< idle sleeps (runtime.idle_sleep_us) */
	uint64_t first_tsc;                         /**< when the loop began */
	uint64_t last_tsc;                          /**< when the last pass ended */
	uint64_t housekeep_tsc;                     /**< next stage upkeep (ops->dp.housekeep) */
	/**
	 * Non-zero: a ring joins a stage of this lcore to one of another, so
	 * mbufs this lcore's sources read come back freed by another core and
	 * each source prefetches for write the ones its next burst will take
	 * (worker.c prefetch_recycled). Set by the control thread at start and
	 * by every hand-over (direct.c pf_rt_recycle_mark).
	 */
	uint8_t recycled;
};

/** What the link watch last saw of a port (app/runtime/linkwatch.c; the control thread writes). */
struct pf_rt_link {
	struct rte_eth_link link;   /**< the last status read */
	bool known;                 /**< read at least once */
	uint64_t changes;           /**< up/down transitions seen since start */
	uint64_t since_tsc;         /**< when the last transition (or the first read) was seen */
	uint64_t full_up, down_up;  /**< its tx_full and link_down drops at the last look while up */
	uint64_t full_at_down;      /**< the port's tx_full drops when it went down */
	uint64_t down_at_down;      /**< its link_down drops then */
};

/**
 * The kernel interface behind a port (net_af_packet, net_af_xdp: the device's if_index) as
 * pipefwd found it, put back when the port closes: setting the port up makes it promiscuous
 * and may give it the port's MAC, and both would outlive pipefwd.
 */
struct pf_rt_kernif {
	unsigned int ifindex;       /**< 0: no kernel interface */
	char name[16];              /**< IFNAMSIZ */
	short promisc;              /**< IFF_PROMISC as found */
	uint8_t mac[6];             /**< the interface's MAC as found */
	bool has_mac;
};

struct pf_runtime {
	struct pf_topo *topo;
	/** Per port, what setting it up found (the env of every topology it runs points here). */
	struct pf_port_run port_run[PF_MAX_PORTS];
	/** Per port, its link as the link watch saw it. */
	struct pf_rt_link port_link[PF_MAX_PORTS];
	/** Per port index, what the stages had counted there when its port was added live. */
	struct {
		uint64_t rx, tx, rxq[PF_RXQ_MAX];
	} port_base[PF_MAX_PORTS];
	/** Until then the sinks' *_full drops belong to a link that fell (not logged). */
	uint64_t link_fold_until;
	struct rte_mempool *pool;
	/** Per NUMA socket: the pool its ports fill (pool itself on the main socket). */
	struct rte_mempool *pools[RTE_MAX_NUMA_NODES];
	uint16_t n_pools;           /**< distinct pools */
	uint16_t n_stages;
	struct pf_stage *stages[PF_MAX_STAGES];
	struct pf_rt_stage rts[PF_MAX_STAGES];
	uint16_t n_rings;
	struct pf_rt_ring rings[PF_MAX_RINGS];
	uint16_t n_lcores;
	struct pf_rt_lcore lcores[PF_MAX_LCORES];
	uint64_t start_tsc;
	uint64_t stop_tsc;
	struct rte_rcu_qsbr *qsbr;  /**< workers report a quiescent state every pass */
	struct rte_eth_stats port_stats[PF_MAX_PORTS]; /**< snapshot taken when ports close */
	bool ports_closed;
	struct pf_rt_kernif port_kernif[PF_MAX_PORTS]; /**< put back when the port closes */
	/**
	 * Per port, the mbufs its rx queues took at set-up when its driver keeps them at close
	 * (net_af_xdp's fill ring: port.c); mbufs_kept is what those drivers kept at shutdown.
	 */
	uint32_t port_rx_held[PF_MAX_PORTS];
	int64_t mbufs_kept;
	int64_t mbufs_in_use;      /**< after shutdown, less mbufs_kept: must be 0 (no leak) */
	/**
	 * PF_RX_*: sources start polling once every worker runs (the last one
	 * sets PF_RX_POLLING) and stop for good at PF_RX_STOPPED (shutdown).
	 */
	volatile int rx_state;
	uint32_t workers_ready;
	volatile int stop;         /**< workers leave their loops */
	/** runtime.idle_sleep_us as started (a reload does not change it). */
	uint32_t idle_sleep_us;
	/** A dry-run step of a synthetic packet waiting for its lcore (pf_inject.h), else NULL. */
	struct pf_inject_step *inject;
};

/** Cycles lcore @p lc has spent in its loop (@p total), and in passes that moved packets (@p busy). */
static inline void
pf_rt_lcore_cycles(const struct pf_rt_lcore *lc, uint64_t *busy, uint64_t *total)
{
	uint64_t last = __atomic_load_n(&lc->last_tsc, __ATOMIC_ACQUIRE);
	uint64_t first = __atomic_load_n(&lc->first_tsc, __ATOMIC_RELAXED);
	/* Read after last: it may hold one idle pass more, hence the clamp. */
	uint64_t idle = __atomic_load_n(&lc->idle_cycles, __ATOMIC_RELAXED);

	*total = last > first ? last - first : 0;
	*busy = *total > idle ? *total - idle : 0;
}

/** A ring's high-water mark since start, across hwm restarts (a clear). */
static inline uint64_t
pf_rt_ring_hwm_total(const struct pf_rt_ring *r)
{
	uint64_t hwm = __atomic_load_n(&r->hwm, __ATOMIC_ACQUIRE);
	uint64_t start = __atomic_load_n(&r->hwm_start, __ATOMIC_RELAXED);

	return RTE_MAX(hwm, start);
}

/**
 * Restart the high-water mark of the rings whose bit is set in @p mask
 * (ring index i: bit i of mask[i / 64]) from their occupancy now: each
 * producer lcore does it at its next upkeep (about a millisecond), so
 * the mark stays single-writer and exact. Waits at most @p wait_ms for
 * them; returns how many have restarted. Reports read
 * pf_rt_ring_hwm_total(), the mark since start.
 */
unsigned int pf_runtime_hwm_restart(struct pf_runtime *rt, const uint64_t *mask,
				    uint32_t *req_out, unsigned int wait_ms);

/** Has ring @p r restarted its mark for request @p req (from pf_runtime_hwm_restart)? */
static inline bool
pf_rt_ring_hwm_restarted(const struct pf_rt_ring *r, uint32_t req)
{
	return (int32_t)(__atomic_load_n(&r->hwm_clear_ack, __ATOMIC_ACQUIRE) - req) >= 0;
}

/** Totals for the accounting invariant: rx + replicas = tx + dropped + in_flight. */
struct pf_totals {
	uint64_t rx;
	uint64_t tx;
	uint64_t replicas;
	uint64_t dropped;
	uint64_t in_flight;
	int64_t unaccounted;
};

/** Build everything from @p topo (EAL already up). */
int pf_runtime_create(struct pf_runtime **out, struct pf_topo *topo, struct pf_errs *errs);
/** Launch worker lcores. */
int pf_runtime_start(struct pf_runtime *rt);
/**
 * Stop rx, drain every ring and tx buffer, join workers, snapshot port
 * stats, close ports and record the mempool in-use count (leak check).
 */
void pf_runtime_stop(struct pf_runtime *rt);
void pf_runtime_destroy(struct pf_runtime *rt);

/**
 * Give every stage the lcore that @p topo's lcore map names, moving stages
 * with the hand-over protocol: the old lcore drops the stage from its map and
 * finishes its pass, only then does the new lcore own it, so no two lcores
 * ever run one stage. Returns the number of stages moved.
 */
int pf_runtime_apply_lcore_map(struct pf_runtime *rt, const struct pf_topo *topo);

/**
 * Ports added live (a reload, port-add): probe, configure and start the
 * ports in @p mask (bit per port index) of @p topo, the topology about to
 * run, with their queues and the running mbuf pools, so that the stages
 * can use them when @p topo is published. Returns 0, or -EINVAL with
 * errors (the ports of @p mask it started are removed again).
 */
int pf_runtime_ports_add(struct pf_runtime *rt, struct pf_topo *topo, uint32_t mask,
			 struct pf_errs *errs);
/**
 * Ports removed live: stop, close and remove the devices of the ports in
 * @p mask of @p topo (the topology that ran them), once a grace period
 * after the stages let them go (no lcore polls or sends on them).
 */
void pf_runtime_ports_remove(struct pf_runtime *rt, const struct pf_topo *topo, uint32_t mask);

/**
 * Wait (control thread) until every packet in flight at the call has moved
 * through the rings after it and the tx buffers (ports removed live: what
 * was routed to them before leaves by them). False when @p timeout_ms
 * passed first.
 */
bool pf_runtime_drain_inflight(struct pf_runtime *rt, unsigned int timeout_ms);

/** Sum of packets received from all ports so far. */
uint64_t pf_runtime_rx_total(const struct pf_runtime *rt);

/**
 * Passes so far of the lcores whose map holds a source: it moves only while
 * they run, so a caller that waits for a quiet port (--idle-exit) can tell
 * "polled and found nothing" from "not scheduled".
 */
uint64_t pf_runtime_source_passes(const struct pf_runtime *rt);

/**
 * Passes so far in which a source did not ask its port because a full ring
 * left no room (runtime.backpressure): its input is not quiet, the pipeline
 * is behind, so --idle-exit must not count that time.
 */
uint64_t pf_runtime_source_held(const struct pf_runtime *rt);

/**
 * Log a WARNING for each capacity drop since the last call: a full ring, an
 * empty mempool or missed frames on a port, a stage's *_full counter: the
 * first at once, then at most a line a second per resource. The main thread
 * calls it every 100 ms (app/runtime/dropwatch.c).
 */
void pf_dropwatch_poll(const struct pf_runtime *rt);
/**
 * Read every port's link (app/runtime/linkwatch.c): one log line when it
 * goes down or comes up, the state for the stats socket (port_link) and for
 * the stages (pf_port_run.link_down). The main thread, about every 100 ms,
 * before pf_dropwatch_poll().
 */
void pf_linkwatch_poll(struct pf_runtime *rt);
/** "down", "up, 10 Gbps full-duplex", "up, speed unknown, ..." */
void pf_link_text(char *buf, size_t len, const struct rte_eth_link *l);
void pf_runtime_totals(const struct pf_runtime *rt, struct pf_totals *t);

/** Per-port totals summed across stages (for a port added live: since it was added). */
uint64_t pf_runtime_port_rx(const struct pf_runtime *rt, uint16_t port);
/** Packets the rx stages read from rx queue @p q of @p port (RSS balance). */
uint64_t pf_runtime_port_rxq(const struct pf_runtime *rt, uint16_t port, uint16_t q);
uint64_t pf_runtime_port_tx(const struct pf_runtime *rt, uint16_t port);

/** rx -> tx latency of packets sent on @p port, summed over the sinks (pf_latency.h). */
void pf_runtime_port_latency(const struct pf_runtime *rt, uint16_t port, struct pf_lat_hist *out);

/** Port stats: live, or the snapshot taken at shutdown. */
void pf_runtime_port_stats(const struct pf_runtime *rt, uint16_t port, struct rte_eth_stats *es);

/** Human summary and JSON report (app/console/report.c). */
void pf_report_summary(const struct pf_runtime *rt, FILE *out);
int pf_report_json(const struct pf_runtime *rt, const char *path);

#endif /* PF_RUNTIME_H */
