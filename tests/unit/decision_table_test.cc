// The measured decision table (collbench --tune → COLL_TUNING_FILE): its parser, its lookup, the
// rules made from measured winners, and the Selector following it before the cost model; and the
// model's account of ranks that share cores.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "coll/error.hpp"
#include "coll/model/decision_table.hpp"
#include "coll/selector.hpp"
#include "synthetic_params.hpp"

namespace coll::model {
namespace {

const std::vector<std::string> kKnown{"ring", "tree", "halving_doubling", "native_mpi"};

using coll::testing::flat;

std::string error_of(const std::string& text) {
  try {
    parse_decision_table(text, "t.txt", kKnown);
  } catch (const Error& error) {
    EXPECT_EQ(error.status(), Status::InvalidArgument);
    return error.what();
  }
  return "no error";
}

TEST(DecisionTable, ParsesRulesPerShapeAndFindsTheCoveringOne) {
  const auto table = parse_decision_table(
      "# comment\nformat = libcoll-tuning 1\nhost = box\n\n2x2 0 tree\n2x2 64K ring\n"
      "3+2 1K halving_doubling\n2+2+2 0 ring\n",
      "t.txt", kKnown);
  EXPECT_EQ(table.host, "box");
  ASSERT_EQ(table.rules.size(), 3u);
  const Shape two_by_two = Shape::uniform(2, 2);
  EXPECT_EQ(table.find(two_by_two, 0)->algorithm, "tree");
  EXPECT_EQ(table.find(two_by_two, 65535)->algorithm, "tree");
  EXPECT_EQ(table.find(two_by_two, 65536)->algorithm, "ring");
  EXPECT_EQ(table.find(two_by_two, std::size_t(1) << 40)->algorithm, "ring");
  const Shape uneven = Shape::from_node_of_rank({0, 0, 0, 1, 1});
  EXPECT_EQ(shape_key(uneven), "3+2");
  EXPECT_EQ(table.find(uneven, 1023), nullptr) << "below the first rule: the model decides";
  EXPECT_EQ(table.find(uneven, 1024)->algorithm, "halving_doubling");
  EXPECT_EQ(table.find(Shape::uniform(3, 2), 8)->algorithm, "ring") << "2+2+2 is 3x2";
  EXPECT_EQ(table.find(Shape::uniform(1, 4), 8), nullptr) << "a shape without rules";
}

TEST(DecisionTable, SharedBuffersHaveTheirOwnRules) {
  const auto table = parse_decision_table(
      "format = libcoll-tuning 1\n1x2 0 ring\n1x2/shared 0 tree\n2+1/shared 0 ring\n", "t.txt",
      kKnown);
  const Shape pair = Shape::uniform(1, 2);
  EXPECT_EQ(shape_key(pair, true), "1x2/shared");
  EXPECT_EQ(table.find(pair, 1 << 20)->algorithm, "ring");
  EXPECT_EQ(table.find(pair, 1 << 20, true)->algorithm, "tree");
  EXPECT_EQ(table.find(Shape::from_node_of_rank({0, 0, 1}), 8, true)->algorithm, "ring");
  EXPECT_EQ(table.find(Shape::from_node_of_rank({0, 0, 1}), 8), nullptr);
  EXPECT_NE(table.text().find("1x2/shared 0 tree"), std::string::npos);
  const Selector tuned(flat(), {0, 0}, Tuning{}, table, "t.txt");
  EXPECT_EQ(tuned.choose(1 << 20), "ring");
  EXPECT_EQ(tuned.choose(1 << 20, true), "tree");
  const Selector::Choice both = tuned.choose_for_buffers(1 << 20);
  EXPECT_EQ(both.plain, "ring");
  EXPECT_EQ(both.mapped, "tree");
  // Without shared rules and with a core per rank the model prices both kinds alike: the
  // buffers are never looked up.
  const Selector model_only(flat(), {0, 0}, Tuning{});
  for (const std::size_t bytes : {std::size_t(8), std::size_t(1) << 20, std::size_t(64) << 20}) {
    const Selector::Choice same = model_only.choose_for_buffers(bytes);
    EXPECT_EQ(same.plain, same.mapped) << bytes;
  }
  // Where ranks share cores, mapped loads (one copy, no calls) win from mid sizes.
  const Selector sharing(flat(), {0, 0, 0, 0}, Tuning{}, std::nullopt, {}, 2);
  const Selector::Choice at_1m = sharing.choose_for_buffers(1 << 20);
  EXPECT_EQ(at_1m.mapped, "peer_read");
  EXPECT_NE(at_1m.plain, "peer_read");
  EXPECT_EQ(sharing.choose_for_buffers(8).mapped, sharing.choose_for_buffers(8).plain);
  // Without in-place rules (tables written before they were measured) the others hold in place.
  EXPECT_EQ(tuned.choose(1 << 20, false, true), "ring");
  EXPECT_EQ(tuned.choose(1 << 20, true, true), "tree");
  EXPECT_NE(error_of("format = libcoll-tuning 1\n1x2/private 0 ring\n").find("line 2: shape"),
            std::string::npos);
  EXPECT_NE(error_of("format = libcoll-tuning 1\n/shared 0 ring\n").find("line 2: shape"),
            std::string::npos);
}

TEST(DecisionTable, InPlaceRulesHoldForCallsInPlace) {
  const auto table = parse_decision_table(
      "format = libcoll-tuning 1\n1x2 0 ring\n1x2/in_place 0 halving_doubling\n1x2/shared 0 tree\n"
      "1x2/shared/in_place 0 ring\n2+1/in_place 0 ring\n",
      "t.txt", kKnown);
  const Shape pair = Shape::uniform(1, 2);
  EXPECT_EQ(shape_key(pair, true, true), "1x2/shared/in_place");
  EXPECT_EQ(shape_key(pair, false, true), "1x2/in_place");
  EXPECT_EQ(table.find(pair, 8)->algorithm, "ring");
  EXPECT_EQ(table.find(pair, 8, false, true)->algorithm, "halving_doubling");
  EXPECT_EQ(table.find(pair, 8, true)->algorithm, "tree");
  EXPECT_EQ(table.find(pair, 8, true, true)->algorithm, "ring");
  EXPECT_EQ(table.key_for(pair, true, true), "1x2/shared/in_place");
  // A shape with in-place rules only: calls out of place go to the model.
  const Shape uneven = Shape::from_node_of_rank({0, 0, 1});
  EXPECT_EQ(table.find(uneven, 8), nullptr);
  EXPECT_EQ(table.find(uneven, 8, false, true)->algorithm, "ring");
  // The file written back reads the same.
  const auto again = parse_decision_table(table.text(), "t.txt", kKnown);
  EXPECT_EQ(again.rules, table.rules);
  const Selector tuned(flat(), {0, 0}, Tuning{}, table, "t.txt");
  const Selector::Choice choice = tuned.choose_for_buffers(1 << 20);
  EXPECT_EQ(choice.plain, "ring");
  EXPECT_EQ(choice.plain_in_place, "halving_doubling");
  EXPECT_EQ(choice.mapped, "tree");
  EXPECT_EQ(choice.mapped_in_place, "ring");
  EXPECT_NE(tuned.explain(8, true, true).reason.find("1x2/shared/in_place from 0 B"),
            std::string::npos)
      << tuned.explain(8, true, true).reason;
  EXPECT_NE(error_of("format = libcoll-tuning 1\n1x2/in_place/shared 0 ring\n").find("line 2"),
            std::string::npos);
  EXPECT_NE(error_of("format = libcoll-tuning 1\n/in_place 0 ring\n").find("line 2: shape"),
            std::string::npos);
}

TEST(DecisionTable, BadFilesFailWithTheFileLineAndProblem) {
  const std::string head = "format = libcoll-tuning 1\n";
  EXPECT_NE(error_of("2x2 0 ring\n").find("tuning file t.txt: no 'format = libcoll-tuning 1'"),
            std::string::npos);
  EXPECT_NE(error_of("format = libcoll-tuning 9\n").find("line 1: format is"), std::string::npos);
  EXPECT_NE(error_of(head + "colour = red\n").find("line 2: unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "2x2 0\n").find("line 2: expected 'SHAPE FROM_BYTES ALGORITHM'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "2x2 0 ring extra\n").find("line 2: expected"), std::string::npos);
  for (const char* shape : {"0x2", "2x", "x2", "2y2", "3+", "+3", "3++2", "-1"}) {
    EXPECT_NE(error_of(head + shape + " 0 ring\n").find("line 2: shape '"), std::string::npos)
        << shape;
  }
  EXPECT_NE(error_of(head + "2x2 lots ring\n").find("line 2: 'lots' is not a size"),
            std::string::npos);
  EXPECT_NE(error_of(head + "2x2 0 warp\n").find("line 2: unknown algorithm 'warp' (known: ring"),
            std::string::npos);
  EXPECT_NE(error_of(head + "2x2 1K ring\n2x2 1K tree\n")
                .find("line 3: sizes of shape 2x2 must "
                      "increase"),
            std::string::npos);
  EXPECT_NE(error_of(head + "2x2 0 warp\n").find("rerun `collbench --tune`"), std::string::npos);
}

TEST(DecisionTable, SavedTablesLoadBackAndAMissingFileIsNoTable) {
  const std::string dir =
      ::testing::TempDir() + "/decision_table_" + std::to_string(::getpid()) + "/nested";
  const std::string path = dir + "/tuning.txt";
  EXPECT_FALSE(load_decision_table(path, kKnown));
  DecisionTable table;
  table.host = "box";
  table.rules["1x2"] = {{0, "tree"}, {4096, "ring"}};
  table.rules["2+1"] = {{0, "halving_doubling"}};
  save_decision_table(table, path);
  const auto loaded = load_decision_table(path, kKnown);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->text(), table.text());
  EXPECT_EQ(loaded->find(Shape::uniform(1, 2), 5000)->algorithm, "ring");
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(DecisionTable, RulesFromWinnersMergeRunsAndSplitBetweenMeasuredSizes) {
  const auto rules = rules_from_winners(
      {{8, "tree"}, {64, "tree"}, {512, "ring"}, {4096, "ring"}, {32768, "tree"}});
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].from_bytes, 0u);
  EXPECT_EQ(rules[0].algorithm, "tree");
  EXPECT_EQ(rules[1].from_bytes, 181u);  // sqrt(64 * 512)
  EXPECT_EQ(rules[1].algorithm, "ring");
  EXPECT_EQ(rules[2].from_bytes, 11585u);  // sqrt(4096 * 32768)
  EXPECT_EQ(rules[2].algorithm, "tree");
  EXPECT_TRUE(rules_from_winners({}).empty());
}

TEST(DecisionTable, TheSelectorFollowsTheTableBeforeTheModel) {
  const Selector model_only(flat(), {0, 0, 0, 0}, Tuning{});
  const std::size_t small = 8, large = 64u << 20;
  // Rules that contradict the model at both ends, so that following them is visible.
  const std::string model_small = model_only.choose(small);
  const std::string model_large = model_only.choose(large);
  const std::string other_small = model_small == "ring" ? "tree" : "ring";
  const std::string other_large = model_large == "ring" ? "tree" : "ring";
  DecisionTable table;
  table.rules["1x4"] = {{4, other_small}, {1u << 20, other_large}};
  table.rules["2x2"] = {{0, model_small}};
  const Selector tuned(flat(), {0, 0, 0, 0}, Tuning{}, table, "tuning.txt");
  EXPECT_EQ(tuned.choose(small), other_small);
  EXPECT_EQ(tuned.choose(large), other_large);
  EXPECT_EQ(tuned.choose(2), model_only.choose(2)) << "below the first rule";
  const Explanation why = tuned.explain(large);
  EXPECT_NE(why.reason.find(other_large +
                            " measured fastest, tuning file tuning.txt (1x4 from "
                            "1048576 B); the model would pick " +
                            model_large),
            std::string::npos)
      << why.reason;
  // A rule naming an algorithm this process cannot run (native_mpi outside mpirun) is skipped.
  table.rules["1x4"] = {{0, "native_mpi"}};
  const Selector unavailable(flat(), {0, 0, 0, 0}, Tuning{}, table, "tuning.txt");
  EXPECT_EQ(unavailable.choose(small), model_small);
  EXPECT_NE(unavailable.explain(small).reason.find("names native_mpi, not available here"),
            std::string::npos);
}

TEST(SharingCores, RanksOutnumberingCoresSerialiseCopiesAndReductions) {
  const CostParams alone = flat();
  EXPECT_EQ(sharing_cores(alone, 1).source, alone.source);
  EXPECT_EQ(sharing_cores(alone, 0.5).intra.beta_s_per_byte, alone.intra.beta_s_per_byte);
  const CostParams shared = sharing_cores(alone, 2);
  EXPECT_DOUBLE_EQ(shared.intra.beta_s_per_byte, 2 * alone.intra.beta_s_per_byte);
  EXPECT_DOUBLE_EQ(shared.inter.beta_s_per_byte, 2 * alone.inter.beta_s_per_byte);
  EXPECT_DOUBLE_EQ(shared.gamma_s_per_byte, 2 * alone.gamma_s_per_byte);
  EXPECT_DOUBLE_EQ(shared.intra.alpha_s, alone.intra.alpha_s + kCoreHandOverSeconds);
  EXPECT_NE(shared.source.find("2 ranks per core"), std::string::npos) << shared.source;
  // The selector prices with them: a 4-rank all-reduce on 2 cores costs more than on 4.
  const Selector roomy(flat(), {0, 0, 0, 0}, Tuning{});
  const Selector crowded(flat(), {0, 0, 0, 0}, Tuning{}, std::nullopt, {}, 2);
  EXPECT_GT(crowded.predict("ring", 1u << 20)->total_s(),
            1.9 * roomy.predict("ring", 1u << 20)->total_s());
  EXPECT_GT(crowded.predict("tree", 8)->latency_s, roomy.predict("tree", 8)->latency_s + 1e-5);
}

}  // namespace
}  // namespace coll::model
