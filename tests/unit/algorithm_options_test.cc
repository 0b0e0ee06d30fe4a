// Options an algorithm declares with its registration (issue 43, item 4): the parameter server's
// COLL_PS_SERVERS and COLL_PS_DEDICATED, hierarchical's COLL_HIER_INTRA and COLL_HIER_INTER. The
// registry lists them; Config reads them from the environment with the errors the variables
// always had; a tool sets them in Tuning::algorithm_options and the same checks hold.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>

#include "algorithms/parameter_server_schedule.hpp"
#include "coll/algorithms.hpp"
#include "coll/config.hpp"
#include "coll/error.hpp"

namespace {

// Sets one variable for a test and unsets it after.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedVariable() { ::unsetenv(name_); }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
};

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const coll::Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(AlgorithmOptions, TheRegistryListsEachAlgorithmsOwnOptionsOnce) {
  const auto options = coll::describe_algorithm_options();
  auto find = [&](const std::string& variable) {
    return std::find_if(options.begin(), options.end(),
                        [&](const auto& option) { return option.variable == variable; });
  };
  ASSERT_EQ(options.size(), 4u);
  const auto servers = find("COLL_PS_SERVERS");
  ASSERT_NE(servers, options.end());
  EXPECT_EQ(servers->default_value, "0");
  EXPECT_EQ(servers->accepted, "an integer in [0, 65536]");
  EXPECT_EQ(servers->algorithms, (std::vector<std::string>{"ps"}));
  ASSERT_NE(find("COLL_PS_DEDICATED"), options.end());
  const auto inter = find("COLL_HIER_INTER");
  ASSERT_NE(inter, options.end());
  EXPECT_EQ(inter->default_value, "auto");
  EXPECT_EQ(inter->algorithms, (std::vector<std::string>{"hierarchical", "hierarchical_leader"}));
  EXPECT_EQ(find("COLL_HIER_INTRA")->default_value, "ring");
}

TEST(AlgorithmOptions, UnsetOptionsHaveTheirDeclaredDefaults) {
  const coll::Tuning tuning;
  EXPECT_EQ(coll::algorithm_option(tuning, "COLL_HIER_INTRA"), "ring");
  EXPECT_EQ(coll::algorithm_option(tuning, "COLL_HIER_INTER"), "auto");
  EXPECT_EQ(coll::algorithm_option_number(tuning, "COLL_PS_SERVERS"), 0);
  EXPECT_EQ(coll::algorithm_option_number(tuning, "COLL_PS_DEDICATED"), 0);
  const coll::ServerPlacement placement = coll::server_placement(tuning);
  EXPECT_EQ(placement.servers, 0);
  EXPECT_FALSE(placement.dedicated);
}

TEST(AlgorithmOptions, ConfigReadsThemFromTheEnvironment) {
  const ScopedVariable servers("COLL_PS_SERVERS", "3");
  const ScopedVariable dedicated("COLL_PS_DEDICATED", "1");
  const ScopedVariable inter("COLL_HIER_INTER", "tree");
  const coll::Config config = coll::Config::from_environment();
  const coll::ServerPlacement placement = coll::server_placement(config.tuning);
  EXPECT_EQ(placement.servers, 3);
  EXPECT_TRUE(placement.dedicated);
  EXPECT_EQ(coll::algorithm_option(config.tuning, "COLL_HIER_INTER"), "tree");
  EXPECT_EQ(coll::algorithm_option(config.tuning, "COLL_HIER_INTRA"), "ring");
}

TEST(AlgorithmOptions, BadValuesInTheEnvironmentNameTheVariableAsBefore) {
  {
    const ScopedVariable servers("COLL_PS_SERVERS", "many");
    EXPECT_EQ(error_of([] { coll::Config::from_environment(); }),
              "COLL_PS_SERVERS='many' is not an integer in [0, 65536]");
  }
  const ScopedVariable dedicated("COLL_PS_DEDICATED", "2");
  EXPECT_EQ(error_of([] { coll::Config::from_environment(); }),
            "COLL_PS_DEDICATED='2' is not an integer in [0, 1]");
}

TEST(AlgorithmOptions, AToolsValuesAreCheckedAsTheVariablesAre) {
  coll::Tuning tuning;
  tuning.algorithm_options.set("COLL_PS_SERVERS", "-1");
  EXPECT_EQ(error_of([&] { coll::check_algorithm_options(tuning); }),
            "COLL_PS_SERVERS='-1' is not an integer in [0, 65536]");
  EXPECT_EQ(error_of([&] { coll::algorithm_option_number(tuning, "COLL_PS_SERVERS"); }),
            "COLL_PS_SERVERS='-1' is not an integer in [0, 65536]");
  coll::Tuning unknown;
  unknown.algorithm_options.set("COLL_PS_SERVER", "2");
  EXPECT_NE(error_of([&] {
              coll::check_algorithm_options(unknown);
            }).find("no algorithm has the option 'COLL_PS_SERVER'"),
            std::string::npos);
  coll::Tuning fine;
  fine.algorithm_options.set("COLL_PS_SERVERS", "2");
  fine.algorithm_options.set("COLL_HIER_INTER", "ring");
  EXPECT_EQ(error_of([&] { coll::check_algorithm_options(fine); }), "no error");
}

}  // namespace
