/* SPDX-License-Identifier: BSD-3-Clause */
/* Learnt routes into the running stages (app/control/pf_learnt.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_learnt.h"

unsigned int
pf_learnt_apply(struct pf_runtime *rt, const struct pf_route_op *ops, unsigned int n,
		struct pf_route_result *res)
{
	unsigned int k = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++) {
		struct pf_stage *st = rt->stages[i];

		if (st->ops->ctl.learn != NULL && st->ops->ctl.learn(st, ops, n, res) == 0)
			k++;
	}
	return k;
}

void
pf_learnt_upkeep(struct pf_runtime *rt, uint64_t now_ns)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		if (rt->stages[i]->ops->ctl.upkeep != NULL)
			rt->stages[i]->ops->ctl.upkeep(rt->stages[i], now_ns);
}

static int
port_index(const struct pf_runtime *rt, const char *name)
{
	uint16_t p;

	for (p = 0; p < rt->topo->n_ports; p++)
		if (strcmp(rt->topo->ports[p].name, name) == 0)
			return p;
	return -1;
}

/* "GW@PORT[*W]" or "@PORT" into next hop @p nh of family @p af. */
static const char *
parse_nh(const struct pf_runtime *rt, char *t, int af, struct pf_route_nh *nh)
{
	char *at = strchr(t, '@'), *w;
	int p;

	if (at == NULL)
		return "a next hop is GW@PORT or @PORT";
	*at++ = '\0';
	w = strchr(at, '*');
	if (w != NULL) {
		*w++ = '\0';
		nh->weight = (uint16_t)atoi(w);
		if (nh->weight == 0)
			return "a weight is 1..65535";
	} else {
		nh->weight = 1;
	}
	p = port_index(rt, at);
	if (p < 0)
		return "unknown port";
	nh->port = (uint16_t)p;
	memset(nh->gw, 0, sizeof(nh->gw));
	if (t[0] != '\0' && inet_pton(af == 4 ? AF_INET : AF_INET6, t, nh->gw) != 1)
		return "a gateway is an address of the prefix's family";
	return NULL;
}

const char *
pf_learnt_parse(const struct pf_runtime *rt, const char *text, struct pf_route_op *op)
{
	char buf[512], *save = NULL, *tok, *slash;
	unsigned long v;
	const char *bad;

	memset(op, 0, sizeof(*op));
	if (text == NULL || snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return "expected add|del,SRC,PREFIX[,TARGET...]";
	tok = strtok_r(buf, ",", &save);
	if (tok == NULL || (strcmp(tok, "add") != 0 && strcmp(tok, "del") != 0))
		return "expected add or del";
	op->op = tok[0] == 'a' ? PF_ROUTE_ADD : PF_ROUTE_DEL;
	tok = strtok_r(NULL, ",", &save);
	if (tok == NULL || (v = strtoul(tok, NULL, 10)) >= PF_ROUTE_SRC_MAX)
		return "a source is 0..7";
	op->src = (uint8_t)v;
	tok = strtok_r(NULL, ",", &save);
	slash = tok != NULL ? strchr(tok, '/') : NULL;
	if (slash == NULL)
		return "expected a prefix ADDR/LEN";
	*slash++ = '\0';
	op->af = strchr(tok, ':') != NULL ? 6 : 4;
	if (inet_pton(op->af == 4 ? AF_INET : AF_INET6, tok, op->prefix) != 1)
		return "not an address";
	v = strtoul(slash, NULL, 10);
	if (v > (op->af == 4 ? 32u : 128u))
		return "a prefix length over the family's";
	op->plen = (uint8_t)v;
	while (op->op == PF_ROUTE_ADD && (tok = strtok_r(NULL, ",", &save)) != NULL) {
		if (strcmp(tok, "blackhole") == 0) {
			op->kind = PF_ROUTE_BLACKHOLE;
		} else if (strcmp(tok, "unreachable") == 0) {
			op->kind = PF_ROUTE_UNREACHABLE;
		} else if (strcmp(tok, "prohibit") == 0) {
			op->kind = PF_ROUTE_PROHIBIT;
		} else {
			if (op->n_nh == PF_ROUTE_NH_MAX)
				return "too many next hops";
			bad = parse_nh(rt, tok, op->af, &op->nh[op->n_nh]);
			if (bad != NULL)
				return bad;
			op->n_nh++;
		}
	}
	if (op->op == PF_ROUTE_ADD && op->kind == PF_ROUTE_UNICAST && op->n_nh == 0)
		return "a route needs a next hop, or blackhole, unreachable or prohibit";
	return NULL;
}
