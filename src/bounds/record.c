/* The rule table (names and words of the rules that give a lower bound) and the bounds
 * record of one target (bounds.h): LB with its rule and UB, computed once. */
#include <string.h>

#include "headfuse/bounds.h"

const char *hf_rule_name(hf_rule_t r)
{
    switch (r) {
#define HF_RULE_NAME(code, name, brief, words)                                                     \
    case code:                                                                                     \
        return name;
        HF_RULE_TABLE(HF_RULE_NAME)
#undef HF_RULE_NAME
    }
    return "unknown";
}

int hf_rule_parse(const char *name, hf_rule_t *out)
{
#define HF_RULE_MATCH(code, rname, brief, words)                                                   \
    if (name && !strcmp(name, rname)) {                                                            \
        *out = code;                                                                               \
        return 1;                                                                                  \
    }
    HF_RULE_TABLE(HF_RULE_MATCH)
#undef HF_RULE_MATCH
    return 0;
}

const char *hf_rule_words(const char *name)
{
    hf_rule_t r;
    if (!hf_rule_parse(name, &r))
        return NULL;
    switch (r) {
#define HF_RULE_WORDS(code, rname, brief, words)                                                   \
    case code:                                                                                     \
        return words;
        HF_RULE_TABLE(HF_RULE_WORDS)
#undef HF_RULE_WORDS
    }
    return NULL;
}

void hf_bounds_init(hf_bounds_t *b)
{
    hf_lower_init(&b->low);
    fmpz_init(b->ub);
    b->ub_exact = 0;
}

void hf_bounds_clear(hf_bounds_t *b)
{
    fmpz_clear(b->ub);
    hf_lower_clear(&b->low);
}

hf_err_t hf_bounds_compute(const hf_target_t *t, hf_bounds_t *b)
{
    HF_TRY(hf_bounds_lower_info(t, &b->low));
    return hf_bounds_upper(t, b->ub, &b->ub_exact);
}
