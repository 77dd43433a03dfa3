/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime: builds the mempool, ports, rings and stages from a topology,
 * starts the workers, stops them (sources first, then every ring and tx
 * buffer drains) and frees everything. The QSBR helpers stages use live
 * here too. The other jobs are in their own files (app/runtime/rt_internal.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "pf_fault.h"
#include "pf_log.h"
#include "pf_numa.h"
#include "pf_stages.h"
#include "rt_internal.h"

#define MBUF_CACHE 256

/* ---- building ----------------------------------------------------------- */

/*
 * The mbuf pool of NUMA socket @p socket, created on first use with the
 * topology's size: a port's rx queues fill the pool of the port's socket.
 * A socket without memory (or SOCKET_ID_ANY, a vdev) gets the main pool.
 */
struct rte_mempool *
pf_rt_pool_for(struct pf_runtime *rt, int socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES)
		return rt->pool;
	if (rt->pools[socket] != NULL)
		return rt->pools[socket];
	snprintf(name, sizeof(name), "pf_mbufs_s%d", socket);
	mp = rte_pktmbuf_pool_create(name, rt->pool->size, MBUF_CACHE, 0, rt->topo->mbuf_data_size,
				     socket);
	if (mp == NULL) {
		PF_LOG(WARNING, "no mbuf pool on socket %d (%s): its ports use socket %d's",
		       socket, rte_strerror(rte_errno), rt->pool->socket_id);
		rt->pools[socket] = rt->pool;
		return rt->pool;
	}
	PF_LOG(INFO, "mempool: %u mbufs on socket %d for its ports", rt->pool->size, socket);
	rt->pools[socket] = mp;
	rt->n_pools++;
	return mp;
}

/* A ring lives on the socket of the lcore that dequeues from it (pf_numa_ring_socket). */
static int
ring_socket(const struct pf_topo *topo, uint16_t ring)
{
	int socket = pf_numa_ring_socket(topo, ring, pf_numa_eal_socket, NULL);

	return socket >= 0 ? socket : (int)rte_socket_id();
}
/* Note @p r among @p rs's distinct output rings (lossless room checks). */
static void
out_add(struct pf_rt_stage *rs, struct pf_rt_ring *r)
{
	uint16_t k;

	for (k = 0; k < rs->n_out; k++)
		if (rs->outs[k] == r)
			return;
	rs->outs[rs->n_out++] = r;
}

static int
stage_build(struct pf_runtime *rt, uint16_t s, struct pf_errs *errs)
{
	struct pf_stage_conf *sc = &rt->topo->stages[s];
	struct pf_rt_stage *rs = &rt->rts[s];
	uint16_t e, r;
	int rc;

	/* Instances after the first may share its tables (st->first). */
	rc = pf_stage_create_fed(&rt->stages[s], sc, rt->topo,
				 sc->instance > 0 ? rt->stages[sc->first] : NULL, rt->stages, errs);
	if (rc < 0) {
		if (errs->n == 0)
			pf_node_err(errs, sc->node, "stage '%s': init failed: %s", sc->name,
				    strerror(-rc));
		return rc;
	}
	rs->st = rt->stages[s];
	rs->st->id = s;
	rs->st->runtime_runs = true;
	rs->owner = sc->lcore;
	rs->burst = sc->burst;
	rs->process_burst = sc->ops->dp.process_burst;
	rs->kind = (sc->ops->dp.rx != NULL ? PF_RT_KIND_SOURCE : 0) |
		   (sc->ops->dp.tx != NULL ? PF_RT_KIND_TX : 0) |
		   (sc->ops->flags & PF_STAGE_TX_ALL ? PF_RT_KIND_TX_ALL : 0) |
		   (sc->ops->dp.expand != NULL ? PF_RT_KIND_EXPAND : 0) |
		   (sc->ops->dp.emit != NULL ? PF_RT_KIND_EMIT : 0) |
		   (sc->ops->dp.idle != NULL ? PF_RT_KIND_IDLE : 0) |
		   (rt->topo->backpressure ? PF_RT_KIND_LOSSLESS : 0);
	/* A sink's rx -> tx latency per output port, on its lcore's socket. */
	if (rs->kind & PF_RT_KIND_TX) {
		rs->lat = rte_zmalloc_socket("pf_lat", sizeof(*rs->lat) * PF_MAX_PORTS,
					     RTE_CACHE_LINE_SIZE, rs->st->socket);
		if (rs->lat == NULL)
			return pf_node_err(errs, sc->node, "stage '%s': out of memory", sc->name);
	}
	/* A source's pool, to prefetch what its port rx takes next (worker.c). */
	if ((rs->kind & PF_RT_KIND_SOURCE) && sc->n_rx_ports > 0 &&
	    pf_port_present(&rt->topo->ports[sc->rx_ports[0]]))
		rs->rx_pool = pf_rt_pool_for(rt, rte_eth_dev_socket_id(
						     rt->port_run[sc->rx_ports[0]].port_id));
	/* Edge 0 (drop) has no ring: run_burst relies on out[0] being NULL. */
	for (e = 1; e < sc->ops->n_edges && e < PF_MAX_EDGES; e++) {
		uint16_t to = sc->next[e], k, n_inst;

		if (to == PF_NONE)
			continue;
		n_inst = rt->topo->stages[to].n_instances;
		if (n_inst <= 1 || pf_topo_same_instance_edge(rt->topo, s, to)) {
			/* Affine: this instance's queue already holds whole flows; or
			 * flow-picked: the hash would pick this instance again. */
			if (n_inst > 1)
				to = (uint16_t)(to + sc->instance);
			rs->out[e] = &rt->rings[pf_topo_ring_index(rt->topo, s, to)];
			out_add(rs, rs->out[e]);
			continue;
		}
		rs->fan[e] = rte_zmalloc("pf_fan", sizeof(*rs->fan[e]), RTE_CACHE_LINE_SIZE);
		if (rs->fan[e] == NULL)
			return pf_node_err(errs, sc->node, "stage '%s': out of memory", sc->name);
		rs->fan[e]->n = n_inst;
		for (k = 0; k < n_inst; k++) {
			rs->fan[e]->ring[k] =
				&rt->rings[pf_topo_ring_index(rt->topo, s, (uint16_t)(to + k))];
			out_add(rs, rs->fan[e]->ring[k]);
		}
	}
	/* A ring that never carries is not polled, nor waited for (direct.h). */
	for (r = 0; r < rt->n_rings; r++)
		if (rt->rings[r].conf->to == s && !pf_topo_ring_unused(rt->topo, r))
			rs->in[rs->n_in++] = &rt->rings[r];
	return 0;
}

/* The production binary has no faults (app/runtime/pf_fault.h; pipefwd-test overrides). */
__attribute__((weak)) uint32_t
pf_fault_mbufs(uint32_t n)
{
	return n;
}

int
pf_runtime_create(struct pf_runtime **out, struct pf_topo *topo, struct pf_errs *errs)
{
	struct pf_runtime *rt;
	uint32_t n_mbufs;
	uint16_t i, j;
	int rc;

	*out = NULL;
	rt = rte_zmalloc("pf_runtime", sizeof(*rt), RTE_CACHE_LINE_SIZE);
	if (rt == NULL)
		return pf_err_add(errs, topo->file, 0, 0, "out of memory for the runtime");
	rt->topo = topo;
	topo->env.run = rt->port_run;   /* the stages see what setting the ports up found */
	pf_clock_set_mode(topo->clock);
	if (pf_meta_register() < 0) {
		pf_err_add(errs, topo->file, 0, 0, "cannot register the mbuf metadata field");
		goto fail;
	}
	if (pf_latency_init() < 0) {
		pf_err_add(errs, topo->file, 0, 0, "cannot register the latency stamp's mbuf flag");
		goto fail;
	}
	if (topo->latency)
		pf_latency_set(true);
	rt->idle_sleep_us = topo->idle_sleep_us;
	if (rt->idle_sleep_us != 0)
		PF_LOG(INFO, "idle sleep: an lcore with nothing to do sleeps %u us at a time "
		       "(runtime.idle_sleep_us)", rt->idle_sleep_us);
	/* A fault test's smaller pool (pipefwd-test only). */
	n_mbufs = pf_fault_mbufs(topo->mbufs);
	rt->pool = rte_pktmbuf_pool_create("pf_mbufs", n_mbufs, MBUF_CACHE, 0,
					   topo->mbuf_data_size, rte_socket_id());
	if (rt->pool == NULL) {
		pf_err_add(errs, topo->file, 0, 0,
			   "cannot create a pool of %u mbufs: %s (raise EAL -m)", n_mbufs,
			   rte_strerror(rte_errno));
		goto fail;
	}
	PF_LOG(INFO, "mempool: %u mbufs of %u bytes (%u required by the topology)", topo->mbufs,
	       topo->mbuf_data_size, topo->mbufs_required);
	rt->pools[rt->pool->socket_id] = rt->pool;
	rt->n_pools = 1;
	for (i = 0; i < PF_MAX_PORTS; i++)
		rt->port_run[i].port_id = RTE_MAX_ETHPORTS;   /* none: a hole, or not yet probed */
	for (i = 0; i < topo->n_ports; i++)
		if (pf_rt_port_probe(rt, topo, i, errs) < 0)
			goto fail;
	for (i = 0; i < topo->n_ports; i++)
		if (pf_rt_port_setup(rt, topo, i, errs) < 0)
			goto fail;
	rt->n_rings = topo->n_rings;
	for (i = 0; i < topo->n_rings; i++) {
		const struct pf_ring_conf *rc_ = &topo->rings[i];
		char name[RTE_RING_NAMESIZE];

		/* One producer stage and one consumer stage per ring: SP/SC. */
		snprintf(name, sizeof(name), "pf_r%u", i);
		rt->rings[i].conf = rc_;
		rt->rings[i].to = &rt->rts[rc_->to];
		rt->rings[i].from = &rt->rts[rc_->from];
		rt->rings[i].burst = rc_->burst;
		rt->rings[i].ring = rte_ring_create(name, rc_->size, ring_socket(topo, i),
						    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rt->rings[i].ring == NULL)   /* no memory on that socket (--no-huge) */
			rt->rings[i].ring = rte_ring_create(name, rc_->size, SOCKET_ID_ANY,
							    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rt->rings[i].ring == NULL) {
			pf_err_add(errs, topo->file, 0, 0, "ring %s: cannot create: %s", rc_->name,
				   rte_strerror(rte_errno));
			goto fail;
		}
	}
	rt->n_stages = topo->n_stages;
	/* A stage whose table others read (neigh) first: they get it at their init. */
	for (i = 0; i < topo->n_stages; i++)
		if ((topo->stages[i].ops->flags & PF_STAGE_UPSTREAM_READS) &&
		    stage_build(rt, i, errs) < 0)
			goto fail;
	for (i = 0; i < topo->n_stages; i++)
		if (!(topo->stages[i].ops->flags & PF_STAGE_UPSTREAM_READS) &&
		    stage_build(rt, i, errs) < 0)
			goto fail;
	pf_rt_rings_maybe_start(rt);
	rt->n_lcores = topo->n_lcores;
	for (i = 0; i < topo->n_lcores; i++) {
		struct pf_rt_lcore *lc = &rt->lcores[i];

		lc->id = topo->lcores[i].id;
		lc->qsbr_id = i;
		if (!rte_lcore_is_enabled(lc->id)) {
			pf_err_add(errs, topo->file, 0, 0, "lcore %u is not enabled in EAL", lc->id);
			goto fail;
		}
		lc->map = &lc->maps[0];
		lc->map->n = topo->lcores[i].n_stages;
		for (j = 0; j < lc->map->n; j++)
			lc->map->stages[j] = &rt->rts[topo->lcores[i].stages[j]];
	}
	pf_rt_recycle_start(rt);
	rt->qsbr = rte_zmalloc("pf_qsbr", rte_rcu_qsbr_get_memsize(RTE_MAX(rt->n_lcores, 1)),
			       RTE_CACHE_LINE_SIZE);
	if (rt->qsbr == NULL || rte_rcu_qsbr_init(rt->qsbr, RTE_MAX(rt->n_lcores, 1)) != 0) {
		pf_err_add(errs, topo->file, 0, 0, "cannot set up QSBR for %u lcores", rt->n_lcores);
		goto fail;
	}
	for (i = 0; i < rt->n_lcores; i++)
		rte_rcu_qsbr_thread_register(rt->qsbr, i);
	*out = rt;
	return 0;
fail:
	rc = -EINVAL;
	pf_runtime_destroy(rt);
	return rc;
}

int
pf_runtime_start(struct pf_runtime *rt)
{
	uint16_t i;
	int rc;

	rt->start_tsc = rte_rdtsc();
	pf_rt_time_floor = rte_get_tsc_hz() / 1000000 * PF_RT_TIME_FLOOR_US;
	pf_services_set_qsbr(rt->qsbr);
	for (i = 0; i < rt->n_lcores; i++) {
		rc = rte_eal_remote_launch(pf_rt_worker_main, rt, rt->lcores[i].id);
		if (rc < 0) {
			PF_LOG(ERR, "cannot launch lcore %u: %s", rt->lcores[i].id, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void
pf_runtime_stop(struct pf_runtime *rt)
{
	uint64_t deadline = rte_rdtsc() + 2 * rte_get_tsc_hz();

	/* Sources stop first; then every ring and tx buffer drains. A pass that
	 * starts after PF_RX_STOPPED is seen cannot add packets, so two complete
	 * passes with everything empty mean nothing is in flight. */
	__atomic_store_n(&rt->rx_state, PF_RX_STOPPED, __ATOMIC_RELEASE);
	pf_rt_wait_passes(rt, 2);
	while (rte_rdtsc() < deadline) {
		if (pf_rt_drained(rt)) {
			pf_rt_wait_passes(rt, 2);
			if (pf_rt_drained(rt))
				break;
		}
		rte_delay_us_sleep(200);
	}
	rt->stop_tsc = rte_rdtsc();
	__atomic_store_n(&rt->stop, 1, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	pf_services_set_qsbr(NULL);
	pf_rt_close_ports(rt);
	rt->mbufs_in_use = pf_rt_mbufs_in_use(rt) - rt->mbufs_kept;
}

int64_t
pf_rt_mbufs_in_use(const struct pf_runtime *rt)
{
	int64_t n = 0;
	int i;

	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (rt->pools[i] != NULL && (rt->pools[i] != rt->pool || i == rt->pool->socket_id))
			n += rte_mempool_in_use_count(rt->pools[i]);
	return n;
}

void
pf_runtime_destroy(struct pf_runtime *rt)
{
	uint16_t i, j;

	if (rt == NULL)
		return;
	for (i = 0; i < rt->n_stages; i++) {
		pf_stage_destroy(rt->stages[i]);
		rte_free(rt->rts[i].lat);
		for (j = 0; j < PF_MAX_EDGES; j++)
			rte_free(rt->rts[i].fan[j]);
	}
	for (i = 0; i < rt->n_rings; i++) {
		struct rte_mbuf *m;

		while (rt->rings[i].ring != NULL &&
		       rte_ring_dequeue(rt->rings[i].ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(rt->rings[i].ring);
	}
	pf_rt_close_ports(rt);
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (rt->pools[i] != NULL && rt->pools[i] != rt->pool)
			rte_mempool_free(rt->pools[i]);
	rte_mempool_free(rt->pool);
	rte_free(rt->qsbr);
	rte_free(rt);
}

