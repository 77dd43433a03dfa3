/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * route_sources: where learnt routes come from (docs/controlplane.md).
 *
 *   route_sources:
 *     frr:    { type: fpm, namespace: rtr, listen: "127.0.0.1:2620", grace: 30 }
 *     kernel: { type: netlink, namespace: rtr, table: main }
 *
 * Checked here without DPDK (--check): the type, the namespace exists, the
 * listen address parses, ids are unique, and some stage takes learnt routes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pf_stage.h"
#include "pf_topo.h"

static const char *const source_keys[] = { "type", "id", "namespace", "listen", "table", "grace",
					   "resync", NULL };
static const char *const source_types[] = { "fpm", "netlink", NULL };

#define SOURCE_FPM_PORT 2620             /* zebra's default `fpm address ... port` */
#define SOURCE_GRACE_S 30
#define SOURCE_RESYNC_S 5
#define RT_TABLE_MAIN_ID 254
#define RT_TABLE_LOCAL_ID 255

/* The namespace of the one host stage, if there is exactly one: the usual place. */
static const char *
host_namespace(const struct pf_topo *t)
{
	const struct pf_node *ns = NULL;
	unsigned int hosts = 0;
	uint16_t i;

	for (i = 0; i < t->n_stages; i++) {
		const struct pf_stage_conf *sc = &t->stages[i];

		if (sc->ops == NULL || strcmp(sc->ops->type, "host") != 0 || sc->instance != 0)
			continue;
		hosts++;
		ns = pf_map_get(sc->node, "namespace");
	}
	if (hosts != 1 || ns == NULL || ns->kind != PF_NODE_SCALAR)
		return "";
	return ns->value;
}

static bool
takes_learnt(const struct pf_topo *t)
{
	uint16_t i;

	for (i = 0; i < t->n_stages; i++)
		if (pf_map_get(t->stages[i].node, "learnt") != NULL)
			return true;
	return false;
}

/* "ADDR:PORT", "[ADDR6]:PORT", "ADDR" or "[ADDR6]": numeric only. */
static const char *
parse_listen(const char *s, char *addr, size_t len, uint16_t *port)
{
	const char *colon, *end;
	unsigned long v;
	uint8_t tmp[16];
	size_t n;
	char *e;

	*port = SOURCE_FPM_PORT;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (end == NULL)
			return "an IPv6 address in brackets: [::1]:2620";
		n = (size_t)(end - s - 1);
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != '\0' && colon == NULL)
			return "expected [ADDRESS]:PORT";
		s++;
	} else {
		colon = strrchr(s, ':');
		n = colon != NULL ? (size_t)(colon - s) : strlen(s);
	}
	if (n == 0 || n >= len)
		return "expected ADDRESS:PORT";
	memcpy(addr, s, n);
	addr[n] = '\0';
	if (inet_pton(strchr(addr, ':') != NULL ? AF_INET6 : AF_INET, addr, tmp) != 1)
		return "not a numeric IPv4 or IPv6 address";
	if (colon != NULL) {
		errno = 0;
		v = strtoul(colon + 1, &e, 10);
		if (colon[1] == '\0' || *e != '\0' || errno != 0 || v == 0 || v > 65535)
			return "a port is 1..65535";
		*port = (uint16_t)v;
	}
	return NULL;
}

static int
load_source(struct pf_topo *t, const struct pf_node *key, const struct pf_node *m,
	    uint8_t pos, struct pf_errs *errs)
{
	struct pf_source_conf *sc = &t->sources[t->n_sources];
	char path[PF_CONF_PATH_MAX];
	const struct pf_node *n;
	const char *s, *bad;
	uint32_t v;
	int type = 0;
	struct stat sb;

	memset(sc, 0, sizeof(*sc));
	if (strlen(key->value) >= sizeof(sc->name))
		return pf_node_err(errs, key, "route_sources: name '%s' is longer than %d",
				   key->value, PF_NAME_MAX - 1);
	snprintf(sc->name, sizeof(sc->name), "%s", key->value);
	sc->node = m;
	snprintf(path, sizeof(path), "route_sources.%s", sc->name);
	if (pf_node_expect(m, PF_NODE_MAP, path, errs) < 0)
		return -EINVAL;
	pf_map_check_keys(m, path, source_keys, errs);
	n = pf_map_get(m, "type");
	if (n == NULL)
		return pf_node_err(errs, m, "%s: type: is required (fpm or netlink)", path);
	snprintf(path, sizeof(path), "route_sources.%s.type", sc->name);
	if (pf_node_enum(n, path, source_types, &type, errs) < 0)
		return -EINVAL;
	sc->type = type == 0 ? PF_SOURCE_FPM : PF_SOURCE_NETLINK;
	sc->id = pos;
	n = pf_map_get(m, "id");
	snprintf(path, sizeof(path), "route_sources.%s.id", sc->name);
	if (n != NULL) {
		if (pf_node_u32(n, path, 0, PF_MAX_SOURCES - 1, &v, errs) < 0)
			return -EINVAL;
		sc->id = (uint8_t)v;
	}
	s = host_namespace(t);
	n = pf_map_get(m, "namespace");
	snprintf(path, sizeof(path), "route_sources.%s.namespace", sc->name);
	if (n != NULL && pf_node_str(n, path, &s, errs) < 0)
		return -EINVAL;
	if (s[0] != '\0') {
		char run[96];

		if (strlen(s) >= sizeof(sc->ns) || strchr(s, '/') != NULL || s[0] == '.')
			return pf_node_err(errs, n != NULL ? n : m, "%s: '%s' is not a namespace name",
					   path, s);
		snprintf(run, sizeof(run), "/run/netns/%s", s);
		if (stat(run, &sb) < 0)
			return pf_node_err(errs, n != NULL ? n : m, "%s: no network namespace '%s' "
					   "(make it first: ip netns add %s)", path, s, s);
		snprintf(sc->ns, sizeof(sc->ns), "%s", s);
	}
	n = pf_map_get(m, "listen");
	snprintf(path, sizeof(path), "route_sources.%s.listen", sc->name);
	snprintf(sc->listen, sizeof(sc->listen), "127.0.0.1");
	sc->port = SOURCE_FPM_PORT;
	if (n != NULL) {
		if (sc->type != PF_SOURCE_FPM)
			return pf_node_err(errs, n, "%s: only an fpm source listens", path);
		if (pf_node_str(n, path, &s, errs) < 0)
			return -EINVAL;
		bad = parse_listen(s, sc->listen, sizeof(sc->listen), &sc->port);
		if (bad != NULL)
			return pf_node_err(errs, n, "%s: '%s': %s", path, s, bad);
	}
	sc->table = RT_TABLE_MAIN_ID;
	n = pf_map_get(m, "table");
	snprintf(path, sizeof(path), "route_sources.%s.table", sc->name);
	if (n != NULL) {
		if (sc->type != PF_SOURCE_NETLINK)
			return pf_node_err(errs, n, "%s: only a netlink source follows a kernel table",
					   path);
		if (n->kind == PF_NODE_SCALAR && strcmp(n->value, "main") == 0) {
			sc->table = RT_TABLE_MAIN_ID;
		} else {
			if (pf_node_u32(n, path, 1, UINT32_MAX, &sc->table, errs) < 0)
				return -EINVAL;
			if (sc->table == RT_TABLE_LOCAL_ID)
				return pf_node_err(errs, n, "%s: the local table holds the host's own "
						   "addresses, not routes", path);
		}
	}
	sc->grace_ms = SOURCE_GRACE_S * 1000;
	n = pf_map_get(m, "grace");
	snprintf(path, sizeof(path), "route_sources.%s.grace", sc->name);
	if (n != NULL) {
		if (pf_node_u32(n, path, 0, 3600, &v, errs) < 0)
			return -EINVAL;
		sc->grace_ms = v * 1000;
	}
	sc->resync_ms = SOURCE_RESYNC_S * 1000;
	n = pf_map_get(m, "resync");
	snprintf(path, sizeof(path), "route_sources.%s.resync", sc->name);
	if (n != NULL) {
		if (sc->type != PF_SOURCE_FPM)
			return pf_node_err(errs, n, "%s: a netlink source resyncs by a dump, at once",
					   path);
		if (pf_node_u32(n, path, 0, 3600, &v, errs) < 0)
			return -EINVAL;
		sc->resync_ms = v * 1000;
	}
	return 0;
}

void
pf_topo_load_sources(struct pf_topo *t, const struct pf_node *n, struct pf_errs *errs)
{
	uint32_t k;
	uint16_t i;

	t->n_sources = 0;
	if (n == NULL)
		return;
	if (pf_node_expect(n, PF_NODE_MAP, "route_sources", errs) < 0)
		return;
	if (n->n > PF_MAX_SOURCES) {
		pf_node_err(errs, n, "route_sources: at most %d sources", PF_MAX_SOURCES);
		return;
	}
	if (n->n != 0 && !takes_learnt(t))
		pf_node_err(errs, n, "route_sources: no stage takes learnt routes (give lpm or "
			    "lpm6 a learnt: key)");
	for (k = 0; k < n->n; k++) {
		if (load_source(t, n->keys[k], n->items[k], (uint8_t)k, errs) < 0)
			continue;
		for (i = 0; i < t->n_sources; i++) {
			const struct pf_source_conf *o = &t->sources[i];
			const struct pf_source_conf *s = &t->sources[t->n_sources];

			if (o->id == s->id)
				pf_node_err(errs, n->items[k], "route_sources.%s: id %u is %s's too "
					    "(each source its own id: the lowest wins a prefix)",
					    s->name, s->id, o->name);
			else if (o->type == PF_SOURCE_FPM && s->type == PF_SOURCE_FPM &&
				 o->port == s->port && strcmp(o->ns, s->ns) == 0 &&
				 strcmp(o->listen, s->listen) == 0)
				pf_node_err(errs, n->items[k], "route_sources.%s: listens where %s "
					    "does (%s port %u)", s->name, o->name, s->listen, s->port);
		}
		t->n_sources++;
	}
}

bool
pf_source_conf_same(const struct pf_source_conf *a, const struct pf_source_conf *b)
{
	return strcmp(a->name, b->name) == 0 && a->type == b->type && a->id == b->id &&
	       strcmp(a->ns, b->ns) == 0 && strcmp(a->listen, b->listen) == 0 &&
	       a->port == b->port && a->table == b->table;
}
