#pragma once
// One error type for every bad input: it names the file (or other source) and the problem,
// so the CLI can print exactly one line "<source>: <problem>" and the GUI can show it.
#include <stdexcept>
#include <string>

namespace wl {

class Error : public std::runtime_error {
public:
    Error(std::string source, std::string problem)
        : std::runtime_error(source.empty() ? problem : source + ": " + problem),
          source_(std::move(source)), problem_(std::move(problem)) {}

    const std::string& source() const noexcept { return source_; }
    const std::string& problem() const noexcept { return problem_; }

private:
    std::string source_;
    std::string problem_;
};

// Thrown when a CancelToken was triggered; not an error the user needs to see as a failure.
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

}  // namespace wl
