#include "common/logging.h"

#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace kscore::common {

void SetUpLogging(const std::string& program, int verbosity) {
  auto logger = spdlog::stderr_logger_mt(program);
  logger->set_pattern("%L%m%d %H:%M:%S.%f %t %n] %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (verbosity >= 6) {
    level = spdlog::level::trace;
  } else if (verbosity >= 4) {
    level = spdlog::level::debug;
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace kscore::common
