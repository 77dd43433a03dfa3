/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm configuration parser: next hops, inline routes and the route file.
 * No DPDK here: this runs for --check, at start and on reload, and must cope
 * with a million-line route file quickly (one pass, no per-line allocation,
 * next-hop names found through a small hash).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lpm.h"

static const char *const lpm_modes[] = { "x4", "bulk", "scalar", NULL };

/* ---- next-hop name index ------------------------------------------------ */

static uint32_t
nh_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

void
lpm_nh_index_build(struct lpm_nh_index *ix, const struct lpm_cfg *cfg)
{
	uint32_t i, h;

	memset(ix, 0, sizeof(*ix));
	for (i = 0; i < cfg->n_nh; i++) {
		h = nh_hash(cfg->nh[i].name, strlen(cfg->nh[i].name)) % LPM_NH_HASH_SIZE;
		while (ix->slot[h] != 0)
			h = (h + 1) % LPM_NH_HASH_SIZE;
		ix->slot[h] = (uint16_t)(i + 1);
	}
}

int
lpm_nh_index_find(const struct lpm_nh_index *ix, const struct lpm_cfg *cfg, const char *s, size_t len)
{
	uint32_t h = nh_hash(s, len) % LPM_NH_HASH_SIZE;
	const char *name;

	while (ix->slot[h] != 0) {
		name = cfg->nh[ix->slot[h] - 1].name;
		if (strncmp(name, s, len) == 0 && name[len] == '\0')
			return ix->slot[h] - 1;
		h = (h + 1) % LPM_NH_HASH_SIZE;
	}
	return -1;
}

/* ---- routes ------------------------------------------------------------- */

int
lpm_routes_grow(void **routes, uint32_t *cap, size_t size)
{
	uint32_t n;
	void *nr;

	if (*cap >= LPM_MAX_ROUTES)
		return -ENOSPC;
	n = *cap == 0 ? 1024 : *cap * 2;
	nr = realloc(*routes, (size_t)n * size);
	if (nr == NULL)
		return -ENOMEM;
	*routes = nr;
	*cap = n;
	return 0;
}

static int
route_push(struct lpm_cfg *cfg, const struct lpm_route *r)
{
	int rc;

	if (cfg->n_routes == cfg->cap_routes &&
	    (rc = lpm_routes_grow((void **)&cfg->routes, &cfg->cap_routes, sizeof(*r))) < 0)
		return rc;
	cfg->routes[cfg->n_routes++] = *r;
	return 0;
}

/* Parse "a.b.c.d/len"; on failure return a static reason. */
static const char *
prefix_parse(const char *s, uint32_t *addr, uint8_t *len)
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

const char lpm_add_full[] = "route table full";

int
lpm_table_file_read(const struct lpm_cfg *cfg, const char *path, lpm_route_add_fn *add, void *arg,
		    struct pf_errs *errs)
{
	char line[LPM_LINE_MAX + 2], *tok[3], *p, *hash;
	struct lpm_nh_index *ix;
	const char *why;
	unsigned int errs0 = errs->n;
	uint32_t lineno = 0;
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
	lpm_nh_index_build(ix, cfg);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (errs->n - errs0 >= 20) {
			pf_err_add(errs, path, (int)lineno, 0, "too many errors, giving up");
			break;
		}
		if (strchr(line, '\n') == NULL && !feof(f)) {
			pf_err_add(errs, path, (int)lineno, 1, "line longer than %d characters",
				   LPM_LINE_MAX);
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
		nh = lpm_nh_index_find(ix, cfg, tok[1], strlen(tok[1]));
		if (nh < 0) {
			pf_err_add(errs, path, (int)lineno, (int)(tok[1] - line + 1),
				   "unknown next hop '%s' (define it under nexthops:)", tok[1]);
			continue;
		}
		why = add(arg, tok[0], (uint32_t)nh, lineno, (uint16_t)(tok[0] - line + 1));
		if (why == NULL)
			continue;
		if (why == LPM_ADD_FULL) {
			pf_err_add(errs, path, (int)lineno, 1, "more than %u routes", LPM_MAX_ROUTES);
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

/* One IPv4 route file line (lpm_route_add_fn). */
static const char *
route4_add(void *arg, const char *prefix, uint32_t nh, uint32_t line, uint16_t col)
{
	struct lpm_cfg *cfg = arg;
	struct lpm_route r;
	const char *why;

	memset(&r, 0, sizeof(r));
	why = prefix_parse(prefix, &r.prefix, &r.len);
	if (why != NULL)
		return why;
	r.nh = nh;
	r.line = line;
	r.col = col;
	r.from_file = 1;
	return route_push(cfg, &r) < 0 ? LPM_ADD_FULL : NULL;
}

int
lpm_routes_file_read(struct lpm_cfg *cfg, const char *path, struct pf_errs *errs)
{
	return lpm_table_file_read(cfg, path, route4_add, cfg, errs);
}

static int
route_cmp(const void *a, const void *b)
{
	const struct lpm_route *x = a, *y = b;

	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	/* Inline routes first, then by line: "first defined" is well defined. */
	if (x->from_file != y->from_file)
		return x->from_file < y->from_file ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int
lpm_routes_check_dups(struct lpm_cfg *cfg, const char *topo_file, struct pf_errs *errs)
{
	const struct lpm_route *a, *b;
	uint32_t i, n = 0;

	if (cfg->n_routes < 2)
		return 0;
	qsort(cfg->routes, cfg->n_routes, sizeof(cfg->routes[0]), route_cmp);
	for (i = 1; i < cfg->n_routes && n < 20; i++) {
		a = &cfg->routes[i - 1];
		b = &cfg->routes[i];
		if (a->prefix != b->prefix || a->len != b->len)
			continue;
		pf_err_add(errs, b->from_file ? cfg->routes_file : topo_file, (int)b->line, b->col,
			   "duplicate route %u.%u.%u.%u/%u (first defined at %s:%u)",
			   b->prefix >> 24, (b->prefix >> 16) & 0xff, (b->prefix >> 8) & 0xff,
			   b->prefix & 0xff, b->len, a->from_file ? cfg->routes_file : topo_file,
			   a->line);
		n++;
	}
	return n != 0 ? -EINVAL : 0;
}

/* ---- topology parameters ------------------------------------------------ */

static const char *const nh_keys[] = { "port", "mac", "via", NULL };

/* The port whose connected subnet holds @p gw (host order), or -1. */
static int
gw_port(const struct pf_stage_env *env, uint32_t gw)
{
	uint32_t i, mask;

	for (i = 0; i < env->n_ports; i++) {
		const struct pf_port_conf *pc = &env->ports[i];

		mask = pc->ipv4_len == 0 ? 0 : ~0u << (32 - pc->ipv4_len);
		if (pc->has_ipv4 && pc->ipv4_len < 32 && (gw & mask) == (pc->ipv4 & mask) &&
		    gw != pc->ipv4)
			return (int)i;
	}
	return -1;
}

/* "network" or "broadcast" when @p gw is that address of port @p port's subnet, else NULL. */
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
 * A next hop by address: `via: a.b.c.d` in nexthops, or an address where a
 * route names its next hop. The port is the given one or the one whose
 * connected subnet holds the address (as `ip route add ... via`).
 */
static int
nh_gw_set(struct lpm_nh_conf *nh, const struct pf_node *v, int port, const struct pf_stage_env *env,
	  const char *path, struct pf_errs *errs)
{
	if (!pf_parse_ipv4(v->value, &nh->gw) || nh->gw == 0)
		return pf_node_err(errs, v, "%s.via: '%s' is not an IPv4 address", path, v->value);
	if (port < 0)
		port = gw_port(env, nh->gw);
	if (port < 0)
		return pf_node_err(errs, v, "%s.via: %s is on no port's subnet (give 'port')", path,
				   v->value);
	if (gw_not_host(env, port, nh->gw) != NULL)
		return pf_node_err(errs, v, "%s.via: %s is the %s address of port %s's subnet, "
				   "not a host's", path, v->value, gw_not_host(env, port, nh->gw),
				   env->ports[port].name);
	nh->port = (uint16_t)port;
	return 0;
}
static const char *const route_keys[] = { "prefix", "via", NULL };

int
lpm_nexthops_parse(struct lpm_cfg *cfg, const struct pf_stage_conf *sc, const struct pf_stage_env *env,
		   lpm_nh_via_fn via, void *via_arg, struct pf_errs *errs)
{
	const struct pf_node *nhs = pf_map_get(sc->node, "nexthops"), *v, *nn;
	char path[PF_CONF_PATH_MAX];
	unsigned int errs0 = errs->n;
	uint32_t i;
	int port;

	if (nhs == NULL)
		return 0;
	if (pf_node_expect(nhs, PF_NODE_MAP, "nexthops", errs) < 0)
		return -EINVAL;
	if (nhs->n > LPM_MAX_NEXTHOPS)
		return pf_node_err(errs, nhs, "stages.%s.nexthops: more than %d next hops",
				   sc->name, LPM_MAX_NEXTHOPS);
	for (i = 0; i < nhs->n; i++) {
		struct lpm_nh_conf *nh = &cfg->nh[cfg->n_nh];
		const char *name = nhs->keys[i]->value;

		nn = nhs->items[i];
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
			if ((via != NULL ? via(via_arg, cfg->n_nh, v, port, env, path, errs) :
			     nh_gw_set(nh, v, port, env, path, errs)) < 0)
				continue;
			cfg->n_nh++;
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
		cfg->n_nh++;
	}
	return errs->n != errs0 ? -EINVAL : 0;
}

/* The next hop for address @p v (implicit, named by the address), or -1 with an error. */
static int
nh_by_address(struct lpm_cfg *cfg, const struct pf_node *v, const struct pf_stage_env *env,
	      const char *path, struct pf_errs *errs)
{
	struct lpm_nh_conf *nh;
	uint32_t k;

	for (k = 0; k < cfg->n_nh; k++)
		if (strcmp(cfg->nh[k].name, v->value) == 0)
			return (int)k;
	if (cfg->n_nh == LPM_MAX_NEXTHOPS) {
		pf_node_err(errs, v, "%s.via: more than %d next hops", path, LPM_MAX_NEXTHOPS);
		return -1;
	}
	nh = &cfg->nh[cfg->n_nh];
	memset(nh, 0, sizeof(*nh));
	snprintf(nh->name, sizeof(nh->name), "%s", v->value);
	if (nh_gw_set(nh, v, -1, env, path, errs) < 0)
		return -1;
	return (int)cfg->n_nh++;
}

int
lpm_nh_by_name(const struct lpm_cfg *cfg, const char *name)
{
	uint32_t k;

	for (k = 0; k < cfg->n_nh; k++)
		if (strcmp(cfg->nh[k].name, name) == 0)
			return (int)k;
	return -1;
}

int
lpm_inline_routes_walk(const struct pf_stage_conf *sc, lpm_inline_route_fn *fn, void *arg,
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
		if (fn(arg, pfx, via, path, errs) < 0)
			return -ENOMEM;
	}
	return errs->n != errs0 ? -EINVAL : 0;
}

struct inline_arg {
	struct lpm_cfg *cfg;
	const struct pf_stage_env *env;
};

/* One inline IPv4 route (lpm_inline_route_fn). */
static int
inline_route(void *arg, const struct pf_node *pfx, const struct pf_node *via, const char *path,
	     struct pf_errs *errs)
{
	struct inline_arg *a = arg;
	struct lpm_route r;
	uint32_t ignored;
	int nh;

	memset(&r, 0, sizeof(r));
	if (pf_node_ipv4_prefix(pfx, path, true, &r.prefix, &r.len, errs) < 0)
		return 0;
	r.line = (uint32_t)pfx->line;
	r.col = (uint16_t)pfx->col;
	nh = lpm_nh_by_name(a->cfg, via->value);
	if (nh < 0 && pf_parse_ipv4(via->value, &ignored)) {
		nh = nh_by_address(a->cfg, via, a->env, path, errs);
		if (nh < 0)
			return 0;
	}
	if (nh < 0) {
		pf_node_err(errs, via, "%s.via: unknown next hop '%s'", path, via->value);
		return 0;
	}
	r.nh = (uint32_t)nh;
	return route_push(a->cfg, &r) < 0 ? -ENOMEM : 0;
}

int
lpm_cfg_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v;
	struct lpm_cfg *cfg;
	const char *s;
	int mode = 0, rc = 0;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	if ((v = pf_map_get(sc->node, "lookup")) != NULL) {
		if (pf_node_enum(v, "lookup", lpm_modes, &mode, errs) < 0)
			rc = -EINVAL;
		cfg->mode = (enum lpm_lookup_mode)mode;
	}
	if (lpm_nexthops_parse(cfg, sc, env, NULL, NULL, errs) < 0)
		return -EINVAL;  /* routes would only repeat "unknown next hop" */
	if (lpm_inline_routes_walk(sc, inline_route, &(struct inline_arg){ cfg, env }, errs) < 0)
		rc = -EINVAL;
	if ((v = pf_map_get(sc->node, "routes_file")) != NULL) {
		if (pf_node_str(v, "routes_file", &s, errs) < 0)
			return -EINVAL;
		pf_conf_resolve_path(env->file, s, cfg->routes_file, sizeof(cfg->routes_file));
		if (pf_stage_conf_add_file(sc, cfg->routes_file, errs) < 0)
			return -EINVAL;
		if (lpm_routes_file_read(cfg, cfg->routes_file, errs) < 0)
			rc = -EINVAL;
	}
	/* No routes at all is fine: the connected subnets (neigh edge) may be all. */
	if (rc == 0)
		rc = lpm_routes_check_dups(cfg, env->file, errs);
	return rc;
}

void
lpm_cfg_free(void *p)
{
	struct lpm_cfg *cfg = p;

	if (cfg == NULL)
		return;
	free(cfg->routes);
	free(cfg);
}

int
lpm_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct lpm_cfg *cfg;
	uint32_t i;
	int rc;

	rc = lpm_cfg_parse(sc, env, errs);
	cfg = sc->cfg;
	if (cfg != NULL && pf_lrn_parse(sc, 4, &((struct lpm_cfg *)sc->cfg)->learnt, errs) < 0)
		rc = -EINVAL;
	if (rc < 0 || cfg == NULL || sc->next[LPM_EDGE_NEIGH] != PF_NONE)
		return rc;
	/* Only the neigh stage can find a next hop's MAC from its address. */
	for (i = 0; i < cfg->n_nh; i++)
		if (cfg->nh[i].gw != 0)
			return pf_node_err(errs, sc->node,
					   "stages.%s: next hop %s is an address: wire the neigh edge (next: { out: ..., neigh: ... })",
					   sc->name, cfg->nh[i].name);
	return 0;
}

bool
lpm_edit_neigh_wired(const struct pf_stage_conf *sc)
{
	return sc->next[LPM_EDGE_NEIGH] != PF_NONE;
}

/* ---- live changes (app/control/changes.c) --------------------------------------- */

/* The route @p addr/@p len in sorted @p cfg, or NULL. */
static struct lpm_route *
route_find(struct lpm_cfg *cfg, uint32_t addr, uint8_t len)
{
	uint32_t lo = 0, hi = cfg->n_routes, mid;
	struct lpm_route *r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = &cfg->routes[mid];
		if (r->prefix == addr && r->len == len)
			return r;
		if (r->prefix < addr || (r->prefix == addr && r->len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The inline "routes" item whose prefix was at @p line:@p col, or NULL. */
static const struct pf_node *
lpm_route_item(const struct pf_stage_conf *sc, uint32_t line, uint16_t col)
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

void
lpm_edit_del_at(const struct pf_stage_conf *sc, struct pf_change *ch, const char *routes_file,
		bool from_file, uint32_t line, uint16_t col)
{
	const struct pf_node *it = from_file ? NULL : lpm_route_item(sc, line, col);

	snprintf(ch->entry, sizeof(ch->entry), "%s", ch->key);
	if (from_file)
		pf_change_del_line(ch, routes_file, (int)line);
	else if (it != NULL)
		pf_change_del_item(ch, it);
}

int
lpm_edit_split(const struct pf_stage_conf *sc, const struct pf_change *ch,
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
 * A live route's next hop given by address (as a topology route's `via:`): the
 * implicit next hop of that name, made if new. Only the neigh stage can find
 * its MAC, so the stage must have its neigh edge wired.
 */
static int
edit_nh_by_address(struct pf_stage_conf *sc, const struct pf_stage_env *env, const char *addr,
		   uint32_t *k, struct pf_errs *errs)
{
	struct lpm_cfg *cfg = sc->cfg;
	struct lpm_nh_conf *nh;
	uint32_t gw;
	int port;

	if (!pf_parse_ipv4(addr, &gw) || gw == 0)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: unknown next hop '%s' (a name under nexthops: or an IPv4 address)",
				  sc->group, addr);
	if (!lpm_edit_neigh_wired(sc))
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is an address: the stage has no neigh edge to resolve it (next: { out: ..., neigh: ... })",
				  sc->group, addr);
	port = gw_port(env, gw);
	if (port < 0)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is on no port's subnet (name a next hop with 'port')",
				  sc->group, addr);
	if (gw_not_host(env, port, gw) != NULL)
		return pf_err_add(errs, "", 0, 0,
				  "stages.%s: next hop %s is the %s address of port %s's subnet, not a host's",
				  sc->group, addr, gw_not_host(env, port, gw), env->ports[port].name);
	for (*k = 0; *k < cfg->n_nh; (*k)++)
		if (cfg->nh[*k].gw == gw && cfg->nh[*k].port == port)
			return 0;
	if (cfg->n_nh == LPM_MAX_NEXTHOPS)
		return pf_err_add(errs, "", 0, 0, "stages.%s: more than %d next hops", sc->group,
				  LPM_MAX_NEXTHOPS);
	nh = &cfg->nh[cfg->n_nh];
	memset(nh, 0, sizeof(*nh));
	snprintf(nh->name, sizeof(nh->name), "%u.%u.%u.%u", gw >> 24, (gw >> 16) & 0xff,
		 (gw >> 8) & 0xff, gw & 0xff);
	nh->gw = gw;
	nh->port = (uint16_t)port;
	*k = cfg->n_nh++;
	return 0;
}

/*
 * "PREFIX/LEN NEXTHOP" (add) or "PREFIX/LEN" (del) on the parsed routes.
 * Routes stay sorted (lpm_routes_check_dups sorted them).
 */
int
lpm_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
	     struct pf_errs *errs)
{
	struct lpm_cfg *cfg = sc->cfg;
	char buf[PF_CHANGE_TEXT_MAX], item[PF_CHANGE_TEXT_MAX + 40], *tok[2];
	struct lpm_route nr = { 0 }, *r;
	const char *why;
	uint32_t k;

	if (lpm_edit_split(sc, ch, buf, tok, errs) < 0)
		return -EINVAL;
	why = prefix_parse(tok[0], &nr.prefix, &nr.len);
	if (why != NULL)
		return pf_err_add(errs, "", 0, 0, "bad prefix: '%s' %s", tok[0], why);
	snprintf(ch->key, sizeof(ch->key), "%u.%u.%u.%u/%u", nr.prefix >> 24,
		 (nr.prefix >> 16) & 0xff, (nr.prefix >> 8) & 0xff, nr.prefix & 0xff, nr.len);
	r = route_find(cfg, nr.prefix, nr.len);
	if (ch->del) {
		if (r == NULL) {
			pf_err_add(errs, "", 0, 0, "stages.%s: no route %s", sc->group, ch->key);
			return -ENOENT;
		}
		lpm_edit_del_at(sc, ch, cfg->routes_file, r->from_file, r->line, r->col);
		memmove(r, r + 1, (size_t)(cfg->routes + cfg->n_routes - r - 1) * sizeof(*r));
		cfg->n_routes--;
		return 0;
	}
	if (r != NULL) {
		pf_err_add(errs, "", 0, 0, "stages.%s: route %s exists (via %s): delete it first",
			   sc->group, ch->key, cfg->nh[r->nh].name);
		return -EEXIST;
	}
	for (k = 0; k < cfg->n_nh; k++)
		if (strcmp(cfg->nh[k].name, tok[1]) == 0)
			break;
	if (k == cfg->n_nh && edit_nh_by_address(sc, env, tok[1], &k, errs) < 0)
		return -EINVAL;
	nr.nh = k;
	if (route_push(cfg, &nr) < 0) {
		pf_err_add(errs, "", 0, 0, "stages.%s: route table full (%u routes)", sc->group,
			   cfg->n_routes);
		return -ENOSPC;
	}
	qsort(cfg->routes, cfg->n_routes, sizeof(cfg->routes[0]), route_cmp);
	snprintf(ch->entry, sizeof(ch->entry), "%s %s", ch->key, cfg->nh[k].name);
	snprintf(item, sizeof(item), "{ prefix: %s, via: %s }", ch->key, cfg->nh[k].name);
	/* A route file names next hops from nexthops: only; one by address goes inline. */
	pf_change_add_at(ch, sc, "routes", pf_map_get(pf_map_get(sc->node, "nexthops"),
						     cfg->nh[k].name) == NULL ? "" : cfg->routes_file,
			 item);
	return 0;
}
