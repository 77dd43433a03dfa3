/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the icmp stage on hand-built mbufs: the error byte for
 * byte (headers, checksums, quote, next-hop MTU), every suppression rule
 * (including those lpm never lets through: broadcast destination, martian
 * source), no address on the ingress port, no headroom, and the rate limit.
 */
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "pf_test.h"

static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_host[6] = { 2, 0, 0, 0, 0, 0xaa };

#define TOPO(icmp_params) \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24 }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\" }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: lpm, arp: lpm } }\n" \
	"  lpm: { type: lpm, nexthops: { nh: { port: p1, mac: \"02:00:00:00:01:01\" } },\n" \
	"         routes: [ { prefix: 10.0.0.0/8, via: nh } ], next: { out: tx, icmp: icmp } }\n" \
	"  icmp: { type: icmp, " icmp_params " next: tx }\n" \
	"  tx: { type: tx, ports: [p0, p1] }\n" \
	"lcores:\n  1: [rx, lpm, icmp, tx]\n"

#define TE PF_META_ICMP(11, 0, 0)

static int
group_setup(void **state)
{
	return pf_test_eal_init("icmp");
}

/* UDP/IPv4 from @p src to @p dst with @p ihl words of header (options NOP-filled). */
static struct rte_mbuf *
mk(uint32_t src, uint32_t dst, uint8_t ihl, uint16_t payload, uint16_t in_port, uint32_t err)
{
	uint8_t f[256] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint16_t l3 = ihl * 4, len = RTE_ETHER_HDR_LEN + l3 + 8 + payload, i;
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(eth->dst_addr.addr_bytes, mac_p0, 6);
	memcpy(eth->src_addr.addr_bytes, mac_host, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x40 | ihl;
	ip->total_length = rte_cpu_to_be_16(l3 + 8 + payload);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->time_to_live = 1;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	memset(ip + 1, 1, l3 - sizeof(*ip));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	for (i = RTE_ETHER_HDR_LEN + l3; i < len; i++)
		f[i] = (uint8_t)i;
	m = pf_test_mbuf(f, len, in_port);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV4;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = l3;
	md->flags = PF_META_L2_LOCAL | (ihl > 5 ? PF_META_IP_OPTIONS : 0);
	md->nexthop = err;
	return m;
}

static uint16_t
run1(struct pf_stage *st, struct rte_mbuf *m)
{
	uint16_t e;

	pf_test_process(st, &m, 1, &e);
	return e;
}

static void
check_error(struct rte_mbuf *m, const uint8_t *orig, uint16_t quote, uint8_t type, uint8_t code,
	    uint16_t mtu)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	const uint8_t *ic = (const uint8_t *)(ip + 1);

	assert_int_equal(rte_pktmbuf_pkt_len(m), 14 + 20 + 8 + quote);
	assert_memory_equal(p, mac_host, 6);
	assert_memory_equal(p + 6, mac_p0, 6);
	assert_int_equal(rte_be_to_cpu_16(*(const uint16_t *)(p + 12)), RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ip->version_ihl, 0x45);
	assert_int_equal(ip->type_of_service, 0xc0);
	assert_int_equal(rte_be_to_cpu_16(ip->total_length), 20 + 8 + quote);
	assert_int_equal(ip->fragment_offset, 0);
	assert_int_equal(ip->time_to_live, 64);
	assert_int_equal(ip->next_proto_id, IPPROTO_ICMP);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), 0xc0a80001);
	assert_memory_equal(&ip->dst_addr, orig + 14 + 12, 4);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(ic[0], type);
	assert_int_equal(ic[1], code);
	assert_int_equal(ic[4] | ic[5], 0);
	assert_int_equal(ic[6] << 8 | ic[7], mtu);
	assert_int_equal(rte_raw_cksum(ic, 8 + quote), 0xffff);
	assert_memory_equal(ic + 8, orig + 14, quote);
	assert_int_equal(pf_meta(m)->out_port, 0);
	assert_int_equal(pf_meta(m)->l2_len, 14);
}

static void
test_errors(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO(""), "icmp", &topo);
	struct rte_mbuf *m;
	uint8_t orig[256];

	/* quote = IPv4 header + 8 bytes, the rest trimmed */
	m = mk(0xc0a80009, 0x0a010203, 5, 100, 0, TE);
	memcpy(orig, rte_pktmbuf_mtod(m, void *), rte_pktmbuf_pkt_len(m));
	assert_int_equal(run1(st, m), 1);
	check_error(m, orig, 28, 11, 0, 0);
	rte_pktmbuf_free(m);
	/* options are quoted too; 3/4 carries the MTU */
	m = mk(0xc0a80009, 0x0a010203, 7, 30, 0, PF_META_ICMP(3, 4, 1400));
	memcpy(orig, rte_pktmbuf_mtod(m, void *), rte_pktmbuf_pkt_len(m));
	assert_int_equal(run1(st, m), 1);
	check_error(m, orig, 36, 3, 4, 1400);
	rte_pktmbuf_free(m);
	/* shorter than header + 8: quote what there is */
	m = mk(0xc0a80009, 0x0b000001, 5, 0, 0, PF_META_ICMP(3, 0, 0));
	rte_pktmbuf_trim(m, 4);
	*rte_pktmbuf_mtod_offset(m, uint16_t *, 16) = rte_cpu_to_be_16(24);
	memcpy(orig, rte_pktmbuf_mtod(m, void *), rte_pktmbuf_pkt_len(m));
	assert_int_equal(run1(st, m), 1);
	check_error(m, orig, 24, 3, 0, 0);
	rte_pktmbuf_free(m);
	/* host unreachable (neigh: ARP failed) */
	m = mk(0xc0a80009, 0x0a010203, 5, 8, 0, PF_META_ICMP(3, 1, 0));
	memcpy(orig, rte_pktmbuf_mtod(m, void *), rte_pktmbuf_pkt_len(m));
	assert_int_equal(run1(st, m), 1);
	check_error(m, orig, 28, 3, 1, 0);
	rte_pktmbuf_free(m);
	assert_int_equal(pf_test_ctr(st, "time_exceeded"), 1);
	assert_int_equal(pf_test_ctr(st, "frag_needed"), 1);
	assert_int_equal(pf_test_ctr(st, "net_unreachable"), 1);
	assert_int_equal(pf_test_ctr(st, "host_unreachable"), 1);
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

/* Run @p m alone: dropped by reason @p ctr (counted once), freed. */
static void
expect_drop(struct pf_stage *st, struct rte_mbuf *m, const char *ctr)
{
	uint64_t before[2] = { pf_test_ctr(st, ctr), pf_test_ctr(st, "time_exceeded") };
	uint16_t e = 1;

	pf_test_process(st, &m, 1, &e);
	assert_int_equal(e, 0);
	assert_int_equal(pf_test_ctr(st, ctr) - before[0], 1);
	assert_int_equal(pf_test_ctr(st, "time_exceeded"), before[1]);
	pf_test_free(&m, 1);
}

static void
test_suppressed(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO(""), "icmp", &topo);
	struct rte_mbuf *m;

	expect_drop(st, mk(0xc0a80009, 0x0a010203, 5, 8, 0, 0), "icmp_no_reason");
	expect_drop(st, mk(0xc0a80009, 0x0a010203, 5, 8, 0, PF_META_ICMP(3, 2, 0)),
		    "icmp_no_reason");
	expect_drop(st, mk(0xc0a80009, 0xe0000001, 5, 8, 0, TE), "icmp_for_l3_bcast");
	expect_drop(st, mk(0xc0a80009, 0xffffffff, 5, 8, 0, TE), "icmp_for_l3_bcast");
	expect_drop(st, mk(0, 0x0a010203, 5, 8, 0, TE), "icmp_for_bad_src");
	expect_drop(st, mk(0x7f000001, 0x0a010203, 5, 8, 0, TE), "icmp_for_bad_src");
	expect_drop(st, mk(0xf0000001, 0x0a010203, 5, 8, 0, TE), "icmp_for_bad_src");
	expect_drop(st, mk(0xc0a80009, 0x0a010203, 5, 8, 1, TE), "icmp_no_port_addr");
	m = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	pf_meta(m)->flags |= PF_META_L2_MCAST | PF_META_L2_BCAST;
	expect_drop(st, m, "icmp_for_l2_bcast");
	m = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	pf_meta(m)->flags |= PF_META_IP_FRAG | PF_META_IP_NONFIRST;
	expect_drop(st, m, "icmp_for_nonfirst_fragment");
	/* an ICMP error (3/3 here) is never answered; an echo request is */
	m = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14)->next_proto_id = IPPROTO_ICMP;
	*rte_pktmbuf_mtod_offset(m, uint8_t *, 34) = 3;
	expect_drop(st, m, "icmp_for_icmp_error");
	m = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14)->next_proto_id = IPPROTO_ICMP;
	*rte_pktmbuf_mtod_offset(m, uint8_t *, 34) = 8;
	assert_int_equal(run1(st, m), 1);
	rte_pktmbuf_free(m);
	/* no headroom for the new headers: dropped, the packet untouched */
	m = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	memmove(rte_pktmbuf_mtod_offset(m, uint8_t *, -(int)(m->data_off - 4)),
		rte_pktmbuf_mtod(m, void *), m->data_len);
	m->data_off = 4;
	expect_drop(st, m, "icmp_no_room");
	assert_int_equal(pf_test_ctr(st, "time_exceeded"), 1);
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

/* rate_pps 1, rate_burst 2: back to back, two errors go and the rest wait a second. */
static void
test_ratelimit(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO("rate_pps: 1, rate_burst: 2,"), "icmp",
					    &topo);
	struct rte_mbuf *m[5];
	uint16_t e[5], i, sent = 0;

	for (i = 0; i < 5; i++)
		m[i] = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	pf_test_process(st, m, 5, e);
	for (i = 0; i < 5; i++)
		sent += e[i];
	assert_int_equal(sent, 2);
	assert_int_equal(e[0] + e[1], 2);
	assert_int_equal(pf_test_ctr(st, "icmp_ratelimited"), 3);
	pf_test_free(m, 5);
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

/* The IP ID of the error @p m became. */
static uint16_t
err_ip_id(struct rte_mbuf *m)
{
	return rte_be_to_cpu_16(rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
							RTE_ETHER_HDR_LEN)->packet_id);
}

/*
 * A dry run (pf_stage.dry_run, trace inject) decides as a live one but spends
 * no rate-limit token and no IP ID: three dry errors all pass, then the
 * live ones still find the burst of 2 and the IP ID the dry ones showed.
 */
static void
test_ratelimit_dry(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO("rate_pps: 1, rate_burst: 2,"), "icmp",
					    &topo);
	struct rte_mbuf *m[3];
	uint16_t e[3], i, id = 0;

	st->dry_run = true;
	for (i = 0; i < 3; i++) {
		m[0] = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
		assert_int_equal(run1(st, m[0]), 1);
		if (i != 0)
			assert_int_equal(err_ip_id(m[0]), id);
		id = err_ip_id(m[0]);
		rte_pktmbuf_free(m[0]);
	}
	st->dry_run = false;
	for (i = 0; i < 3; i++)
		m[i] = mk(0xc0a80009, 0x0a010203, 5, 8, 0, TE);
	pf_test_process(st, m, 3, e);
	assert_int_equal(e[0], 1);
	assert_int_equal(e[1], 1);
	assert_int_equal(e[2], 0);
	assert_int_equal(err_ip_id(m[0]), id);
	pf_test_free(m, 3);
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_suppressed),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_ratelimit_dry),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
