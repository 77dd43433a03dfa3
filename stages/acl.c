/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acl: IPv4 and IPv6 5-tuple filter on rte_acl; stateless, or stateful with permit-reflect
 * sessions.
 * Edges: drop, out (permitted packets).
 * Counters: drops acl_deny, session_full, acl_not_ipv4; info per action (permit, deny_rule, ...),
 *   session_permit/created/expired, nonfirst_fragment, l4_malformed. Gauges: rule.<n> hits.
 * Params: rules | rules_file, default, algorithm, sessions, session_timeouts, session_sweep.
 *
 * Per burst: (1) gather each packet's 5-tuple into a flat key, (2) look the
 * burst up in the session table (stateful), (3) classify every packet that
 * has no session (IPv4 and IPv6 in their own contexts), (4) apply verdicts in packet
 * order, creating sessions for permit-reflect, (5) expire a few sessions.
 * The rule table is swapped whole (ctl.swap): a reload builds a new one beside
 * it, the runtime publishes it and frees the old one after a grace period.
 *
 * This file is the data path, init and the ops; acl_table.c builds the rule
 * table, acl_sess.c keeps the sessions, acl_show.c shows them, acl_rules.c
 * parses (stages/acl.h says who holds what).
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash.h>
#include <rte_prefetch.h>
#include <rte_vect.h>

#include "acl.h"

static const char *const acl_keys[] = { "rules", "rules_file", "default", "algorithm", "sessions",
					"session_timeouts", "session_sweep", "nonfirst_fragments",
					NULL };

/* ---- data path ---------------------------------------------------------- */

/* Slot of packet i's live session, or -1. */
static __rte_always_inline int32_t
acl_sess_find(struct acl_priv *pv, uint16_t i, uint64_t now)
{
	int32_t pos = rte_hash_lookup(pv->sess_h, &pv->skeys[i]);

	return pos >= 0 && pv->sess[pos].expires_ns > now ? pos : -1;
}

/* The same for the fast paths as the IP length it takes (IPv4 total length,
 * IPv6 40 + payload length: a header without options or extension headers
 * included), "no ports" as a length no packet has: one compare tells a
 * complete port header. */
#define ACL_NO_PORTS INT32_MAX
#define ACL_IP4 ((int32_t)sizeof(struct rte_ipv4_hdr))
#define ACL_IP6 ((int32_t)sizeof(struct rte_ipv6_hdr))
#define ACL_L3L4_NEED(hl, tcp) {								\
	[0 ... IPPROTO_TCP - 1] = ACL_NO_PORTS,							\
	[IPPROTO_TCP] = (hl) + (int32_t)sizeof(struct rte_tcp_hdr) + (tcp),			\
	[IPPROTO_TCP + 1 ... IPPROTO_UDP - 1] = ACL_NO_PORTS, [IPPROTO_UDP] = (hl) + 8,		\
	[IPPROTO_UDP + 1 ... IPPROTO_SCTP - 1] = ACL_NO_PORTS, [IPPROTO_SCTP] = (hl) + 12,	\
	[IPPROTO_SCTP + 1 ... 255] = ACL_NO_PORTS,						\
}
static const int32_t acl_l3l4_need[256] = ACL_L3L4_NEED(ACL_IP4, 0);
static const int32_t acl6_l3l4_need[256] = ACL_L3L4_NEED(ACL_IP6, 0);
/* The x4 group's: TCP's need plus ACL_X4_TCP, more than any IP length, so
 * one compare fails a group holding TCP; its data offsets are then tested
 * packet by packet (acl_x4_group). */
#define ACL_X4_TCP (1 << 24)
static const int32_t acl_x4_need[256] = ACL_L3L4_NEED(ACL_IP4, ACL_X4_TCP);
static const int32_t acl6_x4_need[256] = ACL_L3L4_NEED(ACL_IP6, ACL_X4_TCP);

/*
 * Fill packet i's key and scratch; returns its PK_* flags. Never reads past
 * the IPv4 total length or data_len. Non-first fragments are known by rx's
 * PF_META_IP_NONFIRST: their payload is never read as ports. The general
 * case; acl_extract_fast takes the common one.
 */
/*
 * The ports of the @p l4len bytes at @p l4 (upper-layer protocol @p proto)
 * into @p ports (sport, dport as on the wire, zero when there are none);
 * returns the PK_* flags both families share.
 */
static uint8_t
acl_extract_l4(const uint8_t *l4, uint32_t l4len, uint8_t proto, uint16_t *ports,
	       struct acl_pk *p)
{
	uint8_t need = acl_l4_min[proto];

	if (likely(need != 0 && l4len >= need)) {
		if (proto == IPPROTO_TCP) {
			if (unlikely((l4[12] >> 4) < 5 || (l4[12] >> 4) * 4u > l4len))
				goto malformed;
			p->tcpf = l4[13];
		}
		memcpy(ports, l4, 2 * sizeof(uint16_t));
		return PK_SESS;
	}
	ports[0] = ports[1] = 0;
	p->cat = ACL_CAT_STRICT;
	/* No ports to have (ICMP, GRE, ...): sessions on the address pair. */
	if (need == 0)
		return PK_SESS | PK_AUX;
malformed:
	ports[0] = ports[1] = 0;
	p->cat = ACL_CAT_STRICT;
	return PK_MALFORMED | PK_AUX;
}

/*
 * An IPv6 packet's key: rx's l3_len reaches the upper-layer header (past
 * the extension headers it walked) and l4_proto names it; the payload
 * length bounds what is read. Returns its PK_* flags (PK_V6 among them).
 */
static uint8_t
acl6_extract(struct rte_mbuf *m, const struct pf_meta *md, struct acl6_key *k,
	     struct acl_pk *p, uint8_t nonfirst_cat)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l2 = md->l2_len, l3 = md->l3_len, l4len, tot;
	const struct rte_ipv6_hdr *ip;

	if (unlikely(l3 < sizeof(*ip) || len < l2 + l3))
		return p->flags = PK_NOTIP;
	ip = (const struct rte_ipv6_hdr *)(d + l2);
	k->proto = md->l4_proto;
	memcpy(k->src, ip->src_addr, sizeof(k->src));
	memcpy(k->dst, ip->dst_addr, sizeof(k->dst));
	if (unlikely(md->flags & PF_META_IP_NONFIRST)) {
		k->sport = k->dport = 0;
		p->cat = nonfirst_cat;
		return p->flags = PK_NONFIRST | PK_AUX | PK_V6;
	}
	tot = sizeof(*ip) + rte_be_to_cpu_16(ip->payload_len);
	l4len = tot >= l3 ? RTE_MIN(len - l2 - l3, tot - l3) : 0;
	return p->flags = PK_V6 | acl_extract_l4(d + l2 + l3, l4len, k->proto, &k->sport, p);
}

static __rte_always_inline uint8_t
acl_extract(struct rte_mbuf *m, const struct pf_meta *md, struct acl_key *k,
	    struct acl6_key *k6, const uint8_t **kd, struct acl_pk *p, uint8_t nonfirst_cat)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l2 = md->l2_len, l3 = md->l3_len, l4len, tot;
	const struct rte_ipv4_hdr *ip;

	p->pos = -1;
	p->tcpf = 0;
	*kd = acl_kd4(k);
	if (md->cls == PF_CLASS_IPV6) {
		*kd = acl_kd6(k6);
		return acl6_extract(m, md, k6, p, nonfirst_cat);
	}
	if (unlikely(md->cls != PF_CLASS_IPV4 || l3 < sizeof(*ip) || len < l2 + l3))
		return p->flags = PK_NOTIP;
	ip = (const struct rte_ipv4_hdr *)(d + l2);
	k->proto = ip->next_proto_id;
	memcpy(&k->src, &ip->src_addr, 2 * sizeof(uint32_t));
	if (unlikely(md->flags & PF_META_IP_NONFIRST)) {
		k->sport = k->dport = 0;
		p->cat = nonfirst_cat;
		return p->flags = PK_NONFIRST | PK_AUX;
	}
	tot = rte_be_to_cpu_16(ip->total_length);
	l4len = tot >= l3 ? RTE_MIN(len - l2 - l3, tot - l3) : 0;
	return p->flags = acl_extract_l4(d + l2 + l3, l4len, k->proto, &k->sport, p);
}

/*
 * What the gather adds up per packet: nothing for a packet of the IPv4 main
 * context (ports, key in keys[] or its own header: the common case costs no
 * add), ACL_PLAIN6 for one of the IPv6 main context, ACL_OTHER for the
 * others. The sum is 0 for a burst all IPv4 with ports, n * ACL_PLAIN6 for
 * one all IPv6 with ports (PF_BURST_MAX < ACL_PLAIN6).
 */
#define ACL_PLAIN4 0u
#define ACL_OTHER 1u
#define ACL_PLAIN6 (1u << 16)

/* acl_extract for packet @p i, its flags told as the gather counts them.
 * Takes the metadata offset and the packet's index, not pointers: the fast
 * path keeps none live for this call. */
static uint32_t __rte_noinline
acl_extract_slow(struct rte_mbuf *m, int off, struct acl_priv *pv, unsigned int i,
		 uint8_t nonfirst_cat)
{
	uint8_t f = acl_extract(m, pf_meta_at(m, off), &pv->keys[i], &pv->keys6[i],
				&pv->kdata[i], &pv->pk[i], nonfirst_cat);

	return f == PK_SESS ? ACL_PLAIN4 : f == (PK_SESS | PK_V6) ? ACL_PLAIN6 : ACL_OTHER;
}

/* l2_len, l3_len, cls, flags as one little-endian word (layout checked in acl_init). */
#define ACL_META_MASK (0xffu << 8 | 0xffu << 16 | (uint32_t)PF_META_IP_NONFIRST << 24)
#define ACL_META_FAST (20u << 8 | PF_CLASS_IPV4 << 16)
#define ACL_META_FAST6 (40u << 8 | PF_CLASS_IPV6 << 16)
#define ACL_META_AT offsetof(struct pf_meta, l2_len)

/*
 * The common cases: IPv4 without options or IPv6 without extension
 * headers, not a non-first fragment, a complete TCP, UDP or SCTP header.
 * Same key and flags as acl_extract, which takes everything else. @p kd
 * (packet @p i's kdata[] entry) gets what the classifier reads: without sessions (@p
 * stateful false) a plain packet's own header, else its keys[] entry (IPv6
 * with sessions: acl_extract's copy). Returns ACL_PLAIN4, ACL_PLAIN6 or
 * ACL_OTHER.
 */
static __rte_always_inline uint32_t
acl_extract_fast(struct rte_mbuf *m, int off, struct acl_priv *pv, unsigned int i,
		 const uint8_t **kd, uint8_t nonfirst_cat, const bool stateful)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *), *ip, *l4;
	const struct pf_meta *md = pf_meta_at(m, off);
	struct acl_key *k = &pv->keys[i];
	struct acl_pk *p = &pv->pk[i];
	int32_t l3len;
	uint32_t w;

	/* XOR then test, no copy of the word: ACL_META_FAST has no l2_len bits,
	 * so the low byte stays l2_len. */
	memcpy(&w, &md->l2_len, sizeof(w));
	w ^= ACL_META_FAST;
	if (unlikely((w & ACL_META_MASK) != 0))
		goto not4;
	ip = d + (w & 0xff);
	l4 = ip + sizeof(struct rte_ipv4_hdr);
	/* What the packet holds from its IPv4 header on: the total length, or
	 * less if the frame is shorter. Signed: a frame shorter than its L2
	 * header makes no ports, not a huge count. */
	l3len = RTE_MIN((int32_t)rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)ip)->total_length),
			(int32_t)rte_pktmbuf_data_len(m) - (int32_t)(w & 0xff));
	if (unlikely(l3len < acl_l3l4_need[ip[9]] ||
		     (ip[9] == IPPROTO_TCP &&
		      ((l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > l3len - ACL_IP4))))
		goto slow;
	if (!stateful) {
		/* Only the classifier reads the key: it reads the header itself. No
		 * flags stored: acl_flags_inplace knows these by kd. */
		*kd = ip - RTE_ETHER_HDR_LEN;
		return ACL_PLAIN4;
	}
	k->proto = ip[9];
	memcpy(&k->src, ip + offsetof(struct rte_ipv4_hdr, src_addr), 2 * sizeof(uint32_t));
	memcpy(&k->sport, l4, 2 * sizeof(uint16_t));
	p->pos = -1;
	p->tcpf = ip[9] == IPPROTO_TCP ? l4[13] : 0;
	*kd = acl_kd4(k);
	p->flags = PK_SESS;
	return ACL_PLAIN4;
not4:
	/* IPv6 without extension headers, stateless: in place as well. The
	 * upper-layer protocol is the header's own Next Header (rx's l4_proto
	 * when it walked no extension header). */
	if (stateful || (w & ACL_META_MASK) != (ACL_META_FAST6 ^ ACL_META_FAST))
		goto slow;
	ip = d + (w & 0xff);
	l4 = ip + sizeof(struct rte_ipv6_hdr);
	l3len = RTE_MIN(ACL_IP6 + (int32_t)rte_be_to_cpu_16(
				((const struct rte_ipv6_hdr *)ip)->payload_len),
			(int32_t)rte_pktmbuf_data_len(m) - (int32_t)(w & 0xff));
	if (unlikely(ip[6] != md->l4_proto || l3len < acl6_l3l4_need[ip[6]] ||
		     (ip[6] == IPPROTO_TCP &&
		      ((l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > l3len - ACL_IP6))))
		goto slow;
	*kd = ip - RTE_ETHER_HDR_LEN;
	return ACL_PLAIN6;
slow:
	return acl_extract_slow(m, off, pv, i, nonfirst_cat);
}

/* The metadata word of an untagged frame of the x4 group: acl_extract_fast's
 * values with l2_len 14 too (one frame layout: every header at a constant offset). */
#define ACL_X4_MASK (ACL_META_MASK | 0xffu)
#define ACL_X4_FAST (ACL_META_FAST | RTE_ETHER_HDR_LEN)
#define ACL_X4_FAST6 (ACL_META_FAST6 | RTE_ETHER_HDR_LEN)

static __rte_always_inline uint32_t
acl_ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Four 32-bit words, lane k from @p p[k] + @p at. */
#define ACL_LANES(p, at)									\
	_mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(					\
		_mm_cvtsi32_si128((int)acl_ld32((p)[0] + (at))),				\
		(int)acl_ld32((p)[1] + (at)), 1), (int)acl_ld32((p)[2] + (at)), 2),		\
		(int)acl_ld32((p)[3] + (at)), 3)

/*
 * The x4 group of a stateless burst: four untagged frames, all IPv4 without
 * options or all IPv6 without extension headers (@p v6), none a non-first
 * fragment, each with a complete TCP, UDP or SCTP header. Tested as a whole
 * in SSE lanes (IP length against the frame, the port-header need of the
 * protocol), the TCP data offsets packet by packet only when the group has
 * TCP. Returns true with the four kdata[] entries (@p kd) pointing at the
 * frames (@p d), as acl_extract_fast would set them; false when any of the
 * four is not such a packet (nothing written: the caller takes them one by
 * one).
 */
static __rte_always_inline bool
acl_x4_group(const uint8_t *const *d, struct rte_mbuf **pp, int off, const uint8_t **kd,
	     const bool v6)
{
	/* Each lane's first two bytes in host order: the IPv4 total length, the
	 * IPv6 payload length (read from header bytes 2 and 4 on). */
	const __m128i len_be = _mm_set_epi8(-1, -1, 12, 13, -1, -1, 8, 9, -1, -1, 4, 5, -1, -1, 0, 1);
	const int32_t hl = v6 ? ACL_IP6 : ACL_IP4;
	const int32_t *need_tbl = v6 ? acl6_x4_need : acl_x4_need;
	const unsigned int at_len = RTE_ETHER_HDR_LEN + (v6 ? 4 : 2);
	const unsigned int at_proto = RTE_ETHER_HDR_LEN + (v6 ? 6 : 9);
	__m128i lw, dl, need, raw;
	int32_t l3[4], nd;
	uint32_t k;

	raw = ACL_LANES(d, at_len);
	lw = _mm_shuffle_epi8(raw, len_be);
	if (v6) {
		/* rx's upper layer must be the header's own Next Header (byte 2
		 * of each lane read): l4_proto words gathered, one xor and test.
		 * The offset hidden from GCC, which would make the addresses
		 * before the group's first test, for every group. */
		const __m128i nh_at = _mm_set_epi8(-1, -1, -1, 14, -1, -1, -1, 10,
						   -1, -1, -1, 6, -1, -1, -1, 2);
		int at_l4p = off + (int)offsetof(struct pf_meta, l4_proto);
		const uint8_t *l4p[4] = {
			(const uint8_t *)pp[0], (const uint8_t *)pp[1],
			(const uint8_t *)pp[2], (const uint8_t *)pp[3],
		};

		__asm__("" : "+r"(at_l4p));
		if (unlikely(!_mm_testz_si128(_mm_xor_si128(_mm_shuffle_epi8(raw, nh_at),
							    ACL_LANES(l4p, at_l4p)),
					      _mm_set1_epi32(0xff))))
			return false;
		lw = _mm_add_epi32(lw, _mm_set1_epi32(ACL_IP6));
	}
	/* 16-bit inserts from memory into zero lanes: no separate loads. */
	dl = _mm_insert_epi16(_mm_insert_epi16(_mm_insert_epi16(_mm_insert_epi16(
		_mm_setzero_si128(), pp[0]->data_len, 0), pp[1]->data_len, 2),
		pp[2]->data_len, 4), pp[3]->data_len, 6);
	lw = _mm_min_epi32(lw, _mm_sub_epi32(dl, _mm_set1_epi32(RTE_ETHER_HDR_LEN)));
	need = _mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(
		_mm_cvtsi32_si128(need_tbl[d[0][at_proto]]), need_tbl[d[1][at_proto]], 1),
		need_tbl[d[2][at_proto]], 2), need_tbl[d[3][at_proto]], 3);
	need = _mm_cmpgt_epi32(need, lw);
	if (unlikely(!_mm_testz_si128(need, need))) {
		/* Short of its need, or TCP: lane by lane, the need looked up anew
		 * (the compare kept the lengths, not the needs; hidden from GCC,
		 * which would keep the four in registers for this branch). */
		const int32_t *nt = need_tbl;

		__asm__("" : "+r"(nt));
		_mm_storeu_si128((__m128i *)l3, lw);
		for (k = 0; k < 4; k++) {
			const uint8_t *dk = d[k], *l4;

			__asm__("" : "+r"(dk));
			l4 = dk + RTE_ETHER_HDR_LEN + hl;
			nd = nt[dk[at_proto]];
			if (nd <= l3[k])
				continue;
			if (nd == ACL_NO_PORTS || nd < ACL_X4_TCP || nd - ACL_X4_TCP > l3[k] ||
			    (l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > l3[k] - hl)
				return false;
		}
	}
	for (k = 0; k < 4; k++)
		kd[k] = d[k];
	return true;
}

/* The IPv6 packets of a burst in the IPv6 contexts, as acl_classify_mixed. */
static void
acl6_classify(struct acl_priv *pv, const struct acl_tbl *t, uint16_t n)
{
	uint16_t i, j, nm = 0, na = 0;

	for (i = 0; i < n; i++) {
		if ((pv->pk[i].flags & (PK_V6 | PK_NOTIP)) != PK_V6 || pv->pk[i].pos >= 0)
			continue;
		if (pv->pk[i].flags & PK_AUX) {
			pv->data[PF_BURST_MAX - 1 - na] = pv->kdata[i];
			pv->idx[PF_BURST_MAX - 1 - na++] = i;
		} else {
			pv->data[nm] = pv->kdata[i];
			pv->idx[nm++] = i;
		}
	}
	acl_classify_set(t, &t->main6, pv->data, pv->tmp, nm, pv->tmp2);
	for (j = 0; j < nm; j++)
		pv->res[pv->idx[j]] = pv->tmp[j];
	/* The auxiliary ones were stored from the top down: classify them in place. */
	acl_classify_set(t, &t->aux6, pv->data + PF_BURST_MAX - na, pv->tmp, na, pv->tmp2);
	for (j = 0; j < na; j++) {
		i = pv->idx[PF_BURST_MAX - na + j];
		pv->res[i] = pv->tmp[j * ACL_AUX_CATS + pv->pk[i].cat];
	}
}

/*
 * Stateless, before a mixed burst's classify: pk[].pos is not kept up to
 * date (no packet has a session), nor the flags of the plain packets
 * classified in their own header (told by their key pointer).
 */
static void
acl_flags_inplace(struct acl_priv *pv, struct rte_mbuf **pkts, uint16_t n)
{
	const int off = pf_meta_off();
	uint16_t i;

	for (i = 0; i < n; i++) {
		pv->pk[i].pos = -1;
		if (pv->kdata[i] != acl_kd4(&pv->keys[i]) && pv->kdata[i] != acl_kd6(&pv->keys6[i]))
			pv->pk[i].flags = pf_meta_at(pkts[i], off)->cls == PF_CLASS_IPV6 ?
					  PK_SESS | PK_V6 : PK_SESS;
	}
}

/*
 * A burst that is not all plain packets with ports (or a stateful one):
 * packets with ports go to the main context, the others to the auxiliary
 * one in their category; packets with a live session and non-IPv4 are not
 * classified (result 0). Stateless, acl_flags_inplace has run first.
 */
static void
acl_classify_mixed(struct acl_priv *pv, const struct acl_tbl *t, uint16_t n)
{
	uint16_t i, j, nm = 0, na = 0, n6 = 0;

	for (i = 0; i < n; i++) {
		pv->res[i] = 0;
		n6 += !!(pv->pk[i].flags & PK_V6);
		if (!(pv->pk[i].flags & (PK_NOTIP | PK_AUX | PK_V6)) && pv->pk[i].pos < 0) {
			pv->data[nm] = pv->kdata[i];
			pv->idx[nm++] = i;
		}
	}
	acl_classify_set(t, &t->main, pv->data, pv->tmp, nm, pv->tmp2);
	for (j = 0; j < nm; j++)
		pv->res[pv->idx[j]] = pv->tmp[j];
	for (i = 0; i < n; i++) {
		if ((pv->pk[i].flags & (PK_AUX | PK_V6)) == PK_AUX && pv->pk[i].pos < 0) {
			pv->data[na] = pv->kdata[i];
			pv->idx[na++] = i;
		}
	}
	acl_classify_set(t, &t->aux, pv->data, pv->tmp, na, pv->tmp2);
	for (j = 0; j < na; j++)
		pv->res[pv->idx[j]] = pv->tmp[j * ACL_AUX_CATS + pv->pk[pv->idx[j]].cat];
	if (n6 != 0)
		acl6_classify(pv, t, n);
}

/*
 * Verdicts in packet order, so a session opened by one packet already
 * admits the reply later in the same burst. Returns the packets on "out".
 * A dry run (@p dry, pf_stage.dry_run) refreshes no session, opens none
 * (it counts session_created when the table has room: what would fire)
 * and counts no rule hit.
 */
static __rte_always_inline uint16_t
acl_verdicts_general(struct acl_priv *pv, const struct acl_tbl *t, uint64_t *ctrs, uint16_t n,
		     uint16_t *edge, uint64_t now, const bool stateful, const bool dry)
{
	const struct acl_verdict *v;
	struct acl_pk *p;
	bool opened = false;
	uint16_t i, nout = 0;
	int32_t pos;
	uint32_t r;

	for (i = 0; i < n; i++) {
		p = &pv->pk[i];
		edge[i] = ACL_EDGE_OUT;
		if (unlikely(p->flags & PK_NOTIP)) {
			PF_DROP(edge, i, ctrs, ACL_CTR_NOT_IPV4);
			continue;
		}
		if (unlikely(p->flags & (PK_NONFIRST | PK_MALFORMED)))
			ctrs[p->flags & PK_NONFIRST ? ACL_CTR_NONFIRST : ACL_CTR_L4_MALFORMED]++;
		pos = p->pos;
		if (stateful && pos < 0 && opened && (p->flags & PK_SESS))
			pos = acl_sess_find(pv, i, now);
		if (stateful && pos >= 0) {
			if (!dry)
				acl_sess_touch(t, &pv->sess[pos], pv->skeys[i].proto, p, now);
			ctrs[ACL_CTR_SESSION_PERMIT]++;
			nout++;
			continue;
		}
		r = pv->res[i];
		v = &t->verdict[r];
		if (!dry)
			t->hits[r]++;
		ctrs[v->ctr]++;
		if (v->edge == ACL_EDGE_DROP) {
			PF_DROP(edge, i, ctrs, ACL_CTR_DENY);
			continue;
		}
		if (dry && stateful && v->reflect && (p->flags & PK_SESS)) {
			if (pv->sess_live < pv->sess_max)
				ctrs[ACL_CTR_SESSION_CREATED]++;
		} else if (stateful && v->reflect && (p->flags & PK_SESS)) {
			if (unlikely(acl_sess_open(pv, t, i, now, ctrs) < 0)) {
				PF_DROP(edge, i, ctrs, ACL_CTR_SESSION_FULL);
				continue;
			}
			opened = true;
		}
		nout++;
	}
	return nout;
}

/*
 * Stateless verdicts of a burst classified in one main context: one table
 * load per packet, or one for the burst when every packet matched the same
 * rule. A drop verdict counts deny_rule or default_deny: their
 * growth is the burst's drops (acl_deny), no per-packet sum needed.
 * Returns process_burst's answer (the burst's edge, or PF_EDGE_MIXED).
 */
static __rte_always_inline uint16_t
acl_verdicts_plain(struct acl_priv *pv, const struct acl_tbl *t, uint64_t *ctrs, uint16_t n,
		   uint16_t *edge)
{
	const struct acl_verdict *v;
	uint64_t denied;
	uint32_t r, r0, diff = 0;
	uint16_t e0;
	unsigned int i;

	if (unlikely(n == 0))
		return PF_EDGE_MIXED;
	/* One rule for the whole burst (one flow, a catch-all rule): count it
	 * once. One vectorised pass ORs the differences from the first result
	 * and writes the first packet's edge everywhere; a burst of several
	 * rules then takes the per-packet loop, which rewrites the edges. */
	r0 = pv->res[0];
	e0 = t->verdict[r0].edge;
	for (i = 0; i < n; i++) {
		diff |= pv->res[i] ^ r0;
		edge[i] = e0;
	}
	if (likely(diff == 0)) {
		/* The burst takes the rule's edge; denied, every packet is a drop. */
		v = &t->verdict[r0];
		t->hits[r0] += n;
		ctrs[v->ctr] += n;
		if (e0 == ACL_EDGE_DROP)
			ctrs[ACL_CTR_DENY] += n;
		return e0;
	}
	denied = ctrs[ACL_CTR_DENY_RULE] + ctrs[ACL_CTR_DEFAULT_DENY];
	for (i = 0; i < n; i++) {
		r = pv->res[i];
		v = &t->verdict[r];
		t->hits[r]++;
		ctrs[v->ctr]++;
		edge[i] = v->edge;
	}
	denied = ctrs[ACL_CTR_DENY_RULE] + ctrs[ACL_CTR_DEFAULT_DENY] - denied;
	ctrs[ACL_CTR_DENY] += denied;
	return denied == 0 ? ACL_EDGE_OUT : denied == n ? ACL_EDGE_DROP : PF_EDGE_MIXED;
}

/*
 * The headers and the mbuf's second line (the pf_meta dynfield). Finding
 * the headers reads the first line; prefetching both lines 8 ahead as well
 * cost 4 instructions a packet for lines rx had just written.
 */
static __rte_always_inline void
acl_prefetch_pkt(struct rte_mbuf *m)
{
	rte_prefetch0(rte_pktmbuf_mtod(m, void *));
	rte_mbuf_prefetch_part2(m);
}

/*
 * Pass 1: every packet's key, four at a time, headers and metadata lines
 * prefetched 4 ahead (@p prefetch). Stateless, four plain packets of one family are one
 * x4 group (acl_x4_group: one metadata test, one length test, one branch);
 * any other four go one by one. Returns the sum of acl_extract_fast's counts.
 */
static __rte_always_inline uint32_t
acl_gather(struct acl_priv *pv, const struct acl_tbl *t, struct rte_mbuf **pkts, uint16_t n,
	   const bool stateful, const bool prefetch)
{
	const uint8_t nonfirst_cat = t->nonfirst_cat;
	const int off = pf_meta_off();
	struct rte_mbuf **pp, **pp1, **const end4 = pkts + (n & ~3u);
	const uint8_t **kd;
	uint32_t plain = 0;
	unsigned int i, k;
	int off1;

	for (i = 0; prefetch && i < n && i < 4; i++)
		acl_prefetch_pkt(pkts[i]);
	/* Through pointers: constant displacements, no index arithmetic. */
	for (pp = pkts, kd = pv->kdata; pp != end4; pp += 4, kd += 4) {
		if (prefetch && likely(pkts + n - pp >= 8)) {
			acl_prefetch_pkt(pp[4]);
			acl_prefetch_pkt(pp[5]);
			acl_prefetch_pkt(pp[6]);
			acl_prefetch_pkt(pp[7]);
		}
		if (!stateful) {
			const uint8_t *d[4] = {
				rte_pktmbuf_mtod(pp[0], const uint8_t *),
				rte_pktmbuf_mtod(pp[1], const uint8_t *),
				rte_pktmbuf_mtod(pp[2], const uint8_t *),
				rte_pktmbuf_mtod(pp[3], const uint8_t *),
			};
			const uint8_t *md[4] = {
				(const uint8_t *)pf_meta_at(pp[0], off) + ACL_META_AT,
				(const uint8_t *)pf_meta_at(pp[1], off) + ACL_META_AT,
				(const uint8_t *)pf_meta_at(pp[2], off) + ACL_META_AT,
				(const uint8_t *)pf_meta_at(pp[3], off) + ACL_META_AT,
			};
			const __m128i mask = _mm_set1_epi32(ACL_X4_MASK);
			__m128i mw = _mm_xor_si128(ACL_LANES(md, 0), _mm_set1_epi32(ACL_X4_FAST));

			/* The IPv6 test from this xor, not from a copy of the words. */
			__asm__("" : "+x"(mw));
			if (likely(_mm_testz_si128(mw, mask)) &&
			    likely(acl_x4_group(d, pp, off, kd, false)))
				continue;
			mw = _mm_xor_si128(mw, _mm_set1_epi32(ACL_X4_FAST ^ ACL_X4_FAST6));
			if (_mm_testz_si128(mw, mask) && acl_x4_group(d, pp, off, kd, true)) {
				plain += 4 * ACL_PLAIN6;
				continue;
			}
		}
		/* One by one, every packet read anew: kept from the group's test,
		 * GCC would spill its words and addresses every group. */
		pp1 = pp;
		off1 = off;
		if (!stateful)
			__asm__("" : "+r"(off1), "+r"(pp1));
		i = (unsigned int)(pp - pkts);
#pragma GCC unroll 4
		for (k = 0; k < 4; k++)
			plain += acl_extract_fast(pp1[k], off1, pv, i + k, kd + k, nonfirst_cat,
						  stateful);
	}
	for (i = n & ~3u; i < n; i++)
		plain += acl_extract_fast(pkts[i], off, pv, i, &pv->kdata[i], nonfirst_cat,
					  stateful);
	return plain;
}

/*
 * Passes 2 to 4 of a burst whose keys acl_gather took with sessions: the
 * sessions first, the rules for the rest, the verdicts in packet order, a
 * bounded expiry sweep (so the data path never stalls). A dry run (@p dry)
 * changes no session and sweeps none. Returns the packets on "out".
 */
static __rte_always_inline uint16_t
acl_stateful(struct acl_priv *pv, const struct acl_tbl *t, uint64_t *ctrs, uint16_t n,
	     uint16_t *edge, const bool dry)
{
	uint64_t now = pf_now_ns();
	uint16_t i, nout;

	for (i = 0; i < n; i++)
		if ((pv->pk[i].flags & (PK_SESS | PK_V6)) == PK_SESS)
			pv->pk[i].dir = acl_skey_make(&pv->keys[i], &pv->skeys[i]);
		else if (pv->pk[i].flags & PK_SESS)
			pv->pk[i].dir = acl6_skey_make(&pv->keys6[i], &pv->skeys[i]);
	if (pv->sess_live != 0)
		acl_sess_lookup(pv, n, now, ctrs, dry);
	acl_classify_mixed(pv, t, n);
	nout = acl_verdicts_general(pv, t, ctrs, n, edge, now, true, dry);
	if (pv->sess_live != 0 && !dry)
		acl_sweep(pv, pv->sweep, now, ctrs);
	return nout;
}

/*
 * A dry run (pf_stage.dry_run: trace inject): the general path, sessions
 * looked up but not touched, no rule hit counted; the counters move (in the
 * runtime's copy).
 */
static __rte_noinline uint16_t
acl_dry_burst(struct pf_stage *st, const struct acl_tbl *t, struct rte_mbuf **pkts, uint16_t n,
	      uint16_t *edge, bool stateful)
{
	struct acl_priv *pv = st->priv;
	uint16_t nout;

	if (stateful) {
		acl_gather(pv, t, pkts, n, true, false);
		nout = acl_stateful(pv, t, st->ctrs, n, edge, true);
	} else {
		acl_gather(pv, t, pkts, n, false, false);
		acl_flags_inplace(pv, pkts, n);
		acl_classify_mixed(pv, t, n);
		nout = acl_verdicts_general(pv, t, st->ctrs, n, edge, 0, false, true);
	}
	if (nout == n && n != 0)
		return ACL_EDGE_OUT;
	return nout == 0 && n != 0 ? ACL_EDGE_DROP : PF_EDGE_MIXED;
}

static uint16_t
acl_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct acl_priv *pv = st->priv;
	uint64_t *ctrs = st->ctrs;
	const struct acl_tbl *t;
	uint16_t nout = 0;
	uint32_t plain;
	bool stateful;

	t = __atomic_load_n(&pv->tbl, __ATOMIC_ACQUIRE);
	/* Sessions matter only when a rule can open one or some are live (kept
	 * over a reload): else no packet can hit or open one, and the stateless
	 * path gives the same verdicts and counters without session keys. */
	stateful = pv->sess_h != NULL && (t->reflect || pv->sess_live != 0);
	if (unlikely(st->dry_run))
		return acl_dry_burst(st, t, pkts, n, edge, stateful);

	/* Pass 1: gather the keys (headers and metadata 4 ahead, unless the
	 * burst came straight from rx: pf_burst_fresh). */
	if (stateful)
		plain = acl_gather(pv, t, pkts, n, true, true);
	else if (!pf_burst_fresh(st))
		plain = acl_gather(pv, t, pkts, n, false, true);
	else
		plain = acl_gather(pv, t, pkts, n, false, false);

	if (stateful) {
		nout = acl_stateful(pv, t, ctrs, n, edge, false);
	} else if (likely(plain == 0)) {
		/* Every packet has ports: one classify call, one table load each. */
		acl_classify_set(t, &t->main, pv->kdata, pv->res, n, pv->tmp2);
		return acl_verdicts_plain(pv, t, ctrs, n, edge);
	} else if (plain == n * ACL_PLAIN6) {
		/* The same for a burst of IPv6 packets with ports. */
		acl_classify_set(t, &t->main6, pv->kdata, pv->res, n, pv->tmp2);
		return acl_verdicts_plain(pv, t, ctrs, n, edge);
	} else {
		acl_flags_inplace(pv, pkts, n);
		acl_classify_mixed(pv, t, n);
		nout = acl_verdicts_general(pv, t, ctrs, n, edge, 0, false, false);
	}
	if (likely(nout == n && n != 0))
		return ACL_EDGE_OUT;
	return nout == 0 && n != 0 ? ACL_EDGE_DROP : PF_EDGE_MIXED;
}

static void
acl_idle(struct pf_stage *st, uint64_t now_ns)
{
	struct acl_priv *pv = st->priv;

	if (pv->sess_h != NULL && pv->sess_live != 0)
		acl_sweep(pv, pv->sweep * 8, now_ns, st->ctrs);
}

/* ---- control path ------------------------------------------------------- */

static int
acl_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct acl_priv *pv = st->priv;
	const struct acl_cfg *cfg = st->conf->cfg;
	uint16_t i;

	/* acl_extract_fast reads these four bytes as one word. */
	RTE_BUILD_BUG_ON(offsetof(struct pf_meta, l3_len) != offsetof(struct pf_meta, l2_len) + 1 ||
			 offsetof(struct pf_meta, cls) != offsetof(struct pf_meta, l2_len) + 2 ||
			 offsetof(struct pf_meta, flags) != offsetof(struct pf_meta, l2_len) + 3 ||
			 RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN);
	/* acl_extract_fast XORs ACL_META_FAST in and keeps the low byte (l2_len). */
	RTE_BUILD_BUG_ON((ACL_META_FAST & 0xffu) != 0 || (ACL_META_FAST & ~ACL_META_MASK) != 0 ||
			 (ACL_META_FAST6 & ~ACL_META_MASK) != 0);
	/* Keys classified in place: laid out as the headers they point into
	 * (IPv4 from the TTL on, IPv6 from the payload length on). */
#define ACL_AT4(f) (offsetof(struct acl_key, f) + offsetof(struct rte_ipv4_hdr, time_to_live))
#define ACL_AT6(f) (offsetof(struct acl6_key, f) + offsetof(struct rte_ipv6_hdr, payload_len))
	RTE_BUILD_BUG_ON(ACL_AT4(proto) != offsetof(struct rte_ipv4_hdr, next_proto_id) ||
			 ACL_AT4(src) != offsetof(struct rte_ipv4_hdr, src_addr) ||
			 ACL_AT4(sport) != sizeof(struct rte_ipv4_hdr));
	RTE_BUILD_BUG_ON(ACL_AT6(proto) != offsetof(struct rte_ipv6_hdr, proto) ||
			 ACL_AT6(src) != offsetof(struct rte_ipv6_hdr, src_addr) ||
			 ACL_AT6(dst) != offsetof(struct rte_ipv6_hdr, dst_addr) ||
			 ACL_AT6(sport) != sizeof(struct rte_ipv6_hdr));
#undef ACL_AT4
#undef ACL_AT6
	/* The copies' classifier pointers stay inside acl_priv. */
	RTE_BUILD_BUG_ON(offsetof(struct acl_priv, keys) < ACL_KEY4 ||
			 offsetof(struct acl_priv, keys6) < ACL_KEY6);
	for (i = 0; i < PF_BURST_MAX; i++)
		pv->kdata[i] = acl_kd4(&pv->keys[i]);
	pv->sweep = cfg->sweep;
	if (cfg->sessions != 0 && acl_sess_create_table(pv, st, cfg->sessions, errs) < 0)
		return -EINVAL;
	if (acl_tbl_build(st, st->conf, &pv->tbl, errs) < 0)
		return -EINVAL;
	acl_log_tbl(st, pv->tbl, "built");
	return 0;
}

static const char *const acl_edit_tables[] = { "rules", NULL };

const struct pf_stage_ops pf_acl_ops = {
	.type = "acl",
	.flags = PF_STAGE_KEEPS_FLOW,
	.summary = "IPv4 and IPv6 5-tuple ACL on rte_acl (permit, deny, permit-reflect sessions)",
	.priv_size = sizeof(struct acl_priv),
	.n_edges = ACL_EDGE_MAX,
	.edge_names = acl_edges,
	.default_edge = ACL_EDGE_OUT,
	.n_ctrs = acl_ctr_max,
	.ctrs = acl_ctrs,
	.dp = {
		.process_burst = acl_process_burst,
		.idle = acl_idle,
	},
	.ctl = {
		.param_keys = acl_keys,
		.parse = pf_acl_parse,
		.cfg_free = pf_acl_cfg_free,
		.init = acl_init,
		.swap = &acl_swap,
		.free = acl_free,
		.edit = pf_acl_cfg_edit,
		.edit_tables = acl_edit_tables,
	},
	.obs = {
		.gauges = acl_gauges,
		.show = acl_show,
		.show_tables = acl_show_tables,
		.trace = acl_trace,
	},
};
