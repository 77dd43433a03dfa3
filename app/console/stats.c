/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stats commands of the stats socket (registered by app/console/commands.c).
 *
 *   /pipefwd/rings   [,NAME]  size, used, high-water mark, enqueued, dequeued,
 *                             full drops, occupancy histogram (log2 buckets)
 *   /pipefwd/stages  [,NAME]  packets, bursts, cycles, drops by reason, info
 *                             counters, packets per edge, the stage's gauges
 *   /pipefwd/lcores  [,ID]    stages, loops, busy and total cycles, busy %
 *   /pipefwd/ports   [,NAME]  pipefwd rx/tx, the ethdev counters, link, MTU, queues
 *                             (ports.c adds what is not a counter)
 *   /pipefwd/config           topology file, load time, lcore map, names
 *   /pipefwd/totals           the accounting invariant's terms, live
 *   /pipefwd/clear   [,NAME]  counters (and hwm) from now on, all or one stage/ring
 *   /pipefwd/table,STAGE,TABLE[,key=value...]
 *                             one page of a stage's table (macs, routes, lookup,
 *                             rules, sessions): the stage's show op, app/console/show.c
 *
 * Every reply is built on DPDK's telemetry thread from plain relaxed loads of
 * single-writer counters: the data path never takes a lock and never waits
 * for a reader. Replies are keyed by a telemetry-safe form of each name
 * (DPDK 22.11 accepts only [A-Za-z0-9_/] in keys: "rx->xc" becomes
 * "rx_to_xc"); the original name is in each item's "name". A reply is at most
 * 16 KiB (DPDK drops what does not fit): clients that need every item of a
 * big topology ask per item, with the names listed by /pipefwd/config.
 *
 * Every command runs under the console's lock (commands.c), which the main
 * thread takes to replace the topology and to withdraw the runtime, so a
 * reply is never built while the runtime shuts down or a reload swaps what
 * it reads.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "pf_stages.h"
#include "pf_console.h"
#include "pf_fault.h"
#include "pf_latency.h"
#include "pf_log.h"
#include "pf_reload.h"
#include "pf_rebalance.h"
#include "pf_runtime.h"
#include "pf_sink.h"

#define TEL_KEY_MAX 96

/* A counter another lcore writes: one relaxed 64-bit load, never torn. */
#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* ---- names -------------------------------------------------------------- */

/* Telemetry key from a free-form name: anything outside [A-Za-z0-9_] -> '_'. */
static void
key_from(char *out, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		out[i] = isalnum((unsigned char)name[i]) || name[i] == '_' ? name[i] : '_';
	out[i] = '\0';
}

enum tel_kind { TEL_RINGS, TEL_STAGES, TEL_LCORES, TEL_PORTS, TEL_KIND_MAX };

static uint16_t
item_count(const struct pf_runtime *rt, enum tel_kind k)
{
	switch (k) {
	case TEL_RINGS:
		return rt->n_rings;
	case TEL_STAGES:
		return rt->n_stages;
	case TEL_LCORES:
		return rt->n_lcores;
	default:
		return rt->topo->n_ports;
	}
}

/* Whether index @p i holds an item (a port removed live leaves a hole). */
static bool
item_present(const struct pf_runtime *rt, enum tel_kind k, uint16_t i)
{
	return k != TEL_PORTS || pf_port_present(&rt->topo->ports[i]);
}

/* The item's own name: "rx->xc", "rx", "1", "p0". */
static void
item_name(const struct pf_runtime *rt, enum tel_kind k, uint16_t i, char *out, size_t len)
{
	switch (k) {
	case TEL_RINGS:
		snprintf(out, len, "%s", rt->rings[i].conf->name);
		break;
	case TEL_STAGES:
		snprintf(out, len, "%s", rt->stages[i]->conf->name);
		break;
	case TEL_LCORES:
		snprintf(out, len, "%u", rt->lcores[i].id);
		break;
	default:
		snprintf(out, len, "%s", rt->topo->ports[i].name);
		break;
	}
}

static void
item_base_key(const struct pf_runtime *rt, enum tel_kind k, uint16_t i, char *out, size_t len)
{
	char name[2 * PF_NAME_MAX + 8];

	if (k == TEL_RINGS) {
		const struct pf_ring_conf *rc = rt->rings[i].conf;
		char from[PF_NAME_MAX], to[PF_NAME_MAX];

		key_from(from, sizeof(from), rt->topo->stages[rc->from].name);
		key_from(to, sizeof(to), rt->topo->stages[rc->to].name);
		snprintf(out, len, "%s_to_%s", from, to);
		return;
	}
	item_name(rt, k, i, name, sizeof(name));
	key_from(out, len, name);
}

/* Unique key: the base key, suffixed with the index if an earlier item has it. */
static void
item_key(const struct pf_runtime *rt, enum tel_kind k, uint16_t i, char *out, size_t len)
{
	char other[TEL_KEY_MAX];
	uint16_t j;

	item_base_key(rt, k, i, out, len);
	for (j = 0; j < i; j++) {
		item_base_key(rt, k, j, other, sizeof(other));
		if (strcmp(other, out) == 0) {
			size_t l = strlen(out);

			snprintf(out + l, len - l, "_%u", i);
			return;
		}
	}
}

static bool
item_match(const struct pf_runtime *rt, enum tel_kind k, uint16_t i, const char *want)
{
	char buf[TEL_KEY_MAX];

	item_name(rt, k, i, buf, sizeof(buf));
	if (strcmp(buf, want) == 0)
		return true;
	item_key(rt, k, i, buf, sizeof(buf));
	return strcmp(buf, want) == 0;
}

/* ---- clear: baselines subtracted on read -------------------------------- */

/*
 * /pipefwd/clear (OVS's "clear counters"): counters keep their single writer
 * and are never reset; a clear records their values, and replies show the
 * difference. The exit report and /pipefwd/totals read the raw counters, so
 * the accounting invariant holds whatever was cleared. A high-water mark is
 * a maximum, not a sum: a clear asks each ring's producer lcore to restart
 * its mark from the occupancy then (pf_runtime_hwm_restart(), within about a
 * millisecond, before the clear replies), so the mark since the clear is
 * exact. Should a producer not answer in time (an lcore mid hand-over, or
 * not scheduled for 100 ms), the mark is exact once it has risen past its
 * value at the clear; until then it is what the ring held as the clear
 * replied (exact while the producer sent nothing since), or, after sends,
 * that or the top occupancy bucket of the histogram since the clear,
 * whichever is higher, and "hwm_exact" is 0.
 * Baselines belong to an item by name: an item a reload added or renamed
 * shows counters since start.
 */
#define BASE_CTRS 64

struct base_stage {
	char name[PF_NAME_MAX];
	bool set;
	uint64_t packets, bursts, cycles, ring_full, no_edge, time_skipped, io_cycles;
	uint64_t edge[PF_MAX_EDGES];
	uint64_t ctr[BASE_CTRS];
};

struct base_ring {
	char name[2 * PF_NAME_MAX + 8];
	bool set;
	uint64_t enqueued, dequeued, full_drops, direct, hwm;
	uint64_t hist[PF_RING_HIST_BUCKETS];
	bool hwm_late;        /* the producer did not restart hwm before the clear replied */
	uint64_t hwm_floor;   /* late: the occupancy as the clear replied, a mark since then */
	struct pf_lat_hist sojourn;
};

struct base_lcore {
	bool set;
	unsigned int id;
	uint64_t loops, busy, total;
};

struct base_port {
	char name[PF_NAME_MAX];
	bool set;
	uint64_t rx, tx;
	uint64_t rxq[PF_RXQ_MAX];
	struct rte_eth_stats es;
	struct pf_lat_hist lat;
};

static struct tel_base {
	struct base_stage st[PF_MAX_STAGES];
	struct base_ring ring[PF_MAX_RINGS];
	struct base_lcore lc[PF_MAX_LCORES];
	struct base_port port[PF_MAX_PORTS];
} *tel_base;   /* NULL until the first clear; under the console lock */

/* @p v since the clear; a counter below its baseline (never, with one writer) shows raw. */
static inline uint64_t
since(uint64_t v, uint64_t base)
{
	return v >= base ? v - base : v;
}

static const struct base_stage *
base_stage(const struct pf_runtime *rt, uint16_t i)
{
	const struct base_stage *b = tel_base != NULL ? &tel_base->st[i] : NULL;

	return b != NULL && b->set && strcmp(b->name, rt->stages[i]->conf->name) == 0 ? b : NULL;
}

static const struct base_ring *
base_ring(const struct pf_runtime *rt, uint16_t i)
{
	const struct base_ring *b = tel_base != NULL ? &tel_base->ring[i] : NULL;

	return b != NULL && b->set && strcmp(b->name, rt->rings[i].conf->name) == 0 ? b : NULL;
}

static const struct base_lcore *
base_lcore(const struct pf_runtime *rt, uint16_t i)
{
	const struct base_lcore *b = tel_base != NULL ? &tel_base->lc[i] : NULL;

	return b != NULL && b->set && b->id == rt->lcores[i].id ? b : NULL;
}

static const struct base_port *
base_port(const struct pf_runtime *rt, uint16_t i)
{
	const struct base_port *b = tel_base != NULL ? &tel_base->port[i] : NULL;

	return b != NULL && b->set && strcmp(b->name, rt->topo->ports[i].name) == 0 ? b : NULL;
}

static void
clear_stage(const struct pf_runtime *rt, uint16_t i)
{
	const struct pf_stage *st = rt->stages[i];
	const struct pf_rt_stage *rs = &rt->rts[i];
	struct base_stage *b = &tel_base->st[i];
	uint16_t k;

	snprintf(b->name, sizeof(b->name), "%s", st->conf->name);
	b->cycles = RD(rs->cycles);
	b->time_skipped = RD(rs->time_skipped);
	b->io_cycles = RD(rs->io_cycles);
	b->bursts = RD(rs->bursts);
	b->packets = RD(rs->packets);
	b->ring_full = RD(rs->ring_full);
	b->no_edge = RD(rs->no_edge);
	for (k = 0; k < PF_MAX_EDGES; k++)
		b->edge[k] = RD(rs->edge_pkts[k]);
	for (k = 0; k < st->ops->n_ctrs && k < BASE_CTRS; k++)
		b->ctr[k] = RD(st->ctrs[k]);
	b->set = true;
}

static void
clear_ring(const struct pf_runtime *rt, uint16_t i)
{
	const struct pf_rt_ring *r = &rt->rings[i];
	struct base_ring *b = &tel_base->ring[i];
	unsigned int k;

	snprintf(b->name, sizeof(b->name), "%s", r->conf->name);
	b->dequeued = RD(r->dequeued);
	b->enqueued = RD(r->enqueued);
	b->full_drops = RD(r->full_drops);
	b->direct = RD(r->direct);
	b->hwm = pf_rt_ring_hwm_total(r);
	for (k = 0; k < PF_RING_HIST_BUCKETS; k++)
		b->hist[k] = RD(r->hist[k]);
	memset(&b->sojourn, 0, sizeof(b->sojourn));
	pf_lat_add(&b->sojourn, &r->sojourn);
	b->set = true;
}

/* The production binary's fault hook: producers answer (app/runtime/pf_fault.h). */
__attribute__((weak)) bool
pf_fault_hwm_late(void)
{
	return false;
}

/* The cleared rings' producers restart their marks: exact from now on. */
static void
clear_hwm(const struct pf_runtime *rt, const char *name)
{
	uint64_t mask[(PF_MAX_RINGS + 63) / 64] = { 0 };
	uint32_t req[PF_MAX_RINGS];
	uint16_t i;

	for (i = 0; i < rt->n_rings; i++)
		if (name == NULL || item_match(rt, TEL_RINGS, i, name))
			mask[i / 64] |= UINT64_C(1) << (i % 64);
	if (pf_fault_hwm_late())
		for (i = 0; i < rt->n_rings; i++)
			req[i] = __atomic_load_n(&rt->rings[i].hwm_clear_ack, __ATOMIC_RELAXED) + 1;
	else
		pf_runtime_hwm_restart((struct pf_runtime *)(uintptr_t)rt, mask, req, 100);
	for (i = 0; i < rt->n_rings; i++) {
		struct base_ring *b = &tel_base->ring[i];

		if (!(mask[i / 64] >> (i % 64) & 1))
			continue;
		b->hwm_late = !pf_rt_ring_hwm_restarted(&rt->rings[i], req[i]);
		/* Without the producer's restart the ring still holds this much:
		 * the mark since the clear is at least that, and exactly that
		 * until the producer sends again (occupancy rises only then). */
		b->hwm_floor = rte_ring_count(rt->rings[i].ring);
	}
}

/* Everything, or the stage or ring named @p name. */
static int
clear_items(const struct pf_runtime *rt, const char *name, struct rte_tel_data *d)
{
	uint16_t i, q, n = 0;

	if (tel_base == NULL) {
		tel_base = calloc(1, sizeof(*tel_base));
		if (tel_base == NULL)
			return -ENOMEM;
	}
	if (name != NULL && *name == '\0')
		name = NULL;
	for (i = 0; i < rt->n_stages; i++)
		if (name == NULL || item_match(rt, TEL_STAGES, i, name)) {
			clear_stage(rt, i);
			n++;
		}
	for (i = 0; i < rt->n_rings; i++)
		if (name == NULL || item_match(rt, TEL_RINGS, i, name)) {
			clear_ring(rt, i);
			n++;
		}
	if (name == NULL) {
		for (i = 0; i < rt->n_lcores; i++) {
			struct base_lcore *b = &tel_base->lc[i];

			b->id = rt->lcores[i].id;
			pf_rt_lcore_cycles(&rt->lcores[i], &b->busy, &b->total);
			b->loops = RD(rt->lcores[i].loops);
			b->set = true;
		}
		for (i = 0; i < rt->topo->n_ports; i++) {
			struct base_port *b = &tel_base->port[i];

			if (!pf_port_present(&rt->topo->ports[i]))
				continue;
			snprintf(b->name, sizeof(b->name), "%s", rt->topo->ports[i].name);
			pf_runtime_port_stats(rt, i, &b->es);
			b->rx = pf_runtime_port_rx(rt, i);
			b->tx = pf_runtime_port_tx(rt, i);
			for (q = 0; q < PF_RXQ_MAX; q++)
				b->rxq[q] = pf_runtime_port_rxq(rt, i, q);
			pf_runtime_port_latency(rt, i, &b->lat);
			b->set = true;
		}
	}
	if (n == 0 && name != NULL)
		return -ENOENT;
	clear_hwm(rt, name);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "cleared", n);
	return 0;
}

/* ---- items -------------------------------------------------------------- */

static uint64_t
ratio(uint64_t num, uint64_t den)
{
	return den != 0 ? (num + den / 2) / den : 0;
}

/*
 * A latency histogram as a reply's dict @p name: samples, mean, p50, p99 and
 * max in nanoseconds (pf_lat_summarize: bucket bounds, at most the max).
 */
static void
add_latency(struct rte_tel_data *d, const char *name, const struct pf_lat_hist *h,
	    const struct pf_lat_hist *base)
{
	struct rte_tel_data *l = rte_tel_data_alloc();
	struct pf_lat_summary s;
	double ns = 1e9 / (double)rte_get_tsc_hz();

	if (l == NULL)
		return;
	pf_lat_summarize(h, base, &s);
	rte_tel_data_start_dict(l);
	rte_tel_data_add_dict_u64(l, "samples", s.count);
	rte_tel_data_add_dict_u64(l, "mean_ns", (uint64_t)((double)s.mean * ns + 0.5));
	rte_tel_data_add_dict_u64(l, "p50_ns", (uint64_t)((double)s.p50 * ns + 0.5));
	rte_tel_data_add_dict_u64(l, "p99_ns", (uint64_t)((double)s.p99 * ns + 0.5));
	rte_tel_data_add_dict_u64(l, "max_ns", (uint64_t)((double)s.max * ns + 0.5));
	if (rte_tel_data_add_dict_container(d, name, l, 0) != 0)
		rte_tel_data_free(l);
}

static void
fill_ring(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t i)
{
	const struct pf_rt_ring *r = &rt->rings[i];
	const struct pf_ring_conf *rc = r->conf;
	const struct base_ring *b = base_ring(rt, i);
	struct rte_tel_data *h = rte_tel_data_alloc();
	uint64_t used, hwm, deq, top = 0;
	bool exact = true;
	unsigned int cap = rte_ring_get_capacity(r->ring), k, nb;
	char key[24];

	/* used first: the producer raises hwm just after its enqueue, so a
	 * reader between the two sees used > hwm; report the max of both. */
	used = rte_ring_count(r->ring);
	/* Restarted before the clear replied: the mark since then. Else the
	 * mark since start, exact once risen past its value at the clear. */
	hwm = b != NULL && !b->hwm_late ? RD(r->hwm) : pf_rt_ring_hwm_total(r);
	if (b != NULL && b->hwm_late && hwm <= b->hwm) {
		/* Not risen since the clear: what the ring held as the clear
		 * replied, and above it at most the top occupancy bucket of the
		 * sends since (an upper bound, exact while nothing was sent). */
		bool sent = false;

		for (k = 0; k < PF_RING_HIST_BUCKETS; k++)
			if (RD(r->hist[k]) != b->hist[k]) {
				top = k == 0 ? 0 : (UINT64_C(1) << k) - 1;
				sent = true;
			}
		hwm = RTE_MAX(b->hwm_floor, RTE_MIN(top, hwm));
		exact = !sent;
	}
	hwm = RTE_MAX(hwm, used);
	rte_tel_data_add_dict_string(d, "name", rc->name);
	rte_tel_data_add_dict_string(d, "from", rt->topo->stages[rc->from].name);
	rte_tel_data_add_dict_string(d, "to", rt->topo->stages[rc->to].name);
	rte_tel_data_add_dict_u64(d, "size", rc->size);
	rte_tel_data_add_dict_u64(d, "capacity", cap);
	rte_tel_data_add_dict_u64(d, "burst", rc->burst);
	rte_tel_data_add_dict_u64(d, "used", used);
	rte_tel_data_add_dict_u64(d, "hwm", hwm);
	rte_tel_data_add_dict_int(d, "hwm_exact", exact || hwm == used);
	/* dequeued before enqueued, so a reader rarely sees more out than in */
	deq = RD(r->dequeued);
	rte_tel_data_add_dict_u64(d, "enqueued", since(RD(r->enqueued), b ? b->enqueued : 0));
	rte_tel_data_add_dict_u64(d, "dequeued", since(deq, b ? b->dequeued : 0));
	rte_tel_data_add_dict_u64(d, "full_drops", since(RD(r->full_drops), b ? b->full_drops : 0));
	rte_tel_data_add_dict_u64(d, "direct", since(RD(r->direct), b ? b->direct : 0));
	add_latency(d, "sojourn", &r->sojourn, b ? &b->sojourn : NULL);
	if (h == NULL)
		return;
	/* Bucket b counts enqueue bursts that left 2^(b-1)..2^b-1 entries (b=0: 0). */
	nb = RTE_MIN(cap == 0 ? 1u : 33u - (unsigned int)__builtin_clz(cap),
		     (unsigned int)PF_RING_HIST_BUCKETS);
	rte_tel_data_start_dict(h);
	for (k = 0; k < nb; k++) {
		snprintf(key, sizeof(key), "le_%" PRIu64, (UINT64_C(1) << k) - 1);
		rte_tel_data_add_dict_u64(h, key, since(RD(r->hist[k]), b ? b->hist[k] : 0));
	}
	if (rte_tel_data_add_dict_container(d, "hist", h, 0) != 0)
		rte_tel_data_free(h);
}

static void
add_sub(struct rte_tel_data *d, const char *name, struct rte_tel_data *sub)
{
	if (sub != NULL && rte_tel_data_add_dict_container(d, name, sub, 0) != 0)
		rte_tel_data_free(sub);
}

/* The tables /pipefwd/table can show for a stage type. */
static struct rte_tel_data *
table_names(const char *const *names)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a == NULL)
		return NULL;
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	for (; *names != NULL; names++)
		rte_tel_data_add_array_string(a, *names);
	return a;
}

static void
fill_stage(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t i)
{
	const struct pf_stage *st = rt->stages[i];
	const struct pf_rt_stage *rs = &rt->rts[i];
	const struct pf_stage_ops *ops = st->ops;
	struct rte_tel_data *drops = rte_tel_data_alloc(), *info = rte_tel_data_alloc();
	struct rte_tel_data *edges = rte_tel_data_alloc(), *gauges = rte_tel_data_alloc();
	struct pf_gauge g[PF_MAX_PORTS + 8];
	const struct base_stage *b = base_stage(rt, i);
	uint64_t packets, bursts, cycles, v, drop_sum;
	char key[TEL_KEY_MAX];
	uint16_t k, n;

	/* Live reads of three counters: the ratios may be off by one burst. */
	cycles = since(RD(rs->cycles), b ? b->cycles : 0);
	bursts = since(RD(rs->bursts), b ? b->bursts : 0);
	packets = since(RD(rs->packets), b ? b->packets : 0);
	rte_tel_data_add_dict_string(d, "name", st->conf->name);
	rte_tel_data_add_dict_string(d, "type", ops->type);
	rte_tel_data_add_dict_int(d, "lcore", st->conf->lcore);
	rte_tel_data_add_dict_u64(d, "packets", packets);
	rte_tel_data_add_dict_u64(d, "bursts", bursts);
	rte_tel_data_add_dict_u64(d, "cycles", cycles);
	rte_tel_data_add_dict_u64(d, "avg_burst", ratio(packets, bursts));
	rte_tel_data_add_dict_u64(d, "cycles_per_packet", ratio(cycles, packets));
	rte_tel_data_add_dict_u64(d, "time_skipped",
				  since(RD(rs->time_skipped), b ? b->time_skipped : 0));
	if (rs->kind & PF_RT_KIND_SOURCE) {
		v = since(RD(rs->io_cycles), b ? b->io_cycles : 0);
		rte_tel_data_add_dict_u64(d, "io_cycles", v);
		rte_tel_data_add_dict_u64(d, "io_cycles_per_packet", ratio(v, packets));
	}

	drop_sum = 0;
	if (drops != NULL) {
		rte_tel_data_start_dict(drops);
		v = since(RD(rs->ring_full), b ? b->ring_full : 0);
		drop_sum += v;
		rte_tel_data_add_dict_u64(drops, "ring_full", v);
		v = since(RD(rs->no_edge), b ? b->no_edge : 0);
		drop_sum += v;
		rte_tel_data_add_dict_u64(drops, "no_edge", v);
	}
	if (info != NULL)
		rte_tel_data_start_dict(info);
	for (k = 0; k < ops->n_ctrs; k++) {
		v = since(RD(st->ctrs[k]), b && k < BASE_CTRS ? b->ctr[k] : 0);
		key_from(key, sizeof(key), ops->ctrs[k].name);
		if (ops->ctrs[k].kind == PF_CTR_DROP) {
			drop_sum += v;
			if (drops != NULL)
				rte_tel_data_add_dict_u64(drops, key, v);
		} else if (info != NULL) {
			rte_tel_data_add_dict_u64(info, key, v);
		}
	}
	rte_tel_data_add_dict_u64(d, "dropped", drop_sum);
	add_sub(d, "drops", drops);
	add_sub(d, "counters", info);
	if (edges != NULL) {
		rte_tel_data_start_dict(edges);
		for (k = 0; k < ops->n_edges && k < PF_MAX_EDGES; k++) {
			key_from(key, sizeof(key), ops->edge_names[k]);
			rte_tel_data_add_dict_u64(edges, key,
						  since(RD(rs->edge_pkts[k]), b ? b->edge[k] : 0));
		}
		/* A sink hands every non-drop edge to its tx: name edge 1 "tx". */
		for (; k < PF_MAX_EDGES; k++) {
			v = since(RD(rs->edge_pkts[k]), b ? b->edge[k] : 0);
			if (ops->dp.tx != NULL && k == 1)
				rte_tel_data_add_dict_u64(edges, "tx", v);
			else if (v != 0) {
				snprintf(key, sizeof(key), "edge_%u", k);
				rte_tel_data_add_dict_u64(edges, key, v);
			}
		}
	}
	add_sub(d, "edges", edges);
	if (gauges != NULL) {
		rte_tel_data_start_dict(gauges);
		/* Gauges read stage state with plain loads (pf_stage_ops.gauges). */
		n = pf_stage_gauges(st, g, RTE_DIM(g));
		for (k = 0; k < n; k++) {
			key_from(key, sizeof(key), g[k].name);
			rte_tel_data_add_dict_u64(gauges, key, g[k].value);
		}
	}
	add_sub(d, "gauges", gauges);
	if (ops->obs.show_tables != NULL)
		add_sub(d, "tables", table_names(ops->obs.show_tables));
}

static void
fill_lcore(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t i)
{
	const struct pf_rt_lcore *lc = &rt->lcores[i];
	const struct pf_lcore_map *map = __atomic_load_n(&lc->map, __ATOMIC_ACQUIRE);
	struct rte_tel_data *names = rte_tel_data_alloc();
	const struct base_lcore *b = base_lcore(rt, i);
	uint64_t busy, total;
	uint16_t k;

	pf_rt_lcore_cycles(lc, &busy, &total);
	if (b != NULL) {
		total = since(total, b->total);
		busy = RTE_MIN(since(busy, b->busy), total);
	}
	rte_tel_data_add_dict_int(d, "id", (int)lc->id);
	rte_tel_data_add_dict_u64(d, "loops", since(RD(lc->loops), b ? b->loops : 0));
	rte_tel_data_add_dict_u64(d, "naps", RD(lc->naps));   /* runtime.idle_sleep_us */
	rte_tel_data_add_dict_u64(d, "busy_cycles", busy);
	rte_tel_data_add_dict_u64(d, "total_cycles", total);
	rte_tel_data_add_dict_u64(d, "busy_pct", total != 0 ? busy * 100 / total : 0);
	if (names != NULL) {
		rte_tel_data_start_array(names, RTE_TEL_STRING_VAL);
		for (k = 0; k < map->n; k++)
			rte_tel_data_add_array_string(names, map->stages[k]->st->conf->name);
	}
	add_sub(d, "stages", names);
}

/*
 * Per rx queue: what the rx stages read (rx_queues, exact, the RSS balance)
 * and what the PMD counted (q_ipackets, when it keeps per-queue counters).
 */
static void
fill_port_queues(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t i,
		 const struct base_port *b)
{
	struct rte_tel_data *rq = rte_tel_data_alloc(), *hq = rte_tel_data_alloc();
	uint16_t q, n = RTE_MIN(RTE_MAX(rt->topo->ports[i].n_rxq, 1), PF_RXQ_MAX);
	struct rte_eth_stats es;

	pf_runtime_port_stats(rt, i, &es);
	if (rq != NULL)
		rte_tel_data_start_array(rq, RTE_TEL_U64_VAL);
	if (hq != NULL)
		rte_tel_data_start_array(hq, RTE_TEL_U64_VAL);
	for (q = 0; q < n; q++) {
		if (rq != NULL)
			rte_tel_data_add_array_u64(rq, since(pf_runtime_port_rxq(rt, i, q),
							     b ? b->rxq[q] : 0));
		if (hq != NULL && q < RTE_ETHDEV_QUEUE_STAT_CNTRS)
			rte_tel_data_add_array_u64(hq, since(es.q_ipackets[q],
							     b ? b->es.q_ipackets[q] : 0));
	}
	add_sub(d, "rx_queues", rq);
	add_sub(d, "q_ipackets", hq);
}

static void
fill_port(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t i)
{
	const struct pf_port_conf *pc = &rt->topo->ports[i];
	const struct base_port *b = base_port(rt, i);
	struct pf_lat_hist lat;
	struct rte_eth_stats es;

	pf_runtime_port_stats(rt, i, &es);
	if (b != NULL) {
		es.ipackets = since(es.ipackets, b->es.ipackets);
		es.opackets = since(es.opackets, b->es.opackets);
		es.ibytes = since(es.ibytes, b->es.ibytes);
		es.obytes = since(es.obytes, b->es.obytes);
		es.imissed = since(es.imissed, b->es.imissed);
		es.ierrors = since(es.ierrors, b->es.ierrors);
		es.oerrors = since(es.oerrors, b->es.oerrors);
		es.rx_nombuf = since(es.rx_nombuf, b->es.rx_nombuf);
	}
	rte_tel_data_add_dict_string(d, "name", pc->name);
	rte_tel_data_add_dict_int(d, "port_id", rt->port_run[i].port_id);
	rte_tel_data_add_dict_u64(d, "rx", since(pf_runtime_port_rx(rt, i), b ? b->rx : 0));
	rte_tel_data_add_dict_u64(d, "tx", since(pf_runtime_port_tx(rt, i), b ? b->tx : 0));
	rte_tel_data_add_dict_u64(d, "ipackets", es.ipackets);
	rte_tel_data_add_dict_u64(d, "opackets", es.opackets);
	rte_tel_data_add_dict_u64(d, "ibytes", es.ibytes);
	rte_tel_data_add_dict_u64(d, "obytes", es.obytes);
	rte_tel_data_add_dict_u64(d, "imissed", es.imissed);
	rte_tel_data_add_dict_u64(d, "ierrors", es.ierrors);
	rte_tel_data_add_dict_u64(d, "oerrors", es.oerrors);
	rte_tel_data_add_dict_u64(d, "rx_nombuf", es.rx_nombuf);
	pf_runtime_port_latency(rt, i, &lat);
	add_latency(d, "latency", &lat, b ? &b->lat : NULL);
	fill_port_queues(d, rt, i, b);
	pf_port_fill_more(d, rt, i);
}

typedef void (*fill_fn)(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t i);

static const fill_fn fillers[TEL_KIND_MAX] = {
	[TEL_RINGS] = fill_ring,
	[TEL_STAGES] = fill_stage,
	[TEL_LCORES] = fill_lcore,
	[TEL_PORTS] = fill_port,
};

/* A dict of items by key; with @p params only the item named so. */
static int
list_items(const struct pf_runtime *rt, enum tel_kind k, const char *params,
	   struct rte_tel_data *d)
{
	char key[TEL_KEY_MAX];
	uint16_t i, n = item_count(rt, k);
	bool found = false;

	if (params != NULL && *params == '\0')
		params = NULL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n; i++) {
		struct rte_tel_data *item;

		if (!item_present(rt, k, i) || (params != NULL && !item_match(rt, k, i, params)))
			continue;
		item = rte_tel_data_alloc();
		if (item == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(item);
		fillers[k](item, rt, i);
		item_key(rt, k, i, key, sizeof(key));
		if (rte_tel_data_add_dict_container(d, key, item, 0) != 0)
			rte_tel_data_free(item);
		found = true;
	}
	return params != NULL && !found ? -ENOENT : 0;
}

/* ---- single objects ----------------------------------------------------- */

static void
names_array(struct rte_tel_data *d, const struct pf_runtime *rt, enum tel_kind k)
{
	struct rte_tel_data *a = rte_tel_data_alloc();
	char key[TEL_KEY_MAX];
	uint16_t i;

	if (a == NULL)
		return;
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	for (i = 0; i < item_count(rt, k); i++) {
		if (!item_present(rt, k, i))
			continue;
		item_key(rt, k, i, key, sizeof(key));
		rte_tel_data_add_array_string(a, key);
	}
	add_sub(d, k == TEL_RINGS ? "rings" : k == TEL_STAGES ? "stages" :
		   k == TEL_LCORES ? "lcores" : "ports", a);
}

static int
get_config(const struct pf_runtime *rt, time_t loaded, struct rte_tel_data *d)
{
	const struct pf_topo *t = rt->topo;
	const struct pf_reload_status *rs = &pf_reload_status;
	struct rte_tel_data *keys = rte_tel_data_alloc(), *map = rte_tel_data_alloc();
	struct rte_tel_data *stages = rte_tel_data_alloc(), *ports = rte_tel_data_alloc();
	char buf[RTE_TEL_MAX_STRING_LEN], key[TEL_KEY_MAX];
	struct tm tm;
	uint16_t i, e;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "topology", t->file);
	if (rs->generation != 0)
		loaded = (time_t)rs->loaded_unix;
	rte_tel_data_add_dict_u64(d, "loaded_at", (uint64_t)loaded);
	gmtime_r(&loaded, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rte_tel_data_add_dict_string(d, "loaded_at_utc", buf);
	rte_tel_data_add_dict_u64(d, "uptime_ms",
				  (rte_rdtsc() - rt->start_tsc) * 1000 / rte_get_tsc_hz());
	rte_tel_data_add_dict_int(d, "pid", (int)getpid());
	rte_tel_data_add_dict_string(d, "runtime_dir", rte_eal_get_runtime_dir());
	rte_tel_data_add_dict_u64(d, "tsc_hz", rte_get_tsc_hz());
	rte_tel_data_add_dict_int(d, "main_lcore", (int)rte_get_main_lcore());
	rte_tel_data_add_dict_u64(d, "mbufs", t->mbufs);
	rte_tel_data_add_dict_u64(d, "idle_sleep_us", rt->idle_sleep_us);
	rte_tel_data_add_dict_u64(d, "generation", rs->generation);
	rte_tel_data_add_dict_u64(d, "reload_failures", rs->failures);
	if (rs->generation != 0 || rs->failures != 0) {
		rte_tel_data_add_dict_int(d, "last_reload_rc", rs->last_rc);
		rte_tel_data_add_dict_u64(d, "last_reload_us", (uint64_t)(rs->last_ms * 1000));
		rte_tel_data_add_dict_string(d, "last_reload", rs->last_msg);
	}
	if (keys != NULL) {
		rte_tel_data_start_dict(keys);
		names_array(keys, rt, TEL_STAGES);
		names_array(keys, rt, TEL_RINGS);
		names_array(keys, rt, TEL_LCORES);
		names_array(keys, rt, TEL_PORTS);
	}
	add_sub(d, "keys", keys);
	/* lcore map: "1": "rx xc tx" */
	if (map != NULL) {
		rte_tel_data_start_dict(map);
		for (i = 0; i < rt->n_lcores; i++) {
			const struct pf_lcore_map *m = __atomic_load_n(&rt->lcores[i].map,
								       __ATOMIC_ACQUIRE);
			size_t len = 0;

			buf[0] = '\0';
			for (e = 0; e < m->n && len < sizeof(buf); e++)
				len += snprintf(buf + len, sizeof(buf) - len, "%s%s", e ? " " : "",
						m->stages[e]->st->conf->name);
			item_key(rt, TEL_LCORES, i, key, sizeof(key));
			rte_tel_data_add_dict_string(map, key, buf);
		}
	}
	add_sub(d, "lcore_map", map);
	/* stages: type, lcore and wiring "edge->stage ..." */
	if (stages != NULL) {
		rte_tel_data_start_dict(stages);
		for (i = 0; i < rt->n_stages; i++) {
			const struct pf_stage_conf *sc = rt->stages[i]->conf;
			struct rte_tel_data *s = rte_tel_data_alloc();
			size_t len = 0;

			if (s == NULL)
				break;
			rte_tel_data_start_dict(s);
			rte_tel_data_add_dict_string(s, "name", sc->name);
			rte_tel_data_add_dict_string(s, "type", sc->ops->type);
			rte_tel_data_add_dict_int(s, "lcore", sc->lcore);
			buf[0] = '\0';
			for (e = 1; e < sc->ops->n_edges && e < PF_MAX_EDGES; e++)
				if (sc->next[e] != PF_NONE && len < sizeof(buf))
					len += snprintf(buf + len, sizeof(buf) - len, "%s%s->%s",
							len ? " " : "", sc->ops->edge_names[e],
							t->stages[sc->next[e]].name);
			rte_tel_data_add_dict_string(s, "next", buf);
			item_key(rt, TEL_STAGES, i, key, sizeof(key));
			add_sub(stages, key, s);
		}
	}
	add_sub(d, "stages", stages);
	if (ports != NULL) {
		rte_tel_data_start_dict(ports);
		for (i = 0; i < t->n_ports; i++) {
			const struct pf_port_conf *pc = &t->ports[i];
			struct rte_tel_data *p;

			if (!pf_port_present(pc))
				continue;
			p = rte_tel_data_alloc();
			if (p == NULL)
				break;
			rte_tel_data_start_dict(p);
			rte_tel_data_add_dict_string(p, "name", pc->name);
			/* telemetry strings stop at 127 bytes; long vdev args are cut */
			rte_tel_data_add_dict_string(p, "device", pc->device);
			rte_tel_data_add_dict_int(p, "port_id", rt->port_run[i].port_id);
			snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", pc->mac[0],
				 pc->mac[1], pc->mac[2], pc->mac[3], pc->mac[4], pc->mac[5]);
			rte_tel_data_add_dict_string(p, "mac", buf);
			item_key(rt, TEL_PORTS, i, key, sizeof(key));
			add_sub(ports, key, p);
		}
	}
	add_sub(d, "ports", ports);
	return 0;
}

static int
get_totals(const struct pf_runtime *rt, struct rte_tel_data *d)
{
	struct pf_totals tot;

	pf_runtime_totals(rt, &tot);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx", tot.rx);
	rte_tel_data_add_dict_u64(d, "tx", tot.tx);
	rte_tel_data_add_dict_u64(d, "replicas", tot.replicas);
	rte_tel_data_add_dict_u64(d, "dropped", tot.dropped);
	rte_tel_data_add_dict_u64(d, "in_flight", tot.in_flight);
	/* live reads are not one snapshot: only exact once traffic stops */
	rte_tel_data_add_dict_int(d, "unaccounted",
				  (int)RTE_MAX(RTE_MIN(tot.unaccounted, (int64_t)INT32_MAX),
					       (int64_t)INT32_MIN));
	rte_tel_data_add_dict_u64(d, "tsc", rte_rdtsc());
	rte_tel_data_add_dict_u64(d, "tsc_hz", rte_get_tsc_hz());
	return 0;
}

/* "1": "rx xc" style map of stage names per lcore for a placement. */
static struct rte_tel_data *
map_dict(const struct pf_runtime *rt, const int *lcore_of)
{
	struct rte_tel_data *m = rte_tel_data_alloc();
	char buf[RTE_TEL_MAX_STRING_LEN], key[TEL_KEY_MAX];
	uint16_t l, s;

	if (m == NULL)
		return NULL;
	rte_tel_data_start_dict(m);
	for (l = 0; l < rt->n_lcores; l++) {
		size_t len = 0;

		buf[0] = '\0';
		for (s = 0; s < rt->n_stages; s++)
			if (lcore_of[s] == l && len < sizeof(buf))
				len += snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? " " : "",
						rt->stages[s]->conf->name);
		item_key(rt, TEL_LCORES, l, key, sizeof(key));
		rte_tel_data_add_dict_string(m, key, buf);
	}
	return m;
}

/* The same as lists of names (a stage name may hold a space). */
static struct rte_tel_data *
map_lists(const struct pf_runtime *rt, const int *lcore_of)
{
	struct rte_tel_data *m = rte_tel_data_alloc(), *a;
	char key[TEL_KEY_MAX];
	uint16_t l, s;

	if (m == NULL)
		return NULL;
	rte_tel_data_start_dict(m);
	for (l = 0; l < rt->n_lcores; l++) {
		a = rte_tel_data_alloc();
		if (a == NULL)
			break;
		rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
		for (s = 0; s < rt->n_stages; s++)
			if (lcore_of[s] == l)
				rte_tel_data_add_array_string(a, rt->stages[s]->conf->name);
		item_key(rt, TEL_LCORES, l, key, sizeof(key));
		if (rte_tel_data_add_dict_container(m, key, a, 0) < 0)
			rte_tel_data_free(a);
	}
	return m;
}

/* A finite number in [lo, hi] (NaN passes every comparison: refused). */
static int
num_arg(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(*out) || !(*out >= lo && *out <= hi))
		return -EINVAL;
	return 0;
}

/* "[CROSS][,window=S]": the advice over the last S seconds. */
/* Why the advice is what it is (pf_rebalance_suggest's rules), in one line into @p buf. */
static const char *
rebalance_why(const struct pf_place_result *res, char *buf, size_t len)
{
	if (res->held)
		snprintf(buf, len, "%s: no stage's load moved %.0f %% since", res->moves != 0 ?
			 "the advice given last" : "holding the map advised last",
			 PF_REBALANCE_CHANGE * 100);
	else if (res->current_shares)
		snprintf(buf, len, "the running lcores take turns on a CPU: proposed on lcores "
			 "with a CPU each");
	else if (res->kept)
		snprintf(buf, len, "a better map gains less than %.0f %% on the busiest lcore: "
			 "not worth a move", PF_REBALANCE_MIN_GAIN * 100);
	else
		snprintf(buf, len, "%s", res->moves != 0 ? "the busiest lcore gets lighter" :
			 "no map is better");
	return buf;
}

static int
get_rebalance(const struct pf_runtime *rt, const char *params, struct rte_tel_data *d)
{
	struct pf_place_input in;
	struct pf_place_result res;
	double cross = PF_CROSS_CYCLES_DEFAULT, window = PF_REBALANCE_WINDOW_DEFAULT, used;
	double hz = (double)rte_get_tsc_hz();
	char buf[128], *save = NULL, *tok, share[256], key[TEL_KEY_MAX], why[128];
	struct rte_tel_data *load;
	uint16_t i;
	int rc;

	if (params != NULL && snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	for (tok = params != NULL ? strtok_r(buf, ",", &save) : NULL; tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "window=", 7) == 0)
			rc = num_arg(tok + 7, 0.5, PF_REBALANCE_WINDOW_MAX, &window);
		else
			rc = num_arg(tok, 0, 100000, &cross);
		if (rc < 0)
			return rc;
	}
	rc = pf_rebalance_suggest(rt, cross, window, &used, &in, &res);
	if (rc < 0)
		return rc;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "cross_cycles", (uint64_t)cross);
	rte_tel_data_add_dict_u64(d, "window_ms", (uint64_t)(used * 1000));
	rte_tel_data_add_dict_int(d, "busiest_lcore_before",
				  (int)rt->lcores[res.busiest_lcore_before].id);
	rte_tel_data_add_dict_u64(d, "busiest_pct_before_x100",
				  (uint64_t)(res.busiest_before * 10000 / hz));
	rte_tel_data_add_dict_int(d, "busiest_lcore_after",
				  (int)rt->lcores[res.busiest_lcore_after].id);
	rte_tel_data_add_dict_u64(d, "busiest_pct_after_x100",
				  (uint64_t)(res.busiest_after * 10000 / hz));
	rte_tel_data_add_dict_int(d, "moves", res.moves);
	rte_tel_data_add_dict_int(d, "exhaustive", res.exhaustive);
	rte_tel_data_add_dict_string(d, "advice", res.moves != 0 ? "move" : "keep");
	rte_tel_data_add_dict_string(d, "why", rebalance_why(&res, why, sizeof(why)));
	if (pf_rebalance_cpu_sharing(rt, share, sizeof(share)) != 0)
		rte_tel_data_add_dict_string(d, "cpu_sharing", share);
	add_sub(d, "current", map_dict(rt, in.current));
	add_sub(d, "proposed", map_dict(rt, res.lcore));
	add_sub(d, "proposed_lists", map_lists(rt, res.lcore));
	/* Each stage's load over the window, in 1/100 % of one core. */
	load = rte_tel_data_alloc();
	if (load != NULL) {
		rte_tel_data_start_dict(load);
		for (i = 0; i < rt->n_stages; i++) {
			item_key(rt, TEL_STAGES, i, key, sizeof(key));
			rte_tel_data_add_dict_u64(load, key, (uint64_t)(in.load[i] * 10000 / hz));
		}
		add_sub(d, "load_pct_x100", load);
	}
	return 0;
}

/* ---- table contents ---------------------------------------------------- */

#define TABLE_PAGE_DEFAULT 100

static int
table_arg(const struct pf_runtime *rt, char *kv, struct pf_show_req *req)
{
	char *v = strchr(kv, '='), *end;
	unsigned long n;
	uint16_t p;

	if (v == NULL)
		return -EINVAL;
	*v++ = '\0';
	if (strcmp(kv, "addr") == 0) {
		req->addr = v;
		return 0;
	}
	if (strcmp(kv, "port") == 0) {
		for (p = 0; p < rt->topo->n_ports; p++)
			if (strcmp(rt->topo->ports[p].name, v) == 0) {
				req->port = p;
				return 0;
			}
		return -EINVAL;
	}
	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n > INT32_MAX)
		return -EINVAL;
	if (strcmp(kv, "offset") == 0)
		req->offset = (uint32_t)n;
	else if (strcmp(kv, "limit") == 0)
		req->limit = (uint32_t)n;
	else if (strcmp(kv, "vlan") == 0 && n < 4096)
		req->vlan = (int32_t)n;
	else
		return -EINVAL;
	return 0;
}

/* "STAGE,TABLE[,key=value...]": the stage's show op fills @p d. */
static int
get_table(const struct pf_runtime *rt, const char *params, struct rte_tel_data *d)
{
	struct pf_sink out;
	struct pf_show_req req = { .limit = TABLE_PAGE_DEFAULT, .port = -1, .vlan = -1,
				   .addr = "" };
	char buf[256], *save = NULL, *stage, *what, *kv;
	const struct pf_stage *st = NULL;
	uint16_t i;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	stage = strtok_r(buf, ",", &save);
	what = strtok_r(NULL, ",", &save);
	if (stage == NULL || what == NULL)
		return -EINVAL;
	while ((kv = strtok_r(NULL, ",", &save)) != NULL)
		if (table_arg(rt, kv, &req) < 0)
			return -EINVAL;
	for (i = 0; i < rt->n_stages && st == NULL; i++)
		if (strcmp(rt->stages[i]->conf->name, stage) == 0)
			st = rt->stages[i];
	if (st == NULL || st->ops->obs.show == NULL)
		return -ENOENT;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "stage", st->conf->name);
	rte_tel_data_add_dict_string(d, "table", what);
	pf_sink_tel_init(&out, d);
	return st->ops->obs.show(st, what, &req, &out);
}

/* ---- commands ----------------------------------------------------------- */

static int
cmd_rings(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return list_items(con->rt, TEL_RINGS, params, d);
}

static int
cmd_stages(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return list_items(con->rt, TEL_STAGES, params, d);
}

static int
cmd_lcores(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return list_items(con->rt, TEL_LCORES, params, d);
}

static int
cmd_ports(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return list_items(con->rt, TEL_PORTS, params, d);
}

static int
cmd_config(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return get_config(con->rt, con->loaded_at, d);
}

static int
cmd_totals(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return get_totals(con->rt, d);
}

static int
cmd_rebalance(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return get_rebalance(con->rt, params, d);
}

/* Asynchronous like SIGHUP: the result shows in /pipefwd/config. */
static int
cmd_reload(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	if (con->request_reload != NULL)
		con->request_reload();
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "requested", con->request_reload != NULL);
	rte_tel_data_add_dict_u64(d, "generation", pf_reload_status.generation);
	return 0;
}

static int
cmd_clear(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return clear_items(con->rt, params, d);
}

static int
cmd_table(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return get_table(con->rt, params, d);
}

/*
 * /pipefwd/latency[,on|off]: whether ring sojourn and rx -> tx latency are
 * measured (pf_latency.h); with a parameter, switch it first.
 */
static int
cmd_latency(struct pf_console *con __rte_unused, const char *params, struct rte_tel_data *d)
{
	bool was;

	if (params != NULL && *params != '\0') {
		if (strcmp(params, "on") != 0 && strcmp(params, "off") != 0) {
			pf_console_error(d, "expected on or off");
			return 0;
		}
		was = pf_latency_set(strcmp(params, "on") == 0);
		if (was != (strcmp(params, "on") == 0))
			PF_LOG(INFO, "latency measuring %s by the stats socket", params);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "latency",
				     __atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED) ? "on" : "off");
	return 0;
}

/* Help strings stay under 64 bytes (the telemetry limit). */
const struct pf_cmd pf_stats_cmds[] = {
	{ "/pipefwd/rings", "pipefwd rings: fill, hwm, drops. Param: ring", cmd_rings, false },
	{ "/pipefwd/stages", "pipefwd stages: packets, cycles, drops. Param: stage", cmd_stages,
	  false },
	{ "/pipefwd/lcores", "pipefwd lcores: stages, busy %. Param: lcore id", cmd_lcores, false },
	{ "/pipefwd/ports", "pipefwd ports: link, counters, queues. Param: port", cmd_ports, false },
	{ "/pipefwd/config", "pipefwd topology, load time, lcore map", cmd_config, true },
	{ "/pipefwd/totals", "pipefwd accounting: rx, tx, dropped, in flight", cmd_totals, true },
	{ "/pipefwd/rebalance", "pipefwd lcore map advice. Params: [cross][,window=S]",
	  cmd_rebalance, false },
	{ "/pipefwd/reload", "pipefwd: re-read the topology file (like SIGHUP)", cmd_reload, false },
	{ "/pipefwd/clear", "pipefwd: clear counters and hwm. Param: stage or ring", cmd_clear,
	  false },
	{ "/pipefwd/latency", "pipefwd latency measuring. Param: on|off", cmd_latency, false },
	{ "/pipefwd/table", "pipefwd table contents. Params: stage,table[,offset=N,limit=N,"
	  "port=P,vlan=V,addr=A]", cmd_table, false },
	{ NULL, NULL, NULL, false },
};
