/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handoff_floor: what moving a packet between two CPUs costs on this machine,
 * without pipefwd (issue 31 item 1: the floor the hand-off cannot go under).
 *
 *   handoff_floor [-c A,B] [-n BURSTS] [-l LINES] [-k SAMPLES]
 *
 * pingpong  one cache line bounced between CPU A and CPU B: the one-way
 *           transfer latency of a line written by the other core (half a
 *           round trip), median and percentiles over -k round trips.
 * stream    pipefwd's pattern with nothing else: a producer on A takes
 *           "mbufs" (320-byte buffers, lines 0, 1 and 4 used as an mbuf's
 *           header, metadata and frame) from a free list, writes LINES lines of
 *           each, passes bursts of 32 pointers over an SPSC ring; a consumer on
 *           B reads those lines, rewrites the frame line (a TTL and MAC
 *           rewrite) and returns the buffers over a second ring, which the
 *           producer refills from (the mempool's round trip). Reported: each
 *           side's cycles per packet for its own work on a burst (median over
 *           bursts, so a preempted burst does not count), for the consumer
 *           without and with a prefetch of the whole burst at dequeue, and for
 *           the producer without and with a prefetch-for-write of the next
 *           burst's buffers; and the same work on one CPU (fused).
 *
 * Wall clock on a shared machine: each figure is a median of per-burst
 * samples (a burst that was preempted is an outlier, not an average), and the
 * run says how many samples it had. Built by meson, not run by make test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <x86intrin.h>

#define LINE 64
#define BURST 32
#define RING 1024               /* slots, a power of two: pipefwd's default ring */
#define POOL 8192               /* buffers: pipefwd's pool is bigger, its rings as deep */
#define BUF_LINES 5             /* mbuf header (2 lines), headroom, frame at line 4 */

struct buf {
	uint8_t line[BUF_LINES][LINE];
} __attribute__((aligned(LINE)));

/* An SPSC ring with head and tail on lines of their own (as rte_ring's). */
struct ring {
	volatile uint32_t head __attribute__((aligned(LINE)));   /* producer writes */
	volatile uint32_t tail __attribute__((aligned(LINE)));   /* consumer writes */
	struct buf *slot[RING] __attribute__((aligned(LINE)));
};

static struct buf *pool;
static struct ring fwd, back;
static int cpu_a = 0, cpu_b = 1, lines = 3;
static unsigned long bursts = 20000, samples = 20000;
static volatile int stop;

static uint64_t
tsc_hz(void)
{
	struct timespec a, b;
	uint64_t t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = __rdtsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 200000000L);
	t1 = __rdtsc();
	return (t1 - t0) * 1000000000ULL /
	       (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec));
}

static void
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (pthread_setaffinity_np(pthread_self(), sizeof(s), &s) != 0) {
		fprintf(stderr, "handoff_floor: cannot pin to CPU %d\n", cpu);
		exit(1);
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentile @p p (0..100) of @p n sorted values. */
static double
pct(const uint64_t *v, size_t n, double p)
{
	return n == 0 ? 0 : (double)v[(size_t)((double)(n - 1) * p / 100.0)];
}

/* ---- pingpong ---------------------------------------------------------- */

static volatile uint64_t pp_line[LINE / 8] __attribute__((aligned(LINE)));

static void *
pp_echo(void *arg)
{
	uint64_t seen = 0;

	(void)arg;
	pin(cpu_b);
	while (!stop) {
		uint64_t v = pp_line[0];

		if (v != seen && (v & 1)) {
			seen = v + 1;
			pp_line[0] = seen;
		}
	}
	return NULL;
}

static void
pingpong(double ns_per_cycle)
{
	uint64_t *rt = calloc(samples, sizeof(*rt)), v = 1;
	pthread_t th;
	unsigned long i;

	stop = 0;
	pp_line[0] = 0;
	pthread_create(&th, NULL, pp_echo, NULL);
	pin(cpu_a);
	for (i = 0; i < samples + 1000; i++) {
		uint64_t t0 = __rdtsc(), t1;

		pp_line[0] = v;
		while (pp_line[0] != v + 1)
			_mm_pause();
		t1 = __rdtsc();
		if (i >= 1000)
			rt[i - 1000] = t1 - t0;
		v += 2;
	}
	stop = 1;
	pthread_join(th, NULL);
	qsort(rt, samples, sizeof(*rt), cmp_u64);
	printf("pingpong  CPU %d <-> %d, %lu round trips: one-way line transfer "
	       "median %.0f cycles (%.0f ns), p10 %.0f, p90 %.0f\n", cpu_a, cpu_b, samples,
	       pct(rt, samples, 50) / 2, pct(rt, samples, 50) / 2 * ns_per_cycle,
	       pct(rt, samples, 10) / 2, pct(rt, samples, 90) / 2);
	free(rt);
}

/* ---- stream ------------------------------------------------------------ */

static const int line_of[3] = { 0, 1, 4 };   /* header, metadata, frame */

struct side {
	bool prefetch;
	uint64_t *cyc;          /* per-burst cycles of this side's work */
	unsigned long n;
	uint64_t sum;           /* what was read: kept so the loads are not dead */
};

static uint32_t
ring_count(const struct ring *r)
{
	return r->head - r->tail;
}

/* Producer's work on one buffer: an rx PMD and rx stage writing it. */
static inline void
produce(struct buf *b, uint32_t seq)
{
	int l;

	for (l = 0; l < lines; l++)
		*(volatile uint64_t *)b->line[line_of[l]] = seq + l;
}

/* Consumer's work: read the lines, rewrite the frame's (TTL, MACs). */
static inline uint64_t
consume(struct buf *b)
{
	uint64_t s = 0;
	int l;

	for (l = 0; l < lines; l++)
		s += *(volatile uint64_t *)b->line[line_of[l]];
	((volatile uint64_t *)b->line[4])[1] = s;
	return s;
}

static void
prefetch_burst(struct buf **v, int n, bool write)
{
	int i, l;

	for (i = 0; i < n; i++)
		for (l = 0; l < lines; l++) {
			if (write)
				_m_prefetchw(v[i]->line[line_of[l]]);
			else
				_mm_prefetch((const char *)v[i]->line[line_of[l]], _MM_HINT_T0);
		}
}

static struct side prod, cons;

static void *
producer(void *arg)
{
	struct buf *freel[POOL];
	uint32_t nfree = 0, seq = 0, i;
	unsigned long k = 0;

	(void)arg;
	pin(cpu_a);
	for (i = 0; i < POOL; i++)
		freel[nfree++] = &pool[i];
	while (k < bursts && !stop) {
		struct buf **next;
		uint64_t t0;

		/* Refill from what the consumer gave back (the mempool). */
		for (;;) {
			uint32_t t = back.tail, h = __atomic_load_n(&back.head, __ATOMIC_ACQUIRE);

			while (t != h)
				freel[nfree++] = back.slot[t++ & (RING - 1)];
			__atomic_store_n(&back.tail, t, __ATOMIC_RELEASE);
			if (nfree >= BURST)
				break;
			if (stop)
				return NULL;
		}
		if (RING - ring_count(&fwd) < BURST)
			continue;
		next = &freel[nfree - BURST];
		t0 = __rdtsc();
		if (prod.prefetch)
			prefetch_burst(next, BURST, true);
		for (i = 0; i < BURST; i++)
			produce(next[i], seq++);
		prod.cyc[k++] = __rdtsc() - t0;
		for (i = 0; i < BURST; i++)
			fwd.slot[(fwd.head + i) & (RING - 1)] = next[i];
		__atomic_store_n(&fwd.head, fwd.head + BURST, __ATOMIC_RELEASE);
		nfree -= BURST;
	}
	prod.n = k;
	return NULL;
}

static void *
consumer(void *arg)
{
	struct buf *v[BURST];
	unsigned long k = 0;
	uint32_t i;

	(void)arg;
	pin(cpu_b);
	while (k < bursts) {
		uint32_t t = fwd.tail, h = __atomic_load_n(&fwd.head, __ATOMIC_ACQUIRE), n;
		uint64_t t0;

		if (h - t < BURST)
			continue;
		for (i = 0, n = BURST; i < n; i++)
			v[i] = fwd.slot[(t + i) & (RING - 1)];
		__atomic_store_n(&fwd.tail, t + n, __ATOMIC_RELEASE);
		t0 = __rdtsc();
		if (cons.prefetch)
			prefetch_burst(v, n, false);
		for (i = 0; i < n; i++)
			cons.sum += consume(v[i]);
		cons.cyc[k++] = __rdtsc() - t0;
		/* Back to the pool (net_null frees them). */
		while (RING - ring_count(&back) < n)
			;
		for (i = 0; i < n; i++)
			back.slot[(back.head + i) & (RING - 1)] = v[i];
		__atomic_store_n(&back.head, back.head + n, __ATOMIC_RELEASE);
	}
	cons.n = k;
	stop = 1;
	return NULL;
}

static double
median_per_pkt(uint64_t *c, unsigned long n, unsigned long *kept)
{
	/* The first tenth warms the caches and the free list. */
	unsigned long skip = n / 10;

	*kept = n - skip;
	qsort(c + skip, n - skip, sizeof(*c), cmp_u64);
	return pct(c + skip, n - skip, 50) / BURST;
}

static void
stream(bool cpf, bool ppf)
{
	pthread_t a, b;
	unsigned long kp, kc;
	double mp, mc;

	memset(&fwd, 0, sizeof(fwd));
	memset(&back, 0, sizeof(back));
	prod.prefetch = ppf;
	cons.prefetch = cpf;
	stop = 0;
	pthread_create(&b, NULL, consumer, NULL);
	pthread_create(&a, NULL, producer, NULL);
	pthread_join(b, NULL);
	stop = 1;
	pthread_join(a, NULL);
	mp = median_per_pkt(prod.cyc, prod.n, &kp);
	mc = median_per_pkt(cons.cyc, cons.n, &kc);
	printf("stream    %d lines, consumer prefetch %-3s producer prefetchw %-3s: "
	       "producer %5.1f, consumer %5.1f cycles/packet (medians of %lu, %lu bursts)\n",
	       lines, cpf ? "yes" : "no", ppf ? "yes" : "no", mp, mc, kp, kc);
}

/* The same work on one CPU: buffers come back hot. */
static void
fused(void)
{
	struct buf *freel[POOL], *v[BURST];
	uint64_t *pc = calloc(bursts, sizeof(uint64_t)), *cc = calloc(bursts, sizeof(uint64_t));
	uint32_t nfree = 0, seq = 0, i;
	unsigned long k, kp, kc;
	uint64_t sum = 0;
	double mp, mc;

	pin(cpu_a);
	for (i = 0; i < 256; i++)              /* a mempool cache's worth in use */
		freel[nfree++] = &pool[i];
	for (k = 0; k < bursts; k++) {
		uint64_t t0 = __rdtsc(), t1;

		for (i = 0; i < BURST; i++) {
			v[i] = freel[--nfree];
			produce(v[i], seq++);
		}
		t1 = __rdtsc();
		for (i = 0; i < BURST; i++)
			sum += consume(v[i]);
		cc[k] = __rdtsc() - t1;
		pc[k] = t1 - t0;
		for (i = 0; i < BURST; i++)
			freel[nfree++] = v[BURST - 1 - i];
	}
	mp = median_per_pkt(pc, bursts, &kp);
	mc = median_per_pkt(cc, bursts, &kc);
	printf("fused     %d lines, one CPU (%d): producer %5.1f, consumer %5.1f cycles/packet "
	       "(checksum %" PRIu64 ")\n", lines, cpu_a, mp, mc, sum & 1);
	free(pc);
	free(cc);
}

int
main(int argc, char **argv)
{
	double hz;
	int c;

	while ((c = getopt(argc, argv, "c:n:l:k:")) != -1) {
		switch (c) {
		case 'c':
			if (sscanf(optarg, "%d,%d", &cpu_a, &cpu_b) != 2) {
				fprintf(stderr, "-c A,B\n");
				return 64;
			}
			break;
		case 'n':
			bursts = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			lines = atoi(optarg);
			break;
		case 'k':
			samples = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: handoff_floor [-c A,B] [-n BURSTS] [-l 1..3] [-k SAMPLES]\n");
			return 64;
		}
	}
	if (lines < 1 || lines > 3 || bursts < 10 || samples < 10) {
		fprintf(stderr, "handoff_floor: -l 1..3, -n and -k at least 10\n");
		return 64;
	}
	pool = aligned_alloc(LINE, sizeof(struct buf) * POOL);
	prod.cyc = calloc(bursts, sizeof(uint64_t));
	cons.cyc = calloc(bursts, sizeof(uint64_t));
	if (pool == NULL || prod.cyc == NULL || cons.cyc == NULL)
		return 1;
	memset(pool, 0, sizeof(struct buf) * POOL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	hz = (double)tsc_hz();
	printf("TSC %.3f GHz; CPUs %d (producer) and %d (consumer)\n", hz / 1e9, cpu_a, cpu_b);
	pingpong(1e9 / hz);
	fused();
	stream(false, false);
	stream(true, false);
	stream(false, true);
	stream(true, true);
	return 0;
}
