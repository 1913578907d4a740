/* Fuzz target: any bytes as a bootstrap document. The reader must report, never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct xlb_bootstrap bootstrap;
    struct xlb_errors errs = {0};
    xlb_bootstrap_parse(text, &bootstrap, &errs);
    xlb_bootstrap_free(&bootstrap);
    xlb_errors_free(&errs);
    free(text);
    return 0;
}
