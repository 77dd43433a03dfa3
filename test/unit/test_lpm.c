/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm stage: RFC 1624 checksum update (exhaustive), route parsing errors,
 * every RFC 1812 verdict on hand-built frames, ARP and ICMP echo answers,
 * x4 / bulk / scalar agreement with a naive model on 10k random routes,
 * x4 groups holding every kind of packet the group test must reject,
 * and a live route update.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "../../stages/lpm.h"
#include "pf_test.h"

#define MAC_P0 "02:00:00:00:00:10"
static const uint8_t mac_p0[6] = { 2, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_p1[6] = { 2, 0, 0, 0, 0, 0x11 };
static const uint8_t mac_p2[6] = { 2, 0, 0, 0, 0, 0x12 };
static const uint8_t mac_host[6] = { 2, 0, 0, 0, 0, 0xaa };
static const uint8_t mac_nh1[6] = { 2, 0, 0, 0, 1, 1 };
static const uint8_t mac_nh2[6] = { 2, 0, 0, 0, 1, 2 };
static const uint8_t mac_nh3[6] = { 2, 0, 0, 0, 1, 3 };

#define TOPO_HEAD \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"" MAC_P0 "\", ipv4: 192.168.0.1/24 }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.1.0.254/16 }\n" \
	"  p2: { device: net_null2, mac: \"02:00:00:00:00:12\", ipv4: 172.16.0.1/30 }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1, p2], next: { ipv4: lpm, arp: lpm } }\n" \
	"  tx: { type: tx, ports: [p0, p1, p2] }\n"
#define TOPO_TAIL "lcores:\n  1: [rx, lpm, tx]\n"
#define NEXTHOPS \
	"      nexthops:\n" \
	"        nh1: { port: p1, mac: \"02:00:00:00:01:01\" }\n" \
	"        nh2: { port: p2, mac: \"02:00:00:00:01:02\" }\n" \
	"        nh3: { port: p0, mac: \"02:00:00:00:01:03\" }\n"

static const char *topo_routes =
	TOPO_HEAD
	"  lpm:\n"
	"      type: lpm\n"
	"      next: tx\n"
	NEXTHOPS
	"      routes:\n"
	"        - { prefix: 10.0.0.0/8, via: nh1 }\n"
	"        - { prefix: 10.2.0.0/16, via: nh2 }\n"
	"        - { prefix: 10.2.3.0/24, via: nh3 }\n"
	"        - { prefix: 10.2.3.4/32, via: nh1 }\n"
	"        - { prefix: 0.0.0.0/0, via: nh2 }\n"
	TOPO_TAIL;

static const char *topo_noroute =
	TOPO_HEAD
	"  lpm:\n"
	"      type: lpm\n"
	"      next: tx\n"
	NEXTHOPS
	"      routes:\n"
	"        - { prefix: 10.0.0.0/8, via: nh1 }\n"
	TOPO_TAIL;

static int
group_setup(void **state)
{
	return pf_test_eal_init("lpm");
}

static uint32_t
ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}

/* Ethernet + IPv4 + UDP with a valid header checksum. */
static struct rte_mbuf *
mk_ip(const uint8_t *dmac, uint32_t src, uint32_t dst, uint8_t ttl, uint8_t proto,
      uint16_t in_port)
{
	uint8_t buf[64] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(eth->dst_addr.addr_bytes, dmac, 6);
	memcpy(eth->src_addr.addr_bytes, mac_host, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(46);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->time_to_live = ttl;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	m = pf_test_mbuf(buf, 60, in_port);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV4;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = 20;
	if (dmac[0] & 1)
		md->flags |= PF_META_L2_MCAST;
	if (memcmp(dmac, "\xff\xff\xff\xff\xff\xff", 6) == 0)
		md->flags |= PF_META_L2_BCAST;
	return m;
}

static struct rte_ipv4_hdr *
iph(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, pf_meta(m)->l2_len);
}

/*
 * What rx guarantees (include/pf_meta.h): PF_META_L2_LOCAL is set exactly
 * when the destination MAC is the ingress port's own. lpm trusts the flag
 * and never compares MACs itself.
 */
static void
rx_l2_local(struct rte_mbuf *m)
{
	static const uint8_t *const port_mac[] = { mac_p0, mac_p1, mac_p2 };
	struct pf_meta *md = pf_meta(m);

	if (md->in_port < RTE_DIM(port_mac) &&
	    memcmp(rte_pktmbuf_mtod(m, uint8_t *), port_mac[md->in_port], 6) == 0)
		md->flags |= PF_META_L2_LOCAL;
}

static uint16_t
run1(struct pf_stage *st, struct rte_mbuf *m)
{
	uint16_t e;

	rx_l2_local(m);
	pf_test_process(st, &m, 1, &e);
	return e;
}

static void
destroy(struct pf_stage *st, struct pf_topo *topo)
{
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

/* ---- checksum ----------------------------------------------------------- */

/*
 * Every TTL and every checksum value: a header whose checksum field holds c
 * (the ID field is chosen to make it valid), decremented incrementally, must
 * carry exactly what a full recompute gives. Sums are taken on the words as
 * the CPU loads them; one's complement sums do not care about byte order.
 */
static void
test_cksum_exhaustive(void **state)
{
	struct rte_ipv4_hdr h, g;
	uint32_t ttl, c, s, t;
	uint16_t inc;

	for (ttl = 0; ttl < 256; ttl++) {
		for (c = 0; c < 65536; c++) {
			memset(&h, 0, sizeof(h));
			h.version_ihl = 0x45;
			h.total_length = rte_cpu_to_be_16(84);
			h.time_to_live = (uint8_t)ttl;
			h.next_proto_id = IPPROTO_UDP;
			h.src_addr = rte_cpu_to_be_32(ip4(192, 0, 2, 1));
			h.dst_addr = rte_cpu_to_be_32(ip4(198, 51, 100, 7));
			s = rte_raw_cksum(&h, sizeof(h));
			/* ID = ~(s + c): then s + c + ID is 0xffff, a valid header. */
			t = s + c;
			t = (t & 0xffff) + (t >> 16);
			h.packet_id = (uint16_t)~t;
			h.hdr_checksum = (uint16_t)c;
			assert_int_equal(rte_raw_cksum(&h, sizeof(h)), 0xffff);
			g = h;
			lpm_ttl_dec(&h);
			assert_int_equal(h.time_to_live, (uint8_t)(ttl - 1));
			inc = h.hdr_checksum;
			/* the forwarding variant (TTL >= 1) writes the same bytes */
			if (ttl != 0) {
				lpm_ttl_dec_fwd(&g);
				if (memcmp(&g, &h, sizeof(h)) != 0)
					fail_msg("ttl %u cksum %#x: fwd variant differs", ttl, c);
			}
			h.hdr_checksum = 0;
			/* eqn. 3 even maps an input -0 (0xffff) to the canonical result */
			if (inc != rte_ipv4_cksum(&h))
				fail_msg("ttl %u cksum %#x: incremental %#x, full %#x", ttl, c, inc,
					 rte_ipv4_cksum(&h));
		}
	}
}

static void
test_cksum_adjust_known(void **state)
{
	/* RFC 1624 section 4 example: HC 0xdd2f, m 0x5555 -> 0x3285 gives 0x0000. */
	assert_int_equal(lpm_cksum_adjust(0xdd2f, 0x5555, 0x3285), 0x0000);
}

/* ---- configuration ------------------------------------------------------ */

static char *
write_tmp(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/ut_lpm_%d.routes", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void
load_errs(const char *routes_file_text, struct pf_errs *errs)
{
	char yaml[4096];
	struct pf_topo *topo = NULL;
	const char *path = write_tmp(routes_file_text);

	snprintf(yaml, sizeof(yaml),
		 TOPO_HEAD "  lpm:\n      type: lpm\n      next: tx\n" NEXTHOPS
		 "      routes_file: %s\n" TOPO_TAIL, path);
	memset(errs, 0, sizeof(*errs));
	assert_int_not_equal(pf_topo_load_string("inline.yaml", yaml, &topo, errs), 0);
	assert_null(topo);
	unlink(path);
}

static void
test_routes_file_errors(void **state)
{
	struct pf_errs errs;

	load_errs("# comment\n\n10.0.0.0/8 nh1   # trailing comment\n"
		  "10.0.0.0/33 nh1\n"
		  "10.0.0.1/8 nh1\n"
		  "10.0.0/8 nh1\n"
		  "11.0.0.0/8 nhX\n"
		  "12.0.0.0/8\n"
		  "13.0.0.0/8 nh1 extra\n", &errs);
	assert_int_equal(errs.n, 6);
	assert_int_equal(errs.e[0].line, 4);
	assert_string_equal(errs.e[0].msg, "'10.0.0.0/33' has a prefix length > 32");
	assert_int_equal(errs.e[1].line, 5);
	assert_string_equal(errs.e[1].msg, "'10.0.0.1/8' has host bits set");
	assert_string_equal(errs.e[2].msg, "'10.0.0/8' is not an IPv4 address");
	assert_int_equal(errs.e[3].line, 7);
	assert_int_equal(errs.e[3].col, 12);
	assert_string_equal(errs.e[3].msg, "unknown next hop 'nhX' (define it under nexthops:)");
	assert_string_equal(errs.e[4].msg, "expected 'PREFIX/LEN NEXTHOP', got 1 field");
	assert_int_equal(errs.e[5].line, 9);
	assert_true(strstr(errs.e[0].file, "/tmp/ut_lpm_") != NULL);

	load_errs("10.0.0.0/8 nh1\n10.1.0.0/16 nh2\n10.0.0.0/8 nh2\n", &errs);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.e[0].line, 3);
	assert_true(strstr(errs.e[0].msg, "duplicate route 10.0.0.0/8 (first defined at /tmp/") !=
		    NULL);
}

static void
test_inline_errors(void **state)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	static const char *yaml =
		TOPO_HEAD
		"  lpm:\n"
		"      type: lpm\n"
		"      next: tx\n"
		"      lookup: fast\n"
		"      nexthops:\n"
		"        nh1: { port: p9, mac: \"02:00:00:00:01:01\" }\n"
		"        nh2: { port: p1, mac: \"01:00:5e:00:00:01\" }\n"
		TOPO_TAIL;

	assert_int_not_equal(pf_topo_load_string("inline.yaml", yaml, &topo, &errs), 0);
	assert_int_equal(errs.n, 3);
	assert_true(strstr(errs.e[0].msg, "lookup") != NULL);
	assert_string_equal(errs.e[1].msg,
			    "stages.lpm.nexthops.nh1.port: expected a port name from ports:");
	assert_string_equal(errs.e[2].msg,
			    "stages.lpm.nexthops.nh2.mac: 01:00:5e:00:00:01 is a group address");
}

/* ---- forwarding --------------------------------------------------------- */

static void
expect_routed(struct pf_stage *st, uint32_t dst, uint16_t port, const uint8_t *dmac,
	      const uint8_t *smac)
{
	struct rte_mbuf *m = mk_ip(mac_p0, ip4(192, 168, 0, 9), dst, 64, IPPROTO_UDP, 0);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	assert_int_equal(run1(st, m), 1);
	assert_int_equal(pf_meta(m)->out_port, port);
	assert_memory_equal(eth->dst_addr.addr_bytes, dmac, 6);
	assert_memory_equal(eth->src_addr.addr_bytes, smac, 6);
	assert_int_equal(iph(m)->time_to_live, 63);
	assert_int_equal(rte_raw_cksum(iph(m), 20), 0xffff);
	rte_pktmbuf_free(m);
}

static void
test_longest_prefix(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_routes, "lpm", &topo);

	expect_routed(st, ip4(10, 9, 9, 9), 1, mac_nh1, mac_p1);    /* /8 */
	expect_routed(st, ip4(10, 2, 9, 9), 2, mac_nh2, mac_p2);    /* /16 */
	expect_routed(st, ip4(10, 2, 3, 9), 0, mac_nh3, mac_p0);    /* /24 */
	expect_routed(st, ip4(10, 2, 3, 4), 1, mac_nh1, mac_p1);    /* /32 */
	expect_routed(st, ip4(8, 8, 8, 8), 2, mac_nh2, mac_p2);     /* default */
	assert_int_equal(pf_test_ctr(st, "ip4_no_route"), 0);
	destroy(st, topo);
}

static void
expect_drop(struct pf_stage *st, struct rte_mbuf *m, const char *ctr)
{
	uint64_t before = pf_test_ctr(st, ctr);

	assert_int_equal(run1(st, m), 0);
	assert_int_equal(pf_test_ctr(st, ctr), before + 1);
	rte_pktmbuf_free(m);
}

static void
test_drops(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_noroute, "lpm", &topo);
	const uint8_t other[6] = { 2, 0, 0, 0, 0, 0x77 }, bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint32_t src = ip4(192, 168, 0, 9), dst = ip4(10, 1, 2, 3);
	struct rte_mbuf *m;
	uint64_t before;
	uint16_t e;

	expect_drop(st, mk_ip(mac_p0, src, ip4(11, 0, 0, 1), 64, 17, 0), "ip4_no_route");
	expect_drop(st, mk_ip(mac_p0, src, dst, 1, 17, 0), "ip4_ttl_expired");
	expect_drop(st, mk_ip(mac_p0, src, dst, 0, 17, 0), "ip4_ttl_expired");
	expect_drop(st, mk_ip(other, src, dst, 64, 17, 0), "l3_mac_mismatch");
	/* the MAC of another router port is not ours on this port */
	expect_drop(st, mk_ip(mac_p1, src, dst, 64, 17, 0), "l3_mac_mismatch");
	expect_drop(st, mk_ip(bc, src, dst, 64, 17, 0), "l3_l2bcast_ip_unicast");
	expect_drop(st, mk_ip(mac_p0, src, ip4(255, 255, 255, 255), 64, 17, 0), "ip4_bcast");
	expect_drop(st, mk_ip(bc, src, ip4(255, 255, 255, 255), 64, 17, 0), "ip4_bcast");
	expect_drop(st, mk_ip(mac_p0, src, ip4(224, 0, 0, 5), 64, 17, 0), "ip4_mcast_unsupported");
	expect_drop(st, mk_ip(mac_p0, src, ip4(239, 1, 1, 1), 64, 17, 0), "ip4_mcast_unsupported");
	expect_drop(st, mk_ip(mac_p0, src, ip4(0, 1, 2, 3), 64, 17, 0), "ip4_martian_dst");
	expect_drop(st, mk_ip(mac_p0, src, ip4(127, 0, 0, 1), 64, 17, 0), "ip4_martian_dst");
	expect_drop(st, mk_ip(mac_p0, src, ip4(240, 0, 0, 1), 64, 17, 0), "ip4_martian_dst");
	expect_drop(st, mk_ip(mac_p0, ip4(0, 0, 0, 0), dst, 64, 17, 0), "ip4_martian_src");
	expect_drop(st, mk_ip(mac_p0, ip4(127, 0, 0, 1), dst, 64, 17, 0), "ip4_martian_src");
	expect_drop(st, mk_ip(mac_p0, ip4(224, 0, 0, 1), dst, 64, 17, 0), "ip4_martian_src");
	expect_drop(st, mk_ip(mac_p0, ip4(255, 255, 255, 255), dst, 64, 17, 0), "ip4_martian_src");
	/* directed broadcast of p1's 10.1.0.0/16 (more specific than 10/8) */
	expect_drop(st, mk_ip(mac_p0, src, ip4(10, 1, 255, 255), 64, 17, 0), "ip4_directed_bcast");
	/* local address, not an echo request */
	expect_drop(st, mk_ip(mac_p0, src, ip4(10, 1, 0, 254), 64, 17, 0), "ip4_local_unsupported");
	assert_int_equal(pf_test_ctr(st, "local"), 1);
	/* tagged VID 10 */
	m = mk_ip(mac_p0, src, dst, 64, 17, 0);
	pf_meta(m)->flags |= PF_META_VLAN;
	expect_drop(st, m, "vlan_unknown");
	/* a class lpm does not handle */
	m = mk_ip(mac_p0, src, dst, 64, 17, 0);
	pf_meta(m)->cls = PF_CLASS_IPV6;
	expect_drop(st, m, "l3_proto_unsupported");
	/* TTL 2 leaves with TTL 1 */
	m = mk_ip(mac_p0, src, dst, 2, 17, 0);
	assert_int_equal(run1(st, m), 1);
	assert_int_equal(iph(m)->time_to_live, 1);
	assert_int_equal(rte_raw_cksum(iph(m), 20), 0xffff);
	rte_pktmbuf_free(m);
	/* The MAC decision is rx's flag alone: no PF_META_L2_LOCAL, no routing... */
	m = mk_ip(mac_p0, src, dst, 64, 17, 0);
	before = pf_test_ctr(st, "l3_mac_mismatch");
	pf_test_process(st, &m, 1, &e);
	assert_int_equal(e, 0);
	assert_int_equal(pf_test_ctr(st, "l3_mac_mismatch"), before + 1);
	rte_pktmbuf_free(m);
	/* ...and with it the frame is routed whatever its bytes say. */
	m = mk_ip(other, src, dst, 64, 17, 0);
	pf_meta(m)->flags |= PF_META_L2_LOCAL;
	pf_test_process(st, &m, 1, &e);
	assert_int_equal(e, 1);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), mac_nh1, 6);
	rte_pktmbuf_free(m);
	destroy(st, topo);
}

/* Ethernet + IPv4 with @olen option bytes, @l4 bytes of payload, fragment field @fo. */
static struct rte_mbuf *
mk_opt(const uint8_t *opts, uint8_t olen, uint16_t fo, uint8_t proto, uint16_t l4, uint32_t dst)
{
	uint8_t buf[256] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint16_t hl = (uint16_t)(20 + olen), len = (uint16_t)(14 + hl + l4);
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(eth->dst_addr.addr_bytes, mac_p0, 6);
	memcpy(eth->src_addr.addr_bytes, mac_host, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = (uint8_t)(0x40 | hl / 4);
	ip->total_length = rte_cpu_to_be_16((uint16_t)(hl + l4));
	ip->fragment_offset = rte_cpu_to_be_16(fo);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(ip4(192, 168, 0, 9));
	ip->dst_addr = rte_cpu_to_be_32(dst);
	if (olen != 0)
		memcpy(ip + 1, opts, olen);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	m = pf_test_mbuf(buf, len < 60 ? 60 : len, 0);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV4;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = (uint8_t)hl;
	if (olen)
		md->flags |= PF_META_IP_OPTIONS;
	if (fo & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		md->flags |= PF_META_IP_FRAG;
	if (fo & RTE_IPV4_HDR_OFFSET_MASK)
		md->flags |= PF_META_IP_NONFIRST;
	return m;
}

static void
expect_fwd(struct pf_stage *st, struct rte_mbuf *m)
{
	assert_int_equal(run1(st, m), 1);
	assert_int_equal(pf_meta(m)->out_port, 1);
	rte_pktmbuf_free(m);
}

static void
test_options_fragments(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_noroute, "lpm", &topo);
	uint32_t dst = ip4(10, 1, 2, 3);
	const uint8_t nop_eol[4] = { 1, 1, 1, 0 }, ra[4] = { 148, 4, 0, 0 };
	const uint8_t rr[8] = { 7, 7, 4, 0, 0, 0, 0, 1 }, eol_junk[4] = { 0, 0xff, 0, 0 };
	const uint8_t lsrr[8] = { 131, 7, 4, 10, 1, 2, 3, 0 }, ssrr[8] = { 1, 137, 6, 4, 1, 2, 3, 4 };
	const uint8_t len0[4] = { 68, 0, 0, 0 }, len1[4] = { 1, 7, 1, 0 };
	const uint8_t past[4] = { 1, 7, 4, 0 }, lenbyte[4] = { 1, 1, 1, 148 };
	const uint16_t MF = RTE_IPV4_HDR_MF_FLAG;

	/* well-formed options are forwarded untouched */
	expect_fwd(st, mk_opt(nop_eol, 4, 0, 17, 8, dst));
	expect_fwd(st, mk_opt(ra, 4, 0, 17, 8, dst));
	expect_fwd(st, mk_opt(rr, 8, 0, 17, 8, dst));
	expect_fwd(st, mk_opt(eol_junk, 4, 0, 17, 8, dst)); /* nothing is read after EOL */
	expect_drop(st, mk_opt(lsrr, 8, 0, 17, 8, dst), "ip4_srcroute");
	expect_drop(st, mk_opt(ssrr, 8, 0, 17, 8, dst), "ip4_srcroute");
	expect_drop(st, mk_opt(len0, 4, 0, 17, 8, dst), "ip4_bad_option");
	expect_drop(st, mk_opt(len1, 4, 0, 17, 8, dst), "ip4_bad_option");
	expect_drop(st, mk_opt(past, 4, 0, 17, 8, dst), "ip4_bad_option");
	expect_drop(st, mk_opt(lenbyte, 4, 0, 17, 8, dst), "ip4_bad_option"); /* no length byte */
	/* fragments */
	expect_fwd(st, mk_opt(NULL, 0, MF, 17, 8, dst));
	expect_fwd(st, mk_opt(NULL, 0, MF, 6, 20, dst));
	expect_fwd(st, mk_opt(NULL, 0, 2, 6, 4, dst));      /* last, offset 16 B */
	expect_fwd(st, mk_opt(NULL, 0, MF, 1, 4, dst));     /* ICMP: not checked */
	expect_drop(st, mk_opt(NULL, 0, 1, 6, 12, dst), "ip4_frag_offset_one");
	expect_drop(st, mk_opt(NULL, 0, MF | 1, 17, 12, dst), "ip4_frag_offset_one");
	expect_drop(st, mk_opt(NULL, 0, MF, 6, 8, dst), "ip4_tiny_fragment");
	expect_drop(st, mk_opt(NULL, 0, MF, 6, 19, dst), "ip4_tiny_fragment");
	expect_drop(st, mk_opt(NULL, 0, MF, 17, 7, dst), "ip4_tiny_fragment");
	expect_drop(st, mk_opt(nop_eol, 4, MF, 6, 8, dst), "ip4_tiny_fragment");
	/* DF alone is not a fragment */
	expect_fwd(st, mk_opt(NULL, 0, RTE_IPV4_HDR_DF_FLAG, 6, 4, dst));
	assert_int_equal(pf_test_ctr(st, "ip4_srcroute"), 2);
	assert_int_equal(pf_test_ctr(st, "ip4_bad_option"), 4);
	assert_int_equal(pf_test_ctr(st, "ip4_frag_offset_one"), 2);
	assert_int_equal(pf_test_ctr(st, "ip4_tiny_fragment"), 4);
	assert_int_equal(pf_test_ctr(st, "ip4_ttl_expired"), 0);
	destroy(st, topo);
}

static const char *topo_mtu =
	"ports:\n"
	"  p0: { device: net_null0, mac: \"" MAC_P0 "\", max_frame: 9018 }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", max_frame: 100 }\n"
	"  p2: { device: net_null2, mac: \"02:00:00:00:00:12\" }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1, p2], next: { ipv4: lpm, arp: lpm } }\n"
	"  tx: { type: tx, ports: [p0, p1, p2] }\n"
	"  lpm:\n"
	"      type: lpm\n"
	"      next: tx\n"
	NEXTHOPS
	"      routes:\n"
	"        - { prefix: 10.0.0.0/8, via: nh1 }\n"
	TOPO_TAIL;

static void
test_mtu(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_mtu, "lpm", &topo);
	uint32_t dst = ip4(10, 1, 2, 3);
	const uint16_t DF = RTE_IPV4_HDR_DF_FLAG;

	/* p1's max_frame is 100: 14 + 20 + 66 fits, one more byte does not */
	expect_fwd(st, mk_opt(NULL, 0, DF, 17, 66, dst));
	expect_fwd(st, mk_opt(NULL, 0, 0, 17, 66, dst));
	expect_drop(st, mk_opt(NULL, 0, DF, 17, 67, dst), "ip4_mtu_exceeded_df");
	expect_drop(st, mk_opt(NULL, 0, 0, 17, 67, dst), "ip4_frag_needed_unsupported");
	assert_int_equal(pf_test_ctr(st, "ip4_mtu_exceeded_df"), 1);
	destroy(st, topo);
}

/* The same ports with the fragment edge wired to an ip4frag stage. */
static const char *topo_mtu_frag =
	"ports:\n"
	"  p0: { device: net_null0, mac: \"" MAC_P0 "\", max_frame: 9018 }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", max_frame: 100 }\n"
	"  p2: { device: net_null2, mac: \"02:00:00:00:00:12\" }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1, p2], next: { ipv4: lpm, arp: lpm } }\n"
	"  tx: { type: tx, ports: [p0, p1, p2] }\n"
	"  frag: { type: ip4frag, next: tx }\n"
	"  lpm:\n"
	"      type: lpm\n"
	"      next: { out: tx, fragment: frag }\n"
	NEXTHOPS
	"      routes:\n"
	"        - { prefix: 10.0.0.0/8, via: nh1 }\n"
	"lcores:\n  1: [rx, lpm, frag, tx]\n";

static void
test_mtu_fragment_edge(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_mtu_frag, "lpm", &topo);
	uint32_t dst = ip4(10, 1, 2, 3);
	const uint16_t DF = RTE_IPV4_HDR_DF_FLAG;
	static const uint8_t nh1_mac[6] = { 2, 0, 0, 0, 1, 1 };
	struct rte_mbuf *m[4];
	uint16_t edge[4], i;
	uint8_t ttl;

	/* DF clear and too long: routed like out, but on edge fragment (3). */
	m[0] = mk_opt(NULL, 0, 0, 17, 67, dst);
	ttl = iph(m[0])->time_to_live;
	assert_int_equal(run1(st, m[0]), 3);
	assert_int_equal(pf_meta(m[0])->out_port, 1);
	assert_int_equal(iph(m[0])->time_to_live, ttl - 1);
	assert_int_equal(rte_raw_cksum(iph(m[0]), sizeof(struct rte_ipv4_hdr)), 0xffff);
	assert_memory_equal(rte_pktmbuf_mtod(m[0], uint8_t *), nh1_mac, 6);
	rte_pktmbuf_free(m[0]);
	/* DF set with no icmp edge: still the drop; a fitting one: out. */
	expect_drop(st, mk_opt(NULL, 0, DF, 17, 67, dst), "ip4_mtu_exceeded_df");
	expect_fwd(st, mk_opt(NULL, 0, 0, 17, 66, dst));
	/* A mixed burst: never reported as all-out. */
	m[0] = mk_opt(NULL, 0, 0, 17, 66, dst);
	m[1] = mk_opt(NULL, 0, 0, 17, 67, dst);
	m[2] = mk_opt(NULL, 0, 0, 17, 66, dst);
	m[3] = mk_opt(NULL, 0, 0, 17, 66, dst);
	for (i = 0; i < 4; i++)
		rx_l2_local(m[i]);
	pf_test_process(st, m, 4, edge);
	assert_int_equal(edge[0], 1);
	assert_int_equal(edge[1], 3);
	assert_int_equal(edge[2], 1);
	assert_int_equal(edge[3], 1);
	pf_test_free(m, 4);
	assert_int_equal(pf_test_ctr(st, "ip4_to_fragment"), 2);
	assert_int_equal(pf_test_ctr(st, "ip4_frag_needed_unsupported"), 0);
	destroy(st, topo);
}

static void
test_priority_tag_stripped(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_noroute, "lpm", &topo);
	uint8_t buf[64] = { 0 };
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + 18);

	memcpy(buf, mac_p0, 6);
	memcpy(buf + 6, mac_host, 6);
	buf[12] = 0x81;          /* 802.1Q, VID 0, priority 5 */
	buf[14] = 0xa0;
	buf[16] = 0x08;
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(20);
	ip->time_to_live = 9;
	ip->src_addr = rte_cpu_to_be_32(ip4(192, 168, 0, 9));
	ip->dst_addr = rte_cpu_to_be_32(ip4(10, 7, 7, 7));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	m = pf_test_mbuf(buf, 38, 0);
	pf_meta(m)->cls = PF_CLASS_IPV4;
	pf_meta(m)->l2_len = 18;
	pf_meta(m)->l3_len = 20;
	assert_int_equal(run1(st, m), 1);
	assert_int_equal(rte_pktmbuf_data_len(m), 34);
	assert_int_equal(rte_pktmbuf_mtod_offset(m, uint8_t *, 12)[0], 0x08);
	assert_int_equal(iph(m)->time_to_live, 8);
	assert_int_equal(rte_raw_cksum(iph(m), 20), 0xffff);
	rte_pktmbuf_free(m);
	destroy(st, topo);
}

/* ---- ARP and ICMP ------------------------------------------------------- */

static struct rte_mbuf *
mk_arp(const uint8_t *dmac, uint16_t op, uint32_t spa, uint32_t tpa, uint16_t htype)
{
	uint8_t buf[60] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	struct rte_mbuf *m;

	memcpy(eth->dst_addr.addr_bytes, dmac, 6);
	memcpy(eth->src_addr.addr_bytes, mac_host, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(htype);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = 6;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	memcpy(arp->arp_data.arp_sha.addr_bytes, mac_host, 6);
	arp->arp_data.arp_sip = rte_cpu_to_be_32(spa);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tpa);
	m = pf_test_mbuf(buf, 60, 0);
	pf_meta(m)->cls = PF_CLASS_ARP;
	pf_meta(m)->l2_len = RTE_ETHER_HDR_LEN;
	if (dmac[0] & 1)
		pf_meta(m)->flags |= PF_META_L2_MCAST | PF_META_L2_BCAST;
	return m;
}

static void
test_arp(void **state)
{
	const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_noroute, "lpm", &topo);
	uint32_t me = ip4(192, 168, 0, 1), host = ip4(192, 168, 0, 9);
	struct rte_mbuf *m = mk_arp(bc, RTE_ARP_OP_REQUEST, host, me, RTE_ARP_HRD_ETHER);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);

	assert_int_equal(run1(st, m), 1);
	assert_int_equal(pf_meta(m)->out_port, 0);
	assert_int_equal(pf_test_ctr(st, "arp_reply"), 1);
	assert_int_equal(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REPLY);
	assert_memory_equal(eth->dst_addr.addr_bytes, mac_host, 6);
	assert_memory_equal(eth->src_addr.addr_bytes, mac_p0, 6);
	assert_memory_equal(arp->arp_data.arp_sha.addr_bytes, mac_p0, 6);
	assert_memory_equal(arp->arp_data.arp_tha.addr_bytes, mac_host, 6);
	assert_int_equal(rte_be_to_cpu_32(arp->arp_data.arp_sip), me);
	assert_int_equal(rte_be_to_cpu_32(arp->arp_data.arp_tip), host);
	rte_pktmbuf_free(m);
	/* p1's address asked on p0: not answered there */
	expect_drop(st, mk_arp(bc, RTE_ARP_OP_REQUEST, host, ip4(10, 1, 0, 254), 1),
		    "arp_not_for_us");
	expect_drop(st, mk_arp(bc, RTE_ARP_OP_REQUEST, host, ip4(192, 168, 0, 2), 1),
		    "arp_not_for_us");
	expect_drop(st, mk_arp(mac_p0, RTE_ARP_OP_REPLY, host, me, 1), "arp_ignored");
	expect_drop(st, mk_arp(bc, RTE_ARP_OP_REQUEST, host, me, 6), "arp_unsupported");
	expect_drop(st, mk_arp(mac_p1, RTE_ARP_OP_REQUEST, host, me, 1), "l3_mac_mismatch");
	/* unicast request to our MAC is answered too */
	m = mk_arp(mac_p0, RTE_ARP_OP_REQUEST, host, me, 1);
	assert_int_equal(run1(st, m), 1);
	rte_pktmbuf_free(m);
	destroy(st, topo);
}

static struct rte_mbuf *
mk_echo(uint32_t src, uint32_t dst, uint8_t type, bool bad_cksum)
{
	uint8_t buf[74] = { 0 };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	struct rte_mbuf *m;
	int i;

	memcpy(eth->dst_addr.addr_bytes, mac_p0, 6);
	memcpy(eth->src_addr.addr_bytes, mac_host, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(60);
	ip->time_to_live = 1;   /* TTL does not matter for the router itself */
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	icmp->icmp_type = type;
	icmp->icmp_ident = rte_cpu_to_be_16(77);
	icmp->icmp_seq_nb = rte_cpu_to_be_16(3);
	for (i = 0; i < 32; i++)
		((uint8_t *)(icmp + 1))[i] = (uint8_t)(i * 7);
	icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, 40);
	if (bad_cksum)
		icmp->icmp_cksum ^= 1;
	m = pf_test_mbuf(buf, 74, 0);
	pf_meta(m)->cls = PF_CLASS_IPV4;
	pf_meta(m)->l2_len = RTE_ETHER_HDR_LEN;
	pf_meta(m)->l3_len = 20;
	return m;
}

static void
test_icmp_echo(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(topo_noroute, "lpm", &topo);
	uint32_t host = ip4(192, 168, 0, 9), me2 = ip4(172, 16, 0, 1);
	struct rte_mbuf *m = mk_echo(host, me2, RTE_IP_ICMP_ECHO_REQUEST, false);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(iph(m) + 1);

	/* p2's address pinged through p0: answered from that address, out p0 */
	assert_int_equal(run1(st, m), 1);
	assert_int_equal(pf_meta(m)->out_port, 0);
	assert_int_equal(icmp->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(rte_raw_cksum(icmp, 40), 0xffff);
	assert_int_equal(rte_raw_cksum(iph(m), 20), 0xffff);
	assert_int_equal(rte_be_to_cpu_32(iph(m)->src_addr), me2);
	assert_int_equal(rte_be_to_cpu_32(iph(m)->dst_addr), host);
	assert_int_equal(iph(m)->time_to_live, 64);
	assert_memory_equal(eth->dst_addr.addr_bytes, mac_host, 6);
	assert_memory_equal(eth->src_addr.addr_bytes, mac_p0, 6);
	rte_pktmbuf_free(m);
	expect_drop(st, mk_echo(host, me2, RTE_IP_ICMP_ECHO_REQUEST, true), "icmp_bad_checksum");
	expect_drop(st, mk_echo(host, me2, RTE_IP_ICMP_ECHO_REPLY, false), "ip4_local_unsupported");
	assert_int_equal(pf_test_ctr(st, "local"), 3);
	assert_int_equal(pf_test_ctr(st, "icmp_echo_reply"), 1);
	destroy(st, topo);
}

/* ---- lookups against a model -------------------------------------------- */

#define N_ROUTES 10000
#define N_ADDRS 4096
#define N_NH 16

struct mroute {
	uint32_t prefix;
	uint8_t len;
	uint8_t nh;
};

static int
mroute_cmp(const void *a, const void *b)
{
	const struct mroute *x = a, *y = b;

	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return (int)x->len - (int)y->len;
}

static uint32_t
rnd32(void)
{
	return (uint32_t)random() << 16 ^ (uint32_t)random();
}

static uint32_t
rnd_unicast(void)
{
	uint32_t a;

	do
		a = rnd32();
	while ((a >> 24) == 0 || (a >> 24) == 127 || (a >> 24) >= 224);
	return a;
}

/* The ports' addresses and subnet broadcasts: not routes, so not in the model. */
static bool
is_router_addr(uint32_t a)
{
	return a == ip4(192, 168, 0, 1) || a == ip4(192, 168, 0, 255) || a == ip4(10, 1, 0, 254) ||
	       a == ip4(10, 1, 255, 255) || a == ip4(172, 16, 0, 1) || a == ip4(172, 16, 0, 3);
}

/* Longest match by brute force; -1 if none. */
static int
model_lookup(const struct mroute *r, uint32_t n, uint32_t a)
{
	int best = -1, blen = -1;
	uint32_t i, mask;

	for (i = 0; i < n; i++) {
		mask = r[i].len == 0 ? 0 : ~0u << (32 - r[i].len);
		if ((a & mask) == r[i].prefix && r[i].len > blen) {
			best = r[i].nh;
			blen = r[i].len;
		}
	}
	return best;
}

static void
test_modes_agree(void **state)
{
	static const char *modes[] = { "x4", "bulk", "scalar" };
	static const uint16_t sizes[] = { 0, 1, 3, 4, 5, 8, 31, 32, 33, 64 };
	static const uint8_t lens[] = { 8, 12, 16, 18, 20, 22, 23, 24, 24, 24, 24, 25, 27, 28, 30, 32 };
	struct mroute *r = calloc(N_ROUTES, sizeof(*r));
	uint32_t *addr = calloc(N_ADDRS, sizeof(*addr)), i, n = 0, k, mask, fwd;
	int16_t *want = calloc(N_ADDRS, sizeof(*want));
	uint16_t (*got)[N_ADDRS] = calloc(3, sizeof(*got));
	char path[64], yaml[4096], nhs[2048] = "";
	FILE *f;
	int mi;

	srandom(1812);
	for (i = 0; i < N_ROUTES; i++) {
		r[i].len = lens[random() % RTE_DIM(lens)];
		mask = ~0u << (32 - r[i].len);
		r[i].prefix = rnd_unicast() & mask;
		r[i].nh = (uint8_t)(random() % N_NH);
	}
	qsort(r, N_ROUTES, sizeof(*r), mroute_cmp);
	for (i = 0; i < N_ROUTES; i++)
		if (n == 0 || r[i].prefix != r[n - 1].prefix || r[i].len != r[n - 1].len)
			r[n++] = r[i];
	snprintf(path, sizeof(path), "/tmp/ut_lpm_rand_%d.routes", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < n; i++)
		fprintf(f, "%u.%u.%u.%u/%u nh%u\n", r[i].prefix >> 24, (r[i].prefix >> 16) & 0xff,
			(r[i].prefix >> 8) & 0xff, r[i].prefix & 0xff, r[i].len, r[i].nh);
	fclose(f);
	/* half the addresses inside a route (often a long one), half anywhere */
	for (i = 0; i < N_ADDRS; i++) {
		k = (uint32_t)random() % n;
		mask = ~0u << (32 - r[k].len);
		do
			addr[i] = (i & 1) ? rnd_unicast() : (r[k].prefix | (rnd32() & ~mask));
		while (is_router_addr(addr[i]));
		want[i] = (int16_t)model_lookup(r, n, addr[i]);
	}
	for (i = 0; i < N_NH; i++)
		snprintf(nhs + strlen(nhs), sizeof(nhs) - strlen(nhs),
			 "        nh%u: { port: p%u, mac: \"02:00:00:00:02:%02x\" }\n", i, i % 3, i);
	for (mi = 0; mi < 3; mi++) {
		struct pf_topo *topo;
		struct pf_stage *st;
		uint32_t done = 0, si = 0;
		uint64_t hints0;

		snprintf(yaml, sizeof(yaml),
			 TOPO_HEAD "  lpm:\n      type: lpm\n      next: tx\n      lookup: %s\n"
			 "      routes_file: %s\n      nexthops:\n%s" TOPO_TAIL,
			 modes[mi], path, nhs);
		st = pf_test_stage(yaml, "lpm", &topo);
		hints0 = pf_test_hints;
		/* every burst size, in turn, until all addresses went through */
		while (done < N_ADDRS) {
			struct rte_mbuf *pk[64];
			uint16_t e[64], b = RTE_MIN(sizes[si++ % RTE_DIM(sizes)],
						    (uint16_t)(N_ADDRS - done)), j;

			for (j = 0; j < b; j++) {
				pk[j] = mk_ip(mac_p0, ip4(192, 168, 0, 9), addr[done + j], 64, 17, 0);
				rx_l2_local(pk[j]);
			}
			pf_test_process(st, pk, b, e);
			for (j = 0; j < b; j++) {
				got[mi][done + j] = e[j] == 0 ? 0xffff :
						    (uint16_t)pf_meta(pk[j])->nexthop;
			}
			pf_test_free(pk, b);
			done += b;
		}
		/* every packet was either routed or counted */
		for (k = 0, fwd = 0; k < N_ADDRS; k++)
			fwd += got[mi][k] != 0xffff;
		assert_int_equal(pf_test_ctr(st, "ip4_no_route") + fwd, N_ADDRS);
		/* x4 gives the burst-port hint (checked by pf_test_process), at least on size-1 bursts. */
		if (mi == 0)
			assert_true(pf_test_hints > hints0);
		destroy(st, topo);
	}
	for (i = 0; i < N_ADDRS; i++) {
		uint16_t w = want[i] < 0 ? 0xffff : (uint16_t)want[i];

		if (got[0][i] != w || got[1][i] != w || got[2][i] != w)
			fail_msg("addr %#x: model %d, x4 %u, bulk %u, scalar %u", addr[i], want[i],
				 got[0][i], got[1][i], got[2][i]);
	}
	unlink(path);
	free(r);
	free(addr);
	free(want);
	free(got);
}

/* ---- x4 groups ---------------------------------------------------------- */

static const char *topo_x4_fmt =
	"ports:\n"
	"  p0: { device: net_null0, mac: \"" MAC_P0 "\", ipv4: 192.168.0.1/24 }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", max_frame: 100 }\n"
	"  p2: { device: net_null2, mac: \"02:00:00:00:00:12\" }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1, p2], next: { ipv4: lpm, arp: lpm } }\n"
	"  tx: { type: tx, ports: [p0, p1, p2] }\n"
	"  lpm:\n"
	"      type: lpm\n"
	"      next: tx\n"
	"      lookup: %s\n"
	NEXTHOPS
	"      routes:\n"
	"        - { prefix: 10.0.0.0/8, via: nh1 }\n"
	"        - { prefix: 20.0.0.0/8, via: nh2 }\n"
	"        - { prefix: 30.0.0.0/8, via: nh3 }\n"
	TOPO_TAIL;

/* One frame of kind @p k (x4_kinds[k]) from port 0. */
static struct rte_mbuf *
mk_kind(unsigned int k)
{
	const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const uint8_t nop_eol[4] = { 1, 1, 1, 0 };
	uint32_t host = ip4(192, 168, 0, 9), d = ip4(10, 1, 2, 3);
	uint8_t buf[64] = { 0 };
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + 18);
	struct rte_mbuf *m;

	switch (k) {
	case 0: return mk_ip(mac_p0, host, d, 64, 17, 0);
	case 1: return mk_ip(mac_p0, host, ip4(20, 1, 1, 1), 64, 17, 0);
	case 2: return mk_ip(mac_p0, host, ip4(30, 1, 1, 1), 64, 17, 0);
	case 3: return mk_ip(mac_p0, host, d, 1, 17, 0);
	case 4: return mk_ip(mac_p0, host, d, 0, 17, 0);
	case 5: return mk_ip(mac_p0, host, d, 2, 17, 0);
	case 6: return mk_ip(mac_p0, ip4(127, 0, 0, 1), d, 64, 17, 0);
	case 7: return mk_ip(mac_p0, ip4(0, 1, 2, 3), d, 64, 17, 0);
	case 8: return mk_ip(mac_p0, ip4(224, 0, 0, 5), d, 64, 17, 0);
	case 9: return mk_ip(mac_p0, ip4(255, 1, 1, 1), d, 64, 17, 0);
	case 10: return mk_ip(mac_p0, host, ip4(127, 0, 0, 1), 64, 17, 0);
	case 11: return mk_ip(mac_p0, host, ip4(255, 255, 255, 255), 64, 17, 0);
	case 12: return mk_ip(mac_p0, host, ip4(224, 0, 0, 9), 64, 17, 0);
	case 13: return mk_ip(mac_p0, host, ip4(0, 0, 0, 1), 64, 17, 0);
	case 14: return mk_ip(mac_p0, host, ip4(240, 1, 1, 1), 64, 17, 0);
	case 15: return mk_ip(mac_p0, host, ip4(40, 1, 1, 1), 64, 17, 0);
	case 16: return mk_ip(bc, host, d, 64, 17, 0);
	case 17: return mk_ip(mac_p1, host, d, 64, 17, 0);
	case 18: return mk_arp(bc, RTE_ARP_OP_REQUEST, host, ip4(192, 168, 0, 1), 1);
	case 19:
		/* 802.1Q priority tag (VID 0) */
		memcpy(buf, mac_p0, 6);
		memcpy(buf + 6, mac_host, 6);
		buf[12] = 0x81;
		buf[14] = 0xa0;
		buf[16] = 0x08;
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16(20);
		ip->time_to_live = 9;
		ip->src_addr = rte_cpu_to_be_32(host);
		ip->dst_addr = rte_cpu_to_be_32(ip4(20, 7, 7, 7));
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		m = pf_test_mbuf(buf, 38, 0);
		pf_meta(m)->cls = PF_CLASS_IPV4;
		pf_meta(m)->l2_len = 18;
		pf_meta(m)->l3_len = 20;
		return m;
	case 20: return mk_opt(nop_eol, 4, 0, 17, 8, d);
	case 21: return mk_opt(NULL, 0, RTE_IPV4_HDR_MF_FLAG, 17, 8, d);
	case 22: return mk_opt(NULL, 0, RTE_IPV4_HDR_DF_FLAG, 17, 67, d);
	case 23: return mk_opt(NULL, 0, 0, 17, 67, d);
	case 24: return mk_opt(NULL, 0, RTE_IPV4_HDR_DF_FLAG, 17, 66, d);
	case 25: return mk_ip(mac_p0, host, ip4(192, 168, 0, 1), 64, 17, 0);
	case 26: return mk_ip(mac_p0, host, ip4(192, 168, 0, 255), 64, 17, 0);
	case 27: return mk_ip(mac_p0, ip4(223, 255, 1, 1), d, 64, 17, 0);
	case 28: return mk_ip(mac_p0, ip4(1, 0, 0, 1), ip4(126, 255, 0, 1), 64, 17, 0);
	default: return mk_ip(mac_p0, ip4(128, 0, 0, 1), ip4(223, 0, 0, 1), 64, 17, 0);
	}
}

/* Each kind's edge (1: out) and drop counter, as RFC 1812 and the docs say. */
static const struct {
	uint16_t edge;
	const char *ctr;
} x4_kinds[] = {
	{ 1, NULL }, { 1, NULL }, { 1, NULL }, { 0, "ip4_ttl_expired" }, { 0, "ip4_ttl_expired" },
	{ 1, NULL }, { 0, "ip4_martian_src" }, { 0, "ip4_martian_src" }, { 0, "ip4_martian_src" },
	{ 0, "ip4_martian_src" }, { 0, "ip4_martian_dst" }, { 0, "ip4_bcast" },
	{ 0, "ip4_mcast_unsupported" }, { 0, "ip4_martian_dst" }, { 0, "ip4_martian_dst" },
	{ 0, "ip4_no_route" }, { 0, "l3_l2bcast_ip_unicast" }, { 0, "l3_mac_mismatch" },
	{ 1, NULL }, { 1, NULL }, { 1, NULL }, { 1, NULL }, { 0, "ip4_mtu_exceeded_df" },
	{ 0, "ip4_frag_needed_unsupported" }, { 1, NULL }, { 0, "ip4_local_unsupported" },
	{ 0, "ip4_directed_bcast" }, { 1, NULL }, { 0, "ip4_no_route" }, { 0, "ip4_no_route" },
};

/*
 * The x4 loop tests groups of four as a whole: every kind of packet the
 * group test must reject (TTL 1, a martian, a tag, ARP, ...) at every
 * place in a group and in the 0-3 left over, bursts of 1 to 40. Each
 * packet takes its kind's edge and counter, and x4 leaves the same bytes,
 * metadata and counters as the scalar reference.
 */
static void
test_x4_groups(void **state)
{
	const unsigned int nk = RTE_DIM(x4_kinds);
	struct pf_stage *st[2];
	struct pf_topo *topo[2];
	uint64_t want[64] = { 0 };
	char yaml[4096];
	uint32_t round, total = 0;
	uint16_t c, s;

	for (s = 0; s < 2; s++) {
		snprintf(yaml, sizeof(yaml), topo_x4_fmt, s == 0 ? "x4" : "scalar");
		st[s] = pf_test_stage(yaml, "lpm", &topo[s]);
	}
	assert_true(st[0]->ops->n_ctrs <= RTE_DIM(want));
	srandom(1624);
	for (round = 0; round < 400; round++) {
		struct rte_mbuf *pk[2][40];
		uint16_t e[2][40], b = (uint16_t)(1 + round % 40), j;
		unsigned int kind[40];

		for (j = 0; j < b; j++) {
			/* mostly forwarded packets, so that groups hold one odd packet */
			kind[j] = random() % 3 != 0 ? (unsigned int)random() % 3 :
						     (unsigned int)random() % nk;
			for (s = 0; s < 2; s++) {
				pk[s][j] = mk_kind(kind[j]);
				rx_l2_local(pk[s][j]);
			}
			if (x4_kinds[kind[j]].ctr != NULL)
				for (c = 0; c < st[0]->ops->n_ctrs; c++)
					want[c] += strcmp(st[0]->ops->ctrs[c].name,
							  x4_kinds[kind[j]].ctr) == 0;
		}
		for (s = 0; s < 2; s++)
			pf_test_process(st[s], pk[s], b, e[s]);
		for (j = 0; j < b; j++) {
			const struct pf_meta *a = pf_meta(pk[0][j]), *r = pf_meta(pk[1][j]);

			if (e[0][j] != x4_kinds[kind[j]].edge || e[1][j] != e[0][j])
				fail_msg("round %u packet %u kind %u: x4 edge %u, scalar %u, want %u",
					 round, j, kind[j], e[0][j], e[1][j], x4_kinds[kind[j]].edge);
			assert_int_equal(rte_pktmbuf_data_len(pk[0][j]),
					 rte_pktmbuf_data_len(pk[1][j]));
			if (memcmp(rte_pktmbuf_mtod(pk[0][j], void *),
				   rte_pktmbuf_mtod(pk[1][j], void *),
				   rte_pktmbuf_data_len(pk[0][j])) != 0)
				fail_msg("round %u packet %u kind %u: x4 wrote other bytes", round, j,
					 kind[j]);
			if (e[0][j] != 0) {
				assert_int_equal(a->out_port, r->out_port);
				assert_int_equal(a->nexthop, r->nexthop);
			}
		}
		total += b;
		for (s = 0; s < 2; s++)
			pf_test_free(pk[s], b);
	}
	pf_test_ctrs_agree(st[0], st[1], want, "x4", "scalar");
	assert_true(pf_test_ctr(st[0], "ip4_martian_src") != 0);
	assert_true(pf_test_ctr(st[0], "arp_reply") != 0);
	assert_true(total > 8000);
	for (s = 0; s < 2; s++)
		destroy(st[s], topo[s]);
}

/*
 * The x4 group updates four TTLs and checksums in SSE lanes: every checksum
 * value (TTLs 2-255), in bursts of 32, leaves the bytes the scalar
 * reference leaves and a valid header.
 */
static void
test_x4_cksum(void **state)
{
	struct pf_stage *st[2];
	struct pf_topo *topo[2];
	char yaml[4096];
	uint32_t c = 0, t;
	uint16_t s, j;

	for (s = 0; s < 2; s++) {
		snprintf(yaml, sizeof(yaml), topo_x4_fmt, s == 0 ? "x4" : "scalar");
		st[s] = pf_test_stage(yaml, "lpm", &topo[s]);
	}
	while (c < 65536) {
		struct rte_mbuf *pk[2][32];
		uint16_t e[2][32];

		for (j = 0; j < 32; j++, c++)
			for (s = 0; s < 2; s++) {
				struct rte_ipv4_hdr *ip;

				pk[s][j] = mk_ip(mac_p0, ip4(192, 168, 0, 9), ip4(10, 1, 2, 3),
						 (uint8_t)(2 + c % 254), 17, 0);
				rx_l2_local(pk[s][j]);
				ip = rte_pktmbuf_mtod_offset(pk[s][j], struct rte_ipv4_hdr *,
							     RTE_ETHER_HDR_LEN);
				/* ID = ~(sum + c): a valid header with checksum c. */
				ip->packet_id = 0;
				ip->hdr_checksum = 0;
				t = rte_raw_cksum(ip, sizeof(*ip)) + c;
				t = (t & 0xffff) + (t >> 16);
				ip->packet_id = (uint16_t)~t;
				ip->hdr_checksum = (uint16_t)c;
			}
		for (s = 0; s < 2; s++)
			pf_test_process(st[s], pk[s], 32, e[s]);
		for (j = 0; j < 32; j++) {
			const struct rte_ipv4_hdr *ip =
				rte_pktmbuf_mtod_offset(pk[0][j], struct rte_ipv4_hdr *,
							RTE_ETHER_HDR_LEN);

			assert_int_equal(e[0][j], 1);
			assert_int_equal(e[1][j], 1);
			if (memcmp(rte_pktmbuf_mtod(pk[0][j], void *),
				   rte_pktmbuf_mtod(pk[1][j], void *), 60) != 0)
				fail_msg("checksum %#x: x4 wrote other bytes", c - 32 + j);
			assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
		}
		for (s = 0; s < 2; s++)
			pf_test_free(pk[s], 32);
	}
	for (s = 0; s < 2; s++)
		destroy(st[s], topo[s]);
}

/* ---- live update -------------------------------------------------------- */

static void
test_update(void **state)
{
	struct pf_topo *topo, *topo2;
	struct pf_stage *st = pf_test_stage(topo_noroute, "lpm", &topo);
	struct pf_errs errs = { 0 };
	struct pf_gauge g[8];
	struct rte_mbuf *m;
	uint16_t ng, i;
	uint64_t updates = 0;

	m = mk_ip(mac_p0, ip4(192, 168, 0, 9), ip4(10, 2, 3, 4), 64, 17, 0);
	assert_int_equal(run1(st, m), 1);
	assert_int_equal(pf_meta(m)->out_port, 1);
	rte_pktmbuf_free(m);
	/* the new route set comes from another load of a topology */
	assert_int_equal(pf_topo_load_string("inline.yaml", topo_routes, &topo2, &errs), 0);
	assert_int_equal(pf_stage_update(st, &topo2->stages[pf_topo_stage_index(topo2, "lpm")],
					 &errs), 0);
	m = mk_ip(mac_p0, ip4(192, 168, 0, 9), ip4(10, 2, 3, 9), 64, 17, 0);
	assert_int_equal(run1(st, m), 1);
	assert_int_equal(pf_meta(m)->out_port, 0);   /* 10.2.3.0/24 via nh3 now */
	rte_pktmbuf_free(m);
	/* a second update (same routes) frees the previous table */
	assert_int_equal(pf_stage_update(st, &topo2->stages[pf_topo_stage_index(topo2, "lpm")],
					 &errs), 0);
	ng = pf_stage_gauges(st, g, RTE_DIM(g));
	for (i = 0; i < ng; i++) {
		if (strcmp(g[i].name, "route_updates") == 0)
			updates = g[i].value;
		if (strcmp(g[i].name, "routes") == 0)
			assert_int_equal(g[i].value, 5);
	}
	assert_int_equal(updates, 2);
	pf_stage_destroy(st);
	pf_topo_free(topo2);
	pf_topo_free(topo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cksum_adjust_known),
		cmocka_unit_test(test_cksum_exhaustive),
		cmocka_unit_test(test_routes_file_errors),
		cmocka_unit_test(test_inline_errors),
		cmocka_unit_test(test_longest_prefix),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_options_fragments),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_mtu_fragment_edge),
		cmocka_unit_test(test_priority_tag_stripped),
		cmocka_unit_test(test_arp),
		cmocka_unit_test(test_icmp_echo),
		cmocka_unit_test(test_modes_agree),
		cmocka_unit_test(test_x4_groups),
		cmocka_unit_test(test_x4_cksum),
		cmocka_unit_test(test_update),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
