/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of neighbour resolution on hand-built mbufs: lpm sends a packet
 * for a connected host to its neigh edge; neigh holds it and makes an ARP
 * request (emit); the reply releases it rewritten (TTL, MACs) and publishes
 * the MAC, after which lpm forwards by itself; requests aimed at the router
 * are answered and learned; bad sender MACs are neither; the queue overflows
 * under its own name; failure sends held packets to the icmp edge (3/1);
 * stopping drops what is held; the table's reader sees MAC and state
 * together.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "pf_neigh.h"
#include "pf_test.h"

static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_p1[6] = { 2, 0, 0, 0, 0, 0x11 };
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa1 };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb1 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

#define TOPO \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24 }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.2.0.1/24 }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: lpm, arp: neigh } }\n" \
	"  lpm: { type: lpm, routes: [ { prefix: 172.16.0.0/16, via: 10.2.0.30 } ],\n" \
	"         next: { out: tx, icmp: icmp, neigh: neigh } }\n" \
	"  neigh: { type: neigh, size: 64, queue: 2, next: { out: tx, icmp: icmp } }\n" \
	"  icmp: { type: icmp, next: tx }\n" \
	"  tx: { type: tx, ports: [p0, p1] }\n" \
	"lcores:\n  1: [rx, lpm, neigh, icmp, tx]\n"

enum { E_DROP, E_OUT, E_ICMP, E_FRAG, E_NEIGH };   /* lpm's edges */

static int
group_setup(void **state)
{
	static char name[32];

	(void)state;
	/* A prefix of its own per run: worktrees run tests side by side. */
	snprintf(name, sizeof(name), "neigh_%d", (int)getpid());
	return pf_test_eal_init(name);
}

/* UDP from host A on p0 (192.168.0.9) to @p dst, TTL 64, as rx leaves it. */
static struct rte_mbuf *
udp(uint32_t dst)
{
	uint8_t f[64] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(eth->dst_addr.addr_bytes, mac_p0, 6);
	memcpy(eth->src_addr.addr_bytes, mac_a, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(28);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0xc0a80009);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	m = pf_test_mbuf(f, RTE_ETHER_HDR_LEN + 28, 0);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV4;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = 20;
	md->flags = PF_META_L2_LOCAL;
	return m;
}

/* An ARP frame arriving on @p port. */
static struct rte_mbuf *
arp(uint16_t port, uint16_t op, const uint8_t *dst, const uint8_t *sha, uint32_t sip,
    uint32_t tip)
{
	uint8_t f[42] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(eth->dst_addr.addr_bytes, dst, 6);
	memcpy(eth->src_addr.addr_bytes, mac_b, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	memcpy(a->arp_data.arp_sha.addr_bytes, sha, 6);
	a->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	a->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	m = pf_test_mbuf(f, sizeof(f), port);
	md = pf_meta(m);
	md->cls = PF_CLASS_ARP;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->flags = dst[0] & 1 ? PF_META_L2_MCAST | PF_META_L2_BCAST : PF_META_L2_LOCAL;
	return m;
}

static uint16_t
run1(struct pf_stage *st, struct rte_mbuf *m)
{
	uint16_t e;

	pf_test_process(st, &m, 1, &e);
	if (e == E_DROP)
		rte_pktmbuf_free(m);
	return e;
}

/* The ARP request @p m asks for @p tip out of p1 (to @p dst, NULL: broadcast). */
static void
check_request(struct rte_mbuf *m, uint32_t tip, const uint8_t *dst)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_arp_hdr *a = (const struct rte_arp_hdr *)(eth + 1);

	assert_int_equal(rte_pktmbuf_pkt_len(m), 42);
	assert_memory_equal(eth->dst_addr.addr_bytes, dst != NULL ? dst : bcast, 6);
	assert_memory_equal(eth->src_addr.addr_bytes, mac_p1, 6);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REQUEST);
	assert_memory_equal(a->arp_data.arp_sha.addr_bytes, mac_p1, 6);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), 0x0a020001);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), tip);
	assert_int_equal(pf_meta(m)->out_port, 1);
}

/* emit with room for 32: returns how many, edges in @p edge. */
static uint16_t
emit(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t *edge, bool draining)
{
	return st->ops->dp.emit(st, pkts, 32, edge, draining);
}

/*
 * Whole groups of four for hosts on a connected subnet and for a route via
 * an address (both /24 or shorter: direct tbl24 hits): lpm's x4 group test
 * must not forward them with the plain next hops, every one goes to neigh.
 */
static void
test_groups_to_neigh(void **state)
{
	struct pf_topo *topo2;
	struct pf_stage *lpm = pf_test_stage(TOPO, "lpm", &topo2);
	struct rte_mbuf *pk[12];
	uint16_t e[12], i, round;

	(void)state;
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 12; i++)
			pk[i] = udp(round == 0 ? 0x0a020007u + i :           /* connected */
				    round == 1 ? 0xac100505u + i :           /* via 10.2.0.30 */
				    i % 2 ? 0x0a020007u : 0xac100505u);
		pf_test_process(lpm, pk, 12, e);
		for (i = 0; i < 12; i++) {
			if (e[i] != E_NEIGH)
				fail_msg("round %u packet %u: edge %u, want neigh", round, i, e[i]);
			assert_int_equal(pf_meta(pk[i])->out_port, 1);
		}
		pf_test_free(pk, 12);
	}
	pf_stage_destroy(lpm);
	pf_topo_free(topo2);
}

static void
test_resolve(void **state)
{
	struct pf_topo *topo, *topo2;
	struct pf_stage *nb = pf_test_stage(TOPO, "neigh", &topo);
	struct pf_stage *lpm = pf_test_stage_fed(TOPO, "lpm", &topo2, nb);
	struct rte_mbuf *m, *out[32];
	uint16_t edge[32], n, i;
	struct rte_ipv4_hdr *ip;
	struct pf_neigh_key k;
	uint8_t mac[6];

	(void)state;
	/* connected host 10.2.0.7: lpm has no MAC, hands it to neigh */
	m = udp(0x0a020007);
	assert_int_equal(run1(lpm, m), E_NEIGH);
	assert_int_equal(pf_meta(m)->nexthop, 0x0a020007);
	assert_int_equal(pf_meta(m)->out_port, 1);
	assert_int_equal(run1(nb, m), PF_EDGE_HELD);
	n = emit(nb, out, edge, false);
	assert_int_equal(n, 1);
	assert_int_equal(edge[0], E_OUT);
	check_request(out[0], 0x0a020007, NULL);
	pf_test_free(out, 1);
	assert_int_equal(nb->replicas, 1);
	/* a second one waits too, a third overflows the queue of 2 */
	m = udp(0x0a020007);
	assert_int_equal(run1(lpm, m), E_NEIGH);
	assert_int_equal(run1(nb, m), PF_EDGE_HELD);
	m = udp(0x0a020007);
	assert_int_equal(run1(lpm, m), E_NEIGH);
	assert_int_equal(run1(nb, m), E_DROP);
	assert_int_equal(pf_test_ctr(nb, "neigh_hold_overflow"), 1);
	assert_int_equal(emit(nb, out, edge, false), 0);
	/* the reply releases both, rewritten; then the MAC is published */
	assert_int_equal(run1(nb, arp(1, RTE_ARP_OP_REPLY, mac_p1, mac_b, 0x0a020007,
				      0x0a020001)), E_DROP);
	assert_int_equal(pf_test_ctr(nb, "arp_consumed"), 1);
	pf_neigh_key_ip4(&k, 1, 0x0a020007);
	assert_false(pf_neigh_resolve(pf_test_neigh_table(nb), &k, mac));
	n = emit(nb, out, edge, false);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_int_equal(edge[i], E_OUT);
		assert_memory_equal(rte_pktmbuf_mtod(out[i], uint8_t *), mac_b, 6);
		assert_memory_equal(rte_pktmbuf_mtod(out[i], uint8_t *) + 6, mac_p1, 6);
		ip = rte_pktmbuf_mtod_offset(out[i], struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);
		assert_int_equal(ip->time_to_live, 63);
		assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	}
	pf_test_free(out, n);
	assert_true(pf_neigh_resolve(pf_test_neigh_table(nb), &k, mac));
	assert_memory_equal(mac, mac_b, 6);
	assert_int_equal(pf_test_ctr(nb, "neigh_released"), 2);
	assert_int_equal(pf_test_ctr(nb, "neigh_resolved"), 1);
	/* now lpm forwards by itself */
	m = udp(0x0a020007);
	assert_int_equal(run1(lpm, m), E_OUT);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), mac_b, 6);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *) + 6, mac_p1, 6);
	rte_pktmbuf_free(m);
	/* a next hop by address: 172.16/16 via 10.2.0.30 */
	m = udp(0xac100505);
	assert_int_equal(run1(lpm, m), E_NEIGH);
	assert_int_equal(pf_meta(m)->nexthop, 0x0a02001e);
	rte_pktmbuf_free(m);
	pf_stage_destroy(lpm);
	pf_stage_destroy(nb);
	pf_topo_free(topo);
	pf_topo_free(topo2);
}

static void
test_arp_in(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *nb = pf_test_stage(TOPO, "neigh", &topo);
	static const uint8_t mcast[6] = { 1, 0, 0x5e, 0, 0, 1 }, zero[6] = { 0 };
	const struct rte_arp_hdr *a;
	struct pf_neigh_key k;
	struct rte_mbuf *m;
	uint8_t mac[6];

	(void)state;
	/* a request for the port's address: answered, its sender learned */
	m = arp(0, RTE_ARP_OP_REQUEST, bcast, mac_a, 0xc0a80009, 0xc0a80001);
	assert_int_equal(run1(nb, m), E_OUT);
	a = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, RTE_ETHER_HDR_LEN);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REPLY);
	assert_memory_equal(a->arp_data.arp_sha.addr_bytes, mac_p0, 6);
	assert_memory_equal(a->arp_data.arp_tha.addr_bytes, mac_a, 6);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), mac_a, 6);
	assert_int_equal(pf_meta(m)->out_port, 0);
	rte_pktmbuf_free(m);
	pf_neigh_key_ip4(&k, 0, 0xc0a80009);
	assert_true(pf_neigh_resolve(pf_test_neigh_table(nb), &k, mac));
	assert_memory_equal(mac, mac_a, 6);
	assert_int_equal(pf_test_ctr(nb, "neigh_learned"), 1);
	/* group or zero sender MACs: never answered, never learned */
	assert_int_equal(run1(nb, arp(0, RTE_ARP_OP_REQUEST, bcast, bcast, 0xc0a80002,
				      0xc0a80001)), E_DROP);
	assert_int_equal(run1(nb, arp(0, RTE_ARP_OP_REQUEST, bcast, mcast, 0xc0a80003,
				      0xc0a80001)), E_DROP);
	assert_int_equal(run1(nb, arp(0, RTE_ARP_OP_REQUEST, bcast, zero, 0xc0a80004,
				      0xc0a80001)), E_DROP);
	assert_int_equal(pf_test_ctr(nb, "arp_bad_sender_mac"), 3);
	pf_neigh_key_ip4(&k, 0, 0xc0a80002);
	assert_false(pf_neigh_resolve(pf_test_neigh_table(nb), &k, mac));
	/* a reply from a stranger teaches nothing; a request for another: not for us */
	assert_int_equal(run1(nb, arp(0, RTE_ARP_OP_REPLY, mac_p0, mac_b, 0xc0a80005,
				      0xc0a80001)), E_DROP);
	pf_neigh_key_ip4(&k, 0, 0xc0a80005);
	assert_false(pf_neigh_resolve(pf_test_neigh_table(nb), &k, mac));
	assert_int_equal(run1(nb, arp(0, RTE_ARP_OP_REQUEST, bcast, mac_b, 0xc0a80005,
				      0xc0a80063)), E_DROP);
	assert_int_equal(pf_test_ctr(nb, "arp_not_for_us"), 1);
	/* gratuitous ARP moves a known host */
	assert_int_equal(run1(nb, arp(0, RTE_ARP_OP_REQUEST, bcast, mac_b, 0xc0a80009,
				      0xc0a80009)), E_DROP);
	pf_neigh_key_ip4(&k, 0, 0xc0a80009);
	assert_true(pf_neigh_resolve(pf_test_neigh_table(nb), &k, mac));
	assert_memory_equal(mac, mac_b, 6);
	assert_int_equal(pf_test_ctr(nb, "neigh_updated"), 1);
	pf_stage_destroy(nb);
	pf_topo_free(topo);
}

static void
test_fail_and_stop(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *nb = pf_test_stage(TOPO, "neigh", &topo);
	struct rte_mbuf *m, *out[32];
	uint16_t edge[32], n, k;
	uint64_t now;

	(void)state;
	m = udp(0x0a020009);
	pf_meta(m)->out_port = 1;
	pf_meta(m)->nexthop = 0x0a020009;
	assert_int_equal(run1(nb, m), PF_EDGE_HELD);
	assert_int_equal(emit(nb, out, edge, false), 1);   /* the first request */
	pf_test_free(out, 1);
	/* The clock after the hold: the retries are due a second after it, and
	 * a clock read before it is short by however long a busy machine took
	 * (ASan CI with a busy loop: no retry at that clock + 1.001 s). */
	now = pf_now_ns();
	/* two more requests a second apart, then it fails: 3/1 via icmp */
	for (k = 1; k <= 3; k++) {
		nb->ops->dp.housekeep(nb, now + k * 1000000000ull + 1000000);
		n = emit(nb, out, edge, false);
		assert_int_equal(n, 1);
		if (k < 3) {
			check_request(out[0], 0x0a020009, NULL);
		} else {
			assert_int_equal(edge[0], E_ICMP);
			assert_int_equal(pf_meta(out[0])->nexthop, PF_META_ICMP(3, 1, 0));
			assert_int_equal(pf_meta(out[0])->out_port, 0);
		}
		pf_test_free(out, 1);
	}
	assert_int_equal(pf_test_ctr(nb, "neigh_failed"), 1);
	assert_int_equal(pf_test_ctr(nb, "arp_request"), 3);
	/* held again (a new round), then pipefwd stops: dropped by name */
	m = udp(0x0a020009);
	pf_meta(m)->out_port = 1;
	pf_meta(m)->nexthop = 0x0a020009;
	assert_int_equal(run1(nb, m), PF_EDGE_HELD);
	assert_true(nb->ops->obs.busy(nb));
	n = emit(nb, out, edge, true);
	assert_int_equal(n, 2);   /* the new request, the held packet */
	assert_int_equal(edge[0], E_OUT);
	assert_int_equal(edge[1], E_DROP);
	assert_int_equal(pf_test_ctr(nb, "neigh_hold_stopped"), 1);
	pf_test_free(out, n);
	assert_false(nb->ops->obs.busy(nb));
	pf_stage_destroy(nb);
	pf_topo_free(topo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_groups_to_neigh),
		cmocka_unit_test(test_arp_in),
		cmocka_unit_test(test_fail_and_stop),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
