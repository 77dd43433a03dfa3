/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a live change goes when saved (include/pf_stage_ctl.h): stages' edit
 * ops record it in the change with these, from the YAML marks and the table
 * files they read, so that `pipefwd-ctl changes --save` can write it back.
 */
#include <stdio.h>

#include "pf_stage_ctl.h"

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
