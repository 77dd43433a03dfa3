/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour Discovery (RFC 4861) messages, shared by lpm6 (answers NSs when
 * no neigh stage is wired, hands NS/NA to it otherwise) and neigh (resolves
 * by NS/NA): validation of NS (7.1.1) and NA (7.1.2), the NS a resolver
 * sends, the NA answering an NS in place. No stage state: unit-tested alone.
 */
#ifndef PF_ND6_H
#define PF_ND6_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ip.h>

#include "pf_meta.h"

#define ND6_NS 135
#define ND6_NA 136
#define ND6_OPT_SLLA 1
#define ND6_OPT_TLLA 2
#define ND6_NA_ROUTER 0x80
#define ND6_NA_SOLICITED 0x40
#define ND6_NA_OVERRIDE 0x20

/** An NS made by nd6_ns_build: Ethernet, IPv6, NS (24) and a source link-layer option (8). */
#define ND6_NS_FRAME_LEN (14 + 40 + 32)

/** What an NS or NA says (pointers into nothing: copies). */
struct nd6_msg {
	uint8_t type;        /**< ND6_NS or ND6_NA */
	uint8_t flags;       /**< NA: ND6_NA_* bits; NS: 0 */
	bool has_lla;        /**< NS: source, NA: target link-layer address option present */
	uint8_t lla[6];
	uint8_t target[16];
};

/**
 * Validate the NS or NA @p l4 (@p l4len bytes of ICMPv6, checksum already
 * checked) under the IPv6 header @p ip with @p l3_len bytes of IPv6 headers:
 * RFC 4861 7.1.1 (NS) and 7.1.2 (NA): hop limit 255, code 0, at least 24
 * bytes, no extension headers, target not multicast, every option of
 * non-zero length within the message; an NS to a multicast address only to
 * the target's solicited-node address; an NA to a multicast address without
 * the Solicited flag. Returns 0 and fills @p msg, or -1.
 */
int nd6_parse(const struct rte_ipv6_hdr *ip, uint8_t l3_len, const uint8_t *l4, uint32_t l4len,
	      struct nd6_msg *msg);

/**
 * Write an NS for @p target into @p f (ND6_NS_FRAME_LEN bytes) from MAC
 * @p smac and address @p src: to the target's solicited-node address and
 * its 33:33:ff:xx:xx:xx MAC when @p dmac is NULL, else unicast to @p target
 * at @p dmac (a probe); hop limit 255, the source link-layer option.
 */
void nd6_ns_build(uint8_t *f, const uint8_t smac[6], const uint8_t src[16],
		  const uint8_t target[16], const uint8_t *dmac);

/**
 * Turn the NS in @p m (from a source that is not ::) into the solicited NA
 * for @p target in place (RFC 4861 7.2.4): Router, Solicited and Override
 * set, the target link-layer option @p mac, from @p target to the NS's
 * source at MAC @p to, hop limit 255; a VID 0 tag is removed. Sets
 * md->out_port to md->in_port. Returns 0, or -1 when the mbuf has no room.
 */
int nd6_na_reply(struct rte_mbuf *m, struct pf_meta *md, const uint8_t mac[6],
		 const uint8_t target[16], const uint8_t to[6]);

#endif /* PF_ND6_H */
