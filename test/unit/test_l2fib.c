/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fib: every forwarding rule on hand-built frames, bursts checked packet by
 * packet against a serial reference bridge, aging on a driven clock, a full
 * table, domains and VLANs, static entries, configuration errors.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_test.h"

#define P0 0
#define P1 1
#define P2 2
#define P3 3
#define PORTS(m) ((uint32_t)(m))
#define OUT 1

static const char *const topo_head =
	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"  p1: { device: net_null1 }\n"
	"  p2: { device: net_null2 }\n"
	"  p3: { device: net_null3 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1, p2, p3], next: l2 }\n"
	"  tx: { type: tx, ports: [p0, p1, p2, p3] }\n"
	"lcores:\n"
	"  1: [rx, l2, tx]\n";

static struct pf_topo *topo;

/* Build the stage from "  l2: {...}\n" appended to the common topology. */
static struct pf_stage *
mk_stage(const char *l2_line)
{
	char yaml[4096];
	const char *cut = strstr(topo_head, "  tx:");

	snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(cut - topo_head), topo_head, l2_line, cut);
	return pf_test_stage(yaml, "l2", &topo);
}

static void
rm_stage(struct pf_stage *st)
{
	pf_stage_destroy(st);
	pf_topo_free(topo);
	topo = NULL;
}

static void
mac_n(uint8_t *mac, uint32_t n)
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

static const uint8_t *
mac_n_ret(uint8_t *mac, uint32_t n)
{
	mac_n(mac, n);
	return mac;
}

/* A 60-byte frame as rx leaves it (metadata filled, VLAN tag parsed). */
static struct rte_mbuf *
frame_b(const uint8_t *dst, const uint8_t *src, uint16_t port, uint16_t tci)
{
	uint8_t b[60] = { 0 };
	struct rte_mbuf *m;
	struct pf_meta *md;

	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	if (tci != 0) {
		b[12] = 0x81;
		b[14] = (uint8_t)(tci >> 8);
		b[15] = (uint8_t)tci;
		b[16] = 0x08;
	} else {
		b[12] = 0x08;
	}
	m = pf_test_mbuf(b, sizeof(b), port);
	md = pf_meta(m);
	md->vlan_tci = tci;
	md->l2_len = tci != 0 ? 18 : 14;
	if ((tci & 0xfff) != 0)
		md->flags |= PF_META_VLAN;
	if (dst[0] & 1)
		md->flags |= PF_META_L2_MCAST;
	return m;
}

static struct rte_mbuf *
frame(const char *dst, const char *src, uint16_t port, uint16_t tci)
{
	uint8_t d[6], s[6];

	assert_true(pf_parse_mac(dst, d));
	assert_true(pf_parse_mac(src, s));
	return frame_b(d, s, port, tci);
}

/* Run one packet; return its edge and leave out_port/flood_mask in *md. */
static uint16_t
run1(struct pf_stage *st, struct rte_mbuf *m, struct pf_meta *md)
{
	uint16_t edge;

	pf_test_process(st, &m, 1, &edge);
	*md = *pf_meta(m);
	pf_test_free(&m, 1);
	return edge;
}

static void
expect_out(struct pf_stage *st, struct rte_mbuf *m, uint16_t port)
{
	struct pf_meta md;

	assert_int_equal(run1(st, m, &md), OUT);
	assert_int_equal(md.out_port, port);
}

static void
expect_flood(struct pf_stage *st, struct rte_mbuf *m, uint32_t mask)
{
	struct pf_meta md;

	assert_int_equal(run1(st, m, &md), OUT);
	assert_int_equal(md.out_port, PF_PORT_FLOOD);
	assert_int_equal(md.flood_mask, mask);
}

static void
expect_drop(struct pf_stage *st, struct rte_mbuf *m, const char *ctr)
{
	uint64_t before = pf_test_ctr(st, ctr);
	struct pf_meta md;

	assert_int_equal(run1(st, m, &md), 0);
	assert_int_equal(pf_test_ctr(st, ctr), before + 1);
}

static uint64_t
gauge(const struct pf_stage *st, const char *name)
{
	struct pf_gauge g[64];
	uint16_t n = pf_stage_gauges(st, g, 64), i;

	for (i = 0; i < n; i++)
		if (strcmp(g[i].name, name) == 0)
			return g[i].value;
	fail_msg("no gauge %s", name);
	return 0;
}

#define A "02:00:00:00:00:0a"
#define B "02:00:00:00:00:0b"
#define C "02:00:00:00:00:0c"
#define D "02:00:00:00:00:0d"
#define E "02:00:00:00:00:0e"
#define F "02:00:00:00:00:0f"
#define BCAST "ff:ff:ff:ff:ff:ff"

static const char *const one_domain = "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx }\n";

static void
test_learn_then_forward(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);

	expect_flood(st, frame(B, A, P0, 0), PORTS(0x6));     /* unknown: p1, p2 */
	assert_int_equal(pf_test_ctr(st, "learned"), 1);
	assert_int_equal(pf_test_ctr(st, "miss"), 1);
	expect_out(st, frame(A, B, P1, 0), P0);               /* A known on p0 */
	expect_out(st, frame(B, A, P0, 0), P1);               /* B learned from the reply */
	assert_int_equal(pf_test_ctr(st, "learned"), 2);
	assert_int_equal(pf_test_ctr(st, "hit"), 2);
	assert_int_equal(pf_test_ctr(st, "flooded"), 1);
	assert_int_equal(gauge(st, "entries"), 2);
	assert_int_equal(gauge(st, "entries.default"), 2);
	rm_stage(st);
}

/*
 * A burst whose every packet goes to one known port carries that port as the
 * burst-port hint (tx sends it whole; pf_test_process checks every out_port
 * against it); one that mixes ports, or floods, carries none.
 */
static void
test_burst_port_hint(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);
	struct rte_mbuf *pkts[4];
	uint16_t edge[4], i;
	uint64_t hints0;

	expect_flood(st, frame(B, A, P0, 0), PORTS(0x6));     /* A on p0 */
	expect_out(st, frame(A, C, P2, 0), P0);               /* C on p2 */
	expect_out(st, frame(C, B, P1, 0), P2);               /* B on p1 */
	/* Four from p1 to A (p0): one port, the hint. */
	for (i = 0; i < 4; i++)
		pkts[i] = frame(A, B, P1, 0);
	hints0 = pf_test_hints;
	pf_test_process(st, pkts, 4, edge);
	assert_int_equal(pf_test_hints, hints0 + 1);
	pf_test_free(pkts, 4);
	/* To A (p0) and to C (p2): no hint. */
	for (i = 0; i < 4; i++)
		pkts[i] = frame(i & 1 ? C : A, B, P1, 0);
	hints0 = pf_test_hints;
	pf_test_process(st, pkts, 4, edge);
	assert_int_equal(pf_test_hints, hints0);
	for (i = 0; i < 4; i++)
		assert_int_equal(pf_meta(pkts[i])->out_port, i & 1 ? P2 : P0);
	pf_test_free(pkts, 4);
	/* One of them unknown (flooded): no hint. */
	for (i = 0; i < 4; i++)
		pkts[i] = frame(i == 3 ? D : A, B, P1, 0);
	hints0 = pf_test_hints;
	pf_test_process(st, pkts, 4, edge);
	assert_int_equal(pf_test_hints, hints0);
	assert_int_equal(pf_meta(pkts[3])->out_port, PF_PORT_FLOOD);
	pf_test_free(pkts, 4);
	rm_stage(st);
}

static void
test_flood_bcast_mcast(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);

	expect_flood(st, frame(BCAST, A, P1, 0), PORTS(0x5));
	expect_flood(st, frame("01:00:5e:00:00:01", A, P1, 0), PORTS(0x5));
	expect_flood(st, frame("33:33:00:00:00:01", B, P2, 0), PORTS(0x3));
	/* 01:80:c2:00:00:10 is outside the reserved block: an ordinary group. */
	expect_flood(st, frame("01:80:c2:00:00:10", B, P2, 0), PORTS(0x3));
	assert_int_equal(pf_test_ctr(st, "flooded"), 4);
	assert_int_equal(pf_test_ctr(st, "miss"), 0);
	assert_int_equal(pf_test_ctr(st, "learned"), 2);
	rm_stage(st);
}

static void
test_same_port_drop(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);

	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));
	expect_drop(st, frame(A, B, P0, 0), "l2_same_port");
	assert_int_equal(pf_test_ctr(st, "learned"), 2);   /* learned before filtering */
	rm_stage(st);
}

static void
test_reserved_dst(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);

	expect_drop(st, frame("01:80:c2:00:00:00", A, P0, 0), "l2_reserved_dst");
	expect_drop(st, frame("01:80:c2:00:00:02", A, P0, 0), "l2_reserved_dst");
	expect_drop(st, frame("01:80:c2:00:00:0e", A, P0, 0), "l2_reserved_dst");
	expect_drop(st, frame("01:80:c2:00:00:0f", A, P0, 0), "l2_reserved_dst");
	assert_int_equal(pf_test_ctr(st, "learned"), 0);   /* link-local frames teach nothing */
	rm_stage(st);
}

static void
test_invalid_src(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);

	expect_drop(st, frame(B, "00:00:00:00:00:00", P0, 0), "l2_invalid_src_mac");
	expect_drop(st, frame(B, BCAST, P0, 0), "l2_invalid_src_mac");
	expect_drop(st, frame(B, "01:00:5e:00:00:01", P0, 0), "l2_invalid_src_mac");
	assert_int_equal(pf_test_ctr(st, "learned"), 0);
	assert_int_equal(gauge(st, "entries"), 0);
	rm_stage(st);
}

static void
test_flood_empty(void **state)
{
	struct pf_stage *st = mk_stage("  l2: { type: l2fib, ports: [p0], next: tx }\n");

	expect_drop(st, frame(BCAST, A, P0, 0), "l2_flood_empty");
	rm_stage(st);
}

static void
test_station_move(void **state)
{
	struct pf_stage *st = mk_stage(one_domain);

	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));
	expect_out(st, frame(A, C, P2, 0), P0);
	expect_flood(st, frame(BCAST, A, P1, 0), PORTS(0x5));   /* A moved to p1 */
	assert_int_equal(pf_test_ctr(st, "mac_move"), 1);
	assert_int_equal(pf_test_ctr(st, "learned"), 2);
	expect_out(st, frame(A, C, P2, 0), P1);
	expect_drop(st, frame(A, B, P1, 0), "l2_same_port");
	assert_int_equal(gauge(st, "entries"), 3);
	rm_stage(st);
}

static void
test_static_precedence(void **state)
{
	char path[] = "/tmp/l2fib_static_XXXXXX", line[512];
	struct pf_stage *st;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	dprintf(fd, "# static MACs\n\n" C " p2   # printer\n");
	close(fd);
	snprintf(line, sizeof(line),
		 "  l2: { type: l2fib, ports: [p0, p1, p2], age_s: 10, next: tx,\n"
		 "        static: [ { mac: \"" A "\", port: p1 } ] }\n");
	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(1000ull * 1000000000ull);
	st = mk_stage(line);
	assert_int_equal(gauge(st, "entries_static"), 1);
	expect_out(st, frame(A, B, P0, 0), P1);
	/* A shows up on p0: not learned, not moved; the static entry wins. */
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));
	assert_int_equal(pf_test_ctr(st, "static_src_mismatch"), 1);
	assert_int_equal(pf_test_ctr(st, "mac_move"), 0);
	assert_int_equal(pf_test_ctr(st, "learned"), 1);
	expect_out(st, frame(A, B, P0, 0), P1);
	/* Static entries never age. */
	pf_clock_advance_ns(5000ull * 1000000000ull);
	st->ops->dp.idle(st, pf_now_ns());
	expect_out(st, frame(A, B, P2, 0), P1);
	assert_int_equal(pf_test_ctr(st, "aged"), 1);   /* only B, learned above */
	rm_stage(st);

	/* The same from a file. */
	snprintf(line, sizeof(line),
		 "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx, static: %s }\n", path);
	st = mk_stage(line);
	expect_out(st, frame(C, B, P0, 0), P2);
	expect_out(st, frame(B, C, P1, 0), P0);
	assert_int_equal(pf_test_ctr(st, "static_src_mismatch"), 1);
	expect_out(st, frame(C, B, P0, 0), P2);
	assert_int_equal(gauge(st, "entries"), 2);
	rm_stage(st);
	unlink(path);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

static void
test_aging(void **state)
{
	const uint64_t s = 1000000000ull;
	struct pf_stage *st;

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(100 * s);
	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1, p2], age_s: 30, table_size: 8, next: tx }\n");
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));
	pf_clock_advance_ns(129 * s);
	expect_out(st, frame(A, B, P1, 0), P0);               /* 29 s: still there */
	pf_clock_advance_ns(130 * s);
	st->ops->dp.idle(st, pf_now_ns());                       /* 30 s: aged by the sweep */
	assert_int_equal(pf_test_ctr(st, "aged"), 1);
	assert_int_equal(gauge(st, "entries"), 1);            /* B (seen at 129) */
	expect_flood(st, frame(A, B, P1, 0), PORTS(0x5));
	assert_int_equal(pf_test_ctr(st, "miss"), 1);

	/* Bursts never sweep (bounded, lock-free work only); housekeeping does,
	 * on a loaded lcore that never idles too: B ages while traffic flows. */
	pf_clock_advance_ns(200 * s);
	expect_flood(st, frame(BCAST, C, P2, 0), PORTS(0x3));
	assert_int_equal(pf_test_ctr(st, "aged"), 1);
	assert_int_equal(gauge(st, "entries"), 2);
	st->ops->dp.housekeep(st, pf_now_ns());
	assert_int_equal(pf_test_ctr(st, "aged"), 2);
	assert_int_equal(gauge(st, "entries"), 1);

	rm_stage(st);

	/*
	 * Expired but not swept yet (a big table: the sweep is elsewhere): a lookup
	 * treats it as gone, and its source coming back counts aged + learned.
	 */
	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1, p2], age_s: 30, next: tx }\n");
	expect_flood(st, frame(BCAST, C, P2, 0), PORTS(0x3));
	pf_clock_advance_ns(400 * s);
	expect_flood(st, frame(C, A, P0, 0), PORTS(0x6));     /* C expired: miss */
	assert_int_equal(pf_test_ctr(st, "aged"), 0);
	expect_flood(st, frame(BCAST, C, P1, 0), PORTS(0x5)); /* C back, on p1 */
	assert_int_equal(pf_test_ctr(st, "mac_move"), 0);
	assert_int_equal(pf_test_ctr(st, "aged"), 1);
	assert_int_equal(pf_test_ctr(st, "learned"), 3);
	expect_out(st, frame(C, A, P0, 0), P1);
	assert_int_equal(gauge(st, "entries"), 2);
	rm_stage(st);

	/* age_s 0: nothing ever ages. */
	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1], age_s: 0, next: tx }\n");
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x2));
	pf_clock_advance_ns(1000000 * s);
	st->ops->dp.idle(st, pf_now_ns());
	expect_out(st, frame(A, B, P1, 0), P0);
	assert_int_equal(pf_test_ctr(st, "aged"), 0);
	rm_stage(st);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

static void
test_table_full(void **state)
{
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, ports: [p0, p1, p2], table_size: 4, next: tx }\n");
	uint8_t mac[6], dst[6];
	uint32_t i;

	mac_n(dst, 0xffff);
	for (i = 1; i <= 6; i++) {
		mac_n(mac, i);
		expect_flood(st, frame_b(dst, mac, P0, 0), PORTS(0x6));   /* still flooded */
	}
	assert_int_equal(pf_test_ctr(st, "learned"), 4);
	assert_int_equal(pf_test_ctr(st, "fib_full"), 2);
	assert_int_equal(pf_test_ctr(st, "l2_learn_nospace"), 0);
	assert_int_equal(gauge(st, "entries"), 4);
	mac_n(mac, 0xfffe);
	mac_n(dst, 1);
	expect_out(st, frame_b(dst, mac, P1, 0), P0);   /* known MACs still switched */
	mac_n(dst, 5);
	expect_flood(st, frame_b(dst, mac, P1, 0), PORTS(0x5));
	assert_int_equal(pf_test_ctr(st, "fib_full"), 4);   /* p1's source twice */
	st->ops->dp.idle(st, pf_now_ns());   /* logs the rate-limited warning */
	rm_stage(st);
}

static void
test_port_learn_limit(void **state)
{
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, ports: [p0, p1, p2], port_learn_limit: 2, next: tx }\n");

	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, B, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	assert_int_equal(pf_test_ctr(st, "port_learn_limit"), 1);
	assert_int_equal(pf_test_ctr(st, "learned"), 2);
	expect_flood(st, frame(C, E, P1, 0), PORTS(0x5));       /* C unknown */
	expect_flood(st, frame(BCAST, B, P1, 0), PORTS(0x5));   /* B moves to p1 */
	assert_int_equal(pf_test_ctr(st, "mac_move"), 1);
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));   /* room on p0 again */
	assert_int_equal(pf_test_ctr(st, "learned"), 4);
	expect_out(st, frame(B, C, P0, 0), P1);                 /* B on p1 */
	/* p1 is full (E, B): A cannot move there, and is forgotten rather than misdirected. */
	expect_flood(st, frame(BCAST, A, P1, 0), PORTS(0x5));
	assert_int_equal(pf_test_ctr(st, "port_learn_limit"), 2);
	expect_flood(st, frame(A, C, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));   /* relearned on p0 */
	expect_out(st, frame(A, C, P2, 0), P0);
	assert_int_equal(pf_test_ctr(st, "learned"), 5);
	assert_int_equal(gauge(st, "entries"), 4);
	rm_stage(st);
}

static void
test_two_domains(void **state)
{
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, next: tx, domains: { red: { ports: [p0, p1] },\n"
		"                                          blue: { ports: [p2, p3] } } }\n");

	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x2));
	expect_flood(st, frame(BCAST, A, P2, 0), PORTS(0x8));   /* same MAC, other domain */
	assert_int_equal(pf_test_ctr(st, "mac_move"), 0);
	assert_int_equal(pf_test_ctr(st, "learned"), 2);
	expect_out(st, frame(A, B, P1, 0), P0);
	/* B is known in red only: blue floods it within blue. */
	expect_flood(st, frame(B, C, P2, 0), PORTS(0x8));
	assert_int_equal(gauge(st, "entries.red"), 2);
	assert_int_equal(gauge(st, "entries.blue"), 2);
	rm_stage(st);
}

static void
test_vlan_domain(void **state)
{
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, next: tx, domains: { lan: { ports: [p0, p1] },\n"
		"        v10: { ports: [p0, p2, p3], vlan: 10 } } }\n");
	struct rte_mbuf *m;
	struct pf_meta md;

	expect_flood(st, frame(BCAST, A, P0, 10), PORTS(0xc));
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x2));
	expect_flood(st, frame(BCAST, A, P0, 0x2000), PORTS(0x2));  /* VID 0: priority tag */
	expect_drop(st, frame(BCAST, A, P0, 20), "l2_no_domain");
	expect_drop(st, frame(BCAST, A, P1, 10), "l2_no_domain");
	expect_drop(st, frame(BCAST, A, P2, 0), "l2_no_domain");
	expect_out(st, frame(A, B, P3, 0x200a), P0);                /* PCP bits ignored */
	expect_out(st, frame(A, B, P1, 0), P0);
	expect_out(st, frame(B, C, P0, 10), P3);
	expect_flood(st, frame(BCAST, D, P2, 10), PORTS(0x9));
	m = frame(D, C, P0, 0);   /* D is known in v10 only */
	assert_int_equal(run1(st, m, &md), OUT);
	assert_int_equal(md.out_port, PF_PORT_FLOOD);
	assert_int_equal(md.flood_mask, PORTS(0x2));
	assert_int_equal(md.bd, 0);
	assert_int_equal(gauge(st, "entries.v10"), 4);
	assert_int_equal(gauge(st, "entries.lan"), 3);
	rm_stage(st);
}

/* A serial reference bridge: one domain p0..p3, no aging, no limits. */
struct ref {
	uint32_t n;
	uint32_t mac[256];
	uint16_t port[256];
	uint64_t learned, moved, hit, miss, flooded, same;
};

static uint16_t
ref_step(struct ref *r, uint32_t src, uint32_t dst, uint16_t in, uint16_t *out, uint32_t *mask)
{
	uint32_t i;

	for (i = 0; i < r->n && r->mac[i] != src; i++)
		;
	if (i == r->n) {
		r->mac[r->n] = src;
		r->port[r->n++] = in;
		r->learned++;
	} else if (r->port[i] != in) {
		r->port[i] = in;
		r->moved++;
	}
	*mask = 0;
	if (dst == 0xffffffff) {
		r->flooded++;
		*out = PF_PORT_FLOOD;
		*mask = 0xfu & ~(1u << in);
		return OUT;
	}
	for (i = 0; i < r->n && r->mac[i] != dst; i++)
		;
	if (i < r->n) {
		if (r->port[i] == in) {
			r->same++;
			return 0;
		}
		r->hit++;
		*out = r->port[i];
		return OUT;
	}
	r->miss++;
	r->flooded++;
	*out = PF_PORT_FLOOD;
	*mask = 0xfu & ~(1u << in);
	return OUT;
}

/*
 * Bursts of every interesting size where most packets share a source MAC:
 * learning inside a burst must be seen by the later packets of that burst.
 */
static void
test_bursts_vs_reference(void **state)
{
	static const uint16_t sizes[] = { 0, 1, 3, 4, 5, 31, 32, 33, 64, 100 };
	struct rte_mbuf *pkts[128];
	uint16_t edge[128], out[128], ref_edge[128];
	uint32_t mask[128];
	uint8_t smac[6], dmac[6];
	unsigned int seed = 7, k, r_i;
	uint16_t i, n;
	struct ref ref;

	for (k = 0; k < RTE_DIM(sizes); k++) {
		struct pf_stage *st = mk_stage(
			"  l2: { type: l2fib, ports: [p0, p1, p2, p3], next: tx }\n");

		memset(&ref, 0, sizeof(ref));
		for (r_i = 0; r_i < 40; r_i++) {
			n = sizes[k];
			for (i = 0; i < n; i++) {
				/* 3 of 4 packets from station 1; stations live on port s % 4,
				 * except that station 1 wanders every 10 bursts. */
				uint32_t s = (rand_r(&seed) % 4) ? 1u : 1u + (uint32_t)rand_r(&seed) % 12;
				uint32_t d = rand_r(&seed) % 8 == 0 ? 0xffffffff :
									 1u + (uint32_t)rand_r(&seed) % 16;
				uint16_t port = s == 1 ? (uint16_t)((r_i / 10) % 4) :
							 (uint16_t)(s % 4);

				mac_n(smac, s);
				if (d == 0xffffffff)
					memset(dmac, 0xff, 6);
				else
					mac_n(dmac, d);
				pkts[i] = frame_b(dmac, smac, port, 0);
				ref_edge[i] = ref_step(&ref, s, d, port, &out[i], &mask[i]);
			}
			pf_test_process(st, pkts, n, edge);
			for (i = 0; i < n; i++) {
				assert_int_equal(edge[i], ref_edge[i]);
				if (edge[i] == OUT) {
					assert_int_equal(pf_meta(pkts[i])->out_port, out[i]);
					if (out[i] == PF_PORT_FLOOD)
						assert_int_equal(pf_meta(pkts[i])->flood_mask,
								 mask[i]);
				}
			}
			pf_test_free(pkts, n);
		}
		assert_int_equal(pf_test_ctr(st, "learned"), ref.learned);
		assert_int_equal(pf_test_ctr(st, "mac_move"), ref.moved);
		assert_int_equal(pf_test_ctr(st, "hit"), ref.hit);
		assert_int_equal(pf_test_ctr(st, "miss"), ref.miss);
		assert_int_equal(pf_test_ctr(st, "flooded"), ref.flooded);
		assert_int_equal(pf_test_ctr(st, "l2_same_port"), ref.same);
		assert_int_equal(gauge(st, "entries"), ref.n);
		rm_stage(st);
	}
}

/* A million stations fit a million-entry table; one more is fib_full. */
static void
test_million(void **state)
{
	const uint32_t n = 1u << 20;
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, ports: [p0, p1], table_size: 1048576, next: tx }\n");
	struct rte_mbuf *pkts[32];
	uint16_t edge[32], i;
	uint8_t d[6] = { 0x02, 0xff, 0xff, 0xff, 0xff, 0xff }, s[6];
	uint32_t k;

	mac_n(s, 0);
	for (i = 0; i < 32; i++)
		pkts[i] = frame_b(d, s, P0, 0);
	for (k = 0; k <= n; k += 32) {
		for (i = 0; i < 32; i++) {
			uint8_t *p = rte_pktmbuf_mtod(pkts[i], uint8_t *);

			mac_n(p + 6, 1 + k + i);
			pf_meta(pkts[i])->out_port = PF_PORT_NONE;
		}
		pf_test_process(st, pkts, 32, edge);
	}
	assert_int_equal(pf_test_ctr(st, "learned"), n);
	assert_int_equal(pf_test_ctr(st, "l2_learn_nospace"), 0);
	assert_int_equal(pf_test_ctr(st, "fib_full"), 32);
	assert_int_equal(gauge(st, "entries"), n);
	assert_true(gauge(st, "memory_bytes") > (uint64_t)n * 16);
	printf("l2fib: %u entries use %.1f MiB\n", n,
	       (double)gauge(st, "memory_bytes") / 1048576.0);
	/* Every station is found again. */
	for (k = 0; k < n; k += 32) {
		for (i = 0; i < 32; i++) {
			uint8_t *p = rte_pktmbuf_mtod(pkts[i], uint8_t *);

			mac_n(p, 1 + k + i);
			mac_n(p + 6, 0xffffff);
			pf_meta(pkts[i])->in_port = P1;
		}
		pf_test_process(st, pkts, 32, edge);
		for (i = 0; i < 32; i++)
			assert_int_equal(pf_meta(pkts[i])->out_port, P0);
	}
	pf_test_free(pkts, 32);
	rm_stage(st);
}

static void
expect_error(const char *l2_line, const char *msg)
{
	char yaml[4096];
	const char *cut = strstr(topo_head, "  tx:");
	struct pf_errs errs = { 0 };
	struct pf_topo *t = NULL;
	unsigned int i;

	snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(cut - topo_head), topo_head, l2_line, cut);
	assert_int_not_equal(pf_topo_load_string("bad.yaml", yaml, &t, &errs), 0);
	assert_null(t);
	for (i = 0; i < errs.n && i < PF_ERRS_MAX; i++)
		if (strstr(errs.e[i].msg, msg) != NULL)
			return;
	pf_errs_print(&errs, stderr);
	fail_msg("expected an error containing '%s'", msg);
}

static void
test_config_errors(void **state)
{
	char path[] = "/tmp/l2fib_bad_XXXXXX", line[512];
	int fd = mkstemp(path);
	struct pf_errs errs = { 0 };
	char yaml[4096];
	const char *cut = strstr(topo_head, "  tx:");
	struct pf_topo *t = NULL;

	expect_error("  l2: { type: l2fib, next: tx }\n", "exactly one of 'ports'");
	expect_error("  l2: { type: l2fib, ports: [p0], table_size: 0, next: tx }\n",
		     "table_size: value out of range");
	expect_error("  l2: { type: l2fib, ports: [p0], table_size: 99999999, next: tx }\n",
		     "table_size: value out of range");
	expect_error("  l2: { type: l2fib, ports: [p0], age_s: -1, next: tx }\n", "age_s");
	expect_error("  l2: { type: l2fib, ports: [p0, p9], next: tx }\n", "unknown port 'p9'");
	expect_error("  l2: { type: l2fib, ports: [p0], next: tx, static: [ { mac: \"01:00:5e:00:00:01\", port: p0 } ] }\n",
		     "stages.l2.static[0]: 01:00:5e:00:00:01 is a group address");
	expect_error("  l2: { type: l2fib, ports: [p0], next: tx, static: [ { mac: \"00:00:00:00:00:00\", port: p0 } ] }\n",
		     "is the zero address");
	expect_error("  l2: { type: l2fib, ports: [p0], next: tx, static: [ { mac: \"" A "\", port: p1 } ] }\n",
		     "port 'p1' is in no bridge domain");
	expect_error("  l2: { type: l2fib, ports: [p0, p1], next: tx, static: [ { mac: \"" A "\", port: p1 }, { mac: \"" A "\", port: p0 } ] }\n",
		     "duplicate entry for 02:00:00:00:00:0a");
	expect_error("  l2: { type: l2fib, ports: [p0], table_size: 1, next: tx, static: [ { mac: \"" A "\", port: p0 }, { mac: \"" B "\", port: p0 } ] }\n",
		     "2 entries exceed table_size 1");
	expect_error("  l2: { type: l2fib, next: tx, domains: { a: { ports: [p0] }, b: { ports: [p1, p0] } } }\n",
		     "stages.l2.domains.b.ports[1]: port 'p0' untagged already belongs to domain 'a'");
	expect_error("  l2: { type: l2fib, next: tx, domains: { a: { ports: [p0], vlan: 4095 } } }\n",
		     "vlan: value out of range");
	expect_error("  l2: { type: l2fib, next: tx, domains: { a: { ports: [p0], vlna: 3 } } }\n",
		     "vlna");
	expect_error("  l2: { type: l2fib, next: tx, domains: { a: { ports: [p0] }, b: { ports: [p0], vlan: 5 } }, static: [ { mac: \"" A "\", port: p0 } ] }\n",
		     "port 'p0' is in 2 domains: say which one");
	expect_error("  l2: { type: l2fib, next: tx, domains: { a: { ports: [p0] }, b: { ports: [p1] } }, static: [ { mac: \"" A "\", port: p0, domain: b } ] }\n",
		     "port 'p0' is not in domain 'b'");
	expect_error("  l2: { type: l2fib, ports: [p0], next: tx, static: /nonexistent/macs }\n",
		     "stages.l2.static: '/nonexistent/macs' cannot be opened: No such file");

	/* A bad line in a static file is reported at file:line:col. */
	assert_true(fd >= 0);
	dprintf(fd, "# ok\n" A " p0\n  " B " p7\n");
	close(fd);
	snprintf(line, sizeof(line), "  l2: { type: l2fib, ports: [p0], next: tx, static: %s }\n",
		 path);
	snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(cut - topo_head), topo_head, line, cut);
	assert_int_not_equal(pf_topo_load_string("bad.yaml", yaml, &t, &errs), 0);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.e[0].file, path);
	assert_int_equal(errs.e[0].line, 3);
	assert_int_equal(errs.e[0].col, 3);
	assert_string_equal(errs.e[0].msg, "stages.l2.static: unknown port 'p7'");
	unlink(path);
}

/* ---- live update (reload) ------------------------------------------------ */

/* Apply "  l2: {...}\n" to the running stage as a reload would; returns update()'s rc. */
static int
update_to(struct pf_stage *st, const char *l2_line, struct pf_errs *errs)
{
	char yaml[4096];
	const char *cut = strstr(topo_head, "  tx:");
	struct pf_topo *t2 = NULL;
	int rc;

	snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(cut - topo_head), topo_head, l2_line, cut);
	assert_int_equal(pf_topo_load_string("new.yaml", yaml, &t2, errs), 0);
	rc = pf_stage_update(st, &t2->stages[pf_topo_stage_index(t2, "l2")], errs);
	pf_topo_free(t2);   /* the stage keeps no pointer into the new config */
	return rc;
}

static void
test_update_statics(void **state)
{
	struct pf_errs errs = { 0 };
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, ports: [p0, p1, p2], next: tx,\n"
		"        static: [ { mac: \"" A "\", port: p1 }, { mac: \"" B "\", port: p2 } ] }\n");

	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));   /* C learned on p0 */
	expect_flood(st, frame(BCAST, D, P1, 0), PORTS(0x5));   /* D learned on p1 */
	assert_int_equal(gauge(st, "entries"), 4);
	assert_int_equal(gauge(st, "updates"), 0);

	/* A re-pointed to p2, B removed, C static on p1 (replaces the learned one), E added. */
	assert_int_equal(update_to(st,
		"  l2: { type: l2fib, ports: [p0, p1, p2], next: tx,\n"
		"        static: [ { mac: \"" A "\", port: p2 }, { mac: \"" C "\", port: p1 },\n"
		"                  { mac: \"" E "\", port: p0 } ] }\n", &errs), 0);
	assert_int_equal(errs.n, 0);
	assert_int_equal(gauge(st, "updates"), 1);
	assert_int_equal(gauge(st, "entries_static"), 3);
	assert_int_equal(gauge(st, "entries"), 4);              /* A, C, E static + D learned */
	expect_out(st, frame(A, D, P1, 0), P2);
	expect_flood(st, frame(B, D, P1, 0), PORTS(0x5));       /* B gone: unknown */
	expect_out(st, frame(C, F, P2, 0), P1);
	expect_out(st, frame(E, F, P2, 0), P0);
	expect_out(st, frame(D, F, P2, 0), P1);                 /* learned D kept */
	/* C is static now: seen on p0 it stays on p1. */
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	assert_int_equal(pf_test_ctr(st, "static_src_mismatch"), 1);
	assert_int_equal(pf_test_ctr(st, "mac_move"), 0);
	expect_out(st, frame(C, F, P2, 0), P1);
	assert_int_equal(pf_test_ctr(st, "learned"), 3);        /* C, D, F, once each */

	/* All static entries removed; C is learned again from traffic. */
	assert_int_equal(update_to(st, "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx }\n",
				   &errs), 0);
	assert_int_equal(gauge(st, "entries_static"), 0);
	assert_int_equal(gauge(st, "entries"), 2);              /* D, F */
	expect_flood(st, frame(A, D, P1, 0), PORTS(0x5));
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	expect_out(st, frame(C, D, P1, 0), P0);
	assert_int_equal(pf_test_ctr(st, "learned"), 4);
	/* The same configuration again: nothing to do, still an update. */
	assert_int_equal(update_to(st, "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx }\n",
				   &errs), 0);
	assert_int_equal(gauge(st, "updates"), 3);
	assert_int_equal(gauge(st, "entries"), 3);
	rm_stage(st);
}

static void
test_update_full_table(void **state)
{
	struct pf_errs errs = { 0 };
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, ports: [p0, p1, p2], table_size: 4, next: tx,\n"
		"        static: [ { mac: \"" A "\", port: p1 } ] }\n");

	expect_flood(st, frame(BCAST, B, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, D, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, E, P0, 0), PORTS(0x6));   /* full: not learned */
	assert_int_equal(pf_test_ctr(st, "fib_full"), 1);
	/* Two new static entries in a full table: two learned entries make room. */
	assert_int_equal(update_to(st,
		"  l2: { type: l2fib, ports: [p0, p1, p2], table_size: 4, next: tx,\n"
		"        static: [ { mac: \"" A "\", port: p1 }, { mac: \"" E "\", port: p2 },\n"
		"                  { mac: \"02:00:00:00:00:0f\", port: p2 } ] }\n", &errs), 0);
	assert_int_equal(pf_test_ctr(st, "static_evict"), 2);
	assert_int_equal(gauge(st, "entries"), 4);
	assert_int_equal(gauge(st, "entries_static"), 3);
	expect_out(st, frame(E, A, P1, 0), P2);
	expect_out(st, frame("02:00:00:00:00:0f", A, P1, 0), P2);
	expect_out(st, frame(A, E, P2, 0), P1);
	rm_stage(st);
}

static void
test_update_age_and_limit(void **state)
{
	const uint64_t s = 1000000000ull;
	struct pf_errs errs = { 0 };
	struct pf_stage *st;

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(2000 * s);
	/* A small table, so that one idle sweep covers it. */
	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1, p2], age_s: 0, table_size: 8, next: tx }\n");
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, B, P1, 0), PORTS(0x5));
	/* Aging switched on at t=2000: entries are timed from when they were seen. */
	assert_int_equal(update_to(st, "  l2: { type: l2fib, ports: [p0, p1, p2], age_s: 30, "
				   "table_size: 8, port_learn_limit: 1, next: tx }\n", &errs), 0);
	pf_clock_advance_ns(2020 * s);
	expect_out(st, frame(A, B, P1, 0), P0);                 /* B refreshed at 2020 */
	/* Limit 1 per port: p0 holds A, so C is not learned there. */
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	assert_int_equal(pf_test_ctr(st, "port_learn_limit"), 1);
	pf_clock_advance_ns(2031 * s);
	st->ops->dp.idle(st, pf_now_ns());
	assert_int_equal(pf_test_ctr(st, "aged"), 1);           /* A, seen at 2000 */
	assert_int_equal(gauge(st, "entries"), 1);
	/* Limit lifted, aging off again. */
	assert_int_equal(update_to(st, "  l2: { type: l2fib, ports: [p0, p1, p2], age_s: 0, "
				   "table_size: 8, next: tx }\n", &errs), 0);
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	expect_flood(st, frame(BCAST, D, P0, 0), PORTS(0x6));
	pf_clock_advance_ns(9000 * s);
	st->ops->dp.idle(st, pf_now_ns());
	assert_int_equal(pf_test_ctr(st, "aged"), 1);
	assert_int_equal(gauge(st, "entries"), 3);
	rm_stage(st);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

static void
expect_refused(struct pf_stage *st, const char *l2_line, const char *msg)
{
	struct pf_errs errs = { 0 };

	assert_int_equal(update_to(st, l2_line, &errs), -EINVAL);
	assert_true(errs.n >= 1);
	if (strstr(errs.e[0].msg, msg) == NULL)
		fail_msg("expected '%s', got '%s'", msg, errs.e[0].msg);
}

static void
test_update_refused(void **state)
{
	struct pf_stage *st = mk_stage(
		"  l2: { type: l2fib, ports: [p0, p1, p2], next: tx,\n"
		"        static: [ { mac: \"" A "\", port: p1 } ] }\n");

	expect_refused(st, "  l2: { type: l2fib, ports: [p0, p1, p2], table_size: 1000, next: tx }\n",
		       "stages.l2.table_size: changing the table size (65536 -> 1000) needs a restart");
	expect_refused(st, "  l2: { type: l2fib, next: tx, domains: { default: { ports: [p0, p1, p2], vlan: 5 } } }\n",
		       "stages.l2.domains: changing bridge domains");
	expect_refused(st, "  l2: { type: l2fib, next: tx, domains: { lan: { ports: [p0, p1, p2] } } }\n",
		       "stages.l2.domains: changing bridge domains");
	/* Nothing changed: A still static on p1. */
	assert_int_equal(gauge(st, "updates"), 0);
	assert_int_equal(gauge(st, "entries_static"), 1);
	expect_out(st, frame(A, B, P0, 0), P1);
	/* The same domain spelled as 'domains:' is no change. */
	{
		struct pf_errs errs = { 0 };

		assert_int_equal(update_to(st, "  l2: { type: l2fib, next: tx, domains: { default: { ports: [p2, p1, p0] } } }\n",
					   &errs), 0);
	}
	assert_int_equal(gauge(st, "entries_static"), 0);
	/* A port leaving the domain (ports added and removed live) is a change it
	 * takes: floods skip it from the next burst. */
	expect_flood(st, frame(BCAST, C, P0, 0), PORTS(0x6));
	{
		struct pf_errs errs = { 0 };

		assert_int_equal(update_to(st, "  l2: { type: l2fib, ports: [p0, p1], next: tx }\n",
					   &errs), 0);
	}
	expect_flood(st, frame(BCAST, D, P0, 0), PORTS(0x2));
	rm_stage(st);
}

static void
test_update_static_file(void **state)
{
	char path[] = "/tmp/l2fib_upd_XXXXXX", line[512];
	struct pf_errs errs = { 0 };
	struct pf_topo *t1 = NULL, *t2 = NULL;
	struct pf_stage *st;
	char yaml[4096];
	const char *cut = strstr(topo_head, "  tx:");
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	dprintf(fd, A " p1\n" B " p2\n");
	close(fd);
	snprintf(line, sizeof(line),
		 "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx, static: %s }\n", path);
	st = mk_stage(line);
	expect_out(st, frame(A, C, P0, 0), P1);
	/* The file is recorded with its stamp; the YAML will not change. */
	assert_int_equal(st->conf->n_files, 1);
	assert_string_equal(st->conf->files[0].path, path);
	assert_int_equal(st->conf->files[0].size, 2 * 21);
	snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(cut - topo_head), topo_head, line, cut);
	assert_int_equal(pf_topo_load_string("same.yaml", yaml, &t1, &errs), 0);
	assert_null(pf_stage_conf_files_changed(st->conf, &t1->stages[pf_topo_stage_index(t1, "l2")]));

	/* Same size, other content: the hash tells (the mtime may not have moved). */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, A " p2\n" B " p1\n");
	fclose(f);
	assert_int_equal(pf_topo_load_string("same.yaml", yaml, &t2, &errs), 0);
	assert_string_equal(pf_stage_conf_files_changed(st->conf,
							&t2->stages[pf_topo_stage_index(t2, "l2")]),
			    path);
	assert_int_equal(pf_stage_update(st, &t2->stages[pf_topo_stage_index(t2, "l2")], &errs), 0);
	expect_out(st, frame(A, C, P0, 0), P2);
	expect_out(st, frame(B, C, P0, 0), P1);
	assert_int_equal(gauge(st, "entries_static"), 2);
	/* No file any more: changed too. */
	assert_string_equal(pf_stage_conf_files_changed(&t2->stages[pf_topo_stage_index(t2, "l2")],
							&t1->stages[0]), path);
	pf_topo_free(t1);
	pf_topo_free(t2);
	rm_stage(st);
	unlink(path);
}

/* The hand-off as in a running process: update() on a control thread waits
 * while the "lcore" (this thread) applies the command from its idle hook. */
struct upd_arg {
	struct pf_stage *st;
	const char *line;
	int rc;
	int done;
};

static void *
upd_thread(void *p)
{
	struct upd_arg *a = p;
	struct pf_errs errs = { 0 };

	a->rc = update_to(a->st, a->line, &errs);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_update_handoff(void **state)
{
	char path[] = "/tmp/l2fib_many_XXXXXX", line[512];
	struct upd_arg a = { 0 };
	struct pf_stage *st;
	uint8_t mac[6], src[6];
	pthread_t th;
	int fd = mkstemp(path), idles = 0;
	uint32_t i;

	assert_true(fd >= 0);
	close(fd);
	snprintf(line, sizeof(line),
		 "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx, static: %s }\n", path);
	st = mk_stage(line);
	st->runtime_runs = true;   /* pretend a runtime runs it: update() posts and waits */
	mac_n(src, 0xabcdef);
	mac_n(mac, 0xfedcba);
	expect_flood(st, frame_b(mac, src, P0, 0), PORTS(0x6));   /* src learned */
	/* 10,000 entries: more than one idle slice (4096). */
	{
		FILE *f = fopen(path, "w");

		for (i = 1; i <= 10000; i++)
			fprintf(f, "02:00:00:%02x:%02x:%02x p%u\n", (i >> 16) & 0xff, (i >> 8) & 0xff,
				i & 0xff, 1 + i % 2);
		fclose(f);
	}
	a.st = st;
	a.line = line;
	assert_int_equal(pthread_create(&th, NULL, upd_thread, &a), 0);
	while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
		st->ops->dp.idle(st, pf_now_ns());
		idles++;
		usleep(100);
	}
	pthread_join(th, NULL);
	assert_int_equal(a.rc, 0);
	assert_true(idles >= 3);
	assert_int_equal(gauge(st, "entries_static"), 10000);
	assert_int_equal(gauge(st, "entries"), 10001);
	for (i = 1; i <= 10000; i += 999) {
		mac_n(mac, i);
		expect_out(st, frame_b(mac, src, P0, 0), 1 + i % 2);
	}
	mac_n(mac, 0xabcdef);
	expect_out(st, frame_b(mac, mac_n_ret(src, 5), P1, 0), P0);
	st->runtime_runs = false;
	rm_stage(st);
	unlink(path);
}

/*
 * process_burst keeps its promise (no locks, no waiting, bounded work): a
 * posted update waits for housekeeping however many bursts run, and the
 * housekeep op alone (a loaded lcore that never idles) applies it.
 */
static void
test_update_only_in_housekeep(void **state)
{
	char line[256];
	struct upd_arg a = { 0 };
	struct pf_stage *st;
	struct rte_mbuf *pkts[32];
	uint16_t edge[32], i;
	uint8_t mac[6], src[6];
	pthread_t th;
	int k, calls = 0;

	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1, p2], next: tx }\n");
	st->runtime_runs = true;   /* pretend a runtime runs it: update() posts and waits */
	snprintf(line, sizeof(line),
		 "  l2: { type: l2fib, ports: [p0, p1, p2], next: tx,\n"
		 "        static: [ { mac: \"" A "\", port: p2 } ] }\n");
	a.st = st;
	a.line = line;
	assert_int_equal(pthread_create(&th, NULL, upd_thread, &a), 0);
	mac_n(src, 0x5151);
	for (k = 0; k < 200; k++) {
		for (i = 0; i < 32; i++)
			pkts[i] = frame_b(mac_n_ret(mac, 0x7000 + i), src, P0, 0);
		pf_test_process(st, pkts, 32, edge);
		pf_test_free(pkts, 32);
		usleep(100);
	}
	assert_int_equal(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(gauge(st, "entries_static"), 0);
	while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
		st->ops->dp.housekeep(st, pf_now_ns());
		calls++;
		usleep(100);
	}
	pthread_join(th, NULL);
	assert_int_equal(a.rc, 0);
	assert_true(calls >= 1);
	assert_int_equal(gauge(st, "entries_static"), 1);
	expect_out(st, frame(A, B, P0, 0), P2);
	st->runtime_runs = false;
	rm_stage(st);
}

/*
 * A run of packets from one station is looked up and learned once, yet
 * counts as the same packets one by one: a static mismatch, a full table,
 * a port at its limit count once per packet.
 */
static void
test_runs_count_per_packet(void **state)
{
	struct rte_mbuf *pkts[40];
	uint16_t edge[40], i;
	uint8_t mac[6], src[6];
	struct pf_stage *st;

	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1, p2], table_size: 3, next: tx,\n"
		      "        static: [ { mac: \"" A "\", port: p1 } ] }\n");
	/* 40 frames from A on p0 (static on p1): 40 mismatches, A stays on p1. */
	for (i = 0; i < 40; i++)
		pkts[i] = frame(B, A, P0, 0);
	pf_test_process(st, pkts, 40, edge);
	pf_test_free(pkts, 40);
	assert_int_equal(pf_test_ctr(st, "static_src_mismatch"), 40);
	assert_int_equal(pf_test_ctr(st, "flooded"), 40);
	expect_out(st, frame(A, C, P0, 0), P1);     /* C learned: 2 of 3 */
	expect_flood(st, frame(BCAST, D, P2, 0), PORTS(0x3));   /* D: 3 of 3 */
	/* Full: E's 33 frames (two chunks) are each fib_full; D's refresh is not. */
	for (i = 0; i < 33; i++)
		pkts[i] = frame_b(mac_n_ret(mac, 0x100 + i), mac_n_ret(src, 0xe), P1, 0);
	for (i = 33; i < 36; i++)
		pkts[i] = frame(BCAST, D, P2, 0);
	pf_test_process(st, pkts, 36, edge);
	for (i = 0; i < 36; i++)
		assert_int_equal(edge[i], OUT);
	pf_test_free(pkts, 36);
	assert_int_equal(pf_test_ctr(st, "fib_full"), 33);
	assert_int_equal(pf_test_ctr(st, "learned"), 2);
	assert_int_equal(gauge(st, "entries"), 3);
	rm_stage(st);

	/* port_learn_limit 1: the second station of p0 is refused on each packet. */
	st = mk_stage("  l2: { type: l2fib, ports: [p0, p1], port_learn_limit: 1, next: tx }\n");
	expect_flood(st, frame(BCAST, A, P0, 0), PORTS(0x2));
	for (i = 0; i < 5; i++)
		pkts[i] = frame(BCAST, B, P0, 0);
	pf_test_process(st, pkts, 5, edge);
	pf_test_free(pkts, 5);
	assert_int_equal(pf_test_ctr(st, "port_learn_limit"), 5);
	/* A run from one source on two ports is two runs: learn, then a move. */
	pkts[0] = frame(BCAST, C, P1, 0);
	pkts[1] = frame(BCAST, C, P1, 0);
	pkts[2] = frame(BCAST, A, P1, 0);
	pkts[3] = frame(BCAST, A, P1, 0);
	pf_test_process(st, pkts, 4, edge);
	pf_test_free(pkts, 4);
	assert_int_equal(pf_test_ctr(st, "learned"), 2);            /* A, C */
	assert_int_equal(pf_test_ctr(st, "port_learn_limit"), 7);   /* A cannot move to full p1 */
	rm_stage(st);
}

/* reliability.md case 8: a frame with one of our port MACs as source. */
static void
test_own_mac(void **state)
{
	static const char *const yaml =
		"ports:\n"
		"  p0: { device: net_null0, mac: \"02:00:00:00:00:f0\" }\n"
		"  p1: { device: net_null1, mac: \"02:00:00:00:01:f0\" }\n"
		"  p2: { device: net_null2 }\n"
		"stages:\n"
		"  rx: { type: rx, ports: [p0, p1, p2], next: l2 }\n"
		"  l2: { type: l2fib, ports: [p0, p1, p2], next: tx }\n"
		"  tx: { type: tx, ports: [p0, p1, p2] }\n"
		"lcores:\n"
		"  1: [rx, l2, tx]\n";
	struct pf_topo *t2;
	struct pf_stage *st = pf_test_stage(yaml, "l2", &topo), *rx;
	struct rte_mbuf *m;
	uint16_t edge;

	expect_drop(st, frame(BCAST, "02:00:00:00:00:f0", P2, 0), "l2_src_is_own_mac");
	expect_drop(st, frame(A, "02:00:00:00:01:f0", P0, 0), "l2_src_is_own_mac");
	/* Same last byte, another MAC: an ordinary station. */
	expect_flood(st, frame(BCAST, "02:00:00:00:02:f0", P0, 0), PORTS(0x6));
	assert_int_equal(pf_test_ctr(st, "learned"), 1);
	expect_flood(st, frame("02:00:00:00:00:f0", A, P1, 0), PORTS(0x5));   /* never learned */
	rm_stage(st);

	/* rx drops it first, whatever the path behind it. */
	rx = pf_test_stage(yaml, "rx", &t2);
	m = frame(BCAST, "02:00:00:00:01:f0", P2, 0);
	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(edge, 0);
	assert_int_equal(pf_test_ctr(rx, "l2_src_is_own_mac"), 1);
	pf_test_free(&m, 1);
	m = frame(BCAST, "02:00:00:00:01:f1", P2, 0);
	pf_test_process(rx, &m, 1, &edge);
	assert_int_equal(pf_test_ctr(rx, "l2_src_is_own_mac"), 1);
	pf_test_free(&m, 1);
	pf_stage_destroy(rx);
	pf_topo_free(t2);

	/* A static entry cannot name our own MAC. */
	{
		char bad[2048];
		struct pf_errs errs = { 0 };
		struct pf_topo *t = NULL;
		const char *l2 = strstr(yaml, "  l2:");

		snprintf(bad, sizeof(bad), "%.*s  l2: { type: l2fib, ports: [p0, p1, p2], next: tx, "
			 "static: [ { mac: \"02:00:00:00:01:f0\", port: p2 } ] }\n%s",
			 (int)(l2 - yaml), yaml, strstr(yaml, "  tx:"));
		assert_int_not_equal(pf_topo_load_string("bad.yaml", bad, &t, &errs), 0);
		assert_string_equal(errs.e[0].msg, "stages.l2.static[0]: 02:00:00:00:01:f0 is the "
				    "MAC of port 'p1' (never a station)");
	}
}

static int
setup(void **state)
{
	return pf_test_eal_init("l2fib");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learn_then_forward),
		cmocka_unit_test(test_burst_port_hint),
		cmocka_unit_test(test_flood_bcast_mcast),
		cmocka_unit_test(test_same_port_drop),
		cmocka_unit_test(test_reserved_dst),
		cmocka_unit_test(test_invalid_src),
		cmocka_unit_test(test_flood_empty),
		cmocka_unit_test(test_station_move),
		cmocka_unit_test(test_static_precedence),
		cmocka_unit_test(test_aging),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_port_learn_limit),
		cmocka_unit_test(test_two_domains),
		cmocka_unit_test(test_vlan_domain),
		cmocka_unit_test(test_bursts_vs_reference),
		cmocka_unit_test(test_million),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_update_statics),
		cmocka_unit_test(test_update_full_table),
		cmocka_unit_test(test_update_age_and_limit),
		cmocka_unit_test(test_update_refused),
		cmocka_unit_test(test_update_static_file),
		cmocka_unit_test(test_update_handoff),
		cmocka_unit_test(test_update_only_in_housekeep),
		cmocka_unit_test(test_runs_count_per_packet),
		cmocka_unit_test(test_own_mac),
	};

	return cmocka_run_group_tests_name("l2fib", tests, setup, NULL);
}
