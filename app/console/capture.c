/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live capture: the next N packets of an edge or a port into a pcapng file.
 *
 *   /pipefwd/capture,TARGET,COUNT[,overwrite][,snaplen=N],FILE
 *
 * FILE lies beneath the capture directory (capture_file.c).
 *   /pipefwd/capture_status     state, target, wanted, captured, dropped, file
 *   /pipefwd/capture_stop       finish early: the file keeps what was written
 *
 * Where packets are copied, so that "crossing" means exactly that:
 *   edge a->b   the lcore running b copies each burst it dequeues from the
 *               ring a->b (every packet a enqueued, none that a dropped as
 *               ring_full; a copy taken before the enqueue could not know
 *               which ones the ring takes, and one taken after it would race
 *               with b, which may already be changing the packet);
 *   port rx     every source stage reading the port copies what it received
 *               from it, before parsing (malformed frames included);
 *   port tx     every tx stage sending on the port copies, from the rings
 *               that feed it, the packets it will send there (a packet the
 *               queue then refuses is counted by tx as tx_full).
 *
 * One capture runs at a time. Arming stores tap pointers in the rings and
 * stages (runtime.c tests them once per burst); lcores copy the selected
 * packets with rte_pktmbuf_copy into a private mempool (never the forwarding
 * pool, so forwarding and its counters are untouched) and enqueue the copies
 * on an MP/SC ring. A writer thread, alive only while the capture runs,
 * formats them with rte_pcapng_copy and writes them with
 * rte_pcapng_write_packets. A packet the capture claimed but could not copy
 * (capture pool empty, writer ring full) is counted as dropped, so at the
 * end captured + dropped = wanted. Once that holds (or on stop, shutdown or
 * a write error) the writer clears the taps, waits for a quiescent pass of
 * every lcore (no lcore still copies), writes what is left plus an
 * interface statistics block and closes the file.
 *
 * The file: the section header names pipefwd, the target, the stages and
 * the interface-to-port map in its comment; one interface per DPDK port
 * (rte_pcapng); a port's packets are on its interface (direction in/out), an
 * edge's packets on the interface of the port they came in on (direction
 * unknown); a closing statistics block repeats the result in its comment.
 */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "pf_console.h"
#include "pf_log.h"
#include "pf_meta.h"
#include "pf_watch.h"

const char *const cap_state_names[] = { "idle", "running", "done", "stopped", "failed" };
struct cap_slot cap = { .lock = PTHREAD_MUTEX_INITIALIZER };
static bool cap_pdump;

/* ---- arming ------------------------------------------------------------- */

struct cap_request {
	char target[CAP_STR];
	uint64_t count;
	bool overwrite;
	uint32_t snaplen;
	const char *path;
};

static int
cap_fail(struct cap_slot *s, const char *fmt, ...) __rte_format_printf(2, 3);

static int
cap_fail(struct cap_slot *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* TARGET,COUNT[,overwrite][,snaplen=N],/PATH: the path is the rest, commas and all. */
static int
cap_parse(struct cap_slot *s, char *params, struct cap_request *req, uint32_t snap_max)
{
	char *f, *end, *rest = params;
	unsigned long long v;

	f = strsep(&rest, ",");
	if (f == NULL || *f == '\0' || rest == NULL)
		return cap_fail(s, "usage: /pipefwd/capture,TARGET,COUNT[,overwrite]"
				   "[,snaplen=N],FILE (beneath the capture directory)");
	if (strlen(f) >= sizeof(req->target))
		return cap_fail(s, "target name too long");
	snprintf(req->target, sizeof(req->target), "%s", f);
	f = strsep(&rest, ",");
	errno = 0;
	v = strtoull(f, &end, 10);
	if (*f < '0' || *f > '9' || *end != '\0' || errno != 0 || v == 0 || v > CAP_MAX_COUNT)
		return cap_fail(s, "count '%.40s': want a number of packets, 1..%llu", f,
				CAP_MAX_COUNT);
	req->count = v;
	req->snaplen = snap_max;
	/* Options until the path: the last field (commas and all) or one with a '/'. */
	while (rest != NULL && *rest != '/' && strchr(rest, ',') != NULL &&
	       (strncmp(rest, "overwrite,", 10) == 0 || strncmp(rest, "snaplen=", 8) == 0)) {
		f = strsep(&rest, ",");
		if (strcmp(f, "overwrite") == 0) {
			req->overwrite = true;
		} else {
			errno = 0;
			v = strtoull(f + 8, &end, 10);
			if (f[8] < '0' || f[8] > '9' || *end != '\0' || errno != 0 || v < 14 ||
			    v > snap_max)
				return cap_fail(s, "snaplen: want 14..%u bytes", snap_max);
			req->snaplen = (uint32_t)v;
		}
	}
	if (rest == NULL || *rest == '\0')
		return cap_fail(s, "missing the file: a path in the capture directory");
	req->path = rest;
	return 0;
}

static bool
name_or_key(const char *name, const char *want)
{
	char key[2 * PF_NAME_MAX + 8];
	size_t i;

	if (strcmp(name, want) == 0)
		return true;
	for (i = 0; name[i] != '\0' && i + 1 < sizeof(key); i++)
		key[i] = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
				 (name[i] >= '0' && name[i] <= '9') ? name[i] : '_';
	key[i] = '\0';
	return strcmp(key, want) == 0;
}

static bool
has_port(const uint16_t *ports, uint16_t n, uint16_t p, uint16_t *at)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		if (ports[i] == p) {
			*at = i;
			return true;
		}
	return false;
}

/* Append @p name to the comma-separated list in @p buf unless it is there. */
static size_t
add_name(char *buf, size_t len, size_t used, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = buf; (p = strstr(p, name)) != NULL; p += n)
		if ((p == buf || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return used;
	if (used < len)
		used += snprintf(buf + used, len - used, "%s%s", used ? "," : "", name);
	return RTE_MIN(used, len);
}

/*
 * "drop", "drop:REASON" or "drop:STAGE:REASON": a drop tap in every stage
 * that has the reason (a DROP counter of that name, or the runtime's own
 * ring_full and no_edge). Returns the number of taps, or -EINVAL.
 */
static int
cap_resolve_drop(struct cap_slot *s, const struct pf_runtime *rt, const struct cap_request *req,
		 char *what, size_t what_len, char *stages, size_t stages_len)
{
	char want[CAP_STR], *reason = NULL, *stage = NULL;
	size_t sl = 0;
	uint16_t i, k, r;
	int taps = 0;

	snprintf(want, sizeof(want), "%s", req->target);
	if (want[4] == ':') {
		reason = want + 5;
		if (strchr(reason, ':') != NULL) {
			stage = reason;
			reason = strchr(reason, ':') + 1;
			reason[-1] = '\0';
		}
	}
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage *st = rt->stages[i];

		if (stage != NULL && strcmp(st->conf->name, stage) != 0 &&
		    strcmp(st->conf->group, stage) != 0)
			continue;
		r = PF_REASON_NONE;
		if (reason != NULL) {
			if (strcmp(reason, "ring_full") == 0)
				r = PF_REASON_RING_FULL;
			else if (strcmp(reason, "no_edge") == 0)
				r = PF_REASON_NO_EDGE;
			for (k = 0; k < st->ops->n_ctrs && r == PF_REASON_NONE; k++)
				if (st->ops->ctrs[k].kind == PF_CTR_DROP &&
				    strcmp(st->ops->ctrs[k].name, reason) == 0)
					r = k;
			if (r == PF_REASON_NONE)
				continue;
		}
		s->taps.drop[i] = (struct pf_cap_tap){ .sink = &s->sink, .mode = PF_TAP_DROP, .reason = r };
		/* The runtime's own reasons need no per-packet processing. */
		s->taps.drop_watch[i] = r != PF_REASON_RING_FULL && r != PF_REASON_NO_EDGE;
		sl = add_name(stages, stages_len, sl, st->conf->name);
		taps++;
	}
	if (taps == 0)
		return cap_fail(s, "target '%.40s': no stage drops for that reason (a drop "
				   "counter name, ring_full or no_edge; stats list them)",
				req->target);
	snprintf(what, what_len, "dropped packets (%s%s%s), copied before they are freed, "
		 "the reason (stage:counter) in each packet's comment", stage != NULL ? stage : "",
		 stage != NULL ? ":" : "", reason != NULL ? reason : "every reason");
	s->isb_port = rt->port_run[0].port_id;
	return taps;
}

/*
 * Fill the taps for @p req->target (not published yet). Returns the number
 * of taps, or -EINVAL with the error set.
 */
static int
cap_resolve(struct cap_slot *s, const struct pf_runtime *rt, const struct cap_request *req,
	    char *what, size_t what_len, char *stages, size_t stages_len)
{
	const struct pf_topo *t = rt->topo;
	char want[CAP_STR], edge_key[2 * PF_NAME_MAX + 8], edges[CAP_STR], rxs[64], txs[64];
	const char *dir = NULL;
	size_t sl = 0, el, rl = 0, tl = 0;
	uint16_t i, j, e, at, port = PF_MAX_PORTS, first_ring = 0;
	int taps = 0;
	bool rx, tx;

	memset(s->taps.stage, 0, sizeof(s->taps.stage));
	memset(s->taps.ring, 0, sizeof(s->taps.ring));
	memset(s->taps.drop, 0, sizeof(s->taps.drop));
	memset(s->taps.drop_watch, 0, sizeof(s->taps.drop_watch));
	stages[0] = '\0';
	if (strcmp(req->target, "drop") == 0 || strncmp(req->target, "drop:", 5) == 0)
		return cap_resolve_drop(s, rt, req, what, what_len, stages, stages_len);
	/* An edge: the ring's name "a->b" or its telemetry key "a_to_b"; with
	 * instances, "a->b" of the YAML names means every ring a.i->b.j. */
	for (i = 0; i < rt->n_rings; i++) {
		const struct pf_ring_conf *rc = rt->rings[i].conf;
		const struct pf_stage_conf *from = &t->stages[rc->from], *to = &t->stages[rc->to];
		char group_name[2 * PF_NAME_MAX + 8];

		snprintf(edge_key, sizeof(edge_key), "%s_to_%s", from->name, to->name);
		snprintf(group_name, sizeof(group_name), "%s->%s", from->group, to->group);
		if (strcmp(rc->name, req->target) != 0 && !name_or_key(edge_key, req->target) &&
		    !name_or_key(group_name, req->target))
			continue;
		s->taps.ring[i] = (struct pf_cap_tap){ .sink = &s->sink, .mode = PF_TAP_EDGE };
		sl = add_name(stages, stages_len, sl, to->name);
		if (taps++ != 0)
			continue;
		el = 0;
		edges[0] = '\0';
		for (e = 1; e < from->ops->n_edges && e < PF_MAX_EDGES; e++)
			if (from->next[e] == to->first)
				el = add_name(edges, sizeof(edges), el, from->ops->edge_names[e]);
		first_ring = i;
	}
	if (taps > 0) {
		const struct pf_ring_conf *rc = rt->rings[first_ring].conf;

		snprintf(what, what_len, "edge %s: the packets stage %s sends on its edge %s to "
			 "stage %s, copied as %s dequeue%s them",
			 taps == 1 ? rc->name : req->target,
			 taps == 1 ? t->stages[rc->from].name : t->stages[rc->from].group, edges,
			 taps == 1 ? t->stages[rc->to].name : t->stages[rc->to].group, stages,
			 taps == 1 ? "s" : "");
	}
	if (taps > 0)
		return taps;
	/* A port: NAME, NAME:rx or NAME:tx. */
	snprintf(want, sizeof(want), "%s", req->target);
	rx = tx = true;
	if (strchr(want, ':') != NULL) {
		dir = strchr(want, ':') + 1;
		*strchr(want, ':') = '\0';
		rx = strcmp(dir, "rx") == 0;
		tx = strcmp(dir, "tx") == 0;
		if (!rx && !tx)
			return cap_fail(s, "target '%.40s': a port direction is :rx or :tx",
					req->target);
	}
	for (i = 0; i < t->n_ports; i++)
		if (name_or_key(t->ports[i].name, want))
			port = i;
	if (port == PF_MAX_PORTS)
		return cap_fail(s, "unknown target '%.40s': name an edge (a->b or a_to_b) or a "
				   "port (NAME, NAME:rx, NAME:tx)", req->target);
	rxs[0] = txs[0] = '\0';
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage_conf *sc = &t->stages[i];

		if (rx && sc->ops->dp.rx != NULL &&
		    has_port(sc->rx_ports, sc->n_rx_ports, port, &at)) {
			s->taps.stage[i] = (struct pf_cap_tap){ .sink = &s->sink, .mode = PF_TAP_RX,
							       .port = port,
							       .queue = sc->rx_queue };
			sl = add_name(stages, stages_len, sl, sc->name);
			rl = add_name(rxs, sizeof(rxs), rl, sc->name);
			taps++;
		}
		if (tx && sc->ops->dp.tx != NULL &&
		    has_port(sc->tx_ports, sc->n_tx_ports, port, &at)) {
			for (j = 0; j < rt->n_rings; j++) {
				if (rt->rings[j].conf->to != i)
					continue;
				s->taps.ring[j] = (struct pf_cap_tap){ .sink = &s->sink, .mode = PF_TAP_TX,
								      .port = port,
								      .queue = sc->tx_queue[at] };
				taps++;
			}
			sl = add_name(stages, stages_len, sl, sc->name);
			tl = add_name(txs, sizeof(txs), tl, sc->name);
		}
	}
	if (taps == 0)
		return cap_fail(s, "port %s: no stage %s it", t->ports[port].name,
				rx && tx ? "receives from or sends to" : rx ? "receives from" :
									 "sends to");
	snprintf(what, what_len, "port %s%s%s: the packets%s%s%s%s%s%s", t->ports[port].name,
		 dir != NULL ? ":" : "", dir != NULL ? dir : "",
		 rl ? " received on it by " : "", rxs, rl && tl ? " and" : "",
		 tl ? " sent to it by " : "", txs,
		 tl ? " (copied as they leave the rings into the tx stage)" : "");
	s->isb_port = rt->port_run[port].port_id;
	return taps;
}

static int
cap_alloc(struct cap_slot *s, const struct pf_runtime *rt, uint32_t snap_max)
{
	if (s->sink.q == NULL)
		s->sink.q = rte_ring_create("pf_cap_q", CAP_Q_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (s->sink.mp == NULL)
		s->sink.mp = rte_pktmbuf_pool_create("pf_cap_copies", CAP_POOL_SIZE, 0,
						RTE_ALIGN(sizeof(struct pf_tap_priv),
							  RTE_MBUF_PRIV_ALIGN),
						rt->topo->mbuf_data_size, SOCKET_ID_ANY);
	if (s->fmt_mp == NULL)
		s->fmt_mp = rte_pktmbuf_pool_create("pf_cap_fmt", CAP_FMT_POOL_SIZE, 0, 0,
						    rte_pcapng_mbuf_size(snap_max) +
						    CAP_COMMENT_ROOM, SOCKET_ID_ANY);
	if (s->sink.q == NULL || s->sink.mp == NULL || s->fmt_mp == NULL)
		return cap_fail(s, "no memory for the capture buffers: %s",
				rte_strerror(rte_errno));
	return 0;
}

/* The section header comment: what, who, and which interface is which port. */
static void
cap_comment(struct cap_slot *s, const struct pf_runtime *rt, const struct cap_request *req,
	    const char *what)
{
	const struct pf_topo *t = rt->topo;
	size_t len;
	uint16_t pid, idx = 0, p;

	len = snprintf(s->comment, sizeof(s->comment),
		       "pipefwd capture of %s, next %" PRIu64 " packets; %s; topology %s, pid %d;"
		       " interfaces:", req->target, req->count, what, t->file, (int)getpid());
	/* rte_pcapng numbers interfaces in RTE_ETH_FOREACH_DEV order. */
	RTE_ETH_FOREACH_DEV(pid) {
		const char *name = "(not a pipefwd port)";

		for (p = 0; p < t->n_ports; p++)
			if (rt->port_run[p].port_id == pid)
				name = t->ports[p].name;
		if (len < sizeof(s->comment))
			len += snprintf(s->comment + len, sizeof(s->comment) - len,
					" %u=%s", idx, name);
		idx++;
	}
}

static int
cap_arm(struct pf_runtime *rt, const char *params)
{
	struct cap_slot *s = &cap;
	struct cap_request req = { 0 };
	char buf[1024], what[512], os[192], app[128], stages[CAP_STR], file[PATH_MAX];
	struct utsname un;
	rte_pcapng_t *png;
	uint32_t snap_max = RTE_MIN((uint32_t)rt->topo->mbuf_data_size - RTE_PKTMBUF_HEADROOM,
				    UINT16_MAX - 512u);
	bool created;
	int fd, taps;
	uint16_t i;

	s->error[0] = '\0';
	if (params == NULL || strlen(params) >= sizeof(buf))
		return cap_fail(s, "usage: /pipefwd/capture,TARGET,COUNT[,overwrite]"
				   "[,snaplen=N],FILE (beneath the capture directory)");
	snprintf(buf, sizeof(buf), "%s", params);
	if (cap_parse(s, buf, &req, snap_max) < 0)
		return -EINVAL;
	taps = cap_resolve(s, rt, &req, what, sizeof(what), stages, sizeof(stages));
	if (taps < 0)
		return taps;
	if (cap_alloc(s, rt, snap_max) < 0)
		return -ENOMEM;
	fd = cap_file_open(req.path, req.overwrite, &created, s->error, sizeof(s->error));
	if (fd < 0)
		return fd;
	if (req.path[0] == '/')
		snprintf(file, sizeof(file), "%s", req.path);
	else
		snprintf(file, sizeof(file), "%s/%s", cap_dir(), req.path);
	cap_comment(s, rt, &req, what);
	if (uname(&un) == 0)
		snprintf(os, sizeof(os), "%s %s", un.sysname, un.release);
	else
		snprintf(os, sizeof(os), "Linux");
	snprintf(app, sizeof(app), "pipefwd (%s)", rte_version());
	/* 22.11's rte_pcapng_fdopen leaves a failed write()'s reason in errno, not rte_errno. */
	errno = 0;
	rte_errno = 0;
	png = rte_pcapng_fdopen(fd, os, NULL, app, s->comment);
	if (png == NULL) {
		int e = errno != 0 ? errno : rte_errno;

		close(fd);
		if (created)
			unlink(file);
		return cap_fail(s, "cannot start the pcapng file: %s",
				e != 0 ? strerror(e) : "the pcapng library gave no reason");
	}
	/* Only a capture that starts replaces the one the status shows. */
	s->png = png;
	snprintf(s->target, sizeof(s->target), "%s", req.target);
	snprintf(s->stages, sizeof(s->stages), "%s", stages);
	snprintf(s->file, sizeof(s->file), "%s", file);
	s->sink.wanted = req.count;
	s->sink.snaplen = req.snaplen;
	s->sink.n_ports = rt->topo->n_ports;
	for (i = 0; i < rt->topo->n_ports; i++)
		s->sink.port_id[i] = rt->port_run[i].port_id;
	if (strncmp(what, "edge", 4) == 0)
		s->isb_port = s->sink.port_id[0];
	s->sink.claimed = 0;
	s->sink.dropped = 0;
	s->written = 0;
	s->lost = 0;
	s->stop = 0;
	s->write_failed = false;
	s->start_ns = cap_wall_ns();
	s->start_tsc = rte_rdtsc();
	s->end_tsc = 0;
	s->id++;
	s->state = CAP_RUNNING;
	if (rte_ctrl_thread_create(&s->writer, "pf-capture", NULL, cap_writer, rt) != 0) {
		rte_pcapng_close(s->png);
		s->png = NULL;
		s->state = CAP_FAILED;
		return cap_fail(s, "cannot start the writer thread");
	}
	s->joinable = true;
	/* Publish last: an lcore that sees a tap sees it complete. */
	pf_tap_arm(rt, &s->taps);
	PF_LOG(INFO, "capture %" PRIu64 ": next %" PRIu64 " packets of %s into %s (%d tap%s)",
	       s->id, s->sink.wanted, s->target, s->file, taps, taps == 1 ? "" : "s");
	return 0;
}

/* ---- telemetry ---------------------------------------------------------- */

static void
add_str(struct rte_tel_data *d, const char *key, const char *v)
{
	size_t len = strlen(v);
	char buf[CAP_STR];

	/* Telemetry strings hold 127 bytes: keep the end of a long path. */
	if (len >= CAP_STR)
		snprintf(buf, sizeof(buf), "...%s", v + len - (CAP_STR - 4));
	else
		snprintf(buf, sizeof(buf), "%s", v);
	rte_tel_data_add_dict_string(d, key, buf);
}

static void
cap_status(const struct cap_slot *s, struct rte_tel_data *d)
{
	uint64_t dropped = __atomic_load_n(&s->sink.dropped, __ATOMIC_RELAXED) + s->lost;
	uint64_t end = s->state == CAP_RUNNING || s->end_tsc == 0 ? rte_rdtsc() : s->end_tsc;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", s->id);
	rte_tel_data_add_dict_string(d, "state", cap_state_names[s->state]);
	if (s->error[0] != '\0')
		add_str(d, "error", s->error);
	if (s->id == 0)
		return;
	add_str(d, "target", s->target);
	add_str(d, "stages", s->stages);
	add_str(d, "file", s->file);
	rte_tel_data_add_dict_u64(d, "wanted", s->sink.wanted);
	rte_tel_data_add_dict_u64(d, "captured", __atomic_load_n(&s->written, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "dropped", RTE_MIN(dropped, s->sink.wanted));
	rte_tel_data_add_dict_u64(d, "snaplen", s->sink.snaplen);
	rte_tel_data_add_dict_u64(d, "elapsed_ms",
				  (end - s->start_tsc) * 1000 / rte_get_tsc_hz());
}

/* The names a capture accepts, for a client that named none of them. */
static void
add_targets(const struct pf_runtime *rt, struct rte_tel_data *d)
{
	struct rte_tel_data *e = rte_tel_data_alloc(), *p = rte_tel_data_alloc();
	uint16_t i;

	if (e == NULL || p == NULL) {
		rte_tel_data_free(e);
		rte_tel_data_free(p);
		return;
	}
	rte_tel_data_start_array(e, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(p, RTE_TEL_STRING_VAL);
	for (i = 0; i < rt->n_rings; i++)
		rte_tel_data_add_array_string(e, rt->rings[i].conf->name);
	for (i = 0; i < rt->topo->n_ports; i++)
		if (pf_port_present(&rt->topo->ports[i]))
			rte_tel_data_add_array_string(p, rt->topo->ports[i].name);
	rte_tel_data_add_dict_container(d, "edges", e, 0);
	rte_tel_data_add_dict_container(d, "ports", p, 0);
}

/* Status and arming read what the writer's end of a capture writes: its lock. */
static int
cmd_capture(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct cap_slot *s = &cap;

	pthread_mutex_lock(&s->lock);
	if (s->state == CAP_RUNNING) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "error", "a capture is running: wait for "
					     "it or /pipefwd/capture_stop");
		rte_tel_data_add_dict_u64(d, "running_id", s->id);
		goto out;
	}
	pthread_mutex_unlock(&s->lock);
	if (s->joinable) {
		pthread_join(s->writer, NULL);
		s->joinable = false;
	}
	pthread_mutex_lock(&s->lock);
	if (cap_arm(con->rt, params) < 0) {
		rte_tel_data_start_dict(d);
		add_str(d, "error", s->error);
		if (strncmp(s->error, "unknown target", 14) == 0)
			add_targets(con->rt, d);
		s->error[0] = '\0';
		goto out;
	}
	cap_status(s, d);
out:
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int
cmd_capture_status(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	pthread_mutex_lock(&cap.lock);
	cap_status(&cap, d);
	pthread_mutex_unlock(&cap.lock);
	return 0;
}

static int
cmd_capture_stop(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	pthread_mutex_lock(&cap.lock);
	if (cap.state == CAP_RUNNING)
		__atomic_store_n(&cap.stop, 1, __ATOMIC_RELEASE);
	cap_status(&cap, d);
	pthread_mutex_unlock(&cap.lock);
	return 0;
}

const struct pf_cmd pf_capture_cmds[] = {
	{ "/pipefwd/capture", "pipefwd: copy the next N packets of an edge or port into a pcapng "
	  "file. Params: TARGET,COUNT[,overwrite][,snaplen=N],/PATH", cmd_capture, false },
	{ "/pipefwd/capture_status", "pipefwd: the current or last capture", cmd_capture_status,
	  true },
	{ "/pipefwd/capture_stop", "pipefwd: finish the running capture now", cmd_capture_stop,
	  true },
	{ NULL, NULL, NULL, false },
};

void
pf_capture_start(const char *dir)
{
	int rc;

	cap_dir_set(dir);
	if (!cap_pdump) {
		/* dpdk-dumpcap attaches as a secondary process: needs hugepages. */
		rc = rte_pdump_init();
		if (rc < 0)
			PF_LOG(WARNING, "capture: rte_pdump_init failed (%s): dpdk-dumpcap will "
			       "not work", rte_strerror(rte_errno));
		cap_pdump = rc == 0;
	}
}

void
pf_capture_stop(void)
{
	struct cap_slot *s = &cap;

	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	if (s->joinable) {
		pthread_join(s->writer, NULL);
		s->joinable = false;
	}
	rte_ring_free(s->sink.q);
	rte_mempool_free(s->sink.mp);
	rte_mempool_free(s->fmt_mp);
	s->sink.q = NULL;
	s->sink.mp = NULL;
	s->fmt_mp = NULL;
	if (cap_pdump) {
		rte_pdump_uninit();
		cap_pdump = false;
	}
}
