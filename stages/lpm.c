/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm: IPv4 router (RFC 1812) on rte_lpm; answers ARP and ICMP echo for its own addresses.
 * Edges: drop, out (md->out_port set: routed packets, ARP replies, echo replies), icmp
 *   (optional: packets that deserve an ICMP error, the error in md->nexthop, see PF_META_ICMP),
 *   fragment (optional: routed like out but longer than the egress MTU with DF clear, to ip4frag),
 *   neigh (optional: packets to a neighbour without a MAC yet, its address in md->nexthop;
 *   wiring it adds the ports' connected subnets and allows next hops by address).
 * Counters: one drop reason per RFC 1812 check (ip4_no_route, ip4_ttl_expired, ip4_martian_*,
 *   ...), see foreach_lpm_ctr; info: local, icmp_echo_reply, arp_reply, *_to_icmp,
 *   ip4_to_fragment, ip4_to_neigh.
 * Params: nexthops (name: {port, mac} or {via: address}), routes ([{prefix, via}]),
 *   routes_file, lookup.
 *
 * The input carries IPv4 (rx edge "ipv4") and ARP (rx edge "arp"); rx has
 * already rejected malformed headers. The routing table lives in a struct
 * lpm_fib that process_burst reads once per burst; a reload builds a new
 * fib beside it, the runtime publishes it and frees the old one after a
 * grace period (ctl.swap); learnt routes change it in place (lpm_learnt.c).
 * Tables are filled directly (fib_fill): rte_lpm_add is O(n) per route.
 *
 * This file is the data path and the ops; lpm_table.c builds the table,
 * lpm_show.c shows it, lpm_routes.c parses (lpm_fib.h says who holds what).
 */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_lpm.h>
#include <rte_prefetch.h>

#include "lpm.h"
#include "lpm_fib.h"
#include "pf_neigh.h"

#define foreach_lpm_ctr(_)									\
	_(LPM_CTR_L3_MAC_MISMATCH, l3_mac_mismatch, DROP,					\
	  "destination MAC is neither the ingress port's MAC nor a group address")		\
	_(LPM_CTR_VLAN_UNKNOWN, vlan_unknown, DROP, "802.1Q tag with VID != 0 (routed ports are untagged)") \
	_(LPM_CTR_L3_PROTO, l3_proto_unsupported, DROP, "neither IPv4 nor ARP (wiring mistake)")	\
	_(LPM_CTR_MARTIAN_SRC, ip4_martian_src, DROP, "source in 0/8, 127/8, 224/4 or 240/4")	\
	_(LPM_CTR_MARTIAN_DST, ip4_martian_dst, DROP, "destination in 0/8, 127/8 or 240/4")	\
	_(LPM_CTR_BCAST, ip4_bcast, DROP, "destination 255.255.255.255 (never forwarded)")		\
	_(LPM_CTR_DIRECTED_BCAST, ip4_directed_bcast, DROP,					\
	  "destination is the broadcast address of a routed port's subnet")			\
	_(LPM_CTR_MCAST, ip4_mcast_unsupported, DROP, "destination in 224/4 (no multicast routing)") \
	_(LPM_CTR_NO_ROUTE, ip4_no_route, DROP,							\
	  "no route matches the destination (icmp edge not wired)")				\
	_(LPM_CTR_L2BCAST_UNICAST, l3_l2bcast_ip_unicast, DROP,					\
	  "unicast IPv4 to forward arrived in an L2 broadcast/multicast frame")			\
	_(LPM_CTR_TTL_EXPIRED, ip4_ttl_expired, DROP,						\
	  "TTL <= 1 on a packet to forward (icmp edge not wired)")		\
	_(LPM_CTR_SRCROUTE, ip4_srcroute, DROP, "IPv4 option LSRR (131) or SSRR (137): never forwarded") \
	_(LPM_CTR_BAD_OPTION, ip4_bad_option, DROP,						\
	  "IPv4 option with a length under 2 or running past the header (icmp edge not wired)") \
	_(LPM_CTR_FRAG_OFFSET_ONE, ip4_frag_offset_one, DROP, "fragment offset 1 (RFC 1858 overlap attack)") \
	_(LPM_CTR_TINY_FRAGMENT, ip4_tiny_fragment, DROP,					\
	  "first fragment without the whole TCP (20 B) or UDP (8 B) header (RFC 1858)")	\
	_(LPM_CTR_MTU_DF, ip4_mtu_exceeded_df, DROP,						\
	  "longer than the egress MTU with DF set, icmp edge not wired (no ICMP 3/4)")		\
	_(LPM_CTR_MTU_NOFRAG, ip4_frag_needed_unsupported, DROP,				\
	  "longer than the egress MTU, DF clear, fragment edge not wired")		\
	_(LPM_CTR_LOCAL_UNSUPPORTED, ip4_local_unsupported, DROP,				\
	  "addressed to the router but not an ICMP echo request it answers")			\
	_(LPM_CTR_ICMP_BAD_CKSUM, icmp_bad_checksum, DROP, "ICMP echo request with a wrong checksum") \
	_(LPM_CTR_ARP_UNSUPPORTED, arp_unsupported, DROP, "ARP not for Ethernet/IPv4 (htype, ptype, hlen, plen)") \
	_(LPM_CTR_ARP_IGNORED, arp_ignored, DROP, "ARP reply or other opcode (next-hop MACs are static)") \
	_(LPM_CTR_ARP_NOT_FOR_US, arp_not_for_us, DROP,						\
	  "ARP request for an address other than the ingress port's")				\
	_(LPM_CTR_LOCAL, local, INFO, "IPv4 packets addressed to one of the router's addresses")	\
	_(LPM_CTR_ICMP_ECHO_REPLY, icmp_echo_reply, INFO, "ICMP echo requests answered in place")	\
	_(LPM_CTR_BLACKHOLE, ip4_blackhole, DROP, "matched a learnt blackhole route")		\
	_(LPM_CTR_UNREACH_ROUTE, ip4_unreachable_route, DROP,					\
	  "matched a learnt unreachable or prohibit route (icmp edge not wired)")		\
	_(LPM_CTR_UNREACH_ROUTE_ICMP, ip4_unreachable_route_to_icmp, INFO,			\
	  "matched a learnt unreachable or prohibit route: sent to the icmp edge")		\
	_(LPM_CTR_TO_HOST, ip4_to_host, INFO,							\
	  "to the router and not an echo request it answers, or to 224.0.0.0/24: sent to the host edge") \
	_(LPM_CTR_ARP_REPLY, arp_reply, INFO,							\
	  "ARP requests for the ingress port's address answered")				\
	_(LPM_CTR_TTL_ICMP, ip4_ttl_expired_to_icmp, INFO,					\
	  "TTL <= 1 on a packet to forward: sent to the icmp edge (Time Exceeded)")		\
	_(LPM_CTR_NO_ROUTE_ICMP, ip4_no_route_to_icmp, INFO,					\
	  "no route matches the destination: sent to the icmp edge (Net Unreachable)")	\
	_(LPM_CTR_MTU_DF_ICMP, ip4_mtu_exceeded_df_to_icmp, INFO,				\
	  "longer than the egress MTU with DF set: sent to the icmp edge (Frag Needed)")	\
	_(LPM_CTR_TO_FRAG, ip4_to_fragment, INFO,						\
	  "longer than the egress MTU, DF clear: routed and sent to the fragment edge")	\
	_(LPM_CTR_BAD_OPTION_ICMP, ip4_bad_option_to_icmp, INFO,				\
	  "IPv4 option with a bad length: sent to the icmp edge (Parameter Problem)")	\
	_(LPM_CTR_ARP_BAD_SHA, arp_bad_sender_mac, DROP,					\
	  "ARP request whose sender MAC is a group address or zero: never answered")		\
	_(LPM_CTR_TO_NEIGH, ip4_to_neigh, INFO,							\
	  "next hop or connected host without a MAC yet: sent to the neigh edge (ARP)")

PF_CTR_ENUM(lpm, foreach_lpm_ctr);
PF_CTR_DESCS(lpm, foreach_lpm_ctr);

static const char *const lpm_edges[] = { "drop", "out", "icmp", "fragment", "neigh", "host" };
static const uint16_t lpm_carries[] = { 0, PF_CARRY_ROUTED, PF_CARRY_ICMP4, PF_CARRY_FRAG4,
	PF_CARRY_NEIGH4, PF_CARRY_HOST };
static const char *const lpm_keys[] = { "nexthops", "routes", "routes_file", "lookup", "learnt",
					NULL };

/* ---- data path ---------------------------------------------------------- */

/*
 * Frames must be addressed to the router: its MAC on the ingress port (rx
 * compared it and set PF_META_L2_LOCAL), or a group address.
 */
static __rte_always_inline bool
lpm_l2_ok(uint64_t *ctrs, const struct pf_meta *md)
{
	if (unlikely(md->flags & PF_META_VLAN)) {
		ctrs[LPM_CTR_VLAN_UNKNOWN]++;
		return false;
	}
	if (unlikely(!(md->flags & (PF_META_L2_MCAST | PF_META_L2_LOCAL)))) {
		ctrs[LPM_CTR_L3_MAC_MISMATCH]++;
		return false;
	}
	return true;
}

/*
 * First octets never routed as source or destination (RFC 1812 5.3.7,
 * 4.2.2.11): 0/8, 127/8, 224/4 and 240/4. One load answers both tests.
 */
static const uint8_t lpm_martian[256] = { [0] = 1, [127] = 1, [224 ... 255] = 1 };

static uint16_t __rte_noinline
lpm_dst_special(uint64_t *ctrs, uint32_t dst)
{
	if (dst == UINT32_MAX)
		ctrs[LPM_CTR_BCAST]++;
	else if ((dst >> 28) == 0xe)
		ctrs[LPM_CTR_MCAST]++;
	else
		ctrs[LPM_CTR_MARTIAN_DST]++;
	return LPM_EDGE_DROP;
}

/* Turn an ICMP echo request into its reply in place, back out the ingress port. */
static uint16_t __rte_noinline
lpm_local(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md,
	  struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, const struct lpm_nh *nh)
{
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	uint32_t len = rte_be_to_cpu_16(ip->total_length), a;
	uint16_t old, new;

	if (nh->kind == LPM_NH_DBCAST) {
		ctrs[LPM_CTR_DIRECTED_BCAST]++;
		return LPM_EDGE_DROP;
	}
	ctrs[LPM_CTR_LOCAL]++;
	/* With host interfaces the kernel takes all but the echo requests answered
	 * here (BGP, BFD, SSH, echo replies, errors; fragments: it reassembles). */
	if (lp->host && (ip->next_proto_id != IPPROTO_ICMP || md->l3_len != sizeof(*ip) ||
			 (md->flags & PF_META_IP_FRAG) || len < sizeof(*ip) + sizeof(*icmp) ||
			 icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST)) {
		ctrs[LPM_CTR_TO_HOST]++;
		return LPM_EDGE_HOST;
	}
	/* Only plain echo requests: no options, no fragments (no reassembly here). */
	if (ip->next_proto_id != IPPROTO_ICMP || md->l3_len != sizeof(*ip) ||
	    (md->flags & PF_META_IP_FRAG) || len < sizeof(*ip) + sizeof(*icmp) ||
	    icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0) {
		ctrs[LPM_CTR_LOCAL_UNSUPPORTED]++;
		return LPM_EDGE_DROP;
	}
	if (rte_raw_cksum(icmp, len - sizeof(*ip)) != 0xffff) {
		ctrs[LPM_CTR_ICMP_BAD_CKSUM]++;
		return LPM_EDGE_DROP;
	}
	memcpy(&old, icmp, 2);
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	memcpy(&new, icmp, 2);
	icmp->icmp_cksum = lpm_cksum_adjust(icmp->icmp_cksum, old, new);
	a = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = a;
	ip->time_to_live = 64;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&lp->port_mac[md->in_port], &eth->src_addr);
	md->out_port = md->in_port;
	ctrs[LPM_CTR_ICMP_ECHO_REPLY]++;
	return LPM_EDGE_OUT;
}

/* Answer ARP requests for the ingress port's address in place. */
static uint16_t __rte_noinline
lpm_arp(const struct lpm_priv *lp, uint64_t *ctrs, struct rte_mbuf *m)
{
	struct pf_meta *md = pf_meta(m);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, md->l2_len);
	struct rte_arp_ipv4 *d = &arp->arp_data;
	uint16_t p = md->in_port;

	if (md->cls != PF_CLASS_ARP) {
		ctrs[LPM_CTR_L3_PROTO]++;
		return LPM_EDGE_DROP;
	}
	if (!lpm_l2_ok(ctrs, md))
		return LPM_EDGE_DROP;
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || arp->arp_hlen != 6 ||
	    arp->arp_plen != 4) {
		ctrs[LPM_CTR_ARP_UNSUPPORTED]++;
		return LPM_EDGE_DROP;
	}
	if (arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST)) {
		ctrs[LPM_CTR_ARP_IGNORED]++;
		return LPM_EDGE_DROP;
	}
	if (!(lp->port_has_ip & (1u << p)) || rte_be_to_cpu_32(d->arp_tip) != lp->port_ip[p]) {
		ctrs[LPM_CTR_ARP_NOT_FOR_US]++;
		return LPM_EDGE_DROP;
	}
	/* The reply goes to the sender MAC: never to a group or zero address. */
	if (rte_is_multicast_ether_addr(&d->arp_sha) || rte_is_zero_ether_addr(&d->arp_sha)) {
		ctrs[LPM_CTR_ARP_BAD_SHA]++;
		return LPM_EDGE_DROP;
	}
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	d->arp_tha = d->arp_sha;
	d->arp_tip = d->arp_sip;
	d->arp_sha = lp->port_mac[p];
	d->arp_sip = rte_cpu_to_be_32(lp->port_ip[p]);
	eth->dst_addr = d->arp_tha;
	eth->src_addr = lp->port_mac[p];
	md->out_port = p;
	ctrs[LPM_CTR_ARP_REPLY]++;
	return LPM_EDGE_OUT;
}

static uint16_t lpm_icmp(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md,
			 uint32_t drop, uint32_t to_icmp, uint32_t err);

/*
 * Options and fragments (slow path: IHL > 5 or a fragment). Options are
 * walked as RFC 791 lays them out: EOL ends the list, NOP is one byte, any
 * other option has a length byte >= 2 that must stay within the header.
 * A malformed option deserves Parameter Problem (RFC 1812 4.3.3.5) pointing
 * at its type octet, as Linux does. Source routes (LSRR, SSRR) are dropped
 * (RFC 1812 4.2.2.1 allows it, RFC 7126 recommends it); other well-formed
 * options are forwarded unchanged. Fragments: offset 1 and a first fragment
 * too short for the TCP or UDP header are the RFC 1858 overlap attacks on
 * filters: dropped. Returns LPM_EDGE_OUT to go on, else the packet's edge.
 */
static uint16_t __rte_noinline
lpm_ip4_slow(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md,
	     const struct rte_ipv4_hdr *ip)
{
	const uint8_t *o = (const uint8_t *)(ip + 1);
	uint32_t n = md->l3_len - sizeof(*ip), i = 0, l4;
	uint16_t fo = rte_be_to_cpu_16(ip->fragment_offset);

	while (i < n && o[i] != RTE_IPV4_HDR_OPT_EOL) {
		if (o[i] == RTE_IPV4_HDR_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= n || o[i + 1] < 2 || o[i + 1] > n - i)
			return lpm_icmp(lp, ctrs, md, LPM_CTR_BAD_OPTION, LPM_CTR_BAD_OPTION_ICMP,
					PF_META_ICMP(PF_ICMP_PARAM_PROBLEM, 0, sizeof(*ip) + i));
		if (o[i] == 131 || o[i] == 137) {
			ctrs[LPM_CTR_SRCROUTE]++;
			return LPM_EDGE_DROP;
		}
		i += o[i + 1];
	}
	if (!(md->flags & PF_META_IP_FRAG))
		return LPM_EDGE_OUT;
	if ((fo & RTE_IPV4_HDR_OFFSET_MASK) == 1) {
		ctrs[LPM_CTR_FRAG_OFFSET_ONE]++;
		return LPM_EDGE_DROP;
	}
	l4 = rte_be_to_cpu_16(ip->total_length) - md->l3_len;
	if (!(md->flags & PF_META_IP_NONFIRST) &&
	    ((ip->next_proto_id == IPPROTO_TCP && l4 < 20) ||
	     (ip->next_proto_id == IPPROTO_UDP && l4 < 8))) {
		ctrs[LPM_CTR_TINY_FRAGMENT]++;
		return LPM_EDGE_DROP;
	}
	return LPM_EDGE_OUT;
}

/*
 * A packet that deserves an ICMP error: with the icmp edge wired it goes
 * there with the error in its metadata (counted as INFO @p to_icmp, as the
 * icmp stage sends or drops it under its own names); unwired, it is the drop
 * @p drop it always was.
 */
static uint16_t
lpm_icmp(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md, uint32_t drop,
	 uint32_t to_icmp, uint32_t err)
{
	if (!lp->icmp) {
		ctrs[drop]++;
		return LPM_EDGE_DROP;
	}
	ctrs[to_icmp]++;
	md->nexthop = err;
	md->out_port = md->in_port;
	return LPM_EDGE_ICMP;
}

/*
 * Too long for the egress port: DF set deserves ICMP 3/4 with the egress
 * MTU (RFC 1191); DF clear is routed as usual, then fragmented by the stage
 * on the fragment edge (LPM_EDGE_FRAG), or dropped when it is not wired.
 */
static uint16_t __rte_noinline
lpm_too_big(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md,
	    const struct rte_ipv4_hdr *ip, uint16_t port)
{
	if (!(ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG))) {
		if (!lp->frag) {
			ctrs[LPM_CTR_MTU_NOFRAG]++;
			return LPM_EDGE_DROP;
		}
		ctrs[LPM_CTR_TO_FRAG]++;
		return LPM_EDGE_FRAG;
	}
	return lpm_icmp(lp, ctrs, md, LPM_CTR_MTU_DF, LPM_CTR_MTU_DF_ICMP,
			PF_META_ICMP(PF_ICMP_DEST_UNREACH, 4,
				     lp->max_frame[port] - RTE_ETHER_HDR_LEN));
}

/* A learnt blackhole, unreachable or prohibit route (RFC 1812 5.2.7.1 for the ICMP). */
static uint16_t __rte_noinline
lpm_route_drop(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md,
	       const struct lpm_nh *nh)
{
	if (nh->kind == LPM_NH_BLACKHOLE) {
		ctrs[LPM_CTR_BLACKHOLE]++;
		return LPM_EDGE_DROP;
	}
	return lpm_icmp(lp, ctrs, md, LPM_CTR_UNREACH_ROUTE, LPM_CTR_UNREACH_ROUTE_ICMP,
			PF_META_ICMP(PF_ICMP_DEST_UNREACH, nh->kind == LPM_NH_UNREACH ? 1 : 13, 0));
}

/*
 * A next hop by address, or a host on a connected subnet: the MAC comes
 * from the neighbour table (lock-free read). Unresolved, the packet goes
 * to the neigh edge unchanged (TTL too: neigh rewrites it when it sends),
 * with the neighbour's address in md->nexthop and md->out_port set.
 */
static uint16_t __rte_noinline
lpm_neigh(const struct lpm_priv *lp, uint64_t *ctrs, struct pf_meta *md,
	  struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, const struct lpm_nh *nh,
	  uint32_t dst, uint32_t hop, uint16_t e)
{
	struct pf_neigh_key k;
	uint32_t addr = dst;

	if (nh->kind == LPM_NH_GW)
		memcpy(&addr, nh->macs, 4);
	pf_neigh_key_ip4(&k, nh->port, addr);
	md->out_port = nh->port;
	if (!pf_neigh_resolve(lp->nt, &k, eth->dst_addr.addr_bytes)) {
		md->nexthop = addr;
		ctrs[LPM_CTR_TO_NEIGH]++;
		return LPM_EDGE_NEIGH;
	}
	lpm_ttl_dec(ip);
	memcpy(eth->src_addr.addr_bytes, nh->macs + 6, 6);
	md->nexthop = hop;
	return e;               /* out, or fragment when over the egress MTU */
}

/*
 * The RFC 1812 decision for one packet whose lookup gave @p hop, every check
 * in the documented order: the reference, and where the fast path sends
 * whatever it does not forward itself.
 */
static uint16_t __rte_noinline
lpm_ip4(const struct lpm_priv *lp, const struct lpm_fib *fib, uint64_t *ctrs,
	struct rte_mbuf *m, uint32_t dst, uint32_t hop)
{
	struct pf_meta *md = pf_meta(m);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)((uint8_t *)eth + md->l2_len);
	const struct lpm_nh *nh;
	uint16_t e = LPM_EDGE_OUT;

	if (md->cls != PF_CLASS_IPV4)
		return lpm_arp(lp, ctrs, m);
	if (!lpm_l2_ok(ctrs, md))
		return LPM_EDGE_DROP;
	if (lpm_martian[rte_be_to_cpu_32(ip->src_addr) >> 24]) {
		ctrs[LPM_CTR_MARTIAN_SRC]++;
		return LPM_EDGE_DROP;
	}
	if (lpm_martian[dst >> 24]) {
		/* Link-local multicast (OSPF, RIPv2, VRRP) for the host interfaces. */
		if ((dst >> 8) == 0xe00000 && lp->host) {
			ctrs[LPM_CTR_TO_HOST]++;
			return LPM_EDGE_HOST;
		}
		return lpm_dst_special(ctrs, dst);
	}
	if (hop == fib->miss)
		return lpm_icmp(lp, ctrs, md, LPM_CTR_NO_ROUTE, LPM_CTR_NO_ROUTE_ICMP,
				PF_META_ICMP(PF_ICMP_DEST_UNREACH, 0, 0));
	nh = &fib->nh[hop];
	if (nh->kind == LPM_NH_LOCAL || nh->kind == LPM_NH_DBCAST)
		return lpm_local(lp, ctrs, md, eth, ip, nh);
	/* Learnt routes: an ECMP group picks its member per flow; drop kinds end here. */
	if (unlikely(nh->kind >= LPM_NH_GROUP)) {
		if (nh->kind != LPM_NH_GROUP)
			return lpm_route_drop(lp, ctrs, md, nh);
		memcpy(&hop, nh->macs, 4);
		hop = fib->learnt_base + pf_lrn_member(&fib->groups[hop], m);
		nh = &fib->nh[hop];
	}
	/* RFC 1812 5.3.4: a link-layer broadcast is not forwarded as unicast. */
	if (md->flags & PF_META_L2_MCAST) {
		ctrs[LPM_CTR_L2BCAST_UNICAST]++;
		return LPM_EDGE_DROP;
	}
	if (md->flags & (PF_META_IP_OPTIONS | PF_META_IP_FRAG)) {
		e = lpm_ip4_slow(lp, ctrs, md, ip);
		if (e != LPM_EDGE_OUT)
			return e;
	}
	if (ip->time_to_live <= 1)
		return lpm_icmp(lp, ctrs, md, LPM_CTR_TTL_EXPIRED, LPM_CTR_TTL_ICMP,
				PF_META_ICMP(PF_ICMP_TIME_EXCEEDED, 0, 0));
	if (rte_be_to_cpu_16(ip->total_length) + RTE_ETHER_HDR_LEN > lp->max_frame[nh->port]) {
		e = lpm_too_big(lp, ctrs, md, ip, nh->port);
		if (e != LPM_EDGE_FRAG)
			return e;
	}
	/* A priority tag (VID 0) is not carried to another link: drop it. */
	if (md->l2_len != RTE_ETHER_HDR_LEN) {
		rte_pktmbuf_adj(m, md->l2_len - RTE_ETHER_HDR_LEN);
		md->l2_len = RTE_ETHER_HDR_LEN;
		eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		ip = (struct rte_ipv4_hdr *)(eth + 1);
	}
	if (nh->kind != LPM_NH_FWD)
		return lpm_neigh(lp, ctrs, md, eth, ip, nh, dst, hop, e);
	lpm_ttl_dec(ip);
	memcpy(eth, nh->macs, sizeof(nh->macs));
	md->out_port = nh->port;
	md->nexthop = hop;
	return e;
}

/*
 * The burst loops count the packets that took edge out: without the
 * optional edges (icmp, fragment, neigh) the edge itself (0 or 1, no test);
 * with them, edge == out.
 */
#define LPM_COUNT_OUT(e, icmp) ((icmp) ? (e) == LPM_EDGE_OUT : (e))

/* pf_meta.flags bits that leave the fast path; PF_META_L2_LOCAL must be set. */
#define LPM_FAST_FLAGS (PF_META_VLAN | PF_META_L2_MCAST | PF_META_L2_LOCAL |	\
			PF_META_IP_OPTIONS | PF_META_IP_FRAG)
/* l2_len, l3_len, cls, flags as one little-endian word (layout checked in lpm_init). */
#define LPM_META_MASK (0xffu | 0xffu << 16 | (uint32_t)LPM_FAST_FLAGS << 24)
#define LPM_META_FAST (RTE_ETHER_HDR_LEN | PF_CLASS_IPV4 << 16 |		\
		       (uint32_t)PF_META_L2_LOCAL << 24)

static __rte_always_inline uint32_t
lpm_meta_word(const struct pf_meta *md)
{
	uint32_t w;

	memcpy(&w, &md->l2_len, sizeof(w));
	return w;
}

/*
 * The common case in a few tests: untagged IPv4 to the ingress port's MAC,
 * no options, not a fragment, no martian address, a route to a next hop
 * (nh->max_len is 0 for local, broadcast and "no route" entries, so they fail the
 * length test), TTL > 1, short enough for the egress port. Exactly the
 * packets lpm_ip4 would forward without a tag to strip; everything else goes
 * to lpm_ip4, which decides and counts it. @p eth is the frame, @p dst the
 * destination in host order.
 */
static __rte_always_inline bool
lpm_plain(const struct lpm_fib *fib, const struct pf_meta *md, const uint8_t *eth, uint32_t dst,
	  uint32_t hop)
{
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + RTE_ETHER_HDR_LEN);

	return (lpm_meta_word(md) & LPM_META_MASK) == LPM_META_FAST &&
	       (lpm_martian[eth[RTE_ETHER_HDR_LEN + 12]] | lpm_martian[dst >> 24]) == 0 &&
	       ip->time_to_live > 1 &&
	       __builtin_bswap16(ip->total_length) <= fib->nh[hop].max_len;
}

/* Forward a packet lpm_plain accepted. */
static __rte_always_inline void
lpm_fwd(const struct lpm_fib *fib, struct pf_meta *md, uint8_t *eth, uint32_t hop)
{
	const struct lpm_nh *nh = &fib->nh[hop];

	lpm_ttl_dec_fwd(eth + RTE_ETHER_HDR_LEN);
	memcpy(eth, nh->macs, sizeof(nh->macs));
	md->out_port = nh->port;
	md->nexthop = hop;
}

/* @p slow: set when a packet leaves the fast path (no burst-port hint then). */
static __rte_always_inline uint16_t
lpm_decide(const struct lpm_priv *lp, const struct lpm_fib *fib, uint64_t *ctrs,
	   struct rte_mbuf *m, struct pf_meta *md, uint8_t *eth, uint32_t dst, uint32_t hop,
	   bool *slow)
{
	if (likely(lpm_plain(fib, md, eth, dst, hop))) {
		lpm_fwd(fib, md, eth, hop);
		return LPM_EDGE_OUT;
	}
	*slow = true;
	return lpm_ip4(lp, fib, ctrs, m, dst, hop);
}

/* No one next hop for the whole burst (lpm_burst_x4's @p one_hop). */
#define LPM_HOP_MIXED UINT32_MAX

/* The destination address as stored (network order), 0 for ARP. */
static __rte_always_inline uint32_t
lpm_dst_raw(const uint8_t *eth, const struct pf_meta *md)
{
	uint32_t a;

	if (unlikely(md->cls != PF_CLASS_IPV4))
		return 0;
	memcpy(&a, eth + md->l2_len + offsetof(struct rte_ipv4_hdr, dst_addr), sizeof(a));
	return a;
}

/* Where an untagged IPv4 frame holds its source and destination address. */
#define LPM_SD_OFF (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv4_hdr, src_addr))

static __rte_always_inline uint64_t
lpm_ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static __rte_always_inline uint32_t
lpm_ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static __rte_always_inline void
lpm_st32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Where an untagged IPv4 frame holds its TTL, protocol and checksum. */
#define LPM_TTL_OFF (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv4_hdr, time_to_live))

/*
 * lpm_martian for the eight addresses of four packets at once, @p a and
 * @p b holding (source, destination) pairs as loaded (first octet in each
 * lane's low byte): non-zero when any first octet is 0, 127 or 224-255.
 * With t = octet - 1 in 16 bits, 0 and 224-255 are exactly t >= 223.
 */
static __rte_always_inline __m128i
lpm_martian_x4(__m128i a, __m128i b)
{
	const __m128i low = _mm_set1_epi32(0xff);
	__m128i v = _mm_packs_epi32(_mm_and_si128(a, low), _mm_and_si128(b, low));
	__m128i t = _mm_sub_epi16(v, _mm_set1_epi16(1));
	__m128i hi = _mm_cmpeq_epi16(_mm_subs_epu16(_mm_set1_epi16(223), t), _mm_setzero_si128());

	return _mm_or_si128(hi, _mm_cmpeq_epi16(v, _mm_set1_epi16(127)));
}

/* Lane @p k of @p v (@p k a constant once the loop is unrolled: pextrd's immediate). */
static __rte_always_inline uint32_t
lpm_lane(__m128i v, unsigned int k)
{
	switch (k) {
	case 0: return (uint32_t)_mm_cvtsi128_si32(v);
	case 1: return (uint32_t)_mm_extract_epi32(v, 1);
	case 2: return (uint32_t)_mm_extract_epi32(v, 2);
	default: return (uint32_t)_mm_extract_epi32(v, 3);
	}
}

/*
 * A packet of a group of four that failed the group test. Its destination
 * and next hop were taken where an untagged IPv4 frame holds them: another
 * frame (a tag, ARP) gets its own here before the decision.
 */
static uint16_t __rte_noinline
lpm_x4_other(const struct lpm_priv *lp, const struct lpm_fib *fib, uint64_t *ctrs,
	     struct rte_mbuf *m, struct pf_meta *md, uint8_t *eth, uint32_t dst, uint32_t hop)
{
	uint32_t d = rte_be_to_cpu_32(lpm_dst_raw(eth, md));

	if (lpm_plain(fib, md, eth, dst, hop)) {
		lpm_fwd(fib, md, eth, hop);
		return LPM_EDGE_OUT;
	}
	if (md->cls == PF_CLASS_IPV4 && d != dst) {
		if (rte_lpm_lookup(fib->lpm, d, &hop) != 0)
			hop = fib->dflt;
		hop = LPM_HOP(hop);
	}
	return lpm_ip4(lp, fib, ctrs, m, d, hop);
}

/*
 * Four packets whose frames start at @p eth: look them up (one
 * rte_lpm_lookupx4) and test them as a whole, without a branch per packet:
 * the metadata words, TTLs and lengths tested in SSE lanes, the eight
 * addresses' martian test in SSE. When all four pass lpm_plain,
 * forward them and return true; else return false with the destinations
 * (host order, where an untagged IPv4 frame holds them) in @p dst. @p hop
 * gets the four next hops either way. Inlined into the loop (the call and
 * its register saves cost about 7 instructions a packet).
 */
static __rte_always_inline bool
lpm_x4_group(const struct lpm_fib *fib, const uint32_t *t24, __m128i fast_len,
	     struct rte_mbuf **pkts, uint8_t *const *eth, int off, uint32_t *hop, uint32_t *dst)
{
	const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
	const struct lpm_nh *nhs = fib->nh, *nh;
	/* Each lane's bytes 2-3 (the total length) in host order. */
	const __m128i len_be = _mm_set_epi8(-1, -1, 14, 15, -1, -1, 10, 11, -1, -1, 6, 7, -1, -1, 2, 3);
	__m128i sd01, sd23, dv, tw, mw, lw, iv, ev, bad;
	uint16_t k;

	/* Source and destination in one load per packet, the destinations
	 * gathered and swapped for the lookup. */
	sd01 = _mm_set_epi64x((long long)lpm_ld64(eth[1] + LPM_SD_OFF),
			      (long long)lpm_ld64(eth[0] + LPM_SD_OFF));
	sd23 = _mm_set_epi64x((long long)lpm_ld64(eth[3] + LPM_SD_OFF),
			      (long long)lpm_ld64(eth[2] + LPM_SD_OFF));
	dv = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(sd01), _mm_castsi128_ps(sd23),
					     _MM_SHUFFLE(3, 1, 3, 1)));
	dv = _mm_shuffle_epi8(dv, bswap);
	/* The four tbl24 entries straight from the table (fib_fill writes it,
	 * rte_lpm_lookupx4 reads it so): when all four are direct hits their
	 * next hops are the low 24 bits. Anything else (a tbl8 group, no
	 * route) leaves the group to rte_lpm_lookupx4 and packet by packet. */
	iv = _mm_srli_epi32(dv, 8);
	ev = _mm_cvtsi32_si128((int)t24[(uint32_t)_mm_cvtsi128_si32(iv)]);
	ev = _mm_insert_epi32(ev, (int)t24[(uint32_t)_mm_extract_epi32(iv, 1)], 1);
	ev = _mm_insert_epi32(ev, (int)t24[(uint32_t)_mm_extract_epi32(iv, 2)], 2);
	ev = _mm_insert_epi32(ev, (int)t24[(uint32_t)_mm_extract_epi32(iv, 3)], 3);
	if (unlikely(_mm_movemask_epi8(_mm_cmpeq_epi32(
			_mm_and_si128(ev, _mm_set1_epi32(RTE_LPM_VALID_EXT_ENTRY_BITMASK | LPM_HOP_SLOW)),
			_mm_set1_epi32(RTE_LPM_LOOKUP_SUCCESS))) != 0xffff)) {
		rte_lpm_lookupx4(fib->lpm, dv, hop, fib->dflt);
		for (k = 0; k < 4; k++)
			hop[k] = LPM_HOP(hop[k]);
		_mm_storeu_si128((__m128i *)dst, dv);
		return false;
	}
	ev = _mm_and_si128(ev, _mm_set1_epi32(0x00ffffff));
	_mm_store_si128((__m128i *)hop, ev);
	/* TTL, protocol and checksum of the four as 32-bit lanes (IP bytes 8-11, little-endian). */
	tw = _mm_cvtsi32_si128((int)lpm_ld32(eth[0] + LPM_TTL_OFF));
	tw = _mm_insert_epi32(tw, (int)lpm_ld32(eth[1] + LPM_TTL_OFF), 1);
	tw = _mm_insert_epi32(tw, (int)lpm_ld32(eth[2] + LPM_TTL_OFF), 2);
	tw = _mm_insert_epi32(tw, (int)lpm_ld32(eth[3] + LPM_TTL_OFF), 3);
	/* lpm_plain for the four: any bit of bad fails the group. TTL < 2: */
	bad = _mm_cmplt_epi32(_mm_and_si128(tw, _mm_set1_epi32(0xff)), _mm_set1_epi32(2));
	/* The four metadata words (l2_len, l3_len, cls, flags). */
	mw = _mm_cvtsi32_si128((int)lpm_meta_word(pf_meta_at(pkts[0], off)));
	mw = _mm_insert_epi32(mw, (int)lpm_meta_word(pf_meta_at(pkts[1], off)), 1);
	mw = _mm_insert_epi32(mw, (int)lpm_meta_word(pf_meta_at(pkts[2], off)), 2);
	mw = _mm_insert_epi32(mw, (int)lpm_meta_word(pf_meta_at(pkts[3], off)), 3);
	mw = _mm_cmpeq_epi32(_mm_and_si128(mw, _mm_set1_epi32((int)LPM_META_MASK)),
			     _mm_set1_epi32((int)LPM_META_FAST));
	bad = _mm_or_si128(bad, _mm_xor_si128(mw, _mm_set1_epi32(-1)));
	/* Total lengths (IP bytes 2-3 of each lane, to host order) against max_len. */
	lw = _mm_cvtsi32_si128((int)lpm_ld32(eth[0] + RTE_ETHER_HDR_LEN));
	lw = _mm_insert_epi32(lw, (int)lpm_ld32(eth[1] + RTE_ETHER_HDR_LEN), 1);
	lw = _mm_insert_epi32(lw, (int)lpm_ld32(eth[2] + RTE_ETHER_HDR_LEN), 2);
	lw = _mm_insert_epi32(lw, (int)lpm_ld32(eth[3] + RTE_ETHER_HDR_LEN), 3);
	/* All four hops are plain forwards (no LPM_HOP_SLOW): against the
	 * least of their limits; a longer packet goes on its own. */
	bad = _mm_or_si128(bad, _mm_cmpgt_epi32(_mm_shuffle_epi8(lw, len_be), fast_len));
	bad = _mm_or_si128(bad, lpm_martian_x4(sd01, sd23));
	if (unlikely(!_mm_testz_si128(bad, bad))) {
		_mm_storeu_si128((__m128i *)dst, dv);
		return false;
	}
	/* lpm_ttl_dec_fwd for the four lanes: + 0xffff, and 0x10000 more where
	 * the checksum (the lane's top half) is 0xfffe or 0xffff. */
	tw = _mm_add_epi32(_mm_add_epi32(tw, _mm_set1_epi32(0xffff)),
			   _mm_and_si128(_mm_cmpgt_epi32(_mm_srli_epi32(tw, 16),
							 _mm_set1_epi32(0xfffd)),
					 _mm_set1_epi32(0x10000)));
	lpm_st32(eth[0] + LPM_TTL_OFF, (uint32_t)_mm_cvtsi128_si32(tw));
	lpm_st32(eth[1] + LPM_TTL_OFF, (uint32_t)_mm_extract_epi32(tw, 1));
	lpm_st32(eth[2] + LPM_TTL_OFF, (uint32_t)_mm_extract_epi32(tw, 2));
	lpm_st32(eth[3] + LPM_TTL_OFF, (uint32_t)_mm_extract_epi32(tw, 3));
	/* The next hop's 12 MAC bytes and the frame's next four (EtherType,
	 * version/IHL, TOS) in one 16-byte store each. */
	/* The next hops' byte offsets in nh[] (16 bytes each), in one shift. */
	ev = _mm_slli_epi32(ev, 4);
#pragma GCC unroll 4
	for (k = 0; k < 4; k++) {
		struct pf_meta *md = pf_meta_at(pkts[k], off);
		__m128i mac;

		nh = (const struct lpm_nh *)((const uint8_t *)nhs + lpm_lane(ev, k));
		mac = _mm_insert_epi32(_mm_loadu_si128((const __m128i *)nh),
				       (int)lpm_ld32(eth[k] + 12), 3);
		_mm_storeu_si128((__m128i *)eth[k], mac);
		md->out_port = nh->port;
		md->nexthop = hop[k];
	}
	return true;
}

/*
 * The default loop, after DPDK's ip4_lookup_sse.h: four packets at a time
 * (lpm_x4_group), frames and the mbufs' metadata lines prefetched 4 ahead
 * (the frame addresses kept for the group that uses them; reading them
 * brings the mbufs' first lines, which 8-ahead prefetches of both lines
 * cost 4 instructions a packet more for); a group that fails the
 * group test goes packet by packet, the 0-3 left over take rte_lpm_lookup.
 * Returns how many packets took edge out (see LPM_COUNT_OUT). @p one_hop:
 * the next hop of every packet when all took the fast path to the same one
 * (for the burst-port hint: the AND and the OR of the hops agree), else
 * LPM_HOP_MIXED.
 */
static __rte_always_inline uint16_t
lpm_burst_x4(const struct lpm_priv *lp, const struct lpm_fib *fib, uint64_t *ctrs,
	     struct rte_mbuf **pkts, uint16_t n, uint16_t *edge, uint32_t *one_hop,
	     const bool icmp, const bool prefetch)
{
	const uint64_t out4 = LPM_EDGE_OUT * 0x0001000100010001ull;
	const int off = pf_meta_offset;
	uint32_t hop[4] __rte_aligned(16), dst[4];
	__m128i h_or = _mm_setzero_si128(), h_and = _mm_set1_epi32(-1), hv;
	uint32_t s_or = 0, s_and = UINT32_MAX;
	unsigned int i, k, nout = 0;   /* not uint16_t: GCC then keeps them in memory */
	uint16_t e;
	uint8_t *eth[4], *next[4];
	const uint32_t *t24 = (const uint32_t *)fib->lpm->tbl24;
	/* Groups that left the fast path: the others' edges are written only
	 * if the burst turns out mixed (pf_stage.h: one edge needs none). */
	uint64_t slow_groups = 0;
	struct pf_meta *md;
	bool slow = false;
	/* The length limit of lpm_x4_group, once per burst. */
	const __m128i fast_len = _mm_set1_epi32(fib->fast_len);

	RTE_BUILD_BUG_ON(PF_BURST_MAX > 4 * 64);

	for (k = 0; k < 4 && k < n; k++) {
		next[k] = rte_pktmbuf_mtod(pkts[k], uint8_t *);
		if (prefetch) {
			rte_prefetch0(next[k]);
			rte_mbuf_prefetch_part2(pkts[k]);
		}
	}
	for (i = 0; i + 4 <= n; i += 4) {
		memcpy(eth, next, sizeof(eth));
		if (likely(i + 8 <= n)) {
			for (k = 0; k < 4; k++) {
				next[k] = rte_pktmbuf_mtod(pkts[i + 4 + k], uint8_t *);
				if (prefetch) {
					rte_prefetch0(next[k]);
					rte_mbuf_prefetch_part2(pkts[i + 4 + k]);
				}
			}
			/* The next group's tbl24 lines, a group ahead: a table of
			 * 64 MiB misses the caches and the TLB, and the four
			 * lookups of a group would wait for it together. */
			for (k = 0; k < 4; k++)
				rte_prefetch0(&t24[rte_be_to_cpu_32(lpm_ld32(next[k] + LPM_SD_OFF + 4)) >> 8]);
		}
		if (likely(lpm_x4_group(fib, t24, fast_len, pkts + i, eth, off, hop, dst))) {
			hv = _mm_load_si128((const __m128i *)hop);
			h_or = _mm_or_si128(h_or, hv);
			h_and = _mm_and_si128(h_and, hv);
			continue;
		}
		slow = true;
		slow_groups |= 1ull << (i / 4);
		for (k = 0; k < 4; k++) {
			md = pf_meta_at(pkts[i + k], off);
			e = lpm_x4_other(lp, fib, ctrs, pkts[i + k], md, eth[k], dst[k], hop[k]);
			edge[i + k] = e;
			nout += LPM_COUNT_OUT(e, icmp);
		}
	}
	/* The fast groups' packets all went out. */
	nout += 4 * (i / 4 - (unsigned int)__builtin_popcountll(slow_groups));
	for (; i < n; i++) {
		md = pf_meta_at(pkts[i], off);
		eth[0] = rte_pktmbuf_mtod(pkts[i], uint8_t *);
		dst[0] = rte_be_to_cpu_32(lpm_dst_raw(eth[0], md));
		if (rte_lpm_lookup(fib->lpm, dst[0], &hop[0]) != 0)
			hop[0] = fib->dflt;
		hop[0] = LPM_HOP(hop[0]);
		s_or |= hop[0];
		s_and &= hop[0];
		e = lpm_decide(lp, fib, ctrs, pkts[i], md, eth[0], dst[0], hop[0], &slow);
		edge[i] = e;
		nout += LPM_COUNT_OUT(e, icmp);
	}
	/* Fold the lanes: all hops equal when their OR equals their AND. */
	h_or = _mm_or_si128(h_or, _mm_shuffle_epi32(h_or, _MM_SHUFFLE(1, 0, 3, 2)));
	h_or = _mm_or_si128(h_or, _mm_shuffle_epi32(h_or, _MM_SHUFFLE(2, 3, 0, 1)));
	h_and = _mm_and_si128(h_and, _mm_shuffle_epi32(h_and, _MM_SHUFFLE(1, 0, 3, 2)));
	h_and = _mm_and_si128(h_and, _mm_shuffle_epi32(h_and, _MM_SHUFFLE(2, 3, 0, 1)));
	s_or |= (uint32_t)_mm_cvtsi128_si32(h_or);
	s_and &= (uint32_t)_mm_cvtsi128_si32(h_and);
	*one_hop = !slow && s_or == s_and ? s_or : LPM_HOP_MIXED;
	/* Mixed after all: the fast groups' edges now. */
	if (unlikely(nout != n))
		for (k = 0; 4 * k + 4 <= n; k++)
			if (!(slow_groups & (1ull << k)))
				memcpy(&edge[4 * k], &out4, sizeof(out4));
	return nout;
}

/*
 * The other two lookups (the "lookup:" key), kept as references: gather all
 * destinations, look them up with rte_lpm_lookup_bulk or one rte_lpm_lookup
 * each, decide. The three rte_lpm calls report a miss three different ways;
 * all become the default route or fib->miss here.
 */
static __rte_always_inline uint16_t
lpm_burst_ref(const struct lpm_priv *lp, const struct lpm_fib *fib, uint64_t *ctrs,
	      struct rte_mbuf **pkts, uint16_t n, uint16_t *edge, const enum lpm_lookup_mode mode,
	      const bool icmp)
{
	uint32_t dst[PF_BURST_MAX], hop[PF_BURST_MAX];
	uint16_t i, nout = 0, e;
	bool slow = false;

	for (i = 0; i < n; i++)
		dst[i] = rte_be_to_cpu_32(lpm_dst_raw(rte_pktmbuf_mtod(pkts[i], uint8_t *),
						      pf_meta(pkts[i])));
	if (mode == LPM_LOOKUP_BULK) {
		/* rte_lpm_lookup_bulk sizes a VLA by n: n == 0 is undefined (UBSan). */
		if (n != 0)
			rte_lpm_lookup_bulk(fib->lpm, dst, hop, n);
		for (i = 0; i < n; i++)
			hop[i] = (hop[i] & RTE_LPM_LOOKUP_SUCCESS) ? LPM_HOP(hop[i] & 0x00ffffff) : fib->dflt;
	} else {
		for (i = 0; i < n; i++)
			if (rte_lpm_lookup(fib->lpm, dst[i], &hop[i]) != 0)
				hop[i] = fib->dflt;
			else
				hop[i] = LPM_HOP(hop[i]);
	}
	for (i = 0; i < n; i++) {
		e = lpm_decide(lp, fib, ctrs, pkts[i], pf_meta(pkts[i]),
			       rte_pktmbuf_mtod(pkts[i], uint8_t *), dst[i], hop[i], &slow);
		edge[i] = e;
		nout += LPM_COUNT_OUT(e, icmp);
	}
	return nout;
}

/*
 * One burst; @p icmp: an optional edge (icmp, fragment, neigh) is wired. The
 * result says whether the whole burst took one edge, so the runtime moves it
 * without a scan; the burst-port hint when all went out on one port, on the
 * fast path.
 */
static __rte_always_inline uint16_t
lpm_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge,
	  const bool icmp)
{
	const struct lpm_priv *lp = st->priv;
	uint32_t one_hop = LPM_HOP_MIXED;         /* the references give no hint */
	uint64_t *ctrs = st->ctrs;
	const struct lpm_fib *fib;
	uint16_t nout;

	/* One table per burst: an update frees the old one only after this pass. */
	fib = __atomic_load_n(&lp->fib, __ATOMIC_ACQUIRE);
	/* A burst straight from rx needs no prefetch of frames or metadata. */
	if (likely(fib->mode == LPM_LOOKUP_X4))
		nout = pf_burst_fresh(st) ?
			lpm_burst_x4(lp, fib, ctrs, pkts, n, edge, &one_hop, icmp, false) :
			lpm_burst_x4(lp, fib, ctrs, pkts, n, edge, &one_hop, icmp, true);
	else if (fib->mode == LPM_LOOKUP_BULK)
		nout = lpm_burst_ref(lp, fib, ctrs, pkts, n, edge, LPM_LOOKUP_BULK, icmp);
	else
		nout = lpm_burst_ref(lp, fib, ctrs, pkts, n, edge, LPM_LOOKUP_SCALAR, icmp);
	if (likely(nout == n && n != 0)) {
		if (likely(one_hop != LPM_HOP_MIXED))
			st->burst_port = PF_BURST_PORT(fib->nh[one_hop].port);
		return LPM_EDGE_OUT;
	}
	/* With icmp wired, none out may still mean some went to icmp. */
	return nout == 0 && n != 0 && !icmp ? LPM_EDGE_DROP : PF_EDGE_MIXED;
}

/* The burst loops with optional edges wired, out of line: the default path stays lean. */
static uint16_t __rte_noinline
lpm_burst_icmp(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	return lpm_burst(st, pkts, n, edge, true);
}

static uint16_t
lpm_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct lpm_priv *lp = st->priv;

	if (unlikely(lp->slow))
		return lpm_burst_icmp(st, pkts, n, edge);
	return lpm_burst(st, pkts, n, edge, false);
}

static const char *const lpm_edit_tables[] = { "routes", NULL };

const struct pf_stage_ops pf_lpm_ops = {
	.type = "lpm",
	.summary = "IPv4 router (RFC 1812) on rte_lpm, answers ARP and ping for its addresses",
	.flags = PF_STAGE_PORT_TABLES | PF_STAGE_KEEPS_FLOW,
	.priv_size = sizeof(struct lpm_priv),
	.n_edges = LPM_EDGE_MAX,
	.edge_names = lpm_edges,
	.default_edge = LPM_EDGE_OUT,
	.n_ctrs = lpm_ctr_max,
	.ctrs = lpm_ctrs,
	.dp = {
		.process_burst = lpm_process_burst,
	},
	.ctl = {
		.param_keys = lpm_keys,
		.takes = PF_CARRY_IPV4 | PF_CARRY_ARP,
		.edge_carries = lpm_carries,
		.parse = lpm_parse,
		.cfg_free = lpm_cfg_free,
		.init = lpm_init,
		.ports = lpm_ports,
		.swap = &lpm_swap,
		.free = lpm_free,
		.edit = lpm_cfg_edit,
		.edit_tables = lpm_edit_tables,
		.learn = lpm_learn,
		.upkeep = lpm_upkeep,
	},
	.obs = {
		.gauges = lpm_gauges,
		.show = lpm_show,
		.show_tables = lpm_show_tables,
		.trace = lpm_trace,
	},
};
