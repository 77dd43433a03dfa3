/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The l2fib key table (stages/l2fib_hash.c) against a plain model: random
 * adds, deletes (freed at once or held for a grace period) and lookups on
 * tables small enough that keys overflow their home bucket, plus keys all
 * hashed to one bucket. Checks that a key keeps its position while it is in,
 * that every key in is found and every key out is not, and that the
 * overflow counts return to zero when the table empties.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_malloc.h>

#include "pf_test.h"
#include "../../stages/l2fib.h"

#define MODEL_MAX 4096

struct model {
	uint64_t key[MODEL_MAX];
	int32_t pos[MODEL_MAX];
	bool in[MODEL_MAX];
	uint32_t n;
};

static uint64_t
rnd_key(unsigned int *seed)
{
	uint64_t mac = ((uint64_t)rand_r(seed) << 24 ^ (uint64_t)rand_r(seed)) & 0xffffffffffffull;

	return mac | (uint64_t)(rand_r(seed) % 4) << 48;
}

static void
check_model(const struct l2_priv *l2, const struct model *m)
{
	uint32_t i;

	for (i = 0; i < m->n; i++) {
		int32_t p = l2_tbl_find(l2, m->key[i], l2_hash_key(m->key[i], l2->seed));
		uint64_t k;

		if (m->in[i]) {
			assert_int_equal(p, m->pos[i]);
			assert_true(l2_tbl_key_at(l2, (uint32_t)p, &k));
			assert_true(k == m->key[i]);
		} else {
			assert_int_equal(p, -ENOENT);
		}
	}
}

static void
run(uint32_t cap, bool mt, bool one_bucket, unsigned int seed)
{
	struct l2_table tb = { .mt = mt };
	struct l2_priv l2 = { .tb = &tb };
	static struct model m;
	uint32_t n_in = 0, round, i, b, held[MODEL_MAX], n_held = 0;

	memset(&m, 0, sizeof(m));
	assert_int_equal(l2_tbl_create(&tb, cap, (uint32_t)rand_r(&seed), SOCKET_ID_ANY), 0);
	l2_tbl_view(&l2, &tb);
	assert_true(tb.n_pos >= cap + cap / 4);
	for (round = 0; round < 20000; round++) {
		int op = rand_r(&seed) % 8;

		if (op < 4 && n_in + n_held < cap && m.n < MODEL_MAX) {
			uint64_t k;

			do {
				k = rnd_key(&seed);
			} while (one_bucket && (l2_hash_key(k, l2.seed) & l2.bmask) != 0);
			for (i = 0; i < m.n && m.key[i] != k; i++)
				;
			if (i == m.n)
				m.key[m.n++] = k;
			if (!m.in[i]) {
				m.pos[i] = l2_tbl_add(&l2, k);
				assert_true(m.pos[i] >= 0 && (uint32_t)m.pos[i] < tb.n_pos);
				m.in[i] = true;
				n_in++;
			} else {
				/* Adding a key that is in gives its position. */
				assert_int_equal(l2_tbl_add(&l2, k), m.pos[i]);
			}
		} else if (op < 7 && n_in > 0) {
			do {
				i = (uint32_t)rand_r(&seed) % m.n;
			} while (!m.in[i]);
			l2_tbl_del(&l2, (uint32_t)m.pos[i], mt);
			if (mt)
				held[n_held++] = (uint32_t)m.pos[i];
			m.in[i] = false;
			n_in--;
		} else {
			/* A grace period passed: held positions become free. */
			for (i = 0; i < n_held; i++)
				l2_tbl_release(&l2, held[i]);
			n_held = 0;
		}
		if (round % 97 == 0)
			check_model(&l2, &m);
	}
	check_model(&l2, &m);
	for (i = 0; i < m.n; i++)
		if (m.in[i])
			l2_tbl_del(&l2, (uint32_t)m.pos[i], false);
	for (i = 0; i < n_held; i++)
		l2_tbl_release(&l2, held[i]);
	for (b = 0; b <= tb.bmask; b++)
		assert_int_equal(tb.ovf[b], 0);
	for (i = 0; i < tb.n_pos; i++)
		assert_true(tb.keys[i] == L2_KEY_FREE);
	l2_tbl_destroy(&tb);
}

static void
test_small_tables(void **state)
{
	unsigned int s;

	(void)state;
	for (s = 1; s <= 4; s++) {
		run(8 * s, false, false, s);
		run(8 * s, true, false, 100 + s);
		run(200, s & 1, false, 200 + s);
	}
}

static void
test_one_bucket(void **state)
{
	(void)state;
	/* Every key hashed to bucket 0: long overflow chains through all buckets. */
	run(40, false, true, 7);
	run(40, true, true, 8);
}

static void
test_full_table(void **state)
{
	struct l2_table tb = { 0 };
	struct l2_priv l2 = { .tb = &tb };
	unsigned int seed = 3;
	uint32_t i;

	(void)state;
	assert_int_equal(l2_tbl_create(&tb, 10, 1, SOCKET_ID_ANY), 0);
	l2_tbl_view(&l2, &tb);
	/* Every slot takes a key; the next add is refused, never looping. */
	for (i = 0; i < tb.n_pos; i++)
		assert_true(l2_tbl_add(&l2, rnd_key(&seed) | 1ull << 40) >= 0);
	assert_int_equal(l2_tbl_add(&l2, 0x123456ull), -ENOSPC);
	assert_int_equal(l2_tbl_find(&l2, 0x123456ull, l2_hash_key(0x123456ull, l2.seed)),
			 -ENOENT);
	l2_tbl_destroy(&tb);
}

static int
setup(void **state)
{
	char name[32];

	(void)state;
	snprintf(name, sizeof(name), "l2hash_%d", (int)getpid());
	return pf_test_eal_init(name);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_tables),
		cmocka_unit_test(test_one_bucket),
		cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
