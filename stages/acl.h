/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the acl stage: stages/acl.c (data path, init, the ops),
 * acl_table.c (the rule table: rte_acl contexts built and swapped whole),
 * acl_sess.c (the permit-reflect session table: create, bulk lookup, open,
 * expiry sweep; keys and the per-packet touch are inline below),
 * acl_show.c (gauges, the rules, sessions and match pages, the packet
 * trace) and acl_rules.c (the rule text and the parameters, no DPDK).
 * See docs/stages/acl.md.
 */
#ifndef PF_ACL_H
#define PF_ACL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "acl_rules.h"
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

/* Shortest L4 header of the protocols that have ports; 0: no ports. */
static const uint8_t acl_l4_min[256] = {
	[IPPROTO_TCP] = sizeof(struct rte_tcp_hdr), [IPPROTO_UDP] = 8, [IPPROTO_SCTP] = 12,
};

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
static inline uint8_t
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

/* acl_table.c */
int acl_tbl_build(const struct pf_stage *st, const struct pf_stage_conf *sc, struct acl_tbl **out,
		  struct pf_errs *errs);
void acl_log_tbl(const struct pf_stage *st, const struct acl_tbl *t, const char *what);
extern const struct pf_stage_swap acl_swap;
void acl_free(struct pf_stage *st);

/* acl_sess.c */
int acl_sess_create_table(struct acl_priv *pv, const struct pf_stage *st, uint32_t entries,
			  struct pf_errs *errs);
void acl_sweep(struct acl_priv *pv, uint32_t count, uint64_t now, uint64_t *ctrs);
void acl_sess_lookup(struct acl_priv *pv, uint16_t n, uint64_t now, uint64_t *ctrs, bool dry);
int acl_sess_open(struct acl_priv *pv, const struct acl_tbl *t, uint16_t i, uint64_t now,
		  uint64_t *ctrs);

/* acl_show.c */
void acl_gauges(const struct pf_stage *st, struct pf_sink *out);
int acl_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	     struct pf_sink *d);
void acl_trace(const struct pf_stage *st, const struct rte_mbuf *m, char *buf, size_t len);
extern const char *const acl_show_tables[];

#endif /* PF_ACL_H */
