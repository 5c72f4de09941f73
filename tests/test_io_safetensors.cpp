// io: safetensors reader/writer round trips, sharded index, and every malformed-file error.
// Reference files are written by hand (bytes assembled here) and, for cross-checking the
// writer, parsed independently by Python's json + struct.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/float_convert.h"
#include "io/safetensors.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

fs::path workDir(const std::string& name) {
    fs::path d = fs::path(WAVELAB_TEST_WORK_DIR) / "io" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Assembles a safetensors file from a header string and raw data bytes.
std::string rawFile(const std::string& header, const std::string& data, uint64_t declared_len = UINT64_MAX) {
    uint64_t n = declared_len == UINT64_MAX ? header.size() : declared_len;
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out + header + data;
}

void writeRaw(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}

// Expects wl::Error whose message names the file and contains `fragment`.
void expectError(const fs::path& p, const std::string& fragment) {
    try {
        wl::SafetensorsFile f(p.string());
        FAIL() << "no error for " << p << " (expected '" << fragment << "')";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), p.string());
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

}  // namespace

TEST(Safetensors, ReadsHandWrittenFile) {
    auto dir = workDir("hand");
    float a[6] = {1, 2, 3, 4, 5, 6};
    int64_t b[2] = {-7, 9};
    std::string data(reinterpret_cast<char*>(a), 24);
    data += std::string(reinterpret_cast<char*>(b), 16);
    std::string header =
        R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"I64","shape":[2],"data_offsets":[24,40]},"__metadata__":{"format":"pt"}})";
    writeRaw(dir / "x.safetensors", rawFile(header, data));
    wl::SafetensorsFile f((dir / "x.safetensors").string());
    ASSERT_TRUE(f.has("a"));
    const auto& va = f.get("a");
    EXPECT_EQ(va.dtype, wl::DType::F32);
    EXPECT_EQ(va.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(va.numel(), 6);
    float got[6];
    std::memcpy(got, va.data, 24);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], a[i]);
    int64_t gb[2];
    std::memcpy(gb, f.get("b").data, 16);
    EXPECT_EQ(gb[0], -7);
    EXPECT_EQ(gb[1], 9);
    EXPECT_EQ(f.metadata().at("format"), "pt");
    EXPECT_EQ(f.names(), (std::vector<std::string>{"a", "b"}));
    EXPECT_THROW(f.get("zzz"), wl::Error);
}

TEST(Safetensors, WriterRoundTripAndPythonParsesIt) {
    auto dir = workDir("roundtrip");
    std::vector<float> w(12);
    for (int i = 0; i < 12; ++i) w[i] = 0.5f * i - 3.0f;
    std::vector<uint16_t> h(4);
    for (int i = 0; i < 4; ++i) h[i] = wl::floatToBf16(1.5f * i);
    std::vector<int32_t> ids = {5, 6, 7};
    const std::string path = (dir / "out.safetensors").string();
    {
        wl::SafetensorsWriter wr(path);
        wr.add("half", wl::DType::BF16, {4}, h.data());   // smaller dtype first: writer reorders
        wr.add("w", wl::DType::F32, {3, 4}, w.data());
        wr.add("ids", wl::DType::I32, {3}, ids.data());
        wr.addProduced("made", wl::DType::F32, {2}, [](uint8_t* dst, size_t n) {
            float v[2] = {42.f, -1.f};
            ASSERT_EQ(n, 8u);
            std::memcpy(dst, v, 8);
        });
        wr.setMetadata("kind", "test");
        wr.finish();
    }
    wl::SafetensorsFile f(path);
    EXPECT_EQ(f.get("w").shape, (std::vector<int64_t>{3, 4}));
    for (int i = 0; i < 12; ++i) EXPECT_EQ(reinterpret_cast<const float*>(f.get("w").data)[i], w[i]);
    for (const auto& n : f.names()) {
        const auto& v = f.get(n);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % wl::dtypeSize(v.dtype), 0u) << n << " misaligned";
    }
    EXPECT_EQ(wl::bf16ToFloat(reinterpret_cast<const uint16_t*>(f.get("half").data)[3]), 4.5f);
    EXPECT_EQ(reinterpret_cast<const float*>(f.get("made").data)[0], 42.f);
    EXPECT_EQ(f.metadata().at("kind"), "test");
    // Independent parse with Python (struct + json), checking the layout rules of the format.
    const std::string script = (dir / "check.py").string();
    wl::writeFileAtomic(script,
                        "import json,struct,sys\n"
                        "b=open(sys.argv[1],'rb').read()\n"
                        "n=struct.unpack('<Q',b[:8])[0]\n"
                        "h=json.loads(b[8:8+n])\n"
                        "d=b[8+n:]\n"
                        "e=h['w']; s,t=e['data_offsets']\n"
                        "v=struct.unpack('<12f',d[s:t])\n"
                        "assert e['dtype']=='F32' and e['shape']==[3,4]\n"
                        "assert v[0]==-3.0 and v[11]==2.5, v\n"
                        "s,t=h['ids']['data_offsets']; assert struct.unpack('<3i',d[s:t])==(5,6,7)\n"
                        "assert h['__metadata__']['kind']=='test'\n"
                        "assert max(x['data_offsets'][1] for k,x in h.items() if k!='__metadata__')==len(d)\n"
                        "print('ok')\n");
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + script + " " + path;
    EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(Safetensors, RejectsMalformedFiles) {
    auto dir = workDir("bad");
    const std::string good_entry = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    const std::string data(8, '\0');

    writeRaw(dir / "tiny.safetensors", "abc");
    expectError(dir / "tiny.safetensors", "too small");

    writeRaw(dir / "hugelen.safetensors", rawFile(good_entry, data, 99999999999ull));
    expectError(dir / "hugelen.safetensors", "header length 99999999999 exceeds file size");

    writeRaw(dir / "badjson.safetensors", rawFile(R"({"a": {"dtype": )", data));
    expectError(dir / "badjson.safetensors", "malformed header JSON");

    writeRaw(dir / "pasteof.safetensors", rawFile(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", data));
    expectError(dir / "pasteof.safetensors", "past the end of the data region");

    writeRaw(dir / "size.safetensors", rawFile(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data));
    expectError(dir / "size.safetensors", "shape x dtype needs 12");

    writeRaw(dir / "dtype.safetensors", rawFile(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", data));
    expectError(dir / "dtype.safetensors", "unsupported dtype 'Q4'");

    writeRaw(dir / "overlap.safetensors",
             rawFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                     data));
    expectError(dir / "overlap.safetensors", "overlap");

    writeRaw(dir / "misaligned.safetensors",
             rawFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})", data));
    expectError(dir / "misaligned.safetensors", "misaligned");

    writeRaw(dir / "negshape.safetensors", rawFile(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data));
    expectError(dir / "negshape.safetensors", "non-negative");

    writeRaw(dir / "hugeshape.safetensors",
             rawFile(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})", data));
    expectError(dir / "hugeshape.safetensors", "too large");

    writeRaw(dir / "notobj.safetensors", rawFile("[1,2]", data));
    expectError(dir / "notobj.safetensors", "not an object");

    expectError(dir / "missing.safetensors", "cannot open");
}

TEST(Safetensors, ShardedIndex) {
    auto dir = workDir("sharded");
    float a[2] = {1, 2}, b[3] = {3, 4, 5};
    {
        wl::SafetensorsWriter w((dir / "model-00001-of-00002.safetensors").string());
        w.add("a", wl::DType::F32, {2}, a);
        w.finish();
    }
    {
        wl::SafetensorsWriter w((dir / "model-00002-of-00002.safetensors").string());
        w.add("b", wl::DType::F32, {3}, b);
        w.finish();
    }
    wl::writeSafetensorsIndex((dir / "model.safetensors.index.json").string(),
                              {{"a", "model-00001-of-00002.safetensors"}, {"b", "model-00002-of-00002.safetensors"}}, 20);
    wl::SafetensorsSet set(dir.string());
    EXPECT_EQ(set.files().size(), 2u);
    EXPECT_EQ(set.names(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(reinterpret_cast<const float*>(set.get("b").data)[2], 5.f);
    EXPECT_EQ(set.source(), (dir / "model.safetensors.index.json").string());
    try {
        set.get("c");
        FAIL();
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("missing tensor 'c'"), std::string::npos);
    }
    // An index naming a tensor its shard does not hold.
    wl::writeSafetensorsIndex((dir / "model.safetensors.index.json").string(),
                              {{"a", "model-00002-of-00002.safetensors"}}, 8);
    try {
        wl::SafetensorsSet bad(dir.string());
        FAIL();
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("missing tensor 'a'"), std::string::npos) << e.what();
    }
    wl::writeFileAtomic((dir / "model.safetensors.index.json").string(), "{\"weight_map\": [");
    EXPECT_THROW(wl::SafetensorsSet bad(dir.string()), wl::Error);
    auto empty = workDir("empty");
    EXPECT_THROW(wl::SafetensorsSet none(empty.string()), wl::Error);
}

TEST(FloatConvert, MatchesExactValuesAndRounding) {
    // Exactly representable values round-trip; halfway cases round to even.
    EXPECT_EQ(wl::floatToBf16(1.0f), 0x3f80);
    EXPECT_EQ(wl::floatToBf16(-2.0f), 0xc000);
    EXPECT_EQ(wl::floatToHalf(1.0f), 0x3c00);
    EXPECT_EQ(wl::floatToHalf(-2.0f), 0xc000);
    EXPECT_EQ(wl::floatToHalf(65504.0f), 0x7bff);
    EXPECT_EQ(wl::floatToHalf(1e6f), 0x7c00);
    EXPECT_EQ(wl::floatToHalf(5.9604645e-8f), 0x0001);   // smallest subnormal
    EXPECT_EQ(wl::floatToHalf(0.0f), 0x0000);
    EXPECT_EQ(wl::floatToHalf(1.0f + 1.0f / 2048), 0x3c00);   // halfway -> even
    EXPECT_EQ(wl::floatToHalf(1.0f + 3.0f / 2048), 0x3c02);   // halfway -> even (up)
    EXPECT_EQ(wl::floatToBf16(1.0f + 1.0f / 256), 0x3f80);
    EXPECT_EQ(wl::floatToBf16(1.0f + 3.0f / 256), 0x3f82);
    // Against a brute-force decode of every half bit pattern: nearest value wins.
    auto halfToFloat = [](uint16_t h) {
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
        return (h & 0x8000) ? -v : v;
    };
    for (float x : {0.1f, 0.3333f, 3.14159f, 1e-5f, 7e-7f, 1234.567f}) {
        uint16_t h = wl::floatToHalf(x);
        double err = std::abs(halfToFloat(h) - x);
        EXPECT_LE(err, std::abs(halfToFloat(h + 1) - x)) << x;
        EXPECT_LE(err, std::abs(halfToFloat(h - 1) - x)) << x;
    }
}
