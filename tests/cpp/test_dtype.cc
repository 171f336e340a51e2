// Tests of ferry/dtype.h: the text form both ways, and rejected input.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <string>

namespace {

using ferry::DataType;

TEST(DataType, ParsesAndPrints) {
  struct Case {
    const char* text;
    int code, bits, lanes;
  };
  const Case cases[] = {
      {"int64", DataType::kInt, 64, 1},
      {"int8", DataType::kInt, 8, 1},
      {"uint32", DataType::kUInt, 32, 1},
      {"float32x4", DataType::kFloat, 32, 4},
      {"float16", DataType::kFloat, 16, 1},
      {"bfloat16", DataType::kBFloat, 16, 1},
      {"bool", DataType::kUInt, 1, 1},
      {"boolx8", DataType::kUInt, 1, 8},
      {"handle", DataType::kHandle, 64, 1},
      {"void", DataType::kHandle, 0, 0},
      {"int32x65535", DataType::kInt, 32, 65535},
  };
  for (const Case& c : cases) {
    DataType t(c.text);
    EXPECT_EQ(t.code(), c.code) << c.text;
    EXPECT_EQ(t.bits(), c.bits) << c.text;
    EXPECT_EQ(t.lanes(), c.lanes) << c.text;
    EXPECT_EQ(t.ToString(), c.text);
    EXPECT_EQ(DataType(t.ToString()), t);
  }
  EXPECT_EQ(DataType("int"), DataType::Int(32)) << "a bare name takes its default width";
  EXPECT_EQ(DataType("float"), DataType::Float(32));
  EXPECT_TRUE(DataType("bool").is_bool());
  EXPECT_TRUE(DataType().is_void());
  EXPECT_TRUE(DataType::Handle().is_handle());
  EXPECT_TRUE(DataType("float32x4").is_vector());
  EXPECT_EQ(DataType("float32x4").element_of(), DataType::Float(32));
  EXPECT_EQ(DataType::Int(16).bytes(), 2);
}

TEST(DataType, EveryValidTypeRoundTrips) {
  const int codes[] = {DataType::kInt,    DataType::kUInt,    DataType::kFloat, DataType::kBFloat,
                       DataType::kHandle, DataType::kComplex, DataType::kDLBool};
  for (int code : codes) {
    for (int bits = 1; bits <= 255; bits += 7) {
      for (int lanes : {1, 2, 3, 16, 1024}) {
        DataType t(code, bits, lanes);
        EXPECT_EQ(DataType(t.ToString()), t) << t.ToString();
      }
    }
  }
}

TEST(DataType, RejectsMalformedTextNamingIt) {
  const char* bad[] = {"",         "flot32",   "int0", "int256", "int32x0",   "int32x65536",
                       "int-8",    "float32x", "x4",   "int 32", "int32x4x2", "bool0",
                       "complex0", "uint64x+1"};
  for (const char* text : bad) {
    try {
      DataType t{std::string_view(text)};
      ADD_FAILURE() << "'" << text << "' parsed as " << t;
    } catch (const ferry::Error& e) {
      EXPECT_EQ(e.kind(), "ValueError") << text;
      EXPECT_NE(e.message().view().find(std::string("'") + text + "'"), std::string_view::npos)
          << e.what();
    }
  }
  EXPECT_THROW(DataType(9, 8, 1), ferry::Error);
  EXPECT_THROW(DataType(DataType::kInt, 256, 1), ferry::Error);
  EXPECT_THROW(DataType(DataType::kInt, 8, 70000), ferry::Error);
  // What the parser rejects cannot be built either, so every DataType reads back.
  EXPECT_THROW(DataType::Int(0), ferry::Error);
  EXPECT_THROW(DataType::Float(32, 0), ferry::Error);
  EXPECT_THROW(DataType::Handle(0), ferry::Error);
  EXPECT_TRUE(DataType(DataType::kHandle, 0, 0).is_void());
  EXPECT_EQ(DataType(DataType::Void().ToString()), DataType::Void());
}

TEST(DataType, CrossesTheCAbi) {
  FerryDataType raw;
  ASSERT_EQ(FerryDataTypeFromString("float32x4", &raw), 0);
  EXPECT_EQ(raw.code, kFerryDTypeFloat);
  EXPECT_EQ(raw.bits, 32);
  EXPECT_EQ(raw.lanes, 4);
  FerryObjectHandle str = nullptr;
  ASSERT_EQ(FerryDataTypeToString(raw, &str), 0);
  const char* data = nullptr;
  ASSERT_EQ(FerryStringGetData(str, &data, nullptr), 0);
  EXPECT_STREQ(data, "float32x4");
  FerryObjectDecRef(str);
  EXPECT_EQ(FerryDataTypeFromString("nope", &raw), -1);
  FerryObjectHandle err = nullptr;
  FerryErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  FerryObjectDecRef(err);
}

}  // namespace
