/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * icmp6: the slow path that answers with ICMPv6 errors (RFC 4443).
 * Edges: drop, out (the error, back out of the ingress port).
 * Counters: drop: one per suppression rule (RFC 4443 2.4 (e)), icmp6_ratelimited,
 *   icmp6_no_room, ...; info: one per error sent (time_exceeded, no_route, beyond_scope,
 *   packet_too_big, param_problem).
 * Params: rate_pps (0..10000000, default 1000; 0: no limit), rate_burst (1..1000000,
 *   default 50), as the icmp stage.
 *
 * Fed by lpm6's "icmp" edge (and neigh's "icmp6": 1/3) with the error in pf_meta.nexthop
 * (PF_META_ICMP: type, code, and the MTU of a Packet Too Big or the pointer
 * of a Parameter Problem). Built in place, as icmp does: new Ethernet, IPv6
 * and ICMPv6 headers take the place of the original's Ethernet header (the
 * rest comes from the headroom) and as much of the original as keeps the
 * error within the IPv6 minimum MTU, 1280 bytes (RFC 4443 2.4 (c)), stays as
 * the quote. Source: the ingress port's first `ipv6:` address, or its
 * link-local one when the original came from a link-local source or the
 * port has no other; hop limit 64. Rate-limited by a token bucket on the
 * packet clock (RFC 4443 2.4 (f)).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf_dyn.h>

#include "icmp_rl.h"
#include "pf_ip6.h"
#include "pf_stage.h"

#define foreach_icmp6_ctr(_)									\
	_(ICMP6_CTR_NO_REASON, icmp6_no_reason, DROP,						\
	  "no ICMPv6 error named in the metadata (wiring mistake: feed from lpm6's icmp edge)")	\
	_(ICMP6_CTR_FOR_ERROR, icmp6_for_icmp6_error, DROP,					\
	  "the packet is an ICMPv6 error (type < 128): never answered")			\
	_(ICMP6_CTR_L2_MCAST, icmp6_for_l2_mcast, DROP,						\
	  "the packet came in an L2 multicast frame (only Packet Too Big answers those)")	\
	_(ICMP6_CTR_L3_MCAST, icmp6_for_mcast_dst, DROP,					\
	  "the packet went to a multicast address (only Packet Too Big answers those)")	\
	_(ICMP6_CTR_BAD_SRC, icmp6_for_bad_src, DROP,						\
	  "the packet's source is ::, ::1, multicast or IPv4-mapped: never answered")		\
	_(ICMP6_CTR_NO_ADDR, icmp6_no_port_addr, DROP, "the ingress port has no MAC to send from") \
	_(ICMP6_CTR_NO_ROOM, icmp6_no_room, DROP,						\
	  "chained mbuf or headroom too small to build the error in place")			\
	_(ICMP6_CTR_RATELIMITED, icmp6_ratelimited, DROP,					\
	  "error suppressed by the token bucket (rate_pps, rate_burst)")			\
	_(ICMP6_CTR_NO_ROUTE, no_route, INFO, "Destination Unreachable, no route (1/0) sent")	\
	_(ICMP6_CTR_BEYOND_SCOPE, beyond_scope, INFO,						\
	  "Destination Unreachable, beyond scope of source address (1/2) sent")		\
	_(ICMP6_CTR_TOO_BIG, packet_too_big, INFO, "Packet Too Big (2/0) with the egress MTU sent") \
	_(ICMP6_CTR_TIME_EXCEEDED, time_exceeded, INFO, "Time Exceeded, hop limit (3/0) sent")	\
	_(ICMP6_CTR_PARAM_PROBLEM, param_problem, INFO, "Parameter Problem (4/code) sent")	\
	_(ICMP6_CTR_ADDR_UNREACH, address_unreachable, INFO,					\
	  "Destination Unreachable, address unreachable (1/3: neighbour never answered) sent") \
	_(ICMP6_CTR_PROHIBITED, admin_prohibited, INFO,						\
	  "Destination Unreachable, administratively prohibited (1/1: a learnt prohibit route) sent")

PF_CTR_ENUM(icmp6, foreach_icmp6_ctr);
PF_CTR_DESCS(icmp6, foreach_icmp6_ctr);

enum { ICMP6_EDGE_DROP, ICMP6_EDGE_OUT, ICMP6_EDGE_MAX };
static const char *const icmp6_edges[] = { "drop", "out" };
static const uint16_t icmp6_carries[] = { 0, PF_CARRY_ROUTED };
static const char *const icmp6_keys[] = { "rate_pps", "rate_burst", NULL };

/* New headers in front of the quote: Ethernet, IPv6, ICMPv6 (8 bytes). */
#define ICMP6_HDRS (RTE_ETHER_HDR_LEN + 40 + 8)
/* RFC 4443 2.4 (c): the error must not exceed the minimum IPv6 MTU. */
#define ICMP6_QUOTE_MAX (1280 - 40 - 8)

struct icmp6_priv {
	struct rte_ether_addr port_mac[PF_MAX_PORTS];
	uint8_t ll[PF_MAX_PORTS][16];     /* link-local, from the MAC */
	uint8_t global[PF_MAX_PORTS][16]; /* first ipv6: address, else the link-local */
	uint32_t port_ok;                 /* bit per port: has a MAC */
	struct icmp_rl rl;                /* rate_pps, rate_burst */
};

/* The ports' MACs and addresses (init, and ports added or removed live: ctl.ports). */
static void
icmp6_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct icmp6_priv *ip = st->priv;
	uint32_t ok = 0;
	uint16_t i;

	for (i = 0; i < st->env->n_ports; i++) {
		const struct pf_port_conf *pc = &st->env->ports[i];

		if (!pc->has_mac)
			continue;
		memcpy(ip->port_mac[i].addr_bytes, pc->mac, 6);
		pf_ip6_linklocal(pc->mac, ip->ll[i]);
		memcpy(ip->global[i], pc->n_ipv6 != 0 ? pc->ipv6[0] : ip->ll[i], 16);
		ok |= 1u << i;
	}
	__atomic_store_n(&ip->port_ok, ok, __ATOMIC_RELEASE);
}

static int
icmp6_init(struct pf_stage *st, struct pf_errs *errs)
{
	const struct icmp_rl_cfg *cfg = st->conf->cfg;
	struct icmp6_priv *ip = st->priv;

	RTE_SET_USED(errs);
	icmp6_ports(st, 0, 0, true);
	icmp_rl_init(&ip->rl, cfg, st->env->clock == PF_CLOCK_PCAP);
	return 0;
}

/*
 * Which rule forbids an error about @p m (RFC 4443 2.4 (e)), or the
 * ICMP6_CTR_* of the error to send. The original's IPv6 header is @p o.
 */
static uint32_t
icmp6_check(const struct icmp6_priv *ip, const struct rte_mbuf *m, const struct pf_meta *md,
	    const uint8_t *o)
{
	uint8_t type = PF_META_ICMP_TYPE(md->nexthop), code = PF_META_ICMP_CODE(md->nexthop);
	uint32_t sent, l4 = md->l2_len + md->l3_len;
	bool ptb = false;
	int z;

	if (md->cls != PF_CLASS_IPV6 || md->nexthop == 0)
		return ICMP6_CTR_NO_REASON;
	if (type == 1 && code == 0)
		sent = ICMP6_CTR_NO_ROUTE;
	else if (type == 1 && code == 1)
		sent = ICMP6_CTR_PROHIBITED;
	else if (type == 1 && code == 2)
		sent = ICMP6_CTR_BEYOND_SCOPE;
	else if (type == 1 && code == 3)
		sent = ICMP6_CTR_ADDR_UNREACH;
	else if (type == 2 && code == 0)
		sent = ICMP6_CTR_TOO_BIG, ptb = true;
	else if (type == 3 && code == 0)
		sent = ICMP6_CTR_TIME_EXCEEDED;
	else if (type == 4)
		sent = ICMP6_CTR_PARAM_PROBLEM;
	else
		return ICMP6_CTR_NO_REASON;
	if (md->l4_proto == IPPROTO_ICMPV6 && !(md->flags & PF_META_IP_NONFIRST) &&
	    rte_pktmbuf_data_len(m) > l4 && rte_pktmbuf_mtod(m, const uint8_t *)[l4] < 128)
		return ICMP6_CTR_FOR_ERROR;
	if (pf_ip6_is_mcast(o + 24) && !ptb)
		return ICMP6_CTR_L3_MCAST;
	if ((md->flags & PF_META_L2_MCAST) && !ptb)
		return ICMP6_CTR_L2_MCAST;
	z = pf_ip6_zero_or_loopback(o + 8);
	if (z >= 0 || pf_ip6_is_mcast(o + 8) || pf_ip6_is_v4mapped(o + 8))
		return ICMP6_CTR_BAD_SRC;
	if (!(ip->port_ok & (1u << md->in_port)))
		return ICMP6_CTR_NO_ADDR;
	return sent;
}

/* Turn @p m into the error @p md names, in place (see the file comment). */
static bool
icmp6_build(struct icmp6_priv *ip, struct rte_mbuf *m, struct pf_meta *md)
{
	uint8_t *old = rte_pktmbuf_mtod(m, uint8_t *), to[6], dst[16], *eth, *h, *ic;
	uint32_t quote = RTE_MIN(rte_pktmbuf_data_len(m) - (uint32_t)md->l2_len,
				 (uint32_t)ICMP6_QUOTE_MAX);
	uint32_t val = PF_META_ICMP_MTU(md->nexthop);
	uint16_t ck;

	memcpy(to, old + 6, 6);
	memcpy(dst, old + md->l2_len + 8, 16);
	if (m->nb_segs != 1 || rte_pktmbuf_prepend(m, ICMP6_HDRS - md->l2_len) == NULL)
		return false;
	rte_pktmbuf_trim(m, m->pkt_len - (ICMP6_HDRS + quote));
	eth = rte_pktmbuf_mtod(m, uint8_t *);
	h = eth + RTE_ETHER_HDR_LEN;
	ic = h + 40;
	memcpy(eth, to, 6);
	memcpy(eth + 6, ip->port_mac[md->in_port].addr_bytes, 6);
	eth[12] = RTE_ETHER_TYPE_IPV6 >> 8;
	eth[13] = RTE_ETHER_TYPE_IPV6 & 0xff;
	memset(h, 0, 8);
	h[0] = 0x60;
	h[4] = (uint8_t)((8 + quote) >> 8);
	h[5] = (uint8_t)(8 + quote);
	h[6] = IPPROTO_ICMPV6;
	h[7] = 64;
	memcpy(h + 8, pf_ip6_is_linklocal(dst) ? ip->ll[md->in_port] : ip->global[md->in_port], 16);
	memcpy(h + 24, dst, 16);
	ic[0] = PF_META_ICMP_TYPE(md->nexthop);
	ic[1] = PF_META_ICMP_CODE(md->nexthop);
	memset(ic + 2, 0, 6);
	/* MTU (Packet Too Big) or pointer (Parameter Problem), 32 bits; 0 otherwise. */
	ic[6] = (uint8_t)(val >> 8);
	ic[7] = (uint8_t)val;
	ck = (uint16_t)~pf_icmp6_sum(h + 8, ic, 8 + quote);
	memcpy(ic + 2, &ck, 2);
	md->out_port = md->in_port;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = 40;
	md->l4_proto = IPPROTO_ICMPV6;
	md->flags &= (uint8_t)~(PF_META_VLAN | PF_META_L2_BCAST | PF_META_L2_MCAST |
				PF_META_IP_FRAG | PF_META_IP_NONFIRST | PF_META_IP_OPTIONS);
	md->vlan_tci = 0;
	return true;
}

static uint16_t
icmp6_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct icmp6_priv *ip = st->priv;
	uint64_t now = pf_now_ns();
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct pf_meta *md = pf_meta(pkts[i]);
		const uint8_t *o = rte_pktmbuf_mtod_offset(pkts[i], const uint8_t *, md->l2_len);
		uint32_t c = icmp6_check(ip, pkts[i], md, o);

		if (c < ICMP6_CTR_NO_ROUTE) {
			PF_DROP(edge, i, st->ctrs, c);
			continue;
		}
		if (!icmp_rl_admit(&ip->rl, pkts[i], now, st->dry_run)) {
			PF_DROP(edge, i, st->ctrs, ICMP6_CTR_RATELIMITED);
			continue;
		}
		if (!icmp6_build(ip, pkts[i], md)) {
			PF_DROP(edge, i, st->ctrs, ICMP6_CTR_NO_ROOM);
			continue;
		}
		st->ctrs[c]++;
		edge[i] = ICMP6_EDGE_OUT;
	}
	return PF_EDGE_MIXED;
}

const struct pf_stage_ops pf_icmp6_ops = {
	.type = "icmp6",
	.summary = "slow path: ICMPv6 errors (Unreachable, Packet Too Big, Time Exceeded), rate-limited",
	.priv_size = sizeof(struct icmp6_priv),
	.n_edges = ICMP6_EDGE_MAX,
	.edge_names = icmp6_edges,
	.default_edge = ICMP6_EDGE_OUT,
	.n_ctrs = icmp6_ctr_max,
	.ctrs = icmp6_ctrs,
	.dp = {
		.process_burst = icmp6_process_burst,
	},
	.ctl = {
		.param_keys = icmp6_keys,
		.takes = PF_CARRY_ICMP6,
		.edge_carries = icmp6_carries,
		.parse = icmp_rl_parse,
		.cfg_free = icmp_rl_cfg_free,
		.init = icmp6_init,
		.ports = icmp6_ports,
	},
};
