/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm6's learnt routes (stages/lpm6_learnt.c) through the stage's ctl.learn
 * op and its data path, test_lpm_learnt's IPv6 twin: a route by address
 * goes to the neigh edge (the gateway's id in md->nexthop) until the
 * neighbour table knows the gateway, then (upkeep) forwards on the fast path
 * with the gateway's MAC; replace and delete; a configured route of the same
 * prefix wins, a more specific learnt one beats it; two sources (the lower
 * id wins); ECMP groups (every flow on one member, both members used, a
 * fragmented datagram on one); blackhole, unreachable and prohibit (ICMPv6
 * 1/0 and 1/1 made by the icmp6 stage); a connected route; a learnt ::/0 and
 * the /1 halves rte_lpm6 holds it as; refusals; a lost neighbour; a reload
 * that keeps the learnt routes and one refused that changes nothing; and
 * lookups that stay right while learnt routes beside them churn.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "../../stages/lpm6_fib.h"
#include "pf_route.h"
#include "pf_test.h"

static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb1 };
static const uint8_t mac_c[6] = { 2, 0, 0, 0, 0, 0xc2 };
static const uint8_t mac_h[6] = { 2, 0, 0, 0, 0, 0xe5 };
static const uint8_t mac_n1[6] = { 2, 0, 0, 0, 0, 0xd1 };

#define GW_B "2001:db8:2::b"
#define GW_C "fe80::c"          /* a link-local gateway: on p1 by the op's port */

/* p2 has no MAC: a reload with a next hop on it is refused (nothing learnt uses it). */
#define TOPO_NH(extra) \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv6: \"2001:db8:1::1/64\" }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv6: \"2001:db8:2::1/64\" }\n" \
	"  p2: { device: net_null2 }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1], next: { ipv6: lpm6 } }\n" \
	"  lpm6: { type: lpm6, nexthops: { n1: { port: p1, mac: \"02:00:00:00:00:d1\" } " extra "},\n" \
	"          routes: [ { prefix: \"2001:db8:60::/48\", via: n1 } ],\n" \
	"          learnt: { routes: 1000, nexthops: 64, groups: 8, tbl8: 64 },\n" \
	"          next: { out: tx, icmp: icmp6, neigh: neigh } }\n" \
	"  neigh: { type: neigh, size: 64, next: { out: tx } }\n" \
	"  icmp6: { type: icmp6, rate_pps: 0, next: tx }\n" \
	"  tx: { type: tx, ports: [p0, p1] }\n" \
	"lcores:\n  1: [rx, lpm6, neigh, icmp6, tx]\n"
#define TOPO TOPO_NH("")

enum { E_DROP, E_OUT, E_ICMP, E_NEIGH };   /* lpm6's edges */

static struct pf_stage *nb, *lpm6, *icmp6;
static struct pf_topo *topo_n, *topo_l, *topo_i;

static int
group_setup(void **state)
{
	static char name[32];

	(void)state;
	snprintf(name, sizeof(name), "lrn6_%d", (int)getpid());
	return pf_test_eal_init(name);
}

static int
setup(void **state)
{
	(void)state;
	nb = pf_test_stage(TOPO, "neigh", &topo_n);
	lpm6 = pf_test_stage_fed(TOPO, "lpm6", &topo_l, nb);
	icmp6 = pf_test_stage(TOPO, "icmp6", &topo_i);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pf_stage_destroy(icmp6);
	pf_stage_destroy(lpm6);
	pf_stage_destroy(nb);
	pf_topo_free(topo_i);
	pf_topo_free(topo_l);
	pf_topo_free(topo_n);
	return 0;
}

static void
a6(const char *s, uint8_t *a)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

/*
 * UDP from 2001:db8:1::9 port @p sport on p0 to @p dst, hop limit 64, as rx
 * leaves it; @p frag: 0 none, 1 a first fragment, 2 a later one (a fragment
 * header, ports only in the first).
 */
static struct rte_mbuf *
udp6f(const char *dst, uint16_t sport, int frag)
{
	uint8_t f[96] = { 0 }, *ip = f + RTE_ETHER_HDR_LEN, *l4 = ip + 40;
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(f, mac_p0, 6);
	memcpy(f + 6, mac_h, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = frag ? 24 : 16;
	ip[6] = frag ? 44 : IPPROTO_UDP;
	ip[7] = 64;
	a6("2001:db8:1::9", ip + 8);
	a6(dst, ip + 24);
	if (frag) {
		l4[0] = IPPROTO_UDP;
		l4[2] = frag == 1 ? 0 : 0x01;   /* offset 32 bytes (0x0100 >> 3 units) */
		l4[3] = frag == 1 ? 1 : 0;      /* M */
		l4[7] = (uint8_t)sport;         /* identification */
		l4 += 8;
	}
	if (frag != 2) {
		l4[0] = (uint8_t)(sport >> 8);
		l4[1] = (uint8_t)sport;
		l4[3] = 9;
		l4[5] = 16;
	}
	m = pf_test_mbuf(f, (uint16_t)(RTE_ETHER_HDR_LEN + 40 + (frag ? 24 : 16)), 0);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV6;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = frag ? 48 : 40;
	md->l4_proto = IPPROTO_UDP;
	md->flags = PF_META_L2_LOCAL;
	if (frag)
		md->flags |= PF_META_IP_FRAG | (frag == 2 ? PF_META_IP_NONFIRST : 0);
	return m;
}

static struct rte_mbuf *
udp6(const char *dst, uint16_t sport)
{
	return udp6f(dst, sport, 0);
}

/* The neighbour table knows @p addr on p1 at @p mac (as the neigh stage writes it). */
static void
learn(const char *addr, const uint8_t *mac)
{
	struct pf_neigh_table *nt = pf_test_neigh_table(nb);
	struct pf_neigh_key k;
	struct pf_neigh *n;
	uint8_t a[16];

	a6(addr, a);
	pf_neigh_key_ip6(&k, 1, a);
	n = pf_neigh_find(nt, &k);
	if (n == NULL)
		n = pf_neigh_add(nt, &k);
	assert_non_null(n);
	pf_neigh_publish(n, PF_NEIGH_REACHABLE, mac);
}

static void
op6(struct pf_route_op *op, uint8_t opcode, uint8_t src, const char *prefix, uint8_t plen)
{
	memset(op, 0, sizeof(*op));
	op->op = opcode;
	op->af = 6;
	op->src = src;
	op->plen = plen;
	a6(prefix, op->prefix);
}

static void
via(struct pf_route_op *op, const char *gw, uint16_t port)
{
	a6(gw, op->nh[op->n_nh].gw);
	op->nh[op->n_nh].port = port;
	op->nh[op->n_nh++].weight = 1;
}

static struct pf_route_result
apply(const struct pf_route_op *ops, unsigned int n)
{
	struct pf_route_result res = { 0 };

	assert_int_equal(lpm6->ops->ctl.learn(lpm6, ops, n, &res), 0);
	return res;
}

static struct pf_route_result
add_via(uint8_t src, const char *prefix, uint8_t plen, const char *gw)
{
	struct pf_route_op op;

	op6(&op, PF_ROUTE_ADD, src, prefix, plen);
	via(&op, gw, 1);
	return apply(&op, 1);
}

static struct pf_route_result
del(uint8_t src, const char *prefix, uint8_t plen)
{
	struct pf_route_op op;

	op6(&op, PF_ROUTE_DEL, src, prefix, plen);
	return apply(&op, 1);
}

/* Send @p n packets to @p dst (source ports from @p sport on) and check each one's fate. */
static void
send_check(const char *dst, uint16_t sport, uint16_t n, uint16_t want_edge,
	   const uint8_t *want_mac)
{
	struct rte_mbuf *m[8];
	uint16_t e[8], i;

	for (i = 0; i < n; i++)
		m[i] = udp6(dst, (uint16_t)(sport + i));
	pf_test_process(lpm6, m, n, e);
	for (i = 0; i < n; i++) {
		assert_int_equal(e[i], want_edge);
		if (want_mac != NULL)
			assert_memory_equal(rte_pktmbuf_mtod(m[i], uint8_t *), want_mac, 6);
		if (want_edge == E_OUT)   /* hop limit taken down by one */
			assert_int_equal(rte_pktmbuf_mtod(m[i], uint8_t *)[RTE_ETHER_HDR_LEN + 7], 63);
	}
	pf_test_free(m, n);
}

/* Whether the table's entry for @p dst takes the x4 fast path (a forward, max_plen set). */
static bool
fast(const char *dst)
{
	const struct lpm6_priv *lp = lpm6->priv;
	uint8_t a[16];
	uint32_t hop;

	a6(dst, a);
	assert_int_equal(rte_lpm6_lookup(lp->fib->lpm, a, &hop), 0);
	return lp->fib->nh[hop].kind == LPM6_NH_FWD && lp->fib->nh[hop].max_plen != 0;
}

/* Eight packets to @p dst forwarded to @p mac on the fast path: the burst-port hint came. */
static void
send_fast(const char *dst, const uint8_t *mac)
{
	uint64_t hints = pf_test_hints;

	assert_true(fast(dst));
	send_check(dst, 1000, 8, E_OUT, mac);
	assert_int_equal(pf_test_hints, hints + 1);
}

static void
upkeep(void)
{
	static uint64_t now = 1000000000ull;

	now += 1000000000ull;
	lpm6->ops->ctl.upkeep(lpm6, now);
}

static void
test_by_address(void **state)
{
	struct pf_route_result r = add_via(0, "2001:db8:50::", 48, GW_B);
	uint64_t to_neigh = pf_test_ctr(lpm6, "ip6_to_neigh");
	struct rte_mbuf *m = udp6("2001:db8:50::1", 1000);
	const uint8_t *gw;
	uint8_t want[16];
	uint16_t e;

	(void)state;
	assert_int_equal(r.added, 1);
	/* Unresolved: the neigh edge, the gateway's id (+ 1) in md->nexthop, on p1. */
	pf_test_process(lpm6, &m, 1, &e);
	assert_int_equal(e, E_NEIGH);
	assert_int_equal(pf_meta(m)->out_port, 1);
	gw = pf_neigh_gw6(pf_test_neigh_table(nb), pf_meta(m)->nexthop - 1);
	a6(GW_B, want);
	assert_non_null(gw);
	assert_memory_equal(gw, want, 16);
	rte_pktmbuf_free(m);
	assert_int_equal(pf_test_ctr(lpm6, "ip6_to_neigh"), to_neigh + 1);
	assert_false(fast("2001:db8:50::1"));
	/* Resolved, and after the upkeep: the fast path, the gateway's MAC on them. */
	learn(GW_B, mac_b);
	upkeep();
	send_fast("2001:db8:50::1", mac_b);
	assert_int_equal(pf_test_ctr(lpm6, "ip6_to_neigh"), to_neigh + 1);
	/* A replace to a link-local gateway (resolved already: fast at once); then delete. */
	learn(GW_C, mac_c);
	r = add_via(0, "2001:db8:50::", 48, GW_C);
	assert_int_equal(r.replaced, 1);
	send_fast("2001:db8:50::1", mac_c);
	r = del(0, "2001:db8:50::", 48);
	assert_int_equal(r.deleted, 1);
	send_check("2001:db8:50::1", 1000, 4, E_ICMP, NULL);   /* no route */
	r = del(0, "2001:db8:50::", 48);
	assert_int_equal(r.missing, 1);
}

static void
test_configured_wins(void **state)
{
	struct pf_route_result r;

	(void)state;
	learn(GW_B, mac_b);
	r = add_via(0, "2001:db8:60::", 48, GW_B);
	assert_int_equal(r.added, 1);
	assert_int_equal(r.shadowed, 1);
	upkeep();
	send_check("2001:db8:60::1", 1000, 4, E_OUT, mac_n1);
	/* A more specific learnt route inside it does win (longest match). */
	r = add_via(0, "2001:db8:60:1::", 64, GW_B);
	assert_int_equal(r.shadowed, 0);
	send_check("2001:db8:60:1::1", 1000, 4, E_OUT, mac_b);
	send_check("2001:db8:60:2::1", 1000, 4, E_OUT, mac_n1);
	/* The port's own prefix and address win too. */
	r = add_via(0, "2001:db8:1::", 64, GW_B);
	assert_int_equal(r.shadowed, 1);
	r = add_via(0, "2001:db8:1::1", 128, GW_B);
	assert_int_equal(r.shadowed, 1);
	/* Deleting it falls back to the configured /48; deleting the shadowed one changes nothing. */
	del(0, "2001:db8:60:1::", 64);
	send_check("2001:db8:60:1::1", 1000, 4, E_OUT, mac_n1);
	del(0, "2001:db8:60::", 48);
	send_check("2001:db8:60::1", 1000, 4, E_OUT, mac_n1);
}

static void
test_sources(void **state)
{
	(void)state;
	learn(GW_B, mac_b);
	learn(GW_C, mac_c);
	add_via(3, "2001:db8:70::", 48, GW_C);
	upkeep();
	send_check("2001:db8:70::1", 1000, 4, E_OUT, mac_c);
	/* Source 1 beats source 3; its withdrawal gives source 3's back. */
	add_via(1, "2001:db8:70::", 48, GW_B);
	send_check("2001:db8:70::1", 1000, 4, E_OUT, mac_b);
	del(1, "2001:db8:70::", 48);
	send_check("2001:db8:70::1", 1000, 4, E_OUT, mac_c);
	del(3, "2001:db8:70::", 48);
	send_check("2001:db8:70::1", 1000, 4, E_ICMP, NULL);
}

static void
ecmp_add(void)
{
	struct pf_route_op op;

	learn(GW_B, mac_b);
	learn(GW_C, mac_c);
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:80::", 48);
	via(&op, GW_B, 1);
	via(&op, GW_C, 1);
	assert_int_equal(apply(&op, 1).added, 1);
	upkeep();
}

static void
test_ecmp(void **state)
{
	struct pf_route_op op;
	unsigned int n_b = 0, n_c = 0, i, k;
	uint8_t first[256];

	(void)state;
	ecmp_add();
	/* 256 flows, each sent three times: one member per flow, both used. */
	for (k = 0; k < 3; k++)
		for (i = 0; i < 256; i++) {
			struct rte_mbuf *m = udp6("2001:db8:80::1", (uint16_t)(2000 + i));
			uint16_t e;
			uint8_t last;

			pf_test_process(lpm6, &m, 1, &e);
			assert_int_equal(e, E_OUT);
			last = rte_pktmbuf_mtod(m, uint8_t *)[5];
			assert_true(last == mac_b[5] || last == mac_c[5]);
			if (k == 0) {
				first[i] = last;
				n_b += last == mac_b[5];
				n_c += last == mac_c[5];
			} else {
				assert_int_equal(last, first[i]);
			}
			rte_pktmbuf_free(m);
		}
	assert_true(n_b > 256 * 35 / 100 && n_c > 256 * 35 / 100);
	/* The same group again, members in the other order (a replay): nothing changes. */
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:80::", 48);
	via(&op, GW_C, 1);
	via(&op, GW_B, 1);
	assert_int_equal(apply(&op, 1).unchanged, 1);
}

/* Every fragment of a datagram on one member: the first one's ports are not hashed. */
static void
test_ecmp_fragments(void **state)
{
	unsigned int i, k;

	(void)state;
	ecmp_add();
	for (i = 0; i < 64; i++) {
		uint8_t got[2];

		for (k = 0; k < 2; k++) {
			struct rte_mbuf *m = udp6f("2001:db8:80::1", (uint16_t)(3000 + i),
						   (int)k + 1);
			uint16_t e;

			pf_test_process(lpm6, &m, 1, &e);
			assert_int_equal(e, E_OUT);
			got[k] = rte_pktmbuf_mtod(m, uint8_t *)[5];
			rte_pktmbuf_free(m);
		}
		assert_int_equal(got[0], got[1]);
	}
}

/*
 * A learnt route of kind @p kind: packets to it take the icmp edge with
 * ICMPv6 1/@p code, and the icmp6 stage makes that error of them.
 */
static void
unreach_check(uint8_t kind, const char *prefix, const char *dst, uint8_t code)
{
	struct pf_route_op op;
	struct rte_mbuf *m = udp6(dst, 1000);
	const uint8_t *icmp;
	uint16_t e;

	op6(&op, PF_ROUTE_ADD, 0, prefix, 48);
	op.kind = kind;
	apply(&op, 1);
	pf_test_process(lpm6, &m, 1, &e);
	assert_int_equal(e, E_ICMP);
	assert_int_equal(pf_meta(m)->nexthop, PF_META_ICMP(1, code, 0));
	pf_test_process(icmp6, &m, 1, &e);
	assert_int_equal(e, E_OUT);
	icmp = rte_pktmbuf_mtod_offset(m, const uint8_t *, RTE_ETHER_HDR_LEN + 40);
	assert_int_equal(icmp[0], 1);
	assert_int_equal(icmp[1], code);
	rte_pktmbuf_free(m);
}

static void
test_kinds(void **state)
{
	struct pf_route_op op;
	uint64_t bh = pf_test_ctr(lpm6, "ip6_blackhole");
	uint64_t ur = pf_test_ctr(lpm6, "ip6_unreachable_route_to_icmp");
	struct rte_mbuf *m;
	uint16_t e;

	(void)state;
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:90::", 48);
	op.kind = PF_ROUTE_BLACKHOLE;
	apply(&op, 1);
	send_check("2001:db8:90::1", 1000, 4, E_DROP, NULL);
	assert_int_equal(pf_test_ctr(lpm6, "ip6_blackhole"), bh + 4);
	unreach_check(PF_ROUTE_UNREACHABLE, "2001:db8:91::", "2001:db8:91::1", 0);
	unreach_check(PF_ROUTE_PROHIBIT, "2001:db8:92::", "2001:db8:92::1", 1);
	assert_int_equal(pf_test_ctr(lpm6, "ip6_unreachable_route_to_icmp"), ur + 2);
	assert_int_equal(pf_test_ctr(icmp6, "admin_prohibited"), 1);
	/* Connected (no gateway): the destination is the neighbour, then it resolves. */
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:a0::", 48);
	op.n_nh = 1;
	op.nh[0].port = 1;
	op.nh[0].weight = 1;
	apply(&op, 1);
	m = udp6("2001:db8:a0::5", 1000);
	pf_test_process(lpm6, &m, 1, &e);
	assert_int_equal(e, E_NEIGH);
	assert_int_equal(pf_meta(m)->nexthop, PF_NEIGH_ND6_DST);
	assert_int_equal(pf_meta(m)->out_port, 1);
	rte_pktmbuf_free(m);
	learn("2001:db8:a0::5", mac_h);
	send_check("2001:db8:a0::5", 1000, 4, E_OUT, mac_h);
	/* A learnt default route; a learnt 8000::/1 takes its half; withdrawn: no route. */
	learn(GW_B, mac_b);
	learn(GW_C, mac_c);
	add_via(0, "::", 0, GW_B);
	upkeep();
	send_check("9000::1", 1000, 4, E_OUT, mac_b);
	send_check("3000::1", 1000, 4, E_OUT, mac_b);
	add_via(0, "8000::", 1, GW_C);
	send_check("9000::1", 1000, 4, E_OUT, mac_c);
	send_check("3000::1", 1000, 4, E_OUT, mac_b);
	del(0, "::", 0);
	send_check("9000::1", 1000, 4, E_OUT, mac_c);
	send_check("3000::1", 1000, 4, E_ICMP, NULL);
	del(0, "8000::", 1);
	send_check("9000::1", 1000, 4, E_ICMP, NULL);
	/* Refused: a port that does not exist, host bits, a hop-less unicast, a multicast gateway. */
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:b0::", 48);
	via(&op, GW_B, 7);
	assert_int_equal(apply(&op, 1).refused, 1);
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:b0::1", 48);
	via(&op, GW_B, 1);
	assert_int_equal(apply(&op, 1).refused, 1);
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:b0::", 48);
	assert_int_equal(apply(&op, 1).refused, 1);
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:b0::", 48);
	via(&op, "ff02::1", 1);
	assert_int_equal(apply(&op, 1).refused, 1);
	send_check("2001:db8:b0::1", 1000, 4, E_ICMP, NULL);
}

/*
 * The gateway's neighbour lost: its entry leaves the fast path at once but
 * still forwards to the MAC until a grace period later (a lookup made
 * before finds what it was made for), then it resolves through the neigh
 * edge; learnt again, the fast path is back.
 */
static void
test_neighbour_lost(void **state)
{
	struct pf_neigh_table *nt = pf_test_neigh_table(nb);
	struct pf_neigh_key k;
	uint8_t a[16];

	(void)state;
	learn(GW_B, mac_b);
	add_via(0, "2001:db8:80::", 48, GW_B);
	upkeep();
	send_fast("2001:db8:80::1", mac_b);
	a6(GW_B, a);
	pf_neigh_key_ip6(&k, 1, a);
	pf_neigh_publish(pf_neigh_find(nt, &k), PF_NEIGH_FAILED, NULL);
	upkeep();
	assert_false(fast("2001:db8:80::1"));
	send_check("2001:db8:80::1", 1000, 4, E_OUT, mac_b);   /* the slow path, the old MAC */
	upkeep();                                               /* the grace period is over */
	send_check("2001:db8:80::1", 1000, 4, E_NEIGH, NULL);
	learn(GW_B, mac_c);
	upkeep();
	send_fast("2001:db8:80::1", mac_c);
}

/* Reload the stage with topology @p yaml: 0, or the error of a refused one. */
static int
reload(const char *yaml)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *t2;
	int si, rc;

	assert_int_equal(pf_topo_load_string("inline.yaml", yaml, &t2, &errs), 0);
	si = pf_topo_stage_index(t2, "lpm6");
	rc = pf_stage_update(lpm6, &t2->stages[si], &errs);
	if (rc < 0) {
		pf_topo_free(t2);
		return rc;
	}
	pf_topo_free(topo_l);
	topo_l = t2;
	return 0;
}

static void
test_reload_keeps(void **state)
{
	(void)state;
	learn(GW_B, mac_b);
	add_via(0, "2001:db8:78::", 48, GW_B);
	add_via(0, "::", 0, GW_B);
	upkeep();
	send_fast("2001:db8:78::1", mac_b);
	/* A reload (the table rebuilt from the configuration) keeps what was learnt. */
	assert_int_equal(reload(TOPO), 0);
	send_fast("2001:db8:78::1", mac_b);
	send_check("9000::1", 1000, 4, E_OUT, mac_b);
	send_check("2001:db8:60::1", 1000, 4, E_OUT, mac_n1);
	assert_int_equal(del(0, "2001:db8:78::", 48).deleted, 1);
	send_check("2001:db8:78::1", 1000, 4, E_OUT, mac_b);   /* the learnt default */
}

/* A refused reload (a next hop on a port without a MAC) changes nothing learnt. */
static void
test_reload_refused(void **state)
{
	struct pf_route_op op;

	(void)state;
	learn(GW_B, mac_b);
	learn(GW_C, mac_c);
	add_via(0, "2001:db8:78::", 48, GW_B);
	add_via(0, "2001:db8:60::", 48, GW_B);   /* shadowed */
	op6(&op, PF_ROUTE_ADD, 0, "2001:db8:80::", 48);
	via(&op, GW_B, 1);
	via(&op, GW_C, 1);
	apply(&op, 1);
	upkeep();
	assert_int_not_equal(reload(TOPO_NH(", n2: { port: p2, mac: \"02:00:00:00:00:d2\" } ")), 0);
	send_fast("2001:db8:78::1", mac_b);
	send_check("2001:db8:60::1", 1000, 4, E_OUT, mac_n1);
	send_check("2001:db8:80::1", 1000, 4, E_OUT, NULL);
	/* Still in the store as they were: each one deleted once. */
	assert_int_equal(del(0, "2001:db8:78::", 48).deleted, 1);
	assert_int_equal(del(0, "2001:db8:60::", 48).deleted, 1);
	assert_int_equal(del(0, "2001:db8:80::", 48).deleted, 1);
	send_check("2001:db8:78::1", 1000, 4, E_ICMP, NULL);
}

/*
 * Forwarding goes on during churn without a misrouted lookup (rte_lpm6 gives
 * a tbl8 group a delete emptied to the next add that needs one): a reader
 * thread (a worker, reporting quiescent states to a QSBR the services use, as
 * the runtime's do) looks up one address in each of 32 configured /48s
 * while a learnt /56 inside each, beside the address, comes and goes: the
 * group under the /48 that the lookup goes through is made with the /56 and
 * freed with it. Every lookup must give the /48's next hop.
 */
#define CHURN_NETS 32

struct reader {
	const struct rte_lpm6 *lpm;
	struct rte_rcu_qsbr *v;
	volatile int stop;
	uint64_t lookups, wrong;
	uint8_t probe[CHURN_NETS][16];
};

static void *
reader_loop(void *arg)
{
	struct reader *r = arg;
	uint32_t i, hop;

	rte_rcu_qsbr_thread_register(r->v, 0);
	rte_rcu_qsbr_thread_online(r->v, 0);
	while (!r->stop) {
		for (i = 0; i < CHURN_NETS; i++) {
			if (rte_lpm6_lookup(r->lpm, r->probe[i], &hop) != 0 || hop != i)
				r->wrong++;
			r->lookups++;
		}
		rte_rcu_qsbr_quiescent(r->v, 0);
	}
	rte_rcu_qsbr_thread_offline(r->v, 0);
	rte_rcu_qsbr_thread_unregister(r->v, 0);
	return NULL;
}

static void
test_churn_readers(void **state)
{
	static char yaml[8192];
	struct pf_topo *tn, *tl;
	struct pf_stage *n6, *l6;
	struct reader *r = calloc(1, sizeof(*r));
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	struct rte_rcu_qsbr *v = rte_zmalloc("ut_lrn6_qsbr", sz, RTE_CACHE_LINE_SIZE);
	const struct lpm6_priv *lp;
	struct pf_route_result res = { 0 };
	struct pf_route_op op;
	uint32_t k, net, ops = 0;
	size_t n;
	pthread_t t;

	(void)state;
	assert_non_null(r);
	assert_non_null(v);
	assert_int_equal(rte_rcu_qsbr_init(v, 1), 0);
	/* Next hop nK and route 2001:db8:1K::/48 (K hex) per net: next hop index K. */
	n = (size_t)snprintf(yaml, sizeof(yaml),
		"ports:\n"
		"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv6: \"2001:db8:1::1/64\" }\n"
		"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv6: \"2001:db8:2::1/64\" }\n"
		"stages:\n"
		"  rx: { type: rx, ports: [p0, p1], next: { ipv6: lpm6 } }\n"
		"  lpm6:\n    type: lpm6\n    nexthops:\n");
	for (net = 0; net < CHURN_NETS; net++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n,
				      "      n%u: { port: p1, mac: \"02:00:00:00:01:%02x\" }\n", net,
				      net);
	n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "    routes:\n");
	for (net = 0; net < CHURN_NETS; net++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n,
				      "      - { prefix: \"2001:db8:1%02x::/48\", via: n%u }\n", net, net);
	snprintf(yaml + n, sizeof(yaml) - n,
		 "    learnt: { routes: 1000, nexthops: 64, groups: 8, tbl8: 512 }\n"
		 "    next: { out: tx, neigh: neigh }\n"
		 "  neigh: { type: neigh, size: 64, next: { out: tx } }\n"
		 "  tx: { type: tx, ports: [p0, p1] }\n"
		 "lcores:\n  1: [rx, lpm6, neigh, tx]\n");
	n6 = pf_test_stage(yaml, "neigh", &tn);
	l6 = pf_test_stage_fed(yaml, "lpm6", &tl, n6);
	lp = l6->priv;
	for (net = 0; net < CHURN_NETS; net++) {
		a6("2001:db8:100::1", r->probe[net]);
		r->probe[net][5] = (uint8_t)net;   /* 2001:db8:1NN::1, beside the churn */
	}
	r->lpm = lp->fib->lpm;
	r->v = v;
	pf_services_set_qsbr(v);
	assert_int_equal(pthread_create(&t, NULL, reader_loop, r), 0);
	srand(7);
	for (k = 0; k < 5000 || r->lookups < 50000000; k++) {
		/* 2001:db8:1NN:8000::/56: its add takes the group the probe's lookup
		 * goes through, its delete frees it */
		op6(&op, PF_ROUTE_ADD, 0, "2001:db8:100:8000::", 56);
		op.prefix[5] = (uint8_t)(rand() % CHURN_NETS);
		if (rand() % 2 == 0)
			op.op = PF_ROUTE_DEL;
		else
			via(&op, GW_B, 1);
		assert_int_equal(l6->ops->ctl.learn(l6, &op, 1, &res), 0);
		ops++;
		if (k > 5000000)
			break;
	}
	r->stop = 1;
	pthread_join(t, NULL);
	pf_services_set_qsbr(NULL);
	assert_int_equal(res.refused, 0);
	if (r->wrong != 0)
		fail_msg("%" PRIu64 " of %" PRIu64 " lookups wrong during %u updates (%" PRIu64
			 " adds waited)", r->wrong, r->lookups, ops, lp->g_waits);
	print_message("%" PRIu64 " lookups right during %u updates (%u added, %u deleted; %"
		      PRIu64 " adds waited for a grace period)\n", r->lookups, ops, res.added,
		      res.deleted, lp->g_waits);
	pf_stage_destroy(l6);
	pf_stage_destroy(n6);
	pf_topo_free(tl);
	pf_topo_free(tn);
	rte_free(v);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_by_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_configured_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ecmp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ecmp_fragments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_neighbour_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_keeps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_refused, setup, teardown),
		cmocka_unit_test(test_churn_readers),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
