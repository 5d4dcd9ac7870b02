/* Fuzz the key-set option parser hf_keys_parse ("0,0;1,0;0,1"). The first input
 * byte chooses d (mostly 1..8, sometimes an invalid or large d); the rest is the
 * option text. A parse that succeeds must return m keys of dimension d, within
 * -HF_KEY_MAX..HF_KEY_MAX and pairwise distinct; a failure must return no keys. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/target.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int odd_d[8] = {0, -1, 9, 16, 63, HF_D_MAX, HF_D_MAX + 1, 1000};
    if (size < 1)
        return 0;
    int d = data[0] < 248 ? 1 + data[0] % 8 : odd_d[data[0] - 248];
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    int64_t *keys = (int64_t *)1; /* must be overwritten */
    long m = -7;
    hf_err_t err = hf_keys_parse(text, d, "--keys", &keys, &m);
    if (err == HF_OK) {
        if (m < 1 || !keys || d < 1 || d > HF_D_MAX)
            FUZZ_BUG("hf_keys_parse succeeded with m = %ld, d = %d", m, d);
        for (long i = 0; i < m * d; i++)
            if (keys[i] < -HF_KEY_MAX || keys[i] > HF_KEY_MAX)
                FUZZ_BUG("key coordinate %lld out of range", (long long)keys[i]);
        for (long i = 0; i < m && m <= 512; i++)
            for (long j = 0; j < i; j++)
                if (!memcmp(keys + i * d, keys + j * d, (size_t)d * sizeof *keys))
                    FUZZ_BUG("keys %ld and %ld are equal", j + 1, i + 1);
    } else {
        if (keys || m != 0)
            FUZZ_BUG("failed hf_keys_parse left keys = %p, m = %ld", (void *)keys, m);
        if (err == HF_ERR_INPUT && !strstr(hf_error_msg(), "--keys"))
            FUZZ_BUG("message does not name the option: %s", hf_error_msg());
    }
    free(keys);
    hf_error_clear();
    free(text);
    return 0;
}
