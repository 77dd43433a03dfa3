/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live capture: the next N packets of an edge or a port into a pcapng file.
 *
 *   /pipefwd/capture,TARGET,COUNT[,overwrite][,snaplen=N],FILE
 *
 * FILE lies beneath the capture directory (pipefwd --capture-dir, default
 * the DPDK runtime directory's captures/): relative to it, or absolute
 * inside it. It is opened without leaving the directory and without
 * following symlinks (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS),
 * without blocking (a FIFO is refused), and never replaces a file that is
 * not a capture pipefwd wrote.
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
/* rte_pcapng is experimental in DPDK 22.11 (stable from 23.11 on). */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/openat2.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "pf_capture.h"
#include "pf_log.h"
#include "pf_meta.h"
#include "pf_telemetry.h"
#include "pf_trace.h"

#define CAP_Q_SIZE 4096                      /* copies waiting for the writer */
#define CAP_POOL_SIZE (CAP_Q_SIZE + 1023)     /* + copies being made on lcores */
#define CAP_WRITE_BURST 64
#define CAP_FMT_POOL_SIZE (2 * CAP_WRITE_BURST)
#define CAP_MAX_COUNT 1000000000ull
#define CAP_IDLE_US 200                      /* writer poll period when idle */
#define CAP_STR 128                          /* RTE_TEL_MAX_STRING_LEN */
#define CAP_COMMENT_ROOM 128                 /* a drop's EPB comment option, padded */

enum cap_mode { CAP_EDGE, CAP_RX, CAP_TX, CAP_DROP };
enum cap_state { CAP_IDLE, CAP_RUNNING, CAP_DONE, CAP_STOPPED, CAP_FAILED };
static const char *const cap_state_names[] = { "idle", "running", "done", "stopped", "failed" };

struct cap_slot;

/* One per tapped ring or stage; constant while published. */
struct pf_cap_tap {
	struct cap_slot *slot;
	uint8_t mode;                        /* enum cap_mode */
	uint16_t port;                       /* pipefwd port index (CAP_RX, CAP_TX) */
	uint16_t queue;                      /* recorded in each packet block */
	uint16_t reason;                     /* CAP_DROP: the reason wanted, or any */
};

/* Stored by the copying lcore in each copy's private area. */
struct cap_priv {
	uint64_t tsc;
	uint32_t orig_len;
	uint16_t port_id;                    /* DPDK port: the pcapng interface */
	uint16_t queue;
	uint8_t dir;                         /* enum rte_pcapng_direction */
	uint16_t stage;                      /* a drop: the stage and its reason */
	uint16_t reason;                     /* PF_REASON_NONE: not a drop */
};

/* The head of a pcapng Enhanced Packet Block (pcapng spec, section 4.3). */
struct cap_epb_head {
	uint32_t block_type;
	uint32_t block_length;
	uint32_t interface_id;
	uint32_t timestamp_hi;
	uint32_t timestamp_lo;
	uint32_t capture_length;
	uint32_t original_length;
};

struct cap_slot {
	/* read by the lcores while a capture is armed */
	struct rte_ring *q;
	struct rte_mempool *mp;
	uint32_t snaplen;
	uint64_t wanted;
	uint16_t port_id[PF_MAX_PORTS];
	uint16_t n_ports;
	/* claimed by the lcores: may pass wanted, the excess is ignored */
	uint64_t claimed __rte_cache_aligned;
	uint64_t dropped;                    /* claimed but not copied */
	/* the writer thread */
	uint64_t written __rte_cache_aligned;
	uint64_t lost;                       /* copies the writer could not write */
	int stop;
	bool write_failed;
	int write_errno;
	struct rte_mempool *fmt_mp;
	rte_pcapng_t *png;
	pthread_t writer;
	bool joinable;
	/* taps; the runtime points at them */
	struct pf_cap_tap stage_tap[PF_MAX_STAGES];
	struct pf_cap_tap ring_tap[PF_MAX_RINGS];
	struct pf_cap_tap drop_tap[PF_MAX_STAGES];
	bool drop_watch[PF_MAX_STAGES];      /* the tap needs the stage's drop reasons */
	/* status (cap_lock) */
	uint64_t id;
	enum cap_state state;
	char target[CAP_STR];
	char stages[CAP_STR];
	char file[PATH_MAX];
	char error[CAP_STR];
	char comment[2048];
	uint16_t isb_port;                   /* DPDK port of the closing statistics */
	uint64_t start_ns, end_ns;           /* wall clock */
	uint64_t start_tsc, end_tsc;
};

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pf_runtime *cap_rt;            /* NULL: commands refuse */
static struct cap_slot cap;
static bool cap_registered, cap_pdump;

/* ---- data path ---------------------------------------------------------- */

static __rte_always_inline bool
cap_selects(const struct pf_cap_tap *tap, struct rte_mbuf *m)
{
	const struct pf_meta *md = pf_meta(m);

	switch (tap->mode) {
	case CAP_RX:
		return md->in_port == tap->port;
	case CAP_TX:
		return md->out_port == PF_PORT_FLOOD ? (md->flood_mask >> tap->port) & 1 :
						       md->out_port == tap->port;
	default:
		return true;
	}
}

void
pf_capture_burst(struct pf_cap_tap **where, struct rte_mbuf **pkts, uint16_t n)
{
	struct pf_cap_tap *tap = __atomic_load_n(where, __ATOMIC_ACQUIRE);
	struct rte_mbuf *sel[PF_BURST_MAX], *cp[PF_BURST_MAX];
	struct cap_slot *s;
	uint64_t old, tsc;
	uint16_t i, k = 0, c = 0, port;
	unsigned int q;

	if (tap == NULL)
		return;
	s = tap->slot;
	for (i = 0; i < n && k < RTE_DIM(sel); i++)
		if (cap_selects(tap, pkts[i]))
			sel[k++] = pkts[i];
	if (k == 0)
		return;
	/* Several lcores may feed one capture (a port read by two rx stages):
	 * each claims its share of what is still wanted. */
	old = __atomic_fetch_add(&s->claimed, k, __ATOMIC_RELAXED);
	if (old >= s->wanted)
		return;
	k = (uint16_t)RTE_MIN((uint64_t)k, s->wanted - old);
	tsc = rte_rdtsc();
	for (i = 0; i < k; i++) {
		struct rte_mbuf *m = rte_pktmbuf_copy(sel[i], s->mp, 0, s->snaplen);
		struct cap_priv *p;

		if (m == NULL)
			continue;
		p = rte_mbuf_to_priv(m);
		port = tap->mode == CAP_EDGE ? pf_meta(sel[i])->in_port : tap->port;
		p->tsc = tsc;
		p->orig_len = rte_pktmbuf_pkt_len(sel[i]);
		p->port_id = s->port_id[port < s->n_ports ? port : 0];
		p->queue = tap->queue;
		p->dir = tap->mode == CAP_RX ? RTE_PCAPNG_DIRECTION_IN :
			 tap->mode == CAP_TX ? RTE_PCAPNG_DIRECTION_OUT :
					       RTE_PCAPNG_DIRECTION_UNKNOWN;
		p->reason = PF_REASON_NONE;
		cp[c++] = m;
	}
	q = rte_ring_enqueue_burst(s->q, (void **)cp, c, NULL);
	if (q < c)
		rte_pktmbuf_free_bulk(cp + q, c - q);
	if (q < k)
		__atomic_fetch_add(&s->dropped, k - q, __ATOMIC_RELAXED);
}

void
pf_capture_drop(struct pf_cap_tap *tap, struct rte_mbuf *m, uint16_t stage, uint16_t reason)
{
	struct cap_slot *s = tap->slot;
	struct rte_mbuf *c;
	struct cap_priv *p;

	if (tap->reason != PF_REASON_NONE && tap->reason != reason)
		return;
	if (__atomic_fetch_add(&s->claimed, 1, __ATOMIC_RELAXED) >= s->wanted)
		return;
	c = rte_pktmbuf_copy(m, s->mp, 0, s->snaplen);
	if (c != NULL) {
		p = rte_mbuf_to_priv(c);
		p->tsc = rte_rdtsc();
		p->orig_len = rte_pktmbuf_pkt_len(m);
		p->port_id = s->port_id[pf_meta(m)->in_port < s->n_ports ? pf_meta(m)->in_port : 0];
		p->queue = 0;
		p->dir = RTE_PCAPNG_DIRECTION_UNKNOWN;
		p->stage = stage;
		p->reason = reason;
		if (rte_ring_enqueue(s->q, c) == 0)
			return;
		rte_pktmbuf_free(c);
	}
	__atomic_fetch_add(&s->dropped, 1, __ATOMIC_RELAXED);
}

/* ---- writer ------------------------------------------------------------- */

static uint64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Wall-clock ns of a TSC stamp, from the pair taken when the capture was
 * armed (every stamp is later). rte_pcapng_copy's own conversion in 22.11
 * starts its clock at its first call, in the writer, after the lcores
 * stamped the first copies: their deltas would underflow.
 */
static uint64_t
cap_tsc_to_ns(const struct cap_slot *s, uint64_t tsc)
{
	uint64_t hz = rte_get_tsc_hz(), d = tsc > s->start_tsc ? tsc - s->start_tsc : 0;

	return s->start_ns + d / hz * 1000000000ull + d % hz * 1000000000ull / hz;
}

/*
 * Give the packet block @p f the comment @p text (opt_comment): 22.11's
 * rte_pcapng_copy takes none. The comment goes where the options end, then
 * the end marker and the block length again.
 */
static void
cap_epb_comment(struct rte_mbuf *f, const char *text)
{
	struct cap_epb_head *epb = rte_pktmbuf_mtod(f, struct cap_epb_head *);
	uint32_t blen = epb->block_length, off, tlen = (uint32_t)strlen(text), len;
	uint16_t code, olen;
	uint8_t *b = (uint8_t *)epb;

	if (!rte_pktmbuf_is_contiguous(f) || blen != rte_pktmbuf_pkt_len(f))
		return;
	off = sizeof(*epb) + RTE_ALIGN(epb->capture_length, 4);
	while (off + 4 <= blen - 4) {
		memcpy(&code, b + off, 2);
		memcpy(&olen, b + off + 2, 2);
		if (code == 0)
			break;
		off += 4 + RTE_ALIGN(olen, 4);
	}
	len = off + 4 + RTE_ALIGN(tlen, 4) + 4 + 4;
	if (off > blen - 4 || (len > blen && rte_pktmbuf_append(f, len - blen) == NULL))
		return;
	code = 1;
	olen = (uint16_t)tlen;
	memcpy(b + off, &code, 2);
	memcpy(b + off + 2, &olen, 2);
	memset(b + off + 4, 0, RTE_ALIGN(tlen, 4) + 4);   /* padding, end marker */
	memcpy(b + off + 4, text, tlen);
	memcpy(b + len - 4, &len, 4);
	epb->block_length = len;
}

/* Format and write @p n copies; frees them. */
static void
cap_write(struct cap_slot *s, const struct pf_runtime *rt, struct rte_mbuf **in, unsigned int n)
{
	struct rte_mbuf *out[CAP_WRITE_BURST];
	unsigned int i, k = 0, in_use;
	ssize_t rc;
	int err;

	for (i = 0; i < n; i++) {
		const struct cap_priv *p = rte_mbuf_to_priv(in[i]);
		struct rte_mbuf *f = NULL;

		if (!s->write_failed)
			f = rte_pcapng_copy(p->port_id, p->queue, in[i], s->fmt_mp, UINT32_MAX,
					    p->tsc, p->dir);
		if (f != NULL) {
			struct cap_epb_head *epb = rte_pktmbuf_mtod(f, struct cap_epb_head *);
			uint64_t ns = cap_tsc_to_ns(s, p->tsc);

			/* Our own clock (see cap_tsc_to_ns), and a frame cut at
			 * snaplen keeps its real length. */
			epb->timestamp_hi = (uint32_t)(ns >> 32);
			epb->timestamp_lo = (uint32_t)ns;
			epb->original_length = p->orig_len;
			if (p->reason != PF_REASON_NONE && p->stage < rt->n_stages) {
				const struct pf_stage *st = rt->stages[p->stage];
				char why[CAP_COMMENT_ROOM - 8];

				/* A final newline, as scapy writes and reads them. */
				snprintf(why, sizeof(why), "%s:%s\n", st->conf->name,
					 pf_trace_reason_name(st, p->reason));
				cap_epb_comment(f, why);
			}
			out[k++] = f;
		} else {
			s->lost++;
		}
		rte_pktmbuf_free(in[i]);
	}
	if (k == 0)
		return;
	in_use = rte_mempool_in_use_count(s->fmt_mp);
	rc = rte_pcapng_write_packets(s->png, out, (uint16_t)k);
	err = errno;
	/* 22.11 leaves the mbufs to the caller (later releases free them, as
	 * its header says): free them only if they are still out. */
	if (rte_mempool_in_use_count(s->fmt_mp) == in_use)
		rte_pktmbuf_free_bulk(out, k);
	if (rc < 0) {
		s->write_errno = err;
		s->write_failed = true;
		s->lost += k;
		return;
	}
	__atomic_store_n(&s->written, s->written + k, __ATOMIC_RELAXED);
}

static void
cap_disarm(struct cap_slot *s, struct pf_runtime *rt)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		if (rt->rts[i].tap != NULL)
			__atomic_store_n(&rt->rts[i].tap, NULL, __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_rings; i++)
		if (rt->rings[i].tap != NULL)
			__atomic_store_n(&rt->rings[i].tap, NULL, __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_stages; i++) {
		__atomic_fetch_and(&rt->rts[i].watch, (uint8_t)~PF_WATCH_DROPS, __ATOMIC_RELEASE);
		if (rt->rts[i].drop_tap != NULL)
			__atomic_store_n(&rt->rts[i].drop_tap, NULL, __ATOMIC_RELEASE);
	}
}

static bool
cap_complete(const struct cap_slot *s)
{
	return s->written + s->lost + __atomic_load_n(&s->dropped, __ATOMIC_RELAXED) >= s->wanted;
}

static void *
cap_writer(void *arg)
{
	struct pf_runtime *rt = arg;
	struct cap_slot *s = &cap;
	struct rte_mbuf *in[CAP_WRITE_BURST];
	uint64_t dropped;
	unsigned int n;
	bool finishing = false;
	char isb[512];
	enum cap_state st;

	for (;;) {
		n = rte_ring_dequeue_burst(s->q, (void **)in, RTE_DIM(in), NULL);
		if (n != 0)
			cap_write(s, rt, in, n);
		if (finishing) {
			if (n == 0)
				break;
			continue;
		}
		/* Checked after every burst: the lcores may keep the ring full. */
		if (cap_complete(s) || s->write_failed ||
		    __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
			/* After a quiescent pass of every lcore none is copying:
			 * what is in the ring now is the rest. */
			cap_disarm(s, rt);
			pf_rcu_synchronize();
			finishing = true;
			continue;
		}
		if (n == 0)
			rte_delay_us_sleep(CAP_IDLE_US);
	}
	dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED) + s->lost;
	st = s->write_failed ? CAP_FAILED :
	     s->written + dropped >= s->wanted ? CAP_DONE : CAP_STOPPED;
	snprintf(isb, sizeof(isb), "pipefwd capture of %.127s: %s, wanted %" PRIu64 ", captured %"
		 PRIu64 ", dropped %" PRIu64, s->target, cap_state_names[st], s->wanted,
		 s->written, dropped);
	s->end_ns = wall_ns();
	if (!s->write_failed)
		rte_pcapng_write_stats(s->png, s->isb_port, isb, s->start_ns, s->end_ns, s->written,
				       dropped);
	rte_pcapng_close(s->png);   /* closes the file */
	s->png = NULL;
	pthread_mutex_lock(&cap_lock);
	s->end_tsc = rte_rdtsc();
	if (s->write_failed)
		snprintf(s->error, sizeof(s->error), "writing the file failed: %s",
			 strerror(s->write_errno));
	s->state = st;
	pthread_mutex_unlock(&cap_lock);
	PF_LOG(INFO, "capture %" PRIu64 " of %s %s: %" PRIu64 " packets written to %s, %" PRIu64
	       " dropped", s->id, s->target, cap_state_names[st], s->written, s->file, dropped);
	return NULL;
}

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
		s->drop_tap[i] = (struct pf_cap_tap){ .slot = s, .mode = CAP_DROP, .reason = r };
		/* The runtime's own reasons need no per-packet processing. */
		s->drop_watch[i] = r != PF_REASON_RING_FULL && r != PF_REASON_NO_EDGE;
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
	s->isb_port = rt->topo->ports[0].port_id;
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

	memset(s->stage_tap, 0, sizeof(s->stage_tap));
	memset(s->ring_tap, 0, sizeof(s->ring_tap));
	memset(s->drop_tap, 0, sizeof(s->drop_tap));
	memset(s->drop_watch, 0, sizeof(s->drop_watch));
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
		s->ring_tap[i] = (struct pf_cap_tap){ .slot = s, .mode = CAP_EDGE };
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

		if (rx && sc->ops->rx != NULL &&
		    has_port(sc->rx_ports, sc->n_rx_ports, port, &at)) {
			s->stage_tap[i] = (struct pf_cap_tap){ .slot = s, .mode = CAP_RX,
							       .port = port,
							       .queue = sc->rx_queue };
			sl = add_name(stages, stages_len, sl, sc->name);
			rl = add_name(rxs, sizeof(rxs), rl, sc->name);
			taps++;
		}
		if (tx && sc->ops->tx != NULL &&
		    has_port(sc->tx_ports, sc->n_tx_ports, port, &at)) {
			for (j = 0; j < rt->n_rings; j++) {
				if (rt->rings[j].conf->to != i)
					continue;
				s->ring_tap[j] = (struct pf_cap_tap){ .slot = s, .mode = CAP_TX,
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
	s->isb_port = t->ports[port].port_id;
	return taps;
}

/* ---- the capture directory ----------------------------------------------- */

static char cap_dir[PATH_MAX];               /* "": the default, made on first use */
static bool cap_dir_given;

void
pf_capture_set_dir(const char *dir)
{
	char real[PATH_MAX];

	cap_dir_given = dir != NULL;
	if (dir == NULL)
		cap_dir[0] = '\0';
	else   /* compare absolute paths against the resolved directory */
		snprintf(cap_dir, sizeof(cap_dir), "%s", realpath(dir, real) != NULL ? real : dir);
}

const char *
pf_capture_dir(void)
{
	if (!cap_dir_given && cap_dir[0] == '\0')
		snprintf(cap_dir, sizeof(cap_dir), "%s/captures", rte_eal_get_runtime_dir());
	return cap_dir;
}

/* Open @p rel beneath @p dfd: no "..", no symlink anywhere, never blocking. */
static int
cap_openat(int dfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? 0600 : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char buf[PATH_MAX], *p, *save = NULL, *next;
	int fd, cur;

	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* Kernels before 5.6: walk the components, none of them a symlink. */
	snprintf(buf, sizeof(buf), "%s", rel);
	cur = dup(dfd);
	for (p = strtok_r(buf, "/", &save); p != NULL && cur >= 0; p = next) {
		next = strtok_r(NULL, "/", &save);
		fd = openat(cur, p, next == NULL ? (int)how.flags :
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(cur);
		if (fd < 0)
			return -1;
		if (next == NULL)
			return fd;
		cur = fd;
	}
	if (cur >= 0)
		close(cur);
	errno = EINVAL;
	return -1;
}

/* A file pipefwd may overwrite: a regular file of ours holding a pipefwd pcapng. */
static bool
cap_ours(int fd)
{
	char head[1024];
	struct stat sb;
	ssize_t got;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
		return false;
	got = pread(fd, head, sizeof(head) - 1, 0);
	if (got < 28 || memcmp(head, "\x0a\x0d\x0d\x0a", 4) != 0)
		return false;   /* not a pcapng section header */
	head[got] = '\0';
	return memmem(head, (size_t)got, "pipefwd capture of ", 19) != NULL;
}

/*
 * Open @p path for writing, beneath the capture directory only: a relative
 * path, or an absolute one inside the directory; no "..", no symlink; a new
 * file, or with @p overwrite a pipefwd capture file. Never blocks (a FIFO is
 * refused). Returns the fd, or -errno with the error set.
 */
static int
cap_open(struct cap_slot *s, const char *path, bool overwrite, bool *created)
{
	const char *dir = pf_capture_dir(), *rel = path, *c;
	size_t dl = strlen(dir);
	int dfd, fd, err;

	*created = false;
	if (path[0] == '/') {
		if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
			return cap_fail(s, "%.40s is outside the capture directory %.60s", path,
					dir);
		rel = path + dl + 1;
	}
	while (*rel == '/')
		rel++;
	for (c = rel; c != NULL; c = strchr(c, '/') != NULL ? strchr(c, '/') + 1 : NULL)
		if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
			return cap_fail(s, "'..' is not allowed in a capture path");
	if (*rel == '\0' || rel[strlen(rel) - 1] == '/')
		return cap_fail(s, "the path names a directory, not a file");
	if (!cap_dir_given && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return cap_fail(s, "cannot make the capture directory %.60s: %s", dir,
				strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return cap_fail(s, "capture directory %.60s: %s", dir, strerror(errno));
	fd = cap_openat(dfd, rel, O_WRONLY | O_CREAT | O_EXCL);
	if (fd >= 0) {
		*created = true;
	} else if (errno == EEXIST && overwrite) {
		fd = cap_openat(dfd, rel, O_RDWR);
		if (fd >= 0 && !cap_ours(fd)) {
			close(fd);
			close(dfd);
			return cap_fail(s, "%.60s is not a capture file pipefwd wrote: not "
					   "overwritten", rel);
		}
		if (fd >= 0 && ftruncate(fd, 0) < 0) {
			close(fd);
			fd = -1;
		}
	}
	err = errno;
	close(dfd);
	if (fd < 0) {
		if (err == EEXIST)
			return cap_fail(s, "%.60s exists (add the option overwrite: pipefwd-ctl "
					   "capture --force)", rel);
		return cap_fail(s, "%.60s: %s", rel, err == ELOOP ? "a symlink is in the way" :
						     err == EXDEV ? "leaves the capture directory" :
						     err == ENXIO ? "is a FIFO or a device" :
						     strerror(err));
	}
	/* Writes may block on a slow disk, not on a FIFO: back to blocking mode. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Pools and the writer ring: made at the first capture, kept until shutdown. */
static int
cap_alloc(struct cap_slot *s, const struct pf_runtime *rt, uint32_t snap_max)
{
	if (s->q == NULL)
		s->q = rte_ring_create("pf_cap_q", CAP_Q_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (s->mp == NULL)
		s->mp = rte_pktmbuf_pool_create("pf_cap_copies", CAP_POOL_SIZE, 0,
						RTE_ALIGN(sizeof(struct cap_priv),
							  RTE_MBUF_PRIV_ALIGN),
						rt->topo->mbuf_data_size, SOCKET_ID_ANY);
	if (s->fmt_mp == NULL)
		s->fmt_mp = rte_pktmbuf_pool_create("pf_cap_fmt", CAP_FMT_POOL_SIZE, 0, 0,
						    rte_pcapng_mbuf_size(snap_max) +
						    CAP_COMMENT_ROOM, SOCKET_ID_ANY);
	if (s->q == NULL || s->mp == NULL || s->fmt_mp == NULL)
		return cap_fail(s, "no memory for the capture buffers: %s",
				rte_strerror(rte_errno));
	return 0;
}

/* The section header comment: what, who, and which interface is which port. */
static void
cap_comment(struct cap_slot *s, const struct pf_runtime *rt, const char *what)
{
	const struct pf_topo *t = rt->topo;
	size_t len;
	uint16_t pid, idx = 0, p;

	len = snprintf(s->comment, sizeof(s->comment),
		       "pipefwd capture of %s, next %" PRIu64 " packets; %s; topology %s, pid %d;"
		       " interfaces:", s->target, s->wanted, what, t->file, (int)getpid());
	/* rte_pcapng numbers interfaces in RTE_ETH_FOREACH_DEV order. */
	RTE_ETH_FOREACH_DEV(pid) {
		const char *name = "(not a pipefwd port)";

		for (p = 0; p < t->n_ports; p++)
			if (t->ports[p].port_id == pid)
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
	char buf[1024], what[512], os[192], app[128], stages[CAP_STR];
	struct utsname un;
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
	fd = cap_open(s, req.path, req.overwrite, &created);
	if (fd < 0)
		return fd;
	snprintf(s->target, sizeof(s->target), "%s", req.target);
	snprintf(s->stages, sizeof(s->stages), "%s", stages);
	if (req.path[0] == '/')
		snprintf(s->file, sizeof(s->file), "%s", req.path);
	else
		snprintf(s->file, sizeof(s->file), "%s/%s", pf_capture_dir(), req.path);
	s->wanted = req.count;
	s->snaplen = req.snaplen;
	s->n_ports = rt->topo->n_ports;
	for (i = 0; i < rt->topo->n_ports; i++)
		s->port_id[i] = rt->topo->ports[i].port_id;
	if (strncmp(what, "edge", 4) == 0)
		s->isb_port = s->port_id[0];
	cap_comment(s, rt, what);
	if (uname(&un) == 0)
		snprintf(os, sizeof(os), "%s %s", un.sysname, un.release);
	else
		snprintf(os, sizeof(os), "Linux");
	snprintf(app, sizeof(app), "pipefwd (%s)", rte_version());
	s->png = rte_pcapng_fdopen(fd, os, NULL, app, s->comment);
	if (s->png == NULL) {
		close(fd);
		if (created)
			unlink(s->file);
		return cap_fail(s, "cannot start the pcapng file: %s", rte_strerror(rte_errno));
	}
	s->claimed = 0;
	s->dropped = 0;
	s->written = 0;
	s->lost = 0;
	s->stop = 0;
	s->write_failed = false;
	s->start_ns = wall_ns();
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
	for (i = 0; i < rt->n_stages; i++)
		if (s->stage_tap[i].slot != NULL)
			__atomic_store_n(&rt->rts[i].tap, &s->stage_tap[i], __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_rings; i++)
		if (s->ring_tap[i].slot != NULL)
			__atomic_store_n(&rt->rings[i].tap, &s->ring_tap[i], __ATOMIC_RELEASE);
	for (i = 0; i < rt->n_stages; i++) {
		if (s->drop_tap[i].slot == NULL)
			continue;
		__atomic_store_n(&rt->rts[i].drop_tap, &s->drop_tap[i], __ATOMIC_RELEASE);
		if (s->drop_watch[i])
			__atomic_fetch_or(&rt->rts[i].watch, (uint8_t)PF_WATCH_DROPS,
					  __ATOMIC_RELEASE);
	}
	PF_LOG(INFO, "capture %" PRIu64 ": next %" PRIu64 " packets of %s into %s (%d tap%s)",
	       s->id, s->wanted, s->target, s->file, taps, taps == 1 ? "" : "s");
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
	uint64_t dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED) + s->lost;
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
	rte_tel_data_add_dict_u64(d, "wanted", s->wanted);
	rte_tel_data_add_dict_u64(d, "captured", __atomic_load_n(&s->written, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "dropped", RTE_MIN(dropped, s->wanted));
	rte_tel_data_add_dict_u64(d, "snaplen", s->snaplen);
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
		rte_tel_data_add_array_string(p, rt->topo->ports[i].name);
	rte_tel_data_add_dict_container(d, "edges", e, 0);
	rte_tel_data_add_dict_container(d, "ports", p, 0);
}

static int
cap_handle(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cap_slot *s = &cap;
	int rc = 0;

	/* tel_lock first (a reload rewrites the topology in place), then ours. */
	pf_telemetry_pause();
	pthread_mutex_lock(&cap_lock);
	if (cap_rt == NULL) {
		rc = -ENODEV;    /* starting or shutting down: reply null */
	} else if (strcmp(cmd, "/pipefwd/capture") == 0) {
		if (s->state == CAP_RUNNING) {
			rte_tel_data_start_dict(d);
			rte_tel_data_add_dict_string(d, "error", "a capture is running: wait for "
						     "it or /pipefwd/capture_stop");
			rte_tel_data_add_dict_u64(d, "running_id", s->id);
			goto out;
		}
		if (s->joinable) {
			pthread_join(s->writer, NULL);
			s->joinable = false;
		}
		if (cap_arm(cap_rt, params) < 0) {
			rte_tel_data_start_dict(d);
			add_str(d, "error", s->error);
			if (strncmp(s->error, "unknown target", 14) == 0)
				add_targets(cap_rt, d);
			s->error[0] = '\0';
			goto out;
		}
		cap_status(s, d);
	} else if (params != NULL && *params != '\0') {
		rc = -EINVAL;
	} else {
		if (strcmp(cmd, "/pipefwd/capture_stop") == 0 && s->state == CAP_RUNNING)
			__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		cap_status(s, d);
	}
out:
	pthread_mutex_unlock(&cap_lock);
	pf_telemetry_resume();
	return rc;
}

int
pf_capture_init(struct pf_runtime *rt)
{
	static const char *const cmds[][2] = {
		{ "/pipefwd/capture", "pipefwd: copy the next N packets of an edge or port "
				      "into a pcapng file. "
				      "Params: TARGET,COUNT[,overwrite][,snaplen=N],/PATH" },
		{ "/pipefwd/capture_status", "pipefwd: the current or last capture" },
		{ "/pipefwd/capture_stop", "pipefwd: finish the running capture now" },
	};
	unsigned int c;
	int rc;

	if (!cap_pdump) {
		/* dpdk-dumpcap attaches as a secondary process: needs hugepages. */
		rc = rte_pdump_init();
		if (rc < 0)
			PF_LOG(WARNING, "capture: rte_pdump_init failed (%s): dpdk-dumpcap will "
			       "not work", rte_strerror(rte_errno));
		cap_pdump = rc == 0;
	}
	if (!cap_registered) {
		for (c = 0; c < RTE_DIM(cmds); c++) {
			rc = rte_telemetry_register_cmd(cmds[c][0], cap_handle, cmds[c][1]);
			if (rc < 0) {
				PF_LOG(WARNING, "capture: cannot register %s: %s", cmds[c][0],
				       strerror(-rc));
				return rc;
			}
		}
		cap_registered = true;
	}
	pthread_mutex_lock(&cap_lock);
	cap_rt = rt;
	pthread_mutex_unlock(&cap_lock);
	return 0;
}

void
pf_capture_shutdown(void)
{
	struct cap_slot *s = &cap;

	pthread_mutex_lock(&cap_lock);
	cap_rt = NULL;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cap_lock);
	if (s->joinable) {
		pthread_join(s->writer, NULL);
		s->joinable = false;
	}
	rte_ring_free(s->q);
	rte_mempool_free(s->mp);
	rte_mempool_free(s->fmt_mp);
	s->q = NULL;
	s->mp = NULL;
	s->fmt_mp = NULL;
	if (cap_pdump) {
		rte_pdump_uninit();
		cap_pdump = false;
	}
}
