/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACL rules as the acl stage's parser produces them (no DPDK here): the text
 * format shared by rule files and inline "rules:" strings, and the parsed
 * configuration of one acl stage. docs/stages/acl.md describes the format.
 */
#ifndef PF_ACL_RULES_H
#define PF_ACL_RULES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "pf_err.h"

#define ACL_RULES_MAX 1000000u          /* per stage; rte_acl memory is the real limit */
#define ACL_PRIORITY_MAX 1000000u

enum acl_action {
	ACL_DENY = 0,
	ACL_PERMIT,
	ACL_PERMIT_REFLECT,
	ACL_ACTION_MAX,
};

/* Session timeout classes. */
enum acl_timeout {
	ACL_TO_TCP_ESTABLISHED = 0,
	ACL_TO_TCP_TRANSIENT,
	ACL_TO_UDP,
	ACL_TO_OTHER,
	ACL_TO_MAX,
};

/* Classification algorithms (the "algorithm:" words, in this order). */
enum acl_alg {
	ACL_ALG_DEFAULT = 0,
	ACL_ALG_SCALAR,
	ACL_ALG_SSE,
	ACL_ALG_AVX2,
	ACL_ALG_AVX512X16,
	ACL_ALG_AVX512X32,
	ACL_ALG_MAX,
};

/* Address family of a rule, from its addresses (docs/stages/acl.md). */
enum acl_family {
	ACL_FAM_ANY = 0,                /* no address given (or both "any"): IPv4 and IPv6 */
	ACL_FAM_IPV4,
	ACL_FAM_IPV6,
};

/* One rule. IPv4 addresses and ports in host order, IPv6 addresses in
 * network order; a field that matches anything has len 0 or the range
 * 0-65535. */
struct acl_rule {
	uint32_t src, dst;              /* ACL_FAM_IPV4 */
	uint8_t src6[16], dst6[16];     /* ACL_FAM_IPV6 */
	uint8_t family;                 /* enum acl_family */
	uint8_t src_len, dst_len;
	uint8_t proto;
	bool proto_any;
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	uint8_t action;                 /* enum acl_action */
	uint32_t priority;              /* higher wins; equal: earlier wins */
	/* Where it was written (acl-match names it): the line of the rules file,
	 * or of the topology for an inline rule; 0: added live. */
	uint32_t line;
};

struct acl_cfg {
	struct acl_rule *rules;
	uint32_t n_rules;
	uint32_t cap;
	uint8_t default_action;         /* ACL_DENY or ACL_PERMIT */
	uint8_t algorithm;              /* enum acl_alg */
	bool has_reflect;               /* some rule is permit-reflect */
	bool frag_proto_only;           /* non-first fragments match port rules on protocol */
	bool sessions_given;            /* "sessions:" was set explicitly */
	uint32_t sessions;              /* session table size, 0 = stateless */
	uint32_t sweep;                 /* sessions examined per burst for expiry */
	uint32_t timeout_s[ACL_TO_MAX];
	char rules_file[PATH_MAX];      /* resolved path, "" when inline */
};

extern const char *const pf_acl_action_names[];   /* "deny", "permit", "permit-reflect" */
extern const char *const pf_acl_alg_names[];      /* the "algorithm:" words, NULL-ended */

/*
 * Parse one rule line (comments and surrounding blanks allowed) into @p r.
 * Returns 1 for a rule, 0 for a blank or comment-only line, -1 on error with
 * a message in @p msg and the 1-based column of the offending word in @p col.
 */
int pf_acl_rule_parse(const char *line, struct acl_rule *r, char *msg, size_t msg_len, int *col);

/* Format @p r back into the text format (for logs and tests). */
int pf_acl_rule_format(const struct acl_rule *r, char *buf, size_t len);

void pf_acl_cfg_free(void *cfg);

struct pf_stage_conf;
struct pf_stage_env;
struct pf_change;
/* The stage's parse op: every parameter checked, errors as file:line:col. */
int pf_acl_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
/* Live change to the parsed rules (the stage's edit op, app/control/pf_changes.h). */
int pf_acl_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		    struct pf_errs *errs);

#endif /* PF_ACL_RULES_H */
