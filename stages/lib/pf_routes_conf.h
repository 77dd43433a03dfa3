/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The configured routes of a routing stage, both families (lpm, lpm6;
 * stages/lib/routes_conf.c): `nexthops:` by MAC or by address, inline
 * `routes:`, the `routes_file` ("PREFIX/LEN NEXTHOP" per line), the
 * duplicate check and live route changes. No DPDK: it runs for --check, at
 * start and on reload, and copes with a million-line route file quickly
 * (one pass, no per-line allocation, next-hop names through a small hash).
 *
 * Addresses are bytes in network order, 4 (IPv4) or 16 (IPv6), so one
 * route and one next-hop type serve both families; a route is 16 bytes for
 * IPv4 and 28 for IPv6 (its prefix is the last member).
 */
#ifndef PF_ROUTES_CONF_H
#define PF_ROUTES_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>

#include "pf_stage_ctl.h"

/** Next hops are indexes into a table; rte_lpm stores 24 bits. */
#define PF_RCONF_MAX_NEXTHOPS 4096
/** Routes one stage accepts (inline plus file). */
#define PF_RCONF_MAX_ROUTES (16u << 20)
/** Route file lines longer than this are refused. */
#define PF_RCONF_LINE_MAX 256

/** A next hop: `nexthops:` {port, mac} or {via, port}, or a route's `via: ADDRESS`. */
struct pf_rconf_nh {
	char name[PF_NAME_MAX];
	uint8_t gw[16];         /* by address: the gateway, network order (IPv4: gw[0..3]) */
	uint16_t port;          /* egress port index */
	uint8_t mac[6];         /* static: the destination MAC written on the frame */
	uint8_t has_gw;         /* 1: by address, the neigh stage finds the MAC; 0: static */
};

/** A route; routes are stride bytes apart (pf_rconf_route). */
struct pf_rconf_route {
	uint32_t nh;            /* index into pf_rconf.nh */
	uint32_t line;          /* where it was defined (file or topology line) */
	uint16_t col;
	uint8_t len;
	uint8_t from_file;      /* 1: routes_file, 0: inline in the topology */
	uint8_t prefix[];       /* 4 or 16 bytes, network order, host bits clear */
};

struct pf_rconf {
	uint8_t af;             /* 4 or 6 */
	uint8_t stride;         /* bytes per route */
	uint32_t n_nh;
	uint32_t n_routes, cap_routes;
	void *routes;           /* sorted by prefix, then length (pf_rconf_check_dups) */
	char routes_file[4096]; /* resolved path, "" when none */
	struct pf_rconf_nh nh[PF_RCONF_MAX_NEXTHOPS];
};

/** Route @p i of @p rt. */
static inline struct pf_rconf_route *
pf_rconf_route(const struct pf_rconf *rt, uint32_t i)
{
	return (struct pf_rconf_route *)((char *)rt->routes + (size_t)i * rt->stride);
}

/** An IPv4 address of a route or next hop, in host order. */
static inline uint32_t
pf_rconf_ip4(const uint8_t *a)
{
	uint32_t v;

	memcpy(&v, a, 4);
	return ntohl(v);
}

/**
 * Parse the stage's `nexthops:`, `routes:` and `routes_file` into @p rt
 * (zeroed; family @p af, 4 or 6). Every problem is recorded in @p errs with
 * its location (route file errors as file:line:col). The routes are not
 * sorted yet: pf_rconf_check_dups does that. Returns 0, -EINVAL or -ENOMEM.
 */
int pf_rconf_parse(struct pf_rconf *rt, uint8_t af, struct pf_stage_conf *sc,
		   const struct pf_stage_env *env, struct pf_errs *errs);

/** Sort @p rt's routes and report duplicate prefixes. Returns 0 or -EINVAL. */
int pf_rconf_check_dups(struct pf_rconf *rt, const char *topo_file, struct pf_errs *errs);

/**
 * Next hops by address need the stage's neigh edge (only the neigh stage
 * finds their MAC): 0 when @p neigh_wired or there is none, else -EINVAL
 * with an error on the stage.
 */
int pf_rconf_check_neigh(const struct pf_rconf *rt, const struct pf_stage_conf *sc,
			 bool neigh_wired, struct pf_errs *errs);

/** Free what pf_rconf_parse allocated in @p rt (not @p rt). */
void pf_rconf_free(struct pf_rconf *rt);

/**
 * A live route change (the stage's edit op): "PREFIX/LEN NEXTHOP" (add; a
 * next hop by name or by address, which needs the neigh edge: @p
 * neigh_wired) or "PREFIX/LEN" (delete) on the parsed routes of stage @p
 * sc, which stay sorted. ch->key and ch->entry are normalised and the save
 * location set. Returns 0, -EINVAL, -ENOENT, -EEXIST or -ENOSPC with an
 * error.
 */
int pf_rconf_edit(struct pf_rconf *rt, struct pf_stage_conf *sc, const struct pf_stage_env *env,
		  bool neigh_wired, struct pf_change *ch, struct pf_errs *errs);

#endif /* PF_ROUTES_CONF_H */
