/* SPDX-License-Identifier: BSD-3-Clause */
/* YAML loader: marks, duplicate keys, aliases, typed accessors. */
#include <string.h>

#include "pf_conf.h"
#include "pf_test.h"

static struct pf_doc *
load(const char *text, struct pf_errs *errs)
{
	struct pf_doc *doc = NULL;

	memset(errs, 0, sizeof(*errs));
	pf_conf_load_string("t.yaml", text, strlen(text), &doc, errs);
	return doc;
}

static void
test_marks(void **state)
{
	struct pf_errs errs;
	struct pf_doc *doc = load("a:\n  b: 12\n", &errs);
	const struct pf_node *b;

	assert_non_null(doc);
	b = pf_map_get(pf_map_get(doc->root, "a"), "b");
	assert_non_null(b);
	assert_int_equal(b->line, 2);
	assert_int_equal(b->col, 6);
	assert_string_equal(b->value, "12");
	pf_conf_free(doc);
}

static void
test_duplicate_key(void **state)
{
	struct pf_errs errs;
	struct pf_doc *doc = load("size: 1\nsize: 2\n", &errs);

	assert_null(doc);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.e[0].line, 2);
	assert_int_equal(errs.e[0].col, 1);
	assert_string_equal(errs.e[0].msg, "duplicate key 'size' (first defined at 1:1)");
}

static void
test_alias_refused(void **state)
{
	struct pf_errs errs;
	struct pf_doc *doc = load("a: &x 1\nb: *x\n", &errs);

	assert_null(doc);
	assert_int_equal(errs.n, 2);
	assert_string_equal(errs.e[0].msg, "YAML anchors are not supported");
	assert_string_equal(errs.e[1].msg, "YAML aliases are not supported");
	assert_int_equal(errs.e[1].line, 2);
}

static void
test_u64(void **state)
{
	struct pf_errs errs;
	struct pf_doc *doc = load("a: big\nb: 010\nc: \"5\"\nd: 99999999999999999999\ne: 7\n", &errs);
	uint64_t v = 0;

	assert_non_null(doc);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(pf_node_u64(pf_map_get(doc->root, "a"), "x.a", 0, 10, &v, &errs), -EINVAL);
	assert_string_equal(errs.e[0].msg, "x.a: expected unsigned integer, got string 'big'");
	assert_int_equal(pf_node_u64(pf_map_get(doc->root, "b"), "x.b", 0, 10, &v, &errs), -EINVAL);
	assert_int_equal(pf_node_u64(pf_map_get(doc->root, "c"), "x.c", 0, 10, &v, &errs), -EINVAL);
	assert_string_equal(errs.e[2].msg, "x.c: expected unsigned integer, got string '5'");
	assert_int_equal(pf_node_u64(pf_map_get(doc->root, "d"), "x.d", 0, 10, &v, &errs), -EINVAL);
	assert_string_equal(errs.e[3].msg, "x.d: value out of range [0, 10]");
	assert_int_equal(pf_node_u64(pf_map_get(doc->root, "e"), "x.e", 0, 10, &v, &errs), 0);
	assert_int_equal(v, 7);
	assert_int_equal(errs.n, 4);
	pf_conf_free(doc);
}

static void
test_syntax_error(void **state)
{
	struct pf_errs errs;
	struct pf_doc *doc = load("a: [1, 2\n", &errs);

	assert_null(doc);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.e[0].msg, "YAML parse error"));
	assert_int_equal(errs.e[0].line, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_alias_refused),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_syntax_error),
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
