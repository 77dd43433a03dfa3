/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The layout planner's model (pf_plan.h): pure arithmetic on measured costs,
 * so the unit tests give costs and check the predictions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pf_plan.h"

const char *
pf_plan_kind_name(enum pf_plan_kind k)
{
	static const char *const names[] = {
		[PF_PLAN_FUSED] = "fused", [PF_PLAN_SPLIT] = "split",
		[PF_PLAN_RSS_AFFINE] = "rss-affine", [PF_PLAN_RSS_FANOUT] = "rss-fanout",
		[PF_PLAN_FANOUT] = "fanout",
	};

	return (unsigned int)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

double
pf_plan_map_cost(const struct pf_plan_input *in, const int *map, uint16_t n_lcores,
		 double *load)
{
	bool src_lcore[PF_PLAN_MAX_STAGES] = { false };
	double busiest = 0;
	uint16_t i;

	memset(load, 0, sizeof(*load) * n_lcores);
	for (i = 0; i < in->n_stages; i++) {
		load[map[i]] += in->st[i].cpp * in->st[i].frac;
		if (in->st[i].source) {
			load[map[i]] += in->io_cycles * in->st[i].frac;
			src_lcore[map[i]] = true;
		}
	}
	for (i = 0; i < in->n_edges; i++) {
		const struct pf_plan_edge *e = &in->e[i];

		if (map[e->from] == map[e->to])
			continue;
		load[map[e->from]] += (in->handoff_prod +
				       (src_lcore[map[e->from]] ? in->recycle : 0)) * e->frac;
		load[map[e->to]] += in->handoff_cons * e->frac;
	}
	for (i = 0; i < n_lcores; i++)
		if (load[i] > busiest)
			busiest = load[i];
	return busiest;
}

static void
finish(const struct pf_plan_input *in, struct pf_plan_layout *l, double busiest)
{
	l->busiest = busiest;
	l->mpps = busiest > 0 ? in->hz / busiest / 1e6 : 0;
}

/* Everything on one lcore: what one copy of the pipeline costs per input packet. */
static double
fused_cost(const struct pf_plan_input *in)
{
	int map[PF_PLAN_MAX_STAGES] = { 0 };
	double load[1];

	return pf_plan_map_cost(in, map, 1, load);
}

/*
 * The best cut of the stage order into @p k contiguous groups (every cut
 * with in->all_splits, at most @p max) into @p out: every choice of k-1 cut
 * points among n-1 (at most C(63, k-1); the caller keeps k small or the
 * stages few), the busiest lcore decides. Returns how many it wrote.
 */
static int
splits(const struct pf_plan_input *in, uint16_t k, struct pf_plan_layout *out, int max)
{
	uint16_t n = in->n_stages, cut[PF_PLAN_MAX_STAGES], j, i;
	int map[PF_PLAN_MAX_STAGES], got = 0;
	double load[PF_PLAN_MAX_STAGES], b;
	unsigned long tries = 0;

	if (k < 2 || k > n || max <= 0)
		return 0;
	/* cut[j]: first stage of group j + 1; start with 1, 2, .., k-1. */
	for (j = 0; j + 1 < k; j++)
		cut[j] = (uint16_t)(j + 1);
	for (;;) {
		for (i = 0, j = 0; i < n; i++) {
			if (j + 1 < k && i == cut[j])
				j++;
			map[i] = j;
		}
		b = pf_plan_map_cost(in, map, k, load);
		/* One slot holding the best so far, or (all_splits) a slot each. */
		if (got == 0 || (in->all_splits && got < max) || b < out[got - 1].busiest) {
			struct pf_plan_layout *l = &out[got == 0 || in->all_splits ? got++ : got - 1];

			memset(l, 0, sizeof(*l));
			l->kind = PF_PLAN_SPLIT;
			l->lcores = k;
			l->copies = 1;
			for (i = 0; i < n; i++)
				l->group[i] = (uint8_t)map[i];
			finish(in, l, b);
		}
		if (++tries > 200000)
			break;
		/* Next combination of k-1 cut points in 1..n-1. */
		for (j = (uint16_t)(k - 1); j-- > 0;)
			if (cut[j] < n - (k - 1 - j)) {
				cut[j]++;
				for (i = (uint16_t)(j + 1); i + 1 < k; i++)
					cut[i] = (uint16_t)(cut[i - 1] + 1);
				break;
			}
		if (j == UINT16_MAX || k == 1)
			break;
	}
	return got;
}

/* Cycles per input packet of the first edges after the sources (where a fan-out hashes). */
static double
source_out_frac(const struct pf_plan_input *in)
{
	double f = 0;
	uint16_t i;

	for (i = 0; i < in->n_edges; i++)
		if (in->st[in->e[i].from].source && !in->st[in->e[i].to].source)
			f += in->e[i].frac;
	return f;
}

static int
cmp_mpps(const void *a, const void *b)
{
	const struct pf_plan_layout *x = a, *y = b;

	if (x->mpps != y->mpps)
		return x->mpps < y->mpps ? 1 : -1;
	/* Equal: fewer lcores first, then the simpler kind. */
	if (x->lcores != y->lcores)
		return x->lcores < y->lcores ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

int
pf_plan(const struct pf_plan_input *in, struct pf_plan_layout *out, int max)
{
	struct pf_plan_layout l;
	double fused, rest = 0, rx = 0, f0;
	bool replicable = true, any_source = false;
	uint16_t i, k, n = 0;

	if (in->n_stages == 0 || in->n_stages > PF_PLAN_MAX_STAGES ||
	    in->n_edges > PF_PLAN_MAX_EDGES || in->cores == 0 || in->hz <= 0 || max <= 0)
		return -EINVAL;
	for (i = 0; i < in->n_edges; i++)
		if (in->e[i].from >= in->n_stages || in->e[i].to >= in->n_stages)
			return -EINVAL;
	for (i = 0; i < in->n_stages; i++) {
		if (in->st[i].source) {
			any_source = true;
			rx += (in->st[i].cpp + in->io_cycles) * in->st[i].frac;
		} else {
			rest += in->st[i].cpp * in->st[i].frac;
			replicable = replicable && !in->st[i].single;
		}
	}
	fused = fused_cost(in);
	f0 = source_out_frac(in);

	memset(&l, 0, sizeof(l));
	l.kind = PF_PLAN_FUSED;
	l.lcores = 1;
	l.copies = 1;
	finish(in, &l, fused);
	if (n < max)
		out[n++] = l;
	for (k = 2; k <= in->cores && k <= in->n_stages && k <= 8; k++)
		n = (uint16_t)(n + splits(in, k, out + n, max - n));
	for (k = 2; k <= in->cores && any_source; k++) {
		if (in->rss && replicable) {
			memset(&l, 0, sizeof(l));
			l.kind = PF_PLAN_RSS_AFFINE;
			l.lcores = k;
			l.copies = k;
			/* Each lcore forwards its share, 1/k of the input, at the fused cost. */
			finish(in, &l, fused / k);
			if (n < max)
				out[n++] = l;
			memset(&l, 0, sizeof(l));
			l.kind = PF_PLAN_RSS_FANOUT;
			l.lcores = k;
			l.copies = k;
			finish(in, &l, (fused + f0 * in->fan + (double)(k - 1) / k * f0 *
					(in->handoff_prod + in->recycle + in->handoff_cons)) / k);
			if (n < max)
				out[n++] = l;
		}
		/* With two lcores it is the split "sources | the rest": listed as that. */
		if (replicable && rest > 0 && k > 2) {
			/* rx alone, the rest shared by k-1 instances, all of it crossing. */
			double a = rx + (in->handoff_prod + in->recycle + in->fan) * f0;
			double b = (rest + in->handoff_cons * f0) / (k - 1);

			memset(&l, 0, sizeof(l));
			l.kind = PF_PLAN_FANOUT;
			l.lcores = k;
			l.copies = (uint16_t)(k - 1);
			for (i = 0; i < in->n_stages; i++)
				l.group[i] = in->st[i].source ? 0 : 1;
			finish(in, &l, a > b ? a : b);
			if (n < max)
				out[n++] = l;
		}
	}
	qsort(out, n, sizeof(*out), cmp_mpps);
	return n;
}
