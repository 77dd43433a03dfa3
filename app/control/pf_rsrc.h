/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * One route source's view of its daemon (app/control/rsrc.c): the routes
 * and next-hop objects it told us, decoded from rtnetlink messages (FPM and
 * the kernel's netlink carry the same ones), turned into learnt-route
 * operations (include/pf_route.h) for the routing stages.
 *
 * No sockets and no threads here (app/control/routing.c has them), so a
 * unit test drives it with hand-made messages. What it keeps per route is
 * the prefix, the next-hop object it names (if any) and a resync mark:
 *
 * - every new route replaces what the source had for its prefix;
 * - routes by next-hop object (RTA_NH_ID, FRR's next-hop groups) follow the
 *   object: a changed object or group re-sends its routes, a route whose
 *   object is not known yet waits for it (pending), a deleted object takes
 *   its routes with it as the kernel does;
 * - kernel-protocol routes (connected), other tables, local, broadcast,
 *   multicast and link-local destinations, cloned routes and next hops on
 *   interfaces that are not pipefwd's host interfaces are skipped and
 *   counted by reason;
 * - a resync (a reconnect, a lost netlink message) marks every route; what
 *   the daemon does not say again is swept.
 */
#ifndef PF_RSRC_H
#define PF_RSRC_H

#include <stdbool.h>
#include <stdint.h>

#include "pf_route.h"

struct nlmsghdr;

/** Why a route or a next hop was not taken. */
#define foreach_rsrc_skip(_)								\
	_(FAMILY, "family", "not IPv4 or IPv6")						\
	_(TABLE, "table", "in another kernel table")					\
	_(KERNEL, "kernel", "kernel-protocol routes (connected subnets: the topology's)") \
	_(LOCAL, "local", "local, broadcast, anycast, multicast and other route types")	\
	_(LINK_LOCAL, "link_local", "link-local or multicast destinations")		\
	_(CLONED, "cloned", "cloned (cache) routes")					\
	_(FOREIGN, "foreign", "next hops only on interfaces that are not host interfaces") \
	_(UNSUPPORTED, "unsupported", "encapsulation, a gateway of the other family, "	\
	  "too many next hops")								\
	_(METRIC, "metric", "a worse metric of a prefix held (the kernel uses the best)")	\
	_(MALFORMED, "malformed", "messages that do not parse")

#define RSRC_SKIP_ENUM(u, n, h) PF_RSRC_SKIP_##u,
enum pf_rsrc_skip { foreach_rsrc_skip(RSRC_SKIP_ENUM) PF_RSRC_SKIP_MAX };

/** The skip reasons' names ("kernel", ...) and help lines. */
extern const char *const pf_rsrc_skip_names[PF_RSRC_SKIP_MAX];
extern const char *const pf_rsrc_skip_help[PF_RSRC_SKIP_MAX];

struct pf_rsrc_stats {
	uint64_t messages;               /**< rtnetlink messages read */
	uint64_t route_msgs;             /**< RTM_NEWROUTE / RTM_DELROUTE */
	uint64_t nexthop_msgs;           /**< RTM_NEWNEXTHOP / RTM_DELNEXTHOP */
	uint64_t ops;                    /**< learnt-route operations sent to the stages */
	uint64_t replace_pairs;          /**< deletes left out: the next message replaced them */
	uint64_t skipped[PF_RSRC_SKIP_MAX];
	uint64_t swept;                  /**< stale routes a resync withdrew */
	uint64_t withdrawn;              /**< routes withdrawn because the source went */
	uint32_t routes4, routes6;       /**< routes held (installed or pending) */
	uint32_t pending;                /**< routes waiting for their next-hop object */
	uint32_t nexthops;               /**< next-hop objects held */
};

/** Where a source's operations go (the routing thread's batch). */
typedef void pf_rsrc_emit_fn(void *arg, const struct pf_route_op *op);
/** The pipefwd port of interface @p ifindex in the daemon's namespace, or -1. */
typedef int pf_rsrc_port_fn(void *arg, uint32_t ifindex);

struct pf_rsrc_conf {
	uint8_t src;                     /**< learnt source id */
	uint32_t table;                  /**< kernel table taken (254: main) */
	/** The kernel's table may hold a prefix at several metrics (netlink); FPM
	 *  sends only the best */
	bool metrics;
	pf_rsrc_port_fn *port_of;
	void *port_arg;
	pf_rsrc_emit_fn *emit;
	void *emit_arg;
};

struct pf_rsrc;

/** A source, or NULL (ENOMEM). */
struct pf_rsrc *pf_rsrc_create(const struct pf_rsrc_conf *c);
void pf_rsrc_free(struct pf_rsrc *s);

/**
 * Take one rtnetlink message (routes, next-hop objects; others are
 * ignored). Returns 0, or 1 when the source should be read again from the
 * start (a netlink table whose best route of a prefix went while a worse
 * one stays: only a dump tells which).
 */
int pf_rsrc_msg(struct pf_rsrc *s, const struct nlmsghdr *h);

#define PF_RSRC_DUMP 1u                  /**< pf_rsrc_msgs: read the source again (as above) */
#define PF_RSRC_LINKS 2u                 /**< pf_rsrc_msgs: an interface came, went or changed */

/**
 * Take the rtnetlink messages of one buffer (an FPM frame, one netlink read)
 * in turn, as pf_rsrc_msg. An RTM_DELROUTE followed by an RTM_NEWROUTE of the
 * same route (zebra's FPM sends a changed route so, in one frame) is one
 * replace: the delete is left out, so lookups never miss the route between
 * the two. Returns PF_RSRC_DUMP and PF_RSRC_LINKS as they apply.
 */
int pf_rsrc_msgs(struct pf_rsrc *s, const void *buf, size_t len);

/** A resync begins: every route and object said before is stale until said again. */
void pf_rsrc_mark(struct pf_rsrc *s);
/** The resync is complete: withdraw what it did not say again. Returns routes swept. */
uint32_t pf_rsrc_sweep(struct pf_rsrc *s);
/** The source went: withdraw every route, forget every object. Returns routes withdrawn. */
uint32_t pf_rsrc_withdraw_all(struct pf_rsrc *s);
const struct pf_rsrc_stats *pf_rsrc_stats(const struct pf_rsrc *s);

#endif /* PF_RSRC_H */
