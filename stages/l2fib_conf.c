/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fib parameters: bridge domains, table size, aging, port learn limit and
 * static entries (inline or from a file), checked without DPDK for --check,
 * start and reload. Every error names file:line:col.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l2fib.h"

static int
l2_domain_of(const struct l2_cfg *cfg, uint16_t port, uint16_t vlan)
{
	uint16_t d;

	for (d = 0; d < cfg->n_domains; d++)
		if (cfg->dom[d].vlan == vlan && (cfg->dom[d].port_mask & (1u << port)))
			return d;
	return -1;
}

static int
l2_parse_domain(struct l2_cfg *cfg, const char *stage, const char *name,
		const struct pf_node *dn, const struct pf_stage_env *env, struct pf_errs *errs)
{
	static const char *const dom_keys[] = { "ports", "vlan", NULL };
	struct l2_domain_cfg *dom = &cfg->dom[cfg->n_domains];
	char path[PF_CONF_PATH_MAX];
	uint16_t ports[PF_MAX_PORTS], n = 0, i;
	const struct pf_node *v;
	uint32_t vlan = 0;
	int other;

	snprintf(path, sizeof(path), "stages.%s.domains.%s", stage, name);
	if (strlen(name) >= PF_NAME_MAX)
		return pf_node_err(errs, dn, "%s: name longer than %d characters", path,
				   PF_NAME_MAX - 1);
	if (pf_node_expect(dn, PF_NODE_MAP, path, errs) < 0 ||
	    pf_map_check_keys(dn, path, dom_keys, errs) < 0)
		return -EINVAL;
	if ((v = pf_map_get(dn, "vlan")) != NULL) {
		snprintf(path, sizeof(path), "stages.%s.domains.%s.vlan", stage, name);
		if (pf_node_u32(v, path, 1, 4094, &vlan, errs) < 0)
			return -EINVAL;
	}
	v = pf_map_get(dn, "ports");
	snprintf(path, sizeof(path), "stages.%s.domains.%s.ports", stage, name);
	if (v == NULL)
		return pf_node_err(errs, dn, "stages.%s.domains.%s: missing required key 'ports'",
				   stage, name);
	if (pf_stage_port_list(env, v, path, ports, PF_MAX_PORTS, &n, errs) < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		other = l2_domain_of(cfg, ports[i], (uint16_t)vlan);
		if (other >= 0)
			return pf_node_err(errs, v->items[i],
					   "%s[%u]: port '%s' %s already belongs to domain '%s'",
					   path, i, env->ports[ports[i]].name,
					   vlan ? "with this vlan" : "untagged",
					   cfg->dom[other].name);
		dom->port_mask |= 1u << ports[i];
	}
	snprintf(dom->name, sizeof(dom->name), "%s", name);
	dom->vlan = (uint16_t)vlan;
	cfg->n_domains++;
	return 0;
}

/* Check one static entry and append it. @p where names it in messages. */
static int
l2_add_static(struct l2_cfg *cfg, const struct pf_stage_env *env, const char *where,
	      const char *file, int line, int col, const char *mac_s, const char *port_s,
	      const char *dom_s, struct pf_errs *errs)
{
	struct l2_static_cfg *s;
	int port, bd = -1, d, n = 0;
	uint8_t mac[6];

	if (!pf_parse_mac(mac_s, mac))
		return pf_err_add(errs, file, line, col, "%s: '%s' is not a MAC address", where,
				  mac_s);
	if (mac[0] & 1)
		return pf_err_add(errs, file, line, col, "%s: %s is a group address", where,
				  mac_s);
	if ((mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0)
		return pf_err_add(errs, file, line, col, "%s: %s is the zero address", where,
				  mac_s);
	port = pf_stage_port_index(env, port_s);
	if (port < 0)
		return pf_err_add(errs, file, line, col, "%s: unknown port '%s'", where, port_s);
	for (d = 0; d < env->n_ports; d++)
		if (env->ports[d].has_mac && memcmp(env->ports[d].mac, mac, 6) == 0)
			return pf_err_add(errs, file, line, col,
					  "%s: %s is the MAC of port '%s' (never a station)", where,
					  mac_s, env->ports[d].name);
	if (dom_s != NULL) {
		for (d = 0; d < cfg->n_domains; d++)
			if (strcmp(cfg->dom[d].name, dom_s) == 0)
				bd = d;
		if (bd < 0)
			return pf_err_add(errs, file, line, col, "%s: unknown domain '%s'", where,
					  dom_s);
		if (!(cfg->dom[bd].port_mask & (1u << port)))
			return pf_err_add(errs, file, line, col,
					  "%s: port '%s' is not in domain '%s'", where, port_s,
					  dom_s);
	} else {
		for (d = 0; d < cfg->n_domains; d++)
			if (cfg->dom[d].port_mask & (1u << port))
				bd = d, n++;
		if (n == 0)
			return pf_err_add(errs, file, line, col,
					  "%s: port '%s' is in no bridge domain", where, port_s);
		if (n > 1)
			return pf_err_add(errs, file, line, col,
					  "%s: port '%s' is in %d domains: say which one", where,
					  port_s, n);
	}
	if (cfg->n_static % 256 == 0) {
		s = realloc(cfg->statics, (cfg->n_static + 256) * sizeof(*s));
		if (s == NULL)
			return pf_err_add(errs, file, line, col, "%s: out of memory", where);
		cfg->statics = s;
	}
	s = &cfg->statics[cfg->n_static++];
	memcpy(s->mac, mac, 6);
	s->port = (uint16_t)port;
	s->bd = (uint16_t)bd;
	s->file = file;
	s->line = line;
	s->col = col;
	return 0;
}

static int
l2_parse_static_file(struct l2_cfg *cfg, const struct pf_stage_env *env, struct pf_stage_conf *sc,
		     const struct pf_node *v, struct pf_errs *errs)
{
	const char *stage = sc->name;
	char *buf = NULL, *tok[4], *save, *p, where[PF_CONF_PATH_MAX];
	size_t cap = 0;
	int line = 0, rc = 0, k;
	FILE *f;

	pf_conf_resolve_path(v->file, v->value, cfg->static_file, sizeof(cfg->static_file));
	if (pf_stage_conf_add_file(sc, cfg->static_file, errs) < 0)
		return -EINVAL;
	f = pf_table_fopen(cfg->static_file);
	if (f == NULL)
		return pf_node_err(errs, v, "stages.%s.static: cannot open '%s': %s", stage,
				   cfg->static_file, strerror(errno));
	while (getline(&buf, &cap, f) > 0) {
		line++;
		if ((p = strchr(buf, '#')) != NULL)
			*p = '\0';
		for (k = 0, p = strtok_r(buf, " \t\r\n", &save); p != NULL && k < 4;
		     p = strtok_r(NULL, " \t\r\n", &save))
			tok[k++] = p;
		if (k == 0)
			continue;
		snprintf(where, sizeof(where), "stages.%s.static", stage);
		if (k < 2 || k > 3) {
			rc = pf_err_add(errs, cfg->static_file, line, 1,
					"%s: expected 'MAC PORT [DOMAIN]'", where);
			continue;
		}
		if (l2_add_static(cfg, env, where, cfg->static_file, line,
				  (int)(tok[0] - buf) + 1, tok[0], tok[1], k == 3 ? tok[2] : NULL,
				  errs) < 0)
			rc = -EINVAL;
	}
	free(buf);
	fclose(f);
	return rc;
}

static int
l2_parse_static_list(struct l2_cfg *cfg, const struct pf_stage_env *env, const char *stage,
		     const struct pf_node *v, struct pf_errs *errs)
{
	static const char *const st_keys[] = { "mac", "port", "domain", NULL };
	char where[PF_CONF_PATH_MAX];
	const struct pf_node *it, *m, *p, *d;
	int rc = 0;
	uint32_t i;

	for (i = 0; i < v->n; i++) {
		it = v->items[i];
		snprintf(where, sizeof(where), "stages.%s.static[%u]", stage, i);
		if (pf_node_expect(it, PF_NODE_MAP, where, errs) < 0 ||
		    pf_map_check_keys(it, where, st_keys, errs) < 0) {
			rc = -EINVAL;
			continue;
		}
		m = pf_map_get(it, "mac");
		p = pf_map_get(it, "port");
		d = pf_map_get(it, "domain");
		if (m == NULL || p == NULL || m->kind != PF_NODE_SCALAR ||
		    p->kind != PF_NODE_SCALAR || (d != NULL && d->kind != PF_NODE_SCALAR)) {
			rc = pf_node_err(errs, it, "%s: expected {mac: MAC, port: PORT[, domain: D]}",
					 where);
			continue;
		}
		if (l2_add_static(cfg, env, where, m->file, m->line, m->col, m->value, p->value,
				  d != NULL ? d->value : NULL, errs) < 0)
			rc = -EINVAL;
	}
	return rc;
}

static int
l2_static_cmp(const void *a, const void *b)
{
	const struct l2_static_cfg *x = a, *y = b;

	if (x->bd != y->bd)
		return x->bd < y->bd ? -1 : 1;
	return memcmp(x->mac, y->mac, 6);
}

void
l2_cfg_free(void *p)
{
	struct l2_cfg *cfg = p;

	if (cfg == NULL)
		return;
	free(cfg->statics);
	free(cfg);
}

int
l2_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *ports = pf_map_get(sc->node, "ports");
	const struct pf_node *doms = pf_map_get(sc->node, "domains");
	const struct pf_node *v;
	char path[PF_CONF_PATH_MAX];
	uint16_t idx[PF_MAX_PORTS], n = 0;
	struct l2_cfg *cfg;
	uint32_t i;
	int rc = 0;

	if ((ports == NULL) == (doms == NULL))
		return pf_node_err(errs, sc->node,
				   "stages.%s: give exactly one of 'ports' (one domain) or 'domains'",
				   sc->name);
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	cfg->table_size = L2_TABLE_DEFAULT;
	cfg->age_s = L2_AGE_DEFAULT;
	if (ports != NULL) {
		snprintf(path, sizeof(path), "stages.%s.ports", sc->name);

		if (pf_stage_port_list(env, ports, path, idx, PF_MAX_PORTS, &n, errs) < 0)
			return -EINVAL;
		snprintf(cfg->dom[0].name, sizeof(cfg->dom[0].name), "default");
		for (i = 0; i < n; i++)
			cfg->dom[0].port_mask |= 1u << idx[i];
		cfg->n_domains = 1;
	} else {
		snprintf(path, sizeof(path), "stages.%s.domains", sc->name);
		if (pf_node_expect(doms, PF_NODE_MAP, path, errs) < 0)
			return -EINVAL;
		if (doms->n == 0)
			return pf_node_err(errs, doms, "%s: needs at least one domain", path);
		if (doms->n > L2_MAX_DOMAINS)
			return pf_node_err(errs, doms, "%s: more than %d domains", path,
					   L2_MAX_DOMAINS);
		for (i = 0; i < doms->n; i++)
			if (l2_parse_domain(cfg, sc->name, doms->keys[i]->value, doms->items[i],
					    env, errs) < 0)
				rc = -EINVAL;
		if (rc < 0)
			return rc;
	}
	snprintf(path, sizeof(path), "stages.%s.table_size", sc->name);
	if ((v = pf_map_get(sc->node, "table_size")) != NULL &&
	    pf_node_u32(v, path, 1, L2_TABLE_MAX, &cfg->table_size, errs) < 0)
		rc = -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.age_s", sc->name);
	if ((v = pf_map_get(sc->node, "age_s")) != NULL &&
	    pf_node_u32(v, path, 0, L2_AGE_MAX, &cfg->age_s, errs) < 0)
		rc = -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.port_learn_limit", sc->name);
	if ((v = pf_map_get(sc->node, "port_learn_limit")) != NULL &&
	    pf_node_u32(v, path, 0, L2_TABLE_MAX, &cfg->port_learn_limit, errs) < 0)
		rc = -EINVAL;
	if ((v = pf_map_get(sc->node, "static")) != NULL) {
		if (v->kind == PF_NODE_SCALAR)
			rc |= l2_parse_static_file(cfg, env, sc, v, errs);
		else if (v->kind == PF_NODE_SEQ)
			rc |= l2_parse_static_list(cfg, env, sc->name, v, errs);
		else
			rc = pf_node_err(errs, v, "stages.%s.static: expected a list of entries "
					 "or a file name", sc->name);
	}
	if (rc < 0)
		return -EINVAL;
	/* Duplicates: sort a copy by (domain, MAC) and compare neighbours. */
	if (cfg->n_static > 1) {
		qsort(cfg->statics, cfg->n_static, sizeof(*cfg->statics), l2_static_cmp);
		for (i = 1; i < cfg->n_static; i++) {
			const struct l2_static_cfg *a = &cfg->statics[i - 1], *b = &cfg->statics[i];

			if (l2_static_cmp(a, b) == 0)
				rc = pf_err_add(errs, b->file, b->line, b->col,
						"stages.%s.static: duplicate entry for "
						"%02x:%02x:%02x:%02x:%02x:%02x in domain '%s' "
						"(also at line %d)", sc->name, b->mac[0], b->mac[1],
						b->mac[2], b->mac[3], b->mac[4], b->mac[5],
						cfg->dom[b->bd].name, a->line);
		}
	}
	if (cfg->n_static > cfg->table_size)
		rc = pf_node_err(errs, pf_map_get(sc->node, "static"),
				 "stages.%s.static: %u entries exceed table_size %u", sc->name,
				 cfg->n_static, cfg->table_size);
	return rc;
}

static int
l2_static_key_cmp(const void *a, const void *b)
{
	const struct l2_static_key *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

struct l2_static_key *
l2_static_keys(const struct l2_cfg *cfg)
{
	struct l2_static_key *k = malloc(RTE_MAX(cfg->n_static, 1u) * sizeof(*k));
	uint32_t i;

	if (k == NULL)
		return NULL;
	for (i = 0; i < cfg->n_static; i++) {
		k[i].key = l2_key(cfg->statics[i].mac, cfg->statics[i].bd);
		k[i].port = cfg->statics[i].port;
	}
	qsort(k, cfg->n_static, sizeof(*k), l2_static_key_cmp);
	return k;
}


/* ---- live changes (app/control/changes.c) --------------------------------------- */

/* The inline "static" item whose mac sits at @p s's position. */
static const struct pf_node *
l2_static_item(const struct pf_stage_conf *sc, const struct l2_static_cfg *s)
{
	const struct pf_node *l = pf_map_get(sc->node, "static"), *m;
	uint32_t i;

	for (i = 0; l != NULL && l->kind == PF_NODE_SEQ && i < l->n; i++) {
		m = pf_map_get(l->items[i], "mac");
		if (m != NULL && m->line == s->line && m->col == s->col)
			return l->items[i];
	}
	return NULL;
}

/*
 * "MAC PORT [DOMAIN]" (add: the static file format) or "MAC [DOMAIN]" (del),
 * with every check a static entry of the file gets (l2_add_static).
 */
int
l2_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
	    struct pf_errs *errs)
{
	struct l2_cfg *cfg = sc->cfg;
	char buf[PF_CHANGE_TEXT_MAX], item[PF_CHANGE_TEXT_MAX + 40], where[PF_CONF_PATH_MAX];
	char *tok[4], *p, *save = NULL;
	const struct l2_static_cfg *s;
	const struct pf_node *it;
	struct l2_static_cfg k;
	uint32_t i, hit = UINT32_MAX, n_hit = 0;
	int n = 0, bd = -1;

	snprintf(buf, sizeof(buf), "%s", ch->entry);
	for (p = strtok_r(buf, " \t", &save); p != NULL; p = strtok_r(NULL, " \t", &save))
		if (n < 4)
			tok[n++] = p;
	snprintf(where, sizeof(where), "stages.%s.static", sc->group);
	if (ch->del ? n < 1 || n > 2 : n < 2 || n > 3)
		return pf_err_add(errs, "", 0, 0, "%s: expected '%s'", where,
				  ch->del ? "MAC [DOMAIN]" : "MAC PORT [DOMAIN]");
	if (!pf_parse_mac(tok[0], k.mac))
		return pf_err_add(errs, "", 0, 0, "%s: '%s' is not a MAC address", where, tok[0]);
	if (ch->del && n == 2) {
		for (i = 0; i < cfg->n_domains && bd < 0; i++)
			if (strcmp(cfg->dom[i].name, tok[1]) == 0)
				bd = (int)i;
		if (bd < 0)
			return pf_err_add(errs, "", 0, 0, "%s: unknown domain '%s'", where, tok[1]);
	}
	if (!ch->del) {
		if (cfg->n_static >= cfg->table_size) {
			pf_err_add(errs, "", 0, 0, "%s: table full (%u static entries, table_size %u)",
				   where, cfg->n_static, cfg->table_size);
			return -ENOSPC;
		}
		if (l2_add_static(cfg, env, where, "", 0, 0, tok[0], tok[1], n == 3 ? tok[2] : NULL,
				  errs) < 0)
			return -EINVAL;
		k = cfg->statics[--cfg->n_static];      /* checked; inserted below if new */
		bd = k.bd;
	}
	for (i = 0; i < cfg->n_static; i++) {
		s = &cfg->statics[i];
		if (memcmp(s->mac, k.mac, 6) == 0 && (bd < 0 || s->bd == bd)) {
			hit = i;
			n_hit++;
		}
	}
	snprintf(ch->key, sizeof(ch->key), "%02x:%02x:%02x:%02x:%02x:%02x %s", k.mac[0],
		 k.mac[1], k.mac[2], k.mac[3], k.mac[4], k.mac[5],
		 hit != UINT32_MAX ? cfg->dom[cfg->statics[hit].bd].name :
		 bd >= 0 ? cfg->dom[bd].name : "");
	if (!ch->del) {
		if (hit != UINT32_MAX) {
			pf_err_add(errs, "", 0, 0, "%s: %s has a static entry (port '%s'): delete "
				   "it first", where, ch->key, env->ports[cfg->statics[hit].port].name);
			return -EEXIST;
		}
		k.file = "";
		k.line = 0;
		k.col = 0;
		cfg->statics[cfg->n_static++] = k;
		qsort(cfg->statics, cfg->n_static, sizeof(*cfg->statics), l2_static_cmp);
		snprintf(ch->entry, sizeof(ch->entry), "%.17s %s %s", ch->key,
			 env->ports[k.port].name, cfg->dom[k.bd].name);
		snprintf(item, sizeof(item), "{ mac: \"%.17s\", port: %s, domain: %s }", ch->key,
			 env->ports[k.port].name, cfg->dom[k.bd].name);
		pf_change_add_at(ch, sc, "static", cfg->static_file, item);
		return 0;
	}
	if (n_hit == 0) {
		pf_err_add(errs, "", 0, 0, "%s: no static entry for %s", where, tok[0]);
		return -ENOENT;
	}
	if (n_hit > 1)
		return pf_err_add(errs, "", 0, 0, "%s: %s is static in %u domains: say which",
				  where, tok[0], n_hit);
	s = &cfg->statics[hit];
	snprintf(ch->entry, sizeof(ch->entry), "%s", ch->key);
	if (cfg->static_file[0] != '\0')
		pf_change_del_line(ch, cfg->static_file, s->line);
	else if ((it = l2_static_item(sc, s)) != NULL)
		pf_change_del_item(ch, it);
	memmove(&cfg->statics[hit], &cfg->statics[hit + 1],
		(cfg->n_static - hit - 1) * sizeof(*s));
	cfg->n_static--;
	return 0;
}
