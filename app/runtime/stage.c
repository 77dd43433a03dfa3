/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage helpers shared by the runtime, unit tests and fuzzers
 * (app/runtime/pf_stages.h): the metadata dynfield, the type registry's
 * lookup, running a live update in the contract's three steps, collecting
 * gauges, and stand-alone stage creation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include "pf_numa.h"
#include "pf_stages.h"

int pf_meta_offset = -1;

int
pf_meta_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "pipefwd_meta",
		.size = sizeof(struct pf_meta),
		.align = __alignof__(struct pf_meta),
	};
	int off;

	if (pf_meta_offset >= 0)
		return 0;
	off = rte_mbuf_dynfield_register(&desc);
	if (off < 0)
		return -rte_errno;
	pf_meta_offset = off;
	return 0;
}

const struct pf_stage_ops *
pf_stage_type_find(const char *type)
{
	int i;

	for (i = 0; pf_stage_types[i] != NULL; i++)
		if (strcmp(pf_stage_types[i]->type, type) == 0)
			return pf_stage_types[i];
	return NULL;
}

/* ---- stand-alone stages ------------------------------------------------- */

int
pf_numa_eal_socket(unsigned int lcore, void *arg)
{
	RTE_SET_USED(arg);
	if (lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore))
		return -1;
	return (int)rte_lcore_to_socket_id(lcore);
}

/*
 * The socket for @p sc's tables (pf_numa_table_socket), when it has memory:
 * with --no-huge or no hugepages there, allocations on it fail, so tables
 * go anywhere (as rings do) rather than not at all.
 */
static int
stage_socket(const struct pf_stage_conf *sc, const struct pf_topo *topo)
{
	int socket = SOCKET_ID_ANY;
	void *probe;

	if (topo != NULL && sc >= topo->stages && sc < topo->stages + topo->n_stages)
		socket = pf_numa_table_socket(topo, (uint16_t)(sc - topo->stages),
					      pf_numa_eal_socket, NULL);
	if (socket < 0)
		return SOCKET_ID_ANY;
	probe = rte_malloc_socket("pf_socket_probe", RTE_CACHE_LINE_SIZE, 0, socket);
	if (probe == NULL)
		return SOCKET_ID_ANY;
	rte_free(probe);
	return socket;
}

int
pf_stage_create(struct pf_stage **out, struct pf_stage_conf *sc, const struct pf_topo *topo,
		struct pf_errs *errs)
{
	return pf_stage_create_instance(out, sc, topo, NULL, errs);
}

int
pf_stage_create_instance(struct pf_stage **out, struct pf_stage_conf *sc,
			 const struct pf_topo *topo, struct pf_stage *first, struct pf_errs *errs)
{
	return pf_stage_create_fed(out, sc, topo, first, NULL, errs);
}

int
pf_stage_create_fed(struct pf_stage **out, struct pf_stage_conf *sc, const struct pf_topo *topo,
		    struct pf_stage *first, struct pf_stage *const *built, struct pf_errs *errs)
{
	struct pf_stage *st;
	uint16_t e;
	int rc;

	*out = NULL;
	if (pf_meta_register() < 0)
		return pf_err_add(errs, NULL, 0, 0, "cannot register mbuf metadata field");
	st = rte_zmalloc("pf_stage", sizeof(*st), RTE_CACHE_LINE_SIZE);
	if (st == NULL)
		return -ENOMEM;
	st->ops = sc->ops;
	st->conf = sc;
	st->env = &topo->env;
	if (sc->env == NULL)
		sc->env = &topo->env;
	st->first = first != NULL ? first : st;
	for (e = 1; e < sc->ops->n_edges; e++) {
		struct pf_stage *to;

		if (sc->next[e] == PF_NONE)
			continue;
		st->edge_connected |= 1u << e;
		to = built != NULL ? built[sc->next[e]] : NULL;
		if (to != NULL && to->ops->ctl.export_table != NULL)
			st->edge_table[e] = to->ops->ctl.export_table(to);
	}
	st->ctrs = rte_zmalloc("pf_stage_ctrs", sizeof(uint64_t) * RTE_MAX(sc->ops->n_ctrs, 1),
			       RTE_CACHE_LINE_SIZE);
	/* The stage's state and tables on the socket of the lcore that reads them (NUMA). */
	st->socket = stage_socket(sc, topo);
	if (sc->ops->priv_size != 0)
		st->priv = rte_zmalloc_socket("pf_stage_priv", sc->ops->priv_size,
					      RTE_CACHE_LINE_SIZE, st->socket);
	if (st->ctrs == NULL || (sc->ops->priv_size != 0 && st->priv == NULL)) {
		pf_stage_destroy(st);
		return -ENOMEM;
	}
	if (sc->ops->ctl.init != NULL) {
		rc = sc->ops->ctl.init(st, errs);
		if (rc < 0) {
			pf_stage_destroy(st);
			return rc;
		}
	}
	*out = st;
	return 0;
}

void
pf_stage_destroy(struct pf_stage *st)
{
	if (st == NULL)
		return;
	if (st->ops->ctl.free != NULL)
		st->ops->ctl.free(st);
	rte_free(st->priv);
	rte_free(st->ctrs);
	rte_free(st);
}

bool
pf_stage_updatable(const struct pf_stage *st)
{
	return st->ops->ctl.swap != NULL || st->ops->ctl.prepare != NULL;
}

int
pf_stage_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		 struct pf_errs *errs)
{
	const struct pf_stage_ctl *c = &st->ops->ctl;

	*prep = NULL;
	return c->swap != NULL ? c->swap->build(st, new_sc, prep, errs) :
				 c->prepare(st, new_sc, prep, errs);
}

void *
pf_stage_commit(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep)
{
	const struct pf_stage_swap *sw = st->ops->ctl.swap;
	void **table, *old;

	if (sw == NULL)
		return st->ops->ctl.commit(st, new_sc, prep);
	/* One store publishes the table the data path reads once per burst. */
	table = (void **)((char *)st->priv + sw->table_off);
	old = *table;
	__atomic_store_n(table, prep, __ATOMIC_RELEASE);
	if (sw->published != NULL)
		sw->published(st, new_sc, prep);
	return old;
}

void
pf_stage_release(struct pf_stage *st, void *state)
{
	if (state == NULL)
		return;
	if (st->ops->ctl.swap != NULL)
		st->ops->ctl.swap->free(state);
	else
		st->ops->ctl.release(st, state);
}

int
pf_stage_update(struct pf_stage *st, struct pf_stage_conf *new_sc, struct pf_errs *errs)
{
	void *prep = NULL;
	int rc;

	if (!pf_stage_updatable(st))
		return pf_node_err(errs, new_sc->node,
				   "stages.%s: stage type '%s' cannot update live", new_sc->name,
				   st->ops->type);
	rc = pf_stage_prepare(st, new_sc, &prep, errs);
	if (rc < 0)
		return rc;
	prep = pf_stage_commit(st, new_sc, prep);
	pf_rcu_synchronize();
	pf_stage_release(st, prep);
	return 0;
}

const char *
pf_stage_reason_name(const struct pf_stage *st, uint16_t reason)
{
	if (reason == PF_REASON_RING_FULL)
		return "ring_full";
	if (reason == PF_REASON_NO_EDGE)
		return "no_edge";
	if (st != NULL && reason < st->ops->n_ctrs)
		return st->ops->ctrs[reason].name;
	return "unknown";
}
