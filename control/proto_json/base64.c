/*
 * base64 for proto3 JSON bytes, through OpenSSL. EVP_DecodeBlock wants the padded standard
 * alphabet and counts padding as zero bytes, so input is normalised and the padding subtracted.
 */
#include "pj_internal.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

static bool is_base64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/* Standard alphabet, padded to a multiple of 4; NULL if text is not base64. */
static char *normalise(const char *text, size_t *padded_len, size_t *n_pad)
{
    size_t len = strlen(text);
    size_t given_pad = 0;
    while (given_pad < 2 && len > 0 && text[len - 1] == '=') {
        len--;
        given_pad++;
    }
    if (len % 4 == 1 || (given_pad > 0 && (len + given_pad) % 4 != 0))
        return NULL;
    size_t pad = (4 - len % 4) % 4;
    char *out = malloc(len + pad + 1);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        char c = text[i] == '-' ? '+' : text[i] == '_' ? '/' : text[i];
        if (!is_base64_char(c)) {
            free(out);
            return NULL;
        }
        out[i] = c;
    }
    memset(out + len, '=', pad);
    out[len + pad] = '\0';
    *padded_len = len + pad;
    *n_pad = pad;
    return out;
}

bool pj_base64_decode(const char *text, ProtobufCBinaryData *out)
{
    size_t padded_len, n_pad;
    char *padded = normalise(text, &padded_len, &n_pad);
    if (padded == NULL)
        return false;
    out->len = 0;
    out->data = NULL;
    if (padded_len == 0) {
        free(padded);
        return true;
    }
    uint8_t *data = malloc(padded_len / 4 * 3);
    int decoded = data ? EVP_DecodeBlock(data, (const unsigned char *)padded, (int)padded_len) : -1;
    free(padded);
    if (decoded < 0 || (size_t)decoded < n_pad) {
        free(data);
        return false;
    }
    out->data = data;
    out->len = (size_t)decoded - n_pad;
    return true;
}

char *pj_base64_encode(const uint8_t *data, size_t len)
{
    if (len > (size_t)INT32_MAX / 4 * 3 - 3)
        return NULL;
    char *text = malloc((len + 2) / 3 * 4 + 1);
    if (text == NULL)
        return NULL;
    EVP_EncodeBlock((unsigned char *)text, data, (int)len);
    return text;
}
