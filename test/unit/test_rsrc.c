/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route sources' decoding (app/control/rsrc.c): rtnetlink messages as FRR's
 * FPM and the kernel send them, built here byte by byte, in; the learnt-route
 * operations the stages would get, out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <cmocka.h>

#include "pf_rsrc.h"

#define MAX_OPS 65536

static struct pf_route_op ops[MAX_OPS];
static unsigned int n_ops;

static void
collect(void *arg, const struct pf_route_op *op)
{
	(void)arg;
	assert_true(n_ops < MAX_OPS);
	ops[n_ops++] = *op;
}

/* Interfaces 1 and 2 are host interfaces of ports 0 and 1; others are not ours. */
static int
port_of(void *arg, uint32_t ifindex)
{
	(void)arg;
	return ifindex == 1 ? 0 : ifindex == 2 ? 1 : -1;
}

static struct pf_rsrc *
source(bool metrics)
{
	struct pf_rsrc_conf c = { .src = 3, .table = RT_TABLE_MAIN, .metrics = metrics,
				  .port_of = port_of, .emit = collect };
	struct pf_rsrc *s = pf_rsrc_create(&c);

	assert_non_null(s);
	n_ops = 0;
	return s;
}

/* ---- a message builder ---- */

struct msg {
	union {
		struct nlmsghdr h;
		uint8_t buf[4096];
	};
	struct rtattr *nest;
};

static void
attr(struct msg *m, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *a = (struct rtattr *)(m->buf + NLMSG_ALIGN(m->h.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (uint16_t)RTA_LENGTH(len);
	if (len != 0)
		memcpy(RTA_DATA(a), data, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
	if (m->nest != NULL)
		m->nest->rta_len = (uint16_t)(m->buf + m->h.nlmsg_len - (uint8_t *)m->nest);
}

static void
attr_u32(struct msg *m, uint16_t type, uint32_t v)
{
	attr(m, type, &v, sizeof(v));
}

struct route_spec {
	uint16_t type;          /* RTM_NEWROUTE, RTM_DELROUTE */
	int af;
	const char *dst;        /* "10.1.0.0/16" */
	uint8_t rtype;          /* RTN_* (0: unicast) */
	uint8_t proto;          /* 0: RTPROT_BGP */
	uint32_t table;         /* 0: main */
	uint32_t flags;
	uint32_t oif;
	const char *gw;
	uint32_t nhid;
	uint32_t metric;
	uint8_t src_len;
	bool unspec;            /* rtm_type RTN_UNSPEC (zebra's FPM deletes) */
};

static void
route(struct msg *m, const struct route_spec *r)
{
	struct rtmsg *rm;
	uint8_t addr[16];
	char pfx[64], *slash;

	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = r->type != 0 ? r->type : RTM_NEWROUTE;
	m->h.nlmsg_len = NLMSG_LENGTH(sizeof(*rm));
	rm = NLMSG_DATA(&m->h);
	rm->rtm_family = (uint8_t)r->af;
	rm->rtm_table = (uint8_t)(r->table != 0 ? r->table : RT_TABLE_MAIN);
	rm->rtm_protocol = r->proto != 0 ? r->proto : RTPROT_BGP;
	rm->rtm_type = r->unspec ? RTN_UNSPEC : r->rtype != 0 ? r->rtype : RTN_UNICAST;
	rm->rtm_flags = r->flags;
	rm->rtm_src_len = r->src_len;
	snprintf(pfx, sizeof(pfx), "%s", r->dst);
	slash = strchr(pfx, '/');
	*slash = '\0';
	rm->rtm_dst_len = (uint8_t)atoi(slash + 1);
	assert_int_equal(inet_pton(r->af, pfx, addr), 1);
	if (rm->rtm_dst_len != 0)
		attr(m, RTA_DST, addr, r->af == AF_INET ? 4 : 16);
	if (r->oif != 0)
		attr_u32(m, RTA_OIF, r->oif);
	if (r->gw != NULL) {
		assert_int_equal(inet_pton(r->af, r->gw, addr), 1);
		attr(m, RTA_GATEWAY, addr, r->af == AF_INET ? 4 : 16);
	}
	if (r->nhid != 0)
		attr_u32(m, RTA_NH_ID, r->nhid);
	if (r->metric != 0)
		attr_u32(m, RTA_PRIORITY, r->metric);
}

/* Append a next hop to an RTA_MULTIPATH being built (open it with mp_open). */
static void
mp_open(struct msg *m)
{
	attr(m, RTA_MULTIPATH, NULL, 0);
	m->nest = (struct rtattr *)(m->buf + m->h.nlmsg_len - RTA_LENGTH(0));
}

static void
mp_hop(struct msg *m, int af, uint32_t ifindex, uint8_t hops, uint8_t flags, const char *gw)
{
	struct rtnexthop *nh = (struct rtnexthop *)(m->buf + m->h.nlmsg_len);
	uint8_t addr[16];
	struct rtattr *a;

	nh->rtnh_len = sizeof(*nh);
	nh->rtnh_flags = flags;
	nh->rtnh_hops = hops;
	nh->rtnh_ifindex = (int)ifindex;
	m->h.nlmsg_len += sizeof(*nh);
	if (gw != NULL) {
		assert_int_equal(inet_pton(af, gw, addr), 1);
		a = (struct rtattr *)(m->buf + m->h.nlmsg_len);
		a->rta_type = RTA_GATEWAY;
		a->rta_len = (uint16_t)RTA_LENGTH(af == AF_INET ? 4 : 16);
		memcpy(RTA_DATA(a), addr, af == AF_INET ? 4 : 16);
		nh->rtnh_len = (unsigned short)(nh->rtnh_len + RTA_ALIGN(a->rta_len));
		m->h.nlmsg_len += RTA_ALIGN(a->rta_len);
	}
	m->nest->rta_len = (uint16_t)(m->buf + m->h.nlmsg_len - (uint8_t *)m->nest);
}

static void
nexthop(struct msg *m, uint16_t type, int af, uint32_t id, uint32_t oif, const char *gw)
{
	struct nhmsg *nm;
	uint8_t addr[16];

	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = type;
	m->h.nlmsg_len = NLMSG_LENGTH(sizeof(*nm));
	nm = NLMSG_DATA(&m->h);
	nm->nh_family = (uint8_t)af;
	attr_u32(m, NHA_ID, id);
	if (oif != 0)
		attr_u32(m, NHA_OIF, oif);
	if (gw != NULL) {
		assert_int_equal(inet_pton(af, gw, addr), 1);
		attr(m, NHA_GATEWAY, addr, af == AF_INET ? 4 : 16);
	}
}

static void
group(struct msg *m, uint32_t id, unsigned int n, const uint32_t *ids, const uint8_t *weights)
{
	struct nexthop_grp g[16];
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = RTM_NEWNEXTHOP;
	m->h.nlmsg_len = NLMSG_LENGTH(sizeof(struct nhmsg));
	attr_u32(m, NHA_ID, id);
	memset(g, 0, sizeof(g));
	for (i = 0; i < n; i++) {
		g[i].id = ids[i];
		g[i].weight = (uint8_t)(weights[i] - 1);
	}
	attr(m, NHA_GROUP, g, (uint16_t)(n * sizeof(g[0])));
}

static void
send_route(struct pf_rsrc *s, const struct route_spec *r, int expect_rc)
{
	struct msg m;

	route(&m, r);
	assert_int_equal(pf_rsrc_msg(s, &m.h), expect_rc);
}

static void
send_msg(struct pf_rsrc *s, struct msg *m)
{
	assert_int_equal(pf_rsrc_msg(s, &m->h), 0);
}

static void
assert_gw(const struct pf_route_nh *nh, int af, const char *gw)
{
	uint8_t addr[16] = { 0 };

	if (gw != NULL)
		assert_int_equal(inet_pton(af, gw, addr), 1);
	assert_memory_equal(nh->gw, addr, 16);
}

static void
assert_prefix(const struct pf_route_op *op, int af, const char *p, uint8_t len)
{
	uint8_t addr[16] = { 0 };

	assert_int_equal(inet_pton(af, p, addr), 1);
	assert_int_equal(op->af, af == AF_INET ? 4 : 6);
	assert_int_equal(op->plen, len);
	assert_memory_equal(op->prefix, addr, 16);
	assert_int_equal(op->src, 3);
}

/* ---- cases ---- */

static void
test_add_replace_delete(void **state)
{
	struct pf_rsrc *s = source(false);

	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.20.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	assert_int_equal(n_ops, 1);
	assert_int_equal(ops[0].op, PF_ROUTE_ADD);
	assert_prefix(&ops[0], AF_INET, "10.20.0.0", 16);
	assert_int_equal(ops[0].kind, PF_ROUTE_UNICAST);
	assert_int_equal(ops[0].n_nh, 1);
	assert_int_equal(ops[0].nh[0].port, 0);
	assert_int_equal(ops[0].nh[0].weight, 1);
	assert_gw(&ops[0].nh[0], AF_INET, "10.1.0.2");
	assert_int_equal(pf_rsrc_stats(s)->routes4, 1);
	/* a new route for the prefix replaces it (IPv6 FPM routes carry no replace flag) */
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.20.0.0/16", .oif = 2,
					    .gw = "10.2.0.2" }, 0);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[1].op, PF_ROUTE_ADD);
	assert_int_equal(ops[1].nh[0].port, 1);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 1);
	/* on the link: no gateway */
	send_route(s, &(struct route_spec){ .af = AF_INET6, .dst = "2001:db8:9::/48", .oif = 1 },
		   0);
	assert_int_equal(n_ops, 3);
	assert_prefix(&ops[2], AF_INET6, "2001:db8:9::", 48);
	assert_gw(&ops[2].nh[0], AF_INET6, NULL);
	assert_int_equal(pf_rsrc_stats(s)->routes6, 1);
	/* delete, and a delete of what the source never had */
	send_route(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
					    .dst = "10.20.0.0/16" }, 0);
	assert_int_equal(n_ops, 4);
	assert_int_equal(ops[3].op, PF_ROUTE_DEL);
	assert_prefix(&ops[3], AF_INET, "10.20.0.0", 16);
	send_route(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
					    .dst = "10.21.0.0/16" }, 0);
	assert_int_equal(n_ops, 4);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 0);
	/* a default route */
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "0.0.0.0/0", .oif = 1,
					    .gw = "10.1.0.1" }, 0);
	assert_int_equal(n_ops, 5);
	assert_int_equal(ops[4].plen, 0);
	pf_rsrc_free(s);
}

static void
test_kinds(void **state)
{
	const uint8_t types[] = { RTN_BLACKHOLE, RTN_UNREACHABLE, RTN_PROHIBIT };
	const uint8_t kinds[] = { PF_ROUTE_BLACKHOLE, PF_ROUTE_UNREACHABLE, PF_ROUTE_PROHIBIT };
	struct pf_rsrc *s = source(false);
	unsigned int i;

	for (i = 0; i < 3; i++) {
		send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "192.0.2.0/24",
						    .rtype = types[i] }, 0);
		assert_int_equal(n_ops, i + 1);
		assert_int_equal(ops[i].op, PF_ROUTE_ADD);
		assert_int_equal(ops[i].kind, kinds[i]);
		assert_int_equal(ops[i].n_nh, 0);
	}
	pf_rsrc_free(s);
}

/* Everything a router must not take from a daemon, each counted by its reason. */
static void
test_skips(void **state)
{
	const struct {
		struct route_spec r;
		enum pf_rsrc_skip why;
	} cases[] = {
		{ { .af = AF_INET, .dst = "10.1.0.0/24", .oif = 1, .proto = RTPROT_KERNEL },
		  PF_RSRC_SKIP_KERNEL },
		{ { .af = AF_INET, .dst = "10.9.0.0/16", .oif = 1, .gw = "10.1.0.2", .table = 100 },
		  PF_RSRC_SKIP_TABLE },
		{ { .af = AF_INET, .dst = "10.1.0.1/32", .oif = 1, .rtype = RTN_LOCAL,
		    .table = RT_TABLE_MAIN }, PF_RSRC_SKIP_LOCAL },
		{ { .af = AF_INET, .dst = "10.1.0.255/32", .oif = 1, .rtype = RTN_BROADCAST },
		  PF_RSRC_SKIP_LOCAL },
		{ { .af = AF_INET6, .dst = "fe80::/64", .oif = 1 }, PF_RSRC_SKIP_LINK_LOCAL },
		{ { .af = AF_INET6, .dst = "ff00::/8", .oif = 1, .rtype = RTN_MULTICAST },
		  PF_RSRC_SKIP_LINK_LOCAL },
		{ { .af = AF_INET, .dst = "224.0.0.0/4", .oif = 1 }, PF_RSRC_SKIP_LINK_LOCAL },
		{ { .af = AF_INET, .dst = "169.254.0.0/16", .oif = 1 }, PF_RSRC_SKIP_LINK_LOCAL },
		{ { .af = AF_INET, .dst = "10.9.0.0/16", .oif = 1, .gw = "10.1.0.2",
		    .flags = RTM_F_CLONED }, PF_RSRC_SKIP_CLONED },
		{ { .af = AF_INET, .dst = "10.9.0.0/16", .oif = 7, .gw = "10.7.0.2" },
		  PF_RSRC_SKIP_FOREIGN },
		{ { .af = AF_INET6, .dst = "2001:db8::/32", .oif = 1, .gw = "2001:db8:1::2",
		    .src_len = 64 }, PF_RSRC_SKIP_UNSUPPORTED },
		{ { .af = AF_INET, .dst = "10.9.0.0/16", .gw = "10.1.0.2" },
		  PF_RSRC_SKIP_UNSUPPORTED },
	};
	struct pf_rsrc *s = source(false);
	struct msg m;
	unsigned int i, k;
	uint8_t v6[16];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t before[PF_RSRC_SKIP_MAX];

		memcpy(before, pf_rsrc_stats(s)->skipped, sizeof(before));
		send_route(s, &cases[i].r, 0);
		assert_int_equal(n_ops, 0);
		for (k = 0; k < PF_RSRC_SKIP_MAX; k++)
			assert_int_equal(pf_rsrc_stats(s)->skipped[k] - before[k],
					 k == cases[i].why ? 1 : 0);
	}
	/* an IPv4 route via an IPv6 gateway (RFC 5549) */
	route(&m, &(struct route_spec){ .af = AF_INET, .dst = "10.9.0.0/16", .oif = 1 });
	struct {
		uint16_t family;
		uint8_t addr[16];
	} __attribute__((packed)) via = { AF_INET6, { 0 } };
	inet_pton(AF_INET6, "fe80::1", v6);
	memcpy(via.addr, v6, 16);
	attr(&m, RTA_VIA, &via, sizeof(via));
	send_msg(s, &m);
	assert_int_equal(n_ops, 0);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_UNSUPPORTED], 3);
	/* a destination longer than its family's address */
	route(&m, &(struct route_spec){ .af = AF_INET, .dst = "10.0.0.0/8", .oif = 1 });
	((struct rtmsg *)NLMSG_DATA(&m.h))->rtm_dst_len = 33;
	send_msg(s, &m);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_MALFORMED], 1);
	assert_int_equal(pf_rsrc_stats(s)->routes4 + pf_rsrc_stats(s)->routes6, 0);
	/* a route that turns foreign takes the old one with it */
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.9.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.9.0.0/16", .oif = 7,
					    .gw = "10.7.0.2" }, 0);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[1].op, PF_ROUTE_DEL);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 0);
	pf_rsrc_free(s);
}

static void
test_multipath(void **state)
{
	struct pf_rsrc *s = source(false);
	struct msg m;

	route(&m, &(struct route_spec){ .af = AF_INET, .dst = "10.30.0.0/16" });
	mp_open(&m);
	mp_hop(&m, AF_INET, 1, 0, 0, "10.1.0.2");
	mp_hop(&m, AF_INET, 2, 2, 0, "10.2.0.2");        /* weight 3 */
	mp_hop(&m, AF_INET, 9, 0, 0, "10.9.0.2");        /* not a host interface */
	mp_hop(&m, AF_INET, 1, 0, RTNH_F_DEAD, "10.1.0.3");
	m.nest = NULL;
	send_msg(s, &m);
	assert_int_equal(n_ops, 1);
	assert_int_equal(ops[0].n_nh, 2);
	assert_int_equal(ops[0].nh[0].port, 0);
	assert_int_equal(ops[0].nh[0].weight, 1);
	assert_gw(&ops[0].nh[0], AF_INET, "10.1.0.2");
	assert_int_equal(ops[0].nh[1].port, 1);
	assert_int_equal(ops[0].nh[1].weight, 3);
	assert_gw(&ops[0].nh[1], AF_INET, "10.2.0.2");
	/* IPv6, the kernel's notification of a multipath route */
	route(&m, &(struct route_spec){ .af = AF_INET6, .dst = "2001:db8:30::/48" });
	mp_open(&m);
	mp_hop(&m, AF_INET6, 1, 0, 0, "fe80::2");
	mp_hop(&m, AF_INET6, 2, 0, 0, "fe80::3");
	m.nest = NULL;
	send_msg(s, &m);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[1].n_nh, 2);
	assert_gw(&ops[1].nh[1], AF_INET6, "fe80::3");
	/* only foreign members: not taken */
	route(&m, &(struct route_spec){ .af = AF_INET, .dst = "10.31.0.0/16" });
	mp_open(&m);
	mp_hop(&m, AF_INET, 8, 0, 0, "10.8.0.2");
	mp_hop(&m, AF_INET, 9, 0, 0, "10.9.0.2");
	m.nest = NULL;
	send_msg(s, &m);
	assert_int_equal(n_ops, 2);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_FOREIGN], 1);
	pf_rsrc_free(s);
}

/* FRR with next-hop groups: objects first, then routes naming them. */
static void
test_nexthop_objects(void **state)
{
	struct pf_rsrc *s = source(false);
	const uint32_t ids[] = { 10, 11 };
	const uint8_t w[] = { 1, 2 };
	struct msg m;

	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 10, 1, "10.1.0.2");
	send_msg(s, &m);
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 11, 2, "10.2.0.2");
	send_msg(s, &m);
	group(&m, 20, 2, ids, w);
	send_msg(s, &m);
	assert_int_equal(n_ops, 0);
	assert_int_equal(pf_rsrc_stats(s)->nexthops, 3);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.40.0.0/16", .nhid = 20 }, 0);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.41.0.0/16", .nhid = 10 }, 0);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[0].n_nh, 2);
	assert_int_equal(ops[0].nh[0].weight, 1);
	assert_int_equal(ops[0].nh[1].weight, 2);
	assert_int_equal(ops[0].nh[1].port, 1);
	assert_int_equal(ops[1].n_nh, 1);
	assert_gw(&ops[1].nh[0], AF_INET, "10.1.0.2");
	/* the same object again (a replay): nothing is sent */
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 11, 2, "10.2.0.2");
	send_msg(s, &m);
	assert_int_equal(n_ops, 2);
	/* a member changed: the group's route goes again, the other not */
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 11, 2, "10.2.0.9");
	send_msg(s, &m);
	assert_int_equal(n_ops, 3);
	assert_prefix(&ops[2], AF_INET, "10.40.0.0", 16);
	assert_gw(&ops[2].nh[1], AF_INET, "10.2.0.9");
	/* a member deleted: out of its group, the route sent with the other */
	nexthop(&m, RTM_DELNEXTHOP, AF_INET, 11, 0, NULL);
	send_msg(s, &m);
	assert_int_equal(n_ops, 4);
	assert_prefix(&ops[3], AF_INET, "10.40.0.0", 16);
	assert_int_equal(ops[3].op, PF_ROUTE_ADD);
	assert_int_equal(ops[3].n_nh, 1);
	assert_int_equal(ops[3].nh[0].port, 0);
	/* an object deleted takes the routes naming it (as the kernel does) */
	nexthop(&m, RTM_DELNEXTHOP, AF_INET, 10, 0, NULL);
	send_msg(s, &m);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 1);
	assert_int_equal(ops[4].op, PF_ROUTE_DEL);
	assert_prefix(&ops[4], AF_INET, "10.41.0.0", 16);
	/* ...and leaves the group with no member: its route goes, pending */
	assert_int_equal(ops[5].op, PF_ROUTE_DEL);
	assert_prefix(&ops[5], AF_INET, "10.40.0.0", 16);
	assert_int_equal(n_ops, 6);
	assert_int_equal(pf_rsrc_stats(s)->pending, 1);
	/* a blackhole object */
	memset(&m, 0, sizeof(m));
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 30, 0, NULL);
	attr(&m, NHA_BLACKHOLE, NULL, 0);
	send_msg(s, &m);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.42.0.0/16", .nhid = 30 }, 0);
	assert_int_equal(n_ops, 7);
	assert_int_equal(ops[6].kind, PF_ROUTE_BLACKHOLE);
	pf_rsrc_free(s);
}

/* A route naming an object not seen yet waits for it. */
static void
test_pending(void **state)
{
	struct pf_rsrc *s = source(false);
	struct msg m;

	send_route(s, &(struct route_spec){ .af = AF_INET6, .dst = "2001:db8:50::/48",
					    .nhid = 77 }, 0);
	assert_int_equal(n_ops, 0);
	assert_int_equal(pf_rsrc_stats(s)->pending, 1);
	assert_int_equal(pf_rsrc_stats(s)->routes6, 1);
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET6, 77, 2, "2001:db8:2::2");
	send_msg(s, &m);
	assert_int_equal(n_ops, 1);
	assert_int_equal(ops[0].op, PF_ROUTE_ADD);
	assert_int_equal(ops[0].nh[0].port, 1);
	assert_int_equal(pf_rsrc_stats(s)->pending, 0);
	/* its object now counts the route: deleting it takes the route */
	nexthop(&m, RTM_DELNEXTHOP, AF_INET6, 77, 0, NULL);
	send_msg(s, &m);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[1].op, PF_ROUTE_DEL);
	assert_int_equal(pf_rsrc_stats(s)->routes6, 0);
	/* an object on a foreign interface: the route waits, as pending */
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 78, 9, "10.9.0.2");
	send_msg(s, &m);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.50.0.0/16", .nhid = 78 }, 0);
	assert_int_equal(n_ops, 2);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_FOREIGN], 1);
	/* ...until it moves to one of ours */
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 78, 1, "10.1.0.2");
	send_msg(s, &m);
	assert_int_equal(n_ops, 3);
	assert_int_equal(ops[2].op, PF_ROUTE_ADD);
	pf_rsrc_free(s);
}

/* A resync: what the daemon does not say again is stale. */
static void
test_mark_sweep(void **state)
{
	struct pf_rsrc *s = source(false);
	struct msg m;

	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.60.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.61.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	nexthop(&m, RTM_NEWNEXTHOP, AF_INET, 5, 1, "10.1.0.3");
	send_msg(s, &m);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.62.0.0/16", .nhid = 5 }, 0);
	assert_int_equal(n_ops, 3);
	pf_rsrc_mark(s);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.61.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	send_msg(s, &m);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.62.0.0/16", .nhid = 5 }, 0);
	n_ops = 0;
	assert_int_equal(pf_rsrc_sweep(s), 1);
	assert_int_equal(n_ops, 1);
	assert_int_equal(ops[0].op, PF_ROUTE_DEL);
	assert_prefix(&ops[0], AF_INET, "10.60.0.0", 16);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 2);
	assert_int_equal(pf_rsrc_stats(s)->swept, 1);
	/* the next resync says nothing: everything goes, objects too */
	pf_rsrc_mark(s);
	n_ops = 0;
	assert_int_equal(pf_rsrc_sweep(s), 2);
	assert_int_equal(n_ops, 2);
	assert_int_equal(pf_rsrc_stats(s)->nexthops, 0);
	pf_rsrc_free(s);
}

static void
test_withdraw_all(void **state)
{
	struct pf_rsrc *s = source(false);

	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.70.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	send_route(s, &(struct route_spec){ .af = AF_INET6, .dst = "2001:db8:70::/48", .oif = 1,
					    .gw = "2001:db8:1::2" }, 0);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.71.0.0/16", .nhid = 9 }, 0);
	n_ops = 0;
	assert_int_equal(pf_rsrc_withdraw_all(s), 3);
	assert_int_equal(n_ops, 2);     /* the pending route was never installed */
	assert_int_equal(ops[0].op, PF_ROUTE_DEL);
	assert_int_equal(ops[1].op, PF_ROUTE_DEL);
	assert_int_equal(pf_rsrc_stats(s)->routes4 + pf_rsrc_stats(s)->routes6, 0);
	assert_int_equal(pf_rsrc_stats(s)->pending, 0);
	pf_rsrc_free(s);
}

/* The kernel's table holds a prefix at several metrics; it forwards by the best. */
static void
test_metrics(void **state)
{
	struct pf_rsrc *s = source(true);

	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.80.0.0/16", .oif = 1,
					    .gw = "10.1.0.2", .metric = 100 }, 0);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.80.0.0/16", .oif = 2,
					    .gw = "10.2.0.2", .metric = 200 }, 0);
	assert_int_equal(n_ops, 1);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_METRIC], 1);
	/* the worse one goes: nothing changes */
	send_route(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
					    .dst = "10.80.0.0/16", .metric = 200 }, 0);
	assert_int_equal(n_ops, 1);
	/* a better one comes: it replaces */
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.80.0.0/16", .oif = 2,
					    .gw = "10.2.0.3", .metric = 50 }, 0);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[1].nh[0].port, 1);
	/* the best goes while a worse one stays: only a dump can say which: rc 1 */
	send_route(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
					    .dst = "10.80.0.0/16", .metric = 50 }, 1);
	assert_int_equal(n_ops, 3);
	assert_int_equal(ops[2].op, PF_ROUTE_DEL);
	pf_rsrc_free(s);
}

/* Messages one after the other in one buffer (an FPM frame), through pf_rsrc_msgs. */
static int
send_frame(struct pf_rsrc *s, const struct route_spec *a, const struct route_spec *b)
{
	static uint8_t buf[8192];
	struct msg m;
	size_t len;

	route(&m, a);
	len = NLMSG_ALIGN(m.h.nlmsg_len);
	memcpy(buf, m.buf, len);
	if (b != NULL) {
		route(&m, b);
		memcpy(buf + len, m.buf, m.h.nlmsg_len);
		len += NLMSG_ALIGN(m.h.nlmsg_len);
	}
	return pf_rsrc_msgs(s, buf, len);
}

/*
 * zebra's FPM (dplane_fpm_nl, FRR 8.4) sends a delete with no route type, and
 * a route that changed as a delete then the new route in one frame: the
 * delete must take the route, and the pair must be one replace (applied as a
 * delete and an add, a lookup between the two finds no route).
 */
static void
test_fpm_update(void **state)
{
	struct pf_rsrc *s = source(false);

	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.20.0.0/16", .oif = 1,
					    .gw = "10.1.0.2", .metric = 20 }, 0);
	assert_int_equal(n_ops, 1);
	/* the pair: one replace, on the new next hop */
	assert_int_equal(send_frame(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
							     .dst = "10.20.0.0/16", .unspec = true,
							     .metric = 20 },
				    &(struct route_spec){ .af = AF_INET, .dst = "10.20.0.0/16",
							  .oif = 2, .gw = "10.2.0.2",
							  .metric = 20 }), 0);
	assert_int_equal(n_ops, 2);
	assert_int_equal(ops[1].op, PF_ROUTE_ADD);
	assert_int_equal(ops[1].nh[0].port, 1);
	assert_gw(&ops[1].nh[0], AF_INET, "10.2.0.2");
	assert_int_equal(pf_rsrc_stats(s)->replace_pairs, 1);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 1);
	/* a delete alone, without a type: the route goes */
	assert_int_equal(send_frame(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
							     .dst = "10.20.0.0/16", .unspec = true,
							     .metric = 20 }, NULL), 0);
	assert_int_equal(n_ops, 3);
	assert_int_equal(ops[2].op, PF_ROUTE_DEL);
	assert_prefix(&ops[2], AF_INET, "10.20.0.0", 16);
	assert_int_equal(pf_rsrc_stats(s)->routes4, 0);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_LOCAL], 0);
	/* a new route without a type is still not taken */
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.21.0.0/16", .oif = 1,
					    .gw = "10.1.0.2", .unspec = true }, 0);
	assert_int_equal(n_ops, 3);
	assert_int_equal(pf_rsrc_stats(s)->skipped[PF_RSRC_SKIP_LOCAL], 1);
	/* another prefix after a delete: both happen */
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.30.0.0/16", .oif = 1,
					    .gw = "10.1.0.2" }, 0);
	send_frame(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
					    .dst = "10.30.0.0/16", .unspec = true },
		   &(struct route_spec){ .af = AF_INET, .dst = "10.30.0.0/24", .oif = 1,
					 .gw = "10.1.0.2" });
	assert_int_equal(n_ops, 6);
	assert_int_equal(ops[4].op, PF_ROUTE_DEL);
	assert_int_equal(ops[5].op, PF_ROUTE_ADD);
	assert_int_equal(ops[5].plen, 24);
	pf_rsrc_free(s);

	/* the kernel's table: another metric is another route, not a replace */
	s = source(true);
	send_route(s, &(struct route_spec){ .af = AF_INET, .dst = "10.40.0.0/16", .oif = 1,
					    .gw = "10.1.0.2", .metric = 100 }, 0);
	send_frame(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
					    .dst = "10.40.0.0/16", .metric = 100 },
		   &(struct route_spec){ .af = AF_INET, .dst = "10.40.0.0/16", .oif = 2,
					 .gw = "10.2.0.2", .metric = 200 });
	assert_int_equal(n_ops, 3);
	assert_int_equal(ops[1].op, PF_ROUTE_DEL);
	assert_int_equal(ops[2].op, PF_ROUTE_ADD);
	assert_int_equal(ops[2].nh[0].port, 1);
	assert_int_equal(pf_rsrc_stats(s)->replace_pairs, 0);
	pf_rsrc_free(s);
}

/* Many routes in and out: the table's probing and deletion keep every route findable. */
static void
test_many(void **state)
{
	enum { N = 40000 };
	struct pf_rsrc *s = source(false);
	static uint8_t held[N];
	unsigned int i, k, expect = 0;
	char dst[32];

	srand(7);
	for (k = 0; k < 4 * N; k++) {
		i = (unsigned int)rand() % N;
		snprintf(dst, sizeof(dst), "%u.%u.%u.0/24", 11 + (i >> 16), (i >> 8) & 0xff,
			 i & 0xff);
		n_ops = 0;
		if (rand() % 3 != 0) {
			send_route(s, &(struct route_spec){ .af = AF_INET, .dst = dst, .oif = 1,
							    .gw = "10.1.0.2" }, 0);
			assert_int_equal(n_ops, 1);
			expect += !held[i];
			held[i] = 1;
		} else {
			send_route(s, &(struct route_spec){ .type = RTM_DELROUTE, .af = AF_INET,
							    .dst = dst }, 0);
			assert_int_equal(n_ops, held[i] ? 1 : 0);
			expect -= held[i];
			held[i] = 0;
		}
		assert_int_equal(pf_rsrc_stats(s)->routes4, expect);
	}
	n_ops = 0;
	assert_int_equal(pf_rsrc_withdraw_all(s), expect);
	assert_int_equal(n_ops, expect);
	pf_rsrc_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_replace_delete),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_multipath),
		cmocka_unit_test(test_nexthop_objects),
		cmocka_unit_test(test_pending),
		cmocka_unit_test(test_mark_sweep),
		cmocka_unit_test(test_withdraw_all),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_fpm_update),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
