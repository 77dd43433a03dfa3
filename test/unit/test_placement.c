/* SPDX-License-Identifier: BSD-3-Clause */
/* The rebalance advisor's placement function, on synthetic loads. */
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
	};

	return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
