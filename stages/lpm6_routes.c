/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm6's parameters: `learnt`, and the configured routes (next hops, inline
 * routes, the route file), which stages/lib/routes_conf.c parses and
 * changes live for lpm and lpm6 alike. No DPDK: this runs for --check, at
 * start and on reload.
 */
#include <errno.h>
#include <stdlib.h>

#include "lpm6.h"

int
lpm6_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	struct lpm6_cfg *cfg;
	int rc = 0;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	if (pf_rconf_parse(&cfg->rt, 6, sc, env, errs) < 0)
		rc = -EINVAL;
	else
		rc = pf_rconf_check_dups(&cfg->rt, env->file, errs);
	if (pf_lrn_parse(sc, 6, &cfg->learnt, errs) < 0)
		rc = -EINVAL;
	if (rc < 0)
		return rc;
	return pf_rconf_check_neigh(&cfg->rt, sc, sc->next[LPM6_EDGE_NEIGH] != PF_NONE, errs);
}

void
lpm6_cfg_free(void *p)
{
	struct lpm6_cfg *cfg = p;

	if (cfg == NULL)
		return;
	pf_rconf_free(&cfg->rt);
	free(cfg);
}

/* ---- live changes (app/control/changes.c) --------------------------------------- */

const char *const lpm6_edit_tables[] = { "routes", NULL };

int
lpm6_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
	      struct pf_errs *errs)
{
	struct lpm6_cfg *cfg = sc->cfg;

	return pf_rconf_edit(&cfg->rt, sc, env, sc->next[LPM6_EDGE_NEIGH] != PF_NONE, ch, errs);
}
