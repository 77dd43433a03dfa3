/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime: mempool, ports, rings, stages, worker loops and shutdown.
 *
 * A worker lcore runs its stages in turn. For each stage it takes one burst
 * (from its ports if it is a source, from each input ring otherwise), lets
 * the stage decide an edge per packet, then moves the packets: edge 0 is
 * freed (the stage counted the reason), sinks take the rest, and every other
 * edge goes to the ring of the stage it is wired to. A full ring drops the
 * overflow and counts it (ring_full) on the producer and on the ring: the
 * producer never blocks.
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

#include "pf_capture.h"
#include "pf_flowhash.h"
#include "pf_log.h"
#include "pf_runtime.h"

#define MBUF_CACHE 256

/* ---- ports -------------------------------------------------------------- */

static int
port_setup(struct pf_runtime *rt, struct pf_port_conf *pc, struct pf_errs *errs)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *comma = strchr(pc->device, ',');
	uint16_t pid, q, nrx = RTE_MAX(pc->n_rxq, 1), ntx = RTE_MAX(pc->n_txq, 1);
	int rc;

	size_t name_len = comma != NULL ? (size_t)(comma - pc->device) : strlen(pc->device);

	snprintf(name, sizeof(name), "%.*s", (int)name_len, pc->device);
	/* The vdev bus recognises driver names (net_pcap0...), PCI its addresses. */
	rc = rte_dev_probe(pc->device);
	if (rc < 0 && rc != -EEXIST)
		return pf_node_err(errs, pc->node, "ports.%s: cannot create device '%s': %s",
				   pc->name, pc->device, strerror(-rc));
	if (rte_eth_dev_get_port_by_name(name, &pid) != 0)
		return pf_node_err(errs, pc->node, "ports.%s: no ethdev named '%s'", pc->name, name);
	pc->port_id = pid;
	if (rte_eth_dev_info_get(pid, &info) != 0)
		return pf_node_err(errs, pc->node, "ports.%s: cannot read device info", pc->name);
	if (nrx > info.max_rx_queues || ntx > info.max_tx_queues)
		return pf_node_err(errs, pc->node,
				   "ports.%s: needs %u rx / %u tx queues, device has %u / %u",
				   pc->name, nrx, ntx, info.max_rx_queues, info.max_tx_queues);
	rc = rte_eth_dev_configure(pid, nrx, ntx, &conf);
	if (rc < 0)
		return pf_node_err(errs, pc->node, "ports.%s: configure failed: %s", pc->name,
				   strerror(-rc));
	for (q = 0; q < nrx; q++) {
		rc = rte_eth_rx_queue_setup(pid, q, pc->rxd, rte_eth_dev_socket_id(pid), NULL,
					    rt->pool);
		if (rc < 0)
			return pf_node_err(errs, pc->node, "ports.%s: rx queue %u: %s", pc->name, q,
					   strerror(-rc));
	}
	for (q = 0; q < ntx; q++) {
		rc = rte_eth_tx_queue_setup(pid, q, pc->txd, rte_eth_dev_socket_id(pid), NULL);
		if (rc < 0)
			return pf_node_err(errs, pc->node, "ports.%s: tx queue %u: %s", pc->name, q,
					   strerror(-rc));
	}
	if (pc->has_mac) {
		memcpy(mac.addr_bytes, pc->mac, 6);
		/* Not every vdev can change its MAC; pipefwd uses pc->mac either way. */
		rte_eth_dev_default_mac_addr_set(pid, &mac);
	} else if (rte_eth_macaddr_get(pid, &mac) == 0) {
		memcpy(pc->mac, mac.addr_bytes, 6);
		pc->has_mac = true;
	}
	rte_eth_promiscuous_enable(pid);
	rc = rte_eth_dev_start(pid);
	if (rc < 0)
		return pf_node_err(errs, pc->node, "ports.%s: start failed: %s", pc->name,
				   strerror(-rc));
	return 0;
}

/* ---- building ----------------------------------------------------------- */

static int
stage_build(struct pf_runtime *rt, uint16_t s, struct pf_errs *errs)
{
	struct pf_stage_conf *sc = &rt->topo->stages[s];
	struct pf_rt_stage *rs = &rt->rts[s];
	uint16_t e, r;
	int rc;

	/* Instances after the first may share its tables (st->first). */
	rc = pf_stage_create_instance(&rt->stages[s], sc, rt->topo,
				      sc->instance > 0 ? rt->stages[sc->first] : NULL, errs);
	if (rc < 0) {
		if (errs->n == 0)
			pf_node_err(errs, sc->node, "stage '%s': init failed: %s", sc->name,
				    strerror(-rc));
		return rc;
	}
	rs->st = rt->stages[s];
	rs->st->id = s;
	rs->st->rt = rs;
	rs->owner = sc->lcore;
	for (e = 1; e < sc->ops->n_edges && e < PF_MAX_EDGES; e++) {
		uint16_t to = sc->next[e], k, n_inst;

		if (to == PF_NONE)
			continue;
		n_inst = rt->topo->stages[to].n_instances;
		if (n_inst <= 1) {
			rs->out[e] = &rt->rings[pf_topo_ring_index(rt->topo, s, to)];
			continue;
		}
		rs->fan[e] = rte_zmalloc("pf_fan", sizeof(*rs->fan[e]), RTE_CACHE_LINE_SIZE);
		if (rs->fan[e] == NULL)
			return pf_node_err(errs, sc->node, "stage '%s': out of memory", sc->name);
		rs->fan[e]->n = n_inst;
		for (k = 0; k < n_inst; k++)
			rs->fan[e]->ring[k] =
				&rt->rings[pf_topo_ring_index(rt->topo, s, (uint16_t)(to + k))];
	}
	for (r = 0; r < rt->n_rings; r++)
		if (rt->rings[r].conf->to == s)
			rs->in[rs->n_in++] = &rt->rings[r];
	return 0;
}

int
pf_runtime_create(struct pf_runtime **out, struct pf_topo *topo, struct pf_errs *errs)
{
	struct pf_runtime *rt;
	const char *fault;
	uint32_t n_mbufs;
	uint16_t i, j;
	int rc;

	*out = NULL;
	rt = rte_zmalloc("pf_runtime", sizeof(*rt), RTE_CACHE_LINE_SIZE);
	if (rt == NULL)
		return pf_err_add(errs, topo->file, 0, 0, "out of memory for the runtime");
	rt->topo = topo;
	pf_clock_set_mode(topo->clock);
	if (pf_meta_register() < 0) {
		pf_err_add(errs, topo->file, 0, 0, "cannot register the mbuf metadata field");
		goto fail;
	}
	/* Fault injection for tests only: a pool smaller than the topology needs. */
	fault = getenv("PIPEFWD_FAULT_MBUFS");
	n_mbufs = fault != NULL && atoi(fault) >= 512 ? (uint32_t)atoi(fault) : topo->mbufs;
	if (n_mbufs != topo->mbufs)
		PF_LOG(WARNING, "PIPEFWD_FAULT_MBUFS: pool of %u mbufs instead of %u", n_mbufs,
		       topo->mbufs);
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
	for (i = 0; i < topo->n_ports; i++)
		if (port_setup(rt, &topo->ports[i], errs) < 0)
			goto fail;
	rt->n_rings = topo->n_rings;
	for (i = 0; i < topo->n_rings; i++) {
		const struct pf_ring_conf *rc_ = &topo->rings[i];
		char name[RTE_RING_NAMESIZE];

		/* One producer stage and one consumer stage per ring: SP/SC. */
		snprintf(name, sizeof(name), "pf_r%u", i);
		rt->rings[i].conf = rc_;
		rt->rings[i].ring = rte_ring_create(name, rc_->size, rte_socket_id(),
						    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rt->rings[i].ring == NULL) {
			pf_err_add(errs, topo->file, 0, 0, "ring %s: cannot create: %s", rc_->name,
				   rte_strerror(rte_errno));
			goto fail;
		}
	}
	rt->n_stages = topo->n_stages;
	for (i = 0; i < topo->n_stages; i++)
		if (stage_build(rt, i, errs) < 0)
			goto fail;
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

/* ---- data path ---------------------------------------------------------- */

static __rte_always_inline void
ring_send(struct pf_rt_stage *rs, struct pf_rt_ring *r, struct rte_mbuf **pkts, uint16_t n)
{
	unsigned int free_space, sent, used;

	sent = rte_ring_enqueue_burst(r->ring, (void **)pkts, n, &free_space);
	r->enqueued += sent;
	used = rte_ring_get_capacity(r->ring) - free_space;
	if (used > r->hwm)
		r->hwm = used;
	r->hist[used == 0 ? 0 : 32 - __builtin_clz(used)]++;
	if (unlikely(sent < n)) {
		r->full_drops += n - sent;
		rs->ring_full += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

/*
 * An edge to a stage with instances: the symmetric flow hash picks each
 * packet's instance ring (a flow always takes the same ring, so it keeps its
 * order); a stable counting sort keeps the burst order within each ring.
 */
static __rte_noinline void
fan_send(struct pf_rt_stage *rs, const struct pf_rt_fan *f, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *sorted[PF_BURST_MAX];
	uint16_t cnt[PF_MAX_INSTANCES] = { 0 }, at[PF_MAX_INSTANCES], i, k, sum = 0;
	uint8_t inst[PF_BURST_MAX];

	pf_flow_pick_burst(pkts, n, f->n, inst);
	for (i = 0; i < n; i++)
		cnt[inst[i]]++;
	for (k = 0; k < f->n; k++) {
		at[k] = sum;
		sum += cnt[k];
	}
	for (i = 0; i < n; i++)
		sorted[at[inst[i]]++] = pkts[i];
	for (k = 0, sum = 0; k < f->n; sum += cnt[k], k++)
		if (cnt[k] != 0)
			ring_send(rs, f->ring[k], sorted + sum, cnt[k]);
}

/* Move a processed burst by verdict. Order within each ring is kept. */
static __rte_always_inline void
dispatch(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, const uint16_t *edge,
	 uint16_t all)
{
	struct pf_stage *st = rs->st;
	struct rte_mbuf *by_edge[PF_MAX_EDGES][PF_BURST_MAX];
	uint16_t cnt[PF_MAX_EDGES] = { 0 };
	uint16_t i, e, first = all, diff = 0;

	if (first == PF_EDGE_MIXED) {
		/* The stage did not say: find out (XOR-OR vectorises). */
		first = edge[0];
		for (i = 1; i < n; i++)
			diff |= edge[i] ^ first;
	}
	if (diff == 0) {
		/* The common case: the whole burst takes one edge. */
		rs->edge_pkts[first] += n;
		if (first == PF_EDGE_DROP)
			rte_pktmbuf_free_bulk(pkts, n);
		else if (st->ops->tx != NULL)
			st->ops->tx(st, pkts, n);
		else if (likely(rs->out[first] != NULL))
			ring_send(rs, rs->out[first], pkts, n);
		else if (rs->fan[first] != NULL)
			fan_send(rs, rs->fan[first], pkts, n);
		else {
			rs->no_edge += n;
			rte_pktmbuf_free_bulk(pkts, n);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		e = edge[i];
		by_edge[e][cnt[e]++] = pkts[i];
	}
	for (e = 0; e < PF_MAX_EDGES; e++) {
		if (cnt[e] == 0)
			continue;
		rs->edge_pkts[e] += cnt[e];
		if (e == PF_EDGE_DROP)
			rte_pktmbuf_free_bulk(by_edge[e], cnt[e]);
		else if (st->ops->tx != NULL)
			st->ops->tx(st, by_edge[e], cnt[e]);
		else if (rs->out[e] != NULL)
			ring_send(rs, rs->out[e], by_edge[e], cnt[e]);
		else if (rs->fan[e] != NULL)
			fan_send(rs, rs->fan[e], by_edge[e], cnt[e]);
		else {
			rs->no_edge += cnt[e];
			rte_pktmbuf_free_bulk(by_edge[e], cnt[e]);
		}
	}
}

#ifndef NDEBUG
/*
 * Debug builds: every packet a stage sends to edge 0 must bump exactly one
 * of its DROP counters, or the accounting cannot add up.
 */
static uint64_t
drop_ctr_sum(const struct pf_stage *st)
{
	uint64_t drops = 0;
	uint16_t k;

	for (k = 0; k < st->ops->n_ctrs; k++)
		if (st->ops->ctrs[k].kind == PF_CTR_DROP)
			drops += st->ctrs[k];
	return drops;
}

static void
check_drop_discipline(const struct pf_stage *st, uint64_t before, uint16_t n,
		      const uint16_t *edge, uint16_t all)
{
	uint64_t dropped = 0, moved = drop_ctr_sum(st) - before;
	uint16_t i;

	for (i = 0; i < n; i++) {
		dropped += edge[i] == PF_EDGE_DROP;
		if (all != PF_EDGE_MIXED && edge[i] != all)
			rte_panic("stage %s: said the burst took edge %u, packet %u took %u\n",
				  st->conf->name, all, i, edge[i]);
	}
	if (moved != dropped)
		rte_panic("stage %s: %" PRIu64 " packets on edge 0 but drop counters moved by %" PRIu64 "\n",
			  st->conf->name, dropped, moved);
}
#endif

static __rte_always_inline void
run_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t edge[PF_BURST_MAX];
	uint64_t t0 = rte_rdtsc();
#ifndef NDEBUG
	uint64_t drops_before = drop_ctr_sum(rs->st);
#endif

	uint16_t all = rs->st->ops->process_burst(rs->st, pkts, n, edge);
#ifndef NDEBUG
	check_drop_discipline(rs->st, drops_before, n, edge, all);
#endif
	dispatch(rs, pkts, n, edge, all);
	rs->cycles += rte_rdtsc() - t0;
	rs->packets += n;
	rs->bursts++;
}

/* One pass of a stage; returns packets moved. */
static uint16_t
run_stage(struct pf_runtime *rt, struct pf_rt_stage *rs)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];
	struct pf_stage *st = rs->st;
	uint16_t n, i, moved = 0;

	if (st->ops->rx != NULL) {
		if (likely(rt->rx_started && !rt->rx_stopped)) {
			n = st->ops->rx(st, pkts, (uint16_t)st->conf->burst);
			if (n != 0) {
				if (unlikely(__atomic_load_n(&rs->tap, __ATOMIC_RELAXED) != NULL))
					pf_capture_burst(&rs->tap, pkts, n);
				run_burst(rs, pkts, n);
				moved += n;
			}
		}
	} else {
		for (i = 0; i < rs->n_in; i++) {
			struct pf_rt_ring *r = rs->in[i];

			n = (uint16_t)rte_ring_dequeue_burst(r->ring, (void **)pkts,
							     r->conf->burst, NULL);
			if (n == 0)
				continue;
			r->dequeued += n;
			if (unlikely(__atomic_load_n(&r->tap, __ATOMIC_RELAXED) != NULL))
				pf_capture_burst(&r->tap, pkts, n);
			run_burst(rs, pkts, n);
			moved += n;
		}
	}
	if (moved == 0 && st->ops->idle != NULL)
		st->ops->idle(st, pf_now_ns());
	return moved;
}

static int
worker_main(void *arg)
{
	struct pf_runtime *rt = arg;
	struct pf_rt_lcore *lc = NULL;
	const struct pf_lcore_map *map;
	int me = (int)rte_lcore_id();
	uint64_t t0, t1, moved;
	uint16_t i;

	for (i = 0; i < rt->n_lcores; i++)
		if ((int)rt->lcores[i].id == me)
			lc = &rt->lcores[i];
	if (lc == NULL)
		return 0;
	rte_rcu_qsbr_thread_online(rt->qsbr, lc->qsbr_id);
	/* Sources wait for every worker: a replayed file is read at once, and a
	 * consumer that is not polling yet would turn it into ring_full drops. */
	if (__atomic_add_fetch(&rt->workers_ready, 1, __ATOMIC_ACQ_REL) == rt->n_lcores)
		__atomic_store_n(&rt->rx_started, 1, __ATOMIC_RELEASE);
	t0 = rte_rdtsc();
	while (!__atomic_load_n(&rt->stop, __ATOMIC_ACQUIRE)) {
		moved = 0;
		/* The map can change between passes (reload); a stage in the map
		 * runs only once this lcore owns it (hand-over in progress). */
		map = __atomic_load_n(&lc->map, __ATOMIC_ACQUIRE);
		for (i = 0; i < map->n; i++)
			if (likely(__atomic_load_n(&map->stages[i]->owner, __ATOMIC_ACQUIRE) == me))
				moved += run_stage(rt, map->stages[i]);
		t1 = rte_rdtsc();
		if (unlikely(t1 >= lc->housekeep_tsc)) {
			/* Upkeep runs loaded or idle, about once a millisecond. */
			for (i = 0; i < map->n; i++) {
				struct pf_stage *st = map->stages[i]->st;

				if (st->ops->housekeep != NULL &&
				    __atomic_load_n(&map->stages[i]->owner, __ATOMIC_ACQUIRE) == me)
					st->ops->housekeep(st, pf_now_ns());
			}
			lc->housekeep_tsc = t1 + rte_get_tsc_hz() / 1000;
		}
		if (moved != 0)
			lc->busy_cycles += t1 - t0;
		lc->total_cycles += t1 - t0;
		t0 = t1;
		__atomic_store_n(&lc->loops, lc->loops + 1, __ATOMIC_RELEASE);
		rte_rcu_qsbr_quiescent(rt->qsbr, lc->qsbr_id);
		/* A spare lcore (no stages) waits without burning its CPU. */
		if (unlikely(map->n == 0))
			rte_delay_us_sleep(200);
	}
	rte_rcu_qsbr_thread_offline(rt->qsbr, lc->qsbr_id);
	return 0;
}

/* The runtime whose workers stage updates synchronise with. */
static struct pf_runtime *running;

void
pf_rcu_synchronize(void)
{
	struct pf_runtime *rt = __atomic_load_n(&running, __ATOMIC_ACQUIRE);

	if (rt != NULL && rt->qsbr != NULL)
		rte_rcu_qsbr_synchronize(rt->qsbr, RTE_QSBR_THRID_INVALID);
}

uint64_t
pf_rcu_start(void)
{
	struct pf_runtime *rt = __atomic_load_n(&running, __ATOMIC_ACQUIRE);

	return rt != NULL && rt->qsbr != NULL ? rte_rcu_qsbr_start(rt->qsbr) : 0;
}

bool
pf_rcu_done(uint64_t token)
{
	struct pf_runtime *rt = __atomic_load_n(&running, __ATOMIC_ACQUIRE);

	return rt == NULL || rt->qsbr == NULL || token == 0 ||
	       rte_rcu_qsbr_check(rt->qsbr, token, false) == 1;
}

int
pf_runtime_start(struct pf_runtime *rt)
{
	uint16_t i;
	int rc;

	rt->start_tsc = rte_rdtsc();
	__atomic_store_n(&running, rt, __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_lcores; i++) {
		rc = rte_eal_remote_launch(worker_main, rt, rt->lcores[i].id);
		if (rc < 0) {
			PF_LOG(ERR, "cannot launch lcore %u: %s", rt->lcores[i].id, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Wait until every worker has finished @p passes more loops. */
static void
wait_passes(struct pf_runtime *rt, unsigned int passes)
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

int
pf_runtime_apply_lcore_map(struct pf_runtime *rt, const struct pf_topo *topo)
{
	uint64_t seen[PF_MAX_LCORES];
	bool wait_for[PF_MAX_LCORES] = { false };
	int want[PF_MAX_STAGES];
	uint16_t i, j, k, moved = 0;
	bool done;

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
		__atomic_store_n(&rt->rts[i].owner, -1, __ATOMIC_RELEASE);
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
	/* 3. Hand each moved stage to its new lcore. */
	for (i = 0; i < rt->n_stages; i++)
		if (rt->rts[i].owner != want[i])
			__atomic_store_n(&rt->rts[i].owner, want[i], __ATOMIC_RELEASE);
	/* The previous map buffers may be reused once every lcore moved on. */
	pf_rcu_synchronize();
	return moved;
}

static bool
drained(const struct pf_runtime *rt)
{
	uint16_t i;

	for (i = 0; i < rt->n_rings; i++)
		if (rte_ring_count(rt->rings[i].ring) != 0)
			return false;
	for (i = 0; i < rt->n_stages; i++)
		if (rt->stages[i]->ops->busy != NULL && rt->stages[i]->ops->busy(rt->stages[i]))
			return false;
	return true;
}

static void
close_ports(struct pf_runtime *rt)
{
	uint16_t i;

	if (rt->ports_closed)
		return;
	for (i = 0; i < rt->topo->n_ports; i++) {
		uint16_t pid = rt->topo->ports[i].port_id;

		if (!rte_eth_dev_is_valid_port(pid))
			continue;
		rte_eth_stats_get(pid, &rt->port_stats[i]);
		rte_eth_dev_stop(pid);
		rte_eth_dev_close(pid);
	}
	rt->ports_closed = true;
}

void
pf_runtime_port_stats(const struct pf_runtime *rt, uint16_t port, struct rte_eth_stats *es)
{
	if (rt->ports_closed)
		*es = rt->port_stats[port];
	else if (rte_eth_stats_get(rt->topo->ports[port].port_id, es) != 0)
		memset(es, 0, sizeof(*es));
}

void
pf_runtime_stop(struct pf_runtime *rt)
{
	uint64_t deadline = rte_rdtsc() + 2 * rte_get_tsc_hz();

	/* Sources stop first; then every ring and tx buffer drains. A pass that
	 * starts after rx_stopped is seen cannot add packets, so two complete
	 * passes with everything empty mean nothing is in flight. */
	__atomic_store_n(&rt->rx_stopped, 1, __ATOMIC_RELEASE);
	wait_passes(rt, 2);
	while (rte_rdtsc() < deadline) {
		if (drained(rt)) {
			wait_passes(rt, 2);
			if (drained(rt))
				break;
		}
		rte_delay_us_sleep(200);
	}
	rt->stop_tsc = rte_rdtsc();
	__atomic_store_n(&rt->stop, 1, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	__atomic_store_n(&running, NULL, __ATOMIC_RELEASE);
	close_ports(rt);
	rt->mbufs_in_use = rte_mempool_in_use_count(rt->pool);
}

void
pf_runtime_destroy(struct pf_runtime *rt)
{
	uint16_t i, j;

	if (rt == NULL)
		return;
	for (i = 0; i < rt->n_stages; i++) {
		pf_stage_destroy(rt->stages[i]);
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
	close_ports(rt);
	rte_mempool_free(rt->pool);
	rte_free(rt->qsbr);
	rte_free(rt);
}

/* ---- totals ------------------------------------------------------------- */

uint64_t
pf_runtime_port_rx(const struct pf_runtime *rt, uint16_t port)
{
	uint64_t v = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		v += rt->stages[i]->port_rx[port];
	return v;
}

uint64_t
pf_runtime_port_tx(const struct pf_runtime *rt, uint16_t port)
{
	uint64_t v = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		v += rt->stages[i]->port_tx[port];
	return v;
}

uint64_t
pf_runtime_rx_total(const struct pf_runtime *rt)
{
	uint64_t v = 0;
	uint16_t p;

	for (p = 0; p < rt->topo->n_ports; p++)
		v += pf_runtime_port_rx(rt, p);
	return v;
}

void
pf_runtime_totals(const struct pf_runtime *rt, struct pf_totals *t)
{
	struct pf_gauge g[PF_MAX_PORTS + 8];
	uint16_t i, p, k, n;

	memset(t, 0, sizeof(*t));
	for (p = 0; p < rt->topo->n_ports; p++) {
		t->rx += pf_runtime_port_rx(rt, p);
		t->tx += pf_runtime_port_tx(rt, p);
	}
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage *st = rt->stages[i];
		const struct pf_rt_stage *rs = &rt->rts[i];

		t->replicas += st->replicas;
		t->dropped += rs->ring_full + rs->no_edge;
		for (k = 0; k < st->ops->n_ctrs; k++)
			if (st->ops->ctrs[k].kind == PF_CTR_DROP)
				t->dropped += st->ctrs[k];
		if (st->ops->gauges != NULL) {
			n = st->ops->gauges(st, g, RTE_DIM(g));
			for (k = 0; k < n; k++)
				if (strcmp(g[k].name, "in_flight") == 0)
					t->in_flight += g[k].value;
		}
	}
	for (i = 0; i < rt->n_rings; i++)
		t->in_flight += rte_ring_count(rt->rings[i].ring);
	t->unaccounted = (int64_t)(t->rx + t->replicas) -
			 (int64_t)(t->tx + t->dropped + t->in_flight);
}
