/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx: buffer packets per egress port and send them in bursts.
 * Edges: drop (a sink: every other packet is sent by this stage).
 * Counters: tx_full (drop: the port queue stayed full after bounded retries),
 *   link_down (drop: the port's link is down, the send failed: no retries),
 *   no_tx_port (drop: egress port not served by this stage, or removed live);
 *   info: flood_copies.
 * Params: ports (list, required): the ports this stage transmits on.
 *
 * Flooded packets (out_port == PF_PORT_FLOOD) are replicated by reference
 * count: one mbuf, one extra reference per extra egress port, no copy.
 * Buffers flush when a burst is full, when the stage idles, and when the
 * oldest buffered packet is older than runtime.tx_flush_us. A burst that
 * goes whole to one port with nothing buffered is sent as it is, no copy;
 * when its producer gave the burst-port hint (pf_stage.h), without a pass.
 *
 * process_burst hands every packet to tx (edge 1, the whole burst: the
 * runtime skips it, PF_STAGE_TX_ALL, but for a traced packet); tx
 * checks out_port in the pass that buffers, so an unserved port is counted
 * no_tx_port and freed there (the counter, not the drop edge, carries it).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "pf_stage.h"

#define TX_BUF 32
#define TX_RETRIES 16

#define foreach_tx_ctr(_)									\
	_(TX_CTR_TX_FULL, tx_full, DROP, "port tx queue stayed full after bounded retries")	\
	_(TX_CTR_LINK_DOWN, link_down, DROP, "port link down: the send failed, not retried")	\
	_(TX_CTR_NO_TX_PORT, no_tx_port, DROP, "egress port not served by this tx stage")	\
	_(TX_CTR_FLOOD_COPIES, flood_copies, INFO, "extra copies sent for flooded packets")

PF_CTR_ENUM(tx, foreach_tx_ctr);
PF_CTR_DESCS(tx, foreach_tx_ctr);

static const char *const tx_edges[] = { "drop" };
static const char *const tx_keys[] = { "ports", NULL };

struct tx_port_buf {
	uint16_t n;
	uint16_t port_id;
	uint16_t queue;
	uint64_t first_tsc;               /* when the oldest buffered packet arrived */
	uint64_t dropped;                 /* tx_full drops on this port */
	uint64_t link_dropped;            /* link_down drops on this port */
	struct rte_mbuf *pkts[TX_BUF];
};

struct tx_priv {
	uint32_t served_mask;             /* ports this stage sends on */
	uint32_t pending;                 /* ports with buffered packets */
	uint64_t flush_cycles;
	struct tx_port_buf buf[PF_MAX_PORTS];
};

static int
tx_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v = pf_map_get(sc->node, "ports");
	char path[PF_CONF_PATH_MAX];

	if (v == NULL)
		return pf_node_err(errs, sc->node, "stages.%s: missing required key 'ports'",
				   sc->name);
	snprintf(path, sizeof(path), "stages.%s.ports", sc->name);
	return pf_stage_port_list(env, v, path, sc->tx_ports, PF_MAX_PORTS, &sc->n_tx_ports,
				 errs);
}

static int
tx_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct tx_priv *tx = st->priv;
	const struct pf_stage_conf *sc = st->conf;
	uint16_t i, p;

	for (i = 0; i < sc->n_tx_ports; i++) {
		p = sc->tx_ports[i];
		tx->served_mask |= 1u << p;
		tx->buf[p].port_id = pf_env_port_id(st->env, p);
		tx->buf[p].queue = sc->tx_queue[i];
	}
	tx->flush_cycles = rte_get_tsc_hz() / 1000000 * st->env->tx_flush_us;
	return 0;
}

/*
 * Ports added or removed live (ctl.ports): a port this stage now serves gets
 * its DPDK id and queue before its bit is set. One it no longer serves is
 * still sent on until the runtime says it drained (what was routed to it
 * before the change leaves by it); then it loses its bit, so a packet for it
 * from then on, and what its buffer still holds when next flushed, is a
 * no_tx_port drop (tx_flush_port): nothing is sent on it after that call's
 * grace period, when the runtime stops it.
 */
static void
tx_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct tx_priv *tx = st->priv;
	const struct pf_stage_conf *sc = st->conf;
	uint32_t served = 0;
	uint16_t i, p;

	RTE_SET_USED(added);
	RTE_SET_USED(gone);
	for (i = 0; i < sc->n_tx_ports; i++) {
		p = sc->tx_ports[i];
		served |= 1u << p;
		if (tx->served_mask & (1u << p))
			continue;
		tx->buf[p].port_id = pf_env_port_id(st->env, p);
		tx->buf[p].queue = sc->tx_queue[i];
	}
	if (!drained)
		served |= tx->served_mask;
	__atomic_store_n(&tx->served_mask, served, __ATOMIC_RELEASE);
}

/* Every packet is tx's to send or count: out_port is checked where it is used. */
static uint16_t
tx_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		edge[i] = 1;
	return 1;
}

/*
 * The rest of a send the queue took only @p sent of: retry while the queue
 * makes progress, a bounded number of times, then free and count the rest
 * as tx_full. On a port the runtime saw go down (a vhost guest away, a
 * cable out) nothing is retried and the rest is link_down: the queue is not
 * full, it has nowhere to go. Out of line: rarely run.
 */
static __rte_noinline void
tx_send_rest(struct pf_stage *st, uint16_t p, struct rte_mbuf **pkts, uint16_t n, uint16_t sent)
{
	struct tx_priv *tx = st->priv;
	struct tx_port_buf *b = &tx->buf[p];
	uint16_t k, tries = sent == 0;

	if (sent == 0 && pf_env_link_down(st->env, p)) {
		st->ctrs[TX_CTR_LINK_DOWN] += n;
		b->link_dropped += n;
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	while (sent < n && tries < TX_RETRIES) {
		k = rte_eth_tx_burst(b->port_id, b->queue, pkts + sent, n - sent);
		sent += k;
		tries = k == 0 ? tries + 1 : tries;
	}
	st->port_tx[p] += sent;
	if (unlikely(sent < n)) {
		st->ctrs[TX_CTR_TX_FULL] += n - sent;
		b->dropped += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

/* Send @p n packets on port @p p; usually the queue takes the whole burst at once. */
static __rte_always_inline void
tx_send(struct pf_stage *st, uint16_t p, struct rte_mbuf **pkts, uint16_t n)
{
	const struct tx_priv *tx = st->priv;
	const struct tx_port_buf *b = &tx->buf[p];
	uint16_t sent = rte_eth_tx_burst(b->port_id, b->queue, pkts, n);

	if (likely(sent == n)) {
		st->port_tx[p] += sent;
		return;
	}
	tx_send_rest(st, p, pkts, n, sent);
}

/* A buffer for a port this stage no longer serves (removed live): count it, send nothing. */
static __rte_noinline void
tx_drop_unserved(struct pf_stage *st, struct tx_port_buf *b)
{
	st->ctrs[TX_CTR_NO_TX_PORT] += b->n;
	rte_pktmbuf_free_bulk(b->pkts, b->n);
}

static void
tx_flush_port(struct pf_stage *st, uint16_t p)
{
	struct tx_priv *tx = st->priv;
	struct tx_port_buf *b = &tx->buf[p];

	if (likely((tx->served_mask >> p) & 1))
		tx_send(st, p, b->pkts, b->n);
	else
		tx_drop_unserved(st, b);
	b->n = 0;
	tx->pending &= ~(1u << p);
}

static __rte_always_inline void
tx_append(struct pf_stage *st, uint16_t p, struct rte_mbuf *m, uint64_t now)
{
	struct tx_priv *tx = st->priv;
	struct tx_port_buf *b = &tx->buf[p];

	if (b->n == 0) {
		b->first_tsc = now;
		tx->pending |= 1u << p;
	}
	b->pkts[b->n++] = m;
	if (b->n == TX_BUF)
		tx_flush_port(st, p);
}

/* Whether this stage sends on port index @p p. */
static __rte_always_inline bool
tx_serves(const struct tx_priv *tx, uint32_t p)
{
	/* A shift, not a mask made per call: one bit test. */
	return p < PF_MAX_PORTS && ((tx->served_mask >> p) & 1);
}

/* A packet for no port this stage serves: a named drop, never a silent one. */
static __rte_noinline void
tx_no_port(struct pf_stage *st, struct rte_mbuf *m)
{
	st->ctrs[TX_CTR_NO_TX_PORT]++;
	rte_pktmbuf_free(m);
}

/* Flooding: one reference per egress port; each port's send releases one. */
static __rte_noinline void
tx_flood(struct pf_stage *st, struct rte_mbuf *m, uint32_t flood_mask, uint64_t now)
{
	struct tx_priv *tx = st->priv;
	uint32_t mask = flood_mask & tx->served_mask;
	uint16_t p, copies = (uint16_t)__builtin_popcount(mask);

	if (unlikely(copies == 0)) {
		tx_no_port(st, m);
		return;
	}
	if (copies > 1) {
		rte_mbuf_refcnt_update(m, (int16_t)(copies - 1));
		st->replicas += copies - 1;
		st->ctrs[TX_CTR_FLOOD_COPIES] += copies - 1;
	}
	while (mask != 0) {
		p = (uint16_t)__builtin_ctz(mask);
		mask &= mask - 1;
		tx_append(st, p, m, now);
	}
}

/* Check each packet's port in the pass that buffers it. */
static void
tx_buffer(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, int off, uint64_t now)
{
	const struct tx_priv *tx = st->priv;
	uint16_t i, p;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pf_meta *md = pf_meta_at(m, off);

		p = md->out_port;
		if (likely(tx_serves(tx, p)))
			tx_append(st, p, m, now);
		else if (p == PF_PORT_FLOOD)
			tx_flood(st, m, md->flood_mask, now);
		else
			tx_no_port(st, m);
	}
}

/* Everything but the common burst (tx_tx): out of line, so that one saves no registers. */
static __rte_noinline void
tx_tx_other(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n)
{
	struct tx_priv *tx = st->priv;
	uint64_t now = rte_rdtsc();
	int off = pf_meta_off();
	uint32_t pending, p0, diff = 0;
	unsigned int j;
	uint16_t p;

	if (st->in_burst_port != 0) {
		/* The producer's hint holds every packet's port (pf_stage.h; with
		 * PF_BURST_PORT_UNWRITTEN only the hint does: no out_port read). */
		p0 = PF_BURST_PORT_INDEX(st->in_burst_port);
		if (!tx_serves(tx, p0))
			for (j = 0; j < n; j++)
				tx_no_port(st, pkts[j]);
		else if (tx->buf[p0].n == 0)
			tx_send(st, (uint16_t)p0, pkts, n);
		else
			/* Behind what is buffered there: append, in order. */
			for (j = 0; j < n; j++)
				tx_append(st, (uint16_t)p0, pkts[j], now);
	} else {
		p0 = pf_meta_at(pkts[0], off)->out_port;
		/* Four per step: the loop's own cost shared, four independent loads. */
		for (j = 0; j + 4 <= n; j += 4)
			diff |= (pf_meta_at(pkts[j], off)->out_port ^ p0) |
				(pf_meta_at(pkts[j + 1], off)->out_port ^ p0) |
				(pf_meta_at(pkts[j + 2], off)->out_port ^ p0) |
				(pf_meta_at(pkts[j + 3], off)->out_port ^ p0);
		for (; j < n; j++)
			diff |= pf_meta_at(pkts[j], off)->out_port ^ p0;
		/* One served port with nothing buffered there: send it as is. */
		if (likely(diff == 0 && tx_serves(tx, p0) && tx->buf[p0].n == 0))
			tx_send(st, (uint16_t)p0, pkts, n);
		else
			tx_buffer(st, pkts, n, off, now);
	}
	/* Light traffic: do not hold packets longer than tx_flush_us. */
	pending = tx->pending;
	while (pending != 0) {
		p = (uint16_t)__builtin_ctz(pending);
		pending &= pending - 1;
		if (now - tx->buf[p].first_tsc >= tx->flush_cycles)
			tx_flush_port(st, p);
	}
}

static void
tx_tx(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n)
{
	const struct tx_priv *tx = st->priv;
	uint32_t p0 = PF_BURST_PORT_INDEX(st->in_burst_port);

	if (unlikely(n == 0))
		return;
	/*
	 * The common burst: the producer's hint gives every packet's port,
	 * nothing is buffered anywhere (so no flush is due either) and the
	 * queue takes it all: sent as it is, no clock read, no pass.
	 */
	if (likely(st->in_burst_port != 0 && tx->pending == 0 && tx_serves(tx, p0))) {
		tx_send(st, (uint16_t)p0, pkts, n);
		return;
	}
	tx_tx_other(st, pkts, n);
}

static void
tx_idle(struct pf_stage *st, uint64_t now_ns)
{
	struct tx_priv *tx = st->priv;

	while (tx->pending != 0)
		tx_flush_port(st, (uint16_t)__builtin_ctz(tx->pending));
}

static bool
tx_busy(const struct pf_stage *st)
{
	const struct tx_priv *tx = st->priv;

	return __atomic_load_n(&tx->pending, __ATOMIC_RELAXED) != 0;
}

static void
tx_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct tx_priv *tx = st->priv;
	uint64_t buffered = 0;
	char name[48];
	uint16_t p;

	for (p = 0; p < PF_MAX_PORTS; p++)
		buffered += tx->buf[p].n;
	pf_sink_u64(out, "in_flight", buffered);
	for (p = 0; p < st->env->n_ports; p++) {
		if (!(tx->served_mask & (1u << p)))
			continue;
		snprintf(name, sizeof(name), "tx_full.%s", st->env->ports[p].name);
		pf_sink_u64(out, name, tx->buf[p].dropped);
		/* Only once it happened: 32 ports fit the reports' gauge lists twice over. */
		if (tx->buf[p].link_dropped == 0)
			continue;
		snprintf(name, sizeof(name), "link_down.%s", st->env->ports[p].name);
		pf_sink_u64(out, name, tx->buf[p].link_dropped);
	}
}

static void
tx_free(struct pf_stage *st)
{
	struct tx_priv *tx = st->priv;
	uint16_t p;

	if (tx == NULL)
		return;
	/* Anything still buffered was never sent: count it, never drop silently. */
	for (p = 0; p < PF_MAX_PORTS; p++) {
		if (tx->buf[p].n == 0)
			continue;
		st->ctrs[TX_CTR_TX_FULL] += tx->buf[p].n;
		rte_pktmbuf_free_bulk(tx->buf[p].pkts, tx->buf[p].n);
		tx->buf[p].n = 0;
	}
}

const struct pf_stage_ops pf_tx_ops = {
	.type = "tx",
	.summary = "buffer per port and transmit in bursts; replicate flooded packets",
	.flags = PF_STAGE_SINK | PF_STAGE_TX_ALL,
	.priv_size = sizeof(struct tx_priv),
	.n_edges = 1,
	.edge_names = tx_edges,
	.default_edge = 0,
	.n_ctrs = tx_ctr_max,
	.ctrs = tx_ctrs,
	.dp = {
		.process_burst = tx_process_burst,
		.tx = tx_tx,
		.idle = tx_idle,
	},
	.ctl = {
		.param_keys = tx_keys,
		.parse = tx_parse,
		.init = tx_init,
		.ports = tx_ports,
		.free = tx_free,
	},
	.obs = {
		.busy = tx_busy,
		.gauges = tx_gauges,
	},
};
