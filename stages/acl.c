/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acl: IPv4 and IPv6 5-tuple filter on rte_acl; stateless, or stateful with permit-reflect
 * sessions.
 * Edges: drop, out (permitted packets).
 * Counters: drops acl_deny, session_full, acl_not_ipv4; info per action (permit, deny_rule, ...),
 *   session_permit/created/expired, nonfirst_fragment, l4_malformed. Gauges: rule.<n> hits.
 * Params: rules | rules_file, default, algorithm, sessions, session_timeouts, session_sweep.
 *
 * Per burst: (1) gather each packet's 5-tuple into a flat key, (2) look the
 * burst up in the session table (stateful), (3) classify every packet that
 * has no session (IPv4 and IPv6 in their own contexts), (4) apply verdicts in packet
 * order, creating sessions for permit-reflect, (5) expire a few sessions.
 * The rule table is RCU-protected: update() builds a new one beside it, swaps
 * the pointer and frees the old one after pf_rcu_synchronize() (the runtime's
 * QSBR: every worker lcore has finished the loop pass it was in).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>
#include <rte_vect.h>

#include "acl_rules.h"
#include "pf_log.h"
#include "pf_stage.h"

#define foreach_acl_ctr(_)									\
	_(ACL_CTR_DENY, acl_deny, DROP, "denied by a deny rule or by the default action")		\
	_(ACL_CTR_SESSION_FULL, session_full, DROP,							\
	  "matched permit-reflect but the session table is full: refused")			\
	_(ACL_CTR_NOT_IPV4, acl_not_ipv4, DROP, "neither IPv4 nor IPv6 (wire only rx's ipv4 and ipv6 edges here)") \
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

int pf_acl_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);

/*
 * What rte_acl reads for one packet, in network byte order: l3fwd's layout.
 * The first field is one byte; the rest come in groups of four bytes
 * (input_index 1..3), the two ports sharing the last one.
 *
 * The main context holds the rules exactly as written and sees only packets
 * with real ports (complete TCP, UDP or SCTP headers). Every other IPv4
 * packet (non-first fragments, truncated L4, protocols without ports) goes
 * to the auxiliary context, which has the same rules on proto, src and dst
 * only, in two categories:
 *   ACL_CAT_STRICT  rules that name no ports: "ports unknown" never matches
 *                   a port rule;
 *   ACL_CAT_PROTO   every rule, its ports ignored: non-first fragments with
 *                   "nonfirst_fragments: protocol-only" (VPP's default).
 */
/*
 * Laid out as the IPv4 header from its TTL on (as l3fwd's ACL key): a plain
 * packet (IHL 5) is classified in place, from a pointer to its frame
 * (ACL_KEY4); the others get this copy. rte_acl reads only the fields below,
 * never byte 0.
 */
struct acl_key {
	uint8_t ttl_pad;
	uint8_t proto;
	uint8_t pad[2];
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
};

/*
 * What rte_acl is handed for a key is where an untagged frame holding it
 * would start: the field offsets are those of the frame, ACL_KEY4 bytes
 * before the key's TTL byte (ACL_KEY6 before an IPv6 key's payload length).
 * An untagged plain frame is classified from its own start (no add a
 * packet), a tagged one from 14 bytes before its IP header, a copy from
 * acl_kd4() of its key.
 */
#define ACL_KEY4 (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv4_hdr, time_to_live))
#define ACL_KEY6 (RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, payload_len))

enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, F_NUM };
#define F_AUX_NUM (F_DST + 1)

/* Auxiliary context categories (rte_acl wants 1 or a multiple of 4). */
enum { ACL_CAT_STRICT, ACL_CAT_PROTO, ACL_AUX_CATS = RTE_ACL_RESULTS_MULTIPLIER };

RTE_ACL_RULE_DEF(acl_rte_rule, F_NUM);

static const struct rte_acl_field_def acl_field_defs[F_NUM] = {
	{ RTE_ACL_FIELD_TYPE_BITMASK, 1, F_PROTO, 0, ACL_KEY4 + offsetof(struct acl_key, proto) },
	{ RTE_ACL_FIELD_TYPE_MASK, 4, F_SRC, 1, ACL_KEY4 + offsetof(struct acl_key, src) },
	{ RTE_ACL_FIELD_TYPE_MASK, 4, F_DST, 2, ACL_KEY4 + offsetof(struct acl_key, dst) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F_SPORT, 3, ACL_KEY4 + offsetof(struct acl_key, sport) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F_DPORT, 3, ACL_KEY4 + offsetof(struct acl_key, dport) },
};

/*
 * The IPv6 key: each 128-bit address as four 32-bit fields (rte_acl
 * compares at most 4 bytes per field), the ports sharing the last group of
 * four bytes. Laid out as the IPv6 header from its payload length on, so a
 * packet without extension headers is classified in place (as l3fwd's);
 * the others (the ports behind extension headers) get this copy. rte_acl
 * reads neither pad field.
 */
struct acl6_key {
	uint16_t plen_pad;
	uint8_t proto;
	uint8_t hlim_pad;
	uint32_t src[4];
	uint32_t dst[4];
	uint16_t sport;
	uint16_t dport;
};

enum { F6_PROTO, F6_SRC, F6_DST = F6_SRC + 4, F6_SPORT = F6_DST + 4, F6_DPORT, F6_NUM };
#define F6_AUX_NUM (F6_DST + 4)

RTE_ACL_RULE_DEF(acl6_rte_rule, F6_NUM);

#define ACL6_ADDR_DEF(f, w, a)									\
	{ RTE_ACL_FIELD_TYPE_MASK, 4, (f) + (w), (f) + (w),					\
	  ACL_KEY6 + offsetof(struct acl6_key, a) + (w) * sizeof(uint32_t) }

static const struct rte_acl_field_def acl6_field_defs[F6_NUM] = {
	{ RTE_ACL_FIELD_TYPE_BITMASK, 1, F6_PROTO, 0, ACL_KEY6 + offsetof(struct acl6_key, proto) },
	ACL6_ADDR_DEF(F6_SRC, 0, src), ACL6_ADDR_DEF(F6_SRC, 1, src),
	ACL6_ADDR_DEF(F6_SRC, 2, src), ACL6_ADDR_DEF(F6_SRC, 3, src),
	ACL6_ADDR_DEF(F6_DST, 0, dst), ACL6_ADDR_DEF(F6_DST, 1, dst),
	ACL6_ADDR_DEF(F6_DST, 2, dst), ACL6_ADDR_DEF(F6_DST, 3, dst),
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F6_SPORT, F6_SPORT,
	  ACL_KEY6 + offsetof(struct acl6_key, sport) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F6_DPORT, F6_SPORT,
	  ACL_KEY6 + offsetof(struct acl6_key, dport) },
};

/* The classifier's pointer for a key copy (ACL_KEY4, ACL_KEY6). The copies
 * live in acl_priv behind other members: the pointer stays inside it. */
static __rte_always_inline const uint8_t *
acl_kd4(const struct acl_key *k)
{
	return (const uint8_t *)k - ACL_KEY4;
}

static __rte_always_inline const uint8_t *
acl_kd6(const struct acl6_key *k)
{
	return (const uint8_t *)k - ACL_KEY6;
}

/*
 * Session key: the 5-tuple with the lower (address, port) end first. An
 * IPv4 address takes a0[0] / a1[0], the rest zero; v6 keeps the families apart.
 */
struct acl_skey {
	uint32_t a0[4], a1[4];
	uint16_t p0, p1;
	uint8_t proto;
	uint8_t v6;
	uint8_t pad[2];
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
#define PK_AUX       0x10           /* classified by the auxiliary context */
#define PK_V6        0x20           /* IPv6: keys6[], the IPv6 contexts */

struct acl_pk {
	uint8_t flags;
	uint8_t tcpf;
	uint8_t dir;
	uint8_t cat;                    /* PK_AUX: the auxiliary category */
	int32_t pos;                    /* live session slot, -1 for none */
};

#define ACL_CTX_MAX 16

/* One rule set in 1..ACL_CTX_MAX rte_acl contexts (see acl_set_build). */
struct acl_set {
	struct rte_acl_ctx *ctx[ACL_CTX_MAX];
	uint32_t n_ctx;
	uint32_t n_cat;
};

/* What a classify result (0: no rule, else rule number) does to a packet. */
struct acl_verdict {
	uint8_t edge;                   /* ACL_EDGE_OUT or ACL_EDGE_DROP */
	uint8_t ctr;                    /* per-action info counter */
	uint8_t reflect;                /* permit-reflect: open a session */
	uint8_t pad;
};

/* One rule set, replaced as a whole by update(). */
struct acl_tbl {
	struct acl_set main;            /* rules as written, packets with ports */
	struct acl_set aux;             /* proto/src/dst only, ACL_AUX_CATS categories */
	struct acl_set main6;           /* the same two for IPv6 (rules of no family in both) */
	struct acl_set aux6;
	uint32_t n_rules;
	uint8_t default_action;
	uint8_t alg;                    /* enum rte_acl_classify_alg in use */
	uint8_t alg_measured;           /* 1: chosen by timing at build ("default") */
	uint8_t nonfirst_cat;           /* category for non-first fragments */
	uint8_t reflect;                /* some rule is permit-reflect (opens sessions) */
	struct acl_verdict *verdict;    /* [0]: no match (default), [r]: rule r */
	uint64_t *hits;                 /* [r]: hits of rule r, single writer */
	int32_t *prio;                  /* [r - 1]: rule r's rte_acl priority (rank) */
	uint64_t alg_cycles[ACL_ALG_MAX]; /* measured classify cost per 1000 keys, 0: n/a */
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
	struct acl6_key keys6[PF_BURST_MAX];
	struct acl_skey skeys[PF_BURST_MAX];
	struct acl_pk pk[PF_BURST_MAX];
	const uint8_t *kdata[PF_BURST_MAX];   /* acl_kd4/6 of keys[i], or the packet's frame */
	const uint8_t *data[PF_BURST_MAX];
	uint16_t idx[PF_BURST_MAX];
	uint32_t res[PF_BURST_MAX];           /* per packet: rule number or 0 */
	uint32_t tmp[PF_BURST_MAX * ACL_AUX_CATS];
	uint32_t tmp2[PF_BURST_MAX * ACL_AUX_CATS];
};

static const uint16_t action_ctr[ACL_ACTION_MAX] = {
	[ACL_DENY] = ACL_CTR_DENY_RULE,
	[ACL_PERMIT] = ACL_CTR_PERMIT,
	[ACL_PERMIT_REFLECT] = ACL_CTR_PERMIT_REFLECT,
};

/* "default" is not a method: the build times the others and keeps the fastest. */
static const enum rte_acl_classify_alg alg_map[ACL_ALG_MAX] = {
	[ACL_ALG_DEFAULT] = RTE_ACL_CLASSIFY_DEFAULT,
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
acl_set_free(struct acl_set *set)
{
	uint32_t k;

	for (k = 0; k < ACL_CTX_MAX; k++) {
		rte_acl_free(set->ctx[k]);
		set->ctx[k] = NULL;
	}
	set->n_ctx = 0;
}

static void
acl_tbl_free(struct acl_tbl *t)
{
	if (t == NULL)
		return;
	acl_set_free(&t->main);
	acl_set_free(&t->aux);
	acl_set_free(&t->main6);
	acl_set_free(&t->aux6);
	rte_free(t->prio);
	rte_free(t->verdict);
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

/* Categories, priority and result (rule number; 0 means "no match") of rule @p idx. */
static void
acl_rule_data(const struct acl_rule *r, int32_t prio, uint32_t idx, bool aux,
	      struct rte_acl_rule_data *d)
{
	d->category_mask = !aux ? 1 : rule_has_ports(r) ? 1u << ACL_CAT_PROTO :
			   1u << ACL_CAT_PROTO | 1u << ACL_CAT_STRICT;
	d->priority = prio;
	d->userdata = idx + 1;
}

/*
 * Rule @p idx as rte_acl sees it: for the main context as written; for the
 * auxiliary one (@p aux) without ports, in ACL_CAT_PROTO and, when it names
 * no ports, ACL_CAT_STRICT too.
 */
static void
acl_rule_to_rte(const struct acl_rule *r, int32_t prio, uint32_t idx, bool aux,
		struct acl_rte_rule *o)
{
	memset(o, 0, sizeof(*o));
	acl_rule_data(r, prio, idx, aux, &o->data);
	o->field[F_PROTO].value.u8 = r->proto_any ? 0 : r->proto;
	o->field[F_PROTO].mask_range.u8 = r->proto_any ? 0 : 0xff;
	o->field[F_SRC].value.u32 = r->src;
	o->field[F_SRC].mask_range.u32 = r->src_len;
	o->field[F_DST].value.u32 = r->dst;
	o->field[F_DST].mask_range.u32 = r->dst_len;
	if (aux)
		return;
	o->field[F_SPORT].value.u16 = r->sport_lo;
	o->field[F_SPORT].mask_range.u16 = r->sport_hi;
	o->field[F_DPORT].value.u16 = r->dport_lo;
	o->field[F_DPORT].mask_range.u16 = r->dport_hi;
}

/* An IPv6 prefix as four 32-bit MASK fields (host-order words, /0 to /32 each). */
static void
acl6_addr_fields(const uint8_t *a, uint32_t len, struct rte_acl_field *f)
{
	uint32_t w, v;

	for (w = 0; w < 4; w++) {
		memcpy(&v, a + 4 * w, sizeof(v));
		f[w].value.u32 = rte_be_to_cpu_32(v);
		f[w].mask_range.u32 = len >= 32 * (w + 1) ? 32 : len <= 32 * w ? 0 : len - 32 * w;
	}
}

/* The same for the IPv6 contexts: each address as four 32-bit words. */
static void
acl6_rule_to_rte(const struct acl_rule *r, int32_t prio, uint32_t idx, bool aux,
		 struct acl6_rte_rule *o)
{
	memset(o, 0, sizeof(*o));
	acl_rule_data(r, prio, idx, aux, &o->data);
	o->field[F6_PROTO].value.u8 = r->proto_any ? 0 : r->proto;
	o->field[F6_PROTO].mask_range.u8 = r->proto_any ? 0 : 0xff;
	/* A rule of no family leaves the address lengths 0: matches anything. */
	if (r->family == ACL_FAM_IPV6) {
		acl6_addr_fields(r->src6, r->src_len, &o->field[F6_SRC]);
		acl6_addr_fields(r->dst6, r->dst_len, &o->field[F6_DST]);
	}
	if (aux)
		return;
	o->field[F6_SPORT].value.u16 = r->sport_lo;
	o->field[F6_SPORT].mask_range.u16 = r->sport_hi;
	o->field[F6_DPORT].value.u16 = r->dport_lo;
	o->field[F6_DPORT].mask_range.u16 = r->dport_hi;
}

/*
 * Build one context from the @p n rules numbered in @p sel, main or
 * auxiliary, IPv4 or IPv6 (@p v6). Returns 0 or -errno (with rte_acl's code).
 */
static int
acl_ctx_build(const struct pf_stage *st, const struct acl_cfg *cfg, const int32_t *prio,
	      const uint32_t *sel, uint32_t n, bool aux, bool v6, struct rte_acl_ctx **out)
{
	static uint32_t gen;
	uint32_t nf = v6 ? (aux ? F6_AUX_NUM : F6_NUM) : (aux ? F_AUX_NUM : F_NUM);
	struct rte_acl_config bcfg = { .num_categories = aux ? ACL_AUX_CATS : 1,
				       .num_fields = nf };
	struct acl6_rte_rule chunk[256];
	struct rte_acl_param param;
	char name[RTE_ACL_NAMESIZE];
	struct rte_acl_ctx *ctx;
	uint32_t i, k = 0;
	int rc = 0;
	void *o;

	/* rte_acl context names are global: make each build's unique. */
	snprintf(name, sizeof(name), "pf_acl%u%s%s_%u", st->id, v6 ? "v6" : "", aux ? "x" : "",
		 __atomic_fetch_add(&gen, 1, __ATOMIC_RELAXED));
	/* An auxiliary rule is a prefix of a main one: same struct, fewer fields. */
	param = (struct rte_acl_param){ .name = name, .socket_id = st->socket,
					.rule_size = RTE_ACL_RULE_SZ(nf), .max_rule_num = n };
	ctx = rte_acl_create(&param);
	if (ctx == NULL)
		return -rte_errno;
	for (i = 0; i < n && rc >= 0; i++) {
		o = (uint8_t *)chunk + k * param.rule_size;
		if (v6)
			acl6_rule_to_rte(&cfg->rules[sel[i]], prio[sel[i]], sel[i], aux, o);
		else
			acl_rule_to_rte(&cfg->rules[sel[i]], prio[sel[i]], sel[i], aux, o);
		if (++k == RTE_DIM(chunk) || i + 1 == n) {
			rc = rte_acl_add_rules(ctx, (const struct rte_acl_rule *)chunk, k);
			k = 0;
		}
	}
	memcpy(bcfg.defs, v6 ? acl6_field_defs : acl_field_defs, sizeof(bcfg.defs[0]) * nf);
	if (rc >= 0)
		rc = rte_acl_build(ctx, &bcfg);
	if (rc < 0) {
		rte_acl_free(ctx);
		return rc;
	}
	/* The rules were copied into the context; the built tries are what runs. */
	rte_acl_reset_rules(ctx);
	*out = ctx;
	return 0;
}

/*
 * Build @p set from the rules of @p cfg for one family (@p v6; rules of no
 * family go to both). rte_acl gives up when a rule set needs more than 8
 * tries (many overlapping wildcards and ranges); then the rules are split
 * into 2, 4, ... ACL_CTX_MAX contexts and the data path keeps the highest
 * priority match over them. A family without rules gets no context.
 */
static int
acl_set_build(const struct pf_stage *st, const struct acl_cfg *cfg, const int32_t *prio,
	      bool aux, bool v6, struct acl_set *set)
{
	uint8_t other = v6 ? ACL_FAM_IPV4 : ACL_FAM_IPV6;
	uint32_t k, per, i, n = 0, *sel;
	int rc;

	set->n_cat = aux ? ACL_AUX_CATS : 1;
	set->n_ctx = 0;
	sel = malloc(sizeof(*sel) * RTE_MAX(cfg->n_rules, 1u));
	if (sel == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->n_rules; i++)
		if (cfg->rules[i].family != other)
			sel[n++] = i;
	for (set->n_ctx = 1; n != 0; set->n_ctx *= 2) {
		per = (n + set->n_ctx - 1) / set->n_ctx;
		for (k = 0, rc = 0; k < set->n_ctx && rc == 0 && k * per < n; k++)
			rc = acl_ctx_build(st, cfg, prio, sel + k * per, RTE_MIN(per, n - k * per),
					   aux, v6, &set->ctx[k]);
		if (rc == 0) {
			set->n_ctx = k;
			break;
		}
		k = set->n_ctx;
		acl_set_free(set);
		set->n_ctx = k;
		if (rc != -ENOMEM || set->n_ctx == ACL_CTX_MAX || per < 2) {
			free(sel);
			return rc;
		}
	}
	if (n == 0)
		set->n_ctx = 0;
	free(sel);
	return 0;
}

static int
acl_set_alg(struct acl_set *set, enum rte_acl_classify_alg alg)
{
	uint32_t k;
	int rc = 0;

	for (k = 0; k < set->n_ctx && rc == 0; k++)
		rc = rte_acl_set_ctx_classify(set->ctx[k], alg);
	return rc;
}

/*
 * Time every classify method this CPU runs on the built main context: a
 * burst of keys drawn from the rules' own addresses and ports (so the walk
 * goes deep) plus random ones, best of several rounds, in TSC cycles per
 * 1000 keys. Returns the fastest method (RTE_ACL_CLASSIFY_SCALAR when
 * nothing else runs). A few milliseconds per build.
 */
static enum rte_acl_classify_alg
acl_alg_measure(const struct acl_cfg *cfg, struct acl_set *set, uint64_t *cycles)
{
	enum { KEYS = 64, ROUNDS = 5, REPS = 8 };
	static const uint8_t cand[] = { ACL_ALG_SCALAR, ACL_ALG_SSE, ACL_ALG_AVX2,
					ACL_ALG_AVX512X16, ACL_ALG_AVX512X32 };
	struct {
		uint8_t lead[ACL_KEY4];         /* acl_kd4() points here */
		struct acl_key k[KEYS];
	} kb;
	struct acl_key *keys = kb.k;
	const uint8_t *data[KEYS];
	uint32_t res[KEYS], i, c, r, k, seed = 12345;
	enum rte_acl_classify_alg best = RTE_ACL_CLASSIFY_SCALAR;
	uint64_t t0, dt, min, best_c = UINT64_MAX;

	for (i = 0; i < KEYS; i++) {
		const struct acl_rule *ru = &cfg->rules[(i * 7919u) % cfg->n_rules];

		seed = seed * 1103515245u + 12345u;
		keys[i] = (struct acl_key){
			.proto = (i & 1) ? IPPROTO_UDP : IPPROTO_TCP,
			.src = rte_cpu_to_be_32((i & 2) ? ru->src | (seed & 0xff) : seed),
			.dst = rte_cpu_to_be_32((i & 4) ? ru->dst : seed * 31u),
			.sport = rte_cpu_to_be_16((uint16_t)(seed >> 7)),
			.dport = rte_cpu_to_be_16((i & 8) ? ru->dport_lo : (uint16_t)(seed >> 16)),
		};
		data[i] = acl_kd4(&keys[i]);
	}
	for (c = 0; c < RTE_DIM(cand); c++) {
		cycles[cand[c]] = 0;
		/* Refused unless the CPU and the EAL's max SIMD width allow it. */
		if (acl_set_alg(set, alg_map[cand[c]]) != 0)
			continue;
		min = UINT64_MAX;
		for (r = 0; r < ROUNDS; r++) {
			t0 = rte_rdtsc_precise();
			for (k = 0; k < REPS; k++)
				for (i = 0; i < set->n_ctx; i++)
					rte_acl_classify(set->ctx[i], data, res, KEYS, 1);
			dt = rte_rdtsc_precise() - t0;
			min = RTE_MIN(min, dt);
		}
		cycles[cand[c]] = RTE_MAX(min * 1000 / (KEYS * REPS), 1u);
		if (cycles[cand[c]] < best_c) {
			best_c = cycles[cand[c]];
			best = alg_map[cand[c]];
		}
	}
	return best;
}

/*
 * Only IPv6 rules (nothing to time the IPv4 way): the widest method the
 * CPU and the EAL allow, AVX2 before SSE before scalar.
 */
static enum rte_acl_classify_alg
acl6_alg_pick(struct acl_set *set)
{
	static const enum rte_acl_classify_alg pref[] = {
		RTE_ACL_CLASSIFY_AVX2, RTE_ACL_CLASSIFY_SSE, RTE_ACL_CLASSIFY_SCALAR };
	uint32_t i;

	for (i = 0; i < RTE_DIM(pref) - 1; i++)
		if (acl_set_alg(set, pref[i]) == 0)
			return pref[i];
	return RTE_ACL_CLASSIFY_SCALAR;
}

/* The verdict of every classify result, so the data path does one load per packet. */
static void
acl_verdicts(const struct acl_cfg *cfg, struct acl_tbl *t)
{
	uint32_t r;
	uint8_t act;

	for (r = 0; r <= cfg->n_rules; r++) {
		act = r == 0 ? cfg->default_action : cfg->rules[r - 1].action;
		t->verdict[r] = (struct acl_verdict){
			.edge = act == ACL_DENY ? ACL_EDGE_DROP : ACL_EDGE_OUT,
			.ctr = r != 0 ? action_ctr[act] :
			       act == ACL_DENY ? ACL_CTR_DEFAULT_DENY : ACL_CTR_DEFAULT_PERMIT,
			.reflect = act == ACL_PERMIT_REFLECT,
		};
		t->reflect |= t->verdict[r].reflect;
	}
}

static int
acl_tbl_build(const struct pf_stage *st, const struct pf_stage_conf *sc, struct acl_tbl **out,
	      struct pf_errs *errs)
{
	const struct acl_cfg *cfg = sc->cfg;
	uint64_t t0 = rte_rdtsc(), mem0 = pf_heap_used();
	enum rte_acl_classify_alg alg;
	struct acl_tbl *t;
	int rc, socket = st->socket;
	uint32_t k;

	*out = NULL;
	t = rte_zmalloc_socket("acl_tbl", sizeof(*t), RTE_CACHE_LINE_SIZE, socket);
	if (t == NULL)
		return pf_node_err(errs, sc->node, "stages.%s: out of memory", sc->name);
	t->n_rules = cfg->n_rules;
	t->default_action = cfg->default_action;
	t->nonfirst_cat = cfg->frag_proto_only ? ACL_CAT_PROTO : ACL_CAT_STRICT;
	for (k = 0; k < ACL_TO_MAX; k++)
		t->timeout_ns[k] = (uint64_t)cfg->timeout_s[k] * 1000000000ull;
	t->alg = (uint8_t)alg_map[cfg->algorithm];
	t->verdict = rte_malloc_socket("acl_verdict", sizeof(t->verdict[0]) * (cfg->n_rules + 1),
				       RTE_CACHE_LINE_SIZE, socket);
	t->hits = rte_zmalloc_socket("acl_hits", sizeof(uint64_t) * (cfg->n_rules + 1),
				     RTE_CACHE_LINE_SIZE, socket);
	t->prio = rte_malloc_socket("acl_prio", sizeof(int32_t) * RTE_MAX(cfg->n_rules, 1u), 0,
				    socket);
	if (t->verdict == NULL || t->hits == NULL || t->prio == NULL ||
	    acl_priorities(cfg, t->prio) < 0) {
		rc = pf_node_err(errs, sc->node, "stages.%s: out of memory for %u rules", sc->name,
				 cfg->n_rules);
		goto fail;
	}
	acl_verdicts(cfg, t);
	if (cfg->n_rules == 0)
		goto done;
	rc = acl_set_build(st, cfg, t->prio, false, false, &t->main);
	if (rc == 0)
		rc = acl_set_build(st, cfg, t->prio, true, false, &t->aux);
	if (rc == 0)
		rc = acl_set_build(st, cfg, t->prio, false, true, &t->main6);
	if (rc == 0)
		rc = acl_set_build(st, cfg, t->prio, true, true, &t->aux6);
	if (rc < 0) {
		rc = pf_node_err(errs, sc->node,
				 "stages.%s: building the ACL of %u rules failed: %s (in %u contexts; raise EAL -m, or simplify overlapping ranges)",
				 sc->name, cfg->n_rules, strerror(-rc),
				 RTE_MAX(RTE_MAX(t->main.n_ctx, t->aux.n_ctx),
					 RTE_MAX(t->main6.n_ctx, t->aux6.n_ctx)));
		goto fail;
	}
	if (cfg->algorithm == ACL_ALG_DEFAULT && t->main.n_ctx != 0) {
		alg = acl_alg_measure(cfg, &t->main, t->alg_cycles);
		t->alg_measured = 1;
	} else if (cfg->algorithm == ACL_ALG_DEFAULT) {
		alg = acl6_alg_pick(&t->main6);
	} else {
		alg = alg_map[cfg->algorithm];
	}
	rc = acl_set_alg(&t->main, alg);
	if (rc == 0)
		rc = acl_set_alg(&t->aux, alg);
	if (rc == 0)
		rc = acl_set_alg(&t->main6, alg);
	if (rc == 0)
		rc = acl_set_alg(&t->aux6, alg);
	if (rc < 0) {
		rc = pf_node_err(errs, pf_map_get(sc->node, "algorithm") ?: sc->node,
				 "stages.%s.algorithm: '%s' is not available here (avx512 needs EAL --force-max-simd-bitwidth=512)",
				 sc->name, pf_acl_alg_names[cfg->algorithm]);
		goto fail;
	}
	t->alg = (uint8_t)alg;
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
		.socket_id = st->socket,
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

	memset(s, 0, sizeof(*s));
	s->proto = k->proto;
	if (x <= y) {
		s->a0[0] = k->src, s->p0 = k->sport, s->a1[0] = k->dst, s->p1 = k->dport;
		return 0;
	}
	s->a0[0] = k->dst, s->p0 = k->dport, s->a1[0] = k->src, s->p1 = k->sport;
	return 1;
}

/* The same for an IPv6 packet. */
static uint8_t
acl6_skey_make(const struct acl6_key *k, struct acl_skey *s)
{
	int c = memcmp(k->src, k->dst, sizeof(k->src));
	bool fwd = c < 0 || (c == 0 && k->sport <= k->dport);

	s->proto = k->proto;
	s->v6 = 1;
	s->pad[0] = s->pad[1] = 0;
	memcpy(s->a0, fwd ? k->src : k->dst, sizeof(s->a0));
	memcpy(s->a1, fwd ? k->dst : k->src, sizeof(s->a1));
	s->p0 = fwd ? k->sport : k->dport;
	s->p1 = fwd ? k->dport : k->sport;
	return !fwd;
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
	acl_sess_touch(t, s, pv->skeys[i].proto, &pv->pk[i], now);
	return 0;
}

/* ---- data path ---------------------------------------------------------- */

/* Shortest L4 header of the protocols that have ports; 0: no ports. */
static const uint8_t acl_l4_min[256] = {
	[IPPROTO_TCP] = sizeof(struct rte_tcp_hdr), [IPPROTO_UDP] = 8, [IPPROTO_SCTP] = 12,
};

/* The same for the fast paths as the IP length it takes (IPv4 total length,
 * IPv6 40 + payload length: a header without options or extension headers
 * included), "no ports" as a length no packet has: one compare tells a
 * complete port header. */
#define ACL_NO_PORTS INT32_MAX
#define ACL_IP4 ((int32_t)sizeof(struct rte_ipv4_hdr))
#define ACL_IP6 ((int32_t)sizeof(struct rte_ipv6_hdr))
#define ACL_L3L4_NEED(hl, tcp) {								\
	[0 ... IPPROTO_TCP - 1] = ACL_NO_PORTS,							\
	[IPPROTO_TCP] = (hl) + (int32_t)sizeof(struct rte_tcp_hdr) + (tcp),			\
	[IPPROTO_TCP + 1 ... IPPROTO_UDP - 1] = ACL_NO_PORTS, [IPPROTO_UDP] = (hl) + 8,		\
	[IPPROTO_UDP + 1 ... IPPROTO_SCTP - 1] = ACL_NO_PORTS, [IPPROTO_SCTP] = (hl) + 12,	\
	[IPPROTO_SCTP + 1 ... 255] = ACL_NO_PORTS,						\
}
static const int32_t acl_l3l4_need[256] = ACL_L3L4_NEED(ACL_IP4, 0);
static const int32_t acl6_l3l4_need[256] = ACL_L3L4_NEED(ACL_IP6, 0);
/* The x4 group's: TCP's need plus ACL_X4_TCP, more than any IP length, so
 * one compare fails a group holding TCP; its data offsets are then tested
 * packet by packet (acl_x4_group). */
#define ACL_X4_TCP (1 << 24)
static const int32_t acl_x4_need[256] = ACL_L3L4_NEED(ACL_IP4, ACL_X4_TCP);
static const int32_t acl6_x4_need[256] = ACL_L3L4_NEED(ACL_IP6, ACL_X4_TCP);

/*
 * Fill packet i's key and scratch; returns its PK_* flags. Never reads past
 * the IPv4 total length or data_len. Non-first fragments are known by rx's
 * PF_META_IP_NONFIRST: their payload is never read as ports. The general
 * case; acl_extract_fast takes the common one.
 */
/*
 * The ports of the @p l4len bytes at @p l4 (upper-layer protocol @p proto)
 * into @p ports (sport, dport as on the wire, zero when there are none);
 * returns the PK_* flags both families share.
 */
static uint8_t
acl_extract_l4(const uint8_t *l4, uint32_t l4len, uint8_t proto, uint16_t *ports,
	       struct acl_pk *p)
{
	uint8_t need = acl_l4_min[proto];

	if (likely(need != 0 && l4len >= need)) {
		if (proto == IPPROTO_TCP) {
			if (unlikely((l4[12] >> 4) < 5 || (l4[12] >> 4) * 4u > l4len))
				goto malformed;
			p->tcpf = l4[13];
		}
		memcpy(ports, l4, 2 * sizeof(uint16_t));
		return PK_SESS;
	}
	ports[0] = ports[1] = 0;
	p->cat = ACL_CAT_STRICT;
	/* No ports to have (ICMP, GRE, ...): sessions on the address pair. */
	if (need == 0)
		return PK_SESS | PK_AUX;
malformed:
	ports[0] = ports[1] = 0;
	p->cat = ACL_CAT_STRICT;
	return PK_MALFORMED | PK_AUX;
}

/*
 * An IPv6 packet's key: rx's l3_len reaches the upper-layer header (past
 * the extension headers it walked) and l4_proto names it; the payload
 * length bounds what is read. Returns its PK_* flags (PK_V6 among them).
 */
static uint8_t
acl6_extract(struct rte_mbuf *m, const struct pf_meta *md, struct acl6_key *k,
	     struct acl_pk *p, uint8_t nonfirst_cat)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l2 = md->l2_len, l3 = md->l3_len, l4len, tot;
	const struct rte_ipv6_hdr *ip;

	if (unlikely(l3 < sizeof(*ip) || len < l2 + l3))
		return p->flags = PK_NOTIP;
	ip = (const struct rte_ipv6_hdr *)(d + l2);
	k->proto = md->l4_proto;
	memcpy(k->src, ip->src_addr, sizeof(k->src));
	memcpy(k->dst, ip->dst_addr, sizeof(k->dst));
	if (unlikely(md->flags & PF_META_IP_NONFIRST)) {
		k->sport = k->dport = 0;
		p->cat = nonfirst_cat;
		return p->flags = PK_NONFIRST | PK_AUX | PK_V6;
	}
	tot = sizeof(*ip) + rte_be_to_cpu_16(ip->payload_len);
	l4len = tot >= l3 ? RTE_MIN(len - l2 - l3, tot - l3) : 0;
	return p->flags = PK_V6 | acl_extract_l4(d + l2 + l3, l4len, k->proto, &k->sport, p);
}

static __rte_always_inline uint8_t
acl_extract(struct rte_mbuf *m, const struct pf_meta *md, struct acl_key *k,
	    struct acl6_key *k6, const uint8_t **kd, struct acl_pk *p, uint8_t nonfirst_cat)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l2 = md->l2_len, l3 = md->l3_len, l4len, tot;
	const struct rte_ipv4_hdr *ip;

	p->pos = -1;
	p->tcpf = 0;
	*kd = acl_kd4(k);
	if (md->cls == PF_CLASS_IPV6) {
		*kd = acl_kd6(k6);
		return acl6_extract(m, md, k6, p, nonfirst_cat);
	}
	if (unlikely(md->cls != PF_CLASS_IPV4 || l3 < sizeof(*ip) || len < l2 + l3))
		return p->flags = PK_NOTIP;
	ip = (const struct rte_ipv4_hdr *)(d + l2);
	k->proto = ip->next_proto_id;
	memcpy(&k->src, &ip->src_addr, 2 * sizeof(uint32_t));
	if (unlikely(md->flags & PF_META_IP_NONFIRST)) {
		k->sport = k->dport = 0;
		p->cat = nonfirst_cat;
		return p->flags = PK_NONFIRST | PK_AUX;
	}
	tot = rte_be_to_cpu_16(ip->total_length);
	l4len = tot >= l3 ? RTE_MIN(len - l2 - l3, tot - l3) : 0;
	return p->flags = acl_extract_l4(d + l2 + l3, l4len, k->proto, &k->sport, p);
}

/*
 * What the gather adds up per packet: nothing for a packet of the IPv4 main
 * context (ports, key in keys[] or its own header: the common case costs no
 * add), ACL_PLAIN6 for one of the IPv6 main context, ACL_OTHER for the
 * others. The sum is 0 for a burst all IPv4 with ports, n * ACL_PLAIN6 for
 * one all IPv6 with ports (PF_BURST_MAX < ACL_PLAIN6).
 */
#define ACL_PLAIN4 0u
#define ACL_OTHER 1u
#define ACL_PLAIN6 (1u << 16)

/* acl_extract for packet @p i, its flags told as the gather counts them.
 * Takes the metadata offset and the packet's index, not pointers: the fast
 * path keeps none live for this call. */
static uint32_t __rte_noinline
acl_extract_slow(struct rte_mbuf *m, int off, struct acl_priv *pv, unsigned int i,
		 uint8_t nonfirst_cat)
{
	uint8_t f = acl_extract(m, pf_meta_at(m, off), &pv->keys[i], &pv->keys6[i],
				&pv->kdata[i], &pv->pk[i], nonfirst_cat);

	return f == PK_SESS ? ACL_PLAIN4 : f == (PK_SESS | PK_V6) ? ACL_PLAIN6 : ACL_OTHER;
}

/* l2_len, l3_len, cls, flags as one little-endian word (layout checked in acl_init). */
#define ACL_META_MASK (0xffu << 8 | 0xffu << 16 | (uint32_t)PF_META_IP_NONFIRST << 24)
#define ACL_META_FAST (20u << 8 | PF_CLASS_IPV4 << 16)
#define ACL_META_FAST6 (40u << 8 | PF_CLASS_IPV6 << 16)
#define ACL_META_AT offsetof(struct pf_meta, l2_len)

/*
 * The common cases: IPv4 without options or IPv6 without extension
 * headers, not a non-first fragment, a complete TCP, UDP or SCTP header.
 * Same key and flags as acl_extract, which takes everything else. @p kd
 * (packet @p i's kdata[] entry) gets what the classifier reads: without sessions (@p
 * stateful false) a plain packet's own header, else its keys[] entry (IPv6
 * with sessions: acl_extract's copy). Returns ACL_PLAIN4, ACL_PLAIN6 or
 * ACL_OTHER.
 */
static __rte_always_inline uint32_t
acl_extract_fast(struct rte_mbuf *m, int off, struct acl_priv *pv, unsigned int i,
		 const uint8_t **kd, uint8_t nonfirst_cat, const bool stateful)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *), *ip, *l4;
	const struct pf_meta *md = pf_meta_at(m, off);
	struct acl_key *k = &pv->keys[i];
	struct acl_pk *p = &pv->pk[i];
	int32_t l3len;
	uint32_t w;

	/* XOR then test, no copy of the word: ACL_META_FAST has no l2_len bits,
	 * so the low byte stays l2_len. */
	memcpy(&w, &md->l2_len, sizeof(w));
	w ^= ACL_META_FAST;
	if (unlikely((w & ACL_META_MASK) != 0))
		goto not4;
	ip = d + (w & 0xff);
	l4 = ip + sizeof(struct rte_ipv4_hdr);
	/* What the packet holds from its IPv4 header on: the total length, or
	 * less if the frame is shorter. Signed: a frame shorter than its L2
	 * header makes no ports, not a huge count. */
	l3len = RTE_MIN((int32_t)rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)ip)->total_length),
			(int32_t)rte_pktmbuf_data_len(m) - (int32_t)(w & 0xff));
	if (unlikely(l3len < acl_l3l4_need[ip[9]] ||
		     (ip[9] == IPPROTO_TCP &&
		      ((l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > l3len - ACL_IP4))))
		goto slow;
	if (!stateful) {
		/* Only the classifier reads the key: it reads the header itself. No
		 * flags stored: acl_flags_inplace knows these by kd. */
		*kd = ip - RTE_ETHER_HDR_LEN;
		return ACL_PLAIN4;
	}
	k->proto = ip[9];
	memcpy(&k->src, ip + offsetof(struct rte_ipv4_hdr, src_addr), 2 * sizeof(uint32_t));
	memcpy(&k->sport, l4, 2 * sizeof(uint16_t));
	p->pos = -1;
	p->tcpf = ip[9] == IPPROTO_TCP ? l4[13] : 0;
	*kd = acl_kd4(k);
	p->flags = PK_SESS;
	return ACL_PLAIN4;
not4:
	/* IPv6 without extension headers, stateless: in place as well. The
	 * upper-layer protocol is the header's own Next Header (rx's l4_proto
	 * when it walked no extension header). */
	if (stateful || (w & ACL_META_MASK) != (ACL_META_FAST6 ^ ACL_META_FAST))
		goto slow;
	ip = d + (w & 0xff);
	l4 = ip + sizeof(struct rte_ipv6_hdr);
	l3len = RTE_MIN(ACL_IP6 + (int32_t)rte_be_to_cpu_16(
				((const struct rte_ipv6_hdr *)ip)->payload_len),
			(int32_t)rte_pktmbuf_data_len(m) - (int32_t)(w & 0xff));
	if (unlikely(ip[6] != md->l4_proto || l3len < acl6_l3l4_need[ip[6]] ||
		     (ip[6] == IPPROTO_TCP &&
		      ((l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > l3len - ACL_IP6))))
		goto slow;
	*kd = ip - RTE_ETHER_HDR_LEN;
	return ACL_PLAIN6;
slow:
	return acl_extract_slow(m, off, pv, i, nonfirst_cat);
}

/* The metadata word of an untagged frame of the x4 group: acl_extract_fast's
 * values with l2_len 14 too (one frame layout: every header at a constant offset). */
#define ACL_X4_MASK (ACL_META_MASK | 0xffu)
#define ACL_X4_FAST (ACL_META_FAST | RTE_ETHER_HDR_LEN)
#define ACL_X4_FAST6 (ACL_META_FAST6 | RTE_ETHER_HDR_LEN)

static __rte_always_inline uint32_t
acl_ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Four 32-bit words, lane k from @p p[k] + @p at. */
#define ACL_LANES(p, at)									\
	_mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(					\
		_mm_cvtsi32_si128((int)acl_ld32((p)[0] + (at))),				\
		(int)acl_ld32((p)[1] + (at)), 1), (int)acl_ld32((p)[2] + (at)), 2),		\
		(int)acl_ld32((p)[3] + (at)), 3)

/*
 * The x4 group of a stateless burst: four untagged frames, all IPv4 without
 * options or all IPv6 without extension headers (@p v6), none a non-first
 * fragment, each with a complete TCP, UDP or SCTP header. Tested as a whole
 * in SSE lanes (IP length against the frame, the port-header need of the
 * protocol), the TCP data offsets packet by packet only when the group has
 * TCP. Returns true with the four kdata[] entries (@p kd) pointing at the
 * frames (@p d), as acl_extract_fast would set them; false when any of the
 * four is not such a packet (nothing written: the caller takes them one by
 * one).
 */
static __rte_always_inline bool
acl_x4_group(const uint8_t *const *d, struct rte_mbuf **pp, int off, const uint8_t **kd,
	     const bool v6)
{
	/* Each lane's first two bytes in host order: the IPv4 total length, the
	 * IPv6 payload length (read from header bytes 2 and 4 on). */
	const __m128i len_be = _mm_set_epi8(-1, -1, 12, 13, -1, -1, 8, 9, -1, -1, 4, 5, -1, -1, 0, 1);
	const int32_t hl = v6 ? ACL_IP6 : ACL_IP4;
	const int32_t *need_tbl = v6 ? acl6_x4_need : acl_x4_need;
	const unsigned int at_len = RTE_ETHER_HDR_LEN + (v6 ? 4 : 2);
	const unsigned int at_proto = RTE_ETHER_HDR_LEN + (v6 ? 6 : 9);
	__m128i lw, dl, need, raw;
	int32_t l3[4], nd;
	uint32_t k;

	raw = ACL_LANES(d, at_len);
	lw = _mm_shuffle_epi8(raw, len_be);
	if (v6) {
		/* rx's upper layer must be the header's own Next Header (byte 2
		 * of each lane read): l4_proto words gathered, one xor and test.
		 * The offset hidden from GCC, which would make the addresses
		 * before the group's first test, for every group. */
		const __m128i nh_at = _mm_set_epi8(-1, -1, -1, 14, -1, -1, -1, 10,
						   -1, -1, -1, 6, -1, -1, -1, 2);
		int at_l4p = off + (int)offsetof(struct pf_meta, l4_proto);
		const uint8_t *l4p[4] = {
			(const uint8_t *)pp[0], (const uint8_t *)pp[1],
			(const uint8_t *)pp[2], (const uint8_t *)pp[3],
		};

		__asm__("" : "+r"(at_l4p));
		if (unlikely(!_mm_testz_si128(_mm_xor_si128(_mm_shuffle_epi8(raw, nh_at),
							    ACL_LANES(l4p, at_l4p)),
					      _mm_set1_epi32(0xff))))
			return false;
		lw = _mm_add_epi32(lw, _mm_set1_epi32(ACL_IP6));
	}
	/* 16-bit inserts from memory into zero lanes: no separate loads. */
	dl = _mm_insert_epi16(_mm_insert_epi16(_mm_insert_epi16(_mm_insert_epi16(
		_mm_setzero_si128(), pp[0]->data_len, 0), pp[1]->data_len, 2),
		pp[2]->data_len, 4), pp[3]->data_len, 6);
	lw = _mm_min_epi32(lw, _mm_sub_epi32(dl, _mm_set1_epi32(RTE_ETHER_HDR_LEN)));
	need = _mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(
		_mm_cvtsi32_si128(need_tbl[d[0][at_proto]]), need_tbl[d[1][at_proto]], 1),
		need_tbl[d[2][at_proto]], 2), need_tbl[d[3][at_proto]], 3);
	need = _mm_cmpgt_epi32(need, lw);
	if (unlikely(!_mm_testz_si128(need, need))) {
		/* Short of its need, or TCP: lane by lane, the need looked up anew
		 * (the compare kept the lengths, not the needs; hidden from GCC,
		 * which would keep the four in registers for this branch). */
		const int32_t *nt = need_tbl;

		__asm__("" : "+r"(nt));
		_mm_storeu_si128((__m128i *)l3, lw);
		for (k = 0; k < 4; k++) {
			const uint8_t *dk = d[k], *l4;

			__asm__("" : "+r"(dk));
			l4 = dk + RTE_ETHER_HDR_LEN + hl;
			nd = nt[dk[at_proto]];
			if (nd <= l3[k])
				continue;
			if (nd == ACL_NO_PORTS || nd < ACL_X4_TCP || nd - ACL_X4_TCP > l3[k] ||
			    (l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > l3[k] - hl)
				return false;
		}
	}
	for (k = 0; k < 4; k++)
		kd[k] = d[k];
	return true;
}

/*
 * Classify @p n keys against every context of @p set: @p res gets
 * n * set->n_cat results, the highest priority over the contexts.
 */
static __rte_always_inline void
acl_classify_set(const struct acl_tbl *t, const struct acl_set *set, const uint8_t **data,
		 uint32_t *res, uint32_t n, uint32_t *tmp)
{
	uint32_t c, j, nr = n * set->n_cat;

	if (unlikely(n == 0 || set->n_ctx == 0)) {
		memset(res, 0, sizeof(res[0]) * nr);
		return;
	}
	rte_acl_classify(set->ctx[0], data, res, n, set->n_cat);
	for (c = 1; c < set->n_ctx; c++) {
		rte_acl_classify(set->ctx[c], data, tmp, n, set->n_cat);
		for (j = 0; j < nr; j++)
			if (tmp[j] != 0 && (res[j] == 0 || t->prio[tmp[j] - 1] > t->prio[res[j] - 1]))
				res[j] = tmp[j];
	}
}

/* The IPv6 packets of a burst in the IPv6 contexts, as acl_classify_mixed. */
static void
acl6_classify(struct acl_priv *pv, const struct acl_tbl *t, uint16_t n)
{
	uint16_t i, j, nm = 0, na = 0;

	for (i = 0; i < n; i++) {
		if ((pv->pk[i].flags & (PK_V6 | PK_NOTIP)) != PK_V6 || pv->pk[i].pos >= 0)
			continue;
		if (pv->pk[i].flags & PK_AUX) {
			pv->data[PF_BURST_MAX - 1 - na] = pv->kdata[i];
			pv->idx[PF_BURST_MAX - 1 - na++] = i;
		} else {
			pv->data[nm] = pv->kdata[i];
			pv->idx[nm++] = i;
		}
	}
	acl_classify_set(t, &t->main6, pv->data, pv->tmp, nm, pv->tmp2);
	for (j = 0; j < nm; j++)
		pv->res[pv->idx[j]] = pv->tmp[j];
	/* The auxiliary ones were stored from the top down: classify them in place. */
	acl_classify_set(t, &t->aux6, pv->data + PF_BURST_MAX - na, pv->tmp, na, pv->tmp2);
	for (j = 0; j < na; j++) {
		i = pv->idx[PF_BURST_MAX - na + j];
		pv->res[i] = pv->tmp[j * ACL_AUX_CATS + pv->pk[i].cat];
	}
}

/*
 * Stateless, before a mixed burst's classify: pk[].pos is not kept up to
 * date (no packet has a session), nor the flags of the plain packets
 * classified in their own header (told by their key pointer).
 */
static void
acl_flags_inplace(struct acl_priv *pv, struct rte_mbuf **pkts, uint16_t n)
{
	const int off = pf_meta_off();
	uint16_t i;

	for (i = 0; i < n; i++) {
		pv->pk[i].pos = -1;
		if (pv->kdata[i] != acl_kd4(&pv->keys[i]) && pv->kdata[i] != acl_kd6(&pv->keys6[i]))
			pv->pk[i].flags = pf_meta_at(pkts[i], off)->cls == PF_CLASS_IPV6 ?
					  PK_SESS | PK_V6 : PK_SESS;
	}
}

/*
 * A burst that is not all plain packets with ports (or a stateful one):
 * packets with ports go to the main context, the others to the auxiliary
 * one in their category; packets with a live session and non-IPv4 are not
 * classified (result 0). Stateless, acl_flags_inplace has run first.
 */
static void
acl_classify_mixed(struct acl_priv *pv, const struct acl_tbl *t, uint16_t n)
{
	uint16_t i, j, nm = 0, na = 0, n6 = 0;

	for (i = 0; i < n; i++) {
		pv->res[i] = 0;
		n6 += !!(pv->pk[i].flags & PK_V6);
		if (!(pv->pk[i].flags & (PK_NOTIP | PK_AUX | PK_V6)) && pv->pk[i].pos < 0) {
			pv->data[nm] = pv->kdata[i];
			pv->idx[nm++] = i;
		}
	}
	acl_classify_set(t, &t->main, pv->data, pv->tmp, nm, pv->tmp2);
	for (j = 0; j < nm; j++)
		pv->res[pv->idx[j]] = pv->tmp[j];
	for (i = 0; i < n; i++) {
		if ((pv->pk[i].flags & (PK_AUX | PK_V6)) == PK_AUX && pv->pk[i].pos < 0) {
			pv->data[na] = pv->kdata[i];
			pv->idx[na++] = i;
		}
	}
	acl_classify_set(t, &t->aux, pv->data, pv->tmp, na, pv->tmp2);
	for (j = 0; j < na; j++)
		pv->res[pv->idx[j]] = pv->tmp[j * ACL_AUX_CATS + pv->pk[pv->idx[j]].cat];
	if (n6 != 0)
		acl6_classify(pv, t, n);
}

/*
 * Verdicts in packet order, so a session opened by one packet already
 * admits the reply later in the same burst. Returns the packets on "out".
 */
static __rte_always_inline uint16_t
acl_verdicts_general(struct acl_priv *pv, const struct acl_tbl *t, uint64_t *ctrs, uint16_t n,
		     uint16_t *edge, uint64_t now, const bool stateful)
{
	const struct acl_verdict *v;
	struct acl_pk *p;
	bool opened = false;
	uint16_t i, nout = 0;
	int32_t pos;
	uint32_t r;

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
		if (stateful && pos < 0 && opened && (p->flags & PK_SESS))
			pos = acl_sess_find(pv, i, now);
		if (stateful && pos >= 0) {
			acl_sess_touch(t, &pv->sess[pos], pv->skeys[i].proto, p, now);
			ctrs[ACL_CTR_SESSION_PERMIT]++;
			nout++;
			continue;
		}
		r = pv->res[i];
		v = &t->verdict[r];
		t->hits[r]++;
		ctrs[v->ctr]++;
		if (v->edge == ACL_EDGE_DROP) {
			PF_DROP(edge, i, ctrs, ACL_CTR_DENY);
			continue;
		}
		if (stateful && v->reflect && (p->flags & PK_SESS)) {
			if (unlikely(acl_sess_open(pv, t, i, now, ctrs) < 0)) {
				PF_DROP(edge, i, ctrs, ACL_CTR_SESSION_FULL);
				continue;
			}
			opened = true;
		}
		nout++;
	}
	return nout;
}

/*
 * Stateless verdicts of a burst classified in one main context: one table
 * load per packet, or one for the burst when every packet matched the same
 * rule. A drop verdict counts deny_rule or default_deny: their
 * growth is the burst's drops (acl_deny), no per-packet sum needed.
 * Returns process_burst's answer (the burst's edge, or PF_EDGE_MIXED).
 */
static __rte_always_inline uint16_t
acl_verdicts_plain(struct acl_priv *pv, const struct acl_tbl *t, uint64_t *ctrs, uint16_t n,
		   uint16_t *edge)
{
	const struct acl_verdict *v;
	uint64_t denied;
	uint32_t r, r0, diff = 0;
	uint16_t e0;
	unsigned int i;

	if (unlikely(n == 0))
		return PF_EDGE_MIXED;
	/* One rule for the whole burst (one flow, a catch-all rule): count it
	 * once. One vectorised pass ORs the differences from the first result
	 * and writes the first packet's edge everywhere; a burst of several
	 * rules then takes the per-packet loop, which rewrites the edges. */
	r0 = pv->res[0];
	e0 = t->verdict[r0].edge;
	for (i = 0; i < n; i++) {
		diff |= pv->res[i] ^ r0;
		edge[i] = e0;
	}
	if (likely(diff == 0)) {
		/* The burst takes the rule's edge; denied, every packet is a drop. */
		v = &t->verdict[r0];
		t->hits[r0] += n;
		ctrs[v->ctr] += n;
		if (e0 == ACL_EDGE_DROP)
			ctrs[ACL_CTR_DENY] += n;
		return e0;
	}
	denied = ctrs[ACL_CTR_DENY_RULE] + ctrs[ACL_CTR_DEFAULT_DENY];
	for (i = 0; i < n; i++) {
		r = pv->res[i];
		v = &t->verdict[r];
		t->hits[r]++;
		ctrs[v->ctr]++;
		edge[i] = v->edge;
	}
	denied = ctrs[ACL_CTR_DENY_RULE] + ctrs[ACL_CTR_DEFAULT_DENY] - denied;
	ctrs[ACL_CTR_DENY] += denied;
	return denied == 0 ? ACL_EDGE_OUT : denied == n ? ACL_EDGE_DROP : PF_EDGE_MIXED;
}

/*
 * The headers and the mbuf's second line (the pf_meta dynfield). Finding
 * the headers reads the first line; prefetching both lines 8 ahead as well
 * cost 4 instructions a packet for lines rx had just written.
 */
static __rte_always_inline void
acl_prefetch_pkt(struct rte_mbuf *m)
{
	rte_prefetch0(rte_pktmbuf_mtod(m, void *));
	rte_mbuf_prefetch_part2(m);
}

/*
 * Pass 1: every packet's key, four at a time, headers and metadata lines
 * prefetched 4 ahead (@p prefetch). Stateless, four plain packets of one family are one
 * x4 group (acl_x4_group: one metadata test, one length test, one branch);
 * any other four go one by one. Returns the sum of acl_extract_fast's counts.
 */
static __rte_always_inline uint32_t
acl_gather(struct acl_priv *pv, const struct acl_tbl *t, struct rte_mbuf **pkts, uint16_t n,
	   const bool stateful, const bool prefetch)
{
	const uint8_t nonfirst_cat = t->nonfirst_cat;
	const int off = pf_meta_off();
	struct rte_mbuf **pp, **pp1, **const end4 = pkts + (n & ~3u);
	const uint8_t **kd;
	uint32_t plain = 0;
	unsigned int i, k;
	int off1;

	for (i = 0; prefetch && i < n && i < 4; i++)
		acl_prefetch_pkt(pkts[i]);
	/* Through pointers: constant displacements, no index arithmetic. */
	for (pp = pkts, kd = pv->kdata; pp != end4; pp += 4, kd += 4) {
		if (prefetch && likely(pkts + n - pp >= 8)) {
			acl_prefetch_pkt(pp[4]);
			acl_prefetch_pkt(pp[5]);
			acl_prefetch_pkt(pp[6]);
			acl_prefetch_pkt(pp[7]);
		}
		if (!stateful) {
			const uint8_t *d[4] = {
				rte_pktmbuf_mtod(pp[0], const uint8_t *),
				rte_pktmbuf_mtod(pp[1], const uint8_t *),
				rte_pktmbuf_mtod(pp[2], const uint8_t *),
				rte_pktmbuf_mtod(pp[3], const uint8_t *),
			};
			const uint8_t *md[4] = {
				(const uint8_t *)pf_meta_at(pp[0], off) + ACL_META_AT,
				(const uint8_t *)pf_meta_at(pp[1], off) + ACL_META_AT,
				(const uint8_t *)pf_meta_at(pp[2], off) + ACL_META_AT,
				(const uint8_t *)pf_meta_at(pp[3], off) + ACL_META_AT,
			};
			const __m128i mask = _mm_set1_epi32(ACL_X4_MASK);
			__m128i mw = _mm_xor_si128(ACL_LANES(md, 0), _mm_set1_epi32(ACL_X4_FAST));

			/* The IPv6 test from this xor, not from a copy of the words. */
			__asm__("" : "+x"(mw));
			if (likely(_mm_testz_si128(mw, mask)) &&
			    likely(acl_x4_group(d, pp, off, kd, false)))
				continue;
			mw = _mm_xor_si128(mw, _mm_set1_epi32(ACL_X4_FAST ^ ACL_X4_FAST6));
			if (_mm_testz_si128(mw, mask) && acl_x4_group(d, pp, off, kd, true)) {
				plain += 4 * ACL_PLAIN6;
				continue;
			}
		}
		/* One by one, every packet read anew: kept from the group's test,
		 * GCC would spill its words and addresses every group. */
		pp1 = pp;
		off1 = off;
		if (!stateful)
			__asm__("" : "+r"(off1), "+r"(pp1));
		i = (unsigned int)(pp - pkts);
#pragma GCC unroll 4
		for (k = 0; k < 4; k++)
			plain += acl_extract_fast(pp1[k], off1, pv, i + k, kd + k, nonfirst_cat,
						  stateful);
	}
	for (i = n & ~3u; i < n; i++)
		plain += acl_extract_fast(pkts[i], off, pv, i, &pv->kdata[i], nonfirst_cat,
					  stateful);
	return plain;
}

static uint16_t
acl_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct acl_priv *pv = st->priv;
	uint64_t *ctrs = st->ctrs, now;
	const struct acl_tbl *t;
	uint16_t i, nout = 0;
	uint32_t plain;
	bool stateful;

	t = __atomic_load_n(&pv->tbl, __ATOMIC_ACQUIRE);
	/* Sessions matter only when a rule can open one or some are live (kept
	 * over a reload): else no packet can hit or open one, and the stateless
	 * path gives the same verdicts and counters without session keys. */
	stateful = pv->sess_h != NULL && (t->reflect || pv->sess_live != 0);

	/* Pass 1: gather the keys (headers and metadata 4 ahead, unless the
	 * burst came straight from rx: pf_burst_fresh). */
	if (stateful)
		plain = acl_gather(pv, t, pkts, n, true, true);
	else if (!pf_burst_fresh(st))
		plain = acl_gather(pv, t, pkts, n, false, true);
	else
		plain = acl_gather(pv, t, pkts, n, false, false);

	if (stateful) {
		/* Pass 2: sessions first, then the rules for the rest. */
		now = pf_now_ns();
		for (i = 0; i < n; i++)
			if ((pv->pk[i].flags & (PK_SESS | PK_V6)) == PK_SESS)
				pv->pk[i].dir = acl_skey_make(&pv->keys[i], &pv->skeys[i]);
			else if (pv->pk[i].flags & PK_SESS)
				pv->pk[i].dir = acl6_skey_make(&pv->keys6[i], &pv->skeys[i]);
		if (pv->sess_live != 0)
			acl_sess_lookup(pv, n, now, ctrs);
		acl_classify_mixed(pv, t, n);
		nout = acl_verdicts_general(pv, t, ctrs, n, edge, now, true);
		/* Pass 4: a bounded expiry sweep, so the data path never stalls. */
		if (pv->sess_live != 0)
			acl_sweep(pv, pv->sweep, now, ctrs);
	} else if (likely(plain == 0)) {
		/* Every packet has ports: one classify call, one table load each. */
		acl_classify_set(t, &t->main, pv->kdata, pv->res, n, pv->tmp2);
		return acl_verdicts_plain(pv, t, ctrs, n, edge);
	} else if (plain == n * ACL_PLAIN6) {
		/* The same for a burst of IPv6 packets with ports. */
		acl_classify_set(t, &t->main6, pv->kdata, pv->res, n, pv->tmp2);
		return acl_verdicts_plain(pv, t, ctrs, n, edge);
	} else {
		acl_flags_inplace(pv, pkts, n);
		acl_classify_mixed(pv, t, n);
		nout = acl_verdicts_general(pv, t, ctrs, n, edge, 0, false);
	}
	if (likely(nout == n && n != 0))
		return ACL_EDGE_OUT;
	return nout == 0 && n != 0 ? ACL_EDGE_DROP : PF_EDGE_MIXED;
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
	char how[160] = "pinned by 'algorithm'";
	uint32_t a;
	int k = 0;

	if (t->alg_measured) {
		k = snprintf(how, sizeof(how), "fastest measured, cycles/1000 keys:");
		for (a = ACL_ALG_SCALAR; a < ACL_ALG_MAX && k > 0 && (size_t)k < sizeof(how); a++)
			if (t->alg_cycles[a] != 0)
				k += snprintf(how + k, sizeof(how) - k, " %s %" PRIu64,
					      pf_acl_alg_names[a], t->alg_cycles[a]);
	}
	PF_LOG(INFO,
	       "acl %s: %s %u rules (IPv4 %u + %u, IPv6 %u + %u contexts) in %.1f ms, %.2f MiB, classify %s (%s), default %s, sessions %u",
	       st->conf->name, what, t->n_rules, t->main.n_ctx, t->aux.n_ctx, t->main6.n_ctx,
	       t->aux6.n_ctx,
	       (double)t->build_ns / 1e6, (double)t->mem_bytes / (1024.0 * 1024.0),
	       alg_name(t->alg), how, pf_acl_action_names[t->default_action],
	       ((const struct acl_priv *)st->priv)->sess_max);
}

static int
acl_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = st->conf->cfg;
	uint16_t i;

	/* acl_extract_fast reads these four bytes as one word. */
	RTE_BUILD_BUG_ON(offsetof(struct pf_meta, l3_len) != offsetof(struct pf_meta, l2_len) + 1 ||
			 offsetof(struct pf_meta, cls) != offsetof(struct pf_meta, l2_len) + 2 ||
			 offsetof(struct pf_meta, flags) != offsetof(struct pf_meta, l2_len) + 3 ||
			 RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN);
	/* acl_extract_fast XORs ACL_META_FAST in and keeps the low byte (l2_len). */
	RTE_BUILD_BUG_ON((ACL_META_FAST & 0xffu) != 0 || (ACL_META_FAST & ~ACL_META_MASK) != 0 ||
			 (ACL_META_FAST6 & ~ACL_META_MASK) != 0);
	/* Keys classified in place: laid out as the headers they point into
	 * (IPv4 from the TTL on, IPv6 from the payload length on). */
#define ACL_AT4(f) (offsetof(struct acl_key, f) + offsetof(struct rte_ipv4_hdr, time_to_live))
#define ACL_AT6(f) (offsetof(struct acl6_key, f) + offsetof(struct rte_ipv6_hdr, payload_len))
	RTE_BUILD_BUG_ON(ACL_AT4(proto) != offsetof(struct rte_ipv4_hdr, next_proto_id) ||
			 ACL_AT4(src) != offsetof(struct rte_ipv4_hdr, src_addr) ||
			 ACL_AT4(sport) != sizeof(struct rte_ipv4_hdr));
	RTE_BUILD_BUG_ON(ACL_AT6(proto) != offsetof(struct rte_ipv6_hdr, proto) ||
			 ACL_AT6(src) != offsetof(struct rte_ipv6_hdr, src_addr) ||
			 ACL_AT6(dst) != offsetof(struct rte_ipv6_hdr, dst_addr) ||
			 ACL_AT6(sport) != sizeof(struct rte_ipv6_hdr));
#undef ACL_AT4
#undef ACL_AT6
	/* The copies' classifier pointers stay inside acl_priv. */
	RTE_BUILD_BUG_ON(offsetof(struct acl_priv, keys) < ACL_KEY4 ||
			 offsetof(struct acl_priv, keys6) < ACL_KEY6);
	for (i = 0; i < PF_BURST_MAX; i++)
		pv->kdata[i] = acl_kd4(&pv->keys[i]);
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
acl_swap_build(struct pf_stage *st, const struct pf_stage_conf *new_sc, void **prep,
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
acl_swap_free(void *t)
{
	acl_tbl_free(t);
}

static void
acl_swap_published(struct pf_stage *st, const struct pf_stage_conf *new_sc, const void *t)
{
	struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = new_sc->cfg;

	pv->sweep = cfg->sweep;
	pv->reloads++;
	acl_log_tbl(st, t, "reloaded");
}

static const struct pf_stage_swap acl_swap = {
	.table_off = offsetof(struct acl_priv, tbl),
	.build = acl_swap_build,
	.free = acl_swap_free,
	.published = acl_swap_published,
};

static void
acl_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct acl_priv *pv = st->priv;
	static const struct acl_tbl none;
	const struct acl_tbl *t = pv->tbl != NULL ? pv->tbl : &none;
	const struct {
		const char *name;
		uint64_t v;
	} g[] = {
		{ "rules", t->n_rules },
		{ "acl_contexts", t->main.n_ctx },
		{ "acl_aux_contexts", t->aux.n_ctx },
		{ "acl6_contexts", t->main6.n_ctx },
		{ "acl6_aux_contexts", t->aux6.n_ctx },
		{ "classify_alg", t->alg },
		{ "classify_measured", t->alg_measured },
		{ "build_us", t->build_ns / 1000 },
		{ "acl_mem_bytes", t->mem_bytes },
		{ "sessions", pv->sess_live },
		{ "sessions_max", pv->sess_max },
		{ "session_mem_bytes", pv->sess_mem },
		{ "reloads", pv->reloads },
	};
	char name[24];
	uint32_t i;

	for (i = 0; i < RTE_DIM(g); i++)
		pf_sink_u64(out, g[i].name, g[i].v);
	/* Per-rule hits, 1-based rule numbers; only rules that matched something. */
	for (i = 1; i <= t->n_rules; i++)
		if (t->hits[i] != 0) {
			snprintf(name, sizeof(name), "rule.%u", i);
			pf_sink_u64(out, name, t->hits[i]);
		}
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

/* ---- table contents for the stats socket -------------------------------- */

/*
 * /pipefwd/table,STAGE,rules|sessions, on the telemetry thread. A reload
 * (the only writer of the rules and of pv->tbl) holds the stats lock, so
 * the rule list and the table stay put; hit counters and sessions have the
 * lcore as their single writer and are read word by word.
 */
static const struct pf_show_col acl_rule_cols[] = {
	{ "rule", PF_SHOW_U64 }, { "text", PF_SHOW_STR }, { "hits", PF_SHOW_U64 },
};

static int
acl_show_rules(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct acl_cfg *cfg = st->conf->cfg;
	const struct acl_priv *pv = st->priv;
	union pf_show_val v[RTE_DIM(acl_rule_cols)];
	struct pf_show *sh;
	char text[256];
	uint32_t r;

	sh = pf_show_start(d, req, acl_rule_cols, RTE_DIM(acl_rule_cols));
	if (sh == NULL)
		return -ENOMEM;
	pf_sink_str(d, "default", pf_acl_action_names[cfg->default_action]);
	pf_sink_u64(d, "default_hits",
				  __atomic_load_n(&pv->tbl->hits[0], __ATOMIC_RELAXED));
	for (r = 1; r <= cfg->n_rules && r <= pv->tbl->n_rules; r++) {
		pf_acl_rule_format(&cfg->rules[r - 1], text, sizeof(text));
		v[0].u = r;
		v[1].s = text;
		v[2].u = __atomic_load_n(&pv->tbl->hits[r], __ATOMIC_RELAXED);
		pf_show_row(sh, v);
	}
	pf_show_end(sh);
	return 0;
}

/*
 * Packet trace (app/console/trace.c): the packet was the whole burst just processed,
 * so the burst scratch holds its verdict: a session, or the rule it matched.
 */
static void
acl_trace(const struct pf_stage *st, const struct rte_mbuf *m, char *buf, size_t len)
{
	const struct acl_cfg *cfg = st->conf->cfg;
	const struct acl_priv *pv = st->priv;
	char text[80];
	uint32_t r = pv->res[0];
	/* A packet classified in its own header has no flags or session slot
	 * stored (stateless fast path): it is IP and has no session. Every
	 * other packet's flags and slot are this burst's (-1 when stateless). */
	bool inplace = pv->kdata[0] != acl_kd4(&pv->keys[0]) &&
		       pv->kdata[0] != acl_kd6(&pv->keys6[0]);

	if (!inplace && (pv->pk[0].flags & PK_NOTIP))
		snprintf(buf, len, "not IPv4: not classified");
	else if (pv->sess_h != NULL && !inplace && r == 0 && pv->pk[0].pos >= 0)
		snprintf(buf, len, "session hit: no rule lookup");
	else if (r == 0)
		snprintf(buf, len, "no rule matched: default %s",
			 pf_acl_action_names[cfg->default_action]);
	else if (r <= cfg->n_rules) {
		pf_acl_rule_format(&cfg->rules[r - 1], text, sizeof(text));
		snprintf(buf, len, "rule %u: %s", r, text);
	}
}

static const struct pf_show_col acl_sess_cols[] = {
	{ "proto", PF_SHOW_U64 }, { "initiator", PF_SHOW_STR }, { "responder", PF_SHOW_STR },
	{ "state", PF_SHOW_STR }, { "expires_ms", PF_SHOW_U64 },
};

/* "a.b.c.d:port" or "[x:x::x]:port". */
static void
acl_fmt_end(char *buf, size_t len, const uint32_t *be_addr, uint16_t be_port, bool v6)
{
	char a6[INET6_ADDRSTRLEN];
	uint32_t a = rte_be_to_cpu_32(be_addr[0]);

	if (v6) {
		inet_ntop(AF_INET6, be_addr, a6, sizeof(a6));
		snprintf(buf, len, "[%s]:%u", a6, rte_be_to_cpu_16(be_port));
		return;
	}
	snprintf(buf, len, "%u.%u.%u.%u:%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff,
		 rte_be_to_cpu_16(be_port));
}

/* Live sessions in slot order; a slot that changed while read is skipped. */
static int
acl_show_sessions(const struct pf_stage *st, const struct pf_show_req *req,
		  struct pf_sink *d)
{
	const struct acl_priv *pv = st->priv;
	union pf_show_val v[RTE_DIM(acl_sess_cols)];
	uint64_t now = pf_now_ns(), exp;
	char ini[INET6_ADDRSTRLEN + 8], resp[INET6_ADDRSTRLEN + 8];
	struct acl_sess s;
	struct pf_show *sh;
	uint32_t i;

	if (pv->sess_h == NULL)
		return -ENOENT;
	sh = pf_show_start(d, req, acl_sess_cols, RTE_DIM(acl_sess_cols));
	if (sh == NULL)
		return -ENOMEM;
	for (i = 0; i < pv->sess_slots; i++) {
		exp = __atomic_load_n(&pv->sess[i].expires_ns, __ATOMIC_ACQUIRE);
		if (exp <= now)
			continue;
		memcpy(&s, &pv->sess[i], sizeof(s));
		rte_atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pv->sess[i].expires_ns, __ATOMIC_RELAXED) != exp ||
		    s.expires_ns != exp)
			continue;
		if (s.init_dir == 0) {
			acl_fmt_end(ini, sizeof(ini), s.key.a0, s.key.p0, s.key.v6);
			acl_fmt_end(resp, sizeof(resp), s.key.a1, s.key.p1, s.key.v6);
		} else {
			acl_fmt_end(ini, sizeof(ini), s.key.a1, s.key.p1, s.key.v6);
			acl_fmt_end(resp, sizeof(resp), s.key.a0, s.key.p0, s.key.v6);
		}
		v[0].u = s.key.proto;
		v[1].s = ini;
		v[2].s = resp;
		v[3].s = s.closing ? "closing" :
			 s.key.proto != IPPROTO_TCP ? "open" :
			 (s.tcp_seen[0] & s.tcp_seen[1] & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
			 (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) ? "established" : "opening";
		v[4].u = (exp - now) / 1000000;
		pf_show_row(sh, v);
	}
	pf_show_end(sh);
	return 0;
}

/* ---- acl-match: one flow through the running tables ---------------------- */

/*
 * The live session of @p key, read slot by slot as acl_show_sessions does
 * (an rte_hash lookup is not safe beside the lcore's adds and deletes): a
 * slot counts when its timeout is in the future before and after its key
 * was copied. Returns the slot, or -1. O(session slots): a console lookup.
 */
static int32_t
acl_match_session(const struct acl_priv *pv, const struct acl_skey *key, uint64_t now,
		  struct acl_sess *out)
{
	uint64_t exp;
	uint32_t i;

	for (i = 0; i < pv->sess_slots; i++) {
		exp = __atomic_load_n(&pv->sess[i].expires_ns, __ATOMIC_ACQUIRE);
		if (exp <= now)
			continue;
		memcpy(out, &pv->sess[i], sizeof(*out));
		rte_atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pv->sess[i].expires_ns, __ATOMIC_RELAXED) <= now)
			continue;
		if (memcmp(&out->key, key, sizeof(*key)) == 0)
			return (int32_t)i;
	}
	return -1;
}

static void
acl_match_session_report(const struct acl_sess *s, uint64_t now, struct pf_sink *d)
{
	char a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8], buf[2 * INET6_ADDRSTRLEN + 24];

	acl_fmt_end(a, sizeof(a), s->init_dir == 0 ? s->key.a0 : s->key.a1,
		    s->init_dir == 0 ? s->key.p0 : s->key.p1, s->key.v6);
	acl_fmt_end(b, sizeof(b), s->init_dir == 0 ? s->key.a1 : s->key.a0,
		    s->init_dir == 0 ? s->key.p1 : s->key.p0, s->key.v6);
	snprintf(buf, sizeof(buf), "%s > %s", a, b);
	pf_sink_str(d, "session", buf);
	pf_sink_str(d, "session_state", s->closing ? "closing" :
		    s->key.proto != IPPROTO_TCP ? "open" :
		    (s->tcp_seen[0] & s->tcp_seen[1] & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
		    (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) ? "established" : "opening");
	pf_sink_u64(d, "session_expires_ms", s->expires_ns > now ?
		    (s->expires_ns - now) / 1000000 : 0);
}

/* Rule @p r (1-based) of the running rules: number, action, text, where it was written. */
static void
acl_match_rule_report(const struct pf_stage *st, const struct acl_tbl *t, uint32_t r,
		      struct pf_sink *d)
{
	const struct acl_cfg *cfg = st->conf->cfg;
	const struct acl_rule *ru = &cfg->rules[r - 1];
	char text[256];

	pf_acl_rule_format(ru, text, sizeof(text));
	pf_sink_u64(d, "rule", r);
	pf_sink_str(d, "text", text);
	pf_sink_u64(d, "priority", ru->priority);
	pf_sink_u64(d, "hits", __atomic_load_n(&t->hits[r], __ATOMIC_RELAXED));
	if (ru->line == 0) {
		pf_sink_str(d, "file", "");
		pf_sink_str(d, "where", "added live (not in a file until changes --save)");
		return;
	}
	pf_sink_str(d, "file", cfg->rules_file[0] != '\0' ? cfg->rules_file : st->conf->node->file);
	pf_sink_u64(d, "line", ru->line);
}

/*
 * /pipefwd/acl_match (the "match" table): the flow req->tuple decided as
 * the data path decides a packet of it: a live session first (a stateful
 * stage), else rte_acl_classify on the running contexts (the main one when
 * the protocol has ports, else the auxiliary one in the packet's category).
 * Reads only. The telemetry thread holds the console lock, which a reload
 * and a live change take, so the rules and the table stay put; a built
 * rte_acl context is only read by a classify.
 */
static int
acl_show_match(const struct pf_stage *st, const struct pf_show_req *req, struct pf_sink *d)
{
	const struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = st->conf->cfg;
	const struct pf_tuple *tu = req->tuple;
	const struct acl_tbl *t = __atomic_load_n(&pv->tbl, __ATOMIC_ACQUIRE);
	struct {
		uint8_t lead[ACL_KEY4 + ACL_KEY6];      /* acl_kd4/acl_kd6 point in here */
		struct acl_key k4;
		struct acl6_key k6;
	} kb;
	uint32_t res[ACL_AUX_CATS], tmp[ACL_AUX_CATS], r;
	const struct acl_verdict *v;
	const struct acl_set *set;
	const uint8_t *data[1];
	bool v6 = tu->family == 6, ports = !tu->nonfirst && acl_l4_min[tu->proto] != 0;
	uint64_t now = pf_now_ns();
	struct acl_skey skey;
	struct acl_sess sess;
	uint8_t cat;

	if (tu->family != 4 && tu->family != 6)
		return -EINVAL;
	memset(&kb, 0, sizeof(kb));
	cat = tu->nonfirst ? t->nonfirst_cat : ACL_CAT_STRICT;
	if (v6) {
		kb.k6.proto = tu->proto;
		memcpy(kb.k6.src, tu->src, 16);
		memcpy(kb.k6.dst, tu->dst, 16);
		kb.k6.sport = ports ? rte_cpu_to_be_16(tu->sport) : 0;
		kb.k6.dport = ports ? rte_cpu_to_be_16(tu->dport) : 0;
		data[0] = acl_kd6(&kb.k6);
		set = ports ? &t->main6 : &t->aux6;
	} else {
		kb.k4.proto = tu->proto;
		memcpy(&kb.k4.src, tu->src, 4);
		memcpy(&kb.k4.dst, tu->dst, 4);
		kb.k4.sport = ports ? rte_cpu_to_be_16(tu->sport) : 0;
		kb.k4.dport = ports ? rte_cpu_to_be_16(tu->dport) : 0;
		data[0] = acl_kd4(&kb.k4);
		set = ports ? &t->main : &t->aux;
	}
	pf_sink_str(d, "lookup", ports ? "with ports" : tu->nonfirst ?
		    (cat == ACL_CAT_PROTO ? "non-first fragment: port rules match on protocol" :
		     "non-first fragment: ports unknown, port rules never match") :
		    "protocol without ports: port rules never match");
	/* Sessions: every packet with a 5-tuple (or a portless protocol's address pair). */
	if (pv->sess_h != NULL && !tu->nonfirst) {
		memset(&skey, 0, sizeof(skey));
		if (v6)
			acl6_skey_make(&kb.k6, &skey);
		else
			acl_skey_make(&kb.k4, &skey);
		if (acl_match_session(pv, &skey, now, &sess) >= 0) {
			pf_sink_str(d, "match", "session");
			acl_match_session_report(&sess, now, d);
			pf_sink_str(d, "action", "permit");
			pf_sink_str(d, "edge", acl_edges[ACL_EDGE_OUT]);
			pf_sink_str(d, "counter", acl_ctrs[ACL_CTR_SESSION_PERMIT].name);
			return 0;
		}
	}
	acl_classify_set(t, set, data, res, 1, tmp);
	r = res[set->n_cat == 1 ? 0 : cat];
	if (r > cfg->n_rules || r > t->n_rules)
		return -EIO;   /* cannot be: the rules and the table are one reload's */
	v = &t->verdict[r];
	if (r == 0) {
		pf_sink_str(d, "match", "default");
		pf_sink_u64(d, "hits", __atomic_load_n(&t->hits[0], __ATOMIC_RELAXED));
	} else {
		pf_sink_str(d, "match", "rule");
		acl_match_rule_report(st, t, r, d);
	}
	pf_sink_str(d, "action", r == 0 ? pf_acl_action_names[t->default_action] :
		    pf_acl_action_names[cfg->rules[r - 1].action]);
	pf_sink_str(d, "edge", acl_edges[v->edge]);
	pf_sink_str(d, "counter", acl_ctrs[v->ctr].name);
	if (v->edge == ACL_EDGE_DROP)
		pf_sink_str(d, "drop", acl_ctrs[ACL_CTR_DENY].name);
	if (v->reflect && pv->sess_h != NULL && !tu->nonfirst)
		pf_sink_str(d, "opens", "a session: the reply is permitted by it");
	return 0;
}

static const char *const acl_show_tables[] = { "rules", "sessions", "match", NULL };
static const char *const acl_edit_tables[] = { "rules", NULL };

static int
acl_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	 struct pf_sink *d)
{
	if (strcmp(what, "rules") == 0)
		return acl_show_rules(st, req, d);
	if (strcmp(what, "sessions") == 0)
		return acl_show_sessions(st, req, d);
	if (strcmp(what, "match") == 0)
		return req->tuple != NULL ? acl_show_match(st, req, d) : -EINVAL;
	return -ENOENT;
}

const struct pf_stage_ops pf_acl_ops = {
	.type = "acl",
	.summary = "IPv4 and IPv6 5-tuple ACL on rte_acl (permit, deny, permit-reflect sessions)",
	.priv_size = sizeof(struct acl_priv),
	.n_edges = ACL_EDGE_MAX,
	.edge_names = acl_edges,
	.default_edge = ACL_EDGE_OUT,
	.n_ctrs = acl_ctr_max,
	.ctrs = acl_ctrs,
	.dp = {
		.process_burst = acl_process_burst,
		.idle = acl_idle,
	},
	.ctl = {
		.param_keys = acl_keys,
		.parse = pf_acl_parse,
		.cfg_free = pf_acl_cfg_free,
		.init = acl_init,
		.swap = &acl_swap,
		.free = acl_free,
		.edit = pf_acl_cfg_edit,
		.edit_tables = acl_edit_tables,
	},
	.obs = {
		.gauges = acl_gauges,
		.show = acl_show,
		.show_tables = acl_show_tables,
		.trace = acl_trace,
	},
};
