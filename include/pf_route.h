/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Learnt routes: what a routing daemon (FRR through FPM, BIRD or `ip route`
 * through the kernel table) tells a routing stage (lpm, lpm6), in batches
 * (the stage's ctl.routes op). Learnt routes live beside the configured
 * ones: a configured route of the same prefix wins; they are never written
 * into the topology and are not live changes (pipefwd-ctl changes).
 *
 * One writer: the control side applies batches one at a time (the runtime
 * serialises them with reloads); the data path reads the tables without
 * locks, and what a batch replaces is freed after a grace period.
 */
#ifndef PF_ROUTE_H
#define PF_ROUTE_H

#include <stdint.h>

/** Most members of one next-hop group (ECMP). */
#define PF_ROUTE_NH_MAX 16
/** Route sources a stage tells apart (configured routes are not one of them). */
#define PF_ROUTE_SRC_MAX 8

enum pf_route_opcode {
	PF_ROUTE_ADD = 1,   /**< add, or replace what this source had for the prefix */
	PF_ROUTE_DEL,       /**< withdraw this source's route for the prefix */
};

enum pf_route_kind {
	PF_ROUTE_UNICAST = 0,   /**< forward by the next hops */
	PF_ROUTE_BLACKHOLE,     /**< drop silently */
	PF_ROUTE_UNREACHABLE,   /**< drop, ICMP destination unreachable (IPv4 host 3/1, IPv6
				     no route 1/0, as Linux) */
	PF_ROUTE_PROHIBIT,      /**< drop, ICMP administratively prohibited (3/13, 1/1) */
};

/** One next hop of a route: a gateway on a port, or the port itself (connected). */
struct pf_route_nh {
	uint16_t port;          /**< pipefwd port index */
	uint16_t weight;        /**< ECMP weight, >= 1 */
	uint8_t gw[16];         /**< gateway address (IPv4 in the first 4 bytes, network
				     order); all zero: the destination is on the link */
};

/** One operation of a batch. */
struct pf_route_op {
	uint8_t op;             /**< enum pf_route_opcode */
	uint8_t af;             /**< 4 or 6 */
	uint8_t plen;           /**< prefix length */
	uint8_t kind;           /**< enum pf_route_kind */
	uint8_t src;            /**< source id, < PF_ROUTE_SRC_MAX */
	uint8_t n_nh;           /**< next hops (unicast: 1..PF_ROUTE_NH_MAX) */
	uint8_t prefix[16];     /**< network order, host bits zero */
	struct pf_route_nh nh[PF_ROUTE_NH_MAX];
};

/** What a batch did, by outcome (a stage adds to it). */
struct pf_route_result {
	uint32_t added, replaced, deleted;
	uint32_t unchanged;     /**< the same route again (a resync's replay) */
	uint32_t missing;       /**< a delete of a route this source did not have */
	uint32_t refused;       /**< bad operations (port unknown, prefix not canonical, full) */
	uint32_t shadowed;      /**< kept but not installed: a configured route has the prefix */
};

#endif /* PF_ROUTE_H */
