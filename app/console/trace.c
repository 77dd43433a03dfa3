/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet trace (VPP's `trace add`) and the per-packet drop reasons that the
 * drop capture needs.
 *
 *   /pipefwd/trace,N[,STAGE]   trace the next N packets entering STAGE
 *                              (default: every source stage), 1..256
 *   /pipefwd/trace_show[,K]    state and one line per packet; with K, the
 *                              path of packet K step by step
 *   /pipefwd/trace_clear       stop and forget
 *
 * Nothing here runs unless something is armed: pf_rt_run_burst() tests
 * pf_rt_stage.watch once per burst. A set watch byte sends the burst here,
 * where process_burst runs one packet at a time. Each packet's edge comes
 * from the stage as always; its drop reason is the DROP counter that moved
 * during its call, and the other counters that moved (hit, learned,
 * session_permit, ...) say what the lookup did. Stages process a burst as if
 * its packets came one by one (their contract), so this changes nothing a
 * packet or a counter sees.
 *
 * A traced packet carries an mbuf dynflag (cleared by every mbuf alloc) and
 * sits in active[] by trace number, so the stages after the start stage
 * find it. Each step is one record: stage, lcore, edge, reason, counters
 * moved, cycles of the one-packet call, the first bytes of the frame before
 * and after, the metadata after, and the stage's own note (ops->trace).
 * Records have many writers (every lcore) and one reader (telemetry): a slot
 * is claimed with an atomic add and published by its ready flag. The trace
 * ends when every traced packet has left (sent by a sink, or dropped): the
 * lcore that finishes the last one clears the watch bits.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>
#include <rte_telemetry.h>

#include "pf_capture.h"
#include "pf_log.h"
#include "pf_telemetry.h"
#include "pf_trace.h"

#define TRACE_MAX_PKTS 256
#define TRACE_MAX_RECS 4096
#define TRACE_HDR 64                  /* frame bytes kept per step: L2..L4 headers */
#define TRACE_CTRS 8                  /* counters a step lists */
#define TRACE_MAX_CTRS 64             /* counters of a stage snapshotted per packet */
#define TRACE_NOTE 96
#define TRACE_STR 128                 /* RTE_TEL_MAX_STRING_LEN */
#define TRACE_REPLY_BUDGET 12000      /* bytes of summary lines in one reply */
#define TRACE_SHOW_STEPS 16           /* steps of one packet in one reply */

struct trace_rec {
	uint32_t ready;                   /* published: the rest is complete */
	uint32_t pkt;                     /* trace number, 1.. */
	uint16_t stage;
	uint16_t edge;
	uint16_t reason;                  /* PF_REASON_NONE unless dropped */
	uint16_t lcore;
	uint16_t len_in, len_out;
	uint8_t n_ctr;
	uint8_t n_hdr;
	uint64_t tsc;
	uint64_t cycles;
	struct pf_meta md;                /* after the stage */
	uint16_t ctr_idx[TRACE_CTRS];
	uint32_t ctr_delta[TRACE_CTRS];
	uint8_t hdr_in[TRACE_HDR];
	uint8_t hdr_out[TRACE_HDR];
	char note[TRACE_NOTE];
};

static struct {
	struct pf_runtime *rt;            /* published while armed or showing */
	struct trace_rec *recs;
	uint64_t flag;                    /* ol_flags bit of a traced mbuf */
	uint64_t id;
	uint32_t wanted;
	int32_t start;                    /* stage index, -1: every source */
	uint32_t started;                 /* claimed trace numbers (may pass wanted) */
	uint32_t done;                    /* traced packets that left */
	uint32_t n_recs;                  /* claimed records (may pass the array) */
	struct rte_mbuf *active[TRACE_MAX_PKTS];
	uint64_t start_tsc;
} tr;

static pthread_mutex_t tr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pf_runtime *trace_rt;   /* NULL: the commands refuse (start, shutdown) */
static bool tr_registered;

/* ---- data path ------------------------------------------------------------ */

/* Every traced packet has left: stop watching (tracing only). */
static void
trace_finish(struct pf_runtime *rt)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		__atomic_fetch_and(&rt->rts[i].watch, (uint8_t)~PF_WATCH_TRACE, __ATOMIC_RELEASE);
}

static void
trace_left(struct pf_runtime *rt, int32_t slot)
{
	tr.active[slot] = NULL;
	if (__atomic_add_fetch(&tr.done, 1, __ATOMIC_ACQ_REL) == tr.wanted)
		trace_finish(rt);
}

/*
 * The trace slot of @p m (its number - 1): a marked packet's, or a new one
 * when @p start and the trace wants more. -1: not traced.
 */
static int32_t
trace_slot(struct rte_mbuf *m, bool start)
{
	uint32_t k, n;

	if (m->ol_flags & tr.flag) {
		n = RTE_MIN(__atomic_load_n(&tr.started, __ATOMIC_ACQUIRE), tr.wanted);
		for (k = 0; k < n; k++)
			if (__atomic_load_n(&tr.active[k], __ATOMIC_RELAXED) == m)
				return (int32_t)k;
		/* Marked by a trace since replaced: a new packet to this one. */
		m->ol_flags &= ~tr.flag;
	}
	if (!start || __atomic_load_n(&tr.started, __ATOMIC_RELAXED) >= tr.wanted)
		return -1;
	k = __atomic_fetch_add(&tr.started, 1, __ATOMIC_ACQ_REL);
	if (k >= tr.wanted)
		return -1;
	m->ol_flags |= tr.flag;
	__atomic_store_n(&tr.active[k], m, __ATOMIC_RELEASE);
	return (int32_t)k;
}

static struct trace_rec *
trace_rec_new(void)
{
	uint32_t k = __atomic_fetch_add(&tr.n_recs, 1, __ATOMIC_RELAXED);

	return k < TRACE_MAX_RECS ? &tr.recs[k] : NULL;
}

static uint8_t
trace_hdr(uint8_t *to, const struct rte_mbuf *m)
{
	uint32_t len = RTE_MIN((uint32_t)rte_pktmbuf_data_len(m), (uint32_t)TRACE_HDR);

	memcpy(to, rte_pktmbuf_mtod(m, const uint8_t *), len);
	return (uint8_t)len;
}

static bool
is_start(const struct pf_rt_stage *rs)
{
	return tr.start < 0 ? rs->st->ops->rx != NULL : rs->st->id == (uint16_t)tr.start;
}

uint16_t
pf_trace_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct pf_stage *st = rs->st;
	uint8_t watch = __atomic_load_n(&rs->watch, __ATOMIC_ACQUIRE);
	struct pf_cap_tap *dtap = NULL;
	uint16_t nc = RTE_MIN(st->ops->n_ctrs, (uint16_t)TRACE_MAX_CTRS), i, k;
	uint64_t before[TRACE_MAX_CTRS], t0, t1;
	bool tracing = (watch & PF_WATCH_TRACE) != 0 && tr.recs != NULL;
	bool start = tracing && is_start(rs);

	if (watch & PF_WATCH_DROPS)
		dtap = __atomic_load_n(&rs->drop_tap, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct trace_rec *r = NULL;
		uint16_t reason = PF_REASON_NONE, len_in = 0, e;
		uint8_t hdr_in[TRACE_HDR], n_in = 0;
		int32_t slot = tracing ? trace_slot(m, start) : -1;

		if (slot >= 0) {
			n_in = trace_hdr(hdr_in, m);
			len_in = (uint16_t)rte_pktmbuf_pkt_len(m);
		}
		if (slot >= 0 || dtap != NULL)
			memcpy(before, st->ctrs, nc * sizeof(before[0]));
		t0 = rte_rdtsc();
		e = st->ops->process_burst(st, &pkts[i], 1, &edge[i]);
		t1 = rte_rdtsc();
		/* One edge for the burst: edge[] may be unwritten (pf_stage.h). */
		if (e != PF_EDGE_MIXED)
			edge[i] = e;
		if (slot < 0 && (dtap == NULL || edge[i] != PF_EDGE_DROP))
			continue;
		if (slot >= 0)
			r = trace_rec_new();
		if (r != NULL) {
			r->n_ctr = 0;
			r->note[0] = '\0';
		}
		for (k = 0; k < nc; k++) {
			uint64_t d = st->ctrs[k] - before[k];

			if (d == 0)
				continue;
			if (edge[i] == PF_EDGE_DROP && reason == PF_REASON_NONE &&
			    st->ops->ctrs[k].kind == PF_CTR_DROP)
				reason = k;
			if (r != NULL && r->n_ctr < TRACE_CTRS) {
				r->ctr_idx[r->n_ctr] = k;
				r->ctr_delta[r->n_ctr++] = (uint32_t)d;
			}
		}
		if (edge[i] == PF_EDGE_DROP && dtap != NULL)
			pf_capture_drop(dtap, m, st->id, reason);
		if (slot < 0)
			continue;
		if (r != NULL) {
			r->pkt = (uint32_t)slot + 1;
			r->stage = st->id;
			r->edge = edge[i];
			r->reason = reason;
			r->lcore = (uint16_t)rte_lcore_id();
			r->tsc = t0;
			r->cycles = t1 - t0;
			r->len_in = len_in;
			r->len_out = (uint16_t)rte_pktmbuf_pkt_len(m);
			memcpy(r->hdr_in, hdr_in, n_in);
			r->n_hdr = RTE_MIN(n_in, trace_hdr(r->hdr_out, m));
			r->md = *pf_meta(m);
			if (st->ops->trace != NULL)
				st->ops->trace(st, m, r->note, sizeof(r->note));
			__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
		}
		/* Its path ends here: dropped, or handed to a sink's tx. */
		if (edge[i] == PF_EDGE_DROP || st->ops->tx != NULL)
			trace_left(tr.rt, slot);
	}
	return PF_EDGE_MIXED;
}

void
pf_trace_lost(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t reason)
{
	struct pf_cap_tap *dtap = __atomic_load_n(&rs->drop_tap, __ATOMIC_ACQUIRE);
	bool tracing = (__atomic_load_n(&rs->watch, __ATOMIC_ACQUIRE) & PF_WATCH_TRACE) != 0 &&
		       tr.recs != NULL;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct trace_rec *r;
		int32_t slot;

		if (dtap != NULL)
			pf_capture_drop(dtap, m, rs->st->id, reason);
		slot = tracing ? trace_slot(m, false) : -1;
		if (slot < 0)
			continue;
		r = trace_rec_new();
		if (r != NULL) {
			memset(r, 0, offsetof(struct trace_rec, hdr_in));
			r->pkt = (uint32_t)slot + 1;
			r->stage = rs->st->id;
			r->edge = PF_EDGE_DROP;
			r->reason = reason;
			r->lcore = (uint16_t)rte_lcore_id();
			r->tsc = rte_rdtsc();
			r->len_in = r->len_out = (uint16_t)rte_pktmbuf_pkt_len(m);
			r->n_hdr = trace_hdr(r->hdr_in, m);
			memcpy(r->hdr_out, r->hdr_in, r->n_hdr);
			r->md = *pf_meta(m);
			snprintf(r->note, sizeof(r->note), "dropped by the runtime after the "
				 "stage");
			__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
		}
		trace_left(tr.rt, slot);
	}
}

const char *
pf_trace_reason_name(const struct pf_stage *st, uint16_t reason)
{
	if (reason == PF_REASON_RING_FULL)
		return "ring_full";
	if (reason == PF_REASON_NO_EDGE)
		return "no_edge";
	if (st != NULL && reason < st->ops->n_ctrs)
		return st->ops->ctrs[reason].name;
	return "unknown";
}

/* ---- control: arming ------------------------------------------------------ */

/* Stop recording and wait until no lcore is inside a traced burst. */
static void
trace_disarm(struct pf_runtime *rt)
{
	if (rt != NULL)
		trace_finish(rt);
	pf_rcu_synchronize();
}

static int
trace_arm(struct pf_runtime *rt, const char *params, char *err, size_t err_len)
{
	char buf[128], *stage, *end;
	unsigned long n;
	int32_t start = -1;
	uint16_t i;
	int bit;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf)) {
		snprintf(err, err_len, "usage: /pipefwd/trace,N[,STAGE]");
		return -EINVAL;
	}
	stage = strchr(buf, ',');
	if (stage != NULL)
		*stage++ = '\0';
	errno = 0;
	n = strtoul(buf, &end, 10);
	if (buf[0] < '0' || buf[0] > '9' || *end != '\0' || errno != 0 || n == 0 ||
	    n > TRACE_MAX_PKTS) {
		snprintf(err, err_len, "count '%.40s': want a number of packets, 1..%u", buf,
			 TRACE_MAX_PKTS);
		return -EINVAL;
	}
	if (stage != NULL && *stage != '\0') {
		for (i = 0; i < rt->n_stages && start < 0; i++)
			if (strcmp(rt->stages[i]->conf->name, stage) == 0)
				start = i;
		if (start < 0) {
			snprintf(err, err_len, "unknown stage '%.40s'", stage);
			return -ENOENT;
		}
	}
	if (tr.flag == 0) {
		static const struct rte_mbuf_dynflag desc = { .name = "pipefwd_trace" };

		bit = rte_mbuf_dynflag_register(&desc);
		if (bit < 0) {
			snprintf(err, err_len, "no mbuf flag for tracing: %s", strerror(rte_errno));
			return -ENOSPC;
		}
		tr.flag = UINT64_C(1) << bit;
	}
	if (tr.recs == NULL) {
		tr.recs = calloc(TRACE_MAX_RECS, sizeof(*tr.recs));
		if (tr.recs == NULL) {
			snprintf(err, err_len, "no memory for the trace records");
			return -ENOMEM;
		}
	}
	/* A new trace replaces the last one: no lcore writes the old one now. */
	trace_disarm(tr.rt != NULL ? tr.rt : rt);
	memset(tr.recs, 0, TRACE_MAX_RECS * sizeof(*tr.recs));
	memset(tr.active, 0, sizeof(tr.active));
	tr.rt = rt;
	tr.wanted = (uint32_t)n;
	tr.start = start;
	tr.started = 0;
	tr.done = 0;
	tr.n_recs = 0;
	tr.start_tsc = rte_rdtsc();
	tr.id++;
	/* Publish last: an lcore that sees the bit sees the trace complete. */
	for (i = 0; i < rt->n_stages; i++)
		__atomic_fetch_or(&rt->rts[i].watch, (uint8_t)PF_WATCH_TRACE, __ATOMIC_RELEASE);
	PF_LOG(INFO, "trace %" PRIu64 ": next %lu packets entering %s", tr.id, n,
	       start < 0 ? "every source stage" : rt->stages[start]->conf->name);
	return 0;
}

/* ---- control: showing ----------------------------------------------------- */

static const char *
port_name(const struct pf_runtime *rt, uint16_t p, char *buf, size_t len)
{
	if (p == PF_PORT_NONE)
		return "none";
	if (p == PF_PORT_FLOOD)
		return "flood";
	if (p < rt->topo->n_ports)
		return rt->topo->ports[p].name;
	snprintf(buf, len, "%u", p);
	return buf;
}

static const char *
edge_name(const struct pf_stage *st, uint16_t e)
{
	if (e < st->ops->n_edges)
		return st->ops->edge_names[e];
	if (e == PF_EDGE_HELD)
		return "held";   /* neigh: kept until the neighbour resolves */
	return st->ops->tx != NULL ? "tx" : "?";
}

static void
fmt_mac(char *buf, const uint8_t *m)
{
	pf_show_mac(buf, m);
}

static void
fmt_ip4(char *buf, size_t len, const uint8_t *a)
{
	snprintf(buf, len, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

/* The headers of a step as the stage saw them: eth, vlan, arp or ip4, l4. */
static void
add_headers(struct rte_tel_data *d, const uint8_t *h, uint8_t n)
{
	char a[24], b[24], buf[TRACE_STR];
	uint16_t type, off = 14;
	uint8_t ihl, proto;

	if (n < 14)
		return;
	fmt_mac(a, h + 6);
	fmt_mac(b, h);
	snprintf(buf, sizeof(buf), "%s > %s", a, b);
	rte_tel_data_add_dict_string(d, "eth", buf);
	type = (uint16_t)(h[12] << 8 | h[13]);
	if (type == 0x8100 && n >= 18) {
		rte_tel_data_add_dict_int(d, "vlan", (h[14] << 8 | h[15]) & 0xfff);
		type = (uint16_t)(h[16] << 8 | h[17]);
		off = 18;
	}
	snprintf(buf, sizeof(buf), "0x%04x", type);
	rte_tel_data_add_dict_string(d, "ethertype", buf);
	if (type == 0x0806 && n >= off + 28) {
		fmt_ip4(a, sizeof(a), h + off + 14);
		fmt_ip4(b, sizeof(b), h + off + 24);
		snprintf(buf, sizeof(buf), "%s %s > %s", h[off + 7] == 1 ? "request" : "reply",
			 a, b);
		rte_tel_data_add_dict_string(d, "arp", buf);
		return;
	}
	if (type != 0x0800 || n < off + 20 || (h[off] >> 4) != 4)
		return;
	ihl = (uint8_t)((h[off] & 0xf) * 4);
	proto = h[off + 9];
	fmt_ip4(a, sizeof(a), h + off + 12);
	fmt_ip4(b, sizeof(b), h + off + 16);
	snprintf(buf, sizeof(buf), "%s > %s", a, b);
	rte_tel_data_add_dict_string(d, "ip4", buf);
	rte_tel_data_add_dict_int(d, "ttl", h[off + 8]);
	rte_tel_data_add_dict_int(d, "proto", proto);
	snprintf(buf, sizeof(buf), "0x%04x", h[off + 10] << 8 | h[off + 11]);
	rte_tel_data_add_dict_string(d, "ip4_checksum", buf);
	off = (uint16_t)(off + ihl);
	/* Ports of a first fragment only: a later one carries payload there. */
	if ((proto == 6 || proto == 17) && n >= off + 4 &&
	    ((h[off - ihl + 6] & 0x1f) | h[off - ihl + 7]) == 0) {
		snprintf(buf, sizeof(buf), "%u > %u", h[off] << 8 | h[off + 1],
			 h[off + 2] << 8 | h[off + 3]);
		rte_tel_data_add_dict_string(d, proto == 6 ? "tcp" : "udp", buf);
	}
}

/* What the stage changed in the headers (MAC rewrite, TTL). */
static void
add_rewrite(struct rte_tel_data *d, const struct trace_rec *r)
{
	char buf[TRACE_STR], a[24], b[24];
	size_t len = 0;
	uint16_t off = 14;

	if (r->n_hdr < 14 || memcmp(r->hdr_in, r->hdr_out, r->n_hdr) == 0)
		return;
	buf[0] = '\0';
	if (memcmp(r->hdr_in, r->hdr_out, 12) != 0) {
		fmt_mac(a, r->hdr_out + 6);
		fmt_mac(b, r->hdr_out);
		len += snprintf(buf + len, sizeof(buf) - len, "eth %s > %s", a, b);
	}
	if (r->hdr_in[12] == 0x81 && r->hdr_in[13] == 0)
		off = 18;
	if (r->n_hdr >= off + 20 && r->hdr_in[off + 8] != r->hdr_out[off + 8] &&
	    len < sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - len, "%sttl %u", len ? ", " : "",
				r->hdr_out[off + 8]);
	if (len == 0)
		snprintf(buf, sizeof(buf), "headers changed");
	rte_tel_data_add_dict_string(d, "rewrite", buf);
}

static void
add_step(struct rte_tel_data *d, const struct pf_runtime *rt, const struct trace_rec *r)
{
	const struct pf_stage *st = rt->stages[r->stage];
	char buf[TRACE_STR], pb[16];
	size_t len = 0;
	uint16_t k, p;

	rte_tel_data_add_dict_string(d, "stage", st->conf->name);
	rte_tel_data_add_dict_string(d, "type", st->ops->type);
	rte_tel_data_add_dict_int(d, "lcore", r->lcore);
	rte_tel_data_add_dict_string(d, "edge", edge_name(st, r->edge));
	if (r->reason != PF_REASON_NONE) {
		snprintf(buf, sizeof(buf), "%s:%s", st->conf->name,
			 pf_trace_reason_name(st, r->reason));
		rte_tel_data_add_dict_string(d, "drop", buf);
	}
	rte_tel_data_add_dict_u64(d, "cycles", r->cycles);
	rte_tel_data_add_dict_u64(d, "ns", (r->tsc - tr.start_tsc) * 1000000000ull /
				  rte_get_tsc_hz());
	buf[0] = '\0';
	for (k = 0; k < r->n_ctr && len < sizeof(buf); k++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s=%u", k ? " " : "",
				st->ops->ctrs[r->ctr_idx[k]].name, r->ctr_delta[k]);
	rte_tel_data_add_dict_string(d, "counters", buf);
	rte_tel_data_add_dict_u64(d, "len", r->len_in);
	add_headers(d, r->hdr_in, r->n_hdr);
	add_rewrite(d, r);
	rte_tel_data_add_dict_string(d, "in_port", port_name(rt, r->md.in_port, pb, sizeof(pb)));
	if (r->edge != PF_EDGE_DROP && r->md.out_port != PF_PORT_NONE) {
		rte_tel_data_add_dict_string(d, "out_port",
					     port_name(rt, r->md.out_port, pb, sizeof(pb)));
		if (r->md.out_port == PF_PORT_FLOOD) {
			len = 0;
			buf[0] = '\0';
			for (p = 0; p < rt->topo->n_ports && len < sizeof(buf); p++)
				if (r->md.flood_mask >> p & 1)
					len += snprintf(buf + len, sizeof(buf) - len, "%s%s",
							len ? " " : "", rt->topo->ports[p].name);
			rte_tel_data_add_dict_string(d, "flood", buf);
		}
	}
	/* A routing stage's ICMP edge carries the error in the next hop field. */
	if (strcmp(edge_name(st, r->edge), "icmp") == 0) {
		snprintf(buf, sizeof(buf), "type %u code %u", PF_META_ICMP_TYPE(r->md.nexthop),
			 PF_META_ICMP_CODE(r->md.nexthop));
		rte_tel_data_add_dict_string(d, "icmp", buf);
	}
	if (strcmp(st->ops->type, "l2fib") == 0)
		rte_tel_data_add_dict_u64(d, "bd", r->md.bd);
	if (r->note[0] != '\0')
		rte_tel_data_add_dict_string(d, "note", r->note);
}

static bool
rec_ready(uint32_t k)
{
	return __atomic_load_n(&tr.recs[k].ready, __ATOMIC_ACQUIRE) != 0;
}

static uint32_t
rec_count(void)
{
	return RTE_MIN(__atomic_load_n(&tr.n_recs, __ATOMIC_ACQUIRE), (uint32_t)TRACE_MAX_RECS);
}

/* Packet @p pkt's steps in the order they happened (record order, by lcore clock). */
static uint16_t
packet_steps(uint32_t pkt, uint32_t *idx, uint16_t max)
{
	uint32_t k, n = rec_count(), t;
	uint16_t c = 0, a, b;

	for (k = 0; k < n && c < max; k++)
		if (rec_ready(k) && tr.recs[k].pkt == pkt)
			idx[c++] = k;
	for (a = 1; a < c; a++)
		for (b = a; b > 0 && tr.recs[idx[b]].tsc < tr.recs[idx[b - 1]].tsc; b--) {
			t = idx[b];
			idx[b] = idx[b - 1];
			idx[b - 1] = t;
		}
	return c;
}

static void
trace_status(const struct pf_runtime *rt, struct rte_tel_data *d)
{
	uint32_t started = RTE_MIN(__atomic_load_n(&tr.started, __ATOMIC_ACQUIRE), tr.wanted);
	uint32_t done = __atomic_load_n(&tr.done, __ATOMIC_ACQUIRE), n = rec_count(), pkt;
	uint32_t idx[32];
	struct rte_tel_data *a;
	char buf[TRACE_STR];
	size_t len, total;
	uint16_t c, k;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", tr.id);
	rte_tel_data_add_dict_string(d, "state", tr.wanted == 0 ? "idle" :
				     done >= tr.wanted ? "done" : "tracing");
	if (tr.wanted == 0)
		return;
	rte_tel_data_add_dict_string(d, "stage", tr.start < 0 ? "every source" :
				     rt->stages[tr.start]->conf->name);
	rte_tel_data_add_dict_u64(d, "wanted", tr.wanted);
	rte_tel_data_add_dict_u64(d, "traced", started);
	rte_tel_data_add_dict_u64(d, "done", done);
	rte_tel_data_add_dict_u64(d, "records", n);
	rte_tel_data_add_dict_u64(d, "records_lost",
				  __atomic_load_n(&tr.n_recs, __ATOMIC_RELAXED) - n);
	a = rte_tel_data_alloc();
	if (a == NULL)
		return;
	/* One line per packet: "rx(ipv4) acl(out) lpm(out) tx(tx->p1)". */
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	/* The reply holds 16 KiB: the lines of the first packets that fit. */
	for (pkt = 1, total = 0; pkt <= started && total < TRACE_REPLY_BUDGET; pkt++) {
		const struct trace_rec *r = NULL;

		c = packet_steps(pkt, idx, RTE_DIM(idx));
		len = 0;
		buf[0] = '\0';
		for (k = 0; k < c && len < sizeof(buf); k++) {
			const struct pf_stage *st;

			r = &tr.recs[idx[k]];
			st = rt->stages[r->stage];
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s(%s)", k ? " " : "",
					st->conf->name, r->reason != PF_REASON_NONE ?
					pf_trace_reason_name(st, r->reason) :
					edge_name(st, r->edge));
		}
		rte_tel_data_add_array_string(a, buf);
		total += len + 4;
	}
	if (rte_tel_data_add_dict_container(d, "packets", a, 0) != 0)
		rte_tel_data_free(a);
}

static int
trace_packet(const struct pf_runtime *rt, const char *params, struct rte_tel_data *d)
{
	uint32_t idx[TRACE_SHOW_STEPS];
	unsigned long pkt;
	char *end, key[16];
	uint16_t c, k;

	errno = 0;
	pkt = strtoul(params, &end, 10);
	if (params[0] < '0' || params[0] > '9' || *end != '\0' || errno != 0 || pkt == 0 ||
	    pkt > TRACE_MAX_PKTS)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", tr.id);
	rte_tel_data_add_dict_u64(d, "packet", pkt);
	c = packet_steps((uint32_t)pkt, idx, RTE_DIM(idx));
	rte_tel_data_add_dict_u64(d, "steps", c);
	for (k = 0; k < c; k++) {
		struct rte_tel_data *s = rte_tel_data_alloc();

		if (s == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(s);
		add_step(s, rt, &tr.recs[idx[k]]);
		snprintf(key, sizeof(key), "%u", k);
		if (rte_tel_data_add_dict_container(d, key, s, 0) != 0)
			rte_tel_data_free(s);
	}
	return 0;
}

static int
trace_handle(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char err[TRACE_STR];
	int rc = 0;

	if (params != NULL && *params == '\0')
		params = NULL;
	/* tel_lock first (a reload rewrites the topology in place), then ours. */
	pf_telemetry_pause();
	pthread_mutex_lock(&tr_lock);
	if (trace_rt == NULL) {
		rc = -ENODEV;    /* starting or shutting down: reply null */
	} else if (tr.rt == NULL && strcmp(cmd, "/pipefwd/trace") != 0) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_u64(d, "id", 0);
		rte_tel_data_add_dict_string(d, "state", "idle");
	} else if (strcmp(cmd, "/pipefwd/trace") == 0) {
		if (trace_arm(trace_rt, params, err, sizeof(err)) < 0) {
			rte_tel_data_start_dict(d);
			rte_tel_data_add_dict_string(d, "error", err);
		} else {
			trace_status(tr.rt, d);
		}
	} else if (strcmp(cmd, "/pipefwd/trace_clear") == 0) {
		if (params != NULL) {
			rc = -EINVAL;
		} else {
			trace_disarm(tr.rt);
			tr.wanted = 0;
			tr.started = tr.done = tr.n_recs = 0;
			trace_status(tr.rt, d);
		}
	} else if (params != NULL) {
		rc = trace_packet(tr.rt, params, d);
	} else {
		trace_status(tr.rt, d);
	}
	pthread_mutex_unlock(&tr_lock);
	pf_telemetry_resume();
	return rc;
}

int
pf_trace_init(struct pf_runtime *rt)
{
	static const char *const cmds[][2] = {
		{ "/pipefwd/trace", "pipefwd: trace the next N packets. Params: N[,STAGE]" },
		{ "/pipefwd/trace_show", "pipefwd: the trace; with K, packet K's path" },
		{ "/pipefwd/trace_clear", "pipefwd: stop tracing, forget the records" },
	};
	unsigned int c;
	int rc;

	if (!tr_registered) {
		for (c = 0; c < RTE_DIM(cmds); c++) {
			rc = rte_telemetry_register_cmd(cmds[c][0], trace_handle, cmds[c][1]);
			if (rc < 0) {
				PF_LOG(WARNING, "trace: cannot register %s: %s", cmds[c][0],
				       strerror(-rc));
				return rc;
			}
		}
		tr_registered = true;
	}
	pthread_mutex_lock(&tr_lock);
	trace_rt = rt;
	pthread_mutex_unlock(&tr_lock);
	return 0;
}

void
pf_trace_shutdown(void)
{
	pthread_mutex_lock(&tr_lock);
	if (tr.rt != NULL)
		trace_disarm(tr.rt);
	trace_rt = NULL;
	tr.rt = NULL;
	tr.wanted = 0;
	free(tr.recs);
	tr.recs = NULL;
	pthread_mutex_unlock(&tr_lock);
}
