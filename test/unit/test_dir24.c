/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stages/lib/dir24.c: incremental updates of an rte_lpm table, checked
 * against a model. Random adds, replaces and deletes of prefixes of every
 * length in a small address space (so that they nest, overlap and share
 * /24s, and tbl8 groups are made and folded), each followed by lookups of
 * addresses in and around the prefix through rte_lpm_lookup, which must
 * give what a brute-force longest match over the model's routes gives.
 */
#include "pf_test.h"

#include <pthread.h>
#include <stdlib.h>

#include <rte_lpm.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "pf_dir24.h"
#include "pf_stages.h"

#define MAXR 4096
#define GROUPS 64
#define MISS 0xffffff

struct model {
	uint32_t ip[MAXR];
	uint8_t len[MAXR];
	uint32_t hop[MAXR];
	uint32_t n;
};

static int
setup(void **state)
{
	return pf_test_eal_init("dir24");
}

static uint32_t
model_lookup(const struct model *m, uint32_t a)
{
	uint32_t i, best = MISS;
	int blen = -1;

	for (i = 0; i < m->n; i++) {
		uint32_t mask = m->len[i] == 0 ? 0 : UINT32_MAX << (32 - m->len[i]);

		if ((a & mask) == m->ip[i] && (int)m->len[i] > blen) {
			blen = m->len[i];
			best = m->hop[i];
		}
	}
	return best;
}

static int
model_find(const struct model *m, uint32_t ip, uint8_t len)
{
	uint32_t i;

	for (i = 0; i < m->n; i++)
		if (m->ip[i] == ip && m->len[i] == len)
			return (int)i;
	return -1;
}

static void
check_addr(struct rte_lpm *lpm, const struct model *m, uint32_t a)
{
	uint32_t got = MISS, want = model_lookup(m, a);

	if (rte_lpm_lookup(lpm, a, &got) != 0)
		got = MISS;
	if (got != want)
		fail_msg("%u.%u.%u.%u: table %u, model %u", a >> 24, (a >> 16) & 0xff,
			 (a >> 8) & 0xff, a & 0xff, got, want);
}

/* Addresses at, inside and just outside @p ip/@p len. */
static void
check_around(struct rte_lpm *lpm, const struct model *m, uint32_t ip, uint8_t len)
{
	uint32_t size = len == 32 ? 1 : 1u << (32 - len);

	check_addr(lpm, m, ip);
	check_addr(lpm, m, ip + size - 1);
	check_addr(lpm, m, ip + (uint32_t)rand() % size);
	check_addr(lpm, m, ip - 1);
	check_addr(lpm, m, ip + size);
}

static struct rte_lpm *
make_lpm(void)
{
	static int seq;
	struct rte_lpm_config c = { .max_rules = 1, .number_tbl8s = GROUPS };
	char name[32];

	snprintf(name, sizeof(name), "ut_dir24_%d", seq++);
	return rte_lpm_create(name, SOCKET_ID_ANY, &c);
}

static void
test_random(void **state)
{
	struct rte_lpm *lpm = make_lpm();
	struct pf_dir24 *d;
	struct model *m = calloc(1, sizeof(*m));
	uint32_t step, i, k;

	assert_non_null(lpm);
	assert_non_null(m);
	d = pf_dir24_create(lpm, 0, GROUPS, MAXR, SOCKET_ID_ANY);
	assert_non_null(d);
	srand(7);
	for (step = 0; step < 6000; step++) {
		/* 10.0.0.0/14: prefixes /8../32 nest and share /24s. */
		uint8_t len = (uint8_t)(8 + rand() % 25);
		uint32_t a = (10u << 24) | ((uint32_t)rand() & 0x3ffff);
		uint32_t ip = a & (len == 32 ? UINT32_MAX : ~(UINT32_MAX >> len));
		uint32_t hop = 1 + (uint32_t)rand() % 1000;
		int at = model_find(m, ip, len);

		if (at >= 0 && rand() % 2 == 0) {
			assert_int_equal(pf_dir24_del(d, ip, len), 0);
			m->ip[at] = m->ip[m->n - 1];
			m->len[at] = m->len[m->n - 1];
			m->hop[at] = m->hop[--m->n];
		} else if (at >= 0 || m->n < MAXR) {
			int rc = pf_dir24_add(d, ip, len, hop);

			if (rc == -ENOSPC) {
				/* Out of tbl8 groups: nothing changed. */
				assert_true(len > 24 && at < 0);
			} else {
				assert_int_equal(rc, 0);
				if (at < 0)
					at = (int)m->n++;
				m->ip[at] = ip;
				m->len[at] = len;
				m->hop[at] = hop;
			}
		}
		check_around(lpm, m, ip, len);
		assert_int_equal(pf_dir24_routes(d), m->n);
	}
	/* Everything agrees, everywhere in the space. */
	for (i = 0; i < 20000; i++)
		check_addr(lpm, m, (10u << 24) | ((uint32_t)rand() & 0x3ffff));
	/* Delete all: the table is empty and every group folded back. */
	while (m->n != 0) {
		uint32_t ip;
		uint8_t len;

		k = (uint32_t)rand() % m->n;
		ip = m->ip[k];
		len = m->len[k];
		assert_int_equal(pf_dir24_del(d, ip, len), 0);
		m->ip[k] = m->ip[m->n - 1];
		m->len[k] = m->len[m->n - 1];
		m->hop[k] = m->hop[--m->n];
		check_around(lpm, m, ip, len);
	}
	for (i = 0; i < 2000; i++)
		check_addr(lpm, m, (10u << 24) | ((uint32_t)rand() & 0x3ffff));
	assert_int_equal(pf_dir24_routes(d), 0);
	/* No runtime: every grace period is over at once. */
	assert_true(pf_dir24_groups_used(d) > 0);
	pf_dir24_reclaim(d);
	assert_int_equal(pf_dir24_groups_used(d), 0);
	pf_dir24_free(d);
	rte_lpm_free(lpm);
	free(m);
}

/* A delete of an absent route, bad prefixes, a hop over 24 bits: refused, nothing written. */
static void
test_refusals(void **state)
{
	struct rte_lpm *lpm = make_lpm();
	struct pf_dir24 *d = pf_dir24_create(lpm, 0, GROUPS, 16, SOCKET_ID_ANY);
	uint32_t hop;

	assert_non_null(d);
	assert_int_equal(pf_dir24_del(d, 0x0a000000, 8), -ENOENT);
	assert_int_equal(pf_dir24_add(d, 0x0a000001, 24, 5), -EINVAL);
	assert_int_equal(pf_dir24_add(d, 0x0a000000, 0, 5), -EINVAL);
	assert_int_equal(pf_dir24_add(d, 0x0a000000, 33, 5), -EINVAL);
	assert_int_equal(pf_dir24_add(d, 0x0a000000, 8, 1u << 24), -EINVAL);
	assert_int_equal(pf_dir24_add(d, 0x0a000000, 8, 5), 0);
	assert_int_equal(pf_dir24_add(d, 0x0a000000, 8, 6), 0);   /* a replace */
	assert_int_equal(pf_dir24_routes(d), 1);
	assert_int_equal(pf_dir24_get(d, 0x0a000000, 8, &hop), 0);
	assert_int_equal(hop, 6);
	assert_int_equal(rte_lpm_lookup(lpm, 0x0a010203, &hop), 0);
	assert_int_equal(hop, 6);
	pf_dir24_free(d);
	rte_lpm_free(lpm);
}

/* Out of tbl8 groups: the /25 is refused and nothing else changes; a fold frees one. */
static void
test_groups_full(void **state)
{
	struct rte_lpm *lpm = make_lpm();
	struct pf_dir24 *d = pf_dir24_create(lpm, GROUPS - 1, GROUPS, 16, SOCKET_ID_ANY);
	uint32_t hop;

	assert_non_null(d);
	assert_int_equal(pf_dir24_add(d, 0x0a000000, 16, 1), 0);
	assert_int_equal(pf_dir24_add(d, 0x0a000080, 25, 2), 0);
	assert_int_equal(pf_dir24_add(d, 0x0a000180, 25, 3), -ENOSPC);
	assert_int_equal(rte_lpm_lookup(lpm, 0x0a000181, &hop), 0);
	assert_int_equal(hop, 1);
	assert_int_equal(pf_dir24_routes(d), 2);
	/* The /25 goes, its group folds, and (no runtime: the grace is over) serves again. */
	assert_int_equal(pf_dir24_del(d, 0x0a000080, 25), 0);
	assert_int_equal(pf_dir24_add(d, 0x0a000180, 25, 3), 0);
	assert_int_equal(rte_lpm_lookup(lpm, 0x0a000181, &hop), 0);
	assert_int_equal(hop, 3);
	assert_int_equal(rte_lpm_lookup(lpm, 0x0a000081, &hop), 0);
	assert_int_equal(hop, 1);
	pf_dir24_free(d);
	rte_lpm_free(lpm);
}

/* Routes by next hop: what a next hop that changes its flags walks. */
static void
collect(void *arg, uint32_t ip, uint8_t len)
{
	(*(uint32_t *)arg)++;
}

static void
test_each_hop(void **state)
{
	struct rte_lpm *lpm = make_lpm();
	struct pf_dir24 *d = pf_dir24_create(lpm, 0, GROUPS, 64, SOCKET_ID_ANY);
	uint32_t n = 0, i;

	assert_non_null(d);
	for (i = 0; i < 20; i++)
		assert_int_equal(pf_dir24_add(d, (10u << 24) | (i << 8), 24, i % 2 ? 7 : 8), 0);
	assert_int_equal(pf_dir24_each_hop(d, 7, collect, &n), 10);
	assert_int_equal(n, 10);
	pf_dir24_free(d);
	rte_lpm_free(lpm);
}

/*
 * Forwarding goes on during churn without a misrouted packet: a reader thread
 * (a worker, reporting quiescent states to a QSBR the services use, as the
 * runtime's do) looks up addresses whose routes never change while the
 * writer adds and deletes routes beside them: more specific prefixes in the
 * same /24s (so their tbl8 groups are made, filled, folded and reused) and
 * other /24s under the same covering /16. Every lookup must give the stable
 * route's next hop.
 */
#define CHURN_NETS 32

struct reader {
	struct rte_lpm *lpm;
	struct rte_rcu_qsbr *v;
	volatile int stop;
	uint64_t lookups, wrong, last_wrong;
	uint32_t probe[CHURN_NETS * 3], want[CHURN_NETS * 3];
};

static void *
reader_loop(void *arg)
{
	struct reader *r = arg;
	uint32_t i, hop;

	rte_rcu_qsbr_thread_register(r->v, 0);
	rte_rcu_qsbr_thread_online(r->v, 0);
	while (!r->stop) {
		for (i = 0; i < RTE_DIM(r->probe); i++) {
			if (rte_lpm_lookup(r->lpm, r->probe[i], &hop) != 0 || hop != r->want[i]) {
				r->wrong++;
				r->last_wrong = r->probe[i];
			}
			r->lookups++;
		}
		rte_rcu_qsbr_quiescent(r->v, 0);
	}
	rte_rcu_qsbr_thread_offline(r->v, 0);
	rte_rcu_qsbr_thread_unregister(r->v, 0);
	return NULL;
}

static void
test_churn_readers(void **state)
{
	struct rte_lpm_config lc = { .max_rules = 1, .number_tbl8s = 4 * CHURN_NETS };
	struct rte_lpm *lpm = rte_lpm_create("ut_dir24_churn", SOCKET_ID_ANY, &lc);
	struct reader *r = calloc(1, sizeof(*r));
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	struct rte_rcu_qsbr *v = rte_zmalloc("ut_dir24_qsbr", sz, RTE_CACHE_LINE_SIZE);
	struct pf_dir24 *d;
	pthread_t t;
	uint32_t k, net, ops = 0;

	assert_non_null(lpm);
	assert_non_null(r);
	assert_non_null(v);
	assert_int_equal(rte_rcu_qsbr_init(v, 1), 0);
	d = pf_dir24_create(lpm, 0, 4 * CHURN_NETS, 1024, SOCKET_ID_ANY);
	assert_non_null(d);
	for (net = 0; net < CHURN_NETS; net++) {
		uint32_t base = (10u << 24) | (net << 16);

		/* stable: the /16, a /24 with a /25 inside (a tbl8 group) */
		assert_int_equal(pf_dir24_add(d, base, 16, 100 + net), 0);
		assert_int_equal(pf_dir24_add(d, base | (5 << 8), 24, 200 + net), 0);
		assert_int_equal(pf_dir24_add(d, base | (5 << 8) | 128, 25, 300 + net), 0);
		r->probe[net * 3] = base | (5 << 8) | 1;           /* the /24's, in a group */
		r->want[net * 3] = 200 + net;
		r->probe[net * 3 + 1] = base | (5 << 8) | 200;     /* the /25's */
		r->want[net * 3 + 1] = 300 + net;
		r->probe[net * 3 + 2] = base | (7 << 8) | 9;       /* the /16's, /24 7 churns */
		r->want[net * 3 + 2] = 100 + net;
	}
	r->lpm = lpm;
	r->v = v;
	pf_services_set_qsbr(v);
	assert_int_equal(pthread_create(&t, NULL, reader_loop, r), 0);
	srand(11);
	for (k = 0; k < 200000 || r->lookups < 1000000; k++) {
		/* beside the probes: .32/27 and .64/26 of /24 5, /24 7's .64/26 and
		 * .16/28 (not .9), and whole /24s 8..11 of the /16 */
		static const struct { uint32_t off; uint8_t len; } churn[] = {
			{ (5 << 8) | 32, 27 }, { (5 << 8) | 64, 26 }, { (7 << 8) | 64, 26 },
			{ (7 << 8) | 16, 28 }, { 8 << 8, 24 }, { 9 << 8, 24 }, { 10 << 8, 24 },
			{ (11 << 8) | 128, 25 },
		};
		uint32_t c = (uint32_t)rand() % RTE_DIM(churn);
		uint32_t ip = (10u << 24) | (((uint32_t)rand() % CHURN_NETS) << 16) | churn[c].off;
		uint32_t hop;

		if (pf_dir24_get(d, ip, churn[c].len, &hop) == 0 && rand() % 2 == 0)
			assert_int_equal(pf_dir24_del(d, ip, churn[c].len), 0);
		else if (pf_dir24_add(d, ip, churn[c].len, 1000 + (uint32_t)rand() % 1000) ==
			 -ENOSPC)
			/* Folded groups wait for the reader's grace period: a busy
			 * reader leaves none free for a while (refused, nothing changed). */
			continue;
		ops++;
		if (k > 10000000)
			break;
	}
	r->stop = 1;
	pthread_join(t, NULL);
	pf_services_set_qsbr(NULL);
	if (r->wrong != 0)
		fail_msg("%" PRIu64 " of %" PRIu64 " lookups wrong during %u updates (last %u.%u.%u.%u)",
			 r->wrong, r->lookups, ops, r->last_wrong >> 24, (r->last_wrong >> 16) & 0xff,
			 (r->last_wrong >> 8) & 0xff, r->last_wrong & 0xff);
	print_message("%" PRIu64 " lookups right during %u updates\n", r->lookups, ops);
	pf_dir24_free(d);
	rte_lpm_free(lpm);
	rte_free(v);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_groups_full),
		cmocka_unit_test(test_each_hop),
		cmocka_unit_test(test_churn_readers),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
