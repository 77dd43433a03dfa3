/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Accounting: the rules the runtime's invariant (rx + replicas = tx + drops +
 * in flight) rests on.
 *
 * 1. Drop-count discipline: for every stage, the packets process_burst puts
 *    on edge 0 equal the sum of its DROP-kind counter deltas, over random
 *    bursts (the runtime frees edge 0 and counts nothing itself).
 * 2. The tx stage on real (net_ring) ports: every packet given to it, plus
 *    every flood replica, ends up sent, counted as a drop, or reported in
 *    flight; nothing leaks from the mempool.
 * 3. pf_runtime_totals adds exactly the right things.
 */
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "pf_runtime.h"
#include "pf_test.h"

/* p0, p1: net_ring loopback ports (what tx sends, their rx returns). p2: no device. */
static const char topo_yaml[] =
	"ports:\n"
	"  p0: { device: net_ring0 }\n"
	"  p1: { device: net_ring1 }\n"
	"  p2: { device: net_null2 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1, p2], next: { ipv4: xc, ipv6: xc, arp: xc } }\n"
	"  xc: { type: xconnect, pairs: { p0: p1, p1: p0 }, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores:\n"
	"  1: [rx, xc, tx]\n";

static struct pf_topo *topo_rx, *topo_xc, *topo_tx;
static struct pf_stage *rx, *xc, *tx;
static bool have_ports;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n == 0 ? 0 : (uint32_t)(rng % n);
}

static int
port_up(const char *name, uint16_t want_id)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t pid;

	if (rte_dev_probe(name) < 0 || rte_eth_dev_get_port_by_name(name, &pid) != 0 ||
	    pid != want_id)
		return -1;
	if (rte_eth_dev_configure(pid, 1, 1, &conf) < 0 ||
	    rte_eth_rx_queue_setup(pid, 0, 1024, SOCKET_ID_ANY, NULL, pf_test_pool()) < 0 ||
	    rte_eth_tx_queue_setup(pid, 0, 1024, SOCKET_ID_ANY, NULL) < 0 ||
	    rte_eth_dev_start(pid) < 0)
		return -1;
	return 0;
}

static int
setup(void **state)
{
	if (pf_test_eal_init("acct") < 0)
		return -1;
	have_ports = port_up("net_ring0", 0) == 0 && port_up("net_ring1", 1) == 0;
	rx = pf_test_stage(topo_yaml, "rx", &topo_rx);
	xc = pf_test_stage(topo_yaml, "xc", &topo_xc);
	tx = pf_test_stage(topo_yaml, "tx", &topo_tx);
	return 0;
}

static int
teardown(void **state)
{
	pf_stage_destroy(rx);
	pf_stage_destroy(xc);
	pf_stage_destroy(tx);
	pf_topo_free(topo_rx);
	pf_topo_free(topo_xc);
	pf_topo_free(topo_tx);
	return 0;
}

static uint64_t
drop_sum(const struct pf_stage *st)
{
	uint64_t s = 0;
	uint16_t k;

	for (k = 0; k < st->ops->n_ctrs; k++)
		if (st->ops->ctrs[k].kind == PF_CTR_DROP)
			s += st->ctrs[k];
	return s;
}

/* Run @p n packets; check edge 0 count == drop delta and every edge is valid. */
static void
check_discipline(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t max_edge)
{
	uint16_t edge[PF_BURST_MAX], i, zero = 0;
	uint64_t before = drop_sum(st);

	pf_test_process(st, pkts, n, edge);
	for (i = 0; i < n; i++) {
		assert_true(edge[i] <= max_edge);
		zero += edge[i] == PF_EDGE_DROP;
	}
	if (drop_sum(st) - before != zero)
		fail_msg("%s: %u packets on edge 0 but drop counters moved by %" PRIu64,
			 st->ops->type, zero, drop_sum(st) - before);
}

/* A random frame: a valid template, then random damage. */
static struct rte_mbuf *
random_frame(void)
{
	static const uint16_t types[] = { 0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x88cc, 0x0100,
					  0x05dc };
	uint8_t b[1600];
	uint16_t len = (uint16_t)(rnd(4) == 0 ? rnd(80) : 14 + rnd(1560)), i, flips;
	struct rte_mbuf *m;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)rnd(256);
	b[0] &= 0xfe;
	b[6] = 0x02;
	b[12] = (uint8_t)(types[rnd(RTE_DIM(types))] >> 8);
	b[13] = (uint8_t)types[rnd(RTE_DIM(types))];
	if (b[12] == 0x81)
		b[16] = 0x08, b[17] = 0x00;
	if (rnd(2) != 0) {
		/* Make a plausible IPv4 header (often with a correct checksum). */
		uint8_t *ip = b + (b[12] == 0x81 ? 18 : 14);
		uint16_t tot = (uint16_t)(len > 40 ? len - (ip - b) - rnd(8) : 20);
		uint32_t s = 0;

		ip[0] = (uint8_t)(0x45 + rnd(3));
		ip[2] = (uint8_t)(tot >> 8);
		ip[3] = (uint8_t)tot;
		ip[10] = ip[11] = 0;
		for (i = 0; i < (ip[0] & 0xf) * 4; i += 2)
			s += (uint32_t)(ip[i] << 8 | ip[i + 1]);
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		ip[10] = (uint8_t)(~s >> 8);
		ip[11] = (uint8_t)~s;
	}
	for (flips = (uint16_t)rnd(3); flips > 0; flips--)
		b[rnd(60)] ^= (uint8_t)(1u << rnd(8));
	m = pf_test_mbuf(b, len, (uint16_t)rnd(3));
	return m;
}

static void
test_rx_discipline(void **state)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint16_t n, i;
	int round;

	for (round = 0; round < 300; round++) {
		n = (uint16_t)rnd(round < 50 ? 40 : PF_BURST_MAX + 1);
		for (i = 0; i < n; i++)
			pkts[i] = random_frame();
		check_discipline(rx, pkts, n, rx->ops->n_edges - 1);
		pf_test_free(pkts, n);
	}
	/* The random frames hit many different drop reasons and every class. */
	assert_true(pf_test_ctr(rx, "eth_truncated") > 0);
	assert_true(pf_test_ctr(rx, "ip4_bad_checksum") > 0);
	assert_true(pf_test_ctr(rx, "ethertype_unsupported") > 0);
	assert_true(pf_test_ctr(rx, "vlan_too_deep") > 0);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

static void
test_xconnect_discipline(void **state)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint8_t b[64] = { 0 };
	uint16_t n, i, edge[PF_BURST_MAX];
	uint64_t hints0;
	int round;

	for (round = 0; round < 300; round++) {
		n = (uint16_t)rnd(PF_BURST_MAX + 1);
		for (i = 0; i < n; i++)
			pkts[i] = pf_test_mbuf(b, sizeof(b), (uint16_t)rnd(3));
		check_discipline(xc, pkts, n, xc->ops->n_edges - 1);
		pf_test_free(pkts, n);
	}
	assert_true(pf_test_ctr(xc, "no_xconnect") > 0);
	/* The peer is what the pairs say, with the burst-port hint. */
	hints0 = pf_test_hints;
	pkts[0] = pf_test_mbuf(b, sizeof(b), 1);
	pf_test_process(xc, pkts, 1, edge);
	assert_int_equal(edge[0], 1);
	assert_int_equal(pf_meta(pkts[0])->out_port, 0);
	assert_int_equal(pf_test_hints, hints0 + 1);
	pf_test_free(pkts, 1);
	/* With rx's in-port hint: the same verdicts, no per-packet in_port look. */
	for (round = 0; round < 30; round++) {
		uint16_t in = (uint16_t)(round % 3);
		uint64_t drops0 = pf_test_ctr(xc, "no_xconnect");

		n = (uint16_t)(1 + rnd(PF_BURST_MAX));
		for (i = 0; i < n; i++)
			pkts[i] = pf_test_mbuf(b, sizeof(b), in);
		xc->in_burst_in_port = PF_BURST_PORT(in);
		pf_test_process(xc, pkts, n, edge);
		xc->in_burst_in_port = 0;       /* as the runtime does after each burst */
		for (i = 0; i < n; i++) {
			assert_int_equal(edge[i], in == 2 ? 0 : 1);
			assert_int_equal(pf_meta(pkts[i])->out_port, in == 2 ? PF_PORT_NONE : 1 - in);
		}
		assert_int_equal(pf_test_ctr(xc, "no_xconnect") - drops0, in == 2 ? n : 0);
		pf_test_free(pkts, n);
	}
}

static void
random_out(struct rte_mbuf *m)
{
	struct pf_meta *md = pf_meta(m);

	switch (rnd(5)) {
	case 0:
	case 1:
		md->out_port = (uint16_t)rnd(3);        /* p2 is not served by tx */
		break;
	case 2:
		md->out_port = (uint16_t)rnd(PF_MAX_PORTS + 2);
		break;
	case 3:
		md->out_port = PF_PORT_NONE;
		break;
	default:
		md->out_port = PF_PORT_FLOOD;
		md->flood_mask = rnd(8);                /* may name only p2, or nothing */
		break;
	}
}

static void
test_tx_discipline(void **state)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint8_t b[64] = { 0 };
	uint16_t n, i;
	int round;

	for (round = 0; round < 300; round++) {
		n = (uint16_t)rnd(PF_BURST_MAX + 1);
		for (i = 0; i < n; i++) {
			pkts[i] = pf_test_mbuf(b, sizeof(b), 0);
			random_out(pkts[i]);
		}
		/*
		 * Sinks: 1 means "mine to send" (the runtime hands those to ops->dp.tx).
		 * tx takes every packet; ops->dp.tx checks out_port (test_tx_ports).
		 */
		check_discipline(tx, pkts, n, 1);
		pf_test_free(pkts, n);
	}
}

/* Would tx (serving p0 and p1) send @p m nowhere? The model of no_tx_port. */
static bool
tx_unserved(const struct rte_mbuf *m)
{
	const struct pf_meta *md = pf_meta((struct rte_mbuf *)(uintptr_t)m);

	if (md->out_port == PF_PORT_FLOOD)
		return (md->flood_mask & 0x3) == 0;
	return md->out_port > 1;
}

/* ---- tx on real ports --------------------------------------------------- */

static uint64_t
tx_in_flight(const struct pf_stage *st)
{
	struct pf_gauge g[PF_MAX_PORTS + 8];
	uint16_t k, n = pf_stage_gauges(st, g, RTE_DIM(g));

	for (k = 0; k < n; k++)
		if (strcmp(g[k].name, "in_flight") == 0)
			return g[k].value;
	fail_msg("tx has no in_flight gauge");
	return 0;
}

static uint64_t
tx_sent(const struct pf_stage *st)
{
	return st->port_tx[0] + st->port_tx[1] + st->port_tx[2];
}

/* Drain a loopback port (what tx sent comes back on its rx); returns how many. */
static uint64_t
drain(uint16_t port)
{
	struct rte_mbuf *pkts[64];
	uint64_t total = 0;
	uint16_t n;

	while ((n = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts))) != 0) {
		total += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	return total;
}

/*
 * Feed tx like the runtime does (process_burst, then ops->dp.tx for the packets
 * not dropped), checking given + replicas = sent + drops + in flight at
 * every step; end with idle() so every buffer is flushed.
 */
static void
feed_tx(uint32_t total, bool flood)
{
	struct rte_mbuf *pkts[PF_BURST_MAX], *keep[PF_BURST_MAX];
	uint64_t given0 = 0, sent0 = tx_sent(tx), drop0 = drop_sum(tx), rep0 = tx->replicas;
	uint64_t unserved = 0, noport0 = pf_test_ctr(tx, "no_tx_port");
	uint8_t b[64] = { 0 };
	uint16_t edge[PF_BURST_MAX], n, i, k;
	uint32_t done = 0;

	while (done < total) {
		n = (uint16_t)RTE_MIN(total - done, 1 + rnd(64));
		for (i = 0; i < n; i++) {
			pkts[i] = pf_test_mbuf(b, sizeof(b), 0);
			if (flood) {
				pf_meta(pkts[i])->out_port = PF_PORT_FLOOD;
				pf_meta(pkts[i])->flood_mask = 0x7;   /* p2 not served: 2 copies */
			} else {
				random_out(pkts[i]);
			}
			unserved += tx_unserved(pkts[i]);
		}
		pf_test_process(tx, pkts, n, edge);
		for (i = 0, k = 0; i < n; i++)
			if (edge[i] == PF_EDGE_DROP)
				rte_pktmbuf_free(pkts[i]);
			else
				keep[k++] = pkts[i];
		tx->ops->dp.tx(tx, keep, k);
		done += n;
		given0 += n;
		assert_int_equal(given0 + tx->replicas - rep0,
				 tx_sent(tx) - sent0 + drop_sum(tx) - drop0 + tx_in_flight(tx));
	}
	/* Exactly the packets for no served port are no_tx_port. */
	assert_int_equal(pf_test_ctr(tx, "no_tx_port") - noport0, unserved);
	tx->ops->dp.idle(tx, 0);
	assert_false(tx->ops->obs.busy(tx));
	assert_int_equal(tx_in_flight(tx), 0);
	assert_int_equal(given0 + tx->replicas - rep0, tx_sent(tx) - sent0 + drop_sum(tx) - drop0);
}

static void
test_tx_ports(void **state)
{
	uint64_t full0, sent0, rep0, back;

	if (!have_ports)
		skip();
	/* Random destinations, rings drained as we go: nothing is tx_full. */
	full0 = pf_test_ctr(tx, "tx_full");
	sent0 = tx_sent(tx);
	feed_tx(500, false);
	assert_true(pf_test_ctr(tx, "no_tx_port") > 0);
	assert_int_equal(pf_test_ctr(tx, "tx_full"), full0);
	back = drain(0) + drain(1);
	assert_int_equal(back, tx_sent(tx) - sent0);

	/* Flooding to p0+p1: two references per packet, both sent, then freed once each. */
	rep0 = tx->replicas;
	sent0 = tx_sent(tx);
	feed_tx(300, true);
	assert_int_equal(tx->replicas - rep0, 300);
	assert_int_equal(pf_test_ctr(tx, "flood_copies"), tx->replicas);
	assert_int_equal(tx_sent(tx) - sent0, 600);
	assert_int_equal(drain(0), 300);
	assert_int_equal(drain(1), 300);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

/*
 * A burst for one port with nothing buffered there goes out at once (no
 * copy into the buffer); after a mixed burst left packets buffered, a
 * one-port burst queues behind them: order on the wire is kept either way.
 */
static void
test_tx_direct(void **state)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint16_t edge[PF_BURST_MAX], i, n, seq = 0;
	uint8_t b[64] = { 0 }, want = 0;
	uint64_t sent0;

	if (!have_ports)
		skip();
	tx->ops->dp.idle(tx, 0);
	drain(0);
	drain(1);
	sent0 = tx->port_tx[0];
	for (i = 0; i < 20; i++) {
		b[0] = (uint8_t)seq++;
		pkts[i] = pf_test_mbuf(b, sizeof(b), 1);
		pf_meta(pkts[i])->out_port = 0;
	}
	pf_test_process(tx, pkts, 20, edge);
	tx->ops->dp.tx(tx, pkts, 20);
	assert_int_equal(tx->port_tx[0] - sent0, 20);
	assert_int_equal(tx_in_flight(tx), 0);
	/*
	 * Mixed (p0, p1, p0), then p0 only, three times: behind what p0 has
	 * buffered, in order. The last burst's out_port is unwritten (its
	 * producer's hint stands for it, PF_BURST_PORT_UNWRITTEN): tx must
	 * take the port from the hint alone.
	 */
	for (n = 0; n < 4; n++) {
		uint16_t k = n == 0 ? 3 : 8;

		for (i = 0; i < k; i++) {
			bool p1 = n == 0 && i == 1;

			pkts[i] = pf_test_mbuf(b, sizeof(b), 1);
			pf_meta(pkts[i])->out_port = n == 3 ? PF_PORT_NONE : (uint16_t)p1;
			if (!p1)
				rte_pktmbuf_mtod(pkts[i], uint8_t *)[0] = (uint8_t)seq++;
		}
		pf_test_process(tx, pkts, k, edge);
		/* The p0-only bursts come with a producer's burst-port hint (pf_stage.h). */
		tx->in_burst_port = n == 0 ? 0 : n == 3 ? PF_BURST_PORT(0) | PF_BURST_PORT_UNWRITTEN :
				    PF_BURST_PORT(0);
		tx->ops->dp.tx(tx, pkts, k);
		tx->in_burst_port = 0;
	}
	tx->ops->dp.idle(tx, 0);
	assert_int_equal(drain(1), 1);
	while ((n = rte_eth_rx_burst(0, 0, pkts, PF_BURST_MAX)) != 0) {
		for (i = 0; i < n; i++)
			assert_int_equal(rte_pktmbuf_mtod(pkts[i], uint8_t *)[0], want++);
		rte_pktmbuf_free_bulk(pkts, n);
	}
	assert_int_equal(want, seq);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

/* A port whose queue is never drained: the overflow is tx_full, exactly. */
static void
test_tx_full(void **state)
{
	struct rte_eth_dev_info info;
	uint64_t full0, sent0, cap;

	if (!have_ports)
		skip();
	drain(0);
	drain(1);
	full0 = pf_test_ctr(tx, "tx_full");
	sent0 = tx_sent(tx);
	feed_tx(3000, true);          /* 6000 copies into two 1023-packet rings */
	assert_int_equal(rte_eth_dev_info_get(0, &info), 0);
	cap = tx_sent(tx) - sent0;
	assert_true(cap > 0 && cap < 6000);
	assert_int_equal(cap + pf_test_ctr(tx, "tx_full") - full0, 6000);
	assert_int_equal(drain(0) + drain(1), cap);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

/* ---- pf_runtime_totals -------------------------------------------------- */

static void
set_ctr(struct pf_stage *st, const char *name, uint64_t v)
{
	uint16_t k;

	for (k = 0; k < st->ops->n_ctrs; k++)
		if (strcmp(st->ops->ctrs[k].name, name) == 0) {
			st->ctrs[k] = v;
			return;
		}
	fail_msg("no counter %s", name);
}

static void
test_runtime_totals(void **state)
{
	struct pf_runtime *rt = calloc(1, sizeof(*rt));
	struct pf_stage *stages[3] = { rx, xc, tx };
	struct rte_mbuf *pkts[16], *held[5];
	uint64_t saved[3][32], saved_rx[3][PF_MAX_PORTS], saved_tx[3][PF_MAX_PORTS], saved_rep;
	struct rte_ring *ring;
	struct pf_totals t;
	uint8_t b[64] = { 0 };
	uint16_t i, s, edge[5];

	assert_non_null(rt);
	for (s = 0; s < 3; s++) {
		memcpy(saved[s], stages[s]->ctrs, stages[s]->ops->n_ctrs * sizeof(uint64_t));
		memcpy(saved_rx[s], stages[s]->port_rx, sizeof(saved_rx[s]));
		memcpy(saved_tx[s], stages[s]->port_tx, sizeof(saved_tx[s]));
		memset(stages[s]->ctrs, 0, stages[s]->ops->n_ctrs * sizeof(uint64_t));
		memset(stages[s]->port_rx, 0, sizeof(stages[s]->port_rx));
		memset(stages[s]->port_tx, 0, sizeof(stages[s]->port_tx));
	}
	saved_rep = tx->replicas;
	tx->replicas = 0;

	rt->topo = topo_rx;
	rt->n_stages = 3;
	for (s = 0; s < 3; s++) {
		rt->stages[s] = stages[s];
		rt->rts[s].st = stages[s];
	}
	ring = rte_ring_create("ut_acct", 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(ring);
	rt->n_rings = 1;
	rt->rings[0].ring = ring;

	/* 150 received; rx drops 7 (+ info counters that must not count), 4 ring_full. */
	rx->port_rx[0] = 100;
	rx->port_rx[1] = 50;
	set_ctr(rx, "eth_truncated", 3);
	set_ctr(rx, "ip4_bad_checksum", 4);
	set_ctr(rx, "rx_runt", 1000);
	set_ctr(rx, "vlan_tagged", 1000);
	rt->rts[0].ring_full = 4;
	/* xc drops 2, 1 went to an unwired edge; 16 wait in a ring. */
	set_ctr(xc, "no_xconnect", 2);
	rt->rts[1].no_edge = 1;
	for (i = 0; i < 16; i++)
		pkts[i] = pf_test_mbuf(b, sizeof(b), 0);
	assert_int_equal(rte_ring_enqueue_bulk(ring, (void **)pkts, 16, NULL), 16);
	/*
	 * tx: 5 buffered (in flight), 10 extra flood copies, 120 + 10 - 5 - ... sent.
	 * Two ports: a mixed burst is buffered (a one-port burst would go out at once).
	 */
	for (i = 0; i < 5; i++) {
		held[i] = pf_test_mbuf(b, sizeof(b), 0);
		pf_meta(held[i])->out_port = (uint16_t)(i & 1);
	}
	pf_test_process(tx, held, 5, edge);
	tx->ops->dp.tx(tx, held, 5);
	assert_int_equal(tx_in_flight(tx), 5);
	tx->replicas = 10;
	set_ctr(tx, "flood_copies", 10);
	set_ctr(tx, "tx_full", 6);
	set_ctr(tx, "no_tx_port", 1);
	/* 150 + 10 = tx + (3 + 4 + 4 + 2 + 1 + 6 + 1) + (16 + 5)  ->  tx = 118 */
	tx->port_tx[0] = 60;
	tx->port_tx[1] = 58;

	pf_runtime_totals(rt, &t);
	assert_int_equal(t.rx, 150);
	assert_int_equal(t.replicas, 10);
	assert_int_equal(t.tx, 118);
	assert_int_equal(t.dropped, 21);
	assert_int_equal(t.in_flight, 21);
	assert_int_equal(t.unaccounted, 0);
	assert_int_equal(pf_runtime_rx_total(rt), 150);
	assert_int_equal(pf_runtime_port_rx(rt, 1), 50);
	assert_int_equal(pf_runtime_port_tx(rt, 0), 60);

	/* One packet unaccounted either way is seen, with its sign. */
	rx->port_rx[2] = 1;
	pf_runtime_totals(rt, &t);
	assert_int_equal(t.unaccounted, 1);
	rx->port_rx[2] = 0;
	rt->rts[2].ring_full = 1;
	pf_runtime_totals(rt, &t);
	assert_int_equal(t.unaccounted, -1);
	rt->rts[2].ring_full = 0;

	/* Restore: flush what tx holds into the loopback port, free the ring. */
	tx->ops->dp.idle(tx, 0);
	if (have_ports) {
		drain(0);
		drain(1);
	}
	while (rte_ring_dequeue(ring, (void **)&pkts[0]) == 0)
		rte_pktmbuf_free(pkts[0]);
	rte_ring_free(ring);
	for (s = 0; s < 3; s++) {
		memcpy(stages[s]->ctrs, saved[s], stages[s]->ops->n_ctrs * sizeof(uint64_t));
		memcpy(stages[s]->port_rx, saved_rx[s], sizeof(saved_rx[s]));
		memcpy(stages[s]->port_tx, saved_tx[s], sizeof(saved_tx[s]));
	}
	tx->replicas = saved_rep;
	free(rt);
	if (have_ports)
		assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rx_discipline),
		cmocka_unit_test(test_xconnect_discipline),
		cmocka_unit_test(test_tx_discipline),
		cmocka_unit_test(test_tx_ports),
		cmocka_unit_test(test_tx_direct),
		cmocka_unit_test(test_tx_full),
		cmocka_unit_test(test_runtime_totals),
	};

	return cmocka_run_group_tests_name("accounting", tests, setup, teardown);
}
