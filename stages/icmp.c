/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * icmp: the slow path that answers with ICMP errors (RFC 792, RFC 1812 4.3).
 * Edges: drop, out (the error, back out of the ingress port).
 * Counters: drop: one per suppression rule (RFC 1812 4.3.2.7), icmp_ratelimited, icmp_no_room,
 *   ...; info: time_exceeded, net_unreachable, frag_needed, param_problem, host_unreachable
 *   (errors sent).
 * Params: rate_pps (0..10000000, default 1000; 0: no limit), rate_burst (1..1000000,
 *   default 50): errors the bucket holds (`burst` is the common key of source stages).
 *
 * Fed by a routing stage's "icmp" edge (lpm; neigh for 3/1) with the error to send in
 * pf_meta.nexthop (PF_META_ICMP: type, code, next-hop MTU). The error is
 * built in place in the same mbuf, so nothing is allocated: the headers of
 * the original (Ethernet, 802.1Q tag) make room for new IPv4 + ICMP headers
 * (the rest comes from the headroom), the original IP header and the first
 * 8 bytes of its payload stay as the quote (RFC 792, RFC 1812 4.3.2.3) and
 * the rest is trimmed. Source address: the ingress port's `ipv4:`; TTL 64;
 * precedence 6 (Internetwork Control, RFC 1812 5.3.3.2) like Linux. Errors
 * are rate-limited by a token bucket (RFC 1812 4.3.2.8) on the packet clock
 * (each packet's capture time with `clock: pcap`, pf_now_ns() otherwise).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf_dyn.h>

#include "icmp_rl.h"
#include "pf_stage.h"

#define foreach_icmp_ctr(_)									\
	_(ICMP_CTR_NO_REASON, icmp_no_reason, DROP,						\
	  "no ICMP error named in the metadata (wiring mistake: feed from lpm's icmp edge)")	\
	_(ICMP_CTR_FOR_ERROR, icmp_for_icmp_error, DROP,					\
	  "the packet is an ICMP error (types 3, 4, 5, 11, 12): never answered")		\
	_(ICMP_CTR_L2_BCAST, icmp_for_l2_bcast, DROP,						\
	  "the packet came in an L2 broadcast or multicast frame: never answered")		\
	_(ICMP_CTR_L3_BCAST, icmp_for_l3_bcast, DROP,						\
	  "the packet went to an IPv4 broadcast or multicast address: never answered")	\
	_(ICMP_CTR_NONFIRST, icmp_for_nonfirst_fragment, DROP,					\
	  "the packet is a non-first fragment: never answered")				\
	_(ICMP_CTR_BAD_SRC, icmp_for_bad_src, DROP,						\
	  "the packet's source is 0/8, 127/8, 224/4 or 240/4: never answered")		\
	_(ICMP_CTR_NO_ADDR, icmp_no_port_addr, DROP,						\
	  "the ingress port has no ipv4 address or MAC to send from")			\
	_(ICMP_CTR_NO_ROOM, icmp_no_room, DROP,							\
	  "chained mbuf or headroom too small to build the error in place")			\
	_(ICMP_CTR_RATELIMITED, icmp_ratelimited, DROP,						\
	  "error suppressed by the token bucket (rate_pps, rate_burst)")				\
	_(ICMP_CTR_TIME_EXCEEDED, time_exceeded, INFO, "Time Exceeded (11/0) sent")		\
	_(ICMP_CTR_NET_UNREACH, net_unreachable, INFO, "Destination Unreachable, net (3/0) sent") \
	_(ICMP_CTR_FRAG_NEEDED, frag_needed, INFO,						\
	  "Destination Unreachable, fragmentation needed (3/4) with the next-hop MTU sent")	\
	_(ICMP_CTR_PARAM_PROBLEM, param_problem, INFO,						\
	  "Parameter Problem (12/0) with the pointer to the bad option sent")	\
	_(ICMP_CTR_HOST_UNREACH, host_unreachable, INFO,					\
	  "Destination Unreachable, host (3/1) sent: the neighbour did not answer ARP")

PF_CTR_ENUM(icmp, foreach_icmp_ctr);
PF_CTR_DESCS(icmp, foreach_icmp_ctr);

enum { ICMP_EDGE_DROP, ICMP_EDGE_OUT, ICMP_EDGE_MAX };
static const char *const icmp_edges[] = { "drop", "out" };
static const uint16_t icmp_carries[] = { 0, PF_CARRY_ROUTED };
static const char *const icmp_keys[] = { "rate_pps", "rate_burst", NULL };

/* New headers in front of the quote: Ethernet, IPv4 without options, ICMP. */
#define ICMP_HDRS (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_icmp_hdr))

struct icmp_priv {
	struct rte_ether_addr port_mac[PF_MAX_PORTS];
	uint32_t port_ip[PF_MAX_PORTS];   /* network order */
	uint32_t port_ok;                 /* bit per port: has ipv4 and mac */
	uint16_t ip_id;
	struct icmp_rl rl;                /* rate_pps, rate_burst */
};

/*
 * The ports' MACs and addresses (init, and ports added or removed live:
 * ctl.ports). An added port's entry is written before its bit is set; a
 * kept port's entry is rewritten with what it holds.
 */
static void
icmp_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct icmp_priv *ip = st->priv;
	uint32_t ok = 0;
	uint16_t i;

	for (i = 0; i < st->env->n_ports; i++) {
		const struct pf_port_conf *pc = &st->env->ports[i];

		if (!pc->has_ipv4 || !pc->has_mac)
			continue;
		memcpy(ip->port_mac[i].addr_bytes, pc->mac, 6);
		ip->port_ip[i] = rte_cpu_to_be_32(pc->ipv4);
		ok |= 1u << i;
	}
	__atomic_store_n(&ip->port_ok, ok, __ATOMIC_RELEASE);
}

static int
icmp_init(struct pf_stage *st, struct pf_errs *errs)
{
	const struct icmp_rl_cfg *cfg = st->conf->cfg;
	struct icmp_priv *ip = st->priv;

	RTE_SET_USED(errs);
	icmp_ports(st, 0, 0, true);
	icmp_rl_init(&ip->rl, cfg, st->env->clock == PF_CLOCK_PCAP);
	return 0;
}

/* ICMP types that are errors (RFC 1812 4.3.2.7 never answers them). */
static bool
icmp_is_error(uint8_t type)
{
	return type == PF_ICMP_DEST_UNREACH || type == 4 || type == 5 ||
	       type == PF_ICMP_TIME_EXCEEDED || type == 12;
}

/*
 * Which rule forbids an error about @p m, or ICMP_CTR_* of a sent one when
 * none does. The original's IPv4 header starts at @p o.
 */
static uint32_t
icmp_check(const struct icmp_priv *ip, const struct pf_meta *md, const struct rte_ipv4_hdr *o)
{
	uint32_t reason = md->nexthop, src = rte_be_to_cpu_32(o->src_addr);
	uint32_t dst = rte_be_to_cpu_32(o->dst_addr);
	uint16_t tot = rte_be_to_cpu_16(o->total_length);
	const uint8_t *l4 = (const uint8_t *)o + md->l3_len;
	uint32_t sent;

	if (md->cls != PF_CLASS_IPV4)
		return ICMP_CTR_NO_REASON;
	if (reason == PF_META_ICMP(PF_ICMP_TIME_EXCEEDED, 0, 0))
		sent = ICMP_CTR_TIME_EXCEEDED;
	else if (reason == PF_META_ICMP(PF_ICMP_DEST_UNREACH, 0, 0))
		sent = ICMP_CTR_NET_UNREACH;
	else if ((reason & 0xffff0000u) == PF_META_ICMP(PF_ICMP_DEST_UNREACH, 4, 0))
		sent = ICMP_CTR_FRAG_NEEDED;
	else if ((reason & 0xffff0000u) == PF_META_ICMP(PF_ICMP_PARAM_PROBLEM, 0, 0))
		sent = ICMP_CTR_PARAM_PROBLEM;
	else if (reason == PF_META_ICMP(PF_ICMP_DEST_UNREACH, 1, 0))
		sent = ICMP_CTR_HOST_UNREACH;
	else
		return ICMP_CTR_NO_REASON;
	if (md->flags & PF_META_IP_NONFIRST)
		return ICMP_CTR_NONFIRST;
	if (o->next_proto_id == IPPROTO_ICMP && tot > md->l3_len && icmp_is_error(l4[0]))
		return ICMP_CTR_FOR_ERROR;
	if (md->flags & PF_META_L2_MCAST)
		return ICMP_CTR_L2_BCAST;
	if ((dst >> 28) >= 0xe)
		return ICMP_CTR_L3_BCAST;
	if ((src >> 24) == 0 || (src >> 24) == 127 || (src >> 28) >= 0xe)
		return ICMP_CTR_BAD_SRC;
	if (!(ip->port_ok & (1u << md->in_port)))
		return ICMP_CTR_NO_ADDR;
	return sent;
}

/*
 * Turn @p m into the error @p md names, in place: new Ethernet, IPv4 and
 * ICMP headers right before the quote (original IPv4 header + 8 bytes).
 */
static bool
icmp_build(struct icmp_priv *ip, struct rte_mbuf *m, struct pf_meta *md)
{
	uint8_t *old = rte_pktmbuf_mtod(m, uint8_t *);
	const struct rte_ipv4_hdr *o = (const struct rte_ipv4_hdr *)(old + md->l2_len);
	struct rte_ether_addr to;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *h;
	struct rte_icmp_hdr *ic;
	uint32_t quote = RTE_MIN((uint32_t)md->l3_len + 8,
				 (uint32_t)rte_be_to_cpu_16(o->total_length));
	uint32_t dst = o->src_addr, arg = PF_META_ICMP_MTU(md->nexthop);

	rte_ether_addr_copy(&((const struct rte_ether_hdr *)old)->src_addr, &to);
	if (m->nb_segs != 1 || rte_pktmbuf_prepend(m, ICMP_HDRS - md->l2_len) == NULL)
		return false;
	rte_pktmbuf_trim(m, m->pkt_len - (ICMP_HDRS + quote));
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	h = (struct rte_ipv4_hdr *)(eth + 1);
	ic = (struct rte_icmp_hdr *)(h + 1);
	eth->dst_addr = to;
	eth->src_addr = ip->port_mac[md->in_port];
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(h, 0, sizeof(*h));
	h->version_ihl = RTE_IPV4_VHL_DEF;
	h->type_of_service = 0xc0;
	h->total_length = rte_cpu_to_be_16(sizeof(*h) + sizeof(*ic) + quote);
	h->packet_id = rte_cpu_to_be_16(ip->ip_id++);
	h->time_to_live = 64;
	h->next_proto_id = IPPROTO_ICMP;
	h->src_addr = ip->port_ip[md->in_port];
	h->dst_addr = dst;
	h->hdr_checksum = rte_ipv4_cksum(h);
	ic->icmp_type = PF_META_ICMP_TYPE(md->nexthop);
	ic->icmp_code = PF_META_ICMP_CODE(md->nexthop);
	ic->icmp_cksum = 0;
	/* The second word: 3/4's next-hop MTU in its low half (RFC 1191), 12's
	 * pointer in its first octet (RFC 792), zero for the others. */
	if (PF_META_ICMP_TYPE(md->nexthop) == PF_ICMP_PARAM_PROBLEM) {
		ic->icmp_ident = rte_cpu_to_be_16((uint16_t)(arg << 8));
		ic->icmp_seq_nb = 0;
	} else {
		ic->icmp_ident = 0;
		ic->icmp_seq_nb = rte_cpu_to_be_16((uint16_t)arg);
	}
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(*ic) + quote);
	md->out_port = md->in_port;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = sizeof(*h);
	md->l4_proto = IPPROTO_ICMP;
	md->flags &= (uint8_t)~(PF_META_VLAN | PF_META_L2_BCAST | PF_META_L2_MCAST |
				PF_META_IP_FRAG | PF_META_IP_NONFIRST | PF_META_IP_OPTIONS);
	md->vlan_tci = 0;
	return true;
}

static uint16_t
icmp_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct icmp_priv *ip = st->priv;
	uint64_t now = pf_now_ns();
	uint16_t i, ip_id = ip->ip_id;

	for (i = 0; i < n; i++) {
		struct pf_meta *md = pf_meta(pkts[i]);
		const struct rte_ipv4_hdr *o = rte_pktmbuf_mtod_offset(pkts[i],
			const struct rte_ipv4_hdr *, md->l2_len);
		uint32_t c = icmp_check(ip, md, o);

		if (c < ICMP_CTR_TIME_EXCEEDED) {
			PF_DROP(edge, i, st->ctrs, c);
			continue;
		}
		if (!icmp_rl_admit(&ip->rl, pkts[i], now, st->dry_run)) {
			PF_DROP(edge, i, st->ctrs, ICMP_CTR_RATELIMITED);
			continue;
		}
		if (!icmp_build(ip, pkts[i], md)) {
			PF_DROP(edge, i, st->ctrs, ICMP_CTR_NO_ROOM);
			continue;
		}
		st->ctrs[c]++;
		edge[i] = ICMP_EDGE_OUT;
	}
	/* A dry run's error takes the next IP ID, but leaves it for the next one. */
	if (unlikely(st->dry_run))
		ip->ip_id = ip_id;
	return PF_EDGE_MIXED;
}

const struct pf_stage_ops pf_icmp_ops = {
	.type = "icmp",
	.summary = "slow path: ICMP errors (Time Exceeded, Unreachable, Parameter Problem), rate-limited",
	.priv_size = sizeof(struct icmp_priv),
	.n_edges = ICMP_EDGE_MAX,
	.edge_names = icmp_edges,
	.default_edge = ICMP_EDGE_OUT,
	.n_ctrs = icmp_ctr_max,
	.ctrs = icmp_ctrs,
	.dp = {
		.process_burst = icmp_process_burst,
	},
	.ctl = {
		.param_keys = icmp_keys,
		.takes = PF_CARRY_ICMP4,
		.edge_carries = icmp_carries,
		.parse = icmp_rl_parse,
		.cfg_free = icmp_rl_cfg_free,
		.init = icmp_init,
		.ports = icmp_ports,
	},
};
