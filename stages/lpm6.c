/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm6: IPv6 router (RFC 8200, RFC 4291) on rte_lpm6; answers Neighbour
 *   Solicitations and ICMPv6 echo for its own addresses.
 * Edges: drop, out (md->out_port set: routed packets, NAs, echo replies), icmp
 *   (optional: packets that deserve an ICMPv6 error, the error in md->nexthop, see PF_META_ICMP),
 *   neigh (optional: packets to a neighbour without a MAC yet, and the NS/NA the neigh stage
 *   learns from; wiring it resolves connected hosts and `via: ADDRESS` next hops by RFC 4861).
 * Counters: one drop reason per rule (ip6_no_route, ip6_hop_limit_expired, ip6_src_*,
 *   ip6_linklocal_*, ip6_blackhole, ...), see foreach_lpm6_ctr; info: local, icmp6_echo_reply,
 *   nd_na_sent, *_to_icmp.
 * Params: nexthops (name: {port, mac}, as lpm), routes ([{prefix, via}]), routes_file,
 *   learnt (routes from routing daemons: stages/lpm6_learnt.c).
 *
 * A stage of its own rather than lpm taking both families: rx already sorts
 * the families onto two edges, so each lookup stage stays one loop over one
 * address size with no per-packet family test, lpm's tuned IPv4 path is
 * untouched, and the two tables can be placed on different lcores.
 *
 * The input is rx's "ipv6" edge: rx has checked the header and walked the
 * extension headers (pf_meta l3_len, l4_proto). The table is a struct
 * lpm6_fib read once per burst; a route update builds a new one beside it,
 * swaps the pointer and frees the old one after pf_rcu_synchronize (as lpm).
 * Learnt routes change the running table in place (stages/lpm6_learnt.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_vect.h>

#include "lpm.h"        /* lpm_cksum_adjust */
#include "lpm6_fib.h"
#include "nd6.h"
#include "pf_ip6.h"
#include "pf_log.h"
#include "pf_neigh.h"

#define foreach_lpm6_ctr(_)									\
	_(LPM6_CTR_L3_MAC_MISMATCH, l3_mac_mismatch, DROP,					\
	  "destination MAC is neither the ingress port's MAC nor a group address")		\
	_(LPM6_CTR_VLAN_UNKNOWN, vlan_unknown, DROP, "802.1Q tag with VID != 0 (routed ports are untagged)") \
	_(LPM6_CTR_L3_PROTO, l3_proto_unsupported, DROP, "not IPv6 (wiring mistake)")		\
	_(LPM6_CTR_SRC_MCAST, ip6_src_mcast, DROP, "source is a multicast address (ff00::/8)")	\
	_(LPM6_CTR_SRC_UNSPEC, ip6_src_unspecified, DROP, "source is :: (unspecified)")	\
	_(LPM6_CTR_SRC_LOOPBACK, ip6_src_loopback, DROP, "source is ::1 (loopback)")		\
	_(LPM6_CTR_SRC_V4MAPPED, ip6_src_v4mapped, DROP, "source is IPv4-mapped (::ffff:0:0/96)") \
	_(LPM6_CTR_DST_MARTIAN, ip6_dst_martian, DROP,						\
	  "destination is ::, ::1 or IPv4-mapped (never routed)")				\
	_(LPM6_CTR_MCAST_DST, ip6_mcast_dst, DROP,						\
	  "multicast destination other than an NS for us (no multicast routing)")		\
	_(LPM6_CTR_LL_DST, ip6_linklocal_dst, DROP,						\
	  "link-local destination other than the ingress port's own: never forwarded")		\
	_(LPM6_CTR_LL_SRC, ip6_linklocal_src, DROP,						\
	  "link-local source on a packet to forward off-link (icmp edge not wired)")		\
	_(LPM6_CTR_NO_ROUTE, ip6_no_route, DROP,						\
	  "no route matches the destination (icmp edge not wired)")				\
	_(LPM6_CTR_NEIGH, ip6_neighbour_unresolved, DROP,					\
	  "destination on a connected prefix with no next-hop route (neigh edge not wired)")	\
	_(LPM6_CTR_L2MCAST_UNICAST, ip6_l2mcast_unicast, DROP,					\
	  "unicast IPv6 to forward arrived in an L2 broadcast/multicast frame")			\
	_(LPM6_CTR_HLIM, ip6_hop_limit_expired, DROP,						\
	  "hop limit <= 1 on a packet to forward (icmp edge not wired)")			\
	_(LPM6_CTR_TOO_BIG, ip6_too_big, DROP,							\
	  "longer than the egress MTU (routers never fragment IPv6; icmp edge not wired)")	\
	_(LPM6_CTR_LOCAL_UNSUPPORTED, ip6_local_unsupported, DROP,				\
	  "addressed to the router but not an ICMPv6 echo request or NS it answers")		\
	_(LPM6_CTR_ROUTING_HDR, ip6_routing_header, DROP,					\
	  "to the router with a Routing header whose Segments Left is not 0 (RFC 5095, "	\
	  "RFC 8200 4.4: no type is processed; icmp edge not wired)")				\
	_(LPM6_CTR_ICMP_BAD_CKSUM, icmp6_bad_checksum, DROP, "ICMPv6 to the router with a wrong checksum") \
	_(LPM6_CTR_ND_INVALID, nd_invalid, DROP,						\
	  "NS or NA failing RFC 4861 7.1.1/7.1.2 (hop limit, code, length, target, options)")	\
	_(LPM6_CTR_ND_NOT_FOR_US, nd_not_for_us, DROP,						\
	  "Neighbour Solicitation for an address that is not the ingress port's")		\
	_(LPM6_CTR_ND_IGNORED, nd_ignored, DROP,						\
	  "RS, RA, Redirect, or an NA with no neigh edge wired")				\
	_(LPM6_CTR_ND_NO_ROOM, nd_no_room, DROP, "no tailroom to build the Neighbour Advertisement") \
	_(LPM6_CTR_BLACKHOLE, ip6_blackhole, DROP, "matched a learnt blackhole route")		\
	_(LPM6_CTR_UNREACH_ROUTE, ip6_unreachable_route, DROP,					\
	  "matched a learnt unreachable or prohibit route (icmp edge not wired)")		\
	_(LPM6_CTR_LOCAL, local, INFO, "IPv6 packets addressed to one of the router's addresses") \
	_(LPM6_CTR_ECHO_REPLY, icmp6_echo_reply, INFO, "ICMPv6 echo requests answered in place") \
	_(LPM6_CTR_TO_HOST, ip6_to_host, INFO,							\
	  "to the router and not answered here (TCP, UDP, ICMPv6 but echo requests and ND, "	\
	  "link-scope multicast): sent to the host edge") \
	_(LPM6_CTR_NA_SENT, nd_na_sent, INFO,							\
	  "Neighbour Solicitations for the ingress port's addresses answered (solicited NA)")	\
	_(LPM6_CTR_HLIM_ICMP, ip6_hop_limit_to_icmp, INFO,					\
	  "hop limit <= 1: sent to the icmp edge (Time Exceeded)")				\
	_(LPM6_CTR_NO_ROUTE_ICMP, ip6_no_route_to_icmp, INFO,					\
	  "no route: sent to the icmp edge (Destination Unreachable, no route)")		\
	_(LPM6_CTR_TOO_BIG_ICMP, ip6_too_big_to_icmp, INFO,					\
	  "longer than the egress MTU: sent to the icmp edge (Packet Too Big)")			\
	_(LPM6_CTR_LL_SRC_ICMP, ip6_linklocal_src_to_icmp, INFO,				\
	  "link-local source to forward: sent to the icmp edge (Unreachable, beyond scope)")	\
	_(LPM6_CTR_ROUTING_HDR_ICMP, ip6_routing_header_to_icmp, INFO,				\
	  "Routing header with Segments Left > 0 to the router: sent to the icmp edge "	\
	  "(Parameter Problem 0, pointer at its Routing Type)")					\
	_(LPM6_CTR_UNREACH_ROUTE_ICMP, ip6_unreachable_route_to_icmp, INFO,			\
	  "matched a learnt unreachable or prohibit route: sent to the icmp edge "		\
	  "(Destination Unreachable, no route or administratively prohibited)")		\
	_(LPM6_CTR_TO_NEIGH, ip6_to_neigh, INFO,						\
	  "next hop or connected host without a MAC yet: sent to the neigh edge (NS)")		\
	_(LPM6_CTR_ND_TO_NEIGH, nd_to_neigh, INFO,						\
	  "valid NS for our addresses and NAs: sent to the neigh edge (learned, NS answered)")

PF_CTR_ENUM(lpm6, foreach_lpm6_ctr);
PF_CTR_DESCS(lpm6, foreach_lpm6_ctr);

static const char *const lpm6_edges[] = { "drop", "out", "icmp", "neigh", "host" };
static const uint16_t lpm6_carries[] = { 0, PF_CARRY_ROUTED, PF_CARRY_ICMP6, PF_CARRY_NEIGH6,
	PF_CARRY_HOST };
static const char *const lpm6_keys[] = { "nexthops", "routes", "routes_file", "learnt", NULL };

/* ICMPv6 (RFC 4443, RFC 4861) types and the errors handed to icmp6. */
#define ICMP6_DST_UNREACH 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_PARAM_PROBLEM 4
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ND_RS 133
#define ND_REDIRECT 137
/* Next Header values of the extension headers rx walked into md->l3_len. */
#define IP6_NH_ROUTING 43
#define IP6_NH_FRAGMENT 44

/* ---- building a table --------------------------------------------------- */

static void
fib6_free(struct lpm6_fib *fib)
{
	if (fib == NULL)
		return;
	rte_lpm6_free(fib->lpm);
	rte_free(fib);
}

/*
 * tbl8 groups rte_lpm6 needs: one per distinct first k bytes (k = 3..15)
 * among the prefixes longer than 8k bits. Routes are sorted by prefix, so
 * equal first k bytes are adjacent among those routes: one pass counts runs.
 */
static uint32_t
count_tbl8_6(const struct pf_rconf *rt)
{
	uint8_t last[16][16];
	bool have[16] = { false };
	uint32_t i, n = 0, k;

	for (i = 0; i < rt->n_routes; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(rt, i);

		for (k = 3; k < 16 && r->len > 8 * k; k++) {
			if (have[k] && memcmp(last[k], r->prefix, k) == 0)
				continue;
			memcpy(last[k], r->prefix, k);
			have[k] = true;
			n++;
		}
	}
	return n;
}

static void
prefix_mask(const uint8_t *a, uint8_t len, uint8_t *out)
{
	unsigned int i;

	for (i = 0; i < 16; i++)
		out[i] = a[i] & (uint8_t)(len >= (i + 1) * 8 ? 0xff :
					  len <= i * 8 ? 0 : 0xff << (8 - (len - i * 8)));
}

/*
 * Build a complete table for @p cfg: next hops, routes, then the ports'
 * connected prefixes and own addresses (which win over equal routes), then
 * the learnt routes where none of those has the prefix.
 */
static int
fib6_build(struct pf_stage *st, const struct pf_stage_conf *sc, struct lpm6_fib **out,
	   struct pf_errs *errs)
{
	static uint32_t seq;
	const char *stage = sc->name;
	const struct lpm6_cfg *cfg = sc->cfg;
	/* The ports of the topology being loaded (a reload may add or remove some). */
	const struct pf_stage_env *env = sc->env;
	const struct pf_rconf *nc = &cfg->rt;
	const struct pf_lrn *ln = ((const struct lpm6_priv *)st->priv)->ln;
	const struct pf_lrn_conf *lrn = pf_lrn_conf_of(ln);
	uint32_t n_lrn = ln != NULL ? env->n_ports + lrn->nexthops : 0;
	struct rte_lpm6_config lc = { 0 };
	struct lpm6_fib *fib;
	char name[RTE_LPM6_NAMESIZE];
	uint32_t i, j, n_nh, n_addr = 0;
	uint64_t t0 = rte_get_timer_cycles();
	struct timespec c0, c1;
	uint8_t pfx[16];
	int rc = 0;

	*out = NULL;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	for (i = 0; i < env->n_ports; i++)
		n_addr += env->ports[i].n_ipv6;
	n_nh = nc->n_nh + 2 * n_addr;
	/* The learnt routes' entries after "no route" (nh[n_nh]). */
	fib = rte_zmalloc_socket("pf_lpm6_fib", sizeof(*fib) + (n_nh + 1 + n_lrn) *
				 sizeof(fib->nh[0]), RTE_CACHE_LINE_SIZE, st->socket);
	if (fib == NULL)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: out of memory", stage);
	fib->n_user_nh = nc->n_nh;
	fib->miss = n_nh;
	fib->dflt = fib->miss;
	fib->n_ports = env->n_ports;
	fib->lconn_base = n_nh + 1;
	fib->learnt_base = fib->lconn_base + env->n_ports;
	fib->half_cfg[0] = fib->half_cfg[1] = UINT32_MAX;
	fib->lrn_dflt = fib->lrn_half[0] = fib->lrn_half[1] = PF_LRN_NONE;
	for (i = 0; ln != NULL && i < env->n_ports; i++) {
		fib->nh[fib->lconn_base + i].kind = LPM6_NH_CONNECTED;
		fib->nh[fib->lconn_base + i].port = (uint8_t)i;
		if (env->ports[i].has_mac)
			memcpy(fib->nh[fib->lconn_base + i].macs + 6, env->ports[i].mac, 6);
	}
	for (i = 0; i < nc->n_nh; i++) {
		const struct pf_port_conf *pc = &env->ports[nc->nh[i].port];

		if (!pc->has_mac) {
			fib6_free(fib);
			return pf_err_add(errs, NULL, 0, 0,
					  "stage %s: next hop %s: port %s has no MAC address",
					  stage, nc->nh[i].name, pc->name);
		}
		memcpy(fib->nh[i].macs + 6, pc->mac, 6);
		fib->nh[i].port = (uint8_t)nc->nh[i].port;
		if (nc->nh[i].has_gw) {
			int id = pf_neigh_gw6_id(st->edge_table[LPM6_EDGE_NEIGH], nc->nh[i].gw);

			if (id < 0) {
				fib6_free(fib);
				return pf_err_add(errs, NULL, 0, 0,
					"stage %s: more than %d IPv6 gateways in its neighbour table",
					stage, PF_NEIGH_GW6_MAX);
			}
			memcpy(fib->nh[i].macs, &id, 4);
			fib->nh[i].kind = LPM6_NH_GW;
			continue;   /* max_plen 0: lpm6_ip6 resolves it */
		}
		memcpy(fib->nh[i].macs, nc->nh[i].mac, 6);
		fib->nh[i].kind = LPM6_NH_FWD;
		fib->nh[i].max_plen = pc->max_frame > RTE_ETHER_HDR_LEN + 40 ?
				      (uint16_t)(pc->max_frame - RTE_ETHER_HDR_LEN - 40) : 0;
	}
	lc.max_rules = nc->n_routes + 2 * n_addr + 2 + lrn->routes;
	/* Each own address or connected prefix needs at most 13 more groups. */
	lc.number_tbl8s = count_tbl8_6(nc) + 26 * n_addr + 1 + lrn->tbl8;
	snprintf(name, sizeof(name), "pf_lpm6_%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	fib->lpm = rte_lpm6_create(name, st->socket, &lc);
	if (fib->lpm == NULL) {
		fib6_free(fib);
		return pf_err_add(errs, NULL, 0, 0,
				  "stage %s: cannot create an LPM6 table for %u routes, %u tbl8 groups: %s (raise EAL -m)",
				  stage, nc->n_routes, lc.number_tbl8s, rte_strerror(rte_errno));
	}
	fib->n_tbl8 = lc.number_tbl8s;
	fib->n_routes = nc->n_routes;
	/*
	 * rte_lpm6 has no depth 0: ::/0 (or "no route") goes in as its two
	 * halves, first, so that a lookup never misses and the data path
	 * takes its next hop as it is (a route of the same /1 replaces it).
	 * They write all of tbl24: about 30 ms per table.
	 */
	for (i = 0; i < nc->n_routes; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(nc, i);

		if (r->len == 0) {
			fib->dflt = r->nh;
			fib->dflt_cfg = true;
		} else if (r->len == 1) {
			fib->half_cfg[r->prefix[0] >> 7] = r->nh;
		}
	}
	memset(pfx, 0, sizeof(pfx));
	rc = rte_lpm6_add(fib->lpm, pfx, 1, fib->dflt);
	pfx[0] = 0x80;
	if (rc == 0)
		rc = rte_lpm6_add(fib->lpm, pfx, 1, fib->dflt);
	/*
	 * In address order (the order lpm6_parse sorted them in, a covering
	 * prefix before the longer ones inside it): consecutive adds touch
	 * neighbouring table entries. Without hugepages a random walk over the
	 * tables misses the TLB at every level, ten times slower for 1M routes.
	 */
	for (i = 0; i < nc->n_routes && rc == 0; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(nc, i);

		if (r->len != 0)
			rc = rte_lpm6_add(fib->lpm, r->prefix, r->len, r->nh);
	}
	/* Connected prefixes, then the addresses themselves (/128, local). */
	n_nh = nc->n_nh;
	for (i = 0; i < env->n_ports && rc == 0; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		for (j = 0; j < pc->n_ipv6 && rc == 0; j++) {
			fib->nh[n_nh].kind = LPM6_NH_CONNECTED;
			fib->nh[n_nh].port = (uint8_t)i;
			memcpy(fib->nh[n_nh].macs + 6, pc->mac, 6);
			prefix_mask(pc->ipv6[j], pc->ipv6_len[j], pfx);
			if (pc->ipv6_len[j] < 128)
				rc = rte_lpm6_add(fib->lpm, pfx, pc->ipv6_len[j], n_nh);
			n_nh++;
		}
	}
	for (i = 0; i < env->n_ports && rc == 0; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		for (j = 0; j < pc->n_ipv6 && rc == 0; j++) {
			fib->nh[n_nh].kind = LPM6_NH_LOCAL;
			fib->nh[n_nh].port = (uint8_t)i;
			rc = rte_lpm6_add(fib->lpm, pc->ipv6[j], 128, n_nh);
			n_nh++;
		}
	}
	if (rc < 0) {
		fib6_free(fib);
		return pf_err_add(errs, NULL, 0, 0, "stage %s: rte_lpm6_add: %s (%u tbl8 groups)",
				  stage, strerror(-rc), lc.number_tbl8s);
	}
	if (ln != NULL) {
		rc = lpm6_learnt_fill(ln, st, fib, errs);
		if (rc < 0) {
			fib6_free(fib);
			return rc;
		}
	}
	fib->mem_bytes = (uint64_t)lc.number_tbl8s * 256 * 4 + (1u << 24) * 4ull +
			 sizeof(*fib) + (fib->miss + 1 + n_lrn) * sizeof(fib->nh[0]);
	/* CPU time too: on a shared machine the wall clock also counts other work. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	PF_LOG(INFO, "lpm6 %s: %u routes, %u next hops, %u tbl8 groups, built in %.2f s (%.2f s CPU)",
	       stage, nc->n_routes, nc->n_nh, lc.number_tbl8s,
	       (double)(rte_get_timer_cycles() - t0) / (double)rte_get_timer_hz(),
	       (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
	*out = fib;
	return 0;
}

static void
gauges6_set(struct lpm6_priv *lp, const struct lpm6_fib *fib)
{
	__atomic_store_n(&lp->g_routes, fib->n_routes, __ATOMIC_RELAXED);
	__atomic_store_n(&lp->g_nh, fib->n_user_nh, __ATOMIC_RELAXED);
	__atomic_store_n(&lp->g_tbl8, fib->n_tbl8, __ATOMIC_RELAXED);
	__atomic_store_n(&lp->g_mem, fib->mem_bytes, __ATOMIC_RELAXED);
}

/*
 * The ports' MACs, addresses and frame limits (init, and ports added or
 * removed live: ctl.ports; PF_STAGE_PORT_TABLES rebuilds the table). An
 * added port's addresses are written before its count; a kept port's are
 * rewritten with what they hold.
 */
static void
lpm6_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct lpm6_priv *lp = st->priv;
	const struct pf_stage_env *env = st->env;
	uint16_t i, j;

	for (i = 0; i < env->n_ports; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		/* A port that goes keeps its MAC and limit while what was routed to it drains. */
		if (!pf_port_present(pc))
			continue;
		lp->max_frame[i] = pc->max_frame;
		if (!pc->has_mac)
			continue;
		memcpy(lp->port_mac[i].addr_bytes, pc->mac, 6);
		pf_ip6_linklocal(pc->mac, lp->addr[i][0]);
		for (j = 0; j < pc->n_ipv6; j++)
			memcpy(lp->addr[i][j + 1], pc->ipv6[j], 16);
		__atomic_store_n(&lp->n_addr[i], (uint8_t)(pc->n_ipv6 + 1), __ATOMIC_RELEASE);
	}
}

static int
lpm6_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct lpm6_priv *lp = st->priv;
	int rc;

	RTE_BUILD_BUG_ON(sizeof(struct lpm6_nh) != 16 || PF_MAX_PORTS > UINT8_MAX ||
			 LPM6_NH_FWD != 0 ||
			 offsetof(struct lpm6_nh, port) != offsetof(struct lpm6_nh, max_plen) + 2 ||
			 offsetof(struct lpm6_nh, kind) != offsetof(struct lpm6_nh, max_plen) + 3);
	RTE_BUILD_BUG_ON(offsetof(struct pf_meta, l3_len) != offsetof(struct pf_meta, l2_len) + 1 ||
			 offsetof(struct pf_meta, cls) != offsetof(struct pf_meta, l2_len) + 2 ||
			 offsetof(struct pf_meta, flags) != offsetof(struct pf_meta, l2_len) + 3 ||
			 RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN);
	lpm6_ports(st, 0, 0, true);
	lp->icmp = (st->edge_connected & (1u << LPM6_EDGE_ICMP)) != 0;
	lp->host = (st->edge_connected & (1u << LPM6_EDGE_HOST)) != 0;
	if (st->edge_connected & (1u << LPM6_EDGE_NEIGH))
		lp->nt = st->edge_table[LPM6_EDGE_NEIGH];
	if (((const struct lpm6_cfg *)st->conf->cfg)->learnt.routes != 0) {
		lp->ln = pf_lrn_open(st, &((const struct lpm6_cfg *)st->conf->cfg)->learnt, errs);
		if (lp->ln == NULL)
			return -ENOMEM;
	}
	rc = fib6_build(st, st->conf, &lp->fib, errs);
	if (rc < 0)
		return rc;
	gauges6_set(lp, lp->fib);
	if (lp->ln != NULL)
		lpm6_learnt_published(st, lp->ln, lp->fib);
	return 0;
}

/* ---- live update (as lpm: build beside, swap, wait for readers, free) ---- */

static int
lpm6_swap_build(struct pf_stage *st, const struct pf_stage_conf *sc, void **out,
		struct pf_errs *errs)
{
	return fib6_build(st, sc, (struct lpm6_fib **)out, errs);
}

static void
lpm6_swap_free(void *fib)
{
	fib6_free(fib);
}

static void
lpm6_swap_published(struct pf_stage *st, const struct pf_stage_conf *sc, const void *fib)
{
	struct lpm6_priv *lp = st->priv;

	__atomic_store_n(&lp->updates, lp->updates + 1, __ATOMIC_RELAXED);
	gauges6_set(lp, fib);
	if (lp->ln != NULL)
		lpm6_learnt_published(st, lp->ln, (struct lpm6_fib *)(uintptr_t)fib);
}

static const struct pf_stage_swap lpm6_swap = {
	.table_off = offsetof(struct lpm6_priv, fib),
	.build = lpm6_swap_build,
	.free = lpm6_swap_free,
	.published = lpm6_swap_published,
};

static void
lpm6_free(struct pf_stage *st)
{
	struct lpm6_priv *lp = st->priv;

	if (lp == NULL)
		return;
	/* No reader runs any more. */
	fib6_free(lp->fib);
	lp->fib = NULL;
	pf_lrn_free(lp->ln);
	lp->ln = NULL;
}

static void
lpm6_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct lpm6_priv *lp = st->priv;
	const struct { const char *name; uint64_t v; } g[] = {
		{ "routes", __atomic_load_n(&lp->g_routes, __ATOMIC_RELAXED) },
		{ "nexthops", __atomic_load_n(&lp->g_nh, __ATOMIC_RELAXED) },
		{ "tbl8_groups", __atomic_load_n(&lp->g_tbl8, __ATOMIC_RELAXED) },
		{ "memory_bytes", __atomic_load_n(&lp->g_mem, __ATOMIC_RELAXED) },
		{ "route_updates", __atomic_load_n(&lp->updates, __ATOMIC_RELAXED) },
	};
	uint16_t i;

	for (i = 0; i < RTE_DIM(g); i++)
		pf_sink_u64(out, g[i].name, g[i].v);
	if (lp->ln == NULL)
		return;
	pf_lrn_gauges(lp->ln, out);
	pf_sink_u64(out, "learnt_tbl8_waits", __atomic_load_n(&lp->g_waits, __ATOMIC_RELAXED));
}

static int
lpm6_learn(struct pf_stage *st, const struct pf_route_op *ops, unsigned int n,
	   struct pf_route_result *res)
{
	return lpm6_learnt_apply(st, ops, n, res);
}

/* ---- data path: answers for the router's own addresses ------------------ */

/* A priority tag (VID 0) is not carried in an answer or to another link. */
static __rte_always_inline uint8_t *
lpm6_untag(struct rte_mbuf *m, struct pf_meta *md)
{
	if (md->l2_len != RTE_ETHER_HDR_LEN) {
		rte_pktmbuf_adj(m, md->l2_len - RTE_ETHER_HDR_LEN);
		md->l2_len = RTE_ETHER_HDR_LEN;
	}
	return rte_pktmbuf_mtod(m, uint8_t *);
}

/* As lpm: errors go to the icmp edge when it is wired, else they are drops. */
static uint16_t
lpm6_icmp(const struct lpm6_priv *lp, uint64_t *ctrs, struct pf_meta *md, uint32_t drop,
	  uint32_t to_icmp, uint32_t err)
{
	if (!lp->icmp) {
		ctrs[drop]++;
		return LPM6_EDGE_DROP;
	}
	ctrs[to_icmp]++;
	md->nexthop = err;
	md->out_port = md->in_port;
	return LPM6_EDGE_ICMP;
}

/* Is @p a one of port @p p's addresses (link-local or `ipv6:`)? */
static bool
lpm6_port_addr(const struct lpm6_priv *lp, uint16_t p, const uint8_t *a)
{
	return pf_ip6_in_list((const uint8_t (*)[16])lp->addr[p], lp->n_addr[p], a);
}

/*
 * A Neighbour Solicitation or Advertisement to the router, its ICMPv6
 * checksum checked: validated (RFC 4861 7.1.1, 7.1.2), then with the neigh
 * edge wired handed to the neigh stage, which learns from it (7.2.3, 7.2.5)
 * and answers an NS; without it an NS for one of the ingress port's
 * addresses is answered here, in place (7.2.4), and an NA is ignored. The
 * source is never :: here (dropped before): DAD probes get no answer.
 */
static uint16_t
lpm6_nd(const struct lpm6_priv *lp, uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md,
	struct rte_ipv6_hdr *ip, uint8_t *l4, uint32_t l4len)
{
	struct nd6_msg msg;
	uint8_t to[6];

	if (l4[0] == ND6_NA && lp->nt == NULL) {
		ctrs[LPM6_CTR_ND_IGNORED]++;
		return LPM6_EDGE_DROP;
	}
	if (nd6_parse(ip, md->l3_len, l4, l4len, &msg) < 0) {
		ctrs[LPM6_CTR_ND_INVALID]++;
		return LPM6_EDGE_DROP;
	}
	if (msg.type == ND6_NS && !lpm6_port_addr(lp, md->in_port, msg.target)) {
		ctrs[LPM6_CTR_ND_NOT_FOR_US]++;
		return LPM6_EDGE_DROP;
	}
	if (lp->nt != NULL) {
		md->nexthop = PF_NEIGH_ND6_MSG;
		md->out_port = md->in_port;
		ctrs[LPM6_CTR_ND_TO_NEIGH]++;
		return LPM6_EDGE_NEIGH;
	}
	memcpy(to, msg.has_lla ? msg.lla : rte_pktmbuf_mtod(m, uint8_t *) + 6, 6);
	if (nd6_na_reply(m, md, lp->port_mac[md->in_port].addr_bytes, msg.target, to) < 0) {
		ctrs[LPM6_CTR_ND_NO_ROOM]++;
		return LPM6_EDGE_DROP;
	}
	ctrs[LPM6_CTR_NA_SENT]++;
	return LPM6_EDGE_OUT;
}

/* lpm6_routing's answers: a pointer to report, or only skipped Routing headers. */
#define LPM6_RH_PTR 0x10000u
#define LPM6_RH_ONLY 0x20000u

/*
 * The extension headers rx walked (@p l3_len bytes from @p ip) of a packet
 * to the router, where a Routing header is processed (RFC 8200 4.4). None
 * is implemented (Type 0 is deprecated, RFC 5095), so one with Segments
 * Left 0 is skipped and one with Segments Left > 0 is answered with a
 * Parameter Problem (code 0) at its Routing Type: LPM6_RH_PTR | that
 * offset. Else LPM6_RH_ONLY when every header was a skipped Routing
 * header, 0 when there were others.
 */
static uint32_t
lpm6_routing(const struct rte_ipv6_hdr *ip, uint32_t l3_len)
{
	const uint8_t *h = (const uint8_t *)ip;
	uint32_t off = 40, only = LPM6_RH_ONLY, hl;
	uint8_t nh = ip->proto;

	while (off + 8 <= l3_len) {
		if (nh == IP6_NH_ROUTING && h[off + 3] != 0)
			return LPM6_RH_PTR | (off + 2);
		if (nh != IP6_NH_ROUTING)
			only = 0;
		hl = nh == IP6_NH_FRAGMENT ? 8u : (h[off + 1] + 1u) * 8u;
		nh = h[off];
		off += hl;
	}
	return only;
}

/*
 * To the router itself: ICMPv6 echo requests are answered in place (from
 * the address they were sent to), Neighbour Solicitations by lpm6_ns; other
 * ND messages and anything else are dropped under their names.
 */
static uint16_t __rte_noinline
lpm6_local(const struct lpm6_priv *lp, uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md,
	   struct rte_ipv6_hdr *ip)
{
	uint8_t *l4 = (uint8_t *)ip + md->l3_len, *eth, a[16], to[6];
	uint32_t l4len = rte_be_to_cpu_16(ip->payload_len) + 40u - md->l3_len;
	uint16_t p = md->in_port, ck;
	uint32_t ext;

	ctrs[LPM6_CTR_LOCAL]++;
	/* Our packet: its Routing headers are ours to process (RFC 8200 4.4). */
	if (md->l3_len != 40) {
		ext = lpm6_routing(ip, md->l3_len);
		if (ext & LPM6_RH_PTR)
			return lpm6_icmp(lp, ctrs, md, LPM6_CTR_ROUTING_HDR,
					 LPM6_CTR_ROUTING_HDR_ICMP,
					 PF_META_ICMP(ICMP6_PARAM_PROBLEM, 0, ext & ~LPM6_RH_PTR));
	} else {
		ext = 0;
	}
	/* With host interfaces the kernel takes what pipefwd does not answer:
	 * all but echo requests and Neighbour Discovery (fragments: it reassembles). */
	if (lp->host && (md->l4_proto != IPPROTO_ICMPV6 || (md->flags & PF_META_IP_FRAG) ||
			 l4len < 4 || (l4[0] != ICMP6_ECHO_REQUEST &&
				       (l4[0] < ND_RS || l4[0] > ND_REDIRECT)))) {
		ctrs[LPM6_CTR_TO_HOST]++;
		return LPM6_EDGE_HOST;
	}
	if (md->l4_proto != IPPROTO_ICMPV6 || (md->flags & PF_META_IP_FRAG) || l4len < 4) {
		ctrs[LPM6_CTR_LOCAL_UNSUPPORTED]++;
		return LPM6_EDGE_DROP;
	}
	if (pf_icmp6_sum(ip->src_addr, l4, l4len) != 0xffff) {
		ctrs[LPM6_CTR_ICMP_BAD_CKSUM]++;
		return LPM6_EDGE_DROP;
	}
	if (l4[0] == ND6_NS || l4[0] == ND6_NA)
		return lpm6_nd(lp, ctrs, m, md, ip, l4, l4len);
	if (l4[0] >= ND_RS && l4[0] <= ND_REDIRECT) {
		ctrs[LPM6_CTR_ND_IGNORED]++;
		return LPM6_EDGE_DROP;
	}
	/*
	 * Multicast echo (ff02::1) is not answered; only unicast to our
	 * addresses, with no extension header but skipped Routing headers.
	 */
	if (l4[0] != ICMP6_ECHO_REQUEST || l4[1] != 0 || l4len < 8 ||
	    (md->l3_len != 40 && ext != LPM6_RH_ONLY) || pf_ip6_is_mcast(ip->dst_addr)) {
		ctrs[LPM6_CTR_LOCAL_UNSUPPORTED]++;
		return LPM6_EDGE_DROP;
	}
	/* The sender's MAC first: untagging moves the frame's start. */
	memcpy(to, rte_pktmbuf_mtod(m, uint8_t *) + 6, 6);
	eth = lpm6_untag(m, md);
	if (md->l3_len != 40) {
		/* The reply is a new packet: the Routing headers stay behind. */
		ext = md->l3_len - 40u;
		memmove(eth + ext, eth, RTE_ETHER_HDR_LEN + 40);
		eth = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)ext);
		ip = (struct rte_ipv6_hdr *)(eth + RTE_ETHER_HDR_LEN);
		ip->proto = IPPROTO_ICMPV6;
		ip->payload_len = rte_cpu_to_be_16((uint16_t)l4len);
		md->l3_len = 40;
	}
	ip = (struct rte_ipv6_hdr *)(eth + RTE_ETHER_HDR_LEN);
	l4 = (uint8_t *)(ip + 1);
	memcpy(eth, to, 6);
	memcpy(eth + 6, lp->port_mac[p].addr_bytes, 6);
	memcpy(a, ip->src_addr, 16);
	memcpy(ip->src_addr, ip->dst_addr, 16);
	memcpy(ip->dst_addr, a, 16);
	ip->hop_limits = 64;
	/* The pseudo-header sum is the same with the addresses swapped; only the type changed. */
	memcpy(&ck, l4 + 2, 2);
	ck = lpm_cksum_adjust(ck, rte_cpu_to_be_16(ICMP6_ECHO_REQUEST << 8),
			      rte_cpu_to_be_16(ICMP6_ECHO_REPLY << 8));
	memcpy(l4 + 2, &ck, 2);
	l4[0] = ICMP6_ECHO_REPLY;
	md->out_port = p;
	md->flags &= (uint8_t)~(PF_META_L2_BCAST | PF_META_L2_MCAST);
	ctrs[LPM6_CTR_ECHO_REPLY]++;
	return LPM6_EDGE_OUT;
}

/* ---- data path: forwarding ---------------------------------------------- */

/*
 * A next hop by address, or a host on a connected prefix: the MAC comes
 * from the neighbour table (lock-free read). Unresolved, the packet goes
 * to the neigh edge untagged, hop limit untouched (neigh decrements it when
 * it sends), md->out_port set and md->nexthop naming the neighbour
 * (PF_NEIGH_ND6_DST or gateway id + 1).
 */
static uint16_t
lpm6_neigh(const struct lpm6_priv *lp, uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md,
	   const struct lpm6_nh *nh, uint32_t hop)
{
	uint8_t *eth = lpm6_untag(m, md);
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + RTE_ETHER_HDR_LEN);
	const uint8_t *addr = ip->dst_addr;
	struct pf_neigh_key k;
	uint32_t id = 0;

	if (nh->kind == LPM6_NH_GW) {
		memcpy(&id, nh->macs, 4);
		addr = pf_neigh_gw6(lp->nt, id);
		id++;
	}
	md->out_port = nh->port;
	if (addr != NULL) {
		pf_neigh_key_ip6(&k, nh->port, addr);
		if (pf_neigh_resolve(lp->nt, &k, eth)) {
			ip->hop_limits--;
			memcpy(eth + 6, nh->macs + 6, 6);
			md->nexthop = hop;
			return LPM6_EDGE_OUT;
		}
	}
	md->nexthop = id;
	ctrs[LPM6_CTR_TO_NEIGH]++;
	return LPM6_EDGE_NEIGH;
}

/*
 * A learnt blackhole, unreachable or prohibit route: ICMPv6 1/0 and 1/1
 * through the icmp edge for the last two, as Linux answers its routes.
 */
static uint16_t __rte_noinline
lpm6_route_drop(const struct lpm6_priv *lp, uint64_t *ctrs, struct pf_meta *md,
		const struct lpm6_nh *nh)
{
	if (nh->kind == LPM6_NH_BLACKHOLE) {
		ctrs[LPM6_CTR_BLACKHOLE]++;
		return LPM6_EDGE_DROP;
	}
	return lpm6_icmp(lp, ctrs, md, LPM6_CTR_UNREACH_ROUTE, LPM6_CTR_UNREACH_ROUTE_ICMP,
			 PF_META_ICMP(ICMP6_DST_UNREACH, nh->kind == LPM6_NH_UNREACH ? 0 : 1, 0));
}

/*
 * Next-hop entry @p hop in one 16-byte load: a learnt entry may be
 * rewritten meanwhile (one 16-byte store, lpm6_learnt.c), and a decision
 * must see all of one version.
 */
static __rte_always_inline void
lpm6_nh_read(const struct lpm6_fib *fib, uint32_t hop, struct lpm6_nh *e)
{
	_mm_storeu_si128((__m128i *)e, _mm_load_si128((const __m128i *)&fib->nh[hop]));
}

/* Sources never accepted (RFC 4291 2.5.2, 2.5.3, 2.5.5.2, 2.7): the counter, or 0. */
static uint32_t
lpm6_bad_src(const uint8_t *src)
{
	int z;

	if (pf_ip6_is_mcast(src))
		return LPM6_CTR_SRC_MCAST;
	z = pf_ip6_zero_or_loopback(src);
	if (z == 0)
		return LPM6_CTR_SRC_UNSPEC;
	if (z == 1)
		return LPM6_CTR_SRC_LOOPBACK;
	if (pf_ip6_is_v4mapped(src))
		return LPM6_CTR_SRC_V4MAPPED;
	return 0;
}

/*
 * The decision for one packet, every rule in the documented order: the
 * reference, and where the fast path sends whatever it does not forward
 * itself. @p hop is the lookup of the 16 bytes where an untagged frame holds
 * its destination (a tagged frame's is looked up here).
 */
static uint16_t __rte_noinline
lpm6_ip6(const struct lpm6_priv *lp, const struct lpm6_fib *fib, uint64_t *ctrs,
	 struct rte_mbuf *m, uint32_t hop)
{
	struct pf_meta *md = pf_meta(m);
	uint8_t *eth = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + md->l2_len);
	const struct lpm6_nh *nh;
	struct lpm6_nh e;
	uint32_t c;

	if (md->cls != PF_CLASS_IPV6) {
		ctrs[LPM6_CTR_L3_PROTO]++;
		return LPM6_EDGE_DROP;
	}
	if (unlikely(md->flags & PF_META_VLAN)) {
		ctrs[LPM6_CTR_VLAN_UNKNOWN]++;
		return LPM6_EDGE_DROP;
	}
	if (unlikely(!(md->flags & (PF_META_L2_MCAST | PF_META_L2_LOCAL)))) {
		ctrs[LPM6_CTR_L3_MAC_MISMATCH]++;
		return LPM6_EDGE_DROP;
	}
	c = lpm6_bad_src(ip->src_addr);
	if (c != 0) {
		ctrs[c]++;
		return LPM6_EDGE_DROP;
	}
	if (pf_ip6_is_mcast(ip->dst_addr)) {
		/*
		 * Link-scope multicast carries the NSs for our addresses (to
		 * their solicited-node addresses) and unsolicited NAs (ff02::1).
		 */
		if (ip->dst_addr[1] == 0x02 && md->l4_proto == IPPROTO_ICMPV6 &&
		    md->l3_len == 40 && rte_be_to_cpu_16(ip->payload_len) >= 24 &&
		    (((uint8_t *)(ip + 1))[0] == ND6_NS ||
		     (((uint8_t *)(ip + 1))[0] == ND6_NA && lp->nt != NULL)))
			return lpm6_local(lp, ctrs, m, md, ip);
		/* Link-scope multicast for the kernel (OSPFv3, RIPng, MLD): host interfaces. */
		if (lp->host && (ip->dst_addr[1] & 0x0f) == 0x02) {
			ctrs[LPM6_CTR_TO_HOST]++;
			return LPM6_EDGE_HOST;
		}
		ctrs[LPM6_CTR_MCAST_DST]++;
		return LPM6_EDGE_DROP;
	}
	if (pf_ip6_is_linklocal(ip->dst_addr)) {
		if (md->in_port < PF_MAX_PORTS && lp->n_addr[md->in_port] != 0 &&
		    memcmp(ip->dst_addr, lp->addr[md->in_port][0], 16) == 0)
			return lpm6_local(lp, ctrs, m, md, ip);
		ctrs[LPM6_CTR_LL_DST]++;
		return LPM6_EDGE_DROP;
	}
	if (pf_ip6_zero_or_loopback(ip->dst_addr) >= 0 || pf_ip6_is_v4mapped(ip->dst_addr)) {
		ctrs[LPM6_CTR_DST_MARTIAN]++;
		return LPM6_EDGE_DROP;
	}
	if (md->l2_len != RTE_ETHER_HDR_LEN && rte_lpm6_lookup(fib->lpm, ip->dst_addr, &hop) != 0)
		hop = fib->miss;
	if (hop == fib->miss)
		return lpm6_icmp(lp, ctrs, md, LPM6_CTR_NO_ROUTE, LPM6_CTR_NO_ROUTE_ICMP,
				 PF_META_ICMP(ICMP6_DST_UNREACH, 0, 0));
	lpm6_nh_read(fib, hop, &e);
	nh = &e;
	if (nh->kind == LPM6_NH_LOCAL)
		return lpm6_local(lp, ctrs, m, md, ip);
	/* Learnt routes: an ECMP group picks its member per flow; drop kinds end here. */
	if (unlikely(nh->kind >= LPM6_NH_GROUP)) {
		if (nh->kind != LPM6_NH_GROUP)
			return lpm6_route_drop(lp, ctrs, md, nh);
		memcpy(&c, nh->macs, 4);
		hop = fib->learnt_base + pf_lrn_member(&fib->groups[c], m);
		lpm6_nh_read(fib, hop, &e);
	}
	if (nh->kind == LPM6_NH_CONNECTED && lp->nt == NULL) {
		ctrs[LPM6_CTR_NEIGH]++;
		return LPM6_EDGE_DROP;
	}
	/* RFC 4291 2.5.6: a link-local source never leaves its link. */
	if (pf_ip6_is_linklocal(ip->src_addr))
		return lpm6_icmp(lp, ctrs, md, LPM6_CTR_LL_SRC, LPM6_CTR_LL_SRC_ICMP,
				 PF_META_ICMP(ICMP6_DST_UNREACH, 2, 0));
	if (md->flags & PF_META_L2_MCAST) {
		ctrs[LPM6_CTR_L2MCAST_UNICAST]++;
		return LPM6_EDGE_DROP;
	}
	if (ip->hop_limits <= 1)
		return lpm6_icmp(lp, ctrs, md, LPM6_CTR_HLIM, LPM6_CTR_HLIM_ICMP,
				 PF_META_ICMP(ICMP6_TIME_EXCEEDED, 0, 0));
	if (rte_be_to_cpu_16(ip->payload_len) + 40u + RTE_ETHER_HDR_LEN > lp->max_frame[nh->port])
		return lpm6_icmp(lp, ctrs, md, LPM6_CTR_TOO_BIG, LPM6_CTR_TOO_BIG_ICMP,
				 PF_META_ICMP(ICMP6_PACKET_TOO_BIG, 0,
					      lp->max_frame[nh->port] - RTE_ETHER_HDR_LEN));
	if (nh->kind != LPM6_NH_FWD)
		return lpm6_neigh(lp, ctrs, m, md, nh, hop);
	ip->hop_limits--;
	eth = lpm6_untag(m, md);
	memcpy(eth, nh->macs, sizeof(nh->macs));
	md->out_port = nh->port;
	md->nexthop = hop;
	return LPM6_EDGE_OUT;
}

/* pf_meta.flags bits that leave the fast path; PF_META_L2_LOCAL must be set (fragments may stay). */
#define LPM6_FAST_FLAGS (PF_META_VLAN | PF_META_L2_MCAST | PF_META_L2_LOCAL)
/* l2_len, l3_len, cls, flags as one little-endian word (layout checked in lpm6_init). */
#define LPM6_META_MASK (0xffu | 0xffu << 16 | (uint32_t)LPM6_FAST_FLAGS << 24)
#define LPM6_META_FAST (RTE_ETHER_HDR_LEN | PF_CLASS_IPV6 << 16 |		\
			(uint32_t)PF_META_L2_LOCAL << 24)

/*
 * First bytes of addresses the fast path leaves to lpm6_ip6: 00 (::, ::1,
 * IPv4-mapped and the rest of ::/8), fe (link-local and site-local), ff
 * (multicast). lpm6_ip6 tells them apart exactly.
 */
static const uint8_t lpm6_special[256] = { [0x00] = 1, [0xfe] = 1, [0xff] = 1 };

/*
 * The common case: untagged IPv6 to the ingress port's MAC, ordinary source
 * and destination, a route to a next hop (max_plen is 0 for local,
 * connected and "no route"), hop limit > 1, a payload of 1 byte up to what
 * the egress port takes.
 */
static __rte_always_inline bool
lpm6_plain(const struct lpm6_fib *fib, const struct pf_meta *md, const uint8_t *eth,
	   uint32_t hop)
{
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eth + RTE_ETHER_HDR_LEN);
	uint32_t w;

	memcpy(&w, &md->l2_len, sizeof(w));
	return (w & LPM6_META_MASK) == LPM6_META_FAST &&
	       (lpm6_special[ip->src_addr[0]] | lpm6_special[ip->dst_addr[0]]) == 0 &&
	       ip->hop_limits > 1 &&
	       /* 1..max_plen: payload length 0 (no upper layer, or a jumbogram)
	        * must not pass for the max_plen-0 entries (local, connected,
	        * "no route"); lpm6_ip6 takes it. */
	       (uint32_t)rte_be_to_cpu_16(ip->payload_len) - 1u < fib->nh[hop].max_plen;
}

/* Forward a packet lpm6_plain accepted; returns its egress port. */
static __rte_always_inline uint32_t
lpm6_fwd(const struct lpm6_fib *fib, struct pf_meta *md, uint8_t *eth, uint32_t hop)
{
	const struct lpm6_nh *nh = &fib->nh[hop];
	uint32_t w;

	/* The 12 MAC bytes and the frame's next four (EtherType, version,
	 * traffic class) in one 16-byte store. */
	memcpy(&w, eth + 12, sizeof(w));
	_mm_storeu_si128((__m128i *)eth,
			 _mm_insert_epi32(_mm_loadu_si128((const __m128i *)nh), (int)w, 3));
	eth[RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, hop_limits)]--;
	md->out_port = nh->port;
	md->nexthop = hop;
	return nh->port;
}

/*
 * One packet: the fast path, else lpm6_ip6. @p p_or and @p p_and gather
 * the egress ports of the fast path; @p slow is set when a packet leaves it.
 */
static __rte_always_inline uint16_t
lpm6_decide(const struct lpm6_priv *lp, const struct lpm6_fib *fib, uint64_t *ctrs,
	    struct rte_mbuf *m, struct pf_meta *md, uint8_t *eth, uint32_t hop, uint32_t *p_or,
	    uint32_t *p_and, bool *slow)
{
	uint32_t port;

	if (likely(lpm6_plain(fib, md, eth, hop))) {
		port = lpm6_fwd(fib, md, eth, hop);
		*p_or |= port;
		*p_and &= port;
		return LPM6_EDGE_OUT;
	}
	*slow = true;
	return lpm6_ip6(lp, fib, ctrs, m, hop);
}

static __rte_always_inline uint32_t
lpm6_ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Where an untagged IPv6 frame holds its source and destination addresses. */
#define LPM6_SRC_OFF (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, src_addr))
#define LPM6_DST_OFF (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, dst_addr))
/* Where an untagged IPv6 frame holds its payload length, next header and hop limit. */
#define LPM6_PLEN_OFF (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, payload_len))
/* Addresses per rte_lpm6_lookup_bulk_func call: a burst goes in chunks of this many. */
#define LPM6_CHUNK 64

/*
 * Four looked-up packets: lpm6_plain for the four folded into accumulators
 * without a branch per packet (reading the fields of a frame that is not
 * untagged IPv6 is harmless: the metadata test fails it; every @p hop is a
 * next hop, the table never misses). All four plain: forward them, fold
 * their next hops' words (egress port in bits 16-23) into @p v_or and
 * @p v_and and return true; else return false.
 */
/* Lane k of lpm6_x4_group's forwarding (a macro: the lane is an immediate even at -O0). */
#define LPM6_FWD_LANE(k) do {									\
		_mm_storeu_si128((__m128i *)eth[k],						\
				 _mm_insert_epi32(mac[k], (int)lpm6_ld32(eth[k] + 12), 3));	\
		eth[k][RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, hop_limits)]--;	\
		md[k]->out_port = (uint16_t)_mm_extract_epi16(nw, 2 * (k) + 1);		\
		md[k]->nexthop = (uint32_t)_mm_extract_epi32(hv, k);				\
	} while (0)

static __rte_always_inline bool
lpm6_x4_group(const struct lpm6_fib *fib, struct pf_meta *const *md, uint8_t *const *eth,
	      const int32_t *hop, __m128i *v_or, __m128i *v_and)
{
	/* Each lane's payload length (its first two bytes) in host order. */
	const __m128i plen_be = _mm_set_epi8(-1, -1, 12, 13, -1, -1, 8, 9, -1, -1, 4, 5, -1, -1, 0, 1);
	__m128i lw, ta, tb, nw, fail, sa, da, mw, hv, ho, mac[4];
	const uint8_t *nh[4];
	uint16_t k;

	/* The four metadata words (l2_len, l3_len, cls, flags). */
	mw = _mm_cvtsi32_si128((int)lpm6_ld32(&md[0]->l2_len));
	mw = _mm_insert_epi32(mw, (int)lpm6_ld32(&md[1]->l2_len), 1);
	mw = _mm_insert_epi32(mw, (int)lpm6_ld32(&md[2]->l2_len), 2);
	mw = _mm_insert_epi32(mw, (int)lpm6_ld32(&md[3]->l2_len), 3);
	mw = _mm_cmpeq_epi32(_mm_and_si128(mw, _mm_set1_epi32((int)LPM6_META_MASK)),
			     _mm_set1_epi32((int)LPM6_META_FAST));
	/* lpm6_special for the eight addresses: source and destination first
	 * bytes as bytes 0 and 2 of the lanes (the destination's word read
	 * from two bytes before it); 0x00, 0xfe and 0xff are exactly the
	 * bytes b with b + 2 (mod 256) <= 2 unsigned. */
	sa = _mm_cvtsi32_si128((int)lpm6_ld32(eth[0] + LPM6_SRC_OFF));
	sa = _mm_insert_epi32(sa, (int)lpm6_ld32(eth[1] + LPM6_SRC_OFF), 1);
	sa = _mm_insert_epi32(sa, (int)lpm6_ld32(eth[2] + LPM6_SRC_OFF), 2);
	sa = _mm_insert_epi32(sa, (int)lpm6_ld32(eth[3] + LPM6_SRC_OFF), 3);
	da = _mm_cvtsi32_si128((int)lpm6_ld32(eth[0] + LPM6_DST_OFF - 2));
	da = _mm_insert_epi32(da, (int)lpm6_ld32(eth[1] + LPM6_DST_OFF - 2), 1);
	da = _mm_insert_epi32(da, (int)lpm6_ld32(eth[2] + LPM6_DST_OFF - 2), 2);
	da = _mm_insert_epi32(da, (int)lpm6_ld32(eth[3] + LPM6_DST_OFF - 2), 3);
	sa = _mm_add_epi8(_mm_blend_epi16(sa, da, 0xaa), _mm_set1_epi8(2));
	sa = _mm_and_si128(_mm_cmpeq_epi8(_mm_min_epu8(sa, _mm_set1_epi8(2)), sa),
			   _mm_set1_epi32(0x00ff00ff));
	/* As lpm6_plain, in 32-bit lanes of IPv6 bytes 4-7 (payload length,
	 * next header, hop limit): hop limit > 1, payload length 1..max_plen;
	 * both as one unsigned 16-bit test tb <= ta, which fails the packet:
	 * low halves ta = payload length - 1 (0 wraps to 0xffff), tb = max_plen;
	 * high halves ta = 0x1ff, tb = next header | hop limit << 8. */
	lw = _mm_cvtsi32_si128((int)lpm6_ld32(eth[0] + LPM6_PLEN_OFF));
	lw = _mm_insert_epi32(lw, (int)lpm6_ld32(eth[1] + LPM6_PLEN_OFF), 1);
	lw = _mm_insert_epi32(lw, (int)lpm6_ld32(eth[2] + LPM6_PLEN_OFF), 2);
	lw = _mm_insert_epi32(lw, (int)lpm6_ld32(eth[3] + LPM6_PLEN_OFF), 3);
	ta = _mm_add_epi16(_mm_shuffle_epi8(lw, plen_be), _mm_set1_epi32(0x01ffffff));
	/* The next hops' entries, by byte offset (one pextrd each): their
	 * last four bytes (max_plen, port, kind: one little-endian word, see
	 * lpm6_init), one pinsrd each, and their MACs too, now (xmm registers
	 * are plenty, GPRs are not). */
	hv = _mm_loadu_si128((const __m128i *)hop);
	ho = _mm_slli_epi32(hv, 4);
	nh[0] = (const uint8_t *)fib->nh + (uint32_t)_mm_cvtsi128_si32(ho);
	nh[1] = (const uint8_t *)fib->nh + (uint32_t)_mm_extract_epi32(ho, 1);
	nh[2] = (const uint8_t *)fib->nh + (uint32_t)_mm_extract_epi32(ho, 2);
	nh[3] = (const uint8_t *)fib->nh + (uint32_t)_mm_extract_epi32(ho, 3);
	nw = _mm_cvtsi32_si128((int)lpm6_ld32(nh[0] + offsetof(struct lpm6_nh, max_plen)));
	nw = _mm_insert_epi32(nw, (int)lpm6_ld32(nh[1] + offsetof(struct lpm6_nh, max_plen)), 1);
	nw = _mm_insert_epi32(nw, (int)lpm6_ld32(nh[2] + offsetof(struct lpm6_nh, max_plen)), 2);
	nw = _mm_insert_epi32(nw, (int)lpm6_ld32(nh[3] + offsetof(struct lpm6_nh, max_plen)), 3);
#pragma GCC unroll 4
	for (k = 0; k < 4; k++)
		mac[k] = _mm_loadu_si128((const __m128i *)nh[k]);
	tb = _mm_blend_epi16(nw, lw, 0xaa);
	fail = _mm_cmpeq_epi16(_mm_min_epu16(ta, tb), tb);
	/* One test for all: metadata words as wanted, no special byte, no failure. */
	if (unlikely(!_mm_test_all_ones(_mm_andnot_si128(_mm_or_si128(sa, fail), mw))))
		return false;
	/* The egress ports for the burst-port hint, in the lanes' bits 16-23. */
	*v_or = _mm_or_si128(*v_or, nw);
	*v_and = _mm_and_si128(*v_and, nw);
	/* As lpm6_fwd. Every load before the first store (no reloads); the
	 * lanes' bits 16-31 are the port, the kind byte being LPM6_NH_FWD, 0. */
	LPM6_FWD_LANE(0);
	LPM6_FWD_LANE(1);
	LPM6_FWD_LANE(2);
	LPM6_FWD_LANE(3);
	return true;
}

/*
 * @p n looked-up packets one by one (lpm6_decide): a group that failed the
 * group test, or the 0-3 left over. Out of line, so that the group loop
 * keeps nothing alive for it. Returns how many did not take the out edge.
 */
static unsigned int __rte_noinline
lpm6_each(const struct lpm6_priv *lp, const struct lpm6_fib *fib, uint64_t *ctrs,
	  struct rte_mbuf **pkts, uint8_t *const *eth, const int32_t *hop, uint16_t *edge,
	  unsigned int n, uint32_t *p_or, uint32_t *p_and, bool *slow)
{
	const int off = pf_meta_off();
	unsigned int i, nbad = 0;

	for (i = 0; i < n; i++) {
		edge[i] = lpm6_decide(lp, fib, ctrs, pkts[i], pf_meta_at(pkts[i], off), eth[i],
				      (uint32_t)hop[i], p_or, p_and, slow);
		nbad += edge[i] != LPM6_EDGE_OUT;
	}
	return nbad;
}

/*
 * One burst, after l3fwd's gather / one bulk call / scatter, in chunks of
 * LPM6_CHUNK: the destinations gathered (as untagged frames hold them; the
 * loads touch every frame's first line back to back, all the prefetch the
 * later passes need), one rte_lpm6_lookup_bulk_func for the chunk, then
 * four packets at a time through lpm6_x4_group; a group that fails the
 * group test goes packet by packet (lpm6_decide), the 0-3 left over too.
 * The burst-port hint when all went out on one port, on the fast path.
 */
static uint16_t
lpm6_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const uint64_t out4 = LPM6_EDGE_OUT * 0x0001000100010001ull;
	const struct lpm6_priv *lp = st->priv;
	const struct lpm6_fib *fib = __atomic_load_n(&lp->fib, __ATOMIC_ACQUIRE);
	uint8_t dst[LPM6_CHUNK][RTE_LPM6_IPV6_ADDR_SIZE] __rte_aligned(16);
	__m128i v_or = _mm_setzero_si128(), v_and = _mm_set1_epi32(-1);
	uint32_t p_or = 0, p_and = UINT32_MAX;
	uint8_t *eth[LPM6_CHUNK];
	int32_t hop[LPM6_CHUNK];
	struct pf_meta *md[4];
	const int off = pf_meta_off();
	unsigned int b, c, i, k, nbad = 0;   /* not uint16_t: GCC then keeps them in memory */
	bool slow = false;

	if (n == 0)
		return PF_EDGE_MIXED;
	for (b = 0; b < n; b += c, pkts += c, edge += c) {
		c = RTE_MIN(n - b, (unsigned int)LPM6_CHUNK);
#pragma GCC unroll 4
		for (i = 0; i < c; i++) {
			eth[i] = rte_pktmbuf_mtod(pkts[i], uint8_t *);
			_mm_store_si128((__m128i *)dst[i],
					_mm_loadu_si128((const __m128i *)(eth[i] + LPM6_DST_OFF)));
		}
		rte_lpm6_lookup_bulk_func(fib->lpm, dst, hop, c);
		for (i = 0; i + 4 <= c; i += 4) {
			for (k = 0; k < 4; k++)
				md[k] = pf_meta_at(pkts[i + k], off);
			if (likely(lpm6_x4_group(fib, md, &eth[i], &hop[i], &v_or, &v_and))) {
				memcpy(&edge[i], &out4, sizeof(out4));
				continue;
			}
			slow = true;
			nbad += lpm6_each(lp, fib, st->ctrs, &pkts[i], &eth[i], &hop[i], &edge[i],
					  4, &p_or, &p_and, &slow);
		}
		if (i < c)
			nbad += lpm6_each(lp, fib, st->ctrs, &pkts[i], &eth[i], &hop[i], &edge[i],
					  c - i, &p_or, &p_and, &slow);
	}
	if (likely(nbad == 0)) {
		if (likely(!slow)) {
			/* The groups' ports (lanes that took none keep 0 and ~0). */
			v_or = _mm_or_si128(v_or, _mm_shuffle_epi32(v_or, 0x4e));
			v_or = _mm_or_si128(v_or, _mm_shuffle_epi32(v_or, 0xb1));
			v_and = _mm_and_si128(v_and, _mm_shuffle_epi32(v_and, 0x4e));
			v_and = _mm_and_si128(v_and, _mm_shuffle_epi32(v_and, 0xb1));
			p_or |= (uint32_t)_mm_cvtsi128_si32(v_or) >> 16 & 0xff;
			p_and &= (uint32_t)_mm_cvtsi128_si32(v_and) >> 16 & 0xff;
			if (p_or == p_and)
				st->burst_port = PF_BURST_PORT(p_or);
		}
		return LPM6_EDGE_OUT;
	}
	return nbad == n && !lp->icmp && lp->nt == NULL ? LPM6_EDGE_DROP : PF_EDGE_MIXED;
}

/* For live edits (lpm6_routes.c): is there a neigh stage to resolve a gateway by address? */
/* ---- table contents for the stats socket -------------------------------- */

/* "addr/len" of @p a (masked by the caller) into @p buf. */
static void
lpm6_fmt_prefix(char *buf, size_t len, const uint8_t *a, uint8_t plen)
{
	size_t n;

	inet_ntop(AF_INET6, a, buf, (socklen_t)len);
	n = strlen(buf);
	snprintf(buf + n, len - n, "/%u", plen);
}

/*
 * /pipefwd/table,STAGE,routes: the configured routes in prefix order (the
 * order lpm6_parse sorted them in), the ports' connected prefixes and
 * addresses, then the learnt routes, as lpm's page. Runs on the telemetry
 * thread under the stats lock a reload and a learnt batch take.
 */
static int
lpm6_show_routes(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct lpm6_cfg *cfg = st->conf->cfg;
	union pf_show_val v[PF_LRN_SHOW_COLS];
	char pfx[INET6_ADDRSTRLEN + 4], mac[18];
	struct pf_show *sh;
	uint8_t a[16];
	uint32_t i, j;

	sh = pf_show_start(d, req, pf_lrn_show_cols, PF_LRN_SHOW_COLS);
	if (sh == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->rt.n_routes; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(&cfg->rt, i);
		const struct pf_rconf_nh *nh = &cfg->rt.nh[r->nh];

		if (req->port >= 0 && nh->port != req->port)
			continue;
		lpm6_fmt_prefix(pfx, sizeof(pfx), r->prefix, r->len);
		if (nh->has_gw)
			snprintf(mac, sizeof(mac), "-");   /* by address: neigh's table has it */
		else
			pf_show_mac(mac, nh->mac);
		v[0].s = pfx;
		v[1].s = nh->name;
		v[2].s = st->env->ports[nh->port].name;
		v[3].s = mac;
		v[4].s = "config";
		v[5].s = "installed";
		pf_show_row(sh, v);
	}
	/* The ports' own: connected prefixes and local addresses. */
	for (i = 0; i < st->env->n_ports; i++) {
		const struct pf_port_conf *pc = &st->env->ports[i];

		if (req->port >= 0 && (uint32_t)req->port != i)
			continue;
		v[1].s = "-";
		v[2].s = pc->name;
		v[3].s = "-";
		v[5].s = "installed";
		for (j = 0; j < pc->n_ipv6; j++) {
			v[0].s = pfx;
			if (pc->ipv6_len[j] < 128) {
				prefix_mask(pc->ipv6[j], pc->ipv6_len[j], a);
				lpm6_fmt_prefix(pfx, sizeof(pfx), a, pc->ipv6_len[j]);
				v[4].s = "connected";
				pf_show_row(sh, v);
			}
			lpm6_fmt_prefix(pfx, sizeof(pfx), pc->ipv6[j], 128);
			v[4].s = "local";
			pf_show_row(sh, v);
		}
	}
	pf_lrn_show(((const struct lpm6_priv *)st->priv)->ln, st->env, req, sh);
	pf_show_end(sh);
	return 0;
}

static const char *const lpm6_kinds[] = { "route", "local", "connected", "neighbor", "ecmp",
					  "blackhole", "unreachable", "prohibit" };

/*
 * /pipefwd/table,STAGE,lookup,addr=A: what the data path does with
 * destination A, from the running table: the entry's kind, the longest
 * rule holding A (the two /1 halves of no /1 route say ::/0), the port,
 * the next hop (its name, or a learnt gateway's address) and its MAC, and
 * whether the x4 fast path takes the entry.
 */
static int
lpm6_show_lookup(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct lpm6_priv *lp = st->priv;
	const struct lpm6_cfg *cfg = st->conf->cfg;
	const struct lpm6_fib *fib = lp->fib;
	char pfx[INET6_ADDRSTRLEN + 4], gw[INET6_ADDRSTRLEN], mac[18];
	uint32_t hop, h;
	uint8_t a[16], m[16];
	struct lpm6_nh e;
	int len;

	if (inet_pton(AF_INET6, req->addr, a) != 1)
		return -EINVAL;
	pf_sink_str(d, "addr", req->addr);
	if (rte_lpm6_lookup(fib->lpm, a, &hop) != 0 || hop == fib->miss) {
		pf_sink_str(d, "result", "no_route");
		return 0;
	}
	for (len = 128; len > 1; len--) {
		prefix_mask(a, (uint8_t)len, m);
		if (rte_lpm6_is_rule_present(fib->lpm, m, (uint8_t)len, &h) == 1)
			break;
	}
	prefix_mask(a, (uint8_t)len, m);
	if (len == 1 && fib->half_cfg[a[0] >> 7] == UINT32_MAX &&
	    fib->lrn_half[a[0] >> 7] == PF_LRN_NONE)
		len = 0;   /* ::/0 */
	lpm6_fmt_prefix(pfx, sizeof(pfx), len == 0 ? (const uint8_t[16]){ 0 } : m, (uint8_t)len);
	lpm6_nh_read(fib, hop, &e);
	pf_sink_str(d, "result", e.kind < RTE_DIM(lpm6_kinds) ? lpm6_kinds[e.kind] : "?");
	pf_sink_str(d, "prefix", pfx);
	if (e.kind == LPM6_NH_GROUP || e.kind >= LPM6_NH_BLACKHOLE)
		return 0;
	pf_sink_str(d, "port", st->env->ports[e.port].name);
	if (hop < fib->n_user_nh) {
		pf_sink_str(d, "nexthop", cfg->rt.nh[hop].name);
	} else if (lp->ln != NULL && hop >= fib->learnt_base &&
		   pf_lrn_obj(lp->ln, hop - fib->learnt_base)->kind == PF_LRN_NH) {
		inet_ntop(AF_INET6, pf_lrn_obj(lp->ln, hop - fib->learnt_base)->gw, gw, sizeof(gw));
		pf_sink_str(d, "nexthop", gw);
	}
	if (e.kind == LPM6_NH_FWD) {
		pf_show_mac(mac, e.macs);
		pf_sink_str(d, "mac", mac);
	}
	pf_sink_u64(d, "fast_path", e.kind == LPM6_NH_FWD && e.max_plen != 0);
	return 0;
}

static const char *const lpm6_show_tables[] = { "routes", "lookup", NULL };

static int
lpm6_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	  struct pf_sink *d)
{
	if (strcmp(what, "routes") == 0)
		return lpm6_show_routes(st, req, d);
	if (strcmp(what, "lookup") == 0)
		return lpm6_show_lookup(st, req, d);
	return -ENOENT;
}

const struct pf_stage_ops pf_lpm6_ops = {
	.type = "lpm6",
	.summary = "IPv6 router (RFC 8200/4291) on rte_lpm6, answers NS and ping6 for its addresses",
	.flags = PF_STAGE_PORT_TABLES | PF_STAGE_KEEPS_FLOW,
	.priv_size = sizeof(struct lpm6_priv),
	.n_edges = LPM6_EDGE_MAX,
	.edge_names = lpm6_edges,
	.default_edge = LPM6_EDGE_OUT,
	.n_ctrs = lpm6_ctr_max,
	.ctrs = lpm6_ctrs,
	.dp = {
		.process_burst = lpm6_process_burst,
	},
	.ctl = {
		.param_keys = lpm6_keys,
		.takes = PF_CARRY_IPV6,
		.edge_carries = lpm6_carries,
		.parse = lpm6_parse,
		.cfg_free = lpm6_cfg_free,
		.init = lpm6_init,
		.ports = lpm6_ports,
		.swap = &lpm6_swap,
		.free = lpm6_free,
		.edit = lpm6_cfg_edit,
		.edit_tables = lpm6_edit_tables,
		.learn = lpm6_learn,
		.upkeep = lpm6_learnt_upkeep,
	},
	.obs = {
		.gauges = lpm6_gauges,
		.show = lpm6_show,
		.show_tables = lpm6_show_tables,
	},
};
