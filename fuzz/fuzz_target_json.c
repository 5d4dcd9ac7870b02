/* Fuzz the JSON target reader: hf_target_from_json_text on the input (made
 * NUL-terminated). A target that parses must survive a round trip: written with
 * hf_target_to_json and parsed again it must be the same target, and writing that
 * again must give the same text; it must also evaluate (hf_target_eval) without
 * undefined behaviour. Anything else is a bug (abort). */
#include <flint/fmpq.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/target.h"
#include "fuzz_util.h"

/* Equal targets: name, dimensions, heads, and every atom exactly. */
static int same_target(const hf_target_t *a, const hf_target_t *b)
{
    if (strcmp(a->name, b->name) || a->d != b->d || a->dv != b->dv || a->nheads != b->nheads)
        return 0;
    for (int h = 0; h < a->nheads; h++) {
        const hf_head_t *x = a->heads + h, *y = b->heads + h;
        if (x->d != y->d || x->dv != y->dv || x->natoms != y->natoms)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    hf_target_t t, back;
    hf_target_init_empty(&t);
    hf_target_init_empty(&back);
    if (hf_target_from_json_text(&t, text, "fuzz.json") == HF_OK) {
        /* a parsed target is valid: its heads pass the same check a search makes */
        for (int h = 0; h < t.nheads; h++)
            if (hf_head_validate(t.heads + h, "fuzz.json") != HF_OK)
                FUZZ_BUG("parsed target fails hf_head_validate: %s", hf_error_msg());
        /* and evaluates (what `headfuse approx` does with it) without UB */
        double q[HF_D_MAX], out[HF_DV_MAX];
        for (int j = 0; j < t.d; j++)
            q[j] = (j % 2 ? -0.5 : 0.25) * (j + 1);
        hf_target_eval(&t, q, out);
        char *json = hf_target_to_json(&t);
        if (!json)
            FUZZ_BUG("hf_target_to_json failed on a parsed target: %s", hf_error_msg());
        if (hf_target_from_json_text(&back, json, "fuzz-written.json") != HF_OK)
            FUZZ_BUG("written target does not parse: %s\n%s", hf_error_msg(), json);
        if (!same_target(&t, &back))
            FUZZ_BUG("round trip changed the target:\n%s", json);
        char *again = hf_target_to_json(&back);
        if (!again || strcmp(json, again))
            FUZZ_BUG("writing the re-read target gives other text:\n%s\n---\n%s", json,
                     again ? again : "(null)");
        free(again);
        free(json);
        hf_target_clear(&back);
        hf_target_clear(&t);
    }
    hf_error_clear();
    free(text);
    return 0;
}
