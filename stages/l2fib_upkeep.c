/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fib upkeep, never in process_burst: the aging sweep and live updates run
 * from the housekeep op (about once a millisecond on the owning lcore, loaded
 * or idle) and from the idle hook, each call with a bounded budget.
 *
 * Live update (reload): the control thread never writes the table. It
 * diffs the static entries against those applied, posts one command (new
 * age_s and port_learn_limit, then static removals, then static adds) and
 * waits; the owning lcore takes it in housekeeping and applies it in slices
 * between bursts, where no position is held. See l2_update().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "l2fib.h"
#include "pf_log.h"

#define L2_CMD_HOUSEKEEP 4096             /* update operations applied per housekeep call */
#define L2_CMD_IDLE 4096                  /* ... and per idle call */
#define L2_SWEEP_HOUSEKEEP 4096           /* aging budget per housekeep call (positions) */
#define L2_SWEEP_IDLE 4096                /* ... and per idle call */
#define L2_UPDATE_TIMEOUT_MS 5000         /* lcore silent this long: update withdrawn */

/* ---- applied by the owning lcore ------------------------------------------------ */

/* Static entry changes (one instance only: update_check refuses them with
 * instances, so these plain writes have no concurrent writer). */
static void
l2_op_apply(struct pf_stage *st, struct l2_priv *l2, struct l2_cmd *c, const struct l2_op *op)
{
	struct l2_table *tb = l2->tb;
	uint8_t bd = (uint8_t)(op->key >> 48);
	int32_t pos = l2_tbl_find(l2, op->key, l2_hash_key(op->key, l2->seed));
	struct l2_entry e, n = { .port = op->port, .bd = bd,
				 .flags = L2_F_INHASH | L2_F_LIVE | L2_F_STATIC };

	if (op->del) {
		if (pos < 0 || !(l2_load(l2, (uint32_t)pos).flags & L2_F_STATIC))
			return;
		tb->n_static--;
		tb->dom_entries[bd]--;
		/* Between bursts: no position is held, the key can go at once. */
		l2_remove(l2, (uint32_t)pos, l2_load(l2, (uint32_t)pos), false);
		c->removed++;
		return;
	}
	if (pos >= 0) {
		e = l2_load(l2, (uint32_t)pos);
		if (e.flags & L2_F_STATIC) {
			if (e.port != op->port) {
				n = e;
				n.port = op->port;
				l2_commit(l2, (uint32_t)pos, e, n);
				c->repointed++;
			}
			return;
		}
		if (e.flags & L2_F_LIVE) {
			/* A learned entry becomes the static one (it no longer counts for its port). */
			tb->port_learned[e.port]--;
			c->replaced_learned++;
		} else {
			tb->n_dead--;
			tb->dom_entries[bd]++;
		}
		l2_commit(l2, (uint32_t)pos, e, n);
		tb->n_static++;
		c->added++;
		return;
	}
	/* Static entries win over learned ones for the table_size slots. */
	if (tb->n_slots >= l2->cap)
		l2_evict(st, l2, c);
	pos = tb->n_slots < l2->cap ? l2_tbl_add(l2, op->key) : -ENOSPC;
	if (pos < 0) {
		c->failed++;        /* not reachable: the parse caps statics at table_size */
		return;
	}
	l2->ent[pos].e = n;
	tb->n_slots++;
	tb->dom_entries[bd]++;
	tb->n_static++;
	c->added++;
}

/*
 * Flush: take the learned entries that match out of service (l2_kill; the
 * sweep removes their keys), up to @p budget positions. True when done.
 */
static bool
l2_flush_run(struct l2_priv *l2, struct l2_cmd *c, uint32_t budget)
{
	struct l2_entry e;

	for (; c->flush_pos < l2->n_pos && budget-- != 0; c->flush_pos++) {
		e = l2_load(l2, c->flush_pos);
		if ((e.flags & (L2_F_LIVE | L2_F_STATIC)) != L2_F_LIVE ||
		    (c->flush_port >= 0 && e.port != c->flush_port) ||
		    (c->flush_bd >= 0 && e.bd != c->flush_bd) ||
		    (c->flush_ports != 0 && (e.port >= PF_MAX_PORTS ||
					     !((c->flush_ports >> e.port) & 1))))
			continue;
		/* Another instance changed it meanwhile (a refresh): taken next flush. */
		if (l2_kill(l2, c->flush_pos, e))
			c->flushed++;
	}
	return c->flush_pos >= l2->n_pos;
}

/* Take a posted update, and once told to, apply up to @p budget of its operations. */
static void
l2_cmd_run(struct pf_stage *st, struct l2_priv *l2, uint32_t budget)
{
	struct l2_cmd *c = l2->cmd_cur;
	uint32_t go;

	if (c == NULL) {
		c = __atomic_exchange_n(&l2->cmd_post, NULL, __ATOMIC_ACQUIRE);
		if (c == NULL)
			return;
		l2->cmd_cur = c;
		__atomic_store_n(&c->taken, 1, __ATOMIC_RELEASE);
	}
	go = __atomic_load_n(&c->go, __ATOMIC_ACQUIRE);
	if (go == L2_CMD_HOLD)
		return;
	if (go == L2_CMD_APPLY) {
		if (!c->started) {
			c->started = true;
			l2_set_age(l2, c->age_s);
			l2->port_limit = c->port_limit;
			/* Between bursts: the next one floods and learns by the new ports. */
			if (c->ports) {
				memcpy(l2->dom_mask, c->dom_mask, sizeof(l2->dom_mask));
				memcpy(l2->untagged_bd, c->untagged_bd, sizeof(l2->untagged_bd));
			}
		}
		while (c->next < c->n_ops && budget-- != 0)
			l2_op_apply(st, l2, c, &c->ops[c->next++]);
		if (c->next != c->n_ops)
			return;
		if (c->flush && !l2_flush_run(l2, c, budget))
			return;
	}
	/* The control thread owns c again after this store. */
	l2->cmd_cur = NULL;
	__atomic_store_n(&l2->cmd_done, l2->cmd_done + 1, __ATOMIC_RELEASE);
}

/* Bounded upkeep between bursts: updates, aging, the table-full warning. */
static void
l2_upkeep(struct pf_stage *st, uint64_t now_ns, uint32_t cmd_budget, uint32_t sweep_budget)
{
	struct l2_priv *l2 = st->priv;
	uint32_t now_s = (uint32_t)(now_ns / L2_NS_PER_S), t;
	uint16_t d, k;

	if (l2->pcap_clock && st->runtime_runs) {
		/* Replay under a runtime: rx's clock runs ahead of packets still
		 * queued to an instance; age by the oldest time every instance has
		 * processed, so no entry ages before its own refresh is seen. */
		for (k = 0, now_s = UINT32_MAX; k < l2->tb->n_inst; k++) {
			t = __atomic_load_n(&l2->tb->pkt_s[k], __ATOMIC_RELAXED);
			now_s = RTE_MIN(now_s, t);
		}
	} else if ((int32_t)(l2->pkt_s - now_s) > 0) {
		now_s = l2->pkt_s;
	}
	if ((int32_t)(now_s - l2->now_s) > 0)
		l2->now_s = now_s;
	if (unlikely(l2->cmd_cur != NULL ||
		     __atomic_load_n(&l2->cmd_post, __ATOMIC_RELAXED) != NULL))
		l2_cmd_run(st, l2, cmd_budget);
	if (l2->sweeper && (l2->age_s != 0 || l2->tb->n_dead != 0 ||
			    l2->tb->pend_head != l2->tb->pend_tail))
		l2_sweep(st, l2, sweep_budget);
	for (d = 0; d < l2->n_domains; d++)
		if (l2->dom_full[d] != l2->dom_full_warned[d]) {
			l2_warn_full(st, false);
			break;
		}
}

void
l2_housekeep(struct pf_stage *st, uint64_t now_ns)
{
	l2_upkeep(st, now_ns, L2_CMD_HOUSEKEEP, L2_SWEEP_HOUSEKEEP);
}

void
l2_idle(struct pf_stage *st, uint64_t now_ns)
{
	l2_upkeep(st, now_ns, L2_CMD_IDLE, L2_SWEEP_IDLE);
}

/* ---- the control thread ------------------------------------------------------------ */

static int
l2_act_error(struct pf_sink *d, const char *msg)
{
	pf_sink_str(d, "error", msg);
	return 0;
}


/*
 * What the running table cannot change: its size and its bridge domains
 * (their number, names and VLANs; their ports may change, as ports come and
 * go live).
 */
int
l2_update_check(const struct pf_stage *st, const struct pf_stage_conf *new_sc,
		struct pf_errs *errs)
{
	const struct l2_cfg *old = st->conf->cfg, *cfg = new_sc->cfg;
	const struct l2_priv *l2 = st->priv;
	const struct pf_node *v;
	int rc = 0;
	uint16_t d;

	if (cfg->table_size != l2->cap) {
		v = pf_map_get(new_sc->node, "table_size");
		rc = pf_node_err(errs, v != NULL ? v : new_sc->node,
				 "stages.%s.table_size: changing the table size (%u -> %u) needs a "
				 "restart (the table is allocated at start)", new_sc->name, l2->cap,
				 cfg->table_size);
	}
	for (d = 0; d < cfg->n_domains && cfg->n_domains == l2->n_domains; d++)
		if (cfg->dom[d].vlan != l2->dom_vlan[d] ||
		    strcmp(cfg->dom[d].name, old->dom[d].name) != 0)
			break;
	if (cfg->n_domains != l2->n_domains || d < cfg->n_domains) {
		const char *key = pf_map_get(new_sc->node, "domains") != NULL ? "domains" : "ports";

		rc = pf_node_err(errs, pf_map_get(new_sc->node, key),
				 "stages.%s.%s: changing bridge domains (their number, names or "
				 "VLANs) needs a restart", new_sc->name, key);
	}
	if (l2->mt) {
		/* The shared table takes learning from every instance at once; the
		 * static-entry applier is single-writer code, so not live here. */
		struct l2_static_key *k = l2_static_keys(cfg);
		uint32_t i = 0;

		if (k != NULL && cfg->n_static == l2->n_applied)
			for (i = 0; i < cfg->n_static; i++)
				if (k[i].key != l2->applied[i].key || k[i].port != l2->applied[i].port)
					break;
		if ((k == NULL || cfg->n_static != l2->n_applied || i != cfg->n_static) &&
		    new_sc->instance != 0) {
			rc = -EINVAL;   /* instance 0 says why, once */
		} else if (k == NULL || cfg->n_static != l2->n_applied || i != cfg->n_static) {
			v = pf_map_get(new_sc->node, "static");
			rc = pf_node_err(errs, v != NULL ? v : new_sc->node,
					 "stages.%s.static: changing static entries of a stage with "
					 "instances needs a restart", new_sc->group[0] != '\0' ?
					 new_sc->group : new_sc->name);
		}
		free(k);
	}
	return rc;
}

/* Operations turning static set @p a into @p b (both sorted by key). */
static struct l2_cmd *
l2_cmd_build(const struct l2_static_key *a, uint32_t na, const struct l2_static_key *b,
	     uint32_t nb, const struct l2_cfg *cfg)
{
	struct l2_cmd *c = calloc(1, sizeof(*c) + ((size_t)na + nb) * sizeof(struct l2_op));
	uint32_t i = 0, j = 0, n = 0;

	if (c == NULL)
		return NULL;
	c->age_s = cfg->age_s;
	c->port_limit = cfg->port_learn_limit;
	/* Removals first, so adds find the slots they free. */
	while (i < na) {
		while (j < nb && b[j].key < a[i].key)
			j++;
		if (j == nb || b[j].key != a[i].key)
			c->ops[n++] = (struct l2_op){ .key = a[i].key, .del = 1 };
		i++;
	}
	for (i = 0, j = 0; j < nb; j++) {
		while (i < na && a[i].key < b[j].key)
			i++;
		if (i == na || a[i].key != b[j].key || a[i].port != b[j].port)
			c->ops[n++] = (struct l2_op){ .key = b[j].key, .port = b[j].port };
	}
	c->n_ops = n;
	return c;
}

static double
l2_ms_since(uint64_t tsc)
{
	return (double)(rte_get_tsc_cycles() - tsc) * 1e3 / (double)rte_get_tsc_hz();
}

/* Wait for the lcore to finish with @p c (applied or dropped). */
static void
l2_cmd_wait(struct pf_stage *st, struct l2_priv *l2, struct l2_cmd *c)
{
	if (!st->runtime_runs)
		l2_cmd_run(st, l2, UINT32_MAX);
	/* It took the command, so its housekeep gets to it within a millisecond. */
	while (__atomic_load_n(&l2->cmd_done, __ATOMIC_ACQUIRE) == c->done0)
		rte_delay_us_sleep(50);
}

/*
 * Reload: new static entries, age_s and port_learn_limit, applied to the
 * running table; learned entries stay. Prepare computes the difference and
 * posts it; the lcore running the stage takes it in its housekeep op (about
 * once a millisecond, loaded or idle) or idle hook and holds it, so that
 * commit cannot fail: commit tells the lcore to apply it there in slices
 * (l2_cmd_run; the table keeps one writer and lock-free readers) and waits,
 * abort tells it to drop it. An lcore that does not take the update within
 * L2_UPDATE_TIMEOUT_MS gets it withdrawn: prepare refuses, -ETIMEDOUT.
 * Stand-alone stages (unit tests, no runtime) apply it in the caller.
 */
/*
 * Post @p c to the owning lcore and wait until it holds it. Returns 0, or
 * -ETIMEDOUT after L2_UPDATE_TIMEOUT_MS with @p c withdrawn (not freed).
 */
static int
l2_cmd_post(struct pf_stage *st, struct l2_priv *l2, struct l2_cmd *c)
{
	uint64_t t0 = rte_get_tsc_cycles();
	struct l2_cmd *expect;

	c->done0 = __atomic_load_n(&l2->cmd_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&l2->cmd_post, c, __ATOMIC_RELEASE);
	if (!st->runtime_runs)
		l2_cmd_run(st, l2, UINT32_MAX);
	while (!__atomic_load_n(&c->taken, __ATOMIC_ACQUIRE)) {
		if (l2_ms_since(t0) > L2_UPDATE_TIMEOUT_MS) {
			expect = c;
			/* Not taken yet: withdraw it. Taken meanwhile: held, go on. */
			if (__atomic_compare_exchange_n(&l2->cmd_post, &expect, NULL, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return -ETIMEDOUT;
		}
		rte_delay_us_sleep(50);
	}
	return 0;
}

/*
 * The domains' new ports (ports added to or removed from them), for the lcore
 * to take with the update; what was learned on a port that leaves a domain
 * is flushed.
 */
static void
l2_cmd_ports(const struct l2_priv *l2, const struct l2_cfg *cfg, struct l2_cmd *c)
{
	uint32_t left = 0;
	uint16_t d, p;

	memset(c->untagged_bd, L2_NO_BD, sizeof(c->untagged_bd));
	for (d = 0; d < cfg->n_domains; d++) {
		c->dom_mask[d] = cfg->dom[d].port_mask;
		left |= l2->dom_mask[d] & ~cfg->dom[d].port_mask;
		c->ports |= cfg->dom[d].port_mask != l2->dom_mask[d];
		for (p = 0; p < PF_MAX_PORTS; p++)
			if (cfg->dom[d].vlan == 0 && (cfg->dom[d].port_mask & (1u << p)))
				c->untagged_bd[p] = (uint8_t)d;
	}
	if (left != 0) {
		c->flush = true;
		c->flush_port = c->flush_bd = -1;
		c->flush_ports = left;
	}
}

int
l2_update_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		  struct pf_errs *errs)
{
	const struct l2_cfg *cfg = new_sc->cfg;
	struct l2_priv *l2 = st->priv;
	struct l2_static_key *keys;
	struct l2_cmd *c;

	if (l2_update_check(st, new_sc, errs) < 0)
		return -EINVAL;
	keys = l2_static_keys(cfg);
	c = keys != NULL ? l2_cmd_build(l2->applied, l2->n_applied, keys, cfg->n_static, cfg) : NULL;
	if (c == NULL) {
		free(keys);
		return pf_node_err(errs, new_sc->node, "stages.%s: out of memory", new_sc->name);
	}
	c->keys = keys;
	l2_cmd_ports(l2, cfg, c);
	if (l2_cmd_post(st, l2, c) < 0) {
		free(c);
		free(keys);
		pf_node_err(errs, new_sc->node,
			    "stages.%s: the lcore running the stage did not take "
			    "the update within %u ms; nothing changed",
			    new_sc->name, L2_UPDATE_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	*prep = c;
	return 0;
}

void *
l2_update_commit(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep)
{
	const struct l2_cfg *cfg = new_sc->cfg;
	struct l2_priv *l2 = st->priv;
	struct l2_cmd *c = prep;
	uint64_t t0 = rte_get_tsc_cycles();

	__atomic_store_n(&c->go, L2_CMD_APPLY, __ATOMIC_RELEASE);
	l2_cmd_wait(st, l2, c);
	PF_LOG(INFO, "l2fib %s: updated in %.2f ms: %u static added (%u replacing learned, "
	       "%u learned evicted), %u removed, %u re-pointed; age_s %u -> %u, "
	       "port_learn_limit %u -> %u", new_sc->name, l2_ms_since(t0), c->added,
	       c->replaced_learned, c->evicted, c->removed, c->repointed, l2->ctl_age_s,
	       cfg->age_s, l2->ctl_port_limit, cfg->port_learn_limit);
	if (c->failed != 0)
		PF_LOG(WARNING, "l2fib %s: %u static entries could not be inserted", new_sc->name,
		       c->failed);
	free(l2->applied);
	l2->applied = c->keys;
	l2->n_applied = cfg->n_static;
	l2->ctl_age_s = cfg->age_s;
	l2->ctl_port_limit = cfg->port_learn_limit;
	__atomic_store_n(&l2->updates, l2->updates + 1, __ATOMIC_RELAXED);
	free(c);
	/* Applied by the lcore itself: nothing for a grace period to release. */
	return NULL;
}

void
l2_update_abort(struct pf_stage *st, void *prep)
{
	struct l2_priv *l2 = st->priv;
	struct l2_cmd *c = prep;

	__atomic_store_n(&c->go, L2_CMD_DROP, __ATOMIC_RELEASE);
	l2_cmd_wait(st, l2, c);
	free(c->keys);
	free(c);
}

/*
 * /pipefwd/flush (the act op): "" every learned entry, "port=P" those on a
 * port, "domain=D" those of a bridge domain. Static entries stay. Posted to
 * the owning lcore like an update and applied there between bursts, so the
 * data path never waits; the table then shows none of them.
 */
int
l2_act(struct pf_stage *st, const char *what, const char *args, struct pf_sink *d)
{
	const struct l2_cfg *cfg = st->conf->cfg;
	struct l2_priv *l2 = st->priv;
	struct l2_cmd *c;
	int port = -1, bd = -1, rc;
	uint16_t i;

	if (strcmp(what, "flush") != 0)
		return -ENOENT;
	if (st->conf->instance != 0)
		return 0;            /* instances share instance 0's table */
	if (strncmp(args, "port=", 5) == 0) {
		port = pf_stage_port_index(st->env, args + 5);
		if (port < 0)
			return l2_act_error(d, "unknown port");
	} else if (strncmp(args, "domain=", 7) == 0) {
		for (i = 0; i < cfg->n_domains && bd < 0; i++)
			if (strcmp(cfg->dom[i].name, args + 7) == 0)
				bd = i;
		if (bd < 0)
			return l2_act_error(d, "unknown domain");
	} else if (args[0] != '\0') {
		return l2_act_error(d, "expected port=P or domain=D");
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->age_s = l2->ctl_age_s;
	c->port_limit = l2->ctl_port_limit;
	c->flush = true;
	c->flush_port = port;
	c->flush_bd = bd;
	rc = l2_cmd_post(st, l2, c);
	if (rc == 0) {
		__atomic_store_n(&c->go, L2_CMD_APPLY, __ATOMIC_RELEASE);
		l2_cmd_wait(st, l2, c);
		PF_LOG(INFO, "l2fib %s: flushed %u learned entries (%s)", st->conf->name, c->flushed,
		       args[0] != '\0' ? args : "all");
		pf_sink_str(d, "stage", st->conf->group);
		pf_sink_u64(d, "flushed", c->flushed);
	} else {
		l2_act_error(d, "the lcore running the stage did not take the flush; nothing changed");
	}
	free(c);
	return 0;
}
