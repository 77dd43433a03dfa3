/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live table changes on the stats socket (app/control/pf_changes.h).
 *
 * The list holds the changes made since the file was last (re)loaded, in
 * order, each normalised by its stage's edit op. A change is tried as the
 * list plus it: the running file is loaded with the whole list applied
 * (every stage's edit op after its parse) and handed to pf_reload_live,
 * which refuses unless only the named stage differs from what runs; then the
 * stage's own update path (RCU swap, or its lcore between bursts) applies
 * it. Only then does the change join the list: a refused change leaves the
 * list and the data path as they were. Deleting an entry that was added
 * live takes the add off the list instead (the file never had it).
 *
 * Access: like /pipefwd/reload and /pipefwd/capture, any client of the
 * owner-only telemetry socket (0600 in a 0700 directory, app/console/telemetry.c)
 * may change tables; there is no read-only mode to bypass.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "pf_changes.h"
#include "pf_log.h"
#include "pf_reload.h"
#include "pf_telemetry.h"

#define CHANGES_MAX 256       /* unsaved changes held; then save them */
#define CHANGES_PAGE 24        /* changes per reply: 16 KiB at their longest */
#define TEL_STR 128            /* DPDK 22.11 telemetry string size, NUL included */

static struct pf_runtime *ch_rt;           /* telemetry lock held to use it */
static bool ch_registered;
static struct pf_change ch_list[CHANGES_MAX];
static struct pf_change ch_try[CHANGES_MAX + 1];
static unsigned int ch_n;
static uint64_t ch_version;                 /* bumps with every change to the list */
/* Outcomes, for /pipefwd/changes. */
static uint64_t ch_applied, ch_refused, ch_refused_full, ch_discarded;
static char ch_last_error[TEL_STR];

static void
reply_error(struct rte_tel_data *d, const char *msg)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
}

/* The first error, as one telemetry string: "file:line:col: message" or the message. */
static void
first_error(const struct pf_errs *errs, char *buf, size_t len)
{
	const struct pf_err *e = &errs->e[0];
	char line[PF_ERR_MSG_MAX + 300];

	if (errs->n == 0)
		snprintf(line, sizeof(line), "refused");
	else if (e->file[0] == '\0')
		snprintf(line, sizeof(line), "%s", e->msg);
	else
		pf_err_format(e, line, sizeof(line));
	/* Telemetry strings hold 127 bytes: keep the message, shorten a path. */
	if (strlen(line) >= len && e->file[0] != '\0' && strlen(e->msg) + 4 < len)
		snprintf(line, sizeof(line), "%s", e->msg);
	memcpy(buf, line, len - 1);
	buf[len - 1] = '\0';
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

/* "add|del,STAGE,TABLE,ENTRY" into @p ch; a message on error. */
static const char *
parse_change(const struct pf_runtime *rt, const char *params, struct pf_change *ch)
{
	char buf[PF_CHANGE_TEXT_MAX + 64], *save = NULL, *op, *stage, *table, *entry;
	const struct pf_stage *st;

	memset(ch, 0, sizeof(*ch));
	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
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
	if (st->ops->edit == NULL)
		return "this stage type has no live changes";
	if (!listed(st->ops->edit_tables, table))
		return "this stage has no such table (routes, rules or macs)";
	ch->del = op[0] == 'd';
	snprintf(ch->stage, sizeof(ch->stage), "%s", st->conf->group);
	snprintf(ch->table, sizeof(ch->table), "%s", table);
	snprintf(ch->entry, sizeof(ch->entry), "%s", entry);
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

static int
do_change(struct pf_runtime *rt, const char *params, struct rte_tel_data *d)
{
	struct pf_errs errs = { 0 };
	struct pf_change ch;
	struct pf_topo *new = NULL;
	const char *bad;
	char msg[TEL_STR];
	int rc, k;

	bad = parse_change(rt, params, &ch);
	if (bad != NULL) {
		reply_error(d, bad);
		return 0;
	}
	if (ch_n == CHANGES_MAX) {
		reply_error(d, "too many unsaved changes: save them (pipefwd-ctl changes --save)");
		return 0;
	}
	memcpy(ch_try, ch_list, ch_n * sizeof(ch_list[0]));
	ch_try[ch_n] = ch;
	rc = pf_topo_load_edited(rt->topo->file, ch_try, ch_n + 1, &new, &errs);
	if (rc == 0)
		rc = pf_reload_live(rt, new, ch.stage, &errs);
	if (rc < 0) {
		first_error(&errs, msg, sizeof(msg));
		ch_refused++;
		if (strstr(msg, "table full") != NULL)
			ch_refused_full++;
		snprintf(ch_last_error, sizeof(ch_last_error), "%s", msg);
		PF_LOG(WARNING, "live change refused: %s %s %s '%s': %s", ch.del ? "del" : "add",
		       ch.stage, ch.table, ch.entry, msg);
		reply_error(d, msg);
		return 0;
	}
	ch = ch_try[ch_n];
	/* The list now is the applied one (edit filled in every location). */
	memcpy(ch_list, ch_try, (ch_n + 1) * sizeof(ch_list[0]));
	k = cancels(ch_list, ch_n, &ch);
	if (k >= 0) {
		uint16_t i;

		memmove(&ch_list[k], &ch_list[k + 1], (ch_n - (unsigned int)k - 1) *
			sizeof(ch_list[0]));
		ch_n--;
		/* The stage is as the list says now: record that for the next diff. */
		for (i = 0; i < rt->topo->n_stages; i++)
			if (strcmp(rt->topo->stages[i].group, ch.stage) == 0)
				rt->topo->stages[i].edits = pf_changes_hash(ch_list, ch_n, ch.stage);
	} else {
		ch_n++;
	}
	ch_version++;
	ch_applied++;
	PF_LOG(INFO, "live change: %s %s %s %s (%u unsaved)", ch.del ? "del" : "add", ch.stage,
	       ch.table, ch.entry, ch_n);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "applied", ch.del ? "del" : "add");
	rte_tel_data_add_dict_string(d, "stage", ch.stage);
	rte_tel_data_add_dict_string(d, "table", ch.table);
	rte_tel_data_add_dict_string(d, "entry", ch.entry);
	rte_tel_data_add_dict_u64(d, "unsaved", ch_n);
	rte_tel_data_add_dict_u64(d, "version", ch_version);
	return 0;
}

/* A string cell, keeping the end of what does not fit (paths). */
static void
add_cell(struct rte_tel_data *a, const char *v)
{
	size_t len = strlen(v);

	rte_tel_data_add_array_string(a, len < TEL_STR ? v : v + len - (TEL_STR - 1));
}

static int
list_changes(const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = { "op", "stage", "table", "entry", "key", "file",
					    "item" };
	struct rte_tel_data *a[RTE_DIM(cols)], *line, *col;
	unsigned long off = 0;
	unsigned int k, c, end;
	char *e;

	if (params != NULL && *params != '\0') {
		off = strtoul(params, &e, 10);
		if (*e != '\0')
			return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", ch_version);
	rte_tel_data_add_dict_u64(d, "unsaved", ch_n);
	rte_tel_data_add_dict_u64(d, "applied", ch_applied);
	rte_tel_data_add_dict_u64(d, "refused", ch_refused);
	rte_tel_data_add_dict_u64(d, "refused_full", ch_refused_full);
	rte_tel_data_add_dict_u64(d, "discarded", ch_discarded);
	rte_tel_data_add_dict_string(d, "last_error", ch_last_error);
	rte_tel_data_add_dict_string(d, "topology", ch_rt->topo->file);
	end = RTE_MIN(ch_n, (unsigned int)RTE_MIN(off + CHANGES_PAGE, (unsigned long)ch_n));
	rte_tel_data_add_dict_int(d, "next", end < ch_n ? (int)end : -1);
	line = rte_tel_data_alloc();
	col = rte_tel_data_alloc();
	for (c = 0; c < RTE_DIM(cols); c++)
		a[c] = rte_tel_data_alloc();
	for (c = 0; c < RTE_DIM(cols); c++)
		if (a[c] == NULL || line == NULL || col == NULL)
			goto nomem;
	for (c = 0; c < RTE_DIM(cols); c++)
		rte_tel_data_start_array(a[c], RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(line, RTE_TEL_INT_VAL);
	rte_tel_data_start_array(col, RTE_TEL_INT_VAL);
	for (k = (unsigned int)RTE_MIN(off, (unsigned long)ch_n); k < end; k++) {
		const struct pf_change *ch = &ch_list[k];

		add_cell(a[0], ch->del ? "del" : "add");
		add_cell(a[1], ch->stage);
		add_cell(a[2], ch->table);
		add_cell(a[3], ch->entry);
		add_cell(a[4], ch->key);
		add_cell(a[5], ch->file);
		add_cell(a[6], ch->item);
		rte_tel_data_add_array_int(line, ch->line);
		rte_tel_data_add_array_int(col, ch->col);
	}
	for (c = 0; c < RTE_DIM(cols); c++)
		rte_tel_data_add_dict_container(d, cols[c], a[c], 0);
	rte_tel_data_add_dict_container(d, "line", line, 0);
	rte_tel_data_add_dict_container(d, "col", col, 0);
	return 0;
nomem:
	for (c = 0; c < RTE_DIM(cols); c++)
		rte_tel_data_free(a[c]);
	rte_tel_data_free(line);
	rte_tel_data_free(col);
	return -ENOMEM;
}

/* The client wrote list version @p params into the files: forget it. */
static int
saved(const char *params, struct rte_tel_data *d)
{
	unsigned long long v;
	char *e;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	v = strtoull(params, &e, 10);
	if (*e != '\0')
		return -EINVAL;
	if (v != ch_version) {
		reply_error(d, "the changes changed while they were saved: save again");
		return 0;
	}
	PF_LOG(INFO, "live changes: %u saved to the files", ch_n);
	ch_n = 0;
	ch_version++;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", ch_version);
	rte_tel_data_add_dict_u64(d, "unsaved", 0);
	return 0;
}

/* "STAGE[,ARGS]": the stage's act op. */
static int
flush(struct pf_runtime *rt, const char *params, struct rte_tel_data *d)
{
	char buf[128], *args;
	const struct pf_stage *st;
	uint16_t i;
	int rc = -ENOENT;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	args = strchr(buf, ',');
	if (args != NULL)
		*args++ = '\0';
	st = find_stage(rt, buf);
	if (st == NULL || st->ops->act == NULL) {
		reply_error(d, st == NULL ? "unknown stage" : "this stage has nothing to flush");
		return 0;
	}
	/* Instances share or own tables as their type says: act on each. */
	for (i = 0; i < rt->n_stages; i++)
		if (strcmp(rt->stages[i]->conf->group, st->conf->group) == 0) {
			rc = st->ops->act(rt->stages[i], "flush", args != NULL ? args : "", d);
			if (rc < 0)
				break;
		}
	return rc;
}

static int
ch_handle(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	pf_telemetry_pause();      /* serialised with reloads and every other reply */
	if (ch_rt == NULL)
		rc = -ENODEV;
	else if (strcmp(cmd, "/pipefwd/change") == 0)
		rc = do_change(ch_rt, params, d);
	else if (strcmp(cmd, "/pipefwd/changes") == 0)
		rc = list_changes(params, d);
	else if (strcmp(cmd, "/pipefwd/changes_saved") == 0)
		rc = saved(params, d);
	else
		rc = flush(ch_rt, params, d);
	pf_telemetry_resume();
	return rc;
}

void
pf_change_add_at(struct pf_change *ch, const struct pf_stage_conf *sc, const char *key,
		 const char *file, const char *item)
{
	const struct pf_node *l = pf_map_get(sc->node, key);

	snprintf(ch->item, sizeof(ch->item), "%s", item);
	if (file != NULL && file[0] != '\0') {
		snprintf(ch->file, sizeof(ch->file), "%s", file);
		ch->line = 0;
		ch->col = 0;
	} else if (l != NULL && l->kind == PF_NODE_SEQ && l->n != 0) {
		snprintf(ch->file, sizeof(ch->file), "%s", l->items[l->n - 1]->file);
		ch->line = l->items[l->n - 1]->line;
		ch->col = l->items[l->n - 1]->col;
	} else {
		/* No list yet: a new "key:" before the stage's first key; an empty
		 * one ("key: []"): that line, which the client rewrites. */
		const struct pf_node *at = sc->node;
		uint32_t i;

		for (i = 0; l != NULL && i < sc->node->n; i++)
			if (sc->node->items[i] == l)
				at = sc->node->keys[i];
		snprintf(ch->file, sizeof(ch->file), "%s", at->file);
		ch->line = at->line;
		ch->col = -at->col;
	}
}

void
pf_change_del_item(struct pf_change *ch, const struct pf_node *item)
{
	snprintf(ch->file, sizeof(ch->file), "%s", item->file);
	ch->line = item->line;
	ch->col = item->col;
}

void
pf_change_del_line(struct pf_change *ch, const char *file, int line)
{
	snprintf(ch->file, sizeof(ch->file), "%s", file);
	ch->line = line;
	ch->col = 0;
}

unsigned int
pf_changes_discard(char *msg, size_t len)
{
	unsigned int k, n = ch_n;
	size_t off;

	msg[0] = '\0';
	if (n == 0)
		return 0;
	off = (size_t)snprintf(msg, len, "discarded %u unsaved live change%s:", n,
			       n == 1 ? "" : "s");
	for (k = 0; k < n; k++) {
		const struct pf_change *ch = &ch_list[k];

		PF_LOG(WARNING, "reload: discarding unsaved live change: %s %s %s %s",
		       ch->del ? "del" : "add", ch->stage, ch->table, ch->entry);
		if (off < len)
			off += (size_t)snprintf(msg + off, len - off, " %s %s %s '%s'%s",
						ch->del ? "del" : "add", ch->stage, ch->table,
						ch->entry, k + 1 < n ? ";" : "");
	}
	ch_discarded += n;
	ch_n = 0;
	ch_version++;
	return n;
}

int
pf_changes_init(struct pf_runtime *rt)
{
	static const char *const cmds[][2] = {
		{ "/pipefwd/change", "pipefwd: live table change. Params: add|del,STAGE,TABLE,ENTRY" },
		{ "/pipefwd/changes", "pipefwd: unsaved live changes. Param: offset" },
		{ "/pipefwd/changes_saved", "pipefwd: changes are in the files. Param: version" },
		{ "/pipefwd/flush", "pipefwd: flush learned MACs. Params: STAGE[,port=P|domain=D]" },
	};
	unsigned int c;
	int rc;

	if (!ch_registered) {
		for (c = 0; c < RTE_DIM(cmds); c++) {
			rc = rte_telemetry_register_cmd(cmds[c][0], ch_handle, cmds[c][1]);
			if (rc < 0) {
				PF_LOG(WARNING, "changes: cannot register %s: %s", cmds[c][0],
				       strerror(-rc));
				return rc;
			}
		}
		ch_registered = true;
	}
	pf_telemetry_pause();
	ch_rt = rt;
	pf_telemetry_resume();
	return 0;
}

void
pf_changes_shutdown(void)
{
	pf_telemetry_pause();
	ch_rt = NULL;
	pf_telemetry_resume();
}
