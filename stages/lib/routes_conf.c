/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configured routes of lpm and lpm6 (pf_routes_conf.h): next hops,
 * inline routes, the route file, duplicates and live route changes. What
 * differs between the families is where an address is read or written:
 * prefix_text, gw_port, nh_gw_set and edit_nh_by_address; the rest runs on
 * bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "pf_conf.h"
#include "pf_ip6.h"
#include "pf_routes_conf.h"

#define ADDR_LEN(af) ((af) == 4 ? 4u : 16u)
#define SYS_AF(af) ((af) == 4 ? AF_INET : AF_INET6)

static const char *const nh_keys[] = { "port", "mac", "via", NULL };
static const char *const route_keys[] = { "prefix", "via", NULL };
static const char route_full[] = "route table full";

/* ---- next-hop names ------------------------------------------------------ */

/* Next-hop names to indexes for the route file: a name per line, a million lines. */
#define NH_HASH_SIZE (2 * PF_RCONF_MAX_NEXTHOPS)
struct nh_index {
	uint16_t slot[NH_HASH_SIZE];   /* next-hop index + 1, 0 = empty */
};

static uint32_t
nh_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void
nh_index_build(struct nh_index *ix, const struct pf_rconf *rt)
{
	uint32_t i, h;

	memset(ix, 0, sizeof(*ix));
	for (i = 0; i < rt->n_nh; i++) {
		h = nh_hash(rt->nh[i].name, strlen(rt->nh[i].name)) % NH_HASH_SIZE;
		while (ix->slot[h] != 0)
			h = (h + 1) % NH_HASH_SIZE;
		ix->slot[h] = (uint16_t)(i + 1);
	}
}

/* The next hop named by @p s[0..len), or -1. */
static int
nh_index_find(const struct nh_index *ix, const struct pf_rconf *rt, const char *s, size_t len)
{
	uint32_t h = nh_hash(s, len) % NH_HASH_SIZE;
	const char *name;

	while (ix->slot[h] != 0) {
		name = rt->nh[ix->slot[h] - 1].name;
		if (strncmp(name, s, len) == 0 && name[len] == '\0')
			return ix->slot[h] - 1;
		h = (h + 1) % NH_HASH_SIZE;
	}
	return -1;
}

/* The next hop named @p name, or -1. */
static int
nh_by_name(const struct pf_rconf *rt, const char *name)
{
	uint32_t k;

	for (k = 0; k < rt->n_nh; k++)
		if (strcmp(rt->nh[k].name, name) == 0)
			return (int)k;
	return -1;
}

/* ---- routes -------------------------------------------------------------- */

/* Append a route (1024 slots, then doubling). Returns 0, -ENOSPC or -ENOMEM. */
static int
route_add(struct pf_rconf *rt, const uint8_t *prefix, uint8_t len, uint32_t nh, uint32_t line,
	  uint16_t col, uint8_t from_file)
{
	struct pf_rconf_route *r;
	uint32_t n;
	void *nr;

	if (rt->n_routes == rt->cap_routes) {
		if (rt->cap_routes >= PF_RCONF_MAX_ROUTES)
			return -ENOSPC;
		n = rt->cap_routes == 0 ? 1024 : rt->cap_routes * 2;
		nr = realloc(rt->routes, (size_t)n * rt->stride);
		if (nr == NULL)
			return -ENOMEM;
		rt->routes = nr;
		rt->cap_routes = n;
	}
	r = pf_rconf_route(rt, rt->n_routes++);
	r->nh = nh;
	r->line = line;
	r->col = col;
	r->len = len;
	r->from_file = from_file;
	memcpy(r->prefix, prefix, ADDR_LEN(rt->af));
	return 0;
}

/* Same prefix: inline routes first, then by line: "first defined" is well defined. */
static int
route_cmp_rest(const struct pf_rconf_route *x, const struct pf_rconf_route *y)
{
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->from_file != y->from_file)
		return x->from_file < y->from_file ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* As a number, not memcmp: a million routes sort in a fraction of the time. */
static int
route_cmp4(const void *a, const void *b)
{
	const struct pf_rconf_route *x = a, *y = b;
	uint32_t px = pf_rconf_ip4(x->prefix), py = pf_rconf_ip4(y->prefix);

	if (px != py)
		return px < py ? -1 : 1;
	return route_cmp_rest(x, y);
}

static int
route_cmp6(const void *a, const void *b)
{
	const struct pf_rconf_route *x = a, *y = b;
	int c = memcmp(x->prefix, y->prefix, 16);

	return c != 0 ? c : route_cmp_rest(x, y);
}

static void
routes_sort(struct pf_rconf *rt)
{
	qsort(rt->routes, rt->n_routes, rt->stride, rt->af == 4 ? route_cmp4 : route_cmp6);
}

/* The route @p prefix/@p len in sorted @p rt, or NULL. */
static struct pf_rconf_route *
route_find(const struct pf_rconf *rt, const uint8_t *prefix, uint8_t len)
{
	uint32_t lo = 0, hi = rt->n_routes, mid;
	struct pf_rconf_route *r;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = pf_rconf_route(rt, mid);
		c = memcmp(r->prefix, prefix, ADDR_LEN(rt->af));
		if (c == 0 && r->len == len)
			return r;
		if (c < 0 || (c == 0 && r->len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* "a.b.c.d/len" (IPv4): on failure a static reason. */
static const char *
prefix4_parse(const char *s, uint32_t *addr, uint8_t *len)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	uint64_t l;
	uint32_t a, mask;

	if (slash == NULL)
		return "is not an IPv4 prefix (a.b.c.d/len)";
	if ((size_t)(slash - s) >= sizeof(buf))
		return "is not an IPv4 address";
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (!pf_parse_ipv4(buf, &a))
		return "is not an IPv4 address";
	if (!pf_parse_u64(slash + 1, &l))
		return "has no valid prefix length";
	if (l > 32)
		return "has a prefix length > 32";
	mask = l == 0 ? 0 : ~0u << (32 - l);
	if ((a & ~mask) != 0)
		return "has host bits set";
	*addr = a;
	*len = (uint8_t)l;
	return NULL;
}

/* A prefix as written in the route file or a live change: NULL, or why not. */
static const char *
prefix_text(uint8_t af, const char *s, uint8_t *prefix, uint8_t *len)
{
	const char *why;
	uint32_t a;

	if (af == 6)
		return pf_parse_ipv6_prefix(s, true, prefix, len);
	why = prefix4_parse(s, &a, len);
	if (why == NULL) {
		a = htonl(a);
		memcpy(prefix, &a, 4);
	}
	return why;
}

/* "PREFIX/LEN" of @p prefix into @p buf (INET6_ADDRSTRLEN + 4 bytes). */
static void
prefix_fmt(uint8_t af, const uint8_t *prefix, uint8_t len, char *buf, size_t size)
{
	size_t n;

	inet_ntop(SYS_AF(af), prefix, buf, (socklen_t)size);
	n = strlen(buf);
	snprintf(buf + n, size - n, "/%u", len);
}

int
pf_rconf_check_dups(struct pf_rconf *rt, const char *topo_file, struct pf_errs *errs)
{
	const struct pf_rconf_route *a, *b;
	char s[INET6_ADDRSTRLEN + 4];
	uint32_t i, n = 0;

	if (rt->n_routes < 2)
		return 0;
	routes_sort(rt);
	for (i = 1; i < rt->n_routes && n < 20; i++) {
		a = pf_rconf_route(rt, i - 1);
		b = pf_rconf_route(rt, i);
		if (a->len != b->len || memcmp(a->prefix, b->prefix, ADDR_LEN(rt->af)) != 0)
			continue;
		prefix_fmt(rt->af, b->prefix, b->len, s, sizeof(s));
		pf_err_add(errs, b->from_file ? rt->routes_file : topo_file, (int)b->line, b->col,
			   "duplicate route %s (first defined at %s:%u)", s,
			   a->from_file ? rt->routes_file : topo_file, a->line);
		n++;
	}
	return n != 0 ? -EINVAL : 0;
}

/* ---- the route file ------------------------------------------------------ */

/*
 * One "PREFIX/LEN NEXTHOP" per line, '#' comments; next hops by name only.
 * Returns 0 or -EINVAL (errors recorded) / -ENOMEM / -errno of fopen.
 */
static int
file_read(struct pf_rconf *rt, const char *path, struct pf_errs *errs)
{
	char line[PF_RCONF_LINE_MAX + 2], *tok[3], *p, *hash;
	struct nh_index *ix;
	const char *why;
	unsigned int errs0 = errs->n;
	uint32_t lineno = 0;
	uint8_t prefix[16], len;
	FILE *f;
	int nt, nh, rc = 0;

	f = pf_table_fopen(path);
	if (f == NULL) {
		rc = -errno;
		pf_err_add(errs, path, 0, 0, "cannot open route file: %s", strerror(errno));
		return rc;
	}
	ix = malloc(sizeof(*ix));
	if (ix == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	nh_index_build(ix, rt);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (errs->n - errs0 >= 20) {
			pf_err_add(errs, path, (int)lineno, 0, "too many errors, giving up");
			break;
		}
		if (strchr(line, '\n') == NULL && !feof(f)) {
			pf_err_add(errs, path, (int)lineno, 1, "line longer than %d characters",
				   PF_RCONF_LINE_MAX);
			while (fgets(line, sizeof(line), f) != NULL && strchr(line, '\n') == NULL)
				;
			continue;
		}
		hash = strchr(line, '#');
		if (hash != NULL)
			*hash = '\0';
		nt = 0;
		for (p = strtok(line, " \t\r\n"); p != NULL; p = strtok(NULL, " \t\r\n")) {
			if (nt == 3)
				break;
			tok[nt++] = p;
		}
		if (nt == 0)
			continue;
		if (nt != 2) {
			pf_err_add(errs, path, (int)lineno, (int)(tok[0] - line + 1),
				   "expected 'PREFIX/LEN NEXTHOP', got %d field%s", nt,
				   nt == 1 ? "" : "s or more");
			continue;
		}
		nh = nh_index_find(ix, rt, tok[1], strlen(tok[1]));
		if (nh < 0) {
			pf_err_add(errs, path, (int)lineno, (int)(tok[1] - line + 1),
				   "unknown next hop '%s' (define it under nexthops:)", tok[1]);
			continue;
		}
		why = prefix_text(rt->af, tok[0], prefix, &len);
		if (why == NULL && route_add(rt, prefix, len, (uint32_t)nh, lineno,
					     (uint16_t)(tok[0] - line + 1), 1) < 0)
			why = route_full;
		if (why == NULL)
			continue;
		if (why == route_full) {
			pf_err_add(errs, path, (int)lineno, 1, "more than %u routes",
				   PF_RCONF_MAX_ROUTES);
			break;
		}
		pf_err_add(errs, path, (int)lineno, (int)(tok[0] - line + 1), "'%s' %s", tok[0], why);
	}
	if (ferror(f))
		pf_err_add(errs, path, 0, 0, "read error");
	fclose(f);
	free(ix);
	return errs->n != errs0 ? -EINVAL : 0;
}

/* ---- next hops by address ------------------------------------------------ */

/* The port whose connected subnet (IPv4) or `ipv6:` prefix holds @p a, not one of its addresses, or -1. */
static int
gw_port(const struct pf_stage_env *env, uint8_t af, const uint8_t *a)
{
	uint32_t i, j, gw = af == 4 ? pf_rconf_ip4(a) : 0, mask;

	for (i = 0; i < env->n_ports; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		if (af == 4) {
			mask = pc->ipv4_len == 0 ? 0 : ~0u << (32 - pc->ipv4_len);
			if (pc->has_ipv4 && pc->ipv4_len < 32 && (gw & mask) == (pc->ipv4 & mask) &&
			    gw != pc->ipv4)
				return (int)i;
			continue;
		}
		for (j = 0; j < pc->n_ipv6; j++)
			if (pf_ip6_in_prefix(a, pc->ipv6[j], pc->ipv6_len[j]) &&
			    memcmp(a, pc->ipv6[j], 16) != 0)
				return (int)i;
	}
	return -1;
}

/* "network" or "broadcast" when IPv4 @p gw is that address of port @p port's subnet, else NULL. */
static const char *
gw_not_host(const struct pf_stage_env *env, int port, uint32_t gw)
{
	const struct pf_port_conf *pc = &env->ports[port];
	uint32_t host;

	if (!pc->has_ipv4 || pc->ipv4_len >= 31)
		return NULL;
	host = ~0u >> pc->ipv4_len;
	if ((gw & ~host) != (pc->ipv4 & ~host))
		return NULL;
	return (gw & host) == 0 ? "network" : (gw & host) == host ? "broadcast" : NULL;
}

/*
 * Next hop @p nh's gateway from `via:` @p v: `a.b.c.d`, or for IPv6
 * `ADDRESS` or `ADDRESS%PORT` (needed for a link-local gateway); its MAC is
 * found by the neigh stage. The port is @p port (a nexthops entry's
 * `port:`), the one named, or the one whose subnet holds the address (as
 * `ip route add ... via`). Returns 0, 1 when @p v is not an address, or
 * < 0 with an error.
 */
static int
nh_gw_set(uint8_t af, struct pf_rconf_nh *nh, const struct pf_node *v, int port,
	  const struct pf_stage_env *env, const char *path, struct pf_errs *errs)
{
	char buf[64], *pct;
	uint8_t a[16];
	uint32_t gw;

	if (af == 4) {
		if (!pf_parse_ipv4(v->value, &gw))
			return 1;
		if (gw == 0)
			return pf_node_err(errs, v, "%s.via: '%s' is not an IPv4 address", path,
					   v->value);
		gw = htonl(gw);
		memcpy(a, &gw, 4);
		if (port < 0)
			port = gw_port(env, af, a);
		if (port < 0)
			return pf_node_err(errs, v, "%s.via: %s is on no port's subnet (give 'port')",
					   path, v->value);
		if (gw_not_host(env, port, ntohl(gw)) != NULL)
			return pf_node_err(errs, v, "%s.via: %s is the %s address of port %s's "
					   "subnet, not a host's", path, v->value,
					   gw_not_host(env, port, ntohl(gw)), env->ports[port].name);
		goto set;
	}
	snprintf(buf, sizeof(buf), "%s", v->value);
	pct = strchr(buf, '%');
	if (pct != NULL)
		*pct++ = '\0';
	if (strlen(v->value) >= PF_NAME_MAX || inet_pton(AF_INET6, buf, a) != 1)
		return 1;
	if (pf_ip6_is_mcast(a) || pf_ip6_zero_or_loopback(a) >= 0 || pf_ip6_is_v4mapped(a))
		return pf_node_err(errs, v, "%s.via: %s is not a unicast address", path, v->value);
	if (pct != NULL) {
		int named = pf_stage_port_index(env, pct);

		if (named < 0 || (port >= 0 && port != named))
			return pf_node_err(errs, v, named < 0 ? "%s.via: %s: unknown port" :
					   "%s.via: %s names another port than 'port'", path,
					   v->value);
		port = named;
	} else if (port < 0) {
		port = gw_port(env, af, a);
	}
	if (port < 0)
		return pf_node_err(errs, v, "%s.via: %s is on no port's ipv6 prefix (give 'port' or write ADDRESS%%PORT)",
				   path, v->value);
set:
	nh->port = (uint16_t)port;
	memcpy(nh->gw, a, ADDR_LEN(af));
	nh->has_gw = 1;
	return 0;
}

/*
 * A route's `via: ADDRESS`: an implicit next hop named by the text. Its
 * index, -2 when @p v is not an address (an unknown next-hop name), or -1
 * with an error.
 */
static int
nh_by_address(struct pf_rconf *rt, const struct pf_node *v, const struct pf_stage_env *env,
	      const char *path, struct pf_errs *errs)
{
	struct pf_rconf_nh *nh = &rt->nh[rt->n_nh];
	char buf[64];
	uint8_t a[16];
	uint32_t a4;
	int rc;

	snprintf(buf, sizeof(buf), "%s", v->value);
	buf[strcspn(buf, "%")] = '\0';
	if (rt->af == 4 ? !pf_parse_ipv4(v->value, &a4) : inet_pton(AF_INET6, buf, a) != 1)
		return -2;
	if (rt->n_nh == PF_RCONF_MAX_NEXTHOPS) {
		pf_node_err(errs, v, "%s.via: more than %d next hops", path, PF_RCONF_MAX_NEXTHOPS);
		return -1;
	}
	memset(nh, 0, sizeof(*nh));
	rc = nh_gw_set(rt->af, nh, v, -1, env, path, errs);
	if (rc != 0)
		return rc > 0 ? -2 : -1;
	snprintf(nh->name, sizeof(nh->name), "%s", v->value);
	return (int)rt->n_nh++;
}

/* The next hop among the first @p n with gateway @p gw on @p port, or -1. */
static int
nh_by_gw(const struct pf_rconf *rt, uint32_t n, const uint8_t *gw, uint16_t port)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (rt->nh[k].has_gw && rt->nh[k].port == port &&
		    memcmp(rt->nh[k].gw, gw, ADDR_LEN(rt->af)) == 0)
			return (int)k;
	return -1;
}

/* ---- topology parameters ------------------------------------------------- */

static int
nexthops_parse(struct pf_rconf *rt, const struct pf_stage_conf *sc, const struct pf_stage_env *env,
	       struct pf_errs *errs)
{
	const struct pf_node *nhs = pf_map_get(sc->node, "nexthops"), *v, *nn;
	char path[PF_CONF_PATH_MAX];
	unsigned int errs0 = errs->n;
	uint32_t i;
	int port, rc;

	if (nhs == NULL)
		return 0;
	if (pf_node_expect(nhs, PF_NODE_MAP, "nexthops", errs) < 0)
		return -EINVAL;
	if (nhs->n > PF_RCONF_MAX_NEXTHOPS)
		return pf_node_err(errs, nhs, "stages.%s.nexthops: more than %d next hops",
				   sc->name, PF_RCONF_MAX_NEXTHOPS);
	for (i = 0; i < nhs->n; i++) {
		struct pf_rconf_nh *nh = &rt->nh[rt->n_nh];
		const char *name = nhs->keys[i]->value;

		nn = nhs->items[i];
		memset(nh, 0, sizeof(*nh));
		snprintf(path, sizeof(path), "stages.%s.nexthops.%s", sc->name, name);
		if (strlen(name) >= PF_NAME_MAX || strpbrk(name, " \t#") != NULL) {
			pf_node_err(errs, nhs->keys[i], "%s: bad next-hop name (max %d chars, no blanks or '#')",
				    path, PF_NAME_MAX - 1);
			continue;
		}
		if (pf_node_expect(nn, PF_NODE_MAP, path, errs) < 0 ||
		    pf_map_check_keys(nn, path, nh_keys, errs) < 0)
			continue;
		snprintf(nh->name, sizeof(nh->name), "%s", name);
		v = pf_map_get(nn, "port");
		port = -1;
		if (v == NULL && pf_map_get(nn, "via") == NULL) {
			pf_node_err(errs, nn, "%s: missing required key 'port'", path);
			continue;
		}
		if (v != NULL) {
			port = v->kind == PF_NODE_SCALAR ? pf_stage_port_index(env, v->value) : -1;
			if (port < 0) {
				pf_node_err(errs, v, "%s.port: expected a port name from ports:", path);
				continue;
			}
			nh->port = (uint16_t)port;
		}
		v = pf_map_get(nn, "via");
		if (v != NULL) {
			if (pf_map_get(nn, "mac") != NULL) {
				pf_node_err(errs, v, "%s: 'via' (address) and 'mac' exclude each other",
					    path);
				continue;
			}
			if (v->kind != PF_NODE_SCALAR) {
				pf_node_err(errs, v, "%s.via: expected an address", path);
				continue;
			}
			rc = nh_gw_set(rt->af, nh, v, port, env, path, errs);
			if (rc > 0)
				pf_node_err(errs, v, "%s.via: '%s' is not an IPv%u address", path,
					    v->value, rt->af);
			if (rc != 0)
				continue;
			rt->n_nh++;
			continue;
		}
		v = pf_map_get(nn, "mac");
		if (v == NULL) {
			pf_node_err(errs, nn, "%s: missing required key 'mac' or 'via' (an address)",
				    path);
			continue;
		}
		if (pf_node_mac(v, "mac", nh->mac, errs) < 0)
			continue;
		if (nh->mac[0] & 1) {
			pf_node_err(errs, v, "%s.mac: %s is a group address", path, v->value);
			continue;
		}
		rt->n_nh++;
	}
	return errs->n != errs0 ? -EINVAL : 0;
}

/* One inline route: its `prefix` and `via` (a scalar) nodes. 0, or -ENOMEM to stop. */
static int
inline_route(struct pf_rconf *rt, const struct pf_node *pfx, const struct pf_node *via,
	     const struct pf_stage_env *env, const char *path, struct pf_errs *errs)
{
	uint8_t prefix[16], len;
	uint32_t a4;
	int nh;

	if (rt->af == 4) {
		if (pf_node_ipv4_prefix(pfx, path, true, &a4, &len, errs) < 0)
			return 0;
		a4 = htonl(a4);
		memcpy(prefix, &a4, 4);
	} else if (pf_node_ipv6_prefix(pfx, path, true, prefix, &len, errs) < 0) {
		return 0;
	}
	nh = nh_by_name(rt, via->value);
	if (nh < 0 && (nh = nh_by_address(rt, via, env, path, errs)) == -1)
		return 0;
	if (nh < 0) {
		pf_node_err(errs, via, "%s.via: unknown next hop '%s'", path, via->value);
		return 0;
	}
	return route_add(rt, prefix, len, (uint32_t)nh, (uint32_t)pfx->line, (uint16_t)pfx->col,
			 0) < 0 ? -ENOMEM : 0;
}

/* The stage's `routes:` list: each item checked for its keys (`prefix`, `via`). */
static int
inline_routes(struct pf_rconf *rt, const struct pf_stage_conf *sc, const struct pf_stage_env *env,
	      struct pf_errs *errs)
{
	const struct pf_node *routes = pf_map_get(sc->node, "routes"), *rn, *pfx, *via;
	char path[PF_CONF_PATH_MAX];
	unsigned int errs0 = errs->n;
	uint32_t i;

	if (routes == NULL)
		return 0;
	if (pf_node_expect(routes, PF_NODE_SEQ, "routes", errs) < 0)
		return -EINVAL;
	for (i = 0; i < routes->n; i++) {
		rn = routes->items[i];
		snprintf(path, sizeof(path), "stages.%s.routes[%u]", sc->name, i);
		if (pf_node_expect(rn, PF_NODE_MAP, path, errs) < 0 ||
		    pf_map_check_keys(rn, path, route_keys, errs) < 0)
			continue;
		pfx = pf_map_get(rn, "prefix");
		if (pfx == NULL) {
			pf_node_err(errs, rn, "%s: missing required key 'prefix'", path);
			continue;
		}
		via = pf_map_get(rn, "via");
		if (via == NULL || via->kind != PF_NODE_SCALAR) {
			pf_node_err(errs, via != NULL ? via : rn, "%s: 'via' must name a next hop",
				    path);
			continue;
		}
		if (inline_route(rt, pfx, via, env, path, errs) < 0)
			return -ENOMEM;
	}
	return errs->n != errs0 ? -EINVAL : 0;
}

int
pf_rconf_parse(struct pf_rconf *rt, uint8_t af, struct pf_stage_conf *sc,
	       const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v;
	const char *s;
	int rc = 0;

	rt->af = af;
	rt->stride = (uint8_t)(sizeof(struct pf_rconf_route) + ADDR_LEN(af));
	/* No `nexthops:` is fine when routes name gateways by address. */
	if (nexthops_parse(rt, sc, env, errs) < 0)
		return -EINVAL;  /* routes would only repeat "unknown next hop" */
	if (inline_routes(rt, sc, env, errs) < 0)
		rc = -EINVAL;
	if ((v = pf_map_get(sc->node, "routes_file")) != NULL) {
		if (pf_node_str(v, "routes_file", &s, errs) < 0)
			return -EINVAL;
		pf_conf_resolve_path(env->file, s, rt->routes_file, sizeof(rt->routes_file));
		if (pf_stage_conf_add_file(sc, rt->routes_file, errs) < 0)
			return -EINVAL;
		if (file_read(rt, rt->routes_file, errs) < 0)
			rc = -EINVAL;
	}
	return rc;
}

int
pf_rconf_check_neigh(const struct pf_rconf *rt, const struct pf_stage_conf *sc, bool neigh_wired,
		     struct pf_errs *errs)
{
	uint32_t i;

	for (i = 0; !neigh_wired && i < rt->n_nh; i++)
		if (rt->nh[i].has_gw)
			return pf_node_err(errs, sc->node,
					   "stages.%s: next hop %s is an address: wire the neigh edge (next: { out: ..., neigh: ... })",
					   sc->name, rt->nh[i].name);
	return 0;
}

void
pf_rconf_free(struct pf_rconf *rt)
{
	free(rt->routes);
	rt->routes = NULL;
	rt->n_routes = rt->cap_routes = 0;
}

/* ---- live changes (app/control/changes.c) -------------------------------- */

/* The inline "routes" item whose prefix was at @p line:@p col, or NULL. */
static const struct pf_node *
route_item(const struct pf_stage_conf *sc, uint32_t line, uint16_t col)
{
	const struct pf_node *routes = pf_map_get(sc->node, "routes"), *v;
	uint32_t i;

	for (i = 0; routes != NULL && routes->kind == PF_NODE_SEQ && i < routes->n; i++) {
		v = pf_map_get(routes->items[i], "prefix");
		if (v != NULL && (uint32_t)v->line == line && v->col == col)
			return routes->items[i];
	}
	return NULL;
}

/*
 * A change's entry (ch->entry, copied into @p buf) split into the prefix
 * @p tok[0] and, for an add, the next hop @p tok[1] ("PREFIX NEXTHOP" or
 * "PREFIX via NEXTHOP"; NULL for a delete). Returns 0 or -EINVAL with an error.
 */
static int
edit_split(const struct pf_stage_conf *sc, const struct pf_change *ch,
	   char buf[PF_CHANGE_TEXT_MAX], char *tok[2], struct pf_errs *errs)
{
	char *t[3], *p, *save = NULL;
	int n = 0;

	snprintf(buf, PF_CHANGE_TEXT_MAX, "%s", ch->entry);
	for (p = strtok_r(buf, " \t", &save); p != NULL; p = strtok_r(NULL, " \t", &save), n++)
		if (n < 3)
			t[n] = p;
	/* add: "PREFIX NEXTHOP" or "PREFIX [via] ADDRESS", as `ip route add ... via`. */
	if (!ch->del && n == 3 && strcmp(t[1], "via") == 0)
		n = 2, t[1] = t[2];
	if (n != (ch->del ? 1 : 2))
		return pf_err_add(errs, "", 0, 0, "stages.%s.routes: expected '%s'", sc->group,
				  ch->del ? "PREFIX/LEN" : "PREFIX/LEN NEXTHOP|ADDRESS");
	tok[0] = t[0];
	tok[1] = n == 2 ? t[1] : NULL;
	return 0;
}

/*
 * A live route's IPv4 next hop given by address: the next hop with that
 * gateway and port, made if new and named by the address. Its index, or
 * < 0 with an error.
 */
static int
edit_nh4_by_address(struct pf_rconf *rt, const struct pf_stage_conf *sc,
		    const struct pf_stage_env *env, bool neigh_wired, const char *addr,
		    struct pf_errs *errs)
{
	struct pf_rconf_nh *nh;
	uint32_t gw;
	int port, j;

	if (!pf_parse_ipv4(addr, &gw) || gw == 0)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: unknown next hop '%s' (a name under nexthops: or an IPv4 address)",
				  sc->group, addr);
	if (!neigh_wired)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is an address: the stage has no neigh edge to resolve it (next: { out: ..., neigh: ... })",
				  sc->group, addr);
	gw = htonl(gw);
	port = gw_port(env, 4, (const uint8_t *)&gw);
	if (port < 0)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is on no port's subnet (name a next hop with 'port')",
				  sc->group, addr);
	if (gw_not_host(env, port, ntohl(gw)) != NULL)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is the %s address of port %s's subnet, not a host's",
				  sc->group, addr, gw_not_host(env, port, ntohl(gw)), env->ports[port].name);
	j = nh_by_gw(rt, rt->n_nh, (const uint8_t *)&gw, (uint16_t)port);
	if (j >= 0)
		return j;
	if (rt->n_nh == PF_RCONF_MAX_NEXTHOPS)
		return pf_err_add(errs, "", 0, 0, "stages.%s: more than %d next hops", sc->group,
				  PF_RCONF_MAX_NEXTHOPS);
	nh = &rt->nh[rt->n_nh];
	memset(nh, 0, sizeof(*nh));
	inet_ntop(AF_INET, &gw, nh->name, sizeof(nh->name));
	memcpy(nh->gw, &gw, 4);
	nh->has_gw = 1;
	nh->port = (uint16_t)port;
	return (int)rt->n_nh++;
}

/*
 * A live route's IPv6 next hop given by address (`ADDRESS` or
 * `ADDRESS%PORT`), as a topology route's `via:` takes it; a next hop with
 * the same gateway and port is reused. Its index, or < 0 with an error.
 */
static int
edit_nh6_by_address(struct pf_rconf *rt, const struct pf_stage_conf *sc,
		    const struct pf_stage_env *env, bool neigh_wired, const char *text,
		    struct pf_errs *errs)
{
	struct pf_node v = { .kind = PF_NODE_SCALAR, .file = "", .value = text };
	uint32_t n = rt->n_nh;
	char path[PF_NAME_MAX + 16];
	int rc, j;

	snprintf(path, sizeof(path), "stages.%s", sc->group);
	rc = nh_by_address(rt, &v, env, path, errs);
	if (rc == -2)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: unknown next hop '%s' (a name under nexthops: or an IPv6 address)",
				  sc->group, text);
	if (rc < 0)
		return -EINVAL;
	if (!neigh_wired) {
		rt->n_nh = n;
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is an address: the stage has no neigh edge to resolve it (next: { out: ..., neigh: ... })",
				  sc->group, text);
	}
	j = nh_by_gw(rt, n, rt->nh[rc].gw, rt->nh[rc].port);
	if (j >= 0) {
		rt->n_nh = n;   /* the same gateway under another spelling */
		return j;
	}
	return rc;
}

int
pf_rconf_edit(struct pf_rconf *rt, struct pf_stage_conf *sc, const struct pf_stage_env *env,
	      bool neigh_wired, struct pf_change *ch, struct pf_errs *errs)
{
	char buf[PF_CHANGE_TEXT_MAX], item[PF_CHANGE_TEXT_MAX + 40], *tok[2] = { NULL, NULL };
	const struct pf_node *it;
	struct pf_rconf_route *r;
	uint8_t prefix[16], len;
	const char *why, *q;
	uint32_t k;
	int j;

	if (edit_split(sc, ch, buf, tok, errs) < 0)
		return -EINVAL;
	why = prefix_text(rt->af, tok[0], prefix, &len);
	if (why != NULL)
		return pf_err_add(errs, "", 0, 0, "bad prefix: '%s' %s", tok[0], why);
	prefix_fmt(rt->af, prefix, len, ch->key, sizeof(ch->key));
	r = route_find(rt, prefix, len);
	if (ch->del) {
		if (r == NULL) {
			pf_err_add(errs, "", 0, 0, "stages.%s: no route %s", sc->group, ch->key);
			return -ENOENT;
		}
		snprintf(ch->entry, sizeof(ch->entry), "%s", ch->key);
		it = r->from_file ? NULL : route_item(sc, r->line, r->col);
		if (r->from_file)
			pf_change_del_line(ch, rt->routes_file, (int)r->line);
		else if (it != NULL)
			pf_change_del_item(ch, it);
		rt->n_routes--;
		memmove(r, (char *)r + rt->stride,
			(size_t)((char *)pf_rconf_route(rt, rt->n_routes) - (char *)r));
		return 0;
	}
	if (r != NULL) {
		pf_err_add(errs, "", 0, 0, "stages.%s: route %s exists (via %s): delete it first",
			   sc->group, ch->key, rt->nh[r->nh].name);
		return -EEXIST;
	}
	j = nh_by_name(rt, tok[1]);
	if (j < 0)
		j = rt->af == 4 ? edit_nh4_by_address(rt, sc, env, neigh_wired, tok[1], errs) :
		    edit_nh6_by_address(rt, sc, env, neigh_wired, tok[1], errs);
	if (j < 0)
		return -EINVAL;
	k = (uint32_t)j;
	if (route_add(rt, prefix, len, k, 0, 0, 0) < 0) {
		pf_err_add(errs, "", 0, 0, "stages.%s: route table full (%u routes)", sc->group,
			   rt->n_routes);
		return -ENOSPC;
	}
	routes_sort(rt);
	snprintf(ch->entry, sizeof(ch->entry), "%s %s", ch->key, rt->nh[k].name);
	/* Quoted for IPv6: a plain IPv6 scalar in a flow mapping is not portable YAML. */
	q = rt->af == 6 ? "\"" : "";
	snprintf(item, sizeof(item), "{ prefix: %s%s%s, via: %s%s%s }", q, ch->key, q, q,
		 rt->nh[k].name, q);
	/* A route file names next hops from nexthops: only; one by address goes inline. */
	pf_change_add_at(ch, sc, "routes", pf_map_get(pf_map_get(sc->node, "nexthops"),
						     rt->nh[k].name) == NULL ? "" : rt->routes_file,
			 item);
	return 0;
}
