/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acl rules: the rule text format (files and inline strings) and the acl
 * stage's parameter parsing. No DPDK here: this runs for --check, at start
 * and on reload, and a bad file changes nothing that runs.
 *
 * A rule line is an action followed by optional "key value" pairs:
 *   permit-reflect src 10.0.0.0/8 dst any proto tcp sport 1024-65535 dport 80 priority 5
 *   deny src 2001:db8::/32 proto udp dport 53
 * Addresses make a rule IPv4 or IPv6; a rule without any matches both.
 * Missing fields match anything. '#' starts a comment.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_rules.h"
#include "pf_conf.h"
#include "pf_stage.h"

#define ACL_LINE_MAX 1024
#define ACL_TOKENS_MAX 16

const char *const pf_acl_action_names[] = { "deny", "permit", "permit-reflect", NULL };
const char *const pf_acl_alg_names[] = { "default", "scalar", "sse", "avx2", "avx512x16",
					  "avx512x32", NULL };
static const char *const pf_acl_timeout_names[] = { "tcp_established", "tcp_transient", "udp", "other",
					      NULL };

/* VPP's defaults (seconds), except "other", which VPP folds into udp. */
static const uint32_t timeout_default[ACL_TO_MAX] = { 86400, 120, 600, 60 };

static const struct {
	const char *name;
	uint8_t proto;
} proto_names[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "gre", 47 }, { "esp", 50 }, { "sctp", 132 },
	{ "icmpv6", 58 },
};

static bool
parse_num(const char *s, uint64_t max, uint64_t *out)
{
	return pf_parse_u64(s, out) && *out <= max;
}

/* IPv6 "addr[/len]" with no host bits set; @p fam becomes ACL_FAM_IPV6. */
static int
parse_prefix6(const char *s, char *buf, const char *slash, uint8_t *addr, uint8_t *len,
	      char *msg, size_t msg_len)
{
	char shown[INET6_ADDRSTRLEN];
	uint8_t a[16], m[16];
	uint64_t l = 128;
	unsigned int i, bad = 0;

	if (slash != NULL && !parse_num(slash + 1, 128, &l)) {
		snprintf(msg, msg_len, "'%s': IPv6 prefix length must be 0 to 128", s);
		return -1;
	}
	if (inet_pton(AF_INET6, buf, a) != 1) {
		snprintf(msg, msg_len, "'%s' is not an IPv6 address or prefix (x:x::x[/len])", s);
		return -1;
	}
	for (i = 0; i < 16; i++) {
		m[i] = l >= 8 * (i + 1) ? 0xff : l <= 8 * i ? 0 : (uint8_t)(0xff << (8 * (i + 1) - l));
		bad |= a[i] & ~m[i];
		a[i] &= m[i];
	}
	if (bad != 0) {
		inet_ntop(AF_INET6, a, shown, sizeof(shown));
		snprintf(msg, msg_len, "'%s' has host bits set (did you mean %s/%u?)", s, shown,
			 (unsigned int)l);
		return -1;
	}
	memcpy(addr, a, 16);
	*len = (uint8_t)l;
	return 0;
}

/*
 * "any", "a.b.c.d" (a /32), "a.b.c.d/len", "x:x::x" (a /128) or "x:x::x/len",
 * with no host bits set. @p fam gets the address family (ACL_FAM_ANY for "any").
 */
static int
parse_prefix(const char *s, uint32_t *addr, uint8_t *addr6, uint8_t *len, uint8_t *fam,
	     char *msg, size_t msg_len)
{
	char buf[64], *slash;
	uint64_t l = 32;
	uint32_t a, mask;

	if (strcmp(s, "any") == 0) {
		*addr = 0;
		*len = 0;
		*fam = ACL_FAM_ANY;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	if (strchr(buf, ':') != NULL) {
		*fam = ACL_FAM_IPV6;
		return parse_prefix6(s, buf, slash, addr6, len, msg, msg_len);
	}
	*fam = ACL_FAM_IPV4;
	if (slash != NULL && !parse_num(slash + 1, 32, &l)) {
		snprintf(msg, msg_len, "'%s': prefix length must be 0 to 32", s);
		return -1;
	}
	if (!pf_parse_ipv4(buf, &a)) {
		snprintf(msg, msg_len,
			 "'%s' is not an IPv4 or IPv6 address or prefix (a.b.c.d[/len], x:x::x[/len] or any)",
			 s);
		return -1;
	}
	mask = l == 0 ? 0 : ~0u << (32 - l);
	if ((a & ~mask) != 0) {
		snprintf(msg, msg_len, "'%s' has host bits set (did you mean %u.%u.%u.%u/%u?)", s,
			 (a & mask) >> 24, ((a & mask) >> 16) & 0xff, ((a & mask) >> 8) & 0xff,
			 (a & mask) & 0xff, (unsigned int)l);
		return -1;
	}
	*addr = a;
	*len = (uint8_t)l;
	return 0;
}

/* "any", "N" or "N-M". */
static int
parse_ports(const char *s, uint16_t *lo, uint16_t *hi, char *msg, size_t msg_len)
{
	char buf[32], *dash;
	uint64_t a, b;

	if (strcmp(s, "any") == 0) {
		*lo = 0;
		*hi = 65535;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	dash = strchr(buf, '-');
	if (dash != NULL)
		*dash = '\0';
	if (!parse_num(buf, 65535, &a) || (dash != NULL && !parse_num(dash + 1, 65535, &b))) {
		snprintf(msg, msg_len, "'%s' is not a port or port range (N, N-M or any; 0-65535)",
			 s);
		return -1;
	}
	if (dash == NULL)
		b = a;
	if (a > b) {
		snprintf(msg, msg_len, "port range '%s' is empty (first > last)", s);
		return -1;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

static int
parse_proto(const char *s, struct acl_rule *r, char *msg, size_t msg_len)
{
	uint64_t v;
	size_t i;

	if (strcmp(s, "any") == 0) {
		r->proto_any = true;
		r->proto = 0;
		return 0;
	}
	for (i = 0; i < RTE_DIM(proto_names); i++)
		if (strcmp(s, proto_names[i].name) == 0) {
			r->proto_any = false;
			r->proto = proto_names[i].proto;
			return 0;
		}
	if (!parse_num(s, 255, &v)) {
		snprintf(msg, msg_len,
			 "'%s' is not a protocol (any, tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255)", s);
		return -1;
	}
	r->proto_any = false;
	r->proto = (uint8_t)v;
	return 0;
}

static bool
proto_has_ports(const struct acl_rule *r)
{
	return r->proto_any || r->proto == 6 || r->proto == 17 || r->proto == 132;
}

int
pf_acl_rule_parse(const char *line, struct acl_rule *r, char *msg, size_t msg_len, int *col)
{
	static const char *const keys[] = { "src", "dst", "proto", "sport", "dport", "priority" };
	char buf[ACL_LINE_MAX], *tok[ACL_TOKENS_MAX], *p;
	int tcol[ACL_TOKENS_MAX], ntok = 0, i, k, port_col = 0, proto_col = 0;
	unsigned int seen = 0;
	uint8_t fam = ACL_FAM_ANY;
	int fam_col = 0;
	uint64_t v;
	int rc = 0;

	*col = 1;
	if (strlen(line) >= sizeof(buf)) {
		snprintf(msg, msg_len, "line longer than %d characters", ACL_LINE_MAX - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", line);
	if ((p = strchr(buf, '#')) != NULL)
		*p = '\0';
	for (p = buf; *p != '\0';) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		if (ntok == ACL_TOKENS_MAX) {
			*col = (int)(p - buf) + 1;
			snprintf(msg, msg_len, "too many words in a rule");
			return -1;
		}
		tcol[ntok] = (int)(p - buf) + 1;
		tok[ntok++] = p;
		while (*p != '\0' && !isspace((unsigned char)*p))
			p++;
		if (*p != '\0')
			*p++ = '\0';
	}
	if (ntok == 0)
		return 0;

	memset(r, 0, sizeof(*r));
	r->proto_any = true;
	r->sport_hi = r->dport_hi = 65535;
	*col = tcol[0];
	for (i = 0; pf_acl_action_names[i] != NULL; i++)
		if (strcmp(tok[0], pf_acl_action_names[i]) == 0)
			break;
	if (pf_acl_action_names[i] == NULL) {
		snprintf(msg, msg_len, "unknown action '%s' (permit, deny or permit-reflect)",
			 tok[0]);
		return -1;
	}
	r->action = (uint8_t)i;
	for (i = 1; i < ntok; i += 2) {
		*col = tcol[i];
		for (k = 0; k < (int)RTE_DIM(keys); k++)
			if (strcmp(tok[i], keys[k]) == 0)
				break;
		if (k == (int)RTE_DIM(keys)) {
			snprintf(msg, msg_len,
				 "unknown field '%s' (src, dst, proto, sport, dport, priority)",
				 tok[i]);
			return -1;
		}
		if (seen & (1u << k)) {
			snprintf(msg, msg_len, "field '%s' given twice", tok[i]);
			return -1;
		}
		seen |= 1u << k;
		if (i + 1 >= ntok) {
			snprintf(msg, msg_len, "field '%s' needs a value", tok[i]);
			return -1;
		}
		*col = tcol[i + 1];
		switch (k) {
		case 0:
		case 1:
			rc = parse_prefix(tok[i + 1], k == 0 ? &r->src : &r->dst,
					  k == 0 ? r->src6 : r->dst6, k == 0 ? &r->src_len : &r->dst_len,
					  &fam, msg, msg_len);
			if (rc == 0 && fam != ACL_FAM_ANY) {
				/* One family per rule: its addresses say which. */
				if (r->family != ACL_FAM_ANY && r->family != fam) {
					snprintf(msg, msg_len,
						 "'%s' is IPv%c but the other address (column %d) is IPv%c: one family per rule",
						 tok[i + 1], fam == ACL_FAM_IPV6 ? '6' : '4', fam_col,
						 fam == ACL_FAM_IPV6 ? '4' : '6');
					rc = -1;
				}
				r->family = fam;
				fam_col = tcol[i + 1];
			}
			break;
		case 2:
			rc = parse_proto(tok[i + 1], r, msg, msg_len);
			proto_col = tcol[i + 1];
			break;
		case 3:
			rc = parse_ports(tok[i + 1], &r->sport_lo, &r->sport_hi, msg, msg_len);
			port_col = port_col ? port_col : tcol[i];
			break;
		case 4:
			rc = parse_ports(tok[i + 1], &r->dport_lo, &r->dport_hi, msg, msg_len);
			port_col = port_col ? port_col : tcol[i];
			break;
		default:
			if (!parse_num(tok[i + 1], ACL_PRIORITY_MAX, &v)) {
				snprintf(msg, msg_len, "priority '%s' is not a number 0 to %u",
					 tok[i + 1], ACL_PRIORITY_MAX);
				rc = -1;
			}
			r->priority = (uint32_t)v;
			break;
		}
		if (rc < 0)
			return -1;
	}
	/* ICMP's number differs by family: the other one's never matches. */
	if (!r->proto_any && ((r->proto == 1 && r->family == ACL_FAM_IPV6) ||
			      (r->proto == 58 && r->family == ACL_FAM_IPV4))) {
		*col = proto_col;
		snprintf(msg, msg_len, r->proto == 1 ?
			 "proto icmp is IPv4's ICMP (1): an IPv6 rule never sees it (proto icmpv6)" :
			 "proto icmpv6 (58) is IPv6's: an IPv4 rule never sees it (proto icmp)");
		return -1;
	}
	/* Ports mean nothing without a protocol that has them: say which one. */
	if (port_col != 0 && !(seen & 1u << 2)) {
		*col = port_col;
		snprintf(msg, msg_len, "ports need a protocol: add proto tcp, udp, sctp or any");
		return -1;
	}
	if (!proto_has_ports(r) &&
	    (r->sport_lo != 0 || r->sport_hi != 65535 || r->dport_lo != 0 || r->dport_hi != 65535)) {
		*col = port_col;
		snprintf(msg, msg_len, "ports need proto tcp, udp, sctp or any (protocol %u has none)",
			 r->proto);
		return -1;
	}
	return 1;
}

static void
format_prefix(const struct acl_rule *r, bool dst, char *buf, size_t len)
{
	char a6[INET6_ADDRSTRLEN];
	uint32_t a = dst ? r->dst : r->src;
	unsigned int l = dst ? r->dst_len : r->src_len;

	if (r->family == ACL_FAM_ANY) {
		snprintf(buf, len, "any");
	} else if (r->family == ACL_FAM_IPV6) {
		inet_ntop(AF_INET6, dst ? r->dst6 : r->src6, a6, sizeof(a6));
		snprintf(buf, len, "%s/%u", a6, l);
	} else {
		snprintf(buf, len, "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff,
			 a & 0xff, l);
	}
}

int
pf_acl_rule_format(const struct acl_rule *r, char *buf, size_t len)
{
	char proto[8], src[INET6_ADDRSTRLEN + 4], dst[INET6_ADDRSTRLEN + 4];

	if (r->proto_any)
		snprintf(proto, sizeof(proto), "any");
	else
		snprintf(proto, sizeof(proto), "%u", r->proto);
	format_prefix(r, false, src, sizeof(src));
	format_prefix(r, true, dst, sizeof(dst));
	return snprintf(buf, len, "%s src %s dst %s proto %s sport %u-%u dport %u-%u priority %u",
			pf_acl_action_names[r->action], src, dst, proto, r->sport_lo, r->sport_hi,
			r->dport_lo, r->dport_hi, r->priority);
}

/* Append @p r to @p cfg (grows the array). Returns 0 or -ENOMEM / -E2BIG. */
static int
pf_acl_cfg_add_rule(struct acl_cfg *cfg, const struct acl_rule *r)
{
	struct acl_rule *nr;
	uint32_t cap;

	if (cfg->n_rules >= ACL_RULES_MAX)
		return -E2BIG;
	if (cfg->n_rules == cfg->cap) {
		cap = cfg->cap ? cfg->cap * 2 : 64;
		nr = realloc(cfg->rules, sizeof(*nr) * cap);
		if (nr == NULL)
			return -ENOMEM;
		cfg->rules = nr;
		cfg->cap = cap;
	}
	cfg->rules[cfg->n_rules++] = *r;
	if (r->action == ACL_PERMIT_REFLECT)
		cfg->has_reflect = true;
	return 0;
}

/*
 * Read a rule file: one rule per line, '#' comments. Every bad line is
 * reported as "file:line:col: message" in @p errs. Returns 0 or -errno.
 */
static int
pf_acl_rules_load_file(const char *path, struct acl_cfg *cfg, struct pf_errs *errs)
{
	char line[ACL_LINE_MAX + 2], msg[200];
	struct acl_rule r;
	FILE *f = pf_table_fopen(path);
	int lineno = 0, col, rc = 0, got;
	size_t l;

	if (f == NULL)
		return pf_err_add(errs, path, 0, 0, "cannot open rule file: %s", strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		l = strlen(line);
		if (l == sizeof(line) - 1 && line[l - 1] != '\n') {
			rc = pf_err_add(errs, path, lineno, 1, "line longer than %d characters",
					ACL_LINE_MAX - 1);
			/* Skip the rest of the long line. */
			while (fgets(line, sizeof(line), f) != NULL && strchr(line, '\n') == NULL)
				;
			continue;
		}
		got = pf_acl_rule_parse(line, &r, msg, sizeof(msg), &col);
		r.line = (uint32_t)lineno;
		if (got < 0)
			rc = pf_err_add(errs, path, lineno, col, "%s", msg);
		else if (got > 0 && pf_acl_cfg_add_rule(cfg, &r) < 0) {
			rc = pf_err_add(errs, path, lineno, 1, "more than %u rules (or out of memory)",
					ACL_RULES_MAX);
			break;
		}
		if (errs->n >= PF_ERRS_MAX)
			break;
	}
	if (ferror(f))
		rc = pf_err_add(errs, path, 0, 0, "read error");
	fclose(f);
	return rc < 0 ? -EINVAL : 0;
}

void
pf_acl_cfg_free(void *p)
{
	struct acl_cfg *cfg = p;

	if (cfg == NULL)
		return;
	free(cfg->rules);
	free(cfg);
}

/* An inline rule: a string in the file format or a mapping of the same words. */
static int
parse_inline_rule(const struct pf_node *item, const char *path, struct acl_cfg *cfg,
		  struct pf_errs *errs)
{
	static const char *const keys[] = { "action", "src", "dst", "proto", "sport", "dport",
					     "priority", NULL };
	char line[ACL_LINE_MAX], msg[200];
	const struct pf_node *v;
	struct acl_rule r;
	size_t off;
	int col, got, k;

	if (item->kind == PF_NODE_SCALAR) {
		got = pf_acl_rule_parse(item->value, &r, msg, sizeof(msg), &col);
		if (got == 0)
			return pf_node_err(errs, item, "%s: empty rule", path);
		if (got < 0)
			/* Columns inside a quoted scalar are not exact; point at the item. */
			return pf_node_err(errs, item, "%s: %s", path, msg);
		r.line = (uint32_t)item->line;
		return pf_acl_cfg_add_rule(cfg, &r) < 0 ?
			       pf_node_err(errs, item, "%s: too many rules", path) : 0;
	}
	if (item->kind != PF_NODE_MAP)
		return pf_node_err(errs, item, "%s: expected a rule string or mapping", path);
	if (pf_map_check_keys(item, path, keys, errs) < 0)
		return -EINVAL;
	v = pf_map_get(item, "action");
	if (v == NULL)
		return pf_node_err(errs, item, "%s: missing required key 'action'", path);
	if (v->kind != PF_NODE_SCALAR)
		return pf_node_err(errs, v, "%s.action: expected permit, deny or permit-reflect",
				   path);
	off = (size_t)snprintf(line, sizeof(line), "%s", v->value);
	for (k = 1; keys[k] != NULL && off < sizeof(line); k++) {
		v = pf_map_get(item, keys[k]);
		if (v == NULL)
			continue;
		if (v->kind != PF_NODE_SCALAR || strpbrk(v->value, " \t#") != NULL)
			return pf_node_err(errs, v, "%s.%s: expected one word", path, keys[k]);
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %s %s", keys[k],
					v->value);
	}
	got = pf_acl_rule_parse(line, &r, msg, sizeof(msg), &col);
	if (got <= 0)
		return pf_node_err(errs, item, "%s: %s", path, got == 0 ? "empty rule" : msg);
	r.line = (uint32_t)item->line;
	return pf_acl_cfg_add_rule(cfg, &r) < 0 ?
		       pf_node_err(errs, item, "%s: too many rules", path) : 0;
}

static int
parse_timeouts(const struct pf_node *n, const char *path, struct acl_cfg *cfg,
	       struct pf_errs *errs)
{
	char p[PF_CONF_PATH_MAX + 80];
	const struct pf_node *v;
	int k, rc = 0;

	if (pf_node_expect(n, PF_NODE_MAP, path, errs) < 0 ||
	    pf_map_check_keys(n, path, pf_acl_timeout_names, errs) < 0)
		return -EINVAL;
	for (k = 0; k < ACL_TO_MAX; k++) {
		v = pf_map_get(n, pf_acl_timeout_names[k]);
		snprintf(p, sizeof(p), "%s.%s", path, pf_acl_timeout_names[k]);
		if (v != NULL && pf_node_u32(v, p, 1, 10000000, &cfg->timeout_s[k], errs) < 0)
			rc = -EINVAL;
	}
	return rc;
}

int
pf_acl_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	char path[PF_CONF_PATH_MAX], ipath[PF_CONF_PATH_MAX + 40];
	const struct pf_node *v, *rules, *file;
	struct acl_cfg *cfg;
	unsigned int nerr = errs->n;
	int w, k;
	uint32_t i;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	/* VPP's default (l4_match_nonfirst_fragment), reliability.md case 29. */
	cfg->frag_proto_only = true;
	sc->cfg = cfg;
	cfg->default_action = ACL_DENY;
	cfg->sweep = 32;
	memcpy(cfg->timeout_s, timeout_default, sizeof(timeout_default));

	snprintf(path, sizeof(path), "stages.%s", sc->name);
	rules = pf_map_get(sc->node, "rules");
	file = pf_map_get(sc->node, "rules_file");
	if (rules != NULL && file != NULL)
		pf_node_err(errs, file, "%s: give either 'rules' or 'rules_file', not both", path);
	else if (rules != NULL) {
		snprintf(ipath, sizeof(ipath), "%s.rules", path);
		if (pf_node_expect(rules, PF_NODE_SEQ, ipath, errs) == 0)
			for (i = 0; i < rules->n && errs->n < PF_ERRS_MAX; i++) {
				snprintf(ipath, sizeof(ipath), "%s.rules[%u]", path, i);
				parse_inline_rule(rules->items[i], ipath, cfg, errs);
			}
	} else if (file != NULL) {
		const char *rel;

		snprintf(ipath, sizeof(ipath), "%s.rules_file", path);
		if (pf_node_str(file, ipath, &rel, errs) == 0) {
			pf_conf_resolve_path(file->file, rel, cfg->rules_file,
					     sizeof(cfg->rules_file));
			if (pf_stage_conf_add_file(sc, cfg->rules_file, errs) < 0)
				return -EINVAL;
			pf_acl_rules_load_file(cfg->rules_file, cfg, errs);
		}
	}
	if ((v = pf_map_get(sc->node, "default")) != NULL) {
		static const char *const words[] = { "deny", "permit", NULL };

		snprintf(ipath, sizeof(ipath), "%s.default", path);
		if (pf_node_enum(v, ipath, words, &w, errs) == 0)
			cfg->default_action = w == 0 ? ACL_DENY : ACL_PERMIT;
	}
	if ((v = pf_map_get(sc->node, "nonfirst_fragments")) != NULL) {
		static const char *const words[] = { "ports-unknown", "protocol-only", NULL };

		snprintf(ipath, sizeof(ipath), "%s.nonfirst_fragments", path);
		if (pf_node_enum(v, ipath, words, &w, errs) == 0)
			cfg->frag_proto_only = w == 1;
	}
	if ((v = pf_map_get(sc->node, "algorithm")) != NULL) {
		snprintf(ipath, sizeof(ipath), "%s.algorithm", path);
		if (pf_node_enum(v, ipath, pf_acl_alg_names, &w, errs) == 0)
			cfg->algorithm = (uint8_t)w;
	}
	if ((v = pf_map_get(sc->node, "sessions")) != NULL) {
		snprintf(ipath, sizeof(ipath), "%s.sessions", path);
		if (pf_node_u32(v, ipath, 0, 1u << 24, &cfg->sessions, errs) == 0) {
			cfg->sessions_given = true;
			if (cfg->sessions != 0 && cfg->sessions < 8)
				pf_node_err(errs, v, "%s: a session table needs at least 8 entries",
					    ipath);
		}
	}
	if ((v = pf_map_get(sc->node, "session_sweep")) != NULL) {
		snprintf(ipath, sizeof(ipath), "%s.session_sweep", path);
		pf_node_u32(v, ipath, 1, 4096, &cfg->sweep, errs);
	}
	if ((v = pf_map_get(sc->node, "session_timeouts")) != NULL) {
		snprintf(ipath, sizeof(ipath), "%s.session_timeouts", path);
		parse_timeouts(v, ipath, cfg, errs);
	}
	if (!cfg->sessions_given && cfg->has_reflect)
		cfg->sessions = 65536;
	if (cfg->has_reflect && cfg->sessions == 0) {
		for (k = 0; k < (int)cfg->n_rules; k++)
			if (cfg->rules[k].action == ACL_PERMIT_REFLECT)
				break;
		pf_node_err(errs, pf_map_get(sc->node, "sessions"),
			    "%s.sessions: 0 (stateless), but rule %d is permit-reflect", path, k + 1);
	}
	return errs->n != nerr ? -EINVAL : 0;
}

/* ---- live changes (app/control/changes.c) --------------------------------------- */

/* Canonical text of rule line @p s, or -1. */
static int
rule_canon(const char *s, char *out, size_t len)
{
	struct acl_rule r;
	char msg[8];
	int col;

	if (pf_acl_rule_parse(s, &r, msg, sizeof(msg), &col) != 1)
		return -1;
	return pf_acl_rule_format(&r, out, len);
}

/* Where rule @p canon is declared: an inline item, or a line of the rules file. */
static void
rule_where(const struct pf_stage_conf *sc, const struct acl_cfg *cfg, const char *canon,
	   struct pf_change *ch)
{
	const struct pf_node *rules = pf_map_get(sc->node, "rules"), *it;
	char c[ACL_LINE_MAX], *buf = NULL;
	size_t cap = 0;
	uint32_t i;
	int line = 0;
	FILE *f;

	for (i = 0; rules != NULL && rules->kind == PF_NODE_SEQ && i < rules->n; i++) {
		it = rules->items[i];
		if (it->kind == PF_NODE_SCALAR && rule_canon(it->value, c, sizeof(c)) >= 0 &&
		    strcmp(c, canon) == 0) {
			pf_change_del_item(ch, it);
			return;
		}
	}
	if (cfg->rules_file[0] == '\0' || (f = pf_table_fopen(cfg->rules_file)) == NULL)
		return;
	while (getline(&buf, &cap, f) > 0) {
		line++;
		if (rule_canon(buf, c, sizeof(c)) >= 0 && strcmp(c, canon) == 0) {
			pf_change_del_line(ch, cfg->rules_file, line);
			break;
		}
	}
	free(buf);
	fclose(f);
}

/*
 * A rule line (the rules file format) added after the others, or deleted
 * (the first rule equal to it once parsed: same action, fields, priority).
 */
int
pf_acl_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		struct pf_errs *errs)
{
	struct acl_cfg *cfg = sc->cfg;
	char msg[200], c[ACL_LINE_MAX], item[PF_CHANGE_TEXT_MAX + 40];
	struct acl_rule r;
	uint32_t i;
	int col, rc;

	RTE_SET_USED(env);
	rc = pf_acl_rule_parse(ch->entry, &r, msg, sizeof(msg), &col);
	if (rc <= 0)
		return pf_err_add(errs, "", 0, 0, "bad rule: %s", rc == 0 ? "empty rule" : msg);
	if (strchr(ch->entry, '#') != NULL || strchr(ch->entry, '"') != NULL)
		return pf_err_add(errs, "", 0, 0, "bad rule: no '#' or '\"' in a live rule");
	pf_acl_rule_format(&r, ch->key, sizeof(ch->key));
	for (i = 0; i < cfg->n_rules; i++)
		if (pf_acl_rule_format(&cfg->rules[i], c, sizeof(c)) >= 0 && strcmp(c, ch->key) == 0)
			break;
	if (ch->del) {
		if (i == cfg->n_rules) {
			pf_err_add(errs, "", 0, 0, "stages.%s: no rule '%s'", sc->group, ch->entry);
			return -ENOENT;
		}
		rule_where(sc, cfg, ch->key, ch);
		memmove(&cfg->rules[i], &cfg->rules[i + 1],
			(cfg->n_rules - i - 1) * sizeof(cfg->rules[0]));
		cfg->n_rules--;
		for (cfg->has_reflect = false, i = 0; i < cfg->n_rules; i++)
			cfg->has_reflect |= cfg->rules[i].action == ACL_PERMIT_REFLECT;
		return 0;
	}
	if (i < cfg->n_rules) {
		pf_err_add(errs, "", 0, 0, "stages.%s: rule %u is the same rule", sc->group, i + 1);
		return -EEXIST;
	}
	if (r.action == ACL_PERMIT_REFLECT && cfg->sessions == 0)
		return pf_err_add(errs, "", 0, 0, "stages.%s: permit-reflect needs sessions (the "
				  "stage is stateless)", sc->group);
	if (pf_acl_cfg_add_rule(cfg, &r) < 0) {
		pf_err_add(errs, "", 0, 0, "stages.%s: rule table full (%u rules)", sc->group,
			   cfg->n_rules);
		return -ENOSPC;
	}
	snprintf(item, sizeof(item), "\"%s\"", ch->entry);
	pf_change_add_at(ch, sc, "rules", cfg->rules_file, item);
	return 0;
}
