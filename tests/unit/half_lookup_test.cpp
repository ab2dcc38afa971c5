// The GPU's float16 table lookup kernel (codegen/nvptx/half_lookup.h), as PTX (no GPU needed):
// per thread all its input loads of a run before any table read; the table of 1- and 2-byte
// outputs copied into shared memory (16 bytes a thread at a time) and read there, of 4-byte ones
// read through the read-only path; one kernel per output size.
#include <gtest/gtest.h>

#include <string>

#include "codegen/nvptx/half_lookup.h"

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HalfLookup, InputsInFlightThenTheTable) {
  for (auto [bytes, width] : {std::pair{1, "u8"}, std::pair{2, "u16"}, std::pair{4, "u32"}}) {
    SCOPED_TRACE(bytes);
    const arrayc::detail::HalfLookupShape shape = arrayc::detail::half_lookup_shape(bytes);
    const std::string ptx = arrayc::detail::emit_half_lookup_ptx(bytes, 90).ptx;
    EXPECT_NE(ptx.find(".entry arrayc_half_lookup_" + std::to_string(8 * bytes)), std::string::npos);
    const int per = shape.per_thread;
    const std::string table = bytes <= 2 ? std::string("ld.shared.") + width : std::string("ld.global.nc.") + width;
    // Vectors of 8 (16-byte input loads) where aligned, then element by element: a whole run, then
    // the guarded last run.
    EXPECT_EQ(count(ptx, "ld.global.v4.b32"), shape.vectors);
    EXPECT_EQ(count(ptx, "ld.global.u16"), 2 * per);
    EXPECT_EQ(count(ptx, table), 2 * per + 8 * shape.vectors);
    EXPECT_GE(count(ptx, std::string("st.global.") + width), per);
    // Every input load of a run comes before its first table read.
    auto nth = [&](const std::string& what, size_t from, int k) {
      for (int i = 0; i < k; ++i) from = ptx.find(what, from + 1);
      return from;
    };
    if (shape.vectors) EXPECT_LT(nth("ld.global.v4.b32", 0, shape.vectors), ptx.find(table));
    const size_t scalar = ptx.find("ld.global.u16");
    EXPECT_LT(nth("ld.global.u16", 0, per), ptx.find(table, scalar));
    // The copy of the table into shared memory: 16 bytes a thread at a time, then a barrier.
    EXPECT_EQ(shape.shared_bytes, bytes <= 2 ? 65536u * bytes : 0u);
    EXPECT_EQ(count(ptx, "st.shared.v4.u32"), static_cast<int>(shape.shared_bytes / 16 / shape.threads));
    EXPECT_EQ(count(ptx, "bar.sync"), bytes <= 2 ? 1 : 0);
  }
}

}  // namespace
