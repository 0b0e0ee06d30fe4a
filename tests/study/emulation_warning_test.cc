// Where --emulate warns that a cell cannot be emulated faithfully on this machine: the wake-ups
// of a rank's steps, which K does not scale, against the emulated communication and against the
// emulated exposed time (what backward leaves exposed is at least the last bucket's all-reduce);
// an exposed time the model's own communication moves many times over; and, on the virtual clock,
// the room first-come links leave hierarchical's phases to overlap.
#include <gtest/gtest.h>

#include "emulation.hpp"
#include "study/exposed_conditioning.hpp"

namespace {

using coll::study::exposed_swing;
using coll::study::ExposedSwing;
using coll::study::find_strategy;
using coll::study::ill_conditioned_warning;
using coll::study::modelled_cell;
using coll::study::TableCell;
using coll::study::TableInputs;
using collbench::emulation_warning;
using collbench::first_come_warning;
using collbench::MachineLimits;

// ResNet-50's 1x2 cells as the cost model prices them for p40-ib56: rings of 2 steps per bucket,
// the last bucket's (or, with nothing overlapped, every bucket's) after backward.
TableCell resnet50_1x2(std::size_t buckets, double comm_ms, double exposed_ms,
                       double tail_hops = 2) {
  TableCell cell;
  cell.model = "resnet50";
  cell.nodes = 1;
  cell.ranks_per_node = 2;
  cell.buckets = buckets;
  cell.hops = 2.0 * double(buckets);
  cell.tail_hops = tail_hops;
  cell.comm_ms = comm_ms;
  cell.exposed_ms = exposed_ms;
  return cell;
}

// The project's 2-core VM, whose threads wake 0.11 ms late from a short sleep when quiet.
MachineLimits two_cores(double others_load) {
  MachineLimits machine;
  machine.cores = 2;
  machine.others_load = others_load;
  machine.wake_s = 0.11e-3;
  return machine;
}

constexpr double kResnet50Bytes = 4.0 * 25.6e6;

// The K a warning says clears it: "raise --time-scale to K, ...".
int suggested_time_scale(const std::string& warning) {
  const std::string lead = "raise --time-scale to ";
  const auto at = warning.find(lead);
  return at == std::string::npos ? -1 : std::stoi(warning.substr(at + lead.size()));
}

std::string warning_for(const TableCell& cell, double time_scale, double others_load = 0) {
  double load = 0;
  return emulation_warning(cell, kResnet50Bytes, time_scale, two_cores(others_load), load);
}

TEST(EmulationWarning, ExposedTimeWellAboveTheWakeUpsIsFaithful) {
  // cntk: nothing overlapped, 11.6 ms exposed; horovod: 3.6 ms in 3 buckets.
  EXPECT_EQ(warning_for(resnet50_1x2(161, 11.6, 11.6, 322), 50), "");
  EXPECT_EQ(warning_for(resnet50_1x2(3, 10.1, 3.58), 50), "");
}

TEST(EmulationWarning, ExposedTimeNearTheWakeUpsIsBelowResolution) {
  // best: 0.01 ms exposed, 0.5 ms at K = 50, against two steps' wake-ups of 0.11 ms.
  const std::string warning = warning_for(resnet50_1x2(2, 10.8, 0.01), 50);
  EXPECT_EQ(warning.rfind("exposed time below resolution: ", 0), 0u) << warning;
  EXPECT_NE(warning.find("~2 steps in sequence, each waiting ~0.11 ms"), std::string::npos)
      << warning;
  // The K it names is the least that resolves the cell: 2 x 0.11 ms within 15 % of K x 0.01 ms.
  EXPECT_EQ(suggested_time_scale(warning), 147) << warning;
  EXPECT_NE(warning.find("or use --clock virtual"), std::string::npos) << warning;
  EXPECT_EQ(warning_for(resnet50_1x2(2, 10.8, 0.01), 147), "");
  EXPECT_NE(warning_for(resnet50_1x2(2, 10.8, 0.01), 146), "");
}

TEST(EmulationWarning, ManyStepsWarnLatencyBoundFirst) {
  // caffe-mpi: 321 per-blob all-reduces, 2 steps each waiting 0.21 ms (2.85 runnable threads
  // on 2 cores), against 14.6 ms x K = 50.
  const std::string warning = warning_for(resnet50_1x2(321, 14.6, 0.03), 50, 0.85);
  EXPECT_EQ(warning.rfind("latency-bound: ~642 steps in sequence", 0), 0u) << warning;
  // At the K it names the steps' wake-ups are 15 % of the communication; the exposed 0.03 ms is
  // then what remains to resolve.
  const int k = suggested_time_scale(warning);
  EXPECT_EQ(k, 63) << warning;
  EXPECT_EQ(warning_for(resnet50_1x2(321, 14.6, 0.03), k, 0.85).rfind("latency-bound", 0),
            std::string::npos);
  EXPECT_EQ(warning_for(resnet50_1x2(321, 14.6, 0.03), k - 1, 0.85).rfind("latency-bound", 0), 0u);
}

TEST(EmulationWarning, TheExposedTailIsEveryHopOfTheAllReducesAfterBackward) {
  // p40-ib56, ResNet-50 on 1 x 2: mxnet's last three tensors (conv1's weight, two 3-float
  // tensors of its batch norm) run after backward, each a ring and the leader's gather and
  // scatter (4 hops on 2 ranks); ddp's last bucket is one ring (2 hops).
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  const TableCell mxnet = modelled_cell(inputs, find_strategy("mxnet"), "resnet50", "", 1, 2);
  EXPECT_NEAR(mxnet.hops, 4.0 * double(mxnet.buckets), 1e-6);
  EXPECT_GT(mxnet.tail_hops, 8);
  EXPECT_LE(mxnet.tail_hops, 12 + 1e-6);
  const TableCell ddp = modelled_cell(inputs, find_strategy("ddp"), "resnet50", "", 1, 2);
  EXPECT_GT(ddp.tail_hops, 0);
  EXPECT_LE(ddp.tail_hops, 2 + 1e-6);
  // The machine of the K = 50 run that measured mxnet's 0.09 ms at 0.11 (2026-12-05): its
  // exposed time is below resolution there, as its +27 % showed.
  MachineLimits machine = two_cores(0.54);
  machine.wake_s = 0.086e-3;
  double load = 0;
  const std::string warning = emulation_warning(mxnet, kResnet50Bytes, 50, machine, load);
  EXPECT_EQ(warning.rfind("exposed time below resolution: ", 0), 0u) << warning;
  EXPECT_EQ(emulation_warning(ddp, kResnet50Bytes, 50, machine, load), "");
}

TEST(EmulationWarning, ACpuBoundCellNamesTheTimeScaleThatFreesTheCores) {
  // AlexNet's 244 MB of gradients on 4 ranks at K = 1 need more than half the cores.
  TableCell cell = resnet50_1x2(1, 50.5, 50.5);
  cell.model = "alexnet";
  cell.ranks_per_node = 4;
  double load = 0;
  const std::string warning = emulation_warning(cell, 244e6, 1, two_cores(0), load);
  EXPECT_EQ(warning.rfind("CPU-bound: ", 0), 0u) << warning;
  const int k = suggested_time_scale(warning);
  EXPECT_EQ(emulation_warning(cell, 244e6, k, two_cores(0), load).rfind("CPU-bound", 0),
            std::string::npos);
  EXPECT_EQ(emulation_warning(cell, 244e6, k - 1, two_cores(0), load).rfind("CPU-bound", 0), 0u);
}

TEST(EmulationWarning, AnExposedTimeThatCommunicationMovesManyTimesOverIsIllConditioned) {
  EXPECT_EQ(ill_conditioned_warning(ExposedSwing{0.05, -0.05}), "");
  EXPECT_EQ(ill_conditioned_warning(ExposedSwing{0.15, -0.15}), "");
  EXPECT_EQ(ill_conditioned_warning(ExposedSwing{1.62, -0.05}),
            "exposed time ill-conditioned: 5 % more communication moves the modelled exposed time "
            "by +162 %, 5 % less by -5 % (compare the communication columns)");
}

TEST(EmulationWarning, ExposedSwingIsTheModelsOwn) {
  // p40-ib56, ResNet-50 on 2 x 4: tensorflow's backward just stops hiding its parameter server
  // (its exposed time is the tail of a queue built over the whole backward); ddp's exposed time is
  // its last bucket's all-reduce, which moves as communication does.
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  auto swing_of = [&](const char* strategy) {
    const auto& s = find_strategy(strategy);
    return exposed_swing(
        inputs, modelled_cell(inputs, s, "resnet50", "", 2, 4),
        [&](const TableInputs& scaled) { return modelled_cell(scaled, s, "resnet50", "", 2, 4); });
  };
  const ExposedSwing queued = swing_of("tensorflow");
  EXPECT_GT(queued.more, 0.3);
  EXPECT_LT(queued.less, -0.3);
  EXPECT_NE(ill_conditioned_warning(queued), "");
  const ExposedSwing tail = swing_of("ddp");
  EXPECT_NEAR(tail.more, 0.05, 0.01);
  EXPECT_NEAR(tail.less, -0.05, 0.01);
  EXPECT_EQ(ill_conditioned_warning(tail), "");
}

TEST(EmulationWarning, FirstComeLinksWarnWhereTheirRoomExceedsTheTolerance) {
  TableCell cell = resnet50_1x2(5, 100, 10);
  EXPECT_EQ(first_come_warning(15, cell), "");
  EXPECT_EQ(first_come_warning(36, cell),
            "first-come links: on the virtual clock hierarchical's intra-node and inter-node "
            "phases may overlap by up to 36.0 ms of the 100 ms modelled, which fair links do not "
            "(use --clock real)");
}

TEST(EmulationWarning, FirstComeRoomIsTheHierarchicalBucketsOverlapOnNodesOfSeveralRanks) {
  // p40-ib56: horovod's 64 MiB buckets are all hierarchical, their intra-node and inter-node
  // phases alike in length, so 3/4 of either is a third of the communication; the flat rings and
  // parameter servers have no such phases; one node has no inter-node phase; `best` prices few
  // of ResNet-50's buckets hierarchical.
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  auto room_share = [&](const char* strategy, const char* model, int nodes) {
    const auto& s = find_strategy(strategy);
    const TableCell cell = modelled_cell(inputs, s, model, "", nodes, 4);
    return cell.phase_overlap_ms / cell.comm_ms;
  };
  EXPECT_NEAR(room_share("horovod", "alexnet", 2), 0.36, 0.03);
  EXPECT_NEAR(room_share("horovod", "resnet50", 4), 0.31, 0.03);
  EXPECT_EQ(room_share("horovod", "alexnet", 1), 0);
  EXPECT_EQ(room_share("caffe-mpi", "googlenet", 4), 0);
  EXPECT_EQ(room_share("tensorflow", "googlenet", 4), 0);
  EXPECT_EQ(room_share("mxnet", "resnet50", 2), 0);
  const double best = room_share("best", "resnet50", 4);
  EXPECT_GT(best, 0);
  EXPECT_LT(best, 0.15);
}

}  // namespace
