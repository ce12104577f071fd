// CPU twin of the feature gather: out[i, :] = table[ids[i], :], row bytes copied in parallel.
// Ids are assumed valid (the front door in feature_store.cc checks them).
#pragma once

#include <cstdint>

namespace directgnn::cpu {

void gather_rows(const uint8_t* table, int64_t row_bytes, const int32_t* ids, int64_t count,
                 uint8_t* out);
void gather_rows(const uint8_t* table, int64_t row_bytes, const int64_t* ids, int64_t count,
                 uint8_t* out);

}  // namespace directgnn::cpu
