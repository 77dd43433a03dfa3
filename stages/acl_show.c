/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the acl stage shows (obs ops, any thread but its lcore's): gauges
 * (table shape, classify method, build time and memory, sessions, per-rule
 * hits), the rules, sessions and match pages of /pipefwd/table and
 * /pipefwd/acl_match, and the packet trace's verdict.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>

#include "acl.h"

void
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
void
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
		snprintf(buf, len, "rule %u%s: %s", r,
			 cfg->rules[r - 1].action != ACL_PERMIT_REFLECT || pv->sess_h == NULL ? "" :
			 st->dry_run ? " (would open a session)" : " (opens a session)", text);
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

const char *const acl_show_tables[] = { "rules", "sessions", "match", NULL };


int
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
