/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage placement (app/console/pf_placement.h): exhaustive search when the
 * space is small (lcores^stages <= 2^20, which covers real pipelines),
 * otherwise largest-load-first greedy placement.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
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

		if (map[e->from] != map[e->to])
			out[map[e->to]] += e->pps * in->cross_cycles;
	}
}

struct score {
	double busiest;
	int busiest_lcore;
	uint16_t moves;
	uint16_t used;
};

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
	uint16_t k, i, l;

	for (k = 0; k < in->n_stages; k++) {
		int pick = -1, lc = 0;

		for (i = 0; i < in->n_stages; i++)
			if (!placed[i] && (pick < 0 || in->load[i] > in->load[pick]))
				pick = i;
		for (l = 1; l < in->n_lcores; l++)
			if (loads[l] < loads[lc])
				lc = l;
		map[pick] = lc;
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
	uint16_t i;

	if (in->n_stages == 0 || in->n_stages > PF_PLACE_MAX_STAGES || in->n_lcores == 0 ||
	    in->n_lcores > PF_PLACE_MAX_LCORES || in->n_edges > PF_PLACE_MAX_EDGES)
		return -EINVAL;
	for (i = 0; i < in->n_stages; i++)
		if (in->current[i] < 0 || in->current[i] >= in->n_lcores || in->load[i] < 0)
			return -EINVAL;
	for (i = 0; i < in->n_edges; i++)
		if (in->edges[i].from >= in->n_stages || in->edges[i].to >= in->n_stages)
			return -EINVAL;

	memset(res, 0, sizeof(*res));
	memcpy(best, in->current, sizeof(int) * in->n_stages);
	bs = score_map(in, best);
	res->busiest_before = bs.busiest;
	res->busiest_lcore_before = bs.busiest_lcore;

	space = pow(in->n_lcores, in->n_stages);
	if (space <= (double)(1 << 20)) {
		/* Count through every map in base n_lcores. */
		memset(map, 0, sizeof(map));
		res->exhaustive = true;
		for (;;) {
			s = score_map(in, map);
			if (better(&s, &bs)) {
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
		if (better(&s, &bs)) {
			bs = s;
			memcpy(best, map, sizeof(int) * in->n_stages);
		}
	}
	memcpy(res->lcore, best, sizeof(int) * in->n_stages);
	res->busiest_after = bs.busiest;
	res->busiest_lcore_after = bs.busiest_lcore;
	res->moves = bs.moves;
	res->lcores_used = bs.used;
	return 0;
}
