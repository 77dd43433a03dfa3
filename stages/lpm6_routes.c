/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm6 configuration parser: next hops (lpm's syntax and parser, plus a
 * route's `via: ADDRESS`), inline routes and the route file ("PREFIX/LEN
 * NEXTHOP", lpm's reader). No DPDK: this runs for --check, at start and on
 * reload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "lpm6.h"
#include "pf_ip6.h"

static int
route6_push(struct lpm6_cfg *cfg, const struct lpm6_route *r)
{
	int rc;

	if (cfg->n_routes == cfg->cap_routes &&
	    (rc = lpm_routes_grow((void **)&cfg->routes, &cfg->cap_routes, sizeof(*r))) < 0)
		return rc;
	cfg->routes[cfg->n_routes++] = *r;
	return 0;
}

/* One route file line (lpm_route_add_fn). */
static const char *
route6_add(void *arg, const char *prefix, uint32_t nh, uint32_t line, uint16_t col)
{
	struct lpm6_cfg *cfg = arg;
	struct lpm6_route r;
	const char *why;

	memset(&r, 0, sizeof(r));
	why = pf_parse_ipv6_prefix(prefix, true, r.prefix, &r.len);
	if (why != NULL)
		return why;
	r.nh = nh;
	r.line = line;
	r.col = col;
	r.from_file = 1;
	return route6_push(cfg, &r) < 0 ? LPM_ADD_FULL : NULL;
}

static int
route6_cmp(const void *a, const void *b)
{
	const struct lpm6_route *x = a, *y = b;
	int c = memcmp(x->prefix, y->prefix, 16);

	if (c != 0)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	/* Inline routes first, then by line: "first defined" is well defined. */
	if (x->from_file != y->from_file)
		return x->from_file < y->from_file ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int
routes6_check_dups(struct lpm6_cfg *cfg, const char *topo_file, struct pf_errs *errs)
{
	const struct lpm6_route *a, *b;
	char s[INET6_ADDRSTRLEN];
	uint32_t i, n = 0;

	if (cfg->n_routes < 2)
		return 0;
	qsort(cfg->routes, cfg->n_routes, sizeof(cfg->routes[0]), route6_cmp);
	for (i = 1; i < cfg->n_routes && n < 20; i++) {
		a = &cfg->routes[i - 1];
		b = &cfg->routes[i];
		if (a->len != b->len || memcmp(a->prefix, b->prefix, 16) != 0)
			continue;
		inet_ntop(AF_INET6, b->prefix, s, sizeof(s));
		pf_err_add(errs, b->from_file ? cfg->base.routes_file : topo_file, (int)b->line,
			   b->col, "duplicate route %s/%u (first defined at %s:%u)", s, b->len,
			   a->from_file ? cfg->base.routes_file : topo_file, a->line);
		n++;
	}
	return n != 0 ? -EINVAL : 0;
}

/* The port whose connected `ipv6:` prefix holds @p a (not one of its addresses), or -1. */
static int
gw6_port(const struct pf_stage_env *env, const uint8_t *a)
{
	uint32_t i, j;

	for (i = 0; i < env->n_ports; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		for (j = 0; j < pc->n_ipv6; j++)
			if (pf_ip6_in_prefix(a, pc->ipv6[j], pc->ipv6_len[j]) &&
			    memcmp(a, pc->ipv6[j], 16) != 0)
				return (int)i;
	}
	return -1;
}

/*
 * Next hop @p k's gateway from `ADDRESS` or `ADDRESS%PORT` (needed for a
 * link-local gateway), its MAC found by the neigh stage; the port is the one
 * named, @p port (a nexthops entry's `port:`), or the one whose ipv6 prefix
 * holds the address. Returns 0, -2 when @p v is not an address, or -1 with
 * an error.
 */
static int
nh6_gw_set(struct lpm6_cfg *cfg, uint32_t k, const struct pf_node *v, int port,
	   const struct pf_stage_env *env, const char *path, struct pf_errs *errs)
{
	char buf[64], *pct;
	uint8_t a[16];

	snprintf(buf, sizeof(buf), "%s", v->value);
	pct = strchr(buf, '%');
	if (pct != NULL)
		*pct++ = '\0';
	if (strlen(v->value) >= PF_NAME_MAX || inet_pton(AF_INET6, buf, a) != 1)
		return -2;
	if (pf_ip6_is_mcast(a) || pf_ip6_zero_or_loopback(a) >= 0 || pf_ip6_is_v4mapped(a)) {
		pf_node_err(errs, v, "%s.via: %s is not a unicast address", path, v->value);
		return -1;
	}
	if (pct != NULL) {
		int named = pf_stage_port_index(env, pct);

		if (named < 0 || (port >= 0 && port != named)) {
			pf_node_err(errs, v, named < 0 ? "%s.via: %s: unknown port" :
				    "%s.via: %s names another port than 'port'", path, v->value);
			return -1;
		}
		port = named;
	} else if (port < 0) {
		port = gw6_port(env, a);
	}
	if (port < 0) {
		pf_node_err(errs, v, "%s.via: %s is on no port's ipv6 prefix (give 'port' or write ADDRESS%%PORT)",
			    path, v->value);
		return -1;
	}
	cfg->base.nh[k].port = (uint16_t)port;
	memcpy(cfg->gw6[k], a, 16);
	return 0;
}

/* `via:` in a nexthops entry (lpm_nh_via_fn): an IPv6 address only. */
static int
nh6_via(void *arg, uint32_t k, const struct pf_node *v, int port, const struct pf_stage_env *env,
	const char *path, struct pf_errs *errs)
{
	int rc = nh6_gw_set(arg, k, v, port, env, path, errs);

	if (rc == -2)
		return pf_node_err(errs, v, "%s.via: '%s' is not an IPv6 address", path, v->value);
	return rc;
}

/*
 * A route's `via: ADDRESS` (or `ADDRESS%PORT`): an implicit next hop named
 * by the text. Returns its index, -2 when @p v is not an address (an
 * unknown next-hop name), or -1 with an error.
 */
static int
nh6_by_address(struct lpm6_cfg *cfg, const struct pf_node *v, const struct pf_stage_env *env,
	       const char *path, struct pf_errs *errs)
{
	uint32_t k = cfg->base.n_nh;
	int rc;

	if (k == LPM_MAX_NEXTHOPS) {
		char buf[64];
		uint8_t a[16];

		snprintf(buf, sizeof(buf), "%s", v->value);
		buf[strcspn(buf, "%")] = '\0';
		if (inet_pton(AF_INET6, buf, a) != 1)
			return -2;      /* a name after all: "unknown next hop" */
		pf_node_err(errs, v, "%s.via: more than %d next hops", path, LPM_MAX_NEXTHOPS);
		return -1;
	}
	memset(&cfg->base.nh[k], 0, sizeof(cfg->base.nh[k]));
	rc = nh6_gw_set(cfg, k, v, -1, env, path, errs);
	if (rc < 0)
		return rc;
	snprintf(cfg->base.nh[k].name, sizeof(cfg->base.nh[k].name), "%s", v->value);
	cfg->base.n_nh++;
	return (int)k;
}

struct inline6_arg {
	struct lpm6_cfg *cfg;
	const struct pf_stage_env *env;
};

/* One inline IPv6 route (lpm_inline_route_fn). */
static int
inline_route6(void *arg, const struct pf_node *pfx, const struct pf_node *via, const char *path,
	      struct pf_errs *errs)
{
	struct inline6_arg *a = arg;
	struct lpm6_route r;
	int nh;

	memset(&r, 0, sizeof(r));
	if (pf_node_ipv6_prefix(pfx, path, true, r.prefix, &r.len, errs) < 0)
		return 0;
	r.line = (uint32_t)pfx->line;
	r.col = (uint16_t)pfx->col;
	nh = lpm_nh_by_name(&a->cfg->base, via->value);
	if (nh < 0 && (nh = nh6_by_address(a->cfg, via, a->env, path, errs)) == -1)
		return 0;
	if (nh < 0) {
		pf_node_err(errs, via, "%s.via: unknown next hop '%s'", path, via->value);
		return 0;
	}
	r.nh = (uint32_t)nh;
	return route6_push(a->cfg, &r) < 0 ? -ENOMEM : 0;
}

int
lpm6_cfg_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v;
	struct lpm6_cfg *cfg;
	const char *s;
	int rc = 0;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	/* No `nexthops:` is fine when routes name gateways by address. */
	if (lpm_nexthops_parse(&cfg->base, sc, env, nh6_via, cfg, errs) < 0)
		return -EINVAL;  /* routes would only repeat "unknown next hop" */
	if (lpm_inline_routes_walk(sc, inline_route6, &(struct inline6_arg){ cfg, env },
				   errs) < 0)
		rc = -EINVAL;
	if ((v = pf_map_get(sc->node, "routes_file")) != NULL) {
		if (pf_node_str(v, "routes_file", &s, errs) < 0)
			return -EINVAL;
		pf_conf_resolve_path(env->file, s, cfg->base.routes_file,
				     sizeof(cfg->base.routes_file));
		if (pf_stage_conf_add_file(sc, cfg->base.routes_file, errs) < 0)
			return -EINVAL;
		if (lpm_table_file_read(&cfg->base, cfg->base.routes_file, route6_add, cfg, errs) < 0)
			rc = -EINVAL;
	}
	if (rc == 0)
		rc = routes6_check_dups(cfg, env->file, errs);
	return rc;
}

void
lpm6_cfg_free(void *p)
{
	struct lpm6_cfg *cfg = p;

	if (cfg == NULL)
		return;
	free(cfg->routes);
	free(cfg);
}

/* ---- live changes (app/control/changes.c) --------------------------------------- */

const char *const lpm6_edit_tables[] = { "routes", NULL };

/* The route @p addr/@p len in sorted @p cfg, or NULL. */
static struct lpm6_route *
route6_find(struct lpm6_cfg *cfg, const uint8_t *addr, uint8_t len)
{
	uint32_t lo = 0, hi = cfg->n_routes, mid;
	struct lpm6_route *r;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = &cfg->routes[mid];
		c = memcmp(r->prefix, addr, 16);
		if (c == 0 && r->len == len)
			return r;
		if (c < 0 || (c == 0 && r->len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * A live route's next hop given by address (`route-add lpm6 P ADDRESS` or
 * `ADDRESS%PORT`), as a topology route's `via:` takes it: the neigh stage
 * finds its MAC, so the neigh edge must be wired. A next hop with the same
 * address and port is reused.
 */
static int
edit_nh6_by_address(struct pf_stage_conf *sc, const struct pf_stage_env *env, const char *text,
		    uint32_t *k, struct pf_errs *errs)
{
	struct pf_node v = { .kind = PF_NODE_SCALAR, .file = "", .value = text };
	struct lpm6_cfg *cfg = sc->cfg;
	uint32_t n = cfg->base.n_nh, j;
	char path[PF_NAME_MAX + 16];
	int rc;

	snprintf(path, sizeof(path), "stages.%s", sc->group);
	rc = nh6_by_address(cfg, &v, env, path, errs);
	if (rc == -2)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: unknown next hop '%s' (a name under nexthops: or an IPv6 address)",
				  sc->group, text);
	if (rc < 0)
		return -EINVAL;
	if (!lpm6_edit_neigh_wired(sc)) {
		cfg->base.n_nh = n;
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is an address: the stage has no neigh edge to resolve it (next: { out: ..., neigh: ... })",
				  sc->group, text);
	}
	for (j = 0; j < n; j++)
		if (cfg->base.nh[j].port == cfg->base.nh[rc].port &&
		    memcmp(cfg->gw6[j], cfg->gw6[rc], 16) == 0) {
			cfg->base.n_nh = n;     /* the same gateway under another spelling */
			*k = j;
			return 0;
		}
	*k = (uint32_t)rc;
	return 0;
}

/*
 * "PREFIX/LEN NEXTHOP" (add) or "PREFIX/LEN" (del) on the parsed IPv6 routes,
 * as lpm's edit does for IPv4; routes stay sorted (routes6_check_dups sorted
 * them). The next hop is a name from nexthops:.
 */
int
lpm6_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
	      struct pf_errs *errs)
{
	struct lpm6_cfg *cfg = sc->cfg;
	char buf[PF_CHANGE_TEXT_MAX], item[PF_CHANGE_TEXT_MAX + 40], s[INET6_ADDRSTRLEN], *tok[2];
	struct lpm6_route nr = { 0 }, *r;
	const char *why;
	uint32_t k;

	if (lpm_edit_split(sc, ch, buf, tok, errs) < 0)
		return -EINVAL;
	why = pf_parse_ipv6_prefix(tok[0], true, nr.prefix, &nr.len);
	if (why != NULL)
		return pf_err_add(errs, "", 0, 0, "bad prefix: '%s' %s", tok[0], why);
	inet_ntop(AF_INET6, nr.prefix, s, sizeof(s));
	snprintf(ch->key, sizeof(ch->key), "%s/%u", s, nr.len);
	r = route6_find(cfg, nr.prefix, nr.len);
	if (ch->del) {
		if (r == NULL) {
			pf_err_add(errs, "", 0, 0, "stages.%s: no route %s", sc->group, ch->key);
			return -ENOENT;
		}
		lpm_edit_del_at(sc, ch, cfg->base.routes_file, r->from_file, r->line, r->col);
		memmove(r, r + 1, (size_t)(cfg->routes + cfg->n_routes - r - 1) * sizeof(*r));
		cfg->n_routes--;
		return 0;
	}
	if (r != NULL) {
		pf_err_add(errs, "", 0, 0, "stages.%s: route %s exists (via %s): delete it first",
			   sc->group, ch->key, cfg->base.nh[r->nh].name);
		return -EEXIST;
	}
	for (k = 0; k < cfg->base.n_nh; k++)
		if (strcmp(cfg->base.nh[k].name, tok[1]) == 0)
			break;
	if (k == cfg->base.n_nh && edit_nh6_by_address(sc, env, tok[1], &k, errs) < 0)
		return -EINVAL;
	nr.nh = k;
	if (route6_push(cfg, &nr) < 0) {
		pf_err_add(errs, "", 0, 0, "stages.%s: route table full (%u routes)", sc->group,
			   cfg->n_routes);
		return -ENOSPC;
	}
	qsort(cfg->routes, cfg->n_routes, sizeof(cfg->routes[0]), route6_cmp);
	snprintf(ch->entry, sizeof(ch->entry), "%s %s", ch->key, cfg->base.nh[k].name);
	/* Quoted: a plain IPv6 scalar in a flow mapping is not portable YAML. */
	snprintf(item, sizeof(item), "{ prefix: \"%s\", via: \"%s\" }", ch->key,
		 cfg->base.nh[k].name);
	/* A route file names next hops from nexthops: only; one by address goes inline. */
	pf_change_add_at(ch, sc, "routes", pf_map_get(pf_map_get(sc->node, "nexthops"),
						     cfg->base.nh[k].name) == NULL ? "" :
			 cfg->base.routes_file, item);
	return 0;
}
