/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fib_study: which DPDK table should hold learnt routes (issue 30 item 5)?
 *
 * Loads a route file (scripts/gen_routes.py: "PREFIX/LEN nhK" lines) into each
 * candidate table and measures, on this machine: build time, memory (rte_malloc
 * heap growth), single add / replace / delete latency with the table loaded,
 * sustained updates per second, and bulk lookup cost in cycles per lookup
 * (bursts of 32, random and sequential destinations). Candidates:
 *
 *   IPv4: lpm       rte_lpm through rte_lpm_add/rte_lpm_delete (incremental)
 *         dir24     rte_lpm updated by stages/lib/dir24.c (pf_dir24_add/del: the
 *                   routes in an rte_rib, each update writing only its own entries;
 *                   what lpm's learnt routes use)
 *         fib       rte_fib DIR24_8, 4-byte next hops (its rte_rib underneath)
 *         rib       rte_rib alone (the control-plane tree rte_fib keeps)
 *   IPv6: lpm6      rte_lpm6 through rte_lpm6_add/rte_lpm6_delete (as lpm6)
 *         fib6      rte_fib6 TRIE, 4-byte next hops (rte_rib6 underneath)
 *         rib6      rte_rib6 alone
 *
 *   fib_study [EAL args] -- -r FILE [-6] [-i impl,impl] [-s SECONDS] [-k SAMPLE]
 *
 * Every table's lookups are checked against the first one's after the build,
 * so a figure never comes from a table that routes wrongly. Wall-clock figures
 * on a shared machine are noisy: latencies are medians and p99 of -k single
 * operations; the sustained rate runs for -s seconds at most (docs/controlplane.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_rib.h>
#include <rte_rib6.h>
#include <rte_vect.h>

#include "pf_dir24.h"
#include "pf_services.h"

#define BURST 32
#define N_DST (1u << 16)	/* destinations per lookup pattern */
#define N_CHECK 4096		/* lookups compared between tables */

struct route {
	uint8_t ip[16];		/* IPv4: first 4 bytes, network order */
	uint8_t len;
	uint32_t nh;		/* 1.. (0 is "no route") */
};

struct routes {
	struct route *r;
	uint32_t n;
	bool v6;
	uint32_t tbl8;		/* tbl8 groups the set needs (DIR-24-8 and lpm6 alike) */
	uint32_t tbl8_rsvd;	/* what rte_fib6 reserves: (ceil8(len) - 24) / 8 per route */
};

/* One candidate table. */
struct impl {
	const char *name;
	bool v6;
	void *(*create)(const struct routes *rs);
	int (*add)(void *t, const struct route *r, uint32_t nh);
	int (*del)(void *t, const struct route *r);
	/* Look up @n (<= BURST) addresses; hops out as uint64 (0 = miss). */
	void (*lookup)(void *t, const void *dst, uint64_t *hop, unsigned int n);
	/* A second lookup flavour (rte_lpm_lookupx4), or NULL. */
	void (*lookup2)(void *t, const void *dst, uint64_t *hop, unsigned int n);
	const char *lookup2_name;
	/* Switch the table's lookups to AVX-512 and back (0 if it can), or NULL. */
	int (*vector)(void *t, bool on);
	void (*destroy)(void *t);
	/* A plain control-plane tree: no data-path lookup comparison. */
	bool tree;
};

static uint64_t tsc_hz;

/*
 * CPU time of this thread: on a shared machine the wall clock counts the
 * time other jobs had the CPU; this does not (their cache pollution stays).
 */
static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static unsigned int seq;

static uint32_t
ip4(const struct route *r)
{
	uint32_t a;

	memcpy(&a, r->ip, 4);
	return ntohl(a);
}

static uint64_t
heap_used(void)
{
	struct rte_malloc_socket_stats s;
	uint64_t sum = 0;
	int i;

	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (rte_malloc_get_socket_stats(i, &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

static void
name_next(char *buf, size_t n, const char *what)
{
	snprintf(buf, n, "fs_%s%u", what, seq++);
}

/* ---- rte_lpm through its API -------------------------------------------- */

static void *
lpm_create(const struct routes *rs)
{
	/* Slack for the churn's adds: a delete frees a group, an add may take one. */
	struct rte_lpm_config lc = { .max_rules = rs->n + 1024,
				     .number_tbl8s = rs->tbl8 + rs->tbl8 / 8 + 1024 };
	char name[32];

	name_next(name, sizeof(name), "lpm");
	return rte_lpm_create(name, SOCKET_ID_ANY, &lc);
}

static int
lpm_add(void *t, const struct route *r, uint32_t nh)
{
	return rte_lpm_add(t, ip4(r), r->len, nh);
}

static int
lpm_del(void *t, const struct route *r)
{
	return rte_lpm_delete(t, ip4(r), r->len);
}

static void
lpm_lookup_bulk(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	uint32_t h[BURST];
	unsigned int i;

	rte_lpm_lookup_bulk((struct rte_lpm *)t, dst, h, n);
	for (i = 0; i < n; i++)
		hop[i] = (h[i] & RTE_LPM_LOOKUP_SUCCESS) ? (h[i] & 0x00ffffff) : 0;
}

/* As the lpm stage's data path: rte_lpm_lookupx4 per four addresses. */
static void
lpm_lookup_x4(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	const uint32_t *d = dst;
	uint32_t h[4];
	unsigned int i, j;

	for (i = 0; i + 4 <= n; i += 4) {
		xmm_t v = _mm_loadu_si128((const __m128i *)(d + i));

		rte_lpm_lookupx4(t, v, h, 0);
		for (j = 0; j < 4; j++)
			hop[i + j] = h[j];
	}
	for (; i < n; i++) {
		uint32_t x;

		hop[i] = rte_lpm_lookup(t, d[i], &x) == 0 ? x : 0;
	}
}

static void
lpm_destroy(void *t)
{
	rte_lpm_free(t);
}

/* ---- rte_lpm through stages/lib/dir24.c ----------------------------------- */

/*
 * dir24.c reuses a folded tbl8 group after a grace period; with no workers
 * running here every grace period is over at once (as in the unit tests).
 */
uint64_t
pf_rcu_start(void)
{
	return 0;
}

bool
pf_rcu_done(uint64_t token)
{
	(void)token;
	return true;
}

struct dir24_t {
	struct rte_lpm *lpm;
	struct pf_dir24 *d;
};

static void
dir24_destroy(void *t)
{
	struct dir24_t *x = t;

	pf_dir24_free(x->d);
	rte_lpm_free(x->lpm);
	free(x);
}

static void *
dir24_create(const struct routes *rs)
{
	uint32_t groups = rs->tbl8 + rs->tbl8 / 8 + 1024;
	struct rte_lpm_config lc = { .max_rules = 1, .number_tbl8s = groups };
	struct dir24_t *x = calloc(1, sizeof(*x));
	char name[32];

	if (x == NULL)
		return NULL;
	name_next(name, sizeof(name), "dir");
	x->lpm = rte_lpm_create(name, SOCKET_ID_ANY, &lc);
	if (x->lpm != NULL)
		x->d = pf_dir24_create(x->lpm, 0, groups, rs->n + 4096, SOCKET_ID_ANY);
	if (x->d == NULL) {
		dir24_destroy(x);
		return NULL;
	}
	return x;
}

static int
dir24_add(void *t, const struct route *r, uint32_t nh)
{
	return pf_dir24_add(((struct dir24_t *)t)->d, ip4(r), r->len, nh);
}

static int
dir24_del(void *t, const struct route *r)
{
	return pf_dir24_del(((struct dir24_t *)t)->d, ip4(r), r->len);
}

static void
dir24_lookup_bulk(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	lpm_lookup_bulk(((struct dir24_t *)t)->lpm, dst, hop, n);
}

static void
dir24_lookup_x4(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	lpm_lookup_x4(((struct dir24_t *)t)->lpm, dst, hop, n);
}

/* ---- rte_fib DIR24_8 ---------------------------------------------------- */

static void *
fib_create(const struct routes *rs)
{
	/* rte_fib_create gives its RIB twice max_routes nodes (routes and branch points). */
	struct rte_fib_conf fc = { .type = RTE_FIB_DIR24_8, .default_nh = 0,
				   .max_routes = rs->n + 4096,
				   .dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_4B,
						.num_tbl8 = rs->tbl8 + rs->tbl8 / 8 + 1024 } };
	char name[32];

	name_next(name, sizeof(name), "fib");
	return rte_fib_create(name, SOCKET_ID_ANY, &fc);
}

static int
fib_add(void *t, const struct route *r, uint32_t nh)
{
	return rte_fib_add(t, ip4(r), r->len, nh);
}

static int
fib_del(void *t, const struct route *r)
{
	return rte_fib_delete(t, ip4(r), r->len);
}

static void
fib_lookup(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	rte_fib_lookup_bulk(t, (uint32_t *)(uintptr_t)dst, hop, (int)n);
}

static int
fib_vector(void *t, bool on)
{
	if (on && rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) != 0)
		return -1;
	return rte_fib_select_lookup(t, on ? RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512 :
					     RTE_FIB_LOOKUP_DIR24_8_SCALAR_MACRO);
}

static void
fib_destroy(void *t)
{
	rte_fib_free(t);
}

/* ---- rte_rib alone ------------------------------------------------------ */

static void *
rib_create(const struct routes *rs)
{
	struct rte_rib_conf rc = { .ext_sz = 0, .max_nodes = 2 * rs->n + 4096 };
	char name[32];

	name_next(name, sizeof(name), "rib");
	return rte_rib_create(name, SOCKET_ID_ANY, &rc);
}

static int
rib_add(void *t, const struct route *r, uint32_t nh)
{
	struct rte_rib_node *node = rte_rib_lookup_exact(t, ip4(r), r->len);

	if (node == NULL)
		node = rte_rib_insert(t, ip4(r), r->len);
	if (node == NULL)
		return -rte_errno;
	return rte_rib_set_nh(node, nh);
}

static int
rib_del(void *t, const struct route *r)
{
	rte_rib_remove(t, ip4(r), r->len);
	return 0;
}

static void
rib_lookup(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	const uint32_t *d = dst;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_rib_node *node = rte_rib_lookup(t, d[i]);

		hop[i] = 0;
		if (node != NULL)
			rte_rib_get_nh(node, &hop[i]);
	}
}

static void
rib_destroy(void *t)
{
	rte_rib_free(t);
}

/* ---- rte_lpm6 ----------------------------------------------------------- */

static void *
lpm6_create(const struct routes *rs)
{
	struct rte_lpm6_config lc = { .max_rules = rs->n + 1024,
				      .number_tbl8s = rs->tbl8 + rs->tbl8 / 8 + 1024 };
	char name[32];

	name_next(name, sizeof(name), "lpm6");
	return rte_lpm6_create(name, SOCKET_ID_ANY, &lc);
}

static int
lpm6_add(void *t, const struct route *r, uint32_t nh)
{
	return rte_lpm6_add(t, r->ip, r->len, nh);
}

static int
lpm6_del(void *t, const struct route *r)
{
	return rte_lpm6_delete(t, r->ip, r->len);
}

static void
lpm6_lookup(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	int32_t h[BURST];
	unsigned int i;

	rte_lpm6_lookup_bulk_func(t, (uint8_t (*)[16])(uintptr_t)dst, h, n);
	for (i = 0; i < n; i++)
		hop[i] = h[i] < 0 ? 0 : (uint64_t)h[i];
}

static void
lpm6_destroy(void *t)
{
	rte_lpm6_free(t);
}

/* ---- rte_fib6 TRIE ------------------------------------------------------ */

static void *
fib6_create(const struct routes *rs)
{
	struct rte_fib6_conf fc = { .type = RTE_FIB6_TRIE, .default_nh = 0,
				    .max_routes = rs->n + 4096,
				    .trie = { .nh_sz = RTE_FIB6_TRIE_4B,
					      .num_tbl8 = rs->tbl8_rsvd + 1024 } };
	char name[32];

	/*
	 * trie.c refuses an add unless the groups it reserves fit: for each route
	 * longer than /24, one per byte below its covering route (or /24), whatever
	 * the groups the table really shares. Sized for any insertion order: as if
	 * no route covered another.
	 */
	name_next(name, sizeof(name), "fib6");
	return rte_fib6_create(name, SOCKET_ID_ANY, &fc);
}

static int
fib6_add(void *t, const struct route *r, uint32_t nh)
{
	return rte_fib6_add(t, r->ip, r->len, nh);
}

static int
fib6_del(void *t, const struct route *r)
{
	return rte_fib6_delete(t, r->ip, r->len);
}

static void
fib6_lookup(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	rte_fib6_lookup_bulk(t, (uint8_t (*)[16])(uintptr_t)dst, hop, (int)n);
}

static int
fib6_vector(void *t, bool on)
{
	if (on && rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) != 0)
		return -1;
	return rte_fib6_select_lookup(t, on ? RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512 :
					      RTE_FIB6_LOOKUP_TRIE_SCALAR);
}

static void
fib6_destroy(void *t)
{
	rte_fib6_free(t);
}

/* ---- rte_rib6 alone ----------------------------------------------------- */

static void *
rib6_create(const struct routes *rs)
{
	struct rte_rib6_conf rc = { .ext_sz = 0, .max_nodes = 2 * rs->n + 4096 };
	char name[32];

	name_next(name, sizeof(name), "rib6");
	return rte_rib6_create(name, SOCKET_ID_ANY, &rc);
}

static int
rib6_add(void *t, const struct route *r, uint32_t nh)
{
	struct rte_rib6_node *node = rte_rib6_lookup_exact(t, r->ip, r->len);

	if (node == NULL)
		node = rte_rib6_insert(t, r->ip, r->len);
	if (node == NULL)
		return -rte_errno;
	return rte_rib6_set_nh(node, nh);
}

static int
rib6_del(void *t, const struct route *r)
{
	rte_rib6_remove(t, r->ip, r->len);
	return 0;
}

static void
rib6_lookup(void *t, const void *dst, uint64_t *hop, unsigned int n)
{
	const uint8_t (*d)[16] = dst;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_rib6_node *node = rte_rib6_lookup(t, d[i]);

		hop[i] = 0;
		if (node != NULL)
			rte_rib6_get_nh(node, &hop[i]);
	}
}

static void
rib6_destroy(void *t)
{
	rte_rib6_free(t);
}

static const struct impl impls[] = {
	{ "lpm", false, lpm_create, lpm_add, lpm_del, lpm_lookup_bulk, lpm_lookup_x4,
	  "rte_lpm_lookupx4, as lpm", NULL, lpm_destroy, false },
	{ "dir24", false, dir24_create, dir24_add, dir24_del, dir24_lookup_bulk, dir24_lookup_x4,
	  "rte_lpm_lookupx4, as lpm", NULL, dir24_destroy, false },
	{ "fib", false, fib_create, fib_add, fib_del, fib_lookup, NULL, NULL, fib_vector,
	  fib_destroy, false },
	{ "rib", false, rib_create, rib_add, rib_del, rib_lookup, NULL, NULL, NULL, rib_destroy,
	  true },
	{ "lpm6", true, lpm6_create, lpm6_add, lpm6_del, lpm6_lookup, NULL, NULL, NULL,
	  lpm6_destroy, false },
	{ "fib6", true, fib6_create, fib6_add, fib6_del, fib6_lookup, NULL, NULL, fib6_vector,
	  fib6_destroy, false },
	{ "rib6", true, rib6_create, rib6_add, rib6_del, rib6_lookup, NULL, NULL, NULL,
	  rib6_destroy, true },
};

/* ---- the route set ------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
mask(uint8_t *ip, uint8_t len, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		ip[i] &= (uint8_t)(len >= (i + 1) * 8 ? 0xff :
				   len <= i * 8 ? 0 : 0xff << (8 - (len - i * 8)));
}

static int
cmp_prefix(const void *a, const void *b)
{
	return memcmp(((const struct route *)a)->ip, ((const struct route *)b)->ip, 16);
}

/* tbl8 groups: one per distinct first k bytes (k = 3..) among prefixes longer than 8k. */
static uint32_t
count_tbl8(const struct routes *rs)
{
	struct route *s = malloc(sizeof(*s) * rs->n);
	uint8_t last[16][16];
	bool have[16] = { false };
	unsigned int k, kmax = rs->v6 ? 16 : 4;
	uint32_t i, n = 0;

	if (s == NULL)
		return 0;
	memcpy(s, rs->r, sizeof(*s) * rs->n);
	qsort(s, rs->n, sizeof(*s), cmp_prefix);
	for (i = 0; i < rs->n; i++)
		for (k = 3; k < kmax && s[i].len > 8 * k; k++) {
			if (have[k] && memcmp(last[k], s[i].ip, k) == 0)
				continue;
			memcpy(last[k], s[i].ip, k);
			have[k] = true;
			n++;
		}
	free(s);
	return n;
}

static uint32_t
count_fib6_rsvd(const struct routes *rs)
{
	uint32_t i, n = 0;

	for (i = 0; i < rs->n; i++)
		if (rs->r[i].len > 24)
			n += (RTE_ALIGN_CEIL(rs->r[i].len, 8) - 24) / 8;
	return n;
}

static int
load_routes(const char *path, bool v6, struct routes *rs)
{
	FILE *f = fopen(path, "r");
	char line[256], addr[128];
	unsigned int len, nh;
	uint32_t cap = 1024;

	if (f == NULL)
		return -errno;
	rs->r = malloc(sizeof(*rs->r) * cap);
	rs->n = 0;
	rs->v6 = v6;
	while (rs->r != NULL && fgets(line, sizeof(line), f) != NULL) {
		struct route r = { 0 };
		char *slash;

		if (line[0] == '#' || sscanf(line, "%127s nh%u", addr, &nh) != 2)
			continue;
		slash = strchr(addr, '/');
		if (slash == NULL)
			continue;
		*slash = '\0';
		len = (unsigned int)atoi(slash + 1);
		if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, r.ip) != 1 || len == 0 ||
		    len > (v6 ? 128u : 32u))
			continue;
		r.len = (uint8_t)len;
		r.nh = nh + 1;
		mask(r.ip, r.len, v6 ? 16 : 4);
		if (rs->n == cap) {
			cap *= 2;
			rs->r = realloc(rs->r, sizeof(*rs->r) * cap);
			if (rs->r == NULL)
				break;
		}
		rs->r[rs->n++] = r;
	}
	fclose(f);
	if (rs->r == NULL)
		return -ENOMEM;
	rs->tbl8 = count_tbl8(rs);
	rs->tbl8_rsvd = count_fib6_rsvd(rs);
	return rs->n > 0 ? 0 : -ENOENT;
}

/* Destinations: inside random routes, or consecutive addresses from one. */
static void *
make_dst(const struct routes *rs, bool sequential)
{
	size_t w = rs->v6 ? 16 : 4;
	uint8_t *d = malloc(w * N_DST);
	uint32_t i;

	if (d == NULL)
		return NULL;
	for (i = 0; i < N_DST; i++) {
		const struct route *r = &rs->r[sequential ? 0 : rnd() % rs->n];

		if (rs->v6) {
			uint8_t a[16];
			uint64_t x = rnd(), y = rnd();
			unsigned int b;

			memcpy(a, r->ip, 16);
			if (sequential) {
				/* the route's first address plus i, in the last 32 bits */
				uint32_t lo = htonl(i);

				memcpy(a + 12, &lo, 4);
			} else {
				for (b = 0; b < 16; b++) {
					uint8_t host = (uint8_t)((b < 8 ? x >> (8 * b) : y >> (8 * (b - 8))));
					uint8_t m = (uint8_t)(r->len >= (b + 1) * 8 ? 0xff :
							      r->len <= b * 8 ? 0 :
							      0xff << (8 - (r->len - b * 8)));

					a[b] = (uint8_t)((r->ip[b] & m) | (host & ~m));
				}
			}
			memcpy(d + w * i, a, 16);
		} else {
			uint32_t base = ip4(r), host = r->len == 32 ? 0 : (uint32_t)(~0u >> r->len);
			uint32_t a = sequential ? base + i : (base | ((uint32_t)rnd() & host));

			/* rte_lpm and rte_fib take addresses in host order */
			memcpy(d + w * i, &a, 4);
		}
	}
	return d;
}

/* ---- measurements ------------------------------------------------------- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
us(uint64_t cycles)
{
	return (double)cycles * 1e6 / (double)tsc_hz;
}

static void
print_lat(const char *impl, const char *op, uint64_t *lat, uint32_t n, uint32_t fails)
{
	if (n == 0)
		return;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("%-8s %-8s median %9.2f us  p99 %9.2f us  max %9.2f us  (%u ops, %u failed)\n",
	       impl, op, us(lat[n / 2]), us(lat[(uint64_t)n * 99 / 100]), us(lat[n - 1]), n, fails);
}

#define ROUNDS 7
#define MAX_TABLES 8
#define MAX_FLAVOURS 3

typedef void lookup_fn(void *t, const void *dst, uint64_t *hop, unsigned int n);

/* One way to look a table up (bulk, x4, AVX-512) and its samples. */
struct flavour {
	const char *label;
	lookup_fn *fn;
	bool vector;		/* im->vector(t, true) before, (t, false) after */
	uint64_t cyc[2][ROUNDS];	/* random, sequential: cycles per round */
};

struct table {
	const struct impl *im;
	void *t;
	unsigned int n_fl;
	struct flavour fl[MAX_FLAVOURS];
};

struct opts {
	double seconds;		/* for each update measurement */
	double build_seconds;	/* give a build up after this */
	uint32_t sample;
};

/* Cycles for reps passes over N_DST destinations in bursts of BURST. */
static uint64_t
lookup_round(void *t, const void *dst, bool v6, lookup_fn *fn)
{
	size_t w = v6 ? 16 : 4;
	uint64_t hop[BURST], sum = 0, t0;
	uint32_t rep, i, reps = v6 ? 4 : 16;

	t0 = rte_rdtsc_precise();
	for (rep = 0; rep < reps; rep++)
		for (i = 0; i < N_DST; i += BURST) {
			fn(t, (const uint8_t *)dst + w * i, hop, BURST);
			sum += hop[0] + hop[BURST - 1];
		}
	t0 = rte_rdtsc_precise() - t0;
	if (sum == 1)
		printf(" ");
	return t0 / reps;
}

/*
 * Every table's every flavour, round after round, interleaved: the other jobs
 * on this machine disturb them all alike. Per lookup: the least and the median
 * of the rounds.
 */
static void
lookups(struct table *tb, unsigned int n, const void *dst_rand, const void *dst_seq, bool v6)
{
	unsigned int r, i, f, p;

	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < n; i++)
			for (f = 0; f < tb[i].n_fl; f++) {
				struct flavour *fl = &tb[i].fl[f];

				if (fl->vector)
					tb[i].im->vector(tb[i].t, true);
				for (p = 0; p < 2; p++) {
					const void *d = p == 0 ? dst_rand : dst_seq;

					if (r == 0)	/* warm-up */
						lookup_round(tb[i].t, d, v6, fl->fn);
					fl->cyc[p][r] = lookup_round(tb[i].t, d, v6, fl->fn);
				}
				if (fl->vector)
					tb[i].im->vector(tb[i].t, false);
			}
	for (i = 0; i < n; i++)
		for (f = 0; f < tb[i].n_fl; f++) {
			struct flavour *fl = &tb[i].fl[f];

			for (p = 0; p < 2; p++)
				qsort(fl->cyc[p], ROUNDS, sizeof(uint64_t), cmp_u64);
			printf("%-8s lookup   random %6.1f (median %6.1f)  sequential %5.1f (median %5.1f)"
			       " cycles  %s\n", tb[i].im->name, (double)fl->cyc[0][0] / N_DST,
			       (double)fl->cyc[0][ROUNDS / 2] / N_DST, (double)fl->cyc[1][0] / N_DST,
			       (double)fl->cyc[1][ROUNDS / 2] / N_DST, fl->label);
		}
	fflush(stdout);
}

static void
lookup_check(struct table *tb, const struct routes *rs, const void *dst, uint64_t *ref,
	     bool first, int *rc)
{
	size_t w = rs->v6 ? 16 : 4;
	uint64_t hop[BURST];
	uint32_t i, k, f, bad = 0;

	for (f = 0; f < tb->n_fl; f++) {
		if (tb->fl[f].vector)
			tb->im->vector(tb->t, true);
		for (i = 0; i < N_CHECK; i += BURST) {
			tb->fl[f].fn(tb->t, (const uint8_t *)dst + w * i, hop, BURST);
			for (k = 0; k < BURST; k++) {
				if (first && f == 0)
					ref[i + k] = hop[k];
				else if (ref[i + k] != hop[k])
					bad++;
			}
		}
		if (tb->fl[f].vector)
			tb->im->vector(tb->t, false);
	}
	if (bad != 0) {
		printf("%-8s WRONG: %u lookups differ from the first table's\n", tb->im->name, bad);
		*rc = 1;
	}
}

/* Create and fill a table; NULL when it cannot be made or filled in time. */
static void *
build(const struct impl *im, const struct routes *rs, const struct opts *o)
{
	uint64_t mem0 = heap_used(), t0, t1, deadline;
	uint32_t i, fails = 0;
	void *t;

	t0 = rte_rdtsc_precise();
	deadline = t0 + (uint64_t)(o->build_seconds * (double)tsc_hz);
	t = im->create(rs);
	if (t == NULL) {
		printf("%-8s cannot create: %s\n", im->name, rte_strerror(rte_errno));
		return NULL;
	}
	for (i = 0; i < rs->n; i++) {
		if (im->add(t, &rs->r[i], rs->r[i].nh) != 0)
			fails++;
		if ((i & 1023) == 1023 && rte_rdtsc() > deadline) {
			printf("%-8s build    given up: %u of %u routes in %.0f s\n", im->name,
			       i + 1, rs->n, (double)(rte_rdtsc() - t0) / (double)tsc_hz);
			im->destroy(t);
			return NULL;
		}
	}
	t1 = rte_rdtsc_precise();
	printf("%-8s build    %9.3f s  for %u routes (%u failed), memory %.1f MiB\n", im->name,
	       (double)(t1 - t0) / (double)tsc_hz, rs->n, fails,
	       (double)(heap_used() - mem0) / (1 << 20));
	fflush(stdout);
	return t;
}

/* Single operations on a loaded table, sustained churn, then a flush. */
static void
updates(const struct impl *im, void *t, const struct routes *rs, const struct opts *o)
{
	uint64_t t0, t1, *lat, deadline;
	uint32_t i, j, k, fails, done = 0, n_ops = 0, *pick;
	double c0;

	k = RTE_MIN(o->sample, rs->n);
	pick = malloc(sizeof(*pick) * k);
	lat = malloc(sizeof(*lat) * k);
	if (pick == NULL || lat == NULL)
		goto out;
	/* distinct picks: a duplicate would delete what is gone */
	for (i = 0; i < k; i++) {
		pick[i] = (uint32_t)(rnd() % rs->n);
		for (j = 0; j < i; j++)
			if (pick[j] == pick[i]) {
				pick[i] = (pick[i] + 1) % rs->n;
				j = (uint32_t)-1;
			}
	}
	/* Delete K routes one by one, add them back, then re-point them (replace). */
	deadline = rte_rdtsc() + (uint64_t)(o->seconds * (double)tsc_hz);
	fails = 0;
	for (i = 0; i < k && rte_rdtsc() < deadline; i++) {
		t0 = rte_rdtsc_precise();
		if (im->del(t, &rs->r[pick[i]]) != 0)
			fails++;
		lat[i] = rte_rdtsc_precise() - t0;
		done++;
	}
	print_lat(im->name, "delete", lat, done, fails);
	fails = 0;
	for (i = 0; i < done; i++) {
		t0 = rte_rdtsc_precise();
		if (im->add(t, &rs->r[pick[i]], rs->r[pick[i]].nh) != 0)
			fails++;
		lat[i] = rte_rdtsc_precise() - t0;
	}
	print_lat(im->name, "add", lat, done, fails);
	fails = 0;
	for (i = 0; i < done; i++) {
		t0 = rte_rdtsc_precise();
		if (im->add(t, &rs->r[pick[i]], rs->r[pick[i]].nh % 4000 + 2) != 0)
			fails++;
		lat[i] = rte_rdtsc_precise() - t0;
	}
	print_lat(im->name, "replace", lat, done, fails);
	fflush(stdout);
	/*
	 * Sustained churn as a BGP feed makes it: withdraw a route, announce it
	 * again on another next hop, re-point a third, each anywhere in the table
	 * (cold caches). The table holds the same prefixes throughout, so every
	 * operation must succeed.
	 */
	{
		uint32_t a, b, fails_add = 0, first_fail = 0;

		c0 = cpu_s();
		t0 = rte_rdtsc_precise();
		deadline = t0 + (uint64_t)(o->seconds * (double)tsc_hz);
		fails = 0;
		for (i = 0;; i++) {
			if ((i & 15) == 0 && rte_rdtsc() >= deadline)
				break;
			a = (uint32_t)(rnd() % rs->n);
			b = (uint32_t)(rnd() % rs->n);
			if (im->del(t, &rs->r[a]) != 0)
				fails++;
			if (im->add(t, &rs->r[a], (rs->r[a].nh + i) % 4000 + 1) != 0 &&
			    fails_add++ == 0)
				first_fail = n_ops;
			if (a != b && im->add(t, &rs->r[b], (rs->r[b].nh + 2 * i) % 4000 + 1) != 0)
				fails++;
			n_ops += a != b ? 3 : 2;
		}
		t1 = rte_rdtsc_precise();
		printf("%-8s churn    %10.0f updates/s  %10.0f per CPU second  "
		       "(%u updates in %.2f s, %u failed)\n", im->name,
		       (double)n_ops * (double)tsc_hz / (double)(t1 - t0),
		       (double)n_ops / (cpu_s() - c0), n_ops, (double)(t1 - t0) / (double)tsc_hz,
		       fails + fails_add);
		if (fails_add != 0)
			printf("%-8s churn    re-adds fail from update %u on (%u of them): "
			       "the table holds no more routes than it did\n", im->name, first_fail,
			       fails_add);
	}
	/* Withdraw the whole table route by route (a peer that goes). */
	c0 = cpu_s();
	t0 = rte_rdtsc_precise();
	deadline = t0 + (uint64_t)(o->seconds * (double)tsc_hz);
	for (i = 0, done = 0; i < rs->n; i++) {
		if ((i & 63) == 0 && rte_rdtsc() >= deadline)
			break;
		im->del(t, &rs->r[i]);
		done++;
	}
	t1 = rte_rdtsc_precise();
	printf("%-8s flush    %10.0f deletes/s  %10.0f per CPU second  "
	       "(%u of %u routes in %.2f s)\n", im->name,
	       (double)done * (double)tsc_hz / (double)(t1 - t0), done / (cpu_s() - c0), done,
	       rs->n, (double)(t1 - t0) / (double)tsc_hz);
	fflush(stdout);
out:
	free(pick);
	free(lat);
}

static void
usage(void)
{
	fprintf(stderr, "usage: fib_study [EAL args] -- -r ROUTEFILE [-6] [-i impl,...] "
			"[-s SECONDS] [-b BUILD_SECONDS] [-k SAMPLE]\n  impls: lpm dir24 fib rib "
			"(IPv4), lpm6 fib6 rib6 (-6)\n");
}

/* @name is a whole item of the comma list @want (fib is not fib6). */
static bool
wanted(const char *want, const char *name)
{
	size_t l = strlen(name);
	const char *p;

	if (want == NULL)
		return true;
	for (p = strstr(want, name); p != NULL; p = strstr(p + 1, name))
		if ((p == want || p[-1] == ',') && (p[l] == '\0' || p[l] == ','))
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	struct opts o = { .seconds = 2.0, .build_seconds = 600, .sample = 1000 };
	const char *file = NULL, *want = NULL;
	struct table tb[MAX_TABLES];
	struct routes rs = { 0 };
	unsigned int i, n_tb = 0;
	void *dst_rand, *dst_seq;
	bool v6 = false;
	uint64_t *ref;
	int n, c, rc = 0;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "fib_study: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	while ((c = getopt(argc, argv, "r:6i:s:b:k:h")) != -1)
		switch (c) {
		case 'r': file = optarg; break;
		case '6': v6 = true; break;
		case 'i': want = optarg; break;
		case 's': o.seconds = atof(optarg); break;
		case 'b': o.build_seconds = atof(optarg); break;
		case 'k': o.sample = (uint32_t)atoi(optarg); break;
		default: usage(); return 64;
		}
	if (file == NULL || o.sample == 0) {
		usage();
		return 64;
	}
	tsc_hz = rte_get_tsc_hz();
	n = load_routes(file, v6, &rs);
	if (n < 0) {
		fprintf(stderr, "fib_study: %s: %s\n", file, strerror(-n));
		return 66;
	}
	{
		uint32_t hist[129] = { 0 }, l;

		for (l = 0; l < rs.n; l++)
			hist[rs.r[l].len]++;
		printf("# %u %s routes from %s, %u tbl8 groups needed", rs.n, v6 ? "IPv6" : "IPv4",
		       file, rs.tbl8);
		if (v6)
			printf(" (rte_fib6 reserves up to %u)", rs.tbl8_rsvd);
		printf(", TSC %.2f GHz; lengths:", (double)tsc_hz / 1e9);
		for (l = 0; l <= 128; l++)
			if (hist[l] * 100ull >= rs.n)
				printf(" /%u %.0f%%", l, 100.0 * hist[l] / rs.n);
		printf("\n");
	}
	dst_rand = make_dst(&rs, false);
	dst_seq = make_dst(&rs, true);
	ref = calloc(N_CHECK, sizeof(*ref));
	if (dst_rand == NULL || dst_seq == NULL || ref == NULL)
		return 70;
	/* Build every table, check they answer alike, time their lookups side by side. */
	for (i = 0; i < RTE_DIM(impls) && n_tb < MAX_TABLES; i++) {
		const struct impl *im = &impls[i];
		struct table *t = &tb[n_tb];

		if (im->v6 != v6 || !wanted(want, im->name))
			continue;
		memset(t, 0, sizeof(*t));
		t->im = im;
		t->t = build(im, &rs, &o);
		if (t->t == NULL) {
			rc = 1;
			continue;
		}
		t->fl[t->n_fl++] = (struct flavour){ .label = "bulk of 32", .fn = im->lookup };
		if (im->lookup2 != NULL)
			t->fl[t->n_fl++] = (struct flavour){ .label = im->lookup2_name,
							     .fn = im->lookup2 };
		if (im->vector != NULL && im->vector(t->t, true) == 0) {
			im->vector(t->t, false);
			t->fl[t->n_fl++] = (struct flavour){ .label = "bulk of 32, AVX-512",
							     .fn = im->lookup, .vector = true };
		}
		lookup_check(t, &rs, dst_rand, ref, n_tb == 0, &rc);
		n_tb++;
	}
	lookups(tb, n_tb, dst_rand, dst_seq, v6);
	/* Updates, one table at a time (each destroys its routes). */
	for (i = 0; i < n_tb; i++) {
		updates(tb[i].im, tb[i].t, &rs, &o);
		tb[i].im->destroy(tb[i].t);
	}
	free(ref);
	free(dst_rand);
	free(dst_seq);
	free(rs.r);
	rte_eal_cleanup();
	return rc;
}
