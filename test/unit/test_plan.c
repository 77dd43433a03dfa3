/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The layout planner's model (app/console/pf_plan.h): given stage costs, a
 * hand-off cost and cores, the predicted Mpps of each candidate, worked by
 * hand in the comments.
 */
#include <errno.h>
#include <string.h>

#include "pf_plan.h"
#include "pf_test.h"

#define HZ 2.1e9
#define EPS 1e-6

/* rx (8 cycles) -> lpm (28) -> tx (14), I/O 35 a packet, hand-off 15 + 30. */
static void
l3(struct pf_plan_input *in, uint16_t cores, bool rss)
{
	static const double cpp[] = { 8, 28, 14 };
	uint16_t i;

	memset(in, 0, sizeof(*in));
	in->n_stages = 3;
	for (i = 0; i < 3; i++) {
		in->st[i].cpp = cpp[i];
		in->st[i].frac = 1;
	}
	in->st[0].source = true;
	in->n_edges = 2;
	in->e[0] = (struct pf_plan_edge){ .from = 0, .to = 1, .frac = 1 };
	in->e[1] = (struct pf_plan_edge){ .from = 1, .to = 2, .frac = 1 };
	in->hz = HZ;
	in->io_cycles = 35;
	in->handoff_prod = 15;
	in->handoff_cons = 30;
	in->cores = cores;
	in->rss = rss;
}

static const struct pf_plan_layout *
find(const struct pf_plan_layout *l, int n, enum pf_plan_kind k, uint16_t lcores)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i].kind == k && l[i].lcores == lcores)
			return &l[i];
	fail_msg("no %s layout on %u lcores", pf_plan_kind_name(k), lcores);
	return NULL;
}

/* One lcore: only fused, at hz / (8 + 35 + 28 + 14) = 24.71 Mpps. */
static void
test_fused(void **state)
{
	struct pf_plan_input in;
	struct pf_plan_layout out[PF_PLAN_MAX_LAYOUTS];
	int n;

	l3(&in, 1, true);
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].kind, PF_PLAN_FUSED);
	assert_float_equal(out[0].busiest, 85, EPS);
	assert_float_equal(out[0].mpps, HZ / 85 / 1e6, EPS);
}

/*
 * Two lcores, no RSS. Splits: [rx] | [lpm tx] costs 8 + 35 + 15 = 58 and
 * 42 + 30 = 72, so 72 (29.17 Mpps); [rx lpm] | [tx] 86 and 44, so 86. Fused
 * 85. No fan-out: on two lcores it would be the split [rx] | [lpm tx].
 */
static void
test_split(void **state)
{
	struct pf_plan_input in;
	struct pf_plan_layout out[PF_PLAN_MAX_LAYOUTS];
	const struct pf_plan_layout *s;
	int n;

	l3(&in, 2, false);
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(n, 2);
	s = find(out, n, PF_PLAN_SPLIT, 2);
	assert_float_equal(s->busiest, 72, EPS);
	assert_int_equal(s->group[0], 0);
	assert_int_equal(s->group[1], 1);
	assert_int_equal(s->group[2], 1);
	/* Best first. */
	assert_int_equal(out[0].kind, PF_PLAN_SPLIT);
	assert_int_equal(out[1].kind, PF_PLAN_FUSED);
	/* Every cut (a bench's own split): [rx] | [lpm tx] 72 and [rx lpm] | [tx] 86. */
	in.all_splits = true;
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(n, 3);
	assert_int_equal(out[2].kind, PF_PLAN_SPLIT);       /* after fused's 85 */
	assert_float_equal(out[2].busiest, 86, EPS);
	assert_int_equal(out[2].group[1], 0);
	assert_int_equal(out[2].group[2], 1);
	in.all_splits = false;
	/* A dearer hand-off makes fused the best: 58 + 50 > 85. */
	in.handoff_cons = 50;
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(out[0].kind, PF_PLAN_FUSED);
}

/*
 * RSS: affine copies split the input, each at the fused cost: 85 / 2 = 42.5
 * a packet, 49.41 Mpps; without affine half the packets cross: (85 + 45 / 2)
 * / 2 = 53.75. Three cores: 85 / 3, and the fan-out from one rx
 * max(43 + 15, (42 + 30) / 2) = 58.
 */
static void
test_rss(void **state)
{
	struct pf_plan_input in;
	struct pf_plan_layout out[PF_PLAN_MAX_LAYOUTS];
	int n;

	l3(&in, 3, true);
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_float_equal(find(out, n, PF_PLAN_RSS_AFFINE, 2)->busiest, 42.5, EPS);
	assert_float_equal(find(out, n, PF_PLAN_RSS_FANOUT, 2)->busiest, 53.75, EPS);
	assert_float_equal(find(out, n, PF_PLAN_RSS_AFFINE, 3)->busiest, 85.0 / 3, EPS);
	assert_float_equal(find(out, n, PF_PLAN_RSS_FANOUT, 3)->busiest,
			   (85 + 2.0 / 3 * 45) / 3, EPS);
	assert_float_equal(find(out, n, PF_PLAN_FANOUT, 3)->busiest, 58, EPS);
	assert_int_equal(find(out, n, PF_PLAN_FANOUT, 3)->copies, 2);
	/* The split over three: [rx] [lpm] [tx]: 58, 28 + 15 + 30 = 73, 14 + 30 = 44. */
	assert_float_equal(find(out, n, PF_PLAN_SPLIT, 3)->busiest, 73, EPS);
	assert_int_equal(out[0].kind, PF_PLAN_RSS_AFFINE);
	assert_int_equal(out[0].lcores, 3);
	assert_float_equal(out[0].mpps, HZ / (85.0 / 3) / 1e6, EPS);
	/*
	 * The hash and lists of a fan-out, 20 a packet, once per packet on the
	 * lcore that reads it: (85 + 20 + 45 / 2) / 2 = 63.75; from one rx,
	 * max(43 + 15 + 20, (42 + 30) / 2) = 78. Affine copies do not hash.
	 */
	in.fan = 20;
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_float_equal(find(out, n, PF_PLAN_RSS_FANOUT, 2)->busiest, 63.75, EPS);
	assert_float_equal(find(out, n, PF_PLAN_FANOUT, 3)->busiest, 78, EPS);
	assert_float_equal(find(out, n, PF_PLAN_RSS_AFFINE, 2)->busiest, 42.5, EPS);
}

/*
 * Where pipelining wins: a 400-cycle stage no RSS can spread (one queue)
 * and a single writer (no fan-out). Fused 8 + 35 + 400 + 300 + 14 = 757;
 * split [rx s1] | [s2 tx]: 443 + 15 and 314 + 30: 458, 1.65x fused. Three
 * lcores: [rx] [s1] [s2 tx] is 58, 30 + 400 + 15, 30 + 314: 445, and no
 * fan-out of the rest over two instances: s1 is a single writer.
 */
static void
test_pipeline_wins(void **state)
{
	struct pf_plan_input in;
	struct pf_plan_layout out[PF_PLAN_MAX_LAYOUTS];
	const struct pf_plan_layout *s;
	int n;

	l3(&in, 2, false);
	in.n_stages = 4;
	in.st[1].cpp = 400;
	in.st[1].single = true;
	in.st[2] = (struct pf_plan_stage){ .cpp = 300, .frac = 1 };
	in.st[3] = (struct pf_plan_stage){ .cpp = 14, .frac = 1 };
	in.n_edges = 3;
	in.e[2] = (struct pf_plan_edge){ .from = 2, .to = 3, .frac = 1 };
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(n, 2);
	s = find(out, n, PF_PLAN_SPLIT, 2);
	assert_float_equal(s->busiest, 458, EPS);
	assert_int_equal(out[0].kind, PF_PLAN_SPLIT);
	assert_float_equal(out[0].mpps / find(out, n, PF_PLAN_FUSED, 1)->mpps, 757.0 / 458, EPS);
	in.cores = 3;
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(n, 3);            /* fused and two splits: no fan-out past a single writer */
	assert_int_equal(out[0].kind, PF_PLAN_SPLIT);
	assert_int_equal(out[0].lcores, 3);
	assert_float_equal(out[0].busiest, 445, EPS);
	in.st[1].single = false;           /* now it may: max(43 + 15, (714 + 30) / 2) = 372 */
	n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS);
	assert_int_equal(out[0].kind, PF_PLAN_FANOUT);
	assert_float_equal(out[0].busiest, 372, EPS);
}

/* Fractions: a stage that sees a quarter of the packets costs a quarter; an unused edge nothing. */
static void
test_fractions(void **state)
{
	struct pf_plan_input in;
	double load[2];
	int map[3] = { 0, 1, 1 };

	l3(&in, 2, false);
	in.st[1].frac = 0.25;
	in.st[2].frac = 0.25;
	in.e[0].frac = 0.25;
	in.e[1].frac = 0.25;
	assert_float_equal(pf_plan_map_cost(&in, map, 2, load), 43 + 0.25 * 15, EPS);
	assert_float_equal(load[1], 0.25 * (28 + 14 + 30), EPS);
}

/*
 * Recycling: what leaves a source's lcore costs that lcore 20 more a packet
 * ([rx] | [lpm tx]: 58 + 20), and not on an edge between two other lcores
 * ([rx lpm] | [tx]: 86 + 20, [rx] [lpm] [tx]: lpm's lcore 30 + 28 + 15).
 */
static void
test_recycle(void **state)
{
	struct pf_plan_input in;
	double load[3];
	int a[3] = { 0, 1, 1 }, b[3] = { 0, 0, 1 }, c[3] = { 0, 1, 2 };

	l3(&in, 3, false);
	in.recycle = 20;
	assert_float_equal(pf_plan_map_cost(&in, a, 2, load), 78, EPS);
	assert_float_equal(pf_plan_map_cost(&in, b, 2, load), 106, EPS);
	pf_plan_map_cost(&in, c, 3, load);
	assert_float_equal(load[0], 78, EPS);
	assert_float_equal(load[1], 73, EPS);
	/* The fan-out: max(43 + 15 + 20, (280 + 14 + 30) / 2). */
	in.st[1].cpp = 280;
	in.rss = false;
	{
		struct pf_plan_layout out[PF_PLAN_MAX_LAYOUTS];
		int n = pf_plan(&in, out, PF_PLAN_MAX_LAYOUTS), i;

		for (i = 0; i < n && out[i].kind != PF_PLAN_FANOUT; i++)
			;
		assert_true(i < n);
		assert_float_equal(out[i].busiest, (280 + 14 + 30) / 2.0, EPS);
	}
}

static void
test_bad_input(void **state)
{
	struct pf_plan_input in;
	struct pf_plan_layout out[4];

	l3(&in, 0, false);
	assert_int_equal(pf_plan(&in, out, 4), -EINVAL);
	l3(&in, 2, false);
	in.e[1].to = 7;
	assert_int_equal(pf_plan(&in, out, 4), -EINVAL);
	l3(&in, 2, false);
	assert_int_equal(pf_plan(&in, out, 0), -EINVAL);
	/* Room for fewer than all: the first ones found, still sorted. */
	assert_int_equal(pf_plan(&in, out, 2), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fused),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_rss),
		cmocka_unit_test(test_pipeline_wins),
		cmocka_unit_test(test_fractions),
		cmocka_unit_test(test_recycle),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
