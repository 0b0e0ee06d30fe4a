// How the tables' conclusions at 16 GPUs move under the model's uncertain choices: the batch
// (per GPU or per node), the compute's share of the P40's peak (30, 50, 70 %; 50 % is assumed,
// docs/compute_profile.md) and the 16-worker inter-node fit (its alpha and beta 10 % lower or
// higher). A conclusion that holds in every row is robust to them; one that flips is not.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "study/paper_tables.hpp"

namespace coll::study {

std::string sensitivity_markdown(const TableInputs& inputs);
nlohmann::ordered_json sensitivity_json(const TableInputs& inputs);

}  // namespace coll::study
