/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Route sources (app/control/routing.c): the topology's route_sources: —
 * an FPM server for FRR's zebra (dplane_fpm_nl) and netlink listeners on a
 * namespace's kernel routing table (BIRD's kernel protocol, `ip route`) —
 * run on one thread of their own, "pf-routes". Their routes reach the
 * routing stages as learnt routes (pf_learnt_apply) in batches, applied
 * under the console's lock, so one writer changes the tables at a time and
 * replies never read a table being changed.
 *
 * A source's life: an FPM source listens, is `up` while zebra is connected,
 * `lost` when the connection went (its routes kept for `grace`), `syncing`
 * when zebra came back (routes it does not send again are swept once the
 * stream has been quiet for a second and `resync` has passed). A netlink
 * source subscribes, dumps (`syncing`), sweeps what the dump did not show,
 * and is `up`; a lost notification (ENOBUFS) starts a new dump.
 */
#ifndef PF_ROUTING_H
#define PF_ROUTING_H

#include <stdint.h>

#include "pf_route.h"
#include "pf_rsrc.h"
#include "pf_topo.h"

struct pf_runtime;
struct pf_routing;

/** Runs @p fn(rt, arg) under the console's lock (main hands pf_console_locked in). */
typedef void pf_routing_locked_fn(void (*fn)(struct pf_runtime *rt, void *arg), void *arg);

/** What the console shows of one source. */
struct pf_source_state {
	struct pf_source_conf conf;
	const char *state;               /**< listening, up, lost, syncing, down */
	double state_s;                  /**< seconds in this state */
	double last_update_s;            /**< seconds since the last message, -1: none yet */
	char peer[64];                   /**< fpm: the connected daemon's address */
	char error[128];                 /**< why it is down, or the last problem */
	uint64_t connects, resyncs, enobufs, bytes, batches;
	struct pf_route_result res;      /**< what the stages did with its operations */
	struct pf_rsrc_stats rs;
};

/**
 * Start the thread with @p rt's route sources (none: it waits for a reload
 * that brings some). @p locked applies batches. 0, or -errno.
 */
int pf_routing_start(struct pf_routing **out, struct pf_runtime *rt,
		     pf_routing_locked_fn *locked);

/**
 * After an applied reload (main thread): the sources of the running
 * topology. A source whose name, type, id, namespace and address are the
 * same keeps its routes and connection; a removed or changed one withdraws
 * its routes at once. Host interfaces are looked up again.
 */
void pf_routing_configure(struct pf_routing *r, struct pf_runtime *rt);

/** Stop the thread, close every socket; the stages keep the routes (shutdown). */
void pf_routing_stop(struct pf_routing *r);

/** The sources' state into @p out (at most @p max). Returns how many. Any thread. */
unsigned int pf_routing_sources(struct pf_routing *r, struct pf_source_state *out,
				unsigned int max);

/** The source named @p name's id, or -1 (for `routes`: learnt:N is a source's name). */
int pf_routing_source_id(struct pf_routing *r, const char *name);

#endif /* PF_ROUTING_H */
