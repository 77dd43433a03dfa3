/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm's learnt routes (stages/lpm_learnt.c) through the stage's ctl.learn
 * op and its data path: a route by address goes to the neigh edge until
 * the neighbour table knows the gateway, then (upkeep) forwards on the fast
 * path with the gateway's MAC; a configured route of the same prefix wins;
 * deletes fall back to the covering route or to no route; replaces, two
 * sources (the lower id wins), ECMP groups (every flow on one member, both
 * members used, a fragmented datagram on one), blackhole, a learnt default route, a connected route, and
 * a reload that keeps the learnt routes.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "../../stages/lpm_fib.h"
#include "pf_route.h"
#include "pf_test.h"

static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb1 };
static const uint8_t mac_c[6] = { 2, 0, 0, 0, 0, 0xc2 };
static const uint8_t mac_n1[6] = { 2, 0, 0, 0, 0, 0xd1 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

#define TOPO \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24 }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.2.0.1/24 }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: lpm, arp: neigh } }\n" \
	"  lpm: { type: lpm, nexthops: { n1: { port: p1, mac: \"02:00:00:00:00:d1\" } },\n" \
	"         routes: [ { prefix: 10.60.0.0/16, via: n1 } ],\n" \
	"         learnt: { routes: 1000, nexthops: 64, groups: 8, tbl8: 16 },\n" \
	"         next: { out: tx, neigh: neigh } }\n" \
	"  neigh: { type: neigh, size: 64, next: { out: tx } }\n" \
	"  tx: { type: tx, ports: [p0, p1] }\n" \
	"lcores:\n  1: [rx, lpm, neigh, tx]\n"

enum { E_DROP, E_OUT, E_ICMP, E_FRAG, E_NEIGH };   /* lpm's edges */

static struct pf_stage *nb, *lpm;
static struct pf_topo *topo_n, *topo_l;

static int
group_setup(void **state)
{
	static char name[32];

	snprintf(name, sizeof(name), "lrn_%d", (int)getpid());
	if (pf_test_eal_init(name) < 0)
		return -1;
	return 0;
}

static int
setup(void **state)
{
	nb = pf_test_stage(TOPO, "neigh", &topo_n);
	lpm = pf_test_stage_fed(TOPO, "lpm", &topo_l, nb);
	return 0;
}

static int
teardown(void **state)
{
	pf_stage_destroy(lpm);
	pf_stage_destroy(nb);
	pf_topo_free(topo_l);
	pf_topo_free(topo_n);
	return 0;
}

/* UDP from 192.168.0.9:@p sport on p0 to @p dst, TTL 64, as rx leaves it. */
static struct rte_mbuf *
udp(uint32_t dst, uint16_t sport)
{
	uint8_t f[64] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)(ip + 1);
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(eth->dst_addr.addr_bytes, mac_p0, 6);
	memcpy(eth->src_addr.addr_bytes, mac_c, 6);
	eth->src_addr.addr_bytes[5] = 0xa1;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(28);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0xc0a80009);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	u->src_port = rte_cpu_to_be_16(sport);
	u->dst_port = rte_cpu_to_be_16(9);
	u->dgram_len = rte_cpu_to_be_16(8);
	m = pf_test_mbuf(f, RTE_ETHER_HDR_LEN + 28, 0);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV4;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = 20;
	md->l4_proto = IPPROTO_UDP;
	md->flags = PF_META_L2_LOCAL;
	return m;
}

/* The neigh stage learns @p ip at @p mac on p1 (an ARP request from it for the router). */
static void
learn(uint32_t ip, const uint8_t *mac)
{
	uint8_t f[42] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);
	struct rte_mbuf *m;
	struct pf_meta *md;
	uint16_t e;

	memcpy(eth->dst_addr.addr_bytes, bcast, 6);
	memcpy(eth->src_addr.addr_bytes, mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	memcpy(a->arp_data.arp_sha.addr_bytes, mac, 6);
	a->arp_data.arp_sip = rte_cpu_to_be_32(ip);
	a->arp_data.arp_tip = rte_cpu_to_be_32(0x0a020001);
	m = pf_test_mbuf(f, sizeof(f), 1);
	md = pf_meta(m);
	md->cls = PF_CLASS_ARP;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->flags = PF_META_L2_MCAST | PF_META_L2_BCAST;
	pf_test_process(nb, &m, 1, &e);
	rte_pktmbuf_free(m);   /* the reply it made */
}

static void
op4(struct pf_route_op *op, uint8_t opcode, uint8_t src, uint32_t prefix, uint8_t plen)
{
	uint32_t be = rte_cpu_to_be_32(prefix);

	memset(op, 0, sizeof(*op));
	op->op = opcode;
	op->af = 4;
	op->src = src;
	op->plen = plen;
	memcpy(op->prefix, &be, 4);
}

static void
via(struct pf_route_op *op, uint32_t gw, uint16_t port)
{
	uint32_t be = rte_cpu_to_be_32(gw);

	memcpy(op->nh[op->n_nh].gw, &be, 4);
	op->nh[op->n_nh].port = port;
	op->nh[op->n_nh++].weight = 1;
}

static struct pf_route_result
apply(const struct pf_route_op *ops, unsigned int n)
{
	struct pf_route_result res = { 0 };

	assert_int_equal(lpm->ops->ctl.learn(lpm, ops, n, &res), 0);
	return res;
}

/* Route add/del in one call. */
static struct pf_route_result
add_via(uint8_t src, uint32_t prefix, uint8_t plen, uint32_t gw)
{
	struct pf_route_op op;

	op4(&op, PF_ROUTE_ADD, src, prefix, plen);
	via(&op, gw, 1);
	return apply(&op, 1);
}

static struct pf_route_result
del(uint8_t src, uint32_t prefix, uint8_t plen)
{
	struct pf_route_op op;

	op4(&op, PF_ROUTE_DEL, src, prefix, plen);
	return apply(&op, 1);
}

/* Send @p n packets to @p dst (source ports from @p sport on) and check each one's fate. */
static void
send_check(uint32_t dst, uint16_t sport, uint16_t n, uint16_t want_edge, const uint8_t *want_mac)
{
	struct rte_mbuf *m[8];
	uint16_t e[8], i;

	for (i = 0; i < n; i++)
		m[i] = udp(dst, (uint16_t)(sport + i));
	pf_test_process(lpm, m, n, e);
	for (i = 0; i < n; i++) {
		assert_int_equal(e[i], want_edge);
		if (want_mac != NULL)
			assert_memory_equal(rte_pktmbuf_mtod(m[i], uint8_t *), want_mac, 6);
	}
	pf_test_free(m, n);
}

/* The table's hop for @p dst: whether the x4 fast path takes it (no LPM_HOP_SLOW). */
static bool
fast(uint32_t dst)
{
	const struct lpm_priv *lp = lpm->priv;
	uint32_t hop;

	assert_int_equal(rte_lpm_lookup(lp->fib->lpm, dst, &hop), 0);
	return !(hop & LPM_HOP_SLOW);
}

static void
upkeep(void)
{
	static uint64_t now = 1000000000ull;

	now += 1000000000ull;
	lpm->ops->ctl.upkeep(lpm, now);
}

static void
test_by_address(void **state)
{
	struct pf_route_result r = add_via(0, 0x0a320000, 16, 0x0a020002);
	uint64_t to_neigh = pf_test_ctr(lpm, "ip4_to_neigh");

	assert_int_equal(r.added, 1);
	/* Unresolved: the neigh edge, the gateway in md->nexthop. */
	send_check(0x0a320101, 1000, 1, E_NEIGH, NULL);
	assert_int_equal(pf_test_ctr(lpm, "ip4_to_neigh"), to_neigh + 1);
	assert_false(fast(0x0a320101));
	/* Resolved, and after the upkeep: forwarded in groups of four, the gateway's MAC on them. */
	learn(0x0a020002, mac_b);
	upkeep();
	assert_true(fast(0x0a320101));
	send_check(0x0a320101, 1000, 8, E_OUT, mac_b);
	assert_int_equal(pf_test_ctr(lpm, "ip4_to_neigh"), to_neigh + 1);
	/* A replace to another gateway; then delete: no route. */
	learn(0x0a020003, mac_c);
	r = add_via(0, 0x0a320000, 16, 0x0a020003);
	assert_int_equal(r.replaced, 1);
	assert_true(fast(0x0a320101));   /* resolved when it was made */
	send_check(0x0a320101, 1000, 4, E_OUT, mac_c);
	r = del(0, 0x0a320000, 16);
	assert_int_equal(r.deleted, 1);
	send_check(0x0a320101, 1000, 4, E_DROP, NULL);
	r = del(0, 0x0a320000, 16);
	assert_int_equal(r.missing, 1);
}

static void
test_configured_wins(void **state)
{
	struct pf_route_result r;

	learn(0x0a020002, mac_b);
	r = add_via(0, 0x0a3c0000, 16, 0x0a020002);
	assert_int_equal(r.added, 1);
	assert_int_equal(r.shadowed, 1);
	upkeep();
	send_check(0x0a3c0101, 1000, 4, E_OUT, mac_n1);
	/* A more specific learnt route inside it does win (longest match). */
	r = add_via(0, 0x0a3c0100, 24, 0x0a020002);
	assert_int_equal(r.shadowed, 0);
	send_check(0x0a3c0101, 1000, 4, E_OUT, mac_b);
	send_check(0x0a3c0201, 1000, 4, E_OUT, mac_n1);
	/* Deleting it falls back to the configured /16; deleting the shadowed one changes nothing. */
	del(0, 0x0a3c0100, 24);
	send_check(0x0a3c0101, 1000, 4, E_OUT, mac_n1);
	del(0, 0x0a3c0000, 16);
	send_check(0x0a3c0101, 1000, 4, E_OUT, mac_n1);
}

static void
test_sources(void **state)
{
	learn(0x0a020002, mac_b);
	learn(0x0a020003, mac_c);
	add_via(3, 0x0a460000, 16, 0x0a020003);
	upkeep();
	send_check(0x0a460101, 1000, 4, E_OUT, mac_c);
	/* Source 1 beats source 3; its withdrawal gives source 3's back. */
	add_via(1, 0x0a460000, 16, 0x0a020002);
	send_check(0x0a460101, 1000, 4, E_OUT, mac_b);
	del(1, 0x0a460000, 16);
	send_check(0x0a460101, 1000, 4, E_OUT, mac_c);
	del(3, 0x0a460000, 16);
	send_check(0x0a460101, 1000, 4, E_DROP, NULL);
}

static void
test_ecmp(void **state)
{
	struct pf_route_op op;
	struct pf_route_result r;
	unsigned int n_b = 0, n_c = 0, i, k;
	uint8_t first[256];

	learn(0x0a020002, mac_b);
	learn(0x0a020003, mac_c);
	op4(&op, PF_ROUTE_ADD, 0, 0x0a500000, 16);
	via(&op, 0x0a020002, 1);
	via(&op, 0x0a020003, 1);
	r = apply(&op, 1);
	assert_int_equal(r.added, 1);
	upkeep();
	/* 256 flows, each sent three times: one member per flow, both used. */
	for (k = 0; k < 3; k++)
		for (i = 0; i < 256; i++) {
			struct rte_mbuf *m = udp(0x0a500101, (uint16_t)(2000 + i));
			uint16_t e;
			uint8_t last;

			pf_test_process(lpm, &m, 1, &e);
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
	/* The same group again (a replay) changes nothing. */
	r = apply(&op, 1);
	assert_int_equal(r.unchanged, 1);
}

/* Fragment @p first (offset 0, MF: ports inside) or the next one of datagram @p sport. */
static struct rte_mbuf *
frag(uint32_t dst, uint16_t sport, bool first)
{
	struct rte_mbuf *m = udp(dst, sport);
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  RTE_ETHER_HDR_LEN);

	ip->packet_id = rte_cpu_to_be_16(sport);
	ip->fragment_offset = rte_cpu_to_be_16(first ? RTE_IPV4_HDR_MF_FLAG : 2);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	pf_meta(m)->flags |= PF_META_IP_FRAG | (first ? 0 : PF_META_IP_NONFIRST);
	return m;
}

/* Every fragment of a datagram on one member: the first one's ports are not hashed. */
static void
test_ecmp_fragments(void **state)
{
	struct pf_route_op op;
	unsigned int i, k;

	learn(0x0a020002, mac_b);
	learn(0x0a020003, mac_c);
	op4(&op, PF_ROUTE_ADD, 0, 0x0a500000, 16);
	via(&op, 0x0a020002, 1);
	via(&op, 0x0a020003, 1);
	assert_int_equal(apply(&op, 1).added, 1);
	upkeep();
	for (i = 0; i < 64; i++) {
		uint8_t got[2];

		for (k = 0; k < 2; k++) {
			struct rte_mbuf *m = frag(0x0a500101, (uint16_t)(3000 + i), k == 0);
			uint16_t e;

			pf_test_process(lpm, &m, 1, &e);
			assert_int_equal(e, E_OUT);
			got[k] = rte_pktmbuf_mtod(m, uint8_t *)[5];
			rte_pktmbuf_free(m);
		}
		assert_int_equal(got[0], got[1]);
	}
}

static void
test_kinds(void **state)
{
	struct pf_route_op op;
	uint64_t bh = pf_test_ctr(lpm, "ip4_blackhole");

	op4(&op, PF_ROUTE_ADD, 0, 0x0a5a0000, 16);
	op.kind = PF_ROUTE_BLACKHOLE;
	apply(&op, 1);
	send_check(0x0a5a0101, 1000, 4, E_DROP, NULL);
	assert_int_equal(pf_test_ctr(lpm, "ip4_blackhole"), bh + 4);
	/* Connected (no gateway): the destination is the neighbour. */
	op4(&op, PF_ROUTE_ADD, 0, 0x0a640000, 16);
	op.n_nh = 1;
	op.nh[0].port = 1;
	op.nh[0].weight = 1;
	apply(&op, 1);
	send_check(0x0a640005, 1000, 1, E_NEIGH, NULL);
	/* A learnt default route; withdrawn: no route. */
	learn(0x0a020002, mac_b);
	add_via(0, 0, 0, 0x0a020002);
	upkeep();
	send_check(0x08080808, 1000, 4, E_OUT, mac_b);
	del(0, 0, 0);
	send_check(0x08080808, 1000, 4, E_DROP, NULL);
	/* Refused: a port that does not exist, host bits, a hop-less unicast. */
	op4(&op, PF_ROUTE_ADD, 0, 0x0a6e0000, 16);
	via(&op, 0x0a020002, 7);
	assert_int_equal(apply(&op, 1).refused, 1);
	op4(&op, PF_ROUTE_ADD, 0, 0x0a6e0001, 16);
	via(&op, 0x0a020002, 1);
	assert_int_equal(apply(&op, 1).refused, 1);
	op4(&op, PF_ROUTE_ADD, 0, 0x0a6e0000, 16);
	assert_int_equal(apply(&op, 1).refused, 1);
}

/*
 * The gateway's neighbour lost: its routes leave the fast path at once but
 * its entry still forwards to the MAC until a grace period later (a lookup
 * made before the re-flag finds what it was made for), then it resolves
 * through the neigh edge; learnt again, the fast path is back.
 */
static void
test_neighbour_lost(void **state)
{
	struct pf_neigh_table *nt = pf_test_neigh_table(nb);
	struct pf_neigh_key k;

	learn(0x0a020002, mac_b);
	add_via(0, 0x0a500000, 16, 0x0a020002);
	upkeep();
	assert_true(fast(0x0a500101));
	pf_neigh_key_ip4(&k, 1, 0x0a020002);
	assert_non_null(pf_neigh_find(nt, &k));
	pf_neigh_publish(pf_neigh_find(nt, &k), PF_NEIGH_FAILED, NULL);
	upkeep();
	assert_false(fast(0x0a500101));
	send_check(0x0a500101, 1000, 4, E_OUT, mac_b);   /* the slow path, the old entry */
	upkeep();                                          /* the grace period is over */
	assert_false(fast(0x0a500101));
	send_check(0x0a500101, 1000, 4, E_NEIGH, NULL);
	learn(0x0a020002, mac_c);
	upkeep();
	assert_true(fast(0x0a500101));
	send_check(0x0a500101, 1000, 8, E_OUT, mac_c);
}

static void
test_reload_keeps(void **state)
{
	struct pf_topo *t2;
	struct pf_errs errs = { 0 };
	int si;

	learn(0x0a020002, mac_b);
	add_via(0, 0x0a780000, 16, 0x0a020002);
	upkeep();
	send_check(0x0a780101, 1000, 4, E_OUT, mac_b);
	/* A reload (the table rebuilt from the file) keeps what was learnt. */
	assert_int_equal(pf_topo_load_string("inline.yaml", TOPO, &t2, &errs), 0);
	si = pf_topo_stage_index(t2, "lpm");
	assert_int_equal(pf_stage_update(lpm, &t2->stages[si], &errs), 0);
	send_check(0x0a780101, 1000, 4, E_OUT, mac_b);
	send_check(0x0a3c0101, 1000, 4, E_OUT, mac_n1);
	pf_topo_free(topo_l);
	topo_l = t2;
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
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
