/* SPDX-License-Identifier: BSD-3-Clause */
/* The rebalance advisor's placement function, on synthetic loads. */
#include <errno.h>
#include <string.h>

#include "pf_placement.h"
#include "pf_test.h"

#define HZ 2e9

/* A chain s0 -> s1 -> ... with @p pps through every edge. */
static void
chain(struct pf_place_input *in, uint16_t n, const double *cpp, double pps, uint16_t lcores)
{
	uint16_t i;

	memset(in, 0, sizeof(*in));
	in->n_stages = n;
	in->n_lcores = lcores;
	in->cross_cycles = 130;
	in->hz = HZ;
	for (i = 0; i < n; i++)
		in->load[i] = cpp[i] * pps;
	for (i = 0; i + 1 < n; i++) {
		in->edges[in->n_edges].from = i;
		in->edges[in->n_edges].to = i + 1;
		in->edges[in->n_edges++].pps = pps;
	}
}

/* Cheap stages stay fused: splitting them would add more than it saves. */
static void
test_light_stages_fuse(void **state)
{
	const double cpp[] = { 50, 20, 40 };
	struct pf_place_input in;
	struct pf_place_result res;

	chain(&in, 3, cpp, 1e6, 3);
	in.current[0] = 0;
	in.current[1] = 1;
	in.current[2] = 2;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_true(res.exhaustive);
	/* Split: busiest = 50 + 130 (s2's lcore pays the crossing) = 170 cycles/pkt. */
	assert_true(res.busiest_before == 170e6);
	/* Fused: 110 cycles/pkt on one lcore, no crossing. */
	assert_true(res.busiest_after == 110e6);
	assert_int_equal(res.lcore[0], res.lcore[1]);
	assert_int_equal(res.lcore[1], res.lcore[2]);
	assert_int_equal(res.lcores_used, 1);
}

/* A heavy stage is split from the light ones after it; it keeps its
 * producer, since a crossing into it would cost more than the producer. */
static void
test_heavy_stage_alone(void **state)
{
	const double cpp[] = { 60, 900, 60, 60 };
	struct pf_place_input in;
	struct pf_place_result res;
	uint16_t i;

	chain(&in, 4, cpp, 1e6, 2);
	for (i = 0; i < 4; i++)
		in.current[i] = 0;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_true(res.busiest_before == 1080e6);
	assert_int_equal(res.lcore[0], res.lcore[1]);
	assert_int_not_equal(res.lcore[1], res.lcore[2]);
	assert_int_equal(res.lcore[2], res.lcore[3]);
	/* 60 + 900 = 960 beats heavy alone (900 + 130 crossing = 1030); the
	 * other lcore carries 60 + 60 + 130 for the crossing = 250. */
	assert_true(res.busiest_after == 960e6);
	assert_int_equal(res.busiest_lcore_after, res.lcore[1]);
}

/* A map that is already best is kept: no moves for nothing. */
static void
test_keeps_a_good_map(void **state)
{
	const double cpp[] = { 500, 500 };
	struct pf_place_input in;
	struct pf_place_result res;

	chain(&in, 2, cpp, 1e6, 2);
	in.cross_cycles = 0;
	in.current[0] = 1;
	in.current[1] = 0;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_int_equal(res.moves, 0);
	assert_int_equal(res.lcore[0], 1);
	assert_int_equal(res.lcore[1], 0);
	assert_true(res.busiest_after == res.busiest_before);
}

/* The proposal never exceeds the lcores given and never gets worse. */
static void
test_random_never_worse(void **state)
{
	struct pf_place_input in;
	struct pf_place_result res;
	double loads[PF_PLACE_MAX_LCORES];
	unsigned int seed = 7, round;
	uint16_t i;

	for (round = 0; round < 200; round++) {
		double cpp[8];
		uint16_t n = 1 + rand_r(&seed) % 8, l = 1 + rand_r(&seed) % 4;

		for (i = 0; i < n; i++)
			cpp[i] = 10 + rand_r(&seed) % 1000;
		chain(&in, n, cpp, 1e5 + rand_r(&seed) % 1000000, l);
		for (i = 0; i < n; i++)
			in.current[i] = rand_r(&seed) % l;
		assert_int_equal(pf_place(&in, &res), 0);
		assert_true(res.busiest_after <= res.busiest_before);
		for (i = 0; i < n; i++)
			assert_true(res.lcore[i] >= 0 && res.lcore[i] < l);
		pf_place_lcore_loads(&in, res.lcore, loads);
		for (i = 0; i < l; i++)
			assert_true(loads[i] <= res.busiest_after);
	}
}

/* Too many maps to search: greedy placement, still balanced. */
static void
test_greedy_large(void **state)
{
	struct pf_place_input in;
	struct pf_place_result res;
	double cpp[24];
	uint16_t i;

	for (i = 0; i < 24; i++)
		cpp[i] = 100;
	chain(&in, 24, cpp, 1e6, 4);
	in.cross_cycles = 0;
	for (i = 0; i < 24; i++)
		in.current[i] = 0;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_false(res.exhaustive);
	assert_true(res.busiest_after == 600e6);
	assert_int_equal(res.lcores_used, 4);
}

static void
test_bad_input(void **state)
{
	struct pf_place_input in;
	struct pf_place_result res;
	const double cpp[] = { 1 };

	chain(&in, 1, cpp, 1, 2);
	in.current[0] = 5;
	assert_int_equal(pf_place(&in, &res), -EINVAL);
	in.current[0] = 0;
	in.n_lcores = 0;
	assert_int_equal(pf_place(&in, &res), -EINVAL);
}

/* Bit l set when a stage of @p res runs on lcore l. */
static uint32_t
used_mask(const struct pf_place_input *in, const struct pf_place_result *res)
{
	uint32_t m = 0;
	uint16_t i;

	for (i = 0; i < in->n_stages; i++)
		m |= 1u << res->lcore[i];
	return m;
}

/*
 * Lcores 0 and 1 are pinned to CPU 0, lcore 2 to CPU 1: three heavy stages
 * on lcore 0 spread over two lcores with a CPU each (0 or 1, and 2), never
 * over 0 and 1, which would only take turns. The greedy path keeps to it too.
 */
static void
test_no_shared_cpu(void **state)
{
	const double cpp[] = { 900, 900, 900 };
	struct pf_place_input in;
	struct pf_place_result res;
	uint16_t i;

	chain(&in, 3, cpp, 1e6, 3);
	in.cpus[0] = in.cpus[1] = 1;
	in.cpus[2] = 2;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_false(res.current_shares);
	assert_int_not_equal(used_mask(&in, &res) & 3, 3);
	assert_true(used_mask(&in, &res) & 4);
	assert_int_equal(res.lcores_used, 2);
	/* Without the CPU sets, all three would be used. */
	memset(in.cpus, 0, sizeof(in.cpus));
	assert_int_equal(pf_place(&in, &res), 0);
	assert_int_equal(res.lcores_used, 3);
	/* Greedy (24 stages, 3 lcores): the same rule. */
	{
		double c24[24];

		for (i = 0; i < 24; i++)
			c24[i] = 100;
		chain(&in, 24, c24, 1e6, 3);
		in.cross_cycles = 0;
		in.cpus[0] = in.cpus[1] = 1;
		in.cpus[2] = 2;
		assert_int_equal(pf_place(&in, &res), 0);
		assert_false(res.exhaustive);
		assert_int_not_equal(used_mask(&in, &res) & 3, 3);
		assert_int_equal(res.lcores_used, 2);
	}
}

/* Four lcores floating over two CPUs: at most two of them carry stages. */
static void
test_floating_lcores(void **state)
{
	const double cpp[] = { 900, 900, 900, 900 };
	struct pf_place_input in;
	struct pf_place_result res;
	uint16_t l;

	chain(&in, 4, cpp, 1e6, 4);
	in.cross_cycles = 0;
	for (l = 0; l < 4; l++)
		in.cpus[l] = 3;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_int_equal(res.lcores_used, 2);
	assert_true(res.busiest_after == 1800e6);
}

/*
 * Running on lcores 0 and 1, which share CPU 0: whatever the loads say, the
 * proposal moves off the shared CPU (lcore 2 has CPU 1 to itself).
 */
static void
test_running_shared(void **state)
{
	const double cpp[] = { 100, 100 };
	struct pf_place_input in;
	struct pf_place_result res;

	chain(&in, 2, cpp, 1e6, 3);
	in.min_gain = 0.10;
	in.current[1] = 1;
	in.cpus[0] = in.cpus[1] = 1;
	in.cpus[2] = 2;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_true(res.current_shares);
	assert_int_not_equal(used_mask(&in, &res) & 3, 3);
	assert_true(res.moves >= 1);
}

/*
 * Lcore 0 runs s0 (600) and s1 (400), lcore 1 s2 (550), in millions of
 * cycles/s, no crossing cost: the best move (s1 to lcore 1) makes the
 * busiest 950 instead of 1000, 5 %: kept at min_gain 10 %, moved at 1 %.
 */
static void
test_min_gain(void **state)
{
	const double cpp[] = { 600, 400, 550 };
	struct pf_place_input in;
	struct pf_place_result res;

	chain(&in, 3, cpp, 1e6, 2);
	in.cross_cycles = 0;
	in.current[2] = 1;
	in.min_gain = 0.10;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_int_equal(res.moves, 0);
	assert_true(res.kept);
	assert_true(res.busiest_after == res.busiest_before);
	in.min_gain = 0.01;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_int_equal(res.moves, 1);
	assert_false(res.kept);
	assert_true(res.busiest_after == 950e6);
}

/* The crossing a stage measured comes off its load; nothing goes below 0. */
static void
test_own_loads(void **state)
{
	const double cpp[] = { 300, 200, 100 };
	struct pf_place_input in;

	chain(&in, 3, cpp, 1e6, 3);
	in.current[0] = 0;
	in.current[1] = 1;           /* s0 -> s1 crosses: s1 measured 200 + 130 */
	in.current[2] = 1;
	in.load[1] = 330e6;
	in.load[2] = 100e6;
	pf_place_own_loads(&in);
	assert_true(in.load[0] == 300e6);
	assert_true(in.load[1] == 200e6);
	assert_true(in.load[2] == 100e6);
	in.load[1] = 50e6;            /* measured less than the model's crossing */
	pf_place_own_loads(&in);
	assert_true(in.load[1] == 0);
}

/*
 * The producer's share of a crossing (its enqueue, its mbufs coming back
 * cold) lands on the producer's lcore: two stages of 100 cycles, a crossing
 * of 100. All on the consumer, a split costs 200 on it, no better than fused:
 * kept. Half on each side, a split costs 150 on each: split. A share outside
 * 0..1 is refused; own loads take each side's share off each stage.
 */
static void
test_producer_share(void **state)
{
	const double cpp[] = { 100, 100 };
	struct pf_place_input in;
	struct pf_place_result res;

	chain(&in, 2, cpp, 1e6, 2);
	in.cross_cycles = 100;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_true(res.busiest_after == 200e6);
	assert_int_equal(res.lcore[0], res.lcore[1]);

	in.cross_prod_share = 0.5;
	assert_int_equal(pf_place(&in, &res), 0);
	assert_true(res.busiest_after == 150e6);
	assert_int_not_equal(res.lcore[0], res.lcore[1]);

	in.cross_prod_share = 1.5;
	assert_int_equal(pf_place(&in, &res), -EINVAL);
	in.cross_prod_share = -0.1;
	assert_int_equal(pf_place(&in, &res), -EINVAL);

	in.cross_prod_share = 0.25;
	in.current[1] = 1;           /* running split: s0 measured 100 + 25, s1 100 + 75 */
	in.load[0] = 125e6;
	in.load[1] = 175e6;
	pf_place_own_loads(&in);
	assert_true(in.load[0] == 100e6);
	assert_true(in.load[1] == 100e6);
}

/*
 * No flapping: advice is remembered; asked again with the load within 25 %
 * (noise), the same proposal while it is not applied, and keep once it is;
 * a load that moved by more places anew.
 */
static void
test_hysteresis(void **state)
{
	const double cpp[] = { 900, 900, 900 };
	struct pf_place_input in, noisy;
	struct pf_place_result res, again;
	struct pf_place_memory mem = { 0 };
	uint16_t i;

	chain(&in, 3, cpp, 1e6, 3);
	in.min_gain = 0.10;
	assert_false(pf_place_recall(&mem, &in, 0.25, &res));
	assert_int_equal(pf_place(&in, &res), 0);
	assert_int_equal(res.moves, 2);
	pf_place_remember(&mem, &in, &res);
	/* Not applied, the load a little different: the same proposal. */
	noisy = in;
	noisy.load[0] *= 1.1;
	noisy.load[2] *= 0.92;
	assert_true(pf_place_recall(&mem, &noisy, 0.25, &again));
	assert_true(again.held);
	assert_memory_equal(again.lcore, res.lcore, sizeof(int) * 3);
	/* Applied: keep, whatever the noise would suggest. */
	for (i = 0; i < 3; i++)
		noisy.current[i] = res.lcore[i];
	noisy.load[1] *= 1.15;
	assert_true(pf_place_recall(&mem, &noisy, 0.25, &again));
	assert_int_equal(again.moves, 0);
	assert_memory_equal(again.lcore, res.lcore, sizeof(int) * 3);
	/* The load really changed (one stage gone quiet): placed anew. */
	noisy.load[1] = 0;
	noisy.load[2] = 0;
	assert_false(pf_place_recall(&mem, &noisy, 0.25, &again));
	/* The map changed otherwise (an operator's edit): placed anew. */
	noisy = in;
	noisy.current[0] = 2;
	assert_false(pf_place_recall(&mem, &noisy, 0.25, &again));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_light_stages_fuse),
		cmocka_unit_test(test_heavy_stage_alone),
		cmocka_unit_test(test_keeps_a_good_map),
		cmocka_unit_test(test_random_never_worse),
		cmocka_unit_test(test_greedy_large),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_no_shared_cpu),
		cmocka_unit_test(test_floating_lcores),
		cmocka_unit_test(test_running_shared),
		cmocka_unit_test(test_min_gain),
		cmocka_unit_test(test_own_loads),
		cmocka_unit_test(test_producer_share),
		cmocka_unit_test(test_hysteresis),
	};

	return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
