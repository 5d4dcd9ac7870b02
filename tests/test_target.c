/* Tests of the target module: rationals, families, JSON reading/writing (every bad-input
 * fixture), the --keys option and evaluation. Run from the source directory (CTest does). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flint/fmpz.h>

#include "headfuse/core.h"
#include "headfuse/target.h"
#include "unit.h"

#define BAD_DIR "tests/fixtures/bad"
#define GOOD_DIR "tests/fixtures/good"

/* ---------------------------------------------------------------- helpers */

/* Exact equality of two targets: names, dimensions, every key, weight and value. */
static int targets_equal(const hf_target_t *a, const hf_target_t *b)
{
    if (strcmp(a->name, b->name) || a->d != b->d || a->dv != b->dv || a->nheads != b->nheads)
        return 0;
    for (int h = 0; h < a->nheads; h++) {
        const hf_head_t *x = a->heads + h, *y = b->heads + h;
        if (x->natoms != y->natoms || x->d != y->d || x->dv != y->dv)
            return 0;
        if (memcmp(x->keys, y->keys, (size_t)x->natoms * x->d * sizeof *x->keys))
            return 0;
        for (long i = 0; i < x->natoms; i++)
            if (!fmpq_equal(x->weights + i, y->weights + i))
                return 0;
        for (long i = 0; i < x->natoms * x->dv; i++)
            if (!fmpq_equal(x->values + i, y->values + i))
                return 0;
    }
    return 1;
}

/* Atom i of head h of t is (key, weight "w", value "v") (dv = 1). */
static int atom_is(const hf_target_t *t, int h, long i, const int64_t *key, const char *w,
                   const char *v)
{
    const hf_head_t *hd = t->heads + h;
    if (i >= hd->natoms || memcmp(hd->keys + i * t->d, key, (size_t)t->d * sizeof *key))
        return 0;
    char *ws = hf_rational_str(hd->weights + i), *vs = hf_rational_str(hd->values + i * t->dv);
    int ok = !strcmp(ws, w) && !strcmp(vs, v);
    free(vs);
    free(ws);
    return ok;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* Export t, parse it back and compare exactly; the second export must equal the first. */
static void check_round_trip(const hf_target_t *t)
{
    char *json = hf_target_to_json(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    hf_target_t back;
    hf_target_init_empty(&back);
    hf_err_t err = hf_target_from_json_text(&back, json, "round trip");
    CU_ASSERT_EQUAL(err, HF_OK);
    if (err != HF_OK) {
        fprintf(stderr, "\n%s\n%s\n", hf_error_msg(), json);
    } else {
        CU_ASSERT(targets_equal(t, &back));
        char *again = hf_target_to_json(&back);
        CU_ASSERT_PTR_NOT_NULL(again);
        if (again)
            CU_ASSERT_STRING_EQUAL(again, json);
        free(again);
    }
    hf_target_clear(&back);
    free(json);
}

static double sigma(double x)
{
    return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

/* ---------------------------------------------------------------- rationals */

static void test_rational_good(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"0", "0"},
        {"-0", "0"},
        {"00", "0"},
        {"0/5", "0"},
        {"7", "7"},
        {"007", "7"},
        {"-7", "-7"},
        {"2/4", "1/2"},
        {"-6/4", "-3/2"},
        {"10/5", "2"},
        {"3/1", "3"},
        {"-1/3", "-1/3"},
        {"123456789012345678901234567890/2", "61728394506172839450617283945"},
        {"1/100000000000000000000000000000000", "1/100000000000000000000000000000000"},
    };
    fmpq_t x;
    fmpq_init(x);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CU_ASSERT_EQUAL_FATAL(hf_rational_parse(x, cases[i].in), HF_OK);
        CU_ASSERT(hf_rational_syntax_ok(cases[i].in)); /* one grammar for both */
        char *s = hf_rational_str(x);
        CU_ASSERT_STRING_EQUAL(s, cases[i].out);
        free(s);
    }
    /* the value, not only the text */
    CU_ASSERT_EQUAL(hf_rational_parse(x, "-6/4"), HF_OK);
    CU_ASSERT_EQUAL(fmpz_get_si(fmpq_numref(x)), -3);
    CU_ASSERT_EQUAL(fmpz_get_si(fmpq_denref(x)), 2);
    fmpq_clear(x);
}

static void test_rational_bad(void)
{
    /* Strict: no spaces, no '+', no sign on the denominator, no decimals or exponents. */
    static const struct {
        const char *in, *msg;
    } cases[] = {
        {"", "empty"},
        {" 1", "not a rational"},
        {"1 ", "not a rational"},
        {"1/0", "denominator is zero"},
        {"-5/000", "denominator is zero"},
        {"1.5", "not a rational"},
        {"--1", "not a rational"},
        {"1/-2", "not a rational"},
        {"+1", "not a rational"},
        {"-", "not a rational"},
        {"1/", "not a rational"},
        {"/2", "not a rational"},
        {"1/2/3", "not a rational"},
        {"0x10", "not a rational"},
        {"1e3", "not a rational"},
        {"abc", "not a rational"},
        {"- 1", "not a rational"},
        {"1 /2", "not a rational"},
    };
    fmpq_t x;
    fmpq_init(x);
    fmpq_set_si(x, 5, 7);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hf_err_t err = hf_rational_parse(x, cases[i].in);
        CU_ASSERT_EQUAL(err, HF_ERR_INPUT);
        /* what the parser refuses the syntax check refuses too: "1/0" included */
        CU_ASSERT(!hf_rational_syntax_ok(cases[i].in));
        CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), cases[i].msg));
        if (err != HF_ERR_INPUT || !strstr(hf_error_msg(), cases[i].msg))
            fprintf(stderr, "\nrational '%s': %s\n", cases[i].in, hf_error_msg());
    }
    /* a failed parse leaves the output alone */
    CU_ASSERT_EQUAL(fmpz_get_si(fmpq_numref(x)), 5);
    CU_ASSERT_EQUAL(hf_rational_parse(x, NULL), HF_ERR_INPUT);
    CU_ASSERT(!hf_rational_syntax_ok(NULL));
    fmpq_clear(x);
}

/* ---------------------------------------------------------------- families */

static void test_family_wd(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=3"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "wd:d=3");
    CU_ASSERT_EQUAL(t.d, 3);
    CU_ASSERT_EQUAL(t.dv, 1);
    CU_ASSERT_EQUAL(t.nheads, 3);
    CU_ASSERT_EQUAL(hf_target_head_atoms(&t), 6);
    int64_t z[3] = {0, 0, 0}, e2[3] = {0, 1, 0}, e3[3] = {0, 0, 1};
    CU_ASSERT(atom_is(&t, 1, 0, z, "1", "0"));
    CU_ASSERT(atom_is(&t, 1, 1, e2, "1", "1"));
    CU_ASSERT(atom_is(&t, 2, 1, e3, "1", "1"));
    CU_ASSERT(!atom_is(&t, 2, 1, e2, "1", "1")); /* the helper can fail */
    check_round_trip(&t);
    hf_target_clear(&t);

    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=64"), HF_OK);
    CU_ASSERT_EQUAL(t.nheads, 64);
    CU_ASSERT_EQUAL(t.heads[63].keys[1 * 64 + 63], 1);
    hf_target_clear(&t);
}

static void test_family_chain(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "chain:d=3"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "chain:d=3");
    CU_ASSERT_EQUAL(t.nheads, 5); /* 3 singles then 2 pairs */
    CU_ASSERT_EQUAL(hf_target_head_atoms(&t), 10);
    int64_t z[3] = {0, 0, 0}, e3[3] = {0, 0, 1}, p12[3] = {1, 1, 0}, p23[3] = {0, 1, 1};
    CU_ASSERT(atom_is(&t, 2, 1, e3, "1", "1"));
    CU_ASSERT(atom_is(&t, 3, 0, z, "1", "0"));
    CU_ASSERT(atom_is(&t, 3, 1, p12, "1", "1"));
    CU_ASSERT(atom_is(&t, 4, 1, p23, "1", "1"));
    check_round_trip(&t);
    hf_target_clear(&t);

    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "chain:d=1"), HF_OK);
    CU_ASSERT_EQUAL(t.nheads, 1);
    hf_target_clear(&t);
}

static void test_family_multi(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "multi:d=2"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "multi:d=2,k=3"); /* canonical: default k spelled out */
    CU_ASSERT_EQUAL(t.nheads, 2);
    CU_ASSERT_EQUAL(hf_target_head_atoms(&t), 6);
    int64_t k02[2] = {0, 2}, k10[2] = {1, 0};
    CU_ASSERT(atom_is(&t, 1, 2, k02, "1", "2"));
    CU_ASSERT(atom_is(&t, 0, 1, k10, "1", "1"));
    check_round_trip(&t);
    hf_target_clear(&t);

    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "multi:k=5,d=1"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "multi:d=1,k=5");
    CU_ASSERT_EQUAL(t.heads[0].natoms, 5);
    int64_t k4[1] = {4};
    CU_ASSERT(atom_is(&t, 0, 4, k4, "1", "4"));
    hf_target_clear(&t);

    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "multi:d=1,k=64"), HF_OK);
    CU_ASSERT_EQUAL(t.heads[0].natoms, 64);
    hf_target_clear(&t);
}

static void test_family_wdw(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wdw:d=4"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "wdw:d=4");
    CU_ASSERT_EQUAL(t.nheads, 4);
    CU_ASSERT_EQUAL(hf_target_head_atoms(&t), 8);
    int64_t z[4] = {0}, e1[4] = {1, 0, 0, 0}, e4[4] = {0, 0, 0, 1};
    CU_ASSERT(atom_is(&t, 0, 0, z, "1", "0"));
    CU_ASSERT(atom_is(&t, 0, 1, e1, "1", "1"));
    CU_ASSERT(atom_is(&t, 3, 1, e4, "1", "4"));
    check_round_trip(&t);
    hf_target_clear(&t);
}

/* Ownership: an initialised target passed as output is replaced on success (its old
 * value freed: LeakSanitizer checks under build-asan) and kept on failure; the caller
 * clears once at the end. */
static void test_output_ownership(void)
{
    hf_target_t t, u;
    hf_target_init_empty(&t);
    hf_target_init_empty(&u);
    CU_ASSERT_EQUAL(t.nheads, 0);
    hf_target_clear(&t); /* the empty target clears harmlessly */
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "chain:d=3"), HF_OK); /* replaces */
    CU_ASSERT_STRING_EQUAL(t.name, "chain:d=3");
    CU_ASSERT_EQUAL(hf_target_from_family(&t, "nope:d=1"), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(t.name, "chain:d=3"); /* kept on failure */
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t, "{", "x"), HF_ERR_INPUT);
    CU_ASSERT_EQUAL(t.nheads, 5);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&u, "wd:d=1"), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_target_copy(&u, &t), HF_OK); /* u's old value goes */
    CU_ASSERT_STRING_EQUAL(u.name, "chain:d=3");
    CU_ASSERT_EQUAL(u.nheads, 5);
    CU_ASSERT_EQUAL_FATAL(hf_target_copy(&u, &u), HF_OK); /* aliasing is fine */
    CU_ASSERT_EQUAL(u.nheads, 5);
    hf_target_clear(&u);
    hf_target_clear(&t);
}

/* One registry: names, k and the message list come from the same table. */
static void test_family_registry(void)
{
    CU_ASSERT_EQUAL(HF_NFAMILIES, 4);
    CU_ASSERT_STRING_EQUAL(hf_family_list(), "wd, chain, multi, wdw");
    for (int i = 0; i < HF_NFAMILIES; i++) {
        const char *name = hf_family_name((hf_family_t)i);
        CU_ASSERT_EQUAL(hf_family_find(name, strlen(name)), i);
        CU_ASSERT_EQUAL(hf_family_takes_k((hf_family_t)i), i == HF_FAMILY_MULTI);
    }
    CU_ASSERT_EQUAL(hf_family_find("chainx", 5), HF_FAMILY_CHAIN); /* the first n only */
    CU_ASSERT_EQUAL(hf_family_find("w", 1), -1);
    CU_ASSERT_EQUAL(hf_family_find("WD", 2), -1);
}

static void test_family_bad(void)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"foo:d=2", "--family foo:d=2: unknown family 'foo' (known: wd, chain, multi, wdw)"},
        {"WD:d=2", "unknown family 'WD'"},
        {"wd:d=0", "--family wd:d=0: d must be 1..64"},
        {"wd:d=65", "--family wd:d=65: d must be 1..64"},
        {"wd:d=-1", "d must be 1..64"},
        {"wd:d=99999999999999999999", "d must be 1..64"},
        {"wd", "--family wd: missing d=N"},
        {"wd:", "--family wd:: missing d=N"},
        {"wd:d=2,k=3", "--family wd:d=2,k=3: k applies only to multi"},
        {"chain:d=2,k=2", "k applies only to multi"},
        {"wd:d=x", "--family wd:d=x: d is not an integer"},
        {"wd:d=", "d is not an integer"},
        {"wd:d= 2", "d is not an integer"},
        {"wd:d=2.0", "d is not an integer"},
        {"multi:d=2,k=1", "--family multi:d=2,k=1: k must be 2..64"},
        {"multi:d=2,k=65", "k must be 2..64"},
        {"multi:d=2,k=y", "k is not an integer"},
        {"", "missing family name"},
        {":d=2", "missing family name"},
        {"wd:d=2,d=3", "d given twice"},
        {"wd:q=2", "unknown option 'q' (known: d, k)"},
        {"wd:d", "expected KEY=VALUE, got 'd'"},
        {"wd:d=2,", "empty option after ','"},
        {"wd:dd=2", "unknown option 'dd'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hf_target_t t;
        hf_target_init_empty(&t);
        hf_err_t err = hf_target_from_family(&t, cases[i].spec);
        CU_ASSERT_EQUAL(err, HF_ERR_INPUT);
        const char *msg = hf_error_msg();
        int ok = strstr(msg, cases[i].msg) && !strncmp(msg, "--family ", 9);
        CU_ASSERT(ok);
        if (err != HF_ERR_INPUT || !ok)
            fprintf(stderr, "\nfamily '%s': %s\n", cases[i].spec, msg);
        hf_target_clear(&t); /* a failed call leaves a cleared target */
    }
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL(hf_target_from_family(&t, NULL), HF_ERR_INPUT);
}

/* ---------------------------------------------------------------- JSON: good input */

static void test_json_dv2(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t err = hf_target_load_json(&t, GOOD_DIR "/dv2.json");
    CU_ASSERT_EQUAL_FATAL(err, HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "two values");
    CU_ASSERT_EQUAL(t.d, 2);
    CU_ASSERT_EQUAL(t.dv, 2);
    CU_ASSERT_EQUAL(t.nheads, 2);
    CU_ASSERT_EQUAL(t.heads[0].natoms, 2);
    CU_ASSERT_EQUAL(t.heads[1].natoms, 3);
    const hf_head_t *h = t.heads + 1;
    CU_ASSERT_EQUAL(h->keys[2 * 2 + 0], -1);
    CU_ASSERT_EQUAL(h->keys[2 * 2 + 1], 2);
    fmpq_t x;
    fmpq_init(x);
    hf_rational_parse(x, "3/2");
    CU_ASSERT(fmpq_equal(t.heads[0].weights + 1, x));
    hf_rational_parse(x, "2/3"); /* "4/6" canonicalised */
    CU_ASSERT(fmpq_equal(h->values + 1 * 2 + 0, x));
    hf_rational_parse(x, "-3"); /* a JSON integer value */
    CU_ASSERT(fmpq_equal(h->values + 1 * 2 + 1, x));
    hf_rational_parse(x, "1"); /* a JSON integer inside a value array */
    CU_ASSERT(fmpq_equal(h->values + 0, x));
    hf_rational_parse(x, "1/1000000000000000000000");
    CU_ASSERT(fmpq_equal(h->weights + 2, x));
    hf_rational_parse(x, "123456789012345678901234567890");
    CU_ASSERT(fmpq_equal(h->values + 2 * 2, x));
    fmpq_clear(x);
    check_round_trip(&t);
    hf_target_clear(&t);
}

static void test_json_rational_weights(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, GOOD_DIR "/rational_weights.json"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "rational_weights"); /* basename without .json */
    CU_ASSERT_EQUAL(t.dv, 1);                           /* default */
    int64_t k0[1] = {0}, k1[1] = {1}, k3[1] = {3};
    CU_ASSERT(atom_is(&t, 0, 0, k0, "3/2", "-1/2"));
    CU_ASSERT(atom_is(&t, 0, 1, k1, "2", "7"));
    CU_ASSERT(atom_is(&t, 0, 2, k3, "5/2", "0"));
    check_round_trip(&t);
    hf_target_clear(&t);
}

static void test_json_other_good(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    int64_t k0[1] = {0}, k1[1] = {1};
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, GOOD_DIR "/value_array_dv1.json"), HF_OK);
    CU_ASSERT(atom_is(&t, 0, 1, k1, "1", "1"));
    hf_target_clear(&t);

    /* repeated keys in one head are kept as separate atoms */
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, GOOD_DIR "/duplicate_keys.json"), HF_OK);
    CU_ASSERT_EQUAL(t.heads[0].natoms, 3);
    CU_ASSERT(atom_is(&t, 0, 1, k1, "1", "1"));
    CU_ASSERT(atom_is(&t, 0, 2, k1, "2", "1"));
    check_round_trip(&t);
    hf_target_clear(&t);

    /* text input without a name is called "target" */
    const char *text = "{\"d\": 1, \"heads\": [{\"atoms\": [{\"key\": [0], \"weight\": 1, "
                       "\"value\": 0}]}]}";
    CU_ASSERT_EQUAL_FATAL(hf_target_from_json_text(&t, text, "inline"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "target");
    CU_ASSERT(atom_is(&t, 0, 0, k0, "1", "0"));
    hf_target_clear(&t);

    /* names that need escaping survive the round trip */
    text = "{\"name\": \"q\\\"uote\\\\ \\u00e9\", \"d\": 1, \"heads\": [{\"atoms\": [{\"key\": "
           "[0], \"weight\": 1, \"value\": 0}]}]}";
    CU_ASSERT_EQUAL_FATAL(hf_target_from_json_text(&t, text, "inline"), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "q\"uote\\ \xc3\xa9");
    check_round_trip(&t);
    hf_target_clear(&t);
}

static void test_json_export_format(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=1"), HF_OK);
    char *json = hf_target_to_json(&t);
    CU_ASSERT_STRING_EQUAL(json, "{\n"
                                 "  \"name\": \"wd:d=1\",\n"
                                 "  \"d\": 1,\n"
                                 "  \"dv\": 1,\n"
                                 "  \"heads\": [\n"
                                 "    {\"atoms\": [\n"
                                 "      {\"key\": [0], \"weight\": \"1\", \"value\": \"0\"},\n"
                                 "      {\"key\": [1], \"weight\": \"1\", \"value\": \"1\"}\n"
                                 "    ]}\n"
                                 "  ]\n"
                                 "}\n");
    free(json);
    hf_target_clear(&t);
}

/* Random targets with big rationals and negative keys: export -> parse is exact. */
static void test_json_round_trip_random(void)
{
    flint_rand_t state;
    flint_randinit(state);
    srand(12345);
    fmpq_t w;
    fmpq_init(w);
    for (int iter = 0; iter < 60; iter++) {
        int d = 1 + rand() % 5, dv = 1 + rand() % 4;
        hf_target_t t;
        CU_ASSERT_EQUAL_FATAL(hf_target_init(&t, "random", d, dv), HF_OK);
        int nh = 1 + rand() % 4;
        for (int hh = 0; hh < nh; hh++) {
            hf_head_t h;
            hf_head_init(&h, d, dv);
            int na = 1 + rand() % 6;
            for (int a = 0; a < na; a++) {
                int64_t key[5];
                fmpq v[4];
                for (int c = 0; c < d; c++)
                    key[c] = (rand() % 2001) - 1000;
                if (rand() % 4 == 0)
                    key[0] = rand() % 2 ? HF_KEY_MAX : -HF_KEY_MAX;
                do
                    fmpq_randtest(w, state, 200);
                while (fmpq_is_zero(w));
                fmpq_abs(w, w);
                for (int j = 0; j < dv; j++) {
                    fmpq_init(v + j);
                    fmpq_randtest(v + j, state, 150);
                }
                CU_ASSERT_EQUAL(hf_head_push(&h, key, w, v), HF_OK);
                for (int j = 0; j < dv; j++)
                    fmpq_clear(v + j);
            }
            CU_ASSERT_EQUAL(hf_target_add_head(&t, &h), HF_OK);
            hf_head_clear(&h);
        }
        check_round_trip(&t);
        hf_target_clear(&t);
    }
    fmpq_clear(w);
    flint_randclear(state);
}

static void test_json_save_load(void)
{
    char dir[] = "/tmp/hf_test_target_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/saved.json", dir);
    hf_target_t t, back;
    hf_target_init_empty(&t);
    hf_target_init_empty(&back);
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, GOOD_DIR "/dv2.json"), HF_OK);
    CU_ASSERT_EQUAL(hf_target_save_json(&t, path), HF_OK);
    CU_ASSERT_EQUAL(hf_target_load_json(&back, path), HF_OK);
    CU_ASSERT(targets_equal(&t, &back));
    hf_target_clear(&back);
    remove(path);

    /* an unwritable path is an I/O error, a missing target file bad input; both named */
    CU_ASSERT_EQUAL(hf_target_save_json(&t, "/nonexistent-hf-dir/t.json"), HF_ERR_IO);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "/nonexistent-hf-dir/t.json: cannot create "
                                           "/nonexistent-hf-dir/t.json.tmp: No such file or "
                                           "directory");
    CU_ASSERT_EQUAL(hf_target_load_json(&back, "tests/fixtures/no-such-file.json"), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(),
                           "tests/fixtures/no-such-file.json: cannot read: No such file or "
                           "directory");
    hf_target_clear(&back);
    CU_ASSERT_EQUAL(hf_target_load_json(&back, dir), HF_ERR_IO); /* a directory */
    hf_target_clear(&back);
    hf_target_clear(&t);
    rmdir(dir);
}

/* The hand-written targets in data/. */
static void test_json_data_files(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, "data/two_heads_shared.json"), HF_OK);
    CU_ASSERT_EQUAL(t.d, 2);
    CU_ASSERT_EQUAL(t.nheads, 2);
    CU_ASSERT_EQUAL(t.heads[0].natoms, 2);
    CU_ASSERT_EQUAL(t.heads[1].natoms, 3);
    int64_t e1[2] = {1, 0}, e2[2] = {0, 1};
    CU_ASSERT(atom_is(&t, 0, 1, e1, "1", "1"));
    CU_ASSERT(atom_is(&t, 1, 1, e1, "2", "1"));
    CU_ASSERT(atom_is(&t, 1, 2, e2, "1/2", "-1"));
    check_round_trip(&t);
    hf_target_clear(&t);

    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, "data/cubic_factor.json"), HF_OK);
    CU_ASSERT_EQUAL(t.d, 1);
    CU_ASSERT_EQUAL(t.nheads, 1);
    for (long i = 0; i < 3; i++) {
        int64_t k[1] = {i};
        char v[2] = {(char)('0' + i), 0};
        CU_ASSERT(atom_is(&t, 0, i, k, "1", v));
    }
    /* f(q) = (x + 2x^2)/(1 + x + x^2) with x = e^q */
    double q = 0.3, x = exp(q), out;
    hf_target_eval(&t, &q, &out);
    CU_ASSERT_DOUBLE_EQUAL(out, (x + 2 * x * x) / (1 + x + x * x), 1e-14);
    hf_target_clear(&t);
}

/* ---------------------------------------------------------------- JSON: bad input */

/* Every fixture in tests/fixtures/bad: the field its message must name (the message
 * starts "PATH: FIELD: ") and a fragment of the problem. */
static const struct {
    const char *file, *field, *problem;
} bad_fixtures[] = {
    {"malformed.json", "line 3, column 9", "invalid JSON"},
    {"empty_file.json", "line 2, column 0", "invalid JSON"},
    {"not_an_object.json", "top level", "must be an object"},
    {"duplicate_member.json", "line 1, column 12", "duplicate object key"},
    {"missing_d.json", "d", "missing"},
    {"d_zero.json", "d", "0 is outside 1..64"},
    {"d_too_large.json", "d", "65 is outside 1..64"},
    {"d_string.json", "d", "must be an integer 1..64, not a string"},
    {"dv_zero.json", "dv", "0 is outside 1..16"},
    {"dv_too_large.json", "dv", "17 is outside 1..16"},
    {"name_empty.json", "name", "must not be empty"},
    {"heads_missing.json", "heads", "missing"},
    {"heads_empty.json", "heads", "empty"},
    {"head_not_object.json", "heads[0]", "must be an object"},
    {"head_atoms_missing.json", "heads[0].atoms", "missing"},
    {"head_atoms_empty.json", "heads[1].atoms", "empty"},
    {"atom_not_object.json", "heads[0].atoms[0]", "must be an object"},
    {"key_missing.json", "heads[0].atoms[0].key", "missing"},
    {"key_wrong_length.json", "heads[0].atoms[1].key", "has 1 entry, expected d = 2"},
    {"key_too_large.json", "heads[0].atoms[1].key[0]", "1048577 is outside -1048576..1048576"},
    {"key_not_integer.json", "heads[0].atoms[1].key[1]", "must be an integer"},
    {"key_huge_integer.json", "line 1, column 108", "too big integer"},
    {"weight_missing.json", "heads[0].atoms[1].weight", "missing"},
    {"weight_zero.json", "heads[0].atoms[0].weight", "must be positive, got 0"},
    {"weight_negative.json", "heads[0].atoms[1].weight", "must be positive, got -1"},
    {"weight_json_real.json", "heads[0].atoms[1].weight", "e.g. \"1/2\""},
    {"weight_zero_denominator.json", "heads[0].atoms[1].weight", "denominator is zero"},
    {"weight_with_space.json", "heads[0].atoms[1].weight", "' 1' is not a rational"},
    {"weight_boolean.json", "heads[0].atoms[1].weight", "not a boolean"},
    {"value_unparsable.json", "heads[0].atoms[1].value", "'1/x' is not a rational"},
    {"value_missing.json", "heads[0].atoms[1].value", "missing"},
    {"value_wrong_length_dv2.json", "heads[0].atoms[1].value", "has 3 entries, expected dv = 2"},
    {"value_scalar_dv2.json", "heads[0].atoms[0].value", "array of dv = 2 rationals"},
    {"value_array_entry_bad.json", "heads[0].atoms[0].value[1]", "'1.5' is not a rational"},
    {"unknown_field_top.json", "heds", "unknown field"},
    {"unknown_field_head.json", "heads[0].atom", "unknown field (known: atoms)"},
    {"unknown_field_atom.json", "heads[0].atoms[0].wieght", "unknown field"},
};
#define N_BAD (sizeof bad_fixtures / sizeof *bad_fixtures)

static void test_json_bad_fixtures(void)
{
    for (size_t i = 0; i < N_BAD; i++) {
        char path[256], prefix[512];
        snprintf(path, sizeof path, BAD_DIR "/%s", bad_fixtures[i].file);
        snprintf(prefix, sizeof prefix, "%s: %s: ", path, bad_fixtures[i].field);
        hf_target_t t;
        hf_target_init_empty(&t);
        hf_error_clear();
        hf_err_t err = hf_target_load_json(&t, path);
        const char *msg = hf_error_msg();
        int ok = err == HF_ERR_INPUT && !strncmp(msg, prefix, strlen(prefix)) &&
                 strstr(msg, bad_fixtures[i].problem);
        CU_ASSERT(ok);
        if (!ok)
            fprintf(stderr, "\n%s: got %d '%s'\n  want '%s...%s'\n", bad_fixtures[i].file, (int)err,
                    msg, prefix, bad_fixtures[i].problem);
        CU_ASSERT_EQUAL(t.nheads, 0); /* left cleared */
        CU_ASSERT_PTR_NULL(t.name);
        hf_target_clear(&t);

        /* the same text through the text entry point names the given origin */
        char *text = read_text(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        CU_ASSERT_EQUAL(hf_target_from_json_text(&t, text, "ORIGIN"), HF_ERR_INPUT);
        CU_ASSERT(!strncmp(hf_error_msg(), "ORIGIN: ", 8));
        hf_target_clear(&t);
        free(text);
    }
}

/* No fixture is forgotten: every file in the directory is in the table and in README.md,
 * and every table entry exists. */
static void test_json_bad_fixtures_complete(void)
{
    DIR *dir = opendir(BAD_DIR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *readme = read_text(BAD_DIR "/README.md");
    CU_ASSERT_PTR_NOT_NULL_FATAL(readme);
    struct dirent *e;
    size_t seen = 0;
    while ((e = readdir(dir))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
            continue;
        int found = 0;
        for (size_t i = 0; i < N_BAD; i++)
            found |= !strcmp(bad_fixtures[i].file, e->d_name);
        CU_ASSERT(found);
        if (!found)
            fprintf(stderr, "\nfixture %s is not in the test table\n", e->d_name);
        CU_ASSERT(n > 5 && !strcmp(e->d_name + n - 5, ".json"));
        seen += found;
    }
    closedir(dir);
    CU_ASSERT_EQUAL(seen, N_BAD);
    for (size_t i = 0; i < N_BAD; i++) {
        char needle[128];
        snprintf(needle, sizeof needle, "`%s`", bad_fixtures[i].file);
        CU_ASSERT_PTR_NOT_NULL(strstr(readme, needle));
        if (!strstr(readme, needle))
            fprintf(stderr, "\nfixture %s is not in README.md\n", bad_fixtures[i].file);
    }
    free(readme);
}

static void test_json_text_misc(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t, NULL, "x"), HF_ERR_INPUT);
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t, "", "x"), HF_ERR_INPUT);
    CU_ASSERT(!strncmp(hf_error_msg(), "x: line 1", 9));
    /* a JSON real 0.1 suggests "1/10", and a negative one a negative rational */
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t,
                                             "{\"d\":1,\"heads\":[{\"atoms\":[{\"key\":[0],"
                                             "\"weight\":1,\"value\":-0.125}]}]}",
                                             "x"),
                    HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "x: heads[0].atoms[0].value: JSON real"));
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "\"-1/8\""));
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t,
                                             "{\"d\":1,\"heads\":[{\"atoms\":[{\"key\":[0],"
                                             "\"weight\":0.1,\"value\":0}]}]}",
                                             "x"),
                    HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "JSON real 0.1 is not exact"));
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "\"1/10\""));
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t,
                                             "{\"d\":1,\"heads\":[{\"atoms\":[{\"key\":[0],"
                                             "\"weight\":2.5e3,\"value\":0}]}]}",
                                             "x"),
                    HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "\"2500\""));
    /* the second head's atoms are checked too (a bad atom after good heads) */
    CU_ASSERT_EQUAL(hf_target_from_json_text(&t,
                                             "{\"d\":1,\"heads\":[{\"atoms\":[{\"key\":[0],"
                                             "\"weight\":1,\"value\":0}]},{\"atoms\":[{\"key\":"
                                             "[0],\"weight\":1,\"value\":0},{\"key\":[1],"
                                             "\"weight\":\"1/3\",\"value\":\"x\"}]}]}",
                                             "x"),
                    HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "x: heads[1].atoms[1].value: "));
    hf_target_clear(&t);
}

/* Every allocation of a load made to fail in turn: a clean NOMEM, never a crash or leak. */
static void test_json_alloc_failures(void)
{
    hf_target_t ref, t;
    hf_target_init_empty(&ref);
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&ref, GOOD_DIR "/dv2.json"), HF_OK);
    int saw_nomem = 0, saw_ok = 0;
    for (long n = 1; n < 200 && !saw_ok; n++) {
        hf_fail_after(n);
        hf_err_t err = hf_target_load_json(&t, GOOD_DIR "/dv2.json");
        hf_fail_after(0);
        CU_ASSERT(err == HF_OK || err == HF_ERR_NOMEM);
        if (err == HF_OK) {
            saw_ok = 1;
            CU_ASSERT(targets_equal(&ref, &t));
        } else {
            saw_nomem = 1;
        }
        hf_target_clear(&t);
    }
    CU_ASSERT(saw_nomem && saw_ok);
    saw_ok = 0;
    for (long n = 1; n < 200 && !saw_ok; n++) {
        hf_fail_after(n);
        char *s = hf_target_to_json(&ref);
        hf_fail_after(0);
        saw_ok = s != NULL;
        free(s);
    }
    CU_ASSERT(saw_ok);
    hf_target_clear(&ref);
}

/* ---------------------------------------------------------------- targets in code */

static void test_target_basics(void)
{
    hf_target_t t, u;
    hf_target_init_empty(&u);
    CU_ASSERT_EQUAL(hf_target_init(&t, "x", 0, 1), HF_ERR_INPUT);
    hf_target_clear(&t);
    CU_ASSERT_EQUAL(hf_target_init(&t, "x", 2, 17), HF_ERR_INPUT);
    hf_target_clear(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_init(&t, NULL, 2, 1), HF_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "target");
    CU_ASSERT_EQUAL(t.nheads, 0);
    CU_ASSERT_EQUAL(hf_target_head_atoms(&t), 0);

    hf_head_t h;
    hf_head_init(&h, 2, 1);
    CU_ASSERT_EQUAL(hf_target_add_head(&t, &h), HF_ERR_INPUT); /* empty head */
    int64_t key[2] = {1, 2};
    fmpq_t w, v;
    fmpq_init(w);
    fmpq_init(v);
    fmpq_set_si(w, 3, 4);
    fmpq_set_si(v, -1, 5);
    CU_ASSERT_EQUAL(hf_head_push(&h, key, w, v), HF_OK);
    CU_ASSERT_EQUAL(hf_target_add_head(&t, &h), HF_OK);
    CU_ASSERT_EQUAL(hf_target_add_head(&t, &h), HF_OK);
    CU_ASSERT_EQUAL(t.nheads, 2);
    CU_ASSERT_EQUAL(hf_target_head_atoms(&t), 2);
    /* the target holds copies */
    fmpq_set_si(h.weights, 7, 1);
    CU_ASSERT(fmpq_equal(t.heads[1].weights, w));
    hf_head_clear(&h);

    hf_head_init(&h, 3, 1);
    CU_ASSERT_EQUAL(hf_head_resize(&h, 1), HF_OK);
    CU_ASSERT_EQUAL(hf_target_add_head(&t, &h), HF_ERR_INPUT); /* d mismatch */
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "heads[2]"));
    hf_head_clear(&h);

    CU_ASSERT_EQUAL_FATAL(hf_target_copy(&u, &t), HF_OK);
    CU_ASSERT(targets_equal(&t, &u));
    fmpq_set_si(u.heads[0].values, 9, 1);
    CU_ASSERT(!targets_equal(&t, &u)); /* deep copy; and the comparison can fail */
    hf_target_clear(&u);
    hf_target_clear(&t);
    hf_target_clear(&t); /* clearing twice is harmless */
    fmpq_clear(v);
    fmpq_clear(w);
}

/* ---------------------------------------------------------------- evaluation */

static void test_eval_wd(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    static const double pts[][2] = {{0, 0},    {1, -2},   {0.5, 3.25}, {-7, 11},
                                    {40, -40}, {-700, 2}, {800, -800}, {1e-9, -1e-9}};
    for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
        double out;
        hf_target_eval(&t, pts[i], &out);
        CU_ASSERT_DOUBLE_EQUAL(out, sigma(pts[i][0]) + sigma(pts[i][1]), 1e-14);
    }
    hf_target_clear(&t);

    /* chain:d=3 and wdw:d=3 against their formulas */
    double q[3] = {0.7, -1.3, 2.1}, out;
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "chain:d=3"), HF_OK);
    hf_target_eval(&t, q, &out);
    double want = sigma(q[0]) + sigma(q[1]) + sigma(q[2]) + sigma(q[0] + q[1]) + sigma(q[1] + q[2]);
    CU_ASSERT_DOUBLE_EQUAL(out, want, 1e-14);
    hf_target_clear(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wdw:d=3"), HF_OK);
    hf_target_eval(&t, q, &out);
    CU_ASSERT_DOUBLE_EQUAL(out, sigma(q[0]) + 2 * sigma(q[1]) + 3 * sigma(q[2]), 1e-14);
    hf_target_clear(&t);

    /* multi:d=1,k=3: (x + 2x^2)/(1 + x + x^2) */
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "multi:d=1"), HF_OK);
    double x = exp(q[0]);
    hf_target_eval(&t, q, &out);
    CU_ASSERT_DOUBLE_EQUAL(out, (x + 2 * x * x) / (1 + x + x * x), 1e-14);
    hf_target_clear(&t);
}

static void test_eval_dv2(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_load_json(&t, GOOD_DIR "/dv2.json"), HF_OK);
    double q[2] = {0.4, -0.9}, out[2];
    hf_target_eval(&t, q, out);
    double x = exp(q[0]), y = exp(q[1]);
    /* head 0: weights 1, 3/2 on keys 0, e1 */
    double z0 = 1 + 1.5 * x;
    double a0 = (1.5 * x * -0.5) / z0, b0 = (1.0 / 3 + 1.5 * x * 2) / z0;
    /* head 1: weights 2/7, 5, 1e-21 on keys 0, e2, (-1,2) */
    double w2 = 1e-21 * y * y / x, z1 = 2.0 / 7 + 5 * y + w2;
    double a1 = (2.0 / 7 + 5 * y * (2.0 / 3) + w2 * 123456789012345678901234567890.0) / z1;
    double b1 = (5 * y * -3 + w2 * (-1.0 / 3)) / z1;
    /* a1 is about 1e7 (a huge value on a tiny weight): compare relatively */
    CU_ASSERT(fabs(out[0] - (a0 + a1)) <= 1e-14 * fabs(a0 + a1));
    CU_ASSERT_DOUBLE_EQUAL(out[1], b0 + b1, 1e-13);
    hf_target_clear(&t);
}

/* ---------------------------------------------------------------- --keys */

static void test_keys_good(void)
{
    int64_t *keys;
    long m;
    CU_ASSERT_EQUAL_FATAL(hf_keys_parse("0,0;1,0;0,1;1,1", 2, "--keys", &keys, &m), HF_OK);
    CU_ASSERT_EQUAL(m, 4);
    static const int64_t want[] = {0, 0, 1, 0, 0, 1, 1, 1};
    CU_ASSERT(!memcmp(keys, want, sizeof want));
    free(keys);

    CU_ASSERT_EQUAL_FATAL(hf_keys_parse(" 0 , -3 ;\t1,1048576 ", 2, "--keys", &keys, &m), HF_OK);
    CU_ASSERT_EQUAL(m, 2);
    CU_ASSERT_EQUAL(keys[1], -3);
    CU_ASSERT_EQUAL(keys[3], HF_KEY_MAX);
    free(keys);

    CU_ASSERT_EQUAL_FATAL(hf_keys_parse("2;0;1", 1, "--keys", &keys, &m), HF_OK);
    CU_ASSERT_EQUAL(m, 3);
    CU_ASSERT_EQUAL(keys[0], 2);
    free(keys);

    /* a large distinct set ({0..39}^2 in a scrambled order) */
    char *text = malloc(40 * 40 * 12);
    size_t len = 0;
    for (int i = 0; i < 1600; i++) {
        int j = (i * 37) % 1600; /* 37 is prime to 1600: a permutation */
        len += (size_t)sprintf(text + len, "%s%d,%d", i ? ";" : "", j / 40, j % 40);
    }
    CU_ASSERT_EQUAL(hf_keys_parse(text, 2, "--keys", &keys, &m), HF_OK);
    CU_ASSERT_EQUAL(m, 1600);
    free(keys);
    /* append a repeat of the 8th key */
    sprintf(text + len, ";%d,%d", (7 * 37 % 1600) / 40, (7 * 37 % 1600) % 40);
    CU_ASSERT_EQUAL(hf_keys_parse(text, 2, "--keys", &keys, &m), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "--keys: key 1601 repeats key 8");
    free(text);
}

static void test_keys_bad(void)
{
    static const struct {
        const char *text;
        int d;
        const char *msg;
    } cases[] = {
        {"", 2, "--keys: empty key list"},
        {"   ", 2, "--keys: empty key list"},
        {"0,0;1", 2, "--keys: key 2 has 1 coordinate, expected 2"},
        {"0,0,0", 2, "--keys: key 1 has 3 coordinates, expected 2"},
        {"0,0;1,x", 2, "--keys: key 2, coordinate 2: 'x' is not an integer"},
        {"0,0;1,", 2, "--keys: key 2, coordinate 2: '' is not an integer"},
        {"1 0,0", 2, "--keys: key 1, coordinate 1: '1 0' is not an integer"},
        {"--1,0", 2, "--keys: key 1, coordinate 1: '--1' is not an integer"},
        {"1.5,0", 2, "'1.5' is not an integer"},
        {"0,1048577", 2, "--keys: key 1, coordinate 2: '1048577' is outside -1048576..1048576"},
        {"-99999999999999999999999,0", 2, "is outside -1048576..1048576"},
        {"0,0;1,0;0,0", 2, "--keys: key 3 repeats key 1"},
        {"0,0;1,1;1,1;0,0", 2, "--keys: key 3 repeats key 2"},
        {"5;1;2;1;5", 1, "--keys: key 4 repeats key 2"},
        {"0,0;;1,1", 2, "--keys: key 2 is empty"},
        {"0,0;", 2, "--keys: key 2 is empty"},
        {"0", 0, "--keys: d = 0 is outside 1..64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t *keys = (int64_t *)&keys; /* must be reset to NULL */
        long m = -1;
        hf_err_t err = hf_keys_parse(cases[i].text, cases[i].d, "--keys", &keys, &m);
        CU_ASSERT_EQUAL(err, HF_ERR_INPUT);
        CU_ASSERT_PTR_NULL(keys);
        CU_ASSERT_EQUAL(m, 0);
        int ok = strstr(hf_error_msg(), cases[i].msg) != NULL;
        CU_ASSERT(ok);
        if (!ok)
            fprintf(stderr, "\nkeys '%s': %s\n", cases[i].text, hf_error_msg());
    }
    int64_t *keys;
    long m;
    CU_ASSERT_EQUAL(hf_keys_parse("0;0", 1, "job.txt: keys", &keys, &m), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "job.txt: keys: key 2 repeats key 1");
}

/* A random rational for the head text tests: small, negative, with a denominator, or with
 * more digits than a word (the text reader's slow path). */
static void random_rational(hf_rng_t *r, fmpq_t x)
{
    switch (hf_rng_next(r) % 4) {
    case 0:
        fmpq_set_si(x, (slong)(hf_rng_next(r) % 7), 1);
        break;
    case 1:
        fmpq_set_si(x, -(slong)(hf_rng_next(r) % 1000) - 1, 1 + hf_rng_next(r) % 9);
        break;
    case 2:
        fmpz_set_ui(fmpq_numref(x), hf_rng_next(r));
        fmpz_mul_ui(fmpq_numref(x), fmpq_numref(x), hf_rng_next(r));
        fmpz_set_ui(fmpq_denref(x), 1 + hf_rng_next(r) % 100000);
        fmpq_canonicalise(x);
        break;
    default:
        fmpq_set_si(x, (slong)(hf_rng_next(r) >> 2), 3);
        break;
    }
}

/* hf_head_to_json_text writes exactly jansson's compact text of hf_head_to_json, and
 * hf_head_from_json_text reads it (and a spaced or reordered form, through jansson) back to
 * the same head; a damaged text is refused as input, with jansson's message. */
static void test_head_json_text(void)
{
    hf_rng_t r;
    hf_rng_seed(&r, 17);
    for (int trial = 0; trial < 200; trial++) {
        int d = 1 + (int)(hf_rng_next(&r) % 4), dv = 1 + (int)(hf_rng_next(&r) % 2);
        long m = 1 + (long)(hf_rng_next(&r) % 12);
        hf_head_t h, back, slow;
        hf_head_init(&h, d, dv);
        hf_head_init(&back, d, dv);
        hf_head_init(&slow, d, dv);
        CU_ASSERT_FATAL(hf_head_resize(&h, m) == HF_OK);
        for (long i = 0; i < m; i++) {
            for (int j = 0; j < d; j++)
                h.keys[i * d + j] = (int64_t)(hf_rng_next(&r) % 2000) - 1000 +
                                    (trial % 17 == 0 ? INT64_C(1) << 60 : 0);
            random_rational(&r, h.weights + i);
            for (int j = 0; j < dv; j++)
                random_rational(&r, h.values + i * dv + j);
        }
        char *fast = NULL;
        CU_ASSERT_FATAL(hf_head_to_json_text(&h, NULL, m, &fast) == HF_OK);
        json_t *o = hf_head_to_json(&h, NULL, 0);
        char *ref = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        CU_ASSERT_STRING_EQUAL(fast, ref);
        CU_ASSERT_EQUAL(hf_head_from_json_text(&back, fast, m), HF_OK);
        char *spaced = json_dumps(o, JSON_INDENT(1)); /* not compact: the jansson path */
        CU_ASSERT_EQUAL(hf_head_from_json_text(&slow, spaced, m), HF_OK);
        for (long i = 0; i < m; i++) {
            for (int j = 0; j < d; j++) {
                CU_ASSERT_EQUAL(back.keys[i * d + j], h.keys[i * d + j]);
                CU_ASSERT_EQUAL(slow.keys[i * d + j], h.keys[i * d + j]);
            }
            CU_ASSERT(fmpq_equal(back.weights + i, h.weights + i));
            CU_ASSERT(fmpq_equal(slow.weights + i, h.weights + i));
            for (int j = 0; j < dv; j++) {
                CU_ASSERT(fmpq_equal(back.values + i * dv + j, h.values + i * dv + j));
                CU_ASSERT(fmpq_equal(slow.values + i * dv + j, h.values + i * dv + j));
            }
        }
        /* damaged: a truncated text, a zero denominator, one atom too few */
        fast[strlen(fast) / 2] = '\0';
        CU_ASSERT_EQUAL(hf_head_from_json_text(&back, fast, m), HF_ERR_INPUT);
        CU_ASSERT(strstr(hf_error_msg(), "not JSON") != NULL);
        CU_ASSERT_EQUAL(hf_head_from_json_text(&back, ref, m + 1), HF_ERR_INPUT);
        CU_ASSERT(strstr(hf_error_msg(), "atoms") != NULL);
        free(spaced);
        free(ref);
        free(fast);
        json_decref(o);
        hf_head_clear(&slow);
        hf_head_clear(&back);
        hf_head_clear(&h);
    }
    hf_head_t h;
    hf_head_init(&h, 1, 1);
    CU_ASSERT_EQUAL(hf_head_from_json_text(
                        &h, "{\"keys\":[[0]],\"weights\":[\"1/0\"],\"values\":[[\"1\"]]}", 1),
                    HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "weights[0]") != NULL);
    CU_ASSERT_EQUAL(hf_head_from_json_text(
                        &h, "{\"keys\":[[0]],\"weights\":[\"2/4\"],\"values\":[[\"-3/6\"]]}", 1),
                    HF_OK);
    CU_ASSERT(fmpz_equal_si(fmpq_denref(h.weights), 2) && fmpz_equal_si(fmpq_numref(h.values), -1));
    hf_head_clear(&h);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t rational[] = {
        {"parse and print", test_rational_good},
        {"bad strings", test_rational_bad},
        {NULL, NULL},
    };
    static const hf_unit_case_t family[] = {
        {"wd", test_family_wd},
        {"chain", test_family_chain},
        {"multi", test_family_multi},
        {"wdw", test_family_wdw},
        {"bad specs", test_family_bad},
        {"registry", test_family_registry},
        {"output ownership", test_output_ownership},
        {NULL, NULL},
    };
    static const hf_unit_case_t json[] = {
        {"dv2 fixture", test_json_dv2},
        {"rational weights fixture", test_json_rational_weights},
        {"other good input", test_json_other_good},
        {"export format", test_json_export_format},
        {"random round trips", test_json_round_trip_random},
        {"save and load", test_json_save_load},
        {"data files", test_json_data_files},
        {"bad fixtures", test_json_bad_fixtures},
        {"bad fixtures all listed", test_json_bad_fixtures_complete},
        {"bad text", test_json_text_misc},
        {"allocation failures", test_json_alloc_failures},
        {"head as compact text", test_head_json_text},
        {NULL, NULL},
    };
    static const hf_unit_case_t target[] = {
        {"init, add, copy, clear", test_target_basics},
        {"eval families", test_eval_wd},
        {"eval dv2", test_eval_dv2},
        {NULL, NULL},
    };
    static const hf_unit_case_t keys[] = {
        {"good", test_keys_good},
        {"bad", test_keys_bad},
        {NULL, NULL},
    };
    return hf_unit_suite("rational", rational) || hf_unit_suite("family", family) ||
           hf_unit_suite("json", json) || hf_unit_suite("target", target) ||
           hf_unit_suite("keys", keys);
}
