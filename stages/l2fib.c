/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fib: MAC-learning bridge (bridge domains, learning, flooding, aging).
 * Edges: drop, out (md->out_port = a port, or PF_PORT_FLOOD with md->flood_mask).
 * Counters: drops l2_no_domain, l2_invalid_src_mac, l2_src_is_own_mac, l2_reserved_dst,
 *   l2_same_port, l2_flood_empty; info learned, mac_move, aged, hit, miss, flooded,
 *   fib_full, l2_learn_nospace, port_learn_limit, static_src_mismatch, static_evict.
 * Params: ports | domains, table_size (65536), age_s (300, 0 = never), static
 *   (inline list or file), port_learn_limit (0 = none). See docs/stages/l2fib.md.
 *
 * This file is the data path; l2fib_conf.c parses, l2fib_table.c owns the
 * table, l2fib_upkeep.c ages and applies live updates (housekeep and idle,
 * never here: process_burst takes no lock, never spins, does bounded work).
 *
 * One pass over the burst, in packet order, so a burst sees its own
 * learning exactly as if the packets came one by one: per packet, the
 * domain, the 8-byte keys (MAC | domain << 48), the source checks and one
 * learn or refresh per run of packets from the same station (same source,
 * port and second), then the destination: one lookup per run of the same
 * destination (l2_tbl_find: a CRC, one cache line of 8 keys compared at
 * once), its entry read per packet. Headers are prefetched 4 ahead and,
 * for tables larger than the cache, the destination's bucket 2 ahead.
 * Positions stay valid for the whole burst: keys are removed only between
 * bursts (one instance) or after a grace period (instances).
 *
 * Instances (`instances: N`) share one table (PF_STAGE_SHARED): every
 * instance learns (adds serialise on the table's writer lock; lookups stay lock-free),
 * each entry is one 8-byte word changed by compare-and-swap (so two
 * instances learning the same MAC agree on one outcome and the counts stay
 * exact), only instance 0 ages and removes, and a removed position is freed
 * only after a QSBR grace period, when no burst can still hold it.
 */
#include <errno.h>

#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>

#include "l2fib.h"

#define L2_PREFETCH 4                     /* headers prefetched this far ahead */
#define L2_PREFETCH_BKT 2                 /* destination buckets (large tables) */
#define L2_ADD_TRIES 1000                 /* re-adds while the sweeper deletes the old key */
#define L2_MAC_MASK 0xffffffffffffull
#define L2_REP_NONE l2_ctr_max            /* a repeated source counts nothing */

PF_CTR_DESCS(l2, foreach_l2_ctr);

enum { L2_EDGE_DROP, L2_EDGE_OUT, L2_EDGE_MAX };
static const char *const l2_edges[] = { "drop", "out" };
static const char *const l2_keys[] = { "ports", "domains", "table_size", "age_s", "static",
				       "port_learn_limit", NULL };

/* The 6 bytes at @p p as the low 48 bits of a key (the frame has >= 14 bytes). */
static __rte_always_inline uint64_t
l2_mac48(const uint8_t *p)
{
	uint64_t k;

	memcpy(&k, p, sizeof(k));
	return k & L2_MAC_MASK;
}

/*
 * Learn a source at @p pos, which held its key when it was looked up.
 * Returns false if the position no longer holds it (removed meanwhile).
 * *rep is the counter a repeat of this packet's source would bump.
 * Each change is decided on one read of the entry and committed whole;
 * a lost race (another instance changed it) reads again and re-decides.
 */
static __rte_always_inline bool
l2_learn_at(struct l2_priv *l2, uint64_t *ctrs, uint32_t pos, uint16_t in_port, uint32_t now_s,
	    uint8_t *rep)
{
	struct l2_table *tb = l2->tb;
	struct l2_entry e, n;

	for (;;) {
		e = l2_load(l2, pos);
		if (unlikely(!(e.flags & L2_F_INHASH)))
			return false;
		if (unlikely(e.flags & L2_F_STATIC)) {
			if (e.port != in_port) {
				ctrs[L2_CTR_STATIC_MISMATCH]++;
				*rep = L2_CTR_STATIC_MISMATCH;
			}
			return true;
		}
		n = e;
		if (likely(e.flags & L2_F_LIVE)) {
			bool old = l2_expired(l2, &e, now_s);

			if (likely(e.port == in_port) && likely(!old)) {
				/* Refresh at most once a second per entry: no line written
				 * per packet; a lost race means another instance wrote it. */
				if ((int32_t)(now_s - e.seen_s) > 0) {
					n.seen_s = now_s;
					l2_commit(l2, pos, e, n);
				}
				return true;
			}
			if (old) {
				/* Aged out before this packet: count it aged, then learn anew. */
				if (l2_kill(l2, pos, e))
					ctrs[L2_CTR_AGED]++;
				continue;
			}
			if (l2_port_full(l2, in_port)) {
				/* Cannot move: forget it rather than forward to the old port. */
				if (!l2_kill(l2, pos, e))
					continue;
				ctrs[L2_CTR_PORT_LIMIT]++;
				*rep = L2_CTR_PORT_LIMIT;
				return true;
			}
			n.port = in_port;
			n.seen_s = now_s;
			if (!l2_commit(l2, pos, e, n))
				continue;
			ctrs[L2_CTR_MOVED]++;
			l2_add(l2, &tb->port_learned[e.port], -1);
			l2_add(l2, &tb->port_learned[in_port], 1);
			return true;
		}
		/* In the hash but dead (aged or limited): give it to this source. */
		if (l2_port_full(l2, in_port)) {
			ctrs[L2_CTR_PORT_LIMIT]++;
			*rep = L2_CTR_PORT_LIMIT;
			return true;
		}
		n.flags |= L2_F_LIVE;
		n.port = in_port;
		n.seen_s = now_s;
		if (!l2_commit(l2, pos, e, n))
			continue;
		l2_add(l2, &tb->dom_entries[e.bd], 1);
		l2_add(l2, &tb->port_learned[in_port], 1);
		l2_add(l2, &tb->n_dead, -1);
		ctrs[L2_CTR_LEARNED]++;
		return true;
	}
}

/*
 * Learn the source of one packet, whose lookup gave @p pos. Returns the
 * counter the next packets of the same run (same source, port and second)
 * bump instead of learning again: a serial bridge would find the same.
 */
static uint8_t
l2_learn(struct l2_priv *l2, uint64_t *ctrs, uint64_t key, int32_t pos, uint16_t in_port,
	 uint8_t bd, uint32_t now_s)
{
	struct l2_table *tb = l2->tb;
	struct l2_entry e, n = { .port = in_port, .bd = bd, .seen_s = now_s,
				 .flags = L2_F_INHASH | L2_F_LIVE };
	uint8_t rep = L2_REP_NONE;
	unsigned int tries;

	if (likely(pos >= 0) && likely(l2_learn_at(l2, ctrs, (uint32_t)pos, in_port, now_s, &rep)))
		return rep;
	if (unlikely(l2_get(&tb->n_slots) >= l2->cap)) {
		ctrs[L2_CTR_FIB_FULL]++;
		l2->dom_full[bd]++;
		return L2_CTR_FIB_FULL;
	}
	if (l2_port_full(l2, in_port)) {
		ctrs[L2_CTR_PORT_LIMIT]++;
		return L2_CTR_PORT_LIMIT;
	}
	for (tries = 0;; tries++) {
		pos = l2_tbl_add(l2, key);
		if (unlikely(pos < 0 || (uint32_t)pos >= l2->n_pos)) {
			ctrs[L2_CTR_NOSPACE]++;
			return L2_CTR_NOSPACE;
		}
		e = l2_load(l2, (uint32_t)pos);
		if (likely(e.flags == 0)) {
			/* A fresh position: the instance whose commit lands claims it. */
			if (!l2_commit(l2, (uint32_t)pos, e, n))
				continue;
			l2_add(l2, &tb->n_slots, 1);
			l2_add(l2, &tb->dom_entries[bd], 1);
			l2_add(l2, &tb->port_learned[in_port], 1);
			ctrs[L2_CTR_LEARNED]++;
			break;
		}
		/* Another instance added the key first: learn on its entry. */
		if (l2_learn_at(l2, ctrs, (uint32_t)pos, in_port, now_s, &rep))
			break;
		/* The old position of a key being removed (instance 0 deletes it
		 * right after marking it gone): add again until the delete lands.
		 * Bounded: the delete follows the mark at once. */
		if (unlikely(tries == L2_ADD_TRIES)) {
			ctrs[L2_CTR_NOSPACE]++;
			return L2_CTR_NOSPACE;
		}
		rte_pause();
	}
	return rep;
}

/* The domain of a tagged frame: a VLAN domain with that VID holding the port. */
static uint8_t
l2_bd_vlan(const struct l2_priv *l2, uint16_t in_port, uint16_t tci)
{
	uint16_t vid = tci & 0xfff, d;

	for (d = 0; d < l2->n_domains; d++)
		if (l2->dom_vlan[d] == vid && (l2->dom_mask[d] & (1u << (in_port & 31))))
			return (uint8_t)d;
	return L2_NO_BD;
}

static __rte_always_inline bool
l2_reserved(const uint8_t *d)
{
	return d[0] == 0x01 && d[1] == 0x80 && d[2] == 0xc2 && d[3] == 0 && d[4] == 0 &&
	       (d[5] & 0xf0) == 0;
}

static __rte_always_inline uint32_t
l2_pkt_time(const struct l2_priv *l2, const struct rte_mbuf *m, uint32_t burst_s)
{
	/* Replay: each packet carries its capture time (us); use it, not the newest. */
	if (m->ol_flags & l2->ts_flag)
		return (uint32_t)(*RTE_MBUF_DYNFIELD(m, l2->ts_offset, const uint64_t *) /
				  1000000u);
	return burst_s;
}

/* Prefetch the bucket of @p m's destination (its header is in cache by now). */
static __rte_always_inline void
l2_prefetch_dst(const struct l2_priv *l2, const struct rte_mbuf *m, const int meta_off)
{
	const struct pf_meta *md = RTE_MBUF_DYNFIELD(m, meta_off, const struct pf_meta *);
	uint64_t k = l2_mac48(rte_pktmbuf_mtod(m, const uint8_t *)) |
		     (uint64_t)l2->untagged_bd[md->in_port & (PF_MAX_PORTS - 1)] << 48;

	rte_prefetch0(&l2->keys[(size_t)(l2_hash_key(k, l2->seed) & l2->bmask) * L2_BKT]);
}

/* @p dry: a dry run (pf_stage.dry_run): forward as always, learn nothing, move no clock. */
static __rte_always_inline uint16_t
l2_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge, const bool pcap,
	 const bool dry)
{
	struct l2_priv *l2 = st->priv;
	uint64_t *ctrs = st->ctrs;
	const int meta_off = pf_meta_offset;
	const bool pre_bkt = l2->prefetch_ent;
	uint64_t prev = UINT64_MAX, prev_dkey = UINT64_MAX;
	uint32_t burst_s, prev_t, hit = 0, miss = 0, flooded = 0;
	/* Every hit's port OR-ed and AND-ed: equal when they all share one. */
	uint16_t port_or = 0, port_and = UINT16_MAX;
	int32_t prev_dp = -ENOENT;
	uint16_t i, drops = 0;
	uint8_t rep = L2_REP_NONE;

	burst_s = (uint32_t)(pf_now_ns() / L2_NS_PER_S);
	prev_t = burst_s;
	for (i = 0; i < n && i < L2_PREFETCH; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; pre_bkt && i < n && i < L2_PREFETCH_BKT; i++)
		l2_prefetch_dst(l2, pkts[i], meta_off);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pf_meta *md = RTE_MBUF_DYNFIELD(m, meta_off, struct pf_meta *);
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
		uint16_t in_port = md->in_port;
		uint32_t t = burst_s, mask;
		uint64_t skey, dkey;
		struct l2_entry e;
		bool new_run;
		int32_t dp;
		uint8_t bd;

		if (i + L2_PREFETCH < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + L2_PREFETCH], void *));
		if (pre_bkt && i + L2_PREFETCH_BKT < n)
			l2_prefetch_dst(l2, pkts[i + L2_PREFETCH_BKT], meta_off);
		if (likely(!(md->flags & PF_META_VLAN)))
			bd = l2->untagged_bd[in_port & (PF_MAX_PORTS - 1)];
		else
			bd = l2_bd_vlan(l2, in_port, md->vlan_tci);
		if (unlikely(bd == L2_NO_BD)) {
			PF_DROP(edge, i, ctrs, L2_CTR_NO_DOMAIN);
			drops++;
			continue;
		}
		if (pcap) {
			t = l2_pkt_time(l2, m, burst_s);
			if ((int32_t)(t - l2->pkt_s) > 0 && !dry)
				l2->pkt_s = t;
		}
		skey = l2_mac48(d + 6) | (uint64_t)bd << 48;
		/* A run of one station (source, domain, port, second): its source
		 * checks and learning are done once. Ports < 32 fit above the domain. */
		new_run = (skey | (uint64_t)in_port << 56) != prev || (pcap && t != prev_t);
		if (new_run) {
			/* rx drops these already; a FIB must never learn them whoever feeds it. */
			if (unlikely((d[6] & 1) || (skey & L2_MAC_MASK) == 0)) {
				PF_DROP(edge, i, ctrs, L2_CTR_INVALID_SRC);
				drops++;
				continue;
			}
			/* rx drops these too (reliability.md case 8): a spoof or a loop. */
			if (unlikely(pf_own_mac(&l2->own, d + 6))) {
				PF_DROP(edge, i, ctrs, L2_CTR_OWN_SRC);
				drops++;
				continue;
			}
		}
		if (unlikely(d[0] & 1) && unlikely(l2_reserved(d))) {
			PF_DROP(edge, i, ctrs, L2_CTR_RESERVED_DST);
			drops++;
			continue;   /* its source is not learned either */
		}
		if (new_run) {
			if (!dry)
				rep = l2_learn(l2, ctrs, skey,
					       l2_tbl_find(l2, skey, l2_hash_key(skey, l2->seed)),
					       in_port, bd, t);
			prev = skey | (uint64_t)in_port << 56;
			prev_t = t;
		} else if (unlikely(rep != L2_REP_NONE)) {
			/* The run's first packet failed to learn (or met a static entry):
			 * each packet of the run counts it, as one by one. */
			ctrs[rep]++;
			if (rep == L2_CTR_FIB_FULL && !dry)
				l2->dom_full[bd]++;
		}
		edge[i] = L2_EDGE_OUT;
		md->bd = bd;
		if (likely(!(d[0] & 1))) {
			dkey = l2_mac48(d) | (uint64_t)bd << 48;
			/* The run's destination: one lookup (again if it missed: this
			 * burst may have learned it since), its entry read per packet. */
			if (dkey != prev_dkey || prev_dp < 0) {
				prev_dp = l2_tbl_find(l2, dkey, l2_hash_key(dkey, l2->seed));
				prev_dkey = dkey;
			}
			dp = prev_dp;
			if (likely(dp >= 0)) {
				e = l2_load(l2, (uint32_t)dp);
				if (likely(e.flags & L2_F_LIVE) && likely(!l2_expired(l2, &e, t))) {
					if (unlikely(e.port == in_port)) {
						PF_DROP(edge, i, ctrs, L2_CTR_SAME_PORT);
						drops++;
						continue;
					}
					md->out_port = e.port;
					port_or |= e.port;
					port_and &= e.port;
					hit++;
					continue;
				}
			}
			miss++;
		}
		/* Unknown unicast, broadcast, multicast: every other port of the domain. */
		mask = l2->dom_mask[bd] & ~(1u << in_port);
		if (unlikely(mask == 0)) {
			PF_DROP(edge, i, ctrs, L2_CTR_FLOOD_EMPTY);
			drops++;
			continue;
		}
		md->out_port = PF_PORT_FLOOD;
		md->flood_mask = mask;
		flooded++;
	}
	ctrs[L2_CTR_HIT] += hit;
	ctrs[L2_CTR_MISS] += miss;
	ctrs[L2_CTR_FLOODED] += flooded;
	/* Replay: tell the sweep how far this instance got (l2_upkeep). */
	if (pcap && !dry)
		__atomic_store_n(&l2->tb->pkt_s[l2->inst], l2->pkt_s, __ATOMIC_RELAXED);
	if (likely(drops == 0)) {
		/* One known port for the whole burst: tx sends it as it is. */
		if (hit == n && port_or == port_and)
			st->burst_port = PF_BURST_PORT(port_or);
		return L2_EDGE_OUT;
	}
	return drops == n ? L2_EDGE_DROP : PF_EDGE_MIXED;
}

/* trace inject's dry run, out of line: the live loops stay as they were. */
static __rte_noinline uint16_t
l2_burst_dry(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	if (((const struct l2_priv *)st->priv)->pcap_clock)
		return l2_burst(st, pkts, n, edge, true, true);
	return l2_burst(st, pkts, n, edge, false, true);
}

static uint16_t
l2_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct l2_priv *l2 = st->priv;

	if (unlikely(st->dry_run))
		return l2_burst_dry(st, pkts, n, edge);
	if (unlikely(l2->pcap_clock))
		return l2_burst(st, pkts, n, edge, true, false);
	return l2_burst(st, pkts, n, edge, false, false);
}

static const char *const l2_edit_tables[] = { "macs", NULL };

const struct pf_stage_ops pf_l2fib_ops = {
	.type = "l2fib",
	.summary = "MAC-learning bridge: bridge domains, learning, flooding, aging",
	.flags = PF_STAGE_SHARED | PF_STAGE_KEEPS_FLOW,
	.priv_size = sizeof(struct l2_priv),
	.n_edges = L2_EDGE_MAX,
	.edge_names = l2_edges,
	.default_edge = L2_EDGE_OUT,
	.n_ctrs = l2_ctr_max,
	.ctrs = l2_ctrs,
	.dp = {
		.process_burst = l2_process_burst,
		.idle = l2_idle,
		.housekeep = l2_housekeep,
	},
	.ctl = {
		.param_keys = l2_keys,
		.parse = l2_parse,
		.cfg_free = l2_cfg_free,
		.init = l2_init,
		.prepare = l2_update_prepare,
		.commit = l2_update_commit,
		.release = l2_update_abort,
		.check = l2_update_check,
		.free = l2_free,
		.edit = l2_cfg_edit,
		.edit_tables = l2_edit_tables,
		.act = l2_act,
	},
	.obs = {
		.gauges = l2_gauges,
		.show = l2_show,
		.show_tables = l2_show_tables,
	},
};
