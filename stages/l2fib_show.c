/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fib's table for the stats socket (/pipefwd/table,STAGE,macs): every
 * live entry with its MAC, port, domain, VLAN, kind and age, filtered by
 * port and VLAN, paged by offset in hash-position order.
 *
 * Runs on the telemetry thread beside the data path. Reads never lock,
 * whoever writes: the entry array is read one 8-byte word at a time and the
 * key at the same position with l2_tbl_key_at (one 8-byte word too); an
 * entry that changed while its key was read is skipped,
 * so every row shown was a real entry at some instant. Positions are not
 * stable across learning and aging: a page is a recent view, not a snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>


#include "l2fib.h"

static const struct pf_show_col l2_mac_cols[] = {
	{ "mac", PF_SHOW_STR }, { "port", PF_SHOW_STR }, { "domain", PF_SHOW_STR },
	{ "vlan", PF_SHOW_U64 }, { "type", PF_SHOW_STR }, { "age_s", PF_SHOW_U64 },
};

static int
l2_show_macs(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct l2_cfg *cfg = st->conf->cfg;
	const struct l2_priv *l2 = st->first->priv;
	uint32_t pos, now_s = __atomic_load_n(&l2->now_s, __ATOMIC_RELAXED);
	union pf_show_val v[RTE_DIM(l2_mac_cols)];
	struct pf_show *sh;
	struct l2_entry e;
	union l2_slot s1, s2;
	char mac[18];
	uint64_t key;

	sh = pf_show_start(d, req, l2_mac_cols, RTE_DIM(l2_mac_cols));
	if (sh == NULL)
		return -ENOMEM;
	for (pos = 0; pos < l2->n_pos; pos++) {
		s1.w = __atomic_load_n(&l2->ent[pos].w, __ATOMIC_ACQUIRE);
		e = s1.e;
		if ((e.flags & (L2_F_INHASH | L2_F_LIVE)) != (L2_F_INHASH | L2_F_LIVE) ||
		    (e.flags & L2_F_GONE) || e.bd >= l2->n_domains ||
		    (req->port >= 0 && e.port != req->port) ||
		    (req->vlan >= 0 && l2->dom_vlan[e.bd] != req->vlan))
			continue;
		if (!l2_tbl_key_at(l2, pos, &key))
			continue;
		s2.w = __atomic_load_n(&l2->ent[pos].w, __ATOMIC_ACQUIRE);
		if (s2.w != s1.w || (uint8_t)(key >> 48) != e.bd)
			continue;   /* changed under us: not one entry */
		pf_show_mac(mac, (const uint8_t *)&key);
		v[0].s = mac;
		v[1].s = st->env->ports[e.port].name;
		v[2].s = cfg->dom[e.bd].name;
		v[3].u = l2->dom_vlan[e.bd];
		v[4].s = (e.flags & L2_F_STATIC) ? "static" : "learned";
		v[5].u = (e.flags & L2_F_STATIC) || (int32_t)(now_s - e.seen_s) < 0 ?
			 0 : now_s - e.seen_s;
		pf_show_row(sh, v);
	}
	pf_show_end(sh);
	return 0;
}

const char *const l2_show_tables[] = { "macs", NULL };

int
l2_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	struct pf_sink *d)
{
	if (strcmp(what, "macs") == 0)
		return l2_show_macs(st, req, d);
	return -ENOENT;
}
