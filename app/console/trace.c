/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet trace commands (VPP's `trace add`); the recording is the runtime's
 * watch path (app/runtime/watch.c):
 *
 *   /pipefwd/trace,N[,STAGE]   trace the next N packets entering STAGE
 *                              (default: every source stage), 1..256
 *   /pipefwd/trace_show[,K]    state and one line per packet; with K, the
 *                              path of packet K step by step
 *   /pipefwd/trace_clear       stop and forget
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_flowhash.h"
#include "pf_inject.h"
#include "pf_watch.h"

#define TRACE_STR 128                 /* RTE_TEL_MAX_STRING_LEN */
#define TRACE_REPLY_BUDGET 12000      /* bytes of summary lines in one reply */
#define TRACE_SHOW_STEPS 16           /* steps of one packet in one reply */
#define PF_INJECT_CTRS 256            /* counters of a stage trace inject copies */

/* ---- arming ---------------------------------------------------------------- */

static int
trace_arm(struct pf_runtime *rt, const char *params, char *err, size_t err_len)
{
	char buf[128], *stage, *end;
	unsigned long n;
	int32_t start = -1;
	uint16_t i;

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
	    n > PF_TRACE_MAX_PKTS) {
		snprintf(err, err_len, "count '%.40s': want a number of packets, 1..%u", buf,
			 PF_TRACE_MAX_PKTS);
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
	return pf_trace_arm(rt, (uint32_t)n, start, err, err_len);
}

/* ---- showing --------------------------------------------------------------- */

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
	return st->ops->dp.tx != NULL ? "tx" : "?";
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

/* An IPv6 header (@p n bytes from it on): addresses, hop limit, next header, ports. */
static void
add_ip6(struct rte_tel_data *d, const uint8_t *ip, uint8_t n)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], buf[TRACE_STR];

	inet_ntop(AF_INET6, ip + 8, a, sizeof(a));
	inet_ntop(AF_INET6, ip + 24, b, sizeof(b));
	snprintf(buf, sizeof(buf), "%s > %s", a, b);
	rte_tel_data_add_dict_string(d, "ip6", buf);
	rte_tel_data_add_dict_int(d, "hlim", ip[7]);
	rte_tel_data_add_dict_int(d, "proto", ip[6]);
	/* Ports right behind the header only (extension headers are not walked here). */
	if ((ip[6] == 6 || ip[6] == 17) && n >= 44) {
		snprintf(buf, sizeof(buf), "%u > %u", ip[40] << 8 | ip[41], ip[42] << 8 | ip[43]);
		rte_tel_data_add_dict_string(d, ip[6] == 6 ? "tcp" : "udp", buf);
	}
}

/* The headers of a step as the stage saw them: eth, vlan, arp, ip4 or ip6, l4. */
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
	if (type == 0x86dd && n >= off + 40 && (h[off] >> 4) == 6) {
		add_ip6(d, h + off, (uint8_t)(n - off));
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
add_rewrite(struct rte_tel_data *d, const struct pf_trace_rec *r)
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
	if (r->hdr_in[off - 2] == 0x86 && r->hdr_in[off - 1] == 0xdd) {
		if (r->n_hdr >= off + 40 && r->hdr_in[off + 7] != r->hdr_out[off + 7] &&
		    len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len, "%shlim %u", len ? ", " : "",
					r->hdr_out[off + 7]);
	} else if (r->n_hdr >= off + 20 && r->hdr_in[off + 8] != r->hdr_out[off + 8] &&
		   len < sizeof(buf)) {
		len += snprintf(buf + len, sizeof(buf) - len, "%sttl %u", len ? ", " : "",
				r->hdr_out[off + 8]);
	}
	if (len == 0)
		snprintf(buf, sizeof(buf), "headers changed");
	rte_tel_data_add_dict_string(d, "rewrite", buf);
}

static void
add_step(struct rte_tel_data *d, const struct pf_runtime *rt, const struct pf_trace_rec *r,
	 uint64_t base_tsc)
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
			 pf_stage_reason_name(st, r->reason));
		rte_tel_data_add_dict_string(d, "drop", buf);
	}
	rte_tel_data_add_dict_u64(d, "cycles", r->cycles);
	rte_tel_data_add_dict_u64(d, "ns", (r->tsc - base_tsc) * 1000000000ull / rte_get_tsc_hz());
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
	return __atomic_load_n(&pf_trace.recs[k].ready, __ATOMIC_ACQUIRE) != 0;
}

static uint32_t
rec_count(void)
{
	return RTE_MIN(__atomic_load_n(&pf_trace.n_recs, __ATOMIC_ACQUIRE), (uint32_t)PF_TRACE_MAX_RECS);
}

/* Packet @p pkt's steps in the order they happened (record order, by lcore clock). */
static uint16_t
packet_steps(uint32_t pkt, uint32_t *idx, uint16_t max)
{
	uint32_t k, n = rec_count(), t;
	uint16_t c = 0, a, b;

	for (k = 0; k < n && c < max; k++)
		if (rec_ready(k) && pf_trace.recs[k].pkt == pkt)
			idx[c++] = k;
	for (a = 1; a < c; a++)
		for (b = a; b > 0 && pf_trace.recs[idx[b]].tsc < pf_trace.recs[idx[b - 1]].tsc; b--) {
			t = idx[b];
			idx[b] = idx[b - 1];
			idx[b - 1] = t;
		}
	return c;
}

static void
trace_status(const struct pf_runtime *rt, struct rte_tel_data *d)
{
	uint32_t started = RTE_MIN(__atomic_load_n(&pf_trace.started, __ATOMIC_ACQUIRE), pf_trace.wanted);
	uint32_t done = __atomic_load_n(&pf_trace.done, __ATOMIC_ACQUIRE), n = rec_count(), pkt;
	uint32_t idx[32];
	struct rte_tel_data *a;
	char buf[TRACE_STR];
	size_t len, total;
	uint16_t c, k;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", pf_trace.id);
	rte_tel_data_add_dict_string(d, "state", pf_trace.wanted == 0 ? "idle" :
				     done >= pf_trace.wanted ? "done" : "tracing");
	if (pf_trace.wanted == 0)
		return;
	rte_tel_data_add_dict_string(d, "stage", pf_trace.start < 0 ? "every source" :
				     rt->stages[pf_trace.start]->conf->name);
	rte_tel_data_add_dict_u64(d, "wanted", pf_trace.wanted);
	rte_tel_data_add_dict_u64(d, "traced", started);
	rte_tel_data_add_dict_u64(d, "done", done);
	rte_tel_data_add_dict_u64(d, "records", n);
	rte_tel_data_add_dict_u64(d, "records_lost",
				  __atomic_load_n(&pf_trace.n_recs, __ATOMIC_RELAXED) - n);
	a = rte_tel_data_alloc();
	if (a == NULL)
		return;
	/* One line per packet: "rx(ipv4) acl(out) lpm(out) tx(tx->p1)". */
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	/* The reply holds 16 KiB: the lines of the first packets that fit. */
	for (pkt = 1, total = 0; pkt <= started && total < TRACE_REPLY_BUDGET; pkt++) {
		const struct pf_trace_rec *r = NULL;

		c = packet_steps(pkt, idx, RTE_DIM(idx));
		len = 0;
		buf[0] = '\0';
		for (k = 0; k < c && len < sizeof(buf); k++) {
			const struct pf_stage *st;

			r = &pf_trace.recs[idx[k]];
			st = rt->stages[r->stage];
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s(%s)", k ? " " : "",
					st->conf->name, r->reason != PF_REASON_NONE ?
					pf_stage_reason_name(st, r->reason) :
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
	    pkt > PF_TRACE_MAX_PKTS)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", pf_trace.id);
	rte_tel_data_add_dict_u64(d, "packet", pkt);
	c = packet_steps((uint32_t)pkt, idx, RTE_DIM(idx));
	rte_tel_data_add_dict_u64(d, "steps", c);
	for (k = 0; k < c; k++) {
		struct rte_tel_data *s = rte_tel_data_alloc();

		if (s == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(s);
		add_step(s, rt, &pf_trace.recs[idx[k]], pf_trace.start_tsc);
		snprintf(key, sizeof(key), "%u", k);
		if (rte_tel_data_add_dict_container(d, key, s, 0) != 0)
			rte_tel_data_free(s);
	}
	return 0;
}


/* ---- commands -------------------------------------------------------------- */

static int
cmd_trace(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	char err[TRACE_STR];

	if (params != NULL && *params == '\0')
		params = NULL;
	if (trace_arm(con->rt, params, err, sizeof(err)) < 0)
		pf_console_error(d, err);
	else
		trace_status(pf_trace.rt, d);
	return 0;
}

static bool
trace_idle(struct rte_tel_data *d)
{
	if (pf_trace.rt != NULL)
		return false;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", 0);
	rte_tel_data_add_dict_string(d, "state", "idle");
	return true;
}

static int
cmd_trace_show(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	if (trace_idle(d))
		return 0;
	if (params != NULL && *params != '\0')
		return trace_packet(pf_trace.rt, params, d);
	trace_status(pf_trace.rt, d);
	return 0;
}

static int
cmd_trace_clear(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	if (trace_idle(d))
		return 0;
	pf_trace_disarm(pf_trace.rt);
	pf_trace.wanted = 0;
	pf_trace.started = pf_trace.done = pf_trace.n_recs = 0;
	trace_status(pf_trace.rt, d);
	return 0;
}

/* ---- trace inject: a packet of our own through the real stages ------------ */

#define INJECT_STEPS 16             /* a topology is a DAG of at most this many hops here */
#define INJECT_FRAME_MAX 1024       /* hex of a frame this long fits a telemetry request */
#define INJECT_WAIT_MS 2000

/* Steps may be read by an lcore after they ended (pf_inject.h): not on a stack. */
static struct pf_inject_step inject_s;
static struct pf_trace_rec inject_recs[INJECT_STEPS];

static int
hex_frame(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex), i;
	unsigned int v;

	if (n == 0 || n % 2 != 0 || n / 2 > max)
		return -1;
	for (i = 0; i < n / 2; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1 || !isxdigit((unsigned char)hex[2 * i]) ||
		    !isxdigit((unsigned char)hex[2 * i + 1]))
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)(n / 2);
}

/* The rx stage that reads port @p p (the first; RSS would choose among instances). */
static struct pf_rt_stage *
inject_source(struct pf_runtime *rt, uint16_t p)
{
	uint16_t i, k;

	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage_conf *sc = rt->stages[i]->conf;

		if (rt->stages[i]->ops->dp.rx == NULL)
			continue;
		for (k = 0; k < sc->n_rx_ports; k++)
			if (sc->rx_ports[k] == p)
				return &rt->rts[i];
	}
	return NULL;
}

/* Where the runtime would move a packet of @p rs on edge @p e: its consumer, or NULL. */
static struct pf_rt_stage *
inject_next(const struct pf_rt_stage *rs, uint16_t e, struct rte_mbuf *m)
{
	if (e >= PF_MAX_EDGES)
		return NULL;
	if (rs->out[e] != NULL)
		return rs->out[e]->to;
	if (rs->fan[e] != NULL)
		return rs->fan[e]->ring[pf_flow_pick(pf_flow_hash(m), rs->fan[e]->n)]->to;
	return NULL;
}

/*
 * Walk the packet from @p rs, stage by stage, each step a dry run on the
 * stage's lcore, until it is dropped, held, handed to a sink or meets an
 * unwired edge; the steps into inject_recs. Returns how many, and what
 * ended the walk in @p end.
 */
static uint16_t
inject_walk(struct pf_runtime *rt, struct pf_rt_stage *rs, struct rte_mbuf **mp,
	    uint64_t *ctrs, char *end, size_t len)
{
	uint16_t n = 0;
	const struct pf_stage *st;

	end[0] = '\0';
	while (n < INJECT_STEPS) {
		st = rs->st;
		inject_s.rs = rs;
		inject_s.m = *mp;
		inject_s.ctrs = ctrs;
		inject_s.before = ctrs + PF_INJECT_CTRS;
		if (pf_inject_run(rt, &inject_s, INJECT_WAIT_MS) < 0) {
			snprintf(end, len, "timeout: no lcore ran stage %s (moving?)", st->conf->name);
			return n;
		}
		*mp = inject_s.m;
		inject_recs[n++] = inject_s.rec;
		if (inject_s.made > 1)
			snprintf(inject_recs[n - 1].note, sizeof(inject_recs[n - 1].note),
				 "made %u packets: the first is followed", inject_s.made);
		if (inject_s.edge == PF_EDGE_DROP) {
			snprintf(end, len, "dropped");
			return n;
		}
		if (inject_s.edge == PF_EDGE_HELD) {
			snprintf(end, len, "held by %s", st->conf->name);
			return n;
		}
		if (st->ops->dp.tx != NULL) {
			snprintf(end, len, "sent");
			return n;
		}
		rs = inject_next(rs, inject_s.edge, *mp);
		if (rs == NULL) {
			snprintf(end, len, "no_edge: %s's edge %s is not wired", st->conf->name,
				 edge_name(st, inject_s.edge));
			return n;
		}
	}
	snprintf(end, len, "stopped after %u steps", INJECT_STEPS);
	return n;
}

/* "PORT,HEX": a frame on PORT, walked through the stages; the reply is its path. */
static int
cmd_trace_inject(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct pf_runtime *rt = con->rt;
	char port[PF_NAME_MAX], end[TRACE_STR], err[TRACE_STR];
	static uint64_t ctrs[2 * PF_INJECT_CTRS];
	uint8_t frame[INJECT_FRAME_MAX];
	struct pf_rt_stage *rs;
	struct rte_mbuf *m;
	const char *hex;
	uint16_t p, n, k;
	char key[16];
	int len;

	hex = params != NULL ? strchr(params, ',') : NULL;
	if (hex == NULL || (size_t)(hex - params) >= sizeof(port)) {
		pf_console_error(d, "usage: /pipefwd/trace_inject,PORT,FRAME_HEX");
		return 0;
	}
	snprintf(port, sizeof(port), "%.*s", (int)(hex - params), params);
	for (p = 0; p < rt->topo->n_ports && strcmp(rt->topo->ports[p].name, port) != 0; p++)
		;
	len = hex_frame(hex + 1, frame, sizeof(frame));
	rs = p < rt->topo->n_ports ? inject_source(rt, p) : NULL;
	if (p == rt->topo->n_ports)
		snprintf(err, sizeof(err), "unknown port '%.40s'", port);
	else if (len < 14)
		snprintf(err, sizeof(err), "frame: want 14 to %d bytes in hex", INJECT_FRAME_MAX);
	else if (rs == NULL)
		snprintf(err, sizeof(err), "no rx stage reads port %s", port);
	if (p == rt->topo->n_ports || len < 14 || rs == NULL) {
		pf_console_error(d, err);
		return 0;
	}
	m = rte_pktmbuf_alloc(rt->pool);
	if (m == NULL || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
		rte_pktmbuf_free(m);
		pf_console_error(d, "no mbuf for the packet (pool empty, or frame too long)");
		return 0;
	}
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame, (size_t)len);
	m->port = rt->port_run[p].port_id;
	n = inject_walk(rt, rs, &m, ctrs, end, sizeof(end));
	rte_pktmbuf_free(m);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "in_port", port);
	rte_tel_data_add_dict_u64(d, "len", (uint64_t)len);
	rte_tel_data_add_dict_string(d, "result", end);
	rte_tel_data_add_dict_u64(d, "steps", n);
	for (k = 0; k < n; k++) {
		struct rte_tel_data *s = rte_tel_data_alloc();

		if (s == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(s);
		add_step(s, rt, &inject_recs[k], inject_recs[0].tsc);
		snprintf(key, sizeof(key), "%u", k);
		if (rte_tel_data_add_dict_container(d, key, s, 0) != 0)
			rte_tel_data_free(s);
	}
	return 0;
}

const struct pf_cmd pf_trace_cmds[] = {
	{ "/pipefwd/trace", "pipefwd: trace the next N packets. Params: N[,STAGE]", cmd_trace,
	  false },
	{ "/pipefwd/trace_show", "pipefwd: the trace; with K, packet K's path", cmd_trace_show,
	  false },
	{ "/pipefwd/trace_clear", "pipefwd: stop tracing, forget the records", cmd_trace_clear,
	  true },
	{ "/pipefwd/trace_inject", "pipefwd: a frame through the stages, dry. PORT,HEX",
	  cmd_trace_inject, false },
	{ NULL, NULL, NULL, false },
};

void
pf_trace_stop(struct pf_runtime *rt)
{
	pf_trace_free(rt);
}
