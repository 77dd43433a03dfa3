/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fib: MAC-learning bridge (bridge domains, learning, flooding, aging) on rte_hash.
 * Edges: drop, out (md->out_port = a port, or PF_PORT_FLOOD with md->flood_mask).
 * Counters: drops l2_no_domain, l2_invalid_src_mac, l2_src_is_own_mac, l2_reserved_dst,
 *   l2_same_port, l2_flood_empty; info learned, mac_move, aged, hit, miss, flooded,
 *   fib_full, l2_learn_nospace, port_learn_limit, static_src_mismatch, static_evict.
 * Params: ports | domains, table_size (65536), age_s (300, 0 = never), static
 *   (inline list or file), port_learn_limit (0 = none). See docs/stages/l2fib.md.
 *
 * Instances (`instances: N`) share one table (PF_STAGE_SHARED): instance 0
 * creates it, the others reference it. With one instance the lcore running
 * the stage is the only writer and reader: entries change with plain stores
 * and a removed key's position is reused at once. With several, every
 * instance learns (rte_hash with MULTI_WRITER_ADD; lookups stay lock-free),
 * each entry is one 8-byte word changed by compare-and-swap (so two
 * instances learning the same MAC agree on one outcome and the counts stay
 * exact), only instance 0 ages and removes, and a removed position is freed
 * only after a QSBR grace period (pf_rcu_start/pf_rcu_done), when no burst
 * can still hold it from a lookup.
 *
 * Entry state lives in an array indexed by the hash position, so a lookup
 * costs one bucket probe plus one 8-byte entry. Positions stay stable for
 * the whole burst: entries are only removed by the sweep, after the burst.
 *
 * Live update (reload): the control thread never writes the table. It
 * diffs the static entries against those applied, posts one command (new
 * age_s and port_learn_limit, then static removals, then static adds) and
 * waits; the owning lcore takes it at the start of a burst or in its idle
 * hook and applies it in slices (256 operations per burst, 4096 per idle
 * call), between bursts, where no position is held. See l2_update_prepare().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>
#include <rte_random.h>

#include "pf_log.h"
#include "pf_ownmac.h"
#include "pf_stage.h"

#define L2_MAX_DOMAINS 16
#define L2_TABLE_DEFAULT 65536u
#define L2_TABLE_MAX (16u << 20)          /* 16,777,216 entries */
#define L2_AGE_DEFAULT 300u
#define L2_AGE_MAX (366u * 86400u)
#define L2_NO_BD 0xff
#define L2_CHUNK 32                       /* 2 keys per packet: one lookup_bulk of <= 64 */
#define L2_SWEEP_BURST 16                 /* entries checked for age after each burst */
#define L2_SWEEP_IDLE 4096                /* ... and per idle call */
#define L2_WARN_INTERVAL_S 10
#define L2_NS_PER_S 1000000000ull
#define L2_PEND 4096                      /* removals awaiting a grace period (instances) */
#define L2_ADD_TRIES 1000                 /* re-adds while the sweeper deletes the old key */
#define L2_LCORE_CACHE 64                 /* rte_hash's per-lcore free-slot cache (MULTI_WRITER_ADD) */
#define L2_CMD_BURST 256                  /* update operations applied per burst */
#define L2_CMD_IDLE 4096                  /* ... and per idle call */
#define L2_UPDATE_TIMEOUT_MS 5000         /* lcore silent this long: update withdrawn */

#define foreach_l2_ctr(_)									\
	_(L2_CTR_NO_DOMAIN, l2_no_domain, DROP, "(ingress port, VLAN) belongs to no bridge domain") \
	_(L2_CTR_INVALID_SRC, l2_invalid_src_mac, DROP, "source MAC is zero or a group address")	\
	_(L2_CTR_OWN_SRC, l2_src_is_own_mac, DROP, "source MAC is one of pipefwd's port MACs (never learned)") \
	_(L2_CTR_RESERVED_DST, l2_reserved_dst, DROP, "destination 01:80:c2:00:00:0x (IEEE link-local)") \
	_(L2_CTR_SAME_PORT, l2_same_port, DROP, "destination MAC is on the ingress port")	\
	_(L2_CTR_FLOOD_EMPTY, l2_flood_empty, DROP, "flood with no other port in the domain")	\
	_(L2_CTR_LEARNED, learned, INFO, "source MACs learned (new entries)")			\
	_(L2_CTR_MOVED, mac_move, INFO, "station moves: a learned MAC seen on another port")	\
	_(L2_CTR_AGED, aged, INFO, "learned entries removed after age_s without traffic")	\
	_(L2_CTR_HIT, hit, INFO, "unicast destinations found in the table")			\
	_(L2_CTR_MISS, miss, INFO, "unknown unicast destinations (flooded)")			\
	_(L2_CTR_FLOODED, flooded, INFO, "packets flooded (unknown unicast, broadcast, multicast)") \
	_(L2_CTR_FIB_FULL, fib_full, INFO, "sources not learned: table at table_size (flooded still)") \
	_(L2_CTR_NOSPACE, l2_learn_nospace, INFO, "sources not learned: rte_hash had no room")	\
	_(L2_CTR_PORT_LIMIT, port_learn_limit, INFO, "sources not learned: port_learn_limit")	\
	_(L2_CTR_STATIC_MISMATCH, static_src_mismatch, INFO,					\
	  "source matches a static entry of another port (entry kept)")			\
	_(L2_CTR_STATIC_EVICT, static_evict, INFO,						\
	  "learned entries removed to make room for static entries added by a reload")

PF_CTR_ENUM(l2, foreach_l2_ctr);
PF_CTR_DESCS(l2, foreach_l2_ctr);

enum { L2_EDGE_DROP, L2_EDGE_OUT, L2_EDGE_MAX };
static const char *const l2_edges[] = { "drop", "out" };
static const char *const l2_keys[] = { "ports", "domains", "table_size", "age_s", "static",
				       "port_learn_limit", NULL };

/* ---- configuration (parse: no DPDK) -------------------------------------- */

struct l2_domain_cfg {
	char name[PF_NAME_MAX];
	uint16_t vlan;                /* 0: untagged traffic */
	uint32_t port_mask;
};

struct l2_static_cfg {
	uint8_t mac[6];
	uint16_t port;
	uint16_t bd;
	int line, col;                /* where it was declared (duplicate messages) */
	const char *file;
};

struct l2_cfg {
	uint16_t n_domains;
	struct l2_domain_cfg dom[L2_MAX_DOMAINS];
	uint32_t table_size;
	uint32_t age_s;
	uint32_t port_learn_limit;
	uint32_t n_static;
	struct l2_static_cfg *statics;
	char static_file[PATH_MAX];   /* "" when inline */
};

/* ---- run-time state -------------------------------------------------------- */

#define L2_F_INHASH 0x1               /* the position holds a key */
#define L2_F_LIVE   0x2               /* ... and forwards (else awaiting removal) */
#define L2_F_STATIC 0x4               /* never aged, never moved by learning */
#define L2_F_GONE   0x8               /* key deleted, position awaiting a grace period */

struct l2_entry {
	uint16_t port;
	uint8_t flags;
	uint8_t bd;
	uint32_t seen_s;              /* last time the source was seen, seconds */
};

/* A static entry as applied to the table: what the next update diffs against. */
struct l2_static_key {
	uint64_t key;                 /* l2_key(): MAC | domain << 48 */
	uint16_t port;
};

/* One update operation: remove a static entry, or set one (add, re-point). */
struct l2_op {
	uint64_t key;
	uint16_t port;
	uint8_t del;
};

/* What the control thread tells the lcore holding a taken update. */
enum l2_cmd_go { L2_CMD_HOLD = 0, L2_CMD_APPLY, L2_CMD_DROP };

/*
 * An update, posted by the control thread (reload prepare), taken and held
 * by the owning lcore, then applied (commit) or dropped (abort).
 */
struct l2_cmd {
	uint32_t age_s;
	uint32_t port_limit;
	uint32_t n_ops;
	uint32_t next;                /* applier only */
	uint32_t taken;               /* lcore -> control: holding it */
	uint32_t go;                  /* control -> lcore: enum l2_cmd_go */
	bool started;                 /* applier only */
	uint64_t done0;               /* control: cmd_done when posted */
	struct l2_static_key *keys;   /* control: the static set it leads to */
	/* What applying did (applier writes, control thread reads after done). */
	uint32_t added, removed, repointed, replaced_learned, evicted, failed;
	struct l2_op ops[];           /* removals first, then adds */
};


/* One entry is one word, so instances change it with one compare-and-swap. */
union l2_slot {
	struct l2_entry e;
	uint64_t w;
};

/* The MAC table: one per stage, shared by its instances. */
struct l2_table {
	struct rte_hash *h;
	union l2_slot *ent;           /* by hash position */
	uint32_t n_pos;               /* positions in ent[] */
	uint32_t refs;                /* instances using the table */
	bool mt;                      /* several instances: atomics, deferred frees */
	uint32_t n_slots;             /* keys in the hash: live + static + dead + gone */
	uint32_t n_dead;              /* keys awaiting removal by the sweep */
	uint32_t n_static;
	uint32_t dom_entries[L2_MAX_DOMAINS];
	uint32_t port_learned[PF_MAX_PORTS];
	uint64_t mem_bytes;           /* measured at init */
	uint64_t mem_estimate;
	/* Removed positions and their grace-period tokens (instance 0 only). */
	uint32_t pend_head, pend_tail;
	uint32_t pend_pos[L2_PEND];
	uint64_t pend_tok[L2_PEND];
};

struct l2_priv {
	struct l2_table *tb;
	struct rte_hash *h;           /* tb->h, tb->ent, tb->n_pos, tb->mt: read per packet */
	union l2_slot *ent;
	uint32_t n_pos;
	bool mt;
	bool sweeper;                 /* instance 0: ages and removes entries */
	uint32_t cap;                 /* table_size */
	uint32_t age_s;               /* 0: no aging */
	uint32_t port_limit;          /* 0: none */
	uint32_t sweep_pos;
	uint32_t now_s;               /* newest time this stage saw */
	bool pcap_clock;              /* use each packet's own capture time */
	int ts_offset;
	uint64_t ts_flag;
	uint16_t n_domains;
	uint8_t untagged_bd[PF_MAX_PORTS];
	uint16_t dom_vlan[L2_MAX_DOMAINS];
	uint32_t dom_mask[L2_MAX_DOMAINS];
	uint64_t dom_full[L2_MAX_DOMAINS];        /* fib_full per domain (for the warning) */
	uint64_t dom_full_warned[L2_MAX_DOMAINS];
	uint64_t warn_tsc;
	struct pf_own_macs own;                   /* never learned as sources */
	struct l2_cmd *cmd_cur;                   /* lcore: the update being applied */

	/* Update hand-off, apart from the data-path fields above. */
	struct l2_cmd *cmd_post __rte_cache_aligned;   /* control -> lcore */
	uint64_t cmd_done;                        /* lcore -> control: updates applied */
	/* Control thread only. */
	struct l2_static_key *applied;            /* static entries in the table, by key */
	uint32_t n_applied;
	uint32_t ctl_age_s, ctl_port_limit;       /* as last applied */
	uint64_t updates;                         /* gauge; written by control, atomically */
};

static uint64_t
l2_mem_estimate(uint32_t entries)
{
	uint64_t p2 = rte_align64pow2(entries);

	/* buckets + extendable buckets (64 B each, 8 keys), key store (16 B), two free
	 * rings of 4-byte slots, and our 8-byte entries. */
	return p2 / 8 * 64 * 2 + (uint64_t)(entries + 1) * 16 + rte_align64pow2(entries + 1) * 4 +
	       p2 / 8 * 4 + (uint64_t)(entries + 1) * sizeof(struct l2_entry);
}

static int
l2_domain_of(const struct l2_cfg *cfg, uint16_t port, uint16_t vlan)
{
	uint16_t d;

	for (d = 0; d < cfg->n_domains; d++)
		if (cfg->dom[d].vlan == vlan && (cfg->dom[d].port_mask & (1u << port)))
			return d;
	return -1;
}

static int
l2_parse_domain(struct l2_cfg *cfg, const char *stage, const char *name,
		const struct pf_node *dn, const struct pf_topo *topo, struct pf_errs *errs)
{
	static const char *const dom_keys[] = { "ports", "vlan", NULL };
	struct l2_domain_cfg *dom = &cfg->dom[cfg->n_domains];
	char path[PF_CONF_PATH_MAX];
	uint16_t ports[PF_MAX_PORTS], n = 0, i;
	const struct pf_node *v;
	uint32_t vlan = 0;
	int other;

	snprintf(path, sizeof(path), "stages.%s.domains.%s", stage, name);
	if (strlen(name) >= PF_NAME_MAX)
		return pf_node_err(errs, dn, "%s: name longer than %d characters", path,
				   PF_NAME_MAX - 1);
	if (pf_node_expect(dn, PF_NODE_MAP, path, errs) < 0 ||
	    pf_map_check_keys(dn, path, dom_keys, errs) < 0)
		return -EINVAL;
	if ((v = pf_map_get(dn, "vlan")) != NULL) {
		snprintf(path, sizeof(path), "stages.%s.domains.%s.vlan", stage, name);
		if (pf_node_u32(v, path, 1, 4094, &vlan, errs) < 0)
			return -EINVAL;
	}
	v = pf_map_get(dn, "ports");
	snprintf(path, sizeof(path), "stages.%s.domains.%s.ports", stage, name);
	if (v == NULL)
		return pf_node_err(errs, dn, "stages.%s.domains.%s: missing required key 'ports'",
				   stage, name);
	if (pf_topo_port_list(topo, v, path, ports, PF_MAX_PORTS, &n, errs) < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		other = l2_domain_of(cfg, ports[i], (uint16_t)vlan);
		if (other >= 0)
			return pf_node_err(errs, v->items[i],
					   "%s[%u]: port '%s' %s already belongs to domain '%s'",
					   path, i, topo->ports[ports[i]].name,
					   vlan ? "with this vlan" : "untagged",
					   cfg->dom[other].name);
		dom->port_mask |= 1u << ports[i];
	}
	snprintf(dom->name, sizeof(dom->name), "%s", name);
	dom->vlan = (uint16_t)vlan;
	cfg->n_domains++;
	return 0;
}

/* Check one static entry and append it. @p where names it in messages. */
static int
l2_add_static(struct l2_cfg *cfg, const struct pf_topo *topo, const char *where,
	      const char *file, int line, int col, const char *mac_s, const char *port_s,
	      const char *dom_s, struct pf_errs *errs)
{
	struct l2_static_cfg *s;
	int port, bd = -1, d, n = 0;
	uint8_t mac[6];

	if (!pf_parse_mac(mac_s, mac))
		return pf_err_add(errs, file, line, col, "%s: '%s' is not a MAC address", where,
				  mac_s);
	if (mac[0] & 1)
		return pf_err_add(errs, file, line, col, "%s: %s is a group address", where,
				  mac_s);
	if ((mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0)
		return pf_err_add(errs, file, line, col, "%s: %s is the zero address", where,
				  mac_s);
	port = pf_topo_port_index(topo, port_s);
	if (port < 0)
		return pf_err_add(errs, file, line, col, "%s: unknown port '%s'", where, port_s);
	for (d = 0; d < topo->n_ports; d++)
		if (topo->ports[d].has_mac && memcmp(topo->ports[d].mac, mac, 6) == 0)
			return pf_err_add(errs, file, line, col,
					  "%s: %s is the MAC of port '%s' (never a station)", where,
					  mac_s, topo->ports[d].name);
	if (dom_s != NULL) {
		for (d = 0; d < cfg->n_domains; d++)
			if (strcmp(cfg->dom[d].name, dom_s) == 0)
				bd = d;
		if (bd < 0)
			return pf_err_add(errs, file, line, col, "%s: unknown domain '%s'", where,
					  dom_s);
		if (!(cfg->dom[bd].port_mask & (1u << port)))
			return pf_err_add(errs, file, line, col,
					  "%s: port '%s' is not in domain '%s'", where, port_s,
					  dom_s);
	} else {
		for (d = 0; d < cfg->n_domains; d++)
			if (cfg->dom[d].port_mask & (1u << port))
				bd = d, n++;
		if (n == 0)
			return pf_err_add(errs, file, line, col,
					  "%s: port '%s' is in no bridge domain", where, port_s);
		if (n > 1)
			return pf_err_add(errs, file, line, col,
					  "%s: port '%s' is in %d domains: say which one", where,
					  port_s, n);
	}
	if (cfg->n_static % 256 == 0) {
		s = realloc(cfg->statics, (cfg->n_static + 256) * sizeof(*s));
		if (s == NULL)
			return pf_err_add(errs, file, line, col, "%s: out of memory", where);
		cfg->statics = s;
	}
	s = &cfg->statics[cfg->n_static++];
	memcpy(s->mac, mac, 6);
	s->port = (uint16_t)port;
	s->bd = (uint16_t)bd;
	s->file = file;
	s->line = line;
	s->col = col;
	return 0;
}

static int
l2_parse_static_file(struct l2_cfg *cfg, const struct pf_topo *topo, struct pf_stage_conf *sc,
		     const struct pf_node *v, struct pf_errs *errs)
{
	const char *stage = sc->name;
	char *buf = NULL, *tok[4], *save, *p, where[PF_CONF_PATH_MAX];
	size_t cap = 0;
	int line = 0, rc = 0, k;
	FILE *f;

	pf_conf_resolve_path(v->file, v->value, cfg->static_file, sizeof(cfg->static_file));
	if (pf_stage_conf_add_file(sc, cfg->static_file, errs) < 0)
		return -EINVAL;
	f = pf_table_fopen(cfg->static_file);
	if (f == NULL)
		return pf_node_err(errs, v, "stages.%s.static: cannot open '%s': %s", stage,
				   cfg->static_file, strerror(errno));
	while (getline(&buf, &cap, f) > 0) {
		line++;
		if ((p = strchr(buf, '#')) != NULL)
			*p = '\0';
		for (k = 0, p = strtok_r(buf, " \t\r\n", &save); p != NULL && k < 4;
		     p = strtok_r(NULL, " \t\r\n", &save))
			tok[k++] = p;
		if (k == 0)
			continue;
		snprintf(where, sizeof(where), "stages.%s.static", stage);
		if (k < 2 || k > 3) {
			rc = pf_err_add(errs, cfg->static_file, line, 1,
					"%s: expected 'MAC PORT [DOMAIN]'", where);
			continue;
		}
		if (l2_add_static(cfg, topo, where, cfg->static_file, line,
				  (int)(tok[0] - buf) + 1, tok[0], tok[1], k == 3 ? tok[2] : NULL,
				  errs) < 0)
			rc = -EINVAL;
	}
	free(buf);
	fclose(f);
	return rc;
}

static int
l2_parse_static_list(struct l2_cfg *cfg, const struct pf_topo *topo, const char *stage,
		     const struct pf_node *v, struct pf_errs *errs)
{
	static const char *const st_keys[] = { "mac", "port", "domain", NULL };
	char where[PF_CONF_PATH_MAX];
	const struct pf_node *it, *m, *p, *d;
	int rc = 0;
	uint32_t i;

	for (i = 0; i < v->n; i++) {
		it = v->items[i];
		snprintf(where, sizeof(where), "stages.%s.static[%u]", stage, i);
		if (pf_node_expect(it, PF_NODE_MAP, where, errs) < 0 ||
		    pf_map_check_keys(it, where, st_keys, errs) < 0) {
			rc = -EINVAL;
			continue;
		}
		m = pf_map_get(it, "mac");
		p = pf_map_get(it, "port");
		d = pf_map_get(it, "domain");
		if (m == NULL || p == NULL || m->kind != PF_NODE_SCALAR ||
		    p->kind != PF_NODE_SCALAR || (d != NULL && d->kind != PF_NODE_SCALAR)) {
			rc = pf_node_err(errs, it, "%s: expected {mac: MAC, port: PORT[, domain: D]}",
					 where);
			continue;
		}
		if (l2_add_static(cfg, topo, where, m->file, m->line, m->col, m->value, p->value,
				  d != NULL ? d->value : NULL, errs) < 0)
			rc = -EINVAL;
	}
	return rc;
}

static int
l2_static_cmp(const void *a, const void *b)
{
	const struct l2_static_cfg *x = a, *y = b;

	if (x->bd != y->bd)
		return x->bd < y->bd ? -1 : 1;
	return memcmp(x->mac, y->mac, 6);
}

static void
l2_cfg_free(void *p)
{
	struct l2_cfg *cfg = p;

	if (cfg == NULL)
		return;
	free(cfg->statics);
	free(cfg);
}

static int
l2_parse(struct pf_stage_conf *sc, const struct pf_topo *topo, struct pf_errs *errs)
{
	const struct pf_node *ports = pf_map_get(sc->node, "ports");
	const struct pf_node *doms = pf_map_get(sc->node, "domains");
	const struct pf_node *v;
	char path[PF_CONF_PATH_MAX];
	uint16_t idx[PF_MAX_PORTS], n = 0;
	struct l2_cfg *cfg;
	uint32_t i;
	int rc = 0;

	if ((ports == NULL) == (doms == NULL))
		return pf_node_err(errs, sc->node,
				   "stages.%s: give exactly one of 'ports' (one domain) or 'domains'",
				   sc->name);
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	cfg->table_size = L2_TABLE_DEFAULT;
	cfg->age_s = L2_AGE_DEFAULT;
	if (ports != NULL) {
		snprintf(path, sizeof(path), "stages.%s.ports", sc->name);

		if (pf_topo_port_list(topo, ports, path, idx, PF_MAX_PORTS, &n, errs) < 0)
			return -EINVAL;
		snprintf(cfg->dom[0].name, sizeof(cfg->dom[0].name), "default");
		for (i = 0; i < n; i++)
			cfg->dom[0].port_mask |= 1u << idx[i];
		cfg->n_domains = 1;
	} else {
		snprintf(path, sizeof(path), "stages.%s.domains", sc->name);
		if (pf_node_expect(doms, PF_NODE_MAP, path, errs) < 0)
			return -EINVAL;
		if (doms->n == 0)
			return pf_node_err(errs, doms, "%s: needs at least one domain", path);
		if (doms->n > L2_MAX_DOMAINS)
			return pf_node_err(errs, doms, "%s: more than %d domains", path,
					   L2_MAX_DOMAINS);
		for (i = 0; i < doms->n; i++)
			if (l2_parse_domain(cfg, sc->name, doms->keys[i]->value, doms->items[i],
					    topo, errs) < 0)
				rc = -EINVAL;
		if (rc < 0)
			return rc;
	}
	snprintf(path, sizeof(path), "stages.%s.table_size", sc->name);
	if ((v = pf_map_get(sc->node, "table_size")) != NULL &&
	    pf_node_u32(v, path, 1, L2_TABLE_MAX, &cfg->table_size, errs) < 0)
		rc = -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.age_s", sc->name);
	if ((v = pf_map_get(sc->node, "age_s")) != NULL &&
	    pf_node_u32(v, path, 0, L2_AGE_MAX, &cfg->age_s, errs) < 0)
		rc = -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.port_learn_limit", sc->name);
	if ((v = pf_map_get(sc->node, "port_learn_limit")) != NULL &&
	    pf_node_u32(v, path, 0, L2_TABLE_MAX, &cfg->port_learn_limit, errs) < 0)
		rc = -EINVAL;
	if ((v = pf_map_get(sc->node, "static")) != NULL) {
		if (v->kind == PF_NODE_SCALAR)
			rc |= l2_parse_static_file(cfg, topo, sc, v, errs);
		else if (v->kind == PF_NODE_SEQ)
			rc |= l2_parse_static_list(cfg, topo, sc->name, v, errs);
		else
			rc = pf_node_err(errs, v, "stages.%s.static: expected a list of entries "
					 "or a file name", sc->name);
	}
	if (rc < 0)
		return -EINVAL;
	/* Duplicates: sort a copy by (domain, MAC) and compare neighbours. */
	if (cfg->n_static > 1) {
		qsort(cfg->statics, cfg->n_static, sizeof(*cfg->statics), l2_static_cmp);
		for (i = 1; i < cfg->n_static; i++) {
			const struct l2_static_cfg *a = &cfg->statics[i - 1], *b = &cfg->statics[i];

			if (l2_static_cmp(a, b) == 0)
				rc = pf_err_add(errs, b->file, b->line, b->col,
						"stages.%s.static: duplicate entry for "
						"%02x:%02x:%02x:%02x:%02x:%02x in domain '%s' "
						"(also at line %d)", sc->name, b->mac[0], b->mac[1],
						b->mac[2], b->mac[3], b->mac[4], b->mac[5],
						cfg->dom[b->bd].name, a->line);
		}
	}
	if (cfg->n_static > cfg->table_size)
		rc = pf_node_err(errs, pf_map_get(sc->node, "static"),
				 "stages.%s.static: %u entries exceed table_size %u", sc->name,
				 cfg->n_static, cfg->table_size);
	return rc;
}

/* ---- init and teardown --------------------------------------------------- */

static __rte_always_inline uint64_t
l2_key(const uint8_t *mac, uint16_t bd)
{
	uint64_t k = 0;

	memcpy(&k, mac, 6);
	return k | (uint64_t)bd << 48;
}

static int
l2_static_key_cmp(const void *a, const void *b)
{
	const struct l2_static_key *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* @p cfg's static entries as (key, port), sorted by key; NULL only on ENOMEM. */
static struct l2_static_key *
l2_static_keys(const struct l2_cfg *cfg)
{
	struct l2_static_key *k = malloc(RTE_MAX(cfg->n_static, 1u) * sizeof(*k));
	uint32_t i;

	if (k == NULL)
		return NULL;
	for (i = 0; i < cfg->n_static; i++) {
		k[i].key = l2_key(cfg->statics[i].mac, cfg->statics[i].bd);
		k[i].port = cfg->statics[i].port;
	}
	qsort(k, cfg->n_static, sizeof(*k), l2_static_key_cmp);
	return k;
}

static int
l2_init(struct pf_stage *st, struct pf_errs *errs)
{
	static uint32_t seq;
	const struct l2_cfg *cfg = st->conf->cfg;
	struct l2_priv *l2 = st->priv;
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = { 0 };
	int socket = SOCKET_ID_ANY, lcore = st->conf->lcore;
	struct l2_table *tb;
	uint64_t mem0;
	uint32_t i;
	uint16_t d, p;

	l2->cap = cfg->table_size;
	l2->age_s = cfg->age_s;
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
	l2->pcap_clock = st->topo->clock == PF_CLOCK_PCAP;
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
	pf_own_macs_init(&l2->own, st->topo);
	if (st->first != st) {
		/* Instance k > 0: use the table instance 0 made (init runs in order). */
		tb = ((struct l2_priv *)st->first->priv)->tb;
		if (tb == NULL)
			return pf_node_err(errs, st->conf->node, "stages.%s: instance 0 has no table",
					   st->conf->name);
		tb->refs++;
		l2->tb = tb;
		l2->h = tb->h;
		l2->ent = tb->ent;
		l2->n_pos = tb->n_pos;
		l2->mt = tb->mt;
		return 0;
	}
	if (lcore >= 0 && lcore < RTE_MAX_LCORE && rte_lcore_is_enabled((unsigned int)lcore))
		socket = (int)rte_lcore_to_socket_id((unsigned int)lcore);
	tb = rte_zmalloc_socket("l2fib_table", sizeof(*tb), RTE_CACHE_LINE_SIZE, socket);
	if (tb == NULL)
		return pf_node_err(errs, st->conf->node, "stages.%s: out of memory", st->conf->name);
	l2->tb = tb;
	tb->refs = 1;
	tb->mt = st->conf->n_instances > 1;
	l2->mt = tb->mt;
	l2->sweeper = true;

	snprintf(name, sizeof(name), "l2f%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	hp.name = name;
	/* 25% more key slots than table_size: cuckoo inserts slow down sharply
	 * near a full bucket array (95% load cost ~15k cycles per insert). */
	hp.entries = RTE_MAX(cfg->table_size + cfg->table_size / 4, 8u);
	hp.key_len = sizeof(uint64_t);
	hp.hash_func = rte_hash_crc;
	hp.hash_func_init_val = (uint32_t)rte_rand();   /* crafted collision sets miss */
	hp.socket_id = socket;
	/* Lock-free readers; extendable buckets so table_size keys always fit. */
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	/* Positions run up to entries plus every lcore's free-slot cache with
	 * several writers (rte_hash keeps up to 63 free slots per lcore). */
	tb->n_pos = hp.entries + 1;
	if (tb->mt) {
		hp.extra_flag |= RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD;
		tb->n_pos += (RTE_MAX_LCORE - 1) * (L2_LCORE_CACHE - 1);
	}
	tb->mem_estimate = l2_mem_estimate(hp.entries);
	mem0 = pf_heap_used();
	tb->h = rte_hash_create(&hp);
	if (tb->h != NULL)
		tb->ent = rte_zmalloc_socket("l2fib_ent", (size_t)tb->n_pos * sizeof(*tb->ent),
					     RTE_CACHE_LINE_SIZE, socket);
	if (tb->h == NULL || tb->ent == NULL)
		return pf_node_err(errs, st->conf->node,
				   "stages.%s: cannot allocate a %u-entry MAC table (about %" PRIu64
				   " MiB): %s; lower table_size or give EAL more memory (-m)",
				   st->conf->name, cfg->table_size, tb->mem_estimate >> 20,
				   rte_strerror(tb->h == NULL ? rte_errno : ENOMEM));
	tb->mem_bytes = pf_heap_used() - mem0;
	l2->h = tb->h;
	l2->ent = tb->ent;
	l2->n_pos = tb->n_pos;

	for (i = 0; i < cfg->n_static; i++) {
		const struct l2_static_cfg *s = &cfg->statics[i];
		uint64_t k = l2_key(s->mac, s->bd);
		int32_t pos = rte_hash_add_key(l2->h, &k);

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

static void
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

static void
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
	if (tb->h != NULL && tb->ent != NULL)
		l2_warn_full(st, true);
	l2->tb = NULL;
	l2->h = NULL;
	l2->ent = NULL;
	/* The last instance to go frees the shared table. */
	if (--tb->refs != 0)
		return;
	rte_hash_free(tb->h);
	rte_free(tb->ent);
	rte_free(tb);
}

/* ---- data path ------------------------------------------------------------ */

static __rte_always_inline bool
l2_expired(const struct l2_priv *l2, const struct l2_entry *e, uint32_t now_s)
{
	/* Signed difference: a packet older than the entry's last refresh is not "later". */
	return l2->age_s != 0 && !(e->flags & L2_F_STATIC) &&
	       (int32_t)(now_s - e->seen_s) >= (int32_t)l2->age_s;
}

/* One entry, read whole (another instance may change it at any time). */
static __rte_always_inline struct l2_entry
l2_load(const struct l2_priv *l2, uint32_t pos)
{
	union l2_slot s;

	s.w = __atomic_load_n(&l2->ent[pos].w, __ATOMIC_RELAXED);
	return s.e;
}

/*
 * Change entry @p pos from @p old to @p new. One instance: a plain store.
 * Several: a compare-and-swap that fails if another instance changed the
 * entry since @p old was read; the caller reads it again and re-decides.
 */
static __rte_always_inline bool
l2_commit(struct l2_priv *l2, uint32_t pos, struct l2_entry old, struct l2_entry new)
{
	union l2_slot o = { .e = old }, n = { .e = new };

	if (!l2->mt) {
		l2->ent[pos].w = n.w;
		return true;
	}
	return __atomic_compare_exchange_n(&l2->ent[pos].w, &o.w, n.w, false, __ATOMIC_RELEASE,
					   __ATOMIC_RELAXED);
}

/* Table-wide counts: one writer, or atomic adds when instances share the table. */
static __rte_always_inline void
l2_add(const struct l2_priv *l2, uint32_t *c, int32_t d)
{
	if (l2->mt)
		__atomic_fetch_add(c, (uint32_t)d, __ATOMIC_RELAXED);
	else
		*c += (uint32_t)d;
}

static __rte_always_inline uint32_t
l2_get(const uint32_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static __rte_always_inline bool
l2_port_full(const struct l2_priv *l2, uint16_t port)
{
	return unlikely(l2->port_limit != 0) &&
	       l2_get(&l2->tb->port_learned[port]) >= l2->port_limit;
}

/* Take a live dynamic entry out of service; the sweep removes its key later. */
static __rte_always_inline bool
l2_kill(struct l2_priv *l2, uint32_t pos, struct l2_entry e)
{
	struct l2_entry n = e;

	n.flags &= (uint8_t)~L2_F_LIVE;
	if (!l2_commit(l2, pos, e, n))
		return false;
	l2_add(l2, &l2->tb->dom_entries[e.bd], -1);
	l2_add(l2, &l2->tb->port_learned[e.port], -1);
	l2_add(l2, &l2->tb->n_dead, 1);
	return true;
}

/*
 * Remove the dead key at @p pos (instance 0's sweep only: never while a
 * burst of its own holds positions). One instance: the position is reused at
 * once. Several: it is marked gone and freed after a grace period, because
 * another instance may hold it from a lookup made before the delete.
 */
static void
l2_remove(struct l2_priv *l2, uint32_t pos, struct l2_entry e, bool dead)
{
	struct l2_table *tb = l2->tb;
	struct l2_entry gone = { .flags = L2_F_GONE };
	void *key;

	if (!l2->mt) {
		if (rte_hash_get_key_with_position(l2->h, (int32_t)pos, &key) == 0 &&
		    rte_hash_del_key(l2->h, key) >= 0)
			rte_hash_free_key_with_position(l2->h, (int32_t)pos);
		l2->ent[pos].w = 0;
		tb->n_slots--;
		tb->n_dead -= dead;
		return;
	}
	if (tb->pend_tail - tb->pend_head == L2_PEND || !l2_commit(l2, pos, e, gone))
		return;   /* no room to defer (next sweep), or revived meanwhile */
	l2_add(l2, &tb->n_dead, -(int32_t)dead);
	if (rte_hash_get_key_with_position(l2->h, (int32_t)pos, &key) == 0)
		rte_hash_del_key(l2->h, key);
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
		rte_hash_free_key_with_position(l2->h, (int32_t)pos);
		l2_add(l2, &tb->n_slots, -1);
		tb->pend_head++;
	}
}

static void
l2_sweep(struct pf_stage *st, struct l2_priv *l2, uint32_t budget)
{
	struct l2_entry e;
	uint32_t pos;

	budget = RTE_MIN(budget, l2->n_pos);
	while (budget-- != 0) {
		pos = l2->sweep_pos;
		l2->sweep_pos = pos + 1 == l2->n_pos ? 0 : pos + 1;
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
	}
	if (l2->mt)
		l2_reclaim(l2);
}

/* ---- live update: applied by the owning lcore ------------------------------ */

/* Make room for a static entry in a table at table_size: remove one learned
 * (live or dead) entry. Returns false if there is none. */
static bool
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
static void
l2_op_apply(struct pf_stage *st, struct l2_priv *l2, struct l2_cmd *c, const struct l2_op *op)
{
	struct l2_table *tb = l2->tb;
	uint8_t bd = (uint8_t)(op->key >> 48);
	int32_t pos = rte_hash_lookup(l2->h, &op->key);
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
	pos = tb->n_slots < l2->cap ? rte_hash_add_key(l2->h, &op->key) : -ENOSPC;
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
			l2->age_s = c->age_s;
			l2->port_limit = c->port_limit;
		}
		while (c->next < c->n_ops && budget-- != 0)
			l2_op_apply(st, l2, c, &c->ops[c->next++]);
		if (c->next != c->n_ops)
			return;
	}
	/* The control thread owns c again after this store. */
	l2->cmd_cur = NULL;
	__atomic_store_n(&l2->cmd_done, l2->cmd_done + 1, __ATOMIC_RELEASE);
}

struct l2_new {
	uint64_t key;
	int32_t pos;
};

static __rte_always_inline int32_t
l2_find_new(const struct l2_new *nl, uint16_t n, uint64_t key)
{
	uint16_t j;

	for (j = 0; j < n; j++)
		if (nl[j].key == key)
			return nl[j].pos;
	return -ENOENT;
}

/*
 * Learn a source at @p pos, which held its key when it was looked up.
 * Returns false if the position no longer holds it (removed meanwhile).
 * Each change is decided on one read of the entry and committed whole;
 * a lost race (another instance changed it) reads again and re-decides.
 */
static __rte_always_inline bool
l2_learn_at(struct l2_priv *l2, uint64_t *ctrs, uint32_t pos, uint16_t in_port, uint32_t now_s)
{
	struct l2_table *tb = l2->tb;
	struct l2_entry e, n;

	for (;;) {
		e = l2_load(l2, pos);
		if (unlikely(!(e.flags & L2_F_INHASH)))
			return false;
		if (unlikely(e.flags & L2_F_STATIC)) {
			if (e.port != in_port)
				ctrs[L2_CTR_STATIC_MISMATCH]++;
			return true;
		}
		n = e;
		if (likely(e.flags & L2_F_LIVE)) {
			bool old = l2_expired(l2, &e, now_s);

			if (likely(e.port == in_port) && likely(!old)) {
				/* Refresh without dirtying the line when nothing changed; a
				 * lost race means another instance just wrote it: fine. */
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

/* Learn the source of one packet whose bulk lookup gave @p pos. */
static __rte_always_inline void
l2_learn(struct l2_priv *l2, uint64_t *ctrs, uint64_t key, int32_t pos, uint16_t in_port,
	 uint8_t bd, uint32_t now_s, struct l2_new *nl, uint16_t *n_new)
{
	struct l2_table *tb = l2->tb;
	struct l2_entry e, n = { .port = in_port, .bd = bd, .seen_s = now_s,
				 .flags = L2_F_INHASH | L2_F_LIVE };
	unsigned int tries;

	if (pos < 0 && *n_new != 0)
		pos = l2_find_new(nl, *n_new, key);     /* learned earlier in this chunk */
	if (likely(pos >= 0) && likely(l2_learn_at(l2, ctrs, (uint32_t)pos, in_port, now_s)))
		return;
	if (unlikely(l2_get(&tb->n_slots) >= l2->cap)) {
		ctrs[L2_CTR_FIB_FULL]++;
		l2->dom_full[bd]++;
		return;
	}
	if (l2_port_full(l2, in_port)) {
		ctrs[L2_CTR_PORT_LIMIT]++;
		return;
	}
	for (tries = 0;; tries++) {
		pos = rte_hash_add_key(l2->h, &key);
		if (unlikely(pos < 0 || (uint32_t)pos >= l2->n_pos)) {
			ctrs[L2_CTR_NOSPACE]++;
			return;
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
		if (l2_learn_at(l2, ctrs, (uint32_t)pos, in_port, now_s))
			break;
		/* The old position of a key being removed (instance 0 deletes it
		 * right after marking it gone): add again until the delete lands. */
		if (unlikely(tries == L2_ADD_TRIES)) {
			ctrs[L2_CTR_NOSPACE]++;
			return;
		}
		rte_pause();
	}
	nl[*n_new].key = key;
	nl[*n_new].pos = pos;
	(*n_new)++;
}

static __rte_always_inline uint8_t
l2_bd_of(const struct l2_priv *l2, const struct pf_meta *md)
{
	uint16_t vid, d;

	if (likely(!(md->flags & PF_META_VLAN)))
		return l2->untagged_bd[md->in_port & (PF_MAX_PORTS - 1)];
	vid = md->vlan_tci & 0xfff;
	for (d = 0; d < l2->n_domains; d++)
		if (l2->dom_vlan[d] == vid && (l2->dom_mask[d] & (1u << (md->in_port & 31))))
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
	if (l2->pcap_clock && (m->ol_flags & l2->ts_flag))
		return (uint32_t)(*RTE_MBUF_DYNFIELD(m, l2->ts_offset, const uint64_t *) /
				  1000000u);
	return burst_s;
}

static void
l2_chunk(struct pf_stage *st, struct l2_priv *l2, struct rte_mbuf **pkts, uint16_t n,
	 uint16_t *edge, uint32_t burst_s)
{
	uint64_t *ctrs = st->ctrs;
	uint64_t key[2 * L2_CHUNK];
	const void *kp[2 * L2_CHUNK];
	int32_t pos[2 * L2_CHUNK];
	uint8_t sk[L2_CHUNK], dk[L2_CHUNK], bds[L2_CHUNK];
	struct l2_new nl[L2_CHUNK];
	uint16_t i, nk = 0, n_new = 0;

	/* Pass 1: domain, keys, early drops. Mbufs 8 ahead, headers 4 ahead. */
	for (i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pf_meta *md = pf_meta(m);
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
		uint8_t bd;

		if (i + 8 < n) {
			rte_prefetch0(pkts[i + 8]);
			rte_prefetch0(RTE_PTR_ADD(pkts[i + 8], RTE_CACHE_LINE_SIZE));
		}
		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		bd = l2_bd_of(l2, md);
		if (unlikely(bd == L2_NO_BD)) {
			PF_DROP(edge, i, ctrs, L2_CTR_NO_DOMAIN);
			continue;
		}
		key[nk] = l2_key(d + 6, bd);
		/* rx drops these already; a FIB must never learn them whoever feeds it. */
		if (unlikely((d[6] & 1) || (key[nk] & 0xffffffffffffull) == 0)) {
			PF_DROP(edge, i, ctrs, L2_CTR_INVALID_SRC);
			continue;
		}
		/* rx drops these too (reliability.md case 8): a spoof or a loop. */
		if (unlikely(pf_own_mac(&l2->own, d + 6))) {
			PF_DROP(edge, i, ctrs, L2_CTR_OWN_SRC);
			continue;
		}
		if (unlikely((d[0] & 1) && l2_reserved(d))) {
			PF_DROP(edge, i, ctrs, L2_CTR_RESERVED_DST);
			continue;
		}
		edge[i] = L2_EDGE_OUT;
		md->bd = bd;
		bds[i] = bd;
		sk[i] = (uint8_t)nk++;
		dk[i] = 0xff;
		if (!(d[0] & 1)) {
			dk[i] = (uint8_t)nk;
			key[nk++] = l2_key(d, bd);
		}
	}
	if (nk == 0)
		return;
	/* Pass 2: one bulk lookup for every source and unicast destination. */
	for (i = 0; i < nk; i++)
		kp[i] = &key[i];
	rte_hash_lookup_bulk(l2->h, kp, nk, pos);
	for (i = 0; i < nk; i++)
		if (pos[i] >= 0)
			rte_prefetch0(&l2->ent[pos[i]]);

	/* Pass 3, in packet order so a burst sees its own learning like a serial bridge. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pf_meta *md;
		struct l2_entry e;
		uint32_t now_s, mask;
		int32_t dp;

		if (edge[i] == L2_EDGE_DROP)
			continue;
		md = pf_meta(m);
		now_s = l2_pkt_time(l2, m, burst_s);
		if ((int32_t)(now_s - l2->now_s) > 0)
			l2->now_s = now_s;
		l2_learn(l2, ctrs, key[sk[i]], pos[sk[i]], md->in_port, bds[i], now_s, nl, &n_new);
		if (dk[i] != 0xff) {
			dp = pos[dk[i]];
			if (dp < 0 && n_new != 0)
				dp = l2_find_new(nl, n_new, key[dk[i]]);
			if (likely(dp >= 0)) {
				e = l2_load(l2, (uint32_t)dp);
				if (likely(e.flags & L2_F_LIVE) && likely(!l2_expired(l2, &e, now_s))) {
					if (unlikely(e.port == md->in_port)) {
						PF_DROP(edge, i, ctrs, L2_CTR_SAME_PORT);
						continue;
					}
					md->out_port = e.port;
					ctrs[L2_CTR_HIT]++;
					continue;
				}
			}
			ctrs[L2_CTR_MISS]++;
		}
		/* Unknown unicast, broadcast, multicast: every other port of the domain. */
		mask = l2->dom_mask[bds[i]] & ~(1u << md->in_port);
		if (unlikely(mask == 0)) {
			PF_DROP(edge, i, ctrs, L2_CTR_FLOOD_EMPTY);
			continue;
		}
		md->out_port = PF_PORT_FLOOD;
		md->flood_mask = mask;
		ctrs[L2_CTR_FLOODED]++;
	}
}

static uint16_t
l2_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct l2_priv *l2 = st->priv;
	uint32_t burst_s;
	uint16_t off;

	/* A posted update is applied here, between bursts, in slices. */
	if (unlikely(l2->cmd_cur != NULL ||
		     __atomic_load_n(&l2->cmd_post, __ATOMIC_RELAXED) != NULL))
		l2_cmd_run(st, l2, L2_CMD_BURST);
	/* Time runs even with age_s 0: a reload may turn aging on. */
	burst_s = (uint32_t)(pf_now_ns() / L2_NS_PER_S);
	if ((int32_t)(burst_s - l2->now_s) > 0 && !l2->pcap_clock)
		l2->now_s = burst_s;
	for (off = 0; off < n; off += L2_CHUNK)
		l2_chunk(st, l2, pkts + off, (uint16_t)RTE_MIN(L2_CHUNK, n - off), edge + off,
			 burst_s);
	/* Bounded aging work, so a loaded lcore that never idles still ages. */
	if (l2->sweeper && (l2->age_s != 0 || l2->tb->n_dead != 0 ||
			    l2->tb->pend_head != l2->tb->pend_tail))
		l2_sweep(st, l2, L2_SWEEP_BURST);
	return PF_EDGE_MIXED;
}

static void
l2_idle(struct pf_stage *st, uint64_t now_ns)
{
	struct l2_priv *l2 = st->priv;
	uint32_t now_s = (uint32_t)(now_ns / L2_NS_PER_S);
	uint16_t d;

	if ((int32_t)(now_s - l2->now_s) > 0)
		l2->now_s = now_s;
	if (unlikely(l2->cmd_cur != NULL ||
		     __atomic_load_n(&l2->cmd_post, __ATOMIC_RELAXED) != NULL))
		l2_cmd_run(st, l2, L2_CMD_IDLE);
	if (l2->sweeper && (l2->age_s != 0 || l2->tb->n_dead != 0 ||
			    l2->tb->pend_head != l2->tb->pend_tail))
		l2_sweep(st, l2, L2_SWEEP_IDLE);
	for (d = 0; d < l2->n_domains; d++)
		if (l2->dom_full[d] != l2->dom_full_warned[d]) {
			l2_warn_full(st, false);
			break;
		}
}

/* ---- live update: the control thread ------------------------------------------ */

/* What the running table cannot change: its size and its bridge domains. */
static int
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
		    cfg->dom[d].port_mask != l2->dom_mask[d] ||
		    strcmp(cfg->dom[d].name, old->dom[d].name) != 0)
			break;
	if (cfg->n_domains != l2->n_domains || d < cfg->n_domains) {
		const char *key = pf_map_get(new_sc->node, "domains") != NULL ? "domains" : "ports";

		rc = pf_node_err(errs, pf_map_get(new_sc->node, key),
				 "stages.%s.%s: changing bridge domains (their names, ports or VLANs) "
				 "needs a restart", new_sc->name, key);
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
	if (st->rt == NULL)
		l2_cmd_run(st, l2, UINT32_MAX);
	/* It took the command, so it runs and gets to it between two bursts. */
	while (__atomic_load_n(&l2->cmd_done, __ATOMIC_ACQUIRE) == c->done0)
		rte_delay_us_sleep(50);
}

/*
 * Reload: new static entries, age_s and port_learn_limit, applied to the
 * running table; learned entries stay. Prepare computes the difference and
 * posts it; the lcore running the stage takes it and holds it, so that
 * commit cannot fail: it tells the lcore to apply it between bursts
 * (l2_cmd_run; the table keeps one writer and lock-free readers) and waits.
 * An lcore that does not take the update within L2_UPDATE_TIMEOUT_MS gets
 * it withdrawn: prepare refuses, -ETIMEDOUT. Stand-alone stages (unit tests,
 * no runtime) apply it in the caller.
 */
static int
l2_update_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		  struct pf_errs *errs)
{
	const struct l2_cfg *cfg = new_sc->cfg;
	struct l2_priv *l2 = st->priv;
	struct l2_static_key *keys;
	struct l2_cmd *c, *expect;
	uint64_t t0 = rte_get_tsc_cycles();

	if (l2_update_check(st, new_sc, errs) < 0)
		return -EINVAL;
	keys = l2_static_keys(cfg);
	c = keys != NULL ? l2_cmd_build(l2->applied, l2->n_applied, keys, cfg->n_static, cfg) : NULL;
	if (c == NULL) {
		free(keys);
		return pf_node_err(errs, new_sc->node, "stages.%s: out of memory", new_sc->name);
	}
	c->keys = keys;
	c->done0 = __atomic_load_n(&l2->cmd_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&l2->cmd_post, c, __ATOMIC_RELEASE);
	if (st->rt == NULL)
		l2_cmd_run(st, l2, UINT32_MAX);
	while (!__atomic_load_n(&c->taken, __ATOMIC_ACQUIRE)) {
		if (l2_ms_since(t0) > L2_UPDATE_TIMEOUT_MS) {
			expect = c;
			/* Not taken yet: withdraw it. Taken meanwhile: held, go on. */
			if (__atomic_compare_exchange_n(&l2->cmd_post, &expect, NULL, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				free(c);
				free(keys);
				pf_node_err(errs, new_sc->node,
					    "stages.%s: the lcore running the stage did not take "
					    "the update within %u ms; nothing changed",
					    new_sc->name, L2_UPDATE_TIMEOUT_MS);
				return -ETIMEDOUT;
			}
		}
		rte_delay_us_sleep(50);
	}
	*prep = c;
	return 0;
}

static void
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
}

static void
l2_update_abort(struct pf_stage *st, void *prep)
{
	struct l2_priv *l2 = st->priv;
	struct l2_cmd *c = prep;

	__atomic_store_n(&c->go, L2_CMD_DROP, __ATOMIC_RELEASE);
	l2_cmd_wait(st, l2, c);
	free(c->keys);
	free(c);
}

static uint16_t
l2_gauges(const struct pf_stage *st, struct pf_gauge *out, uint16_t max)
{
	const struct l2_cfg *cfg = st->conf->cfg;
	const struct l2_priv *l2 = st->priv;
	const struct l2_table *tb = l2->tb;
	uint32_t live = 0;
	uint16_t n = 0, d;

	for (d = 0; d < l2->n_domains; d++)
		live += l2_get(&tb->dom_entries[d]);
#define L2_GAUGE(nm, val) do {						\
	if (n < max) {							\
		snprintf(out[n].name, sizeof(out[n].name), "%s", nm);	\
		out[n++].value = (val);					\
	}								\
} while (0)
	L2_GAUGE("entries", live);
	L2_GAUGE("entries_static", tb->n_static);
	L2_GAUGE("table_size", l2->cap);
	L2_GAUGE("memory_bytes", tb->mem_bytes);
	L2_GAUGE("updates", __atomic_load_n(&l2->updates, __ATOMIC_RELAXED));
	for (d = 0; d < l2->n_domains && n < max; d++) {
		snprintf(out[n].name, sizeof(out[n].name), "entries.%s", cfg->dom[d].name);
		out[n++].value = l2_get(&tb->dom_entries[d]);
	}
#undef L2_GAUGE
	return n;
}

const struct pf_stage_ops pf_l2fib_ops = {
	.type = "l2fib",
	.summary = "MAC-learning bridge: bridge domains, learning, flooding, aging",
	.flags = PF_STAGE_SHARED,
	.priv_size = sizeof(struct l2_priv),
	.n_edges = L2_EDGE_MAX,
	.edge_names = l2_edges,
	.default_edge = L2_EDGE_OUT,
	.n_ctrs = l2_ctr_max,
	.ctrs = l2_ctrs,
	.param_keys = l2_keys,
	.parse = l2_parse,
	.cfg_free = l2_cfg_free,
	.init = l2_init,
	.process_burst = l2_process_burst,
	.idle = l2_idle,
	.gauges = l2_gauges,
	.update_prepare = l2_update_prepare,
	.update_commit = l2_update_commit,
	.update_abort = l2_update_abort,
	.update_check = l2_update_check,
	.free = l2_free,
};
