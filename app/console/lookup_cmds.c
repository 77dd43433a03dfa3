/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lookups on the stats socket: a flow run through a stage's running tables,
 * read only (the stage's show op, "match" table).
 *
 *   /pipefwd/acl_match,STAGE,SRC,DST,PROTO[,SPORT,DPORT][,in=PORT][,frag]
 *        the rule (number, text, file:line) or the session that decides the
 *        flow, the action, the edge and the counter that would fire. STAGE
 *        may name a stage with instances: the flow hash picks the instance,
 *        as it picks the ring of a packet of that flow.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_flowhash.h"
#include "pf_runtime.h"
#include "pf_sink.h"

#define LOOKUP_ERR 240

static const struct {
	const char *name;
	uint8_t proto;
} lookup_protos[] = {
	{ "icmp", IPPROTO_ICMP }, { "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
	{ "gre", IPPROTO_GRE }, { "esp", IPPROTO_ESP }, { "sctp", IPPROTO_SCTP },
	{ "icmpv6", IPPROTO_ICMPV6 },
};

static bool
has_table(const struct pf_stage *st, const char *what)
{
	const char *const *t = st->ops->obs.show_tables;

	for (; t != NULL && *t != NULL; t++)
		if (strcmp(*t, what) == 0)
			return true;
	return false;
}

/* "the stages with a TABLE table: a, b" into @p buf (for an error). */
static void
list_stages(const struct pf_runtime *rt, const char *what, char *buf, size_t len)
{
	size_t off = 0;
	uint16_t i;

	buf[0] = '\0';
	for (i = 0; i < rt->n_stages && off < len; i++) {
		const struct pf_stage_conf *sc = rt->stages[i]->conf;

		if (!has_table(rt->stages[i], what) || sc->instance != 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", sc->group);
	}
	if (off == 0)
		snprintf(buf, len, "none");
}

static bool
parse_u16(const char *s, uint16_t *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || n > 65535)
		return false;
	*v = (uint16_t)n;
	return true;
}

static bool
parse_proto(const char *s, uint8_t *proto)
{
	uint16_t v;
	size_t i;

	for (i = 0; i < RTE_DIM(lookup_protos); i++)
		if (strcmp(s, lookup_protos[i].name) == 0) {
			*proto = lookup_protos[i].proto;
			return true;
		}
	if (!parse_u16(s, &v) || v > 255)
		return false;
	*proto = (uint8_t)v;
	return true;
}

static bool
proto_has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP;
}

/*
 * The instance of a stage with instances that a packet of @p tu reaches:
 * the flow hash of a frame holding the tuple (pf_flowhash.h reads a frame).
 */
static uint16_t
tuple_instance(const struct pf_tuple *tu, uint16_t n_inst)
{
	uint8_t frame[14 + 40 + 4] = { 0 };
	struct rte_mbuf m;
	struct pf_meta *md;
	uint8_t *ip = frame + 14;
	uint16_t l3 = tu->family == 6 ? 40 : 20;

	memset(&m, 0, sizeof(m));
	m.buf_addr = frame;
	m.data_len = (uint16_t)(14 + l3 + 4);
	md = pf_meta(&m);
	md->l2_len = 14;
	md->l3_len = (uint8_t)l3;
	md->l4_proto = tu->proto;
	md->flags = tu->nonfirst ? PF_META_IP_FRAG | PF_META_IP_NONFIRST : 0;
	if (tu->family == 6) {
		md->cls = PF_CLASS_IPV6;
		ip[0] = 0x60;
		ip[5] = 4;                        /* payload length: the ports */
		ip[6] = tu->proto;
		memcpy(ip + 8, tu->src, 16);
		memcpy(ip + 24, tu->dst, 16);
	} else {
		md->cls = PF_CLASS_IPV4;
		ip[0] = 0x45;
		ip[3] = 24;                       /* total length: header and ports */
		ip[9] = tu->proto;
		if (tu->nonfirst)
			ip[7] = 1;                /* fragment offset 8 */
		memcpy(ip + 12, tu->src, 4);
		memcpy(ip + 16, tu->dst, 4);
	}
	ip[l3] = (uint8_t)(tu->sport >> 8);
	ip[l3 + 1] = (uint8_t)tu->sport;
	ip[l3 + 2] = (uint8_t)(tu->dport >> 8);
	ip[l3 + 3] = (uint8_t)tu->dport;
	return (uint16_t)pf_flow_pick(pf_flow_hash(&m), n_inst);
}

/*
 * "STAGE,SRC,DST,PROTO[,SPORT,DPORT][,in=PORT][,frag]" into @p tu and the
 * stage. Returns NULL, or what is wrong (in @p err).
 */
static const char *
parse_match(const struct pf_runtime *rt, const char *params, struct pf_tuple *tu,
	    const struct pf_stage **stp, char *err, size_t len)
{
	char buf[256], names[160], *save = NULL, *w[8];
	const struct pf_stage *st = NULL;
	uint16_t n = 0, i, pos;
	int fam;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return "usage: /pipefwd/acl_match,STAGE,SRC,DST,PROTO[,SPORT,DPORT][,in=PORT][,frag]";
	for (w[n] = strtok_r(buf, ",", &save); w[n] != NULL && n + 1 < (uint16_t)RTE_DIM(w);)
		w[++n] = strtok_r(NULL, ",", &save);
	if (n < 4)
		return "usage: /pipefwd/acl_match,STAGE,SRC,DST,PROTO[,SPORT,DPORT][,in=PORT][,frag]";
	memset(tu, 0, sizeof(*tu));
	tu->in_port = PF_PORT_NONE;
	for (i = 0; i < rt->n_stages && st == NULL; i++)
		if (strcmp(rt->stages[i]->conf->name, w[0]) == 0 ||
		    (strcmp(rt->stages[i]->conf->group, w[0]) == 0 &&
		     rt->stages[i]->conf->instance == 0))
			st = rt->stages[i];
	if (st == NULL || !has_table(st, "match")) {
		list_stages(rt, "match", names, sizeof(names));
		snprintf(err, len, "%s '%.40s' (stages that match flows: %s)",
			 st == NULL ? "unknown stage" : "nothing to match in stage", w[0], names);
		return err;
	}
	fam = strchr(w[1], ':') != NULL ? 6 : 4;
	if (inet_pton(fam == 6 ? AF_INET6 : AF_INET, w[1], tu->src) != 1 ||
	    inet_pton(fam == 6 ? AF_INET6 : AF_INET, w[2], tu->dst) != 1) {
		snprintf(err, len, "'%.40s' and '%.40s': want two IPv4 or two IPv6 addresses",
			 w[1], w[2]);
		return err;
	}
	tu->family = (uint8_t)fam;
	if (!parse_proto(w[3], &tu->proto)) {
		snprintf(err, len, "protocol '%.20s': want tcp, udp, icmp, sctp, icmpv6, gre, esp "
			 "or a number 0-255", w[3]);
		return err;
	}
	pos = 4;
	if (proto_has_ports(tu->proto)) {
		if (n < 6 || !parse_u16(w[4], &tu->sport) || !parse_u16(w[5], &tu->dport)) {
			snprintf(err, len, "%s needs a source and a destination port (0-65535)",
				 w[3]);
			return err;
		}
		pos = 6;
	}
	for (; pos < n; pos++) {
		if (strcmp(w[pos], "frag") == 0) {
			tu->nonfirst = true;
		} else if (strncmp(w[pos], "in=", 3) == 0) {
			for (i = 0; i < rt->topo->n_ports; i++)
				if (strcmp(rt->topo->ports[i].name, w[pos] + 3) == 0)
					tu->in_port = i;
			if (tu->in_port == PF_PORT_NONE) {
				snprintf(err, len, "unknown port '%.40s'", w[pos] + 3);
				return err;
			}
		} else {
			snprintf(err, len, "'%.40s': want in=PORT or frag", w[pos]);
			return err;
		}
	}
	if (st->conf->n_instances > 1)
		st = rt->stages[st->conf->first + tuple_instance(tu, st->conf->n_instances)];
	*stp = st;
	return NULL;
}

static int
cmd_acl_match(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct pf_show_req req = { .limit = 1, .port = -1, .vlan = -1, .addr = "" };
	const struct pf_stage *st = NULL;
	char err[LOOKUP_ERR], a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	struct pf_tuple tu;
	struct pf_sink out;
	const char *bad;
	int rc;

	bad = parse_match(con->rt, params, &tu, &st, err, sizeof(err));
	if (bad != NULL) {
		pf_console_error(d, bad);
		return 0;
	}
	req.tuple = &tu;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "stage", st->conf->name);
	inet_ntop(tu.family == 6 ? AF_INET6 : AF_INET, tu.src, a, sizeof(a));
	inet_ntop(tu.family == 6 ? AF_INET6 : AF_INET, tu.dst, b, sizeof(b));
	rte_tel_data_add_dict_string(d, "src", a);
	rte_tel_data_add_dict_string(d, "dst", b);
	rte_tel_data_add_dict_u64(d, "proto", tu.proto);
	if (proto_has_ports(tu.proto) && !tu.nonfirst) {
		rte_tel_data_add_dict_u64(d, "sport", tu.sport);
		rte_tel_data_add_dict_u64(d, "dport", tu.dport);
	}
	if (tu.in_port != PF_PORT_NONE)
		rte_tel_data_add_dict_string(d, "in_port", con->rt->topo->ports[tu.in_port].name);
	pf_sink_tel_init(&out, d);
	rc = st->ops->obs.show(st, "match", &req, &out);
	if (rc < 0) {
		snprintf(err, sizeof(err), "stage %s could not match the flow: %s", st->conf->name,
			 strerror(-rc));
		pf_console_error(d, err);
	}
	return 0;
}

const struct pf_cmd pf_lookup_cmds[] = {
	{ "/pipefwd/acl_match", "pipefwd acl: rule/session of STAGE,SRC,DST,PROTO[,SPORT,DPORT]",
	  cmd_acl_match, false },
	{ NULL, NULL, NULL, false },
};
