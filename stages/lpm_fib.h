/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the lpm stage and its unit tests: the table the data path
 * reads (next hops, DIR-24-8), the stage's state, and what its files call
 * of each other: stages/lpm.c (data path, the ops), lpm_table.c (the table:
 * build, swap, free), lpm_show.c (gauges, pages, trace), lpm_learnt.c (the
 * learnt routes' table side); the configuration is lpm.h's (lpm_routes.c).
 */
#ifndef PF_LPM_FIB_H
#define PF_LPM_FIB_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_lpm.h>

#include "lpm.h"
#include "pf_dir24.h"
#include "pf_neigh.h"
#include "pf_route.h"

/* Lookup result for "no route"; real next hops are 24-bit indexes. */

enum lpm_nh_kind {
	LPM_NH_FWD = 0,     /* route: rewrite and send */
	LPM_NH_LOCAL,       /* one of the router's addresses */
	LPM_NH_DBCAST,      /* broadcast address of a routed port's subnet */
	LPM_NH_GW,          /* next hop by address (in macs[0..3]): MAC from the neighbour table */
	LPM_NH_CONN,        /* a port's connected subnet: the destination is the neighbour */
	/* Learnt routes' targets (stages/lpm_learnt.c): */
	LPM_NH_GROUP,       /* ECMP: group index in macs[0..3], members in the group's buckets */
	LPM_NH_BLACKHOLE,   /* drop silently */
	LPM_NH_UNREACH,     /* drop, ICMP destination unreachable (host) */
	LPM_NH_PROHIBIT,    /* drop, ICMP communication administratively prohibited */
};

/*
 * In a table entry's next hop: not a plain forward (max_len 0: local,
 * broadcast, connected, by address, no route), so a direct hit with it
 * leaves lpm_x4_group's test without a look at nh[]. Every other reader
 * of an entry clears it (LPM_HOP).
 */
#define LPM_HOP_SLOW (1u << 23)
#define LPM_HOP(v) ((v) & ~LPM_HOP_SLOW)

/* 16 bytes: the fast path indexes the table with a shift. */
struct lpm_nh {
	uint8_t macs[12];   /* destination then source: the frame's first 12 bytes */
	uint16_t max_len;   /* longest IPv4 total length the port takes; 0 unless LPM_NH_FWD */
	uint8_t port;       /* < PF_MAX_PORTS */
	uint8_t kind;
};

/* One complete routing table: what an update replaces as a whole. */
struct lpm_fib {
	struct rte_lpm *lpm;
	/* The fast path's length limit: the least max_len of the plain next
	 * hops (a longer packet leaves it, and lpm_plain checks its own hop). */
	uint16_t fast_len;
	enum lpm_lookup_mode mode;
	uint32_t dflt;            /* next hop of 0.0.0.0/0 (rte_lpm has no depth 0) or miss */
	uint32_t miss;            /* "no route": nh[n_nh], max_len 0 so the fast path skips it */
	uint32_t n_routes;        /* configured routes, interface entries excluded */
	uint32_t n_nh;            /* entries in nh[] */
	uint32_t n_user_nh;       /* configured next hops (nh[0..n_user_nh)) */
	uint32_t n_tbl8;
	uint64_t mem_bytes;
	uint32_t n_ports;
	/* Learnt routes (stages/lpm_learnt.c; NULL/0 when the stage takes none). */
	struct pf_dir24 *dir;     /* the routes the tables hold, for incremental updates */
	uint32_t conn_base;       /* nh[conn_base + p]: port p's connected subnet */
	uint32_t learnt_base;     /* nh[learnt_base + id]: learnt next hop or group id */
	const struct pf_lrn_group *groups;   /* ECMP groups (the learnt state's, shared) */
	bool dflt_cfg;            /* dflt is a configured default route */
	/* next hops, then local, dbcast and connected per port, then miss, then the
	 * learnt ids; aligned: an entry is written in one 16-byte store */
	struct lpm_nh nh[] __rte_aligned(16);
};

struct lpm_priv {
	/* data path */
	struct lpm_fib *fib;                      /* read once per burst (RCU) */
	struct rte_ether_addr port_mac[PF_MAX_PORTS];
	uint32_t port_ip[PF_MAX_PORTS];           /* host order */
	uint32_t port_has_ip;                     /* bit per port */
	uint16_t max_frame[PF_MAX_PORTS];         /* egress limit, untagged frame */
	bool icmp;                                /* edge icmp wired: errors go there */
	bool frag;                                /* edge fragment wired */
	bool slow;                                /* edge icmp, fragment, neigh or host wired */
	bool host;                                /* edge host wired: punt to the kernel */
	const struct pf_neigh_table *nt;          /* neighbours (neigh edge wired), else NULL */
	/* control path */
	uint64_t updates;
	uint64_t g_routes, g_nh, g_tbl8, g_mem;   /* gauges: never read through fib */
	struct pf_lrn *ln;                        /* learnt routes, kept across reloads, or NULL */
};

/* ---- learnt routes (stages/lpm_learnt.c; the store is stages/lib/pf_lrn.h) ---- */

/**
 * A table was just built from the configuration (every route noted in
 * @p fib->dir): give it the learnt next hops and install every learnt
 * route where no configured one has the prefix. Changes nothing of @p ln
 * (a refused reload leaves it as it was). 0, or -ENOSPC with errors.
 */
int lpm_learnt_fill(const struct pf_lrn *ln, struct pf_stage *st, struct lpm_fib *fib,
		    struct pf_errs *errs);
/** @p fib, filled, runs now: count what it holds. */
void lpm_learnt_published(struct pf_stage *st, struct pf_lrn *ln, struct lpm_fib *fib);

/** Apply a batch to the running table (the stage's ctl.learn op). */
int lpm_learnt_apply(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
		     struct pf_route_result *res);

/**
 * Control-side upkeep (the stage's ctl.upkeep op, about every 100 ms): next
 * hops by address follow the neighbour table (a resolved one is a plain
 * forward on the fast path, its MAC in its entry), ECMP members on a port
 * whose link is down leave their groups' buckets at once, freed ids and
 * tbl8 groups come back after their grace period.
 */
void lpm_learnt_upkeep(struct pf_stage *st, uint64_t now_ns);

/* ---- the stage's files ---------------------------------------------------- */

/* lpm_table.c */
int lpm_init(struct pf_stage *st, struct pf_errs *errs);
void lpm_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained);
extern const struct pf_stage_swap lpm_swap;
void lpm_free(struct pf_stage *st);
int lpm_learn(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
	      struct pf_route_result *res);
void lpm_upkeep(struct pf_stage *st, uint64_t now_ns);

/* lpm_show.c */
void lpm_gauges(const struct pf_stage *st, struct pf_sink *out);
int lpm_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	     struct pf_sink *d);
void lpm_trace(const struct pf_stage *st, const struct rte_mbuf *m, char *buf, size_t len);
extern const char *const lpm_show_tables[];

#endif /* PF_LPM_FIB_H */
