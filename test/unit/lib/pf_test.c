/* SPDX-License-Identifier: BSD-3-Clause */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "pf_test.h"

static struct rte_mempool *pool;

static char runtime_dir[PATH_MAX];

static void
remove_runtime_dir(void)
{
	if (runtime_dir[0] != '\0')
		rmdir(runtime_dir);   /* empty with --no-shconf; left alone otherwise */
}

const char *
pf_test_prefix_arg(const char *name)
{
	static char prefix[96];

	/* A prefix per process and --no-shconf: two make test runs side by side
	 * (two worktrees, a helper and CI) never share an EAL config lock. */
	snprintf(prefix, sizeof(prefix), "--file-prefix=ut_%s_%d", name, (int)getpid());
	return prefix;
}

int
pf_test_eal_start(int argc, char **argv)
{
	if (rte_eal_init(argc, argv) < 0)
		return -1;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(remove_runtime_dir);
	return 0;
}

int
pf_test_eal_init(const char *name)
{
	static int done;
	char *argv[] = { (char *)"unit", (char *)"--no-huge", (char *)"-m", (char *)"256",
			 (char *)"--no-pci", (char *)"--no-shconf",
			 (char *)"--log-level=lib.eal:error", (char *)"--no-telemetry",
			 (char *)"--lcores=0@0", (char *)pf_test_prefix_arg(name), NULL };

	if (done)
		return 0;
	if (pf_test_eal_start(RTE_DIM(argv) - 1, argv) < 0)
		return -1;
	done = 1;
	return pf_meta_register();
}

struct rte_mempool *
pf_test_pool(void)
{
	if (pool == NULL)
		pool = rte_pktmbuf_pool_create("ut_pool", 8192, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					       SOCKET_ID_ANY);
	assert_non_null(pool);
	return pool;
}

struct rte_mbuf *
pf_test_mbuf(const void *data, uint16_t len, uint16_t in_port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pf_test_pool());
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, len);
	assert_non_null(p);
	memcpy(p, data, len);
	memset(pf_meta(m), 0, sizeof(struct pf_meta));
	pf_meta(m)->in_port = in_port;
	pf_meta(m)->out_port = PF_PORT_NONE;
	return m;
}

struct pf_stage *
pf_test_stage(const char *yaml, const char *stage, struct pf_topo **topo)
{
	return pf_test_stage_fed(yaml, stage, topo, NULL);
}

struct pf_stage *
pf_test_stage_fed(const char *yaml, const char *stage, struct pf_topo **topo,
		  struct pf_stage *peer)
{
	struct pf_stage *built[PF_MAX_STAGES] = { NULL };
	struct pf_errs errs = { 0 };
	struct pf_stage *st = NULL;
	int si, pi;

	if (pf_topo_load_string("inline.yaml", yaml, topo, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		fail_msg("inline topology rejected");
	}
	si = pf_topo_stage_index(*topo, stage);
	assert_true(si >= 0);
	/* @p peer (built from another load of a topology) stands for its stage here. */
	pi = peer != NULL ? pf_topo_stage_index(*topo, peer->conf->name) : -1;
	if (pi >= 0)
		built[pi] = peer;
	if (pf_stage_create_fed(&st, &(*topo)->stages[si], *topo, NULL, built, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		fail_msg("stage %s failed to initialise", stage);
	}
	st->id = (uint16_t)si;
	return st;
}

uint64_t pf_test_hints;

void
pf_test_process(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	uint16_t i, all;

	for (i = 0; i < n; i++)
		edge[i] = 0xdead;
	all = st->ops->dp.process_burst(st, pkts, n, edge);
	for (i = 0; i < n; i++) {
		/* A stage that says the burst took one edge may leave edge[]
		 * alone, or must mean it; the runtime reads edge[] only for a
		 * mixed burst, and here the answer stands for each packet. */
		if (all != PF_EDGE_MIXED) {
			if (edge[i] != 0xdead)
				assert_int_equal(edge[i], all);
			edge[i] = all;
		}
		assert_int_not_equal(edge[i], 0xdead);
	}
	/* A burst-port hint (pf_stage.h): one edge, not drop, every out_port. */
	if (st->burst_port != 0) {
		pf_test_hints++;
		assert_true(all != PF_EDGE_MIXED && all != PF_EDGE_DROP);
		/* The hint stood for out_port: write it as the runtime would for a non-sink. */
		if (st->burst_port & PF_BURST_PORT_UNWRITTEN)
			pf_burst_port_write(pkts, n, st->burst_port);
		for (i = 0; i < n; i++)
			assert_int_equal(pf_meta(pkts[i])->out_port, PF_BURST_PORT_INDEX(st->burst_port));
		st->burst_port = 0;     /* as the runtime does after each burst */
	}
	/* A source's in-port hint (pf_stage.h): every packet arrived on that port. */
	if (st->ops->dp.rx != NULL && st->in_burst_in_port != 0) {
		pf_test_hints++;
		for (i = 0; i < n; i++)
			assert_int_equal(pf_meta(pkts[i])->in_port, st->in_burst_in_port - 1);
	}
}

void
pf_test_ctrs_agree(const struct pf_stage *a, const struct pf_stage *b, const uint64_t *want,
		   const char *a_name, const char *b_name)
{
	uint16_t c;

	for (c = 0; c < a->ops->n_ctrs; c++) {
		if (a->ctrs[c] != b->ctrs[c])
			fail_msg("counter %s: %s %" PRIu64 ", %s %" PRIu64, a->ops->ctrs[c].name,
				 a_name, a->ctrs[c], b_name, b->ctrs[c]);
		if (a->ops->ctrs[c].kind == PF_CTR_DROP && a->ctrs[c] != want[c])
			fail_msg("counter %s: %" PRIu64 ", want %" PRIu64, a->ops->ctrs[c].name,
				 a->ctrs[c], want[c]);
	}
}

uint64_t
pf_test_ctr(const struct pf_stage *st, const char *name)
{
	uint16_t i;

	for (i = 0; i < st->ops->n_ctrs; i++)
		if (strcmp(st->ops->ctrs[i].name, name) == 0)
			return st->ctrs[i];
	fail_msg("stage type %s has no counter %s", st->ops->type, name);
	return 0;
}

void
pf_test_free(struct rte_mbuf **pkts, uint16_t n)
{
	rte_pktmbuf_free_bulk(pkts, n);
}
