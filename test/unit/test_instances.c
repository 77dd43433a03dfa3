/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage instances (`instances: N`) whose type shares its table: l2fib. A MAC
 * learned by one instance is known to the others, only instance 0 ages and
 * removes, a removed position is reused only after a grace period, and two
 * instances learning at once on two lcores leave exactly one entry per MAC
 * with exact counts.
 */
#include <string.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "pf_test.h"

static const char l2_yaml[] =
	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"  p1: { device: net_null1 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1], next: l2 }\n"
	"  l2: { type: l2fib, instances: 2, ports: [p0, p1], age_s: 10, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores:\n"
	"  1: [rx, l2.0, l2.1, tx]\n";

static struct pf_topo *topo;
static struct pf_stage *inst[2];

static int
setup(void **state)
{
	char *argv[] = { (char *)"unit", (char *)"--no-huge", (char *)"-m", (char *)"256",
			 (char *)"--no-pci", (char *)"--no-shconf", (char *)"--log-level=lib.eal:error",
			 (char *)"--no-telemetry", (char *)"--lcores=0@0,1@1",
			 (char *)pf_test_prefix_arg("instances"), NULL };
	struct pf_errs errs = { 0 };
	int i0;

	(void)state;
	if (pf_test_eal_start(RTE_DIM(argv) - 1, argv) < 0)
		return -1;
	if (pf_topo_load_string("inline.yaml", l2_yaml, &topo, &errs) < 0)
		return -1;
	i0 = pf_topo_group_index(topo, "l2");
	if (i0 < 0 || pf_stage_create_instance(&inst[0], &topo->stages[i0], topo, NULL, &errs) < 0 ||
	    pf_stage_create_instance(&inst[1], &topo->stages[i0 + 1], topo, inst[0], &errs) < 0) {
		pf_errs_print(&errs, stderr);
		return -1;
	}
	pf_clock_set_mode(PF_CLOCK_PCAP);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	/* Instance 0 first: the table lives on until the last instance goes. */
	pf_stage_destroy(inst[0]);
	pf_stage_destroy(inst[1]);
	pf_topo_free(topo);
	return 0;
}

static struct rte_mbuf *
frame(uint32_t dst, uint32_t src, uint16_t in_port)
{
	uint8_t b[60] = { 0x02, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0x08, 0x00 };

	b[2] = (uint8_t)(dst >> 24), b[3] = (uint8_t)(dst >> 16);
	b[4] = (uint8_t)(dst >> 8), b[5] = (uint8_t)dst;
	b[8] = (uint8_t)(src >> 24), b[9] = (uint8_t)(src >> 16);
	b[10] = (uint8_t)(src >> 8), b[11] = (uint8_t)src;
	if (dst == 0xffffffff)
		memset(b, 0xff, 6);
	return pf_test_mbuf(b, sizeof(b), in_port);
}

static uint64_t
gauge(const struct pf_stage *st, const char *name)
{
	struct pf_gauge g[32];
	uint16_t n = pf_stage_gauges(st, g, 32), i;

	for (i = 0; i < n; i++)
		if (strcmp(g[i].name, name) == 0)
			return g[i].value;
	fail_msg("no gauge %s", name);
	return 0;
}

/* Send one frame through instance @p k; returns its out_port (or edge 0 as 0xdead). */
static uint16_t
through(int k, uint32_t dst, uint32_t src, uint16_t in_port)
{
	struct rte_mbuf *m = frame(dst, src, in_port);
	uint16_t edge, out;

	pf_test_process(inst[k], &m, 1, &edge);
	out = edge == 0 ? 0xdead : pf_meta(m)->out_port;
	rte_pktmbuf_free(m);
	return out;
}

static uint64_t
ctr(const char *name)
{
	return pf_test_ctr(inst[0], name) + pf_test_ctr(inst[1], name);
}

/* What one instance learns, the other forwards by; both see one table. */
static void
test_shared_learning(void **state)
{
	pf_clock_advance_ns(1000000000ull);
	assert_int_equal(through(0, 0xffffffff, 0xa, 0), PF_PORT_FLOOD);   /* learn A on p0 */
	assert_int_equal(through(1, 0xa, 0xb, 1), 0);                      /* B->A: hit */
	assert_int_equal(through(0, 0xb, 0xa, 0), 1);                      /* A->B: hit */
	assert_int_equal(pf_test_ctr(inst[0], "learned"), 1);
	assert_int_equal(pf_test_ctr(inst[1], "learned"), 1);
	assert_int_equal(ctr("hit"), 2);
	assert_int_equal(gauge(inst[0], "entries"), 2);
	assert_int_equal(gauge(inst[1], "entries"), 2);
	/* A station move seen by instance 1 redirects instance 0's traffic. */
	assert_int_equal(through(1, 0xffffffff, 0xa, 1), PF_PORT_FLOOD);
	assert_int_equal(pf_test_ctr(inst[1], "mac_move"), 1);
	assert_int_equal(through(0, 0xa, 0xb, 0), 1);
	assert_int_equal(gauge(inst[0], "entries"), 2);
}

/* Only instance 0 ages; the removed key's position is freed after the grace
 * period (at once here: no runtime) and the MAC is learned anew. */
static void
test_shared_aging(void **state)
{
	uint64_t aged0 = ctr("aged"), learned0 = ctr("learned");
	int i;

	pf_clock_advance_ns(30000000000ull);
	inst[1]->ops->dp.idle(inst[1], pf_now_ns());
	assert_int_equal(ctr("aged"), aged0);                /* instance 1 never sweeps */
	assert_int_equal(gauge(inst[1], "entries"), 2);
	/* The idle sweep checks 4096 positions per call: enough calls to pass them all. */
	for (i = 0; i < 32; i++)
		inst[0]->ops->dp.idle(inst[0], pf_now_ns());
	assert_int_equal(pf_test_ctr(inst[0], "aged"), 2);
	assert_int_equal(gauge(inst[1], "entries"), 0);
	/* Unknown again: flooded, then learned anew (by instance 1). */
	assert_int_equal(through(0, 0xa, 0xc, 0), PF_PORT_FLOOD);
	assert_int_equal(through(1, 0xffffffff, 0xa, 1), PF_PORT_FLOOD);
	assert_int_equal(through(0, 0xa, 0xc, 0), 1);
	assert_int_equal(ctr("learned"), learned0 + 2);
	assert_int_equal(gauge(inst[0], "entries"), 2);
}

#define RACE_MACS 4096
#define RACE_ROUNDS 8

struct race {
	int k;
	uint16_t port;
};

/* Learn RACE_MACS sources (half of them shared with the other lcore), in bursts. */
static int
race_worker(void *arg)
{
	const struct race *r = arg;
	struct rte_mbuf *pkts[32];
	uint16_t edge[32], i, j;
	int round;

	for (round = 0; round < RACE_ROUNDS; round++)
		for (i = 0; i < RACE_MACS; i += 32) {
			for (j = 0; j < 32; j++) {
				/* Shared MACs 0x1000.., own MACs 0x100000 * (k+1) + n. */
				uint32_t n = i + j, src = n % 2 == 0 ?
					0x1000 + n : 0x100000 * (uint32_t)(r->k + 1) + n;

				pkts[j] = frame(0xffffffff, src, r->port);
			}
			inst[r->k]->ops->dp.process_burst(inst[r->k], pkts, 32, edge);
			rte_pktmbuf_free_bulk(pkts, 32);
		}
	return 0;
}

/* Two lcores learn at once, the shared half from two ports (moves back and
 * forth): every MAC is in the table once, and the counts add up exactly. */
static void
test_concurrent_learning(void **state)
{
	struct race r0 = { 0, 0 }, r1 = { 1, 1 };
	uint64_t learned0 = ctr("learned"), entries0 = gauge(inst[0], "entries");
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	uint16_t out;

	if (worker >= RTE_MAX_LCORE)
		skip();
	assert_int_equal(rte_eal_remote_launch(race_worker, &r1, worker), 0);
	race_worker(&r0);
	rte_eal_wait_lcore(worker);
	/* Distinct sources: RACE_MACS/2 shared + RACE_MACS/2 own per instance. */
	assert_int_equal(gauge(inst[0], "entries"), entries0 + RACE_MACS / 2 * 3);
	assert_int_equal(ctr("learned"), learned0 + RACE_MACS / 2 * 3);
	assert_int_equal(ctr("fib_full") + ctr("l2_learn_nospace"), 0);
	/* A shared MAC ends on one port or the other: known, not flooded. */
	out = through(0, 0x1000, 0xd, 0);
	assert_true(out == 1 || out == 0xdead);      /* 0xdead: on p0, l2_same_port */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_learning),
		cmocka_unit_test(test_shared_aging),
		cmocka_unit_test(test_concurrent_learning),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
