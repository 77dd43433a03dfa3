/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of IPv6 Neighbour Discovery (RFC 4861) on hand-built mbufs:
 * the NS a resolver sends and the NA answering an NS, byte for byte, their
 * ICMPv6 checksums checked with a separate RFC 1071 sum (not pf_icmp6_sum);
 * NS/NA validation (7.1.1, 7.1.2); lpm6 handing a packet for a connected
 * host or a `via: ADDRESS` gateway to neigh, which holds it and solicits;
 * the NA releasing it rewritten, after which lpm6 forwards by itself; an NS
 * for our address teaching its sender (7.2.3); the S and O flags (7.2.5);
 * failure giving Destination Unreachable 1/3 on the icmp6 edge.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "../../stages/nd6.h"
#include "pf_neigh.h"
#include "pf_test.h"

static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_p1[6] = { 2, 0, 0, 0, 0, 0x11 };
static const uint8_t all_nodes[6] = { 0x33, 0x33, 0, 0, 0, 1 };
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa1 };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb1 };
static const uint8_t mac_c[6] = { 2, 0, 0, 0, 0, 0xc1 };

#define TOPO \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv6: \"2001:db8:1::1/64\" }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv6: \"2001:db8:2::1/64\" }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1], next: { ipv6: lpm6 } }\n" \
	"  lpm6: { type: lpm6, routes: [ { prefix: \"2001:db8:100::/48\", via: \"2001:db8:2::fe\" } ],\n" \
	"          next: { out: tx, icmp: icmp6, neigh: neigh } }\n" \
	"  neigh: { type: neigh, size: 64, queue: 2, next: { out: tx, icmp6: icmp6 } }\n" \
	"  icmp6: { type: icmp6, next: tx }\n" \
	"  tx: { type: tx, ports: [p0, p1] }\n" \
	"lcores:\n  1: [rx, lpm6, neigh, icmp6, tx]\n"

enum { L_DROP, L_OUT, L_ICMP, L_NEIGH };            /* lpm6's edges */
enum { N_DROP, N_OUT, N_ICMP, N_FRAG, N_ICMP6 };    /* neigh's edges */

static int
group_setup(void **state)
{
	static char name[32];

	(void)state;
	snprintf(name, sizeof(name), "nd6_%d", (int)getpid());
	return pf_test_eal_init(name);
}

static void
a6(const char *s, uint8_t *a)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

/* RFC 1071 over the pseudo-header and the message, written out plainly. */
static uint16_t
ref_cksum(const uint8_t *ip6, const uint8_t *l4, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i < 32; i += 2)
		sum += (uint32_t)ip6[8 + i] << 8 | ip6[9 + i];
	sum += len >> 16;
	sum += len & 0xffff;
	sum += 58;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)l4[i] << 8 | l4[i + 1];
	if (len & 1)
		sum += (uint32_t)l4[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;   /* 0 when the checksum field is right */
}

/*
 * An IPv6 frame from @p smac to @p dmac arriving on @p port: hop limit
 * @p hlim, @p l4 (@p l4len bytes, ICMPv6 when @p icmp: its checksum is
 * filled in by ref_cksum) as rx leaves it.
 */
static struct rte_mbuf *
frame6(uint16_t port, const uint8_t *dmac, const uint8_t *smac, const char *src,
       const char *dst, uint8_t hlim, const uint8_t *l4, uint16_t l4len, bool icmp)
{
	uint8_t f[256] = { 0 }, *ip = f + 14, *p4 = ip + 40;
	struct rte_mbuf *m;
	struct pf_meta *md;
	uint16_t ck;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[4] = (uint8_t)(l4len >> 8);
	ip[5] = (uint8_t)l4len;
	ip[6] = icmp ? IPPROTO_ICMPV6 : IPPROTO_UDP;
	ip[7] = hlim;
	a6(src, ip + 8);
	a6(dst, ip + 24);
	memcpy(p4, l4, l4len);
	if (icmp) {
		p4[2] = p4[3] = 0;
		ck = ref_cksum(ip, p4, l4len);
		p4[2] = (uint8_t)(ck >> 8);
		p4[3] = (uint8_t)ck;
	}
	m = pf_test_mbuf(f, (uint16_t)(54 + l4len), port);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV6;
	md->l2_len = 14;
	md->l3_len = 40;
	md->l4_proto = ip[6];
	md->flags = dmac[0] & 1 ? PF_META_L2_MCAST : PF_META_L2_LOCAL;
	return m;
}

/* UDP from host A on p0 to @p dst, hop limit 64. */
static struct rte_mbuf *
udp6(const char *dst)
{
	static const uint8_t u[16] = { 0x30, 0x39, 0x00, 0x35, 0, 16 };

	return frame6(0, mac_p0, mac_a, "2001:db8:1::9", dst, 64, u, sizeof(u), false);
}

/* An NS (type 135) or NA (136) message: @p flags, @p target, an LLA option of @p lla. */
static uint16_t
nd_msg(uint8_t *l4, uint8_t type, uint8_t flags, const char *target, const uint8_t *lla)
{
	memset(l4, 0, 32);
	l4[0] = type;
	l4[4] = flags;
	a6(target, l4 + 8);
	if (lla == NULL)
		return 24;
	l4[24] = type == 135 ? 1 : 2;
	l4[25] = 1;
	memcpy(l4 + 26, lla, 6);
	return 32;
}

static uint16_t
run1(struct pf_stage *st, struct rte_mbuf *m)
{
	uint16_t e;

	pf_test_process(st, &m, 1, &e);
	if (e == 0)
		rte_pktmbuf_free(m);
	return e;
}

/* Through lpm6 to its neigh edge, then neigh: neigh's edge. */
static uint16_t
via_lpm6(struct pf_stage *lpm6, struct pf_stage *nb, struct rte_mbuf *m)
{
	assert_int_equal(run1(lpm6, m), L_NEIGH);
	return run1(nb, m);
}

/* @p m is an NS for @p target out of p1 from @p src, to @p dmac (NULL: multicast). */
static void
check_ns(struct rte_mbuf *m, const char *target, const char *src, const uint8_t *dmac)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *), *ip = f + 14, *l4 = ip + 40;
	uint8_t t[16], a[16], snm[16];

	a6(target, t);
	a6(src, a);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 86);
	if (dmac == NULL) {
		static const uint8_t mm[3] = { 0x33, 0x33, 0xff };

		assert_memory_equal(f, mm, 3);
		assert_memory_equal(f + 3, t + 13, 3);
		a6("ff02::1:ff00:0", snm);
		memcpy(snm + 13, t + 13, 3);
		assert_memory_equal(ip + 24, snm, 16);
	} else {
		assert_memory_equal(f, dmac, 6);
		assert_memory_equal(ip + 24, t, 16);
	}
	assert_memory_equal(f + 6, mac_p1, 6);
	assert_int_equal(f[12] << 8 | f[13], 0x86dd);
	assert_int_equal(ip[0], 0x60);
	assert_int_equal(ip[4] << 8 | ip[5], 32);
	assert_int_equal(ip[6], 58);
	assert_int_equal(ip[7], 255);
	assert_memory_equal(ip + 8, a, 16);
	assert_int_equal(l4[0], 135);
	assert_int_equal(l4[1], 0);
	assert_memory_equal(l4 + 8, t, 16);
	assert_int_equal(l4[24], 1);
	assert_int_equal(l4[25], 1);
	assert_memory_equal(l4 + 26, mac_p1, 6);
	assert_int_equal(ref_cksum(ip, l4, 32), 0);
	assert_int_equal(pf_meta(m)->out_port, 1);
}

static uint16_t
emit(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t *edge, bool draining)
{
	return st->ops->dp.emit(st, pkts, 32, edge, draining);
}

/* The neighbour table of the test's neigh stage (set where it is made). */
static struct pf_neigh_table *test_nt;

static bool
lookup(uint16_t port, const char *addr, uint8_t *mac)
{
	struct pf_neigh_key k;
	uint8_t a[16];

	a6(addr, a);
	pf_neigh_key_ip6(&k, port, a);
	return pf_neigh_resolve(test_nt, &k, mac);
}

static uint8_t
state_of(uint16_t port, const char *addr)
{
	struct pf_neigh_key k;
	struct pf_neigh *n;
	uint8_t a[16];

	a6(addr, a);
	pf_neigh_key_ip6(&k, port, a);
	n = pf_neigh_find(test_nt, &k);
	return n == NULL ? PF_NEIGH_NONE : n->state;
}

/* nd6_parse: RFC 4861 7.1.1 / 7.1.2, one rule broken at a time. */
static void
test_parse(void **state)
{
	uint8_t l4[32];
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip;
	struct nd6_msg msg;
	uint16_t len;

	(void)state;
#define PARSE(dst, hl, body, blen, expect) do { \
		m = frame6(1, mac_p1, mac_b, "2001:db8:2::7", dst, hl, body, blen, true); \
		ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, 14); \
		assert_int_equal(nd6_parse(ip, 40, (uint8_t *)(ip + 1), blen, &msg), expect); \
		rte_pktmbuf_free(m); \
	} while (0)
	len = nd_msg(l4, 136, 0x60, "2001:db8:2::7", mac_b);
	PARSE("2001:db8:2::1", 255, l4, len, 0);
	assert_int_equal(msg.type, 136);
	assert_int_equal(msg.flags, 0x60);
	assert_true(msg.has_lla);
	assert_memory_equal(msg.lla, mac_b, 6);
	PARSE("2001:db8:2::1", 254, l4, len, -1);           /* hop limit */
	PARSE("ff02::1", 255, l4, len, -1);                 /* S to multicast */
	l4[4] = 0x20;
	PARSE("ff02::1", 255, l4, len, 0);                  /* unsolicited */
	assert_false(msg.flags & 0x40);
	l4[1] = 1;
	PARSE("2001:db8:2::1", 255, l4, len, -1);           /* code */
	l4[1] = 0;
	PARSE("2001:db8:2::1", 255, l4, 20, -1);            /* short */
	l4[25] = 0;
	PARSE("2001:db8:2::1", 255, l4, len, -1);           /* zero-length option */
	len = nd_msg(l4, 136, 0x60, "ff02::1", mac_b);
	PARSE("2001:db8:2::1", 255, l4, len, -1);           /* multicast target */
	len = nd_msg(l4, 135, 0, "2001:db8:2::1", mac_b);
	PARSE("ff02::1:ff00:1", 255, l4, len, 0);
	assert_int_equal(msg.type, 135);
	PARSE("ff02::1:ff00:2", 255, l4, len, -1);          /* not its solicited-node */
	len = nd_msg(l4, 135, 0, "2001:db8:2::1", NULL);
	PARSE("2001:db8:2::1", 255, l4, len, 0);
	assert_false(msg.has_lla);
#undef PARSE
}

/* A packet for a connected host: NS out, held; the NA releases it; lpm6 then forwards. */
static void
test_resolve(void **state)
{
	struct pf_topo *topo, *topo2;
	struct pf_stage *nb = pf_test_stage(TOPO, "neigh", &topo);
	struct pf_stage *lpm6 = pf_test_stage_fed(TOPO, "lpm6", &topo2, nb);
	struct rte_mbuf *m, *out[32];
	uint16_t edge[32], n, i, len;
	uint8_t l4[32], mac[6], *f;

	test_nt = pf_test_neigh_table(nb);
	(void)state;
	m = udp6("2001:db8:2::7");
	assert_int_equal(run1(lpm6, m), L_NEIGH);
	assert_int_equal(pf_meta(m)->nexthop, PF_NEIGH_ND6_DST);
	assert_int_equal(pf_meta(m)->out_port, 1);
	assert_int_equal(run1(nb, m), PF_EDGE_HELD);
	n = emit(nb, out, edge, false);
	assert_int_equal(n, 1);
	assert_int_equal(edge[0], N_OUT);
	check_ns(out[0], "2001:db8:2::7", "2001:db8:2::1", NULL);
	pf_test_free(out, 1);
	assert_int_equal(nb->replicas, 1);
	assert_int_equal(pf_test_ctr(nb, "nd_ns_sent"), 1);
	assert_int_equal(via_lpm6(lpm6, nb, udp6("2001:db8:2::7")), PF_EDGE_HELD);
	assert_int_equal(via_lpm6(lpm6, nb, udp6("2001:db8:2::7")), N_DROP);
	assert_int_equal(pf_test_ctr(nb, "neigh_hold_overflow"), 1);
	/* an NA without the target's link-layer option cannot resolve it */
	len = nd_msg(l4, 136, 0x60, "2001:db8:2::7", NULL);
	assert_int_equal(via_lpm6(lpm6, nb, frame6(1, mac_p1, mac_b, "2001:db8:2::7",
						   "2001:db8:2::1", 255, l4, len, true)), N_DROP);
	assert_int_equal(pf_test_ctr(nb, "nd_na_no_tlla"), 1);
	/* the solicited NA: both held packets out, rewritten, then the MAC published */
	len = nd_msg(l4, 136, 0x60, "2001:db8:2::7", mac_b);
	assert_int_equal(via_lpm6(lpm6, nb, frame6(1, mac_p1, mac_b, "2001:db8:2::7",
						   "2001:db8:2::1", 255, l4, len, true)), N_DROP);
	assert_int_equal(pf_test_ctr(nb, "nd_na_consumed"), 1);
	assert_false(lookup(1, "2001:db8:2::7", mac));
	n = emit(nb, out, edge, false);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		f = rte_pktmbuf_mtod(out[i], uint8_t *);
		assert_int_equal(edge[i], N_OUT);
		assert_memory_equal(f, mac_b, 6);
		assert_memory_equal(f + 6, mac_p1, 6);
		assert_int_equal(f[14 + 7], 63);
	}
	pf_test_free(out, n);
	assert_true(lookup(1, "2001:db8:2::7", mac));
	assert_memory_equal(mac, mac_b, 6);
	assert_int_equal(state_of(1, "2001:db8:2::7"), PF_NEIGH_REACHABLE);
	/* now lpm6 forwards by itself */
	m = udp6("2001:db8:2::7");
	assert_int_equal(run1(lpm6, m), L_OUT);
	f = rte_pktmbuf_mtod(m, uint8_t *);
	assert_memory_equal(f, mac_b, 6);
	assert_memory_equal(f + 6, mac_p1, 6);
	assert_int_equal(f[14 + 7], 63);
	rte_pktmbuf_free(m);
	/* an unsolicited NA with the same MAC changes nothing: still REACHABLE */
	len = nd_msg(l4, 136, 0x20, "2001:db8:2::7", mac_b);
	assert_int_equal(via_lpm6(lpm6, nb, frame6(1, all_nodes, mac_b, "2001:db8:2::7",
						   "ff02::1", 255, l4, len, true)), N_DROP);
	assert_int_equal(state_of(1, "2001:db8:2::7"), PF_NEIGH_REACHABLE);
	/* 7.2.5: a different MAC without Override: REACHABLE becomes STALE, MAC kept */
	len = nd_msg(l4, 136, 0x00, "2001:db8:2::7", mac_c);
	assert_int_equal(via_lpm6(lpm6, nb, frame6(1, mac_p1, mac_c, "2001:db8:2::7",
						   "2001:db8:2::1", 255, l4, len, true)), N_DROP);
	assert_int_equal(state_of(1, "2001:db8:2::7"), PF_NEIGH_STALE);
	assert_true(lookup(1, "2001:db8:2::7", mac));
	assert_memory_equal(mac, mac_b, 6);
	/* an unsolicited NA with Override to ff02::1 moves it */
	len = nd_msg(l4, 136, 0x20, "2001:db8:2::7", mac_c);
	m = frame6(1, all_nodes, mac_c, "2001:db8:2::7",
		   "ff02::1", 255, l4, len, true);
	assert_int_equal(via_lpm6(lpm6, nb, m), N_DROP);
	assert_true(lookup(1, "2001:db8:2::7", mac));
	assert_memory_equal(mac, mac_c, 6);
	assert_int_equal(pf_test_ctr(nb, "neigh_updated"), 1);
	/* an NA for an unknown address teaches nothing; one for our own address neither */
	len = nd_msg(l4, 136, 0x20, "2001:db8:2::8", mac_c);
	assert_int_equal(via_lpm6(lpm6, nb, frame6(1, mac_p1, mac_c, "2001:db8:2::8",
						   "2001:db8:2::1", 255, l4, len, true)), N_DROP);
	assert_int_equal(pf_test_ctr(nb, "nd_na_unknown"), 1);
	assert_false(lookup(1, "2001:db8:2::8", mac));
	len = nd_msg(l4, 136, 0x20, "2001:db8:2::1", mac_c);
	assert_int_equal(via_lpm6(lpm6, nb, frame6(1, mac_p1, mac_c, "2001:db8:2::8",
						   "2001:db8:2::1", 255, l4, len, true)), N_DROP);
	assert_int_equal(pf_test_ctr(nb, "nd_na_target_is_us"), 1);
	/* an NA with hop limit 254 is a named drop in lpm6 */
	len = nd_msg(l4, 136, 0x60, "2001:db8:2::7", mac_b);
	assert_int_equal(run1(lpm6, frame6(1, mac_p1, mac_b, "2001:db8:2::7", "2001:db8:2::1",
					   254, l4, len, true)), L_DROP);
	assert_int_equal(pf_test_ctr(lpm6, "nd_invalid"), 1);
	/* a gateway by address: 2001:db8:100::/48 via 2001:db8:2::fe */
	m = udp6("2001:db8:100::5");
	assert_int_equal(run1(lpm6, m), L_NEIGH);
	assert_int_not_equal(pf_meta(m)->nexthop, PF_NEIGH_ND6_DST);
	assert_int_equal(run1(nb, m), PF_EDGE_HELD);
	n = emit(nb, out, edge, false);
	assert_int_equal(n, 1);
	check_ns(out[0], "2001:db8:2::fe", "2001:db8:2::1", NULL);
	pf_test_free(out, 1);
	n = emit(nb, out, edge, true);   /* stopping: the held one dropped by name */
	assert_int_equal(n, 1);
	assert_int_equal(edge[0], N_DROP);
	pf_test_free(out, n);
	pf_stage_destroy(lpm6);
	pf_stage_destroy(nb);
	pf_topo_free(topo);
	pf_topo_free(topo2);
}

/* An NS for our address: the sender is learned STALE and answered (7.2.3, 7.2.4). */
static void
test_ns_in(void **state)
{
	struct pf_topo *topo, *topo2;
	struct pf_stage *nb = pf_test_stage(TOPO, "neigh", &topo);
	struct pf_stage *lpm6 = pf_test_stage_fed(TOPO, "lpm6", &topo2, nb);
	static const uint8_t snm_mac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 };
	uint8_t l4[32], mac[6], a[16];
	const uint8_t *f, *ip, *r;
	struct rte_mbuf *m;
	uint16_t len;

	test_nt = pf_test_neigh_table(nb);
	(void)state;
	len = nd_msg(l4, 135, 0, "2001:db8:1::1", mac_a);
	m = frame6(0, snm_mac, mac_a, "2001:db8:1::9", "ff02::1:ff00:1", 255, l4, len, true);
	assert_int_equal(via_lpm6(lpm6, nb, m), N_OUT);
	f = rte_pktmbuf_mtod(m, const uint8_t *);
	ip = f + 14;
	r = ip + 40;
	assert_int_equal(rte_pktmbuf_pkt_len(m), 86);
	assert_memory_equal(f, mac_a, 6);
	assert_memory_equal(f + 6, mac_p0, 6);
	assert_int_equal(ip[7], 255);
	a6("2001:db8:1::1", a);
	assert_memory_equal(ip + 8, a, 16);
	a6("2001:db8:1::9", a);
	assert_memory_equal(ip + 24, a, 16);
	assert_int_equal(r[0], 136);
	assert_int_equal(r[4], 0xe0);
	assert_int_equal(r[24], 2);
	assert_int_equal(ref_cksum(ip, r, 32), 0);
	assert_int_equal(pf_meta(m)->out_port, 0);
	rte_pktmbuf_free(m);
	assert_int_equal(pf_test_ctr(nb, "nd_na_sent"), 1);
	assert_int_equal(pf_test_ctr(nb, "neigh_learned"), 1);
	assert_true(lookup(0, "2001:db8:1::9", mac));
	assert_memory_equal(mac, mac_a, 6);
	assert_int_equal(state_of(0, "2001:db8:1::9"), PF_NEIGH_STALE);
	/* an NS for another address: lpm6 drops it by name */
	len = nd_msg(l4, 135, 0, "2001:db8:1::5", mac_a);
	m = frame6(0, snm_mac, mac_a, "2001:db8:1::9", "ff02::1:ff00:5", 255, l4, len, true);
	assert_int_equal(run1(lpm6, m), L_DROP);
	assert_int_equal(pf_test_ctr(lpm6, "nd_not_for_us"), 1);
	pf_stage_destroy(lpm6);
	pf_stage_destroy(nb);
	pf_topo_free(topo);
	pf_topo_free(topo2);
}

/* Three NSs a second apart unanswered: the held packet becomes 1/3 on the icmp6 edge. */
static void
test_fail(void **state)
{
	struct pf_topo *topo, *topo2;
	struct pf_stage *nb = pf_test_stage(TOPO, "neigh", &topo);
	struct pf_stage *lpm6 = pf_test_stage_fed(TOPO, "lpm6", &topo2, nb);
	struct rte_mbuf *out[32];
	uint16_t edge[32], n, k;
	uint64_t now;

	test_nt = pf_test_neigh_table(nb);
	(void)state;
	assert_int_equal(via_lpm6(lpm6, nb, udp6("2001:db8:2::9")), PF_EDGE_HELD);
	assert_int_equal(emit(nb, out, edge, false), 1);
	pf_test_free(out, 1);
	/* The clock after the hold: the retries are due a second after it, and
	 * a clock read before it is short by however long a busy machine took
	 * (ASan CI with a busy loop: no retry at that clock + 1.001 s). */
	now = pf_now_ns();
	for (k = 1; k <= 3; k++) {
		nb->ops->dp.housekeep(nb, now + k * 1000000000ull + 1000000);
		n = emit(nb, out, edge, false);
		assert_int_equal(n, 1);
		if (k < 3) {
			check_ns(out[0], "2001:db8:2::9", "2001:db8:2::1", NULL);
		} else {
			assert_int_equal(edge[0], N_ICMP6);
			assert_int_equal(pf_meta(out[0])->nexthop, PF_META_ICMP(1, 3, 0));
			assert_int_equal(pf_meta(out[0])->out_port, 0);
			/* not rewritten: the error quotes the packet as it came */
			assert_int_equal(rte_pktmbuf_mtod(out[0], uint8_t *)[14 + 7], 64);
		}
		pf_test_free(out, 1);
	}
	assert_int_equal(pf_test_ctr(nb, "neigh_failed"), 1);
	assert_int_equal(pf_test_ctr(nb, "nd_ns_sent"), 3);
	assert_int_equal(pf_test_ctr(nb, "neigh_unresolved_to_icmp6"), 1);
	assert_int_equal(state_of(1, "2001:db8:2::9"), PF_NEIGH_FAILED);
	pf_stage_destroy(lpm6);
	pf_stage_destroy(nb);
	pf_topo_free(topo);
	pf_topo_free(topo2);
}

/* nd6_ns_build as a unicast probe: to the target and its cached MAC. */
static void
test_ns_probe_frame(void **state)
{
	uint8_t f[ND6_NS_FRAME_LEN], src[16], t[16];
	struct rte_mbuf *m;

	(void)state;
	a6("2001:db8:2::1", src);
	a6("2001:db8:2::7", t);
	nd6_ns_build(f, mac_p1, src, t, mac_b);
	m = pf_test_mbuf(f, sizeof(f), 1);
	pf_meta(m)->out_port = 1;
	check_ns(m, "2001:db8:2::7", "2001:db8:2::1", mac_b);
	rte_pktmbuf_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_ns_probe_frame),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_ns_in),
		cmocka_unit_test(test_fail),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
