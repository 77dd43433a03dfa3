/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The acl stage's permit-reflect sessions: an rte_hash of canonical
 * 5-tuples (stages/acl.h, struct acl_skey) beside an array of session
 * slots indexed by key position. The lcore that runs the stage is the only
 * writer: it looks a burst up in bulk, opens a session for a packet that
 * matched permit-reflect and expires a bounded number of slots per burst
 * (and more when idle), so the data path never stalls on a sweep. Other
 * threads read slots word by word (acl_show.c).
 */
#include <errno.h>
#include <stdio.h>

#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "acl.h"

int
acl_sess_create_table(struct acl_priv *pv, const struct pf_stage *st, uint32_t entries,
		      struct pf_errs *errs)
{
	static uint32_t gen;
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.entries = entries,
		.key_len = sizeof(struct acl_skey),
		.hash_func = rte_hash_crc,
		.socket_id = st->socket,
		/* Extendable buckets: full means "entries" sessions, not a cuckoo miss. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	uint64_t mem0 = pf_heap_used();

	snprintf(name, sizeof(name), "pf_acls%u_%u", st->id,
		 __atomic_fetch_add(&gen, 1, __ATOMIC_RELAXED));
	hp.name = name;
	pv->sess_h = rte_hash_create(&hp);
	pv->sess_slots = entries + 1;
	pv->sess = rte_zmalloc_socket("acl_sess", sizeof(struct acl_sess) * pv->sess_slots,
				      RTE_CACHE_LINE_SIZE, hp.socket_id);
	if (pv->sess_h == NULL || pv->sess == NULL)
		return pf_node_err(errs, st->conf->node,
				   "stages.%s: cannot create a session table of %u entries: %s",
				   st->conf->name, entries, rte_strerror(rte_errno));
	pv->sess_max = entries;
	pv->sess_mem = pf_heap_used() - mem0;
	return 0;
}

static __rte_always_inline void
acl_sess_del(struct acl_priv *pv, struct acl_sess *s, uint64_t *ctrs)
{
	rte_hash_del_key(pv->sess_h, &s->key);
	s->expires_ns = 0;
	pv->sess_live--;
	ctrs[ACL_CTR_SESSION_EXPIRED]++;
}

/* Look at up to @p count slots from the sweep cursor; remove expired sessions. */
void
acl_sweep(struct acl_priv *pv, uint32_t count, uint64_t now, uint64_t *ctrs)
{
	struct acl_sess *s;

	for (; count != 0 && pv->sess_live != 0; count--) {
		s = &pv->sess[pv->sweep_pos];
		if (++pv->sweep_pos == pv->sess_slots)
			pv->sweep_pos = 0;
		if (s->expires_ns != 0 && s->expires_ns <= now)
			acl_sess_del(pv, s, ctrs);
	}
}

/*
 * Bulk session lookup for the burst: sets pk[i].pos for live sessions. An
 * expired one found is removed, but not in a dry run (@p dry).
 */
void
acl_sess_lookup(struct acl_priv *pv, uint16_t n, uint64_t now, uint64_t *ctrs, bool dry)
{
	const void *kp[RTE_HASH_LOOKUP_BULK_MAX];
	int32_t pos[RTE_HASH_LOOKUP_BULK_MAX];
	uint16_t idx[RTE_HASH_LOOKUP_BULK_MAX];
	uint16_t i = 0, c, j;
	struct acl_sess *s;

	while (i < n) {
		for (c = 0; i < n && c < RTE_HASH_LOOKUP_BULK_MAX; i++)
			if (pv->pk[i].flags & PK_SESS) {
				kp[c] = &pv->skeys[i];
				idx[c++] = i;
			}
		if (c == 0)
			break;
		rte_hash_lookup_bulk(pv->sess_h, kp, c, pos);
		for (j = 0; j < c; j++) {
			if (pos[j] < 0)
				continue;
			s = &pv->sess[pos[j]];
			if (s->expires_ns > now)
				pv->pk[idx[j]].pos = pos[j];
			else if (s->expires_ns != 0 && !dry)
				acl_sess_del(pv, s, ctrs);   /* expired, not swept yet */
		}
	}
}

/* permit-reflect: open (or refresh) packet i's session. Returns 0 or -ENOSPC. */
int
acl_sess_open(struct acl_priv *pv, const struct acl_tbl *t, uint16_t i, uint64_t now,
	      uint64_t *ctrs)
{
	struct acl_sess *s;
	int32_t pos;

	pos = rte_hash_add_key(pv->sess_h, &pv->skeys[i]);
	if (pos == -ENOSPC) {
		/* Reclaim a bounded number of expired sessions, then try once more. */
		acl_sweep(pv, 256, now, ctrs);
		pos = rte_hash_add_key(pv->sess_h, &pv->skeys[i]);
	}
	if (unlikely(pos < 0 || (uint32_t)pos >= pv->sess_slots))
		return -ENOSPC;
	s = &pv->sess[pos];
	if (s->expires_ns == 0 || s->expires_ns <= now) {
		if (s->expires_ns == 0)
			pv->sess_live++;
		s->key = pv->skeys[i];
		s->tcp_seen[0] = s->tcp_seen[1] = 0;
		s->closing = 0;
		s->init_dir = pv->pk[i].dir;
		ctrs[ACL_CTR_SESSION_CREATED]++;
	}
	acl_sess_touch(t, s, pv->skeys[i].proto, &pv->pk[i], now);
	return 0;
}
