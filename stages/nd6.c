/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour Discovery messages (stages/nd6.h): validation, the NS of a
 * resolver, the NA answering an NS.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "nd6.h"
#include "pf_ip6.h"

int
nd6_parse(const struct rte_ipv6_hdr *ip, uint8_t l3_len, const uint8_t *l4, uint32_t l4len,
	  struct nd6_msg *msg)
{
	const uint8_t *o = l4 + 24;
	uint32_t left, ol;

	if (l4len < 24 || (l4[0] != ND6_NS && l4[0] != ND6_NA) || l4[1] != 0 ||
	    ip->hop_limits != 255 || l3_len != 40 || pf_ip6_is_mcast(l4 + 8))
		return -1;
	memset(msg, 0, sizeof(*msg));
	msg->type = l4[0];
	memcpy(msg->target, l4 + 8, 16);
	if (msg->type == ND6_NA) {
		msg->flags = l4[4] & (ND6_NA_ROUTER | ND6_NA_SOLICITED | ND6_NA_OVERRIDE);
		if (pf_ip6_is_mcast(ip->dst_addr) && (msg->flags & ND6_NA_SOLICITED))
			return -1;
	} else if (pf_ip6_is_mcast(ip->dst_addr) &&
		   !pf_ip6_is_solicited_for(ip->dst_addr, msg->target)) {
		return -1;
	}
	for (left = l4len - 24; left >= 2; left -= ol, o += ol) {
		ol = o[1] * 8u;
		if (ol == 0 || ol > left)
			return -1;
		if (ol >= 8 && o[0] == (msg->type == ND6_NS ? ND6_OPT_SLLA : ND6_OPT_TLLA)) {
			memcpy(msg->lla, o + 2, 6);
			msg->has_lla = true;
		}
	}
	return 0;
}

/* The 32-byte NS or NA after the IPv6 header @p ip: one link-layer option, the checksum. */
static void
nd6_msg_fill(uint8_t *ip, uint8_t type, uint8_t flags, const uint8_t *target, uint8_t opt,
	     const uint8_t *mac)
{
	uint8_t *l4 = ip + 40;
	uint16_t ck;

	memset(l4, 0, 32);
	l4[0] = type;
	l4[4] = flags;
	memcpy(l4 + 8, target, 16);
	l4[24] = opt;
	l4[25] = 1;
	memcpy(l4 + 26, mac, 6);
	ck = (uint16_t)~pf_icmp6_sum(ip + 8, l4, 32);
	memcpy(l4 + 2, &ck, 2);
}

void
nd6_ns_build(uint8_t *f, const uint8_t smac[6], const uint8_t src[16], const uint8_t target[16],
	     const uint8_t *dmac)
{
	static const uint8_t snm[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	uint8_t *ip = f + RTE_ETHER_HDR_LEN;

	memset(f, 0, ND6_NS_FRAME_LEN);
	if (dmac != NULL) {
		memcpy(f, dmac, 6);
		memcpy(ip + 24, target, 16);
	} else {
		f[0] = 0x33;
		f[1] = 0x33;
		f[2] = 0xff;
		memcpy(f + 3, target + 13, 3);
		memcpy(ip + 24, snm, sizeof(snm));
		memcpy(ip + 24 + 13, target + 13, 3);
	}
	memcpy(f + 6, smac, 6);
	f[12] = RTE_ETHER_TYPE_IPV6 >> 8;
	f[13] = RTE_ETHER_TYPE_IPV6 & 0xff;
	ip[0] = 0x60;
	ip[5] = 32;
	ip[6] = IPPROTO_ICMPV6;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	nd6_msg_fill(ip, ND6_NS, 0, target, ND6_OPT_SLLA, smac);
}

int
nd6_na_reply(struct rte_mbuf *m, struct pf_meta *md, const uint8_t mac[6],
	     const uint8_t target[16], const uint8_t to[6])
{
	uint32_t l4len;
	uint8_t *eth, *ip, tgt[16], dst[6];

	memcpy(tgt, target, 16);
	memcpy(dst, to, 6);
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, md->l2_len);
	l4len = rte_be_to_cpu_16(((struct rte_ipv6_hdr *)ip)->payload_len) + 40u - md->l3_len;
	/* The NA is 32 bytes of ICMPv6: NA header and one option. */
	if (l4len < 32 && rte_pktmbuf_append(m, (uint16_t)(32 - l4len)) == NULL)
		return -1;
	if (l4len > 32)
		rte_pktmbuf_trim(m, (uint16_t)(l4len - 32));
	if (md->l2_len != RTE_ETHER_HDR_LEN) {
		rte_pktmbuf_adj(m, md->l2_len - RTE_ETHER_HDR_LEN);
		md->l2_len = RTE_ETHER_HDR_LEN;
		md->flags &= (uint8_t)~PF_META_VLAN;
		md->vlan_tci = 0;
	}
	eth = rte_pktmbuf_mtod(m, uint8_t *);
	ip = eth + RTE_ETHER_HDR_LEN;
	memcpy(eth, dst, 6);
	memcpy(eth + 6, mac, 6);
	memcpy(ip + 24, ip + 8, 16);
	memcpy(ip + 8, tgt, 16);
	ip[4] = 0;
	ip[5] = 32;
	ip[7] = 255;
	nd6_msg_fill(ip, ND6_NA, ND6_NA_ROUTER | ND6_NA_SOLICITED | ND6_NA_OVERRIDE, tgt,
		     ND6_OPT_TLLA, mac);
	md->out_port = md->in_port;
	md->l4_proto = IPPROTO_ICMPV6;
	md->flags &= (uint8_t)~(PF_META_L2_BCAST | PF_META_L2_MCAST);
	return 0;
}
