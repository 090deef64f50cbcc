#pragma once
// A logger that keeps every message in memory, one "LEVEL|TEXT" line each, so tests can count what
// a Registry logged.

#include <memory>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sstream>
#include <string>
#include <string_view>

namespace halfway::policy::testing {

class LogCapture {
public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(out_)),
        logger_(std::make_shared<spdlog::logger>("policy-test", sink_)) {
    sink_->set_pattern("%l|%v");
    logger_->set_level(spdlog::level::trace);
  }

  const std::shared_ptr<spdlog::logger>& logger() const { return logger_; }

  // Lines at `level` ("info", "warning", "debug") whose text contains `part`. Call it when no
  // thread is logging.
  size_t count(std::string_view level, std::string_view part = "") const {
    std::istringstream in(out_.str());
    size_t n = 0;
    for (std::string line; std::getline(in, line);) {
      auto bar = line.find('|');
      if (line.substr(0, bar) == level && line.find(part, bar) != std::string::npos)
        ++n;
    }
    return n;
  }
  std::string text() const { return out_.str(); }

private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

} // namespace halfway::policy::testing
