/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rx parser and classifier on hand-built frames.
 *
 * Every frame sits at the very end of a mapping whose next page is PROT_NONE
 * (attached to an mbuf as an external buffer), so reading one byte past the
 * frame faults: the parser must check every length before it reads. Each
 * case asserts the edge, the metadata and the exact delta of every counter
 * (the named drop reason +1, everything else unchanged unless listed).
 *
 * Every case also runs through a second rx stage with fast_path: false (the
 * full parser alone), and the two must agree exactly: edge, metadata, frame
 * length and every counter delta.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "pf_test.h"

enum { E_DROP, E_IPV4, E_IPV6, E_ARP, E_OTHER, E_IP6_ERROR };

#define TOPO_ALL(fast)										\
	"ports:\n"										\
	"  p0: { device: net_null0 }\n"								\
	"  p1: { device: net_null1, max_frame: 9018, mac: \"02:00:00:00:00:11\" }\n"		\
	"stages:\n"										\
	"  rx: { type: rx, ports: [p0, p1], fast_path: " fast ",\n"				\
	"        next: { ipv4: xc, ipv6: xc, arp: xc, other: xc, ip6_error: xc } }\n"		\
	"  xc: { type: xconnect, pairs: { p0: p1, p1: p0 }, next: tx }\n"			\
	"  tx: { type: tx, ports: [p0, p1] }\n"							\
	"lcores:\n"										\
	"  1: [rx, xc, tx]\n"

static const char topo_all[] = TOPO_ALL("true");
/* The same stage with the full parser only: the reference for the fast path. */
static const char topo_full[] = TOPO_ALL("false");

/* p1's MAC (p0 has none): frames to it are L2_LOCAL on p1; from it, a spoof. */
static const uint8_t mac_p1[6] = { 0x02, 0, 0, 0, 0, 0x11 };

/* Only IPv4 is wired: every other class is ethertype_unsupported. */
static const char topo_ipv4_only[] =
	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: { ipv4: tx } }\n"
	"  tx: { type: tx, ports: [p0] }\n"
	"lcores:\n"
	"  1: [rx, tx]\n";

/* Only IPv6 is wired: the fast path runs for IPv6 alone. */
static const char topo_ipv6_only[] =
	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: { ipv6: tx } }\n"
	"  tx: { type: tx, ports: [p0] }\n"
	"lcores:\n"
	"  1: [rx, tx]\n";

static struct pf_topo *topo, *topo4, *topo6, *topo_f;
static struct pf_stage *rx, *rx4, *rx6, *rxf;
/* RX offload flags the next guard mbuf gets (the checksum verdict of a port). */
static uint64_t next_ol_flags;
/*
 * The headroom (data_off) of the next guard mbufs: the standard one, as
 * PMDs leave it (rx's fast path then finds the data without data_off), or
 * 0 (the fast path's other loop, and rx_other's retry in a mixed burst).
 */
static uint16_t next_headroom = RTE_PKTMBUF_HEADROOM;
/* The differential tests' headrooms, by iteration. */
static const uint16_t rooms[] = { RTE_PKTMBUF_HEADROOM, 0, RTE_PKTMBUF_HEADROOM, 64 };

/* ---- guarded mbufs ------------------------------------------------------ */

struct guard {
	struct rte_mbuf_ext_shared_info shinfo;
	size_t map_len;
};

static void
guard_free(void *addr, void *opaque)
{
	struct guard *g = opaque;

	munmap(g, g->map_len);
}

/*
 * An mbuf whose @p len bytes end exactly where an unmapped page begins,
 * after next_headroom bytes of headroom.
 */
static struct rte_mbuf *
guard_mbuf(const void *data, uint16_t len, uint16_t in_port)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint16_t room = next_headroom;
	size_t body = RTE_ALIGN_CEIL(sizeof(struct guard) + room + len, pg);
	uint8_t *map = mmap(NULL, body + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	struct rte_mbuf *m = rte_pktmbuf_alloc(pf_test_pool());
	struct guard *g = (struct guard *)map;
	uint8_t *buf;

	assert_true(map != MAP_FAILED);
	assert_non_null(m);
	assert_int_equal(mprotect(map + body, pg, PROT_NONE), 0);
	g->map_len = body + pg;
	g->shinfo.free_cb = guard_free;
	g->shinfo.fcb_opaque = g;
	rte_mbuf_ext_refcnt_set(&g->shinfo, 1);
	buf = map + body - len - room;
	memcpy(buf + room, data, len);
	rte_pktmbuf_attach_extbuf(m, buf, (rte_iova_t)(uintptr_t)buf, (uint16_t)(room + len), &g->shinfo);
	m->data_off = room;
	m->data_len = len;
	m->pkt_len = len;
	/* As a PMD leaves it: the DPDK port id (the tests' ids are the indexes). */
	m->port = in_port;
	m->ol_flags |= next_ol_flags;
	memset(pf_meta(m), 0, sizeof(struct pf_meta));
	pf_meta(m)->in_port = in_port;
	return m;
}

/* ---- frame builders ----------------------------------------------------- */

static const uint8_t mac_dst[6] = { 0x02, 0, 0, 0, 0, 0x10 };
static const uint8_t mac_src[6] = { 0x02, 0, 0, 0, 0, 0x20 };

struct frame {
	uint8_t b[9100];
	uint16_t len;
};

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One's complement sum over @p len bytes, written independently of DPDK's. */
static uint16_t
csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Ethernet header, optionally with one 802.1Q tag; returns the L3 offset. */
static uint16_t
eth(struct frame *f, uint16_t type, int tci)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->b, mac_dst, 6);
	memcpy(f->b + 6, mac_src, 6);
	if (tci >= 0) {
		put16(f->b + 12, RTE_ETHER_TYPE_VLAN);
		put16(f->b + 14, (uint16_t)tci);
		put16(f->b + 16, type);
		return 18;
	}
	put16(f->b + 12, type);
	return 14;
}

/*
 * IPv4 frame: header of @p ihl words (options are NOPs), @p payload bytes,
 * total length as built, valid checksum. Callers then break what they test.
 */
static uint8_t *
ipv4(struct frame *f, int tci, unsigned int ihl, uint16_t payload)
{
	uint16_t l2 = eth(f, RTE_ETHER_TYPE_IPV4, tci);
	uint8_t *ip = f->b + l2;
	uint16_t hl = (uint16_t)(ihl * 4);

	ip[0] = (uint8_t)(0x40 | ihl);
	put16(ip + 2, (uint16_t)(hl + payload));
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10, ip[15] = 1;
	ip[16] = 10, ip[19] = 2;
	memset(ip + 20, 1, hl - 20u);    /* NOP options */
	put16(ip + 10, csum(ip, hl));
	f->len = (uint16_t)(l2 + hl + payload);
	return ip;
}

static void
ipv4_recsum(uint8_t *ip)
{
	put16(ip + 10, 0);
	put16(ip + 10, csum(ip, (ip[0] & 0xf) * 4u));
}

static uint8_t *
ipv6(struct frame *f, int tci, uint16_t payload)
{
	uint16_t l2 = eth(f, RTE_ETHER_TYPE_IPV6, tci);
	uint8_t *ip = f->b + l2;

	ip[0] = 0x60;
	put16(ip + 4, payload);
	ip[6] = 17;
	ip[7] = 64;
	f->len = (uint16_t)(l2 + 40 + payload);
	return ip;
}

static void
arp(struct frame *f, int tci, uint16_t len)
{
	uint16_t l2 = eth(f, RTE_ETHER_TYPE_ARP, tci);

	put16(f->b + l2, 1);
	put16(f->b + l2 + 2, RTE_ETHER_TYPE_IPV4);
	f->b[l2 + 4] = 6;
	f->b[l2 + 5] = 4;
	put16(f->b + l2 + 6, 1);
	f->len = (uint16_t)(l2 + len);
}

/* ---- counters ----------------------------------------------------------- */

#define MAX_CTRS 64

struct delta {
	const char *name;
	uint64_t n;
};

static void
snap(const struct pf_stage *st, uint64_t *c)
{
	memcpy(c, st->ctrs, st->ops->n_ctrs * sizeof(uint64_t));
}

/* Every counter moved by exactly what @p d lists (NULL-terminated), others by 0. */
static void
check_deltas(const struct pf_stage *st, const uint64_t *before, const struct delta *d,
	     const char *what)
{
	uint16_t k;
	int j;

	for (j = 0; d[j].name != NULL; j++)
		pf_test_ctr(st, d[j].name);  /* fails on a misspelt name */
	for (k = 0; k < st->ops->n_ctrs; k++) {
		uint64_t want = 0;

		for (j = 0; d[j].name != NULL; j++)
			if (strcmp(d[j].name, st->ops->ctrs[k].name) == 0)
				want += d[j].n;
		if (st->ctrs[k] - before[k] != want)
			fail_msg("%s: counter %s moved by %" PRIu64 ", want %" PRIu64, what,
				 st->ops->ctrs[k].name, st->ctrs[k] - before[k], want);
	}
}

/*
 * The frame through rx (fast path on) and rxf (full parser only): the same
 * edge, metadata, length and counter deltas. Returns the edge.
 */
static uint16_t
same_as_full(const struct frame *f, uint16_t port, const char *what)
{
	uint64_t b_fast[MAX_CTRS], b_full[MAX_CTRS];
	struct rte_mbuf *mf = guard_mbuf(f->b, f->len, port);
	struct rte_mbuf *mr = guard_mbuf(f->b, f->len, port);
	uint16_t ef, er, k;

	snap(rx, b_fast);
	snap(rxf, b_full);
	pf_test_process(rx, &mf, 1, &ef);
	pf_test_process(rxf, &mr, 1, &er);
	if (ef != er)
		fail_msg("%s: fast path edge %u, full parser %u", what, ef, er);
	for (k = 0; k < rx->ops->n_ctrs; k++)
		if (rx->ctrs[k] - b_fast[k] != rxf->ctrs[k] - b_full[k])
			fail_msg("%s: counter %s moved by %" PRIu64 " (fast) vs %" PRIu64 " (full)",
				 what, rx->ops->ctrs[k].name, rx->ctrs[k] - b_fast[k],
				 rxf->ctrs[k] - b_full[k]);
	if (ef != E_DROP) {
		if (memcmp(pf_meta(mf), pf_meta(mr), sizeof(struct pf_meta)) != 0)
			fail_msg("%s: metadata differs (flags %#x vs %#x)", what,
				 pf_meta(mf)->flags, pf_meta(mr)->flags);
		assert_int_equal(mf->data_len, mr->data_len);
		assert_int_equal(mf->pkt_len, mr->pkt_len);
	}
	rte_pktmbuf_free(mf);
	rte_pktmbuf_free(mr);
	return ef;
}

/* Run one frame through @p st; check its edge and counter deltas; return the mbuf. */
static struct rte_mbuf *
one(struct pf_stage *st, const struct frame *f, uint16_t port, uint16_t want_edge,
    const struct delta *d, const char *what)
{
	uint64_t before[MAX_CTRS];
	struct rte_mbuf *m;
	uint16_t edge[2] = { 0xdead, 0xbeef };

	if (st == rx)
		same_as_full(f, port, what);
	m = guard_mbuf(f->b, f->len, port);
	snap(st, before);
	pf_test_process(st, &m, 1, edge);
	if (edge[0] != want_edge)
		fail_msg("%s: edge %u, want %u", what, edge[0], want_edge);
	assert_int_equal(edge[1], 0xbeef);
	check_deltas(st, before, d, what);
	return m;
}

static void
drop_case(const struct frame *f, uint16_t port, const struct delta *d, const char *what)
{
	rte_pktmbuf_free(one(rx, f, port, E_DROP, d, what));
}

#define D(...) ((const struct delta[]){ __VA_ARGS__, { NULL, 0 } })
#define NONE ((const struct delta[]){ { NULL, 0 } })

/* ---- setup -------------------------------------------------------------- */

static int
setup(void **state)
{
	if (pf_test_eal_init("rx") < 0)
		return -1;
	rx = pf_test_stage(topo_all, "rx", &topo);
	rxf = pf_test_stage(topo_full, "rx", &topo_f);
	rx4 = pf_test_stage(topo_ipv4_only, "rx", &topo4);
	rx6 = pf_test_stage(topo_ipv6_only, "rx", &topo6);
	return rx->ops->n_ctrs <= MAX_CTRS ? 0 : -1;
}

static int
teardown(void **state)
{
	pf_stage_destroy(rx);
	pf_stage_destroy(rxf);
	pf_stage_destroy(rx4);
	pf_stage_destroy(rx6);
	pf_topo_free(topo);
	pf_topo_free(topo_f);
	pf_topo_free(topo4);
	pf_topo_free(topo6);
	return 0;
}

/* ---- malformed L2 ------------------------------------------------------- */

static void
test_eth_truncated(void **state)
{
	struct frame f;
	uint16_t len;

	for (len = 0; len < 14; len++) {
		ipv4(&f, -1, 5, 40);
		f.len = len;
		drop_case(&f, 0, D({ "eth_truncated", 1 }), "truncated ethernet");
	}
	/* 0x8100 and then the frame ends inside the tag. */
	for (len = 14; len < 18; len++) {
		ipv4(&f, 100, 5, 40);
		f.len = len;
		drop_case(&f, 0, D({ "eth_truncated", 1 }), "truncated vlan");
	}
}

static void
test_src_mac(void **state)
{
	static const uint8_t bad[][6] = {
		{ 0, 0, 0, 0, 0, 0 },
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		{ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 },
		{ 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 },
	};
	struct frame f;
	size_t i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		ipv4(&f, -1, 5, 40);
		memcpy(f.b + 6, bad[i], 6);
		drop_case(&f, 0, D({ "l2_invalid_src_mac", 1 }), "bad source mac");
	}
	/* A locally administered unicast source is fine. */
	ipv4(&f, -1, 5, 40);
	f.b[6] = 0x02, f.b[11] = 0;
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "local source mac"));
	/* Ending in 0x00 (the fast path's zero candidate, bad[0] above): one byte set is fine. */
	for (i = 0; i < 5; i++) {
		ipv4(&f, -1, 5, 40);
		memset(f.b + 6, 0, 6);
		f.b[6 + i] = 0x02;
		rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "one byte set, last 0x00"));
	}
}

static void
test_vlan_bad(void **state)
{
	struct frame f;

	ipv4(&f, 0xfff, 5, 40);
	drop_case(&f, 0, D({ "vlan_unknown", 1 }), "vid 4095");
	ipv4(&f, 0x6fff, 5, 40);
	drop_case(&f, 0, D({ "vlan_unknown", 1 }), "vid 4095 with pcp");
	/* 802.1ad outer tag. */
	ipv4(&f, 100, 5, 40);
	put16(f.b + 12, RTE_ETHER_TYPE_QINQ);
	drop_case(&f, 0, D({ "vlan_too_deep", 1 }), "qinq 88a8");
	/* Two 802.1Q tags, and 802.1Q then 802.1ad. */
	ipv4(&f, 100, 5, 40);
	put16(f.b + 16, RTE_ETHER_TYPE_VLAN);
	drop_case(&f, 0, D({ "vlan_too_deep", 1 }), "double 8100");
	put16(f.b + 16, RTE_ETHER_TYPE_QINQ);
	drop_case(&f, 0, D({ "vlan_too_deep", 1 }), "8100 then 88a8");
}

static void
test_llc_length(void **state)
{
	struct frame f;
	struct rte_mbuf *m;

	/* 802.3 length 1500 in a 60-byte frame: 46 bytes of payload. */
	eth(&f, 1500, -1);
	f.len = 60;
	drop_case(&f, 0, D({ "bad_llc_length", 1 }), "llc length > payload");
	eth(&f, 47, -1);
	f.len = 60;
	drop_case(&f, 0, D({ "bad_llc_length", 1 }), "llc length = payload + 1");
	/* A length that fits is a valid 802.3 frame: class other. */
	eth(&f, 46, -1);
	f.len = 60;
	m = one(rx, &f, 0, E_OTHER, NONE, "llc length = payload");
	assert_int_equal(pf_meta(m)->cls, PF_CLASS_OTHER);
	rte_pktmbuf_free(m);
}

static void
test_oversize(void **state)
{
	struct frame f;

	/* p0: default mtu 1500, so max_frame 1514 (1518 with a tag). */
	ipv4(&f, -1, 5, 1514 - 34);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "1514 untagged"));
	ipv4(&f, -1, 5, 1515 - 34);
	drop_case(&f, 0, D({ "eth_oversize", 1 }), "1515 untagged");
	ipv4(&f, 100, 5, 1518 - 38);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, D({ "vlan_tagged", 1 }), "1518 tagged"));
	ipv4(&f, 100, 5, 1519 - 38);
	drop_case(&f, 0, D({ "eth_oversize", 1 }, { "vlan_tagged", 1 }), "1519 tagged");
	/* p1: jumbo, max_frame 9018. */
	ipv4(&f, -1, 5, 9018 - 34);
	rte_pktmbuf_free(one(rx, &f, 1, E_IPV4, NONE, "9018 jumbo"));
	ipv4(&f, -1, 5, 9019 - 34);
	drop_case(&f, 1, D({ "eth_oversize", 1 }), "9019 jumbo");
}

/* A chained mbuf is dropped before its first segment is even parsed. */
static void
test_multiseg(void **state)
{
	struct rte_mbuf *m, *tail;
	struct frame f;
	uint64_t before[MAX_CTRS];
	uint16_t edge;

	ipv4(&f, -1, 5, 100);
	m = guard_mbuf(f.b, 10, 0);   /* segment 1 ends mid-header, at the guard page */
	tail = pf_test_mbuf(f.b + 10, (uint16_t)(f.len - 10), 0);
	assert_int_equal(rte_pktmbuf_chain(m, tail), 0);
	assert_int_equal(m->nb_segs, 2);
	snap(rx, before);
	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(edge, E_DROP);
	check_deltas(rx, before, D({ "eth_multiseg_unsupported", 1 }), "multi-segment");
	rte_pktmbuf_free(m);
}

/* ---- malformed IPv4 ----------------------------------------------------- */

static void
test_ip4_malformed(void **state)
{
	struct frame f;
	uint8_t *ip;
	uint16_t len;

	/* Under 20 bytes of L3, untagged and tagged. */
	for (len = 0; len < 20; len++) {
		ipv4(&f, -1, 5, 0);
		f.len = (uint16_t)(14 + len);
		drop_case(&f, 0, D({ "ip4_too_short", 1 }), "ip4 < 20 bytes");
		ipv4(&f, 7, 5, 0);
		f.len = (uint16_t)(18 + len);
		drop_case(&f, 0, D({ "ip4_too_short", 1 }, { "vlan_tagged", 1 }),
			  "tagged ip4 < 20 bytes");
	}
	ip = ipv4(&f, -1, 5, 40);
	ip[0] = 0x65;
	ipv4_recsum(ip);
	drop_case(&f, 0, D({ "ip4_bad_version", 1 }), "version 6");
	ip[0] = 0x35;
	drop_case(&f, 0, D({ "ip4_bad_version", 1 }), "version 3");
	ip = ipv4(&f, -1, 5, 40);
	ip[0] = 0x44;
	drop_case(&f, 0, D({ "ip4_hdr_too_short", 1 }), "ihl 4");
	ip[0] = 0x40;
	drop_case(&f, 0, D({ "ip4_hdr_too_short", 1 }), "ihl 0");
	/* Total length below the header length. */
	ip = ipv4(&f, -1, 5, 40);
	put16(ip + 2, 10);
	ipv4_recsum(ip);
	drop_case(&f, 0, D({ "ip4_too_short", 1 }), "total length 10");
	ip = ipv4(&f, -1, 6, 40);
	put16(ip + 2, 22);
	ipv4_recsum(ip);
	drop_case(&f, 0, D({ "ip4_too_short", 1 }), "total length < ihl*4 with options");
	/* Total length beyond the frame (400 in a 128-byte frame). */
	ip = ipv4(&f, -1, 5, 128 - 34);
	put16(ip + 2, 400);
	ipv4_recsum(ip);
	drop_case(&f, 0, D({ "ip4_bad_length", 1 }), "total length > frame");
	put16(ip + 2, (uint16_t)(128 - 14 + 1));
	ipv4_recsum(ip);
	drop_case(&f, 0, D({ "ip4_bad_length", 1 }), "total length = frame + 1");
	/* IHL*4 beyond the frame: 60-byte header in 40 bytes of L3. */
	ip = ipv4(&f, -1, 5, 20);
	ip[0] = 0x4f;
	drop_case(&f, 0, D({ "ip4_bad_length", 1 }), "ihl*4 > frame");
	/* Header exactly at the guard with IHL 15 and nothing after it: fine. */
	ip = ipv4(&f, -1, 15, 0);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, D({ "ip4_options_seen", 1 }), "ihl 15, no payload"));
}

static void
test_ip4_checksum(void **state)
{
	struct frame f;
	uint8_t *ip;

	ip = ipv4(&f, -1, 5, 40);
	ip[10] ^= 0x01;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "bad checksum");
	ip = ipv4(&f, -1, 5, 40);
	ip[8] = 63;                       /* TTL changed, checksum not updated */
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "stale checksum");
	/* With options: a checksum right over 20 bytes but wrong over IHL*4. */
	ip = ipv4(&f, -1, 7, 40);
	ip[0] = 0x45;
	ipv4_recsum(ip);
	ip[0] = 0x47;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "checksum must cover options");
	ip = ipv4(&f, -1, 7, 40);
	ip[27] = 0x00;                    /* last option byte: NOP -> EOL */
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "option byte changed");
	/* A tagged frame with a bad checksum. */
	ip = ipv4(&f, 5, 5, 40);
	ip[12] ^= 0x80;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }, { "vlan_tagged", 1 }), "tagged bad checksum");
}

/* ---- malformed IPv6 and ARP --------------------------------------------- */

static void
test_ip6_arp_malformed(void **state)
{
	struct frame f;
	uint8_t *ip;
	uint16_t len;

	for (len = 0; len < 40; len++) {
		ipv6(&f, -1, 0);
		f.len = (uint16_t)(14 + len);
		drop_case(&f, 0, D({ "ip6_too_short", 1 }), "ip6 < 40 bytes");
	}
	ip = ipv6(&f, -1, 20);
	ip[0] = 0x45;
	drop_case(&f, 0, D({ "ip6_bad_version", 1 }), "ip6 version 4");
	ip = ipv6(&f, -1, 10);
	put16(ip + 4, 100);
	drop_case(&f, 0, D({ "ip6_bad_length", 1 }), "ip6 payload length > frame");
	put16(ip + 4, 11);
	drop_case(&f, 0, D({ "ip6_bad_length", 1 }), "ip6 payload length = frame + 1");
	for (len = 0; len < 28; len++) {
		arp(&f, -1, len);
		drop_case(&f, 0, D({ "arp_too_short", 1 }), "arp < 28 bytes");
	}
}

/*
 * Append an extension header of type @p type (the Next Header that names
 * it is already in place) with @p len bytes (8 or a multiple of 8) at
 * offset @p off of the IPv6 header @p ip, naming @p next; returns the new offset.
 */
static uint16_t
ext6(uint8_t *ip, uint16_t off, uint8_t type, uint16_t len, uint8_t next)
{
	ip[off] = next;
	ip[off + 1] = type == 44 ? 0 : (uint8_t)(len / 8 - 1);
	return (uint16_t)(off + len);
}

/* IPv6 frame with the chain @p types / @p lens, then @p l4 bytes of protocol @p proto. */
static uint8_t *
ipv6_chain(struct frame *f, const uint8_t *types, const uint16_t *lens, unsigned int n,
	   uint8_t proto, uint16_t l4)
{
	uint16_t ext = 0, off = 40;
	unsigned int i;
	uint8_t *ip;

	for (i = 0; i < n; i++)
		ext = (uint16_t)(ext + lens[i]);
	ip = ipv6(f, -1, (uint16_t)(ext + l4));
	ip[6] = n ? types[0] : proto;
	for (i = 0; i < n; i++)
		off = ext6(ip, off, types[i], lens[i], i + 1 < n ? types[i + 1] : proto);
	return ip;
}

/* The extension header walk: l3_len, l4_proto, fragment flags and every drop reason. */
static void
test_ip6_ext(void **state)
{
	static const uint8_t dst9[9] = { 60, 60, 60, 60, 60, 60, 60, 60, 60 };
	static const uint16_t len9[9] = { 8, 8, 8, 8, 8, 8, 8, 8, 8 };
	const struct delta *seen = D({ "ip6_ext_seen", 1 });
	struct rte_mbuf *m;
	struct frame f;
	uint8_t *ip;
	uint16_t l;

	ipv6_chain(&f, (const uint8_t[]){ 0 }, (const uint16_t[]){ 8 }, 1, 17, 8);
	m = one(rx, &f, 0, E_IPV6, seen, "hbh + udp");
	assert_int_equal(pf_meta(m)->l3_len, 48);
	assert_int_equal(pf_meta(m)->l4_proto, 17);
	assert_int_equal(pf_meta(m)->flags, 0);
	rte_pktmbuf_free(m);

	ipv6_chain(&f, (const uint8_t[]){ 0, 43, 60 }, (const uint16_t[]){ 8, 24, 16 }, 3, 6, 20);
	m = one(rx, &f, 0, E_IPV6, seen, "hbh + routing + dstopts + tcp");
	assert_int_equal(pf_meta(m)->l3_len, 88);
	assert_int_equal(pf_meta(m)->l4_proto, 6);
	rte_pktmbuf_free(m);

	ipv6_chain(&f, dst9, len9, 8, 58, 8);
	m = one(rx, &f, 0, E_IPV6, seen, "8 headers (the cap)");
	assert_int_equal(pf_meta(m)->l3_len, 104);
	assert_int_equal(pf_meta(m)->l4_proto, 58);
	rte_pktmbuf_free(m);
	ipv6_chain(&f, dst9, len9, 9, 58, 8);
	drop_case(&f, 0, D({ "ip6_ext_too_many", 1 }), "9 headers");

	ipv6_chain(&f, (const uint8_t[]){ 60 }, (const uint16_t[]){ 208 }, 1, 17, 8);
	m = one(rx, &f, 0, E_IPV6, seen, "208 bytes of headers (the cap)");
	assert_int_equal(pf_meta(m)->l3_len, 248);
	rte_pktmbuf_free(m);
	ipv6_chain(&f, (const uint8_t[]){ 0, 60 }, (const uint16_t[]){ 8, 208 }, 2, 17, 8);
	drop_case(&f, 0, D({ "ip6_ext_too_long", 1 }), "216 bytes of headers");

	ipv6_chain(&f, (const uint8_t[]){ 60, 0 }, (const uint16_t[]){ 8, 8 }, 2, 17, 8);
	drop_case(&f, 0, D({ "ip6_hbh_not_first", 1 }), "hbh second");

	/* Headers running past the payload length (the frame itself may be longer). */
	for (l = 0; l < 8; l++) {
		ip = ipv6(&f, -1, l);
		ip[6] = 0;
		drop_case(&f, 0, D({ "ip6_ext_truncated", 1 }), "hbh past payload");
	}
	ip = ipv6_chain(&f, (const uint8_t[]){ 43 }, (const uint16_t[]){ 16 }, 1, 17, 0);
	put16(ip + 4, 15);
	f.len = (uint16_t)(f.len + 20);
	drop_case(&f, 0, D({ "ip6_ext_truncated", 1 }), "routing header 1 byte past payload");

	/* Fragments: first (M set), non-first, atomic (RFC 6946: not a fragment). */
	ip = ipv6_chain(&f, (const uint8_t[]){ 44 }, (const uint16_t[]){ 8 }, 1, 17, 8);
	ip[43] = 1;
	m = one(rx, &f, 0, E_IPV6, seen, "first fragment");
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_FRAG);
	assert_int_equal(pf_meta(m)->l3_len, 48);
	assert_int_equal(pf_meta(m)->l4_proto, 17);
	rte_pktmbuf_free(m);
	ip = ipv6_chain(&f, (const uint8_t[]){ 44 }, (const uint16_t[]){ 8 }, 1, 17, 7);
	ip[43] = 1;
	drop_case(&f, 0, D({ "ip6_ext_seen", 1 }, { "ip6_frag_incomplete_chain", 1 }),
		  "first fragment, 7 bytes of UDP");
	ip = ipv6_chain(&f, (const uint8_t[]){ 44, 60 }, (const uint16_t[]){ 8, 8 }, 2, 6, 19);
	ip[43] = 1;
	drop_case(&f, 0, D({ "ip6_ext_seen", 1 }, { "ip6_frag_incomplete_chain", 1 }),
		  "first fragment, 19 bytes of TCP");
	ip = ipv6_chain(&f, (const uint8_t[]){ 44, 60 }, (const uint16_t[]){ 8, 8 }, 2, 6, 3);
	put16(ip + 42, 0x00b9);           /* offset 23 * 8, M */
	m = one(rx, &f, 0, E_IPV6, seen, "middle fragment");
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_FRAG | PF_META_IP_NONFIRST);
	assert_int_equal(pf_meta(m)->l3_len, 48);
	assert_int_equal(pf_meta(m)->l4_proto, 60);
	rte_pktmbuf_free(m);
	ipv6_chain(&f, (const uint8_t[]){ 44 }, (const uint16_t[]){ 8 }, 1, 17, 8);
	m = one(rx, &f, 0, E_IPV6, seen, "atomic fragment");
	assert_int_equal(pf_meta(m)->flags, 0);
	assert_int_equal(pf_meta(m)->l3_len, 48);
	rte_pktmbuf_free(m);

	/*
	 * To our MAC with ip6_error wired: the Parameter Problem to send (type 4,
	 * code, pointer) instead of the drop; padding trimmed, so none is quoted.
	 */
	ipv6_chain(&f, (const uint8_t[]){ 60, 0 }, (const uint16_t[]){ 8, 8 }, 2, 17, 8);
	memcpy(f.b, mac_p1, 6);
	f.len = (uint16_t)(f.len + 6);
	m = one(rx, &f, 1, E_IP6_ERROR, D({ "ip6_ext_to_icmp", 1 }), "hbh second, to us");
	assert_int_equal(pf_meta(m)->nexthop, PF_META_ICMP(4, 1, 40));
	assert_int_equal(pf_meta(m)->l3_len, 40);
	assert_int_equal(pf_meta(m)->out_port, 1);
	assert_int_equal(rte_pktmbuf_data_len(m), f.len - 6);
	rte_pktmbuf_free(m);
	ipv6_chain(&f, dst9, len9, 9, 58, 8);
	memcpy(f.b, mac_p1, 6);
	m = one(rx, &f, 1, E_IP6_ERROR, D({ "ip6_ext_to_icmp", 1 }), "9 headers, to us");
	assert_int_equal(pf_meta(m)->nexthop, PF_META_ICMP(4, 8, 40 + 64));
	rte_pktmbuf_free(m);
	ipv6_chain(&f, (const uint8_t[]){ 0, 60 }, (const uint16_t[]){ 8, 208 }, 2, 17, 8);
	memcpy(f.b, mac_p1, 6);
	m = one(rx, &f, 1, E_IP6_ERROR, D({ "ip6_ext_to_icmp", 1 }), "216 bytes, to us");
	assert_int_equal(pf_meta(m)->nexthop, PF_META_ICMP(4, 7, 48));
	rte_pktmbuf_free(m);
	ip = ipv6_chain(&f, (const uint8_t[]){ 44 }, (const uint16_t[]){ 8 }, 1, 17, 7);
	ip[43] = 1;
	memcpy(f.b, mac_p1, 6);
	m = one(rx, &f, 1, E_IP6_ERROR, D({ "ip6_ext_seen", 1 }, { "ip6_ext_to_icmp", 1 }),
		"incomplete first fragment, to us");
	assert_int_equal(pf_meta(m)->nexthop, PF_META_ICMP(4, 3, 0));
	assert_int_equal(pf_meta(m)->flags & (PF_META_IP_FRAG | PF_META_IP_NONFIRST), 0);
	rte_pktmbuf_free(m);
	/* Truncated headers stay drops: there is nothing sound to point at. */
	ip = ipv6(&f, -1, 4);
	ip[6] = 0;
	memcpy(f.b, mac_p1, 6);
	rte_pktmbuf_free(one(rx, &f, 1, E_DROP, D({ "ip6_ext_truncated", 1 }), "truncated, to us"));
	/* Not to our MAC: the drop, wired or not. */
	ipv6_chain(&f, (const uint8_t[]){ 60, 0 }, (const uint16_t[]){ 8, 8 }, 2, 17, 8);
	drop_case(&f, 1, D({ "ip6_hbh_not_first", 1 }), "hbh second, not to us");

	/* Padding after the payload is trimmed. */
	ipv6(&f, -1, 8);
	f.len = (uint16_t)(f.len + 12);
	m = one(rx, &f, 0, E_IPV6, D({ "ip6_trailer_trimmed", 1 }), "ipv6 padding");
	assert_int_equal(rte_pktmbuf_data_len(m), 14 + 48);
	assert_int_equal(pf_meta(m)->l4_proto, 17);
	rte_pktmbuf_free(m);
}

/* ---- good frames -------------------------------------------------------- */

static void
test_classify_good(void **state)
{
	struct rte_mbuf *m;
	struct pf_meta *md;
	struct frame f;
	uint8_t *ip;

	ipv4(&f, -1, 5, 100);
	m = one(rx, &f, 1, E_IPV4, NONE, "ipv4");
	md = pf_meta(m);
	assert_int_equal(md->cls, PF_CLASS_IPV4);
	assert_int_equal(md->l2_len, 14);
	assert_int_equal(md->l3_len, 20);
	assert_int_equal(md->l4_proto, 17);
	assert_int_equal(md->flags, 0);
	assert_int_equal(md->vlan_tci, 0);
	assert_int_equal(md->in_port, 1);
	assert_int_equal(md->out_port, PF_PORT_NONE);
	assert_int_equal(rte_pktmbuf_data_len(m), 134);
	rte_pktmbuf_free(m);

	ipv4(&f, -1, 6, 100);
	m = one(rx, &f, 0, E_IPV4, D({ "ip4_options_seen", 1 }), "ipv4 options");
	assert_int_equal(pf_meta(m)->l3_len, 24);
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_OPTIONS);
	rte_pktmbuf_free(m);

	ip = ipv4(&f, -1, 5, 100);
	put16(ip + 6, 0x2000);            /* MF, offset 0: first fragment */
	ipv4_recsum(ip);
	m = one(rx, &f, 0, E_IPV4, NONE, "first fragment");
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_FRAG);
	rte_pktmbuf_free(m);
	put16(ip + 6, 0x000d);            /* offset 13*8, last fragment */
	ipv4_recsum(ip);
	m = one(rx, &f, 0, E_IPV4, NONE, "last fragment");
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_FRAG | PF_META_IP_NONFIRST);
	rte_pktmbuf_free(m);
	put16(ip + 6, 0x4000);            /* DF only: not a fragment */
	ipv4_recsum(ip);
	m = one(rx, &f, 0, E_IPV4, NONE, "DF");
	assert_int_equal(pf_meta(m)->flags, 0);
	rte_pktmbuf_free(m);

	ipv4(&f, 0x6064, 5, 100);         /* PCP 3, VID 100 */
	m = one(rx, &f, 0, E_IPV4, D({ "vlan_tagged", 1 }), "vlan ipv4");
	md = pf_meta(m);
	assert_int_equal(md->l2_len, 18);
	assert_int_equal(md->flags, PF_META_VLAN);
	assert_int_equal(md->vlan_tci, 0x6064);
	rte_pktmbuf_free(m);

	ipv4(&f, 0x6000, 5, 100);         /* priority tagged: VID 0 is untagged traffic */
	m = one(rx, &f, 0, E_IPV4, D({ "vlan_tagged", 1 }), "vid 0");
	assert_int_equal(pf_meta(m)->l2_len, 18);
	assert_int_equal(pf_meta(m)->flags & PF_META_VLAN, 0);
	rte_pktmbuf_free(m);

	ipv4(&f, -1, 5, 100);
	memset(f.b, 0xff, 6);
	m = one(rx, &f, 0, E_IPV4, NONE, "l2 broadcast");
	assert_int_equal(pf_meta(m)->flags, PF_META_L2_BCAST | PF_META_L2_MCAST);
	rte_pktmbuf_free(m);
	f.b[0] = 0x01, f.b[1] = 0x00, f.b[2] = 0x5e;
	m = one(rx, &f, 0, E_IPV4, NONE, "l2 multicast");
	assert_int_equal(pf_meta(m)->flags, PF_META_L2_MCAST);
	rte_pktmbuf_free(m);

	ipv6(&f, -1, 60);
	m = one(rx, &f, 0, E_IPV6, NONE, "ipv6");
	assert_int_equal(pf_meta(m)->cls, PF_CLASS_IPV6);
	assert_int_equal(pf_meta(m)->l2_len, 14);
	assert_int_equal(pf_meta(m)->l3_len, 40);
	rte_pktmbuf_free(m);
	ipv6(&f, 9, 0);
	m = one(rx, &f, 0, E_IPV6, D({ "vlan_tagged", 1 }, { "rx_runt", 1 }), "tagged ipv6, empty");
	assert_int_equal(pf_meta(m)->l2_len, 18);
	assert_int_equal(pf_meta(m)->flags, PF_META_VLAN);
	rte_pktmbuf_free(m);

	arp(&f, -1, 46);
	m = one(rx, &f, 0, E_ARP, NONE, "arp");
	assert_int_equal(pf_meta(m)->cls, PF_CLASS_ARP);
	assert_int_equal(pf_meta(m)->l2_len, 14);
	rte_pktmbuf_free(m);
	arp(&f, -1, 28);
	rte_pktmbuf_free(one(rx, &f, 0, E_ARP, D({ "rx_runt", 1 }), "arp, 42 bytes"));

	eth(&f, 0x88cc, -1);
	f.len = 60;
	m = one(rx, &f, 0, E_OTHER, NONE, "lldp");
	assert_int_equal(pf_meta(m)->cls, PF_CLASS_OTHER);
	rte_pktmbuf_free(m);
	eth(&f, 0x9000, 77);
	f.len = 18;                       /* nothing after the tag is fine for "other" */
	rte_pktmbuf_free(one(rx, &f, 0, E_OTHER, D({ "vlan_tagged", 1 }, { "rx_runt", 1 }),
			     "tagged other, no payload"));
}

/* Stale metadata from an earlier use of the mbuf never survives the parse. */
static void
test_meta_reset(void **state)
{
	struct rte_mbuf *m;
	struct pf_meta *md;
	struct frame f;

	ipv4(&f, -1, 5, 100);
	m = guard_mbuf(f.b, f.len, 0);
	md = pf_meta(m);
	md->out_port = 3;
	md->flags = 0xff;
	md->vlan_tci = 77;
	md->flood_mask = 5;
	md->nexthop = 9;
	md->bd = 2;
	md->cls = PF_CLASS_ARP;
	md->l3_len = 99;
	md->l4_proto = 99;
	uint16_t edge;

	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(edge, E_IPV4);
	assert_int_equal(md->out_port, PF_PORT_NONE);
	assert_int_equal(md->flags, 0);
	assert_int_equal(md->vlan_tci, 0);
	assert_int_equal(md->flood_mask, 0);
	assert_int_equal(md->nexthop, 0);
	assert_int_equal(md->bd, 0);
	assert_int_equal(md->cls, PF_CLASS_IPV4);
	assert_int_equal(md->l3_len, 20);
	assert_int_equal(md->l4_proto, 17);
	rte_pktmbuf_free(m);
}

/* Ethernet padding after the IPv4 datagram is trimmed (no Etherleak). */
static void
test_padding_trimmed(void **state)
{
	struct rte_mbuf *m;
	struct frame f;
	uint8_t *ip;

	ip = ipv4(&f, -1, 5, 8);          /* 42-byte frame, padded to 60 */
	memset(f.b + f.len, 0xa5, 60 - f.len);
	f.len = 60;
	m = one(rx, &f, 0, E_IPV4, D({ "ip4_trailer_trimmed", 1 }), "padded ipv4");
	assert_int_equal(rte_pktmbuf_data_len(m), 42);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 42);
	rte_pktmbuf_free(m);
	/* Unpadded 42-byte frame from a tap: forwarded, counted as runt only. */
	ipv4(&f, -1, 5, 8);
	m = one(rx, &f, 0, E_IPV4, D({ "rx_runt", 1 }), "runt ipv4");
	assert_int_equal(rte_pktmbuf_data_len(m), 42);
	rte_pktmbuf_free(m);
	/* Tagged, padded. */
	ip = ipv4(&f, 10, 5, 8);
	memset(f.b + f.len, 0, 64 - f.len);
	f.len = 64;
	m = one(rx, &f, 0, E_IPV4, D({ "ip4_trailer_trimmed", 1 }, { "vlan_tagged", 1 }),
		"tagged padded ipv4");
	assert_int_equal(rte_pktmbuf_data_len(m), 46);
	rte_pktmbuf_free(m);
	(void)ip;
}

/* A class whose edge is not wired is dropped with a reason, never sent nowhere. */
static void
test_unwired_class(void **state)
{
	struct frame f;

	ipv6(&f, -1, 60);
	rte_pktmbuf_free(one(rx4, &f, 0, E_DROP, D({ "ethertype_unsupported", 1 }), "ipv6 unwired"));
	arp(&f, -1, 46);
	rte_pktmbuf_free(one(rx4, &f, 0, E_DROP, D({ "ethertype_unsupported", 1 }), "arp unwired"));
	eth(&f, 0x88cc, -1);
	f.len = 60;
	rte_pktmbuf_free(one(rx4, &f, 0, E_DROP, D({ "ethertype_unsupported", 1 }), "other unwired"));
	ipv4(&f, -1, 5, 100);
	rte_pktmbuf_free(one(rx4, &f, 0, E_IPV4, NONE, "ipv4 wired"));
	/* A malformed frame keeps its own reason, not ethertype_unsupported. */
	ipv6(&f, -1, 0);
	f.len = 20;
	rte_pktmbuf_free(one(rx4, &f, 0, E_DROP, D({ "ip6_too_short", 1 }),
			     "malformed ipv6 unwired"));
}

/* IPv6 wired alone: its fast path runs, IPv4 is unsupported on either path. */
static void
test_ipv6_only(void **state)
{
	struct rte_mbuf *m;
	struct frame f;

	ipv4(&f, -1, 5, 100);
	rte_pktmbuf_free(one(rx6, &f, 0, E_DROP, D({ "ethertype_unsupported", 1 }),
			     "ipv4 unwired"));
	ipv6(&f, -1, 60);
	m = one(rx6, &f, 0, E_IPV6, NONE, "ipv6 wired");
	assert_int_equal(pf_meta(m)->l2_len, 14);
	assert_int_equal(pf_meta(m)->l3_len, 40);
	assert_int_equal(pf_meta(m)->l4_proto, 17);
	assert_int_equal(pf_meta(m)->cls, PF_CLASS_IPV6);
	assert_int_equal(pf_meta(m)->out_port, PF_PORT_NONE);
	rte_pktmbuf_free(m);
}

/* ---- fast path ---------------------------------------------------------- */

/* in_port comes from mbuf->port (the DPDK port id), whatever the metadata held. */
static void
test_in_port_from_mbuf(void **state)
{
	struct rte_mbuf *m;
	struct frame f;
	uint16_t edge;

	ipv4(&f, -1, 5, 100);
	m = guard_mbuf(f.b, f.len, 1);
	pf_meta(m)->in_port = 0;          /* stale: a previous life of the mbuf */
	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(edge, E_IPV4);
	assert_int_equal(pf_meta(m)->in_port, 1);
	rte_pktmbuf_free(m);
	/* The same through the full parser (a tagged frame). */
	ipv4(&f, 100, 5, 100);
	m = guard_mbuf(f.b, f.len, 0);
	pf_meta(m)->in_port = 1;
	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(edge, E_IPV4);
	assert_int_equal(pf_meta(m)->in_port, 0);
	rte_pktmbuf_free(m);
	/* A hand-built mbuf (no port): the metadata's in_port stands. */
	ipv4(&f, -1, 5, 100);
	m = guard_mbuf(f.b, f.len, 1);
	m->port = RTE_MBUF_PORT_INVALID;
	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(edge, E_IPV4);
	assert_int_equal(pf_meta(m)->in_port, 1);
	rte_pktmbuf_free(m);
}

/* PF_META_L2_LOCAL: the destination is the ingress port's own MAC. */
static void
test_l2_local(void **state)
{
	struct rte_mbuf *m;
	struct frame f;
	int i;

	ipv4(&f, -1, 5, 100);
	memcpy(f.b, mac_p1, 6);
	m = one(rx, &f, 1, E_IPV4, NONE, "to p1's mac on p1");
	assert_int_equal(pf_meta(m)->flags, PF_META_L2_LOCAL);
	rte_pktmbuf_free(m);
	m = one(rx, &f, 0, E_IPV4, NONE, "to p1's mac on p0");
	assert_int_equal(pf_meta(m)->flags, 0);
	rte_pktmbuf_free(m);
	ipv4(&f, 42, 5, 100);
	memcpy(f.b, mac_p1, 6);
	m = one(rx, &f, 1, E_IPV4, D({ "vlan_tagged", 1 }), "tagged, to p1's mac on p1");
	assert_int_equal(pf_meta(m)->flags, PF_META_L2_LOCAL | PF_META_VLAN);
	rte_pktmbuf_free(m);
	ipv6(&f, -1, 60);
	memcpy(f.b, mac_p1, 6);
	m = one(rx, &f, 1, E_IPV6, NONE, "ipv6 to p1's mac on p1");
	assert_int_equal(pf_meta(m)->flags, PF_META_L2_LOCAL);
	rte_pktmbuf_free(m);
	/* One bit off p1's MAC in its first or last byte (still unicast): not local. */
	for (i = 0; i < 4; i++) {
		if (i < 2)
			ipv4(&f, -1, 5, 100);
		else
			ipv6(&f, -1, 60);
		memcpy(f.b, mac_p1, 6);
		f.b[i % 2 == 0 ? 0 : 5] ^= 0x02;
		m = one(rx, &f, 1, i < 2 ? E_IPV4 : E_IPV6, NONE, "one bit off p1's mac on p1");
		assert_int_equal(pf_meta(m)->flags, 0);
		rte_pktmbuf_free(m);
	}
	/* p1's MAC as a source is a spoof or a loop, on any port. */
	ipv4(&f, -1, 5, 100);
	memcpy(f.b + 6, mac_p1, 6);
	drop_case(&f, 0, D({ "l2_src_is_own_mac", 1 }), "source is p1's mac");
	drop_case(&f, 1, D({ "l2_src_is_own_mac", 1 }), "source is p1's mac, on p1");
	/* Same last byte as p1's MAC (the filter hits), another MAC: fine. */
	f.b[7] = 0x99;
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "filter hit, not ours"));
}

/* The port's checksum verdict: GOOD skips the sum, BAD drops, NONE/UNKNOWN verify. */
static void
test_cksum_offload(void **state)
{
	struct frame f;
	uint8_t *ip;

	ip = ipv4(&f, -1, 5, 100);
	ip[10] ^= 0x5a;
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "offload good, sum wrong"));
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_NONE;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "offload none, sum wrong");
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "offload unknown, sum wrong");
	ip = ipv4(&f, -1, 5, 100);
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_BAD;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "offload bad, sum right");
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_NONE;
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "offload none, sum right"));
	/* Options: the full parser honours the verdict the same way. */
	ip = ipv4(&f, -1, 6, 100);
	ip[10] ^= 0x5a;
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, D({ "ip4_options_seen", 1 }),
			     "options, offload good"));
	ip = ipv4(&f, 9, 6, 100);
	next_ol_flags = RTE_MBUF_F_RX_IP_CKSUM_BAD;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }, { "vlan_tagged", 1 }),
		  "tagged options, offload bad");
	/* A length error still wins over the verdict (same order as before). */
	ip = ipv4(&f, -1, 5, 100);
	put16(ip + 2, 400);
	drop_case(&f, 0, D({ "ip4_bad_length", 1 }), "offload bad, length first");
	next_ol_flags = 0;
	(void)ip;
}

static uint32_t
xorshift(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return (uint32_t)*r;
}

/*
 * The differential tests' disturbance, from the random word @p v: up to
 * three bits flipped in the first @p span bytes, the length cut or padded
 * by up to 31 bytes; returns the port (p1 one time in four).
 */
static uint16_t
disturb(struct frame *f, uint64_t *r, uint32_t v, unsigned int span)
{
	unsigned int k;

	for (k = (v >> 13) & 3; k > 0; k--) {
		uint32_t w = xorshift(r);

		f->b[w % span] ^= (uint8_t)(1u << (w >> 8 & 7));
	}
	if ((v >> 19 & 7) == 0)
		f->len = (uint16_t)(f->len - (v >> 22 & 31));
	else if ((v >> 19 & 7) == 1)
		f->len = (uint16_t)(f->len + (v >> 22 & 31));   /* Ethernet padding */
	return (v >> 27 & 3) == 3 ? 1 : (v >> 27 & 1);
}

/*
 * Differential: frames near the fast path's edge (good IPv4, then a few
 * bytes, the length, the port or the offload verdict disturbed) give the
 * same verdict, metadata and counters with and without the fast path.
 */
static void
test_fast_vs_full(void **state)
{
	static const uint64_t ol[] = { 0, RTE_MBUF_F_RX_IP_CKSUM_GOOD, RTE_MBUF_F_RX_IP_CKSUM_BAD,
				       RTE_MBUF_F_RX_IP_CKSUM_NONE };
	static struct frame f;
	uint64_t r = 0x2545f4914f6cdd1dull, fast0 = pf_test_ctr(rx, "ip4_bad_checksum");
	unsigned int it, hits[5] = { 0 };
	uint8_t *ip;
	char what[64];
	uint16_t port, e;

	for (it = 0; it < 20000; it++) {
		uint32_t v = xorshift(&r);

		ip = ipv4(&f, (v & 7) == 0 ? (int)(v >> 20 & 0xffff) : -1, 5 + (v >> 3 & 3) / 3,
			  (uint16_t)(26 + (v >> 5 & 63)));
		if (v & 0x800)
			memcpy(f.b, mac_p1, 6);
		if (v & 0x1000)
			f.b[0] |= 1;
		if (v >> 31) {
			/* Sources ending in 0x00, some all zero: the fast path's zero test. */
			uint32_t w = xorshift(&r);

			f.b[11] = 0;
			if ((w & 3) == 0)
				memset(f.b + 6, 0, 6);
			else if ((w & 3) == 1)
				f.b[6 + (w >> 2) % 5] = (uint8_t)(w >> 8) & 0xfe;
		}
		port = disturb(&f, &r, v, 40);
		if ((v >> 16 & 7) == 0)
			ipv4_recsum(ip);          /* a disturbed header that still sums right */
		next_ol_flags = ol[v >> 29 & 3];
		next_headroom = rooms[it & 3];
		snprintf(what, sizeof(what), "differential %u", it);
		e = same_as_full(&f, port, what);
		hits[e]++;
	}
	next_ol_flags = 0;
	next_headroom = RTE_PKTMBUF_HEADROOM;
	/* The corpus reaches the fast path, the full parser and the drops. */
	assert_true(hits[E_IPV4] > 2000 && hits[E_DROP] > 2000 && hits[E_OTHER] > 0);
	assert_true(pf_test_ctr(rx, "ip4_bad_checksum") > fast0);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

/*
 * Frames on each side of the fast path's test, one field at a time: each must
 * get the full parser's verdict (one() runs same_as_full on every case).
 */
static void
test_fast_boundaries(void **state)
{
	struct rte_mbuf *m;
	struct frame f;
	uint8_t *ip;

	/* IPv4: the common frame, then each condition of the test broken alone. */
	ipv4(&f, -1, 5, 26);
	m = one(rx, &f, 0, E_IPV4, NONE, "ipv4 60 bytes");
	assert_int_equal(pf_meta(m)->l3_len, 20);
	assert_int_equal(pf_meta(m)->l4_proto, 17);
	rte_pktmbuf_free(m);
	ipv4(&f, -1, 5, 25);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, D({ "rx_runt", 1 }), "ipv4 59 bytes"));
	ipv4(&f, -1, 6, 100);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, D({ "ip4_options_seen", 1 }), "ihl 6"));
	ip = ipv4(&f, -1, 5, 100);
	ip[6] = 0x20;                      /* MF */
	ipv4_recsum(ip);
	m = one(rx, &f, 0, E_IPV4, NONE, "mf set");
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_FRAG);
	rte_pktmbuf_free(m);
	ip = ipv4(&f, -1, 5, 100);
	ip[7] = 1;                         /* offset 8 */
	ipv4_recsum(ip);
	m = one(rx, &f, 0, E_IPV4, NONE, "frag offset set");
	assert_int_equal(pf_meta(m)->flags, PF_META_IP_FRAG | PF_META_IP_NONFIRST);
	rte_pktmbuf_free(m);
	ip = ipv4(&f, -1, 5, 100);
	ip[6] = 0x40;                      /* DF: still the fast path's frame */
	ip[8] = 1;                         /* TTL 1: lpm's business, not rx's */
	ipv4_recsum(ip);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, NONE, "df, ttl 1"));
	ip = ipv4(&f, -1, 5, 100);
	ip[11] ^= 1;
	drop_case(&f, 0, D({ "ip4_bad_checksum", 1 }), "checksum off by one");
	ip = ipv4(&f, -1, 5, 100);
	f.len = (uint16_t)(f.len + 1);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV4, D({ "ip4_trailer_trimmed", 1 }), "one byte pad"));
	ipv4(&f, -1, 5, 100);
	f.len = (uint16_t)(f.len - 1);
	drop_case(&f, 0, D({ "ip4_bad_length", 1 }), "one byte short");

	/* IPv6: the common frame, then each condition broken alone. */
	ip = ipv6(&f, -1, 6);
	m = one(rx, &f, 0, E_IPV6, NONE, "ipv6 60 bytes");
	assert_int_equal(pf_meta(m)->l3_len, 40);
	assert_int_equal(pf_meta(m)->l4_proto, 17);
	assert_int_equal(pf_meta(m)->cls, PF_CLASS_IPV6);
	rte_pktmbuf_free(m);
	ipv6(&f, -1, 5);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV6, D({ "rx_runt", 1 }), "ipv6 59 bytes"));
	ip = ipv6(&f, -1, 26);
	ip[6] = 58;
	ip[7] = 1;                         /* hop limit 1: lpm6's business */
	m = one(rx, &f, 0, E_IPV6, NONE, "icmpv6, hop limit 1");
	assert_int_equal(pf_meta(m)->l4_proto, 58);
	rte_pktmbuf_free(m);
	ip = ipv6(&f, -1, 26);
	ip[6] = 59;                        /* No Next Header: not walked */
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV6, NONE, "no next header"));
	ipv6_chain(&f, (const uint8_t[]){ 0 }, (const uint16_t[]){ 8 }, 1, 17, 8);
	m = one(rx, &f, 0, E_IPV6, D({ "ip6_ext_seen", 1 }), "hbh");
	assert_int_equal(pf_meta(m)->l3_len, 48);
	rte_pktmbuf_free(m);
	ipv6_chain(&f, (const uint8_t[]){ 44 }, (const uint16_t[]){ 8 }, 1, 17, 8);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV6, D({ "ip6_ext_seen", 1 }), "atomic fragment"));
	ip = ipv6(&f, -1, 26);
	ip[0] = 0x70;
	drop_case(&f, 0, D({ "ip6_bad_version", 1 }), "ipv6 version 7");
	ipv6(&f, -1, 26);
	f.len = (uint16_t)(f.len - 1);
	drop_case(&f, 0, D({ "ip6_bad_length", 1 }), "ipv6 truncated by one");
	ipv6(&f, -1, 26);
	f.len = (uint16_t)(f.len + 1);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV6, D({ "ip6_trailer_trimmed", 1 }), "ipv6 pad"));
	ipv6(&f, 0, 26);
	rte_pktmbuf_free(one(rx, &f, 0, E_IPV6, D({ "vlan_tagged", 1 }), "ipv6 vid 0"));
	ipv6(&f, -1, 26);
	f.b[0] = 0x33;
	m = one(rx, &f, 0, E_IPV6, NONE, "ipv6 multicast destination");
	assert_int_equal(pf_meta(m)->flags, PF_META_L2_MCAST);
	rte_pktmbuf_free(m);
	ipv6(&f, -1, 26);
	memset(f.b + 6, 0, 6);
	drop_case(&f, 0, D({ "l2_invalid_src_mac", 1 }), "ipv6 zero source");
	ipv6(&f, -1, 26);
	memcpy(f.b + 6, mac_p1, 6);
	drop_case(&f, 0, D({ "l2_src_is_own_mac", 1 }), "ipv6 own source");
	ipv6(&f, -1, 9000);
	drop_case(&f, 0, D({ "eth_oversize", 1 }), "ipv6 over p0's max_frame");
	ipv6(&f, -1, 8960);
	rte_pktmbuf_free(one(rx, &f, 1, E_IPV6, NONE, "ipv6 jumbo on p1"));
}

/*
 * Differential, IPv6: frames near the fast path's edge (good IPv6 with or
 * without extension headers, then bytes, the length or the port disturbed)
 * give the same verdict, metadata and counters with and without it.
 */
static void
test_fast6_vs_full(void **state)
{
	static const uint8_t nhs[] = { 17, 6, 58, 59, 0, 43, 44, 60, 50 };
	static struct frame f;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	unsigned int it, hits[6] = { 0 };
	uint8_t *ip;
	char what[64];
	uint16_t port, e;

	for (it = 0; it < 20000; it++) {
		uint32_t v = xorshift(&r);
		uint8_t nh = nhs[(v >> 3) % RTE_DIM(nhs)];

		if (nh == 0 || nh == 43 || nh == 44 || nh == 60)
			ip = ipv6_chain(&f, &nh, (const uint16_t[]){ 8 }, 1, 17,
					(uint16_t)(8 + (v >> 8 & 31)));
		else
			ip = ipv6(&f, (v & 7) == 0 ? (int)(v >> 20 & 0xfff) : -1,
				  (uint16_t)(6 + (v >> 8 & 63)));
		if (nh == 44)
			ip[42] = (uint8_t)(v >> 14 & 1);         /* M or atomic */
		else if (nh != 0 && nh != 43 && nh != 60)
			ip[6] = nh;
		if (v & 0x800)
			memcpy(f.b, mac_p1, 6);
		if (v & 0x1000)
			f.b[0] |= 1;
		if (v >> 31) {
			f.b[11] = 0;
			if ((v >> 29 & 3) == 0)
				memset(f.b + 6, 0, 6);
		}
		port = disturb(&f, &r, v, 56);
		next_headroom = rooms[it & 3];
		snprintf(what, sizeof(what), "differential6 %u", it);
		e = same_as_full(&f, port, what);
		hits[e]++;
	}
	next_headroom = RTE_PKTMBUF_HEADROOM;
	/* The corpus reaches the fast path, the full parser and the drops. */
	print_message("ipv6 %u, drop %u, ip6_error %u\n", hits[E_IPV6], hits[E_DROP],
		      hits[E_IP6_ERROR]);
	assert_true(hits[E_IPV6] > 2000 && hits[E_DROP] > 2000);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

/* ---- bursts ------------------------------------------------------------- */

/* Frame kind @p k of a rotating mix; returns its edge and adds its deltas. */
static uint16_t
mix_frame(unsigned int k, struct frame *f, uint64_t *want)
{
	uint8_t *ip;

	switch (k % 8) {
	case 0:
		ipv4(f, -1, 5, 100);
		return E_IPV4;
	case 1:
		ipv6(f, -1, 60);
		return E_IPV6;
	case 2:
		arp(f, -1, 46);
		return E_ARP;
	case 3:
		eth(f, 0x88b5, -1);
		f->len = 64;
		return E_OTHER;
	case 4:
		ip = ipv4(f, -1, 5, 100);
		ip[10] ^= 0xff;
		want[0]++;                /* ip4_bad_checksum */
		return E_DROP;
	case 5:
		ipv4(f, 200, 5, 100);
		want[1]++;                /* vlan_tagged */
		return E_IPV4;
	case 6:
		ipv4(f, -1, 5, 0);
		f->len = 20;
		want[2]++;                /* ip4_too_short (a dropped runt is not rx_runt) */
		return E_DROP;
	default:
		ipv4(f, -1, 5, 100);
		f->len = 10;
		want[4]++;                /* eth_truncated */
		return E_DROP;
	}
}

static void
test_bursts(void **state)
{
	static const uint16_t sizes[] = { 0, 1, 3, 4, 5, 31, 32, 33, 64 };
	struct rte_mbuf *pkts[64];
	uint16_t edge[65], want_edge[64], i;
	uint64_t before[MAX_CTRS];
	static struct frame f;
	size_t s;
	unsigned int rot;

	for (s = 0; s < RTE_DIM(sizes); s++)
		for (rot = 0; rot < 8; rot++) {
			uint16_t n = sizes[s];
			uint64_t w[5] = { 0 };
			char what[64];

			if (n == 0 && rot > 0)
				break;
			for (i = 0; i < n; i++) {
				want_edge[i] = mix_frame(i + rot, &f, w);
				/* Now and then another headroom, first frame or not. */
				next_headroom = (i + rot) % 7 == 5 ? 0 : RTE_PKTMBUF_HEADROOM;
				pkts[i] = guard_mbuf(f.b, f.len, 0);
			}
			next_headroom = RTE_PKTMBUF_HEADROOM;
			edge[n] = 0xbeef;
			snap(rx, before);
			pf_test_process(rx, pkts, n, edge);
			snprintf(what, sizeof(what), "burst of %u, rotation %u", n, rot);
			for (i = 0; i < n; i++)
				if (edge[i] != want_edge[i])
					fail_msg("%s: packet %u edge %u, want %u", what, i, edge[i],
						 want_edge[i]);
			assert_int_equal(edge[n], 0xbeef);
			check_deltas(rx, before,
				     D({ "ip4_bad_checksum", w[0] }, { "vlan_tagged", w[1] },
				       { "ip4_too_short", w[2] }, { "rx_runt", w[3] },
				       { "eth_truncated", w[4] }),
				     what);
			pf_test_free(pkts, n);
		}
	/* Nothing leaked: every guard mbuf went back to the pool. */
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

/*
 * The fast path takes its port's constants from a burst's first frame: a
 * frame from the other port still gets its own in_port, MAC test and
 * max_frame (by its own lookup), and the in-port hint is given only when
 * every frame came from the first one's port.
 */
static void
test_burst_ports(void **state)
{
	static const char *const patterns[] = {
		"00000000000000000000000000000000", "11111111111111111111111111111111",
		"00000000000000001111111111111111", "10101010101010101010101010101010",
		"01111111111111111111111111111111", "11111111111111111111111111111110", "0", "1",
	};
	struct rte_mbuf *pkts[32];
	uint16_t edge[32], i, n;
	static struct frame f;
	size_t k;

	for (k = 0; k < RTE_DIM(patterns); k++) {
		const char *pat = patterns[k];
		bool one_port = true;

		n = (uint16_t)strlen(pat);
		for (i = 0; i < n; i++) {
			uint16_t port = (uint16_t)(pat[i] - '0');

			ipv4(&f, -1, 5, 100);
			if (i % 3 == 0)
				memcpy(f.b, mac_p1, 6);   /* local only when it arrives on p1 */
			pkts[i] = guard_mbuf(f.b, f.len, port);
			pf_meta(pkts[i])->in_port = (uint16_t)(1 - port);   /* stale */
			one_port = one_port && pat[i] == pat[0];
		}
		pf_test_process(rx, pkts, n, edge);
		for (i = 0; i < n; i++) {
			uint16_t port = (uint16_t)(pat[i] - '0');

			assert_int_equal(edge[i], E_IPV4);
			assert_int_equal(pf_meta(pkts[i])->in_port, port);
			assert_int_equal(pf_meta(pkts[i])->flags,
					 port == 1 && i % 3 == 0 ? PF_META_L2_LOCAL : 0);
		}
		assert_int_equal(rx->in_burst_in_port,
				 one_port ? PF_BURST_PORT(pat[0] - '0') : 0);
		pf_test_free(pkts, n);
	}
	/* A frame over p0's max_frame (1518) but within p1's (9018), after p1 frames. */
	ipv4(&f, -1, 5, 100);
	pkts[0] = guard_mbuf(f.b, f.len, 1);
	ipv4(&f, -1, 5, 2000);
	pkts[1] = guard_mbuf(f.b, f.len, 1);
	pkts[2] = guard_mbuf(f.b, f.len, 0);
	pf_test_process(rx, pkts, 3, edge);
	assert_int_equal(edge[0], E_IPV4);
	assert_int_equal(edge[1], E_IPV4);
	assert_int_equal(edge[2], E_DROP);    /* eth_oversize on p0 */
	pf_test_free(pkts, 3);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eth_truncated),
		cmocka_unit_test(test_src_mac),
		cmocka_unit_test(test_vlan_bad),
		cmocka_unit_test(test_llc_length),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_multiseg),
		cmocka_unit_test(test_ip4_malformed),
		cmocka_unit_test(test_ip4_checksum),
		cmocka_unit_test(test_ip6_arp_malformed),
		cmocka_unit_test(test_ip6_ext),
		cmocka_unit_test(test_classify_good),
		cmocka_unit_test(test_meta_reset),
		cmocka_unit_test(test_padding_trimmed),
		cmocka_unit_test(test_unwired_class),
		cmocka_unit_test(test_ipv6_only),
		cmocka_unit_test(test_burst_ports),
		cmocka_unit_test(test_in_port_from_mbuf),
		cmocka_unit_test(test_l2_local),
		cmocka_unit_test(test_cksum_offload),
		cmocka_unit_test(test_fast_vs_full),
		cmocka_unit_test(test_fast_boundaries),
		cmocka_unit_test(test_fast6_vs_full),
		cmocka_unit_test(test_bursts),
	};

	return cmocka_run_group_tests_name("rx", tests, setup, teardown);
}
