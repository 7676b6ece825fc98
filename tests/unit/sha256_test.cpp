// SHA-256 against the FIPS 180-2 vectors, lengths around the padding boundary, and file hashing.
#include "common/sha256.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace kreg {
namespace {

namespace fs = std::filesystem;

const test::ScratchRoot scratch("kreg_sha256_test");
fs::path fresh_dir(const std::string& name) { return scratch.fresh_dir(name); }

void write_binary(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    ASSERT_TRUE(out.good()) << path;
}

TEST(Sha256, Fips180EmptyMessage) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Fips180Abc) {
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, Fips180TwoBlockMessage) {
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, Fips180OneMillionA) {
    EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// 55 bytes is the longest message whose padding fits its last block; 56..63 need one more block.
TEST(Sha256, LengthsAroundThePaddingBoundary) {
    const std::pair<size_t, const char*> cases[] = {
        {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
        {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
        {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
        {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
        {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
        {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
        {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
        {128, "24da1b81d0b16df6428eee73c69fcb2a93c76bc6df706f0c6670fe6bfe800464"},
    };
    for (const auto& [length, digest] : cases) EXPECT_EQ(sha256_hex(std::string(length, 'x')), digest) << length;
}

TEST(Sha256, BinaryDataWithNulBytes) {
    const std::string with_nul("a\0b", 3);
    EXPECT_NE(sha256_hex(with_nul), sha256_hex("a"));
    EXPECT_EQ(sha256_hex(with_nul).size(), 64u);
}

TEST(Sha256, FileHashEqualsHashOfItsContents) {
    const fs::path dir = fresh_dir("file");
    write_binary(dir / "abc.bin", "abc");
    EXPECT_EQ(sha256_file_hex(dir / "abc.bin"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

    // Larger than the read chunk and not a multiple of it, so that reads are split mid-block.
    std::string big(200000 + 37, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131 + 7) % 251);
    write_binary(dir / "big.bin", big);
    EXPECT_EQ(sha256_file_hex(dir / "big.bin"), sha256_hex(big));

    write_binary(dir / "empty.bin", "");
    EXPECT_EQ(sha256_file_hex(dir / "empty.bin"), sha256_hex(""));
}

TEST(Sha256, MissingFileThrowsNamingIt) {
    const fs::path missing = fresh_dir("missing") / "no_such_plugin.so";
    try {
        sha256_file_hex(missing);
        FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_plugin.so"), std::string::npos) << e.what();
    }
}

TEST(Sha256, DirectoryThrowsNamingIt) {
    const fs::path dir = fresh_dir("a_directory");
    try {
        sha256_file_hex(dir);
        FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("a_directory"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace kreg
