/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers for cmocka unit tests: EAL bring-up without hugepages or devices,
 * mbufs built from bytes, stages built from inline YAML.
 */
#ifndef PF_TEST_H
#define PF_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include "pf_stage.h"
#include "pf_stages.h"
#include "pf_topo.h"

/** Start EAL once per process (--no-huge --no-pci --no-shconf, prefix ut_<name>_<pid>). */
int pf_test_eal_init(const char *name);
/** "--file-prefix=ut_<name>_<pid>" for tests that build their own EAL arguments. */
const char *pf_test_prefix_arg(const char *name);
/** rte_eal_init, and the (empty) runtime directory removed at exit. */
int pf_test_eal_start(int argc, char **argv);
/** A shared pool of 8192 mbufs created on first use. */
struct rte_mempool *pf_test_pool(void);
/** An mbuf holding @p len bytes of @p data, metadata zeroed, in_port set. */
struct rte_mbuf *pf_test_mbuf(const void *data, uint16_t len, uint16_t in_port);
/**
 * Load @p yaml as a topology (asserting it is valid) and create the stage
 * named @p stage from it. Ports get port_id = their index.
 */
struct pf_stage *pf_test_stage(const char *yaml, const char *stage, struct pf_topo **topo);
/**
 * The same, fed by @p peer (a stage of the same topology loaded before):
 * what @p peer exports reaches the new stage as the runtime would hand it
 * (pf_stage.edge_table), e.g. lpm fed by neigh gets its neighbour table.
 */
struct pf_stage *pf_test_stage_fed(const char *yaml, const char *stage, struct pf_topo **topo,
				   struct pf_stage *peer);
/** The neighbour table a neigh stage @p nb owns (what it exports). */
#define pf_test_neigh_table(nb) ((struct pf_neigh_table *)(nb)->ops->ctl.export_table(nb))
/** Run process_burst on @p pkts and return the edges in @p edge. */
void pf_test_process(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge);
/** Bursts pf_test_process saw with a burst-port hint (each one checked). */
extern uint64_t pf_test_hints;
/**
 * Two stages that ran the same packets (@p a_name and @p b_name, for the
 * messages) have every counter equal, and @p a's drop counters are @p want
 * (indexed as the stage's counters).
 */
void pf_test_ctrs_agree(const struct pf_stage *a, const struct pf_stage *b, const uint64_t *want,
			const char *a_name, const char *b_name);
/** Counter value by name (fails the test if unknown). */
uint64_t pf_test_ctr(const struct pf_stage *st, const char *name);
/** Free the first @p n mbufs. */
void pf_test_free(struct rte_mbuf **pkts, uint16_t n);

#endif /* PF_TEST_H */
