#include "transport/ucx_worker.hpp"

#include <ucs/config/global_opts.h>

#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {

void check_ucx(ucs_status_t status, const std::string& what) {
  if (status != UCS_OK) {
    throw Error(Status::SystemError, what + " failed: " + ucs_status_string(status));
  }
}

UcxWorker::UcxWorker(const std::string& tls, const std::string& net_devices,
                     const UcxSettings& settings)
    : tls_(tls) {
  ucp_config_t* config = nullptr;
  check_ucx(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  ucs_status_t status = ucp_config_modify(config, "TLS", tls.c_str());
  if (status == UCS_OK) status = ucp_config_modify(config, "NET_DEVICES", net_devices.c_str());
  if (status != UCS_OK) {
    ucp_config_release(config);
    check_ucx(status, "UCX configuration TLS=" + tls + " NET_DEVICES=" + net_devices);
  }
  for (const auto& [name, value] : settings) {
    status = ucp_config_modify(config, name.c_str(), value.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      check_ucx(status, "UCX configuration " + name + "=" + value);
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  status = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check_ucx(status, "ucp_init with UCX_TLS=" + tls + " UCX_NET_DEVICES=" + net_devices);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  check_ucx(ucp_worker_create(context_, &worker_params, &worker_), "ucp_worker_create");
  check_ucx(ucp_worker_get_efd(worker_, &event_fd_), "ucp_worker_get_efd");

  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  check_ucx(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address");
  address_.assign(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker_, address);
}

UcxWorker::~UcxWorker() {
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

QuietUcxWarnings::QuietUcxWarnings() : saved_level_(ucs_global_opts.log_component.log_level) {
  if (saved_level_ == UCS_LOG_LEVEL_WARN) {
    ucs_global_opts.log_component.log_level = UCS_LOG_LEVEL_ERROR;
  }
}

QuietUcxWarnings::~QuietUcxWarnings() {
  ucs_global_opts.log_component.log_level = static_cast<ucs_log_level_t>(saved_level_);
}

bool UcxWorker::drain(double max_seconds) {
  ucp_request_param_t params{};
  void* flush = ucp_worker_flush_nbx(worker_, &params);
  if (flush == nullptr) return true;
  if (UCS_PTR_IS_ERR(flush)) return false;
  const double give_up = now_seconds() + max_seconds;
  ucs_status_t status = UCS_INPROGRESS;
  while ((status = ucp_request_check_status(flush)) == UCS_INPROGRESS && now_seconds() < give_up) {
    ucp_worker_progress(worker_);
  }
  ucp_request_free(flush);
  return status != UCS_INPROGRESS;
}

bool UcxWorker::arm() {
  return ucp_worker_arm(worker_) == UCS_OK;
}

}  // namespace coll
