/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet and topology builders shared by the acl unit and differential tests.
 * Packets are built from their fields (no parser), with metadata as rx sets it.
 */
#ifndef ACL_TEST_PKT_H
#define ACL_TEST_PKT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "pf_test.h"

struct tpkt {
	uint32_t src, dst;       /* host order */
	uint8_t proto;
	uint16_t sport, dport;
	uint16_t frag_off;       /* in 8-byte units; != 0 makes a non-first fragment */
	bool mf;
	uint8_t tcp_flags;
	uint8_t tcp_doff;        /* 0: 5 */
	int l4_len;              /* bytes of L4 after the IPv4 header; -1: natural size */
	/* IPv6 (v6 set): src6/dst6 instead of src/dst; a fragment header when
	 * frag_off or mf; ext: bytes of hop-by-hop options before it (0, 8, 16). */
	bool v6;
	uint8_t src6[16], dst6[16];
	uint8_t ext;
};

/* Bytes of L4 a test packet carries. */
static inline uint16_t
tpkt_l4n(const struct tpkt *t)
{
	if (t->l4_len >= 0)
		return (uint16_t)t->l4_len;
	if (t->frag_off != 0)
		return 16;
	return t->proto == 6 ? 20 : t->proto == 17 ? 8 : t->proto == 132 ? 12 : 8;
}

/* The L4 header of a first fragment or whole packet. Ports first in TCP,
 * UDP and SCTP; written even when l4n is short so a parser that over-reads
 * would see plausible ports. */
static inline void
tpkt_l4_write(const struct tpkt *t, uint8_t *l4, uint16_t l4n)
{
	if (t->frag_off != 0)
		return;
	l4[0] = (uint8_t)(t->sport >> 8), l4[1] = (uint8_t)t->sport;
	l4[2] = (uint8_t)(t->dport >> 8), l4[3] = (uint8_t)t->dport;
	if (t->proto == 6) {
		l4[12] = (uint8_t)((t->tcp_doff ? t->tcp_doff : 5) << 4);
		l4[13] = t->tcp_flags;
	}
	if (t->proto == 17)
		l4[5] = (uint8_t)l4n;
}

/* Build an Ethernet + IPv6 (+ extension headers + L4) frame with rx's metadata. */
static inline struct rte_mbuf *
tpkt6_mbuf(const struct tpkt *t)
{
	uint8_t b[192] = { 0 }, *l4, *nh;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(b + 14);
	bool frag = t->frag_off != 0 || t->mf;
	uint16_t l4n, l3 = 40;
	struct rte_mbuf *m;

	l4n = tpkt_l4n(t);
	memcpy(b, "\x02\x00\x00\x00\x00\x10\x02\x00\x00\x00\x00\x01\x86\xdd", 14);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->hop_limits = 64;
	memcpy(ip->src_addr, t->src6, 16);
	memcpy(ip->dst_addr, t->dst6, 16);
	nh = &ip->proto;
	if (t->ext != 0) {
		*nh = 0;                        /* hop-by-hop options */
		nh = b + 14 + l3;
		nh[1] = (uint8_t)(t->ext / 8 - 1);
		nh[2] = 1;                      /* PadN over the rest */
		nh[3] = (uint8_t)(t->ext - 4);
		l3 += t->ext;
	}
	if (frag) {
		*nh = 44;
		nh = b + 14 + l3;
		nh[2] = (uint8_t)(t->frag_off >> 5);
		nh[3] = (uint8_t)((t->frag_off << 3) | (t->mf ? 1 : 0));
		nh[7] = 1;                      /* identification */
		l3 += 8;
	}
	*nh = t->proto;
	l4 = b + 14 + l3;
	tpkt_l4_write(t, l4, l4n);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)(l3 - 40 + l4n));
	m = pf_test_mbuf(b, (uint16_t)(14 + l3 + l4n), 0);
	pf_meta(m)->cls = PF_CLASS_IPV6;
	pf_meta(m)->l2_len = 14;
	pf_meta(m)->l3_len = (uint8_t)l3;
	pf_meta(m)->l4_proto = t->proto;
	if (frag)
		pf_meta(m)->flags |= PF_META_IP_FRAG;
	if (t->frag_off != 0)
		pf_meta(m)->flags |= PF_META_IP_NONFIRST;
	return m;
}

/* Build an Ethernet + IPv4 (+ L4) frame with rx's metadata. */
static inline struct rte_mbuf *
tpkt_mbuf(const struct tpkt *t)
{
	uint8_t b[128] = { 0 };
	uint16_t l4n, tot, off;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(b + 14);
	uint8_t *l4 = b + 34;
	struct rte_mbuf *m;

	if (t->v6)
		return tpkt6_mbuf(t);
	l4n = tpkt_l4n(t);
	memcpy(b, "\x02\x00\x00\x00\x00\x10\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	tot = (uint16_t)(20 + l4n);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(tot);
	ip->time_to_live = 64;
	ip->next_proto_id = t->proto;
	off = (uint16_t)(t->frag_off & RTE_IPV4_HDR_OFFSET_MASK);
	if (t->mf)
		off |= RTE_IPV4_HDR_MF_FLAG;
	ip->fragment_offset = rte_cpu_to_be_16(off);
	ip->src_addr = rte_cpu_to_be_32(t->src);
	ip->dst_addr = rte_cpu_to_be_32(t->dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	tpkt_l4_write(t, l4, l4n);
	m = pf_test_mbuf(b, (uint16_t)(14 + tot), 0);
	pf_meta(m)->cls = PF_CLASS_IPV4;
	pf_meta(m)->l2_len = 14;
	pf_meta(m)->l3_len = 20;
	if (t->frag_off != 0 || t->mf)
		pf_meta(m)->flags |= PF_META_IP_FRAG;
	if (t->frag_off != 0)
		pf_meta(m)->flags |= PF_META_IP_NONFIRST;
	return m;
}

/*
 * Topology around one acl stage named "acl"; @p params is the YAML of its
 * parameters, indented by four spaces per line.
 */
static inline char *
acl_topo_yaml(const char *params)
{
	static const char head[] =
		"ports:\n"
		"  p0: { device: \"net_null0\" }\n"
		"  p1: { device: \"net_null1\" }\n"
		"stages:\n"
		"  rx: { type: rx, ports: [p0, p1], next: { ipv4: acl, ipv6: acl } }\n"
		"  acl:\n"
		"    type: acl\n"
		"    next: xc\n";
	static const char tail[] =
		"  xc: { type: xconnect, pairs: { p0: p1, p1: p0 }, next: tx }\n"
		"  tx: { type: tx, ports: [p0, p1] }\n"
		"lcores:\n"
		"  1: [rx, acl, xc, tx]\n";
	size_t n = sizeof(head) + strlen(params) + sizeof(tail) + 2;
	char *y = malloc(n);

	snprintf(y, n, "%s%s%s%s", head, params,
		 params[0] != '\0' && params[strlen(params) - 1] != '\n' ? "\n" : "", tail);
	return y;
}

static inline struct pf_stage *
acl_stage(const char *params, struct pf_topo **topo)
{
	char *y = acl_topo_yaml(params);
	struct pf_stage *st = pf_test_stage(y, "acl", topo);

	free(y);
	return st;
}

#endif /* ACL_TEST_PKT_H */
