/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage placement (app/console/pf_placement.h): exhaustive search when the
 * space is small (lcores^stages <= 2^20, which covers real pipelines),
 * otherwise largest-load-first greedy placement; only maps whose lcores can
 * each have a CPU of their own; a move only for a real gain; the last
 * advice held while the load stays (hysteresis).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pf_placement.h"

void
pf_place_lcore_loads(const struct pf_place_input *in, const int *map, double *out)
{
	uint16_t i;

	for (i = 0; i < in->n_lcores; i++)
		out[i] = 0;
	for (i = 0; i < in->n_stages; i++)
		out[map[i]] += in->load[i];
	for (i = 0; i < in->n_edges; i++) {
		const struct pf_place_edge *e = &in->edges[i];

		if (map[e->from] != map[e->to]) {
			out[map[e->from]] += e->pps * in->cross_cycles * in->cross_prod_share;
			out[map[e->to]] += e->pps * in->cross_cycles * (1 - in->cross_prod_share);
		}
	}
}

struct score {
	double busiest;
	int busiest_lcore;
	uint16_t moves;
	uint16_t used;
	uint32_t used_mask;         /* bit l: lcore l runs a stage */
};

#define FIT_MEMO_LCORES 16         /* up to this many lcores, fits() remembers each used set */

/* Give lcore @p l a CPU (augmenting path over @p owner: CPU -> lcore, -1 free). */
static bool
cpu_augment(const struct pf_place_input *in, int l, int *owner, uint64_t *seen)
{
	uint64_t c = in->cpus[l];
	int cpu;

	for (cpu = 0; cpu < 64; cpu++) {
		if (!(c >> cpu & 1) || (*seen >> cpu & 1))
			continue;
		*seen |= UINT64_C(1) << cpu;
		if (owner[cpu] < 0 || cpu_augment(in, owner[cpu], owner, seen)) {
			owner[cpu] = l;
			return true;
		}
	}
	return false;
}

/* Can every lcore of @p used have a CPU no other one of them needs? */
static bool
cpus_fit(const struct pf_place_input *in, uint32_t used)
{
	int owner[64];
	uint64_t seen;
	uint16_t l;

	memset(owner, -1, sizeof(owner));
	for (l = 0; l < in->n_lcores; l++) {
		if (!(used >> l & 1) || in->cpus[l] == 0)
			continue;
		seen = 0;
		if (!cpu_augment(in, l, owner, &seen))
			return false;
	}
	return true;
}

/* cpus_fit, remembered per used set in @p memo (0 unknown, 1 fits, 2 not) when there is one. */
static bool
fits(const struct pf_place_input *in, uint32_t used, uint8_t *memo)
{
	if (memo == NULL)
		return cpus_fit(in, used);
	if (memo[used] == 0)
		memo[used] = cpus_fit(in, used) ? 1 : 2;
	return memo[used] == 1;
}

static struct score
score_map(const struct pf_place_input *in, const int *map)
{
	double loads[PF_PLACE_MAX_LCORES];
	bool used[PF_PLACE_MAX_LCORES] = { false };
	struct score s = { 0, 0, 0, 0 };
	uint16_t i;

	pf_place_lcore_loads(in, map, loads);
	for (i = 0; i < in->n_lcores; i++)
		if (loads[i] > s.busiest) {
			s.busiest = loads[i];
			s.busiest_lcore = i;
		}
	for (i = 0; i < in->n_stages; i++) {
		s.moves += map[i] != in->current[i];
		if (!used[map[i]]) {
			used[map[i]] = true;
			s.used++;
			s.used_mask |= 1u << map[i];
		}
	}
	return s;
}

/* Better: a busiest lcore lighter by more than 0.5 %, then fewer moves, then fewer lcores. */
static bool
better(const struct score *a, const struct score *b)
{
	double tol = 0.005 * b->busiest;

	if (a->busiest < b->busiest - tol)
		return true;
	if (a->busiest > b->busiest + tol)
		return false;
	if (a->moves != b->moves)
		return a->moves < b->moves;
	return a->used < b->used;
}

static void
greedy(const struct pf_place_input *in, int *map)
{
	bool placed[PF_PLACE_MAX_STAGES] = { false };
	double loads[PF_PLACE_MAX_LCORES] = { 0 };
	uint32_t usable = 0;
	uint16_t k, i, l;

	/* The lcores that can each have a CPU, taken in order. */
	for (l = 0; l < in->n_lcores; l++)
		if (cpus_fit(in, usable | 1u << l))
			usable |= 1u << l;
	for (k = 0; k < in->n_stages; k++) {
		int pick = -1, lc = -1;

		for (i = 0; i < in->n_stages; i++)
			if (!placed[i] && (pick < 0 || in->load[i] > in->load[pick]))
				pick = i;
		for (l = 0; l < in->n_lcores; l++)
			if ((usable >> l & 1) && (lc < 0 || loads[l] < loads[lc]))
				lc = l;
		map[pick] = lc < 0 ? 0 : lc;
		placed[pick] = true;
		loads[lc] += in->load[pick];
	}
}

int
pf_place(const struct pf_place_input *in, struct pf_place_result *res)
{
	int map[PF_PLACE_MAX_STAGES], best[PF_PLACE_MAX_STAGES];
	struct score s, bs;
	double space;
	uint8_t *memo = NULL;
	uint16_t i;
	bool none;

	if (in->n_stages == 0 || in->n_stages > PF_PLACE_MAX_STAGES || in->n_lcores == 0 ||
	    in->n_lcores > PF_PLACE_MAX_LCORES || in->n_edges > PF_PLACE_MAX_EDGES ||
	    !(in->cross_prod_share >= 0 && in->cross_prod_share <= 1))
		return -EINVAL;
	for (i = 0; i < in->n_stages; i++)
		if (in->current[i] < 0 || in->current[i] >= in->n_lcores || in->load[i] < 0)
			return -EINVAL;
	for (i = 0; i < in->n_edges; i++)
		if (in->edges[i].from >= in->n_stages || in->edges[i].to >= in->n_stages)
			return -EINVAL;

	if (in->n_lcores <= FIT_MEMO_LCORES) {
		memo = calloc(1u << in->n_lcores, 1);
		if (memo == NULL)
			return -ENOMEM;
	}
	memset(res, 0, sizeof(*res));
	memcpy(best, in->current, sizeof(int) * in->n_stages);
	bs = score_map(in, best);
	res->busiest_before = bs.busiest;
	res->busiest_lcore_before = bs.busiest_lcore;
	/* Running on lcores that take turns on a CPU: any map that fits is better. */
	res->current_shares = !fits(in, bs.used_mask, memo);
	none = res->current_shares;

	space = pow(in->n_lcores, in->n_stages);
	if (space <= (double)(1 << 20)) {
		/* Count through every map in base n_lcores. */
		memset(map, 0, sizeof(map));
		res->exhaustive = true;
		for (;;) {
			s = score_map(in, map);
			if (fits(in, s.used_mask, memo) && (none || better(&s, &bs))) {
				none = false;
				bs = s;
				memcpy(best, map, sizeof(int) * in->n_stages);
			}
			for (i = 0; i < in->n_stages; i++) {
				if (++map[i] < in->n_lcores)
					break;
				map[i] = 0;
			}
			if (i == in->n_stages)
				break;
		}
	} else {
		greedy(in, map);
		s = score_map(in, map);
		if (none || better(&s, &bs)) {
			bs = s;
			memcpy(best, map, sizeof(int) * in->n_stages);
		}
	}
	/* A move for less than min_gain would follow the measurement's noise. */
	if (!res->current_shares && bs.moves != 0 &&
	    bs.busiest > res->busiest_before * (1 - in->min_gain)) {
		memcpy(best, in->current, sizeof(int) * in->n_stages);
		bs = score_map(in, best);
		res->kept = true;
	}
	memcpy(res->lcore, best, sizeof(int) * in->n_stages);
	res->busiest_after = bs.busiest;
	res->busiest_lcore_after = bs.busiest_lcore;
	res->moves = bs.moves;
	res->lcores_used = bs.used;
	free(memo);
	return 0;
}

void
pf_place_own_loads(struct pf_place_input *in)
{
	uint16_t i;

	for (i = 0; i < in->n_edges; i++) {
		const struct pf_place_edge *e = &in->edges[i];

		double prod = e->pps * in->cross_cycles * in->cross_prod_share;
		double cons = e->pps * in->cross_cycles - prod;

		if (in->current[e->from] != in->current[e->to]) {
			in->load[e->from] = fmax(0, in->load[e->from] - prod);
			in->load[e->to] = fmax(0, in->load[e->to] - cons);
		}
	}
}

/* The busiest figures of @p map under @p in into @p res, as pf_place gives them. */
static void
place_eval(const struct pf_place_input *in, const int *map, struct pf_place_result *res)
{
	struct score before = score_map(in, in->current), after = score_map(in, map);

	memset(res, 0, sizeof(*res));
	memcpy(res->lcore, map, sizeof(int) * in->n_stages);
	res->busiest_before = before.busiest;
	res->busiest_lcore_before = before.busiest_lcore;
	res->busiest_after = after.busiest;
	res->busiest_lcore_after = after.busiest_lcore;
	res->moves = after.moves;
	res->lcores_used = after.used;
	res->held = true;
}

bool
pf_place_recall(const struct pf_place_memory *mem, const struct pf_place_input *in,
		double change, struct pf_place_result *res)
{
	double moved = 0, total = 0;
	bool as_given = true, as_proposed = true;
	uint16_t i;

	if (!mem->valid || mem->n_stages != in->n_stages || mem->n_lcores != in->n_lcores)
		return false;
	for (i = 0; i < in->n_stages; i++) {
		as_given &= in->current[i] == mem->from[i];
		as_proposed &= in->current[i] == mem->to[i];
		moved += fabs(in->load[i] - mem->load[i]);
		total += mem->load[i];
	}
	if (!(as_given || as_proposed) || moved > change * total)
		return false;
	/* Applied (or keep): keep. Not applied yet: the same proposal. */
	place_eval(in, as_proposed ? in->current : mem->to, res);
	return true;
}

void
pf_place_remember(struct pf_place_memory *mem, const struct pf_place_input *in,
		  const struct pf_place_result *res)
{
	mem->valid = true;
	mem->n_stages = in->n_stages;
	mem->n_lcores = in->n_lcores;
	memcpy(mem->from, in->current, sizeof(int) * in->n_stages);
	memcpy(mem->to, res->lcore, sizeof(int) * in->n_stages);
	memcpy(mem->load, in->load, sizeof(double) * in->n_stages);
}
