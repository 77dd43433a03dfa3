/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The services the runtime gives stages (include/pf_services.h): the clock,
 * grace periods over the workers' QSBR variable, heap use.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "pf_services.h"
#include "pf_stages.h"

/* ---- clock -------------------------------------------------------------- */

static enum pf_clock_mode clock_mode;
static uint64_t clock_driven_ns;   /* newest packet timestamp (pcap mode) */

void
pf_clock_set_mode(enum pf_clock_mode mode)
{
	clock_mode = mode;
	clock_driven_ns = 0;
}

void
pf_clock_advance_ns(uint64_t ns)
{
	/* Time never goes backwards, even with unordered input files. */
	if (ns > __atomic_load_n(&clock_driven_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&clock_driven_ns, ns, __ATOMIC_RELAXED);
}

uint64_t
pf_now_ns(void)
{
	static uint64_t hz;

	if (clock_mode == PF_CLOCK_PCAP)
		return __atomic_load_n(&clock_driven_ns, __ATOMIC_RELAXED);
	if (unlikely(hz == 0))
		hz = rte_get_tsc_hz();
	return (uint64_t)((double)rte_rdtsc() * 1e9 / (double)hz);
}

/* ---- grace periods ------------------------------------------------------ */

/* The running runtime's workers report quiescent states here (NULL: none runs). */
static struct rte_rcu_qsbr *qsbr;

void
pf_services_set_qsbr(struct rte_rcu_qsbr *v)
{
	__atomic_store_n(&qsbr, v, __ATOMIC_RELEASE);
}

void
pf_rcu_synchronize(void)
{
	struct rte_rcu_qsbr *v = __atomic_load_n(&qsbr, __ATOMIC_ACQUIRE);

	if (v != NULL)
		rte_rcu_qsbr_synchronize(v, RTE_QSBR_THRID_INVALID);
}

uint64_t
pf_rcu_start(void)
{
	struct rte_rcu_qsbr *v = __atomic_load_n(&qsbr, __ATOMIC_ACQUIRE);

	return v != NULL ? rte_rcu_qsbr_start(v) : 0;
}

bool
pf_rcu_done(uint64_t token)
{
	struct rte_rcu_qsbr *v = __atomic_load_n(&qsbr, __ATOMIC_ACQUIRE);

	return v == NULL || token == 0 || rte_rcu_qsbr_check(v, token, false) == 1;
}

/* ---- memory ------------------------------------------------------------- */

uint64_t
pf_heap_used(void)
{
	struct rte_malloc_socket_stats s;
	uint64_t used = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
			used += s.heap_allocsz_bytes;
	return used;
}
