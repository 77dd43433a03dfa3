/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The acl stage's rule table (control thread): every rule as rte_acl sees
 * it, in main and auxiliary contexts per family (split into several when
 * rte_acl gives up on one), the classify method timed or pinned, the
 * verdict of every result; built beside the running table at start and by a
 * reload, published whole by the runtime's swap and freed after its grace
 * period (ctl.swap). The stage's free.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "acl.h"
#include "pf_log.h"

RTE_ACL_RULE_DEF(acl_rte_rule, F_NUM);

static const struct rte_acl_field_def acl_field_defs[F_NUM] = {
	{ RTE_ACL_FIELD_TYPE_BITMASK, 1, F_PROTO, 0, ACL_KEY4 + offsetof(struct acl_key, proto) },
	{ RTE_ACL_FIELD_TYPE_MASK, 4, F_SRC, 1, ACL_KEY4 + offsetof(struct acl_key, src) },
	{ RTE_ACL_FIELD_TYPE_MASK, 4, F_DST, 2, ACL_KEY4 + offsetof(struct acl_key, dst) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F_SPORT, 3, ACL_KEY4 + offsetof(struct acl_key, sport) },
	{ RTE_ACL_FIELD_TYPE_RANGE, 2, F_DPORT, 3, ACL_KEY4 + offsetof(struct acl_key, dport) },
};

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

int
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

void
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

const struct pf_stage_swap acl_swap = {
	.table_off = offsetof(struct acl_priv, tbl),
	.build = acl_swap_build,
	.free = acl_swap_free,
	.published = acl_swap_published,
};

void
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
