/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: l2fib learn/forward/age operation sequences.
 *
 * Input: a byte string read as operations of 4 bytes each:
 *   [0] port and flags: low 2 bits ingress port (3 = p0 again), bit 2 ends
 *       the current burst, bit 3 advances the clock by [3] seconds first
 *   [1] source station index, [2] destination station index
 *   [3] seconds to advance (with bit 3)
 * Stations come from a pool of 48 MACs (unicast, a few multicast, the zero
 * MAC, broadcast, a reserved 01:80:c2 address and a port's own MAC), so
 * learning, moves, floods, reserved drops, aging and a full 32-entry table
 * all occur. Time is the stage clock in pcap mode.
 * Invariants after every burst: the drop counters moved by exactly the
 * packets on edge 0; a forwarded unicast leaves on a bridge port other than
 * its ingress; a flood set is within the bridge and excludes the ingress
 * port; the table never holds more than table_size entries.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "pf_log.h"
#include "pf_stage.h"
#include "pf_stages.h"
#include "pf_topo.h"

#define FUZZ_TARGET "fuzz_l2fib"
#define FUZZ_USE_EAL
#include "fuzz_common.h"

#define N_STATIONS 48
#define TABLE_SIZE 32
#define BURST 32

static const char topo_yaml[] =
	"ports:\n"
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\" }\n"
	"  p1: { device: net_null1 }\n"
	"  p2: { device: net_null2 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1, p2], next: l2 }\n"
	"  l2: { type: l2fib, ports: [p0, p1, p2], table_size: 32, age_s: 30, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1, p2] }\n"
	"runtime: { clock: pcap }\n"
	"lcores: { 1: [rx, l2, tx] }\n";

static struct rte_mempool *pool;
static uint8_t macs[N_STATIONS][6];
static struct pf_stage *st;
static struct pf_topo *topo;

static void
free_last_stage(void)
{
	/* The stage's own allocations hang off DPDK memory, which LeakSanitizer
	 * does not scan: free the last stage before EAL goes (atexit handlers
	 * run in reverse order, so this one runs before the EAL teardown). */
	pf_stage_destroy(st);
	pf_topo_free(topo);
	st = NULL;
	topo = NULL;
}

static void
setup(void)
{
	int i;

	fuzz_eal_setup("128");
	atexit(free_last_stage);
	pf_log_init();
	rte_log_set_level(pf_logtype, RTE_LOG_ERR);   /* one init line per input otherwise */
	pool = rte_pktmbuf_pool_create("fuzz_l2fib", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	CHECK(pool != NULL);
	for (i = 0; i < N_STATIONS; i++) {
		uint8_t m[6] = { 0x02, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i };

		memcpy(macs[i], m, 6);
	}
	macs[40][0] = 0x01, macs[40][1] = 0x00, macs[40][2] = 0x5e;     /* multicast */
	memset(macs[41], 0, 6);                                          /* zero */
	memset(macs[42], 0xff, 6);                                       /* broadcast */
	memcpy(macs[43], (uint8_t[]){ 0x01, 0x80, 0xc2, 0, 0, 0x0e }, 6); /* reserved */
	memcpy(macs[44], (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x10 }, 6);      /* p0's own */
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

static uint64_t
gauge(const struct pf_stage *st, const char *name)
{
	struct pf_gauge g[64];
	uint16_t i, n = pf_stage_gauges(st, g, 64);

	for (i = 0; i < n; i++)
		if (strcmp(g[i].name, name) == 0)
			return g[i].value;
	CHECK(0);
	return 0;
}

static void
run_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t edge[BURST], in_port[BURST], i, dropped = 0, all;
	uint64_t before = drop_sum(st);

	for (i = 0; i < n; i++)
		in_port[i] = pf_meta(pkts[i])->in_port;
	all = st->ops->dp.process_burst(st, pkts, n, edge);
	for (i = 0; all != PF_EDGE_MIXED && i < n; i++)
		edge[i] = all;
	for (i = 0; i < n; i++) {
		const struct pf_meta *md = pf_meta(pkts[i]);

		if (edge[i] == PF_EDGE_DROP) {
			dropped++;
			continue;
		}
		if (md->out_port == PF_PORT_FLOOD) {
			CHECK((md->flood_mask & ~0x7u) == 0);
			CHECK(!(md->flood_mask & (1u << in_port[i])));
		} else {
			CHECK(md->out_port < 3);
			CHECK(md->out_port != in_port[i]);
		}
	}
	CHECK(drop_sum(st) - before == dropped);
	CHECK(gauge(st, "entries") <= TABLE_SIZE);
	rte_pktmbuf_free_bulk(pkts, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000000000ull;
	uint16_t n = 0;
	size_t off;

	if (pool == NULL)
		setup();
	/* A fresh stage per input: sequences do not leak into each other. */
	if (st != NULL) {
		pf_stage_destroy(st);
		pf_topo_free(topo);
	}
	{
		struct pf_errs errs = { 0 };
		int si;

		CHECK(pf_topo_load_string("fuzz_l2fib.yaml", topo_yaml, &topo, &errs) == 0);
		si = pf_topo_stage_index(topo, "l2");
		CHECK(pf_stage_create(&st, &topo->stages[si], topo, &errs) == 0);
	}
	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(now);
	for (off = 0; off + 4 <= size; off += 4) {
		const uint8_t *op = data + off;
		struct rte_mbuf *m;
		uint8_t *f;
		struct pf_meta *md;

		if (op[0] & 0x8) {
			if (n != 0)
				run_burst(st, pkts, n), n = 0;
			now += (uint64_t)op[3] * 1000000000ull;
			pf_clock_advance_ns(now);
		}
		m = rte_pktmbuf_alloc(pool);
		CHECK(m != NULL);
		f = (uint8_t *)rte_pktmbuf_append(m, 60);
		CHECK(f != NULL);
		memset(f, 0, 60);
		memcpy(f, macs[op[2] % N_STATIONS], 6);
		memcpy(f + 6, macs[op[1] % N_STATIONS], 6);
		f[12] = 0x88, f[13] = 0xb5;
		md = pf_meta(m);
		memset(md, 0, sizeof(*md));
		md->in_port = (op[0] & 3) == 3 ? 0 : op[0] & 3;
		md->out_port = PF_PORT_NONE;
		md->l2_len = 14;
		md->cls = PF_CLASS_OTHER;
		if (f[0] & 1)
			md->flags |= PF_META_L2_MCAST;
		if ((f[0] & f[1] & f[2] & f[3] & f[4] & f[5]) == 0xff)
			md->flags |= PF_META_L2_BCAST;
		pkts[n++] = m;
		if (n == BURST || (op[0] & 0x4))
			run_burst(st, pkts, n), n = 0;
		if (st->ops->dp.idle != NULL && (op[0] & 0x10))
			st->ops->dp.idle(st, pf_now_ns());
	}
	if (n != 0)
		run_burst(st, pkts, n);
	return 0;
}
