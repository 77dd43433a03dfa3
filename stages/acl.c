/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acl: IPv4 5-tuple filter on rte_acl; stateless, or stateful with permit-reflect sessions.
 * Edges: drop, out (permitted packets).
 * Counters: drops acl_deny, session_full, acl_not_ipv4; info per action (permit, deny_rule, ...),
 *   session_permit/created/expired, nonfirst_fragment, l4_malformed. Gauges: rule.<n> hits.
 * Params: rules | rules_file, default, algorithm, sessions, session_timeouts, session_sweep.
 *
 * Per burst: (1) gather each packet's 5-tuple into a flat key, (2) look the
 * burst up in the session table (stateful), (3) classify every packet that
 * has no session with one rte_acl_classify call, (4) apply verdicts in packet
 * order, creating sessions for permit-reflect, (5) expire a few sessions.
 * The rule table is RCU-protected: update() builds a new one beside it, swaps
 * the pointer and frees the old one after pf_rcu_synchronize() (the runtime's
 * QSBR: every worker lcore has finished the loop pass it was in).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>

#include "acl_rules.h"
#include "pf_log.h"
#include "pf_stage.h"

#define foreach_acl_ctr(_)									\
	_(ACL_CTR_DENY, acl_deny, DROP, "denied by a deny rule or by the default action")		\
	_(ACL_CTR_SESSION_FULL, session_full, DROP,							\
	  "matched permit-reflect but the session table is full: refused")			\
	_(ACL_CTR_NOT_IPV4, acl_not_ipv4, DROP, "not an IPv4 packet (wire only rx's ipv4 edge here)") \
	_(ACL_CTR_PERMIT, permit, INFO, "matched a permit rule")					\
	_(ACL_CTR_PERMIT_REFLECT, permit_reflect, INFO, "matched a permit-reflect rule")		\
	_(ACL_CTR_DENY_RULE, deny_rule, INFO, "matched a deny rule (counted in acl_deny)")		\
	_(ACL_CTR_DEFAULT_PERMIT, default_permit, INFO, "matched no rule, default permit")		\
	_(ACL_CTR_DEFAULT_DENY, default_deny, INFO, "matched no rule, default deny (in acl_deny)")	\
	_(ACL_CTR_SESSION_PERMIT, session_permit, INFO, "permitted by a session, no rule lookup")	\
	_(ACL_CTR_SESSION_CREATED, session_created, INFO, "sessions created by permit-reflect")	\
	_(ACL_CTR_SESSION_EXPIRED, session_expired, INFO, "sessions removed after their timeout")	\
	_(ACL_CTR_NONFIRST, nonfirst_fragment, INFO, "non-first fragments, classified without ports") \
	_(ACL_CTR_L4_MALFORMED, l4_malformed, INFO, "truncated or bad L4 header, classified without ports")

PF_CTR_ENUM(acl, foreach_acl_ctr);
PF_CTR_DESCS(acl, foreach_acl_ctr);

enum { ACL_EDGE_DROP, ACL_EDGE_OUT, ACL_EDGE_MAX };
static const char *const acl_edges[] = { "drop", "out" };
static const char *const acl_keys[] = { "rules", "rules_file", "default", "algorithm", "sessions",
					"session_timeouts", "session_sweep", "nonfirst_fragments",
					NULL };

int pf_acl_parse(struct pf_stage_conf *sc, const struct pf_topo *topo, struct pf_errs *errs);

/*
 * What rte_acl reads for one packet, in network byte order. The first field
 * is one byte; the rest come in groups of four bytes (input_index 1..4).
 * l4ok says what the ports are: real (ACL_L4_PORTS), absent because the
 * packet is a non-first fragment (ACL_L4_NONFIRST), or absent because the
 * L4 header is truncated (0). Rules that name ports require ACL_L4_PORTS, so
 * such packets never match them; with "nonfirst_fragments: protocol-only" a
 * port rule also gets a twin, without ports, that requires ACL_L4_NONFIRST.
 */
struct acl_key {
	uint8_t proto;
	uint8_t pad[3];
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
	uint32_t l4ok;
};

enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, F_L4OK, F_NUM };
#define ACL_L4_PORTS 1u
#define ACL_L4_NONFIRST 2u

RTE_ACL_RULE_DEF(acl_rte_rule, F_NUM);

static const struct rte_acl_field_def acl_field_defs[F_NUM] = {
	{ RTE_ACL_FIELD_TYPE_BITMASK, 1, F_PROTO, 0, offsetof(struct acl_key, proto) },
	{ RTE_ACL_FIELD_TYPE_MASK, 4, F_SRC, 1, offsetof(struct acl_key, src) },
	{ RTE_ACL_FIELD_TYPE_MASK, 4, F_DST, 2, offsetof(struct acl_key, dst) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F_SPORT, 3, offsetof(struct acl_key, sport) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F_DPORT, 3, offsetof(struct acl_key, dport) },
	{ RTE_ACL_FIELD_TYPE_BITMASK, 4, F_L4OK, 4, offsetof(struct acl_key, l4ok) },
};

/* Session key: the 5-tuple with the lower (address, port) end first. */
struct acl_skey {
	uint32_t a0, a1;
	uint16_t p0, p1;
	uint8_t proto;
	uint8_t pad[3];
};

struct acl_sess {
	struct acl_skey key;
	uint64_t expires_ns;            /* 0: slot free */
	uint8_t tcp_seen[2];            /* TCP flags seen from each end */
	uint8_t closing;                /* FIN or RST seen */
	uint8_t init_dir;               /* end that opened it (0: a0) */
};

/* Per-packet scratch. */
#define PK_NOTIP     0x1
#define PK_SESS      0x2            /* has a full 5-tuple: may use sessions */
#define PK_NONFIRST  0x4
#define PK_MALFORMED 0x8

struct acl_pk {
	uint8_t flags;
	uint8_t tcpf;
	uint8_t dir;
	int32_t pos;                    /* live session slot, -1 for none */
};

#define ACL_CTX_MAX 16

/* One rule set, replaced as a whole by update(). */
struct acl_tbl {
	struct rte_acl_ctx *ctx[ACL_CTX_MAX];   /* n_ctx of them, none without rules */
	uint32_t n_ctx;
	uint32_t n_rules;
	uint8_t default_action;
	uint8_t alg;                    /* enum rte_acl_classify_alg in use */
	uint8_t *action;                /* per rule */
	uint64_t *hits;                 /* per rule, single writer */
	int32_t *prio;                  /* per rule: its rte_acl priority (rank) */
	uint64_t timeout_ns[ACL_TO_MAX];
	uint64_t build_ns;
	uint64_t mem_bytes;
};

struct acl_priv {
	struct acl_tbl *tbl;            /* swapped by update(), freed after a grace period */
	struct rte_hash *sess_h;        /* NULL: stateless */
	struct acl_sess *sess;          /* indexed by rte_hash key position */
	uint32_t sess_max;
	uint32_t sess_slots;
	uint32_t sess_live;             /* keys in sess_h */
	uint32_t sweep_pos;
	uint32_t sweep;
	uint64_t sess_mem;
	uint64_t reloads;
	/* burst scratch */
	struct acl_key keys[PF_BURST_MAX];
	struct acl_skey skeys[PF_BURST_MAX];
	struct acl_pk pk[PF_BURST_MAX];
	const uint8_t *data[PF_BURST_MAX];
	uint32_t res[PF_BURST_MAX];
	uint32_t res2[PF_BURST_MAX];
};

static const uint16_t action_ctr[ACL_ACTION_MAX] = {
	[ACL_DENY] = ACL_CTR_DENY_RULE,
	[ACL_PERMIT] = ACL_CTR_PERMIT,
	[ACL_PERMIT_REFLECT] = ACL_CTR_PERMIT_REFLECT,
};

/* "default" is the fastest measured on this machine's CPU (docs/stages/acl.md). */
static const enum rte_acl_classify_alg alg_map[ACL_ALG_MAX] = {
	[ACL_ALG_DEFAULT] = RTE_ACL_CLASSIFY_SSE,
	[ACL_ALG_SCALAR] = RTE_ACL_CLASSIFY_SCALAR,
	[ACL_ALG_SSE] = RTE_ACL_CLASSIFY_SSE,
	[ACL_ALG_AVX2] = RTE_ACL_CLASSIFY_AVX2,
	[ACL_ALG_AVX512X16] = RTE_ACL_CLASSIFY_AVX512X16,
	[ACL_ALG_AVX512X32] = RTE_ACL_CLASSIFY_AVX512X32,
};

static const char *
alg_name(uint8_t alg)
{
	static const char *const names[] = { "default", "scalar", "sse", "avx2", "neon", "altivec",
					      "avx512x16", "avx512x32" };

	return alg < RTE_DIM(names) ? names[alg] : "?";
}

/* ---- rule table (control path) ------------------------------------------ */

static void
acl_tbl_free(struct acl_tbl *t)
{
	if (t == NULL)
		return;
	uint32_t k;

	for (k = 0; k < ACL_CTX_MAX; k++)
		rte_acl_free(t->ctx[k]);
	rte_free(t->prio);
	rte_free(t->action);
	rte_free(t->hits);
	rte_free(t);
}

struct acl_rank {
	uint32_t prio;
	uint32_t idx;
};

static int
rank_cmp(const void *a, const void *b)
{
	const struct acl_rank *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* rte_acl priorities (higher wins): by "priority", then earlier in the list. */
static int
acl_priorities(const struct acl_cfg *cfg, int32_t *prio)
{
	struct acl_rank *rk;
	uint32_t i;
	bool any = false;

	for (i = 0; i < cfg->n_rules; i++) {
		prio[i] = (int32_t)(cfg->n_rules - i);
		any |= cfg->rules[i].priority != 0;
	}
	if (!any)
		return 0;
	rk = malloc(sizeof(*rk) * cfg->n_rules);
	if (rk == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->n_rules; i++) {
		rk[i].prio = cfg->rules[i].priority;
		rk[i].idx = i;
	}
	qsort(rk, cfg->n_rules, sizeof(*rk), rank_cmp);
	for (i = 0; i < cfg->n_rules; i++)
		prio[rk[i].idx] = (int32_t)(cfg->n_rules - i);
	free(rk);
	return 0;
}

static bool
rule_has_ports(const struct acl_rule *r)
{
	return r->sport_lo != 0 || r->sport_hi != 65535 || r->dport_lo != 0 || r->dport_hi != 65535;
}

/* @p twin: the protocol-only copy of a port rule for non-first fragments. */
static void
acl_rule_to_rte(const struct acl_rule *r, int32_t prio, uint32_t idx, bool twin,
		struct acl_rte_rule *o)
{
	bool ports = rule_has_ports(r) && !twin;

	memset(o, 0, sizeof(*o));
	o->data.category_mask = 1;
	o->data.priority = prio;
	o->data.userdata = idx + 1;       /* 0 means "no match" */
	o->field[F_PROTO].value.u8 = r->proto_any ? 0 : r->proto;
	o->field[F_PROTO].mask_range.u8 = r->proto_any ? 0 : 0xff;
	o->field[F_SRC].value.u32 = r->src;
	o->field[F_SRC].mask_range.u32 = r->src_len;
	o->field[F_DST].value.u32 = r->dst;
	o->field[F_DST].mask_range.u32 = r->dst_len;
	o->field[F_SPORT].value.u16 = ports ? r->sport_lo : 0;
	o->field[F_SPORT].mask_range.u16 = ports ? r->sport_hi : 65535;
	o->field[F_DPORT].value.u16 = ports ? r->dport_lo : 0;
	o->field[F_DPORT].mask_range.u16 = ports ? r->dport_hi : 65535;
	o->field[F_L4OK].value.u32 = ports ? ACL_L4_PORTS : twin ? ACL_L4_NONFIRST : 0;
	o->field[F_L4OK].mask_range.u32 = o->field[F_L4OK].value.u32;
}

/* Build one context from rules [first, first + n). Returns 0 or -errno (with rte_acl's code). */
static int
acl_ctx_build(const struct pf_stage *st, const struct acl_cfg *cfg, const int32_t *prio,
	      uint32_t first, uint32_t n, struct rte_acl_ctx **out)
{
	static uint32_t gen;
	struct rte_acl_config bcfg = { .num_categories = 1, .num_fields = F_NUM };
	struct acl_rte_rule chunk[256];
	struct rte_acl_param param;
	char name[RTE_ACL_NAMESIZE];
	struct rte_acl_ctx *ctx;
	uint32_t i, k = 0;
	int rc = 0;

	/* rte_acl context names are global: make each build's unique. */
	snprintf(name, sizeof(name), "pf_acl%u_%u", st->id,
		 __atomic_fetch_add(&gen, 1, __ATOMIC_RELAXED));
	param = (struct rte_acl_param){ .name = name, .socket_id = (int)rte_socket_id(),
					.rule_size = RTE_ACL_RULE_SZ(F_NUM),
					.max_rule_num = n * (cfg->frag_proto_only ? 2 : 1) };
	ctx = rte_acl_create(&param);
	if (ctx == NULL)
		return -rte_errno;
	for (i = first; i < first + n && rc >= 0; i++) {
		const struct acl_rule *r = &cfg->rules[i];

		acl_rule_to_rte(r, prio[i], i, false, &chunk[k++]);
		if (cfg->frag_proto_only && rule_has_ports(r))
			acl_rule_to_rte(r, prio[i], i, true, &chunk[k++]);
		if (k + 2 > RTE_DIM(chunk) || i + 1 == first + n) {
			rc = rte_acl_add_rules(ctx, (const struct rte_acl_rule *)chunk, k);
			k = 0;
		}
	}
	memcpy(bcfg.defs, acl_field_defs, sizeof(acl_field_defs));
	if (rc >= 0)
		rc = rte_acl_build(ctx, &bcfg);
	if (rc >= 0)
		rc = rte_acl_set_ctx_classify(ctx, alg_map[cfg->algorithm]);
	if (rc < 0) {
		rte_acl_free(ctx);
		return rc;
	}
	/* The rules were copied into the context; the built tries are what runs. */
	rte_acl_reset_rules(ctx);
	*out = ctx;
	return 0;
}

static int
acl_tbl_build(const struct pf_stage *st, const struct pf_stage_conf *sc, struct acl_tbl **out,
	      struct pf_errs *errs)
{
	const struct acl_cfg *cfg = sc->cfg;
	uint64_t t0 = rte_rdtsc(), mem0 = pf_heap_used();
	struct acl_tbl *t;
	int32_t *prio = NULL;
	uint32_t i, k, per;
	int rc, socket = rte_socket_id();

	*out = NULL;
	t = rte_zmalloc_socket("acl_tbl", sizeof(*t), RTE_CACHE_LINE_SIZE, socket);
	if (t == NULL)
		return pf_node_err(errs, sc->node, "stages.%s: out of memory", sc->name);
	t->n_rules = cfg->n_rules;
	t->default_action = cfg->default_action;
	for (k = 0; k < ACL_TO_MAX; k++)
		t->timeout_ns[k] = (uint64_t)cfg->timeout_s[k] * 1000000000ull;
	t->alg = (uint8_t)alg_map[cfg->algorithm];
	if (cfg->n_rules == 0)
		goto done;
	t->action = rte_malloc_socket("acl_action", cfg->n_rules, 0, socket);
	t->hits = rte_zmalloc_socket("acl_hits", sizeof(uint64_t) * cfg->n_rules,
				     RTE_CACHE_LINE_SIZE, socket);
	t->prio = rte_malloc_socket("acl_prio", sizeof(int32_t) * cfg->n_rules, 0, socket);
	prio = t->prio;
	if (t->action == NULL || t->hits == NULL || prio == NULL ||
	    acl_priorities(cfg, prio) < 0) {
		rc = pf_node_err(errs, sc->node, "stages.%s: out of memory for %u rules", sc->name,
				 cfg->n_rules);
		goto fail;
	}
	for (i = 0; i < cfg->n_rules; i++)
		t->action[i] = cfg->rules[i].action;
	/*
	 * rte_acl gives up when a rule set needs more than 8 tries (many
	 * overlapping wildcards and ranges). Then the rules are split into 2, 4,
	 * ... ACL_CTX_MAX contexts; the data path classifies against each and
	 * keeps the highest priority.
	 */
	for (t->n_ctx = 1;; t->n_ctx *= 2) {
		per = (cfg->n_rules + t->n_ctx - 1) / t->n_ctx;
		for (k = 0, rc = 0; k < t->n_ctx && rc == 0 && k * per < cfg->n_rules; k++)
			rc = acl_ctx_build(st, cfg, prio, k * per,
					   RTE_MIN(per, cfg->n_rules - k * per), &t->ctx[k]);
		if (rc == 0) {
			t->n_ctx = k;
			break;
		}
		for (k = 0; k < t->n_ctx; k++) {
			rte_acl_free(t->ctx[k]);
			t->ctx[k] = NULL;
		}
		if (rc != -ENOMEM || t->n_ctx == ACL_CTX_MAX || per < 2)
			break;
	}
	if (rc == -ENOTSUP || (rc == -EINVAL && cfg->algorithm != ACL_ALG_DEFAULT)) {
		rc = pf_node_err(errs, pf_map_get(sc->node, "algorithm") ?: sc->node,
				 "stages.%s.algorithm: '%s' is not available here (avx512 needs EAL --force-max-simd-bitwidth=512)",
				 sc->name, pf_acl_alg_names[cfg->algorithm]);
		goto fail;
	}
	if (rc < 0) {
		rc = pf_node_err(errs, sc->node,
				 "stages.%s: building the ACL of %u rules failed: %s (in %u contexts; raise EAL -m, or simplify overlapping ranges)",
				 sc->name, cfg->n_rules, strerror(-rc), t->n_ctx);
		goto fail;
	}
done:
	t->build_ns = (rte_rdtsc() - t0) * 1000000000ull / rte_get_tsc_hz();
	t->mem_bytes = pf_heap_used() - mem0;
	*out = t;
	return 0;
fail:
	acl_tbl_free(t);
	return rc;
}

/* ---- sessions ----------------------------------------------------------- */

static int
acl_sess_create_table(struct acl_priv *pv, const struct pf_stage *st, uint32_t entries,
		      struct pf_errs *errs)
{
	static uint32_t gen;
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.entries = entries,
		.key_len = sizeof(struct acl_skey),
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
		/* Extendable buckets: full means "entries" sessions, not a cuckoo miss. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	uint64_t mem0 = pf_heap_used();

	snprintf(name, sizeof(name), "pf_acls%u_%u", st->id,
		 __atomic_fetch_add(&gen, 1, __ATOMIC_RELAXED));
	hp.name = name;
	pv->sess_h = rte_hash_create(&hp);
	pv->sess_slots = entries + 1;
	pv->sess = rte_zmalloc_socket("acl_sess", sizeof(struct acl_sess) * pv->sess_slots,
				      RTE_CACHE_LINE_SIZE, hp.socket_id);
	if (pv->sess_h == NULL || pv->sess == NULL)
		return pf_node_err(errs, st->conf->node,
				   "stages.%s: cannot create a session table of %u entries: %s",
				   st->conf->name, entries, rte_strerror(rte_errno));
	pv->sess_max = entries;
	pv->sess_mem = pf_heap_used() - mem0;
	return 0;
}

static __rte_always_inline void
acl_sess_del(struct acl_priv *pv, struct acl_sess *s, uint64_t *ctrs)
{
	rte_hash_del_key(pv->sess_h, &s->key);
	s->expires_ns = 0;
	pv->sess_live--;
	ctrs[ACL_CTR_SESSION_EXPIRED]++;
}

/* Look at up to @p count slots from the sweep cursor; remove expired sessions. */
static void
acl_sweep(struct acl_priv *pv, uint32_t count, uint64_t now, uint64_t *ctrs)
{
	struct acl_sess *s;

	for (; count != 0 && pv->sess_live != 0; count--) {
		s = &pv->sess[pv->sweep_pos];
		if (++pv->sweep_pos == pv->sess_slots)
			pv->sweep_pos = 0;
		if (s->expires_ns != 0 && s->expires_ns <= now)
			acl_sess_del(pv, s, ctrs);
	}
}

/* Refresh a session's timeout from the packet (TCP state for TCP). */
static __rte_always_inline void
acl_sess_touch(const struct acl_tbl *t, struct acl_sess *s, uint8_t proto, const struct acl_pk *p,
	       uint64_t now)
{
	uint64_t to;

	if (proto == IPPROTO_TCP) {
		s->tcp_seen[p->dir] |= p->tcpf;
		if (p->tcpf & (RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG))
			s->closing = 1;
		/* Established once each end has sent SYN and ACK (the handshake). */
		if (!s->closing && ((s->tcp_seen[0] & s->tcp_seen[1] &
				     (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
				    (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)))
			to = t->timeout_ns[ACL_TO_TCP_ESTABLISHED];
		else
			to = t->timeout_ns[ACL_TO_TCP_TRANSIENT];
	} else if (proto == IPPROTO_UDP) {
		to = t->timeout_ns[ACL_TO_UDP];
	} else {
		to = t->timeout_ns[ACL_TO_OTHER];
	}
	s->expires_ns = now + to;
}

/* Canonical session key of a packet; returns the packet's direction. */
static __rte_always_inline uint8_t
acl_skey_make(const struct acl_key *k, struct acl_skey *s)
{
	uint64_t x = (uint64_t)k->src << 16 | k->sport, y = (uint64_t)k->dst << 16 | k->dport;

	s->proto = k->proto;
	s->pad[0] = s->pad[1] = s->pad[2] = 0;
	if (x <= y) {
		s->a0 = k->src, s->p0 = k->sport, s->a1 = k->dst, s->p1 = k->dport;
		return 0;
	}
	s->a0 = k->dst, s->p0 = k->dport, s->a1 = k->src, s->p1 = k->sport;
	return 1;
}

/* Slot of packet i's live session, or -1. */
static __rte_always_inline int32_t
acl_sess_find(struct acl_priv *pv, uint16_t i, uint64_t now)
{
	int32_t pos = rte_hash_lookup(pv->sess_h, &pv->skeys[i]);

	return pos >= 0 && pv->sess[pos].expires_ns > now ? pos : -1;
}

/* Bulk session lookup for the burst: sets pk[i].pos for live sessions. */
static void
acl_sess_lookup(struct acl_priv *pv, uint16_t n, uint64_t now, uint64_t *ctrs)
{
	const void *kp[RTE_HASH_LOOKUP_BULK_MAX];
	int32_t pos[RTE_HASH_LOOKUP_BULK_MAX];
	uint16_t idx[RTE_HASH_LOOKUP_BULK_MAX];
	uint16_t i = 0, c, j;
	struct acl_sess *s;

	while (i < n) {
		for (c = 0; i < n && c < RTE_HASH_LOOKUP_BULK_MAX; i++)
			if (pv->pk[i].flags & PK_SESS) {
				kp[c] = &pv->skeys[i];
				idx[c++] = i;
			}
		if (c == 0)
			break;
		rte_hash_lookup_bulk(pv->sess_h, kp, c, pos);
		for (j = 0; j < c; j++) {
			if (pos[j] < 0)
				continue;
			s = &pv->sess[pos[j]];
			if (s->expires_ns > now)
				pv->pk[idx[j]].pos = pos[j];
			else if (s->expires_ns != 0)
				acl_sess_del(pv, s, ctrs);   /* expired, not swept yet */
		}
	}
}

/* permit-reflect: open (or refresh) packet i's session. Returns 0 or -ENOSPC. */
static int
acl_sess_open(struct acl_priv *pv, const struct acl_tbl *t, uint16_t i, uint64_t now,
	      uint64_t *ctrs)
{
	struct acl_sess *s;
	int32_t pos;

	pos = rte_hash_add_key(pv->sess_h, &pv->skeys[i]);
	if (pos == -ENOSPC) {
		/* Reclaim a bounded number of expired sessions, then try once more. */
		acl_sweep(pv, 256, now, ctrs);
		pos = rte_hash_add_key(pv->sess_h, &pv->skeys[i]);
	}
	if (unlikely(pos < 0 || (uint32_t)pos >= pv->sess_slots))
		return -ENOSPC;
	s = &pv->sess[pos];
	if (s->expires_ns == 0 || s->expires_ns <= now) {
		if (s->expires_ns == 0)
			pv->sess_live++;
		s->key = pv->skeys[i];
		s->tcp_seen[0] = s->tcp_seen[1] = 0;
		s->closing = 0;
		s->init_dir = pv->pk[i].dir;
		ctrs[ACL_CTR_SESSION_CREATED]++;
	}
	acl_sess_touch(t, s, pv->keys[i].proto, &pv->pk[i], now);
	return 0;
}

/* ---- data path ---------------------------------------------------------- */

/* Fill packet i's key; never reads past the IPv4 total length or data_len. */
static __rte_always_inline void
acl_extract(struct rte_mbuf *m, struct acl_key *k, struct acl_pk *p)
{
	const struct pf_meta *md = pf_meta(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *), *l4;
	uint32_t len = rte_pktmbuf_data_len(m), l2 = md->l2_len, l3 = md->l3_len, l4len, tot;
	const struct rte_ipv4_hdr *ip;

	k->sport = 0;
	k->dport = 0;
	k->l4ok = 0;
	p->tcpf = 0;
	p->pos = -1;
	if (unlikely(md->cls != PF_CLASS_IPV4 || l3 < sizeof(*ip) || len < l2 + l3)) {
		p->flags = PK_NOTIP;
		return;
	}
	ip = (const struct rte_ipv4_hdr *)(d + l2);
	k->proto = ip->next_proto_id;
	k->src = ip->src_addr;
	k->dst = ip->dst_addr;
	if ((md->flags & PF_META_IP_NONFIRST) ||
	    (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK))) {
		k->l4ok = rte_cpu_to_be_32(ACL_L4_NONFIRST);
		p->flags = PK_NONFIRST;
		return;
	}
	tot = rte_be_to_cpu_16(ip->total_length);
	l4len = len - l2 - l3;
	if (tot < l3)
		l4len = 0;
	else if (tot - l3 < l4len)
		l4len = tot - l3;
	l4 = d + l2 + l3;
	switch (k->proto) {
	case IPPROTO_TCP:
		if (l4len < sizeof(struct rte_tcp_hdr) || (l4[12] >> 4) < 5 ||
		    (l4[12] >> 4) * 4u > l4len)
			goto malformed;
		p->tcpf = l4[13];
		break;
	case IPPROTO_UDP:
		if (l4len < 8)
			goto malformed;
		break;
	case IPPROTO_SCTP:
		if (l4len < 12)
			goto malformed;
		break;
	default:
		p->flags = PK_SESS;
		return;
	}
	memcpy(&k->sport, l4, 2);
	memcpy(&k->dport, l4 + 2, 2);
	k->l4ok = rte_cpu_to_be_32(ACL_L4_PORTS);
	p->flags = PK_SESS;
	return;
malformed:
	p->flags = PK_MALFORMED;
}

static uint16_t
acl_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct acl_priv *pv = st->priv;
	uint64_t *ctrs = st->ctrs, now = 0;
	const struct acl_tbl *t;
	struct acl_pk *p;
	uint16_t i, nmiss = 0, m = 0;
	bool stateful = pv->sess_h != NULL, opened = false;
	int32_t pos;
	uint8_t act;
	uint32_t r = 0, c;

	t = __atomic_load_n(&pv->tbl, __ATOMIC_ACQUIRE);

	/* Pass 1: gather the 5-tuples (mbufs 8 ahead, headers 4 ahead). */
	for (i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		if (i + 8 < n)
			rte_prefetch0(pkts[i + 8]);
		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		acl_extract(pkts[i], &pv->keys[i], &pv->pk[i]);
	}

	/* Pass 2: sessions first, then one classify call for the rest. */
	if (stateful) {
		now = pf_now_ns();
		for (i = 0; i < n; i++)
			if (pv->pk[i].flags & PK_SESS)
				pv->pk[i].dir = acl_skey_make(&pv->keys[i], &pv->skeys[i]);
		if (pv->sess_live != 0)
			acl_sess_lookup(pv, n, now, ctrs);
	}
	for (i = 0; i < n; i++)
		if (!(pv->pk[i].flags & PK_NOTIP) && pv->pk[i].pos < 0)
			pv->data[nmiss++] = (const uint8_t *)&pv->keys[i];
	if (nmiss != 0) {
		if (likely(t->n_ctx != 0))
			rte_acl_classify(t->ctx[0], pv->data, pv->res, nmiss, 1);
		else
			memset(pv->res, 0, sizeof(pv->res[0]) * nmiss);
		for (c = 1; c < t->n_ctx; c++) {
			rte_acl_classify(t->ctx[c], pv->data, pv->res2, nmiss, 1);
			for (i = 0; i < nmiss; i++)
				if (pv->res2[i] != 0 && (pv->res[i] == 0 ||
				    t->prio[pv->res2[i] - 1] > t->prio[pv->res[i] - 1]))
					pv->res[i] = pv->res2[i];
		}
	}

	/* Pass 3: verdicts in packet order, so a session opened by one packet
	 * already admits the reply later in the same burst. */
	for (i = 0; i < n; i++) {
		p = &pv->pk[i];
		edge[i] = ACL_EDGE_OUT;
		if (unlikely(p->flags & PK_NOTIP)) {
			PF_DROP(edge, i, ctrs, ACL_CTR_NOT_IPV4);
			continue;
		}
		if (unlikely(p->flags & (PK_NONFIRST | PK_MALFORMED)))
			ctrs[p->flags & PK_NONFIRST ? ACL_CTR_NONFIRST : ACL_CTR_L4_MALFORMED]++;
		pos = p->pos;
		if (pos < 0) {
			r = pv->res[m++];
			if (opened && (p->flags & PK_SESS))
				pos = acl_sess_find(pv, i, now);
		}
		if (pos >= 0) {
			acl_sess_touch(t, &pv->sess[pos], pv->keys[i].proto, p, now);
			ctrs[ACL_CTR_SESSION_PERMIT]++;
			continue;
		}
		if (r != 0) {
			act = t->action[r - 1];
			t->hits[r - 1]++;
			ctrs[action_ctr[act]]++;
		} else {
			act = t->default_action;
			ctrs[act == ACL_DENY ? ACL_CTR_DEFAULT_DENY : ACL_CTR_DEFAULT_PERMIT]++;
		}
		if (act == ACL_DENY) {
			PF_DROP(edge, i, ctrs, ACL_CTR_DENY);
		} else if (act == ACL_PERMIT_REFLECT && stateful && (p->flags & PK_SESS)) {
			if (unlikely(acl_sess_open(pv, t, i, now, ctrs) < 0))
				PF_DROP(edge, i, ctrs, ACL_CTR_SESSION_FULL);
			else
				opened = true;
		}
	}

	/* Pass 4: a bounded expiry sweep, so the data path never stalls. */
	if (stateful && pv->sess_live != 0)
		acl_sweep(pv, pv->sweep, now, ctrs);
	return PF_EDGE_MIXED;
}

static void
acl_idle(struct pf_stage *st, uint64_t now_ns)
{
	struct acl_priv *pv = st->priv;

	if (pv->sess_h != NULL && pv->sess_live != 0)
		acl_sweep(pv, pv->sweep * 8, now_ns, st->ctrs);
}

/* ---- control path ------------------------------------------------------- */

static void
acl_log_tbl(const struct pf_stage *st, const struct acl_tbl *t, const char *what)
{
	PF_LOG(INFO,
	       "acl %s: %s %u rules (%u contexts) in %.1f ms, %.2f MiB, classify %s, default %s, sessions %u",
	       st->conf->name, what, t->n_rules, t->n_ctx, (double)t->build_ns / 1e6,
	       (double)t->mem_bytes / (1024.0 * 1024.0), alg_name(t->alg),
	       pf_acl_action_names[t->default_action],
	       ((const struct acl_priv *)st->priv)->sess_max);
}

static int
acl_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = st->conf->cfg;

	pv->sweep = cfg->sweep;
	if (cfg->sessions != 0 && acl_sess_create_table(pv, st, cfg->sessions, errs) < 0)
		return -EINVAL;
	if (acl_tbl_build(st, st->conf, &pv->tbl, errs) < 0)
		return -EINVAL;
	acl_log_tbl(st, pv->tbl, "built");
	return 0;
}

/*
 * Live rule replacement (the runtime's reload calls it from the control
 * thread, one update at a time, not concurrently with gauges). The new table
 * is complete before the swap; sessions and per-action counters stay, the
 * per-rule hit counters start again with the new rule numbering. Keeps no
 * pointer into @p new_sc.
 */
static int
acl_update_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		   struct pf_errs *errs)
{
	struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = new_sc->cfg;

	if (cfg->has_reflect && pv->sess_h == NULL)
		return pf_node_err(errs, new_sc->node,
				   "stages.%s: permit-reflect needs a session table, and this stage started without one (set 'sessions:' and restart)",
				   new_sc->name);
	if (cfg->sessions_given && cfg->sessions != pv->sess_max)
		return pf_node_err(errs, pf_map_get(new_sc->node, "sessions"),
				   "stages.%s.sessions: changing the session table size (%u -> %u) needs a restart",
				   new_sc->name, pv->sess_max, cfg->sessions);
	if (acl_tbl_build(st, new_sc, (struct acl_tbl **)prep, errs) < 0)
		return -EINVAL;
	return 0;
}

static void
acl_update_commit(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep)
{
	struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = new_sc->cfg;
	struct acl_tbl *nt = prep, *old;

	old = pv->tbl;
	__atomic_store_n(&pv->tbl, nt, __ATOMIC_RELEASE);
	pf_rcu_synchronize();
	acl_tbl_free(old);
	pv->sweep = cfg->sweep;
	pv->reloads++;
	acl_log_tbl(st, nt, "reloaded");
}

static void
acl_update_abort(struct pf_stage *st, void *prep)
{
	acl_tbl_free(prep);
}

static uint16_t
acl_gauges(const struct pf_stage *st, struct pf_gauge *out, uint16_t max)
{
	const struct acl_priv *pv = st->priv;
	static const struct acl_tbl none;
	const struct acl_tbl *t = pv->tbl != NULL ? pv->tbl : &none;
	const struct {
		const char *name;
		uint64_t v;
	} g[] = {
		{ "rules", t->n_rules },
		{ "acl_contexts", t->n_ctx },
		{ "build_us", t->build_ns / 1000 },
		{ "acl_mem_bytes", t->mem_bytes },
		{ "sessions", pv->sess_live },
		{ "sessions_max", pv->sess_max },
		{ "session_mem_bytes", pv->sess_mem },
		{ "reloads", pv->reloads },
	};
	uint16_t k = 0;
	uint32_t i;

	for (i = 0; i < RTE_DIM(g) && k < max; i++, k++) {
		snprintf(out[k].name, sizeof(out[k].name), "%s", g[i].name);
		out[k].value = g[i].v;
	}
	/* Per-rule hits, 1-based rule numbers; only rules that matched something. */
	for (i = 0; i < t->n_rules && k < max; i++)
		if (t->hits[i] != 0) {
			snprintf(out[k].name, sizeof(out[k].name), "rule.%u", i + 1);
			out[k++].value = t->hits[i];
		}
	return k;
}

static void
acl_free(struct pf_stage *st)
{
	struct acl_priv *pv = st->priv;

	if (pv == NULL)
		return;
	acl_tbl_free(pv->tbl);
	rte_hash_free(pv->sess_h);
	rte_free(pv->sess);
	pv->tbl = NULL;
	pv->sess_h = NULL;
	pv->sess = NULL;
}

const struct pf_stage_ops pf_acl_ops = {
	.type = "acl",
	.summary = "IPv4 5-tuple ACL on rte_acl (permit, deny, permit-reflect sessions)",
	.priv_size = sizeof(struct acl_priv),
	.n_edges = ACL_EDGE_MAX,
	.edge_names = acl_edges,
	.default_edge = ACL_EDGE_OUT,
	.n_ctrs = acl_ctr_max,
	.ctrs = acl_ctrs,
	.param_keys = acl_keys,
	.parse = pf_acl_parse,
	.cfg_free = pf_acl_cfg_free,
	.init = acl_init,
	.process_burst = acl_process_burst,
	.idle = acl_idle,
	.gauges = acl_gauges,
	.update_prepare = acl_update_prepare,
	.update_commit = acl_update_commit,
	.update_abort = acl_update_abort,
	.free = acl_free,
};
