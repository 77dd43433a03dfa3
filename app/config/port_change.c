/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live port changes (pipefwd-ctl port-add, port-del) as edits of the loaded
 * YAML tree, made before the topology is read from it (pf_topo_load_edited):
 * what runs is then exactly the file with the port written into it, read by
 * the one loader, and a reload diffs it as it would an edited file.
 *
 *   add: "NAME DEVICE [rx=STAGE] [tx=STAGE] [KEY=VALUE ...]": ports.NAME
 *        becomes { device: DEVICE, KEY: VALUE ... } (KEY a port key), and
 *        NAME is appended to the `ports:` list of rx stage STAGE and of tx
 *        stage STAGE.
 *   del: "NAME": ports.NAME goes, and NAME from the `ports:` list of every
 *        rx and tx stage (the wiring an add makes). Any other reference (a
 *        next hop, a bridge domain) stays and refuses the change with its
 *        file:line:col, as it would in an edited file.
 *
 * Nodes made here carry the topology file and line 0: an error about them
 * names the file and the key (ports.NAME.mac), not a line the file lacks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pf_conf.h"
#include "pf_topo.h"

#define WORDS_MAX 16

static const char *const option_keys[] = { "rx", "tx", "mac", "ipv4", "ipv6", "rxd", "txd",
					   "max_frame", "mtu", "rss", "offloads", NULL };

static bool
known_key(const char *k)
{
	const char *const *o;

	for (o = option_keys; *o != NULL; o++)
		if (strcmp(*o, k) == 0)
			return true;
	return false;
}

/* Index of @p key in map @p m, or -1. */
static int
map_index(const struct pf_node *m, const char *key)
{
	uint32_t i;

	for (i = 0; m != NULL && m->kind == PF_NODE_MAP && i < m->n; i++)
		if (strcmp(m->keys[i]->value, key) == 0)
			return (int)i;
	return -1;
}

static struct pf_node *
map_item(struct pf_node *m, const char *key)
{
	int i = map_index(m, key);

	return i < 0 ? NULL : m->items[i];
}

/* Whether stage mapping @p sc is of type @p type. */
static bool
stage_is(const struct pf_node *sc, const char *type)
{
	const struct pf_node *t = pf_map_get(sc, "type");

	return t != NULL && t->kind == PF_NODE_SCALAR && strcmp(t->value, type) == 0;
}

static int
append_kv(const struct pf_doc *doc, struct pf_node *map, const char *k, const char *v, bool q)
{
	struct pf_node *key = pf_node_new(doc, PF_NODE_SCALAR, k, 0);
	struct pf_node *val = pf_node_new(doc, PF_NODE_SCALAR, v, 0);

	if (key == NULL || val == NULL) {
		pf_node_free(key);
		pf_node_free(val);
		return -ENOMEM;
	}
	key->quoted = false;
	val->quoted = q;
	return pf_node_append(map, key, val);
}

/* NAME appended to the `ports:` list of stage @p stage, which must be of type @p type. */
static int
wire(const struct pf_doc *doc, struct pf_node *stages, const char *stage, const char *type,
     const char *name, const char *what, struct pf_errs *errs)
{
	struct pf_node *sc = map_item(stages, stage), *list, *item;

	if (sc == NULL || sc->kind != PF_NODE_MAP)
		return pf_err_add(errs, doc->file, 0, 0, "%s %s: %s=%s: no stage '%s'", what, name,
				  type, stage, stage);
	if (!stage_is(sc, type))
		return pf_err_add(errs, doc->file, 0, 0, "%s %s: %s=%s: stage %s is not of type %s",
				  what, name, type, stage, stage, type);
	list = map_item(sc, "ports");
	if (list == NULL || list->kind != PF_NODE_SEQ)
		return pf_node_err(errs, list != NULL ? list : sc,
				   "%s %s: stages.%s.ports is not a list to add the port to",
				   what, name, stage);
	item = pf_node_new(doc, PF_NODE_SCALAR, name, 0);
	if (item == NULL)
		return -ENOMEM;
	item->quoted = false;
	return pf_node_append(list, NULL, item);
}

static int
port_add(struct pf_doc *doc, struct pf_node *ports, struct pf_node *stages, const char *entry,
	 struct pf_errs *errs)
{
	char buf[PF_CHANGE_TEXT_MAX], *w[WORDS_MAX], *save = NULL, *eq;
	const char *rx = NULL, *tx = NULL;
	struct pf_node *key, *map;
	unsigned int n = 0, i;
	int k;

	snprintf(buf, sizeof(buf), "%s", entry);
	for (w[n] = strtok_r(buf, " ", &save); w[n] != NULL && n + 1 < WORDS_MAX;)
		w[++n] = strtok_r(NULL, " ", &save);
	if (n < 2)
		return pf_err_add(errs, NULL, 0, 0, "port-add: expected NAME DEVICE [KEY=VALUE ...]");
	k = map_index(ports, w[0]);
	if (k >= 0)
		return pf_node_err(errs, ports->keys[k], "port-add %s: the name is in use (ports.%s)",
				   w[0], w[0]);
	for (i = 2; i < n; i++) {
		eq = strchr(w[i], '=');
		if (eq == NULL || eq == w[i] || eq[1] == '\0')
			return pf_err_add(errs, NULL, 0, 0, "port-add %s: '%s': expected KEY=VALUE",
					  w[0], w[i]);
		*eq = '\0';
		if (!known_key(w[i]))
			return pf_err_add(errs, NULL, 0, 0, "port-add %s: unknown option '%s' "
					  "(rx, tx, mac, ipv4, ipv6, rxd, txd, max_frame, mtu, rss, "
					  "offloads)", w[0], w[i]);
		*eq = '=';
	}
	key = pf_node_new(doc, PF_NODE_SCALAR, w[0], 0);
	map = pf_node_new(doc, PF_NODE_MAP, NULL, 0);
	if (key == NULL || map == NULL) {
		pf_node_free(key);
		pf_node_free(map);
		return -ENOMEM;
	}
	key->quoted = false;
	if (pf_node_append(ports, key, map) < 0 || append_kv(doc, map, "device", w[1], true) < 0)
		return -ENOMEM;
	for (i = 2; i < n; i++) {
		eq = strchr(w[i], '=');
		*eq++ = '\0';
		if (strcmp(w[i], "rx") == 0)
			rx = eq;
		else if (strcmp(w[i], "tx") == 0)
			tx = eq;
		else if (append_kv(doc, map, w[i], eq, false) < 0)
			return -ENOMEM;
	}
	if (rx != NULL && wire(doc, stages, rx, "rx", w[0], "port-add", errs) < 0)
		return -EINVAL;
	if (tx != NULL && wire(doc, stages, tx, "tx", w[0], "port-add", errs) < 0)
		return -EINVAL;
	return 0;
}

static int
port_del(struct pf_node *ports, struct pf_node *stages, const char *name, struct pf_errs *errs)
{
	int k = map_index(ports, name);
	uint32_t s, i;

	if (k < 0)
		return pf_err_add(errs, NULL, 0, 0, "port-del %s: no such port", name);
	pf_node_remove(ports, (uint32_t)k);
	for (s = 0; stages != NULL && stages->kind == PF_NODE_MAP && s < stages->n; s++) {
		struct pf_node *sc = stages->items[s], *list;

		if (!stage_is(sc, "rx") && !stage_is(sc, "tx"))
			continue;
		list = map_item(sc, "ports");
		for (i = 0; list != NULL && list->kind == PF_NODE_SEQ && i < list->n;)
			if (list->items[i]->kind == PF_NODE_SCALAR &&
			    strcmp(list->items[i]->value, name) == 0)
				pf_node_remove(list, i);
			else
				i++;
	}
	return 0;
}

int
pf_topo_port_changes(struct pf_doc *doc, const struct pf_change *ch, unsigned int n,
		     struct pf_errs *errs)
{
	struct pf_node *ports = map_item(doc->root, "ports");
	struct pf_node *stages = map_item(doc->root, "stages");
	unsigned int k;
	int rc = 0;

	for (k = 0; k < n && rc == 0; k++) {
		if (strcmp(ch[k].table, "ports") != 0)
			continue;
		if (ports == NULL || ports->kind != PF_NODE_MAP)
			return pf_err_add(errs, doc->file, 0, 0, "no ports mapping to change");
		rc = ch[k].del ? port_del(ports, stages, ch[k].key, errs) :
				 port_add(doc, ports, stages, ch[k].entry, errs);
	}
	if (rc == -ENOMEM)
		pf_err_add(errs, NULL, 0, 0, "out of memory");
	return rc;
}
