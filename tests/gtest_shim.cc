// Turns the C tests registered with DF_TEST() into GoogleTest tests.
#include "dftest.h"

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct CTest {
    std::string suite, name, file;
    DfTestFn fn;
    int line;
};

std::vector<CTest> &registry()
{
    static std::vector<CTest> tests;
    return tests;
}

int failures_in_test = 0;

class CTestCase : public ::testing::Test {
  public:
    explicit CTestCase(DfTestFn fn) : fn_(fn) {}
    void TestBody() override
    {
        failures_in_test = 0;
        fn_();
    }

  private:
    DfTestFn fn_;
};

} // namespace

extern "C" void df_test_register(const char *suite, const char *name, DfTestFn fn,
                                 const char *file, int line)
{
    registry().push_back({suite, name, file, fn, line});
}

extern "C" void df_test_fail(const char *file, int line, bool fatal, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    failures_in_test++;
    if (fatal)
        GTEST_MESSAGE_AT_(file, line, buf, ::testing::TestPartResult::kFatalFailure);
    else
        ADD_FAILURE_AT(file, line) << buf;
}

extern "C" void df_test_skip(const char *file, int line, const char *reason)
{
    GTEST_MESSAGE_AT_(file, line, reason, ::testing::TestPartResult::kSkip);
}

extern "C" int df_test_failures(void)
{
    return failures_in_test;
}

extern "C" double df_test_scale(void)
{
    const char *s = getenv("DF_TEST_SCALE");
    double v = s ? atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}

extern "C" const char *df_test_media_dir(void)
{
    const char *s = getenv("DF_TEST_MEDIA");
    return s && *s ? s : "tests/media";
}

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    for (const CTest &t : registry()) {
        DfTestFn fn = t.fn;
        ::testing::RegisterTest(t.suite.c_str(), t.name.c_str(), nullptr, nullptr, t.file.c_str(),
                                t.line, [fn]() -> ::testing::Test * { return new CTestCase(fn); });
    }
    return RUN_ALL_TESTS();
}
