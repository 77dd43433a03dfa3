/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture writer thread: alive only while a capture runs, it formats
 * the copies the lcores enqueued with rte_pcapng_copy and writes them with
 * rte_pcapng_write_packets. Once captured + dropped = wanted (or on stop,
 * shutdown or a write error) it withdraws the taps, waits for a quiescent
 * pass of every lcore (no lcore still copies), writes what is left plus an
 * interface statistics block and closes the file.
 */
#include "capture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "pf_log.h"

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

uint64_t
cap_wall_ns(void)
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
		const struct pf_tap_priv *p = rte_mbuf_to_priv(in[i]);
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
					 pf_stage_reason_name(st, p->reason));
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

static bool
cap_complete(const struct cap_slot *s)
{
	return s->written + s->lost + __atomic_load_n(&s->sink.dropped, __ATOMIC_RELAXED) >= s->sink.wanted;
}

void *
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
		n = rte_ring_dequeue_burst(s->sink.q, (void **)in, RTE_DIM(in), NULL);
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
			pf_tap_disarm(rt);
			pf_rcu_synchronize();
			finishing = true;
			continue;
		}
		if (n == 0)
			rte_delay_us_sleep(CAP_IDLE_US);
	}
	dropped = __atomic_load_n(&s->sink.dropped, __ATOMIC_RELAXED) + s->lost;
	st = s->write_failed ? CAP_FAILED :
	     s->written + dropped >= s->sink.wanted ? CAP_DONE : CAP_STOPPED;
	snprintf(isb, sizeof(isb), "pipefwd capture of %.127s: %s, wanted %" PRIu64 ", captured %"
		 PRIu64 ", dropped %" PRIu64, s->target, cap_state_names[st], s->sink.wanted,
		 s->written, dropped);
	s->end_ns = cap_wall_ns();
	if (!s->write_failed)
		rte_pcapng_write_stats(s->png, s->isb_port, isb, s->start_ns, s->end_ns, s->written,
				       dropped);
	rte_pcapng_close(s->png);   /* closes the file */
	s->png = NULL;
	pthread_mutex_lock(&s->lock);
	s->end_tsc = rte_rdtsc();
	if (s->write_failed)
		snprintf(s->error, sizeof(s->error), "writing the file failed: %s",
			 strerror(s->write_errno));
	s->state = st;
	pthread_mutex_unlock(&s->lock);
	PF_LOG(INFO, "capture %" PRIu64 " of %s %s: %" PRIu64 " packets written to %s, %" PRIu64
	       " dropped", s->id, s->target, cap_state_names[st], s->written, s->file, dropped);
	return NULL;
}
