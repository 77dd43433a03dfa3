/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the lpm6 stage (stages/lpm6.c, stages/lpm6_learnt.c) and its
 * unit tests: the table the data path reads (next hops, rte_lpm6), the
 * stage's state, and the learnt routes' interface.
 */
#ifndef PF_LPM6_FIB_H
#define PF_LPM6_FIB_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_lpm6.h>

#include "lpm6.h"
#include "pf_lrn.h"
#include "pf_neigh.h"
#include "pf_route.h"

enum lpm6_nh_kind {
	LPM6_NH_FWD = 0,    /* route: rewrite and send */
	LPM6_NH_LOCAL,      /* one of the router's global addresses */
	LPM6_NH_CONNECTED,  /* a port's on-link prefix: the destination is the neighbour */
	LPM6_NH_GW,         /* next hop by address (gateway id in macs[0..3]): MAC from neigh */
	/* Learnt routes' targets (stages/lpm6_learnt.c): */
	LPM6_NH_GROUP,      /* ECMP: group index in macs[0..3], members in the group's buckets */
	LPM6_NH_BLACKHOLE,  /* drop silently */
	LPM6_NH_UNREACH,    /* drop, ICMPv6 destination unreachable, no route (1/0) */
	LPM6_NH_PROHIBIT,   /* drop, ICMPv6 administratively prohibited (1/1) */
};

/* 16 bytes, as lpm's: a learnt entry is rewritten in one aligned 16-byte store. */
struct lpm6_nh {
	uint8_t macs[12];   /* destination then source: the frame's first 12 bytes */
	uint16_t max_plen;  /* longest payload length the port takes; 0 unless LPM6_NH_FWD */
	uint8_t port;
	uint8_t kind;
};

/* One complete routing table: what a reload replaces as a whole. */
struct lpm6_fib {
	struct rte_lpm6 *lpm;
	uint32_t dflt;            /* next hop of ::/0 or miss (as ::/1 and 8000::/1) */
	uint32_t miss;            /* "no route": nh[n_nh], max_plen 0 */
	uint32_t n_routes;
	uint32_t n_user_nh;
	uint32_t n_tbl8;
	uint64_t mem_bytes;
	/* Learnt routes (stages/lpm6_learnt.c; 0/NULL when the stage takes none). */
	uint32_t n_ports;
	uint32_t lconn_base;      /* nh[lconn_base + p]: port p's connected subnet (learnt) */
	uint32_t learnt_base;     /* nh[learnt_base + id]: learnt next hop or group id */
	const struct pf_lrn_group *groups;   /* ECMP groups (the store's, shared) */
	/* rte_lpm6 has no depth 0: ::/0 is its two halves, which a /1 route replaces. */
	bool dflt_cfg;            /* dflt is a configured ::/0 */
	uint32_t half_cfg[2];     /* a configured ::/1 and 8000::/1's next hop, or UINT32_MAX */
	uint32_t lrn_dflt;        /* the learnt ::/0's target, or PF_LRN_NONE */
	uint32_t lrn_half[2];     /* the learnt ::/1 and 8000::/1's targets */
	/* The writer's (control thread), apart from what the data path reads. */
	struct {
		uint64_t free_tok;    /* grace token of the last delete that may free tbl8s */
		bool freed;           /* a delete may have freed tbl8 groups since */
	} w __rte_cache_aligned;
	/* next hops, connected and local per address, miss, then (learnt) connected per
	 * port and the learnt ids; aligned: an entry is read and written in 16 bytes */
	struct lpm6_nh nh[] __rte_aligned(16);
};

struct lpm6_priv {
	/* data path */
	struct lpm6_fib *fib;                         /* read once per burst (RCU) */
	struct rte_ether_addr port_mac[PF_MAX_PORTS];
	uint16_t max_frame[PF_MAX_PORTS];
	uint8_t n_addr[PF_MAX_PORTS];                 /* addr[p][0] is the link-local */
	uint8_t addr[PF_MAX_PORTS][PF_PORT_IPV6_MAX + 1][16];
	bool icmp;
	bool host;                                   /* host edge wired: punt to the kernel */
	const struct pf_neigh_table *nt;              /* neigh edge wired, else NULL */
	/* control path */
	uint64_t updates;
	uint64_t g_routes, g_nh, g_tbl8, g_mem;
	uint64_t g_waits;                             /* learnt adds that waited (lpm6_learnt.c) */
	struct pf_lrn *ln;                            /* learnt routes, kept across reloads, or NULL */
};

/* ---- learnt routes (stages/lpm6_learnt.c; the store is stages/lib/pf_lrn.h) ---- */

/**
 * A table was just built from the configuration: give it the learnt next
 * hops and install every learnt route where no configured one has the
 * prefix. Changes nothing of @p ln (a refused reload leaves it as it was).
 * 0, or -ENOSPC with errors.
 */
int lpm6_learnt_fill(const struct pf_lrn *ln, struct pf_stage *st, struct lpm6_fib *fib,
		     struct pf_errs *errs);
/** @p fib, filled, runs now: count what it holds. */
void lpm6_learnt_published(struct pf_stage *st, struct pf_lrn *ln, struct lpm6_fib *fib);

/** Apply a batch to the running table (the stage's ctl.learn op). */
int lpm6_learnt_apply(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
		      struct pf_route_result *res);

/**
 * Control-side upkeep (the stage's ctl.upkeep op, about every 100 ms): next
 * hops by address follow the neighbour table (a resolved one is a plain
 * forward on the fast path, its MAC in its entry), ECMP members on a port
 * whose link is down leave their groups' buckets at once, freed ids come
 * back after their grace period.
 */
void lpm6_learnt_upkeep(struct pf_stage *st, uint64_t now_ns);

#endif /* PF_LPM6_FIB_H */
