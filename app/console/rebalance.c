/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rebalance advice from what the running pipeline measured: each stage's
 * cycles per second and each ring's packets per second over a sliding
 * window (the last few seconds, not since start, so advice follows a load
 * that changed), fed to the placement function (app/console/placement.c).
 *
 * The main thread samples the counters about once a second
 * (pf_rebalance_sample) into a ring of PF_REBALANCE_SAMPLES; advice takes the
 * difference between the counters now and the oldest sample inside the
 * window. Until a first sample exists (the first second) it uses the
 * counters since start. Counters are never reset (a clear keeps baselines
 * in app/console/telemetry.c), so differences are exact.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "pf_rebalance.h"

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

struct rb_sample {
	uint64_t tsc;
	uint64_t cycles[PF_MAX_STAGES];
	uint64_t packets[PF_MAX_STAGES];
	uint64_t io[PF_MAX_STAGES];
	uint64_t ring_full[PF_MAX_STAGES];
	uint64_t pkts[PF_MAX_RINGS];
};

static pthread_mutex_t rb_lock = PTHREAD_MUTEX_INITIALIZER;
/* The last advice (console lock): held while the load stays (pf_place_recall). */
static struct pf_place_memory rb_memory;
static struct rb_sample rb_ring[PF_REBALANCE_SAMPLES];
static unsigned int rb_head, rb_n;          /* next slot, samples held */

static void
rb_read(const struct pf_runtime *rt, struct rb_sample *s)
{
	uint16_t i;

	s->tsc = rte_rdtsc();
	for (i = 0; i < rt->n_stages; i++) {
		s->cycles[i] = RD(rt->rts[i].cycles);
		s->packets[i] = RD(rt->rts[i].packets);
		s->io[i] = RD(rt->rts[i].io_cycles);
		s->ring_full[i] = RD(rt->rts[i].ring_full);
	}
	for (i = 0; i < rt->n_rings; i++)
		s->pkts[i] = RD(rt->rings[i].enqueued) + RD(rt->rings[i].direct);
}

void
pf_rebalance_sample(const struct pf_runtime *rt)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc();
	const struct rb_sample *last;

	pthread_mutex_lock(&rb_lock);
	last = &rb_ring[(rb_head + PF_REBALANCE_SAMPLES - 1) % PF_REBALANCE_SAMPLES];
	if (rb_n == 0 || now - last->tsc >= hz * PF_REBALANCE_INTERVAL_MS / 1000) {
		rb_read(rt, &rb_ring[rb_head]);
		rb_head = (rb_head + 1) % PF_REBALANCE_SAMPLES;
		if (rb_n < PF_REBALANCE_SAMPLES)
			rb_n++;
	}
	pthread_mutex_unlock(&rb_lock);
}

/* The oldest sample at most @p window_s old (into @p out); false if none. */
static bool
rb_oldest_within(double window_s, uint64_t now, struct rb_sample *out)
{
	uint64_t span = (uint64_t)(window_s * (double)rte_get_tsc_hz());
	unsigned int k;
	bool found = false;

	pthread_mutex_lock(&rb_lock);
	for (k = rb_n; k > 0 && !found; k--) {
		const struct rb_sample *s = &rb_ring[(rb_head + PF_REBALANCE_SAMPLES - k) %
						     PF_REBALANCE_SAMPLES];

		if (now - s->tsc <= span) {
			*out = *s;
			found = true;
		}
	}
	pthread_mutex_unlock(&rb_lock);
	return found;
}

/* The counters now and the oldest sample in the window (since start if none); seconds between. */
static double
rb_span(const struct pf_runtime *rt, double window_s, struct rb_sample *now,
	struct rb_sample *base)
{
	rb_read(rt, now);
	if (!rb_oldest_within(window_s, now->tsc, base) || base->tsc >= now->tsc) {
		memset(base, 0, sizeof(*base));
		base->tsc = rt->start_tsc;      /* no sample yet: since start */
	}
	return (double)(now->tsc - base->tsc) / (double)rte_get_tsc_hz();
}

int
pf_rebalance_window(const struct pf_runtime *rt, double window_s, struct pf_load_window *w)
{
	static struct rb_sample now, base;     /* console lock; off the stack */
	double secs = rb_span(rt, window_s, &now, &base);
	uint16_t i;

	if (secs <= 0)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->secs = secs;
	for (i = 0; i < rt->n_stages; i++) {
		w->cycles[i] = (double)(now.cycles[i] - base.cycles[i]) / secs;
		w->packets[i] = (double)(now.packets[i] - base.packets[i]) / secs;
		w->io[i] = (double)(now.io[i] - base.io[i]) / secs;
		w->ring_full[i] = (double)(now.ring_full[i] - base.ring_full[i]) / secs;
	}
	for (i = 0; i < rt->n_rings; i++)
		w->ring_pkts[i] = (double)(now.pkts[i] - base.pkts[i]) / secs;
	return 0;
}

int
pf_rebalance_suggest(const struct pf_runtime *rt, double cross_cycles, double window_s,
		     double *used_s, struct pf_place_input *in, struct pf_place_result *res)
{
	static struct rb_sample now, base;
	double hz = (double)rte_get_tsc_hz(), secs;
	uint16_t i, k;
	int rc;

	if (rt->n_lcores == 0 || rt->n_lcores > PF_PLACE_MAX_LCORES ||
	    rt->n_stages > PF_PLACE_MAX_STAGES)
		return -EINVAL;
	/* Static: the telemetry lock serialises callers; 35 KB stays off the stack. */
	secs = rb_span(rt, window_s, &now, &base);
	if (secs <= 0)
		return -EINVAL;
	*used_s = secs;
	memset(in, 0, sizeof(*in));
	in->n_stages = rt->n_stages;
	in->n_lcores = rt->n_lcores;
	in->cross_cycles = cross_cycles;
	in->cross_prod_share = PF_CROSS_PROD_SHARE;
	in->hz = hz;
	for (i = 0; i < rt->n_stages; i++) {
		int owner = __atomic_load_n(&rt->rts[i].owner, __ATOMIC_ACQUIRE);

		in->load[i] = (double)(now.cycles[i] - base.cycles[i]) / secs;
		in->current[i] = 0;
		for (k = 0; k < rt->n_lcores; k++)
			if ((int)rt->lcores[k].id == owner)
				in->current[i] = k;
	}
	for (i = 0; i < rt->n_rings && in->n_edges < PF_PLACE_MAX_EDGES; i++) {
		struct pf_place_edge *e = &in->edges[in->n_edges++];

		e->from = rt->rings[i].conf->from;
		e->to = rt->rings[i].conf->to;
		e->pps = (double)(now.pkts[i] - base.pkts[i]) / secs;
	}
	for (k = 0; k < rt->n_lcores; k++) {
		rte_cpuset_t set = rte_lcore_cpuset(rt->lcores[k].id);
		unsigned int c;

		for (c = 0; c < 64; c++)
			if (CPU_ISSET(c, &set))
				in->cpus[k] |= UINT64_C(1) << c;
	}
	in->min_gain = PF_REBALANCE_MIN_GAIN;
	pf_place_own_loads(in);
	/* The same advice until the load really moves: it does not flap. */
	if (pf_place_recall(&rb_memory, in, PF_REBALANCE_CHANGE, res))
		return 0;
	rc = pf_place(in, res);
	if (rc == 0)
		pf_place_remember(&rb_memory, in, res);
	return rc;
}

int
pf_rebalance_cpu_sharing(const struct pf_runtime *rt, char *buf, size_t len)
{
	rte_cpuset_t cpus, one;
	unsigned int n_busy = 0, n_cpus;
	size_t off = 0;
	uint16_t l, s;

	CPU_ZERO(&cpus);
	buf[0] = '\0';
	for (l = 0; l < rt->n_lcores; l++) {
		for (s = 0; s < rt->n_stages; s++)
			if (rt->topo->stages[s].lcore == (int)rt->lcores[l].id)
				break;
		if (s == rt->n_stages)
			continue;      /* spare: idles, takes no CPU from the others */
		one = rte_lcore_cpuset(rt->lcores[l].id);
		CPU_OR(&cpus, &cpus, &one);
		n_busy++;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? "," : "lcores ",
						rt->lcores[l].id);
	}
	n_cpus = (unsigned int)CPU_COUNT(&cpus);
	if (n_busy <= n_cpus || n_cpus == 0) {
		buf[0] = '\0';
		return 0;
	}
	if (off < len)
		snprintf(buf + off, len - off, " share %u CPU%s: they time-share, so the loads "
			 "include time preempted", n_cpus, n_cpus == 1 ? "" : "s");
	return 1;
}
