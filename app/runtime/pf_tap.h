/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The capture tap: the data-path half of a live capture (the console's
 * app/console/capture.c arms it, its writer thread drains it).
 *
 * Arming stores tap pointers in the rings and stages concerned; the lcore
 * that owns them sees one at its next burst (one load and a never-taken
 * branch per burst otherwise), copies the packets the tap selects into the
 * capture's private mempool (never the forwarding pool, so forwarding and
 * its counters are untouched) and enqueues the copies on an MP/SC ring for
 * the writer. A packet claimed but not copied (pool empty, ring full) is
 * counted as dropped, so captured + dropped = wanted.
 */
#ifndef PF_TAP_H
#define PF_TAP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "pf_runtime.h"

struct pf_runtime;
struct rte_ring;
struct rte_mempool;

enum pf_tap_mode { PF_TAP_EDGE, PF_TAP_RX, PF_TAP_TX, PF_TAP_DROP };

/** Where the copies go: one per capture, read by the lcores while it is armed. */
struct pf_tap_sink {
	struct rte_ring *q;                  /**< copies for the writer (MP/SC) */
	struct rte_mempool *mp;              /**< their pool */
	uint32_t snaplen;
	uint64_t wanted;
	uint16_t port_id[PF_MAX_PORTS];      /**< DPDK port per pipefwd port: the interface */
	uint16_t n_ports;
	/** claimed by the lcores: may pass wanted, the excess is ignored */
	uint64_t claimed __rte_cache_aligned;
	uint64_t dropped;                    /**< claimed but not copied */
};

/** One per tapped ring or stage; constant while published. */
struct pf_cap_tap {
	struct pf_tap_sink *sink;
	uint8_t mode;                        /**< enum pf_tap_mode */
	uint16_t port;                       /**< pipefwd port index (PF_TAP_RX, PF_TAP_TX) */
	uint16_t queue;                      /**< recorded in each packet block */
	uint16_t reason;                     /**< PF_TAP_DROP: the reason wanted, or any */
};

/** Stored by the copying lcore in each copy's private area, for the writer. */
struct pf_tap_priv {
	uint64_t tsc;
	uint32_t orig_len;
	uint16_t port_id;                    /**< DPDK port: the pcapng interface */
	uint16_t queue;
	uint8_t dir;                         /**< enum rte_pcapng_direction */
	uint16_t stage;                      /**< a drop: the stage and its reason */
	uint16_t reason;                     /**< PF_REASON_NONE: not a drop */
};

/** The taps of one capture, by stage and ring index (a NULL sink: not tapped). */
struct pf_tap_set {
	struct pf_cap_tap stage[PF_MAX_STAGES];    /**< a source's rx */
	struct pf_cap_tap ring[PF_MAX_RINGS];      /**< an edge, or a port's tx */
	struct pf_cap_tap drop[PF_MAX_STAGES];     /**< a stage's drops */
	bool drop_watch[PF_MAX_STAGES];            /**< the tap needs the stage's drop reasons */
};

/**
 * Data path, called by the lcore that owns a tapped ring or source stage
 * when *@p where is not NULL: copy the packets of the burst that the tap
 * selects (all of them for an edge; by port for a port), as long as the
 * capture wants more. Never blocks; the packets are not modified.
 */
void pf_tap_burst(struct pf_cap_tap **where, struct rte_mbuf **pkts, uint16_t n);

/**
 * Data path, drop capture: copy @p m, which stage @p stage drops for
 * @p reason (its counter index, or PF_REASON_RING_FULL / PF_REASON_NO_EDGE),
 * if the tap wants that reason. Called by the watch path (app/runtime/watch.c)
 * before the packet is freed.
 */
void pf_tap_drop(struct pf_cap_tap *tap, struct rte_mbuf *m, uint16_t stage, uint16_t reason);

/** Publish the taps of @p set in @p rt (the sink must be complete). Control thread. */
void pf_tap_arm(struct pf_runtime *rt, struct pf_tap_set *set);
/** Withdraw every tap; lcores may copy until their next quiescent point. */
void pf_tap_disarm(struct pf_runtime *rt);

#endif /* PF_TAP_H */
