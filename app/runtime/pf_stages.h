/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The runtime's side of the stage contract (app/runtime/stage.c,
 * app/runtime/services.c): running a stage's update, collecting what it
 * reports, and stand-alone stages for unit tests and fuzzers.
 */
#ifndef PF_STAGES_H
#define PF_STAGES_H

#include <stdint.h>

#include "pf_stage.h"
#include "pf_topo.h"

/** The clock's mode (runtime.clock), set when the runtime is built. */
void pf_clock_set_mode(enum pf_clock_mode mode);

/** Publish the runtime's QSBR variable to the services (NULL: none runs). */
struct rte_rcu_qsbr;
void pf_services_set_qsbr(struct rte_rcu_qsbr *qsbr);
/**
 * Wait until every worker lcore has passed a quiescent point (finished the
 * pass it was in): no worker reads what was unpublished before the call.
 * Control thread only. A no-op when no runtime runs (unit tests).
 */
void pf_rcu_synchronize(void);

/** Whether @p st's type can update its tables live (prepare/commit/release or swap). */
bool pf_stage_updatable(const struct pf_stage *st);
/**
 * A live update of @p st to @p new_sc in the contract's three steps, for a
 * stage with prepare/commit/release or a swap (pf_stage_ctl.h): prepare
 * (may refuse: -errno with errors), commit (returns what it replaced, for
 * release after a grace period), release (a refused prepare, or a replaced
 * state no reader sees any more).
 */
int pf_stage_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		     struct pf_errs *errs);
void *pf_stage_commit(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep);
void pf_stage_release(struct pf_stage *st, void *state);

/** @p st's gauges into @p g (at most @p max); returns how many. */
uint16_t pf_stage_gauges(const struct pf_stage *st, struct pf_gauge *g, uint16_t max);
/** The value of @p st's gauge @p name, or 0 when it reports none. */
uint64_t pf_stage_gauge(const struct pf_stage *st, const char *name);

/**
 * Stand-alone use of a stage (unit tests, fuzzers): parse @p sc's params,
 * allocate priv and counters, init. Returns 0 or -errno with errors.
 */
int pf_stage_create(struct pf_stage **out, struct pf_stage_conf *sc, const struct pf_topo *topo,
		    struct pf_errs *errs);
/**
 * The same for instance k > 0 of a stage with `instances: N`: @p first is
 * the running instance 0 (st->first), whose tables a PF_STAGE_SHARED type
 * references. @p first NULL is pf_stage_create().
 */
int pf_stage_create_instance(struct pf_stage **out, struct pf_stage_conf *sc,
			     const struct pf_topo *topo, struct pf_stage *first,
			     struct pf_errs *errs);
/**
 * The same, fed: @p built[i] is stage i of @p topo where it exists already
 * (NULL entries, or @p built NULL, for none); the stages this one feeds
 * hand it their exported tables (pf_stage.edge_table) before its init.
 */
int pf_stage_create_fed(struct pf_stage **out, struct pf_stage_conf *sc, const struct pf_topo *topo,
			struct pf_stage *first, struct pf_stage *const *built,
			struct pf_errs *errs);
void pf_stage_destroy(struct pf_stage *st);
/**
 * Update a stand-alone stage to @p new_sc: prepare, commit, then release of
 * the old state (unit tests; the runtime's reload prepares every stage
 * first). Returns 0, or -errno with errors (nothing changed).
 */
int pf_stage_update(struct pf_stage *st, struct pf_stage_conf *new_sc, struct pf_errs *errs);

#endif /* PF_STAGES_H */
