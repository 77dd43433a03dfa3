/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency histograms (app/runtime/pf_latency.h): buckets, and what a reader
 * reports from hand-made histograms: percentiles are the upper bound of
 * the bucket holding the sample of that rank, never above the max.
 */
#include <string.h>

#include "pf_latency.h"
#include "pf_test.h"

/* Every value lands in a bucket whose bounds hold it; bounds rise and tile the range. */
static void
test_buckets(void **state)
{
	uint64_t v, prev_hi = 0;
	unsigned int k;

	for (v = 0; v < 100000; v++) {
		k = pf_lat_bucket(v);
		assert_true(k < PF_LAT_BUCKETS);
		assert_true(v <= pf_lat_bucket_hi(k));
		assert_true(k == 0 || v > pf_lat_bucket_hi(k - 1));
	}
	for (k = 1; k < PF_LAT_BUCKETS && pf_lat_bucket_hi(k) <= UINT32_MAX; k++) {
		assert_true(pf_lat_bucket_hi(k) > prev_hi || k == 1);
		/* A quarter of its value at most: the resolution docs/stats.md states. */
		if (k >= PF_LAT_SUB)
			assert_true(pf_lat_bucket_hi(k) - pf_lat_bucket_hi(k - 1) <=
				    pf_lat_bucket_hi(k - 1) / 4 + 1);
		prev_hi = pf_lat_bucket_hi(k);
	}
	assert_int_equal(pf_lat_bucket(UINT32_MAX), pf_lat_bucket(UINT64_MAX));
	assert_true(pf_lat_bucket(UINT32_MAX) < PF_LAT_BUCKETS);
	assert_int_equal(pf_lat_bucket_hi(pf_lat_bucket(1000)), 1023);
	assert_int_equal(pf_lat_bucket_hi(pf_lat_bucket(1024)), 1279);
}

/* 98 samples of 1000, one of 5000, one of 100000 cycles. */
static void
test_summary(void **state)
{
	struct pf_lat_hist h, base;
	struct pf_lat_summary s;
	int i;

	memset(&h, 0, sizeof(h));
	pf_lat_summarize(&h, NULL, &s);
	assert_int_equal(s.count, 0);
	assert_int_equal(s.p50, 0);
	for (i = 0; i < 98; i++)
		pf_lat_record(&h, 1000);
	pf_lat_record(&h, 5000);
	pf_lat_record(&h, 100000);
	pf_lat_summarize(&h, NULL, &s);
	assert_int_equal(s.count, 100);
	assert_int_equal(s.mean, (98 * 1000 + 5000 + 100000) / 100);
	assert_int_equal(s.p50, 1023);          /* the bucket 896..1023 */
	assert_int_equal(s.p99, 5119);          /* the 99th sample: 5000, bucket 4096..5119 */
	assert_int_equal(s.max, 100000);
	/* One sample: every percentile is it, bounded by the max. */
	memset(&h, 0, sizeof(h));
	pf_lat_record(&h, 1000);
	pf_lat_summarize(&h, NULL, &s);
	assert_int_equal(s.p50, 1000);
	assert_int_equal(s.p99, 1000);
	/* Since a clear: only what came after, the max bounded by the top bucket used. */
	for (i = 0; i < 9; i++)
		pf_lat_record(&h, 100000);
	base = h;
	for (i = 0; i < 10; i++)
		pf_lat_record(&h, 3000);
	pf_lat_summarize(&h, &base, &s);
	assert_int_equal(s.count, 10);
	assert_int_equal(s.p50, 3071);
	assert_int_equal(s.p99, 3071);
	assert_int_equal(s.max, 3071);
	assert_int_equal(s.mean, 3000);
	/* A new max after the clear is exact. */
	pf_lat_record(&h, 200000);
	pf_lat_summarize(&h, &base, &s);
	assert_int_equal(s.max, 200000);
	assert_int_equal(s.count, 11);
}

/* The sum of several sinks' histograms (one port, two tx instances). */
static void
test_add(void **state)
{
	struct pf_lat_hist a, b, sum;
	struct pf_lat_summary s;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&sum, 0, sizeof(sum));
	pf_lat_record(&a, 100);
	pf_lat_record(&b, 7000);
	pf_lat_record(&b, 7000);
	pf_lat_add(&sum, &a);
	pf_lat_add(&sum, &b);
	pf_lat_summarize(&sum, NULL, &s);
	assert_int_equal(s.count, 3);
	assert_int_equal(s.max, 7000);
	assert_int_equal(s.p50, 7000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
