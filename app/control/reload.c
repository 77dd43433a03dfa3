/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live reload (app/control/pf_reload.h).
 *
 * A reload applies to every stage or to none (two phases, see pf_reload),
 * and the running topology is never written: a new one is published by
 * pointer and the old one freed after a grace period.
 *
 * What can change live: the lcore map (stages move with the hand-over of
 * pf_runtime_apply_lcore_map), ring and rx bursts, and a stage's parameters
 * when its type has an update hook (tables built beside the old ones and
 * swapped after a QSBR grace period, or applied by the owning lcore). A
 * stage counts as changed when its YAML changed or when a table file its
 * parse recorded (pf_stage_conf_add_file) differs in size, mtime or
 * content. Ports may be added and removed (docs/architecture.md, "Ports
 * added and removed live"): every port keeps its index (pf_topo_load_edited
 * with the running topology), a new one is set up before any stage knows it
 * and a removed one is stopped a grace period after the stages let it go.
 * What needs a restart: EAL options, changing a port that stays, the set
 * of stages and their edges, ring sizes, runtime options, and lcores that
 * were not started (declare spare lcores as `N: []`).
 *
 * Live table changes (app/control/changes.c) take the same path: pf_reload_live
 * applies the running file with the changes on top, for one stage only. This
 * module knows nothing of them: whoever reloads the file (the console) discards
 * the unsaved ones afterwards.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "pf_fault.h"
#include "pf_log.h"
#include "pf_reload.h"
#include "pf_stages.h"

struct pf_reload_status pf_reload_status;

static bool
skipped(const char *const *skip, const char *key)
{
	for (; skip != NULL && *skip != NULL; skip++)
		if (strcmp(*skip, key) == 0)
			return true;
	return false;
}

/* Structural equality of two YAML subtrees (marks and map order ignored),
 * not counting the top-level keys in @p skip. */
static bool
node_equal(const struct pf_node *a, const struct pf_node *b, const char *const *skip)
{
	uint32_t i;

	if (a == NULL || b == NULL)
		return a == b;
	if (a->kind != b->kind)
		return false;
	if (a->kind == PF_NODE_SCALAR)
		return strcmp(a->value, b->value) == 0;
	if (a->kind == PF_NODE_SEQ) {
		if (a->n != b->n)
			return false;
		for (i = 0; i < a->n; i++)
			if (!node_equal(a->items[i], b->items[i], NULL))
				return false;
		return true;
	}
	for (i = 0; i < a->n; i++) {
		const char *k = a->keys[i]->value;

		if (skipped(skip, k))
			continue;
		if (!node_equal(a->items[i], pf_map_get(b, k), NULL))
			return false;
	}
	for (i = 0; i < b->n; i++) {
		const char *k = b->keys[i]->value;

		if (skipped(skip, k))
			continue;
		if (pf_map_get(a, k) == NULL)
			return false;
	}
	return true;
}

static const struct pf_node *
section(const struct pf_topo *t, const char *key)
{
	return pf_map_get(t->doc->root, key);
}

/* How long a port that goes may take to drain what was routed to it. */
#define PORT_DRAIN_MS 1000

/* Stage keys the runtime applies itself (not stage parameters). */
static const char *const runtime_keys[] = { "type", "next", "burst", "instances", NULL };
/* The same and a stage's port list, which its ctl.ports follows. */
static const char *const port_list_keys[] = { "type", "next", "burst", "instances", "ports",
					       NULL };

/* What a reload changes (diff), and how it applies it (apply). */
struct plan {
	bool changed[PF_MAX_STAGES];    /* updated: prepare, commit, release */
	bool hooked[PF_MAX_STAGES];     /* told of the port change: ctl.ports */
	uint32_t added, gone;           /* ports, a bit per index */
};

static bool
port_in(const struct pf_topo *t, uint16_t p)
{
	return p < t->n_ports && pf_port_present(&t->ports[p]);
}

/* Which ports come and go; a port that stays must stay as it is. */
static void
diff_ports(const struct pf_runtime *rt, const struct pf_topo *old, const struct pf_topo *new,
	   struct plan *pl, struct pf_errs *errs)
{
	uint16_t p;

	for (p = 0; p < PF_MAX_PORTS; p++) {
		const struct pf_port_conf *o = &old->ports[p], *n = &new->ports[p];

		if (port_in(old, p) && !port_in(new, p))
			pl->gone |= 1u << p;
		else if (!port_in(old, p) && port_in(new, p))
			pl->added |= 1u << p;
		else if (!port_in(old, p))
			continue;
		else if (!node_equal(o->node, n->node, NULL))
			pf_node_err(errs, n->node, "ports.%s: changing a port needs a restart "
				    "(or remove it and add it again)", n->name);
		else if (o->n_rxq != n->n_rxq || o->n_txq != n->n_txq)
			pf_node_err(errs, n->node, "ports.%s: the stages using it would change its "
				    "queues (%u rx, %u tx -> %u rx, %u tx): restart", n->name,
				    o->n_rxq, o->n_txq, n->n_rxq, n->n_txq);
	}
	if ((pl->added | pl->gone) != 0 && rt->pool != NULL &&
	    new->mbufs_required > rt->pool->size)
		pf_node_err(errs, section(new, "ports"),
			    "ports: the ports and their queues need %u mbufs, the pool made at "
			    "start has %u: restart (or give runtime.mbufs room for the ports to come)",
			    new->mbufs_required, rt->pool->size);
}

/* A changed instance count: new stages and rings, so a restart. Returns how many. */
static unsigned int
instances_changed(const struct pf_topo *old, const struct pf_topo *new, struct pf_errs *errs)
{
	unsigned int n = 0;
	uint16_t i;
	int o;

	for (i = 0; i < new->n_stages; i++) {
		const struct pf_stage_conf *sc = &new->stages[i];
		const struct pf_node *v;

		if (sc->instance != 0 || (o = pf_topo_group_index(old, sc->group)) < 0 ||
		    old->stages[o].n_instances == sc->n_instances)
			continue;
		v = pf_map_get(sc->node, "instances");
		pf_node_err(errs, v != NULL ? v : sc->node,
			    "stages.%s.instances: changing the number of instances (%u -> %u) needs a restart",
			    sc->group, old->stages[o].n_instances, sc->n_instances);
		n++;
	}
	return n;
}

/* Refuse what the running process cannot apply; fills @p pl. */
static void
diff(const struct pf_runtime *rt, const struct pf_topo *old, const struct pf_topo *new,
     struct plan *pl, struct pf_errs *errs)
{
	bool *changed = pl->changed, portset, same, ports_only;
	const struct pf_stage_ops *ops;
	const char *file;
	uint16_t i, e;

	if (!node_equal(section(old, "eal"), section(new, "eal"), NULL))
		pf_node_err(errs, section(new, "eal"), "eal: changing EAL options needs a restart");
	if (!node_equal(section(old, "runtime"), section(new, "runtime"), NULL))
		pf_node_err(errs, section(new, "runtime"),
			    "runtime: changing runtime options needs a restart");
	diff_ports(rt, old, new, pl, errs);
	portset = (pl->added | pl->gone) != 0;
	if (instances_changed(old, new, errs) != 0)
		return;   /* the stage lists no longer line up: nothing more to compare */
	if (old->n_stages != new->n_stages)
		pf_node_err(errs, section(new, "stages"),
			    "stages: adding or removing a stage needs a restart");
	for (i = 0; i < old->n_stages && i < new->n_stages; i++) {
		const struct pf_stage_conf *o = &old->stages[i], *n = &new->stages[i];

		changed[i] = false;
		if (strcmp(o->name, n->name) != 0 || o->ops != n->ops) {
			pf_node_err(errs, n->node, "stages.%s: renaming a stage or changing its type needs a restart",
				    n->name);
			continue;
		}
		for (e = 0; e < PF_MAX_EDGES; e++)
			if (o->next[e] != n->next[e])
				break;
		if (e < PF_MAX_EDGES) {
			pf_node_err(errs, pf_map_get(n->node, "next"),
				    "stages.%s.next: changing the pipeline's edges needs a restart",
				    n->name);
			continue;
		}
		/* A stage changed when its YAML did, or a table file it reads did. */
		ops = n->ops;
		file = pf_stage_conf_files_changed(o, n);
		same = file == NULL && o->edits == n->edits &&
		       node_equal(o->node, n->node, runtime_keys);
		ports_only = !same && file == NULL && o->edits == n->edits &&
			     node_equal(o->node, n->node, port_list_keys);
		if (portset && (ops->flags & PF_STAGE_PORTS_FIXED))
			pf_node_err(errs, n->node, "stages.%s: a %s stage cannot follow ports added or "
				    "removed live: restart", n->name, ops->type);
		/* Its per-port state follows the ports, its port list with them. */
		pl->hooked[i] = ops->ctl.ports != NULL && (portset || ports_only);
		if (ports_only && ops->ctl.ports != NULL && !pf_stage_updatable(rt->stages[i]))
			continue;
		/* Tables made from the ports (connected subnets) are rebuilt. */
		if (same && !(portset && (ops->flags & PF_STAGE_PORT_TABLES) &&
			      pf_stage_updatable(rt->stages[i])))
			continue;
		if (!pf_stage_updatable(rt->stages[i]))
			pf_node_err(errs, n->node,
				    "stages.%s: stage type '%s' cannot change its parameters live; restart to apply",
				    n->name, n->ops->type);
		else if (o->ops->ctl.check == NULL ||
			 o->ops->ctl.check(rt->stages[i], n, errs) == 0)
			changed[i] = true;
		if (file != NULL)
			PF_LOG(INFO, "reload: stages.%s: table file %s changed", n->name, file);
	}
	if (old->n_rings == new->n_rings)
		for (i = 0; i < new->n_rings; i++)
			if (old->rings[i].size != new->rings[i].size)
				pf_node_err(errs, section(new, "rings"),
					    "rings.%s.size: changing a ring size needs a restart (rings are allocated at start)",
					    new->rings[i].name);
	for (i = 0; i < new->n_lcores; i++) {
		uint16_t k;

		for (k = 0; k < rt->n_lcores; k++)
			if (rt->lcores[k].id == new->lcores[i].id)
				break;
		if (k == rt->n_lcores)
			pf_node_err(errs, section(new, "lcores"),
				    "lcores.%u: lcore %u was not started; declare it as '%u: []' and restart to use it",
				    new->lcores[i].id, new->lcores[i].id, new->lcores[i].id);
	}
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
finish(double t0, int rc, const char *msg)
{
	struct pf_reload_status *s = &pf_reload_status;

	s->last_ms = now_ms() - t0;
	s->last_rc = rc;
	snprintf(s->last_msg, sizeof(s->last_msg), "%s", msg);
	if (rc == 0) {
		s->generation++;
		if (s->last_ms > s->max_ms)
			s->max_ms = s->last_ms;
		s->loaded_unix = (uint64_t)time(NULL);
		PF_LOG(INFO, "reload %" PRIu64 " applied in %.2f ms: %s", s->generation, s->last_ms,
		       msg);
	} else {
		s->failures++;
		PF_LOG(ERR, "reload refused (%.2f ms), running configuration unchanged: %s",
		       s->last_ms, msg);
	}
}

/* Refuse with the first error of @p errs. */
static int
refuse(double t0, struct pf_errs *errs, const char *what)
{
	char msg[1024], line[PF_ERR_MSG_MAX + 300];
	unsigned int k;

	for (k = 0; k < errs->n && k < PF_ERRS_MAX; k++) {
		pf_err_format(&errs->e[k], line, sizeof(line));
		PF_LOG(ERR, "reload: %s", line);
	}
	pf_err_format(&errs->e[0], line, sizeof(line));
	if (what != NULL)
		snprintf(msg, sizeof(msg), "%s: %s", what, line);
	else
		snprintf(msg, sizeof(msg), "%u error%s, first: %s", errs->n,
			 errs->n == 1 ? "" : "s", line);
	finish(t0, -EINVAL, msg);
	return -EINVAL;
}

/* The production binary refuses no update (app/runtime/pf_fault.h; pipefwd-test overrides). */
__attribute__((weak)) bool
pf_fault_update_refuse(const char *name)
{
	return false;
}

/* Tell the stages (sources or the others) of the port change @p pl (ctl.ports). */
static void
ports_tell(struct pf_runtime *rt, const struct pf_topo *new, const struct plan *pl, bool sources,
	   bool drained)
{
	uint16_t i;

	for (i = 0; i < new->n_stages; i++)
		if (pl->hooked[i] && ((new->stages[i].ops->flags & PF_STAGE_SOURCE) != 0) == sources)
			new->stages[i].ops->ctl.ports(rt->stages[i], pl->added, pl->gone, drained);
}

/* What was in flight leaves (ports that go: what was routed to them leaves by them). */
static void
port_drain(struct pf_runtime *rt)
{
	if (!pf_runtime_drain_inflight(rt, PORT_DRAIN_MS))
		PF_LOG(WARNING, "reload: packets still in flight after %u ms: those for ports that "
		       "go are dropped (no_tx_port)", PORT_DRAIN_MS);
}

/* Whether any stage follows the port change (ctl.ports). */
static bool
ports_hooked(const struct plan *pl)
{
	uint16_t i;

	for (i = 0; i < PF_MAX_STAGES; i++)
		if (pl->hooked[i])
			return true;
	return false;
}

/*
 * Two phases for the stages in @p pl (already diffed against the running
 * topology). Returns 0 with @p msg saying what was applied, or -EINVAL
 * with errors in @p errs and @p what naming the refusing stage or port
 * (nothing changed). Frees @p new on refusal.
 */
static int
apply(struct pf_runtime *rt, struct pf_topo *new, const struct plan *pl, struct pf_errs *errs,
      char *what, size_t what_len, char *msg, size_t msg_len)
{
	const bool *changed = pl->changed;
	struct pf_topo *old = rt->topo;
	void *prep[PF_MAX_STAGES], *spare[PF_MAX_STAGES];
	uint16_t i, j, bursts = 0, updated = 0;
	bool hooked;
	int moved, rc;

	/* Phase 0: the new topology takes what only the running one knows: the
	 * runtime's port state, and the MAC a port without `mac:` got from its
	 * device; a new port runs (configured, started, its MAC read) before any
	 * stage knows it. Stages prepare for these ports (sc->env). */
	new->env.run = rt->port_run;
	for (i = 0; i < new->n_ports; i++) {
		if (!port_in(old, i) || !port_in(new, i))
			continue;
		new->ports[i].has_mac = old->ports[i].has_mac;
		memcpy(new->ports[i].mac, old->ports[i].mac, 6);
	}
	if (pl->added != 0 && pf_runtime_ports_add(rt, new, pl->added, errs) < 0) {
		snprintf(what, what_len, "adding ports");
		pf_topo_free(new);
		return -EINVAL;
	}
	/* Phase 1: prepare every change; nothing that runs changes. */
	for (i = 0; i < new->n_stages; i++) {
		struct pf_stage *st = rt->stages[i];

		if (!changed[i])
			continue;
		rc = pf_stage_prepare(st, &new->stages[i], &prep[i], errs);
		if (rc == 0 && pf_fault_update_refuse(new->stages[i].name)) {
			pf_node_err(errs, new->stages[i].node,
				    "stages.%s: update refused (PIPEFWD_FAULT_UPDATE_REFUSE)",
				    new->stages[i].name);
			pf_stage_release(st, prep[i]);
			rc = -EINVAL;
		}
		if (rc < 0) {
			for (j = 0; j < i; j++)
				if (changed[j])
					pf_stage_release(rt->stages[j], prep[j]);
			if (pl->added != 0)
				pf_runtime_ports_remove(rt, new, pl->added);
			snprintf(what, what_len, "stage %s: update refused", new->stages[i].name);
			pf_topo_free(new);
			return -EINVAL;
		}
		updated++;
	}

	/* Phase 2: commit. Unchanged stages keep the config they run with; the new parse of it
	 * goes to the old topology, to be freed with it. */
	for (i = 0; i < new->n_stages; i++) {
		spare[i] = NULL;
		if (!changed[i]) {
			spare[i] = new->stages[i].cfg;
			new->stages[i].cfg = old->stages[i].cfg;
		}
		if (old->stages[i].burst != new->stages[i].burst)
			bursts++;
	}
	for (i = 0; i < new->n_rings; i++)
		if (old->rings[i].burst != new->rings[i].burst)
			bursts++;
	for (i = 0; i < new->n_stages; i++) {
		__atomic_store_n(&rt->stages[i]->conf, &new->stages[i], __ATOMIC_RELEASE);
		__atomic_store_n(&rt->stages[i]->env, &new->env, __ATOMIC_RELEASE);
	}
	for (i = 0; i < new->n_rings; i++)
		__atomic_store_n(&rt->rings[i].conf, &new->rings[i], __ATOMIC_RELEASE);
	__atomic_store_n(&rt->topo, new, __ATOMIC_RELEASE);
	/* Ports: the stages after rx learn them first (tx sends on an added
	 * port, lookups have its MAC and addresses), then the changed stages
	 * publish (a route to it), then rx polls it; a removed one is no longer
	 * polled or sent on once the grace period below has passed. */
	/* Ports (docs/topology.md, "Ports added and removed live"): the stages
	 * after rx learn an added port first (tx sends on it, lookups have its
	 * MAC and addresses) and keep sending on one that goes; rx stops
	 * polling the ports that go, and what they received drains through
	 * the tables it came under. */
	hooked = ports_hooked(pl);
	ports_tell(rt, new, pl, false, false);
	if (hooked) {
		ports_tell(rt, new, pl, true, false);
		pf_rcu_synchronize();
		port_drain(rt);
	}
	/* Each changed stage publishes what it prepared and hands back what it
	 * replaced (prep[i] now holds that): a route to an added port. */
	for (i = 0; i < new->n_stages; i++)
		if (changed[i])
			prep[i] = pf_stage_commit(rt->stages[i], &new->stages[i], prep[i]);
	/* Then rx polls the added ports. */
	if (hooked)
		ports_tell(rt, new, pl, true, true);
	moved = pf_runtime_apply_lcore_map(rt, new);
	/* One grace period for the whole reload: then no worker reads the old
	 * topology or any table a stage replaced. */
	pf_rcu_synchronize();
	for (i = 0; i < new->n_stages; i++)
		if (changed[i])
			pf_stage_release(rt->stages[i], prep[i]);
	/* What the old tables routed to a port that goes leaves by it; then tx
	 * lets it go (what still comes for it, by a learnt MAC say, is a named
	 * drop: no_tx_port) and, a grace period later, it is stopped. */
	if (hooked) {
		port_drain(rt);
		ports_tell(rt, new, pl, false, true);
		pf_rcu_synchronize();
	}
	if (pl->gone != 0)
		pf_runtime_ports_remove(rt, old, pl->gone);
	for (i = 0; i < old->n_stages; i++)
		if (!changed[i])
			old->stages[i].cfg = spare[i];
	pf_topo_free(old);

	snprintf(msg, msg_len, "%d stage%s moved, %u burst%s changed, %u table%s updated",
		 moved, moved == 1 ? "" : "s", bursts, bursts == 1 ? "" : "s", updated,
		 updated == 1 ? "" : "s");
	if ((pl->added | pl->gone) != 0) {
		size_t len = strlen(msg);

		snprintf(msg + len, msg_len - len, ", %d port%s added, %d removed",
			 __builtin_popcount(pl->added), __builtin_popcount(pl->added) == 1 ? "" : "s",
			 __builtin_popcount(pl->gone));
	}
	return 0;
}

/*
 * Load, diff, then apply(): prepare every changed stage beside the running
 * one (the first refusal aborts every prepared stage, and nothing that runs
 * has changed), then commit (cannot fail): the new topology is published by
 * pointer (stages, rings and the runtime point into it; the running one is
 * never written), the stages swap in what they prepared, the lcore map is
 * applied, and the old topology is freed after a grace period, when no
 * worker reads it any more.
 */
int
pf_reload(struct pf_runtime *rt, const char *path)
{
	struct pf_topo *new = NULL;
	struct pf_errs errs = { 0 };
	struct plan pl = { 0 };
	char msg[1024], what[PF_NAME_MAX + 32];
	double t0 = now_ms();

	if (pf_topo_load_edited(path, NULL, 0, rt->topo, &new, &errs) == 0)
		diff(rt, rt->topo, new, &pl, &errs);
	if (errs.n != 0) {
		pf_topo_free(new);
		return refuse(t0, &errs, NULL);
	}
	if (apply(rt, new, &pl, &errs, what, sizeof(what), msg, sizeof(msg)) < 0)
		return refuse(t0, &errs, what);
	finish(t0, 0, msg);
	return 0;
}

void
pf_reload_note(const char *more)
{
	size_t len = strlen(pf_reload_status.last_msg);

	snprintf(pf_reload_status.last_msg + len, sizeof(pf_reload_status.last_msg) - len, "; %s",
		 more);
}

/*
 * Live table change: @p new is the running file with the live changes
 * applied (pf_topo_load_edited). Only stages of YAML stage @p group may
 * differ from what runs: a topology or table file edited on disk since it
 * was loaded refuses the change (a reload applies the file first).
 */
const char *
pf_reload_file_changed(const struct pf_runtime *rt, const struct pf_topo *new)
{
	const struct pf_topo *old = rt->topo;
	const char *file = NULL;
	uint16_t i;

	for (i = 0; i < old->n_stages && i < new->n_stages && file == NULL; i++)
		file = pf_stage_conf_files_changed(&old->stages[i], &new->stages[i]);
	if (file == NULL && (old->n_stages != new->n_stages || old->doc_hash != new->doc_hash))
		file = new->file;
	return file;
}

int
pf_reload_live(struct pf_runtime *rt, struct pf_topo *new, const char *group,
	       struct pf_errs *errs)
{
	const struct pf_topo *old = rt->topo;
	struct plan pl = { 0 };
	char msg[256], what[PF_NAME_MAX + 32];
	const char *file = pf_reload_file_changed(rt, new);
	uint16_t i;

	if (file != NULL) {
		pf_err_add(errs, file, 0, 0,
			   "changed on disk since it was loaded: reload it first (pipefwd-ctl "
			   "reload), then make the change");
		pf_topo_free(new);
		return -EINVAL;
	}
	diff(rt, old, new, &pl, errs);
	for (i = 0; i < new->n_stages && errs->n == 0; i++)
		if (pl.changed[i] && group[0] != '\0' && strcmp(new->stages[i].group, group) != 0)
			pf_node_err(errs, new->stages[i].node,
				    "stages.%s: would change too; nothing applied",
				    new->stages[i].name);
	if (errs->n != 0) {
		pf_topo_free(new);
		return -EINVAL;
	}
	if (apply(rt, new, &pl, errs, what, sizeof(what), msg, sizeof(msg)) < 0)
		return -EINVAL;
	if (group[0] == '\0')
		PF_LOG(INFO, "live port change applied: %s", msg);
	else
		PF_LOG(INFO, "live change to stage %s applied: %s", group, msg);
	return 0;
}
