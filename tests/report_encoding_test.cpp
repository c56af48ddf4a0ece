// Reports hold text from outside (arguments, catalog names, notes) that need not be UTF-8. The
// JSON and JUnit files must still be readable: every byte that does not start a well-formed UTF-8
// sequence, and every control character XML 1.0 cannot hold, becomes U+FFFD; valid text stays.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "report.hpp"

using namespace bitgate;

namespace {

const std::string kR = "\xef\xbf\xbd";  // U+FFFD
// Valid: e-acute (2 bytes), the euro sign (3), an emoji (4). Invalid, one U+FFFD a byte: a lone
// 0xff, an overlong '/' (c0 af), an encoded surrogate (ed a0 80), a cut-off 3-byte sequence at the
// end (e2 82); control characters 0x01 and 0x1b.
const std::string kIn = "a\xff b\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc0\xaf \xed\xa0\x80 \x01\x1b\t \xe2\x82";
const std::string kXml = "a" + kR + " b\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 " + kR + kR + " " + kR + kR + kR + " " + kR +
                         kR + "\t " + kR + kR;

std::string slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

std::string temp(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("bitgate_report_enc_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

Result failing() {
    Result r;
    r.family = "quantize_q8_0";
    r.variant = "v1";
    r.where = "host";
    r.case_id = kIn;
    r.verdict = Verdict::value_mismatch;
    r.note = kIn;
    return r;
}

}  // namespace

TEST(ReportEncoding, JsonReadsBackWithReplacements) {
    const std::string p = temp("r.json");
    write_json(p, RunInfo{.verb = "check", .argv = {"bitgate", kIn}}, {failing()});
    const nlohmann::json j = nlohmann::json::parse(slurp(p));  // throws on a byte that is not UTF-8
    const std::string arg = j["argv"][1].get<std::string>();
    EXPECT_NE(arg.find("b\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos) << arg;
    EXPECT_EQ(arg.find('\xff'), std::string::npos);
    EXPECT_EQ(j["results"][0]["case"].get<std::string>().substr(0, 4), "a" + kR);
    std::filesystem::remove(p);
}

TEST(ReportEncoding, JunitHoldsOnlyXmlCharacters) {
    const std::string p = temp("r.xml");
    write_junit(p, RunInfo{.verb = "check", .argv = {"bitgate"}}, {failing()});
    const std::string x = slurp(p);
    EXPECT_NE(x.find("name=\"" + kXml + "\""), std::string::npos) << x;
    EXPECT_NE(x.find(">" + kXml + "</failure>"), std::string::npos) << x;
    for (unsigned char c : x) EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t' || c == '\r') << int(c);
    std::filesystem::remove(p);
}
