/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the l2fib stage: stages/l2fib.c (data path), l2fib_conf.c
 * (parameters and static entries, no DPDK), l2fib_hash.c (the key table:
 * add, delete; lookups are inline below), l2fib_table.c (the shared MAC
 * table: create, remove, aging sweep) and l2fib_upkeep.c (housekeeping and
 * the live-update protocol). See docs/stages/l2fib.md.
 */
#ifndef PF_L2FIB_H
#define PF_L2FIB_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash_crc.h>
#include <rte_spinlock.h>
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif
#ifdef __SSE4_1__
#include <smmintrin.h>
#endif

#include "pf_ownmac.h"
#include "pf_stage.h"

#define L2_MAX_DOMAINS 16
#define L2_TABLE_DEFAULT 65536u
#define L2_TABLE_MAX (16u << 20)          /* 16,777,216 entries */
#define L2_AGE_DEFAULT 300u
#define L2_AGE_MAX (366u * 86400u)
#define L2_NO_BD 0xff
#define L2_NS_PER_S 1000000000ull
#define L2_PEND 4096                      /* removals awaiting a grace period (instances) */

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
	_(L2_CTR_NOSPACE, l2_learn_nospace, INFO, "sources not learned: the MAC table had no free slot")	\
	_(L2_CTR_PORT_LIMIT, port_learn_limit, INFO, "sources not learned: port_learn_limit")	\
	_(L2_CTR_STATIC_MISMATCH, static_src_mismatch, INFO,					\
	  "source matches a static entry of another port (entry kept)")			\
	_(L2_CTR_STATIC_EVICT, static_evict, INFO,						\
	  "learned entries removed to make room for static entries added by a reload")

PF_CTR_ENUM(l2, foreach_l2_ctr);

/* ---- configuration (l2fib_conf.c: parse, no DPDK) ---------------------------- */

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

/* A static entry as applied to the table: what the next update diffs against. */
struct l2_static_key {
	uint64_t key;                 /* l2_key(): MAC | domain << 48 */
	uint16_t port;
};

int l2_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
void l2_cfg_free(void *cfg);
/* @p cfg's static entries as (key, port), sorted by key; NULL only on ENOMEM. */
struct l2_static_key *l2_static_keys(const struct l2_cfg *cfg);
/* Live static-entry change (the edit op, app/control/pf_changes.h). */
int l2_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		struct pf_errs *errs);

/* ---- run-time state ----------------------------------------------------------- */

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

/* One entry is one word, so instances change it with one compare-and-swap. */
union l2_slot {
	struct l2_entry e;
	uint64_t w;
};

/* One update operation: remove a static entry, or set one (add, re-point). */
struct l2_op {
	uint64_t key;
	uint16_t port;
	uint8_t del;
};

/* An update, posted by the control thread, applied by the owning lcore. */
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
	/* Flush of learned entries (l2_act), after the ops: port / domain, -1 any;
	 * with flush_ports, only on those ports (a bit each). */
	bool flush;
	int32_t flush_port, flush_bd;
	uint32_t flush_ports;
	/* The domains' ports changed (ports added or removed live): taken first. */
	bool ports;
	uint32_t dom_mask[L2_MAX_DOMAINS];
	uint8_t untagged_bd[PF_MAX_PORTS];
	uint32_t flush_pos;           /* applier only */
	uint32_t flushed;
	struct l2_op ops[];           /* removals first, then adds */
};

/* The MAC table: one per stage, shared by its instances. */
struct l2_table {
	uint64_t *keys;               /* by position: L2_BKT per bucket (l2fib_hash.c) */
	uint32_t *ovf;                /* by bucket: keys stored past it (probe on) */
	union l2_slot *ent;           /* by position */
	uint32_t n_pos;               /* positions: buckets * L2_BKT */
	uint32_t bmask;               /* buckets - 1 */
	uint32_t seed;                /* CRC seed of the bucket hash */
	rte_spinlock_t wlock;         /* key adds and deletes, only with instances */
	uint32_t refs;                /* instances using the table */
	bool mt;                      /* several instances: atomics, deferred frees */
	uint32_t n_slots;             /* keys in the hash: live + static + dead + gone */
	uint32_t n_dead;              /* keys awaiting removal by the sweep */
	uint32_t n_static;
	uint32_t dom_entries[L2_MAX_DOMAINS];
	uint32_t port_learned[PF_MAX_PORTS];
	uint16_t n_inst;              /* instances sharing the table */
	uint32_t pkt_s[PF_MAX_INSTANCES];   /* pcap clock: each instance's l2_priv.pkt_s */
	uint64_t mem_bytes;           /* measured at init */
	uint64_t mem_estimate;
	/* Removed positions and their grace-period tokens (instance 0 only). */
	uint32_t pend_head, pend_tail;
	uint32_t pend_pos[L2_PEND];
	uint64_t pend_tok[L2_PEND];
};

struct l2_priv {
	/* Read per packet. */
	struct l2_table *tb;
	const uint64_t *keys;         /* tb->keys, ovf, ent, n_pos, bmask, seed, mt */
	const uint32_t *ovf;
	union l2_slot *ent;
	uint32_t n_pos;
	uint32_t bmask;
	uint32_t seed;
	bool mt;
	bool pcap_clock;              /* use each packet's own capture time */
	bool sweeper;                 /* instance 0: ages and removes entries */
	uint16_t n_domains;
	uint32_t cap;                 /* table_size */
	uint32_t age_s;               /* 0: no aging */
	int32_t age_lim;              /* age_s, or INT32_MAX without aging (l2_set_age) */
	bool prefetch_ent;            /* entry array larger than a cache: prefetch entries */
	uint32_t port_limit;          /* 0: none */
	uint32_t now_s;               /* the sweep's time (l2_upkeep) */
	uint32_t pkt_s;               /* pcap clock: newest packet time this instance processed */
	uint16_t inst;                /* instance index (st->conf->instance) */
	int ts_offset;
	uint64_t ts_flag;
	uint8_t untagged_bd[PF_MAX_PORTS];
	uint16_t dom_vlan[L2_MAX_DOMAINS];
	uint32_t dom_mask[L2_MAX_DOMAINS];
	uint64_t dom_full[L2_MAX_DOMAINS];        /* fib_full per domain (for the warning) */
	struct pf_own_macs own;                   /* never learned as sources */

	/* Housekeeping (owning lcore, between bursts). */
	uint32_t sweep_pos;
	uint32_t sweep_rest_s;                    /* no sweep before this second (l2_sweep) */
	uint64_t dom_full_warned[L2_MAX_DOMAINS];
	uint64_t warn_tsc;
	struct l2_cmd *cmd_cur;                   /* the update being applied */

	/* Update hand-off, apart from the data-path fields above. */
	struct l2_cmd *cmd_post __rte_cache_aligned;   /* control -> lcore */
	uint64_t cmd_done;                        /* lcore -> control: updates applied */
	/* Control thread only. */
	struct l2_static_key *applied;            /* static entries in the table, by key */
	uint32_t n_applied;
	uint32_t ctl_age_s, ctl_port_limit;       /* as last applied */
	uint64_t updates;                         /* gauge; written by control, atomically */
};

/* ---- key table (l2fib_hash.c; lookups inline below) ---------------------------- */

int l2_tbl_create(struct l2_table *tb, uint32_t cap, uint32_t seed, int socket);
void l2_tbl_destroy(struct l2_table *tb);
/* Point @p l2's data-path copies (keys, ovf, ent, ...) at @p tb. */
void l2_tbl_view(struct l2_priv *l2, const struct l2_table *tb);
uint64_t l2_tbl_mem(uint32_t cap);
int32_t l2_tbl_add(struct l2_priv *l2, uint64_t key);
void l2_tbl_del(struct l2_priv *l2, uint32_t pos, bool hold);
void l2_tbl_release(struct l2_priv *l2, uint32_t pos);

/* ---- table (l2fib_table.c) ----------------------------------------------------- */

int l2_init(struct pf_stage *st, struct pf_errs *errs);
void l2_free(struct pf_stage *st);
void l2_gauges(const struct pf_stage *st, struct pf_sink *out);
void l2_warn_full(struct pf_stage *st, bool force);
void l2_remove(struct l2_priv *l2, uint32_t pos, struct l2_entry e, bool dead);
/* Check up to @p budget positions for age (a removal costs L2_SWEEP_REMOVE). */
void l2_sweep(struct pf_stage *st, struct l2_priv *l2, uint32_t budget);
bool l2_evict(struct pf_stage *st, struct l2_priv *l2, struct l2_cmd *c);

/* ---- housekeeping and live update (l2fib_upkeep.c) ------------------------------ */

void l2_housekeep(struct pf_stage *st, uint64_t now_ns);
void l2_idle(struct pf_stage *st, uint64_t now_ns);
int l2_update_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		      struct pf_errs *errs);
void *l2_update_commit(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep);
void l2_update_abort(struct pf_stage *st, void *prep);
int l2_update_check(const struct pf_stage *st, const struct pf_stage_conf *new_sc,
		    struct pf_errs *errs);
int l2_act(struct pf_stage *st, const char *what, const char *args, struct pf_sink *d);

/* ---- table contents for the stats socket (l2fib_show.c) ------------------------ */

extern const char *const l2_show_tables[];
int l2_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	    struct pf_sink *d);

/* ---- entry helpers, shared by the data path and the table ----------------------- */

static __rte_always_inline uint64_t
l2_key(const uint8_t *mac, uint16_t bd)
{
	uint64_t k = 0;

	memcpy(&k, mac, 6);
	return k | (uint64_t)bd << 48;
}

/* The table's hash function: CRC32-C of the 8-byte key, inlined in the data path. */
static __rte_always_inline uint32_t
l2_hash_key(uint64_t key, uint32_t seed)
{
#ifdef __SSE4_2__
	return (uint32_t)_mm_crc32_u64(seed, key);
#else
	return rte_hash_crc_8byte(key, seed);
#endif
}

/*
 * The key table: open addressing over buckets of L2_BKT 8-byte keys (one
 * cache line), linear probing from bucket hash & bmask. ovf[b] counts the
 * keys stored past bucket b on their way from home, so a lookup stops at the
 * first bucket with ovf 0 however many deletes there were (no tombstones; as
 * folly's F14). A key's position (bucket * L2_BKT + slot) indexes ent[] and
 * never moves while the key is in, so readers hold positions lock-free.
 */
#define L2_BKT 8
#define L2_KEY_FREE UINT64_MAX            /* domain 0xffff: never a real key */
#define L2_KEY_HELD (UINT64_MAX - 1)      /* deleted, position awaiting a grace period */
#define L2_BKT_SLOT(m) ((uint32_t)__builtin_ctz(m) / 2)

/* Bit 2s set: slot s of the bucket at @p b holds @p key (L2_BKT_SLOT gives s). */
static __rte_always_inline uint32_t
l2_bkt_match(const uint64_t *b, uint64_t key)
{
#ifdef __SSE4_1__
	/* DPDK's flags build for corei7 (SSE4.2): 4 x 2 compares, packed to 2 bits a slot. */
	const __m128i k = _mm_set1_epi64x((long long)key);
	const __m128i *v = (const __m128i *)b;
	__m128i c01 = _mm_packs_epi32(_mm_cmpeq_epi64(_mm_load_si128(v), k),
				      _mm_cmpeq_epi64(_mm_load_si128(v + 1), k));
	__m128i c23 = _mm_packs_epi32(_mm_cmpeq_epi64(_mm_load_si128(v + 2), k),
				      _mm_cmpeq_epi64(_mm_load_si128(v + 3), k));

	return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(c01, c23)) & 0x5555u;
#else
	uint32_t m = 0, s;

	for (s = 0; s < L2_BKT; s++)
		m |= (uint32_t)(__atomic_load_n(&b[s], __ATOMIC_RELAXED) == key) << (2 * s);
	return m;
#endif
}

/* The position of @p key (hash @p sig), or -ENOENT. Lock-free. */
static __rte_always_inline int32_t
l2_tbl_find(const struct l2_priv *l2, uint64_t key, uint32_t sig)
{
	uint32_t b = sig & l2->bmask, n, m;

	for (n = 0; n <= l2->bmask; n++) {
		m = l2_bkt_match(&l2->keys[(size_t)b * L2_BKT], key);
		if (likely(m != 0))
			return (int32_t)(b * L2_BKT + L2_BKT_SLOT(m));
		if (likely(__atomic_load_n(&l2->ovf[b], __ATOMIC_ACQUIRE) == 0))
			break;
		b = (b + 1) & l2->bmask;
	}
	return -ENOENT;
}

/* The key at @p pos, if it holds one (a lock-free read: it may change next). */
static __rte_always_inline bool
l2_tbl_key_at(const struct l2_priv *l2, uint32_t pos, uint64_t *key)
{
	*key = __atomic_load_n(&l2->keys[pos], __ATOMIC_ACQUIRE);
	return *key < L2_KEY_HELD;
}

/* Aging: age_s, and the limit the data path compares with (INT32_MAX: never). */
static __rte_always_inline void
l2_set_age(struct l2_priv *l2, uint32_t age_s)
{
	l2->age_s = age_s;
	l2->age_lim = age_s != 0 ? (int32_t)age_s : INT32_MAX;
}

static __rte_always_inline bool
l2_expired(const struct l2_priv *l2, const struct l2_entry *e, uint32_t now_s)
{
	/* Signed difference: a packet older than the entry's last refresh is not "later". */
	return unlikely((int32_t)(now_s - e->seen_s) >= l2->age_lim) &&
	       !(e->flags & L2_F_STATIC);
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

#endif /* PF_L2FIB_H */
