/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Latency you can see (issue 31 item 3): how long packets sit in each
 * cross-lcore ring (sojourn) and how long they take from rx to tx per
 * output port, both sampled, as histograms of TSC cycles.
 *
 * Sojourn: in a timed pass (one in PF_RT_TIME_EVERY) a producer that sends
 * by ring writes the ring position of the burst's first packet and the time
 * into the ring's sample word (one 64-bit store, its own cache line); the
 * consumer, after each dequeue, tests whether that position is in what it
 * took (one load and a compare) and records now - then.
 *
 * rx -> tx: in a timed pass a source stamps the first packet of its burst
 * (an mbuf dynamic flag, and the time in the first 8 bytes of the buffer's
 * headroom: the dynamic field area has no room left beside pipefwd's
 * metadata and net_pcap's own timestamp); a sink in a timed pass looks for
 * the flag in the burst it sends and records now - stamp under the packet's
 * output port. PMDs write ol_flags on every received mbuf and
 * rte_pktmbuf_reset clears it, so a stamp never outlives its packet. The
 * sink samples its own timed passes only, so a fused pipeline samples every
 * stamped packet and a pipelined one a sixteenth of them: unbiased either way.
 *
 * Off until pf_latency_set(true) (`pipefwd-ctl latency on`, or
 * `runtime: { latency: true }`): off, a timed pass tests one byte.
 */
#ifndef PF_LATENCY_H
#define PF_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

/* Sub-buckets per power of two: a bucket spans at most a quarter of its value. */
#define PF_LAT_SUB_BITS 2
#define PF_LAT_SUB (1u << PF_LAT_SUB_BITS)
/* Up to 2^32 cycles (two seconds at 2 GHz): 4 exact + 30 powers of two x 4. */
#define PF_LAT_BUCKETS 128

/** A latency histogram, written by one lcore, read by anyone with plain loads. */
struct pf_lat_hist {
	uint64_t count;
	uint64_t sum;                    /**< cycles, for the mean */
	uint64_t max;                    /**< cycles */
	uint64_t b[PF_LAT_BUCKETS];
};

/** Bucket of @p c cycles: exact below PF_LAT_SUB, then 4 per power of two. */
static inline unsigned int
pf_lat_bucket(uint64_t c)
{
	unsigned int msb;

	if (c < PF_LAT_SUB)
		return (unsigned int)c;
	if (c > UINT32_MAX)
		c = UINT32_MAX;
	msb = 63u - (unsigned int)__builtin_clzll(c);
	return (msb - PF_LAT_SUB_BITS + 1) * PF_LAT_SUB +
	       (unsigned int)((c >> (msb - PF_LAT_SUB_BITS)) & (PF_LAT_SUB - 1));
}

/** The largest value bucket @p k holds (its smallest is pf_lat_bucket_hi(k - 1) + 1). */
static inline uint64_t
pf_lat_bucket_hi(unsigned int k)
{
	unsigned int msb, sub;

	if (k < PF_LAT_SUB)
		return k;
	msb = k / PF_LAT_SUB + PF_LAT_SUB_BITS - 1;
	sub = k % PF_LAT_SUB;
	return ((uint64_t)(PF_LAT_SUB + sub + 1) << (msb - PF_LAT_SUB_BITS)) - 1;
}

/** Record one sample of @p c cycles (the histogram's single writer). */
static inline void
pf_lat_record(struct pf_lat_hist *h, uint64_t c)
{
	h->count++;
	h->sum += c;
	if (c > h->max)
		h->max = c;
	h->b[pf_lat_bucket(c)]++;
}

/** What a reader reports of a histogram (cycles). */
struct pf_lat_summary {
	uint64_t count;
	uint64_t mean, p50, p99, max;
};

/**
 * Summarise @p h less @p base (a clear's snapshot, or NULL): the count, the
 * mean, the upper bound of the bucket holding the 50th and 99th percentile
 * (at most the max), and the max (since start: a max cannot be cleared).
 * Pure: unit-tested on hand-made histograms.
 */
void pf_lat_summarize(const struct pf_lat_hist *h, const struct pf_lat_hist *base,
		      struct pf_lat_summary *out);

/** Add @p h into @p sum (per-port histograms of several sinks). */
void pf_lat_add(struct pf_lat_hist *sum, const struct pf_lat_hist *h);

/* ---- the runtime's switch and the rx stamp --------------------------------- */

/** Non-zero while latency is measured. Read by the workers in timed passes. */
extern uint8_t pf_lat_on;
/** The mbuf dynamic flag of a stamped packet (0 until pf_latency_init). */
extern uint64_t pf_lat_flag;

/**
 * Where a stamped packet's rx time is: the start of its buffer, headroom
 * no stage prepends into that far (at most a VLAN tag: 4 of 128 bytes).
 */
#define PF_LAT_STAMP(m) ((uint64_t *)(m)->buf_addr)

/** Register the stamp's mbuf flag (once, after EAL). 0 or -errno. */
int pf_latency_init(void);
/** Turn measuring on or off; returns the previous state. */
bool pf_latency_set(bool on);

#endif /* PF_LATENCY_H */
