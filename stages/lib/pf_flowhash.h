/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The symmetric flow hash that picks a stage instance (`instances: N`).
 *
 * Both directions of a flow hash alike, so a stateful stage instance sees
 * the whole conversation:
 *  - IPv4 TCP/UDP (not a non-first fragment, ports inside the frame):
 *    min(src, dst), max(src, dst), proto, min(sport, dport), max(sport, dport);
 *  - other IPv4 (other protocols, non-first fragments, truncated L4):
 *    min/max of the addresses and proto;
 *  - IPv6: the same with each address folded to 64 bits; the protocol and
 *    the ports are those after the extension headers rx walked (l4_proto,
 *    l3_len), none for a non-first fragment;
 *  - anything else (ARP, other EtherTypes): min/max of the two MACs.
 * That is a function of what acl's session key holds (it keys non-first
 * fragments and portless protocols on the address pair too), so every packet
 * of an acl session reaches the instance holding the session.
 *
 * The mix is fixed (no per-run seed) so replay tests are deterministic.
 * Everything is read from the first segment within data_len, using the
 * offsets rx stored in the metadata.
 */
#ifndef PF_FLOWHASH_H
#define PF_FLOWHASH_H

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "pf_meta.h"

/** splitmix64's finaliser: every input bit reaches every output bit. */
static inline uint64_t
pf_flow_mix(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ull;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z;
}

/* Order-free combination of two endpoints and the rest of the key, then one mix. */
static inline uint64_t
pf_flow_pair(uint64_t a, uint64_t b, uint64_t extra)
{
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;

	return pf_flow_mix(lo * 0x9e3779b97f4a7c15ull + hi + extra * 0xc2b2ae3d27d4eb4full);
}

/* Sorted port pair and protocol, or just the protocol when there are no ports. */
static inline uint64_t
pf_flow_l4(const uint8_t *l4, uint32_t avail, uint8_t proto)
{
	uint32_t w;

	if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP) || avail < 4)
		return proto;
	/* One load: w = sport << 16 | dport; the pair sorted is w or w rotated. */
	memcpy(&w, l4, 4);
	w = rte_be_to_cpu_32(w);
	return (uint64_t)proto << 32 | ((w >> 16) < (w & 0xffff) ? w : w << 16 | w >> 16);
}

/** Symmetric 32-bit flow hash of one packet (see the file comment). */
static inline uint32_t
pf_flow_hash(struct rte_mbuf *m)
{
	const struct pf_meta *md = pf_meta(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l2 = md->l2_len, l3 = md->l3_len;
	uint64_t x;
	uint32_t a, b;
	uint16_t c, e;

	if (md->cls == PF_CLASS_IPV4 && l3 >= 20 && len >= l2 + l3) {
		const uint8_t *ip = d + l2;
		uint16_t tot16, frag;
		uint32_t tot, avail = len - l2 - l3;

		/* Whole-width loads: a narrower copy into a wider variable stalls
		 * store forwarding (tens of cycles per packet). */
		memcpy(&tot16, ip + 2, 2);
		memcpy(&frag, ip + 6, 2);
		memcpy(&a, ip + 12, 4);
		memcpy(&b, ip + 16, 4);
		tot = rte_be_to_cpu_16(tot16);
		if (tot >= l3 && tot - l3 < avail)
			avail = tot - l3;
		/* Non-first fragments carry no ports. */
		x = (md->flags & PF_META_IP_NONFIRST) || (frag & rte_cpu_to_be_16(0x1fff)) != 0 ?
			ip[9] : pf_flow_l4(ip + l3, avail, ip[9]);
		return (uint32_t)(pf_flow_pair(a, b, x) >> 32);
	}
	if (md->cls == PF_CLASS_IPV6 && l3 >= 40 && len >= l2 + l3) {
		const uint8_t *ip = d + l2;
		uint32_t tot = 40u + (uint32_t)(ip[4] << 8 | ip[5]), avail = len - l2 - l3;
		uint64_t w[4];

		if (tot >= l3 && tot - l3 < avail)
			avail = tot - l3;
		memcpy(w, ip + 8, 32);
		/* The ports follow the extension headers rx walked (l3_len, l4_proto),
		 * as in acl's session key; non-first fragments have none. */
		x = md->flags & PF_META_IP_NONFIRST ? md->l4_proto :
			pf_flow_l4(ip + l3, avail, md->l4_proto);
		return (uint32_t)(pf_flow_pair(w[0] ^ w[1], w[2] ^ w[3], x) >> 32);
	}
	if (len < 12)
		return 0;
	memcpy(&a, d, 4);
	memcpy(&c, d + 4, 2);
	memcpy(&b, d + 6, 4);
	memcpy(&e, d + 10, 2);
	return (uint32_t)(pf_flow_pair((uint64_t)a << 16 | c, (uint64_t)b << 16 | e, 0) >> 32);
}

/**
 * The addresses alone (IPv4, IPv6: as pf_flow_hash folds them; 0 for
 * anything else): what every fragment of a datagram has, the first one too.
 */
static inline uint32_t
pf_flow_hash_addr(struct rte_mbuf *m)
{
	const struct pf_meta *md = pf_meta(m);
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *) + md->l2_len;
	uint32_t len = rte_pktmbuf_data_len(m);
	uint64_t w[4];
	uint32_t a, b;

	if (md->cls == PF_CLASS_IPV4 && len >= md->l2_len + 20u) {
		memcpy(&a, ip + 12, 4);
		memcpy(&b, ip + 16, 4);
		return (uint32_t)(pf_flow_pair(a, b, 0) >> 32);
	}
	if (md->cls == PF_CLASS_IPV6 && len >= md->l2_len + 40u) {
		memcpy(w, ip + 8, 32);
		return (uint32_t)(pf_flow_pair(w[0] ^ w[1], w[2] ^ w[3], 0) >> 32);
	}
	return 0;
}

/** Instance (0 .. @p n-1) of a hash: multiply-shift, uniform for any n. */
static inline uint32_t
pf_flow_pick(uint32_t hash, uint32_t n)
{
	return (uint32_t)(((uint64_t)hash * n) >> 32);
}

#define PF_FLOW_BURST_MAX 256

/** The instance of every packet of a burst of at most PF_FLOW_BURST_MAX. */
static inline void
pf_flow_pick_burst(struct rte_mbuf **pkts, uint16_t n, uint32_t n_inst, uint8_t *inst)
{
	uint32_t h[PF_FLOW_BURST_MAX];
	uint16_t i;

	/* Hashes first, into a word array: byte stores into inst[] between the
	 * header reads would make the compiler reload every field. */
	for (i = 0; i < n; i++)
		h[i] = pf_flow_hash(pkts[i]);
	for (i = 0; i < n; i++)
		inst[i] = (uint8_t)pf_flow_pick(h[i], n_inst);
}

#endif /* PF_FLOWHASH_H */
