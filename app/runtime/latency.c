/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency histograms (pf_latency.h): the switch, the rx stamp's mbuf flag
 * and field, and what readers compute from a histogram.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include "pf_latency.h"
#include "pf_runtime.h"

uint8_t pf_lat_on;
uint64_t pf_lat_flag;

int
pf_latency_init(void)
{
	static const struct rte_mbuf_dynflag flag = { .name = "pipefwd_rx_stamped" };
	int bit;

	if (pf_lat_flag != 0)
		return 0;
	bit = rte_mbuf_dynflag_register(&flag);
	if (bit < 0)
		return -rte_errno;
	pf_lat_flag = UINT64_C(1) << bit;
	return 0;
}

bool
pf_latency_set(bool on)
{
	bool was = __atomic_load_n(&pf_lat_on, __ATOMIC_RELAXED) != 0;

	/* pf_latency_init runs at start, before anything can turn this on. */
	if (pf_lat_flag == 0)
		on = false;
	__atomic_store_n(&pf_lat_on, on ? 1 : 0, __ATOMIC_RELEASE);
	return was;
}

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void
pf_lat_summarize(const struct pf_lat_hist *h, const struct pf_lat_hist *base,
		 struct pf_lat_summary *out)
{
	uint64_t b[PF_LAT_BUCKETS], count = 0, sum, want50, want99, seen = 0;
	unsigned int k;
	bool got50 = false;

	memset(out, 0, sizeof(*out));
	/* Buckets first, then the max: a sample recorded in between raises the
	 * max past a bucket, never leaves a bucket above the max. */
	for (k = 0; k < PF_LAT_BUCKETS; k++) {
		b[k] = RD(h->b[k]) - (base != NULL ? base->b[k] : 0);
		count += b[k];
	}
	sum = RD(h->sum) - (base != NULL ? base->sum : 0);
	out->max = RD(h->max);
	out->count = count;
	if (count == 0)
		return;
	out->mean = sum / count;
	/* The max cannot be cleared (one writer): after a clear with no new max
	 * since, the top bucket used since the clear bounds it. */
	if (base != NULL && out->max <= base->max) {
		for (k = PF_LAT_BUCKETS; k-- > 0;)
			if (b[k] != 0)
				break;
		if (pf_lat_bucket_hi(k) < out->max)
			out->max = pf_lat_bucket_hi(k);
	}
	/* The sample of rank ceil(p * count): p50 the 50th percentile, p99 the 99th. */
	want50 = (count + 1) / 2;
	want99 = count - count / 100;
	for (k = 0; k < PF_LAT_BUCKETS; k++) {
		seen += b[k];
		if (!got50 && seen >= want50) {
			out->p50 = pf_lat_bucket_hi(k);
			got50 = true;
		}
		if (seen >= want99) {
			out->p99 = pf_lat_bucket_hi(k);
			break;
		}
	}
	if (out->p50 > out->max)
		out->p50 = out->max;
	if (out->p99 > out->max)
		out->p99 = out->max;
}

void
pf_lat_add(struct pf_lat_hist *sum, const struct pf_lat_hist *h)
{
	unsigned int k;
	uint64_t max = RD(h->max);

	sum->count += RD(h->count);
	sum->sum += RD(h->sum);
	if (max > sum->max)
		sum->max = max;
	for (k = 0; k < PF_LAT_BUCKETS; k++)
		sum->b[k] += RD(h->b[k]);
}

void
pf_runtime_port_latency(const struct pf_runtime *rt, uint16_t port, struct pf_lat_hist *out)
{
	uint16_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < rt->n_stages && port < PF_MAX_PORTS; i++)
		if (rt->rts[i].lat != NULL)
			pf_lat_add(out, &rt->rts[i].lat[port]);
}
