/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The l2fib MAC table: 8-byte keys (MAC | domain << 48) in the key table of
 * l2fib_hash.c plus an array of 8-byte entries indexed by key position. One per stage, shared
 * by its instances. Here: creating and freeing it, removing keys (at once with
 * one instance, after a QSBR grace period with several), the incremental
 * aging sweep, eviction for static entries, gauges and the table-full warning.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_random.h>

#include "l2fib.h"
#include "pf_log.h"

#define L2_WARN_INTERVAL_S 10
#define L2_SWEEP_REMOVE 16                /* budget units a key removal costs in the sweep */

int
l2_init(struct pf_stage *st, struct pf_errs *errs)
{
	const struct l2_cfg *cfg = st->conf->cfg;
	struct l2_priv *l2 = st->priv;
	int socket = st->socket;
	struct l2_table *tb;
	uint64_t mem0;
	uint32_t i;
	uint16_t d, p;

	l2->cap = cfg->table_size;
	l2_set_age(l2, cfg->age_s);
	l2->inst = RTE_MIN(st->conf->instance, PF_MAX_INSTANCES - 1);
	l2->port_limit = cfg->port_learn_limit;
	l2->n_domains = cfg->n_domains;
	memset(l2->untagged_bd, L2_NO_BD, sizeof(l2->untagged_bd));
	for (d = 0; d < cfg->n_domains; d++) {
		l2->dom_vlan[d] = cfg->dom[d].vlan;
		l2->dom_mask[d] = cfg->dom[d].port_mask;
		for (p = 0; p < PF_MAX_PORTS; p++)
			if (cfg->dom[d].vlan == 0 && (cfg->dom[d].port_mask & (1u << p)))
				l2->untagged_bd[p] = (uint8_t)d;
	}
	l2->pcap_clock = st->env->clock == PF_CLOCK_PCAP;
	l2->ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	if (l2->ts_offset >= 0) {
		int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

		l2->ts_flag = bit >= 0 ? 1ull << bit : 0;
	}
	l2->applied = l2_static_keys(cfg);
	if (l2->applied == NULL)
		return pf_node_err(errs, st->conf->node, "stages.%s: out of memory", st->conf->name);
	l2->n_applied = cfg->n_static;
	l2->ctl_age_s = cfg->age_s;
	l2->ctl_port_limit = cfg->port_learn_limit;
	/* Port MACs are final here: configured, or read from the devices at start. */
	pf_own_macs_init(&l2->own, st->env);
	if (st->first != st) {
		/* Instance k > 0: use the table instance 0 made (init runs in order). */
		tb = ((struct l2_priv *)st->first->priv)->tb;
		if (tb == NULL)
			return pf_node_err(errs, st->conf->node, "stages.%s: instance 0 has no table",
					   st->conf->name);
		tb->refs++;
		l2->tb = tb;
		l2_tbl_view(l2, tb);
		return 0;
	}
	tb = rte_zmalloc_socket("l2fib_table", sizeof(*tb), RTE_CACHE_LINE_SIZE, socket);
	if (tb == NULL)
		return pf_node_err(errs, st->conf->node, "stages.%s: out of memory", st->conf->name);
	l2->tb = tb;
	tb->refs = 1;
	tb->mt = st->conf->n_instances > 1;
	tb->n_inst = RTE_MAX(st->conf->n_instances, 1);
	l2->mt = tb->mt;
	l2->sweeper = true;

	tb->mem_estimate = l2_tbl_mem(cfg->table_size);
	mem0 = pf_heap_used();
	/* A random seed: crafted sets of colliding MACs miss. */
	if (l2_tbl_create(tb, cfg->table_size, (uint32_t)rte_rand(), socket) < 0)
		return pf_node_err(errs, st->conf->node,
				   "stages.%s: cannot allocate a %u-entry MAC table (about %" PRIu64
				   " MiB); lower table_size or give EAL more memory (-m)",
				   st->conf->name, cfg->table_size, tb->mem_estimate >> 20);
	tb->mem_bytes = pf_heap_used() - mem0;
	l2_tbl_view(l2, tb);

	for (i = 0; i < cfg->n_static; i++) {
		const struct l2_static_cfg *s = &cfg->statics[i];
		uint64_t k = l2_key(s->mac, s->bd);
		int32_t pos = l2_tbl_add(l2, k);

		if (pos < 0)
			return pf_err_add(errs, s->file, s->line, s->col,
					  "stages.%s.static: cannot insert entry: %s", st->conf->name,
					  rte_strerror(-pos));
		tb->ent[pos].e = (struct l2_entry){ .port = s->port, .bd = (uint8_t)s->bd,
			.flags = L2_F_INHASH | L2_F_LIVE | L2_F_STATIC };
		tb->dom_entries[s->bd]++;
		tb->n_slots++;
		tb->n_static++;
	}
	PF_LOG(INFO, "l2fib %s: %u domain(s), table_size %u, %u static, age %u s, "
	       "%.1f MiB (estimated %.1f MiB)%s", st->conf->name, cfg->n_domains, cfg->table_size,
	       cfg->n_static, cfg->age_s, (double)tb->mem_bytes / 1048576.0,
	       (double)tb->mem_estimate / 1048576.0,
	       tb->mt ? ", shared by its instances" : "");
	return 0;
}

void
l2_warn_full(struct pf_stage *st, bool force)
{
	const struct l2_cfg *cfg = st->conf->cfg;
	struct l2_priv *l2 = st->priv;
	uint64_t now = rte_get_tsc_cycles();
	uint16_t d;

	if (!force && l2->warn_tsc != 0 &&
	    now - l2->warn_tsc < rte_get_tsc_hz() * L2_WARN_INTERVAL_S)
		return;
	for (d = 0; d < l2->n_domains; d++) {
		if (l2->dom_full[d] == l2->dom_full_warned[d])
			continue;
		PF_LOG(WARNING, "l2fib %s: MAC table full (%u entries, table_size %u): %" PRIu64
		       " source(s) in domain '%s' not learned, flooded instead (fib_full)",
		       st->conf->name, __atomic_load_n(&l2->tb->n_slots, __ATOMIC_RELAXED), l2->cap,
		       l2->dom_full[d] - l2->dom_full_warned[d], cfg->dom[d].name);
		l2->dom_full_warned[d] = l2->dom_full[d];
		l2->warn_tsc = now;
	}
}

void
l2_free(struct pf_stage *st)
{
	struct l2_priv *l2 = st->priv;
	struct l2_table *tb;

	if (l2 == NULL)
		return;
	free(l2->applied);
	l2->applied = NULL;
	if ((tb = l2->tb) == NULL)
		return;
	if (tb->keys != NULL)
		l2_warn_full(st, true);
	l2->tb = NULL;
	l2->keys = NULL;
	l2->ovf = NULL;
	l2->ent = NULL;
	/* The last instance to go frees the shared table. */
	if (--tb->refs != 0)
		return;
	l2_tbl_destroy(tb);
	rte_free(tb);
}

/*
 * Remove the dead key at @p pos (instance 0's sweep only: never while a
 * burst of its own holds positions). One instance: the position is reused at
 * once. Several: it is marked gone and freed after a grace period, because
 * another instance may hold it from a lookup made before the delete.
 */
void
l2_remove(struct l2_priv *l2, uint32_t pos, struct l2_entry e, bool dead)
{
	struct l2_table *tb = l2->tb;
	struct l2_entry gone = { .flags = L2_F_GONE };

	if (!l2->mt) {
		l2_tbl_del(l2, pos, false);
		l2->ent[pos].w = 0;
		tb->n_slots--;
		tb->n_dead -= dead;
		return;
	}
	if (tb->pend_tail - tb->pend_head == L2_PEND || !l2_commit(l2, pos, e, gone))
		return;   /* no room to defer (next sweep), or revived meanwhile */
	l2_add(l2, &tb->n_dead, -(int32_t)dead);
	l2_tbl_del(l2, pos, true);
	tb->pend_pos[tb->pend_tail % L2_PEND] = pos;
	tb->pend_tok[tb->pend_tail % L2_PEND] = pf_rcu_start();
	tb->pend_tail++;
}

/* Free the removed positions whose grace period is over (tokens only grow). */
static void
l2_reclaim(struct l2_priv *l2)
{
	struct l2_table *tb = l2->tb;
	uint32_t pos;

	while (tb->pend_head != tb->pend_tail &&
	       pf_rcu_done(tb->pend_tok[tb->pend_head % L2_PEND])) {
		pos = tb->pend_pos[tb->pend_head % L2_PEND];
		/* Empty before free: whoever gets the position next claims it from 0. */
		__atomic_store_n(&l2->ent[pos].w, 0, __ATOMIC_RELEASE);
		l2_tbl_release(l2, pos);
		l2_add(l2, &tb->n_slots, -1);
		tb->pend_head++;
	}
}

void
l2_sweep(struct pf_stage *st, struct l2_priv *l2, uint32_t budget)
{
	uint32_t pos, n = RTE_MIN(budget, l2->n_pos);
	struct l2_entry e;

	/* Entries expire in whole seconds: one pass per second finds them all;
	 * with the wall clock and a long age_s, one per age_s / 8 is enough (an
	 * expired entry is unknown to lookups at once; only its slot waits). */
	if ((int32_t)(l2->now_s - l2->sweep_rest_s) < 0)
		n = 0;
	/* A position check costs 1, a key removal L2_SWEEP_REMOVE: a call stays short
	 * when many entries expire at once. */
	while (n != 0) {
		n--;
		pos = l2->sweep_pos;
		l2->sweep_pos = pos + 1 == l2->n_pos ? 0 : pos + 1;
		if (l2->sweep_pos == 0) {
			/* Pass done: rest. */
			l2->sweep_rest_s = l2->now_s +
				(l2->pcap_clock || l2->age_s < 16 ? 1 : l2->age_s / 8);
			n = 0;
		}
		e = l2_load(l2, pos);
		if ((e.flags & (L2_F_INHASH | L2_F_STATIC)) != L2_F_INHASH)
			continue;
		if (e.flags & L2_F_LIVE) {
			if (!l2_expired(l2, &e, l2->now_s) || !l2_kill(l2, pos, e))
				continue;
			st->ctrs[L2_CTR_AGED]++;
			e.flags &= (uint8_t)~L2_F_LIVE;
		}
		l2_remove(l2, pos, e, true);
		n -= RTE_MIN(n, (uint32_t)L2_SWEEP_REMOVE);
	}
	if (l2->mt)
		l2_reclaim(l2);
}

/* Make room for a static entry in a table at table_size: remove one learned
 * (live or dead) entry. Returns false if there is none. */
bool
l2_evict(struct pf_stage *st, struct l2_priv *l2, struct l2_cmd *c)
{
	struct l2_entry e;
	uint32_t n, pos = l2->sweep_pos;

	for (n = 0; n < l2->n_pos; n++, pos = pos + 1 == l2->n_pos ? 0 : pos + 1) {
		e = l2_load(l2, pos);
		if ((e.flags & (L2_F_INHASH | L2_F_STATIC)) != L2_F_INHASH)
			continue;
		if (e.flags & L2_F_LIVE) {
			if (!l2_kill(l2, pos, e))
				continue;
			st->ctrs[L2_CTR_STATIC_EVICT]++;
			c->evicted++;
			e.flags &= (uint8_t)~L2_F_LIVE;
		}
		l2_remove(l2, pos, e, true);
		return true;
	}
	return false;
}

/* Static entry changes (one instance only: update_check refuses them with
 * instances, so these plain writes have no concurrent writer). */

void
l2_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct l2_cfg *cfg = st->conf->cfg;
	const struct l2_priv *l2 = st->priv;
	const struct l2_table *tb = l2->tb;
	uint32_t live = 0;
	char name[48];
	uint16_t d;

	for (d = 0; d < l2->n_domains; d++)
		live += l2_get(&tb->dom_entries[d]);
	pf_sink_u64(out, "entries", live);
	pf_sink_u64(out, "entries_static", tb->n_static);
	pf_sink_u64(out, "table_size", l2->cap);
	pf_sink_u64(out, "memory_bytes", tb->mem_bytes);
	pf_sink_u64(out, "updates", __atomic_load_n(&l2->updates, __ATOMIC_RELAXED));
	for (d = 0; d < l2->n_domains; d++) {
		snprintf(name, sizeof(name), "entries.%s", cfg->dom[d].name);
		pf_sink_u64(out, name, l2_get(&tb->dom_entries[d]));
	}
}

