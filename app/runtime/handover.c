/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hand-over: moving stages between lcores on reload, and publishing the
 * burst sizes the workers read.
 *
 * A moved stage first loses its owner (-1), every lcore gets its new map,
 * the old lcore finishes the pass it was in, and only then does the new
 * lcore own the stage: no two lcores ever run one stage. Direct edges need
 * nothing more, because a producer decides per burst: it hands a burst
 * straight to its consumer only while the consumer's owner is its own
 * lcore and the edge's ring is empty. While a stage moves (owner -1) or
 * runs elsewhere its producers use the ring; when it arrives on its
 * producer's lcore, what is already in the ring drains first through the
 * stage's own ring polling and only then do bursts go direct, so nothing is
 * reordered. A direct call that began before the owner was cleared ends
 * within the old lcore's pass, which the hand-over waits for.
 */
#include <errno.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "rt_internal.h"

/* Wait until every worker has finished @p passes more loops. */
void
pf_rt_wait_passes(struct pf_runtime *rt, unsigned int passes)
{
	uint64_t seen[PF_MAX_LCORES];
	uint16_t i;
	bool done;

	for (i = 0; i < rt->n_lcores; i++)
		seen[i] = __atomic_load_n(&rt->lcores[i].loops, __ATOMIC_ACQUIRE);
	do {
		done = true;
		for (i = 0; i < rt->n_lcores; i++)
			if (__atomic_load_n(&rt->lcores[i].loops, __ATOMIC_ACQUIRE) < seen[i] + passes)
				done = false;
		if (!done)
			rte_delay_us_sleep(100);
	} while (!done);
}

static struct pf_rt_lcore *
lcore_by_id(struct pf_runtime *rt, int id)
{
	uint16_t i;

	for (i = 0; i < rt->n_lcores; i++)
		if ((int)rt->lcores[i].id == id)
			return &rt->lcores[i];
	return NULL;
}

/*
 * Publish @p topo's burst sizes (source rx bursts, ring dequeue bursts) to
 * the runtime-owned copies the workers read every burst, so the running
 * topology itself is never read on the data path. @p topo must have the
 * running stages and rings (reload checks that). Returns how many changed.
 */
static int
pf_runtime_apply_bursts(struct pf_runtime *rt, const struct pf_topo *topo)
{
	int changed = 0;
	uint16_t i;

	if (topo->n_stages != rt->n_stages || topo->n_rings != rt->n_rings)
		return -EINVAL;
	for (i = 0; i < rt->n_stages; i++) {
		if (rt->rts[i].burst == topo->stages[i].burst)
			continue;
		__atomic_store_n(&rt->rts[i].burst, topo->stages[i].burst, __ATOMIC_RELAXED);
		changed++;
	}
	for (i = 0; i < rt->n_rings; i++) {
		if (rt->rings[i].burst == topo->rings[i].burst)
			continue;
		__atomic_store_n(&rt->rings[i].burst, topo->rings[i].burst, __ATOMIC_RELAXED);
		changed++;
	}
	return changed;
}

int
pf_runtime_apply_lcore_map(struct pf_runtime *rt, const struct pf_topo *topo)
{
	uint64_t seen[PF_MAX_LCORES];
	bool wait_for[PF_MAX_LCORES] = { false };
	int want[PF_MAX_STAGES];
	uint16_t i, j, k, moved = 0;
	bool done;

	pf_runtime_apply_bursts(rt, topo);
	for (i = 0; i < rt->n_stages; i++)
		want[i] = -1;
	for (i = 0; i < topo->n_lcores; i++)
		for (j = 0; j < topo->lcores[i].n_stages; j++)
			want[topo->lcores[i].stages[j]] = (int)topo->lcores[i].id;
	for (i = 0; i < rt->n_lcores; i++)
		seen[i] = __atomic_load_n(&rt->lcores[i].loops, __ATOMIC_ACQUIRE);
	/* 1. A moved stage loses its owner, then every lcore gets its new map:
	 *    the old lcore stops running the stage at its next pass and the new
	 *    one skips it until it becomes the owner. */
	for (i = 0; i < rt->n_stages; i++) {
		struct pf_rt_lcore *old;

		if (rt->rts[i].owner == want[i])
			continue;
		old = lcore_by_id(rt, rt->rts[i].owner);
		if (old != NULL)
			wait_for[old - rt->lcores] = true;
		pf_rt_owner_take(&rt->rts[i]);
		moved++;
	}
	for (i = 0; i < rt->n_lcores; i++) {
		struct pf_rt_lcore *lc = &rt->lcores[i];
		struct pf_lcore_map *next = lc->map == &lc->maps[0] ? &lc->maps[1] : &lc->maps[0];

		next->n = 0;
		for (k = 0; k < topo->n_lcores; k++) {
			if (topo->lcores[k].id != lc->id)
				continue;
			for (j = 0; j < topo->lcores[k].n_stages; j++)
				next->stages[next->n++] = &rt->rts[topo->lcores[k].stages[j]];
		}
		__atomic_store_n(&lc->map, next, __ATOMIC_RELEASE);
	}
	/* 2. Each old owner finishes the pass it was in (two loop ends seen):
	 *    nobody runs a moved stage now, and its last writes are visible. */
	do {
		done = true;
		for (i = 0; i < rt->n_lcores; i++)
			if (wait_for[i] &&
			    __atomic_load_n(&rt->lcores[i].loops, __ATOMIC_ACQUIRE) < seen[i] + 2)
				done = false;
		if (!done)
			rte_pause();
	} while (!done && !rt->stop);
	/* 3. A stage that moved, or whose producer moved or runs elsewhere,
	 *    polls its rings again until they are empty and its producers
	 *    settled (worker.c): a ring may now fill from another lcore, or
	 *    hold what was sent while a stage moved. Set before any moved
	 *    stage runs on its new lcore, and after the old lcores' passes,
	 *    so no clear decided before the move lands after it (direct.h).
	 *    Then hand each moved stage to its new lcore. */
	pf_rt_rings_maybe_mark(rt, want);
	pf_rt_recycle_mark(rt, want);
	for (i = 0; i < rt->n_stages; i++)
		if (rt->rts[i].owner != want[i])
			pf_rt_owner_give(&rt->rts[i], want[i]);
	/* The previous map buffers may be reused once every lcore moved on. */
	pf_rcu_synchronize();
	return moved;
}
