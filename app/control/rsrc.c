/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One route source's routes and next-hop objects (app/control/pf_rsrc.h):
 * rtnetlink messages in, learnt-route operations out.
 *
 * Two open-addressing tables (linear probing, deletion by backward shift,
 * so no tombstones slow a table that churns): routes by prefix (32 bytes a
 * route: at a million routes about 64 MiB) and next-hop objects by id.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "pf_rsrc.h"

#define RSRC_SKIP_NAME(u, n, h) n,
#define RSRC_SKIP_HELP(u, n, h) h,
const char *const pf_rsrc_skip_names[PF_RSRC_SKIP_MAX] = { foreach_rsrc_skip(RSRC_SKIP_NAME) };
const char *const pf_rsrc_skip_help[PF_RSRC_SKIP_MAX] = { foreach_rsrc_skip(RSRC_SKIP_HELP) };

/* ---- an open-addressing table: the key leads each slot, all-zero is empty ---- */

struct otab {
	uint8_t *slots;
	uint32_t cap;                    /* a power of two */
	uint32_t n;
	uint16_t size;                   /* bytes a slot */
	uint16_t key_len;
};

static uint64_t
key_hash(const uint8_t *k, unsigned int len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	unsigned int i;

	for (i = 0; i < len; i++)
		h = (h ^ k[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static bool
slot_empty(const struct otab *t, const uint8_t *slot)
{
	unsigned int i;

	for (i = 0; i < t->key_len; i++)
		if (slot[i] != 0)
			return false;
	return true;
}

static uint8_t *
otab_at(const struct otab *t, uint32_t i)
{
	return t->slots + (size_t)i * t->size;
}

static int
otab_init(struct otab *t, uint16_t size, uint16_t key_len, uint32_t cap)
{
	t->slots = calloc(cap, size);
	if (t->slots == NULL)
		return -ENOMEM;
	t->cap = cap;
	t->n = 0;
	t->size = size;
	t->key_len = key_len;
	return 0;
}

static uint8_t *
otab_find(const struct otab *t, const void *key)
{
	uint32_t mask = t->cap - 1, i = (uint32_t)key_hash(key, t->key_len) & mask;
	uint8_t *s;

	for (;; i = (i + 1) & mask) {
		s = otab_at(t, i);
		if (slot_empty(t, s))
			return NULL;
		if (memcmp(s, key, t->key_len) == 0)
			return s;
	}
}

static int otab_grow(struct otab *t);

/* A new zeroed slot holding @p key (not there yet), or NULL (ENOMEM). */
static uint8_t *
otab_insert(struct otab *t, const void *key)
{
	uint32_t mask, i;
	uint8_t *s;

	if ((uint64_t)(t->n + 1) * 10 > (uint64_t)t->cap * 7 && otab_grow(t) < 0)
		return NULL;
	mask = t->cap - 1;
	for (i = (uint32_t)key_hash(key, t->key_len) & mask;; i = (i + 1) & mask) {
		s = otab_at(t, i);
		if (slot_empty(t, s))
			break;
	}
	memset(s, 0, t->size);
	memcpy(s, key, t->key_len);
	t->n++;
	return s;
}

static int
otab_grow(struct otab *t)
{
	struct otab bigger;
	uint32_t i;

	if (otab_init(&bigger, t->size, t->key_len, t->cap * 2) < 0)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		const uint8_t *s = otab_at(t, i);

		if (!slot_empty(t, s))
			memcpy(otab_insert(&bigger, s), s, t->size);
	}
	free(t->slots);
	*t = bigger;
	return 0;
}

static void
otab_remove(struct otab *t, uint8_t *slot)
{
	uint32_t mask = t->cap - 1, i = (uint32_t)((slot - t->slots) / t->size), j = i, home;
	uint8_t *s;

	for (;;) {
		j = (j + 1) & mask;
		s = otab_at(t, j);
		if (slot_empty(t, s))
			break;
		home = (uint32_t)key_hash(s, t->key_len) & mask;
		/* s stays unless its home lies cyclically outside (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			memcpy(otab_at(t, i), s, t->size);
			i = j;
		}
	}
	memset(otab_at(t, i), 0, t->size);
	t->n--;
}

static void
otab_clear(struct otab *t)
{
	memset(t->slots, 0, (size_t)t->cap * t->size);
	t->n = 0;
}

/* ---- routes and next-hop objects ---- */

enum {
	RS_INSTALLED = 1,       /* an add went to the stages, no delete since */
	RS_OTHERS = 2,          /* the kernel table also has a worse metric of the prefix */
	RS_BY_NH = 4,           /* the target is next-hop object nhid */
	RS_PENDING = 8,         /* by object, not resolvable now (unknown, foreign) */
};

struct rkey {
	uint8_t af;             /* 4 or 6; 0: empty slot */
	uint8_t plen;
	uint8_t pad[2];
	uint8_t addr[16];
};

struct rslot {
	struct rkey key;
	uint32_t gen;
	uint32_t nhid;
	uint32_t metric;
	uint8_t kind;
	uint8_t flags;
	uint8_t pad[2];
};

enum { NH_SINGLE = 1, NH_GROUP, NH_BLACKHOLE };
#define AFFECTED_MAX 64         /* an object and the groups holding it, re-sent together */

struct nhslot {
	uint32_t id;            /* 0: empty slot */
	uint32_t gen;
	uint32_t refs;          /* routes naming it */
	uint32_t ifindex;
	uint8_t kind;
	uint8_t af;             /* 4, 6, or 0: no gateway (on the link) */
	uint8_t unsupported;
	uint8_t n;
	uint8_t gw[16];
	uint32_t member[PF_ROUTE_NH_MAX];
	uint16_t weight[PF_ROUTE_NH_MAX];
};

struct pf_rsrc {
	struct pf_rsrc_conf c;
	struct otab routes;
	struct otab nhs;
	uint32_t gen;
	uint32_t by_nh;         /* routes by next-hop object */
	struct pf_rsrc_stats st;
};

struct pf_rsrc *
pf_rsrc_create(const struct pf_rsrc_conf *c)
{
	struct pf_rsrc *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->c = *c;
	s->gen = 1;
	if (otab_init(&s->routes, sizeof(struct rslot), sizeof(struct rkey), 1024) < 0 ||
	    otab_init(&s->nhs, sizeof(struct nhslot), sizeof(uint32_t), 64) < 0) {
		pf_rsrc_free(s);
		return NULL;
	}
	return s;
}

void
pf_rsrc_free(struct pf_rsrc *s)
{
	if (s == NULL)
		return;
	free(s->routes.slots);
	free(s->nhs.slots);
	free(s);
}

const struct pf_rsrc_stats *
pf_rsrc_stats(const struct pf_rsrc *s)
{
	return &s->st;
}

static void
emit(struct pf_rsrc *s, struct pf_route_op *op)
{
	op->src = s->c.src;
	s->st.ops++;
	s->c.emit(s->c.emit_arg, op);
}

static void
op_key(struct pf_route_op *op, const struct rkey *k)
{
	op->af = k->af;
	op->plen = k->plen;
	memcpy(op->prefix, k->addr, sizeof(op->prefix));
}

static void
set_pending(struct pf_rsrc *s, struct rslot *r, bool pending)
{
	if (pending && !(r->flags & RS_PENDING)) {
		r->flags |= RS_PENDING;
		s->st.pending++;
	} else if (!pending && (r->flags & RS_PENDING)) {
		r->flags &= (uint8_t)~RS_PENDING;
		s->st.pending--;
	}
}

/* The stages forget @p r's prefix (if they had it). */
static void
withdraw(struct pf_rsrc *s, struct rslot *r)
{
	struct pf_route_op op;

	if (!(r->flags & RS_INSTALLED))
		return;
	memset(&op, 0, offsetof(struct pf_route_op, nh));
	op.op = PF_ROUTE_DEL;
	op_key(&op, &r->key);
	emit(s, &op);
	r->flags &= (uint8_t)~RS_INSTALLED;
}

static void
install(struct pf_rsrc *s, struct rslot *r, struct pf_route_op *op)
{
	op->op = PF_ROUTE_ADD;
	op_key(op, &r->key);
	emit(s, op);
	r->flags |= RS_INSTALLED;
}

static void
drop_route(struct pf_rsrc *s, struct rslot *r)
{
	struct nhslot *o;

	withdraw(s, r);
	set_pending(s, r, false);
	if (r->flags & RS_BY_NH) {
		s->by_nh--;
		o = (struct nhslot *)otab_find(&s->nhs, &r->nhid);
		if (o != NULL)
			o->refs--;
	}
	if (r->key.af == 4)
		s->st.routes4--;
	else
		s->st.routes6--;
	otab_remove(&s->routes, (uint8_t *)r);
}

/* One next hop of a route of family @p af into @p nh: 0 or a skip reason + 1. */
static int
single_nh(struct pf_rsrc *s, uint8_t af, uint32_t ifindex, uint8_t gw_af, const uint8_t *gw,
	  uint16_t weight, struct pf_route_nh *nh)
{
	int port;

	if (gw_af != 0 && gw_af != af)
		return PF_RSRC_SKIP_UNSUPPORTED + 1;    /* an IPv4 route via IPv6 (RFC 5549) */
	port = ifindex != 0 ? s->c.port_of(s->c.port_arg, ifindex) : -1;
	if (ifindex == 0)
		return PF_RSRC_SKIP_UNSUPPORTED + 1;    /* a gateway without its interface */
	if (port < 0)
		return PF_RSRC_SKIP_FOREIGN + 1;
	memset(nh, 0, sizeof(*nh));
	nh->port = (uint16_t)port;
	nh->weight = weight != 0 ? weight : 1;
	if (gw_af != 0)
		memcpy(nh->gw, gw, af == 4 ? 4 : 16);
	return 0;
}

/*
 * Route @p r by object: its next hops into @p op. 0; -1 pending (the object
 * or a member is not known); or a skip reason + 1.
 */
static int
resolve_nh(struct pf_rsrc *s, const struct rslot *r, struct pf_route_op *op)
{
	const struct nhslot *o = (const struct nhslot *)otab_find(&s->nhs, &r->nhid), *m;
	int why = 0, rc;
	unsigned int i;

	op->kind = PF_ROUTE_UNICAST;
	op->n_nh = 0;
	if (o == NULL)
		return -1;
	if (o->unsupported)
		return PF_RSRC_SKIP_UNSUPPORTED + 1;
	if (o->kind == NH_BLACKHOLE) {
		op->kind = PF_ROUTE_BLACKHOLE;
		return 0;
	}
	if (o->kind == NH_SINGLE)
		return single_nh(s, r->key.af, o->ifindex, o->af, o->gw, 1, &op->nh[op->n_nh++]) ?:
		       0;
	for (i = 0; i < o->n; i++) {
		m = (const struct nhslot *)otab_find(&s->nhs, &o->member[i]);
		if (m == NULL)
			return -1;
		if (m->kind != NH_SINGLE || m->unsupported) {
			why = PF_RSRC_SKIP_UNSUPPORTED + 1;
			continue;
		}
		rc = single_nh(s, r->key.af, m->ifindex, m->af, m->gw, o->weight[i],
			       &op->nh[op->n_nh]);
		if (rc != 0)
			why = rc;
		else
			op->n_nh++;
	}
	return op->n_nh != 0 ? 0 : (why != 0 ? why : PF_RSRC_SKIP_UNSUPPORTED + 1);
}

/* Send route-by-object @p r as its object says now. */
static void
send_by_nh(struct pf_rsrc *s, struct rslot *r)
{
	struct pf_route_op op;
	int rc;

	memset(&op, 0, sizeof(op));
	rc = resolve_nh(s, r, &op);
	if (rc != 0) {
		withdraw(s, r);
		set_pending(s, r, true);
		if (rc > 0)
			s->st.skipped[rc - 1]++;
		return;
	}
	set_pending(s, r, false);
	install(s, r, &op);
}

/* Routes by any of @p ids[0..n) sent again (their objects changed). */
static void
resend_routes(struct pf_rsrc *s, const uint32_t *ids, unsigned int n)
{
	uint32_t i;
	unsigned int k;

	if (s->by_nh == 0 || n == 0)
		return;
	for (i = 0; i < s->routes.cap; i++) {
		struct rslot *r = (struct rslot *)otab_at(&s->routes, i);

		if (r->key.af == 0 || !(r->flags & RS_BY_NH))
			continue;
		for (k = 0; k < n; k++)
			if (r->nhid == ids[k]) {
				send_by_nh(s, r);
				break;
			}
	}
}

/* Object @p id and every group holding it (at most @p max ids into @p out). */
static unsigned int
affected(struct pf_rsrc *s, uint32_t id, uint32_t *out, unsigned int max)
{
	unsigned int n = 0, k;
	uint32_t i;

	out[n++] = id;
	for (i = 0; i < s->nhs.cap && n < max; i++) {
		const struct nhslot *g = (const struct nhslot *)otab_at(&s->nhs, i);

		if (g->id == 0 || g->kind != NH_GROUP)
			continue;
		for (k = 0; k < g->n; k++)
			if (g->member[k] == id) {
				out[n++] = g->id;
				break;
			}
	}
	return n;
}

/* ---- rtnetlink ---- */

static void
parse_attrs(const struct rtattr *a, int len, const struct rtattr **tb, unsigned int max)
{
	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type <= max && tb[a->rta_type] == NULL)
			tb[a->rta_type] = a;
}

static bool
attr_u32(const struct rtattr *a, uint32_t *v)
{
	if (a == NULL || RTA_PAYLOAD(a) < sizeof(uint32_t))
		return false;
	memcpy(v, RTA_DATA(a), sizeof(*v));
	return true;
}

/* Link-local, multicast and other destinations a router does not take from a daemon. */
static bool
link_local(uint8_t af, const uint8_t *a, uint8_t plen)
{
	if (af == 6)
		return (plen >= 10 && a[0] == 0xfe && (a[1] & 0xc0) == 0x80) ||
		       (plen >= 8 && a[0] == 0xff);
	return (plen >= 4 && (a[0] & 0xf0) == 0xe0) || (plen >= 16 && a[0] == 169 && a[1] == 254);
}

/* A route's own next hops (RTA_GATEWAY/RTA_OIF or RTA_MULTIPATH): 0 or a skip reason + 1. */
static int
inline_nhs(struct pf_rsrc *s, uint8_t af, const struct rtattr **tb, struct pf_route_op *op)
{
	unsigned int alen = af == 4 ? 4 : 16;
	uint32_t oif = 0;
	int why = 0, rc;

	op->n_nh = 0;
	if (tb[RTA_VIA] != NULL || tb[RTA_ENCAP] != NULL)
		return PF_RSRC_SKIP_UNSUPPORTED + 1;
	if (tb[RTA_MULTIPATH] != NULL) {
		const struct rtnexthop *nh = RTA_DATA(tb[RTA_MULTIPATH]);
		int len = (int)RTA_PAYLOAD(tb[RTA_MULTIPATH]);

		for (; RTNH_OK(nh, len); len -= NLMSG_ALIGN(nh->rtnh_len), nh = RTNH_NEXT(nh)) {
			const struct rtattr *nt[RTA_MAX + 1];
			const uint8_t *gw = NULL;

			if (nh->rtnh_flags & RTNH_F_DEAD)
				continue;
			parse_attrs(RTNH_DATA(nh), nh->rtnh_len - (int)sizeof(*nh), nt, RTA_MAX);
			if (nt[RTA_VIA] != NULL || nt[RTA_ENCAP] != NULL) {
				why = PF_RSRC_SKIP_UNSUPPORTED + 1;
				continue;
			}
			if (nt[RTA_GATEWAY] != NULL) {
				if (RTA_PAYLOAD(nt[RTA_GATEWAY]) != alen)
					return PF_RSRC_SKIP_MALFORMED + 1;
				gw = RTA_DATA(nt[RTA_GATEWAY]);
			}
			if (op->n_nh == PF_ROUTE_NH_MAX)
				return PF_RSRC_SKIP_UNSUPPORTED + 1;
			rc = single_nh(s, af, (uint32_t)nh->rtnh_ifindex, gw != NULL ? af : 0, gw,
				       (uint16_t)(nh->rtnh_hops + 1), &op->nh[op->n_nh]);
			if (rc != 0)
				why = rc;
			else
				op->n_nh++;
		}
		return op->n_nh != 0 ? 0 : (why != 0 ? why : PF_RSRC_SKIP_UNSUPPORTED + 1);
	}
	attr_u32(tb[RTA_OIF], &oif);
	if (tb[RTA_GATEWAY] != NULL && RTA_PAYLOAD(tb[RTA_GATEWAY]) != alen)
		return PF_RSRC_SKIP_MALFORMED + 1;
	rc = single_nh(s, af, oif, tb[RTA_GATEWAY] != NULL ? af : 0,
		       tb[RTA_GATEWAY] != NULL ? RTA_DATA(tb[RTA_GATEWAY]) : NULL, 1, &op->nh[0]);
	if (rc == 0)
		op->n_nh = 1;
	return rc;
}

static int
route_msg(struct pf_rsrc *s, const struct nlmsghdr *h)
{
	const struct rtmsg *rm = NLMSG_DATA(h);
	const struct rtattr *tb[RTA_MAX + 1];
	struct pf_route_op op;
	struct rslot *r;
	struct rkey k = { 0 };
	uint32_t table, metric = 0, nhid = 0;
	unsigned int alen, i;
	int kind, why = 0;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*rm))) {
		s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;
		return 0;
	}
	s->st.route_msgs++;
	if (rm->rtm_family != AF_INET && rm->rtm_family != AF_INET6) {
		s->st.skipped[PF_RSRC_SKIP_FAMILY]++;
		return 0;
	}
	k.af = rm->rtm_family == AF_INET ? 4 : 6;
	alen = k.af == 4 ? 4 : 16;
	parse_attrs(RTM_RTA(rm), (int)RTM_PAYLOAD(h), tb, RTA_MAX);
	table = rm->rtm_table;
	attr_u32(tb[RTA_TABLE], &table);
	if (table != s->c.table) {
		s->st.skipped[PF_RSRC_SKIP_TABLE]++;
		return 0;
	}
	if (rm->rtm_flags & RTM_F_CLONED) {
		s->st.skipped[PF_RSRC_SKIP_CLONED]++;
		return 0;
	}
	k.plen = rm->rtm_dst_len;
	if (k.plen > alen * 8 || (tb[RTA_DST] != NULL && RTA_PAYLOAD(tb[RTA_DST]) != alen)) {
		s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;
		return 0;
	}
	if (tb[RTA_DST] != NULL)
		memcpy(k.addr, RTA_DATA(tb[RTA_DST]), alen);
	for (i = 0; i < alen; i++)      /* host bits zero: the kernel's are, be sure */
		if (i * 8 >= k.plen)
			k.addr[i] = 0;
		else if (i * 8 + 8 > k.plen)
			k.addr[i] &= (uint8_t)(0xff00 >> (k.plen - i * 8));
	if (rm->rtm_protocol == RTPROT_KERNEL)
		why = PF_RSRC_SKIP_KERNEL + 1;
	else if (link_local(k.af, k.addr, k.plen))
		why = PF_RSRC_SKIP_LINK_LOCAL + 1;
	else if (rm->rtm_src_len != 0)
		why = PF_RSRC_SKIP_UNSUPPORTED + 1;
	switch (rm->rtm_type) {
	case RTN_UNSPEC:
		/* zebra's FPM deletes say no type: a delete names its prefix only. */
		if (h->nlmsg_type != RTM_DELROUTE) {
			kind = -1;
			why = why != 0 ? why : PF_RSRC_SKIP_LOCAL + 1;
			break;
		}
		/* fall through */
	case RTN_UNICAST:
		kind = PF_ROUTE_UNICAST;
		break;
	case RTN_BLACKHOLE:
		kind = PF_ROUTE_BLACKHOLE;
		break;
	case RTN_UNREACHABLE:
		kind = PF_ROUTE_UNREACHABLE;
		break;
	case RTN_PROHIBIT:
		kind = PF_ROUTE_PROHIBIT;
		break;
	default:
		kind = -1;
		why = why != 0 ? why : PF_RSRC_SKIP_LOCAL + 1;
	}
	if (why != 0) {
		s->st.skipped[why - 1]++;
		return 0;
	}
	if (s->c.metrics)
		attr_u32(tb[RTA_PRIORITY], &metric);
	r = (struct rslot *)otab_find(&s->routes, &k);
	if (h->nlmsg_type == RTM_DELROUTE) {
		bool others;

		if (r == NULL || (s->c.metrics && r->metric != metric))
			return 0;       /* not ours, or a worse metric we never took */
		others = r->flags & RS_OTHERS;
		drop_route(s, r);
		return others ? 1 : 0;  /* a worse route may take over: only a dump says */
	}
	if (r != NULL && s->c.metrics && metric != r->metric) {
		r->flags |= RS_OTHERS;
		if (metric > r->metric) {
			s->st.skipped[PF_RSRC_SKIP_METRIC]++;
			return 0;
		}
	}
	memset(&op, 0, sizeof(op));
	op.kind = (uint8_t)kind;
	if (attr_u32(tb[RTA_NH_ID], &nhid) && nhid != 0) {
		if (kind != PF_ROUTE_UNICAST) {
			s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;
			return 0;
		}
	} else if (kind == PF_ROUTE_UNICAST) {
		why = inline_nhs(s, k.af, tb, &op);
		if (why != 0) {
			/* what the daemon has now is not for us: the old route must go */
			if (r != NULL)
				drop_route(s, r);
			s->st.skipped[why - 1]++;
			return 0;
		}
	}
	if (r == NULL) {
		r = (struct rslot *)otab_insert(&s->routes, &k);
		if (r == NULL) {
			s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;   /* out of memory */
			return 0;
		}
		if (k.af == 4)
			s->st.routes4++;
		else
			s->st.routes6++;
	} else if (r->flags & RS_BY_NH) {
		struct nhslot *o = (struct nhslot *)otab_find(&s->nhs, &r->nhid);

		if (o != NULL)
			o->refs--;
		s->by_nh--;
		r->flags &= (uint8_t)~RS_BY_NH;
	}
	r->gen = s->gen;
	r->metric = metric;
	r->kind = (uint8_t)kind;
	r->nhid = nhid;
	if (nhid != 0) {
		struct nhslot *o = (struct nhslot *)otab_find(&s->nhs, &nhid);

		if (o != NULL)
			o->refs++;
		r->flags |= RS_BY_NH;
		s->by_nh++;
		send_by_nh(s, r);
		return 0;
	}
	set_pending(s, r, false);
	install(s, r, &op);
	return 0;
}

static int
nexthop_msg(struct pf_rsrc *s, const struct nlmsghdr *h)
{
	const struct nhmsg *nm = NLMSG_DATA(h);
	const struct rtattr *tb[NHA_MAX + 1];
	struct nhslot *o, before;
	uint32_t id = 0, ids[AFFECTED_MAX];
	unsigned int n, i;
	int len;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*nm))) {
		s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;
		return 0;
	}
	s->st.nexthop_msgs++;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nm)));
	parse_attrs((const struct rtattr *)((const char *)nm + NLMSG_ALIGN(sizeof(*nm))), len, tb,
		    NHA_MAX);
	if (!attr_u32(tb[NHA_ID], &id) || id == 0) {
		s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;
		return 0;
	}
	o = (struct nhslot *)otab_find(&s->nhs, &id);
	if (h->nlmsg_type == RTM_DELNEXTHOP) {
		uint32_t r;

		if (o == NULL)
			return 0;
		n = affected(s, id, ids, AFFECTED_MAX);
		/* The kernel takes the object's routes with it, and it out of its groups. */
		for (r = 0; r < s->routes.cap && o->refs != 0; r++) {
			struct rslot *rs = (struct rslot *)otab_at(&s->routes, r);

			if (rs->key.af != 0 && (rs->flags & RS_BY_NH) && rs->nhid == id) {
				drop_route(s, rs);
				r--;    /* the backward shift may have moved a slot here */
			}
		}
		for (i = 1; i < n; i++) {
			struct nhslot *g = (struct nhslot *)otab_find(&s->nhs, &ids[i]);
			unsigned int a, b;

			for (a = b = 0; a < g->n; a++)
				if (g->member[a] != id) {
					g->member[b] = g->member[a];
					g->weight[b++] = g->weight[a];
				}
			g->n = (uint8_t)b;
		}
		otab_remove(&s->nhs, (uint8_t *)otab_find(&s->nhs, &id));
		s->st.nexthops--;
		resend_routes(s, ids + 1, n - 1);
		return 0;
	}
	if (o == NULL) {
		o = (struct nhslot *)otab_insert(&s->nhs, &id);
		if (o == NULL) {
			s->st.skipped[PF_RSRC_SKIP_MALFORMED]++;
			return 0;
		}
		s->st.nexthops++;
		memset(&before, 0, sizeof(before));
	} else {
		before = *o;
	}
	o->gen = s->gen;
	o->kind = 0;
	o->af = 0;
	o->unsupported = tb[NHA_ENCAP] != NULL;
	o->n = 0;
	o->ifindex = 0;
	memset(o->gw, 0, sizeof(o->gw));
	if (tb[NHA_GROUP] != NULL) {
		const struct nexthop_grp *g = RTA_DATA(tb[NHA_GROUP]);
		unsigned int cnt = RTA_PAYLOAD(tb[NHA_GROUP]) / sizeof(*g);

		o->kind = NH_GROUP;
		if (cnt > PF_ROUTE_NH_MAX) {
			o->unsupported = 1;
			cnt = PF_ROUTE_NH_MAX;
		}
		for (i = 0; i < cnt; i++) {
			o->member[i] = g[i].id;
			o->weight[i] = (uint16_t)(g[i].weight + 1);
		}
		o->n = (uint8_t)cnt;
	} else if (tb[NHA_BLACKHOLE] != NULL) {
		o->kind = NH_BLACKHOLE;
	} else {
		o->kind = NH_SINGLE;
		attr_u32(tb[NHA_OIF], &o->ifindex);
		if (tb[NHA_GATEWAY] != NULL) {
			unsigned int gl = RTA_PAYLOAD(tb[NHA_GATEWAY]);

			if ((nm->nh_family == AF_INET && gl == 4) ||
			    (nm->nh_family == AF_INET6 && gl == 16)) {
				o->af = nm->nh_family == AF_INET ? 4 : 6;
				memcpy(o->gw, RTA_DATA(tb[NHA_GATEWAY]), gl);
			} else {
				o->unsupported = 1;
			}
		}
	}
	if (before.id == 0) {
		/* Brand new: only routes that waited for it (pending) can name it. */
		if (s->st.pending == 0)
			return 0;
		for (i = 0; i < s->routes.cap; i++) {
			const struct rslot *r = (const struct rslot *)otab_at(&s->routes, i);

			if (r->key.af != 0 && (r->flags & RS_BY_NH) && r->nhid == id)
				o->refs++;
		}
	} else if (memcmp(&before.ifindex, &o->ifindex,
			  sizeof(*o) - offsetof(struct nhslot, ifindex)) == 0) {
		return 0;       /* a replay: what the data path sees is the same */
	}
	n = affected(s, id, ids, AFFECTED_MAX);
	resend_routes(s, ids, n);
	return 0;
}

/* The route @p h names: family, table, length, destination and metric (0 if none). */
static bool
route_id(const struct nlmsghdr *h, uint32_t id[7])
{
	const struct rtmsg *rm = NLMSG_DATA(h);
	const struct rtattr *tb[RTA_MAX + 1];
	unsigned int alen;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*rm)))
		return false;
	alen = rm->rtm_family == AF_INET6 ? 16 : 4;
	parse_attrs(RTM_RTA(rm), (int)RTM_PAYLOAD(h), tb, RTA_MAX);
	memset(id, 0, 7 * sizeof(id[0]));
	id[0] = (uint32_t)rm->rtm_family << 8 | rm->rtm_dst_len;
	id[1] = rm->rtm_table;
	attr_u32(tb[RTA_TABLE], &id[1]);
	attr_u32(tb[RTA_PRIORITY], &id[2]);
	if (tb[RTA_DST] != NULL && RTA_PAYLOAD(tb[RTA_DST]) == alen)
		memcpy(&id[3], RTA_DATA(tb[RTA_DST]), alen);
	return true;
}

/*
 * zebra's FPM sends a route that changed as RTM_DELROUTE then RTM_NEWROUTE of
 * the same route in one frame (dplane_fpm_nl has no replace). Taken in turn,
 * a lookup between the two would find no route, or a covering one: the pair
 * is one replace, and the delete is left out.
 */
static bool
replaced_by(const struct nlmsghdr *del, const struct nlmsghdr *next)
{
	uint32_t a[7], b[7];

	return del->nlmsg_type == RTM_DELROUTE && next->nlmsg_type == RTM_NEWROUTE &&
	       route_id(del, a) && route_id(next, b) && memcmp(a, b, sizeof(a)) == 0;
}

int
pf_rsrc_msgs(struct pf_rsrc *s, const void *buf, size_t len)
{
	const struct nlmsghdr *h = buf, *next;
	int left = (int)len, rc = 0;

	for (; NLMSG_OK(h, left); h = next) {
		next = NLMSG_NEXT(h, left);
		if (h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK)
			rc |= PF_RSRC_LINKS;
		else if (NLMSG_OK(next, left) && replaced_by(h, next)) {
			s->st.messages++;
			s->st.route_msgs++;
			s->st.replace_pairs++;
		} else if (pf_rsrc_msg(s, h) == 1)
			rc |= PF_RSRC_DUMP;
	}
	return rc;
}

int
pf_rsrc_msg(struct pf_rsrc *s, const struct nlmsghdr *h)
{
	s->st.messages++;
	switch (h->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		return route_msg(s, h);
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		return nexthop_msg(s, h);
	default:
		return 0;
	}
}

void
pf_rsrc_mark(struct pf_rsrc *s)
{
	s->gen++;
}

uint32_t
pf_rsrc_sweep(struct pf_rsrc *s)
{
	uint32_t i, swept = 0;

	/* A removal shifts later slots back: look at the same slot again. */
	for (i = 0; i < s->routes.cap; i++) {
		struct rslot *r = (struct rslot *)otab_at(&s->routes, i);

		if (r->key.af != 0 && r->gen != s->gen) {
			drop_route(s, r);
			swept++;
			i--;
		}
	}
	for (i = 0; i < s->nhs.cap; i++) {
		struct nhslot *o = (struct nhslot *)otab_at(&s->nhs, i);

		if (o->id != 0 && o->gen != s->gen && o->refs == 0) {
			otab_remove(&s->nhs, (uint8_t *)o);
			s->st.nexthops--;
			i--;
		}
	}
	s->st.swept += swept;
	return swept;
}

uint32_t
pf_rsrc_withdraw_all(struct pf_rsrc *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->routes.cap; i++) {
		struct rslot *r = (struct rslot *)otab_at(&s->routes, i);

		if (r->key.af != 0) {
			withdraw(s, r);
			n++;
		}
	}
	otab_clear(&s->routes);
	otab_clear(&s->nhs);
	s->by_nh = 0;
	s->st.routes4 = s->st.routes6 = s->st.pending = s->st.nexthops = 0;
	s->st.withdrawn += n;
	return n;
}
