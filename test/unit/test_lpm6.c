/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the lpm6 stage's burst loop: four packets at a time with one
 * test for the group, the 0-3 left over one by one. Every kind of packet the
 * group test must reject (hop limit 0, 1; payload length 0 and one over the
 * egress limit; a special first byte of source or destination; a tag, a
 * group or foreign MAC, not IPv6; local, connected and "no route" entries)
 * at every place of groups and bursts of 1 to 40: each takes its kind's edge
 * and drop counter or egress port, and the bytes, metadata and counters are
 * those of the same packets sent one per burst (the per-packet path), plus
 * the burst-port hint checked by pf_test_process. Twice: without a default
 * route, and with ::/0 and a route of one of its halves (the table holds
 * ::/0 as ::/1 and 8000::/1 and never misses).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "pf_test.h"

static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_p1[6] = { 2, 0, 0, 0, 0, 0x11 };
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa1 };
static const uint8_t all_nodes[6] = { 0x33, 0x33, 0, 0, 0, 1 };

/* p1 takes payloads of up to 1400 - 40 = 1360 bytes; @p extra: more routes. */
#define TOPO(extra) \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv6: \"2001:db8:1::1/64\" }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv6: \"2001:db8:2::1/64\",\n" \
	"        mtu: 1400 }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1], next: { ipv6: lpm6 } }\n" \
	"  lpm6:\n" \
	"    type: lpm6\n" \
	"    nexthops:\n" \
	"      r1: { port: p1, mac: \"02:00:00:00:01:01\" }\n" \
	"      r2: { port: p0, mac: \"02:00:00:00:01:02\" }\n" \
	"    routes:\n" \
	"      - { prefix: \"2001:db8:100::/48\", via: r1 }\n" \
	"      - { prefix: \"2001:db8:200::/48\", via: r2 }\n" \
	"      - { prefix: \"fe00::/8\", via: r1 }\n" \
	extra \
	"    next: tx\n" \
	"  tx: { type: tx, ports: [p0, p1] }\n" \
	"lcores:\n  1: [rx, lpm6, tx]\n"

enum { L_DROP, L_OUT };

static int
group_setup(void **state)
{
	static char name[32];

	(void)state;
	snprintf(name, sizeof(name), "lpm6_%d", (int)getpid());
	return pf_test_eal_init(name);
}

/*
 * A UDP frame to the router's p0 MAC on port 0, as rx leaves it: @p plen
 * in the header (the frame carries 16 bytes of payload whatever it says),
 * @p tag: a priority tag (VID 0) before the IPv6 header.
 */
static struct rte_mbuf *
udp6(const uint8_t *dmac, const char *src, const char *dst, uint8_t hlim, uint16_t plen,
     bool tag)
{
	uint8_t f[128] = { 0 }, *ip = f + (tag ? 18 : 14);
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(f, dmac, 6);
	memcpy(f + 6, mac_a, 6);
	if (tag) {
		f[12] = 0x81;
		f[16] = 0x86;
		f[17] = 0xdd;
	} else {
		f[12] = 0x86;
		f[13] = 0xdd;
	}
	ip[0] = 0x60;
	ip[4] = (uint8_t)(plen >> 8);
	ip[5] = (uint8_t)plen;
	ip[6] = IPPROTO_UDP;
	ip[7] = hlim;
	assert_int_equal(inet_pton(AF_INET6, src, ip + 8), 1);
	assert_int_equal(inet_pton(AF_INET6, dst, ip + 24), 1);
	m = pf_test_mbuf(f, (uint16_t)(ip - f + 56), 0);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV6;
	md->l2_len = (uint8_t)(ip - f);
	md->l3_len = 40;
	md->l4_proto = IPPROTO_UDP;
	if (dmac[0] & 1)
		md->flags |= PF_META_L2_MCAST;
	else if (memcmp(dmac, mac_p0, 6) == 0)
		md->flags |= PF_META_L2_LOCAL;
	return m;
}

#define H "2001:db8:1::9"
#define FAR1 "2001:db8:100::7"
#define FAR2 "2001:db8:200::7"

/* One frame of kind @p k (lpm6_kinds[k]). */
static struct rte_mbuf *
mk_kind(unsigned int k)
{
	struct rte_mbuf *m;

	switch (k) {
	case 0: return udp6(mac_p0, H, FAR1, 64, 16, false);
	case 1: return udp6(mac_p0, H, FAR2, 64, 16, false);
	case 2: return udp6(mac_p0, H, FAR1, 2, 16, false);
	case 3: return udp6(mac_p0, H, FAR1, 1, 16, false);
	case 4: return udp6(mac_p0, H, FAR1, 0, 16, false);
	case 5: return udp6(mac_p0, H, FAR1, 64, 1360, false);
	case 6: return udp6(mac_p0, H, FAR1, 64, 1361, false);
	case 7: return udp6(mac_p0, H, FAR1, 64, 0, false);
	case 8: return udp6(mac_p0, H, FAR1, 255, 1, false);
	case 9: return udp6(mac_p0, "::", FAR1, 64, 16, false);
	case 10: return udp6(mac_p0, "::1", FAR1, 64, 16, false);
	case 11: return udp6(mac_p0, "::ffff:10.0.0.1", FAR1, 64, 16, false);
	case 12: return udp6(mac_p0, "ff02::1", FAR1, 64, 16, false);
	case 13: return udp6(mac_p0, "fe80::1", FAR1, 64, 16, false);
	case 14: return udp6(mac_p0, H, "::1", 64, 16, false);
	case 15: return udp6(mac_p0, H, "ff0e::1", 64, 16, false);
	case 16: return udp6(mac_p0, H, "fe80::7", 64, 16, false);
	case 17: return udp6(mac_p0, H, "2001:db8:300::7", 64, 16, false);
	case 18: return udp6(mac_p0, H, "2001:db8:2::7", 64, 16, false);
	case 19: return udp6(mac_p0, H, "2001:db8:1::1", 64, 16, false);
	case 20: return udp6(all_nodes, H, FAR1, 64, 16, false);
	case 21: return udp6(mac_p1, H, FAR1, 64, 16, false);
	case 22: return udp6(mac_p0, H, FAR2, 64, 16, true);
	case 23:
		m = udp6(mac_p0, H, FAR1, 64, 16, false);
		pf_meta(m)->flags |= PF_META_VLAN;
		return m;
	case 24:
		m = udp6(mac_p0, H, FAR1, 64, 16, false);
		pf_meta(m)->cls = PF_CLASS_ARP;
		return m;
	case 25: return udp6(mac_p0, "feed::1", FAR1, 64, 16, false);
	case 26: return udp6(mac_p0, "2001:db8:fe::1", "2001:db8:100:ff::1", 64, 16, false);
	default: return udp6(mac_p0, H, "9000::1", 64, 16, false);
	}
}

struct lpm6_kind {
	uint16_t edge;
	const char *ctr;   /* drop counter, NULL: forwarded ... */
	uint16_t port;     /* ... to this port */
};

/* Each kind's edge and drop counter or egress port, without a default route. */
static const struct lpm6_kind lpm6_kinds[] = {
	{ L_OUT, NULL, 1 }, { L_OUT, NULL, 0 }, { L_OUT, NULL, 1 },
	{ L_DROP, "ip6_hop_limit_expired", 0 }, { L_DROP, "ip6_hop_limit_expired", 0 },
	{ L_OUT, NULL, 1 }, { L_DROP, "ip6_too_big", 0 }, { L_OUT, NULL, 1 }, { L_OUT, NULL, 1 },
	{ L_DROP, "ip6_src_unspecified", 0 }, { L_DROP, "ip6_src_loopback", 0 },
	{ L_DROP, "ip6_src_v4mapped", 0 }, { L_DROP, "ip6_src_mcast", 0 },
	{ L_DROP, "ip6_linklocal_src", 0 }, { L_DROP, "ip6_dst_martian", 0 },
	{ L_DROP, "ip6_mcast_dst", 0 }, { L_DROP, "ip6_linklocal_dst", 0 },
	{ L_DROP, "ip6_no_route", 0 }, { L_DROP, "ip6_neighbour_unresolved", 0 },
	{ L_DROP, "ip6_local_unsupported", 0 }, { L_DROP, "ip6_l2mcast_unicast", 0 },
	{ L_DROP, "l3_mac_mismatch", 0 }, { L_OUT, NULL, 0 }, { L_DROP, "vlan_unknown", 0 },
	{ L_DROP, "l3_proto_unsupported", 0 }, { L_OUT, NULL, 1 }, { L_OUT, NULL, 1 },
	{ L_DROP, "ip6_no_route", 0 },
};

/*
 * With ::/0 via r2 and 8000::/1 via r1 (a route that replaces one half of
 * the default): the two unrouted kinds go out.
 */
#define DFLT_ROUTES \
	"      - { prefix: \"::/0\", via: r2 }\n" \
	"      - { prefix: \"8000::/1\", via: r1 }\n"

static struct lpm6_kind
kind_want(unsigned int k, bool dflt)
{
	static const struct lpm6_kind via_r2 = { L_OUT, NULL, 0 }, via_r1 = { L_OUT, NULL, 1 };

	if (dflt && k == 17)
		return via_r2;
	if (dflt && k == 27)
		return via_r1;
	return lpm6_kinds[k];
}

/*
 * Bursts of random kinds through one stage, the same packets one per burst
 * through another: the kinds' edges, ports and drop counters, and the two
 * stages agree on bytes, metadata and counters.
 */
static void
run_kinds(const char *yaml, bool dflt)
{
	const unsigned int nk = RTE_DIM(lpm6_kinds);
	struct pf_stage *st[2];
	struct pf_topo *topo[2];
	uint64_t want[64] = { 0 }, hints0;
	uint32_t round, total = 0;
	uint16_t c, s;

	for (s = 0; s < 2; s++)
		st[s] = pf_test_stage(yaml, "lpm6", &topo[s]);
	assert_true(st[0]->ops->n_ctrs <= RTE_DIM(want));
	hints0 = pf_test_hints;
	srandom(8200);
	for (round = 0; round < 400; round++) {
		struct rte_mbuf *pk[2][40];
		uint16_t e[2][40], b = (uint16_t)(1 + round % 40), j;
		unsigned int kind[40];

		for (j = 0; j < b; j++) {
			/* mostly forwarded packets, so that groups hold one odd packet */
			kind[j] = random() % 3 != 0 ? (unsigned int)random() % 2 :
						     (unsigned int)random() % nk;
			for (s = 0; s < 2; s++)
				pk[s][j] = mk_kind(kind[j]);
			if (kind_want(kind[j], dflt).ctr != NULL)
				for (c = 0; c < st[0]->ops->n_ctrs; c++)
					want[c] += strcmp(st[0]->ops->ctrs[c].name,
							  kind_want(kind[j], dflt).ctr) == 0;
		}
		/* the burst as a whole, and the same packets one per burst */
		pf_test_process(st[0], pk[0], b, e[0]);
		for (j = 0; j < b; j++)
			pf_test_process(st[1], &pk[1][j], 1, &e[1][j]);
		for (j = 0; j < b; j++) {
			const struct pf_meta *a = pf_meta(pk[0][j]), *r = pf_meta(pk[1][j]);

			const struct lpm6_kind w = kind_want(kind[j], dflt);

			if (e[0][j] != w.edge || e[1][j] != e[0][j])
				fail_msg("round %u packet %u kind %u: burst edge %u, single %u, want %u",
					 round, j, kind[j], e[0][j], e[1][j], w.edge);
			assert_int_equal(rte_pktmbuf_data_len(pk[0][j]),
					 rte_pktmbuf_data_len(pk[1][j]));
			if (memcmp(rte_pktmbuf_mtod(pk[0][j], void *),
				   rte_pktmbuf_mtod(pk[1][j], void *),
				   rte_pktmbuf_data_len(pk[0][j])) != 0)
				fail_msg("round %u packet %u kind %u: the burst wrote other bytes",
					 round, j, kind[j]);
			if (e[0][j] != L_DROP) {
				assert_int_equal(a->out_port, w.port);
				assert_int_equal(a->out_port, r->out_port);
				assert_int_equal(a->nexthop, r->nexthop);
			}
		}
		total += b;
		for (s = 0; s < 2; s++)
			pf_test_free(pk[s], b);
	}
	pf_test_ctrs_agree(st[0], st[1], want, "burst", "single");
	/* bursts that all went out on one port carry the hint (checked per burst) */
	assert_true(pf_test_hints > hints0);
	assert_true(pf_test_ctr(st[0], "ip6_too_big") != 0);
	assert_true((pf_test_ctr(st[0], "ip6_no_route") != 0) == !dflt);
	assert_true(total > 8000);
	for (s = 0; s < 2; s++) {
		pf_stage_destroy(st[s]);
		pf_topo_free(topo[s]);
	}
}

static void
test_x4_groups(void **state)
{
	(void)state;
	run_kinds(TOPO(""), false);
}

/* The table has no miss: the default's next hop at every place of a group. */
static void
test_x4_groups_default(void **state)
{
	(void)state;
	run_kinds(TOPO(DFLT_ROUTES), true);
}

/*
 * A UDP packet to the router behind a Routing header (8 bytes, Segments
 * Left @p sl), as rx leaves it, with no icmp edge wired: Segments Left > 0
 * is dropped as ip6_routing_header (RFC 8200 4.4), 0 is skipped and the
 * UDP behind it is ip6_local_unsupported. The replay case
 * ipv6_routing_header checks the answers with the edge wired.
 */
static void
test_routing_header_no_icmp(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO(""), "lpm6", &topo);
	uint8_t sl;

	(void)state;
	for (sl = 0; sl < 3; sl++) {
		struct rte_mbuf *m = udp6(mac_p0, H, "2001:db8:1::1", 64, 16, false);
		uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, 14);
		uint64_t rh = pf_test_ctr(st, "ip6_routing_header");
		uint64_t un = pf_test_ctr(st, "ip6_local_unsupported");
		uint16_t e;

		ip[6] = 43;
		ip[40] = IPPROTO_UDP;
		ip[41] = 0;
		ip[42] = 0;
		ip[43] = sl;
		pf_meta(m)->l3_len = 48;
		pf_test_process(st, &m, 1, &e);
		assert_int_equal(e, L_DROP);
		assert_int_equal(pf_test_ctr(st, "ip6_routing_header"), rh + (sl != 0));
		assert_int_equal(pf_test_ctr(st, "ip6_local_unsupported"), un + (sl == 0));
		pf_test_free(&m, 1);
	}
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x4_groups),
		cmocka_unit_test(test_x4_groups_default),
		cmocka_unit_test(test_routing_header_no_icmp),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
