/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rebalance advice from what the running pipeline measured: each stage's
 * cycles per second and each ring's packets per second since the last
 * (re)load, fed to the placement function (app/placement.c).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include "pf_rebalance.h"

int
pf_rebalance_suggest(const struct pf_runtime *rt, double cross_cycles, struct pf_place_input *in,
		     struct pf_place_result *res)
{
	double secs = (double)(rte_rdtsc() - rt->start_tsc) / (double)rte_get_tsc_hz();
	uint16_t i, k;

	if (secs <= 0 || rt->n_lcores == 0 || rt->n_lcores > PF_PLACE_MAX_LCORES ||
	    rt->n_stages > PF_PLACE_MAX_STAGES)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	in->n_stages = rt->n_stages;
	in->n_lcores = rt->n_lcores;
	in->cross_cycles = cross_cycles;
	in->hz = (double)rte_get_tsc_hz();
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_rt_stage *rs = &rt->rts[i];
		int owner = __atomic_load_n(&rs->owner, __ATOMIC_ACQUIRE);

		in->load[i] = (double)rs->cycles / secs;
		in->current[i] = 0;
		for (k = 0; k < rt->n_lcores; k++)
			if ((int)rt->lcores[k].id == owner)
				in->current[i] = k;
	}
	for (i = 0; i < rt->n_rings && in->n_edges < PF_PLACE_MAX_EDGES; i++) {
		struct pf_place_edge *e = &in->edges[in->n_edges++];

		e->from = rt->rings[i].conf->from;
		e->to = rt->rings[i].conf->to;
		e->pps = (double)(rt->rings[i].enqueued + rt->rings[i].direct) / secs;
	}
	return pf_place(in, res);
}
