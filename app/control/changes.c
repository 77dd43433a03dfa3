/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live table changes (app/control/pf_changes.h): the list of changes made
 * since the file was last (re)loaded, in order, each normalised by its
 * stage's edit op, and the one way to apply one: the running file loaded
 * with the whole list and the change on top (pf_topo_load_edited), handed
 * to pf_reload_live, which refuses unless only the named stage differs from
 * what runs; then the stage's own update path applies it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_changes.h"
#include "pf_fault.h"
#include "pf_log.h"
#include "pf_reload.h"
#include "pf_topo.h"

struct pf_changes {
	unsigned int n;
	uint64_t version;                          /* bumps with every change to the list */
	struct pf_changes_stats stats;
	struct pf_change list[PF_CHANGES_MAX];
	struct pf_change try[PF_CHANGES_MAX + 1];  /* the list and the change being tried */
};

struct pf_changes *
pf_changes_new(void)
{
	return calloc(1, sizeof(struct pf_changes));
}

void
pf_changes_free(struct pf_changes *cl)
{
	free(cl);
}

static const struct pf_stage *
find_stage(const struct pf_runtime *rt, const char *name)
{
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++)
		if (strcmp(rt->stages[i]->conf->group, name) == 0 ||
		    strcmp(rt->stages[i]->conf->name, name) == 0)
			return rt->stages[i];
	return NULL;
}

static bool
listed(const char *const *names, const char *what)
{
	for (; names != NULL && *names != NULL; names++)
		if (strcmp(*names, what) == 0)
			return true;
	return false;
}

const char *
pf_change_parse(const struct pf_runtime *rt, const char *text, struct pf_change *ch)
{
	char buf[PF_CHANGE_TEXT_MAX + 64], *save = NULL, *op, *stage, *table, *entry;
	const struct pf_stage *st;

	memset(ch, 0, sizeof(*ch));
	if (text == NULL || snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return "expected add|del,STAGE,TABLE,ENTRY (at most 200 bytes)";
	op = strtok_r(buf, ",", &save);
	stage = strtok_r(NULL, ",", &save);
	table = strtok_r(NULL, ",", &save);
	entry = strtok_r(NULL, "", &save);
	if (op == NULL || stage == NULL || table == NULL || entry == NULL)
		return "expected add|del,STAGE,TABLE,ENTRY";
	if (strcmp(op, "add") != 0 && strcmp(op, "del") != 0)
		return "expected add or del";
	st = find_stage(rt, stage);
	if (st == NULL)
		return "unknown stage";
	if (st->ops->ctl.edit == NULL)
		return "this stage type has no live changes";
	if (!listed(st->ops->ctl.edit_tables, table))
		return "this stage has no such table (routes, rules or macs)";
	ch->del = op[0] == 'd';
	snprintf(ch->stage, sizeof(ch->stage), "%s", st->conf->group);
	snprintf(ch->table, sizeof(ch->table), "%s", table);
	snprintf(ch->entry, sizeof(ch->entry), "%s", entry);
	return NULL;
}

const char *
pf_port_change_parse(const struct pf_runtime *rt, bool del, const char *text,
		     struct pf_change *ch)
{
	const struct pf_topo *t = rt->topo;
	size_t len;
	uint16_t p;

	memset(ch, 0, sizeof(*ch));
	while (text != NULL && *text == ' ')
		text++;
	if (text == NULL || *text == '\0')
		return del ? "expected NAME" : "expected NAME DEVICE [KEY=VALUE ...]";
	if (strlen(text) >= sizeof(ch->entry))
		return "at most 200 bytes";
	len = strcspn(text, " ");
	if (len >= PF_NAME_MAX)
		return "a port name is at most 31 characters";
	if (del && text[len] != '\0')
		return "expected NAME";
	for (p = 0; p < t->n_ports; p++)
		if (pf_port_present(&t->ports[p]) && strlen(t->ports[p].name) == len &&
		    memcmp(t->ports[p].name, text, len) == 0)
			break;
	if (!del && p < t->n_ports)
		return "the name is in use";
	if (del && p == t->n_ports)
		return "no such port";
	ch->del = del;
	snprintf(ch->table, sizeof(ch->table), "ports");
	snprintf(ch->entry, sizeof(ch->entry), "%s", text);
	snprintf(ch->key, sizeof(ch->key), "%.*s", (int)len, text);
	return NULL;
}

/* A delete of an entry added live: the index of that add, else -1. */
static int
cancels(const struct pf_change *list, unsigned int n, const struct pf_change *ch)
{
	unsigned int k;

	if (!ch->del)
		return -1;
	for (k = n; k-- > 0;)
		if (strcmp(list[k].stage, ch->stage) == 0 && strcmp(list[k].table, ch->table) == 0 &&
		    strcmp(list[k].key, ch->key) == 0)
			return list[k].del ? -1 : (int)k;
	return -1;
}

/* The production binary holds PF_CHANGES_MAX (app/runtime/pf_fault.h; pipefwd-test overrides). */
__attribute__((weak)) uint32_t
pf_fault_changes_max(uint32_t n)
{
	return n;
}

static int
refuse(struct pf_changes *cl, const struct pf_change *ch, struct pf_errs *errs, int rc)
{
	char msg[sizeof(cl->stats.last_error)];

	pf_errs_first(errs, msg, sizeof(msg));
	cl->stats.refused++;
	if (strstr(msg, "table full") != NULL)
		cl->stats.refused_full++;
	memcpy(cl->stats.last_error, msg, sizeof(msg));
	if (ch->stage[0] == '\0')
		PF_LOG(WARNING, "live change refused: port-%s %s: %s", ch->del ? "del" : "add",
		       ch->entry, msg);
	else
		PF_LOG(WARNING, "live change refused: %s %s %s '%s': %s", ch->del ? "del" : "add",
		       ch->stage, ch->table, ch->entry, msg);
	return rc;
}

int
pf_changes_apply(struct pf_changes *cl, struct pf_runtime *rt, struct pf_change *ch,
		 struct pf_errs *errs)
{
	static const char full[] = "too many unsaved changes: save them (pipefwd-ctl changes --save)";
	struct pf_topo *new = NULL;
	unsigned int n = cl->n, cap = pf_fault_changes_max(PF_CHANGES_MAX);
	int k;

	/* At the cap only a delete may go on: it may take an add back. */
	if (n >= cap && !ch->del) {
		pf_err_add(errs, NULL, 0, 0, "%s", full);
		return refuse(cl, ch, errs, -ENOSPC);
	}
	memcpy(cl->try, cl->list, n * sizeof(cl->list[0]));
	cl->try[n] = *ch;
	if (pf_topo_load_edited(rt->topo->file, cl->try, n + 1, rt->topo, &new, errs) < 0)
		return refuse(cl, ch, errs, -EINVAL);
	/* The stage's edit normalised the change (its key): does it take one back? */
	k = cancels(cl->try, n, &cl->try[n]);
	if (k < 0 && n >= cap) {
		pf_topo_free(new);
		pf_err_add(errs, NULL, 0, 0, "%s", full);
		return refuse(cl, ch, errs, -ENOSPC);
	}
	if (pf_reload_live(rt, new, ch->stage, errs) < 0)
		return refuse(cl, ch, errs, -EINVAL);
	*ch = cl->try[n];
	/* The list now is the applied one (edit filled in every location); an
	 * add taken back leaves with its delete (the stage's edits hash counts
	 * net changes, so what runs agrees with the shorter list). */
	memcpy(cl->list, cl->try, (n + 1) * sizeof(cl->list[0]));
	if (k >= 0) {
		memmove(&cl->list[k], &cl->list[k + 1], (n - (unsigned int)k - 1) *
			sizeof(cl->list[0]));
		cl->n = n - 1;
	} else {
		cl->n = n + 1;
	}
	cl->version++;
	cl->stats.applied++;
	if (ch->stage[0] == '\0')
		PF_LOG(INFO, "live change: port-%s %s (%u unsaved)", ch->del ? "del" : "add",
		       ch->entry, cl->n);
	else
		PF_LOG(INFO, "live change: %s %s %s %s (%u unsaved)", ch->del ? "del" : "add",
		       ch->stage, ch->table, ch->entry, cl->n);
	return 0;
}

unsigned int
pf_changes_count(const struct pf_changes *cl)
{
	return cl->n;
}

const struct pf_change *
pf_changes_at(const struct pf_changes *cl, unsigned int k)
{
	return k < cl->n ? &cl->list[k] : NULL;
}

uint64_t
pf_changes_version(const struct pf_changes *cl)
{
	return cl->version;
}

const struct pf_changes_stats *
pf_changes_stats(const struct pf_changes *cl)
{
	return &cl->stats;
}

int
pf_changes_saved(struct pf_changes *cl, uint64_t version)
{
	if (version != cl->version)
		return -ESTALE;
	PF_LOG(INFO, "live changes: %u saved to the files", cl->n);
	cl->n = 0;
	cl->version++;
	return 0;
}

int
pf_changes_files_check(const struct pf_runtime *rt, struct pf_errs *errs)
{
	struct pf_topo *t = NULL;
	const char *file;

	if (pf_topo_load(rt->topo->file, &t, errs) < 0) {
		pf_topo_free(t);
		return -EINVAL;
	}
	file = pf_reload_file_changed(rt, t);
	if (file != NULL)
		pf_err_add(errs, file, 0, 0, "changed on disk since pipefwd loaded it");
	pf_topo_free(t);
	return file != NULL ? -ESTALE : 0;
}

unsigned int
pf_changes_discard(struct pf_changes *cl, char *msg, size_t len)
{
	unsigned int k, n = cl->n;
	size_t off;

	msg[0] = '\0';
	if (n == 0)
		return 0;
	off = (size_t)snprintf(msg, len, "discarded %u unsaved live change%s:", n,
			       n == 1 ? "" : "s");
	for (k = 0; k < n; k++) {
		const struct pf_change *ch = &cl->list[k];

		PF_LOG(WARNING, "reload: discarding unsaved live change: %s %s %s %s",
		       ch->del ? "del" : "add", ch->stage, ch->table, ch->entry);
		if (off < len)
			off += (size_t)snprintf(msg + off, len - off, " %s %s %s '%s'%s",
						ch->del ? "del" : "add", ch->stage, ch->table,
						ch->entry, k + 1 < n ? ";" : "");
	}
	cl->stats.discarded += n;
	cl->n = 0;
	cl->version++;
	return n;
}
