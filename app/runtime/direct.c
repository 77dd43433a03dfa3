/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Direct or ring, the control thread's half (the protocol: direct.h): which
 * stages must poll their rings, at start and after a hand-over.
 */
#include "direct.h"

/*
 * Whether @p rs's input rings may hold packets once every stage s runs on
 * lcore @p want[s]: it or one of its producers moves, or a producer runs on
 * another lcore (its rings_maybe stays set then).
 */
static bool
pf_rt_rings_maybe(const struct pf_runtime *rt, const struct pf_rt_stage *rs, const int *want)
{
	uint16_t s = (uint16_t)(rs - rt->rts), k;

	if (rs->n_in == 0)   /* a source: nothing to poll but its ports */
		return false;
	if (rs->owner != want[s])
		return true;
	for (k = 0; k < rs->n_in; k++) {
		uint16_t from = (uint16_t)(rs->in[k]->from - rt->rts);

		if (rs->in[k]->from->owner != want[from] || want[from] != want[s])
			return true;
	}
	return false;
}

/* The lcore each stage runs on now: the want[] of a map that changes nothing. */
static void
owners_now(const struct pf_runtime *rt, int *owner)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		owner[i] = rt->rts[i].owner;
}

void
pf_rt_rings_maybe_start(struct pf_runtime *rt)
{
	int owner[PF_MAX_STAGES];
	uint16_t i;

	owners_now(rt, owner);
	for (i = 0; i < rt->n_stages; i++)
		rt->rts[i].rings_maybe = pf_rt_rings_maybe(rt, &rt->rts[i], owner);
}

void
pf_rt_recycle_start(struct pf_runtime *rt)
{
	int owner[PF_MAX_STAGES];

	owners_now(rt, owner);
	pf_rt_recycle_mark(rt, owner);
}

void
pf_rt_recycle_mark(struct pf_runtime *rt, const int *want)
{
	uint16_t i, k, s;

	for (i = 0; i < rt->n_lcores; i++) {
		struct pf_rt_lcore *lc = &rt->lcores[i];
		uint8_t cross = 0;

		for (s = 0; s < rt->n_stages && !cross; s++) {
			const struct pf_rt_stage *rs = &rt->rts[s];

			if (want[s] != (int)lc->id)
				continue;
			/* in[] holds the rings that can carry (runtime.c), out rings too. */
			for (k = 0; k < rs->n_in && !cross; k++)
				cross = want[rs->in[k]->from - rt->rts] != (int)lc->id;
			for (k = 0; k < rs->n_out && !cross; k++)
				cross = want[rs->outs[k]->to - rt->rts] != (int)lc->id;
		}
		__atomic_store_n(&lc->recycled, cross, __ATOMIC_RELAXED);
	}
}

void
pf_rt_rings_maybe_mark(struct pf_runtime *rt, const int *want)
{
	uint16_t i;

	/* Any other stage and its producers stayed on one lcore: its rings stayed empty. */
	for (i = 0; i < rt->n_stages; i++)
		if (pf_rt_rings_maybe(rt, &rt->rts[i], want))
			__atomic_store_n(&rt->rts[i].rings_maybe, 1, __ATOMIC_RELEASE);
}
