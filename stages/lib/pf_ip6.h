/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * IPv6 address helpers shared by the IPv6 stages (lpm6, icmp6): the
 * link-local address a port derives from its MAC, and the address classes
 * RFC 4291 says a router must not forward.
 */
#ifndef PF_IP6_H
#define PF_IP6_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

/** fe80::/64 + modified EUI-64 of @p mac (RFC 4291 2.5.6, appendix A). */
static inline void
pf_ip6_linklocal(const uint8_t mac[6], uint8_t out[16])
{
	memset(out, 0, 16);
	out[0] = 0xfe;
	out[1] = 0x80;
	out[8] = mac[0] ^ 0x02;
	out[9] = mac[1];
	out[10] = mac[2];
	out[11] = 0xff;
	out[12] = 0xfe;
	out[13] = mac[3];
	out[14] = mac[4];
	out[15] = mac[5];
}

/** fe80::/10 */
static inline bool
pf_ip6_is_linklocal(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/** ff00::/8 */
static inline bool
pf_ip6_is_mcast(const uint8_t *a)
{
	return a[0] == 0xff;
}

/** ::/96 with last word 0 (unspecified) or 1 (loopback): 0 or 1, else -1. */
static inline int
pf_ip6_zero_or_loopback(const uint8_t *a)
{
	uint64_t hi, lo;

	memcpy(&hi, a, 8);
	memcpy(&lo, a + 8, 8);
	if (hi != 0 || (lo & 0x00ffffffffffffffull) != 0)
		return -1;
	return a[15] <= 1 ? a[15] : -1;
}

/** ::ffff:0:0/96, IPv4-mapped (RFC 4291 2.5.5.2). */
static inline bool
pf_ip6_is_v4mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a, pfx, sizeof(pfx)) == 0;
}

/** ff02::1:ff00:0/104 with the low 24 bits of @p target (RFC 4291 2.7.1). */
static inline bool
pf_ip6_is_solicited_for(const uint8_t *dst, const uint8_t *target)
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	return memcmp(dst, pfx, sizeof(pfx)) == 0 && memcmp(dst + 13, target + 13, 3) == 0;
}

/** Is @p a inside prefix @p pfx / @p len? */
static inline bool
pf_ip6_in_prefix(const uint8_t *a, const uint8_t *pfx, uint8_t len)
{
	uint32_t b;

	for (b = 0; b < len; b++)
		if ((a[b / 8] ^ pfx[b / 8]) & (0x80 >> (b % 8)))
			return false;
	return true;
}

/** Is @p a one of the @p n addresses of @p list? */
static inline bool
pf_ip6_in_list(const uint8_t (*list)[16], uint32_t n, const uint8_t *a)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (memcmp(list[i], a, 16) == 0)
			return true;
	return false;
}

/**
 * One's complement sum (not inverted, folded) of the ICMPv6 message @p l4 of
 * @p len bytes and its pseudo-header (RFC 8200 8.1) with @p src / @p dst
 * (the 32 bytes of the IPv6 header's addresses). A message is intact when
 * the sum is 0xffff; a new one gets ~sum with its checksum field 0.
 */
static inline uint16_t
pf_icmp6_sum(const uint8_t *addrs, const void *l4, uint32_t len)
{
	uint32_t s = (uint32_t)rte_raw_cksum(addrs, 32) + rte_raw_cksum(l4, len) +
		     rte_cpu_to_be_16((uint16_t)len) + rte_cpu_to_be_16(IPPROTO_ICMPV6);

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#endif /* PF_IP6_H */
