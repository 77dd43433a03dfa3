/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the runtime's files share and nothing else sees:
 *   runtime.c   building, start, stop, destroy, the QSBR helpers
 *   port.c      port set-up, stats and close
 *   edge.c      the data path: process a burst, move it by edge (direct to a
 *               consumer on the same lcore, else by ring), lossless room
 *   worker.c    the worker lcore loop
 *   handover.c  moving stages between lcores, burst copies, waiting for passes
 *   direct.h/.c direct or ring: the direct_key/rings_maybe protocol
 *   burst_hint.h the runtime's half of the burst hints
 *   accounting.c totals and the drained test
 */
#ifndef PF_RT_INTERNAL_H
#define PF_RT_INTERNAL_H

#include <stddef.h>

#include <rte_common.h>

#include "direct.h"
#include "pf_runtime.h"

/* port.c: probe every port first (its socket's pool is made), then set each up. */
int pf_rt_port_probe(struct pf_runtime *rt, struct pf_topo *topo, uint16_t p,
		     struct pf_errs *errs);
int pf_rt_port_setup(struct pf_runtime *rt, struct pf_topo *topo, uint16_t p,
		     struct pf_errs *errs);
void pf_rt_close_ports(struct pf_runtime *rt);

/* runtime.c: the mbuf pool of a NUMA socket (created on first use). */
struct rte_mempool *pf_rt_pool_for(struct pf_runtime *rt, int socket);
/* runtime.c: the mbufs taken from every pool (caches count as free). */
int64_t pf_rt_mbufs_in_use(const struct pf_runtime *rt);

/*
 * Stage cycles are sampled (an rdtsc costs about 40 cycles, a packet on a
 * fused lcore about 80): the worker times one pass in PF_RT_TIME_EVERY, at
 * random, and each timed interval counts PF_RT_TIME_EVERY times, so a
 * stage's cycles estimate those of every pass. An untimed pass takes no
 * timestamp at a stage boundary (its t0 is 0).
 */
#define PF_RT_TIME_SHIFT 4
#define PF_RT_TIME_EVERY (1u << PF_RT_TIME_SHIFT)
/*
 * A timed interval over PF_RT_TIME_FLOOR_US (pf_rt_time_floor cycles, set at
 * start) and over PF_RT_TIME_OUTLIER times the stage's typical one was
 * preempted (another thread had the CPU): the typical one counts instead.
 * The floor keeps short bursts out of it, the ratio lets a stage whose
 * bursts are slow (a delay stage, a huge burst) be: pf_rt_interval().
 */
#define PF_RT_TIME_FLOOR_US 50
#define PF_RT_TIME_OUTLIER 16
extern uint64_t pf_rt_time_floor;

/*
 * The interval @p d to charge, given the stage's typical interval *@p typ
 * (an average over the last eight or so): @p d itself, or *@p typ when @p d
 * was preempted (counted in *@p skipped). A lasting slowdown is learnt: each
 * interval taken for a preemption raises *@p typ by a sixteenth.
 */
static __rte_always_inline uint64_t
pf_rt_interval(uint64_t *typ, uint64_t d, uint64_t *skipped)
{
	uint64_t t = *typ;

	if (likely(d <= pf_rt_time_floor || t == 0 || d <= t * PF_RT_TIME_OUTLIER)) {
		*typ = t == 0 ? d : t - (t >> 3) + (d >> 3);
		return d;
	}
	(*skipped)++;
	*typ = t + (t >> 4) + 1;
	return t;
}

/*
 * edge.c: run one burst through @p rs on lcore @p me, the clock having
 * started at @p t0 (the previous boundary's timestamp, 0 in an untimed
 * pass); consumers on the same lcore run depth-first inside. Returns the
 * time it ended (0 untimed).
 */
uint64_t pf_rt_run_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, int me,
			 uint64_t t0);
/*
 * edge.c: let @p rs (a stage with ops->dp.emit) hand over what it releases or
 * made, and move it on by edge (@p timed: in a timed pass). Returns how
 * many packets it emitted.
 */
uint16_t pf_rt_emit(struct pf_rt_stage *rs, int me, bool draining, bool timed);
/*
 * Lossless mode: how many packets (at most @p max) @p rs can take now so
 * that no ring after it, up to the next lcore boundary, overflows; fixes
 * which of those edges the coming burst takes directly.
 */
uint32_t pf_rt_room(struct pf_rt_stage *rs, int me, uint32_t max);

/* worker.c */
int pf_rt_worker_main(void *arg);

/* handover.c: wait until every worker has finished @p passes more loops. */
void pf_rt_wait_passes(struct pf_runtime *rt, unsigned int passes);

/* accounting.c: a port added live counts from now (its index may have served another). */
void pf_rt_port_base(struct pf_runtime *rt, uint16_t port);
/* accounting.c: every ring and tx buffer empty? */
bool pf_rt_drained(const struct pf_runtime *rt);
/* accounting.c: restart the hwm of @p rs's output rings a clear asked for (owner lcore). */
void pf_rt_hwm_serve(struct pf_rt_stage *rs);

#endif /* PF_RT_INTERNAL_H */
