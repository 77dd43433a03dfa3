/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The watch path (app/runtime/watch.c): a stage's bursts one packet at a
 * time, for a packet trace (VPP's `trace add`; the console's trace.c arms
 * it and shows it) and for a capture of dropped packets (the drop reason of
 * each packet is the DROP counter that moved during its call).
 *
 * Armed, the runtime sets PF_WATCH_* bits in the stages concerned
 * (pf_rt_stage.watch). pf_rt_run_burst() tests the byte once per burst and,
 * when it is set, runs the burst through pf_watch_burst(), which calls the
 * stage's process_burst one packet at a time: each packet's edge, its drop
 * reason, every counter it moved, its cycles, its headers before and after
 * the stage and its metadata are then exact, without any stage knowing
 * about traces. Stages promise that a burst is processed "as if the packets
 * came one by one" (l2fib learning, acl sessions), so a traced packet is
 * forwarded or dropped exactly as it would be untraced.
 *
 * A traced packet carries an mbuf dynflag (cleared by every mbuf alloc) and
 * sits in active[] by trace number, so the stages after the start stage
 * find it. Each step is one record. Records have many writers (every lcore)
 * and one reader (the console): a slot is claimed with an atomic add and
 * published by its ready flag. The trace ends when every traced packet has
 * left (sent by a sink, or dropped): the lcore that finishes the last one
 * clears the watch bits.
 */
#ifndef PF_WATCH_H
#define PF_WATCH_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "pf_runtime.h"

#define PF_TRACE_MAX_PKTS 256
#define PF_TRACE_MAX_RECS 4096
#define PF_TRACE_HDR 64                  /* frame bytes kept per step: L2..L4 headers */
#define PF_TRACE_CTRS 8                  /* counters a step lists */
#define PF_TRACE_MAX_CTRS 64             /* counters of a stage snapshotted per packet */
#define PF_TRACE_NOTE 128               /* a telemetry string's most */

struct pf_trace_rec {
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
	uint16_t ctr_idx[PF_TRACE_CTRS];
	uint32_t ctr_delta[PF_TRACE_CTRS];
	uint8_t hdr_in[PF_TRACE_HDR];
	uint8_t hdr_out[PF_TRACE_HDR];
	char note[PF_TRACE_NOTE];
};

/** The trace: armed and read by the console (its lock), written by the lcores. */
struct pf_trace {
	struct pf_runtime *rt;            /* published while armed or showing */
	struct pf_trace_rec *recs;
	uint64_t flag;                    /* ol_flags bit of a traced mbuf */
	uint64_t id;
	uint32_t wanted;
	int32_t start;                    /* stage index, -1: every source */
	uint32_t started;                 /* claimed trace numbers (may pass wanted) */
	uint32_t done;                    /* traced packets that left */
	uint32_t n_recs;                  /* claimed records (may pass the array) */
	struct rte_mbuf *active[PF_TRACE_MAX_PKTS];
	uint64_t start_tsc;
};

extern struct pf_trace pf_trace;

/**
 * Data path (the watch branch of pf_rt_run_burst()): process @p n packets
 * of @p rs one by one, fill edge[], record traced packets and hand dropped
 * ones to the drop capture. Returns PF_EDGE_MIXED (always a correct answer).
 */
uint16_t pf_watch_burst(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n,
			uint16_t *edge);

/**
 * The first PF_TRACE_HDR bytes of @p m's frame into @p to; how many.
 */
uint8_t pf_watch_hdr(uint8_t *to, const struct rte_mbuf *m);

/**
 * What one packet's call of @p st's process_burst moved, from the counters
 * before it (@p before, the first @p nc): its drop reason (the DROP counter
 * that moved, when @p edge is the drop edge; else PF_REASON_NONE) and, into
 * @p r when not NULL, every counter that moved.
 */
uint16_t pf_watch_moved(const struct pf_stage *st, const uint64_t *before, uint16_t nc,
			uint16_t edge, struct pf_trace_rec *r);

/**
 * Fill step record @p r (all but pkt and ready) for packet @p m, which @p st
 * sent to @p edge between TSC @p t0 and @p t1; its headers before were
 * @p hdr_in (@p n_in bytes of a @p len_in byte packet). Calls the stage's
 * trace op for the note. On the lcore that ran the stage, right after.
 */
void pf_watch_rec(struct pf_trace_rec *r, const struct pf_stage *st, struct rte_mbuf *m,
		  uint16_t edge, uint16_t reason, uint64_t t0, uint64_t t1, const uint8_t *hdr_in,
		  uint8_t n_in, uint16_t len_in);

/**
 * Data path, on the (already unlikely) paths where the runtime itself
 * drops: @p n packets of @p rs lost as @p reason (PF_REASON_RING_FULL,
 * PF_REASON_NO_EDGE), before they are freed.
 */
void pf_watch_lost(struct pf_rt_stage *rs, struct rte_mbuf **pkts, uint16_t n, uint16_t reason);

/**
 * Arm a trace of the next @p n packets (1..PF_PF_TRACE_MAX_PKTS) entering stage
 * @p start (-1: every source) on @p rt, replacing the last one. Returns 0,
 * or -errno with a message in @p err. Control thread (the console's lock).
 */
int pf_trace_arm(struct pf_runtime *rt, uint32_t n, int32_t start, char *err, size_t len);
/** Stop recording and wait until no lcore is inside a traced burst. */
void pf_trace_disarm(struct pf_runtime *rt);
/** Disarm and free the records (shutdown). */
void pf_trace_free(struct pf_runtime *rt);

#endif /* PF_WATCH_H */
