/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime's hand-over protocols (app/runtime/edge.c, worker.c,
 * handover.c), driven with fake stages: stage types defined here, built
 * into a real runtime from inline topologies, whose process_burst, rx, tx,
 * expand and emit record what they saw.
 *
 * Most cases call pf_rt_run_burst() on a runtime that was built but not
 * started, as its producer's lcore would, so every hand-over happens inside
 * the call and can be asserted right after it. The worker-pass cases run
 * pf_rt_worker_main() on a worker lcore for an exact number of passes: a
 * ticker stage (first in the lcore's map) sets rt->stop in the pass that
 * uses up its budget. The move case starts the workers and moves stages
 * between lcores under traffic. No case asserts a duration: waits only
 * bound a hang (WAIT_S) and then fail naming what did not happen.
 *
 * Which code change each case catches: docs/testing.md, "Runtime unit tests".
 */
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pf_flowhash.h"
#include "pf_log.h"
#include "pf_test.h"
#include "rt_internal.h"

#define WAIT_S 120          /* a hang, not a slow machine */
#define LOG_MAX 4096        /* packets a fake stage remembers one by one */

/* ---- fake stage types ----------------------------------------------------- */

/* What a test packet carries in its first bytes. */
struct tag {
	uint32_t seq;
	uint16_t sub;       /* replica index (t_exp) */
};

/* What a fake stage saw of one packet, when it got it. */
struct seen {
	uint32_t seq;
	uint16_t sub;
	uint16_t out_port;
	uint16_t in_burst_port;
	uint16_t in_burst_in_port;
};

/* A fake stage's priv: its behaviour (the test sets it) and what it saw. */
struct fake {
	/* behaviour */
	uint16_t all;             /* edge of the whole burst, when plen is 0 */
	uint16_t plen;            /* else: packet seq s takes pattern[s % plen], burst MIXED */
	uint16_t pattern[16];
	uint16_t burst_port;      /* hint to give each burst (out_port written unless UNWRITTEN) */
	uint16_t in_hint;         /* in-port hint to give each burst */
	uint16_t copies;          /* t_exp: packets out per packet in */
	bool release;             /* t_hold: emit gives back what it holds */
	uint32_t spin_us;         /* busy-wait per burst (a slow stage) */
	/* what it saw (single writer: the owning lcore) */
	uint32_t n;               /* packets, in process_burst (tx for a TX_ALL sink) */
	uint32_t bursts;
	uint32_t misorder;        /* packets with a lower seq than the one before */
	uint32_t last_seq;
	uint32_t inside;          /* lcores in process_burst now: more than one is a bug */
	uint32_t overlaps;        /* bursts that found another lcore inside */
	struct seen log[LOG_MAX];
	/* t_hold */
	uint16_t n_held;
	struct rte_mbuf *held[PF_BURST_MAX];
	/* t_src */
	struct rte_ring *feed;
};

#define foreach_fake_ctr(_) \
	_(FAKE_CTR_DROPPED, dropped, DROP, "packets the test sent to edge 0")

PF_CTR_ENUM(fake, foreach_fake_ctr);
PF_CTR_DESCS(fake, foreach_fake_ctr);

enum { E_DROP, E_A, E_B, E_C, E_MAX };
static const char *const fake_edges[] = { "drop", "a", "b", "c" };
static const char *const sink_edges[] = { "drop", "out" };

/* The runtime the ticker stops; tick_left[lcore]: passes left (0: tick forever). */
static struct pf_runtime *cur_rt;
static int tick_left[RTE_MAX_LCORE];
static unsigned int feed_seq;

static struct tag *
tag_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, struct tag *);
}

static void
note(struct pf_stage *st, struct rte_mbuf *m)
{
	struct fake *f = st->priv;
	struct tag *t = tag_of(m);

	if (f->n < LOG_MAX)
		f->log[f->n] = (struct seen){ t->seq, t->sub, pf_meta(m)->out_port,
					      st->in_burst_port, st->in_burst_in_port };
	/* Replicas share their original's seq: only a lower one is out of order. */
	if (f->n != 0 && t->seq < f->last_seq)
		f->misorder++;
	f->last_seq = t->seq;
	__atomic_store_n(&f->n, f->n + 1, __ATOMIC_RELEASE);
}

static uint16_t
fake_process(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct fake *f = st->priv;
	uint16_t i, e;

	if (__atomic_fetch_add(&f->inside, 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&f->overlaps, 1, __ATOMIC_RELAXED);
	if (f->spin_us != 0)
		rte_delay_us_block(f->spin_us);
	for (i = 0; i < n; i++) {
		note(st, pkts[i]);
		if (f->plen == 0)
			continue;   /* one edge: edge[] stays unwritten, as rx's fast path leaves it */
		e = f->pattern[tag_of(pkts[i])->seq % f->plen];
		if (e == PF_EDGE_DROP)
			st->ctrs[FAKE_CTR_DROPPED]++;
		if (e == PF_EDGE_HELD)
			f->held[f->n_held++] = pkts[i];
		edge[i] = e;
	}
	if (f->plen == 0 && f->all == PF_EDGE_DROP)
		st->ctrs[FAKE_CTR_DROPPED] += n;
	if (f->burst_port != 0) {
		st->burst_port = f->burst_port;
		if (!(f->burst_port & PF_BURST_PORT_UNWRITTEN))
			pf_burst_port_write(pkts, n, f->burst_port);
	}
	if (f->in_hint != 0)
		st->in_burst_in_port = f->in_hint;
	f->bursts++;
	__atomic_fetch_sub(&f->inside, 1, __ATOMIC_RELEASE);
	return f->plen != 0 ? PF_EDGE_MIXED : f->all;
}

static int
fake_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct fake *f = st->priv;

	f->all = E_A;
	return 0;
}

/* t_src: a source whose "port" is a ring the test fills. */
static int
src_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct fake *f = st->priv;
	char name[RTE_RING_NAMESIZE];

	fake_init(st, errs);
	snprintf(name, sizeof(name), "ut_feed%u", feed_seq++);
	f->feed = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	return f->feed != NULL ? 0 : -ENOMEM;
}

static uint16_t
src_rx(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	struct fake *f = st->priv;

	return (uint16_t)rte_ring_dequeue_burst(f->feed, (void **)pkts, max, NULL);
}

static void
fake_free(struct pf_stage *st)
{
	struct fake *f = st->priv;
	struct rte_mbuf *m;

	if (f == NULL)
		return;
	while (f->feed != NULL && rte_ring_dequeue(f->feed, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(f->feed);
	rte_pktmbuf_free_bulk(f->held, f->n_held);
}

/* t_tick: a source that reads nothing and stops the worker when its budget ends. */
static uint16_t
tick_rx(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	unsigned int lc = rte_lcore_id();

	if (tick_left[lc] > 0 && --tick_left[lc] == 0)
		__atomic_store_n(&cur_rt->stop, 1, __ATOMIC_RELEASE);
	return 0;
}

/* t_sink: a sink the runtime hands every packet (PF_STAGE_TX_ALL). */
static uint16_t
sink_process(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	return 1;
}

static void
sink_tx(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		note(st, pkts[i]);
	((struct fake *)st->priv)->bursts++;
	rte_pktmbuf_free_bulk(pkts, n);
}

/* t_exp: every packet becomes f->copies (the original first, then replicas). */
static uint16_t
exp_expand(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *taken,
	   struct rte_mbuf **out, uint16_t max)
{
	struct fake *f = st->priv;
	uint16_t i, c, k = 0, take = RTE_MIN(n, max / f->copies);

	for (i = 0; i < take; i++) {
		out[k++] = pkts[i];
		for (c = 1; c < f->copies; c++) {
			struct rte_mbuf *m = rte_pktmbuf_copy(pkts[i], pkts[i]->pool, 0, UINT32_MAX);

			RTE_VERIFY(m != NULL);
			*pf_meta(m) = *pf_meta(pkts[i]);
			tag_of(m)->sub = c;
			out[k++] = m;
		}
	}
	*taken = take;
	return k;
}

/* t_hold: edge[i] PF_EDGE_HELD keeps a packet; emit gives them back on edge a. */
static uint16_t
hold_emit(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge,
	  bool draining)
{
	struct fake *f = st->priv;
	uint16_t i, n = RTE_MIN(f->n_held, max);

	if (!f->release && !draining)
		return 0;
	for (i = 0; i < n; i++) {
		pkts[i] = f->held[i];
		edge[i] = draining ? PF_EDGE_DROP : E_A;
	}
	if (draining)
		st->ctrs[FAKE_CTR_DROPPED] += n;
	memmove(f->held, f->held + n, (f->n_held - n) * sizeof(f->held[0]));
	f->n_held -= n;
	return n;
}

#define FAKE_COMMON(init_fn) \
	.priv_size = sizeof(struct fake), .n_ctrs = fake_ctr_max, .ctrs = fake_ctrs, \
	.ctl = { .init = init_fn, .free = fake_free }

static const struct pf_stage_ops t_src_ops = {
	.type = "t_src", .flags = PF_STAGE_SOURCE, FAKE_COMMON(src_init),
	.n_edges = E_MAX, .edge_names = fake_edges, .default_edge = E_A,
	.dp = { .rx = src_rx, .process_burst = fake_process },
};
static const struct pf_stage_ops t_tick_ops = {
	.type = "t_tick", .flags = PF_STAGE_SOURCE, FAKE_COMMON(fake_init),
	.n_edges = 1, .edge_names = fake_edges,
	.dp = { .rx = tick_rx, .process_burst = fake_process },
};
static const struct pf_stage_ops t_mid_ops = {
	.type = "t_mid", FAKE_COMMON(fake_init),
	.n_edges = E_MAX, .edge_names = fake_edges, .default_edge = E_A,
	.dp = { .process_burst = fake_process },
};
static const struct pf_stage_ops t_exp_ops = {
	.type = "t_exp", FAKE_COMMON(fake_init),
	.n_edges = E_MAX, .edge_names = fake_edges, .default_edge = E_A,
	.dp = { .process_burst = fake_process, .expand = exp_expand },
};
static const struct pf_stage_ops t_hold_ops = {
	.type = "t_hold", FAKE_COMMON(fake_init),
	.n_edges = E_MAX, .edge_names = fake_edges, .default_edge = E_A,
	.dp = { .process_burst = fake_process, .emit = hold_emit },
};
static const struct pf_stage_ops t_sink_ops = {
	.type = "t_sink", .flags = PF_STAGE_SINK | PF_STAGE_TX_ALL, FAKE_COMMON(fake_init),
	.n_edges = 2, .edge_names = sink_edges, .default_edge = 1,
	.dp = { .process_burst = sink_process, .tx = sink_tx },
};

/* This binary's stage types (overrides stages/registry.c's weak list). */
static const struct pf_stage_ops *const types[] = {
	&t_src_ops, &t_tick_ops, &t_mid_ops, &t_exp_ops, &t_hold_ops, &t_sink_ops, NULL,
};
const struct pf_stage_ops *const *const pf_stage_types = types;

/* ---- runtime and packets ---------------------------------------------------- */

static struct pf_topo *cur_topo;
static bool cur_running;         /* test_move started its workers */
static unsigned int n_devs;
static unsigned int pool_base;   /* test-pool mbufs in use when the case began */

/* ports: one net_null per runtime (a closed vdev port cannot be probed again). */
static void
topo_text(char *buf, size_t len, const char *runtime, const char *body)
{
	snprintf(buf, len, "ports:\n  p0: { device: net_null%u }\nruntime: { %s }\n%s", n_devs,
		 runtime, body);
}

static struct pf_topo *
topo_load(const char *runtime, const char *body)
{
	static char text[4096];
	struct pf_errs errs = { 0 };
	struct pf_topo *t = NULL;

	topo_text(text, sizeof(text), runtime, body);
	if (pf_topo_load_string("inline.yaml", text, &t, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		fail_msg("inline topology rejected");
	}
	return t;
}

/* Build (not start) a runtime; @p runtime: the topology's runtime: keys. */
static struct pf_runtime *
rt_build(const char *runtime, const char *body)
{
	struct pf_errs errs = { 0 };
	struct pf_runtime *rt = NULL;

	cur_topo = topo_load(runtime, body);
	n_devs++;
	if (pf_runtime_create(&rt, cur_topo, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		fail_msg("runtime not built");
	}
	cur_rt = rt;
	pool_base = rte_mempool_in_use_count(pf_test_pool());
	return rt;
}

static void
rt_stop(struct pf_runtime *rt)
{
	if (cur_running)
		pf_runtime_stop(rt);
	cur_running = false;
}

static void
rt_destroy(void)
{
	rt_stop(cur_rt);
	pf_runtime_destroy(cur_rt);
	pf_topo_free(cur_topo);
	cur_rt = NULL;
	cur_topo = NULL;
}

static void
rt_free(struct pf_runtime *rt)
{
	assert_ptr_equal(rt, cur_rt);
	rt_destroy();
	/* Every packet a case made went out, was dropped or freed with its stage. */
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), pool_base);
}

/* After a failed case: free what it left, so the next case starts clean. */
static int
teardown(void **state)
{
	if (cur_rt != NULL)
		rt_destroy();
	return 0;
}

static struct pf_rt_stage *
rs_of(struct pf_runtime *rt, const char *name)
{
	int s = pf_topo_stage_index(rt->topo, name);

	assert_true(s >= 0);
	return &rt->rts[s];
}

static struct fake *
fake_of(struct pf_runtime *rt, const char *name)
{
	return rs_of(rt, name)->st->priv;
}

static struct pf_rt_ring *
ring_of(struct pf_runtime *rt, const char *from, const char *to)
{
	int r = pf_topo_ring_index(rt->topo, (uint16_t)pf_topo_stage_index(rt->topo, from),
				   (uint16_t)pf_topo_stage_index(rt->topo, to));

	assert_true(r >= 0);
	return &rt->rings[r];
}

static struct rte_mbuf *
mk(uint32_t seq, uint16_t in_port)
{
	union {
		struct tag t;
		uint8_t bytes[64];
	} frame = { .t = { .seq = seq } };

	return pf_test_mbuf(frame.bytes, sizeof(frame), in_port);
}

/* Packets seq first .. first+n-1 into @p pkts. */
static void
mk_burst(struct rte_mbuf **pkts, uint32_t first, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		pkts[i] = mk(first + i, 0);
}

/* Run packets seq first .. first+n-1 through stage @p name, as lcore 1 would. */
static void
run_from(struct pf_runtime *rt, const char *name, uint32_t first, uint16_t n)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];

	mk_burst(pkts, first, n);
	pf_rt_run_burst(rs_of(rt, name), pkts, n, 1, 0);
}

static void
feed(struct pf_runtime *rt, const char *src, uint32_t first, uint16_t n)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];

	mk_burst(pkts, first, n);
	assert_int_equal(rte_ring_enqueue_burst(fake_of(rt, src)->feed, (void **)pkts, n, NULL),
			 n);
}

/* As a producer on another lcore would: put packets in @p r behind what it holds. */
static void
ring_put(struct pf_rt_ring *r, uint32_t first, uint16_t n)
{
	struct rte_mbuf *pkts[PF_BURST_MAX];

	mk_burst(pkts, first, n);
	assert_int_equal(rte_ring_enqueue_burst(r->ring, (void **)pkts, n, NULL), n);
}

/* Take everything out of @p r, assert it is seq first.. in order with out_port @p port, free. */
static void
ring_take(struct pf_rt_ring *r, uint32_t first, unsigned int n, uint16_t port)
{
	struct rte_mbuf *m;
	unsigned int k = 0;

	while (rte_ring_dequeue(r->ring, (void **)&m) == 0) {
		assert_int_equal(tag_of(m)->seq, first + k);
		assert_int_equal(pf_meta(m)->out_port, port);
		rte_pktmbuf_free(m);
		k++;
	}
	assert_int_equal(k, n);
}

/* @p f saw exactly seqs first .. first+n-1, in order (no replicas). */
static void
saw_seq(const struct fake *f, uint32_t first, uint32_t n)
{
	uint32_t i;

	assert_int_equal(f->n, n);
	for (i = 0; i < n && i < LOG_MAX; i++)
		assert_int_equal(f->log[i].seq, first + i);
}

/* Run pf_rt_worker_main on @p lcore for exactly @p passes passes (its map starts with a t_tick). */
static void
run_passes(struct pf_runtime *rt, unsigned int lcore, int passes)
{
	uint16_t i;

	__atomic_store_n(&rt->stop, 0, __ATOMIC_RELEASE);
	rt->rx_state = PF_RX_POLLING;
	tick_left[lcore] = passes;
	/* Upkeep (emit) in the first pass, however soon after the last run. */
	for (i = 0; i < rt->n_lcores; i++)
		if (rt->lcores[i].id == lcore)
			rt->lcores[i].housekeep_tsc = 0;
	assert_int_equal(rte_eal_remote_launch(pf_rt_worker_main, rt, lcore), 0);
	assert_int_equal(rte_eal_wait_lcore(lcore), 0);
}

/* ---- direct, ring, mixed ------------------------------------------------------ */

/* The pipeline most cases use: a source, a middle stage, a sink. */
#define CHAIN3 \
	"  src: { type: t_src, next: mid }\n" \
	"  mid: { type: t_mid, next: sink }\n" \
	"  sink: { type: t_sink }\n"

static const char fused3[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	CHAIN3
	"lcores:\n"
	"  1: [tick1, src, mid, sink]\n";

/* Same lcore, rings empty: the burst goes straight through mid to sink, no ring touched. */
static void
test_direct(void **state)
{
	struct pf_runtime *rt = rt_build("", fused3);
	struct pf_rt_ring *r1 = ring_of(rt, "src", "mid"), *r2 = ring_of(rt, "mid", "sink");

	run_from(rt, "src", 0, 32);
	saw_seq(fake_of(rt, "mid"), 0, 32);
	saw_seq(fake_of(rt, "sink"), 0, 32);
	assert_int_equal(fake_of(rt, "mid")->bursts, 1);
	assert_int_equal(r1->direct, 32);
	assert_int_equal(r2->direct, 32);
	assert_int_equal(r1->enqueued + r2->enqueued, 0);
	assert_int_equal(rte_ring_count(r1->ring) + rte_ring_count(r2->ring), 0);
	assert_int_equal(rs_of(rt, "src")->edge_pkts[E_A], 32);
	assert_int_equal(rs_of(rt, "mid")->packets, 32);
	assert_int_equal(rs_of(rt, "sink")->packets, 32);
	assert_int_equal(rs_of(rt, "sink")->bursts, 1);
	rt_free(rt);
}

/*
 * Stage time is charged per interval; one over the floor and many times the
 * stage's typical interval was preempted (another thread had the CPU): the
 * typical one counts instead and time_skipped says so, so a shared CPU does
 * not inflate cycles. A stage that is slow every burst is not preempted.
 */
static void
test_time_preempted(void **state)
{
	struct pf_runtime *rt;
	struct pf_rt_stage *src, *mid;
	struct rte_mbuf *pkts[PF_BURST_MAX];
	uint64_t before, typ, hz = rte_get_tsc_hz(), mid_skipped = 1;
	int attempt;

	(void)state;
	/*
	 * A burst whose clock began "an hour ago" is preempted for its source;
	 * its consumers' intervals are their own. On a busy machine a consumer
	 * may really be preempted too, so the consumer's check needs one clean
	 * attempt of five (charged the source's hour, it would fail all five).
	 */
	for (attempt = 0; attempt < 5 && mid_skipped != 0; attempt++) {
		rt = rt_build("", fused3);
		src = rs_of(rt, "src");
		mid = rs_of(rt, "mid");
		/* What pf_runtime_start sets (this runtime is not started). */
		pf_rt_time_floor = hz / 1000000 * PF_RT_TIME_FLOOR_US;
		mk_burst(pkts, 0, 32);
		pf_rt_run_burst(src, pkts, 32, 1, rte_rdtsc());
		typ = src->time_typ;
		before = src->cycles;
		assert_int_equal(before, typ << PF_RT_TIME_SHIFT);
		assert_int_equal(src->time_skipped, 0);
		mk_burst(pkts, 32, 32);
		pf_rt_run_burst(src, pkts, 32, 1, rte_rdtsc() - hz * 3600);
		assert_int_equal(src->time_skipped, 1);
		assert_int_equal(src->cycles, before + (typ << PF_RT_TIME_SHIFT));
		assert_int_equal(fake_of(rt, "sink")->n, 64);
		mid_skipped = mid->time_skipped;
		pf_rt_time_floor = UINT64_MAX;
		rt_free(rt);
	}
	assert_int_equal(mid_skipped, 0);
	/*
	 * A stage slow in every burst (200 us, over the floor) is charged its
	 * time (a real preemption of one of its intervals would charge the
	 * typical 200 us instead: the sum holds either way).
	 */
	rt = rt_build("", fused3);
	src = rs_of(rt, "src");
	mid = rs_of(rt, "mid");
	pf_rt_time_floor = hz / 1000000 * PF_RT_TIME_FLOOR_US;
	fake_of(rt, "mid")->spin_us = 200;
	mk_burst(pkts, 0, 32);
	pf_rt_run_burst(src, pkts, 32, 1, rte_rdtsc());
	mk_burst(pkts, 32, 32);
	pf_rt_run_burst(src, pkts, 32, 1, rte_rdtsc());
	assert_true(mid->cycles >= (2 * hz / 5000) << PF_RT_TIME_SHIFT);
	pf_rt_time_floor = UINT64_MAX;
	rt_free(rt);
}

static const char split3[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	"  tick2: { type: t_tick }\n"
	CHAIN3
	"lcores:\n"
	"  1: [tick1, src]\n"
	"  2: [tick2, mid, sink]\n";

/*
 * Consumer on another lcore: the burst waits in the ring; that lcore's pass
 * dequeues it and hands it on directly to sink, its neighbour there.
 */
static void
test_ring(void **state)
{
	struct pf_runtime *rt = rt_build("", split3);
	struct pf_rt_ring *r1 = ring_of(rt, "src", "mid"), *r2 = ring_of(rt, "mid", "sink");

	assert_int_not_equal(rs_of(rt, "mid")->rings_maybe, 0);   /* fed from lcore 1 */
	assert_int_equal(rs_of(rt, "sink")->rings_maybe, 0);      /* fed from its own */
	run_from(rt, "src", 0, 32);
	assert_int_equal(fake_of(rt, "mid")->n, 0);
	assert_int_equal(rte_ring_count(r1->ring), 32);
	assert_int_equal(r1->enqueued, 32);
	assert_int_equal(r1->direct, 0);
	assert_int_equal(r1->hwm, 32);
	/* The worker pass on lcore 2 polls mid's ring. */
	run_passes(rt, 2, 1);
	saw_seq(fake_of(rt, "mid"), 0, 32);
	saw_seq(fake_of(rt, "sink"), 0, 32);
	assert_int_equal(r1->dequeued, 32);
	assert_int_equal(r2->direct, 32);
	assert_int_equal(r2->enqueued, 0);
	/* Its producer runs elsewhere: the ring must stay polled. */
	assert_int_not_equal(rs_of(rt, "mid")->rings_maybe, 0);
	rt_free(rt);
}

static uint8_t
recycled_of(const struct pf_runtime *rt, unsigned int lcore)
{
	uint16_t i;

	for (i = 0; i < rt->n_lcores; i++)
		if (rt->lcores[i].id == lcore)
			return rt->lcores[i].recycled;
	fail_msg("no lcore %u", lcore);
	return 0;
}

/*
 * Which lcores' sources prefetch the mbufs coming back from another core
 * (pf_rt_lcore.recycled): those that exchange packets with another lcore,
 * at start and for any map a hand-over applies; not a fused lcore.
 */
static void
test_recycled(void **state)
{
	struct pf_runtime *rt = rt_build("", split3);
	int want[PF_MAX_STAGES];
	uint16_t i;

	assert_int_equal(recycled_of(rt, 1), 1);   /* src -> mid leaves lcore 1 */
	assert_int_equal(recycled_of(rt, 2), 1);   /* and arrives on lcore 2 */
	/* Everything on lcore 2 (a map a hand-over could apply): nothing crosses. */
	for (i = 0; i < rt->n_stages; i++)
		want[i] = 2;
	pf_rt_recycle_mark(rt, want);
	assert_int_equal(recycled_of(rt, 1), 0);
	assert_int_equal(recycled_of(rt, 2), 0);
	rt_free(rt);
	rt = rt_build("", fused3);
	assert_int_equal(recycled_of(rt, 1), 0);
	rt_free(rt);
}

static const char fan[] =
	"stages:\n"
	"  src: { type: t_src, next: { a: x, b: y, c: z } }\n"
	"  x: { type: t_sink }\n"
	"  y: { type: t_mid, next: yout }\n"
	"  yout: { type: t_sink }\n"
	"  z: { type: t_sink }\n"
	"lcores:\n"
	"  1: [src, x, y, yout]\n"
	"  2: [z]\n";

/*
 * A mixed burst: sorted by edge, each edge gets its packets in burst order
 * (x and y directly, z through its ring), edge 0 is freed and counted.
 */
static void
test_mixed(void **state)
{
	static const uint16_t pat[] = { E_A, E_B, E_A, E_DROP, E_C, E_B, E_A, E_A, E_B, E_C, E_A };
	struct pf_runtime *rt = rt_build("", fan);
	struct fake *src = fake_of(rt, "src");
	uint32_t want[E_MAX] = { 0 }, i, k;
	const char *who[E_MAX] = { NULL, "x", "y", NULL };

	src->plen = RTE_DIM(pat);
	memcpy(src->pattern, pat, sizeof(pat));
	run_from(rt, "src", 0, 100);
	for (i = 0; i < 100; i++)
		want[pat[i % RTE_DIM(pat)]]++;
	for (k = E_A; k <= E_B; k++) {
		const struct fake *f = fake_of(rt, who[k]);
		uint32_t j = 0;

		assert_int_equal(f->n, want[k]);
		assert_int_equal(f->bursts, 1);
		for (i = 0; i < 100; i++)
			if (pat[i % RTE_DIM(pat)] == k)
				assert_int_equal(f->log[j++].seq, i);
	}
	/* y, given its part directly, hands it on whole (depth-first, inside the sort). */
	assert_int_equal(fake_of(rt, "yout")->n, want[E_B]);
	for (i = 0; i < want[E_B]; i++)
		assert_int_equal(fake_of(rt, "yout")->log[i].seq, fake_of(rt, "y")->log[i].seq);
	for (k = 0; k < E_MAX; k++)
		assert_int_equal(rs_of(rt, "src")->edge_pkts[k], want[k]);
	assert_int_equal(rs_of(rt, "src")->st->ctrs[FAKE_CTR_DROPPED], want[E_DROP]);
	/* z (another lcore): its ring holds its packets, in burst order. */
	{
		struct pf_rt_ring *r = ring_of(rt, "src", "z");
		struct rte_mbuf *m = NULL;

		assert_int_equal(rte_ring_count(r->ring), want[E_C]);
		for (i = 0; i < 100; i++) {
			if (pat[i % RTE_DIM(pat)] != E_C)
				continue;
			assert_int_equal(rte_ring_dequeue(r->ring, (void **)&m), 0);
			assert_int_equal(tag_of(m)->seq, i);
			rte_pktmbuf_free(m);
		}
	}
	rt_free(rt);
}

/* ---- expand, held -------------------------------------------------------------- */

static const char fused_exp[] =
	"stages:\n"
	"  src: { type: t_src, next: exp }\n"
	"  exp: { type: t_exp, next: sink }\n"
	"  sink: { type: t_sink }\n"
	"lcores:\n"
	"  1: [src, exp, sink]\n";

/* @p f saw each of seq 0..n-1 @p copies times, replicas after their original, in order. */
static void
saw_copies(const struct fake *f, uint32_t n, uint16_t copies)
{
	uint32_t i;

	assert_int_equal(f->n, n * copies);
	for (i = 0; i < n * copies; i++) {
		assert_int_equal(f->log[i].seq, i / copies);
		assert_int_equal(f->log[i].sub, i % copies);
	}
}

/*
 * More packets out than in: expand's output runs through process_burst in
 * bursts of at most PF_BURST_MAX, the extra ones are counted as replicas;
 * the same whether the expanding stage is handed the burst directly or
 * gets it first (as from a ring).
 */
static void
test_expand(void **state)
{
	struct pf_runtime *rt = rt_build("", fused_exp);
	struct pf_rt_stage *exp = rs_of(rt, "exp");
	struct rte_mbuf *pkts[100];

	fake_of(rt, "exp")->copies = 3;
	run_from(rt, "src", 0, 100);
	saw_copies(fake_of(rt, "exp"), 100, 3);
	saw_copies(fake_of(rt, "sink"), 100, 3);
	/* 256 / 3 = 85 inputs per expand call: two output bursts. */
	assert_int_equal(fake_of(rt, "exp")->bursts, 2);
	assert_int_equal(exp->st->replicas, 200);
	assert_int_equal(exp->packets, 300);
	assert_int_equal(exp->edge_pkts[E_A], 300);
	assert_int_equal(rs_of(rt, "src")->edge_pkts[E_A], 100);
	assert_int_equal(ring_of(rt, "src", "exp")->direct, 100);
	rt_free(rt);

	rt = rt_build("", fused_exp);
	exp = rs_of(rt, "exp");
	fake_of(rt, "exp")->copies = 2;
	mk_burst(pkts, 0, 40);
	pf_rt_run_burst(exp, pkts, 40, 1, 0);
	saw_copies(fake_of(rt, "sink"), 40, 2);
	assert_int_equal(exp->st->replicas, 40);
	rt_free(rt);
}

static const char fused_hold[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	"  src: { type: t_src, next: hold }\n"
	"  hold: { type: t_hold, next: sink }\n"
	"  sink: { type: t_sink }\n"
	"lcores:\n"
	"  1: [tick1, src, hold, sink]\n";

/*
 * Held packets (PF_EDGE_HELD) leave the burst and stay with the stage; emit,
 * right after the burst or at upkeep, moves what it releases by edge.
 */
static void
test_held(void **state)
{
	struct pf_runtime *rt = rt_build("", fused_hold);
	struct fake *hold = fake_of(rt, "hold"), *sink = fake_of(rt, "sink");
	struct pf_rt_stage *hrs = rs_of(rt, "hold");
	uint32_t i;

	hold->plen = 2;
	hold->pattern[0] = E_A;
	hold->pattern[1] = PF_EDGE_HELD;
	/* Nothing released: the even half goes on, the odd half is held (not freed). */
	run_from(rt, "src", 0, 32);
	assert_int_equal(sink->n, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(sink->log[i].seq, 2 * i);
	assert_int_equal(hold->n_held, 16);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), pool_base + 16);
	assert_int_equal(hrs->edge_pkts[E_A], 16);
	/* emit hands them on, in the order they were held. */
	hold->release = true;
	assert_int_equal(pf_rt_emit(hrs, 1, false, false), 16);
	assert_int_equal(sink->n, 32);
	for (i = 0; i < 16; i++)
		assert_int_equal(sink->log[16 + i].seq, 2 * i + 1);
	assert_int_equal(hrs->edge_pkts[E_A], 32);
	/* Releasing at once: the runtime's emit right after the burst sends them in the call. */
	run_from(rt, "src", 32, 32);
	assert_int_equal(sink->n, 64);
	assert_int_equal(hold->n_held, 0);
	/* Upkeep emits too: held while not released, sent by the worker's next pass. */
	hold->release = false;
	feed(rt, "src", 64, 8);
	run_passes(rt, 1, 1);
	assert_int_equal(sink->n, 68);
	assert_int_equal(hold->n_held, 4);
	hold->release = true;
	run_passes(rt, 1, 1);
	assert_int_equal(sink->n, 72);
	assert_int_equal(sink->misorder, 3);   /* each released batch came after newer packets */
	/* Draining: what is still held is dropped under its reason, and freed. */
	hold->release = false;
	run_from(rt, "src", 72, 4);
	assert_int_equal(hold->n_held, 2);
	assert_int_equal(pf_rt_emit(hrs, 1, true, false), 2);
	assert_int_equal(hold->n_held, 0);
	assert_int_equal(hrs->edge_pkts[E_DROP], 2);
	assert_int_equal(hrs->st->ctrs[FAKE_CTR_DROPPED], 2);
	rt_free(rt);
}

/* ---- hints ------------------------------------------------------------------ */

static const char src_sink[] =
	"stages:\n"
	"  src: { type: t_src, next: sink }\n"
	"  sink: { type: t_sink }\n"
	"lcores:\n"
	"  1: [src, sink]\n";
static const char src_sink_apart[] =
	"stages:\n"
	"  src: { type: t_src, next: sink }\n"
	"  sink: { type: t_sink }\n"
	"lcores:\n"
	"  1: [src]\n"
	"  2: [sink]\n";

#define HINT5 ((uint16_t)(PF_BURST_PORT(5) | PF_BURST_PORT_UNWRITTEN))

/* Every packet @p f saw had out_port @p port and in_burst_port @p hint. */
static void
saw_hint(const struct fake *f, uint32_t n, uint16_t port, uint16_t hint)
{
	uint32_t i;

	assert_int_equal(f->n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(f->log[i].out_port, port);
		assert_int_equal(f->log[i].in_burst_port, hint);
	}
}

/*
 * The unwritten burst-port hint: a whole burst that goes direct to a TX_ALL
 * sink keeps it (out_port stays unwritten, the sink gets the flag); the
 * sink's hint ends with that burst, and the producer's is cleared.
 */
static void
test_hint_unwritten_sink(void **state)
{
	struct pf_runtime *rt = rt_build("", src_sink);
	struct fake *src = fake_of(rt, "src"), *sink = fake_of(rt, "sink");

	src->burst_port = HINT5;
	run_from(rt, "src", 0, 32);
	saw_hint(sink, 32, PF_PORT_NONE, HINT5);
	assert_int_equal(rs_of(rt, "src")->st->burst_port, 0);
	assert_int_equal(rs_of(rt, "sink")->st->in_burst_port, 0);
	/* The next burst without a hint: none. */
	src->burst_port = 0;
	run_from(rt, "src", 32, 8);
	assert_int_equal(sink->log[32].in_burst_port, 0);
	rt_free(rt);
}

/* Through a ring the hint is lost: out_port is written before the enqueue. */
static void
test_hint_unwritten_ring(void **state)
{
	struct pf_runtime *rt = rt_build("", src_sink_apart);

	fake_of(rt, "src")->burst_port = HINT5;
	run_from(rt, "src", 0, 32);
	assert_int_equal(fake_of(rt, "sink")->n, 0);
	ring_take(ring_of(rt, "src", "sink"), 0, 32, 5);
	rt_free(rt);
}

/*
 * A consumer that is not a TX_ALL sink reads out_port: the runtime writes
 * it before handing the burst over and gives the hint without the flag;
 * that consumer's own whole burst then carries none.
 */
static void
test_hint_unwritten_consumer(void **state)
{
	struct pf_runtime *rt = rt_build("", fused3);

	fake_of(rt, "src")->burst_port = HINT5;
	run_from(rt, "src", 0, 32);
	saw_hint(fake_of(rt, "mid"), 32, 5, PF_BURST_PORT(5));
	saw_hint(fake_of(rt, "sink"), 32, 5, 0);
	assert_int_equal(rs_of(rt, "mid")->st->in_burst_port, 0);
	rt_free(rt);
}

/* A written hint goes with a whole direct burst as it is. */
static void
test_hint_written(void **state)
{
	struct pf_runtime *rt = rt_build("", src_sink);

	fake_of(rt, "src")->burst_port = PF_BURST_PORT(3);
	run_from(rt, "src", 0, 32);
	saw_hint(fake_of(rt, "sink"), 32, 3, PF_BURST_PORT(3));
	rt_free(rt);
}

static const char chain4[] =
	"stages:\n"
	"  src: { type: t_src, next: { a: mid, b: other } }\n"
	"  mid: { type: t_mid, next: mid2 }\n"
	"  mid2: { type: t_mid, next: sink }\n"
	"  other: { type: t_mid, next: sink }\n"
	"  sink: { type: t_sink }\n"
	"  far: { type: t_src, next: mid3 }\n"
	"  mid3: { type: t_mid, next: sink2 }\n"
	"  sink2: { type: t_sink }\n"
	"lcores:\n"
	"  1: [src, mid, mid2, other, sink, far]\n"
	"  2: [mid3, sink2]\n";

static void
saw_in_hint(const struct fake *f, uint32_t from, uint32_t n, uint16_t hint)
{
	uint32_t i;

	for (i = from; i < from + n; i++)
		assert_int_equal(f->log[i].in_burst_in_port, hint);
}

/*
 * The in-port hint: handed on with each whole direct burst, down the chain;
 * not with a mixed burst's parts, not through a ring; cleared after every
 * burst.
 */
static void
test_in_port_hint(void **state)
{
	struct pf_runtime *rt = rt_build("", chain4);
	struct fake *src = fake_of(rt, "src");
	struct rte_mbuf *pkts[32];
	uint16_t i;

	for (i = 0; i < 32; i++)
		pkts[i] = mk(i, 2);
	src->in_hint = PF_BURST_PORT(2);
	pf_rt_run_burst(rs_of(rt, "src"), pkts, 32, 1, 0);
	saw_in_hint(fake_of(rt, "mid"), 0, 32, PF_BURST_PORT(2));
	saw_in_hint(fake_of(rt, "mid2"), 0, 32, PF_BURST_PORT(2));
	assert_int_equal(rs_of(rt, "src")->st->in_burst_in_port, 0);
	assert_int_equal(rs_of(rt, "mid")->st->in_burst_in_port, 0);
	assert_int_equal(rs_of(rt, "mid2")->st->in_burst_in_port, 0);
	/* The next burst, no hint given: none seen. */
	src->in_hint = 0;
	run_from(rt, "src", 32, 8);
	saw_in_hint(fake_of(rt, "mid"), 32, 8, 0);
	/* A mixed burst: its parts carry no hint. */
	src->in_hint = PF_BURST_PORT(2);
	src->plen = 2;
	src->pattern[0] = E_A;
	src->pattern[1] = E_B;
	for (i = 0; i < 32; i++)
		pkts[i] = mk(40 + i, 2);
	pf_rt_run_burst(rs_of(rt, "src"), pkts, 32, 1, 0);
	assert_int_equal(fake_of(rt, "mid")->n, 56);
	saw_in_hint(fake_of(rt, "mid"), 40, 16, 0);
	saw_in_hint(fake_of(rt, "other"), 0, 16, 0);
	/* Through a ring: none (mid3 dequeues on lcore 2). */
	fake_of(rt, "far")->in_hint = PF_BURST_PORT(2);
	for (i = 0; i < 32; i++)
		pkts[i] = mk(i, 2);
	pf_rt_run_burst(rs_of(rt, "far"), pkts, 32, 1, 0);
	i = (uint16_t)rte_ring_dequeue_burst(ring_of(rt, "far", "mid3")->ring, (void **)pkts, 32,
					     NULL);
	assert_int_equal(i, 32);
	pf_rt_run_burst(rs_of(rt, "mid3"), pkts, 32, 2, 0);
	saw_in_hint(fake_of(rt, "mid3"), 0, 32, 0);
	rt_free(rt);
}

/* ---- rings_maybe / direct_key ------------------------------------------------- */

/*
 * No direct hand-over while the consumer's input ring may hold packets (a
 * stage that just arrived on its producer's lcore) or while it has no owner
 * (mid hand-over); the pass that finds the ring empty, with every producer
 * on its lcore, clears the flag and bursts go direct again.
 */
static void
test_rings_maybe(void **state)
{
	struct pf_runtime *rt = rt_build("", fused3);
	struct pf_rt_stage *mid = rs_of(rt, "mid");
	struct pf_rt_ring *r = ring_of(rt, "src", "mid");

	assert_int_equal(mid->rings_maybe, 0);
	ring_put(r, 0, 4);
	mid->rings_maybe = 1;
	run_from(rt, "src", 4, 4);
	assert_int_equal(fake_of(rt, "mid")->n, 0);
	assert_int_equal(rte_ring_count(r->ring), 8);
	assert_int_equal(r->direct, 0);
	/* Owner -1 (mid hand-over): the ring too. */
	mid->rings_maybe = 0;
	mid->owner = -1;
	run_from(rt, "src", 8, 4);
	assert_int_equal(fake_of(rt, "mid")->n, 0);
	assert_int_equal(rte_ring_count(r->ring), 12);
	mid->owner = 1;
	mid->rings_maybe = 1;
	/* One pass drains the ring (burst 32) and clears the flag. */
	run_passes(rt, 1, 1);
	saw_seq(fake_of(rt, "sink"), 0, 12);
	assert_int_equal(mid->rings_maybe, 0);
	assert_int_equal(r->dequeued, 12);
	/* From now on: direct. */
	feed(rt, "src", 12, 4);
	run_passes(rt, 1, 1);
	saw_seq(fake_of(rt, "sink"), 0, 16);
	assert_int_equal(r->direct, 4);
	assert_int_equal(r->enqueued, 8);   /* the two bursts sent past it above */
	rt_free(rt);
}

static const char merge3[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	"  tick2: { type: t_tick }\n"
	"  src2: { type: t_src, next: mid }\n"
	CHAIN3
	"lcores:\n"
	"  1: [tick1, src, mid, sink]\n"
	"  2: [tick2, src2]\n";

/*
 * A consumer fed from its own lcore and from another (a fan-out instance):
 * its rings stay polled (rings_maybe), yet the producer beside it hands
 * over directly while its own ring to it is empty. Not when that ring holds
 * packets (they would be overtaken) or the consumer has no owner; packets
 * in the other producer's ring do not stop it.
 */
static void
test_direct_beside_ring(void **state)
{
	struct pf_runtime *rt = rt_build("", merge3);
	struct pf_rt_stage *mid = rs_of(rt, "mid");
	struct pf_rt_ring *r = ring_of(rt, "src", "mid"), *r2 = ring_of(rt, "src2", "mid");

	assert_int_not_equal(mid->rings_maybe, 0);   /* fed from lcore 2 */
	run_from(rt, "src", 0, 4);
	saw_seq(fake_of(rt, "mid"), 0, 4);
	assert_int_equal(r->direct, 4);
	assert_int_equal(r->enqueued, 0);
	/* The other producer's packets wait in their own ring. */
	ring_put(r2, 100, 4);
	run_from(rt, "src", 4, 4);
	saw_seq(fake_of(rt, "mid"), 0, 8);
	assert_int_equal(r->direct, 8);
	/* Its own ring holds packets (sent before a move): behind them. */
	ring_put(r, 8, 4);
	run_from(rt, "src", 12, 4);
	assert_int_equal(fake_of(rt, "mid")->n, 8);
	assert_int_equal(rte_ring_count(r->ring), 8);
	assert_int_equal(r->direct, 8);
	/* No owner (mid hand-over): the ring, empty or not. */
	{
		struct rte_mbuf *m[8];

		assert_int_equal(rte_ring_dequeue_burst(r->ring, (void **)m, 8, NULL), 8);
		assert_int_equal(tag_of(m[0])->seq, 8);
		assert_int_equal(tag_of(m[7])->seq, 15);
		rte_pktmbuf_free_bulk(m, 8);
	}
	mid->owner = -1;
	run_from(rt, "src", 16, 4);
	assert_int_equal(fake_of(rt, "mid")->n, 8);
	assert_int_equal(rte_ring_count(r->ring), 4);
	mid->owner = 1;
	/* A pass polls both rings, in order each; src's ring is empty after it. */
	run_passes(rt, 1, 1);
	assert_int_equal(fake_of(rt, "mid")->n, 16);
	assert_int_equal(rte_ring_count(r->ring) + rte_ring_count(r2->ring), 0);
	assert_int_not_equal(mid->rings_maybe, 0);
	run_from(rt, "src", 20, 4);
	assert_int_equal(fake_of(rt, "mid")->n, 20);
	assert_int_equal(r->direct, 12);
	rt_free(rt);
}

static const char fan2[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	"  src: { type: t_src, next: mid }\n"
	"  mid: { type: t_mid, instances: %u, next: sink }\n"
	"  sink: { type: t_sink }\n"
	"lcores:\n"
	"  1: [tick1, src, %s, sink]\n";

/*
 * An edge to a stage with instances: each packet goes to the instance its
 * flow hash picks, each instance gets its packets in burst order, direct on
 * its own lcore; 2 instances (fan_send's two-list path) and 3 (the counting
 * sort), bursts of 1, 31 and 128 packets.
 */
static void
test_fan_instances(void **state)
{
	static const char *const maps[] = { [2] = "mid.0, mid.1", [3] = "mid.0, mid.1, mid.2" };
	static const uint16_t sizes[] = { 1, 31, 128 };
	unsigned int n_inst, z, k;

	for (n_inst = 2; n_inst <= 3; n_inst++) {
		char body[512];
		struct pf_runtime *rt;
		uint32_t first = 0, want[3] = { 0 };

		snprintf(body, sizeof(body), fan2, n_inst, maps[n_inst]);
		rt = rt_build("", body);
		for (z = 0; z < RTE_DIM(sizes); z++) {
			run_from(rt, "src", first, sizes[z]);
			first += sizes[z];
		}
		/* The model: the same packets, hashed one by one. */
		for (k = 0; k < first; k++) {
			struct rte_mbuf *m = mk(k, 0);

			want[pf_flow_pick(pf_flow_hash(m), n_inst)]++;
			rte_pktmbuf_free(m);
		}
		for (k = 0; k < n_inst; k++) {
			char name[8];
			const struct fake *f;
			uint32_t i;

			snprintf(name, sizeof(name), "mid.%u", k);
			f = fake_of(rt, name);
			assert_int_equal(f->n, want[k]);
			assert_int_equal(f->misorder, 0);
			assert_int_equal(ring_of(rt, "src", name)->direct, want[k]);
			for (i = 0; i < f->n && i < LOG_MAX; i++) {
				struct rte_mbuf *m = mk(f->log[i].seq, 0);

				assert_int_equal(pf_flow_pick(pf_flow_hash(m), n_inst), k);
				rte_pktmbuf_free(m);
			}
		}
		assert_int_equal(fake_of(rt, "sink")->n, first);
		rt_free(rt);
	}
}

static const char fused3_slow[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	CHAIN3
	"rings:\n"
	"  src->mid: { size: 64, burst: 4 }\n"
	"lcores:\n"
	"  1: [tick1, src, mid, sink]\n";

/*
 * A pass that leaves packets in the ring keeps the flag: new bursts queue
 * behind the old ones until the ring is empty, so none overtakes.
 */
static void
test_rings_maybe_partial(void **state)
{
	struct pf_runtime *rt = rt_build("", fused3_slow);
	struct pf_rt_stage *mid = rs_of(rt, "mid");
	struct pf_rt_ring *r = ring_of(rt, "src", "mid");

	ring_put(r, 0, 12);
	mid->rings_maybe = 1;
	feed(rt, "src", 12, 4);
	run_passes(rt, 1, 1);
	saw_seq(fake_of(rt, "sink"), 0, 4);
	assert_int_equal(rte_ring_count(r->ring), 12);
	assert_int_not_equal(mid->rings_maybe, 0);
	run_passes(rt, 1, 2);
	saw_seq(fake_of(rt, "sink"), 0, 12);
	assert_int_not_equal(mid->rings_maybe, 0);
	run_passes(rt, 1, 1);   /* takes the last 4: empty now */
	saw_seq(fake_of(rt, "sink"), 0, 16);
	assert_int_equal(mid->rings_maybe, 0);
	feed(rt, "src", 16, 4);
	run_passes(rt, 1, 1);
	saw_seq(fake_of(rt, "sink"), 0, 20);
	assert_int_equal(r->direct, 4);
	rt_free(rt);
}

/* ---- lossless room, drops ------------------------------------------------------ */

static const char lossless[] =
	"stages:\n"
	"  tick1: { type: t_tick }\n"
	CHAIN3
	"rings:\n"
	"  mid->sink: { size: 16, burst: 4 }\n"
	"lcores:\n"
	"  1: [tick1, src, mid]\n"
	"  2: [sink]\n";

/*
 * runtime.backpressure: a source takes only what the rings up to the next
 * lcore boundary can hold (here mid's ring, past the direct edge to mid),
 * so nothing is dropped; the rest waits at the "port".
 */
static void
test_lossless_room(void **state)
{
	struct pf_runtime *rt = rt_build("backpressure: true", lossless);
	struct pf_rt_ring *r = ring_of(rt, "mid", "sink");
	struct rte_ring *port = fake_of(rt, "src")->feed;

	ring_put(r, 0, 10);   /* 15 fit: room for 5 */
	assert_int_equal(pf_rt_room(rs_of(rt, "src"), 1, 32), 5);
	assert_int_equal(pf_rt_room(rs_of(rt, "mid"), 1, 32), 5);
	feed(rt, "src", 10, 32);
	run_passes(rt, 1, 1);
	assert_int_equal(fake_of(rt, "mid")->n, 5);
	assert_int_equal(rte_ring_count(port), 27);
	assert_int_equal(rte_ring_count(r->ring), 15);
	run_passes(rt, 1, 3);   /* full: nothing taken, nothing lost */
	assert_int_equal(rte_ring_count(port), 27);
	assert_int_equal(rs_of(rt, "mid")->ring_full + rs_of(rt, "src")->ring_full, 0);
	assert_int_equal(r->full_drops, 0);
	ring_take(r, 0, 15, PF_PORT_NONE);
	assert_int_equal(pf_rt_room(rs_of(rt, "src"), 1, 32), 15);
	rt_free(rt);
}

static const char lossless_rings[] =
	"stages:\n"
	"  tick2: { type: t_tick }\n"
	CHAIN3
	"rings:\n"
	"  mid->sink: { size: 16, burst: 4 }\n"
	"lcores:\n"
	"  1: [src, sink]\n"
	"  2: [tick2, mid]\n";

/* The same for a stage fed by a ring: it dequeues only what its output ring can take. */
static void
test_lossless_ring(void **state)
{
	struct pf_runtime *rt = rt_build("backpressure: true", lossless_rings);
	struct pf_rt_ring *in = ring_of(rt, "src", "mid"), *out = ring_of(rt, "mid", "sink");

	ring_put(out, 0, 10);
	ring_put(in, 10, 32);
	run_passes(rt, 2, 2);
	assert_int_equal(fake_of(rt, "mid")->n, 5);
	assert_int_equal(rte_ring_count(in->ring), 27);
	assert_int_equal(rte_ring_count(out->ring), 15);
	assert_int_equal(rs_of(rt, "mid")->ring_full + out->full_drops, 0);
	ring_take(out, 0, 15, PF_PORT_NONE);
	ring_take(in, 15, 27, PF_PORT_NONE);
	rt_free(rt);
}

static const char drops[] =
	"stages:\n"
	"  src: { type: t_src, next: { a: sink, b: far } }\n"
	"  sink: { type: t_sink }\n"
	"  far: { type: t_sink }\n"
	"rings:\n"
	"  src->far: { size: 16, burst: 4 }\n"
	"lcores:\n"
	"  1: [src, sink]\n"
	"  2: [far]\n";

/* Edge 0 is freed, an unwired edge counts no_edge, a full ring ring_full: all freed. */
static void
test_drops(void **state)
{
	static const uint16_t pat[] = { E_DROP, E_A, E_C };
	struct pf_runtime *rt = rt_build("", drops);
	struct pf_rt_stage *src = rs_of(rt, "src");
	struct pf_rt_ring *r = ring_of(rt, "src", "far");
	struct rte_mbuf *pkts[32];

	fake_of(rt, "src")->plen = RTE_DIM(pat);
	memcpy(fake_of(rt, "src")->pattern, pat, sizeof(pat));
	mk_burst(pkts, 0, 30);
	pf_rt_run_burst(src, pkts, 30, 1, 0);
	assert_int_equal(src->edge_pkts[E_DROP], 10);
	assert_int_equal(src->st->ctrs[FAKE_CTR_DROPPED], 10);
	assert_int_equal(src->edge_pkts[E_C], 10);
	assert_int_equal(src->no_edge, 10);
	assert_int_equal(fake_of(rt, "sink")->n, 10);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), pool_base);
	/* 32 for a ring that holds 15. */
	fake_of(rt, "src")->plen = 0;
	fake_of(rt, "src")->all = E_B;
	mk_burst(pkts, 0, 32);
	pf_rt_run_burst(src, pkts, 32, 1, 0);
	assert_int_equal(r->enqueued, 15);
	assert_int_equal(r->full_drops, 17);
	assert_int_equal(src->ring_full, 17);
	assert_int_equal(rte_mempool_in_use_count(pf_test_pool()), pool_base + 15);
	ring_take(r, 0, 15, PF_PORT_NONE);
	rt_free(rt);
}

/* ---- a move between lcores ------------------------------------------------------ */

static const char move_stages[] =
	"stages:\n"
	CHAIN3
	"rings:\n"
	"  src->mid: { size: 64, burst: 2 }\n";   /* mid falls behind: its ring fills */
static const char *const layouts[] = {
	"lcores:\n  1: [src]\n  2: [mid, sink]\n",
	"lcores:\n  1: [src, mid]\n  2: [sink]\n",
	"lcores:\n  1: [src, mid, sink]\n  2: []\n",
	"lcores:\n  1: [src, sink]\n  2: [mid]\n",
};
/* Every move crosses an edge both ways; the last one fuses the pipeline. */
static const uint8_t moves[] = { 1, 2, 3, 0, 2, 1, 3, 0, 2 };

#define MOVE_PKTS 10000u
#define MOVE_MORE 2000u

static bool
wait_u32(const uint32_t *v, uint32_t want)
{
	uint64_t end = rte_get_timer_cycles() + WAIT_S * rte_get_timer_hz();

	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) != want)
		if (rte_get_timer_cycles() > end)
			return false;
		else
			rte_delay_us_sleep(1000);
	return true;
}

/* Push packets first.. into src's port as room allows, up to @p last. */
static void
push_until(struct pf_runtime *rt, uint32_t *next, uint32_t last)
{
	struct rte_ring *port = fake_of(rt, "src")->feed;
	uint64_t end = rte_get_timer_cycles() + WAIT_S * rte_get_timer_hz();

	while (*next < last) {
		uint16_t n = (uint16_t)RTE_MIN(32u, last - *next);

		if (rte_ring_free_count(port) < n) {
			assert_true(rte_get_timer_cycles() < end);
			rte_delay_us_sleep(100);
			continue;
		}
		feed(rt, "src", *next, n);
		*next += n;
	}
}

/*
 * Stages move between lcores under traffic (pf_runtime_apply_lcore_map):
 * every edge switches between direct and ring both ways, and the sink
 * gets every packet once, in order; once fused again and drained, the
 * edges go back to direct.
 */
static void
test_move(void **state)
{
	char body[1024];
	struct pf_runtime *rt;
	struct fake *sink;
	struct pf_rt_ring *r;
	uint64_t direct0, enq0;
	uint32_t next = 0, k;
	bool ok;

	snprintf(body, sizeof(body), "%s%s", move_stages, layouts[0]);
	rt = rt_build("backpressure: true", body);
	sink = fake_of(rt, "sink");
	r = ring_of(rt, "src", "mid");
	fake_of(rt, "mid")->spin_us = 200;   /* mostly inside mid when a move begins */
	assert_int_equal(pf_runtime_start(rt), 0);
	cur_running = true;
	for (k = 0; k < RTE_DIM(moves); k++) {
		struct pf_topo *t;

		push_until(rt, &next, MOVE_PKTS * (k + 1) / (RTE_DIM(moves) + 1));
		snprintf(body, sizeof(body), "%s%s", move_stages, layouts[moves[k]]);
		t = topo_load("backpressure: true", body);
		assert_true(pf_runtime_apply_lcore_map(rt, t) > 0);
		pf_topo_free(t);
	}
	push_until(rt, &next, MOVE_PKTS);
	ok = wait_u32(&sink->n, MOVE_PKTS);
	/* Fused and drained: the flag clears and bursts go direct again. */
	ok = ok && wait_u32(&rs_of(rt, "mid")->rings_maybe, 0) &&
	     wait_u32(&rs_of(rt, "sink")->rings_maybe, 0);
	direct0 = r->direct;
	enq0 = r->enqueued;
	if (ok) {
		push_until(rt, &next, MOVE_PKTS + MOVE_MORE);
		ok = wait_u32(&sink->n, MOVE_PKTS + MOVE_MORE);
	}
	rt_stop(rt);
	if (!ok)
		fail_msg("sink got %u of %u packets; rings_maybe mid %u sink %u", sink->n, next,
			 rs_of(rt, "mid")->rings_maybe, rs_of(rt, "sink")->rings_maybe);
	assert_int_equal(sink->misorder, 0);
	assert_int_equal(fake_of(rt, "mid")->overlaps, 0);   /* never on two lcores at once */
	assert_int_equal(r->direct - direct0, MOVE_MORE);
	assert_int_equal(r->enqueued - enq0, 0);
	assert_true(r->enqueued > 0);   /* the ring was used on the way */
	for (k = 0; k < rt->n_stages; k++)
		assert_int_equal(rt->rts[k].ring_full + rt->rts[k].no_edge, 0);
	assert_int_equal(rt->mbufs_in_use, 0);
	rt_free(rt);
}

/* ---- main ------------------------------------------------------------------------ */

/* Lcores 0 (main), 1 and 2, all floating over the CPUs this process may use. */
static int
eal_up(void)
{
	static char lcores[128];
	char cpus[64] = "";
	cpu_set_t set;
	int c, n = 0;
	char *argv[] = { (char *)"unit", (char *)"--no-huge", (char *)"-m", (char *)"256",
			 (char *)"--no-pci", (char *)"--no-shconf",
			 (char *)"--log-level=lib.eal:error",
			 (char *)"--no-telemetry", lcores,
			 (char *)pf_test_prefix_arg("runtime"), NULL };

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (c = 0; c < CPU_SETSIZE && n < 8; c++)
		if (CPU_ISSET(c, &set))
			snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), "%s%d",
				 n++ ? "," : "", c);
	snprintf(lcores, sizeof(lcores), "--lcores=0@(%s),1@(%s),2@(%s)", cpus, cpus, cpus);
	if (pf_test_eal_start(RTE_DIM(argv) - 1, argv) < 0)
		return -1;
	rte_log_set_level(pf_logtype, RTE_LOG_WARNING);   /* no mempool/port lines per case */
	return pf_meta_register();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_direct, teardown),
		cmocka_unit_test_teardown(test_ring, teardown),
		cmocka_unit_test_teardown(test_recycled, teardown),
		cmocka_unit_test_teardown(test_direct_beside_ring, teardown),
		cmocka_unit_test_teardown(test_fan_instances, teardown),
		cmocka_unit_test_teardown(test_time_preempted, teardown),
		cmocka_unit_test_teardown(test_mixed, teardown),
		cmocka_unit_test_teardown(test_expand, teardown),
		cmocka_unit_test_teardown(test_held, teardown),
		cmocka_unit_test_teardown(test_hint_unwritten_sink, teardown),
		cmocka_unit_test_teardown(test_hint_unwritten_ring, teardown),
		cmocka_unit_test_teardown(test_hint_unwritten_consumer, teardown),
		cmocka_unit_test_teardown(test_hint_written, teardown),
		cmocka_unit_test_teardown(test_in_port_hint, teardown),
		cmocka_unit_test_teardown(test_rings_maybe, teardown),
		cmocka_unit_test_teardown(test_rings_maybe_partial, teardown),
		cmocka_unit_test_teardown(test_lossless_room, teardown),
		cmocka_unit_test_teardown(test_lossless_ring, teardown),
		cmocka_unit_test_teardown(test_drops, teardown),
		cmocka_unit_test_teardown(test_move, teardown),
	};

	if (eal_up() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
