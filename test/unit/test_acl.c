/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acl stage: rule parser, verdicts, port edges, priorities, fragments and
 * malformed L4, burst sizes, sessions (reflect, expiry, TCP, table full),
 * live update. The random differential test is test_acl_diff.c.
 */
#include <string.h>

#include "../../stages/acl_rules.h"
#include "acl_test_pkt.h"

#define A(x) ((uint32_t)(x))
#define IP(a, b, c, d) (A(a) << 24 | A(b) << 16 | A(c) << 8 | A(d))

static int
group_setup(void **state)
{
	return pf_test_eal_init("acl");
}

/* Classify one packet; returns its edge and frees it. */
static uint16_t
one(struct pf_stage *st, const struct tpkt *t)
{
	struct rte_mbuf *m = tpkt_mbuf(t);
	uint16_t e;

	pf_test_process(st, &m, 1, &e);
	rte_pktmbuf_free(m);
	return e;
}

/* Classify @p n packets as one burst: their edges must be @p want (the mbufs freed). */
static void
burst(struct pf_stage *st, const struct tpkt *t, uint16_t n, const uint16_t *want)
{
	struct rte_mbuf *m[PF_BURST_MAX];
	uint16_t e[PF_BURST_MAX], i;

	assert_true(n <= PF_BURST_MAX);
	for (i = 0; i < n; i++)
		m[i] = tpkt_mbuf(&t[i]);
	pf_test_process(st, m, n, e);
	pf_test_free(m, n);
	for (i = 0; i < n; i++)
		if (e[i] != want[i])
			fail_msg("packet %u: edge %u, want %u", i, e[i], want[i]);
}

static uint64_t
gauge(const struct pf_stage *st, const char *name)
{
	struct pf_gauge g[64];
	uint16_t n = pf_stage_gauges(st, g, 64), i;

	for (i = 0; i < n; i++)
		if (strcmp(g[i].name, name) == 0)
			return g[i].value;
	return 0;
}

static void
done(struct pf_stage *st, struct pf_topo *topo)
{
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

static struct tpkt
udp(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	return (struct tpkt){ .src = src, .dst = dst, .proto = 17, .sport = sport, .dport = dport,
			      .l4_len = -1 };
}

static struct tpkt
tcp(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t flags)
{
	return (struct tpkt){ .src = src, .dst = dst, .proto = 6, .sport = sport, .dport = dport,
			      .tcp_flags = flags, .l4_len = -1 };
}

/* ---- parser ------------------------------------------------------------- */

static void
test_rule_parse_ok(void **state)
{
	struct acl_rule r;
	char msg[200];
	int col;

	assert_int_equal(pf_acl_rule_parse("  permit-reflect src 10.0.0.0/8 dst 1.2.3.4 proto tcp "
					   "sport 1024-65535 dport 80 priority 5 # web",
					   &r, msg, sizeof(msg), &col), 1);
	assert_int_equal(r.action, ACL_PERMIT_REFLECT);
	assert_int_equal(r.src, IP(10, 0, 0, 0));
	assert_int_equal(r.src_len, 8);
	assert_int_equal(r.dst, IP(1, 2, 3, 4));
	assert_int_equal(r.dst_len, 32);
	assert_false(r.proto_any);
	assert_int_equal(r.proto, 6);
	assert_int_equal(r.sport_lo, 1024);
	assert_int_equal(r.sport_hi, 65535);
	assert_int_equal(r.dport_lo, 80);
	assert_int_equal(r.dport_hi, 80);
	assert_int_equal(r.priority, 5);
	assert_int_equal(pf_acl_rule_parse("deny", &r, msg, sizeof(msg), &col), 1);
	assert_true(r.proto_any);
	assert_int_equal(r.src_len, 0);
	assert_int_equal(r.dport_hi, 65535);
	assert_int_equal(pf_acl_rule_parse("   # only a comment", &r, msg, sizeof(msg), &col), 0);
	assert_int_equal(pf_acl_rule_parse("", &r, msg, sizeof(msg), &col), 0);
	assert_int_equal(pf_acl_rule_parse("permit proto 47", &r, msg, sizeof(msg), &col), 1);
	assert_int_equal(r.proto, 47);
	assert_int_equal(pf_acl_rule_parse("permit src 0.0.0.0/0 proto any sport 0-0", &r, msg, sizeof(msg),
					   &col), 1);
	assert_int_equal(r.sport_hi, 0);
	assert_int_equal(r.family, ACL_FAM_IPV4);
}

static void
test_rule_parse_ipv6(void **state)
{
	static const uint8_t db8[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const uint8_t one[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct acl_rule r;
	char msg[200], text[256];
	int col;

	assert_int_equal(pf_acl_rule_parse("permit src 2001:db8::/32 dst any proto icmpv6", &r, msg,
					   sizeof(msg), &col), 1);
	assert_int_equal(r.family, ACL_FAM_IPV6);
	assert_memory_equal(r.src6, db8, 16);
	assert_int_equal(r.src_len, 32);
	assert_int_equal(r.dst_len, 0);
	assert_int_equal(r.proto, 58);
	assert_int_equal(pf_acl_rule_parse("deny dst 2001:db8::1 proto tcp dport 22", &r, msg,
					   sizeof(msg), &col), 1);
	assert_memory_equal(r.dst6, one, 16);
	assert_int_equal(r.dst_len, 128);
	pf_acl_rule_format(&r, text, sizeof(text));
	assert_string_equal(text, "deny src ::/0 dst 2001:db8::1/128 proto 6 sport 0-65535 "
			    "dport 22-22 priority 0");
	/* No address (or only "any"): both families; formatted as "any". */
	assert_int_equal(pf_acl_rule_parse("permit src any proto udp", &r, msg, sizeof(msg), &col),
			 1);
	assert_int_equal(r.family, ACL_FAM_ANY);
	pf_acl_rule_format(&r, text, sizeof(text));
	assert_string_equal(text, "permit src any dst any proto 17 sport 0-65535 dport 0-65535 "
			    "priority 0");
	/* ::/0 is IPv6 only, 0.0.0.0/0 IPv4 only. */
	assert_int_equal(pf_acl_rule_parse("deny src ::/0", &r, msg, sizeof(msg), &col), 1);
	assert_int_equal(r.family, ACL_FAM_IPV6);
	assert_int_equal(pf_acl_rule_parse("deny dst 0.0.0.0/0", &r, msg, sizeof(msg), &col), 1);
	assert_int_equal(r.family, ACL_FAM_IPV4);
}

static void
test_rule_parse_errors(void **state)
{
	static const struct {
		const char *line;
		int col;
		const char *msg;
	} bad[] = {
		{ "allow", 1, "unknown action 'allow' (permit, deny or permit-reflect)" },
		{ "permit from 1.2.3.4", 8, "unknown field 'from' (src, dst, proto, sport, dport, priority)" },
		{ "permit src", 8, "field 'src' needs a value" },
		{ "permit src 1.2.3.4 src 1.2.3.5", 20, "field 'src' given twice" },
		{ "permit src 10.1.2.3/8", 12, "'10.1.2.3/8' has host bits set (did you mean 10.0.0.0/8?)" },
		{ "permit dst 1.2.3.4/33", 12, "'1.2.3.4/33': prefix length must be 0 to 32" },
		{ "permit dst 1.2.3", 12, "'1.2.3' is not an IPv4 or IPv6 address or prefix (a.b.c.d[/len], x:x::x[/len] or any)" },
		{ "permit src 2001:db8::1/32", 12, "'2001:db8::1/32' has host bits set (did you mean 2001:db8::/32?)" },
		{ "permit src 2001:db8::/129", 12, "'2001:db8::/129': IPv6 prefix length must be 0 to 128" },
		{ "permit src 2001:db8:::1", 12, "'2001:db8:::1' is not an IPv6 address or prefix (x:x::x[/len])" },
		{ "permit src 10.0.0.0/8 dst 2001:db8::/32", 27,
		  "'2001:db8::/32' is IPv6 but the other address (column 12) is IPv4: one family per rule" },
		{ "permit proto tcpp", 14, "'tcpp' is not a protocol (any, tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255)" },
		{ "permit proto 256", 14, "'256' is not a protocol (any, tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255)" },
		{ "permit dport 2000-1000", 14, "port range '2000-1000' is empty (first > last)" },
		{ "permit dport 65536", 14, "'65536' is not a port or port range (N, N-M or any; 0-65535)" },
		{ "permit dport 1-", 14, "'1-' is not a port or port range (N, N-M or any; 0-65535)" },
		{ "deny proto icmp dport 80", 17, "ports need proto tcp, udp, sctp or any (protocol 1 has none)" },
		{ "permit dport 80", 8, "ports need a protocol: add proto tcp, udp, sctp or any" },
		{ "deny src 10.0.0.0/8 sport 1-2 dst any", 21,
		  "ports need a protocol: add proto tcp, udp, sctp or any" },
		{ "permit priority 1000001", 17, "priority '1000001' is not a number 0 to 1000000" },
	};
	struct acl_rule r;
	char msg[200];
	size_t i;
	int col;

	for (i = 0; i < RTE_DIM(bad); i++) {
		assert_int_equal(pf_acl_rule_parse(bad[i].line, &r, msg, sizeof(msg), &col), -1);
		assert_string_equal(msg, bad[i].msg);
		assert_int_equal(col, bad[i].col);
	}
	/* "any" is a protocol choice too: ports on any protocol that has them. */
	assert_int_equal(pf_acl_rule_parse("permit proto any dport 80", &r, msg, sizeof(msg), &col),
			 1);
	assert_true(r.proto_any);
	assert_int_equal(r.dport_lo, 80);
}

static int
load_errors(const char *params, struct pf_errs *errs)
{
	char *y = acl_topo_yaml(params);
	struct pf_topo *topo = NULL;
	int rc;

	memset(errs, 0, sizeof(*errs));
	rc = pf_topo_load_string("inline.yaml", y, &topo, errs);
	free(y);
	pf_topo_free(topo);
	return rc;
}

static void
test_rule_file_errors(void **state)
{
	struct pf_errs errs;
	char line[512];

	assert_int_equal(load_errors("    rules_file: fixtures/acl_bad.rules\n", &errs), -EINVAL);
	assert_int_equal(errs.n, 4);
	pf_err_format(&errs.e[0], line, sizeof(line));
	assert_string_equal(line, "fixtures/acl_bad.rules:3:12: error: '10.1.2.3/8' has host bits "
			    "set (did you mean 10.0.0.0/8?)");
	pf_err_format(&errs.e[1], line, sizeof(line));
	assert_string_equal(line, "fixtures/acl_bad.rules:4:17: error: ports need proto tcp, udp, "
			    "sctp or any (protocol 1 has none)");
	pf_err_format(&errs.e[2], line, sizeof(line));
	assert_string_equal(line, "fixtures/acl_bad.rules:5:1: error: unknown action 'allow' "
			    "(permit, deny or permit-reflect)");
	pf_err_format(&errs.e[3], line, sizeof(line));
	assert_string_equal(line, "fixtures/acl_bad.rules:6:8: error: ports need a protocol: add "
			    "proto tcp, udp, sctp or any");

	assert_int_equal(load_errors("    rules_file: fixtures/nope.rules\n", &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	pf_err_format(&errs.e[0], line, sizeof(line));
	/* Where the topology names it (issue 32 item 10: the key's position was lost). */
	assert_string_equal(line, "inline.yaml:9:17: error: stages.acl.rules_file: "
			    "'fixtures/nope.rules' cannot be opened: No such file or directory");
	assert_int_equal(load_errors("    rules_file: /proc/self/mem\n", &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	pf_err_format(&errs.e[0], line, sizeof(line));
	assert_string_equal(line, "inline.yaml:9:17: error: stages.acl.rules_file: "
			    "'/proc/self/mem' cannot be read: Input/output error");
	assert_int_equal(load_errors("    rules_file: /proc/self/status\n", &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	pf_err_format(&errs.e[0], line, sizeof(line));
	assert_string_equal(line, "inline.yaml:9:17: error: stages.acl.rules_file: "
			    "'/proc/self/status' is not a table file: its size is 0 yet it holds "
			    "data (a /proc file?)");
}

static void
test_param_errors(void **state)
{
	struct pf_errs errs;

	assert_int_equal(load_errors("    rules: [deny]\n    rules_file: x.rules\n", &errs), -EINVAL);
	assert_string_equal(errs.e[0].msg,
			    "stages.acl: give either 'rules' or 'rules_file', not both");
	assert_int_equal(load_errors("    rules: [permit-reflect]\n    sessions: 0\n", &errs),
			 -EINVAL);
	assert_string_equal(errs.e[0].msg,
			    "stages.acl.sessions: 0 (stateless), but rule 1 is permit-reflect");
	assert_int_equal(load_errors("    sessions: 4\n", &errs), -EINVAL);
	assert_string_equal(errs.e[0].msg, "stages.acl.sessions: a session table needs at least 8 entries");
	assert_int_equal(load_errors("    algorithm: fast\n", &errs), -EINVAL);
	assert_string_equal(errs.e[0].msg, "stages.acl.algorithm: 'fast' is not one of: default, "
			    "scalar, sse, avx2, avx512x16, avx512x32");
	assert_int_equal(load_errors("    default: maybe\n", &errs), -EINVAL);
	assert_int_equal(load_errors("    session_timeouts: { udp: 0 }\n", &errs), -EINVAL);
	assert_int_equal(load_errors("    session_timeouts: { tcp: 5 }\n", &errs), -EINVAL);
	assert_int_equal(load_errors("    rules:\n      - { action: permit, dport: 99999 }\n", &errs),
			 -EINVAL);
	assert_string_equal(errs.e[0].msg, "stages.acl.rules[0]: '99999' is not a port or port "
			    "range (N, N-M or any; 0-65535)");
	assert_int_equal(errs.e[0].line, 10);
	assert_int_equal(load_errors("    rules:\n      - { src: 1.2.3.4 }\n", &errs), -EINVAL);
	assert_string_equal(errs.e[0].msg, "stages.acl.rules[0]: missing required key 'action'");
	assert_int_equal(load_errors("    rules:\n      - { action: permit, port: 1 }\n", &errs),
			 -EINVAL);
	assert_int_equal(load_errors("    rules: [\"permit proto tcp dport 1\", \"deny dport x\"]\n", &errs),
			 -EINVAL);
	assert_string_equal(errs.e[0].msg, "stages.acl.rules[1]: 'x' is not a port or port range "
			    "(N, N-M or any; 0-65535)");
}

/* ---- stateless verdicts -------------------------------------------------- */

static void
test_verdicts_and_counters(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage("    rules:\n"
					"      - deny src 10.0.0.1\n"
					"      - permit proto udp dport 53\n"
					"      - { action: permit, src: 10.0.0.0/8, proto: tcp, dport: 1000-2000 }\n",
					&topo);
	struct tpkt t;

	assert_int_equal(one(st, &(struct tpkt){ .src = IP(10, 0, 0, 1), .dst = IP(1, 1, 1, 1),
						 .proto = 17, .dport = 53, .l4_len = -1 }), 0);
	t = udp(IP(10, 0, 0, 2), IP(1, 1, 1, 1), 9, 53);
	assert_int_equal(one(st, &t), 1);
	t = tcp(IP(10, 9, 0, 2), IP(1, 1, 1, 1), 9, 1500, 0);
	assert_int_equal(one(st, &t), 1);
	t = tcp(IP(11, 9, 0, 2), IP(1, 1, 1, 1), 9, 1500, 0);
	assert_int_equal(one(st, &t), 0);           /* default deny */
	t = udp(IP(10, 9, 0, 2), IP(1, 1, 1, 1), 9, 1500);
	assert_int_equal(one(st, &t), 0);           /* rule 3 is tcp only */
	assert_int_equal(pf_test_ctr(st, "acl_deny"), 3);
	assert_int_equal(pf_test_ctr(st, "deny_rule"), 1);
	assert_int_equal(pf_test_ctr(st, "default_deny"), 2);
	assert_int_equal(pf_test_ctr(st, "permit"), 2);
	assert_int_equal(gauge(st, "rule.1"), 1);
	assert_int_equal(gauge(st, "rule.2"), 1);
	assert_int_equal(gauge(st, "rule.3"), 1);
	assert_int_equal(gauge(st, "rules"), 3);
	done(st, topo);

	/* Default permit, and no rules at all. */
	st = acl_stage("    default: permit\n", &topo);
	t = udp(1, 2, 3, 4);
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(pf_test_ctr(st, "default_permit"), 1);
	done(st, topo);
}

static void
test_rules_file(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage("    rules_file: fixtures/acl_ok.rules\n", &topo);
	struct tpkt t = tcp(IP(192, 168, 3, 3), IP(1, 1, 1, 1), 5, 6, RTE_TCP_SYN_FLAG);

	assert_int_equal(gauge(st, "rules"), 4);
	assert_int_equal(gauge(st, "sessions_max"), 65536);  /* permit-reflect: stateful */
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(pf_test_ctr(st, "session_created"), 1);
	t = tcp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 5, 1000, 0);
	assert_int_equal(one(st, &t), 0);
	t = tcp(IP(10, 0, 0, 2), IP(1, 1, 1, 1), 5, 1000, 0);
	assert_int_equal(one(st, &t), 1);
	done(st, topo);
}

static void
test_port_edges(void **state)
{
	static const struct {
		uint16_t sport, dport;
		uint16_t edge;
	} cases[] = {
		{ 0, 999, 0 },     { 0, 1000, 1 },    { 0, 2000, 1 },   { 0, 2001, 0 },
		{ 65535, 0, 1 },   { 65534, 0, 0 },   { 0, 0, 0 },      { 1, 0, 0 },
		{ 7, 65535, 1 },   { 7, 65534, 0 },
	};
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage("    rules:\n"
					"      - permit proto udp dport 1000-2000\n"
					"      - permit proto any sport 65535\n"
					"      - permit proto any dport 65535-65535\n", &topo);
	struct tpkt t;
	size_t i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		t = udp(1, 2, cases[i].sport, cases[i].dport);
		assert_int_equal(one(st, &t), cases[i].edge);
	}
	done(st, topo);
}

static void
test_priority(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st;
	struct tpkt t = udp(IP(10, 1, 1, 1), IP(1, 1, 1, 1), 1, 2);

	/* First match in list order. */
	st = acl_stage("    rules: [\"permit src 10.0.0.0/8\", \"deny src 10.1.1.1\"]\n", &topo);
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(gauge(st, "rule.1"), 1);
	done(st, topo);
	/* An explicit priority wins over order; equal priorities keep order. */
	st = acl_stage("    rules:\n"
		       "      - permit src 10.0.0.0/8\n"
		       "      - deny src 10.1.1.1 priority 2\n"
		       "      - permit src 10.1.0.0/16 priority 2\n", &topo);
	assert_int_equal(one(st, &t), 0);
	assert_int_equal(gauge(st, "rule.2"), 1);
	t.src = IP(10, 1, 1, 2);
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(gauge(st, "rule.3"), 1);
	t.src = IP(10, 2, 1, 2);
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(gauge(st, "rule.1"), 1);
	done(st, topo);
}

static void
test_fragments_and_malformed(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage("    nonfirst_fragments: ports-unknown\n"
					"    rules:\n"
					"      - deny proto udp dport 53\n"
					"      - permit proto tcp dport 80\n"
					"      - permit src 10.0.0.0/8 proto udp sport 0-65535\n",
					&topo);
	struct tpkt t;

	/* A non-first fragment has no ports: the port rule does not match,
	 * the full-range rule does. */
	t = udp(IP(10, 0, 0, 1), 2, 1, 53);
	t.frag_off = 100;
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(gauge(st, "rule.3"), 1);
	assert_int_equal(pf_test_ctr(st, "nonfirst_fragment"), 1);
	/* The first fragment has its ports. */
	t.frag_off = 0;
	t.mf = true;
	assert_int_equal(one(st, &t), 0);
	/* Malformed TCP never matches "permit tcp dport 80". */
	t = tcp(IP(11, 0, 0, 1), 2, 1, 80, 0);
	assert_int_equal(one(st, &t), 1);
	t.tcp_doff = 4;
	assert_int_equal(one(st, &t), 0);
	t.tcp_doff = 15;                           /* header beyond the packet */
	assert_int_equal(one(st, &t), 0);
	t.tcp_doff = 5;
	t.l4_len = 19;
	assert_int_equal(one(st, &t), 0);
	/* Truncated UDP cannot match "deny udp dport 53"; zero-length UDP is fine. */
	t = udp(IP(10, 0, 0, 1), 2, 1, 53);
	t.l4_len = 7;
	assert_int_equal(one(st, &t), 1);
	t.l4_len = 8;
	assert_int_equal(one(st, &t), 0);
	assert_int_equal(pf_test_ctr(st, "l4_malformed"), 4);
	done(st, topo);

	/* VPP's l4_match_nonfirst_fragment: port rules match on protocol only. */
	st = acl_stage("    nonfirst_fragments: protocol-only\n"
		       "    default: permit\n"
		       "    rules: [\"deny proto udp dport 53\", \"permit\"]\n", &topo);
	t = udp(1, 2, 1, 54);
	t.frag_off = 1;
	assert_int_equal(one(st, &t), 0);
	t.proto = 6;
	assert_int_equal(one(st, &t), 1);
	t = udp(1, 2, 1, 54);
	t.l4_len = 4;                              /* malformed still does not match */
	assert_int_equal(one(st, &t), 1);
	done(st, topo);
}

static void
test_not_ipv4(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage("    default: permit\n", &topo);
	struct tpkt t = udp(1, 2, 3, 4);
	struct rte_mbuf *m = tpkt_mbuf(&t);
	uint16_t e;

	pf_meta(m)->cls = PF_CLASS_ARP;
	pf_test_process(st, &m, 1, &e);
	assert_int_equal(e, 0);
	assert_int_equal(pf_test_ctr(st, "acl_not_ipv4"), 1);
	rte_pktmbuf_free(m);
	done(st, topo);
}

static void
test_burst_sizes(void **state)
{
	static const uint16_t sizes[] = { 0, 1, 3, 4, 5, 8, 31, 32, 33, 64, 255, 256 };
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage("    rules: [\"permit proto udp dport 0-99\"]\n", &topo);
	struct rte_mbuf *m[256];
	uint16_t e[256], i, k;
	struct tpkt t;

	for (k = 0; k < RTE_DIM(sizes); k++) {
		for (i = 0; i < sizes[k]; i++) {
			t = udp(i, 7, 1, (uint16_t)(i % 200));
			m[i] = tpkt_mbuf(&t);
		}
		pf_test_process(st, m, sizes[k], e);
		for (i = 0; i < sizes[k]; i++)
			assert_int_equal(e[i], i % 200 < 100 ? 1 : 0);
		pf_test_free(m, sizes[k]);
	}
	assert_int_equal(pf_test_ctr(st, "permit"), 492);
	assert_int_equal(pf_test_ctr(st, "default_deny"), 200);
	assert_int_equal(pf_test_ctr(st, "acl_deny"), 200);
	assert_int_equal(gauge(st, "rule.1"), 492);
	/* Bursts whose packets all match one rule (counted once per burst). */
	for (k = 0; k < RTE_DIM(sizes); k++) {
		for (i = 0; i < sizes[k]; i++) {
			t = udp(i, 7, 1, k & 1 ? 99 : 100);
			m[i] = tpkt_mbuf(&t);
		}
		pf_test_process(st, m, sizes[k], e);
		for (i = 0; i < sizes[k]; i++)
			assert_int_equal(e[i], k & 1 ? 1 : 0);
		pf_test_free(m, sizes[k]);
	}
	/* odd k: 1 + 4 + 8 + 32 + 64 + 256 permitted; even k: 0 + 3 + 5 + 31 + 33 + 255 denied */
	assert_int_equal(pf_test_ctr(st, "permit"), 492 + 365);
	assert_int_equal(pf_test_ctr(st, "default_deny"), 200 + 327);
	assert_int_equal(pf_test_ctr(st, "acl_deny"), 200 + 327);
	assert_int_equal(gauge(st, "rule.1"), 492 + 365);
	done(st, topo);
}

/* ---- IPv6 --------------------------------------------------------------- */

/* 2001:db8:<a>::<b> */
static struct tpkt
udp6(uint16_t sa, uint16_t sb, uint16_t da, uint16_t db, uint16_t sport, uint16_t dport)
{
	struct tpkt t = { .v6 = true, .proto = 17, .sport = sport, .dport = dport, .l4_len = -1 };

	t.src6[0] = t.dst6[0] = 0x20, t.src6[1] = t.dst6[1] = 0x01;
	t.src6[2] = t.dst6[2] = 0x0d, t.src6[3] = t.dst6[3] = 0xb8;
	t.src6[4] = (uint8_t)(sa >> 8), t.src6[5] = (uint8_t)sa;
	t.src6[14] = (uint8_t)(sb >> 8), t.src6[15] = (uint8_t)sb;
	t.dst6[4] = (uint8_t)(da >> 8), t.dst6[5] = (uint8_t)da;
	t.dst6[14] = (uint8_t)(db >> 8), t.dst6[15] = (uint8_t)db;
	return t;
}

static void
test_ipv6_verdicts(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage(
		"    rules:\n"
		"      - deny src 2001:db8:1::/48 proto udp dport 53\n"
		"      - permit src 2001:db8::/32 dst 2001:db8:2::5 proto udp\n"
		"      - permit src 10.0.0.0/8 proto udp\n"
		"      - deny proto tcp dport 23\n"
		"      - permit proto tcp\n", &topo);
	struct tpkt t;

	t = udp6(1, 1, 2, 5, 1000, 53);
	assert_int_equal(one(st, &t), 0);               /* rule 1 */
	t = udp6(1, 1, 2, 5, 1000, 54);
	assert_int_equal(one(st, &t), 1);               /* rule 2 */
	t = udp6(1, 1, 2, 6, 1000, 54);
	assert_int_equal(one(st, &t), 0);               /* /128 missed: default */
	/* The first 32 bits of 10.0.0.0/8 do not make an IPv6 match. */
	t = udp6(0, 1, 2, 6, 1000, 54);
	t.src6[0] = 10, t.src6[1] = t.src6[2] = t.src6[3] = 0;
	assert_int_equal(one(st, &t), 0);
	/* Rules of no family: both. */
	t = udp6(7, 1, 2, 6, 1000, 23);
	t.proto = 6;
	assert_int_equal(one(st, &t), 0);               /* rule 4 */
	t.dport = 24;
	assert_int_equal(one(st, &t), 1);               /* rule 5 */
	t = tcp(IP(1, 1, 1, 1), IP(2, 2, 2, 2), 1000, 23, 0x02);
	assert_int_equal(one(st, &t), 0);               /* rule 4, IPv4 */
	/* Ports behind two hop-by-hop headers' worth of options. */
	t = udp6(1, 1, 2, 5, 1000, 53);
	t.ext = 16;
	assert_int_equal(one(st, &t), 0);
	t.dport = 54;
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(gauge(st, "rule.1"), 2);
	assert_int_equal(gauge(st, "rule.2"), 2);
	assert_int_equal(gauge(st, "rule.4"), 2);
	assert_int_equal(gauge(st, "rule.5"), 1);
	assert_int_equal(pf_test_ctr(st, "default_deny"), 2);
	assert_int_equal(gauge(st, "acl6_contexts"), 1);
	assert_int_equal(pf_test_ctr(st, "acl_not_ipv4"), 0);
	done(st, topo);
}

static void
test_ipv6_fragments(void **state)
{
	static const char *const nonfirst[] = { "", "    nonfirst_fragments: ports-unknown\n" };
	char params[256];
	struct pf_topo *topo;
	struct pf_stage *st;
	struct tpkt t;
	int k;

	for (k = 0; k < 2; k++) {
		snprintf(params, sizeof(params),
			 "    rules:\n"
			 "      - permit src 2001:db8::/32 proto udp dport 53\n"
			 "      - permit src 2001:db8:9::/48 proto udp\n%s", nonfirst[k]);
		st = acl_stage(params, &topo);
		t = udp6(1, 1, 2, 2, 1000, 53);
		t.mf = true;                            /* first fragment: has ports */
		assert_int_equal(one(st, &t), 1);
		t.mf = false;
		t.frag_off = 100;                       /* non-first: ports unknown */
		assert_int_equal(one(st, &t), k == 0 ? 1 : 0);
		t = udp6(9, 1, 2, 2, 1000, 53);
		t.frag_off = 100;                       /* a rule without ports matches */
		t.ext = 8;
		assert_int_equal(one(st, &t), 1);
		/* Truncated UDP: malformed, only rules without ports. */
		t = udp6(1, 1, 2, 2, 1000, 53);
		t.l4_len = 4;
		assert_int_equal(one(st, &t), 0);
		t = udp6(9, 1, 2, 2, 1000, 53);
		t.l4_len = 4;
		assert_int_equal(one(st, &t), 1);
		assert_int_equal(pf_test_ctr(st, "nonfirst_fragment"), 2);
		assert_int_equal(pf_test_ctr(st, "l4_malformed"), 2);
		done(st, topo);
	}
}

/* IPv4 and IPv6 in one burst, stateless and stateful: verdicts in place. */
static void
test_ipv6_mixed_burst(void **state)
{
	static const char *const extra[] = { "", "    sessions: 64\n" };
	char params[256];
	struct pf_topo *topo;
	struct pf_stage *st;
	struct tpkt t[8];
	int k;

	for (k = 0; k < 2; k++) {
		snprintf(params, sizeof(params),
			 "    rules:\n"
			 "      - permit src 2001:db8:1::/48 proto udp\n"
			 "      - permit src 10.0.0.0/8 proto udp\n%s", extra[k]);
		st = acl_stage(params, &topo);
		t[0] = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 1, 2);
		t[1] = udp6(1, 1, 2, 2, 1, 2);
		t[2] = udp(IP(11, 0, 0, 1), IP(1, 1, 1, 1), 1, 2);
		t[3] = udp6(2, 1, 2, 2, 1, 2);
		t[4] = udp6(1, 9, 2, 2, 1, 2);
		t[4].frag_off = 3;
		t[5] = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 1, 2);
		t[6] = udp6(1, 1, 2, 2, 1, 2);
		t[6].proto = 58;
		t[7] = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 1, 2);
		t[7].frag_off = 3;
		burst(st, t, 8, (const uint16_t[]){ 1, 1, 0, 0, 1, 1, 0, 1 });
		assert_int_equal(gauge(st, "rule.1"), 2);
		assert_int_equal(gauge(st, "rule.2"), 3);
		done(st, topo);
	}
}

/*
 * IPv6 keys in place (no extension headers) and copied (behind them) in one
 * burst, stateless: the all-IPv6 path classifies both kinds together; a
 * TCP header too short for its data offset or a payload length that cuts
 * the ports leaves the fast path (malformed, only rules without ports).
 */
static void
test_ipv6_inplace_burst(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = acl_stage(
		"    rules:\n"
		"      - permit src 2001:db8:1::/48 proto udp dport 53\n"
		"      - permit src 2001:db8:1::/48 proto tcp dport 80\n"
		"      - permit src 2001:db8:2::/48\n", &topo);
	static const uint16_t want[6] = { 1, 0, 1, 0, 1, 0 };
	struct tpkt t[6];

	t[0] = udp6(1, 1, 2, 2, 1000, 53);
	t[1] = udp6(1, 1, 2, 2, 1000, 54);
	t[2] = udp6(1, 1, 2, 2, 1000, 53);
	t[2].ext = 8;
	t[3] = udp6(1, 1, 2, 2, 1000, 54);
	t[3].ext = 16;
	t[4] = udp6(1, 1, 2, 2, 1000, 80);
	t[4].proto = 6;
	t[5] = t[4];
	t[5].dport = 81;
	burst(st, t, 6, want);
	assert_int_equal(gauge(st, "rule.1"), 2);
	assert_int_equal(gauge(st, "rule.2"), 1);
	assert_int_equal(pf_test_ctr(st, "default_deny"), 3);
	assert_int_equal(pf_test_ctr(st, "acl_deny"), 3);

	/* Data offset 4, then 6 with a 20-byte header, then UDP cut to 6 bytes:
	 * malformed, so only rule 3 (no ports) can match. */
	t[0] = udp6(1, 1, 2, 2, 1000, 80);
	t[0].proto = 6;
	t[0].tcp_doff = 4;
	t[1] = t[0];
	t[1].tcp_doff = 6;
	t[2] = udp6(1, 1, 2, 2, 1000, 53);
	t[2].l4_len = 6;
	t[3] = t[0];
	t[3].src6[5] = 2;
	burst(st, t, 4, (const uint16_t[]){ 0, 0, 0, 1 });
	assert_int_equal(pf_test_ctr(st, "l4_malformed"), 4);
	assert_int_equal(gauge(st, "rule.3"), 1);
	done(st, topo);
}

/* ---- x4 groups ---------------------------------------------------------- */

/* One 802.1Q tag in front of the EtherType, as rx leaves such a frame. */
static struct rte_mbuf *
vlan_tag(struct rte_mbuf *m)
{
	uint8_t *d;

	assert_non_null(rte_pktmbuf_prepend(m, 4));
	d = rte_pktmbuf_mtod(m, uint8_t *);
	memmove(d, d + 4, 12);
	d[12] = 0x81, d[13] = 0x00, d[14] = 0, d[15] = 7;
	pf_meta(m)->l2_len = 18;
	pf_meta(m)->vlan_tci = 7;
	pf_meta(m)->flags |= PF_META_VLAN;
	return m;
}

enum { X4_V4_KINDS = 17, X4_V6_KINDS = 13 };

/* Packet kind @p k of the IPv4 (@p v6 false) or IPv6 set; kind 0 is the plain one. */
static struct rte_mbuf *
x4_pkt(bool v6, unsigned int k, uint16_t i)
{
	struct tpkt t = v6 ? udp6(1, i, 2, 2, 1000, 53) : udp(IP(10, 0, 0, i), 2, 1000, 53);
	struct rte_mbuf *m;

	if (!v6) {
		switch (k) {
		case 0: t.dport = 54; break;                    /* rule 3 */
		case 1: break;                                  /* rule 1: deny */
		case 2: t.proto = 6, t.dport = 80; break;       /* rule 2 */
		case 3: t.proto = 6, t.dport = 80, t.tcp_doff = 4; break;
		case 4: t.proto = 6, t.dport = 80, t.tcp_doff = 15; break;
		case 5: t.proto = 6, t.dport = 80, t.tcp_doff = 6, t.l4_len = 20; break;
		case 6: t.proto = 6, t.dport = 80, t.tcp_doff = 6, t.l4_len = 24; break;
		case 7: t.l4_len = 7; break;
		case 8: t.frag_off = 10; break;
		case 9: t.proto = 1; break;
		case 10: t.proto = 132, t.dport = 54; break;
		case 14: t = udp6(1, i, 2, 2, 1000, 53); break;
		case 16: t.proto = 6, t.dport = 80, t.l4_len = 19; break;
		default: break;
		}
	} else {
		switch (k) {
		case 0: t.dport = 54; break;                    /* default deny */
		case 1: break;                                  /* rule 4 */
		case 2: t.proto = 6, t.dport = 80; break;       /* rule 5 */
		case 3: t.proto = 6, t.dport = 80, t.tcp_doff = 4; break;
		case 4: t.proto = 6, t.dport = 80, t.tcp_doff = 6, t.l4_len = 20; break;
		case 5: t.ext = 8; break;
		case 6: t.l4_len = 6; break;
		case 7: t.frag_off = 3; break;
		case 10: t = udp(IP(10, 0, 0, i), 2, 1000, 53); break;
		case 12: t.proto = 6, t.dport = 80, t.l4_len = 12; break;
		default: break;
		}
	}
	m = tpkt_mbuf(&t);
	if (!v6 && k == 11)
		m = vlan_tag(m);
	else if (!v6 && k == 12)
		rte_pktmbuf_trim(m, 4);                 /* UDP header cut by the frame */
	else if (!v6 && k == 13)
		assert_non_null(rte_pktmbuf_append(m, 10));     /* trailer beyond the IP length */
	else if (v6 && k == 8)
		m = vlan_tag(m);
	else if (v6 && k == 9)
		rte_pktmbuf_trim(m, 2);
	else if (v6 && k == 11)
		pf_meta(m)->l4_proto = 6;       /* another upper layer than the header's */
	else if (!v6 && k == 15)
		pf_meta(m)->cls = PF_CLASS_ARP;
	return m;
}

/*
 * Every packet kind at every place of bursts of plain packets, in place or
 * not (the x4 group takes four plain packets, the one-by-one path the
 * rest), with and without the direct-hand-over hint (the gather without
 * prefetch): edges, counters and rule hits as when the packets go one
 * burst each.
 */
static void
test_x4_groups(void **state)
{
	static const char params[] =
		"    nonfirst_fragments: ports-unknown\n"
		"    rules:\n"
		"      - deny proto udp dport 53 src 10.0.0.0/8\n"
		"      - permit proto tcp dport 80 src 10.0.0.0/8\n"
		"      - permit src 10.0.0.0/8 proto udp sport 0-65535\n"
		"      - permit src 2001:db8:1::/48 proto udp dport 53\n"
		"      - permit src 2001:db8:1::/48 proto tcp dport 80\n"
		"      - permit proto icmp\n"
		"      - permit proto sctp\n";
	static const uint16_t sizes[] = { 4, 7, 8, 9, 12 };
	struct pf_topo *ta, *tb;
	struct pf_stage *a = acl_stage(params, &ta), *b = acl_stage(params, &tb);
	struct rte_mbuf *m[16], *one_m;
	uint16_t e[16], e1, i, p, n, s, hint = 0;
	unsigned int fam, k, kinds;
	char name[16];

	for (fam = 0; fam < 2; fam++) {
		kinds = fam ? X4_V6_KINDS : X4_V4_KINDS;
		for (k = 0; k < kinds; k++)
			for (s = 0; s < RTE_DIM(sizes); s++)
				for (p = 0; p < sizes[s]; p++) {
					n = sizes[s];
					for (i = 0; i < n; i++)
						m[i] = x4_pkt(fam, i == p ? k : 0, i);
					a->in_burst_in_port = hint;
					pf_test_process(a, m, n, e);
					a->in_burst_in_port = 0;
					hint ^= 1;
					pf_test_free(m, n);
					for (i = 0; i < n; i++) {
						one_m = x4_pkt(fam, i == p ? k : 0, i);
						pf_test_process(b, &one_m, 1, &e1);
						rte_pktmbuf_free(one_m);
						if (e[i] != e1)
							fail_msg("family %u kind %u at %u of %u: packet %u edge %u, one by one %u",
								 fam, k, p, n, i, e[i], e1);
					}
				}
	}
	pf_test_ctrs_agree(a, b, b->ctrs, "x4", "one by one");
	for (k = 1; k <= 7; k++) {
		snprintf(name, sizeof(name), "rule.%u", k);
		assert_int_equal(gauge(a, name), gauge(b, name));
		assert_true(gauge(a, name) != 0);
	}
	assert_true(pf_test_ctr(a, "l4_malformed") != 0);
	assert_true(pf_test_ctr(a, "nonfirst_fragment") != 0);
	done(a, ta);
	done(b, tb);
}

/* ---- sessions ----------------------------------------------------------- */

#define SEC 1000000000ull

static void
test_reflect_sessions(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st;
	struct rte_mbuf *m[4];
	struct tpkt t;
	uint16_t e[4], i;

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(1000 * SEC);
	st = acl_stage("    rules: [\"permit-reflect src 10.0.0.0/8 proto udp\"]\n"
		       "    session_timeouts: { udp: 5, other: 2 }\n", &topo);
	/* Return traffic without a session: denied. */
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4000);
	assert_int_equal(one(st, &t), 0);
	/* Outbound opens the session, the reply passes without a rule lookup. */
	t = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 4000, 53);
	assert_int_equal(one(st, &t), 1);
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4000);
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(pf_test_ctr(st, "session_created"), 1);
	assert_int_equal(pf_test_ctr(st, "session_permit"), 1);
	assert_int_equal(gauge(st, "sessions"), 1);
	/* Another port of the same hosts is another flow. */
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4001);
	assert_int_equal(one(st, &t), 0);
	/* Each packet refreshes the timeout; 4 s later still alive, 6 s later gone. */
	pf_clock_advance_ns(1004 * SEC);
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4000);
	assert_int_equal(one(st, &t), 1);
	pf_clock_advance_ns(1010 * SEC);
	assert_int_equal(one(st, &t), 0);
	assert_int_equal(pf_test_ctr(st, "session_expired"), 1);
	assert_int_equal(gauge(st, "sessions"), 0);

	/* Same burst: the reply right behind the packet that opens the session. */
	t = udp(IP(10, 0, 0, 2), IP(1, 1, 1, 1), 4000, 53);
	m[0] = tpkt_mbuf(&t);
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 2), 53, 4000);
	m[1] = tpkt_mbuf(&t);
	m[2] = tpkt_mbuf(&t);
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 2), 53, 4002);
	m[3] = tpkt_mbuf(&t);
	pf_test_process(st, m, 4, e);
	assert_int_equal(e[0], 1);
	assert_int_equal(e[1], 1);
	assert_int_equal(e[2], 1);
	assert_int_equal(e[3], 0);
	pf_test_free(m, 4);
	assert_int_equal(pf_test_ctr(st, "session_permit"), 4);

	/* The idle hook sweeps expired sessions, 8 bursts' worth of slots a call. */
	pf_clock_advance_ns(1100 * SEC);
	for (i = 0; i < 65537 / 256 + 1; i++)
		st->ops->dp.idle(st, pf_now_ns());
	assert_int_equal(gauge(st, "sessions"), 0);
	assert_int_equal(pf_test_ctr(st, "session_expired"), 2);
	done(st, topo);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

static void
test_ipv6_reflect_sessions(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st;
	struct rte_mbuf *m[4];
	struct tpkt t, r4;
	uint16_t e[4];

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(1000 * SEC);
	st = acl_stage("    rules:\n"
		       "      - permit-reflect src 2001:db8:1::/48 proto udp\n"
		       "      - permit-reflect src 10.0.0.0/8 proto udp\n"
		       "    session_timeouts: { udp: 5 }\n", &topo);
	t = udp6(2, 2, 1, 1, 53, 4000);
	assert_int_equal(one(st, &t), 0);               /* reply before the flow */
	t = udp6(1, 1, 2, 2, 4000, 53);
	assert_int_equal(one(st, &t), 1);               /* opens the session */
	t = udp6(2, 2, 1, 1, 53, 4000);
	assert_int_equal(one(st, &t), 1);
	t.dport = 4001;
	assert_int_equal(one(st, &t), 0);               /* another flow */
	/* An IPv4 session with the same low 32 bits is another one. */
	r4 = udp(0x20010db8, 0x20010db8, 53, 4000);
	assert_int_equal(one(st, &r4), 0);
	assert_int_equal(pf_test_ctr(st, "session_created"), 1);
	assert_int_equal(pf_test_ctr(st, "session_permit"), 1);
	/* Same burst, both families. */
	t = udp6(1, 1, 2, 3, 4000, 53);
	m[0] = tpkt_mbuf(&t);
	r4 = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 4000, 53);
	m[1] = tpkt_mbuf(&r4);
	t = udp6(2, 3, 1, 1, 53, 4000);
	m[2] = tpkt_mbuf(&t);
	r4 = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4000);
	m[3] = tpkt_mbuf(&r4);
	pf_test_process(st, m, 4, e);
	pf_test_free(m, 4);
	assert_int_equal(e[0], 1);
	assert_int_equal(e[1], 1);
	assert_int_equal(e[2], 1);
	assert_int_equal(e[3], 1);
	assert_int_equal(pf_test_ctr(st, "session_created"), 3);
	assert_int_equal(pf_test_ctr(st, "session_permit"), 3);
	assert_int_equal(gauge(st, "sessions"), 3);
	/* Expiry as for IPv4. */
	pf_clock_advance_ns(1100 * SEC);
	t = udp6(2, 2, 1, 1, 53, 4000);
	assert_int_equal(one(st, &t), 0);
	done(st, topo);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

/*
 * A session table and no permit-reflect rule: no packet can hit or open a
 * session, so bursts take the stateless path (same verdicts, no session
 * counters) until a reload brings a reflect rule; sessions it opened keep
 * admitting their replies after a reload that drops the rule, until they
 * expire. The trace names the rule of a packet classified in place, even
 * right after a packet that was not IP.
 */
static void
test_sessions_without_reflect(void **state)
{
	struct tpkt out = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 4000, 53);
	struct tpkt back = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4000);
	struct pf_topo *topo, *topo2, *topo3;
	struct pf_errs errs = { 0 };
	struct pf_stage *st;
	struct rte_mbuf *m;
	char buf[128], *y;
	uint16_t e;
	int si;

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(4000 * SEC);
	st = acl_stage("    rules: [\"permit src 10.0.0.0/8 proto udp\"]\n"
		       "    sessions: 64\n    session_timeouts: { udp: 5 }\n", &topo);
	assert_int_equal(one(st, &out), 1);
	assert_int_equal(one(st, &back), 0);
	assert_int_equal(pf_test_ctr(st, "permit"), 1);
	assert_int_equal(pf_test_ctr(st, "default_deny"), 1);
	assert_int_equal(pf_test_ctr(st, "session_created"), 0);
	assert_int_equal(gauge(st, "sessions"), 0);
	/* Trace: a packet that is not IP, then one classified in its own header. */
	m = tpkt_mbuf(&out);
	pf_meta(m)->cls = PF_CLASS_ARP;
	pf_test_process(st, &m, 1, &e);
	rte_pktmbuf_free(m);
	m = tpkt_mbuf(&out);
	pf_test_process(st, &m, 1, &e);
	st->ops->obs.trace(st, m, buf, sizeof(buf));
	rte_pktmbuf_free(m);
	assert_int_equal(e, 1);
	assert_memory_equal(buf, "rule 1: permit src 10.0.0.0/8 ", 30);

	/* A reflect rule: the session path, sessions open. */
	si = pf_topo_stage_index(topo, "acl");
	y = acl_topo_yaml("    rules: [\"permit-reflect src 10.0.0.0/8 proto udp\"]\n"
			  "    sessions: 64\n    session_timeouts: { udp: 5 }\n");
	assert_int_equal(pf_topo_load_string("inline.yaml", y, &topo2, &errs), 0);
	free(y);
	assert_int_equal(pf_stage_update(st, &topo2->stages[si], &errs), 0);
	assert_int_equal(one(st, &out), 1);
	assert_int_equal(pf_test_ctr(st, "session_created"), 1);
	/* Back to no reflect rule: the live session still admits the reply. */
	y = acl_topo_yaml("    rules: [\"permit src 10.0.0.0/8 proto udp\"]\n"
			  "    sessions: 64\n    session_timeouts: { udp: 5 }\n");
	assert_int_equal(pf_topo_load_string("inline.yaml", y, &topo3, &errs), 0);
	free(y);
	assert_int_equal(pf_stage_update(st, &topo3->stages[si], &errs), 0);
	assert_int_equal(one(st, &back), 1);
	assert_int_equal(pf_test_ctr(st, "session_permit"), 1);
	st->ops->obs.trace(st, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "session hit: no rule lookup");
	/* Expired and swept: stateless again, the reply denied, nothing opened. */
	pf_clock_advance_ns(4010 * SEC);
	st->ops->dp.idle(st, pf_now_ns());
	assert_int_equal(gauge(st, "sessions"), 0);
	assert_int_equal(pf_test_ctr(st, "session_expired"), 1);
	assert_int_equal(one(st, &back), 0);
	assert_int_equal(one(st, &out), 1);
	assert_int_equal(pf_test_ctr(st, "session_created"), 1);
	assert_int_equal(gauge(st, "sessions"), 0);
	pf_clock_set_mode(PF_CLOCK_WALL);
	done(st, topo);
	pf_topo_free(topo2);
	pf_topo_free(topo3);
}

static void
test_tcp_session_timeouts(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st;
	uint32_t a = IP(10, 0, 0, 1), b = IP(1, 1, 1, 1);
	struct tpkt t;
	uint64_t now = 2000 * SEC;

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(now);
	st = acl_stage("    rules: [\"permit-reflect src 10.0.0.0/8 proto tcp\"]\n"
		       "    session_timeouts: { tcp_established: 100, tcp_transient: 10 }\n",
		       &topo);
	t = tcp(a, b, 1000, 80, RTE_TCP_SYN_FLAG);
	assert_int_equal(one(st, &t), 1);
	t = tcp(b, a, 80, 1000, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(one(st, &t), 1);
	t = tcp(a, b, 1000, 80, RTE_TCP_ACK_FLAG);
	assert_int_equal(one(st, &t), 1);
	/* Established: 50 s of silence is fine (transient would have expired). */
	pf_clock_advance_ns(now += 50 * SEC);
	t = tcp(b, a, 80, 1000, RTE_TCP_ACK_FLAG);
	assert_int_equal(one(st, &t), 1);
	/* FIN shortens the timeout to tcp_transient. */
	t = tcp(b, a, 80, 1000, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(one(st, &t), 1);
	pf_clock_advance_ns(now += 11 * SEC);
	t = tcp(b, a, 80, 1000, RTE_TCP_ACK_FLAG);
	assert_int_equal(one(st, &t), 0);
	/* A handshake that never completes lives tcp_transient only. */
	t = tcp(a, b, 1001, 80, RTE_TCP_SYN_FLAG);
	assert_int_equal(one(st, &t), 1);
	pf_clock_advance_ns(now += 11 * SEC);
	t = tcp(b, a, 80, 1001, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(one(st, &t), 0);
	assert_int_equal(pf_test_ctr(st, "session_created"), 2);
	assert_int_equal(pf_test_ctr(st, "session_expired"), 2);
	done(st, topo);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

static void
test_session_table_full(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st;
	struct rte_mbuf *m[12];
	uint16_t e[12], i;
	struct tpkt t;

	pf_clock_set_mode(PF_CLOCK_PCAP);
	pf_clock_advance_ns(3000 * SEC);
	st = acl_stage("    rules: [\"permit-reflect proto udp\"]\n    sessions: 8\n"
		       "    session_timeouts: { udp: 10 }\n", &topo);
	for (i = 0; i < 12; i++) {
		t = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), (uint16_t)(1000 + i), 53);
		m[i] = tpkt_mbuf(&t);
	}
	pf_test_process(st, m, 12, e);
	for (i = 0; i < 12; i++)
		assert_int_equal(e[i], i < 8 ? 1 : 0);
	pf_test_free(m, 12);
	assert_int_equal(pf_test_ctr(st, "session_full"), 4);
	assert_int_equal(gauge(st, "sessions"), 8);
	/* Existing sessions still pass; once they expire there is room again. */
	t = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 1003);
	assert_int_equal(one(st, &t), 1);
	pf_clock_advance_ns(3020 * SEC);
	t = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 2000, 53);
	assert_int_equal(one(st, &t), 1);
	assert_int_equal(pf_test_ctr(st, "session_full"), 4);
	done(st, topo);
	pf_clock_set_mode(PF_CLOCK_WALL);
}

/* ---- live update -------------------------------------------------------- */

static void
test_update(void **state)
{
	struct pf_topo *topo, *topo2, *topo3;
	struct pf_stage *st;
	struct pf_errs errs = { 0 };
	char *y;
	int si;
	struct tpkt out = udp(IP(10, 0, 0, 1), IP(1, 1, 1, 1), 4000, 53);
	struct tpkt back = udp(IP(1, 1, 1, 1), IP(10, 0, 0, 1), 53, 4000);
	struct tpkt other = udp(IP(10, 0, 0, 9), IP(1, 1, 1, 1), 4000, 53);
	struct tpkt v6 = udp6(1, 1, 2, 2, 4000, 53);

	st = acl_stage("    rules: [\"permit-reflect src 10.0.0.0/8\"]\n", &topo);
	assert_int_equal(one(st, &out), 1);
	assert_int_equal(one(st, &v6), 0);
	assert_int_equal(gauge(st, "acl6_contexts"), 0);
	/* New rules: deny everything but one IPv6 prefix. The session survives the swap. */
	y = acl_topo_yaml("    rules: [\"deny src 10.0.0.0/8\", \"permit src 2001:db8:1::/48\", "
			  "\"deny\"]\n");
	assert_int_equal(pf_topo_load_string("inline.yaml", y, &topo2, &errs), 0);
	free(y);
	si = pf_topo_stage_index(topo2, "acl");
	assert_int_equal(pf_stage_update(st, &topo2->stages[si], &errs), 0);
	assert_int_equal(gauge(st, "rules"), 3);
	assert_int_equal(gauge(st, "reloads"), 1);
	assert_int_equal(gauge(st, "acl6_contexts"), 1);
	assert_int_equal(one(st, &v6), 1);
	assert_int_equal(gauge(st, "rule.2"), 1);
	assert_int_equal(one(st, &back), 1);
	assert_int_equal(one(st, &out), 1);
	assert_int_equal(one(st, &other), 0);
	assert_int_equal(gauge(st, "rule.1"), 1);
	/* A reload that cannot apply changes nothing. */
	y = acl_topo_yaml("    rules: [\"permit\"]\n    sessions: 1024\n");
	assert_int_equal(pf_topo_load_string("inline.yaml", y, &topo3, &errs), 0);
	free(y);
	assert_int_equal(pf_stage_update(st, &topo3->stages[si], &errs), -EINVAL);
	assert_string_equal(errs.e[0].msg, "stages.acl.sessions: changing the session table size "
			    "(65536 -> 1024) needs a restart");
	assert_int_equal(one(st, &other), 0);
	pf_topo_free(topo3);
	done(st, topo);
	pf_topo_free(topo2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_parse_ok),
		cmocka_unit_test(test_rule_parse_errors),
		cmocka_unit_test(test_rule_parse_ipv6),
		cmocka_unit_test(test_rule_file_errors),
		cmocka_unit_test(test_param_errors),
		cmocka_unit_test(test_verdicts_and_counters),
		cmocka_unit_test(test_rules_file),
		cmocka_unit_test(test_port_edges),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_fragments_and_malformed),
		cmocka_unit_test(test_not_ipv4),
		cmocka_unit_test(test_burst_sizes),
		cmocka_unit_test(test_reflect_sessions),
		cmocka_unit_test(test_tcp_session_timeouts),
		cmocka_unit_test(test_ipv6_verdicts),
		cmocka_unit_test(test_ipv6_fragments),
		cmocka_unit_test(test_ipv6_mixed_burst),
		cmocka_unit_test(test_ipv6_inplace_burst),
		cmocka_unit_test(test_x4_groups),
		cmocka_unit_test(test_ipv6_reflect_sessions),
		cmocka_unit_test(test_session_table_full),
		cmocka_unit_test(test_sessions_without_reflect),
		cmocka_unit_test(test_update),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
