/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Per-packet metadata, kept in an mbuf dynamic field.
 *
 * The rx stage parses every packet once and stores what later stages need
 * (offsets, class, ingress port); lookup stages add the verdict details
 * (egress port, next hop, flood set). Nothing downstream re-parses L2.
 */
#ifndef PF_META_H
#define PF_META_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

/** Largest number of ports (flood sets are a 32-bit mask). */
#define PF_MAX_PORTS 32
/** out_port value: send one copy to every port in flood_mask. */
#define PF_PORT_FLOOD 0xfffe
/** out_port value: not decided yet. */
#define PF_PORT_NONE 0xffff

/** Packet classes found by the rx parser (also the rx stage's edge names). */
enum pf_class {
	PF_CLASS_NONE = 0,
	PF_CLASS_IPV4,
	PF_CLASS_IPV6,
	PF_CLASS_ARP,
	PF_CLASS_OTHER,  /**< any other EtherType: bridged, never routed */
};

/** Flags set by rx. */
#define PF_META_VLAN        0x01  /**< one 802.1Q tag present (vlan_tci valid) */
#define PF_META_L2_BCAST    0x02  /**< destination MAC is ff:ff:ff:ff:ff:ff */
#define PF_META_L2_MCAST    0x04  /**< destination MAC is a group address (incl. bcast) */
#define PF_META_IP_FRAG     0x08  /**< IPv4 MF set or offset != 0; IPv6 fragment header with M or offset */
#define PF_META_IP_NONFIRST 0x10  /**< fragment offset != 0 (IPv4 or IPv6): no L4 header */
#define PF_META_IP_OPTIONS  0x20  /**< IPv4 IHL > 5 */
#define PF_META_L2_LOCAL    0x40  /**< destination MAC is the ingress port's own MAC */

struct pf_meta {
	uint16_t in_port;     /**< pipefwd port index the packet came in on */
	uint16_t out_port;    /**< egress port index, PF_PORT_FLOOD or PF_PORT_NONE */
	uint16_t vlan_tci;    /**< host-order TCI of the 802.1Q tag (0 when untagged) */
	uint8_t l2_len;       /**< bytes before the L3 header (14 or 18) */
	/**
	 * Bytes from the L3 header to the upper-layer header: IPv4 IHL * 4;
	 * IPv6 40 plus every extension header rx walked (at most
	 * PF_IP6_EXT_MAX_LEN bytes in PF_IP6_EXT_MAX_HDRS headers), so
	 * l2_len + l3_len is where the TCP/UDP/ICMPv6 header starts (for a
	 * non-first fragment, where the fragment's data starts).
	 */
	uint8_t l3_len;
	uint8_t cls;          /**< enum pf_class */
	uint8_t flags;        /**< PF_META_* */
	uint16_t bd;          /**< bridge domain index (l2fib) */
	uint32_t flood_mask;  /**< ports to replicate to when out_port == PF_PORT_FLOOD */
	/**
	 * Upper-layer protocol (IPPROTO_*): IPv4 protocol field; IPv6 the Next
	 * Header that ends rx's extension header walk (never 0, 43, 44 or 60,
	 * except for a non-first fragment: its fragment header's Next Header,
	 * whatever it is).
	 * 0 for other classes.
	 */
	uint8_t l4_proto;     /* first in its word: rx stores it zero-extended, with rsvd */
	uint8_t rsvd[3];      /**< zero: keeps the struct free of padding */
	uint32_t nexthop;     /**< next-hop id chosen by a routing stage */
};

/** IPv6 extension headers rx walks: at most this many ... */
#define PF_IP6_EXT_MAX_HDRS 8
/** ... and this many bytes in all (40 + 208 fits pf_meta.l3_len). */
#define PF_IP6_EXT_MAX_LEN 208

/**
 * An ICMP error to send, as a routing stage hands it to the icmp stage in
 * pf_meta.nexthop: type, code and a 16-bit argument: for 3/4 the next-hop
 * MTU of RFC 1191, for 12/0 the pointer (RFC 792: the octet in error).
 */
#define PF_META_ICMP(type, code, mtu) \
	((uint32_t)(type) << 24 | (uint32_t)(code) << 16 | (uint32_t)(uint16_t)(mtu))
#define PF_ICMP_DEST_UNREACH 3
#define PF_ICMP_TIME_EXCEEDED 11
#define PF_ICMP_PARAM_PROBLEM 12
#define PF_META_ICMP_TYPE(nh) ((uint8_t)((nh) >> 24))
#define PF_META_ICMP_CODE(nh) ((uint8_t)((nh) >> 16))
#define PF_META_ICMP_MTU(nh) ((uint16_t)(nh))

extern int pf_meta_offset;

/** Register the dynfield (idempotent). Needs EAL. Returns 0 or -errno. */
int pf_meta_register(void);

/**
 * The dynfield offset, to keep in a local for a burst. pf_meta_offset is a
 * global: after any byte store (the metadata flags, a MAC) the compiler must
 * assume it changed and reload it, so a hot loop reads it once and uses
 * pf_meta_at().
 */
static __rte_always_inline int
pf_meta_off(void)
{
	return pf_meta_offset;
}

/** The metadata of @p m at dynfield offset @p off (from pf_meta_off()). */
static __rte_always_inline struct pf_meta *
pf_meta_at(struct rte_mbuf *m, int off)
{
	return RTE_MBUF_DYNFIELD(m, off, struct pf_meta *);
}

/** The metadata of @p m (one load of the offset; hot loops use pf_meta_at()). */
static __rte_always_inline struct pf_meta *
pf_meta(struct rte_mbuf *m)
{
	return pf_meta_at(m, pf_meta_offset);
}

#endif /* PF_META_H */
